"""Exact per-GEMM accounting of a decoder-only transformer: FLOPs, bytes, memory, time.

Conventions (shared/design.md, one set everywhere):

* One multiply-add = 2 FLOPs; a GEMM of M×K by K×N costs 2·M·N·K.
* Default = what an eager PyTorch forward pass executes, which is what
  ``torch.utils.flop_counter.FlopCounterMode`` counts: dense S×S attention
  products for every query head (GQA shrinks k_proj/v_proj and the KV cache,
  not the products), the LM head over every position, the router as a GEMM,
  and each token through ``experts_per_token`` experts. Softmax, norms,
  activations and residual adds are not GEMMs and are not counted.
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
an efficiency, through :func:`gemmlib.flops.roofline_time`; the peak is the
one for the activation dtype (weight-only quantisation still multiplies in the
activation dtype). N GPUs are modelled as ideal tensor parallelism: N× the
peak and the bandwidth, no communication cost. Pass a :class:`Hardware` made
with ``with_overrides`` to use measured ceilings instead of the datasheet.

This module never imports torch.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

from gemmlib.dtypes import get_dtype
from gemmlib.errors import InputError
from gemmlib.flops import roofline_time
from gemmlib.hardware import Hardware
from gemmlib.model import ModelConfig

OP_NAMES = ("q_proj", "k_proj", "v_proj", "o_proj", "attn_scores", "attn_values",
            "router", "gate_proj", "up_proj", "down_proj", "lm_head")
ATTENTION_PRODUCTS = ("attn_scores", "attn_values")
LM_HEAD_MODES = ("all", "last")

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
            bias: bool, sz: _Sizes, note: str = "", weight_copies: int = 1) -> Op:
    """A weight GEMM: [m, k] @ [k, n], run ``runs`` times, its weights read ``weight_reads`` times.

    ``weight_copies`` is how many distinct weight matrices each read touches (MoE experts reached).
    """
    w = (k * n + (n if bias else 0)) * sz.w * weight_copies * weight_reads
    a = (m * k + m * n) * sz.a * runs
    return Op(name, phase, m, n, k, runs, 2 * m * n * k * runs, w, a, 0.0, note)


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
    note = "per layer, sequence and query head" + (
        "; keys grow by one per decode step" if phase == "decode" else "")
    kl = last_keys if phase == "decode" and last_keys != first_keys else None
    ops.append(Op("attn_scores", phase, queries, first_keys, hd, att_runs, 2 * hd * pair_total,
                  0.0, q_io + pair_total * sz.a, kv_read, note, n_last=kl))
    ops.append(Op("attn_values", phase, queries, hd, first_keys, att_runs, 2 * hd * pair_total,
                  0.0, pair_total * sz.a + q_io, kv_read, note, k_last=kl))
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
                           bias=cfg.mlp_bias, sz=sz, note=e_note, weight_copies=reached))
    ops.append(_linear("down_proj", phase, m=tokens, k=cfg.ffn, n=d, runs=e_runs, weight_reads=runs,
                       bias=cfg.mlp_bias, sz=sz, note=e_note, weight_copies=reached))
    return ops


def layer_ops(cfg: ModelConfig, seq_len: int, batch: int = 1, causal: bool = False,
              dtype: str = "bf16") -> list[Op]:
    """Every GEMM of ONE layer in a prefill of ``batch`` sequences of ``seq_len`` tokens."""
    wl = Workload(batch=batch, seq_len=seq_len, causal=causal, weight_dtype=dtype, act_dtype=dtype,
                  kv_dtype=dtype)
    return _layer_ops(cfg, wl, phase="prefill", layers=1, tokens=wl.prefill_tokens, steps=1,
                      queries=wl.seq_len, sum_keys=wl.seq_len, first_keys=wl.seq_len,
                      last_keys=wl.seq_len, tri=causal)


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


def _decode_range(cfg: ModelConfig, wl: Workload, first_step: int, last_step: int) -> list[Op]:
    """Decode ops summed over steps first_step..last_step (inclusive, from 0)."""
    steps = last_step - first_step + 1
    first_keys = wl.seq_len + first_step + 1
    last_keys = wl.seq_len + last_step + 1
    sum_keys = (first_keys + last_keys) * steps // 2
    ops = _layer_ops(cfg, wl, phase="decode", layers=cfg.layers, tokens=wl.batch, steps=steps,
                     queries=1, sum_keys=sum_keys, first_keys=first_keys, last_keys=last_keys, tri=False)
    ops.append(_lm_head(cfg, wl, phase="decode", rows=wl.batch, steps=steps))
    return ops


def decode_ops(cfg: ModelConfig, wl: Workload) -> list[Op]:
    """Every GEMM of all ``new_tokens`` decode steps (empty when new_tokens = 0)."""
    if wl.new_tokens == 0:
        return []
    return _decode_range(cfg, wl, 0, wl.new_tokens - 1)


# ----- time, memory, the whole estimate ------------------------------------------------------

def scaled_hardware(hw: Hardware, gpus: int) -> Hardware:
    """N devices as one: N× every peak, the bandwidth and the memory (ideal tensor parallelism)."""
    gpus = int(gpus)
    if gpus < 1 or gpus > 100_000:
        raise InputError(f"number of GPUs must be between 1 and 100000, got {gpus}")
    if gpus == 1:
        return hw
    return hw.with_overrides(peaks={d: p * gpus for d, p in hw.peaks}, bandwidth=hw.bandwidth * gpus,
                             memory_bytes=hw.memory_bytes * gpus, name=f"{gpus} × {hw.name}")


def _timed(op: Op, hw: Hardware, dtype: str, eff: float) -> Op:
    t = roofline_time(op.flops, op.bytes, hw, dtype, eff)
    return replace(op, time_s=t.seconds, compute_s=t.compute_s, memory_s=t.memory_s, bound=t.bound)


def _decode_timed(cfg: ModelConfig, wl: Workload, hw: Hardware, dtype: str, eff: float) -> list[Op]:
    """Decode ops with exact summed roofline times.

    Within a step every op's FLOPs and bytes are affine in the key count, so
    the sum over steps of max(compute, memory) is found by splitting the step
    range where the bound changes and timing each part as one block (in a part
    every step has the same bound, so the max of the sums is the sum of maxes).
    """
    total = decode_ops(cfg, wl)
    if not total:
        return []
    last = wl.new_tokens - 1
    first_ops = _decode_range(cfg, wl, 0, 0)
    last_ops = _decode_range(cfg, wl, last, last)

    def excess(step_op: Op) -> float:  # compute - memory time of one step
        t = roofline_time(step_op.flops, step_op.bytes, hw, dtype, eff)
        return t.compute_s - t.memory_s

    out = []
    for i, op in enumerate(total):
        e0, e1 = excess(first_ops[i]), excess(last_ops[i])
        if op.name not in ATTENTION_PRODUCTS or (e0 >= 0) == (e1 >= 0):
            out.append(_timed(op, hw, dtype, eff))
            continue
        # The bound flips between step 0 and the last: excess is affine in the step, find the switch.
        split = min(last - 1, max(0, int(math.floor(e0 / (e0 - e1) * last))))
        while split > 0 and (excess(_decode_range(cfg, wl, split, split)[i]) >= 0) != (e0 >= 0):
            split -= 1
        while split < last - 1 and (excess(_decode_range(cfg, wl, split + 1, split + 1)[i]) >= 0) == (e0 >= 0):
            split += 1
        a = roofline_time(_decode_range(cfg, wl, 0, split)[i].flops,
                          _decode_range(cfg, wl, 0, split)[i].bytes, hw, dtype, eff)
        b = roofline_time(_decode_range(cfg, wl, split + 1, last)[i].flops,
                          _decode_range(cfg, wl, split + 1, last)[i].bytes, hw, dtype, eff)
        bound = "compute" if a.compute_s + b.compute_s >= a.memory_s + b.memory_s else "memory"
        out.append(replace(op, time_s=a.seconds + b.seconds, compute_s=a.compute_s + b.compute_s,
                           memory_s=a.memory_s + b.memory_s, bound=f"{bound} (mixed)"))
    return out


@dataclass(frozen=True)
class PhaseTotals:
    name: str
    ops: tuple[Op, ...]

    @property
    def flops(self) -> int:
        return sum(o.flops for o in self.ops)

    @property
    def macs(self) -> int:
        return self.flops // 2

    @property
    def bytes(self) -> float:
        return sum(o.bytes for o in self.ops)

    @property
    def time_s(self) -> float:
        return sum(o.time_s for o in self.ops)

    def by_name(self) -> dict[str, Op]:
        return {o.name: o for o in self.ops}

    def to_dict(self) -> dict:
        return {"flops": self.flops, "macs": self.macs, "bytes": self.bytes, "time_s": self.time_s,
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


@dataclass(frozen=True)
class Estimate:
    model: ModelConfig
    workload: Workload
    hardware: Hardware  # one device, as given
    gpus: int
    efficiency: float
    prefill: PhaseTotals
    decode: PhaseTotals
    memory: Memory

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


def estimate(cfg: ModelConfig, wl: Workload, hw: Hardware, gpus: int = 1,
             efficiency: float = 1.0) -> Estimate:
    """The whole answer for one model, workload and machine: ops, totals, memory and times."""
    if isinstance(efficiency, bool) or not isinstance(efficiency, (int, float)) or not 0 < efficiency <= 1:
        raise InputError(f"efficiency must be a number in (0, 1], got {efficiency!r}")
    many = scaled_hardware(hw, gpus)
    dtype = wl.act_dtype
    if many.peak(dtype) is None:
        raise InputError(f"{hw.name} has no {dtype} GEMM path in its datasheet; choose another "
                         "activation dtype or GPU")
    pre = tuple(_timed(o, many, dtype, efficiency) for o in prefill_ops(cfg, wl))
    dec = tuple(_decode_timed(cfg, wl, many, dtype, efficiency))
    return Estimate(cfg, wl, hw, int(gpus), float(efficiency), PhaseTotals("prefill", pre),
                    PhaseTotals("decode", dec), memory(cfg, wl, hw, gpus))


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
