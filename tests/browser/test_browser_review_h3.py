"""The benchmark pages' results as a student on a CPU-only machine reads them, in Chromium at 1280 × 900, in English
and Chinese: a small non-default run on Precision, Tiling and Batching (its results, table, charts and words), then
the Roofline page with a results file holding a CPU's fp8 row (emulated: no roof of its own, and the page says so).

Checked after each run: no error, no label or button cut with "…", no chart wider than the page, and on the Chinese
page no English left (``gemm_i18n.english_words``, as tests/browser/test_browser_i18n.py checks the pages before
a run). Screenshots are kept under artifacts/screenshots/ for a reader to look at.
"""

from __future__ import annotations

import json
from urllib.parse import quote

import gemm_i18n
import pytest
from browser_helpers import (
    assert_clean,
    chart_titles,
    open_page,
    overflowing_charts,
    page_info,
    screenshot,
    visible_texts,
    wait_charts,
    wait_idle,
)
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
READS_ONLY = False  # runs benchmarks: a server of this module's own

ZH = {m.id: m.string for m in gemm_i18n.read("zh") if isinstance(m.id, str) and m.id}

# Streamlit cuts a label, a metric or a button's words that do not fit with an ellipsis (as test_browser_cut_labels)
CUT_JS = """() => {
    const out = [];
    const sel = ['[data-testid="stWidgetLabel"] [data-testid="stMarkdownContainer"]',
                 '[data-testid="stMetricValue"] > div',
                 '[data-testid="stBaseButton-secondary"] [data-testid="stMarkdownContainer"]',
                 '[data-testid="stBaseButton-primary"] [data-testid="stMarkdownContainer"]'];
    for (const el of document.querySelectorAll(sel.map(s => '[data-testid="stMain"] ' + s).join(', '))) {
        if (!el.checkVisibility() || getComputedStyle(el).overflow === 'visible') continue;
        if (el.scrollWidth > el.clientWidth + 1) out.push(`"${el.textContent.trim()}"`);
    }
    return out;
}"""

# (page file, the run's query, its button's words, a text of its results)
RUNS = {
    "precision": ("pages/6_Precision.py",
                  "pr_device=cpu&pr_set=Custom&pr_m=40&pr_n=24&pr_k=16&pr_time=0.05"
                  "&pr_dtypes=fp32&pr_dtypes=int8&pr_dtypes=fp8", "Run the benchmark", "Throughput per format"),
    "tiling": ("pages/7_Tiling.py", "tb_device=cpu&tb_size=64&tb_tiles_cpu=16&tb_tiles_cpu=32&tb_time=0.05",
               "Run the tiling benchmark", "Throughput by tile size (dashed: no tile sweep)"),
    "batching": ("pages/8_Batching.py", "ba_device=cpu&ba_shape=Prefill&ba_batches_cpu_prefill=1"
                 "&ba_batches_cpu_prefill=4&ba_time=0.05", "Run the batch sweep", "{metric} by batch size"),
}


def _names() -> list[str]:
    """Names shown as they are: this machine's devices and the catalogue's rows; a checkbox column's cells, which the
    grid draws as boxes (its accessible table says true / false)."""
    from gemmlib.core.hardware import CATALOGUE
    from gemmlib.core.machine import light_summary

    return [d["name"] for d in light_summary()] + list(CATALOGUE) + ["true", "false"]


def _tr(text: str, lang: str) -> str:
    return ZH.get(text, text) if lang == "zh" else text


def _review(page, lang: str, shot: str, which: str = "") -> None:
    wait_idle(page)
    wait_charts(page)
    assert_clean(page)
    cut = page.evaluate(CUT_JS)
    assert not cut, f"{shot}: cut at 1280 px: {cut}"
    wide = overflowing_charts(page)
    assert not wide, f"{shot}: charts wider than the page: {wide}"
    # Vega shortens a title or label that does not fit its chart with "…" (the Precision page's error chart, squeezed
    # into a narrow column: "max |error| / max |referenc…")
    texts = page.locator('[data-testid="stVegaLiteChart"] svg text').all_text_contents()
    shortened = [t for t in texts if t.endswith("…")]
    if which == "precision":  # the error chart's axis title, whole (it was cut to "max |error| / max |referer")
        assert _tr("max |error| / max |reference|", lang) in texts, texts
    assert not shortened, f"{shot}: chart texts cut: {shortened}"
    if lang == "zh":  # Streamlit's own file drop zone ("Upload", "200MB per file"): no API translates it
        own = " ".join(page.get_by_test_id("stFileUploader").all_inner_texts()).split()
        texts = [t for t in visible_texts(page) + chart_titles(page) if t not in own]
        left = sorted({w for t in texts for w in gemm_i18n.english_words(t, _names() + own)})
        assert not left, f"English left on the Chinese page after a run ({shot}): {left}"
    screenshot(page, f"review-h3-{shot}")


@pytest.mark.parametrize("lang", ["en", pytest.param("zh", marks=pytest.mark.cjk_font)])
@pytest.mark.parametrize("which", list(RUNS))
def test_a_runs_results_are_whole_and_in_the_readers_language(app_server, page, which, lang):
    file, query, button, chart = RUNS[which]
    page.set_viewport_size({"width": 1280, "height": 900})
    open_page(page, app_server.url, page_info(file).url_path, query=f"lang={lang}&{query}")
    page.get_by_role("button", name=_tr(button, lang), exact=True).click()
    expect(page.get_by_test_id("stAlertContentSuccess").first).to_be_visible(timeout=180_000)
    _review(page, lang, f"{which}-{lang}", which)
    assert _tr(chart, lang).format(metric="TFLOP/s") in chart_titles(page), chart_titles(page)


FP8_ROW = {"bench": "precision", "name": "fp8", "device": "cpu", "device_name": "Test CPU", "dtype": "fp8",
           "shape": {"m": 256, "n": 256, "k": 256}, "flops": 2 * 256**3, "bytes": 3 * 256 * 256, "median_s": 0.05}
FP32_ROW = {**FP8_ROW, "name": "fp32", "dtype": "fp32", "bytes": 12 * 256 * 256, "median_s": 0.002}


@pytest.mark.parametrize("lang", ["en", pytest.param("zh", marks=pytest.mark.cjk_font)])
def test_the_roofline_draws_no_fp8_roof_for_a_cpu_and_says_why(app_server, page, lang):
    page.set_viewport_size({"width": 1280, "height": 900})
    open_page(page, app_server.url, page_info("pages/9_Roofline.py").url_path,
              query=f"lang={lang}&rf_hw={quote('CPU (edit me)')}")
    page.get_by_test_id("stExpander").filter(has_text=_tr("Add results from a file", lang)).first.click()
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(files=[{
        "name": "cpu.json", "mimeType": "application/json",
        "buffer": json.dumps({"results": [FP8_ROW, FP32_ROW]}).encode()}])
    wait_idle(page)
    note = page.get_by_test_id("stCaptionContainer").filter(
        has_text="没有屋顶" if lang == "zh" else "fp8 has no roof")
    expect(note).to_have_count(1)
    legend = page.locator('[data-testid="stVegaLiteChart"] svg text').all_text_contents()
    emulated = _tr("{dtype} (emulated, no roof)", lang).format(dtype="fp8")
    assert emulated in legend, legend
    roofs = [t for t in legend if "fp8" in t and t != emulated]  # a roof's legend entry: "CPU … · fp8 (datasheet)"
    assert not roofs, f"an fp8 roof on the CPU row: {roofs}"
    _review(page, lang, f"roofline-cpu-fp8-{lang}")
