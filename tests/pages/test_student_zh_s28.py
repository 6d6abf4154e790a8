"""The benchmark pages as a student runs them in Chinese on a laptop CPU (review s28, brief E).

- Tiling, section 4: the wave caption's two ends are clauses ("N = 8,192: 2,048 tiles in 16 waves; N = 8,704:
  …"); joined with the list comma they read "…16 个波次、N = 8,704…" in Chinese, as if the two were items.
- Precision: the throughput chart's shape columns stood in string order ("方阵 1024", "方阵 256", "方阵 512")
  while the table and the error chart's legend go 256, 512, 1024.
- Tiling, section 3: the lesson above the table said "`python_tiled` 在最佳情况下……快 2.07×" while the table,
  the chart's legend and the noise note call that row "Python 分块循环": the student looked for a row named
  python_tiled and found none.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

from gemmlib.charts import bench as charts_bench
from gemmlib.core.i18n import N_, Text
from gemmlib.views import tiling as tv
from ui.i18n import translations

ROOT = Path(__file__).resolve().parents[2]
ZH = translations("zh").gettext


def _waves(ns: list[int], tile=(128, 256), sms=132, mk=8192) -> list[dict]:
    out = []
    for n in ns:
        tiles = -(-mk // tile[0]) * -(-n // tile[1])
        out.append({"n": n, "tiles": tiles, "waves": -(-tiles // sms)})
    return out


def test_the_wave_captions_two_ends_are_clauses_not_list_items():
    pred = _waves([8192, 8448, 8704])
    en = tv.wave_caption(pred, (128, 256), 132)
    assert "N = 8,192: 2,048 tiles in 16 waves; N = 8,704: 2,176 tiles in 17 waves." in en
    zh = tv.wave_caption(pred, (128, 256), 132, gettext=ZH)
    assert "16 个波次；N = 8,704" in zh, zh  # the clause separator
    assert "、N = 8,704" not in zh and "，N = 8,704" not in zh


def test_the_throughput_charts_shapes_stand_in_the_runs_order():
    rows = [{"name": f, "supported": True, "tflops": 0.1, "median_s": 1e-3, "rel_error": 1e-6,
             "shape": {"m": s, "n": s, "k": s, "label": f"方阵 {s}"}}
            for s in (256, 512, 1024) for f in ("fp32", "bf16")]
    spec = charts_bench.tflops_chart(rows, gettext=ZH).to_dict()
    # the facet's order as Vega-Lite draws it: an explicit list, left to right (null let Vega sort the strings)
    assert spec["encoding"]["column"]["sort"] == ["方阵 256", "方阵 512", "方阵 1024"]


def test_the_throughput_charts_shape_headers_do_not_run_into_each_other():
    """Precision with one format ticked and sizes 256, 512, 1024: each shape's column was one 18 px bar wide while
    its header could be 180 px, so the headers overlapped ("方阵 25方阵 51方阵 1024")."""
    rows = [{"name": "fp32", "supported": True, "tflops": 0.1, "median_s": 1e-3, "rel_error": 1e-6,
             "shape": {"m": s, "n": s, "k": s, "label": f"方阵 {s}"}} for s in (256, 512, 1024)]
    spec = charts_bench.tflops_chart(rows, gettext=ZH).to_dict()
    column = spec["width"]["step"] * 1  # one bar per shape
    header = spec["encoding"]["column"]
    # a centred header wider than its column by more than the gap between columns reaches its neighbour's
    assert header["header"]["labelLimit"] <= column + header["spacing"], spec
    assert column >= 60  # "方阵 1024" (about 52 px at the header's 11 px) whole over its bar


def test_the_lesson_names_the_implementations_as_the_table_does():
    lesson = Text.joined([Text(N_("One library call takes {ms:.3g} ms ({tflops:.3g} TFLOP/s)."), ms=3.06,
                               tflops=0.0109),
                          Text(N_("`{impl}` at its best ({where}) is {ratio:.3g}× faster."), impl="python_tiled",
                               where=Text(N_("tile {tile}"), tile=128), ratio=2.07)], " ")
    names = {"python_tiled": ZH("python_tiled")}
    zh = tv.lesson_text(lesson, lambda i: names.get(i, i), ZH)
    assert zh == "一次库调用耗时 3.06 ms（0.0109 TFLOP/s）。 `Python 分块循环` 在最佳情况下（分块 128）快 2.07×。"
    assert tv.lesson_text(lesson, lambda i: i) == str(lesson)  # English: the ids, as the English table shows


def test_the_tiling_page_in_chinese_names_its_rows_alike_in_the_lesson_and_the_table():
    at = AppTest.from_file(str(ROOT / "pages" / "7_Tiling.py"), default_timeout=180)
    at.query_params["lang"] = "zh"
    at.run()
    assert not at.exception, at.exception
    at.radio(key="tb_device").set_value("cpu")
    at.number_input(key="tb_size").set_value(64)
    at.multiselect(key="tb_impls").set_value(["python_tiled", "torch"])
    at.multiselect(key="tb_tiles_cpu").set_value([32])
    at.slider(key="tb_time").set_value(0.05)
    at.button(key="tb_run").click().run()
    assert not at.exception, at.exception
    lesson = at.success[0].value
    assert "Python 分块循环" in lesson and "python_tiled" not in lesson, lesson
    table = at.dataframe[-1].value
    assert "Python 分块循环" in set(table.iloc[:, 0]), table


def _noise_page():
    import ui
    from gemmlib.core.results import BenchResult

    names = ("逐个循环", "堆叠") if ui.lang() == "zh" else ("loop", "stacked")
    ui.noise_note([BenchResult("batching", n, "cpu", "CPU", "fp32", {"m": 1, "n": 8, "k": 8}, 128.0, 64.0,
                               median_s=1e-3, p20_s=1e-4, p80_s=s) for n, s in zip(names, (1e-3, 5e-4), strict=True)])


def test_the_noise_note_names_the_worst_row_without_a_space_inside_chinese():
    """"最差的是 逐个循环": a space between two Chinese words reads as a typo (Batching names its rows in Chinese)."""
    at = AppTest.from_function(_noise_page)
    at.query_params["lang"] = "zh"
    at.run()
    assert not at.exception, at.exception
    note = at.warning[0].value
    assert "逐个循环，10×" in note, note
    assert not re.search(r"[\u4e00-\u9fff] [\u4e00-\u9fff]", note), note


def _chart_spec(at: AppTest) -> dict:
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    return next(s for s in specs if "每秒，按各行的单位" in json.dumps(s, ensure_ascii=False))


def test_the_devices_chart_in_chinese_marks_the_cpus_fp8_and_says_its_series_in_chinese():
    """Devices, after "measure this CPU": the chart drew "fp8 GEMM (TFLOP/s)" among the ceilings (above fp16's
    on a laptop) though the table beside it says it is a reference kernel and no ceiling; and its dots' hover
    said "系列: measured (median)", in English."""
    from gemmlib.core import ceilings
    from gemmlib.measure.devices import device_info

    name = device_info("cpu").name
    assert ceilings.save_ceilings(ceilings.Ceilings("cpu", name, {"fp32": 5e10, "fp16": 1e9, "fp8": 4e9}, 8e9,
                                                    spread={"fp8": (3e9, 5e9)})) is not None
    at = AppTest.from_file(str(ROOT / "pages" / "5_Devices.py"), default_timeout=60)
    at.query_params["lang"] = "zh"
    at.run()
    assert not at.exception, at.exception
    spec = _chart_spec(at)
    figures = spec["layer"][-1]["encoding"]["y"]["sort"]  # the rows, top to bottom
    assert "fp8 GEMM（模拟） (TFLOP/s)" in figures and "fp32 GEMM (TFLOP/s)" in figures, figures
    series = {t["field"] for layer in spec["layer"] for t in layer["encoding"].get("tooltip", [])
              if t.get("title") == "系列"}
    # the hover's field holds the series as shown (the chart's data, as the builder makes it)
    rows = [{"figure": "fp32 GEMM", "unit": "TFLOP/s", "measured": 0.05, "low": 0.04, "high": 0.06}]
    built = charts_bench.ceilings_chart(rows, "t", gettext=ZH).to_dict()
    data = [v for vs in built.get("datasets", {}).values() for v in vs] or built["data"]["values"]
    assert series and {p[f] for p in data for f in series} == {"实测（中位数）"}, series


def test_the_articles_example_in_chinese_gives_its_intensity_a_unit():
    """Batching, "运行原文的示例": its table's last column read "强度" over 25.6, 106.7, 0.4981 — no unit, while
    the sweep's table above heads the same figure "FLOP/字节"."""
    at = AppTest.from_file(str(ROOT / "pages" / "8_Batching.py"), default_timeout=120)
    at.query_params["lang"] = "zh"
    at.run()
    at.radio(key="ba_device").set_value("cpu")
    at.slider(key="ba_time").set_value(0.05)
    at.button(key="ba_article").click().run()
    assert not at.exception and not at.error, (at.exception, at.error)
    table = at.dataframe[-1]
    assert "intensity" in table.value.columns
    headers = {k.removeprefix("_pos:").removeprefix("col:"): v.get("label")
               for k, v in json.loads(table.proto.columns).items()}
    assert headers["intensity"] == ZH("FLOP/byte") == "FLOP/字节", headers


def test_the_wave_sections_sm_count_is_labelled_in_chinese():
    """Tiling, section 4: the first input read "SMs" (English plural) where the FLOPs page's same input reads "SM 数"."""
    at = AppTest.from_file(str(ROOT / "pages" / "7_Tiling.py"), default_timeout=120)
    at.query_params["lang"] = "zh"
    at.run()
    assert not at.exception, at.exception
    assert at.number_input(key="tw_sms").label == "SM 数"


def test_the_placeholder_note_stops_asking_for_a_measurement_in_the_run_that_made_it(monkeypatch):
    """Devices, "测量性能上限" pressed on a laptop: the note above still said "在下面测量性能上限，得到这台 CPU 的
    数值" ("measure the ceilings below") beside the figures just measured, until the next click on the page."""
    from gemmlib.measure import devices

    monkeypatch.setenv("GEMM_SPARE_WORKER", "0")
    monkeypatch.setattr(devices, "ceiling_plan", lambda device, quick=False: (64, 1024**2))  # a small plan
    at = AppTest.from_file(str(ROOT / "pages" / "5_Devices.py"), default_timeout=120)
    at.query_params["lang"] = "zh"
    at.run()
    asking = ZH("No CUDA GPU here. The CPU row of the catalogue is a placeholder — measure the ceilings below to get "
                "figures for this CPU.")
    if any(i.value == asking for i in at.info):  # a machine without CUDA (with one, the note is not shown)
        at.radio(key="dv_device").set_value("cpu")
        at.button[0].click().run()
        assert not at.exception and not at.error, (at.exception, at.error)
        infos = [i.value for i in at.info]
        assert asking not in infos, infos
        using = ZH("No CUDA GPU here. The CPU row of the catalogue is a placeholder; the Roofline and FLOPs pages use "
                   "the ceilings measured below instead, and the estimator offers them as a row of their own.")
        assert using in infos and using != asking, infos
