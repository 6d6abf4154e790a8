"""The Accumulate page's presenter (gemmlib.views.accumulate): what each loop order loads, against the
counts the loop orders imply (M·N·K loads of A and of B for the inner product, one of each for the outer)."""

from __future__ import annotations

from gemmlib.explain import reference as ref
from gemmlib.views import accumulate as view


def test_loads_per_loop_order():
    p = ref.random_problem(4, 5, 3, 0)
    chart, table = view.loads(p, (2, 2, 2), gettext=lambda s: f"«{s}»")
    rows = {r["loop order"]: r for r in table}
    assert set(rows) == {f"«{ref.LOOP_ORDER_LABELS[o]}»" for o in ref.LOOP_ORDERS}
    inner, outer = rows[f"«{ref.LOOP_ORDER_LABELS['inner']}»"], rows[f"«{ref.LOOP_ORDER_LABELS['outer']}»"]
    m, n, k = p.m, p.n, p.k
    assert inner["A loads"] == inner["B loads"] == m * n * k  # every element fetched again at every use
    assert outer["A loads"] == m * k and outer["B loads"] == k * n  # each loaded once
    assert all(r["multiplications"] == m * n * k for r in table)
    assert set(view.LOADS_COLUMNS) == set(table[0])
    data = next(iter(chart["datasets"].values()))
    assert {(d["order"], d["operand"]) for d in data} == {(o, x) for o in ref.LOOP_ORDERS for x in "AB"}


def test_the_tracer_is_the_one_given():
    seen = []

    def tracer(p, order, tile):
        seen.append((order, tile))
        return view.trace(p, order, tile)

    view.loads(ref.article_problem(), (1, 1, 1), tracer=tracer)
    assert seen == [(o, (1, 1, 1)) for o in ref.LOOP_ORDERS]
    assert view.trace(ref.article_problem(), "inner", (9, 9, 9)).totals == ref.trace(ref.article_problem(),
                                                                                    "inner").totals
    assert set(view.ORDER_NOTES) == set(ref.LOOP_ORDERS)


def test_the_epilogue_note_says_what_the_running_sum_becomes():
    """With α ≠ 1 or β ≠ 0 the running-sum chart ends at (A·B)[i,j], not at D[i,j]: the note says how the epilogue
    gets there; with α = 1 and β = 0 it says nothing."""
    assert view.epilogue_note(ref.article_problem(), 0, 0) == ""
    p = ref.make_problem("1 2 3\n4 5 6", "7 8\n9 10\n11 12", "1 -1\n1 1", -2.0, 0.5)
    note = view.epilogue_note(p, 0, 1)
    assert note.startswith(" ") and "D[0,1] = (-2)×64 + 0.5×(-1) = -128.5." in note
    assert float(p.expected()[0, 1]) == -128.5
    zh = view.epilogue_note(p, 1, 0, gettext=lambda s: f"«{s}»")
    assert zh.startswith("«") and "D[1,0] = (-2)×139 + 0.5×1 = -277.5" in zh
