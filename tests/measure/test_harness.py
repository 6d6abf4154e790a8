"""The measuring harness: timing, records, errors, limits, guards, the lock and the store."""

import csv
import io
import json
import math
import threading
import time

import numpy as np
import pytest
import torch

from gemmlib.core.errors import InputError
from gemmlib.core.results import (
    BenchResult,
    Timing,
    clear_recorded,
    record,
    recorded,
    to_csv,
    to_json,
    unsupported,
)
from gemmlib.measure import harness, safety

HAS_CUDA = torch.cuda.is_available()


# ----------------------------------------------------------------------------- records
def test_timing_quantiles_match_numpy():
    xs = [5.0, 1.0, 3.0, 2.0, 4.0, 10.0, 7.0]
    t = Timing.from_times(xs)
    assert t.median_s == pytest.approx(np.quantile(xs, 0.5))
    assert t.p20_s == pytest.approx(np.quantile(xs, 0.2))
    assert t.p80_s == pytest.approx(np.quantile(xs, 0.8))
    assert t.reps == len(xs)


def _result(**kw):
    base = dict(bench="precision", name="bf16", device="cpu", device_name="cpu", dtype="bf16",
                shape={"m": 64, "n": 32, "k": 16}, flops=2 * 64 * 32 * 16, bytes=(64 * 16 + 16 * 32 + 64 * 32) * 2)
    base.update(kw)
    return BenchResult(**base)


def test_bench_result_derived_figures():
    r = _result(median_s=2e-6)
    assert r.tflops == pytest.approx(2 * 64 * 32 * 16 / 2e-6 / 1e12)
    assert r.gbps == pytest.approx(r.bytes / 2e-6 / 1e9)
    assert r.intensity == pytest.approx(r.flops / r.bytes)
    d = r.to_dict()
    assert d["tflops"] == pytest.approx(r.tflops) and d["gbps"] == pytest.approx(r.gbps)
    assert d["shape"] == {"m": 64, "n": 32, "k": 16}


def test_unsupported_row_has_no_speed_and_says_why():
    r = unsupported("precision", "tf32", "cpu", "tf32", {"m": 1, "n": 1, "k": 1}, "no tensor cores")
    assert not r.supported and r.reason == "no tensor cores"
    assert r.tflops is None and r.to_dict()["tflops"] is None


def test_json_is_strict_and_round_trips():
    r = _result(median_s=1e-3, rel_error=float("nan"), extra={"note": "x", "arr": (1, 2)})
    text = to_json([r], device="cpu")
    doc = json.loads(text)  # NaN would not be valid strict JSON
    assert doc["device"] == "cpu"
    row = doc["results"][0]
    assert row["rel_error"] is None and row["extra"]["arr"] == [1, 2]
    back = BenchResult.from_dict(row)
    assert back.median_s == r.median_s and back.shape == r.shape


def test_csv_has_one_row_per_result_with_flat_shape():
    rows = [_result(median_s=1e-3), _result(name="fp32", dtype="fp32", median_s=2e-3, shape={"m": 8, "n": 8, "k": 8})]
    parsed = list(csv.DictReader(io.StringIO(to_csv(rows))))
    assert [p["name"] for p in parsed] == ["bf16", "fp32"]
    assert parsed[1]["shape.m"] == "8"
    assert float(parsed[0]["tflops"]) == pytest.approx(rows[0].tflops)


# ----------------------------------------------------------------------------- errors
def test_rel_error_is_max_abs_over_max_ref():
    ref = np.array([[1.0, -4.0], [2.0, 0.5]])
    x = ref + np.array([[0.0, 0.2], [-0.1, 0.0]])
    assert harness.rel_error(x, ref) == pytest.approx(0.2 / 4.0)
    assert harness.rel_error(torch.tensor(x, dtype=torch.float32), torch.tensor(ref)) == pytest.approx(0.05, rel=1e-6)


def test_rel_error_edge_cases():
    z = np.zeros((2, 2))
    assert harness.rel_error(z, z) == 0.0
    assert harness.rel_error(np.ones((2, 2)), z) == math.inf
    assert harness.rel_error(np.array([np.nan]), np.array([1.0])) == math.inf
    with pytest.raises(ValueError):
        harness.rel_error(np.ones(3), np.ones(4))


# ----------------------------------------------------------------------------- timing
def test_time_callable_rotates_through_every_buffer_set():
    seen = []
    sets = [(i,) for i in range(5)]
    t = harness.time_callable(lambda i: seen.append(i), device="cpu", args_list=sets, min_run_time=0.02)
    assert set(seen) == {0, 1, 2, 3, 4}
    # round-robin: consecutive calls use consecutive sets
    assert all((b - a) % 5 == 1 for a, b in zip(seen, seen[1:], strict=False))
    assert t.reps >= 1 and t.p20_s <= t.median_s <= t.p80_s


def test_time_callable_measures_the_call_not_the_harness():
    # A call that sleeps 20 ms must be measured at 20 ms or more, per call (slow path: one call per sample).
    t = harness.time_callable(lambda: time.sleep(0.02), device="cpu", min_run_time=0.1, warmup=1)
    assert t.median_s >= 0.019
    assert t.reps >= 3
    assert "torch.utils.benchmark" in t.method


def test_time_callable_fast_path_uses_blocked_autorange():
    # A call of about a microsecond: far below min_run_time / 20 even on a loaded machine.
    t = harness.time_callable(lambda x: x, device="cpu", args_list=[(1,)], min_run_time=0.3)
    assert t.method == "torch.utils.benchmark (blocked)"
    assert t.reps > 100 and 0 < t.median_s < 0.01


def test_time_callable_rejects_nonsense_settings():
    with pytest.raises(ValueError):
        harness.time_callable(lambda: None, device="cpu", min_run_time=0)


def test_rotation_count():
    assert harness.rotation_count(1024**3) == 1  # one huge set already beats any cache
    assert harness.rotation_count(1024, max_sets=8) == 8
    assert harness.rotation_count(48 * 1024**2, cache_bytes=64 * 1024**2) == 3
    assert harness.rotation_count(1024, max_bytes=4096) == 4


@pytest.mark.parametrize("est_ms", [0.004, 0.1, 1.4, 37.0])
@pytest.mark.parametrize("max_reps", [1, 3, 50, 1000])
def test_do_bench_budget_caps_the_reps_and_keeps_the_warmup(est_ms, max_reps):
    # triton.testing.do_bench (triton 3.9) runs max(1, int(warmup / est)) warm-up and
    # max(1, int(rep / est)) timed calls after its own estimate: the budget must keep both in bounds.
    rep_ms, warmup = 500.0, 3
    warm, rep = harness.do_bench_budget(est_ms, warmup, rep_ms, max_reps)
    n_rep = max(1, int(rep / est_ms))
    n_warm = max(1, int(warm / est_ms))
    assert n_rep <= max_reps
    assert n_warm >= warmup
    assert rep <= rep_ms  # never longer than asked
    if max_reps * est_ms >= rep_ms:  # the time budget binds, not the cap
        assert rep == rep_ms
    else:
        assert n_rep >= max_reps - 1


def test_do_bench_budget_rejects_nonsense():
    with pytest.raises(ValueError):
        harness.do_bench_budget(1.0, -1, 100.0, 10)
    with pytest.raises(ValueError):
        harness.do_bench_budget(1.0, 1, 100.0, 0)


def test_graph_capture_is_thread_local_and_torch_takes_it():
    # Another session's launch must not invalidate a capture (the "global" mode aborts on it).
    import inspect
    assert harness.GRAPH_CAPTURE_MODE == "thread_local"
    params = inspect.signature(torch.cuda.graph.__init__).parameters
    assert "capture_error_mode" in params
    assert "thread_local" in (torch.cuda.graph.__doc__ or "") + inspect.getsource(torch.cuda.graph)


def test_kernel_names_runs_the_call_and_names_no_kernel_on_a_cpu():
    calls = []
    names = harness.kernel_names(lambda: calls.append(torch.ones(4) @ torch.ones(4)), "cpu")
    assert calls and names == []
    assert harness.l2_cache_bytes("cpu") is None


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
def test_kernel_names_on_the_gpu():
    a = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    names = harness.kernel_names(lambda: a @ a, "cuda")
    assert names and all(isinstance(n, str) for n in names)
    assert harness.l2_cache_bytes("cuda") > 1024**2


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
def test_do_bench_path_honours_max_reps():
    a = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    t = harness.time_callable(torch.matmul, device="cuda", args_list=[(a, a)], min_run_time=0.5, max_reps=20)
    assert t.method == "triton.do_bench" and 1 <= t.reps <= 20


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
@pytest.mark.parametrize("mode", ["do_bench", "events", "graph"])
def test_cuda_timing_paths(mode, monkeypatch):
    a = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16)
    if mode == "events":
        import sys
        monkeypatch.setitem(sys.modules, "triton.testing", None)
    t = harness.time_callable(torch.matmul, device="cuda", args_list=[(a, a)], min_run_time=0.05,
                              cuda_graph=mode == "graph")
    assert 0 < t.median_s < 0.05 and t.p20_s <= t.median_s <= t.p80_s


# ----------------------------------------------------------------------------- limits
def test_limits_defaults_env_classroom_and_secrets(monkeypatch):
    for k in ("GEMM_MAX_DIM", "GEMM_MAX_BYTES", "GEMM_TIME_LIMIT_S", "GEMM_CLASSROOM", "GEMM_MAX_CPU_GFLOP"):
        monkeypatch.delenv(k, raising=False)
    assert safety.limits() == safety.DEFAULT_LIMITS
    monkeypatch.setenv("GEMM_CLASSROOM", "1")
    lim = safety.limits()
    assert lim.classroom and lim.max_dim == safety.CLASSROOM_LIMITS.max_dim
    monkeypatch.setenv("GEMM_MAX_DIM", "300")
    monkeypatch.setenv("GEMM_MAX_CPU_GFLOP", "2.5")
    lim = safety.limits()
    assert lim.max_dim == 300 and lim.classroom and lim.max_cpu_flops == pytest.approx(2.5e9)
    # a secrets mapping wins over the environment
    lim = safety.limits({"GEMM_MAX_DIM": 77, "GEMM_CLASSROOM": "0"})
    assert lim.max_dim == 77 and not lim.classroom and lim.max_bytes == safety.DEFAULT_LIMITS.max_bytes


@pytest.mark.parametrize("value", ["abc", "-5", "0"])
def test_limits_reject_malformed_values(monkeypatch, value):
    monkeypatch.setenv("GEMM_MAX_BYTES", value)
    with pytest.raises(InputError, match="GEMM_MAX_BYTES"):
        safety.limits()


def test_check_dims():
    lim = safety.Limits(max_dim=100, max_bytes=1, time_limit_s=1, classroom=True)
    safety.check_dims(lim, M=1, N=100)
    for bad, msg in ((0, "at least 1"), (-3, "at least 1"), (101, "cap of 100"), (2.5, "whole number"),
                     ("7", "whole number"), (True, "whole number")):
        with pytest.raises(InputError, match=msg):
            safety.check_dims(lim, M=bad)
    with pytest.raises(InputError, match="classroom"):
        safety.check_dims(lim, K=1000)


def test_check_cpu_flops():
    lim = safety.Limits(max_dim=10**6, max_bytes=1, time_limit_s=1, classroom=False, max_cpu_flops=1e9)
    lim.check_cpu_flops(1e9)
    with pytest.raises(InputError, match="GEMM_MAX_CPU_GFLOP"):
        lim.check_cpu_flops(2e9)


def test_check_memory_refuses_before_allocating():
    lim = safety.Limits(max_dim=10, max_bytes=1000, time_limit_s=1, classroom=False)
    safety.check_memory(999, "cpu", lim)
    with pytest.raises(InputError, match="cap"):
        safety.check_memory(1001, "cpu", lim)
    free = safety.available_memory("cpu")
    assert free and free > 0
    big = safety.Limits(max_dim=10, max_bytes=10**18, time_limit_s=1, classroom=False)
    with pytest.raises(InputError, match="free"):
        safety.check_memory(10 * free, "cpu", big)


# ----------------------------------------------------------------------------- OOM guard
def test_oom_guard_turns_out_of_memory_into_advice():
    with pytest.raises(InputError, match="out of memory"):
        with safety.oom_guard("cpu"):
            raise RuntimeError("CUDA out of memory. Tried to allocate 20.00 GiB")
    with pytest.raises(InputError):
        with safety.oom_guard("cpu"):
            raise torch.OutOfMemoryError("boom")
    with pytest.raises(InputError):
        with safety.oom_guard("cpu"):
            raise RuntimeError("[enforce fail at alloc_cpu.cpp] DefaultCPUAllocator: can't allocate memory")


def test_oom_guard_lets_other_errors_through():
    with pytest.raises(RuntimeError, match="shape mismatch"):
        with safety.oom_guard("cpu"):
            raise RuntimeError("shape mismatch")


def test_oom_guard_empties_the_cuda_cache(monkeypatch):
    calls = []
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: calls.append(1))
    with pytest.raises(InputError):
        with safety.oom_guard("cuda"):
            raise torch.OutOfMemoryError("CUDA out of memory")
    assert calls == [1]


# ----------------------------------------------------------------------------- single flight
def test_single_flight_queues_the_second_run_and_tells_it():
    order, waits = [], []
    started = threading.Event()
    release = threading.Event()

    def first():
        with safety.single_flight("run A"):
            order.append("A start")
            started.set()
            release.wait(5)
            order.append("A end")

    t = threading.Thread(target=first)
    t.start()
    started.wait(5)
    assert safety.current_owner() == "run A"
    timer = threading.Timer(0.4, release.set)
    timer.start()
    with safety.single_flight("run B", on_wait=waits.append, poll_s=0.05):
        order.append("B start")
    t.join(5)
    assert order == ["A start", "A end", "B start"]
    assert waits and waits[0] == "queued behind run A"
    assert safety.current_owner() is None


def test_single_flight_times_out_with_a_clear_message():
    held = threading.Event()
    done = threading.Event()

    def holder():
        with safety.single_flight("a long run"):
            held.set()
            done.wait(5)

    t = threading.Thread(target=holder)
    t.start()
    held.wait(5)
    try:
        with pytest.raises(safety.BusyError, match="busy"):
            with safety.single_flight("impatient", timeout_s=0.2, poll_s=0.05):
                pass
    finally:
        done.set()
        t.join(5)
    with safety.single_flight("after"):  # released again
        pass


def test_single_flight_releases_on_error():
    with pytest.raises(ZeroDivisionError):
        with safety.single_flight("crash"):
            1 / 0  # noqa: B018
    with safety.single_flight("next", timeout_s=0.5):
        assert safety.current_owner() == "next"


def test_deadline():
    assert not safety.Deadline(None).expired()
    d = safety.Deadline(0.0)
    assert d.expired() and "time limit" in d.reason()


# ----------------------------------------------------------------------------- store and devices
def test_record_and_clear():
    clear_recorded()
    record([_result(), "not a result"])
    assert len(recorded()) == 1 and recorded()[0].name == "bf16"
    clear_recorded()
    assert recorded() == []


def test_torch_device_available_and_require_device(monkeypatch):
    assert harness.torch_device_available("cpu") == (True, "")
    ok, why = harness.torch_device_available("tpu")
    assert not ok and "unknown" in why
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    ok, why = harness.torch_device_available("cuda")
    assert not ok and "CUDA" in why
    with pytest.raises(InputError, match="cuda"):
        harness.require_device("cuda")
    assert harness.require_device(" CPU ") == "cpu"


def test_harness_import_does_not_import_torch():
    import subprocess
    import sys
    code = "import sys, gemmlib.measure.harness; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
