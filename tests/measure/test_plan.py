"""The run-time estimate (gemmlib.measure.plan) and the noise rule (gemmlib.core.results.noisy)."""

import time

import pytest

from gemmlib.core.results import NOISE_RATIO, BenchResult, noisy, spread_ratio
from gemmlib.measure import harness, plan
from gemmlib.measure import precision as bp


def _result(name="fp32", median=0.01, p20=0.009, p80=0.011, **extra):
    return BenchResult(bench="precision", name=name, device="cpu", device_name="test", dtype=name.split()[0],
                       shape={"m": 64, "n": 64, "k": 64}, flops=2 * 64**3, bytes=3 * 64 * 64 * 4,
                       median_s=median, p20_s=p20, p80_s=p80, extra=dict(extra))


@pytest.mark.parametrize("t_call, min_run_time", [(0.002, 0.1), (0.06, 0.1), (0.15, 0.1)])
def test_row_seconds_follows_the_harness(t_call, min_run_time):
    """The model of one row against the real harness timing a call of known length (a sleep)."""
    calls = []

    def call():
        calls.append(1)
        time.sleep(t_call)

    harness.time_callable(lambda: None, device="cpu", min_run_time=0.01)  # imports and first-use costs
    t0 = time.perf_counter()
    harness.time_callable(call, device="cpu", min_run_time=min_run_time)
    wall = time.perf_counter() - t0
    model = plan.row_seconds(t_call, min_run_time) - plan.ROW_OVERHEAD_S
    assert model == pytest.approx(wall, rel=0.35), (len(calls), wall, model)


def test_rows_measured_here_set_the_rate_and_their_wall_time_the_scale():
    hist = [_result(median=0.01, wall_s=0.9)]
    rate, source = plan.rate("cpu", "fp32", "fp32", 2 * 64**3, hist)
    assert rate == pytest.approx(2 * 64**3 / 0.01) and source == "measured here"

    def model(r):
        return plan.Row(r.flops, r.dtype, r.name)

    row = plan.Row(2 * 64**3, "fp32", "fp32")
    plain = plan.estimate([row], "cpu", 0.3, history=hist)
    scaled = plan.estimate([row], "cpu", 0.3, history=hist, model=model)
    assert scaled.seconds == pytest.approx(0.9)  # the same row again: what it took here
    assert plain.seconds == pytest.approx(plan.row_seconds(0.01, 0.3))
    assert "measured here" in scaled.text() and "1 steps" in scaled.text()


def test_precision_estimate_counts_steps_and_skips_what_cannot_run():
    cfg = bp.PrecisionConfig(device="cpu", shapes=bp.square_shapes([128, 256]), dtypes=("fp32", "tf32", "int8"),
                             min_run_time=0.1)
    est = plan.precision(cfg)
    assert est.rows == 2 * 3  # (shape, format) pairs: what run_precision's progress counts
    only_tf32 = plan.precision(bp.PrecisionConfig(device="cpu", shapes=bp.square_shapes([128]), dtypes=("tf32",)))
    assert only_tf32.seconds < 0.1  # no tf32 on a CPU: refused, not timed
    assert est.seconds > 6 * 0.1  # every timed row spends at least min_run_time


def test_noise_rule():
    calm, busy = _result(p20=0.010, p80=0.019), _result(p20=0.010, p80=0.021)
    assert spread_ratio(busy) == pytest.approx(2.1) and NOISE_RATIO == 2.0
    assert noisy([calm, busy]) == [busy]
    assert noisy([_result(p20=None, p80=None)]) == []

