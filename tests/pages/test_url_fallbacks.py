"""Links with hostile values for every URL-bound widget of every page: defaults, never an exception.

Widgets are bound with ``bind="query-params"``; Streamlit falls back to a widget's default for a
value it cannot use. ``1e309`` and ``inf`` are the values its own seeding let through as an
OverflowError (``ui.url`` drops them first), the rest are malformed, out of range or empty.
"""

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
