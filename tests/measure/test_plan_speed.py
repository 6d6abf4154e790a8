"""Issue 26 item 8: admission on this machine's speed now, not the datasheet's.

The time model takes a format's rate from the worker's last speed probe (``core.speed``) before the
ceilings and the datasheet, scales a benchmark's estimate by how much longer its recent runs took,
learns a run killed at its limit as at least that long (so the same run is refused up front next
time, with the estimate and the limit), the worker refuses before its first row what its own probe
says cannot finish, and a run killed at its limit returns the rows it finished."""

from __future__ import annotations

import dataclasses
import math
import time

import pytest

from gemmlib.core import speed
from gemmlib.core.errors import InputError
from gemmlib.measure import plan, safety
from gemmlib.measure import precision as bp
from gemmlib.measure import profiler as pf

CLASSROOM = safety.CLASSROOM_LIMITS
LIMIT_20 = dataclasses.replace(safety.DEFAULT_LIMITS, time_limit_s=20.0)  # the issue's profile run: killed at 22 s
# The issue's link: /Precision?pr_device=cpu&pr_set=Custom&pr_m=2048&pr_n=2048&pr_k=256&pr_time=0.5&pr_quant=true
ISSUE_PRECISION = bp.PrecisionConfig(device="cpu", shapes=((2048, 2048, 256, "2048×2048×256"),),
                                     dtypes=tuple(bp.PRECISION_DTYPES), with_quant=True, min_run_time=0.5)


def _issue_profile() -> pf.ProfileConfig:
    """``profile --layers 16 --steps 20 --batch 8`` as the command line builds it."""
    import argparse

    from gemmlib.cli.profile import config_from_args

    ns = argparse.Namespace(device="cpu", preset=None, scale=None, layers=16, hidden=None, seq_len=None, heads=None,
                            kv_heads=None, intermediate=None, batch=8, attention="eager", dtype=None)
    return pf.ProfileConfig(config_from_args(ns), "cpu", steps=20)


def test_a_probe_sets_the_rate_of_its_format_and_an_old_one_is_ignored():
    before, src = plan.rate("cpu", "bf16")
    assert src == "datasheet"
    speed.save_probe("cpu", {"bf16": before / 100})  # a CPU whose bf16 GEMM is a slow path
    assert plan.rate("cpu", "bf16") == (before / 100, "probed here")
    assert plan.rate("cpu", "fp32")[1] == "datasheet"  # only the formats probed
    speed.save_probe("cpu", {"bf16": before / 100}, now=time.time() - speed.PROBE_MAX_AGE_S - 1)
    assert plan.rate("cpu", "bf16")[1] == "datasheet"


def test_the_issue_precision_link_is_estimated_at_the_probed_speed():
    fast = plan.planned(bp.SPEC, ISSUE_PRECISION, CLASSROOM)
    r_fp32 = plan.rate("cpu", "fp32")[0]
    # what the issue measured on a CPU without AVX-512: bf16 ~0.3 GFLOP/s, torch._int_mm ~1.2 GOP/s
    speed.save_probe("cpu", {"fp32": r_fp32, "bf16": 0.3e9, "fp16": 0.3e9, "int8": 1.2e9})
    slow = plan.planned(bp.SPEC, ISSUE_PRECISION, CLASSROOM)
    assert "probed here" in slow.sources
    one_bf16_call = 2 * 2048 * 2048 * 256 / 0.3e9
    assert slow.seconds > fast.seconds + 3 * one_bf16_call  # at least the three timed bf16 calls more
    with pytest.raises(InputError) as e:
        plan.admit(bp.SPEC, ISSUE_PRECISION, CLASSROOM)
    msg = str(e.value)
    assert "GEMM_TIME_LIMIT_S" in msg and f"{CLASSROOM.time_limit_s:g} s" in msg
    assert f"about {slow.seconds:,.0f} s for {slow.count} steps" in msg  # the estimate it refused on, as shown


def test_recent_runs_scale_the_estimate_and_a_kill_makes_the_next_try_refused():
    job = _issue_profile()
    base = plan.planned(pf.SPEC, job, LIMIT_20)
    assert base.seconds < LIMIT_20.time_limit_s  # admitted on the datasheet, as in the issue
    plan.admit(pf.SPEC, job, LIMIT_20)
    # the worker said it would take base.seconds; it was killed 22 s after it was ready
    from gemmlib.measure import runner

    runner._learn(pf.SPEC, "cpu", (base.seconds, 1.0), 22.0, LIMIT_20.time_limit_s, at_least=True)
    again = plan.planned(pf.SPEC, job, LIMIT_20)
    assert math.isclose(again.seconds, base.seconds * min(speed.RATIO_MAX, 22.0 / base.seconds), rel_tol=1e-9)
    assert "recent runs" in again.sources
    with pytest.raises(InputError, match="GEMM_TIME_LIMIT_S"):  # refused up front this time
        plan.admit(pf.SPEC, job, LIMIT_20)
    assert "recent runs" not in plan.planned(bp.SPEC, ISSUE_PRECISION, LIMIT_20).sources  # per benchmark


def test_the_ratio_is_a_smoothed_bounded_figure():
    assert speed.ratio("tiling", "cpu") == 1.0
    assert math.isclose(speed.record_ratio("tiling", "cpu", 4.0), 2.0)  # halfway (geometric) from 1
    assert math.isclose(speed.record_ratio("tiling", "cpu", 1.0), math.sqrt(2.0))
    assert speed.record_ratio("tiling", "cpu", 1e9) == speed.RATIO_MAX
    assert speed.record_ratio("tiling", "cpu", 0.5, at_least=True) == speed.RATIO_MAX  # a lower bound: kept
    assert speed.record_ratio("tiling", "cpu", float("nan")) == speed.RATIO_MAX
    assert speed.ratio("tiling", "cuda") == 1.0


def test_short_runs_teach_nothing():
    from gemmlib.measure import runner

    runner._learn(bp.SPEC, "cpu", (0.2, 1.0), 1.5, 20.0)  # start-up, not speed
    assert speed.ratio("precision", "cpu") == 1.0
    runner._learn(bp.SPEC, "cpu", (3.0, 1.5), 8.0, 20.0)  # raw estimate 2 s, 8 s taken: 4×, halfway
    assert math.isclose(speed.ratio("precision", "cpu"), 2.0)


def test_a_broken_speed_file_is_no_speed():
    from gemmlib.core.files import private_dir

    (private_dir() / speed.FILE).write_text("{not json")
    assert speed.ratio("precision", "cpu") == 1.0 and speed.probed_rate("cpu", "fp32") is None
    (private_dir() / speed.FILE).write_text('{"probes": {"cpu": {"fp32": {"rate": 1e30, "at": 1e12}}},'
                                            ' "ratios": {"precision/cpu": {"ratio": -3}}}')
    assert speed.ratio("precision", "cpu") == 1.0 and speed.probed_rate("cpu", "fp32") is None


# --------------------------------------------------------------------------- through a real worker
torch = pytest.importorskip("torch")


def test_the_probe_times_each_format_here():
    from gemmlib.measure import speedprobe

    rates = speedprobe.probe("cpu", ["fp32", "int8", "tf32", "fp8"])
    assert set(rates) == {"fp32", "int8"}  # tf32 and fp8 are left to the time model
    assert all(1e6 < r < 1e15 for r in rates.values())


def test_the_worker_refuses_up_front_what_its_probe_says_cannot_finish():
    """The server admitted the run on an estimate of 0.1 s; the worker's own plan at the speed it
    just measured says otherwise (two shapes at 2 s of timing each against a 1 s limit): refused
    before its first row, with the estimate and the limit."""
    from gemmlib.measure import runner

    lim = safety.Limits(max_dim=4096, max_bytes=2**31, time_limit_s=1.0, classroom=True, max_cpu_flops=1e12)
    cfg = bp.PrecisionConfig(device="cpu", shapes=bp.square_shapes([256, 512]), dtypes=("fp32",), min_run_time=2.0)
    steps = []
    optimistic = plan.Plan(bytes=64 * 2**20, seconds=0.1, rows=2)
    with pytest.raises(InputError) as e:
        runner.run(bp.SPEC, cfg, lim, admitted=optimistic, on_progress=lambda f, t: steps.append(t), warm=False)
    msg = str(e.value)
    assert "measured just before the run" in msg and "fp32" in msg and "limit of 1 s" in msg
    assert steps == []  # no row was started
    assert speed.probed_rate("cpu", "fp32") is not None  # kept for the next estimate beside the button


def test_a_run_killed_at_its_limit_returns_the_rows_it_finished(monkeypatch):
    """A small shape, then a 4096³ one whose float64 reference and at least nine timed calls take
    seconds: the hard limit is reached as soon as the small shape's row has come back (the limit
    is whatever time that took, so a loaded or a fast machine reads the same), the worker is killed in
    the middle of the big row, and the small shape's row comes back with the reason."""
    from gemmlib.core import codec
    from gemmlib.measure import runner

    got_rows = []
    decode = codec.decode

    def _decode(kind, value, what):
        out = decode(kind, value, what)
        if what == "rows":
            got_rows.append(out)
        return out

    monkeypatch.setattr(codec, "decode", _decode)
    # No limit before the first row is back; then the limit lies behind: the next poll kills the worker.
    monkeypatch.setattr(runner, "hard_limit_s", lambda lim, p=None: 0.0 if got_rows else float("inf"))
    lim = safety.Limits(max_dim=4096, max_bytes=2**32, time_limit_s=600, classroom=False, max_cpu_flops=1e12)
    cfg = bp.PrecisionConfig(device="cpu", shapes=bp.square_shapes([64, 4096]), dtypes=("fp32",), min_run_time=0.1,
                             check_error=True)
    out = runner.run(bp.SPEC, cfg, lim, warm=False, check_speed=False)
    assert out.stopped is not None and "rows it finished" in str(out.stopped)
    assert [r.shape["m"] for r in out.result] == [64] and out.result[0].supported and out.result[0].median_s


def test_the_profiler_stops_after_a_pass_when_the_rest_cannot_finish():
    """``profile`` measures its own passes: when the passes left cannot finish within the deadline
    it stops with the estimate and the limit (an InputError) instead of being killed with nothing."""
    deadline = safety.Deadline(20.0)
    pf.check_passes_left(0.5, 21, deadline)  # 0.5 × 1.2 × 21 = 12.6 s: fits
    pf.check_passes_left(1.2, 21, deadline, first=True)  # a first pass pays one-time costs: half of it counts
    with pytest.raises(InputError) as e:
        pf.check_passes_left(1.2, 21, deadline)  # 30 s > 20 s
    assert e.value.params["seconds"] == pytest.approx(1.2 * pf.PROFILED_FACTOR * 21)
    assert "GEMM_TIME_LIMIT_S" in str(e.value) and "limit of 20 s" in str(e.value)


def test_a_precision_row_that_cannot_finish_in_what_is_left_is_skipped_with_why():
    """At the probed rate, a row whose timing alone outlasts what is left of the deadline is skipped
    before it starts (the run goes on and ends cleanly), not started and killed; no probe: no skip."""
    cfg = bp.PrecisionConfig(device="cpu", shapes=bp.square_shapes([1024]), dtypes=("fp32",), min_run_time=0.5)
    deadline = safety.Deadline(5.0)
    assert bp._wont_fit("fp32", "cpu", 1024, 1024, 1024, cfg, deadline) == ""  # datasheet rates: not trusted here
    speed.save_probe("cpu", {"fp32": 2 * 1024**3 / 4.0})  # one call: 4 s
    why = bp._wont_fit("fp32", "cpu", 1024, 1024, 1024, cfg, deadline)
    assert "GEMM_TIME_LIMIT_S" in str(why) and why.msg.params["seconds"] >= 3 * 4.0
    assert bp._wont_fit("fp32", "cpu", 64, 64, 64, cfg, deadline) == ""  # a small row still fits


def test_a_gpu_probe_reads_the_kernels_rate_not_the_launch(monkeypatch):
    """A fake GPU whose calls queue (each 2n³ / 700 TFLOP/s of kernel) and whose synchronize costs 15 µs of launch and
    wait: one call at a time up to 1024³ read ~120 TFLOP/s (and the time model ranks the probe above measured
    ceilings); the probe's GPU sizes (to 4096³), each sample ten queued calls, read within 2 % of 700."""
    import torch

    from gemmlib.measure import speedprobe

    clock = {"t": 0.0, "queued": 0.0}
    rate = 700e12

    def sync():
        clock["t"] += clock["queued"] + 15e-6
        clock["queued"] = 0.0

    def call(dtype, n, device):
        def f():
            clock["queued"] += 2 * n**3 / rate
        return f

    monkeypatch.setattr(torch.cuda, "synchronize", sync)
    monkeypatch.setattr(speedprobe, "_call", call)
    monkeypatch.setattr(speedprobe.time, "perf_counter", lambda: clock["t"])
    got = speedprobe.probe_one("bf16", "cuda")
    assert got == pytest.approx(rate, rel=0.02)
    monkeypatch.setattr(speedprobe, "SIZES_GPU", speedprobe.SIZES)  # as it was: one call at a time, to 1024³
    monkeypatch.setattr(speedprobe, "CALLS_GPU", 1)
    assert speedprobe.probe_one("bf16", "cuda") < 0.2 * rate  # the launch and the wait dominate


def test_the_int8_probe_lays_b_out_as_cublaslt_takes_it():
    from gemmlib.measure import speedprobe

    a, b = speedprobe._operands("int8", 64, "cpu", layout_as="cuda")
    assert a.is_contiguous() and b.stride() == (1, 64)  # "TN": B column-major, as quant.int_mm_operands lays it
    assert speedprobe._operands("int8", 64, "cpu")[1].is_contiguous()


def test_the_worker_probes_a_calibrations_own_format():
    # A calibration or validation names its format on its run (cfg.run.dtype: bf16 on a GPU), not on itself: the
    # worker probed fp32 instead, a second of fp32 GEMMs on a GPU that the run never makes.
    from gemmlib.measure import calibrate as cb

    run = cb.make_run("cpu", "llama-3-8b", dtype="bf16")
    assert plan.run_dtypes(cb.CalibrationConfig(run, "cpu")) == ["bf16"]
    assert plan.run_dtypes(cb.CalibrationConfig(run, "cpu", dtypes=("fp32", "bf16"))) == ["fp32", "bf16"]
