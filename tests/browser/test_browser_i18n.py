"""The app in Chinese (简体中文) in a real browser.

- The translated pages (scripts/i18n.py's TRANSLATED: the home page now) open in both languages
  with no exception, and the Chinese one has no English left outside code, formulas, numbers,
  units and names (every visible text node, the table cells and the tab's title are read).
- A cold deep link ``/?lang=zh`` (the first request a fresh server sees) opens in Chinese.
- With no choice made the browser's language decides (``st.context.locale``).
- A choice made with the switch holds on every page of the session and stays in the URL.
- Chinese text in charts draws with a Simplified Chinese font (no missing-glyph boxes, not
  Japanese glyph shapes) and the charts fit their column (the Batching page's intensity chart,
  the worked example of a chart builder taking the page's gettext).
"""

from __future__ import annotations

import re
import time
from urllib.parse import parse_qs, urlparse

import gemm_i18n
import pytest
from browser_helpers import (
    PAGES,
    VIEWPORT,
    assert_clean,
    chart_font_family,
    chart_titles,
    glyph_fingerprints,
    open_page,
    overflowing_charts,
    page_info,
    screenshot,
    script_state,
    visible_texts,
    wait_charts,
    wait_idle,
)

pytestmark = pytest.mark.browser
READS_ONLY = True  # no benchmark, nothing saved: shares the worker's server (conftest.app_server)

ZH = {m.id: m.string for m in gemm_i18n.read("zh") if isinstance(m.id, str) and m.id}
# Every translated page, also one the fixed tour list leaves out (pages/11_Multi_GPU.py).
TRANSLATED = [p for p in PAGES if p.file in gemm_i18n.TRANSLATED] + [
    page_info(f) for f in gemm_i18n.TRANSLATED if f not in {p.file for p in PAGES}]


_CUT_JS = """() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stPageLink-NavLink"] *')]
    .filter(e => e.children.length === 0 && /[A-Za-z\u4e00-\u9fff]/.test(e.textContent)
                 && e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)"""  # icons aside


def _names() -> list[str]:
    """Names a Chinese page shows as they are: this machine's devices, the GPU catalogue, the
    layer's module names (``q_proj``, ``attn_scores``: the Transformer page's GEMMs)."""
    from gemmlib.core.hardware import CATALOGUE
    from gemmlib.core.machine import light_summary
    from gemmlib.llm.accounting import OP_NAMES

    return [d["name"] for d in light_summary()] + list(CATALOGUE) + list(OP_NAMES)


def _lang_in_url(page) -> str | None:
    return parse_qs(urlparse(page.url).query).get("lang", [None])[0]


def _h1(page) -> str:
    return page.locator("h1").first.inner_text()


def _pick(page, code: str) -> None:
    import ui

    page.locator('.st-key-lang [role="radiogroup"] label').nth(list(ui.LANGS).index(code)).click()


def _settled_texts(page, ok=lambda texts: True, timeout: float = 45.0) -> list[str]:
    """The page's visible texts once they have stopped changing for 1.5 s and ``ok`` holds (or at the
    timeout, as they are then: the caller's assertion reports them). A page's last elements, the sidebar's
    links and a component's rerun can land after the script went idle on a loaded machine."""
    deadline = time.monotonic() + timeout
    wait_idle(page)
    last, since = None, time.monotonic()
    while True:
        texts, now = visible_texts(page), time.monotonic()
        if script_state(page) != "notRunning":  # a rerun (a component's value): wait it out, then look again
            wait_idle(page)
            last = None
        elif texts != last:
            last, since = texts, now
        elif now - since >= 1.5 and ok(texts):
            return texts
        if now > deadline:
            return texts
        time.sleep(0.1)


def _context(browser, locale: str):
    ctx = browser.new_context(viewport=VIEWPORT, locale=locale)
    ctx.set_default_timeout(30_000)
    return ctx


@pytest.mark.parametrize("info", TRANSLATED, ids=[p.slug for p in TRANSLATED])
def test_translated_page_in_both_languages(app_server, page, info):
    open_page(page, app_server.url, info.url_path)
    assert_clean(page)
    assert info.title in _h1(page)
    english = _settled_texts(page)
    cjk = [t for t in english if re.search(r"[\u4e00-\u9fff]", t)]
    assert not cjk, f"Chinese on the English page: {cjk}"

    def _shown(texts: list[str]) -> bool:
        chinese = [t for t in texts if re.search(r"[\u4e00-\u9fff]", t)]
        return len(texts) >= 0.9 * len(english) and len(chinese) >= 0.3 * len(texts) and len(chinese) >= 10

    open_page(page, app_server.url, info.url_path, query="lang=zh")
    assert_clean(page)
    assert ZH[info.title] in _h1(page)
    assert page.title().startswith(ZH[info.title])
    texts = _settled_texts(page, _shown)
    chinese = [t for t in texts if re.search(r"[\u4e00-\u9fff]", t)]
    print(f"{info.slug}: {len(english)} texts in English, {len(texts)} in Chinese, {len(chinese)} of them Chinese")
    # Not vacuous: the Chinese page shows what the English one does (its text nodes; a fixed count
    # failed pages that fold their sections into tabs and expanders), and in Chinese.
    assert len(texts) >= 0.9 * len(english) and len(chinese) >= 0.3 * len(texts) and len(chinese) >= 10
    left = sorted({w for t in texts for w in gemm_i18n.english_words(t, _names())})
    assert not left, f"English left on the Chinese {info.slug} page: {left}"
    assert not overflowing_charts(page)
    cut = page.evaluate(_CUT_JS)
    assert not cut, f"page links cut off: {cut}"  # Chinese names are wider than the English ones
    family = page.evaluate("() => getComputedStyle(document.querySelector('h1')).fontFamily")
    assert "Noto Sans CJK SC" in family, family  # the text's font, as the charts' (below)
    assert glyph_fingerprints(page, family, ["骨直"]) == glyph_fingerprints(page, '"Noto Sans CJK SC"', ["骨直"])
    screenshot(page, f"{info.slug}-zh")


def test_cold_deep_link_opens_in_chinese(fresh_server, page):
    server = fresh_server()
    open_page(page, server.url, "", query="lang=zh", timeout=90)
    assert_clean(page)
    assert ZH[PAGES[0].title] in _h1(page)
    assert _lang_in_url(page) == "zh"
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert sidebar.get_by_text(ZH["Profiler"], exact=True).count() == 1


@pytest.mark.parametrize("locale, expect", [("zh-CN", "zh"), ("zh-TW", "zh"), ("en-GB", "en"), ("de-DE", "en")])
def test_the_browser_language_is_the_default(app_server, browser, locale, expect):
    ctx = _context(browser, locale)
    try:
        page = ctx.new_page()
        open_page(page, app_server.url)
        want = ZH[PAGES[0].title] if expect == "zh" else PAGES[0].title
        assert want in _h1(page)
        assert _lang_in_url(page) is None  # nothing chosen, nothing written
        if expect == "zh":  # a link's choice wins over the browser's language
            open_page(page, app_server.url, query="lang=en")
            assert PAGES[0].title in _h1(page)
    finally:
        ctx.close()


def _to(page, url_path: str) -> None:
    page.locator('[data-testid="stSidebar"]').locator(
        f'a[data-testid="stPageLink-NavLink"][href="{url_path}"]').first.click()
    page.wait_for_url(re.compile(rf"/{url_path}(\?.*)?$"))
    wait_idle(page)


def test_a_choice_holds_across_pages_and_charts_draw_chinese(app_server, page):
    open_page(page, app_server.url)
    assert PAGES[0].title in _h1(page)
    _pick(page, "zh")
    page.wait_for_function("t => document.querySelector('h1').textContent.includes(t)", arg=ZH[PAGES[0].title])
    wait_idle(page)
    assert _lang_in_url(page) == "zh"

    _to(page, "Batching")
    assert _lang_in_url(page) == "zh"
    assert page.locator('[data-testid="stSidebar"]').get_by_text(ZH["Home"], exact=True).count() == 1
    assert_clean(page)
    wait_charts(page)
    titles = chart_titles(page)
    assert ZH["Arithmetic intensity by batch (dashed: ridge point)"] in titles, titles
    wide = overflowing_charts(page)
    assert not wide, wide

    # The chart's font draws Chinese: two characters are two different shapes (a missing glyph is
    # the same box for both), and the Simplified Chinese ones, not the Japanese forms of 骨 and 直.
    family = chart_font_family(page)
    assert family and "Noto Sans CJK SC" in family, family
    a, b = glyph_fingerprints(page, family, ["矩", "阵"])
    assert a != b, f"Chinese draws as missing-glyph boxes with {family!r} (install fonts-noto-cjk)"
    sc = glyph_fingerprints(page, '"Noto Sans CJK SC"', ["骨直"])
    jp = glyph_fingerprints(page, '"Noto Sans CJK JP"', ["骨直"])
    assert sc != jp  # the two faces differ here, so the comparison below means something
    assert glyph_fingerprints(page, family, ["骨直"]) == sc
    screenshot(page, "Batching-zh")

    _to(page, "")
    assert ZH[PAGES[0].title] in _h1(page)
    assert _lang_in_url(page) == "zh"
    _pick(page, "en")
    page.wait_for_function("t => document.querySelector('h1').textContent.includes(t)", arg=PAGES[0].title)
    _to(page, "Batching")
    assert page.locator('[data-testid="stSidebar"]').get_by_text("Home", exact=True).count() == 1


def test_a_deep_link_choice_holds_on_the_next_pages(fresh_server, page):
    """A shared Chinese link to one page, then the sidebar: every page stays in Chinese."""
    server = fresh_server()
    open_page(page, server.url, "Batching", query="lang=zh", timeout=90)
    assert_clean(page)
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert sidebar.get_by_text(ZH["Home"], exact=True).count() == 1
    for url_path in ("", "Batching", ""):
        _to(page, url_path)
        wait_idle(page)
        assert sidebar.get_by_text(ZH["Home"], exact=True).count() == 1, url_path
        assert_clean(page)
    assert ZH[PAGES[0].title] in _h1(page)


def test_the_web_font_fallback_is_served_and_loads(app_server, page):
    """A machine without a CJK font still draws the language switch and the Chinese UI: the page declares the
    app's own subset ("GEMM CJK", static/ via .streamlit/config.toml) for the CJK ranges, and both weights load
    from this server and draw distinct glyphs (tests/test_cjk_font.py: it covers every character shown)."""
    open_page(page, app_server.url, "", query="lang=zh")
    assert_clean(page)
    faces = page.evaluate("""async () => {
        const out = [];
        for (const w of ['400', '700']) {
            const got = await document.fonts.load(`${w === '700' ? 'bold ' : ''}48px "GEMM CJK"`, '语言简体中文');
            out.push(got.map(f => [f.family.replace(/"/g, ''), String(f.weight), f.status]));
        }
        return out; }""")
    assert faces == [[["GEMM CJK", "400", "loaded"]], [["GEMM CJK", "700", "loaded"]]], faces
    prints = glyph_fingerprints(page, '"GEMM CJK"', list("语言简体中文"))
    assert len(set(prints)) == 6, prints  # six characters, six glyphs: no missing-glyph boxes
