"""Regenerate the README's screenshots in docs/screenshots/ from the running app.

    python tests/browser/make_screenshots.py            # starts its own server on a free port

Each shot is one browser window (1280×800) of a page in a state worth showing, saved as a
palette PNG so that the committed files stay small. Needs Debian's /usr/bin/chromium (and, for the
page icons, an emoji font: apt-get install fonts-noto-color-emoji).
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from browser_helpers import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    ROOT,
    StreamlitServer,
    assert_clean,
    open_page,
)

OUT = ROOT / "docs" / "screenshots"
WINDOW = {"width": 1280, "height": 800}


def _save(page, name: str) -> Path:
    from PIL import Image

    img = Image.open(io.BytesIO(page.screenshot())).convert("RGB")
    img = img.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}.png"
    img.save(path, optimize=True)
    print(f"{path.relative_to(ROOT)}: {path.stat().st_size / 1024:.0f} KiB")
    return path


_SCROLL_JS = """(el, off) => {
    let box = el.parentElement;  // the nearest ancestor that scrolls (Streamlit's main pane)
    while (box && !(box.scrollHeight > box.clientHeight && getComputedStyle(box).overflowY !== 'visible')) {
        box = box.parentElement;
    }
    box = box || document.scrollingElement;
    box.scrollTop += el.getBoundingClientRect().top - box.getBoundingClientRect().top - off;
}"""


def _scroll_top(page, locator, offset: int = 20) -> None:
    """Scroll the main pane so that ``locator`` sits ``offset`` px below its top (Streamlit's header
    covers the first ~60 px)."""
    locator.evaluate(_SCROLL_JS, offset)
    page.mouse.move(2, 2)  # no hover toolbars in the shot
    page.wait_for_timeout(600)


def main() -> int:
    from playwright.sync_api import sync_playwright

    server = StreamlitServer("screenshots")
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            page = browser.new_context(viewport=WINDOW, device_scale_factor=1).new_page()

            open_page(page, server.url)
            assert_clean(page)
            page.mouse.move(2, 2)
            _save(page, "home")

            # Accumulate: the article's example, a few steps in (D[0,1] being built), by its link.
            open_page(page, server.url, "Accumulate", query="acc_pos=4")
            page.locator(".gst[data-step='4']").wait_for()
            _scroll_top(page, page.get_by_text("Loop order", exact=True).first, offset=90)
            assert_clean(page)
            _save(page, "accumulate")

            open_page(page, server.url, "FLOPs")
            _scroll_top(page, page.get_by_text("M from", exact=True).first, offset=110)
            assert_clean(page)
            _save(page, "flops")

            open_page(page, server.url, "LLM_Estimator")
            assert_clean(page)
            page.mouse.move(2, 2)
            _save(page, "estimator")

            browser.close()
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
