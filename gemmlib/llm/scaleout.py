"""The estimate on one or many GPUs: parallel phases, per-GPU memory, and optionally training and serving.

:func:`estimate` is what the CLI (``python -m gemmlib estimate``) and the LLM Estimator page call.
On one GPU (``Parallel()``) every number equals :func:`gemmlib.llm.accounting.estimate`'s; on
more, each op is one GPU's share and the collectives between the GPUs are charged
(:mod:`gemmlib.llm.parallel`), memory is per GPU (:mod:`gemmlib.llm.memory`), and a training
run (:mod:`gemmlib.llm.training`) and a serving curve (:mod:`gemmlib.llm.serving`) can be added.

The modules split by question: ``parallel`` (how ops shard and what crosses which link),
``memory`` (what one GPU holds), ``training`` (a step and a run), ``serving`` (a deployment
under load) and this one, which assembles them, so each can be read and tested alone.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gemmlib.core.errors import InputError
from gemmlib.core.hardware import Hardware
from gemmlib.core.i18n import N_
from gemmlib.llm.accounting import (
    Estimate,
    PhaseTotals,
    Workload,
    check_positions,
    efficiency_for,
    executed_model,
    memory,
    phase_ops,
)
from gemmlib.llm.config import ModelConfig
from gemmlib.llm.memory import (
    DEFAULT_MEMORY_UTILIZATION,
    PerGpuMemory,
    _check_utilization,
    inference_memory,
    kv_per_gpu,
    largest_fitting,
    weights_per_gpu,
)
from gemmlib.llm.parallel import Parallel, microbatches, phase, replica_batch
from gemmlib.llm.serving import Serving, serving
from gemmlib.llm.training import TrainEstimate, Training, train

MAX_BATCH_SEARCH = 1_000_000

# One estimate for one GPU and for many: gemmlib.llm.accounting.Estimate, with this module's part.
ScaleOutEstimate = Estimate


@dataclass(frozen=True)
class ScaleOut:
    """What an estimate on GPUs adds to :class:`gemmlib.llm.accounting.Estimate` (its ``scale_out``): the
    parallel layout, the busiest GPU's memory, the largest batch that fits, and a training run and a serving
    curve when asked for."""

    parallel: Parallel
    per_gpu: PerGpuMemory
    max_batch: int  # the largest batch (concurrent sequences) whose per-GPU memory fits
    memory_utilization: float = DEFAULT_MEMORY_UTILIZATION
    train: TrainEstimate | None = None
    serving: Serving | None = None

    def to_dict(self, est: Estimate) -> dict:
        """The JSON keys this part adds: parallel, per_gpu, and train / serving when present."""
        par, hw = self.parallel, est.hardware
        d = {"parallel": {**par.to_dict(), "gpus": par.gpus, "gpus_per_node": par.node_size(hw),
                          "overlap": par.overlap, "sequence_parallel": par.sequence_parallel,
                          "groups": par.placement(hw) if par.gpus > 1 else []},
             "per_gpu": {**self.per_gpu.to_dict(), "max_batch": self.max_batch,
                         "memory_utilization": self.memory_utilization}}
        if self.train is not None:
            d["train"] = self.train.to_dict()
        if self.serving is not None:
            d["serving"] = [p.to_dict() for p in self.serving.points]
            d["serving_summary"] = {k: v for k, v in self.serving.to_dict().items() if k != "points"}
        return d


def _per_gpu_memory_fn(cfg: ModelConfig, wl: Workload, hw: Hardware, par: Parallel,
                       memory_utilization: float = DEFAULT_MEMORY_UTILIZATION):
    """batch → the busiest GPU's memory for ``wl`` at that batch; the weights (which no batch changes) are
    sized once."""
    weights = weights_per_gpu(cfg, wl, hw, par)

    def at(batch: int) -> PerGpuMemory:
        w = wl if batch == wl.batch else replace(wl, batch=batch)
        rb = replica_batch(w.batch, par)
        if w.decode_only:
            act = replace(w, seq_len=1, decode_only=False)
            return replace(inference_memory(cfg, act, hw, par, micro_batch=rb, memory_utilization=memory_utilization,
                                            weights=weights),
                           kv_cache_bytes=kv_per_gpu(cfg, w, hw, par))
        mb = -(-rb // microbatches("prefill", rb, par))
        return inference_memory(cfg, w, hw, par, micro_batch=mb, memory_utilization=memory_utilization,
                                weights=weights)

    return at


def per_gpu_memory(cfg: ModelConfig, wl: Workload, hw: Hardware, par: Parallel,
                   memory_utilization: float = DEFAULT_MEMORY_UTILIZATION) -> PerGpuMemory:
    """The busiest GPU's memory for ``wl`` (its prefill micro-batch's activations, the final KV cache; a
    decode-only workload's activations are one token per sequence)."""
    return _per_gpu_memory_fn(cfg, wl, hw, par, memory_utilization)(wl.batch)


def estimate(cfg: ModelConfig, wl: Workload, hw: Hardware, par: Parallel | None = None,
             efficiency: float | None = None,
             *, gpus: int | None = None, training: Training | None = None, serve: bool = False,
             tpot_target_s: float | None = None, ttft_target_s: float | None = None,
             memory_utilization: float = DEFAULT_MEMORY_UTILIZATION,
             read_info: dict | None = None, serving_options: dict | None = None) -> Estimate:
    """Prefill and decode of ``wl`` on ``par``'s GPUs (one GPU by default), per-GPU memory, and with
    ``training`` a training run of ``wl.batch`` × ``wl.seq_len`` tokens per step, with ``serve`` (or a
    target) the serving curve (``serving_options``: :func:`gemmlib.llm.serving.serving`'s keywords —
    engine, lengths, request rate, concurrency). ``gpus``, when given, must equal the product of the parallel sizes.
    ``efficiency``: None (default) the shape model (:mod:`gemmlib.llm.efficiency`), a number one flat share
    for every op. ``read_info`` is the config.json parser's report (``gemmlib.llm.hf.read_config``)."""
    check_positions(cfg, wl)
    u = _check_utilization(memory_utilization)
    par = par or Parallel()
    par.check(cfg, gpus)
    if par.gpus > 1 and hw.interconnect is None:
        raise InputError(N_("{name} has no interconnect figures; pick a catalogue GPU for more than one device"),
                         name=hw.name)
    if hw.peak(wl.act_dtype) is None:
        raise hw.missing_peak_error(wl.act_dtype)
    read, cfg = cfg, executed_model(cfg, wl)
    eff, label, detail = efficiency_for(efficiency, hw, cfg, wl, par)
    pre = phase(cfg, wl, hw, par, "prefill", eff, whole=PhaseTotals("prefill", tuple(phase_ops(cfg, wl, "prefill"))))
    dec = phase(cfg, wl, hw, par, "decode", eff, whole=PhaseTotals("decode", tuple(phase_ops(cfg, wl, "decode"))))
    whole = memory(cfg, wl, hw, par.gpus)
    mem_at = _per_gpu_memory_fn(cfg, wl, hw, par, u)
    mem = mem_at(wl.batch)
    max_b = largest_fitting(lambda b: mem_at(b).fits, MAX_BATCH_SEARCH)
    tr = train(cfg, wl, hw, par, training, eff, u) if training is not None else None
    sv = None
    if serve or tpot_target_s is not None or ttft_target_s is not None or serving_options:
        sv = serving(cfg, wl, hw, par, eff, tpot_target_s=tpot_target_s, ttft_target_s=ttft_target_s,
                     memory_utilization=u, **(serving_options or {}))
    per_op = callable(eff)
    return Estimate(cfg, wl, hw, 1.0 if per_op else float(eff), pre, dec, whole, label, dict(read_info or {}),
                    detail, ScaleOut(par, mem, max_b, u, tr, sv), as_read=read if read is not cfg else None)
