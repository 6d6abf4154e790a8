"""LLM Estimator: what does this model cost on this GPU at this batch and context?

Every number comes from ``gemmlib.llm.scaleout`` over ``gemmlib.llm.accounting`` (the same code
path as ``python -m gemmlib estimate``); this page reads widgets, calls it, and draws. Settings
live in the URL, so a view can be shared as a link. The scale-out view (parallelism, per-GPU
memory, communication, training, serving) lives in its own functions at the end.

Every text goes through ``_`` (ui.py, "translating the app"); gemmlib's notes, reasons and labels
are ``Text`` (English strings that keep their message) and are shown through ``ui.tr``; the data
(the tables' keys, the CSV and the JSON download) stays English.
"""


import re

import pandas as pd
import streamlit as st

import ui
from gemmlib.charts.model import (
    WORD_OPS,
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
from gemmlib.core.i18n import N_, Msg
from gemmlib.core.interconnect import hardware_with, measured_links
from gemmlib.llm.accounting import ATTENTION_KINDS, MLA_FORMS, NORM_NAMES, Workload
from gemmlib.llm.config import NORM_KINDS, QK_NORMS, ModelConfig, layer_pattern, moe_pattern
from gemmlib.llm.hf import MAX_CONFIG_BYTES, SUPPORTED_MODEL_TYPES, read_config_json
from gemmlib.llm.parallel import Parallel
from gemmlib.llm.presets import DEFAULT_PRESET, PRESETS
from gemmlib.llm.quant import WEIGHT_FORMATS
from gemmlib.llm.scaleout import estimate
from ui import _

ui.page(
    _("LLM Estimator"),
    "📐",
    _("""Pick a model, a workload and a GPU: the page counts **every GEMM** of the prefill (the prompt) and of
the decode (one token per step), exactly as an eager PyTorch forward pass executes them, with the bytes
each one moves, whether it is compute- or memory-bound, and its roofline time. The same numbers come out
of `python -m gemmlib estimate` on the command line."""),
)

DT = list(DTYPES)
WDT = ["config", *DT, *WEIGHT_FORMATS]  # "config": the model's torch_dtype (bf16 when it gives none)
SOURCES = ["preset", "custom", "config.json"]
# Option values stay stable ids (the URL, the tests); what each shows, N_-marked (shown through _()).
LABELS = {"preset": N_("preset"), "custom": N_("custom"), "config": N_("from the config"), "gated": N_("gated"),
          "plain": N_("plain"), "eager": N_("eager"), "fused": N_("fused"), "absorbed": N_("absorbed"),
          "none": N_("none"), "selective": N_("selective"), "full": N_("full"), "head": N_("head"),
          "width": N_("width"), "catalogue": N_("catalogue"), "all": N_("all"), "last": N_("last"),
          "prefill": N_("prefill"), "decode": N_("decode"), "compute": N_("compute-bound"), "memory": N_("memory-bound"),
          "learned": N_("learned"), "rotary": N_("rotary"), "alibi": "ALiBi", "GEMM": "GEMM",
          "not GEMM": N_("not GEMM")}
BIASES = {"qkv": "QKV", "o": "O", "mlp": "MLP", "lm_head": "lm_head"}  # ModelConfig.describe()'s biases
GROUPS = {"tp": "TP", "pp": "PP", "ep": "EP", "dp": "DP"}  # parallel groups, as the sidebar names them


def _labels(code: str):
    """An option or category value as shown in the language ``code`` (itself when it has no label: a dtype,
    a model name). Bound to the language now: Streamlit (and AppTest) call a widget's format_func again
    outside this run, where the session's language is not known."""
    g = ui.gettext_for(code)
    return lambda v: g(LABELS[v]) if isinstance(v, str) and v in LABELS else str(v)


label = _labels(ui.lang())
shown = ui.gettext_for(ui.lang())  # this run's gettext, bound as label is: for the other format_funcs

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
              info: dict | None = None):
    """The estimate; ``info`` is the parser's report (its notes are Text: they keep their messages)."""
    return estimate(cfg, wl, hw, par, eff, gpus=gpus, read_info=info or {})


@st.cache_data(max_entries=128, show_spinner=False)
def _views(cfg: ModelConfig, wl: Workload, hw: Hardware, par: Parallel, gpus: int, eff: float, macs: bool,
           info: dict | None, lang: str) -> dict:
    """Charts (in ``lang``: a cached text never reaches a session in another language) and table rows."""
    est = _estimate(cfg, wl, hw, par, gpus, eff, info)
    d = est.to_dict()
    g = ui.gettext_for(lang)
    return {
        "flops": flops_by_op_spec(est, macs, gettext=g), "memory": memory_spec(est, gettext=g),
        "roofline": roofline_spec(est, gettext=g),
        "ops": arrow_safe(ops_records(est, macs)), "json": est.to_json(indent=1),
        "variants": arrow_safe(d["variants"]), "rules": arrow_safe(d["rules_of_thumb"]),
    }


# ----------------------------------------------------------------------------- the scale-out view
# Parallelism with communication, per-GPU memory, training and serving (gemmlib.llm.scaleout): the sidebar
# inputs, then one function per tab.
RECOMPUTE = ["none", "selective", "full"]


def scaleout_sidebar() -> None:
    st.header(_("Parallelism"))
    c = st.columns(4)
    for i, (key, name, what) in enumerate((("le_tp", "TP", _("tensor parallel")), ("le_pp", "PP", _("pipeline stages")),
                                           ("le_ep", "EP", _("expert parallel (MoE)")),
                                           ("le_dp", "DP", _("data-parallel replicas")))):
        num(c[i], name, 1, MAXI["gpus"], key, help=what)
    c = st.columns(2)
    num(c[0], _("GPUs per node (0 = catalogue)"), 0, 1024, "le_gpn",
        help=_("GPUs joined by the fast link in a node (HGX: 8, GB200 NVL72: 72); groups beyond it use the network"))
    flag(c[1], _("overlap (best case)"), "le_overlap", help=_("communication fully hidden behind compute; off: added"))
    flag(st, _("sequence parallelism"), "le_sp",
         help=_("Megatron SP: norms split by sequence, each all-reduce a reduce-scatter + all-gather"))
    st.caption(_("With every size at 1, the GPUs above are tensor parallel; otherwise TP × PP × EP × DP must "
                 "equal them. Megatron's rank order: TP innermost, then EP, DP, PP."))
    # --- a measured interconnect (issue 13): `python -m gemmlib bench collective` or the Multi-GPU page saves one
    pick(st, _("Links inside a node"), ["catalogue", *(lk.name for lk in measured_links())], "le_link",
         format_func=lambda v: shown(v) if v != "catalogue" else label(v),
         help=_("the catalogue's line rates, or a bus bandwidth and latency measured on this machine"))


def parallel_from_widgets(gpus: int) -> Parallel:
    sizes = {k: ss[f"le_{k}"] for k in ("tp", "pp", "ep", "dp")}
    if all(v == 1 for v in sizes.values()):
        sizes["tp"] = gpus  # the GPUs alone: tensor parallelism, as --gpus N on the command line
    return Parallel(**sizes, gpus_per_node=ss.le_gpn, overlap=ss.le_overlap, sequence_parallel=ss.le_sp)


def _gib(b: float) -> str:
    return f"{b / 2**30:,.2f} GiB"


def _tr(text) -> str:
    """A gemmlib text (a Text, a Msg, a marked constant) in the reader's language; an empty one stays empty
    (gettext("") is the catalogue's header)."""
    return ui.tr(text) if text else text


def _translated(rows: list[dict], *columns: str) -> list[dict]:
    """Table rows with the texts of ``columns`` in the reader's language, before they become a DataFrame
    (pandas stores text columns as plain strings: a Text's message would be lost there)."""
    return [{**r, **{c: _tr(r[c]) for c in columns if c in r}} for r in rows]


def _memory_source(src) -> str:
    """A catalogue row's memory source in the reader's language; its citation (the tool, the issues that
    report the figure: "nvidia-smi, NVIDIA/nccl#1264") shown as written, as code."""
    msg = getattr(src, "msg", None)
    if isinstance(msg, Msg) and isinstance(msg.params.get("source"), str):
        return Msg(msg.template, **{**msg.params, "source": f"`{msg.params['source']}`"}).render(_)
    return ui.tr(src)


def scaleout_tab(est) -> None:
    from gemmlib.charts.scaleout import comm_by_op_spec, per_gpu_memory_spec

    par, pre, dec = est.parallel, est.prefill, est.decode
    st.markdown(_("**TP {tp} × PP {pp} × EP {ep} × DP {dp} = {gpus} × {gpu}**; communication {how}").format(
        tp=par.tp, pp=par.pp, ep=par.ep, dp=par.dp, gpus=est.gpus, gpu=est.hardware.name,
        how=_("overlapped (best case)") if par.overlap else _("not overlapped with compute")))
    k = st.columns(4)
    for i, ph in enumerate((pre, dec)):
        if ph.time_s:
            why = _("compute {compute} + communication {comm}").format(compute=_t(ph.compute_s),
                                                                      comm=_t(ph.communication_s))
            if ph.bubble_s:
                why = _("{time} + pipeline bubble {bubble}").format(time=why, bubble=_t(ph.bubble_s))
            k[2 * i].metric(_("{phase} time").format(phase=label(ph.name)), _t(ph.time_s), help=why)
            k[2 * i + 1].metric(_("{phase} communication").format(phase=label(ph.name)), _t(ph.communication_s),
                                help=_("exposed: on the critical path"))
    groups = est.to_dict()["parallel"]["groups"]
    if groups:
        df = pd.DataFrame(_translated(groups, "link", "source"))
        df["group"] = df["group"].map(lambda g: GROUPS.get(g, g))
        ui.table(df, hide_index=True, width="stretch",
                 column_config={"group": _("group"), "ranks": _("ranks"), "stride": _("stride"), "link": _("link"),
                                "busbw_bytes_per_s": st.column_config.NumberColumn(_("bus bandwidth B/s"),
                                                                                   format="%.3g"),
                                "latency_s": st.column_config.NumberColumn(_("latency s"), format="%.3g"),
                                "source": st.column_config.TextColumn(_("source"), width="large")})
    st.vega_lite_chart(per_gpu_memory_spec(est.per_gpu, est.hardware.name, gettext=_), width="stretch")
    pg = est.per_gpu
    st.caption(_("Weights {weights} (each op's shard), KV cache {kv} (÷ min(TP, KV heads), its stage's layers), "
                 "prefill activations {act}, workspace {work} (10 %: vLLM keeps back 1 − gpu_memory_utilization "
                 "0.9). Largest batch that fits: **{batch:,}**. Memory source: {source}.").format(
        weights=_gib(pg.weights_bytes), kv=_gib(pg.kv_cache_bytes), act=_gib(pg.activation_bytes),
        work=_gib(pg.workspace_bytes), batch=est.max_batch, source=_memory_source(est.hardware.memory_source)))
    if est.gpus > 1:
        st.vega_lite_chart(comm_by_op_spec(est, gettext=_), width="content")
        rows = [{"phase": label(ph.name), **c.to_dict()} for ph in (pre, dec) for c in ph.collectives]
        if rows:
            df = pd.DataFrame(_translated(rows, "link", "note")).drop(columns=["busbw", "latency_s"])
            df["group"] = df["group"].map(lambda g: GROUPS.get(g, g))
            df["after"] = df["after"].map(lambda o: shown(WORD_OPS[o]) if o in WORD_OPS else _tr(o))
            ui.table(df, hide_index=True, width="stretch",
                     column_config={"phase": _("phase"), "op": _("collective"), "after": _("after"),
                                    "group": _("group"), "ranks": _("ranks"), "link": _("link"), "note": _("note"),
                                    "size_bytes": st.column_config.NumberColumn(_("size B"), format="localized"),
                                    "count": st.column_config.NumberColumn(_("count"), format="%.0f"),
                                    "time_s": st.column_config.NumberColumn(_("time s"), format="%.4g")})
        st.caption(_("Each collective costs latency + size × factor / bus bandwidth over the link its group crosses "
                     "(nccl-tests: all-reduce 2(n−1)/n, all-gather / reduce-scatter / all-to-all (n−1)/n); link "
                     "figures are line rates with measured small-message latency; `python -m gemmlib estimate "
                     "--intra-busbw` takes a measured one."))


@st.cache_data(max_entries=32, show_spinner=False)
def _train(cfg, wl, hw, par, gpus, eff, tokens, mb, rc, zero):
    from gemmlib.llm.training import Training

    return estimate(cfg, wl, hw, par, eff, gpus=gpus,
                    training=Training(tokens=float(tokens), micro_batch=mb, recompute=rc, zero=zero)).train


def training_tab(cfg, wl, hw, par, gpus, eff) -> None:
    from gemmlib.charts.scaleout import per_gpu_memory_spec
    from gemmlib.llm.training import LLAMA31_405B as a

    flag(st, _("size a training run (batch × prompt = one step's tokens)"), "le_train")
    c = st.columns(4)
    ui.url(c[0].number_input, _("training tokens D"), 1e6, 1e16, D["le_tokens"], key="le_tokens", format="%.3g",
           help=_("tokens of the whole run"))
    num(c[1], _("micro-batch"), 1, 4096, "le_mb", help=_("sequences per micro-batch"))
    pick(c[2], _("recompute"), RECOMPUTE, "le_rc", format_func=label,
         help=_("full: every layer's forward again (gradient checkpointing)"))
    pick(c[3], "ZeRO", [0, 1, 2, 3], "le_zero", help=_("stages 1–3 shard optimizer, gradients, weights across DP"))
    if not ss.le_train:
        st.info(_("Turn on **size a training run**: the batch is the global batch of one step, the prompt its "
                  "sequence length."))
        return
    with ui.guard(_("the training run")):
        tr = _train(cfg, wl, hw, par, gpus, eff, ss.le_tokens, ss.le_mb, ss.le_rc, ss.le_zero)
        t = tr.to_dict()
        k = st.columns(5)
        k[0].metric(_("step FLOPs"), fmt.si(t["step_flops"]), help=_("forward + backward (input and weight gradient "
                    "of every GEMM) + recomputation, exact"))
        k[1].metric(_("step time"), _t(t["step_time_s"]))
        k[2].metric("MFU", fmt.percent(t["mfu"], 1),
                    help=_("model FLOPs / (step time × GPUs × peak); HFU {hfu}").format(hfu=fmt.percent(t["hfu"], 1)))
        k[3].metric(_("tokens/s"), fmt.si(t["tokens_per_s"]),
                    help=_("{rate} per GPU").format(rate=fmt.si(t["tokens_per_s_per_gpu"])))
        k[4].metric(_("GPU-hours"), fmt.si(t["gpu_hours"]),
                    help=_("{steps:,} steps, {days:.3g} days on {gpus:,} GPUs").format(
                        steps=t["steps"], days=t["run_time_s"] / 86400, gpus=tr.gpus))
        st.markdown(_("Step time **{step}** = compute {compute} + communication {comm} (data parallel {dp}) + "
                      "pipeline bubble {bubble}, over {m} micro-batches per replica. Run FLOPs: exact **{run:.3g}**, "
                      "6·N·D {six:.3g}.").format(
            step=_t(t["step_time_s"]), compute=_t(t["compute_s"]), comm=_t(t["communication_s"]),
            dp=_t(t["dp_communication_s"]), bubble=_t(t["bubble_s"]), m=t["microbatches"], run=t["run_flops"],
            six=t["six_nd_flops"]))
        st.vega_lite_chart(per_gpu_memory_spec(tr.memory, hw.name, N_("per GPU in training"), gettext=_),
                           width="stretch")
        st.caption(_("Mixed-precision AdamW as ZeRO counts it (2Ψ weights + 2Ψ gradients + 12Ψ optimizer), "
                     "activations by Korthikanti et al. 2022; largest micro-batch that fits: {mb}. A published "
                     "anchor: {name}, {tokens:.3g} tokens, {flops:.2g} FLOPs, {hours:.2f} M {gpu} GPU-hours on "
                     "{gpus:,} GPUs at {mfu:.0%} MFU (`benchmarks/bench_scaleout.py` estimates it).").format(
            mb=t["max_micro_batch"], name=ui.tr(a.name), tokens=a.tokens, flops=a.flops, hours=a.gpu_hours / 1e6,
            gpu=a.gpu, gpus=a.gpus, mfu=a.mfu))


@st.cache_data(max_entries=32, show_spinner=False)
def _serve(cfg, wl, hw, par, gpus, eff, tpot_ms):
    return estimate(cfg, wl, hw, par, eff, gpus=gpus, serve=True,
                    tpot_target_s=tpot_ms / 1e3 if tpot_ms else None).serving


def serving_tab(cfg, wl, hw, par, gpus, eff) -> None:
    from gemmlib.charts.scaleout import serving_records, serving_spec

    c = st.columns(2)
    flag(c[0], _("serving curve (prompt + new tokens per request)"), "le_serve")
    ui.url(c[1].number_input, _("TPOT target ms (0 = none)"), 0.0, 10_000.0, D["le_tpot"], key="le_tpot",
           step=5.0, help=_("the best concurrency keeps the time per output token under this"))
    if not ss.le_serve:
        st.info(_("Turn on **serving curve**: throughput, time to first token and per output token from one "
                  "request to the KV-memory limit."))
        return
    with ui.guard(_("the serving curve")):
        sv = _serve(cfg, wl, hw, par, gpus, eff, ss.le_tpot)
        if sv.best:
            b = sv.best
            st.success(_("Best concurrency under {target:g} ms per token: **{n:,}** requests, {rate:,.0f} tokens/s "
                         "({per_gpu:,.0f} per GPU), TTFT {ttft}").format(
                target=ss.le_tpot, n=b.concurrency, rate=b.tokens_per_s, per_gpu=b.tokens_per_s_per_gpu,
                ttft=_t(b.ttft_s)))
        elif ss.le_tpot:
            st.warning(_("No concurrency up to the KV limit ({limit:,}) keeps TPOT under {target:g} ms.").format(
                limit=sv.kv_limit, target=ss.le_tpot))
        st.vega_lite_chart(serving_spec(sv, gettext=_), width="content")
        ui.table(pd.DataFrame(serving_records(sv)), hide_index=True, width="stretch",
                 column_config={"concurrency": _("concurrency"), "tokens/s": _("tokens/s"),
                                "tokens/s per GPU": _("tokens/s per GPU"), "TPOT ms": _("TPOT ms"),
                                "TTFT ms": _("TTFT ms"), "fits": _("fits"), "best": _("best")})
        st.caption(_("Static batching: the requests' prompts are prefilled together (TTFT), then decoded together; "
                     "TPOT is the mean decode step. The KV limit is the largest concurrency whose per-GPU memory "
                     "fits."))


def _custom_features(where, layers: int, heads: int, experts: int) -> dict:
    """The custom model's architecture features (sliding windows, qk-norm, norms, MLA, MoE layout) as
    ModelConfig fields."""
    c = where.columns(2)
    num(c[0], _("sliding window (0 = none)"), 0, 1 << 24, "le_sw", help=_("keys a sliding-window layer attends to"))
    ui.url(c[1].text_input, _("sliding layers"), D["le_swp"], key="le_swp",
           help=_("`all`, `alternate` (layers 0, 2, …), N:M (N sliding then M full, e.g. 5:1 for Gemma 3) or a unit "
                  "of S/F letters"))
    pick(c[0], _("qk-norm"), list(QK_NORMS), "le_qkn", format_func=label,
         help=_("head: one norm of head_dim shared by the heads (Qwen3, Gemma 3); width: over all heads (OLMo 2)"))
    pick(c[1], _("norm"), list(NORM_KINDS), "le_norm", format_func=lambda v: shown(NORM_NAMES[v]))
    pick(c[0], _("norms per layer"), [1, 2, 4], "le_npl",
         help=_("1: a parallel block's shared norm; 4: Gemma's sandwich"))
    flag(c[1], _("parallel attention + MLP"), "le_par", widget="checkbox")
    where.caption(_("MLA (DeepSeek): a compressed KV latent; 0 = ordinary attention"))
    c = where.columns(3)
    num(c[0], _("KV latent rank"), 0, 65536, "le_mla_kv")
    num(c[1], _("query rank"), 0, 65536, "le_mla_q", help=_("0: a plain q_proj (DeepSeek-V2-Lite)"))
    num(c[2], _("rotary dims"), 0, 4096, "le_mla_rope", help=_("qk_rope_head_dim: part of the head dim"))
    num(where, _("value head dim (0 = head dim)"), 0, MAXI["hd"], "le_vhd")
    where.caption(_("Mixture of experts: layout"))
    c = where.columns(2)
    num(c[0], _("expert width (0 = FFN)"), 0, MAXI["ffn"], "le_effn")
    num(c[1], _("shared expert width"), 0, MAXI["ffn"], "le_sffn")
    num(c[0], _("first dense layers"), 0, MAXI["layers"], "le_dense")
    num(c[1], _("MoE every n-th layer"), 1, MAXI["layers"], "le_every")
    flag(where, _("sigmoid gate on the shared expert (Qwen-MoE)"), "le_sgate", widget="checkbox")
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


def _name(name: str) -> str:
    """A model's name as shown: the custom shape's ("custom") in the reader's language, any other as it is."""
    return label(name) if name == "custom" else name


def _show_read(est, expanded: bool) -> None:
    """What was read from the configuration: family, attention pattern, MLA, experts, quantization, dtype,
    and the keys it ignored."""
    r = est.read()
    family = (_("{family} (in {wrapper})").format(family=ui.md(r["family"]), wrapper=ui.md(r["wrapper"]))
              if r.get("wrapper") else ui.md(_name(r["family"])))
    with st.expander(_("What was read: {family}").format(family=family), expanded=expanded):
        att, mla, ex, q, b = r["attention"], r["mla"], r["experts"], r["quantization"], r["block"]
        layers = _("{full} full, {sliding} sliding, {chunked} chunked layers").format(**att)
        if att["window"]:
            layers = _("{layers}; window {window:,}; pattern {pattern}").format(layers=layers, **att)
        experts = fmt.DASH
        if ex:
            experts = _("{experts} experts, top-{per_token}, width {expert_ffn}; {moe_layers} MoE / {dense_layers} "
                        "dense layers ({pattern})").format(**ex)
            if ex["shared_expert_ffn"]:
                experts = _("{experts}; shared expert {width}").format(experts=experts, width=ex["shared_expert_ffn"])
        biases = ", ".join(BIASES.get(x, x) for x in b["biases"]) or label("none")
        rows = [(_("family"), _("{family} — the decoder of {wrapper}").format(family=r["family"], wrapper=r["wrapper"])
                 if r.get("wrapper") else _name(r["family"])),
                (_("attention"), layers),
                ("MLA", fmt.DASH if not mla else
                 _("latent {kv} + rotary {rope} cached per token and layer; query rank {q}").format(
                     kv=mla["kv_lora_rank"], rope=mla["qk_rope_head_dim"], q=mla["q_lora_rank"] or label("none"))),
                (_("experts"), experts),
                (_("quantization"), fmt.DASH if not q else
                 _("{label}; {activations}").format(label=_tr(q["label"]), activations=_tr(q["activations"]))),
                (_("dtype"), _("{dtype}; weights: {source}").format(dtype=r["dtype"] or _("not given"),
                                                                   source=_tr(r["weight_dtype_source"]))),
                (_("checkpoint"), _("{size} of tensors").format(size=fmt.si(r["checkpoint_bytes"], "B"))),
                (_("block"), _("{norm} × {n}, qk-norm {qk}, {layout}, positions {positions}, biases {biases}").format(
                    norm=_(NORM_NAMES.get(b["norm"], b["norm"])), n=b["norms_per_layer"], qk=label(b["qk_norm"]),
                    layout=_("parallel") if b["parallel"] else _("sequential"), positions=label(b["positions"]),
                    biases=biases))]
        # st.table renders Markdown; these cells quote the uploaded file, so they are escaped
        st.table(pd.DataFrame([(k, ui.md(v)) for k, v in rows], columns=["", _("read")]).set_index(""))

        def code(k: str) -> str:  # a config.json key is code, shown as code; one that could break out, escaped
            return f"`{k}`" if re.fullmatch(r"[\w.\-]+", k) else ui.md(k)

        def keys(names) -> str:
            return ", ".join(_("(top level) {key}").format(key=code(k.removeprefix("(top level) ")))
                             if k.startswith("(top level) ") else code(k) for k in names)

        if r["unknown_keys"]:
            st.warning(_("Keys this estimator does not know (ignored): {keys}").format(
                keys=keys(r["unknown_keys"])))
        if r["ignored_keys"]:
            st.caption(_("Ignored (they change no GEMM, parameter or byte): {keys}").format(
                keys=keys(r["ignored_keys"])))
        if r.get("defaults"):
            st.caption(_("Absent, so transformers' defaults apply: {keys}").format(
                keys=", ".join(ui.md(f"{k} = {v}") for k, v in r["defaults"].items())))
        for note in r["notes"]:
            st.caption(ui.md(ui.tr(note)))


# ----------------------------------------------------------------------------- inputs (sidebar)
info: dict = {}
with st.sidebar:
    st.header(_("Model"))
    src = pick(st, _("Source"), SOURCES, "le_src", widget="radio", horizontal=True, format_func=label)
    cfg = None
    with ui.guard(_("the model")):
        if src == "preset":
            name = pick(st, _("Preset"), list(PRESETS), "le_preset")
            cfg = PRESETS[name]
        elif src == "custom":
            c = st.columns(2)
            num(c[0], _("layers"), 1, MAXI["layers"], "le_layers")
            num(c[1], _("hidden size"), 1, MAXI["hidden"], "le_hidden")
            num(c[0], _("query heads"), 1, MAXI["heads"], "le_heads")
            num(c[1], _("KV heads (0 = same)"), 0, MAXI["kv"], "le_kv")
            num(c[0], _("head dim (0 = hidden/heads)"), 0, MAXI["hd"], "le_hd")
            num(c[1], _("FFN width"), 1, MAXI["ffn"], "le_ffn")
            num(c[0], _("vocabulary"), 1, MAXI["vocab"], "le_vocab")
            pick(c[1], "MLP", ["gated", "plain"], "le_mlp", widget="radio", horizontal=True, format_func=label)
            num(c[0], _("experts (0 = dense)"), 0, MAXI["experts"], "le_experts")
            num(c[1], _("experts per token"), 0, MAXI["topk"], "le_topk")
            flag(st, _("tied embeddings (LM head = embedding)"), "le_tied", widget="checkbox")
            with st.expander(_("More architecture: sliding windows, MLA, shared experts, norms")):
                extra = _custom_features(st, ss.le_layers, ss.le_heads, ss.le_experts)
            cfg = ModelConfig(**{**dict(layers=ss.le_layers, hidden=ss.le_hidden, heads=ss.le_heads,
                                        kv_heads=ss.le_kv, head_dim=ss.le_hd, ffn=ss.le_ffn, vocab=ss.le_vocab,
                                        mlp=ss.le_mlp, tied_embeddings=ss.le_tied, experts=ss.le_experts,
                                        experts_per_token=ss.le_topk), **extra})
        else:
            up = st.file_uploader(_("A Hugging Face config.json"), type=["json"], key="le_upload",
                                  help=_("Only plain fields are read; nothing is executed. Families: {families}. A "
                                         "quantization_config sizes the weights exactly; torch_dtype is the default "
                                         "weight dtype.").format(families=", ".join(f"`{t}`" for t in SUPPORTED_MODEL_TYPES)))
            if up is None:
                st.info(_("Upload a config.json, or pick a preset."))
            else:
                if up.size > MAX_CONFIG_BYTES:
                    from gemmlib.core.errors import InputError

                    raise InputError(N_("{name} is {size:,} bytes; a config.json is a few kB (limit {limit:,})"),
                                     name=up.name, size=up.size, limit=MAX_CONFIG_BYTES)
                cfg, info = _parse_upload(up.getvalue(), up.name.removesuffix(".json"))
                st.success(_("Read {file}: {params:,} parameters ({family})").format(
                    file=ui.md(up.name), params=cfg.params, family=ui.md(cfg.family)))
                ss.le_good_upload = (cfg, info)
    if cfg is None and src == "config.json" and ss.get("le_good_upload") is not None:
        cfg, info = ss.le_good_upload  # a bad upload keeps the last model that worked, as the other pages do
        st.info(_("Showing the last config.json that worked ({name}).").format(name=ui.md(cfg.name)))

    st.header(_("Workload"))
    c = st.columns(3)
    num(c[0], _("batch"), 1, MAXI["batch"], "le_batch", help=_("concurrent sequences"))
    num(c[1], _("prompt"), 1, MAXI["seq"], "le_seq", help=_("prompt tokens per sequence"))
    num(c[2], _("new tokens"), 0, MAXI["new"], "le_new",
        help=_("decode steps after the prefill; step i sees prompt + i cached tokens"))
    flag(st, _("decode only: the prompt is already cached (no prefill)"), "le_ctx",
         help=_("one decode question: `--context C` on the command line (new tokens = decode steps, at least 1)"))
    c = st.columns(2)
    pick(c[0], _("attention"), list(ATTENTION_KINDS), "le_attn", widget="radio", horizontal=True, format_func=label,
         help=_("eager: the S×S scores go through memory; fused (flash / SDPA): they stay on chip — same FLOPs"))
    pick(c[1], _("MLA decode"), list(MLA_FORMS), "le_mla", widget="radio", horizontal=True, format_func=label,
         help=_("DeepSeek-style MLA only: eager (transformers decompresses the whole cache every step) or "
                "absorbed (serving engines fold kv_b_proj into the query and the output)"))
    c = st.columns(2)  # two per row: three would cut the names ("bf1")
    pick(c[0], _("weights"), WDT, "le_wdt", format_func=label,
         help=_("'from the config': the model's torch_dtype (bf16 when it gives none). int4 and fp4 are block-scaled "
                "formats of the decoder's linears; a quantized config keeps its own format."))
    pick(c[1], _("activations"), DT, "le_adt", help=_("the GEMMs run at this dtype's peak"))
    pick(c[0], _("KV cache"), DT, "le_kvdt")
    st.caption(_("Counting switches (the default is what an eager forward pass executes)"))
    flag(st, _("causal attention counting (lower triangle)"), "le_causal")
    flag(st, _("LM head on the last position only"), "le_last")
    flag(st, _("show MACs instead of FLOPs"), "le_macs")

    st.header(_("Hardware"))
    pick(st, "GPU", list(HW), "le_gpu", help=_("datasheet rows; rows named `(measured)` come from the Devices page"))
    c = st.columns(2)
    num(c[0], "GPUs", 1, MAXI["gpus"], "le_gpus",
        help=_("alone: tensor parallelism over N GPUs; with the parallel sizes below: their product"))
    ui.url(c[1].slider, _("efficiency"), 0.05, 1.0, D["le_eff"], step=0.05, key="le_eff",
           help=_("share of peak and bandwidth a real kernel reaches"))
    flag(st, _("compare with a second configuration (B)"), "le_cmp")
    scaleout_sidebar()

def _memory_words(est) -> str:
    """How the memory figures are made, in words with this model's numbers."""
    m, wl, mem = est.model, est.workload, est.memory
    q = m.quant
    if q is not None:
        weights = _("the checkpoint's tensors, quantized linears in {quant}, the rest at {dtype}").format(
            quant=ui.tr(q.label), dtype=wl.weight_dtype)
    elif wl.weight_dtype in WEIGHT_FORMATS:
        weights = _("the decoder's linears in {fmt} with their block scales, the rest at {dtype}").format(
            fmt=wl.weight_dtype, dtype=m.dtype or "bf16")
    else:
        weights = _("{params:,} parameters × {bytes:g} B").format(params=m.params,
                                                                 bytes=DTYPES[wl.weight_dtype].bytes)
    text = _("Weights: {weights} = **{size}**").format(weights=weights, size=fmt.si(mem.weights_bytes, "B"))
    if m.mtp_layers:
        text = _("{text} (multi-token-prediction layers, stored in the checkpoint, are not loaded)").format(text=text)
    per = (_("the MLA latent + rotary key ({n} elements)").format(n=m.kv_elements_per_token_layer) if m.is_mla else
           _("K and V of {heads} heads × ({k} + {v}) dims").format(heads=m.kv_cache_heads, k=m.head_dim,
                                                                   v=m.v_head_dim))
    kv = _("KV cache: {per} per token and layer, × {bytes:g} B × batch {batch} × {tokens:,} tokens").format(
        per=per, bytes=DTYPES[wl.kv_dtype].bytes, batch=wl.batch, tokens=wl.final_tokens)
    if m.sliding_window:
        kv = _("{kv}; {n} sliding layers keep only the last {keep:,} tokens").format(
            kv=kv, n=m.windowed_layers, keep=m.sliding_window - 1)
    return _("{weights}. {kv} = **{size}**. Activations and framework overhead come on top.").format(
        weights=text, kv=kv, size=fmt.si(mem.kv_cache_bytes, "B"))


# ----------------------------------------------------------------------------- results
TABS = [N_("FLOPs by op"), N_("Memory"), N_("Roofline"), N_("Scale-out"), N_("Training"), N_("Serving"),
        N_("Switches & rules of thumb"), N_("A vs B"), N_("Download")]
OPS_COLUMNS = {"phase": N_("phase"), "op": N_("op"), "kind": N_("kind"), "count": N_("count"), "bytes": N_("bytes"),
               "weight bytes": N_("weight bytes"), "activation bytes": N_("activation bytes"),
               "KV bytes": N_("KV bytes"), "FLOP/byte": N_("FLOP/byte"), "bound": N_("bound"), "time": N_("time"),
               "note": N_("note")}
VARIANT_COLUMNS = {"variant": N_("variant"), "causal": N_("causal"), "lm_head": "lm_head", "selected": N_("selected"),
                   "prefill_flops": N_("prefill FLOPs"), "prefill_macs": N_("prefill MACs"),
                   "decode_flops": N_("decode FLOPs"), "decode_macs": N_("decode MACs")}

est = views = None
if cfg is not None:
    with ui.guard(_("the estimate")):
        wdt = (cfg.dtype or "bf16") if ss.le_wdt == "config" else ss.le_wdt
        wl = Workload(batch=ss.le_batch, seq_len=ss.le_seq, new_tokens=max(ss.le_new, 1) if ss.le_ctx else ss.le_new,
                      causal=ss.le_causal, lm_head="last" if ss.le_last else "all", weight_dtype=wdt,
                      act_dtype=ss.le_adt, kv_dtype=ss.le_kvdt, attention=ss.le_attn, decode_only=ss.le_ctx,
                      mla=ss.le_mla)
        hw = HW[ss.le_gpu]
        par = parallel_from_widgets(ss.le_gpus)
        if ss.le_link != "catalogue":
            hw = hardware_with(hw, ss.le_link, par.gpus)[0]
        est = _estimate(cfg, wl, hw, par, ss.le_gpus, ss.le_eff, info)
        views = _views(cfg, wl, hw, par, ss.le_gpus, ss.le_eff, ss.le_macs, info, ui.lang())

if est is not None and views is not None:
    with ui.guard(_("the results")):
        unit, div = ("MAC", 2) if ss.le_macs else ("FLOP", 1)
        m = est.model
        line = _("**{name}** — {params:,} parameters").format(name=ui.md(_name(m.name)), params=m.params)
        if m.is_moe:
            line = _("{line} ({active:,} active per token)").format(line=line, active=m.active_params)
        line = _("{line}; {layers} layers, hidden {hidden}, {heads} heads / {kv} KV, head dim {hd}, FFN {ffn} ({mlp}), "
                 "vocab {vocab:,}").format(line=line, layers=m.layers, hidden=m.hidden, heads=m.heads, kv=m.kv_heads,
                                           hd=m.head_dim, ffn=m.ffn, mlp=label(m.mlp), vocab=m.vocab)
        if m.is_moe:
            line = _("{line}, {experts} experts, top-{k}").format(line=line, experts=m.experts, k=m.experts_per_token)
        st.markdown(line + (f" · [config.json]({m.source})" if m.source else ""))
        _show_read(est, expanded=src == "config.json")
        for w in est.to_dict()["warnings"]:
            st.warning(ui.tr(w))
        t = est.times()
        mem = est.memory
        pg = est.per_gpu
        # the times first, with what they assume, and whether the model fits beside them
        st.markdown(_("**Predicted on {gpus} × {gpu} · {dtype} · {efficiency} of peak and bandwidth** (roofline: "
                      "each op at max(FLOPs / peak, bytes / bandwidth); change the efficiency in the sidebar)").format(
            gpus=est.gpus, gpu=est.hardware.name, dtype=est.compute_dtype, efficiency=fmt.percent(est.efficiency, 0)))
        k = st.columns([1, 1, 1, 2])
        k[0].metric(_("time to first token"), _t(t["ttft_s"]))
        k[1].metric(_("per output token"), _t(t["time_per_output_token_s"]))
        k[2].metric(_("decode tokens/s"), fmt.si(t["decode_tokens_per_s"]),
                    help=_("generated tokens per second, whole batch"))
        if pg.fits:
            k[3].success(_("Fits: {need} per GPU of its {have} (weights, the KV cache at the end, activations and "
                           "workspace).").format(need=fmt.si(pg.total_bytes, "B"), have=fmt.si(pg.capacity_bytes, "B")))
        else:
            k[3].warning(_("Does not fit: {need} needed per GPU, {have} on each {gpu} ({gpus} in all); it needs at "
                           "least {min} of them. The times assume it fits.").format(
                need=fmt.si(pg.total_bytes, "B"), have=fmt.si(pg.capacity_bytes, "B"), gpu=est.hardware.name,
                gpus=est.gpus, min=mem.min_gpus))
        k = st.columns(4)
        k[0].metric(_("prefill {unit}s").format(unit=unit), fmt.si(est.prefill.flops / div),
                    help=_("exactly {n}").format(n=fmt.count(est.prefill.flops // div)))
        k[1].metric(_("decode {unit}s").format(unit=unit), fmt.si(est.decode.flops / div),
                    help=_("all decode steps, whole batch: exactly {n}").format(n=fmt.count(est.decode.flops // div)))
        share = est.prefill.gemm_share_of_time
        why = _("the GEMMs' share of the predicted prefill time; the rest is norms, softmax, activation, residual adds "
                "and the like (memory-bound).")
        if est.prefill.gemm_share_of_flops is not None:
            why = _("{why} Of the FLOPs, GEMMs are {share}.").format(
                why=why, share=fmt.percent(est.prefill.gemm_share_of_flops, 2))
        else:
            why = _("{why} (No prefill: decode only.)").format(why=why)
        k[3].metric(_("GEMM share of prefill time"), fmt.percent(share, 0), help=why)
        k[2].metric(_("memory per GPU"), fmt.si(pg.total_bytes, "B"),
                    delta=_("fits") if pg.fits else _("does not fit"), delta_color="normal" if pg.fits else "inverse",
                    help=_("weights, KV cache at the end, prefill activations and workspace on the busiest GPU, "
                           "against its {have}; the whole job needs {need} of weights and KV cache").format(
                        have=fmt.si(pg.capacity_bytes, "B"), need=fmt.si(mem.total_bytes, "B")))

        tabs = ui.tabs(TABS, key="le_tab")  # ?le_tab=Roofline opens that tab, in either language
        with tabs[0]:
            st.vega_lite_chart(views["flops"], width="stretch")
            df = pd.DataFrame(_translated(views["ops"], "note")).drop(columns=["value"], errors="ignore")
            df["time"] = df.pop("time_s").map(fmt.duration)
            for col in ("phase", "kind", "bound"):
                df[col] = df[col].map(label)
            df["op"] = df["op"].map(lambda o: shown(WORD_OPS[o]) if o in WORD_OPS else o)
            ui.table(df, {c: "count" for c in ("count", "FLOPs", "MACs", "bytes", "weight bytes", "activation bytes",
                                               "KV bytes")}, width="stretch",  # counts are exact: every digit
                     column_config={c: _(h) for c, h in OPS_COLUMNS.items()})
            st.caption(_("Attention ops run once per layer, sequence and query head (GQA shrinks k_proj, v_proj and "
                         "the KV cache, not the products). Decode rows sum every step; N..N' is the key count at the "
                         "first and the last step. A MoE's expert GEMMs run k times per token."))
        with tabs[1]:
            st.vega_lite_chart(views["memory"], width="stretch")
            st.markdown(_memory_words(est))
        with tabs[2]:
            st.vega_lite_chart(views["roofline"], width="stretch")
            st.caption(_("Each op's predicted time is max(FLOPs / peak, bytes / bandwidth), both derated by the "
                         "efficiency. Decode GEMMs with one token per sequence sit far left of the ridge: they are "
                         "bound by reading the weights, which is why batching pays at decode."))
        with tabs[3]:
            scaleout_tab(est)
        with tabs[4]:
            training_tab(cfg, wl, hw, par, ss.le_gpus, ss.le_eff)
        with tabs[5]:
            serving_tab(cfg, wl, hw, par, ss.le_gpus, ss.le_eff)
        with tabs[6]:
            st.markdown(_("**Counting switches** (the highlighted row is the one selected)"))
            variants = pd.DataFrame(_translated(views["variants"], "variant"))
            variants["lm_head"] = variants["lm_head"].map(label)
            ui.table(variants, {c: "count" for c in ("prefill_flops", "prefill_macs", "decode_flops", "decode_macs")},
                     width="stretch", column_config={c: _(h) for c, h in VARIANT_COLUMNS.items()})
            st.markdown(_("**The article's rules of thumb** against the exact prefill count"))
            if not views["rules"]:
                st.info(_("No prefill in a decode-only workload: the rules of thumb size a prefill."))
            rules = pd.DataFrame(_translated(views["rules"], "rule", "reason"),
                                 columns=["rule", "value", "exact", "ratio", "reason"])
            ui.table(rules, {"value": "number", "exact": "count"}, width="stretch",
                     column_config={"rule": _("rule"), "value": _("value"), "exact": _("exact"),
                                    "ratio": st.column_config.NumberColumn(_("exact / rule"), format="%.3g"),
                                    "reason": st.column_config.TextColumn(_("reason"), width="large")})
        with tabs[7]:
            if not ss.le_cmp:
                st.info(_("Turn on **compare with a second configuration (B)** in the sidebar."))
            else:
                c = st.columns([2, 1, 1, 1, 1, 2, 1])  # room for the names
                pick(c[0], _("B preset"), list(PRESETS), "le_b_preset")
                num(c[1], _("B batch"), 1, MAXI["batch"], "le_b_batch")
                num(c[2], _("B prompt"), 1, MAXI["seq"], "le_b_seq")
                num(c[3], _("B new tokens"), 0, MAXI["new"], "le_b_new")
                pick(c[4], _("B weights"), DT, "le_b_wdt")
                pick(c[5], _("B GPU"), list(HW), "le_b_gpu")
                num(c[6], _("B GPUs"), 1, MAXI["gpus"], "le_b_gpus")
                with ui.guard(_("configuration B")):
                    wl_b = Workload(batch=ss.le_b_batch, seq_len=ss.le_b_seq, new_tokens=ss.le_b_new,
                                    causal=ss.le_causal, lm_head="last" if ss.le_last else "all",
                                    weight_dtype=ss.le_b_wdt, act_dtype=ss.le_adt, kv_dtype=ss.le_kvdt)
                    est_b = _estimate(PRESETS[ss.le_b_preset], wl_b, HW[ss.le_b_gpu], Parallel(tp=ss.le_b_gpus),
                                      ss.le_b_gpus, ss.le_eff)
                    cmp = pd.DataFrame(compare_rows(est, est_b))
                    cmp["quantity"] = cmp["quantity"].map(_)
                    for col in ("A", "B"):
                        cmp[col] = cmp[col].map(lambda v: _(v) if v in ui.FLAGS else v)  # fits: yes / no
                    ui.table(cmp.rename(columns={"quantity": _("quantity")}).set_index(_("quantity")),
                             hide_index=False, width="stretch")
                    st.vega_lite_chart(compare_spec(est, est_b, macs=ss.le_macs, gettext=_), width="content")
        with tabs[8]:
            stem = f"estimate_{m.name}_b{est.workload.batch}_s{est.workload.seq_len}_n{est.workload.new_tokens}"
            c = st.columns(2)
            c[0].download_button(_("Ops as CSV"), pd.DataFrame(views["ops"]).to_csv(index=False), f"{stem}.csv",
                                 "text/csv", key="le_dl_csv")
            c[1].download_button(_("Everything as JSON"), views["json"], f"{stem}.json", "application/json",
                                 key="le_dl_json")
            st.caption(_("The JSON holds the same object as `python -m gemmlib estimate --json`. This view's settings "
                         "are in the page's URL: copy it to share the view (an uploaded config.json is not part of the "
                         "link)."))
