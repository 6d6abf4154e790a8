"""Streamlit helpers shared by app.py and every page.

This module is the only place besides the pages that imports streamlit; gemmlib
never does. Each page starts with ``ui.page(...)`` and wraps its work in
``with ui.guard():`` so that bad input shows a clear message and anything
unexpected shows a friendly error with the details folded away, never a bare
traceback.

Every text a person reads goes through ``_`` (gettext) or ``ngettext``, looked up in
``locales/<lang>/LC_MESSAGES/gemm.po`` in the session's language (English or 简体中文,
switched in the sidebar, bound to ``?lang=``); see "Translating the app" below and the
README's "简体中文 / Chinese UI" section.
"""

from __future__ import annotations

import functools
import gettext as _gettext
import hashlib
import io
import json
import math
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_, Msg
from gemmlib.measure import harness, safety

T = TypeVar("T")


# ----------------------------------------------------------------------------- translating the app
# The pattern (every page follows it; scripts/i18n.py lists what is not wrapped yet):
#   from ui import _, ngettext            # N_ for module-level constants, translated where shown
#   ui.page(_("Title"), "🔢", _("One paragraph…"))
#   st.caption(_("{n:,} multiply-adds").format(n=n))        # named placeholders, never f-strings
#   st.caption(ngettext("{n} step", "{n} steps", n).format(n=n))
#   st.markdown(ui.tr(verdict))           # a gemmlib Msg or InputError, in the reader's language
#   st.altair_chart(charts.x_chart(rows, gettext=_))         # gemmlib charts take gettext=
#   st.dataframe(rows, column_config={"tokens": _("tokens"), ...})   # headers, data keys unchanged
# Formulas ($…$), code (`…`), numbers and units stay as they are in every language.

LANGS: dict[str, str] = {"en": "English", "zh": "简体中文"}  # code (as in ?lang=) -> its own name
LANG_KEY = "lang"  # the URL parameter and the widget's key
_LANG_CHOICE = "_lang_choice"  # the session's explicit choice, kept across page switches
_LANG_PENDING = "_lang_pending"  # a choice to put back into the widget on the next run
LOCALES = Path(__file__).resolve().parent / "locales"
DOMAIN = "gemm"
_ENGLISH = _gettext.NullTranslations()  # the msgids are the English text


def po_path(lang: str) -> Path:
    return LOCALES / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


@functools.lru_cache(maxsize=8)
def _compiled(lang: str, mtime_ns: int) -> _gettext.GNUTranslations:
    """The .po compiled in memory with Babel (once per server process and .po version).

    Nothing compiled is committed or written: a clean checkout runs as it is, on a read-only
    disk too, and a .mo can never be older than its .po. Fuzzy entries are left out.
    """
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with open(po_path(lang), "rb") as f:
        catalog = read_po(f, locale=lang, domain=DOMAIN)
    buf = io.BytesIO()
    write_mo(buf, catalog)
    buf.seek(0)
    return _gettext.GNUTranslations(buf)


def translations(lang: str) -> _gettext.NullTranslations:
    """The catalogue of ``lang`` (English: the msgids themselves)."""
    if lang not in LANGS or lang == "en":
        return _ENGLISH
    try:
        mtime = po_path(lang).stat().st_mtime_ns
    except OSError:
        return _ENGLISH
    return _compiled(lang, mtime)


def browser_lang() -> str:
    """The browser's language (``st.context.locale``, e.g. "zh-CN") if the app speaks it, else "en"."""
    try:
        loc = st.context.locale
    except Exception:  # noqa: BLE001 - outside a session (a bare import, a test)
        loc = None
    code = str(loc or "").replace("_", "-").split("-")[0].lower()
    return code if code in LANGS else "en"


def lang() -> str:
    """The session's language: the switch's value, a link's ``?lang=`` (before the switch has run
    on this page), the choice made earlier in this session, or the browser's language."""
    forced = getattr(_FORCED, "code", None)
    if forced:
        return forced
    if get_script_run_ctx(suppress_warning=True) is None:
        return "en"  # no session: a bare import, a unit test
    ss = st.session_state
    for v in (ss.get(_LANG_PENDING), ss.get(LANG_KEY), st.query_params.get(LANG_KEY), ss.get(_LANG_CHOICE)):
        if v in LANGS:
            return v
    return browser_lang()


def _(message: str) -> str:
    """gettext: ``message`` in the session's language (its English msgid if untranslated)."""
    return translations(lang()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """gettext with a count: the form for ``n`` (Chinese has one form, English two)."""
    return translations(lang()).ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    """gettext for a short text whose meaning depends on where it is (``pgettext("column", "kind")``)."""
    return translations(lang()).pgettext(context, message)


def gettext_for(code: str) -> Callable[[str], str]:
    """A gettext for a given language, for code cached per language (``@st.cache_data`` on
    ``(data, ui.lang())``: a cached text must never reach a session in another language)."""
    return translations(code).gettext


def tr(x: Msg | InputError | str) -> str:
    """A gemmlib message (Msg, InputError) or a marked constant, in the session's language."""
    if isinstance(x, (Msg, InputError)):
        return x.render(_)
    return _(str(x))


def language_switch() -> str:
    """English / 简体中文 at the top of the sidebar, bound to ``?lang=en`` / ``?lang=zh``.

    The options are the codes themselves, so the URL reads ``lang=zh`` (a bound option widget
    writes its label); their names are the captions. With no choice made the switch shows
    neither and the page follows the browser's language; a choice is kept for the session. On a
    page switch Streamlit can hand back the switch without its value (measured after a cold deep
    link and after Back): the session's choice is then put back with one extra run.
    """
    ss = st.session_state
    pending = ss.pop(_LANG_PENDING, None)
    if pending in LANGS:
        ss[LANG_KEY] = pending  # set before the widget: wins over the URL
    codes = list(LANGS)
    value = st.sidebar.radio("Language · 语言", codes, index=None, captions=[LANGS[c] for c in codes],
                             key=LANG_KEY, bind="query-params", horizontal=True)
    if value in LANGS:
        ss[_LANG_CHOICE] = value
    elif ss.get(_LANG_CHOICE) in LANGS and pending is None:
        ss[_LANG_PENDING] = ss[_LANG_CHOICE]
        st.rerun()
    else:
        st.sidebar.caption(_("Following your browser's language."))
    return lang()


class Page(NamedTuple):
    path: str  # relative to app.py; the URL is the file name without its number
    label: str  # N_-marked English; shown through _()
    icon: str
    line: str  # one line for the home page's map (N_-marked English)
    notice: str = ""  # what to notice there, for the home page's map (N_-marked English)


PAGES: list[Page] = [
    Page("app.py", N_("Home"), "🏠", N_("What GEMM is, why it is nearly all of an LLM's compute, this machine.")),
    Page("pages/1_Accumulate.py", N_("Accumulate"), "➕",
         N_("Step through D = αAB + βC cell by cell; loop orders, reuse, accumulator precision."),
         notice=N_("the inner product loads every A and B element once per use; a tile loads each far fewer times for the same multiply-adds.")),
    Page("pages/2_FLOPs.py", N_("FLOPs"), "🔢",
         N_("The 2·M·N·K heatmap, bytes moved, arithmetic intensity, time on a GPU, tile and wave "
            "quantization."),
         notice=N_("FLOPs grow with M·N·K but bytes only with M·K + K·N + M·N, so big GEMMs are compute-bound; one column past a tile multiple costs a whole wave.")),
    Page("pages/3_Transformer_GEMMs.py", N_("Transformer GEMMs"), "🧱",
         N_("Every GEMM of one layer drawn to scale, and when attention really dominates."),
         notice=N_("at s = 1024, d = 4096 the attention products are 4 % of a layer; they reach half only at s = 6·d.")),
    Page("pages/4_LLM_Estimator.py", N_("LLM Estimator"), "📐",
         N_("Size a model: FLOPs per GEMM, memory, prefill and decode time on a GPU."),
         notice=N_("prefill is compute-bound, decode is bound by reading the weights; memory decides how many GPUs a model needs.")),
    Page("pages/5_Devices.py", N_("Devices"), "🖥️",
         N_("This machine's CPU and GPUs, their datasheet peaks and measured ceilings."),
         notice=N_("how far below the datasheet this machine's measured ceilings are.")),
    Page("pages/6_Precision.py", N_("Precision"), "🎯",
         N_("fp32, tf32, fp16, bf16, int8 and fp8 GEMMs measured live, with their error."),
         notice=N_("int8 and fp8 halve or quarter the bytes, but their speed-up depends on the hardware; the error column says what they cost.")),
    Page("pages/7_Tiling.py", N_("Tiling"), "🔲",
         N_("Python tiling vs a real Triton kernel vs the library, tile-size sweeps."),
         notice=N_("Python-level tiles are slower than one library call; a tiled kernel keeps the reuse without the overhead.")),
    Page("pages/8_Batching.py", N_("Batching"), "📦",
         N_("Why batching pays at decode: one weight read serving many requests."),
         notice=N_("at decode (M = 1) stacking B requests costs about one request's time; at M = 1024 it gains little.")),
    Page("pages/9_Roofline.py", N_("Roofline"), "📈",
         N_("Every measured point on the device's roofline beside the estimate."),
         notice=N_("every measured point sits under its roof; how far under is what the kernel leaves on the table.")),
    Page("pages/10_Profiler.py", N_("Profiler"), "🔬",
         N_("Where the time goes in a transformer block; GPU utilisation over time."),
         notice=N_("GEMMs' share of the time grows with the model's size; small blocks spend it on everything else.")),
    Page("pages/11_Multi_GPU.py", N_("Multi-GPU"), "🔗",
         N_("Collectives measured (busbw against message size) and one layer split tensor-parallel, beside the "
            "estimate."),
         notice=N_("the bus bandwidth climbs with the message size towards the link's rate; small messages pay latency.")),
]


def nav() -> None:
    """The sidebar's page list with readable labels (Streamlit's own would call the home page "app").

    ``client.showSidebarNavigation = false`` in .streamlit/config.toml hides Streamlit's list.
    A page run on its own (``AppTest.from_file("pages/...")``) has no app around it to link to;
    it then shows no list.
    """
    try:
        for p in PAGES:
            st.sidebar.page_link(p.path, label=_(p.label), icon=p.icon)
    except st.errors.StreamlitAPIException:  # StreamlitPageNotFoundError: not served by app.py
        return
    st.sidebar.divider()


def page(title: str, icon: str, intro: str | None = None) -> None:
    """Page config, language switch, sidebar navigation, title and one-paragraph introduction.

    ``title`` and ``intro`` come translated (``ui.page(_("Title"), "🔢", _("…"))``). They were
    looked up before the switch ran; should the switch say otherwise, the page runs once more.
    """
    before = lang()
    try:
        st.set_page_config(page_title=f"{title} · GEMM", page_icon=icon, layout="wide")
    except st.errors.StreamlitAPIException:  # already set in this run
        pass
    if language_switch() != before:
        st.rerun()
    nav()
    st.title(f"{icon} {title}")
    if intro:
        st.markdown(intro)


def intro(text: str, folded: bool = False) -> None:
    """A page's introduction: shown, or folded into an expander (presentation mode)."""
    if folded:
        with st.expander(_("About this page")):
            st.markdown(text)
    else:
        st.markdown(text)


@contextmanager
def guard(what: str | None = None) -> Iterator[None]:
    """Show InputError as a plain message and any other error as a folded traceback.

    ``what`` names the section in the reader's language (``ui.guard(_("the heatmap"))``).
    """
    try:
        yield
    except InputError as e:
        st.error(_("**Check the input:** {message}").format(message=tr(e)))
    except Exception as e:  # noqa: BLE001 - st.stop/st.rerun are BaseExceptions and pass
        st.error(_("Something went wrong in {what}: {error}").format(
            what=what or _("this section"), error=f"{type(e).__name__}: {e}"))
        with st.expander(_("Details (for a bug report)")):
            st.code(traceback.format_exc())


_RESET = "_url_reset__"  # session-state prefix: a value to put in a URL-bound widget on the next run
_MISSING = object()


def url(widget: Callable[..., T], label: str, *args: Any, key: str, valid: Callable[[Any], bool] | None = None,
        fallback: Any = _MISSING, **kwargs: Any) -> T:
    """``widget(label, *args, key=key, bind="query-params", **kwargs)``: a widget bound to ``?key=value``.

    Streamlit keeps the URL in step with the widget, seeds it from the URL on the first run (a cold
    deep link too), leaves the key out while the value equals the widget's default, and silently
    falls back to the default for a malformed, out-of-range or unknown URL value. Pass the default
    the usual way (``value=``, ``index=``, ``default=``), never through ``st.session_state``.

    Two things Streamlit cannot know, handled here with one extra rerun (only for such a link):
    ``valid(value)``, a rule the widget cannot express (a power of two, a tile that fits), replaced
    by ``fallback``; and, for an option widget whose labels differ from its options
    (``format_func``), a link that names the option itself (``?acc_src=random``, as this app's
    links did before Streamlit's binding, which writes labels), or its label in another language
    (a link copied from the Chinese page: Streamlit writes the label the page shows), is read as
    that option.
    """
    ss = st.session_state
    pending = ss.pop(_RESET + key, _MISSING)
    if pending is not _MISSING:
        ss[key] = pending  # set before the widget on this run: wins over the URL
    raw = st.query_params.get(key) if key not in ss else None  # the link's text, on the first run only
    if raw is not None:
        _drop_non_finite(key, raw)
    value = widget(label, *args, key=key, bind="query-params", **kwargs)
    if raw is not None and "format_func" in kwargs:
        options = list(kwargs.get("options", args[0] if args else []))
        fmt = kwargs["format_func"]
        named = [o for o in options if str(o) == raw and str(fmt(o)) != raw]
        if not named:  # a translated label (format_func=lambda o: _(LABELS[o])) from a link in another language
            named = [o for o in options if raw in _labels_in_other_languages(fmt, o)]
        if named and value != named[0]:
            ss[_RESET + key] = named[0]
            st.rerun()
    if valid is not None and not valid(value):
        if fallback is _MISSING:
            raise ValueError(f"ui.url({key!r}): a valid= rule needs a fallback=")
        ss[_RESET + key] = fallback
        st.rerun()
    return value


def _labels_in_other_languages(fmt: Callable[[Any], Any], option: Any) -> set[str]:
    """``fmt(option)`` as it reads in each language other than the session's."""
    out = set()
    for code in LANGS:
        if code != lang():
            with _speaking(code):
                out.add(str(fmt(option)))
    return out


_FORCED = threading.local()  # .code: the language _() speaks for a moment in this script thread


@contextmanager
def _speaking(code: str) -> Iterator[None]:
    before = getattr(_FORCED, "code", None)
    _FORCED.code = code
    try:
        yield
    finally:
        _FORCED.code = before


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


def set_url_widget(key: str, value: Any) -> None:
    """Change a URL-bound widget from code (a button's callback): takes effect on the next run."""
    st.session_state[_RESET + key] = value


def table(data: Any, formats: Mapping[str, str] | None = None, *, where: Any = None,
          column_config: Mapping[str, Any] | None = None, hide_index: bool = True, **kwargs: Any) -> Any:
    """``st.dataframe`` drawn by the one formatter's rules (``gemmlib.core.format``).

    Numeric columns stay numeric (they sort) and get the format of their kind: ``"count"`` (every
    digit, separators; the default for whole numbers), ``"number"`` (4 significant digits; the
    default for other numbers), ``"percent"``, ``"error"`` (scientific). A count past 2**53 (more
    than a browser's number holds exactly) becomes its exact text. Flags become yes / no, a
    missing value shows "—", and a column named in ``column_config`` is left as it is (progress
    bars, links, checkboxes).
    """
    import pandas as pd

    from gemmlib.core import format as fmt

    df = data.copy() if isinstance(data, pd.DataFrame) else pd.DataFrame(data)
    formats, explicit = dict(formats or {}), dict(column_config or {})
    cfg: dict[str, Any] = {}
    labels = {c: v for c, v in explicit.items() if isinstance(v, str)}  # a bare label: formatted here
    explicit = {c: v for c, v in explicit.items() if not isinstance(v, str)}
    for col in df.columns:
        if col in explicit:
            continue
        s, kind = df[col], formats.get(col)
        if s.dtype == object:
            vals = [v for v in s if not fmt.missing(v)]
            if vals and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
                big = any(isinstance(v, int) and abs(v) >= 2**53 for v in vals)
                if not big:
                    s = df[col] = pd.to_numeric(s)
            if s.dtype == object:
                df[col] = s.map(fmt.count if kind == "count" else fmt.cell)
                if kind in ("count", "number"):
                    cfg[col] = st.column_config.TextColumn(alignment="right")
                continue
        if pd.api.types.is_bool_dtype(s):
            df[col] = s.map(fmt.cell)
            continue
        if not pd.api.types.is_numeric_dtype(s):
            continue
        kind = kind or ("count" if pd.api.types.is_integer_dtype(s) else "number")
        if kind == "count" and len(s.dropna()) and float(s.abs().max()) >= 2**53:
            df[col] = s.map(fmt.count)
            cfg[col] = st.column_config.TextColumn(alignment="right")
            continue
        width = None
        if kind == "count" and len(s.dropna()) and len(fmt.count(s.abs().max())) > 11:
            width = "medium"  # room for every digit (a narrow column would clip the leading ones)
        cfg[col] = st.column_config.NumberColumn(format=fmt.STREAMLIT_FORMATS.get(kind, kind), width=width)
    for col, label in labels.items():
        cfg[col] = {**cfg[col], "label": label} if isinstance(cfg.get(col), dict) else label
    cfg.update(explicit)
    return (where or st).dataframe(df, hide_index=hide_index, column_config=cfg, placeholder=fmt.DASH, **kwargs)


def bench_limits() -> safety.Limits:
    """The server's caps for live benchmarks: Streamlit secrets first, then the environment.

    A misconfigured value is reported on the page and the defaults are used.
    """
    try:
        secrets = {k: st.secrets[k] for k in st.secrets}
    except Exception:  # noqa: BLE001 - no secrets file, or an unreadable one
        secrets = {}
    try:
        return safety.limits(secrets)
    except InputError as e:
        st.warning(f"The server's benchmark limits are misconfigured ({e}); using the defaults.")
        return safety.DEFAULT_LIMITS


@st.cache_resource(show_spinner=False)
def cuda_available() -> tuple[bool, str]:
    """(True, "") with a usable CUDA device, else (False, why); asked once per server."""
    return harness.torch_device_available("cuda")


@st.cache_resource(show_spinner=False)
def gpu_count() -> int:
    """CUDA GPUs this server sees (0 without CUDA); asked once per server."""
    from gemmlib.measure import launch

    return launch.cuda_count()


# ----------------------------------------------------------------------------- the step-through
_ASSETS = Path(__file__).parent / "ui_assets"
_STEPPER_HTML = """
<div class="gst" tabindex="0" role="group">
  <div class="stage">
    <div class="grids"></div>
    <div class="side">
      <div class="pos"></div>
      <div class="kind"></div>
      <div class="text" aria-live="off"></div>
      <div class="loads"></div>
    </div>
  </div>
  <div class="bar">
    <button class="first">⏮</button><button class="back">◀</button><button class="play"></button>
    <button class="fwd">▶</button><button class="last">⏭</button>
    <span class="hint"></span>
  </div>
  <input class="scrub" type="range" min="0" max="0" step="1" value="0">
</div>
"""
# Registered once, when ui is first imported; mounted by each page under its own key. The JS and
# CSS are plain files next to this module, read here: no build step, no iframe.
_stepper_component = st.components.v2.component(
    "gemm_stepper", html=_STEPPER_HTML, css=(_ASSETS / "stepper.css").read_text(encoding="utf-8"),
    js=(_ASSETS / "stepper.js").read_text(encoding="utf-8"))

# Every word the step-through shows, translated where it is sent ({n}, {a}, ... are filled in the browser).
STEPPER_LABELS = {
    "step": N_("Step {n} of {total}"),
    "play": N_("▶ Play"),
    "pause": N_("⏸ Pause"),
    "first": N_("first step (Home)"),
    "back": N_("one step back (← or PageUp)"),
    "forward": N_("one step forward (→ or PageDown)"),
    "last": N_("last step (End)"),
    "scrub": N_("step"),
    "keys": N_("Click the grids, then: → or PageDown next, ← or PageUp back, Space play/pause, Home/End "
               "first/last"),
    "loads": N_("so far: A loaded {a} elements, B {b}, D stored {d}"),
    "epilogue": N_("the epilogue: D = α·(A·B) + β·C, once per element of D"),
}
MATRIX_CAPTION = "{name} ({rows}×{cols})"  # no words: the same in every language
STEPPER_MAX_SPEED = 30  # steps per second the browser can play (it draws every one)


@functools.lru_cache(maxsize=32)
def _stepper_data(tr: Any) -> dict:
    """The trace as the browser draws it: frames with their counts as text, the matrices as text."""
    from gemmlib.core import format as fmt

    frames = [{**f, "loads": [fmt.count(v) for v in f["loads"]]} for f in tr.frames()]
    text = tr.matrices_text()
    p = tr.problem
    caption = {name: MATRIX_CAPTION.format(name=name, rows=r, cols=c)
               for name, r, c in (("A", p.m, p.k), ("B", p.k, p.n), ("C", p.m, p.n), ("D", p.m, p.n))}
    data = {"frames": frames, "A": text["A"], "B": text["B"], "C": text["C"] if p.beta != 0 else None,
            "m": p.m, "n": p.n}
    data["traceId"] = hashlib.sha1(json.dumps(data, sort_keys=True).encode()).hexdigest()[:12]
    data["labels"] = {"a": caption["A"], "b": caption["B"], "c": caption["C"], "d": caption["D"]}
    return data


def _ignore() -> None:
    pass


def stepper(key: str, tr: Any, *, speed: int, presentation: bool = False, pos_key: str | None = None) -> int:
    """Step through a GEMM trace (``gemmlib.explain.reference.Trace``) in the browser.

    The browser draws A, B, C (when β ≠ 0) and D, the arithmetic line and the loads beside them,
    all from the same step, and plays the trace at ``speed`` steps per second (1 to 30) without
    asking the server: every step is drawn however busy the server is, and Pause stops on the frame
    shown. Keys, while the stepper has the focus (a click on the grids gives it): → / PageDown next,
    ← / PageUp back, Space play/pause, Home / End. ``presentation``: cells of at least 60 px where the
    matrices fit and no text under 24 px.

    Returns the step the browser last reported (0-based). It reports only when it stops (pause, the
    end, a button, a key, the scrubber released), so a page reruns once per stop, never per frame.
    Session-state keys: ``key`` (the component's state), ``pos_key`` (default ``{key}_pos``: the step,
    also the unbound URL parameter ``?{pos_key}=N`` so that a link opens at that step), and
    ``{key}_trace`` (the trace's id: a new trace starts at step 0).
    """
    ss = st.session_state
    data = _stepper_data(tr)
    data = {**data, "labels": {**data["labels"], **{k: _(v) for k, v in STEPPER_LABELS.items()}}}
    tid, last = data["traceId"], len(data["frames"]) - 1
    k_pos, k_trace = pos_key or f"{key}_pos", f"{key}_trace"
    if k_pos not in ss:  # the first run of this page in the session: a link may name the step
        try:
            ss[k_pos] = int(str(st.query_params.get(k_pos, "0")))
        except ValueError:
            ss[k_pos] = 0
        ss[k_trace] = tid
    elif ss.get(k_trace) != tid:
        ss[k_trace], ss[k_pos] = tid, 0

    def reported(state: Any) -> int | None:
        step = state.get("step") if isinstance(state, Mapping) else None
        if isinstance(step, Mapping) and step.get("id") == tid and isinstance(step.get("step"), int):
            return int(step["step"])
        return None  # nothing reported yet, or a report about an earlier trace

    got = reported(ss.get(key))
    if got is not None:
        ss[k_pos] = got
    ss[k_pos] = max(0, min(last, int(ss[k_pos])))
    res = _stepper_component(
        key=key, data={**data, "speed": max(1, min(STEPPER_MAX_SPEED, int(speed))),
                       "presentation": bool(presentation), "start": ss[k_pos]},
        default={"step": None}, on_step_change=_ignore, width="stretch", height="content")
    got = reported(res)
    if got is not None:
        ss[k_pos] = max(0, min(last, got))
    pos = ss[k_pos]
    if st.query_params.get(k_pos) != (str(pos) if pos else None):
        if pos:
            st.query_params[k_pos] = str(pos)
        else:
            st.query_params.pop(k_pos, None)
    return pos


class RunStatus:
    """What a benchmark run shows while it runs: the label of its status box says the step it is on,
    how many there are and the time left, so it reads the same folded or open; a progress bar
    inside repeats it. Before the first step the time left is the run's estimate
    (``gemmlib.measure.plan``); after it, the time so far scaled by the share still to do."""

    def __init__(self, box: Any, device: str, steps: int | None = None, estimate_s: float | None = None) -> None:
        from gemmlib.core import format as fmt

        self._fmt, self.box, self.device = fmt, box, device
        self.steps, self.estimate_s = steps, estimate_s
        self.bar = box.progress(0.0, text=_("queued"))
        self.frac, self.t0 = 0.0, None

    def start(self) -> None:
        self.t0 = time.monotonic()
        self.update(0.0, _("starting"))

    def left_s(self) -> float | None:
        if self.t0 is None:
            return self.estimate_s
        elapsed = time.monotonic() - self.t0
        if self.frac > 0.02:
            return max(0.0, elapsed / self.frac * (1 - self.frac))
        return None if self.estimate_s is None else max(0.0, self.estimate_s - elapsed)

    def label(self, text: str = "") -> str:
        f = self._fmt
        parts = [_("Running on {device}").format(device=self.device)]
        if self.steps:
            parts.append(_("step {n} of {total}").format(n=min(self.steps, int(self.frac * self.steps) + 1),
                                                         total=self.steps))
        else:
            parts.append(f.percent(self.frac, 0))
        left = self.left_s()
        if left is not None:
            parts.append(_("about {time} left").format(time=f.duration(max(1.0, round(left)))))
        return " · ".join(parts) + (f" — {text}" if text else "")

    def update(self, frac: float | None, text: str) -> None:
        if frac is not None:
            self.frac = min(1.0, max(0.0, frac))
        self.box.update(label=self.label(text))
        self.bar.progress(self.frac, text=text)


RATE_SOURCES = {"measured here": N_("measured here"), "measured ceilings": N_("measured ceilings"),
                "datasheet": N_("datasheet")}  # gemmlib.measure.plan.SOURCES, as shown


def run_estimate(est: Any) -> None:
    """The time a run will take, beside its button (``gemmlib.measure.plan.RunEstimate``)."""
    from gemmlib.core import format as fmt

    sources = ", ".join(_(RATE_SOURCES.get(s, s)) for s in est.sources) or "—"
    st.caption(_("This run: about {time} for {steps} steps (rates: {sources}). The server caps one run at its "
                 "time limit.").format(time=fmt.duration(max(1.0, round(est.seconds))), steps=est.rows,
                                       sources=sources))


def noise_note(results: list) -> None:
    """Say so when timings spread too much (p80 / p20 above ``core.results.NOISE_RATIO``)."""
    from gemmlib.core import format as fmt
    from gemmlib.core.results import NOISE_RATIO, noisy, spread_ratio

    bad = noisy(results)
    if bad:
        worst = max(bad, key=lambda r: spread_ratio(r) or 0.0)
        st.warning(_("{n} of {total} rows are noisy (p80 / p20 above {limit}×; the worst, {name}, {ratio}): the "
                     "machine was busy, rerun.").format(n=len(bad), total=len(results), limit=f"{NOISE_RATIO:g}",
                                                        name=worst.name, ratio=fmt.ratio(spread_ratio(worst))))


def run_queued(what: str, device: str, lim: safety.Limits,
               run: Callable[[Callable[[float | None, str], None]], T],
               done: Callable[[T], str] | None = None, estimate: Any = None) -> T:
    """Run one benchmark under the server's single-flight lock, with a status box (``RunStatus``).

    ``run(progress)`` does the work; ``progress(fraction or None, text)`` moves it on. ``estimate``
    (a ``gemmlib.measure.plan.RunEstimate``) gives the number of steps and the time left before the
    first step. While another session holds the lock the box says this one is queued. An
    InputError (refused, or timed out in the queue) marks the box "Not run" and propagates to the
    page's ``ui.guard``.
    """
    if "_bench_session" not in st.session_state:
        st.session_state._bench_session = uuid.uuid4().hex[:6]
    owner = f"{what} (session {st.session_state._bench_session})"
    with st.status("Waiting for the benchmark runner…", expanded=True) as status:
        shown = RunStatus(status, device, getattr(estimate, "rows", None), getattr(estimate, "seconds", None))

        def on_wait(msg: str) -> None:
            status.update(label=f"Queued: {msg}. Your run starts when it finishes.")

        try:
            with safety.single_flight(owner, on_wait=on_wait, timeout_s=max(60.0, 2 * lim.time_limit_s)):
                shown.start()
                out = run(shown.update)
        except InputError:
            status.update(label="Not run", state="error")
            raise
        status.update(label=done(out) if done else "Done", state="complete", expanded=False)
    return out
