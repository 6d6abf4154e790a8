"""Altair charts of the batching benchmark (shared by the Batching page and the report):
intensity against batch per mode, and measured throughput against batch.

Every text a reader sees goes through ``gettext`` (English by default; the page passes
``gettext=ui._``), as every chart builder does (gemmlib/core/i18n.py).
"""

from __future__ import annotations

from gemmlib.charts.aria import localized
from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_, Translate, english
from gemmlib.core.results import BenchResult


def _batch_axis(df):
    """Ticks at the batch sizes drawn, as whole numbers: a log axis between 1 and 4 put its ticks at 1.2, 1.6, 2.2 …,
    batches no one can run."""
    import altair as alt

    return alt.Axis(values=sorted({int(b) for b in df["batch"]}), format="d")


@localized
def model_chart(rows_: list[dict], ridge: float | None = None, *, gettext: Translate = english):
    """Intensity against batch per mode (log-log), with the device's ridge point as a rule."""
    import altair as alt
    import pandas as pd

    df = pd.DataFrame(rows_)
    lines = alt.Chart(df).mark_line(point=True).encode(
        x=alt.X("batch:Q", scale=alt.Scale(type="log", base=2), title=gettext("batch size B"), axis=_batch_axis(df)),
        y=alt.Y("intensity:Q", scale=alt.Scale(type="log"), title=gettext("FLOP per byte")),
        color=alt.Color("mode:N", title=gettext("mode")), strokeDash=alt.StrokeDash("mode:N", title=gettext("mode")),
        tooltip=[alt.Tooltip("mode:N", title=gettext("mode")), alt.Tooltip("batch:Q", title=gettext("batch")),
                 alt.Tooltip("intensity:Q", format=".4g", title=gettext("FLOP per byte"))])
    if ridge:
        label = gettext("ridge {ridge:.0f} FLOP/B").format(ridge=ridge)
        rule = alt.Chart(pd.DataFrame([{"ridge": ridge, "label": label}])).mark_rule(
            color="black", strokeDash=[4, 4]).encode(y="ridge:Q", tooltip=[alt.Tooltip("label:N", title=gettext("ridge point"))])
        return (lines + rule).properties(height=280, title=gettext("Arithmetic intensity by batch (dashed: ridge point)"))
    return lines.properties(height=280, title=gettext("Arithmetic intensity by batch"))


METRIC_TITLES = {"tflops": N_("TFLOP/s"), "gbps": N_("achieved GB/s"), "intensity": N_("FLOP per byte"),
                 "per_request_s": N_("seconds per request")}


@localized
def batching_chart(results: list[BenchResult], metric: str = "tflops", *, gettext: Translate = english):
    """A metric (tflops, gbps or intensity) against batch size, one line per mode, log axes."""
    import altair as alt
    import pandas as pd

    if metric not in METRIC_TITLES:
        raise InputError(N_("unknown metric {metric!r}; choose from {choices}"), metric=metric,
                         choices=", ".join(METRIC_TITLES))
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
    title = gettext(METRIC_TITLES[metric])
    return alt.Chart(df).mark_line(point=True).encode(
        x=alt.X("batch:Q", scale=alt.Scale(type="log", base=2), title=gettext("batch size B"), axis=_batch_axis(df)),
        y=alt.Y(f"{metric}:Q", scale=alt.Scale(type="log"), title=title),
        color=alt.Color("mode:N", title=gettext("mode")),
        tooltip=[alt.Tooltip("mode:N", title=gettext("mode")), alt.Tooltip("batch:Q", title=gettext("batch")),
                 alt.Tooltip(f"{metric}:Q", format=".4g", title=title)],
    ).properties(height=300, title=gettext("{metric} by batch size").format(metric=title))
