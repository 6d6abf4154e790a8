"""Exact per-GEMM accounting of a decoder-only transformer: FLOPs, bytes, memory, time.

Conventions (shared/design.md, one set everywhere):

* One multiply-add = 2 FLOPs; a GEMM of M×K by K×N costs 2·M·N·K.
* Default = what an eager PyTorch forward pass executes, which is what
  ``torch.utils.flop_counter.FlopCounterMode`` counts: dense S×S attention
  products for every query head (GQA shrinks k_proj/v_proj and the KV cache,
  not the products), the LM head over every position, the router as a GEMM,
  and each token through ``experts_per_token`` experts. Softmax, norms,
  activations and residual adds are not GEMMs: their FLOPs are never part of
  a GEMM count (``PhaseTotals.flops``).
* The rest of a layer is counted too, as ops of kind ``"other"``
  (:func:`prefill_other_ops`, :func:`decode_other_ops`): norms, rotary
  embedding, the GQA K/V repeat and scale + mask + softmax of eager attention,
  the activation, residual adds, MoE routing and the embedding gather, each
  with the bytes an eager kernel reads and writes and its element-wise FLOPs.
  They are memory-bound; the estimate's time includes them, and the GEMM share
  of FLOPs and of time (:func:`gemm_share`) is computed from both.
* ``attention="fused"`` (a flash / SDPA kernel): the same GEMM FLOPs, but the
  S×S scores stay on chip (no score bytes, no separate softmax, no K/V repeat).
* Switches: ``causal`` counts only the lower triangle with its diagonal
  (S·(S+1)/2 scores per head); ``lm_head="last"`` runs the head on the last
  position of each sequence only. MACs are FLOPs / 2 (see :attr:`Op.macs`).
* Decode: ``new_tokens = N`` is N steps after the prefill; step i (from 0)
  feeds one token per sequence while S + i tokens are cached, so its query
  meets S + i + 1 keys. Decode totals cover every step and the whole batch.

Bytes are the minimum traffic of each GEMM run on its own: weights at the
weight dtype (read once per run: once per layer in prefill, once per layer and
step in decode; a MoE reads only the experts its tokens reach, at most all of
them), activations in and out at the activation dtype, and K/V at the KV
dtype (the whole cache, every decode step). The score matrix is materialised,
as eager attention does.

Time per op is the roofline ``max(FLOPs / peak, bytes / bandwidth)`` derated by
an efficiency, through :func:`gemmlib.core.flops.roofline_time`; the peak is the
one for the activation dtype (weight-only quantisation still multiplies in the
activation dtype). This module times one device running the whole model;
:mod:`gemmlib.llm.parallel` shards each op across GPUs (by :data:`SHARDING`
and :attr:`Op.routed`) and adds the communication. Pass a :class:`Hardware`
made with ``with_overrides`` to use measured ceilings instead of the datasheet.

This module never imports torch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace

from gemmlib.core.dtypes import get_dtype
from gemmlib.core.errors import InputError
from gemmlib.core.flops import roofline_time
from gemmlib.core.hardware import Hardware
from gemmlib.llm.config import ModelConfig

OP_NAMES = ("q_proj", "k_proj", "v_proj", "o_proj", "attn_scores", "attn_values",
            "router", "gate_proj", "up_proj", "down_proj", "lm_head")
OTHER_OP_NAMES = ("embedding", "norms", "rotary", "kv_repeat", "attn_softmax", "activation", "moe_routing",
                  "residual")
ATTENTION_PRODUCTS = ("attn_scores", "attn_values")
LM_HEAD_MODES = ("all", "last")
ATTENTION_KINDS = ("eager", "fused")

# How each op splits across tensor-parallel ranks (Megatron style), for the scale-out model:
#   column: the output features split (q/k/v, gate/up; their element-wise followers too);
#   row: the input features split, an all-reduce of the output follows (o_proj, down_proj);
#   heads: split by attention head (the products, softmax, rotary, GQA repeat);
#   vocab: the vocabulary splits (LM head, embedding);
#   replicated: every rank does all of it (norms, residual adds, the router).
# A new op names its sharding here; an op missing from the table counts as replicated.
SHARDING: dict[str, str] = {
    "q_proj": "column", "k_proj": "column", "v_proj": "column", "gate_proj": "column", "up_proj": "column",
    "o_proj": "row", "down_proj": "row",
    "attn_scores": "heads", "attn_values": "heads", "attn_softmax": "heads", "rotary": "heads",
    "kv_repeat": "heads", "activation": "column",
    "lm_head": "vocab", "embedding": "vocab",
    "router": "replicated", "moe_routing": "replicated", "norms": "replicated", "residual": "replicated",
}

_LIMITS = {"batch": 1_000_000, "seq_len": 100_000_000, "new_tokens": 10_000_000}


def _whole(name: str, v, minimum: int) -> int:
    if isinstance(v, bool):
        raise InputError(f"{name} must be a whole number, got {v!r}")
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a whole number, got {v!r}") from None
    if not math.isfinite(f) or not f.is_integer():
        raise InputError(f"{name} must be a whole number, got {v!r}")
    i = int(f)
    if i < minimum:
        raise InputError(f"{name} must be at least {minimum}, got {i}")
    if i > _LIMITS[name]:
        raise InputError(f"{name} = {i:,} is beyond what this estimator accepts (limit {_LIMITS[name]:,})")
    return i


@dataclass(frozen=True)
class Workload:
    """What is run: batch (concurrent sequences), prompt length, decode steps, switches, dtypes."""

    batch: int = 1
    seq_len: int = 512
    new_tokens: int = 0
    causal: bool = False
    lm_head: str = "all"  # "all" positions (eager default) or "last" position only
    weight_dtype: str = "bf16"
    act_dtype: str = "bf16"
    kv_dtype: str = "bf16"
    attention: str = "eager"  # "eager" (scores through memory) or "fused" (flash / SDPA kernel)

    def __post_init__(self) -> None:
        object.__setattr__(self, "batch", _whole("batch", self.batch, 1))
        object.__setattr__(self, "seq_len", _whole("seq_len", self.seq_len, 1))
        object.__setattr__(self, "new_tokens", _whole("new_tokens", self.new_tokens, 0))
        if self.lm_head not in LM_HEAD_MODES:
            raise InputError(f"lm_head must be 'all' or 'last', got {self.lm_head!r}")
        for f in ("weight_dtype", "act_dtype", "kv_dtype"):
            object.__setattr__(self, f, get_dtype(getattr(self, f)).name)
        if not isinstance(self.causal, bool):
            raise InputError(f"causal must be true or false, got {self.causal!r}")
        if self.attention not in ATTENTION_KINDS:
            raise InputError(f"attention must be one of {', '.join(ATTENTION_KINDS)}, got {self.attention!r}")

    @property
    def prefill_tokens(self) -> int:
        return self.batch * self.seq_len

    @property
    def final_tokens(self) -> int:
        """Tokens each sequence's cache holds at the end: S + N."""
        return self.seq_len + self.new_tokens


@dataclass(frozen=True)
class Op:
    """One named GEMM of one phase, summed over layers (and decode steps).

    ``m, n, k`` are the shape of one run (for decode attention: the first step;
    ``n_last`` / ``k_last`` give the last step's, as the key count grows by one
    per step). ``count`` is how many runs the totals include. ``flops`` and the
    byte fields are totals.
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

    @property
    def is_gemm(self) -> bool:
        return self.kind == "gemm"

    @property
    def shard(self) -> str:
        """How the op splits across tensor-parallel ranks (see :data:`SHARDING`)."""
        return SHARDING.get(self.name, "replicated")

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
        d = asdict(self)
        d["bytes"] = self.bytes
        d["macs"] = self.macs
        d["intensity"] = self.intensity
        return d


# ----- building the ops ---------------------------------------------------------------------

class _Sizes:
    def __init__(self, wl: Workload) -> None:
        self.w = get_dtype(wl.weight_dtype).bytes
        self.a = get_dtype(wl.act_dtype).bytes
        self.kv = get_dtype(wl.kv_dtype).bytes


def _linear(name: str, phase: str, *, m: int, k: int, n: int, runs: int, weight_reads: int,
            bias: bool, sz: _Sizes, note: str = "", weight_copies: int = 1, routed: bool = False) -> Op:
    """A weight GEMM: [m, k] @ [k, n], run ``runs`` times, its weights read ``weight_reads`` times.

    ``weight_copies`` is how many distinct weight matrices each read touches (MoE experts reached).
    """
    w = (k * n + (n if bias else 0)) * sz.w * weight_copies * weight_reads
    a = (m * k + m * n) * sz.a * runs
    return Op(name, phase, m, n, k, runs, 2 * m * n * k * runs, w, a, 0.0, note, routed=routed)


def _layer_ops(cfg: ModelConfig, wl: Workload, *, phase: str, layers: int, tokens: int, steps: int,
               queries: int, sum_keys: int, first_keys: int, last_keys: int, tri: bool) -> list[Op]:
    """The ops of ``layers`` layers.

    tokens: rows each projection multiplies per run (batch·S in prefill, batch in a decode step);
    steps: runs of the whole layer stack (1 prefill, N decode);
    queries: query rows per head per run (S in prefill, 1 in decode);
    sum_keys: keys summed over steps (S for prefill; Σ(S+i+1) over decode steps);
    tri: count only the causal triangle (prefill with causal=True).
    """
    sz = _Sizes(wl)
    b, h, kvh, hd, d = wl.batch, cfg.heads, cfg.kv_heads, cfg.head_dim, cfg.hidden
    runs = layers * steps
    ops = [
        _linear("q_proj", phase, m=tokens, k=d, n=cfg.q_dim, runs=runs, weight_reads=runs,
                bias=cfg.qkv_bias, sz=sz),
        _linear("k_proj", phase, m=tokens, k=d, n=cfg.kv_dim, runs=runs, weight_reads=runs,
                bias=cfg.qkv_bias, sz=sz),
        _linear("v_proj", phase, m=tokens, k=d, n=cfg.kv_dim, runs=runs, weight_reads=runs,
                bias=cfg.qkv_bias, sz=sz),
    ]
    # Attention products, per (layer, sequence, query head): Q [queries, hd] @ Kᵀ [hd, keys].
    att_runs = layers * b * h * steps
    if tri:  # prefill, causal: row i of the S×S scores keeps i + 1 keys
        pairs = queries * (queries + 1) // 2
    else:
        pairs = queries * sum_keys  # query rows × keys, summed over steps
    pair_total = layers * b * h * pairs
    kv_read = layers * b * kvh * sum_keys * hd * sz.kv  # K (or V) of every cached key, once per run
    q_io = layers * b * h * steps * queries * hd * sz.a  # Q in (scores) or the output out (values)
    # Eager attention writes the scores and reads the probabilities back; a fused kernel keeps them on chip.
    score_io = pair_total * sz.a if wl.attention == "eager" else 0.0
    note = "per layer, sequence and query head" + (
        "; keys grow by one per decode step" if phase == "decode" else "") + (
        "; fused: the scores stay on chip" if wl.attention == "fused" else "")
    kl = last_keys if phase == "decode" and last_keys != first_keys else None
    ops.append(Op("attn_scores", phase, queries, first_keys, hd, att_runs, 2 * hd * pair_total,
                  0.0, q_io + score_io, kv_read, note, n_last=kl))
    ops.append(Op("attn_values", phase, queries, hd, first_keys, att_runs, 2 * hd * pair_total,
                  0.0, score_io + q_io, kv_read, note, k_last=kl))
    ops.append(_linear("o_proj", phase, m=tokens, k=cfg.q_dim, n=d, runs=runs, weight_reads=runs,
                       bias=cfg.o_bias, sz=sz))
    if cfg.is_moe:
        ops.append(_linear("router", phase, m=tokens, k=d, n=cfg.experts, runs=runs, weight_reads=runs,
                           bias=False, sz=sz, note="per layer: scores every expert for every token"))
        reached = min(cfg.experts, tokens * cfg.experts_per_token)
        e_note = (f"each token through {cfg.experts_per_token} of {cfg.experts} experts "
                  f"(count = layers × {cfg.experts_per_token}); weights of {reached} experts read")
        e_runs = runs * cfg.experts_per_token
    else:
        reached, e_note, e_runs = 1, "", runs
    names = ("gate_proj", "up_proj") if cfg.mlp == "gated" else ("up_proj",)
    for nm in names:
        ops.append(_linear(nm, phase, m=tokens, k=d, n=cfg.ffn, runs=e_runs, weight_reads=runs,
                           bias=cfg.mlp_bias, sz=sz, note=e_note, weight_copies=reached, routed=cfg.is_moe))
    ops.append(_linear("down_proj", phase, m=tokens, k=cfg.ffn, n=d, runs=e_runs, weight_reads=runs,
                       bias=cfg.mlp_bias, sz=sz, note=e_note, weight_copies=reached, routed=cfg.is_moe))
    return ops


def _elementwise(name: str, phase: str, *, rows: int, width: int, count: int, elements: float, flops: float,
                 sz: _Sizes, note: str, weight_bytes: float = 0.0, kv_bytes: float = 0.0) -> Op:
    """A non-GEMM op: ``elements`` read + written at the activation dtype, ``flops`` element-wise FLOPs.

    ``rows × width`` is the shape of one run (for a table); ``count`` how many runs the totals include.
    """
    return Op(name, phase, rows, width, 0, count, int(round(flops)), weight_bytes, elements * sz.a, kv_bytes,
              note, kind="other")


# Element-wise FLOPs per element of each kind of op (an eager kernel's arithmetic, not a GEMM's).
_NORM_FLOPS = {"rms": 4, "layer": 7}  # rms: square, mean, scale, weight; layer: + centre, bias
_ACT_FLOPS = {"gated": 5, "plain": 8}  # silu(gate)·up: sigmoid, mul, mul; GELU (tanh form)


def _other_layer_ops(cfg: ModelConfig, wl: Workload, *, phase: str, layers: int, tokens: int, steps: int,
                     queries: int, sum_keys: int, tri: bool) -> list[Op]:
    """The non-GEMM work of ``layers`` layers, with the same arguments as :func:`_layer_ops`.

    What an eager Hugging Face decoder layer does besides its GEMMs, as memory traffic:
    two norms (read and write the hidden state), rotary embedding on q and k (rotary models),
    GQA's K/V repeat over every cached key and scale + mask + softmax over the scores (eager
    attention only), the MLP activation, MoE routing (scores, top-k, gather and scatter of the
    routed tokens) and two residual adds.
    """
    sz = _Sizes(wl)
    b, h, d, q, kv, f = wl.batch, cfg.heads, cfg.hidden, cfg.q_dim, cfg.kv_dim, cfg.ffn
    runs = layers * steps
    rows_total = runs * tokens  # hidden-state rows over every run
    ops = [_elementwise("norms", phase, rows=tokens, width=d, count=2 * runs, elements=2 * 2 * rows_total * d,
                        flops=2 * _NORM_FLOPS[cfg.norm] * rows_total * d, sz=sz,
                        weight_bytes=2 * runs * d * (2 if cfg.norm == "layer" else 1) * sz.w,
                        note=f"2 per layer ({'RMSNorm' if cfg.norm == 'rms' else 'LayerNorm'}): read and write "
                             "the hidden state")]
    if not cfg.learned_positions:
        qk = rows_total * (q + kv)
        ops.append(_elementwise("rotary", phase, rows=tokens, width=q + kv, count=runs, elements=2 * 3 * qk,
                                flops=3 * qk, sz=sz, note="q·cos + rotate_half(q)·sin, and the same for k"))
    if wl.attention == "eager":
        keys_total = layers * b * sum_keys  # cached keys read per run, summed
        if cfg.kv_heads < cfg.heads:
            ops.append(_elementwise(
                "kv_repeat", phase, rows=tokens, width=2 * q, count=runs,
                elements=2 * keys_total * q, flops=0, sz=sz, kv_bytes=2 * keys_total * kv * sz.kv,
                note=f"eager GQA copies each K/V head to its {h // cfg.kv_heads} query heads, every cached key"))
        pairs = queries * (queries + 1) // 2 if tri else queries * sum_keys
        scores = layers * b * h * pairs
        ops.append(_elementwise("attn_softmax", phase, rows=queries, width=sum_keys // max(steps, 1),
                                count=layers * b * h * steps, elements=3 * 2 * scores, flops=7 * scores, sz=sz,
                                note="scale, mask and softmax each read and write the scores"))
    e_rows = rows_total * (cfg.experts_per_token if cfg.is_moe else 1)
    act = _elementwise("activation", phase, rows=tokens, width=f, count=runs,
                       elements=(5 if cfg.mlp == "gated" else 2) * e_rows * f,
                       flops=_ACT_FLOPS[cfg.mlp] * e_rows * f, sz=sz,
                       note="silu(gate) · up" if cfg.mlp == "gated" else "GELU")
    ops.append(replace(act, routed=cfg.is_moe))
    if cfg.is_moe:
        k, e = cfg.experts_per_token, cfg.experts
        ops.append(_elementwise("moe_routing", phase, rows=tokens, width=e, count=runs,
                                elements=2 * rows_total * e + 4 * rows_total * k * d,
                                flops=5 * rows_total * e + 2 * rows_total * k * d, sz=sz,
                                note=f"softmax and top-{k} over {e} experts; gather each routed token and "
                                     "scatter-add it back, weighted"))
    ops.append(_elementwise("residual", phase, rows=tokens, width=d, count=2 * runs, elements=2 * 3 * rows_total * d,
                            flops=2 * rows_total * d, sz=sz, note="2 per layer: read two, write one"))
    return ops


def _embedding_op(cfg: ModelConfig, wl: Workload, *, phase: str, rows: int, steps: int) -> Op:
    sz = _Sizes(wl)
    lookups = 2 if cfg.learned_positions else 1  # token (+ learned position) rows gathered
    n = rows * steps
    return _elementwise("embedding", phase, rows=rows, width=cfg.hidden, count=steps,
                        elements=n * cfg.hidden * (lookups + (2 if cfg.learned_positions else 0)),
                        flops=n * cfg.hidden * (lookups - 1), sz=sz, weight_bytes=lookups * n * cfg.hidden * sz.w,
                        note="gather the token rows" + (" and the position rows, then add" if lookups == 2 else "")
                             + "; a final norm follows (counted in norms)")


def layer_ops(cfg: ModelConfig, seq_len: int, batch: int = 1, causal: bool = False,
              dtype: str = "bf16") -> list[Op]:
    """Every GEMM of ONE layer in a prefill of ``batch`` sequences of ``seq_len`` tokens."""
    wl = Workload(batch=batch, seq_len=seq_len, causal=causal, weight_dtype=dtype, act_dtype=dtype,
                  kv_dtype=dtype)
    return _layer_ops(cfg, wl, phase="prefill", layers=1, tokens=wl.prefill_tokens, steps=1,
                      queries=wl.seq_len, sum_keys=wl.seq_len, first_keys=wl.seq_len,
                      last_keys=wl.seq_len, tri=causal)


def layer_other_ops(cfg: ModelConfig, seq_len: int, batch: int = 1, causal: bool = False, dtype: str = "bf16",
                    attention: str = "eager") -> list[Op]:
    """The non-GEMM ops of ONE layer in a prefill (the companion of :func:`layer_ops`)."""
    wl = Workload(batch=batch, seq_len=seq_len, causal=causal, weight_dtype=dtype, act_dtype=dtype,
                  kv_dtype=dtype, attention=attention)
    return _other_layer_ops(cfg, wl, phase="prefill", layers=1, tokens=wl.prefill_tokens, steps=1,
                            queries=wl.seq_len, sum_keys=wl.seq_len, tri=causal)


def _final_norm(cfg: ModelConfig, wl: Workload, *, phase: str, rows: int, steps: int) -> Op:
    sz = _Sizes(wl)
    n = rows * steps
    return _elementwise("norms", phase, rows=rows, width=cfg.hidden, count=steps, elements=2 * n * cfg.hidden,
                        flops=_NORM_FLOPS[cfg.norm] * n * cfg.hidden, sz=sz,
                        weight_bytes=steps * cfg.hidden * (2 if cfg.norm == "layer" else 1) * sz.w,
                        note="the final norm before the LM head")


def _merge(ops: list[Op]) -> list[Op]:
    """Ops of the same name summed into one (the final norm joins the layers' norms)."""
    out: dict[str, Op] = {}
    for o in ops:
        if o.name in out:
            a = out[o.name]
            out[o.name] = replace(a, count=a.count + o.count, flops=a.flops + o.flops,
                                  weight_bytes=a.weight_bytes + o.weight_bytes, act_bytes=a.act_bytes + o.act_bytes,
                                  kv_bytes=a.kv_bytes + o.kv_bytes, note=a.note + "; and " + o.note)
        else:
            out[o.name] = o
    return list(out.values())


def _lm_head(cfg: ModelConfig, wl: Workload, *, phase: str, rows: int, steps: int) -> Op:
    sz = _Sizes(wl)
    note = "tied to the embedding" if cfg.tied_embeddings else ""
    if phase == "prefill":
        note = ("every position" if wl.lm_head == "all" else "last position only") + (
            f"; {note}" if note else "")
    return _linear("lm_head", phase, m=rows, k=cfg.hidden, n=cfg.vocab, runs=steps, weight_reads=steps,
                   bias=False, sz=sz, note=note)


def prefill_ops(cfg: ModelConfig, wl: Workload) -> list[Op]:
    """Every GEMM of the prefill (the prompt of every sequence in one forward pass)."""
    ops = _layer_ops(cfg, wl, phase="prefill", layers=cfg.layers, tokens=wl.prefill_tokens, steps=1,
                     queries=wl.seq_len, sum_keys=wl.seq_len, first_keys=wl.seq_len,
                     last_keys=wl.seq_len, tri=wl.causal)
    rows = wl.prefill_tokens if wl.lm_head == "all" else wl.batch
    ops.append(_lm_head(cfg, wl, phase="prefill", rows=rows, steps=1))
    return ops


def prefill_other_ops(cfg: ModelConfig, wl: Workload) -> list[Op]:
    """Every non-GEMM op of the prefill: the embedding gather, then each layer's element-wise work."""
    ops = [_embedding_op(cfg, wl, phase="prefill", rows=wl.prefill_tokens, steps=1)]
    ops += _other_layer_ops(cfg, wl, phase="prefill", layers=cfg.layers, tokens=wl.prefill_tokens, steps=1,
                            queries=wl.seq_len, sum_keys=wl.seq_len, tri=wl.causal)
    rows = wl.prefill_tokens if wl.lm_head == "all" else wl.batch
    ops.append(_final_norm(cfg, wl, phase="prefill", rows=rows, steps=1))
    return _merge(ops)


def _decode_range(cfg: ModelConfig, wl: Workload, first_step: int, last_step: int,
                  other: bool = False) -> list[Op]:
    """Decode ops summed over steps first_step..last_step (inclusive, from 0); with ``other``, the
    non-GEMM ops follow the GEMMs."""
    steps = last_step - first_step + 1
    first_keys = wl.seq_len + first_step + 1
    last_keys = wl.seq_len + last_step + 1
    sum_keys = (first_keys + last_keys) * steps // 2
    ops = _layer_ops(cfg, wl, phase="decode", layers=cfg.layers, tokens=wl.batch, steps=steps,
                     queries=1, sum_keys=sum_keys, first_keys=first_keys, last_keys=last_keys, tri=False)
    ops.append(_lm_head(cfg, wl, phase="decode", rows=wl.batch, steps=steps))
    if other:
        rest = [_embedding_op(cfg, wl, phase="decode", rows=wl.batch, steps=steps)]
        rest += _other_layer_ops(cfg, wl, phase="decode", layers=cfg.layers, tokens=wl.batch, steps=steps,
                                 queries=1, sum_keys=sum_keys, tri=False)
        rest.append(_final_norm(cfg, wl, phase="decode", rows=wl.batch, steps=steps))
        ops += _merge(rest)
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
    return [o for o in _decode_range(cfg, wl, 0, wl.new_tokens - 1, other=True) if not o.is_gemm]


# ----- time, memory, the whole estimate ------------------------------------------------------

def _timed(op: Op, hw: Hardware, dtype: str, eff: float | OpEfficiency) -> Op:
    if callable(eff):  # the roofline at full speed, then this op's own efficiency on both terms
        t = roofline_time(op.flops, op.bytes, hw, dtype, 1.0)
        e = _op_efficiency(eff, op)
        return replace(op, time_s=t.seconds / e, compute_s=t.compute_s / e, memory_s=t.memory_s / e, bound=t.bound)
    t = roofline_time(op.flops, op.bytes, hw, dtype, eff)
    return replace(op, time_s=t.seconds, compute_s=t.compute_s, memory_s=t.memory_s, bound=t.bound)


def time_op(op: Op, hw: Hardware, dtype: str, efficiency: float | OpEfficiency = 1.0) -> Op:
    """``op`` with its roofline time on one ``hw`` device (max(FLOPs / peak, bytes / bandwidth), derated)."""
    return _timed(op, hw, dtype, efficiency)


def _decode_timed(cfg: ModelConfig, wl: Workload, hw: Hardware, dtype: str, eff: float | OpEfficiency,
                  per_gpu: Callable[[Op], Op] | None = None) -> list[Op]:
    """Decode ops with exact summed roofline times.

    Within a step every op's FLOPs and bytes are affine in the key count, so
    the sum over steps of max(compute, memory) is found by splitting the step
    range where the bound changes and timing each part as one block (in a part
    every step has the same bound, so the max of the sums is the sum of maxes).
    ``per_gpu`` maps each op to one device's share before it is timed (the
    scale-out model, :mod:`gemmlib.llm.parallel`); it must keep FLOPs and bytes
    affine in the key count, as any fixed split does. A per-op efficiency derates
    both terms alike, so it does not move the split: the ops are timed at full
    speed, then each is divided by its own efficiency.
    """
    if wl.new_tokens == 0:
        return []
    if callable(eff):
        out = []
        for op in _decode_timed(cfg, wl, hw, dtype, 1.0, per_gpu):
            e = _op_efficiency(eff, op)
            out.append(replace(op, time_s=op.time_s / e, compute_s=op.compute_s / e, memory_s=op.memory_s / e))
        return out
    last = wl.new_tokens - 1

    def rng(a: int, b: int) -> list[Op]:
        ops = _decode_range(cfg, wl, a, b, other=True)
        return [per_gpu(o) for o in ops] if per_gpu else ops

    total = rng(0, last)

    first_ops = rng(0, 0)
    last_ops = rng(last, last)

    def excess(step_op: Op) -> float:  # compute - memory time of one step
        t = roofline_time(step_op.flops, step_op.bytes, hw, dtype, eff)
        return t.compute_s - t.memory_s

    out = []
    for i, op in enumerate(total):
        e0, e1 = excess(first_ops[i]), excess(last_ops[i])
        if (e0 >= 0) == (e1 >= 0):
            out.append(_timed(op, hw, dtype, eff))
            continue
        # The bound flips between step 0 and the last: excess is affine in the step, find the switch.
        split = min(last - 1, max(0, int(math.floor(e0 / (e0 - e1) * last))))
        while split > 0 and (excess(rng(split, split)[i]) >= 0) != (e0 >= 0):
            split -= 1
        while split < last - 1 and (excess(rng(split + 1, split + 1)[i]) >= 0) == (e0 >= 0):
            split += 1
        head, tail = rng(0, split)[i], rng(split + 1, last)[i]
        a = roofline_time(head.flops, head.bytes, hw, dtype, eff)
        b = roofline_time(tail.flops, tail.bytes, hw, dtype, eff)
        bound = "compute" if a.compute_s + b.compute_s >= a.memory_s + b.memory_s else "memory"
        out.append(replace(op, time_s=a.seconds + b.seconds, compute_s=a.compute_s + b.compute_s,
                           memory_s=a.memory_s + b.memory_s, bound=f"{bound} (mixed)"))
    return out


@dataclass(frozen=True)
class PhaseTotals:
    name: str
    ops: tuple[Op, ...]

    @property
    def gemm_ops(self) -> tuple[Op, ...]:
        return tuple(o for o in self.ops if o.is_gemm)

    @property
    def other_ops(self) -> tuple[Op, ...]:
        return tuple(o for o in self.ops if not o.is_gemm)

    @property
    def flops(self) -> int:
        """GEMM FLOPs: the exact count (what FlopCounterMode reports)."""
        return sum(o.flops for o in self.gemm_ops)

    @property
    def other_flops(self) -> int:
        """Element-wise FLOPs of the non-GEMM ops (norms, softmax, activation, ...)."""
        return sum(o.flops for o in self.other_ops)

    @property
    def macs(self) -> int:
        return self.flops // 2

    @property
    def bytes(self) -> float:
        """Every op's traffic, GEMM and not."""
        return sum(o.bytes for o in self.ops)

    @property
    def time_s(self) -> float:
        return sum(o.time_s for o in self.ops)

    @property
    def gemm_time_s(self) -> float:
        return sum(o.time_s for o in self.gemm_ops)

    @property
    def other_time_s(self) -> float:
        return sum(o.time_s for o in self.other_ops)

    @property
    def gemm_share_of_flops(self) -> float | None:
        return gemm_share(self.ops)["flop_share"]

    @property
    def gemm_share_of_time(self) -> float | None:
        return gemm_share(self.ops)["time_share"]

    def by_name(self) -> dict[str, Op]:
        return {o.name: o for o in self.ops}

    def to_dict(self) -> dict:
        return {"flops": self.flops, "macs": self.macs, "other_flops": self.other_flops, "bytes": self.bytes,
                "time_s": self.time_s, "gemm_time_s": self.gemm_time_s, "other_time_s": self.other_time_s,
                "gemm_share_of_flops": self.gemm_share_of_flops, "gemm_share_of_time": self.gemm_share_of_time,
                "ops": [o.to_dict() for o in self.ops]}


@dataclass(frozen=True)
class Memory:
    weights_bytes: float
    kv_cache_bytes: float  # at the end: batch · (S + N) tokens per sequence
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


def memory(cfg: ModelConfig, wl: Workload, hw: Hardware, gpus: int = 1) -> Memory:
    """Weights at the weight dtype and the KV cache at the KV dtype when the last token is in."""
    w = cfg.params * get_dtype(wl.weight_dtype).bytes
    kv = cfg.kv_bytes_per_token(get_dtype(wl.kv_dtype).bytes) * wl.batch * wl.final_tokens
    return Memory(float(w), float(kv), float(hw.memory_bytes * gpus), int(gpus))


def decode_timed(cfg: ModelConfig, wl: Workload, hw: Hardware, dtype: str, efficiency: float = 1.0,
                 per_gpu: Callable[[Op], Op] | None = None) -> list[Op]:
    """Every decode op (GEMM and not) with its exact roofline time summed over the steps, on one ``hw``
    device; with ``per_gpu``, each op is first mapped to one device's share."""
    _check_efficiency(efficiency)
    return _decode_timed(cfg, wl, hw, dtype, efficiency, per_gpu)


@dataclass(frozen=True)
class Estimate:
    """One device running the whole model (the scale-out model is :mod:`gemmlib.llm.scaleout`)."""

    model: ModelConfig
    workload: Workload
    hardware: Hardware  # one device, as given
    efficiency: float  # the one derating factor; 1.0 when a per-op efficiency was used
    prefill: PhaseTotals
    decode: PhaseTotals
    memory: Memory
    efficiency_model: str = ""  # what set each op's efficiency when it was not one number

    @property
    def efficiency_label(self) -> str:
        return self.efficiency_model or f"{self.efficiency:g}"

    @property
    def gpus(self) -> int:
        return 1

    @property
    def compute_dtype(self) -> str:
        return self.workload.act_dtype

    @property
    def ttft_s(self) -> float:
        """Time to first token = the prefill."""
        return self.prefill.time_s

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
    def prefill_tokens_per_s(self) -> float:
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

    def to_dict(self) -> dict:
        """Everything, JSON-ready (the CLI's --json and the page's download)."""
        hw = self.hardware
        return {
            "model": self.model.summary(),
            "workload": asdict(self.workload),
            "hardware": {"name": hw.name, "gpus": self.gpus, "efficiency": self.efficiency,
                         "efficiency_model": self.efficiency_model or None,
                         "compute_dtype": self.compute_dtype, "peak_flops_per_gpu": hw.peak(self.compute_dtype),
                         "bandwidth_per_gpu": hw.bandwidth, "memory_bytes_per_gpu": hw.memory_bytes,
                         "source": hw.source},
            "prefill": self.prefill.to_dict(),
            "decode": {**self.decode.to_dict(), "steps": self.workload.new_tokens},
            "memory": self.memory.to_dict(),
            "times": self.times(),
            "variants": counting_variants(self.model, self.workload),
            "rules_of_thumb": rules_of_thumb(self.model, self.workload),
        }


    def to_json(self, indent: int | None = None) -> str:
        """:meth:`to_dict` as strict JSON (a non-finite number becomes null)."""
        import json

        return json.dumps(_finite(self.to_dict()), indent=indent, allow_nan=False)


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
        raise InputError(f"efficiency must be a number in (0, 1], got {efficiency!r}")


def _op_efficiency(efficiency: OpEfficiency, op: Op) -> float:
    e = float(efficiency(op))
    if not math.isfinite(e) or e <= 0:
        raise InputError(f"the per-op efficiency of {op.name} ({op.phase}) is {e!r}; it must be positive")
    return e


def estimate(cfg: ModelConfig, wl: Workload, hw: Hardware, efficiency: float | OpEfficiency = 1.0,
             efficiency_model: str = "") -> Estimate:
    """The whole answer for one model, workload and device: ops, totals, memory and times.

    One device runs everything. Several GPUs (tensor, pipeline, expert and data parallelism with
    their communication) are :func:`gemmlib.llm.scaleout.estimate`. ``efficiency`` is one number in
    (0, 1] for every op, or a function of the op (``OpEfficiency``, e.g. ``gemmlib.llm.calibrated``'s:
    each op at the efficiency measured for its shape), whose value may exceed 1 when ``hw`` is not
    the op's true roof. ``efficiency_model`` says what it is.
    """
    _check_efficiency(efficiency)
    dtype = wl.act_dtype
    if hw.peak(dtype) is None:
        raise InputError(hw.missing_peak(dtype))
    pre = tuple(_timed(o, hw, dtype, efficiency) for o in prefill_ops(cfg, wl) + prefill_other_ops(cfg, wl))
    dec = tuple(_decode_timed(cfg, wl, hw, dtype, efficiency))
    per_op = callable(efficiency)
    return Estimate(cfg, wl, hw, 1.0 if per_op else float(efficiency), PhaseTotals("prefill", pre),
                    PhaseTotals("decode", dec), memory(cfg, wl, hw),
                    efficiency_model or ("per op" if per_op else ""))


# ----- switches, rules of thumb, attention share ---------------------------------------------

def total_flops(ops: list[Op]) -> int:
    return sum(o.flops for o in ops)


def counting_variants(cfg: ModelConfig, wl: Workload) -> list[dict]:
    """Prefill and decode FLOPs under each counting switch, beside the eager default."""
    rows = []
    for label, causal, head in (("default: dense attention, LM head on every position", False, "all"),
                                ("causal: lower triangle with its diagonal", True, "all"),
                                ("LM head on the last position only", False, "last"),
                                ("causal + LM head last", True, "last")):
        w = replace(wl, causal=causal, lm_head=head)
        pf = total_flops(prefill_ops(cfg, w))
        df = total_flops(decode_ops(cfg, w))
        rows.append({"variant": label, "causal": causal, "lm_head": head,
                     "selected": (causal, head) == (wl.causal, wl.lm_head),
                     "prefill_flops": pf, "prefill_macs": pf // 2, "decode_flops": df, "decode_macs": df // 2})
    return rows


def rules_of_thumb(cfg: ModelConfig, wl: Workload) -> list[dict]:
    """The article's sizing rules beside the exact prefill count, with the ratio and why each is off."""
    exact = total_flops(prefill_ops(cfg, wl))
    lin = exact - sum(o.flops for o in prefill_ops(cfg, wl) if o.name in ATTENTION_PRODUCTS)
    att = exact - lin
    p, s, b, d = cfg.params, wl.seq_len, wl.batch, cfg.hidden
    rule1 = p * s * s / (3 * d) * b
    rule2 = p * s * b / 100
    rule3 = 2 * p * s * b
    rows = [
        {"rule": "Params·seq²/(3·d_model) × batch", "value": rule1,
         "reason": (f"counts only the seq²·d attention products and rescales them by params/d²; it misses the "
                    f"weight GEMMs (≈ 2·params per token), which are {lin / exact:.0%} of the exact count here")},
        {"rule": "params × seq × concurrency ÷ 100", "value": rule2,
         "reason": ("÷ 100 is an unexplained fudge factor with no units; a forward pass costs about 2·params "
                    "FLOPs per token, i.e. 200× this figure, plus the attention products")},
        {"rule": "2·N per token (N = all parameters) × tokens", "value": rule3,
         "reason": _two_n_reason(cfg, wl, att, exact)},
    ]
    for r in rows:
        r["exact"] = exact
        r["ratio"] = exact / r["value"] if r["value"] else math.inf
    return rows


def _two_n_reason(cfg: ModelConfig, wl: Workload, att: int, exact: int) -> str:
    parts = [f"misses the attention products ({att / exact:.1%} of the exact count here, growing with seq)"]
    lookup = cfg.vocab * cfg.hidden * (0 if cfg.tied_embeddings else 1) + cfg.learned_positions * cfg.hidden
    if lookup:
        parts.append(f"counts {lookup:,} embedding/position weights that are looked up, not multiplied")
    if cfg.is_moe:
        parts.append(f"counts all {cfg.experts} experts while each token runs {cfg.experts_per_token}")
    if wl.lm_head == "last":
        parts.append("charges the LM head at every position while only the last one is computed")
    parts.append("counts norm weights and biases, which do no GEMM")
    return "; ".join(parts)


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
        raise InputError(f"layers must be at least 1, got {layers!r}")
    wl = Workload(batch=batch, seq_len=seq_len, weight_dtype=dtype, act_dtype=dtype, kv_dtype=dtype,
                  attention=attention, causal=bool(causal))
    if hw.peak(dtype) is None:
        raise InputError(f"{hw.name} has no {dtype} GEMM path in the catalogue; pick another dtype or device")
    kw = dict(phase="prefill", layers=n, tokens=wl.prefill_tokens, steps=1, queries=seq_len, sum_keys=seq_len)
    ops = _layer_ops(cfg, wl, first_keys=seq_len, last_keys=seq_len, tri=wl.causal, **kw)
    ops += _other_layer_ops(cfg, wl, tri=wl.causal, **kw)
    return [_timed(o, hw, dtype, efficiency) for o in ops]


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
    """A one-layer config for the explainer page (vocab is irrelevant there: no LM head is counted)."""
    return ModelConfig(layers=1, hidden=d_model, heads=heads, kv_heads=kv_heads, ffn=ffn, vocab=1,
                       mlp="gated" if gated else "plain", name="one layer")
