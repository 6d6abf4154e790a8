"""Home page: what GEMM is, why it matters for LLMs, and a map of the app.

Navigation is Streamlit's file-based routing: every file in ``pages/`` is a
page whose URL is its file name without the number (``/Accumulate``). That
routing resolves a deep link on a freshly started server directly to its page
file, so every page calls ``ui.page`` itself and never relies on this file
having run first. (``st.navigation`` together with a ``pages/`` folder can serve
a cold deep link through the legacy router and skip the navigation script.)

Every text goes through ``_`` (see ui.py, "translating the app"): this page is the
worked example of the pattern the other pages follow.
"""

from pathlib import Path

import streamlit as st

import ui
from gemmlib.core.flops import DEFAULT_EFFICIENCY
from gemmlib.core.hardware import catalogue_rows, get_hardware
from gemmlib.core.machine import light_summary
from gemmlib.llm.accounting import share_overview
from gemmlib.llm.presets import from_name
from ui import _, ngettext

ui.page(
    _("GEMM, from one multiply-add to a whole LLM"),
    "🧮",
    _(r"""A **GEMM** (general matrix multiply) computes

$$D = \alpha\,A B + \beta\,C,\qquad A\in\mathbb{R}^{M\times K},\; B\in\mathbb{R}^{K\times N},\; C, D\in\mathbb{R}^{M\times N}.$$

Each of the $M\cdot N$ outputs is a dot product of length $K$, that is $K$ multiply-adds, so
a GEMM costs $2\,M N K$ floating-point operations (FLOPs). In the layers of an LLM
$\beta = 0$ and $\alpha = 1$: the projections, the attention products and the
feed-forward network are plain products $D = AB$."""),
)

st.markdown(_(
    """**Why GEMM is nearly all of an LLM's compute.** A decoder layer is six weight GEMMs
(Q, K, V and output projections, the MLP's up and down — plus a gate in SwiGLU models) and two
attention products (Q·Kᵀ and weights·V). Everything else — normalisation, softmax, the
activation, residual adds — touches each activation a handful of times, so it costs a few
FLOPs per element against the thousands per element of a projection with a hidden size in the
thousands. The **Transformer GEMMs** and **LLM Estimator** pages count both, exactly."""
))


@st.cache_data(show_spinner=False)
def _shares() -> list[dict]:
    return share_overview(from_name("llama-2-7b"), (512, 2048, 8192), get_hardware("H100 SXM"), "bf16", DEFAULT_EFFICIENCY)


ATTENTION = {"eager": _("eager"), "fused": _("fused")}  # share_overview's attention kinds, as shown

st.markdown(_(
    "**The article says GEMM is 90–95 % of an LLM's compute.** Counted, it is more than that in FLOPs "
    "and less than that in time. One llama-2-7b decoder layer, bf16, predicted on an H100 at 70 % of "
    "its peaks (GEMMs at max(FLOPs/peak, bytes/bandwidth); norms, rotary embedding, softmax, SiLU and "
    "residual adds are memory-bound, so they cost bytes, not FLOPs):"
))
with ui.guard(_("the GEMM share")):
    ui.table(
        [{**r, "attention": ATTENTION.get(r["attention"], r["attention"])} for r in _shares()],
        column_config={
            "tokens": _("tokens"),
            "attention": _("attention"),
            **{c: st.column_config.ProgressColumn(label, format="percent", min_value=0.0, max_value=1.0)
               for c, label in (("GEMM share of FLOPs", _("GEMM share of FLOPs")),
                                ("GEMM share of time", _("GEMM share of time")))},
        },
    )
st.caption(_("Eager attention writes and re-reads the S×S scores for scale, mask and softmax, so its share "
             "of time falls as the context grows; a fused kernel (sdpa / FlashAttention) keeps them on chip. "
             "The **Profiler** page measures the real split on this machine."))

st.subheader(_("Map of the app"))
root = Path(__file__).parent
for p in ui.PAGES[1:]:
    if (root / p.path).exists():
        c1, c2 = st.columns([3, 8])  # wide enough for the longest page name in either language
        c1.page_link(p.path, label=_(p.label), icon=p.icon)
        c2.markdown(_(p.line))



@st.cache_data(ttl=300, show_spinner=False)
def _devices() -> list[dict]:
    return light_summary()  # no torch: /proc/cpuinfo and NVML only


st.subheader(_("This machine"))
with ui.guard(_("device detection")):
    for d in _devices():
        mem = f"{d['memory_gb']:.0f} GB" if d.get("memory_gb") else _("memory unknown")
        if d["kind"] == "cuda":
            units = ngettext("{n} SM", "{n} SMs", d["units"]).format(n=d["units"])
        else:
            units = ngettext("{n} thread", "{n} threads", d["units"]).format(n=d["units"])
        cap = (_(", compute capability {capability}").format(capability=d["capability"])
               if d.get("capability") else "")
        st.markdown(_("- **{kind}** {name}: {units}, {memory}{capability} — catalogue row: *{row}*").format(
            kind=d["kind"].upper(), name=d["name"], units=units, memory=mem, capability=cap,
            row=_(d["catalogue"]) if d["catalogue"] else _("none")))
    st.caption(_("Live benchmarks run on these; the **Devices** page measures their real ceilings."))

st.subheader(_("GPUs in the catalogue"))
st.caption(_("Dense datasheet peaks (no sparsity), TFLOP/s (int8: TOPS); each row links its source."))
rows = catalogue_rows()
TEXT_CELLS = ("name", "scale-up link", "node network")  # catalogue texts marked N_ in core.hardware
ui.table(
    [{**r, **{c: _(r[c]) for c in TEXT_CELLS if r.get(c)}, "kind": r["kind"].upper(),
      "source": r["source"] if r["source"].startswith("http") else _(r["source"])} for r in rows],
    column_config={"name": _("name"), "kind": _("kind"), "unknown peaks": _("unknown peaks"),
                   "bandwidth TB/s": _("bandwidth TB/s"), "SMs": _("SMs"), "memory GiB": _("memory GiB"),
                   "memory bytes": _("memory bytes"), "scale-up link": _("scale-up link"),
                   "scale-up GB/s per direction": _("scale-up GB/s per direction"),
                   "node network": _("node network"), "source": st.column_config.LinkColumn(_("source"))},
)
