"""At 1280 × 720 with the sidebar open, no text of the LLM Estimator is cut off with "…", in the sidebar or the page.

Streamlit shortens a label, a metric's value or delta, a select's value or a number box's digits that do not fit
their column. The Estimator's sidebar put "GPUs per node", "overlap (best case)" and "sequence parallelism" in
thirds of its width (the two switches read "o" and "s"); its Training tab put six widgets in a row ("TP overl…"),
the training tokens' 13 digits in a fifth ("100000000(", its "%.3g" lost to sprintf-js) and "not reachable: does not fit" under five metrics.
test_browser_cut_labels.py checks the main column of the benchmark pages; this checks the Estimator's sidebar too,
every text that the browser draws with an ellipsis, measured against the text's own width (a label 1 px too
narrow is cut as well). Only a browser lays the columns out, so this is checked here, in English and Chinese.
"""

from __future__ import annotations

import pytest
from browser_helpers import assert_clean, open_page, page_info

pytestmark = pytest.mark.browser
READS_ONLY = True  # no benchmark, nothing saved: shares the worker's server (conftest.app_server)

INFO = page_info("pages/4_LLM_Estimator.py")

# Every visible text in the sidebar or the main column that the browser cuts: an element drawn with
# text-overflow: ellipsis (or a label, metric or button with overflow hidden) whose text is wider than its box,
# and a text box (a number input) whose value is wider than the box.
CUT_JS = """() => {
    const out = [];
    const clipped = '[data-testid="stWidgetLabel"] *, [data-testid^="stMetric"] *, [data-testid^="stBaseButton"] *';
    for (const el of document.querySelectorAll('[data-testid="stSidebar"] *, [data-testid="stMain"] *')) {
        if (!el.checkVisibility()) continue;
        const cs = getComputedStyle(el);
        const box = el.tagName === 'INPUT' && !['checkbox', 'radio', 'file'].includes(el.type);
        if (!box && (!el.textContent.trim() || (cs.textOverflow !== 'ellipsis'
                                                 && !(cs.overflow === 'hidden' && el.matches(clipped))))) continue;
        const range = document.createRange();
        range.selectNodeContents(el);
        const text = box ? el.scrollWidth : range.getBoundingClientRect().width;
        const room = box ? el.clientWidth
            : el.getBoundingClientRect().width - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
        if (text > room + 0.5) out.push(`"${box ? el.value : el.textContent.trim()}" ${text.toFixed(1)} > ${room.toFixed(1)} px`);
    }
    return [...new Set(out)];
}"""

VIEWS = {
    "sidebar": "",  # the sidebar's parallelism rows; the headline's metrics
    "training": "le_tab=Training&le_train=true&le_preset=llama-3-70b",  # does not fit: the metrics' deltas
    "training-tp": "le_tab=Training&le_train=true&le_rc=selective&le_tp=2&le_gpus=2",  # every widget enabled
}


@pytest.mark.parametrize("lang", ["en", pytest.param("zh", marks=pytest.mark.cjk_font)])
@pytest.mark.parametrize("view", list(VIEWS))
def test_no_estimator_text_is_cut_at_1280_px(app_server, page, view, lang):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_page(page, app_server.url, INFO.url_path, query="&".join(q for q in (f"lang={lang}", VIEWS[view]) if q))
    assert_clean(page, allow_input_errors=view == "training")  # its red "Does not fit" box
    cut = page.evaluate(CUT_JS)
    assert not cut, f"LLM Estimator ({view}, {lang}) at 1280 px: {cut}"
    if view.startswith("training"):  # the run's tokens as a number of tokens a reader can count (was 13 digits)
        name = "training tokens D" if lang == "en" else "训练 token 数 D"
        assert page.get_by_role("spinbutton", name=name, exact=True).input_value() == "1.00e+12"
