"""Profiler: where does a transformer block's time go? torch.profiler + NVML, against the article's targets.

The block, the profiling, the split into GEMM / not GEMM and the prediction are
``gemmlib.measure.profiler``; the GPU sampling is ``gemmlib.measure.monitor``; the charts are
``gemmlib.charts.profile``. This page reads widgets, runs them through the
harness's one-at-a-time lock, and draws.
"""

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pandas as pd
import streamlit as st

import ui
from gemmlib.charts import profile as charts_profile
from gemmlib.core import format as fmt
from gemmlib.core.ceilings import cpu_row
from gemmlib.core.errors import InputError
from gemmlib.core.flops import DEFAULT_EFFICIENCY
from gemmlib.core.hardware import CATALOGUE, DEFAULT_GPU
from gemmlib.core.i18n import N_
from gemmlib.measure import harness, safety
from gemmlib.measure import profiler as pf
from gemmlib.measure.monitor import BANDWIDTH_TARGET, UTIL_TARGET, nvml_status
from gemmlib.views import profiler as view
from ui import _, ngettext

ui.page(
    _("Profiler"),
    "🔬",
    _("""The article ends with a rule: **profile first**. In a healthy transformer, GEMMs should take
**≥ 80%** of the time; the GPU should be busy (**SM utilization ≥ 75%**) and its memory well used
(**bandwidth ≥ 60%**). Here a Llama-style block — grouped-query attention, gated MLP, random weights —
runs under `torch.profiler`. Every op is charged its *self* time (a `linear` that calls a `matmul` that
calls an `mm` is counted once), labelled GEMM or not, and the share is set beside what the estimator
predicts for the same sizes."""),
)


@st.cache_resource
def _nvml() -> tuple[bool, str]:
    return nvml_status()


lim = ui.bench_limits()

cuda_ok, cuda_why = ui.cuda_available()
devices = ["cuda", "cpu"] if cuda_ok else ["cpu"]
PRESETS = pf.presets()
SOURCES = (N_("Preset, scaled down"), N_("Sliders"))  # option ids (in links); shown through _


SCALES = [1, 2, 4, 8, 16, 32, 64]
SEQS = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
HIDDENS = [64, 128, 256, 384, 512, 768, 1024, 2048, 3072, 4096, 5120, 8192]
HEADS = [1, 2, 4, 8, 12, 16, 32, 64]

DEFAULT_PRESET = "llama-3-8b" if "llama-3-8b" in PRESETS else next(iter(PRESETS))

# ----------------------------------------------------------------------------- inputs
with st.container(border=True):
    c = st.columns([1, 2, 2, 2])
    device = ui.url(c[0].radio, _("Device"), devices, key="pf_device",
                    help=None if cuda_ok else _("No GPU here: {why}. The CPU shows the method; the shares differ.")
                    .format(why=_(cuda_why)))
    gpu_run = device == "cuda"
    source = ui.url(c[1].radio, _("Sizes from"), SOURCES, key="pf_source", horizontal=True, format_func=ui.option_labels())
    if source == SOURCES[0]:
        preset = ui.url(c[2].selectbox, _("Model (the estimator's presets)"), list(PRESETS),
                        index=list(PRESETS).index(DEFAULT_PRESET), key="pf_preset",
                        help=_("the estimator's dense presets; dimensions from each config.json"))
        scale = ui.url(c[3].select_slider, _("Scale down by"), SCALES, value=1 if gpu_run else 16, key="pf_scale",
                       help=_("hidden, head size and MLP width ÷ this; heads and K/V heads are kept"))
        p = PRESETS[preset]
        st.caption(_("{preset}: hidden {hidden}, {heads} heads / {kv} K/V heads, MLP {ffn}, {layers} layers "
                     "([config.json]({url})).").format(preset=preset, hidden=p["hidden"], heads=p["heads"],
                                                       kv=p["kv_heads"], ffn=p["intermediate"], layers=p["layers"],
                                                       url=p["source"]))
    else:
        s = st.columns(4)
        ui.url(s[0].select_slider, _("hidden"), HIDDENS, value=256, key="pf_hidden")
        ui.url(s[1].select_slider, _("heads"), HEADS, value=8, key="pf_heads")
        ui.url(s[2].select_slider, _("K/V heads (GQA)"), HEADS, value=2, key="pf_kv",
               help=_("must divide heads; = heads: no GQA"))
        ui.url(s[3].number_input, _("MLP width (0 = 8/3·hidden)"), 0, lim.max_dim, 0, step=64, key="pf_ffn")
    d = st.columns(6)
    ui.url(d[0].select_slider, _("sequence length"), SEQS, value=1024 if gpu_run else 64, key="pf_seq")
    ui.url(d[1].number_input, _("batch"), 1, 64, 1, key="pf_batch")
    ui.url(d[2].slider, _("layers"), 1, 16, 2 if gpu_run else 1, key="pf_layers",
           help=_("every layer is the same; 2–4 smooth the numbers"))
    ui.url(d[3].radio, _("attention"), pf.ATTENTION_IMPLS, key="pf_attn", horizontal=True,
           format_func=ui.option_labels(view.ATTENTION_LABELS),
           help=_("eager: QKᵀ and PV as two visible matmuls; sdpa: one fused kernel (GEMM work)"))
    ui.url(d[4].selectbox, _("dtype"), pf.PROFILE_DTYPES, index=list(pf.PROFILE_DTYPES).index("bf16" if gpu_run else "fp32"),
           key="pf_dtype")
    ui.url(d[5].slider, _("profiled passes"), 1, 20, 3, key="pf_steps",
           help=_("each op's time is its median over the passes"))
    st.caption(ui.caps_caption(lim, ("dims", "memory")))

cfg = None
with ui.guard(_("the block's sizes")):
    ss = st.session_state
    common = dict(seq_len=int(ss.pf_seq), batch=int(ss.pf_batch), layers=int(ss.pf_layers),
                  attention=ss.pf_attn, dtype=ss.pf_dtype)
    if source == SOURCES[0]:
        cfg = pf.preset_config(ss.pf_preset, int(ss.pf_scale), **common)
    else:
        cfg = pf.BlockConfig.llama(hidden=int(ss.pf_hidden), heads=int(ss.pf_heads), kv_heads=int(ss.pf_kv),
                                   intermediate=int(ss.pf_ffn), **common)
    safety.check_dims(lim, hidden=cfg.hidden, intermediate=cfg.intermediate, seq_len=cfg.seq_len,
                       tokens=cfg.tokens)
    st.markdown(view.block_text(cfg, pf.memory_needed(cfg), gettext=_, ngettext=ngettext))

# ----------------------------------------------------------------------------- prediction
st.subheader(_("Predicted before running"))
try:  # the catalogue row of this GPU; one that is not in the catalogue gets a plain note, not another's row
    default_hw = pf.hardware_for(device, harness.device_name(device) if gpu_run else "").name
except InputError as e:
    default_hw = DEFAULT_GPU
    st.caption(_("{why} — pick the closest row for the prediction (the default shown is {gpu}).")
               .format(why=ui.tr(e), gpu=DEFAULT_GPU))
if default_hw not in CATALOGUE:  # measured ceilings: the prediction picks from the catalogue
    default_hw = DEFAULT_GPU
h = st.columns([2, 2, 3])
hw_labels = {n: view.hardware_name(n, _) for n in CATALOGUE}  # "CPU (edit me)" in the reader's language
hw_name = ui.url(h[0].selectbox, _("Hardware for the prediction"), list(CATALOGUE),
                 index=list(CATALOGUE).index(default_hw), key="pf_hw", format_func=hw_labels.get)
eff = ui.url(h[1].slider, _("efficiency"), 0.05, 1.0, DEFAULT_EFFICIENCY, step=0.05, key="pf_eff",
             help=_("share of the datasheet peak and bandwidth reached, for GEMMs and the rest alike"))
pred = None
if cfg is not None:
    with ui.guard(_("the prediction")):
        hw_pred, cpu_note = cpu_row(gettext=_) if CATALOGUE[hw_name].editable else (CATALOGUE[hw_name], "")
        pred = pf.predict(cfg, hw_pred, float(eff))  # a CPU: its measured ceilings, as FLOPs and Roofline use
        ui.metrics(st.columns(3), view.prediction_metrics(pred, pf.GEMM_TARGET, gettext=_))
        st.caption(_("{source}. GEMMs at max(FLOPs / peak, bytes / bandwidth); norms, rotary embedding, softmax, SiLU "
                     "and residual adds as memory-bound traffic. Launch overheads are not modelled, so small blocks "
                     "measure below this. FLOPs share says why “GEMM is 90%+ of LLM compute”; time share is what "
                     "the profiler can confirm.").format(source=ui.tr(pred.source)) + (_(" ({note})").format(note=cpu_note) if cpu_note else ""))

# ----------------------------------------------------------------------------- run
MAX_TRACE_BYTES = 64 * 1024**2  # a trace kept for download in the session; larger ones are dropped

st.subheader(_("Measured"))


@contextmanager
def trace_folder(config: pf.ProfileConfig) -> Iterator[pf.ProfileConfig]:
    """The run writes its Chrome trace in a folder of its own; the trace is kept in the session, the folder removed."""
    with tempfile.TemporaryDirectory(prefix="gemm_profile_") as tmp:
        trace = Path(tmp) / "profile_trace.json"
        yield replace(config, trace_path=str(trace))
        size = trace.stat().st_size if trace.exists() else 0
        st.session_state.pf_trace_bytes = trace.read_bytes() if 0 < size <= MAX_TRACE_BYTES else None


res = ui.bench_section(
    pf.SPEC, lambda: cfg and pf.ProfileConfig(cfg, device, steps=int(st.session_state.pf_steps), monitor=True,
                                      hardware=hw_name, efficiency=float(eff)), lim,
    key="pf_result", button=_("Profile the block"), button_key="pf_run", what=_("the profiler run"),
    around=trace_folder, store=lambda r: replace(r, trace_path=None), keep=pf.op_results)
if res is not None:
    st.markdown(view.run_heading(res, ngettext, gettext=_, md=ui.md))
    figures = view.run_metrics(res, pf.GEMM_TARGET, gettext=_)  # two a row: "3.95 GFLOP/s" whole at 1280 px
    ui.metrics(st.columns(2), figures[:2])
    ui.metrics(st.columns(2), figures[2:])
    good, words = view.verdict(res, pf.GEMM_TARGET, gettext=_)
    (st.success if good else st.warning)(words)
    st.altair_chart(charts_profile.share_chart(res, gettext=_), width="stretch")
    agree = abs(res.gemm_flops - res.predicted_gemm_flops) < 1
    st.caption((_("GEMM FLOPs per pass: profiler {profiler}; gemmlib's count {count} — they agree.") if agree
                else _("GEMM FLOPs per pass: profiler {profiler}; gemmlib's count {count}.")).format(
        profiler=fmt.count(round(res.gemm_flops)), count=fmt.count(res.predicted_gemm_flops)))

    st.markdown("#### " + _("Top ops"))
    t = st.columns([2, 1, 3])  # "merge shapes" whole at 1280 px, in English too
    by_name = ui.url(t[0].toggle, _("merge shapes"), False, key="pf_by_name", help=_("one row per op name, all input shapes together"))
    top_n = ui.url(t[1].number_input, _("rows"), 5, 100, 15, key="pf_top")
    ops = res.grouped() if by_name else res.top_ops(len(res.ops))
    ui.table(view.top_ops_rows(ops[: int(top_n)], pf.UNATTRIBUTED, gettext=_),
             {"flops": "count"},  # exact: every digit
             column_config={"name": _("op"), "shapes": _("input shapes"), "time µs": _("time µs"),
                            "flops": "FLOPs",
                            "share": st.column_config.ProgressColumn(_("share"), format="percent", min_value=0,
                                                                     max_value=1),
                            "is_gemm": st.column_config.CheckboxColumn("GEMM"),
                            "calls": st.column_config.NumberColumn(_("calls / pass"), format="%g"),
                            "tflops": st.column_config.NumberColumn("TFLOP/s", format="%.4g")})
    st.altair_chart(charts_profile.top_ops_chart(res, int(top_n), by_name=by_name, gettext=_), width="stretch")
    if res.prediction is not None:
        with st.expander(_("The prediction, op by op (one layer)")):
            pred_rows = pd.DataFrame(view.prediction_rows(res.prediction.rows, gettext=_))
            ui.table(pred_rows, {"flops": "count"},
                     column_config={k: _(v) for k, v in view.PRED_LABELS.items() if k in pred_rows})
    for n in res.notes:
        st.caption(ui.tr(n))

    st.markdown("#### " + _("GPU monitor during the profile"))
    mon = res.monitor
    charts = charts_profile.monitor_charts(mon, gettext=_) if mon is not None else {}
    if charts:
        s = mon.summary()
        st.caption(_("{device}: {reason}; {n} samples. NVML's “utilization” is the share of time a kernel was running "
                     "(not SM occupancy); “memory” the share of time memory was being read or written.").format(
            device=mon.device_name, reason=_(mon.reason), n=s["samples"]))
        for ch in charts.values():
            st.altair_chart(ch, width="stretch")
    else:
        st.info(ui.tr(mon.reason, code=("error",)) if mon is not None else _("No monitor result."))

    data = st.session_state.get("pf_trace_bytes")
    if data:
        st.download_button(_("Download the Chrome trace ({size})").format(size=fmt.nbytes(len(data))), data,
                           "profile_trace.json", "application/json", on_click="ignore", key="pf_trace")
        st.caption(_("Open it at https://ui.perfetto.dev (or chrome://tracing): every op and, on a GPU, every kernel "
                     "on its own timeline."))
else:
    st.info(_("Choose the sizes, then **Profile the block**. The CPU defaults take a few seconds."))

# ----------------------------------------------------------------------------- monitored benchmark
st.subheader(_("Monitor a benchmark"))
ok_nvml, why_nvml = _nvml()
st.markdown(_("Time the same block's forward pass with the measuring harness (warm-up, synchronize, repeat, median "
              "and p20/p80) while NVML samples the GPU, against the targets SM utilization ≥ {util:.0%} and memory "
              "bandwidth ≥ {bandwidth:.0%}.").format(util=UTIL_TARGET, bandwidth=BANDWIDTH_TARGET))
if not (ok_nvml and gpu_run):  # nothing to monitor: the button says so by being off, the reason beside it
    st.info(ui.tr(why_nvml, code=("error",)) if not ok_nvml else
            _("The block runs on the CPU here: NVML has no GPU of it to sample. Pick a CUDA device to monitor it."))
out = ui.bench_section(pf.BLOCK_BENCH_SPEC, lambda: cfg and pf.BlockBenchConfig(cfg, device, 1.0 if gpu_run else 0.3), lim,
                       key="pf_bench_out", button=_("Run the monitored benchmark"), button_key="pf_bench",
                       primary=False, notice=False, what=_("the monitored benchmark"), disabled=not (ok_nvml and gpu_run),
                       store=lambda o: (o.result, o.monitor), keep=lambda o: [o.result])
if out:
    r, mres = out
    b = st.columns(4)
    b[0].metric(_("median per pass"), fmt.duration(r.median_s))
    b[1].metric("p20 – p80", f"{fmt.duration(r.p20_s)} – {fmt.duration(r.p80_s)}")
    b[2].metric(_("GEMM TFLOP/s"), fmt.number(r.tflops or None, 3))
    b[3].metric(_("weights+I/O GB/s"), fmt.number(r.gbps or None, 3))
    charts = charts_profile.monitor_charts(mres, gettext=_)
    if charts:
        for ch in charts.values():
            st.altair_chart(ch, width="stretch")
    else:
        st.info(ui.tr(mres.reason, code=("error",)) if gpu_run else
                _("This benchmark ran on the CPU: GPU monitoring has nothing to sample."))
