"""One transformer layer split across n tensor-parallel ranks, on paper (Megatron style).

Each op of the layer (``gemmlib.llm.accounting``) is split the way :data:`accounting.SHARDING`
says: a *column*-parallel GEMM (q/k/v, gate/up) splits its output features, so each rank reads the
whole input and writes 1/n of the output; a *row*-parallel GEMM (o_proj, down_proj) splits its input
features and leaves each rank a partial sum of the whole output; the attention products, softmax
and rotary split by head; replicated ops (norms, residual adds) run whole on every rank. After each
row-parallel GEMM one all-reduce sums the partial outputs: two per layer, each of
tokens × hidden × activation bytes (nccl-tests' size), costed on a :class:`~gemmlib.core.comm.Link`.

One rank's time is the roofline time of its share of every op (on one device's ``Hardware``)
plus the two all-reduces, with no overlap between them. This is the estimate the measured
tensor-parallel layer (``gemmlib.measure.tp``) is put beside. No torch here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gemmlib.core.comm import Link
from gemmlib.core.dtypes import get_dtype
from gemmlib.core.errors import InputError
from gemmlib.core.flops import roofline_time
from gemmlib.core.hardware import Hardware
from gemmlib.llm.accounting import Op, Workload, layer_ops, layer_other_ops
from gemmlib.llm.config import ModelConfig

ALLREDUCES_PER_LAYER = 2  # after o_proj and after down_proj


def check_divisible(cfg: ModelConfig, ranks: int) -> None:
    """InputError unless heads, K/V heads and the MLP width split evenly across ``ranks``."""
    if isinstance(ranks, bool) or not isinstance(ranks, int) or ranks < 1:
        raise InputError(f"the number of ranks must be a whole number ≥ 1, got {ranks!r}")
    if cfg.is_moe:
        raise InputError(f"{cfg.name} is a mixture of experts; this tensor-parallel layer is dense "
                         "(experts split by expert parallelism instead); pick a dense model")
    for what, v in (("query heads", cfg.heads), ("K/V heads", cfg.kv_heads), ("the MLP width", cfg.ffn)):
        if v % ranks:
            raise InputError(f"{what} ({v}) do not split evenly across {ranks} ranks; choose a rank count "
                             f"that divides {v}")


def shard_op(op: Op, ranks: int) -> Op:
    """The part of ``op`` one of ``ranks`` tensor-parallel ranks runs (FLOPs, bytes, shape)."""
    if ranks == 1 or op.shard == "replicated":
        return op
    if op.is_gemm and op.shard in ("column", "row") and op.count and (op.m * op.k + op.m * op.n):
        # act_bytes = (m·k + m·n) · bytes · count: input and output of each run
        per = op.act_bytes / ((op.m * op.k + op.m * op.n) * op.count)
        if op.shard == "column":  # output features split; each rank reads the whole input
            n = op.n // ranks
            return replace(op, n=n, flops=op.flops // ranks, weight_bytes=op.weight_bytes / ranks,
                           act_bytes=(op.m * op.k + op.m * n) * per * op.count,
                           note=_note(op, f"column-parallel: {n} of {op.n} output features per rank"))
        k = op.k // ranks  # row: input features split; each rank writes a partial sum of the whole output
        return replace(op, k=k, flops=op.flops // ranks, weight_bytes=op.weight_bytes / ranks,
                       act_bytes=(op.m * k + op.m * op.n) * per * op.count,
                       note=_note(op, f"row-parallel: {k} of {op.k} input features per rank; "
                                      "an all-reduce of the output follows"))
    # heads, vocab, an element-wise op that follows a column split: everything splits
    return replace(op, count=max(1, op.count // ranks) if op.shard == "heads" and op.is_gemm else op.count,
                   flops=op.flops // ranks, weight_bytes=op.weight_bytes / ranks,
                   act_bytes=op.act_bytes / ranks, kv_bytes=op.kv_bytes / ranks,
                   note=_note(op, f"{op.shard}-parallel: 1/{ranks} per rank"))


def _note(op: Op, s: str) -> str:
    return f"{op.note}; {s}" if op.note else s


def _time_op(op: Op, hw: Hardware, dtype: str, efficiency: float) -> Op:
    t = roofline_time(op.flops, op.bytes, hw, dtype, efficiency)
    return replace(op, time_s=t.seconds, compute_s=t.compute_s, memory_s=t.memory_s, bound=t.bound)


def allreduce_bytes(cfg: ModelConfig, tokens: int, dtype: str) -> float:
    """nccl-tests' size of one of the layer's all-reduces: tokens × hidden × activation bytes."""
    return float(tokens * cfg.hidden * get_dtype(dtype).bytes)


@dataclass(frozen=True)
class TPLayer:
    """One rank's share of one layer on ``ranks`` ranks, timed, with its two all-reduces."""

    ranks: int
    ops: tuple[Op, ...]  # one rank's ops, timed on one device
    allreduce_bytes: float  # one all-reduce (nccl-tests' size)
    allreduces: int
    comm_s: float | None  # both all-reduces on the link; 0 on one rank; None without a link
    link: Link | None
    hardware: str

    @property
    def compute_s(self) -> float:
        return sum(o.time_s for o in self.ops)

    @property
    def time_s(self) -> float:
        return self.compute_s + (self.comm_s or 0.0)

    @property
    def comm_share(self) -> float | None:
        if self.comm_s is None or not self.time_s:
            return None
        return self.comm_s / self.time_s

    def to_dict(self) -> dict:
        return {"ranks": self.ranks, "compute_s": self.compute_s, "comm_s": self.comm_s, "time_s": self.time_s,
                "comm_share": self.comm_share, "allreduce_bytes": self.allreduce_bytes,
                "allreduces": self.allreduces, "hardware": self.hardware,
                "link": None if self.link is None else {"name": self.link.name, "kind": self.link.kind,
                                                        "busbw": self.link.busbw, "latency_s": self.link.latency_s,
                                                        "source": self.link.source},
                "ops": [o.to_dict() for o in self.ops]}


def tp_layer(cfg: ModelConfig, *, seq_len: int, batch: int = 1, ranks: int, hw: Hardware,
             link: Link | None = None, dtype: str = "bf16", efficiency: float = 1.0, attention: str = "fused",
             other: tuple[str, ...] | None = None) -> TPLayer:
    """One layer's prefill of ``batch`` × ``seq_len`` tokens on each of ``ranks`` ranks.

    ``hw`` is ONE rank's device; ``link`` the connection the all-reduces run on (None: compute only).
    ``other`` picks which non-GEMM ops of the layer are counted (default: all of them).
    """
    check_divisible(cfg, ranks)
    if hw.peak(dtype) is None:
        raise InputError(f"{hw.name} has no {dtype} GEMM path; choose another dtype or device")
    Workload(batch=batch, seq_len=seq_len)  # validates batch and seq_len
    ops = layer_ops(cfg, seq_len, batch=batch, dtype=dtype)
    rest = layer_other_ops(cfg, seq_len, batch=batch, dtype=dtype, attention=attention)
    ops += [o for o in rest if other is None or o.name in other]
    mine = tuple(_time_op(shard_op(o, ranks), hw, dtype, efficiency) for o in ops)
    size = allreduce_bytes(cfg, batch * seq_len, dtype)
    if ranks == 1:
        comm: float | None = 0.0  # nothing to sum
    else:
        comm = None if link is None else ALLREDUCES_PER_LAYER * link.time("all_reduce", size, ranks)
    return TPLayer(ranks, mine, size, ALLREDUCES_PER_LAYER if ranks > 1 else 0, comm, link, hw.name)


def tp_comm(cfg: ModelConfig, wl: Workload, link: Link, ranks: int) -> dict:
    """Seconds the tensor-parallel all-reduces of a whole run add on ``link`` (two per layer).

    Prefill: ``layers × 2`` all-reduces of batch·S tokens; decode: ``layers × 2`` per step of
    batch tokens. The embedding's and LM head's gathers are not counted.
    """
    a = wl.act_dtype
    pre = cfg.layers * ALLREDUCES_PER_LAYER * link.time("all_reduce", allreduce_bytes(cfg, wl.prefill_tokens, a),
                                                        ranks)
    step = cfg.layers * ALLREDUCES_PER_LAYER * link.time("all_reduce", allreduce_bytes(cfg, wl.batch, a), ranks)
    return {"link": link.name, "kind": link.kind, "busbw": link.busbw, "latency_s": link.latency_s,
            "source": link.source, "ranks": ranks, "allreduces_per_layer": ALLREDUCES_PER_LAYER,
            "prefill_bytes_per_allreduce": allreduce_bytes(cfg, wl.prefill_tokens, a),
            "decode_bytes_per_allreduce": allreduce_bytes(cfg, wl.batch, a),
            "prefill_s": pre, "decode_s": step * wl.new_tokens,
            "per_output_token_s": step if wl.new_tokens else None}
