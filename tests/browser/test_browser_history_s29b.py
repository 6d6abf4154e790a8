"""One reader's change, one browser history entry (review s29, B): on the FLOPs page, after the SMs box is typed
in, a change of the GPU also moves the SMs box to that GPU's count; the URL changes once (one Back step), not once
for the GPU and again for the SMs."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from browser_helpers import assert_clean, open_page, page_info, settled_url
from playwright.sync_api import expect

from gemmlib.core.hardware import CATALOGUE

pytestmark = pytest.mark.browser
READS_ONLY = True  # no benchmark, nothing saved: shares the worker's server (conftest.app_server)


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
    before = page.evaluate("() => history.length")

    box = page.get_by_role("combobox", name="Hardware", exact=True)
    box.click()
    box.press_sequentially("A100 SXM 80")  # the list is long: typed, it shows the one
    page.get_by_role("option", name="A100 SXM 80GB", exact=True).click()
    url = settled_url(page)
    expect(sms).to_have_value(str(CATALOGUE["A100 SXM 80GB"].sms))  # the SMs box follows the GPU
    q = _query(url)
    assert q.get("fl_gpu") == ["A100 SXM 80GB"] and "fl_sms" not in q  # the GPU's own count: left out
    assert page.evaluate("() => history.length") == before + 1, "one change, one history entry"

    page.go_back()  # the one Back step: the typed SMs on the H100 again
    url = settled_url(page)
    assert _query(url).get("fl_sms") == ["100"] and "fl_gpu" not in _query(url)
    expect(sms).to_have_value("100")
    assert_clean(page)
