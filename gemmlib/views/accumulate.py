"""The Accumulate page's presenter: what each loop order loads, and the page's tables' and captions' words.

``pages/1_Accumulate.py`` lays out the step-through, the loads per loop order, the check against
numpy and the accumulator study; the arithmetic is ``gemmlib.explain.reference`` and
``gemmlib.explain.accumulation``. Nothing here imports streamlit.
"""

from __future__ import annotations

from collections.abc import Callable

from gemmlib.charts.explain import loads_chart, spec
from gemmlib.core.i18n import N_, Translate, english
from gemmlib.explain import reference as ref

SOURCES = {"article": N_("the article's example"), "random": N_("random (from a seed)"),
           "custom": N_("type your own")}  # where the matrices come from, as shown
ORDER_NOTES = {  # what each loop order does, under its switch
    "inner": N_("For each D[i,j]: walk k, one multiply-add per step. Every A and B element is fetched "
                "again at every use — M·N·K loads of each."),
    "outer": N_("For each k: add the outer product of column k of A and row k of B to all of D. Each A "
                "and B element is loaded once, but all of D is updated K times."),
    "tiled": N_("For each block of D: walk k in tiles; load an A tile and a B tile once and do every "
                "multiply-add they allow. A is re-read once per column of blocks, B once per row of blocks."),
}
LOADS_COLUMNS = {"loop order": N_("loop order"), "steps": N_("steps"), "A loads": N_("A loads"),
                 "B loads": N_("B loads"), "A + B loads": N_("A + B loads"), "D stores": N_("D stores"),
                 "multiplications": N_("multiplications"), "additions": N_("additions")}  # loads()' columns
STUDY_COLUMNS = {"accumulator": N_("accumulator"), "median relative error": N_("median relative error"),
                 "max relative error": N_("max relative error"), "median absolute error": N_("median absolute error"),
                 "|exact sum|": N_("|exact sum|"), "overflow": N_("overflow"), "max |error|": N_("max |error|"),
                 "operand rounding moved D by": N_("operand rounding moved D by")}  # the study's records' keys

Tracer = Callable[[ref.Problem, str, tuple[int, int, int]], ref.Trace]


def trace(p: ref.Problem, order: str, tile: tuple[int, int, int]) -> ref.Trace:
    """The trace of ``p`` in loop ``order`` (``tile``: the tiled order's tile; the others take none)."""
    return ref.trace(p, order, tile if order == "tiled" else None)


def loads(p: ref.Problem, tile: tuple[int, int, int], *, gettext: Translate = english,
          tracer: Tracer = trace) -> tuple[dict, list[dict]]:
    """What each loop order loads: the chart (A and B loads per order) and the table (each order's steps,
    loads, stores and arithmetic; its loop order named in the reader's language). ``tracer`` makes the
    traces (the page passes its cached one)."""
    rows, table = [], []
    for o in ref.LOOP_ORDERS:
        t = tracer(p, o, tile).totals
        rows += [{"order": o, "operand": "A", "loads": t["loads_a"]},
                 {"order": o, "operand": "B", "loads": t["loads_b"]}]
        table.append({"loop order": gettext(ref.LOOP_ORDER_LABELS[o]), "steps": t["steps"], "A loads": t["loads_a"],
                      "B loads": t["loads_b"], "A + B loads": t["loads"], "D stores": t["stores_d"],
                      "multiplications": t["mults"], "additions": t["adds"]})
    return spec(loads_chart(rows, gettext=gettext)), table


EPILOGUE_NOTE = N_(" The line is the sum of the products alone; the epilogue (the last step) then makes "
                   "D[{i},{j}] = {alpha}×{total} + {beta}×{c} = {d}.")  # a leading space: after the caption's


def epilogue_note(p: ref.Problem, i: int, j: int, *, gettext: Translate = english) -> str:
    """Under the running-sum chart when α ≠ 1 or β ≠ 0: the chart ends at (A·B)[i,j], D[i,j] is α·that + β·C[i,j]
    ("" when the epilogue changes nothing)."""
    if p.alpha == 1 and p.beta == 0:
        return ""
    a, b, c = p.arrays()
    total = float(a[i] @ b[:, j])
    return gettext(EPILOGUE_NOTE).format(i=i, j=j, alpha=ref.fmt_factor(p.alpha), total=ref.fmt_num(total),
                                         beta=ref.fmt_factor(p.beta), c=ref.fmt_factor(c[i, j]),
                                         d=ref.fmt_num(p.expected()[i, j]))
