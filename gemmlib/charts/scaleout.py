"""Altair builders for the scale-out view of the LLM Estimator page: per-GPU memory, compute against
communication per op, the serving curve. Plain data in (:mod:`gemmlib.llm.scaleout` results), charts out;
``*_spec`` returns the Vega-Lite dict through the cached templates of :mod:`gemmlib.charts.model`."""

from __future__ import annotations

import altair as alt

from gemmlib.charts.model import OP_ORDER, Built, _d
from gemmlib.llm.memory import PerGpuMemory
from gemmlib.llm.serving import Serving

GiB = 2**30
PART_ORDER = ["weights", "gradients", "optimizer state", "KV cache", "activations", "workspace"]


# ----- per-GPU memory ------------------------------------------------------------------------------

def _per_gpu_memory_template() -> alt.LayerChart:
    bars = alt.Chart(_d("parts")).mark_bar().encode(
        x=alt.X("GiB:Q", title="GiB on the busiest GPU", stack="zero"), y=alt.Y("what:N", title=None),
        color=alt.Color("part:N", title=None, sort=PART_ORDER, scale=alt.Scale(domain=PART_ORDER)),
        order="order:Q", tooltip=["part:N", alt.Tooltip("GiB:Q", format=",.2f")])
    rule = alt.Chart(_d("cap")).mark_rule(color="#e4572e", strokeWidth=2).encode(x="GiB:Q", tooltip=["what:N"])
    text = alt.Chart(_d("cap")).mark_text(align="right", dx=-4, dy=-28, color="#e4572e").encode(x="GiB:Q", text="what:N")
    return alt.layer(bars, rule, text)


def _memory_built(mem: PerGpuMemory, gpu: str, label: str = "per GPU") -> Built:
    parts = [{"part": p, "GiB": b / GiB, "order": PART_ORDER.index(p), "what": label} for p, b in mem.parts()]
    cap = [{"GiB": mem.capacity_bytes / GiB, "what": f"{gpu}: {mem.capacity_bytes / GiB:,.1f} GiB"}]
    title = f"Memory {label}: " + ("fits" if mem.fits else "does not fit") + (
        f" ({mem.stage} pipeline stage)" if mem.stage else "")
    return Built(_per_gpu_memory_template, (), {"parts": parts, "cap": cap}, height=110, title=title)


def per_gpu_memory_chart(mem: PerGpuMemory, gpu: str, label: str = "per GPU") -> alt.LayerChart:
    """Stacked bar of one GPU's memory (weights, KV cache, activations, workspace, ...) against its capacity."""
    return _memory_built(mem, gpu, label).chart()


def per_gpu_memory_spec(mem: PerGpuMemory, gpu: str, label: str = "per GPU") -> dict:
    return _memory_built(mem, gpu, label).spec()


# ----- compute against communication, per op ----------------------------------------------------------

def comm_records(est) -> list[dict]:
    """One GPU's time per op, split into compute and the communication that follows it, per phase."""
    rows = []
    for ph in (est.prefill, est.decode):
        comm = ph.comm_by_op()
        names = [o.name for o in ph.ops] + [k for k in comm if k not in {o.name for o in ph.ops}]
        times = {o.name: o.time_s for o in ph.ops}
        for name in names:
            for what, t in (("compute", times.get(name, 0.0)), ("communication", comm.get(name, 0.0))):
                if t:
                    rows.append({"phase": ph.name, "op": name, "what": what, "ms": t * 1e3})
        if ph.bubble_s:
            rows.append({"phase": ph.name, "op": "pipeline bubble", "what": "idle", "ms": ph.bubble_s * 1e3})
    return rows


def _comm_template() -> alt.Chart:
    order = OP_ORDER + ["embedding", "norms", "rotary", "kv_repeat", "attn_softmax", "activation", "moe_routing",
                        "residual", "stage boundary", "pipeline bubble"]
    return alt.Chart(_d("rows")).mark_bar().encode(
        y=alt.Y("op:N", sort=order, title=None), x=alt.X("ms:Q", title="ms on one GPU", stack="zero"),
        color=alt.Color("what:N", title=None, scale=alt.Scale(domain=["compute", "communication", "idle"],
                                                               range=["#4c78a8", "#e45756", "#bab0ac"])),
        column=alt.Column("phase:N", sort=["prefill", "decode"], title=None),
        tooltip=["phase:N", "op:N", "what:N", alt.Tooltip("ms:Q", format=",.3f")],
    ).properties(width=300).resolve_scale(x="independent")


def _comm_built(est) -> Built:
    return Built(_comm_template, (), {"rows": comm_records(est)},
                 title="Compute and communication per op (not overlapped" + (
                     "; best case: overlapped)" if est.parallel.overlap else ")"))


def comm_by_op_chart(est) -> alt.Chart:
    return _comm_built(est).chart()


def comm_by_op_spec(est) -> dict:
    return _comm_built(est).spec()


# ----- the serving curve ---------------------------------------------------------------------------

def serving_records(sv: Serving) -> list[dict]:
    best = sv.best.concurrency if sv.best else None
    return [{"concurrency": p.concurrency, "tokens/s": p.tokens_per_s, "tokens/s per GPU": p.tokens_per_s_per_gpu,
             "TPOT ms": p.tpot_s * 1e3, "TTFT ms": p.ttft_s * 1e3, "fits": p.fits, "best": p.concurrency == best}
            for p in sv.points]


def _serving_template() -> alt.HConcatChart:
    x = alt.X("concurrency:Q", scale=alt.Scale(type="log", base=2), title="concurrent requests")
    tip = [alt.Tooltip("concurrency:Q"), alt.Tooltip("tokens/s:Q", format=",.0f"),
           alt.Tooltip("TPOT ms:Q", format=",.2f"), alt.Tooltip("TTFT ms:Q", format=",.1f")]
    base = alt.Chart(_d("points"))
    tput = alt.layer(base.mark_line(point=True).encode(x=x, y=alt.Y("tokens/s:Q", title="generated tokens/s"),
                                                       tooltip=tip),
                     base.transform_filter("datum.best").mark_point(size=160, color="#e4572e", filled=True).encode(
                         x=x, y="tokens/s:Q", tooltip=tip)).properties(width=320, title="Throughput")
    lat = alt.layer(base.mark_line(point=True).encode(x=x, y=alt.Y("TPOT ms:Q", title="ms per output token"),
                                                      tooltip=tip),
                    alt.Chart(_d("target")).mark_rule(strokeDash=[4, 3], color="#e4572e").encode(y="TPOT ms:Q")
                    ).properties(width=320, title="Time per output token")
    return alt.hconcat(tput, lat)


def _serving_built(sv: Serving) -> Built:
    target = [{"TPOT ms": sv.tpot_target_s * 1e3}] if sv.tpot_target_s else []
    return Built(_serving_template, (), {"points": serving_records(sv), "target": target},
                 title=f"Serving up to the KV limit ({sv.kv_limit:,} requests)")


def serving_chart(sv: Serving) -> alt.HConcatChart:
    return _serving_built(sv).chart()


def serving_spec(sv: Serving) -> dict:
    return _serving_built(sv).spec()
