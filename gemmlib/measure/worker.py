"""The benchmark worker: ``python -m gemmlib.measure.worker FD [--spare]`` runs one benchmark and exits.

Started by ``gemmlib.measure.runner`` (never by hand): forked from the runner's fork server
(:func:`forked`, torch already imported there) or as that command. It first makes itself ready for any
benchmark (torch imported, its CPU thread pool started), then reads one request from stdin — a
JSON line: the benchmark's name, its configuration (``gemmlib.core.codec``), the server's caps,
the memory it may add and its time budget — so a worker started ahead of time can be handed a run
when one comes. A spare (``--spare``: started by the runner ahead of any request) also imports every
benchmark's modules before it says it started (~10 MB more, and a request then goes straight to its
run); a worker started for a request imports only its own benchmark's. Nothing before the request
touches a GPU: a spare holds no CUDA context and no device memory. It looks the benchmark's spec up (``gemmlib.measure.registry``), decodes the
configuration (which checks itself), imports what that benchmark needs, then limits its own memory
— ``RLIMIT_DATA`` (``RLIMIT_AS`` where that is missing) at its footprint after start-up plus the
run's allowance, and on a GPU ``torch.cuda.set_per_process_memory_fraction`` — and runs it. It
writes JSON lines to file descriptor FD: ``ready`` (its baseline), ``progress`` (the fraction and
the step's text, a message with its template and values), ``rows`` (the rows a benchmark finished,
as it finishes them: a run killed at its limit still returns them), then one ``result`` (the
benchmark's result, packed by the codec, and the seconds its run took) or ``error``. Before
``ready`` it probes the machine's speed in the run's formats and plans the run again on it
(:func:`check_speed`): a run that cannot finish within its limit is refused there, before its
first row, with the estimate and the limit (issue 26 item 8). It dies with its server: stdin is held open by the
server, and end-of-file (the server died) ends the worker at once; on Linux the kernel also kills
it when the server's thread goes (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys
import threading
import time
import traceback
from typing import Any


def _status(key: str) -> int:
    """A ``VmXxx`` figure of /proc/self/status in bytes (0 if unknown)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def _libc():
    """The C library (glibc's prctl, mallopt, malloc_trim), or None where ctypes cannot load it."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _call(name: str, *args: int | bytes) -> None:
    """``name(*args)`` of the C library where it has it (Linux, glibc); nothing elsewhere."""
    fn = getattr(_libc(), name, None)
    if fn is not None:
        fn(*args)


def _die_with_parent() -> None:
    """The kernel kills this process when the server's thread goes (Linux)."""
    _call("prctl", 1, signal.SIGKILL)  # PR_SET_PDEATHSIG


NAME = "gemm-worker"  # the process's name (/proc/PID/comm) however it was started: a fork has no command line of its own


def _name_process() -> None:
    """Name this process ``NAME`` (``PR_SET_NAME``, Linux): a forked worker's command line is its fork
    server's, so its name is how ``ps``, the tests and the benchmarks tell a worker."""
    _call("prctl", 15, NAME.encode(), 0, 0, 0)  # PR_SET_NAME


def _malloc_settings(arena_max: int, mmap_threshold: int) -> None:
    """What ``MALLOC_ARENA_MAX`` and ``MALLOC_MMAP_THRESHOLD_`` set at a fresh process's start (glibc reads
    them once, at its first allocation), set with ``mallopt`` in a forked worker whose allocator the fork
    server set up: two arenas and a fixed mmap threshold (see ``gemmlib.measure.runner._env``)."""
    _call("mallopt", -8, arena_max)  # M_ARENA_MAX
    _call("mallopt", -3, mmap_threshold)  # M_MMAP_THRESHOLD (a fixed one: no dynamic adjustment after it)


def _started_ns(pid: int) -> int | None:
    """When process ``pid`` started (wall clock, ns; Linux's /proc), or None where that cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/stat", encoding="ascii") as f:
            boot = next(int(line.split()[1]) for line in f if line.startswith("btime "))
        return int((boot + ticks / os.sysconf("SC_CLK_TCK")) * 1e9)
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def _drop_stale_modules(newest_ns: int) -> None:
    """Forget the package's modules the fork server imported (its preload) if the package's newest file
    (``newest_ns``: the runner's code stamp) changed after the fork server (this process's parent) started, or
    when that is unknown: this worker then imports today's code, as a freshly started one would."""
    started = _started_ns(os.getppid())
    if started is not None and newest_ns <= started - 2_000_000_000:  # /proc's clock ticks, with a margin
        return
    for name in [m for m in sys.modules if (m == "gemmlib" or m.startswith("gemmlib.")) and m != __name__]:
        del sys.modules[name]


def forked(request: Any, messages: Any, spare: bool, state: dict) -> None:
    """The worker as a fork of the caller's fork server (``gemmlib.measure.runner``): torch was imported
    there once, so this start costs a fork instead of an interpreter importing torch.

    ``request`` and ``messages`` are the two pipe ends (``multiprocessing`` connections, passed as file
    descriptors): the request comes on the first (it becomes stdin, and its end-of-file still means the
    server is gone), the JSON lines go out on the second. ``state``: the caller's environment, memory
    limits, allocator settings and code stamp (``runner._fork_state``). Then the same
    :func:`main` as a started worker, in a process group (session) of its own."""
    os.setsid()
    # the fork server was started with SIGINT blocked (launch.start_fork_server: a Ctrl-C in its first seconds) and
    # its forks inherit the mask: this worker, in a session of its own, takes signals as a started one does
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    _name_process()
    _drop_stale_modules(int(state["code_newest_ns"]))
    from gemmlib.measure import launch

    launch.take_caller_state(state)
    _malloc_settings(int(state["arena_max"]), int(state["mmap_threshold"]))
    threads = os.environ.get("OMP_NUM_THREADS", "")
    if threads.isdigit() and int(threads) > 0:  # what a started worker's OpenMP would have read at its start
        import torch

        torch.set_num_threads(int(threads))
    for p in reversed(state.get("sys_path_first", [])):
        if p not in sys.path:
            sys.path.insert(0, p)
    req_fd, out_fd = os.dup(request.fileno()), os.dup(messages.fileno())
    request.close()
    messages.close()
    os.dup2(req_fd, 0)
    os.close(req_fd)
    os.dup2(2, 1)  # what it prints goes to the server's stderr, as a started worker's: never into a command's stdout
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - the process's stdin from here on
    main(["worker", str(out_fd)] + (["--spare"] if spare else []))


def _watch_stdin() -> None:
    """End this process when the server closes its end of stdin (after the request was read)."""
    def watch() -> None:
        try:
            while sys.stdin.buffer.read(65536):
                pass
        except (OSError, ValueError):
            pass
        os._exit(75)  # the server is gone: nobody wants this result

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def warm_up(every_benchmark: bool = False) -> None:
    """What every benchmark needs, before any request: torch and its CPU thread pool; with
    ``every_benchmark`` (a spare), every benchmark's modules too (their imports, no GPU, no spec's
    ``warm``: those start device-side things and run after the request)."""
    import torch
    import torch.utils.benchmark  # noqa: F401

    x = torch.randn(256, 256)
    (x @ x).sum().item()  # the CPU thread pool exists from here on
    if every_benchmark:
        from gemmlib.measure import registry

        for name in registry.SPECS:
            for module in registry.SPECS[name].imports:
                importlib.import_module(module)


def prepare(spec: Any, device: str) -> None:
    """Import what ``spec`` needs and start what it starts on first use, so that the worker's
    footprint after this is its baseline (the memory limit is set on top of it)."""
    import torch

    for name in spec.imports:
        importlib.import_module(name)
    if spec.warm is not None:
        spec.warm()
    if spec.profiler:  # the profiler's own start-up (~150 MB) belongs to the baseline
        import torch.profiler

        x = torch.randn(256, 256)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True,
                                    with_flops=True) as prof:
            (x @ x).sum()
        prof.events()
    if device == "cuda":
        y = torch.randn(256, 256, device="cuda")
        (y @ y).sum().item()
        torch.cuda.synchronize()


def _limit_memory(extra_host: int, extra_device: int | None, device: str) -> dict[str, Any]:
    import resource

    info: dict[str, Any] = {"rss": _status("VmRSS"), "data": _status("VmData")}
    which = getattr(resource, "RLIMIT_DATA", None)
    base = info["data"]
    if which is None or not base:
        which, base = resource.RLIMIT_AS, _status("VmSize")
    if base:
        cap = int(base + extra_host)
        try:
            resource.setrlimit(which, (cap, cap))
            info["host_limit"] = cap
        except (ValueError, OSError):
            info["host_limit"] = None
    if device == "cuda" and extra_device is not None:
        import torch

        total = torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
        frac = min(1.0, (torch.cuda.memory_allocated() + extra_device) / total)
        torch.cuda.set_per_process_memory_fraction(frac)
        info["device_limit"] = int(frac * total)
    return info


def _trimmer():
    """glibc's ``malloc_trim(0)``, or a no-op elsewhere. Called between a benchmark's rows (at each
    progress message, never inside a timing): it hands freed heap pages back to the system, so the
    worker's resident memory follows what the run holds instead of what earlier rows left behind."""
    try:
        import ctypes

        fn = ctypes.CDLL(None).malloc_trim
        fn.argtypes = [ctypes.c_size_t]
        return lambda: fn(0)
    except (OSError, AttributeError):
        return lambda: None


PROBE_REFRESH_S = 30.0  # a probe younger than this is this machine now: not timed again


def check_speed(spec: Any, config: Any, lim: Any, device: str, time_limit_s: float) -> tuple[float, float] | None:
    """Probe this machine's speed in the run's formats (``gemmlib.measure.speedprobe``, kept in the
    cache for the time model) where the last probe is older than PROBE_REFRESH_S, plan the run
    again on it, and refuse (InputError, before anything is run) what cannot finish within
    ``time_limit_s``. Returns (the estimate, the recent runs' ratio in it) for the runner's
    learning, or None for a run the probe does not apply to (multi-rank runs, MPS)."""
    from gemmlib.core import format as fmt
    from gemmlib.core import speed
    from gemmlib.core.errors import InputError
    from gemmlib.measure import plan, speedprobe

    if spec.ranks_open_devices or device not in ("cpu", "cuda"):
        return None
    dtypes = [d for d in plan.run_dtypes(config) if d in speedprobe.PROBED]
    stale = [d for d in dtypes if speed.probed_rate(device, d, max_age_s=PROBE_REFRESH_S) is None]
    if stale:
        speed.save_probe(device, speedprobe.probe(device, stale))
    p = plan.planned(spec, config, lim)
    if p.launches:
        return None
    if "probed here" in p.sources and p.seconds > time_limit_s:
        rates = ", ".join(f"{d} {fmt.si(r, 'FLOP/s')}" for d in dtypes
                          if (r := speed.probed_rate(device, d)) is not None)
        raise InputError(plan.PROBED_TIME_CAP, rates=rates, seconds=p.seconds, limit=time_limit_s)
    return p.seconds, speed.ratio(spec.name, device)


def _own_temp_dir() -> None:
    """This run's temp files in a folder of its own (``launch.worker_dir_prefix``), which the runner removes when
    it reaps this process: a worker killed mid-run (Stop, its time limit, a closed tab) never reaches the clean-up
    of what it made there, multiprocessing's ``pymp-*`` folder of the ranks' fork server included."""
    import tempfile

    from gemmlib.measure import launch

    own = tempfile.mkdtemp(prefix=launch.worker_dir_prefix(os.getpid()))
    if len(own) > 60:  # a Unix socket's path (the ranks' fork server's, in here) must stay under 108 bytes
        os.rmdir(own)
        return
    tempfile.tempdir = own
    os.environ["TMPDIR"] = own  # what a process it starts reads


def _remove_own_temp_dir() -> None:
    import shutil
    import tempfile

    from gemmlib.measure import launch

    own = tempfile.tempdir or ""
    if os.path.basename(own).startswith(launch.worker_dir_prefix(os.getpid())):
        shutil.rmtree(own, ignore_errors=True)


def main(argv: list[str]) -> int:
    out = os.fdopen(int(argv[1]), "w", buffering=1, encoding="utf-8")
    lock = threading.Lock()

    def send(msg: dict) -> None:
        line = json.dumps(msg, allow_nan=False)
        with lock:
            out.write(line + "\n")
            out.flush()

    _die_with_parent()
    _name_process()
    from gemmlib.measure import launch

    launch.quiet_profiler()  # before torch's profiler first runs here (its prepare, a profile): no kineto lines
    from gemmlib.core import codec
    from gemmlib.core.errors import InputError
    from gemmlib.core.i18n import Msg, Text
    from gemmlib.measure import registry, safety

    try:
        warm_up(every_benchmark="--spare" in argv[2:])
        send({"t": "started", "rss": _status("VmRSS")})  # ready for any request from here on
        request = json.loads(sys.stdin.buffer.readline() or b"null")
        _watch_stdin()
        if not isinstance(request, dict) or request.get("v") != codec.VERSION:
            raise codec.CodecError(f"a request of another version: {str(request)[:80]}")
        spec = registry.get(request["bench"])
        config = codec.decode(spec.config, request["config"], spec.name)
        lim = codec.decode(safety.Limits, request["limits"], "limits")
        safety.set_process_limits(lim)
        _own_temp_dir()
        device = "cpu" if spec.ranks_open_devices else config.device
        prepare(spec, device)
        trim = _trimmer()
        checked = check_speed(spec, config, lim, device, float(request["time_limit_s"])) \
            if request.get("check_speed", True) else None
        trim()  # the probe's buffers are not part of the baseline
        info = _limit_memory(int(request["extra_host"]), request.get("extra_device"), device)
        if checked is not None:
            info["planned_s"], info["scale"] = checked
        send({"t": "ready", **info})

        def progress(frac: float | None, text: str) -> None:
            trim()
            if isinstance(text, Msg):
                text = Text(text.template, **text.params)
            send({"t": "progress", "f": None if frac is None else float(frac),
                  "text": codec.encode(text if isinstance(text, Text) else str(text)[:300])})

        deadline = safety.Deadline(float(request["time_limit_s"]))
        deadline.on_rows = lambda rows: send({"t": "rows", "rows": codec.encode(rows)})
        t0 = time.monotonic()
        result = spec.run(config, progress, deadline)
        send({"t": "result", "result": codec.pack(spec.name, result), "hwm": _status("VmHWM"),
              "run_s": time.monotonic() - t0})
    except InputError as e:
        kind = "memory" if "ran out of memory" in str(e) else "input"
        send({"t": "error", "kind": kind, "class": type(e).__name__,
              "message": codec.encode(Text(e.template, **e.params) if e.params else Text(e.template))})
    except Exception as e:  # noqa: BLE001 - reported to the server, which logs the traceback
        oom = isinstance(e, MemoryError) or safety.is_oom(e)
        send({"t": "error", "kind": "memory" if oom else "crash", "type": type(e).__name__,
              "message": str(e).splitlines()[0][:300] if str(e) else "", "traceback": traceback.format_exc()})
    out.close()
    _remove_own_temp_dir()  # a run that ends removes its own (a killed one's: the runner, when it reaps it)
    os._exit(0)  # skip interpreter teardown: the result is sent, the server is waiting for the exit


if __name__ == "__main__":
    sys.exit(main(sys.argv))
