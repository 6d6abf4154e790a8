"""Home page: what GEMM is, why it matters for LLMs, and a map of the app.

Navigation is Streamlit's file-based routing: every file in ``pages/`` is a
page whose URL is its file name without the number (``/Accumulate``). That
routing resolves a deep link on a freshly started server directly to its page
file, so every page calls ``ui.page`` itself and never relies on this file
having run first. (``st.navigation`` together with a ``pages/`` folder can serve
a cold deep link through the legacy router and skip the navigation script.)

Every text goes through ``_`` (see ui/i18n.py, "translating the app"): this page is the
worked example of the pattern the other pages follow.
"""

from pathlib import Path

import streamlit as st

import ui
from gemmlib.core import format as fmt
from gemmlib.core.flops import DEFAULT_EFFICIENCY, article_count_check
from gemmlib.core.hardware import get_hardware
from gemmlib.core.machine import light_summary
from gemmlib.llm.accounting import attention_crossover, attention_share, layer_model, share_overview
from gemmlib.llm.presets import from_name
from ui import _, ngettext

ui.page(
    _("GEMM, from one multiply-add to a whole LLM"),
    ":material/home:",
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


root = Path(__file__).parent
by_path = {p.path: p for p in ui.PAGES}

st.subheader(_("Start here"))
st.markdown(_("Five stops, from one multiply-add to a whole model, then measured on this machine:"))
PATH = [("pages/1_Accumulate.py", _("one D = αAB + βC, a multiply-add at a time")),
        ("pages/2_FLOPs.py", _("what a GEMM costs: 2·M·N·K FLOPs, the bytes it moves, the time on a GPU")),
        ("pages/3_Transformer_GEMMs.py", _("the GEMMs of one transformer layer, to scale")),
        ("pages/4_LLM_Estimator.py", _("a whole model: every GEMM of prefill and decode, memory, time")),
        ("pages/6_Precision.py", _("then the benchmarks: number formats here, and Tiling, Batching, Roofline, "
                                   "Profiler"))]
for i, (path, why) in enumerate(PATH, start=1):
    if (root / path).exists():
        c1, c2 = st.columns([4, 7])  # wide enough for the longest page name in either language, at 150 % too
        c1.page_link(path, label=f"{i}. {_(by_path[path].label)}", icon=by_path[path].icon)
        c2.markdown(why)

st.subheader(_("Map of the app"))
for p in ui.PAGES[1:]:
    if (root / p.path).exists():
        c1, c2 = st.columns([4, 7])  # wide enough for the longest page name in either language, at 150 % too
        c1.page_link(p.path, label=_(p.label), icon=p.icon)
        notice = _("*What to notice:* {notice}").format(notice=_(p.notice)) if p.notice else ""
        c2.markdown(_(p.line) + ("  \n" + notice if notice else ""))


def _claims() -> list[dict]:
    """The article's claims, each with what the app finds (figures from gemmlib) and where it shows it."""
    art = layer_model(1024, 4096, 32, 4 * 4096, gated=False)
    gap = article_count_check(128, 64, 256)
    page = {p.path.split("/")[-1]: _(p.label) for p in ui.PAGES}
    rows = [
        (_("GEMM is 90–95% of an LLM's compute"),
         _("more in FLOPs, less in time: over 99% of a layer's FLOPs, and a smaller share of its predicted "
           "time (the table below)"),
         [_("Home (below)"), page["4_LLM_Estimator.py"], page["10_Profiler.py"]]),
        (_("the `seq²·d` attention terms dominate when `seq ≈ d`"),
         _("false: {share} of a layer at s = 1024, d = 4096; half only at s = 6·d = {crossover}").format(
             share=fmt.percent(attention_share(art, 1024)), crossover=fmt.count(round(attention_crossover(art)))),
         [page["3_Transformer_GEMMs.py"]]),
        (_("`Params·seq²/(3·d_model)` FLOPs, and INT8 compute = parameters × sequence length × concurrency ÷ 100"),
         _("both far off the exact count (the first inherits the attention error; ÷ 100 has no units)"),
         [_("{page} → Switches & rules of thumb").format(page=page["4_LLM_Estimator.py"])]),
        (_("2·M·N·K is off the counted multiplications and additions by ≈ 0.2%"),
         _("right: the gap is M·N, 1/(2K) = {gap} at K = 256").format(gap=fmt.percent(gap["relative_gap"], 3)),
         [page["2_FLOPs.py"], page["1_Accumulate.py"]]),
        (_("INT8 saves 75% of the bandwidth and runs 2–4× faster (int8 tensors in `torch.matmul`)"),
         _("the bytes are right; the speed depends on the hardware, and real INT8 needs scales and "
           "`torch._int_mm` — measured, with its error"),
         [page["6_Precision.py"]]),
        (_("tiling with `torch.matmul` on sub-blocks"),
         _("a teaching aid: slower than one library call; a tiled kernel is what gains"),
         [page["7_Tiling.py"]]),
        (_("20 requests batched run several times faster (at M = 1024)"),
         _("at M = 1024 each call is already compute-bound, so little; at decode (M = 1) batching pays"),
         [page["8_Batching.py"]]),
        (_("profile: GEMMs ≥ 80% of the time, GPU utilisation ≥ 75%, bandwidth ≥ 60%"),
         _("checked on a real block, against the prediction for the same sizes"),
         [page["10_Profiler.py"]]),
    ]
    return [{"the article says": c, "verdict": v, "where": _(", ").join(w)} for c, v, w in rows]


st.subheader(_("The article this app grew from, and its claims"))
st.markdown(_("The app grew from an article that teaches GEMM as the core of LLM compute, with runnable "
              "examples. Each of its claims, what the app finds, and where it shows it:"))
with ui.guard(_("the claims")):
    # a static table: its cells wrap (a dataframe cut the verdicts) and render Markdown (`code`, not backticks)
    heads = {"the article says": _("the article says"), "verdict": _("verdict"), "where": _("where in the app")}
    st.table([{heads[k]: v for k, v in r.items()} for r in _claims()], hide_index=True, border="horizontal")


@st.cache_data(show_spinner=False)
def _shares() -> list[dict]:
    return share_overview(from_name("llama-2-7b"), (512, 2048, 8192), get_hardware("H100 SXM"), "bf16",
                          DEFAULT_EFFICIENCY)


ATTENTION = {"eager": _("eager"), "fused": _("fused")}  # share_overview's attention kinds, as shown

st.markdown(_(
    "**GEMM's share.** Counted, it is more than 90–95% in FLOPs and less than that in time. One "
    "llama-2-7b decoder layer, bf16, predicted on an H100 at {efficiency} of its peaks (GEMMs at "
    "max(FLOPs/peak, bytes/bandwidth); norms, rotary embedding, softmax, SiLU and residual adds are "
    "memory-bound, so they cost bytes, not FLOPs):").format(efficiency=fmt.percent(DEFAULT_EFFICIENCY, 0)))
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


@st.cache_data(ttl=300, show_spinner=False)
def _devices() -> list[dict]:
    return light_summary()  # no torch: /proc/cpuinfo and NVML only


st.subheader(_("This machine"))
with ui.guard(_("device detection")):
    for d in _devices():
        mem = fmt.nbytes(d["memory_bytes"]) if d.get("memory_bytes") else _("memory unknown")
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
ui.catalogue_table()
