"""Devices as torch sees them, and their measured ceilings.

* ``detect()`` asks torch: CPU threads, every CUDA GPU (name, SMs, memory, compute
  capability) and Apple's MPS, each matched to the hardware catalogue by name.
* ``measure_ceilings(device)`` runs a large GEMM per dtype and a device-to-device copy and
  saves the result (``gemmlib.core.ceilings``) for the roofline and the estimator.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gemmlib.core import ceilings
from gemmlib.core.ceilings import Ceilings, save_ceilings
from gemmlib.core.errors import InputError
from gemmlib.core.hardware import Hardware
from gemmlib.core.i18n import N_, Msg, Translate, english, render
from gemmlib.core.machine import DeviceInfo, cpu_info, match_catalogue
from gemmlib.core.results import BenchResult, record
from gemmlib.measure import harness, plan, safety
from gemmlib.measure import precision as bp
from gemmlib.measure.harness import require_device
from gemmlib.measure.spec import BenchSpec


# --------------------------------------------------------------------------- torch detection
def detect(gettext: Translate = english) -> list[DeviceInfo]:
    """Every device torch can use here: the CPU, each CUDA GPU, MPS (the match notes through
    ``gettext``: English by default)."""
    import torch

    cpu = cpu_info()
    note = render(N_("{cpus} logical CPUs, torch uses {threads} threads. {note}"),
                  {"cpus": os.cpu_count(), "threads": torch.get_num_threads(),
                   "note": match_catalogue(cpu.name, "cpu", gettext=gettext)[1]}, gettext)
    devices = [DeviceInfo("cpu", 0, cpu.name, torch.get_num_threads(), cpu.memory_bytes, "",
                          cpu.catalogue, note, "torch")]
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            hw, note = match_catalogue(p.name, gettext=gettext)
            devices.append(DeviceInfo("cuda", i, p.name, int(p.multi_processor_count), float(p.total_memory),
                                      f"{p.major}.{p.minor}", hw.name if hw else "", note, "torch"))
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        devices.append(DeviceInfo("mps", 0, "Apple GPU (MPS)", 0, 0.0, "", "",
                                  gettext(N_("Apple GPUs are not in the catalogue")), "torch"))
    return devices


def device_info(device: str) -> DeviceInfo:
    """The detected entry for "cpu", "cuda" (current GPU) or "mps"; InputError if absent."""
    dev = require_device(device)
    found = detect()
    if dev == "cuda":
        import torch
        idx = torch.cuda.current_device()
        for d in found:
            if d.kind == "cuda" and d.index == idx:
                return d
    for d in found:
        if d.kind == dev:
            return d
    raise InputError(N_("device {device!r} was not detected"), device=device)


def datasheet_for(device: str, name: str | None = None) -> Hardware | None:
    """The catalogue row for this device (by its detected name), None if not in the catalogue."""
    if name is None:
        name = device_info(device).name
    return match_catalogue(name, "cpu" if device == "cpu" else "cuda")[0]


def measured_ceilings(device: str, device_name: str | None = None) -> Ceilings | None:
    """The ceilings measured for this device (by name), or None."""
    if device_name is None:
        device_name = device_info(device).name
    return ceilings.find(device, device_name)


def measured_hardware(device: str, device_name: str | None = None) -> Hardware | None:
    c = measured_ceilings(device, device_name)
    return c.hardware() if c else None


def ceiling_plan(device: str, quick: bool = False) -> tuple[int, int]:
    """(GEMM size, copy bytes) for a ceiling run: big enough to reach the peak, small enough to be quick."""
    if device == "cuda":
        return (4096, 256 * 1024**2) if quick else (8192, 1024**3)
    return (512, 32 * 1024**2) if quick else (1024, 128 * 1024**2)


def measure_copy(device: str, nbytes: int, min_run_time: float = 0.5) -> Any:
    """Device-to-device copy of ``nbytes``: a BenchResult whose ``bytes`` counts read + write."""

    safety.check_memory(3 * nbytes, device)
    import torch
    n = max(1, int(nbytes) // 4)
    with safety.oom_guard(device):
        src = torch.randn(n, device=device)
        dst = torch.empty_like(src)
        t = harness.time_callable(dst.copy_, device=device, args_list=[(src,)], min_run_time=min_run_time)
        ok = torch.equal(dst, src)
    r = BenchResult("ceiling", "copy", device, harness.device_name(device), "fp32",
                            {"elements": n}, flops=0.0, bytes=2.0 * n * 4, rel_error=0.0 if ok else 1.0,
                            reason="device-to-device copy: read + write bytes")
    r.set_timing(t)
    del src, dst
    return r


def measure_ceilings(device: str = "cuda", *, dtypes: tuple[str, ...] | None = None, quick: bool = False,
                     size: int | None = None, progress: Callable[[float, str | Msg], None] | None = None,
                     save: bool = True, copy_bytes: int | None = None,
                     deadline: safety.Deadline | None = None) -> Ceilings:
    """Run a large GEMM per dtype and a device copy; keep and return the measured peaks.

    ``size`` and ``copy_bytes`` default to ``ceiling_plan(device, quick)``. ``deadline`` (the
    report's): a dtype or the copy not started by then is left out, with a note saying why."""

    dev = harness.require_device(device)
    info = device_info(dev)
    gemm_n, plan_copy = ceiling_plan(dev, quick)
    copy_bytes = plan_copy if copy_bytes is None else int(copy_bytes)
    if size is not None:
        safety.check_dims(size=size)
        gemm_n = int(size)
    want = tuple(dtypes) if dtypes else bp.PRECISION_DTYPES
    cfg = bp.PrecisionConfig(device=dev, shapes=((gemm_n, gemm_n, gemm_n, "ceiling"),), dtypes=want,
                             with_quant=False, check_error=False,
                             min_run_time=0.3 if quick else 0.6)
    bp.validate(cfg)
    steps = len(want) + 1
    done = [0]

    def step(msg: str | Msg) -> None:
        if progress:
            progress(min(1.0, done[0] / steps), msg)

    results = []
    for d in want:
        step(Msg(N_("{dtype} GEMM {n}³"), dtype=d, n=gemm_n))
        results.extend(bp.run_precision(cfg.with_dtypes((d,)), record_results=False, deadline=deadline))
        done[0] += 1
    copy = None
    if deadline is None or not deadline.expired():
        step(Msg(N_("device copy {size:.0f} MiB"), size=copy_bytes / 1024**2))
        copy = measure_copy(dev, copy_bytes, min_run_time=0.3 if quick else 0.6)
        results.append(copy)
    done[0] += 1
    step(Msg(N_("done")))
    peaks, notes, spread = {}, {}, {}

    def band(r, per_call: float) -> tuple[float, float] | None:  # throughput at the p80 and p20 times
        return (per_call / r.p80_s, per_call / r.p20_s) if r.p20_s and r.p80_s else None

    for r in results:
        if r.bench == "precision" and r.supported and r.tflops and r.extra.get("variant", "gemm") == "gemm":
            peaks[r.dtype] = r.tflops * 1e12
            if band(r, r.flops):
                spread[r.dtype] = band(r, r.flops)
        elif r.bench == "precision" and not r.supported:
            notes[r.dtype] = r.reason
    if copy is None:
        notes["copy"] = deadline.reason()
    elif copy.gbps and band(copy, copy.bytes):
        spread["copy"] = band(copy, copy.bytes)
    c = Ceilings(dev, info.name, peaks, copy.gbps * 1e9 if copy is not None and copy.gbps else None,
                 gemm_size=gemm_n,
                 copy_bytes=copy_bytes, notes=notes, results=[r for r in results], units=info.units,
                 memory_bytes=info.memory_bytes, spread=spread)
    for r in results:
        r.bench = "ceiling"
    record(results)
    cut = deadline is not None and (copy is None or any(r.reason == deadline.reason() for r in results))
    if save and not cut:  # a run the deadline cut short does not replace a whole one
        save_ceilings(c)
    return c


# --------------------------------------------------------------------------- the spec
@dataclass(frozen=True)
class CeilingsConfig:
    """A ceiling measurement: one size³ GEMM per format and a device copy of ``copy_bytes``. The sizes
    are fixed where the config is built (0: ``ceiling_plan``'s for the device), on the server."""

    device: str = "cpu"
    quick: bool = False
    size: int = 0
    copy_bytes: int = 0

    def __post_init__(self) -> None:
        plan.check_device(self.device)
        size, copy_bytes = ceiling_plan(self.device, self.quick)
        object.__setattr__(self, "size", int(self.size or size))
        object.__setattr__(self, "copy_bytes", int(self.copy_bytes or copy_bytes))
        plan.check_whole(size=self.size, copy_bytes=self.copy_bytes)

    @property
    def min_run_time(self) -> float:
        return 0.3 if self.quick else 0.6

    def precision(self) -> bp.PrecisionConfig:
        """The GEMMs, as the precision benchmark runs them (every format, no error check)."""
        return bp.PrecisionConfig(device=self.device, shapes=((self.size, self.size, self.size, "ceiling"),),
                                  dtypes=bp.PRECISION_DTYPES, with_quant=False, check_error=False,
                                  min_run_time=self.min_run_time)


def plan_ceilings(cfg: CeilingsConfig, lim: safety.Limits) -> plan.Plan:
    """One precision plan per format (one after the other) and the device copy: source and destination."""
    base = cfg.precision()
    parts = [bp.plan_precision(base.with_dtypes((d,)), lim) for d in base.dtypes]
    n_copy = max(1, int(cfg.copy_bytes) // 4)
    copy = plan.Plan(bytes=2.0 * 4 * n_copy, seconds=plan.row_seconds(0.0, cfg.min_run_time, cfg.device), rows=1,
                     steps=1)
    return plan.sum_plans(parts + [copy])


def _run_spec(cfg: CeilingsConfig, progress: Any, deadline: safety.Deadline) -> Ceilings:
    return measure_ceilings(cfg.device, quick=cfg.quick, size=cfg.size, copy_bytes=cfg.copy_bytes, progress=progress,
                            save=False)


SPEC = BenchSpec("ceilings", CeilingsConfig, plan_ceilings, _run_spec, Ceilings, label=N_("a ceiling measurement"),
                 imports=("gemmlib.measure.precision",))
