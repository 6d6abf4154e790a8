"""Fixtures for the real-browser tests: a Streamlit server on a free port and Debian's Chromium.

* ``app_server`` (one per test module): ``streamlit run app.py`` in a subprocess, started on a free
  port, ready once ``/_stcore/health`` answers, stopped (its log kept under artifacts/logs/) at the end.
* ``fresh_server``: a factory for servers that no browser has touched yet, for cold-start tests
  (the first request such a server ever gets is a deep link).
* ``browser`` (one per session): Playwright driving ``/usr/bin/chromium``. We never download a
  browser (no ``playwright install``): without Debian's Chromium the browser tests are skipped.
* Tests that check Chinese glyphs (marked ``cjk_font``, or calling ``glyph_fingerprints``) are
  skipped with the reason where ``fc-list`` knows no Noto Sans CJK SC (``apt-get install fonts-noto-cjk``).
* ``page``: a new tab with no cookies or storage, in one English browser context the session shares
  (for its HTTP cache); on failure a screenshot is kept under ``artifacts/screenshots/failed/``.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from browser_helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    IDLE_WATCH_INIT_JS,
    SCREENSHOTS,
    VIEWPORT,
    StreamlitServer,
)


@pytest.fixture(scope="module")
def app_server(request: pytest.FixtureRequest) -> Iterator[StreamlitServer]:
    server = StreamlitServer(request.module.__name__)
    yield server
    server.stop()


@pytest.fixture
def fresh_server(request: pytest.FixtureRequest) -> Iterator[Callable[..., StreamlitServer]]:
    """Factory: ``fresh_server()`` starts a server no browser has visited yet."""
    started: list[StreamlitServer] = []

    def start(env: dict[str, str] | None = None) -> StreamlitServer:
        server = StreamlitServer(f"{request.node.name}-{len(started)}", env=env)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="session")
def browser():
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium) "
                    "to run the browser tests; we never download a browser")
    from playwright.sync_api import expect, sync_playwright

    # A shared 2-core machine can take many seconds for a rerun: wait up to 30 s, not Playwright's 5.
    expect.set_options(timeout=30_000)
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


CJK_FONT = "Noto Sans CJK SC"  # the font .streamlit/config.toml names for Chinese (fonts-noto-cjk)


@functools.cache
def has_cjk_font() -> bool:
    try:
        out = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return CJK_FONT in out


def _needs_cjk_font(item: pytest.Item) -> bool:
    """Marked ``cjk_font``, or a test that draws Chinese glyphs or checks their font."""
    if item.get_closest_marker("cjk_font"):
        return True
    fn = getattr(item, "function", None)
    try:
        src = inspect.getsource(fn) if fn is not None else ""
    except (OSError, TypeError):
        return False
    return "glyph_fingerprints" in src or CJK_FONT in src


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without a CJK font the Chinese pages draw boxes: the tests that check Chinese glyphs are
    skipped with the reason (CI installs fonts-noto-cjk, so they run there)."""
    browser_dir = Path(__file__).resolve().parent
    mine = [i for i in items if Path(str(i.path)).resolve().parent == browser_dir]
    if not mine or has_cjk_font():
        return
    skip = pytest.mark.skip(reason=f"no {CJK_FONT} font (fc-list): apt-get install fonts-noto-cjk to run it")
    for item in mine:
        if _needs_cjk_font(item):
            item.add_marker(skip)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture(scope="session")
def _english_context(browser):
    """One English browser context that every ``page`` opens its tab in: the app's scripts and styles
    (~5.5 MB, ~150 files) come from its HTTP cache after the first page instead of from the server
    each time (about half a second of the server's CPU per page load on 2 cores)."""
    context = _new_english_context(browser)
    yield context
    context.close()


def _new_english_context(browser):
    # English unless a test asks for another: Chromium otherwise takes the language of the machine's $LANG.
    context = browser.new_context(viewport=VIEWPORT, locale="en-US")
    context.set_default_timeout(30_000)
    context.add_init_script(script=IDLE_WATCH_INIT_JS)  # wait_idle's watch from each document's start
    return context


@pytest.fixture
def page(browser, _english_context, request: pytest.FixtureRequest):
    """A new tab, as a new visitor: no cookie (the XSRF cookie names a visitor for the run queue), no
    storage left by an earlier test; only the cache is shared. A test marked ``own_context`` gets a
    context of its own, as every test had before: the tests that download. Once in four full runs the
    estimator's deferred JSON download (made on the server when pressed) kept its spinner for 30 s in
    the shared context while the other worker was busy; the cause was not found (repeated downloads in
    one shared context work), so those tests keep the set-up they always passed in."""
    own = request.node.get_closest_marker("own_context") is not None
    if own:
        context = _new_english_context(browser)
    else:
        context = _english_context
        context.clear_cookies()
    pg = context.new_page()
    yield pg
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        out = SCREENSHOTS / "failed"
        out.mkdir(parents=True, exist_ok=True)
        try:
            pg.screenshot(path=str(out / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', request.node.name)}.png"),
                          full_page=True)
        except Exception:  # noqa: BLE001 - a failed screenshot must not hide the test's failure
            pass
    try:  # what the page kept in the origin's storage goes with it
        if pg.url.startswith("http"):
            pg.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
    except Exception:  # noqa: BLE001 - a closed or crashed page has nothing left to clear
        pass
    pg.close()
    if own:
        context.close()
    else:
        context.clear_cookies()
