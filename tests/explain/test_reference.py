"""The reference GEMM: parsing, random problems, and traces of three loop orders vs numpy."""

import itertools

import numpy as np
import pytest

from gemmlib.core.errors import InputError
from gemmlib.core.flops import naive_op_counts
from gemmlib.explain import reference as ref


def test_article_example_gives_the_article_result():
    p = ref.article_problem()
    assert p.expected().tolist() == [[58.0, 64.0], [139.0, 154.0]]
    for order in ref.LOOP_ORDERS:
        assert ref.trace(p, order).result().tolist() == [list(r) for r in ref.ARTICLE_D]


def test_inner_trace_expression_and_running_sum_match_the_article():
    tr = ref.trace(ref.article_problem(), "inner")
    third = tr.steps[2]
    assert third.expression == "D[0,0] = 1×7 + 2×9 + 3×11 = 58"
    assert third.a_cells == ((0, 2),) and third.b_cells == ((2, 0),) and third.d_cells == ((0, 0),)
    assert [r["running_sum"] for r in ref.running_sum(ref.article_problem(), 0, 0)] == [7, 25, 58]
    assert [s.value for s in tr.steps[:3]] == [7, 25, 58]
    assert tr.steps[-1].kind == "epilogue"


@pytest.mark.parametrize("seed", range(6))
def test_every_loop_order_equals_numpy(seed):
    rng = np.random.default_rng(100 + seed)
    m, n, k = (int(v) for v in rng.integers(1, 9, size=3))
    alpha = float(rng.choice([1.0, -0.5, 2.0, 0.0]))
    beta = float(rng.choice([0.0, 1.0, 0.25]))
    p = ref.random_problem(m, n, k, seed=seed, alpha=alpha, beta=beta, integers=bool(seed % 2))
    want = alpha * (np.array(p.a) @ np.array(p.b)) + beta * np.array(p.c)
    for order in ref.LOOP_ORDERS:
        tiles = [None] if order != "tiled" else [None, (1, 1, 1), (2, 3, 2), (m, n, k), (5, 5, 5)]
        for tile in tiles:
            tr = ref.trace(p, order, tile)
            np.testing.assert_allclose(tr.result(), want, rtol=1e-12, atol=1e-9)
            assert ref.check(tr)["max_abs_error"] < 1e-9


def test_custom_c_alpha_beta_are_used():
    p = ref.make_problem("1 2; 3 4", "5 6\n7 8", "1 1\n1 1", alpha=2, beta=-3)
    want = 2 * np.array([[19, 22], [43, 50]]) - 3
    for order in ref.LOOP_ORDERS:
        assert ref.trace(p, order).result().tolist() == want.tolist()
    assert "= 2×19 + (-3)×1 = 35" in ref.trace(p).steps[-1].expression


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (2, 3, 4), (5, 2, 7), (8, 8, 8)])
def test_loads_and_op_counts(m, n, k):
    p = ref.random_problem(m, n, k, seed=1)
    tile = (2, 3, 2)
    closed = ref.load_counts(m, n, k, tile)
    counts = naive_op_counts(m, n, k)
    for order in ref.LOOP_ORDERS:
        tot = ref.trace(p, order, tile).totals
        assert (tot["loads_a"], tot["loads_b"], tot["stores_d"]) == (
            closed[order]["loads_a"], closed[order]["loads_b"], closed[order]["stores_d"])
        assert tot["mults"] == counts["multiplications"] == m * n * k
        assert tot["adds"] == counts["additions"] == m * n * (k - 1)
    inner = ref.trace(p, "inner").totals
    assert inner["loads_a"] == inner["loads_b"] == m * n * k
    assert len(ref.trace(p, "inner")) == m * n * k + 1
    assert len(ref.trace(p, "outer")) == k + 1


def test_tiling_reuses_loaded_elements():
    p = ref.random_problem(8, 8, 8, seed=3)
    inner = ref.trace(p, "inner").totals["loads"]
    tiled = ref.trace(p, "tiled", (4, 4, 4)).totals["loads"]
    assert inner == 2 * 512
    assert tiled == 8 * 8 * 2 + 8 * 8 * 2  # A and B each read twice (2 block columns / rows)
    assert tiled * 4 == inner


def test_cumulative_loads_never_decrease_and_d_after_builds_up():
    p = ref.random_problem(3, 4, 5, seed=2, beta=1.0)
    for order in ref.LOOP_ORDERS:
        tr = ref.trace(p, order)
        la = [s.loads_a for s in tr.steps]
        assert la == sorted(la)
        # D builds up: a cell once written stays written, the first step writes one, the last leaves
        # none untouched, and what is built is α·A·B + β·C (numpy in float64).
        untouched = [int(np.isnan(tr.d_after(i)).sum()) for i in range(len(tr))]
        assert untouched == sorted(untouched, reverse=True)
        assert untouched[0] < 3 * 4 and untouched[-1] == 0
        want = p.alpha * np.array(p.a, dtype=np.float64) @ np.array(p.b, dtype=np.float64) \
            + p.beta * np.array(p.c, dtype=np.float64)
        np.testing.assert_allclose(tr.d_after(len(tr) - 1), want, rtol=1e-12)
    tr = ref.trace(p, "inner")
    assert np.isnan(tr.d_after(0)).sum() == 3 * 4 - 1
    with pytest.raises(InputError):
        tr.d_after(len(tr))


def test_random_problem_is_reproducible_and_small_integers():
    a = ref.random_problem(4, 5, 6, seed=7)
    b = ref.random_problem(4, 5, 6, seed=7)
    assert a == b and hash(a) == hash(b)
    vals = np.array(a.a)
    assert vals.shape == (4, 6) and np.all(vals == np.round(vals)) and vals.min() >= -3 and vals.max() <= 9
    assert ref.random_problem(4, 5, 6, seed=8) != a
    assert np.all(np.array(a.c) == 0)  # beta = 0: no C drawn
    assert np.any(np.array(ref.random_problem(4, 5, 6, seed=7, beta=1).c) != 0)


@pytest.mark.parametrize("text,expected", [
    ("1 2 3\n4 5 6", [[1, 2, 3], [4, 5, 6]]),
    ("1,2,3; 4,5,6", [[1, 2, 3], [4, 5, 6]]),
    ("[[1, 2, 3], [4, 5, 6]]", [[1, 2, 3], [4, 5, 6]]),
    ("  -1.5e0  2 \n\n 3 4 ", [[-1.5, 2], [3, 4]]),
])
def test_parse_text(text, expected):
    assert ref.parse_matrix(text, "A").tolist() == expected


@pytest.mark.parametrize("a,b,c,fragment", [
    ("1 x\n3 4", "1\n2", None, "not a number"),
    ("1,,2", "1\n2\n3", None, "empty"),
    ("1 2\n3", "1\n2", None, "row 2 has 1 value"),
    ("", "1", None, "K = 0"),
    ("1 2 3", "1\n2", None, "needs 3 row"),
    ("1 2", "1\n2", "1 2", "C must be M×N = 1×1"),
    ("1 nan", "1\n2", None, "not a number"),
    ("1 inf", "1\n2", None, "keep values within"),
    ("\n".join(["1"] * 40), "1", None, "at most"),
    ([[1, None]], [[1], [2]], None, "empty"),
])
def test_bad_input_raises_input_error(a, b, c, fragment):
    with pytest.raises(InputError, match=fragment):
        ref.make_problem(a, b, c)


@pytest.mark.parametrize("kw,fragment", [
    ({"m": 0, "n": 2, "k": 2}, "at least 1"),
    ({"m": 2, "n": 2, "k": 0}, "K = 0"),
    ({"m": 2, "n": 2, "k": 10_000}, "too large"),
    ({"m": "a", "n": 2, "k": 2}, "whole number"),
])
def test_random_problem_rejects_bad_shapes(kw, fragment):
    with pytest.raises(InputError, match=fragment):
        ref.random_problem(**kw)


def test_scalars_and_lists():
    with pytest.raises(InputError, match="α"):
        ref.make_problem([[1]], [[1]], alpha="two")
    with pytest.raises(InputError, match="β"):
        ref.make_problem([[1]], [[1]], beta=float("inf"))
    p = ref.make_problem(np.eye(2), [[1, 2], [3, 4]])
    assert p.expected().tolist() == [[1, 2], [3, 4]]
    with pytest.raises(InputError, match="loop order"):
        ref.trace(p, "diagonal")
    with pytest.raises(InputError, match="tile"):
        ref.trace(p, "tiled", (0, 1, 1))


def test_fmt_num():
    assert [ref.fmt_num(v) for v in (7.0, -2.0, 0.125, 1 / 3)] == ["7", "-2", "0.125", "0.3333"]


def test_trace_steps_are_frozen_and_hashable():
    tr = ref.trace(ref.article_problem(), "tiled")
    hash(tr)
    with pytest.raises(AttributeError):
        tr.steps[0].value = 1.0  # type: ignore[misc]
    assert len(set(itertools.chain.from_iterable(s.d_cells for s in tr.steps[:-1]))) == 4


def test_chart_builders_produce_valid_vega_lite():
    from gemmlib.charts import explain as ch
    from gemmlib.core.flops import metric_grid, wave_staircase
    from gemmlib.core.hardware import get_hardware
    from gemmlib.explain.accumulation import accumulation_study

    p = ref.random_problem(3, 4, 5, seed=0)
    tr = ref.trace(p, "tiled", (2, 2, 2))
    a, b, _ = p.arrays()
    step = tr.steps[1]
    ch.step_grids(a, b, tr.d_after(1), step).to_dict()  # validates against the schema
    spec = ch.step_grids_spec(a, b, tr.d_after(1), step)
    d_cells = [r for r in spec["hconcat"][2]["data"]["values"] if r["state"] == "write"]
    assert {(r["row"], r["col"]) for r in d_cells} == set(step.d_cells)
    a_read = [r for r in spec["hconcat"][0]["data"]["values"] if r["state"] == "read"]
    assert len(a_read) == len(step.a_cells)
    assert sum(r["state"] == "pending" for r in spec["hconcat"][2]["data"]["values"]) == int(
        np.isnan(tr.d_after(1)).sum())
    ch.running_sum_chart(ref.running_sum(p, 1, 2), current_k=2, cell="D[1,2]").to_dict()
    ch.loads_chart([{"order": "inner", "operand": "A", "loads": 3}]).to_dict()
    ch.accumulation_chart(accumulation_study(ks=(16, 64), rows=2).records()).to_dict()
    grid = metric_grid([1, 2], [3, 4], 5, "bf16", get_hardware("h100"))
    ch.heatmap(grid, "time µs", "t", ",.3~g",
               [("M", "ordinal", None), ("time µs", "quantitative", ",.2f"), ("bound", "nominal", None)]).to_dict()
    ch.staircase_chart(wave_staircase(128, 100, 300, 128, 128, 4)).to_dict()
    assert ch.spec(ch.loads_chart([{"order": "x", "operand": "B", "loads": 1}]))["mark"]["type"] == "bar"


@pytest.mark.parametrize("order", ref.LOOP_ORDERS)
def test_frames_replay_to_the_traces_d(order):
    """Replaying each frame's written values (as the browser does) gives D after every step, and the
    loads and the arithmetic line are the step's own."""
    p = ref.random_problem(3, 4, 5, seed=2, beta=0.5)
    tr = ref.trace(p, order)
    frames = tr.frames()
    assert len(frames) == len(tr)
    d = {}
    for idx, (f, s) in enumerate(zip(frames, tr.steps, strict=True)):
        for (i, j), v in zip(f["d"], f["dv"], strict=True):
            d[i, j] = float(v)
        want = tr.d_after(idx)
        for (i, j), v in d.items():
            assert v == pytest.approx(want[i, j], rel=1e-3, abs=1e-3)  # text with 4 significant digits
        assert f["loads"] == [s.loads_a, s.loads_b, s.stores_d] and f["text"] == s.expression
    assert frames[-1]["kind"] == "epilogue" and len(frames[-1]["c"]) == 3 * 4  # β ≠ 0: C is read
    assert all(not f["c"] for f in ref.trace(ref.article_problem(), order).frames())  # β = 0: C is never read


def test_default_tile_shows_reuse_on_the_articles_example():
    """The article's 2×3 by 3×2: the default tile loads each A and B element once (numel), not once
    per use as the inner product does (M·N·K = 12 loads each)."""
    p = ref.article_problem()
    tiled = ref.trace(p, "tiled").totals
    a, b, _ = p.arrays()
    assert tiled["loads_a"] == a.size == 6 and tiled["loads_b"] == b.size == 6
    assert ref.trace(p, "inner").totals["loads_a"] == 12


def test_products_done_counts_the_k_terms_in_a_cell():
    p = ref.random_problem(2, 2, 5, seed=0)
    inner, outer, tiled = (ref.trace(p, o, (2, 2, 2) if o == "tiled" else None) for o in ref.LOOP_ORDERS)
    assert [inner.products_done(i, (0, 0)) for i in range(6)] == [1, 2, 3, 4, 5, 5]
    assert [outer.products_done(i, (1, 1)) for i in range(5)] == [1, 2, 3, 4, 5]
    assert [tiled.products_done(i, (1, 0)) for i in range(3)] == [2, 4, 5]  # k tiles 0:2, 2:4, 4:5


@pytest.mark.parametrize("a, b, said", [
    ("1 2 3\n4", "1\n2\n3", "A row 2 has 1 value but row 1 has 3"),
    ("1 2 3\n4 5", "1\n2\n3", "A row 2 has 2 values but row 1 has 3"),
    ("1\n2", "1 2\n3 4", "A is 2×1, so B needs 1 row (one per column of A); it has 2"),
    ("1 2\n3 4", "1 2", "A is 2×2, so B needs 2 rows (one per column of A); it has 1"),
])
def test_a_typed_matrix_error_counts_in_words(a, b, said):
    """The Accumulate page's errors on typed matrices read "1 value", "2 values", "1 row" (they said "value(s)")."""
    with pytest.raises(InputError) as e:
        ref.make_problem(a, b)
    assert str(e.value) == said or str(e.value).startswith(said), str(e.value)
