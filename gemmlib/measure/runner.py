"""Every benchmark in a worker process of its own, started by the server, the way batch systems run jobs.

``run(spec, config)`` (a benchmark's spec, ``gemmlib.measure.spec``, and its configuration):

1. ``plan.admit``: the spec's plan and the caps (bytes, largest CPU GEMM, time) refuse the run
   before anything is queued or allocated.
2. The machine's FIFO queue (``gemmlib.measure.runqueue``): waits for this run's turn, shared by
   every server process and the command line; ``on_wait(place)`` tells the caller where it stands.
3. A worker (``gemmlib.measure.worker``, its own session and process group) gets the request — the
   spec's name, the configuration and the caps, as JSON through ``gemmlib.core.codec`` — after it
   started. The worker is the spare (see below) when one is up, else a fresh one. It limits its own memory at its start-up footprint plus ``plan.memory_limit`` of the
   plan, and streams progress back (``on_progress(fraction or None, text)``; a step's text comes
   back as the message it was, a ``Text``: English as the worker wrote it, translated where a page
   shows it).
4. A hard wall-time limit: the run's time limit plus a short grace after the worker is ready; then
   the whole process group is killed (SIGKILL — killed, not asked). ``cancelled()`` (a closed
   session, a Stop) kills it the same way. Either way the run lock is released as soon as the
   worker is reaped, milliseconds later.
   Before it says it is ready the worker probes the machine's speed in the run's formats, plans the
   run again on it and refuses what cannot finish (``worker.check_speed``, issue 26 item 8); rows
   come back as they finish, so a run killed at its limit returns them (``Outcome.stopped`` says
   why, for a benchmark whose result is its rows). Each run's wall time against that estimate is
   learnt (``core.speed.record_ratio``; a kill counts as at least that long).
5. The result comes back typed: the spec's result type, rebuilt and checked by the codec, with the
   worker's measured peak RSS: the kernel's high-water mark of its own address space (``VmHWM``,
   polled from /proc while it runs and read by the worker as it ends; ``os.wait4``'s ``ru_maxrss``
   would also count the server's pages shared between fork and exec).

The spare: each server process keeps at most one started worker per device kind ("cpu", "cuda"),
warmed up (torch imported, its CPU thread pool up) and waiting for a request on its stdin, so a run
starts at once instead of paying the ~3.5 s of a fresh interpreter importing torch. It is started
lazily: the first run of a process starts its own worker (nothing is started at import or at a
page's render, so a command, a test or a server that never runs a benchmark never pays a torch
process), and after every run that wants it (``warm=True``, the default; the command line passes
False: it runs one benchmark and exits) a new spare is started behind it — once the run has ended,
so that its import never competes with a timing. A handed spare is a worker like any other: its own
process group, its memory limit set from the run's plan after the request came, SIGKILLed at its
limit or cancel, dead with its server (stdin end-of-file, ``PR_SET_PDEATHSIG`` — the spares are
started from one long-lived thread, because the kernel's signal follows the thread that forked, not
the process). The spare holds no CUDA context or GPU memory before its request (its warm-up is CPU
only). A spare that died, or was started with other code (the package's files changed), another
environment (``GEMM_CACHE_DIR``, ``GEMM_POLICY_FILE``, any variable) or another policy file, is
killed and replaced by a fresh worker.

How a worker starts: forked from this process's fork server (``multiprocessing``'s "forkserver", the one
``gemmlib.measure.launch`` starts its ranks from: a clean single-threaded process that imported torch once,
when this process first needed it), so a fresh worker costs a fork (~0.2 s to a small run's first progress
line) instead of a new interpreter importing torch (~1.5–4 s). The fork takes this process's environment,
memory limits and allocator settings of the moment (``worker.forked``), names itself ``gemm-worker``, leads
a session of its own, and dies with the fork server, which dies with this process; a fork after the
package's files changed imports today's code. Its exit status comes from the fork server (it is not this
process's child). Where there is no fork server, or with ``GEMM_FORK_WORKER=0``, each worker is a new
interpreter (``python -m gemmlib.measure.worker``) as before. :func:`worker_pids` finds either kind.

Refusals, kills and cancels are InputErrors with a sentence for the visitor (``RunStopped``); a
crash inside the worker is a ``WorkerError`` carrying the worker's traceback for the log.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import multiprocessing
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gemmlib.core import codec, policy
from gemmlib.core import format as fmt
from gemmlib.core.errors import InputError
from gemmlib.core.files import private_dir
from gemmlib.core.i18n import N_, Text
from gemmlib.core.results import BenchResult
from gemmlib.measure import launch, plan, runqueue, safety, worker
from gemmlib.measure.plan import Plan
from gemmlib.measure.spec import BenchSpec

STARTUP_TIMEOUT_S = 120.0  # importing torch on a loaded machine; not counted in the run's time limit


class RunStopped(InputError):
    """The run was stopped before it finished: its time or memory limit, or a cancel."""


class RunCancelled(RunStopped):
    """The caller cancelled the run (Stop pressed, session closed)."""


class WorkerError(RuntimeError):
    """The worker failed in a way that is a bug, not bad input; ``traceback`` is the worker's."""

    def __init__(self, message: str, traceback: str = "") -> None:
        super().__init__(message)
        self.traceback = traceback


@dataclass(frozen=True)
class Outcome:
    result: Any  # the benchmark's result, of its spec's result type
    plan: Plan
    peak_rss_bytes: int  # the worker's peak resident memory: its VmHWM (polled, and reported at its end)
    baseline_rss_bytes: int  # the worker's resident memory when it was ready to run
    seconds: float  # from the hand-over of the request (a fresh worker: its start) to the worker's exit
    queued_s: float  # time spent waiting for the turn
    pid: int = 0  # the worker's process id
    spare: bool = False  # whether the worker was a spare started before this run asked
    stopped: Text | None = None  # killed at its time limit: why; ``result`` then holds the rows it finished


def hard_limit_s(lim: safety.Limits, p: Plan | None = None) -> float:
    """Seconds after which a running worker is killed: the run's time limit and a short grace
    (the benchmarks skip their remaining rows at the limit itself and return what they have); a
    multi-rank run adds, per launch, the start-up of its ranks (``launch.STARTUP_S``) and the minute
    its collectives get past the limit (their own clean-up speaks first, ``launch.GRACE_S``)."""
    base = lim.time_limit_s if p is None else plan.time_limit_s(p, lim)
    extra = 0.0 if p is None else p.launches * (launch.STARTUP_S + launch.GRACE_S + 60.0)
    return base + max(2.0, 0.1 * lim.time_limit_s) + extra


def _env() -> dict[str, str]:
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("PYTHONUNBUFFERED", "1")
    # glibc hands a thread a new malloc arena whenever its own is busy; on a loaded machine the
    # benchmark's threads then spread over many arenas and freed blocks stop being reused, which
    # measured up to 2x the resident memory of the same run on an idle machine. Two arenas keep the
    # worker's footprint what its estimate says, whatever the load.
    env.setdefault("MALLOC_ARENA_MAX", "2")
    # glibc also moves its mmap threshold with what was freed before (from 128 KiB up to 32 MiB), so
    # whether a freed 16 MiB buffer went back to the system depended on the run's history and on which
    # arena served it: the same int8 run measured 420 or 658 MiB above its baseline. A fixed threshold
    # (plan.MMAP_THRESHOLD) makes every large buffer its own mapping, returned when freed, so the
    # worker's footprint is what is alive, the same on every run.
    env.setdefault("MALLOC_MMAP_THRESHOLD_", str(plan.MMAP_THRESHOLD))
    return env


def _kill(proc: subprocess.Popen | _Forked) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def _hwm(pid: int) -> int:
    """The worker's peak resident memory so far (VmHWM of /proc/<pid>/status: the kernel's high-water
    mark of that process's own address space), 0 if unknown."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def _reap(proc: subprocess.Popen | _Forked, timeout_s: float = 10.0) -> tuple[int | None, int]:
    """(exit code or -signal, peak RSS bytes per os.wait4) of the worker, reaped, and the ranks' rendezvous
    folders it left in the temp dir removed (a worker killed mid-run never reaches its own clean-up).

    wait4's ``ru_maxrss`` also counts the server's own pages the child shared between fork and exec,
    so it is at least the server's size: the peak that counts is :func:`_hwm`'s, taken while it runs."""
    try:
        return _reap_only(proc, timeout_s)
    finally:
        launch.remove_rank_dirs(proc.pid)


def _reap_only(proc: subprocess.Popen | _Forked, timeout_s: float) -> tuple[int | None, int]:
    if isinstance(proc, _Forked):
        return proc.reap(timeout_s), 0
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        except ChildProcessError:
            return proc.returncode, 0
        if pid:
            code = os.waitstatus_to_exitcode(status)
            proc.returncode = code
            rss = int(ru.ru_maxrss) * (1 if sys.platform == "darwin" else 1024)
            return code, rss
        if time.monotonic() > deadline:
            _kill(proc)
            deadline = time.monotonic() + timeout_s
        time.sleep(0.005)


@dataclass
class _Worker:
    """A started worker: its process, the read end of its message pipe, what it was started with."""

    proc: subprocess.Popen | _Forked
    fd: int
    key: tuple
    buf: bytes = b""
    started: bool = False  # its "started" line was read (it waits for a request)
    closed: bool = field(default=False, repr=False)


_SPARES: dict[str, _Worker] = {}  # device kind -> the spare, at most one
# (device kind, whether a spare was handed) -> seconds from the hand-over to the worker's "ready" line in the
# last such run here: a fresh worker's is its start-up (importing torch, the benchmark's modules), a spare's
# only the request's own set-up.
_STARTED: dict[tuple[str, bool], float] = {}
FRESH_START_S = 4.0  # before one was measured here: a fresh worker's start-up, as measured on the 2-core CI
# machine (a median 3.75 s to a small run's first progress line, issue 23)
SPARE_START_S = 0.1  # a warm spare's hand-over before one was measured here (bench_speed.py: 8–18 ms)


def start_estimate(device: str) -> tuple[float, bool]:
    """(seconds until a run's worker is ready, whether a warm spare is waiting for it): the spare's hand-over
    when one is up for ``device`` (and spares are on), else a fresh worker's start-up, as the last such run
    here took (:data:`FRESH_START_S` / :data:`SPARE_START_S` before any did)."""
    device = "cuda" if str(device).startswith("cuda") else str(device)
    warm = os.environ.get("GEMM_SPARE_WORKER", "1") != "0" and spare_pid(device) is not None
    return _STARTED.get((device, warm), SPARE_START_S if warm else FRESH_START_S), warm
_LOCK = threading.Lock()
# Every worker is started from this one long-lived thread: PR_SET_PDEATHSIG fires when the thread
# that forked the worker ends, and a page's script thread ends after each rerun.
_STARTER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gemm-worker-start")


def _code_stamp() -> tuple[int, int]:
    """(newest modification time, number) of the package's Python files: a spare started before an edit is stale."""
    newest, n = 0, 0
    for f in Path(__file__).resolve().parents[1].rglob("*.py"):
        with contextlib.suppress(OSError):
            newest = max(newest, f.stat().st_mtime_ns)
            n += 1
    return newest, n


def _policy_stamp() -> tuple | None:
    try:
        path, _machine = policy.policy_file()
    except InputError as e:  # a broken policy: the run is refused elsewhere; a spare is stale for it
        return ("broken", str(e))
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return (str(path), None)
    return (str(path), st.st_ino, st.st_size, st.st_mtime_ns)


def _key(device: str, env: dict[str, str]) -> tuple:
    return (device, sys.executable, tuple(sorted(env.items())), _code_stamp(), _policy_stamp())


class _Forked:
    """A worker forked by this process's fork server, with what the runner uses of a ``Popen``: its pid, its
    stdin (the request pipe's write end), ``poll``/``returncode`` (the exit status the fork server reports)
    and ``kill``. It is not this process's child: :func:`_reap` waits for it through the fork server."""

    def __init__(self, process: Any, stdin: Any) -> None:
        self.process = process
        self.pid: int = process.pid
        self.stdin = stdin
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.process.exitcode
        return self.returncode

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)

    def reap(self, timeout_s: float) -> int | None:
        """Wait for the exit (SIGKILLed every ``timeout_s`` it takes) and release the fork server's pipe."""
        while self.poll() is None:
            self.process.join(timeout_s)
            if self.poll() is None:
                self.kill()
        with contextlib.suppress(ValueError):
            self.process.close()
        return self.returncode


def forking() -> bool:
    """Whether workers are forked from this process's fork server (POSIX, and ``GEMM_FORK_WORKER`` not "0")
    rather than started as a fresh interpreter each."""
    return launch.START_METHOD == "forkserver" and os.environ.get("GEMM_FORK_WORKER", "1") != "0"


def _fork_state(key: tuple, env: dict[str, str]) -> dict:
    """What a forked worker takes from this process at its start (``worker.forked``): the environment a
    started one would get, this process's memory limits, the allocator settings that environment names
    (glibc read them at the fork server's start, not at the fork), the package's root first on the path and
    the code stamp of ``key`` (its newest file: the fork server's preloaded modules are stale if it is newer)."""
    state = launch.caller_state()
    state["env"] = env
    state["code_newest_ns"] = key[3][0]

    def number(name: str, default: int) -> int:
        try:
            return int(env.get(name, default))
        except ValueError:
            return default

    state["arena_max"] = number("MALLOC_ARENA_MAX", 8 * (os.cpu_count() or 1))  # glibc's own default: 8 per core
    state["mmap_threshold"] = number("MALLOC_MMAP_THRESHOLD_", plan.MMAP_THRESHOLD)
    state["sys_path_first"] = [str(Path(__file__).resolve().parents[2])]
    return state


def _fork(key: tuple, env: dict[str, str], spare: bool = False) -> _Worker:
    """A worker forked from this process's fork server (``launch``'s, torch imported there once): its
    request pipe and its message pipe passed as file descriptors, its own session, the same
    ``worker.main`` as a started one."""
    from multiprocessing.connection import Connection

    mp = multiprocessing.get_context("forkserver")
    launch.start_fork_server()  # torch imported there once; SIGINT blocked in it (a Ctrl-C in its first seconds)
    req_r, req_w = os.pipe()
    msg_r, msg_w = os.pipe()
    ends = (Connection(req_r, writable=False), Connection(msg_w, readable=False))
    try:
        process = mp.Process(target=worker.forked, args=(*ends, spare, _fork_state(key, env)), name=worker.NAME)
        with launch.main_script_hidden():
            process.start()
    except BaseException:
        os.close(req_w)
        os.close(msg_r)
        raise
    finally:
        for end in ends:
            end.close()
    return _Worker(_Forked(process, os.fdopen(req_w, "wb")), msg_r, key)  # the pipe's end, closed with the worker


_SWEPT: list[bool] = []  # whether this process has removed the temp folders of workers gone before it


def _spawn(key: tuple, env: dict[str, str], spare: bool = False, abort: threading.Event | None = None) -> _Worker:
    """A worker: forked from the fork server, or started as a new interpreter where that cannot be. ``abort``
    set: its caller was interrupted (Ctrl-C) while it started; a failed fork then starts nothing else."""
    if not _SWEPT:
        _SWEPT.append(True)
        launch.sweep_dead_dirs()  # a server stopped with its workers running never reaped them
    if forking():
        try:
            return _fork(key, env, spare)
        except (OSError, EOFError) as e:  # no fork server could be started or reached: a started worker instead
            if abort is not None and abort.is_set():
                raise  # the caller is gone (Ctrl-C stopped the fork server): nothing to fall back to, nothing to say
            print(f"gemmlib: a forked benchmark worker could not be started ({type(e).__name__}: {e}); "
                  "starting a new interpreter instead", file=sys.stderr)
    if abort is not None and abort.is_set():
        raise WorkerError("the run was interrupted while its worker started")
    r, w = os.pipe()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "gemmlib.measure.worker", str(w)] + (["--spare"] if spare else []),
                                stdin=subprocess.PIPE,
                                stdout=sys.stderr.fileno() if _has_fileno(sys.stderr) else subprocess.DEVNULL,
                                pass_fds=(w,), start_new_session=True, env=env, close_fds=True)
    except BaseException:
        os.close(r)
        raise
    finally:
        os.close(w)
    return _Worker(proc, r, key)


def _start(key: tuple, env: dict[str, str]) -> _Worker:
    """A fresh worker, started in the starter thread. Interrupted while it starts (Ctrl-C: a KeyboardInterrupt in
    this, the main thread), the command stops at once: the fork server still starting (importing torch) is killed,
    so neither the exit (which joins the starter thread) nor a process is left waiting for it, and a worker that
    comes up all the same is killed as it arrives."""
    abort = threading.Event()
    started = _STARTER.submit(_spawn, key, env, False, abort)
    try:
        return started.result()
    except BaseException as e:
        abort.set()
        started.add_done_callback(_discard_late)
        if isinstance(e, KeyboardInterrupt):
            launch.stop_fork_server()
        raise


def _discard_late(started: Any) -> None:
    """A worker whose caller left while it started: killed and reaped."""
    with contextlib.suppress(BaseException):
        _discard(started.result())


def _discard(w: _Worker) -> None:
    """Kill a worker's process group, close its pipes and reap it."""
    if w.closed:
        return
    w.closed = True
    if w.proc.returncode is None:
        _kill(w.proc)
    with contextlib.suppress(OSError):
        os.close(w.fd)
    with contextlib.suppress(OSError, ValueError, AttributeError):
        w.proc.stdin.close()
    _reap(w.proc)


def _usable(w: _Worker, key: tuple) -> bool:
    return not w.closed and w.proc.poll() is None and w.key == key


def _take(device: str, env: dict[str, str]) -> tuple[_Worker, bool]:
    """(the worker for the next run, whether it was the spare): the spare of ``device`` if it is alive
    and current, else a fresh worker (a dead or stale spare is killed and reaped)."""
    key = _key(device, env)
    with _LOCK:
        w = _SPARES.pop(device, None)
    if w is not None:
        if _usable(w, key):
            return w, True
        _discard(w)
    return _start(key, env), False


def _refill(device: str, env: dict[str, str]) -> None:
    """Start the spare of ``device`` unless a current one is up (runs in the starter thread)."""
    key = _key(device, env)
    with _LOCK:
        old = _SPARES.get(device)
        if old is not None and _usable(old, key):
            return
        _SPARES.pop(device, None)
    if old is not None:
        _discard(old)
    w = _spawn(key, env, spare=True)
    with _LOCK:
        other = _SPARES.get(device)
        if other is None:
            _SPARES[device] = w
            return
    _discard(w)  # another one got there first


def prestart(device: str = "cpu", *, wait_s: float | None = None) -> int:
    """Make sure a current spare of ``device`` is up (started if needed) and return its pid; with
    ``wait_s``, wait up to that long until it warmed up (its "started" line came), for a benchmark that
    times a click on a server that has been up a while. A server does not call this: spares come
    behind runs (see the module docstring)."""
    env = _env()
    _STARTER.submit(_refill, device, env).result()
    with _LOCK:
        w = _SPARES.get(device)
    if w is None:
        raise WorkerError("no spare worker could be started")
    if wait_s is not None:
        _wait_started(w, wait_s)
    return w.proc.pid


def _wait_started(w: _Worker, wait_s: float) -> None:
    end = time.monotonic() + wait_s
    while not w.started and time.monotonic() < end:
        ready, _, _ = select.select([w.fd], [], [], min(0.1, max(0.0, end - time.monotonic())))
        if not ready:
            continue
        chunk = os.read(w.fd, 1 << 16)
        if not chunk:
            return
        w.buf += chunk
        head, sep, rest = w.buf.partition(b"\n")
        if sep and json.loads(head).get("t") == "started":
            w.started, w.buf = True, rest


def spare_pid(device: str = "cpu") -> int | None:
    """The pid of the spare of ``device`` now (None when there is none)."""
    with _LOCK:
        w = _SPARES.get(device)
    return None if w is None else w.proc.pid


def worker_pids(parent: int | None = None) -> list[int]:
    """PIDs of the live (not zombie) benchmark workers that process ``parent`` (default: this one) started:
    its children named ``worker.NAME`` (or started as ``python -m gemmlib.measure.worker``), and those its
    fork server forked for it (Linux's /proc; [] elsewhere)."""
    parent = os.getpid() if parent is None else parent
    procs: dict[int, tuple[int, bool]] = {}  # pid -> (parent pid, a live worker)
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            is_worker = (d / "comm").read_text().strip() == worker.NAME or \
                b"gemmlib.measure.worker" in (d / "cmdline").read_bytes()
        except OSError:
            continue
        procs[int(d.name)] = (int(fields[1]), is_worker and fields[0] != "Z")
    return sorted(pid for pid, (ppid, live) in procs.items()
                  if live and (ppid == parent or procs.get(ppid, (0, False))[0] == parent))


def stop_spares() -> None:
    """Kill every spare (at the interpreter's exit; tests)."""
    with _LOCK:
        spares = list(_SPARES.values())
        _SPARES.clear()
    for w in spares:
        _discard(w)


atexit.register(stop_spares)


def run(spec: BenchSpec, config: Any, lim: safety.Limits | None = None, *, admitted: Plan | None = None,
        owner: str | None = None, on_wait: Callable[[runqueue.Place], None] | None = None,
        on_progress: Callable[[float | None, str], None] | None = None,
        cancelled: Callable[[], str | None] | None = None, tick: Callable[[], None] | None = None,
        queue: runqueue.Queue | None = None, queue_timeout_s: float | None = None,
        poll_s: float = 0.1, warm: bool = True, visitor: runqueue.Visitor | None = None,
        check_speed: bool = True) -> Outcome:
    """Admit, queue, run ``config`` of ``spec`` in a worker and return its result (see the module
    docstring). ``admitted``: the plan ``plan.admit`` already gave for this config (else admitted here).

    ``cancelled()`` returns a reason to stop (or None); ``tick()`` is called on every poll while
    queued and running (what it raises stops the run and leaves the queue). ``warm``: take the
    spare and start a new one behind the run (False: a fresh worker, and none left behind).
    ``visitor``: a page's visitor (``runqueue.Visitor``): refused (``runqueue.VisitorLimit``) before
    it takes a place when it already has a run queued or running, or its address as many as the
    policy allows.
    ``GEMM_SPARE_WORKER=0`` in the environment turns the spare off for the whole process (a test
    suite whose every test has its own cache folder would only start spares to throw them away).
    """
    warm = warm and os.environ.get("GEMM_SPARE_WORKER", "1") != "0"
    lim = lim or safety.limits()
    # The run keeps what it learns in the cache folder (core.speed): a misconfigured folder is the admin's error,
    # said before the plan reads the folder's measured rates (which would warn about the same folder first).
    private_dir()
    p = admitted if admitted is not None else plan.admit(spec, config, lim)
    q = queue or runqueue.default_queue()
    t0 = time.monotonic()

    def check() -> None:
        if tick is not None:
            tick()
        if cancelled is not None:
            why = cancelled()
            if why:
                raise RunCancelled(why)

    with q.turn(owner or spec.describe(config), on_wait=on_wait, tick=check, poll_s=poll_s,
                timeout_s=queue_timeout_s, visitor=visitor, seconds=p.seconds + start_estimate(config.device)[0]):
        queued = time.monotonic() - t0
        return _run_worker(spec, config, lim, p, on_progress, check, poll_s, queued, warm, check_speed)


def request_line(spec: BenchSpec, config: Any, lim: safety.Limits, p: Plan, check_speed: bool = True) -> bytes:
    """What the worker reads: one JSON line (the codec's forms of the config and the caps)."""
    extra_host, extra_device = plan.memory_limit(p, config.device)
    return (json.dumps({"v": codec.VERSION, "bench": spec.name, "config": codec.encode(config),
                        "limits": codec.encode(lim), "extra_host": extra_host, "extra_device": extra_device,
                        "time_limit_s": plan.time_limit_s(p, lim), "check_speed": check_speed},
                       allow_nan=False) + "\n").encode("utf-8")


STOPPED_KEPT = N_("stopped after {seconds:.0f} s: this server's time limit is {limit:g} s per run (GEMM_TIME_LIMIT_S) "
                  "and one step of this run did not finish in time; the {n} rows it finished before are shown — "
                  "choose smaller sizes for the rest")
MIN_LEARN_S = 2.0  # runs shorter than this (estimate and wall time) are start-up, not speed: not learnt from


def _learn(spec: BenchSpec, device: str, planned: tuple[float, float] | None, wall_s: float | None,
           limit_s: float, at_least: bool = False) -> None:
    """Fold a run's wall time against the estimate the worker checked (less the ratio already in
    it) into ``core.speed``'s ratio for this benchmark and device."""
    from gemmlib.core import speed

    if planned is None or wall_s is None:
        return
    est, scale = planned
    raw = est / max(scale, 1e-9)
    if raw <= 0 or max(raw, wall_s) < MIN_LEARN_S:
        return
    speed.record_ratio(spec.name, device, wall_s / raw, at_least=at_least or wall_s >= 0.9 * limit_s)


def _run_worker(spec: BenchSpec, config: Any, lim: safety.Limits, p: Plan,
                on_progress: Callable[[float | None, str], None] | None, check: Callable[[], None],
                poll_s: float, queued: float, warm: bool = True, check_speed: bool = True,
                retry: bool = False) -> Outcome:
    request = request_line(spec, config, lim, p, check_speed)
    env = _env()
    device = str(config.device)
    worker, spare = _take(device, env) if warm and not retry else (_start(_key(device, env), env), False)
    try:
        assert worker.proc.stdin is not None
        worker.proc.stdin.write(request)
        worker.proc.stdin.flush()  # stays open: its end-of-file tells the worker that the server died
    except (BrokenPipeError, OSError):
        if not spare:
            _discard(worker)
            raise
        _discard(worker)  # the spare died just before its hand-over: a fresh worker instead
        worker, spare = _start(_key(device, env), env), False
        assert worker.proc.stdin is not None
        worker.proc.stdin.write(request)
        worker.proc.stdin.flush()
    proc, r = worker.proc, worker.fd
    started = time.monotonic()  # the hand-over: a spare's start-up before it is not this run's
    result: dict | None = None
    error: dict | None = None
    ready_at: float | None = None
    baseline = 0
    hwm = 0  # the worker's own VmHWM, polled from /proc while it runs
    buf = worker.buf
    kept: list = []  # rows the worker finished (``Deadline.keep``), as they came
    planned: tuple[float, float] | None = None  # (the worker's checked estimate, the ratio in it)
    killed_after: float | None = None
    try:
        eof = False
        while not eof:
            check()
            now = time.monotonic()
            if ready_at is None and now - started > STARTUP_TIMEOUT_S:
                raise RunStopped(N_("the benchmark worker did not start within {seconds:.0f} s; the server is "
                                    "overloaded, try again in a moment"), seconds=STARTUP_TIMEOUT_S)
            if ready_at is not None and now - ready_at > hard_limit_s(lim, p):
                killed_after = now - ready_at
                break  # killed below (finally), then what it finished is returned or the stop explained
            ready, _, _ = select.select([r], [], [], poll_s)
            hwm = max(hwm, _hwm(proc.pid))
            if not ready:
                continue
            chunk = os.read(r, 1 << 20)
            if not chunk:
                eof = True
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                if not line.strip():
                    continue
                msg = json.loads(line)
                t = msg.get("t")
                if t == "ready":
                    ready_at = time.monotonic()
                    _STARTED[(device, spare)] = ready_at - started  # what the next estimate says it takes
                    baseline = int(msg.get("rss") or 0)
                    if msg.get("planned_s") is not None:
                        planned = (float(msg["planned_s"]), float(msg.get("scale") or 1.0))
                elif t == "rows":
                    with contextlib.suppress(codec.CodecError):
                        kept.extend(codec.decode(list[BenchResult], msg.get("rows"), "rows"))
                elif t == "progress" and on_progress is not None:
                    on_progress(msg.get("f"), _text(msg.get("text")))
                elif t == "result":
                    result = msg
                elif t == "error":
                    error = msg
    finally:
        if proc.returncode is None and (result is None and error is None):
            _kill(proc)
        worker.closed = True
        with contextlib.suppress(OSError):
            os.close(r)
        with contextlib.suppress(OSError, ValueError):
            proc.stdin.close()
        code, _forked_peak = _reap(proc)
        if warm:  # the spare behind this run, started now that nothing is timed
            _STARTER.submit(_refill, device, env)
    if spare and ready_at is None and result is None and error is None and killed_after is None:
        # The spare died before it took the request (killed while idle: a multi-threaded process shows as a
        # zombie before waitpid can reap it, so _usable could not tell): the run again in a fresh worker, once.
        return _run_worker(spec, config, lim, p, on_progress, check, poll_s, queued, warm, check_speed, retry=True)
    seconds = time.monotonic() - started
    peak = max(hwm, int((result or {}).get("hwm") or 0))
    if killed_after is not None:
        _learn(spec, device, planned, killed_after, lim.time_limit_s, at_least=True)
        if kept and spec.result == list[BenchResult]:
            why = Text(STOPPED_KEPT, seconds=killed_after, limit=lim.time_limit_s, n=len(kept))
            return Outcome(result=kept, plan=p, peak_rss_bytes=peak, baseline_rss_bytes=baseline, seconds=seconds,
                           queued_s=queued, pid=proc.pid, spare=spare, stopped=why)
        raise RunStopped(N_("stopped after {seconds:.0f} s: this server's time limit is {limit:g} s per run "
                            "(GEMM_TIME_LIMIT_S) and one step of this run did not finish in time; nothing it "
                            "measured came back — choose smaller sizes"), seconds=killed_after, limit=lim.time_limit_s)
    if error is not None:
        kind = error.get("kind")
        if kind == "input":
            refusal = _input_error(error)
            est = refusal.params.get("seconds") if isinstance(getattr(refusal, "params", None), dict) else None
            if isinstance(est, (int, float)) and "limit" in refusal.params:  # refused on this machine's speed now:
                _learn(spec, device, planned, float(est), lim.time_limit_s)  # its estimate is what it learnt
            raise refusal
        if kind == "memory":
            raise RunStopped(N_("this run needed more memory than its estimate allows ({estimate} estimated); it "
                                "was stopped — choose smaller sizes"), estimate=fmt.nbytes(p.bytes))
        raise WorkerError(f"the benchmark failed: {error.get('type', 'error')}: {error.get('message', '')}",
                          error.get("traceback", ""))
    if result is None:
        if code is not None and code < 0:
            name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
            raise RunStopped(N_("the benchmark worker was killed ({signal}) before it finished — most likely the "
                                "machine ran out of memory; choose smaller sizes"), signal=name)
        raise WorkerError(f"the benchmark worker exited with status {code} without a result")
    try:
        value = codec.unpack(spec.name, spec.result, result.get("result"))
    except codec.CodecError as e:
        raise WorkerError(f"the benchmark's result could not be read: {e}") from None
    run_s = result.get("run_s")
    _learn(spec, device, planned, float(run_s) if isinstance(run_s, (int, float)) else None, lim.time_limit_s)
    return Outcome(result=value, plan=p, peak_rss_bytes=peak, baseline_rss_bytes=baseline, seconds=seconds,
                   queued_s=queued, pid=proc.pid, spare=spare)


def _text(data: Any) -> str:
    """A step's text as the worker sent it (a message keeps its template and values)."""
    try:
        return codec.decode(str, data, "progress")
    except codec.CodecError:
        return str(data)


ERRORS: dict[str, type[InputError]] = {"InputError": InputError, "Refused": safety.Refused}


def _input_error(error: dict) -> InputError:
    """The worker's InputError, of its class, with its template and values (a page translates it)."""
    try:
        text = codec.decode(Text, error.get("message"), "error")
    except codec.CodecError:
        return InputError(str(error.get("message") or "refused"))
    msg = text.msg
    template, params = (msg.template, msg.params) if hasattr(msg, "template") else (str(text), {})
    return ERRORS.get(str(error.get("class")), InputError)(template, **params)


def _has_fileno(f: Any) -> bool:
    try:
        f.fileno()
        return True
    except (AttributeError, OSError, ValueError):
        return False
