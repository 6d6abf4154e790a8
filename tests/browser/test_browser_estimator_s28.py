"""At 1280 px, the LLM Estimator's rows of boxes stand in a line, in English and Chinese.

A label that wraps to two lines in its narrow column ("new tokens" / "新生成 token 数" in a third of the sidebar,
"B new tokens" / "B 的提示词长度" in the A vs B row) pushed its box 20 px below its neighbours': the workload's
batch, prompt and new tokens read as a staircase. Only a browser lays the columns out, so this is checked here.
"""

from __future__ import annotations

import pytest
from browser_helpers import assert_clean, open_page, page_info

pytestmark = pytest.mark.browser
READS_ONLY = True  # no benchmark, nothing saved: shares the worker's server (conftest.app_server)

INFO = page_info("pages/4_LLM_Estimator.py")

# Each visible row of columns whose columns hold a text box or a select: the tops of those boxes (a number
# input's container, a select's control), with their labels, where they differ by more than 2 px.
STAIRS_JS = """() => {
    const out = [];
    for (const row of document.querySelectorAll('[data-testid="stHorizontalBlock"]')) {
        if (!row.checkVisibility()) continue;
        const tops = [];
        for (const col of row.querySelectorAll(':scope > [data-testid="stColumn"]')) {
            const inp = col.querySelector('input:not([type=checkbox]):not([type=radio]):not([type=file])');
            if (!inp || !inp.checkVisibility()) continue;
            const box = inp.closest('[data-baseweb="select"]') || inp.closest('[data-testid="stNumberInputContainer"]') || inp;
            const label = col.querySelector('[data-testid="stWidgetLabel"]');
            tops.push([Math.round(box.getBoundingClientRect().top), label ? label.textContent.trim() : '']);
        }
        const ys = tops.map(t => t[0]);
        if (tops.length > 1 && Math.max(...ys) - Math.min(...ys) > 2) out.push(JSON.stringify(tops));
    }
    return out;
}"""


@pytest.mark.parametrize("lang", ["en", pytest.param("zh", marks=pytest.mark.cjk_font)])
def test_the_workload_and_the_a_vs_b_boxes_stand_in_a_line_at_1280_px(app_server, page, lang):
    page.set_viewport_size({"width": 1280, "height": 900})
    open_page(page, app_server.url, INFO.url_path, query=f"lang={lang}&le_tab=A+vs+B&le_cmp=true")
    assert_clean(page)
    rows = page.evaluate(STAIRS_JS)
    assert not rows, f"LLM Estimator ({lang}) at 1280 px: boxes of one row at different heights: {rows}"
