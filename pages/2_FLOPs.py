"""FLOPs: the 2·M·N·K heatmap (the article's example 2), bytes, intensity, time on a GPU,
tile and wave quantization, and the article's counting check.

All numbers come from ``gemmlib.core.flops`` and the catalogue in ``gemmlib.core.hardware``;
this page only reads widgets and draws.
"""

import pandas as pd
import streamlit as st

import ui
from gemmlib.charts.explain import heatmap, spec, staircase_chart
from gemmlib.core.ceilings import cpu_row
from gemmlib.core.dtypes import COMPUTE_DTYPES
from gemmlib.core.flops import (
    DEFAULT_EFFICIENCY,
    METRIC_LABELS,
    METRICS,
    article_count_check,
    dim_range,
    metric_grid,
    wave_staircase,
)
from gemmlib.core.hardware import CATALOGUE, DEFAULT_GPU
from gemmlib.llm.efficiency import T0_S  # a GEMM kernel's fixed time
from ui import _, ngettext

MAX_DIM = 1 << 20  # 1,048,576: larger than any LLM GEMM dimension
MAX_K = 1 << 20

ui.page(
    _("FLOPs"),
    ":material/calculate:",
    _(r"""A GEMM of an $M\times K$ matrix by a $K\times N$ matrix does $M N K$ multiply-adds:
**$2\,M N K$ FLOPs**. It must also move at least $A$, $B$ and $D$ through memory, so its
*arithmetic intensity* (FLOPs per byte) decides whether a GPU's compute or its memory bandwidth
sets the time. Change the ranges, the metric and the GPU below."""),
)

# ----------------------------------------------------------------------------- inputs
def _follow_gpu() -> None:
    """The wave section's SMs field follows the chosen hardware (its own edits last until then): the hardware's
    count is the box's default, so the URL drops ``fl_sms`` in the GPU's own change (one Back step)."""
    sms = CATALOGUE[st.session_state.fl_gpu].sms or CATALOGUE[DEFAULT_GPU].sms
    ui.set_url_widget("fl_sms", sms, default=sms)


with st.container(border=True):
    c = st.columns(7)
    m0 = ui.url(c[0].number_input, _("M from"), 1, MAX_DIM, 256, key="fl_m0")
    m1 = ui.url(c[1].number_input, _("M to"), 1, MAX_DIM, 2048, key="fl_m1")
    m_step = ui.url(c[2].number_input, _("M step"), 1, MAX_DIM, 256, key="fl_ms")
    n0_ = ui.url(c[3].number_input, _("N from"), 1, MAX_DIM, 256, key="fl_n0")
    n1_ = ui.url(c[4].number_input, _("N to"), 1, MAX_DIM, 2048, key="fl_n1")
    n_step = ui.url(c[5].number_input, _("N step"), 1, MAX_DIM, 256, key="fl_ns")
    k_dim = ui.url(c[6].number_input, "K", 1, MAX_K, 1024, key="fl_k",
                   help=_("1024: a typical hidden size in the article"))
    d = st.columns([3, 2, 3, 2])  # the dtype and hardware boxes wide enough to show their values at 150 % zoom
    metric = ui.url(d[0].radio, _("Metric"), list(METRICS), index=list(METRICS).index("GFLOPs"), key="fl_metric",
                    horizontal=True, format_func=ui.option_labels(METRIC_LABELS))
    dtype = ui.url(d[1].selectbox, _("dtype"), COMPUTE_DTYPES, index=list(COMPUTE_DTYPES).index("bf16"),
                   key="fl_dtype", help=_("element size for bytes; peak for time"))
    gpu = ui.url(d[2].selectbox, _("Hardware"), list(CATALOGUE), index=list(CATALOGUE).index(DEFAULT_GPU),
                 key="fl_gpu", on_change=_follow_gpu, format_func=ui.option_labels())  # the CPU row's name is translated
    eff = ui.url(d[3].slider, _("efficiency"), 0.05, 1.0, DEFAULT_EFFICIENCY, step=0.05, key="fl_eff",
                 help=_("share of the datasheet peak and bandwidth a real kernel reaches"))
    st.caption(_("**{metric}**: {what}.").format(metric=_(METRIC_LABELS[metric]), what=_(METRICS[metric])))

hw = CATALOGUE[gpu]
if hw.editable:
    hw, cpu_note = cpu_row(gettext=_)  # the ceilings measured on this CPU, when there are any
    with st.expander(_("Edit the {name} row (your CPU's figures)").format(name=_(hw.name)), expanded=True):
        st.caption(_("Starting values: {note}.").format(note=cpu_note))
        e = st.columns(5)
        fp32 = e[0].number_input("fp32 TFLOP/s", 0.001, 100.0, value=(hw.peak("fp32") or 1e11) / 1e12,
                                 step=0.05, format="%.3f", key="fl_cpu_fp32",
                                 help=_("cores × GHz × FLOP/cycle (e.g. 2 × 3.0 × 32 = 0.19 TFLOP/s with AVX2 FMA)"))
        half = e[1].number_input("fp16/bf16 TFLOP/s", 0.001, 100.0, value=(hw.peak("bf16") or 5e10) / 1e12,
                                 step=0.05, format="%.3f", key="fl_cpu_half")
        int8 = e[2].number_input("int8 TOPS", 0.001, 100.0, value=(hw.peak("int8") or 1e11) / 1e12,
                                 step=0.05, format="%.3f", key="fl_cpu_int8")
        bw = e[3].number_input(_("bandwidth GB/s"), 1.0, 2000.0, value=hw.bandwidth / 1e9, step=1.0,
                               key="fl_cpu_bw")
        cores = e[4].number_input(_("cores"), 1, 1024, value=hw.sms, key="fl_cpu_cores")
        with ui.guard(_("the CPU row")):
            hw = hw.with_overrides(peaks={"fp32": fp32 * 1e12, "fp16": half * 1e12, "bf16": half * 1e12,
                                          "int8": int8 * 1e12},
                                   bandwidth=bw * 1e9, sms=int(cores))

# ----------------------------------------------------------------------------- heatmap
@st.cache_data(max_entries=64, show_spinner=False)
def heatmap_spec(grid_: tuple, shown_: str, title_: str, tips_: tuple, code: str, fmt_: str) -> dict:
    return spec(heatmap([dict(r) for r in grid_], shown_, title_, fmt_, tooltip_fields=list(tips_),
                        gettext=ui.gettext_for(code)))


@st.cache_data(max_entries=64, show_spinner=False)
def staircase_view(m: int, n0: int, n1: int, tm: int, tn: int, sms: int, step: int,
                   code: str) -> tuple[list[dict], dict]:
    rows = wave_staircase(m, n0, n1, tm, tn, sms, step=step)
    return rows, spec(staircase_chart(rows, gettext=ui.gettext_for(code)))


FORMATS = {"GFLOPs": ",.3~f", "MB moved": ",.3~f", "FLOP/byte": ",.3~r", "time µs": ",.3~g"}
grid = None
with ui.guard(_("the ranges")):
    ms = dim_range(m0, m1, m_step, "M")
    ns = dim_range(n0_, n1_, n_step, "N")
    has_time = hw.supports(dtype)
    grid = metric_grid(ms, ns, k_dim, dtype, hw if has_time else None, eff)
    st.session_state.fl_good = (grid, has_time)
if grid is None and "fl_good" in st.session_state:
    grid, has_time = st.session_state.fl_good
    st.info(_("Showing the last ranges that worked."))
if grid is not None:
    shown = metric
    if metric == "time µs" and not has_time:
        if dtype in hw.unknown:  # it runs the dtype; no source gives the rate
            st.warning(_("{gpu} runs {dtype}, but no source gives its dense {dtype} rate, so there is no time to "
                         "predict; showing GFLOPs. Pick another dtype or hardware.").format(gpu=_(hw.name),
                                                                                            dtype=dtype))
        else:
            st.warning(_("{gpu} has no {dtype} GEMM path in its datasheet, so there is no time to predict; "
                         "showing GFLOPs. Pick another dtype or hardware.").format(gpu=_(hw.name), dtype=dtype))
        shown = "GFLOPs"
    tips = [("M", "ordinal", None), ("N", "ordinal", None), ("K", "quantitative", None),
            ("GFLOPs", "quantitative", ",.4~g"), ("MB moved", "quantitative", ",.4~g"),
            ("FLOP/byte", "quantitative", ",.1f")]
    if has_time:
        tips += [("time µs", "quantitative", ",.4~g"), ("TFLOP/s", "quantitative", ",.1f"),
                 ("bound", "nominal", None)]
    rows = [{**r, "bound": _(r["bound"])} if "bound" in r else r for r in grid]  # (the tooltip's "compute", in zh)
    fmt_shown = FORMATS[shown]
    if shown == "GFLOPs" and max(r["FLOPs"] for r in grid) < 1e6:  # a classroom size: whole FLOPs, not "0"
        shown, fmt_shown = "FLOPs", ",.0f"
        tips = [*tips[:3], ("FLOPs", "quantitative", ",.0f"), *tips[3:]]
        title = _("FLOPs for M×K by K×N, K = {k:,}").format(k=k_dim)
    elif shown == "GFLOPs":
        title = _("GFLOPs for M×K by K×N, K = {k:,}").format(k=k_dim)
    elif shown == "time µs":
        title = _("{metric} for M×K by K×N, K = {k:,}, {dtype}, {gpu} at {efficiency}").format(
            metric=_(METRIC_LABELS[shown]), k=k_dim, dtype=dtype, gpu=_(hw.name), efficiency=f"{eff:.0%}")
    else:
        title = _("{metric} for M×K by K×N, K = {k:,}, {dtype}").format(metric=_(METRIC_LABELS[shown]), k=k_dim,
                                                                       dtype=dtype)
    st.vega_lite_chart(heatmap_spec(tuple(tuple(r.items()) for r in rows), shown, title, tuple(tips), ui.lang(),
                                    fmt_shown), width="stretch")
    if has_time:
        bound = pd.DataFrame(grid)["bound"].value_counts().to_dict()
        ridge = hw.ridge_point(dtype)
        n_compute, n_memory = bound.get("compute", 0), bound.get("memory", 0)
        st.caption(_("On {gpu} ({dtype}): ridge point {ridge:,.0f} FLOP/byte — {compute}, {memory}. Bytes are the "
                     "minimum traffic (each operand read once, D written once); real kernels move more, so "
                     "memory-bound times are optimistic.").format(
            gpu=_(hw.name), dtype=dtype, ridge=ridge,
            compute=ngettext("{n:,} cell compute-bound", "{n:,} cells compute-bound", n_compute).format(n=n_compute),
            memory=ngettext("{n:,} memory-bound", "{n:,} memory-bound", n_memory).format(n=n_memory)))
        if shown == "time µs" and not CATALOGUE[gpu].editable and min(r["time µs"] for r in grid) < T0_S * 1e6:
            st.caption(_("The roofline has no fixed cost, but a GEMM kernel does: about {t0:.2f} µs to launch, fill "
                         "its pipeline and drain (fitted to H100 timings; the LLM Estimator adds it). A cell under "
                         "that takes at least that long on a real GPU.").format(t0=T0_S * 1e6))

with st.expander(_("The hardware catalogue (dense datasheet peaks, with sources)")):
    ui.catalogue_table()
    st.caption(_("Peaks are dense (no 2:4 sparsity); int8 is in TOPS. The CPU row is a placeholder: pick it "
                 "above to edit its figures for your machine."))

# ----------------------------------------------------------------------------- wave quantization
st.subheader(_("Tile and wave quantization"))
st.markdown(_(
    "A GEMM kernel splits D into tiles (e.g. 128×128); each tile is one unit of work for one SM. "
    "A partly filled edge tile costs a whole tile (**tile quantization**), and when the tiles do not "
    "divide evenly by the SM count the last *wave* leaves SMs idle (**wave quantization**). So time "
    "is a staircase in N, not a line: one column past a multiple of the tile can cost a full extra wave."
))
w = st.columns(6)
wave_m = ui.url(w[0].number_input, "M", 1, MAX_DIM, 1024, key="fl_wm")
wave_n0 = ui.url(w[1].number_input, _("N from"), 1, MAX_DIM, 1024, key="fl_wn0")
wave_n1 = ui.url(w[2].number_input, _("N to"), 1, MAX_DIM, 4096, key="fl_wn1")
tm = ui.url(w[3].selectbox, _("tile M"), [64, 128, 256], index=1, key="fl_tm")
tn = ui.url(w[4].selectbox, _("tile N"), [64, 128, 256], index=1, key="fl_tn")
sms = ui.url(w[5].number_input, _("SMs"), 1, 1024, CATALOGUE[gpu].sms or CATALOGUE[DEFAULT_GPU].sms, key="fl_sms",
             help=_("follows the chosen hardware's SM count (the H100's where the catalogue has none); "
                               "edit it to try another"))
with ui.guard(_("the staircase")):
    n0, n1 = wave_n0, wave_n1
    step = max(1, -(-(n1 - n0 + 1) // 1650))  # at most 1650 points: 3 lines each under Altair's 5000 rows
    stairs, stairs_spec = staircase_view(wave_m, n0, n1, tm, tn, int(sms), step, ui.lang())
    st.vega_lite_chart(stairs_spec, width="stretch")
    worst = min(stairs, key=lambda r: r["efficiency"])
    best = max(stairs, key=lambda r: r["efficiency"])
    waves = ngettext("{tiles:,} tiles in {n} wave", "{tiles:,} tiles in {n} waves", worst["waves"]).format(
        tiles=worst["tiles"], n=worst["waves"])
    sampled = _(" (N sampled every {step} columns over this wide range.)").format(step=step) if step > 1 else ""
    st.caption(_("{tm}×{tn} tiles on {sms} SMs: efficiency from {worst:.1%} (N = {worst_n:,}, {waves}) to {best:.1%} "
                 "(N = {best_n:,}). Efficiency = tile efficiency × wave efficiency: the share of the launched SM-time "
                 "that does useful multiply-adds.").format(
        tm=tm, tn=tn, sms=int(sms), worst=worst["efficiency"], worst_n=worst["N"], waves=waves,
        best=best["efficiency"], best_n=best["N"]) + sampled)

# ----------------------------------------------------------------------------- the article's check
st.subheader(_("The article's count: multiplications + additions vs 2·M·N·K"))
st.markdown(_(
    "The article counts, for `M, K, N = 128, 256, 64`, one multiplication and one addition per (i, j, k), "
    "then subtracts M·N additions (a sum of K terms needs only K − 1 additions), and compares with 2·M·N·K."
))
a = st.columns(3)
am = ui.url(a[0].number_input, "M", 1, 4096, 128, key="fl_am")
ak = ui.url(a[1].number_input, "K", 1, 4096, 256, key="fl_ak")
an = ui.url(a[2].number_input, "N", 1, 4096, 64, key="fl_an")
with ui.guard(_("the count")):
    cnt = article_count_check(int(am), int(an), int(ak))
    ui.table(pd.DataFrame([
        {"quantity": _("multiplications M·N·K"), "count": cnt["multiplications"]},
        {"quantity": _("additions M·N·(K−1)"), "count": cnt["additions"]},
        {"quantity": _("counted total"), "count": cnt["counted"]},
        {"quantity": _("formula 2·M·N·K"), "count": cnt["formula"]},
        {"quantity": _("gap = M·N"), "count": cnt["gap"]},
    ]), column_config={"quantity": _("quantity"), "count": _("count")})
    st.markdown(_(
        "Gap: **{gap:.3%}** of the formula, exactly 1/(2K) = 1/{two_k}. For the article's shape (K = 256) that is "
        "0.195% — the article's “≈ 0.2%” is this number, rounded. It depends only on K: the same 128 and 256 "
        "with K = 64 (M×N×K = 128×256×64) give 1/128 = 0.78%. The formula is the convention because a GEMM adds "
        "into an accumulator (or into C): K additions per output, and FLOP counters such as PyTorch's count 2·M·N·K."
    ).format(gap=cnt["relative_gap"], two_k=2 * cnt["K"]))

