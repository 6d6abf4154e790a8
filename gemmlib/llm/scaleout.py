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

import math
from dataclasses import asdict, dataclass, field, replace

from gemmlib.core.errors import InputError
from gemmlib.core.flops import DEFAULT_EFFICIENCY
from gemmlib.core.hardware import Hardware
from gemmlib.core.i18n import N_
from gemmlib.llm.accounting import (
    Memory,
    Workload,
    _check_efficiency,
    check_positions,
    counting_variants,
    memory,
    position_warnings,
    read_of,
    rules_of_thumb,
)
from gemmlib.llm.config import ModelConfig
from gemmlib.llm.memory import (
    DEFAULT_MEMORY_UTILIZATION,
    PerGpuMemory,
    _check_utilization,
    inference_memory,
    kv_per_gpu,
    largest_fitting,
)
from gemmlib.llm.parallel import Parallel, ParallelPhase, microbatches, phase, replica_batch
from gemmlib.llm.serving import Serving, serving
from gemmlib.llm.training import TrainEstimate, Training, train

MAX_BATCH_SEARCH = 1_000_000


@dataclass(frozen=True)
class ScaleOutEstimate:
    model: ModelConfig
    workload: Workload
    hardware: Hardware  # one device, as given
    parallel: Parallel
    efficiency: float
    prefill: ParallelPhase
    decode: ParallelPhase
    memory: Memory  # the whole job against every GPU's memory
    per_gpu: PerGpuMemory
    max_batch: int  # the largest batch (concurrent sequences) whose per-GPU memory fits
    memory_utilization: float = DEFAULT_MEMORY_UTILIZATION
    train: TrainEstimate | None = None
    serving: Serving | None = None
    read_info: dict = field(default_factory=dict, compare=False)  # the config.json parser's report

    @property
    def gpus(self) -> int:
        return self.parallel.gpus

    def read(self) -> dict:
        """What was read (family, attention pattern, MLA, experts, quantization, dtype, ignored keys)."""
        return read_of(self.model, self.workload, self.read_info)

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

    def to_dict(self) -> dict:
        """Everything, JSON-ready (the CLI's --json and the page's download)."""
        hw, par = self.hardware, self.parallel
        ic = hw.interconnect
        d = {
            "model": self.model.summary(),
            "workload": asdict(self.workload),
            "hardware": {"name": hw.name, "gpus": self.gpus, "efficiency": self.efficiency,
                         "compute_dtype": self.compute_dtype, "peak_flops_per_gpu": hw.peak(self.compute_dtype),
                         "bandwidth_per_gpu": hw.bandwidth, "memory_bytes_per_gpu": hw.memory_bytes,
                         "memory_source": hw.memory_source, "source": hw.source,
                         "interconnect": None if ic is None else {
                             "scale_up": ic.scale_up, "scale_up_bytes_per_s": ic.scale_up_bytes_per_s,
                             "pcie": ic.pcie, "pcie_bytes_per_s": ic.pcie_bytes_per_s, "network": ic.network,
                             "network_bytes_per_s": ic.network_bytes_per_s, "gpus_per_node": ic.gpus_per_node,
                             "source": ic.source}},
            "parallel": {**par.to_dict(), "gpus": self.gpus, "gpus_per_node": par.node_size(hw),
                         "overlap": par.overlap, "sequence_parallel": par.sequence_parallel,
                         "groups": par.placement(hw) if self.gpus > 1 else []},
            "prefill": self.prefill.to_dict(),
            "decode": {**self.decode.to_dict(), "steps": self.workload.new_tokens},
            "memory": self.memory.to_dict(),
            "per_gpu": {**self.per_gpu.to_dict(), "max_batch": self.max_batch,
                        "memory_utilization": self.memory_utilization},
            "times": self.times(),
            "variants": counting_variants(self.model, self.workload),
            "rules_of_thumb": rules_of_thumb(self.model, self.workload),
            "warnings": position_warnings(self.model, self.workload),
            "read": self.read(),
        }
        if self.train is not None:
            d["train"] = self.train.to_dict()
        if self.serving is not None:
            d["serving"] = [p.to_dict() for p in self.serving.points]
            d["serving_summary"] = {k: v for k, v in self.serving.to_dict().items() if k != "points"}
        return d

    def to_json(self, indent: int | None = None) -> str:
        """:meth:`to_dict` as strict JSON (a non-finite number becomes null)."""
        import json

        from gemmlib.llm.accounting import _finite

        return json.dumps(_finite(self.to_dict()), indent=indent, allow_nan=False)


def per_gpu_memory(cfg: ModelConfig, wl: Workload, hw: Hardware, par: Parallel,
                   memory_utilization: float = DEFAULT_MEMORY_UTILIZATION) -> PerGpuMemory:
    """The busiest GPU's memory for ``wl`` (its prefill micro-batch's activations, the final KV cache; a
    decode-only workload's activations are one token per sequence)."""
    if wl.decode_only:
        act = replace(wl, seq_len=1, decode_only=False)
        return replace(inference_memory(cfg, act, hw, par, micro_batch=replica_batch(wl.batch, par),
                                        memory_utilization=memory_utilization),
                       kv_cache_bytes=kv_per_gpu(cfg, wl, hw, par))
    rb = replica_batch(wl.batch, par)
    mb = -(-rb // microbatches("prefill", rb, par))
    return inference_memory(cfg, wl, hw, par, micro_batch=mb, memory_utilization=memory_utilization)


def estimate(cfg: ModelConfig, wl: Workload, hw: Hardware, par: Parallel | None = None,
             efficiency: float = DEFAULT_EFFICIENCY,
             *, gpus: int | None = None, training: Training | None = None, serve: bool = False,
             tpot_target_s: float | None = None, ttft_target_s: float | None = None,
             memory_utilization: float = DEFAULT_MEMORY_UTILIZATION,
             read_info: dict | None = None) -> ScaleOutEstimate:
    """Prefill and decode of ``wl`` on ``par``'s GPUs (one GPU by default), per-GPU memory, and with
    ``training`` a training run of ``wl.batch`` × ``wl.seq_len`` tokens per step, with ``serve`` (or a
    target) the serving curve. ``gpus``, when given, must equal the product of the parallel sizes.
    ``read_info`` is the config.json parser's report (``gemmlib.llm.hf.read_config``), shown under "read"."""
    _check_efficiency(efficiency)
    check_positions(cfg, wl)
    u = _check_utilization(memory_utilization)
    par = par or Parallel()
    par.check(cfg, gpus)
    if par.gpus > 1 and hw.interconnect is None:
        raise InputError(N_("{name} has no interconnect figures; pick a catalogue GPU for more than one device"),
                         name=hw.name)
    pre = phase(cfg, wl, hw, par, "prefill", efficiency)
    dec = phase(cfg, wl, hw, par, "decode", efficiency)
    whole = memory(cfg, wl, hw, par.gpus)
    mem = per_gpu_memory(cfg, wl, hw, par, u)
    max_b = largest_fitting(lambda b: per_gpu_memory(cfg, replace(wl, batch=b), hw, par, u).fits, MAX_BATCH_SEARCH)
    tr = train(cfg, wl, hw, par, training, efficiency, u) if training is not None else None
    sv = None
    if serve or tpot_target_s is not None or ttft_target_s is not None:
        sv = serving(cfg, wl, hw, par, efficiency, tpot_target_s=tpot_target_s, ttft_target_s=ttft_target_s,
                     memory_utilization=u)
    return ScaleOutEstimate(cfg, wl, hw, par, float(efficiency), pre, dec, whole, mem, max_b, u, tr, sv,
                            dict(read_info or {}))
