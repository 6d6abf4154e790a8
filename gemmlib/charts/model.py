"""Altair chart builders for the Transformer GEMMs and LLM Estimator pages.

Plain data in (ops and estimates from ``gemmlib.llm.accounting``), charts out; no
streamlit, no torch.

Every chart is an Altair *template* that reads named datasets, plus the data.
``xxx_chart(...)`` returns the Altair chart with its data attached (what tests
validate and what a notebook or report uses). ``xxx_spec(...)`` returns the same
chart as a Vega-Lite dict, reusing a cached copy of the template's dict and only
attaching fresh data: building Altair objects costs tens of milliseconds per
layer, which would break the pages' 200 ms rerun budget.

Every text a reader sees (titles, axes, legends, tooltips, labels and the categories drawn, such
as "prefill") goes through ``gettext`` (English by default, for the report and the CLI; a page
passes ``gettext=ui._``). The translated texts are the templates' arguments, so each language has
its own cached template.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable

import altair as alt
import pandas as pd

from gemmlib.charts import label_expr
from gemmlib.charts.aria import localized
from gemmlib.core import format as fmt
from gemmlib.core.i18n import N_, Translate, english
from gemmlib.core.roofline import roof_curve
from gemmlib.llm.accounting import ATTENTION_PRODUCTS, OP_NAMES, Estimate, Op

ROLE_COLORS = {"A (activations)": "#4c78a8", "B (weights)": "#f58518", "B (keys / values)": "#54a24b",
               "D (output)": "#b279a2"}
ROLE_LABELS = {"A (activations)": N_("A (activations)"), "B (weights)": N_("B (weights)"),
               "B (keys / values)": N_("B (keys / values)"), "D (output)": N_("D (output)")}  # as shown
PHASES = {"prefill": N_("prefill"), "decode": N_("decode")}  # the phases as drawn
BOUNDS = {"compute": N_("compute-bound"), "memory": N_("memory-bound"),  # an op's bound, as drawn
          "overhead": N_("overhead-bound")}  # its kernels' fixed time the largest part (llm.efficiency.bound)
OP_ORDER = list(OP_NAMES)  # every GEMM the accounting names, in its order (MLA's, shared experts', ...)
_OP_COLOR = alt.Scale(domain=OP_ORDER, scheme="tableau20")
# Ops named by a word rather than by their module (q_proj, attn_scores): drawn in the reader's language. The data
# keeps the names; the axes, legends and tooltips show these labels (``_op_words``, ``_op_label``).
WORD_OPS = {"embedding": N_("embedding"), "norms": N_("norms"), "rotary": N_("rotary"), "activation": N_("activation"),
            "residual": N_("residual"), "router": N_("router")}


def _op_words(gettext: Translate) -> tuple[tuple[str, str], ...]:
    """(name, label) of each word-named op whose label differs from its name: empty in English (a template
    argument, so each language has its own cached template)."""
    return tuple((k, gettext(v)) for k, v in WORD_OPS.items() if gettext(v) != k)


def _op_label(words: tuple[tuple[str, str], ...], ref: str) -> str:
    """A Vega expression: the op ``ref`` holds, as shown (its label for a word-named op, else its name)."""
    return label_expr(dict(words), ref)


def _op_tooltip(chart: alt.Chart, words: tuple[tuple[str, str], ...], title: str) -> tuple[alt.Chart, alt.Tooltip]:
    """The chart (with the shown op computed when there are labels) and the op's tooltip."""
    if not words:
        return chart, alt.Tooltip("op:N", title=title)
    return chart.transform_calculate(op_shown=_op_label(words, "datum.op")), alt.Tooltip("op_shown:N", title=title)


def _op_guide(words: tuple[tuple[str, str], ...]) -> dict:
    """An axis's or legend's keyword arguments that show the op labels."""
    return {"labelExpr": _op_label(words, "datum.label")} if words else {}


# ----- plumbing: templates + data ----------------------------------------------------------

_INT64_MAX = 2**63 - 1


def _cell(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) > _INT64_MAX:
        return float(v)  # Arrow (tables, chart data) holds at most int64; exact counts stay in the JSON
    return v


def arrow_safe(rows) -> list[dict]:
    """Rows that Arrow can hold: non-finite floats become None, integers past int64 become floats."""
    if isinstance(rows, pd.DataFrame):
        rows = rows.to_dict("records")
    return [{k: _cell(v) for k, v in r.items()} for r in rows]


_clean = arrow_safe


_TEMPLATE_DICTS: dict[tuple, dict] = {}


class Built:
    """A template (a function of a few structural arguments), its named datasets and top-level properties."""

    def __init__(self, template: Callable[..., alt.TopLevelMixin], args: tuple, datasets: dict, **top) -> None:
        self.template, self.args, self.top = template, args, top
        self.datasets = {k: _clean(v) for k, v in datasets.items()}

    def chart(self) -> alt.TopLevelMixin:
        c = self.template(*self.args).properties(**self.top)
        c.datasets = self.datasets
        return c

    def spec(self) -> dict:
        key = (self.template.__module__, self.template.__qualname__, self.args)
        if key not in _TEMPLATE_DICTS:
            _TEMPLATE_DICTS[key] = self.template(*self.args).to_dict(validate=False)
        # A deep copy: consumers (st.vega_lite_chart among them) edit specs in place.
        d = copy.deepcopy(_TEMPLATE_DICTS[key])
        d.update(self.top)
        d["datasets"] = self.datasets
        return d


def spec(chart: alt.TopLevelMixin | Built) -> dict:
    """Vega-Lite dict without schema validation (the builders are validated in tests)."""
    return chart.spec() if isinstance(chart, Built) else chart.to_dict(validate=False)


def _d(name: str) -> alt.NamedData:
    return alt.NamedData(name)


def _texts(gettext: Translate, texts: tuple[str, ...]) -> tuple[str, ...]:
    """A template's texts in the reader's language (its cache key, with the structural arguments)."""
    return tuple(gettext(x) for x in texts)


# ----- one layer's GEMMs to scale ------------------------------------------------------------

def shape_rects(ops: list[Op], gap_frac: float = 0.04) -> tuple[list[dict], list[dict]]:
    """Rectangles for A (M×K), B (K×N) and D (M×N) of every op in one coordinate system, and labels.

    Ops are stacked top to bottom; within a row A, B and D stand side by side, all
    in the same units (one unit = one matrix element), so sizes compare across ops.
    """
    width = max(o.k + 2 * o.n for o in ops)
    gap = max(1.0, gap_frac * width)
    rects, labels, y = [], [], 0.0
    for o in ops:
        b_role = "B (keys / values)" if o.name in ATTENTION_PRODUCTS else "B (weights)"
        label = f"{o.name}: [{o.m:,}×{o.k:,}]·[{o.k:,}×{o.n:,}]  ×{o.count:,} = {fmt.si(o.flops, 'FLOP')}"
        labels.append({"op": o.name, "x": 0.0, "y": y, "label": label})
        top = y + 0.9 * gap  # room for the label above the row
        x = 0.0
        for role, w, h, dims in (("A (activations)", o.k, o.m, f"{o.m}×{o.k}"),
                                 (b_role, o.n, o.k, f"{o.k}×{o.n}"),
                                 ("D (output)", o.n, o.m, f"{o.m}×{o.n}")):
            rects.append({"op": o.name, "role": role, "x": x, "x2": x + w, "y": top, "y2": top + h,
                          "dims": dims, "flops": o.flops, "count": o.count})
            x += w + gap
        y = top + max(o.m, o.k) + gap
    return rects, labels


def _shapes_template(texts: tuple[str, ...] = ("matrix", "op", "dims", "count", "FLOPs"),
                     roles: tuple[str, ...] = tuple(ROLE_COLORS)) -> alt.LayerChart:
    """``texts``: the legend's and tooltips' titles, ``roles`` the matrices' roles in :data:`ROLE_COLORS`' order (as
    shown). The legend shows the data's ``shown`` role: a screen reader reads a legend's values from its scale's
    domain (with a labelExpr over the English roles it read "A (activations)" on the Chinese page)."""
    x = alt.X("x:Q", axis=None, scale=alt.Scale(nice=False, zero=True))
    y = alt.Y("y:Q", axis=None, scale=alt.Scale(nice=False, zero=True, reverse=True))
    matrix, op, dims, count, flops = texts
    rects = alt.Chart(_d("rects")).mark_rect(stroke="white", strokeWidth=0.5, opacity=0.85).encode(
        x=x, x2="x2:Q", y=y, y2="y2:Q",
        color=alt.Color("shown:N", title=matrix, scale=alt.Scale(domain=list(roles), range=list(ROLE_COLORS.values())),
                        legend=alt.Legend(orient="top")),
        description=alt.Description("_aria:N"),
        tooltip=[alt.Tooltip("op:N", title=op), alt.Tooltip("shown:N", title=matrix), alt.Tooltip("dims:N", title=dims),
                 alt.Tooltip("count:Q", format=",", title=count), alt.Tooltip("flops:Q", format=".4s", title=flops)],
    )
    text = alt.Chart(_d("labels")).mark_text(align="left", baseline="top", fontSize=12).encode(
        x=x, y=y, text="label:N", description=alt.Description("label:N"))
    return alt.layer(rects, text)


SHAPES_MAX_HEIGHT = 640  # px: the drawing on one projected screen (it ran to 1,142 px, two screens, for Llama-3-8B)


def _gemm_shapes_built(ops: list[Op], width: int = 760, gettext: Translate = english) -> Built:
    rects, labels = shape_rects(ops)
    xr = max(r["x2"] for r in rects)
    yr = max(r["y2"] for r in rects)
    height = int(min(SHAPES_MAX_HEIGHT, max(240, width * yr / xr)))
    if height == SHAPES_MAX_HEIGHT:  # keep the aspect ratio: narrow the chart instead of squashing it
        width = int(max(200, SHAPES_MAX_HEIGHT * xr / yr))
    args = ()
    texts = tuple(gettext(t) for t in (N_("matrix"), N_("op"), N_("dims"), N_("count"), "FLOPs"))
    if gettext is not english:  # the English chart as it always was; a translation names its texts
        args = (texts, tuple(gettext(ROLE_LABELS[r]) for r in ROLE_COLORS))
    # each rectangle's role as shown, and what a screen reader says of it (it read "x: 0; y: 1327.104; …; matrix:
    # A (activations)", the data's coordinates and English role, on the Chinese page too)
    rects = [{**r, "shown": gettext(ROLE_LABELS.get(r["role"], r["role"]))} for r in rects]
    rects = [{**r, "_aria": f"{r['op']} · {r['shown']}: {r['dims']}; {texts[3]}: {r['count']:,}; "
                            f"{fmt.si(r['flops'], 'FLOP')}"} for r in rects]
    return Built(_shapes_template, args, {"rects": rects, "labels": labels}, width=width, height=height,
                 title=title_lines(gettext("One layer's GEMMs to scale (A · B = D; attention per sequence and head)"),
                                   width))


def title_lines(text: str, width: int, px: float = 7.5) -> str | list[str]:
    """A chart's title as one line, or as two broken before its bracket where one line would run past the chart's
    ``width`` (Vega clips a title at its canvas's edge: a narrowed drawing lost "… and head)"). ``px``: the width
    of a Latin character of the title's font, a CJK one counting twice."""
    import unicodedata

    if sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text) * px <= width:
        return text
    cut = min((i for i in (text.find(" ("), text.find("（")) if i > 0), default=-1)
    return [text[:cut].strip(), text[cut:].strip()] if cut > 0 else text


@localized
def gemm_shapes_chart(ops: list[Op], width: int = 760, *, gettext: Translate = english) -> alt.LayerChart:
    """Every GEMM's A, B and D drawn to scale (same units for all ops), labelled with its FLOPs."""
    return _gemm_shapes_built(ops, width, gettext).chart()


# ----- attention share vs sequence length -----------------------------------------------------

SHARE_TEXTS = (N_("sequence length (tokens)"), N_("attention products' share of FLOPs"), "seq_len",
               N_("share"), N_("counting"))  # (the y title short: the long one was cut at the chart's height)


def _share_template(texts: tuple[str, ...] = SHARE_TEXTS) -> alt.LayerChart:
    """``texts``: the axes' and tooltips' titles, as shown (:data:`SHARE_TEXTS` in English)."""
    x_title, y_title, seq, share, counting = texts
    x = alt.X("seq_len:Q", scale=alt.Scale(type="log"), title=x_title)
    line = alt.Chart(_d("curve")).mark_line().encode(
        x=x, y=alt.Y("share:Q", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1]), title=y_title),
        color=alt.Color("counting:N", title=None, legend=alt.Legend(orient="bottom")),
        tooltip=[alt.Tooltip("seq_len:Q", format=",", title=seq), alt.Tooltip("share:Q", format=".1%", title=share),
                 alt.Tooltip("counting:N", title=counting)], description=alt.Description("_aria:N"))
    # what a screen reader says of each mark: its words as shown (it read the data's names: "counting:", "what:",
    # "ypix: 276", "share: 0.5")
    what = alt.Description("what:N")
    rule = alt.Chart(_d("marks")).mark_rule(strokeDash=[4, 3], color="#e4572e").encode(x=x, tooltip=["what:N"],
                                                                                        description=what)
    rtext = alt.Chart(_d("marks")).mark_text(align="left", dx=4, color="#e4572e").encode(
        x=x, y=alt.Y("ypix:Q", scale=None), text="what:N", description=what)
    half = alt.Chart(_d("half")).mark_rule(color="#999").encode(y="share:Q", description=what)
    pt = alt.Chart(_d("claim")).mark_point(size=90, filled=True, color="#e4572e").encode(
        x=x, y="share:Q", tooltip=["what:N"], description=what)
    ptext = alt.Chart(_d("claim")).mark_text(align="right", dx=-8, dy=-12).encode(x=x, y="share:Q", text="what:N",
                                                                                  description=what)
    return alt.layer(line, rule, rtext, half, pt, ptext)


def _share_built(curve: list[dict], crossover: float, claim_s: int | None = None,
                 causal_crossover: float | None = None, gettext: Translate = english) -> Built:
    """``curve``'s ``counting`` labels come as shown (the page names its curves)."""
    if curve and "counting" not in curve[0]:
        curve = [{**r, "counting": gettext("dense")} for r in curve]
    # the crossovers' words right of their rules near the bottom: past its crossover every curve is above a third,
    # so nothing is drawn there (at the top they sat on the dense curve and ran into the legend)
    marks = [{"seq_len": crossover, "what": gettext("dense crossover s = {s}").format(s=f"{crossover:,.0f}"),
              "ypix": SHARE_HEIGHT - 44}]
    if causal_crossover is not None:
        marks.append({"seq_len": causal_crossover,
                      "what": gettext("causal crossover s = {s}").format(s=f"{causal_crossover:,.0f}"),
                      "ypix": SHARE_HEIGHT - 26})
    claim = []
    if claim_s is not None:
        dense = [r for r in curve if r["counting"] == curve[0]["counting"]]
        row = min(dense, key=lambda r: abs(r["seq_len"] - claim_s))
        claim = [{**row, "what": f"s = {row['seq_len']:,}: {row['share']:.1%}"}]
    args = () if gettext is english else (tuple(gettext(t) for t in SHARE_TEXTS),)
    texts = tuple(gettext(t) for t in SHARE_TEXTS)
    curve = [{**r, "_aria": f"{r['counting']}: {texts[2]} {r['seq_len']:,}, {texts[3]} {r['share']:.1%}"} for r in curve]
    half = [{"share": 0.5, "what": f"{texts[3]} 50%"}]
    return Built(_share_template, args, {"curve": curve, "marks": marks, "half": half, "claim": claim},
                 height=SHARE_HEIGHT, title=gettext("When do the attention products dominate?"))


SHARE_HEIGHT = 320


@localized
def share_chart(curve: list[dict], crossover: float, claim_s: int | None = None,
                causal_crossover: float | None = None, *, gettext: Translate = english) -> alt.LayerChart:
    """Attention products' share of a layer vs sequence length, with the crossover(s) marked."""
    return _share_built(curve, crossover, claim_s, causal_crossover, gettext).chart()


# ----- estimator charts ------------------------------------------------------------------------

def ops_frame(est: Estimate, macs: bool = False) -> pd.DataFrame:
    """One row per (phase, op) with FLOPs (or MACs), bytes, intensity, bound, time."""
    return pd.DataFrame(ops_records(est, macs))


def ops_records(est: Estimate, macs: bool = False) -> list[dict]:
    """One row per (phase, op): the table of the estimator page and its CSV (English keys and values)."""
    rows = []
    for phase in (est.prefill, est.decode):
        for o in phase.ops:
            rows.append({"phase": phase.name, "op": o.name, "kind": "GEMM" if o.is_gemm else "not GEMM", "M": o.m,
                         "N": str(o.n) if o.n_last is None else f"{o.n}..{o.n_last}",
                         "K": str(o.k) if o.k_last is None else f"{o.k}..{o.k_last}",
                         "count": o.count, "FLOPs": o.flops, "MACs": o.macs, "value": o.macs if macs else o.flops,
                         "bytes": o.bytes, "weight bytes": o.weight_bytes, "activation bytes": o.act_bytes,
                         "KV bytes": o.kv_bytes, "FLOP/byte": o.intensity, "bound": o.bound,
                         "time_s": o.time_s, "note": o.note})
    return rows


_FLOPS_TEXTS = (N_("{unit} (decode: all steps, whole batch)"), N_("phase"), N_("op"), N_("time (s)"),
                N_("prefill"), N_("decode"))


def _flops_template(unit: str, ops: tuple[str, ...] = (), t: tuple[str, ...] = (),
                    words: tuple[tuple[str, str], ...] = ()) -> alt.Chart:
    axis, phase, op, time_s, *phases = t or _texts(english, _FLOPS_TEXTS)
    base, op_tip = _op_tooltip(alt.Chart(_d("ops")), words, op)
    return base.mark_bar().encode(
        y=alt.Y("phase:N", title=None, sort=phases),
        x=alt.X("value:Q", title=axis.format(unit=unit),
                axis=alt.Axis(format="~s", tickCount=6, labelOverlap=True, labelFlush=True)),
        # every op in the legend, under the chart in rows (beside it, 11 entries outgrow the height)
        color=alt.Color("op:N", sort=OP_ORDER, scale=_OP_COLOR, title=None,
                        legend=alt.Legend(orient="bottom", columns=6, symbolLimit=0, labelLimit=200,
                                          values=list(ops) or None, **_op_guide(words))),
        order=alt.Order("order:Q"),
        tooltip=[alt.Tooltip("phase:N", title=phase), op_tip,
                 alt.Tooltip("value:Q", format=".4s", title=unit),
                 alt.Tooltip("time_s:Q", format=".3s", title=time_s)],
    ).transform_calculate(order=f"indexof({OP_ORDER!r}, datum.op)")


def _phase(name: str, gettext: Translate) -> str:
    return gettext(PHASES.get(name, name))


def _flops_by_op_built(est: Estimate, macs: bool = False, gettext: Translate = english) -> Built:
    unit = "MACs" if macs else "FLOPs"
    rows = [{"phase": _phase(r["phase"], gettext), "op": r["op"], "value": r["value"], "time_s": r["time_s"]}
            for r in ops_records(est, macs) if r["kind"] == "GEMM"]
    present = tuple(o for o in OP_ORDER if any(r["op"] == o for r in rows))  # the legend: these, every one
    return Built(_flops_template, (unit, present, _texts(gettext, _FLOPS_TEXTS), _op_words(gettext)), {"ops": rows},
                 height={"step": 36}, title=gettext("{unit} by op").format(unit=unit))  # the whole chart: title, axis, legend


@localized
def flops_by_op_chart(est: Estimate, macs: bool = False, *, gettext: Translate = english) -> alt.Chart:
    """Stacked bars: prefill and decode, each split by op."""
    return _flops_by_op_built(est, macs, gettext).chart()


def _memory_template(t: tuple[str, ...] = ()) -> alt.LayerChart:
    # One thick bar (weights, then the KV cache) on a GiB axis (the project's byte unit) that always reaches the capacity, the
    # capacity as a red rule with its label above the bar, the legend under the chart. Positions in
    # pixels from the top of the plot (the page gives the whole chart a fixed height).
    part, what = t or _texts(english, _MEMORY_TEXTS)
    x = alt.X("start:Q", title="GiB", scale=alt.Scale(domainMin=0, nice=True),
              axis=alt.Axis(format=",.0f", tickCount=8, labelOverlap=True))
    bars = alt.Chart(_d("parts")).mark_bar().encode(
        x=x, x2="end:Q", y=alt.value(22), y2=alt.value(56),
        color=alt.Color("part:N", title=None, sort=alt.SortField("order"),
                        scale=alt.Scale(range=["#4c78a8", "#72b7b2"]),
                        legend=alt.Legend(orient="bottom", direction="horizontal", labelLimit=400)),
        tooltip=[alt.Tooltip("part:N", title=part), alt.Tooltip("GiB:Q", format=",.2f", title="GiB")])
    rule = alt.Chart(_d("cap")).mark_rule(color="#e4572e", strokeWidth=3).encode(
        x="GiB:Q", y=alt.value(16), y2=alt.value(62), tooltip=[alt.Tooltip("what:N", title=what)])
    text = alt.Chart(_d("cap")).mark_text(align="center", baseline="bottom", color="#c0392b",
                                          fontWeight="bold").encode(x="GiB:Q", y=alt.value(13), text="what:N")
    return alt.layer(bars, rule, text)


_MEMORY_TEXTS = (N_("part"), N_("what"))


def _memory_built(est: Estimate, gettext: Translate = english) -> Built:
    mem = est.memory
    w, kv = mem.weights_bytes / 2**30, mem.kv_cache_bytes / 2**30
    parts = [{"part": gettext("weights ({dtype})").format(dtype=est.workload.weight_dtype), "GiB": w, "start": 0.0,
              "end": w, "order": 0},
             {"part": gettext("KV cache at the end ({dtype})").format(dtype=est.workload.kv_dtype), "GiB": kv,
              "start": w, "end": w + kv, "order": 1}]
    cap = [{"GiB": mem.capacity_bytes / 2**30,
            "what": gettext("capacity of {gpus} × {gpu}: {size}").format(
                gpus=est.gpus, gpu=est.hardware.name, size=fmt.nbytes(mem.capacity_bytes))}]
    title = (gettext("Memory: fits") if mem.fits else
             gettext("Memory: does not fit (needs ≥ {n} devices)").format(n=mem.min_gpus))
    return Built(_memory_template, (_texts(gettext, _MEMORY_TEXTS),), {"parts": parts, "cap": cap}, height=215,
                 title=title)  # the whole chart


@localized
def memory_chart(est: Estimate, *, gettext: Translate = english) -> alt.LayerChart:
    """Weights + KV cache against the memory of the chosen GPUs."""
    return _memory_built(est, gettext).chart()


def roofline_frame(est: Estimate, gettext: Translate = english) -> tuple[list[dict], list[dict], float]:
    """The roof (peak and bandwidth of one GPU, derated), every GEMM (one GPU's share) as a point, and the ridge."""
    hw = est.hardware
    peak = hw.peak(est.compute_dtype) * est.efficiency
    bw = hw.bandwidth * est.efficiency
    pts = []
    for phase in (est.prefill, est.decode):
        for o in phase.gemm_ops:
            if o.time_s > 0:
                pts.append({"phase": _phase(phase.name, gettext), "op": o.name, "intensity": o.intensity,
                            "flops_per_s": o.flops / o.time_s, "bound": gettext(BOUNDS.get(o.bound, o.bound)),
                            "time_s": o.time_s})
    lo = min([p["intensity"] for p in pts] + [1.0]) / 2
    hi = max([p["intensity"] for p in pts] + [peak / bw]) * 2
    return roof_curve(peak, bw, lo=lo, hi=hi, points=48), pts, peak / bw


_ROOFLINE_TEXTS = (N_("arithmetic intensity (FLOP/byte)"), N_("what"), N_("phase"), N_("op"),
                   N_("FLOP/byte"), N_("bound"), N_("time (s)"), N_("prefill"), N_("decode"))


def _roofline_template(t: tuple[str, ...] = (), words: tuple[tuple[str, str], ...] = (),
                       ops: tuple[str, ...] = ()) -> alt.LayerChart:
    x_title, what, phase, op, intensity, bound, time_s, *phases = t or _texts(english, _ROOFLINE_TEXTS)
    x = alt.X("intensity:Q", scale=alt.Scale(type="log"), title=x_title)
    y = alt.Y("flops_per_s:Q", scale=alt.Scale(type="log"), title="FLOP/s", axis=alt.Axis(format=".2s"))
    line = alt.Chart(_d("roof")).mark_line(color="#888").encode(x=x, y=y)
    ridge = alt.Chart(_d("ridge")).mark_rule(strokeDash=[4, 3], color="#bbb").encode(
        x="intensity:Q", tooltip=[alt.Tooltip("what:N", title=what)])
    base, op_tip = _op_tooltip(alt.Chart(_d("pts")), words, op)
    dots = base.mark_point(filled=True, size=80).encode(
        x=x, y=y, color=alt.Color("op:N", sort=OP_ORDER, scale=_OP_COLOR, title=op,
                                  # the legend: the ops plotted, every one (not the scale's whole domain)
                                  legend=alt.Legend(values=list(ops) or None, symbolLimit=0, **_op_guide(words))),
        shape=alt.Shape("phase:N", sort=phases, title=phase),
        tooltip=[alt.Tooltip("phase:N", title=phase), op_tip,
                 alt.Tooltip("intensity:Q", format=".3g", title=intensity),
                 alt.Tooltip("flops_per_s:Q", format=".3s", title="FLOP/s"), alt.Tooltip("bound:N", title=bound),
                 alt.Tooltip("time_s:Q", format=".3s", title=time_s)])
    return alt.layer(line, ridge, dots)


def _roofline_built(est: Estimate, gettext: Translate = english) -> Built:
    roof, pts, ridge = roofline_frame(est, gettext)
    where = (gettext("one of {gpus} × {gpu}").format(gpus=est.gpus, gpu=est.hardware.name) if est.gpus > 1
             else est.hardware.name)
    if est.efficiency_model:  # each op at its own share (the shape model, a calibration): no one number to quote
        title = gettext("Roofline: {where}, {dtype}, each op at its shape's efficiency (FLOPs / predicted time)").format(
            where=where, dtype=est.compute_dtype)
    else:
        title = gettext("Roofline: {where}, {dtype}, efficiency {efficiency:g} (each op: FLOPs / predicted time)"
                        ).format(where=where, dtype=est.compute_dtype, efficiency=est.efficiency)
    present = tuple(o for o in OP_ORDER if any(p["op"] == o for p in pts))
    return Built(_roofline_template, (_texts(gettext, _ROOFLINE_TEXTS), _op_words(gettext), present),
                 {"roof": roof, "pts": pts,
                  "ridge": [{"intensity": ridge, "what": gettext("ridge {ridge:.0f} FLOP/B").format(ridge=ridge)}]},
                 height=360, title=title)


@localized
def roofline_chart(est: Estimate, *, gettext: Translate = english) -> alt.LayerChart:
    """Log-log roofline of the chosen GPUs with every op of prefill and decode as a point."""
    return _roofline_built(est, gettext).chart()


_COMPARE_TEXTS = (N_("configuration"), N_("phase"), N_("op"), N_("time (s)"), N_("prefill"), N_("decode"))


def _compare_template(unit: str, t: tuple[str, ...] = (), words: tuple[tuple[str, str], ...] = ()) -> alt.Chart:
    config, phase, op, time_s, *phases = t or _texts(english, _COMPARE_TEXTS)
    base, op_tip = _op_tooltip(alt.Chart(_d("ops")), words, op)
    return base.mark_bar().encode(
        y=alt.Y("op:N", sort=OP_ORDER, title=None, axis=alt.Axis(**_op_guide(words))), yOffset="config:N",
        x=alt.X("value:Q", title=unit, axis=alt.Axis(format=".2s")),
        color=alt.Color("config:N", title=None),
        column=alt.Column("phase:N", sort=phases, title=None),
        tooltip=[alt.Tooltip("config:N", title=config), alt.Tooltip("phase:N", title=phase),
                 op_tip, alt.Tooltip("value:Q", format=".4s", title=unit),
                 alt.Tooltip("time_s:Q", format=".3s", title=time_s)],
    ).properties(width=320)


def _compare_built(a: Estimate, b: Estimate, label_a: str = "A", label_b: str = "B", macs: bool = False,
                   gettext: Translate = english) -> Built:
    unit = "MACs" if macs else "FLOPs"
    rows = []
    for est, label in ((a, label_a), (b, label_b)):
        rows += [{"config": label, "phase": _phase(r["phase"], gettext), "op": r["op"], "value": r["value"],
                  "time_s": r["time_s"]} for r in ops_records(est, macs)]
    return Built(_compare_template, (unit, _texts(gettext, _COMPARE_TEXTS), _op_words(gettext)), {"ops": rows},
                 title=gettext("{unit} by op, {a} vs {b}").format(unit=unit, a=label_a, b=label_b))


@localized
def compare_chart(a: Estimate, b: Estimate, label_a: str = "A", label_b: str = "B",
                  macs: bool = False, *, gettext: Translate = english) -> alt.Chart:
    """Grouped bars: FLOPs by op for two configurations, prefill and decode side by side."""
    return _compare_built(a, b, label_a, label_b, macs, gettext).chart()


def compare_rows(a: Estimate, b: Estimate) -> list[dict]:
    """The A-vs-B table: one row per quantity, the times first, each value formatted with its unit
    (``gemmlib.core.format``), and B/A where the two are numbers of the same kind. The quantities are
    N_-marked English (a page shows them through its gettext)."""
    def row(q: str, va, vb, show=fmt.cell) -> dict:
        both = all(isinstance(v, (int, float)) and not isinstance(v, bool) and v is not None for v in (va, vb))
        return {"quantity": q, "A": show(va), "B": show(vb),
                "B/A": fmt.ratio(vb / va) if both and va else fmt.DASH}

    ta, tb = a.times(), b.times()
    return [
        row(N_("time to first token"), ta["ttft_s"], tb["ttft_s"], fmt.duration),
        row(N_("per output token"), ta["time_per_output_token_s"], tb["time_per_output_token_s"], fmt.duration),
        row(N_("decode tokens/s (whole batch)"), ta["decode_tokens_per_s"], tb["decode_tokens_per_s"], fmt.si),
        row(N_("total time"), ta["total_s"], tb["total_s"], fmt.duration),
        row(N_("prefill FLOPs"), a.prefill.flops, b.prefill.flops, lambda v: fmt.si(v, "FLOP")),
        row(N_("decode FLOPs"), a.decode.flops, b.decode.flops, lambda v: fmt.si(v, "FLOP")),
        row(N_("weights"), a.memory.weights_bytes, b.memory.weights_bytes, fmt.nbytes),
        row(N_("KV cache at the end"), a.memory.kv_cache_bytes, b.memory.kv_cache_bytes, fmt.nbytes),
        row(N_("fits in memory"), getattr(a, "per_gpu", a.memory).fits, getattr(b, "per_gpu", b.memory).fits),
        row(N_("model"), a.model.name, b.model.name),
        row(N_("parameters"), a.model.params, b.model.params, fmt.count),
        row(N_("batch"), a.workload.batch, b.workload.batch, fmt.count),
        row(N_("prompt tokens"), a.workload.seq_len, b.workload.seq_len, fmt.count),
        row(N_("new tokens"), a.workload.new_tokens, b.workload.new_tokens, fmt.count),
        row(N_("dtypes (weights / activations / KV)"),
            f"{a.workload.weight_dtype} / {a.workload.act_dtype} / {a.workload.kv_dtype}",
            f"{b.workload.weight_dtype} / {b.workload.act_dtype} / {b.workload.kv_dtype}"),
        row(N_("GPUs"), f"{a.gpus} × {a.hardware.name}", f"{b.gpus} × {b.hardware.name}"),
        row(N_("efficiency"), a.efficiency, b.efficiency, lambda v: fmt.percent(v, 0)),
    ]


# ----- fast dicts for the pages ----------------------------------------------------------------

@localized
def gemm_shapes_spec(ops: list[Op], width: int = 760, *, gettext: Translate = english) -> dict:
    return _gemm_shapes_built(ops, width, gettext).spec()


@localized
def share_spec(curve: list[dict], crossover: float, claim_s: int | None = None,
               causal_crossover: float | None = None, *, gettext: Translate = english) -> dict:
    return _share_built(curve, crossover, claim_s, causal_crossover, gettext).spec()


@localized
def flops_by_op_spec(est: Estimate, macs: bool = False, *, gettext: Translate = english) -> dict:
    return _flops_by_op_built(est, macs, gettext).spec()


@localized
def memory_spec(est: Estimate, *, gettext: Translate = english) -> dict:
    return _memory_built(est, gettext).spec()


@localized
def roofline_spec(est: Estimate, *, gettext: Translate = english) -> dict:
    return _roofline_built(est, gettext).spec()


@localized
def compare_spec(a: Estimate, b: Estimate, label_a: str = "A", label_b: str = "B", macs: bool = False, *,
                 gettext: Translate = english) -> dict:
    return _compare_built(a, b, label_a, label_b, macs, gettext).spec()
