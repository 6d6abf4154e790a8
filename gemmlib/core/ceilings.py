"""Measured ceilings, saved: the peaks (FLOP/s per dtype) and copy bandwidth measured on a device
(by ``gemmlib.measure.devices.measure_ceilings``), kept process-wide and in a JSON file in the
server's private cache folder (``gemmlib.core.files.private_dir``: mode 0700, this user's), read
back as ``Hardware`` rows ("NAME (measured)") beside the datasheet. Reading them needs no torch.
A measured ceiling is what this device reaches with this software today; the datasheet is what
the silicon could do. Both are shown, neither replaces the other.

The file is written atomically (a temporary file created exclusively, then renamed: no planted
link is followed) and read only as a regular file of this user's; every entry is validated
(known device kinds, plain-text names of bounded length, finite positive figures), and each
figure is bounded by what the device can physically do (``plausible_bound``): a GPU's catalogue
row × ``DATASHEET_MARGIN``, a CPU's threads × clock × SIMD lanes × FMA units from /proc/cpuinfo.
An entry that fails is dropped and logged, not shown; a measurement above its bound is not kept.
Each entry records who measured it, on which host, and when. A machine policy with
``GEMM_CEILINGS_READ_ONLY = true`` (``gemmlib.core.policy``) makes the shared ceilings read-only:
the file is read, nothing is written or kept for other visitors.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
import platform
import socket
import threading
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from gemmlib.core import policy
from gemmlib.core.dtypes import DTYPES
from gemmlib.core.errors import InputError
from gemmlib.core.files import private_dir, read_regular, write_atomic
from gemmlib.core.hardware import CATALOGUE, Hardware
from gemmlib.core.i18n import N_, Msg, Text, Translate, english
from gemmlib.core.machine import match_catalogue
from gemmlib.core.results import BenchResult

log = logging.getLogger("gemmlib.ceilings")

MAX_FILE_BYTES = 1_000_000
MAX_ENTRIES = 64
MAX_FLOPS = 1e17  # 100 PFLOP/s: far above any single device's dense peak
MAX_BANDWIDTH = 1e14  # 100 TB/s
DEVICE_KINDS = ("cpu", "cuda", "mps")


def _text(v: object, what: str, limit: int = 200) -> str:
    """A short single-line printable string, else ValueError."""
    if not isinstance(v, str):
        raise ValueError(f"{what} is not text")
    if len(v) > limit or any(unicodedata.category(ch)[0] == "C" for ch in v):
        raise ValueError(f"{what} is not a short single line of text")
    return v


def _figure(v: object, what: str, hi: float) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"{what} is not a number")
    x = float(v)
    if not math.isfinite(x) or not 0 < x <= hi:
        raise ValueError(f"{what} = {x!r} is outside (0, {hi:g}]")
    return x

# --------------------------------------------------------------------------- physical bounds
DATASHEET_MARGIN = 1.25  # a measured figure may beat its catalogue row by this much (boost clocks), never more
UNKNOWN_GPU_MARGIN = 2.0  # a board without a row: at most twice the fastest catalogue row's figure
CPU_MAX_CLOCK_HZ = 6.0e9  # when the kernel does not say: above any shipping CPU's boost clock
CPU_MARGIN = 1.25
CPU_BYTES_PER_CYCLE = 192  # per thread: two 64-byte loads and one 64-byte store (L1), the copy's best case
FASTER = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4")  # a missing dtype: the next one's rate


def cpu_flags() -> tuple[frozenset[str], str]:
    """(this CPU's feature flags from /proc/cpuinfo, the machine's architecture)."""
    return _cpu_flags()


@functools.lru_cache(maxsize=1)
def _cpu_flags() -> tuple[frozenset[str], str]:
    flags: frozenset[str] = frozenset()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, val = line.partition(":")
                if key.strip().lower() in {"flags", "features"}:
                    flags = frozenset(val.split())
                    break
    except OSError:
        pass
    return flags, platform.machine().lower()


def _cpu_clock_hz() -> float:
    """The CPU's highest clock as the kernel reports it (cpufreq), else CPU_MAX_CLOCK_HZ."""
    try:
        with open("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", encoding="ascii") as f:
            khz = float(f.read().strip())
        if math.isfinite(khz) and khz > 0:
            return khz * 1e3
    except (OSError, ValueError):
        pass
    return CPU_MAX_CLOCK_HZ


def cpu_flops_per_cycle(flags: frozenset[str], machine: str) -> dict[str, float]:
    """The most FLOPs (int8: operations) one CPU thread can do per cycle, per dtype: SIMD lanes × 2
    (a fused multiply-add) × 2 FMA units; AMX tiles where the flags name them (Intel: 1024 bf16/fp16
    FLOPs, 2048 int8 operations per cycle and core). Upper bounds, not expectations."""
    x86 = machine in {"x86_64", "amd64", "i386", "i686"} or "sse2" in flags
    if x86:
        lanes = 16 if "avx512f" in flags else 8 if "avx" in flags else 4
        fp32 = lanes * 2 * 2.0
    else:  # Arm and others: NEON/SVE widths and Apple's matrix units vary; a generous bound
        fp32 = 256.0
    half = 1024.0 if flags & {"amx_bf16", "amx_fp16"} else 2 * fp32
    int8 = 2048.0 if "amx_int8" in flags else 4 * fp32
    return {"fp64": fp32 / 2 if x86 else fp32, "fp32": fp32, "tf32": fp32, "fp16": half, "bf16": half,
            "fp8": half, "int8": int8, "fp4": int8}


def _row_peak(hw: Hardware, dtype: str) -> float | None:
    if hw.peak(dtype):
        return hw.peak(dtype)
    above = [hw.peak(d) for d in FASTER[FASTER.index(dtype) + 1:]] if dtype in FASTER else []
    above = [v for v in above if v]
    return min(above) if above else max((v for _, v in hw.peaks), default=None)


def plausible_bound(device: str, device_name: str, figure: str) -> tuple[float, str]:
    """The highest value a measured ``figure`` (a dtype's FLOP/s, or "copy": bytes/s) can have on
    this device, and where the bound comes from (for the log)."""
    if device == "cpu":
        threads = os.cpu_count() or 1
        clock = _cpu_clock_hz()
        if figure == "copy":
            return (threads * clock * CPU_BYTES_PER_CYCLE * CPU_MARGIN,
                    f"{threads} threads × {clock / 1e9:.3g} GHz × {CPU_BYTES_PER_CYCLE} B/cycle × {CPU_MARGIN:g}")
        per = cpu_flops_per_cycle(*cpu_flags()).get(figure, max(cpu_flops_per_cycle(*cpu_flags()).values()))
        return (threads * clock * per * CPU_MARGIN,
                f"{threads} threads × {clock / 1e9:.3g} GHz × {per:g} per cycle × {CPU_MARGIN:g}")
    row = match_catalogue(device_name, "cuda")[0] if device == "cuda" else None
    if row is not None:
        v = row.bandwidth if figure == "copy" else _row_peak(row, figure)
        if v:
            return v * DATASHEET_MARGIN, f"{DATASHEET_MARGIN:g} × the {row.name} datasheet"
    gpus = [h for h in CATALOGUE.values() if h.kind == "gpu"]
    best = max((h.bandwidth if figure == "copy" else (_row_peak(h, figure) or 0.0)) for h in gpus)
    return best * UNKNOWN_GPU_MARGIN, f"{UNKNOWN_GPU_MARGIN:g} × the fastest catalogue GPU"


def _who() -> str:
    """Who measures, as a ceiling records it: "alice (uid 1000) on lab-3"."""
    uid = os.getuid() if hasattr(os, "getuid") else -1
    try:
        import pwd

        user = pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError, OSError):
        user = os.environ.get("USER") or "?"
    try:
        host = socket.gethostname()
    except OSError:
        host = platform.node() or "?"
    return f"{user} (uid {uid}) on {host}"[:120]


def emulated(dtype: str, device: str) -> bool:
    """True where ``dtype`` has no hardware of its own on ``device`` and torch runs it through a reference kernel:
    fp8 off CUDA (a CPU's ``torch._scaled_mm``). Its speed grows with the size: a measurement, never a roof
    (the Precision page, the Devices page, ``devices`` and the report read this rule too)."""
    return dtype == "fp8" and device != "cuda"


EMULATED_NOTE = N_("no fp8 hardware here: a reference kernel's speed at this size (it grows with the size), not a "
                   "ceiling")
COPY_FIGURE = N_("device copy")  # the copy's row in ``Ceilings.rows`` (the GEMMs' read "fp32 GEMM")
COPY_NOTE = N_("read + write bytes per second")
# A measured row's name: a Text whose English is "NAME (measured)" (what files, JSON and the command line hold), shown
# in the reader's language by a page (gemmlib.core.interconnect.name_text reads one back from its English)
MEASURED_ROW = N_("{name} (measured)")


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
    results: list[BenchResult] = field(default_factory=list)  # the rows behind the figures
    units: int = 0
    memory_bytes: float = 0.0
    # the p80–p20 range of each figure (a dtype, or "copy"), in the figure's unit per second: (low, high)
    spread: dict[str, tuple[float, float]] = field(default_factory=dict)
    measured_by: str = field(default_factory=_who)  # "alice (uid 1000) on lab-3"; "" for entries before it

    def check_plausible(self) -> None:
        """ValueError when a figure is above what this device can physically do (``plausible_bound``)."""
        for figure, v in [*self.peaks.items(), *([("copy", self.bandwidth)] if self.bandwidth else [])]:
            bound, why = plausible_bound(self.device, self.device_name, figure)
            if v > bound:
                what = "copy bandwidth" if figure == "copy" else f"{figure} peak"
                raise ValueError(f"{self.key}: the {what} of {v:.4g}/s is above this device's bound of {bound:.4g}/s "
                                 f"({why})")

    @property
    def key(self) -> str:
        return f"{self.device}:{self.device_name}"

    @property
    def roof_peaks(self) -> dict[str, float]:
        """The measured peaks that are roofs: a format the device runs in hardware (``emulated`` ones left out)."""
        return {d: v for d, v in self.peaks.items() if not emulated(d, self.device)}

    @property
    def emulated(self) -> dict[str, float]:
        """The figures measured through a reference kernel (fp8 on a CPU), FLOP/s at ``gemm_size``³: no roofs."""
        return {d: v for d, v in self.peaks.items() if emulated(d, self.device)}

    def hardware(self) -> Hardware:
        """The catalogue row with these measured figures (dtypes not measured, or only emulated, are dropped)."""
        base, _ = match_catalogue(self.device_name, "cpu" if self.device == "cpu" else "cuda")
        name = Text(MEASURED_ROW, name=self.device_name)
        peaks = self.roof_peaks
        if base is None:
            return Hardware(name, "gpu" if self.device != "cpu" else "cpu",
                            tuple(peaks.items()), bandwidth=self.bandwidth or 1.0,
                            sms=self.units or 1, memory_bytes=self.memory_bytes or 1.0,
                            source=f"measured on this machine{self.by} (gemmlib.measure.devices.measure_ceilings)")
        drop = {d: None for d, _ in base.peaks if d not in peaks}
        hw = base.with_overrides(peaks={**drop, **peaks}, bandwidth=self.bandwidth,
                                 sms=self.units or None, memory_bytes=self.memory_bytes or None, name=name)
        from dataclasses import replace
        return replace(hw, source=f"measured here{self.by}; datasheet: {base.source}", editable=False, aliases=())

    @property
    def by(self) -> str:
        """" by alice (uid 1000) on lab-3, 2025-01-02 10:00 UTC" (who measured, and when)."""
        return f" by {self.measured_by or 'someone unrecorded'}, {self.when}"

    def to_dict(self) -> dict:
        return {"device": self.device, "device_name": self.device_name, "peaks": dict(self.peaks),
                "bandwidth": self.bandwidth, "measured_at": self.measured_at, "gemm_size": self.gemm_size,
                "copy_bytes": self.copy_bytes, "notes": dict(self.notes), "units": self.units,
                "memory_bytes": self.memory_bytes, "spread": {k: list(v) for k, v in self.spread.items()},
                "measured_by": self.measured_by,
                # derived (from_dict does not read it): the peaks above that are no roof, and why
                "emulated": {d: english(EMULATED_NOTE) for d in self.emulated}}

    @classmethod
    def from_dict(cls, d: dict) -> Ceilings:
        """Validated: ValueError for anything that is not what ``measure_ceilings`` writes."""
        if not isinstance(d, dict):
            raise ValueError("an entry is not an object")
        device = _text(d.get("device"), "device", 8)
        if device not in DEVICE_KINDS:
            raise ValueError(f"unknown device kind {device!r}")
        peaks_in = d.get("peaks") or {}
        if not isinstance(peaks_in, dict) or len(peaks_in) > len(DTYPES):
            raise ValueError("peaks is not a small object")
        peaks = {}
        for k, v in peaks_in.items():
            if k not in DTYPES:
                raise ValueError(f"unknown dtype {k!r}")
            if v:
                peaks[k] = _figure(v, f"peak {k}", MAX_FLOPS)
        notes_in = d.get("notes") or {}
        if not isinstance(notes_in, dict) or len(notes_in) > 16:
            raise ValueError("notes is not a small object")
        notes = {_text(k, "a note's key", 16): _text(v, "a note", 500) for k, v in notes_in.items()}
        bw = d.get("bandwidth")
        spread_in = d.get("spread") or {}
        if not isinstance(spread_in, dict) or len(spread_in) > len(DTYPES) + 1:
            raise ValueError("spread is not a small object")
        spread = {}
        for k, v in spread_in.items():
            if isinstance(v, (list, tuple)) and len(v) == 2:
                spread[_text(k, "a spread's key", 16)] = (_figure(v[0], f"spread {k}", MAX_FLOPS),
                                                          _figure(v[1], f"spread {k}", MAX_FLOPS))
        return cls(device=device, device_name=_text(d.get("device_name"), "device_name"),
                   peaks=peaks, bandwidth=_figure(bw, "bandwidth", MAX_BANDWIDTH) if bw else None,
                   measured_at=_figure(d.get("measured_at") or 1, "measured_at", 1e11),
                   gemm_size=int(_figure(d.get("gemm_size") or 1, "gemm_size", 1e6)),
                   copy_bytes=_figure(d.get("copy_bytes") or 1, "copy_bytes", 1e13),
                   notes=notes, units=int(_figure(d.get("units") or 1, "units", 1e6)),
                   memory_bytes=_figure(d.get("memory_bytes") or 1, "memory_bytes", 1e15), spread=spread,
                   measured_by=_text(d.get("measured_by") or "", "measured_by", 120))

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
            rows.append({"figure": COPY_FIGURE, "measured": self.bandwidth / 1e12,
                         "datasheet": ds / 1e12 if ds else None, "unit": "TB/s",
                         "share of datasheet": self.bandwidth / ds if ds else None,
                         "low": lo / 1e12 if lo else None, "high": hi / 1e12 if hi else None,
                         "note": self.notes.get("copy", COPY_NOTE)})
        return rows

    @property
    def when(self) -> str:
        """When it was measured, as a person reads it (UTC)."""
        return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(self.measured_at)) if self.measured_at else "—"


_ceilings: dict[str, Ceilings] = {}


_ceilings_lock = threading.Lock()


def ceilings_path() -> Path:
    """Where measured ceilings are saved: ceilings.json in the private cache folder
    ($GEMM_CACHE_DIR, else ~/.cache/gemmlib). InputError if that folder is not private."""
    return private_dir() / "ceilings.json"


def read_json(p: Path, what: str = "the cache file") -> dict:
    """A saved JSON object of the private cache folder, or {} when the file is missing or cannot be
    trusted (a link, another user's, too large, not JSON, not an object): that is logged, never shown."""
    try:
        if not p.exists() and not p.is_symlink():
            return {}
        data = json.loads(read_regular(p, MAX_FILE_BYTES, what=f"{what} {p}", owner_only=True))
    except (InputError, ValueError, RecursionError) as e:
        log.warning("%s not read: %s", what, e)
        return {}
    if not isinstance(data, dict):
        log.warning("%s not read: the file does not hold an object", what)
        return {}
    return dict(list(data.items())[:MAX_ENTRIES])


def write_json(p: Path, data: dict, what: str = "the cache file") -> bool:
    """Write ``data`` to ``p`` atomically (a temporary file created exclusively, then a rename; never
    onto a link), mode 0600. A cache folder that cannot be used is not an error: the reason is logged,
    the caller keeps its process-wide copy, and False is returned."""
    try:
        write_atomic(p, json.dumps(data, indent=2), mode=0o600, flag=what)
    except InputError as e:
        log.warning("%s kept in memory only: %s", what, e)
        return False
    return True


def _read_file() -> dict[str, dict]:
    try:
        p = ceilings_path()
    except InputError as e:
        log.warning("measured ceilings not read: %s", e)
        return {}
    return read_json(p, "the ceilings file")


def save_ceilings(c: Ceilings) -> Path | None:
    """Keep ``c`` for this process and in the JSON file (merged with other devices' entries).

    The file is replaced atomically; when the cache folder cannot be used the process-wide copy
    is kept and the reason logged. Nothing is kept (logged, None) when a figure is above the
    device's physical bound, or when the machine policy makes the shared ceilings read-only.
    Returns the file's path, or None when it was not written.
    """
    try:
        read_only = policy.machine_policy().ceilings_read_only
    except InputError as e:  # a policy that cannot be read: keep nothing rather than ignore it
        log.warning("measured ceilings of %s not kept: %s", c.key, e)
        return None
    if read_only:
        log.warning("measured ceilings of %s not kept: the machine policy keeps the shared ceilings read-only "
                    "(GEMM_CEILINGS_READ_ONLY)", c.key)
        return None
    try:
        c.check_plausible()
    except ValueError as e:
        log.warning("measured ceilings not kept: %s", e)
        return None
    with _ceilings_lock:
        _ceilings[c.key] = c
        data = {k: v for k, v in _read_file().items() if _valid(v)}
        data[c.key] = c.to_dict()
        try:
            p = ceilings_path()
        except InputError as e:
            log.warning("measured ceilings kept in memory only: %s", e)
            return None
        if not write_json(p, data, "the ceilings file"):
            return None
    return p


def _valid(d: object) -> bool:
    try:
        Ceilings.from_dict(d).check_plausible()  # type: ignore[arg-type]
        return True
    except (KeyError, TypeError, ValueError):
        return False


def all_ceilings() -> dict[str, Ceilings]:
    """Every measured ceiling known: the saved file's valid entries, then this process's (no torch)."""
    out: dict[str, Ceilings] = {}
    for d in _read_file().values():
        try:
            c = Ceilings.from_dict(d)
            c.check_plausible()
        except (KeyError, TypeError, ValueError) as e:
            log.warning("a measured ceiling entry was dropped: %s", e)
            continue
        out[c.key] = c
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
            except (OSError, InputError):
                pass


def find(device: str, device_name: str) -> Ceilings | None:
    """The ceilings measured for this device ("cuda", "NVIDIA H200"), or None."""
    return all_ceilings().get(f"{device}:{device_name}")


def find_hardware(device: str, device_name: str) -> Hardware | None:
    """:func:`find` as a Hardware row ("NAME (measured)"), or None."""
    c = find(device, device_name)
    return c.hardware() if c else None


def cpu_row(points=(), *, gettext: Translate = english) -> tuple[Hardware, str]:
    """The catalogue's CPU row with this machine's figures, and a sentence saying where they come from
    (in English unless a ``gettext`` is given, a page's).

    The ceilings measured on this machine's CPU when there are any (else the placeholder figures),
    each raised to the best measured point so that no point sits above its roof: ``points`` are
    (dtype, intensity in FLOP/byte, FLOP/s) of results measured on the CPU. A point at intensity I
    reaching F FLOP/s needs a peak of at least F and a bandwidth of at least F / I.

    A format the CPU has no hardware for (fp8: torch emulates it, ``emulated``) gets no peak, neither from the
    ceilings nor from a point: a roof is a rate the hardware offers, and an emulated kernel's speed grows with
    the size. The sentence says so, with the figure the ceilings measured for it and at which size.
    """
    from gemmlib.core.hardware import CATALOGUE

    base = next(h for h in CATALOGUE.values() if h.editable)
    cpu = sorted((c for c in all_ceilings().values() if c.device == "cpu"), key=lambda c: c.measured_at)
    c = cpu[-1] if cpu else None
    peaks = {d: v for d, v in (c.peaks if c else dict(base.peaks)).items() if not emulated(d, "cpu")}
    bw = (c.bandwidth if c and c.bandwidth else base.bandwidth)
    raised = set()
    fake = set(c.emulated) if c else set()
    for dtype, intensity, flops in points:
        if not flops or flops <= 0:
            continue
        if emulated(dtype, "cpu"):  # a measurement, not a rate the hardware offers: no roof of its own
            fake.add(dtype)
            continue
        if flops > peaks.get(dtype, 0):
            peaks[dtype] = float(flops)
            raised.add(dtype)
        if intensity and intensity > 0 and flops / intensity > bw:
            bw = flops / intensity
            raised.add("bandwidth")
    hw = base.with_overrides(peaks=peaks, bandwidth=bw)
    if c:
        note = Msg(N_("the CPU row holds the ceilings measured on {name} ({when})"), name=c.device_name,
                   when=c.when)
    else:
        note = Msg(N_("the CPU row holds placeholder figures: measure the ceilings on the Devices page"))
    if raised:
        what = ", ".join(gettext(N_("bandwidth")) if r == "bandwidth" else r for r in sorted(raised))
        note = Msg(N_("{note}; {what} raised to the best measured point, which beat the ceiling measurement")
                   if c else N_("{note}; {what} raised to the best measured point, which beat the placeholder"),
                   note=note, what=what)
    for d in sorted(fake):
        if c and d in c.emulated:
            note = Msg(N_("{note}; {dtype} has no roof: this CPU has no {dtype} hardware and torch emulates it (the "
                          "ceiling run measured {tflops:.3g} TFLOP/s at {n}³, a speed that grows with the size), so "
                          "its points are measurements without a roof of their own"),
                       note=note, dtype=d, tflops=c.emulated[d] / 1e12, n=c.gemm_size)
        else:
            note = Msg(N_("{note}; {dtype} has no roof: this CPU has no {dtype} hardware and torch emulates it, so "
                          "its points are measurements without a roof of their own"), note=note, dtype=d)
    return hw, note.render(gettext)
