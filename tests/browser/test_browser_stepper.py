"""The step-through (ui.stepper) in a real browser: every step drawn, keys, pause, URL, sizes.

The stepper plays in the browser; Python hears the step only when it stops. These checks sample the
component's DOM inside the page (every 20 ms) so that what is measured is what a person sees.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from browser_helpers import assert_clean, open_page, page_info, wait_idle
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

ACC = page_info("pages/1_Accumulate.py")
TILING = page_info("pages/7_Tiling.py")
ROOT_JS = "document.querySelector('[data-testid=stBidiComponentIsolated]').shadowRoot.querySelector('.gst')"

# Play the whole trace; sample data-step every 20 ms until the player stops by itself.
DRAW_RATIO_JS = """() => new Promise(done => {
    const root = __ROOT__;
    const seen = new Set(), drawn = new Set(), t0 = performance.now(); let samples = 0;
    // every redraw as well (a sample 20 ms apart can miss a step shown for 33 ms on a busy machine)
    const mo = new MutationObserver(() => drawn.add(root.dataset.step));
    mo.observe(root, {attributes: true, attributeFilter: ['data-step']});
    root.querySelector('.play').click();
    const iv = setInterval(() => {
        samples++; seen.add(root.dataset.step);
        if (root.dataset.playing === '0') {
            clearInterval(iv); mo.disconnect(); drawn.add('0');
            done({distinct: seen.size, drawn: drawn.size, samples, ms: performance.now() - t0,
                  final: Number(root.dataset.step)});
        }
    }, 20);
})""".replace("__ROOT__", ROOT_JS)


def _dom_step(page) -> int:
    root = page.locator(".gst[data-step]").first
    root.wait_for()  # the component's script may start after the page's run has finished
    return int(root.get_attribute("data-step"))


def _steps(page) -> int:
    return int(page.locator(".gst .scrub").first.get_attribute("max")) + 1


def _query(page) -> dict[str, list[str]]:
    return parse_qs(urlparse(page.url).query)


def _draw_ratio(page, speed: int) -> dict:
    total = _steps(page)
    res = page.evaluate(DRAW_RATIO_JS)
    res.update(steps=total, ratio=res["distinct"] / total, drawn_ratio=res["drawn"] / total, speed=speed)
    print(f"draw ratio at speed {speed}: {res['distinct']}/{total} = {res['ratio']:.3f} sampled every 20 ms "
          f"({res['samples']} samples in {res['ms'] / 1000:.2f} s); {res['drawn']}/{total} redraws observed")
    return res


def test_at_speed_10_nine_in_ten_steps_are_drawn_and_python_hears_the_end(app_server, page):
    open_page(page, app_server.url, ACC.url_path, query="acc_src=random&acc_m=4&acc_n=4&acc_k=4&acc_speed=10")
    assert_clean(page)
    res = _draw_ratio(page, 10)
    assert res["steps"] == 65 and res["final"] == 64
    assert res["ratio"] >= 0.9, res
    assert 5.0 <= res["ms"] / 1000 <= 9.0, res  # 64 steps at 10 per second: the pace is kept
    wait_idle(page)
    expect(page).to_have_url(re.compile(r"[?&]acc_pos=64(&|$)"))  # told once, at the end


def test_at_speed_30_every_step_is_drawn(app_server, page):
    open_page(page, app_server.url, TILING.url_path, query="ti_m=12&ti_n=12&ti_k=12&ti_t=2&ti_speed=30")
    assert_clean(page)
    res = _draw_ratio(page, 30)
    assert res["steps"] == 6 * 6 * 6 + 1
    assert res["drawn_ratio"] >= 0.95, res  # the player drew (nearly) every step
    assert res["ratio"] >= 0.8, res  # and a 20-ms sampler saw most of them (each lasts 33 ms)


def test_arrow_right_steps_once_and_the_url_follows(app_server, page):
    open_page(page, app_server.url, ACC.url_path)
    page.locator(".gst .grids").first.click()  # the focus: keys drive the stepper only from here
    for want in (1, 2, 3):
        page.keyboard.press("ArrowRight")
        assert _dom_step(page) == want
        expect(page).to_have_url(re.compile(rf"[?&]acc_pos={want}(&|$)"))
        wait_idle(page)
        assert _dom_step(page) == want  # the rerun the step causes does not move it
    expect(page.locator(".gst .text").first).to_contain_text("D[0,1] = 1×8 = 8")
    page.keyboard.press("PageUp")
    assert _dom_step(page) == 2
    expect(page.locator(".gst .text").first).to_have_text("D[0,0] = 1×7 + 2×9 + 3×11 = 58")
    page.keyboard.press("End")
    assert _dom_step(page) == 12
    page.keyboard.press("Home")
    assert _dom_step(page) == 0
    wait_idle(page)
    assert "acc_pos" not in _query(page)  # step 0 is the default: left out of the URL
    assert_clean(page)


def test_keys_typed_in_a_widget_do_not_drive_the_stepper(app_server, page):
    open_page(page, app_server.url, ACC.url_path, query="acc_src=random")
    box = page.get_by_label("seed", exact=True)
    box.click()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("End")
    assert _dom_step(page) == 0


def test_pause_stops_on_the_frame_shown_and_python_hears_it(app_server, page):
    open_page(page, app_server.url, ACC.url_path, query="acc_src=random&acc_m=4&acc_n=4&acc_k=4&acc_speed=10")
    page.locator(".gst .play").first.click()
    page.wait_for_timeout(1200)
    res = page.evaluate("""() => new Promise(done => {
        const root = __ROOT__;
        root.querySelector('.play').click();
        const at = root.dataset.step;
        setTimeout(() => done({at: Number(at), later: Number(root.dataset.step), text: root.querySelector('.pos').textContent}), 400);
    })""".replace("__ROOT__", ROOT_JS))
    assert res["at"] == res["later"] and 3 <= res["at"] < 64, res
    assert res["text"] == f"Step {res['at'] + 1} of 65"
    expect(page).to_have_url(re.compile(rf"[?&]acc_pos={res['at']}(&|$)"))
    wait_idle(page)
    assert _dom_step(page) == res["at"]


def test_a_link_opens_at_its_step(fresh_server, page):
    server = fresh_server()
    open_page(page, server.url, ACC.url_path, query="acc_pos=5", timeout=90)
    assert _dom_step(page) == 5
    expect(page.locator(".gst .pos").first).to_have_text("Step 6 of 13")
    open_page(page, server.url, ACC.url_path, query="acc_pos=junk")
    assert _dom_step(page) == 0
    assert_clean(page)


def test_c_is_drawn_when_beta_is_not_zero(app_server, page):
    open_page(page, app_server.url, ACC.url_path, query="acc_beta=1")
    expect(page.locator(".gst .mat.gc")).to_have_count(1)
    page.locator(".gst .last").first.click()
    expect(page.locator(".gst .gc .cell.rdc")).to_have_count(4)  # the epilogue reads all of C
    open_page(page, app_server.url, ACC.url_path)
    expect(page.locator(".gst .mat.gc")).to_have_count(0)


SIZES_JS = """() => {
    const root = __ROOT__;
    const cells = [...root.querySelectorAll('.cell')].map(c => c.getBoundingClientRect());
    const texts = [...root.querySelectorAll('.pos,.text,.loads,.cap,.cell,.kind,button')]
        .filter(e => e.checkVisibility() && e.textContent.trim())
        .map(e => parseFloat(getComputedStyle(e).fontSize));
    return {minCell: Math.min(...cells.map(r => Math.min(r.width, r.height))),
            minFont: Math.min(...texts), rootScroll: root.scrollWidth, rootClient: root.clientWidth,
            docScroll: document.documentElement.scrollWidth, viewport: window.innerWidth,
            scrolled: [...root.querySelectorAll('.mat')].filter(m => m.scrollWidth > m.clientWidth + 1).length};
}""".replace("__ROOT__", ROOT_JS)


@pytest.mark.parametrize("query", ["acc_present=true", "acc_present=true&acc_beta=1",
                                   "acc_present=true&acc_src=random&acc_m=4&acc_n=4&acc_k=4"])
def test_presentation_mode_is_readable_at_1280_by_720(app_server, page, query):
    page.set_viewport_size({"width": 1280, "height": 720})
    open_page(page, app_server.url, ACC.url_path, query=query)
    page.wait_for_timeout(300)
    m = page.evaluate(SIZES_JS)
    assert m["minCell"] >= 60 and m["minFont"] >= 24, m
    assert m["rootScroll"] <= m["rootClient"] and m["scrolled"] == 0, m


@pytest.mark.parametrize("file, query", [
    ("pages/1_Accumulate.py", ""), ("pages/1_Accumulate.py", "acc_beta=1"),
    ("pages/1_Accumulate.py", "acc_src=random&acc_m=12&acc_n=12&acc_k=12"),
    ("pages/1_Accumulate.py", "acc_present=true&acc_src=random&acc_m=4&acc_n=4&acc_k=4"),
    ("pages/7_Tiling.py", ""),
])
def test_at_phone_width_nothing_is_cut_off(app_server, page, file, query):
    page.set_viewport_size({"width": 390, "height": 844})
    open_page(page, app_server.url, page_info(file).url_path, query=query)
    page.wait_for_timeout(300)
    m = page.evaluate(SIZES_JS)
    assert m["docScroll"] <= m["viewport"], m
    assert m["rootScroll"] <= m["rootClient"] and m["scrolled"] == 0, m
    assert_clean(page)
