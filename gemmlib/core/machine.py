"""This machine's devices without torch: the CPU from ``/proc/cpuinfo`` and ``platform``, NVIDIA
GPUs through NVML (``pynvml`` from nvidia-ml-py) when it is installed, each matched to the
hardware catalogue by name. The home page shows ``light_summary()``; ``gemmlib.measure.devices``
asks torch for the same and measures ceilings.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass

from gemmlib.core.hardware import CATALOGUE, Hardware
from gemmlib.core.i18n import N_, Msg, Translate, english

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
        d["memory_bytes"] = int(self.memory_bytes)  # a count of bytes ("25276194816", not "25276194816.0")
        d["memory_gb"] = round(self.memory_bytes / GB, 1) if self.memory_bytes else None
        return d


# --------------------------------------------------------------------------- catalogue matching
# (pattern over the lower-cased device name, catalogue row or None, note). First match wins.
# A name maps to a row only when that row describes that very board: a variant with other clocks,
# memory or bandwidth (PCIe, NVL, 40 GB, a superchip) is "not in the catalogue" until its own row
# exists, never silently another board's figures. Names as the driver reports them
# (torch.cuda.get_device_name / NVML): "NVIDIA H100 80GB HBM3" (SXM), "NVIDIA H100 PCIe",
# "NVIDIA H100 NVL", "NVIDIA H200" (SXM), "NVIDIA H200 NVL", "NVIDIA GH200 480GB" (96 GB HBM3), "NVIDIA H800",
# "NVIDIA A100-SXM4-80GB", "NVIDIA A100-PCIE-40GB", "NVIDIA L40S", "NVIDIA GeForce RTX 4090".
_NOT_YET = N_("it has its own clocks and memory bandwidth, so no other row's figures are used")
# (pattern, catalogue row, note); for a board with no row of its own the note names the board.
_MATCH_RULES: tuple[tuple[str, str | None, str], ...] = (
    (r"gh200.*(144|hbm3e)", None, N_("GH200 with 144 GB HBM3e")),  # the row is the 96 GB HBM3 GH200 480GB
    (r"gh200", "GH200", ""),
    (r"gb200", "GB200", ""),
    (r"\bb300\b", "B300", ""),
    (r"\bb200\b", "B200", ""),
    (r"h200.*nvl", "H200 NVL", ""),
    (r"h200", "H200 SXM", ""),
    (r"h100.*pcie", "H100 PCIe", ""),
    (r"h100.*nvl", "H100 NVL", ""),
    (r"h800.*pcie", None, N_("H800 PCIe board")),
    (r"h100", "H100 SXM", ""),
    (r"h800", "H800 SXM", ""),
    (r"\bh20\b", "H20", ""),
    (r"a[18]00.*pcie", None, N_("A100/A800 PCIe board")),
    (r"a100.*40gb", "A100 SXM 40GB", ""),
    (r"a800.*40gb", None, N_("A800 40 GB board")),
    (r"a100|a800", "A100 SXM 80GB", ""),
    (r"l40s", "L40S", ""),
    (r"\bl4\b", "L4", ""),
    (r"\ba10g\b", "A10G", ""),
    (r"rtx\s*5090|\b5090\b", "RTX 5090", ""),
    (r"rtx\s*4090|\b4090\b", "RTX 4090", ""),
    (r"mi355x", "MI355X", ""),
    (r"mi325x", "MI325X", ""),
    (r"mi300x", "MI300X", ""),
)


def match_message(name: str, kind: str = "cuda") -> tuple[Hardware | None, Msg | None]:
    """:func:`match_catalogue`'s row and its note as a message (None: nothing to say)."""
    if kind == "cpu":
        return CATALOGUE["CPU (edit me)"], Msg(N_("CPUs vary too much for a datasheet row: the catalogue's CPU "
                                                  "row is a placeholder"))
    low = str(name).lower()
    for pattern, row, note in _MATCH_RULES:
        if re.search(pattern, low):
            if row is None or row not in CATALOGUE:
                if note:
                    return None, Msg(N_("{name!r} is not in the catalogue; {board}: {why}; measure its ceilings "
                                        "(Devices page, `python -m gemmlib devices --measure`) to get figures"),
                                     name=name, board=Msg(note), why=Msg(_NOT_YET))
                return None, Msg(N_("{name!r} is not in the catalogue; measure its ceilings (Devices page, "
                                    "`python -m gemmlib devices --measure`) to get figures"), name=name)
            return CATALOGUE[row], Msg(note) if note else None
    return None, Msg(N_("{name!r} is not in the catalogue; measure its ceilings to get figures"), name=name)


def match_catalogue(name: str, kind: str = "cuda", *, gettext: Translate = english) -> tuple[Hardware | None, str]:
    """The catalogue row for a device name, and a note on the match (or why there is none), in
    English unless a ``gettext`` is given (a page's).

    An unknown device is ``(None, "... not in the catalogue ...")``: never another board's row.
    """
    hw, note = match_message(name, kind)
    return hw, note.render(gettext) if note else ""


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
    import platform  # the fallback off Linux; 8 ms to import, so only here

    return platform.processor() or platform.machine() or "CPU"


def total_ram() -> float:
    import psutil  # MemTotal on Linux, hw.memsize on macOS; imported here, off the estimate's path

    return float(psutil.virtual_memory().total)


def cpu_info() -> DeviceInfo:
    name = cpu_model()
    hw, note = match_catalogue(name, "cpu")
    return DeviceInfo("cpu", 0, name, os.cpu_count() or 1, total_ram(), "",
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
    return [d.to_dict() for d in [cpu_info(), *_nvml_gpus()]]


# --------------------------------------------------------------------------- GPU presence without torch
def torch_build() -> dict[str, str | None] | None:
    """The installed PyTorch's build, read from its ``version.py`` without importing torch.

    ``{"version": "2.13.0+cpu", "cuda": None, "hip": None}`` (``cuda``/``hip``: the toolkit the
    wheel was built against, None for a CPU build); None when torch is not installed. Importing
    torch costs seconds; the pages ask this to decide whether to offer "cuda" at all.
    """
    import ast
    import importlib.util

    try:
        spec = importlib.util.find_spec("torch")  # a top-level name: found, not imported
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    build: dict[str, str | None] = {"version": None, "cuda": None, "hip": None}
    for folder in spec.submodule_search_locations:
        try:
            with open(os.path.join(folder, "version.py"), encoding="utf-8") as f:
                tree = ast.parse(f.read())
        except (OSError, SyntaxError, ValueError):
            continue
        for node in tree.body:
            target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else \
                node.target if isinstance(node, ast.AnnAssign) else None
            key = {"__version__": "version", "cuda": "cuda", "hip": "hip"}.get(getattr(target, "id", ""))
            if key and isinstance(node.value, ast.Constant) and isinstance(node.value.value, (str, type(None))):
                build[key] = node.value.value
        break
    return build


def nvml_query(ask):
    """``ask(pynvml)`` between NVML's init and shutdown, or None when NVML is not installed, no driver answers or the
    question fails (a half-working driver). No CUDA context is created."""
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - NVMLError when no driver is loaded
        return None
    try:
        return ask(pynvml)
    except Exception:  # noqa: BLE001 - a half-working driver answers nothing here
        return None
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:  # noqa: BLE001
            pass


def _nvml_count() -> int | None:
    """NVIDIA GPUs NVML counts (None when NVML is not installed or no driver answers)."""
    return nvml_query(lambda nv: int(nv.nvmlDeviceGetCount()))


def _listed(folder: str, keep=lambda path: True) -> int | None:
    """Entries of ``folder`` that ``keep`` accepts (None when the folder is not there)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return None
    return sum(1 for n in names if keep(os.path.join(folder, n)))


def _kfd_gpu(node: str) -> bool:
    """A KFD topology node that is a GPU (a CPU node's gpu_id is 0)."""
    try:
        with open(os.path.join(node, "gpu_id"), encoding="ascii") as f:
            return f.read().strip() not in ("", "0")
    except OSError:
        return False


def _visible(count: int, env: str) -> int:
    """``count`` GPUs as a ``*_VISIBLE_DEVICES`` variable restricts them (unset: all of them).

    As the CUDA runtime reads it: a comma-separated list of indices or ``GPU-``/``MIG-`` UUIDs,
    read up to the first entry that is neither; an empty value or ``-1`` hides every GPU.
    """
    value = os.environ.get(env)
    if value is None:
        return count
    seen = 0
    for entry in (e.strip() for e in value.split(",")):
        if entry.isdigit() and int(entry) < count or entry.upper().startswith(("GPU-", "MIG-")):
            seen += 1
        else:
            break
    return min(seen, count)


def gpu_presence() -> tuple[int, str]:
    """``(n, "")``: n GPUs that torch's ``cuda`` device can be asked for here; ``(0, why)`` without.

    Read without importing torch: the installed torch's build (CUDA, ROCm or CPU only), then
    the GPUs the driver lists — NVML or ``/proc/driver/nvidia/gpus`` for NVIDIA, the KFD
    topology in ``/sys/class/kfd`` for AMD (ROCm's torch calls them ``cuda`` too) — as
    ``CUDA_VISIBLE_DEVICES`` (``HIP_VISIBLE_DEVICES``) leaves them. It tells presence, not
    that a kernel will run: a driver too old for the wheel shows when the run starts (the
    worker asks torch then). ``why`` is an English constant the pages translate.
    """
    build = torch_build()
    if build is None:
        return 0, N_("PyTorch is not installed")
    if build.get("cuda"):
        count = _nvml_count()
        if count is None:
            count = _listed("/proc/driver/nvidia/gpus") or 0
        env = "CUDA_VISIBLE_DEVICES"
    elif build.get("hip"):
        count = _listed("/sys/class/kfd/kfd/topology/nodes", _kfd_gpu) or 0
        env = "HIP_VISIBLE_DEVICES" if "HIP_VISIBLE_DEVICES" in os.environ else "CUDA_VISIBLE_DEVICES"
    else:
        return 0, N_("no CUDA device (this PyTorch is a CPU-only build)")
    if count == 0:
        return 0, N_("no CUDA device (the driver lists no GPU)")
    visible = _visible(count, env)
    if visible == 0:
        return 0, N_("no CUDA device (CUDA_VISIBLE_DEVICES hides every GPU)")
    return visible, ""
