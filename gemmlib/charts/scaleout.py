"""Altair builders for the scale-out view of the LLM Estimator page: per-GPU memory, compute against
communication per op, the serving curve. Plain data in (:mod:`gemmlib.llm.scaleout` results), charts out;
``*_spec`` returns the Vega-Lite dict through the cached templates of :mod:`gemmlib.charts.model`.

Every text a reader sees goes through ``gettext`` (English by default; the page passes ``gettext=ui._``)."""

from __future__ import annotations

import altair as alt

from gemmlib.charts.aria import localized
from gemmlib.charts.model import (
    OP_ORDER,
    PHASES,
    Built,
    _d,
    _op_guide,
    _op_tooltip,
    _op_words,
    _phase,
    _texts,
)
from gemmlib.core.i18n import N_, Translate, english
from gemmlib.llm.memory import PerGpuMemory
from gemmlib.llm.serving import Serving

GiB = 2**30
PART_ORDER = [N_("weights"), N_("gradients"), N_("optimizer state"), N_("KV cache"), N_("activations"),
              N_("workspace")]  # PerGpuMemory.parts(), in this order
BOUNDARY = N_("stage boundary")  # the pipeline send's place among the ops (parallel.pipeline_send)
WHAT = {"compute": N_("compute"), "communication": N_("communication"), "idle": N_("idle")}  # comm_records' kinds


# ----- per-GPU memory ------------------------------------------------------------------------------

_MEMORY_TEXTS = (N_("GiB on the busiest GPU"), N_("part"), N_("what"))  # then the parts the bar holds
# each part's colour wherever it is drawn (Vega's tableau10 in PART_ORDER: the colours a full legend gave them)
PART_COLOURS = dict(zip(PART_ORDER, ("#4c78a8", "#f58518", "#e45756", "#72b7b2", "#54a24b", "#eeca3b"), strict=True))
BAR_PX = 44  # the bar's height in pixels: the plot's own height (autosize fit-x: title, axis and legend add to it)


def _per_gpu_memory_template(t: tuple[str, ...] = ()) -> alt.LayerChart:
    # One thick bar (the parts stacked left to right) and the GPU's capacity as a red rule across it, labelled
    # above; the legend under the chart in rows, so no part is cut off. The height set is the plot's alone
    # (fit-x): Streamlit's default for a layer ("fit") would squeeze the bar into what the legend leaves.
    # t: the axis and tooltip texts, then each part drawn and its colour (by default every part)
    x_title, part, what, *shown = t or (*_texts(english, _MEMORY_TEXTS), *(x for p in PART_ORDER
                                                                            for x in (p, PART_COLOURS[p])))
    parts, colours = shown[::2], shown[1::2]
    x = alt.X("start:Q", title=x_title, scale=alt.Scale(domainMin=0, nice=True),
              axis=alt.Axis(format=",.0f", tickCount=8, labelOverlap=True))
    bars = alt.Chart(_d("parts")).mark_bar().encode(
        x=x, x2="end:Q", y=alt.value(0), y2=alt.value(BAR_PX),
        color=alt.Color("part:N", title=None, sort=parts, scale=alt.Scale(domain=parts, range=colours),
                        legend=alt.Legend(orient="bottom", direction="horizontal", columns=3, labelLimit=300,
                                          symbolLimit=0)),
        tooltip=[alt.Tooltip("part:N", title=part), alt.Tooltip("GiB:Q", format=",.2f", title="GiB")])
    rule = alt.Chart(_d("cap")).mark_rule(color="#e4572e", strokeWidth=3).encode(
        x="GiB:Q", y=alt.value(-6), y2=alt.value(BAR_PX + 6), tooltip=[alt.Tooltip("what:N", title=what)])
    text = alt.Chart(_d("cap")).mark_text(align="right", baseline="bottom", dx=-4, color="#c0392b",
                                          fontWeight="bold").encode(x="GiB:Q", y=alt.value(-8), text="what:N")
    return alt.layer(bars, rule, text)


STAGES = {"first": N_("first"), "last": N_("last")}  # PerGpuMemory.stage, as drawn


def _memory_built(mem: PerGpuMemory, gpu: str, label: str = N_("per GPU"), gettext: Translate = english) -> Built:
    from gemmlib.core import format as fmt

    label = gettext(label)
    parts, start = [], 0.0
    for p, b in mem.parts():
        parts.append({"part": gettext(p), "GiB": b / GiB, "start": start, "end": start + b / GiB,
                      "order": PART_ORDER.index(p)})
        start += b / GiB
    cap = [{"GiB": mem.capacity_bytes / GiB, "what": f"{gpu}: {fmt.nbytes(mem.capacity_bytes)}"}]
    verdict = gettext("fits") if mem.fits else gettext("does not fit")
    if mem.stage:
        title = gettext("Memory {label}: {verdict} ({stage} pipeline stage)").format(
            label=label, verdict=verdict, stage=gettext(STAGES.get(mem.stage, mem.stage)))
    else:
        title = gettext("Memory {label}: {verdict}").format(label=label, verdict=verdict)
    # the legend names the parts this GPU holds (training keeps no KV cache, inference no gradients)
    legend = tuple(x for p, _ in mem.parts() for x in (gettext(p), PART_COLOURS[p]))
    return Built(_per_gpu_memory_template, (_texts(gettext, _MEMORY_TEXTS) + legend,), {"parts": parts, "cap": cap},
                 height=BAR_PX, title=title, autosize={"type": "fit-x", "contains": "padding"})


@localized
def per_gpu_memory_chart(mem: PerGpuMemory, gpu: str, label: str = N_("per GPU"), *,
                         gettext: Translate = english) -> alt.LayerChart:
    """Stacked bar of one GPU's memory (weights, KV cache, activations, workspace, ...) against its capacity.
    ``label`` (N_-marked English) says whose memory it is."""
    return _memory_built(mem, gpu, label, gettext).chart()


@localized
def per_gpu_memory_spec(mem: PerGpuMemory, gpu: str, label: str = N_("per GPU"), *,
                        gettext: Translate = english) -> dict:
    return _memory_built(mem, gpu, label, gettext).spec()


# ----- compute against communication, per op ----------------------------------------------------------

def comm_records(est, gettext: Translate = english) -> list[dict]:
    """One GPU's time per op, split into compute and the communication that follows it, per phase."""
    def w(what: str) -> str:
        return gettext(WHAT[what])

    rows = []
    for ph in (est.prefill, est.decode):
        comm = ph.comm_by_op()
        names = [o.name for o in ph.ops] + [k for k in comm if k not in {o.name for o in ph.ops}]
        times = {o.name: o.time_s for o in ph.ops}
        for name in names:
            for what, t in (("compute", times.get(name, 0.0)), ("communication", comm.get(name, 0.0))):
                if t:
                    rows.append({"phase": _phase(ph.name, gettext), "op": gettext(BOUNDARY) if name == BOUNDARY
                                 else name, "what": w(what), "ms": t * 1e3})
        if ph.bubble_s:
            rows.append({"phase": _phase(ph.name, gettext), "op": gettext("pipeline bubble"), "what": w("idle"),
                         "ms": ph.bubble_s * 1e3})
    return rows


_COMM_TEXTS = (N_("ms on one GPU"), N_("phase"), N_("op"), N_("what"), N_("pipeline bubble"), BOUNDARY,
               *WHAT.values(), *PHASES.values())


def _comm_template(t: tuple[str, ...] = (), words: tuple[tuple[str, str], ...] = ()) -> alt.Chart:
    x_title, phase, op, what, bubble, boundary, *kinds = t or _texts(english, _COMM_TEXTS)
    kinds, phases = kinds[:3], kinds[3:]
    order = OP_ORDER + ["embedding", "norms", "rotary", "kv_repeat", "attn_softmax", "activation", "moe_routing",
                        "residual", boundary, bubble]
    base, op_tip = _op_tooltip(alt.Chart(_d("rows")), words, op)
    return base.mark_bar().encode(
        y=alt.Y("op:N", sort=order, title=None, axis=alt.Axis(**_op_guide(words))),
        x=alt.X("ms:Q", title=x_title, stack="zero"),
        color=alt.Color("what:N", title=None, scale=alt.Scale(domain=kinds, range=["#4c78a8", "#e45756", "#bab0ac"])),
        column=alt.Column("phase:N", sort=phases, title=None),
        tooltip=[alt.Tooltip("phase:N", title=phase), op_tip,
                 alt.Tooltip("what:N", title=what), alt.Tooltip("ms:Q", format=",.3f", title="ms")],
    ).properties(width=300).resolve_scale(x="independent")


def _comm_built(est, gettext: Translate = english) -> Built:
    title = (gettext("Compute and communication per op (not overlapped; best case: overlapped)")
             if est.parallel.overlap else gettext("Compute and communication per op (not overlapped)"))
    return Built(_comm_template, (_texts(gettext, _COMM_TEXTS), _op_words(gettext)),
                 {"rows": comm_records(est, gettext)}, title=title)


@localized
def comm_by_op_chart(est, *, gettext: Translate = english) -> alt.Chart:
    return _comm_built(est, gettext).chart()


@localized
def comm_by_op_spec(est, *, gettext: Translate = english) -> dict:
    return _comm_built(est, gettext).spec()


# ----- the serving curve ---------------------------------------------------------------------------

def serving_records(sv: Serving) -> list[dict]:
    best = sv.best.concurrency if sv.best else None
    return [{"concurrency": p.concurrency, "tokens/s": p.tokens_per_s, "tokens/s per GPU": p.tokens_per_s_per_gpu,
             "TPOT ms": p.tpot_s * 1e3, "TTFT ms": p.ttft_s * 1e3, "fits": p.fits, "best": p.concurrency == best}
            for p in sv.points]


_SERVING_TEXTS = (N_("concurrent requests"), N_("generated tokens/s"), N_("ms per output token"),
                  N_("ms to the first token"), N_("Throughput"), N_("Time per output token"), N_("Time to first token"),
                  N_("concurrency"), N_("tokens/s"), N_("TPOT ms"), N_("TTFT ms"))
TARGET_COLOR = "#e4572e"  # the targets' rules and the best point
LATENCY_PANEL_PX = 125  # the TPOT and TTFT panels' height, one above the other beside the throughput's
_TARGETS = {"TPOT ms": "tpot_target", "TTFT ms": "ttft_target"}  # each latency panel's target: its dataset


def _target_layers(y: str) -> list[alt.Chart]:
    """A target's dashed rule across a latency panel and its words above the rule's left end; no row in the
    dataset (no target set): nothing drawn."""
    data = alt.Chart(_d(_TARGETS[y]))
    return [data.mark_rule(strokeDash=[4, 3], color=TARGET_COLOR).encode(y=f"{y}:Q"),
            data.mark_text(align="left", baseline="bottom", dx=3, dy=-2, color=TARGET_COLOR).encode(
                x=alt.value(0), y=f"{y}:Q", text="label:N")]


def _serving_template(t: tuple[str, ...] = ()) -> alt.HConcatChart:
    x_title, y_tput, y_tpot, y_ttft, t_tput, t_tpot, t_ttft, *tips = t or _texts(english, _SERVING_TEXTS)
    x = alt.X("concurrency:Q", scale=alt.Scale(type="log", base=2), title=x_title)
    tip = [alt.Tooltip("concurrency:Q", title=tips[0]), alt.Tooltip("tokens/s:Q", format=",.0f", title=tips[1]),
           alt.Tooltip("TPOT ms:Q", format=",.2f", title=tips[2]), alt.Tooltip("TTFT ms:Q", format=",.1f", title=tips[3])]
    base = alt.Chart(_d("points"))
    tput = alt.layer(base.mark_line(point=True).encode(x=x, y=alt.Y("tokens/s:Q", title=y_tput), tooltip=tip),
                     base.transform_filter("datum.best").mark_point(size=160, color=TARGET_COLOR, filled=True).encode(
                         x=x, y="tokens/s:Q", tooltip=tip)).properties(width=320, title=t_tput)
    # the latency panels one above the other (three side by side ran past the page's column at 1280 px)
    # TTFT on a log scale: from a few ms at one request to seconds past the KV limit (a 100 ms target sat on the axis)
    tpot, ttft = (alt.layer(base.mark_line(point=True).encode(x=x, y=alt.Y(f"{y}:Q", title=y_title, scale=scale,
                                                                            axis=axis), tooltip=tip),
                            *_target_layers(y)).properties(width=320, height=LATENCY_PANEL_PX, title=title)
                  for y, y_title, title, scale, axis in (
                      ("TPOT ms", y_tpot, t_tpot, alt.Undefined, alt.Undefined),
                      ("TTFT ms", y_ttft, t_ttft, alt.Scale(type="log"), alt.Axis(tickCount=4, format=",~g"))))
    return alt.hconcat(tput, alt.vconcat(tpot, ttft))


def _serving_built(sv: Serving, gettext: Translate = english, title: str | None = None) -> Built:
    """Each latency panel's target (its rule and words) where one is set: the TPOT target, the TTFT target."""
    targets = {_TARGETS[y]: [{y: v * 1e3, "label": gettext(words).format(ms=v * 1e3)}] if v else []
               for y, v, words in (("TPOT ms", sv.tpot_target_s, N_("TPOT target {ms:g} ms")),
                                   ("TTFT ms", sv.ttft_target_s, N_("TTFT target {ms:g} ms")))}
    return Built(_serving_template, (_texts(gettext, _SERVING_TEXTS),), {"points": serving_records(sv), **targets},
                 title=title or gettext("Serving up to the KV limit ({n:,} requests)").format(n=sv.kv_limit))


@localized
def serving_chart(sv: Serving, *, gettext: Translate = english, title: str | None = None) -> alt.HConcatChart:
    """Throughput, TPOT and TTFT against the concurrency, each latency panel with its target's rule where one is
    set. ``title`` (in the reader's language) says what the points are
    where it is not the curve up to the KV limit (one point at a request rate)."""
    return _serving_built(sv, gettext, title).chart()


@localized
def serving_spec(sv: Serving, *, gettext: Translate = english, title: str | None = None) -> dict:
    """:func:`serving_chart` as a Vega-Lite spec."""
    return _serving_built(sv, gettext, title).spec()


# ----- several models: decode throughput against the batch -------------------------------------------

_MODELS_TEXTS = (N_("batch (concurrent sequences)"), N_("decode tokens/s (whole batch)"), N_("model"), N_("batch"),
                 N_("tokens/s"), N_("TPOT ms"))


def _models_template(t: tuple[str, ...] = ()) -> alt.Chart:
    x_title, y_title, model, *tips = t or _texts(english, _MODELS_TEXTS)
    return alt.Chart(_d("rows")).mark_line(point=True).encode(
        x=alt.X("batch:Q", scale=alt.Scale(type="log", base=2), title=x_title),
        y=alt.Y("tokens/s:Q", scale=alt.Scale(type="log"), title=y_title),
        color=alt.Color("model:N", title=model),
        tooltip=[alt.Tooltip("model:N", title=model), alt.Tooltip("batch:Q", title=tips[0]),
                 alt.Tooltip("tokens/s:Q", format=",.0f", title=tips[1]),
                 alt.Tooltip("TPOT ms:Q", format=",.2f", title=tips[2])],
    ).properties(width=640, height=320)


@localized
def models_spec(rows: list[dict], *, gettext: Translate = english) -> dict:
    """Decode tokens/s against the batch, one line per model (``rows``: model, batch, tokens/s, TPOT ms), each
    up to the largest batch that fits."""
    return Built(_models_template, (_texts(gettext, _MODELS_TEXTS),), {"rows": rows},
                 title=gettext("Decode throughput against the batch, each model up to the batch that fits")).spec()
