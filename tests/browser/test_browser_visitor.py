"""Issue 26 item 7 in a real browser: a second tab of the same browser (one cookie jar, so one XSRF
token) asks for a run while the first tab's run is going: it is told it already has one and takes
no place in the machine's queue (a real server, Chromium)."""

from __future__ import annotations

import re

import pytest
from browser_helpers import open_page, page_info
from test_browser_cancel import LONG_RUN, _seconds_until_free, _start_long_run

pytest.importorskip("torch")
from playwright.sync_api import expect  # noqa: E402


def test_a_second_tab_of_one_browser_is_not_queued(fresh_server, browser):
    server = fresh_server()
    ctx = browser.new_context()
    try:
        first = ctx.new_page()
        q = _start_long_run(server, first)
        second = ctx.new_page()  # the same browser: its tabs share the cookie
        open_page(second, server.url, page_info("pages/6_Precision.py").url_path, query=LONG_RUN)
        second.get_by_role("button", name="Run the benchmark").click()
        warning = second.get_by_test_id("stAlertContentWarning")
        expect(warning).to_contain_text(re.compile("Not queued:.*you already have a run queued or running"),
                                        timeout=60_000)
        assert q.waiting() == []  # no place taken
        first.get_by_role("button", name="⏹ Stop this run").click()
        assert _seconds_until_free(server, q) < 5.0
    finally:
        ctx.close()
