"""The Tiling page's presenter: the traffic model's table, and the words of the wave prediction.

``pages/7_Tiling.py`` lays out the step-through, the traffic model, the measured implementations
and the wave sweep; the arithmetic is ``gemmlib.explain.tiling`` (traffic) and
``gemmlib.core.flops.wave_quantization`` (waves, through ``gemmlib.measure.tiling``'s prediction rows,
which the page passes in). Nothing here imports streamlit or measure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from gemmlib.core.i18n import N_, Text, Translate, english, render
from gemmlib.core.units import GiB

TRAFFIC_COLUMNS = {"tile": N_("tile"), "A reads": N_("A reads"), "B reads": N_("B reads"),
                   "traffic GiB": N_("traffic GiB"), "× minimum": N_("× minimum"),
                   "FLOP/byte": N_("FLOP/byte")}  # traffic_rows()' columns, as shown


def traffic_rows(rows: Sequence[Mapping]) -> list[dict]:
    """``gemmlib.explain.tiling.traffic_table``'s rows as the page's table: one per tile, its reads of A
    and B, the traffic in GiB (the project's byte unit, as the chart's axis), how many times the minimum, FLOP per byte."""
    return [{"tile": r["tile"], "A reads": r["a_reads"], "B reads": r["b_reads"],
             "traffic GiB": r["total_bytes"] / GiB, "× minimum": r["overhead"], "FLOP/byte": r["intensity"]}
            for r in rows]


def lesson_text(lesson: str, name: Callable[[str], str], gettext: Translate = english) -> str:
    """``gemmlib.measure.tiling.lesson``'s paragraph in the reader's language, each implementation called
    by ``name(impl)``: the name its row has in the table and the chart's legend ("Python 分块循环" in
    Chinese, where the lesson's own ``python_tiled`` named a row the table does not have)."""
    if not isinstance(lesson, Text):
        return gettext(lesson)
    parts = getattr(lesson.msg, "parts", None)  # Text.joined: the sentences, joined by a separator
    if parts is None:
        return _named(lesson, name, gettext)
    return gettext(lesson.msg.sep).join(_named(p, name, gettext) for p in parts if p)


def _named(part: str, name: Callable[[str], str], gettext: Translate) -> str:
    msg = getattr(part, "msg", None)
    params = getattr(msg, "params", None)
    if params is None:  # a plain string, or a joined text
        return part.render(gettext) if isinstance(part, Text) else gettext(part)
    if "impl" in params:
        params = {**params, "impl": name(params["impl"])}
    return render(msg.template, params, gettext)


def wave_caption(pred: Sequence[Mapping], tile: tuple[int, int], sms: int, gettext: Translate = english) -> str:
    """What the prediction says at both ends of the sweep: "128×256 tiles on 132 SMs: N = 8,192: 2,048
    tiles in 16 waves; N = 8,704: …" (``pred``: the prediction's rows, N ascending). The two ends are
    clauses, not items of a list, so "; " joins them (Chinese "；", not the enumeration comma "、")."""
    ends = gettext("; ").join(gettext("N = {n}: {tiles} tiles in {waves} waves").format(
        n=f"{p['n']:,}", tiles=f"{p['tiles']:,}", waves=p["waves"]) for p in (pred[0], pred[-1]))
    return gettext("{tm}×{tn} tiles on {sms} SMs: {ends}. The Triton rows use exactly this tile; cuBLAS chooses its "
                   "own, so its steps can fall elsewhere.").format(tm=tile[0], tn=tile[1], sms=sms, ends=ends)


def cliff_text(cliff: Mapping | None, sms: int, gettext: Translate = english) -> str | None:
    """The cliff in words (markdown) where a wave starts inside the sweep (``cliff``:
    ``gemmlib.measure.tiling.wave_cliff``'s record); None where none does."""
    if not cliff or cliff["waves_after"] <= cliff["waves_before"]:
        return None
    return gettext("**The cliff:** from N = {n_before} to {n_after} the tiles grow from {tiles_before} to "
                   "{tiles_after}, past {waves_before} full waves of {sms} SMs: a wave {waves_after} starts almost "
                   "empty, and the predicted throughput falls by {drop}. Between cliffs it climbs back as the "
                   "edge tiles fill.").format(
        n_before=f"{cliff['n_before']:,}", n_after=f"{cliff['n_after']:,}",
        tiles_before=f"{cliff['tiles_before']:,}", tiles_after=f"{cliff['tiles_after']:,}",
        waves_before=cliff["waves_before"], sms=sms, waves_after=cliff["waves_after"], drop=f"{cliff['drop']:.1%}")
