"""Altair charts for benchmark results, shared by the pages and the report.

Each builder takes ``BenchResult`` objects (or their ``to_dict()`` forms) and returns
an Altair chart; nothing here imports streamlit or torch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gemmlib.charts.aria import localized
from gemmlib.core.i18n import N_, Msg, Text, Translate, english
from gemmlib.core.results import BenchResult


def note_text(note: Any, gettext: Translate = english) -> Any:
    """A result row's note (``BenchResult.reason``) through ``gettext``: a message (a Text, as the
    benchmarks write their notes, or a Msg) in the reader's language with its values; a plain text
    as a constant of the catalogue (or as it is). Anything that is not text is returned unchanged."""
    if isinstance(note, (Msg, Text)):
        return note.render(gettext)
    if not isinstance(note, str) or not note:
        return note
    return gettext(note)


def _rows(results: Iterable[BenchResult | Mapping]) -> list[dict]:
    out = []
    for r in results:
        d = r.to_dict() if isinstance(r, BenchResult) else dict(r)
        shape = d.get("shape") or {}
        d["shape_label"] = shape.get("label") or f"{shape.get('m')}×{shape.get('n')}×{shape.get('k')}"
        d["mnk"] = f"{shape.get('m')}×{shape.get('n')}×{shape.get('k')}"
        d["median_ms"] = d["median_s"] * 1e3 if d.get("median_s") else None
        out.append(d)
    return out


COLUMN_MIN, COLUMN_GAP = 84, 20  # px: a shape's column in the throughput chart ("Square 1024" whole), between two


@localized
def tflops_chart(results: Iterable[BenchResult | Mapping], title: str | None = None, *,
                 gettext: Translate = english) -> Any:
    """Grouped bars: TFLOP/s per format, one group per shape (supported rows only). Texts through
    ``gettext``; the rows' own names and shape labels are drawn as given (a page passes them translated)."""
    import altair as alt

    rows = [r for r in _rows(results) if r.get("supported") and r.get("tflops")]
    fmt_title = gettext("format")
    # the shapes left to right in the run's order (256, 512, 1024): sort=None still let Vega order the
    # facet headers as strings, "Square 1024" before "Square 256"
    shapes = list(dict.fromkeys(r["shape_label"] for r in rows))
    # each shape's column at least COLUMN_MIN px wide, its header no wider than the column: with one format the
    # columns were 18 px and the headers ran into each other ("方阵 25方阵 51方阵 1024"); a longer header ends in "…"
    # (the tooltip and the table give the whole shape)
    n = max(1, len({r["name"] for r in rows}))
    step = max(18, -(-COLUMN_MIN // n))
    return alt.Chart(alt.Data(values=rows)).mark_bar().encode(
        x=alt.X("name:N", title=fmt_title, sort=None, axis=alt.Axis(labelLimit=300)),  # "fp8 + quant (emulated)" whole
        y=alt.Y("tflops:Q", title=gettext("TFLOP/s (int8: TOP/s)")),
        color=alt.Color("name:N", title=fmt_title, sort=None),
        column=alt.Column("shape_label:N", title=None, sort=shapes, spacing=COLUMN_GAP,  # centred: no overlap
                          header=alt.Header(labelAngle=0, labelLimit=step * n + COLUMN_GAP - 4)),
        tooltip=[alt.Tooltip("shape_label:N", title=gettext("shape")), alt.Tooltip("mnk:N", title="M×N×K"),
                 alt.Tooltip("name:N", title=fmt_title), alt.Tooltip("tflops:Q", title="TFLOP/s", format=".3g"),
                 alt.Tooltip("median_ms:Q", title=gettext("median ms"), format=".4g"),
                 alt.Tooltip("rel_error:Q", title=gettext("rel. error"), format=".2e")],
    ).properties(title=title or gettext("Throughput per format"), width=alt.Step(step))


@localized
def error_chart(results: Iterable[BenchResult | Mapping], title: str | None = None, *,
                gettext: Translate = english) -> Any:
    """Points on a log scale: max relative error per format and shape (texts through ``gettext``)."""
    import altair as alt

    rows = [r for r in _rows(results) if r.get("supported") and r.get("rel_error")]
    return alt.Chart(alt.Data(values=rows)).mark_point(filled=True, size=80).encode(
        x=alt.X("name:N", title=gettext("format"), sort=None, axis=alt.Axis(labelLimit=300)),
        y=alt.Y("rel_error:Q", title=gettext("max |error| / max |reference|"), scale=alt.Scale(type="log")),
        color=alt.Color("shape_label:N", title=gettext("shape"), sort=None),
        tooltip=[alt.Tooltip("shape_label:N", title=gettext("shape")), alt.Tooltip("name:N", title=gettext("format")),
                 alt.Tooltip("rel_error:Q", title=gettext("rel. error"), format=".3e")],
    ).properties(title=title or gettext("Error against float64"), width=420, height=260,
                 autosize=alt.AutoSizeParams(type="pad"))  # 260 px of plot: "fit" gave the long format labels its height


CEILING_SERIES = {"measured (median)": N_("measured (median)"), "datasheet": N_("datasheet")}  # as shown


@localized
def ceilings_chart(rows: list[dict], title: str = "Measured vs datasheet", *, gettext: Translate = english) -> Any:
    """Measured against datasheet on one axis (rows from ``Ceilings.rows``): per figure, the datasheet
    as a grey tick, the measured median as a dot and its p20–p80 spread as a line. The axis is
    logarithmic so that TFLOP/s and TB/s rows, and a CPU's small figures, share it; each row's label
    carries its unit. ``title`` comes as shown; the figures' names and the rest go through ``gettext``.
    A row with ``emulated`` true (fp8 on a CPU: a reference kernel, no ceiling) says so in its label."""
    import altair as alt

    from gemmlib.charts import label_expr

    def label(r: Mapping) -> str:
        name = gettext(r["figure"])
        if r.get("emulated"):  # drawn beside the ceilings, it read as one ("fp8 GEMM" above fp16 on a CPU)
            name = gettext("{format} (emulated)").format(format=name)
        return f"{name} ({r['unit']})"

    pts: list[dict[str, Any]] = []
    for r in rows:  # "shown": the series as the reader reads it, for the tooltip (the legend has labelExpr)
        if r.get("measured"):
            pts.append({"figure": label(r), "which": "measured (median)", "value": r["measured"],
                        "shown": gettext(CEILING_SERIES["measured (median)"]),
                        "low": r.get("low") or r["measured"], "high": r.get("high") or r["measured"]})
        if r.get("datasheet"):
            pts.append({"figure": label(r), "which": "datasheet", "value": r["datasheet"],
                        "shown": gettext(CEILING_SERIES["datasheet"]), "low": None, "high": None})
    order = [label(r) for r in rows]
    x = alt.X("value:Q", scale=alt.Scale(type="log"), title=gettext("per second, in each row's unit (log scale)"),
              axis=alt.Axis(format="~g"))
    y = alt.Y("figure:N", sort=order, title=None, axis=alt.Axis(labelLimit=260))
    series = label_expr({k: gettext(v) for k, v in CEILING_SERIES.items()})
    sheet = any(p["which"] == "datasheet" for p in pts)  # a CPU has no datasheet row: no grey legend entry then
    colour = alt.Color("which:N", title=None, scale=alt.Scale(domain=["measured (median)", "datasheet"][:1 + sheet],
                                                             range=["#1f77b4", "#9e9e9e"][:1 + sheet]),
                       legend=alt.Legend(orient="bottom", labelExpr=series))
    figure = alt.Tooltip("figure:N", title=gettext("figure"))
    which = alt.Tooltip("shown:N", title=gettext("series"))  # "实测（中位数）", not the English key
    value = alt.Tooltip("value:Q", format=".4g", title=gettext("value"))
    base = alt.Chart(alt.Data(values=pts))
    spread = base.transform_filter("datum.which == 'measured (median)'").mark_rule(strokeWidth=3).encode(
        x=alt.X("low:Q", scale=alt.Scale(type="log")), x2="high:Q", y=y, color=colour,
        tooltip=[figure, alt.Tooltip("low:Q", format=".4g", title=gettext("at the p80 time")),
                 alt.Tooltip("high:Q", format=".4g", title=gettext("at the p20 time"))])
    ticks = base.transform_filter("datum.which == 'datasheet'").mark_tick(thickness=3, size=22).encode(
        x=x, y=y, color=colour, tooltip=[figure, which, value])
    dots = base.transform_filter("datum.which == 'measured (median)'").mark_point(filled=True, size=90).encode(
        x=x, y=y, color=colour, tooltip=[figure, which, value])
    return alt.layer(spread, ticks, dots).properties(title=title, height={"step": 30})
