"""The Profiler and Multi-GPU pages as a demanding reader sees them in Chromium at 1280 × 900.

* A profiler run's status box counts the plan's steps ("step 3 of 5"), not fixed shares ("40 %") that sat still for
  most of the run (its weights are tested in tests/pages/test_profiler_run_box.py).
* The prediction's GEMM share below the 80 % target: its delta in points, its arrow down, in English and in Chinese
  (the Chinese delta began with words, and Streamlit drew the arrow up).
"""

from __future__ import annotations

import re

import pytest
from browser_helpers import assert_clean, open_page, wait_idle
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
READS_ONLY = False  # runs a profile: a server of this module's own

# Every label the run's status box shows, as the page draws it (a run of a few seconds changes it several times)
WATCH_LABELS_JS = """() => {
    window.__h2labels = [];
    const seen = () => {
        for (const el of document.querySelectorAll('[data-testid="stExpander"] summary')) {
            const t = el.innerText.trim();
            if (t && window.__h2labels[window.__h2labels.length - 1] !== t) window.__h2labels.push(t);
        }
    };
    new MutationObserver(seen).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


def test_a_profiler_run_counts_the_plans_steps(app_server, page):
    open_page(page, app_server.url, "Profiler", query="pf_device=cpu&pf_steps=2")
    page.evaluate(WATCH_LABELS_JS)
    page.get_by_role("button", name="Profile the block").click()
    expect(page.get_by_test_id("stMetricValue").filter(has_text="FLOP/s")).to_be_visible(timeout=120_000)
    wait_idle(page)
    assert_clean(page)
    labels = page.evaluate("window.__h2labels")
    steps = [int(m.group(1)) for t in labels for m in [re.search(r"step (\d) of 5", t)] if m]
    assert steps and steps == sorted(steps), labels
    assert not any(re.search(r"Running on cpu · \d+%", t) for t in labels), labels  # no fixed share shown


@pytest.mark.parametrize("lang, label, unit", [("en", "GEMM share of time (roofline)", "points"),
                                               ("zh", "GEMM 占时间的比例（屋顶线模型）", "个百分点")])
def test_a_share_below_the_target_points_down(app_server, page, lang, label, unit):
    open_page(page, app_server.url, "Profiler", query=f"lang={lang}&pf_device=cpu")
    assert_clean(page)
    metric = page.get_by_test_id("stMetric").filter(has_text=label)
    delta = metric.get_by_test_id("stMetricDelta")
    expect(delta).to_contain_text(unit)
    assert re.search(r"-\d+(\.\d)? ", delta.inner_text()), delta.inner_text()
    expect(metric.get_by_test_id("stMetricDeltaIcon-Down")).to_be_visible()


# A select's shown value wider than its box (Streamlit clips it without an ellipsis): the Multi-GPU page's
# "Interconnect for the estimate" read "measured for gloo × n (if any), else the catal" in a fifth of its row.
CUT_SELECTS_JS = """() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stSelectbox"] input')]
    .filter(el => el.checkVisibility() && el.scrollWidth > el.clientWidth + 1)
    .map(el => `${el.closest('[data-testid="stSelectbox"]').querySelector('[data-testid="stWidgetLabel"]').innerText}:`
               + ` "${el.value}" ${el.scrollWidth} > ${el.clientWidth} px`)"""


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path", ["Profiler", "Multi_GPU", "Devices"])
def test_no_chosen_value_is_cut_at_1280_px(app_server, page, path, lang):
    open_page(page, app_server.url, path, query=f"lang={lang}")
    assert_clean(page)
    assert not page.evaluate(CUT_SELECTS_JS), page.evaluate(CUT_SELECTS_JS)
