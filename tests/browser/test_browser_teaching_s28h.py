"""A teacher projecting at 1280×720 zoomed to 125 % and 150 % (1024×576 and 853×480 CSS px): the FLOPs heatmap's
labels and numbers as Streamlit's theme draws them (its "fit" autosize is what squeezed the rows)."""

from __future__ import annotations

import pytest
from browser_helpers import assert_clean, open_page, wait_idle

pytestmark = pytest.mark.browser
READS_ONLY = True  # nothing saved: shares the worker's server (conftest.app_server)

HEATMAP_JS = """() => { const el = document.querySelector('[data-testid=stVegaLiteChart]');
    const axes = [...el.querySelectorAll('g.role-axis')].map(a => [...a.querySelectorAll('g.role-axis-label text')]
        .filter(t => t.getAttribute('opacity') !== '0' && t.textContent).map(t => t.textContent));
    const cells = [...el.querySelectorAll('g.role-mark text')].filter(t => t.textContent);
    return {axes, cells: cells.length, font: Math.min(...cells.map(t => parseFloat(getComputedStyle(t).fontSize)))}; }"""


@pytest.mark.parametrize("size", [(1024, 576), (853, 480)], ids=["125%", "150%"])
def test_flops_heatmap_labels_every_row_and_prints_readable_numbers_when_zoomed(app_server, page, size):
    """The 8 × 8 default grid labelled M at 2048, 1536, 1024 and 512 only and printed 11-px numbers (its 272 px
    were the whole chart's: 22-px rows). Now every M and N is labelled and the numbers are 13 px or more."""
    page.set_viewport_size({"width": size[0], "height": size[1]})
    open_page(page, app_server.url, "FLOPs")
    page.wait_for_selector("[data-testid=stVegaLiteChart] g.role-mark text", timeout=60_000)
    wait_idle(page)
    got = page.evaluate(HEATMAP_JS)
    n_labels, m_labels = got["axes"][0], got["axes"][1]
    assert m_labels == [str(256 * i) for i in range(8, 0, -1)], got
    assert n_labels == [str(256 * i) for i in range(1, 9)], got
    assert got["cells"] == 64 and got["font"] >= 13, got
    assert_clean(page)
