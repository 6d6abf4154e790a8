"""Exact per-GEMM accounting of a decoder-only transformer: FLOPs, bytes, memory, time.

Conventions (shared/design.md, one set everywhere):

* One multiply-add = 2 FLOPs; a GEMM of M×K by K×N costs 2·M·N·K.
* Two named conventions (:data:`CONVENTIONS`; a :class:`Workload` names one and every answer says which):

  - ``engine`` (the default) — what an inference or training engine executes: causal attention in a fused
    kernel (the lower triangle with its diagonal, S·(S+1)/2 scores per head; no S×S scores through memory;
    K/V never repeated per head), the LM head on the last prompt position in a prefill (every position in
    training), each token through ``experts_per_token`` experts in every MoE (Llama 4 included), MLA in its
    absorbed form for decode.
  - ``transformers`` (the reference, ``--reference transformers``) — what transformers' eager forward pass
    executes, exactly what ``torch.utils.flop_counter.FlopCounterMode`` counts: dense S×S attention
    products for every query head (the mask applied afterwards), the scores through memory for scale,
    mask and softmax and the GQA K/V repeat, the LM head over every position, experts as that code runs
    them (Llama 4: every expert on every token), MLA decompressing the whole cache every step.

  Each switch (``attention``, ``causal``, ``lm_head``, ``experts_compute``, ``mla``) can be set on its own;
  one set apart from its convention is an override, and the answer names it (:meth:`Workload.overrides`).
  GQA shrinks k_proj/v_proj and the KV cache, not the products; the router is a GEMM. Softmax, norms,
  activations and residual adds are not GEMMs: their FLOPs are never part of a GEMM count
  (``PhaseTotals.flops``).
* The rest of a layer is counted too, as ops of kind ``"other"``
  (:func:`prefill_other_ops`, :func:`decode_other_ops`): norms, rotary
  embedding, the GQA K/V repeat and scale + mask + softmax of eager attention,
  the activation, residual adds, MoE routing and the embedding gather, each
  with the bytes a kernel reads and writes and its element-wise FLOPs.
  They are memory-bound; the estimate's time includes them, and the GEMM share
  of FLOPs and of time (:func:`gemm_share`) is computed from both.
* ``attention="fused"`` (a flash / SDPA kernel): the same GEMM FLOPs, but the
  S×S scores stay on chip (no score bytes, no separate softmax, no K/V repeat).
* ``causal`` counts only the lower triangle with its diagonal; ``lm_head="last"`` runs the head on the
  last position of each sequence only. MACs are FLOPs / 2 (see :attr:`Op.macs`).
* Decode: ``new_tokens = N`` is N steps after the prefill; step i (from 0)
  feeds one token per sequence while S + i tokens are cached, so its query
  meets S + i + 1 keys. Decode totals cover every step and the whole batch.

Bytes are the minimum traffic of each GEMM run on its own: weights at the
weight dtype (read once per run: once per layer in prefill, once per layer and
step in decode; a MoE reads only the experts its tokens reach, at most all of
them), activations in and out at the activation dtype, and K/V at the KV
dtype (the whole cache, every decode step). With eager attention the score matrix is materialised.
An 8-bit (or 4-bit) activation dtype is what each weight GEMM reads as input; its output, attention and
the element-wise work stay in 16 bits, as an fp8 engine runs them (an fp8 run is not 2× a bf16 one
everywhere).

Time per op is the roofline ``max(FLOPs / peak, bytes / bandwidth)`` over an efficiency, through
:func:`gemmlib.core.flops.roofline_time`; the peak is the one for the op's compute dtype
(:func:`gemmlib.llm.efficiency.compute_dtype`: weight-only quantisation still multiplies in the
activation dtype). The efficiency is, by default, the shape model of :mod:`gemmlib.llm.efficiency`
(wave and tile quantisation, small-K and small-M fall-off, memory bound below the ridge, fitted to
published measurements); a number forces one flat share; a calibration replaces both. This module
times one device running the whole model; :mod:`gemmlib.llm.parallel` shards each op across GPUs (by
:data:`SHARDING` and :attr:`Op.routed`) and adds the communication. Pass a :class:`Hardware` made with
``with_overrides`` to use measured ceilings instead of the datasheet.

This module never imports torch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, replace
from functools import lru_cache

from gemmlib.core.dtypes import DTYPES, get_dtype
from gemmlib.core.errors import InputError
from gemmlib.core.flops import roofline_time
from gemmlib.core.hardware import Hardware
from gemmlib.core.i18n import N_, Text
from gemmlib.llm.checkpoint import (
    checkpoint_size,
    element_bytes,
    mlp_op_names,
    op_weight_bytes,
    weight_format,
)
from gemmlib.llm.config import ATTENTION_LETTERS, INDEXER_LETTERS, ModelConfig
from gemmlib.llm.efficiency import FlatEfficiency, bound_of, compute_dtype, shape_model
from gemmlib.llm.hf import describe_read
from gemmlib.llm.quant import weight_dtype_name
from gemmlib.llm.ssm import MIXER_LETTERS
from gemmlib.llm.ssm import work as mixer_work

OP_NAMES = ("attn_res", "loop_gate_down", "loop_gate_up", "norm_gate_down", "norm_gate_up", "q_proj", "q_a_proj", "q_b_proj", "q_gate_proj", "k_proj", "v_proj", "kv_conv", "kv_conv_taps", "rel_proj", "rel_logits",
            "sink_proj", "kv_proj", "cca_v_init", "cca_conv_depthwise", "cca_conv_grouped",
            "qkv_adapter_down", "qkv_adapter_up", "kv_a_proj", "kv_b_proj", "q_absorb",
            "csa_kv", "csa_gate", "hca_kv", "hca_gate", "index_kv", "index_gate",
            "attn_scores", "attn_values", "attn_scores_sliding", "attn_values_sliding", "attn_scores_compressed",
            "attn_values_compressed", "attn_scores_sparse", "attn_values_sparse", "o_absorb", "attn_gate", "o_proj", "o_a_proj", "o_b_proj",
            "attn_conv", "block_out_proj", "mlp_adapter_down", "mlp_adapter_up",
            "in_proj_qkvz", "in_proj_ba", "in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a", "in_proj", "conv1d",
            "kda_f_a", "kda_f_b", "kda_g_a", "kda_g_b", "kda_f", "kda_g", "rg_input_gate", "rg_recurrent_gate",
            "x_proj", "dt_proj", "ssm_chunks", "ssm_scan_out", "out_proj",
            "index_q", "index_k", "index_weights", "index_pool_gate", "index_scores", "index_reduce",
            "router_down", "router_fc1", "router_fc2", "router", "expert_in_proj", "gate_proj", "up_proj", "down_proj", "expert_out_proj", "shared_gate_proj", "shared_up_proj", "shared_down_proj",
            "shared_expert_gate", "dense_gate_proj", "dense_up_proj", "dense_down_proj", "mlp_conv", "per_layer_model_proj",
            "per_layer_gate", "per_layer_proj", "altup_proj", "altup_router", "altup_predict", "altup_mix",
            "altup_correct", "laurel_left", "laurel_right", "altup_unembed", "ngram_key", "ngram_value", "ngram_conv",
            "hc_pre", "hc_mix", "hc_gate_down", "hc_gate_up", "hc_inject", "hc_head", "hc_head_down", "hc_head_up",
            "head_dense", "attn_router", "lm_head")
OTHER_OP_NAMES = ("embedding", "norms", "rotary", "kv_repeat", "kv_conv_dynamic", "rel_bias_add", "attn_softmax", "ssm_scan", "conv_gates", "activation",
                  "shared_activation", "dense_activation", "moe_routing", "act_quant", "act_quant_inner", "residual")
ATTENTION_PRODUCTS = ("attn_scores", "attn_values", "attn_scores_sliding", "attn_values_sliding",
                      "attn_scores_compressed", "attn_values_compressed", "attn_scores_sparse", "attn_values_sparse")
QK_PRODUCTS = tuple(n for n in ATTENTION_PRODUCTS if n.startswith("attn_scores"))  # the products of queries by keys
LM_HEAD_MODES = ("all", "last")
ATTENTION_KINDS = ("eager", "fused")
MLA_FORMS = ("eager", "absorbed")
EXPERTS_COMPUTE = ("routed", "eager")  # routed: k of E per token in every MoE; eager: as the model's own code runs them

# The counting conventions (module docstring): each switch's choice under each. "engine" is the default.
SWITCHES = ("attention", "causal", "lm_head", "experts_compute", "mla")
CONVENTIONS: dict[str, dict] = {
    "engine": {"attention": "fused", "causal": True, "lm_head": "last", "experts_compute": "routed",
               "mla": "absorbed"},
    "transformers": {"attention": "eager", "causal": False, "lm_head": "all", "experts_compute": "eager",
                     "mla": "eager"},
}
DEFAULT_CONVENTION = "engine"
REFERENCE = "transformers"  # the convention FlopCounterMode on transformers' eager models checks

# How each op splits across tensor-parallel ranks (Megatron style), for the scale-out model:
#   column: the output features split (q/k/v, gate/up; their element-wise followers too);
#   row: the input features split, an all-reduce of the output follows (o_proj, down_proj);
#   heads: split by attention head (the products, softmax, rotary, GQA repeat, MLA's absorbed
#          per-head products);
#   vocab: the vocabulary splits (LM head, embedding);
#   replicated: every rank does all of it (norms, residual adds, the router, MLA's down-projections
#               q_a_proj / kv_a_proj, whose outputs every head needs, as vLLM's ReplicatedLinear).
# Routed experts are gate_proj / up_proj / down_proj in a MoE model (the shared experts and a MoE
# model's dense layers have their own names), so expert parallelism can tell them apart.
# A new op names its sharding here; an op missing from the table counts as replicated.
SHARDING: dict[str, str] = {
    "q_proj": "column", "k_proj": "column", "v_proj": "column", "gate_proj": "column", "up_proj": "column",
    "attn_gate": "column",
    "q_b_proj": "column", "kv_b_proj": "column",
    "shared_gate_proj": "column", "shared_up_proj": "column", "dense_gate_proj": "column", "dense_up_proj": "column",
    "o_proj": "row", "down_proj": "row", "shared_down_proj": "row", "dense_down_proj": "row",
    "attn_scores": "heads", "attn_values": "heads", "attn_scores_sliding": "heads", "attn_values_sliding": "heads",
    "q_absorb": "heads", "o_absorb": "heads",
    "attn_softmax": "heads", "rotary": "heads", "kv_repeat": "heads", "activation": "column",
    "shared_activation": "column", "dense_activation": "column",
    "lm_head": "vocab", "embedding": "vocab",
    "router": "replicated", "shared_expert_gate": "replicated", "q_a_proj": "replicated", "kv_a_proj": "replicated",
    "moe_routing": "replicated", "norms": "replicated", "residual": "replicated",
    # the mixers of the hybrid families (vLLM: in_proj column-parallel, x_proj and out_proj row-parallel)
    "in_proj_qkvz": "column", "in_proj_ba": "column", "in_proj_qkv": "column", "in_proj_z": "column",
    "in_proj_b": "column", "in_proj_a": "column", "in_proj": "column", "conv1d": "heads", "x_proj": "row",
    "dt_proj": "column", "ssm_chunks": "heads", "ssm_scan_out": "heads", "ssm_scan": "heads", "conv_gates": "heads",
    "out_proj": "row",
    "act_quant": "replicated", "act_quant_inner": "column",
    # DeepSeek-V3.2's indexer: every rank scores every key (vLLM's indexer projections are replicated)
    "index_q": "replicated", "index_k": "replicated", "index_weights": "replicated", "index_scores": "replicated",
    "index_reduce": "replicated", "index_pool_gate": "replicated",
    # Zamba2's per-layer adapters and block output projection: small; the up-projections split like q|k|v and gate|up
    "qkv_adapter_down": "replicated", "qkv_adapter_up": "column", "mlp_adapter_down": "replicated",
    "mlp_adapter_up": "column", "block_out_proj": "replicated",
    # Gemma 4's per-layer inputs: small projections every rank runs whole
    "per_layer_model_proj": "replicated", "per_layer_gate": "replicated", "per_layer_proj": "replicated",
    # Gemma 3n's AltUp and LAuReL: small projections every rank runs whole
    "altup_proj": "replicated", "altup_router": "replicated", "altup_predict": "replicated", "altup_mix": "replicated",
    "altup_correct": "replicated", "laurel_left": "replicated", "laurel_right": "replicated",
    "altup_unembed": "replicated",
    # Kimi Linear's delta attention: the low-rank gates' first halves every rank runs whole, their second halves split
    "kda_f_a": "replicated", "kda_g_a": "replicated", "kda_f_b": "column", "kda_g_b": "column", "kda_f": "column",
    "kda_g": "column",
    # RecurrentGemma's block-diagonal gates: their blocks split with the channels
    "rg_input_gate": "column", "rg_recurrent_gate": "column",
    # DeepSeek-V4: the query heads split, the one key/value head and the compressors every rank runs whole (vLLM
    # replicates them), the grouped output projection by its groups (heads) then row-parallel
    "kv_proj": "replicated", "o_a_proj": "column", "o_b_proj": "row", "attn_scores_compressed": "heads",
    "attn_values_compressed": "heads", "attn_scores_sparse": "heads", "attn_values_sparse": "heads", "csa_kv": "replicated", "csa_gate": "replicated", "hca_kv": "replicated",
    "hca_gate": "replicated", "index_kv": "replicated", "index_gate": "replicated", "hc_pre": "replicated",
    "hc_mix": "replicated", "hc_head": "replicated", "head_dense": "replicated", "attn_router": "replicated",
    # Inkling: the K/V convolutions and the relative states split with the heads; the convolutions of the attention's and
    # the MLP's outputs run on the whole hidden state after its all-reduce
    "kv_conv": "heads", "rel_proj": "column", "rel_logits": "heads", "rel_bias_add": "heads", "attn_conv": "replicated",
    "mlp_conv": "replicated",
    # A.X-K2: the query latent to queries and gate splits with the heads; the norms' low-rank gates every rank runs whole
    "q_gate_proj": "column", "norm_gate_down": "replicated", "norm_gate_up": "replicated",
    # Inkling 2: the sinks and the per-token convolution taps split with the heads; the block attention residuals run
    # on the whole hidden state
    "sink_proj": "column", "kv_conv_taps": "column", "kv_conv_dynamic": "heads", "attn_res": "replicated",
    "loop_gate_down": "replicated", "loop_gate_up": "replicated",
    # Muse Spark's latent mixture: the projections to and from the experts' width split their inner dimension
    "expert_in_proj": "column", "expert_out_proj": "row",
    # Qwen4-Exp: the gated hyper-connections and the n-gram embeddings' projections and convolution run on the whole
    # residual streams (transformers' plan splits the gates' down projection by input; here every rank runs them)
    "hc_gate_down": "replicated", "hc_gate_up": "replicated", "hc_inject": "replicated", "hc_head_down": "replicated",
    "hc_head_up": "replicated", "ngram_key": "replicated", "ngram_value": "replicated", "ngram_conv": "replicated",
    # ZAYA: the convolutions split with the heads; the router's MLP every rank runs whole
    "cca_conv_depthwise": "heads", "cca_conv_grouped": "heads", "cca_v_init": "column", "router_down": "replicated",
    "router_fc1": "replicated", "router_fc2": "replicated",
}
# Ops that are routed experts (in a mixture of experts) — for expert parallelism.
EXPERT_OPS = ("gate_proj", "up_proj", "down_proj")

# Where an op's sequences and positions are, for one rank's share of a batch (expert-parallel ranks and the attention's
# data replicas each take their own sequences) and of a sequence (a context-parallel rank takes 1/c of its positions).
# Most ops run the batch's tokens as the rows (M) of a GEMM or an element-wise pass: both are in M. The ops named here
# run each sequence (its heads, its chunks, its tokens' small matrices) as a run of its own: the sequences are in
# ``count``; their rows are one sequence's queries, heads, a chunk, a stream or a feature, so the positions are in M
# (the attention products and what follows their scores) or in ``count`` too (TOKENS_IN_COUNT). A convolution's rows
# are the sequences, its positions in neither (TOKENS_IN_NEITHER). tests/llm/test_op_axes.py builds every family's
# ops at two batches and two lengths and checks each op's axes against these tables.
BATCH_IN_COUNT = frozenset(ATTENTION_PRODUCTS) | {"attn_softmax", "rel_bias_add", "index_scores", "index_reduce",
                                                   "altup_mix", "hc_mix", "ssm_chunks", "ssm_scan_out"}
TOKENS_IN_COUNT = frozenset({"altup_mix", "hc_mix", "ssm_chunks", "ssm_scan_out"})
TOKENS_IN_NEITHER = frozenset({"conv1d", "attn_conv", "kv_conv", "mlp_conv", "cca_conv_depthwise", "cca_v_init"})

_LIMITS = {"batch": 1_000_000, "seq_len": 100_000_000, "new_tokens": 10_000_000}


def _whole(name: str, v, minimum: int) -> int:
    if isinstance(v, bool):
        raise InputError(N_("{name} must be a whole number, got {value!r}"), name=name, value=v)
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise InputError(N_("{name} must be a whole number, got {value!r}"), name=name, value=v) from None
    if not math.isfinite(f) or not f.is_integer():
        raise InputError(N_("{name} must be a whole number, got {value!r}"), name=name, value=v)
    i = int(f)
    if i < minimum:
        raise InputError(N_("{name} must be at least {minimum}, got {value}"),
                         name=name, minimum=minimum, value=i)
    if i > _LIMITS[name]:
        raise InputError(N_("{name} = {i:,} is beyond what this estimator accepts (limit {limit:,})"),
                         name=name, i=i, limit=_LIMITS[name])
    return i


@dataclass(frozen=True)
class Workload:
    """What is run: batch (concurrent sequences), prompt length, decode steps, switches, dtypes.

    ``convention`` (:data:`CONVENTIONS`): ``engine`` (default) or ``transformers``; each switch left at
    None takes the convention's choice, one given explicitly overrides it (:meth:`overrides` names it).
    ``decode_only``: no prefill; the decode starts with ``seq_len`` tokens already cached (the CLI's
    ``--context C``: one decode step with C tokens in the cache). ``mla``: how an MLA model's decode
    runs — ``eager`` as transformers does (the whole cache decompressed by kv_b_proj every step) or
    ``absorbed`` as serving engines do (kv_b_proj folded into the query and the output).
    ``experts_compute``: ``routed`` (each token through k of E experts, as engines run every MoE) or
    ``eager`` (as the model's own transformers code runs them: Llama 4 runs every expert on every token).
    """

    batch: int = 1
    seq_len: int = 512
    new_tokens: int = 0
    causal: bool | None = None
    lm_head: str | None = None  # "all" positions or the "last" position only
    weight_dtype: str = "bf16"
    act_dtype: str = "bf16"
    kv_dtype: str = "bf16"
    attention: str | None = None  # "eager" (scores through memory) or "fused" (flash / SDPA kernel)
    decode_only: bool = False
    mla: str | None = None
    experts_compute: str | None = None
    convention: str = DEFAULT_CONVENTION

    def __post_init__(self) -> None:
        if self.convention not in CONVENTIONS:
            raise InputError(N_("the counting convention must be one of {choices}, got {convention!r}"),
                             choices=", ".join(CONVENTIONS), convention=self.convention)
        chosen = CONVENTIONS[self.convention]
        for f in SWITCHES:
            if getattr(self, f) is None:
                object.__setattr__(self, f, chosen[f])
        object.__setattr__(self, "batch", _whole("batch", self.batch, 1))
        object.__setattr__(self, "seq_len", _whole("seq_len", self.seq_len, 0 if self.decode_only else 1))
        object.__setattr__(self, "new_tokens", _whole("new_tokens", self.new_tokens, 0))
        if self.lm_head not in LM_HEAD_MODES:
            raise InputError(N_("lm_head must be 'all' or 'last', got {lm_head!r}"), lm_head=self.lm_head)
        object.__setattr__(self, "weight_dtype", weight_dtype_name(self.weight_dtype))  # int4 / fp4 too
        for f in ("act_dtype", "kv_dtype"):
            object.__setattr__(self, f, get_dtype(getattr(self, f)).name)
        for f in ("causal", "decode_only"):
            if not isinstance(getattr(self, f), bool):
                raise InputError(N_("{field} must be true or false, got {value!r}"),
                                 field=f, value=getattr(self, f))
        if self.attention not in ATTENTION_KINDS:
            raise InputError(N_("attention must be one of {choices}, got {attention!r}"),
                             choices=", ".join(ATTENTION_KINDS), attention=self.attention)
        if self.mla not in MLA_FORMS:
            raise InputError(N_("mla must be one of {choices}, got {mla!r}"),
                             choices=", ".join(MLA_FORMS), mla=self.mla)
        if self.experts_compute not in EXPERTS_COMPUTE:
            raise InputError(N_("experts_compute must be one of {choices}, got {value!r}"),
                             choices=", ".join(EXPERTS_COMPUTE), value=self.experts_compute)
        if self.decode_only and self.new_tokens < 1:
            raise InputError(N_("a decode-only workload needs at least one decode step"))

    @property
    def prefill_tokens(self) -> int:
        return 0 if self.decode_only else self.batch * self.seq_len

    @property
    def final_tokens(self) -> int:
        """Tokens each sequence's cache holds at the end: S + N (C + N for a decode-only workload)."""
        return self.seq_len + self.new_tokens

    def overrides(self) -> dict[str, dict]:
        """The switches set apart from the convention: {switch: {"value": given, "convention": its choice}}."""
        chosen = CONVENTIONS[self.convention]
        return {f: {"value": getattr(self, f), "convention": chosen[f]} for f in SWITCHES
                if getattr(self, f) != chosen[f]}

    def under(self, convention: str) -> Workload:
        """The same workload counted under ``convention``: every switch back to that convention's choice."""
        return replace(self, convention=convention, **dict.fromkeys(SWITCHES))

    def conventions(self) -> dict:
        """The JSON ``conventions``: the convention's name, each switch as used, and the overrides."""
        return {"name": self.convention, **{f: getattr(self, f) for f in SWITCHES},
                "weights": Text(N_("the checkpoint's dtype")) if self.convention == REFERENCE else
                Text(N_("the checkpoint's dtype (a 32-bit checkpoint served in 16 bits; an fp8 checkpoint in fp8)")),
                "overridden": self.overrides()}


@dataclass(frozen=True)
class Op:
    """One named GEMM of one phase, summed over layers (and decode steps).

    ``m, n, k`` are the shape of one run (for decode attention: the first step;
    ``n_last`` / ``k_last`` give the last step's, as the key count grows by one
    per step). ``count`` is how many runs the totals include, ``kernels`` how many
    kernel launches (one bmm runs every head; one grouped GEMM every routed expert;
    one fused attention kernel both products). ``flops`` and the byte fields are totals.
    """

    name: str
    phase: str
    m: int
    n: int
    k: int
    count: int
    flops: int
    weight_bytes: float
    act_bytes: float
    kv_bytes: float
    note: str = ""
    n_last: int | None = None
    k_last: int | None = None
    time_s: float = 0.0
    compute_s: float = 0.0
    memory_s: float = 0.0
    bound: str = ""
    kind: str = "gemm"  # "gemm", or "other" (element-wise work: its FLOPs are not GEMM FLOPs)
    routed: bool = False  # runs in the routed experts of a MoE (split across expert-parallel ranks)
    kernels: int = 0  # kernel launches the totals cover (layers × steps for a layer's GEMM; 0: one per run)
    efficiency: float = 0.0  # the share of its roofline the op was timed at (set with its time)
    efficiency_by: str = ""  # what set it: the shape model's reason, "flat", or the calibration
    wide: bool = False  # multiplies in 16 bits whatever the activation dtype (an 8-bit run's output head in
    # training; in serving, a linear the checkpoint's format leaves unquantized)

    @property
    def is_gemm(self) -> bool:
        return self.kind == "gemm"

    @property
    def shard(self) -> str:
        """How the op splits across tensor-parallel ranks (see :data:`SHARDING`)."""
        return SHARDING.get(self.name, "replicated")

    @property
    def batch_axis(self) -> str:
        """Where the batch's sequences are: ``"m"`` (the rows) or ``"count"`` (the runs; see :data:`BATCH_IN_COUNT`)."""
        return "count" if self.name in BATCH_IN_COUNT else "m"

    @property
    def tokens_axis(self) -> str:
        """Where one sequence's positions are: ``"m"``, ``"count"`` or ``""`` (neither: a convolution's rows are the
        sequences; see :data:`TOKENS_IN_COUNT`)."""
        return "count" if self.name in TOKENS_IN_COUNT else "" if self.name in TOKENS_IN_NEITHER else "m"

    @property
    def bytes(self) -> float:
        return self.weight_bytes + self.act_bytes + self.kv_bytes

    @property
    def macs(self) -> int:
        return self.flops // 2

    @property
    def intensity(self) -> float:
        """FLOP per byte of this op's traffic."""
        return self.flops / self.bytes if self.bytes else math.inf

    def to_dict(self) -> dict:
        d = {f: getattr(self, f) for f in _OP_FIELDS}  # every value is immutable: no deep copy (asdict's)
        d["bytes"] = self.bytes
        d["macs"] = self.macs
        d["intensity"] = self.intensity
        return d


_OP_FIELDS = tuple(f.name for f in fields(Op))


# ----- building the ops ---------------------------------------------------------------------

class _Sizes:
    """Bytes per element of activations and K/V, and of each op's weight matrix (one layer)."""

    def __init__(self, cfg: ModelConfig, wl: Workload) -> None:
        act = get_dtype(wl.act_dtype).bytes
        self.a_in = act  # what a weight GEMM reads as its input
        self.a = max(act, 2)  # between kernels: 16 bits when the GEMMs take 8-bit (or 4-bit) inputs
        self.kv = get_dtype(wl.kv_dtype).bytes
        self.el = element_bytes(cfg, wl.weight_dtype)  # norms, embeddings
        self._w = op_weight_bytes(cfg, wl.weight_dtype)
        # an 8-bit (4-bit) run of a quantized checkpoint: a linear its format leaves unquantized (the LM head, the
        # routers, an ignored module) multiplies in 16 bits, as its weights are stored (_linear)
        self.keeps_wide = act < 2 and weight_format(cfg, wl.weight_dtype)[0] is not None

    def w(self, op: str, kind: str) -> float:
        """Bytes of the weights (bias included) of ``op`` in one layer of MLP kind ``kind`` (one expert)."""
        return self._w.get((op, kind), self._w.get((op, "M" if kind == "D" else "D"), 0.0))


@dataclass(frozen=True)
class _Run:
    """One phase's shape: ``tokens`` rows per projection per step, ``steps`` runs of the stack,
    ``queries`` query rows per head per step, ``cached`` tokens in the cache at the first step."""

    phase: str
    tokens: int
    steps: int
    queries: int
    cached: int
    tri: bool


def _sum_min(c0: int, c1: int, cap: int) -> int:
    """Σ min(c, cap) for c = c0 .. c1."""
    if c1 < c0:
        return 0
    if c1 <= cap:
        return (c0 + c1) * (c1 - c0 + 1) // 2
    if c0 >= cap:
        return (c1 - c0 + 1) * cap
    return (c0 + cap) * (cap - c0 + 1) // 2 + (c1 - cap) * cap


def _keys(window: int, run: _Run) -> tuple[int, int, int, int]:
    """(keys summed over steps, keys of the first step, of the last, query-key pairs summed) per
    layer, sequence and head.

    Keys multiplied = the new queries plus what the cache holds: everything for a full layer, the last
    window − 1 tokens for a sliding one (so an eager prefill is dense S × S even past the window, and a
    decode step with c cached meets min(c, W − 1) + 1 keys). ``tri`` (the causal switch) counts only
    the keys each query may see: the lower triangle, or a band W wide for a sliding layer.
    """
    q, c0 = run.queries, run.cached
    c1 = c0 + run.steps - 1
    if window:
        cap = window - 1
        first, last = q + min(c0, cap), q + min(c1, cap)
        total = run.steps * q + _sum_min(c0, c1, cap)
    else:
        first, last = q + c0, q + c1
        total = run.steps * q + (c0 + c1) * run.steps // 2
    if run.tri:  # prefill: row i sees i + 1 keys, at most the window
        if window and q > window:
            pairs = window * (window + 1) // 2 + (q - window) * window
        else:
            pairs = q * (q + 1) // 2
    else:
        pairs = q * total
    return total, first, last, pairs


def _block_prefix(n: int, topk: int, block: int) -> int:
    """Σ keys(p) over the query positions p < n under block-sparse attention: a query at p reads every key up to
    it while p < topk · block, then the topk − 1 full blocks its indexer chose and its own block up to itself,
    (topk − 1) · block + p mod block + 1 keys."""
    t = topk * block
    if n <= t:
        return n * (n + 1) // 2
    m = n - t
    f, r = divmod(m, block)
    return t * (t + 1) // 2 + m * ((topk - 1) * block + 1) + f * block * (block - 1) // 2 + r * (r - 1) // 2


def _block_keys(topk: int, block: int, run: _Run) -> tuple[int, int, int, int]:
    """:func:`_keys` for MiniMax-M3's block-sparse layers as its kernel runs them: each query reads the topk blocks
    of ``block`` keys its indexer kept (its own block, cut at itself, among them: index_local_blocks ≥ 1). A prefill
    step's keys are all read (the queries' blocks together cover them); its pairs and a decode step's keys are
    each query's own."""
    q, c0 = run.queries, run.cached
    if q > 1 and not run.tri:  # every query against every key: no causal order to pick blocks in
        return _keys(0, run)

    def keys(p: int) -> int:
        return p + 1 if p < topk * block else (topk - 1) * block + p % block + 1

    if run.tri:  # one prefill step: the queries at positions c0 … c0 + q − 1
        if run.steps != 1:
            return _keys(0, run)
        return q + c0, q + c0, q + c0, _block_prefix(c0 + q, topk, block) - _block_prefix(c0, topk, block)
    c1 = c0 + run.steps - 1
    total = _block_prefix(c1 + 1, topk, block) - _block_prefix(c0, topk, block)
    return total, keys(c0), keys(c1), total


def _qsa_prefix(n: int, topk: int, block: int) -> int:
    """Σ keys(p) over the query positions p < n under Qwen4-Exp's QSA: a query at p reads every key up to it while it
    sees at most topk complete blocks, then the topk blocks its indexer chose and the (p + 1) mod block keys of its
    incomplete one."""
    t = (topk + 1) * block - 1  # the positions that see every key
    if n <= t:
        return n * (n + 1) // 2
    m = n - t
    f, r = divmod(m, block)
    return t * (t + 1) // 2 + m * topk * block + f * block * (block - 1) // 2 + r * (r - 1) // 2


def _qsa_keys(topk: int, block: int, run: _Run) -> tuple[int, int, int, int]:
    """:func:`_keys` for QSA's kernel (:func:`_block_keys`' counterpart): a prefill step reads every key, each query
    its own; a decode step's query its chosen blocks and its incomplete one."""
    q, c0 = run.queries, run.cached
    if q > 1 and not run.tri or run.tri and run.steps != 1:
        return _keys(0, run)

    def keys(p: int) -> int:
        return _qsa_prefix(p + 1, topk, block) - _qsa_prefix(p, topk, block)

    if run.tri:
        return q + c0, q + c0, q + c0, _qsa_prefix(c0 + q, topk, block) - _qsa_prefix(c0, topk, block)
    c1 = c0 + run.steps - 1
    total = _qsa_prefix(c1 + 1, topk, block) - _qsa_prefix(c0, topk, block)
    return total, keys(c0), keys(c1), total


def _pooled_blocks(first: int, last: int, block: int) -> int:
    """Σ ⌊(p + 1) / block⌋ over the query positions p = first … last: the complete blocks each query's QSA indexer
    scores."""
    def upto(n: int) -> int:  # Σ ⌊x / block⌋ for x = 0 … n
        q, r = divmod(n + 1, block)
        return block * q * (q - 1) // 2 + q * r
    return upto(last + 1) - upto(first) if last >= first else 0


def _linear(name: str, phase: str, *, m: int, k: int, n: int, runs: int, weight_reads: int,
            w_bytes: float, sz: _Sizes, note: str = "", weight_copies: int = 1, routed: bool = False,
            kernels: int | None = None) -> Op:
    """A weight GEMM: [m, k] @ [k, n], run ``runs`` times in ``kernels`` launches (default: one per run),
    its weights (``w_bytes``, one copy) read ``weight_reads`` times.

    ``weight_copies`` is how many distinct weight matrices each read touches (MoE experts reached).
    """
    w = w_bytes * weight_copies * weight_reads
    # weights stored at 16 bits or more (2 bytes per element, less the bias) where the checkpoint's format quantizes the
    # other linears: this GEMM multiplies in 16 bits, its input uncast (engines run an unquantized linear as it is)
    wide = sz.keeps_wide and w_bytes >= 2 * k * n
    a = (m * k * (sz.a if wide else sz.a_in) + m * n * sz.a) * runs
    return Op(name, phase, m, n, k, runs, 2 * m * n * k * runs, w, a, 0.0, note, routed=routed,
              kernels=runs if kernels is None else kernels, wide=wide)


def _groups(cfg: ModelConfig) -> list[tuple[str, str, int]]:
    """(attention kind, MLP kind, layers) for each distinct kind of layer that runs on text, in first-seen order (a
    cross-attention layer, X, runs only with an image; a looped layer runs once per pass)."""
    counts: dict[tuple[str, str], int] = {}
    for a, m in zip(cfg.executed_attention_kinds, cfg.executed_mlp_kinds, strict=True):
        if a != "X":
            counts[(a, m)] = counts.get((a, m), 0) + 1
    return [(a, m, n) for (a, m), n in counts.items()]


def _floor_sum(n: int, rate: int, cap: int = 0) -> int:
    """Σ min(cap, ⌊t / rate⌋) for t = 1 .. n (no cap when cap is 0): the compressed entries queries 0 .. n − 1 may
    see, summed."""
    if n <= 0:
        return 0
    if cap and n >= cap * rate:
        return _floor_sum(cap * rate - 1, rate) + cap * (n - cap * rate + 1)
    k = n // rate
    return rate * k * (k - 1) // 2 + k * (n - k * rate + 1)


def _compressed_keys(rate: int, cap: int, run: _Run) -> tuple[int, int, int, int]:
    """DeepSeek-V4: (compressed entries summed over steps, those of the first step, of the last, query-entry pairs
    summed) per layer, sequence and head. A query at position p sees the ⌊(p + 1) / rate⌋ entries of the windows
    closed before it, at most ``cap`` (the indexer's top-k in a sparse kernel; 0: no cap); without ``tri`` (eager)
    every query of a step multiplies every entry the cache holds after the step, ⌊(c + q) / rate⌋."""
    q, c0 = run.queries, run.cached
    c1 = c0 + run.steps - 1

    def seen(t: int) -> int:
        e = t // rate
        return min(e, cap) if cap else e

    if run.tri:  # queries at positions c0 .. c0 + q − 1, each its own causal share
        pairs = _floor_sum(c0 + q, rate, cap) - _floor_sum(c0, rate, cap)
        return seen(c0 + q), seen(c0 + q), seen(c0 + q), pairs
    total = _floor_sum(c1 + q, rate, cap) - _floor_sum(c0 + q - 1, rate, cap)  # Σ over steps of seen(c + q)
    return total, seen(c0 + q), seen(c1 + q), q * total


def _compressed_attention_ops(cfg: ModelConfig, wl: Workload, sz: _Sizes, run: _Run, *, akind: str, mkind: str,
                              layers: int) -> list[Op]:
    """DeepSeek-V4's attention in ``layers`` layers of one kind (S sliding, A compressed sparse, H heavily
    compressed): the query latent and its heads, the one key/value head, the compressor's projections (an A layer's
    lightning indexer too), the products over the window's keys and the compressed entries, the grouped output
    projection. transformers' eager code multiplies every query by every key of the prompt and every compressed
    entry (the window, the causality of the entries and the indexer's choice applied as masks: what FlopCounterMode
    counts); an engine's kernels read the band of the window and, in an A layer, only the indexer's top-k entries."""
    b, h, d, hd = wl.batch, cfg.heads, cfg.hidden, cfg.head_dim
    rq, g, ro = cfg.q_lora_rank, cfg.o_groups, cfg.o_lora_rank
    runs = layers * run.steps
    tokens = run.tokens
    lin = dict(phase=run.phase, runs=runs, weight_reads=runs, sz=sz)
    ops = [_linear("q_a_proj", m=tokens, k=d, n=rq, w_bytes=sz.w("q_a_proj", mkind), **lin),
           _linear("q_b_proj", m=tokens, k=rq, n=cfg.q_dim, w_bytes=sz.w("q_b_proj", mkind), **lin),
           _linear("kv_proj", m=tokens, k=d, n=hd, w_bytes=sz.w("kv_proj", mkind),
                   note=Text(N_("one head of keys that are the values too, read by every query head")), **lin)]
    rate = {"A": cfg.csa_rate, "H": cfg.hca_rate}.get(akind, 0)
    if akind == "H":
        for name in ("hca_kv", "hca_gate"):
            ops.append(_linear(name, m=tokens, k=d, n=hd, w_bytes=sz.w(name, mkind),
                               note=Text(N_("the compressor: one entry per {rate} tokens"), rate=rate), **lin))
    if akind == "A":
        for name in ("csa_kv", "csa_gate"):
            ops.append(_linear(name, m=tokens, k=d, n=2 * hd, w_bytes=sz.w(name, mkind),
                               note=Text(N_("the compressor: one entry per {rate} tokens from windows of {width} "
                                            "overlapping by half"), rate=rate, width=2 * rate), **lin))
        hi, di = cfg.index_heads, cfg.index_head_dim
        for name, k, n, note in (
                ("index_kv", d, 2 * di, N_("the indexer's own compressor (its keys)")),
                ("index_gate", d, 2 * di, N_("the indexer's own compressor (its gates)")),
                ("index_q", rq, hi * di, N_("indexer queries from the query latent")),
                ("index_weights", d, hi, N_("a weight per indexer head and token (weights_proj)"))):
            ops.append(_linear(name, m=tokens, k=k, n=n, w_bytes=sz.w(name, mkind), note=Text(note), **lin))
        i_total, i_first, i_last, i_pairs = _compressed_keys(rate, 0, replace(run, tri=run.tri and
                                                                               wl.attention == "fused"))
        count = layers * b * run.steps
        # eager: every head's fp32 scores through memory; a kernel sums the heads on chip and writes one per entry
        scores_per_pair = (hi if wl.attention == "eager" else 1) * 4
        ops.append(Op("index_scores", run.phase, run.queries * hi, i_first, di, count, 2 * di * hi * layers * b * i_pairs,
                      0.0, count * run.queries * hi * di * sz.a + layers * b * i_pairs * scores_per_pair,
                      layers * b * i_total * di * sz.kv,
                      Text(N_("per layer and sequence: every indexer head's query against every compressed indexer "
                              "key it may see")),
                      n_last=i_last if run.phase == "decode" and i_last != i_first else None, kernels=runs))
    sparse = akind == "A" and wl.attention == "fused"  # the kernel reads only the indexer's top-k entries
    w_total, w_first, w_last, w_pairs = _keys(cfg.sliding_window, run)
    c_total, c_first, c_last, c_pairs = (_compressed_keys(rate, cfg.index_topk if sparse else 0, run) if rate
                                         else (0, 0, 0, 0))
    first, last = w_first + c_first, w_last + c_last
    pairs, keys = layers * b * h * (w_pairs + c_pairs), layers * b * (w_total + c_total)
    att_runs = layers * b * h * run.steps
    score_io = pairs * sz.a if wl.attention == "eager" else 0.0
    extra = [Text(N_("sliding window {window}: at most {keys} cached keys"), window=cfg.sliding_window,
                  keys=cfg.sliding_window - 1)]
    if akind == "H":
        extra.append(Text(N_("and every compressed entry (one per {rate} tokens)"), rate=rate))
    if akind == "A":
        extra.append(Text(N_("and the indexer's top {k} compressed entries (one per {rate} tokens)"),
                          k=cfg.index_topk, rate=rate) if sparse else
                     Text(N_("and every compressed entry (one per {rate} tokens), the indexer's choice applied as a "
                             "mask"), rate=rate))
    if run.phase == "decode":
        extra.append(Text(N_("keys grow by one per decode step")))
    if wl.attention == "fused":
        extra.append(Text(N_("fused: the scores stay on chip")))
    note = Text.joined([Text(N_("per layer, sequence and query head")), *extra])
    suffix = "_compressed" if rate else "_sliding"
    kl = last if run.phase == "decode" and last != first else None
    q_io, o_io = att_runs * run.queries * hd * sz.a, att_runs * run.queries * hd * sz.a
    ops.append(Op("attn_scores" + suffix, run.phase, run.queries, first, hd, att_runs, 2 * hd * pairs, 0.0,
                  q_io + score_io, keys * hd * sz.kv, note, n_last=kl, kernels=runs))
    ops.append(Op("attn_values" + suffix, run.phase, run.queries, hd, first, att_runs, 2 * hd * pairs, 0.0,
                  score_io + o_io, keys * hd * sz.kv, note, k_last=kl,
                  kernels=0 if wl.attention == "fused" else runs))
    ops.append(_linear("o_a_proj", phase=run.phase, m=tokens, k=cfg.q_dim // g, n=ro, runs=runs * g,
                       weight_reads=runs, w_bytes=sz.w("o_a_proj", mkind) / g, weight_copies=g, sz=sz, kernels=runs,
                       note=Text(N_("the grouped output projection: {g} groups of {n} heads, each to {r}"),
                                 g=g, n=h // g, r=ro)))
    ops.append(_linear("o_b_proj", m=tokens, k=g * ro, n=d, w_bytes=sz.w("o_b_proj", mkind),
                       note=Text(N_("the groups' outputs mixed back to the hidden width")), **lin))
    return ops


def _hyper_ops(cfg: ModelConfig, wl: Workload, run: _Run, *, layers: int) -> list[Op]:
    """Manifold-constrained hyper-connections in ``layers`` layers (DeepSeek-V4): before the attention and before the
    MLP, the n streams (normed, flattened) projected to the (2 + n)·n mixing weights, and the n × n mix of the streams
    for every token. The weights are fp32 (transformers keeps them so)."""
    n, d, sz = cfg.hyper_streams, cfg.hidden, _Sizes(cfg, wl)
    runs = 2 * layers * run.steps
    if cfg.hyper_gate_rank:  # Qwen4-Exp: the normed streams gated through rank r, and the output's injection weights
        r, lin = cfg.hyper_gate_rank, dict(phase=run.phase, runs=runs, weight_reads=runs, sz=sz)
        note = Text(N_("gated hyper-connections before the attention and the MLP: the {n} streams' gate through rank "
                       "{r}, and the weights that inject the output into each stream"), n=n, r=r)
        return [_linear("hc_gate_down", m=run.tokens, k=n * d, n=r, w_bytes=n * d * r * sz.el, note=note, **lin),
                _linear("hc_gate_up", m=run.tokens, k=r, n=n * d, w_bytes=n * d * r * sz.el, note=note, **lin),
                _linear("hc_inject", m=run.tokens, k=n * d, n=n, w_bytes=n * d * n * sz.el, note=note, **lin)]
    per = cfg.hyper_weights
    ops = [_linear("hc_pre", phase=run.phase, m=run.tokens, k=n * d, n=per, runs=runs, weight_reads=runs,
                   w_bytes=per * n * d * 4.0, sz=sz,
                   note=Text(N_("hyper-connections: the {n} streams to their mixing weights, before the attention and "
                                "the MLP"), n=n))]
    if not cfg.hyper_mix:  # HY-V4's iHC: the streams collapsed and expanded, never mixed by a matrix
        return ops
    rows = runs * run.tokens
    ops.append(Op("hc_mix", run.phase, n, d, n, rows, 2 * n * n * d * rows, 0.0, 2 * rows * n * d * sz.a, 0.0,
                  Text(N_("hyper-connections: each token's {n} streams mixed by its {n} × {n} weights"), n=n),
                  kernels=runs))
    return ops


def _attn_res_ops(cfg: ModelConfig, wl: Workload, *, phase: str, rows: int, steps: int) -> list[Op]:
    """Inkling 2's block attention residuals, every layer's and the final one together: each input's learned queries
    scored against the stacked block states and the running state (an unweighted norm over them), and the softmax
    times those states — two matmuls FlopCounterMode counts, 2 · hidden per query and state each."""
    pairs, states, calls = cfg.attn_res_pairs()
    if not pairs:
        return []
    sz, h = _Sizes(cfg, wl), cfg.hidden
    runs = steps * calls
    ops = [Op("attn_res", phase, rows, max(1, round(states / calls)), h, runs, 4 * h * pairs * rows * steps,
              cfg.attn_res_queries * h * 4.0 * steps, states * rows * steps * h * sz.a, 0.0,
              Text(N_("block attention residuals: each layer's inputs attend over the block states, every {b} layers "
                      "one"), b=cfg.attn_res_block), kernels=runs)]
    if cfg.loop_gates:  # Inkling-2-Mini: each message gate, [input; message] → rank r → a forget and a message gate
        r, g = cfg.loop_gate_rank, cfg.loop_gates * steps
        note = Text(N_("a looped layer's message gates, from the second of {n} passes: its q, k, v and MLP inputs each "
                       "mixed with the previous pass's message"), n=cfg.loop_passes)
        lin = dict(runs=g, weight_reads=g, sz=sz, note=note)
        ops += [_linear("loop_gate_down", phase, m=rows, k=2 * h, n=r, w_bytes=2 * h * r * sz.el, **lin),
                _linear("loop_gate_up", phase, m=rows, k=r, n=2 * h, w_bytes=2 * r * h * 4.0, **lin)]
    return ops


def _hyper_head(cfg: ModelConfig, wl: Workload, *, phase: str, rows: int, steps: int) -> list[Op]:
    """The hyper-connections' last projection: the n streams to one before the final norm (every position)."""
    n = cfg.hyper_streams
    if not n or cfg.hyper_mean_head:  # (GLM-5-Next's last collapse: a plain mean, element-wise)
        return []
    if cfg.hyper_gate_rank:  # Qwen4-Exp's last one: the streams normed and gated into one (its final norm)
        sz, r, w = _Sizes(cfg, wl), cfg.hyper_gate_rank, n * cfg.hidden
        note = Text(N_("gated hyper-connections: the {n} streams gated into one before the LM head"), n=n)
        lin = dict(runs=steps, weight_reads=steps, w_bytes=w * r * sz.el, sz=sz, note=note)
        return [_linear("hc_head_down", phase, m=rows, k=w, n=r, **lin),
                _linear("hc_head_up", phase, m=rows, k=r, n=w, **lin)]
    return [_linear("hc_head", phase, m=rows, k=n * cfg.hidden, n=n, runs=steps, weight_reads=steps,
                    w_bytes=n * n * cfg.hidden * 4.0, sz=_Sizes(cfg, wl),
                    note=Text(N_("hyper-connections: the {n} streams to one before the final norm"), n=n))]


def _attention_ops(cfg: ModelConfig, wl: Workload, sz: _Sizes, run: _Run, *, akind: str, mkind: str,
                   layers: int) -> list[Op]:
    """Projections and products of ``layers`` layers of one kind."""
    if cfg.compressed_attention:
        return _compressed_attention_ops(cfg, wl, sz, run, akind=akind, mkind=mkind, layers=layers)
    b, h, d = wl.batch, cfg.heads, cfg.hidden
    hd, dv = cfg.head_dim, cfg.v_head_dim
    runs = layers * run.steps
    tokens = run.tokens
    w = cfg.window_of(akind)
    # a DSA kernel reads only the indexer's top-k keys per query (a sliding layer beside it, Dots 3 Note's, its window)
    sparse = cfg.is_dsa and wl.attention == "fused" and not w
    # a block-sparse kernel (MiniMax-M3) reads the top-k blocks of an I layer's indexer; eager attends to every key
    blocks = cfg.is_block_sparse and akind == "I" and wl.attention == "fused"
    block_keys = _qsa_keys if cfg.index_mean_pool else _block_keys
    sum_keys, first, last, pairs = (block_keys(cfg.index_topk, cfg.index_block, run) if blocks else
                                    _qsa_keys(cfg.index_topk // cfg.index_kpool, cfg.index_kpool, run)
                                    if sparse and cfg.index_kpool else _keys(cfg.index_topk if sparse else w, run))
    suffix = "_sliding" if w else "_sparse" if blocks else ""
    absorbed = cfg.is_mla and wl.mla == "absorbed" and run.phase == "decode"
    lin = dict(phase=run.phase, runs=runs, weight_reads=runs, sz=sz)
    ops: list[Op] = []
    if cfg.is_mla:
        rq, rkv, dr = cfg.q_lora_rank, cfg.kv_lora_rank, cfg.rope_head_dim
        if rq:
            ops.append(_linear("q_a_proj", m=tokens, k=d, n=rq, w_bytes=sz.w("q_a_proj", mkind), **lin))
            if cfg.q_gate_latent:  # A.X-K2: the queries and the output gate from the latent and its norm
                ops.append(_linear("q_gate_proj", m=tokens, k=2 * rq, n=cfg.q_dim + cfg.o_dim,
                                   w_bytes=sz.w("q_gate_proj", mkind), **lin,
                                   note=Text(N_("the queries and a gate per element of the attention output, from the "
                                                "query latent and its norm"))))
            else:
                ops.append(_linear("q_b_proj", m=tokens, k=rq, n=cfg.q_dim, w_bytes=sz.w("q_b_proj", mkind), **lin))
        else:
            ops.append(_linear("q_proj", m=tokens, k=d, n=cfg.q_dim, w_bytes=sz.w("q_proj", mkind), **lin))
        if not cfg.kv_reused:  # (Mistral Large 4: a layer reading an earlier layer's latent projects none)
            ops.append(_linear("kv_a_proj", m=tokens, k=d, n=rkv + dr, w_bytes=sz.w("kv_a_proj", mkind),
                               note=Text(N_("the compressed latent and the rotary key of the new tokens")) if dr else
                               Text(N_("the compressed latent of the new tokens (no rotary key in this layer)")), **lin))
        if akind in INDEXER_LETTERS:  # a DSA layer with its own indexer (the others reuse an earlier layer's top-k)
            ops += _indexer_ops(cfg, wl, sz, run, mkind=mkind, layers=layers)
    else:
        for name, n in (("q_proj", cfg.q_proj_width), ("k_proj", cfg.k_proj_width), ("v_proj", cfg.v_proj_width)):
            if not n:  # Gemma 4: the keys are the values too, or the layer reuses an earlier layer's K/V
                continue
            if cfg.attn_experts and name == "q_proj":  # JetMoE: each token's k attention experts make its queries
                ops += _attn_expert_ops(cfg, sz, run, mkind=mkind, layers=layers, out=False)
                continue
            note = Text(N_("in one fused q|k|v matrix")) if cfg.fused_qkv else ""
            if name == "k_proj" and cfg.k_eq_v:
                note = Text(N_("the keys, which are the values too (no v_proj)"))
            if name == "q_proj" and cfg.kv_reused:
                note = Text(N_("the layers that reuse an earlier layer's keys and values project queries only"))
            if name == "q_proj" and cfg.attn_output_gate:
                note = Text(N_("the queries and a sigmoid gate on the attention output"))
            ops.append(_linear(name, m=tokens, k=cfg.attn_in, n=n, w_bytes=sz.w(name, mkind), note=note, **lin))
        if cfg.cca_depthwise:
            ops += _cca_ops(cfg, wl, sz, run, layers=layers)
        if cfg.short_conv and cfg.dynamic_kv_conv and akind == "F":  # Inkling 2: taps per token (the filter itself is
            # element-wise work, _other_group_ops)
            ops.append(_linear("kv_conv_taps", m=tokens, k=d, n=2 * cfg.kv_heads * cfg.short_conv,
                               w_bytes=sz.w("kv_conv_taps", mkind), **lin,
                               note=Text(N_("the keys' and the values' convolution taps of each token, per KV head"))))
        elif cfg.short_conv:
            ops.append(_short_conv_op("kv_conv", cfg, wl, run, sz, channels=2 * cfg.kv_dim, layers=layers,
                                      what=Text(N_("the keys and the values"))))
        if cfg.rel_bias:
            ops += _rel_bias_ops(cfg, wl, sz, run, akind=akind, mkind=mkind, layers=layers)
        if cfg.sink_proj:
            ops.append(_linear("sink_proj", m=tokens, k=d, n=h, w_bytes=sz.w("sink_proj", mkind), **lin,
                               note=Text(N_("a sink logit per head from each token"))))
        if akind == "I" and cfg.is_block_sparse:
            ops += _indexer_ops(cfg, wl, sz, run, mkind=mkind, layers=layers)
    calls = cfg.attn_calls  # DiffLlama: each head's queries against its keys twice, once per half of the values
    pair_total = layers * b * h * pairs * calls
    score_io = pair_total * sz.a if wl.attention == "eager" else 0.0
    extra: list[str] = []  # what every attention product's note adds
    if calls > 1:
        extra.append(Text(N_("differential attention: two calls per head with the same queries and keys, each against "
                             "half of the value heads")))
    if run.phase == "decode":
        extra.append(Text(N_("keys grow by one per decode step")))
    if w:
        extra.append(Text(N_("sliding window {window}: at most {keys} cached keys (eager prefill stays dense, "
                             "masked afterwards)"), window=w, keys=w - 1) if run.phase == "prefill" else
                     Text(N_("sliding window {window}: at most {keys} cached keys"), window=w, keys=w - 1))
    if wl.attention == "fused":
        extra.append(Text(N_("fused: the scores stay on chip")))
    if sparse and cfg.index_kpool:
        extra.append(Text(N_("DeepSeek Sparse Attention over pools: at most the indexer's top {n} pools of {b} keys per "
                             "query and the keys of its incomplete pool"), n=cfg.index_topk // cfg.index_kpool,
                          b=cfg.index_kpool))
    elif sparse:
        extra.append(Text(N_("DeepSeek Sparse Attention: at most the indexer's top {k} keys per query"),
                          k=cfg.index_topk))
    elif cfg.is_dsa and not w:
        extra.append(Text(N_("eager: every key, the indexer's choice applied as a mask")))
    if blocks and cfg.index_mean_pool:
        extra.append(Text(N_("QSA: at most the indexer's top {k} complete blocks of {b} keys per query and the keys of "
                             "its incomplete block"), k=cfg.index_topk, b=cfg.index_block))
    elif blocks:
        extra.append(Text(N_("block-sparse attention: at most the indexer's top {k} blocks of {b} keys per query"),
                          k=cfg.index_topk, b=cfg.index_block))
    elif cfg.is_block_sparse and akind == "I":
        extra.append(Text(N_("eager: every key, the indexer's blocks applied as a mask")))
    kl = last if run.phase == "decode" and last != first else None
    if absorbed:
        # vLLM / SGLang / FlashMLA: W_UK folded into the query, W_UV into the output; all heads share the latent.
        rkv, dr, dn = cfg.kv_lora_rank, cfg.rope_head_dim, cfg.nope_head_dim
        kvb = sz.w("kv_b_proj", mkind)
        h_runs = layers * h * run.steps
        ops.append(_linear("q_absorb", phase=run.phase, m=b, k=dn, n=rkv, runs=h_runs, weight_reads=runs,
                           w_bytes=kvb * dn / (dn + dv) / h, weight_copies=h, sz=sz, kernels=runs,
                           note=Text(N_("per head: q_nope · W_UK (kv_b_proj's key rows)"))))
        s_runs = layers * b * run.steps
        keys_total = layers * b * sum_keys
        ops.append(Op("attn_scores", run.phase, h, first, rkv + dr, s_runs, 2 * (rkv + dr) * h * layers * b * sum_keys,
                      0.0, s_runs * h * (rkv + dr) * sz.a + (h * keys_total * sz.a if wl.attention == "eager" else 0),
                      keys_total * (rkv + dr) * sz.kv,
                      Text.joined([Text(N_("per layer and sequence: every head against the shared latent + rotary "
                                           "key")), *extra]),
                      n_last=kl, kernels=runs))
        ops.append(Op("attn_values", run.phase, h, rkv, first, s_runs, 2 * rkv * h * layers * b * sum_keys,
                      0.0, (h * keys_total * sz.a if wl.attention == "eager" else 0) + s_runs * h * rkv * sz.a,
                      keys_total * rkv * sz.kv,
                      Text.joined([Text(N_("per layer and sequence: probabilities · latent")), *extra]),
                      k_last=kl, kernels=0 if wl.attention == "fused" else runs))
        ops.append(_linear("o_absorb", phase=run.phase, m=b, k=rkv, n=dv, runs=h_runs, weight_reads=runs,
                           w_bytes=kvb * dv / (dn + dv) / h, weight_copies=h, sz=sz, kernels=runs,
                           note=Text(N_("per head: latent output · W_UV (kv_b_proj's value rows)"))))
    else:
        kv_read_k = layers * b * cfg.kv_heads * sum_keys * hd * sz.kv * calls
        kv_read_v = layers * b * cfg.kv_heads * sum_keys * dv * sz.kv * calls
        if cfg.is_mla:
            rkv, dr = cfg.kv_lora_rank, cfg.rope_head_dim
            keys_rows = b * sum_keys  # cached + new latents of every sequence, summed over steps
            out_w = h * (cfg.nope_head_dim + dv)
            ops.append(Op("kv_b_proj", run.phase, b * first, out_w, rkv, runs, 2 * keys_rows * out_w * rkv * layers,
                          sz.w("kv_b_proj", mkind) * runs, layers * keys_rows * out_w * sz.a,
                          layers * keys_rows * rkv * sz.kv,
                          Text.joined([Text(N_("eager MLA: decompresses every cached latent to keys and values, "
                                               "every step")),
                                       Text(N_("rows grow by one per step and sequence")) if run.phase == "decode"
                                       else ""]),
                          n_last=None, kernels=runs))
            kv_read_k = layers * b * sum_keys * dr * sz.kv + layers * b * h * sum_keys * hd * sz.a
            kv_read_v = layers * b * h * sum_keys * dv * sz.a
        att_runs = layers * b * h * run.steps * calls
        q_io = att_runs * run.queries * hd * sz.a
        o_io = att_runs * run.queries * dv * sz.a
        note = Text.joined([Text(N_("per layer, sequence and query head")), *extra])
        ops.append(Op("attn_scores" + suffix, run.phase, run.queries, first, hd, att_runs, 2 * hd * pair_total,
                      0.0, q_io + score_io, kv_read_k, note, n_last=kl, kernels=runs))
        ops.append(Op("attn_values" + suffix, run.phase, run.queries, dv, first, att_runs, 2 * dv * pair_total,
                      0.0, score_io + o_io, kv_read_v, note, k_last=kl,
                      kernels=0 if wl.attention == "fused" else runs))
    if cfg.gate_proj_width:  # LFM3, Laguna: a gate on the attention output from the layer's input
        ops.append(_linear("attn_gate", m=tokens, k=d, n=cfg.gate_proj_width, w_bytes=sz.w("attn_gate", mkind),
                           note=Text(N_("a gate per head on the attention output")) if cfg.attn_gate == "head" else
                           Text(N_("a gate per element on the attention output")), **lin))
    if cfg.attn_experts:
        ops += _attn_expert_ops(cfg, sz, run, mkind=mkind, layers=layers, out=True)
    else:
        ops.append(_linear("o_proj", m=tokens, k=cfg.o_dim, n=d, w_bytes=sz.w("o_proj", mkind), **lin))
    if cfg.short_conv:
        ops.append(_short_conv_op("attn_conv", cfg, wl, run, sz, channels=d, layers=layers,
                                  what=Text(N_("the attention's output"))))
    return ops


def _attn_expert_ops(cfg: ModelConfig, sz: _Sizes, run: _Run, *, mkind: str, layers: int, out: bool) -> list[Op]:
    """JetMoE's mixture of attention heads in ``layers`` layers: before the attention its router and each token's k
    experts' query projections (kv_heads × head_dim each, the token's k × kv_heads query heads); after it (``out``) the
    same experts' output projections, weighted and summed. Only the experts the step's tokens reach are read."""
    e, k, kvd, d, runs = cfg.attn_experts, cfg.experts_per_token, cfg.kv_dim, cfg.hidden, layers * run.steps
    reached = min(e, run.tokens * k)
    note = Text(N_("attention experts: each token through {k} of {experts} (count = layers × {k}); weights of "
                   "{reached} experts read"), k=k, experts=e, reached=reached)
    lin = dict(phase=run.phase, m=run.tokens, runs=runs * k, weight_reads=runs, weight_copies=reached, sz=sz,
               kernels=runs, note=note)
    if out:
        return [_linear("o_proj", k=kvd, n=d, w_bytes=sz.w("o_proj", mkind), **lin)]
    return [_linear("attn_router", run.phase, m=run.tokens, k=d, n=e, runs=runs, weight_reads=runs,
                    w_bytes=sz.w("attn_router", mkind), sz=sz,
                    note=Text(N_("per layer: scores every attention expert for every token"))),
            _linear("q_proj", k=d, n=kvd, w_bytes=sz.w("q_proj", mkind), **lin)]


def _cca_ops(cfg: ModelConfig, wl: Workload, sz: _Sizes, run: _Run, *, layers: int) -> list[Op]:
    """ZAYA's compressed convolutional attention in ``layers`` layers: the q|k channels through a depthwise causal
    convolution (its output grouped-kernel − 1 positions longer than the new tokens, the grouped one's input) and a
    convolution grouped by head (head_dim inputs per output), each as FlopCounterMode counts a convolution (both
    conventions compute these lengths); their state, (depthwise − 1) + (grouped − 1) inputs of each channel, and the
    delayed values' last projection read and written. transformers' prefill also projects a zero row to start the
    delayed values (reference convention only)."""
    c, t0, t1, hd = cfg.cca_channels, cfg.cca_depthwise, cfg.cca_grouped, cfg.head_dim
    runs, b, q = layers * run.steps, wl.batch, run.queries
    state = 2 * b * cfg.cca_state() * runs * sz.kv
    note = Text(N_("compressed convolutional attention: the queries' and keys' {c} channels through a depthwise "
                   "convolution of {t0} taps, then one grouped by head of {t1}"), c=c, t0=t0, t1=t1)
    ops = [Op("cca_conv_depthwise", run.phase, b, c, t0, runs, 2 * b * (q + t1 - 1) * c * t0 * runs,
              c * (t0 + 1) * sz.el * runs, 2 * run.tokens * c * sz.a * runs, state, note, kernels=runs),
           Op("cca_conv_grouped", run.phase, b * q, c, hd * t1, runs, 2 * b * q * c * hd * t1 * runs,
              c * (hd * t1 + 1) * sz.el * runs, 2 * run.tokens * c * sz.a * runs, 0.0, note, kernels=runs)]
    if run.phase == "prefill" and not run.cached and not _engine_convention(wl):
        ops.append(_linear("cca_v_init", run.phase, m=b, k=cfg.hidden, n=cfg.kv_dim // 2, runs=runs, weight_reads=runs,
                           w_bytes=sz.w("v_proj", "M") / 2, sz=sz,
                           note=Text(N_("transformers projects a zero row to start each sequence's delayed values"))))
    return ops


def _short_conv_op(name: str, cfg: ModelConfig, wl: Workload, run: _Run, sz: _Sizes, *, channels: int, layers: int,
                   what: str) -> Op:
    """Inkling's depthwise causal convolution of ``channels`` channels in ``layers`` layers, counted as FlopCounterMode
    counts a convolution (2 · batch · output positions · kernel · channels) with transformers' output length (t + k − 1
    in a prefill, 2 in a decode step: the k cached inputs and the new one) or an engine's (the new tokens); its state,
    the last k (engine: k − 1) inputs of each channel, is read and written in fp32."""
    k, t, engine = cfg.short_conv, run.queries, _engine_convention(wl)
    out_len = t if engine else (t + 1 if run.phase == "decode" else t + k - 1)
    runs = layers * run.steps
    state = 2 * wl.batch * channels * (k - 1 if engine else k) * runs * 4
    note = Text(N_("depthwise causal convolution of width {k} over {what}, with a residual (fp32): {n} output "
                   "positions per sequence"), k=k, what=what, n=out_len)
    return Op(name, run.phase, wl.batch, channels, k, runs, 2 * wl.batch * out_len * k * channels * runs,
              channels * k * 4 * runs, 2 * run.tokens * channels * sz.a * runs, state, note, kernels=runs)


def _rel_bias_ops(cfg: ModelConfig, wl: Workload, sz: _Sizes, run: _Run, *, akind: str, mkind: str,
                  layers: int) -> list[Op]:
    """Inkling's relative attention bias in ``layers`` layers: r_proj makes rel_bias relative states per head and token,
    and each head's states times the layer's [rel_bias, extent] bank give one bias per backward distance (a matmul
    FlopCounterMode counts; the gather to each key and the add are element-wise)."""
    runs = layers * run.steps
    h, r, extent = cfg.heads, cfg.rel_bias, cfg.rel_extent_of(akind)
    rows = run.tokens * h
    proj = _linear("rel_proj", run.phase, m=run.tokens, k=cfg.hidden, n=h * r, runs=runs, weight_reads=runs,
                   w_bytes=sz.w("rel_proj", mkind), sz=sz,
                   note=Text(N_("the relative states: {r} per head and token"), r=r))
    logits = Op("rel_logits", run.phase, rows, extent, r, runs, 2 * rows * extent * r * runs, r * extent * sz.el * runs,
                (rows * r + rows * extent) * sz.a * runs, 0.0,
                Text(N_("each head's relative states times the layer's bank: a bias for each of {n} backward distances"),
                     n=extent), kernels=runs)
    return [proj, logits]


def _indexer_ops(cfg: ModelConfig, wl: Workload, sz: _Sizes, run: _Run, *, mkind: str, layers: int) -> list[Op]:
    """A lightning indexer in ``layers`` layers: its projections, then every query's score against every key it may
    see, each of ``index_heads`` heads a dot product over ``index_head_dim``. DeepSeek-V3.2's takes its queries from
    MLA's query latent and sums the heads' scores per key, weighted per token; MiniMax-M3's block indexer takes them
    from the hidden state and max-pools each head's fp32 scores over blocks of ``index_block`` keys (no multiply).
    transformers' eager code multiplies the whole S × T block (the causal mask is added after: what FlopCounterMode
    counts); an engine's kernel scores only the keys each query may see (causal)."""
    b, d, rq = wl.batch, cfg.hidden, cfg.q_lora_rank
    hi, di = cfg.index_heads, cfg.index_head_dim
    runs = layers * run.steps
    lin = dict(phase=run.phase, runs=runs, weight_reads=runs, sz=sz)
    block = cfg.is_block_sparse
    if block:
        ops = [_linear("index_q", m=run.tokens, k=d, n=hi * di, w_bytes=sz.w("index_q", mkind),
                       note=Text(N_("the block indexer's queries, from the hidden state")), **lin),
               _linear("index_k", m=run.tokens, k=d, n=di, w_bytes=sz.w("index_k", mkind),
                       note=Text(N_("the indexer's one key per token, cached")), **lin)]
    else:
        ops = [_linear("index_q", m=run.tokens, k=d, n=hi * di, w_bytes=sz.w("index_q", mkind),
                       note=Text(N_("indexer queries from the normed hidden state (wq_b)")), **lin)
               if cfg.index_q_from_hidden else
               _linear("index_q", m=run.tokens, k=rq, n=hi * di, w_bytes=sz.w("index_q", mkind),
                       note=Text(N_("indexer queries from MLA's query latent (wq_b)")), **lin),
               _linear("index_k", m=run.tokens, k=d, n=di, w_bytes=sz.w("index_k", mkind),
                       note=Text(N_("the indexer's one key per token (wk), cached")), **lin),
               _linear("index_weights", m=run.tokens, k=d, n=hi, w_bytes=sz.w("index_weights", mkind),
                       note=Text(N_("a weight per indexer head and token (weights_proj)")), **lin)]
    sum_keys, first, last, pairs = _keys(0, replace(run, tri=run.tri and wl.attention == "fused"))
    count = layers * b * run.steps
    kl = last if run.phase == "decode" and last != first else None
    keys_read = layers * b * sum_keys * di * sz.kv
    q_io = count * run.queries * hi * di * sz.a
    if cfg.index_kpool:
        return ops + _pool_indexer_ops(cfg, wl, sz, run, layers=layers, lin=lin, sum_keys=sum_keys, q_io=q_io)
    flops = 2 * di * hi * layers * b * pairs
    if cfg.index_mean_pool:  # QSA: each query against the mean of every complete block it sees (causal in transformers'
        # per-query loop too)
        bl = cfg.index_block
        pooled = _pooled_blocks(run.cached, run.cached + run.queries * run.steps - 1, bl)
        ops.append(Op("index_scores", run.phase, run.queries * hi, max(1, first // bl), di, count,
                      2 * di * hi * layers * b * pooled, 0.0, q_io + layers * b * hi * pooled * 4, keys_read,
                      Text(N_("per layer and sequence: every indexer head's query against the mean of each complete "
                              "block of {b} indexer keys it sees (ReLU, summed over heads), the top {k} blocks kept"),
                           b=bl, k=cfg.index_topk), n_last=None, kernels=runs))
        return ops
    if block:
        # fp32 scores for the top-k: every one written and max-pooled after in eager code, one per block from a kernel
        # that pools as it scores
        scores_io = layers * b * hi * pairs * 4 // (cfg.index_block if wl.attention == "fused" else 1)
        ops.append(Op("index_scores", run.phase, run.queries * hi, first, di, count, flops, 0.0, q_io + scores_io,
                      keys_read, Text(N_("per layer and sequence: every indexer head's query against every cached "
                                         "indexer key, in fp32; the scores max-pooled over blocks of {b} keys, the "
                                         "top {k} blocks kept"), b=cfg.index_block, k=cfg.index_topk),
                      n_last=kl, kernels=runs))
        return ops
    scores_io = layers * b * pairs * 4  # [queries, keys] fp32 index scores, written for the top-k selection
    ops.append(Op("index_scores", run.phase, run.queries * hi, first, di, count, flops, 0.0,
                  q_io, keys_read, Text(N_("per layer and sequence: every indexer head's query against every cached "
                                           "indexer key")), n_last=kl, kernels=runs))
    ops.append(Op("index_reduce", run.phase, run.queries, first, hi, count, 2 * hi * layers * b * pairs, 0.0,
                  scores_io, 0.0, Text(N_("the heads' scores weighted and summed per key: the index score the top-k "
                                          "keys are chosen by")), n_last=kl, kernels=runs))
    return ops


def _pool_indexer_ops(cfg: ModelConfig, wl: Workload, sz: _Sizes, run: _Run, *, layers: int, lin: dict,
                      sum_keys: int, q_io: float) -> list[Op]:
    """GLM-5-Next's indexer over pools of ``index_kpool`` keys: each token's gate scores (hidden → index dim), then
    every query's heads against the complete pools' gated averages (the averaging is element-wise), weighted and
    summed per pool. transformers scores every query against every complete pool of the cache (the causal mask is
    applied after); an engine's kernel only the complete pools each query sees."""
    b, d, hi, di, kp = wl.batch, cfg.hidden, cfg.index_heads, cfg.index_head_dim, cfg.index_kpool
    q, c0 = run.queries, run.cached
    if run.tri and wl.attention == "fused":  # (a decode step's one query sees every complete pool either way)
        pooled = _pooled_blocks(c0, c0 + q * run.steps - 1, kp)
    else:
        pooled = q * _pooled_blocks(c0 + q - 1, c0 + q + run.steps - 2, kp)
    count = layers * b * run.steps
    keys_read = layers * b * sum_keys * 2 * di * sz.kv  # each cached key and its gate scores, pooled as read
    note = Text(N_("per layer and sequence: every indexer head's query against the gated average of each complete "
                   "pool of {b} indexer keys (ReLU, weighted and summed over heads), the top {n} pools kept"),
                b=kp, n=cfg.index_topk // kp)
    return [_linear("index_pool_gate", m=run.tokens, k=d, n=di, w_bytes=d * di * sz.el,
                    note=Text(N_("each token's gate scores for averaging its pool (hidden → index dim), cached")),
                    **lin),
            Op("index_scores", run.phase, q * hi, max(1, (c0 + q) // kp), di, count, 2 * di * hi * layers * b * pooled,
               0.0, q_io, keys_read, note, n_last=None, kernels=layers * run.steps),
            Op("index_reduce", run.phase, q, max(1, (c0 + q) // kp), hi, count, 2 * hi * layers * b * pooled, 0.0,
               layers * b * pooled * 4, 0.0, Text(N_("the heads' pool scores weighted and summed per pool: the index "
                                                     "score the top pools are chosen by")),
               n_last=None, kernels=layers * run.steps)]


def _engine_convention(wl: Workload) -> bool:
    """Whether the hybrids' mixers are counted as an engine's kernels run them (gemmlib.llm.ssm) rather than as
    transformers' eager code does (the reference convention, today's only one: a Workload without a
    ``convention`` is counted as the reference)."""
    return getattr(wl, "convention", "transformers") != "transformers"


def _mixer_ops(cfg: ModelConfig, wl: Workload, sz: _Sizes, run: _Run, *, mkind: str, layers: int) -> list[Op]:
    """The linear-attention / state-space mixer of ``layers`` layers (gemmlib.llm.ssm), as Ops: its GEMMs (and
    the convolution FlopCounterMode counts) and its element-wise work; the state it reads and writes counts as
    KV bytes."""
    decode = run.phase == "decode"
    runs = layers * run.steps
    out = []
    for w in mixer_work(cfg.mixer, cfg.hidden, batch=wl.batch, tokens=run.queries, runs=runs, decode=decode,
                        engine=_engine_convention(wl)):
        wb = sz.w(w.weights, mkind) * runs if w.weights else 0.0
        out.append(Op(w.name, run.phase, w.m, w.n, w.k, w.count, int(w.flops), wb, w.act * sz.a, w.state * sz.kv,
                      w.note, kind=w.kind, kernels=w.kernels))
    return out


def _mlp_ops(cfg: ModelConfig, wl: Workload, sz: _Sizes, run: _Run, *, mkind: str, layers: int) -> list[Op]:
    d, tokens = cfg.hidden, run.tokens
    runs = layers * run.steps
    lin = dict(phase=run.phase, sz=sz)
    ops: list[Op] = []
    if mkind == "-":  # a hybrid's mixer-only layer (Nemotron-H)
        return ops
    if mkind == "D":
        g, u, dn = mlp_op_names(cfg, "D")
        names = (g, u) if cfg.mlp == "gated" else (u,)
        dense = Text(N_("the dense layers of a mixture of experts")) if cfg.is_moe else ""
        fused = Text(N_("in one fused gate|up matrix")) if cfg.fused_gate_up and cfg.mlp == "gated" else ""
        for nm in names:
            ops.append(_linear(nm, m=tokens, k=d, n=cfg.ffn, runs=runs, weight_reads=runs, w_bytes=sz.w(nm, "D"),
                               note=Text.joined([fused, dense]) if fused and dense else fused or dense, **lin))
        ops.append(_linear(dn, m=tokens, k=cfg.ffn, n=d, runs=runs, weight_reads=runs, w_bytes=sz.w(dn, "D"),
                           note=dense, **lin))
        return ops + _mlp_conv(cfg, wl, sz, run, layers=layers)
    e, k, fe = cfg.experts, cfg.routed_per_token, cfg.expert_ffn
    r = cfg.router_hidden
    if r:  # ZAYA: the router an MLP
        note = Text(N_("the router's MLP: the hidden state to {r}, two layers of {r}"), r=r)
        ops += [_linear("router_down", m=tokens, k=d, n=r, runs=runs, weight_reads=runs,
                        w_bytes=sz.w("router_down", "M"), note=note, **lin)]
        ops += [_linear(nm, m=tokens, k=r, n=r, runs=runs, weight_reads=runs, w_bytes=sz.w(nm, "M"), note=note, **lin)
                for nm in ("router_fc1", "router_fc2")]
    ops.append(_linear("router", m=tokens, k=r or d, n=cfg.router_width, runs=runs, weight_reads=runs,
                       w_bytes=sz.w("router", "M"), note=Text(N_("per layer: scores every expert for every token")),
                       **lin))
    if cfg.experts_compute == "all":
        reached, per_token = e, e
        e_note = Text(N_("every one of the {experts} experts runs on every token (dense bmm, as transformers' "
                         "Llama 4 does)"), experts=e)
    else:
        reached, per_token = min(e, tokens * k), k
        e_note = Text(N_("routed experts: each token through {k} of {experts} experts (count = layers × {k}); "
                         "weights of {reached} experts read"), k=k, experts=e, reached=reached)
        if cfg.zero_experts:
            e_note = Text.joined([e_note, Text(N_("of its {slots} choices among {experts} experts and {zero} "
                                                  "zero-computation ones, their share of real ones"),
                                               slots=cfg.experts_per_token, experts=e, zero=cfg.zero_experts)])
    e_runs = runs * per_token
    names = ("gate_proj", "up_proj") if cfg.mlp == "gated" else ("up_proj",)
    ew = cfg.expert_width  # (a latent mixture's experts run narrower than the hidden state)
    if cfg.expert_hidden:
        ops.append(_linear("expert_in_proj", m=tokens, k=d, n=ew, runs=runs, weight_reads=runs,
                           w_bytes=sz.w("expert_in_proj", "M"), **lin,
                           note=Text(N_("a latent mixture: every token projected to the experts' width {w}"), w=ew)))
    for nm in names:
        ops.append(_linear(nm, m=tokens, k=ew, n=fe, runs=e_runs, weight_reads=runs, w_bytes=sz.w(nm, "M"),
                           note=e_note, weight_copies=reached, routed=True, kernels=runs, **lin))
    ops.append(_linear("down_proj", m=tokens, k=fe, n=ew, runs=e_runs, weight_reads=runs, w_bytes=sz.w("down_proj", "M"),
                       note=e_note, weight_copies=reached, routed=True, kernels=runs, **lin))
    if cfg.expert_hidden:
        ops.append(_linear("expert_out_proj", m=tokens, k=ew, n=d, runs=runs, weight_reads=runs,
                           w_bytes=sz.w("expert_out_proj", "M"), **lin,
                           note=Text(N_("a latent mixture: the experts' sum projected back to the hidden size"))))
    fs = cfg.shared_expert_ffn
    if fs:
        for nm in ("shared_gate_proj", "shared_up_proj") if cfg.mlp == "gated" else ("shared_up_proj",):
            ops.append(_linear(nm, m=tokens, k=d, n=fs, runs=runs, weight_reads=runs, w_bytes=sz.w(nm, "M"),
                               note=Text(N_("the shared expert: every token")), **lin))
        ops.append(_linear("shared_down_proj", m=tokens, k=fs, n=d, runs=runs, weight_reads=runs,
                           w_bytes=sz.w("shared_down_proj", "M"), note=Text(N_("the shared expert: every token")),
                           **lin))
    if cfg.shared_expert_gate:
        ops.append(_linear("shared_expert_gate", m=tokens, k=d, n=1, runs=runs, weight_reads=runs,
                           w_bytes=sz.w("shared_expert_gate", "M"), note=Text(N_("sigmoid gate on the shared expert")),
                           **lin))
    return ops + _mlp_conv(cfg, wl, sz, run, layers=layers)


def _mlp_conv(cfg: ModelConfig, wl: Workload, sz: _Sizes, run: _Run, *, layers: int) -> list[Op]:
    """Inkling's convolution over the MLP's output."""
    if not cfg.short_conv:
        return []
    return [_short_conv_op("mlp_conv", cfg, wl, run, sz, channels=cfg.hidden, layers=layers,
                           what=Text(N_("the MLP's output")))]


def _per_layer_input_ops(cfg: ModelConfig, wl: Workload, sz: _Sizes, run: _Run, *, layers: int) -> list[Op]:
    """Gemma 4's per-layer input in ``layers`` layers: the hidden state gated down to the layer's p-wide input
    (per_layer_input_gate), multiplied by it, and projected back (per_layer_projection)."""
    d, p, runs = cfg.hidden, cfg.per_layer_input, layers * run.steps
    lin = dict(phase=run.phase, runs=runs, weight_reads=runs, sz=sz)
    return [_linear("per_layer_gate", m=run.tokens, k=d, n=p, w_bytes=sz.w("per_layer_gate", "D"),
                    note=Text(N_("the hidden state to the layer's per-layer input width")), **lin),
            _linear("per_layer_proj", m=run.tokens, k=p, n=d, w_bytes=sz.w("per_layer_proj", "D"),
                    note=Text(N_("gated by the layer's per-layer input, back to the hidden width")), **lin)]


def _altup_laurel_ops(cfg: ModelConfig, wl: Workload, sz: _Sizes, run: _Run, *, layers: int) -> list[Op]:
    """Gemma 3n in ``layers`` layers: AltUp's router on the active stream (before the layer, to predict, and after, to
    correct), its prediction (n → n²) and correction (n → n) coefficients, the prediction itself (every token's
    hidden × n streams times its n × n matrix: a batched matmul), and LAuReL's low-rank residual."""
    d, n, r, runs, t = cfg.hidden, cfg.altup_inputs, cfg.laurel_rank, layers * run.steps, run.tokens
    lin = dict(phase=run.phase, sz=sz)
    ops: list[Op] = []
    if n:
        ops += [_linear("altup_router", m=t, k=d, n=n, runs=2 * runs, weight_reads=2 * runs,
                        w_bytes=sz.w("altup_router", "D"), kernels=2 * runs,
                        note=Text(N_("AltUp's router on the active stream: before the layer and after it")), **lin),
                _linear("altup_predict", m=t, k=n, n=n * n, runs=runs, weight_reads=runs, w_bytes=sz.w("altup_predict", "D"),
                        note=Text(N_("each token's {n} × {n} prediction matrix"), n=n), **lin),
                _linear("altup_correct", m=t, k=n, n=n, runs=runs, weight_reads=runs, w_bytes=sz.w("altup_correct", "D"),
                        note=Text(N_("each token's correction coefficients")), **lin)]
        per = runs * t  # one [hidden, n] × [n, n] product per token
        ops.append(Op("altup_mix", run.phase, d, n, n, per, 2 * d * n * n * per, 0.0, per * (2 * d * n + n * n) * sz.a,
                      0.0, Text(N_("the {n} streams of every token mixed by its prediction matrix"), n=n),
                      kernels=runs))
    if r:
        ops += [_linear("laurel_left", m=t, k=d, n=r, runs=runs, weight_reads=runs, w_bytes=sz.w("laurel_left", "D"),
                        note=Text(N_("LAuReL: the normed input down to rank {r}"), r=r), **lin),
                _linear("laurel_right", m=t, k=r, n=d, runs=runs, weight_reads=runs, w_bytes=sz.w("laurel_right", "D"),
                        note=Text(N_("LAuReL: back to the hidden width, added beside the attention")), **lin)]
    return ops


def _altup_streams(cfg: ModelConfig, wl: Workload, *, phase: str, rows: int, steps: int, end: bool) -> list[Op]:
    """Gemma 3n: the embedding projected to AltUp's other n - 1 streams before the first layer (``end`` False), and
    those streams projected back before the final norm (``end`` True), every token."""
    n = cfg.altup_inputs
    if not n:
        return []
    sz, name = _Sizes(cfg, wl), "altup_unembed" if end else "altup_proj"
    note = (Text(N_("the {k} other streams back to the hidden state, averaged with the active one"), k=n - 1) if end
            else Text(N_("the embedding to AltUp's {k} other streams"), k=n - 1))
    return [_linear(name, phase, m=rows, k=cfg.hidden, n=cfg.hidden, runs=(n - 1) * steps, weight_reads=(n - 1) * steps,
                    w_bytes=sz.w(name, ""), sz=sz, note=note)]


def _per_layer_model_proj(cfg: ModelConfig, wl: Workload, *, phase: str, rows: int, steps: int) -> list[Op]:
    """Gemma 4: once per forward, every token's embedding projected to all layers' per-layer inputs (the table's rows
    are gathered beside it)."""
    if not cfg.per_layer_input:
        return []
    sz = _Sizes(cfg, wl)
    n = cfg.layers * cfg.per_layer_input
    return [_linear("per_layer_model_proj", phase, m=rows, k=cfg.hidden, n=n, runs=steps, weight_reads=steps,
                    w_bytes=sz.w("per_layer_model_proj", ""), sz=sz,
                    note=Text(N_("every token's embedding to all {layers} layers' per-layer inputs"),
                              layers=cfg.layers))]


def _sum_ops(ops: list[Op], *, join_notes: bool = False) -> list[Op]:
    """Ops of the same name (from different kinds of layer, or the final norm joining the layers'
    norms) summed into one, in first-seen order; the first one's shape stands for all, and its note
    too unless ``join_notes`` ("…; and …")."""
    out: dict[str, Op] = {}
    for o in ops:
        if o.name in out:
            a = out[o.name]
            note = Text.joined([a.note, o.note], sep=N_("; and ")) if join_notes else a.note
            out[o.name] = replace(a, count=a.count + o.count, flops=a.flops + o.flops, kernels=a.kernels + o.kernels,
                                  weight_bytes=a.weight_bytes + o.weight_bytes, act_bytes=a.act_bytes + o.act_bytes,
                                  kv_bytes=a.kv_bytes + o.kv_bytes, note=note)
        else:
            out[o.name] = o
    return list(out.values())


def _ngram_ops(cfg: ModelConfig, wl: Workload, sz: _Sizes, run: _Run, *, layers: int) -> list[Op]:
    """Qwen4-Exp's n-gram embeddings in ``layers`` layers: each token's hashed n-gram rows (a gather) projected to a
    key per stream and one value, and the gated value's dilated depthwise convolution over the streams (as
    FlopCounterMode counts a convolution: its output is as long as the new tokens in transformers' code too; its
    state, (kernel − 1) · order inputs of each channel, read and written at the KV dtype, as the cache holds it)."""
    if not layers:
        return []
    g, d, w, k = cfg.ngram_dim, cfg.hidden, cfg.hyper_streams * cfg.hidden, cfg.ngram_conv
    runs = layers * run.steps
    lin = dict(phase=run.phase, runs=runs, weight_reads=runs, sz=sz)
    state = 2 * wl.batch * w * (k - 1) * cfg.ngram_order * runs * sz.kv
    conv = Op("ngram_conv", run.phase, wl.batch, w, k, runs, 2 * run.tokens * k * w * runs, w * k * sz.el * runs,
              2 * run.tokens * w * sz.a * runs, state,
              Text(N_("the gated n-gram values' depthwise convolution of width {k}, dilation {o}, over {n} streams"),
                   k=k, o=cfg.ngram_order, n=cfg.hyper_streams), kernels=runs)
    note = Text(N_("each token's {n} hashed n-gram embeddings ({g} wide in all)"),
                n=(cfg.ngram_order - 1) * cfg.ngram_heads, g=g)
    return [_linear("ngram_key", m=run.tokens, k=g, n=w, w_bytes=sz.w("ngram_key", "M"), note=note, **lin),
            _linear("ngram_value", m=run.tokens, k=g, n=d, w_bytes=sz.w("ngram_value", "M"), note=note, **lin), conv]


def _stack_ops(cfg: ModelConfig, wl: Workload, run: _Run, groups: list[tuple[str, str, int]] | None = None) -> list[Op]:
    """Every GEMM of the decoder layers (all of them, or the given kinds), summed by op."""
    sz = _Sizes(cfg, wl)
    att: list[Op] = []
    mlp: list[Op] = _ngram_ops(cfg, wl, sz, run, layers=cfg.ngram_layer_count if groups is None else 0)
    for akind, mkind, n in groups or _groups(cfg):
        shape = cfg.attention_shape(akind)  # Gemma 4's full layers and K/V-reusing layers have a shape of their own
        ssz = sz if shape is cfg else _Sizes(shape, wl)
        if akind in ATTENTION_LETTERS:
            att += _attention_ops(shape, wl, ssz, run, akind=akind, mkind=mkind, layers=n)
        if akind in MIXER_LETTERS:
            att += [o for o in _mixer_ops(cfg, wl, sz, run, mkind=mkind, layers=n) if o.is_gemm]
        mlp += _mlp_ops(shape, wl, ssz, run, mkind=mkind, layers=n)
        if cfg.per_layer_input:
            mlp += _per_layer_input_ops(shape, wl, ssz, run, layers=n)
        if cfg.altup_inputs or cfg.laurel_rank:
            mlp += _altup_laurel_ops(shape, wl, ssz, run, layers=n)
        if cfg.hyper_streams:
            mlp += _hyper_ops(cfg, wl, run, layers=n)
        if cfg.shared_blocks and akind == "P":
            att += _block_ops(cfg, wl, sz, run, mkind=mkind, layers=n)
        if cfg.gated_norm_rank:
            att += _norm_gate_ops(cfg, wl, sz, run, mkind=mkind, layers=n)
    order = {name: i for i, name in enumerate(OP_NAMES)}
    return sorted(_sum_ops(att), key=lambda o: order[o.name]) + sorted(_sum_ops(mlp), key=lambda o: order[o.name])


def _block_ops(cfg: ModelConfig, wl: Workload, sz: _Sizes, run: _Run, *, mkind: str, layers: int) -> list[Op]:
    """Zamba2's P layers beside their shared block's GEMMs: each layer's own low-rank adapters (on q, k and v, from the
    attention's input; on gate|up, from the hidden state) and the projection of the block's output into the mixer's
    input."""
    r, h, a, runs = cfg.block_adapter_rank, cfg.hidden, cfg.attn_in, layers * run.steps
    lin = dict(phase=run.phase, sz=sz)
    note = Text(N_("each layer's own low-rank adapter beside its shared block's weights (rank {r})"), r=r)
    ops = []
    if r and cfg.qkv_adapters:  # three of each: q, k and v (as wide as one another here)
        ops += [_linear("qkv_adapter_down", m=run.tokens, k=a, n=r, runs=3 * runs, weight_reads=3 * runs,
                        w_bytes=sz.w("qkv_adapter_down", mkind) / 3, note=note, **lin),
                _linear("qkv_adapter_up", m=run.tokens, k=r, n=cfg.q_dim, runs=3 * runs, weight_reads=3 * runs,
                        w_bytes=sz.w("qkv_adapter_up", mkind) / 3, note=note, **lin)]
    if r:
        ops += [_linear("mlp_adapter_down", m=run.tokens, k=h, n=r, runs=runs, weight_reads=runs,
                        w_bytes=sz.w("mlp_adapter_down", mkind), note=note, **lin),
                _linear("mlp_adapter_up", m=run.tokens, k=r, n=2 * cfg.ffn, runs=runs, weight_reads=runs,
                        w_bytes=sz.w("mlp_adapter_up", mkind), note=note, **lin)]
    if cfg.block_out_proj:
        ops.append(_linear("block_out_proj", m=run.tokens, k=h, n=h, runs=runs, weight_reads=runs,
                           w_bytes=sz.w("block_out_proj", mkind),
                           note=Text(N_("the shared block's output projected into the Mamba-2 mixer's input")), **lin))
    return ops


def _norm_gate_ops(cfg: ModelConfig, wl: Workload, sz: _Sizes, run: _Run, *, mkind: str, layers: int) -> list[Op]:
    """A.X-K2's gated norms in ``layers`` layers: the input norm's, and a MoE layer's post-attention norm's too, each a
    low-rank gate (hidden → r → hidden) on the normed state."""
    gates = 2 if mkind == "M" else 1
    runs = layers * run.steps * gates
    r, d = cfg.gated_norm_rank, cfg.hidden
    note = Text(N_("a rank-{r} sigmoid gate after the input norm (and a MoE layer's post-attention norm)"), r=r)
    lin = dict(phase=run.phase, runs=runs, weight_reads=runs, sz=sz, note=note)
    # (a MoE layer's weight table sums its two gates: each run reads one)
    return [_linear("norm_gate_down", m=run.tokens, k=d, n=r, w_bytes=sz.w("norm_gate_down", mkind) / gates, **lin),
            _linear("norm_gate_up", m=run.tokens, k=r, n=d, w_bytes=sz.w("norm_gate_up", mkind) / gates, **lin)]


def _elementwise(name: str, phase: str, *, rows: int, width: int, count: int, elements: float, flops: float,
                 sz: _Sizes, note: str, weight_bytes: float = 0.0, kv_bytes: float = 0.0) -> Op:
    """A non-GEMM op: ``elements`` read + written at the activation dtype, ``flops`` element-wise FLOPs.

    ``rows × width`` is the shape of one run (for a table); ``count`` how many runs the totals include.
    """
    return Op(name, phase, rows, width, 0, count, int(round(flops)), weight_bytes, elements * sz.a, kv_bytes,
              note, kind="other")


# Element-wise FLOPs per element of each kind of op (an eager kernel's arithmetic, not a GEMM's).
_NORM_FLOPS = {"rms": 4, "layer": 7, "layer_weight": 6, "plain": 5}  # rms: square, mean, scale, weight; layer: + centre, bias
_ACT_FLOPS = {"gated": 5, "plain": 8}  # silu(gate)·up: sigmoid, mul, mul; GELU (tanh form)
NORM_NAMES = {"rms": "RMSNorm", "layer": "LayerNorm", "layer_weight": N_("LayerNorm (weight only)"),
               "plain": N_("LayerNorm (no parameters)")}


def _norms_note(cfg: ModelConfig, npl: int) -> Text:
    """What the norms op holds, in words (the table's note)."""
    norm = Text(NORM_NAMES[cfg.norm])
    if cfg.is_mla:
        return Text(N_("{n} per layer ({norm}), and MLA's latent norms: read and write the hidden state"),
                    n=npl, norm=norm)
    if cfg.qk_norm != "none":
        return Text(N_("{n} per layer ({norm}), and the q/k norms: read and write the hidden state"),
                    n=npl, norm=norm)
    return Text(N_("{n} per layer ({norm}): read and write the hidden state"), n=npl, norm=norm)


def _activation_note(cfg: ModelConfig, name: str) -> Text:
    """The activation op's note: its function and whose it is."""
    fn = Text(N_("silu(gate) · up")) if cfg.mlp == "gated" else Text("GELU")
    whose = {"activation": N_("{fn} (the routed experts)") if cfg.is_moe else "",
             "shared_activation": N_("{fn} (the shared expert)"),
             "dense_activation": N_("{fn} (the dense layers)")}[name]
    return Text(whose, fn=fn) if whose else fn


def _other_group_ops(cfg: ModelConfig, wl: Workload, sz: _Sizes, run: _Run, *, akind: str, mkind: str,
                     layers: int) -> list[Op]:
    """The non-GEMM work of ``layers`` layers of one kind.

    What an eager Hugging Face decoder layer does besides its GEMMs, as memory traffic: its norms
    (read and write the hidden state; qk-norm and MLA's latent norms on their widths), rotary
    embedding on q and k (rotary models; MLA: the rotary dims only), GQA's K/V repeat over every
    cached key and scale + mask + softmax over the scores (eager attention only), the MLP activation,
    MoE routing (scores, top-k, gather and scatter of the routed tokens) and two residual adds.
    """
    b, h, d = wl.batch, cfg.heads, cfg.hidden
    q, kv = cfg.q_dim, cfg.kv_dim
    tokens, steps = run.tokens, run.steps
    runs = layers * steps
    rows_total = runs * tokens  # hidden-state rows over every run
    sum_keys, _, _, pairs = _keys(cfg.window_of(akind), run)
    rate = {"A": cfg.csa_rate, "H": cfg.hca_rate}.get(akind, 0) if cfg.compressed_attention else 0
    if rate:  # DeepSeek-V4: the compressed entries beside the window's keys (every one in eager attention)
        c_total, _, _, c_pairs = _compressed_keys(rate, 0, run)
        sum_keys, pairs = sum_keys + c_total, pairs + c_pairs
    nf = _NORM_FLOPS[cfg.norm]
    npl = cfg.norms_per_layer + (cfg.moe_norms if mkind == "M" else 0) + (2 if cfg.qkv_input_norms and akind == "F" else 0)
    extra = 0  # norm width besides the hidden state's
    if cfg.is_mla:  # (a layer reading another layer's latent has no latent norm)
        extra = cfg.q_lora_rank + (0 if cfg.kv_reused else cfg.kv_lora_rank)
        if cfg.index_q_from_hidden and akind in INDEXER_LETTERS:  # Mistral Large 4: its indexer's LayerNorm
            extra += d
    elif cfg.compressed_attention:  # the query latent's norm, each query head's (unweighted) and the key/value head's
        extra = cfg.q_lora_rank + q + cfg.head_dim
    elif cfg.qk_norm in ("head", "width", "l2") or cfg.clip_norms:
        extra = q + (0 if cfg.kv_reused else kv)
    if cfg.per_layer_input:
        npl += 1  # the norm after the per-layer input's projection
    if cfg.shared_blocks and akind == "P":  # Zamba2: the block's norms, the attention input's (its width) and the MLP's
        extra += cfg.attn_in + d
    nd = d * (cfg.hyper_streams if cfg.hyper_gate_rank else 1)  # Qwen4-Exp: two grouped norms over every stream
    width = npl * nd + extra
    if akind not in ATTENTION_LETTERS:
        extra = 0
        width = npl * nd
    elif cfg.diff_attention:  # DiffLlama: the heads' combined outputs through an RMSNorm without weights
        width += q
    if cfg.ffn_norm and mkind == "D":  # BitNet: a norm over the MLP's intermediate
        extra += cfg.ffn
        width += cfg.ffn
    ops = [_elementwise("norms", run.phase, rows=tokens, width=d, count=npl * runs, elements=2 * rows_total * width,
                        flops=nf * rows_total * width, sz=sz,
                        weight_bytes=runs * (npl * d + extra) * cfg.norm_weights * sz.el,
                        note=_norms_note(cfg, npl))]
    if akind in MIXER_LETTERS:
        ops += [o for o in _mixer_ops(cfg, wl, sz, run, mkind=mkind, layers=layers) if not o.is_gemm]
    if cfg.short_conv and cfg.dynamic_kv_conv and akind == "F":  # Inkling 2: each token's keys and values filtered
        # by its own taps (static + projected), an element-wise multiply-add over the kernel
        w, k = 2 * kv, cfg.short_conv
        ops.append(_elementwise("kv_conv_dynamic", run.phase, rows=tokens, width=w, count=runs,
                                elements=2 * rows_total * w * (k + 1), flops=2 * rows_total * w * k, sz=sz,
                                note=Text(N_("the full layers' keys and values filtered by per-token taps of width {k} "
                                             "(element-wise)"), k=k)))
    if akind not in ATTENTION_LETTERS:
        pass
    elif not cfg.learned_positions and not cfg.alibi and not cfg.no_positions and not cfg.sinusoidal:
        if cfg.compressed_attention:  # the rotary dims of q, of the key/value head and, rotated back, of the output
            rot = (2 * h + 1) * cfg.rope_head_dim
        else:
            rot = ((h + (0 if cfg.kv_reused else 1)) * cfg.rope_head_dim if cfg.is_mla else
                   q + (0 if cfg.kv_reused else kv))
        qk = rows_total * rot
        if rot:  # (none in Mistral Large 4's NoPE layers)
            ops.append(_elementwise("rotary", run.phase, rows=tokens, width=rot, count=runs, elements=2 * 3 * qk,
                                    flops=3 * qk, sz=sz,
                                    note=Text(N_("q·cos + rotate_half(q)·sin, and the same for k"))))
    if wl.attention == "eager" and akind in ATTENTION_LETTERS:
        keys_total = layers * b * sum_keys  # cached keys read per run, summed
        if (cfg.kv_heads < cfg.heads or cfg.diff_attention) and not cfg.is_mla:  # (DiffLlama: each call its copies)
            c = cfg.attn_calls
            ops.append(_elementwise(
                "kv_repeat", run.phase, rows=tokens, width=q + cfg.heads * cfg.v_head_dim, count=runs * c,
                elements=keys_total * (q + cfg.o_dim) * c, flops=0, sz=sz,
                kv_bytes=keys_total * (kv + cfg.v_dim) * sz.kv * c,
                note=Text(N_("eager GQA copies each K/V head to its {n} query heads, every cached key"),
                          n=h // cfg.kv_heads)))
        heads_rows = h * cfg.attn_calls  # (DiffLlama: two softmaxes per head)
        scores = layers * b * heads_rows * pairs
        if cfg.rel_bias:  # Inkling: the bias gathered for every query-key pair and added to the scores
            ops.append(_elementwise("rel_bias_add", run.phase, rows=run.queries, width=sum_keys // max(steps, 1),
                                    count=layers * b * h * steps, elements=3 * scores, flops=scores, sz=sz,
                                    note=Text(N_("eager: the relative bias gathered for every query-key pair and added "
                                                 "to the scores"))))
        ops.append(_elementwise("attn_softmax", run.phase, rows=run.queries, width=sum_keys // max(steps, 1),
                                count=layers * b * heads_rows * steps, elements=3 * 2 * scores, flops=7 * scores, sz=sz,
                                note=Text(N_("scale, mask and softmax each read and write the scores"))))
    act_names = {"D": "dense_activation" if cfg.is_moe else "activation", "M": "activation"}
    if mkind == "M":
        per = cfg.routed_per_token
        acts = [("activation", per * cfg.expert_ffn, True)]
        if cfg.shared_expert_ffn:
            acts.append(("shared_activation", cfg.shared_expert_ffn, False))
    elif mkind == "-":
        acts = []
    else:
        acts = [(act_names["D"], cfg.ffn, False)]
    for name, act_width, routed in acts:
        act = _elementwise(name, run.phase, rows=tokens, width=act_width, count=runs,
                           elements=(5 if cfg.mlp == "gated" else 2) * rows_total * act_width,
                           flops=_ACT_FLOPS[cfg.mlp] * rows_total * act_width, sz=sz,
                           note=_activation_note(cfg, name))
        ops.append(replace(act, routed=routed))
    if mkind == "M":
        k, e = cfg.computing_per_token, cfg.router_width
        ops.append(_elementwise("moe_routing", run.phase, rows=tokens, width=e, count=runs,
                                elements=2 * rows_total * e + 4 * rows_total * k * d,
                                flops=5 * rows_total * e + 2 * rows_total * k * d, sz=sz,
                                note=Text(N_("softmax and top-{k} over {experts} experts; gather each routed token "
                                             "and scatter-add it back, weighted"), k=k, experts=e)))
    if sz.a_in < sz.a:  # the weight GEMMs take 8-bit (or 4-bit) inputs: each is quantized from the 16-bit activations
        ops += _quantize_ops(cfg, run, sz, akind=akind, mkind=mkind, runs=runs, rows_total=rows_total)
    adds = (1 if mkind == "-" or akind == "-" else 2) + (1 if cfg.per_layer_input else 0)
    adds += 2 if cfg.short_conv and akind in ATTENTION_LETTERS else 0  # Inkling: around the output convolutions
    ops.append(_elementwise("residual", run.phase, rows=tokens, width=nd, count=adds * runs,
                            elements=adds * 3 * rows_total * nd, flops=adds * rows_total * nd, sz=sz,
                            note=Text(N_("{n} per layer: read two, write one"), n=adds)))
    return ops


def _quantize_ops(cfg: ModelConfig, run: _Run, sz: _Sizes, *, akind: str, mkind: str, runs: int,
                  rows_total: int) -> list[Op]:
    """Casting each weight GEMM's input to the GEMM's dtype (read 16 bits, write 8 or 4, a scale per row or
    block: Transformer Engine's cast kernels, vLLM's ``scaled_fp8_quant`` / per-token-group quant):
    ``act_quant`` for the inputs every tensor-parallel rank reads whole (the normed hidden state, once for
    q|k|v and once for the MLP), ``act_quant_inner`` for those split across ranks (o_proj's and the down
    projections' inputs). A hybrid's mixer layer counts the cast of its input and of its out_proj's."""
    d = cfg.hidden
    blocks = (akind != "-") + (mkind != "-")
    outer = (1 if cfg.parallel_block else blocks) * d
    inner = 0
    if akind in ATTENTION_LETTERS:
        inner += cfg.o_dim + (cfg.q_lora_rank if cfg.is_mla and cfg.q_lora_rank else 0)
    elif akind != "-":
        inner += d  # a mixer's out_proj input (its inner width is the mixer's; the hidden width stands in)
    if mkind == "M":
        per = cfg.routed_per_token
        inner += per * cfg.expert_ffn + cfg.shared_expert_ffn
    elif mkind == "D":
        inner += cfg.ffn
    per_element = (sz.a + sz.a_in) / sz.a  # elements of 16-bit traffic per element cast: read 16 bits, write a_in
    note = Text(N_("cast each GEMM input from 16 bits to the GEMM's dtype, with its scales"))
    return [_elementwise(name, run.phase, rows=run.tokens, width=w, count=runs * c,
                         elements=per_element * rows_total * w, flops=3 * rows_total * w, sz=sz, note=note)
            for name, w, c in (("act_quant", outer, max(1, outer // d)), ("act_quant_inner", inner, blocks)) if w]


def _other_stack_ops(cfg: ModelConfig, wl: Workload, run: _Run,
                     groups: list[tuple[str, str, int]] | None = None) -> list[Op]:
    sz = _Sizes(cfg, wl)
    ops: list[Op] = []
    for akind, mkind, n in groups or _groups(cfg):
        shape = cfg.attention_shape(akind)
        ops += _other_group_ops(shape, wl, sz if shape is cfg else _Sizes(shape, wl), run, akind=akind, mkind=mkind,
                                layers=n)
    order = {name: i for i, name in enumerate(OTHER_OP_NAMES)}
    return sorted(_sum_ops(ops), key=lambda o: order[o.name])


def _embedding_op(cfg: ModelConfig, wl: Workload, *, phase: str, rows: int, steps: int) -> Op:
    sz = _Sizes(cfg, wl)
    lookups = 2 if cfg.learned_positions else 1  # token (+ learned position) rows gathered
    n = rows * steps
    op = _elementwise("embedding", phase, rows=rows, width=cfg.hidden, count=steps,
                      elements=n * cfg.hidden * (lookups + (2 if cfg.learned_positions else 0)),
                      flops=n * cfg.hidden * (lookups - 1), sz=sz, weight_bytes=lookups * n * cfg.hidden * sz.el,
                      note=Text(N_("gather the token rows and the position rows, then add; a final norm follows "
                                   "(counted in norms)")) if lookups == 2 else
                      Text(N_("gather the token rows; a final norm follows (counted in norms)")))
    if cfg.embedding_norm:  # BLOOM: a LayerNorm over the gathered rows (read and write them once more)
        w = n * cfg.hidden
        op = replace(op, flops=op.flops + _NORM_FLOPS[cfg.norm] * w, act_bytes=op.act_bytes + 2 * w * sz.a,
                     weight_bytes=op.weight_bytes + steps * cfg.hidden * cfg.norm_weights * sz.el,
                     note=Text(N_("gather the token rows, then a norm over them; a final norm follows (counted in "
                                  "norms)")))
    return op


def _prefill_run(wl: Workload, seq_len: int | None = None, tri: bool | None = None) -> _Run:
    s = wl.seq_len if seq_len is None else seq_len
    return _Run("prefill", wl.batch * s, 1, s, 0, wl.causal if tri is None else tri)


def _first_group(cfg: ModelConfig) -> list[tuple[str, str, int]]:
    a, m = cfg.attention_kinds[0], cfg.mlp_kinds[0]
    return [(a, m, 1)]


def layer_ops(cfg: ModelConfig, seq_len: int, batch: int = 1, causal: bool = False,
              dtype: str = "bf16") -> list[Op]:
    """Every GEMM of ONE layer (the first) in a prefill of ``batch`` sequences of ``seq_len`` tokens."""
    wl = Workload(batch=batch, seq_len=seq_len, causal=causal, weight_dtype=dtype, act_dtype=dtype,
                  kv_dtype=dtype)
    return _stack_ops(cfg, wl, _prefill_run(wl), _first_group(cfg))


def layer_other_ops(cfg: ModelConfig, seq_len: int, batch: int = 1, causal: bool = False, dtype: str = "bf16",
                    attention: str = "eager") -> list[Op]:
    """The non-GEMM ops of ONE layer (the first) in a prefill (the companion of :func:`layer_ops`)."""
    wl = Workload(batch=batch, seq_len=seq_len, causal=causal, weight_dtype=dtype, act_dtype=dtype,
                  kv_dtype=dtype, attention=attention)
    return _other_stack_ops(cfg, wl, _prefill_run(wl), _first_group(cfg))


def _final_norm(cfg: ModelConfig, wl: Workload, *, phase: str, rows: int, steps: int) -> Op:
    sz = _Sizes(cfg, wl)
    n = rows * steps
    return _elementwise("norms", phase, rows=rows, width=cfg.hidden, count=steps, elements=2 * n * cfg.hidden,
                        flops=_NORM_FLOPS[cfg.norm] * n * cfg.hidden, sz=sz,
                        weight_bytes=steps * cfg.hidden * cfg.norm_weights * sz.el,
                        note=Text(N_("the final norm before the LM head")))


def _head_dense(cfg: ModelConfig, wl: Workload, *, phase: str, rows: int, steps: int) -> list[Op]:
    """ModernBERT's prediction head: a dense hidden → hidden on the positions the LM head reads (its activation and
    norm are element-wise)."""
    if not cfg.head_dense:
        return []
    sz = _Sizes(cfg, wl)
    return [_linear("head_dense", phase, m=rows, k=cfg.hidden, n=cfg.hidden, runs=steps, weight_reads=steps,
                    w_bytes=sz.w("head_dense", ""), sz=sz,
                    note=Text(N_("the prediction head's dense layer before the LM head, its activation and norm")))]


def _lm_head(cfg: ModelConfig, wl: Workload, *, phase: str, rows: int, steps: int) -> Op:
    sz = _Sizes(cfg, wl)
    tied = Text(N_("tied to the embedding")) if cfg.tied_embeddings else ""
    note = tied
    if phase == "prefill":
        note = Text.joined([Text(N_("every position")) if wl.lm_head == "all" else Text(N_("last position only")),
                            tied])
    return _linear("lm_head", phase, m=rows, k=cfg.hidden, n=cfg.head_vocab, runs=steps, weight_reads=steps,
                   w_bytes=sz.w("lm_head", ""), sz=sz, note=note)


def executed_model(cfg: ModelConfig, wl: Workload) -> ModelConfig:
    """The model as ``wl``'s convention runs it: a MoE whose own code runs every expert on every token
    (Llama 4 in transformers, ``experts_compute = "all"``) routes each token through its k experts when
    ``wl.experts_compute`` is "routed" (what engines do); otherwise ``cfg`` itself."""
    if cfg.experts_compute == "all" and wl.experts_compute == "routed":
        return _routed_model(cfg)
    return cfg


@lru_cache(maxsize=32)
def _routed_model(cfg: ModelConfig) -> ModelConfig:
    return cfg.replace(experts_compute="routed")


def prefill_ops(cfg: ModelConfig, wl: Workload) -> list[Op]:
    """Every GEMM of the prefill (the prompt of every sequence in one forward pass); none for a
    decode-only workload."""
    if wl.decode_only:
        return []
    cfg = executed_model(cfg, wl)
    ops = _per_layer_model_proj(cfg, wl, phase="prefill", rows=wl.prefill_tokens, steps=1)
    ops += _altup_streams(cfg, wl, phase="prefill", rows=wl.prefill_tokens, steps=1, end=False)
    ops += _stack_ops(cfg, wl, _prefill_run(wl))
    ops += _altup_streams(cfg, wl, phase="prefill", rows=wl.prefill_tokens, steps=1, end=True)
    ops += _hyper_head(cfg, wl, phase="prefill", rows=wl.prefill_tokens, steps=1)
    ops += _attn_res_ops(cfg, wl, phase="prefill", rows=wl.prefill_tokens, steps=1)
    rows = wl.prefill_tokens if wl.lm_head == "all" else wl.batch
    ops += _head_dense(cfg, wl, phase="prefill", rows=rows, steps=1)
    ops.append(_lm_head(cfg, wl, phase="prefill", rows=rows, steps=1))
    return ops


def prefill_other_ops(cfg: ModelConfig, wl: Workload) -> list[Op]:
    """Every non-GEMM op of the prefill: the embedding gather, then each layer's element-wise work."""
    if wl.decode_only:
        return []
    cfg = executed_model(cfg, wl)
    ops = [_embedding_op(cfg, wl, phase="prefill", rows=wl.prefill_tokens, steps=1)]
    ops += _other_stack_ops(cfg, wl, _prefill_run(wl))
    rows = wl.prefill_tokens if wl.lm_head == "all" else wl.batch
    ops.append(_final_norm(cfg, wl, phase="prefill", rows=rows, steps=1))
    return _sum_ops(ops, join_notes=True)


def _decode_range(cfg: ModelConfig, wl: Workload, first_step: int, last_step: int,
                  other: bool = False, gemm: bool = True) -> list[Op]:
    """Decode ops summed over steps first_step..last_step (inclusive, from 0): the GEMMs (unless not
    ``gemm``), then with ``other`` the non-GEMM ops. Step i feeds one token per sequence with S + i
    tokens cached."""
    cfg = executed_model(cfg, wl)
    steps = last_step - first_step + 1
    run = _Run("decode", wl.batch, steps, 1, wl.seq_len + first_step, False)
    ops: list[Op] = []
    if gemm:
        ops = _per_layer_model_proj(cfg, wl, phase="decode", rows=wl.batch, steps=steps)
        ops += _altup_streams(cfg, wl, phase="decode", rows=wl.batch, steps=steps, end=False)
        ops += _stack_ops(cfg, wl, run)
        ops += _altup_streams(cfg, wl, phase="decode", rows=wl.batch, steps=steps, end=True)
        ops += _hyper_head(cfg, wl, phase="decode", rows=wl.batch, steps=steps)
        ops += _attn_res_ops(cfg, wl, phase="decode", rows=wl.batch, steps=steps)
        ops += _head_dense(cfg, wl, phase="decode", rows=wl.batch, steps=steps)
        ops.append(_lm_head(cfg, wl, phase="decode", rows=wl.batch, steps=steps))
    if other:
        rest = [_embedding_op(cfg, wl, phase="decode", rows=wl.batch, steps=steps)]
        rest += _other_stack_ops(cfg, wl, run)
        rest.append(_final_norm(cfg, wl, phase="decode", rows=wl.batch, steps=steps))
        ops += _sum_ops(rest, join_notes=True)
    return ops


def decode_ops(cfg: ModelConfig, wl: Workload) -> list[Op]:
    """Every GEMM of all ``new_tokens`` decode steps (empty when new_tokens = 0)."""
    if wl.new_tokens == 0:
        return []
    return _decode_range(cfg, wl, 0, wl.new_tokens - 1)


def decode_other_ops(cfg: ModelConfig, wl: Workload) -> list[Op]:
    """Every non-GEMM op of all ``new_tokens`` decode steps (empty when new_tokens = 0)."""
    if wl.new_tokens == 0:
        return []
    return _decode_range(cfg, wl, 0, wl.new_tokens - 1, other=True, gemm=False)


def phase_ops(cfg: ModelConfig, wl: Workload, which: str) -> list[Op]:
    """Every op of a phase, GEMMs first: :func:`prefill_ops` + :func:`prefill_other_ops` (or decode's)."""
    if which == "prefill":
        return prefill_ops(cfg, wl) + prefill_other_ops(cfg, wl)
    if wl.new_tokens == 0:
        return []
    return _decode_range(cfg, wl, 0, wl.new_tokens - 1, other=True)


# ----- time, memory, the whole estimate ------------------------------------------------------

def _timed(op: Op, hw: Hardware, dtype: str, eff: float | OpEfficiency) -> Op:
    dt = compute_dtype(op, dtype, hw)  # an fp8 run's attention and element-wise work stay in 16 bits
    if hasattr(eff, "timing"):  # a model of the op's time (the shape model): its own compute, memory and fixed terms
        t, compute, mem, fixed, why = eff.timing(op)
        ideal = roofline_time(op.flops, op.bytes, hw, dt, 1.0).seconds
        return replace(op, time_s=t, compute_s=compute, memory_s=mem, bound=bound_of(fixed, compute - fixed, mem - fixed),
                       efficiency=ideal / t if t else 1.0, efficiency_by=why)
    if callable(eff):  # the roofline at full speed, then this op's own efficiency on both terms
        t = roofline_time(op.flops, op.bytes, hw, dt, 1.0)
        e = _op_efficiency(eff, op)
        return replace(op, time_s=t.seconds / e, compute_s=t.compute_s / e, memory_s=t.memory_s / e, bound=t.bound,
                       efficiency=e, efficiency_by=getattr(eff, "label", "") or Text(N_("per op")))
    t = roofline_time(op.flops, op.bytes, hw, dt, eff)
    return replace(op, time_s=t.seconds, compute_s=t.compute_s, memory_s=t.memory_s, bound=t.bound,
                   efficiency=float(eff), efficiency_by=Text(N_("flat")))


def time_op(op: Op, hw: Hardware, dtype: str, efficiency: float | OpEfficiency = 1.0) -> Op:
    """``op`` with its roofline time on one ``hw`` device (max(FLOPs / peak, bytes / bandwidth), derated)."""
    return _timed(op, hw, dtype, efficiency)


def _decode_timed(cfg: ModelConfig, wl: Workload, hw: Hardware, dtype: str, eff: float | OpEfficiency,
                  per_gpu: Callable[[Op], Op] | None = None) -> list[Op]:
    """Decode ops with exact summed roofline times.

    Within a step every op's FLOPs and bytes grow with the keys the step meets, and the keys never
    shrink from one step to the next, so each op's compute − memory time is monotonic over the steps:
    its bound changes at most once. The step range is split there (found by bisection) and each part
    timed as one block (in a part every step has the same bound, so the max of the sums is the sum
    of the maxes). ``per_gpu`` maps each op to one device's share before it is timed (the
    scale-out model, :mod:`gemmlib.llm.parallel`); it must keep each op's FLOPs and bytes growing
    with the keys, as any fixed split does. A per-op efficiency derates both terms alike, so it does
    not move the split: the ops are timed at full speed, then each is divided by its own efficiency.
    """
    if wl.new_tokens == 0:
        return []
    last = wl.new_tokens - 1
    built: dict[tuple[int, int], list[Op]] = {}

    def rng(a: int, b: int) -> list[Op]:
        if (a, b) not in built:
            ops = _decode_range(cfg, wl, a, b, other=True)
            built[(a, b)] = [per_gpu(o) for o in ops] if per_gpu else ops
        return built[(a, b)]

    if hasattr(eff, "breakdown"):  # the shape model times each op's steps together, at their mean shape
        return [_timed(o, hw, dtype, eff) for o in rng(0, last)]
    if callable(eff):
        out = []
        for op in _decode_timed(cfg, wl, hw, dtype, 1.0, per_gpu):
            e = _op_efficiency(eff, op)
            out.append(replace(op, time_s=op.time_s / e, compute_s=op.compute_s / e, memory_s=op.memory_s / e,
                               efficiency=e, efficiency_by=getattr(eff, "label", "") or Text(N_("per op"))))
        return out

    total = rng(0, last)

    def excess(step_op: Op) -> float:  # compute - memory time of one step
        t = roofline_time(step_op.flops, step_op.bytes, hw, compute_dtype(step_op, dtype, hw), eff)
        return t.compute_s - t.memory_s

    first_ops = rng(0, 0)
    last_ops = rng(last, last) if last else first_ops
    out = []
    for i, op in enumerate(total):
        e0, e1 = excess(first_ops[i]), excess(last_ops[i])
        if (e0 >= 0) == (e1 >= 0):
            out.append(_timed(op, hw, dtype, eff))
            continue
        lo, hi = 0, last  # the bound of step lo is step 0's, of step hi the last step's
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if (excess(rng(mid, mid)[i]) >= 0) == (e0 >= 0):
                lo = mid
            else:
                hi = mid
        head, tail = rng(0, lo)[i], rng(hi, last)[i]
        dt = compute_dtype(op, dtype, hw)
        a = roofline_time(head.flops, head.bytes, hw, dt, eff)
        b = roofline_time(tail.flops, tail.bytes, hw, dt, eff)
        bound = "compute" if a.compute_s + b.compute_s >= a.memory_s + b.memory_s else "memory"
        out.append(replace(op, time_s=a.seconds + b.seconds, compute_s=a.compute_s + b.compute_s,
                           memory_s=a.memory_s + b.memory_s, bound=f"{bound} (mixed)", efficiency=float(eff),
                           efficiency_by=Text(N_("flat"))))
    return out


class OpSums:
    """What a phase's ops add up to (``self.ops``): the sums one GPU's phase and the whole job's share
    (:class:`PhaseTotals`, :class:`gemmlib.llm.parallel.ParallelPhase`)."""

    ops: tuple[Op, ...]

    @property
    def gemm_ops(self) -> tuple[Op, ...]:
        return tuple(o for o in self.ops if o.is_gemm)

    @property
    def other_ops(self) -> tuple[Op, ...]:
        return tuple(o for o in self.ops if not o.is_gemm)

    @property
    def ops_time_s(self) -> float:
        """Every op's time (GEMM and not), communication apart."""
        return sum(o.time_s for o in self.ops)

    @property
    def gemm_time_s(self) -> float:
        return sum(o.time_s for o in self.ops if o.is_gemm)

    @property
    def other_time_s(self) -> float:
        return sum(o.time_s for o in self.ops if not o.is_gemm)

    @property
    def gemm_share_of_time(self) -> float | None:
        """The GEMMs' share of the ops' time."""
        return gemm_share(self.ops)["time_share"]

    def by_name(self) -> dict[str, Op]:
        return {o.name: o for o in self.ops}


@dataclass(frozen=True)
class PhaseTotals(OpSums):
    """One phase (prefill or decode) on one device: its ops, timed, and their totals."""

    name: str
    ops: tuple[Op, ...]

    @property
    def flops(self) -> int:
        """GEMM FLOPs: the exact count (what FlopCounterMode reports)."""
        return sum(o.flops for o in self.ops if o.is_gemm)

    @property
    def other_flops(self) -> int:
        """Element-wise FLOPs of the non-GEMM ops (norms, softmax, activation, ...)."""
        return sum(o.flops for o in self.ops if not o.is_gemm)

    @property
    def macs(self) -> int:
        return self.flops // 2

    @property
    def bytes(self) -> float:
        """Every op's traffic, GEMM and not."""
        return sum(o.bytes for o in self.ops)

    @property
    def time_s(self) -> float:
        return self.ops_time_s

    @property
    def gemm_share_of_flops(self) -> float | None:
        return gemm_share(self.ops)["flop_share"]

    def to_dict(self) -> dict:
        return {"flops": self.flops, "macs": self.macs, "other_flops": self.other_flops, "bytes": self.bytes,
                "time_s": self.time_s, "gemm_time_s": self.gemm_time_s, "other_time_s": self.other_time_s,
                "gemm_share_of_flops": self.gemm_share_of_flops, "gemm_share_of_time": self.gemm_share_of_time,
                "ops": [o.to_dict() for o in self.ops]}


@dataclass(frozen=True)
class Memory:
    weights_bytes: float
    kv_cache_bytes: float  # at the end: batch · (S + N) tokens per sequence (sliding layers: the window)
    capacity_bytes: float  # gpus × device memory
    gpus: int

    @property
    def total_bytes(self) -> float:
        return self.weights_bytes + self.kv_cache_bytes

    @property
    def fits(self) -> bool:
        return self.total_bytes <= self.capacity_bytes

    @property
    def min_gpus(self) -> int:
        """Devices of this kind the weights and the final cache need at the least."""
        per = self.capacity_bytes / self.gpus
        return max(1, math.ceil(self.total_bytes / per))

    def to_dict(self) -> dict:
        return {"weights_bytes": self.weights_bytes, "kv_cache_bytes": self.kv_cache_bytes,
                "total_bytes": self.total_bytes, "capacity_bytes": self.capacity_bytes,
                "gpus": self.gpus, "fits": self.fits, "min_gpus": self.min_gpus}


def tower_bytes(cfg: ModelConfig, wl: Workload) -> int:
    """Bytes of a multimodal wrapper's encoders (``cfg.tower_params``) as an engine loads them: at the weight dtype
    when it is 16 or 32 bits, else at 16 (a quantized checkpoint leaves its vision tower unquantized)."""
    if not cfg.tower_params:
        return 0
    b = get_dtype(wl.weight_dtype).bytes if wl.weight_dtype in DTYPES else 2  # (int4, fp4: weight formats)
    return int(cfg.tower_params * (b if b >= 2 else 2))


def weights_bytes(cfg: ModelConfig, wl: Workload) -> int:
    """Bytes of the weights a forward pass loads: every tensor of the checkpoint at the weight dtype,
    or in its quantized layout (gemmlib.llm.checkpoint); multi-token-prediction layers left out; a multimodal
    wrapper's encoders beside the decoder (:func:`tower_bytes`)."""
    return checkpoint_size(cfg, wl.weight_dtype, mtp=False).bytes + tower_bytes(cfg, wl)


def kv_cache_bytes(cfg: ModelConfig, wl: Workload) -> float:
    """The KV cache when the last token is in: batch · every layer's cached tokens (a sliding layer keeps
    window − 1) · its elements per token (MLA: the latent + rotary key) · the KV dtype's bytes; a hybrid's mixer
    layers add their fixed state (conv + recurrent, per sequence, whatever the context), at the KV dtype; Inkling's
    short convolutions theirs (k inputs per channel, four per layer) in fp32."""
    engine = _engine_convention(wl)
    elements = cfg.kv_cache_elements(wl.final_tokens, engine=engine) + cfg.state_elements(engine)
    # Inkling's short convolutions keep their state in fp32, whatever the KV dtype; Qwen4-Exp's token ids and
    # (transformers) rotary positions are int64
    return (elements * get_dtype(wl.kv_dtype).bytes + cfg.short_conv_state(engine) * 4
            + cfg.int64_cache(wl.final_tokens, engine=engine) * 8) * wl.batch


def memory(cfg: ModelConfig, wl: Workload, hw: Hardware, gpus: int = 1) -> Memory:
    """Weights (exact checkpoint bytes) and the KV cache at the KV dtype when the last token is in."""
    return Memory(float(weights_bytes(cfg, wl)), float(kv_cache_bytes(cfg, wl)), float(hw.memory_bytes * gpus),
                  int(gpus))


def position_warnings(cfg: ModelConfig, wl: Workload) -> list[Text]:
    """Why the answer may not hold: a context past what a rotary model was trained for (the learned
    position table of GPT-2-style models refuses it: :func:`check_positions`)."""
    out = []
    n = wl.final_tokens
    if not cfg.learned_positions and cfg.max_positions and n > cfg.max_positions:
        out.append(Text(N_("{n:,} tokens per sequence is past {model}'s max_position_embeddings ({limit:,}): the "
                           "count holds, the model's output may not"), n=n, model=cfg.name, limit=cfg.max_positions))
    return out


def check_positions(cfg: ModelConfig, wl: Workload) -> None:
    """A learned position table has a row per position: a longer sequence cannot run at all."""
    if cfg.learned_positions and wl.final_tokens > cfg.learned_positions:
        raise InputError(N_("{name} has a learned position table of {learned_positions:,} positions; {final_tokens:,} "
                            "tokens per sequence (prompt + new tokens) do not fit"),
                         name=cfg.name, learned_positions=cfg.learned_positions, final_tokens=wl.final_tokens)


def decode_timed(cfg: ModelConfig, wl: Workload, hw: Hardware, dtype: str, efficiency: float = 1.0,
                 per_gpu: Callable[[Op], Op] | None = None) -> list[Op]:
    """Every decode op (GEMM and not) with its exact roofline time summed over the steps, on one ``hw``
    device; with ``per_gpu``, each op is first mapped to one device's share."""
    _check_efficiency(efficiency)
    return _decode_timed(cfg, wl, hw, dtype, efficiency, per_gpu)


@dataclass(frozen=True)
class Estimate:
    """The answer for one model, workload and hardware: on one device (:func:`estimate`) or on many
    (:func:`gemmlib.llm.scaleout.estimate`, which adds its part as ``scale_out``).

    ``prefill`` and ``decode`` are :class:`PhaseTotals` on one device, or
    :class:`gemmlib.llm.parallel.ParallelPhase` (one GPU's timed share, the whole job's exact counts and the
    communication) beyond it; either way ``time_s`` is the phase's time and ``flops`` the whole job's.
    ``scale_out`` (a :class:`gemmlib.llm.scaleout.ScaleOut`): the parallel layout, per-GPU memory, the
    largest batch that fits, training and serving; None on one device.
    """

    model: ModelConfig  # the model as the workload's convention runs it (:func:`executed_model`)
    workload: Workload
    hardware: Hardware  # one device, as given
    efficiency: float  # the one derating factor; 1.0 when a per-op efficiency was used
    prefill: OpSums
    decode: OpSums
    memory: Memory  # the whole job against every GPU's memory
    efficiency_model: str = ""  # what set each op's efficiency when it was not one number
    read_info: dict = field(default_factory=dict, compare=False)  # the config.json parser's report
    efficiency_detail: dict = field(default_factory=dict, compare=False)  # the model, its constants, its sources
    scale_out: object | None = None  # gemmlib.llm.scaleout.ScaleOut beyond one device
    as_read: ModelConfig | None = field(default=None, compare=False)  # the model as its config reads, when it ran apart

    @property
    def efficiency_label(self) -> str:
        return self.efficiency_model or f"{self.efficiency:g}"

    @property
    def gpus(self) -> int:
        return self.scale_out.parallel.gpus if self.scale_out is not None else 1

    # the parts beyond one GPU (None on one device)
    @property
    def parallel(self):
        return None if self.scale_out is None else self.scale_out.parallel

    @property
    def per_gpu(self):
        return None if self.scale_out is None else self.scale_out.per_gpu

    @property
    def max_batch(self) -> int | None:
        return None if self.scale_out is None else self.scale_out.max_batch

    @property
    def memory_utilization(self) -> float | None:
        return None if self.scale_out is None else self.scale_out.memory_utilization

    @property
    def train(self):
        return None if self.scale_out is None else self.scale_out.train

    @property
    def serving(self):
        return None if self.scale_out is None else self.scale_out.serving

    @property
    def compute_dtype(self) -> str:
        return self.workload.act_dtype

    @property
    def ttft_s(self) -> float | None:
        """Time to first token = the prefill (None for a decode-only workload: there is none)."""
        return None if self.workload.decode_only else self.prefill.time_s

    @property
    def time_per_output_token_s(self) -> float | None:
        n = self.workload.new_tokens
        return self.decode.time_s / n if n else None

    @property
    def decode_tokens_per_s(self) -> float | None:
        """Generated tokens per second over the decode, whole batch."""
        t = self.decode.time_s
        return self.workload.batch * self.workload.new_tokens / t if t else None

    @property
    def prefill_tokens_per_s(self) -> float | None:
        if self.workload.decode_only:
            return None
        t = self.prefill.time_s
        return self.workload.prefill_tokens / t if t else math.inf

    @property
    def total_s(self) -> float:
        return self.prefill.time_s + self.decode.time_s

    def times(self) -> dict:
        return {"ttft_s": self.ttft_s, "time_per_output_token_s": self.time_per_output_token_s,
                "decode_tokens_per_s": self.decode_tokens_per_s,
                "prefill_tokens_per_s": self.prefill_tokens_per_s,
                "prefill_s": self.prefill.time_s, "decode_s": self.decode.time_s, "total_s": self.total_s}

    def conventions(self) -> dict:
        """Which counting convention the answer used, each switch, and what was set apart from it."""
        return self.workload.conventions()

    def efficiency_json(self) -> dict:
        """The JSON ``efficiency_model``: what set each op's efficiency (the model, its sources, each op's share)."""
        d = dict(self.efficiency_detail) or {"kind": "per op" if self.efficiency_model else "flat",
                                            "label": self.efficiency_label}
        d["ops"] = {ph.name: {o.name: {"efficiency": o.efficiency, "by": o.efficiency_by} for o in ph.ops}
                    for ph in (self.prefill, self.decode)}
        return d

    def to_dict(self) -> dict:
        """Everything, JSON-ready (the CLI's --json and the page's download). Compute it once and pass it on:
        the counting variants rebuild op lists."""
        hw, wl = self.hardware, self.workload
        ic = hw.interconnect
        d = {
            "model": self.model.summary(),
            "workload": asdict(wl),
            "conventions": self.conventions(),
            "hardware": {"name": hw.name, "gpus": self.gpus, "efficiency": self.efficiency,
                         "efficiency_model": self.efficiency_model or None,
                         "compute_dtype": self.compute_dtype, "peak_flops_per_gpu": hw.peak(self.compute_dtype),
                         "bandwidth_per_gpu": hw.bandwidth, "memory_bytes_per_gpu": hw.memory_bytes,
                         "memory_source": hw.memory_source, "source": hw.source,
                         "interconnect": None if ic is None else {
                             "scale_up": ic.scale_up, "scale_up_bytes_per_s": ic.scale_up_bytes_per_s,
                             "pcie": ic.pcie, "pcie_bytes_per_s": ic.pcie_bytes_per_s, "network": ic.network,
                             "network_bytes_per_s": ic.network_bytes_per_s, "gpus_per_node": ic.gpus_per_node,
                             "source": ic.source}},
            "efficiency_model": self.efficiency_json(),
            "prefill": self.prefill.to_dict(),
            "decode": {**self.decode.to_dict(), "steps": wl.new_tokens},
            "memory": self.memory.to_dict(),
            "times": self.times(),
            "variants": counting_variants(self.model, wl, known={(wl.causal, wl.lm_head): (self.prefill.flops,
                                                                                           self.decode.flops)}),
            "rules_of_thumb": rules_of_thumb(self.model, wl, prefill=_whole_ops(self.prefill)),
            "warnings": position_warnings(self.model, wl),
            "read": self.read(),
        }
        if self.scale_out is not None:
            d.update(self.scale_out.to_dict(self))
        return d

    def read(self) -> dict:
        """What was read (family, attention pattern, MLA, experts, quantization, dtype, ignored keys) and
        where the weight dtype comes from."""
        return read_of(self.as_read or self.model, self.workload, self.read_info)

    def to_json(self, indent: int | None = None) -> str:
        """:meth:`to_dict` as strict JSON (a non-finite number becomes null)."""
        return dumps(self.to_dict(), indent=indent)


def _whole_ops(ph) -> tuple[Op, ...]:
    """The whole job's ops of a phase (a ParallelPhase keeps them in ``total``)."""
    total = getattr(ph, "total", None)
    return total.ops if total is not None else ph.ops


def dumps(d: dict, indent: int | None = None) -> str:
    """``d`` as strict JSON (a non-finite number becomes null)."""
    import json

    return json.dumps(_finite(d), indent=indent, allow_nan=False)


def _finite(o):
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {k: _finite(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_finite(v) for v in o]
    return o


# A per-op efficiency: op -> the share of the roofline ``hw`` reaches on it (ideal time / real time).
OpEfficiency = Callable[[Op], float]


def _check_efficiency(efficiency) -> None:
    if callable(efficiency):
        return
    if isinstance(efficiency, bool) or not isinstance(efficiency, (int, float)) or not 0 < efficiency <= 1:
        raise InputError(N_("efficiency must be a number in (0, 1], got {efficiency!r}"),
                         efficiency=efficiency)


def _op_efficiency(efficiency: OpEfficiency, op: Op) -> float:
    e = float(efficiency(op))
    if not math.isfinite(e) or e <= 0:
        raise InputError(N_("the per-op efficiency of {name} ({phase}) is {e!r}; it must be positive"),
                         name=op.name, phase=op.phase, e=e)
    return e


def read_of(cfg: ModelConfig, wl: Workload, info: dict | None = None) -> dict:
    """What was read from the configuration (``gemmlib.llm.hf.describe_read`` with the parser's report
    ``info``), where the weight dtype comes from, and the checkpoint's tensor bytes (MTP layers and a multimodal
    wrapper's encoders included; ``tower_bytes`` the encoders')."""
    d = describe_read(cfg, info or {})
    d["weight_dtype_source"] = weight_dtype_source(cfg, wl)
    d["tower_bytes"] = tower_bytes(cfg, wl)  # a multimodal wrapper's encoders, beside the decoder's tensors
    d["checkpoint_bytes"] = checkpoint_size(cfg, wl.weight_dtype).bytes + d["tower_bytes"]
    return d


def activation_format(cfg: ModelConfig) -> str | None:
    """The dtype a quantized checkpoint's linears take their inputs in (fp8 W8A8, int8, NVFP4 W4A4), or None
    for a weight-only format (AWQ, GPTQ, bitsandbytes, mxfp4) or an unquantized checkpoint."""
    q = cfg.quant
    if q is None:
        return None
    if q.method == "fp8":
        return "fp8"
    if q.method == "modelopt":
        return "fp4"
    if q.method == "compressed-tensors" and q.activations:
        if q.num_bits_type == "float":
            return "fp8" if q.bits == 8 else "fp4"
        return "int8" if q.bits == 8 else None
    return None


def serving_dtypes(cfg: ModelConfig, hw: Hardware | None = None, convention: str = DEFAULT_CONVENTION) -> dict:
    """The weight, activation and KV dtypes a convention runs ``cfg``'s checkpoint at (``why`` says why).

    ``engine``: the checkpoint's own dtype, a 32-bit one served in 16 bits (vLLM's ``dtype="auto"``); a
    checkpoint whose linears take fp8 (int8, fp4) inputs multiplies in that dtype where ``hw`` has the
    path (else weight-only, at 16 bits, as vLLM's Marlin kernels run fp8 on an A100); the KV cache in the
    16-bit model dtype (``kv_cache_dtype="auto"``). ``transformers``: weights at the checkpoint's dtype,
    activations and KV in bf16 (the estimator's reference set-up)."""
    ckpt = cfg.dtype or "bf16"
    if convention == REFERENCE:
        return {"weight_dtype": ckpt, "act_dtype": "bf16", "kv_dtype": "bf16",
                "why": Text(N_("weights at the checkpoint's dtype; activations and KV cache bf16"))}
    wide = ckpt if ckpt in ("bf16", "fp16") else "bf16"
    if hw is not None and hw.peak(wide) is None:  # the other 16-bit format, where the GPU has only that one
        other = "bf16" if wide == "fp16" else "fp16"
        wide = other if hw.peak(other) is not None else wide
    act = wide
    why = Text(N_("the checkpoint's {dtype}"), dtype=ckpt) if ckpt == wide else \
        Text(N_("a {dtype} checkpoint served in 16 bits ({wide}), as vLLM's dtype='auto' does"), dtype=ckpt, wide=wide)
    fmt = activation_format(cfg)
    if fmt is not None:
        if hw is None or hw.peak(fmt) is not None:
            act = fmt
            why = Text(N_("{quant}: its linears multiply in {act}"), quant=cfg.quant.label or cfg.quant.method, act=fmt)
        else:
            why = Text(N_("{quant} on {gpu}, which has no {act} path: weight-only, multiplied in {wide}"),
                       quant=cfg.quant.label or cfg.quant.method, gpu=hw.name, act=fmt, wide=wide)
    return {"weight_dtype": ckpt if cfg.quant is not None else wide, "act_dtype": act, "kv_dtype": wide, "why": why}


def weight_dtype_source(cfg: ModelConfig, wl: Workload) -> Text:
    """Where the workload's weight dtype comes from, in words."""
    wd = wl.weight_dtype
    if cfg.quant is not None:
        # AWQ and GPTQ store their other tensors in fp16 whatever the weight dtype (it said the weight dtype's)
        return Text(N_("{quant} from its quantization_config; other tensors {dtype}"),
                    quant=cfg.quant.label or cfg.quant.method, dtype=cfg.quant.unquantized_dtype or wd)
    if cfg.dtype and wd == cfg.dtype:
        return Text(N_("the config's torch_dtype"))
    if not cfg.dtype:
        return (Text(N_("chosen; the config gives no torch_dtype")) if wd != "bf16" else
                Text(N_("default; the config gives no torch_dtype")))
    if wl.convention != REFERENCE and wd in ("bf16", "fp16") and get_dtype(cfg.dtype).bytes >= 2:
        # a 32-bit checkpoint served in 16 bits, or one 16-bit format in the other where the GPU has only that
        return Text(N_("the config's torch_dtype {dtype}, served in {served} as an engine does"), dtype=cfg.dtype,
                    served=wd)
    if wl.convention != REFERENCE and wd == "bf16":
        # an 8-bit torch_dtype with no quantization_config (no scales to multiply it in 8 bits with), served at the
        # engine's 16 bits (fp16 only where a GPU lacks bf16, which the workload does not record: read as chosen)
        return Text(N_("the config's torch_dtype {dtype} with no quantization_config, served in {served} as vLLM's "
                       "dtype='auto' does"), dtype=cfg.dtype, served=wd)
    return Text(N_("chosen; the config's torch_dtype is {dtype}"), dtype=cfg.dtype)


def efficiency_for(efficiency, hw: Hardware, cfg: ModelConfig, wl: Workload, par=None):
    """The efficiency an estimate uses: None → the shape model (:func:`gemmlib.llm.efficiency.shape_model`),
    a number → that flat share (said so), a callable → as given. Returns (efficiency, label, detail)."""
    if efficiency is None:
        eff = shape_model(hw, cfg, wl, par)
        if isinstance(eff, FlatEfficiency):
            return eff, "", eff.describe(Text(N_("no shape model for a CPU row: flat {e:.0%}"), e=float(eff)))
        return eff, eff.label, eff.describe()
    _check_efficiency(efficiency)
    if callable(efficiency):
        label = getattr(efficiency, "label", "") or Text(N_("per op"))
        detail = efficiency.describe() if hasattr(efficiency, "describe") else {"kind": "per op", "label": label}
        return efficiency, label, detail
    flat = FlatEfficiency(float(efficiency))
    return flat, "", flat.describe(Text(N_("forced: --efficiency {e:g}"), e=float(efficiency)))


def estimate(cfg: ModelConfig, wl: Workload, hw: Hardware, efficiency: float | OpEfficiency | None = None,
             efficiency_model: str = "", read_info: dict | None = None) -> Estimate:
    """The whole answer for one model, workload and device: ops, totals, memory and times.

    One device runs everything. Several GPUs (tensor, pipeline, expert and data parallelism with
    their communication) are :func:`gemmlib.llm.scaleout.estimate`. ``efficiency``: None (default) is the
    shape model of :mod:`gemmlib.llm.efficiency`; one number in (0, 1] forces that share for every op; a
    function of the op (``OpEfficiency``, e.g. ``gemmlib.llm.calibrated``'s: each op at the efficiency
    measured for its shape) may exceed 1 when ``hw`` is not the op's true roof. ``efficiency_model`` says
    what a function is. ``read_info`` is the parser's report of the config.json
    (``gemmlib.llm.hf.read_config``), shown under "read" in the JSON.
    """
    check_positions(cfg, wl)
    dtype = wl.act_dtype
    if hw.peak(dtype) is None:
        raise hw.missing_peak_error(dtype)
    read, cfg = cfg, executed_model(cfg, wl)
    eff, label, detail = efficiency_for(efficiency, hw, cfg, wl)
    pre = tuple(_timed(o, hw, dtype, eff) for o in prefill_ops(cfg, wl) + prefill_other_ops(cfg, wl))
    dec = tuple(_decode_timed(cfg, wl, hw, dtype, eff))
    per_op = callable(eff)
    return Estimate(cfg, wl, hw, 1.0 if per_op else float(eff), PhaseTotals("prefill", pre),
                    PhaseTotals("decode", dec), memory(cfg, wl, hw), efficiency_model or label,
                    dict(read_info or {}), detail, as_read=read if read is not cfg else None)


# ----- switches, rules of thumb, attention share ---------------------------------------------

def total_flops(ops: list[Op]) -> int:
    return sum(o.flops for o in ops)


VARIANTS = ((N_("dense attention, LM head on every position (transformers' eager count)"), False, "all"),
            (N_("causal: lower triangle with its diagonal"), True, "all"),
            (N_("LM head on the last position only"), False, "last"),
            (N_("causal + LM head last (what an engine runs)"), True, "last"))


def counting_variants(cfg: ModelConfig, wl: Workload, known: dict | None = None) -> list[dict]:
    """Prefill and decode FLOPs under each counting switch (the workload's own row marked ``selected``).

    ``known``: {(causal, lm_head): (prefill FLOPs, decode FLOPs)} already counted (the estimate's own).
    """
    known = dict(known or {})
    rows = []
    for label, causal, head in VARIANTS:
        if (causal, head) in known:
            pf, df = known[(causal, head)]
        else:
            w = replace(wl, causal=causal, lm_head=head)
            pf = total_flops(prefill_ops(cfg, w))
            df = total_flops(decode_ops(cfg, w))
            known[(causal, head)] = (pf, df)
        rows.append({"variant": Text(label), "causal": causal, "lm_head": head,
                     "selected": (causal, head) == (wl.causal, wl.lm_head),
                     "prefill_flops": pf, "prefill_macs": pf // 2, "decode_flops": df, "decode_macs": df // 2})
    return rows


def rules_of_thumb(cfg: ModelConfig, wl: Workload, prefill: list[Op] | tuple[Op, ...] | None = None) -> list[dict]:
    """The article's sizing rules beside the exact prefill count, with the ratio and why each is off
    (none for a decode-only workload: the rules size a prefill). ``prefill``: the prefill's ops, when
    already built."""
    if wl.decode_only:
        return []
    ops = [o for o in (prefill_ops(cfg, wl) if prefill is None else prefill) if o.is_gemm]
    exact = total_flops(ops)
    lin = exact - sum(o.flops for o in ops if o.name in ATTENTION_PRODUCTS)
    att = exact - lin
    p, s, b, d = cfg.params, wl.seq_len, wl.batch, cfg.hidden
    rule1 = p * s * s / (3 * d) * b
    rule2 = p * s * b / 100
    rule3 = 2 * p * s * b
    rows = [
        {"rule": Text(N_("Params·seq²/(3·d_model) × batch")), "value": rule1,
         "reason": Text(N_("counts only the seq²·d attention products and rescales them by params/d²; it misses "
                           "the weight GEMMs (≈ 2·params per token), which are {share:.0%} of the exact count "
                           "here"), share=lin / exact)},
        {"rule": Text(N_("params × seq × concurrency ÷ 100")), "value": rule2,
         "reason": Text(N_("÷ 100 is an unexplained fudge factor with no units; a forward pass costs about "
                           "2·params FLOPs per token, i.e. 200× this figure, plus the attention products"))},
        {"rule": Text(N_("2·N per token (N = all parameters) × tokens")), "value": rule3,
         "reason": _two_n_reason(cfg, wl, att, exact)},
    ]
    for r in rows:
        r["exact"] = exact
        r["ratio"] = exact / r["value"] if r["value"] else math.inf
    return rows


def _two_n_reason(cfg: ModelConfig, wl: Workload, att: int, exact: int) -> Text:
    parts = [Text(N_("misses the attention products ({share:.1%} of the exact count here, growing with seq)"),
                  share=att / exact)]
    lookup = cfg.lookup_params  # (Qwen4-Exp's n-gram tables too: every row of them is looked up, none multiplied)
    if lookup:
        parts.append(Text(N_("counts {n:,} embedding/position weights that are looked up, not multiplied"),
                          n=lookup))
    if cfg.is_moe:
        parts.append(Text(N_("counts all {experts} experts while each token runs {k}"), experts=cfg.experts,
                          k=cfg.experts_per_token))
    if wl.lm_head == "last":
        parts.append(Text(N_("charges the LM head at every position while only the last one is computed")))
    if cfg.executed_layers != cfg.layers:  # a looped stack (Inkling-2-Mini, Dory, HRM-Text)
        parts.append(Text(N_("counts each of the {layers} stored layers once while {runs} layer runs compute per "
                             "token"), layers=cfg.layers, runs=cfg.executed_layers))
    parts.append(Text(N_("counts norm weights and biases, which do no GEMM")))
    return Text.joined(parts)


def block_ops(cfg: ModelConfig, seq_len: int, hw: Hardware, *, batch: int = 1, layers: int | None = None,
              attention: str = "eager", dtype: str = "bf16", efficiency: float = 1.0,
              causal: bool = False) -> list[Op]:
    """Every op, GEMM and not, of ``layers`` layers (default: all) in a prefill, timed on ``hw``.

    The profiler's prediction of a stack of blocks: no embedding, no LM head. ``causal``: the
    attention products cover the lower triangle only (a fused causal kernel).
    """
    _check_efficiency(efficiency)
    n = cfg.layers if layers is None else int(layers)
    if n < 1:
        raise InputError(N_("layers must be at least 1, got {layers!r}"), layers=layers)
    wl = Workload(batch=batch, seq_len=seq_len, weight_dtype=dtype, act_dtype=dtype, kv_dtype=dtype,
                  attention=attention, causal=bool(causal))
    if hw.peak(dtype) is None:
        raise InputError(N_("{name} has no {dtype} GEMM path in the catalogue; pick another dtype or device"),
                         name=hw.name, dtype=dtype)
    run = _prefill_run(wl, tri=wl.causal)
    groups = [(a, m, c) for a, m, c in _layer_groups(cfg, n)]
    ops = _stack_ops(cfg, wl, run, groups) + _other_stack_ops(cfg, wl, run, groups)
    return [_timed(o, hw, dtype, efficiency) for o in ops]


def _layer_groups(cfg: ModelConfig, n: int) -> list[tuple[str, str, int]]:
    """The kinds of the first ``n`` layers, with their counts."""
    counts: dict[tuple[str, str], int] = {}
    for a, m in list(zip(cfg.attention_kinds, cfg.mlp_kinds, strict=True))[:n]:
        if a != "X":  # (runs only with an image)
            counts[(a, m)] = counts.get((a, m), 0) + 1
    if n > cfg.layers:  # more blocks than the model has: repeat the first layer's kind
        key = (cfg.attention_kinds[0], cfg.mlp_kinds[0])
        counts[key] = counts.get(key, 0) + n - cfg.layers
    return [(a, m, c) for (a, m), c in counts.items()]


def gemm_share(ops: list[Op] | tuple[Op, ...]) -> dict:
    """GEMM share of FLOPs and of time over timed ops: the one answer the home page, the estimator
    and the profiler give to "how much of an LLM is GEMM?"."""
    g = [o for o in ops if o.is_gemm]
    rest = [o for o in ops if not o.is_gemm]
    gf, of = sum(o.flops for o in g), sum(o.flops for o in rest)
    gt, ot = sum(o.time_s for o in g), sum(o.time_s for o in rest)
    return {"gemm_flops": gf, "other_flops": of, "gemm_time_s": gt, "other_time_s": ot,
            "flop_share": gf / (gf + of) if gf + of else None, "time_share": gt / (gt + ot) if gt + ot else None}


def share_overview(cfg: ModelConfig, seq_lens: tuple[int, ...], hw: Hardware, dtype: str = "bf16",
                   efficiency: float = 1.0) -> list[dict]:
    """GEMM share of FLOPs and of predicted time of one layer, per sequence length, eager and fused.

    Eager attention sends the S×S scores through memory for scale, mask and softmax; a fused
    kernel does not. Nearly all of the FLOPs are GEMM; less of the time.
    """
    rows = []
    for s in seq_lens:
        for attention in ATTENTION_KINDS:
            sh = gemm_share(block_ops(cfg, int(s), hw, layers=1, attention=attention, dtype=dtype,
                                      efficiency=efficiency))
            rows.append({"tokens": int(s), "attention": attention,
                         "GEMM share of FLOPs": sh["flop_share"], "GEMM share of time": sh["time_share"]})
    return rows


def attention_share(cfg: ModelConfig, seq_len: int, causal: bool = False) -> float:
    """Share of one layer's GEMM FLOPs spent in Q·Kᵀ and weights·V at this sequence length."""
    ops = layer_ops(cfg, seq_len, causal=causal)
    att = sum(o.flops for o in ops if o.name in ATTENTION_PRODUCTS)
    return att / total_flops(ops)


def attention_crossover(cfg: ModelConfig, causal: bool = False) -> float:
    """Sequence length at which the attention products equal the rest of the layer.

    Per layer and sequence, the weight GEMMs cost s·W with W = 2·(hidden·(2·q_dim + 2·kv_dim)
    + k·mats·hidden·ffn + hidden·experts) and the products 4·s²·q_dim (dense) or
    2·s·(s+1)·q_dim (causal). Equal at s = W / (4·q_dim), or W / (2·q_dim) − 1 when causal.
    For MHA with a plain 4·d MLP, W = 24·d², so s = 6·d (dense) and 12·d − 1 (causal).
    """
    w = 2 * (cfg.hidden * (2 * cfg.q_dim + 2 * cfg.kv_dim)
             + cfg.active_experts * cfg.mlp_mats * cfg.hidden * cfg.ffn
             + (cfg.hidden * cfg.experts if cfg.is_moe else 0))
    return w / (2 * cfg.q_dim) - 1 if causal else w / (4 * cfg.q_dim)


def share_curve(cfg: ModelConfig, seq_lens: list[int], causal: bool = False) -> list[dict]:
    """Attention-product share for each sequence length (for a chart)."""
    return [{"seq_len": int(s), "share": attention_share(cfg, int(s), causal)} for s in seq_lens]


def layer_model(seq_len: int, d_model: int, heads: int, ffn: int, gated: bool,
                kv_heads: int = 0) -> ModelConfig:
    """A one-layer config for the explainer page (vocab is irrelevant there: no LM head is counted).

    The head dimension is d_model / heads, so heads must divide d_model; the error names the inputs
    that exist on that page (d_model and heads) and the nearest head counts that work.
    """
    if isinstance(heads, int) and isinstance(d_model, int) and heads >= 1 and d_model >= 1 and d_model % heads:
        near = sorted((h for h in range(1, min(d_model, 4096) + 1) if d_model % h == 0),
                      key=lambda h: (abs(h - heads), h))[:3]
        raise InputError(N_("d_model {d_model:,} is not divisible by {heads} heads, so the head dimension d_model / "
                            "heads is not a whole number; choose heads that divide d_model, e.g. {choices}"),
                         d_model=d_model, heads=heads, choices=", ".join(str(h) for h in sorted(near)))
    return ModelConfig(layers=1, hidden=d_model, heads=heads, kv_heads=kv_heads, ffn=ffn, vocab=1,
                       mlp="gated" if gated else "plain", name="one layer")
