"""Widgets and tabs bound to the URL (``?key=value``), and the link handling Streamlit leaves out: a link
value a page cannot use is named under the page's title with the reason (``link_note``), not dropped silently."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import parse_qs

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from gemmlib.core.i18n import N_

from .i18n import _, labels_in_other_languages, lang
from .text import T, md

_RESET = "_url_reset__"  # session-state prefix: a value to put in a URL-bound widget on the next run
_NOTES = "_url_notes__"  # session state: {key: note} about link values a page could not use (link_note)
_BOX = "_gemm_url_notes"  # on the run's ScriptRunContext: (the run, the box the notes are drawn in)
_LANG_SEEN = "_url_lang_seen__"  # session state: {key: the language an option widget was last drawn in}
_URL_AHEAD = "_url_ahead__"  # session-state prefix: set_url_widget put the value in Streamlit's URL before the run
_MISSING = object()
_NUMBER_WIDGETS = {"number_input", "slider"}
_BOOL_WIDGETS = {"toggle", "checkbox"}
_TEXT_WIDGETS = {"text_area", "text_input"}
_CHOICE_WIDGETS = {"radio", "selectbox", "select_slider", "multiselect", "pills", "segmented_control"}


def url(widget: Callable[..., T], label: str, *args: Any, key: str, valid: Callable[[Any], bool] | None = None,
        fallback: Any = _MISSING, **kwargs: Any) -> T:
    """``widget(label, *args, key=key, **kwargs)`` bound to ``?key=value``: the URL shares the view.

    A widget that shows its value as it is (a number, a toggle, a slider, options that are their own
    labels) is bound with Streamlit's ``bind="query-params"``: Streamlit keeps the URL in step with
    the widget, seeds it from the URL on the first run (a cold deep link too), leaves the key out
    while the value equals the widget's default, and falls back to the default for a malformed,
    out-of-range or unknown URL value; the page then says which and why, once, under its title
    (:func:`link_note`). Pass the default the usual way (``value=``,
    ``index=``, ``default=``), never through ``st.session_state``.

    An option widget with a ``format_func`` (stable option ids shown as labels in the reader's
    language) is bound here instead, because Streamlit writes the *label* into the URL
    (``?acc_src=random+(from+a+seed)``, or the Chinese label), which a link in the other language
    cannot name and which changes with the wording: the URL holds the option itself
    (``?acc_src=random``), left out while it is the default. A link naming an option's label, in
    any language (as Streamlit's binding wrote them), opens that option too; anything else falls
    back to the default, and the URL then drops it.

    ``valid(value)``: a rule the widget cannot express (a power of two, a tile that fits); a value
    that breaks it is replaced by ``fallback`` with one extra rerun.
    """
    ss = st.session_state
    pending = ss.pop(_RESET + key, _MISSING)
    if pending is not _MISSING:
        ss[key] = pending  # set before the widget on this run: wins over the URL
    raws = link_values(key) if key not in ss else []  # the link's text, on the first run only
    if "format_func" in kwargs:
        value = _option_url(widget, label, args, key, kwargs, written=pending is not _MISSING)
    else:
        if len(raws) == 1 and getattr(widget, "__name__", "") not in _TEXT_WIDGETS:  # "inf" is text in a text box
            _drop_non_finite(key, raws[0])
        if pending is not _MISSING:  # set through the session state on this run: drawn without its default
            value = _written_url(widget, label, args, key, kwargs)
        else:
            value = widget(label, *args, key=key, bind="query-params", **kwargs)
        if raws:
            _check_link_value(widget, args, kwargs, key, raws, value)
    if valid is not None and not valid(value):
        if fallback is _MISSING:
            raise ValueError(f"ui.url({key!r}): a valid= rule needs a fallback=")
        if raws:
            link_note(key, raws[0], N_("does not fit this page"), fallback)
        ss[_RESET + key] = fallback
        st.rerun()
    return value


# ----------------------------------------------------------------------------- link values not used
def link_note(key: str, raw: Any, why: str, used: Any, then: str = N_("the default {used} is used"),
              shown: Callable[[Any], Any] | None = None, **fill: Any) -> None:
    """Say near the top of the page that the link's ``?key=raw`` was not used: ``why`` (N_-marked English,
    "is outside {lo}–{hi}", its placeholders from ``fill``) and what is shown instead (``then``, with
    ``{used}``). The note stays, in the reader's language, while ``st.session_state[key]`` still holds
    ``used``; the reader's first change drops it. ``shown``: how the widget labels a value (an option widget's
    ``format_func``, called when the note is drawn, so in the reader's language then), else the value as a link
    writes it. Every reader of link values reports here (``url``,
    ``tabs``, the stepper's step, the language switch); a value merely absent from the link says nothing."""
    ctx = get_script_run_ctx()
    st.session_state.setdefault(_NOTES, {})[key] = {
        "raw": _cut(str(raw)), "why": why, "then": then, "used": used, "fill": fill, "shown": shown,
        "page": ctx.page_script_hash if ctx is not None else ""}
    _draw_notes()


def notes_box() -> None:
    """The place under the page's title (``ui.page`` makes it) where the link values not used are named."""
    ctx = get_script_run_ctx()
    if ctx is not None:
        setattr(ctx, _BOX, (getattr(ctx, "cursors", None), st.empty()))
        _draw_notes()


def _draw_notes() -> None:
    """This page's notes, in one box: those whose key still holds the value the note says is used."""
    ctx = get_script_run_ctx()
    run, box = getattr(ctx, _BOX, (None, None)) if ctx is not None else (None, None)
    if box is None or run is not getattr(ctx, "cursors", None):
        return  # no box on this run yet: it draws the notes when it is made
    ss, here = st.session_state, ctx.page_script_hash
    notes = ss.get(_NOTES, {})
    for key in [k for k, n in notes.items() if n["page"] == here and k in ss and ss[k] != n["used"]]:
        del notes[key]
    lines = []
    for key, n in notes.items():
        if n["page"] == here:
            fill = {**n["fill"], "used": _label_of(n["used"], n.get("shown"))}
            lines.append(md(_("Link value {param} {why}; {then}.").format(
                param=f"{key}={n['raw']}", why=_(n["why"]).format(**fill), then=_(n["then"]).format(**fill))))
    if lines:
        box.info("  \n".join(lines), icon=":material/link_off:")
    else:
        box.empty()


def _label_of(v: Any, shown: Callable[[Any], Any] | None) -> str:
    """A value as the page's widget labels it (``shown``), in quotes (“the article's example”), a list's items
    with the reader's commas; else as a link writes it."""
    if shown is None:
        return _shown_value(v)
    if isinstance(v, (list, tuple)):
        return _(", ").join(f"“{shown(x)}”" for x in v) or "—"
    return f"“{shown(v)}”"


def _cut(text: str, limit: int = 40) -> str:
    """A link's text as a note quotes it: at most ``limit`` characters, "…" where it was cut."""
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _shown_value(v: Any) -> str:
    """A value as a link writes it: true/false, 4 (not 4.0), a list's items with commas."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, (list, tuple)):
        return ", ".join(_shown_value(x) for x in v) or "—"
    return str(v)


def link_values(key: str) -> list[str]:
    """The texts the opened link gave ``key`` (Streamlit seeds a bound widget from this snapshot of the URL)."""
    from streamlit.runtime.state import get_session_state

    try:
        with get_session_state().query_params() as qp:
            got = qp.get_initial_value(key)
    except (AttributeError, RuntimeError):  # a later release without it: the address bar now
        return st.query_params.get_all(key)
    return [] if got is None else [got] if isinstance(got, str) else list(got)


def _check_link_value(widget: Callable[..., Any], args: tuple, kwargs: dict, key: str, raws: list[str],
                      value: Any) -> None:
    """Compare the link's text for ``key`` with the value its widget took; name a value it did not use."""
    kind = getattr(widget, "__name__", "")
    if isinstance(value, list):  # a multiselect: the first value the link named that it left out
        raw = next((r for r in raws if r not in {str(v) for v in value}), None)
        if raw is not None:
            link_note(key, raw, N_("is not one of the choices"), value,
                      then=N_("it is left out") if value else N_("the default {used} is used"))
        return
    raw = raws[0]
    if _means(raw, value):
        return
    why, fill = N_("cannot be used here"), {}
    if kind in _NUMBER_WIDGETS:
        lo = args[0] if len(args) > 0 else kwargs.get("min_value")
        hi = args[1] if len(args) > 1 else kwargs.get("max_value")
        try:
            x = float(raw)
        except ValueError:
            x = math.nan
        if math.isnan(x):
            why = N_("is not a number")
        elif lo is not None and hi is not None and not lo <= x <= hi:
            why, fill = N_("is outside {lo}–{hi}"), {"lo": _shown_value(lo), "hi": _shown_value(hi)}
        elif isinstance(value, int) and not x.is_integer():
            why = N_("is not a whole number")
    elif kind in _BOOL_WIDGETS:
        why = N_("is not true or false")
    elif kind in _CHOICE_WIDGETS:
        why = N_("is not one of the choices")
    elif kind in _TEXT_WIDGETS and kwargs.get("max_chars") and len(raw) > kwargs["max_chars"]:
        limit = f"{kwargs['max_chars']:,}"  # Streamlit keeps the text's start: say so, and how long it may be
        link_note(key, raw, N_("is longer than {limit} characters"), value,
                  then=N_("its first {limit} characters are used"), limit=limit)
        return
    if st.query_params.get(key) is not None:  # Streamlit kept a corrected value (?acc_k=2.5 as 2), not the default
        link_note(key, raw, why, value, then=N_("{used} is used"), **fill)
    else:
        link_note(key, raw, why, value, **fill)


def _means(raw: str, value: Any) -> bool:
    """Whether the link's text ``raw`` says ``value`` (``?acc_m=4`` for 4, ``5.0`` for 5, ``True`` for true)."""
    if isinstance(value, bool):
        return raw.strip().lower() == ("true" if value else "false")
    if isinstance(value, (int, float)):
        try:
            return float(raw) == float(value)
        except ValueError:
            return False
    return raw == str(value)


def _resend_after_language_switch(key: str) -> bool:
    """On the run where the language changed, send an option widget's choice to the browser again.

    The browser still holds the options' labels in the old language; Streamlit matches what it hands
    back against the new labels, finds nothing, and the radio showed no choice (a selectbox its
    first option), then the next change failed with a KeyError (Accumulate, the Estimator's sources,
    Precision's sets, Batching's shapes, the Profiler's source and attention). Setting the session's
    value before the widget is drawn makes Streamlit send it under the new label. Returns whether it set it.
    """
    ss = st.session_state
    seen = ss.setdefault(_LANG_SEEN, {})
    now = lang()
    resend = key in ss and seen.get(key, now) != now
    if resend:
        ss[key] = ss[key]
    seen[key] = now
    return resend


_DEFAULT_AT = {"number_input": 2, "slider": 2, "toggle": 0, "checkbox": 0, "text_area": 0, "text_input": 0}
_VALUE_TYPE = {"number_input": "double_value", "slider": "double_array_value", "toggle": "bool_value",
               "checkbox": "bool_value", "text_area": "string_value", "text_input": "string_value"}


def _written_url(widget: Callable[..., T], label: str, args: tuple, key: str, kwargs: dict) -> T:
    """A bound widget whose value :func:`set_url_widget` put in ``st.session_state`` on this run.

    Streamlit logs "created with a default value but also had its value set via the Session State API" for a
    widget given both, so it is drawn without its default (``value=``, or the positional one after a number's
    range): it shows the session's value either way, and a key is its identity. A number keeps its type, format
    and step, which its range then gives (a number without a ``min_value``, a range slider: drawn as usual).
    Streamlit would keep the URL in step with its own fallback default (the minimum, "", false): the URL is set
    here instead, against the page's default, in one change (one Back step): left out while it is the default."""
    kind = getattr(widget, "__name__", "")
    at = _DEFAULT_AT.get(kind)
    default = args[at] if at is not None and len(args) > at else kwargs.get("value", _MISSING)
    numeric = kind in _NUMBER_WIDGETS
    lo = (args[0] if args else kwargs.get("min_value")) if numeric else "" if kind in _TEXT_WIDGETS else False
    if at is None or default is _MISSING or default is None or lo is None or isinstance(default, (list, tuple)):
        return widget(label, *args, key=key, bind="query-params", **kwargs)
    kind_of = _VALUE_TYPE[kind]
    before = _url_snapshot(key, lambda qp, coerce: (  # the URL Streamlit's own step then leaves as it is
        qp.set_with_no_forward_msg(key, coerce([st.session_state[key]] if kind == "slider" else st.session_state[key],
                                               kind_of))
        if st.session_state[key] != lo else qp.discard_param_no_forward_msg(key)))
    value = widget(label, *args[:at], key=key, bind="query-params",
                   **{k: v for k, v in kwargs.items() if k != "value"})
    if before is not _MISSING:
        if st.session_state.pop(_URL_AHEAD + key, False):  # the URL took it ahead: what the browser has now decides
            before = _browser_values(key)
        _url_snapshot(key, lambda qp, coerce: _send_param(qp, key, before, None if value == default else coerce(
            [value] if kind == "slider" else value, kind_of)))
    return value


def _browser_values(key: str) -> list[str] | None:
    """The values of ``key`` in the browser's address now (None: absent): the run's query string, as each URL
    change sent in this run has left it."""
    ctx = get_script_run_ctx()
    return parse_qs(ctx.query_string if ctx is not None else "", keep_blank_values=True).get(key)


def _url_snapshot(key: str, change: Callable[[Any, Callable], Any]) -> Any:
    """``change(query_params, coerce)`` on Streamlit's copy of the URL (where a bound widget's value is kept);
    returns the URL's values for ``key`` before (None: absent), or _MISSING where this Streamlit has none of it."""
    from streamlit.runtime.state import get_session_state

    try:
        from streamlit.runtime.state.query_params import _coerce_value_for_query_url as coerce

        with get_session_state().query_params() as qp:
            before = qp.get_all(key) if qp.has_param(key) else None
            change(qp, coerce)
            return before
    except (AttributeError, ImportError, RuntimeError):
        return _MISSING


def _send_param(qp: Any, key: str, before: list[str] | None, want: str | list[str] | None) -> None:
    """Streamlit's copy of the URL back to ``before`` (as the browser has it), then ``want`` sent to the browser
    (None: ``key`` taken out) where it differs: one change, through the calls Streamlit's binding itself makes."""
    if before is None:
        qp.discard_param_no_forward_msg(key)
    else:
        qp.set_with_no_forward_msg(key, before if len(before) > 1 else before[0])
    if want is None:
        qp.remove_param(key)
    elif ([want] if isinstance(want, str) else want) != before:
        qp.set_corrected_value(key, want, "string_array_value" if isinstance(want, list) else "string_value")


def _option_url(widget: Callable[..., T], label: str, args: tuple, key: str, kwargs: dict, written: bool = False) -> T:
    """An option widget (radio, selectbox, select_slider) whose URL value is the option, not its label.

    ``written``: the caller set ``st.session_state[key]`` on this run (``set_url_widget``). Where the value is set
    through the session state on this run (that, a link, Back or Forward, a language switch), the widget is drawn
    without its ``index=``/``value=``: it shows the session's value either way, and Streamlit logs "created with a
    default value but also had its value set via the Session State API" for a widget given both. A key names
    these widgets (their identity), so the missing default changes nothing else; on the other runs it is passed."""
    ss = st.session_state
    written = _resend_after_language_switch(key) or written
    options = list(kwargs["options"] if "options" in kwargs else args[0] if args else [])
    if getattr(widget, "__name__", "") == "multiselect":
        return _options_url(widget, label, args, key, kwargs, options)
    if "index" in kwargs:
        default = options[kwargs["index"]] if kwargs["index"] is not None else None
    else:
        default = kwargs.get("value", options[0] if options else None)
    ctx = get_script_run_ctx()
    if key not in ss or (ctx is not None and ctx.is_history_navigation):  # a link opened (or Back, Forward)
        raw = st.query_params.get(key)
        chosen = _named_option(options, kwargs["format_func"], raw) if raw is not None else _MISSING
        if chosen is not _MISSING:
            ss[key] = chosen
            written = True
        elif key in ss and raw is None:
            ss[key] = default  # history navigation to an entry without the key: the default
            written = True
        elif raw is not None and key not in ss:
            link_note(key, raw, N_("is not one of the choices"), default, shown=kwargs["format_func"])
    if written:
        kwargs = {k: v for k, v in kwargs.items() if k not in ("index", "value")}
    value = widget(label, *args, key=key, **kwargs)
    _write_param(key, None if value == default else str(value))
    return value


def _options_url(widget: Callable[..., T], label: str, args: tuple, key: str, kwargs: dict, options: list) -> T:
    """A multiselect with a ``format_func``: the URL holds the chosen options themselves, one ``key=`` each
    (``?ba_modes=loop&ba_modes=bmm``; ``?ba_modes=`` for none), left out while they are the default ones."""
    ss = st.session_state
    _resend_after_language_switch(key)
    default = list(kwargs.get("default") or [])
    ctx = get_script_run_ctx()
    if key not in ss or (ctx is not None and ctx.is_history_navigation):  # a link opened (or Back, Forward)
        raws = st.query_params.get_all(key)
        named = [(r, _named_option(options, kwargs["format_func"], r)) for r in raws if r != ""]
        chosen = [o for i, (_r, o) in enumerate(named) if o is not _MISSING and o not in [n for _q, n in named[:i]]]
        bad = next((r for r, o in named if o is _MISSING), None)
        if bad is not None:
            link_note(key, bad, N_("is not one of the choices"), chosen or default,
                      then=N_("it is left out") if chosen else N_("the default {used} is used"),
                      shown=kwargs["format_func"])
        if chosen or (raws and not named):  # the link's options (``?key=`` alone: none of them)
            ss[key] = chosen
        elif key in ss:
            ss[key] = default  # history navigation to an entry without the key, or only unknown options
        if key in ss:
            kwargs = {**kwargs, "default": None}  # the value is the session's (a default beside it is ignored)
    value = widget(label, *args, key=key, **kwargs)
    want = None if list(value) == default else [str(v) for v in value] or [""]
    if st.query_params.get_all(key) != (want or []):
        if want is None:
            st.query_params.pop(key, None)
        else:
            st.query_params[key] = want
    return value


def _write_param(key: str, want: str | None) -> None:
    """The address bar's ``key`` set to ``want`` (None: taken out), touched only when it differs."""
    if st.query_params.get(key) != want:
        if want is None:
            st.query_params.pop(key, None)
        else:
            st.query_params[key] = want


def _named_option(options: list, fmt: Callable[[Any], Any], raw: str) -> Any:
    """The option a link's ``raw`` text names: the option itself, else its label in this language or another."""
    for test in (lambda o: str(o) == raw, lambda o: str(fmt(o)) == raw,
                 lambda o: raw in labels_in_other_languages(fmt, o)):
        for o in options:
            if test(o):
                return o
    return _MISSING


def _drop_non_finite(key: str, raw: Any) -> None:
    """Forget a link's ``?key=1e309`` (or ``inf``) before its widget reads it.

    Streamlit 1.67 seeds an integer widget with ``int(float("1e309"))`` and lets the OverflowError
    escape (it catches only ValueError, TypeError and IndexError), which would put an exception box
    on the page. A non-finite number is never a valid value, so it is removed from the snapshot of
    the URL that seeding reads (Streamlit's own ``_initial_query_params``; if a later release
    renames it, nothing happens here and its own fixed seeding applies) and from the URL.
    """
    try:
        bad = not math.isfinite(float(raw))
    except (TypeError, ValueError):
        return
    if not bad:
        return
    from streamlit.runtime.state import get_session_state

    with get_session_state().query_params() as qp:
        snapshot = getattr(qp, "_initial_query_params", None)
        if isinstance(snapshot, dict):
            snapshot.pop(key, None)
    st.query_params.pop(key, None)


def tabs(labels: list[str], key: str) -> Any:
    """``st.tabs`` bound to ``?key=`` with labels in the reader's language (``labels``: N_-marked English).

    The URL names the open tab by its English label (``?le_tab=Roofline``, the tab's stable id) in
    every language, left out for the first tab; a link naming it in another language (as Streamlit's
    own binding wrote them: the label the page showed) opens the same tab, and the URL then reads the
    id. Switching tabs reruns the page (``on_change="rerun"``), as a bound ``st.tabs`` does.
    """
    ss = st.session_state
    shown = [_(label) for label in labels]
    ctx = get_script_run_ctx()
    if key not in ss or (ctx is not None and ctx.is_history_navigation):  # a link opened (or Back, Forward)
        raw = st.query_params.get(key)
        for label, here in zip(labels, shown, strict=True):
            if raw is not None and raw in {label, here} | labels_in_other_languages(_, label):
                ss[key] = here
                break
        else:
            if key in ss:
                ss[key] = shown[0]
            elif raw is not None:
                link_note(key, raw, N_("is not one of the choices"), shown[0], then=N_("the first tab is shown"))
    elif ss[key] not in shown:  # the language changed: the same tab, in the new language
        for label, here in zip(labels, shown, strict=True):
            if ss[key] in {label} | labels_in_other_languages(_, label):
                ss[key] = here
    out = st.tabs(shown, key=key, on_change="rerun")
    opened = next((label for label, t in zip(labels, out, strict=True) if t.open), labels[0])
    _write_param(key, None if opened == labels[0] else opened)
    return out


def set_url_widget(key: str, value: Any, default: Any = _MISSING) -> None:
    """Change a URL-bound widget from code (a button's callback): takes effect on the next run.

    ``default``: the widget's default on that run, where the caller knows it (a box that follows another widget).
    The URL then takes the change at once (left out at the default), so that the run's first URL change (the
    widget whose callback this is) carries it too: one change of the reader's, one Back step. Without it the
    widget writes the URL when it is drawn, a second history entry where another widget wrote the URL before."""
    st.session_state[_RESET + key] = value
    # a float as the number box will write it when drawn (20.0, not a link's 20): else that draw finds the browser's
    # address different and writes it again, a second Back step for the same change
    if default is not _MISSING and _url_snapshot(key, lambda qp, coerce: (
            qp.discard_param_no_forward_msg(key) if value == default
            else qp.set_with_no_forward_msg(key, coerce(value, "double_value") if isinstance(value, float)
                                            else _shown_value(value)))) is not _MISSING:
        st.session_state[_URL_AHEAD + key] = True


class Fields:
    """URL-bound widgets drawn from a presenter's catalogue: ``fields`` maps each widget key to its words
    and range (``gemmlib.views.estimator.Field``: an N_-marked ``label`` or a ``name`` shown as written, an
    N_-marked ``help``, a number's ``lo`` and ``hi``), ``defaults`` each key to its default. ``num``, ``pick``,
    ``flag`` and ``multi`` draw one through :func:`url`, in the reader's language."""

    def __init__(self, fields: Mapping[str, Any], defaults: Mapping[str, Any]) -> None:
        self.fields, self.defaults = fields, defaults

    def words(self, key: str, kw: dict) -> tuple[str, dict]:
        """The widget's label and help in the reader's language, with its other arguments."""
        f = self.fields[key]
        return f.name or _(f.label), {"help": _(f.help) if f.help else None, **kw}

    def num(self, where: Any, key: str, widget: str = "number_input", **kw: Any) -> Any:
        """A number input (or a slider) with its range and default."""
        text, kw = self.words(key, kw)
        f = self.fields[key]
        return url(getattr(where, widget), text, f.lo, f.hi, self.defaults[key], key=key, **kw)

    def pick(self, where: Any, key: str, options: list, widget: str = "selectbox", **kw: Any) -> Any:
        """A selectbox (or a radio) on ``options``, its default option selected (the first if it is none of them)."""
        default = self.defaults[key] if self.defaults[key] in options else options[0]
        text, kw = self.words(key, kw)
        return url(getattr(where, widget), text, options, index=options.index(default), key=key, **kw)

    def flag(self, where: Any, key: str, widget: str = "toggle", **kw: Any) -> Any:
        """A toggle (or a checkbox, or a text input: any widget whose value comes after its label)."""
        text, kw = self.words(key, kw)
        return url(getattr(where, widget), text, self.defaults[key], key=key, **kw)

    def peek(self, key: str) -> Any:
        """A toggle's or a number's value above the place it is drawn (the headline reads a switch of a tab below
        it): its state from the last run, else on a link's first run what its widget takes from the link, else
        its default. A number as Streamlit reads a link: an int field's ``2.5`` as 2; not a number, not finite
        or outside the field's ``lo``–``hi``: the default."""
        if key in st.session_state:
            return st.session_state[key]
        default, raws = self.defaults[key], link_values(key)
        if raws and isinstance(default, bool):
            return next((v for v in (True, False) if _means(raws[-1], v)), default)
        if raws and isinstance(default, (int, float)):
            f = self.fields[key]
            return _link_number(raws[-1], default, getattr(f, "lo", None), getattr(f, "hi", None))
        return default

    def multi(self, where: Any, key: str, options: list, **kw: Any) -> list:
        """A multiselect on ``options`` (shown as they are: the URL holds them), its default ones chosen."""
        text, kw = self.words(key, kw)
        f = self.fields[key]
        if getattr(f, "placeholder", None):
            kw.setdefault("placeholder", _(f.placeholder))
        return url(where.multiselect, text, options, default=list(self.defaults[key]), key=key, **kw)


def _link_number(raw: str, default: int | float, lo: Any, hi: Any) -> int | float:
    """The number a bound number widget with ``default`` and range ``lo``–``hi`` takes from a link's ``raw``."""
    try:
        x = float(raw)
    except ValueError:
        return default
    if not math.isfinite(x):
        return default
    v = int(x) if isinstance(default, int) else x
    return v if (lo is None or lo <= v) and (hi is None or v <= hi) else default


def setter(values: Callable[[], Mapping[str, Any] | None],
           defaults: Mapping[str, Any] | None = None) -> Callable[[], None]:
    """A widget's ``on_change``: puts ``values()`` (widget key -> value; nothing when it gives a false value) into
    URL-bound widgets on the next run, as :func:`set_url_widget` does (configuration B copying A). ``defaults``: the
    widgets' defaults (a page's catalogue of fields), so that the URL takes every value at once: one change of the
    reader's, one Back step, not one for each widget set."""
    def on_change() -> None:
        for key, value in (values() or {}).items():
            if defaults is not None and key in defaults:
                set_url_widget(key, value, defaults[key])
            else:
                set_url_widget(key, value)
    return on_change


def highlight(keys: Iterable[str]) -> None:
    """Mark the widgets of ``keys`` (a keyed widget's container is ``.st-key-<key>``): an amber frame and
    background, and a bold label, so a reader sees at a glance which inputs differ."""
    keys = [k for k in keys if k.replace("_", "").isalnum()]
    if keys:
        sel = ", ".join(f".st-key-{k}" for k in keys)
        st.html(f"<style>{sel} {{ background: #fff4d6; outline: 2px solid #d68a00; border-radius: 0.5rem; "
                f"padding: 0 0.25rem; }} :is({sel}) label p {{ font-weight: 700; }}</style>")
