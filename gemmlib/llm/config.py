"""Decoder-only transformer configurations: presets, Hugging Face config.json, exact parameter counts.

A :class:`ModelConfig` holds every field the accounting needs and nothing else. It is a frozen
dataclass, so it hashes and can key ``st.cache_data``. One configuration covers every family the
parser reads (``gemmlib.llm.hf``):

* attention: query / KV heads and head dims (the value head may differ, as in MLA), q/k/v and output
  biases, qk-norm (one norm of head_dim shared by the heads, or one over all heads' width),
  attention sinks, a per-layer pattern of full, sliding-window and chunked layers, MLA (low-rank
  query and a compressed KV latent: ``q_lora_rank``, ``kv_lora_rank``, ``rope_head_dim``), a KV cache
  that may hold more heads than the projections make (Falcon's new decoder);
* the MLP: gated or plain, with biases; mixtures of experts with their own width, shared experts
  (and Qwen's sigmoid gate on them), dense layers among the MoE ones (first k dense, every n-th MoE,
  an explicit list), router and expert biases, and Llama 4's dense execution of every expert;
* Gemma 4: full-attention layers of their own head dim and KV heads whose keys may double as values (no v_proj),
  the last layers reusing an earlier layer's K/V (``f`` / ``s``: no k/v projection, no cache; their MLP maybe
  wider), per-layer inputs (a table, a projection to every layer's input, a gate and a projection per layer), a
  router with learned scales and the norms around experts that run beside a dense MLP (:meth:`attention_shape`);
* the rest: norms (RMSNorm, LayerNorm with or without bias, parameter-free), how many per layer
  (1 for a parallel block, 2, 4 for Gemma's sandwich), parallel attention + MLP, learned positions or
  alibi, tied embeddings, an LM head bias, the trained context length, and what the checkpoint
  stores beside the model (multi-token-prediction layers, router score-bias buffers, its dtype and
  its quantization).

Parameter counts are exact: embeddings, position table, norms, biases, qk-norm weights, sinks, an
untied LM head, every expert and shared expert. ``tests/llm/test_families.py`` checks them against
``numel()`` of the same architecture built by Hugging Face transformers for every family;
``tests/llm/test_model.py`` checks each preset against its published checkpoint.

This module never imports torch.
"""

from __future__ import annotations

import numbers
from dataclasses import asdict, dataclass, field, fields
from functools import cached_property

from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_, Text
from gemmlib.llm.quant import Quantization
from gemmlib.llm.ssm import MIXER_LETTERS, Mixer

MLP_KINDS = ("gated", "plain")

# rms: a weight; layer: weight and bias; layer_weight: LayerNorm with a weight only (Cohere);
# plain: LayerNorm without parameters (OLMo).
NORM_KINDS = ("rms", "layer", "layer_weight", "plain")
NORM_WEIGHTS = {"rms": 1, "layer": 2, "layer_weight": 1, "plain": 0}

# none; head: one norm of head_dim shared by all heads, on q and on k (Qwen3, Gemma 3, phi);
# width: one norm over all heads' width, on q (heads·head_dim) and k (kv_heads·head_dim) (OLMo 2, Cohere);
# l2: a parameter-free L2 norm (Llama 4).
QK_NORMS = ("none", "head", "width", "l2")

# Per-layer mixer: F full attention, S sliding window, C chunked (Llama 4: a window that restarts every chunk);
# the hybrid families' L Gated DeltaNet (linear attention), M Mamba, 2 Mamba-2, P full attention and the model's
# Mamba-2 (Falcon-H1, Zamba2) or Mamba (Zamba) mixer in one layer, V LFM2's gated short convolution, - none (a Nemotron-H MLP layer). See gemmlib.llm.ssm.
LAYER_KINDS = {"F": "full", "S": "sliding", "C": "chunked", "L": "linear_attention", "M": "mamba", "2": "mamba2",
               "P": "attention+mamba", "I": "indexed", "V": "short_conv", "f": "full_kv_shared",
               "s": "sliding_kv_shared", "A": "compressed_sparse", "H": "heavily_compressed", "N": "lightning", "K": "kimi_delta",
               "X": "cross_attention", "R": "rg_lru", "W": "rwkv", "J": "indexed_nope", "G": "full_nope",
               "i": "indexed_kv_shared", "j": "indexed_nope_kv_shared", "g": "full_nope_kv_shared",
               "-": "none"}
# I: full attention with its own DeepSeek Sparse Attention indexer (a DSA model's F layers reuse another layer's choice);
# in a block-sparse model (MiniMax-M3, index_block > 0) full attention whose indexer keeps whole blocks of keys (its F
# layers are plain full attention)
# X: a cross-attention layer (Llama 3.2 Vision): attention from the text to an image's vision tokens and its own MLP,
# both tanh-gated; it runs only when an image is given (transformers skips it on text), so its weights are counted and
# it does no work on a text prompt and caches nothing (its MLP letter is -)
# f / s: full / sliding attention that reuses the keys and values of the last earlier layer of its kind (Gemma 4's
# num_kv_shared_layers): no k/v projection, no cache of its own
# A / H: DeepSeek-V4's compressed layers: the sliding window's keys plus compressed entries, one per csa_rate tokens
# chosen per query by a lightning indexer (A, compressed sparse attention) or one per hca_rate tokens all read (H,
# heavily compressed attention)
# J / G: MLA without rotary dims in the layer (Mistral Large 4's NoPE layers: the rotary part of every query and key
# head joins its non-rotary part, the latent alone is cached), with its own indexer (J) or reusing another layer's (G)
# i / j / g: an I / J / G layer that reads an earlier layer's latent (Mistral Large 4's kv_source_layers): no
# kv_a_proj and no latent of its own (an i / j layer caches its indexer's keys only); it still decompresses the latent
# with its own kv_b_proj
ATTENTION_LETTERS = "FSCPIfsAHJGijg"  # layers with softmax attention (a KV cache, their own or another layer's)
WINDOW_LETTERS = "SCsAH"
COMPRESSED_LETTERS = "AH"
KV_SHARED_LETTERS = {"f": "F", "s": "S", "i": "I", "j": "J", "g": "G"}  # a layer reusing K/V → the kind of layer
# whose K/V it reads
INDEXER_LETTERS = frozenset("IiJj")  # layers that run their own indexer
NOPE_LETTERS = frozenset("JGjg")  # MLA layers without rotary dims
# Per-layer MLP: M routed experts, D dense, - none (a Nemotron-H mixer layer has no MLP).
MLP_LAYER_KINDS = {"M": "moe", "D": "dense", "-": "none"}

ATTN_GATES = ("", "head", "element")  # a separate gate projection on the attention output: none, per head, per element
EXPERTS_COMPUTE = ("routed", "all")  # "all": every expert runs on every token (Llama 4 in transformers)


ANY_FIELD_CAP = 10**12  # a whole-number field of any name (a config.json's own keys too): past any real model

# Caps against absurd input (a user's config.json or CLI flags), far above any real model.
_CAPS = {
    "layers": 10_000,
    "hidden": 1_000_000,
    "heads": 100_000,
    "kv_heads": 100_000,
    "head_dim": 100_000,
    "v_head_dim": 100_000,
    "ffn": 10_000_000,
    "expert_ffn": 10_000_000,
    "shared_expert_ffn": 10_000_000,
    "vocab": 100_000_000,
    "experts": 100_000,
    "experts_per_token": 100_000,
    "learned_positions": 100_000_000,
    "sliding_window": 1_000_000_000,
    "max_positions": 1_000_000_000,
    "q_lora_rank": 1_000_000,
    "kv_lora_rank": 1_000_000,
    "rope_head_dim": 100_000,
    "kv_cache_heads": 100_000,
    "mtp_layers": 100,
}


def _whole(name: str, value, *, minimum: int = 1) -> int:
    """A whole number >= minimum, or an InputError naming the field."""
    if isinstance(value, bool) or value is None:
        raise InputError(N_("{name} must be a whole number, got {value!r}"), name=name, value=value)
    if isinstance(value, float):
        if not value.is_integer():
            raise InputError(N_("{name} must be a whole number, got {value!r}"), name=name, value=value)
        value = int(value)
    if isinstance(value, numbers.Integral):
        value = int(value)
    if not isinstance(value, int):
        raise InputError(N_("{name} must be a whole number, got {value!r}"), name=name, value=value)
    shown = value if value.bit_length() <= 64 else Text(N_("a number of about 10^{exponent}"),
                                                         exponent=int(value.bit_length() * 0.30103))
    if value < minimum:
        raise InputError(N_("{name} must be at least {minimum}, got {value}"),
                         name=name, minimum=minimum, value=shown)
    cap = _CAPS.get(name, ANY_FIELD_CAP)
    if cap is not None and value > cap:
        raise InputError(N_("{name} = {value} is beyond any real model (limit {cap:,})"),
                         name=name, value=shown, cap=cap)
    return value


def layer_pattern(layers: int, spec: str) -> str:
    """A per-layer attention pattern (one letter per layer: F full, S sliding) from a short spec.

    ``all`` / ``none``: every layer sliding / full; ``alternate``: layers 0, 2, 4, ... sliding (Gemma 2,
    gpt-oss); ``N:M``: N sliding then M full, repeated (Gemma 3 is 5:1, Command R7B 3:1); a string of
    S/F letters: that unit repeated to the layer count.

    Every size is bounded before anything proportional to it is made: the layer count by the same cap as
    :class:`ModelConfig`'s (a link or a flag asking for 10^9 layers is refused, not built), N and M by that
    cap too (the pattern is computed layer by layer, never as an N-letter unit), the spec's length as well.
    """
    layers = _whole("layers", layers)
    s = str(spec)
    if len(s) > _CAPS["layers"] + 16:
        raise InputError(N_("sliding pattern: {n:,} characters is longer than any model's layer count (limit "
                            "{cap:,} letters)"), n=len(s), cap=_CAPS["layers"])
    s = s.strip()
    low = s.lower()
    if low in ("", "none", "full"):
        return "F" * layers
    if low == "all":
        return "S" * layers
    if low == "alternate":
        return "".join("S" if i % 2 == 0 else "F" for i in range(layers))
    if ":" in s:
        a, _, b = s.partition(":")
        try:
            n, m = int(a), int(b)
        except ValueError:
            raise InputError(N_("sliding pattern {spec!r}: write N:M as two whole numbers, e.g. 5:1"),
                             spec=_shown_spec(s)) from None
        if n < 0 or m < 0 or n + m == 0:
            raise InputError(N_("sliding pattern {spec!r}: N and M must be ≥ 0 and not both 0"), spec=_shown_spec(s))
        cap = _CAPS["layers"]
        if n > cap or m > cap:
            raise InputError(N_("sliding pattern {spec!r}: N and M must be at most {cap:,} (the layer limit)"),
                             spec=_shown_spec(s), cap=cap)
        period = n + m
        return "".join("S" if i % period < n else "F" for i in range(layers))
    unit = s.upper()
    if not unit or set(unit) - set(LAYER_KINDS):
        raise InputError(N_("sliding pattern {spec!r}: use all, alternate, N:M (e.g. 5:1) or letters S (sliding) and F "
                            "(full)"), spec=_shown_spec(s))
    return "".join(unit[i % len(unit)] for i in range(layers))


def _shown_spec(s: str) -> str:
    """A spec as an error message quotes it: cut when long (a 10,000-character value is not echoed whole)."""
    return s if len(s) <= 40 else s[:37] + "…"


def moe_pattern(layers: int, *, first_dense: int = 0, every: int = 1, dense_layers: tuple[int, ...] = ()) -> str:
    """Which layers are mixtures of experts (M) and which dense (D): the first ``first_dense`` are dense
    (DeepSeek, GLM), then every ``every``-th layer is MoE (layer i with (i+1) % every == 0: Qwen's
    decoder_sparse_step, Llama 4's interleave step), and ``dense_layers`` are dense (mlp_only_layers).
    The layer count is bounded first (:class:`ModelConfig`'s cap), as in :func:`layer_pattern`."""
    layers = _whole("layers", layers)
    first_dense = _whole("first dense layers", first_dense, minimum=0)
    every = max(1, _whole("MoE every n-th layer", every, minimum=0))
    dense = frozenset(dense_layers)
    return "".join("D" if i < first_dense or (i + 1) % every or i in dense else "M" for i in range(layers))


@dataclass(frozen=True)
class ModelConfig:
    """A decoder-only transformer, as much as FLOPs, bytes and parameter counts need.

    ``head_dim = 0`` means hidden // heads, ``v_head_dim = 0`` the same as head_dim.
    ``experts = 0`` is a dense MLP; ``experts = E`` with ``experts_per_token = k`` is a mixture of
    experts whose router is a hidden × E GEMM and whose every token runs through k experts of width
    ``expert_ffn`` (0: ``ffn``). ``learned_positions`` is the size of a learned position table
    (GPT-2: 1024), 0 for rotary models. ``layer_types`` and ``moe_layers`` give one letter per layer
    ("" = every layer full / every layer MoE). ``kv_lora_rank > 0`` makes the attention MLA.
    """

    layers: int
    hidden: int
    heads: int
    ffn: int
    vocab: int
    kv_heads: int = 0  # 0: same as heads (multi-head attention)
    head_dim: int = 0  # 0: hidden // heads
    mlp: str = "gated"  # "gated" (SwiGLU: gate, up, down) or "plain" (up, down)
    tied_embeddings: bool = False
    norm: str = "rms"  # see NORM_KINDS
    qkv_bias: bool = False
    o_bias: bool = False
    last_o_bias: bool = False  # GPT-NeoX-Japanese: a bias on the last layer's attention output only
    mlp_bias: bool = False
    activation_params: int = 0  # learned scalars of a dense MLP (Apertus' xIELU: alpha_p, alpha_n; Inkling's
    # global_scale; Dory's suv_gate and suv_up, 2 × ffn)
    ffn_norm: bool = False  # a norm over a dense MLP's intermediate before down_proj (BitNet's ffn_sub_norm)
    learned_positions: int = 0
    experts: int = 0
    experts_per_token: int = 0
    name: str = "custom"
    source: str = ""
    # ----- attention ---------------------------------------------------------------------
    family: str = "custom"  # the config.json model_type it was read from
    v_head_dim: int = 0  # 0: head_dim
    kv_cache_heads: int = 0  # 0: kv_heads (Falcon's new decoder caches K/V broadcast to every head)
    qk_norm: str = "none"
    attention_sinks: bool = False  # gpt-oss: one learned logit per head
    sliding_window: int = 0
    layer_types: str = ""  # F / S / C per layer; "" = all full
    q_lora_rank: int = 0  # MLA: 0 = a plain q_proj
    kv_lora_rank: int = 0  # MLA when > 0: the cached latent
    rope_head_dim: int = 0  # MLA: the rotary part of head_dim (qk_rope_head_dim)
    # DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5): a lightning indexer in each I layer scores each query against
    # every cached key with index_heads small heads and keeps index_topk keys for the MLA attention (F layers reuse it)
    index_heads: int = 0  # index_n_heads; 0: no indexer
    index_head_dim: int = 0
    index_topk: int = 0  # keys per query (DSA), or blocks of index_block keys per query (block-sparse)
    # MiniMax-M3's block-sparse attention: each I layer's indexer (index_heads heads of index_head_dim from the hidden
    # state, one cached key of index_head_dim) scores every key, max-pools the scores over blocks of index_block keys
    # and keeps, per query and KV group, index_topk blocks, the query's own among them; 0: no block-sparse attention
    index_block: int = 0
    alibi: bool = False  # positions as attention biases (no rotary)
    max_positions: int = 0  # max_position_embeddings (0: unknown)
    fused_qkv: bool = False  # one stored q|k|v matrix (phi3, gpt_neox, falcon, gpt2, internlm2)
    fused_gate_up: bool = False  # one stored gate|up matrix (phi3; gpt-oss and the fused 3-D experts)
    # ----- norms, block, head --------------------------------------------------------------
    norms_per_layer: int = 2  # 1 (a parallel block's shared norm), 2, 3 (BitNet: a norm before o_proj), 4 (sandwich)
    parallel_block: bool = False  # attention and MLP read the same input (GPT-J style)
    lm_head_bias: bool = False
    embedding_norm: bool = False  # a norm right after the token embedding (BLOOM's word_embeddings_layernorm)
    output_vocab: int = 0  # the LM head's rows when pruned to fewer than the embedding's (Apertus 1.5); 0: vocab
    # ----- mixture of experts ----------------------------------------------------------------
    expert_ffn: int = 0  # 0: ffn
    moe_layers: str = ""  # M / D per layer; "" = all MoE when experts > 0
    shared_expert_ffn: int = 0  # width of the always-on shared expert MLP (0: none)
    shared_expert_gate: bool = False  # Qwen-MoE: a sigmoid gate Linear(hidden, 1) on the shared expert
    router_bias: bool = False
    expert_bias: bool = False
    experts_compute: str = "routed"  # "all": every expert on every token (Llama 4 in transformers)
    zero_experts: int = 0  # LongCat-Flash: identity experts the router may also pick (no weights, no compute)
    # ----- what the checkpoint stores besides the model -----------------------------------------
    router_score_bias: bool = False  # DeepSeek-V3 / GLM: e_score_correction_bias, a buffer per MoE layer
    score_bias_param: bool = False  # ERNIE 4.5: that bias is a parameter (counted in params), not a buffer
    mtp_layers: int = 0  # multi-token-prediction layers stored in the checkpoint, not run by the forward
    dtype: str = ""  # the checkpoint's torch_dtype ("" unknown)
    quant: Quantization | None = field(default=None)
    # ----- hybrid families ---------------------------------------------------------------------
    mixer: Mixer | None = field(default=None)  # the linear-attention / state-space mixer of the L / M / 2 / P layers
    attn_output_gate: bool = False  # Qwen3-Next: q_proj also makes a sigmoid gate on the attention output
    no_positions: bool = False  # attention without positional encoding (Jamba, Nemotron-H: the mixers carry order)
    sinusoidal: bool = False  # fixed sinusoidal positions added to the embedding (XGLM): no parameter, no rotary
    attn_gate_bias: bool = False  # Beam: a learned bias per head on that gate (gate_bias)
    attn_gate: str = ""  # a gate projection of its own on the attention output (g_proj): "head" (hidden → heads,
    # LFM3, Laguna) or "element" (hidden → heads × head_dim, Laguna's per-element gating); "" none
    # ----- Gemma 4: full-attention layers of their own shape ----------------------------------------
    full_head_dim: int = 0  # the F layers' head dim (global_head_dim); 0: head_dim
    full_kv_heads: int = 0  # the F layers' KV heads (num_global_key_value_heads); 0: kv_heads
    full_k_eq_v: bool = False  # the F layers have no v_proj: the key projection is the values too (attention_k_eq_v)
    k_eq_v: bool = False  # keys double as values in every attention layer (set on attention_shape("F") from full_k_eq_v)
    sliding_sinks_only: bool = False  # MiMo-V2-Flash: attention sinks in the sliding layers only, none in the full
    router_scales: bool = False  # Gemma 4's router: a learned scale per hidden channel and one per expert
    moe_norms: int = 0  # norms a MoE layer has beyond norms_per_layer (Gemma 4: 3, around its dense MLP and experts)
    # ----- Gemma 4's small models (E2B, E4B) ------------------------------------------------------
    kv_shared_ffn: int = 0  # the MLP width of the f / s layers (use_double_wide_mlp: 2 × ffn); 0: ffn
    kv_reused: bool = False  # every attention layer of this shape reuses K/V (what attention_shape gives f / s)
    per_layer_input: int = 0  # per-layer inputs (hidden_size_per_layer_input): a table and two projections per layer
    per_layer_vocab: int = 0  # the per-layer table's vocabulary (vocab_size_per_layer_input); 0: vocab
    # ----- Gemma 3n ----------------------------------------------------------------------------------
    altup_inputs: int = 0  # AltUp's streams (altup_num_inputs): 0 none; the layers run on one, the rest predicted
    laurel_rank: int = 0  # LAuReL's low-rank residual beside each layer's attention (laurel_rank): 0 none
    # ----- DeepSeek-V4 -------------------------------------------------------------------------------
    # compressed_attention: one head of keys that are the values too (kv_proj, kv_norm) read by every query head, the
    # queries from a latent (q_lora_rank: q_a_proj, its norm, q_b_proj), a sink per head, a grouped output projection
    # (o_groups groups of heads, each to o_lora_rank, then o_lora_rank · o_groups → hidden); S layers a sliding window,
    # A and H layers that window plus compressed entries (csa_rate / hca_rate tokens each; A's lightning indexer of
    # index_heads × index_head_dim keeps index_topk of them per query)
    compressed_attention: bool = False
    o_groups: int = 0
    o_lora_rank: int = 0
    csa_rate: int = 0
    hca_rate: int = 0
    hyper_streams: int = 0  # hyper-connections (hc_mult): the residual as n streams; 0 none
    hyper_mix: bool = True  # DeepSeek-V4's manifold-constrained ones also mix the streams by an n × n matrix per token;
    # HY-V4's independent ones (iHC) only collapse and expand them
    hash_layers: int = 0  # MoE layers routed by a token-id table (tid2eid, a checkpoint buffer) instead of top-k
    # ----- A.X-K2 -------------------------------------------------------------------------------------
    q_gate_latent: bool = False  # q_gate_proj: [normed query latent; query latent] → the queries and a sigmoid gate per
    # element of the attention output, in place of q_b_proj
    gated_norm_rank: int = 0  # a low-rank sigmoid gate (hidden → r → hidden, SiLU) after every layer's input norm and
    # each MoE layer's post-attention norm; 0 none
    # ----- Inkling ------------------------------------------------------------------------------------
    short_conv: int = 0  # depthwise causal convolutions of this kernel, each with a residual and kept in fp32, on
    # every attention layer's keys and values and on the attention's and the MLP's outputs; 0 none
    rel_bias: int = 0  # relative states per head (r_proj: hidden → heads × rel_bias) that a [rel_bias, extent] bank
    # turns into an attention bias per backward distance; 0 none
    rel_extent: int = 0  # the full layers' extent of that bias, in tokens (a sliding layer's is its window)
    router_sinks: int = 0  # shared experts the router scores beside the routed ones (Inkling's shared-expert sink)
    router_global_scale: bool = False  # a learned scalar on the routing weights (Inkling's gate.global_scale, fp32)
    # ----- Inkling 2 ----------------------------------------------------------------------------------
    clip_norms: bool = False  # queries and relative states scaled per element (learned) then L2-clipped, keys L2-clipped,
    # values RMS-normed without a weight (instead of qk_norm)
    sink_proj: bool = False  # a sink logit per head projected from each token (hidden → heads), not a learned constant
    qkv_input_norms: bool = False  # the full layers norm the query, key and value inputs apart (three input norms)
    dynamic_kv_conv: bool = False  # the full layers' K/V convolutions add per-token taps (hidden → kv heads × kernel)
    attn_res_block: int = 0  # block attention residuals: every layer's attention and MLP input (and the final norm's)
    # attend, with learned queries, over the block states of every this-many layers; 0 none
    # a looped stack (Inkling-2-Mini): layers loop_start .. loop_end - 1 run loop_passes times, each pass with its own
    # cache and restarting from the state before the loop; from the second pass every input of a looped layer mixes in a
    # message (4 learned queries over the previous pass's blocks) through a rank-loop_gate_rank gate
    loop_start: int = 0
    loop_end: int = 0
    loop_passes: int = 1
    loop_gate_rank: int = 0
    loop_shared_cache: bool = False  # Dory's last_loop mode: one cache per looped layer, written by the last pass only
    # HRM-Text: the first half of the layers (the low-level module) runs hrm_cycles × hrm_low_cycles times, the second
    # half (the high-level one) hrm_cycles times, each run with its own cache; a learned initial state of the low level
    hrm_cycles: int = 0
    hrm_low_cycles: int = 0
    # ----- Muse Spark ---------------------------------------------------------------------------------
    expert_hidden: int = 0  # a latent mixture: the experts run at this width, the hidden state projected down before
    # them and back up after (biased with mlp_bias: Nemotron-H's moe_latent_size); 0: the experts run at the hidden size
    latent_norms: bool = False  # Muse Spark: a norm after the projection down and on each expert's output
    residual_gates: bool = False  # a learned gate per hidden channel on each of a layer's two residual adds (fp32)
    # ----- Dory ---------------------------------------------------------------------------------------
    attn_scale_params: int = 0  # learned scales per attention layer beyond its projections and norms (Dory: sqk and
    # s_gate on the heads' width, the residual rates lambda_1 and lambda_2 on the hidden state)
    logit_scale: bool = False  # a learned scale per vocabulary entry on the logits (Dory's lm_head.logit_scale)
    # ----- Dots 3 Note, Step 3.7 ----------------------------------------------------------------------
    # the sliding layers' own query heads (Step 3.7: the KV heads stay; Dots 3 Note's MLA: every head) and MLA shape
    # (0: the other layers'): query and key/value latents, head dims
    sliding_heads: int = 0
    sliding_q_lora_rank: int = 0
    sliding_kv_lora_rank: int = 0
    sliding_nope_head_dim: int = 0
    sliding_rope_head_dim: int = 0
    sliding_v_head_dim: int = 0
    rope_key_norm: bool = False  # an RMSNorm over MLA's shared rotary key in every attention layer
    # ----- ZAYA ---------------------------------------------------------------------------------------
    # compressed convolutional attention (CCA): the queries and keys (q|k channels) through a depthwise causal
    # convolution of cca_depthwise taps, then a convolution grouped by head of cca_grouped taps (both biased), each
    # with a residual; the values half from the token, half from the token before (its projection kept in the cache)
    cca_depthwise: int = 0
    cca_grouped: int = 0
    residual_affine: bool = False  # a scale and a bias on both sides of every residual add, and on the embedding
    router_hidden: int = 0  # the router an MLP: hidden → r (biased), a norm, two r → r layers (biased, GELU), r → choices;
    # each layer after the first adds the previous layer's router state, scaled per channel; 0: one linear
    # ----- Qwen4-Exp ----------------------------------------------------------------------------------
    # QSA: the block indexer (index_block keys a block) scores the mean of each complete block, not every key, and a
    # query keeps index_topk complete blocks beside the tokens of its incomplete one
    index_mean_pool: bool = False
    hyper_gate_rank: int = 0  # gated hyper-connections over hyper_streams streams: a grouped norm of the streams (it
    # replaces the layer's input norms and the final norm), a rank-r sigmoid gate per element, the gated streams
    # averaged into the layer's input, and n injection weights for its output; 0: DeepSeek-V4's kind
    # per-layer n-gram embeddings (PLE): in each N layer, hashed n-gram tables (ngram_heads per order 2 … ngram_order,
    # ngram_rows rows in all over the model, each ngram_dim / heads wide) projected to a key per stream and one value,
    # gated by the streams and filtered by a dilated depthwise convolution (kernel ngram_conv, dilation ngram_order)
    ngram_layers: str = ""  # N / - per layer; "" none
    ngram_dim: int = 0
    ngram_order: int = 0
    ngram_heads: int = 0
    ngram_rows: int = 0
    ngram_conv: int = 0
    # ----- Mistral Large 4 ----------------------------------------------------------------------------
    index_q_from_hidden: bool = False  # the DSA indexer's queries from the hidden state (a LayerNorm, weight and bias,
    # then wq_b: hidden → heads × dim) scaled per head by a learned log-position scale and bias, not from MLA's query
    # latent (NoPE layers: no rotary dims in the layer, so none in its indexer either)
    rope_scales: int = 0  # learned scales of the rotary frequencies, one per frequency, kept in fp32 (LeRoPE's alpha)
    # ----- GLM-5-Next ---------------------------------------------------------------------------------
    index_kpool: int = 0  # the DSA indexer scores pools of this many keys, not keys: each complete pool's keys
    # averaged by softmax weights (a gate projected from each token, hidden → index dim, plus a learned table per slot);
    # a query keeps index_topk / index_kpool pools and the keys of its incomplete one; the cache keeps each token's
    # indexer key, gate scores and (transformers) a validity flag
    hyper_mean_head: bool = False  # the hyper-connections' last collapse a plain mean of the streams (no projection),
    # their projections at the model's dtype (biases and scales in fp32)
    # ----- ERNIE 4.5 VL ---------------------------------------------------------------------------------
    vision_expert_ffn: int = 0  # a second mixture in every MoE layer, for image tokens only: as many experts as the
    # text one, this wide, with a router and score bias of its own; stored and counted, never run on a text prompt
    # ----- Chameleon ------------------------------------------------------------------------------------
    qk_norm_bias: bool = False  # the qk norms are LayerNorms with a bias too (Chameleon's, a weight and a bias per head
    # and dim: qk_norm "width")
    # ----- Zamba2 ---------------------------------------------------------------------------------------
    attn_input_width: int = 0  # the attention's input width (0: hidden); Zamba2's reads [hidden state; embedding], 2 × hidden,
    # through a norm that wide
    shared_blocks: int = 0  # the P layers' attention and MLP are this many blocks used in turn, each stored once (Zamba2's
    # num_mem_blocks: the layer's Mamba-2 mixer runs after its block); 0: every layer its own
    block_adapter_rank: int = 0  # each P layer's own low-rank adapter on its shared block's gate|up (hidden → r → 2 × ffn)
    qkv_adapters: bool = False  # and on its q, k and v (attention input → r → each one's width)
    block_out_proj: bool = False  # the block's output projected hidden → hidden (per layer) before it joins the mixer's
    # input
    # ----- DiffLlama ------------------------------------------------------------------------------------
    diff_attention: bool = False  # differential attention: every query head attends twice with the same queries and
    # keys, once to each half of the value heads (each half repeated to the full KV heads), and the two halves of the
    # heads' outputs are combined by a learned λ and an unweighted RMSNorm (the λ vectors: attn_scale_params)
    # ----- ModernBERT decoder ---------------------------------------------------------------------------
    head_dense: bool = False  # before the LM head, a dense hidden → hidden, its activation and a norm (ModernBERT's
    # prediction head), on the positions the LM head reads
    head_dense_bias: bool = False  # that dense's bias
    first_attn_norm: bool = True  # the first layer normalises its attention input (ModernBERT's does not: the embedding
    # norm precedes it)
    # ----- JetMoE ---------------------------------------------------------------------------------------
    attn_experts: int = 0  # a mixture of attention heads: this many experts, each its own query projection (hidden →
    # kv_heads × head_dim) and output projection back, experts_per_token of them routed per token (a router of its
    # own, and a bias on the summed output); keys and values shared (one k|v projection); heads = k × kv_heads
    moe_out_bias: bool = False  # a bias (hidden wide) on a MoE layer's summed expert output
    # ----- multimodal wrappers -----------------------------------------------------------------------------
    tower_params: int = 0  # the encoders beside the decoder (a vision tower and its projector, an audio tower):
    # loaded with the weights (memory, checkpoint bytes) at 16 bits, never in `params`, the FLOPs or the KV cache

    def __post_init__(self) -> None:
        for f in ("layers", "hidden", "heads", "ffn", "vocab"):
            object.__setattr__(self, f, _whole(f, getattr(self, f)))
        for f in ("kv_heads", "head_dim", "activation_params", "index_heads", "index_head_dim", "index_topk",
                  "learned_positions", "experts", "experts_per_token", "v_head_dim",
                  "kv_cache_heads", "sliding_window", "q_lora_rank", "kv_lora_rank", "rope_head_dim",
                  "max_positions", "expert_ffn", "shared_expert_ffn", "mtp_layers", "full_head_dim",
                  "full_kv_heads", "moe_norms", "kv_shared_ffn", "per_layer_input", "per_layer_vocab",
                  "altup_inputs", "laurel_rank", "o_groups", "o_lora_rank", "csa_rate", "hca_rate",
                  "hyper_streams", "hash_layers", "output_vocab", "zero_experts", "index_block", "short_conv",
                  "rel_bias", "rel_extent", "router_sinks", "gated_norm_rank", "attn_res_block", "loop_start",
                  "loop_end", "loop_gate_rank", "attn_scale_params", "hrm_cycles", "hrm_low_cycles", "expert_hidden",
                  "hyper_gate_rank", "ngram_dim", "ngram_order", "ngram_heads", "ngram_rows", "ngram_conv",
                  "sliding_heads", "sliding_q_lora_rank", "sliding_kv_lora_rank", "sliding_nope_head_dim",
                  "sliding_rope_head_dim", "sliding_v_head_dim", "cca_depthwise", "cca_grouped", "router_hidden",
                  "rope_scales", "index_kpool", "vision_expert_ffn", "attn_input_width", "shared_blocks",
                  "block_adapter_rank", "attn_experts", "tower_params"):
            object.__setattr__(self, f, _whole(f, getattr(self, f), minimum=0))
        for f in ("norms_per_layer", "loop_passes"):
            object.__setattr__(self, f, _whole(f, getattr(self, f)))
        if self.kv_heads == 0:
            object.__setattr__(self, "kv_heads", self.heads)
        if self.head_dim == 0:
            if self.hidden % self.heads:
                raise InputError(
                    N_("hidden size {hidden} is not divisible by {heads} heads; give the head dimension explicitly"),
                    hidden=self.hidden, heads=self.heads)
            object.__setattr__(self, "head_dim", self.hidden // self.heads)
        if self.v_head_dim == 0:
            object.__setattr__(self, "v_head_dim", self.head_dim)
        if self.heads % self.kv_heads:
            raise InputError(N_("{heads} query heads cannot be shared evenly by {kv_heads} KV heads (query heads must be a "
                                "multiple of KV heads)"), heads=self.heads, kv_heads=self.kv_heads)
        if self.kv_cache_heads == 0:
            object.__setattr__(self, "kv_cache_heads", self.kv_heads)
        if self.mlp not in MLP_KINDS:
            raise InputError(N_("mlp must be one of {choices}, got {mlp!r}"),
                             choices=", ".join(MLP_KINDS), mlp=self.mlp)
        if self.norm not in NORM_KINDS:
            raise InputError(N_("norm must be one of {choices}, got {norm!r}"),
                             choices=", ".join(NORM_KINDS), norm=self.norm)
        if self.qk_norm not in QK_NORMS:
            raise InputError(N_("qk_norm must be one of {choices}, got {qk_norm!r}"),
                             choices=", ".join(QK_NORMS), qk_norm=self.qk_norm)
        if self.norms_per_layer not in (1, 2, 3, 4):
            raise InputError(N_("norms per layer must be 1, 2, 3 or 4, got {norms_per_layer}"),
                             norms_per_layer=self.norms_per_layer)
        if self.experts_compute not in EXPERTS_COMPUTE:
            raise InputError(N_("experts_compute must be one of {choices}"),
                             choices=", ".join(EXPERTS_COMPUTE))
        if self.experts == 1:
            raise InputError(N_("a mixture of experts needs at least 2 experts (use 0 for a dense MLP)"))
        if self.experts:
            if self.experts_per_token < 1 or self.experts_per_token > self.experts + self.zero_experts:
                raise InputError(N_("experts per token must be between 1 and {experts}, got {experts_per_token}"),
                                 experts=self.experts + self.zero_experts, experts_per_token=self.experts_per_token)
            if self.expert_ffn == 0:
                object.__setattr__(self, "expert_ffn", self.ffn)
        else:
            if self.experts_per_token:
                raise InputError(N_("experts per token is set but experts is 0 (a dense model)"))
            if self.shared_expert_ffn:
                raise InputError(N_("{field} is set but experts is 0 (a dense model)"), field="shared expert ffn")
            if self.vision_expert_ffn:
                raise InputError(N_("{field} is set but experts is 0 (a dense model)"), field="vision expert ffn")
            if set(self.moe_layers) - {"D", "-"}:
                raise InputError(N_("{field} is set but experts is 0 (a dense model)"), field="moe layers")
            if self.moe_norms:
                raise InputError(N_("{field} is set but experts is 0 (a dense model)"), field="moe norms")
            if self.zero_experts:
                raise InputError(N_("{field} is set but experts is 0 (a dense model)"), field="zero experts")
            if self.router_sinks:
                raise InputError(N_("{field} is set but experts is 0 (a dense model)"), field="router sinks")
            for f in ("shared_expert_gate", "router_bias", "expert_bias", "router_score_bias", "score_bias_param",
                      "router_scales", "router_global_scale"):
                if getattr(self, f):
                    raise InputError(N_("{field} is set but experts is 0 (a dense model)"),
                                     field=f.replace('_', ' '))
        for f in ("tied_embeddings", "qkv_bias", "o_bias", "last_o_bias", "mlp_bias", "attention_sinks", "alibi", "fused_qkv",
                  "fused_gate_up", "parallel_block", "lm_head_bias", "shared_expert_gate", "router_bias",
                  "expert_bias", "router_score_bias", "score_bias_param", "attn_output_gate", "no_positions", "sinusoidal",
                  "full_k_eq_v", "k_eq_v", "router_scales", "kv_reused", "sliding_sinks_only", "embedding_norm",
                  "compressed_attention", "attn_gate_bias", "hyper_mix", "ffn_norm", "router_global_scale",
                  "q_gate_latent", "clip_norms", "sink_proj", "qkv_input_norms", "dynamic_kv_conv",
                  "loop_shared_cache", "logit_scale", "residual_gates", "latent_norms", "index_mean_pool", "rope_key_norm", "residual_affine",
                  "index_q_from_hidden", "hyper_mean_head", "qk_norm_bias", "diff_attention", "head_dense", "head_dense_bias", "first_attn_norm", "moe_out_bias", "qkv_adapters", "block_out_proj"):
            if not isinstance(getattr(self, f), bool):
                raise InputError(N_("{field} must be true or false, got {value!r}"),
                                 field=f, value=getattr(self, f))
        self._check_patterns()
        self._check_compressed()
        self._check_mla()
        self._check_short_conv_and_rel_bias()
        self._check_loop()
        self._check_qwen4()
        self._check_sliding_shape()
        self._check_cca()
        self._check_layer_shapes()
        if self.quant is not None and not isinstance(self.quant, Quantization):
            raise InputError(N_("quant must be a Quantization (gemmlib.llm.quant)"))
        self._check_mixers()

    def _check_patterns(self) -> None:
        lt = self.layer_types
        if not isinstance(lt, str):
            raise InputError(N_("layer_types must be a string of F / S / C letters, one per layer"))
        if self.is_dsa and not lt:  # every layer runs its own indexer unless the pattern says otherwise
            object.__setattr__(self, "layer_types", "I" * self.layers)
            lt = self.layer_types
        indexed = any(c in INDEXER_LETTERS for c in lt)
        if indexed and not (self.is_dsa or self.is_block_sparse):
            raise InputError(N_("indexed attention layers (I) need DeepSeek Sparse Attention's indexer (index heads)"))
        if self.is_block_sparse and (not indexed or set(lt) & set("iJjGg")):
            raise InputError(N_("block-sparse attention (index_block) needs at least one layer with its indexer (I)"))
        if self.is_dsa and not indexed:
            raise InputError(N_("DeepSeek Sparse Attention needs at least one layer with its own indexer (I) for the "
                                "others to reuse"))
        if any(c in NOPE_LETTERS for c in lt) and not self.is_mla:
            raise InputError(N_("layers without rotary dims (J, G) are read for MLA only"))
        if lt and len(lt) != self.layers:
            raise InputError(N_("layer_types has {n} letters for {layers} layers"),
                             n=len(lt), layers=self.layers)
        if set(lt) - set(LAYER_KINDS):
            raise InputError(N_("layer_types letters are F (full), S (sliding window) and C (chunked); f and s for "
                                "layers reusing an earlier layer's keys and values"))
        if lt and set(lt) == {"F"}:
            object.__setattr__(self, "layer_types", "")
            lt = ""
        windowed = any(c in WINDOW_LETTERS for c in lt)
        if windowed and not self.sliding_window:
            raise InputError(N_("sliding or chunked layers need a window size (sliding_window > 0)"))
        if self.sliding_window and not windowed:
            raise InputError(N_("a sliding window is set but no layer uses it (set the sliding pattern)"))
        if self.sliding_window == 1:
            raise InputError(N_("a sliding window of 1 token attends to nothing but itself; use ≥ 2"))
        ml = self.moe_layers
        if not isinstance(ml, str):
            raise InputError(N_("moe_layers must be a string of M / D letters, one per layer"))
        if ml and len(ml) != self.layers:
            raise InputError(N_("moe_layers has {n} letters for {layers} layers"),
                             n=len(ml), layers=self.layers)
        if set(ml) - set(MLP_LAYER_KINDS):
            raise InputError(N_("moe_layers letters are M (mixture of experts), D (dense) and - (no MLP)"))
        if ml and set(ml) == {"M" if self.experts else "D"}:
            object.__setattr__(self, "moe_layers", "")
        if ml and self.experts and "M" not in ml:
            raise InputError(N_("no layer is a mixture of experts; set experts to 0 for a dense model"))
        if any(a == "X" and m != "-" for a, m in zip(self.attention_kinds, self.mlp_kinds, strict=True)):
            raise InputError(N_("a cross-attention layer (X) carries its own MLP: its MLP letter must be -"))
        if "X" in lt and (self.is_mla or self.compressed_attention or self.mixer is not None):
            raise InputError(N_("cross-attention layers (X) are read beside plain grouped-query attention only"))

    def _check_shared_blocks(self) -> None:
        """Zamba2's shared blocks: attention only in P layers, a dense MLP exactly there, full-width adapters."""
        kinds, mlps = self.attention_kinds, self.mlp_kinds
        if not self.shared_blocks or self.mixer is None or self.is_mla or self.is_moe or set(kinds) - {"P", "2", "M"} or any(
                (a == "P") != (m == "D") for a, m in zip(kinds, mlps, strict=True)) or "P" not in kinds:
            raise InputError(N_("shared attention-and-MLP blocks (Zamba's and Zamba2's) are read in P layers beside Mamba "
                                "or Mamba-2 ones (M, 2), a dense MLP in each P layer and none in the others"))
        if self.qkv_adapters and self.kv_dim != self.q_dim:
            raise InputError(N_("adapters on q, k and v need as many KV heads as query heads (they add to each at the "
                                "attention's width)"))

    def _check_latent_sharing(self) -> None:
        """Mistral Large 4: a layer reading another layer's latent (i / j / f / g) needs an earlier layer that caches
        one of its rotary kind (RoPE: I, F; NoPE: J, G), as transformers keys the shared latents by that kind."""
        rope_own, nope_own = False, False
        for c in self.attention_kinds:
            if c in KV_SHARED_LETTERS and not (nope_own if c in NOPE_LETTERS else rope_own):
                raise InputError(N_("a layer that reuses keys and values needs an earlier layer of its kind to read them "
                                    "from"))
            if c in "IF":
                rope_own = True
            elif c in "JG":
                nope_own = True
            elif c == "s" or c not in ATTENTION_LETTERS or self.compressed_attention or self.has_sliding_shape:
                raise InputError(N_("MLA layers that reuse another layer's latent are read beside full attention "
                                    "layers only"))

    def _check_layer_shapes(self) -> None:
        """Gemma 4's layers of their own shape: the K/V-reusing ones last, each after a layer of its kind; the full
        layers' own head dim and KV heads on plain grouped-query attention only."""
        shared = [c for c in self.layer_types if c in KV_SHARED_LETTERS]
        if shared and self.is_mla and not self.kv_shared_ffn:
            self._check_latent_sharing()
        elif shared or self.kv_shared_ffn:
            if self.is_mla or self.mixer is not None or set(shared) - {"f", "s"}:
                raise InputError(N_("layers that reuse another layer's keys and values are read for plain grouped-query "
                                    "attention only"))
            if self.kv_shared_ffn and self.is_moe:
                raise InputError(N_("a wider MLP in the layers that reuse keys and values is read for dense models only"))
            first = self.attention_kinds.index(shared[0]) if shared else self.layers
            if set(self.attention_kinds[first:]) - set(KV_SHARED_LETTERS):
                raise InputError(N_("the layers that reuse keys and values must be the last ones"))
            if {KV_SHARED_LETTERS[c] for c in shared} - set(self.attention_kinds[:first]):
                raise InputError(N_("a layer that reuses keys and values needs an earlier layer of its kind to read them "
                                    "from"))
        if self.output_vocab and (self.output_vocab > self.vocab or self.tied_embeddings):
            raise InputError(N_("a pruned LM head (output_vocab {n}) needs its own weights and at most the {vocab} rows "
                                "of the vocabulary"), n=self.output_vocab, vocab=self.vocab)
        if self.per_layer_vocab and not self.per_layer_input:
            raise InputError(N_("a per-layer input vocabulary is set but per_layer_input is 0"))
        if self.altup_inputs == 1:
            raise InputError(N_("AltUp needs at least 2 streams (altup_inputs; 0: none)"))
        if not self.has_full_shape and not self.k_eq_v:
            return
        if self.is_mla or self.mixer is not None or self.kv_cache_heads != self.kv_heads:
            raise InputError(N_("full-attention layers of their own shape (head dim, KV heads, keys as values) are read "
                                "for plain grouped-query attention only"))
        if self.sliding_sinks_only and not self.attention_sinks:
            raise InputError(N_("attention sinks in the sliding layers only, but the model has no attention sinks"))
        if self.full_head_dim and self.v_head_dim != self.head_dim:
            raise InputError(N_("full-attention layers of their own head dim need the value head dim equal to the head "
                                "dim"))
        fkv = self.full_kv_heads or self.kv_heads
        if self.heads % fkv:
            raise InputError(N_("{heads} query heads cannot be shared evenly by {kv_heads} KV heads (query heads must be a "
                                "multiple of KV heads)"), heads=self.heads, kv_heads=fkv)

    def _check_mixers(self) -> None:
        kinds = {MIXER_LETTERS[c] for c in self.layer_types if c in MIXER_LETTERS and c != "P"}
        if "P" in self.layer_types:  # attention beside Mamba-2 (Falcon-H1, Zamba2) or Mamba (Zamba)
            kinds.add(self.mixer.kind if isinstance(self.mixer, Mixer) and self.mixer.kind == "mamba" else "mamba2")
        if self.mixer is not None and not isinstance(self.mixer, Mixer):
            raise InputError(N_("mixer must be a Mixer (gemmlib.llm.ssm)"))
        if kinds and self.mixer is None:
            raise InputError(N_("linear-attention or state-space layers need their mixer's dimensions"))
        if self.mixer is not None and kinds != {self.mixer.kind}:
            raise InputError(N_("the layer pattern's mixers ({kinds}) do not match the mixer given ({kind})"),
                             kinds=", ".join(sorted(kinds)) or "none", kind=self.mixer.kind)
        if self.attn_output_gate and self.is_mla:
            raise InputError(N_("an attention output gate is not read for MLA"))
        if self.attn_gate not in ATTN_GATES:
            raise InputError(N_("attn_gate must be one of {choices}, got {value!r}"),
                             choices=", ".join(repr(g) for g in ATTN_GATES), value=self.attn_gate)
        if self.attn_gate_bias and not self.attn_gate:
            raise InputError(N_("a bias on the attention output gate needs the gate (attn_gate)"))

    def _check_compressed(self) -> None:
        """DeepSeek-V4's compressed attention: its fields together, its layer letters (S, A, H) only with it."""
        lt = self.attention_kinds
        if self.hash_layers and self.hash_layers > self.moe_layer_count:
            raise InputError(N_("{n} hash-routed layers, but the model has {moe} mixture-of-experts layers"),
                             n=self.hash_layers, moe=self.moe_layer_count)
        if not self.compressed_attention:
            if set(lt) & set(COMPRESSED_LETTERS) or self.o_groups or self.o_lora_rank or self.csa_rate or self.hca_rate:
                raise InputError(N_("compressed layers (A, H), grouped output projections and compression rates belong "
                                    "to DeepSeek-V4's compressed attention (compressed_attention)"))
            return
        if set(lt) - {"S", "A", "H"}:
            raise InputError(N_("DeepSeek-V4's attention layers are sliding (S), compressed sparse (A) and heavily "
                                "compressed (H)"))
        if self.is_mla or self.mixer is not None or self.kv_heads != 1 or not self.q_lora_rank:
            raise InputError(N_("DeepSeek-V4's compressed attention has one key/value head and a query latent "
                                "(q_lora_rank), no MLA latent and no mixer"))
        if not (self.o_groups and self.o_lora_rank) or self.heads % self.o_groups:
            raise InputError(N_("DeepSeek-V4's grouped output projection needs o_groups dividing the {heads} heads and "
                                "an o_lora_rank"), heads=self.heads)
        if "A" in lt and not (self.csa_rate and self.index_heads and self.index_head_dim and self.index_topk):
            raise InputError(N_("compressed sparse attention layers (A) need a compression rate (csa_rate) and the "
                                "lightning indexer's heads, head dim and top-k"))
        if "H" in lt and not self.hca_rate:
            raise InputError(N_("heavily compressed attention layers (H) need a compression rate (hca_rate)"))
        if self.rope_head_dim >= self.head_dim:
            raise InputError(N_("the rotary head dim ({rope_head_dim}) must be smaller than the head dim ({head_dim})"),
                             rope_head_dim=self.rope_head_dim, head_dim=self.head_dim)

    def _check_mla(self) -> None:
        if self.compressed_attention:
            return
        if self.index_block:  # MiniMax-M3: the indexer reads the hidden state, beside plain attention
            if self.is_mla or not (self.index_heads and self.index_head_dim and self.index_topk):
                raise InputError(N_("block-sparse attention (index_block) needs index heads, an index head dim and a "
                                    "top-k of blocks, and no MLA"))
        elif self.index_heads or self.index_head_dim or self.index_topk:
            if not (self.kv_lora_rank and (self.q_lora_rank or self.index_q_from_hidden)):
                raise InputError(N_("DeepSeek Sparse Attention's indexer reads MLA's query latent: it needs "
                                    "kv_lora_rank and q_lora_rank"))
            if not (self.index_heads and self.index_topk) or self.index_head_dim <= self.rope_head_dim:
                raise InputError(N_("DeepSeek Sparse Attention needs index heads, a top-k and an index head dim larger "
                                    "than the rotary head dim ({rope_head_dim})"), rope_head_dim=self.rope_head_dim)
        if self.shared_blocks or self.block_adapter_rank or self.qkv_adapters or self.block_out_proj or \
                self.attn_input_width:
            self._check_shared_blocks()
        if self.diff_attention and (self.is_mla or self.kv_heads % 2 or self.heads % 2 or self.compressed_attention):
            raise InputError(N_("differential attention needs plain (not latent) attention with an even number of query "
                                "and key/value heads: it splits the values' heads and the output's in two halves"))
        if self.attn_experts and (self.is_mla or self.compressed_attention or self.attn_output_gate or self.fused_qkv
                                  or self.kv_heads * self.experts_per_token != self.heads
                                  or not 1 <= self.experts_per_token <= self.attn_experts or self.qk_norm != "none"
                                  or self.gate_proj_width or self.qkv_bias):
            raise InputError(N_("a mixture of attention heads needs plain attention without biases or gates, k ≤ "
                                "attention experts routed per token and heads = k × kv_heads"))
        if self.moe_out_bias and not self.is_moe:
            raise InputError(N_("{field} is set but experts is 0 (a dense model)"), field="moe out bias")
        if self.head_dense_bias and not self.head_dense:
            raise InputError(N_("head_dense_bias is set without a dense layer before the LM head (head_dense)"))
        if not self.first_attn_norm and (self.norms_per_layer < 1 or self.hyper_gate_rank):
            raise InputError(N_("first_attn_norm false needs a norm per layer to leave out"))
        if self.qk_norm_bias and self.qk_norm != "width":
            raise InputError(N_("qk_norm_bias is read for qk norms over each head's width (qk_norm width) only"))
        if self.index_q_from_hidden and not self.is_dsa:
            raise InputError(N_("index_q_from_hidden is set without DeepSeek Sparse Attention's indexer"))
        if self.index_kpool and not (self.is_dsa and self.index_topk % self.index_kpool == 0):
            raise InputError(N_("an indexer scoring pools (index_kpool {kpool}) needs DeepSeek Sparse Attention and a "
                                "top-k that is a whole number of pools, got {topk}"), kpool=self.index_kpool,
                             topk=self.index_topk)
        if self.hyper_mean_head and (not self.hyper_streams or self.hyper_gate_rank):
            raise InputError(N_("hyper_mean_head is set without manifold-constrained hyper-connections"))
        if self.q_gate_latent and not (self.kv_lora_rank and self.q_lora_rank):
            raise InputError(N_("q_gate_latent projects MLA's query latent: it needs kv_lora_rank and q_lora_rank"))
        if not self.kv_lora_rank:
            if self.q_lora_rank or self.rope_head_dim:
                raise InputError(N_("q_lora_rank / rope_head_dim belong to MLA: set kv_lora_rank too"))
            return
        if self.kv_heads != self.heads:
            raise InputError(N_("MLA decompresses keys and values for every head: kv_heads must equal heads"))
        nope_shape = not self.rope_head_dim and any(c in NOPE_LETTERS for c in self.layer_types)  # (Mistral Large
        # 4's NoPE layers: attention_shape("J"))
        if not (0 < self.rope_head_dim < self.head_dim or nope_shape):
            raise InputError(N_("MLA: the rotary head dim ({rope_head_dim}) must be between 1 and head_dim - 1 ({limit}): "
                                "head_dim = nope + rope"),
                             rope_head_dim=self.rope_head_dim, limit=self.head_dim - 1)

    def _check_loop(self) -> None:
        if bool(self.hrm_cycles) != bool(self.hrm_low_cycles) or (self.hrm_cycles and (self.layers % 2
                                                                                        or self.loop_passes > 1)):
            raise InputError(N_("an HRM stack needs both cycle counts and an even number of layers (its two modules), "
                                "and no other loop"))
        if self.loop_passes == 1:
            if self.loop_start or self.loop_end or self.loop_gate_rank or self.loop_shared_cache:
                raise InputError(N_("loop_start, loop_end and loop_gate_rank need loop_passes of 2 or more"))
            return
        if not 0 < self.loop_start < self.loop_end <= self.layers:
            raise InputError(N_("the looped layers must lie inside the stack after its first layer: 0 < loop_start "
                                "({start}) < loop_end ({end}) ≤ layers ({layers})"), start=self.loop_start,
                             end=self.loop_end, layers=self.layers)
        if self.loop_gate_rank and not (self.attn_res_block and self.loop_start % self.attn_res_block == 0
                                        and self.loop_end % self.attn_res_block == 0):
            raise InputError(N_("a looped stack's message gates are counted as Inkling-2-Mini runs them: with block "
                                "attention residuals whose block divides loop_start and loop_end"))

    @property
    def has_sliding_shape(self) -> bool:
        """Whether the sliding layers have a shape of their own (:meth:`attention_shape`): Step 3.7's query heads,
        Dots 3 Note's MLA."""
        return bool(self.sliding_heads or self.sliding_q_lora_rank or self.sliding_kv_lora_rank
                    or self.sliding_nope_head_dim or self.sliding_rope_head_dim or self.sliding_v_head_dim)

    def _check_cca(self) -> None:
        if bool(self.cca_depthwise) != bool(self.cca_grouped):
            raise InputError(N_("compressed convolutional attention needs both convolutions' kernels"))
        if self.cca_depthwise and (self.is_mla or self.compressed_attention or self.kv_dim % 2
                                   or self.v_head_dim != self.head_dim):
            raise InputError(N_("compressed convolutional attention is counted on plain attention whose values are as "
                                "wide as its keys, in an even number of channels"))
        if self.router_hidden and not self.is_moe:
            raise InputError(N_("{field} is set but experts is 0 (a dense model)"), field="router hidden")

    @property
    def cca_channels(self) -> int:
        """The channels CCA's convolutions filter: the queries' and the keys' (0 without CCA)."""
        return self.q_dim + self.kv_dim if self.cca_depthwise else 0

    def cca_state(self) -> int:
        """Elements one sequence keeps per CCA layer: the convolutions' last (depthwise − 1) + (grouped − 1) q|k inputs
        and the last token's delayed values (half the values' width)."""
        if not self.cca_depthwise:
            return 0
        return (self.cca_depthwise + self.cca_grouped - 2) * self.cca_channels + self.kv_dim // 2

    def _check_sliding_shape(self) -> None:
        mla_only = (self.sliding_q_lora_rank or self.sliding_kv_lora_rank or self.sliding_nope_head_dim
                    or self.sliding_rope_head_dim or self.sliding_v_head_dim or self.rope_key_norm)
        if mla_only and not self.is_mla:
            raise InputError(N_("a sliding layers' shape of their own and a norm on the rotary key belong to MLA: set "
                                "kv_lora_rank"))
        if self.sliding_heads and not self.is_mla and self.sliding_heads % self.kv_heads:
            raise InputError(N_("the sliding layers' {heads} query heads cannot be shared evenly by {kv_heads} KV heads"),
                             heads=self.sliding_heads, kv_heads=self.kv_heads)
        if self.has_sliding_shape and "S" not in self.layer_types:
            raise InputError(N_("the sliding layers' own shape is set but no layer is sliding (S)"))

    def _check_qwen4(self) -> None:
        """Qwen4-Exp's QSA, gated hyper-connections and n-gram embeddings, each with what it needs."""
        if self.index_mean_pool and not self.index_block:
            raise InputError(N_("a mean-pooled block indexer (QSA) needs its block size (index_block)"))
        if self.hyper_gate_rank and self.hyper_streams < 2:
            raise InputError(N_("gated hyper-connections need at least 2 streams (hyper_streams)"))
        lt = self.ngram_layers
        if not isinstance(lt, str) or set(lt) - {"N", "-"} or (lt and len(lt) != self.layers):
            raise InputError(N_("ngram_layers must be N (n-gram embeddings) or - for each of the {layers} layers"),
                             layers=self.layers)
        if "N" in lt:
            heads = (self.ngram_order - 1) * self.ngram_heads
            if not (self.hyper_gate_rank and self.ngram_order >= 2 and self.ngram_heads and self.ngram_rows
                    and self.ngram_conv and self.ngram_dim and self.ngram_dim % heads == 0):
                raise InputError(N_("n-gram embeddings need gated hyper-connections, an order of 2 or more, heads, "
                                    "table rows, a convolution kernel and a width divisible by the {heads} heads"),
                                 heads=max(heads, 1))

    @property
    def ngram_layer_count(self) -> int:
        return self.ngram_layers.count("N")

    @property
    def ngram_table_params(self) -> int:
        """The n-gram tables' parameters: ngram_rows rows, each ngram_dim / heads wide (looked up, never multiplied)."""
        if not self.ngram_layer_count:
            return 0
        return self.ngram_rows * (self.ngram_dim // ((self.ngram_order - 1) * self.ngram_heads))

    def ngram_state(self) -> tuple[int, int]:
        """What one sequence keeps for the n-gram embeddings, every N layer together: the dilated convolution's last
        (kernel − 1) · order inputs of each of its streams × hidden channels (at the model's dtype), and the last
        order − 1 token ids (int64)."""
        n = self.ngram_layer_count
        return (n * (self.ngram_conv - 1) * self.ngram_order * self.hyper_streams * self.hidden,
                n * (self.ngram_order - 1))

    def _unrolled(self, pattern: str) -> str:
        """A per-layer pattern in the order the layers run: the looped ones loop_passes times."""
        if self.hrm_cycles:  # HRM: the low-level module's layers, then the high-level one's
            half = len(pattern) // 2
            return pattern[:half] * (self.hrm_cycles * self.hrm_low_cycles) + pattern[half:] * self.hrm_cycles
        if self.loop_passes == 1:
            return pattern
        a, b = self.loop_start, self.loop_end
        return pattern[:a] + pattern[a:b] * self.loop_passes + pattern[b:]

    @property
    def executed_attention_kinds(self) -> str:
        """:attr:`attention_kinds` of every layer run, a looped layer once per pass."""
        return self._unrolled(self.attention_kinds)

    @property
    def cached_attention_kinds(self) -> str:
        """The kinds of the layers that keep a cache: one per layer run, or per stored layer where the passes share
        it (Dory's last_loop mode)."""
        return self.attention_kinds if self.loop_shared_cache else self.executed_attention_kinds

    @property
    def executed_mlp_kinds(self) -> str:
        return self._unrolled(self.mlp_kinds)

    @property
    def stored_stack(self) -> ModelConfig:
        """The model with its looped layers run once: what the checkpoint stores, layer by layer (weights placed on
        GPUs are the stored ones; the message gates, small, ride with the replicated rest)."""
        if self.loop_passes == 1 and not self.hrm_cycles:
            return self
        return self.replace(loop_start=0, loop_end=0, loop_passes=1, loop_gate_rank=0, loop_shared_cache=False,
                            hrm_cycles=0, hrm_low_cycles=0)

    @property
    def executed_layers(self) -> int:
        return len(self.executed_attention_kinds)

    def _check_short_conv_and_rel_bias(self) -> None:
        """Inkling's short convolutions and relative bias sit on plain (GQA) attention, the bias over a stated
        extent."""
        if (self.short_conv or self.rel_bias) and (self.is_mla or self.compressed_attention):
            raise InputError(N_("short convolutions and a relative attention bias are counted on plain attention, not "
                                "on MLA or compressed attention"))
        if self.rel_bias and "F" in self.attention_kinds and not self.rel_extent:
            raise InputError(N_("a relative attention bias (rel_bias) needs its extent in the full layers (rel_extent)"))
        if self.rel_extent and not self.rel_bias:
            raise InputError(N_("rel_extent is set but there is no relative attention bias (rel_bias)"))

    # ----- derived shapes -------------------------------------------------------------
    @property
    def head_vocab(self) -> int:
        """The LM head's output rows: the vocabulary, or fewer where the head is pruned (:attr:`output_vocab`)."""
        return self.output_vocab or self.vocab

    @property
    def attn_in(self) -> int:
        """The width q, k and v are projected from: the hidden state's, or Zamba2's [hidden state; embedding]."""
        return self.attn_input_width or self.hidden

    @property
    def block_layers(self) -> int:
        """Layers running a shared attention-and-MLP block (Zamba2's hybrid layers, P); 0 without shared blocks."""
        return self.attention_kinds.count("P") if self.shared_blocks else 0

    @property
    def stored_blocks(self) -> int:
        """The shared blocks stored: as many as are used, at most :attr:`shared_blocks`."""
        return min(self.shared_blocks, self.block_layers)

    def _block_layer_params(self) -> int:
        """What each P layer has of its own beside its shared block (Zamba2): the adapters on gate|up and on q, k, v,
        and the output projection."""
        r, h = self.block_adapter_rank, self.hidden
        qkv = (self.attn_in * 3 * r + r * (self.q_dim + 2 * self.kv_dim)) if self.qkv_adapters and r else 0
        return (h * r + r * 2 * self.ffn if r else 0) + qkv + (h * h if self.block_out_proj else 0)

    @property
    def q_dim(self) -> int:
        """Width of all query heads together (heads · head_dim)."""
        return self.heads * self.head_dim

    @property
    def has_full_shape(self) -> bool:
        """Whether the full-attention layers have a shape of their own (Gemma 4: :meth:`attention_shape`)."""
        return bool(self.full_head_dim or self.full_kv_heads or self.full_k_eq_v or self.sliding_sinks_only)

    def attention_shape(self, kind: str) -> ModelConfig:
        """The configuration whose attention fields (head dim, KV heads, whether keys double as values, whether K/V
        are another layer's) and MLP width are those of a layer of this kind: Gemma 4's full layers and the layers
        reusing K/V (f, s) have their own, and so have Mistral Large 4's NoPE layers (J, G) and those reading another
        layer's latent (i, j, f, g); every other model, and kind, is ``self``."""
        if self.kv_reused:  # already a shape of its own (every layer of it reads another layer's K/V)
            return self
        if kind in NOPE_LETTERS and not self.rope_head_dim:  # already the NoPE layers' shape
            return self
        if kind in KV_SHARED_LETTERS or kind in NOPE_LETTERS or (kind == "F" and self.has_full_shape) or (
                kind == "S" and self.has_sliding_shape):
            return self._shapes[kind]
        return self

    @cached_property
    def _shapes(self) -> dict[str, ModelConfig]:
        full = self
        if self.has_full_shape:
            dims = dict(head_dim=self.full_head_dim, v_head_dim=self.full_head_dim) if self.full_head_dim else {}
            full = self.replace(**dims, kv_heads=self.full_kv_heads or self.kv_heads, k_eq_v=self.full_k_eq_v,
                                attention_sinks=self.attention_sinks and not self.sliding_sinks_only, full_head_dim=0,
                                full_kv_heads=0, full_k_eq_v=False, sliding_sinks_only=False)
        out = {"F": full}
        if self.has_sliding_shape and not self.is_mla:  # Step 3.7: the sliding layers' query heads
            out["S"] = self.replace(heads=self.sliding_heads, sliding_heads=0)
        elif self.has_sliding_shape:  # Dots 3 Note: the sliding layers' MLA (no indexer in them)
            nope = self.sliding_nope_head_dim or self.nope_head_dim
            rope = self.sliding_rope_head_dim or self.rope_head_dim
            heads = self.sliding_heads or self.heads
            out["S"] = self.replace(heads=heads, kv_heads=heads, kv_cache_heads=heads,
                                    q_lora_rank=self.sliding_q_lora_rank or self.q_lora_rank,
                                    kv_lora_rank=self.sliding_kv_lora_rank or self.kv_lora_rank,
                                    head_dim=nope + rope, rope_head_dim=rope,
                                    v_head_dim=self.sliding_v_head_dim or self.v_head_dim, sliding_heads=0,
                                    sliding_q_lora_rank=0, sliding_kv_lora_rank=0, sliding_nope_head_dim=0,
                                    sliding_rope_head_dim=0, sliding_v_head_dim=0)
        if self.is_mla and any(c in NOPE_LETTERS for c in self.layer_types):  # Mistral Large 4's NoPE layers
            out["J"] = out["G"] = self.replace(rope_head_dim=0)
        if self.is_mla and any(c in KV_SHARED_LETTERS for c in self.layer_types):  # Mistral Large 4: another layer's
            # latent read, decompressed by the layer's own kv_b_proj
            for c, base in KV_SHARED_LETTERS.items():
                if base in out or base == "I":
                    out[c] = out.get(base, self).replace(kv_reused=True)
        elif any(c in KV_SHARED_LETTERS for c in self.layer_types):
            reuse = dict(kv_reused=True, ffn=self.kv_shared_ffn or self.ffn, kv_shared_ffn=0)
            out["f"], out["s"] = full.replace(**reuse), self.replace(**reuse, full_head_dim=0, full_kv_heads=0,
                                                                     full_k_eq_v=False, sliding_sinks_only=False)
        return out

    def _per_kind(self, f) -> int:
        """Σ over the layers of f(the attention shape of the layer's kind, kind)."""
        kinds = self.attention_kinds
        return sum(kinds.count(k) * f(self.attention_shape(k), k) for k in set(kinds))

    @property
    def q_proj_width(self) -> int:
        """Output width of q_proj: the queries, and as much again for an attention output gate (Qwen3-Next)."""
        return self.q_dim * (2 if self.attn_output_gate else 1)

    @property
    def kv_dim(self) -> int:
        """Width of all key heads together (kv_heads · head_dim)."""
        return self.kv_heads * self.head_dim

    @property
    def v_dim(self) -> int:
        """Width of all value heads together (kv_heads · v_head_dim); the output projection reads
        heads · v_head_dim."""
        return self.kv_heads * self.v_head_dim

    @property
    def v_proj_width(self) -> int:
        """Output width of v_proj: the value heads, or nothing where the keys are the values too (Gemma 4)."""
        return 0 if self.k_eq_v or self.kv_reused else self.v_dim

    @property
    def gate_proj_width(self) -> int:
        """Output width of a separate attention-output gate projection: one per head, one per element, or none."""
        return {"head": self.heads, "element": self.o_dim}.get(self.attn_gate, 0)

    @property
    def k_proj_width(self) -> int:
        """Output width of k_proj: the key heads, or nothing where the layer reuses another layer's K/V."""
        return 0 if self.kv_reused else self.kv_dim

    @property
    def residual_width(self) -> int:
        """Elements per token of the residual stream a layer reads (a backward pass keeps it, a pipeline stage sends
        it): the hidden state, or with hyper-connections (DeepSeek-V4, GLM-5-Next, Qwen4-Exp) its n streams, n ×
        hidden."""
        return self.hidden * (self.hyper_streams or 1)

    @property
    def attn_calls(self) -> int:
        """Attention calls per layer and query head: two for differential attention (the same scores, each against its
        half of the values), one otherwise."""
        return 2 if self.diff_attention else 1

    @property
    def o_dim(self) -> int:
        return self.heads * self.v_head_dim

    @property
    def is_moe(self) -> bool:
        return self.experts > 0

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def is_dsa(self) -> bool:
        """DeepSeek Sparse Attention: MLA with a lightning indexer choosing index_topk keys per query (DeepSeek-V4's
        compressed sparse attention has an indexer of its own: :attr:`compressed_attention`)."""
        return self.index_heads > 0 and not self.compressed_attention and not self.index_block

    @property
    def is_block_sparse(self) -> bool:
        """MiniMax-M3's block-sparse attention: I layers whose indexer keeps index_topk blocks of index_block keys per
        query (:attr:`index_block`); the F layers attend to every key."""
        return self.index_block > 0

    def _indexer_params(self) -> int:
        """One layer's indexer. DSA: wq_b (query latent → heads × dim), wk (hidden → dim), its key LayerNorm (weight
        and bias), weights_proj (hidden → one weight per head). Block-sparse: q_proj (hidden → heads × dim), k_proj
        (hidden → dim) and an RMSNorm on each (a weight of dim)."""
        di, hi = self.index_head_dim, self.index_heads
        if self.is_block_sparse:
            return self.hidden * hi * di + self.hidden * di + 2 * di
        if not self.is_dsa:
            return 0
        if self.index_q_from_hidden:  # Mistral Large 4: a LayerNorm on the hidden state, then wq_b, then a learned
            # log-position scale and bias per head
            return 2 * self.hidden + self.hidden * hi * di + 2 * hi + self.hidden * di + 2 * di + self.hidden * hi
        pool = (self.hidden + self.index_kpool) * di if self.index_kpool else 0  # GLM-5-Next: the pools' gate and table
        return self.q_lora_rank * hi * di + self.hidden * di + 2 * di + self.hidden * hi + pool

    def _indexer_matmul_params(self) -> int:
        """One layer's indexer projections (no norms or scales)."""
        if not (self.is_dsa or self.is_block_sparse):
            return 0
        di, hi = self.index_head_dim, self.index_heads
        if self.is_block_sparse:
            return self.hidden * hi * di + self.hidden * di
        return ((self.hidden if self.index_q_from_hidden else self.q_lora_rank) * hi * di + self.hidden * (di + hi)
                + (self.hidden * di if self.index_kpool else 0))  # (GLM-5-Next: the pools' gate projection)

    @property
    def indexer_layer_count(self) -> int:
        """Layers that run their own indexer (DSA, block-sparse)."""
        return sum(c in INDEXER_LETTERS for c in self.attention_kinds)

    @property
    def nope_head_dim(self) -> int:
        """MLA: the part of the q/k head without rotary embedding."""
        return self.head_dim - self.rope_head_dim

    @property
    def mlp_mats(self) -> int:
        """Weight matrices per MLP (per expert): 3 gated, 2 plain."""
        return 3 if self.mlp == "gated" else 2

    @property
    def active_experts(self) -> int:
        """MLPs a token runs through: k for a MoE, 1 for a dense model."""
        return self.experts_per_token if self.is_moe else 1

    @property
    def stored_experts(self) -> int:
        return self.experts if self.is_moe else 1

    @property
    def attention_kinds(self) -> str:
        """One letter per layer: F full, S sliding, C chunked."""
        return self.layer_types or "F" * self.layers

    @property
    def mlp_kinds(self) -> str:
        """One letter per layer: M mixture of experts, D dense, - no MLP."""
        if not self.is_moe:
            return self.moe_layers or "D" * self.layers
        return self.moe_layers or "M" * self.layers

    @property
    def moe_layer_count(self) -> int:
        return self.mlp_kinds.count("M")

    @property
    def dense_layer_count(self) -> int:
        return self.mlp_kinds.count("D")

    @property
    def windowed_layers(self) -> int:
        return sum(1 for c in self.attention_kinds if c in WINDOW_LETTERS)

    @property
    def attention_layer_count(self) -> int:
        """Layers with softmax attention (and a KV cache)."""
        return sum(1 for c in self.attention_kinds if c in ATTENTION_LETTERS)

    @property
    def mixer_layer_count(self) -> int:
        """Layers with a linear-attention / state-space mixer (and its fixed state)."""
        return sum(1 for c in self.attention_kinds if c in MIXER_LETTERS)

    @property
    def is_hybrid(self) -> bool:
        return self.mixer is not None

    @property
    def attention_free(self) -> bool:
        """Every layer a mixer with no attention and no MLP (Mamba, Falcon Mamba, Mamba-2): the attention and MLP
        fields are placeholders."""
        return self.mixer is not None and not self.attention_layer_count and set(self.mlp_kinds) == {"-"}

    def window_of(self, kind: str) -> int:
        """Keys a layer of this kind can attend to at most (0: all)."""
        return self.sliding_window if kind in WINDOW_LETTERS else 0

    @property
    def norm_weights(self) -> int:
        return NORM_WEIGHTS[self.norm]

    # ----- parameter counts -----------------------------------------------------------
    def _norm_params(self, width: int | None = None) -> int:
        return (self.hidden if width is None else width) * self.norm_weights

    def _attn_params(self) -> int:
        """One layer's attention: projections, biases, qk-norm weights, sinks, MLA's norms."""
        h, H = self.hidden, self.heads
        if self.is_mla:
            rq, rkv, dr = self.q_lora_rank, self.kv_lora_rank, self.rope_head_dim
            b = self.qkv_bias
            if rq:  # q_a_proj, q_a_layernorm (RMS), q_b_proj (A.X-K2: q_gate_proj from the latent and its norm)
                p = h * rq + (rq if b else 0) + rq + self._q_from_latent()
            else:
                p = h * self.q_dim
            if not self.kv_reused:  # (Mistral Large 4: a layer reading another layer's latent has neither)
                p += h * (rkv + dr) + ((rkv + dr) if b else 0) + rkv  # kv_a_proj_with_mqa, kv_a_layernorm
            p += dr if self.rope_key_norm else 0  # Dots 3 Note: the rotary key's norm
            p += rkv * H * (self.nope_head_dim + self.v_head_dim)  # kv_b_proj
            p += self.o_dim * h + (h if self.o_bias else 0)
            # HY-V4: a gate on the attention output and a sink per head; Mistral Large 4: a query scale per head
            return p + h * self.gate_proj_width + (H if self.attention_sinks else 0) + self.attn_scale_params
        if self.compressed_attention:  # DeepSeek-V4: q_a_proj, its norm, q_b_proj, kv_proj, its norm, o_a, o_b, sinks
            rq, hd = self.q_lora_rank, self.head_dim
            return (h * rq + rq + rq * self.q_dim + h * hd + hd + self.o_dim * self.o_lora_rank
                    + self.o_groups * self.o_lora_rank * h + H)
        qw, kw = self.q_proj_width, self.k_proj_width
        if self.attn_experts:  # JetMoE: k|v, every expert's q and o (kv_dim wide each), the router, the output's bias
            e = self.attn_experts
            return h * (kw + self.v_proj_width) + e * 2 * h * self.kv_dim + h * e + h
        p = self.attn_in * (qw + kw + self.v_proj_width) + h * self.gate_proj_width + self.o_dim * h
        if self.qkv_bias:
            p += qw + kw + self.v_proj_width
        if self.o_bias:
            p += h
        if self.qk_norm == "head":  # a layer reusing K/V has a q norm only
            p += (1 if self.kv_reused else 2) * self.head_dim * self.norm_weights
        elif self.qk_norm == "width":  # (Chameleon's LayerNorms: a bias too)
            p += (self.q_dim + kw) * (self.norm_weights + self.qk_norm_bias)
        if self.attention_sinks:
            p += H
        if self.attn_gate_bias:
            p += H
        if self.clip_norms:  # Inkling 2: the queries' and the relative states' learned scales
            p += self.q_dim + H * self.rel_bias
        if self.sink_proj:
            p += h * H
        if self.cca_depthwise:  # ZAYA: the depthwise and the grouped convolution (by head: head_dim inputs each), biased
            c = self.cca_channels
            p += c * self.cca_depthwise + c * self.head_dim * self.cca_grouped + 2 * c
        return p + h * H * self.rel_bias + self.attn_scale_params  # (Inkling's r_proj: the relative states per head)

    def _q_from_latent(self) -> int:
        """The weights from MLA's query latent to the queries: q_b_proj, or A.X-K2's q_gate_proj, which reads the
        normed latent and the latent (2 × q_lora_rank) and also makes the attention output's gate."""
        if self.q_gate_latent:
            return 2 * self.q_lora_rank * (self.q_dim + self.o_dim)
        return self.q_lora_rank * self.q_dim

    @property
    def gated_norms(self) -> int:
        """A.X-K2's gated norms: every layer's input norm and each MoE layer's post-attention norm."""
        return self.layers + self.moe_layer_count if self.gated_norm_rank else 0

    def _compressor_params(self, kind: str, *, matmul: bool = False) -> int:
        """DeepSeek-V4: a compressed layer's compressor (kv and gate projections, a position bias per slot of its
        window, a norm) and, in an A layer, its lightning indexer (its own compressor at the index head dim, a query
        projection from the query latent, a weight per index head); ``matmul``: the projections only."""
        d, hd = self.hidden, self.head_dim
        if kind == "H":
            return 2 * d * hd + (0 if matmul else self.hca_rate * hd + hd)
        if kind != "A":
            return 0
        m, di, hi = self.csa_rate, self.index_head_dim, self.index_heads
        projections = 2 * d * 2 * hd + 2 * d * 2 * di + self.q_lora_rank * hi * di + d * hi
        return projections + (0 if matmul else m * 2 * hd + hd + m * 2 * di + di)

    def _compressors(self, *, matmul: bool = False) -> int:
        kinds = self.attention_kinds
        return sum(kinds.count(k) * self._compressor_params(k, matmul=matmul) for k in COMPRESSED_LETTERS)

    @property
    def hyper_weights(self) -> int:
        """The mixing weights one hyper-connection makes per token: n to collapse the streams, n to expand the output,
        and (manifold-constrained, :attr:`hyper_mix`) n × n to mix them."""
        n = self.hyper_streams
        return (2 + n) * n if self.hyper_mix else 2 * n

    def _hyper_params(self, *, matmul: bool = False) -> int:
        """Hyper-connections over n streams: in every layer two (before the attention and the MLP), each an
        [n·hidden → weights] projection of the streams with a bias and a scale per kind of weight (3, or 2 without the
        mix); one [n·hidden → n] at the end with a bias and a scale (``matmul``: the projections only). Gated ones
        (Qwen4-Exp, :attr:`hyper_gate_rank` r): each a grouped norm of the n·hidden streams, n·hidden → r → n·hidden
        and n·hidden → n (the injection weights); the last one norm and gate only."""
        n, d, per = self.hyper_streams, self.hidden, self.hyper_weights
        if not n:
            return 0
        if self.hyper_gate_rank:
            w, r = n * d, self.hyper_gate_rank
            norm = 0 if matmul else w * self.norm_weights
            return 2 * self.layers * (2 * w * r + w * n + norm) + 2 * w * r + norm
        head = 0 if self.hyper_mean_head else n * n * d + (0 if matmul else n + 1)  # (GLM-5-Next: a plain mean)
        return 2 * self.layers * (per * n * d + (0 if matmul else per + (3 if self.hyper_mix else 2))) + head

    def _mlp_params(self, width: int | None = None, bias: bool | None = None, hidden: int | None = None) -> int:
        """One dense MLP (default: ffn wide, with mlp_bias, at the hidden size)."""
        f = self.ffn if width is None else width
        b = self.mlp_bias if bias is None else bias
        h = self.hidden if hidden is None else hidden
        p = self.mlp_mats * h * f
        if b:
            p += (self.mlp_mats - 1) * f + h
        return p

    @property
    def expert_width(self) -> int:
        """The width the routed experts read and write: the hidden size, or a latent mixture's (Muse Spark)."""
        return self.expert_hidden or self.hidden

    def _latent_moe_params(self) -> int:
        """A latent mixture's projections down and up (their biases with mlp_bias) and its two norms (Muse Spark), per
        MoE layer."""
        m = self.expert_hidden
        if not m:
            return 0
        return (2 * self.hidden * m + (m + self.hidden if self.mlp_bias else 0)
                + (2 * m * self.norm_weights if self.latent_norms else 0))

    def _cross_params(self) -> int:
        """One cross-attention layer (X) besides its norms: q/k/v/o (the keys and values from the vision tokens, as
        wide as the text's), a q and a k norm per head, its MLP, the attention's and the MLP's tanh gate."""
        h = self.hidden
        attn = h * (self.q_dim + 2 * self.kv_dim) + self.o_dim * h + 2 * self.head_dim * self.norm_weights
        return attn + self._mlp_params() + 2

    def _expert_params(self) -> int:
        """One routed expert."""
        return self._mlp_params(self.expert_ffn, self.expert_bias, self.expert_width)

    def _router_params(self) -> int:
        if not self.is_moe:
            return 0
        e = self.router_width
        if self.router_hidden:  # ZAYA: down (biased), norm, fc1 and fc2 (biased), out; the state scale is apart
            r = self.router_hidden
            return self.hidden * r + r + r * self.norm_weights + 2 * (r * r + r) + r * e
        return (self.hidden * e + (e if self.router_bias else 0)
                + (e if self.router_score_bias and self.score_bias_param else 0)
                + (self.hidden + self.experts if self.router_scales else 0) + self.router_global_scale)

    def _shared_params(self) -> int:
        p = self._mlp_params(self.shared_expert_ffn) if self.shared_expert_ffn else 0
        return p + (self.hidden if self.shared_expert_gate else 0)

    def param_breakdown(self) -> dict[str, int]:
        """Exact parameter counts by part; the values add up to :meth:`params`."""
        moe, dense = self.moe_layer_count, self.dense_layer_count
        head = 0 if self.tied_embeddings else self.head_vocab * self.hidden
        attn = self._per_kind(lambda c, k: c._attn_params() if k in ATTENTION_LETTERS else 0)
        mlp = self._dense_mlp_params()
        if self.shared_blocks:  # Zamba2: every attention layer and dense MLP is a P layer's, one of stored_blocks
            attn, mlp = attn // self.block_layers * self.stored_blocks, mlp // self.block_layers * self.stored_blocks
        return {
            "embedding": self.vocab * self.hidden,
            "positions": self.learned_positions * self.hidden + self.rope_scales,
            "attention": attn + self.indexer_layer_count * self._indexer_params() + self._compressors()
            + (self.hidden if self.last_o_bias and not self.o_bias else 0) + self._rel_bank_params(),
            "block_layers": self.block_layers * self._block_layer_params(),  # (Zamba2's adapters and projections)
            "short_convs": self._short_conv_params(),
            "norm_gates": self.gated_norms * 2 * self.hidden * self.gated_norm_rank,
            "attn_residuals": self.attn_res_queries * self.hidden,
            "initial_state": self.hidden if self.hrm_cycles else 0,  # HRM's z_L_init
            "loop_messages": (4 * (self.loop_end - self.loop_start) * self.hidden * (1 + 4 * self.loop_gate_rank)
                              if self.loop_gate_rank else 0),
            "hyper_connections": self._hyper_params(),
            "cross_attention": self.attention_kinds.count("X") * self._cross_params(),
            "mixers": self.mixer_layer_count * self.mixer.params(self.hidden) if self.mixer else 0,
            "mlp": mlp + dense * self.activation_params + moe * (self.experts * self._expert_params()
                                                                  + self.hidden * self.moe_out_bias),
            "per_layer_inputs": self._per_layer_input_params(),
            "altup_laurel": self._altup_laurel_params(),
            "shared_experts": moe * self._shared_params(),
            # ERNIE 4.5 VL: the image tokens' experts and router (no work on text)
            "vision_experts": (moe * (self.experts * self._mlp_params(self.vision_expert_ffn, self.expert_bias,
                                                                      self.expert_width) + self._router_params())
                               if self.vision_expert_ffn else 0),
            "latent_moe": moe * self._latent_moe_params(),
            "residual_gates": 2 * self.layers * self.hidden if self.residual_gates else 0,
            # ZAYA: scale and bias on both sides of each residual add, and on the embedding; each later router's scale
            # on the previous router state
            "residual_affine": (8 * self.layers + 2) * self.hidden if self.residual_affine else 0,
            "router_states": (self.moe_layer_count - 1) * self.router_hidden if self.router_hidden else 0,
            "router": moe * self._router_params(),
            "ngram_embeddings": self._ngram_params(),
            "norms": ((0 if self.hyper_gate_rank else self.layers * self.norms_per_layer + 1) + moe * self.moe_norms
                      + self.embedding_norm + self.head_dense - (not self.first_attn_norm)
                      + (2 * self.attention_kinds.count("F") if self.qkv_input_norms else 0))
            * self._norm_params() + (dense * self._norm_params(self.ffn) if self.ffn_norm else 0)
            + self.stored_blocks * self._norm_params(self.attn_in + self.hidden),  # (Zamba2's blocks: two norms each)
            "lm_head": head + (self.head_vocab if self.lm_head_bias else 0) + (self.head_vocab if self.logit_scale else 0)
            + self._head_dense_params(),
        }

    def _head_dense_params(self, *, matmul: bool = False) -> int:
        """ModernBERT's prediction head before the LM head: a dense hidden → hidden (and its bias; its norm is counted
        with the norms)."""
        if not self.head_dense:
            return 0
        return self.hidden * self.hidden + (self.hidden if self.head_dense_bias and not matmul else 0)

    def _ngram_params(self, *, matmul: bool = False) -> int:
        """Qwen4-Exp's n-gram embeddings: every table (ngram_rows rows in all, ngram_dim / heads wide), and in each N
        layer the key projection (ngram_dim → streams × hidden), the value projection (ngram_dim → hidden), three
        grouped norms and the depthwise convolution over streams × hidden channels (``matmul``: the projections)."""
        n = self.ngram_layer_count
        if not n:
            return 0
        w, g = self.hyper_streams * self.hidden, self.ngram_dim
        proj = n * (g * w + g * self.hidden)
        if matmul:
            return proj
        return self.ngram_table_params + proj + n * (3 * w * self.norm_weights + w * self.ngram_conv)

    def _rel_bank_params(self) -> int:
        """Inkling: each attention layer's bank of relative-bias profiles, rel_bias × its extent (rel_extent in a
        full layer, the window in a sliding one)."""
        if not self.rel_bias:
            return 0
        return sum(self.rel_bias * self.rel_extent_of(k) for k in self.attention_kinds if k in ATTENTION_LETTERS)

    def rel_extent_of(self, kind: str) -> int:
        """Backward distances the relative bias of a layer of this kind covers: the window, or rel_extent."""
        return self.window_of(kind) or self.rel_extent

    def short_conv_channels(self, kind: str) -> int:
        """Channels Inkling's short convolutions filter in a layer of this kind: its keys and values, the attention's
        output and the MLP's (0 without them, or in a layer without attention)."""
        if not self.short_conv or kind not in ATTENTION_LETTERS:
            return 0
        return 2 * self.attention_shape(kind).kv_dim + 2 * self.hidden

    def _short_conv_params(self) -> int:
        """Their weights (a dynamic convolution's static taps are as many), and Inkling 2's full layers' projections
        to the per-token taps of keys and values."""
        taps = 2 * self.hidden * self.attention_shape("F").kv_heads * self.short_conv if self.dynamic_kv_conv else 0
        return (sum(self.short_conv_channels(k) for k in self.attention_kinds) * self.short_conv
                + self.attention_kinds.count("F") * taps)

    @property
    def attn_res_queries(self) -> int:
        """Inkling 2's learned queries of the block attention residuals: one before each layer's attention (three in a
        full layer, one per input; none before the first layer's), one before each MLP and one before the final
        norm."""
        if not self.attn_res_block:
            return 0
        kinds = self.attention_kinds
        return sum(3 if k == "F" else 1 for k in kinds[1:]) + self.layers + 1

    def attn_res_pairs(self) -> tuple[int, int, int]:
        """(Σ queries × stacked states, Σ stacked states, attention calls) of one token's block attention residuals:
        layer i's inputs attend over the ceil(i / block) block states before it and the running state, its MLP's also
        over the block its first layer opens; the final norm's over every block and the running state. A looped
        stack's passes each restart from the blocks before the loop (the same counts again), and from the second pass
        each looped layer's 4 message queries attend over the previous pass's blocks but its first, and its output."""
        b, kinds = self.attn_res_block, self.attention_kinds
        if not b:
            return 0, 0, 0
        pairs = states = calls = 0
        for i, k in enumerate(kinds):
            nb = -(-i // b)
            again = self.loop_passes if self.loop_start <= i < self.loop_end else 1
            if i:
                pairs += again * (3 if k == "F" else 1) * (nb + 1)
                states, calls = states + again * (nb + 1), calls + again
            n = nb + (1 if i % b == 0 else 0) + 1
            pairs, states, calls = pairs + again * n, states + again * n, calls + again
        n = -(-self.layers // b) + 1
        pairs, states, calls = pairs + n, states + n, calls + 1
        if self.loop_passes > 1 and self.loop_gate_rank:
            looped = self.loop_end - self.loop_start
            messages = (self.loop_passes - 1) * looped  # message calls, each over the previous pass's blocks
            pairs, states, calls = pairs + messages * 4 * looped // b, states + messages * looped // b, calls + messages
        return pairs, states, calls

    @property
    def loop_gates(self) -> int:
        """Message gates that run per token: 4 per looped layer (its q, k, v and MLP inputs) in each pass but the
        first."""
        return 4 * (self.loop_end - self.loop_start) * (self.loop_passes - 1) if self.loop_gate_rank else 0

    def short_conv_state(self, engine: bool = False) -> int:
        """Elements one sequence keeps for the short convolutions, whatever the context: transformers keeps the last k
        inputs of each channel, an engine k − 1 (held in fp32)."""
        k = self.short_conv - 1 if engine else self.short_conv
        return sum(self.short_conv_channels(c) for c in self.cached_attention_kinds) * k

    def _dense_widths(self) -> list[int]:
        """The MLP width of every dense layer (Gemma 4's layers reusing K/V may have a wider one)."""
        return [self.attention_shape(a).ffn for a, m in zip(self.attention_kinds, self.mlp_kinds, strict=True)
                if m == "D"]

    def _dense_ffn_sum(self) -> int:
        return sum(self._dense_widths()) if self.kv_shared_ffn else self.dense_layer_count * self.ffn

    def _dense_mlp_params(self) -> int:
        """Every dense layer's MLP, each at its own width."""
        if not self.kv_shared_ffn:
            return self.dense_layer_count * self._mlp_params()
        return sum(self._mlp_params(f) for f in self._dense_widths())

    def _per_layer_input_params(self) -> int:
        """Gemma 4's per-layer inputs: the [vocab, layers × p] table, the hidden → layers × p projection and its norm
        (p wide), and in every layer a hidden → p gate, a p → hidden projection and a norm."""
        p = self.per_layer_input
        if not p:
            return 0
        h, n = self.hidden, self.layers
        return ((self.per_layer_vocab or self.vocab) * n * p + h * n * p + self._norm_params(p)
                + n * (2 * h * p + self._norm_params()))

    def _altup_laurel_params(self) -> int:
        """Gemma 3n: AltUp's n - 1 projections of the embedding to the other streams and n - 1 back, and in every layer
        its router (hidden → n, with a norm), prediction (n → n²) and correction (n → n) coefficients and output scale;
        LAuReL's hidden → rank → hidden and its norm."""
        n, r, h = self.altup_inputs, self.laurel_rank, self.hidden
        altup = 2 * (n - 1) * h * h + self.layers * (h * n + n * n * n + n * n + h + self._norm_params()) if n else 0
        laurel = self.layers * (2 * h * r + self._norm_params()) if r else 0
        return altup + laurel

    @property
    def params(self) -> int:
        """Every parameter of the model: embeddings, positions, norms, biases, untied head, all experts
        (what ``sum(p.numel() for p in model.parameters())`` gives; buffers and MTP layers excluded)."""
        return sum(self.param_breakdown().values())

    @property
    def active_params(self) -> int:
        """Weights one token touches: as :attr:`params` but only k routed experts (all with
        ``experts_compute = "all"``)."""
        b = self.param_breakdown()
        dense = self._dense_mlp_params()
        if self.shared_blocks:  # (Zamba2: each block's MLP once, however many layers run it)
            dense = dense // self.block_layers * self.stored_blocks
        b["mlp"] = dense + self.moe_layer_count * (self._routed_experts_run() * self._expert_params()
                                                   + self.hidden * self.moe_out_bias)
        if self.attn_experts:  # JetMoE: k of the attention experts' q and o
            b["attention"] -= (self.attention_layer_count * (self.attn_experts - self.experts_per_token) * 2
                               * self.hidden * self.kv_dim)
        b["vision_experts"] = 0  # (ERNIE 4.5 VL's image experts: no text token reaches them)
        return sum(b.values())

    @property
    def lookup_params(self) -> int:
        """Weights a token looks up and never multiplies: the input embedding (when the LM head is not the same
        matrix), learned positions, n-gram tables."""
        return (self.vocab * self.hidden * (0 if self.tied_embeddings else 1) + self.learned_positions * self.hidden
                + self.ngram_table_params)

    @property
    def active_params_without_embedding(self) -> int:
        """:attr:`active_params` less :attr:`lookup_params`: some model cards count a MoE's active parameters this way
        (OpenAI's gpt-oss: 5.13 B of 120b, 3.61 B of 20b), others with the embedding (Mixtral's 12.9 B, Qwen3-30B-A3B's
        3.3 B)."""
        return self.active_params - self.lookup_params

    def _routed_experts_run(self) -> int:
        return self.routed_per_token

    @property
    def routed_per_token(self) -> int:
        """Experts that compute for each token: k of a MoE (every expert where all run); with zero-computation experts
        (LongCat-Flash) the k choices' share of real ones, k × E / (E + Z) rounded (its router's bias steers toward
        that expectation)."""
        return self.experts if self.experts_compute == "all" else self.computing_per_token

    @property
    def computing_per_token(self) -> int:
        """The routed experts a token's k choices reach that compute: k, or with zero-computation experts their share
        of the choices (whatever the execution of the experts)."""
        if self.zero_experts:
            return max(1, round(self.experts_per_token * self.experts / (self.experts + self.zero_experts)))
        return self.experts_per_token

    @property
    def router_width(self) -> int:
        """The router's outputs: one per expert, zero-computation ones and shared experts it scores included."""
        return self.experts + self.zero_experts + self.router_sinks

    @property
    def routed_choices(self) -> int:
        """The experts top-k chooses among (a score-correction bias has one entry each): the routed experts and the
        zero-computation ones."""
        return self.experts + self.zero_experts

    def extra_checkpoint_params(self) -> dict[str, int]:
        """Elements the checkpoint stores besides the model's parameters: the router score-bias buffers
        and the multi-token-prediction layers (each one MoE decoder layer, two norms, a 2h → h projection,
        a norm and copies of the embedding and the LM head, as DeepSeek-V3 and GLM-4.5 store them)."""
        moe_layer = (self._attn_params() + self._indexer_params() + self.norms_per_layer * self._norm_params()
                     + self.experts * self._expert_params() + self._shared_params() + self._router_params())
        buffers_per_layer = self.routed_choices if self.router_score_bias and not self.score_bias_param else 0
        mtp = self.mtp_layers * (moe_layer + buffers_per_layer + 3 * self._norm_params()
                                 + 2 * self.hidden * self.hidden + 2 * self.vocab * self.hidden)
        # DeepSeek-V4's hash-routed layers keep a token → experts table (tid2eid) instead of a score-bias buffer
        return {"router_score_bias": (self.moe_layer_count - self.hash_layers) * buffers_per_layer, "mtp": mtp,
                "hash_routing": self.hash_layers * self.vocab * self.experts_per_token,
                # Qwen4-Exp: each N layer's hash multipliers and its tables' sizes and offsets
                "ngram_hashing": self.ngram_layer_count * (self.ngram_order + 2 * (self.ngram_order - 1)
                                                           * self.ngram_heads)}

    @property
    def checkpoint_params(self) -> int:
        """Every element of an unquantized checkpoint: :attr:`params` plus buffers and MTP layers."""
        return self.params + sum(self.extra_checkpoint_params().values())

    @property
    def matmul_params(self) -> int:
        """Weights a token multiplies (the 2·N rule's N): active params less embeddings/positions,
        norms and biases, plus the LM head (the tied embedding when tied)."""
        h = self.hidden
        # the indexers' three projections (their key norm is no matmul)
        indexer = self.indexer_layer_count * self._indexer_matmul_params()
        mats = self.mlp_mats
        r = self.router_hidden  # (ZAYA's router MLP, else one linear)
        router = h * r + 2 * r * r + r * self.router_width if r else h * self.router_width
        per_moe = (self._routed_experts_run() * mats * self.expert_width * self.expert_ffn + router
                   + 2 * h * self.expert_hidden
                   + mats * h * self.shared_expert_ffn + (h if self.shared_expert_gate else 0))
        mixers = self.mixer_layer_count * self.mixer.matmul_params(h) if self.mixer else 0
        attn = self._per_kind(lambda c, k: c._attn_matmul_params() if k in ATTENTION_LETTERS else 0)
        ple = self.layers * 3 * h * self.per_layer_input  # the projection to every layer's input, each gate and proj
        n = self.altup_inputs  # AltUp's projections to and from its streams, its router twice and coefficients a layer
        altup = 2 * (n - 1) * h * h + self.layers * (2 * h * n + n * n * n + n * n) if n else 0
        laurel = self.layers * 2 * h * self.laurel_rank
        taps = (self.attention_kinds.count("F") * 2 * h * self.attention_shape("F").kv_heads * self.short_conv
                if self.dynamic_kv_conv else 0)  # Inkling 2's per-token convolution taps
        return (attn + indexer + mixers + mats * h * self._dense_ffn_sum() + self.moe_layer_count * per_moe
                + self.block_layers * self._block_layer_params()  # (Zamba2: a shared block multiplies per layer run)
                + self.gated_norms * 2 * h * self.gated_norm_rank + taps
                + self.head_vocab * h + self._head_dense_params(matmul=True) + ple + altup + laurel
                + self._compressors(matmul=True)
                + self._hyper_params(matmul=True) + self._ngram_params(matmul=True))

    def _attn_matmul_params(self) -> int:
        """One attention layer's projection weights (no biases, norms or indexer)."""
        h = self.hidden
        if self.compressed_attention:
            rq = self.q_lora_rank
            return (h * rq + rq * self.q_dim + h * self.head_dim + self.o_dim * self.o_lora_rank
                    + self.o_groups * self.o_lora_rank * h)
        if self.is_mla:
            rq, rkv, dr = self.q_lora_rank, self.kv_lora_rank, self.rope_head_dim
            return ((h * rq + self._q_from_latent() if rq else h * self.q_dim) + (0 if self.kv_reused else h * (rkv + dr))
                    + rkv * self.heads * (self.nope_head_dim + self.v_head_dim) + self.o_dim * h
                    + h * self.gate_proj_width)
        c = self.cca_channels  # ZAYA's convolutions (the grouped one by head) multiply every token too
        return (self.attn_in * (self.q_proj_width + self.k_proj_width + self.v_proj_width) + h * self.attn_experts
                + h * (self.gate_proj_width + self.heads * self.rel_bias + (self.heads if self.sink_proj else 0))
                + self.o_dim * h
                + c * self.cca_depthwise + c * self.head_dim * self.cca_grouped)

    # ----- the KV cache ------------------------------------------------------------------
    @property
    def kv_elements_per_token_layer(self) -> int:
        """Cache elements one token adds to one attention layer: K and V of every cached head (MLA: the latent
        and the rotary key, shared by all heads; a DSA layer with its own indexer adds its key: :meth:`kv_elements_of`)."""
        if self.is_mla:
            return self.kv_lora_rank + self.rope_head_dim
        if self.compressed_attention:  # one head whose keys are the values (its window's; cache_elements_of)
            return self.head_dim
        return self.kv_cache_heads * (self.head_dim + self.v_head_dim)

    def kv_elements_of(self, kind: str) -> int:
        """Cache elements one token adds to a layer of this kind (0 without attention)."""
        if kind not in ATTENTION_LETTERS:
            return 0
        # f / s / i / j / g: another layer's cache is read (an i / j layer keeps its indexer's keys)
        own = 0 if kind in KV_SHARED_LETTERS else self.attention_shape(kind).kv_elements_per_token_layer
        return own + (self.index_cache_width if kind in INDEXER_LETTERS else 0)

    @property
    def index_cache_width(self) -> int:
        """Cache elements one token adds to a layer's indexer: its key; with pools (GLM-5-Next) its key, its gate
        scores and the validity flag transformers packs beside them (1 of 2 · dim + 1; engines differ in how they
        mask)."""
        return 2 * self.index_head_dim + 1 if self.index_kpool else self.index_head_dim

    def cached_tokens(self, kind: str, tokens: int) -> int:
        """Tokens a layer of this kind keeps after ``tokens`` were processed: all of them for a full layer,
        the last window − 1 for a sliding or chunked one (transformers' DynamicSlidingWindowLayer), none for a
        layer without attention (a mixer keeps a fixed state instead: :meth:`state_elements`)."""
        if kind not in ATTENTION_LETTERS:
            return 0
        w = self.window_of(kind)
        return tokens if not w else min(tokens, w - 1)

    def state_elements(self, engine: bool = False) -> int:
        """Elements one sequence keeps in the mixer layers, whatever the context length: conv state (transformers
        keeps k inputs, engines k − 1) + recurrent state, every mixer layer."""
        mixers = self.mixer_layer_count * self.mixer.state_elements(engine) if self.mixer else 0
        cca = sum(k in ATTENTION_LETTERS for k in self.cached_attention_kinds) * self.cca_state()
        return mixers + self.ngram_state()[0] + cca

    def int64_cache(self, tokens: int, *, engine: bool = False) -> int:
        """int64 elements one sequence's cache keeps after ``tokens`` tokens: the n-gram embeddings' last token ids,
        and (transformers' QSA) each token's three rotary position ids, kept once for the indexers' block keys."""
        positions = 3 * tokens if self.index_mean_pool and not engine and self.indexer_layer_count else 0
        return self.ngram_state()[1] + positions

    def compressed_entries(self, kind: str, tokens: int) -> int:
        """DeepSeek-V4: the compressed entries a layer of this kind holds after ``tokens`` tokens (one per csa_rate /
        hca_rate tokens, the last incomplete window not yet); 0 for every other kind."""
        rate = {"A": self.csa_rate, "H": self.hca_rate}.get(kind, 0) if self.compressed_attention else 0
        return tokens // rate if rate else 0

    def cache_elements_of(self, kind: str, tokens: int, *, engine: bool = False) -> int:
        """Cache elements one sequence keeps in a layer of this kind after ``tokens`` tokens: cached tokens × elements
        per token; DeepSeek-V4's layers keep their window's keys (which are the values: one tensor in its compressed
        layers and in an engine, keys and values apart in transformers' sliding layers), the compressed entries (an A
        layer's indexer its own, index_head_dim wide), and the tokens of the window being filled (their kv and gate
        projections) with, once a window closed, the last window's first half for the next (an A layer's overlap)."""
        if not self.compressed_attention:
            return self.cached_tokens(kind, tokens) * self.kv_elements_of(kind)
        hd, window = self.head_dim, self.cached_tokens(kind, tokens)
        if kind not in COMPRESSED_LETTERS:
            return window * hd * (1 if engine else 2)
        rate = self.csa_rate if kind == "A" else self.hca_rate
        widths = (hd, self.index_head_dim) if kind == "A" else (hd,)
        series = 2 if kind == "A" else 1  # an A layer's projections make two overlapping series
        entries, pending = tokens // rate, tokens % rate
        out = window * hd
        for w in widths:
            out += entries * w + 2 * pending * series * w + (2 * rate * w if kind == "A" and entries else 0)
        return out

    def kv_cache_elements(self, tokens: int, *, engine: bool = False) -> int:
        """Cache elements of one sequence after ``tokens`` tokens, every layer."""
        return sum(self.cache_elements_of(k, tokens, engine=engine) for k in self.cached_attention_kinds)

    def kv_bytes_per_token(self, kv_bytes: float) -> float:
        """KV-cache bytes one token of one sequence takes in every layer (sliding layers included, i.e.
        while the context is shorter than the window): 2 · layers · kv_heads · head_dim · bytes for MHA/GQA."""
        return sum(self.kv_elements_of(k) for k in self.cached_attention_kinds) * kv_bytes

    # ----- description ---------------------------------------------------------------------
    def attention_pattern(self) -> dict:
        """Which layers attend how: counts, the window, and the pattern as a short string."""
        kinds = self.attention_kinds
        out = {"full": sum(kinds.count(c) for c in "FPIfJGijg"),
               "sliding": kinds.count("S") + kinds.count("s"), "chunked": kinds.count("C"),
               "window": self.sliding_window or None, "pattern": _compress(kinds)}
        shared = sum(c in KV_SHARED_LETTERS for c in kinds)
        if shared:
            out["kv_shared"] = shared
        if any(c in NOPE_LETTERS for c in kinds):  # Mistral Large 4: MLA layers without rotary dims
            out["without_rope"] = sum(c in NOPE_LETTERS for c in kinds)
        if self.is_dsa or self.is_block_sparse:
            out["with_indexer"] = self.indexer_layer_count
        if self.diff_attention:  # DiffLlama: two attention calls per head
            out["differential"] = True
        if self.attn_experts:  # JetMoE: a mixture of attention heads
            out["attention_experts"] = {"experts": self.attn_experts, "per_token": self.experts_per_token}
        if kinds.count("X"):  # Llama 3.2 Vision: layers that attend to an image, skipped on text
            out["cross_attention"] = kinds.count("X")
        if self.compressed_attention:  # DeepSeek-V4: every layer's window, and the compressed layers' entries
            out.update(compressed_sparse=kinds.count("A"), heavily_compressed=kinds.count("H"))
        if self.mixer is not None:
            out.update(linear_attention=kinds.count("L"), mamba=kinds.count("M") + kinds.count("2") + kinds.count("P"),
                       short_conv=kinds.count("V"), without_attention=self.layers - self.attention_layer_count)
        return out

    def describe(self) -> dict:
        """What the configuration is, in words and numbers (the page and ``--json`` show it)."""
        d: dict = {"family": self.family, "attention": self.attention_pattern()}
        d["heads"] = {"query": self.heads, "kv": self.kv_heads, "head_dim": self.head_dim,
                      "v_head_dim": self.v_head_dim, "kv_cache_heads": self.kv_cache_heads}
        if self.has_full_shape:  # Gemma 4's full layers
            f = self.attention_shape("F")
            d["heads"]["full_layers"] = {"kv": f.kv_heads, "head_dim": f.head_dim, "keys_as_values": f.k_eq_v}
        d["dsa"] = ({"index_heads": self.index_heads, "index_head_dim": self.index_head_dim,
                     "index_topk": self.index_topk, **({"index_kpool": self.index_kpool} if self.index_kpool else {})}
                    if self.is_dsa else None)
        d["block_sparse"] = ({"index_heads": self.index_heads, "index_head_dim": self.index_head_dim,
                              "index_topk_blocks": self.index_topk, "index_block": self.index_block,
                              "mean_pooled": self.index_mean_pool}
                             if self.is_block_sparse else None)
        d["compressed"] = ({"csa_rate": self.csa_rate, "hca_rate": self.hca_rate, "index_heads": self.index_heads,
                            "index_head_dim": self.index_head_dim, "index_topk": self.index_topk,
                            "q_lora_rank": self.q_lora_rank, "o_groups": self.o_groups, "o_lora_rank": self.o_lora_rank}
                           if self.compressed_attention else None)
        if self.hash_layers:
            d["hash_layers"] = self.hash_layers
        d["mla"] = ({"q_lora_rank": self.q_lora_rank or None, "kv_lora_rank": self.kv_lora_rank,
                     "qk_nope_head_dim": self.nope_head_dim, "qk_rope_head_dim": self.rope_head_dim,
                     "v_head_dim": self.v_head_dim,
                     "cache_per_token_layer": self.kv_elements_per_token_layer} if self.is_mla else None)
        if self.is_mla and any(c in NOPE_LETTERS for c in self.attention_kinds):  # Mistral Large 4's NoPE layers
            d["mla"]["without_rope"] = {"layers": sum(c in NOPE_LETTERS for c in self.attention_kinds),
                                        "cache_per_token_layer": self.kv_lora_rank}
        if self.is_mla and any(c in KV_SHARED_LETTERS for c in self.attention_kinds):  # (kv_source_layers)
            d["mla"]["latent_reused_layers"] = sum(c in KV_SHARED_LETTERS for c in self.attention_kinds)
        if self.has_sliding_shape and not self.is_mla:  # Step 3.7's sliding layers
            d["heads"]["sliding_layers"] = self.sliding_heads
        elif self.has_sliding_shape:  # Dots 3 Note's sliding layers
            sl = self.attention_shape("S")
            d["mla"]["sliding_layers"] = {"heads": sl.heads, "q_lora_rank": sl.q_lora_rank,
                                          "kv_lora_rank": sl.kv_lora_rank, "qk_nope_head_dim": sl.nope_head_dim,
                                          "qk_rope_head_dim": sl.rope_head_dim, "v_head_dim": sl.v_head_dim,
                                          "cache_per_token_layer": sl.kv_elements_per_token_layer}
        d["experts"] = ({"experts": self.experts, "per_token": self.experts_per_token,
                         **({"zero_experts": self.zero_experts, "computing_per_token": self.routed_per_token}
                            if self.zero_experts else {}),
                         "expert_ffn": self.expert_ffn, "moe_layers": self.moe_layer_count,
                         "dense_layers": self.dense_layer_count, "pattern": _compress(self.mlp_kinds),
                         "shared_expert_ffn": self.shared_expert_ffn or None,
                         **({"vision_expert_ffn": self.vision_expert_ffn} if self.vision_expert_ffn else {}),
                         "shared_expert_gate": self.shared_expert_gate, "router_bias": self.router_bias,
                         "expert_bias": self.expert_bias, "compute": self.experts_compute}
                        if self.is_moe else None)
        d["block"] = {"mlp": self.mlp, "norm": self.norm, "norms_per_layer": self.norms_per_layer,
                      "parallel": self.parallel_block, "qk_norm": self.qk_norm,
                      "biases": [n for n, on in (("qkv", self.qkv_bias), ("o", self.o_bias),
                                                 ("mlp", self.mlp_bias), ("lm_head", self.lm_head_bias)) if on],
                      "attention_sinks": self.attention_sinks, "tied_embeddings": self.tied_embeddings,
                      "positions": ("learned" if self.learned_positions else "alibi" if self.alibi else
                                    "sinusoidal" if self.sinusoidal else "none" if self.no_positions else "rotary")}
        d["max_positions"] = self.max_positions or self.learned_positions or None
        d["quantization"] = self.quant.describe() if self.quant else None
        d["dtype"] = self.dtype or None
        d["mixer"] = ({**self.mixer.describe(), "layers": self.mixer_layer_count,
                       "state_per_sequence": self.state_elements()} if self.mixer else None)
        d["block"]["attention_output_gate"] = self.attn_output_gate
        if self.attn_gate:
            d["block"]["attention_gate_proj"] = self.attn_gate
        if "-" in self.mlp_kinds:
            d["block"]["layers_without_mlp"] = self.mlp_kinds.count("-")
        if self.per_layer_input:
            d["block"]["per_layer_inputs"] = self.per_layer_input
        if self.kv_shared_ffn:
            d["block"]["kv_shared_ffn"] = self.kv_shared_ffn
        if self.altup_inputs:
            d["block"]["altup_inputs"] = self.altup_inputs
        if self.laurel_rank:
            d["block"]["laurel_rank"] = self.laurel_rank
        if self.shared_blocks:  # Zamba2
            d["block"]["shared_blocks"] = {"blocks": self.stored_blocks, "layers": self.block_layers,
                                           "input_width": self.attn_in, "adapter_rank": self.block_adapter_rank,
                                           "qkv_adapters": self.qkv_adapters}
        if self.head_dense:  # ModernBERT's prediction head
            d["block"]["head_dense"] = {"bias": self.head_dense_bias}
        if self.hyper_streams:
            d["block"]["hyper_streams"] = self.hyper_streams
            d["block"]["hyper_mix"] = self.hyper_mix
            if self.hyper_gate_rank:  # Qwen4-Exp
                d["block"]["hyper_gate_rank"] = self.hyper_gate_rank
        if self.cca_depthwise:  # ZAYA
            d["block"]["cca"] = {"depthwise": self.cca_depthwise, "grouped": self.cca_grouped,
                                 "state_per_sequence": self.attention_layer_count * self.cca_state()}
        if self.router_hidden:
            d["experts"]["router_hidden"] = self.router_hidden
        if self.ngram_layers:  # Qwen4-Exp
            d["block"]["ngram_embeddings"] = {"layers": self.ngram_layer_count, "order": self.ngram_order,
                                              "heads": (self.ngram_order - 1) * self.ngram_heads,
                                              "width": self.ngram_dim, "rows": self.ngram_rows,
                                              "params": self._ngram_params()}
        if self.short_conv:  # Inkling
            d["block"]["short_conv"] = {"kernel": self.short_conv, "state_per_sequence": self.short_conv_state(),
                                        "state_dtype": "fp32"}
        if self.rel_bias:
            d["block"]["relative_bias"] = {"d_rel": self.rel_bias, "full_extent": self.rel_extent or None,
                                           "sliding_extent": self.sliding_window or None}
        if self.router_sinks:
            d["experts"]["router_scores_shared"] = self.router_sinks
        if self.attn_res_block:  # Inkling 2
            d["block"]["attention_residuals"] = {"block": self.attn_res_block, "queries": self.attn_res_queries}
        if self.hrm_cycles:  # HRM-Text
            d["block"]["hrm"] = {"stack_layers": self.layers // 2, "high_cycles": self.hrm_cycles,
                                 "low_cycles": self.hrm_low_cycles, "layers_run": self.executed_layers}
        if self.loop_passes > 1:  # Inkling-2-Mini
            d["block"]["loop"] = {"start": self.loop_start, "end": self.loop_end, "passes": self.loop_passes,
                                  "gate_rank": self.loop_gate_rank, "layers_run": self.executed_layers}
        return d

    def summary(self) -> dict:
        d = asdict(self)
        d["quant"] = self.quant.describe() if self.quant else None
        d["mixer"] = self.mixer.describe() if self.mixer else None
        d["params"] = self.params
        d["active_params"] = self.active_params
        d["active_params_without_embedding"] = self.active_params_without_embedding
        return d

    def replace(self, **changes) -> ModelConfig:
        """A copy with ``changes``; a field derived from another (v_head_dim from head_dim, the cached
        heads from kv_heads, the experts' width from ffn) follows it unless given or set apart."""
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        for derived, source in _DERIVED:
            if source in changes and derived not in changes and d[derived] == d[source]:
                changes[derived] = 0
        d.update(changes)
        return ModelConfig(**d)


# (field, the field it defaults to when 0)
_DERIVED = (("v_head_dim", "head_dim"), ("kv_cache_heads", "kv_heads"), ("expert_ffn", "ffn"))


def _compress(pattern: str) -> str:
    """A per-layer string as its repeating unit when it has one ("SSSSSF ×4 + SS"), else as it is."""
    n = len(pattern)
    if not pattern or len(set(pattern)) == 1:
        return f"{pattern[:1]} ×{n}" if pattern else ""
    for u in range(1, n // 2 + 1):
        unit = pattern[:u]
        reps, rest = divmod(n, u)
        if unit * reps + unit[:rest] == pattern:
            return f"{unit} ×{reps}" + (f" + {unit[:rest]}" if rest else "")
    runs = []
    i = 0
    while i < n:
        j = i
        while j < n and pattern[j] == pattern[i]:
            j += 1
        runs.append(f"{pattern[i]}×{j - i}" if j - i > 1 else pattern[i])
        i = j
    return " ".join(runs)
