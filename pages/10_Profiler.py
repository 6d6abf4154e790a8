"""Profiler: where does a transformer block's time go? torch.profiler + NVML, against the article's targets.

The block, the profiling, the split into GEMM / not GEMM and the prediction are
``gemmlib.measure.profiler``; the GPU sampling is ``gemmlib.measure.monitor``; the charts are
``gemmlib.charts.profile``. This page reads widgets, runs them through the
harness's one-at-a-time lock, and draws.
"""

import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

import ui
from gemmlib.charts import profile as charts_profile
from gemmlib.core.hardware import CATALOGUE
from gemmlib.core.results import record
from gemmlib.measure import harness, safety
from gemmlib.measure import profiler as pf
from gemmlib.measure.monitor import BANDWIDTH_TARGET, UTIL_TARGET, GpuMonitor, nvml_status

ui.page(
    "Profiler",
    "🔬",
    """
The article ends with a rule: **profile first**. In a healthy transformer, GEMMs should take
**≥ 80 %** of the time; the GPU should be busy (**SM utilization ≥ 75 %**) and its memory well used
(**bandwidth ≥ 60 %**). Here a Llama-style block — grouped-query attention, gated MLP, random weights —
runs under `torch.profiler`. Every op is charged its *self* time (a `linear` that calls a `matmul` that
calls an `mm` is counted once), labelled GEMM or not, and the share is set beside what the estimator
predicts for the same sizes.
""",
)


@st.cache_resource
def _nvml() -> tuple[bool, str]:
    return nvml_status()


lim = ui.bench_limits()

cuda_ok, cuda_why = ui.cuda_available()
devices = ["cuda", "cpu"] if cuda_ok else ["cpu"]
PRESETS = pf.presets()
SOURCES = ("Preset, scaled down", "Sliders")
SCALES = [1, 2, 4, 8, 16, 32, 64]
SEQS = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
HIDDENS = [64, 128, 256, 384, 512, 768, 1024, 2048, 3072, 4096, 5120, 8192]
HEADS = [1, 2, 4, 8, 12, 16, 32, 64]

ui.bound("pr_device", devices[0], str, lambda v: v in devices)
device = st.session_state.pr_device
gpu_run = device == "cuda"
ui.bound("pr_source", SOURCES[0], str, lambda v: v in SOURCES)
ui.bound("pr_preset", "llama-3-8b" if "llama-3-8b" in PRESETS else next(iter(PRESETS)), str,
         lambda v: v in PRESETS)
ui.bound("pr_scale", 1 if gpu_run else 16, int, lambda v: v in SCALES)
ui.bound("pr_hidden", 256, int, lambda v: v in HIDDENS)
ui.bound("pr_heads", 8, int, lambda v: v in HEADS)
ui.bound("pr_kv", 2, int, lambda v: v in HEADS)
ui.bound("pr_ffn", 0, int, lambda v: 0 <= v <= lim.max_dim)
ui.bound("pr_seq", 1024 if gpu_run else 64, int, lambda v: v in SEQS)
ui.bound("pr_batch", 1, int, lambda v: 1 <= v <= 64)
ui.bound("pr_layers", 2 if gpu_run else 1, int, lambda v: 1 <= v <= 16)
ui.bound("pr_attn", "eager", str, lambda v: v in pf.ATTENTION_IMPLS)
ui.bound("pr_dtype", "bf16" if gpu_run else "fp32", str, lambda v: v in pf.PROFILE_DTYPES)
ui.bound("pr_steps", 3, int, lambda v: 1 <= v <= 20)
ui.bound("pr_eff", 0.7, float, lambda v: 0.05 <= v <= 1.0)

# ----------------------------------------------------------------------------- inputs
with st.container(border=True):
    c = st.columns([1, 2, 2, 2])
    c[0].radio("Device", devices, key="pr_device",
               help=None if cuda_ok else f"No GPU here: {cuda_why}. The CPU shows the method; the shares differ.")
    source = c[1].radio("Sizes from", SOURCES, key="pr_source", horizontal=True)
    if source == SOURCES[0]:
        preset = c[2].selectbox("Model (the estimator's presets)", list(PRESETS), key="pr_preset",
                                help="dense models with a gated MLP; dimensions from each config.json")
        scale = c[3].select_slider("Scale down by", SCALES, key="pr_scale",
                                   help="hidden and MLP width ÷ this; heads and K/V heads are kept")
        p = PRESETS[preset]
        st.caption(f"{preset}: hidden {p['hidden']}, {p['heads']} heads / {p['kv_heads']} K/V heads, MLP "
                   f"{p['intermediate']}, {p['layers']} layers ([config.json]({p['source']})).")
    else:
        s = st.columns(4)
        s[0].select_slider("hidden", HIDDENS, key="pr_hidden")
        s[1].select_slider("heads", HEADS, key="pr_heads")
        s[2].select_slider("K/V heads (GQA)", HEADS, key="pr_kv", help="must divide heads; = heads: no GQA")
        s[3].number_input("MLP width (0 = 8/3·hidden)", 0, lim.max_dim, step=64, key="pr_ffn")
    d = st.columns(6)
    d[0].select_slider("sequence length", SEQS, key="pr_seq")
    d[1].number_input("batch", 1, 64, key="pr_batch")
    d[2].slider("layers", 1, 16, key="pr_layers", help="every layer is the same; 2–4 smooth the numbers")
    d[3].radio("attention", pf.ATTENTION_IMPLS, key="pr_attn", horizontal=True,
               help="eager: QKᵀ and PV as two visible matmuls; sdpa: one fused kernel (GEMM work)")
    d[4].selectbox("dtype", pf.PROFILE_DTYPES, key="pr_dtype")
    d[5].slider("profiled passes", 1, 20, key="pr_steps", help="each op's time is its median over the passes")
    st.caption(f"Caps here: dimensions ≤ {lim.max_dim:,}, memory ≤ {lim.max_bytes / 1024**3:.3g} GiB"
               + (" — **classroom mode**" if lim.classroom else "") + ".")
ui.push_query(["pr_device", "pr_source", "pr_preset", "pr_scale", "pr_hidden", "pr_heads", "pr_kv", "pr_ffn",
               "pr_seq", "pr_batch", "pr_layers", "pr_attn", "pr_dtype", "pr_steps"])

cfg = None
with ui.guard("the block's sizes"):
    ss = st.session_state
    common = dict(seq_len=int(ss.pr_seq), batch=int(ss.pr_batch), layers=int(ss.pr_layers),
                  attention=ss.pr_attn, dtype=ss.pr_dtype)
    if source == SOURCES[0]:
        cfg = pf.preset_config(ss.pr_preset, int(ss.pr_scale), **common)
    else:
        cfg = pf.BlockConfig.llama(hidden=int(ss.pr_hidden), heads=int(ss.pr_heads), kv_heads=int(ss.pr_kv),
                                   intermediate=int(ss.pr_ffn), **common)
    safety.check_dims(lim, hidden=cfg.hidden, intermediate=cfg.intermediate, seq_len=cfg.seq_len,
                       tokens=cfg.tokens)
    st.markdown(f"**Block:** hidden {cfg.hidden}, {cfg.heads} heads of {cfg.head_dim} ({cfg.kv_heads} K/V heads), "
                f"MLP {cfg.intermediate}, {cfg.batch}×{cfg.seq_len} tokens, {cfg.layers} layer(s), {cfg.dtype}, "
                f"{cfg.attention} attention — about {ui.fmt_si(pf.memory_needed(cfg), 'B')} at its peak.")

# ----------------------------------------------------------------------------- prediction
st.subheader("Predicted before running")
default_hw = pf.hardware_for(device, harness.device_name(device) if gpu_run else "").name
ui.bound("pr_hw", default_hw, str, lambda v: v in CATALOGUE)
h = st.columns([2, 2, 3])
hw_name = h[0].selectbox("Hardware for the prediction", list(CATALOGUE), key="pr_hw")
eff = h[1].slider("efficiency", 0.05, 1.0, step=0.05, key="pr_eff",
                  help="share of the datasheet peak and bandwidth reached, for GEMMs and the rest alike")
pred = None
if cfg is not None:
    with ui.guard("the prediction"):
        pred = pf.predict(cfg, CATALOGUE[hw_name], float(eff))
        m = st.columns(3)
        m[0].metric("GEMM share of FLOPs", f"{pred.flop_share:.1%}")
        m[1].metric("GEMM share of time (roofline)", f"{pred.time_share:.1%}",
                    delta=f"{pred.time_share - pf.GEMM_TARGET:+.1%} vs 80 % target")
        m[2].metric("GEMM FLOPs per pass", ui.fmt_si(pred.gemm_flops, "FLOP"))
        st.caption(f"{pred.source}. GEMMs at max(FLOPs / peak, bytes / bandwidth); norms, rotary embedding, "
                   "softmax, SiLU and residual adds as memory-bound traffic. Launch overheads are not modelled, "
                   "so small blocks measure below this. FLOPs share says why “GEMM is 90 %+ of LLM compute”; "
                   "time share is what the profiler can confirm.")

# ----------------------------------------------------------------------------- run
if "pr_dir" not in st.session_state:
    st.session_state.pr_dir = tempfile.mkdtemp(prefix="gemm_profile_")


def _run_guarded(label: str, fn):
    """fn(say) with say(text): the profiler reports text only."""
    return ui.run_queued(label, device, lim, lambda progress: fn(lambda text: progress(None, text)))


st.subheader("Measured")
if st.button("Profile the block", type="primary", disabled=cfg is None, key="pr_run"):
    with ui.guard("the profiler run"):
        trace = Path(st.session_state.pr_dir) / "profile_trace.json"
        res = _run_guarded("a profiler run", lambda say: pf.profile_block(
            cfg, device, steps=int(st.session_state.pr_steps), trace_path=trace, monitor=True,
            hardware=CATALOGUE[hw_name], efficiency=float(eff), progress=say))
        st.session_state.pr_result = res

res = st.session_state.get("pr_result")
if res is not None:
    c0 = res.config
    st.markdown(f"**{c0.layers} block(s) on {res.device_name}** ({res.device}, {c0.dtype}, {c0.attention} attention, "
                f"hidden {c0.hidden}, {c0.batch}×{c0.seq_len} tokens) — {res.time_basis}, median of {res.steps} "
                "pass(es).")
    m = st.columns(4)
    m[0].metric("GEMM share of time", f"{res.gemm_share:.1%}",
                delta=f"{res.gemm_share - pf.GEMM_TARGET:+.1%} vs 80 % target")
    if res.prediction is not None:
        m[1].metric(f"Predicted ({res.prediction.hardware})", f"{res.prediction.time_share:.1%}",
                    delta=f"{res.gemm_share - res.prediction.time_share:+.1%} measured − predicted",
                    delta_color="off")
    m[2].metric("Time per pass", ui.fmt_si(res.total_time_s, "s"))
    m[3].metric("GEMMs achieved", ui.fmt_si(res.gemm_tflops * 1e12, "FLOP/s") if res.gemm_tflops else "—")
    if res.meets_target:
        st.success(f"GEMMs take {res.gemm_share:.1%} of the time: the block is GEMM-bound, as the article expects.")
    else:
        st.warning(f"GEMMs take only {res.gemm_share:.1%} of the time (target {pf.GEMM_TARGET:.0%}): the rest — "
                   "softmax, norms, element-wise ops, copies and launch overhead — dominates at these sizes. "
                   "Larger hidden sizes, longer sequences or fused attention (sdpa) raise the share.")
    st.altair_chart(charts_profile.share_chart(res), width="stretch")
    st.caption(f"GEMM FLOPs per pass: profiler {res.gemm_flops:,.0f}; gemmlib's count {res.predicted_gemm_flops:,}"
               + (" — they agree." if abs(res.gemm_flops - res.predicted_gemm_flops) < 1 else "."))

    st.markdown("#### Top ops")
    t = st.columns([1, 1, 4])
    by_name = t[0].toggle("merge shapes", key="pr_by_name", help="one row per op name, all input shapes together")
    top_n = t[1].number_input("rows", 5, 100, value=15, key="pr_top")
    ops = res.grouped() if by_name else res.top_ops(len(res.ops))
    table = pd.DataFrame([o.to_dict() for o in ops[: int(top_n)]])
    table["time µs"] = table["time_s"] * 1e6
    st.dataframe(table[["name", "shapes", "calls", "time µs", "share", "is_gemm", "flops", "tflops"]],
                 hide_index=True,
                 column_config={"time µs": st.column_config.NumberColumn(format="%.4g"),
                                "share": st.column_config.ProgressColumn(format="percent", min_value=0,
                                                                         max_value=1),
                                "is_gemm": st.column_config.CheckboxColumn("GEMM"),
                                "calls": st.column_config.NumberColumn("calls / pass", format="%g"),
                                "flops": st.column_config.NumberColumn("FLOPs / pass", format="%.3g"),
                                "tflops": st.column_config.NumberColumn("TFLOP/s", format="%.3g")})
    st.altair_chart(charts_profile.top_ops_chart(res, int(top_n), by_name=by_name), width="stretch")
    if res.prediction is not None:
        with st.expander("The prediction, op by op (one layer)"):
            st.dataframe(pd.DataFrame(list(res.prediction.rows)), hide_index=True,
                         column_config={"time_s": st.column_config.NumberColumn("time s", format="%.3g"),
                                        "flops": st.column_config.NumberColumn(format="%.3g")})
    for n in res.notes:
        st.caption(n)

    st.markdown("#### GPU monitor during the profile")
    mon = res.monitor
    charts = charts_profile.monitor_charts(mon) if mon is not None else {}
    if charts:
        s = mon.summary()
        st.caption(f"{mon.device_name}: {mon.reason}; {s['samples']} samples. NVML's “utilization” is the share "
                   "of time a kernel was running (not SM occupancy); “memory” the share of time memory was being "
                   "read or written.")
        for ch in charts.values():
            st.altair_chart(ch, width="stretch")
    else:
        st.info(mon.reason if mon is not None else "No monitor result.")

    if res.trace_path and Path(res.trace_path).exists():
        data = Path(res.trace_path).read_bytes()
        st.download_button(f"Download the Chrome trace ({ui.fmt_si(len(data), 'B')})", data,
                           "profile_trace.json", "application/json", on_click="ignore", key="pr_trace")
        st.caption("Open it at https://ui.perfetto.dev (or chrome://tracing): every op and, on a GPU, every "
                   "kernel on its own timeline.")
else:
    st.info("Choose the sizes, then **Profile the block**. The CPU defaults take a few seconds.")

# ----------------------------------------------------------------------------- monitored benchmark
st.subheader("Monitor a benchmark")
ok_nvml, why_nvml = _nvml()
st.markdown(f"Time the same block's forward pass with the measuring harness (warm-up, synchronize, repeat, "
            f"median and p20/p80) while NVML samples the GPU, against the targets SM utilization ≥ "
            f"{UTIL_TARGET:.0%} and memory bandwidth ≥ {BANDWIDTH_TARGET:.0%}.")
if not ok_nvml:
    st.info(why_nvml)
if st.button("Run the monitored benchmark", disabled=cfg is None, key="pr_bench"):
    with ui.guard("the monitored benchmark"):
        def _bench(say):
            say("timing the block with the harness")
            with GpuMonitor(interval_s=0.05, enabled=gpu_run) as mon_b:
                r = pf.block_benchmark(cfg, device, min_run_time=1.0 if gpu_run else 0.3)
            return r, mon_b.result

        r, mres = _run_guarded("a monitored block benchmark", _bench)
        record([r])
        st.session_state.pr_bench_out = (r, mres)
out = st.session_state.get("pr_bench_out")
if out:
    r, mres = out
    b = st.columns(4)
    b[0].metric("median per pass", ui.fmt_si(r.median_s, "s"))
    b[1].metric("p20 – p80", f"{ui.fmt_si(r.p20_s, 's')} – {ui.fmt_si(r.p80_s, 's')}")
    b[2].metric("GEMM TFLOP/s", f"{r.tflops:.3g}" if r.tflops else "—")
    b[3].metric("weights+I/O GB/s", f"{r.gbps:.3g}" if r.gbps else "—")
    charts = charts_profile.monitor_charts(mres)
    if charts:
        for ch in charts.values():
            st.altair_chart(ch, width="stretch")
    else:
        st.info(mres.reason if gpu_run else "This benchmark ran on the CPU: GPU monitoring has nothing to sample.")
