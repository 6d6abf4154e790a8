"""Benchmark results as data: one ``BenchResult`` row per measured (or refused) run, its
``Timing``, JSON/CSV export, and the store of results measured in this process (for the
Roofline page). No torch.
"""

from __future__ import annotations

import csv
import io
import json
import math
import threading
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any


# --------------------------------------------------------------------------- records
@dataclass
class Timing:
    """Seconds per call: the median and the 20th/80th percentiles over ``reps`` calls."""

    median_s: float
    p20_s: float
    p80_s: float
    reps: int
    method: str = ""  # "torch.utils.benchmark", "triton.do_bench", "cuda-events", "cuda-graph"

    @classmethod
    def from_times(cls, times: Iterable[float], reps: int | None = None, method: str = "") -> Timing:
        xs = sorted(float(t) for t in times)
        if not xs:
            raise ValueError("no times to summarise")
        return cls(_quantile(xs, 0.5), _quantile(xs, 0.2), _quantile(xs, 0.8),
                   reps if reps is not None else len(xs), method)


def _quantile(sorted_xs: list[float], q: float) -> float:
    """Linear-interpolated quantile of an already sorted list (numpy's default rule)."""
    if len(sorted_xs) == 1:
        return sorted_xs[0]
    pos = q * (len(sorted_xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)


@dataclass
class BenchResult:
    """One measured (or refused) row of any benchmark."""

    bench: str  # "precision" | "tiling" | "batching" | "ceiling" | ...
    name: str  # what ran: "bf16", "triton", "stacked", ...
    device: str  # "cpu" | "cuda"
    device_name: str  # "NVIDIA H200" / CPU model
    dtype: str  # gemmlib.core.dtypes name
    shape: dict  # {"m":..,"n":..,"k":..} plus e.g. "batch", "tile"
    flops: float  # FLOPs of ONE timed call
    bytes: float  # minimum bytes moved by one call
    supported: bool = True
    reason: str = ""  # why unsupported / notes
    median_s: float | None = None
    p20_s: float | None = None
    p80_s: float | None = None
    rel_error: float | None = None  # max|x - ref| / max|ref| against a float64 reference
    extra: dict = field(default_factory=dict)

    # ---- derived figures
    @property
    def tflops(self) -> float | None:
        if not self.median_s or self.median_s <= 0 or not self.flops:
            return None
        return self.flops / self.median_s / 1e12

    @property
    def gbps(self) -> float | None:
        if not self.median_s or self.median_s <= 0 or not self.bytes:
            return None
        return self.bytes / self.median_s / 1e9

    @property
    def intensity(self) -> float | None:
        if not self.bytes:
            return None
        return self.flops / self.bytes

    def set_timing(self, t: Timing) -> BenchResult:
        self.median_s, self.p20_s, self.p80_s = t.median_s, t.p20_s, t.p80_s
        self.extra.setdefault("reps", t.reps)
        if t.method:
            self.extra.setdefault("timer", t.method)
        return self

    def to_dict(self) -> dict:
        d = asdict(self)
        d["tflops"] = self.tflops
        d["gbps"] = self.gbps
        d["intensity"] = self.intensity
        return jsonable(d)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BenchResult:
        names = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in d.items() if k in names})


# A row whose p80 time is more than twice its p20 time was timed while something else ran: its
# median is not this kernel's speed. Said beside the results ("the machine was busy, rerun").
NOISE_RATIO = 2.0


def spread_ratio(r: BenchResult) -> float | None:
    """p80 / p20 of a timed row (None when it has no spread)."""
    if not r.supported or not r.p20_s or not r.p80_s or r.p20_s <= 0:
        return None
    return r.p80_s / r.p20_s


def noisy(results: Iterable[BenchResult]) -> list[BenchResult]:
    """The rows whose timings spread more than ``NOISE_RATIO`` (p80 / p20)."""
    return [r for r in results if (spread_ratio(r) or 0.0) > NOISE_RATIO]


def jsonable(x: Any) -> Any:
    """Make a value JSON-safe: NaN/inf -> None, tuples -> lists, unknown objects -> str."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if x is None or isinstance(x, (bool, int, str)):
        return x
    try:  # numpy scalars and 0-d tensors
        return jsonable(x.item())
    except Exception:  # noqa: BLE001
        return str(x)


def unsupported(bench: str, name: str, device: str, dtype: str, shape: dict, reason: str,
                device_name: str = "", flops: float = 0.0, nbytes: float = 0.0) -> BenchResult:
    """A row that says why something could not run here (never a crash, never a silent skip)."""
    return BenchResult(bench=bench, name=name, device=device, device_name=device_name or device,
                       dtype=dtype, shape=dict(shape), flops=float(flops), bytes=float(nbytes),
                       supported=False, reason=reason)


def to_json(results: Iterable[BenchResult | Mapping], **meta: Any) -> str:
    """JSON text: ``{"results": [...]}`` plus any ``meta`` keys (device, when, ...)."""
    rows = [r.to_dict() if isinstance(r, BenchResult) else jsonable(dict(r)) for r in results]
    return json.dumps({**jsonable(meta), "results": rows}, indent=2)


def flat_rows(results: Iterable[BenchResult | Mapping]) -> list[dict]:
    """One flat dict per result (shape and extra spread into ``shape.m``/``extra.x`` columns)."""
    out = []
    for r in results:
        d = r.to_dict() if isinstance(r, BenchResult) else jsonable(dict(r))
        shape = d.pop("shape", {}) or {}
        extra = d.pop("extra", {}) or {}
        row = dict(d)
        for k, v in shape.items():
            row[f"shape.{k}"] = v
        for k, v in extra.items():
            row[f"extra.{k}"] = v if isinstance(v, (int, float, str, bool)) or v is None else json.dumps(v)
        out.append(row)
    return out


def to_csv(results: Iterable[BenchResult | Mapping]) -> str:
    rows = flat_rows(results)
    cols: list[str] = []
    for row in rows:
        for k in row:
            if k not in cols:
                cols.append(k)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore")
    w.writeheader()
    for row in rows:
        w.writerow(row)
    return buf.getvalue()


# --------------------------------------------------------------------------- process-wide store
_store: list[BenchResult] = []


_store_lock = threading.Lock()


MAX_RECORDED = 5000


def record(results: Iterable[BenchResult]) -> None:
    """Keep results measured in this process (the Roofline page plots them)."""
    with _store_lock:
        _store.extend(r for r in results if isinstance(r, BenchResult))
        if len(_store) > MAX_RECORDED:
            del _store[: len(_store) - MAX_RECORDED]


def recorded() -> list[BenchResult]:
    with _store_lock:
        return list(_store)


def clear_recorded() -> None:
    with _store_lock:
        _store.clear()
