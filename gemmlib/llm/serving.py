"""Serving: throughput against concurrency, time to first token and per output token, a latency target.

A decode deployment of ``par``'s GPUs serving C concurrent requests, each with a prompt of S
tokens and N generated tokens (the workload's ``seq_len`` and ``new_tokens``), batched
statically: the C prompts are prefilled together, then C sequences decode N steps.

* **TTFT** (time to first token) = the prefill of the C prompts (the prefill emits the first
  token), as vLLM's benchmark measures it to the first streamed token.
* **TPOT** (time per output token) = the decode's time / N, the mean step over contexts S … S+N−1
  (vLLM: (E2E − TTFT) / (output tokens − 1), the first token excluded).
* **Tokens/s** = C / TPOT for the deployment, ÷ the GPUs per GPU.
* The **KV limit** is the largest C whose per-GPU memory (weights, KV cache at S + N tokens,
  prefill activations, workspace) fits (:func:`gemmlib.llm.memory.inference_memory`).
* The **best concurrency under a target** is the largest C up to the KV limit whose TPOT (and TTFT,
  when given) meets it — the throughput-at-a-latency question aiconfigurator's ``--tpot`` and
  ``--ttft`` filters answer; TPOT grows with C, so it is found by bisection.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from gemmlib.core.errors import InputError
from gemmlib.core.hardware import Hardware
from gemmlib.core.i18n import N_
from gemmlib.llm.accounting import Workload
from gemmlib.llm.config import ModelConfig
from gemmlib.llm.memory import DEFAULT_MEMORY_UTILIZATION, inference_memory, largest_fitting
from gemmlib.llm.parallel import Parallel, microbatches, phase, replica_batch

MAX_CONCURRENCY = 1_000_000


@dataclass(frozen=True)
class ServingPoint:
    concurrency: int
    ttft_s: float
    tpot_s: float
    tokens_per_s: float
    tokens_per_s_per_gpu: float
    memory_bytes: float
    fits: bool

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Serving:
    points: tuple[ServingPoint, ...]
    kv_limit: int  # largest concurrency that fits (0: not even one)
    tpot_target_s: float | None
    ttft_target_s: float | None
    best: ServingPoint | None  # largest concurrency meeting the targets (None: none does, or no target)

    def to_dict(self) -> dict:
        return {"points": [p.to_dict() for p in self.points], "kv_limit": self.kv_limit,
                "tpot_target_s": self.tpot_target_s, "ttft_target_s": self.ttft_target_s,
                "best": self.best.to_dict() if self.best else None}


def _check_target(name: str, v) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
        raise InputError(N_("{name} must be a positive number of seconds, got {v!r}"), name=name, v=v)
    return float(v)


def point(cfg: ModelConfig, wl: Workload, hw: Hardware, par: Parallel, concurrency: int,
          efficiency: float = 1.0, memory_utilization: float = DEFAULT_MEMORY_UTILIZATION) -> ServingPoint:
    """TTFT, TPOT and throughput at ``concurrency`` requests."""
    w = replace(wl, batch=concurrency)
    pre = phase(cfg, w, hw, par, "prefill", efficiency)
    dec = phase(cfg, w, hw, par, "decode", efficiency)
    tpot = dec.time_s / wl.new_tokens
    mem = _memory(cfg, w, hw, par, memory_utilization)
    tps = concurrency / tpot if tpot else 0.0
    return ServingPoint(concurrency, pre.time_s, tpot, tps, tps / par.gpus, mem.total_bytes, mem.fits)


def _memory(cfg, w, hw, par, u):
    rb = replica_batch(w.batch, par)
    mb = -(-rb // microbatches("prefill", rb, par))
    return inference_memory(cfg, w, hw, par, micro_batch=mb, memory_utilization=u)


def serving(cfg: ModelConfig, wl: Workload, hw: Hardware, par: Parallel, efficiency: float = 1.0, *,
            tpot_target_s: float | None = None, ttft_target_s: float | None = None,
            max_concurrency: int | None = None,
            memory_utilization: float = DEFAULT_MEMORY_UTILIZATION) -> Serving:
    """The serving curve from one request to the KV limit (powers of two and the limit), and the best
    concurrency under the targets."""
    if wl.new_tokens < 1:
        raise InputError(N_("serving needs generated tokens: give --new-tokens N ≥ 1"))
    tpot_target_s = _check_target("the TPOT target", tpot_target_s)
    ttft_target_s = _check_target("the TTFT target", ttft_target_s)
    cap = MAX_CONCURRENCY if max_concurrency is None else int(max_concurrency)
    if cap < 1:
        raise InputError(N_("the concurrency limit must be at least 1, got {max_concurrency!r}"),
                         max_concurrency=max_concurrency)
    limit = largest_fitting(lambda c: _memory(cfg, replace(wl, batch=c), hw, par, memory_utilization).fits,
                            min(cap, MAX_CONCURRENCY))
    top = max(limit, 1)  # show one request even when it does not fit, marked so
    cs = []
    c = 1
    while c < top:
        cs.append(c)
        c *= 2
    cs.append(top)
    cache: dict[int, ServingPoint] = {}

    def at(c: int) -> ServingPoint:
        if c not in cache:
            cache[c] = point(cfg, wl, hw, par, c, efficiency, memory_utilization)
        return cache[c]

    best = None
    if (tpot_target_s is not None or ttft_target_s is not None) and limit >= 1:
        def meets(c: int) -> bool:
            p = at(c)
            return ((tpot_target_s is None or p.tpot_s <= tpot_target_s)
                    and (ttft_target_s is None or p.ttft_s <= ttft_target_s))

        n = largest_fitting(meets, limit)
        best = at(n) if n else None
        if n and n not in cs:
            cs = sorted({*cs, n})
    pts = tuple(at(c) for c in cs)
    return Serving(pts, limit, tpot_target_s, ttft_target_s, best)
