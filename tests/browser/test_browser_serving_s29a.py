"""The LLM Estimator's Serving tab at 1280 px: its boxes and switches in three rows, each label on one line, none cut, and a
box's value written into the URL (review s29, A).

The tab grew from five boxes to eleven, then twelve with the offline switch (every `estimate --serve` flag). In a row of four, labels such as "one
concurrency (0 = the curve)" broke inside their brackets ("(0 = the / curve)") and the switch's words in a third of
the row were cut ("serving curve (prompt + new tok…"). Only a browser lays the columns out, so it is checked here,
in English and Chinese; AppTest cannot see the URL the browser writes, so the binding of a new box is checked here
too (tests/pages/test_serving_tab_s29a.py checks that a link sets them).
"""

from __future__ import annotations

import re

import pytest
from browser_helpers import assert_clean, open_page, wait_idle
from playwright.sync_api import expect
from test_browser_cut_labels import CUT_JS

pytestmark = pytest.mark.browser
READS_ONLY = True  # no benchmark, nothing saved: shares the worker's server

LINK = "le_tab=Serving&le_serve=true&le_preset=llama-3-8b&le_seq=256&le_new=32&le_conc=32&le_ttft=100"
# each label of the open tab's widgets: its words and its height in px
LABELS_JS = """() => Array.from(document.querySelectorAll('[data-testid="stMain"] [data-testid="stWidgetLabel"]'))
    .filter(e => e.checkVisibility()).map(e => [e.textContent.trim(), e.getBoundingClientRect().height])"""


@pytest.mark.parametrize("lang", ["en", pytest.param("zh", marks=pytest.mark.cjk_font)])
def test_the_serving_boxes_fit_their_labels_on_one_line_at_1280_px(app_server, page, lang):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_page(page, app_server.url, "LLM_Estimator", query=f"lang={lang}&{LINK}", timeout=120)
    wait_idle(page)
    assert_clean(page)
    labels = dict(page.evaluate(LABELS_JS))
    one_line = labels["engine" if lang == "en" else "引擎"]  # a one-word label: one line's height
    concurrency = "concurrency (0 = the curve)" if lang == "en" else "并发量（0 = 曲线）"
    assert concurrency in labels, sorted(labels)
    serving = list(labels)[list(labels).index(concurrency) - 3:][:11]  # the three rows: switch, targets; point; engine
    tall = {k: round(labels[k]) for k in serving if labels[k] > 1.4 * one_line}
    assert not tall, f"labels on two lines ({lang}, one line: {one_line:.0f} px): {tall}"
    assert not page.evaluate(CUT_JS), page.evaluate(CUT_JS)


def test_a_new_serving_box_writes_the_url(app_server, page):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_page(page, app_server.url, "LLM_Estimator", query=LINK, timeout=120)
    wait_idle(page)
    box = page.get_by_label("max requests (0 = engine's)", exact=True).first
    box.fill("8")
    box.press("Enter")
    expect(page).to_have_url(re.compile(r"[?&]le_maxseqs=8(&|$)"))
    wait_idle(page)
    assert_clean(page)
    assert re.search(r"[?&]le_conc=32(&|$)", page.url) and re.search(r"[?&]le_ttft=100(\.0)?(&|$)", page.url)
