"""A teacher projecting the Accumulate page at 1280×720, zoomed to 125 % for the back row (few, cheap checks)."""

from __future__ import annotations

import pytest
from browser_helpers import assert_clean, open_page, wait_idle

pytestmark = pytest.mark.browser
READS_ONLY = True  # nothing saved: shares the worker's server (conftest.app_server)

DRAWN_JS = """() => { const h = document.querySelector('[data-testid=stBidiComponentIsolated]');
    const r = h && h.shadowRoot && h.shadowRoot.querySelector('.gst[data-step][data-fitted]');
    const c = r && r.querySelector('.cell');
    return !!c && c.getBoundingClientRect().width > 0; }"""

# the numbers of every cell: their size, and how many are cut by their cell (the text wider than the box)
CELLS_JS = """async () => {
    await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));  // the resize handled
    const root = document.querySelector('[data-testid=stBidiComponentIsolated]').shadowRoot.querySelector('.gst');
    const cells = [...root.querySelectorAll('.cell')];
    const fonts = cells.map(c => parseFloat(getComputedStyle(c).fontSize));
    return {font: Math.min(...fonts), onerow: root.classList.contains('onerow'),
            cut: cells.filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent).slice(0, 5)}; }"""

TWELVE = "acc_src=random&acc_m=12&acc_n=12&acc_k=12&acc_ints=false&acc_pos=1727"  # decimals; D's values at the end


def _measure(page, width: int, height: int) -> dict:
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_function(f"() => innerWidth === {width}")
    wait_idle(page)
    return page.evaluate(CELLS_JS)


def test_twelve_cubed_decimals_are_readable_and_whole_on_a_1280x720_projector(app_server, page):
    """12×12×12 with decimals, its last step. Presentation mode at 1280×720 drew every number at 9 px in one
    row of 36 columns; zoomed to 125 % (1024×576 CSS px) D's -0.6224 was cut to ".6224" by its 25-px cell. The
    page view (zoomed) drew them at 9 px too, estimating a value's width at 0.62 em a character. Now a number is
    never cut, presentation stacks the matrices where one row would draw them under 12 px (A and B side by side
    at 1280×720), and the page view sizes them by the widest value as drawn."""
    page.set_viewport_size({"width": 1280, "height": 720})
    open_page(page, app_server.url, "Accumulate", f"acc_present=true&{TWELVE}")
    page.wait_for_function(DRAWN_JS, timeout=90_000)
    full = _measure(page, 1280, 720)
    assert full["font"] >= 12 and full["cut"] == [], full
    zoomed = _measure(page, 1024, 576)
    assert zoomed["font"] >= 12 and zoomed["cut"] == [], zoomed
    open_page(page, app_server.url, "Accumulate", TWELVE)  # the page view, zoomed to 125 %
    page.wait_for_function(DRAWN_JS, timeout=90_000)
    view = _measure(page, 1024, 576)
    assert view["font"] >= 11 and view["cut"] == [], view
    assert_clean(page)


def test_twelve_cubed_small_integers_keep_one_row_on_one_screen(app_server, page):
    """Small integers fit one row at a readable size: the fallback above leaves them on one screen, at 1280×720
    and zoomed to 150 % (853×480 CSS px, where a CSS px is 1.5 screen px on the wall)."""
    page.set_viewport_size({"width": 1280, "height": 720})
    open_page(page, app_server.url, "Accumulate", "acc_present=true&acc_src=random&acc_m=12&acc_n=12&acc_k=12"
              "&acc_pos=1727")
    page.wait_for_function(DRAWN_JS, timeout=90_000)
    for width, height in ((1280, 720), (853, 480)):
        m = _measure(page, width, height)
        assert m["onerow"] and m["cut"] == [], (width, m)
