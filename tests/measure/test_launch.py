"""The rank launcher on gloo: a rank that raises, hangs, dies or is interrupted ends the run with a
clear message, and no rank process is left behind (checked in /proc, not through the launcher)."""

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from gemmlib.core.errors import InputError
from gemmlib.measure import launch

ROOT = Path(__file__).resolve().parents[2]


# ----- workers (module level: the spawned ranks import this module to find them)
def _ok(ctx, cfg, report):
    import torch
    import torch.distributed as dist
    t = torch.tensor([float(ctx.rank + 1)])
    dist.all_reduce(t)
    report(1.0, "summed")
    return {"sum": float(t.item()), "world": ctx.world, "pid": os.getpid()}


def _sees(ctx, cfg, report):
    import resource

    import torch.distributed as dist
    dist.barrier()  # no rank leaves (closing its connections) while its peer still connects to it
    return {"env": os.environ.get(cfg), "data": resource.getrlimit(resource.RLIMIT_DATA), "ppid": os.getppid()}


def _raises(ctx, cfg, report):
    import torch.distributed as dist
    if ctx.rank == 1:
        raise ValueError("rank one exploded")
    dist.barrier()


def _hangs(ctx, cfg, report):
    import torch.distributed as dist
    if ctx.rank == 1:
        time.sleep(3600)
    dist.barrier()


def _all_hang(ctx, cfg, report):
    report(0.5, "sleeping")
    time.sleep(3600)


def _bad_input(ctx, cfg, report):
    from gemmlib.core.errors import InputError as IE
    if ctx.rank == 0:
        raise IE("this layer does not fit here")
    time.sleep(3600)


def _dies(ctx, cfg, report):
    if ctx.rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(3600)


def _reports_then_sleeps(ctx, cfg, report):
    report(0.1, "started")
    time.sleep(3600)


# ----- /proc, independently of the launcher
def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _rank_children() -> list[int]:
    """Living rank processes this process started: spawned ones (multiprocessing's spawn_main) are its
    children, forked ones the children of its fork server (which run the fork server's command line) that
    are not benchmark workers (named gemm-worker, forked from the same server)."""
    procs = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", encoding="utf-8") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if Path(f"/proc/{d}/comm").read_text().strip() == "gemm-worker":
                continue
            procs[int(d)] = (ppid, Path(f"/proc/{d}/cmdline").read_bytes().decode(errors="replace"))
        except (OSError, ValueError, IndexError):
            continue
    servers = {pid for pid, (ppid, cmd) in procs.items() if ppid == os.getpid() and "forkserver" in cmd}
    return [pid for pid, (ppid, cmd) in procs.items() if _alive(pid) and
            ((ppid == os.getpid() and "spawn_main" in cmd) or ppid in servers)]


def _with_marker(marker: str) -> list[int]:
    """Every living process whose environment carries ``marker`` (orphans included)."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            env = Path(f"/proc/{d}/environ").read_bytes()
        except OSError:
            continue
        if marker.encode() in env and _alive(int(d)):
            found.append(int(d))
    return found


def _describe(pid: int) -> str:
    """pid, parent, state, name and where it waits (for a failure's message)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        name, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
        wchan = Path(f"/proc/{pid}/wchan").read_text() or "-"
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:80]
        status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    except (OSError, ValueError):
        return f"{pid} (gone)"
    sig = " ".join(f"{k} {status.get(k, '?').strip()}" for k in ("SigBlk", "SigIgn", "SigCgt"))  # SIGINT: bit 2 (0x2)
    return f"{pid} ppid {rest[1]} state {rest[0]} {name!r} waits in {wchan} ({sig}) [{cmd}]"


def _assert_gone(pids):
    assert pids, "the error should name the rank processes"
    end = time.monotonic() + 5
    while time.monotonic() < end and any(_alive(p) for p in pids):
        time.sleep(0.1)
    assert not [p for p in pids if _alive(p)]
    assert _rank_children() == []


def test_ranks_run_and_return_rank0_result():
    seen = []
    out = launch.run_ranks(_ok, None, nproc=3, backend="gloo", timeout_s=30, progress=lambda f, t: seen.append(t))
    assert out["sum"] == 1 + 2 + 3 and out["world"] == 3
    assert seen == ["summed"]
    assert not _alive(out["pid"]) and _rank_children() == []


def test_ranks_take_the_callers_environment_and_memory_limit_at_the_launch(monkeypatch):
    """The fork server is started once, by the first launch: what the caller set since (a test's or a page's
    environment, a worker's memory allowance) must still reach the next launch's ranks, as a spawned rank's would."""
    import multiprocessing.forkserver
    import resource

    marker = f"GEMMLIB_TEST_{uuid.uuid4().hex}"
    first = launch.run_ranks(_sees, marker, nproc=2, backend="gloo", timeout_s=30)
    assert first["env"] is None
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    cap = 64 * 1024**3 if hard == resource.RLIM_INFINITY else hard - 1
    monkeypatch.setenv(marker, "set after the first launch")
    resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))
    try:
        out = launch.run_ranks(_sees, marker, nproc=2, backend="gloo", timeout_s=30)
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))
    assert out["env"] == "set after the first launch"
    assert out["data"] == (cap, hard)
    if launch.START_METHOD == "forkserver":  # forked from the fork server, not spawned by this process
        assert out["ppid"] == first["ppid"] == multiprocessing.forkserver._forkserver._forkserver_pid
    assert _rank_children() == []


def test_a_rank_that_raises_stops_every_rank():
    t0 = time.monotonic()
    with pytest.raises(launch.RankError) as e:
        launch.run_ranks(_raises, None, nproc=2, backend="gloo", timeout_s=30)
    msg = str(e.value)
    assert "rank 1 of 2 failed: ValueError: rank one exploded" in msg and "every rank was stopped" in msg
    assert "\n" not in msg and "Traceback" in e.value.details
    assert time.monotonic() - t0 < 20
    _assert_gone(e.value.pids)


def test_a_rank_that_hangs_ends_at_the_process_group_timeout():
    t0 = time.monotonic()
    with pytest.raises(launch.RankError) as e:
        launch.run_ranks(_hangs, None, nproc=2, backend="gloo", timeout_s=3)
    msg = str(e.value)
    # rank 0's barrier times out; rank 1, the one that hung, is named as still running
    assert msg.startswith("rank 0 of 2 failed") and "rank 1 still running" in msg
    assert time.monotonic() - t0 < 20
    _assert_gone(e.value.pids)


def test_ranks_that_never_return_are_stopped_at_the_deadline():
    t0 = time.monotonic()
    with pytest.raises(launch.RankError) as e:
        launch.run_ranks(_all_hang, None, nproc=2, backend="gloo", timeout_s=2)
    msg = str(e.value)
    assert f"did not finish within {2 + launch.GRACE_S:g} s of the ranks' start" in msg and "ranks 0, 1 still running" in msg
    assert "last step: sleeping" in msg
    assert time.monotonic() - t0 < launch.STARTUP_S
    _assert_gone(e.value.pids)


def test_ranks_that_never_start_are_stopped(monkeypatch):
    """Ranks that have not joined the process group by the start-up allowance are stopped (here no
    rank can: starting a rank and meeting the group take far longer than the microsecond allowed)."""
    monkeypatch.setattr(launch, "STARTUP_S", 0.0)
    with pytest.raises(launch.RankError, match=r"did not start within 1e-06 s \(ranks 0, 1 never joined") as e:
        launch.run_ranks(_ok, None, nproc=2, backend="gloo", timeout_s=1e-6)
    _assert_gone(e.value.pids)


def test_bad_input_in_a_rank_is_bad_input():
    with pytest.raises(InputError, match="^this layer does not fit here$"):
        launch.run_ranks(_bad_input, None, nproc=2, backend="gloo", timeout_s=30)
    assert _rank_children() == []


def test_a_rank_killed_by_a_signal():
    with pytest.raises(launch.RankError, match="rank 1 of 2 died with signal SIGKILL") as e:
        launch.run_ranks(_dies, None, nproc=2, backend="gloo", timeout_s=30)
    _assert_gone(e.value.pids)


def test_ctrl_c_in_the_parent_stops_every_rank():
    def interrupt(frac, text):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        launch.run_ranks(_reports_then_sleeps, None, nproc=2, backend="gloo", timeout_s=30, progress=interrupt)
    end = time.monotonic() + 5
    while time.monotonic() < end and _rank_children():
        time.sleep(0.1)
    assert _rank_children() == []


def test_plan_refuses_what_this_machine_cannot_start(monkeypatch):
    with pytest.raises(InputError, match="more ranks than this machine may start"):
        launch.plan(9, "gloo")
    monkeypatch.setenv("GEMM_MAX_RANKS", "2")
    with pytest.raises(InputError, match="cap 2"):
        launch.plan(3, "gloo")
    with pytest.raises(InputError, match="at least 2"):
        launch.plan(1, "gloo")
    with pytest.raises(InputError, match="unknown backend"):
        launch.plan(2, "mpi")
    if launch.cuda_count() < 2:
        with pytest.raises(InputError, match="NCCL needs at least 2 CUDA GPUs"):
            launch.plan(2, "nccl")
    p = launch.plan(2, "auto")
    assert (p.backend, p.kind) == (("nccl", "cuda") if launch.cuda_count() >= 2 else ("gloo", "cpu"))
    assert p.is_interconnect == (p.backend == "nccl")


def _as_a_terminals_job() -> None:
    """Ctrl-C's signal handled as in a terminal's foreground job. A job that a non-interactive shell started in the
    background (``pytest ... &``) inherits SIGINT ignored, and so would the command: it then rightly sleeps through
    the test's Ctrl-C (this test's two failures in full runs started so)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_on_the_command_leaves_no_process(tmp_path):
    """SIGINT to the whole process group, as a terminal's Ctrl-C does: exit 130, nothing left running."""
    marker = f"GEMMLIB_TEST_{uuid.uuid4().hex}"
    env = {**os.environ, marker: "1", "GEMM_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "gemmlib", "bench", "collective", "--nproc", "2",
                             "--backend", "gloo", "--ops", "all_reduce", "--min-bytes", "4M", "--max-bytes", "4M",
                             "--iters", "10000"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=_as_a_terminals_job)
    try:
        end = time.monotonic() + 60
        up = 3 + (launch.START_METHOD == "forkserver")  # the command (its fork server) and its two ranks
        while time.monotonic() < end and len(_with_marker(marker)) < up:
            time.sleep(0.2)
        assert len(_with_marker(marker)) >= up
        time.sleep(1.0)
        os.killpg(proc.pid, signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:  # say who is still there: the command, or a child holding its pipes
            pytest.fail(f"no exit 30 s after Ctrl-C (the command {'exited' if proc.poll() is not None else 'still runs'}): "
                        + "; ".join(_describe(pid) for pid in _with_marker(marker)))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    end = time.monotonic() + 5
    while time.monotonic() < end and _with_marker(marker):
        time.sleep(0.1)
    assert _with_marker(marker) == []


def test_ranks_do_not_run_the_callers_main_script(tmp_path, monkeypatch):
    """spawn re-runs the parent's __main__ in each child; Streamlit makes a page the __main__. The
    ranks must not run it (here: a script that leaves a mark whenever it runs)."""
    import types

    mark = tmp_path / "ran"
    script = tmp_path / "page.py"
    script.write_text(f"open({str(mark)!r}, 'a').write('x')\n", encoding="utf-8")
    fake = types.ModuleType("__main__")
    fake.__file__ = str(script)
    fake.__spec__ = None
    monkeypatch.setitem(sys.modules, "__main__", fake)
    out = launch.run_ranks(_ok, None, nproc=2, backend="gloo", timeout_s=30)
    assert out["sum"] == 3
    assert not mark.exists()
    assert sys.modules["__main__"] is fake  # given back after the start


def test_the_worker_of_a_rank_job_opens_no_cuda_context(monkeypatch):
    # An NCCL job's worker only starts ranks: a CUDA context of its own would sit on GPU 0 (memory, and
    # the per-process memory fraction) beside rank 0's for the whole run.
    import torch

    from gemmlib.measure import collectives, precision, tp, worker
    from gemmlib.measure.collectives import CollectiveConfig

    touched = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: touched.append("synchronize"))
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda *a, **k: touched.append("properties"))
    real_randn = torch.randn

    def randn(*a, **k):
        if str(k.get("device", "cpu")).startswith("cuda"):
            touched.append("randn on cuda")
            return real_randn(*a, **{**k, "device": "cpu"})
        return real_randn(*a, **k)

    monkeypatch.setattr(torch, "randn", randn)
    cfg = tp.TPConfig(model=tp.model_for("llama-3-8b", 16))
    runs = ((tp.SPEC, tp.TPLaunch(cfg, ranks=(2,), backend="nccl")),
            (collectives.SPEC, collectives.CollectiveLaunch(CollectiveConfig(), nproc=2, backend="nccl")))
    for spec, config in runs:
        assert config.device == "cuda" and spec.ranks_open_devices
        worker.prepare(spec, "cpu" if spec.ranks_open_devices else config.device)  # as worker.main does
    assert touched == []
    assert not precision.SPEC.ranks_open_devices
    worker.prepare(precision.SPEC, "cuda")  # a one-GPU run still warms its GPU up
    assert "randn on cuda" in touched and "synchronize" in touched


def test_a_killed_rank_is_named_before_the_errors_it_caused():
    """A rank killed by a signal cannot report; its peers then fail on the closed connection and their error may
    arrive first. The report names the killed rank as the cause, whichever message came first (the race
    test_a_rank_killed_by_a_signal once lost: rank 0's "Connection closed by peer" was reported instead)."""
    from types import SimpleNamespace

    procs = [SimpleNamespace(pid=10, exitcode=None), SimpleNamespace(pid=11, exitcode=-9)]
    errors = [(0, "RuntimeError: Gloo connectFullMesh failed ... Connection closed by peer", "tb", False)]
    e = launch._failure(procs, errors, [1])
    assert str(e).startswith("rank 1 of 2 died with signal SIGKILL (out of memory?) without reporting an error; "
                             "rank 0 failed after it (rank 0: RuntimeError: Gloo connectFullMesh failed")
    assert e.pids == (10, 11)
    # a rank that exits with a status (not a signal) after another's error: the error stays the cause
    procs[1].exitcode = 1
    assert str(launch._failure(procs, errors, [1])).startswith("rank 0 of 2 failed: RuntimeError: Gloo")
    # no error at all: the death alone
    assert str(launch._failure(procs, [], [1])) == ("rank 1 of 2 died with exit status 1 without reporting an error; "
                                                    "every rank was stopped")


def test_the_temp_folders_of_gone_workers_are_swept_and_live_ones_kept(tmp_path, monkeypatch):
    """A server stopped with its benchmark workers running never reaps them, so their temp folders stayed; the next
    server's first worker start removes the folders whose process is gone, and no other."""
    import subprocess
    import sys
    import tempfile

    from gemmlib.measure import launch

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(gone.stdout)
    for prefix in (launch.worker_dir_prefix(dead), launch.rank_dir_prefix(dead), launch.worker_dir_prefix(os.getpid())):
        (tmp_path / (prefix + "x")).mkdir()
    (tmp_path / (launch.RANK_DIRS + "old")).mkdir()  # a name from before the pid was in it: not ours to judge
    assert launch.sweep_dead_dirs() == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([launch.worker_dir_prefix(os.getpid()) + "x",
                                                                 launch.RANK_DIRS + "old"])


def test_a_peers_lost_connection_is_not_named_as_the_cause():
    """Rank 0, blocked in a collective when rank 1 raised, can report gloo's read error before rank 1's own error
    reaches the launcher: the failure then named rank 0's RuntimeError and "rank 1 failed after it" (seen once in a
    clean-clone run). The rank's own error is named first, whichever arrived first."""
    class Proc:
        pid, exitcode = 1, 1

    errors = [(0, "RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:537] Read error [x]: "
                  "Connection reset by peer", "tb0", False),
              (1, "ValueError: rank one exploded", "tb1", False)]
    e = launch._failure([Proc(), Proc()], errors, [0, 1])
    assert str(e).startswith("rank 1 of 2 failed: ValueError: rank one exploded (rank 0 failed after it)")
