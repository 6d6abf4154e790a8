"""The server settings in .streamlit/config.toml do what they claim, in a real browser.

The last line of defence: if a page ever lets an exception escape ``ui.guard``, the viewer sees its
type and message, never a traceback with file paths. Checked on a throwaway script run with the
project's config from a temporary directory (the project's pages stay untouched).
"""

from __future__ import annotations

import re
import shutil

import pytest
from browser_helpers import ROOT, StreamlitServer, open_page
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

BROKEN = '''
import streamlit as st

st.title("Broken on purpose")
st.file_uploader("file", key="up")
raise RuntimeError("escaped on purpose")
'''


def test_an_escaped_exception_shows_no_traceback_and_uploads_are_capped(tmp_path, page):
    (tmp_path / ".streamlit").mkdir()
    shutil.copy(ROOT / ".streamlit" / "config.toml", tmp_path / ".streamlit" / "config.toml")
    (tmp_path / "broken.py").write_text(BROKEN)
    server = StreamlitServer("config-check", script="broken.py", cwd=tmp_path)
    try:
        open_page(page, server.url)
        box = page.locator('[data-testid="stException"]')
        expect(box).to_be_visible()
        expect(box).to_contain_text("RuntimeError")
        text = box.inner_text()
        assert "Traceback" not in text and "broken.py" not in text and "line 6" not in text, text
        assert "escaped on purpose" not in text, "the message should be redacted for viewers"
        # server.maxUploadSize = 2 (MB): the uploader says so.
        expect(page.get_by_text(re.compile(r"(^|\D)2\s?MB per file"))).to_be_visible()
        # toolbarMode = "viewer": no developer menu entries (Deploy) for a class.
        expect(page.get_by_role("button", name="Deploy")).to_have_count(0)
    finally:
        server.stop()
