"""One reader's change, one browser history entry (review s29): on the FLOPs page, after the SMs box is typed
in, a change of the GPU also moves the SMs box to that GPU's count; the URL changes once (one Back step), not once
for the GPU and again for the SMs. On the LLM Estimator, picking a use case sets the batch, the prompt, the new
tokens, the TPOT target and the serving switches at once, and turning the comparison on copies A's numbers into B;
each is one Back step (each box the callback set wrote the URL again when it was drawn: a Back step per box)."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from browser_helpers import assert_clean, open_page, page_info, settled_url
from playwright.sync_api import expect

from gemmlib.core.hardware import CATALOGUE

pytestmark = pytest.mark.browser
READS_ONLY = True  # no benchmark, nothing saved: shares the worker's server (conftest.app_server)


# Entries added to the tab's history, counted as they are made: ``history.length`` stops at 50 in Chromium, and the
# session's tab has seen many pages by the time a test runs. A replaceState writes over the current entry: not counted.
_COUNT_PUSHES = """() => { window.__gemmPushes = 0; if (!window.__gemmPushWrapped) { window.__gemmPushWrapped = true;
    const push = history.pushState.bind(history);
    history.pushState = (...args) => { window.__gemmPushes += 1; return push(...args); }; } }"""


def _pushes(page) -> int:
    return page.evaluate("() => window.__gemmPushes")


def _query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlparse(url).query)


def test_a_gpu_change_after_typed_sms_is_one_back_step(app_server, page):
    info = page_info("pages/2_FLOPs.py")
    open_page(page, app_server.url, info.url_path)
    sms = page.get_by_label("SMs", exact=True).first
    sms.fill("100")
    sms.press("Enter")
    expect(page).to_have_url(re.compile(r"[?&]fl_sms=100(&|$)"))
    settled_url(page)
    page.evaluate(_COUNT_PUSHES)

    box = page.get_by_role("combobox", name="Hardware", exact=True)
    box.click()
    box.press_sequentially("A100 SXM 80")  # the list is long: typed, it shows the one
    page.get_by_role("option", name="A100 SXM 80GB", exact=True).click()
    url = settled_url(page)
    expect(sms).to_have_value(str(CATALOGUE["A100 SXM 80GB"].sms))  # the SMs box follows the GPU
    q = _query(url)
    assert q.get("fl_gpu") == ["A100 SXM 80GB"] and "fl_sms" not in q  # the GPU's own count: left out
    assert _pushes(page) == 1, "one change, one history entry"

    page.go_back()  # the one Back step: the typed SMs on the H100 again
    url = settled_url(page)
    assert _query(url).get("fl_sms") == ["100"] and "fl_gpu" not in _query(url)
    expect(sms).to_have_value("100")
    assert_clean(page)


def test_a_use_case_is_one_back_step(app_server, page):
    info = page_info("pages/4_LLM_Estimator.py")
    open_page(page, app_server.url, info.url_path)
    first = settled_url(page)
    page.evaluate(_COUNT_PUSHES)
    box = page.get_by_role("combobox", name="Use case", exact=True)
    box.scroll_into_view_if_needed()  # in the sidebar, below the model's boxes
    box.click()
    page.get_by_role("option").filter(has_text="code completion (2,048").click()
    url = settled_url(page)
    q = _query(url)
    assert q.get("le_seq") == ["2048"] and q.get("le_new") == ["128"] and float(q["le_tpot"][0]) == 20, url
    assert _pushes(page) == 1, "one use case, one history entry"
    page.go_back()
    assert _query(settled_url(page)) == _query(first)
    assert_clean(page)


def test_the_offline_use_case_is_one_back_step(app_server, page):
    info = page_info("pages/4_LLM_Estimator.py")
    open_page(page, app_server.url, info.url_path)
    settled_url(page)
    page.evaluate(_COUNT_PUSHES)
    box = page.get_by_role("combobox", name="Use case", exact=True)
    box.scroll_into_view_if_needed()
    box.click()
    page.get_by_role("option").filter(has_text="batch offline").click()
    q = _query(settled_url(page))
    assert q.get("le_batch") == ["256"] and q.get("le_offline") == ["true"], q
    assert _pushes(page) == 1, "one use case, one history entry"
    assert_clean(page)


def test_turning_the_comparison_on_is_one_back_step(app_server, page):
    """B starts as a copy of A's numbers and GPU: the switch and the copied boxes are one change."""
    info = page_info("pages/4_LLM_Estimator.py")
    open_page(page, app_server.url, info.url_path, "le_batch=4&le_seq=2048")
    settled_url(page)
    page.evaluate(_COUNT_PUSHES)
    switch = page.get_by_test_id("stSidebarUserContent").get_by_text("compare with a second configuration (B)", exact=True)
    switch.scroll_into_view_if_needed()
    switch.click()  # its label: the switch's input sits under it
    q = _query(settled_url(page))
    assert q.get("le_cmp") == ["true"] and q.get("le_b_batch") == ["4"] and q.get("le_b_seq") == ["2048"], q
    # Streamlit's page writes the switch's own change over the current entry; the copied boxes then add one entry
    # (they added one per box before)
    assert _pushes(page) == 1, "one switch, one history entry"
    assert_clean(page)
