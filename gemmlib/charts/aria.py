"""What a screen reader hears of a chart, in the reader's language.

Vega draws every chart as an SVG (Streamlit's default renderer) whose parts carry ARIA attributes, and where a
spec says nothing it writes them itself, in English: each axis as "X-axis titled 'batch' for a linear scale with
values from 1 to 64", each legend as "Symbol legend titled 'dtype' for fill color with 3 values: …", the title as
"Title text '…'", each mark as "rect mark". A Chinese page read aloud then switches to English at every chart.
:func:`describe` fills in what the spec can say, through the page's ``gettext``:

* ``description`` (top level): the chart's title, else its axes ("{y} against {x}"), which Vega puts on the
  chart's own element as its ``aria-label``; the title itself is then left out of the reading (``aria: false``
  on the title: Vega-Lite gives a title no ``description`` of its own, and the description already says it);
* each axis's and legend's ``description``: "x axis: {title}", "legend: {title}";
* each mark's ``ariaRoleDescription``: "bar", "point", … (the description of each drawn item is the chart's
  own: a ``description`` encoding, or Vega-Lite's "field title: value" pairs, whose titles are translated).

What stays English is what Vega writes with no spec property to replace it: the chart element's role
description "visualization" and each mark group's "… mark container".
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any

from gemmlib.core.i18n import N_, Translate, english, render

MARKS = {"bar": N_("bar"), "rect": N_("cell"), "line": N_("line"), "trail": N_("line"), "point": N_("point"),
         "circle": N_("point"), "square": N_("point"), "rule": N_("reference line"), "text": N_("text label"), "area": N_("area"),
         "tick": N_("tick"), "arc": N_("sector"), "image": N_("image"), "geoshape": N_("shape")}
AXES = {"x": N_("x axis: {title}"), "y": N_("y axis: {title}")}
UNTITLED_AXES = {"x": N_("x axis"), "y": N_("y axis")}
LEGENDS = ("color", "fill", "stroke", "size", "shape", "opacity", "strokeDash")
NESTED = ("layer", "hconcat", "vconcat", "concat")


def _text(title: Any) -> str | None:
    """A title as one line of text: a string, lines joined, or the ``text`` of a title object."""
    if isinstance(title, dict):
        title = title.get("text")
    if isinstance(title, (list, tuple)):
        title = " ".join(str(t) for t in title)
    return str(title) if title not in (None, "") else None


def _channel_title(enc: dict, guide: str) -> str | None:
    """The title a channel's axis or legend shows: its own, the guide's, else its field (Vega-Lite's default)."""
    g = enc.get(guide)
    if isinstance(g, dict) and "title" in g:
        return _text(g["title"])
    if "title" in enc:
        return _text(enc["title"])
    field = enc.get("field")
    return str(field) if isinstance(field, str) else None


def _unit(spec: dict, gettext: Translate, titles: dict[str, str]) -> None:
    mark = spec.get("mark")
    if mark is not None:
        mark = {"type": mark} if isinstance(mark, str) else mark
        if isinstance(mark, dict) and mark.get("type") in MARKS and "ariaRoleDescription" not in mark:
            mark["ariaRoleDescription"] = gettext(MARKS[mark["type"]])
            spec["mark"] = mark
    encoding = spec.get("encoding") or {}
    for ch, enc in encoding.items():
        if not isinstance(enc, dict) or ("value" in enc and "field" not in enc and "datum" not in enc):
            continue  # a constant (``alt.value(0)``) has no scale, so no axis or legend to describe
        guide = "axis" if ch in AXES else "legend" if ch in LEGENDS else None
        if guide is None or enc.get(guide, {}) is None or (guide == "legend" and "field" not in enc):
            continue
        title = _channel_title(enc, guide)
        if ch in AXES and title:
            titles.setdefault(ch, title)
        g = enc.setdefault(guide, {})
        if "description" not in g:
            g["description"] = (render(AXES[ch], {"title": title}, gettext) if title else gettext(UNTITLED_AXES[ch])) \
                if guide == "axis" else render(N_("legend: {title}"), {"title": title or ch}, gettext)


def _walk(spec: dict, gettext: Translate, titles: dict[str, str]) -> None:
    _unit(spec, gettext, titles)
    for key in NESTED:
        for sub in spec.get(key) or ():
            if isinstance(sub, dict):
                _walk(sub, gettext, titles)
    if isinstance(spec.get("spec"), dict):  # facet, repeat
        _walk(spec["spec"], gettext, titles)


def describe(spec: dict, gettext: Translate = english) -> dict:
    """``spec`` (a Vega-Lite dict, edited in place and returned) with its screen-reader words in the reader's
    language; what the spec already says is kept. In English (a ``gettext`` that leaves the frame untranslated)
    the axes, legends and marks keep Vega's own words, which also say each scale's range."""
    titles: dict[str, str] = {}
    if gettext(AXES["x"]) != AXES["x"]:
        _walk(spec, gettext, titles)
    else:
        _walk(copy.deepcopy(spec), gettext, titles)  # only the axis titles, for the description
    title = _text(spec.get("title"))
    if "description" not in spec:
        if title:
            spec["description"] = title
        elif "x" in titles and "y" in titles:
            spec["description"] = render(N_("{y} against {x}"), {"y": titles["y"], "x": titles["x"]}, gettext)
    if title and spec.get("description") == title:  # said once, by the description
        if isinstance(spec["title"], dict):
            spec["title"]["aria"] = False
        elif not any(_titled(sub) for key in NESTED for sub in spec.get(key) or ()):
            # the title's own form kept (a string or its lines): hidden through the config, which no sub-chart's
            # title shares here
            spec.setdefault("config", {}).setdefault("title", {}).setdefault("aria", False)
    return spec


def _titled(spec: Any) -> bool:
    return isinstance(spec, dict) and ("title" in spec or any(_titled(s) for k in NESTED for s in spec.get(k) or ()))


def described(chart: Any, gettext: Translate = english) -> Any:
    """An Altair chart (in place) or a dict spec with :func:`describe`'s words; None (nothing to draw) stays None."""
    if chart is None:
        return None
    if isinstance(chart, dict):
        if any(k in chart for k in ("$schema", "mark", *NESTED, "facet", "repeat", "spec")):
            return describe(chart, gettext)
        return {k: described(v, gettext) for k, v in chart.items()}  # several charts by name
    _copy_words(describe(chart.to_dict(validate=False), gettext), chart)
    return chart


def _undefined(v: Any) -> bool:
    return v is None or type(v).__name__ == "UndefinedType"


def _copy_words(d: dict, node: Any, top: bool = True) -> None:
    """Set on the Altair chart ``node`` (in place: its data objects stay where the builder put them, which is how
    Streamlit sends them) the words :func:`describe` wrote into its dict ``d``."""
    import altair as alt

    if top:
        if "description" in d:
            node.description = d["description"]
        title = d.get("title")
        if isinstance(title, dict) and title.get("aria") is False:
            node.title = alt.TitleParams(**title) if not isinstance(node.title, dict) else {**node.title, "aria": False}
        if (d.get("config") or {}).get("title", {}).get("aria") is False:
            config = node.config if not _undefined(node.config) else alt.Config()
            config.title = alt.TitleConfig(aria=False) if _undefined(config.title) else config.title
            config.title.aria = False
            node.config = config
    if isinstance(d.get("mark"), dict) and "ariaRoleDescription" in d["mark"] and not _undefined(getattr(node, "mark", None)):
        node.mark = d["mark"]
    encoding = getattr(node, "encoding", None)
    for ch, enc in (d.get("encoding") or {}).items():
        if _undefined(encoding) or not isinstance(enc, dict):
            continue
        guide = "axis" if ch in AXES else "legend" if ch in LEGENDS else None
        words = (enc.get(guide) or {}).get("description") if guide else None
        channel = getattr(encoding, ch, None)
        if words is None or _undefined(channel) or isinstance(channel, (list, str, dict)):
            continue
        kwds = getattr(channel, "_kwds", None)  # the channel's properties (``channel.axis`` is Altair's setter method)
        if kwds is None:
            continue
        g = kwds.get(guide)
        if _undefined(g):
            kwds[guide] = {"description": words}
        elif isinstance(g, dict):
            g["description"] = words
        else:
            g.description = words
    for key in NESTED:
        parts, subs = getattr(node, key, None), d.get(key)
        if isinstance(parts, list) and isinstance(subs, list) and len(parts) == len(subs):
            for part, sub in zip(parts, subs, strict=True):
                _copy_words(sub, part, top=False)


def localized(build: Callable[..., Any]) -> Callable[..., Any]:
    """A chart builder whose chart (Altair or a dict spec) comes with :func:`describe`'s words in the language of
    its ``gettext`` keyword."""
    @functools.wraps(build)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return described(build(*args, **kwargs), kwargs.get("gettext", english))
    return wrapper
