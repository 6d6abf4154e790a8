"""How long will a benchmark run take? An estimate before it starts, from what it will time.

Each benchmark's rows are listed with their FLOPs and format (``precision``, ``batching``,
``ceilings``); a row's time follows the harness's own rules (``harness.time_callable``: warm-up
calls, then ``min_run_time`` of timing, but at least three calls when one call is slow) at a rate
taken, in this order, from

1. a row already measured here with the same format (this server's ``core.results.recorded()``,
   the one nearest in FLOPs): what this machine really does;
2. the ceilings measured on this machine (``core.ceilings``; the CPU row of ``cpu_row``);
3. the catalogue row (for a CPU, its placeholder) at ``DEFAULT_EFFICIENCY`` of its peak.

The estimate says which of these it used. It needs no torch: a page shows it beside the button.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from gemmlib.core import format as fmt
from gemmlib.core.ceilings import all_ceilings, cpu_row
from gemmlib.core.flops import DEFAULT_EFFICIENCY
from gemmlib.core.hardware import CATALOGUE, DEFAULT_GPU
from gemmlib.core.results import BenchResult, recorded

ROW_OVERHEAD_S = 0.05  # per row: the result row, the progress report
GPU_CALL_FLOOR_S = 10e-6  # a kernel launch: no call on a GPU is faster than this
SOURCES = ("measured here", "measured ceilings", "datasheet")
# Seconds per operand element to build one input set (random normals on the CPU, converted or
# quantized to the format): measured on a 2-core x86 server with this project's precision rows.
# A row measured here (its ``extra["wall_s"]``) corrects them for this machine.
PREP_S_PER_ELEMENT = {"fp32": 2e-9, "tf32": 2e-9, "bf16": 12e-9, "fp16": 10e-9, "int8": 30e-9, "fp8": 55e-9}


@dataclass(frozen=True)
class Row:
    """One row the harness will time: ``flops`` per timed call in format ``dtype`` (``name`` is the
    row's own name, e.g. "int8 + quant" or "stacked", matched against rows measured before), with
    ``prep_elements`` operand elements to build first and ``extra_calls`` untimed calls (the error
    check)."""

    flops: float
    dtype: str
    name: str = ""
    skipped: bool = False  # refused before timing (no fp8 on this device, a cap): costs nothing
    prep_elements: float = 0.0
    extra_calls: int = 0


@dataclass(frozen=True)
class RunEstimate:
    seconds: float
    rows: int  # the steps the run's progress counts
    basis: str  # where the rates came from, in words
    sources: tuple[str, ...] = ()  # the same, as keys of SOURCES

    def text(self) -> str:
        """``"about 42 s for 12 steps (rates measured here)"``"""
        return f"about {fmt.duration(max(1.0, round(self.seconds)))} for {self.rows} steps ({self.basis})"


def row_seconds(t_call: float, min_run_time: float, device: str = "cpu", warmup: int = 3) -> float:
    """Seconds the harness spends on one row whose call takes ``t_call`` (see ``harness._time_host``)."""
    t = max(t_call, GPU_CALL_FLOOR_S if device != "cpu" else 0.0)
    if device != "cpu":  # triton.testing.do_bench: ~25 ms of warm-up, then min_run_time of repetitions
        return ROW_OVERHEAD_S + max(0.025, warmup * t) + max(min_run_time, 3 * t)
    warm = t if t * warmup > min_run_time else warmup * t
    # A slow call is measured one at a time, at least 3 times, and torch's Timer.timeit(number=1)
    # runs 2 warm-up calls of its own before each: 3 calls per measurement.
    timed = 3 * max(3, min_run_time / max(t, 1e-12)) * t if t * 20 > min_run_time else 1.2 * min_run_time
    return ROW_OVERHEAD_S + warm + timed


def _fallback(device: str):
    """The hardware row whose peaks stand in for the rates, and what it is."""
    if device == "cpu":
        hw, note = cpu_row()
        measured = any(c.device == "cpu" for c in all_ceilings().values())
        return hw, (1.0 if measured else DEFAULT_EFFICIENCY), "measured ceilings" if measured else "datasheet"
    gpus = [c for c in all_ceilings().values() if c.device == device]
    if gpus:
        return gpus[-1].hardware(), 1.0, "measured ceilings"
    return CATALOGUE[DEFAULT_GPU], DEFAULT_EFFICIENCY, "datasheet"


def rate(device: str, dtype: str, name: str = "", flops: float = 0.0,
         history: Iterable[BenchResult] | None = None) -> tuple[float, str]:
    """FLOP/s of one call of ``flops`` in ``dtype`` on ``device``, and which source it came from."""
    rows = [r for r in (recorded() if history is None else history)
            if r.device == device and r.supported and r.median_s and r.flops and r.dtype == dtype
            and (not name or r.name == name)]
    if rows:
        near = min(rows, key=lambda r: abs(math.log(r.flops) - math.log(max(flops, 1.0))))
        return near.flops / near.median_s, SOURCES[0]
    hw, eff, source = _fallback(device)
    peak = hw.peak(dtype)
    if peak is None:  # no figure for this format here (fp8 through a reference kernel on a CPU): fp32's / 4
        peak = (hw.peak("fp32") or 1e11) / 4
    return peak * eff, source


def _row_seconds(r: Row, device: str, min_run_time: float, hist: list[BenchResult]) -> tuple[float, str]:
    fr, source = rate(device, r.dtype, r.name, r.flops, hist)
    t = r.flops / fr
    return (row_seconds(t, min_run_time, device) + r.extra_calls * t
            + r.prep_elements * PREP_S_PER_ELEMENT.get(r.dtype, 8e-9)), source


def _correction(rows_like: list[BenchResult], model, device: str, min_run_time: float,
                hist: list[BenchResult]) -> float:
    """wall / modelled seconds over rows measured here that kept their wall time (1 when none)."""
    got = want = 0.0
    for h in rows_like:
        wall = h.extra.get("wall_s") if h.extra else None
        if wall and h.device == device:
            got += wall
            want += _row_seconds(model(h), device, min_run_time, hist)[0]
    return got / want if got and want else 1.0


def estimate(rows: Iterable[Row], device: str, min_run_time: float, extra_flops: float = 0.0,
             history: Iterable[BenchResult] | None = None, steps: int | None = None,
             model=None) -> RunEstimate:
    """The run's seconds: each row by ``row_seconds`` at its ``rate``, plus its inputs and untimed
    calls, plus ``extra_flops`` done once outside the timing (float64 references) at half the fp32
    rate. ``model(result)`` turns a row measured here back into a ``Row``: then the rows' measured
    wall times scale the model to this machine."""
    hist = list(recorded() if history is None else history)
    rows = list(rows)
    total, used = 0.0, set()
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
    sources = tuple(s for s in SOURCES if s in used)
    basis = "rates " + " and ".join(sources) if used else "nothing to time"
    return RunEstimate(total, len(rows) if steps is None else steps, basis, sources)


# --------------------------------------------------------------------------- the benchmarks' rows
def precision(cfg, lim=None) -> RunEstimate:
    """``gemmlib.measure.precision.run_precision(cfg)``: every (shape, format), the "+ quant" rows, their
    rotated input sets and error checks, and one float64 reference per shape."""
    from gemmlib.core.dtypes import dtype_bytes
    from gemmlib.measure import precision as bp
    from gemmlib.measure import safety

    lim = lim or safety.limits()
    dtypes = bp.normalise_dtypes(cfg.dtypes)

    def sets(d: str, m: int, n: int, k: int) -> int:
        one = 4 if d == "tf32" else dtype_bytes(d)
        return bp._rotation(cfg.device, (m * k + k * n + m * n) * one, lim)

    def rows_for(d: str, m: int, n: int, k: int, skipped: bool = False) -> list[Row]:
        f, elems = 2.0 * m * n * k, float(m * k + k * n)
        out = [Row(f, d, d, skipped, sets(d, m, n, k) * elems, 1)]
        if d in ("int8", "fp8") and cfg.with_quant:
            out.append(Row(f, d, f"{d} + quant", skipped, sets(d, m, n, k) * m * k, 1))
        return out

    def model(r: BenchResult) -> Row:  # a row measured before, as the model sees it
        m, n, k = (int(r.shape.get(x, 1)) for x in "mnk")
        quant = r.name.endswith("+ quant")
        elems = sets(r.dtype, m, n, k) * (m * k if quant else m * k + k * n)
        return Row(r.flops, r.dtype, r.name, False, elems, 1)

    rows: list[Row] = []
    ref = 0.0
    for m, n, k, _label in cfg.shapes:
        ref += 2.0 * m * n * k if cfg.check_error else 0.0
        for d in dtypes:
            rows += rows_for(d, m, n, k, bool(bp._unsupported_reason(d, cfg.device, m, n, k, cfg)))
    hist = [r for r in recorded() if r.bench == "precision"]
    return estimate(rows, cfg.device, cfg.min_run_time, ref, history=hist,
                    steps=len(cfg.shapes) * len(dtypes), model=model)


def batching(cfg) -> RunEstimate:
    """``gemmlib.measure.batching.run_batching(cfg)``: every (batch, mode) of B requests' 2·M·N·K."""
    rows = [Row(2.0 * b * cfg.m * cfg.n * cfg.k, cfg.dtype, mode, prep_elements=b * (cfg.m * cfg.k + cfg.k * cfg.n),
                extra_calls=1) for b in cfg.batches for mode in cfg.modes]
    return estimate(rows, cfg.device, cfg.min_run_time,
                    2.0 * sum(cfg.batches) * cfg.m * cfg.n * cfg.k)  # the float64 references


def ceilings(device: str, size: int, quick: bool) -> RunEstimate:
    """``gemmlib.measure.devices.measure_ceilings``: one size³ GEMM per format (as it runs them, without
    error checks) and a device copy."""
    from dataclasses import replace

    from gemmlib.measure import precision as bp

    cfg = bp.PrecisionConfig(device=device, shapes=((size, size, size, "ceiling"),), dtypes=bp.PRECISION_DTYPES,
                             with_quant=False, check_error=False, min_run_time=0.3 if quick else 0.6)
    gemms = precision(cfg)
    copy = row_seconds(0.0, cfg.min_run_time, device)
    return replace(gemms, seconds=gemms.seconds + copy, rows=gemms.rows + 1)
