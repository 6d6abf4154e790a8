"""Deep links on a cold server: the first request a freshly started server gets is ``/<Page>``.

Streamlit's pitfall (see app.py): with a ``pages/`` folder, a deep link on a cold server is routed
straight to the page file, skipping app.py. Each page must render on its own from that first request.
One server per page keeps the test honest (a server that has served anything before is not cold);
they are all started together when the module begins, so they boot while earlier tests run, and no
browser touches one before its own test.
"""

from __future__ import annotations

from urllib.parse import urlparse

import pytest
from browser_helpers import PAGE_IDS, PAGES, PageInfo, StreamlitServer, assert_clean, assert_title, open_page

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def cold_servers():
    servers: dict[str, StreamlitServer] = {}
    try:
        for info in PAGES:
            if info.exists:
                servers[info.slug] = StreamlitServer(f"cold-{info.slug}", wait=False)
        yield servers
    finally:
        for s in servers.values():
            s.stop()


@pytest.mark.parametrize("info", PAGES, ids=PAGE_IDS)
def test_cold_deep_link(cold_servers, page, info: PageInfo):
    if info.slug not in cold_servers:
        pytest.skip(f"{info.file} is not written yet")
    server = cold_servers[info.slug].wait_healthy()
    open_page(page, server.url, info.url_path, timeout=90)
    assert urlparse(page.url).path.rstrip("/") == f"/{info.url_path}".rstrip("/"), f"redirected to {page.url}"
    assert_title(page, info)
    assert_clean(page)
    cold_servers.pop(info.slug).stop()  # free its memory now
