"""Tiling: the article's Python-level tiled GEMM, a real Triton kernel and the library, measured.

The step-by-step view replays ``gemmlib.explain.reference``'s tiled trace; the traffic model
is ``gemmlib.explain.tiling``; the measurements are ``gemmlib.measure.tiling`` through the
harness (single-flight lock, caps, time limit). This page reads widgets and draws.
"""


from dataclasses import replace

import pandas as pd
import streamlit as st

import ui
from gemmlib.charts import bench as charts_bench
from gemmlib.charts import tiling as tiling_charts
from gemmlib.core.errors import InputError
from gemmlib.core.hardware import CATALOGUE
from gemmlib.core.i18n import N_
from gemmlib.core.results import to_csv, to_json
from gemmlib.explain import reference as ref
from gemmlib.explain.tiling import traffic_table
from gemmlib.measure import tiling as bt
from gemmlib.views import tiling as view
from ui import _

IMPL_NAMES = {"python_tiled": N_("python_tiled"), "numpy_blocked": N_("numpy_blocked"), "triton": "triton",
              "torch": "torch"}  # the implementations' ids as a reader sees them in a table


def impl_name(impl: str) -> str:
    return shown_as(IMPL_NAMES.get(impl, impl))


ui.page(_("Tiling"), ":material/grid_view:")
present = ui.url(st.toggle, _("presentation mode"), False, key="ti_present",
                 help=_("for a projector: section 1's step-through alone on the screen, sized to the window, the "
                        "title, sidebar, explanations and inputs folded away; a clicker's PageDown / PageUp step "
                        "once the stepper has the focus (click the grids)"))
ui.presenting(present)
stage = st.container() if present else None  # presentation: the step-through first, right under the switch
ui.intro(_(r"""
A GEMM kernel never multiplies whole matrices at once: it cuts $D$ into **tiles**, and for each
tile walks $K$ in steps, loading a tile of $A$ and a tile of $B$ into fast memory and doing every
multiply-add they allow. Bigger tiles mean each element loaded from DRAM is reused more times.
The article shows this with Python loops that call `torch.matmul` on sub-blocks. That code is a
**teaching aid**: the library already tiles — in registers and shared memory, with no Python
between tiles — so the Python loops are *slower*. Below: the loop order step by step, the traffic
each tile size implies, and the four implementations measured on the same inputs.

**What to notice:** a bigger tile loads each element of A and B fewer times (the traffic
table), yet the Python tiles are slower than one library call; only inside a kernel does tiling pay.
"""), folded=present)


# option labels: a gettext bound to this run's language (Streamlit and AppTest call format_func later)
shown_as = ui.gettext_for(ui.lang())
lim = ui.bench_limits()

# ----------------------------------------------------------------------------- 1. the loop order, animated
inputs = st.expander(_("1 · The tiled loop order: the matrices, the tile and the speed")) if present else st
if not present:
    st.subheader(_("1 · The tiled loop order, step by step"))
c = inputs.columns(5)
ui.url(c[0].number_input, "M", 1, ref.MAX_DIM, 6, key="ti_m")
ui.url(c[1].number_input, "N", 1, ref.MAX_DIM, 6, key="ti_n")
ui.url(c[2].number_input, "K", 1, ref.MAX_DIM, 6, key="ti_k")
ui.url(c[3].number_input, _("tile (square)"), 1, ref.MAX_DIM, 2, key="ti_t",
       help=_("`tile_m = tile_n = tile_k`; edge tiles are smaller when it does not divide"))
ui.url(c[4].number_input, _("seed"), 0, 10**6, 0, key="ti_seed")


@st.cache_resource(max_entries=32, show_spinner=False)
def _trace(m: int, n: int, k: int, t: int, seed: int) -> ref.Trace:
    return ref.trace_tiled(ref.random_problem(m, n, k, seed), (t, t, t))


tr = None
with ui.guard(_("the tiled trace")):
    tr = _trace(int(st.session_state.ti_m), int(st.session_state.ti_n), int(st.session_state.ti_k),
                int(st.session_state.ti_t), int(st.session_state.ti_seed))
    st.session_state.ti_good = tr
if tr is None:
    tr = st.session_state.get("ti_good") or _trace(6, 6, 6, 2, 0)
    st.info(_("Showing the last matrices that worked."))


speed = ui.url(inputs.slider, _("speed (steps per second)"), 1, ui.STEPPER_MAX_SPEED, 3, key="ti_speed",
               help=_("the browser draws every step at up to 10 steps per second, however busy the server is; "
                      "faster, a busy browser may skip a step to keep the pace"))
# keys: ti_stepper (the component), ti_step (the step, also ?ti_step= in the URL), ti_stepper_trace
with stage or st.container():
    ui.stepper("ti_stepper", tr, speed=speed, presentation=present, pos_key="ti_step")
p = tr.problem
counts = ref.load_counts(p.m, p.n, p.k, tr.tile)
st.caption(_(
    "Amber: the A and B tiles this step loads; blue: the block of D it accumulates. With {tm}×{tn} tiles, A is "
    "loaded {loads_a} element-times and B {loads_b}, against {inner} each for the plain (i, j, k) loop that "
    "fetches every operand at every use. The Accumulate page compares all three loop orders.").format(
    tm=tr.tile[0], tn=tr.tile[1], loads_a=f"{counts['tiled']['loads_a']:,}", loads_b=f"{counts['tiled']['loads_b']:,}",
    inner=f"{counts['inner']['loads_a']:,}"))

# ----------------------------------------------------------------------------- 2. traffic model
st.subheader(_("2 · What each tile size implies for DRAM traffic"))
st.markdown(_(
    "One tile of D (t×t) needs a t×K panel of A and a K×t panel of B. With no reuse between tiles, "
    "**A is read ⌈N/t⌉ times and B ⌈M/t⌉ times**: doubling the tile halves the traffic, until the "
    "tiles no longer fit in registers and shared memory (a GPU SM has ~228 KiB of shared memory; "
    "real kernels use 64–256). The article's loop also adds every k-step into D in memory, so D "
    "is read and written ⌈K/t⌉ times — shown in the benchmark table below."))
tc = st.columns([1, 1, 3])
ui.url(tc[0].number_input, "M = N = K", 1, 1 << 20, 4096, key="tt_size")
ui.url(tc[1].selectbox, _("dtype"), bt.TILING_DTYPES, index=list(bt.TILING_DTYPES).index("bf16"), key="tt_dtype")
tiles_model = ui.url(tc[2].multiselect, _("tile sizes"), [8, 16, 32, 64, 128, 256, 512, 1024],
                     default=[16, 32, 64, 128, 256], key="tt_tiles")
with ui.guard(_("the traffic model")):
    s = int(st.session_state.tt_size)
    if tiles_model:
        tiles_model = sorted(tiles_model)
        t_rows = traffic_table(s, s, s, tiles_model, st.session_state.tt_dtype)
        st.altair_chart(tiling_charts.traffic_chart(s, s, s, tiles_model, st.session_state.tt_dtype, gettext=_),
                        width="stretch")
        ui.table(view.traffic_rows(t_rows), column_config={c: _(t) for c, t in view.TRAFFIC_COLUMNS.items()})

# ----------------------------------------------------------------------------- 3. measured
st.subheader(_("3 · Measured: four implementations on the same inputs"))
cuda_ok, cuda_why = ui.cuda_available()
devices = ["cuda", "cpu"] if cuda_ok else ["cpu"]
box = st.container(border=True)  # the inputs; the run button closes it
with box:
    c = st.columns([1, 1, 1, 3])
    device = ui.url(c[0].radio, _("Device"), devices, key="tb_device",
                    help=None if cuda_ok else _("No GPU here: {why}").format(why=ui.tr(cuda_why)))
    defaults = bt.gpu_defaults() if device == "cuda" else bt.cpu_defaults()
    ui.url(c[1].number_input, "M = N = K", 1, lim.max_dim, min(defaults.size, lim.max_dim), key="tb_size",
           help=_("odd sizes work: edge tiles are smaller"))
    ui.url(c[2].selectbox, _("dtype"), bt.TILING_DTYPES, index=list(bt.TILING_DTYPES).index(defaults.dtype),
           key="tb_dtype")
    impls = ui.url(c[3].multiselect, _("Implementations"), list(bt.IMPLS), default=list(bt.IMPLS), key="tb_impls",
                   format_func=lambda i: shown_as("{impl} — {label}").format(  # a picker shows no markdown
                                 impl=impl_name(i), label=shown_as(bt.IMPL_LABELS[i]).replace("`", "")))
    d = st.columns([3, 1, 2])
    tiles = ui.url(d[0].multiselect, _("Tile sizes"), [8, 16, 32, 64, 128, 256, 512, 1024], default=list(defaults.tiles),
                   key=f"tb_tiles_{device}")
    per_row = ui.url(d[1].slider, _("seconds per row"), 0.05, 2.0, 0.2, step=0.05, key="tb_time")
    d[2].caption(ui.caps_caption(lim))
    if device == "cpu":
        st.info(_("No GPU here: the **Triton kernel runs in Triton's interpreter** (numpy executes each "
                  "program) — its result is checked against float64, **no speed is shown for it** "
                  "(interpreter: correctness only). Being slow, it runs up to {steps} "
                  "program steps (blocks × k-steps), e.g. 256³ with tiles ≥ 32.").format(steps=bt.MAX_INTERPRETER_STEPS))
    cfg = None
    if impls:
        with ui.guard(_("the tiling benchmark")):
            cfg = bt.TilingConfig(device=device, size=int(st.session_state.tb_size), dtype=st.session_state.tb_dtype,
                                  tiles=tuple(sorted(tiles)), impls=tuple(i for i in bt.IMPLS if i in impls),
                                  min_run_time=float(per_row))
rows = ui.bench_section(bt.SPEC, cfg, lim, key="tb_results", button=_("Run the tiling benchmark"), button_key="tb_run",
                        at=box, what=_("the tiling benchmark"), done=ui.rows_done)
if rows:
    results = list(rows)
    r0 = results[0]
    st.markdown(_("**{m}×{n}×{k}, {dtype}, on {dev}.**").format(
        m=r0.shape["m"], n=r0.shape["n"], k=r0.shape["k"], dtype=r0.dtype, dev=ui.md(r0.device_name)))
    st.success(view.lesson_text(bt.lesson(results), impl_name, _))  # the rows named as in the table
    ui.noise_note([replace(r, name=impl_name(r.name)) for r in results])  # rows named as the reader reads them
    # notes are messages: shown in the reader's language before pandas keeps them as plain text
    table = pd.DataFrame([{**r, "note": charts_bench.note_text(r["note"], _)} for r in bt.rows(results)])
    table["median ms"] = table["median_s"] * 1e3
    table["traffic GiB"] = table["traffic_GB"] * 1e9 / 2**30  # the project's byte unit
    table["impl"] = table["impl"].map(impl_name)
    ui.table(  # the notes numbered in the table, whole under it: a row that did not run says why
        table[["impl", "tile", "median ms", "tflops", "rel_error", "traffic GiB", "a_reads", "b_reads", "calls",
               "note"]], notes="note", named_by=("impl", "tile"),
        formats={"a_reads": "count", "b_reads": "count", "calls": "count", "tile": "count"},
        column_config={"tflops": st.column_config.NumberColumn("TFLOP/s", format="%.4g"),
                       "rel_error": st.column_config.NumberColumn(_("rel. error"), format="%.2e"),
                       "traffic GiB": st.column_config.NumberColumn(_("implied traffic GiB"), format="%.4g"),
                       "impl": _("implementation"), "tile": _("tile"), "median ms": _("median ms"),
                       "a_reads": _("A reads"), "b_reads": _("B reads"), "calls": _("calls"), "note": _("note")})
    st.caption(_("Error: max |D − D₆₄| / max |D₆₄| against float64. Implied traffic: the model above for the "
                 "row's tile (`python_tiled` also re-reads and re-writes D once per k-tile); the library row "
                 "shows the minimum. `calls`: library calls (or block products) per product."))
    chart = tiling_charts.tiling_chart([replace(r, name=impl_name(r.name)) for r in results], gettext=_)
    if chart is not None:
        st.altair_chart(chart, width="stretch")
    st.markdown(_(
        "**The lesson.** Python-level tiling pays one interpreter round-trip and one library launch per "
        "sub-block and re-reads D from memory at every k-step, so it only approaches the library when "
        "the tiles are so large that there are few of them — i.e. when it stops tiling. What tiling "
        "*inside a kernel* gains is data reuse without those costs: the Triton kernel keeps a tile of D "
        "in registers, streams A and B tiles through shared memory and writes D once; on a GPU it runs "
        "within reach of cuBLAS (the report's target: ≥ 85% at 4096³ fp16)."))
    ui.downloads("tiling", to_csv(results), to_json(results))
else:
    st.info(_("Choose the sizes and implementations, then **Run the tiling benchmark**. While it runs, its "
              "status box says the step it is on and the time left."))

# ----------------------------------------------------------------------------- 4. tile and wave quantization
st.subheader(_("4 · Tile and wave quantization: N stepping past a tile multiple"))
st.markdown(_(
    "With 128×256 tiles, N = 8192 fills 32 tile columns exactly; N = 8193 needs a 33rd column that is "
    "almost empty but costs a full tile on every row — and the extra tiles may spill into one more "
    "*wave* over the SMs. The prediction is `gemmlib.core.flops.wave_quantization` (the FLOPs page's "
    "staircase); on a GPU the button measures `torch.matmul` (cuBLAS) at the same shapes."))
wc = st.columns(7)
ui.url(wc[0].number_input, _("SMs"), 1, 1024, CATALOGUE["H200 SXM"].sms, key="tw_sms")
tile_m = ui.url(wc[1].selectbox, _("tile M"), [64, 128, 256], index=1, key="tw_tm")
tile_n = ui.url(wc[2].selectbox, _("tile N"), [64, 128, 256], index=2, key="tw_tn")
ui.url(wc[3].number_input, "M = K", 1, lim.max_dim, min(8192, lim.max_dim), key="tw_mk")
ui.url(wc[4].number_input, _("N from"), 1, lim.max_dim, min(8192, lim.max_dim), key="tw_n0")
# 8192 … 8704: 32 to 34 tile columns, so the sweep crosses 16 × 132 tiles and a 17th wave starts (the cliff)
ui.url(wc[5].number_input, _("N to"), 1, lim.max_dim, min(8704, lim.max_dim), key="tw_n1")
ui.url(wc[6].number_input, _("N step"), 1, 4096, 16, key="tw_step",
       help=_("multiples of 8 keep rows aligned, so only tiles and waves change"))
ns: list[int] = []
with ui.guard(_("the wave prediction")):
    n0, n1, step = int(st.session_state.tw_n0), int(st.session_state.tw_n1), int(st.session_state.tw_step)
    if n1 < n0:
        raise InputError(N_("N to ({n1}) must not be below N from ({n0})"), n1=n1, n0=n0)
    sweep = bt.wave_sweep_ns(n0, n1, step)
    if len(sweep) > bt.MAX_WAVE_POINTS:
        raise InputError(N_("{n} values of N: at most {most}; use a larger step"), n=len(sweep), most=bt.MAX_WAVE_POINTS)
    ns = sweep
    mk = int(st.session_state.tw_mk)
    pred = bt.predicted_wave_rows(mk, mk, ns, (int(tile_m), int(tile_n)), int(st.session_state.tw_sms))
    measured = None
    if "tw_results" in st.session_state:
        measured = list(st.session_state.tw_results)
        measured = [r for r in measured if r.shape.get("n") in set(ns) and r.shape.get("m") == mk] or None
    st.altair_chart(tiling_charts.wave_chart(measured, pred, gettext=_), width="stretch")
    sms = st.session_state.tw_sms
    st.caption(view.wave_caption(pred, (int(tile_m), int(tile_n)), sms, gettext=_))
    cliff = view.cliff_text(bt.wave_cliff(pred), sms, gettext=_)
    if cliff:
        st.markdown(cliff)
    else:
        st.caption(_("No wave starts inside this range, so the prediction only climbs as the edge tiles fill; "
                     "widen the range to see a cliff."))
if cuda_ok:
    wave_cfg, before = None, st.session_state.get("tw_results")
    with ui.guard(_("the wave sweep")):
        wave_cfg = bt.WaveConfig("cuda", m=mk, k=mk, ns=tuple(ns), dtype="bf16", tile=(int(tile_m), int(tile_n))) \
            if ns else None
    if ui.bench_section(bt.WAVES_SPEC, wave_cfg, lim, key="tw_results", button_key="tw_run", primary=False,
                        button=_("Measure on the GPU (bf16, cuBLAS and the Triton kernel with {tm}×{tn} tiles)").format(
                            tm=tile_m, tn=tile_n), what=_("the wave sweep"), notice=False) is not before:
        st.rerun()  # the chart above shows the new rows
else:
    st.caption(_("Measuring this needs a GPU (SMs running waves of tiles); here only the prediction is shown."))
