"""Calibration, saved: how fast this device really runs each op of a model, measured op by op.

``python -m gemmlib calibrate`` (``gemmlib.measure.calibrate``) times, on the present device,

* every distinct weight GEMM of a chosen model (its N, K) at M from 1 to the prefill size, and the
  two attention products at the prefill and decode shapes — :class:`GemmPoint`, per dtype;
* every non-GEMM op of a layer (norms, rotary, K/V repeat, softmax, activation, residual adds,
  embedding) at the prefill and decode shapes — :class:`OtherPoint`, with the bytes the
  accounting says it moves, hence its achieved bandwidth.

The points are plain data, kept beside the measured ceilings (``calibration.json`` in the same
cache folder) and validated when read: a malformed entry is dropped with a reason, never half
used. :meth:`Calibration.gemm_seconds` and :meth:`Calibration.other_bandwidth` interpolate them
for any shape (piecewise linear in log–log), and :meth:`Calibration.hardware` is the roof they
imply ("NAME (calibrated)": the best FLOP/s per dtype and the best bytes/s measured).
``gemmlib.llm.calibrated`` turns this into the per-op efficiency the accounting's timing takes.
Reading needs no torch.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from bisect import bisect_left
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gemmlib.core.ceilings import ceilings_path
from gemmlib.core.dtypes import get_dtype
from gemmlib.core.errors import InputError
from gemmlib.core.files import read_regular, write_atomic
from gemmlib.core.hardware import Hardware

log = logging.getLogger("gemmlib.calibration")

VERSION = 1
GEMM_FAMILIES = ("linear", "attn_scores", "attn_values")


def _pos(name: str, v: object) -> float:
    f = float(v)  # type: ignore[arg-type]
    if not math.isfinite(f) or f <= 0:
        raise ValueError(f"{name} must be a positive number, got {v!r}")
    return f


def _whole(name: str, v: object) -> int:
    if isinstance(v, bool) or float(v) != int(v) or int(v) < 1:  # type: ignore[arg-type]
        raise ValueError(f"{name} must be a whole number >= 1, got {v!r}")
    return int(v)  # type: ignore[arg-type]


@dataclass(frozen=True)
class GemmPoint:
    """One measured product: ``groups`` independent M×K·K×N GEMMs in one call (1 for a linear
    layer, batch × heads for an attention product), median ``seconds`` per call."""

    family: str  # "linear", "attn_scores" or "attn_values"
    names: str  # the model's ops it stands for, e.g. "k_proj, v_proj"
    dtype: str
    m: int
    n: int
    k: int
    groups: int
    seconds: float
    flops: float  # per call
    bytes: float  # per call, as the accounting counts the op

    @property
    def per_product_s(self) -> float:
        return self.seconds / self.groups

    @classmethod
    def from_dict(cls, d: dict) -> GemmPoint:
        fam = str(d["family"])
        if fam not in GEMM_FAMILIES:
            raise ValueError(f"unknown GEMM family {fam!r}")
        return cls(fam, str(d.get("names", "")), get_dtype(str(d["dtype"])).name, _whole("m", d["m"]),
                   _whole("n", d["n"]), _whole("k", d["k"]), _whole("groups", d["groups"]),
                   _pos("seconds", d["seconds"]), _pos("flops", d["flops"]), _pos("bytes", d["bytes"]))


@dataclass(frozen=True)
class OtherPoint:
    """One measured call of a non-GEMM op: ``bytes`` as the accounting counts that call."""

    name: str  # the accounting's op name: norms, rotary, kv_repeat, attn_softmax, activation, residual, embedding
    dtype: str
    phase: str  # "prefill" or "decode"
    rows: int
    width: int
    seconds: float  # median per call
    bytes: float  # per call

    @property
    def bandwidth(self) -> float:
        return self.bytes / self.seconds

    @classmethod
    def from_dict(cls, d: dict) -> OtherPoint:
        phase = str(d["phase"])
        if phase not in ("prefill", "decode"):
            raise ValueError(f"phase must be prefill or decode, got {phase!r}")
        return cls(str(d["name"]), get_dtype(str(d["dtype"])).name, phase, _whole("rows", d["rows"]),
                   _whole("width", d["width"]), _pos("seconds", d["seconds"]), _pos("bytes", d["bytes"]))


def _interp(xs: list[float], ys: list[float], x: float) -> float:
    """Piecewise-linear interpolation of ``ys`` over sorted ``xs``, clamped to the end values."""
    if len(xs) == 1 or x <= xs[0]:
        return ys[0]
    if x >= xs[-1]:
        return ys[-1]
    i = bisect_left(xs, x)
    x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)


def _loglog(points: list[tuple[float, float]], x: float) -> float:
    """Interpolate a time t(x) in log–log space through (x, t) points (duplicates of x averaged).

    The points first get their monotone envelope from above: more work never takes less time, so
    a point slower than a larger one (a busy machine's stall, a thread that waited for a core) is
    lowered to that larger point's time before interpolating.
    """
    by: dict[float, list[float]] = {}
    for px, py in points:
        by.setdefault(math.log(px), []).append(math.log(py))
    xs = sorted(by)
    ys = [sum(by[v]) / len(by[v]) for v in xs]
    for i in range(len(ys) - 2, -1, -1):
        ys[i] = min(ys[i], ys[i + 1])
    return math.exp(_interp(xs, ys, math.log(x)))


@dataclass
class Calibration:
    """Everything one ``calibrate`` run measured on one device."""

    device: str
    device_name: str
    model: str  # the model whose shapes were measured (a preset, scaled)
    dtypes: tuple[str, ...]
    gemm: tuple[GemmPoint, ...]
    other: tuple[OtherPoint, ...]
    measured_at: float = field(default_factory=time.time)
    memory_bytes: float = 0.0
    units: int = 0
    notes: tuple[str, ...] = ()
    version: int = VERSION
    threads: int = 0  # CPU threads torch used (0 on a GPU)

    @property
    def key(self) -> str:
        return f"{self.device}:{self.device_name}"

    @property
    def name(self) -> str:
        """The hardware row's name: "NAME (calibrated)"."""
        return f"{self.device_name} (calibrated)"

    # ----- the roof the points imply
    def peaks(self) -> dict[str, float]:
        """Best FLOP/s measured per dtype (over every GEMM point)."""
        out: dict[str, float] = {}
        for p in self.gemm:
            out[p.dtype] = max(out.get(p.dtype, 0.0), p.flops / p.seconds)
        return out

    def bandwidth(self) -> float:
        """Best bytes/s measured (over every point, GEMM or not)."""
        return max([p.bytes / p.seconds for p in self.gemm] + [p.bandwidth for p in self.other])

    def hardware(self) -> Hardware:
        """The roof as a Hardware row: every op's calibrated efficiency is relative to it (≤ 1)."""
        return Hardware(self.name, "cpu" if self.device == "cpu" else "gpu", tuple(sorted(self.peaks().items())),
                        bandwidth=self.bandwidth(), sms=self.units or 1, memory_bytes=self.memory_bytes or 1.0,
                        source=f"calibrated on this machine ({self.model}; gemmlib.measure.calibrate)")

    # ----- interpolation
    def gemm_seconds(self, family: str, dtype: str, m: int, n: int, k: int) -> tuple[float | None, str]:
        """Seconds of ONE M×K·K×N product of ``family`` in ``dtype``, interpolated; and a note on how.

        linear: the measured (N, K) pair nearest in log scale (exact for the calibrated model), then
        log–log interpolation over M, the time scaled by N·K / (N'·K') when the pair differs.
        Attention: decode (M = 1) over the key count, prefill over M·keys; scaled by the head size.
        (None, why) when there is no point for the family and dtype.
        """
        dt = get_dtype(dtype).name
        pts = [p for p in self.gemm if p.family == family and p.dtype == dt]
        if not pts:
            return None, f"no {family} {dt} points in the calibration"
        if family == "linear":
            def dist(p: GemmPoint) -> float:
                return abs(math.log(p.n / n)) + abs(math.log(p.k / k))
            best = min(pts, key=dist)
            fam = [p for p in pts if (p.n, p.k) == (best.n, best.k)]
            t = _loglog([(p.m, p.per_product_s) for p in fam], m)
            top = max(p.m for p in fam)
            if m > top:  # past the sweep: time grows with M from the largest point on
                t *= m / top
            if (best.n, best.k) != (n, k):
                return t * (n * k) / (best.n * best.k), f"scaled from the measured {best.k}→{best.n} GEMM"
            return t, ""
        keys_of = (lambda p: p.n) if family == "attn_scores" else (lambda p: p.k)
        hd_of = (lambda p: p.k) if family == "attn_scores" else (lambda p: p.n)
        keys = n if family == "attn_scores" else k
        hd = k if family == "attn_scores" else n
        decode = [p for p in pts if p.m == 1]
        prefill = [p for p in pts if p.m > 1]
        use = decode if (m == 1 and decode) or not prefill else prefill
        if use is decode:
            t = _loglog([(keys_of(p), p.per_product_s) for p in use], keys) * m
        else:
            t = _loglog([(p.m * keys_of(p), p.per_product_s) for p in use], m * keys)
        ref_hd = hd_of(use[0])
        return t * hd / ref_hd, ("" if hd == ref_hd else f"scaled from head size {ref_hd}")

    def other_bandwidth(self, name: str, dtype: str, bytes_per_call: float) -> tuple[float | None, str]:
        """Bytes/s of one call of non-GEMM op ``name`` moving ``bytes_per_call``, interpolated (log–log)."""
        dt = get_dtype(dtype).name
        pts = [p for p in self.other if p.name == name and p.dtype == dt]
        if not pts:
            return None, f"no {name} {dt} points in the calibration"
        x = max(bytes_per_call, 1.0)
        return x / _loglog([(p.bytes, p.seconds) for p in pts], x), ""

    # ----- files
    def to_dict(self) -> dict:
        return {"version": self.version, "device": self.device, "device_name": self.device_name,
                "model": self.model, "dtypes": list(self.dtypes), "measured_at": self.measured_at,
                "memory_bytes": self.memory_bytes, "units": self.units, "notes": list(self.notes),
                "threads": self.threads,
                "gemm": [asdict(p) for p in self.gemm], "other": [asdict(p) for p in self.other]}

    @classmethod
    def from_dict(cls, d: dict) -> Calibration:
        """Validated: a ValueError (with the reason) for anything malformed."""
        if not isinstance(d, dict):
            raise ValueError("a calibration entry must be an object")
        if int(d.get("version", 0)) != VERSION:
            raise ValueError(f"calibration format {d.get('version')!r}, this gemmlib reads {VERSION}")
        try:
            gemm = tuple(GemmPoint.from_dict(p) for p in d["gemm"])
            other = tuple(OtherPoint.from_dict(p) for p in d["other"])
            dtypes = tuple(get_dtype(str(x)).name for x in d["dtypes"])
            c = cls(str(d["device"]), str(d["device_name"]), str(d.get("model", "")), dtypes, gemm, other,
                    float(d.get("measured_at") or 0), float(d.get("memory_bytes") or 0), int(d.get("units") or 0),
                    tuple(str(n) for n in d.get("notes") or ()), threads=int(d.get("threads") or 0))
        except (KeyError, TypeError) as e:
            raise ValueError(f"missing or malformed field: {e}") from None
        except InputError as e:  # an unknown dtype name
            raise ValueError(str(e)) from None
        if not gemm:
            raise ValueError("no GEMM points")
        missing = [dt for dt in dtypes if not any(p.dtype == dt for p in gemm)]
        if missing:
            raise ValueError(f"dtypes {', '.join(missing)} have no GEMM points")
        return c


def calibration_path() -> Path:
    """Beside the measured ceilings, in the private cache folder: calibration.json
    ($GEMM_CACHE_DIR, else ~/.cache/gemmlib). InputError if that folder is not private."""
    return ceilings_path().parent / "calibration.json"


_lock = threading.Lock()


MAX_FILE_BYTES = 20_000_000


def _read_raw() -> dict:
    """The saved entries: read only as a regular file of this user's in the private cache folder
    ({} when there is none or it cannot be trusted; the reason is logged)."""
    try:
        p = calibration_path()
        if not p.exists() and not p.is_symlink():
            return {}
        data = json.loads(read_regular(p, MAX_FILE_BYTES, what=f"the calibration file {p}", owner_only=True))
    except (InputError, ValueError, RecursionError) as e:
        log.warning("calibrations not read: %s", e)
        return {}
    return data if isinstance(data, dict) else {}


def load_calibrations() -> tuple[dict[str, Calibration], list[str]]:
    """Every saved calibration that validates, and one sentence per entry that does not."""
    good: dict[str, Calibration] = {}
    problems: list[str] = []
    for key, d in _read_raw().items():
        try:
            good[key] = Calibration.from_dict(d)
        except (ValueError, TypeError) as e:
            problems.append(f"calibration.json: entry {str(key)[:80]!r} ignored: {e}")
    return good, problems


def save_calibration(c: Calibration) -> Path | None:
    """Save ``c`` (replacing the points of its dtypes, keeping the device's other dtypes) and return the path;
    None, with a line in the log, when the machine policy keeps the shared measurements read-only
    (``gemmlib.core.policy.shared_read_only``)."""
    from gemmlib.core import policy

    if policy.shared_read_only():
        log.warning("calibration of %s not kept: the machine policy keeps the shared measurements read-only "
                    "(GEMM_CEILINGS_READ_ONLY)", c.key)
        return None
    with _lock:
        data = _read_raw()
        old = data.get(c.key)
        merged = c
        if old is not None:
            try:
                prev = Calibration.from_dict(old)
            except (ValueError, TypeError):
                prev = None
            if prev is not None and prev.model == c.model:
                keep = [dt for dt in prev.dtypes if dt not in c.dtypes]
                merged = Calibration(c.device, c.device_name, c.model, tuple(keep) + c.dtypes,
                                     tuple(p for p in prev.gemm if p.dtype in keep) + c.gemm,
                                     tuple(p for p in prev.other if p.dtype in keep) + c.other,
                                     c.measured_at, c.memory_bytes, c.units, c.notes, threads=c.threads)
        data[c.key] = merged.to_dict()
        p = calibration_path()
        write_atomic(p, json.dumps(data, indent=1), mode=0o600, flag="the calibration file")
    return p


def find_calibration(device: str, device_name: str) -> Calibration | None:
    """The saved calibration of this device ("cuda", "NVIDIA H200"), or None."""
    return load_calibrations()[0].get(f"{device}:{device_name}")


def calibrated_names() -> list[str]:
    """The hardware rows the saved calibrations offer ("NAME (calibrated)")."""
    return [c.name for c in load_calibrations()[0].values()]


def find_by_name(name: str) -> Calibration | None:
    """The calibration whose row is called ``name`` ("NVIDIA H200 (calibrated)"), case-insensitive."""
    want = str(name).strip().lower()
    return next((c for c in load_calibrations()[0].values() if c.name.lower() == want), None)
