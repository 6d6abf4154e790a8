"""Altair charts of the tiling benchmark (shared by the Tiling page and the report): throughput by
tile size, the traffic each tile implies, and the wave-quantization sweep."""

from __future__ import annotations

from typing import Any

from gemmlib.charts.aria import localized
from gemmlib.core.flops import gemm_bytes
from gemmlib.core.i18n import Translate, english
from gemmlib.core.results import BenchResult
from gemmlib.core.units import GiB
from gemmlib.explain.tiling import tile_traffic


@localized
def tiling_chart(results: list[BenchResult], *, gettext: Translate = english):
    """TFLOP/s against tile size per implementation, with the library as a horizontal rule. Texts
    through ``gettext``; the implementations' names as given."""
    import altair as alt
    import pandas as pd

    df = pd.DataFrame([{"impl": r.name, "tile": r.shape.get("tile"), "TFLOP/s": r.tflops,
                        "ms": r.median_s * 1e3 if r.median_s else None}
                       for r in results if r.median_s])
    if df.empty:
        return None
    impl = alt.Tooltip("impl:N", title=gettext("implementation"))
    tile = alt.Tooltip("tile:Q", title=gettext("tile"))
    ms = alt.Tooltip("ms:Q", title="ms", format=".4g")
    swept = df[df["tile"].notna()]
    lib = df[df["tile"].isna()]
    layers = []
    if not swept.empty:
        layers.append(alt.Chart(swept).mark_line(point=True).encode(
            # ticks at the tiles run (a log axis between 16 and 32 ticked 18, 20, 22 …, tiles no kernel used)
            x=alt.X("tile:Q", scale=alt.Scale(type="log", base=2), title=gettext("tile size"),
                    axis=alt.Axis(values=sorted({int(t) for t in swept["tile"]}), format="d")),
            y=alt.Y("TFLOP/s:Q", scale=alt.Scale(type="log"), title=gettext("TFLOP/s (log)")),
            color=alt.Color("impl:N", title=gettext("implementation")),
            tooltip=[impl, tile, alt.Tooltip("TFLOP/s:Q", format=".4g"), ms]))
    if not lib.empty:
        layers.append(alt.Chart(lib).mark_rule(strokeDash=[6, 3]).encode(
            y="TFLOP/s:Q", color=alt.Color("impl:N", title=gettext("implementation")),
            tooltip=[impl, alt.Tooltip("TFLOP/s:Q", format=".4g"), ms]))
    return alt.layer(*layers).properties(height=320, title=gettext("Throughput by tile size (dashed: no tile sweep)"))


@localized
def traffic_chart(m: int, n: int, k: int, tiles: list[int], dtype: str, *, gettext: Translate = english):
    """Implied DRAM traffic per tile size, A and B stacked, against the minimum (texts through ``gettext``)."""
    import altair as alt
    import pandas as pd

    recs = []
    for t in tiles:
        tr = tile_traffic(m, n, k, t, dtype=dtype)
        recs += [{"tile": str(t), "operand": "A", "GiB": tr.a_bytes / GiB, "reads": tr.a_reads},
                 {"tile": str(t), "operand": "B", "GiB": tr.b_bytes / GiB, "reads": tr.b_reads},
                 {"tile": str(t), "operand": gettext("D (write)"), "GiB": tr.d_bytes / GiB, "reads": 1}]
    df = pd.DataFrame(recs)
    bars = alt.Chart(df).mark_bar().encode(
        x=alt.X("tile:N", sort=[str(t) for t in tiles], title=gettext("tile size (square)")),
        y=alt.Y("GiB:Q", title=gettext("implied DRAM traffic, GiB")),
        color=alt.Color("operand:N", title=gettext("operand")),
        tooltip=[alt.Tooltip("tile:N", title=gettext("tile")), alt.Tooltip("operand:N", title=gettext("operand")),
                 alt.Tooltip("GiB:Q", format=".4g"), alt.Tooltip("reads:Q", title=gettext("reads"))])
    floor = alt.Chart(pd.DataFrame([{"GiB": gemm_bytes(m, n, k, dtype) / GiB}])).mark_rule(
        strokeDash=[4, 4], color="black").encode(y="GiB:Q", tooltip=[alt.Tooltip("GiB:Q", format=".4g")])
    return (bars + floor).properties(height=300, title=gettext("Traffic each tile size implies (dashed: the minimum)"))


@localized
def wave_chart(measured: list[BenchResult] | None, predicted: list[dict], *, gettext: Translate = english):
    """Throughput against N relative to the first N: the prediction (tile × wave efficiency) and, on a
    GPU, each measured implementation's TFLOP/s (texts through ``gettext``)."""
    import altair as alt
    import pandas as pd

    recs = [{"N": p["n"], "series": gettext("predicted (tile × wave)"), "relative": p["predicted_efficiency"]
             / predicted[0]["predicted_efficiency"], "waves": p["waves"], "tiles": p["tiles"]} for p in predicted]
    for impl in sorted({r.name for r in (measured or []) if r.tflops}):
        timed = [r for r in measured if r.name == impl and r.tflops]
        t0 = timed[0].tflops
        label = (gettext("measured: cuBLAS (torch)") if impl == "torch" else
                 gettext("measured: {impl}").format(impl=impl))
        recs += [{"N": r.shape["n"], "series": label, "relative": r.tflops / t0, "waves": r.extra.get("waves"),
                  "tiles": r.extra.get("tiles")} for r in timed]
    df = pd.DataFrame(recs)
    return alt.Chart(df).mark_line(point=True, interpolate="step-after").encode(
        x=alt.X("N:Q", scale=alt.Scale(zero=False)),
        y=alt.Y("relative:Q", title=gettext("TFLOP/s relative to the first N"), scale=alt.Scale(zero=False)),
        color=alt.Color("series:N", title=gettext("series")),
        tooltip=["N", alt.Tooltip("series:N", title=gettext("series")),
                 alt.Tooltip("relative:Q", title=gettext("relative"), format=".3f"),
                 alt.Tooltip("tiles:Q", title=gettext("tiles")), alt.Tooltip("waves:Q", title=gettext("waves"))],
    ).properties(height=300, title=gettext("Stepping N past a tile multiple"))


def trace_chart(tr: Any, step: int):
    """The tiled loop order at one step: which tiles of A and B are loaded for the D tile being built."""
    import altair as alt
    import numpy as np
    import pandas as pd

    p = tr.problem
    s = tr.steps[step]
    d_now = tr.d_after(step)
    a_set, b_set, d_set = set(s.a_cells), set(s.b_cells), set(s.d_cells)
    A, B, _ = p.arrays()
    recs = []
    for name, mat, hot, ox in (("A", A, a_set, 0), ("B", B, b_set, p.k + 1),
                               ("D", d_now, d_set, p.k + 1 + p.n + 1)):
        rows_, cols_ = mat.shape
        for i in range(rows_):
            for j in range(cols_):
                v = mat[i, j]
                recs.append({"matrix": name, "row": i, "col": j + ox, "value": "" if np.isnan(v) else f"{v:.4g}",
                             "state": "loaded / written now" if (i, j) in hot else
                             ("done" if name == "D" and not np.isnan(v) else "idle"), "cell": f"{name}[{i},{j}]"})
    df = pd.DataFrame(recs)
    base = alt.Chart(df).encode(x=alt.X("col:O", axis=None), y=alt.Y("row:O", axis=None))
    rect = base.mark_rect(stroke="white").encode(
        color=alt.Color("state:N", scale=alt.Scale(domain=["loaded / written now", "done", "idle"],
                                                   range=["#f58518", "#72b7b2", "#e8e8e8"])),
        tooltip=["cell", "value", "state"])
    text = base.mark_text(fontSize=11).encode(text="value:N")
    return (rect + text).properties(height=max(120, 28 * max(p.m, p.k)), title="A  |  B  |  D")
