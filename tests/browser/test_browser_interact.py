"""Interacting with pages in a real browser: the animation, widgets and the URL, a live benchmark."""

from __future__ import annotations

import re
import time

import pytest
from browser_helpers import assert_clean, open_page, page_info, wait_idle

pytestmark = pytest.mark.browser

STEP_RE = re.compile(r"Step (\d+) of (\d+)")


def _step(page) -> tuple[int, int]:
    text = page.get_by_text(STEP_RE).first.inner_text()
    m = STEP_RE.search(text)
    assert m, f"no step counter in {text!r}"
    return int(m.group(1)), int(m.group(2))


def _watch_steps(page, seconds: float) -> list[int]:
    seen = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        seen.append(_step(page)[0])
        time.sleep(0.1)
    return seen


def test_accumulate_play_advances_and_pause_stops(app_server, page):
    info = page_info("pages/1_Accumulate.py")
    if not info.exists:
        pytest.skip("pages/1_Accumulate.py is not written yet")
    # 4×4×4 random matrices: 64 steps, more than the animation can play in the few seconds we watch.
    open_page(page, app_server.url, info.url_path, query="acc_src=random&acc_m=4&acc_n=4&acc_k=4")
    assert_clean(page)
    first, total = _step(page)
    assert total == 4 * 4 * 4 + 1, f"64 multiply-adds and the α/β epilogue are 65 steps, the page says {total}"
    idle = _watch_steps(page, 1.0)
    assert set(idle) == {first}, f"the step moved without play: {idle}"

    expr_before = page.get_by_text(STEP_RE).first.inner_text()
    page.get_by_role("button", name=re.compile("Play")).click()
    seen = _watch_steps(page, 2.5)
    expr_after = page.get_by_text(STEP_RE).first.inner_text()
    assert expr_after != expr_before, f"the expression did not change: {expr_before!r}"
    assert seen == sorted(seen), f"steps went backwards while playing: {seen}"
    assert seen[-1] - first >= 3, f"the animation did not advance in 2.5 s: {seen}"

    page.get_by_role("button", name=re.compile("Pause")).click()
    page.get_by_role("button", name=re.compile("Play")).wait_for()
    wait_idle(page)
    stopped = _step(page)[0]
    later = _watch_steps(page, 1.5)
    assert set(later) == {stopped}, f"still advancing after pause: {later}"
    assert stopped < total
    assert_clean(page)
