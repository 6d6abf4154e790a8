"""Benchmarks in worker processes: killed at the time limit (and the lock free within a second),
cancelled at once, stopped at their memory limit, dead with their server, results as data, FIFO
order through the runner, and every estimate within 1.5× of the worker's measured peak RSS."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")

from gemmlib.core.errors import InputError  # noqa: E402
from gemmlib.measure import batching as bb  # noqa: E402
from gemmlib.measure import jobs, runner, safety  # noqa: E402
from gemmlib.measure import precision as bp  # noqa: E402
from gemmlib.measure import profiler as pf  # noqa: E402
from gemmlib.measure import tiling as bt  # noqa: E402
from gemmlib.measure.runqueue import Queue  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BIG = safety.Limits(max_dim=16384, max_bytes=16 * 2**30, time_limit_s=600, classroom=False, max_cpu_flops=1e13)


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path / "cache"))


def _workers(parent: int | None = None) -> list[int]:
    """PIDs of live (not zombie) benchmark workers, children of ``parent`` (default: this process)."""
    parent = os.getpid() if parent is None else parent
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            cmd = (d / "cmdline").read_bytes()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if b"gemmlib.measure.worker" in cmd and fields[0] != "Z" and int(fields[1]) == parent:
            out.append(int(d.name))
    return out


def _slow_job() -> jobs.Job:
    """A 4096³ GEMM: its float64 reference alone takes seconds on this CPU while the estimate (a lower
    bound at an optimistic CPU speed) is a fraction of one."""
    return jobs.precision(bp.PrecisionConfig(device="cpu", shapes=bp.square_shapes([4096]), dtypes=("fp32",),
                                             min_run_time=0.05))


def test_results_come_back_as_data_with_progress():
    seen = []
    cfg = bp.PrecisionConfig(device="cpu", shapes=bp.square_shapes([64]), dtypes=("fp32", "int8"), min_run_time=0.05)
    out = runner.run(jobs.precision(cfg), BIG, on_progress=lambda f, t: seen.append((f, t)))
    assert [r["name"] for r in out.data] == ["fp32", "int8", "int8 + quant"]
    assert all(isinstance(r, dict) for r in out.data)  # plain data, not objects from another process
    assert jobs.results(out.data)[0].rel_error < 1e-5
    assert seen[0][1].startswith("fp32") and seen[-1] == (1.0, "done")
    assert out.peak_rss_bytes > out.baseline_rss_bytes > 50 * 2**20
    assert _workers() == []


def test_a_worker_past_its_time_limit_is_killed_and_the_lock_released_within_a_second(monkeypatch):
    # One uninterruptible 8192³ fp32 GEMM takes seconds here; the time cap is told the CPU is a thousand
    # times faster, so it lets the job in and only the hard kill can stop it.
    monkeypatch.setattr(jobs, "CPU_FLOPS_BOUND", 1e15)
    lim = safety.Limits(max_dim=8192, max_bytes=4 * 2**30, time_limit_s=1.0, classroom=True, max_cpu_flops=2e12)
    job = jobs.precision(bp.PrecisionConfig(device="cpu", shapes=bp.square_shapes([8192]), dtypes=("fp32",),
                                            check_error=False, min_run_time=0.05))
    q = Queue(directory=Path(os.environ["GEMM_CACHE_DIR"]).parent / "q")
    assert jobs.admit(job, lim).seconds < 1.0
    events: dict[str, float] = {}

    def watch():
        while "free" not in events:
            if "ready" not in events and _workers():
                events["ready"] = time.monotonic()
            if "ready" in events and "dead" not in events and not _workers():
                events["dead"] = time.monotonic()
            if "dead" in events and q.running() is None:
                events["free"] = time.monotonic()
            time.sleep(0.005)

    w = threading.Thread(target=watch, daemon=True)
    w.start()
    t0 = time.monotonic()
    with pytest.raises(runner.RunStopped, match="time limit"):
        runner.run(job, lim, queue=q)
    w.join(5)
    assert events["free"] - events["dead"] < 1.0
    # killed at the limit plus its grace (2 s) after the worker was ready; its start-up (imports) is extra
    assert runner.hard_limit_s(lim) <= time.monotonic() - t0 < runner.hard_limit_s(lim) + 15
    assert _workers() == []


def test_cancel_kills_the_worker_and_frees_the_lock_at_once():
    q = Queue(directory=Path(os.environ["GEMM_CACHE_DIR"]).parent / "q")
    started = []

    def cancelled():
        if started and time.monotonic() - started[0] > 0.5:
            return "the visitor's session ended"
        return None

    def progress(frac, text):
        started.append(time.monotonic())

    with pytest.raises(runner.RunCancelled, match="session ended"):
        runner.run(_slow_job(), BIG, queue=q, on_progress=progress, cancelled=cancelled)
    t_free = time.monotonic()
    assert q.running() is None and _workers() == []
    assert t_free - started[0] < 0.5 + 1.0  # within a second of the cancel


def test_a_run_over_its_memory_allowance_is_stopped(monkeypatch):
    """The worker's RLIMIT_DATA comes from the plan: with the plan shrunk to nothing, a real 4096³ run
    (~0.6 GiB of buffers) must hit the limit and be stopped, not take the machine's memory."""
    real_admit = jobs.admit
    monkeypatch.setattr(runner.jobs, "admit", lambda job, lim: jobs.Plan(bytes=1.0) if real_admit(job, lim) else None)
    with pytest.raises(runner.RunStopped, match="more memory than its estimate"):
        runner.run(_slow_job(), BIG)
    assert _workers() == []


def test_refused_jobs_never_start_a_worker():
    lim = safety.Limits(max_dim=512, max_bytes=2**30, time_limit_s=20, classroom=True, max_cpu_flops=2 * 256**3)
    with pytest.raises(InputError, match="GEMM_MAX_DIM"):
        runner.run(jobs.tiling(bt.TilingConfig(device="cpu", size=8192)), lim)
    with pytest.raises(InputError, match="GEMM_MAX_CPU_GFLOP"):
        runner.run(jobs.batching(bb.BatchingConfig(device="cpu", m=1, k=512, n=512, batches=(512,))), lim)
    assert _workers() == []


def test_three_sessions_run_in_the_order_they_asked(tmp_path):
    q = Queue(directory=tmp_path / "q")
    order = []
    tiny = jobs.precision(bp.PrecisionConfig(device="cpu", shapes=bp.square_shapes([32]), dtypes=("fp32",),
                                             min_run_time=0.05))

    def session(name):
        runner.run(tiny, BIG, queue=q, owner=name, on_progress=lambda f, t, n=name: order.append(n) if
                   n not in order else None)

    threads = []
    with q.turn("holder"):
        for i, name in enumerate(["A", "B", "C"]):
            t = threading.Thread(target=session, args=(name,))
            t.start()
            threads.append(t)
            end = time.monotonic() + 10
            while len(q.waiting()) < i + 1 and time.monotonic() < end:
                time.sleep(0.01)
        assert q.waiting() == ["A", "B", "C"]
    for t in threads:
        t.join(120)
    assert order == ["A", "B", "C"]


SERVER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    from gemmlib.measure import jobs, runner, safety
    from gemmlib.measure import precision as bp
    lim = safety.Limits(max_dim=8192, max_bytes=2**33, time_limit_s=600, classroom=False, max_cpu_flops=1e13)
    job = jobs.precision(bp.PrecisionConfig(device="cpu", shapes=bp.square_shapes([4096]), dtypes=("fp32",),
                                            min_run_time=5))
    runner.run(job, lim, on_progress=lambda f, t: print("progress", flush=True))
""")


def test_a_worker_dies_with_its_server():
    server = subprocess.Popen([sys.executable, "-c", SERVER.format(root=str(ROOT))], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert server.stdout.readline().strip() == "progress"  # the worker is running its job
        kids = _workers(server.pid)
        assert len(kids) == 1
        os.kill(server.pid, signal.SIGKILL)
        server.wait(10)
        end = time.monotonic() + 5
        while any(Path(f"/proc/{k}").exists() and "Z" not in _state(k) for k in kids) and time.monotonic() < end:
            time.sleep(0.02)
        assert not any(Path(f"/proc/{k}").exists() and "Z" not in _state(k) for k in kids)
    finally:
        if server.poll() is None:
            server.kill()


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


# --------------------------------------------------------------------------- estimates against measured RSS
MEASURED = [
    pytest.param(jobs.precision(bp.PrecisionConfig(device="cpu", shapes=bp.square_shapes([2048]),
                                                   dtypes=("fp32", "bf16", "int8", "fp8"), min_run_time=0.05)),
                 id="precision-2048-four-formats"),
    pytest.param(jobs.precision(bp.PrecisionConfig(device="cpu", shapes=((4096, 1024, 4096, "tall"),),
                                                   dtypes=("fp32", "int8"), min_run_time=0.05)),
                 id="precision-4096x1024x4096"),
    pytest.param(jobs.tiling(bt.TilingConfig(device="cpu", size=2048, dtype="bf16", tiles=(512, 1024),
                                             impls=("python_tiled", "numpy_blocked", "torch"), min_run_time=0.05)),
                 id="tiling-2048-bf16"),
    pytest.param(jobs.batching(bb.BatchingConfig(device="cpu", m=1, k=2048, n=2048, dtype="fp32", batches=(8, 64),
                                                 min_run_time=0.05)), id="batching-decode-bmm-64"),
    pytest.param(jobs.batching(bb.BatchingConfig(device="cpu", m=512, k=2048, n=2048, dtype="fp32", batches=(8,),
                                                 min_run_time=0.05)), id="batching-prefill-8"),
    pytest.param(jobs.profile(pf.BlockConfig.llama(hidden=1024, heads=8, kv_heads=2, layers=2, seq_len=1024),
                              "cpu", steps=2, monitor=False), id="profile-eager"),
    pytest.param(jobs.block_bench(pf.BlockConfig.llama(hidden=2048, heads=8, kv_heads=2, layers=2, seq_len=512),
                                  "cpu", min_run_time=0.1, monitor=False), id="block-benchmark"),
]


@pytest.mark.parametrize("job", MEASURED)
def test_the_estimate_is_within_1_5x_of_the_workers_measured_peak(job):
    """The worker's peak resident memory (VmHWM: the kernel's high-water mark of the worker's own address
    space, polled from /proc while it runs), less its footprint when it was ready to run, against the
    plan's bytes (every buffer, the float64 reference copies included)."""
    out = runner.run(job, BIG)
    held = out.peak_rss_bytes - out.baseline_rss_bytes
    assert out.plan.bytes > 200 * 2**20  # large enough that the buffers, not the interpreter, are measured
    ratio = held / out.plan.bytes
    assert 1 / 1.5 <= ratio <= 1.5, (f"estimate {out.plan.bytes / 2**20:.0f} MiB, measured "
                                     f"{held / 2**20:.0f} MiB above a {out.baseline_rss_bytes / 2**20:.0f} MiB baseline")
