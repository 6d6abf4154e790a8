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
