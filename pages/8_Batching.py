"""Batching: one request at a time, stacked into one GEMM, or bmm over distinct weights — measured.

The intensity model and the measurements are ``gemmlib.measure.batching`` (through the
harness: single-flight lock, caps, time limit); this page reads widgets and draws.
"""


from dataclasses import replace

import pandas as pd
import streamlit as st

import ui
from gemmlib.charts import batching as batching_charts
from gemmlib.charts import bench as charts_bench
from gemmlib.core import format as fmt
from gemmlib.core.hardware import CATALOGUE, DEFAULT_GPU
from gemmlib.core.i18n import N_
from gemmlib.core.results import BenchResult, to_csv, to_json
from gemmlib.measure import batching as bb
from ui import _

ui.page(
    _("Batching"),
    "📦",
    _(r"""
Serving $B$ requests through one layer $W$ ($K\times N$) can be done three ways:
**loop** — $B$ separate products $x_i W$ (each launch reads all of $W$ again);
**stacked** — one $[B\cdot M, K]\,W$ (W is read once for the whole batch);
**bmm** — $B$ *different* weights in one `torch.bmm` launch (every weight still read once per request).
All three do the same $2\,B M N K$ FLOPs. What differs is the bytes: at decode ($M = 1$) a
request does 2 FLOPs per weight element it reads, far below any GPU's ridge point, so the
weight read *is* the time — and stacking shares it across the batch.
"""),
)


# option labels: a gettext bound to this run's language (Streamlit and AppTest call format_func later)
shown_as = ui.gettext_for(ui.lang())
lim = ui.bench_limits()

cuda_ok, cuda_why = ui.cuda_available()
devices = ["cuda", "cpu"] if cuda_ok else ["cpu"]
SHAPES = (N_("Decode (M = 1)"), N_("Prefill"), N_("Custom"))  # stable ids (URLs, keys); labels translated
MODE_LABELS = {"loop": N_("loop"), "stacked": N_("stacked"), "bmm": N_("bmm")}


def mode_label(mode: str) -> str:
    return shown_as(MODE_LABELS.get(mode, mode))


def shown(results: list[BenchResult]) -> list[BenchResult]:
    """The results with their modes named in the reader's language (for the charts)."""
    return [replace(r, name=mode_label(r.name)) for r in results]

BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 256]

with st.container(border=True):
    c = st.columns([1, 2, 1, 1, 1, 1])
    device = ui.url(c[0].radio, _("Device"), devices, key="ba_device",
                    help=None if cuda_ok else _("No GPU here: {why}").format(why=ui.tr(cuda_why)))
    dec = bb.gpu_decode_defaults() if device == "cuda" else bb.cpu_decode_defaults()
    pre = bb.gpu_prefill_defaults() if device == "cuda" else bb.cpu_prefill_defaults()
    shape = ui.url(c[1].radio, _("Shape"), SHAPES, key="ba_shape", horizontal=True, format_func=shown_as)
    if shape == "Decode (M = 1)":
        m, k, n = 1, dec.k, dec.n
        default_batches = list(dec.batches)
    elif shape == "Prefill":
        m, k, n = pre.m, pre.k, pre.n
        default_batches = list(pre.batches)
    else:
        m = ui.url(c[2].number_input, _("M per request"), 1, lim.max_dim, 1, key="ba_m")
        k = ui.url(c[3].number_input, "K", 1, lim.max_dim, min(dec.k, lim.max_dim), key="ba_k")
        n = ui.url(c[4].number_input, "N", 1, lim.max_dim, min(dec.n, lim.max_dim), key="ba_n")
        default_batches = list(dec.batches)
    if shape != "Custom":
        c[2].metric("M", m)
        c[3].metric("K", k)
        c[4].metric("N", n)
    dtype = ui.url(c[5].selectbox, _("dtype"), bb.BATCHING_DTYPES, index=list(bb.BATCHING_DTYPES).index(dec.dtype),
                   key="ba_dtype")
    d = st.columns([3, 2, 1.3, 1.7])  # "CUDA graphs" whole at 1280 px
    batches = ui.url(d[0].multiselect, _("Batch sizes"), BATCHES, default=[b for b in default_batches if b in BATCHES],
                     key=f"ba_batches_{device}_{shape.split()[0].lower()}")  # a key a link can hold
    modes = ui.url(d[1].multiselect, _("Modes"), list(bb.MODES), default=list(bb.MODES), key="ba_modes",
                   format_func=mode_label)
    per_row = ui.url(d[2].slider, _("seconds per row"), 0.05, 2.0, 0.1, step=0.05, key="ba_time")
    graph = ui.url(d[3].checkbox, _("CUDA graphs"), False, key="ba_graph", disabled=device != "cuda",
                   help=_("replay a captured graph: hides launch overhead (GPU only)"))
    st.caption(ui.caps_caption(lim, ("dims_bm", "operands", "time"),
                               after=_("bmm allocates B weights: B × K × N elements.")))

# ----------------------------------------------------------------------------- the model
st.subheader(_("The model: intensity grows with the batch only when the weight is shared"))
hw_name = ui.url(st.selectbox, _("Compare with the ridge point of"), list(CATALOGUE),
                 index=list(CATALOGUE).index("H200 SXM" if "H200 SXM" in CATALOGUE else DEFAULT_GPU), key="ba_gpu")
hw = CATALOGUE[hw_name]
with ui.guard(_("the intensity model")):
    ridge = hw.ridge_point(dtype)
    model = bb.model_rows(int(m), int(k), int(n), dtype, sorted(batches) or [1], hw)
    model = [{**r, "mode": mode_label(r["mode"])} for r in model]
    st.altair_chart(batching_charts.model_chart(model, ridge, gettext=_), width="stretch")
    if ridge:
        rb = bb.ridge_batch(int(m), int(k), int(n), dtype, ridge)
        where = (_("one request is already above it (compute-bound on its own): stacking still shares the weight "
                   "read, but the FLOPs set the time") if rb == 1 else _("stacking reaches it at **B ≈ {b}**").format(b=f"{rb:,}") if rb
                 else _("stacking never reaches it at this shape"))
        st.caption(_("{gpu}, {dtype}: ridge point {ridge} FLOP/byte; {where}. Below the ridge, time ≈ bytes / "
                     "bandwidth, so a bigger batch costs almost nothing extra; above it, time grows with FLOPs and "
                     "batching stops paying. loop and bmm stay at the single-request intensity.").format(
            gpu=_(hw.name), dtype=dtype, ridge=f"{ridge:,.0f}", where=where))

# ----------------------------------------------------------------------------- measure


st.subheader(_("Measured on this machine"))
cfg = None
if batches and modes:
    with ui.guard(_("the time estimate")):
        cfg = bb.BatchingConfig(device=device, m=int(m), k=int(k), n=int(n), dtype=dtype, batches=tuple(sorted(batches)),
                                modes=tuple(x for x in bb.MODES if x in modes),
                                cuda_graph=bool(graph and device == "cuda"), min_run_time=float(per_row))
rows = ui.bench_section(bb.SPEC, cfg, lim, key="ba_results", button=_("Run the batch sweep"), button_key="ba_run",
                        estimate=True, what=_("the batching benchmark"), done=ui.rows_done)
if rows:
    results = list(rows)
    r0 = results[0]
    st.markdown(_("**M = {m}, K = {k}, N = {n}, {dtype}, on {dev}.**").format(
        m=r0.shape["m"], k=r0.shape["k"], n=r0.shape["n"], dtype=r0.dtype, dev=ui.md(r0.device_name)))
    st.success(bb.lesson(results).render(_))
    ui.noise_note(shown(results))
    # notes are messages: shown in the reader's language before pandas keeps them as plain text
    table = pd.DataFrame([{**r, "note": charts_bench.note_text(r["note"], _)} for r in bb.rows(results)])
    table["median ms"] = table["median_s"] * 1e3
    table["ms per request"] = table["per_request_s"] * 1e3
    table["mode"] = table["mode"].map(mode_label)
    ui.table(table[["mode", "batch", "median ms", "ms per request", "tflops", "gbps", "intensity",
                    "rel_error", "note"]],
             column_config={"tflops": st.column_config.NumberColumn("TFLOP/s", format="%.4g"),
                            "gbps": st.column_config.NumberColumn(_("achieved GB/s"), format="%.4g"),
                            "intensity": st.column_config.NumberColumn(_("FLOP/byte"), format="%.3g"),
                            "rel_error": st.column_config.NumberColumn(_("rel. error"), format="%.2e"),
                            **{c: _(c) for c in (N_("mode"), N_("batch"), N_("median ms"), N_("ms per request"), N_("note"))}})
    st.caption(_("Bytes per mode: what its kernels move when each reads its operands once (loop and bmm: "
                 "B weights' worth; stacked: one). A loop whose weight stays in cache between launches can "
                 "show more GB/s than the memory delivers — a cache effect, shown as measured."))
    tabs = st.tabs(["TFLOP/s", _("achieved GB/s"), _("time per request")])
    for tab, metric in zip(tabs, ("tflops", "gbps", "per_request_s"), strict=True):
        chart = batching_charts.batching_chart(shown(results), metric, gettext=_)
        if chart is not None:
            tab.altair_chart(chart, width="stretch")
    ui.downloads("batching", to_csv(results), to_json(results))
else:
    st.info(_("Pick a shape and batch sizes, then **Run the batch sweep**; the estimate under the button says how "
              "long it will take here."))

# ----------------------------------------------------------------------------- the article's example
st.subheader(_("The article's example: 20 × (1024×4096 @ 4096×4096)"))
art = bb.article_shape(device)
scaled = art != bb.ARTICLE
st.markdown(
    _("The article times 20 requests one by one against one batched matmul and reports a several-fold "
      "speed-up. At M = 1024 rows per request each call is already compute-bound, so stacking the same "
      "FLOPs should gain little; the same batch at decode (M = 1) is where batching pays.")
    + (" " + _("On a CPU the full example takes minutes, so this runs it scaled down: 20 × ({m}×{k} @ {k}×{n}).")
       .format(m=art["m"], k=art["k"], n=art["n"]) if scaled else ""))
out = ui.bench_section(bb.ARTICLE_SPEC, lambda: bb.ArticleConfig(device, dtype, min_run_time=float(per_row), **art), lim,
                       key="ba_article_out", button=_("Run the article's example"), button_key="ba_article",
                       primary=False, notice=False, what=_("the article's example"), keep=lambda ex: ex.results,
                       store=lambda ex: {"verdict": ex.verdict, "results": ex.results, "device": device})
if out:
    ex_results: list[BenchResult] = list(out["results"])
    # the verdict is read again here from the rows (prefill: M > 1, decode: M = 1), in the reader's language
    pre = [r for r in ex_results if r.shape.get("m") != 1]
    dec = [r for r in ex_results if r.shape.get("m") == 1]
    verdict = bb.article_verdict(pre, dec, out.get("device", device)) if pre and dec else None
    # a run where stacking came out slower is no success: a warning box, with the verdict's advice to rerun
    (st.warning if verdict and verdict["slower"] else st.success)(
        verdict["verdict"].render(_) if verdict else ui.tr(out["verdict"]))
    ex_rows = pd.DataFrame(bb.rows(ex_results))
    ex_rows["median"] = ex_rows.pop("median_s").map(fmt.duration)
    ex_rows["mode"] = ex_rows["mode"].map(mode_label)
    ui.table(ex_rows[["mode", "batch", "m", "k", "n", "median", "tflops", "intensity"]],
             column_config={"tflops": st.column_config.NumberColumn("TFLOP/s", format="%.4g"),  # as the sweep's table:
                            "intensity": st.column_config.NumberColumn(_("FLOP/byte"), format="%.3g"),  # with its unit
                            **{c: _(c) for c in (N_("mode"), N_("batch"), N_("median"))}})
