"""Fixtures for the real-browser tests: a Streamlit server on a free port and Debian's Chromium.

* ``app_server`` (one per test module): ``streamlit run app.py`` in a subprocess, started on a free
  port, ready once ``/_stcore/health`` answers, stopped (its log kept under artifacts/logs/) at the end.
* ``fresh_server``: a factory for servers that no browser has touched yet, for cold-start tests
  (the first request such a server ever gets is a deep link).
* ``browser`` (one per session): Playwright driving ``/usr/bin/chromium``. We never download a
  browser (no ``playwright install``): without Debian's Chromium the browser tests are skipped.
* ``page``: a fresh browser context and tab; on failure a screenshot is kept under
  ``artifacts/screenshots/failed/``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator

import pytest
from browser_helpers import CHROMIUM, CHROMIUM_ARGS, SCREENSHOTS, VIEWPORT, StreamlitServer


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


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture
def page(browser, request: pytest.FixtureRequest):
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(30_000)
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
    context.close()
