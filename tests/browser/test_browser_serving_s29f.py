"""The Serving tab's "all at once (offline)" switch and the serving chart's three panels, in a browser at 1280 px
(review s29, F): the switch's label sits on one line above the rate box and is written into the URL; the chart
(throughput, TPOT, TTFT, each target's dashed rule) fits the page's content column in both languages."""

from __future__ import annotations

import re

import pytest
from browser_helpers import assert_clean, open_page, overflowing_charts, wait_idle
from playwright.sync_api import expect
from test_browser_serving_s29a import LABELS_JS

pytestmark = pytest.mark.browser
READS_ONLY = True  # no benchmark, nothing saved: shares the worker's server

LINK = "le_tab=Serving&le_serve=true&le_preset=llama-3-8b&le_seq=256&le_new=32&le_ttft=100&le_nreq=64"


@pytest.mark.parametrize("lang", ["en", pytest.param("zh", marks=pytest.mark.cjk_font)])
def test_the_switch_fits_one_line_and_the_three_panels_the_column(app_server, page, lang):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_page(page, app_server.url, "LLM_Estimator", query=f"lang={lang}&{LINK}", timeout=120)
    wait_idle(page)
    assert_clean(page)
    labels = dict(page.evaluate(LABELS_JS))
    switch, one_line = ("all at once (offline)", "engine") if lang == "en" else ("一次发完（离线）", "引擎")
    assert labels[switch] <= 1.4 * labels[one_line], labels
    assert not overflowing_charts(page), overflowing_charts(page)
    words = "TTFT target 100 ms" if lang == "en" else "TTFT 目标 100 ms"
    assert page.locator("[data-testid='stVegaLiteChart'] svg text", has_text=words).count() == 1


def test_the_switch_writes_the_url_and_greys_the_rate(app_server, page):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_page(page, app_server.url, "LLM_Estimator", query=LINK, timeout=120)
    wait_idle(page)
    rate = page.get_by_label("request rate /s (0 = the curve)", exact=True).first
    expect(rate).to_be_enabled()
    page.get_by_text("all at once (offline)", exact=True).first.click()
    expect(page).to_have_url(re.compile(r"[?&]le_offline=true(&|$)"))
    wait_idle(page)
    expect(rate).to_be_disabled()
    expect(page.get_by_text(re.compile(r"^All 64 requests at once: "))).to_have_count(1)
    assert_clean(page)
