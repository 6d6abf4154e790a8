"""The FLOPs page through AppTest: heatmap metrics, hardware, CPU row, staircase, the article's check."""

import io
import json
from pathlib import Path

import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from gemmlib.core.flops import gemm_flops

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "2_FLOPs.py")


def _app() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    return at


def _heatmap_values(at: AppTest, field: str) -> list[float]:
    """The values the heatmap draws (Streamlit ships the chart's dataset as Arrow)."""
    chart = at.get("vega_lite_chart")[0].proto
    assert field in json.dumps(json.loads(chart.spec), ensure_ascii=False)
    table = pa.ipc.open_stream(io.BytesIO(chart.datasets[0].data.data)).read_all()
    return [r[field] for r in table.to_pylist()]


def _errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def test_default_render_is_the_article_heatmap():
    at = _app()
    assert "FLOPs" in at.title[0].value
    values = _heatmap_values(at, "GFLOPs")
    assert len(values) == 64
    assert max(values) == pytest.approx(gemm_flops(2048, 2048, 1024) / 1e9)
    assert min(values) == pytest.approx(gemm_flops(256, 256, 1024) / 1e9)
    assert not _errors(at)
    catalogue = next(df.value for df in at.dataframe if "source" in df.value.columns)
    assert {"H100 SXM", "H200 SXM", "A100 SXM 80GB", "L40S", "RTX 4090", "CPU (edit me)"} <= set(catalogue["name"])
    assert any("0.195%" in m.value and "1/512" in m.value for m in at.markdown)


@pytest.mark.parametrize("metric", ["GFLOPs", "MB moved", "FLOP/byte", "time µs"])
def test_every_metric_renders(metric):
    at = _app()
    at.radio(key="fl_metric").set_value(metric).run()
    assert not at.exception and not _errors(at)
    assert len(_heatmap_values(at, metric)) == 64


@pytest.mark.parametrize("gpu", ["H100 SXM", "H200 SXM", "A100 SXM 80GB", "L40S", "RTX 4090", "CPU (edit me)"])
def test_every_hardware_and_dtype(gpu):
    at = _app()
    at.radio(key="fl_metric").set_value("time µs")
    at.selectbox(key="fl_gpu").set_value(gpu).run()
    for dtype in ("fp32", "fp8", "int8", "bf16"):
        at.selectbox(key="fl_dtype").set_value(dtype).run()
        assert not at.exception and not _errors(at)
        unsupported = any("no " + dtype in w.value for w in at.warning)
        assert unsupported == (gpu in ("A100 SXM 80GB", "CPU (edit me)") and dtype == "fp8")


def test_cpu_row_is_editable_and_drives_the_time():
    at = _app()
    at.radio(key="fl_metric").set_value("time µs")
    at.selectbox(key="fl_dtype").set_value("fp32")
    at.selectbox(key="fl_gpu").set_value("CPU (edit me)").run()
    slow = max(_heatmap_values(at, "time µs"))
    at.number_input(key="fl_cpu_fp32").set_value(100.0)
    at.number_input(key="fl_cpu_bw").set_value(2000.0).run()
    fast = max(_heatmap_values(at, "time µs"))
    assert fast < slow / 100
    for key in ("fl_cpu_fp32", "fl_cpu_half", "fl_cpu_int8"):
        at.number_input(key=key).set_value(0.001).run()
    at.number_input(key="fl_cpu_bw").set_value(1.0)
    at.number_input(key="fl_cpu_cores").set_value(1024).run()
    assert not at.exception and not _errors(at)


def test_ranges_at_extremes_and_bad_ranges_keep_the_last_good_heatmap():
    at = _app()
    for key in ("fl_m0", "fl_m1", "fl_n0", "fl_n1", "fl_k"):
        at.number_input(key=key).set_value(1)
    at.run()
    assert not at.exception and not _errors(at)
    assert _heatmap_values(at, "GFLOPs") == [pytest.approx(2e-9)]
    for key in ("fl_m0", "fl_m1", "fl_n0", "fl_n1", "fl_ms", "fl_ns", "fl_k"):
        at.number_input(key=key).set_value(1 << 20)
    at.run()
    assert not at.exception and not _errors(at)
    assert _heatmap_values(at, "GFLOPs") == [pytest.approx(2 * 2**60 / 1e9)]
    at.number_input(key="fl_m0").set_value(5)
    at.number_input(key="fl_m1").set_value(4).run()  # ends before it starts
    assert any("ends (4) before it starts (5)" in e for e in _errors(at))
    assert any("last ranges that worked" in i.value for i in at.info)
    assert _heatmap_values(at, "GFLOPs") == [pytest.approx(2 * 2**60 / 1e9)]
    at.number_input(key="fl_m0").set_value(1)
    at.number_input(key="fl_m1").set_value(1000)
    at.number_input(key="fl_ms").set_value(1).run()  # 1000 rows: too many for a heatmap
    assert any("too many" in e for e in _errors(at)) and not at.exception
    at.slider(key="fl_eff").set_value(0.05).run()
    at.slider(key="fl_eff").set_value(1.0).run()
    assert not at.exception


def test_wave_staircase_inputs():
    at = _app()
    caption = next(c.value for c in at.caption if "tiles on 132 SMs" in c.value)
    # defaults: M = 1024, N = 1024…4096, 128×128 tiles: 64 tiles fill half of 132 SMs (48.5 %)
    assert "efficiency from 48.5% (N = 1,024, 64 tiles in 1 wave)" in caption
    at.number_input(key="fl_wm").set_value(1)
    at.number_input(key="fl_wn0").set_value(1)
    at.number_input(key="fl_wn1").set_value(1 << 20)
    at.selectbox(key="fl_tm").set_value(256)
    at.selectbox(key="fl_tn").set_value(64)
    at.number_input(key="fl_sms").set_value(1024).run()
    assert not at.exception and not _errors(at)
    at.number_input(key="fl_sms").set_value(1).run()
    assert not at.exception
    at.number_input(key="fl_wn0").set_value(100)
    at.number_input(key="fl_wn1").set_value(50).run()
    assert any("ends (50) before it starts (100)" in e for e in _errors(at)) and not at.exception


def test_article_check_inputs():
    at = _app()
    at.number_input(key="fl_am").set_value(128)
    at.number_input(key="fl_ak").set_value(64)
    at.number_input(key="fl_an").set_value(256).run()
    assert any("0.781%" in m.value for m in at.markdown)
    for v in (1, 4096):
        for key in ("fl_am", "fl_ak", "fl_an"):
            at.number_input(key=key).set_value(v)
        at.run()
        assert not at.exception and not _errors(at)
    table = next(df.value for df in at.dataframe if "quantity" in df.value.columns)
    assert table["count"].tolist()[3] == 2 * 4096**3


def test_the_sms_field_follows_the_chosen_gpu():
    from gemmlib.core.hardware import CATALOGUE

    at = _app()
    at.selectbox(key="fl_gpu").set_value("A100 SXM 80GB").run()
    assert at.number_input(key="fl_sms").value == CATALOGUE["A100 SXM 80GB"].sms == 108
    caption = " ".join(c.value for c in at.caption)
    assert "tiles on 108 SMs" in caption
    at.number_input(key="fl_sms").set_value(100).run()  # an edit lasts until the GPU changes again
    assert at.number_input(key="fl_sms").value == 100
    at.selectbox(key="fl_gpu").set_value("L40S").run()
    assert at.number_input(key="fl_sms").value == CATALOGUE["L40S"].sms == 142


def test_the_bound_caption_counts_cells_with_plurals_not_parentheses():
    at = _app()
    caption = next(c.value for c in at.caption if "ridge point" in c.value)
    assert "(s)" not in caption and "cells compute-bound" in caption or "cell compute-bound" in caption


def test_a_classroom_size_shows_whole_flops_and_the_bound_in_the_pages_language():
    """M, N, K = 1 … 4: the heatmap counts whole FLOPs (2·4·4·4 = 128 in the corner) instead of GFLOPs that print as
    "0"; its title says FLOPs; the tooltip's bound reads in Chinese on the Chinese page (it said "compute")."""
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params.update(fl_k="4", fl_m0="1", fl_m1="4", fl_ms="1", fl_n0="1", fl_n1="4", fl_ns="1")
    at.run()
    assert not at.exception and not _errors(at)
    chart = at.get("vega_lite_chart")[0].proto
    spec = json.loads(chart.spec)
    values = _heatmap_values(at, "FLOPs")
    assert max(values) == gemm_flops(4, 4, 4) == 128 and min(values) == gemm_flops(1, 1, 4) == 8
    assert "FLOPs for M×K by K×N, K = 4" in json.dumps(spec, ensure_ascii=False)
    zh = AppTest.from_file(PAGE, default_timeout=60)
    zh.query_params.update(fl_k="4", fl_m0="1", fl_m1="4", fl_ms="1", fl_n0="1", fl_n1="4", fl_ns="1", lang="zh",
                           fl_metric="time µs")
    zh.run()
    assert not zh.exception
    table = pa.ipc.open_stream(io.BytesIO(zh.get("vega_lite_chart")[0].proto.datasets[0].data.data)).read_all()
    assert {r["bound"] for r in table.to_pylist()} == {"访存"}  # memory-bound, 访存受限 (4×4×4: far below the ridge); not 内存, a memory size


def test_a_dtype_whose_rate_is_unknown_is_said_unknown_not_absent():
    """The RTX 5090 runs bf16, but no source gives its dense bf16 rate (the catalogue lists it as unknown): the
    warning says so, instead of "has no bf16 GEMM path"."""
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params.update(fl_metric="time µs", fl_gpu="RTX 5090", fl_dtype="bf16")
    at.run()
    assert not at.exception
    warn = " ".join(w.value for w in at.warning)
    assert "RTX 5090 runs bf16, but no source gives its dense bf16 rate" in warn and "has no bf16" not in warn


def test_times_under_a_kernels_fixed_time_are_flagged():
    """The time metric is the roofline alone: the article's smallest cell (256×256 by K = 1024, bf16 on an H100)
    reads 0.19 µs, and a classroom 1×1×16 28 ps, with nothing saying that a real GEMM kernel takes some 5 µs
    however small it is. The page now says so under the heatmap; not for large GEMMs, nor on the CPU row."""
    from gemmlib.llm.efficiency import T0_S

    def note(at):
        return [c.value for c in at.caption if "fixed cost" in c.value]

    at = _app()
    at.radio(key="fl_metric").set_value("time µs").run()
    assert min(_heatmap_values(at, "time µs")) < 1
    assert note(at) and f"{T0_S * 1e6:.2f} µs" in note(at)[0]
    for key, v in (("fl_m0", 8192), ("fl_m1", 16384), ("fl_ms", 8192), ("fl_n0", 8192), ("fl_n1", 16384),
                   ("fl_ns", 8192), ("fl_k", 8192)):
        at.number_input(key=key).set_value(v).run()
    assert not at.exception and min(_heatmap_values(at, "time µs")) > 100 and not note(at)
    at.radio(key="fl_metric").set_value("GFLOPs").run()
    assert not note(at)
