"""A teacher at 1280×720, and zoomed to 125 % (1024×576 CSS px): the Devices page's datasheet table and the
Transformer GEMMs table show every column without a sideways scroll (review s29, B).

The datasheet was 1,368 px in an 818-px column (the bandwidth and the sources past its right edge); the GEMMs
table 708 px in a 562-px one at 125 % ("A (M×K)" cut, "B (K×N)" off the edge). The grid draws on a canvas: only a
browser shows whether its scroller is wider than its box."""

from __future__ import annotations

import pytest
from browser_helpers import assert_clean, open_page, page_info
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
READS_ONLY = True  # nothing measured or saved: shares the worker's server (conftest.app_server)

SCROLL_JS = """d => { const s = d.querySelector('.dvn-scroller');
    return {scroll: s ? s.scrollWidth : null, box: s ? s.clientWidth : null,
            headers: [...d.querySelectorAll('[role="columnheader"]')].map(h => h.textContent)}; }"""
WINDOWS = {"1280 px": (1280, 720), "125 %": (1024, 576)}
MAX_LAYER = "tg_seq=1048576&tg_d=65536&tg_heads=4096&tg_ffn=262144&tg_gated=true"  # every field at its largest


def _fits(page, file: str, query: str, nth: int, window: tuple[int, int]) -> dict:
    page.set_viewport_size({"width": window[0], "height": window[1]})
    open_page(page, page.context.app_url, page_info(file).url_path, query=query)
    grid = page.get_by_test_id("stDataFrame").nth(nth)
    grid.scroll_into_view_if_needed()  # (the grid draws its cells once in view)
    expect(grid.locator('[role="columnheader"]').first).to_be_attached()
    got = grid.evaluate(SCROLL_JS)
    assert_clean(page)
    return got


@pytest.fixture
def sized(app_server, page):
    page.context.app_url = app_server.url
    yield page
    page.set_viewport_size({"width": 1280, "height": 800})


@pytest.mark.parametrize("window", list(WINDOWS), ids=list(WINDOWS))
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_devices_datasheet_fits(sized, lang, window):
    got = _fits(sized, "pages/5_Devices.py", f"lang={lang}", 1, WINDOWS[window])  # (under the detected devices)
    assert got["box"] and got["scroll"] <= got["box"] + 1, got
    assert "fp32" in got["headers"] and "TB/s" in got["headers"], got


@pytest.mark.parametrize(("lang", "query", "window"), [
    ("en", "", "125 %"), ("zh", "", "125 %"), ("en", MAX_LAYER, "1280 px"), ("zh", MAX_LAYER, "1280 px")])
def test_the_transformer_gemms_table_fits(sized, lang, query, window):
    got = _fits(sized, "pages/3_Transformer_GEMMs.py", "&".join(x for x in (f"lang={lang}", query) if x), 0,
                WINDOWS[window])
    assert got["box"] and got["scroll"] <= got["box"] + 1, got
    assert got["headers"][-3:] == ["M", "N", "K"], got
