"""A benchmark run before it starts: what it will hold, its largest call, and how long it takes.

Every benchmark's ``plan(config, limits) -> Plan`` (its spec, ``gemmlib.measure.spec``) counts what
its run will hold at its peak — every buffer: inputs and their rotated copies, outputs, the float64
reference and the copies its error check makes —, its largest single GEMM, and its time through
the ONE time model below. The same ``Plan`` is the estimate line beside a page's button, the
command line's refusal and the queue's admission (:func:`admit`), so they never disagree.

The time model: each row the harness will time (a :class:`Row`) costs what the harness spends on
it (``row_seconds``: its warm-up calls, then ``min_run_time`` of timing, but at least three calls
when one call is slow), plus building its inputs and its untimed calls; the float64 references
are done once at half the fp32 rate. A call's rate comes, in this order, from

1. a row already measured here with the same benchmark, name and format (this server's
   ``core.results.recorded()``, the one nearest in FLOPs): what this machine really does;
2. the speed probe a worker timed in the last quarter of an hour (``core.speed``,
   ``measure.speedprobe``): this format's GEMM on this machine under its load now;
3. the ceilings measured on this machine (``core.ceilings``);
4. the datasheet at ``DEFAULT_EFFICIENCY`` of its peak: the catalogue row of the GPU found here,
   or, for a CPU, the catalogue's placeholder row (a 2-core server) scaled to this machine's cores.

Then :func:`planned` scales the whole estimate by how much longer the last runs of the same
benchmark on the same device took than theirs (``core.speed.ratio``: the runner folds in every
run's wall time, and a run killed at its limit as at least that long), so a kind of run that was
killed once is refused up front the next time. The worker checks the plan again after its own
probe, before its first row (``gemmlib.measure.worker``), and refuses what cannot finish in time.

``Plan.sources`` says which it used. Nothing here imports torch: a page shows a plan beside its
button, and the caps refuse a run before any worker starts.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from gemmlib.core import format as fmt
from gemmlib.core import machine, speed
from gemmlib.core.ceilings import all_ceilings, cpu_row
from gemmlib.core.errors import InputError
from gemmlib.core.flops import DEFAULT_EFFICIENCY
from gemmlib.core.hardware import CATALOGUE, DEFAULT_GPU, Hardware
from gemmlib.core.i18n import N_, Msg, Text
from gemmlib.core.results import BenchResult, recorded
from gemmlib.core.units import MiB
from gemmlib.measure import safety

ROW_OVERHEAD_S = 0.05  # per row: the result row, the progress report
GPU_CALL_FLOOR_S = 10e-6  # a kernel launch: no call on a GPU is faster than this
SOURCES = ("measured here", "probed here", "measured ceilings", "datasheet", "recent runs")
# Seconds per operand element to build one input set (random normals on the CPU, converted or
# quantized to the format): measured on a 2-core x86 server with this project's precision rows.
# A row measured here (its ``extra["wall_s"]``) corrects them for this machine.
PREP_S_PER_ELEMENT = {"fp32": 2e-9, "tf32": 2e-9, "bf16": 12e-9, "fp16": 10e-9, "int8": 30e-9, "fp8": 55e-9}
CPU_PLACEHOLDER_CORES = 2  # the catalogue's CPU row is a 2-core server
MAX_MIN_RUN_TIME_S = 30.0
MMAP_THRESHOLD = 4 * MiB  # the worker fixes glibc's mmap threshold here (runner): blocks this large are
# returned to the system when freed; smaller ones stay in the heap

ONE_GEMM, A_GEMM, BLOCK_GEMM = safety.ONE_GEMM, N_("a {m}×{n}×{k} GEMM"), N_("the block's largest GEMM")


# --------------------------------------------------------------------------- the plan
@dataclass(frozen=True)
class Plan:
    """What a run will need, estimated before anything is allocated."""

    bytes: float  # peak bytes held at once on the run's device (host memory on a CPU)
    host_bytes: float = 0.0  # GPU runs: host memory held besides (0 on a CPU: it is all in ``bytes``)
    call_flops: float = 0.0  # the largest single GEMM it runs (timed call or float64 reference)
    call_what: str | Msg = ONE_GEMM  # a message: a refusal shows it in the reader's language
    seconds: float = 0.0  # the time model's estimate of the whole run
    rows: int = 0  # result rows
    steps: int = 0  # the steps its progress counts (0: it reports fractions only)
    sources: tuple[str, ...] = ()  # where the rates came from (keys of SOURCES)
    launches: int = 0  # multi-rank runs: rank launches (each its own start-up; the caps counted every rank)
    step_s: tuple[float, ...] = ()  # the time model's seconds of each step, in the order the run reports them
    # (empty: not planned step by step, taken as equal shares of ``seconds``)

    def step_weights(self) -> tuple[float, ...]:
        """Each step's share of the run's time (summing to 1), in the order its progress counts them: its own
        ``step_s`` where the plan has one per step, else equal shares; empty without steps. The run box's time
        left reads the progress through them (a run of small shapes, then large ones, is not half done at half
        its steps)."""
        if not self.steps:
            return ()
        each = self.step_s if len(self.step_s) == self.steps and all(
            math.isfinite(s) and s >= 0 for s in self.step_s) else ()
        total = sum(each)
        if not each or total <= 0:
            return (1.0 / self.steps,) * self.steps
        return tuple(s / total for s in each)

    @property
    def count(self) -> int:
        """The steps a run's progress and its estimate count (its rows where it reports no steps): the one count
        the caption beside its button, its time refusal and its progress name."""
        return self.steps or self.rows

    @property
    def basis(self) -> str:
        return "rates " + " and ".join(self.sources) if self.sources else "nothing to time"

    def text(self) -> str:
        """``"about 42 s for 12 steps (rates measured here)"``"""
        return f"about {fmt.duration(max(1.0, round(self.seconds)))} for {self.count} steps ({self.basis})"


def sum_plans(plans: list[Plan], steps: int | None = None) -> Plan:
    """Plans run one after the other: the largest peak, the largest call, the times and rows added."""
    top = max(plans, key=lambda p: p.call_flops)
    each: tuple[float, ...] = ()
    if steps is None:  # one after the other: each part's steps, its own shares of its time (equal ones without)
        each = tuple(w * p.seconds for p in plans for w in p.step_weights())
    return Plan(bytes=max(p.bytes for p in plans), host_bytes=max(p.host_bytes for p in plans),
                call_flops=top.call_flops, call_what=top.call_what, seconds=sum(p.seconds for p in plans),
                rows=sum(p.rows for p in plans), steps=sum(p.steps for p in plans) if steps is None else steps,
                sources=tuple(s for s in SOURCES if any(s in p.sources for p in plans)), step_s=each)


def check_min_run_time(t: Any, what: str = "time per row") -> float:
    """The seconds of timing per row, in (0, MAX_MIN_RUN_TIME_S]; InputError naming ``what`` otherwise."""
    try:
        v = float(t)
    except (TypeError, ValueError):
        raise InputError(N_("{what} must be a number of seconds, got {value!r}"), what=what, value=t) from None
    if isinstance(t, bool) or not math.isfinite(v) or not 0 < v <= MAX_MIN_RUN_TIME_S:
        raise InputError(N_("{what} must be more than 0 and at most {most:g} s, got {value!r}"), what=what,
                         most=MAX_MIN_RUN_TIME_S, value=t)
    return v


def check_whole(**dims: Any) -> None:
    """InputError for a size that is not a whole number ≥ 1 (the caps' maximum is the plan's check)."""
    for name, v in dims.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v:
            raise InputError(N_("{name} must be a whole number, got {value!r}"), name=name, value=v)
        if v < 1:
            raise InputError(N_("{name} must be at least 1, got {value}"), name=name, value=int(v))


def check_device(device: str) -> str:
    if device not in ("cpu", "cuda", "mps"):
        raise InputError(N_("unknown device {device!r}; use cpu or cuda"), device=device)
    return device


def err_bytes(elems: float, out_b: float) -> float:
    """harness.rel_error on ``elems`` outputs: the result in float64, the difference and its
    absolute value, each float64 (the reference itself is counted by the caller)."""
    return elems * (out_b + 24)


# --------------------------------------------------------------------------- the time model
@dataclass(frozen=True)
class Row:
    """One row the harness will time: ``flops`` per timed call in format ``dtype`` (``name`` is the
    row's own name, e.g. "int8 + quant" or "stacked", matched against rows measured before), with
    ``prep_elements`` operand elements to build first, ``extra_calls`` untimed calls (the error
    check) and ``overhead_s`` per call besides its FLOPs (kernel launches, a Python loop's calls),
    counted unless the rate was measured here. ``timed=False``: the calls are made ``extra_calls``
    times and not timed (a profiled pass)."""

    flops: float
    dtype: str
    name: str = ""
    skipped: bool = False  # refused before timing (no fp8 on this device, a cap): costs nothing
    prep_elements: float = 0.0
    extra_calls: int = 0
    overhead_s: float = 0.0
    timed: bool = True


def row_seconds(t_call: float, min_run_time: float, device: str = "cpu", warmup: int = 3) -> float:
    """Seconds the harness spends on one row whose call takes ``t_call`` (see ``harness._time_host``)."""
    t = max(t_call, GPU_CALL_FLOOR_S if device != "cpu" else 0.0)
    if device != "cpu":  # triton.testing.do_bench: ~25 ms of warm-up, then min_run_time of repetitions
        return ROW_OVERHEAD_S + max(0.025, warmup * t) + max(min_run_time, 3 * t)
    warm = t if t * warmup > min_run_time else warmup * t
    # A slow call is measured one at a time, at least 3 times.
    timed = max(3, min_run_time / max(t, 1e-12)) * t if t * 20 > min_run_time else 1.2 * min_run_time
    return ROW_OVERHEAD_S + warm + timed


def _gpu_row(device: str) -> Hardware:
    """The catalogue row of the GPU found here (NVML, no torch), else the default GPU's."""
    try:
        gpus = [d for d in machine.light_summary() if d.get("kind") != "cpu" and d.get("catalogue")]
    except Exception:  # noqa: BLE001 - no NVML: the default catalogue GPU
        gpus = []
    hw = machine.match_catalogue(gpus[0]["catalogue"])[0] if gpus else None
    return hw or CATALOGUE[DEFAULT_GPU]


def _fallback(device: str) -> tuple[Hardware, float, str]:
    """The hardware row whose peaks stand in for the rates, its efficiency, and what it is."""
    if device == "cpu":
        hw, _note = cpu_row()
        if any(c.device == "cpu" for c in all_ceilings().values()):
            return hw, 1.0, "measured ceilings"
        cores = max(1, os.cpu_count() or 1) / CPU_PLACEHOLDER_CORES
        return hw.with_overrides(peaks={d: v * cores for d, v in hw.peaks if v}), DEFAULT_EFFICIENCY, "datasheet"
    gpus = [c for c in all_ceilings().values() if c.device == device]
    if gpus:
        return gpus[-1].hardware(), 1.0, "measured ceilings"
    return _gpu_row(device), DEFAULT_EFFICIENCY, "datasheet"


def rate(device: str, dtype: str, name: str = "", flops: float = 0.0,
         history: Iterable[BenchResult] | None = None) -> tuple[float, str]:
    """FLOP/s of one call of ``flops`` in ``dtype`` on ``device``, and which source it came from."""
    rows = [r for r in (recorded() if history is None else history)
            if r.device == device and r.supported and r.median_s and r.flops and r.dtype == dtype
            and (not name or r.name == name)]
    if rows:
        near = min(rows, key=lambda r: abs(math.log(r.flops) - math.log(max(flops, 1.0))))
        return near.flops / near.median_s, SOURCES[0]
    probed = speed.probed_rate(device, "fp32" if dtype == "tf32" and device == "cpu" else dtype)
    if probed is not None:
        return probed, SOURCES[1]
    hw, eff, source = _fallback(device)
    peak = hw.peak(dtype)
    if peak is None:  # no figure for this format here (fp8 through a reference kernel on a CPU): fp32's / 4
        peak = (hw.peak("fp32") or 1e11) / 4
    return peak * eff, source


def _row_seconds(r: Row, device: str, min_run_time: float, hist: list[BenchResult]) -> tuple[float, str]:
    fr, source = rate(device, r.dtype, r.name, r.flops, hist)
    t = r.flops / fr + (r.overhead_s if source != SOURCES[0] else 0.0)
    if not r.timed:
        return ROW_OVERHEAD_S + r.extra_calls * t, source
    return (row_seconds(t, min_run_time, device) + r.extra_calls * t
            + r.prep_elements * PREP_S_PER_ELEMENT.get(r.dtype, 8e-9)), source


def _correction(rows_like: list[BenchResult], model: Callable[[BenchResult], Row], device: str,
                min_run_time: float, hist: list[BenchResult]) -> float:
    """wall / modelled seconds over rows measured here that kept their wall time (1 when none)."""
    got = want = 0.0
    for h in rows_like:
        wall = h.extra.get("wall_s") if h.extra else None
        if wall and h.device == device:
            got += wall
            want += _row_seconds(model(h), device, min_run_time, hist)[0]
    return got / want if got and want else 1.0


def estimate_each(rows: Iterable[Row], device: str, min_run_time: float, *, bench: str = "",
                  history: Iterable[BenchResult] | None = None,
                  model: Callable[[BenchResult], Row] | None = None) -> list[float]:
    """Each row's seconds as :func:`estimate` counts them (its rate, inputs and untimed calls, the correction of
    rows measured here): the weights of a plan's steps (``Plan.step_s``)."""
    hist = [r for r in (recorded() if history is None else history) if not bench or r.bench == bench]
    out = [ROW_OVERHEAD_S / 5 if r.skipped else _row_seconds(r, device, min_run_time, hist)[0] for r in rows]
    c = _correction(hist, model, device, min_run_time, hist) if model is not None else 1.0
    return [s * c for s in out]


def lay_steps(each: Iterable[float], seconds: float, beside: Iterable[float] = ()) -> tuple[float, ...]:
    """A plan's ``step_s``: ``each`` step's own seconds (its rows' :func:`estimate_each`, summed per step), plus what
    the plan's ``seconds`` count beyond them (float64 references, compiles, a launch: what :func:`estimate` adds to
    the rows) laid on the steps in proportion to ``beside`` (each step's share of it, in any unit; none, or all 0:
    on the first step, where a run builds its inputs and references and starts its ranks before its first report).
    The result sums to ``seconds`` (scaled down where the steps alone were more)."""
    each = [max(0.0, float(s)) for s in each]
    if not each:
        return ()
    own = sum(each)
    if own > seconds > 0:
        return tuple(s * seconds / own for s in each)
    rest = max(0.0, float(seconds) - own)
    share = [max(0.0, float(b)) for b in beside]
    if len(share) != len(each) or sum(share) <= 0:
        share = [1.0] + [0.0] * (len(each) - 1)
    total = sum(share)
    return tuple(s + rest * b / total for s, b in zip(each, share, strict=True))


def estimate(rows: Iterable[Row], device: str, min_run_time: float, *, extra_flops: float = 0.0,
             bench: str = "", history: Iterable[BenchResult] | None = None,
             model: Callable[[BenchResult], Row] | None = None, fixed_s: float = 0.0) -> tuple[float, tuple[str, ...]]:
    """(seconds, sources) of a run: each row by ``row_seconds`` at its ``rate``, plus its inputs and
    untimed calls, plus ``extra_flops`` done once outside the timing (float64 references) at half
    the fp32 rate, plus ``fixed_s``. ``history``: rows measured here (default: this process's rows
    of ``bench``). ``model(result)`` turns a row measured here back into a ``Row``: then the rows'
    measured wall times scale the model to this machine."""
    hist = [r for r in (recorded() if history is None else history) if not bench or r.bench == bench]
    total, used = float(fixed_s), set()
    for r in rows:
        if r.skipped:
            total += ROW_OVERHEAD_S / 5
            continue
        sec, source = _row_seconds(r, device, min_run_time, hist)
        used.add(source)
        total += sec
    if model is not None:
        total *= _correction(hist, model, device, min_run_time, hist)
    if extra_flops:
        fr, source = rate(device, "fp32", "", extra_flops, hist)
        total += extra_flops / (fr / 2)
        used.add(source)
    return total, tuple(s for s in SOURCES if s in used)


# --------------------------------------------------------------------------- the caps
# The count a refusal names is the one the estimate beside a page's button names (``Plan.count``: its steps, else
# its rows): a caption of "30 steps" beside a refusal of "40 rows" read as two different runs.
TIME_CAP = N_("this run would take about {seconds:,.0f} s for {steps} steps, above this server's limit of {limit:g} s "
              "per run (GEMM_TIME_LIMIT_S); choose fewer or smaller shapes, or less time per row")
# The worker's refusal after its probe (``worker.check_speed``): the rates changed, so the seconds may; the run is
# the same one the caption counted.
PROBED_TIME_CAP = N_("at this machine's speed now (measured just before the run: {rates}) this run would take about "
                     "{seconds:,.0f} s, above this server's limit of {limit:g} s per run (GEMM_TIME_LIMIT_S); nothing "
                     "was run — choose fewer or smaller shapes, or less time per row")
# What the time model's rates stand in for until a worker has probed this machine (``will_probe``)
UNPROBED_SOURCES = ("measured ceilings", "datasheet")


def run_dtypes(config: Any) -> list[str]:
    """The formats a run's GEMMs use: its ``dtypes``, its ``dtype``, or its block's or its model run's (a
    calibration's): the formats the worker probes before the run (``worker.check_speed``)."""
    v = getattr(config, "dtypes", None)
    if v:
        return [str(d) for d in v]
    for c in (config, getattr(config, "block", None), getattr(config, "run", None)):
        d = getattr(c, "dtype", None)
        if isinstance(d, str):
            return [d]
    return ["fp32"]


def will_probe(spec: Any, config: Any, p: Plan) -> tuple[str, ...]:
    """The formats whose rate the worker will time on this machine just before the run and plan it again on
    (``worker.check_speed``), where this plan ``p`` took them from elsewhere (the datasheet, ceilings measured
    once): its estimate can then change, and the run be refused at the limit on the new one. Empty when the plan
    is the one the worker will judge (rates measured here or probed already, or a run the probe does not apply
    to: a multi-rank run, MPS). A page says so beside its estimate (``ui.runbox.run_estimate``)."""
    from gemmlib.measure import speedprobe  # torch only inside its functions

    device = str(getattr(config, "device", ""))
    if p.launches or getattr(spec, "ranks_open_devices", False) or device not in ("cpu", "cuda"):
        return ()
    if not any(s in p.sources for s in UNPROBED_SOURCES):
        return ()
    return tuple(d for d in dict.fromkeys(run_dtypes(config))
                 if d in speedprobe.PROBED and speed.probed_rate(device, d) is None)


def planned(spec: Any, config: Any, lim: safety.Limits) -> Plan:
    """``spec.plan(config, lim)`` scaled by how much longer than estimated the last runs of this
    benchmark on this device took (``core.speed.ratio``; 1 when none ran): the estimate a page
    shows, the caps check and the worker checks again."""
    p = spec.plan(config, lim)
    if p.launches:
        return p
    r = speed.ratio(spec.name, str(getattr(config, "device", "")))
    if r == 1.0:
        return p
    return replace(p, seconds=p.seconds * r, step_s=tuple(s * r for s in p.step_s), sources=tuple(s for s in SOURCES if s in p.sources or s == "recent runs"))


def admit(spec: Any, config: Any, lim: safety.Limits | None = None) -> Plan:
    """:func:`planned` and the server's caps, the same for every benchmark: bytes (on the run's
    device, and on the host beside a GPU), the largest CPU GEMM, and time. InputError (before
    anything is allocated) when one is exceeded. A multi-rank run's plan checked every rank itself."""
    lim = lim or safety.limits()
    if getattr(config, "device", None) == "cuda":  # before the plan: it sizes its rows by the GPU it would run on
        from gemmlib.measure.launch import cuda_count

        if cuda_count() == 0:
            why = machine.gpu_presence()[1] or N_("no CUDA device (torch.cuda.is_available() is False)")
            raise InputError(N_("device {device!r} cannot be used here: {why}"), device="cuda", why=Text(why))
    return check_caps(planned(spec, config, lim), config, lim)


def check_caps(p: Plan, config: Any, lim: safety.Limits) -> Plan:
    """``p`` (a :func:`planned` plan of ``config``) against the server's caps, as :func:`admit` checks it: InputError
    when one is exceeded. A page that has the plan already (the estimate beside its button) checks it without
    planning the run again."""
    if p.launches:
        return p
    device = config.device
    safety.check_memory(p.bytes, device, lim)
    if p.host_bytes:
        safety.check_memory(p.host_bytes, "cpu", lim)
    if device == "cpu":
        lim.check_cpu_flops(p.call_flops, p.call_what)
    if p.seconds > lim.time_limit_s:
        raise InputError(TIME_CAP, seconds=p.seconds, steps=p.count, limit=lim.time_limit_s)
    return p


# Beside a GPU run's own tensors: two L2-flush buffers at once (the harness's, for its estimate, and the one
# ``triton.testing.do_bench`` allocates itself: ``get_empty_cache_for_benchmark``, 256 MB), and the caching allocator's
# rounding (a 1–10 MiB request takes a 20 MiB block, any smaller one at least 2 MiB).
ALLOCATOR_ROOM = 128 * MiB


def memory_limit(p: Plan, device: str) -> tuple[int, int | None]:
    """(host bytes, device bytes or None) a worker may add to what it holds after start-up: twice
    the estimate (checked against measured peaks to within 1.5×; the limit counts address space
    reserved by the allocator, a little more than what is resident) plus room for the libraries'
    own buffers; on a GPU also the two L2-flush buffers of the timing and the allocator's rounding (without them a
    512³ run's cap left ~22 MiB beside the flushes: less than its float64 reference's one 20 MiB block)."""
    from gemmlib.measure.harness import FLUSH_BYTES

    if device == "cpu":
        return int(2.0 * p.bytes + 512 * MiB), None
    return (int(1.5 * p.host_bytes + 2048 * MiB),
            int(1.5 * p.bytes + 512 * MiB + 2 * FLUSH_BYTES + ALLOCATOR_ROOM))


def time_limit_s(p: Plan, lim: safety.Limits) -> float:
    """The run's wall-time budget: the caps' limit, once per launch for a multi-rank run."""
    return max(1, p.launches) * lim.time_limit_s


def with_steps(p: Plan, steps: int) -> Plan:
    return replace(p, steps=steps)


# --------------------------------------------------------------------------- a sweep cut to a time share
FIT_SHARE = 0.8  # what a report section plans to spend of its share: the rest covers what a plan does not count


def share_s(deadline: Any) -> float:
    """The seconds a report section plans to spend: ``FIT_SHARE`` of what its deadline has left (infinite
    without one: nothing is cut)."""
    return math.inf if deadline is None else max(0.0, float(deadline.remaining())) * FIT_SHARE


def spread_order(n: int) -> list[int]:
    """0 … n-1 in the order a cut sweep keeps them: both ends, the middle, the quarters, …, so that the points
    kept span the sweep (a curve keeps its shape)."""
    if n <= 0:
        return []
    order, seen, spans = [0], {0}, [(0, n - 1)]
    if n > 1:
        order.append(n - 1)
        seen.add(n - 1)
    while spans:
        lo, hi = spans.pop(0)
        mid = (lo + hi) // 2
        if mid not in seen:
            order.append(mid)
            seen.add(mid)
        if mid - lo > 1:
            spans.append((lo, mid))
        if hi - mid > 1:
            spans.append((mid, hi))
    return order


def fit(points: list[Any], cost: Callable[[list[Any]], float], seconds: float,
        keep: Callable[[Any], bool] = lambda p: False) -> tuple[list[Any], list[Any]]:
    """The points of a sweep that fit in ``seconds``, by ``cost(points) -> seconds`` (a plan's estimate of
    running them): every point ``keep`` marks (those a target is judged on) whatever it costs, then the others
    in :func:`spread_order` while the estimate stays within ``seconds``; at least one point. Returns (the points
    kept, the points left out), each in the sweep's order. ``seconds`` infinite: all of them."""
    points = list(points)
    if not points or not math.isfinite(seconds) or cost(points) <= seconds:
        return points, []
    chosen = {i for i, p in enumerate(points) if keep(p)}
    for i in spread_order(len(points)):
        if i in chosen:
            continue
        trial = chosen | {i}
        if not chosen or cost([points[j] for j in sorted(trial)]) <= seconds:
            chosen = trial
    return ([p for i, p in enumerate(points) if i in chosen], [p for i, p in enumerate(points) if i not in chosen])
