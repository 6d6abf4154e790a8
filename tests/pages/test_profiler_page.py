"""The Profiler page through AppTest: cold render, prediction, a small CPU profile, bad input, deep link."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "10_Profiler.py")


def _app(**query) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=180)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def _metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(label))


def _texts(at: AppTest) -> str:
    return " ".join([*(c.value for c in at.caption), *(m.value for m in at.markdown), *(i.value for i in at.info)])


def test_cold_render_predicts_and_waits():
    at = _app()
    assert "Profiler" in at.title[0].value
    assert not at.error
    share = float(_metric(at, "GEMM share of time (roofline)").rstrip("%"))
    flops_share = float(_metric(at, "GEMM share of FLOPs").rstrip("%"))
    assert 0 < share < 100 and 0 < flops_share < 100
    assert "Profile the block" in _texts(at)
    assert "80%" in _texts(at) and "75%" in _texts(at)


@pytest.mark.skipif(__import__("importlib").util.find_spec("torch") is None, reason="needs torch")
def test_small_cpu_profile_shows_share_table_monitor_and_trace():
    at = _app(pf_source="Sliders", pf_hidden="64", pf_heads="4", pf_kv="2", pf_seq="32", pf_steps="2",
              pf_device="cpu", pf_dtype="fp32")
    at.button(key="pf_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    at.number_input(key="pf_top").set_value(100).run()  # every op: at this size load can push bmm out of the top 15
    assert not at.exception and not at.error, [e.value for e in at.error]
    share = float(_metric(at, "GEMM share of time").rstrip("%"))
    assert 0 < share < 100
    table = at.dataframe[0].value
    assert {"aten::mm", "aten::bmm"} <= set(table["name"])
    assert table["is_gemm"].any() and (~table["is_gemm"]).any()
    assert (table["share"] <= 1).all()
    assert "they agree" in _texts(at)  # profiler GEMM FLOPs == gemmlib count
    # no GPU here: the monitor says so plainly instead of drawing empty charts
    assert any("nothing to sample" in i.value or "NVML" in i.value or "GPU" in i.value for i in at.info)
    assert at.get("download_button"), "the Chrome trace download is offered"
    # the charts' legends keep "fused attention (GEMM work)" whole (Vega's default cuts a label at 160 px)
    import json

    for chart in at.get("vega_lite_chart")[:2]:
        spec = json.loads(chart.proto.spec)
        legends = [layer["encoding"]["color"].get("legend") or {} for layer in spec.get("layer", [spec])
                   if "color" in layer.get("encoding", {})]
        assert legends and all(lg.get("labelLimit", 160) >= 220 for lg in legends), legends
    at.toggle(key="pf_by_name").set_value(True).run()
    names = list(at.dataframe[0].value["name"])
    assert len(names) == len(set(names))
    # the monitored benchmark: with no GPU for NVML to sample, its button is off and the page says why
    # (tests/measure/test_profiler.py times the block on the CPU through the same monitored_benchmark)
    assert at.button(key="pf_bench").disabled
    assert any("NVML" in i.value for i in at.info)


def test_bad_sizes_show_an_error_box_not_a_traceback():
    at = _app(pf_source="Sliders", pf_hidden="384", pf_heads="64")  # head size 6 ok; kv 2 divides 64
    assert not at.exception
    at.select_slider(key="pf_kv").set_value(16).run()
    at.select_slider(key="pf_heads").set_value(12).run()  # 16 K/V heads do not divide 12 heads
    assert not at.exception
    assert at.error and "kv_heads" in at.error[0].value
    assert at.button(key="pf_run").disabled


def test_deep_link_preset_is_applied():
    at = _app(pf_preset="mistral-7b", pf_scale="8", pf_seq="128")
    assert at.selectbox(key="pf_preset").value == "mistral-7b"
    assert "hidden 512" in _texts(at)
    assert not at.error


def test_a_cpu_prediction_uses_the_ceilings_measured_on_this_cpu(tmp_path, monkeypatch):
    """With this CPU's ceilings measured (Devices), the prediction and the run's 'measured − predicted' use them, as
    the FLOPs and Roofline pages do; before, the catalogue's placeholder CPU row ('CPU (edit me)') predicted."""
    from gemmlib.core import ceilings
    from gemmlib.measure import profiler as pf

    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path))
    ceilings.clear_ceilings()
    try:
        placeholder = float(_metric(_app(pf_device="cpu"), "GEMM share of time (roofline)").rstrip("%"))
        ceilings.save_ceilings(ceilings.Ceilings("cpu", "Test CPU", {"fp32": 4e11, "bf16": 1e11, "fp16": 1e11}, 2e9))
        at = _app(pf_device="cpu")
        assert "the CPU row holds the ceilings measured on Test CPU" in _texts(at)
        measured = float(_metric(at, "GEMM share of time (roofline)").rstrip("%"))
        assert measured < placeholder  # the placeholder's 200 GFLOP/s and 20 GB/s: GEMMs 2× faster, the rest 10× slower
        hw = pf.hardware_for("cpu")
        assert (hw.peak("fp32"), hw.bandwidth) == (4e11, 2e9)
    finally:
        ceilings.clear_ceilings()
