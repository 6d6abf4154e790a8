"""What a checkpoint of a :class:`ModelConfig` stores, and its exact size in bytes.

:func:`stored_linears` lists every linear layer as the family's checkpoint names it (``q_proj`` or a
fused ``qkv_proj`` / ``query_key_value`` / ``c_attn``, MLA's ``q_a_proj`` ... ``kv_b_proj``, each routed
expert, the shared experts, the router, the LM head); :func:`stored_params` the rest (embeddings,
norms, qk-norm weights, sinks, expert and router biases, score-bias buffers, the MTP layers' extras).
:func:`checkpoint_size` sums them: every unquantized tensor at the checkpoint dtype, every linear the
quantization quantizes in its format's layout (``gemmlib.llm.quant``). :func:`op_weight_bytes` gives
the bytes of each op's weight matrix, which the accounting reads once per run.

This module never imports torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_
from gemmlib.llm.config import ATTENTION_LETTERS, INDEXER_LETTERS, ModelConfig
from gemmlib.llm.quant import (
    STORAGE_BYTES,
    WEIGHT_FORMATS,
    Quantization,
    for_weight_dtype,
    storage_dtype,
    weight_dtype_name,
)
from gemmlib.llm.ssm import MIXER_LETTERS

# Weight dtypes stored as block-scaled formats (a Quantization) rather than one size per element.
BLOCK_SCALED = WEIGHT_FORMATS
# 8-bit weight dtypes of a 16/32-bit checkpoint: an engine's quantization of the decoder's linears (for_weight_dtype)
QUANTIZED_8BIT = ("fp8", "int8")


@dataclass(frozen=True)
class Linear:
    """A stored linear layer (``count`` identical ones: the routed experts of a layer).

    ``ops`` are the accounting ops it serves with the rows (output features) each takes: a fused
    q|k|v matrix serves q_proj, k_proj and v_proj.
    """

    module: str
    role: str  # attention | mlp | expert | shared | router | lm_head | mtp | per_layer | altup (Gemma 4 / 3n)
    out_features: int
    in_features: int
    bias: bool
    layer: int  # -1: outside the decoder layers
    ops: tuple[tuple[str, int], ...]
    count: int = 1
    fused_experts: str = ""  # gpt-oss: stored as one [E, out, in] tensor named this
    storage: str = ""  # a dtype the family keeps this linear in whatever the checkpoint's ("": the checkpoint's)


# Checkpoint names per family: (layer prefix, attention, q/k/v/o, fused qkv, mlp, gate/up/down, fused gate_up,
# plain up/down, moe block, expert gate/up/down, router, shared expert, lm_head)
_DEFAULT_NAMES = dict(prefix="model.layers.{i}", attn="self_attn", q="q_proj", k="k_proj", v="v_proj", o="o_proj",
                      qkv="qkv_proj", mlp="mlp", gate="gate_proj", up="up_proj", down="down_proj",
                      gate_up="gate_up_proj", fc1="up_proj", fc2="down_proj", moe="mlp",
                      egate="gate_proj", eup="up_proj", edown="down_proj", router="gate", shared="shared_experts",
                      head="lm_head", embed="model.embed_tokens", mixer="mamba",
                      experts_3d=("experts.gate_up_proj", "experts.down_proj"))
_NAMES = {
    "mixtral": dict(moe="block_sparse_moe", egate="w1", eup="w3", edown="w2"),
    "phimoe": dict(moe="block_sparse_moe", egate="w1", eup="w3", edown="w2"),
    "qwen2_moe": dict(shared="shared_expert"),
    "gpt_oss": dict(router="router"),
    "cosmos3_edge_text": dict(fc1="fc1", fc2="fc2"),
    "llama4_text": dict(mlp="feed_forward", moe="feed_forward", shared="shared_expert", router="router"),
    "phi": dict(o="dense", fc1="fc1", fc2="fc2"),
    "starcoder2": dict(fc1="c_fc", fc2="c_proj"),
    "gpt2": dict(prefix="transformer.h.{i}", attn="attn", qkv="c_attn", o="c_proj", fc1="c_fc", fc2="c_proj",
                 embed="transformer.wte"),
    "gpt_bigcode": dict(prefix="transformer.h.{i}", attn="attn", qkv="c_attn", o="c_proj", fc1="c_fc",
                        fc2="c_proj", embed="transformer.wte"),
    "falcon": dict(prefix="transformer.h.{i}", attn="self_attention", qkv="query_key_value", o="dense",
                   fc1="dense_h_to_4h", fc2="dense_4h_to_h", embed="transformer.word_embeddings"),
    "gpt_neox_japanese": dict(prefix="gpt_neox_japanese.layers.{i}", attn="attention", qkv="query_key_value",
                              o="dense", fc1="dense_h_to_4h", fc2="dense_4h_to_h", head="embed_out",
                              embed="gpt_neox_japanese.embed_in"),
    "gpt_neox": dict(prefix="gpt_neox.layers.{i}", attn="attention", qkv="query_key_value", o="dense",
                     fc1="dense_h_to_4h", fc2="dense_4h_to_h", head="embed_out", embed="gpt_neox.embed_in"),
    "internlm2": dict(attn="attention", qkv="wqkv", o="wo", mlp="feed_forward", gate="w1", up="w3", down="w2",
                      head="output", embed="model.tok_embeddings"),
    "qwen3_next": dict(mixer="linear_attn", shared="shared_expert"),
    "qwen3_5_text": dict(mixer="linear_attn"),
    "olmo_hybrid": dict(mixer="linear_attn"),
    "recurrent_gemma": dict(attn="temporal_block", mixer="temporal_block", mlp="mlp_block"),
    "rwkv": dict(prefix="rwkv.blocks.{i}", mixer="", mlp="feed_forward", fc1="key", fc2="value", head="head",
                 embed="rwkv.embeddings"),
    "qwen3_5_moe_text": dict(mixer="linear_attn", shared="shared_expert"),
    "qwen4_exp_text": dict(mixer="linear_attn", shared="shared_expert"),
    "minimax_m2": dict(moe="block_sparse_moe", egate="w1", eup="w3", edown="w2"),
    "jamba": dict(mlp="feed_forward", moe="feed_forward", router="router"),
    "nemotron_h": dict(prefix="backbone.layers.{i}", attn="mixer", mlp="mixer", moe="mixer", mixer="mixer",
                       embed="backbone.embeddings"),
    **dict.fromkeys(("mamba", "falcon_mamba", "mamba2"), dict(prefix="backbone.layers.{i}", mixer="mixer",
                                                             embed="backbone.embeddings")),
    "falcon_h1": dict(mlp="feed_forward"),
    "aria_text": dict(router="router"),
    "hunyuan_v1_moe": dict(shared="shared_mlp", router="gate.wg"),
    "lfm2": dict(o="out_proj", mixer="conv", mlp="feed_forward", gate="w1", up="w3", down="w2"),
    "lfm2_moe": dict(o="out_proj", mixer="conv", mlp="feed_forward", moe="feed_forward", gate="w1", up="w3", down="w2"),
    # Gemma 4: the dense MLP (counted as an always-on shared expert), the router and the experts beside each other
    "gemma4_text": dict(moe="", router="router.proj", shared="mlp"),
    "jetmoe": dict(attn="self_attention", router="router.layer", experts_3d=("input_linear", "output_linear")),
}
# Families whose routed experts are stored as two 3-D parameters (gate_up_proj [E, 2f, h], down_proj [E, h, f]).
_EXPERTS_3D = ("gpt_oss", "gemma4_text", "aria_text", "minimax_m3_vl_text", "zaya", "step3p5", "jetmoe")
# Families whose score-correction buffer follows the model's dtype (registered without one; elsewhere fp32)
_SCORE_BIAS_AT_DTYPE = ("minimax_m3_vl_text", "step3p5")
# Families whose modeling code keeps the router's weight in fp32 (_keep_in_fp32_modules_strict "gate.weight").
_FP32_ROUTER = ("axk2", "inkling2_text", "inkling2_loop_text", "muse_spark_text", "dots3_note_text",
                "mistral_large4_text", "glm5_next_text", "ernie4_5_vl_moe_text")
# Families whose modeling code keeps the mixer's convolution, dt_bias and A_log in fp32 (_keep_in_fp32_modules_strict)
_FP32_MIXER = ("glm5_next_text",)
# Families whose modeling code builds the mixer's A_log in fp32 whatever the model's dtype (Zamba: from an fp32 arange)
_FP32_A_LOG = ("zamba",)
# AutoAWQ stores a per-layer activation scale (ScaledActivation) for these families.
_AWQ_SCALED_ACT = ("starcoder2", "falcon", "gpt_neox", "gpt_bigcode")


def _names(cfg: ModelConfig) -> dict:
    return {**_DEFAULT_NAMES, **_NAMES.get(cfg.family, {})}


def mlp_op_names(cfg: ModelConfig, kind: str) -> tuple[str, str, str]:
    """The accounting names of (gate, up, down) of a layer's MLP: the routed experts' in a MoE layer
    (gate_proj, up_proj, down_proj), a dense layer's in a dense model (the same names) or in a MoE
    model (dense_gate_proj, ...)."""
    if kind == "D" and cfg.is_moe:
        return "dense_gate_proj", "dense_up_proj", "dense_down_proj"
    return "gate_proj", "up_proj", "down_proj"


def _mixer(cfg: ModelConfig, i: int, n: dict) -> list[Linear]:
    """A hybrid layer's mixer linears (and its convolution, stored like a [channels, kernel] matrix)."""
    if cfg.mixer is None or i >= cfg.layers or cfg.attention_kinds[i] not in MIXER_LETTERS:
        return []
    mx, p = cfg.mixer, n["prefix"].format(i=i) + ("." + n["mixer"] if n["mixer"] else "")
    out = [Linear(f"{p}.{stored}", "mixer", o, k, b, i, ((name, o),)) for stored, name, o, k, b in mx.stored(cfg.hidden)]
    if mx.conv_channels:  # (MiniMax's lightning attention has no convolution)
        out.append(Linear(f"{p}.{mx.conv_name}", "conv", mx.conv_channels, mx.conv, mx.conv_bias, i,
                          (("conv1d", mx.conv_channels),), storage="float32" if cfg.family in _FP32_MIXER else ""))
    return out


def _attention(cfg: ModelConfig, i: int, n: dict) -> list[Linear]:
    """Layer i's token mixing: its attention linears (MTP layers, i ≥ layers, have attention) and its mixer's; a
    cross-attention layer's attention and MLP (they run only with an image)."""
    if i >= cfg.layers:
        return _attention_linears(cfg, i, n)
    if cfg.attention_kinds[i] == "X":
        p = n["prefix"].format(i=i)
        q, kv = cfg.q_dim, cfg.kv_dim
        return [Linear(f"{p}.cross_attn.{name}", "attention", o, k, False, i, ())
                for name, o, k in (("q_proj", q, cfg.hidden), ("k_proj", kv, cfg.hidden), ("v_proj", kv, cfg.hidden),
                                   ("o_proj", cfg.hidden, cfg.o_dim))] + _mlp(cfg, i, n, "D")
    out = _attention_linears(cfg, i, n) if cfg.attention_kinds[i] in ATTENTION_LETTERS else []
    return out + _block_linears(cfg, i, n) + _mixer(cfg, i, n)


def _attention_linears(cfg: ModelConfig, i: int, n: dict) -> list[Linear]:
    if i < cfg.layers:
        cfg = cfg.attention_shape(cfg.attention_kinds[i])  # Gemma 4's full layers: their own head dim and KV heads
    h = cfg.hidden
    p = n["prefix"].format(i=i) + "." + n["attn"]
    if cfg.compressed_attention:
        return _compressed_linears(cfg, i, p)
    if cfg.is_mla:
        rq, rkv, dr = cfg.q_lora_rank, cfg.kv_lora_rank, cfg.rope_head_dim
        out = []
        if rq and cfg.q_gate_latent:  # A.X-K2: [normed latent; latent] → queries and the output gate
            qg = cfg.q_dim + cfg.o_dim
            out += [Linear(f"{p}.q_a_proj", "attention", rq, h, cfg.qkv_bias, i, (("q_a_proj", rq),)),
                    Linear(f"{p}.q_gate_proj", "attention", qg, 2 * rq, False, i, (("q_gate_proj", qg),))]
        elif rq:
            out += [Linear(f"{p}.q_a_proj", "attention", rq, h, cfg.qkv_bias, i, (("q_a_proj", rq),)),
                    Linear(f"{p}.q_b_proj", "attention", cfg.q_dim, rq, False, i, (("q_b_proj", cfg.q_dim),))]
        else:
            out.append(Linear(f"{p}.q_proj", "attention", cfg.q_dim, h, False, i, (("q_proj", cfg.q_dim),)))
        kvb = cfg.heads * (cfg.nope_head_dim + cfg.v_head_dim)
        if not cfg.kv_reused:  # (Mistral Large 4: a layer reading an earlier layer's latent has no kv_a_proj)
            out.append(Linear(f"{p}.kv_a_proj_with_mqa", "attention", rkv + dr, h, cfg.qkv_bias, i,
                              (("kv_a_proj", rkv + dr),)))
        out += [Linear(f"{p}.kv_b_proj", "attention", kvb, rkv, False, i, (("kv_b_proj", kvb),)),
                Linear(f"{p}.{n['o']}", "attention", h, cfg.o_dim, cfg.o_bias, i, (("o_proj", h),))]
        if cfg.gate_proj_width:  # HY-V4: a gate on the attention output
            out.append(Linear(f"{p}.gate_proj", "attention", cfg.gate_proj_width, h, False, i,
                              (("attn_gate", cfg.gate_proj_width),)))
        if cfg.is_dsa and (i >= cfg.layers or cfg.attention_kinds[i] in INDEXER_LETTERS):  # DeepSeek Sparse
            # Attention's indexer (Mistral Large 4's queries from the hidden state)
            hi, di = cfg.index_heads, cfg.index_head_dim
            qin = h if cfg.index_q_from_hidden else rq
            out += [Linear(f"{p}.indexer.wq_b", "attention", hi * di, qin, False, i, (("index_q", hi * di),)),
                    Linear(f"{p}.indexer.wk", "attention", di, h, False, i, (("index_k", di),)),
                    Linear(f"{p}.indexer.weights_proj", "attention", hi, h, False, i, (("index_weights", hi),))]
        return out
    q, k, v = cfg.q_proj_width, cfg.k_proj_width, cfg.v_proj_width
    if cfg.attn_experts:  # JetMoE: one k|v matrix; the experts' q and o as 3-D parameters [E, out, in]; their router
        e, kvd, x = cfg.attn_experts, cfg.kv_dim, f"{p}.experts"
        return [Linear(f"{p}.kv_proj", "attention", k + v, h, False, i, (("k_proj", k), ("v_proj", v))),
                Linear(f"{x}.input_linear", "attention", kvd, h, False, i, (("q_proj", kvd),), count=e,
                       fused_experts="input_linear"),
                Linear(f"{x}.output_linear", "attention", h, kvd, False, i, (("o_proj", h),), count=e,
                       fused_experts="output_linear"),
                Linear(f"{x}.router.layer", "router", e, h, False, i, (("attn_router", e),))]
    if cfg.fused_qkv:
        out = [Linear(f"{p}.{n['qkv']}", "attention", q + k + v, cfg.attn_in, cfg.qkv_bias, i,
                      (("q_proj", q), ("k_proj", k), ("v_proj", v)))]
    elif cfg.cca_depthwise:  # ZAYA: the values half from the token, half delayed, each its own matrix
        c = f"{p}.qkv_proj"
        out = [Linear(f"{c}.q_proj", "attention", q, h, cfg.qkv_bias, i, (("q_proj", q),)),
               Linear(f"{c}.k_proj", "attention", k, h, cfg.qkv_bias, i, (("k_proj", k),))]
        out += [Linear(f"{c}.v_proj_{x}", "attention", v // 2, h, cfg.qkv_bias, i, (("v_proj", v // 2),))
                for x in ("current", "delayed")]
    else:  # Gemma 4: no v_proj where the keys are the values too, neither k nor v where the layer reuses K/V
        out = [Linear(f"{p}.{n[name]}", "attention", w, cfg.attn_in, cfg.qkv_bias, i, ((f"{name}_proj", w),))
               for name, w in (("q", q), ("k", k), ("v", v)) if w]
    if cfg.gate_proj_width:  # a separate gate on the attention output (LFM3, Laguna)
        g = cfg.gate_proj_width
        out.append(Linear(f"{p}.g_proj", "attention", g, h, False, i, (("attn_gate", g),)))
    if cfg.rel_bias:  # Inkling: the relative states per head
        out.append(Linear(f"{p}.r_proj", "attention", cfg.heads * cfg.rel_bias, h, False, i,
                          (("rel_proj", cfg.heads * cfg.rel_bias),)))
    if cfg.sink_proj:  # Inkling 2: a sink logit per head from each token
        out.append(Linear(f"{p}.sink_proj", "attention", cfg.heads, h, False, i, (("sink_proj", cfg.heads),)))
    if cfg.dynamic_kv_conv and cfg.short_conv and i < cfg.layers and cfg.attention_kinds[i] == "F":
        t = cfg.kv_heads * cfg.short_conv  # Inkling 2: the keys' and the values' per-token taps
        out += [Linear(f"{p}.{x}_proj.sconv.weight_proj", "attention", t, h, False, i, (("kv_conv_taps", t),))
                for x in ("k", "v")]
    o_bias = cfg.o_bias or (cfg.last_o_bias and i == cfg.layers - 1)  # GPT-NeoX-Japanese: the last layer's only
    out.append(Linear(f"{p}.{n['o']}", "attention", h, cfg.o_dim, o_bias, i, (("o_proj", h),)))
    if cfg.is_block_sparse and i < cfg.layers and cfg.attention_kinds[i] == "I" and cfg.index_mean_pool:
        hi, di = cfg.index_heads, cfg.index_head_dim  # Qwen4-Exp's QSA indexer: its queries and key in one matrix
        out.append(Linear(f"{p}.indexer.index_qk_proj", "attention", (hi + 1) * di, h, False, i,
                          (("index_q", hi * di), ("index_k", di))))
    elif cfg.is_block_sparse and i < cfg.layers and cfg.attention_kinds[i] == "I":  # MiniMax-M3's block indexer
        hi, di = cfg.index_heads, cfg.index_head_dim
        out += [Linear(f"{p}.indexer.q_proj", "attention", hi * di, h, False, i, (("index_q", hi * di),)),
                Linear(f"{p}.indexer.k_proj", "attention", di, h, False, i, (("index_k", di),))]
    return out


def _compressed_linears(cfg: ModelConfig, i: int, p: str) -> list[Linear]:
    """DeepSeek-V4's attention linears of layer i (as transformers names them): the query latent and heads, the one
    key/value head, the grouped output projection (o_a_proj: [groups × o_lora_rank, heads × head_dim / groups]) and, in
    a compressed layer, its compressor (an A layer's lightning indexer too)."""
    h, rq, hd, g, ro = cfg.hidden, cfg.q_lora_rank, cfg.head_dim, cfg.o_groups, cfg.o_lora_rank
    out = [Linear(f"{p}.q_a_proj", "attention", rq, h, False, i, (("q_a_proj", rq),)),
           Linear(f"{p}.q_b_proj", "attention", cfg.q_dim, rq, False, i, (("q_b_proj", cfg.q_dim),)),
           Linear(f"{p}.kv_proj", "attention", hd, h, False, i, (("kv_proj", hd),)),
           Linear(f"{p}.o_a_proj", "attention", g * ro, cfg.q_dim // g, False, i, (("o_a_proj", g * ro),)),
           Linear(f"{p}.o_b_proj", "attention", h, g * ro, False, i, (("o_b_proj", h),))]
    kind = cfg.attention_kinds[i] if i < cfg.layers else "S"
    c = f"{p}.compressor"
    if kind == "H":
        out += [Linear(f"{c}.kv_proj", "attention", hd, h, False, i, (("hca_kv", hd),)),
                Linear(f"{c}.gate_proj", "attention", hd, h, False, i, (("hca_gate", hd),))]
    if kind == "A":
        hi, di = cfg.index_heads, cfg.index_head_dim
        out += [Linear(f"{c}.kv_proj", "attention", 2 * hd, h, False, i, (("csa_kv", 2 * hd),)),
                Linear(f"{c}.gate_proj", "attention", 2 * hd, h, False, i, (("csa_gate", 2 * hd),)),
                Linear(f"{c}.indexer.kv_proj", "attention", 2 * di, h, False, i, (("index_kv", 2 * di),)),
                Linear(f"{c}.indexer.gate_proj", "attention", 2 * di, h, False, i, (("index_gate", 2 * di),)),
                Linear(f"{c}.indexer.q_b_proj", "attention", hi * di, rq, False, i, (("index_q", hi * di),)),
                Linear(f"{c}.indexer.scorer.weights_proj", "attention", hi, h, False, i, (("index_weights", hi),))]
    return out


def _mlp(cfg: ModelConfig, i: int, n: dict, kind: str) -> list[Linear]:
    h, p = cfg.hidden, n["prefix"].format(i=i)
    out: list[Linear] = []
    if kind == "-":
        return out
    if kind == "D":
        f = cfg.ffn
        g, u, d = mlp_op_names(cfg, "D")
        if cfg.mlp == "plain":
            return [Linear(f"{p}.{n['mlp']}.{n['fc1']}", "mlp", f, h, cfg.mlp_bias, i, ((u, f),)),
                    Linear(f"{p}.{n['mlp']}.{n['fc2']}", "mlp", h, f, cfg.mlp_bias, i, ((d, h),))]
        if cfg.fused_gate_up:
            out.append(Linear(f"{p}.{n['mlp']}.{n['gate_up']}", "mlp", 2 * f, h, cfg.mlp_bias, i, ((g, f), (u, f))))
        else:
            out += [Linear(f"{p}.{n['mlp']}.{n['gate']}", "mlp", f, h, cfg.mlp_bias, i, ((g, f),)),
                    Linear(f"{p}.{n['mlp']}.{n['up']}", "mlp", f, h, cfg.mlp_bias, i, ((u, f),))]
        out.append(Linear(f"{p}.{n['mlp']}.{n['down']}", "mlp", h, f, cfg.mlp_bias, i, ((d, h),)))
        return out
    m, fe, e = f"{p}.{n['moe']}" if n["moe"] else p, cfg.expert_ffn, cfg.experts
    h = cfg.expert_width  # (the experts of a latent mixture read and write its narrower width)
    r = cfg.router_width  # zero-computation experts (LongCat-Flash) have router rows and no weights
    rh = cfg.router_hidden  # ZAYA: the router an MLP (its out_proj scores the choices)
    if rh:
        g = f"{m}.{n['router']}"
        out += [Linear(f"{g}.down_proj", "router", rh, cfg.hidden, True, i, (("router_down", rh),)),
                Linear(f"{g}.router_mlp.fc1", "router", rh, rh, True, i, (("router_fc1", rh),)),
                Linear(f"{g}.router_mlp.fc2", "router", rh, rh, True, i, (("router_fc2", rh),))]
    out.append(Linear(f"{m}.{n['router']}" + (".router_mlp.out_proj" if rh else ""), "router", r, rh or cfg.hidden,
                      cfg.router_bias, i, (("router", r),), storage="float32" if cfg.family in _FP32_ROUTER else ""))
    if cfg.expert_hidden:  # a latent mixture (Muse Spark, Nemotron-H): the projections to and from the experts' width
        down, up = ("fc1_latent_proj", "fc2_latent_proj") if cfg.family == "nemotron_h" else ("pre_expert_proj",
                                                                                             "post_expert_proj")
        out += [Linear(f"{m}.{down}", "mlp", h, cfg.hidden, cfg.mlp_bias, i, (("expert_in_proj", h),)),
                Linear(f"{m}.{up}", "mlp", cfg.hidden, h, cfg.mlp_bias, i, (("expert_out_proj", cfg.hidden),))]
    if cfg.fused_gate_up and cfg.family in _EXPERTS_3D:  # 3-D [E, h, 2f] and [E, f, h] parameters
        gu, dn = n["experts_3d"]
        out += [Linear(f"{m}.{gu}", "expert", 2 * fe, h, cfg.expert_bias, i,
                       (("gate_proj", fe), ("up_proj", fe)), count=e, fused_experts=gu.rsplit(".", 1)[-1]),
                Linear(f"{m}.{dn}", "expert", h, fe, cfg.expert_bias, i, (("down_proj", h),), count=e,
                       fused_experts=dn.rsplit(".", 1)[-1])]
    elif cfg.mlp == "plain":
        out += [Linear(f"{m}.experts.0.{n['fc1']}", "expert", fe, h, cfg.expert_bias, i, (("up_proj", fe),), count=e),
                Linear(f"{m}.experts.0.{n['fc2']}", "expert", h, fe, cfg.expert_bias, i, (("down_proj", h),), count=e)]
    else:
        out += [Linear(f"{m}.experts.0.{n['egate']}", "expert", fe, h, cfg.expert_bias, i, (("gate_proj", fe),), count=e),
                Linear(f"{m}.experts.0.{n['eup']}", "expert", fe, h, cfg.expert_bias, i, (("up_proj", fe),), count=e),
                Linear(f"{m}.experts.0.{n['edown']}", "expert", h, fe, cfg.expert_bias, i, (("down_proj", h),), count=e)]
    h, fs = cfg.hidden, cfg.shared_expert_ffn  # (a shared expert runs at the hidden size)
    if fs:
        s = f"{m}.{n['shared']}"
        if cfg.mlp == "gated":
            out.append(Linear(f"{s}.gate_proj", "shared", fs, h, cfg.mlp_bias, i, (("shared_gate_proj", fs),)))
        out += [Linear(f"{s}.up_proj", "shared", fs, h, cfg.mlp_bias, i, (("shared_up_proj", fs),)),
                Linear(f"{s}.down_proj", "shared", h, fs, cfg.mlp_bias, i, (("shared_down_proj", h),))]
    if cfg.shared_expert_gate:
        out.append(Linear(f"{m}.shared_expert_gate", "router", 1, h, False, i, (("shared_expert_gate", 1),)))
    if cfg.vision_expert_ffn:  # ERNIE 4.5 VL: the image tokens' router and experts (no op: they do no text work)
        v, fv, he = f"{p}.{n['mlp']}.vision_moe", cfg.vision_expert_ffn, cfg.expert_width
        out += [Linear(f"{v}.gate", "router", r, h, cfg.router_bias, i, (),
                       storage="float32" if cfg.family in _FP32_ROUTER else ""),
                Linear(f"{v}.experts.0.gate_proj", "expert", fv, he, cfg.expert_bias, i, (), count=e),
                Linear(f"{v}.experts.0.up_proj", "expert", fv, he, cfg.expert_bias, i, (), count=e),
                Linear(f"{v}.experts.0.down_proj", "expert", he, fv, cfg.expert_bias, i, (), count=e)]
    return out


def _norm_gates(cfg: ModelConfig, i: int, n: dict, kind: str) -> list[Linear]:
    """A.X-K2's low-rank norm gates of layer i: the input norm's, and the post-attention norm's in a MoE layer (kept
    in 16 bits, as small as a router)."""
    r, h = cfg.gated_norm_rank, cfg.hidden
    if not r:
        return []
    pre = n["prefix"].format(i=i)
    norms = ("input_layernorm", "post_attention_layernorm") if kind == "M" else ("input_layernorm",)
    return [x for norm in norms for x in (
        Linear(f"{pre}.{norm}.mlp.fc1", "router", r, h, False, i, (("norm_gate_down", r),)),
        Linear(f"{pre}.{norm}.mlp.fc2", "router", h, r, False, i, (("norm_gate_up", h),)))]


def _message_gates(cfg: ModelConfig, i: int, n: dict) -> list[Linear]:
    """Inkling-2-Mini's message gates of a looped layer i: for its q, k, v and MLP inputs, [input; message] → rank r
    (at the checkpoint's dtype) → a forget gate and a message gate (fp32, as the module creates them)."""
    r, h = cfg.loop_gate_rank, cfg.hidden
    if not r or not cfg.loop_start <= i < cfg.loop_end:
        return []
    pre = n["prefix"].format(i=i)
    out = []
    for g in ("q", "k", "v", "mlp"):
        out += [Linear(f"{pre}.{g}_message_gate.down_proj", "router", r, 2 * h, False, i, (("loop_gate_down", r),)),
                *(Linear(f"{pre}.{g}_message_gate.{x}_gate_proj", "router", h, r, False, i, (("loop_gate_up", h),),
                         storage="float32") for x in ("forget", "message"))]
    return out


def _per_layer_inputs(cfg: ModelConfig, i: int, n: dict) -> list[Linear]:
    """Gemma 4's per-layer input linears of layer i (the gate and the projection), or of the model (i = -1: the
    projection of the embedding to every layer's input)."""
    p, h = cfg.per_layer_input, cfg.hidden
    if not p:
        return []
    if i < 0:
        return [Linear("model.per_layer_model_projection", "per_layer", cfg.layers * p, h, False, -1,
                       (("per_layer_model_proj", cfg.layers * p),))]
    pre = n["prefix"].format(i=i)
    return [Linear(f"{pre}.per_layer_input_gate", "per_layer", p, h, False, i, (("per_layer_gate", p),)),
            Linear(f"{pre}.per_layer_projection", "per_layer", h, p, False, i, (("per_layer_proj", h),))]


def _altup_laurel(cfg: ModelConfig, i: int, n: dict) -> list[Linear]:
    """Gemma 3n's AltUp and LAuReL linears of layer i, or of the model (i = -1: the n - 1 projections of the embedding
    to the other streams and the n - 1 back)."""
    a, r, h = cfg.altup_inputs, cfg.laurel_rank, cfg.hidden
    if i < 0:
        return [Linear(f"model.{name}.{j}", "altup", h, h, False, -1, ((op, h),)) for op, name in
                (("altup_proj", "altup_projections"), ("altup_unembed", "altup_unembed_projections"))
                for j in range(a - 1)] if a else []
    pre = n["prefix"].format(i=i)
    out = []
    if a:
        out += [Linear(f"{pre}.altup.modality_router", "altup", a, h, False, i, (("altup_router", a),)),
                Linear(f"{pre}.altup.prediction_coefs", "altup", a * a, a, False, i, (("altup_predict", a * a),)),
                Linear(f"{pre}.altup.correction_coefs", "altup", a, a, False, i, (("altup_correct", a),))]
    if r:
        out += [Linear(f"{pre}.laurel.linear_left", "altup", r, h, False, i, (("laurel_left", r),)),
                Linear(f"{pre}.laurel.linear_right", "altup", h, r, False, i, (("laurel_right", h),))]
    return out


def _ngram(cfg: ModelConfig, i: int, n: dict) -> list[Linear]:
    """Qwen4-Exp: an N layer's n-gram key (a key per stream) and value projections."""
    if not (0 <= i < cfg.layers and cfg.ngram_layers and cfg.ngram_layers[i] == "N"):
        return []
    p, g, w = n["prefix"].format(i=i) + ".ple", cfg.ngram_dim, cfg.hyper_streams * cfg.hidden
    return [Linear(f"{p}.key_proj", "per_layer", w, g, False, i, (("ngram_key", w),)),
            Linear(f"{p}.value_proj", "per_layer", cfg.hidden, g, False, i, (("ngram_value", cfg.hidden),))]


def _block_index(cfg: ModelConfig, i: int) -> int:
    """Zamba2: which run of a shared block layer i is (its count among the P layers before it)."""
    return cfg.attention_kinds[:i].count("P")


def _block_reused(cfg: ModelConfig, i: int) -> bool:
    """Whether layer i runs a shared block an earlier layer stores (Zamba2's blocks are used in turn)."""
    return bool(cfg.shared_blocks) and i < cfg.layers and cfg.attention_kinds[i] == "P" and \
        _block_index(cfg, i) >= cfg.shared_blocks


def _block_linears(cfg: ModelConfig, i: int, n: dict) -> list[Linear]:
    """A P layer's own linears beside its shared block (Zamba2): the low-rank adapters on q, k, v and gate|up (stored
    in the block, one per run) and the output projection into the mixer's input."""
    if not cfg.shared_blocks or i >= cfg.layers or cfg.attention_kinds[i] != "P":
        return []
    j, r, h, a = _block_index(cfg, i), cfg.block_adapter_rank, cfg.hidden, cfg.attn_in
    p = n["prefix"].format(i=i)
    b = f"{p}.shared_transformer"
    out = []
    if r and cfg.qkv_adapters:
        for x, w in (("q", cfg.q_dim), ("k", cfg.kv_dim), ("v", cfg.kv_dim)):
            out += [Linear(f"{b}.self_attn.linear_{x}_adapter_list.{j}.0", "attention", r, a, False, i,
                           (("qkv_adapter_down", r),)),
                    Linear(f"{b}.self_attn.linear_{x}_adapter_list.{j}.1", "attention", w, r, False, i,
                           (("qkv_adapter_up", w),))]
    if r:
        out += [Linear(f"{b}.feed_forward.gate_up_proj_adapter_list.{j}.0", "mlp", r, h, False, i,
                       (("mlp_adapter_down", r),)),
                Linear(f"{b}.feed_forward.gate_up_proj_adapter_list.{j}.1", "mlp", 2 * cfg.ffn, r, False, i,
                       (("mlp_adapter_up", 2 * cfg.ffn),))]
    if cfg.block_out_proj:
        out.append(Linear(f"{p}.linear", "attention", h, h, False, i, (("block_out_proj", h),)))
    return out


def stored_linears(cfg: ModelConfig, *, mtp: bool = True) -> list[Linear]:
    """Every linear layer of the checkpoint, layer by layer, then the LM head (and the MTP layers)."""
    n = _names(cfg)
    out: list[Linear] = _per_layer_inputs(cfg, -1, n) + _altup_laurel(cfg, -1, n)
    kinds, akinds = cfg.mlp_kinds, cfg.attention_kinds
    for i in range(cfg.layers):
        if _block_reused(cfg, i):  # Zamba2: a later run of a shared block stores only its own adapters and mixer
            out += _block_linears(cfg, i, n) + _mixer(cfg, i, n)
            continue
        out += _attention(cfg, i, n) + _mlp(cfg.attention_shape(akinds[i]), i, n, kinds[i])
        out += _per_layer_inputs(cfg, i, n) + _altup_laurel(cfg, i, n) + _norm_gates(cfg, i, n, kinds[i])
        out += _message_gates(cfg, i, n) + _ngram(cfg, i, n)
    if cfg.head_dense:  # ModernBERT: the prediction head's dense before the LM head
        out.append(_head_dense(cfg))
    if not cfg.tied_embeddings:
        out.append(Linear(n["head"], "lm_head", cfg.head_vocab, cfg.hidden, cfg.lm_head_bias, -1,
                          (("lm_head", cfg.head_vocab),)))
    if mtp:
        for j in range(cfg.mtp_layers):
            i = cfg.layers + j
            body = _attention(cfg, i, n) + _mlp(cfg, i, n, "M")
            out += [Linear(x.module, "mtp" if x.role == "router" else x.role, x.out_features, x.in_features, x.bias, i,
                           (), x.count, x.fused_experts) for x in body]
            p = n["prefix"].format(i=i)
            out += [Linear(f"{p}.eh_proj", "mtp", cfg.hidden, 2 * cfg.hidden, False, i, ()),
                    Linear(f"{p}.shared_head.head", "mtp", cfg.vocab, cfg.hidden, False, i, ())]
    return out


def stored_params(cfg: ModelConfig, *, mtp: bool = True) -> list[tuple[str, int, str]]:
    """(name, elements, storage) of everything that is not a linear's weight or bias: embeddings, norms,
    qk-norm weights, sinks, MLA's latent norms, score-bias buffers (fp32), the MTP layers' norms and
    embedding copy. Storage "" = the checkpoint dtype."""
    h, nw = cfg.hidden, cfg.norm_weights
    out: list[tuple[str, int, str]] = [("embedding", cfg.vocab * h, "")]
    if cfg.residual_affine:  # ZAYA: the embedding's scale and bias
        out.append(("input_hidden_states_scale_bias", 2 * h, ""))
    if cfg.learned_positions:
        out.append(("positions", cfg.learned_positions * h, ""))
    if cfg.embedding_norm:
        out.append(("embedding_norm", h * nw, ""))

    if cfg.per_layer_input:  # Gemma 4: the per-layer table and the norm of its projection
        out += [("embed_tokens_per_layer", (cfg.per_layer_vocab or cfg.vocab) * cfg.layers * cfg.per_layer_input, ""),
                ("per_layer_projection_norm", cfg.per_layer_input * nw, "")]

    def layer(prefix: str, moe: bool, akind: str = "F", dense: bool = False,
              hashed: bool = False) -> list[tuple[str, int, str]]:
        norms = (cfg.norms_per_layer + (cfg.moe_norms if moe else 0) + (1 if cfg.per_layer_input else 0)
                 + (2 if cfg.qkv_input_norms and akind == "F" else 0)  # Inkling 2's full layers: q, k and v input norms
                 + (1 if cfg.laurel_rank else 0) + (2 if cfg.altup_inputs else 0)  # AltUp: its router's norm, its scale
                 - (prefix == "layers.0" and not cfg.first_attn_norm))  # (ModernBERT's first layer: no attention norm)
        rows = [(f"{prefix}.norms", (0 if cfg.hyper_gate_rank else norms) * h * nw, "")]
        shape = cfg.attention_shape(akind)
        if akind in MIXER_LETTERS:
            fp32 = ("dt_bias", "A_log") if cfg.family in _FP32_MIXER else ("A_log",) if cfg.family in _FP32_A_LOG else ()
            rows += [(f"{prefix}.mixer.{k}", v, "float32" if k in fp32 else "")
                     for k, v in cfg.mixer.other_params().items() if k != "conv1d"]
        if akind == "X":  # cross-attention: a q and a k norm per head, the attention's and the MLP's tanh gates
            rows += [(f"{prefix}.cross_attn.qk_norm", 2 * cfg.head_dim * nw, ""), (f"{prefix}.cross_attn_gates", 2, "")]
        elif akind not in ATTENTION_LETTERS:
            pass
        elif cfg.compressed_attention:  # the norms of the query latent and the key/value head; a compressor's norm
            # (and its indexer's), and its position bias per slot of its window (fp32, as DeepSeek stores it)
            norms = cfg.q_lora_rank + cfg.head_dim + {"A": cfg.head_dim + cfg.index_head_dim, "H": cfg.head_dim}.get(
                akind, 0)
            rows.append((f"{prefix}.attention_norms", norms * nw, ""))
            bias = {"A": cfg.csa_rate * 2 * (cfg.head_dim + cfg.index_head_dim),
                    "H": cfg.hca_rate * cfg.head_dim}.get(akind, 0)
            if bias:
                rows.append((f"{prefix}.compressor.position_bias", bias, "float32"))
            rows.append((f"{prefix}.sinks", cfg.heads, "float32"))
        elif cfg.is_mla:  # (Dots 3 Note's sliding layers: their own latents; a norm on the rotary key; Mistral
            # Large 4's layers reading another layer's latent: no latent norm)
            rows.append((f"{prefix}.mla_norms", shape.q_lora_rank + (0 if shape.kv_reused else shape.kv_lora_rank)
                         + (shape.rope_head_dim if cfg.rope_key_norm else 0), ""))
            if akind in INDEXER_LETTERS:
                rows.append((f"{prefix}.indexer.k_norm", 2 * cfg.index_head_dim, ""))  # a LayerNorm: weight, bias
                if cfg.index_q_from_hidden:  # Mistral Large 4: the query input's LayerNorm, the heads' scales
                    rows.append((f"{prefix}.indexer.q_input_norm_and_scales", 2 * h + 2 * cfg.index_heads, ""))
                if cfg.index_kpool:  # GLM-5-Next: the pools' gate projection (a parameter, not a linear) and table
                    rows.append((f"{prefix}.indexer.index_kpool_compress", (h + cfg.index_kpool) * cfg.index_head_dim,
                                 ""))
        elif cfg.qk_norm == "head":  # a layer reusing K/V has a q norm only
            rows.append((f"{prefix}.qk_norm", (1 if shape.kv_reused else 2) * shape.head_dim * nw, ""))
            if cfg.is_block_sparse and akind == "I":  # the block indexer's q and k RMSNorms
                rows.append((f"{prefix}.indexer.qk_norm", 2 * cfg.index_head_dim * nw, ""))
        elif cfg.qk_norm == "width":  # (Chameleon's LayerNorms: a bias too)
            rows.append((f"{prefix}.qk_norm", (cfg.q_dim + cfg.kv_dim) * (nw + cfg.qk_norm_bias), ""))
        if shape.attention_sinks and akind in ATTENTION_LETTERS and not cfg.compressed_attention:
            rows.append((f"{prefix}.sinks", cfg.heads, ""))
        if cfg.attn_gate_bias and akind in ATTENTION_LETTERS:
            rows.append((f"{prefix}.gate_bias", cfg.heads, ""))
        if moe and cfg.router_scales:
            rows.append((f"{prefix}.router.scales", h + cfg.experts, ""))
        if moe and cfg.moe_out_bias:  # JetMoE: a bias on the experts' summed output
            rows.append((f"{prefix}.mlp.bias", h, ""))
        if cfg.attn_experts and akind in ATTENTION_LETTERS:  # and on the attention experts'
            rows.append((f"{prefix}.self_attention.experts.bias", h, ""))
        if moe and cfg.router_score_bias and not hashed:
            for which in ("", ".vision_moe")[:2 if cfg.vision_expert_ffn else 1]:  # (ERNIE 4.5 VL's image router's too)
                rows.append((f"{prefix}{which}.e_score_correction_bias", cfg.routed_choices,
                             "" if cfg.family in _SCORE_BIAS_AT_DTYPE else "float32"))
        if moe and cfg.latent_norms:  # Muse Spark: the latent mixture's norms before and after the experts
            rows.append((f"{prefix}.mlp.expert_norms", 2 * cfg.expert_hidden * nw, ""))
        if cfg.residual_gates:  # Muse Spark: a gate per channel on each residual add (fp32)
            rows.append((f"{prefix}.residual_gates", 2 * h, "float32"))
        if moe and cfg.router_global_scale:  # Inkling: one scalar on the routing weights (fp32)
            rows.append((f"{prefix}.gate.global_scale", 1, "float32"))
        if cfg.short_conv and akind in ATTENTION_LETTERS:  # Inkling's k/v/attention/MLP convolutions, kept in fp32
            # (Inkling 2's full layers: the K/V convolutions' static taps at the checkpoint's dtype)
            dynamic = 2 * shape.kv_dim * cfg.short_conv if cfg.dynamic_kv_conv and akind == "F" else 0
            rows.append((f"{prefix}.short_convs", cfg.short_conv_channels(akind) * cfg.short_conv - dynamic, "float32"))
            if dynamic:
                rows.append((f"{prefix}.self_attn.kv_static_taps", dynamic, ""))
        if cfg.cca_depthwise and akind in ATTENTION_LETTERS:  # ZAYA: the two convolutions, weights and biases
            c = shape.cca_channels
            rows.append((f"{prefix}.self_attn.qkv_proj.convs", c * (cfg.cca_depthwise + shape.head_dim * cfg.cca_grouped
                                                                    + 2), ""))
        if cfg.residual_affine:  # ZAYA: scale and bias on both sides of its two residual adds
            rows.append((f"{prefix}.residual_scales", 8 * h, ""))
        if moe and cfg.router_hidden:  # ZAYA: the router MLP's norm, and (after the first layer) its state's scale
            rows.append((f"{prefix}.mlp.gate.router_norm_and_scale",
                         cfg.router_hidden * (cfg.norm_weights + (prefix != f"layers.{cfg.mlp_kinds.index('M')}")),
                         ""))
        if cfg.attn_scale_params and akind in ATTENTION_LETTERS:  # Dory: sqk, s_gate, lambda_1, lambda_2
            rows.append((f"{prefix}.scales", cfg.attn_scale_params, ""))
        if cfg.clip_norms and akind in ATTENTION_LETTERS:  # Inkling 2: the queries' and relative states' scales
            rows.append((f"{prefix}.self_attn.clip_scales", shape.q_dim + cfg.heads * cfg.rel_bias, ""))
        if cfg.rel_bias and akind in ATTENTION_LETTERS:  # Inkling: the relative-bias bank, rel_bias × extent
            rows.append((f"{prefix}.self_attn.rel_logits_proj.proj", cfg.rel_bias * cfg.rel_extent_of(akind), ""))
        if hashed:  # DeepSeek-V4: the token → experts table of a hash-routed layer (int64, as transformers holds it)
            rows.append((f"{prefix}.tid2eid", cfg.vocab * cfg.experts_per_token, "int64"))
        if cfg.hyper_gate_rank:  # Qwen4-Exp: two gated hyper-connections, each a grouped norm, the gate's two
            # projections and the injection weights (at the checkpoint's dtype)
            n, w, r = cfg.hyper_streams, cfg.hyper_streams * h, cfg.hyper_gate_rank
            rows.append((f"{prefix}.hyper_connections", 2 * (w * nw + 2 * w * r + w * n), ""))
        elif cfg.hyper_streams and cfg.hyper_mean_head:  # GLM-5-Next: the projections at the checkpoint's dtype,
            # biases and scales in fp32
            n, per = cfg.hyper_streams, cfg.hyper_weights
            rows += [(f"{prefix}.hyper_connections.fn", 2 * per * n * h, ""),
                     (f"{prefix}.hyper_connections.base_scale", 2 * (per + 3), "float32")]
        elif cfg.hyper_streams:  # two hyper-connections: projection, bias, scales (fp32)
            n, per = cfg.hyper_streams, cfg.hyper_weights
            rows.append((f"{prefix}.hyper_connections", 2 * (per * n * h + per + (3 if cfg.hyper_mix else 2)),
                         "float32"))
        if dense and cfg.activation_params:
            rows.append((f"{prefix}.mlp.scalars", cfg.activation_params, ""))
        if dense and cfg.ffn_norm:
            rows.append((f"{prefix}.mlp.ffn_sub_norm", cfg.ffn * nw, ""))
        return rows

    kinds, akinds = cfg.mlp_kinds, cfg.attention_kinds
    moe_seen = 0
    for i in range(cfg.layers):
        moe_seen += kinds[i] == "M"
        out += layer(f"layers.{i}", kinds[i] == "M", akinds[i], kinds[i] == "D",
                     hashed=kinds[i] == "M" and moe_seen <= cfg.hash_layers)
        if cfg.shared_blocks and akinds[i] == "P" and not _block_reused(cfg, i):  # Zamba2: a block's two norms,
            # the attention input's (its width) and the MLP's
            out.append((f"layers.{i}.shared_transformer.norms", (cfg.attn_in + h) * nw, ""))
    if cfg.ngram_layers:  # Qwen4-Exp: the n-gram tables, and each N layer's norms, convolution and hash buffers
        w, heads = cfg.hyper_streams * h, (cfg.ngram_order - 1) * cfg.ngram_heads
        out.append(("ngram_embeddings", cfg.ngram_table_params, ""))
        for i in (j for j, x in enumerate(cfg.ngram_layers) if x == "N"):
            out += [(f"layers.{i}.ple.norms_and_conv", w * (3 * nw + cfg.ngram_conv), ""),
                    (f"layers.{i}.ple.hash_buffers", cfg.ngram_order + 2 * heads, "int64")]
    if cfg.hyper_gate_rank:  # the last gated hyper-connection (the final norm): its norm and gate
        w = cfg.hyper_streams * h
        out.append(("hyper_connection_mixer", w * nw + 2 * w * cfg.hyper_gate_rank, ""))
    else:
        out.append(("final_norm", h * nw, ""))
    if cfg.head_dense:  # ModernBERT: its prediction head's norm
        out.append(("head.norm", h * nw, ""))
    if cfg.tied_embeddings and cfg.lm_head_bias:  # (CTRL, ModernBERT: a tied head with a bias of its own)
        out.append(("lm_head.bias", cfg.head_vocab, ""))
    if cfg.rope_scales:  # Mistral Large 4: LeRoPE's learned frequency scales (fp32)
        out.append(("rotary_emb.alpha", cfg.rope_scales, "float32"))
    if cfg.hrm_cycles:  # HRM: the low-level module's learned initial state
        out.append(("z_L_init", h, ""))
    if cfg.logit_scale:  # Dory: a learned scale per vocabulary entry on the logits
        out.append(("lm_head.logit_scale", cfg.head_vocab, ""))
    if cfg.attn_res_block:  # Inkling 2: the block attention residuals' learned queries (fp32)
        out.append(("attn_residual_queries", cfg.attn_res_queries * h, "float32"))
    if cfg.loop_gate_rank:  # Inkling-2-Mini: the message queries, 4 per looped layer (fp32)
        out.append(("message_queries", 4 * (cfg.loop_end - cfg.loop_start) * h, "float32"))
    if cfg.hyper_streams and not cfg.hyper_gate_rank and not cfg.hyper_mean_head:  # the last hyper-connection: the
        # streams to one (fp32)
        n = cfg.hyper_streams
        out.append(("hyper_head", n * n * h + n + 1, "float32"))
    if mtp:
        for j in range(cfg.mtp_layers):
            i = cfg.layers + j
            out += layer(f"layers.{i}", True, "I" if cfg.is_dsa else "F")
            out += [(f"layers.{i}.enorm_hnorm_head_norm", 3 * h * nw, ""), (f"layers.{i}.embed_tokens", cfg.vocab * h, "")]
    return out


def _head_dense(cfg: ModelConfig) -> Linear:
    """ModernBERT's prediction head: a dense hidden → hidden before the LM head."""
    return Linear("lm_head.dense", "lm_head", cfg.hidden, cfg.hidden, cfg.head_dense_bias, -1,
                  (("head_dense", cfg.hidden),))


def _embedding(cfg: ModelConfig) -> Linear:
    """The token embedding seen as a [vocab, hidden] matrix (MLX quantizes it like a linear)."""
    return Linear(_names(cfg)["embed"], "embedding", cfg.vocab, cfg.hidden, False, -1, ())


@dataclass(frozen=True)
class CheckpointSize:
    """Bytes and elements of a checkpoint's tensors (no file headers)."""

    bytes: int
    elements: int
    quantized_bytes: int  # the quantized linears (packed weights, scales, zeros, their biases)
    unquantized_bytes: int
    quantized_linears: int
    linears: int
    mtp_bytes: int
    by_role: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"bytes": self.bytes, "elements": self.elements, "quantized_bytes": self.quantized_bytes,
                "unquantized_bytes": self.unquantized_bytes, "quantized_linears": self.quantized_linears,
                "linears": self.linears, "mtp_bytes": self.mtp_bytes, "by_role": dict(self.by_role)}


def weight_format(cfg: ModelConfig, weight_dtype: str) -> tuple[Quantization | None, str]:
    """The quantization the weights are stored in and the dtype of everything else.

    A quantized checkpoint keeps its own format (``weight_dtype`` is the dtype of its other tensors);
    the block-scaled weight dtypes int4 / fp4, and fp8 / int8, quantize the decoder's linears of a plain model as a
    serving engine's quantizer does, the rest at the checkpoint's dtype (:func:`gemmlib.llm.quant.for_weight_dtype`);
    a 16- or 32-bit weight dtype stores every tensor at that dtype.
    """
    wd = weight_dtype_name(weight_dtype)
    if wd in BLOCK_SCALED and cfg.quant is not None:
        raise InputError(N_("{name} is already quantized ({quant}); its weights are sized from its "
                            "quantization_config: choose a plain weight dtype for its other tensors (bf16, fp16, ...)"),
                         name=cfg.name, quant=cfg.quant.label or cfg.quant.method)
    if wd in BLOCK_SCALED + QUANTIZED_8BIT and cfg.quant is None:
        rest = cfg.dtype if cfg.dtype and cfg.dtype not in BLOCK_SCALED + QUANTIZED_8BIT else "bf16"
        return for_weight_dtype(wd), rest
    return cfg.quant, wd


def _linear_bytes(q: Quantization | None, lin: Linear, dtype: str) -> tuple[int, int, bool]:
    """(bytes, elements, quantized) of one stored linear (all ``count`` copies)."""
    dt = storage_dtype(dtype)
    if lin.role == "conv":
        q = None  # a convolution's weights stay at the checkpoint dtype
    if lin.storage:  # kept at its own dtype (A.X-K2's fp32 router), never quantized
        q, dt = None, storage_dtype(lin.storage)
    if q is not None and q.method == "mlx":
        q = q.for_module(lin.module)
        if q is not None and lin.in_features % q.group_size:
            q = None  # mlx_lm quantizes only what the group size divides
        if q is not None:
            tensors = q.linear_tensors(lin.out_features, lin.in_features, lin.bias, dtype)
            return (lin.count * sum(t.bytes for t in tensors), lin.count * sum(t.numel for t in tensors), True)
    if q is not None and q.quantizes(lin.module, lin.role if lin.role != "mtp" else "router"):
        if q.expert_fp4 and lin.role == "expert":
            tensors = q.fp4_expert_tensors(lin.out_features, lin.in_features)
            return (lin.count * sum(t.bytes for t in tensors), lin.count * sum(t.numel for t in tensors), True)
        if lin.fused_experts and q.method == "mxfp4":
            tensors = q.expert_tensors(lin.count, lin.out_features, lin.in_features, lin.bias, dtype,
                                       lin.fused_experts)
            return sum(t.bytes for t in tensors), sum(t.numel for t in tensors), True
        tensors = q.linear_tensors(lin.out_features, lin.in_features, lin.bias, dtype)
        return (lin.count * sum(t.bytes for t in tensors), lin.count * sum(t.numel for t in tensors), True)
    rest_dt = storage_dtype(q.unquantized_dtype) if q is not None and q.unquantized_dtype else dt
    n = lin.out_features * lin.in_features + (lin.out_features if lin.bias else 0)
    return lin.count * n * STORAGE_BYTES[rest_dt], lin.count * n, False


@lru_cache(maxsize=256)
def checkpoint_size(cfg: ModelConfig, weight_dtype: str, *, mtp: bool = True) -> CheckpointSize:
    """The exact tensor bytes of the checkpoint with its weights at ``weight_dtype`` (see :func:`weight_format`);
    ``mtp=False`` leaves out the multi-token-prediction layers (what a forward pass loads)."""
    q, rest = weight_format(cfg, weight_dtype)
    rest_dt = storage_dtype(q.unquantized_dtype) if q is not None and q.unquantized_dtype else storage_dtype(rest)
    total = elements = qbytes = nq = n = mtp_b = 0
    by_role: dict[str, int] = {}
    for lin in stored_linears(cfg, mtp=mtp):
        b, e, quantized = _linear_bytes(q, lin, rest)
        total += b
        elements += e
        n += lin.count
        if quantized:
            qbytes += b
            nq += lin.count
        if lin.layer >= cfg.layers:
            mtp_b += b
        by_role[lin.role] = by_role.get(lin.role, 0) + b
    for name, numel, storage in stored_params(cfg, mtp=mtp):
        if name == "embedding" and q is not None and q.method == "mlx":  # nn.Embedding.to_quantized
            b, e, quantized = _linear_bytes(q, _embedding(cfg), rest)
            total += b
            elements += e
            qbytes += b if quantized else 0
            by_role["embedding"] = by_role.get("embedding", 0) + b
            continue
        b = numel * STORAGE_BYTES[storage or rest_dt]
        total += b
        elements += numel
        if name.startswith("layers.") and int(name.split(".")[1]) >= cfg.layers:
            mtp_b += b
        role = "embedding" if name in ("embedding", "positions") else "norms and other"
        by_role[role] = by_role.get(role, 0) + b
    if q is not None and q.method == "awq" and cfg.family in _AWQ_SCALED_ACT:
        extra = (cfg.layers + (cfg.mtp_layers if mtp else 0)) * cfg.ffn * 2  # mlp.act.scales, fp16
        total += extra
        elements += extra // 2
        qbytes += extra
    return CheckpointSize(int(total), int(elements), int(qbytes), int(total - qbytes), nq, n, int(mtp_b), by_role)


def idle_expert_bytes(cfg: ModelConfig, weight_dtype: str) -> int:
    """Bytes of the stored experts no text token runs (ERNIE 4.5 VL's image experts): held in memory, split over the
    GPUs as the text experts are, never read by a text prompt's GEMMs."""
    if not cfg.vision_expert_ffn:
        return 0
    q, rest = weight_format(cfg, weight_dtype)
    return sum(_linear_bytes(q, lin, rest)[0] for lin in stored_linears(cfg) if lin.role == "expert" and not lin.ops)


@lru_cache(maxsize=256)
def op_weight_bytes(cfg: ModelConfig, weight_dtype: str) -> dict[tuple[str, str], float]:
    """Bytes of each op's weight matrix (bias included) in ONE layer of each MLP kind ("D" dense,
    "M" MoE; one expert for the routed experts), keyed (op name, kind); a fused matrix is shared out
    by rows. The LM head's key is ("lm_head", "")."""
    q, rest = weight_format(cfg, weight_dtype)
    out: dict[tuple[str, str], float] = {}
    n = _names(cfg)
    seen: set[tuple[str, str]] = set()
    kinds, akinds = cfg.mlp_kinds, cfg.attention_kinds
    for i, kind in enumerate(kinds):
        if (akinds[i], kind) in seen:
            continue
        seen.add((akinds[i], kind))
        # a kind of layer with a shape of its own (Gemma 4's full layers, its layers reusing K/V) is read from that
        # shape's table
        own = cfg.attention_shape(akinds[i]) is cfg
        extra = _per_layer_inputs(cfg, i, n) + _altup_laurel(cfg, i, n) + _norm_gates(cfg, i, n, kind)
        layer: dict[tuple[str, str], float] = {}  # an op served by several matrices (OLMo Hybrid's q, k, v) sums them
        for lin in (_attention(cfg, i, n) + _mlp(cfg, i, n, kind) if own else []) + extra:
            b, _, _ = _linear_bytes(q, lin, rest)
            per = b / lin.count
            rows = sum(r for _, r in lin.ops)
            for op, r in lin.ops:
                layer[(op, kind)] = layer.get((op, kind), 0.0) + per * r / rows
        out.update(layer)
    for lin in _per_layer_inputs(cfg, -1, n) + _altup_laurel(cfg, -1, n):  # one matrix per op (AltUp's n - 1 alike)
        out.setdefault((lin.ops[0][0], ""), float(_linear_bytes(q, lin, rest)[0]))
    if "N" in cfg.ngram_layers:  # Qwen4-Exp's n-gram projections, alike in every N layer
        for lin in _ngram(cfg, cfg.ngram_layers.index("N"), n):
            out[(lin.ops[0][0], "M")] = out[(lin.ops[0][0], "D")] = float(_linear_bytes(q, lin, rest)[0])
    if cfg.head_dense:
        out[("head_dense", "")] = float(_linear_bytes(q, _head_dense(cfg), rest)[0])
    if cfg.tied_embeddings and q is not None and q.method == "mlx":  # the quantized embedding, used as a linear
        out[("lm_head", "")] = float(_linear_bytes(q, _embedding(cfg), rest)[0])
    elif cfg.tied_embeddings:
        out[("lm_head", "")] = (cfg.vocab * cfg.hidden + (cfg.head_vocab if cfg.lm_head_bias else 0)) * STORAGE_BYTES[
            storage_dtype(q.unquantized_dtype) if q is not None and q.unquantized_dtype else storage_dtype(rest)]
    else:
        head = Linear(n["head"], "lm_head", cfg.head_vocab, cfg.hidden, cfg.lm_head_bias, -1,
                      (("lm_head", cfg.head_vocab),))
        out[("lm_head", "")] = float(_linear_bytes(q, head, rest)[0])
    return out


def element_bytes(cfg: ModelConfig, weight_dtype: str) -> float:
    """Bytes per element of the tensors that are not quantized (norms, embeddings)."""
    q, rest = weight_format(cfg, weight_dtype)
    return STORAGE_BYTES[storage_dtype(q.unquantized_dtype) if q is not None and q.unquantized_dtype
                         else storage_dtype(rest)]
