"""Ctrl-C on a benchmark started from the command line, in its first seconds: while the fork server of its worker
(`bench tiling`) or of its ranks (`bench collective`) starts (imports torch). A terminal sends SIGINT to the whole foreground process group, the fork server included;
the test does the same, at the moment it waits for (the fork server is up and has not imported torch yet).

Before: the fork server died of it with a KeyboardInterrupt traceback, and the command said "a forked benchmark
worker could not be started (EOFError) … starting a new interpreter instead" before "interrupted" (`bench tiling`), or
the traceback after it (`bench collective`). Now: the one line "interrupted", exit status 130, at once, and no
process of the command left.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gemmlib.measure import runner

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or not runner.forking(),
                                reason="reads /proc; needs the fork server (Linux)")


def _ours(marker: str) -> dict[int, bytes]:
    """pid -> command line of every live process whose environment holds ``marker`` (this test's cache folder)."""
    out = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            if marker.encode() not in (d / "environ").read_bytes():
                continue
            state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmd = (d / "cmdline").read_bytes()
        except OSError:
            continue
        if state != "Z":
            out[int(d.name)] = cmd
    return out


def _catches_sigint(pid: int) -> bool:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("SigCgt:"):
                return bool(int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)))
    except (OSError, ValueError):
        pass
    return False


def _wait_for(what, timeout_s: float = 120.0):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        got = what()
        if got:
            return got
        time.sleep(0.005)
    return None


@pytest.mark.parametrize("argv, said", [
    (["bench", "tiling", "--size", "32", "--impls", "torch", "--tiles", "16"], ""),  # its worker's fork server
    (["bench", "collective", "--nproc", "2", "--backend", "gloo", "--max-bytes", "64"],  # its ranks' fork server
     "starting 2 gloo ranks (CPU processes; a few seconds)\n"),
])
def test_ctrl_c_while_the_fork_server_starts_says_one_line(argv, said, tmp_path):
    cache = str(tmp_path / "cache-interrupt")
    env = {**os.environ, "GEMM_CACHE_DIR": cache, "GEMM_FORK_WORKER": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "gemmlib", *argv], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE,
                            start_new_session=True)  # its own process group: SIGINT to it is a terminal's Ctrl-C
    try:
        def fork_server() -> int | None:
            """The fork server, once its interpreter catches SIGINT (earlier, the signal's default action ends it
            without a word: not the seconds a person sees)."""
            for pid, cmd in _ours(cache).items():
                if b"multiprocessing.forkserver" in cmd and _catches_sigint(pid):
                    return pid
            return None

        fs = _wait_for(fork_server)
        assert fs is not None, "the command started no fork server"
        try:
            preloaded = "libtorch" in Path(f"/proc/{fs}/maps").read_text()
        except OSError:
            preloaded = True
        if preloaded:
            pytest.skip("the fork server imported torch before the test could interrupt it")
        os.killpg(proc.pid, signal.SIGINT)
        sent = time.monotonic()
        out, err = proc.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err.decode()
    assert err.decode() == said + "interrupted\n"  # no traceback, no word of a fallback
    assert out == b""
    assert took < 10.0  # at once: not after the fork server's import of torch, nor a new interpreter's
    left = _wait_for(lambda: not _ours(cache), timeout_s=10.0)
    assert left, f"processes left behind: {_ours(cache)}"
