"""Helpers shared by the browser tests and benchmarks/bench_load.py.

A Streamlit server in a subprocess, the page list, waiting for Streamlit to finish a run, and the
checks that no exception or traceback reached the page. Plain functions (no pytest) so that the
load benchmark can use them too.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"
LOGS = ARTIFACTS / "logs"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--disable-background-networking",  # this machine's network is closed: no phoning home
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1280, "height": 900}
START_TIMEOUT_S = 90.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StreamlitServer:
    """``streamlit run app.py`` on a free port of 127.0.0.1, in its own process group.

    With ``wait=False`` the process is only started; call ``wait_healthy()`` before using it (this
    lets several cold servers boot while a test is busy with another).
    """

    def __init__(self, name: str, env: dict[str, str] | None = None, script: str = "app.py",
                 cwd: Path = ROOT, wait: bool = True) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        LOGS.mkdir(parents=True, exist_ok=True)
        self.log_path = LOGS / f"streamlit-{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}.log"
        cmd = [
            sys.executable, "-m", "streamlit", "run", script,
            "--server.headless", "true",
            "--server.address", "127.0.0.1",
            "--server.port", str(self.port),
            "--browser.gatherUsageStats", "false",
            "--server.fileWatcherType", "none",  # nothing changes during a test; spare the CPU
            "--server.runOnSave", "false",
        ]
        # Measured ceilings and other caches go to a directory of this server's own, so a test
        # neither reads what another run left in <tempdir>/gemmlib nor leaves anything behind.
        self._cache_dir = tempfile.mkdtemp(prefix="gemm-browser-")
        # and the machine's queue too (a policy naming a queue folder of this server's, no caps)
        self.queue_dir = Path(self._cache_dir) / "queue"
        policy = Path(self._cache_dir) / "policy.toml"
        policy.write_text(f'GEMM_QUEUE_DIR = "{self.queue_dir}"\n')
        os.chmod(policy, 0o644)
        full_env = {**os.environ, "PYTHONUNBUFFERED": "1", "GEMM_CACHE_DIR": self._cache_dir,
                    "GEMM_POLICY_FILE": str(policy), **(env or {})}
        self._log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(cmd, cwd=cwd, env=full_env, stdout=self._log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self._healthy = False
        if wait:
            self.wait_healthy()

    def wait_healthy(self) -> StreamlitServer:
        try:
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise
        self._healthy = True
        return self

    def _wait_healthy(self) -> None:
        if self._healthy:
            return
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"streamlit not healthy after {START_TIMEOUT_S:.0f} s:\n{self.log_tail()}")

    def log_tail(self, n: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=15)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(timeout=15)
        if not self._log.closed:
            self._log.close()
        shutil.rmtree(self._cache_dir, ignore_errors=True)


# The fixed page list (file-based routing: pages/<N>_<Name>.py is served at /<Name>).
PAGE_FILES = [
    "app.py",
    "pages/1_Accumulate.py",
    "pages/2_FLOPs.py",
    "pages/3_Transformer_GEMMs.py",
    "pages/4_LLM_Estimator.py",
    "pages/5_Devices.py",
    "pages/6_Precision.py",
    "pages/7_Tiling.py",
    "pages/8_Batching.py",
    "pages/9_Roofline.py",
    "pages/10_Profiler.py",
]


@dataclass(frozen=True)
class PageInfo:
    file: str
    url_path: str  # "" for home, "Accumulate" for pages/1_Accumulate.py
    title: str | None  # the first argument of ui.page(...) in the file, when it is a literal

    @property
    def exists(self) -> bool:
        return (ROOT / self.file).exists()

    @property
    def slug(self) -> str:
        return self.url_path or "Home"


def page_title(file: str) -> str | None:
    """The title a page passes to ``ui.page(title, ...)`` (or ``ui.page(_("title"), ...)``), read
    from its source (no import): the English text."""
    path = ROOT / file
    if not path.exists():
        return None
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "page"
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "ui" and node.args):
            arg = node.args[0]
            if (isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id == "_"
                    and arg.args):
                arg = arg.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                return arg.value
    return None


def page_info(file: str) -> PageInfo:
    url_path = "" if file == "app.py" else re.sub(r"^\d+_", "", Path(file).stem)
    return PageInfo(file, url_path, page_title(file))


PAGES = [page_info(f) for f in PAGE_FILES]
PAGE_IDS = [p.slug for p in PAGES]


def script_state(page) -> str | None:
    return page.get_attribute('[data-testid="stApp"]', "data-test-script-state")


# Installed once per document (at its first wait): the time of the last change of Streamlit's script
# state, seen by a MutationObserver (a rerun shorter than any polling interval still counts), and
# the time of the last message the page sent its server (WebSocket.send: a widget's change, a
# component's value, a stop), so that a request the server has not answered yet is known.
_IDLE_WATCH_JS = """() => {
    let w = window.__gemmIdle;
    if (!w) {
        w = window.__gemmIdle = {changed: null, sent: -1};
        new MutationObserver(() => { w.changed = performance.now(); }).observe(document.documentElement,
            {attributes: true, subtree: true, attributeFilter: ['data-test-script-state']});
        const send = WebSocket.prototype.send;
        WebSocket.prototype.send = function (...args) { w.sent = performance.now(); return send.apply(this, args); };
    }
    w.since = performance.now();  // this wait's start: the quiet time counts from here at the earliest
}"""
# The same watch from a document's start (a context's init script): it sees the first run begin and end,
# so the first wait in a document is as short as a later one.
IDLE_WATCH_INIT_JS = """(() => {
    if (window.__gemmIdle) return;
    const w = window.__gemmIdle = {changed: null, sent: -1, since: 0};
    new MutationObserver(() => { w.changed = performance.now(); }).observe(document,
        {attributes: true, subtree: true, attributeFilter: ['data-test-script-state']});
    const send = WebSocket.prototype.send;
    WebSocket.prototype.send = function (...args) { w.sent = performance.now(); return send.apply(this, args); };
})()"""
_IDLE_JS = """([settle, answered]) => {
    const app = document.querySelector('[data-testid="stApp"]');
    const w = window.__gemmIdle;
    if (!app || !w || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
    // what the front end draws after the run, lazily: a widget's code (a skeleton until then), a
    // table's cells (the grid's accessible table), a chart (an svg or canvas with a size)
    if (document.querySelector('[data-testid="stSkeleton"]')) return false;
    const shown = sel => [...document.querySelectorAll(sel)].filter(e => e.checkVisibility());
    if (shown('[data-testid="stDataFrame"]').some(t => !t.querySelector('table th, table td'))) return false;
    if (shown('[data-testid="stVegaLiteChart"]').some(c => {
        const g = c.querySelector('svg, canvas');
        return !g || g.getBoundingClientRect().width === 0; })) return false;
    const now = performance.now();
    if (w.changed !== null && w.changed > w.sent)  // the server ran after the page's last message
        return now - Math.max(w.changed, w.since) >= answered;
    return now - Math.max(w.changed ?? 0, w.since, w.sent) >= settle;
}"""


def wait_idle(page, timeout: float = 60.0, settle: float = 0.6, answered: float = 0.3) -> None:
    """Wait until the script has finished running and stayed finished.

    Measured in the page (one round trip, not a Python poll every 100 ms): a MutationObserver notes
    every change of the script state and a wrapper of WebSocket.send every message the page sends.
    When a run has started and ended since the page's last message (the server has answered it), the
    state only has to stay "notRunning" for ``answered`` seconds; otherwise (a message not answered
    yet: its run may not have started; or the first wait in a document, which saw nothing) for
    ``settle`` seconds after the later of the last change, the last message and the call, as before.
    A new page starts in state "initial", so a page that has not run yet never reads as idle. Idle
    also means drawn: no widget skeleton left, every visible table's cells and chart in the DOM
    (they come after the run, lazily: a fixed pause only usually covered them)."""
    try:
        page.wait_for_selector('[data-testid="stApp"]', timeout=timeout * 1000)
        page.evaluate(_IDLE_WATCH_JS)
        page.wait_for_function(_IDLE_JS, arg=[settle * 1000, answered * 1000], polling=50, timeout=timeout * 1000)
    except Exception as e:  # noqa: BLE001 - Playwright's TimeoutError, said as the old message
        if type(e).__name__ != "TimeoutError":
            raise
        raise AssertionError(f"the script was still running after {timeout:.0f} s "
                             f"(state {script_state(page)!r})") from None


def open_page(page, base_url: str, url_path: str = "", query: str = "", timeout: float = 60.0) -> None:
    url = f"{base_url}/{url_path}" + (f"?{query}" if query else "")
    page.goto(url, wait_until="domcontentloaded")
    wait_idle(page, timeout=timeout)


def error_texts(page) -> list[str]:
    return page.locator('[data-testid="stAlertContentError"]').all_inner_texts()


def _went_wrong() -> tuple[str, ...]:
    """ui.guard's "Something went wrong" in every language the app speaks (its longest fixed part)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import ui

    out = []
    for code in ui.LANGS:
        text = ui.translations(code).gettext("Something went wrong in {what}: {error}")
        out.append(max(re.split(r"\{\w+\}", text), key=len).strip())
    return tuple(out)


_WENT_WRONG = _went_wrong()


def assert_clean(page, allow_input_errors: bool = False) -> None:
    """No exception box, no error box with a traceback or a 'Something went wrong' message.

    With ``allow_input_errors`` an error box that explains bad input (ui.guard's "Check the input")
    is allowed; without it, any error box fails.
    """
    exc = page.locator('[data-testid="stException"]')
    assert exc.count() == 0, "exception box on the page:\n" + "\n---\n".join(exc.all_inner_texts())
    errors = error_texts(page)
    bad = [e for e in errors if "Traceback" in e or any(w in e for w in _WENT_WRONG)]
    assert not bad, "error box from an unexpected exception:\n" + "\n---\n".join(bad)
    if not allow_input_errors:
        assert not errors, "error box on the page:\n" + "\n---\n".join(errors)
    body = page.locator("body").text_content() or ""
    assert "Traceback (most recent call last)" not in body, "a traceback reached the page"


def assert_title(page, info: PageInfo, timeout: float = 30.0) -> None:
    """The page's heading (and the browser tab) show the title the page file declares."""
    from playwright.sync_api import expect

    h1 = page.locator("h1").first
    h1.wait_for(state="visible", timeout=timeout * 1000)
    if info.title is not None:
        expect(h1).to_contain_text(info.title, timeout=timeout * 1000)
        expect(page).to_have_title(re.compile("^" + re.escape(info.title)), timeout=timeout * 1000)


def screenshot(page, name: str, full_page: bool = True, max_height: int = 8000, out: Path = SCREENSHOTS) -> Path:
    """PNG of the page. Streamlit scrolls inside its main container, so for the whole page the
    viewport is stretched to the content's height for the shot, then restored."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.png"
    size = page.viewport_size
    if full_page and size:
        height = page.evaluate(
            "() => Math.max(...['stMain', 'stAppViewContainer'].map(id => "
            "(document.querySelector(`[data-testid=\"${id}\"]`) || {scrollHeight: 0}).scrollHeight), "
            "document.body.scrollHeight)")
        page.set_viewport_size({"width": size["width"], "height": int(min(max(height, size["height"]), max_height))})
        wait_charts(page)  # the charts re-laid out for the new height
    try:
        page.screenshot(path=str(path))
    finally:
        if full_page and size:
            page.set_viewport_size(size)
    return path


_OVERFLOW_JS = """() => {
    const main = document.querySelector('[data-testid="stMainBlockContainer"]');
    if (!main) return [];
    const right = main.getBoundingClientRect().right - parseFloat(getComputedStyle(main).paddingRight);
    const out = [];
    for (const el of document.querySelectorAll(
            '[data-testid="stMain"] [data-testid="stVegaLiteChart"], [data-testid="stMain"] [data-testid="stImage"]')) {
        const r = el.getBoundingClientRect();
        if (r.width > 0 && r.right > right + 2) {
            const title = el.querySelector('.role-title-text, text.role-title-text');
            out.push(`${el.dataset.testid} "${title ? title.textContent : ''}" ends at x=${Math.round(r.right)}, `
                     + `the content column at x=${Math.round(right)}`);
        }
    }
    return out;
}"""


# Every visible chart drawn (an svg or canvas with a size), and the layout of the page's charts the
# same over ``frames`` animation frames in a row (a chart sizes itself to its column after its
# first draw, and again after a resize). Charts in a closed tab or expander never draw.
_CHARTS_STILL_JS = """frames => new Promise(done => {
    const layout = () => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
        .filter(c => c.checkVisibility())
        .map(c => {
            const g = c.querySelector('svg, canvas');
            if (!g) return null;
            const r = g.getBoundingClientRect();
            return r.width > 0 ? [r.left, r.top, r.width, r.height].map(Math.round).join(',') : null;
        });
    let last = null, still = 0;
    const tick = () => {
        const now = layout();
        const key = now.includes(null) ? null : now.join(';');
        still = key !== null && key === last ? still + 1 : 0;
        last = key;
        if (still >= frames) done(true); else requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
})"""


def wait_charts(page, timeout: float = 30.0, frames: int = 6) -> None:
    """Wait until every visible Vega-Lite chart on the page has drawn and the charts' layout has held
    for ``frames`` animation frames (measured, instead of a fixed pause for a last re-layout)."""
    page.wait_for_function(_CHARTS_STILL_JS, arg=frames, timeout=timeout * 1000)


def overflowing_charts(page) -> list[str]:
    """Charts and images wider than the page's content column (cut off at the window's edge)."""
    wait_charts(page)
    return page.evaluate(_OVERFLOW_JS)


_TEXTS_JS = """() => {
    // Every visible text node of the page's content and sidebar, minus what is never translated:
    // code, formulas (KaTeX), the language switch (it names both languages). Table cells are read
    // from the data grid's accessible table (the grid itself is drawn on a canvas).
    const skip = 'code, pre, .katex, .katex-display, script, style, [data-testid="stCode"], '
               + '.st-key-lang, [translate="no"], [data-testid="stDataFrame"]';
    const out = [];
    for (const root of document.querySelectorAll('[data-testid="stMain"], [data-testid="stSidebar"]')) {
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
            const el = n.parentElement;
            if (!el || el.closest(skip) || !el.checkVisibility()) continue;
            const t = n.textContent.trim();
            if (t) out.push(t);
        }
        for (const c of root.querySelectorAll('[data-testid="stDataFrame"] th, [data-testid="stDataFrame"] td')) {
            const t = c.textContent.trim();
            if (t) out.push(t);
        }
    }
    out.push(document.title);
    return out;
}"""


def visible_texts(page) -> list[str]:
    """The texts a reader sees on the page (and the tab's title), for the language checks."""
    return page.evaluate(_TEXTS_JS)


_GLYPHS_JS = """([family, chars]) => {
    // Draw each string in a canvas with the given CSS font family; return a fingerprint per string.
    // Missing glyphs all draw as the same box, so two different characters giving the same
    // fingerprint means the text is not readable.
    const c = document.createElement('canvas'); c.width = 64 * 4; c.height = 80;
    const g = c.getContext('2d');
    return chars.map(ch => {
        g.clearRect(0, 0, c.width, c.height); g.fillStyle = '#000';
        g.font = `48px ${family}`; g.textBaseline = 'alphabetic'; g.fillText(ch, 4, 60);
        const d = g.getImageData(0, 0, c.width, c.height).data;
        let h = 0; for (let i = 3; i < d.length; i += 4) h = (h * 31 + d[i]) >>> 0;
        return h;
    });
}"""


def glyph_fingerprints(page, family: str, chars: list[str]) -> list[int]:
    return page.evaluate(_GLYPHS_JS, [family, chars])


def chart_font_family(page) -> str | None:
    """The font family the first drawn chart's title uses (Streamlit's theme font)."""
    return page.evaluate("""() => {
        const t = document.querySelector('[data-testid="stVegaLiteChart"] svg text');
        return t ? (t.getAttribute('font-family') || getComputedStyle(t).fontFamily) : null; }""")


def chart_titles(page) -> list[str]:
    return page.evaluate("""() => [...document.querySelectorAll(
        '[data-testid="stVegaLiteChart"] svg text.role-title-text, [data-testid="stVegaLiteChart"] .role-title text')]
        .map(t => t.textContent)""")


# The page's address unchanged (and the script not running) for ``quiet`` ms, sampled in the page
# every 50 ms; the state lives in window.__gemmUrl, reset by each call.
_URL_STILL_JS = """quiet => {
    const w = window.__gemmUrl, now = performance.now();
    const state = (document.querySelector('[data-testid="stApp"]') || {getAttribute: () => null})
        .getAttribute('data-test-script-state');
    if (!w || w.href !== location.href || state !== 'notRunning') {
        window.__gemmUrl = {href: location.href, since: now};
        return false;
    }
    return now - w.since >= quiet;
}"""


def settled_url(page, timeout: float = 60.0, quiet: float = 0.5) -> str:
    """The page's address once the script is idle and the address has not changed for ``quiet`` seconds
    (a page may write the URL after its run: the stepper reports its step, a fallback reruns)."""
    wait_idle(page, timeout=timeout)
    page.evaluate("() => { window.__gemmUrl = null; }")
    try:
        page.wait_for_function(_URL_STILL_JS, arg=quiet * 1000, polling=50, timeout=timeout * 1000)
    except Exception as e:  # noqa: BLE001 - Playwright's TimeoutError, said as the old message
        if type(e).__name__ != "TimeoutError":
            raise
        raise AssertionError(f"the address was still changing after {timeout:.0f} s: {page.url}") from None
    return page.url


_VIEW_JS = """() => {
    // What a reader sees and can set: every keyed widget's state (Streamlit puts st-key-<key> on its
    // container), the step-through's drawn frame (inside its shadow root) and the page's visible text.
    const widgets = {};
    for (const el of document.querySelectorAll('[data-testid="stMain"] [class*="st-key-"], '
                                               + '[data-testid="stSidebar"] [class*="st-key-"]')) {
        const key = [...el.classList].find(c => c.startsWith('st-key-')).slice(7);
        const vals = [...el.querySelectorAll('input, textarea')]
            .map(i => (i.type === 'radio' || i.type === 'checkbox') ? i.checked : i.value);
        const sliders = [...el.querySelectorAll('[role="slider"]')].map(s => s.getAttribute('aria-valuenow'));
        const picked = [...el.querySelectorAll('[data-baseweb="select"]')].map(s => s.textContent);
        widgets[key] = JSON.stringify([vals, sliders, picked]);
    }
    const steppers = [...document.querySelectorAll('[data-testid="stBidiComponentIsolated"]')]
        .map(h => h.shadowRoot && h.shadowRoot.querySelector('.gst')).filter(Boolean)
        .map(r => ({step: r.dataset.step, pos: r.querySelector('.pos').textContent,
                    text: r.querySelector('.text').textContent,
                    cells: [...r.querySelectorAll('.cell')].map(c => c.className + ':' + c.textContent).join('|')}));
    const main = document.querySelector('[data-testid="stMain"]');
    const texts = [];
    const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const t = n.textContent.trim();
        const el = n.parentElement;
        if (t && el && !el.closest('[data-testid="stVegaLiteChart"]') && el.checkVisibility()) texts.push(t);
    }
    // a chart's text, in any order (Vega may draw the same axis's labels in another order)
    const charts = [...main.querySelectorAll('[data-testid="stVegaLiteChart"]')]
        .map(c => [...c.querySelectorAll('text')].map(t => t.textContent).sort().join('|'));
    return {widgets, steppers, texts, charts, title: document.title};
}"""


def view_snapshot(page, timeout: float = 60.0, quiet: float = 0.5) -> dict:
    """The view a link opened (see _VIEW_JS) once it stays the same for ``quiet`` seconds: the charts
    drawn, any step-through at its step, every widget's code loaded (Streamlit loads each kind of
    widget's script on first use and draws a skeleton until then)."""
    page.wait_for_function("""() => !document.querySelector('[data-testid="stSkeleton"]')
        && [...document.querySelectorAll('[data-testid="stBidiComponentIsolated"]')]
           .every(h => h.shadowRoot && h.shadowRoot.querySelector('.gst[data-step]'))""", timeout=timeout * 1000)
    wait_charts(page, timeout=timeout)
    deadline = time.monotonic() + timeout
    view, since = page.evaluate(_VIEW_JS), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = page.evaluate(_VIEW_JS)
        if now != view:
            view, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return view
    raise AssertionError(f"the view was still changing after {timeout:.0f} s")


def assert_same_view(again: dict, first: dict) -> None:
    """Two view_snapshot()s are the same view; otherwise say where they differ."""
    import difflib

    widgets = {k: (first["widgets"].get(k), again["widgets"].get(k))
               for k in set(first["widgets"]) | set(again["widgets"])
               if first["widgets"].get(k) != again["widgets"].get(k)}
    assert not widgets, f"widgets differ (first, again): {widgets}"
    assert again["steppers"] == first["steppers"], "the step-through shows another frame"
    diff = "\n".join(difflib.unified_diff(first["texts"], again["texts"], "first", "again", lineterm="", n=1))
    assert not diff, "the page's text differs:\n" + diff[:3000]
    assert again["charts"] == first["charts"], "a chart draws other text"
    assert again["title"] == first["title"]
