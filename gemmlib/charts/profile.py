"""Altair charts for the profiler and the GPU monitor (shared by the Profiler page and the report).

Builders take a profiler result (or its ``to_dict()``) and a monitor result, as data;
nothing here imports streamlit or torch. Every text a reader sees goes through ``gettext``
(English by default, for the report; the page passes ``gettext=ui._``).
"""

from __future__ import annotations

from typing import Any

from gemmlib.charts.aria import localized
from gemmlib.core.i18n import N_, Translate, english
from gemmlib.core.targets import BANDWIDTH_TARGET, GEMM_TARGET, METRICS, UTIL_TARGET

KIND_LABELS = {"gemm": "GEMM", "attention": N_("fused attention (GEMM work)"), "other": N_("not GEMM")}
KIND_LEGEND = {"labelLimit": 240}  # "fused attention (GEMM work)" whole (Vega cuts a label at 160 px)
KIND_RANGE = ["#1f77b4", "#6baed6", "#ff7f0e"]
SOURCE_LABELS = {"measured": N_("measured"), "predicted": N_("predicted")}


def _kind_colors(gettext: Translate = english) -> Any:
    import altair as alt

    return alt.Scale(domain=[gettext(v) for v in KIND_LABELS.values()], range=KIND_RANGE)


def _as_dict(res: Any) -> dict:
    return res.to_dict() if hasattr(res, "to_dict") else dict(res)


@localized
def share_chart(res: Any, predicted_share: float | None = None,
                title: str = N_("GEMM share of the time"), *, gettext: Translate = english) -> Any:
    """One stacked bar per source (measured; predicted if given) with the 80 % target as a rule."""
    import altair as alt

    kind = {k: gettext(v) for k, v in KIND_LABELS.items()}
    src = {k: gettext(v) for k, v in SOURCE_LABELS.items()}

    d = _as_dict(res)
    total = d["total_time_s"] or 1.0
    by_kind: dict[str, float] = {"gemm": 0.0, "attention": 0.0, "other": 0.0}
    for o in d["ops"]:
        by_kind[o["kind"]] += o["time_s"]
    rows: list[dict[str, Any]] = [
        {"source": src["measured"], "kind": kind[k], "share": v / total, "order": i}
        for i, (k, v) in enumerate(by_kind.items()) if v > 0
    ]
    if predicted_share is None and d.get("prediction"):
        predicted_share = d["prediction"]["time_share"]
    if predicted_share is not None:
        rows += [{"source": src["predicted"], "kind": kind["gemm"], "share": predicted_share, "order": 0},
                 {"source": src["predicted"], "kind": kind["other"], "share": 1 - predicted_share,
                  "order": 2}]
    bars = alt.Chart(alt.Data(values=rows)).mark_bar().encode(
        y=alt.Y("source:N", title=None, sort=[src["measured"], src["predicted"]]),
        x=alt.X("share:Q", title=gettext("share of time"), axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("kind:N", title=None, scale=_kind_colors(gettext), legend=KIND_LEGEND),
        order=alt.Order("order:Q"),
        tooltip=[alt.Tooltip("source:N", title=gettext("source")), alt.Tooltip("kind:N", title=gettext("kind")),
                 alt.Tooltip("share:Q", format=".1%", title=gettext("share"))],
    )
    rule = alt.Chart(alt.Data(values=[{"target": GEMM_TARGET}])).mark_rule(
        color="black", strokeDash=[4, 3], size=2).encode(x="target:Q")
    label = alt.Chart(alt.Data(values=[{"target": GEMM_TARGET, "text": gettext("target {target:.0%}").format(target=GEMM_TARGET)}])).mark_text(
        align="left", dx=4, dy=-6, baseline="bottom").encode(x="target:Q", text="text:N", y=alt.value(0))
    n_bars = len({r["source"] for r in rows})
    # The height includes the axis and title when a page stretches the chart, so leave room.
    return alt.layer(bars, rule, label).properties(title=gettext(title), width=520, height=110 + 45 * n_bars)


@localized
def top_ops_chart(res: Any, n: int = 12, by_name: bool = False,
                  title: str | None = None, *, gettext: Translate = english) -> Any:
    """Horizontal bars: the ``n`` ops that take the most time, coloured GEMM / not GEMM."""
    import altair as alt

    if hasattr(res, "grouped"):
        ops = [o.to_dict() for o in (res.grouped() if by_name else res.top_ops(len(res.ops)))]
    else:
        ops = sorted(dict(res)["ops"], key=lambda o: o["time_s"], reverse=True)
    rows = []
    for o in ops[:n]:
        name = gettext(o["name"])  # an aten name as it is; the profiler's "(GPU work outside any aten op)" translated
        label = name if by_name or not o.get("shapes") else f"{name} [{o['shapes']}]"
        rows.append({"op": label, "time_us": o["time_s"] * 1e6, "share": o["share"],
                     "kind": gettext(KIND_LABELS[o["kind"]]), "tflops": o.get("tflops"), "flops": o.get("flops")})
    return alt.Chart(alt.Data(values=rows)).mark_bar().encode(
        y=alt.Y("op:N", title=None, sort="-x", axis=alt.Axis(labelLimit=360)),
        x=alt.X("time_us:Q", title=gettext("time per forward pass (µs)")),
        color=alt.Color("kind:N", title=None, scale=_kind_colors(gettext), legend=KIND_LEGEND),
        tooltip=[alt.Tooltip("op:N", title=gettext("op")), alt.Tooltip("time_us:Q", title="µs", format=".4g"),
                 alt.Tooltip("share:Q", format=".1%", title=gettext("share")),
                 alt.Tooltip("flops:Q", format=".3s", title="FLOPs"),
                 alt.Tooltip("tflops:Q", title="TFLOP/s", format=".3g")],
    ).properties(title=title or gettext("Top {n} ops by time").format(n=len(rows)), width=520, height=alt.Step(20))


@localized
def monitor_charts(mon: Any, *, gettext: Translate = english) -> dict[str, Any]:
    """Time series: utilization (with the 75 % / 60 % targets), clocks, power and temperature.

    Empty dict when nothing was sampled (the caller shows ``mon.reason`` instead).
    """
    import altair as alt

    if not mon.available or not mon.samples:
        return {}
    long = [{"t_s": t, "metric": gettext(METRICS[m]), "value": v}
            for m in METRICS for t, v in mon.series(m)]
    util_names = [gettext(METRICS["sm_util"]), gettext(METRICS["mem_util"])]
    util_rows = [r for r in long if r["metric"] in util_names]
    lines = alt.Chart(alt.Data(values=util_rows)).mark_line(point=len(mon.samples) < 60).encode(
        x=alt.X("t_s:Q", title=gettext("seconds since start")),
        y=alt.Y("value:Q", title="%", scale=alt.Scale(domain=[0, 100])),
        color=alt.Color("metric:N", title=None, scale=alt.Scale(domain=util_names, range=["#1f77b4", "#2ca02c"])),
        tooltip=[alt.Tooltip("metric:N", title=gettext("metric")), alt.Tooltip("t_s:Q", format=".2f", title="s"),
                 alt.Tooltip("value:Q", format=".0f", title=gettext("value"))],
    )
    targets = [{"value": 100 * UTIL_TARGET, "metric": util_names[0], "text": gettext("SM target {target:.0%}").format(target=UTIL_TARGET)},
               {"value": 100 * BANDWIDTH_TARGET, "metric": util_names[1],
                "text": gettext("bandwidth target {target:.0%}").format(target=BANDWIDTH_TARGET)}]
    rules = alt.Chart(alt.Data(values=targets)).mark_rule(strokeDash=[4, 3]).encode(
        y="value:Q", color=alt.Color("metric:N", scale=alt.Scale(domain=util_names,
                                                                range=["#1f77b4", "#2ca02c"])))
    text = alt.Chart(alt.Data(values=targets)).mark_text(align="left", dx=2, dy=-5).encode(
        y="value:Q", x=alt.value(2), text="text:N")
    out: dict[str, alt.Chart] = {
        "utilization": alt.layer(lines, rules, text).properties(
            title=gettext("Utilization against the article's targets"), width=520, height=220),
    }
    others = [r for r in long if r["metric"] not in util_names]
    if others:
        out["clocks_power_temperature"] = alt.Chart(alt.Data(values=others)).mark_line().encode(
            x=alt.X("t_s:Q", title=gettext("seconds since start")),
            y=alt.Y("value:Q", title=None, scale=alt.Scale(zero=False)),
            facet=alt.Facet("metric:N", columns=2, title=None),
            tooltip=[alt.Tooltip("metric:N", title=gettext("metric")), alt.Tooltip("t_s:Q", format=".2f", title="s"),
                     alt.Tooltip("value:Q", format=".4g", title=gettext("value"))],
        ).properties(width=250, height=120).resolve_scale(y="independent")
    return out
