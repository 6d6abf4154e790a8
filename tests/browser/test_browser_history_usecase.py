"""One reader's change, one browser history entry, on the LLM Estimator: picking a use case sets the batch, the
prompt, the new tokens, the TPOT target and the serving switches at once, and turning the comparison on copies A's
numbers into B; each is one Back step (each box the callback set wrote the URL again when it was drawn: a Back
step per box)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from browser_helpers import assert_clean, open_page, page_info, settled_url

pytestmark = pytest.mark.browser
READS_ONLY = True  # no benchmark, nothing saved: shares the worker's server (conftest.app_server)


def _query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlparse(url).query)


def test_a_use_case_is_one_back_step(app_server, page):
    info = page_info("pages/4_LLM_Estimator.py")
    open_page(page, app_server.url, info.url_path)
    first = settled_url(page)
    before = page.evaluate("() => history.length")
    box = page.get_by_role("combobox", name="Use case", exact=True)
    box.scroll_into_view_if_needed()  # in the sidebar, below the model's boxes
    box.click()
    page.get_by_role("option").filter(has_text="code completion (2,048").click()
    url = settled_url(page)
    q = _query(url)
    assert q.get("le_seq") == ["2048"] and q.get("le_new") == ["128"] and float(q["le_tpot"][0]) == 20, url
    assert page.evaluate("() => history.length") == before + 1, "one use case, one history entry"
    page.go_back()
    assert _query(settled_url(page)) == _query(first)
    assert_clean(page)


def test_the_offline_use_case_is_one_back_step(app_server, page):
    info = page_info("pages/4_LLM_Estimator.py")
    open_page(page, app_server.url, info.url_path)
    settled_url(page)
    before = page.evaluate("() => history.length")
    box = page.get_by_role("combobox", name="Use case", exact=True)
    box.scroll_into_view_if_needed()
    box.click()
    page.get_by_role("option").filter(has_text="batch offline").click()
    q = _query(settled_url(page))
    assert q.get("le_batch") == ["256"] and q.get("le_offline") == ["true"], q
    assert page.evaluate("() => history.length") == before + 1, "one use case, one history entry"
    assert_clean(page)


def test_turning_the_comparison_on_is_one_back_step(app_server, page):
    """B starts as a copy of A's numbers and GPU: the switch and the copied boxes are one change."""
    info = page_info("pages/4_LLM_Estimator.py")
    open_page(page, app_server.url, info.url_path, "le_batch=4&le_seq=2048")
    settled_url(page)
    before = page.evaluate("() => history.length")
    switch = page.get_by_test_id("stSidebarUserContent").get_by_text("compare with a second configuration (B)", exact=True)
    switch.scroll_into_view_if_needed()
    switch.click()  # its label: the switch's input sits under it
    q = _query(settled_url(page))
    assert q.get("le_cmp") == ["true"] and q.get("le_b_batch") == ["4"] and q.get("le_b_seq") == ["2048"], q
    # Streamlit's page writes the switch's own change over the current entry; the copied boxes then add one entry
    # (they added one per box before)
    assert page.evaluate("() => history.length") == before + 1, "one switch, one history entry"
    assert_clean(page)
