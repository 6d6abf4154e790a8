"""The app's languages: gettext in the session's language, option labels, the language switch.

Every text a person reads goes through ``_`` (gettext) or ``ngettext``, looked up in
``locales/<lang>/LC_MESSAGES/gemm.po`` in the session's language (English or 简体中文, switched in
the sidebar, bound to ``?lang=``); see "translating the app" below and the README's
"简体中文 / Chinese UI" section.
"""

from __future__ import annotations

import functools
import gettext as _gettext
import io
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from gemmlib.core.errors import InputError
from gemmlib.core.i18n import Msg, Text, render

# ----------------------------------------------------------------------------- translating the app
# The pattern (every page follows it; scripts/i18n.py lists what is not wrapped yet):
#   from ui import _, ngettext            # N_ for module-level constants, translated where shown
#   ui.page(_("Title"), ":material/calculate:", _("One paragraph…"))
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
_LANG_MEMO = "_gemm_lang"  # this run's language, on the run's ScriptRunContext (lang())
LOCALES = Path(__file__).resolve().parents[1] / "locales"
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
    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None:
        return "en"  # no session: a bare import, a unit test
    # Once per run (a page asks ~120 times, each a walk through the session state): the answer is kept on the
    # run's context beside the dict Streamlit makes anew for every run (``ctx.cursors``), held so that a later
    # run's dict can never be mistaken for it; language_switch forgets it when it changes the state.
    run = getattr(ctx, "cursors", None)
    memo = getattr(ctx, _LANG_MEMO, None)
    if run is not None and memo is not None and memo[0] is run:
        return memo[1]
    code = _session_lang()
    if run is not None:
        setattr(ctx, _LANG_MEMO, (run, code))
    return code


def _session_lang() -> str:
    ss = st.session_state
    for v in (ss.get(_LANG_PENDING), ss.get(LANG_KEY), st.query_params.get(LANG_KEY), ss.get(_LANG_CHOICE)):
        if v in LANGS:
            return v
    return browser_lang()


def _forget_lang() -> None:
    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is not None:
        setattr(ctx, _LANG_MEMO, None)


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
    return OptionLabels(dict(labels or {}), lang())


class OptionLabels:
    """``option_labels``' format_func: the labels and the language they are shown in; ``in_lang``
    reads an option's label in another language (a link copied from the other language's page)."""

    def __init__(self, labels: dict, code: str) -> None:
        self.labels, self.code = labels, code

    def __call__(self, option: Any) -> str:
        return self.in_lang(self.code, option)

    def in_lang(self, code: str, option: Any) -> str:
        return gettext_for(code)(self.labels.get(option, str(option)))


def tr(x: Msg | Text | InputError | str, code: tuple[str, ...] = ()) -> str:
    """A gemmlib message (Msg, Text, InputError) or a marked constant, in the session's language.
    ``code``: values shown as code (an exception's own text, e.g. ``("error",)``)."""
    msg = x.msg if isinstance(x, Text) else x
    if code and isinstance(msg, Msg):
        return render(msg.template, {k: f"`{v}`" if k in code else v for k, v in msg.params.items()}, _)
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
    _forget_lang()  # the state lang() reads may have changed just now
    if value in LANGS:
        ss[_LANG_CHOICE] = value
    elif ss.get(_LANG_CHOICE) in LANGS and pending is None:
        ss[_LANG_PENDING] = ss[_LANG_CHOICE]
        st.rerun()
    else:
        st.sidebar.caption(_("Following your browser's language."))
    return lang()


_FORCED = threading.local()  # .code: the language _() speaks for a moment in this script thread


@contextmanager
def speaking(code: str) -> Iterator[None]:
    before = getattr(_FORCED, "code", None)
    _FORCED.code = code
    try:
        yield
    finally:
        _FORCED.code = before


def labels_in_other_languages(fmt: Callable[[Any], Any], option: Any) -> set[str]:
    """``fmt(option)`` as it reads in each language other than the session's."""
    out = set()
    for code in LANGS:
        if code != lang():
            if isinstance(fmt, OptionLabels):  # bound to the session's language: ask it for the other one
                out.add(fmt.in_lang(code, option))
                continue
            with speaking(code):
                out.add(str(fmt(option)))
    return out
