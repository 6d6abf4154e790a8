"""This machine's devices without torch: the CPU from ``/proc/cpuinfo`` and ``platform``, NVIDIA
GPUs through NVML (``pynvml`` from nvidia-ml-py) when it is installed, each matched to the
hardware catalogue by name. The home page shows ``light_summary()``; ``gemmlib.measure.devices``
asks torch for the same and measures ceilings.
"""

from __future__ import annotations

import os
import platform
import re
from dataclasses import asdict, dataclass

from gemmlib.core.hardware import CATALOGUE, Hardware

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
