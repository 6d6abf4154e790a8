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

unexpected shows a short message with an error id, the traceback going to the
server log under that id — never a traceback or a server path on the page.

Text a visitor supplied (file names, config values, matrix cells, error messages
that quote them) goes through ``ui.md()`` before it reaches any Streamlit call
that renders markdown, so it shows as the characters typed and can never become
an image, a link or formatting. Every benchmark runs through ``ui.run_benchmark``:
a worker process of its own, the machine's FIFO queue, a Stop button, and the
run cancelled when its session ends (``gemmlib.measure.runner``).
"""

from __future__ import annotations

import contextlib
import functools
import gettext as _gettext
import hashlib
import io
import json
import logging
import math
import re
import sys
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

from gemmlib.core import results as results_store
from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_, Msg, Text
from gemmlib.core.results import BenchResult
from gemmlib.measure import harness, jobs, runner, runqueue, safety

T = TypeVar("T")

log = logging.getLogger("gemmlib.app")
if not logging.getLogger("gemmlib").handlers:
    _h = logging.StreamHandler(sys.stderr)
    _h.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger("gemmlib").addHandler(_h)
    logging.getLogger("gemmlib").setLevel(logging.INFO)

# What can turn text into markup: emphasis, code, links and images (no "[", no link), autolinks,
# HTML, headings, tables, strike-through, LaTeX and Streamlit's ":colour[...]" / ":material/...:"
# directives. An underscore inside a word ("kv_heads") cannot emphasise anything and stays.
_MD_SPECIAL = re.compile(r"([\\`*\[\]<>#!|~$:]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
_MD_LEAD = re.compile(r"^(\d*)([-+=.)])")  # a list item or heading marker at the start of the text
_MD_WWW = re.compile(r"(?i)\b(www)\.")  # a GFM autolink literal without a scheme


def md(text: Any) -> str:
    """``text`` made safe for any markdown-rendering call: the characters that make markup are
    backslash-escaped (CommonMark shows them literally) and line breaks become spaces, so user text
    can never turn into an image, a link, formatting, LaTeX or a Streamlit colour directive."""
    s = _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))
    s = _MD_WWW.sub(r"\1\\.", s)
    return _MD_LEAD.sub(lambda m: m.group(1) + "\\" + m.group(2), s)


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
    """gettext: ``message`` in the session's language (its English msgid if untranslated); an empty
    text stays empty (gettext's own "" is the catalogue's header)."""
    return translations(lang()).gettext(message) if message else message


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


def option_labels(labels: Mapping[Any, str] | None = None) -> Callable[[Any], str]:
    """A ``format_func`` for an option widget whose options are stable ids: each option's label
    (``labels[option]``, N_-marked; the option itself where it has none) in the session's language,
    bound now, so that it reads the same wherever Streamlit (or a test) calls it later."""
    return _OptionLabels(dict(labels or {}), lang())


class _OptionLabels:
    """``option_labels``' format_func: the labels and the language they are shown in; ``in_lang``
    reads an option's label in another language (a link copied from the other language's page)."""

    def __init__(self, labels: dict, code: str) -> None:
        self.labels, self.code = labels, code

    def __call__(self, option: Any) -> str:
        return self.in_lang(self.code, option)

    def in_lang(self, code: str, option: Any) -> str:
        return gettext_for(code)(self.labels.get(option, str(option)))


def tr(x: Msg | Text | InputError | str) -> str:
    """A gemmlib message (Msg, Text, InputError) or a marked constant, in the session's language."""
    if isinstance(x, (Msg, Text, InputError)):
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
    """Show InputError as a plain message (its user text escaped); log anything else with its
    traceback under an error id and show the visitor only a short message with that id (no server
    paths, no traceback).

    ``what`` names the section in the reader's language (``ui.guard(_("the heatmap"))``).
    """
    try:
        yield
    except InputError as e:
        st.error(_("**Check the input:** {message}").format(message=md(tr(e))))
    except Exception as e:  # noqa: BLE001 - st.stop/st.rerun are BaseExceptions and pass
        eid = uuid.uuid4().hex[:8]
        worker_tb = getattr(e, "traceback", "")
        log.log(logging.ERROR, "error id %s in %s: %s: %s\n%s%s", eid, what or "this section", type(e).__name__,
                e, traceback.format_exc(), f"worker traceback:\n{worker_tb}" if worker_tb else "")
        st.error(_("Something went wrong in {what}. It has been logged on the server as error id **{eid}**; "
                   "please mention this id when you report it.").format(what=what or _("this section"), eid=eid))


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
            if isinstance(fmt, _OptionLabels):  # bound to the session's language: ask it for the other one
                out.add(fmt.in_lang(code, option))
                continue
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


def tabs(labels: list[str], key: str) -> Any:
    """``st.tabs`` bound to ``?key=`` with labels in the reader's language (``labels``: N_-marked English).

    Streamlit writes the open tab's label to the URL, so a link copied from a page in one language
    names the tab in that language; a link naming it in another language (``?le_tab=Roofline`` on a
    Chinese page) opens the same tab, and the URL then reads in the page's language.
    """
    shown = [_(label) for label in labels]
    raw = st.query_params.get(key) if key not in st.session_state else None
    default = None
    if raw is not None and raw not in shown:
        for label, here in zip(labels, shown, strict=True):
            if raw == label or raw in _labels_in_other_languages(_, label):
                default = here
    return st.tabs(shown, key=key, bind="query-params", default=default)


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
            df[col] = s.map(lambda v: _(fmt.cell(v)))  # yes / no in the reader's language
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


CATALOGUE_TEXT_CELLS = ("name", "scale-up link", "node network")  # catalogue texts marked N_ in core.hardware


def catalogue_table(where: Any = None) -> Any:
    """The GPU catalogue (``gemmlib.core.hardware.catalogue_rows``) as a table in the reader's language:
    headers and the catalogue's own texts translated, each row's source a link."""
    from gemmlib.core.hardware import catalogue_rows

    rows = [{**r, **{c: _(r[c]) for c in CATALOGUE_TEXT_CELLS if r.get(c)}, "kind": r["kind"].upper(),
             "source": r["source"] if r["source"].startswith("http") else _(r["source"])} for r in catalogue_rows()]
    return table(rows, where=where, column_config={
        "name": _("name"), "kind": _("kind"), "unknown peaks": _("unknown peaks"),
        "bandwidth TB/s": _("bandwidth TB/s"), "SMs": _("SMs"), "memory GiB": _("memory GiB"),
        "memory bytes": _("memory bytes"), "scale-up link": _("scale-up link"),
        "scale-up GB/s per direction": _("scale-up GB/s per direction"),
        "node network": _("node network"), "source": st.column_config.LinkColumn(_("source"))})


def bench_limits() -> safety.Limits:
    """The server's caps for live benchmarks: ``safety.limits`` (the one reader of the caps, the
    CLI's too) on the secrets files Streamlit is configured with, then the environment.

    A broken secrets file or a malformed value is an error on the page and in the server log,
    and the benchmarks fall back to the small classroom caps until it is fixed — never silently
    to no caps at all.
    """
    try:
        files = st.config.get_option("secrets.files")
    except Exception:  # noqa: BLE001 - an old Streamlit without the option
        files = None
    try:
        return safety.limits(files=files)
    except InputError as e:
        log.log(logging.ERROR, "benchmark caps could not be read: %s", e)
        st.error(_("**The server's benchmark caps could not be read**: {why}. The small classroom caps apply "
                   "until the server's secrets file or GEMM_* settings are fixed (details in the server log).")
                 .format(why=md(_strip_paths(tr(e)))))
        return safety.CLASSROOM_LIMITS


CAP_PARTS = {  # the caps a page can name in its caption (``caps_caption``), N_-marked, filled from ``Limits``
    "dims": N_("dimensions ≤ {dim:,}"),
    "dims_bm": N_("dimensions ≤ {dim:,} (B·M included)"),
    "operands": N_("operands ≤ {gib:.3g} GiB"),
    "memory": N_("memory ≤ {gib:.3g} GiB"),
    "buffers": N_("{size} of buffers"),
    "ranks": N_("{ranks} ranks"),
    "time": N_("{seconds:g} s per run"),
}


def caps_caption(lim: safety.Limits, parts: tuple[str, ...] = ("dims", "time"), after: str = "") -> str:
    """The server's caps as a page's caption, in the reader's language: "Caps here: dimensions ≤
    4,096, 60 s per run — **classroom mode**." ``parts`` name the caps shown (keys of
    :data:`CAP_PARTS`); ``after``, a sentence already translated, follows it."""
    from gemmlib.core.units import fmt_bytes

    values = {"dim": lim.max_dim, "gib": lim.max_bytes / 1024**3, "size": fmt_bytes(lim.max_bytes),
              "ranks": lim.max_ranks, "seconds": lim.time_limit_s}
    shown = _(", ").join(_(CAP_PARTS[p]).format(**values) for p in parts)
    text = _("Caps here: {caps}").format(caps=shown) + (_(" — **classroom mode**") if lim.classroom else "")
    return text + _(".") + (f" {after}" if after else "")


def _strip_paths(text: str) -> str:
    """``text`` with absolute file paths reduced to their file name (visitors need no server paths)."""
    return re.sub(r"(?<![\\w.])/(?:[^\s/:]+/)+([^\s/:]+)", r"\1", text)


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
def _stepper_data(tr: Any, code: str = "en") -> dict:
    """The trace as the browser draws it in language ``code``: frames with their counts as text,
    the matrices as text (the arithmetic lines translated; the trace id is the same in every language)."""
    from gemmlib.core import format as fmt

    frames = [{**f, "loads": [fmt.count(v) for v in f["loads"]]} for f in tr.frames(gettext_for(code))]
    text = tr.matrices_text()
    p = tr.problem
    caption = {name: MATRIX_CAPTION.format(name=name, rows=r, cols=c)
               for name, r, c in (("A", p.m, p.k), ("B", p.k, p.n), ("C", p.m, p.n), ("D", p.m, p.n))}
    data = {"frames": frames, "A": text["A"], "B": text["B"], "C": text["C"] if p.beta != 0 else None,
            "m": p.m, "n": p.n}
    english = {**data, "frames": [{**f, "text": s.expression} for f, s in zip(frames, tr.steps, strict=True)]}
    data["traceId"] = hashlib.sha1(json.dumps(english, sort_keys=True).encode()).hexdigest()[:12]
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
    data = _stepper_data(tr, lang())
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

    def update(self, frac: float | None, text: str | Msg) -> None:
        text = tr(text) if isinstance(text, Msg) else text  # a gemmlib step's message, in the reader's language
        if frac is not None:
            self.frac = min(1.0, max(0.0, frac))
        self.box.update(label=self.label(text), expanded=True)  # keeps the Stop button in view
        self.bar.progress(self.frac, text=text)


FLAGS = (N_("yes"), N_("no"))  # core.format's flags (ui.table shows them translated)
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


# ----------------------------------------------------------------------------- benchmarks
_SID = "_bench_session"


def _session_tag() -> str:
    if _SID not in st.session_state:
        st.session_state[_SID] = uuid.uuid4().hex[:6]
    return st.session_state[_SID]


def _session_gone() -> Callable[[], str | None]:
    """A check that says (after a second's grace for a reconnect) when this browser session has
    closed: Streamlit's runtime no longer lists it as active. Without a runtime (AppTest) it never fires."""
    try:
        from streamlit import runtime
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        ctx = get_script_run_ctx()
        rt = runtime.get_instance() if runtime.exists() else None
        sid = ctx.session_id if ctx is not None else None
    except Exception:  # noqa: BLE001
        rt, sid = None, None
    since: list[float | None] = [None]

    def gone() -> str | None:
        if rt is None or sid is None:
            return None
        if rt.is_active_session(sid):
            since[0] = None
            return None
        since[0] = since[0] or time.monotonic()
        return N_("the visitor's session ended") if time.monotonic() - since[0] > 1.0 else None

    return gone


def queue_timeout_s(lim: safety.Limits) -> float:
    """How long a visitor waits in the queue before being told to try again."""
    return max(120.0, 4 * lim.time_limit_s)


def run_benchmark(job: jobs.Job, lim: safety.Limits, done: Callable[[Any], str] | None = None,
                  estimate: Any = None) -> Any:
    """Run ``job`` in a worker process (``gemmlib.measure.runner``), with a status box
    (``RunStatus``: the step of the total and the time left; ``estimate``, a
    ``gemmlib.measure.plan.RunEstimate``, before the first step), the place in the machine's queue
    and a Stop button; return its data.

    The run is killed when its visitor presses Stop (or changes a setting, which reruns the page),
    when the session closes, or at the server's time limit. An InputError (refused by the caps,
    stopped, timed out in the queue) marks the box and propagates to the page's ``ui.guard``.
    """
    tag = _session_tag()
    owner = Text(runqueue.SESSION_OWNER, what=job.describe(), tag=tag)  # English in the queue's files
    gone = _session_gone()
    with st.status(_("Waiting for the benchmark runner…"), expanded=True) as status:
        shown = RunStatus(status, job.device, getattr(estimate, "rows", None), getattr(estimate, "seconds", None))
        st.button(_("⏹ Stop this run"), key=f"_bench_stop_{uuid.uuid4().hex[:6]}",
                  on_click=lambda: st.session_state.__setitem__("_bench_stopped", job.describe()),
                  help=_("stops the run at once; changing any setting on this page stops it too"))
        state = {"text": "", "shown": 0.0, "running": False}

        def show() -> None:
            now = time.monotonic()
            if state["running"] and now - state["shown"] >= 1.0:  # the time left, once a second
                state["shown"] = now
                shown.update(None, state["text"])

        def on_wait(place: runqueue.Place) -> None:
            who = _(" Running now: {what}.").format(what=md(tr(runqueue.owner_text(place.running)))) \
                if place.running else ""
            status.update(label=_("Queued: you are number {n} in line.{who} Your run starts when the runs before "
                                  "it finish.").format(n=place.position, who=who), expanded=True)

        def on_progress(frac: float | None, text: str | Msg) -> None:
            if not state["running"]:
                state["running"] = True
                shown.start()
            state["text"] = md(tr(text))  # a step's message (a Msg or Text from the worker, or a constant), translated
            state["shown"] = time.monotonic()
            shown.update(frac, state["text"])

        def tick() -> None:
            st.session_state[_SID]  # noqa: B018 - a yield point: a Stop, a rerun or a closed session raises here
            show()

        try:
            out = runner.run(job, lim, owner=owner, on_wait=on_wait, on_progress=on_progress, cancelled=gone,
                             tick=tick, queue_timeout_s=queue_timeout_s(lim))
        except InputError:
            status.update(label=_("Not run"), state="error")
            raise
        except Exception:
            status.update(label=_("Failed"), state="error")
            raise
        except BaseException:  # Streamlit's own Stop, a rerun, a closed session: the worker is already killed
            with contextlib.suppress(BaseException):
                status.update(label=_("Stopped"), state="error", expanded=False)
            raise
        from gemmlib.core import format as fmt

        label = done(out.data) if done else _("Done")
        status.update(label=_("{label} · {time} in a worker process, peak memory {memory}").format(
            label=label, time=fmt.duration(out.seconds), memory=fmt.si(out.peak_rss_bytes, "B")),
            state="complete", expanded=False)
    return out.data


def stopped_notice() -> None:
    """Say once that this visitor's last run was stopped with the Stop button."""
    what = st.session_state.pop("_bench_stopped", None)
    if what:
        st.info(_("Stopped {what}; nothing from that run was kept.").format(what=md(tr(what))))


# ----------------------------------------------------------------------------- results per session
_MINE = "_my_results"
MAX_SESSION_RESULTS = 2000


def keep_results(rows: list[BenchResult] | list[dict]) -> None:
    """Keep this session's measured rows for its Roofline page (not shown to other sessions)."""
    mine = st.session_state.setdefault(_MINE, [])
    mine.extend(r.to_dict() if isinstance(r, BenchResult) else dict(r) for r in rows)
    del mine[: max(0, len(mine) - MAX_SESSION_RESULTS)]


def session_results() -> list[BenchResult]:
    """What this session measured (Precision, Tiling, Batching, Devices, Profiler pages)."""
    return [BenchResult.from_dict(r) for r in st.session_state.get(_MINE, [])]


def share_results(rows: list[BenchResult]) -> int:
    """Share rows with the whole class (every session's Roofline page); returns how many."""
    tag = _session_tag()
    shared = []
    for r in rows:
        d = r.to_dict()
        d["extra"] = {**(d.get("extra") or {}), "shared_by": f"session {tag}"}
        shared.append(BenchResult.from_dict(d))
    results_store.record(shared)
    return len(shared)


def shared_results() -> list[BenchResult]:
    """Rows some session chose to share with the class."""
    return results_store.recorded()
