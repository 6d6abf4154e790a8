"""At 1280 × 720 with the sidebar open, no widget label, metric or button of a benchmark page is cut off with "…".

Streamlit shortens a label, a metric's value or delta, or a button's words that do not fit their column
with an ellipsis: "GEMMs achieved 3.95 GFLO…", "merge s…", "CUDA …", "results shared with the class…"
(its count cut), the Chinese "门控 MLP（SwiGLU：门控、升…". Only a browser lays the columns out, so this
is checked here, in English and Chinese, and on the Profiler after a run (its four figures).
"""

from __future__ import annotations

import pytest
from browser_helpers import assert_clean, open_page, page_info, wait_idle
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
READS_ONLY = False  # the Profiler test runs a benchmark: a server of this module's own

PAGES = ["pages/3_Transformer_GEMMs.py", "pages/5_Devices.py", "pages/6_Precision.py", "pages/7_Tiling.py",
         "pages/8_Batching.py", "pages/9_Roofline.py", "pages/10_Profiler.py", "pages/11_Multi_GPU.py"]

# Texts Streamlit cuts with an ellipsis (overflow hidden): a label, a metric's value and delta, a button's words
CUT_JS = """() => {
    const out = [];
    const sel = '[data-testid="stWidgetLabel"] [data-testid="stMarkdownContainer"], [data-testid="stMetricValue"] > div,'
        + ' [data-testid="stMetricDelta"] > div, [data-testid="stMetricLabel"] [data-testid="stMarkdownContainer"],'
        + ' [data-testid="stBaseButton-secondary"] [data-testid="stMarkdownContainer"],'
        + ' [data-testid="stBaseButton-primary"] [data-testid="stMarkdownContainer"]';
    for (const el of document.querySelectorAll('[data-testid="stMain"] ' + sel.split(',').join(', [data-testid="stMain"] '))) {
        if (!el.checkVisibility() || getComputedStyle(el).overflow === 'visible') continue;
        if (el.scrollWidth > el.clientWidth + 1) out.push(`"${el.textContent.trim()}" ${el.scrollWidth} > ${el.clientWidth} px`);
    }
    return out;
}"""


def _cut(pg) -> list[str]:
    return pg.evaluate(CUT_JS)


@pytest.mark.parametrize("lang", ["en", pytest.param("zh", marks=pytest.mark.cjk_font)])
@pytest.mark.parametrize("file", PAGES, ids=lambda f: page_info(f).slug)
def test_nothing_is_cut_at_1280_px(app_server, page, file, lang):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_page(page, app_server.url, page_info(file).url_path, query=f"lang={lang}")
    assert_clean(page)
    assert not _cut(page), f"{file} ({lang}) at 1280 px: {_cut(page)}"


def test_the_profilers_figures_are_whole_after_a_run(app_server, page):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_page(page, app_server.url, "Profiler", query="pf_device=cpu")
    page.get_by_role("button", name="Profile the block").click()
    expect(page.get_by_test_id("stMetricValue").filter(has_text="FLOP/s")).to_be_visible(timeout=120_000)
    wait_idle(page)
    assert_clean(page)
    assert not _cut(page), f"Profiler after a run at 1280 px: {_cut(page)}"
