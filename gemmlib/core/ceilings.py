"""Measured ceilings, saved: the peaks (FLOP/s per dtype) and copy bandwidth measured on a device
(by ``gemmlib.measure.devices.measure_ceilings``), kept process-wide and in a JSON file under
the cache directory, read back as ``Hardware`` rows ("NAME (measured)") beside the datasheet.
Reading them needs no torch. A measured ceiling is what this device reaches with this software
today; the datasheet is what the silicon could do. Both are shown, neither replaces the other.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from gemmlib.core.hardware import Hardware
from gemmlib.core.machine import match_catalogue


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
    # the p80–p20 range of each figure (a dtype, or "copy"), in the figure's unit per second: (low, high)
    spread: dict[str, tuple[float, float]] = field(default_factory=dict)

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
                            source="measured on this machine (gemmlib.measure.devices.measure_ceilings)")
        drop = {d: None for d, _ in base.peaks if d not in self.peaks}
        hw = base.with_overrides(peaks={**drop, **self.peaks}, bandwidth=self.bandwidth,
                                 sms=self.units or None, memory_bytes=self.memory_bytes or None, name=name)
        from dataclasses import replace
        return replace(hw, source=f"measured here; datasheet: {base.source}", editable=False, aliases=())

    def to_dict(self) -> dict:
        return {"device": self.device, "device_name": self.device_name, "peaks": dict(self.peaks),
                "bandwidth": self.bandwidth, "measured_at": self.measured_at, "gemm_size": self.gemm_size,
                "copy_bytes": self.copy_bytes, "notes": dict(self.notes), "units": self.units,
                "memory_bytes": self.memory_bytes, "spread": {k: list(v) for k, v in self.spread.items()}}

    @classmethod
    def from_dict(cls, d: dict) -> Ceilings:
        return cls(device=str(d["device"]), device_name=str(d["device_name"]),
                   peaks={str(k): float(v) for k, v in dict(d.get("peaks") or {}).items() if v},
                   bandwidth=float(d["bandwidth"]) if d.get("bandwidth") else None,
                   measured_at=float(d.get("measured_at") or 0), gemm_size=int(d.get("gemm_size") or 0),
                   copy_bytes=float(d.get("copy_bytes") or 0), notes=dict(d.get("notes") or {}),
                   units=int(d.get("units") or 0), memory_bytes=float(d.get("memory_bytes") or 0),
                   spread={str(k): (float(v[0]), float(v[1])) for k, v in dict(d.get("spread") or {}).items()
                           if isinstance(v, (list, tuple)) and len(v) == 2})

    def rows(self, datasheet: Hardware | None = None) -> list[dict]:
        """Measured vs datasheet, one row per figure, for tables and the Devices chart; ``low`` and
        ``high`` are the throughput at the p80 and p20 times (None when not kept)."""
        rows = []
        for d, v in self.peaks.items():
            ds = datasheet.peak(d) if datasheet else None
            lo, hi = self.spread.get(d, (None, None))
            rows.append({"figure": f"{d} GEMM", "measured": v / 1e12, "datasheet": ds / 1e12 if ds else None,
                         "unit": "TFLOP/s" if d != "int8" else "TOP/s",
                         "share of datasheet": v / ds if ds else None,
                         "low": lo / 1e12 if lo else None, "high": hi / 1e12 if hi else None,
                         "note": self.notes.get(d, "")})
        if self.bandwidth:
            ds = datasheet.bandwidth if datasheet else None
            lo, hi = self.spread.get("copy", (None, None))
            rows.append({"figure": "device copy", "measured": self.bandwidth / 1e12,
                         "datasheet": ds / 1e12 if ds else None, "unit": "TB/s",
                         "share of datasheet": self.bandwidth / ds if ds else None,
                         "low": lo / 1e12 if lo else None, "high": hi / 1e12 if hi else None,
                         "note": self.notes.get("copy", "read + write bytes per second")})
        return rows

    @property
    def when(self) -> str:
        """When it was measured, as a person reads it (UTC)."""
        return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(self.measured_at)) if self.measured_at else "—"


_ceilings: dict[str, Ceilings] = {}


_ceilings_lock = threading.Lock()


def ceilings_path() -> Path:
    """Where measured ceilings are saved: $GEMM_CACHE_DIR or <tempdir>/gemmlib, file ceilings.json."""
    base = os.environ.get("GEMM_CACHE_DIR") or os.path.join(tempfile.gettempdir(), "gemmlib")
    return Path(base) / "ceilings.json"


def read_json(p: Path) -> dict:
    """A saved JSON object, or {} when the file is missing, unreadable or not an object."""
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def write_json(p: Path, data: dict) -> None:
    """Write ``data`` to ``p`` atomically (a temporary file, then a rename); a read-only cache dir
    is not an error (the caller keeps its process-wide copy)."""
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
        tmp.replace(p)
    except OSError:
        pass


def _read_file() -> dict[str, dict]:
    return read_json(ceilings_path())


def save_ceilings(c: Ceilings) -> Path:
    """Keep ``c`` for this process and in the JSON file (merged with other devices' entries)."""
    with _ceilings_lock:
        _ceilings[c.key] = c
        data = _read_file()
        data[c.key] = c.to_dict()
        p = ceilings_path()
        write_json(p, data)
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


def clear_ceilings(remove_file: bool = False) -> None:
    with _ceilings_lock:
        _ceilings.clear()
        if remove_file:
            try:
                ceilings_path().unlink()
            except OSError:
                pass


def find(device: str, device_name: str) -> Ceilings | None:
    """The ceilings measured for this device ("cuda", "NVIDIA H200"), or None."""
    return all_ceilings().get(f"{device}:{device_name}")


def find_hardware(device: str, device_name: str) -> Hardware | None:
    """:func:`find` as a Hardware row ("NAME (measured)"), or None."""
    c = find(device, device_name)
    return c.hardware() if c else None


def cpu_row(points=()) -> tuple[Hardware, str]:
    """The catalogue's CPU row with this machine's figures, and a sentence saying where they come from.

    The ceilings measured on this machine's CPU when there are any (else the placeholder figures),
    each raised to the best measured point so that no point sits above its roof: ``points`` are
    (dtype, intensity in FLOP/byte, FLOP/s) of results measured on the CPU. A point at intensity I
    reaching F FLOP/s needs a peak of at least F and a bandwidth of at least F / I.
    """
    from gemmlib.core.hardware import CATALOGUE

    base = next(h for h in CATALOGUE.values() if h.editable)
    cpu = sorted((c for c in all_ceilings().values() if c.device == "cpu"), key=lambda c: c.measured_at)
    c = cpu[-1] if cpu else None
    peaks = dict(c.peaks) if c else dict(base.peaks)
    bw = (c.bandwidth if c and c.bandwidth else base.bandwidth)
    raised = set()
    for dtype, intensity, flops in points:
        if not flops or flops <= 0:
            continue
        if flops > peaks.get(dtype, 0):
            peaks[dtype] = float(flops)
            raised.add(dtype)
        if intensity and intensity > 0 and flops / intensity > bw:
            bw = flops / intensity
            raised.add("bandwidth")
    hw = base.with_overrides(peaks=peaks, bandwidth=bw)
    if c:
        note = f"the CPU row holds the ceilings measured on {c.device_name} ({c.when})"
    else:
        note = "the CPU row holds placeholder figures: measure the ceilings on the Devices page"
    if raised:
        note += ("; " + ", ".join(sorted(raised)) + " raised to the best measured point, which beat the "
                 + ("ceiling measurement" if c else "placeholder"))
    return hw, note
