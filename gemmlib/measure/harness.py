"""The measuring harness every live benchmark goes through.

What it promises (see design.md, "Measuring honestly"):

* **Timing**: ``time_callable`` warms up, synchronizes the device around what is timed, repeats
  (at least three samples, however slow the call) and returns the median with p20/p80. On a CPU
  it uses ``torch.utils.benchmark.Timer`` (with all the threads torch would use, not the Timer's
  default of one); on CUDA ``triton.testing.do_bench`` (which flushes the L2 cache before every
  call), CUDA events when Triton is missing or no flush is wanted (each chunk of calls enqueued
  behind a spin kernel, so a microsecond kernel is not timed by its launch), or an unrolled
  CUDA graph (many calls per replay, one replay timed and divided, as
  ``triton.testing.do_bench_cudagraph`` does; the L2 flushed as do_bench flushes it). Input
  buffers are rotated (``args_list``) so a small problem does not time a warm cache.
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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
MIN_SAMPLES = 3  # timed samples of any call, however slow: a median of one has p20 = p80
GRAPH_SAMPLES = 10  # replays of an unrolled graph (triton.testing.do_bench_cudagraph replays 10 times)
MAX_GRAPH_CALLS = 1000  # calls unrolled in one graph: a replay's own launch (~10 µs) is then < 1 % of µs kernels
EVENT_CHUNK = 64  # the most calls enqueued behind one spin kernel on the CUDA-events path (event_chunk: fewer)
SPIN_MARGIN = 2.0  # a spin lasts this many times the host's time to enqueue the calls behind it
MAX_SPIN_S = 0.05  # the longest spin before one chunk
# The driver's queue of pending work holds about 1,024 entries on current drivers; the launch (or event record: it
# takes a place in the same queue) past it blocks the host until the device has finished an earlier one. The CUDA
# documentation gives no figure ("launches are queued up to a point"); it is measured in
# https://stackoverflow.com/questions/53970187 (a 190 µs kernel: the first ~1,000 launches return in 4-5 µs, every
# later one waits ~190 µs for a kernel to finish) and https://forums.developer.nvidia.com/t/220629 (cudaEventRecord
# blocks in the same queue as the launches). A chunk behind a spin must fit in it whole, or the host blocks inside
# the queued region, the device drains it and waits on the host, and the events time the host's gaps.
LAUNCH_QUEUE = 1024
QUEUE_SHARE = 0.5  # what one chunk may fill of it: the driver's own entries and other work take the rest
MIN_LAUNCH_HOST_S = 2e-6  # no kernel launch costs the host less (cudaLaunchKernel from C++: 2-5 µs; from torch more)
MIN_EVENT_CHUNK = 4  # fewer calls fit behind one spin: timed instead a sample of calls at a time after a synchronize
SYNC_SAMPLE_S = 1e-3  # a synchronized sample's calls last at least this: the first launch's latency (~5-10 µs) < 1 %
FLUSH_BYTES = 256 * MiB  # our own L2 flush: a write of this size evicts any L2 we know of (H100/H200: 50 MB)


def time_callable(fn: Callable[..., Any], *, device: str, args_list: list[tuple] | None = None,
                  warmup: int = 3, min_run_time: float = 0.5, max_reps: int = 1000,
                  cuda_graph: bool = False, flush_l2: bool = True, window: Any = None) -> Timing:
    """Time ``fn(*args)`` with ``args`` rotated through ``args_list``.

    CPU: ``torch.utils.benchmark.Timer``'s ``blocked_autorange`` for fast calls; one call per
    sample for slow ones, timed with ``time.perf_counter`` (so a 5-second GEMM is run 4 times, not 50). CUDA:
    ``triton.testing.do_bench`` (L2 flushed before each call), CUDA events when Triton is
    missing, when ``flush_l2`` is False or when a call is too slow for do_bench to time it three
    times, or an unrolled CUDA graph (``cuda_graph=True``) for microsecond kernels (see
    :func:`time_graph` and :func:`time_events`). The device is synchronized around what is timed.
    ``min_run_time`` is the total seconds spent timing; every path takes at least ``MIN_SAMPLES``
    samples. ``window``: an object whose ``start()`` is called after the warm-up, right before the
    first timed call, and ``stop()`` after the last (a GPU monitor samples only the timed calls).
    """
    if warmup < 0 or min_run_time <= 0 or max_reps < MIN_SAMPLES:
        raise ValueError(f"warmup >= 0, min_run_time > 0 and max_reps >= {MIN_SAMPLES} are required")
    args_seq = list(args_list) if args_list else [()]
    n = len(args_seq)
    state = {"i": 0}

    def call() -> Any:
        a = args_seq[state["i"] % n]
        state["i"] += 1
        return fn(*a)

    if device == "cuda":
        return _time_cuda(call, args_seq, fn, warmup, min_run_time, max_reps, cuda_graph, flush_l2, window)
    return _time_host(call, device, warmup, min_run_time, max_reps, window)


def _time_host(call: Callable[[], Any], device: str, warmup: int, min_run_time: float,
               max_reps: int, window: Any = None) -> Timing:
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

    if window is not None:
        window.start()
    try:
        if est * 20 > min_run_time:
            # Slow: one call per sample, a few samples, each timed on its own (the device synchronized
            # after it). Not Timer.timeit(number=1): it runs two warm-up calls of its own before every
            # sample, 9 calls for 3 samples of a call that is already warm.
            reps = int(max(MIN_SAMPLES, min(max_reps, min_run_time / max(est, 1e-9))))
            times = []
            for _ in range(reps):
                t0 = time.perf_counter()
                call()
                synchronize(device)
                times.append(time.perf_counter() - t0)
            return Timing.from_times(times, reps=len(times), method="one call per sample (perf_counter)")
        timer = Timer(stmt="call()", globals={"call": call}, num_threads=torch.get_num_threads())
        m = timer.blocked_autorange(min_run_time=min_run_time)
        times = list(m.times)
        while len(times) < MIN_SAMPLES:  # a block that took the whole budget: more blocks of the same size
            times.extend(timer.timeit(number=m.number_per_run).times)
        reps = int(m.number_per_run * len(times))
        return Timing.from_times(times, reps=reps, method="torch.utils.benchmark (blocked)")
    finally:
        if window is not None:
            window.stop()


# ---- CUDA: do_bench, events, graphs ----------------------------------------------------------
class CudaOps:
    """The CUDA calls the timing paths make, in one place: the tests hand the same paths a
    simulated device (host and device clocks) to check their arithmetic without a GPU."""

    def __init__(self) -> None:
        import torch

        self.torch = torch
        self._spin_rate: float | None = None

    def host_time(self) -> float:
        return time.perf_counter()

    def event(self) -> Any:
        return self.torch.cuda.Event(enable_timing=True)

    def record(self, ev: Any) -> None:
        ev.record()

    def elapsed_s(self, start: Any, end: Any) -> float:
        return start.elapsed_time(end) / 1e3

    def synchronize(self) -> None:
        self.torch.cuda.synchronize()

    @contextmanager
    def side_stream(self) -> Iterator[None]:
        """Warm-up before a capture runs on a side stream (as torch's CUDA-graph notes advise)."""
        cuda = self.torch.cuda
        stream = cuda.Stream()
        stream.wait_stream(cuda.current_stream())
        with cuda.stream(stream):
            yield
        cuda.current_stream().wait_stream(stream)

    def capture(self, body: Callable[[], Any]) -> Any:
        graph = self.torch.cuda.CUDAGraph()
        # thread_local: only this thread's unsafe calls invalidate the capture, not another session's
        # launch on another thread of the same server (the default "global" mode aborts on those).
        with self.torch.cuda.graph(graph, capture_error_mode=GRAPH_CAPTURE_MODE):
            body()
        return graph

    def replay(self, graph: Any) -> None:
        graph.replay()

    def spin(self, seconds: float) -> None:
        """Keep the device busy for about ``seconds`` (``torch.cuda._sleep``: a kernel that spins for
        a number of clock cycles, converted with a rate measured once, on a warm kernel: torch loads a kernel's
        module at its first launch (CUDA's lazy loading, on by default), on the host while the first event is
        already recorded; timed, that load made the rate several times too low and every spin as much too short)."""
        if self._spin_rate is None:
            self.torch.cuda._sleep(1)  # the first launch: the module is loaded now, outside the events
            self.synchronize()
            s, e = self.event(), self.event()
            s.record()
            self.torch.cuda._sleep(1_000_000)
            e.record()
            self.synchronize()
            self._spin_rate = 1_000_000 / max(self.elapsed_s(s, e), 1e-6)
        self.torch.cuda._sleep(max(1, int(seconds * self._spin_rate)))

    def count_kernels(self, call: Callable[[], Any]) -> int | None:
        """The device activities (kernels, memsets, copies) one ``call`` puts in the queue, by torch.profiler
        (CUPTI); None when the profiler cannot run here (another profiler active, no CUPTI)."""
        try:
            from torch.autograd import DeviceType
            from torch.profiler import ProfilerActivity, profile

            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                call()
                self.synchronize()
            n = sum(1 for ev in prof.events() if ev.device_type == DeviceType.CUDA)
        except Exception:  # noqa: BLE001 - no count: the caller keeps its bound
            return None
        return n or None

    def l2_bytes(self) -> int | None:
        return l2_cache_bytes("cuda")

    def flusher(self) -> tuple[Callable[[], None], str]:
        return l2_flusher("cuda")


def l2_flusher(device: str = "cuda", runtime: Any = None, nbytes: int = FLUSH_BYTES) -> tuple[Callable[[], None], str]:
    """``(flush, how)``: a call that evicts the L2 cache the way ``triton.testing.do_bench`` does, and
    what it uses.

    Triton ≥ 3.2 flushes with its driver's ``clear_cache(buffer)``; older releases zero the buffer
    ``get_empty_cache_for_benchmark()`` returns. Each is tried, and *called once*, inside the guard:
    a driver without ``clear_cache`` (or one that fails) falls back to the next, and at the end to
    a ``nbytes`` write of our own on ``device``. ``runtime``: ``triton.runtime`` (tests pass a stand-in).
    """
    import torch

    try:
        if runtime is None:
            from triton import runtime
        drv = runtime.driver.active
        cache = drv.get_empty_cache_for_benchmark()
        clear = getattr(drv, "clear_cache", None)
        if callable(clear):
            def flush() -> None:
                clear(cache)
            how = "triton clear_cache"
        else:
            flush = cache.zero_  # Triton < 3.2: do_bench zeroes its buffer itself
            how = "triton's benchmark buffer zeroed"
        flush()
        return flush, how
    except Exception:  # noqa: BLE001 - any other Triton, or none: our own write
        pass
    buf = torch.empty(max(1, int(nbytes) // 4), dtype=torch.int32, device=device)
    buf.zero_()
    return buf.zero_, f"a {nbytes / MiB:.0f} MiB buffer zeroed"


def _triton_testing() -> Any:
    try:
        import triton.testing as tt
    except ImportError:
        return None
    return tt


def _time_cuda(call: Callable[[], Any], args_seq: list[tuple], fn: Callable[..., Any], warmup: int,
               min_run_time: float, max_reps: int, cuda_graph: bool, flush_l2: bool, window: Any = None,
               ops: Any = None, testing: Any = "import") -> Timing:
    ops = ops if ops is not None else CudaOps()
    rep_s = max(1e-3, min_run_time)
    if cuda_graph:
        return time_graph(args_seq, fn, ops, warmup=warmup, rep_s=rep_s, max_reps=max_reps, flush_l2=flush_l2,
                          window=window)
    flush = None
    if flush_l2:
        flush, _how = ops.flusher()
        tt = _triton_testing() if testing == "import" else testing
        if tt is not None and window is None:  # do_bench cannot say when its timed calls start
            # do_bench runs as many calls as fit in ``rep`` ms after its own 5-call estimate (flush
            # included); it knows nothing of max_reps or a warm-up count. Estimate the same way first
            # and hand it a budget that keeps it within both (do_bench_budget).
            est_ms = _estimate_flushed_ms(call, flush, ops)
            warm_ms, rep_budget = do_bench_budget(est_ms, warmup, rep_s * 1e3, max_reps)
            if est_ms * MIN_SAMPLES <= rep_budget:  # else do_bench would take fewer than three samples
                try:
                    times = tt.do_bench(call, warmup=warm_ms, rep=rep_budget, return_mode="all")
                    # do_bench counts its calls by its own estimate, not est_ms: one a few % lower (the clocks
                    # risen since ours) runs a call or two past max_reps; the samples kept stay within it
                    return Timing.from_times([t / 1e3 for t in list(times)[:max_reps]], method="triton.do_bench")
                except (AssertionError, TypeError):  # an older Triton without return_mode="all"
                    med, p20, p80 = tt.do_bench(call, warmup=warm_ms, rep=rep_budget, quantiles=[0.5, 0.2, 0.8])
                    return Timing(med / 1e3, p20 / 1e3, p80 / 1e3, reps=0, method="triton.do_bench")
                except AttributeError:  # a Triton whose driver misses what do_bench calls: events, same flush
                    pass
    return time_events(call, ops, warmup=warmup, rep_s=rep_s, max_reps=max_reps, flush=flush, window=window)


def event_chunk(kernels: int, host_s: float) -> int:
    """How many calls one spin may cover: ``EVENT_CHUNK`` at most, as many as fit whole in the share of the launch
    queue (a call is its ``kernels`` launches and two event records; the spin is one more), and as many as the
    host enqueues in a ``MAX_SPIN_S`` spin (``SPIN_MARGIN`` times its time per call). 0: not even one."""
    room = int(LAUNCH_QUEUE * QUEUE_SHARE) - 1
    by_queue = room // (max(1, int(kernels)) + 2)
    by_spin = int(MAX_SPIN_S / (SPIN_MARGIN * max(host_s, 1e-12)))
    return max(0, min(EVENT_CHUNK, by_queue, by_spin))


def kernels_per_call(call: Callable[[], Any], ops: Any, host_s: float) -> tuple[int, str]:
    """(kernels one call launches, how that is known) for :func:`event_chunk`.

    The host's time per call bounds the count (``host_s / MIN_LAUNCH_HOST_S``: no launch costs the host less).
    When that bound already leaves ``MIN_EVENT_CHUNK`` calls behind a spin nothing is counted (a GEMM: one or two
    kernels in ~10 µs). Otherwise one more warm call is made under the profiler (``ops.count_kernels``: after the
    warm-up, so an autotuner's or a lazy initialisation's launches are not counted); a profiler that cannot run
    leaves the bound."""
    bound = max(1, math.ceil(host_s / MIN_LAUNCH_HOST_S))
    if event_chunk(bound, host_s) >= MIN_EVENT_CHUNK:
        return bound, "at most"
    counted = ops.count_kernels(call)
    if counted:
        return int(counted), "counted"
    return bound, "at most"


def time_events(call: Callable[[], Any], ops: Any, *, warmup: int, rep_s: float, max_reps: int,
                flush: Callable[[], None] | None = None, window: Any = None) -> Timing:
    """Each call between its own pair of CUDA events, ``flush()`` (the L2) before each when given.

    A microsecond kernel launched from Python is host-bound: the device finishes it before the host
    has enqueued the next, and an event pair then times the host's launch. Without a flush (which
    keeps the device busy while the host enqueues the next call, as in do_bench), every chunk of
    calls is enqueued behind a spin kernel lasting ``SPIN_MARGIN`` times the host's measured time to
    enqueue them: when the device reaches the first call, every call of the chunk is already queued,
    and each event pair times the device's work only. A chunk is at most ``EVENT_CHUNK`` calls and
    never more than fits whole in the driver's launch queue (:func:`event_chunk`, by the kernels one
    call launches: :func:`kernels_per_call`); when fewer than ``MIN_EVENT_CHUNK`` fit (a transformer
    block of hundreds of kernels), :func:`time_synchronized` times it instead. ``Timing.method`` says which.
    """
    for _ in range(max(1, warmup)):
        call()
    ops.synchronize()
    s, e = ops.event(), ops.event()
    h0 = ops.host_time()
    ops.record(s)
    for _ in range(3):
        if flush is not None:
            flush()
        call()
    ops.record(e)
    host_s = (ops.host_time() - h0) / 3  # what the host spends enqueuing one call
    ops.synchronize()
    est = max(ops.elapsed_s(s, e) / 3, 1e-9)
    per_chunk, kernels, known = EVENT_CHUNK, 0, ""
    if flush is None:
        kernels, known = kernels_per_call(call, ops, host_s)
        per_chunk = event_chunk(kernels, host_s)
        if per_chunk < MIN_EVENT_CHUNK:
            why = (f"{kernels} kernels per call ({known}), {per_chunk} call{'' if per_chunk == 1 else 's'} fit whole in the launch queue behind "
                   f"a spin" if per_chunk < event_chunk(1, host_s) else
                   f"the host takes {host_s * 1e3:.3g} ms to enqueue a call, longer than a spin covers")
            return time_synchronized(call, ops, est=est, rep_s=rep_s, max_reps=max_reps, window=window, why=why)
    reps = int(max(MIN_SAMPLES, min(max_reps, rep_s / est)))
    starts = [ops.event() for _ in range(reps)]
    ends = [ops.event() for _ in range(reps)]
    if window is not None:
        window.start()
    i = 0
    while i < reps:
        chunk = min(per_chunk, reps - i)
        if flush is None:
            ops.spin(min(MAX_SPIN_S, SPIN_MARGIN * chunk * host_s))
        for j in range(i, i + chunk):
            if flush is not None:
                flush()
            ops.record(starts[j])
            call()
            ops.record(ends[j])
        i += chunk
    ops.synchronize()
    if window is not None:
        window.stop()
    how = ("L2 flushed before each call" if flush is not None else
           f"spin kernel before every {per_chunk} calls; {kernels} kernels per call ({known})")
    return Timing.from_times([ops.elapsed_s(a, b) for a, b in zip(starts, ends, strict=True)],
                             method=f"cuda-events ({how})")


def sync_plan(est: float, rep_s: float, max_reps: int) -> tuple[int, int]:
    """(calls per sample, samples) of :func:`time_synchronized`: enough calls that a sample lasts
    ``SYNC_SAMPLE_S``, at least ``MIN_SAMPLES`` samples, about ``rep_s`` in all, at most ``max_reps`` calls
    (unless three samples of one call need more)."""
    per = max(1, math.ceil(SYNC_SAMPLE_S / max(est, 1e-9)))
    per = max(1, min(per, max_reps // MIN_SAMPLES))
    samples = int(max(MIN_SAMPLES, min(max_reps // per, rep_s / (per * max(est, 1e-9)))))
    return per, samples


def time_synchronized(call: Callable[[], Any], ops: Any, *, est: float, rep_s: float, max_reps: int,
                      window: Any = None, why: str = "") -> Timing:
    """Samples of ``per`` calls (:func:`sync_plan`), each begun on an idle device (synchronized first) and
    timed by an event pair around its calls, divided by ``per``. Nothing is queued ahead of the device, so a
    full launch queue cannot put the host's waits between the events; what a host-bound call costs the host
    is in the time, as it is in a real run of it."""
    per, samples = sync_plan(est, rep_s, max_reps)
    times = []
    if window is not None:
        window.start()
    for _ in range(samples):
        ops.synchronize()
        s, e = ops.event(), ops.event()
        ops.record(s)
        for _ in range(per):
            call()
        ops.record(e)
        ops.synchronize()
        times.append(ops.elapsed_s(s, e) / per)
    if window is not None:
        window.stop()
    return Timing.from_times(times, reps=samples * per,
                             method=f"cuda-events synchronized ({per} calls per sample, the device idle before "
                                    f"each: {why})")


def tensor_bytes(args_seq: list[tuple]) -> int:
    """Bytes of the distinct tensors in the argument sets (a tensor passed twice counts once)."""
    seen: dict[int, int] = {}
    for args in args_seq:
        for a in args:
            if hasattr(a, "data_ptr") and hasattr(a, "element_size") and hasattr(a, "numel"):
                seen[int(a.data_ptr())] = int(a.numel()) * int(a.element_size())
    return sum(seen.values())


def graph_plan(est_round_s: float, sets: int, rep_s: float, max_reps: int) -> tuple[int, int]:
    """``(rounds, samples)``: how many rounds of the ``sets`` argument sets one graph unrolls, and how
    many replays are timed, for a round of ``est_round_s`` seconds and a budget of ``rep_s``.

    As ``triton.testing.do_bench_cudagraph``: the budget is spread over ``GRAPH_SAMPLES`` replays of a
    graph that unrolls as many calls as fit (at most ``MAX_GRAPH_CALLS`` and ``max_reps`` in all);
    a call too slow for that gets one round per graph and ``MIN_SAMPLES`` replays or more.
    """
    est = max(float(est_round_s), 1e-9)
    rounds = int(min(rep_s / (GRAPH_SAMPLES * est), MAX_GRAPH_CALLS / sets, max_reps / (GRAPH_SAMPLES * sets)))
    if rounds >= 1:
        return rounds, GRAPH_SAMPLES
    samples = int(max(MIN_SAMPLES, min(GRAPH_SAMPLES, rep_s / est, max_reps / sets)))
    return 1, samples


def time_graph(args_seq: list[tuple], fn: Callable[..., Any], ops: Any, *, warmup: int, rep_s: float,
               max_reps: int, flush_l2: bool = True, window: Any = None) -> Timing:
    """Capture ``rounds`` × every argument set in one CUDA graph; time each replay with one event
    pair and divide by the calls it holds (``triton.testing.do_bench_cudagraph``'s method): the
    host launches one graph per sample, so a microsecond kernel is not timed by its launch.

    The L2 as do_bench leaves it (``flush_l2``): when the rotated argument sets together exceed twice
    the L2, every call finds its inputs evicted already and nothing is added; otherwise a flush is
    captured before every call, and a second graph of the flushes alone is replayed beside each
    sample and subtracted. ``flush_l2=False``: calls back to back, the cache as they leave it.
    """
    sets = len(args_seq)
    with ops.side_stream():
        for _ in range(max(1, warmup)):
            for a in args_seq:
                fn(*a)
    ops.synchronize()
    flush: Callable[[], None] | None = None
    how = "L2 as the calls leave it"
    if flush_l2:
        l2 = ops.l2_bytes()
        if l2 and tensor_bytes(args_seq) >= 2 * l2:
            how = "rotated inputs exceed twice the L2"
        else:
            flush, _src = ops.flusher()
            how = "L2 flushed before every call, the flushes' own time subtracted"

    def body(rounds: int, calls: bool = True) -> Callable[[], None]:
        def run() -> None:
            for _ in range(rounds):
                for a in args_seq:
                    if flush is not None:
                        flush()
                    if calls:
                        fn(*a)
        return run

    def timed(graph: Any) -> float:
        s, e = ops.event(), ops.event()
        ops.record(s)
        ops.replay(graph)
        ops.record(e)
        ops.synchronize()
        return ops.elapsed_s(s, e)

    probe = ops.capture(body(1))  # one round, to size the real graph
    ops.replay(probe)
    ops.synchronize()
    est_round = timed(probe)
    if flush is not None:
        probe_flush = ops.capture(body(1, calls=False))
        ops.replay(probe_flush)
        ops.synchronize()
        est_round = max(est_round - timed(probe_flush), 1e-9)
        del probe_flush
    del probe
    rounds, samples = graph_plan(est_round, sets, rep_s, max_reps)
    calls = rounds * sets
    graph = ops.capture(body(rounds))
    flushes = ops.capture(body(rounds, calls=False)) if flush is not None else None
    ops.replay(graph)  # the first replay uploads the graph
    if flushes is not None:
        ops.replay(flushes)
    ops.synchronize()
    if window is not None:
        window.start()
    per_call = []
    for _ in range(samples):
        t = timed(graph)
        if flushes is not None:
            t -= timed(flushes)
        per_call.append(max(t, 0.0) / calls)
    if window is not None:
        window.stop()
    if not sorted(per_call)[len(per_call) // 2] > 0:
        raise RuntimeError("the call is shorter than the noise of the L2 flush around it; time it with "
                           "rotated inputs larger than the L2, or without the flush")
    return Timing.from_times(per_call, reps=samples * calls,
                             method=f"cuda-graph ({calls} calls per replay; {how})")


def do_bench_budget(est_ms: float, warmup: int, rep_ms: float, max_reps: int) -> tuple[float, float]:
    """``(warmup, rep)`` in ms for ``triton.testing.do_bench`` so that it runs at most ``max_reps``
    timed calls and at least ``warmup`` warm-up calls, given one call's estimated time.

    do_bench runs ``max(1, int(warmup / estimate))`` warm-up and ``max(1, int(rep / estimate))``
    timed calls, where ``estimate`` is its own 5-call mean with the L2 flush included, which is
    what ``est_ms`` measures too. The warm-up keeps a floor of min(25 ms, rep / 4) (do_bench's
    default is 25 ms) so clocks settle before a kernel of microseconds is timed. A call so slow
    that ``rep`` holds fewer than ``MIN_SAMPLES`` of it is not do_bench's: the harness times it
    with CUDA events instead (see ``_time_cuda``).
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


def _estimate_flushed_ms(call: Callable[[], Any], flush: Callable[[], None], ops: Any, calls: int = 3) -> float:
    """Milliseconds per call with the L2 flushed before each, as do_bench estimates it."""
    call()
    ops.synchronize()
    s, e = ops.event(), ops.event()
    ops.record(s)
    for _ in range(calls):
        flush()
        call()
    ops.record(e)
    ops.synchronize()
    return max(ops.elapsed_s(s, e) * 1e3 / calls, 1e-6)


def host_call_cost(fn: Callable[[], Any], device: str, *, calls: int = 200, repeats: int = 9) -> float:
    """Seconds the host spends on one call of ``fn``. On a CPU the call is the work: the harness's
    median. On a GPU the time to enqueue ``calls`` calls (fewer than the launch queue holds, so none
    waits for the device), per call, median over ``repeats``, the device synchronized between them."""
    if device != "cuda":
        return time_callable(fn, device=device, min_run_time=0.1).median_s
    import torch

    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    per = []
    for _ in range(max(MIN_SAMPLES, repeats)):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        per.append((time.perf_counter() - t0) / calls)
        torch.cuda.synchronize()
    return Timing.from_times(per).median_s


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
