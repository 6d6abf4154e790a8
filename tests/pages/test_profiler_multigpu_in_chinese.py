"""The Profiler and Multi-GPU pages in Chinese (``?lang=zh``) through AppTest, with small real CPU
runs: a tiny Llama-style block under torch.profiler, the gloo collectives at small sizes and a
two-rank tensor-parallel layer. No exception, no English left in anything a reader sees or hovers
(``i18n_texts.shown_texts`` + ``gemm_i18n.english_words``; names, numbers, units, code and the
profiler's own op names such as ``aten::mm`` are allowed), the server's refusals (a size over the
caps, a layer too big for a CPU) in Chinese, and the same check finding the English of the default
pages (so it is not vacuous).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import gemm_i18n
import pytest
from i18n_texts import shown_texts
from streamlit.testing.v1 import AppTest

from gemmlib.measure import launch

ROOT = Path(__file__).resolve().parents[2]
PROFILER = str(ROOT / "pages" / "10_Profiler.py")
MULTI_GPU = str(ROOT / "pages" / "11_Multi_GPU.py")
ZH = {m.id if isinstance(m.id, str) else m.id[0]: m.string if isinstance(m.string, str) else m.string[0]
      for m in gemm_i18n.read("zh") if m.id}  # read from the .po, not through the app's own lookup
needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
pytestmark = pytest.mark.usefixtures("bench_env")


def _names() -> list[str]:
    from gemmlib.core.hardware import CATALOGUE
    from gemmlib.core.machine import light_summary

    return [d["name"] for d in light_summary()] + list(CATALOGUE) + ["chrome://tracing"]


def _app(page: str, lang: str | None = "zh", **query) -> AppTest:
    at = AppTest.from_file(page, default_timeout=240)
    at.query_params.update({**({"lang": lang} if lang else {}), **{k: str(v) for k, v in query.items()}})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _english_left(at: AppTest) -> dict[str, str]:
    left: dict[str, str] = {}
    names = _names()
    for t in shown_texts(at):
        t = re.sub(r"aten::\w+", " ", t)  # the profiler's op names, as torch names them
        for w in gemm_i18n.english_words(t, names):
            left.setdefault(w, t[:140])
    return left


def _errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def test_profiler_in_chinese_before_a_run():
    at = _app(PROFILER)
    assert at.title[0].value.endswith(ZH["Profiler"])
    assert not at.error, _errors(at)
    assert len(shown_texts(at)) > 30
    left = _english_left(at)
    assert not left, f"English left on the Chinese Profiler page: {left}"


@needs_torch
def test_profiler_in_chinese_after_a_small_cpu_profile_with_the_monitor_off():
    # the link names the option by its id (as the English page writes it); the Chinese page reads it
    at = _app(PROFILER, pf_source="Sliders", pf_hidden="64", pf_heads="4", pf_kv="2", pf_seq="32",
              pf_steps="2", pf_device="cpu", pf_dtype="fp32")
    assert at.radio(key="pf_source").value == "Sliders"
    at.button(key="pf_run").click().run()
    assert not at.exception and not at.error, _errors(at)
    at.number_input(key="pf_top").set_value(100).run()  # every op: at this size load can push bmm out of the top 15
    assert not at.exception and not at.error, _errors(at)
    assert {"aten::mm", "aten::bmm"} <= set(at.dataframe[0].value["name"])  # the data is the English page's
    assert any(ZH["GEMM share of time"] == m.label for m in at.metric)
    assert at.button(key="pf_bench").disabled  # no GPU for NVML to sample here: off, with the reason in Chinese
    left = _english_left(at)
    assert not left, f"English left on the Chinese Profiler page after a run: {left}"


def test_profiler_refusal_over_the_caps_in_chinese(monkeypatch):
    monkeypatch.setenv("GEMM_MAX_DIM", "128")
    at = _app(PROFILER, pf_source="Sliders", pf_hidden="256")
    errors = _errors(at)
    assert errors and f"{ZH['hidden']}=256" in errors[0] and "128" in errors[0]
    assert "超过了本服务器的上限" in errors[0]
    left = _english_left(at)
    assert not left, f"English left in the refusal: {left}"
    button = at.button(key="pf_run")  # the run is refused before a press: its button is off, saying why
    assert button.disabled and "超过了本服务器的上限" in button.help, (button.disabled, button.help)
    assert not _english_left(at)


pytest_gloo = pytest.mark.skipif(launch.cuda_count() >= 2, reason="the CPU (gloo) view of the page")


@pytest_gloo
def test_multigpu_in_chinese_before_a_run():
    at = _app(MULTI_GPU)
    assert at.title[0].value.endswith(ZH["Multi-GPU"])
    assert not at.error, _errors(at)
    assert at.dataframe and "per rank ms" in at.dataframe[0].value.columns  # data keys unchanged
    left = _english_left(at)
    assert not left, f"English left on the Chinese Multi-GPU page: {left}"


@pytest_gloo
@needs_torch
def test_multigpu_in_chinese_after_gloo_collectives_and_a_tensor_parallel_layer():
    at = _app(MULTI_GPU)
    at.selectbox(key="mg_top").set_value(1024).run()
    at.number_input(key="mg_iters").set_value(2).run()
    at.button(key="mg_run_coll").click().run()
    assert not at.exception and not at.error, _errors(at)
    table = at.dataframe[0].value
    assert set(table["op"]) == {ZH[o] for o in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                                  "broadcast")}
    assert table["correct"].map(lambda v: v not in (False, "no", "否")).all()
    assert any(ZH["gloo between CPU processes on one machine: the figures measure host memory copies and local "
                  "sockets, not a GPU interconnect"] in w.value for w in at.warning)
    at.number_input(key="mg_seq").set_value(16).run()
    at.button(key="mg_run_tp").click().run()
    assert not at.exception and not at.error, _errors(at)
    labels = {m.label: m.value for m in at.metric}
    assert labels[ZH["output vs one rank"]] == ZH["matches"]
    left = _english_left(at)
    assert not left, f"English left on the Chinese Multi-GPU page after the runs: {left}"


@pytest_gloo
def test_multigpu_refusal_in_chinese():
    at = _app(MULTI_GPU)
    at.selectbox(key="mg_scale").set_value(1).run()
    at.number_input(key="mg_seq").set_value(512).run()
    assert not at.exception  # refused before a press: the button is off, the refusal beside it, in Chinese
    assert at.button(key="mg_run_tp").disabled
    warnings = [w.value for w in at.warning if "本服务器的上限会拒绝这次运行" in w.value]
    assert warnings and "对这里的 CPU 运行来说太多" in warnings[0] and "一层" in warnings[0], warnings
    assert at.button(key="mg_run_tp").help == warnings[0]
    left = _english_left(at)
    assert not left, f"English left in the refusal: {left}"


def test_the_english_pages_are_checked_the_same_way():
    """Not vacuous: the same check finds the English of each default page."""
    for page, words in ((PROFILER, {"profile", "block", "prediction"}), (MULTI_GPU, {"collectives", "bandwidth"})):
        at = _app(page, lang=None)
        assert words <= {w.lower() for w in _english_left(at)}, page
