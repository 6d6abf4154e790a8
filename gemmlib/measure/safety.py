"""Safeguards for a shared server: the caps on what a benchmark may run (``Limits``, read by
``limits()`` from the secrets files and the environment, bounded by the machine's policy file
``/etc/gemmlib/policy.toml``: the one reader for pages, CLI and workers), checks that refuse
before anything is allocated (``check_dims``, ``check_memory``), the out-of-memory guard, one run
at a time per machine (``single_flight``, over ``gemmlib.measure.runqueue``) and a deadline. Every
benchmark a page or the CLI starts runs in a worker process (``gemmlib.measure.runner``) under these
caps.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gemmlib.core import format as fmt
from gemmlib.core import policy
from gemmlib.core.errors import InputError
from gemmlib.core.files import read_regular
from gemmlib.core.i18n import N_, Msg, Text, Translate, english, render
from gemmlib.core.units import GiB, MiB
from gemmlib.measure import runqueue
from gemmlib.measure.runqueue import BusyError  # noqa: F401 - re-exported: callers catch safety.BusyError

ONE_GEMM = N_("one GEMM")  # what check_cpu_flops refuses by default
# The sizes check_dims names, as a page shows them (a refusal translates its ``name``).
DIM_NAMES = (N_("hidden"), N_("intermediate"), N_("seq_len"), N_("tokens"), N_("ffn"), N_("vocab"))


# --------------------------------------------------------------------------- limits and memory
@dataclass(frozen=True)
class Limits:
    """Caps for one benchmark run on this server."""

    max_dim: int  # largest M, N or K accepted
    max_bytes: int  # most bytes one run may allocate for its operands
    time_limit_s: float  # wall-clock budget of one run; rows past it are reported as skipped
    classroom: bool  # small, quick runs for a shared classroom server
    max_cpu_flops: float = 2 * 4096**3  # largest single GEMM (FLOPs) run on a CPU: ~1 min at 0.1 TFLOP/s
    max_ranks: int = 8  # most processes a multi-rank benchmark may start (GEMM_MAX_RANKS; GPUs cap NCCL too)

    def check_cpu_flops(self, flops: float, what: str | Msg = ONE_GEMM) -> None:
        """InputError when a CPU would take minutes (the cap is GEMM_MAX_CPU_GFLOP); ``what`` is a
        message (an N_ text or a Msg), shown in the reader's language with the refusal."""
        if flops > self.max_cpu_flops:
            raise Refused(N_("{what} is {gflop:.4g} GFLOP, too much for a CPU run here (cap {cap:.4g} GFLOP, "
                                "GEMM_MAX_CPU_GFLOP); choose smaller sizes or run on a GPU"),
                             what=what, gflop=flops / 1e9, cap=self.max_cpu_flops / 1e9)


DEFAULT_LIMITS = Limits(max_dim=16384, max_bytes=24 * GiB, time_limit_s=240.0, classroom=False)


CLASSROOM_LIMITS = Limits(max_dim=2048, max_bytes=512 * MiB, time_limit_s=20.0, classroom=True,
                          max_cpu_flops=2 * 1024**3, max_ranks=4)


_ENV_KEYS = {"max_dim": "GEMM_MAX_DIM", "max_bytes": "GEMM_MAX_BYTES",
             "time_limit_s": "GEMM_TIME_LIMIT_S", "classroom": "GEMM_CLASSROOM",
             "max_cpu_flops": "GEMM_MAX_CPU_GFLOP", "max_ranks": "GEMM_MAX_RANKS"}


MAX_SECRETS_BYTES = 1_000_000


def default_secrets_files() -> tuple[Path, ...]:
    """Streamlit's default ``secrets.files``: ~/.streamlit/secrets.toml, then ./.streamlit/secrets.toml
    (a later file overrides an earlier one, as in Streamlit)."""
    return (Path.home() / ".streamlit" / "secrets.toml", Path.cwd() / ".streamlit" / "secrets.toml")


def read_secrets(files: Iterable[str | os.PathLike] | None = None) -> dict[str, Any]:
    """The GEMM_* keys of the secrets files that exist (TOML, the format of Streamlit's secrets).

    A file that cannot be read or parsed is an InputError naming the file and the line, never a
    silent fallback: a teacher who wrote classroom caps must not get a server without them.
    """
    import tomllib

    out: dict[str, Any] = {}
    for f in (default_secrets_files() if files is None else files):
        p = Path(os.path.expanduser(os.fspath(f)))
        if not p.exists():
            continue
        data = read_regular(p, MAX_SECRETS_BYTES, what=f"the secrets file {p}")
        try:
            doc = tomllib.loads(data.decode("utf-8"))
        except UnicodeDecodeError:
            raise InputError(f"the secrets file {p} is not UTF-8 text") from None
        except tomllib.TOMLDecodeError as e:
            raise InputError(f"the secrets file {p} is not valid TOML: {e}") from None
        out.update({k: v for k, v in doc.items() if k in _ENV_KEYS.values()})
    return out


_process_limits: Limits | None = None


def set_process_limits(lim: Limits | None) -> None:
    """Fix the caps every ``limits()`` call returns in this process (a benchmark worker uses the
    caps its server resolved, whatever its environment says, never above the machine's policy);
    None undoes it."""
    global _process_limits
    _process_limits = lim


def _truthy(v: Any) -> bool:
    return str(v).strip().lower() in {"1", "true", "yes", "on"}


def _resolve(get: Callable[[str], Any], where: str) -> Limits:
    """Caps from raw values (``get(key)`` -> the value of GEMM_<key>, or None): ``classroom`` picks
    the base, each value set replaces the base's. ``where`` names the source in a refusal."""
    classroom = _truthy(get("classroom")) if get("classroom") is not None else False
    base = CLASSROOM_LIMITS if classroom else DEFAULT_LIMITS
    vals: dict[str, Any] = {"max_dim": base.max_dim, "max_bytes": base.max_bytes,
                            "time_limit_s": base.time_limit_s, "max_cpu_flops": base.max_cpu_flops,
                            "max_ranks": base.max_ranks}
    for key, conv in (("max_dim", int), ("max_bytes", int), ("time_limit_s", float), ("max_cpu_flops", float),
                      ("max_ranks", int)):
        raw = get(key)
        if raw is None or str(raw).strip() == "":
            continue
        try:
            f = float(raw)
            if not math.isfinite(f):
                raise ValueError
            v = conv(f) if conv is int else conv(raw)
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"{_ENV_KEYS[key]}={str(raw)[:40]!r}{where} is not a finite number") from None
        if not v > 0:
            raise InputError(f"{_ENV_KEYS[key]}{where} must be positive, got {str(raw)[:40]!r}")
        vals[key] = v * 1e9 if key == "max_cpu_flops" else v
    return Limits(classroom=classroom, **vals)


def tighter(a: Limits, b: Limits) -> Limits:
    """Each cap the smaller of the two; classroom mode when either is."""
    return Limits(max_dim=min(a.max_dim, b.max_dim), max_bytes=min(a.max_bytes, b.max_bytes),
                  time_limit_s=min(a.time_limit_s, b.time_limit_s), classroom=a.classroom or b.classroom,
                  max_cpu_flops=min(a.max_cpu_flops, b.max_cpu_flops), max_ranks=min(a.max_ranks, b.max_ranks))


def policy_limits() -> Limits | None:
    """The most the machine's policy allows (``gemmlib.core.policy``), None when it has none or it
    names no cap (only the queue folder, the visitor limit or the ceilings' key).

    The policy's keys are the caps' names; a key it leaves out is its base's (the classroom caps
    with ``GEMM_CLASSROOM = true``, else the defaults). InputError for a policy that cannot be
    trusted or read (the caller must not run without it)."""
    pol = policy.machine_policy()
    if not pol.present or not pol.sets_caps:
        return None
    return _resolve(lambda key: pol.values.get(_ENV_KEYS[key]), f" in the policy file {pol.path}")


def limits(source: Mapping[str, Any] | None = None, *, files: Iterable[str | os.PathLike] | None = None) -> Limits:
    """This server's caps: the one reader for every page, the CLI and the benchmark workers.

    Keys (the same names everywhere) come from ``source`` when given (a mapping such as parsed
    secrets), else from the secrets files (``files``, default Streamlit's
    ``~/.streamlit/secrets.toml`` and ``./.streamlit/secrets.toml``), then from the environment.
    ``GEMM_CLASSROOM=1`` starts from the small classroom caps; ``GEMM_MAX_DIM``,
    ``GEMM_MAX_BYTES``, ``GEMM_TIME_LIMIT_S`` and ``GEMM_MAX_CPU_GFLOP`` override single values. A
    malformed value or secrets file is an InputError naming it.

    With a machine policy (``/etc/gemmlib/policy.toml``, ``gemmlib.core.policy``) its caps are the
    most anything may get: the secrets, the environment and a worker's caps from its server can
    only lower them (each cap is the smaller of the two). A policy that cannot be trusted or read
    is an InputError, never a machine without caps.
    """
    ceiling = policy_limits()
    if _process_limits is not None and source is None and files is None:
        lim = _process_limits
    else:
        secrets = dict(source) if source is not None else read_secrets(files)

        def get(key: str) -> Any:
            env = _ENV_KEYS[key]
            if env in secrets:
                return secrets[env]
            return os.environ.get(env)

        lim = _resolve(get, "")
    return lim if ceiling is None else tighter(lim, ceiling)


class Refused(InputError):
    """A run refused by the caps whose values name what is refused: an N_ text or a Msg as the
    ``what`` or ``name`` value is translated with the sentence (``str()`` stays the English sentence)."""

    def render(self, gettext: Translate = english) -> str:
        params = {k: v.render(gettext) if isinstance(v, Msg) else gettext(v) if k in ("what", "name")
                  and isinstance(v, str) else v for k, v in self.params.items()}
        return render(self.template, params, gettext)


def check_dims(lim: Limits | None = None, **dims: Any) -> None:
    """InputError for a dimension that is not a whole number in 1..lim.max_dim."""
    lim = lim or limits()
    for name, v in dims.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v:
            raise InputError(N_("{name} must be a whole number, got {value!r}"), name=name, value=v)
        if v < 1:
            raise InputError(N_("{name} must be at least 1, got {value}"), name=name, value=int(v))
        if v > lim.max_dim:
            if _policy_caps_dim(lim.max_dim):  # raising GEMM_MAX_DIM cannot lift a machine policy's cap: not advised
                raise Refused(N_("{name}={value} is above this machine's cap of {cap}, set by its policy; choose a "
                                 "smaller size"), name=name, value=int(v), cap=lim.max_dim)
            raise Refused(N_("{name}={value} is above this server's cap of {cap} (classroom mode); choose a "
                                "smaller size or raise GEMM_MAX_DIM") if lim.classroom else
                             N_("{name}={value} is above this server's cap of {cap}; choose a smaller size or raise "
                                "GEMM_MAX_DIM"), name=name, value=int(v), cap=lim.max_dim)


def _policy_caps_dim(max_dim: int) -> bool:
    """Whether the machine policy is what holds the dimension cap at ``max_dim`` (its own cap is no higher)."""
    try:
        ceiling = policy_limits()
    except InputError:  # an untrusted policy was refused where the caps were read; here it only words a refusal
        return False
    return ceiling is not None and ceiling.max_dim <= max_dim


def _nvml_free_bytes() -> int | None:
    """Free bytes of the first visible GPU by NVML (no CUDA context), None without NVML or a driver."""
    from gemmlib.core.machine import nvml_query

    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    index = int(visible) if visible.isdigit() else 0  # (a UUID list: the first GPU NVML knows)
    return nvml_query(lambda nv: int(nv.nvmlDeviceGetMemoryInfo(nv.nvmlDeviceGetHandleByIndex(index)).free))


def available_memory(device: str) -> int | None:
    """Free bytes on ``device`` (CUDA: cudaMemGetInfo; CPU: MemAvailable), None if unknown.

    A process that has not started CUDA (the app's server, the CLI checking a plan before its worker starts) asks
    NVML instead: ``torch.cuda.mem_get_info`` would create a CUDA context there, ~0.5 GB of the GPU held for the
    process's whole life outside every plan and limit."""
    if device == "cuda":
        import sys

        started = sys.modules.get("torch") is not None and sys.modules["torch"].cuda.is_initialized()
        if not started:
            free_nvml = _nvml_free_bytes()
            if free_nvml is not None:
                return free_nvml
        import torch
        free, _total = torch.cuda.mem_get_info()
        # Memory already held by torch's caching allocator can be reused too.
        return int(free + torch.cuda.memory_reserved() - torch.cuda.memory_allocated())
    import psutil  # MemAvailable on Linux, the VM statistics elsewhere (macOS has no sysconf figure for it)

    return int(psutil.virtual_memory().available)


def check_memory(nbytes: float, device: str, lim: Limits | None = None, headroom: float = 0.8) -> None:
    """InputError BEFORE allocating when ``nbytes`` exceeds the cap or ``headroom`` of free memory."""
    lim = lim or limits()
    if nbytes > lim.max_bytes:
        raise InputError(N_("this run needs about {need}, above this server's cap of {cap}; choose smaller sizes "
                            "(or raise GEMM_MAX_BYTES)"), need=fmt.nbytes(nbytes), cap=fmt.nbytes(lim.max_bytes))
    free = available_memory(device)
    if free is not None and nbytes > headroom * free:
        raise InputError(N_("this run needs about {need} but only {free} is free on {device}; choose smaller sizes"),
                         need=fmt.nbytes(nbytes), free=fmt.nbytes(free), device=device)


def is_oom(e: BaseException) -> bool:
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
        if not is_oom(e):
            raise
        if device == "cuda":
            try:
                import gc

                import torch
                gc.collect()
                torch.cuda.empty_cache()
            except Exception:  # noqa: BLE001
                pass
        raise InputError(N_("{device} ran out of memory for this size; the cache was freed, try smaller sizes or "
                            "fewer dtypes"), device=device) from None


# --------------------------------------------------------------------------- one run at a time
def current_owner() -> str | None:
    """Who holds this machine's benchmark runner now (None when idle), in any process."""
    return runqueue.default_queue().running()


@contextmanager
def single_flight(owner: str, on_wait: Callable[[str], None] | None = None,
                  timeout_s: float | None = None, poll_s: float = 0.25) -> Iterator[None]:
    """One benchmark at a time on this machine (every server process and the CLI), first come
    first served: ``gemmlib.measure.runqueue``. ``on_wait("queued behind <owner> ...")`` while waiting,
    again whenever the place changes; BusyError after ``timeout_s`` seconds of waiting.
    """
    def cb(place: runqueue.Place) -> None:
        if on_wait is not None:
            more = f" and {len(place.ahead)} queued before you" if place.ahead else ""
            on_wait(f"queued behind {place.running or (place.ahead[0] if place.ahead else 'another benchmark')}{more}")

    with runqueue.default_queue().turn(owner, on_wait=cb, poll_s=poll_s, timeout_s=timeout_s):
        yield


# A row skipped at the run's time limit (its reason, a Text)
TIME_LIMIT_REACHED = N_("skipped: the run's time limit of {seconds:g} s was reached (GEMM_TIME_LIMIT_S)")


class Deadline:
    """A wall-clock budget for one run: rows after it expires are reported as skipped."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self.start = time.monotonic()
        self.on_rows: Callable[[list], None] | None = None  # the worker sends kept rows to its server

    def keep(self, rows: Iterable[Any]) -> None:
        """Rows a benchmark has finished: a worker sends them to its server at once, so that a run
        killed at its hard limit still returns what it measured (issue 26 item 8)."""
        rows = list(rows)
        if self.on_rows is not None and rows:
            self.on_rows(rows)

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def remaining(self) -> float:
        return math.inf if self.seconds is None else self.seconds - self.elapsed()

    def expired(self) -> bool:
        return self.remaining() <= 0

    def reason(self) -> str:
        return Text(TIME_LIMIT_REACHED, seconds=self.seconds)
