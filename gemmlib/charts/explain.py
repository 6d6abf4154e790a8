"""Altair chart builders for the explainer pages (Accumulate, FLOPs).

They live in gemmlib (not in the pages) so that a report or a notebook can draw
the same pictures. They take plain Python data from gemmlib's other modules and
return ``alt.Chart`` objects; nothing here imports streamlit or torch. Every text a
reader sees goes through ``gettext`` (English by default; a page passes ``gettext=ui._``);
the data keep their keys and ids, axes and legends show them by their labels.
"""

from __future__ import annotations

import json
import math
import re

import altair as alt
import numpy as np
import pandas as pd

from gemmlib.charts.aria import localized
from gemmlib.core.flops import METRIC_LABELS
from gemmlib.core.i18n import N_, Translate, english
from gemmlib.explain.reference import LOOP_ORDER_NAMES, Step, fmt_num

HIGHLIGHT = "#e4572e"  # the cell being read or written in this step
READ = "#f3a712"  # operands of the step
DONE = "#a8c5da"  # finished / present values
PENDING = "#eeeeee"  # not computed yet


def _matrix_frame(values: np.ndarray, name: str, hot: set[tuple[int, int]], role: str) -> pd.DataFrame:
    rows = []
    m, n = values.shape
    for i in range(m):
        for j in range(n):
            v = values[i, j]
            empty = bool(np.isnan(v))
            rows.append({"matrix": name, "row": i, "col": j, "value": None if empty else float(v),
                         "label": "" if empty else fmt_num(float(v)),
                         "state": role if (i, j) in hot else ("pending" if empty else "value"),
                         "cell": f"{name}[{i},{j}]"})
    return pd.DataFrame(rows)


def _grid(df: pd.DataFrame, title: str, cell: int) -> alt.Chart:
    m = int(df["row"].max()) + 1
    n = int(df["col"].max()) + 1
    color = alt.Color("state:N", legend=None,
                      scale=alt.Scale(domain=["read", "write", "value", "pending"],
                                      range=[READ, HIGHLIGHT, DONE, PENDING]))
    base = alt.Chart(df, title=title).encode(
        x=alt.X("col:O", title=None, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("row:O", title=None),
    )
    rect = base.mark_rect(stroke="white", strokeWidth=2).encode(
        color=color, tooltip=[alt.Tooltip("cell:N"), alt.Tooltip("value:Q")])
    font = max(9, min(16, cell // 3))
    text = base.mark_text(fontSize=font).encode(text="label:N")
    return (rect + text).properties(width=cell * n, height=cell * m)


GRIDS_WIDTH = 680  # px available to the three grids: a page's content column at a 1280 px window


def grid_cell_size(k: int, n: int, width: int = GRIDS_WIDTH) -> int:
    """Cell size (px) so that A (K wide), B and D (N wide each) fit side by side in ``width``."""
    overhead = 2 * 28 + 3 * 24  # spacing between the grids and their row-index axes
    return max(14, min(48, (width - overhead) // max(1, k + 2 * n)))


def step_grids(a: np.ndarray, b: np.ndarray, d: np.ndarray, step: Step, cell: int | None = None) -> alt.HConcatChart:
    """A, B and D side by side; the step's A and B elements in amber, its D cells in red.

    ``d`` is the partially built D (NaN = not computed yet), e.g. ``Trace.d_after``.
    """
    cell = cell or grid_cell_size(a.shape[1], b.shape[1])
    ga = _grid(_matrix_frame(np.asarray(a, float), "A", set(step.a_cells), "read"), "A (M×K)", cell)
    gb = _grid(_matrix_frame(np.asarray(b, float), "B", set(step.b_cells), "read"), "B (K×N)", cell)
    gd = _grid(_matrix_frame(np.asarray(d, float), "D", set(step.d_cells), "write"), "D (M×N)", cell)
    return alt.hconcat(ga, gb, gd, spacing=28).configure_view(strokeWidth=0)


def _grid_spec(values: np.ndarray, name: str, hot: set[tuple[int, int]], role: str, title: str,
               cell: int) -> dict:
    m, n = values.shape
    data = []
    for i in range(m):
        for j in range(n):
            v = float(values[i, j])
            empty = v != v
            data.append({"row": i, "col": j, "value": None if empty else v,
                         "label": "" if empty else fmt_num(v),
                         "state": role if (i, j) in hot else ("pending" if empty else "value"),
                         "cell": f"{name}[{i},{j}]"})
    enc = {"x": {"field": "col", "type": "ordinal", "title": None, "axis": {"labelAngle": 0}},
           "y": {"field": "row", "type": "ordinal", "title": None}}
    return {
        "title": title, "width": cell * n, "height": cell * m, "data": {"values": data},
        "encoding": enc,
        "layer": [
            {"mark": {"type": "rect", "stroke": "white", "strokeWidth": 2},
             "encoding": {"color": {"field": "state", "type": "nominal", "legend": None,
                                    "scale": {"domain": ["read", "write", "value", "pending"],
                                              "range": [READ, HIGHLIGHT, DONE, PENDING]}},
                          "tooltip": [{"field": "cell", "type": "nominal"},
                                      {"field": "value", "type": "quantitative"}]}},
            {"mark": {"type": "text", "fontSize": max(9, min(16, cell // 3))},
             "encoding": {"text": {"field": "label", "type": "nominal"}}},
        ],
    }


def step_grids_spec(a: np.ndarray, b: np.ndarray, d: np.ndarray, step: Step, cell: int | None = None) -> dict:
    """The same picture as :func:`step_grids` as a plain Vega-Lite dict.

    Built by hand because Altair's schema validation costs ~0.1 s per chart, too
    slow for an animation that must advance several steps a second.
    """
    cell = cell or grid_cell_size(a.shape[1], b.shape[1])
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "hconcat": [
            _grid_spec(np.asarray(a, float), "A", set(step.a_cells), "read", "A (M×K)", cell),
            _grid_spec(np.asarray(b, float), "B", set(step.b_cells), "read", "B (K×N)", cell),
            _grid_spec(np.asarray(d, float), "D", set(step.d_cells), "write", "D (M×N)", cell),
        ],
        "spacing": 28,
        "config": {"view": {"strokeWidth": 0}},
    }


def running_sum_chart(rows: list[dict], current_k: int | None = None, cell: str = "D[0,0]", *,
                      gettext: Translate = english) -> alt.Chart:
    """The article's line chart: the running sum of one D cell over k."""
    df = pd.DataFrame(rows)
    df["k (1-based)"] = df["k"] + 1
    x_title, y_title = gettext("k (the k-th product added)"), gettext("{cell} so far").format(cell=cell)
    # what a screen reader says of each point, label and the highlight (they said "running_sum: 7" and
    # "k (1-based): 1", the data's own names, on the Chinese page too)
    df["_aria"] = [f"{x_title}: {k}; {y_title}: {fmt_num(float(v))}"
                   for k, v in zip(df["k (1-based)"], df["running_sum"], strict=True)]
    base = alt.Chart(df).encode(
        x=alt.X("k (1-based):O", title=x_title, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("running_sum:Q", title=y_title),
        description=alt.Description("_aria:N"),
        tooltip=[alt.Tooltip("term:N", title=gettext("term")), alt.Tooltip("product:Q", title=gettext("product")),
                 alt.Tooltip("running_sum:Q", title=gettext("running sum"))],
    )
    chart = base.mark_line(point=alt.OverlayMarkDef(size=80)) + base.mark_text(dy=-12).encode(
        text=alt.Text("running_sum:Q", format=",.4~g"))
    if current_k is not None and 0 <= current_k < len(df):
        cur = df.iloc[[current_k]]
        chart = chart + alt.Chart(cur).mark_point(size=260, color=HIGHLIGHT, filled=True).encode(
            x="k (1-based):O", y="running_sum:Q", description=alt.Description("_aria:N"))
    return chart.properties(height=260, title=gettext("{cell} accumulating over k").format(cell=cell))


@localized
def loads_chart(rows: list[dict], *, gettext: Translate = english) -> alt.Chart:
    """Element loads of A and B per loop order (stacked bars). rows: order, operand, loads."""
    df = pd.DataFrame(rows)
    # the orders by their names as shown, in the data itself: a screen reader read the axis's values and each bar
    # from the data ("inner, outer, tiled" on the Chinese page), not from a labelExpr
    df["shown"] = [gettext(LOOP_ORDER_NAMES.get(o, o)) for o in df["order"]]
    loop, operand, loads = gettext("loop order"), gettext("operand"), gettext("loads")
    df["_aria"] = [f"{loop}: {o}; {operand}: {a}; {loads}: {n:,}"
                   for o, a, n in zip(df["shown"], df["operand"], df["loads"], strict=True)]
    return alt.Chart(df).mark_bar().encode(
        y=alt.Y("shown:N", title=None, sort=None),
        x=alt.X("loads:Q", title=gettext("element loads from memory")),
        color=alt.Color("operand:N", title=operand),
        description=alt.Description("_aria:N"),
        tooltip=[alt.Tooltip("shown:N", title=loop),
                 alt.Tooltip("operand:N", title=gettext("operand")),
                 alt.Tooltip("loads:Q", format=",", title=gettext("loads"))],
    ).properties(height=140)


ERROR_METRICS = {"median relative error": N_("median relative error"),
                 "max relative error": N_("max relative error")}  # AccumulationStudy.records' keys, as shown


def accumulation_chart(records: list[dict], metric: str = "median relative error", *,
                       gettext: Translate = english) -> alt.Chart:
    """Error vs K per accumulator on log-log axes; exact (zero) errors are drawn at the floor."""
    df = pd.DataFrame(records)
    floor = 1e-18
    shown = gettext(ERROR_METRICS.get(metric, metric))
    df["plotted"] = df[metric].clip(lower=floor).replace(math.inf, np.nan)
    df["note"] = np.where(df[metric] == 0, gettext("exact (0)"), df[metric].map(lambda v: f"{v:.2e}"))
    base = alt.Chart(df).encode(
        x=alt.X("K:Q", scale=alt.Scale(type="log", base=2), title=gettext("K (length of the dot product)")),
        y=alt.Y("plotted:Q", scale=alt.Scale(type="log"), title=shown),
        color=alt.Color("accumulator:N", title=gettext("accumulator"),
                        scale=alt.Scale(domain=["fp16", "fp32", "fp64"], range=[HIGHLIGHT, "#1b998b", "#2e294e"])),
        tooltip=[alt.Tooltip("accumulator:N", title=gettext("accumulator")), "K:Q",
                 alt.Tooltip("note:N", title=shown),
                 alt.Tooltip("|exact sum|:Q", format=".4g", title=gettext("|exact sum|"))],
    )
    return (base.mark_line() + base.mark_point(filled=True)).properties(
        height=300, title=gettext("Accumulated error vs K (exact results drawn at 1e-18)"))


TIP_TITLES = {**METRIC_LABELS, "TFLOP/s": "TFLOP/s", "bound": N_("bound")}  # heatmap fields, as shown


def heatmap(records: list[dict], value: str, title: str, fmt: str = ".3g",
            tooltip_fields: list[tuple[str, str, str | None]] | None = None, *,
            gettext: Translate = english) -> alt.Chart:
    """An M × N heatmap with the value printed in each cell (records: M, N, value, …).

    ``tooltip_fields``: (field, vega-lite type, d3 format or None) for the tooltip. ``title`` comes
    as shown (translated); the fields are named through ``gettext``.
    """
    df = pd.DataFrame(records)
    fields = tooltip_fields or [("M", "ordinal", None), ("N", "ordinal", None), (value, "quantitative", fmt)]

    def name(f: str) -> str:
        return gettext(TIP_TITLES.get(f, f))

    tips = [alt.Tooltip(f, type=t, format=f_, title=name(f)) if f_ else alt.Tooltip(f, type=t, title=name(f))
            for f, t, f_ in fields]
    # every row and column labelled (Vega hid every other M where the rows came out 22 px)
    base = alt.Chart(df).encode(
        x=alt.X("N:O", title="N", axis=alt.Axis(labelAngle=0, labelOverlap=False)),
        y=alt.Y("M:O", title="M", sort="descending", axis=alt.Axis(labelOverlap=False)),
    )
    rect = base.mark_rect().encode(color=alt.Color(f"{value}:Q", title=name(value),
                                                   scale=alt.Scale(scheme="viridis")),
                                   tooltip=tips)
    # Each label black or white, whichever contrasts more with its own cell's colour (Vega's
    # contrast() of WCAG luminances, on the colour the scale gives that cell): at least 4.58 : 1 on
    # any colour, where one threshold in the middle of viridis gave white labels of 3.5-4.3 : 1.
    rows, cols = df["M"].nunique(), df["N"].nunique()
    if rows > LABELLED_ROWS or cols > LABELLED_COLUMNS:
        # too many cells to print a number in each (40 × 40 overprinted into a smear, 1,360 px tall): colour only,
        # the value in the tooltip, the chart no taller than a screen
        return rect.properties(title=title, height=max(240, min(MAX_HEIGHT, 15 * rows)))
    cell = f"scale('color', datum[{json.dumps(value)}])"
    text = base.transform_calculate(_label=small_values_label(f"datum[{json.dumps(value)}]", fmt)).mark_text(
        fontSize=alt.ExprRef(cell_font_expr(cols, label_chars(df[value], fmt)))).encode(
        text=alt.Text("_label:N"),
        color=alt.condition(f"contrast('white', {cell}) >= contrast('black', {cell})",
                            alt.value("white"), alt.value("black")),
        tooltip=tips,
    )
    # the height is the grid's own (fit-x): Streamlit's theme fits the whole chart, title and N axis included, into
    # the height asked for, which left 22-px rows
    return (rect + text).properties(title=title, height=max(240, ROW_PX * rows),
                                    autosize=alt.AutoSizeParams(type="fit-x", contains="padding"))


def label_chars(values: pd.Series, fmt: str) -> int:
    """About how many characters the longest number printed in a cell has (``fmt`` is d3's; Python's ``g``
    with the same precision is a close stand-in for the others: 4,295, 2.05e-06)."""
    digits = re.search(r"\.(\d+)", fmt)
    p = int(digits.group(1)) if digits else 3
    finite = [float(v) for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    if fmt.endswith("f"):  # fixed decimals, trailing zeros dropped (~): 4,294.967, 0.134
        return max([len(f"{v:,.{p}f}".rstrip("0").rstrip(".")) for v in finite] + [3])
    return max([len(f"{v:,.{p}g}") for v in finite] + [len(f"{v:,.0f}") for v in finite if abs(v) >= 1] + [3])


def cell_font_expr(columns: int, chars: int) -> str:
    """A Vega expression for the cell numbers' font size: as large as the cell's width lets ``chars`` characters
    (about 0.55 em each in the charts' font, digits and separators, 6 px of margin) be, from 11 px (the old fixed
    size) up to 16 px. At 125 % and 150 % zoom a page's 520-560 px column gave 8 columns 11-px numbers in cells
    with room for 14."""
    return f"clamp(floor((width / {max(1, columns)} - 6) / ({max(1, chars)} * 0.55)), 11, 16)"


def small_values_label(v: str, fmt: str) -> str:
    """A Vega expression writing the number ``v`` for a cell: ``fmt`` from 1 up, three significant digits below
    (0.000524, then 2.05e-6), so that non-zero work never prints as "0" (``,.3~f`` wrote 2·1·1·1024 FLOPs,
    0.000002 GFLOPs, as "0"); "0" only for zero, nothing for a missing value."""
    return (f"!isValid({v}) || !isFinite({v}) ? '' : {v} == 0 ? '0' : abs({v}) >= 1 ? format({v}, {json.dumps(fmt)}) "
            f": abs({v}) >= 1e-4 ? format({v}, '.3~r') : format({v}, '.2~e')")


LABELLED_ROWS, LABELLED_COLUMNS = 16, 12  # a number printed in each cell up to this grid (34 px rows, ~60 px columns)
MAX_HEIGHT = 600  # a larger grid's height: it fits a projected screen
ROW_PX = 34  # a labelled grid's row: room for its M label and a 16-px number


STAIRCASE_MEASURES = {"efficiency": N_("efficiency"), "tile efficiency": N_("tile efficiency"),
                      "wave efficiency": N_("wave efficiency")}  # wave_staircase's keys, as shown


@localized
def staircase_chart(records: list[dict], x: str = "N", *, gettext: Translate = english) -> alt.Chart:
    """Efficiency (useful / launched work) as N steps past multiples of the tile."""
    df = pd.DataFrame(records)
    long = df.melt(id_vars=[c for c in df.columns if c not in ("tile efficiency", "wave efficiency",
                                                                "efficiency")],
                   value_vars=["efficiency", "tile efficiency", "wave efficiency"],
                   var_name="measure", value_name="share")
    # the measures by their names as shown, in the data: the legend's values and each line's screen-reader text come
    # from the data ("efficiency, tile efficiency, wave efficiency" on the Chinese page), not from a labelExpr
    long["shown"] = [gettext(STAIRCASE_MEASURES[m]) for m in long["measure"]]
    y_title = gettext("useful share of launched work")
    long["_aria"] = [f"{m}: {x} = {v:,}, {y_title} {sh:.1%}"
                     for m, v, sh in zip(long["shown"], long[x], long["share"], strict=True)]
    shown = [gettext(STAIRCASE_MEASURES[m]) for m in ("efficiency", "tile efficiency", "wave efficiency")]
    return alt.Chart(long).mark_line(interpolate="step-after").encode(
        x=alt.X(f"{x}:Q", title=x),
        y=alt.Y("share:Q", title=y_title, axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("shown:N", title=None, scale=alt.Scale(domain=shown), legend=alt.Legend(labelLimit=300)),
        description=alt.Description("_aria:N"),
        strokeDash=alt.condition(alt.datum.measure == "efficiency", alt.value([1, 0]), alt.value([4, 3])),
        tooltip=[f"{x}:Q", alt.Tooltip("shown:N", title=gettext("measure")),
                 alt.Tooltip("share:Q", format=".1%", title=gettext("share")),
                 alt.Tooltip("tiles:Q", title=gettext("tiles")), alt.Tooltip("waves:Q", title=gettext("waves"))],
    ).properties(height=280, title=gettext("Tile and wave quantization"))


def spec(chart: alt.TopLevelMixin) -> dict:
    """The chart as a Vega-Lite dict without Altair's schema validation (~0.1 s saved per chart).

    The builders here are exercised by tests with validation on; pages hand the
    unvalidated dict to ``st.vega_lite_chart`` to keep reruns fast.
    """
    return chart.to_dict(validate=False)
