"""Links with hostile values for every URL-bound widget of every page: defaults, never an exception.

Widgets are bound with ``bind="query-params"``; Streamlit falls back to a widget's default for a
value it cannot use. ``1e309`` and ``inf`` are the values its own seeding let through as an
OverflowError (``ui.url`` drops them first), the rest are malformed, out of range or empty.
"""

import ast
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("*.py"))
HOSTILE = ["1e309", "-inf", "nan", "abc", "-7", "99999999999999", "", "x'<b>"]


def _bound_keys(page: str) -> list[str]:
    text = (ROOT / page).read_text(encoding="utf-8")
    return sorted(set(re.findall(r"""key=["']([a-z]+_[a-z0-9_]+)["']""", text)))


# A hand-edited link: every string of the page's source that looks like a session-state key (widgets
# bound through ui.url's helpers name theirs without ``key=``), each given one of these values in turn.
EDITED = ["-7", "1e309", "nan", "x'<b>", "99999999999999", "", "0"]


def _state_keys(page: str) -> list[str]:
    tree = ast.parse((ROOT / page).read_text(encoding="utf-8"))
    return sorted({n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                   and re.fullmatch(r"[a-z]{1,4}_[a-z0-9_]{1,20}", n.value)})


@pytest.mark.parametrize("page", PAGES)
def test_absurd_edited_links_fall_back_to_the_defaults_with_no_error(page):
    """Negative, huge, non-numeric and empty values for every key a page may read from the URL: the
    page renders its title with no exception and no error box (bad values fall back to the defaults).
    tests/browser/test_browser_pages.py sends one such link through a real browser and server."""
    keys = _state_keys(page)
    at = AppTest.from_file(str(ROOT / page), default_timeout=120)
    for i, k in enumerate(keys):
        at.query_params[k] = EDITED[i % len(EDITED)]
    at.run()
    assert not at.exception, (page, [e.value for e in at.exception])
    assert not at.error, (page, [e.value for e in at.error])
    assert at.title and at.title[0].value, page


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("value", ["1e309", "junk"])
def test_hostile_link_values_fall_back_without_an_exception(page, value):
    keys = _bound_keys(page)
    assert keys, page
    at = AppTest.from_file(str(ROOT / page), default_timeout=120)
    for i, k in enumerate(keys):
        at.query_params[k] = value if value != "junk" else HOSTILE[i % len(HOSTILE)]
    at.run()
    assert not at.exception, (page, at.exception)
