"""The Roofline page's "Against published measurements" at 1280×720, opened by the LLM Estimator's link
(``?rf_published=true``), in English and Chinese: each table's run, measured, estimated, error and metric columns lie
in the page's column without a sideways scroll (the set-up and the source follow them, to the right: the table is
1,800 px wide); the grid draws on a canvas, so only a browser knows its box."""

from __future__ import annotations

import pytest
from browser_helpers import assert_clean, open_page, page_info
from playwright.sync_api import expect

from gemmlib.views import published as pv

pytestmark = pytest.mark.browser
READS_ONLY = True  # nothing measured or saved: shares the worker's server (conftest.app_server)

GRID_JS = """d => { const s = d.querySelector('.dvn-scroller');
    return {box: s ? s.clientWidth : null,
            headers: [...d.querySelectorAll('[role="columnheader"]')].map(h => h.textContent)}; }"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_published_tables_show_the_run_and_its_figures_at_1280_px(app_server, page, lang):
    page.set_viewport_size({"width": 1280, "height": 720})
    try:
        link = pv.roofline_href().split("?", 1)[1].split("#")[0].replace("lang=en", f"lang={lang}")
        open_page(page, app_server.url, page_info("pages/9_Roofline.py").url_path, query=link, timeout=120)
        grids = page.get_by_test_id("stDataFrame")
        expect(grids).to_have_count(3, timeout=60_000)  # the roofs, then training and inference
        for i in (1, 2):
            grid = grids.nth(i)
            grid.scroll_into_view_if_needed()
            expect(grid.locator('[role="columnheader"]').first).to_be_attached()
            got = grid.evaluate(GRID_JS)
            first = list(pv.WIDTHS)
            assert got["box"] and sum(pv.WIDTHS.values()) <= got["box"], got
            shown = [h for h in got["headers"] if h.strip()]
            if lang == "en":
                assert shown[: len(first)] == ["run", "measured", "estimated", "error", "metric"], got
            else:
                assert shown[: len(first)] == ["运行", "实测", "估算值", "误差", "指标"], got
        assert_clean(page)
    finally:
        page.set_viewport_size({"width": 1280, "height": 800})
