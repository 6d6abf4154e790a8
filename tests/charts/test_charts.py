"""Chart data stays displayable: huge counts, hostile uploads, wide matrices."""

import json

import pandas as pd
import pyarrow as pa
import pytest

from gemmlib import InputError
from gemmlib.charts.explain import GRIDS_WIDTH, grid_cell_size
from gemmlib.charts.model import arrow_safe
from gemmlib.charts.roofline import results_from_json


def test_arrow_safe_turns_counts_past_int64_into_floats_and_keeps_the_rest():
    rows = [{"op": "q_proj", "flops": 2**70, "small": 12, "flag": True, "t": float("inf")}]
    with pytest.raises(OverflowError):
        pa.Table.from_pandas(pd.DataFrame(rows))
    safe = arrow_safe(rows)
    assert safe == [{"op": "q_proj", "flops": float(2**70), "small": 12, "flag": True, "t": None}]
    assert isinstance(safe[0]["small"], int)
    pa.Table.from_pandas(pd.DataFrame(safe))  # no overflow now


ROW = {"bench": "precision", "name": "bf16", "device": "cpu", "device_name": "x", "dtype": "bf16",
       "shape": {"m": 2, "n": 2, "k": 2}, "flops": 16, "bytes": 24, "median_s": 1e-6}


def test_results_upload_accepts_rows_and_refuses_non_text_fields():
    assert [r.name for r in results_from_json(json.dumps({"results": [ROW]}).encode())] == ["bf16"]
    with pytest.raises(InputError, match="'bench' is int"):
        results_from_json(json.dumps([{**ROW, "bench": 5}, ROW]).encode())
    with pytest.raises(InputError, match="'dtype' is dict"):
        results_from_json(json.dumps([{**ROW, "dtype": {}}]).encode())


@pytest.mark.parametrize("k,n", [(1, 1), (3, 2), (8, 8), (12, 12), (16, 16)])
def test_step_grids_fit_the_content_column(k, n):
    cell = grid_cell_size(k, n)
    assert 14 <= cell <= 48
    if cell > 14:  # at the floor the grids may scroll, but only for shapes past 12
        assert cell * (k + 2 * n) + 2 * 28 + 3 * 24 <= GRIDS_WIDTH


def _luminance(rgb: tuple[int, int, int]) -> float:
    """WCAG 2's relative luminance of an sRGB colour."""
    lin = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _rgb(colour: str) -> tuple[int, int, int]:
    import re

    named = {"white": (255, 255, 255), "black": (0, 0, 0), "#000": (0, 0, 0), "#fff": (255, 255, 255)}
    if colour in named:
        return named[colour]
    if colour.startswith("#"):
        return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return tuple(int(v) for v in re.findall(r"\d+", colour)[:3])


@pytest.mark.parametrize("metric", ["GFLOPs", "MB moved", "FLOP/byte", "time µs"])
def test_every_heatmap_label_contrasts_with_its_own_cell_as_wcag_aa_asks(metric):
    """The FLOPs page's heatmap (its default ranges, H100 bf16), drawn by Vega itself (vl-convert's
    SVG): each label's colour against the fill of the cell it sits in is at least 4.5 : 1 (WCAG AA
    for 11-px text). One threshold at mid-viridis gave white labels of 3.5-4.3 : 1."""
    import re

    import vl_convert as vlc

    from gemmlib.charts.explain import heatmap, spec
    from gemmlib.core.flops import dim_range, metric_grid
    from gemmlib.core.hardware import CATALOGUE, DEFAULT_GPU

    grid = metric_grid(dim_range(256, 2048, 256), dim_range(256, 2048, 256, "N"), 1024, "bf16",
                       CATALOGUE[DEFAULT_GPU], 0.7)
    svg = vlc.vegalite_to_svg(json.dumps(spec(heatmap(grid, metric, "t"))))
    rects = [(float(x), float(y), float(w), float(h), _rgb(f)) for x, y, w, h, f in re.findall(
        r'aria-roledescription="rect mark" d="M([\d.]+),([\d.]+)h([\d.]+)v([\d.]+)h-[\d.]+Z" fill="([^"]+)"', svg)]
    texts = [(float(x), float(y), _rgb(f)) for x, y, f in re.findall(
        r'aria-roledescription="text mark"[^>]*transform="translate\(([\d.]+),([\d.]+)\)"[^>]*fill="([^"]+)"', svg)]
    assert len(rects) == len(texts) == 64
    ratios, colours = [], set()
    for x, y, label in texts:
        (fill,) = [f for rx, ry, rw, rh, f in rects if rx <= x <= rx + rw and ry <= y <= ry + rh]
        hi, lo = sorted((_luminance(label), _luminance(fill)), reverse=True)
        ratios.append((hi + 0.05) / (lo + 0.05))
        colours.add(label)
    assert min(ratios) >= 4.5, sorted(ratios)[:5]
    assert len(colours) == 2  # both black and white labels occur: the per-cell choice is exercised


def test_a_large_heatmap_drops_its_numbers_and_stays_on_a_screen():
    """The FLOPs page allows a 40 × 40 grid: a number in every cell overprinted into a smear on a chart 1,360 px tall.
    Past 16 rows or 12 columns the cells carry colour only (the value in the tooltip) and the chart is at most 600 px
    tall; a classroom grid keeps its numbers and its 34-px rows. Drawn by Vega itself (vl-convert's SVG)."""
    import re

    import vl_convert as vlc

    from gemmlib.charts.explain import LABELLED_COLUMNS, LABELLED_ROWS, MAX_HEIGHT, heatmap, spec
    from gemmlib.core.flops import dim_range, metric_grid
    from gemmlib.core.hardware import CATALOGUE, DEFAULT_GPU

    def drawn(n: int) -> tuple[int, int, dict]:
        grid = metric_grid(dim_range(32, 32 * n, 32), dim_range(32, 32 * n, 32, "N"), 1024, "bf16",
                           CATALOGUE[DEFAULT_GPU], 0.7)
        s = spec(heatmap(grid, "GFLOPs", "t"))
        svg = vlc.vegalite_to_svg(json.dumps(s))
        return (len(re.findall(r'aria-roledescription="rect mark"', svg)),
                len(re.findall(r'aria-roledescription="text mark"', svg)), s)

    rects, texts, s = drawn(40)
    assert (rects, texts) == (1600, 0) and s["height"] == MAX_HEIGHT
    assert "GFLOPs" in json.dumps(s["encoding"]["tooltip"])  # the value is still there, on hover
    rects, texts, s = drawn(LABELLED_COLUMNS)
    assert rects == texts == LABELLED_COLUMNS**2 and s["height"] == 34 * LABELLED_COLUMNS <= 34 * LABELLED_ROWS


def test_the_staircase_tooltip_names_its_measure_in_the_readers_language():
    """The wave chart's tooltip showed "tile efficiency" / "wave efficiency" in English on the Chinese page (its
    legend was translated): the tooltip reads a translated column."""
    from gemmlib.charts.explain import STAIRCASE_MEASURES, spec, staircase_chart

    rows = [{"N": n, "efficiency": 0.9, "tile efficiency": 0.95, "wave efficiency": 0.94, "tiles": 3, "waves": 1}
            for n in (128, 256)]
    s = spec(staircase_chart(rows, gettext=lambda t: f"«{t}»"))
    values = next(iter(s["datasets"].values()))
    assert {v["shown"] for v in values} == {f"«{t}»" for t in STAIRCASE_MEASURES.values()}
    assert any(t.get("field") == "shown" for t in s["encoding"]["tooltip"])


@pytest.mark.parametrize("preset, seq", [("llama-3-8b", 1024), ("qwen2.5-0.5b", 512), ("llama-3.1-405b", 8192)])
def test_the_gemms_to_scale_fit_one_screen_and_keep_their_aspect(preset, seq):
    """The Transformer GEMMs drawing was 760 px wide and 1,142 px tall for Llama-3-8B (two screens; its legend at the
    top of the first, the FFN rows on the second, clipped in a 473-px column at 150 % zoom): now at most
    SHAPES_MAX_HEIGHT tall, narrowed to keep its units square, the legend above it."""
    from gemmlib.charts import model as cm
    from gemmlib.llm.accounting import layer_ops
    from gemmlib.llm.presets import from_name

    ops = layer_ops(from_name(preset), seq)
    spec = cm.gemm_shapes_spec(ops)
    rects, _ = cm.shape_rects(ops)
    xr, yr = max(r["x2"] for r in rects), max(r["y2"] for r in rects)
    assert spec["height"] <= cm.SHAPES_MAX_HEIGHT and spec["width"] <= 760
    if spec["height"] == cm.SHAPES_MAX_HEIGHT:
        assert spec["width"] == max(200, int(cm.SHAPES_MAX_HEIGHT * xr / yr))  # one unit is as wide as it is tall
    assert "orient': 'top'" in str(spec)


@pytest.mark.parametrize("metric,fmt", [("GFLOPs", ",.3~f"), ("MB moved", ",.3~f"), ("time µs", ",.3~g")])
def test_a_heatmap_never_prints_zero_for_non_zero_work(metric, fmt):
    """M = 1 beside M = 2048 (the FLOPs page's ranges from 1, K = 1 … 1024): 2·1·1·1024 FLOPs are 0.000002 GFLOPs,
    which ",.3~f" printed as "0". Below 1 a cell shows three significant digits (0.000524, 2.05e-6); from 1 up the
    page's format; "0" only for zero. Drawn by Vega itself (vl-convert's SVG)."""
    import re

    import vl_convert as vlc

    from gemmlib.charts.explain import heatmap, spec
    from gemmlib.core.flops import metric_grid
    from gemmlib.core.hardware import CATALOGUE, DEFAULT_GPU

    for k in (1, 1024):
        grid = metric_grid([1, 2, 256, 2048], [1, 3, 256, 2048], k, "bf16", CATALOGUE[DEFAULT_GPU], 0.7)
        svg = vlc.vegalite_to_svg(json.dumps(spec(heatmap(grid, metric, "t", fmt))))
        labels = re.findall(r'aria-roledescription="text mark"[^>]*>([^<]*)<', svg)
        assert len(labels) == 16
        for label, row in zip(labels, grid, strict=True):  # drawn in the data's order
            value = float(label.replace(",", ""))
            assert value != 0, (k, row)
            assert value == pytest.approx(row[metric], rel=5e-3), (label, row)  # three significant digits or more
    zero = spec(heatmap([{"M": 1, "N": 1, metric: 0.0}, {"M": 1, "N": 2, metric: 5e-7}], metric, "t", fmt))
    assert re.findall(r'aria-roledescription="text mark"[^>]*>([^<]*)<', vlc.vegalite_to_svg(json.dumps(zero))) == \
        ["0", "5e-7"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_gemms_to_scale_title_fits_its_narrowed_drawing(lang):
    """Narrowed to keep its aspect (about 425 px for Llama-3-8B), the drawing clipped its one-line title at the
    canvas's edge ("… attention per sequence a", in Chinese "…注意力按单个序列、单"): the title breaks before
    its bracket instead, each line within the drawing's width."""
    import unicodedata

    import ui
    from gemmlib.charts import model as cm
    from gemmlib.llm.accounting import layer_ops
    from gemmlib.llm.presets import from_name

    spec = cm.gemm_shapes_spec(layer_ops(from_name("llama-3-8b"), 1024), gettext=ui.translations(lang).gettext)
    lines = spec["title"] if isinstance(spec["title"], list) else [spec["title"]]
    for line in lines:
        assert sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line) * 7.5 <= spec["width"], (
            line, spec["width"])
    assert "".join(lines).replace(" ", "").endswith(("head)", "个头）"))
