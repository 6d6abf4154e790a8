"""URL binding in a real browser: a widget change writes its value into the page's URL (Streamlit's
``bind="query-params"``), and that URL, opened as the first request of a fresh server, restores it.

AppTest cannot see the URL the browser writes, so this is where it is checked, on several pages.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlencode, urlparse

import pytest
from browser_helpers import (
    assert_clean,
    assert_same_view,
    open_page,
    page_info,
    settled_url,
    view_snapshot,
    wait_idle,
)
from playwright.sync_api import expect

import ui
from gemmlib.explain.reference import LOOP_ORDER_LABELS
from gemmlib.views.accumulate import SOURCES

pytestmark = pytest.mark.browser
READS_ONLY = True  # no benchmark, nothing saved: shares the worker's server (conftest.app_server)

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
    """A slider moved by keyboard writes the URL; a link naming an option (``acc_order=outer``)
    selects it; a bad value falls back without an error."""
    info = page_info("pages/1_Accumulate.py")
    open_page(page, app_server.url, info.url_path, query="acc_order=outer&acc_alpha=abc")
    expect(page.get_by_role("radio", name=re.compile("outer product", re.I))).to_be_checked()
    expect(page.get_by_label("α", exact=True)).to_have_value("1.00")  # 'abc' fell back to the default
    slider = page.get_by_role("slider", name=re.compile("speed"))
    slider.focus()
    slider.press("ArrowRight")
    expect(page).to_have_url(re.compile(r"[?&]acc_speed=6(&|$)"))
    assert_clean(page)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_clicked_option_writes_its_key_and_the_copied_link_holds(app_server, page, lang):
    """Clicking an option writes the option (``acc_src=random``), never its label in the page's
    language; the copied address opens the same view; a link with the label (as Streamlit's own
    binding wrote them, in either language) opens that option and the address then reads the key."""
    gettext = ui.translations(lang).gettext
    info = page_info("pages/1_Accumulate.py")
    open_page(page, app_server.url, info.url_path, query=f"lang={lang}")
    page.get_by_role("radiogroup").get_by_text(gettext(SOURCES["random"]), exact=True).click()
    expect(page).to_have_url(re.compile(r"[?&]acc_src=random(&|$)"))
    wait_idle(page)
    page.get_by_role("radiogroup").get_by_text(gettext(LOOP_ORDER_LABELS["outer"]), exact=True).click()
    expect(page).to_have_url(re.compile(r"[?&]acc_order=outer(&|$)"))
    link = settled_url(page)
    assert _query(page) == {"lang": [lang], "acc_src": ["random"], "acc_order": ["outer"]}
    view = view_snapshot(page)

    page.goto(link, wait_until="domcontentloaded")
    assert settled_url(page) == link
    assert_same_view(view_snapshot(page), view)
    expect(page.get_by_role("radio", name=gettext(LOOP_ORDER_LABELS["outer"]))).to_be_checked()

    other = ui.translations("zh" if lang == "en" else "en").gettext
    open_page(page, app_server.url, info.url_path,
              query=urlencode({"lang": lang, "acc_src": other(SOURCES["random"]), "acc_order": gettext(
                  LOOP_ORDER_LABELS["tiled"])}))
    settled_url(page)
    assert _query(page) == {"lang": [lang], "acc_src": ["random"], "acc_order": ["tiled"]}
    assert_clean(page)


def test_a_tab_is_named_by_its_english_label_in_every_language(app_server, page):
    """On the Chinese page a click on a tab writes its stable id (``le_tab=Roofline``, the English label),
    and that address opens the same tab again; a link naming the Chinese label opens it too."""
    zh = ui.translations("zh").gettext
    info = page_info("pages/4_LLM_Estimator.py")
    open_page(page, app_server.url, info.url_path, query="lang=zh")
    page.get_by_role("tab", name=zh("Roofline")).click()
    expect(page).to_have_url(re.compile(r"[?&]le_tab=Roofline(&|$)"))
    link = settled_url(page)
    page.goto(link, wait_until="domcontentloaded")
    assert settled_url(page) == link
    expect(page.get_by_role("tab", name=zh("Roofline"))).to_have_attribute("aria-selected", "true")
    open_page(page, app_server.url, info.url_path, query=urlencode({"lang": "en", "le_tab": zh("Memory")}))
    expect(page.get_by_role("tab", name="Memory", exact=True)).to_have_attribute("aria-selected", "true")
    expect(page).to_have_url(re.compile(r"[?&]le_tab=Memory(&|$)"))
    assert_clean(page)
