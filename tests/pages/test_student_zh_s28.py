"""The benchmark pages as a student runs them in Chinese on a laptop CPU (review s28, brief E).

- Tiling, section 4: the wave caption's two ends are clauses ("N = 8,192: 2,048 tiles in 16 waves; N = 8,704:
  …"); joined with the list comma they read "…16 个波次、N = 8,704…" in Chinese, as if the two were items.
- Precision: the throughput chart's shape columns stood in string order ("方阵 1024", "方阵 256", "方阵 512")
  while the table and the error chart's legend go 256, 512, 1024.
"""

from __future__ import annotations

from gemmlib.charts import bench as charts_bench
from gemmlib.views import tiling as tv
from ui.i18n import translations

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
