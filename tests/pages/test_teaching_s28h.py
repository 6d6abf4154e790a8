"""A teacher projecting at 1280×720 zoomed to 125 % / 150 % (a page's column is 520-560 CSS px): the Transformer
GEMMs table's key columns, the FLOPs heatmap's labels and numbers, the charts' screen-reader text in Chinese."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gemmlib.charts.explain import heatmap

PAGES = Path(__file__).resolve().parents[2] / "pages"
NARROWEST = 519  # the table's box at 150 % zoom (853 CSS px window), measured in Chromium


def _app(page: str, **query) -> AppTest:
    at = AppTest.from_file(str(PAGES / page), default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = str(v)
    return at.run()


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("seq", [1024, 1 << 20])
def test_transformer_table_keeps_name_share_and_flops_inside_a_zoomed_column(lang, seq):
    """The table was 773 px wide in a 562-px box at 125 % (519 at 150 %): FLOPs (a 200-px "medium" column) and
    the share came fifth and sixth, past the right edge. Now the name, the share and every digit of the FLOPs
    come first, their widths together inside the narrowest box; nothing is dropped (the shapes follow)."""
    at = _app("3_Transformer_GEMMs.py", lang=lang, tg_seq=seq)
    assert not at.exception
    df = at.dataframe[0].value
    assert list(df.columns) == ["GEMM", "share", "FLOPs", "runs", "M", "N", "K"]
    cols = json.loads(at.dataframe[0].proto.columns)
    widths = [cols[c].get("width") for c in ("GEMM", "share", "FLOPs")]
    assert all(isinstance(w, int) for w in widths), widths
    assert sum(widths) <= NARROWEST - 100, widths  # and room left over for the start of "runs"
    digits = max(len(v) if isinstance(v, str) else len(f"{v:,}") for v in df["FLOPs"])  # text past 2**53
    assert widths[2] >= 16 + 7 * digits  # every digit of the largest count, at the grid's 14-px font
    assert cols["GEMM"].get("pinned") is True  # the name stays when the shapes are scrolled to


def _font(expr: str, width: float) -> float:
    """Evaluate the heatmap's fontSize expression (clamp(floor(...), lo, hi)) for a plot ``width``."""
    py = expr.replace("width", str(width)).replace("clamp", "_clamp").replace("floor", "_floor")
    return eval(py, {"_clamp": lambda v, lo, hi: min(hi, max(lo, v)), "_floor": int})  # noqa: S307


def _grid(rows: int, cols: int) -> list[dict]:
    return [{"M": 256 * (i + 1), "N": 256 * (j + 1), "GFLOPs": 2 * 256 * (i + 1) * 256 * (j + 1) * 1024 / 1e9}
            for i in range(rows) for j in range(cols)]


def test_heatmap_labels_every_row_and_prints_readable_numbers():
    """At 125 % the 8 × 8 heatmap labelled M at 2048, 1536, 1024, 512 only (its 272 px were the whole chart's,
    title and N axis included, under Streamlit's "fit" autosize: 22-px rows that Vega thinned) and printed 11-px
    numbers. Now both axes keep every label, the grid alone gets 34 px a row (fit-x), and the numbers grow with the cells (13 px or more
    in the ~360-px plot a 519-px column leaves), never past 16 px nor under the old 11."""
    d = heatmap(_grid(8, 8), "GFLOPs", "t", ",.3~f").to_dict()
    rect, text = d["layer"]
    assert rect["encoding"]["y"]["axis"]["labelOverlap"] is False
    assert rect["encoding"]["x"]["axis"]["labelOverlap"] is False
    assert d["height"] == 8 * 34 and d["autosize"] == {"type": "fit-x", "contains": "padding"}  # the grid's own
    expr = text["mark"]["fontSize"]["expr"]
    assert _font(expr, 360) >= 13 and _font(expr, 2000) == 16 and _font(expr, 100) == 11
    wide = heatmap(_grid(4, 12), "GFLOPs", "t", ",.3~f").to_dict()["layer"][1]["mark"]["fontSize"]["expr"]
    assert _font(wide, 360) < _font(expr, 360)  # twelve columns: smaller cells, smaller numbers


def test_heatmap_numbers_fit_their_cells():
    """The font is sized for the longest number printed (4,294.967 is wider than 0.134)."""
    big = [{**r, "GFLOPs": r["GFLOPs"] * 1000} for r in _grid(8, 8)]
    small = heatmap(_grid(8, 8), "GFLOPs", "t", ",.3~f").to_dict()["layer"][1]["mark"]["fontSize"]["expr"]
    large = heatmap(big, "GFLOPs", "t", ",.3~f").to_dict()["layer"][1]["mark"]["fontSize"]["expr"]
    assert "(9 * 0.55)" in large and _font(large, 400) < _font(small, 400)


# ----------------------------------------------------------------------------- screen-reader text in Chinese
ENGLISH_LEFT = ("inner", "outer", "tiled", "tile efficiency", "wave efficiency", "A (activations)", "B (weights)",
                "B (keys / values)", "D (output)", "running_sum", "k (1-based)", "ypix", "what:", "counting:",
                "share:", "order:")


def _aria(vl: dict) -> list[str]:
    """The aria-labels Vega itself writes for a chart (vl-convert's SVG: the same text a screen reader reads in
    the browser), with the "X-axis titled ... for a ... scale" frame Vega writes in English in every language."""
    import html

    import vl_convert as vlc

    svg = vlc.vegalite_to_svg(json.dumps(vl))
    return [html.unescape(a) for a in re.findall(r'aria-label="([^"]*)"', svg)]


def _charts_zh() -> dict[str, dict]:
    import ui
    from gemmlib.charts.explain import loads_chart, running_sum_chart, spec, staircase_chart
    from gemmlib.charts.model import gemm_shapes_spec, share_spec
    from gemmlib.core.flops import wave_staircase
    from gemmlib.explain import reference as ref
    from gemmlib.llm.accounting import attention_crossover, attention_share, layer_model, layer_ops

    zh = ui.gettext_for("zh")
    charts = {"loads": spec(loads_chart([{"order": o, "operand": x, "loads": 6} for o in ref.LOOP_ORDERS
                                         for x in "AB"], gettext=zh))}
    charts["running sum"] = spec(running_sum_chart(
        [{"k": 0, "term": "1×7", "product": 7, "running_sum": 7}, {"k": 1, "term": "2×9", "product": 18,
                                                                    "running_sum": 25}], current_k=1, gettext=zh))
    charts["staircase"] = spec(staircase_chart(wave_staircase(1024, 1000, 1200, 128, 128, 132, step=50),
                                               gettext=zh))
    cfg = layer_model(1024, 4096, 32, 16384, False)
    charts["shapes"] = gemm_shapes_spec(layer_ops(cfg, 1024), gettext=zh)
    curve = [{"seq_len": s, "share": attention_share(cfg, s, False), "counting": zh("dense (eager)")}
             for s in (256, 1024, 4096)]
    charts["share"] = share_spec(curve, attention_crossover(cfg), claim_s=1024,
                                 causal_crossover=attention_crossover(cfg, causal=True), gettext=zh)
    return charts


def test_the_charts_screen_reader_text_is_chinese_on_the_chinese_pages():
    """Vega writes each mark's, axis's and legend's aria-label from the data: on the Chinese Accumulate, FLOPs and
    Transformer GEMMs pages a screen reader heard "inner, outer, tiled", "tile efficiency", "matrix: A
    (activations)", "running_sum: 7", "ypix: 276". Now the data carry the names as shown and each mark a
    description in the reader's language."""
    import ui

    zh = ui.gettext_for("zh")
    said = {name: _aria(vl) for name, vl in _charts_zh().items()}
    for name, labels in said.items():
        left = [(w, a) for a in labels for w in ENGLISH_LEFT if w in a]
        assert not left, (name, left[:3])
    assert any(zh("tiled") in a for a in said["loads"]) and zh("tiled") != "tiled"
    assert any(zh("tile efficiency") in a for a in said["staircase"])
    assert any(zh("A (activations)") in a for a in said["shapes"])
