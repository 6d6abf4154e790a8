"""The page list, the page's frame (config, language switch, navigation, title) and ``guard``.

Each page starts with ``ui.page(...)`` and wraps its work in ``with ui.guard():`` so that bad input
shows a clear message and anything unexpected shows a short message with an error id, the
traceback going to the server log under that id — never a traceback or a server path on the page.
"""

from __future__ import annotations

import copy
import logging
import traceback
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

import streamlit as st

from gemmlib.core.errors import InputError
from gemmlib.core.files import ServerSetupError
from gemmlib.core.i18n import N_

from .i18n import LANG_KEY, LANGS, _, lang, language_switch, tr
from .text import log, md
from .url import link_note, link_values, notes_box


class Page(NamedTuple):
    path: str  # relative to app.py; the URL is the file name without its number
    label: str  # N_-marked English; shown through _()
    icon: str  # a Material Symbols icon (":material/name:", bundled with Streamlit): emoji draw as boxes without an emoji font
    line: str  # one line for the home page's map (N_-marked English)
    notice: str = ""  # what to notice there, for the home page's map (N_-marked English)


PAGES: list[Page] = [
    Page("app.py", N_("Home"), ":material/home:", N_("What GEMM is, why it is nearly all of an LLM's compute, this machine.")),
    Page("pages/1_Accumulate.py", N_("Accumulate"), ":material/add:",
         N_("Step through D = αAB + βC cell by cell; loop orders, reuse, accumulator precision."),
         notice=N_("the inner product loads every A and B element once per use; a tile loads each far fewer times for the same multiply-adds.")),
    Page("pages/2_FLOPs.py", N_("FLOPs"), ":material/calculate:",
         N_("The 2·M·N·K heatmap, bytes moved, arithmetic intensity, time on a GPU, tile and wave "
            "quantization."),
         notice=N_("FLOPs grow with M·N·K but bytes only with M·K + K·N + M·N, so big GEMMs are compute-bound; one column past a tile multiple costs a whole wave.")),
    Page("pages/3_Transformer_GEMMs.py", N_("Transformer GEMMs"), ":material/layers:",
         N_("Every GEMM of one layer drawn to scale, and when attention really dominates."),
         notice=N_("at s = 1024, d = 4096 the attention products are 4% of a layer; they reach half only at s = 6·d.")),
    Page("pages/4_LLM_Estimator.py", N_("LLM Estimator"), ":material/straighten:",
         N_("Size a model: FLOPs per GEMM, memory, prefill and decode time on a GPU."),
         notice=N_("prefill is compute-bound, decode is bound by reading the weights; memory decides how many GPUs a model needs.")),
    Page("pages/5_Devices.py", N_("Devices"), ":material/memory:",
         N_("This machine's CPU and GPUs, their datasheet peaks and measured ceilings."),
         notice=N_("how far below the datasheet this machine's measured ceilings are.")),
    Page("pages/6_Precision.py", N_("Precision"), ":material/adjust:",
         N_("fp32, tf32, fp16, bf16, int8 and fp8 GEMMs measured live, with their error."),
         notice=N_("int8 and fp8 halve or quarter the bytes, but their speed-up depends on the hardware; the error column says what they cost.")),
    Page("pages/7_Tiling.py", N_("Tiling"), ":material/grid_view:",
         N_("Python tiling vs a real Triton kernel vs the library, tile-size sweeps."),
         notice=N_("Python-level tiles are slower than one library call; a tiled kernel keeps the reuse without the overhead.")),
    Page("pages/8_Batching.py", N_("Batching"), ":material/inventory_2:",
         N_("Why batching pays at decode: one weight read serving many requests."),
         notice=N_("at decode (M = 1) stacking B requests costs about one request's time; at M = 1024 it gains little.")),
    Page("pages/9_Roofline.py", N_("Roofline"), ":material/show_chart:",
         N_("Every measured point on the device's roofline beside the estimate."),
         notice=N_("every measured point sits under its roof; how far under is what the kernel leaves on the table.")),
    Page("pages/10_Profiler.py", N_("Profiler"), ":material/timer:",
         N_("Where the time goes in a transformer block; GPU utilisation over time."),
         notice=N_("GEMMs' share of the time grows with the model's size; small blocks spend it on everything else.")),
    Page("pages/11_Multi_GPU.py", N_("Multi-GPU"), ":material/hub:",
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

    ``title`` and ``intro`` come translated (``ui.page(_("Title"), ":material/calculate:", _("…"))``).
    They were looked up before the switch ran; should the switch say otherwise, the page runs once
    more. A page of ``PAGES`` (found by its title) shows the list's Material icon in the title, the
    tab and the sidebar alike; ``icon`` is for a page not in the list.
    """
    icon = next((p.icon for p in PAGES if _(p.label) == title), icon)
    before = lang()
    try:
        st.set_page_config(page_title=f"{title} · GEMM", page_icon=icon, layout="wide")
    except st.errors.StreamlitAPIException:  # already set in this run
        pass
    asked = link_values(LANG_KEY) if LANG_KEY not in st.session_state else []
    if language_switch() != before:
        st.rerun()
    if asked and asked[0] not in LANGS:
        link_note(LANG_KEY, asked[0], N_("is not one of the choices"), st.session_state.get(LANG_KEY),
                  then=N_("the browser's language is used"))
    nav()
    with st.container(key="page_title"):  # st-key-page_title: presentation mode folds it away
        st.title(f"{icon} {title}")
        if intro:
            st.markdown(intro)
    notes_box()  # link values this page could not use, named once (ui.url.link_note); nothing when there are none


# Presentation mode's frame: the page's title folded away, Streamlit's top padding and the side
# margins narrowed, so that the step-through starts near the top of the window and has its width.
_PRESENT_CSS = """<style>
.st-key-page_title { display: none; }
[data-testid="stMainBlockContainer"] { padding-top: 3.6rem; padding-bottom: 2rem;
                                       padding-left: 1.5rem; padding-right: 1.5rem; }
</style>"""


def presenting(on: bool) -> None:
    """Presentation mode (``on``): fold the sidebar, the page's title and Streamlit's margins away.

    The sidebar is collapsed (``st.set_page_config(initial_sidebar_state="collapsed")``; its arrow at
    the top left opens it again) and expanded again when presentation mode is turned off.
    """
    try:
        st.set_page_config(initial_sidebar_state="collapsed" if on else "auto")
    except st.errors.StreamlitAPIException:
        pass
    if on:
        st.html(_PRESENT_CSS)


def intro(text: str, folded: bool = False) -> None:
    """A page's introduction: shown, or folded into an expander (presentation mode)."""
    if folded:
        with st.expander(_("About this page")):
            st.markdown(text)
    else:
        st.markdown(text)


MAX_QUOTED = 120  # characters of one value a refusal quotes; a longer one (a pasted 10,000-digit number) is cut


def _quoted_short(e: InputError) -> InputError:
    """``e`` with every text value longer than MAX_QUOTED cut in the middle ("99999…99999"), so a refusal that
    quotes what a visitor typed or linked stays a readable line instead of kilobytes of it."""
    params = getattr(e, "params", None) or {}
    cut = {k: f"{v[:80]}…{v[-30:]}" for k, v in params.items() if isinstance(v, str) and len(v) > MAX_QUOTED}
    if not cut:
        return e
    out = copy.copy(e)
    out.params = {**params, **cut}
    return out


@contextmanager
def guard(what: str | None = None) -> Iterator[None]:
    """Show InputError as a plain message (its user text escaped); log anything else with its
    traceback under an error id and show the visitor only a short message with that id (no server
    paths, no traceback). A ServerSetupError (the server's cache folder is a link, another user's,
    open to others...) is the administrator's to fix: its path and mode go to the log under an
    error id, the visitor gets the id.

    ``what`` names the section in the reader's language (``ui.guard(_("the heatmap"))``).
    """
    try:
        yield
    except ServerSetupError as e:
        eid = uuid.uuid4().hex[:8]
        log.log(logging.ERROR, "error id %s in %s: the server is not set up correctly: %s", eid,
                what or "this section", e)
        st.error(_("**This server is not set up correctly** for {what}. Its administrator will find the details "
                   "in the server log under error id **{eid}**.").format(what=what or _("this section"), eid=eid))
    except InputError as e:
        e = _quoted_short(e)
        heading = getattr(e, "HEADING", None)  # a refusal that is not about the input (a full queue) says so
        if heading:
            st.warning(_("**{heading}:** {message}").format(heading=_(heading), message=md(tr(e))))
        else:
            st.error(_("**Check the input:** {message}").format(message=md(tr(e))))
    except Exception as e:  # noqa: BLE001 - st.stop/st.rerun are BaseExceptions and pass
        eid = uuid.uuid4().hex[:8]
        worker_tb = getattr(e, "traceback", "")
        log.log(logging.ERROR, "error id %s in %s: %s: %s\n%s%s", eid, what or "this section", type(e).__name__,
                e, traceback.format_exc(), f"worker traceback:\n{worker_tb}" if worker_tb else "")
        st.error(_("Something went wrong in {what}. It has been logged on the server as error id **{eid}**; "
                   "please mention this id when you report it.").format(what=what or _("this section"), eid=eid))
