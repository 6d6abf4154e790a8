"""Every benchmark's plan weighs its steps by their own time, step for step as its run reports them.

The run box (``ui.runbox.RunStatus``) reads a run's progress ``frac`` as step ``int(frac × plan.steps)`` and the
time left through ``Plan.step_weights()``: a plan whose steps are not the run's, or are all alike, shows a sweep of
small then large sizes "half done" at half its steps and its time left wrong most of the run. Each test runs the
benchmark in-process on tiny sizes, counts the steps its progress goes through, and checks that a larger step of a
(planned, not run) larger configuration gets a larger weight.
"""

from __future__ import annotations

import pytest

from gemmlib.measure import batching as bb
from gemmlib.measure import collectives as cl
from gemmlib.measure import devices as dv
from gemmlib.measure import plan as pl
from gemmlib.measure import safety
from gemmlib.measure import tiling as bt


def _reported(run) -> list[float]:
    """The progress fractions ``run(progress)`` reports (a None fraction: a message without progress)."""
    seen: list[float] = []
    run(lambda frac, _text: seen.append(frac) if frac is not None else None)
    return seen


def _assert_steps_match(p: pl.Plan, fracs: list[float]) -> None:
    """The run box, starting at step 0 and moving at each report, goes through every step of the plan once, in
    order; and the run has as many distinct places before its end as the plan has steps."""
    places = sorted({0.0} | {f for f in fracs if f < 1.0})
    assert len(places) == p.steps, (p.steps, places)
    shown = [min(p.steps - 1, int(f * p.steps + 1e-9)) for f in places]
    assert shown == list(range(p.steps)), shown
    assert fracs == sorted(fracs) and fracs[-1] == 1.0
    assert len(p.step_s) == p.steps and sum(p.step_s) == pytest.approx(p.seconds)


def test_tiling_steps_are_its_rows_and_a_tile_of_many_calls_weighs_more():
    cfg = bt.TilingConfig(device="cpu", size=24, tiles=(8, 24), impls=("torch", "python_tiled", "numpy_blocked"),
                          min_run_time=0.01)
    p = bt.plan_tiling(cfg, safety.DEFAULT_LIMITS)
    _assert_steps_match(p, _reported(lambda prog: bt.run_tiling(cfg, progress=prog)))
    # 1024³ in Python-level 64-wide tiles is 4096 library calls, in 256-wide ones 64: each call far slower
    big = bt.TilingConfig(device="cpu", size=1024, tiles=(64, 256), impls=("torch", "python_tiled"),
                          min_run_time=0.05)
    w = bt.plan_tiling(big, safety.DEFAULT_LIMITS).step_weights()  # torch (and the float64 reference), 64, 256
    assert w[1] > 2 * w[2], w


def test_wave_sweep_steps_are_its_points_and_larger_n_weighs_more():
    """GPU only: its steps are ``sweep_points``' (each N, then each implementation), checked with a stand-in measure."""
    ns = [256, 4096, 16384]
    cfg = bt.WaveConfig(device="cuda", m=16384, k=16384, ns=tuple(ns), min_run_time=0.01)
    p = bt.plan_waves(cfg, safety.DEFAULT_LIMITS)
    fracs = _reported(lambda prog: bt.sweep_points(ns, ("torch", "triton"), lambda impl, n: None,
                                                   safety.Deadline(60), "cuda", "bf16", 16384, 16384, prog))
    _assert_steps_match(p, fracs + [1.0])  # sweep_points leaves the last report (1.0) to its caller
    w = p.step_weights()
    assert w[4] > 1.3 * w[0] and w[5] > 1.3 * w[3], w  # torch at each N, then triton
    assert w[1] > w[3], w  # the Triton kernel is compiled in its first row


def test_batching_steps_are_its_rows_and_a_larger_batch_weighs_more():
    cfg = bb.BatchingConfig(device="cpu", m=2, k=16, n=16, batches=(1, 3), modes=("loop", "stacked"),
                            min_run_time=0.01)
    p = bb.plan_batching(cfg, safety.DEFAULT_LIMITS)
    _assert_steps_match(p, _reported(lambda prog: bb.run_batching(cfg, progress=prog)))
    big = bb.BatchingConfig(device="cpu", m=64, k=2048, n=2048, batches=(1, 64), modes=("stacked",),
                            min_run_time=0.05)
    w = bb.plan_batching(big, safety.DEFAULT_LIMITS).step_weights()
    assert w[1] > 3 * w[0], w


def test_ceilings_steps_are_its_formats_then_the_copy_and_a_slower_format_weighs_more():
    cfg = dv.CeilingsConfig(device="cpu", quick=True, size=16, copy_bytes=4096)
    p = dv.plan_ceilings(cfg, safety.DEFAULT_LIMITS)
    _assert_steps_match(p, _reported(lambda prog: dv.measure_ceilings("cpu", quick=True, size=16, copy_bytes=4096,
                                                                       progress=prog, save=False)))
    big = dv.plan_ceilings(dv.CeilingsConfig(device="cpu", quick=True, size=2048, copy_bytes=4096),
                           safety.DEFAULT_LIMITS)
    w = dict(zip((*big_formats(), "copy"), big.step_weights(), strict=True))
    assert w["fp8"] > w["fp32"] > w["copy"], w  # fp8 on a CPU: a reference kernel at a quarter of fp32's rate


def big_formats() -> tuple[str, ...]:
    return dv.CeilingsConfig(device="cpu").precision().dtypes


def test_collective_steps_are_its_rows_and_a_larger_size_weighs_more():
    cfg = cl.CollectiveConfig(ops=("all_reduce", "broadcast"), sizes=(8, 4096), iters=2, warmup=0)
    p = cl.plan_collectives(cl.CollectiveLaunch(cfg, nproc=2, backend="gloo"), safety.DEFAULT_LIMITS)
    _assert_steps_match(p, _reported(lambda prog: cl.run_collectives(cfg, nproc=2, backend="gloo", timeout_s=60,
                                                                     save=False, progress=prog)))
    big = cl.CollectiveConfig(ops=("all_reduce", "broadcast"), sizes=(8, 64 << 20), iters=5, warmup=1)
    q = cl.plan_collectives(cl.CollectiveLaunch(big, nproc=2, backend="gloo"), safety.DEFAULT_LIMITS)
    assert q.steps == q.rows == 4 and sum(q.step_s) == pytest.approx(q.seconds)
    # the ranks' start is in the first step; after it, the 64 MiB rows outweigh the 8 B ones
    assert q.step_s[1] > 3 * q.step_s[2] and q.step_s[3] == pytest.approx(q.step_s[1]), q.step_s


def test_a_collective_sweep_past_its_budget_plans_its_skipped_rows_as_nothing():
    big = cl.CollectiveConfig(ops=("all_reduce", "broadcast"), sizes=(8, 64 << 20), iters=50, warmup=1,
                              time_budget_s=1.0)
    q = cl.plan_collectives(cl.CollectiveLaunch(big, nproc=2, backend="gloo"), safety.DEFAULT_LIMITS)
    assert sum(q.step_s) == pytest.approx(q.seconds) and q.step_s[-1] == 0.0 and q.step_s[1] > 0


def test_lay_steps_adds_what_is_beside_the_rows_where_it_is_spent():
    assert pl.lay_steps([1.0, 2.0], 5.0) == (3.0, 2.0)
    assert pl.lay_steps([1.0, 2.0, 1.0], 6.0, [0.0, 1.0, 1.0]) == (1.0, 3.0, 2.0)
    assert pl.lay_steps([2.0, 2.0], 2.0) == (1.0, 1.0)
    assert pl.lay_steps([], 3.0) == ()
