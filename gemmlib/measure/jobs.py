"""What a benchmark worker runs: a ``Job`` per benchmark, its ``Plan`` (memory, FLOPs and time,
estimated before anything is allocated) and the caps, applied to every benchmark the same way.

* ``Job``: which benchmark (``kind``), on which device, with its frozen configuration. Built by
  ``precision(cfg)``, ``tiling(cfg)``, ``batching(cfg)``, ``article(...)``, ``ceilings(...)``,
  ``waves(...)``, ``profile(...)`` and ``block_bench(...)``.
* ``plan(job, lim)``: validates the job (InputError) and counts what it will hold at its peak —
  every buffer: inputs and their rotated copies, outputs, the float64 reference and the float64
  copies its error check makes — plus the largest single GEMM and the least wall time its rows
  take (timing per row, and each call at the device's measured or datasheet speed).
* ``admit(job, lim)``: ``plan`` and the three caps — bytes (GEMM_MAX_BYTES and 80 % of what is
  free), the largest CPU GEMM (GEMM_MAX_CPU_GFLOP) and time (GEMM_TIME_LIMIT_S) — one rule for
  every benchmark, from the page and from the command line.
* ``execute(job, progress)`` runs it (in the worker process, ``gemmlib.measure.worker``) and
  returns plain data: ``BenchResult.to_dict()`` rows, or a dict for the profiler.
* ``results(data)``, ``profile_result(data, cfg)``, ``monitor_result(data)`` turn that data back
  into objects on the server's side.

torch is imported only by ``prepare`` and ``execute``, i.e. in the worker.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from gemmlib.core import ceilings as ceilings_store
from gemmlib.core import machine
from gemmlib.core.dtypes import dtype_bytes, get_dtype
from gemmlib.core.errors import InputError
from gemmlib.core.hardware import get_hardware
from gemmlib.core.i18n import N_, Msg, Text, Translate, english, reword  # noqa: F401 - reword: jobs.reword
from gemmlib.core.results import BenchResult
from gemmlib.core.units import MiB
from gemmlib.measure import runqueue, safety

KINDS = ("precision", "tiling", "batching", "article", "ceilings", "waves", "profile", "block_bench", "calibrate",
         "validate", "collectives", "tp")

# Least time a timed row costs besides its timing budget: the warm-up and the first call.
ROW_OVERHEAD_S = 0.02
# An optimistic CPU speed when none was measured here (a many-core server's fp32 peak): the
# time estimate is a lower bound, so it must not refuse a run a fast CPU would finish.
CPU_FLOPS_BOUND = 2e12
# Per-op cost of eager PyTorch under the profiler (launch + record), seconds: small blocks are
# bound by it, not by their FLOPs.
PROFILE_OP_OVERHEAD_S = {"cpu": 10e-6, "cuda": 8e-6}
MAX_PROFILE_LAYERS = 64
MAX_PROFILE_STEPS = 50
MAX_MIN_RUN_TIME_S = 30.0
MMAP_THRESHOLD = 4 * MiB  # the worker fixes glibc's mmap threshold here (runner): blocks this large are
# returned to the system when freed; smaller ones stay in the heap


# --------------------------------------------------------------------------- jobs
@dataclass(frozen=True)
class Job:
    """One benchmark run: its kind, device, frozen configuration and keyword options."""

    kind: str
    device: str
    config: Any = None
    options: tuple[tuple[str, Any], ...] = ()
    label: str = ""

    def opt(self, key: str, default: Any = None) -> Any:
        return dict(self.options).get(key, default)

    def describe(self) -> str:
        """The run's name (English; a page shows it with ``ui.tr``): its label, a catalogue constant."""
        return self.label or Text(runqueue.KIND_RUN, kind=self.kind)


def _opts(**kw: Any) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(kw.items()))


def precision(cfg: Any) -> Job:
    return Job("precision", cfg.device, cfg, label=N_("a precision run"))


def tiling(cfg: Any) -> Job:
    return Job("tiling", cfg.device, cfg, label=N_("a tiling run"))


def batching(cfg: Any) -> Job:
    return Job("batching", cfg.device, cfg, label=N_("a batching run"))


def article(device: str, dtype: str, *, batch: int, m: int, k: int, n: int, min_run_time: float) -> Job:
    return Job("article", device, None, _opts(dtype=dtype, batch=int(batch), m=int(m), k=int(k), n=int(n),
                                              min_run_time=float(min_run_time)),
               label=N_("the article's batching example"))


def ceilings(device: str, quick: bool = False) -> Job:
    """The Devices page's measurement; the GEMM size and copy bytes are fixed here, on the server."""
    from gemmlib.measure import devices

    size, copy_bytes = devices.ceiling_plan(device, quick)
    return Job("ceilings", device, None, _opts(quick=bool(quick), size=int(size), copy_bytes=int(copy_bytes)),
               label=N_("a ceiling measurement"))


def waves(device: str, *, m: int, k: int, ns: list[int] | tuple[int, ...], dtype: str = "bf16",
          tile: tuple[int, int] = (128, 256), min_run_time: float = 0.1) -> Job:
    return Job("waves", device, None, _opts(m=int(m), k=int(k), ns=tuple(int(x) for x in ns), dtype=dtype,
                                            tile=(int(tile[0]), int(tile[1])), min_run_time=float(min_run_time)),
               label=N_("a wave sweep"))


def profile(cfg: Any, device: str, *, steps: int = 3, monitor: bool = True, hardware: str | None = None,
            efficiency: float = 0.7, trace_path: str | None = None) -> Job:
    return Job("profile", device, cfg, _opts(steps=steps, monitor=bool(monitor), hardware=hardware,
                                             efficiency=float(efficiency), trace_path=trace_path),
               label=N_("a profiler run"))


def block_bench(cfg: Any, device: str, *, min_run_time: float = 0.3, monitor: bool = True) -> Job:
    return Job("block_bench", device, cfg, _opts(min_run_time=float(min_run_time), monitor=bool(monitor)),
               label=N_("a monitored block benchmark"))


def calibrate(run: Any, device: str, *, dtypes: tuple[str, ...] | None = None, min_run_time: float = 0.05,
              threads: int | None = None, validate: bool = False, validate_run_time: float = 0.5,
              efficiency: float = 1.0) -> Job:
    """``gemmlib.measure.calibrate``: time every op of ``run``'s model (and, with ``validate``, then a
    real forward pass against the estimates). The calibration comes back as data; the server saves it."""
    return Job("calibrate", device, run, _opts(dtypes=None if dtypes is None else tuple(dtypes),
                                               min_run_time=float(min_run_time), threads=threads,
                                               validate=bool(validate), validate_run_time=float(validate_run_time),
                                               efficiency=float(efficiency)),
               label=N_("a calibration and validation") if validate else N_("a calibration"))


def validate(run: Any, device: str, *, calibration: dict | None = None, efficiency: float = 1.0,
             min_run_time: float = 0.5, threads: int | None = None) -> Job:
    """``gemmlib.measure.calibrate.run_validation``; ``calibration``: a saved one's ``to_dict()``."""
    return Job("validate", device, run, _opts(calibration=calibration, efficiency=float(efficiency),
                                              min_run_time=float(min_run_time), threads=threads),
               label=N_("a validation"))


def collectives(cfg: Any, *, nproc: int, backend: str = "auto") -> Job:
    """``gemmlib.measure.collectives``: the worker starts the ranks (``gemmlib.measure.launch``)."""
    return Job("collectives", "cuda" if backend == "nccl" else "cpu", cfg, _opts(nproc=int(nproc), backend=backend),
               label=Text(runqueue.COLLECTIVES_RUN, n=int(nproc)))


def tp(cfg: Any, *, ranks: list[int] | tuple[int, ...], backend: str = "auto",
       interconnect_name: str | None = None) -> Job:
    """``gemmlib.measure.tp``: one layer on each of ``ranks`` rank counts (one launch each)."""
    ranks = tuple(sorted(int(n) for n in ranks))
    return Job("tp", "cuda" if backend == "nccl" else "cpu", cfg,
               _opts(ranks=ranks, backend=backend, interconnect_name=interconnect_name),
               label=Text(runqueue.TP_RUN, n=max(ranks) if ranks else 0))


def startup_allowance_s(job: Job) -> float:
    """Seconds a job may take beyond the caps' time limit before it is killed: multi-rank jobs spawn
    their ranks (``launch.STARTUP_S``) and bound their collectives by the limit plus a minute (their
    own clean-up speaks first, ``launch.GRACE_S``); one allowance per launch."""
    if job.kind not in ("collectives", "tp"):
        return 0.0
    from gemmlib.measure import launch

    launches = 1 if job.kind == "collectives" else max(1, len(job.opt("ranks", ())))
    return launches * (launch.STARTUP_S + launch.GRACE_S + 60.0)


def time_limit_s(job: Job, lim: safety.Limits) -> float:
    """The run's wall-time budget: the caps' limit, once per launch for multi-rank jobs."""
    launches = max(1, len(job.opt("ranks", ()))) if job.kind == "tp" else 1
    return launches * lim.time_limit_s


# --------------------------------------------------------------------------- plans
ONE_GEMM, A_GEMM, BLOCK_GEMM = safety.ONE_GEMM, N_("a {m}×{n}×{k} GEMM"), N_("the block's largest GEMM")


@dataclass(frozen=True)
class Plan:
    """What a job will need, estimated before anything is allocated."""

    bytes: float  # peak bytes held at once on the job's device (host memory on a CPU)
    host_bytes: float = 0.0  # GPU jobs: host memory held besides (0 on a CPU: it is all in ``bytes``)
    call_flops: float = 0.0  # the largest single GEMM it runs (timed call or float64 reference)
    call_what: str | Msg = ONE_GEMM  # a message: a refusal shows it in the reader's language
    seconds: float = 0.0  # least wall time of its rows
    rows: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict:
        return {"bytes": self.bytes, "host_bytes": self.host_bytes, "call_flops": self.call_flops,
                "call_what": str(self.call_what), "seconds": self.seconds, "rows": self.rows}


def _check_min_run_time(t: Any, what: str = "time per row") -> float:
    try:
        v = float(t)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be a number of seconds, got {t!r}") from None
    if not math.isfinite(v) or not 0 < v <= MAX_MIN_RUN_TIME_S:
        raise InputError(f"{what} must be more than 0 and at most {MAX_MIN_RUN_TIME_S:g} s, got {t!r}")
    return v


def _rate(device: str, dtype: str = "fp32") -> float:
    """FLOP/s a call can reach at best: measured here when known, else the datasheet (GPU) or
    an optimistic CPU bound. Used for least-time estimates only."""
    best = 0.0
    for c in ceilings_store.all_ceilings().values():
        if c.device == device:
            best = max(best, c.peaks.get(dtype, 0.0), c.peaks.get("fp32", 0.0))
    if device == "cpu":
        return max(best, CPU_FLOPS_BOUND)
    hw = None
    try:
        gpus = [d for d in machine.light_summary() if d.get("kind") != "cpu" and d.get("catalogue")]
    except Exception:  # noqa: BLE001 - no NVML: use the fastest catalogue GPU (a lower bound on time)
        gpus = []
    if gpus:
        hw = machine.match_catalogue(gpus[0]["catalogue"])[0]
    if hw is None:
        hw = get_hardware("H200 SXM")
    return max(best, hw.peak(dtype) or hw.peak("bf16") or 1e15)


def _row_s(min_run_time: float, call_s: float, device: str) -> float:
    """Least seconds of one timed row: its timing budget (do_bench also warms up a quarter of it
    on a GPU) or, for slow calls, the few calls the harness makes at the least."""
    budget = min_run_time * (1.25 if device == "cuda" else 1.0)
    return ROW_OVERHEAD_S + max(budget, 3 * call_s) + call_s


def _err_bytes(elems: float, out_b: float) -> float:
    """harness.rel_error on ``elems`` outputs: the result in float64, the difference and its
    absolute value, each float64 (the reference itself is counted by the caller)."""
    return elems * (out_b + 24)


# ---- precision ------------------------------------------------------------------------------
def _precision_plan(cfg: Any, lim: safety.Limits) -> Plan:
    from gemmlib.measure import precision as bp

    _validate_precision(cfg, lim)
    dev = cfg.device
    dtypes = bp.normalise_dtypes(cfg.dtypes)
    peak = host = 0.0
    seconds = 0.0
    rows = 0
    big = 0.0
    what: str | Msg = ONE_GEMM
    for m, n, k, _label in cfg.shapes:
        mk, kn, mn = m * k, k * n, m * n
        flops = 2.0 * m * n * k
        if flops > big:
            big, what = flops, Msg(A_GEMM, m=m, n=n, k=k)
        src = 4.0 * (mk + kn)
        ref = 8.0 * mn if cfg.check_error else 0.0
        ref_peak = src + (8.0 * (mk + kn + mn) if cfg.check_error else 0.0)
        shape_peak = ref_peak
        # float64 reference time: about half the fp32 speed
        seconds += (flops / (_rate(dev, "fp32") / 2)) if cfg.check_error else 0.0
        host = max(host, 4.0 * max(mk, kn))  # each source is drawn on the host first
        for d in dtypes:
            why = _unsupported_on_cpu(d, dev, m, n, k, cfg)
            if why:
                rows += 1
                continue
            b = 4 if d == "tf32" else dtype_bytes(d)
            one = (mk + kn + mn) * b
            rot = bp._rotation(dev, one, lim)
            call_s = flops / _rate(dev, d)
            if d in ("int8", "fp8"):
                q = 1.0 * (mk + kn)
                sets = rot * q
                make = 8.0 * max(mk, kn) + 4.0 * max(mk, kn)  # float copy, abs / scaled temporaries
                ev = 4.0 * mn * 3 + _err_bytes(mn, 4) if cfg.check_error else 4.0 * mn
                timed = 4.0 * mn
                work = max(make, ev, timed)
                row = 0.0
                if d == "int8" and dev == "cpu" and 4.0 * max(mk, kn) < MMAP_THRESHOLD:
                    # measured: the fp32 sources of every rotated set stay in the heap around their
                    # small int8 copies (blocks below glibc's mmap threshold are not handed back)
                    row += (rot - 1) * 4.0 * (mk + kn)
                if d == "fp8" and dev != "cuda":
                    row += 4.0 * (mk + kn + mn)  # the CPU reference kernel computes in fp32
                n_rows = 1
                if cfg.with_quant:
                    acts = (rot - 1) * (2 if dev == "cuda" else 4) * mk
                    per_call = 8.0 * mk + 1.0 * mk + 4.0 * mn * 3
                    row += acts  # the rotated activations stay while the + quant row is timed
                    work = max(work, per_call)  # its per-call temporaries come and go before the error check
                    n_rows = 2
                row += sets + work
            else:
                copy0 = 0.0 if b == 4 else b * (mk + kn)
                sets = copy0 + (rot - 1) * b * (mk + kn) + (4.0 * max(mk, kn) if rot > 1 else 0.0)
                ev = _err_bytes(mn, b) if cfg.check_error else b * mn
                internal = 4.0 * (mk + kn + mn) if (dev == "cpu" and b == 2) else 0.0  # CPU half GEMMs upcast
                row = sets + max(ev, b * mn) + internal
                n_rows = 1
            shape_peak = max(shape_peak, src + ref + row)
            rows += n_rows
            seconds += n_rows * _row_s(cfg.min_run_time, call_s, dev)
        peak = max(peak, shape_peak)
    if dev != "cpu":
        host += 8.0 * max(m * n for m, n, _k, _ in cfg.shapes) if cfg.check_error else 0.0
    return Plan(bytes=peak, host_bytes=host if dev != "cpu" else 0.0, call_flops=big, call_what=what,
                seconds=seconds, rows=rows)


def _unsupported_on_cpu(d: str, dev: str, m: int, n: int, k: int, cfg: Any) -> bool:
    """Rows that cost nothing: the precision benchmark refuses them with a reason."""
    if dev != "cpu":
        return False
    if d == "tf32":
        return True
    return d == "fp16" and 2 * m * n * k > cfg.cpu_fp16_max_flops


def _validate_precision(cfg: Any, lim: safety.Limits) -> None:
    """The precision benchmark's own checks that need no device, plus the time per row."""
    from gemmlib.measure import precision as bp

    if not cfg.shapes:
        raise InputError("no shape to run; give M, N and K")
    if len(cfg.shapes) > 32:
        raise InputError(f"{len(cfg.shapes)} shapes is too many for one run (at most 32)")
    for m, n, k, _ in cfg.shapes:
        safety.check_dims(lim, M=m, N=n, K=k)
    bp.normalise_dtypes(cfg.dtypes)
    _check_min_run_time(cfg.min_run_time)


# ---- tiling ---------------------------------------------------------------------------------
def _tiling_plan(cfg: Any, lim: safety.Limits) -> Plan:
    from gemmlib.explain.tiling import tile_count
    from gemmlib.measure import harness
    from gemmlib.measure import tiling as bt

    bt._validate(cfg, lim)
    _check_min_run_time(cfg.min_run_time)
    dev = cfg.device
    m, n, k = cfg.mnk
    dname = get_dtype(cfg.dtype).name
    eb = get_dtype(dname).bytes
    mk, kn, mn = m * k, k * n, m * n
    set_bytes = (mk + kn) * eb
    sets = harness.rotation_count(set_bytes, max_bytes=lim.max_bytes / 4)
    flops = 2.0 * m * n * k
    # Inputs are drawn in fp32 on the host, then cast: one fp32 pair at a time.
    inputs = sets * set_bytes + (4.0 * (mk + kn) if eb != 4 or dev != "cpu" else 0.0)
    ref = 8.0 * mn
    ref_peak = inputs + 8.0 * (mk + kn + mn)
    row_peak = 0.0
    seconds = flops / (_rate(dev, "fp32") / 2)  # the float64 reference
    rows = 0
    call_s = flops / _rate(dev, dname)
    for impl in cfg.impls:
        tiles = [None] if impl == "torch" else list(cfg.tiles)
        for t in tiles:
            rows += 1
            if impl == "torch":
                out = eb * mn
            elif impl == "python_tiled":
                if tile_count(m, n, k, t) > bt.MAX_TILE_CALLS.get(dev, 5000):
                    continue
                out = 4.0 * mn + eb * mn  # the fp32 accumulator and the result
            elif impl == "numpy_blocked":
                if dev != "cpu" or dname == "bf16" or tile_count(m, n, k, t) > bt.MAX_TILE_CALLS["cpu"]:
                    continue
                out = eb * mn + 4.0 * t * t * 2
            else:  # triton
                out = eb * mn + (4.0 * mn if dev != "cuda" else 0.0)  # the interpreter's numpy copies
                if dev != "cuda":
                    seconds += 1.0  # one correctness check in the interpreter (capped at ~1 s)
                    row_peak = max(row_peak, out + _err_bytes(mn, eb))
                    continue
            calls = tile_count(m, n, k, t) if impl in ("python_tiled", "numpy_blocked") else 1
            seconds += _row_s(cfg.min_run_time, call_s + calls * 20e-6, dev)
            row_peak = max(row_peak, out + _err_bytes(mn, eb), 2 * out)
    peak = max(ref_peak, inputs + ref + row_peak)
    host = 8.0 * (mk + kn + mn) + 4.0 * max(mk, kn) if dev != "cpu" else 0.0
    return Plan(bytes=peak, host_bytes=host, call_flops=flops, call_what=Msg(A_GEMM, m=m, n=n, k=k),
                seconds=seconds, rows=rows)


# ---- batching -------------------------------------------------------------------------------
def _batching_plan(cfg: Any, lim: safety.Limits) -> Plan:
    from gemmlib.measure import batching as bb
    from gemmlib.measure import harness

    bb._validate(cfg, lim)
    _check_min_run_time(cfg.min_run_time)
    dev = cfg.device
    dname = get_dtype(cfg.dtype).name
    eb = get_dtype(dname).bytes
    m, k, n = cfg.m, cfg.k, cfg.n
    peak = 0.0
    carry = 0.0  # what the previous row still holds while the next one allocates (its first set)
    seconds = 0.0
    rows = 0
    big, what = 0.0, ONE_GEMM
    for b in cfg.batches:
        for mode in cfg.modes:
            rows += 1
            if mode == "loop" and b > bb.MAX_LOOP_CALLS:
                continue
            w = (b if mode == "bmm" else 1) * k * n
            x = b * m * k
            out = b * m * n
            one_set = bb._mode_memory(mode, b, m, k, n, eb)
            sets = harness.rotation_count(one_set, max_bytes=lim.max_bytes / 4, max_sets=4)
            inputs = sets * (w + x) * eb
            sub = min(b, bb.REF_REQUESTS)
            ref = 8.0 * (sub * m * k + (sub if mode == "bmm" else 1) * k * n + sub * m * n)
            stack = out * eb if mode == "loop" else 0.0
            check = stack + _err_bytes(sub * m * n, eb)
            row = inputs + out * eb + max(ref + check, out * eb)
            peak = max(peak, row + carry)
            carry = (w + x) * eb + 8.0 * sub * m * n
            flops = 2.0 * b * m * n * k
            if flops > big:
                big, what = flops, Msg(N_("a {b}×{m}×{k} by {k}×{n} batch ({mode})"), b=b, m=m, k=k, n=n, mode=mode)
            launches = b if mode == "loop" else 1
            call_s = flops / _rate(dev, dname) + launches * 5e-6
            seconds += _row_s(cfg.min_run_time, call_s, dev)
    host = 0.0 if dev == "cpu" else 8.0 * bb.REF_REQUESTS * m * (k + n) + 8.0 * k * n
    return Plan(bytes=peak, host_bytes=host, call_flops=big, call_what=what, seconds=seconds, rows=rows)


def _article_configs(job: Job) -> list[Any]:
    from gemmlib.measure import batching as bb

    o = dict(job.options)
    common = dict(device=job.device, k=o["k"], n=o["n"], dtype=o["dtype"], batches=(o["batch"],),
                  modes=("loop", "stacked"), min_run_time=o["min_run_time"])
    return [bb.BatchingConfig(m=o["m"], **common), bb.BatchingConfig(m=1, **common)]


def _sum_plans(plans: list[Plan]) -> Plan:
    top = max(plans, key=lambda p: p.call_flops)
    return Plan(bytes=max(p.bytes for p in plans), host_bytes=max(p.host_bytes for p in plans),
                call_flops=top.call_flops, call_what=top.call_what, seconds=sum(p.seconds for p in plans),
                rows=sum(p.rows for p in plans))


# ---- ceilings -------------------------------------------------------------------------------
def _ceiling_parts(job: Job) -> tuple[list[Any], int]:
    from gemmlib.measure import precision as bp

    size, copy_bytes = job.opt("size"), job.opt("copy_bytes")
    base = bp.PrecisionConfig(device=job.device, shapes=((size, size, size, "ceiling"),), with_quant=False,
                              check_error=False, min_run_time=0.3 if job.opt("quick") else 0.6)
    return [base.with_dtypes((d,)) for d in bp.PRECISION_DTYPES], copy_bytes


def _ceilings_plan(job: Job, lim: safety.Limits) -> Plan:
    cfgs, copy_bytes = _ceiling_parts(job)
    parts = [_precision_plan(c, lim) for c in cfgs]
    n_copy = max(1, int(copy_bytes) // 4)
    copy = Plan(bytes=2.0 * 4 * n_copy, seconds=_row_s(cfgs[0].min_run_time, 0.0, job.device), rows=1)
    return _sum_plans(parts + [copy])


# ---- waves ----------------------------------------------------------------------------------
def _waves_plan(job: Job, lim: safety.Limits) -> Plan:
    from gemmlib.measure import tiling as bt

    o = dict(job.options)
    ns = list(o["ns"])
    if not ns or len(ns) > bt.MAX_WAVE_POINTS:
        raise InputError(f"give 1 to {bt.MAX_WAVE_POINTS} values of N, got {len(ns)}")
    m, k = o["m"], o["k"]
    safety.check_dims(lim, M=m, K=k, **{f"N{i}": v for i, v in enumerate(ns)})
    mrt = _check_min_run_time(o["min_run_time"])
    dname = get_dtype(o["dtype"]).name
    if job.device != "cuda":
        return Plan(bytes=0.0, rows=2 * len(ns), notes=("refused on a CPU: no SMs, no waves",))
    eb = get_dtype(dname).bytes
    nmax = max(ns)
    peak = (m * k + k * nmax + k * nmax + m * nmax) * eb
    flops = 2.0 * m * nmax * k
    call_s = flops / _rate("cuda", dname)
    return Plan(bytes=peak, call_flops=flops, call_what=Msg(A_GEMM, m=m, n=nmax, k=k),
                seconds=2 * len(ns) * _row_s(mrt, call_s, "cuda"), rows=2 * len(ns))


# ---- profiler -------------------------------------------------------------------------------
def _profile_bytes(cfg: Any) -> tuple[float, float, float]:
    """(weights, one layer's activations held in blocks below MMAP_THRESHOLD, the large
    blocks alive at once) of one forward pass of a block stack, in bytes."""
    m = cfg.model
    b = dtype_bytes(cfg.dtype)
    h, f, q, kv = m.hidden, m.ffn, m.q_dim, m.kv_dim
    weights = m.layers * (2 * h * q + 2 * h * kv + m.mlp_mats * h * f + 4 * h) * b
    t = cfg.tokens
    s2 = cfg.batch * cfg.heads * cfg.seq_len ** 2
    # one layer: 6 hidden-wide (norms, projections, residuals), 3 query-wide, 3 K/V-wide and
    # mlp_mats + 1 MLP-wide tensors; eager attention: scores, scaled, masked, softmax (fp32) and
    # the probabilities in the run's dtype
    tensors = [t * h * b] * 6 + [t * q * b] * 3 + [t * kv * b] * 3 + [t * f * b] * (m.mlp_mats + 1)
    if cfg.attention == "eager":
        tensors += [s2 * b] * 3 + [s2 * 4.0] + ([s2 * b] if b != 4 else [])
    small = sum(x for x in tensors if x < MMAP_THRESHOLD)
    large = sum(x for x in tensors if x >= MMAP_THRESHOLD)
    mask = 2.0 * cfg.seq_len ** 2 * max(b, 4)  # the causal mask and its fp32 original
    return float(weights + mask), float(small), float(large)


def _profile_ops_per_layer(cfg: Any) -> int:
    return 40 if cfg.attention == "eager" else 34


def _profile_plan(job: Job, lim: safety.Limits) -> Plan:
    from gemmlib.measure import profiler as pf

    cfg = job.config
    steps = job.opt("steps", 3)
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_PROFILE_STEPS:
        raise InputError(N_("profiled passes must be a whole number from 1 to {most}, got {steps!r}"),
                         most=MAX_PROFILE_STEPS, steps=steps)
    if not 1 <= cfg.layers <= MAX_PROFILE_LAYERS:
        raise InputError(N_("layers must be from 1 to {most} (every layer is the same; a few smooth the numbers), "
                            "got {layers}"), most=MAX_PROFILE_LAYERS, layers=cfg.layers)
    if job.opt("hardware"):
        get_hardware(job.opt("hardware"))  # an unknown name is refused here, not in the worker
    eff = job.opt("efficiency", 0.7)
    if not (isinstance(eff, (int, float)) and math.isfinite(eff) and 0 < eff <= 1):
        raise InputError(f"efficiency must be in (0, 1], got {eff!r}")
    safety.check_dims(lim, hidden=cfg.hidden, intermediate=cfg.intermediate, seq_len=cfg.seq_len,
                      tokens=cfg.tokens)
    dev = job.device
    weights, small, large = _profile_bytes(cfg)
    # the profiler keeps one record per op and pass (a few hundred bytes each) and exports them
    events = 2e3 * _profile_ops_per_layer(cfg) * cfg.layers * (steps + 2)
    seconds = _block_seconds(cfg, dev, steps + 2)
    flops = max(2.0 * cfg.tokens * cfg.hidden * max(cfg.intermediate, cfg.hidden),
                2.0 * cfg.batch * cfg.heads * cfg.seq_len ** 2 * cfg.head_dim)
    del pf
    # Measured on a CPU: under torch.profiler every pass leaves about one layer's worth of small
    # activation blocks in the heap (the allocator cannot reuse them between the profiler's own
    # records), so they are counted once per pass; large blocks go back to the system.
    held = weights + small * (steps + 1) + large + events if dev == "cpu" else weights + small + large
    return Plan(bytes=held, host_bytes=events if dev != "cpu" else 0.0, call_flops=flops,
                call_what=BLOCK_GEMM, seconds=seconds, rows=steps)


def _block_seconds(cfg: Any, device: str, passes: int) -> float:
    """Least time of ``passes`` forward passes: the roofline at the datasheet peak plus the
    per-op overhead of eager PyTorch (what bounds small blocks)."""
    from gemmlib.measure import profiler as pf

    hw = pf.hardware_for(device, "")
    est = pf.predict(cfg, hw, 1.0)
    compute = est.gemm_time_s + est.other_time_s
    if device == "cpu":
        compute = min(compute, pf.predicted_gemm_flops(cfg) / _rate("cpu", cfg.dtype))
    ops = _profile_ops_per_layer(cfg) * cfg.layers
    return passes * (compute + ops * PROFILE_OP_OVERHEAD_S.get(device, 10e-6))


def _block_bench_plan(job: Job, lim: safety.Limits) -> Plan:
    cfg = job.config
    if not 1 <= cfg.layers <= MAX_PROFILE_LAYERS:
        raise InputError(f"layers must be from 1 to {MAX_PROFILE_LAYERS}, got {cfg.layers}")
    mrt = _check_min_run_time(job.opt("min_run_time", 0.3))
    safety.check_dims(lim, hidden=cfg.hidden, intermediate=cfg.intermediate, seq_len=cfg.seq_len,
                      tokens=cfg.tokens)
    weights, small, large = _profile_bytes(cfg)
    acts = small + large
    inputs = 3.0 * cfg.tokens * cfg.hidden * dtype_bytes(cfg.dtype)
    one_pass = _block_seconds(cfg, job.device, 1)
    flops = max(2.0 * cfg.tokens * cfg.hidden * max(cfg.intermediate, cfg.hidden),
                2.0 * cfg.batch * cfg.heads * cfg.seq_len ** 2 * cfg.head_dim)
    return Plan(bytes=weights + acts + inputs, call_flops=flops, call_what=BLOCK_GEMM,
                seconds=_row_s(mrt, one_pass, job.device), rows=1)


# ---- calibration ----------------------------------------------------------------------------
def _calibration_plan(job: Job, lim: safety.Limits) -> Plan:
    from gemmlib.measure import calibrate as cb

    run = job.config
    o = dict(job.options)
    m = run.model
    if m.is_moe:
        raise InputError(f"{m.name} is a mixture of experts; calibrate a dense model")
    safety.check_dims(lim, hidden=m.hidden, ffn=m.ffn, vocab=m.vocab, tokens=run.batch * run.seq_len)
    for key in ("min_run_time", "validate_run_time"):
        if key in o:
            _check_min_run_time(o[key], key.replace("_", " "))
    eff = o.get("efficiency", 1.0)
    if not (math.isfinite(eff) and 0 < eff <= 1):
        raise InputError(f"efficiency must be in (0, 1], got {eff!r}")
    threads = o.get("threads")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= 1024):
        raise InputError(f"threads must be a whole number from 1 to 1024, got {threads!r}")
    # calibrate's own estimate of a validation run (weights, cache, a prefill's activations and
    # scores), and the largest GEMM: the LM head over the prompt, or an MLP projection
    flops = 2.0 * run.batch * run.seq_len * m.hidden * max(m.vocab, m.ffn)
    return Plan(bytes=float(cb.memory_needed(run)), call_flops=flops, call_what=N_("its largest GEMM"), rows=1)


# ---- multi-rank ---------------------------------------------------------------------------
def _collectives_plan(job: Job, lim: safety.Limits) -> Plan:
    from gemmlib.measure import collectives as cl
    from gemmlib.measure import launch

    p = launch.plan(job.opt("nproc"), job.opt("backend", "auto"), lim)
    sizes = job.config.sizes or cl.default_sizes(p.kind, p.nproc, lim)
    cl.check_sizes(sizes, p.kind, p.nproc, lim)
    buffers = cl.BUFFERS_PER_SIZE * max(sizes)
    # the ranks are processes of their own: each gets the worker's memory allowance (rlimits are
    # inherited), so the plan counts one rank's start-up and buffers; the caps see them all
    return Plan(bytes=float(launch.RANK_MEMORY_BYTES + buffers) if p.kind == "cpu" else float(buffers),
                host_bytes=float(launch.RANK_MEMORY_BYTES) if p.kind != "cpu" else 0.0, rows=len(sizes))


def _tp_plan(job: Job, lim: safety.Limits) -> Plan:
    from gemmlib.core import interconnect
    from gemmlib.measure import launch
    from gemmlib.measure import tp as tpm

    ranks = job.opt("ranks", ())
    if not ranks:
        raise InputError(N_("choose at least one rank count"))
    cfg = job.config
    worst = 0.0
    for n in ranks:
        p = launch.plan(n, job.opt("backend", "auto"), lim)
        tpm.check_divisible(cfg.model, p.nproc)
        need = cfg.bytes_per_rank(p.nproc)
        safety.check_memory(need * (p.nproc if p.kind == "cpu" else 1), p.kind, lim)
        if p.kind == "cpu":
            lim.check_cpu_flops(tpm.layer_flops(cfg.model, cfg.seq_len, cfg.batch), N_("one layer"))
        worst = max(worst, need)
    if job.opt("interconnect_name"):
        interconnect.get_link(job.opt("interconnect_name"))
    return Plan(bytes=float(launch.RANK_MEMORY_BYTES + worst), rows=len(ranks))


# --------------------------------------------------------------------------- the caps
def _check_device(device: str) -> None:
    if device not in ("cpu", "cuda", "mps"):
        raise InputError(f"unknown device {device!r}; use cpu or cuda")


def plan(job: Job, lim: safety.Limits | None = None) -> Plan:
    """Validate ``job`` (InputError) and estimate what it needs; nothing is allocated."""
    lim = lim or safety.limits()
    if job.kind not in KINDS:
        raise InputError(f"unknown benchmark {job.kind!r}")
    _check_device(job.device)
    if job.kind not in ("waves", "collectives", "tp"):  # the wave sweep answers a CPU with rows that say why
        from gemmlib.measure import harness
        harness.require_device(job.device)
    if job.kind == "precision":
        return _precision_plan(job.config, lim)
    if job.kind == "tiling":
        return _tiling_plan(job.config, lim)
    if job.kind == "batching":
        return _batching_plan(job.config, lim)
    if job.kind == "article":
        return _sum_plans([_batching_plan(c, lim) for c in _article_configs(job)])
    if job.kind == "ceilings":
        return _ceilings_plan(job, lim)
    if job.kind == "waves":
        return _waves_plan(job, lim)
    if job.kind == "profile":
        return _profile_plan(job, lim)
    if job.kind in ("calibrate", "validate"):
        return _calibration_plan(job, lim)
    if job.kind == "collectives":
        return _collectives_plan(job, lim)
    if job.kind == "tp":
        return _tp_plan(job, lim)
    return _block_bench_plan(job, lim)


def admit(job: Job, lim: safety.Limits | None = None) -> Plan:
    """``plan`` plus the server's caps, the same for every benchmark: bytes, the largest CPU GEMM,
    and time. InputError (before anything is allocated) when one is exceeded."""
    lim = lim or safety.limits()
    p = plan(job, lim)
    if job.kind in ("collectives", "tp"):  # their own checks counted every rank against the caps
        return p
    safety.check_memory(p.bytes, job.device, lim)
    if p.host_bytes:
        safety.check_memory(p.host_bytes, "cpu", lim)
    if job.device == "cpu":
        lim.check_cpu_flops(p.call_flops, p.call_what)
    if p.seconds > lim.time_limit_s:
        raise InputError(N_("this run would take at least {seconds:.3g} s ({rows} rows), above this server's limit "
                            "of {limit:g} s per run (GEMM_TIME_LIMIT_S); choose fewer or smaller shapes, or less time "
                            "per row"), seconds=p.seconds, rows=p.rows, limit=lim.time_limit_s)
    return p


def memory_limit(p: Plan, device: str) -> tuple[int, int | None]:
    """(host bytes, device bytes or None) a worker may add to what it holds after start-up: twice
    the estimate (checked against measured peaks to within 1.5×; the limit counts address space
    reserved by the allocator, a little more than what is resident) plus room for the libraries'
    own buffers."""
    if device == "cpu":
        return int(2.0 * p.bytes + 512 * MiB), None
    return int(1.5 * p.host_bytes + 2048 * MiB), int(1.5 * p.bytes + 512 * MiB)


# --------------------------------------------------------------------------- in the worker
def prepare(job: Job) -> None:
    """Import what the job needs and start the thread pools, so that the worker's footprint
    after this is its baseline (the memory limit is set on top of it)."""
    import torch

    if job.kind in ("precision", "ceilings"):
        import gemmlib.measure.precision  # noqa: F401
    elif job.kind in ("tiling", "waves"):
        import gemmlib.measure.tiling  # noqa: F401
        from gemmlib.measure import triton_gemm as tg
        tg.status()
    elif job.kind in ("batching", "article"):
        import gemmlib.measure.batching  # noqa: F401
    elif job.kind in ("collectives", "tp"):
        import gemmlib.measure.collectives  # noqa: F401
        import gemmlib.measure.tp  # noqa: F401
    else:
        import torch.profiler

        import gemmlib.measure.calibrate  # noqa: F401
        import gemmlib.measure.profiler  # noqa: F401
    import torch.utils.benchmark  # noqa: F401
    x = torch.randn(256, 256)
    (x @ x).sum().item()  # the CPU thread pool exists from here on
    if job.kind in ("profile", "calibrate", "validate"):  # the profiler's own start-up (~150 MB) belongs to the baseline
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True,
                                    with_flops=True) as prof:
            (x @ x).sum()
        prof.events()
    if job.device == "cuda":
        y = torch.randn(256, 256, device="cuda")
        (y @ y).sum().item()
        torch.cuda.synchronize()


Progress = Callable[[float | None, str], None]


def execute(job: Job, progress: Progress) -> Any:
    """Run ``job`` here and return plain, JSON-able data."""
    from gemmlib.core.results import _jsonable

    lim = safety.limits()
    if job.kind == "precision":
        from gemmlib.measure import precision as bp
        rs = bp.run_precision(job.config, progress=progress, deadline=safety.Deadline(lim.time_limit_s), lim=lim)
        return [r.to_dict() for r in rs]
    if job.kind == "tiling":
        from gemmlib.measure import tiling as bt
        return [r.to_dict() for r in bt.run_tiling(job.config, progress=progress)]
    if job.kind == "batching":
        from gemmlib.measure import batching as bb
        return [r.to_dict() for r in bb.run_batching(job.config, progress=progress)]
    if job.kind == "article":
        from gemmlib.measure import batching as bb
        o = dict(job.options)
        progress(None, Text(N_("the article's example: 20 requests one by one, then stacked")))
        ex = bb.run_article_example(job.device, o["dtype"], batch=o["batch"], m=o["m"], k=o["k"], n=o["n"],
                                    min_run_time=o["min_run_time"])
        return _jsonable({**{k: v for k, v in ex.items() if k != "results"},
                          "results": [r.to_dict() for r in ex["results"]]})
    if job.kind == "ceilings":
        from gemmlib.measure import devices
        c = devices.measure_ceilings(job.device, quick=job.opt("quick", False), size=job.opt("size"),
                                     copy_bytes=job.opt("copy_bytes"), progress=progress, save=False)
        return {"ceilings": c.to_dict(), "results": [r.to_dict() for r in c.results]}
    if job.kind == "waves":
        from gemmlib.measure import tiling as bt
        o = dict(job.options)
        rs = bt.run_wave_sweep(job.device, m=o["m"], k=o["k"], ns=list(o["ns"]), dtype=o["dtype"],
                               tile=tuple(o["tile"]), min_run_time=o["min_run_time"], progress=progress)
        return [r.to_dict() for r in rs]
    if job.kind == "profile":
        from gemmlib.measure import profiler as pf
        o = dict(job.options)
        res = pf.profile_block(job.config, job.device, steps=o["steps"], trace_path=o.get("trace_path"),
                               monitor=o["monitor"], hardware=o.get("hardware"), efficiency=o["efficiency"],
                               progress=lambda text: progress(None, text))
        return _jsonable(res.to_dict())
    if job.kind in ("calibrate", "validate"):
        return _jsonable(_execute_calibration(job, progress))
    if job.kind == "collectives":
        from gemmlib.measure import collectives as cl
        run = cl.run_collectives(job.config, nproc=job.opt("nproc"), backend=job.opt("backend", "auto"), lim=lim,
                                 progress=progress)
        return _jsonable(run.to_dict())
    if job.kind == "tp":
        from gemmlib.measure import tp as tpm
        ranks = job.opt("ranks")
        out = []
        for i, n in enumerate(ranks):
            def step(frac: float, text: str, _i: int = i, _n: int = n) -> None:
                progress((_i + frac) / len(ranks), Text(N_("{n} ranks: {text}"), n=_n, text=text))
            out.append(tpm.run_tp(job.config, nproc=n, backend=job.opt("backend", "auto"), lim=lim, progress=step,
                                  interconnect_name=job.opt("interconnect_name")).to_dict())
        return _jsonable(out)
    # block_bench
    from gemmlib.measure import profiler as pf
    progress(None, Text(N_("timing the block with the harness (no L2 flush between passes) while NVML samples "
                        "its GPU")))
    r, mon = pf.monitored_benchmark(job.config, job.device, min_run_time=job.opt("min_run_time", 0.3))
    return _jsonable({"result": r.to_dict(), "monitor": mon.to_dict()})


def _execute_calibration(job: Job, progress: Progress) -> dict:
    from gemmlib.core.calibration import Calibration
    from gemmlib.measure import calibrate as cb

    o = dict(job.options)
    out: dict[str, Any] = {"calibration": None, "validation": None}
    if job.kind == "calibrate":
        do_val = o.get("validate", False)
        part = (lambda lo, hi: (lambda f, t: progress(lo + (hi - lo) * f, t))) if do_val else \
            (lambda lo, hi: progress)
        cal = cb.run_calibration(job.config, job.device, o.get("dtypes"), min_run_time=o["min_run_time"],
                                 progress=part(0.0, 0.6), save=False, threads=o.get("threads"))
        out["calibration"] = cal.to_dict()
        if not do_val:
            return out
        v = cb.run_validation(job.config, job.device, calibration=cal, efficiency=o.get("efficiency", 1.0),
                              min_run_time=o.get("validate_run_time", 0.5), progress=part(0.6, 1.0),
                              threads=o.get("threads"))
    else:
        cal_d = o.get("calibration")
        cal = Calibration.from_dict(cal_d) if cal_d else None
        v = cb.run_validation(job.config, job.device, calibration=cal, efficiency=o.get("efficiency", 1.0),
                              min_run_time=o.get("min_run_time", 0.5), progress=progress, threads=o.get("threads"))
    out["validation"] = {**v.to_dict(), "table": cb.validation_table(v)}
    return out


# --------------------------------------------------------------------------- back on the server
def results(rows: list[dict]) -> list[BenchResult]:
    """BenchResult rows from a worker's data."""
    return [BenchResult.from_dict(r) for r in rows]


def monitor_result(d: dict | None) -> Any:
    """A MonitorResult from its ``to_dict()`` data (None stays None)."""
    if d is None:
        return None
    from gemmlib.measure.monitor import MonitorResult, Sample

    samples = [Sample(**{k: v for k, v in s.items() if k in Sample.__dataclass_fields__})
               for s in d.get("samples") or []]
    return MonitorResult(available=bool(d.get("available")), reason=str(d.get("reason", "")),
                         device_name=str(d.get("device_name", "")), interval_s=float(d.get("interval_s") or 0),
                         samples=samples, errors=list(d.get("errors") or []))


def profile_result(d: dict, cfg: Any) -> Any:
    """A ProfileResult from a worker's data and the BlockConfig the server sent."""
    from gemmlib.measure import profiler as pf

    ops = [pf.OpStat(name=o["name"], shapes=o["shapes"], calls=o["calls"], time_s=o["time_s"], share=o["share"],
                     kind=o["kind"], flops=o["flops"]) for o in d.get("ops") or []]
    p = d.get("prediction")
    pred = None if p is None else pf.Prediction(
        hardware=p["hardware"], dtype=p["dtype"], efficiency=p["efficiency"], gemm_flops=p["gemm_flops"],
        other_flops=p["other_flops"], gemm_time_s=p["gemm_time_s"], other_time_s=p["other_time_s"],
        rows=tuple(p.get("rows") or ()), source=p.get("source", ""))
    return pf.ProfileResult(config=cfg, device=d["device"], device_name=d["device_name"], steps=d["steps"],
                            time_basis=d["time_basis"], total_time_s=d["total_time_s"], gemm_time_s=d["gemm_time_s"],
                            gemm_flops=d["gemm_flops"], predicted_gemm_flops=d["predicted_gemm_flops"],
                            wall_s=d["wall_s"], ops=ops, prediction=pred, monitor=monitor_result(d.get("monitor")),
                            trace_path=d.get("trace_path"), notes=list(d.get("notes") or []))


# --------------------------------------------------------------------------- a step's text across the pipe
def message_data(text: Any) -> dict | None:
    """A step's text as JSON data: its template and values when it is a Msg or a Text of one (a
    value that is a message itself nested the same way, any other value as its text); None for
    plain text. The server rebuilds it with :func:`message_from`, so a page shows it translated."""
    msg = text.msg if isinstance(text, Text) else text
    if isinstance(text, Text) and hasattr(msg, "templates"):  # Text.reworded: its text and templates
        return {"reworded": str(text), "templates": list(msg.templates)}
    if not isinstance(msg, Msg):
        return None
    params: dict[str, Any] = {}
    for k, v in msg.params.items():
        sub = message_data(v) if isinstance(v, (Msg, Text)) else None
        if sub is not None:
            params[k] = sub
        elif isinstance(v, (str, int, float, bool, type(None))) and not isinstance(v, Text):
            params[k] = v
        else:
            params[k] = str(v)
    return {"template": msg.template, "params": params}


def message_from(data: Any, text: str) -> str:
    """The Text that :func:`message_data` sent, when it reads exactly as the English ``text`` the
    worker wrote (else ``text`` itself: a value that JSON could not carry as it was, a cut text)."""
    if not isinstance(data, dict):
        return text
    try:
        t = _text_from(data)
    except (KeyError, IndexError, ValueError, TypeError, AttributeError):
        return text
    return t if str(t) == text else text


def _text_from(data: dict) -> Text:
    if "reworded" in data:
        return Text.reworded(str(data["reworded"]), [str(t) for t in data.get("templates") or ()])
    params = {k: _text_from(v) if isinstance(v, dict) else v for k, v in (data.get("params") or {}).items()}
    return Text(str(data["template"]), **params)


def with_label(job: Job, label: str) -> Job:
    return replace(job, label=label)
