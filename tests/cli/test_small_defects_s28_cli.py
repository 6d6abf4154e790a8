"""Five small defects, each proved where it was seen (brief s28 D).

1. torch's profiler (kineto) wrote ``USDT:… profiler_start`` lines on stderr, in the middle of the CLI's progress
   line and in the app's server log: a benchmark process now sets kineto's own switch before any profile.
4. A command that read the cache folder, warned that it is open to other users, then failed writing to it said
   the same fact twice (``devices --measure``, every benchmark and ``profile``): it now says it once, as the error.
5. ``launch.stop_fork_server`` read multiprocessing's private state: it now fails safe where that is missing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _cli(*argv: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k != "KINETO_LOG_LEVEL"}  # kineto's default, as a user has it
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "gemmlib", *argv], cwd=ROOT, env=full, capture_output=True,
                          text=True, timeout=timeout)


# ------------------------------------------------------------------------------------------- 1: kineto's lines
@pytest.mark.parametrize("fork", ["1", "0"], ids=["forked-worker", "started-worker"])
def test_profile_writes_only_its_own_lines_on_stderr(fork):
    p = _cli("profile", "--layers", "1", "--hidden", "64", "--seq-len", "16", "--steps", "1",
             env={"GEMM_FORK_WORKER": fork})
    assert p.returncode == 0, p.stderr[-2000:]
    lines = p.stderr.splitlines()
    assert lines and all(ln.startswith(("[step ", "done in ")) for ln in lines), p.stderr
    assert "profiler_start" not in p.stderr and "USDT" not in p.stderr


def test_a_callers_own_kineto_level_is_kept(monkeypatch):
    from gemmlib.measure import launch

    monkeypatch.setenv("KINETO_LOG_LEVEL", "4")
    launch.quiet_profiler()
    assert os.environ["KINETO_LOG_LEVEL"] == "4"
    monkeypatch.delenv("KINETO_LOG_LEVEL")
    launch.quiet_profiler()
    assert int(os.environ["KINETO_LOG_LEVEL"]) > 5  # above USDT, kineto's highest level


# ------------------------------------------------------------------------------------ 4: said once, as the error
def _open_folder(tmp_path: Path) -> Path:
    cache = tmp_path / "open-cache"
    cache.mkdir()
    cache.chmod(0o777)
    return cache


def test_measuring_into_an_open_cache_folder_says_so_once_as_the_error(tmp_path):
    cache = _open_folder(tmp_path)
    p = _cli("devices", "--measure", "--quick", env={"GEMM_CACHE_DIR": str(cache)}, timeout=120)
    assert p.returncode == 2, p.stderr[-2000:]
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: the cache folder ") and "open to other users" in lines[0], \
        p.stderr
    assert p.stdout == ""


@pytest.mark.parametrize("argv", [("bench", "precision", "--size", "64"), ("bench", "tiling", "--size", "64"),
                                  ("bench", "batching", "--m", "64"), ("profile", "--layers", "1")],
                         ids=lambda a: "-".join(a[:2]))
def test_a_benchmark_into_an_open_cache_folder_says_so_once_as_the_error(tmp_path, argv):
    """The plan read the folder's measured rates (a warning) before the run checked the folder (the error)."""
    cache = _open_folder(tmp_path)
    p = _cli(*argv, env={"GEMM_CACHE_DIR": str(cache)}, timeout=120)
    assert p.returncode == 2, p.stderr[-2000:]
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: the cache folder ") and "open to other users" in lines[0], \
        p.stderr


def test_listing_with_an_open_cache_folder_still_warns_and_lists(tmp_path):
    cache = _open_folder(tmp_path)
    p = _cli("devices", "--light", env={"GEMM_CACHE_DIR": str(cache)}, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stderr.count("open to other users") == 1 and "error" not in p.stderr, p.stderr  # not read: said once
    assert p.stdout.startswith("cpu:")


# ------------------------------------------------------------------------- 5: multiprocessing's private state
@pytest.fixture
def kills(monkeypatch):
    """Every os.kill stop_fork_server makes, recorded and not made."""
    from gemmlib.measure import launch

    made: list[tuple[int, int]] = []
    monkeypatch.setattr(launch.os, "kill", lambda pid, sig: made.append((pid, sig)))
    return made


class _Server:  # what multiprocessing.forkserver._forkserver holds on another Python, or on this one
    def __init__(self, **attrs):
        self.__dict__.update(attrs)


@pytest.mark.parametrize("server", [None, _Server(), _Server(_forkserver_pid=None), _Server(_forkserver_pid="123"),
                                    _Server(_forkserver_pid=True), _Server(_forkserver_pid=-1)],
                         ids=["no _forkserver", "no _forkserver_pid", "none", "text", "bool", "negative"])
def test_stopping_the_fork_server_where_multiprocessing_names_it_otherwise_does_nothing(server, kills, monkeypatch):
    from multiprocessing import forkserver

    from gemmlib.measure import launch

    if server is None:
        monkeypatch.delattr(forkserver, "_forkserver", raising=False)
    else:
        monkeypatch.setattr(forkserver, "_forkserver", server)
    launch.stop_fork_server()
    assert kills == []


@pytest.mark.skipif(not hasattr(os, "waitid"), reason="the child check needs os.waitid")
def test_only_a_child_of_this_process_is_killed(kills, monkeypatch):
    import signal
    from multiprocessing import forkserver

    from gemmlib.measure import launch

    monkeypatch.setattr(forkserver, "_forkserver", _Server(_forkserver_pid=os.getppid()))  # a stranger's pid
    launch.stop_fork_server()
    assert kills == []
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        monkeypatch.setattr(forkserver, "_forkserver", _Server(_forkserver_pid=child.pid))
        launch.stop_fork_server()
        assert kills == [(child.pid, signal.SIGKILL)]
    finally:
        monkeypatch.undo()  # os.kill again, for the child's own end
        child.kill()
        child.wait()
