"""A teacher's and a student's review of the teaching pages, in a real browser (few, cheap checks).

Each test opens as few pages as it can: a page load costs ~1.5 CPU s on the project's machine.
"""

from __future__ import annotations

import pytest
from browser_helpers import assert_clean, open_page, wait_idle

pytestmark = pytest.mark.browser
READS_ONLY = True  # nothing saved: shares the worker's server (conftest.app_server)

DRAWN_JS = """() => { const h = document.querySelector('[data-testid=stBidiComponentIsolated]');
    const r = h && h.shadowRoot && h.shadowRoot.querySelector('.gst[data-step][data-fitted]');
    const c = r && r.querySelector('.cell');
    return !!c && c.getBoundingClientRect().width > 0; }"""


def _drawn(page) -> None:
    page.wait_for_function(DRAWN_JS, timeout=90_000)


def test_a_cell_edited_in_the_step_through_is_in_the_link(app_server, page):
    """A teacher changes A[0,0] of the article's example in the step-through and copies the link: the link
    opens her matrix (it said only ?acc_src=custom, which opened the article's 1 2 3 / 4 5 6 again)."""
    open_page(page, app_server.url, "Accumulate")
    _drawn(page)
    page.locator(".gst .ga .cell").first.click()
    page.keyboard.press("Control+A")
    page.keyboard.type("5")
    page.keyboard.press("Enter")
    page.wait_for_function("() => ['acc_text_a=', 'acc_src=custom'].every(s => location.search.includes(s))",
                           timeout=30_000)
    wait_idle(page)
    query = page.url.split("?", 1)[1]
    page.goto("about:blank")
    open_page(page, app_server.url, "Accumulate", query)
    _drawn(page)
    assert page.locator(".gst .ga .cell").all_text_contents() == ["5", "2", "3", "4", "5", "6"]
    wait_idle(page)
    assert_clean(page)


UNCHECKED_JS = """() => [...document.querySelectorAll('[role=radiogroup]')]
    .filter(g => !g.closest('.st-key-lang') && !g.querySelector('input:checked'))
    .map(g => ((g.closest('[class*=st-key-]') || {}).className || '').match(/st-key-(\\S+)/)?.[1] || '?')"""


@pytest.mark.parametrize("path, query", [("Accumulate", "acc_order=outer"), ("FLOPs", "fl_metric=MB+moved"),
                                         ("LLM_Estimator", ""), ("Precision", ""), ("Batching", ""), ("Profiler", "")])
def test_switching_to_chinese_keeps_the_option_choices(app_server, page, path, query):
    """A teacher opens a page in English and switches to 中文: the radios whose options are translated showed no
    choice (the browser still held their English labels) — Accumulate's 'Matrices' and 'Loop order', FLOPs'
    metric, the Estimator's model source, convention, attention and MLA, Precision's set, Batching's shape, the
    Profiler's source and attention — and on Accumulate the next change anywhere (β's +) ended in 'KeyError: This
    app has encountered an error'. ui.url now sends each option widget's choice again on the run where the
    language changed."""
    open_page(page, app_server.url, path, query)
    assert page.evaluate(UNCHECKED_JS) == [], path  # (the language switch shows no choice until one is made)
    page.locator('.st-key-lang [role="radiogroup"] label').nth(1).click()
    wait_idle(page)
    page.wait_for_function("() => location.search.includes('lang=zh')", timeout=30_000)
    assert page.evaluate(UNCHECKED_JS) == [], path
    other = page.locator('[role=radiogroup]:not(.st-key-lang [role=radiogroup]) label:not(:has(input:checked))')
    other.first.click()  # another choice: the page reruns in Chinese
    wait_idle(page)
    assert_clean(page)
    assert page.evaluate(UNCHECKED_JS) == [], path


CELLS_JS = """() => { const root = document.querySelector('[data-testid=stBidiComponentIsolated]').shadowRoot.querySelector('.gst');
    const c = root.querySelector('.gd .cell');
    return {font: parseFloat(getComputedStyle(c).fontSize), cell: c.getBoundingClientRect().width,
            cut: [...root.querySelectorAll('.cell')].filter(e => e.scrollWidth > e.clientWidth + 1).length,
            onerow: root.classList.contains('onerow'), bottom: root.getBoundingClientRect().bottom}; }"""


def test_presentation_numbers_use_the_room_of_their_cells(app_server, page):
    """A 1080p projector, random 7×5 by 5×9 with decimals and C: the cells are 53 px wide, yet the numbers
    (D's -0.2729) were drawn at 9 px, the width of a value estimated at 0.62 em a character. They are sized by
    the widest value as drawn: 14 px, none cut, still one row on one screen."""
    page.set_viewport_size({"width": 1920, "height": 1080})
    open_page(page, app_server.url, "Accumulate", "acc_present=true&acc_order=tiled&acc_src=random&acc_m=7&acc_n=9"
              "&acc_k=5&acc_pos=2&acc_alpha=-1.5&acc_beta=0.5&acc_ints=false")
    _drawn(page)
    wait_idle(page)
    m = page.evaluate(CELLS_JS)
    assert m["cell"] >= 45 and m["font"] >= 12 and m["cut"] == 0, m
    assert m["onerow"] and m["bottom"] <= 1080, m
