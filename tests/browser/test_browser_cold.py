"""Deep links on a cold server: the first request a freshly started server gets is ``/<Page>``.

Streamlit's pitfall (see app.py): with a ``pages/`` folder, a deep link on a cold server is routed
straight to the page file, skipping app.py. Each page must render on its own from that first request.
One server per page keeps the test honest (a server that has run anything before is not cold).
"""

from __future__ import annotations

import pytest
from browser_helpers import PAGE_IDS, PAGES, PageInfo, assert_clean, assert_title, open_page

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("info", PAGES, ids=PAGE_IDS)
def test_cold_deep_link(fresh_server, page, info: PageInfo):
    if not info.exists:
        pytest.skip(f"{info.file} is not written yet")
    server = fresh_server()
    open_page(page, server.url, info.url_path, timeout=90)
    assert page.url.rstrip("/").endswith(f"/{info.url_path}".rstrip("/")), f"redirected to {page.url}"
    assert_title(page, info)
    assert_clean(page)
