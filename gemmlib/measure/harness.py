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

import math
import time
from collections.abc import Callable
from typing import Any

from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_
from gemmlib.core.machine import cpu_model
from gemmlib.core.results import Timing
from gemmlib.core.units import MiB


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
        return False, N_("PyTorch is not installed")
    if dev == "cpu":
        return True, ""
    if dev == "cuda":
        if not torch.cuda.is_available():
            return False, N_("no CUDA device (torch.cuda.is_available() is False)")
        return True, ""
    mps = getattr(torch.backends, "mps", None)
    if mps is None or not mps.is_available():
        return False, N_("no Apple MPS device")
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


# --------------------------------------------------------------------------- timing
GRAPH_CAPTURE_MODE = "thread_local"  # torch.cuda.graph(capture_error_mode=...) for every capture here


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
        # do_bench runs as many calls as fit in ``rep`` ms after its own 5-call estimate (flush
        # included); it knows nothing of max_reps or a warm-up count. Estimate the same way first
        # and hand it a budget that keeps it within both (do_bench_budget).
        est_ms = _estimate_flushed_ms(call)
        warm_ms, rep_budget = do_bench_budget(est_ms, warmup, rep_ms, max_reps)
        try:
            times = tt.do_bench(call, warmup=warm_ms, rep=rep_budget, return_mode="all")
            return Timing.from_times([t / 1e3 for t in times], method="triton.do_bench")
        except (AssertionError, TypeError):  # an older Triton without return_mode="all"
            med, p20, p80 = tt.do_bench(call, warmup=warm_ms, rep=rep_budget, quantiles=[0.5, 0.2, 0.8])
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
    # thread_local: only this thread's unsafe calls invalidate the capture, not another session's
    # launch on another thread of the same server (the default "global" mode aborts on those).
    with torch.cuda.graph(graph, capture_error_mode=GRAPH_CAPTURE_MODE):
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


def do_bench_budget(est_ms: float, warmup: int, rep_ms: float, max_reps: int) -> tuple[float, float]:
    """``(warmup, rep)`` in ms for ``triton.testing.do_bench`` so that it runs at most ``max_reps``
    timed calls and at least ``warmup`` warm-up calls, given one call's estimated time.

    do_bench runs ``max(1, int(warmup / estimate))`` warm-up and ``max(1, int(rep / estimate))``
    timed calls, where ``estimate`` is its own 5-call mean with the L2 flush included, which is
    what ``est_ms`` measures too. The warm-up keeps a floor of min(25 ms, rep / 4) (do_bench's
    default is 25 ms) so clocks settle before a kernel of microseconds is timed.
    """
    if warmup < 0 or max_reps < 1 or not rep_ms > 0:
        raise ValueError("warmup >= 0, max_reps >= 1 and rep_ms > 0 are required")
    est = max(float(est_ms), 1e-6)
    rep = min(float(rep_ms), max_reps * est)
    # stay strictly inside the cap whatever the rounding of rep / est does
    while max(1, int(rep / est)) > max_reps:
        rep *= 0.999
    warm = max(warmup * est, min(25.0, rep_ms / 4))
    return warm, rep


def _estimate_flushed_ms(call: Callable[[], Any], calls: int = 3) -> float:
    """Milliseconds per call with the L2 flushed before each, as do_bench estimates it."""
    import torch

    try:
        from triton import runtime
        drv = runtime.driver.active
        cache = drv.get_empty_cache_for_benchmark()

        def flush() -> None:
            drv.clear_cache(cache)
    except Exception:  # noqa: BLE001 - another Triton: flush with a 256 MiB write of our own
        buf = torch.empty(256 * MiB // 4, dtype=torch.int32, device="cuda")

        def flush() -> None:
            buf.zero_()
    call()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(calls):
        flush()
        call()
    e.record()
    torch.cuda.synchronize()
    return max(s.elapsed_time(e) / calls, 1e-6)


def l2_cache_bytes(device: str) -> int | None:
    """The L2 cache of the current CUDA device in bytes (None elsewhere or when unknown)."""
    if device != "cuda":
        return None
    import torch
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    size = int(getattr(props, "L2_cache_size", 0) or 0)
    return size or None


def kernel_names(fn: Callable[[], Any], device: str) -> list[str]:
    """Names of the device kernels one call of ``fn`` launches (torch.profiler), most time first.

    Only a GPU has kernels to name; on a CPU the list is empty (the profiler still runs, so the
    code path is the same). Used to show which library kernel a dispatcher picked.
    """
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=acts) as prof:
        fn()
        synchronize(device)
    times: dict[str, float] = {}
    for ev in prof.events():
        if ev.device_type == DeviceType.CUDA:
            t = getattr(ev, "device_time_total", None)
            if t is None:
                t = getattr(ev, "cuda_time_total", 0.0)
            times[ev.name] = times.get(ev.name, 0.0) + float(t or 0.0)
    return sorted(times, key=lambda n: -times[n])


def rotation_count(bytes_per_set: float, *, cache_bytes: float = 64 * MiB, max_sets: int = 8,
                   max_bytes: float | None = None) -> int:
    """How many input sets to rotate so that together they exceed a last-level cache twice over."""
    if bytes_per_set <= 0:
        return 1
    n = math.ceil(2 * cache_bytes / bytes_per_set)
    if max_bytes is not None:
        n = min(n, int(max_bytes // bytes_per_set))
    return int(max(1, min(max_sets, n)))


# --------------------------------------------------------------------------- inputs
def random_normal(shape: tuple[int, ...], dtype: Any, device: str, generator_seed: int | None = None) -> Any:
    """A random normal tensor (never zeros) of ``dtype`` on ``device``."""
    import torch
    if generator_seed is None:
        return torch.randn(*shape, dtype=torch.float32, device=device).to(dtype)
    g = torch.Generator(device="cpu").manual_seed(generator_seed)
    x = torch.randn(*shape, generator=g, dtype=torch.float32)
    return x.to(device=device, dtype=dtype)
