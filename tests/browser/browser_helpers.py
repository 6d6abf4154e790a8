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
        full_env = {**os.environ, "PYTHONUNBUFFERED": "1", "GEMM_CACHE_DIR": self._cache_dir, **(env or {})}
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


def wait_idle(page, timeout: float = 60.0, settle: float = 0.6) -> None:
    """Wait until the script has finished running and stayed finished for ``settle`` seconds."""
    deadline = time.monotonic() + timeout
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout * 1000)
    idle_since = None
    while time.monotonic() < deadline:
        state = script_state(page)
        now = time.monotonic()
        if state == "notRunning":
            idle_since = idle_since or now
            if now - idle_since >= settle:
                return
        else:
            idle_since = None
        time.sleep(0.1)
    raise AssertionError(f"the script was still running after {timeout:.0f} s (state {script_state(page)!r})")


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
        page.wait_for_timeout(400)  # let charts re-layout
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


def wait_charts(page, timeout: float = 30.0) -> None:
    """Wait until every visible Vega-Lite chart on the page has drawn (an svg or canvas with a size)."""
    page.wait_for_function(
        """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
                 .filter(c => c.checkVisibility())  // charts in a closed tab or expander never draw
                 .every(c => {
               const g = c.querySelector('svg, canvas');
               return g && g.getBoundingClientRect().width > 0;
           })""", timeout=timeout * 1000)
    page.wait_for_timeout(300)  # a last re-layout after the charts sized themselves


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
