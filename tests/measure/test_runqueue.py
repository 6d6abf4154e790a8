"""The machine's benchmark queue: first come first served across processes, each waiter told its
place, the lock gone the moment its holder dies, a dead waiter skipped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gemmlib.core.errors import InputError
from gemmlib.measure.runqueue import BusyError, Load, Queue

ROOT = Path(__file__).resolve().parents[2]

# A waiter in a process of its own: joins the queue, appends its name to the log when its turn comes,
# holds the turn for HOLD seconds (or until killed).
WAITER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {root!r})
    from gemmlib.measure.runqueue import Queue
    q = Queue(directory={qdir!r})
    name, hold = sys.argv[1], float(sys.argv[2])
    with q.turn(name, poll_s=0.02):
        with open({log!r}, "a") as f:
            f.write(name + "\\n")
        time.sleep(hold)
""")


def _spawn(tmp_path: Path, name: str, hold: float = 0.0) -> subprocess.Popen:
    script = WAITER.format(root=str(ROOT), qdir=str(tmp_path / "q"), log=str(tmp_path / "log"))
    return subprocess.Popen([sys.executable, "-c", script, name, str(hold)])


def _wait_until(cond, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("timed out")
        time.sleep(0.02)


def test_three_queued_processes_run_in_arrival_order_and_see_their_place(tmp_path):
    q = Queue(directory=tmp_path / "q")
    places = []
    procs = []
    with q.turn("holder"):
        assert q.running() == "holder"
        for i, name in enumerate(["A", "B", "C"]):
            procs.append(_spawn(tmp_path, name, 0.2))
            _wait_until(lambda n=i + 1: len(q.waiting()) == n)  # A is in line before B starts, B before C
        places = q.waiting()
    for p in procs:
        p.wait(30)
    assert places == ["A", "B", "C"]
    assert (tmp_path / "log").read_text().split() == ["A", "B", "C"]
    assert q.running() is None and q.waiting() == []


def test_each_waiter_is_told_its_place(tmp_path):
    q = Queue(directory=tmp_path / "q")
    seen = []
    holder = _spawn(tmp_path, "holder", 1.5)
    _wait_until(lambda: q.running() == "holder")
    first = _spawn(tmp_path, "first", 0.5)
    _wait_until(lambda: len(q.waiting()) == 1)
    with q.turn("me", on_wait=seen.append, poll_s=0.02):
        pass
    holder.wait(30)
    first.wait(30)
    assert seen[0].position == 2 and seen[0].ahead == ("first",) and seen[0].running == "holder"
    assert seen[-1].position == 1  # then only the running one was ahead
    assert "place 2 in the queue" in seen[0].describe()


def test_the_lock_is_released_within_a_second_when_its_holder_is_killed(tmp_path):
    q = Queue(directory=tmp_path / "q")
    holder = _spawn(tmp_path, "holder", 60)
    _wait_until(lambda: q.running() == "holder")
    os.kill(holder.pid, signal.SIGKILL)
    t0 = time.monotonic()
    _wait_until(lambda: q.running() is None, timeout=5)
    assert time.monotonic() - t0 < 1.0
    holder.wait(5)
    with q.turn("next", timeout_s=1):
        assert q.running() == "next"


def test_a_waiter_that_died_is_skipped(tmp_path):
    q = Queue(directory=tmp_path / "q")
    with q.turn("holder"):
        dead = _spawn(tmp_path, "dead", 0)
        _wait_until(lambda: len(q.waiting()) == 1)
        os.kill(dead.pid, signal.SIGKILL)
        dead.wait(5)
        alive = _spawn(tmp_path, "alive", 0)
        _wait_until(lambda: "alive" in q.waiting())
        assert q.waiting() == ["alive"]  # the dead ticket was found (its flock is free) and removed
    alive.wait(30)
    assert (tmp_path / "log").read_text().split() == ["alive"]


def test_a_tick_that_raises_leaves_the_queue(tmp_path):
    q = Queue(directory=tmp_path / "q")

    class Stop(Exception):
        pass

    def tick():
        raise Stop

    with q.turn("holder"):
        with pytest.raises(Stop):
            with q.turn("impatient", tick=tick):
                pass
        assert q.waiting() == []
    with pytest.raises(BusyError) as e:
        with q.turn("holder"):
            with q.turn("late", timeout_s=0.2, poll_s=0.02):
                pass
    assert isinstance(e.value, InputError) and "holder" in str(e.value)


def test_the_load_ahead_is_the_runs_own_estimates(tmp_path):
    """A newcomer's wait: the queued runs' estimates plus what the running one has left of its own; a run
    that gave none is counted apart (the estimate line says so)."""
    import threading

    q = Queue(directory=tmp_path / "q")
    assert q.load() == Load(0, 0.0, 0)
    release, holding = threading.Event(), threading.Event()

    def hold() -> None:
        with q.turn("holder", seconds=30.0, poll_s=0.02):
            holding.set()
            release.wait(30)

    def wait(owner: str, seconds: float | None) -> None:
        with q.turn(owner, seconds=seconds, poll_s=0.02):
            pass

    threads = [threading.Thread(target=hold)]
    threads[0].start()
    assert holding.wait(30)
    t0 = time.monotonic()
    for owner, seconds in (("a", 5.0), ("b", None)):
        threads.append(threading.Thread(target=wait, args=(owner, seconds)))
        threads[-1].start()
    _wait_until(lambda: len(q.waiting()) == 2)
    load = q.load()
    assert load.runs == 3 and load.unknown == 1
    assert 35.0 - (time.monotonic() - t0) - 2.0 <= load.seconds <= 35.0  # 5 queued + 30 less what it has run
    release.set()
    for t in threads:
        t.join(30)
    assert q.load().runs == 0
