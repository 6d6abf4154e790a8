"""The measuring harness every live benchmark goes through.

What it promises (see design.md, "Measuring honestly"):

* **Timing**: ``time_callable`` warms up, synchronizes the device around what is
  timed, repeats and returns the median with p20/p80. On a CPU it uses
  ``torch.utils.benchmark.Timer`` (with all the threads torch would use, not the
  Timer's default of one); on CUDA ``triton.testing.do_bench`` (which flushes the
  L2 cache before every call), or CUDA events when Triton is missing, or CUDA-graph
  replay for microsecond kernels. Input buffers are rotated (``args_list``) so a
  small problem does not time a warm cache.
* **Results**: ``BenchResult`` is one row: what ran, where, the shape, the times,
  TFLOP/s, GB/s, the error against a float64 reference, or why it could not run.
* **Safety for a shared server**: ``single_flight`` lets one benchmark run at a time
  per process (others see that they are queued); ``limits`` reads size caps and a
  time limit from the environment (or a mapping such as Streamlit secrets);
  ``check_dims``/``check_memory`` refuse before anything is allocated; ``oom_guard``
  turns a CUDA out-of-memory into advice and frees the cache.
* **A store**: ``record``/``recorded`` keep every result measured in this process,
  for the Roofline page.

torch is imported inside the functions that need it, never at import time.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

from gemmlib.errors import InputError

GiB = 1024**3
MiB = 1024**2


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
    dtype: str  # gemmlib.dtypes name
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
        return _jsonable(d)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BenchResult:
        names = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in d.items() if k in names})


def _jsonable(x: Any) -> Any:
    """Make a value JSON-safe: NaN/inf -> None, tuples -> lists, unknown objects -> str."""
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if x is None or isinstance(x, (bool, int, str)):
        return x
    try:  # numpy scalars and 0-d tensors
        return _jsonable(x.item())
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
    rows = [r.to_dict() if isinstance(r, BenchResult) else _jsonable(dict(r)) for r in results]
    return json.dumps({**_jsonable(meta), "results": rows}, indent=2)


def flat_rows(results: Iterable[BenchResult | Mapping]) -> list[dict]:
    """One flat dict per result (shape and extra spread into ``shape.m``/``extra.x`` columns)."""
    out = []
    for r in results:
        d = r.to_dict() if isinstance(r, BenchResult) else _jsonable(dict(r))
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


# --------------------------------------------------------------------------- errors
def rel_error(result: Any, reference_fp64: Any) -> float:
    """max|result - ref| / max|ref|, computed in float64 (torch tensors or numpy arrays)."""
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a requirement
        torch = None
    if torch is not None and (isinstance(result, torch.Tensor) or isinstance(reference_fp64, torch.Tensor)):
        ref = torch.as_tensor(reference_fp64).detach()
        # Compare where the reference lives (a GPU keeps an 8192² comparison off the PCIe bus);
        # MPS has no float64, so it compares on the CPU.
        dev = ref.device if ref.device.type != "mps" else torch.device("cpu")
        ref = ref.to(dev, torch.float64)
        x = torch.as_tensor(result).detach().to(dev, torch.float64)
        if x.shape != ref.shape:
            raise ValueError(f"shapes differ: {tuple(x.shape)} vs {tuple(ref.shape)}")
        scale = ref.abs().max().item() if ref.numel() else 0.0
        diff = (x - ref).abs().max().item() if ref.numel() else 0.0
    else:
        import numpy as np
        x = np.asarray(result, dtype=np.float64)
        ref = np.asarray(reference_fp64, dtype=np.float64)
        if x.shape != ref.shape:
            raise ValueError(f"shapes differ: {x.shape} vs {ref.shape}")
        scale = float(np.abs(ref).max()) if ref.size else 0.0
        diff = float(np.abs(x - ref).max()) if ref.size else 0.0
    if not math.isfinite(diff):
        return math.inf
    if scale == 0.0:
        return 0.0 if diff == 0.0 else math.inf
    return diff / scale


# --------------------------------------------------------------------------- devices
def torch_device_available(device: str) -> tuple[bool, str]:
    """(True, "") when ``device`` ("cpu", "cuda", "mps") can run torch here, else (False, why)."""
    dev = str(device).strip().lower()
    if dev not in {"cpu", "cuda", "mps"}:
        return False, f"unknown device {device!r}; use cpu or cuda"
    try:
        import torch
    except ImportError:
        return False, "PyTorch is not installed"
    if dev == "cpu":
        return True, ""
    if dev == "cuda":
        if not torch.cuda.is_available():
            return False, "no CUDA device (torch.cuda.is_available() is False)"
        return True, ""
    mps = getattr(torch.backends, "mps", None)
    if mps is None or not mps.is_available():
        return False, "no Apple MPS device"
    return True, ""


def require_device(device: str) -> str:
    """Normalise a device name or raise InputError saying why it cannot be used."""
    ok, why = torch_device_available(device)
    if not ok:
        raise InputError(f"device {device!r} cannot be used here: {why}")
    return str(device).strip().lower()


def synchronize(device: str) -> None:
    import torch
    if device == "cuda":
        torch.cuda.synchronize()
    elif device == "mps":
        torch.mps.synchronize()


def device_name(device: str) -> str:
    """A readable name: the GPU's name, or the CPU model."""
    if device == "cuda":
        import torch
        return torch.cuda.get_device_name(torch.cuda.current_device())
    if device == "mps":
        return "Apple MPS"
    return cpu_model()


def cpu_model() -> str:
    from gemmlib.devices import cpu_model as _cpu_model
    return _cpu_model()


# --------------------------------------------------------------------------- timing
def time_callable(fn: Callable[..., Any], *, device: str, args_list: list[tuple] | None = None,
                  warmup: int = 3, min_run_time: float = 0.5, max_reps: int = 1000,
                  cuda_graph: bool = False, flush_l2: bool = True) -> Timing:
    """Time ``fn(*args)`` with ``args`` rotated through ``args_list``.

    CPU: ``torch.utils.benchmark.Timer`` (``blocked_autorange`` for fast calls; one call per
    measurement for slow ones, so a 5-second GEMM is not run 50 times). CUDA:
    ``triton.testing.do_bench`` (L2 flushed before each call), CUDA events when Triton is
    missing, or CUDA-graph replay (``cuda_graph=True``) for microsecond kernels. The device is
    synchronized around what is timed. ``min_run_time`` is the total seconds spent timing.
    """
    if warmup < 0 or min_run_time <= 0 or max_reps < 1:
        raise ValueError("warmup >= 0, min_run_time > 0 and max_reps >= 1 are required")
    args_seq = list(args_list) if args_list else [()]
    n = len(args_seq)
    state = {"i": 0}

    def call() -> Any:
        a = args_seq[state["i"] % n]
        state["i"] += 1
        return fn(*a)

    if device == "cuda":
        return _time_cuda(call, args_seq, fn, warmup, min_run_time, max_reps, cuda_graph, flush_l2)
    return _time_host(call, device, warmup, min_run_time, max_reps)


def _time_host(call: Callable[[], Any], device: str, warmup: int, min_run_time: float,
               max_reps: int) -> Timing:
    import torch
    from torch.utils.benchmark import Timer

    # Warm-up, and an estimate of one call's cost to pick the strategy.
    t0 = time.perf_counter()
    call()
    synchronize(device)
    est = time.perf_counter() - t0
    for _ in range(max(0, warmup - 1)):
        if est * warmup > min_run_time:  # slow call: one warm-up is enough
            break
        t0 = time.perf_counter()
        call()
        synchronize(device)
        est = min(est, time.perf_counter() - t0)

    timer = Timer(stmt="call()", globals={"call": call}, num_threads=torch.get_num_threads())
    if est * 20 > min_run_time:
        # Slow: one call per measurement, a few measurements.
        reps = int(max(3, min(max_reps, min_run_time / max(est, 1e-9))))
        times = []
        for _ in range(reps):
            m = timer.timeit(number=1)
            times.extend(m.times)
        return Timing.from_times(times, reps=len(times), method="torch.utils.benchmark")
    m = timer.blocked_autorange(min_run_time=min_run_time)
    reps = int(m.number_per_run * len(m.times))
    return Timing.from_times(m.times, reps=reps, method="torch.utils.benchmark (blocked)")


def _time_cuda(call: Callable[[], Any], args_seq: list[tuple], fn: Callable[..., Any], warmup: int,
               min_run_time: float, max_reps: int, cuda_graph: bool, flush_l2: bool) -> Timing:
    import torch

    rep_ms = max(1.0, min_run_time * 1000.0)
    if cuda_graph:
        return _time_cuda_graph(args_seq, fn, warmup, rep_ms, max_reps)
    try:
        import triton.testing as tt
    except ImportError:
        tt = None
    if tt is not None and flush_l2:
        warm_ms = max(1.0, rep_ms / 4)
        try:
            times = tt.do_bench(call, warmup=warm_ms, rep=rep_ms, return_mode="all")
            return Timing.from_times([t / 1e3 for t in times], method="triton.do_bench")
        except (AssertionError, TypeError):  # an older Triton without return_mode="all"
            med, p20, p80 = tt.do_bench(call, warmup=warm_ms, rep=rep_ms, quantiles=[0.5, 0.2, 0.8])
            return Timing(med / 1e3, p20 / 1e3, p80 / 1e3, reps=0, method="triton.do_bench")
    # CUDA events, with our own L2 flush (a 256 MiB write evicts any L2 we know of).
    flush = torch.empty(256 * MiB // 4, dtype=torch.int32, device="cuda") if flush_l2 else None
    for _ in range(max(1, warmup)):
        call()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(3):
        call()
    e.record()
    torch.cuda.synchronize()
    est_ms = max(s.elapsed_time(e) / 3, 1e-3)
    reps = int(max(3, min(max_reps, rep_ms / est_ms)))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        if flush is not None:
            flush.zero_()
        starts[i].record()
        call()
        ends[i].record()
    torch.cuda.synchronize()
    return Timing.from_times([a.elapsed_time(b) / 1e3 for a, b in zip(starts, ends, strict=True)], method="cuda-events")


def _time_cuda_graph(args_seq: list[tuple], fn: Callable[..., Any], warmup: int, rep_ms: float,
                     max_reps: int) -> Timing:
    """Capture one call per buffer set in a CUDA graph and time replays (launch overhead hidden)."""
    import torch

    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(max(1, warmup)):
            for a in args_seq:
                fn(*a)
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for a in args_seq:
            fn(*a)
    graph.replay()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    graph.replay()
    e.record()
    torch.cuda.synchronize()
    est_ms = max(s.elapsed_time(e), 1e-3)
    reps = int(max(3, min(max_reps, rep_ms / est_ms)))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        starts[i].record()
        graph.replay()
        ends[i].record()
    torch.cuda.synchronize()
    per_call = len(args_seq)
    return Timing.from_times([a.elapsed_time(b) / 1e3 / per_call for a, b in zip(starts, ends, strict=True)],
                             reps=reps * per_call, method="cuda-graph")


def rotation_count(bytes_per_set: float, *, cache_bytes: float = 64 * MiB, max_sets: int = 8,
                   max_bytes: float | None = None) -> int:
    """How many input sets to rotate so that together they exceed a last-level cache twice over."""
    if bytes_per_set <= 0:
        return 1
    n = math.ceil(2 * cache_bytes / bytes_per_set)
    if max_bytes is not None:
        n = min(n, int(max_bytes // bytes_per_set))
    return int(max(1, min(max_sets, n)))


# --------------------------------------------------------------------------- limits and memory
@dataclass(frozen=True)
class Limits:
    """Caps for one benchmark run on this server."""

    max_dim: int  # largest M, N or K accepted
    max_bytes: int  # most bytes one run may allocate for its operands
    time_limit_s: float  # wall-clock budget of one run; rows past it are reported as skipped
    classroom: bool  # small, quick runs for a shared classroom server
    max_cpu_flops: float = 2 * 4096**3  # largest single GEMM (FLOPs) run on a CPU: ~1 min at 0.1 TFLOP/s

    def check_cpu_flops(self, flops: float, what: str = "one GEMM") -> None:
        """InputError when a CPU would take minutes (the cap is GEMM_MAX_CPU_GFLOP)."""
        if flops > self.max_cpu_flops:
            raise InputError(f"{what} is {flops / 1e9:.4g} GFLOP, too much for a CPU run here (cap "
                             f"{self.max_cpu_flops / 1e9:.4g} GFLOP, GEMM_MAX_CPU_GFLOP); choose smaller sizes "
                             f"or run on a GPU")


DEFAULT_LIMITS = Limits(max_dim=16384, max_bytes=24 * GiB, time_limit_s=240.0, classroom=False)
CLASSROOM_LIMITS = Limits(max_dim=2048, max_bytes=512 * MiB, time_limit_s=20.0, classroom=True,
                          max_cpu_flops=2 * 1024**3)

_ENV_KEYS = {"max_dim": "GEMM_MAX_DIM", "max_bytes": "GEMM_MAX_BYTES",
             "time_limit_s": "GEMM_TIME_LIMIT_S", "classroom": "GEMM_CLASSROOM",
             "max_cpu_flops": "GEMM_MAX_CPU_GFLOP"}


def _truthy(v: Any) -> bool:
    return str(v).strip().lower() in {"1", "true", "yes", "on"}


def limits(source: Mapping[str, Any] | None = None) -> Limits:
    """Caps from ``source`` (e.g. ``st.secrets``; keys as the env names) then the environment.

    ``GEMM_CLASSROOM=1`` starts from the small classroom caps; ``GEMM_MAX_DIM``,
    ``GEMM_MAX_BYTES``, ``GEMM_TIME_LIMIT_S`` and ``GEMM_MAX_CPU_GFLOP`` override single values. A malformed value
    is an InputError naming the variable.
    """
    def get(key: str) -> Any:
        env = _ENV_KEYS[key]
        if source is not None:
            try:
                if env in source:
                    return source[env]
            except Exception:  # noqa: BLE001 - st.secrets without a secrets file raises
                pass
        return os.environ.get(env)

    classroom = _truthy(get("classroom")) if get("classroom") is not None else False
    base = CLASSROOM_LIMITS if classroom else DEFAULT_LIMITS
    vals: dict[str, Any] = {"max_dim": base.max_dim, "max_bytes": base.max_bytes,
                            "time_limit_s": base.time_limit_s, "max_cpu_flops": base.max_cpu_flops}
    for key, conv in (("max_dim", int), ("max_bytes", int), ("time_limit_s", float), ("max_cpu_flops", float)):
        raw = get(key)
        if raw is None or str(raw).strip() == "":
            continue
        try:
            v = conv(float(raw)) if conv is int else conv(raw)
        except (TypeError, ValueError):
            raise InputError(f"{_ENV_KEYS[key]}={raw!r} is not a number") from None
        if not v > 0:
            raise InputError(f"{_ENV_KEYS[key]} must be positive, got {raw!r}")
        vals[key] = v * 1e9 if key == "max_cpu_flops" else v
    return Limits(classroom=classroom, **vals)


def check_dims(lim: Limits | None = None, **dims: Any) -> None:
    """InputError for a dimension that is not a whole number in 1..lim.max_dim."""
    lim = lim or limits()
    for name, v in dims.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v:
            raise InputError(f"{name} must be a whole number, got {v!r}")
        if v < 1:
            raise InputError(f"{name} must be at least 1, got {int(v)}")
        if v > lim.max_dim:
            extra = " (classroom mode)" if lim.classroom else ""
            raise InputError(f"{name}={int(v)} is above this server's cap of {lim.max_dim}{extra}; "
                             f"choose a smaller size or raise GEMM_MAX_DIM")


def available_memory(device: str) -> int | None:
    """Free bytes on ``device`` (CUDA: cudaMemGetInfo; CPU: MemAvailable), None if unknown."""
    if device == "cuda":
        import torch
        free, _total = torch.cuda.mem_get_info()
        # Memory already held by torch's caching allocator can be reused too.
        return int(free + torch.cuda.memory_reserved() - torch.cuda.memory_allocated())
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(nbytes: float, device: str, lim: Limits | None = None, headroom: float = 0.8) -> None:
    """InputError BEFORE allocating when ``nbytes`` exceeds the cap or ``headroom`` of free memory."""
    lim = lim or limits()
    if nbytes > lim.max_bytes:
        raise InputError(f"this run needs about {_fmt_bytes(nbytes)}, above this server's cap of "
                         f"{_fmt_bytes(lim.max_bytes)}; choose smaller sizes (or raise GEMM_MAX_BYTES)")
    free = available_memory(device)
    if free is not None and nbytes > headroom * free:
        raise InputError(f"this run needs about {_fmt_bytes(nbytes)} but only {_fmt_bytes(free)} is free "
                         f"on {device}; choose smaller sizes")


def _fmt_bytes(n: float) -> str:
    for unit, scale in (("TiB", 1024**4), ("GiB", GiB), ("MiB", MiB), ("KiB", 1024)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{int(n)} B"


def _is_oom(e: BaseException) -> bool:
    try:
        import torch
        oom_types: tuple[type, ...] = tuple(
            t for t in (getattr(torch, "OutOfMemoryError", None),
                        getattr(torch.cuda, "OutOfMemoryError", None)) if t is not None)
    except ImportError:  # pragma: no cover
        oom_types = ()
    if oom_types and isinstance(e, oom_types):
        return True
    msg = str(e).lower()
    return isinstance(e, (RuntimeError, MemoryError)) and (
        "out of memory" in msg or "can't allocate memory" in msg or isinstance(e, MemoryError))


@contextmanager
def oom_guard(device: str) -> Iterator[None]:
    """Turn an out-of-memory error into an InputError with advice, after freeing the CUDA cache."""
    try:
        yield
    except InputError:
        raise
    except (RuntimeError, MemoryError) as e:
        if not _is_oom(e):
            raise
        if device == "cuda":
            try:
                import gc

                import torch
                gc.collect()
                torch.cuda.empty_cache()
            except Exception:  # noqa: BLE001
                pass
        raise InputError(f"{device} ran out of memory for this size; the cache was freed, "
                         f"try smaller sizes or fewer dtypes") from None


# --------------------------------------------------------------------------- one run at a time
class BusyError(InputError):
    """The benchmark runner stayed busy longer than the caller was willing to wait."""


_run_lock = threading.Lock()
_owner_lock = threading.Lock()
_owner: str | None = None


def current_owner() -> str | None:
    """Who holds the benchmark runner now (None when idle)."""
    return _owner


@contextmanager
def single_flight(owner: str, on_wait: Callable[[str], None] | None = None,
                  timeout_s: float | None = None, poll_s: float = 0.25) -> Iterator[None]:
    """One benchmark at a time per process; ``on_wait("queued behind <owner>")`` while waiting.

    ``on_wait`` is called when the caller starts waiting and again whenever the holder changes.
    Raises BusyError after ``timeout_s`` seconds of waiting.
    """
    global _owner
    start = time.monotonic()
    told: str | None = None
    while not _run_lock.acquire(timeout=poll_s):
        holder = _owner or "another benchmark"
        if on_wait is not None and holder != told:
            on_wait(f"queued behind {holder}")
            told = holder
        if timeout_s is not None and time.monotonic() - start > timeout_s:
            raise BusyError(f"the benchmark runner is busy ({holder}); try again in a moment")
    with _owner_lock:
        _owner = owner
    try:
        yield
    finally:
        with _owner_lock:
            _owner = None
        _run_lock.release()


class Deadline:
    """A wall-clock budget for one run: rows after it expires are reported as skipped."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self.start = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def remaining(self) -> float:
        return math.inf if self.seconds is None else self.seconds - self.elapsed()

    def expired(self) -> bool:
        return self.remaining() <= 0

    def reason(self) -> str:
        return f"skipped: the run's time limit of {self.seconds:g} s was reached (GEMM_TIME_LIMIT_S)"


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


# --------------------------------------------------------------------------- inputs
def random_normal(shape: tuple[int, ...], dtype: Any, device: str, generator_seed: int | None = None) -> Any:
    """A random normal tensor (never zeros) of ``dtype`` on ``device``."""
    import torch
    if generator_seed is None:
        return torch.randn(*shape, dtype=torch.float32, device=device).to(dtype)
    g = torch.Generator(device="cpu").manual_seed(generator_seed)
    x = torch.randn(*shape, generator=g, dtype=torch.float32)
    return x.to(device=device, dtype=dtype)
