"""Serving as engines run it: continuous batching, chunked prefill, paged KV blocks, preemption.

A deterministic step-level simulation of one engine replica, the way vLLM's V1 scheduler
(``vllm/v1/core/sched/scheduler.py``) and TensorRT-LLM's in-flight batching run requests:

* **Arrivals.** Either a fixed concurrency C (a closed loop: C clients each send the next
  request when the last one finished — vLLM's ``bench serve --max-concurrency C --request-rate
  inf``), or a request rate R req/s: **Poisson** arrivals (exponential gaps, vLLM's benchmark
  default, ``burstiness 1``; drawn with a fixed seed, so every run gives the same answer) or
  **fixed** gaps of 1/R, optionally capped at C requests in flight. Each request has
  ``input_len`` prompt tokens and ``output_len`` generated tokens (fixed lengths, as
  ``--random-range-ratio 0`` / ``--input-stdev 0`` benchmarks use).
* **One engine step** = one forward pass over every running decode sequence's next token plus
  the prefill chunks the token budget leaves room for: the running requests are scheduled
  first (decode tokens, then unfinished prefills), then waiting requests are admitted in
  arrival order while the budget (``max_num_batched_tokens``), the sequence limit
  (``max_num_seqs``) and free KV blocks allow. With chunked prefill (vLLM V1 always) a prompt
  is split across steps; without it (TensorRT-LLM's default, ``enable_chunked_context=False``)
  a prompt waits until it fits the step's budget whole.
* **A step's time** comes from the accounting's per-op model
  (:func:`gemmlib.llm.accounting.time_op` of each op's per-GPU share, :mod:`gemmlib.llm.parallel`,
  the shape efficiency model of :mod:`gemmlib.llm.efficiency` unless one is given), never from a factor,
  plus the engine's host time per step where it does not hide it (:attr:`Engine.step_overhead_s`): the token-proportional ops (projections,
  MLP / experts, norms, rotary, activation, residual adds, the embedding) over the step's T
  tokens, with the TP all-reduces and EP all-to-alls of T tokens; the LM head over the
  sequences that emit a token this step; decode attention for each decode sequence at its
  cached context; each prefill chunk's attention (the chunk's queries against the cached
  prefix and themselves: the causal prefill of the prefix + chunk less that of the prefix).
  The per-op times are evaluated exactly at token counts up to 64 and on a grid of 16 points
  per octave above (linear in between), so a long simulation builds few op lists.
* **Paged KV.** The KV pool is what the GPU's memory leaves: vLLM reserves
  ``gpu_memory_utilization`` × capacity and takes the weights and the activation peak of a
  forward over ``max_num_batched_tokens`` tokens from it; TensorRT-LLM gives the KV cache
  ``kv_cache_free_gpu_mem_fraction`` (0.9) of what is free after weights and activations.
  The pool is cut into blocks of ``block_size`` tokens (vLLM 16, TensorRT-LLM 32). vLLM
  allocates blocks as sequences grow and, when none is free, **preempts** the most recently
  admitted running request (recompute mode: its blocks are freed and it is prefilled again,
  prompt and generated tokens, when it is readmitted — vLLM V1's only mode). TensorRT-LLM's
  default ``GUARANTEED_NO_EVICT`` policy reserves a request's blocks for its whole length at
  admission instead, so nothing is preempted and fewer requests run.
* **Replicas.** Data-parallel replicas serve ceil(C / d) of the requests each (or R / d); with
  p pipeline stages a replica keeps p micro-batches in flight (vLLM's virtual engines), each
  of 1/p of the replica's requests, and one step of a micro-batch takes p stage periods.

Metrics as ``vllm bench serve`` reports them, over the whole run (first request sent to last
token): **TTFT** = time from sending a request to its first token (queueing + the steps of its
prefill); **TPOT** = (end-to-end latency − TTFT) / (output tokens − 1) per request, the mean
over requests; **output tokens/s** and **requests/s** for the whole deployment, and per GPU.
The **KV limit** is the largest concurrency whose requests all fit in the pool at their final
length; the **best concurrency under a target** is the largest concurrency up to it whose mean
TPOT (and TTFT, when given) meets the target (aiconfigurator's ``--tpot`` / ``--ttft``
question), found by bisection.

This module never imports torch.
"""

from __future__ import annotations

import heapq
import math
import random
from collections import deque
from dataclasses import asdict, dataclass, replace

from gemmlib.core.errors import InputError
from gemmlib.core.hardware import GiB, Hardware
from gemmlib.core.i18n import N_
from gemmlib.llm.accounting import (
    ATTENTION_PRODUCTS,
    Op,
    Workload,
    decode_ops,
    decode_other_ops,
    efficiency_for,
    executed_model,
    prefill_ops,
    prefill_other_ops,
    time_op,
)
from gemmlib.llm.config import ModelConfig
from gemmlib.llm.efficiency import SERVING_STEP_OVERHEAD_S, SERVING_STEP_OVERHEAD_SOURCE
from gemmlib.llm.memory import (
    DEFAULT_MEMORY_UTILIZATION,
    inference_activation_bytes,
    kv_per_gpu,
    weights_per_gpu,
)
from gemmlib.llm.parallel import (
    Parallel,
    _stage_of,
    forward_collectives,
    layers_per_stage,
    per_gpu_op,
    pipeline_send,
)

MAX_CONCURRENCY = 1_000_000
ENGINE_LIMIT = 10_000_000  # --kv-block-size, --max-num-seqs, --max-num-batched-tokens at most
MAX_REQUESTS = 1_000_000
MAX_STEPS = 3_000_000  # a simulation longer than this is refused (give fewer requests)
ARRIVALS = ("poisson", "fixed")
FAST_FORWARD = True  # sum a run of pure decode steps at once (simulate; off: one at a time, as the tests compare)
ENGINES = ("vllm", "trtllm")
DEFAULT_WAVES = 4  # a fixed-concurrency point sends 4 × C requests (the first wave starts together)
DEFAULT_RATE_REQUESTS = 1000  # vllm bench serve --num-prompts default
SEED = 0

# Ops whose work grows with the keys a query meets (the rest grows with the step's tokens).
_ATTENTION_OPS = (*ATTENTION_PRODUCTS, "attn_softmax", "kv_repeat")


# ----- the engine ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Engine:
    """How the serving engine schedules; 0 means the engine's own default for the GPU.

    ``vllm``: vLLM V1 — chunked prefill, blocks allocated as sequences grow, preemption by
    recomputation; ``EngineArgs.get_batch_defaults`` (``vllm/engine/arg_utils.py``): on a GPU with
    ≥ 70 GiB that is not an A100, ``max_num_batched_tokens`` 8192 and ``max_num_seqs`` 1024 (the
    API server's), else 2048 and 256; ``block_size`` 16 (``CacheConfig``).
    ``trtllm``: TensorRT-LLM's ``LlmArgs`` defaults (``tensorrt_llm/llmapi/llm_args.py``):
    ``max_batch_size`` 2048, ``max_num_tokens`` 8192, no chunked context, the
    ``GUARANTEED_NO_EVICT`` capacity policy (blocks reserved for the whole request),
    ``tokens_per_block`` 32, ``kv_cache_free_gpu_mem_fraction`` 0.9 of the memory left free.
    """

    name: str = "vllm"
    block_size: int = 0
    max_num_seqs: int = 0
    max_batched_tokens: int = 0
    # The decode attention kernel reads each cached K/V head once for all the query heads that share it (GQA):
    # vLLM's FlashAttention/FlashInfer kernels, TensorRT-LLM's XQA kernel and its masked MHA kernel since
    # 0.7.0 ("MMHA optimization for MQA and GQA", "FP8 KV cache support for XQA kernel": TensorRT-LLM's
    # CHANGELOG.md, 0.7.0 / 0.7.1). False: once per query head — TensorRT-LLM 0.6.1 and before, whose
    # generation phase is the masked MHA kernel, one thread block per (query) head (docs/source/gpt_attention.md
    # at v0.6.1), with no XQA section; a GQA model's decode then streams its KV cache heads / kv_heads times.
    grouped_decode: bool = True

    def __post_init__(self) -> None:
        if self.name not in ENGINES:
            raise InputError(N_("the engine must be one of {choices}, got {name!r}"), choices=", ".join(ENGINES),
                             name=self.name)
        for f, label in (("block_size", "--kv-block-size"), ("max_num_seqs", "--max-num-seqs"),
                         ("max_batched_tokens", "--max-num-batched-tokens")):
            v = getattr(self, f)
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= ENGINE_LIMIT:
                raise InputError(N_("{flag} must be a whole number from 1 to {limit:,}, got {value!r}"), flag=label,
                                 value=v, limit=ENGINE_LIMIT)

    @property
    def chunked_prefill(self) -> bool:
        return self.name == "vllm"

    @property
    def step_overhead_s(self) -> float:
        """The host's time per step that no kernel accounts for (scheduling, input preparation, sampling,
        launching the step's graph), where the engine does not hide it: vLLM by default (its async
        scheduling is opt-in) pays :data:`gemmlib.llm.efficiency.SERVING_STEP_OVERHEAD_S`; TensorRT-LLM's
        overlap scheduler (on by default: ``disable_overlap_scheduler=False``) prepares the next step while
        the GPU runs this one."""
        return 0.0 if self.name == "trtllm" else SERVING_STEP_OVERHEAD_S

    @property
    def reserve(self) -> bool:
        """Blocks reserved for the whole request at admission (no preemption)."""
        return self.name == "trtllm"

    def resolved(self, hw: Hardware) -> Engine:
        """This engine with every 0 replaced by its default on ``hw``."""
        if self.name == "trtllm":
            d = (32, 2048, 8192)
        elif hw.memory_bytes >= 70 * GiB and "a100" not in hw.name.lower():
            d = (16, 1024, 8192)
        else:
            d = (16, 256, 2048)
        return replace(self, block_size=self.block_size or d[0], max_num_seqs=self.max_num_seqs or d[1],
                       max_batched_tokens=self.max_batched_tokens or d[2])

    def to_dict(self) -> dict:
        return {"engine": self.name, "block_size": self.block_size, "max_num_seqs": self.max_num_seqs,
                "max_num_batched_tokens": self.max_batched_tokens, "chunked_prefill": self.chunked_prefill,
                "grouped_decode": self.grouped_decode,
                "admission": "reserve whole request" if self.reserve else "allocate as it grows, preempt"}


# ----- the step-time model ------------------------------------------------------------------------

_EXACT = 64  # token counts up to this are evaluated exactly
_PER_OCTAVE = 16


def _grid_below(x: float) -> tuple[float, float]:
    """The grid points around ``x`` (> _EXACT): 64 · 2^(k/16) rounded."""
    k = math.floor(math.log2(x / _EXACT) * _PER_OCTAVE)
    lo = round(_EXACT * 2 ** (k / _PER_OCTAVE))
    hi = round(_EXACT * 2 ** ((k + 1) / _PER_OCTAVE))
    while lo > x:  # rounding can put the point above x
        k -= 1
        lo, hi = round(_EXACT * 2 ** (k / _PER_OCTAVE)), lo
    while hi < x:
        k += 1
        lo, hi = hi, round(_EXACT * 2 ** ((k + 1) / _PER_OCTAVE))
    return lo, hi


class _Curve:
    """f(n) for whole n ≥ 0, exact up to 64 and linear between grid points above; memoized."""

    def __init__(self, fn) -> None:
        self._fn = fn
        self._memo: dict[int, tuple[float, float]] = {}  # f where it was evaluated
        self._vals: dict[int, tuple[float, float]] = {}  # f at whole numbers, as interpolated

    def _at(self, n: int) -> tuple[float, float]:
        v = self._memo.get(n)
        if v is None:
            v = self._memo[n] = self._fn(n)
        return v

    def _value(self, n: int) -> tuple[float, float]:
        """f at a whole n: exact up to 64, interpolated between the grid points above."""
        v = self._vals.get(n)
        if v is None:
            if n <= _EXACT:
                v = self._at(n) if n > 0 else (0.0, 0.0)
            else:
                lo, hi = _grid_below(n)
                a, b = self._at(lo), self._at(hi)
                f = (n - lo) / (hi - lo) if hi > lo else 0.0
                v = (a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f)
            self._vals[n] = v
        return v

    def __call__(self, x: float) -> tuple[float, float]:
        if x <= 0:
            return 0.0, 0.0
        n = int(x)
        if n == x:
            return self._value(n)
        a, b = self._value(n), self._value(n + 1)  # between whole numbers: linear
        f = x - n
        return a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f

    @property
    def evaluations(self) -> int:
        return len(self._memo)


class StepModel:
    """The time of one engine step of one replica on the busiest GPU, from the accounting's per-op times.

    Each piece is (compute seconds, communication seconds) on one GPU of the busiest stage:
    ``tokens(T)`` the token-proportional ops and their collectives, ``embedding(T)`` (first stage),
    ``head(L)`` the LM head over L rows and its logits gather (last stage); ``decode_attention(c)`` and
    ``prefill_attention(S)`` are (kernel launches, per sequence) of the attention of decode sequences
    at c cached tokens and of prefills of S tokens.
    """

    def __init__(self, cfg: ModelConfig, wl: Workload, hw: Hardware, par: Parallel,
                 efficiency: float = 1.0, overhead_s: float = 0.0, grouped_decode: bool = True) -> None:
        self.cfg, self.hw, self.par, self.efficiency = cfg, hw, par, efficiency
        self.overhead_s = float(overhead_s)
        # a decode kernel without GQA grouping (Engine.grouped_decode) reads every K/V head once per query head
        self.kv_reads = 1 if grouped_decode or cfg.is_mla else max(1, cfg.heads // max(1, cfg.kv_heads))
        self.dtype = wl.act_dtype
        self._wl = replace(wl, batch=1, new_tokens=0, decode_only=False, lm_head="last")
        self._stage_l = layers_per_stage(cfg, par)
        # the attention's data-parallel ranks inside one EP group each take their own sequences, whole (as
        # accounting's phases since 2311765): the step waits for the busiest, see :meth:`_busiest`
        self.ep = par.attn_ep if par.attn_ep > 1 else 1
        self._built: dict[int, tuple[list[Op], Workload]] = {}
        self.tokens = _Curve(self._tokens)
        self.embedding = _Curve(self._embedding)
        self.head = _Curve(self._head)
        self.decode_attention = _Curve(self._decode_attention)
        self.prefill_attention = _Curve(self._prefill_attention)
        if self.ep > 1:  # the busiest rank's own tokens (ops not routed, unsplit) apart from the routed ones
            self.local = _Curve(self._local)
            self.local_embedding = _Curve(self._local_embedding)
            self.local_head = _Curve(self._local_head)

    def _share(self, ops: list[Op], *, whole: bool = False) -> float:
        """One GPU's time of ``ops``; ``whole``: ops not routed taken whole (one sequence, on one EP rank)."""
        seqs = 1 if whole else None
        return sum(time_op(per_gpu_op(o, self.cfg, self.par, stage_layers=self._stage_l, sequences=seqs), self.hw,
                           self.dtype, self.efficiency).time_s for o in ops)

    def _comm(self, ops: list[Op], wl: Workload) -> float:
        return sum(c.time_s for c in forward_collectives(ops, self.cfg, wl, self.par, self.hw,
                                                         stage_layers=self._stage_l))

    def _build(self, n: int) -> tuple[list[Op], Workload]:
        """The ops of a forward over ``n`` tokens with logits for all ``n`` (one build serves the token ops,
        the embedding and the LM head at ``n``); attention apart."""
        hit = self._built.get(n)
        if hit is None:
            wl = replace(self._wl, seq_len=n, lm_head="all")
            ops = [o for o in prefill_ops(self.cfg, wl) + prefill_other_ops(self.cfg, wl)
                   if o.name not in _ATTENTION_OPS]
            hit = self._built[n] = (ops, wl)
        return hit

    def _part(self, n: int, stage: str) -> tuple[float, float]:
        """(compute, communication) of the ``stage`` ops over ``n`` tokens; under EP (``self.ep`` > 1) the compute is
        the routed ops' only (the rest: :meth:`_local_part`, on the busiest rank's own tokens)."""
        ops, wl = self._build(n)
        mine = [o for o in ops if _stage_of(o) == stage]
        comm = self._comm(mine, wl)
        if stage == "every":
            send = pipeline_send(self.cfg, n, 1, wl, self.par, self.hw)
            comm += send.time_s if send is not None else 0.0
        return self._share([o for o in mine if o.routed] if self.ep > 1 else mine), comm

    def _local_part(self, n: int, stage: str) -> tuple[float, float]:
        """The compute of the ``stage`` ops not routed over ``n`` tokens all on one EP rank (no communication)."""
        ops, _ = self._build(n)
        return self._share([o for o in ops if _stage_of(o) == stage and not o.routed], whole=True), 0.0

    def _local(self, n: int) -> tuple[float, float]:
        return self._local_part(n, "every")

    def _local_embedding(self, n: int) -> tuple[float, float]:
        return self._local_part(n, "first")

    def _local_head(self, rows: int) -> tuple[float, float]:
        return self._local_part(rows, "last")

    def _tokens(self, n: int) -> tuple[float, float]:
        return self._part(n, "every")

    def _embedding(self, n: int) -> tuple[float, float]:
        return self._part(n, "first")

    def _head(self, rows: int) -> tuple[float, float]:
        return self._part(rows, "last")

    def _fixed_and_per_sequence(self, build) -> tuple[float, float]:
        """(a kernel's fixed time, the time per sequence) of the attention ops ``build(batch)`` makes: their
        time is fixed + batch × per-sequence (the kernel launches do not grow with the sequences a batched
        kernel takes; its work does), solved from one and two sequences."""
        one, two = self._share(build(1), whole=self.ep > 1), self._share(build(2), whole=self.ep > 1)
        per = max(0.0, two - one)
        return max(0.0, one - per), per

    def _decode_attention(self, cached: int) -> tuple[float, float]:
        names = _ATTENTION_OPS + (("kv_b_proj",) if self.cfg.is_mla and self._wl.mla == "eager" else ())

        def build(b: int) -> list[Op]:
            wl = replace(self._wl, batch=b, seq_len=cached, new_tokens=1, decode_only=True)
            ops = [o for o in decode_ops(self.cfg, wl) + decode_other_ops(self.cfg, wl) if o.name in names]
            if self.kv_reads > 1:
                ops = [replace(o, kv_bytes=o.kv_bytes * self.kv_reads) if o.name in ATTENTION_PRODUCTS else o
                       for o in ops]
            return ops

        return self._fixed_and_per_sequence(build)

    def _prefill_attention(self, s: int) -> tuple[float, float]:
        def build(b: int) -> list[Op]:
            wl = replace(self._wl, batch=b, seq_len=s)
            return [o for o in prefill_ops(self.cfg, wl) + prefill_other_ops(self.cfg, wl) if o.name in _ATTENTION_OPS]

        return self._fixed_and_per_sequence(build)

    def chunk(self, done: int, tokens: int) -> float:
        """The attention work of a prefill chunk of ``tokens`` after ``done`` already-computed tokens (the
        prefix + chunk's causal prefill less the prefix's), kernel launches apart."""
        return max(0.0, self.prefill_attention(done + tokens)[1] - self.prefill_attention(done)[1])

    def step(self, tokens: int, rows: int, decodes: int, mean_cached: float,
             chunks: list[tuple[int, int]]) -> float:
        """Seconds of one step: ``tokens`` in all, ``rows`` LM-head rows, ``decodes`` decode sequences at
        ``mean_cached`` cached tokens on average, and prefill ``chunks`` (done, tokens). One batched
        attention kernel per layer serves every decode sequence and one every prefill chunk.

        Under EP (:attr:`ep` ranks, each with its own sequences, whole) the step is the busiest rank's: the routed
        experts meet all ``tokens`` over the EP ranks, every other op only that rank's (:meth:`_busiest`)."""
        if self.ep > 1:
            tokens_all, rows_all = tokens, rows
            tokens, rows, decodes, chunks = self._busiest(tokens, rows, decodes, chunks)
        c, m = self.tokens(tokens_all) if self.ep > 1 else self.tokens(tokens)
        if self.ep > 1:
            c += self.local(tokens)[0]
        if decodes:
            fixed, per = self.decode_attention(mean_cached)
            c += fixed + decodes * per
        if chunks:
            c += self.prefill_attention(max(n for _, n in chunks))[0]
            for done, n in chunks:
                c += self.chunk(done, n)
        if self.ep > 1:  # (the embedding and the LM head are not routed: the busiest rank's tokens and rows)
            ec, em = self.local_embedding(tokens)[0] if tokens else 0.0, self.embedding(tokens_all)[1]
            hc, hm = self.local_head(rows)[0] if rows else 0.0, self.head(rows_all)[1]
        else:
            ec, em = self.embedding(tokens)
            hc, hm = self.head(rows)
        p = self.par.pp
        if p == 1:
            return self.overhead_s + self._period(c + ec + hc, m + em + hm)
        stage = max(self._period(c + ec, m + em), self._period(c + hc, m + hm))
        return self.overhead_s + p * stage

    def _busiest(self, tokens: int, rows: int, decodes: int, chunks: list[tuple[int, int]]
                 ) -> tuple[int, int, int, list[tuple[int, int]]]:
        """The busiest EP rank's part of a step of ``decodes`` decode sequences and prefill ``chunks``: k = ceil(s / e)
        of its s sequences, whole (one prompt over EP 16 is not 1/16 of the prompt on each rank): the largest chunk,
        then decode sequences, then the next chunks, up to k. Its (tokens, LM-head rows, decodes, chunks); an even
        split of equal sequences is the accounting's phases' ceil(B / e) whole sequences."""
        k = -(-(decodes + len(chunks)) // self.ep)
        big = sorted(chunks, key=lambda dn: dn[1], reverse=True)
        mine = big[:1] if k else []
        d = min(decodes, k - len(mine))
        mine += big[1:1 + k - len(mine) - d]
        return d + sum(n for _, n in mine), min(rows, k), d, mine

    def decode_run(self, decodes: int, mean_cached: float, steps: int) -> float:
        """Seconds of ``steps`` pure decode steps in a row: ``decodes`` sequences, no prefill, no LM-head row but
        theirs, the mean cache growing by one token a step from ``mean_cached`` — the sum of :meth:`step` over them.
        Without overlap the step time is linear in the mean cache inside each grid segment of the decode attention
        (:class:`_Curve` interpolates linearly there; everything else is constant), so each segment's steps sum as an
        arithmetic series from their first and last step: exact, and a run of 700,000 decode steps costs ~300
        evaluations instead of 700,000. With overlap (a max of compute and communication) each step is summed."""
        def one(x: float) -> float:
            return self.step(decodes, decodes, decodes, x, [])

        if self.par.overlap:
            return sum(one(mean_cached + j) for j in range(steps))
        total, j = 0.0, 0
        while j < steps:
            x = mean_cached + j
            if x < _EXACT:  # exact at whole numbers and linear between them: one step at a time
                total += one(x)
                j += 1
                continue
            _lo, hi = _grid_below(x)
            m = min(steps - j, int(math.floor(hi - x)) + 1)  # x, x + 1, …, x + m − 1: all on one segment
            first = one(x)
            last = one(x + m - 1) if m > 1 else first
            total += m * (first + last) / 2
            j += m
        return total

    def _period(self, compute: float, comm: float) -> float:
        return max(compute, comm) if self.par.overlap else compute + comm

    @property
    def evaluations(self) -> int:
        """Op lists built so far (the cost of the simulation)."""
        return sum(c.evaluations for c in (self.tokens, self.embedding, self.head, self.decode_attention,
                                            self.prefill_attention))


# ----- the KV pool --------------------------------------------------------------------------------

@dataclass(frozen=True)
class KvPool:
    """One replica's KV blocks (all its pipeline micro-batches share them) and what one request needs."""

    blocks: int  # per replica
    block_size: int
    block_bytes: float  # per GPU
    free_bytes: float  # per GPU, for the KV cache
    weights_bytes: float
    activation_bytes: float
    workspace_bytes: float
    capacity_bytes: float

    def request_blocks(self, tokens: int) -> int:
        return -(-tokens // self.block_size)

    def to_dict(self) -> dict:
        return asdict(self)


def kv_pool(cfg: ModelConfig, wl: Workload, hw: Hardware, par: Parallel, engine: Engine, *, input_len: int,
            output_len: int, memory_utilization: float = DEFAULT_MEMORY_UTILIZATION) -> KvPool:
    """The KV blocks one replica has (see the module docstring)."""
    cap = float(hw.memory_bytes)
    w = weights_per_gpu(cfg, wl, hw, par)
    weights = max(w["first"], w["last"])
    act_wl = replace(wl, batch=1, seq_len=max(1, engine.max_batched_tokens), new_tokens=0, lm_head="last",
                     decode_only=False)
    act = inference_activation_bytes(cfg, act_wl, par, micro_batch=1, last_stage=True)
    if engine.reserve:
        workspace = 0.0
        free = max(0.0, cap - weights - act) * 0.9  # kv_cache_free_gpu_mem_fraction
        workspace = max(0.0, cap - weights - act) - free
    else:
        workspace = (1 - memory_utilization) * cap
        free = max(0.0, memory_utilization * cap - weights - act)
    final = input_len + output_len
    one = replace(wl, batch=1, seq_len=final, new_tokens=0, decode_only=False)
    # per token of one sequence on the GPU that holds it (EP ranks hold their own sequences; layers of the stage)
    per_token = kv_per_gpu(cfg, one, hw, replace(par, dp=1, ep=1, etp=0)) / final  # (etp=0: unfolded, as ep = 1)
    block_bytes = per_token * engine.block_size
    per_gpu_blocks = int(free // block_bytes) if block_bytes > 0 else 0
    return KvPool(per_gpu_blocks * par.attn_ep, engine.block_size, block_bytes, free, weights, act, workspace, cap)


# ----- the simulation -----------------------------------------------------------------------------

@dataclass(frozen=True)
class SimResult:
    """One replica (one pipeline micro-batch group) over a run."""

    requests: int
    duration_s: float
    output_tokens: int
    ttft_mean_s: float
    ttft_p99_s: float
    tpot_mean_s: float
    e2e_mean_s: float
    steps: int
    preemptions: int
    peak_running: int
    mean_running: float
    peak_blocks: int
    work: int = 0  # the scheduler steps worked out one at a time (a fast-forwarded run of decode steps: one)


def _p99(xs: list[float]) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, math.ceil(0.99 * len(s)) - 1)] if s else 0.0


def _past_max_steps() -> InputError:
    return InputError(N_("the serving simulation passed {limit:,} engine steps; give fewer requests (--num-requests)"),
                      limit=MAX_STEPS)


class StepBudget(Exception):
    """A simulation stopped at the scheduler steps a caller allowed it to work out (:class:`Server`'s
    ``step_budget``)."""


def simulate(model: StepModel, engine: Engine, pool_blocks: int, *, input_len: int, output_len: int,
             requests: int, concurrency: int | None = None, rate: float | None = None,
             arrival: str = "poisson", max_steps: int | None = None) -> SimResult:
    """Run ``requests`` requests through one engine of ``pool_blocks`` KV blocks (see the module
    docstring). ``concurrency`` caps the requests in flight (a closed loop when ``rate`` is None);
    ``rate`` sends them at R req/s."""
    bs, budget, max_seqs = engine.block_size, engine.max_batched_tokens, engine.max_num_seqs
    P, out = input_len, output_len
    arrivals: deque[float] = deque()
    if rate is not None:
        rng = random.Random(SEED)
        t = 0.0
        for _ in range(requests):
            arrivals.append(t)
            t += rng.expovariate(rate) if arrival == "poisson" else 1.0 / rate
    cap = concurrency if concurrency is not None else requests
    full = -(-(P + out) // bs)  # blocks of a whole request
    prompt = [P] * requests  # tokens to compute before the next token (prompt + generated after a preemption)
    computed = [0] * requests
    gen = [0] * requests
    state = ["n"] * requests  # n: not sent, w: waiting, p: prefilling, d: decoding, f: finished
    epoch = [0] * requests
    sent_at = [0.0] * requests
    first_at = [-1.0] * requests
    done_at = [0.0] * requests
    d_start = [0] * requests  # the step at which it entered decode ...
    d_len0 = [0] * requests  # ... with this many tokens cached ...
    d_gen0 = [0] * requests  # ... and this many generated
    waiting: deque[int] = deque()
    stack: list[tuple[int, int]] = []  # (request, epoch) in admission order: the last is preempted first
    prefilling: list[int] = []
    res = [0] * bs  # decode sequences by (cached - step) mod bs: res[-s mod bs] need a new block at step s
    heap: list[tuple[int, int, int]] = []  # (last decode step, request, epoch)
    st = {"n_d": 0, "cached": 0, "free": pool_blocks, "issued": 0, "in_flight": 0, "slot_free": 0.0,
          "preemptions": 0}

    def send(now: float) -> None:
        while st["issued"] < requests and st["in_flight"] < cap and (rate is None or arrivals[0] <= now):
            i = st["issued"]
            st["issued"] += 1
            st["in_flight"] += 1
            state[i] = "w"
            # a client sends at its arrival time, or when a concurrency slot frees (the closed loop: now)
            sent_at[i] = now if rate is None else max(arrivals.popleft(), st["slot_free"])
            waiting.append(i)

    def cached_at(i: int, s: int) -> int:
        return d_len0[i] + s - d_start[i]

    def held(i: int, s: int, allocated: bool) -> int:
        """KV blocks request i holds at step s (``allocated``: this step's decode block is in)."""
        if engine.reserve:
            return full
        if state[i] == "d":
            return -(-(cached_at(i, s) + (1 if allocated else 0)) // bs)
        return -(-computed[i] // bs)

    def leave_decode(i: int, s: int) -> None:
        st["n_d"] -= 1
        st["cached"] -= cached_at(i, s)
        res[(d_len0[i] - d_start[i]) % bs] -= 1

    def preempt_last(s: int, allocated: bool) -> int | None:
        """Preempt the most recently admitted running request (vLLM V1, recompute); None if none runs."""
        while stack:
            i, e = stack.pop()
            if e != epoch[i] or state[i] not in ("p", "d"):
                continue
            st["free"] += held(i, s, allocated)
            if state[i] == "d":
                gen[i] = d_gen0[i] + s - d_start[i]
                leave_decode(i, s)
                prompt[i] = P + gen[i]  # recomputed: the prompt and what it generated so far
            else:
                prefilling.remove(i)
            computed[i] = 0
            epoch[i] += 1
            state[i] = "w"
            waiting.appendleft(i)
            st["preemptions"] += 1
            return i
        return None

    now, step, work = 0.0, 0, 0
    peak_running, running_sum, least_free = 0, 0, pool_blocks
    send(now)
    while True:
        if not waiting and not prefilling and st["n_d"] == 0:
            if st["issued"] >= requests:
                break
            if rate is None:
                break
            now = max(now, arrivals[0])  # idle until the next request arrives
            send(now)
            continue
        work += 1
        if max_steps is not None and work > max_steps:
            raise StepBudget(work)
        # 0. a run of pure decode steps (nothing waiting, prefilling or arriving, nobody finishing, the blocks
        # they take free): all at once, as StepModel.decode_run sums them — the same state after, in ~300
        # evaluations for 700,000 steps. Whole block cycles only: each takes one block per decode sequence.
        n_d = st["n_d"]
        if (FAST_FORWARD and n_d and not waiting and not prefilling and (rate is None or st["issued"] >= requests)
                and heap):
            k = heap[0][0] - step  # the steps before the first to finish
            if not engine.reserve:
                k = min(k // bs, st["free"] // n_d) * bs
            if k >= 2 * bs:
                now += model.decode_run(n_d, st["cached"] / n_d, k)
                if not engine.reserve:
                    st["free"] -= k // bs * n_d
                st["cached"] += n_d * k
                peak_running = max(peak_running, n_d)
                running_sum += n_d * k
                least_free = min(least_free, st["free"])
                step += k
                if step > MAX_STEPS:
                    raise _past_max_steps()
                continue
        # 1. every decode sequence's next token: a new block where its cache crosses a block boundary
        if not engine.reserve:
            while st["n_d"] and res[-step % bs] > st["free"]:
                preempt_last(step, False)
            st["free"] -= res[-step % bs] if st["n_d"] else 0
        left = budget - st["n_d"]
        chunks: list[tuple[int, int]] = []
        completing: list[int] = []
        # 2. unfinished prefills, in admission order
        for i in list(prefilling):
            if state[i] != "p" or left <= 0:
                continue
            c = min(prompt[i] - computed[i], left)
            if not engine.reserve:
                extra = -(-(computed[i] + c) // bs) - -(-computed[i] // bs)
                while extra > st["free"] and state[i] == "p":
                    preempt_last(step, True)
                if state[i] != "p":
                    continue
                st["free"] -= extra
            chunks.append((computed[i], c))
            computed[i] += c
            if computed[i] == prompt[i]:
                completing.append(i)
            left -= c
        # 3. waiting requests, in arrival order (preempted ones first)
        while waiting and left > 0 and st["n_d"] + len(prefilling) < max_seqs:
            i = waiting[0]
            c = prompt[i]
            if engine.chunked_prefill:
                c = min(c, left)
            elif c > left and (c <= budget or chunks):
                break  # without chunking a prompt waits until it fits the step; a longer one, the step's only one
            need = full if engine.reserve else -(-c // bs)
            if need > st["free"]:
                break
            waiting.popleft()
            st["free"] -= need
            state[i] = "p"
            stack.append((i, epoch[i]))
            prefilling.append(i)
            chunks.append((0, c))
            computed[i] = c
            if c == prompt[i]:
                completing.append(i)
            left -= c
        n_d = st["n_d"]
        tokens = n_d + sum(c for _, c in chunks)
        if tokens == 0:
            raise InputError(N_("one request of {tokens:,} tokens needs more KV blocks than the engine has; serve "
                                "shorter requests or on more GPUs"), tokens=P + out)
        running = n_d + len(prefilling)
        peak_running = max(peak_running, running)
        running_sum += running
        least_free = min(least_free, st["free"])
        now += model.step(tokens, n_d + len(completing), n_d, st["cached"] / n_d if n_d else 0.0, chunks)
        # 4. after the step: decode sequences hold one more token; finished ones leave
        st["cached"] += n_d
        finished: list[int] = []
        while heap and heap[0][0] <= step:
            _, i, e = heapq.heappop(heap)
            if e == epoch[i] and state[i] == "d":
                st["free"] += held(i, step + 1, False)
                leave_decode(i, step + 1)
                finished.append(i)
        for i in completing:
            if state[i] != "p":
                continue
            prefilling.remove(i)
            if first_at[i] < 0:
                first_at[i] = now
            gen[i] += 1  # the prefill emits a token
            if gen[i] >= out:
                st["free"] += held(i, step + 1, False)
                finished.append(i)
                continue
            state[i] = "d"
            d_start[i], d_len0[i], d_gen0[i] = step + 1, P + gen[i] - 1, gen[i]
            res[(d_len0[i] - d_start[i]) % bs] += 1
            st["n_d"] += 1
            st["cached"] += d_len0[i]
            heapq.heappush(heap, (step + out - gen[i], i, epoch[i]))
        for i in finished:
            state[i] = "f"
            done_at[i] = now
            if st["in_flight"] == cap:
                st["slot_free"] = now
            st["in_flight"] -= 1
        step += 1
        if step > MAX_STEPS:
            raise _past_max_steps()
        send(now)
    t0 = min(sent_at)
    duration = max(done_at) - t0
    ttft = [first_at[i] - sent_at[i] for i in range(requests)]
    tpot = [(done_at[i] - first_at[i]) / (out - 1) for i in range(requests)] if out > 1 else [0.0]
    e2e = [done_at[i] - sent_at[i] for i in range(requests)]
    return SimResult(requests, duration, requests * out, sum(ttft) / len(ttft), _p99(ttft), sum(tpot) / len(tpot),
                     sum(e2e) / len(e2e), step, st["preemptions"], peak_running, running_sum / max(step, 1),
                     pool_blocks - least_free, work)


# ----- points, curve, best ------------------------------------------------------------------------

@dataclass(frozen=True)
class ServingPoint:
    concurrency: int  # requests in flight (with a request rate: the peak the engine saw)
    ttft_s: float
    tpot_s: float
    tokens_per_s: float
    tokens_per_s_per_gpu: float
    memory_bytes: float
    fits: bool
    requests_per_s: float = 0.0
    ttft_p99_s: float = 0.0
    e2e_s: float = 0.0
    requests: int = 0
    duration_s: float = 0.0
    preemptions: int = 0
    steps: int = 0
    request_rate: float | None = None
    mean_running: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Serving:
    points: tuple[ServingPoint, ...]
    kv_limit: int  # largest concurrency whose requests all fit at their final length (0: not even one)
    tpot_target_s: float | None
    ttft_target_s: float | None
    best: ServingPoint | None  # largest concurrency meeting the targets (None: none does, or no target)
    engine: Engine | None = None
    pool: KvPool | None = None
    input_len: int = 0
    output_len: int = 0
    arrival: str = "closed loop"
    replicas: int = 1
    step_overhead_s: float = 0.0  # the host's time each engine step adds (Engine.step_overhead_s, or as given)
    step_overhead_source: str = ""

    def to_dict(self) -> dict:
        return {"points": [p.to_dict() for p in self.points], "kv_limit": self.kv_limit,
                "tpot_target_s": self.tpot_target_s, "ttft_target_s": self.ttft_target_s,
                "best": self.best.to_dict() if self.best else None,
                "engine": self.engine.to_dict() if self.engine else None,
                "kv_pool": self.pool.to_dict() if self.pool else None,
                "input_len": self.input_len, "output_len": self.output_len, "arrival": self.arrival,
                "replicas": self.replicas, "step_overhead_s": self.step_overhead_s,
                "step_overhead_source": self.step_overhead_source}


def step_overhead_source(engine: Engine, overhead_s: float | None) -> str:
    """Where the host's time per step of a serving answer comes from (said beside it: it is no kernel's time)."""
    if overhead_s is not None:
        return "given"
    if engine.step_overhead_s == 0:
        return ("none: TensorRT-LLM's overlap scheduler (on by default) prepares the next step while the GPU runs "
                "this one")
    return ("not hidden: vLLM's async scheduling is opt-in; the bound measured by " + SERVING_STEP_OVERHEAD_SOURCE)


def _check_target(name: str, v) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0 or not math.isfinite(v):
        raise InputError(N_("{name} must be a positive number of seconds, got {v!r}"), name=name, v=v)
    return float(v)


def _check_count(flag: str, v, limit: int) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= limit:
        raise InputError(N_("{flag} must be a whole number from 1 to {limit:,}, got {value!r}"), flag=flag,
                         limit=limit, value=v)
    return v


# The scheduler steps one serving answer of the app may work out one at a time (~4 s on 2 cores); a run of pure decode
# steps counts once (simulate fast-forwards it). Requests arriving, prefilling or finishing apart are what costs.
PAGE_STEP_BUDGET = 1_000_000


def _over_budget(limit: int) -> InputError:
    return InputError(N_("the serving curve needs more than the {limit:,} scheduler steps a page may simulate one at "
                         "a time (each prefill chunk, arrival and finish is one; a run of decode steps counts once); "
                         "give fewer requests or a shorter prompt, or run `python -m gemmlib estimate --serve` for the "
                         "whole curve"), limit=limit)


class Server:
    """One deployment: the model, workload dtypes, GPUs, layout and engine, with a shared step model."""

    def __init__(self, cfg: ModelConfig, wl: Workload, hw: Hardware, par: Parallel, efficiency=None, *,
                 engine: Engine | None = None, input_len: int | None = None, output_len: int | None = None,
                 memory_utilization: float = DEFAULT_MEMORY_UTILIZATION, overhead_s: float | None = None,
                 step_budget: int | None = None) -> None:
        par = par.inference()
        # the scheduler steps every simulation of this server may work out together (None: no cap but MAX_STEPS engine
        # steps each): a page's cap on what one link can cost the server (a step is a few µs of Python)
        self.step_budget = self.steps_left = step_budget
        self.cfg, self.hw, self.par = cfg, hw, par
        self.input_len = wl.seq_len if input_len is None else _check_count("--input-len", input_len, 10_000_000)
        self.output_len = wl.new_tokens if output_len is None else _check_count("--output-len", output_len,
                                                                                   10_000_000)
        if self.output_len < 1:
            raise InputError(N_("serving needs generated tokens: set new tokens to 1 or more"))
        if wl.decode_only:
            raise InputError(N_("serving sends whole requests: a decode-only workload (--context) cannot be served"))
        self.wl = replace(wl, seq_len=self.input_len, new_tokens=self.output_len)
        self.engine = (engine or Engine()).resolved(hw)
        self.replica_par = replace(par, dp=1)
        cfg = self.cfg = executed_model(cfg, self.wl)
        eff = efficiency_for(efficiency, hw, cfg, self.wl, self.replica_par)[0]
        self.overhead_s = self.engine.step_overhead_s if overhead_s is None else float(overhead_s)
        self.model = StepModel(cfg, self.wl, hw, self.replica_par, eff, self.overhead_s,
                               grouped_decode=self.engine.grouped_decode)
        self.pool = kv_pool(cfg, self.wl, hw, self.replica_par, self.engine, input_len=self.input_len,
                            output_len=self.output_len, memory_utilization=memory_utilization)
        per_req = self.pool.request_blocks(self.input_len + self.output_len)
        self.kv_limit_replica = (self.pool.blocks // self.par.pp) // per_req * self.par.pp if per_req else 0
        self.kv_limit = self.kv_limit_replica * par.dp
        self._cache: dict[tuple, ServingPoint] = {}

    @property
    def gpus(self) -> int:
        return self.par.gpus

    def _memory(self, blocks: int) -> float:
        p = self.pool
        return p.weights_bytes + p.activation_bytes + p.workspace_bytes + blocks / self.par.attn_ep * p.block_bytes

    def point(self, concurrency: int, requests: int | None = None) -> ServingPoint:
        """Fixed concurrency: ``concurrency`` clients in a closed loop over ``requests`` requests (default
        4 × concurrency)."""
        c = _check_count("the concurrency", concurrency, MAX_CONCURRENCY)
        n = _check_count("--num-requests", requests, MAX_REQUESTS) or DEFAULT_WAVES * c
        key = ("c", c, n)
        if key not in self._cache:
            self._cache[key] = self._run(c, n, None, "poisson", c)
        return self._cache[key]

    def at_rate(self, rate: float, requests: int | None = None, arrival: str = "poisson",
                concurrency: int | None = None) -> ServingPoint:
        """Requests sent at ``rate`` req/s (Poisson or fixed gaps; ``math.inf``: every request at once, as
        ``--request-rate inf`` benchmarks and TensorRT-LLM's offline throughput runs send them), at most
        ``concurrency`` in flight."""
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not rate > 0:  # inf: all at once
            raise InputError(N_("the request rate must be a positive number of requests per second, got {rate!r}"),
                             rate=rate)
        if arrival not in ARRIVALS:
            raise InputError(N_("the arrival process (--arrival) must be one of {choices}, got {arrival!r}"), choices=", ".join(ARRIVALS),
                             arrival=arrival)
        n = _check_count("--num-requests", requests, MAX_REQUESTS) or DEFAULT_RATE_REQUESTS
        c = _check_count("--concurrency", concurrency, MAX_CONCURRENCY)
        key = ("r", float(rate), n, arrival, c)
        if key not in self._cache:
            self._cache[key] = self._run(c, n, float(rate), arrival, None)
        return self._cache[key]

    def _run(self, concurrency: int | None, requests: int, rate: float | None, arrival: str,
             label: int | None) -> ServingPoint:
        par = self.par
        share = par.dp * par.pp  # independent engines: replicas × pipeline micro-batch groups
        n = max(1, -(-requests // share))
        c = None if concurrency is None else max(1, -(-concurrency // share))
        r = None if rate is None else rate / share
        blocks = self.pool.blocks // par.pp
        if blocks < self.pool.request_blocks(self.input_len + self.output_len):  # not even one request fits
            return ServingPoint(label or 1, math.inf, math.inf, 0.0, 0.0, self._memory(self.pool.blocks), False,
                                request_rate=rate)
        try:
            sim = simulate(self.model, self.engine, blocks, input_len=self.input_len, output_len=self.output_len,
                           requests=n, concurrency=c, rate=r, arrival=arrival, max_steps=self.steps_left)
        except StepBudget:
            self.steps_left = 0
            raise _over_budget(self.step_budget) from None
        if self.steps_left is not None:
            self.steps_left -= sim.work
        # engines in all: the whole deployment's rate is the sum over the independent engines that are busy
        busy = share if concurrency is None else min(share, concurrency)
        tps = sim.output_tokens / sim.duration_s * busy if sim.duration_s else 0.0
        rps = sim.requests / sim.duration_s * busy if sim.duration_s else 0.0
        shown = label if label is not None else sim.peak_running * share
        return ServingPoint(shown, sim.ttft_mean_s, sim.tpot_mean_s, tps, tps / self.gpus,
                            self._memory(sim.peak_blocks * par.pp), self.kv_limit_replica >= 1, rps, sim.ttft_p99_s,
                            sim.e2e_mean_s, requests, sim.duration_s, sim.preemptions, sim.steps, rate,
                            sim.mean_running * share)


def point(cfg: ModelConfig, wl: Workload, hw: Hardware, par: Parallel, concurrency: int,
          efficiency=None, memory_utilization: float = DEFAULT_MEMORY_UTILIZATION, **kw) -> ServingPoint:
    """TTFT, TPOT and throughput at a fixed ``concurrency`` (see :class:`Server` for the keywords)."""
    requests = kw.pop("requests", None)
    return Server(cfg, wl, hw, par, efficiency, memory_utilization=memory_utilization, **kw).point(concurrency,
                                                                                                   requests)


def serving(cfg: ModelConfig, wl: Workload, hw: Hardware, par: Parallel, efficiency=None, *,
            tpot_target_s: float | None = None, ttft_target_s: float | None = None,
            max_concurrency: int | None = None,
            memory_utilization: float = DEFAULT_MEMORY_UTILIZATION, engine: Engine | None = None,
            input_len: int | None = None, output_len: int | None = None, request_rate: float | None = None,
            arrival: str = "poisson", concurrency: int | None = None, requests: int | None = None,
            overhead_s: float | None = None, step_budget: int | None = None) -> Serving:
    """The serving curve at fixed concurrencies from one request to the KV limit (powers of two and the
    limit) and the best concurrency under the targets; with ``request_rate``, the one point at that rate
    (at most ``concurrency`` in flight); with ``concurrency`` alone, that one point."""
    tpot_target_s = _check_target("the TPOT target", tpot_target_s)
    ttft_target_s = _check_target("the TTFT target", ttft_target_s)
    cap = MAX_CONCURRENCY if max_concurrency is None else max_concurrency
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
        raise InputError(N_("the concurrency limit must be at least 1, got {max_concurrency!r}"),
                         max_concurrency=max_concurrency)
    srv = Server(cfg, wl, hw, par, efficiency, engine=engine, input_len=input_len, output_len=output_len,
                 memory_utilization=memory_utilization, overhead_s=overhead_s, step_budget=step_budget)
    limit = min(srv.kv_limit, cap)
    common = dict(engine=srv.engine, pool=srv.pool, input_len=srv.input_len, output_len=srv.output_len,
                  replicas=par.dp, step_overhead_s=srv.overhead_s,
                  step_overhead_source=step_overhead_source(srv.engine, overhead_s))
    if request_rate is not None:
        p = srv.at_rate(request_rate, requests, arrival, concurrency)
        return Serving((p,), srv.kv_limit, tpot_target_s, ttft_target_s, None,
                       arrival=f"{arrival} at {request_rate:g} req/s" if math.isfinite(request_rate) else
                       "every request at once (request rate inf)", **common)
    if concurrency is not None:
        p = srv.point(concurrency, requests)
        return Serving((p,), srv.kv_limit, tpot_target_s, ttft_target_s, None, **common)
    top = max(limit, 1)  # show one request even when it does not fit, marked so
    cs = []
    c = 1
    while c < top:
        cs.append(c)
        c *= 2
    cs.append(top)
    best = None
    if (tpot_target_s is not None or ttft_target_s is not None) and limit >= 1:
        def meets(n: int) -> bool:
            p = srv.point(n, requests)
            return ((tpot_target_s is None or p.tpot_s <= tpot_target_s)
                    and (ttft_target_s is None or p.ttft_s <= ttft_target_s))

        from gemmlib.llm.memory import largest_fitting

        n = largest_fitting(meets, limit)
        best = srv.point(n, requests) if n else None
        if n and n not in cs:
            cs = sorted({*cs, n})
    pts = tuple(srv.point(c, requests) for c in cs)
    return Serving(pts, srv.kv_limit, tpot_target_s, ttft_target_s, best, **common)
