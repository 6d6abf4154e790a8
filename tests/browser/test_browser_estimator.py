"""The LLM Estimator in a real browser: widgets drive the numbers and the URL, deep links restore a
view on a freshly started server, and malformed config.json uploads get a clear message.

Expected numbers come from gemmlib itself (the page must show what the library computes for the
settings in the URL), never from figures typed into the test.
"""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, quote, urlparse

import pytest
from browser_helpers import PageInfo, assert_clean, assert_title, open_page, page_info, wait_idle
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
READS_ONLY = True  # no benchmark, nothing saved: shares the worker's server (conftest.app_server)

INFO: PageInfo = page_info("pages/4_LLM_Estimator.py")
if not INFO.exists:
    pytest.skip("pages/4_LLM_Estimator.py is not written yet", allow_module_level=True)


def _fmt_si(x: float) -> str:
    from gemmlib.core import format as fmt  # the page's own formatter

    return fmt.si(x)


def _expected_prefill(preset: str, gpu: str, gpus: int = 1, **workload) -> float:
    from gemmlib.core.hardware import CATALOGUE
    from gemmlib.llm.accounting import Workload, estimate
    from gemmlib.llm.presets import PRESETS

    # the whole job's exact count: the same on any number of GPUs (the page shows it for TP = gpus), under the
    # library's (and the CLI's) defaults, the engine convention, as the page's defaults are
    return estimate(PRESETS[preset], Workload(**workload), CATALOGUE[gpu]).prefill.flops


def _metric(page, label: str):
    return page.locator('[data-testid="stMetric"]').filter(has_text=label).first.locator(
        '[data-testid="stMetricValue"]')


def _query(page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def _sidebar(page):
    return page.locator('[data-testid="stSidebar"]')


def test_widgets_drive_numbers_and_url(app_server, page):
    from gemmlib.core.hardware import DEFAULT_GPU
    from gemmlib.llm.presets import DEFAULT_PRESET, PRESETS

    open_page(page, app_server.url, INFO.url_path)
    assert_title(page, INFO)
    assert_clean(page)
    # Every widget is bound to the URL; at the defaults the link holds nothing (Streamlit leaves a value
    # equal to its widget's default out of the URL).
    q = _query(page)
    assert not any(k.startswith("le_") for k in q), f"defaults written to the URL: {q}"
    prefill = _metric(page, "prefill FLOPs")
    seq = int(_sidebar(page).get_by_label("prompt", exact=True).input_value())
    new = int(_sidebar(page).get_by_label("new tokens", exact=True).input_value())
    expect(prefill).to_have_text(_fmt_si(_expected_prefill(DEFAULT_PRESET, DEFAULT_GPU, batch=1, seq_len=seq,
                                                           new_tokens=new)))

    # A number input: batch 1 -> 8. The prefill count and the URL follow.
    batch = _sidebar(page).get_by_label("batch", exact=True)
    batch.fill("8")
    batch.press("Enter")
    expect(page).to_have_url(re.compile(r"[?&]le_batch=8(&|$)"))
    expect(prefill).to_have_text(_fmt_si(_expected_prefill(DEFAULT_PRESET, DEFAULT_GPU, batch=8, seq_len=seq,
                                                           new_tokens=new)))

    # A select: the preset becomes qwen2.5-0.5b; the model line and the URL follow. (Not gpt2: its learned
    # position table has 1024 rows, fewer than the default prompt + new tokens, and the page refuses that.)
    _sidebar(page).get_by_role("combobox", name="Preset").click()  # opens the list
    page.get_by_role("option", name="qwen2.5-0.5b", exact=True).click()
    expect(page).to_have_url(re.compile(r"[?&]le_preset=qwen2\.5-0\.5b(&|$)"))
    expect(page.get_by_text(f"{PRESETS['qwen2.5-0.5b'].params:,} parameters").first).to_be_visible()
    expect(prefill).to_have_text(_fmt_si(_expected_prefill("qwen2.5-0.5b", DEFAULT_GPU, batch=8, seq_len=seq,
                                                           new_tokens=new)))

    # A toggle and a slider moved with the keyboard: a flat efficiency forced over the shape model, then
    # 0.70 (the default) -> 0.65. Time per token follows each.
    from gemmlib.core.flops import DEFAULT_EFFICIENCY

    per_token = _metric(page, "per output token")
    before = per_token.inner_text()
    _sidebar(page).get_by_text("a flat efficiency (override)", exact=True).click()
    expect(page).to_have_url(re.compile(r"[?&]le_flat=true(&|$)"))
    expect(per_token).not_to_have_text(before)
    wait_idle(page)
    before = per_token.inner_text()
    slider = _sidebar(page).get_by_role("slider")
    slider.first.focus()
    slider.first.press("ArrowLeft")
    lower = re.escape(f"{DEFAULT_EFFICIENCY - 0.05:.2f}".rstrip("0"))
    expect(page).to_have_url(re.compile(rf"[?&]le_eff={lower}(&|$)"))
    expect(per_token).not_to_have_text(before)
    wait_idle(page)
    assert_clean(page)


def test_deep_link_with_settings_on_a_fresh_server(fresh_server, page):
    """The first request a new server gets is a shared link: the page opens with those settings."""
    from gemmlib.llm.presets import PRESETS

    server = fresh_server()
    settings = {"le_preset": "qwen2.5-0.5b", "le_batch": "4", "le_seq": "512", "le_new": "64",
                "le_gpu": "A100 SXM 80GB", "le_gpus": "2", "le_eff": "0.5"}
    open_page(page, server.url, INFO.url_path, query="&".join(f"{k}={quote(v)}" for k, v in settings.items()),
              timeout=90)
    assert_title(page, INFO)
    assert_clean(page)
    q = _query(page)
    assert {k: q.get(k) for k in settings} == settings, f"the URL lost settings: {q}"
    expect(page.get_by_text(f"{PRESETS['qwen2.5-0.5b'].params:,} parameters").first).to_be_visible()
    sb = _sidebar(page)
    expect(sb.get_by_label("batch", exact=True)).to_have_value("4")
    expect(sb.get_by_label("prompt", exact=True)).to_have_value("512")
    expect(sb.get_by_label("GPUs", exact=True)).to_have_value("2")
    expect(sb.get_by_role("combobox", name="GPU", exact=True)).to_have_value("A100 SXM 80GB")
    expect(sb.get_by_role("combobox", name="Preset", exact=True)).to_have_value("qwen2.5-0.5b")
    expect(_metric(page, "prefill FLOPs")).to_have_text(_fmt_si(_expected_prefill(
        "qwen2.5-0.5b", "A100 SXM 80GB", gpus=2, batch=4, seq_len=512, new_tokens=64)))


GPT2 = {"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257, "n_positions": 1024}

BAD_UPLOADS = {
    "not-json": (b"{ this is not: json ", "not valid JSON"),
    "wrong-types": (json.dumps({**GPT2, "n_layer": "twelve"}).encode(), "n_layer"),
    "negative-size": (json.dumps({**GPT2, "n_embd": -768}).encode(), "n_embd"),
    "array": (b"[1, 2, 3]", "JSON object"),
    "binary": (bytes(range(256)) * 4, "UTF-8"),
    "too-large": (b'{"model_type": "gpt2", "pad": "' + b"x" * 1_200_000 + b'"}', "a few kB"),
}


def _upload(page, name: str, data: bytes) -> None:
    page.locator('.st-key-le_upload [data-testid="stFileUploaderDropzoneInput"]').set_input_files(
        files=[{"name": name, "mimeType": "application/json", "buffer": data}])


def test_malformed_config_uploads_get_clear_messages_then_a_good_one_works(app_server, page):
    """One session uploads each malformed config.json in turn (each replaces the last): every one
    gets an error box naming the problem and nothing crashes; then a valid one is read."""
    from gemmlib.llm.presets import PRESETS

    # a 512-token prompt: GPT-2's 1024 learned positions hold it and the default 256 new tokens
    open_page(page, app_server.url, INFO.url_path, query="le_src=config.json&le_seq=512")
    assert_clean(page)
    error = page.locator('[data-testid="stAlertContentError"]').first
    for case, (data, words) in BAD_UPLOADS.items():
        _upload(page, f"{case}.json", data)
        expect(error, f"upload {case!r}").to_contain_text(words)
        wait_idle(page)
        assert_clean(page, allow_input_errors=True)

    # Above server.maxUploadSize (.streamlit/config.toml) the browser refuses the file itself.
    _upload(page, "huge.json", b"{" + b" " * (3 * 1024 * 1024) + b"}")
    expect(_sidebar(page).get_by_text(re.compile(r"File must be .* or smaller"))).to_be_visible()
    wait_idle(page)
    assert_clean(page, allow_input_errors=True)

    _upload(page, "gpt2.json", json.dumps(GPT2).encode())
    expect(page.get_by_text(f"{PRESETS['gpt2'].params:,} parameters").first).to_be_visible()
    expect(_metric(page, "prefill FLOPs")).to_be_visible()
    wait_idle(page)
    assert_clean(page)


EXTREMES = {
    "maxima": {"le_src": "custom", "le_layers": 1000, "le_hidden": 65536, "le_heads": 1024, "le_kv": 1024,
               "le_hd": 4096, "le_ffn": 262144, "le_vocab": 1_000_000, "le_experts": 1024, "le_topk": 1024,
               "le_batch": 4096, "le_seq": 1_048_576, "le_new": 1_048_576, "le_gpus": 4096, "le_eff": 0.05,
               "le_causal": "dense", "le_lmh": "all", "le_macs": "true", "le_cmp": "true"},
    "minima": {"le_src": "custom", "le_layers": 1, "le_hidden": 1, "le_heads": 1, "le_kv": 0, "le_hd": 0,
               "le_ffn": 1, "le_vocab": 1, "le_experts": 0, "le_topk": 0, "le_batch": 1, "le_seq": 1, "le_new": 0,
               "le_gpus": 1, "le_eff": 0.05},
}


def _open_extreme(app_server, page, name: str) -> None:
    settings = EXTREMES[name]
    open_page(page, app_server.url, INFO.url_path, query="&".join(f"{k}={v}" for k, v in settings.items()))
    assert_title(page, INFO)
    assert_clean(page, allow_input_errors=True)
    q = _query(page)
    # the link was applied: its settings are in the widgets (a value equal to its widget's default
    # is left out of the URL, the others stay there)
    assert q.get("le_seq") == str(settings["le_seq"]), f"{name}: the link's settings were not applied: {q}"
    expect(_sidebar(page).get_by_label("batch", exact=True)).to_have_value(str(settings["le_batch"]))
    if not page.locator('[data-testid="stAlertContentError"]').count():
        expect(_metric(page, "prefill MACs" if name == "maxima" else "prefill FLOPs")).to_be_visible()


def test_custom_model_with_every_input_at_its_minimum(app_server, page):
    """Every custom-model and workload input at its minimum (through a link): numbers or a clear
    message, never an exception."""
    _open_extreme(app_server, page, "minima")


def test_custom_model_with_every_input_at_its_maximum(app_server, page):
    """Every custom-model and workload input at its maximum: numbers or a clear message (counts past
    2**63 once crashed the charts and tables: Arrow has no bigger integer)."""
    _open_extreme(app_server, page, "maxima")


_BARS_JS = """(title) => {
    // The per-GPU memory chart whose title starts with `title`: its drawn bars' heights (CSS pixels), the
    // chart's own rules (the capacity; not the axes'), and the legend's labels drawn wholly inside the chart.
    const chart = [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')].filter(c => c.checkVisibility())
        .find(c => [...c.querySelectorAll('svg text')].some(t => t.textContent.startsWith(title)));
    if (!chart) return null;
    const svg = chart.querySelector('svg'), box = svg.getBoundingClientRect();
    const inside = r => r.width > 0 && r.left >= box.left - 1 && r.right <= box.right + 1 && r.top >= box.top - 1
        && r.bottom <= box.bottom + 1;
    return {
        bars: [...svg.querySelectorAll('g.mark-rect.role-mark path')].map(p => p.getBoundingClientRect().height),
        rules: svg.querySelectorAll('g.mark-rule.role-mark line, g.mark-rule.role-mark path').length,
        legend: [...svg.querySelectorAll('g.role-legend text')].filter(t => inside(t.getBoundingClientRect()))
            .map(t => t.textContent),
    };
}"""


@pytest.mark.parametrize("query, title, legend", [
    ("le_preset=llama-3-8b&le_gpus=8&le_tab=Scale-out", "Memory per GPU: fits",
     ["weights", "KV cache", "activations", "workspace"]),
    ("le_preset=llama-3-8b&le_gpus=8&le_train=true&le_tab=Training", "Memory per GPU in training",
     ["weights", "gradients", "optimizer state", "activations", "workspace"]),
], ids=["scale-out", "training"])
def test_the_per_gpu_memory_bar_is_drawn_tall_with_its_legend_and_capacity(app_server, page, query, title, legend):
    """The per-GPU memory chart (Scale-out and Training tabs) was about 1 px high with its legend cut after
    "gradients" and no capacity line: measured in Chromium, each drawn bar is the chart's bar height, every part
    the bar holds is in the legend (training holds no KV cache, inference no gradients) and the GPU's capacity is a
    rule."""
    from browser_helpers import wait_charts

    from gemmlib.charts.scaleout import BAR_PX

    open_page(page, app_server.url, INFO.url_path, query=query)
    assert_clean(page)
    wait_charts(page)
    page.wait_for_function(f"() => ({_BARS_JS})({json.dumps(title)}) !== null", timeout=90_000)
    got = page.evaluate(_BARS_JS, title)
    print(f"memory bar heights ({title}): {got['bars']} px")
    assert got["bars"] and min(got["bars"]) >= BAR_PX - 2, got
    assert got["rules"] >= 1, got
    absent = {"KV cache", "gradients"} - set(legend)  # a part the bar does not hold
    assert [t for t in got["legend"] if t in legend] == legend and not absent & set(got["legend"]), got["legend"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_click_on_an_op_opens_it_on_the_roofline(app_server, page, lang):
    """LLM-Viewer's gesture: a click on a bar of the FLOPs-by-op chart (prefill's q_proj, the first bar) opens
    the Roofline tab (also in the URL) with that op named under the chart."""
    open_page(page, app_server.url, "LLM_Estimator", query=f"lang={lang}")
    # a bar's role is read in the page's language (gemmlib.charts.aria: "条形" in Chinese)
    bar = page.locator('[data-testid="stVegaLiteChart"] path[aria-roledescription="bar"], '
                       '[data-testid="stVegaLiteChart"] path[aria-roledescription="条形"]').first
    expect(bar).to_have_attribute("aria-label", re.compile(r": q_proj;"))
    bar.click()
    wait_idle(page)
    expect(page).to_have_url(re.compile(r"[?&]le_tab=Roofline(&|$)"))
    expect(page.locator('[role="tab"][aria-selected="true"]')).to_have_text(re.compile("Roofline|屋顶线模型"))
    said = page.locator('[data-testid="stMarkdownContainer"] strong', has_text="q_proj").first
    expect(said).to_be_visible()
    assert re.match(r"q_proj\s*[(（]", said.locator("xpath=..").inner_text()), said.locator("xpath=..").inner_text()
    assert_clean(page)


@pytest.mark.own_context  # downloads (see the page fixture)
def test_the_json_download_is_the_clis_estimate(app_server, page):
    """The Download tab's "Everything as JSON" is made when it is pressed (not on every rerun) and holds what
    `python -m gemmlib estimate --json` prints for the same settings."""
    import subprocess
    import sys
    from pathlib import Path

    open_page(page, app_server.url, INFO.url_path, query="le_preset=llama-3-8b&le_seq=512&le_new=4&le_tab=Download")
    assert_clean(page)
    with page.expect_download() as dl:
        page.get_by_role("button", name="Everything as JSON").click()
    got = json.loads(Path(dl.value.path()).read_text())
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-m", "gemmlib", "estimate", "--preset", "llama-3-8b", "--seq-len", "512",
                          "--new-tokens", "4", "--json"], capture_output=True, text=True, cwd=root, check=True).stdout
    assert got == json.loads(out)
    assert dl.value.suggested_filename.endswith(".json")
