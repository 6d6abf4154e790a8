"""A run ends with its visitor: closing the tab or pressing Stop kills the benchmark worker and frees the
machine's queue within seconds, so the next visitor is not kept waiting (a real server, Chromium)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from browser_helpers import StreamlitServer, open_page, page_info, wait_idle

from gemmlib.measure import runner
from gemmlib.measure.runqueue import Queue

pytest.importorskip("torch")
from playwright.sync_api import expect  # noqa: E402

# Six formats × 2 s of timing each on a 1024³ GEMM: a run of well over ten seconds.
LONG_RUN = "pr_device=cpu&pr_set=Custom&pr_m=1024&pr_n=1024&pr_k=1024&pr_time=2.0&pr_quant=true"


def _workers(parent: int) -> list[int]:
    """Live benchmark workers started by the server process ``parent``."""
    return runner.worker_pids(parent)


def _start_long_run(server, pg) -> Queue:
    info = page_info("pages/6_Precision.py")
    open_page(pg, server.url, info.url_path, query=LONG_RUN)
    pg.get_by_role("button", name="Run the benchmark").click()
    expect(pg.get_by_text(re.compile("Running on cpu"))).to_be_visible(timeout=60_000)
    q = Queue(directory=server.queue_dir)
    assert q.running() and "precision" in q.running()
    assert len(_workers(server.proc.pid)) == 1
    return q


def _seconds_until_free(server, q: Queue, timeout: float = 30.0) -> float:
    t0 = time.monotonic()
    while q.running() is not None or _workers(server.proc.pid):
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"still held after {timeout:.0f} s by {q.running()!r}")
        time.sleep(0.05)
    return time.monotonic() - t0


@pytest.fixture(scope="module")
def server():
    """One server for the module, with no spare worker (as a server a test starts gets from the
    hermetic fixture): each test's run is then the only worker under it."""
    s = StreamlitServer(__name__, env={"GEMM_SPARE_WORKER": "0"})
    yield s
    s.stop()


@pytest.fixture(autouse=True)
def _machine_free(server):
    """Each test starts on a free machine, and leaves it free: the second run the Stop test starts
    ends with its tab (``page`` is closed before this fixture's end: the first test's proof)."""
    q = Queue(directory=Path(server._cache_dir) / "queue-benchmarks")
    _seconds_until_free(server, q)
    yield
    _seconds_until_free(server, q)


def test_closing_the_tab_cancels_the_run(server, browser):
    ctx = browser.new_context()
    pg = ctx.new_page()
    q = _start_long_run(server, pg)
    ctx.close()  # the visitor leaves mid-run
    held = _seconds_until_free(server, q)
    assert held < 5.0, f"the run kept the machine {held:.1f} s after its tab closed"


def test_the_stop_button_cancels_the_run(server, page):
    q = _start_long_run(server, page)
    page.get_by_role("button", name=re.compile("Stop this run")).click()
    held = _seconds_until_free(server, q)
    assert held < 3.0, f"the run kept the machine {held:.1f} s after Stop"
    expect(page.get_by_text(re.compile("Stopped a precision run"))).to_be_visible()
    wait_idle(page)
    expect(page.get_by_role("heading", name="Results")).to_have_count(0)
    # a new run starts at once: nothing is left holding the machine
    page.get_by_role("button", name="Run the benchmark").click()
    expect(page.get_by_text(re.compile("Running on cpu"))).to_be_visible(timeout=60_000)


def test_streamlits_own_stop_cancels_the_run(server, page):
    q = _start_long_run(server, page)
    page.get_by_test_id("stStatusWidget").get_by_role("button", name="Stop").click()
    held = _seconds_until_free(server, q)
    assert held < 3.0, f"the run kept the machine {held:.1f} s after Streamlit's Stop"
