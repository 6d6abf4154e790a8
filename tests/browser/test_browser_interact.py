"""Interacting with pages in a real browser: the animation, widgets and the URL, a live benchmark."""

from __future__ import annotations

import csv
import io
import json
import re
import time
from pathlib import Path

import pytest
from browser_helpers import assert_clean, open_page, page_info, wait_idle
from playwright.sync_api import expect

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


def _play_advances_and_pause_stops(page, expected_total: int) -> None:
    """The shared stepper (ui.stepper): still when idle, only forward while playing, still after pause."""
    assert_clean(page)
    first, total = _step(page)
    assert total == expected_total, f"expected {expected_total} steps, the page says {total}"
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


def test_accumulate_play_advances_and_pause_stops(app_server, page):
    info = page_info("pages/1_Accumulate.py")
    if not info.exists:
        pytest.skip("pages/1_Accumulate.py is not written yet")
    # 4×4×4 random matrices: 64 multiply-adds and the α/β epilogue, 65 steps, more than the animation
    # can play in the few seconds we watch.
    open_page(page, app_server.url, info.url_path, query="acc_src=random&acc_m=4&acc_n=4&acc_k=4")
    _play_advances_and_pause_stops(page, 4 * 4 * 4 + 1)


def test_tiling_play_advances_and_pause_stops(app_server, page):
    info = page_info("pages/7_Tiling.py")
    if not info.exists:
        pytest.skip("pages/7_Tiling.py is not written yet")
    # 12×12×12 in 2×2×2 tiles: 6·6·6 tile steps and the epilogue; at the default 3 steps per second the
    # few seconds we watch cannot reach the end.
    open_page(page, app_server.url, info.url_path, query="ti_m=12&ti_n=12&ti_k=12&ti_t=2")
    _play_advances_and_pause_stops(page, 6 * 6 * 6 + 1)


@pytest.mark.own_context  # downloads (see the page fixture)
def test_precision_benchmark_from_the_ui_in_classroom_mode(fresh_server, browser, page):
    """A small CPU benchmark run from the page shows its table; the server's classroom caps are shown;
    a second browser session that asks for a run meanwhile is told it is queued, then gets its table."""
    info = page_info("pages/6_Precision.py")
    if not info.exists:
        pytest.skip("pages/6_Precision.py is not written yet")
    server = fresh_server(env={"GEMM_CLASSROOM": "1"})
    query = "pr_device=cpu&pr_set=Custom&pr_m=48&pr_n=40&pr_k=56&pr_quant=true"
    open_page(page, server.url, info.url_path, query=query + "&pr_time=0.5")
    assert_clean(page)
    expect(page.get_by_text("classroom mode")).to_be_visible()
    expect(page.get_by_text(re.compile(r"dimensions ≤ 2,048"))).to_be_visible()

    other_ctx = browser.new_context(viewport=page.viewport_size)
    try:
        other = other_ctx.new_page()
        open_page(other, server.url, info.url_path, query=query + "&pr_time=0.05")
        page.get_by_role("button", name="Run the benchmark").click()
        expect(page.get_by_text(re.compile("Running on cpu"))).to_be_visible(timeout=60_000)
        other.get_by_role("button", name="Run the benchmark").click()
        expect(other.get_by_text(re.compile(r"Queued: you are number 1 in line"))).to_be_visible()

        for pg in (page, other):
            expect(pg.get_by_role("heading", name="Results")).to_be_visible(timeout=120_000)
            wait_idle(pg, timeout=120)
            assert_clean(pg)
            expect(pg.locator('[data-testid="stDataFrame"]').first).to_be_visible()
        _check_precision_csv(other)
    finally:
        other_ctx.close()
    _check_precision_csv(page)


def _check_precision_csv(page) -> None:
    """The table's data, as the page's CSV download gives it: one row per format, the shape asked for."""
    with page.expect_download() as dl:
        page.get_by_role("button", name="Download CSV").click()
    rows = list(csv.DictReader(io.StringIO(Path(dl.value.path()).read_text())))
    dtypes = {r["dtype"] for r in rows}
    assert {"fp32", "int8"} <= dtypes, f"formats in the table: {sorted(dtypes)}"
    fp32 = next(r for r in rows if r["dtype"] == "fp32")
    assert fp32["supported"].lower() == "true"
    assert float(fp32["median_s"]) > 0
    shapes = {(r["shape.m"], r["shape.n"], r["shape.k"]) for r in rows}
    assert shapes == {("48", "40", "56")}, f"shapes in the table: {shapes}"


ROOFLINE_ROW = {"bench": "precision", "name": "fp32", "device": "cpu", "device_name": "test cpu", "dtype": "fp32",
                "shape": {"m": 64, "n": 64, "k": 64}, "flops": 524288.0, "bytes": 49152.0, "median_s": 1e-5,
                "supported": True}


def _roofline_uploads(app_server, page, bad: dict[str, bytes]) -> None:
    info = page_info("pages/9_Roofline.py")
    if not info.exists:
        pytest.skip("pages/9_Roofline.py is not written yet")
    open_page(page, app_server.url, info.url_path)
    uploader = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
    for case, data in bad.items():
        uploader.set_input_files(files=[{"name": f"{case}.json", "mimeType": "application/json", "buffer": data}])
        wait_idle(page)
        try:
            assert_clean(page, allow_input_errors=True)
        except AssertionError as e:
            raise AssertionError(f"upload {case!r}: {e}") from None
    uploader.set_input_files(files=[{"name": "good.json", "mimeType": "application/json",
                                     "buffer": json.dumps({"results": [ROOFLINE_ROW]}).encode()}])
    expect(page.get_by_text("1 row read from good.json")).to_be_visible()
    wait_idle(page)
    assert_clean(page)


def test_roofline_results_upload_rejects_bad_files_clearly(app_server, page):
    """Bad results files on the Roofline page: an error box that says what is wrong, or the rows
    quietly left out, but never an exception; then a good file adds its point."""
    row = ROOFLINE_ROW
    _roofline_uploads(app_server, page, {
        "not-json": b"{ results: [ nope",
        "scalar": b"42",
        "not-rows": json.dumps({"results": [1, 2, 3]}).encode(),
        "text-numbers": json.dumps([{**row, "flops": "many"}]).encode(),
        "negative-bytes": json.dumps([{**row, "bytes": -1.0}, row]).encode(),
        "mixed-types": json.dumps([{**row, "bench": 5, "dtype": {}}, row]).encode(),
        "binary": bytes(range(256)),
    })
