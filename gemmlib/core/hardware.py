"""The hardware catalogue: datasheet peaks per dtype, memory bandwidth, SMs.

Every figure is a *dense* peak (no 2:4 sparsity) in FLOP/s (or OP/s for int8)
and comes with the datasheet it was read from. Measured ceilings (see
``gemmlib.measure.devices``) are kept apart and shown beside these, never in place of
them. The CPU row is a placeholder the user is expected to edit: CPUs vary too
much for one default to mean anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gemmlib.core.dtypes import COMPUTE_DTYPES, get_dtype
from gemmlib.core.errors import InputError

T = 1e12  # tera


@dataclass(frozen=True)
class Hardware:
    """One accelerator (or CPU) as the datasheet describes it."""

    name: str
    kind: str  # "gpu" or "cpu"
    peaks: tuple[tuple[str, float], ...]  # (dtype, dense FLOP/s); a missing dtype is unsupported
    bandwidth: float  # main-memory bandwidth, bytes/s
    sms: int  # streaming multiprocessors (GPU) or cores (CPU): units that take work tiles
    memory_bytes: float
    source: str  # datasheet URL
    notes: str = ""
    editable: bool = False
    aliases: tuple[str, ...] = field(default=())

    def peak(self, dtype: str) -> float | None:
        """Dense peak for ``dtype`` in FLOP/s, or None when the device has no such path."""
        key = get_dtype(dtype).name
        return dict(self.peaks).get(key)

    def supports(self, dtype: str) -> bool:
        return self.peak(dtype) is not None

    def ridge_point(self, dtype: str) -> float | None:
        """Arithmetic intensity (FLOP/byte) where compute and memory limits meet."""
        p = self.peak(dtype)
        return None if p is None else p / self.bandwidth

    def with_overrides(self, *, peaks: dict[str, float] | None = None,
                       bandwidth: float | None = None, sms: int | None = None,
                       memory_bytes: float | None = None, name: str | None = None) -> Hardware:
        """A copy with some figures replaced (for the editable CPU row, or measured ceilings)."""
        new_peaks = dict(self.peaks)
        for k, v in (peaks or {}).items():
            key = get_dtype(k).name
            if v is None:
                new_peaks.pop(key, None)
                continue
            if not v > 0:
                raise InputError(f"peak for {key} must be positive, got {v}")
            new_peaks[key] = float(v)
        for label, value in (("bandwidth", bandwidth), ("SM count", sms), ("memory", memory_bytes)):
            if value is not None and not value > 0:
                raise InputError(f"{label} must be positive, got {value}")
        return replace(
            self,
            name=name or self.name,
            peaks=tuple((d, new_peaks[d]) for d in COMPUTE_DTYPES if d in new_peaks),
            bandwidth=float(bandwidth) if bandwidth is not None else self.bandwidth,
            sms=int(sms) if sms is not None else self.sms,
            memory_bytes=float(memory_bytes) if memory_bytes is not None else self.memory_bytes,
        )


def _peaks(**kw: float) -> tuple[tuple[str, float], ...]:
    return tuple((d, kw[d] * T) for d in COMPUTE_DTYPES if d in kw)


GiB = 1024**3
GB = 1e9

CATALOGUE: dict[str, Hardware] = {
    "H100 SXM": Hardware(
        "H100 SXM", "gpu", _peaks(fp32=67, tf32=494.7, fp16=989.4, bf16=989.4, fp8=1978.9, int8=1978.9),
        bandwidth=3.35e12, sms=132, memory_bytes=80 * GB,
        source="https://www.nvidia.com/en-us/data-center/h100/",
        notes="Datasheet lists sparse figures; dense = half of them.", aliases=("h100",),
    ),
    "H200 SXM": Hardware(
        "H200 SXM", "gpu", _peaks(fp32=67, tf32=494.7, fp16=989.4, bf16=989.4, fp8=1978.9, int8=1978.9),
        bandwidth=4.8e12, sms=132, memory_bytes=141 * GB,
        source="https://www.nvidia.com/en-us/data-center/h200/",
        notes="Same Hopper GH100 compute as H100 SXM, HBM3e memory.", aliases=("h200",),
    ),
    "A100 SXM 80GB": Hardware(
        "A100 SXM 80GB", "gpu", _peaks(fp32=19.5, tf32=156, fp16=312, bf16=312, int8=624),
        bandwidth=2.039e12, sms=108, memory_bytes=80 * GB,
        source="https://www.nvidia.com/en-us/data-center/a100/",
        notes="No FP8 tensor cores (compute capability 8.0).", aliases=("a100",),
    ),
    "L40S": Hardware(
        "L40S", "gpu", _peaks(fp32=91.6, tf32=183, fp16=362, bf16=362, fp8=733, int8=733),
        bandwidth=0.864e12, sms=142, memory_bytes=48 * GB,
        source="https://www.nvidia.com/en-us/data-center/l40s/", aliases=("l40s",),
    ),
    "RTX 4090": Hardware(
        "RTX 4090", "gpu", _peaks(fp32=82.6, tf32=82.6, fp16=165.2, bf16=165.2, fp8=330.3, int8=660.6),
        bandwidth=1.008e12, sms=128, memory_bytes=24 * GiB,
        source="https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf",
        notes="GeForce: fp16/bf16/fp8 figures are with fp32 accumulation (half the fp16-accumulate rate).",
        aliases=("4090", "rtx4090"),
    ),
    "CPU (edit me)": Hardware(
        "CPU (edit me)", "cpu", _peaks(fp32=0.2, fp16=0.05, bf16=0.05, int8=0.2),
        bandwidth=20e9, sms=2, memory_bytes=24 * GiB,
        source="(user-supplied: cores x GHz x FLOP/cycle; measure with `python -m gemmlib devices --measure`)",
        notes="A placeholder for a 2-core server: edit peaks and bandwidth for your CPU.",
        editable=True, aliases=("cpu",),
    ),
}

DEFAULT_GPU = "H100 SXM"


def gpu_names() -> list[str]:
    return list(CATALOGUE)


def get_hardware(name: str) -> Hardware:
    """Find a catalogue row by name or alias (case- and space-insensitive)."""
    want = str(name).strip().lower().replace(" ", "").replace("-", "").replace("_", "")
    for hw in CATALOGUE.values():
        keys = [hw.name, *hw.aliases]
        if any(k.lower().replace(" ", "").replace("-", "").replace("_", "") == want for k in keys):
            return hw
    raise InputError(f"unknown GPU {name!r}; choose one of: {', '.join(CATALOGUE)}")


def catalogue_rows() -> list[dict]:
    """The catalogue as table rows (TFLOP/s, TB/s) for pages, the CLI and the report."""
    rows = []
    for hw in CATALOGUE.values():
        row: dict = {"name": hw.name, "kind": hw.kind}
        for d in COMPUTE_DTYPES:
            p = hw.peak(d)
            row[f"{d} TFLOP/s"] = None if p is None else round(p / T, 1)
        row["bandwidth TB/s"] = hw.bandwidth / 1e12
        row["SMs"] = hw.sms
        row["memory GB"] = round(hw.memory_bytes / GB, 1)
        row["source"] = hw.source
        rows.append(row)
    return rows
