"""The benchmark pages (Precision, Tiling, Batching, Roofline) in Chinese (``?lang=zh``) through
AppTest, each with a small real CPU benchmark where the page runs one: no exception, no English
left (``gemm_i18n.english_words`` over every text a reader can see or hover, ``i18n_texts.shown_texts``),
and the figures the same as on the English page. The same check finds the English of each page
in English, so it is not vacuous. Each distinct benchmark job runs once for real in this module;
asked again, it is replayed (``_each_job_measured_once``). Chromium runs the same pages in tests/browser/test_browser_i18n.py.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import gemm_i18n
import pytest
from i18n_texts import shown_texts
from streamlit.testing.v1 import AppTest

from gemmlib.core import ceilings
from gemmlib.core.results import clear_recorded

ROOT = Path(__file__).resolve().parents[2]
PAGES = {"pr": "pages/6_Precision.py", "ti": "pages/7_Tiling.py", "ba": "pages/8_Batching.py",
         "rf": "pages/9_Roofline.py"}
ZH = {m.id: m.string for m in gemm_i18n.read("zh") if isinstance(m.id, str) and m.id}  # the .po itself
ZH_N = {m.id[0]: m.string[0] for m in gemm_i18n.read("zh") if isinstance(m.id, tuple)}  # plurals: Chinese has one form


_RUNS: dict[str, Any] = {}  # this module's benchmark runs: each distinct job measured once


@pytest.fixture(autouse=True)
def _each_job_measured_once(monkeypatch):
    """The first run of a job is real (a worker process, as the English pages' tests run it); the
    same job asked again in this module (the English twin, the Roofline's points, the figures in both
    languages) gets a copy of that outcome, still admitted by the caps first. The pages' words are
    what these tests check, and a second real run would show the same words."""
    from gemmlib.measure import plan, runner, safety

    real = runner.run

    def run(spec, config, lim=None, **kw):
        key = (spec.name, repr(config))
        if key not in _RUNS:
            _RUNS[key] = real(spec, config, lim, **kw)
        else:
            plan.admit(spec, config, lim or safety.limits())
        return copy.deepcopy(_RUNS[key])

    monkeypatch.setattr(runner, "run", run)


@pytest.fixture(autouse=True)
def _private(monkeypatch, tmp_path):
    for k in ("GEMM_MAX_DIM", "GEMM_MAX_BYTES", "GEMM_TIME_LIMIT_S", "GEMM_CLASSROOM", "GEMM_MAX_CPU_GFLOP"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path / "cache"))  # no ceilings or calibrations of other tests
    ceilings.clear_ceilings()
    clear_recorded()
    yield
    ceilings.clear_ceilings()
    clear_recorded()


def _names() -> list[str]:
    """Names shown as they are: this machine's devices, the GPU catalogue, the model presets."""
    import ui
    from gemmlib.core.hardware import CATALOGUE
    from gemmlib.core.machine import light_summary
    from gemmlib.llm.presets import preset_names

    # ui.cuda_available()'s reason is gemmlib.measure.harness's text, translated there (issue 16, i16d's
    # part); until that lands, this machine's reason for having no GPU is allowed as it is
    reason = ui.cuda_available()[1]
    return [d["name"] for d in light_summary()] + list(CATALOGUE) + preset_names() + ([reason] if reason else [])


def _english_left(texts: list[str]) -> dict[str, str]:
    left: dict[str, str] = {}
    names = _names()
    for t in texts:
        for w in gemm_i18n.english_words(t, names):
            left.setdefault(w, t[:160])
    return left


# the runs' option widgets (translated labels) are set by link, as a teacher's deep link does
QUERY = {"pr": {"pr_set": "Custom"}, "ba": {"ba_shape": "Custom"}}


def _app(page: str, lang: str | None = "zh", timeout: int = 120) -> AppTest:
    at = AppTest.from_file(str(ROOT / PAGES[page]), default_timeout=timeout)
    at.query_params.update({**({"lang": lang} if lang else {}), **QUERY.get(page, {})})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _precision_run(at: AppTest) -> AppTest:
    at.radio(key="pr_device").set_value("cpu")
    at.number_input(key="pr_m").set_value(40)
    at.number_input(key="pr_n").set_value(24)
    at.number_input(key="pr_k").set_value(16)
    at.multiselect(key="pr_dtypes").set_value(["fp32", "tf32", "fp16", "int8", "fp8"])
    at.slider(key="pr_time").set_value(0.05)
    at.button[0].click().run()
    return at


def _tiling_run(at: AppTest) -> AppTest:
    at.radio(key="tb_device").set_value("cpu")
    at.number_input(key="tb_size").set_value(64)
    at.multiselect(key="tb_tiles_cpu").set_value([8, 32])  # 8: the Triton row says why it does not run
    at.slider(key="tb_time").set_value(0.05)
    at.button(key="tb_run").click().run()
    return at


def _batching_run(at: AppTest) -> AppTest:
    at.radio(key="ba_device").set_value("cpu")
    at.number_input(key="ba_k").set_value(64).run()
    at.number_input(key="ba_n").set_value(32).run()
    at.multiselect(key="ba_batches_cpu_custom").set_value([1, 8]).run()
    at.slider(key="ba_time").set_value(0.05).run()
    at.button(key="ba_run").click().run()
    return at


RUNS = {"pr": _precision_run, "ti": _tiling_run, "ba": _batching_run}


@pytest.mark.parametrize("page", list(PAGES))
def test_the_page_in_chinese_has_no_english_left_before_and_after_a_run(page):
    at = _app(page)
    assert not at.error, [e.value for e in at.error]
    assert at.title[0].value.endswith(ZH[{"pr": "Precision", "ti": "Tiling", "ba": "Batching",
                                          "rf": "Roofline"}[page]])
    texts = shown_texts(at)  # the Tiling stepper's own step texts: ui.stepper and gemmlib.explain (i16a's part)
    left = _english_left(texts)
    assert not left, f"English left on the Chinese {PAGES[page]} before a run: {left}"
    if page in RUNS:
        at = RUNS[page](at)
        assert not at.exception and not at.error, [e.value for e in at.error]
        assert at.success, "the run's verdict"
        texts = shown_texts(at)
        left = _english_left(texts)
        assert not left, f"English left on the Chinese {PAGES[page]} after a run: {left}"
        notes = [str(n) for n in at.dataframe[-1].value["note"]] + [c.value for c in at.caption]  # (Tiling: numbered
        # in its table, "见注 1", written whole under it)
        want = {"pr": ZH["fp16 operands, fp32 accumulation"], "ti": "2 的幂", "ba": None}[page]
        assert want is None or any(want in n for n in notes), notes  # the rows' notes, translated


def test_the_roofline_in_chinese_with_the_points_of_a_run():
    """Points measured on the Precision page (this session's) drawn and tabled on the Roofline page."""
    at = _precision_run(_app("pr"))
    results = at.session_state["_my_results"]
    rf = AppTest.from_file(str(ROOT / PAGES["rf"]), default_timeout=120)
    rf.query_params["lang"] = "zh"
    rf.session_state["_my_results"] = results
    rf.run()
    assert not rf.exception and not rf.error
    timed = [r for r in results if r.supported and r.tflops]  # rows with a time: one point each
    assert timed and any(ZH_N["{n} measured point shown."].format(n=len(timed)) in c.value for c in rf.caption)
    left = _english_left(shown_texts(rf))
    assert not left, f"English left on the Chinese Roofline page with points: {left}"


def test_the_english_pages_are_checked_the_same_way():
    """Not vacuous: the same check finds the English of each page (default language), and the
    run's verdict and notes in English."""
    words = {"pr": {"formats", "benchmark"}, "ti": {"tile", "traffic"}, "ba": {"batch", "stacking"},
             "rf": {"roofline", "ridge"}}
    for page, expect in words.items():
        at = _app(page, lang=None)
        assert expect <= {w.lower() for w in _english_left(shown_texts(at))}, page
    at = _precision_run(_app("pr", lang=None))
    left = {w.lower() for w in _english_left(shown_texts(at))}
    assert {"accumulation", "quant", "claimed"} <= left, sorted(left)


def test_the_figures_are_the_same_in_both_languages():
    """Only the words change: the Chinese table holds the run's data under the same keys, and the
    Chinese verdict carries the figures that the table's own numbers give."""
    en, zh = _batching_run(_app("ba", lang=None)), _batching_run(_app("ba"))
    t_en, t_zh = en.dataframe[-1].value, zh.dataframe[-1].value
    assert list(t_en.columns) == list(t_zh.columns) and list(t_en["batch"]) == list(t_zh["batch"])
    assert set(t_en["mode"]) == {"loop", "stacked", "bmm"}
    assert set(t_zh["mode"]) == {ZH["loop"], ZH["stacked"], "bmm"}
    stacked = t_zh[t_zh["mode"] == ZH["stacked"]].set_index("batch")["tflops"]
    gain = f"{stacked[8] / stacked[1]:.3g}×"  # throughput of 8 stacked requests over 1, from the table
    verdict = zh.success[0].value
    assert verdict.startswith("把 8 个请求堆叠起来") and gain in verdict, (gain, verdict)
