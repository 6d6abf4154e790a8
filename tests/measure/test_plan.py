"""The one time model (gemmlib.measure.plan): rows against the real harness, rates measured here, every
spec's plan counting its progress steps, the same estimate for the page, the command line and the
queue's admission; and the noise rule (gemmlib.core.results.noisy)."""

import types

import pytest

from gemmlib.core.errors import InputError
from gemmlib.core.results import NOISE_RATIO, BenchResult, noisy, spread_ratio
from gemmlib.measure import batching as bb
from gemmlib.measure import harness, plan, safety
from gemmlib.measure import precision as bp
from gemmlib.measure import tiling as bt

LIM = safety.Limits(max_dim=16384, max_bytes=16 * 2**30, time_limit_s=600, classroom=False, max_cpu_flops=1e13)


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path / "cache"))


def _result(name="fp32", median=0.01, p20=0.009, p80=0.011, **extra):
    return BenchResult(bench="precision", name=name, device="cpu", device_name="test", dtype=name.split()[0],
                       shape={"m": 64, "n": 64, "k": 64}, flops=2 * 64**3, bytes=3 * 64 * 64 * 4,
                       median_s=median, p20_s=p20, p80_s=p80, extra=dict(extra))


@pytest.mark.parametrize("t_call, min_run_time", [(0.0005, 0.1), (0.002, 0.1), (0.004, 0.1), (0.06, 0.1),
                                                    (0.15, 0.1), (0.002, 0.5), (0.03, 0.5)])
def test_row_seconds_follows_the_harness(t_call, min_run_time, monkeypatch):
    """The model of one row against the real harness (its warm-up, its choice between blocks of calls and one call
    per sample, torch.utils.benchmark's blocked_autorange) timing a call of known length on a fake clock: each call
    moves the clock on by exactly ``t_call`` and nothing else does, so the harness decides as it would on an idle
    machine and the seconds it spends are the clock's (a real sleep on a loaded machine took longer than asked, and
    the comparison with the wall clock failed now and then). The model never charges less than the calls the
    harness makes; for blocks of fast calls it charges 1.2 × min_run_time, torch.utils.benchmark's own time between
    blocks included, which a fake clock does not count (benchmarks/bench_speed.py and the README's plan table
    compare it with real runs)."""
    import functools

    import torch.utils.benchmark as tb

    clock = [0.0]

    def now() -> float:
        return clock[0]

    def call():
        clock[0] += t_call

    monkeypatch.setattr(harness, "time", types.SimpleNamespace(perf_counter=now))
    monkeypatch.setattr(tb, "Timer", functools.partial(tb.Timer, timer=now))
    harness.time_callable(call, device="cpu", min_run_time=min_run_time)
    spent = clock[0]
    model = plan.row_seconds(t_call, min_run_time) - plan.ROW_OVERHEAD_S
    assert spent <= model * (1 + 1e-9), (spent, model)
    assert model == pytest.approx(spent, rel=0.2), (spent, model)


def test_rows_measured_here_set_the_rate_and_their_wall_time_the_scale():
    hist = [_result(median=0.01, wall_s=0.9)]
    rate, source = plan.rate("cpu", "fp32", "fp32", 2 * 64**3, hist)
    assert rate == pytest.approx(2 * 64**3 / 0.01) and source == "measured here"

    def model(r):
        return plan.Row(r.flops, r.dtype, r.name)

    row = plan.Row(2 * 64**3, "fp32", "fp32")
    plain, sources = plan.estimate([row], "cpu", 0.3, history=hist)
    scaled, _ = plan.estimate([row], "cpu", 0.3, history=hist, model=model)
    assert scaled == pytest.approx(0.9)  # the same row again: what it took here
    assert plain == pytest.approx(plan.row_seconds(0.01, 0.3)) and sources == ("measured here",)
    p = plan.Plan(bytes=0.0, seconds=scaled, rows=1, sources=sources)
    assert "measured here" in p.text() and "1 steps" in p.text()


def test_a_rows_launches_count_unless_its_rate_was_measured_here():
    bare, launched = plan.Row(1e6, "fp32", "loop"), plan.Row(1e6, "fp32", "loop", overhead_s=0.5)
    base, _ = plan.estimate([bare], "cpu", 0.01, history=[])
    more, _ = plan.estimate([launched], "cpu", 0.01, history=[])
    assert more - base > 3 * 0.5  # every call the harness makes pays it (at least three)
    hist = [BenchResult("batching", "loop", "cpu", "x", "fp32", {}, 1e6, 1.0, median_s=0.01, p20_s=0.01, p80_s=0.01)]
    a, _ = plan.estimate([bare], "cpu", 0.01, history=hist)
    b, _ = plan.estimate([launched], "cpu", 0.01, history=hist)
    assert a == b  # a measured rate already holds its launches


def test_the_precision_plan_counts_steps_and_skips_what_cannot_run():
    cfg = bp.PrecisionConfig(device="cpu", shapes=bp.square_shapes([128, 256]), dtypes=("fp32", "tf32", "int8"),
                             min_run_time=0.1)
    est = bp.SPEC.plan(cfg, LIM)
    assert est.steps == 2 * 3  # (shape, format) pairs: what run_precision's progress counts
    assert est.rows == 2 * 4  # the result rows: int8 has its "+ quant" row
    only_tf32 = bp.SPEC.plan(bp.PrecisionConfig(device="cpu", shapes=bp.square_shapes([128]), dtypes=("tf32",)), LIM)
    assert only_tf32.seconds < 0.1  # no tf32 on a CPU: refused, not timed
    assert only_tf32.bytes == 4 * 2 * 128**2 + 8 * 3 * 128**2  # only the fp32 sources and the float64 reference
    assert est.seconds > 6 * 0.1  # every timed row spends at least min_run_time


@pytest.mark.parametrize("spec, cfg, steps", [
    (bt.SPEC, bt.TilingConfig(device="cpu", size=128, tiles=(16, 64), impls=("python_tiled", "torch")), 3),
    (bb.SPEC, bb.BatchingConfig(device="cpu", m=1, k=256, n=256, batches=(1, 8), modes=("loop", "stacked")), 4),
])
def test_every_plan_counts_the_steps_its_progress_reports(spec, cfg, steps):
    p = spec.plan(cfg, LIM)
    assert p.steps == steps and p.seconds > steps * cfg.min_run_time and p.bytes > 0 and p.sources


def test_the_page_the_command_line_and_the_queue_see_one_estimate():
    """The estimate line (spec.plan) and the admission's refusal are the same figure; a run under the
    limit is admitted with that same plan."""
    cfg = bb.BatchingConfig(device="cpu", m=1, k=512, n=512, batches=(1, 4, 16), min_run_time=2.0)
    shown = bb.SPEC.plan(cfg, LIM)
    assert plan.admit(bb.SPEC, cfg, LIM) == shown
    tight = safety.Limits(max_dim=16384, max_bytes=16 * 2**30, time_limit_s=shown.seconds / 2, classroom=False,
                          max_cpu_flops=1e13)
    with pytest.raises(InputError, match="GEMM_TIME_LIMIT_S") as e:
        plan.admit(bb.SPEC, cfg, tight)
    assert e.value.params["seconds"] == pytest.approx(bb.SPEC.plan(cfg, tight).seconds)
    assert e.value.params["steps"] == shown.count == shown.steps == 9  # the count the estimate line names


def test_the_caps_refuse_before_a_plan_is_made():
    small = safety.Limits(max_dim=256, max_bytes=2**30, time_limit_s=20, classroom=True, max_cpu_flops=2 * 64**3)
    with pytest.raises(InputError, match="GEMM_MAX_DIM"):
        plan.admit(bt.SPEC, bt.TilingConfig(device="cpu", size=512), small)
    with pytest.raises(InputError, match="GEMM_MAX_CPU_GFLOP"):
        plan.admit(bp.SPEC, bp.PrecisionConfig(device="cpu", shapes=bp.square_shapes([128]), dtypes=("fp32",)), small)


def test_noise_rule():
    calm, busy = _result(p20=0.010, p80=0.019), _result(p20=0.010, p80=0.021)
    assert spread_ratio(busy) == pytest.approx(2.1) and NOISE_RATIO == 2.0
    assert noisy([calm, busy]) == [busy]
    assert noisy([_result(p20=None, p80=None)]) == []


def test_a_gpu_workers_device_allowance_holds_both_l2_flushes_beside_the_run(monkeypatch):
    """On the do_bench path a GPU row holds two 256 MiB flush buffers at once (the harness's, for its estimate, and
    triton.testing.do_bench's own), which no plan counts: the worker's device allowance adds both and the caching
    allocator's rounding on top of 1.5 × the plan and the libraries' 512 MiB (once a 512³ run had ~22 MiB left beside
    the flushes, less than the one 20 MiB block its float64 reference takes)."""
    from unittest import mock

    MiB = 2**20
    with mock.patch.object(plan, "check_device", lambda d: None), \
            mock.patch.object(bp, "_unsupported_reason", lambda *a, **k: ""):
        for s in (256, 512):
            p = bp.plan_precision(bp.PrecisionConfig(device="cuda", shapes=((s, s, s, "x"),)), safety.limits())
            device = plan.memory_limit(p, "cuda")[1]
            beside_flushes = device - 2 * harness.FLUSH_BYTES
            assert beside_flushes >= 1.5 * p.bytes + 512 * MiB + plan.ALLOCATOR_ROOM
            assert beside_flushes - p.bytes >= 3 * 20 * MiB  # the float64 reference's block, and more
    assert plan.memory_limit(p, "cpu")[1] is None


def test_a_plan_weighs_its_steps_by_their_own_time():
    """The run box's time left reads progress through ``Plan.step_weights``: a precision run of a small shape, then a
    large one, plans the large shape's steps as most of its time (equal shares said it was half done after the small
    shape, and its time left then climbed); a plan without per-step times gives equal shares; parts run one after
    the other keep theirs."""
    from gemmlib.measure import plan as pl
    from gemmlib.measure import precision as bp
    from gemmlib.measure import safety

    cfg = bp.PrecisionConfig(device="cpu", shapes=((32, 32, 32, "small"), (2048, 2048, 2048, "large")),
                             dtypes=("fp32", "bf16"), min_run_time=0.05)
    p = bp.plan_precision(cfg, safety.CLASSROOM_LIMITS)
    assert p.steps == len(p.step_s) == 4 and sum(p.step_s) == pytest.approx(p.seconds)
    w = p.step_weights()
    assert sum(w) == pytest.approx(1.0) and w[2] + w[3] > 2 * (w[0] + w[1]), w
    assert pl.Plan(bytes=0, seconds=10, steps=4).step_weights() == (0.25,) * 4
    assert pl.Plan(bytes=0, seconds=10).step_weights() == ()
    both = pl.sum_plans([p, pl.Plan(bytes=0, seconds=p.seconds, steps=1)])
    assert both.steps == 5 and both.step_weights()[-1] == pytest.approx(0.5)
