"""At 1280 × 800 a ceilings row's note is read whole under its table, with no sideways scroll.

The note was the last column of the Devices page's ceilings table, cut after a few words ("no fp8 hardware here: a
reference ke…"); the grid draws on a canvas, so only a browser shows where the text ends. The page now writes each
note in full under the table (the Tiling page's results table does the same: tests/pages/test_notes_s28i.py).
"""

from __future__ import annotations

import re

import pytest
from browser_helpers import assert_clean, open_page, wait_idle
from playwright.sync_api import expect

from gemmlib.core.ceilings import COPY_NOTE

pytestmark = pytest.mark.browser
READS_ONLY = False  # it measures the CPU's ceilings: a server of this module's own

FITS_JS = """e => { const r = e.getBoundingClientRect(), main = document.querySelector('[data-testid="stMain"]')
    .getBoundingClientRect(); return e.scrollWidth <= e.clientWidth + 1 && r.right <= main.right && r.left >= main.left; }"""


def test_a_ceilings_note_is_whole_under_its_table_at_1280_px(app_server, page):
    page.set_viewport_size({"width": 1280, "height": 800})
    open_page(page, app_server.url, "Devices", query="dv_device=cpu&dv_quick=true")
    page.get_by_role("button", name="Measure ceilings").click()
    notes = page.get_by_test_id("stCaptionContainer").filter(has_text=f"device copy: {COPY_NOTE}")
    expect(notes).to_have_count(1, timeout=180_000)
    wait_idle(page)
    assert_clean(page)
    assert notes.evaluate(FITS_JS), "the notes under the ceilings table do not fit the page's width"
    lines = notes.inner_text().splitlines()
    assert any(re.fullmatch(rf"note \d+ — device copy: {re.escape(COPY_NOTE)}", x) for x in lines), lines  # numbered
    assert all(": " in line for line in lines), lines  # each note named by its row
