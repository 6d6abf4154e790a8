"""LLM Estimator: what does this model cost on this GPU at this batch and context?

Every number comes from ``gemmlib.llm.accounting`` (the same code path as
``python -m gemmlib estimate``); this page reads widgets, calls it, and draws.
Settings live in the URL, so a view can be shared as a link.
"""

import pandas as pd
import streamlit as st

import ui
from gemmlib.charts.model import (
    arrow_safe,
    compare_spec,
    flops_by_op_spec,
    memory_spec,
    ops_records,
    roofline_spec,
    summary_row,
)
from gemmlib.core.dtypes import DTYPES
from gemmlib.core.hardware import CATALOGUE, DEFAULT_GPU, Hardware
from gemmlib.llm.accounting import Workload, estimate
from gemmlib.llm.config import ModelConfig
from gemmlib.llm.hf import MAX_CONFIG_BYTES, parse_config_json
from gemmlib.llm.presets import DEFAULT_PRESET, PRESETS

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

# ----------------------------------------------------------------------------- URL-bound state
URL_KEYS: list[str] = []


def B(key, default, cast, valid=None):  # noqa: N802 - short on purpose: ui.bound, remembering the key
    URL_KEYS.append(key)
    return ui.bound(key, default, cast, valid)


B("le_src", "preset", str, lambda v: v in SOURCES)
B("le_preset", DEFAULT_PRESET, str, lambda v: v in PRESETS)
for key, default, hi in (("le_layers", base.layers, MAXI["layers"]), ("le_hidden", base.hidden, MAXI["hidden"]),
                         ("le_heads", base.heads, MAXI["heads"]), ("le_ffn", base.ffn, MAXI["ffn"]),
                         ("le_vocab", base.vocab, MAXI["vocab"]), ("le_batch", 1, MAXI["batch"]),
                         ("le_seq", 1024, MAXI["seq"]), ("le_gpus", 1, MAXI["gpus"])):
    B(key, default, int, lambda v, hi=hi: 1 <= v <= hi)
for key, default, hi in (("le_kv", base.kv_heads, MAXI["kv"]), ("le_hd", 0, MAXI["hd"]),
                         ("le_experts", 0, MAXI["experts"]), ("le_topk", 0, MAXI["topk"]),
                         ("le_new", 256, MAXI["new"])):
    B(key, default, int, lambda v, hi=hi: 0 <= v <= hi)
B("le_mlp", "gated", str, lambda v: v in ("gated", "plain"))
for key in ("le_tied", "le_causal", "le_last", "le_macs", "le_cmp"):
    B(key, False, bool)
for key in ("le_wdt", "le_adt", "le_kvdt"):
    B(key, "bf16", str, lambda v: v in DT)
B("le_gpu", DEFAULT_GPU, str, lambda v: v in HW)
B("le_eff", 1.0, float, lambda v: 0.05 <= v <= 1.0)
# B configuration of the comparison: overrides of A
B("le_b_preset", "llama-3-70b", str, lambda v: v in PRESETS)
B("le_b_batch", 1, int, lambda v: 1 <= v <= MAXI["batch"])
B("le_b_seq", 1024, int, lambda v: 1 <= v <= MAXI["seq"])
B("le_b_new", 256, int, lambda v: 0 <= v <= MAXI["new"])
B("le_b_wdt", "bf16", str, lambda v: v in DT)
B("le_b_gpu", "H200 SXM", str, lambda v: v in HW)
B("le_b_gpus", 2, int, lambda v: 1 <= v <= MAXI["gpus"])

ss = st.session_state


def _t(seconds):
    """A duration with a readable unit."""
    if seconds is None:
        return "—"
    for scale, unit in ((1, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


@st.cache_data(max_entries=16, show_spinner=False)
def _parse_upload(data: bytes, name: str) -> ModelConfig:
    return parse_config_json(data, name=name)


@st.cache_data(max_entries=128, show_spinner=False)
def _estimate(cfg: ModelConfig, wl: Workload, hw: Hardware, gpus: int, eff: float):
    return estimate(cfg, wl, hw, gpus=gpus, efficiency=eff)


@st.cache_data(max_entries=128, show_spinner=False)
def _views(cfg: ModelConfig, wl: Workload, hw: Hardware, gpus: int, eff: float, macs: bool) -> dict:
    est = _estimate(cfg, wl, hw, gpus, eff)
    d = est.to_dict()
    return {
        "flops": flops_by_op_spec(est, macs), "memory": memory_spec(est), "roofline": roofline_spec(est),
        "ops": arrow_safe(ops_records(est, macs)), "json": est.to_json(indent=1),
        "variants": arrow_safe(d["variants"]), "rules": arrow_safe(d["rules_of_thumb"]),
    }


# ----------------------------------------------------------------------------- inputs (sidebar)
with st.sidebar:
    st.header("Model")
    src = st.radio("Source", SOURCES, key="le_src", horizontal=True)
    cfg = None
    with ui.guard("the model"):
        if src == "preset":
            name = st.selectbox("Preset", list(PRESETS), key="le_preset")
            cfg = PRESETS[name]
        elif src == "custom":
            c = st.columns(2)
            c[0].number_input("layers", 1, MAXI["layers"], key="le_layers")
            c[1].number_input("hidden size", 1, MAXI["hidden"], key="le_hidden")
            c[0].number_input("query heads", 1, MAXI["heads"], key="le_heads")
            c[1].number_input("KV heads (0 = same)", 0, MAXI["kv"], key="le_kv")
            c[0].number_input("head dim (0 = hidden/heads)", 0, MAXI["hd"], key="le_hd")
            c[1].number_input("FFN width", 1, MAXI["ffn"], key="le_ffn")
            c[0].number_input("vocabulary", 1, MAXI["vocab"], key="le_vocab")
            c[1].radio("MLP", ["gated", "plain"], key="le_mlp", horizontal=True)
            c[0].number_input("experts (0 = dense)", 0, MAXI["experts"], key="le_experts")
            c[1].number_input("experts per token", 0, MAXI["topk"], key="le_topk")
            st.checkbox("tied embeddings (LM head = embedding)", key="le_tied")
            cfg = ModelConfig(layers=ss.le_layers, hidden=ss.le_hidden, heads=ss.le_heads, kv_heads=ss.le_kv,
                              head_dim=ss.le_hd, ffn=ss.le_ffn, vocab=ss.le_vocab, mlp=ss.le_mlp,
                              tied_embeddings=ss.le_tied, experts=ss.le_experts, experts_per_token=ss.le_topk)
        else:
            up = st.file_uploader("A Hugging Face config.json", type=["json"], key="le_upload",
                                  help="Only plain fields are read (llama, mistral, mixtral, qwen2, gpt2); "
                                       "nothing is executed.")
            if up is None:
                st.info("Upload a config.json, or pick a preset.")
            else:
                if up.size > MAX_CONFIG_BYTES:
                    from gemmlib.core.errors import InputError

                    raise InputError(f"{up.name} is {up.size:,} bytes; a config.json is a few kB "
                                     f"(limit {MAX_CONFIG_BYTES:,})")
                cfg = _parse_upload(up.getvalue(), up.name.removesuffix(".json"))
                st.success(f"Read {up.name}: {cfg.params:,} parameters")

    st.header("Workload")
    c = st.columns(3)
    c[0].number_input("batch", 1, MAXI["batch"], key="le_batch", help="concurrent sequences")
    c[1].number_input("prompt", 1, MAXI["seq"], key="le_seq", help="prompt tokens per sequence")
    c[2].number_input("new tokens", 0, MAXI["new"], key="le_new",
                      help="decode steps after the prefill; step i sees prompt + i cached tokens")
    c = st.columns(3)
    c[0].selectbox("weights", DT, key="le_wdt")
    c[1].selectbox("activations", DT, key="le_adt", help="the GEMMs run at this dtype's peak")
    c[2].selectbox("KV cache", DT, key="le_kvdt")
    st.caption("Counting switches (the default is what an eager forward pass executes)")
    st.toggle("causal attention counting (lower triangle)", key="le_causal")
    st.toggle("LM head on the last position only", key="le_last")
    st.toggle("show MACs instead of FLOPs", key="le_macs")

    st.header("Hardware")
    st.selectbox("GPU", list(HW), key="le_gpu",
                 help="datasheet rows; rows named '(measured)' come from the Devices page")
    c = st.columns(2)
    c[0].number_input("GPUs", 1, MAXI["gpus"], key="le_gpus", help="ideal tensor parallelism: N× peak and bandwidth")
    c[1].slider("efficiency", 0.05, 1.0, step=0.05, key="le_eff",
                help="share of peak and bandwidth a real kernel reaches")
    st.toggle("compare with a second configuration (B)", key="le_cmp")

ui.push_query(URL_KEYS)

# ----------------------------------------------------------------------------- results
est = views = None
if cfg is not None:
    with ui.guard("the estimate"):
        wl = Workload(batch=ss.le_batch, seq_len=ss.le_seq, new_tokens=ss.le_new, causal=ss.le_causal,
                      lm_head="last" if ss.le_last else "all", weight_dtype=ss.le_wdt, act_dtype=ss.le_adt,
                      kv_dtype=ss.le_kvdt)
        hw = HW[ss.le_gpu]
        est = _estimate(cfg, wl, hw, ss.le_gpus, ss.le_eff)
        views = _views(cfg, wl, hw, ss.le_gpus, ss.le_eff, ss.le_macs)

if est is not None and views is not None:
    with ui.guard("the results"):
        unit, div = ("MAC", 2) if ss.le_macs else ("FLOP", 1)
        m = est.model
        src_note = f" · [config.json]({m.source})" if m.source else ""
        st.markdown(
            f"**{m.name}** — {m.params:,} parameters"
            + (f" ({m.active_params:,} active per token)" if m.is_moe else "")
            + f"; {m.layers} layers, hidden {m.hidden}, {m.heads} heads / {m.kv_heads} KV, head dim {m.head_dim}, "
            f"FFN {m.ffn} ({m.mlp}), vocab {m.vocab:,}"
            + (f", {m.experts} experts, top-{m.experts_per_token}" if m.is_moe else "") + src_note)
        t = est.times()
        k = st.columns(6)
        k[0].metric(f"prefill {unit}s", ui.fmt_si(est.prefill.flops / div))
        k[1].metric(f"decode {unit}s", ui.fmt_si(est.decode.flops / div), help="all decode steps, whole batch")
        k[2].metric("time to first token", _t(t["ttft_s"]))
        k[3].metric("per output token", _t(t["time_per_output_token_s"]))
        k[4].metric("decode tokens/s", ui.fmt_si(t["decode_tokens_per_s"]), help="generated tokens per second, whole batch")
        mem = est.memory
        k[5].metric("memory", ui.fmt_si(mem.total_bytes, "B"),
                    delta="fits" if mem.fits else f"needs ≥ {mem.min_gpus} GPUs",
                    delta_color="normal" if mem.fits else "inverse",
                    help="weights + KV cache at the end, against the GPUs' memory")

        tabs = st.tabs(["FLOPs by op", "Memory", "Roofline", "Switches & rules of thumb", "A vs B", "Download"])
        with tabs[0]:
            st.vega_lite_chart(views["flops"], width="stretch")
            df = pd.DataFrame(views["ops"]).drop(columns=["value"], errors="ignore")
            st.dataframe(df, hide_index=True, width="stretch",
                         column_config={  # counts are exact integers: show every digit
                             **{c: st.column_config.NumberColumn(format="localized")
                                for c in ("FLOPs", "MACs", "bytes", "weight bytes", "activation bytes", "KV bytes")},
                             **{c: st.column_config.NumberColumn(format="%.4g") for c in ("FLOP/byte", "time_s")}})
            st.caption("Attention ops run once per layer, sequence and query head (GQA shrinks k_proj, v_proj "
                       "and the KV cache, not the products). Decode rows sum every step; N..N' is the key count "
                       "at the first and the last step. A MoE's expert GEMMs run k times per token.")
        with tabs[1]:
            st.vega_lite_chart(views["memory"], width="stretch")
            st.markdown(
                f"Weights: {m.params:,} parameters × {DTYPES[est.workload.weight_dtype].bytes:g} B = "
                f"**{ui.fmt_si(mem.weights_bytes, 'B')}**. KV cache: 2 (K and V) × {m.layers} layers × "
                f"{m.kv_heads} KV heads × {m.head_dim} head dim × {DTYPES[est.workload.kv_dtype].bytes:g} B × "
                f"batch {est.workload.batch} × {est.workload.final_tokens:,} tokens = "
                f"**{ui.fmt_si(mem.kv_cache_bytes, 'B')}**. Activations and framework overhead come on top.")
        with tabs[2]:
            st.vega_lite_chart(views["roofline"], width="stretch")
            st.caption("Each op's predicted time is max(FLOPs / peak, bytes / bandwidth), both derated by the "
                       "efficiency. Decode GEMMs with one token per sequence sit far left of the ridge: they are "
                       "bound by reading the weights, which is why batching pays at decode.")
        with tabs[3]:
            st.markdown("**Counting switches** (the highlighted row is the one selected)")
            st.dataframe(pd.DataFrame(views["variants"]), hide_index=True, width="stretch",
                         column_config={c: st.column_config.NumberColumn(format="localized")
                                        for c in ("prefill_flops", "prefill_macs", "decode_flops", "decode_macs")})
            st.markdown("**The article's rules of thumb** against the exact prefill count")
            st.dataframe(pd.DataFrame(views["rules"])[["rule", "value", "exact", "ratio", "reason"]],
                         hide_index=True, width="stretch",
                         column_config={"value": st.column_config.NumberColumn(format="%.4g"),
                                        "exact": st.column_config.NumberColumn(format="localized"),
                                        "ratio": st.column_config.NumberColumn("exact / rule", format="%.3g"),
                                        "reason": st.column_config.TextColumn(width="large")})
        with tabs[4]:
            if not ss.le_cmp:
                st.info("Turn on **compare with a second configuration (B)** in the sidebar.")
            else:
                c = st.columns(7)
                c[0].selectbox("B preset", list(PRESETS), key="le_b_preset")
                c[1].number_input("B batch", 1, MAXI["batch"], key="le_b_batch")
                c[2].number_input("B prompt", 1, MAXI["seq"], key="le_b_seq")
                c[3].number_input("B new tokens", 0, MAXI["new"], key="le_b_new")
                c[4].selectbox("B weights", DT, key="le_b_wdt")
                c[5].selectbox("B GPU", list(HW), key="le_b_gpu")
                c[6].number_input("B GPUs", 1, MAXI["gpus"], key="le_b_gpus")
                ui.push_query([k for k in URL_KEYS if k.startswith("le_b_")])
                with ui.guard("configuration B"):
                    wl_b = Workload(batch=ss.le_b_batch, seq_len=ss.le_b_seq, new_tokens=ss.le_b_new,
                                    causal=ss.le_causal, lm_head="last" if ss.le_last else "all",
                                    weight_dtype=ss.le_b_wdt, act_dtype=ss.le_adt, kv_dtype=ss.le_kvdt)
                    est_b = _estimate(PRESETS[ss.le_b_preset], wl_b, HW[ss.le_b_gpu], ss.le_b_gpus, ss.le_eff)
                    table = pd.DataFrame({"A": summary_row(est), "B": summary_row(est_b)})
                    st.dataframe(table.astype(str), width="stretch")
                    st.vega_lite_chart(compare_spec(est, est_b, macs=ss.le_macs), width="content")
        with tabs[5]:
            stem = f"estimate_{m.name}_b{est.workload.batch}_s{est.workload.seq_len}_n{est.workload.new_tokens}"
            c = st.columns(2)
            c[0].download_button("Ops as CSV", pd.DataFrame(views["ops"]).to_csv(index=False), f"{stem}.csv",
                                 "text/csv", key="le_dl_csv")
            c[1].download_button("Everything as JSON", views["json"], f"{stem}.json", "application/json",
                                 key="le_dl_json")
            st.caption("The JSON holds the same object as `python -m gemmlib estimate --json`. "
                       "This view's settings are in the page's URL: copy it to share the view "
                       "(an uploaded config.json is not part of the link).")
