"""GPU monitoring with NVML (nvidia-ml-py) while a benchmark or a profile runs.

A background thread reads, every ``interval_s``, what the driver reports for one
GPU: utilization, memory-controller utilization, SM and memory clocks, power and
temperature. The samples become time series that the Profiler page draws against
the article's targets (utilization ≥ 75 %, memory bandwidth ≥ 60 %).

What NVML's two utilization figures mean (read them with care):

* ``gpu`` ("SM utilization" in the article): the percentage of the last sample
  period during which *at least one kernel* was running. A single small kernel
  on one SM counts as 100 %; it is a busy-time figure, not SM occupancy.
* ``memory``: the percentage of the last sample period during which device
  memory was being read or written — a busy-time figure for the memory
  controller, the closest NVML comes to "bandwidth utilization".

Without the NVML library, a driver or a GPU, nothing is sampled and the result
says so plainly (``MonitorResult.available is False`` and ``reason``).

``GpuMonitor(defer=True)`` samples only between its ``start()`` and ``stop()``: the harness calls
them around the timed calls (``time_callable(window=...)``), so the averages leave out building
the model, drawing the inputs and the warm-up.

**The machine's state** beside every GPU figure (``machine_state``, ``MachineRecord``): SM and
memory clocks (and their maxima), power draw and limit, temperature, performance state, the clock
event ("throttle") reasons, the power and thermal violation counters, persistence mode, and the
driver; ``clock_flags`` says when a run's clocks dropped or were held back, from a reading before
and one after. ``software_versions`` adds CUDA, cuBLAS, cuDNN, NCCL, torch and Triton.

No torch at import time (``software_versions`` imports it); ``pynvml`` (from the nvidia-ml-py
package) is imported only when monitoring or a reading starts.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from gemmlib.core.i18n import N_, Text
from gemmlib.core.targets import BANDWIDTH_TARGET, METRICS, UTIL_TARGET


@dataclass
class Sample:
    """One reading; ``t_s`` is seconds since monitoring started. None = the driver did not say."""

    t_s: float
    sm_util: float | None = None  # percent
    mem_util: float | None = None  # percent
    sm_clock_mhz: float | None = None
    mem_clock_mhz: float | None = None
    power_w: float | None = None
    temp_c: float | None = None
    mem_used_gib: float | None = None


@dataclass
class MonitorResult:
    available: bool
    reason: str  # why nothing was sampled, or what was sampled
    device_name: str = ""
    interval_s: float = 0.0
    samples: list[Sample] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # readings the driver refused (once each)

    def series(self, metric: str) -> list[tuple[float, float]]:
        """(t_s, value) for one metric, skipping missing readings."""
        if metric not in METRICS:
            raise KeyError(f"unknown metric {metric!r}; known: {', '.join(METRICS)}")
        return [(s.t_s, getattr(s, metric)) for s in self.samples if getattr(s, metric) is not None]

    def summary(self) -> dict[str, Any]:
        """Mean / max per metric, and the share of samples meeting the article's targets."""
        out: dict[str, Any] = {"samples": len(self.samples)}
        for metric in METRICS:
            vals = [v for _, v in self.series(metric)]
            if vals:
                out[metric] = {"mean": statistics.fmean(vals), "max": max(vals), "min": min(vals)}
        for metric, target in (("sm_util", UTIL_TARGET), ("mem_util", BANDWIDTH_TARGET)):
            vals = [v for _, v in self.series(metric)]
            if vals:
                out[f"{metric}_meets_target"] = sum(v >= 100 * target for v in vals) / len(vals)
        return out

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["summary"] = self.summary()
        d["targets"] = {"sm_util": UTIL_TARGET, "mem_util": BANDWIDTH_TARGET}
        return d


class Sampler:
    """Calls ``read()`` every ``interval_s`` on a daemon thread and keeps what it returns.

    ``read`` returns a dict of ``Sample`` fields (without ``t_s``). An exception
    from ``read`` is noted once in ``errors`` and sampling goes on. This class
    knows nothing about GPUs; ``GpuMonitor`` gives it an NVML reader.
    """

    def __init__(self, read: Callable[[], dict[str, float | None]], interval_s: float = 0.05,
                 max_samples: int = 20_000) -> None:
        if not interval_s > 0:
            raise ValueError(f"interval_s must be positive, got {interval_s}")
        self._read = read
        self.interval_s = float(interval_s)
        self.max_samples = int(max_samples)
        self.samples: list[Sample] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = 0.0

    def _take(self) -> None:
        t = time.perf_counter() - self._t0
        try:
            values = self._read()
        except Exception as e:  # noqa: BLE001 - a failing reading must not kill the run
            msg = f"{type(e).__name__}: {e}"
            if msg not in self.errors:
                self.errors.append(msg)
            return
        if len(self.samples) < self.max_samples:
            self.samples.append(Sample(t_s=t, **values))

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._take()
            self._stop.wait(self.interval_s)

    def start(self) -> Sampler:
        if self._thread is not None:
            raise RuntimeError("sampler already started")
        self._t0 = time.perf_counter()
        self._thread = threading.Thread(target=self._loop, name="gemmlib-monitor", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> list[Sample]:
        """Stop the thread, take one last reading (so a short run has an end point)."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=5 * self.interval_s + 1.0)
            self._take()
            self._thread = None
        return self.samples


# nvml_status's reasons (Texts: English here, a page shows them in its reader's language)
NVML_MISSING = N_("GPU monitoring needs the nvidia-ml-py package (import pynvml); it is not installed, so no "
                  "utilization, clock, power or temperature is shown.")
NVML_NO_DRIVER = N_("No NVIDIA driver/GPU visible to NVML on this machine ({error}); GPU monitoring is off — there "
                    "is nothing to sample.")
NVML_NO_GPU = N_("NVML runs but reports no GPU; GPU monitoring is off.")
NVML_NO_INDEX = N_("GPU index {index} does not exist (NVML sees {count} GPUs).")
NVML_NO_INDEX_ONE = N_("GPU index {index} does not exist (NVML sees 1 GPU: index 0).")
NVML_UNREADABLE = N_("NVML could not read GPU {index} ({error}); GPU monitoring is off.")


def nvml_status(index: int = 0) -> tuple[bool, str]:
    """(True, device name) when NVML can read GPU ``index``; else (False, a plain reason)."""
    try:
        import pynvml
    except ImportError:
        return False, NVML_MISSING
    try:
        pynvml.nvmlInit()
    except Exception as e:  # noqa: BLE001 - NVMLError_LibraryNotFound, DriverNotLoaded, ...
        return False, Text(NVML_NO_DRIVER, error=f"{type(e).__name__}: {e}")
    try:
        count = pynvml.nvmlDeviceGetCount()
        if count < 1:
            return False, NVML_NO_GPU
        if not 0 <= index < count:
            return False, Text(NVML_NO_INDEX_ONE if count == 1 else NVML_NO_INDEX, index=index, count=count)
        name = pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(index))
        return True, name.decode() if isinstance(name, bytes) else str(name)
    except Exception as e:  # noqa: BLE001
        return False, Text(NVML_UNREADABLE, index=index, error=f"{type(e).__name__}: {e}")
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:  # noqa: BLE001
            pass


def index_by_pci(target: tuple[int, int, int], nvml_pci: list[tuple[int, int, int]]) -> int | None:
    """The NVML index whose (domain, bus, device) PCI address is ``target``, or None."""
    for i, addr in enumerate(nvml_pci):
        if tuple(int(x) for x in addr) == tuple(int(x) for x in target):
            return i
    return None


def nvml_index_for_torch_device(torch_index: int | None = None) -> int:
    """NVML's index of torch's cuda:``torch_index`` (default: the current device).

    They differ under ``CUDA_VISIBLE_DEVICES`` (torch numbers the visible GPUs from 0, NVML numbers
    every GPU of the machine), so they are matched through the PCI address (torch's
    ``pci_domain_id``/``pci_bus_id``/``pci_device_id``, NVML's ``nvmlDeviceGetPciInfo``); when that
    is not possible, the same index.
    """
    try:
        import torch

        if torch_index is None:
            torch_index = torch.cuda.current_device()
    except Exception:  # noqa: BLE001 - no CUDA: index 0 is as good as any
        return int(torch_index or 0)
    try:
        import pynvml

        props = torch.cuda.get_device_properties(torch_index)
        bus = getattr(props, "pci_bus_id", None)
        dom = getattr(props, "pci_domain_id", None)
        dev = getattr(props, "pci_device_id", None)
        if bus is None or dom is None or dev is None:
            return torch_index
        pynvml.nvmlInit()
        try:
            pci = []
            for i in range(pynvml.nvmlDeviceGetCount()):
                info = pynvml.nvmlDeviceGetPciInfo(pynvml.nvmlDeviceGetHandleByIndex(i))
                pci.append((info.domain, info.bus, info.device))
        finally:
            pynvml.nvmlShutdown()
        found = index_by_pci((dom, bus, dev), pci)
        if found is not None:
            return found
    except Exception:  # noqa: BLE001 - best effort; fall back to the same index
        pass
    return torch_index


def _nvml_reader(pynvml: Any, handle: Any, refused: list[str] | None = None
                 ) -> Callable[[], dict[str, float | None]]:
    """A reading of every field NVML gives for ``handle``, each on its own: a field the driver refuses (utilization
    under MIG or on some vGPUs: NVMLError_NotSupported) is None and named once in ``refused``, and the others are
    kept (one refused field once dropped the whole reading, clocks, power and temperature with it)."""
    fields: dict[str, Callable[[], float]] = {
        "sm_util": lambda: float(pynvml.nvmlDeviceGetUtilizationRates(handle).gpu),
        "mem_util": lambda: float(pynvml.nvmlDeviceGetUtilizationRates(handle).memory),
        "sm_clock_mhz": lambda: float(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)),
        "mem_clock_mhz": lambda: float(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_MEM)),
        "power_w": lambda: pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0,  # milliwatts
        "temp_c": lambda: float(pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU)),
        "mem_used_gib": lambda: pynvml.nvmlDeviceGetMemoryInfo(handle).used / 2**30,
    }

    def read() -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for name, get in fields.items():
            try:
                out[name] = get()
            except pynvml.NVMLError as e:
                out[name] = None
                msg = f"{name}: {type(e).__name__}: {e}"
                if refused is not None and msg not in refused:
                    refused.append(msg)
        return out

    return read


class GpuMonitor:
    """Context manager: sample one GPU while the ``with`` body runs.

    >>> with GpuMonitor(interval_s=0.05) as mon:
    ...     run_the_benchmark()
    >>> mon.result.available, mon.result.reason

    Without NVML or a GPU the body runs unchanged and ``result`` says why
    nothing was sampled. NVML updates its utilization counters roughly every
    1/6 s to 1 s depending on the GPU, so intervals below ~50 ms repeat values.
    """

    def __init__(self, index: int = 0, interval_s: float = 0.05, enabled: bool = True, defer: bool = False) -> None:
        self.index = index
        self.interval_s = interval_s
        self.enabled = enabled
        self.defer = defer  # sample only between start() and stop(), not the whole ``with`` body
        self.result = MonitorResult(False, "monitoring has not run")
        self._sampler: Sampler | None = None
        self._pynvml: Any = None
        self._started = False

    def __enter__(self) -> GpuMonitor:
        if not self.enabled:
            self.result = MonitorResult(False, "GPU monitoring was switched off for this run.")
            return self
        ok, name_or_reason = nvml_status(self.index)
        if not ok:
            self.result = MonitorResult(False, name_or_reason)
            return self
        import pynvml

        pynvml.nvmlInit()
        self._pynvml = pynvml
        handle = pynvml.nvmlDeviceGetHandleByIndex(self.index)
        self._sampler = Sampler(_nvml_reader(pynvml, handle, refused := []), self.interval_s)
        self._sampler.errors = refused  # the fields the driver refused, beside any failed reading
        what = " during the timed calls only" if self.defer else ""
        self.result = MonitorResult(True, f"sampled every {self.interval_s * 1e3:.0f} ms via NVML{what}",
                                    device_name=name_or_reason, interval_s=self.interval_s)
        if not self.defer:
            self.start()
        return self

    def start(self) -> None:
        """Begin sampling (once; a monitor without NVML ignores it)."""
        if self._sampler is not None and not self._started:
            self._started = True
            self._sampler.start()

    def stop(self) -> None:
        """Stop sampling and keep the samples (the ``with`` block's end does it too)."""
        if self._sampler is not None:
            if self._started:
                self.result.samples = self._sampler.stop()
            self.result.errors = list(self._sampler.errors)
            self._sampler = None

    def __exit__(self, *exc: object) -> None:
        self.stop()
        if self._pynvml is not None:
            try:
                self._pynvml.nvmlShutdown()
            except Exception:  # noqa: BLE001
                pass
            self._pynvml = None


def monitor_call(fn: Callable[[], Any], *, index: int = 0, interval_s: float = 0.05,
                 enabled: bool = True) -> tuple[Any, MonitorResult]:
    """Run ``fn()`` under a ``GpuMonitor``; return (what fn returned, the monitor's result)."""
    with GpuMonitor(index=index, interval_s=interval_s, enabled=enabled) as mon:
        value = fn()
    return value, mon.result


# --------------------------------------------------------------------------- the machine's state
# NVML's clock event ("throttle") reasons, nvml.h's nvmlClocksThrottleReason* / nvmlClocksEventReason*
# bits (nvidia-ml-py names both; the values are the same).
CLOCK_REASONS = {
    0x1: "gpu_idle", 0x2: "applications_clocks_setting", 0x4: "sw_power_cap", 0x8: "hw_slowdown",
    0x10: "sync_boost", 0x20: "sw_thermal_slowdown", 0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown", 0x100: "display_clock_setting",
}
HOLDING_BACK = ("sw_power_cap", "hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown",
                "hw_power_brake_slowdown")  # reasons that mean the clocks are below what the load asks for
CLOCK_DROP = 0.05  # a drop of the SM or memory clock beyond this between two busy readings is flagged


def _try(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception:  # noqa: BLE001 - a field this driver or GPU does not report: None
        return None


def _text(v: Any) -> Any:
    return v.decode() if isinstance(v, bytes) else v


def machine_state(index: int = 0, pynvml: Any = None) -> dict[str, Any]:
    """One NVML reading of what sets GPU ``index``'s speed now (each field None when not reported):
    clocks (SM, memory, and their maxima) in MHz, power draw and enforced limit in W, temperature in
    °C, the performance state, the clock event reasons by name, the cumulative power and thermal
    violation times in ns (``nvmlDeviceGetViolationStatus``), total energy in mJ, persistence mode,
    the driver and the CUDA version the driver supports. ``{"available": False, "reason": why}``
    without NVML or a GPU. ``pynvml``: the module (tests pass a stand-in)."""
    if pynvml is None:
        try:
            import pynvml
        except ImportError:
            return {"available": False, "reason": NVML_MISSING}
    try:
        pynvml.nvmlInit()
    except Exception as e:  # noqa: BLE001
        return {"available": False, "reason": NVML_NO_DRIVER.format(error=f"{type(e).__name__}: {e}")}
    try:
        h = pynvml.nvmlDeviceGetHandleByIndex(index)
        sm, mem = getattr(pynvml, "NVML_CLOCK_SM", 1), getattr(pynvml, "NVML_CLOCK_MEM", 2)
        get_reasons = (getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None)
                       or getattr(pynvml, "nvmlDeviceGetCurrentClocksThrottleReasons", None))
        bits = _try(lambda: int(get_reasons(h))) if get_reasons else None

        def violation(policy: int) -> Any:
            return _try(lambda: int(pynvml.nvmlDeviceGetViolationStatus(h, policy).violationTime))

        cuda = _try(pynvml.nvmlSystemGetCudaDriverVersion)
        return {
            "available": True, "index": index, "t": time.time(),
            "name": _try(lambda: _text(pynvml.nvmlDeviceGetName(h))),
            "sm_clock_mhz": _try(lambda: float(pynvml.nvmlDeviceGetClockInfo(h, sm))),
            "mem_clock_mhz": _try(lambda: float(pynvml.nvmlDeviceGetClockInfo(h, mem))),
            "sm_clock_max_mhz": _try(lambda: float(pynvml.nvmlDeviceGetMaxClockInfo(h, sm))),
            "mem_clock_max_mhz": _try(lambda: float(pynvml.nvmlDeviceGetMaxClockInfo(h, mem))),
            "power_w": _try(lambda: pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0),
            "power_limit_w": _try(lambda: pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0),
            "temp_c": _try(lambda: float(pynvml.nvmlDeviceGetTemperature(h, getattr(pynvml, "NVML_TEMPERATURE_GPU", 0)))),
            "pstate": _try(lambda: int(pynvml.nvmlDeviceGetPerformanceState(h))),
            "clock_reasons": None if bits is None else [n for b, n in CLOCK_REASONS.items() if bits & b],
            "power_violation_ns": violation(getattr(pynvml, "NVML_PERF_POLICY_POWER", 0)),
            "thermal_violation_ns": violation(getattr(pynvml, "NVML_PERF_POLICY_THERMAL", 1)),
            "energy_mj": _try(lambda: int(pynvml.nvmlDeviceGetTotalEnergyConsumption(h))),
            "persistence_mode": _try(lambda: bool(pynvml.nvmlDeviceGetPersistenceMode(h))),
            "driver": _try(lambda: _text(pynvml.nvmlSystemGetDriverVersion())),
            "cuda_driver": None if cuda is None else f"{cuda // 1000}.{cuda % 1000 // 10}",
        }
    except Exception as e:  # noqa: BLE001
        return {"available": False, "reason": NVML_UNREADABLE.format(index=index, error=f"{type(e).__name__}: {e}")}
    finally:
        _try(pynvml.nvmlShutdown)


def _busy(state: dict) -> bool:
    return bool(state.get("available")) and "gpu_idle" not in (state.get("clock_reasons") or [])


def clock_flags(before: dict, after: dict, drop: float = CLOCK_DROP) -> list[str]:
    """Why a run's figures may be below what the GPU does, from a reading before and one after it
    (empty: nothing seen): an SM or memory clock that fell by more than ``drop`` between two busy
    readings, power or thermal violation time that grew during the run, reasons holding the clocks
    back at the end, and the energy's average power at the limit."""
    if not (before.get("available") and after.get("available")):
        return []
    flags: list[str] = []
    for key, what in (("sm_clock_mhz", "SM"), ("mem_clock_mhz", "memory")):
        b, a = before.get(key), after.get(key)
        if b and a is not None and _busy(before) and _busy(after) and a < b * (1 - drop):
            flags.append(f"{what} clock dropped from {b:.0f} to {a:.0f} MHz ({a / b - 1:+.0%})")
    for key, what in (("power_violation_ns", "power"), ("thermal_violation_ns", "thermal")):
        b, a = before.get(key), after.get(key)
        if b is not None and a is not None and a > b:
            flags.append(f"{what}-limited for {(a - b) / 1e6:.0f} ms during the run (NVML violation counter)")
    held = [r for r in (after.get("clock_reasons") or []) if r in HOLDING_BACK]
    if held:
        flags.append("clocks held back at the end: " + ", ".join(held))
    e0, e1, t0, t1 = before.get("energy_mj"), after.get("energy_mj"), before.get("t"), after.get("t")
    limit = after.get("power_limit_w")
    if None not in (e0, e1, t0, t1, limit) and t1 > t0 and limit:
        avg = (e1 - e0) / 1e3 / (t1 - t0)
        if avg >= 0.97 * limit:
            flags.append(f"average power {avg:.0f} W at the {limit:.0f} W limit")
    return flags


class MachineRecord:
    """``with MachineRecord(index) as rec: run()`` -> ``rec.to_dict()``: the machine's state before and
    after, and :func:`clock_flags`. ``enabled=False`` (a CPU run) records nothing; ``read`` is
    :func:`machine_state` (tests pass fake readings)."""

    def __init__(self, index: int = 0, enabled: bool = True, read: Callable[[int], dict] | None = None) -> None:
        self.index, self.enabled = index, enabled
        self._read = read or machine_state
        self.before: dict = {}
        self.after: dict = {}
        self.flags: list[str] = []

    def __enter__(self) -> MachineRecord:
        if self.enabled:
            self.before = self._read(self.index)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self.after = self._read(self.index)
            self.flags = clock_flags(self.before, self.after)

    def to_dict(self) -> dict:
        return {"before": self.before, "after": self.after, "flags": list(self.flags)}


def _cublas_version() -> str | None:
    """The cuBLAS this process loaded (``cublasLtGetVersion`` of the libcublasLt in its memory map)."""
    import ctypes

    try:
        with open("/proc/self/maps", encoding="utf-8") as f:
            paths = {line.split()[-1] for line in f if "libcublasLt.so" in line}
        for path in sorted(paths):
            v = int(ctypes.CDLL(path).cublasLtGetVersion())
            return f"{v // 10000}.{v // 100 % 100}.{v % 100}"
    except (OSError, AttributeError, ValueError):
        pass
    return None


def software_versions() -> dict[str, Any]:
    """torch, the CUDA it was built for, cuBLAS (as loaded, else the pip package), cuDNN, NCCL, Triton
    (package metadata: importing triton here could switch a CPU machine's interpreter off), the driver."""
    from importlib.metadata import PackageNotFoundError, version

    import torch

    def pkg(*names: str) -> str | None:
        for n in names:
            try:
                return version(n)
            except PackageNotFoundError:
                continue
        return None

    nccl = _try(lambda: ".".join(str(x) for x in torch.cuda.nccl.version())) if torch.cuda.is_available() else None
    state = machine_state() if torch.cuda.is_available() else {}
    return {"torch": torch.__version__, "cuda": torch.version.cuda,
            "cublas": _cublas_version() or pkg("nvidia-cublas-cu12", "nvidia-cublas-cu13", "nvidia-cublas"),
            "cudnn": _try(torch.backends.cudnn.version), "nccl": nccl, "triton": pkg("triton"),
            "driver": state.get("driver"), "cuda_driver": state.get("cuda_driver"),
            "persistence_mode": state.get("persistence_mode")}
