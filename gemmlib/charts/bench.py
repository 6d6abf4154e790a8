"""Altair charts for benchmark results, shared by the pages and the report.

Each builder takes ``BenchResult`` objects (or their ``to_dict()`` forms) and returns
an Altair chart; nothing here imports streamlit or torch.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any

from gemmlib.core.i18n import N_, Translate, english
from gemmlib.core.results import BenchResult

NOTE_SEP = N_("; ")  # a row's note: pieces joined by "; "
_FIELD = re.compile(r"\{(\w+)(?:![rsa])?(?::[^{}]*)?\}")


@functools.lru_cache(maxsize=256)
def _pattern(template: str) -> re.Pattern:
    """A regular expression that matches ``template`` filled in, one named group per placeholder."""
    parts, seen = [], set()
    for i, piece in enumerate(_FIELD.split(template)):
        if i % 2 == 0:
            parts.append(re.escape(piece))
        else:
            parts.append(f"(?P={piece})" if piece in seen else f"(?P<{piece}>.+?)")
            seen.add(piece)
    return re.compile("^" + "".join(parts) + "$", re.S)


def render_filled(text: str, templates: Iterable[str], gettext: Translate = english) -> str | None:
    """``text`` read back as one of ``templates`` filled in, then rendered through ``gettext`` with the
    same values (as written: their format specs were applied already); None when none matches.

    Result rows travel as JSON (a worker process, a results file), so their English texts arrive
    without their message; the templates they were made from (N_-marked in gemmlib.measure) give
    it back for a page that shows them in another language."""
    for template in templates:
        if not _FIELD.search(template):
            continue
        m = _pattern(template).match(text)
        if m:
            return _FIELD.sub(lambda f: "{" + f.group(1) + "}", gettext(template)).format(**m.groupdict())
    return None


def note_text(note: Any, gettext: Translate = english, templates: Iterable[str] = ()) -> Any:
    """A result row's note (``BenchResult.reason``) through ``gettext``: the whole note, or each of its
    "; "-joined pieces, as a constant N_ text or one of ``templates`` filled in (``render_filled``);
    a piece that is neither (a kernel's name, an exception's text) is shown as it is. Anything that
    is not text is returned unchanged."""
    if not isinstance(note, str) or not note:
        return note
    templates = tuple(templates)
    pieces, out, i = note.split("; "), [], 0
    while i < len(pieces):  # the longest run of pieces that is one known text (a template may hold "; ")
        for j in range(len(pieces), i, -1):
            cand = "; ".join(pieces[i:j])
            shown = render_filled(cand, templates, gettext)
            if shown is None and (j == i + 1 or gettext(cand) != cand):
                shown = gettext(cand)
            if shown is not None:
                out.append(shown)
                i = j
                break
    return gettext(NOTE_SEP).join(out)


def _rows(results: Iterable[BenchResult | Mapping]) -> list[dict]:
    out = []
    for r in results:
        d = r.to_dict() if isinstance(r, BenchResult) else dict(r)
        shape = d.get("shape") or {}
        d["shape_label"] = shape.get("label") or f"{shape.get('m')}×{shape.get('n')}×{shape.get('k')}"
        d["mnk"] = f"{shape.get('m')}×{shape.get('n')}×{shape.get('k')}"
        d["median_ms"] = d["median_s"] * 1e3 if d.get("median_s") else None
        out.append(d)
    return out


def tflops_chart(results: Iterable[BenchResult | Mapping], title: str | None = None, *,
                 gettext: Translate = english) -> Any:
    """Grouped bars: TFLOP/s per format, one group per shape (supported rows only). Texts through
    ``gettext``; the rows' own names and shape labels are drawn as given (a page passes them translated)."""
    import altair as alt

    rows = [r for r in _rows(results) if r.get("supported") and r.get("tflops")]
    fmt_title = gettext("format")
    return alt.Chart(alt.Data(values=rows)).mark_bar().encode(
        x=alt.X("name:N", title=fmt_title, sort=None),
        y=alt.Y("tflops:Q", title=gettext("TFLOP/s (int8: TOP/s)")),
        color=alt.Color("name:N", title=fmt_title, sort=None),
        column=alt.Column("shape_label:N", title=None, sort=None,
                          header=alt.Header(labelAngle=0, labelLimit=180)),
        tooltip=[alt.Tooltip("shape_label:N", title=gettext("shape")), alt.Tooltip("mnk:N", title="M×N×K"),
                 alt.Tooltip("name:N", title=fmt_title), alt.Tooltip("tflops:Q", title="TFLOP/s", format=".3g"),
                 alt.Tooltip("median_ms:Q", title=gettext("median ms"), format=".4g"),
                 alt.Tooltip("rel_error:Q", title=gettext("rel. error"), format=".2e")],
    ).properties(title=title or gettext("Throughput per format"), width=alt.Step(18))


def error_chart(results: Iterable[BenchResult | Mapping], title: str | None = None, *,
                gettext: Translate = english) -> Any:
    """Points on a log scale: max relative error per format and shape (texts through ``gettext``)."""
    import altair as alt

    rows = [r for r in _rows(results) if r.get("supported") and r.get("rel_error")]
    return alt.Chart(alt.Data(values=rows)).mark_point(filled=True, size=80).encode(
        x=alt.X("name:N", title=gettext("format"), sort=None),
        y=alt.Y("rel_error:Q", title=gettext("max |error| / max |reference|"), scale=alt.Scale(type="log")),
        color=alt.Color("shape_label:N", title=gettext("shape"), sort=None),
        tooltip=[alt.Tooltip("shape_label:N", title=gettext("shape")), alt.Tooltip("name:N", title=gettext("format")),
                 alt.Tooltip("rel_error:Q", title=gettext("rel. error"), format=".3e")],
    ).properties(title=title or gettext("Error against float64"), width=420, height=260)


CEILING_SERIES = {"measured (median)": N_("measured (median)"), "datasheet": N_("datasheet")}  # as shown


def ceilings_chart(rows: list[dict], title: str = "Measured vs datasheet", *, gettext: Translate = english) -> Any:
    """Measured against datasheet on one axis (rows from ``Ceilings.rows``): per figure, the datasheet
    as a grey tick, the measured median as a dot and its p20–p80 spread as a line. The axis is
    logarithmic so that TFLOP/s and TB/s rows, and a CPU's small figures, share it; each row's label
    carries its unit. ``title`` comes as shown; the figures' names and the rest go through ``gettext``."""
    import altair as alt

    from gemmlib.charts import label_expr

    pts: list[dict[str, Any]] = []
    for r in rows:
        label = f"{gettext(r['figure'])} ({r['unit']})"
        if r.get("measured"):
            pts.append({"figure": label, "which": "measured (median)", "value": r["measured"],
                        "low": r.get("low") or r["measured"], "high": r.get("high") or r["measured"]})
        if r.get("datasheet"):
            pts.append({"figure": label, "which": "datasheet", "value": r["datasheet"], "low": None, "high": None})
    order = [f"{gettext(r['figure'])} ({r['unit']})" for r in rows]
    x = alt.X("value:Q", scale=alt.Scale(type="log"), title=gettext("per second, in each row's unit (log scale)"),
              axis=alt.Axis(format="~g"))
    y = alt.Y("figure:N", sort=order, title=None, axis=alt.Axis(labelLimit=260))
    series = label_expr({k: gettext(v) for k, v in CEILING_SERIES.items()})
    colour = alt.Color("which:N", title=None, scale=alt.Scale(domain=["measured (median)", "datasheet"],
                                                             range=["#1f77b4", "#9e9e9e"]),
                       legend=alt.Legend(orient="bottom", labelExpr=series))
    figure = alt.Tooltip("figure:N", title=gettext("figure"))
    which = alt.Tooltip("which:N", title=gettext("series"))
    value = alt.Tooltip("value:Q", format=".4g", title=gettext("value"))
    base = alt.Chart(alt.Data(values=pts))
    spread = base.transform_filter("datum.which == 'measured (median)'").mark_rule(strokeWidth=3).encode(
        x=alt.X("low:Q", scale=alt.Scale(type="log")), x2="high:Q", y=y, color=colour,
        tooltip=[figure, alt.Tooltip("low:Q", format=".4g", title=gettext("at the p80 time")),
                 alt.Tooltip("high:Q", format=".4g", title=gettext("at the p20 time"))])
    ticks = base.transform_filter("datum.which == 'datasheet'").mark_tick(thickness=3, size=22).encode(
        x=x, y=y, color=colour, tooltip=[figure, which, value])
    dots = base.transform_filter("datum.which == 'measured (median)'").mark_point(filled=True, size=90).encode(
        x=x, y=y, color=colour, tooltip=[figure, which, value])
    return alt.layer(spread, ticks, dots).properties(title=title, height={"step": 30})


def save_chart(chart: Any, path_stem: Any) -> tuple[str, str]:
    """Save as PNG when vl-convert-python is installed, else as HTML. Returns (path, note)."""
    from pathlib import Path
    stem = Path(path_stem)
    try:
        import vl_convert  # noqa: F401
        png = stem.with_suffix(".png")
        chart.save(str(png), scale_factor=1.5)
        return str(png), ""
    except ImportError:
        html = stem.with_suffix(".html")
        chart.save(str(html))
        return str(html), "vl-convert-python is not installed: chart saved as HTML (pip install vl-convert-python for PNG)"
    except Exception as e:  # noqa: BLE001 - a chart that fails to render must not lose the report
        spec = stem.with_suffix(".vl.json")
        spec.write_text(chart.to_json(), encoding="utf-8")
        return str(spec), f"PNG rendering failed ({type(e).__name__}: {e}); Vega-Lite spec saved instead"
