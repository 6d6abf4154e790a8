"""The measuring harness: timing, records, errors, limits, guards, the lock and the store."""

import csv
import io
import json
import math
import threading
import time
import types

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
from gemmlib.measure import harness, plan, safety

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
    # A call that sleeps 20 ms must be measured at 20 ms or more, per call (slow path: one call per sample),
    # and is called once to warm up and once per sample, no more (torch's Timer.timeit(number=1) would
    # add two warm-up calls before every sample).
    calls = []
    t = harness.time_callable(lambda: calls.append(time.sleep(0.02)), device="cpu", min_run_time=0.1, warmup=1)
    assert t.median_s >= 0.019
    assert t.reps >= 3 and len(calls) == 1 + t.reps
    assert t.method == "one call per sample (perf_counter)"
    # the planner counts the same calls: one warm-up, then samples for 0.1 s (five of 20 ms)
    assert plan.row_seconds(0.02, 0.1, warmup=1) == pytest.approx(plan.ROW_OVERHEAD_S + 0.02 + 5 * 0.02)


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


def test_graph_capture_is_thread_local_and_torch_takes_it(monkeypatch):
    # Another session's launch must not invalidate a capture (the "global" mode aborts on it): the
    # harness's CUDA-graph timing captures with capture_error_mode="thread_local" (what it passes is
    # recorded through a stand-in torch.cuda, on any machine), a mode torch's own graph accepts.
    import contextlib
    import inspect
    import types

    real_graph = torch.cuda.graph
    params = inspect.signature(real_graph.__init__).parameters
    assert "capture_error_mode" in params
    assert "thread_local" in (real_graph.__doc__ or "") + inspect.getsource(real_graph)

    captured: list[dict] = []
    replays: list[int] = []

    @contextlib.contextmanager
    def graph(g, **kw):
        captured.append(kw)
        yield

    class Event:
        def __init__(self, enable_timing=False):
            pass

        def record(self):
            pass

        def elapsed_time(self, other):
            return 2.0  # ms

    stream = types.SimpleNamespace(wait_stream=lambda other: None)
    for name, value in {"Stream": lambda: stream, "current_stream": lambda: stream,
                        "stream": lambda s: contextlib.nullcontext(), "synchronize": lambda: None,
                        "CUDAGraph": lambda: types.SimpleNamespace(replay=lambda: replays.append(1)),
                        "graph": graph, "Event": Event}.items():
        monkeypatch.setattr(torch.cuda, name, value)
    calls: list[int] = []
    ops = harness.CudaOps()  # what time_graph captures through on a GPU
    ops.capture(lambda: calls.append(1))
    assert captured == [{"capture_error_mode": "thread_local"}]
    assert calls == [1]  # the body ran inside the capture


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


# ----------------------------------------------------------------------------- CUDA paths on a simulated device
class FakeGpu:
    """A host clock and a device queue, as the harness's CUDA paths see them (``harness.CudaOps``).

    Every enqueued kernel costs the host ``launch_s``; the device runs kernels in order, each when
    it reaches it and the host has enqueued it. An event records the device time at its place in
    the queue. A graph replay costs the host ``replay_s`` and runs its kernels back to back.
    """

    def __init__(self, launch_s=10e-6, replay_s=10e-6, record_s=1e-6, flush_s=80e-6, l2=1 << 20):
        self.launch_s, self.replay_s, self.record_s, self.flush_s, self.l2 = launch_s, replay_s, record_s, flush_s, l2
        self.host = 0.0
        self.free = 0.0  # when the device has finished what is queued
        self.capturing = None
        self.graphs = []
        self.spins = []
        self.flushes = 0

    def _run(self, dur, host_cost):
        self.host += host_cost
        start = max(self.free, self.host)
        self.free = start + dur

    def kernel(self, dur):
        if self.capturing is not None:
            self.capturing.append(dur)
        else:
            self._run(dur, self.launch_s)

    # harness.CudaOps
    def host_time(self):
        return self.host

    def event(self):
        return {"t": None}

    def record(self, ev):
        assert self.capturing is None, "the harness records no event inside a graph"
        self.host += self.record_s
        ev["t"] = max(self.free, self.host)
        self.free = ev["t"]

    def elapsed_s(self, a, b):
        return b["t"] - a["t"]

    def synchronize(self):
        self.host = max(self.host, self.free)

    def side_stream(self):
        import contextlib
        return contextlib.nullcontext()

    def capture(self, body):
        self.capturing = []
        body()
        graph, self.capturing = self.capturing, None
        self.graphs.append(graph)
        return graph

    def replay(self, graph):
        self._run(sum(graph), self.replay_s)

    def spin(self, seconds):
        self.spins.append(seconds)
        self.kernel(seconds)

    def l2_bytes(self):
        return self.l2

    def flusher(self):
        def flush():
            self.flushes += 1
            self.kernel(self.flush_s)
        return flush, "fake flush"


def _kernel(gpu, dur):
    return lambda *a: gpu.kernel(dur)


def test_a_graph_of_one_call_per_replay_times_the_launch():
    # What the harness did before: one call captured, an event pair around each replay.
    gpu = FakeGpu()
    graph = gpu.capture(lambda: gpu.kernel(2e-6))
    s, e = gpu.event(), gpu.event()
    gpu.record(s)
    gpu.replay(graph)
    gpu.record(e)
    assert gpu.elapsed_s(s, e) == pytest.approx(12e-6)  # the 10 µs launch, not the 2 µs kernel


def test_the_graph_path_unrolls_calls_and_divides_one_replay():
    gpu = FakeGpu()
    small = torch.empty(16)  # far below twice the L2: the flush is captured and subtracted
    t = harness.time_graph([(small,)], _kernel(gpu, 2e-6), gpu, warmup=2, rep_s=0.2, max_reps=100_000,
                           flush_l2=True)
    graph = max(gpu.graphs, key=len)
    calls = int(t.method.split("(")[1].split()[0])
    assert calls == harness.MAX_GRAPH_CALLS and len(graph) == 2 * calls  # a flush and a call, unrolled
    assert graph[:2] == [gpu.flush_s, 2e-6]
    # per call: (replay of flushes + calls − replay of the flushes alone) / calls, launches included
    assert t.median_s == pytest.approx(2e-6, rel=1e-9)
    assert t.reps == harness.GRAPH_SAMPLES * calls and t.p20_s == pytest.approx(t.p80_s)
    assert "flushed" in t.method and "subtracted" in t.method


def test_the_graph_path_adds_no_flush_when_the_rotated_sets_exceed_the_l2():
    sets = [(torch.empty(128),) for _ in range(4)]  # 4 distinct sets of 512 B: 2 KiB
    cold = FakeGpu(l2=1024)  # 2 KiB is twice the L2: every call finds its inputs evicted
    t = harness.time_graph(sets, _kernel(cold, 5e-6), cold, warmup=1, rep_s=0.05, max_reps=10_000)
    assert cold.flushes == 0 and "exceed twice the L2" in t.method
    assert all(d == 5e-6 for d in max(cold.graphs, key=len))
    assert t.median_s == pytest.approx(5e-6, rel=1e-2)  # one 10 µs launch spread over the unrolled calls
    warm = FakeGpu(l2=4096)  # the same sets fit the L2: flushed, and the flushes subtracted
    t = harness.time_graph(sets, _kernel(warm, 5e-6), warm, warmup=1, rep_s=0.05, max_reps=10_000)
    assert warm.flushes > 0 and "flushed" in t.method
    assert t.median_s == pytest.approx(5e-6, rel=1e-6)
    assert harness.tensor_bytes(sets + sets) == 2048  # a set passed twice counts once


def test_the_graph_path_gives_a_slow_call_three_samples():
    gpu = FakeGpu()
    t = harness.time_graph([()], _kernel(gpu, 0.4), gpu, warmup=1, rep_s=0.5, max_reps=1000, flush_l2=False)
    assert t.reps == harness.MIN_SAMPLES and t.median_s == pytest.approx(0.4, rel=1e-3)
    assert harness.graph_plan(0.4, 1, 0.5, 1000) == (1, 3)
    assert harness.graph_plan(1e-6, 4, 0.5, 1000) == (25, 10)  # 1000 calls over 4 sets, capped by max_reps


def test_host_bound_events_are_fixed_by_a_spin_kernel():
    # A 2 µs kernel that takes the host 10 µs to launch: an event pair would time the launch.
    gpu = FakeGpu()
    seen = []

    def naive():  # back-to-back calls, an event pair around each, no spin
        pairs = []
        for _ in range(20):
            s, e = gpu.event(), gpu.event()
            gpu.record(s)
            gpu.kernel(2e-6)
            gpu.record(e)
            pairs.append(gpu.elapsed_s(s, e))
        return pairs

    assert min(naive()) > 10e-6
    t = harness.time_events(lambda: seen.append(gpu.kernel(2e-6)), gpu, warmup=2, rep_s=0.01, max_reps=1000)
    assert t.median_s == pytest.approx(2e-6, rel=1e-9) and t.p80_s == pytest.approx(2e-6, rel=1e-9)
    assert gpu.spins and "spin" in t.method
    assert t.reps >= harness.MIN_SAMPLES


def test_events_with_a_flush_time_the_call_alone_and_take_three_samples_of_a_slow_one():
    gpu = FakeGpu()
    flush, _ = gpu.flusher()
    t = harness.time_events(lambda: gpu.kernel(1.0), gpu, warmup=1, rep_s=0.5, max_reps=1000, flush=flush)
    assert t.reps == 3 and t.median_s == pytest.approx(1.0) and not gpu.spins


class _FakeTesting:
    def __init__(self):
        self.calls = []

    def do_bench(self, fn, warmup, rep, return_mode):
        self.calls.append((warmup, rep))
        return [1.0, 1.1, 1.2]


def test_a_call_too_slow_for_do_bench_is_timed_with_events_and_the_same_flush():
    gpu, tt = FakeGpu(), _FakeTesting()
    call = _kernel(gpu, 0.3)  # 300 ms: do_bench would fit one sample in 500 ms
    t = harness._time_cuda(call, [()], call, 1, 0.5, 1000, False, True, ops=gpu, testing=tt)
    assert tt.calls == [] and t.reps == 3 and "L2 flushed" in t.method
    fast = _kernel(gpu, 1e-3)
    t = harness._time_cuda(fast, [()], fast, 1, 0.5, 1000, False, True, ops=gpu, testing=tt)
    assert len(tt.calls) == 1 and t.method == "triton.do_bench"


def test_the_timed_window_opens_after_the_warmup_and_closes_after_the_last_call():
    log = []

    class Win:
        def start(self):
            log.append("start")

        def stop(self):
            log.append("stop")

    gpu = FakeGpu()

    def call():
        log.append("call")
        gpu.kernel(1e-3)

    t = harness.time_events(call, gpu, warmup=3, rep_s=0.01, max_reps=1000, window=Win())
    first = log.index("start")
    assert log[:first] == ["call"] * (3 + 3)  # warm-up and the estimate
    assert log[first + 1:-1] == ["call"] * t.reps and log[-1] == "stop"
    log.clear()
    t = harness.time_callable(lambda: log.append("call"), device="cpu", warmup=2, min_run_time=0.02, window=Win())
    assert log[0] == "call" and log.count("start") == 1 and log[-1] == "stop"


def test_min_samples_on_the_cpu_for_a_slow_call():
    t = harness.time_callable(lambda: time.sleep(0.03), device="cpu", min_run_time=0.01, warmup=1)
    assert t.reps >= harness.MIN_SAMPLES
    with pytest.raises(ValueError):
        harness.time_callable(lambda: None, device="cpu", max_reps=2)


# ----------------------------------------------------------------------------- the L2 flush and Triton's driver
class _Buf:
    def __init__(self):
        self.zeroed = 0

    def zero_(self):
        self.zeroed += 1


def _runtime(driver):
    return types.SimpleNamespace(driver=types.SimpleNamespace(active=driver))


def test_flush_uses_clear_cache_where_the_driver_has_it():
    buf, cleared = _Buf(), []
    drv = types.SimpleNamespace(get_empty_cache_for_benchmark=lambda: buf, clear_cache=cleared.append)
    flush, how = harness.l2_flusher("cpu", _runtime(drv))
    flush()
    assert cleared == [buf, buf] and how == "triton clear_cache"  # called once inside the guard, then here


def test_a_driver_without_clear_cache_zeroes_its_buffer():
    buf = _Buf()
    drv = types.SimpleNamespace(get_empty_cache_for_benchmark=lambda: buf)  # Triton < 3.2
    flush, how = harness.l2_flusher("cpu", _runtime(drv))
    flush()
    assert buf.zeroed == 2 and "zeroed" in how


def test_a_failing_driver_falls_back_to_a_buffer_of_our_own():
    def broken(_cache):
        raise RuntimeError("driver too old")

    drv = types.SimpleNamespace(get_empty_cache_for_benchmark=_Buf, clear_cache=broken)
    flush, how = harness.l2_flusher("cpu", _runtime(drv), nbytes=4096)
    flush()
    assert "buffer zeroed" in how
    no_driver = types.SimpleNamespace(driver=types.SimpleNamespace())  # no .active at all
    flush, how = harness.l2_flusher("cpu", no_driver, nbytes=4096)
    flush()
    assert "buffer zeroed" in how


# ----------------------------------------------------------------------------- the same paths on a real GPU
@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
def test_on_the_gpu_a_small_gemm_through_every_path():
    a = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    times = {}
    for label, kw in (("do_bench", {}), ("graph", {"cuda_graph": True}),
                      ("graph warm", {"cuda_graph": True, "flush_l2": False}), ("events", {"flush_l2": False})):
        t = harness.time_callable(torch.matmul, device="cuda", args_list=[(a, a)], min_run_time=0.1, **kw)
        assert 0 < t.p20_s <= t.median_s <= t.p80_s < 1e-3 and t.reps >= harness.MIN_SAMPLES, (label, t)
        times[label] = t
    assert "calls per replay" in times["graph"].method and "spin" in times["events"].method
    # the graph path no longer times its launch: within a factor of 3 of do_bench (which is not host-bound:
    # its flush keeps the GPU busy while the host enqueues the next call)
    assert times["graph"].median_s < 3 * times["do_bench"].median_s
    flush, how = harness.l2_flusher("cuda")
    flush()
    torch.cuda.synchronize()
    assert how


# ----------------------------------------------------------------------------- the launch queue behind a spin
class QueuedGpu(FakeGpu):
    """FakeGpu with the driver's launch queue: a kernel or an event record is one entry, and the host blocks
    while ``depth`` entries are pending (until the device finishes the oldest). ``count_kernels`` counts the
    launches of one call (``None``: the profiler cannot run)."""

    def __init__(self, depth=1024, countable=True, **kw):
        super().__init__(**kw)
        self.depth, self.countable, self.pending, self.counted = depth, countable, [], 0

    def _admit(self):
        self.pending = [t for t in self.pending if t > self.host]
        if len(self.pending) >= self.depth:
            self.host = self.pending[len(self.pending) - self.depth]  # waits for the oldest to finish
            self.pending = [t for t in self.pending if t > self.host]

    def _run(self, dur, host_cost):
        self._admit()
        super()._run(dur, host_cost)
        self.pending.append(self.free)

    def record(self, ev):
        self._admit()
        super().record(ev)
        self.pending.append(self.free)

    def count_kernels(self, call):
        self.counted += 1
        if not self.countable:
            return None
        before = self.launches
        call()
        self.synchronize()
        return self.launches - before

    launches = 0

    def kernel(self, dur):
        self.launches += 1
        super().kernel(dur)


def _many(gpu, n, dur):
    def call():
        for _ in range(n):
            gpu.kernel(dur)
    return call


def test_event_chunk_fits_the_launch_queue_and_the_spin():
    room = int(harness.LAUNCH_QUEUE * harness.QUEUE_SHARE) - 1
    assert harness.event_chunk(1, 10e-6) == harness.EVENT_CHUNK  # a GEMM: 64 calls of 3 entries
    assert harness.event_chunk(60, 300e-6) == room // 62 == 8
    assert harness.event_chunk(600, 3e-3) == 0  # one call alone is more than the queue's share
    assert harness.event_chunk(1, 10e-3) == 2  # a spin of at most MAX_SPIN_S covers 2.5 calls of 10 ms
    assert harness.LAUNCH_QUEUE * harness.QUEUE_SHARE <= 1024


def test_a_gemm_is_not_profiled_and_keeps_a_chunk_near_64():
    gpu = QueuedGpu()
    t = harness.time_events(_kernel(gpu, 2e-6), gpu, warmup=2, rep_s=0.01, max_reps=1000)
    # 11 µs of host per call (its launch and two records): at most 6 kernels, 63 calls behind one spin
    assert gpu.counted == 0 and "every 63 calls; 6 kernels per call (at most)" in t.method
    assert t.median_s == pytest.approx(2e-6, rel=1e-9)


def test_a_call_of_many_kernels_gets_a_chunk_that_fits_the_queue():
    # 60 kernels of 2 µs, 5 µs to launch each: 300 µs of host, 120 µs of device per call. 64 calls behind one
    # spin are 3,968 entries: the host blocks at 1,024 and the device waits on it, so the events time the host.
    gpu = QueuedGpu(launch_s=5e-6)
    call = _many(gpu, 60, 2e-6)
    t = harness.time_events(call, gpu, warmup=1, rep_s=0.05, max_reps=1000)
    assert gpu.counted == 1 and "every 8 calls; 60 kernels per call (counted)" in t.method
    assert t.median_s == pytest.approx(120e-6, rel=1e-6) and t.p80_s == pytest.approx(120e-6, rel=1e-6)
    old = QueuedGpu(launch_s=5e-6)  # what a chunk of 64 measured on the same device
    import unittest.mock as um
    with um.patch.object(harness, "event_chunk", lambda k, h: harness.EVENT_CHUNK), \
            um.patch.object(harness, "MIN_EVENT_CHUNK", 0):
        bad = harness.time_events(_many(old, 60, 2e-6), old, warmup=1, rep_s=0.05, max_reps=1000)
    # the first calls after each spin read the device's 120 µs, the rest the host's ~300 µs: a median between
    assert bad.median_s > 1.5 * 120e-6 and bad.p80_s > 2 * 120e-6


def test_a_block_too_big_for_the_queue_is_timed_synchronized_and_says_so():
    gpu = QueuedGpu(launch_s=5e-6)
    call = _many(gpu, 600, 20e-6)  # 600 kernels: 12 ms of device work, 3 ms to launch
    t = harness.time_events(call, gpu, warmup=1, rep_s=0.1, max_reps=1000)
    assert t.method.startswith("cuda-events synchronized (1 calls per sample")
    assert "600 kernels per call (counted), 0 calls fit" in t.method and not gpu.spins
    assert t.reps == 8 and t.median_s == pytest.approx(12e-3, rel=1e-3)  # 0.1 s / 12 ms samples, device-bound
    assert harness.sync_plan(200e-6, 0.1, 1000) == (5, 100)  # 1 ms samples of 5 calls, 1,000 calls at most
    assert harness.sync_plan(1.0, 0.1, 1000) == (1, 3)  # a slow call: three samples of one


def test_without_a_count_the_host_time_bounds_the_kernels():
    gpu = QueuedGpu(launch_s=5e-6, countable=False)
    t = harness.time_events(_many(gpu, 60, 2e-6), gpu, warmup=1, rep_s=0.05, max_reps=1000)
    # 300 µs of host: up to 150 launches, 3 calls behind a spin at most: synchronized, and said so
    assert gpu.counted == 1 and "synchronized" in t.method and "kernels per call (at most)" in t.method
    assert harness.kernels_per_call(lambda: None, gpu, 300e-6) == (150, "at most")


def test_a_host_slower_than_a_spin_covers_is_timed_synchronized():
    gpu = QueuedGpu(launch_s=20e-3)  # one kernel that takes the host 20 ms to launch
    t = harness.time_events(_kernel(gpu, 1e-3), gpu, warmup=1, rep_s=0.05, max_reps=1000)
    assert "synchronized" in t.method and "longer than a spin covers" in t.method


@pytest.mark.filterwarnings("ignore:CUDA is not available")
def test_cuda_ops_count_kernels_gives_none_without_a_gpu():
    ops = harness.CudaOps()
    assert ops.count_kernels(lambda: torch.ones(4) + 1) is None  # no CUDA activity here: the bound stays
