"""Start n ranks of ``torch.distributed`` on this machine (or join the ones ``torchrun`` started),
run one worker function on each, and leave no process behind.

* **One machine**: :func:`run_ranks` starts the ranks with ``torch.multiprocessing`` from a fork
  server (start method "forkserver": a clean single-threaded process started once per caller, which
  imports torch and forks each rank from there, so a launch pays torch's import once per caller instead
  of once per rank; it never touches CUDA, so its forks are as safe with CUDA as spawned processes;
  "spawn" where there is no fork server), gives each rank the caller's environment and memory limits
  as they are at the launch, joins them through a file store in a fresh temporary folder, and waits
  for them with a hard deadline. NCCL between GPUs when every rank has its own CUDA device, gloo
  between CPU processes otherwise (a gloo figure measures host memory and sockets, not an
  interconnect).
* **Several machines**: under ``torchrun`` (``RANK``/``WORLD_SIZE``/``LOCAL_RANK`` set) nothing is
  spawned: the process group comes from ``env://`` and this process is one rank; rank 0 returns
  the result, the others ``None``.
* **Clean-up**: the process group has a timeout, so a rank blocked in a collective whose peer hangs
  or died raises instead of waiting forever; a rank that fails reports its error through its pipe;
  the parent stops every rank (SIGTERM, then SIGKILL) on success, error, timeout or Ctrl-C; each rank
  also exits by itself when its parent disappears. A failure is a :class:`RankError` naming the rank
  and its error (and the ranks still running, the likely culprits of a hang); an ``InputError``
  raised in a rank comes back as an ``InputError``.

The worker is a module-level function of an importable module, ``worker(ctx: RankContext, cfg,
report) -> result`` (it is pickled by name for the ranks, which do not run the caller's
main script: a Streamlit page or a script without a ``__main__`` guard can start ranks); ``report(fraction, text)`` sends progress from rank 0,
and ``report.keep(row)`` hands the parent one finished piece of the result at once (``run_ranks``'s
``on_keep``): a run stopped later still has it.
:func:`time_samples` is the one timing loop of multi-rank benchmarks.

torch is imported inside the functions, never at import time.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import shutil
import sys
import tempfile
import threading
import time
import traceback
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_, Text
from gemmlib.core.machine import cpu_model
from gemmlib.measure import safety

BACKENDS = ("auto", "nccl", "gloo")
RANK_MEMORY_BYTES = 400 * 1024**2  # what one rank costs before its buffers: torch (~220 MB) + gloo
# A CUDA rank's host memory for its CUDA context, cuBLAS and NCCL on top of that: an allowance, not a
# measurement (scripts/gpu_checks.py measures a CUDA process's as "cuda_host_memory" on a GPU). The
# worker of a rank job stays off the GPU (the spec says ranks_open_devices), so its memory limit, which the ranks
# inherit, must make room for it.
CUDA_RANK_HOST_BYTES = 2 * 1024**3
# A launch's start as it usually goes: the ranks started, torch imported, the process group met. 2 gloo ranks on
# this project's 2-core CPU machine: 2.6–4.8 s when each rank was spawned and imported torch itself
# (benchmarks/bench_run_estimate.py --buttons); from the fork server, 0.9–1.4 s for a process's first launch
# (the server's own start and torch import) and 0.05 s for a later one (benchmarks/bench_speed.py --only
# launch). The plan's estimate before a multi-rank run (its timeouts allow STARTUP_S) takes about the first
# launch's figure: a benchmark worker is fresh for every job.
LAUNCH_S = 2.0
STARTUP_S = 30.0  # the allowance for starting the ranks and importing torch, before the run's timeout counts
GRACE_S = 5.0  # past the run's timeout, before the parent stops the ranks: their own timeout speaks first
# How the ranks start (see the module's docstring) and what the fork server imports before it forks them
START_METHOD = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
PRELOAD = ["torch", "torch.distributed", "gemmlib.measure.launch"]
# The memory limits a rank takes from the caller at the launch (the fork server's are those of its own start)
_LIMITS = ("RLIMIT_DATA", "RLIMIT_AS")
# What a benchmark process sets, unless the caller's environment says otherwise, before torch's profiler first runs
# there. kineto (torch.profiler's C++ side) writes "USDT:<time> <pid>:<tid> SyncActivityProfilerHandler.cpp:52]
# profiler_start" (and profiler_stop) to stderr around every profile at its default level; KINETO_LOG_LEVEL, read by
# libkineto_init at the profiler's first use, hides every message below it. USDT is its highest level (5: VERBOSE 0,
# INFO 1, WARNING 2, STAGE 3, ERROR 4, USDT 5, libkineto's ILoggerObserver.h), so 6 hides them all, kineto's own
# ERROR lines included (there is no level between them): KINETO_LOG_LEVEL=4 in the caller's environment, which
# wins, brings its errors back (and its USDT lines with them).
QUIET_ENV = {"KINETO_LOG_LEVEL": "6"}

Report = Callable[[float, str], None]


class _Reporter:
    """What a worker gets as ``report``: ``report(fraction, text)`` for progress, ``report.keep(obj)``
    for a finished piece of the result (sent at once; only rank 0's are passed on)."""

    def __init__(self, rank: int, progress: Callable[[float, Any], None] | None,
                 keep: Callable[[Any], None] | None) -> None:
        self._rank, self._progress, self._keep = rank, progress, keep

    def __call__(self, frac: float, text: Any) -> None:
        if self._rank == 0 and self._progress is not None:
            self._progress(float(frac), text)

    def keep(self, obj: Any) -> None:
        if self._rank == 0 and self._keep is not None:
            self._keep(obj)


class RankError(RuntimeError):
    """A rank failed, or the ranks ran past their deadline; every rank has been stopped."""

    def __init__(self, message: str, pids: tuple[int, ...] = (), details: str = ""):
        super().__init__(message)
        self.pids = pids
        self.details = details  # the failing rank's traceback, when there is one


# --------------------------------------------------------------------------- what runs where
@dataclass(frozen=True)
class Plan:
    """How a multi-rank run will go: the backend, the device kind, the rank count, what it means."""

    backend: str  # "nccl" | "gloo"
    kind: str  # "cuda" | "cpu"
    nproc: int
    torchrun: bool = False
    note: str = ""

    @property
    def is_interconnect(self) -> bool:
        return self.backend == "nccl"


GLOO_NOTE = N_("gloo between CPU processes on one machine: the figures measure host memory copies and local "
               "sockets, not a GPU interconnect")  # the pages translate it (ui.tr)


def under_torchrun() -> bool:
    """True when ``torchrun`` (or another launcher setting RANK/WORLD_SIZE/LOCAL_RANK) started us."""
    return all(k in os.environ for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK"))


def cuda_count() -> int:
    """CUDA devices this process can see (0 without torch CUDA). Before torch is imported (a page planning a run)
    it is read without it (``core.machine.gpu_presence``: the torch build, the driver's GPUs, CUDA_VISIBLE_DEVICES)."""
    import sys

    if "torch" not in sys.modules:
        from gemmlib.core.machine import gpu_presence

        return gpu_presence()[0]
    try:
        import torch
        return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0
    except Exception:  # noqa: BLE001 - a broken driver is "no GPU" for this purpose
        return 0


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def plan(nproc: int | None, backend: str = "auto", lim: safety.Limits | None = None) -> Plan:
    """Check the rank count and backend against this machine and the server's caps (InputError if not)."""
    lim = lim or safety.limits()
    b = str(backend or "auto").strip().lower()
    if b not in BACKENDS:
        raise InputError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if under_torchrun():
        world = int(os.environ["WORLD_SIZE"])
        if nproc is not None and int(nproc) != world:
            raise InputError(f"--nproc {nproc} differs from torchrun's WORLD_SIZE={world}; leave --nproc out "
                             "under torchrun")
        kind = "cuda" if b == "nccl" or (b == "auto" and cuda_count() > 0) else "cpu"
        be = "nccl" if kind == "cuda" else "gloo"
        return Plan(be, kind, world, torchrun=True, note="" if be == "nccl" else GLOO_NOTE)
    if nproc is None:
        gpus = cuda_count()
        nproc = gpus if gpus >= 2 and b != "gloo" else 2
    if isinstance(nproc, bool) or not isinstance(nproc, int):
        raise InputError(f"--nproc must be a whole number, got {nproc!r}")
    if nproc < 2:
        raise InputError(f"--nproc must be at least 2 (a collective needs two ranks), got {nproc}")
    gpus = cuda_count()
    if b == "nccl" or (b == "auto" and gpus >= 2):
        if gpus < nproc:
            raise InputError(f"--nproc {nproc} needs {nproc} CUDA GPUs for NCCL, this machine has {gpus}; "
                             f"use --nproc {gpus} or --backend gloo" if gpus >= 2 else
                             f"NCCL needs at least 2 CUDA GPUs, this machine has {gpus}; use --backend gloo")
        if nproc > lim.max_ranks:
            raise InputError(N_("--nproc {nproc} is above this server's cap of {cap} ranks (GEMM_MAX_RANKS)"),
                             nproc=nproc, cap=lim.max_ranks)
        return Plan("nccl", "cuda", nproc)
    if nproc > lim.max_ranks:
        raise InputError(N_("--nproc {nproc} is more ranks than this machine may start (cap {cap}, GEMM_MAX_RANKS; "
                            "{cores} CPU cores here)"), nproc=nproc, cap=lim.max_ranks, cores=usable_cpus())
    free = safety.available_memory("cpu")
    if free is not None and nproc * RANK_MEMORY_BYTES > 0.8 * free:
        raise InputError(N_("--nproc {nproc} needs about {need:.1f} GiB for the processes alone, {free:.1f} GiB is "
                            "free; use fewer ranks"), nproc=nproc, need=nproc * RANK_MEMORY_BYTES / 1024**3,
                         free=free / 1024**3)
    return Plan("gloo", "cpu", nproc, note=GLOO_NOTE)


# --------------------------------------------------------------------------- inside a rank
@dataclass(frozen=True)
class RankContext:
    """One rank's view: who it is, where it runs, and a few collective helpers."""

    rank: int
    world: int
    local_rank: int
    backend: str
    kind: str  # "cuda" | "cpu"
    device: str  # "cuda:3" | "cpu"
    device_name: str
    threads: int
    timeout_s: float

    def sync(self) -> None:
        if self.kind == "cuda":
            import torch
            torch.cuda.synchronize(self.device)

    def barrier(self) -> None:
        import torch.distributed as dist
        if self.kind == "cuda":
            dist.barrier(device_ids=[int(self.device.split(":")[1])])
        else:
            dist.barrier()
        self.sync()

    def _reduce(self, values: list[float], op: str) -> list[float]:
        import torch
        import torch.distributed as dist
        t = torch.tensor([float(v) for v in values], dtype=torch.float64, device=self.device)
        dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
        return [float(v) for v in t.cpu()]

    def max_over_ranks(self, values: list[float]) -> list[float]:
        """Element-wise maximum across ranks (every rank gets it)."""
        return self._reduce(values, "MAX")

    def all_true(self, flag: bool) -> bool:
        """True on every rank when ``flag`` is true on every rank."""
        return self._reduce([1.0 if flag else 0.0], "MIN")[0] == 1.0

    def from_rank0(self, value: float) -> float:
        """Rank 0's value on every rank (so that all ranks take the same branch)."""
        import torch
        import torch.distributed as dist
        t = torch.tensor([float(value)], dtype=torch.float64, device=self.device)
        dist.broadcast(t, 0)
        return float(t.item())


def _time_once(kind: str, fn: Callable[[], Any], inner: int) -> float:
    """Seconds per call of ``inner`` back-to-back calls: CUDA events on a GPU, perf_counter on a CPU."""
    import torch
    if kind == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3 / inner
    t0 = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - t0) / inner


def time_samples(ctx: RankContext, fn: Callable[[], Any], *, samples: int, inner: int = 1,
                 reset: Callable[[], Any] | None = None) -> list[float]:
    """Seconds per call of ``fn`` for each of ``samples`` samples, the slowest rank's.

    Each sample: ``reset()`` (not timed), a barrier so the ranks start together, then ``inner``
    back-to-back calls timed with CUDA events on a GPU (``time.perf_counter`` on a CPU, whose
    gloo collectives and kernels return when done), divided by ``inner``. The per-sample times of
    every rank are reduced with MAX: a collective is done when its slowest rank is. This is our
    choice, not nccl-tests' default: nccl-tests times many iterations per rank and *averages* the
    ranks' times (its ``-a`` option, default 1 = average; 3 = maximum), which reads a little faster
    when the ranks finish unevenly.
    ``torch.utils.benchmark`` is not used because it cannot put a barrier before each sample or
    reduce the times across ranks.
    """
    per: list[float] = []
    for _ in range(samples):
        if reset is not None:
            reset()
        ctx.barrier()
        per.append(_time_once(ctx.kind, fn, inner))
    return ctx.max_over_ranks(per)


def time_local(kind: str, fn: Callable[[], Any], *, samples: int, inner: int = 1) -> list[float]:
    """:func:`time_samples` for one rank alone (a one-rank baseline): the same timer, no barrier."""
    if kind == "cuda":
        import torch
        torch.cuda.synchronize()
    return [_time_once(kind, fn, inner) for _ in range(samples)]


def _device_name(kind: str, local_rank: int) -> str:
    if kind == "cuda":
        import torch
        return torch.cuda.get_device_name(local_rank)
    return cpu_model()


def _init_group(rank: int, world: int, local_rank: int, backend: str, kind: str, init_method: str,
                timeout_s: float, threads: int) -> RankContext:
    import torch
    import torch.distributed as dist
    if kind == "cuda":
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl", init_method=init_method, rank=rank, world_size=world,
                                timeout=timedelta(seconds=timeout_s), device_id=torch.device("cuda", local_rank))
        device = f"cuda:{local_rank}"
    else:
        torch.set_num_threads(threads)
        dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=world,
                                timeout=timedelta(seconds=timeout_s))
        device = "cpu"
    return RankContext(rank, world, local_rank, backend, kind, device, _device_name(kind, local_rank), threads,
                       timeout_s)


def _watch_parent(parent: int, started_by: int) -> None:
    """Exit this rank when the process that launched it (``parent``) or the one that forked it (``started_by``:
    the fork server, or ``parent`` itself when spawned) is gone (no orphans, even when blocked)."""
    while True:
        time.sleep(0.5)
        if os.getppid() != started_by:
            os._exit(3)
        try:
            os.kill(parent, 0)
        except ProcessLookupError:
            os._exit(3)
        except PermissionError:
            pass


def caller_state() -> dict:
    """What a rank takes from the caller at the launch rather than from the fork server's start: the
    environment (a test's or a page's settings made since) and the memory limits (a worker's allowance)."""
    import resource

    limits = {n: resource.getrlimit(getattr(resource, n)) for n in _LIMITS if hasattr(resource, n)}
    return {"env": dict(os.environ), "limits": limits}


def quiet_profiler() -> None:
    """Set :data:`QUIET_ENV` in this process where the caller's environment has no value of its own: called by a
    benchmark worker and a rank at their start, after the caller's environment is taken and before any profile."""
    for name, value in QUIET_ENV.items():
        os.environ.setdefault(name, value)


def take_caller_state(state: dict) -> None:
    import resource

    inf = resource.RLIM_INFINITY

    def lower(a: int, b: int) -> int:  # the smaller of two limits (RLIM_INFINITY: none)
        return b if a == inf else a if b == inf else min(a, b)

    os.environ.clear()
    os.environ.update(state["env"])
    for name, (soft, hard) in state["limits"].items():
        which = getattr(resource, name)
        cur_soft, cur_hard = resource.getrlimit(which)
        new_hard = lower(cur_hard, hard)
        new_soft = lower(lower(cur_soft, soft), new_hard)
        if (new_soft, new_hard) != (cur_soft, cur_hard):
            resource.setrlimit(which, (new_soft, new_hard))


def _one_line(e: BaseException) -> str:
    msg = " ".join(str(e).split())
    if len(msg) > 400:
        msg = msg[:400] + "…"
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__


def _rank_entry(index: int, world: int, worker: Callable, cfg: Any, plan_: Plan, init_method: str,
                conns: list, timeout_s: float, parent: int, caller: dict) -> None:
    """What each rank process runs (``torch.multiprocessing`` calls it with its index)."""
    conn = conns[index]
    for i, c in enumerate(conns):
        if i != index:
            c.close()
    take_caller_state(caller)
    quiet_profiler()
    threading.Thread(target=_watch_parent, args=(parent, os.getppid()), daemon=True, name="parent-watch").start()
    threads = max(1, usable_cpus() // world) if plan_.kind == "cpu" else 1
    initialized = False
    try:
        ctx = _init_group(index, world, index, plan_.backend, plan_.kind, init_method, timeout_s, threads)
        initialized = True
        conn.send(("ready",))
        report = _Reporter(index, lambda frac, text: conn.send(
            ("progress", frac, text if isinstance(text, Text) else str(text))),  # a Text keeps its message
            lambda obj: conn.send(("keep", obj)))
        out = worker(ctx, cfg, report)
        if index == 0:
            conn.send(("result", out))
        conn.send(("done",))
    except Exception as e:  # noqa: BLE001 - every failure goes to the parent, then this rank exits
        try:
            conn.send(("error", _one_line(e), traceback.format_exc(), isinstance(e, InputError)))
            conn.close()
        finally:
            os._exit(1)  # skip the process group's teardown: its peers may be gone or hung
    if initialized:
        import torch.distributed as dist
        dist.destroy_process_group()
    conn.close()


# --------------------------------------------------------------------------- the parent
def _stop(processes: list, grace_s: float = 2.0) -> None:
    """SIGTERM every rank still alive, then SIGKILL what is left after ``grace_s``; reap them all."""
    for p in processes:
        if p.is_alive():
            p.terminate()
    end = time.monotonic() + grace_s
    for p in processes:
        p.join(max(0.0, end - time.monotonic()))
    for p in processes:
        if p.is_alive():
            p.kill()
        p.join(5.0)


def _fmt_ranks(ranks: list[int]) -> str:
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(str(r) for r in ranks)


def run_ranks(worker: Callable[[RankContext, Any, Report], Any], cfg: Any, *, nproc: int | None = None,
              backend: str = "auto", timeout_s: float = 120.0, progress: Report | None = None,
              lim: safety.Limits | None = None, on_keep: Callable[[Any], None] | None = None) -> Any:
    """Run ``worker`` on ``nproc`` ranks and return rank 0's result (see the module's docstring).

    ``timeout_s`` bounds the process group's collectives and the whole run once every rank has
    joined the group (starting them has its own allowance, ``STARTUP_S``); past it every rank is
    stopped and a RankError says which ranks were still running. ``on_keep(obj)``: called in this
    process with every ``report.keep(obj)`` of rank 0, as it arrives.
    """
    if not timeout_s > 0:
        raise InputError(f"the timeout must be positive, got {timeout_s!r}")
    p = plan(nproc, backend, lim)
    if p.torchrun:
        return _run_here(worker, cfg, p, timeout_s, progress, on_keep)
    return _spawn(worker, cfg, p, timeout_s, progress, on_keep)


def _run_here(worker: Callable, cfg: Any, p: Plan, timeout_s: float, progress: Report | None,
              on_keep: Callable[[Any], None] | None = None) -> Any:
    import torch.distributed as dist
    rank, local = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", p.nproc))
    threads = max(1, usable_cpus() // local_world) if p.kind == "cpu" else 1
    ctx = _init_group(rank, p.nproc, local, p.backend, p.kind, "env://", timeout_s, threads)
    try:
        out = worker(ctx, cfg, _Reporter(rank, progress, on_keep))
    finally:
        dist.destroy_process_group()
    return out if rank == 0 else None


def start_fork_server() -> None:
    """Start this process's fork server (``multiprocessing``'s "forkserver", :data:`PRELOAD` imported in it) unless
    it is up, with SIGINT blocked in it. CPython's fork server ignores SIGINT only once its preload (torch's import,
    2-4 s) is done, and a terminal's Ctrl-C signals the whole process group: pressed in those seconds it killed the
    fork server with a KeyboardInterrupt traceback (and the runner then said it fell back to a new interpreter).
    Started with the signal blocked, the fork server holds it until it ignores it; the caller still gets its
    KeyboardInterrupt. Any thread may call it: the mask is the calling thread's, for the milliseconds of the spawn.
    The forks inherit the mask: a benchmark worker unblocks it (``worker.forked``); ranks are stopped by their
    launcher (:func:`_stop`), never by a Ctrl-C of their own."""
    if START_METHOD != "forkserver":
        return
    import signal
    from multiprocessing import forkserver, resource_tracker

    multiprocessing.get_context("forkserver").set_forkserver_preload(PRELOAD)  # read when it starts
    # multiprocessing's resource tracker, started with the fork server, unblocks SIGINT in its caller once it is
    # up, whatever the mask was: started first, it is up and leaves the mask alone.
    resource_tracker.ensure_running()
    if not hasattr(signal, "pthread_sigmask"):
        forkserver.ensure_running()
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        forkserver.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def stop_fork_server() -> None:
    """Kill this process's fork server (after a Ctrl-C: the command is going down). While it preloads it answers no
    one and would go on importing torch after this process is gone; a later start starts a new one."""
    import signal
    from multiprocessing import forkserver

    # multiprocessing has no public way to this: forkserver's module functions (ensure_running, connect_to_new_process,
    # set_forkserver_preload, get_inherited_fds) give neither the server's pid nor a stop (ForkServer._stop is private
    # too, and waits for a server that is still importing). So its private state is read, failing safe: where a Python
    # names it otherwise (no _forkserver, no _forkserver_pid, not a number) nothing is killed and the server ends on
    # its own once its preload is done (it sees this process gone); and a pid is killed only while it is this
    # process's own child, not yet reaped (os.waitid with WNOWAIT reaps nothing): never a stranger's reused pid.
    pid = getattr(getattr(forkserver, "_forkserver", None), "_forkserver_pid", None)
    if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0 or not _own_child(pid):
        return
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _own_child(pid: int) -> bool:
    """Whether ``pid`` is a child of this process that has not been reaped (alive, or a zombie): its pid is then not
    reused. Where ``os.waitid`` is missing (not Linux) the pid multiprocessing keeps is taken as it is."""
    if not (hasattr(os, "waitid") and hasattr(os, "WNOWAIT")):
        return True
    try:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except OSError:  # ChildProcessError: not our child, or already reaped
        return False
    return True


@contextmanager
def main_script_hidden() -> Iterator[None]:
    """Hide this process's ``__main__`` while the ranks are started.

    "spawn" and "forkserver" run the parent's main script again in every child (``multiprocessing``'s rule, for
    workers defined there). Streamlit runs each page *as* ``__main__``, so a rank would run the page
    again; an unguarded script would start ranks from its ranks. The workers live in importable
    modules, so the children need no main script: a stand-in without a file or spec tells spawn
    to import none.
    """
    real = sys.modules.get("__main__")
    stand_in = types.ModuleType("__main__")
    stand_in.__spec__ = None
    sys.modules["__main__"] = stand_in
    try:
        yield
    finally:
        if sys.modules.get("__main__") is stand_in:
            sys.modules["__main__"] = real


RANK_DIRS = "gemmlib-ranks-"  # the ranks' rendezvous folders in the OS temp dir: RANK_DIRS<launching pid>-<random>


def rank_dir_prefix(pid: int) -> str:
    """The prefix of the rendezvous folders a process ``pid`` launches ranks from. A benchmark worker killed
    mid-run (Stop, its time limit, a closed tab) never reaches the ``finally`` that removes its folder: the
    runner removes the folders its killed worker's pid named (:func:`remove_rank_dirs`)."""
    return f"{RANK_DIRS}{int(pid)}-"


WORKER_DIRS = "gemmlib-worker-"  # a benchmark worker's own temp folder: WORKER_DIRS<its pid>-<random>


def worker_dir_prefix(pid: int) -> str:
    """The prefix of the temp folder a benchmark worker ``pid`` makes its process's temp dir when it takes a run
    (``gemmlib.measure.worker``): what it and its ranks write there (multiprocessing's ``pymp-*`` folders, the
    ranks' rendezvous) goes with it when the runner reaps it, killed or not."""
    return f"{WORKER_DIRS}{int(pid)}-"


def sweep_dead_dirs() -> int:
    """Remove the worker and rendezvous folders of processes that are gone (a server stopped with its workers
    running never reaped them); how many."""
    import glob

    gone = 0
    for prefix in (WORKER_DIRS, RANK_DIRS):
        for d in glob.glob(os.path.join(tempfile.gettempdir(), prefix + "*")):
            pid = os.path.basename(d)[len(prefix):].split("-")[0]
            if not pid.isdigit() or os.path.exists(f"/proc/{pid}") or not os.path.exists("/proc/self"):
                continue  # an old name without a pid, a live process, or no /proc to ask
            shutil.rmtree(d, ignore_errors=True)
            gone += not os.path.exists(d)
    return gone


def remove_rank_dirs(pid: int) -> int:
    """Remove the temp folders process ``pid`` left in the temp dir (its own, :func:`worker_dir_prefix`, and its
    ranks' rendezvous folders, :func:`rank_dir_prefix`); how many."""
    import glob

    gone = 0
    for prefix in (worker_dir_prefix(pid), rank_dir_prefix(pid)):
        for d in glob.glob(os.path.join(tempfile.gettempdir(), prefix + "*")):
            shutil.rmtree(d, ignore_errors=True)
            gone += not os.path.exists(d)
    return gone


def _spawn(worker: Callable, cfg: Any, p: Plan, timeout_s: float, progress: Report | None,
           on_keep: Callable[[Any], None] | None = None) -> Any:
    import torch.multiprocessing as tmp

    mp = multiprocessing.get_context(START_METHOD)
    start_fork_server()  # with SIGINT blocked in it (a Ctrl-C in its first seconds)
    pipes = [mp.Pipe(duplex=False) for _ in range(p.nproc)]
    store_dir = tempfile.mkdtemp(prefix=rank_dir_prefix(os.getpid()))
    init_method = "file://" + os.path.join(store_dir, "store")
    readers = {r: i for i, (r, _) in enumerate(pipes)}
    procs: list = []
    ctx = None
    state: dict[str, Any] = {"result": None, "last": ""}
    errors: list[tuple[int, str, str, bool]] = []
    done: set[int] = set()
    joined: set[int] = set()  # ranks whose process group is up

    def handle(idx: int, msg: tuple) -> None:
        if msg[0] == "progress":
            state["last"] = msg[2]
            if progress is not None:
                progress(msg[1], msg[2])
        elif msg[0] == "result":
            state["result"] = msg[1]
        elif msg[0] == "keep":
            if on_keep is not None:
                on_keep(msg[1])
        elif msg[0] == "ready":
            joined.add(idx)
        elif msg[0] == "done":
            done.add(idx)
        elif msg[0] == "error":
            errors.append((idx, msg[1], msg[2], msg[3]))

    try:
        with main_script_hidden():
            ctx = tmp.start_processes(_rank_entry, args=(p.nproc, worker, cfg, p, init_method,
                                                         [w for _, w in pipes], timeout_s, os.getpid(),
                                                         caller_state()),
                                      nprocs=p.nproc, join=False, start_method=START_METHOD)
        procs = list(ctx.processes)
        for _, w in pipes:
            w.close()
        start_by = time.monotonic() + STARTUP_S + timeout_s  # start, import, then the group's rendezvous
        run_by: float | None = None  # timeout_s after every rank has joined the group
        while True:
            if run_by is None and len(joined) == p.nproc:
                run_by = time.monotonic() + timeout_s + GRACE_S
            deadline = start_by if run_by is None else run_by
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                alive = [i for i, pr in enumerate(procs) if pr.is_alive()]
                what = (f"the run did not finish within {timeout_s + GRACE_S:g} s of the ranks' start"
                        if run_by is not None
                        else f"the ranks did not start within {STARTUP_S + timeout_s:g} s ("
                             f"{_fmt_ranks(sorted(set(range(p.nproc)) - joined))} never joined the process group)")
                raise RankError(
                    f"{what} ({_fmt_ranks(alive) if alive else 'no rank'} still running"
                    + (f"; last step: {state['last']}" if state["last"] else "")
                    + "); every rank was stopped. A rank that hangs holds the others at their next "
                      "collective; give bigger runs a longer timeout", tuple(pr.pid for pr in procs))
            waitables = list(readers) + [pr.sentinel for pr in procs if pr.exitcode is None]
            ready = multiprocessing.connection.wait(waitables, timeout=min(remaining, 1.0))
            _read(readers, [r for r in ready if r in readers], handle)
            failed = [i for i, pr in enumerate(procs) if pr.exitcode not in (None, 0)]
            if errors or failed:
                _drain(readers, handle, 0.5)  # errors of ranks that failed at the same time
                failed = [i for i, pr in enumerate(procs) if pr.exitcode not in (None, 0)]  # and those that died meanwhile
                raise _failure(procs, errors, failed)
            if all(pr.exitcode == 0 for pr in procs):
                _drain(readers, handle, 5.0)  # the ranks are gone: what they sent is all in the pipes
                if errors:
                    raise _failure(procs, errors, [])
                if len(done) < p.nproc:
                    missing = [i for i in range(p.nproc) if i not in done]
                    raise RankError(f"{_fmt_ranks(missing)} exited without finishing its work (interrupted?)",
                                    tuple(pr.pid for pr in procs))
                return state["result"]
    except KeyboardInterrupt:  # Ctrl-C: the command stops now, and a fork server still importing torch with it
        stop_fork_server()
        raise
    finally:
        _stop(procs)
        for r in list(readers):
            r.close()
        if ctx is not None:
            for f in ctx.error_files:
                if f and os.path.exists(f):
                    os.unlink(f)
        shutil.rmtree(store_dir, ignore_errors=True)


def _read(readers: dict, ready: list, handle: Callable[[int, tuple], None]) -> None:
    for obj in ready:
        try:
            msg = obj.recv()
        except (EOFError, OSError):
            obj.close()
            del readers[obj]
            continue
        handle(readers[obj], msg)


def _drain(readers: dict, handle: Callable[[int, tuple], None], wait_s: float) -> None:
    """Read what the ranks still have to say, until every pipe is closed or ``wait_s`` passes."""
    end = time.monotonic() + wait_s
    while readers:
        ready = multiprocessing.connection.wait(list(readers), timeout=max(0.0, end - time.monotonic()))
        if not ready:
            return
        _read(readers, ready, handle)


def _failure(procs: list, errors: list, failed: list[int]) -> Exception:
    """The exception that tells what went wrong: the first rank's error, and who else was still running."""
    pids = tuple(pr.pid for pr in procs)
    alive = [i for i, pr in enumerate(procs) if pr.exitcode is None]
    reported = {i for i, *_ in errors}
    # a rank killed by a signal cannot report; the errors of the others are then most likely its consequence (their
    # peer closed the connection under them), so the killed rank is named first, whichever message arrived first
    killed = [i for i in failed if i not in reported and (procs[i].exitcode or 0) < 0]
    if errors and killed:
        idx, line, _, _ = errors[0]
        return RankError(f"{_death(procs, killed[0])}; {_fmt_ranks(sorted(reported))} failed after it "
                         f"(rank {idx}: {line}); every rank was stopped", pids)
    if errors:
        # a rank's own error first: a peer's lost connection (rank 0 blocked in a collective when rank 1 raised) can
        # arrive before the error that caused it
        errors = sorted(errors, key=lambda e: _peer_lost(e[1]))
        idx, line, tb, is_input = errors[0]
        if is_input:
            return InputError(line.split(": ", 1)[1] if ": " in line else line)
        others = sorted({i for i, *_ in errors[1:]} - {idx})
        extra = []
        if others:
            extra.append(f"{_fmt_ranks(others)} failed after it")
        if alive:
            extra.append(f"{_fmt_ranks(alive)} still running (a rank that hangs keeps the others waiting "
                         "until the process group's timeout)")
        return RankError(f"rank {idx} of {len(procs)} failed: {line}" + (f" ({'; '.join(extra)})" if extra else "")
                         + "; every rank was stopped", pids, tb)
    return RankError(f"{_death(procs, failed[0])}; every rank was stopped", pids)


_PEER_LOST = ("gloo/transport", "Connection closed by peer", "Connection reset by peer", "Broken pipe")


def _peer_lost(line: str) -> bool:
    """Whether a rank's error says only that a peer went away (gloo's transport errors, a closed connection)."""
    return any(s in line for s in _PEER_LOST)


def _death(procs: list, idx: int) -> str:
    """How rank ``idx`` ended without reporting an error: its exit status or the signal that killed it."""
    code = procs[idx].exitcode
    how = f"exit status {code}"
    if code is not None and code < 0:
        import signal
        try:
            how = f"signal {signal.Signals(-code).name}" + (" (out of memory?)" if -code == 9 else "")
        except ValueError:
            how = f"signal {-code}"
    return f"rank {idx} of {len(procs)} died with {how} without reporting an error"
