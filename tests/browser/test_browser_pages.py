"""Every page in a real browser, in one session on a warm server, reached through the sidebar.

Each page must show its title with no exception box and no error box with a traceback, also when
other pages have run before it in the same session (their session state is still there). A
screenshot of each is kept under artifacts/screenshots/. (test_browser_cold.py opens each page on
its own, as the first request of a fresh server.)
"""

from __future__ import annotations

import ast
import re
from urllib.parse import quote

import pytest
from browser_helpers import (
    PAGES,
    ROOT,
    PageInfo,
    assert_clean,
    assert_title,
    open_page,
    overflowing_charts,
    screenshot,
    wait_idle,
)

pytestmark = pytest.mark.browser
READS_ONLY = True  # no benchmark, nothing saved: shares the worker's server (conftest.app_server)

# Views with the widest step-by-step grids: the Accumulate page at 8×8×8 (the largest
# required random size) and the Tiling page's default 6×6×6 (both once ran off a 1280-px window).
WIDE_VIEWS = {
    "Accumulate": "acc_src=random&acc_m=8&acc_n=8&acc_k=8",
    "Tiling": "",
}


def test_every_page_through_the_sidebar(app_server, page):
    present = [p for p in PAGES if p.exists]
    missing = [p.file for p in PAGES if not p.exists]
    open_page(page, app_server.url)
    failures: dict[str, str] = {}
    try:
        assert_title(page, PAGES[0])
        assert_clean(page)
        screenshot(page, PAGES[0].slug)
    except Exception as e:  # noqa: BLE001
        failures[PAGES[0].slug] = str(e)
    nav = page.locator('[data-testid="stSidebar"]')  # ui.nav()'s page links
    for info in present[1:] + present[:1]:  # every page, then home again
        try:
            # ui.nav()'s links carry the page's URL path as a relative href ("" for home).
            nav.locator(f'a[data-testid="stPageLink-NavLink"][href="{info.url_path}"]').first.click()
            page.wait_for_url(re.compile(rf"/{info.url_path}(\?.*)?$"))
            wait_idle(page)
            assert_title(page, info)
            assert_clean(page)
            screenshot(page, info.slug)
            wide = overflowing_charts(page)
            assert not wide, "cut off at the window's edge: " + "; ".join(wide)
        except Exception as e:  # noqa: BLE001 - check the other pages too, then report every failure
            failures[info.slug] = str(e)
            open_page(page, app_server.url)  # start again from home
    assert not failures, "\n\n".join(f"{slug}: {msg}" for slug, msg in failures.items())
    if missing:
        pytest.skip(f"pages not written yet: {', '.join(missing)}")


JUNK = ["-7", "1e309", "nan", "x'<b>", "99999999999999", "", "0"]


def _url_keys(info: PageInfo) -> list[str]:
    """Every string literal in the page file that looks like a session-state key (``le_batch``)."""
    tree = ast.parse((ROOT / info.file).read_text())
    keys = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and re.fullmatch(r"[a-z]{1,4}_[a-z0-9_]{1,20}", n.value)}
    return sorted(keys)


# Every page gets the same links through AppTest (tests/pages/test_url_fallbacks.py): here the page
# that reads the most keys from its URL, through Streamlit's own front end and a real server.
ABSURD_PAGES = ("pages/4_LLM_Estimator.py",)


def test_absurd_query_strings_fall_back_to_defaults(app_server, page):
    """A hand-edited link (negative, huge, non-numeric, empty values for every key a page reads from
    the URL) still renders the page, with no error: bad values fall back to the defaults."""
    failures: dict[str, str] = {}
    for info in [p for p in PAGES if p.exists and p.file in ABSURD_PAGES]:
        keys = _url_keys(info)
        query = "&".join(f"{k}={quote(JUNK[i % len(JUNK)])}" for i, k in enumerate(keys))
        try:
            open_page(page, app_server.url, info.url_path, query=query)
            assert_title(page, info)
            assert_clean(page)
        except Exception as e:  # noqa: BLE001 - check every page, then report all failures
            failures[info.slug] = f"{e}\n(query: {query[:300]})"
    assert not failures, "\n\n".join(f"{slug}: {msg}" for slug, msg in failures.items())


@pytest.mark.parametrize("slug", sorted(WIDE_VIEWS))
def test_wide_views_fit_the_window(app_server, page, slug):
    """No chart of these views is wider than the content column of a 1280-px window."""
    info = next(p for p in PAGES if p.slug == slug)
    if not info.exists:
        pytest.skip(f"{info.file} is not written yet")
    open_page(page, app_server.url, info.url_path, query=WIDE_VIEWS[slug])
    assert_clean(page)
    wide = overflowing_charts(page)
    assert not wide, "cut off at the window's edge: " + "; ".join(wide)
