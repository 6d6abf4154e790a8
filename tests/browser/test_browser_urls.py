"""URL binding in a real browser: a widget change writes its value into the page's URL (Streamlit's
``bind="query-params"``), and that URL, opened as the first request of a fresh server, restores it.

AppTest cannot see the URL the browser writes, so this is where it is checked, on several pages.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from browser_helpers import assert_clean, open_page, page_info, wait_idle
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

# page file, widget label (exact), URL key, value typed in
NUMBER_INPUTS = [
    ("pages/3_Transformer_GEMMs.py", "seq_len s", "tg_seq", "24576"),
    ("pages/2_FLOPs.py", "K", "fl_k", "2048"),
    ("pages/7_Tiling.py", "tile (square)", "ti_t", "3"),
    ("pages/10_Profiler.py", "batch", "pf_batch", "3"),
]


def _query(page) -> dict[str, list[str]]:
    return parse_qs(urlparse(page.url).query)


@pytest.mark.parametrize("file, label, key, value", NUMBER_INPUTS, ids=[k for _, _, k, _ in NUMBER_INPUTS])
def test_a_widget_change_writes_the_url_and_the_url_restores_it(app_server, fresh_server, page, file, label, key,
                                                                 value):
    info = page_info(file)
    open_page(page, app_server.url, info.url_path)
    assert key not in _query(page), "a default value is left out of the URL"
    box = page.get_by_label(label, exact=True).first
    box.fill(value)
    box.press("Enter")
    expect(page).to_have_url(re.compile(rf"[?&]{key}={value}(&|$)"))
    wait_idle(page)
    assert_clean(page)
    link = urlparse(page.url)

    server = fresh_server()  # the shared link, as the first request a new server ever gets
    open_page(page, server.url, info.url_path, query=link.query, timeout=90)
    expect(page.get_by_label(label, exact=True).first).to_have_value(value)
    assert _query(page).get(key) == [value]
    assert_clean(page)


def test_speed_slider_and_an_option_link(app_server, page):
    """A slider moved by keyboard writes the URL; a link naming an option (``acc_order=outer``, as
    links did before Streamlit wrote labels) selects it; a bad value falls back without an error."""
    info = page_info("pages/1_Accumulate.py")
    open_page(page, app_server.url, info.url_path, query="acc_order=outer&acc_alpha=abc")
    expect(page.get_by_role("radio", name=re.compile("outer product", re.I))).to_be_checked()
    expect(page.get_by_label("α", exact=True)).to_have_value("1.00")  # 'abc' fell back to the default
    slider = page.get_by_role("slider", name=re.compile("speed"))
    slider.focus()
    slider.press("ArrowRight")
    expect(page).to_have_url(re.compile(r"[?&]acc_speed=6(&|$)"))
    assert_clean(page)
