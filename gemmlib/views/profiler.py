"""The Profiler page's presenter: the block in words, the run's heading, the top ops and the prediction's table.

``pages/10_Profiler.py`` lays out the inputs, the prediction, the profile and the monitored benchmark;
the block, the profiling and the prediction are ``gemmlib.measure.profiler`` (the page passes its
objects in: a block config, a profile result, its ops). Nothing here imports streamlit or measure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from gemmlib.core import format as fmt
from gemmlib.core.i18n import N_, Translate, english
from gemmlib.views.estimator import Metric

ATTENTION_LABELS = {"eager": N_("eager"), "sdpa": "sdpa"}
PRED_LABELS = {"op": N_("op"), "kind": N_("kind"), "shape": N_("shape"), "flops": "FLOPs", "bound": N_("bound"),
               "time": N_("time")}  # the prediction's columns, as shown
PRED_VALUES = {"gemm": "GEMM", "other": N_("not GEMM"), "compute": N_("compute-bound"),
               "memory": N_("memory-bound")}  # its kind and bound cells, as shown
TOP_OPS_COLUMNS = ("name", "shapes", "calls", "time µs", "share", "is_gemm", "flops", "tflops")


def attention(name: str, gettext: Translate = english) -> str:
    return gettext(ATTENTION_LABELS.get(name, name))


def english_n(singular: str, plural: str, n: int) -> str:
    """``ngettext`` without a catalogue: English's two forms."""
    return singular if n == 1 else plural


def block_text(cfg: Any, memory_bytes: float, gettext: Translate = english,
               ngettext: Callable[[str, str, int], str] = english_n) -> str:
    """The block a run profiles, in one line of markdown (``cfg``: a ``BlockConfig``; ``memory_bytes``:
    its peak, ``gemmlib.measure.profiler.memory_needed``): "1 layer", "2 layers"."""
    layers = ngettext("{n} layer", "{n} layers", cfg.layers).format(n=cfg.layers)
    return gettext("**Block:** hidden {hidden}, {heads} heads of {head_dim} ({kv} K/V heads), MLP {ffn}, "
                   "{batch}×{seq} tokens, {layers}, {dtype}, {attention} attention — about {memory} at its "
                   "peak.").format(hidden=cfg.hidden, heads=cfg.heads, head_dim=cfg.head_dim, kv=cfg.kv_heads,
                                   ffn=cfg.intermediate, batch=cfg.batch, seq=cfg.seq_len, layers=layers,
                                   dtype=cfg.dtype, attention=attention(cfg.attention, gettext),
                                   memory=fmt.nbytes(memory_bytes))


def run_heading(res: Any, ngettext: Callable[[str, str, int], str], gettext: Translate = english,
                md: Callable[[str], str] = str) -> str:
    """A profile's heading (``res``: a ``ProfileResult``): its blocks, device, sizes and time basis
    (``md`` escapes the device's name, a text from the machine)."""
    c0 = res.config
    return ngettext("**{layers} block on {device}** ({kind}, {dtype}, {attention} attention, hidden {hidden}, "
                    "{batch}×{seq} tokens) — {basis}, median of {passes}.",
                    "**{layers} blocks on {device}** ({kind}, {dtype}, {attention} attention, hidden {hidden}, "
                    "{batch}×{seq} tokens) — {basis}, median of {passes}.", c0.layers).format(
        layers=c0.layers, device=md(res.device_name), kind=res.device, dtype=c0.dtype,
        attention=attention(c0.attention, gettext), hidden=c0.hidden, batch=c0.batch, seq=c0.seq_len,
        basis=gettext(res.time_basis), passes=ngettext("{n} pass", "{n} passes", res.steps).format(n=res.steps))


def top_ops_rows(ops: Iterable[Any], unattributed: str, gettext: Translate = english) -> list[dict]:
    """The top ops' table (``ops``: ``OpStat``s, their time in µs, the GPU work outside any aten op,
    ``unattributed``, named in the reader's language), columns ``TOP_OPS_COLUMNS``."""
    rows = []
    for o in ops:
        d = o.to_dict()
        d["time µs"] = d["time_s"] * 1e6
        d["name"] = gettext(unattributed) if d["name"] == unattributed else d["name"]
        rows.append({c: d.get(c) for c in TOP_OPS_COLUMNS})
    return rows


def prediction_rows(rows: Iterable[Mapping], gettext: Translate = english) -> list[dict]:
    """The prediction's ops (one layer) as a table: the time written by the one formatter, kind and
    bound in the reader's language."""
    out = []
    for r in rows:
        d = dict(r)
        if "time_s" in d:
            d["time"] = fmt.duration(d.pop("time_s"))
        for col in ("kind", "bound"):
            if isinstance(d.get(col), str):
                d[col] = gettext(PRED_VALUES.get(d[col], d[col]))
        out.append(d)
    return out


def hardware_name(name: str, gettext: Translate = english) -> str:
    """A hardware row's name in the reader's language: a measured one's ("AMD EPYC (measured)", core.ceilings), or
    the catalogue's own (its CPU row is marked: "CPU (edit me)")."""
    if name.endswith(" (measured)"):
        return gettext(N_("{name} (measured)")).format(name=name.removesuffix(" (measured)"))
    return gettext(name)


def points(a: float, b: float) -> str:
    """The difference of two shares in percentage points, signed (the metric's arrow reads the sign): 0.684 − 0.8
    is "-11.6" points, not "-11.6%" (which would be 11.6 % of 80 %, 70.7 %)."""
    return f"{(a - b) * 100:+.1f}"


def against_target(share: float, target: float, gettext: Translate = english) -> str:
    """"-11.6 points vs the 80% target": the signed number first in every language (Streamlit draws a metric's
    arrow down and red only for a delta that starts with "-")."""
    return f"{points(share, target)} " + gettext("points vs the {target} target").format(target=fmt.percent(target, 0))


def prediction_metrics(pred: Any, target: float, gettext: Translate = english) -> list[Metric]:
    """The prediction's figures (``pred``: a ``Prediction``): the GEMM share of FLOPs, of time against
    the ``target`` share (in percentage points), and the GEMM FLOPs per pass."""
    return [Metric(gettext("GEMM share of FLOPs"), f"{pred.flop_share:.1%}"),
            Metric(gettext("GEMM share of time (roofline)"), f"{pred.time_share:.1%}",
                   delta=against_target(pred.time_share, target, gettext)),
            Metric(gettext("GEMM FLOPs per pass"), fmt.si(pred.gemm_flops, "FLOP"))]


def run_metrics(res: Any, target: float, gettext: Translate = english) -> list[Metric | None]:
    """A profile's figures: the GEMM share of time against ``target``, the prediction's share beside it
    (None without a prediction), the time per pass and what the GEMMs achieved; the differences in percentage
    points."""
    p = res.prediction
    return [Metric(gettext("GEMM share of time"), f"{res.gemm_share:.1%}",
                   delta=against_target(res.gemm_share, target, gettext)),
            None if p is None else Metric(
                gettext("Predicted ({hardware})").format(hardware=hardware_name(p.hardware, gettext)), f"{p.time_share:.1%}",
                delta=f"{points(res.gemm_share, p.time_share)} " + gettext("points, measured − predicted"),
                delta_color="off"),
            Metric(gettext("Time per pass"), fmt.duration(res.total_time_s)),
            Metric(gettext("GEMMs achieved"), fmt.si(res.gemm_tflops * 1e12 if res.gemm_tflops else None, "FLOP/s"))]


def verdict(res: Any, target: float, gettext: Translate = english) -> tuple[bool, str]:
    """(True, the good news) when the GEMMs take at least ``target`` of the time, else (False, why not)."""
    if res.meets_target:
        return True, gettext("GEMMs take {share:.1%} of the time: the block is GEMM-bound, as the article "
                             "expects.").format(share=res.gemm_share)
    return False, gettext("GEMMs take only {share:.1%} of the time (target {target:.0%}): the rest — softmax, norms, "
                          "element-wise ops, copies and launch overhead — dominates at these sizes. Larger hidden "
                          "sizes, longer sequences or fused attention (sdpa) raise the share.").format(
        share=res.gemm_share, target=target)
