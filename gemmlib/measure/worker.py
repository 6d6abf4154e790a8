"""The benchmark worker: ``python -m gemmlib.measure.worker FD`` runs one job and exits.

Started by ``gemmlib.measure.runner`` (never by hand). It reads one pickled request from stdin
(the job, the server's caps, the memory it may add), imports what the job needs, then limits its
own memory — ``RLIMIT_DATA`` (``RLIMIT_AS`` where that is missing) at its footprint after start-up
plus the job's allowance, and on a GPU ``torch.cuda.set_per_process_memory_fraction`` — and runs
the job. It writes JSON lines to file descriptor FD: ``ready`` (its baseline), ``progress``
messages (the English text, and the template and values of a Msg or Text: ``jobs.message_data``), then one ``result`` (the job's data) or ``error``. It dies with its server: stdin is
held open by the server, and end-of-file (the server died) ends the worker at once; on Linux the
kernel also kills it when the server's thread goes (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import sys
import threading
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


def _die_with_parent() -> None:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass

    def watch() -> None:
        try:
            while sys.stdin.buffer.read(65536):
                pass
        except (OSError, ValueError):
            pass
        os._exit(75)  # the server is gone: nobody wants this result

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


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


def _is_oom(e: BaseException) -> bool:
    from gemmlib.measure.safety import _is_oom as is_oom

    return isinstance(e, MemoryError) or is_oom(e)


def main(argv: list[str]) -> int:
    out = os.fdopen(int(argv[1]), "w", buffering=1, encoding="utf-8")
    lock = threading.Lock()

    def send(msg: dict) -> None:
        line = json.dumps(msg, allow_nan=False, default=str)
        with lock:
            out.write(line + "\n")
            out.flush()

    request = pickle.load(sys.stdin.buffer)
    _die_with_parent()
    from gemmlib.core.errors import InputError
    from gemmlib.measure import jobs, safety

    job = request["job"]
    safety.set_process_limits(request["limits"])
    try:
        jobs.prepare(job)
        info = _limit_memory(request["extra_host"], request.get("extra_device"), job.device)
        send({"t": "ready", **info})

        trim = _trimmer()

        def progress(frac: float | None, text: str) -> None:
            trim()
            send({"t": "progress", "f": None if frac is None else float(frac), "text": str(text)[:300],
                  "message": jobs.message_data(text)})  # its template and values: a page translates it

        data = jobs.execute(job, progress)
        send({"t": "result", "data": data, "hwm": _status("VmHWM")})
    except InputError as e:
        kind = "memory" if "ran out of memory" in str(e) else "input"
        params = {k: v if isinstance(v, (str, int, float, bool, type(None))) else str(v)
                  for k, v in (getattr(e, "params", None) or {}).items()}  # JSON: the page translates the template
        send({"t": "error", "kind": kind, "message": str(e), "template": getattr(e, "template", str(e)),
              "params": params})
    except Exception as e:  # noqa: BLE001 - reported to the server, which logs the traceback
        send({"t": "error", "kind": "memory" if _is_oom(e) else "crash", "type": type(e).__name__,
              "message": str(e).splitlines()[0][:300] if str(e) else "", "traceback": traceback.format_exc()})
    out.close()
    os._exit(0)  # skip interpreter teardown: the result is sent, the server is waiting for the exit


if __name__ == "__main__":
    sys.exit(main(sys.argv))
