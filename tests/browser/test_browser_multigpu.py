"""The Multi-GPU page in a real browser on a real server: ranks are spawned from inside Streamlit
(which runs each page as ``__main__``), the collectives and the tensor-parallel layer come back, and
no rank process is left under the server."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from browser_helpers import assert_clean, open_page, page_info, wait_idle
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def _rank_processes_under(pid: int) -> list[int]:
    """Living rank processes started from ``pid``: spawned (multiprocessing's spawn_main) children, or
    children of its fork server (which run the fork server's command line) other than its benchmark
    workers (named gemm-worker: the server keeps a spare one forked from the same fork server)."""
    procs = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
            ppid, state = int(stat.rsplit(")", 1)[1].split()[1]), stat.rsplit(")", 1)[1].split()[0]
            cmd = Path(f"/proc/{d}/cmdline").read_bytes().decode(errors="replace")
            if Path(f"/proc/{d}/comm").read_text().strip() == "gemm-worker":
                continue
        except (OSError, ValueError, IndexError):
            continue
        procs[int(d)] = (ppid, state, cmd)
    servers = {p for p, (ppid, _, cmd) in procs.items() if ppid == pid and "forkserver" in cmd}
    return [p for p, (ppid, state, cmd) in procs.items() if state != "Z" and
            ((ppid == pid and "spawn_main" in cmd) or ppid in servers)]


def test_collectives_and_tensor_parallel_from_the_page(app_server, page):
    info = page_info("pages/11_Multi_GPU.py")
    open_page(page, app_server.url, info.url_path, query="mg_backend=gloo&mg_top=1024&mg_iters=2&mg_seq=16")
    assert_clean(page)
    page.get_by_role("button", name="Measure the collectives").click()
    expect(page.get_by_text(re.compile("not a GPU interconnect. Read the shapes"))).to_be_visible(timeout=120_000)
    wait_idle(page, timeout=120)
    assert_clean(page)
    expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible()

    page.get_by_role("button", name="Run the tensor-parallel layer").click()
    expect(page.get_by_text("output vs one rank")).to_be_visible(timeout=120_000)
    wait_idle(page, timeout=120)
    assert_clean(page)
    expect(page.locator('[data-testid="stMetricValue"]').filter(has_text="matches")).to_be_visible()
    end = time.monotonic() + 10
    while time.monotonic() < end and _rank_processes_under(app_server.proc.pid):
        time.sleep(0.2)
    assert _rank_processes_under(app_server.proc.pid) == []
    # no rank ran the page again: spawn re-runs the parent's __main__, which Streamlit sets to the page
    log = app_server.log_tail(200_000)
    assert "ScriptRunContext" not in log and "streamlit run [FILE_NAME]" not in log, log[-3000:]
