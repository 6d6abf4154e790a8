"""Altair charts of the multi-GPU benchmarks (the Multi-GPU page and the report): bus bandwidth (or
time) against message size per collective, log–log, with a reference line; the tensor-parallel
layer measured beside its estimate. Every text a reader sees goes through ``gettext`` (English by
default, for the report; the page passes ``gettext=ui._``)."""

from __future__ import annotations

from gemmlib.charts.aria import localized
from gemmlib.core.comm import COLLECTIVE_LABELS
from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_, Translate, english

_METRICS = {"busbw_gbps": N_("bus bandwidth (GB/s)"), "algbw_gbps": N_("algorithm bandwidth (GB/s)"),
            "time_us": N_("time per collective (µs)")}
_SOURCES = {"measured": N_("measured"), "estimate": N_("estimate")}
_PARTS = {"compute": N_("compute"), "all-reduces": N_("all-reduces")}
WHAT_ONE_RANK, WHAT_TP = N_("one rank"), N_("{n} ranks, tensor-parallel")  # the two bars of ``tp_chart``


def _what(r: dict, gettext: Translate) -> str:
    return gettext(WHAT_ONE_RANK) if int(r["ranks"]) == 1 else gettext(WHAT_TP).format(n=r["ranks"])


@localized
def collective_chart(rows: list[dict], metric: str = "busbw_gbps", reference: tuple[str, float] | None = None,
                     title: str | None = None, *, gettext: Translate = english):
    """``metric`` against message size (bytes, log₂) per collective (log y), from ``collectives`` rows.

    ``reference`` = (label, GB/s): a horizontal dashed line, e.g. a datasheet or a measured link's busbw.
    Rows that were skipped or came out wrong are left out (a wrong result has no bandwidth).
    """
    import altair as alt
    import pandas as pd

    if metric not in _METRICS:
        raise InputError(N_("unknown metric {metric!r}; choose from {choices}"), metric=metric,
                         choices=", ".join(_METRICS))
    recs = []
    for r in rows:
        if not r.get("time_s") or not r.get("correct"):
            continue
        v = r["time_s"] * 1e6 if metric == "time_us" else r.get(metric)
        if v and v > 0:
            recs.append({"op": gettext(COLLECTIVE_LABELS.get(r["op"], r["op"])), "bytes": r["bytes"], metric: v, "time_us": r["time_s"] * 1e6,
                         "busbw_gbps": r.get("busbw_gbps"), "algbw_gbps": r.get("algbw_gbps")})
    if not recs:
        return None
    df = pd.DataFrame(recs)
    lines = alt.Chart(df).mark_line(point=True).encode(
        x=alt.X("bytes:Q", scale=alt.Scale(type="log", base=2), title=gettext("message size (bytes, nccl-tests' size)")),
        y=alt.Y(f"{metric}:Q", scale=alt.Scale(type="log"), title=gettext(_METRICS[metric])),
        color=alt.Color("op:N", title=gettext("collective")),
        strokeDash=alt.StrokeDash("op:N", title=gettext("collective")),
        tooltip=[alt.Tooltip("op:N", title=gettext("collective")),
                 alt.Tooltip("bytes:Q", format=",", title=gettext("bytes")),
                 alt.Tooltip("time_us:Q", title="µs", format=".4g"),
                 alt.Tooltip("algbw_gbps:Q", title="algbw GB/s", format=".4g"),
                 alt.Tooltip("busbw_gbps:Q", title="busbw GB/s", format=".4g")])
    chart = lines
    if reference is not None and reference[1] and metric != "time_us":
        label, gbps = reference
        rule = alt.Chart(pd.DataFrame([{"y": gbps, "label": f"{label}: {gbps:.4g} GB/s"}])).mark_rule(
            color="black", strokeDash=[6, 4]).encode(y="y:Q", tooltip=[alt.Tooltip("label:N", title=gettext("reference"))])
        text = alt.Chart(pd.DataFrame([{"y": gbps, "x": df["bytes"].min(), "label": label}])).mark_text(
            align="left", dy=-6, fontSize=11).encode(x="x:Q", y="y:Q", text="label")
        chart = lines + rule + text
    return chart.properties(height=320, title=title or gettext("{metric} by message size").format(
        metric=gettext(_METRICS[metric])))


@localized
def tp_chart(rows: list[dict], *, gettext: Translate = english):
    """Measured and estimated time of the layer on one rank and on n ranks (bars, ms), the
    all-reduces shaded; from ``TPRun.rows()``."""
    import altair as alt
    import pandas as pd

    recs = []
    for r in rows:
        for source, total, comm in (("measured", r["measured_s"], r.get("comm_s")),
                                    ("estimate", r.get("estimated_s"), r.get("estimated_comm_s"))):
            if not total:
                continue
            c = comm or 0.0
            recs.append({"what": _what(r, gettext), "source": gettext(_SOURCES[source]),
                         "part": gettext(_PARTS["compute"]), "ms": (total - c) * 1e3})
            if c:
                recs.append({"what": _what(r, gettext), "source": gettext(_SOURCES[source]),
                             "part": gettext(_PARTS["all-reduces"]), "ms": c * 1e3})
    if not recs:
        return None
    df = pd.DataFrame(recs)
    sources = [gettext(v) for v in _SOURCES.values()]
    return alt.Chart(df).mark_bar().encode(
        x=alt.X("what:N", title=None, sort=None, axis=alt.Axis(labelAngle=0, labelLimit=240)),
        xOffset=alt.XOffset("source:N", sort=sources),
        y=alt.Y("ms:Q", title=gettext("time of one layer (ms)"), stack="zero"),
        color=alt.Color("source:N", sort=sources, title=None),
        opacity=alt.Opacity("part:N", sort=[gettext(v) for v in _PARTS.values()], scale=alt.Scale(range=[1.0, 0.45]),
                            title=None),
        tooltip=[alt.Tooltip("what:N", title=gettext("what")), alt.Tooltip("source:N", title=gettext("source")),
                 alt.Tooltip("part:N", title=gettext("part")), alt.Tooltip("ms:Q", format=".4g", title="ms")],
    ).properties(height=300, title=gettext("One layer: one rank vs tensor-parallel, measured and estimated"))


@localized
def tp_scaling_chart(points: list[dict], *, gettext: Translate = english):
    """Layer time against rank count (one rank included), measured and estimated, from
    ``{ranks, measured_s, estimated_s}`` points."""
    import altair as alt
    import pandas as pd

    recs = []
    for p in points:
        for source, key in (("measured", "measured_s"), ("estimate", "estimated_s")):
            if p.get(key):
                recs.append({"ranks": int(p["ranks"]), "source": gettext(_SOURCES[source]), "ms": p[key] * 1e3})
    if not recs:
        return None
    df = pd.DataFrame(recs)
    return alt.Chart(df).mark_line(point=True).encode(
        x=alt.X("ranks:O", title=gettext("ranks (1 = the whole layer on one rank)")),
        y=alt.Y("ms:Q", title=gettext("time of one layer (ms)")),
        color=alt.Color("source:N", sort=[gettext(v) for v in _SOURCES.values()], title=None),
        tooltip=[alt.Tooltip("ranks:O", title=gettext("ranks")), alt.Tooltip("source:N", title=gettext("source")),
                 alt.Tooltip("ms:Q", format=".4g", title="ms")],
    ).properties(height=300, title=gettext("Tensor-parallel scaling of one layer"))
