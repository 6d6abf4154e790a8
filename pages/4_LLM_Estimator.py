"""LLM Estimator: what does this model cost on this GPU at this batch and context?

Every number comes from ``gemmlib.llm.scaleout`` over ``gemmlib.llm.accounting`` (the same code
path as ``python -m gemmlib estimate``); this page reads widgets, calls it, and draws. Settings
live in the URL, so a view can be shared as a link. The scale-out view (parallelism, per-GPU
memory, communication, training, serving) lives in its own functions at the end.
"""

import json

import pandas as pd
import streamlit as st

import ui
from gemmlib.charts.model import (
    arrow_safe,
    compare_rows,
    compare_spec,
    flops_by_op_spec,
    memory_spec,
    ops_records,
    roofline_spec,
)
from gemmlib.core import format as fmt
from gemmlib.core.dtypes import DTYPES
from gemmlib.core.flops import DEFAULT_EFFICIENCY
from gemmlib.core.hardware import CATALOGUE, DEFAULT_GPU, Hardware
from gemmlib.core.interconnect import hardware_with, measured_links
from gemmlib.llm.accounting import ATTENTION_KINDS, MLA_FORMS, Workload
from gemmlib.llm.config import NORM_KINDS, QK_NORMS, ModelConfig, layer_pattern, moe_pattern
from gemmlib.llm.hf import MAX_CONFIG_BYTES, SUPPORTED_MODEL_TYPES, read_config_json
from gemmlib.llm.parallel import Parallel
from gemmlib.llm.presets import DEFAULT_PRESET, PRESETS
from gemmlib.llm.quant import WEIGHT_FORMATS
from gemmlib.llm.scaleout import estimate

ui.page(
    "LLM Estimator",
    "📐",
    """
Pick a model, a workload and a GPU: the page counts **every GEMM** of the prefill (the prompt) and of
the decode (one token per step), exactly as an eager PyTorch forward pass executes them, with the bytes
each one moves, whether it is compute- or memory-bound, and its roofline time. The same numbers come out
of `python -m gemmlib estimate` on the command line.
""",
)

DT = list(DTYPES)
WDT = ["config", *DT, *WEIGHT_FORMATS]  # "config": the model's torch_dtype (bf16 when it gives none)
SOURCES = ["preset", "custom", "config.json"]
MAXI = {"layers": 1000, "hidden": 65536, "heads": 1024, "kv": 1024, "hd": 4096, "ffn": 262144,
        "vocab": 1_000_000, "experts": 1024, "topk": 1024, "batch": 4096, "seq": 1_048_576, "new": 1_048_576,
        "gpus": 4096}


def _measured() -> dict[str, Hardware]:
    """Measured ceilings from the Devices page, when any were saved (no torch needed)."""
    try:
        from gemmlib.core.ceilings import measured_hardware_all

        return {h.name: h for h in measured_hardware_all()}
    except Exception:  # noqa: BLE001 - a missing or broken measurement file must not break this page
        return {}


HW = {**CATALOGUE, **_measured()}
base = PRESETS[DEFAULT_PRESET]

# ----------------------------------------------------------------------------- URL-bound widgets
# Every input is bound to the URL (``?le_batch=8``), with its default here: a link holds what differs.
D = {"le_src": "preset", "le_preset": DEFAULT_PRESET, "le_layers": base.layers, "le_hidden": base.hidden,
     "le_heads": base.heads, "le_kv": base.kv_heads, "le_hd": 0, "le_ffn": base.ffn, "le_vocab": base.vocab,
     "le_mlp": "gated", "le_experts": 0, "le_topk": 0, "le_tied": False, "le_batch": 1, "le_seq": 1024,
     "le_new": 256, "le_wdt": "bf16", "le_adt": "bf16", "le_kvdt": "bf16", "le_causal": False, "le_last": False,
     "le_macs": False, "le_gpu": DEFAULT_GPU, "le_gpus": 1, "le_eff": DEFAULT_EFFICIENCY, "le_cmp": False,
     "le_b_preset": "llama-3-70b", "le_b_batch": 1, "le_b_seq": 1024, "le_b_new": 256, "le_b_wdt": "bf16",
     "le_b_gpu": "H200 SXM", "le_b_gpus": 2}
# The scale-out view's inputs (parallel sizes, training, serving).
D.update({"le_tp": 1, "le_pp": 1, "le_ep": 1, "le_dp": 1, "le_gpn": 0, "le_overlap": False, "le_sp": False,
          "le_train": False, "le_tokens": 1e12, "le_mb": 1, "le_rc": "none", "le_zero": 0, "le_serve": False,
          "le_tpot": 50.0})
# the architecture features of a custom model, and the workload's decode-only / attention / MLA switches
D.update({"le_wdt": "config", "le_sw": 0, "le_swp": "all", "le_qkn": "none", "le_norm": "rms", "le_npl": 2,
          "le_par": False, "le_mla_kv": 0, "le_mla_q": 0, "le_mla_rope": 0, "le_vhd": 0, "le_effn": 0, "le_sffn": 0,
          "le_sgate": False, "le_dense": 0, "le_every": 1, "le_ctx": False, "le_attn": "eager", "le_mla": "eager"})
D["le_link"] = "catalogue"  # the links inside a node: the catalogue's, or one measured here (issue 13)


def num(where, label: str, lo: int, hi: int, key: str, **kw):
    """A URL-bound whole-number input with this page's default for ``key``."""
    return ui.url(where.number_input, label, lo, hi, D[key], key=key, **kw)


def pick(where, label: str, options: list, key: str, widget: str = "selectbox", **kw):
    """A URL-bound selectbox (or radio) with this page's default option for ``key``."""
    default = D[key] if D[key] in options else options[0]
    return ui.url(getattr(where, widget), label, options, index=options.index(default), key=key, **kw)


def flag(where, label: str, key: str, widget: str = "toggle", **kw):
    return ui.url(getattr(where, widget), label, D[key], key=key, **kw)


ss = st.session_state


_t = fmt.duration  # every duration in one style (gemmlib.core.format)


@st.cache_data(max_entries=16, show_spinner=False)
def _parse_upload(data: bytes, name: str) -> tuple[ModelConfig, dict]:
    """The model of an uploaded config.json and what the parser read (family, ignored keys, ...)."""
    return read_config_json(data, name=name)


@st.cache_data(max_entries=128, show_spinner=False)
def _estimate(cfg: ModelConfig, wl: Workload, hw: Hardware, par: Parallel, gpus: int, eff: float,
              info_json: str = "{}"):
    return estimate(cfg, wl, hw, par, eff, gpus=gpus, read_info=json.loads(info_json))


@st.cache_data(max_entries=128, show_spinner=False)
def _views(cfg: ModelConfig, wl: Workload, hw: Hardware, par: Parallel, gpus: int, eff: float, macs: bool,
           info_json: str = "{}") -> dict:
    est = _estimate(cfg, wl, hw, par, gpus, eff, info_json)
    d = est.to_dict()
    return {
        "flops": flops_by_op_spec(est, macs), "memory": memory_spec(est), "roofline": roofline_spec(est),
        "ops": arrow_safe(ops_records(est, macs)), "json": est.to_json(indent=1),
        "variants": arrow_safe(d["variants"]), "rules": arrow_safe(d["rules_of_thumb"]),
    }


# ----------------------------------------------------------------------------- the scale-out view
# Parallelism with communication, per-GPU memory, training and serving (gemmlib.llm.scaleout): the sidebar
# inputs, then one function per tab.
RECOMPUTE = ["none", "selective", "full"]


def scaleout_sidebar() -> None:
    st.header("Parallelism")
    c = st.columns(4)
    for i, (key, label, what) in enumerate((("le_tp", "TP", "tensor parallel"), ("le_pp", "PP", "pipeline stages"),
                                            ("le_ep", "EP", "expert parallel (MoE)"),
                                            ("le_dp", "DP", "data-parallel replicas"))):
        num(c[i], label, 1, MAXI["gpus"], key, help=what)
    c = st.columns(2)
    num(c[0], "GPUs per node (0 = catalogue)", 0, 1024, "le_gpn",
        help="GPUs joined by the fast link in a node (HGX: 8, GB200 NVL72: 72); groups beyond it use the network")
    flag(c[1], "overlap (best case)", "le_overlap", help="communication fully hidden behind compute; off: added")
    flag(st, "sequence parallelism", "le_sp",
         help="Megatron SP: norms split by sequence, each all-reduce a reduce-scatter + all-gather")
    st.caption("With every size at 1, the GPUs above are tensor parallel; otherwise TP × PP × EP × DP must "
               "equal them. Megatron's rank order: TP innermost, then EP, DP, PP.")
    # --- a measured interconnect (issue 13): `python -m gemmlib bench collective` or the Multi-GPU page saves one
    pick(st, "Links inside a node", ["catalogue", *(lk.name for lk in measured_links())], "le_link",
         help="the catalogue's line rates, or a bus bandwidth and latency measured on this machine")


def parallel_from_widgets(gpus: int) -> Parallel:
    sizes = {k: ss[f"le_{k}"] for k in ("tp", "pp", "ep", "dp")}
    if all(v == 1 for v in sizes.values()):
        sizes["tp"] = gpus  # the GPUs alone: tensor parallelism, as --gpus N on the command line
    return Parallel(**sizes, gpus_per_node=ss.le_gpn, overlap=ss.le_overlap, sequence_parallel=ss.le_sp)


def _gib(b: float) -> str:
    return f"{b / 2**30:,.2f} GiB"


def scaleout_tab(est) -> None:
    from gemmlib.charts.scaleout import comm_by_op_spec, per_gpu_memory_spec

    par, pre, dec = est.parallel, est.prefill, est.decode
    st.markdown(f"**TP {par.tp} × PP {par.pp} × EP {par.ep} × DP {par.dp} = {est.gpus} × {est.hardware.name}**; "
                "communication " + ("overlapped (best case)" if par.overlap else "not overlapped with compute"))
    k = st.columns(4)
    for i, ph in enumerate((pre, dec)):
        if ph.time_s:
            k[2 * i].metric(f"{ph.name} time", _t(ph.time_s),
                            help=f"compute {_t(ph.compute_s)} + communication {_t(ph.communication_s)}"
                                 + (f" + pipeline bubble {_t(ph.bubble_s)}" if ph.bubble_s else ""))
            k[2 * i + 1].metric(f"{ph.name} communication", _t(ph.communication_s),
                                help="exposed: on the critical path")
    groups = est.to_dict()["parallel"]["groups"]
    if groups:
        ui.table(pd.DataFrame(groups), hide_index=True, width="stretch",
                     column_config={"busbw_bytes_per_s": st.column_config.NumberColumn("bus bandwidth B/s",
                                                                                     format="%.3g"),
                                    "latency_s": st.column_config.NumberColumn("latency s", format="%.3g"),
                                    "source": st.column_config.TextColumn(width="large")})
    st.vega_lite_chart(per_gpu_memory_spec(est.per_gpu, est.hardware.name), width="stretch")
    pg = est.per_gpu
    st.caption(f"Weights {_gib(pg.weights_bytes)} (each op's shard), KV cache {_gib(pg.kv_cache_bytes)} (÷ min(TP, "
               f"KV heads), its stage's layers), prefill activations {_gib(pg.activation_bytes)}, workspace "
               f"{_gib(pg.workspace_bytes)} (10 %: vLLM keeps back 1 − gpu_memory_utilization 0.9). Largest batch "
               f"that fits: **{est.max_batch:,}**. Memory source: {est.hardware.memory_source}.")
    if est.gpus > 1:
        st.vega_lite_chart(comm_by_op_spec(est), width="content")
        rows = [{"phase": ph.name, **c.to_dict()} for ph in (pre, dec) for c in ph.collectives]
        if rows:
            ui.table(pd.DataFrame(rows).drop(columns=["busbw", "latency_s"]), hide_index=True, width="stretch",
                         column_config={"size_bytes": st.column_config.NumberColumn("size B", format="localized"),
                                        "count": st.column_config.NumberColumn(format="%.0f"),
                                        "time_s": st.column_config.NumberColumn(format="%.4g")})
        st.caption("Each collective costs latency + size × factor / bus bandwidth over the link its group crosses "
                   "(nccl-tests: all-reduce 2(n−1)/n, all-gather / reduce-scatter / all-to-all (n−1)/n); link "
                   "figures are line rates with measured small-message latency; `python -m gemmlib estimate "
                   "--intra-busbw` takes a measured one.")


@st.cache_data(max_entries=32, show_spinner=False)
def _train(cfg, wl, hw, par, gpus, eff, tokens, mb, rc, zero):
    from gemmlib.llm.training import Training

    return estimate(cfg, wl, hw, par, eff, gpus=gpus,
                    training=Training(tokens=float(tokens), micro_batch=mb, recompute=rc, zero=zero)).train


def training_tab(cfg, wl, hw, par, gpus, eff) -> None:
    from gemmlib.charts.scaleout import per_gpu_memory_spec
    from gemmlib.llm.training import LLAMA31_405B as a

    flag(st, "size a training run (batch × prompt = one step's tokens)", "le_train")
    c = st.columns(4)
    ui.url(c[0].number_input, "training tokens D", 1e6, 1e16, D["le_tokens"], key="le_tokens", format="%.3g",
           help="tokens of the whole run")
    num(c[1], "micro-batch", 1, 4096, "le_mb", help="sequences per micro-batch")
    pick(c[2], "recompute", RECOMPUTE, "le_rc", help="full: every layer's forward again (gradient checkpointing)")
    pick(c[3], "ZeRO", [0, 1, 2, 3], "le_zero", help="stages 1–3 shard optimizer, gradients, weights across DP")
    if not ss.le_train:
        st.info("Turn on **size a training run**: the batch is the global batch of one step, the prompt its "
                "sequence length.")
        return
    with ui.guard("the training run"):
        tr = _train(cfg, wl, hw, par, gpus, eff, ss.le_tokens, ss.le_mb, ss.le_rc, ss.le_zero)
        t = tr.to_dict()
        k = st.columns(5)
        k[0].metric("step FLOPs", fmt.si(t["step_flops"]), help="forward + backward (input and weight gradient "
                    "of every GEMM) + recomputation, exact")
        k[1].metric("step time", _t(t["step_time_s"]))
        k[2].metric("MFU", f"{t['mfu']:.1%}", help=f"model FLOPs / (step time × GPUs × peak); HFU {t['hfu']:.1%}")
        k[3].metric("tokens/s", fmt.si(t["tokens_per_s"]), help=f"{fmt.si(t['tokens_per_s_per_gpu'])} per GPU")
        k[4].metric("GPU-hours", fmt.si(t["gpu_hours"]), help=f"{t['steps']:,} steps, "
                    f"{t['run_time_s'] / 86400:.3g} days on {tr.gpus:,} GPUs")
        st.markdown(f"Step time **{_t(t['step_time_s'])}** = compute {_t(t['compute_s'])} + communication "
                    f"{_t(t['communication_s'])} (data parallel {_t(t['dp_communication_s'])}) + pipeline bubble "
                    f"{_t(t['bubble_s'])}, over {t['microbatches']} micro-batches per replica. Run FLOPs: exact "
                    f"**{t['run_flops']:.3g}**, 6·N·D {t['six_nd_flops']:.3g}.")
        st.vega_lite_chart(per_gpu_memory_spec(tr.memory, hw.name, "per GPU in training"), width="stretch")
        st.caption(f"Mixed-precision AdamW as ZeRO counts it (2Ψ weights + 2Ψ gradients + 12Ψ optimizer), "
                   f"activations by Korthikanti et al. 2022; largest micro-batch that fits: {t['max_micro_batch']}. "
                   f"A published anchor: {a.name}, {a.tokens:.3g} tokens, {a.flops:.2g} FLOPs, "
                   f"{a.gpu_hours / 1e6:.2f} M {a.gpu} GPU-hours on {a.gpus:,} GPUs at {a.mfu:.0%} MFU "
                   "(benchmarks/bench_scaleout.py estimates it).")


@st.cache_data(max_entries=32, show_spinner=False)
def _serve(cfg, wl, hw, par, gpus, eff, tpot_ms):
    return estimate(cfg, wl, hw, par, eff, gpus=gpus, serve=True,
                    tpot_target_s=tpot_ms / 1e3 if tpot_ms else None).serving


def serving_tab(cfg, wl, hw, par, gpus, eff) -> None:
    from gemmlib.charts.scaleout import serving_records, serving_spec

    c = st.columns(2)
    flag(c[0], "serving curve (prompt + new tokens per request)", "le_serve")
    ui.url(c[1].number_input, "TPOT target ms (0 = none)", 0.0, 10_000.0, D["le_tpot"], key="le_tpot",
           step=5.0, help="the best concurrency keeps the time per output token under this")
    if not ss.le_serve:
        st.info("Turn on **serving curve**: throughput, time to first token and per output token from one request "
                "to the KV-memory limit.")
        return
    with ui.guard("the serving curve"):
        sv = _serve(cfg, wl, hw, par, gpus, eff, ss.le_tpot)
        if sv.best:
            b = sv.best
            st.success(f"Best concurrency under {ss.le_tpot:g} ms per token: **{b.concurrency:,}** requests, "
                       f"{b.tokens_per_s:,.0f} tokens/s ({b.tokens_per_s_per_gpu:,.0f} per GPU), TTFT {_t(b.ttft_s)}")
        elif ss.le_tpot:
            st.warning(f"No concurrency up to the KV limit ({sv.kv_limit:,}) keeps TPOT under {ss.le_tpot:g} ms.")
        st.vega_lite_chart(serving_spec(sv), width="content")
        ui.table(pd.DataFrame(serving_records(sv)), hide_index=True, width="stretch")
        st.caption("Static batching: the requests' prompts are prefilled together (TTFT), then decoded together; "
                   "TPOT is the mean decode step. The KV limit is the largest concurrency whose per-GPU memory "
                   "fits.")


def _custom_features(where, layers: int, heads: int, experts: int) -> dict:
    """The custom model's architecture features (sliding windows, qk-norm, norms, MLA, MoE layout) as
    ModelConfig fields."""
    c = where.columns(2)
    num(c[0], "sliding window (0 = none)", 0, 1 << 24, "le_sw", help="keys a sliding-window layer attends to")
    ui.url(c[1].text_input, "sliding layers", D["le_swp"], key="le_swp",
           help="all, alternate (layers 0, 2, …), N:M (N sliding then M full, e.g. 5:1 for Gemma 3) or a unit "
                "of S/F letters")
    pick(c[0], "qk-norm", list(QK_NORMS), "le_qkn", help="head: one norm of head_dim shared by the heads (Qwen3, "
         "Gemma 3); width: over all heads (OLMo 2)")
    pick(c[1], "norm", list(NORM_KINDS), "le_norm")
    pick(c[0], "norms per layer", [1, 2, 4], "le_npl", help="1: a parallel block's shared norm; 4: Gemma's sandwich")
    flag(c[1], "parallel attention + MLP", "le_par", widget="checkbox")
    where.caption("MLA (DeepSeek): a compressed KV latent; 0 = ordinary attention")
    c = where.columns(3)
    num(c[0], "KV latent rank", 0, 65536, "le_mla_kv")
    num(c[1], "query rank", 0, 65536, "le_mla_q", help="0: a plain q_proj (DeepSeek-V2-Lite)")
    num(c[2], "rotary dims", 0, 4096, "le_mla_rope", help="qk_rope_head_dim: part of the head dim")
    num(where, "value head dim (0 = head dim)", 0, MAXI["hd"], "le_vhd")
    where.caption("Mixture of experts: layout")
    c = where.columns(2)
    num(c[0], "expert width (0 = FFN)", 0, MAXI["ffn"], "le_effn")
    num(c[1], "shared expert width", 0, MAXI["ffn"], "le_sffn")
    num(c[0], "first dense layers", 0, MAXI["layers"], "le_dense")
    num(c[1], "MoE every n-th layer", 1, MAXI["layers"], "le_every")
    flag(where, "sigmoid gate on the shared expert (Qwen-MoE)", "le_sgate", widget="checkbox")
    out: dict = {"qk_norm": ss.le_qkn, "norm": ss.le_norm, "norms_per_layer": ss.le_npl, "parallel_block": ss.le_par,
                 "v_head_dim": ss.le_vhd}
    if ss.le_sw:
        out.update(sliding_window=ss.le_sw, layer_types=layer_pattern(layers, ss.le_swp))
    if ss.le_mla_kv:
        out.update(kv_lora_rank=ss.le_mla_kv, q_lora_rank=ss.le_mla_q, rope_head_dim=ss.le_mla_rope, kv_heads=heads)
    if experts:
        out.update(expert_ffn=ss.le_effn, shared_expert_ffn=ss.le_sffn, shared_expert_gate=ss.le_sgate)
        if ss.le_dense or ss.le_every > 1:
            out["moe_layers"] = moe_pattern(layers, first_dense=ss.le_dense, every=ss.le_every)
    return out


def _show_read(est, expanded: bool) -> None:
    """What was read from the configuration: family, attention pattern, MLA, experts, quantization, dtype,
    and the keys it ignored."""
    r = est.read()
    with st.expander("What was read: " + ui.md(r['family'])
                     + (f" (in {ui.md(r['wrapper'])})" if r.get("wrapper") else ""), expanded=expanded):
        att = r["attention"]
        rows = [("family", r["family"] + (f" — the decoder of {r['wrapper']}" if r.get("wrapper") else "")),
                ("attention", f"{att['full']} full, {att['sliding']} sliding, {att['chunked']} chunked layers"
                 + (f"; window {att['window']:,}; pattern {att['pattern']}" if att["window"] else "")),
                ("MLA", "—" if not r["mla"] else
                 f"latent {r['mla']['kv_lora_rank']} + rotary {r['mla']['qk_rope_head_dim']} cached per token and "
                 f"layer; query rank {r['mla']['q_lora_rank'] or 'none'}"),
                ("experts", "—" if not r["experts"] else
                 f"{r['experts']['experts']} experts, top-{r['experts']['per_token']}, width "
                 f"{r['experts']['expert_ffn']}; {r['experts']['moe_layers']} MoE / {r['experts']['dense_layers']} "
                 f"dense layers ({r['experts']['pattern']})"
                 + (f"; shared expert {r['experts']['shared_expert_ffn']}" if r["experts"]["shared_expert_ffn"]
                    else "")),
                ("quantization", "—" if not r["quantization"] else
                 f"{r['quantization']['label']}; {r['quantization']['activations']}"),
                ("dtype", (r["dtype"] or "not given") + f"; weights: {r['weight_dtype_source']}"),
                ("checkpoint", fmt.si(r["checkpoint_bytes"], "B") + " of tensors"),
                ("block", f"{r['block']['norm']} × {r['block']['norms_per_layer']}, qk-norm {r['block']['qk_norm']}, "
                 f"{'parallel' if r['block']['parallel'] else 'sequential'}, positions {r['block']['positions']}, "
                 f"biases {', '.join(r['block']['biases']) or 'none'}")]
        # st.table renders Markdown; these cells quote the uploaded file, so they are escaped
        st.table(pd.DataFrame([(k, ui.md(v)) for k, v in rows], columns=["", "read"]).set_index(""))
        if r["unknown_keys"]:
            st.warning("Keys this estimator does not know (ignored): " + ui.md(", ".join(r["unknown_keys"])))
        if r["ignored_keys"]:
            st.caption("Ignored (they change no GEMM, parameter or byte): " + ui.md(", ".join(r["ignored_keys"])))
        if r.get("defaults"):
            st.caption("Absent, so transformers' defaults apply: "
                       + ui.md(", ".join(f"{k} = {v}" for k, v in r["defaults"].items())))
        for note in r["notes"]:
            st.caption(ui.md(note))


# ----------------------------------------------------------------------------- inputs (sidebar)
info: dict = {}
with st.sidebar:
    st.header("Model")
    src = pick(st, "Source", SOURCES, "le_src", widget="radio", horizontal=True)
    cfg = None
    with ui.guard("the model"):
        if src == "preset":
            name = pick(st, "Preset", list(PRESETS), "le_preset")
            cfg = PRESETS[name]
        elif src == "custom":
            c = st.columns(2)
            num(c[0], "layers", 1, MAXI["layers"], "le_layers")
            num(c[1], "hidden size", 1, MAXI["hidden"], "le_hidden")
            num(c[0], "query heads", 1, MAXI["heads"], "le_heads")
            num(c[1], "KV heads (0 = same)", 0, MAXI["kv"], "le_kv")
            num(c[0], "head dim (0 = hidden/heads)", 0, MAXI["hd"], "le_hd")
            num(c[1], "FFN width", 1, MAXI["ffn"], "le_ffn")
            num(c[0], "vocabulary", 1, MAXI["vocab"], "le_vocab")
            pick(c[1], "MLP", ["gated", "plain"], "le_mlp", widget="radio", horizontal=True)
            num(c[0], "experts (0 = dense)", 0, MAXI["experts"], "le_experts")
            num(c[1], "experts per token", 0, MAXI["topk"], "le_topk")
            flag(st, "tied embeddings (LM head = embedding)", "le_tied", widget="checkbox")
            with st.expander("More architecture: sliding windows, MLA, shared experts, norms"):
                extra = _custom_features(st, ss.le_layers, ss.le_heads, ss.le_experts)
            cfg = ModelConfig(**{**dict(layers=ss.le_layers, hidden=ss.le_hidden, heads=ss.le_heads,
                                        kv_heads=ss.le_kv, head_dim=ss.le_hd, ffn=ss.le_ffn, vocab=ss.le_vocab,
                                        mlp=ss.le_mlp, tied_embeddings=ss.le_tied, experts=ss.le_experts,
                                        experts_per_token=ss.le_topk), **extra})
        else:
            up = st.file_uploader("A Hugging Face config.json", type=["json"], key="le_upload",
                                  help="Only plain fields are read; nothing is executed. Families: "
                                       + ", ".join(SUPPORTED_MODEL_TYPES) + ". A quantization_config sizes "
                                       "the weights exactly; torch_dtype is the default weight dtype.")
            if up is None:
                st.info("Upload a config.json, or pick a preset.")
            else:
                if up.size > MAX_CONFIG_BYTES:
                    from gemmlib.core.errors import InputError

                    raise InputError(f"{up.name} is {up.size:,} bytes; a config.json is a few kB "
                                     f"(limit {MAX_CONFIG_BYTES:,})")
                cfg, info = _parse_upload(up.getvalue(), up.name.removesuffix(".json"))
                st.success(f"Read {ui.md(up.name)}: {cfg.params:,} parameters ({ui.md(cfg.family)})")
                ss.le_good_upload = (cfg, info)
    if cfg is None and src == "config.json" and ss.get("le_good_upload") is not None:
        cfg, info = ss.le_good_upload  # a bad upload keeps the last model that worked, as the other pages do
        st.info(f"Showing the last config.json that worked ({ui.md(cfg.name)}).")

    st.header("Workload")
    c = st.columns(3)
    num(c[0], "batch", 1, MAXI["batch"], "le_batch", help="concurrent sequences")
    num(c[1], "prompt", 1, MAXI["seq"], "le_seq", help="prompt tokens per sequence")
    num(c[2], "new tokens", 0, MAXI["new"], "le_new",
        help="decode steps after the prefill; step i sees prompt + i cached tokens")
    flag(st, "decode only: the prompt is already cached (no prefill)", "le_ctx",
         help="one decode question: --context C on the command line (new tokens = decode steps, at least 1)")
    c = st.columns(2)
    pick(c[0], "attention", list(ATTENTION_KINDS), "le_attn", widget="radio", horizontal=True,
         help="eager: the S×S scores go through memory; fused (flash / SDPA): they stay on chip — same FLOPs")
    pick(c[1], "MLA decode", list(MLA_FORMS), "le_mla", widget="radio", horizontal=True,
         help="DeepSeek-style MLA only: eager (transformers decompresses the whole cache every step) or "
              "absorbed (serving engines fold kv_b_proj into the query and the output)")
    c = st.columns(2)  # two per row: three would cut the names ("bf1")
    pick(c[0], "weights", WDT, "le_wdt", format_func=lambda v: "from the config" if v == "config" else v,
         help="'from the config': the model's torch_dtype (bf16 when it gives none). int4 and fp4 are block-scaled "
              "formats of the decoder's linears; a quantized config keeps its own format.")
    pick(c[1], "activations", DT, "le_adt", help="the GEMMs run at this dtype's peak")
    pick(c[0], "KV cache", DT, "le_kvdt")
    st.caption("Counting switches (the default is what an eager forward pass executes)")
    flag(st, "causal attention counting (lower triangle)", "le_causal")
    flag(st, "LM head on the last position only", "le_last")
    flag(st, "show MACs instead of FLOPs", "le_macs")

    st.header("Hardware")
    pick(st, "GPU", list(HW), "le_gpu", help="datasheet rows; rows named '(measured)' come from the Devices page")
    c = st.columns(2)
    num(c[0], "GPUs", 1, MAXI["gpus"], "le_gpus",
        help="alone: tensor parallelism over N GPUs; with the parallel sizes below: their product")
    ui.url(c[1].slider, "efficiency", 0.05, 1.0, D["le_eff"], step=0.05, key="le_eff",
           help="share of peak and bandwidth a real kernel reaches")
    flag(st, "compare with a second configuration (B)", "le_cmp")
    scaleout_sidebar()

def _memory_words(est) -> str:
    """How the memory figures are made, in words with this model's numbers."""
    m, wl, mem = est.model, est.workload, est.memory
    q = m.quant
    if q is not None:
        weights = f"the checkpoint's tensors, quantized linears in {q.label}, the rest at {wl.weight_dtype}"
    elif wl.weight_dtype in WEIGHT_FORMATS:
        weights = f"the decoder's linears in {wl.weight_dtype} with their block scales, the rest at {m.dtype or 'bf16'}"
    else:
        weights = f"{m.params:,} parameters × {DTYPES[wl.weight_dtype].bytes:g} B"
    per = (f"the MLA latent + rotary key ({m.kv_elements_per_token_layer} elements)" if m.is_mla else
           f"K and V of {m.kv_cache_heads} heads × ({m.head_dim} + {m.v_head_dim}) dims")
    window = (f"; {m.windowed_layers} sliding layers keep only the last {m.sliding_window - 1:,} tokens"
              if m.sliding_window else "")
    return (f"Weights: {weights} = **{fmt.si(mem.weights_bytes, 'B')}**"
            + (" (multi-token-prediction layers, stored in the checkpoint, are not loaded)" if m.mtp_layers else "")
            + f". KV cache: {per} per token and layer, × {DTYPES[wl.kv_dtype].bytes:g} B × batch {wl.batch} × "
            f"{wl.final_tokens:,} tokens{window} = **{fmt.si(mem.kv_cache_bytes, 'B')}**. Activations and "
            "framework overhead come on top.")


# ----------------------------------------------------------------------------- results
est = views = None
if cfg is not None:
    with ui.guard("the estimate"):
        wdt = (cfg.dtype or "bf16") if ss.le_wdt == "config" else ss.le_wdt
        wl = Workload(batch=ss.le_batch, seq_len=ss.le_seq, new_tokens=max(ss.le_new, 1) if ss.le_ctx else ss.le_new,
                      causal=ss.le_causal, lm_head="last" if ss.le_last else "all", weight_dtype=wdt,
                      act_dtype=ss.le_adt, kv_dtype=ss.le_kvdt, attention=ss.le_attn, decode_only=ss.le_ctx,
                      mla=ss.le_mla)
        hw = HW[ss.le_gpu]
        par = parallel_from_widgets(ss.le_gpus)
        if ss.le_link != "catalogue":
            hw = hardware_with(hw, ss.le_link, par.gpus)[0]
        info_json = json.dumps(info, sort_keys=True)  # the parser's report, hashable for the cache
        est = _estimate(cfg, wl, hw, par, ss.le_gpus, ss.le_eff, info_json)
        views = _views(cfg, wl, hw, par, ss.le_gpus, ss.le_eff, ss.le_macs, info_json)

if est is not None and views is not None:
    with ui.guard("the results"):
        unit, div = ("MAC", 2) if ss.le_macs else ("FLOP", 1)
        m = est.model
        src_note = f" · [config.json]({m.source})" if m.source else ""
        st.markdown(
            f"**{ui.md(m.name)}** — {m.params:,} parameters"
            + (f" ({m.active_params:,} active per token)" if m.is_moe else "")
            + f"; {m.layers} layers, hidden {m.hidden}, {m.heads} heads / {m.kv_heads} KV, head dim {m.head_dim}, "
            f"FFN {m.ffn} ({m.mlp}), vocab {m.vocab:,}"
            + (f", {m.experts} experts, top-{m.experts_per_token}" if m.is_moe else "") + src_note)
        _show_read(est, expanded=src == "config.json")
        for w in est.to_dict()["warnings"]:
            st.warning(w)
        t = est.times()
        mem = est.memory
        pg = est.per_gpu
        # the times first, with what they assume, and whether the model fits beside them
        st.markdown(f"**Predicted on {est.gpus} × {est.hardware.name} · {est.compute_dtype} · "
                    f"{fmt.percent(est.efficiency, 0)} of peak and bandwidth** (roofline: each op at "
                    "max(FLOPs / peak, bytes / bandwidth); change the efficiency in the sidebar)")
        k = st.columns([1, 1, 1, 2])
        k[0].metric("time to first token", _t(t["ttft_s"]))
        k[1].metric("per output token", _t(t["time_per_output_token_s"]))
        k[2].metric("decode tokens/s", fmt.si(t["decode_tokens_per_s"]), help="generated tokens per second, whole batch")
        if pg.fits:
            k[3].success(f"Fits: {fmt.si(pg.total_bytes, 'B')} per GPU of its {fmt.si(pg.capacity_bytes, 'B')} "
                         "(weights, the KV cache at the end, activations and workspace).")
        else:
            k[3].warning(f"Does not fit: {fmt.si(pg.total_bytes, 'B')} needed per GPU, {fmt.si(pg.capacity_bytes, 'B')} "
                         f"on each {est.hardware.name} ({est.gpus} in all); it needs at least {mem.min_gpus} of them. "
                         "The times assume it fits.")
        k = st.columns(4)
        k[0].metric(f"prefill {unit}s", fmt.si(est.prefill.flops / div),
                    help=f"exactly {fmt.count(est.prefill.flops // div)}")
        k[1].metric(f"decode {unit}s", fmt.si(est.decode.flops / div),
                    help=f"all decode steps, whole batch: exactly {fmt.count(est.decode.flops // div)}")
        share = est.prefill.gemm_share_of_time
        k[3].metric("GEMM share of prefill time", fmt.percent(share, 0),
                    help="the GEMMs' share of the predicted prefill time; the rest is norms, softmax, activation, "
                         "residual adds and the like (memory-bound)." + (
                             f" Of the FLOPs, GEMMs are {fmt.percent(est.prefill.gemm_share_of_flops, 2)}."
                             if est.prefill.gemm_share_of_flops is not None else " (No prefill: decode only.)"))
        k[2].metric("memory per GPU", fmt.si(pg.total_bytes, "B"),
                    delta="fits" if pg.fits else "does not fit", delta_color="normal" if pg.fits else "inverse",
                    help="weights, KV cache at the end, prefill activations and workspace on the busiest GPU, "
                         f"against its {fmt.si(pg.capacity_bytes, 'B')}; the whole job needs "
                         f"{fmt.si(mem.total_bytes, 'B')} of weights and KV cache")

        tabs = st.tabs(["FLOPs by op", "Memory", "Roofline", "Scale-out", "Training", "Serving",
                        "Switches & rules of thumb", "A vs B", "Download"],
                       key="le_tab", bind="query-params")  # ?le_tab=Roofline opens that tab
        with tabs[0]:
            st.vega_lite_chart(views["flops"], width="stretch")
            df = pd.DataFrame(views["ops"]).drop(columns=["value"], errors="ignore")
            df["time"] = df.pop("time_s").map(fmt.duration)
            ui.table(df, {c: "count" for c in ("count", "FLOPs", "MACs", "bytes", "weight bytes", "activation bytes",
                                               "KV bytes")}, width="stretch")  # counts are exact: every digit
            st.caption("Attention ops run once per layer, sequence and query head (GQA shrinks k_proj, v_proj "
                       "and the KV cache, not the products). Decode rows sum every step; N..N' is the key count "
                       "at the first and the last step. A MoE's expert GEMMs run k times per token.")
        with tabs[1]:
            st.vega_lite_chart(views["memory"], width="stretch")
            st.markdown(_memory_words(est))
        with tabs[2]:
            st.vega_lite_chart(views["roofline"], width="stretch")
            st.caption("Each op's predicted time is max(FLOPs / peak, bytes / bandwidth), both derated by the "
                       "efficiency. Decode GEMMs with one token per sequence sit far left of the ridge: they are "
                       "bound by reading the weights, which is why batching pays at decode.")
        with tabs[3]:
            scaleout_tab(est)
        with tabs[4]:
            training_tab(cfg, wl, hw, par, ss.le_gpus, ss.le_eff)
        with tabs[5]:
            serving_tab(cfg, wl, hw, par, ss.le_gpus, ss.le_eff)
        with tabs[6]:
            st.markdown("**Counting switches** (the highlighted row is the one selected)")
            ui.table(views["variants"], {c: "count" for c in ("prefill_flops", "prefill_macs", "decode_flops",
                                                              "decode_macs")}, width="stretch")
            st.markdown("**The article's rules of thumb** against the exact prefill count")
            if not views["rules"]:
                st.info("No prefill in a decode-only workload: the rules of thumb size a prefill.")
            ui.table(pd.DataFrame(views["rules"], columns=["rule", "value", "exact", "ratio", "reason"]),
                     {"value": "number", "exact": "count"}, width="stretch",
                     column_config={"ratio": st.column_config.NumberColumn("exact / rule", format="%.3g"),
                                    "reason": st.column_config.TextColumn(width="large")})
        with tabs[7]:
            if not ss.le_cmp:
                st.info("Turn on **compare with a second configuration (B)** in the sidebar.")
            else:
                c = st.columns([2, 1, 1, 1, 1, 2, 1])  # room for the names
                pick(c[0], "B preset", list(PRESETS), "le_b_preset")
                num(c[1], "B batch", 1, MAXI["batch"], "le_b_batch")
                num(c[2], "B prompt", 1, MAXI["seq"], "le_b_seq")
                num(c[3], "B new tokens", 0, MAXI["new"], "le_b_new")
                pick(c[4], "B weights", DT, "le_b_wdt")
                pick(c[5], "B GPU", list(HW), "le_b_gpu")
                num(c[6], "B GPUs", 1, MAXI["gpus"], "le_b_gpus")
                with ui.guard("configuration B"):
                    wl_b = Workload(batch=ss.le_b_batch, seq_len=ss.le_b_seq, new_tokens=ss.le_b_new,
                                    causal=ss.le_causal, lm_head="last" if ss.le_last else "all",
                                    weight_dtype=ss.le_b_wdt, act_dtype=ss.le_adt, kv_dtype=ss.le_kvdt)
                    est_b = _estimate(PRESETS[ss.le_b_preset], wl_b, HW[ss.le_b_gpu], Parallel(tp=ss.le_b_gpus),
                                      ss.le_b_gpus, ss.le_eff)
                    ui.table(pd.DataFrame(compare_rows(est, est_b)).set_index("quantity"), hide_index=False,
                             width="stretch")
                    st.vega_lite_chart(compare_spec(est, est_b, macs=ss.le_macs), width="content")
        with tabs[8]:
            stem = f"estimate_{m.name}_b{est.workload.batch}_s{est.workload.seq_len}_n{est.workload.new_tokens}"
            c = st.columns(2)
            c[0].download_button("Ops as CSV", pd.DataFrame(views["ops"]).to_csv(index=False), f"{stem}.csv",
                                 "text/csv", key="le_dl_csv")
            c[1].download_button("Everything as JSON", views["json"], f"{stem}.json", "application/json",
                                 key="le_dl_json")
            st.caption("The JSON holds the same object as `python -m gemmlib estimate --json`. "
                       "This view's settings are in the page's URL: copy it to share the view "
                       "(an uploaded config.json is not part of the link).")
