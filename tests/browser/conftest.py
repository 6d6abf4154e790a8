"""Fixtures for the real-browser tests: a Streamlit server on a free port and Debian's Chromium.

* ``app_server`` (one per test module, or one per pytest worker for the modules that set
  ``READS_ONLY = True``): ``streamlit run app.py`` in a subprocess, started on a free port, ready once
  ``/_stcore/health`` answers, stopped (its log kept under artifacts/logs/) at the end.
* ``fresh_server``: a factory for servers that no browser has touched yet, for cold-start tests
  (the first request such a server ever gets is a deep link).
* ``browser`` (one per session): Playwright driving ``/usr/bin/chromium``. We never download a
  browser (no ``playwright install``): without Debian's Chromium the browser tests are skipped.
* Tests that check Chinese glyphs (marked ``cjk_font``, or calling ``glyph_fingerprints``) are
  skipped with the reason where ``fc-list`` knows no Noto Sans CJK SC (``apt-get install fonts-noto-cjk``).
* ``page``: a new document with no cookies or storage, in one English browser context and one tab the
  session shares (for the HTTP cache and a warm renderer); on failure a screenshot is kept under
  ``artifacts/screenshots/failed/`` and the next test gets a new tab.
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


@pytest.fixture(scope="session")
def _shared_server() -> Iterator[dict]:
    """The server that the modules which only read the app share (started by the first of them): "server",
    and "started", how many were started (a dead one is replaced), for the log's name."""
    holder: dict = {}
    yield holder
    if "server" in holder:
        holder["server"].stop()


@pytest.fixture(scope="module")
def app_server(request: pytest.FixtureRequest, _shared_server) -> Iterator[StreamlitServer]:
    """A server for the module. A module that sets ``READS_ONLY = True`` (its tests run no benchmark and
    leave nothing in the server's cache folder: each only opens pages in a new session) shares one
    server with the other such modules on this pytest worker: a server's start (~3 s of CPU) and its
    first page load (~2 s more of Chromium's and the server's CPU than a later one: the origin's scripts
    fetched and compiled) are paid once per worker, not once per module."""
    if getattr(request.module, "READS_ONLY", False):
        server = _shared_server.get("server")
        if server is None or server.proc.poll() is not None:  # the first, or the last one died
            if server is not None:
                server.stop()
            _shared_server["started"] = _shared_server.get("started", 0) + 1
            name = f"shared-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-{_shared_server['started']}"
            server = _shared_server["server"] = StreamlitServer(name)
        yield server
        return
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


@pytest.fixture(scope="session")
def _tab(_english_context):
    """The one tab of the shared context that the tests' pages are opened in, one after another. A new tab
    starts a new renderer process, and a cold renderer spends about twice the CPU on the same page load
    (Streamlit's ~95 script modules compiled again, its styles and fonts set up again): 2.5 s against
    1.4 s per load here, and the browser tests are mostly page loads."""
    holder: dict = {}
    yield holder
    tab = holder.get("tab")
    if tab is not None and not tab.is_closed():
        tab.close()


def _origin(url: str) -> str | None:
    m = re.match(r"^(https?://[^/?#]+)", url)
    return m.group(1) if m else None


@pytest.fixture
def page(browser, _english_context, _tab, request: pytest.FixtureRequest):
    """A tab as a new visitor's: no cookie (the XSRF cookie names a visitor for the run queue), no storage
    left by an earlier test, the standard window size, a new document (so a new Streamlit session); only
    the cache and the renderer process are shared. Between tests the tab goes to about:blank (the old
    document and its session end, as a closed tab's would: Playwright turns the back-forward cache off)
    and every origin the test opened loses what it stored. After a failed test, or one that opened more
    than one server (another origin's session storage can be cleared only from a document of its own), the
    tab is closed and the next test gets a new one.

    A test marked ``own_context`` gets a context and a tab of its own: the tests that download. (The
    estimator's JSON download that once in a few full runs never came, in either set-up, was a deferred
    callable's id replaced by a rerun before the press reached the server — the server log said "Deferred file
    ... not found"; the page now sends the JSON as data, whose id is its content's.)"""
    own = request.node.get_closest_marker("own_context") is not None
    if own:
        context = _new_english_context(browser)
        pg = context.new_page()
    else:
        context = _english_context
        context.clear_cookies()
        pg = _tab.get("tab")
        if pg is None or pg.is_closed():
            pg = _tab["tab"] = context.new_page()
    origins: set[str] = set()

    def _seen(frame) -> None:
        if (o := _origin(frame.url)) is not None:
            origins.add(o)

    pg.on("framenavigated", _seen)
    yield pg
    pg.remove_listener("framenavigated", _seen)
    rep = getattr(request.node, "rep_call", None)
    failed = rep is not None and rep.failed
    if failed:
        out = SCREENSHOTS / "failed"
        out.mkdir(parents=True, exist_ok=True)
        try:
            pg.screenshot(path=str(out / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', request.node.name)}.png"),
                          full_page=True)
        except Exception:  # noqa: BLE001 - a failed screenshot must not hide the test's failure
            pass
    if own:
        pg.close()
        context.close()
        return
    here = None if pg.is_closed() else _origin(pg.url)
    try:  # what every origin the test opened stored: the context's local storage, this tab's session storage
        if here is not None:
            pg.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
        if origins - {here} and not pg.is_closed():
            cdp = context.new_cdp_session(pg)
            try:
                for o in origins - {here}:
                    cdp.send("Storage.clearDataForOrigin", {"origin": o, "storageTypes": "local_storage"})
            finally:
                cdp.detach()
    except Exception:  # noqa: BLE001 - a crashed page: the tab is replaced below
        failed = True
    try:
        if failed or pg.is_closed() or origins - {here}:
            raise RuntimeError("a new tab for the next test")
        pg.goto("about:blank")
        pg.set_viewport_size(VIEWPORT)
    except Exception:  # noqa: BLE001 - a failed, closed or crashed tab is replaced
        if not pg.is_closed():
            pg.close()
        _tab.pop("tab", None)
    context.clear_cookies()
