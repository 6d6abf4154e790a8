"""Altair charts of the batching benchmark (shared by the Batching page and the report):
intensity against batch per mode, and measured throughput against batch."""

from __future__ import annotations

from gemmlib.core.errors import InputError
from gemmlib.core.results import BenchResult


def model_chart(rows_: list[dict], ridge: float | None = None):
    """Intensity against batch per mode (log-log), with the device's ridge point as a rule."""
    import altair as alt
    import pandas as pd

    df = pd.DataFrame(rows_)
    lines = alt.Chart(df).mark_line(point=True).encode(
        x=alt.X("batch:Q", scale=alt.Scale(type="log", base=2), title="batch size B"),
        y=alt.Y("intensity:Q", scale=alt.Scale(type="log"), title="FLOP per byte"),
        color="mode:N", strokeDash="mode:N",
        tooltip=["mode", "batch", alt.Tooltip("intensity:Q", format=".4g")])
    if ridge:
        rule = alt.Chart(pd.DataFrame([{"ridge": ridge, "label": f"ridge {ridge:.0f} FLOP/B"}])).mark_rule(
            color="black", strokeDash=[4, 4]).encode(y="ridge:Q", tooltip=["label"])
        return (lines + rule).properties(height=280, title="Arithmetic intensity by batch (dashed: ridge point)")
    return lines.properties(height=280, title="Arithmetic intensity by batch")


def batching_chart(results: list[BenchResult], metric: str = "tflops"):
    """A metric (tflops, gbps or intensity) against batch size, one line per mode, log axes."""
    import altair as alt
    import pandas as pd

    titles = {"tflops": "TFLOP/s", "gbps": "achieved GB/s", "intensity": "FLOP per byte",
              "per_request_s": "seconds per request"}
    if metric not in titles:
        raise InputError(f"unknown metric {metric!r}; choose from {', '.join(titles)}")
    recs = []
    for r in results:
        if not r.median_s:
            continue
        val = {"tflops": r.tflops, "gbps": r.gbps, "intensity": r.intensity,
               "per_request_s": r.median_s / r.shape["batch"]}[metric]
        recs.append({"batch": r.shape["batch"], "mode": r.name, metric: val})
    if not recs:
        return None
    df = pd.DataFrame(recs)
    return alt.Chart(df).mark_line(point=True).encode(
        x=alt.X("batch:Q", scale=alt.Scale(type="log", base=2), title="batch size B"),
        y=alt.Y(f"{metric}:Q", scale=alt.Scale(type="log"), title=titles[metric]),
        color=alt.Color("mode:N"), tooltip=["mode", "batch", alt.Tooltip(f"{metric}:Q", format=".4g")],
    ).properties(height=300, title=f"{titles[metric]} by batch size")
