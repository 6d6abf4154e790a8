"""Every link the README gives (``/Page?key=value…``) opens the same view twice.

For each link: open it, wait for the settled address (the page and the step-through may still write
the URL after the first run), check that the address kept every setting the link named, take the
view (each widget's state, the step-through's frame, the page's text), then open the settled address
again as a new session and compare. A link whose setting the page drops, or whose copied address
opens another view (an option written as its label, a step beyond the trace), fails here.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlparse

import pytest
from browser_helpers import ROOT, assert_clean, assert_same_view, open_page, settled_url, view_snapshot

pytestmark = pytest.mark.browser
READS_ONLY = True  # no benchmark, nothing saved: shares the worker's server (conftest.app_server)

# `/Accumulate?acc_src=random&…` or `http://…/?lang=zh` in the README's text; `/LLM_Estimator?...` is a pattern
_LINK = re.compile(r"`(?:https?://[^/`\s]*)?(/[A-Za-z_]*\?[^`\s]+)`")


def readme_links() -> list[str]:
    links = []
    for m in _LINK.finditer((ROOT / "README.md").read_text(encoding="utf-8")):
        link = m.group(1)
        if "..." not in link and "…" not in link and link not in links:
            links.append(link)
    return links


LINKS = readme_links()
# links the README gives as refused input: they must show this message (and no other error), and hold
REFUSED = {"/LLM_Estimator?le_src=custom&le_sw=4096&le_swp=1000000000:1": "at most 10,000"}


def test_the_readme_has_links_to_check():
    assert len(LINKS) >= 4, LINKS
    assert any(link.startswith("/Accumulate?") and "acc_order=tiled" in link for link in LINKS), LINKS


@pytest.mark.parametrize("link", LINKS)
def test_a_readme_link_holds_and_its_copy_opens_the_same_view(app_server, page, link):
    path, _, query = link.partition("?")
    open_page(page, app_server.url, path.strip("/"), query=query)
    first = settled_url(page)
    refusal = REFUSED.get(link)
    assert_clean(page, allow_input_errors=refusal is not None)
    if refusal is not None:
        assert refusal in (page.locator("body").text_content() or ""), f"{link} should say {refusal!r}"
    kept = dict(parse_qsl(urlparse(first).query, keep_blank_values=True))
    asked = dict(parse_qsl(query, keep_blank_values=True))
    assert kept == asked, f"the address bar after {link} reads ?{urlparse(first).query}"
    view = view_snapshot(page)

    page.goto(first, wait_until="domcontentloaded")  # the copied address, as a new session
    again = settled_url(page)
    assert again == first
    assert_same_view(view_snapshot(page), view)
    assert_clean(page, allow_input_errors=refusal is not None)
