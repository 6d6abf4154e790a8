"""A tour of every page in a real browser: what the tables hold, and a phone's width.

The tables are Glide data grids drawn on a canvas; their cells are also in an accessible table in the
DOM, which holds each cell's value as sent (before the column's display format). So this tour checks
that no cell is None, nan or a bare True/False; that every number is drawn with a format is checked
on the data sent (tests/pages/test_tables_tour.py). At 390 px (a phone), nothing may run off the
screen: the page does not scroll sideways and no chart or image is wider than the window.
"""

from __future__ import annotations

import pytest
from browser_helpers import PAGES, assert_clean, open_page, overflowing_charts, wait_charts

pytestmark = pytest.mark.browser
READS_ONLY = True  # no benchmark, nothing saved: shares the worker's server (conftest.app_server)

FORBIDDEN = {"None", "none", "nan", "NaN", "True", "False", "true", "false", "null", "undefined"}
CHECKBOX_COLUMNS = {"ran", "GEMM"}  # drawn as checkboxes, not as text

CELLS_JS = """() => [...document.querySelectorAll('[data-testid="stDataFrame"]')].filter(t => t.checkVisibility())
    .map(t => {
        const heads = [...t.querySelectorAll('table thead th, table tr:first-child th')].map(h => h.textContent.trim());
        const rows = [...t.querySelectorAll('table tbody tr')].map(tr => [...tr.querySelectorAll('td')].map(td => td.textContent));
        return {heads, rows};
    })"""

OFF_SCREEN_JS = """() => {
    const vw = document.documentElement.clientWidth;
    const out = [];
    for (const el of document.querySelectorAll('[data-testid="stMain"] *')) {
        const r = el.getBoundingClientRect();
        if (r.width === 0 || r.right <= vw + 1) continue;
        // inside something that scrolls sideways by itself (a table, a code block): reachable, not cut
        let p = el.parentElement, scrolls = false;
        while (p && p !== document.body) {
            const s = getComputedStyle(p);
            if ((s.overflowX === 'auto' || s.overflowX === 'scroll') && p.getBoundingClientRect().right <= vw + 1) {
                scrolls = true; break;
            }
            p = p.parentElement;
        }
        if (!scrolls && !el.closest('[data-testid="stDataFrame"]')) {
            out.push(`${el.tagName.toLowerCase()}${el.dataset.testid ? '[' + el.dataset.testid + ']' : ''} `
                     + `"${(el.textContent || '').trim().slice(0, 40)}" ends at ${Math.round(r.right)} > ${vw}`);
        }
    }
    return {docScroll: document.documentElement.scrollWidth, vw, out: out.slice(0, 8)};
}"""


# Every visible table drawn (its widget's code loaded, its accessible table in the DOM with a header)
# and the tables' cells the same over three animation frames in a row.
TABLES_DRAWN_JS = """() => new Promise(done => {
    const read = () => {
        if (document.querySelector('[data-testid="stSkeleton"]')) return null;
        const grids = [...document.querySelectorAll('[data-testid="stDataFrame"]')].filter(t => t.checkVisibility());
        if (grids.some(t => !t.querySelector('table th'))) return null;
        return grids.map(t => t.querySelector('table').textContent).join('\\u0000');
    };
    let last = null, still = 0;
    const tick = () => {
        const now = read();
        still = now !== null && now === last ? still + 1 : 0;
        last = now;
        if (still >= 3) done(true); else requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
})"""


def _bad_cells(page) -> list[str]:
    bad = []
    for t in page.evaluate(CELLS_JS):
        heads = t["heads"]
        for row in t["rows"]:
            for i, cell in enumerate(row):
                col = heads[i] if i < len(heads) else ""
                if col in CHECKBOX_COLUMNS:
                    continue
                if cell.strip() in FORBIDDEN:
                    bad.append(f"{col!r}: {cell!r}")
    return bad


@pytest.mark.parametrize("info", [p for p in PAGES if p.exists], ids=lambda p: p.slug)
def test_no_table_shows_none_nan_or_a_bare_flag(app_server, page, info):
    open_page(page, app_server.url, info.url_path)
    assert_clean(page)
    page.wait_for_function(TABLES_DRAWN_JS)
    bad = _bad_cells(page)
    assert not bad, f"{info.slug}: " + "; ".join(bad[:10])
    wide = overflowing_charts(page)
    assert not wide, "cut off at the window's edge: " + "; ".join(wide)


@pytest.mark.parametrize("info", [p for p in PAGES if p.exists], ids=lambda p: p.slug)
def test_at_phone_width_nothing_is_cut_off(app_server, page, info):
    page.set_viewport_size({"width": 390, "height": 844})
    open_page(page, app_server.url, info.url_path)
    assert_clean(page)
    wait_charts(page)
    m = page.evaluate(OFF_SCREEN_JS)
    assert m["docScroll"] <= m["vw"] + 1 and not m["out"], f"{info.slug} at 390 px: {m}"


HIDDEN_JS = """() => { const s = document.querySelector('.st-key-acc_loads [data-testid="stDataFrame"] .dvn-scroller');
    return s ? s.scrollWidth - s.clientWidth : null; }"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_loads_table_shows_every_column_at_1280_px(app_server, page, lang):
    """Accumulate's loads table at 1280 × 720 with the sidebar open: all eight columns in view, the outer
    product's lesson ("D stores") among them, none scrolled out of the grid (at 800 px its grid scrolls 200 px)."""
    page.set_viewport_size({"width": 1280, "height": 720})
    open_page(page, app_server.url, "Accumulate", query=f"lang={lang}")
    assert_clean(page)
    page.wait_for_function(f"() => ({HIDDEN_JS})() !== null")
    hidden = page.evaluate(HIDDEN_JS)
    assert hidden <= 12, f"{hidden} px of the loads table's columns are scrolled out of view"  # the grid's 10 px
