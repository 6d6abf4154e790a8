"""Altair chart builders for the explainer pages (Accumulate, FLOPs).

They live in gemmlib (not in the pages) so that a report or a notebook can draw
the same pictures. They take plain Python data from gemmlib's other modules and
return ``alt.Chart`` objects; nothing here imports streamlit or torch.
"""

from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd

from gemmlib.explain.reference import Step, fmt_num

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


def running_sum_chart(rows: list[dict], current_k: int | None = None, cell: str = "D[0,0]") -> alt.Chart:
    """The article's line chart: the running sum of one D cell over k."""
    df = pd.DataFrame(rows)
    df["k (1-based)"] = df["k"] + 1
    base = alt.Chart(df).encode(
        x=alt.X("k (1-based):O", title="k (the k-th product added)", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("running_sum:Q", title=f"{cell} so far"),
        tooltip=["term:N", alt.Tooltip("product:Q"), alt.Tooltip("running_sum:Q", title="running sum")],
    )
    chart = base.mark_line(point=alt.OverlayMarkDef(size=80)) + base.mark_text(dy=-12).encode(
        text=alt.Text("running_sum:Q", format=",.4~g"))
    if current_k is not None and 0 <= current_k < len(df):
        cur = df.iloc[[current_k]]
        chart = chart + alt.Chart(cur).mark_point(size=260, color=HIGHLIGHT, filled=True).encode(
            x="k (1-based):O", y="running_sum:Q")
    return chart.properties(height=260, title=f"{cell} accumulating over k")


def loads_chart(rows: list[dict]) -> alt.Chart:
    """Element loads of A and B per loop order (stacked bars). rows: order, operand, loads."""
    df = pd.DataFrame(rows)
    return alt.Chart(df).mark_bar().encode(
        y=alt.Y("order:N", title=None, sort=None),
        x=alt.X("loads:Q", title="element loads from memory"),
        color=alt.Color("operand:N", title="operand"),
        tooltip=["order:N", "operand:N", alt.Tooltip("loads:Q", format=",")],
    ).properties(height=140)


def accumulation_chart(records: list[dict], metric: str = "median relative error") -> alt.Chart:
    """Error vs K per accumulator on log-log axes; exact (zero) errors are drawn at the floor."""
    df = pd.DataFrame(records)
    floor = 1e-18
    df["plotted"] = df[metric].clip(lower=floor).replace(math.inf, np.nan)
    df["note"] = np.where(df[metric] == 0, "exact (0)", df[metric].map(lambda v: f"{v:.2e}"))
    base = alt.Chart(df).encode(
        x=alt.X("K:Q", scale=alt.Scale(type="log", base=2), title="K (length of the dot product)"),
        y=alt.Y("plotted:Q", scale=alt.Scale(type="log"), title=metric),
        color=alt.Color("accumulator:N", title="accumulator",
                        scale=alt.Scale(domain=["fp16", "fp32", "fp64"], range=[HIGHLIGHT, "#1b998b", "#2e294e"])),
        tooltip=["accumulator:N", "K:Q", alt.Tooltip("note:N", title=metric),
                 alt.Tooltip("|exact sum|:Q", format=".4g")],
    )
    return (base.mark_line() + base.mark_point(filled=True)).properties(
        height=300, title="Accumulated error vs K (exact results drawn at 1e-18)")


def heatmap(records: list[dict], value: str, title: str, fmt: str = ".3g",
            tooltip_fields: list[tuple[str, str, str | None]] | None = None) -> alt.Chart:
    """An M × N heatmap with the value printed in each cell (records: M, N, value, …).

    ``tooltip_fields``: (field, vega-lite type, d3 format or None) for the tooltip.
    """
    df = pd.DataFrame(records)
    fields = tooltip_fields or [("M", "ordinal", None), ("N", "ordinal", None), (value, "quantitative", fmt)]
    tips = [alt.Tooltip(f, type=t, format=f_) if f_ else alt.Tooltip(f, type=t) for f, t, f_ in fields]
    base = alt.Chart(df).encode(
        x=alt.X("N:O", title="N", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("M:O", title="M", sort="descending"),
    )
    rect = base.mark_rect().encode(color=alt.Color(f"{value}:Q", title=value,
                                                   scale=alt.Scale(scheme="viridis")),
                                   tooltip=tips)
    mid = float(df[value].min() + df[value].max()) / 2 if len(df) else 0.0
    text = base.mark_text(fontSize=11).encode(
        text=alt.Text(f"{value}:Q", format=fmt),
        color=alt.condition(alt.datum[value] > mid, alt.value("black"), alt.value("white")),
        tooltip=tips,
    )
    return (rect + text).properties(title=title, height=max(240, 34 * df["M"].nunique()))


def staircase_chart(records: list[dict], x: str = "N") -> alt.Chart:
    """Efficiency (useful / launched work) as N steps past multiples of the tile."""
    df = pd.DataFrame(records)
    long = df.melt(id_vars=[c for c in df.columns if c not in ("tile efficiency", "wave efficiency",
                                                                "efficiency")],
                   value_vars=["efficiency", "tile efficiency", "wave efficiency"],
                   var_name="measure", value_name="share")
    return alt.Chart(long).mark_line(interpolate="step-after").encode(
        x=alt.X(f"{x}:Q", title=x),
        y=alt.Y("share:Q", title="useful share of launched work", axis=alt.Axis(format="%"),
                scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("measure:N", title=None),
        strokeDash=alt.condition(alt.datum.measure == "efficiency", alt.value([1, 0]), alt.value([4, 3])),
        tooltip=[f"{x}:Q", "measure:N", alt.Tooltip("share:Q", format=".1%"), "tiles:Q", "waves:Q"],
    ).properties(height=280, title="Tile and wave quantization")


def spec(chart: alt.TopLevelMixin) -> dict:
    """The chart as a Vega-Lite dict without Altair's schema validation (~0.1 s saved per chart).

    The builders here are exercised by tests with validation on; pages hand the
    unvalidated dict to ``st.vega_lite_chart`` to keep reruns fast.
    """
    return chart.to_dict(validate=False)
