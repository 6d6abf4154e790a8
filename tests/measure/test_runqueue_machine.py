"""Issue 26 items 6 and 7: one queue for the machine, whichever user or cache folder starts the run,
and at most one run per browser session and a policy-set number per visitor address.

The machine's queue folder is the one the policy names (``GEMM_QUEUE_DIR``); every test here names
one of its own through ``GEMM_POLICY_FILE`` (tests/conftest.py does for every test), so the real
``/tmp/gemmlib-queue`` is never touched."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from gemmlib.core.files import ServerSetupError
from gemmlib.measure import runqueue
from gemmlib.measure.runqueue import Queue, Visitor, VisitorLimit

ROOT = Path(__file__).resolve().parents[2]

# A command-line-like waiter: the machine's default queue (no directory given), its own cache folder.
WAITER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {root!r})
    from gemmlib.measure.runqueue import default_queue
    name, hold, log = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    with default_queue().turn(name, poll_s=0.02):
        with open(log, "a") as f:
            f.write(name + "\\n")
        time.sleep(hold)
""")


def _policy(folder: Path, queue: Path, extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    pol = folder / "policy.toml"
    pol.write_text(f'GEMM_QUEUE_DIR = "{queue}"\n{extra}')
    os.chmod(pol, 0o644)
    return pol


def _spawn(name: str, hold: float, log: Path, env: dict[str, str], user: int | None = None,
           python: str = sys.executable) -> subprocess.Popen:
    return subprocess.Popen([python, "-c", WAITER.format(root=str(ROOT)), name, str(hold), str(log)],
                            env={**os.environ, **env}, user=user)


def _python_for(uid: int) -> str | None:
    """An interpreter that user ``uid`` can run this repository's queue with (this one may sit in
    root's home), or None."""
    for python in dict.fromkeys((sys.executable, "/usr/bin/python3")):
        try:
            ok = subprocess.run([python, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
                                 "import gemmlib.measure.runqueue"], user=uid, capture_output=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            continue
        if ok.returncode == 0:
            return python
    return None


def _wait_until(cond, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("timed out")
        time.sleep(0.02)


def test_two_processes_with_different_cache_folders_queue_in_one_line(tmp_path, monkeypatch):
    pol = _policy(tmp_path / "pol", tmp_path / "machine-queue")
    monkeypatch.setenv("GEMM_POLICY_FILE", str(pol))
    log = tmp_path / "log"
    q = runqueue.default_queue()
    assert q.dir == tmp_path / "machine-queue"
    assert stat.S_IMODE(os.stat(q.dir).st_mode) == 0o1777  # made like /tmp: any user adds, none removes another's
    a = _spawn("class-run", 1.0, log, {"GEMM_CACHE_DIR": str(tmp_path / "server-cache"), "GEMM_POLICY_FILE": str(pol)})
    _wait_until(lambda: q.running() == "class-run")
    b = _spawn("cli-run", 0.0, log, {"GEMM_CACHE_DIR": str(tmp_path / "other-cache"), "GEMM_POLICY_FILE": str(pol)})
    _wait_until(lambda: q.waiting() == ["cli-run"])  # behind the class's run, not beside it
    assert a.wait(30) == 0 and b.wait(30) == 0
    assert log.read_text().split() == ["class-run", "cli-run"]
    assert (tmp_path / "server-cache") != (tmp_path / "other-cache")


def test_the_default_queue_is_one_fixed_machine_folder_not_the_cache_or_tmpdir(monkeypatch, tmp_path):
    from gemmlib.core import policy

    monkeypatch.delenv("GEMM_POLICY_FILE")
    monkeypatch.setattr(policy, "MACHINE_POLICY", tmp_path / "no-etc" / "policy.toml")
    monkeypatch.setattr(runqueue, "MACHINE_QUEUE_DIR", tmp_path / "gemmlib-queue")  # in place of /tmp/gemmlib-queue
    seen = set()
    for cache, tmpdir in (("a", "x"), ("b", "y")):
        monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path / cache))
        monkeypatch.setenv("TMPDIR", str(tmp_path / tmpdir))
        seen.add(runqueue.default_queue().dir)
    assert seen == {tmp_path / "gemmlib-queue"}


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root to start a process as another user")
def test_another_user_waits_in_the_same_line(monkeypatch):
    """A process of another user (nobody) with its own cache folder queues behind root's run (the
    folders in a short private place of their own that nobody can read: not the tests' 0700 one)."""
    python = _python_for(65534)
    if python is None:
        pytest.skip("no interpreter here that user 65534 can run this repository with")
    base = Path(tempfile.mkdtemp(prefix="gemm-q-"))
    try:
        os.chmod(base, 0o755)
        pol = _policy(base / "pol", base / "queue")
        os.chmod(base / "pol", 0o755)
        log = base / "log"
        log.touch()
        os.chmod(log, 0o666)
        env = {"GEMM_POLICY_FILE": str(pol)}
        monkeypatch.setenv("GEMM_POLICY_FILE", str(pol))
        q = runqueue.default_queue()
        root_run = _spawn("root-run", 1.0, log, {**env, "GEMM_CACHE_DIR": str(base / "root-cache")})
        _wait_until(lambda: q.running() == "root-run")
        other = _spawn("nobody-run", 0.0, log, {**env, "GEMM_CACHE_DIR": str(base / "nobody-cache")}, user=65534,
                       python=python)
        _wait_until(lambda: q.waiting() == ["nobody-run"])
        assert root_run.wait(30) == 0 and other.wait(30) == 0
        assert log.read_text().split() == ["root-run", "nobody-run"]
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("plant", ["link", "open", "file"])
def test_a_queue_folder_others_could_tamper_with_is_refused(tmp_path, monkeypatch, plant):
    qdir = tmp_path / "queue"
    if plant == "link":
        (tmp_path / "elsewhere").mkdir()
        qdir.symlink_to(tmp_path / "elsewhere")
    elif plant == "open":
        qdir.mkdir()
        os.chmod(qdir, 0o777)  # writable by all without the sticky bit: anyone could replace run.lock
    else:
        qdir.write_text("not a folder")
    monkeypatch.setenv("GEMM_POLICY_FILE", str(_policy(tmp_path / "pol", qdir)))
    with pytest.raises(ServerSetupError) as e:
        runqueue.default_queue()
    assert "queue folder" in str(e.value)


def test_a_hard_link_planted_as_the_run_lock_is_refused(tmp_path):
    q = Queue(directory=tmp_path / "q")
    victim = tmp_path / "victim"
    victim.write_text("keep")
    os.link(victim, q.dir / "run.lock")
    with pytest.raises(ServerSetupError) as e:
        with q.turn("me", timeout_s=1):
            pass
    assert "hard link" in str(e.value) and victim.read_text() == "keep"


def test_the_policy_names_the_queue_folder_as_an_absolute_path(tmp_path, monkeypatch):
    from gemmlib.core import policy

    pol = tmp_path / "p" / "policy.toml"
    pol.parent.mkdir()
    monkeypatch.setenv("GEMM_POLICY_FILE", str(pol))
    for bad in ('GEMM_QUEUE_DIR = "relative/queue"', "GEMM_QUEUE_DIR = 3", "GEMM_MAX_RUNS_PER_ADDRESS = 0",
                "GEMM_MAX_RUNS_PER_ADDRESS = true"):
        pol.write_text(bad + "\n")
        with pytest.raises(ServerSetupError):
            policy.machine_policy()
    pol.write_text('GEMM_QUEUE_DIR = "/var/lib/gemmlib/queue"\nGEMM_MAX_RUNS_PER_ADDRESS = 3\n')
    got = policy.machine_policy()
    assert got.queue_dir == Path("/var/lib/gemmlib/queue") and got.runs_per_address == 3 and not got.sets_caps


# --------------------------------------------------------------------------- item 7: visitors
def test_one_run_per_browser_session_and_a_number_per_address(tmp_path):
    q = Queue(directory=tmp_path / "q")
    tab1 = Visitor.of("browser-1", "10.0.0.7")
    tab2 = Visitor.of("browser-1", "10.0.0.7")  # another tab of the same browser
    other_browser = Visitor.of("browser-2", "10.0.0.7")
    third = Visitor.of("browser-3", "10.0.0.7")
    elsewhere = Visitor.of("browser-4", "10.0.0.8")
    with q.turn("first run", visitor=tab1, per_address=2):
        with pytest.raises(VisitorLimit) as e:
            with q.turn("second tab", visitor=tab2, per_address=2):
                pass
        assert "first run" in str(e.value) and q.waiting() == []  # told why, and no place taken
        seen = []
        with pytest.raises(runqueue.BusyError):
            with q.turn("other browser", visitor=other_browser, per_address=2, timeout_s=0.3, poll_s=0.02,
                        on_wait=seen.append):
                pass
        assert seen and seen[0].position == 1  # queued: the address had one run, its limit is two
    with q.turn("holder", visitor=other_browser, per_address=2):
        waiting = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
            import sys, time
            sys.path.insert(0, {str(ROOT)!r})
            from gemmlib.measure.runqueue import Queue, Visitor
            with Queue(directory={str(q.dir)!r}).turn("queued", visitor=Visitor.of("browser-3", "10.0.0.7"),
                                                       per_address=2, poll_s=0.02):
                pass
        """)])
        _wait_until(lambda: q.waiting() == ["queued"])
        with pytest.raises(VisitorLimit) as e:  # the address holds two places: a third is refused
            with q.turn("third", visitor=Visitor.of("browser-5", "10.0.0.7"), per_address=2):
                pass
        assert "2 runs" in str(e.value) and "GEMM_MAX_RUNS_PER_ADDRESS" in str(e.value)
        with pytest.raises(runqueue.BusyError):  # another address still queues
            with q.turn("elsewhere", visitor=elsewhere, per_address=2, timeout_s=0.2, poll_s=0.02):
                pass
        with pytest.raises(VisitorLimit):  # the queued one's own browser, in another tab
            with q.turn("again", visitor=third, per_address=5):
                pass
    assert waiting.wait(30) == 0
    with q.turn("later", visitor=tab1, per_address=1):  # the first run ended: its visitor may run again
        pass


def test_the_queue_keeps_hashes_not_addresses(tmp_path):
    q = Queue(directory=tmp_path / "q")
    with q.turn("run", visitor=Visitor.of("sess-abc", "192.0.2.44")):
        text = (q.dir / "run.lock").read_text()
    assert "192.0.2.44" not in text and "sess-abc" not in text
    assert Visitor.of("s", "192.0.2.44").address in text
