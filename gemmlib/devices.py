"""This machine's devices: what they are, what the datasheet says, what they measure.

* ``light_summary()`` answers at once and never imports torch: the CPU from
  ``/proc/cpuinfo`` and ``platform``, NVIDIA GPUs through NVML (``pynvml`` from the
  nvidia-ml-py package) when it is installed. The home page shows it.
* ``detect()`` asks torch: CPU threads, every CUDA GPU (name, SMs, memory, compute
  capability) and Apple's MPS, each matched to the hardware catalogue by name.
* ``measure_ceilings(device)`` runs a large GEMM per dtype and a device-to-device copy,
  and keeps the result as a ``Hardware`` (the catalogue row with measured peaks and
  bandwidth), process-wide and in a JSON file under the temp/cache directory, so that
  the roofline and the estimator can show it beside the datasheet. A measured ceiling
  is what this device reaches with this software today; the datasheet is what the
  silicon could do. Both are shown, neither replaces the other.
"""

from __future__ import annotations

import json
import os
import platform
import re
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gemmlib.errors import InputError
from gemmlib.hardware import CATALOGUE, Hardware

GB = 1e9


@dataclass(frozen=True)
class DeviceInfo:
    """One device as detected on this machine."""

    kind: str  # "cpu" | "cuda" | "mps"
    index: int
    name: str
    units: int  # CPU: logical threads; GPU: streaming multiprocessors (0 when unknown)
    memory_bytes: float  # 0 when unknown
    capability: str = ""  # CUDA compute capability "9.0"
    catalogue: str = ""  # matched catalogue row, "" when none
    match_note: str = ""  # how (or why not) it was matched
    source: str = ""  # "torch", "nvml", "/proc/cpuinfo"

    @property
    def torch_device(self) -> str:
        return self.kind if self.kind != "cuda" else f"cuda:{self.index}"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["memory_gb"] = round(self.memory_bytes / GB, 1) if self.memory_bytes else None
        return d


# --------------------------------------------------------------------------- catalogue matching
# (pattern over the lower-cased device name, catalogue row, note). First match wins.
_MATCH_RULES: tuple[tuple[str, str, str], ...] = (
    (r"gh200", "H200 SXM", "GH200 superchip: same Hopper GPU, figures of the H200 SXM row"),
    (r"h200", "H200 SXM", ""),
    (r"h100.*(pcie|nvl)", "H100 SXM", "PCIe/NVL board: lower clocks and bandwidth than the SXM row shown"),
    (r"h100|h800", "H100 SXM", ""),
    (r"a100.*(pcie|40gb)", "A100 SXM 80GB", "40 GB / PCIe board: same peaks, less memory bandwidth"),
    (r"a100|a800", "A100 SXM 80GB", ""),
    (r"l40s", "L40S", ""),
    (r"4090", "RTX 4090", ""),
)


def match_catalogue(name: str, kind: str = "cuda") -> tuple[Hardware | None, str]:
    """The catalogue row for a device name, and a note on the match (or why there is none)."""
    if kind == "cpu":
        hw = CATALOGUE["CPU (edit me)"]
        return hw, "CPUs vary too much for a datasheet row: the catalogue's CPU row is a placeholder"
    low = str(name).lower()
    for pattern, row, note in _MATCH_RULES:
        if re.search(pattern, low):
            return CATALOGUE[row], note
    return None, f"{name!r} is not in the catalogue; measure its ceilings to get figures"


# --------------------------------------------------------------------------- light detection
def cpu_model() -> str:
    """The CPU model from /proc/cpuinfo (Linux) or platform, without torch."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, val = line.partition(":")
                if key.strip().lower() in {"model name", "hardware", "cpu model"} and val.strip():
                    return val.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def _total_ram() -> float:
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return float(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 0.0


def _cpu_info() -> DeviceInfo:
    name = cpu_model()
    hw, note = match_catalogue(name, "cpu")
    return DeviceInfo("cpu", 0, name, os.cpu_count() or 1, _total_ram(), "",
                      hw.name if hw else "", note, "/proc/cpuinfo")


def _nvml_gpus() -> list[DeviceInfo]:
    """NVIDIA GPUs through NVML, if nvidia-ml-py is installed and a driver answers."""
    try:
        import pynvml
    except ImportError:
        return []
    try:
        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - NVMLError when no driver is loaded
        return []
    out = []
    try:
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            name = pynvml.nvmlDeviceGetName(h)
            if isinstance(name, bytes):
                name = name.decode()
            mem = float(pynvml.nvmlDeviceGetMemoryInfo(h).total)
            try:
                major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(h)
                cap = f"{major}.{minor}"
            except Exception:  # noqa: BLE001
                cap = ""
            hw, note = match_catalogue(name)
            out.append(DeviceInfo("cuda", i, name, 0, mem, cap, hw.name if hw else "", note, "nvml"))
    except Exception:  # noqa: BLE001 - a half-working driver must not break the home page
        pass
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:  # noqa: BLE001
            pass
    return out


def light_summary() -> list[dict]:
    """Devices without importing torch (CPU always; NVIDIA GPUs via NVML when available).

    One dict per device: kind, index, name, units, memory_bytes, memory_gb, capability,
    catalogue, match_note, source.
    """
    return [d.to_dict() for d in [_cpu_info(), *_nvml_gpus()]]


# --------------------------------------------------------------------------- torch detection
def detect() -> list[DeviceInfo]:
    """Every device torch can use here: the CPU, each CUDA GPU, MPS."""
    import torch

    cpu = _cpu_info()
    devices = [DeviceInfo("cpu", 0, cpu.name, torch.get_num_threads(), cpu.memory_bytes, "",
                          cpu.catalogue, f"{os.cpu_count()} logical CPUs, torch uses {torch.get_num_threads()} "
                          f"threads. " + cpu.match_note, "torch")]
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            hw, note = match_catalogue(p.name)
            devices.append(DeviceInfo("cuda", i, p.name, int(p.multi_processor_count), float(p.total_memory),
                                      f"{p.major}.{p.minor}", hw.name if hw else "", note, "torch"))
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        devices.append(DeviceInfo("mps", 0, "Apple GPU (MPS)", 0, 0.0, "", "",
                                  "Apple GPUs are not in the catalogue", "torch"))
    return devices


def device_info(device: str) -> DeviceInfo:
    """The detected entry for "cpu", "cuda" (current GPU) or "mps"; InputError if absent."""
    from gemmlib.harness import require_device
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
    raise InputError(f"device {device!r} was not detected")


def datasheet_for(device: str, name: str | None = None) -> Hardware | None:
    """The catalogue row for this device (by its detected name), None if not in the catalogue."""
    if name is None:
        name = device_info(device).name
    return match_catalogue(name, "cpu" if device == "cpu" else "cuda")[0]


# --------------------------------------------------------------------------- measured ceilings
@dataclass
class Ceilings:
    """Measured peaks of one device: FLOP/s per dtype and copy bandwidth in bytes/s."""

    device: str
    device_name: str
    peaks: dict[str, float]
    bandwidth: float | None
    measured_at: float = field(default_factory=time.time)
    gemm_size: int = 0
    copy_bytes: float = 0.0
    notes: dict[str, str] = field(default_factory=dict)
    results: list = field(default_factory=list)  # BenchResult rows behind the figures
    units: int = 0
    memory_bytes: float = 0.0

    @property
    def key(self) -> str:
        return f"{self.device}:{self.device_name}"

    def hardware(self) -> Hardware:
        """The catalogue row with these measured figures (dtypes not measured are dropped)."""
        base, _ = match_catalogue(self.device_name, "cpu" if self.device == "cpu" else "cuda")
        name = f"{self.device_name} (measured)"
        if base is None:
            return Hardware(name, "gpu" if self.device != "cpu" else "cpu",
                            tuple(self.peaks.items()), bandwidth=self.bandwidth or 1.0,
                            sms=self.units or 1, memory_bytes=self.memory_bytes or 1.0,
                            source="measured on this machine (gemmlib.devices.measure_ceilings)")
        drop = {d: None for d, _ in base.peaks if d not in self.peaks}
        hw = base.with_overrides(peaks={**drop, **self.peaks}, bandwidth=self.bandwidth,
                                 sms=self.units or None, memory_bytes=self.memory_bytes or None, name=name)
        from dataclasses import replace
        return replace(hw, source=f"measured here; datasheet: {base.source}", editable=False, aliases=())

    def to_dict(self) -> dict:
        return {"device": self.device, "device_name": self.device_name, "peaks": dict(self.peaks),
                "bandwidth": self.bandwidth, "measured_at": self.measured_at, "gemm_size": self.gemm_size,
                "copy_bytes": self.copy_bytes, "notes": dict(self.notes), "units": self.units,
                "memory_bytes": self.memory_bytes}

    @classmethod
    def from_dict(cls, d: dict) -> Ceilings:
        return cls(device=str(d["device"]), device_name=str(d["device_name"]),
                   peaks={str(k): float(v) for k, v in dict(d.get("peaks") or {}).items() if v},
                   bandwidth=float(d["bandwidth"]) if d.get("bandwidth") else None,
                   measured_at=float(d.get("measured_at") or 0), gemm_size=int(d.get("gemm_size") or 0),
                   copy_bytes=float(d.get("copy_bytes") or 0), notes=dict(d.get("notes") or {}),
                   units=int(d.get("units") or 0), memory_bytes=float(d.get("memory_bytes") or 0))

    def rows(self, datasheet: Hardware | None = None) -> list[dict]:
        """Measured vs datasheet, one row per figure, for tables."""
        rows = []
        for d, v in self.peaks.items():
            ds = datasheet.peak(d) if datasheet else None
            rows.append({"figure": f"{d} GEMM", "measured": v / 1e12, "datasheet": ds / 1e12 if ds else None,
                         "unit": "TFLOP/s" if d != "int8" else "TOP/s",
                         "share of datasheet": v / ds if ds else None, "note": self.notes.get(d, "")})
        if self.bandwidth:
            ds = datasheet.bandwidth if datasheet else None
            rows.append({"figure": "device copy", "measured": self.bandwidth / 1e12,
                         "datasheet": ds / 1e12 if ds else None, "unit": "TB/s",
                         "share of datasheet": self.bandwidth / ds if ds else None,
                         "note": self.notes.get("copy", "read + write bytes per second")})
        return rows


_ceilings: dict[str, Ceilings] = {}
_ceilings_lock = threading.Lock()


def ceilings_path() -> Path:
    """Where measured ceilings are saved: $GEMM_CACHE_DIR or <tempdir>/gemmlib, file ceilings.json."""
    base = os.environ.get("GEMM_CACHE_DIR") or os.path.join(tempfile.gettempdir(), "gemmlib")
    return Path(base) / "ceilings.json"


def _read_file() -> dict[str, dict]:
    p = ceilings_path()
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def save_ceilings(c: Ceilings) -> Path:
    """Keep ``c`` for this process and in the JSON file (merged with other devices' entries)."""
    with _ceilings_lock:
        _ceilings[c.key] = c
        data = _read_file()
        data[c.key] = c.to_dict()
        p = ceilings_path()
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            tmp = p.with_suffix(".tmp")
            tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
            tmp.replace(p)
        except OSError:
            pass  # a read-only temp dir: keep the process-wide copy only
    return p


def all_ceilings() -> dict[str, Ceilings]:
    """Every measured ceiling known: this process's, then the saved file's (no torch needed)."""
    out: dict[str, Ceilings] = {}
    for key, d in _read_file().items():
        try:
            out[key] = Ceilings.from_dict(d)
        except (KeyError, TypeError, ValueError):
            continue
    with _ceilings_lock:
        out.update(_ceilings)
    return out


def measured_hardware_all() -> list[Hardware]:
    """Measured ceilings as Hardware rows, for pickers beside the catalogue (no torch)."""
    return [c.hardware() for c in all_ceilings().values()]


def measured_ceilings(device: str, device_name: str | None = None) -> Ceilings | None:
    """The ceilings measured for this device (by name), or None."""
    if device_name is None:
        device_name = device_info(device).name
    return all_ceilings().get(f"{device}:{device_name}")


def measured_hardware(device: str, device_name: str | None = None) -> Hardware | None:
    c = measured_ceilings(device, device_name)
    return c.hardware() if c else None


def clear_ceilings(remove_file: bool = False) -> None:
    with _ceilings_lock:
        _ceilings.clear()
        if remove_file:
            try:
                ceilings_path().unlink()
            except OSError:
                pass


def ceiling_plan(device: str, quick: bool = False) -> tuple[int, int]:
    """(GEMM size, copy bytes) for a ceiling run: big enough to reach the peak, small enough to be quick."""
    if device == "cuda":
        return (4096, 256 * 1024**2) if quick else (8192, 1024**3)
    return (512, 32 * 1024**2) if quick else (1024, 128 * 1024**2)


def measure_copy(device: str, nbytes: int, min_run_time: float = 0.5) -> Any:
    """Device-to-device copy of ``nbytes``: a BenchResult whose ``bytes`` counts read + write."""
    from gemmlib import harness

    harness.check_memory(3 * nbytes, device)
    import torch
    n = max(1, int(nbytes) // 4)
    with harness.oom_guard(device):
        src = torch.randn(n, device=device)
        dst = torch.empty_like(src)
        t = harness.time_callable(dst.copy_, device=device, args_list=[(src,)], min_run_time=min_run_time)
        ok = torch.equal(dst, src)
    r = harness.BenchResult("ceiling", "copy", device, harness.device_name(device), "fp32",
                            {"elements": n}, flops=0.0, bytes=2.0 * n * 4, rel_error=0.0 if ok else 1.0,
                            reason="device-to-device copy: read + write bytes")
    r.set_timing(t)
    del src, dst
    return r


def measure_ceilings(device: str = "cuda", *, dtypes: tuple[str, ...] | None = None, quick: bool = False,
                     size: int | None = None, progress: Callable[[float, str], None] | None = None,
                     save: bool = True) -> Ceilings:
    """Run a large GEMM per dtype and a device copy; keep and return the measured peaks."""
    from gemmlib import bench_precision as bp
    from gemmlib import harness

    dev = harness.require_device(device)
    info = device_info(dev)
    gemm_n, copy_bytes = ceiling_plan(dev, quick)
    if size is not None:
        harness.check_dims(size=size)
        gemm_n = int(size)
    want = tuple(dtypes) if dtypes else bp.PRECISION_DTYPES
    cfg = bp.PrecisionConfig(device=dev, shapes=((gemm_n, gemm_n, gemm_n, "ceiling"),), dtypes=want,
                             with_quant=False, check_error=False,
                             min_run_time=0.3 if quick else 0.6)
    bp.validate(cfg)
    steps = len(want) + 1
    done = [0]

    def step(msg: str) -> None:
        if progress:
            progress(min(1.0, done[0] / steps), msg)

    results = []
    for d in want:
        step(f"{d} GEMM {gemm_n}³")
        results.extend(bp.run_precision(cfg.with_dtypes((d,)), record_results=False))
        done[0] += 1
    step(f"device copy {copy_bytes / 1024**2:.0f} MiB")
    copy = measure_copy(dev, copy_bytes, min_run_time=0.3 if quick else 0.6)
    results.append(copy)
    done[0] += 1
    step("done")
    peaks, notes = {}, {}
    for r in results:
        if r.bench == "precision" and r.supported and r.tflops and r.extra.get("variant", "gemm") == "gemm":
            peaks[r.dtype] = r.tflops * 1e12
        elif r.bench == "precision" and not r.supported:
            notes[r.dtype] = r.reason
    c = Ceilings(dev, info.name, peaks, copy.gbps * 1e9 if copy.gbps else None, gemm_size=gemm_n,
                 copy_bytes=copy_bytes, notes=notes, results=[r for r in results], units=info.units,
                 memory_bytes=info.memory_bytes)
    for r in results:
        r.bench = "ceiling"
    harness.record(results)
    if save:
        save_ceilings(c)
    return c
