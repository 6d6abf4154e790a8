"""Every page in a real browser on one warm server: it renders its title, with no error anywhere."""

from __future__ import annotations

import re

import pytest
from browser_helpers import (
    PAGE_IDS,
    PAGES,
    PageInfo,
    assert_clean,
    assert_title,
    open_page,
    screenshot,
    wait_idle,
)

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("info", PAGES, ids=PAGE_IDS)
def test_page_renders(app_server, page, info: PageInfo):
    if not info.exists:
        pytest.skip(f"{info.file} is not written yet")
    open_page(page, app_server.url, info.url_path)
    assert_title(page, info)
    assert_clean(page)
    screenshot(page, info.slug)


def test_sidebar_tour_in_one_session(app_server, page):
    """Click through the sidebar in one browser session: state left by one page must not break the next."""
    present = [p for p in PAGES if p.exists]
    if len(present) < 2:
        pytest.skip("no page besides home is written yet")
    open_page(page, app_server.url)
    nav = page.locator('[data-testid="stSidebarNav"]')
    nav.wait_for(state="attached")
    for info in present[1:] + present[:1]:
        link = nav.locator(f'a[href$="/{info.url_path}"]').first
        link.click()
        page.wait_for_url(re.compile(rf"/{info.url_path}(\?.*)?$"))
        wait_idle(page)
        assert_title(page, info)
        assert_clean(page)
