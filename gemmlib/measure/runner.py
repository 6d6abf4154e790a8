"""Every benchmark in a worker process of its own, started by the server, the way batch systems run jobs.

``run(job)``:

1. ``jobs.admit``: the caps (bytes, largest CPU GEMM, time) refuse the job before anything is
   queued or allocated.
2. The machine's FIFO queue (``gemmlib.measure.runqueue``): waits for this job's turn, shared by
   every server process and the command line; ``on_wait(place)`` tells the caller where it stands.
3. A worker (``python -m gemmlib.measure.worker``, its own process group) gets the job and the
   caps. It limits its own memory at its start-up footprint plus ``jobs.memory_limit`` of the
   plan, and streams progress back (``on_progress(fraction or None, text)``; a step's message comes
   back as a ``Text``: English as the worker wrote it, translated where a page shows it).
4. A hard wall-time limit: the caps' time limit plus a short grace after the worker is ready; then
   the whole process group is killed (SIGKILL — killed, not asked). ``cancelled()`` (a closed
   session, a Stop) kills it the same way. Either way the run lock is released as soon as the
   worker is reaped, milliseconds later.
5. The result comes back as data (``BenchResult.to_dict()`` rows or a dict), with the worker's
   measured peak RSS: the kernel's high-water mark of its own address space (``VmHWM``, polled from
   /proc while it runs and read by the worker as it ends; ``os.wait4``'s ``ru_maxrss`` would also count
   the server's pages shared between fork and exec).

Refusals, kills and cancels are InputErrors with a sentence for the visitor (``RunStopped``); a
crash inside the worker is a ``WorkerError`` carrying the worker's traceback for the log.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_
from gemmlib.core.units import fmt_bytes
from gemmlib.measure import jobs, runqueue, safety

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
    data: Any  # the job's result as data
    plan: jobs.Plan
    peak_rss_bytes: int  # the worker's peak resident memory: its VmHWM (polled, and reported at its end)
    baseline_rss_bytes: int  # the worker's resident memory when it was ready to run
    seconds: float  # from the worker's start to its exit
    queued_s: float  # time spent waiting for the turn


def hard_limit_s(lim: safety.Limits, job: jobs.Job | None = None) -> float:
    """Seconds after which a running worker is killed: the run's time limit and a short grace
    (the benchmarks skip their remaining rows at the limit itself and return what they have); a
    multi-rank job adds the start-up of its ranks (``jobs.startup_allowance_s``)."""
    base = lim.time_limit_s if job is None else jobs.time_limit_s(job, lim)
    extra = 0.0 if job is None else jobs.startup_allowance_s(job)
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
    # (jobs.MMAP_THRESHOLD) makes every large buffer its own mapping, returned when freed, so the
    # worker's footprint is what is alive, the same on every run.
    env.setdefault("MALLOC_MMAP_THRESHOLD_", str(jobs.MMAP_THRESHOLD))
    return env


def _kill(proc: subprocess.Popen) -> None:
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


def _reap(proc: subprocess.Popen, timeout_s: float = 10.0) -> tuple[int | None, int]:
    """(exit code or -signal, peak RSS bytes per os.wait4) of the worker, reaped.

    wait4's ``ru_maxrss`` also counts the server's own pages the child shared between fork and exec,
    so it is at least the server's size: the peak that counts is :func:`_hwm`'s, taken while it runs."""
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


def run(job: jobs.Job, lim: safety.Limits | None = None, *, owner: str | None = None,
        on_wait: Callable[[runqueue.Place], None] | None = None,
        on_progress: Callable[[float | None, str], None] | None = None,
        cancelled: Callable[[], str | None] | None = None, tick: Callable[[], None] | None = None,
        queue: runqueue.Queue | None = None, queue_timeout_s: float | None = None,
        poll_s: float = 0.1) -> Outcome:
    """Admit, queue, run in a worker and return its data (see the module docstring).

    ``cancelled()`` returns a reason to stop (or None); ``tick()`` is called on every poll while
    queued and running (what it raises stops the run and leaves the queue).
    """
    lim = lim or safety.limits()
    plan = jobs.admit(job, lim)
    q = queue or runqueue.default_queue()
    t0 = time.monotonic()

    def check() -> None:
        if tick is not None:
            tick()
        if cancelled is not None:
            why = cancelled()
            if why:
                raise RunCancelled(why)

    with q.turn(owner or job.describe(), on_wait=on_wait, tick=check, poll_s=poll_s, timeout_s=queue_timeout_s):
        queued = time.monotonic() - t0
        return _run_worker(job, lim, plan, on_progress, check, poll_s, queued)


def _run_worker(job: jobs.Job, lim: safety.Limits, plan: jobs.Plan,
                on_progress: Callable[[float | None, str], None] | None, check: Callable[[], None],
                poll_s: float, queued: float) -> Outcome:
    extra_host, extra_device = jobs.memory_limit(plan, job.device)
    request = pickle.dumps({"job": job, "limits": lim, "extra_host": extra_host, "extra_device": extra_device})
    r, w = os.pipe()
    started = time.monotonic()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "gemmlib.measure.worker", str(w)], stdin=subprocess.PIPE,
                                stdout=sys.stderr.fileno() if _has_fileno(sys.stderr) else subprocess.DEVNULL,
                                pass_fds=(w,), start_new_session=True, env=_env(), close_fds=True)
    finally:
        os.close(w)
    result: dict | None = None
    error: dict | None = None
    ready_at: float | None = None
    baseline = 0
    hwm = 0  # the worker's own VmHWM, polled from /proc while it runs
    buf = b""
    try:
        assert proc.stdin is not None
        proc.stdin.write(request)
        proc.stdin.flush()  # stays open: its end-of-file tells the worker that the server died
        eof = False
        while not eof:
            check()
            now = time.monotonic()
            if ready_at is None and now - started > STARTUP_TIMEOUT_S:
                raise RunStopped(N_("the benchmark worker did not start within {seconds:.0f} s; the server is "
                                    "overloaded, try again in a moment"), seconds=STARTUP_TIMEOUT_S)
            if ready_at is not None and now - ready_at > hard_limit_s(lim, job):
                raise RunStopped(N_("stopped after {seconds:.0f} s: this server's time limit is {limit:g} s per run "
                                    "(GEMM_TIME_LIMIT_S) and one step of this run did not finish in time; nothing it "
                                    "measured came back — choose smaller sizes"),
                                 seconds=now - ready_at, limit=lim.time_limit_s)
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
                    baseline = int(msg.get("rss") or 0)
                elif t == "progress" and on_progress is not None:
                    on_progress(msg.get("f"), jobs.message_from(msg.get("message"), msg.get("text", "")))
                elif t == "result":
                    result = msg
                elif t == "error":
                    error = msg
    finally:
        if proc.returncode is None and (result is None and error is None):
            _kill(proc)
        with contextlib.suppress(OSError):
            os.close(r)
        with contextlib.suppress(OSError, ValueError):
            proc.stdin.close()
        code, _forked_peak = _reap(proc)
    seconds = time.monotonic() - started
    peak = max(hwm, int((result or {}).get("hwm") or 0))
    if error is not None:
        kind = error.get("kind")
        if kind == "input":
            raise _input_error(error)
        if kind == "memory":
            raise RunStopped(N_("this run needed more memory than its estimate allows ({estimate} estimated); it "
                                "was stopped — choose smaller sizes"), estimate=fmt_bytes(plan.bytes))
        raise WorkerError(f"the benchmark failed: {error.get('type', 'error')}: {error.get('message', '')}",
                          error.get("traceback", ""))
    if result is None:
        if code is not None and code < 0:
            name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
            raise RunStopped(N_("the benchmark worker was killed ({signal}) before it finished — most likely the "
                                "machine ran out of memory; choose smaller sizes"), signal=name)
        raise WorkerError(f"the benchmark worker exited with status {code} without a result")
    return Outcome(data=result.get("data"), plan=plan, peak_rss_bytes=peak, baseline_rss_bytes=baseline,
                   seconds=seconds, queued_s=queued)


def _input_error(error: dict) -> InputError:
    """The worker's InputError with its template and values (a page translates it); its English
    text exactly as the worker wrote it (values that JSON could not carry as they were: the text)."""
    message = error.get("message", "refused")
    try:
        e = InputError(error.get("template") or message, **(error.get("params") or {}))
    except (KeyError, IndexError, ValueError, TypeError):
        return InputError(message)
    return e if str(e) == message else InputError(message)


def _has_fileno(f: Any) -> bool:
    try:
        f.fileno()
        return True
    except (AttributeError, OSError, ValueError):
        return False
