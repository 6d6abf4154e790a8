"""The Accumulate page through AppTest: render, stepping, loop orders, extremes, bad input.

The step-through is a browser-side component (ui.stepper): AppTest runs no JavaScript, so a test
"steps" the way the browser does, by reporting a step in the component's state, and reads what the
browser would draw at that step from the data the page sends it. Playing (the clock, Play/Pause,
every step drawn) happens in the browser only: tests/browser/test_browser_stepper.py and
test_browser_interact.py check it.
"""

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "1_Accumulate.py")


def _app() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    return at


def _data(at: AppTest) -> dict:
    """What the page hands the browser-side stepper: the trace's frames, the matrices, the labels."""
    comp = [e for e in at.main if getattr(e, "type", "") == "bidi_component"]
    assert len(comp) == 1 and comp[0].proto.component_name.endswith("gemm_stepper")
    return json.loads(comp[0].proto.json)


def _shown(at: AppTest) -> str:
    """What the stepper draws at the page's step: the counter and the arithmetic line."""
    d, pos = _data(at), at.session_state.acc_pos
    return d["labels"]["step"].format(n=pos + 1, total=len(d["frames"])) + " · " + d["frames"][pos]["text"]


def _text(at: AppTest) -> str:
    return " ".join(m.value for m in at.markdown) + " " + _shown(at)


def _go(at: AppTest, step: int) -> AppTest:
    """The browser reports a step (as it does on pause, a button, a key or the scrubber)."""
    at.session_state["acc_stepper"] = {"step": {"id": _data(at)["traceId"], "step": step}}
    return at.run()


def _trace_d(at: AppTest) -> list[list[float]]:
    """The D the trace built (the table after the loads table)."""
    return at.dataframe[1].value.values.tolist()


def _errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def test_default_render_shows_the_article_example():
    at = _app()
    assert "Accumulate" in at.title[0].value
    assert "D[0,0] = 1×7 = 7" in _text(at)
    assert at.session_state.acc_pos == 0
    assert _trace_d(at) == [[58.0, 64.0], [139.0, 154.0]]
    assert at.dataframe[2].value.values.tolist() == [[58.0, 64.0], [139.0, 154.0]]  # numpy
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["max |trace − numpy|"] == "0"
    assert metrics["2·M·N·K"] == "24" and metrics["additions M·N·(K−1)"] == "8"
    assert not _errors(at)


def test_step_forward_back_first_last_and_slider():
    at = _app()
    _go(at, 1)
    _go(at, 2)
    assert at.session_state.acc_pos == 2
    assert "D[0,0] = 1×7 + 2×9 + 3×11 = 58" in _text(at)
    assert at.query_params["acc_pos"] == "2"  # the step is in the URL (unbound key)
    _go(at, 1)
    assert at.session_state.acc_pos == 1 and "1×7 + 2×9 = 25" in _text(at)
    _go(at, 12)  # last
    assert at.session_state.acc_pos == 12 and "epilogue" in _text(at)
    _go(at, 13)  # past the end: clamped
    assert at.session_state.acc_pos == 12
    _go(at, 0)
    _go(at, -1)  # before the start: clamped
    assert at.session_state.acc_pos == 0
    assert "acc_pos" not in at.query_params  # step 0 is the default, left out of the link
    _go(at, 5)  # the scrubber released at "Step 6 of 13"
    assert at.session_state.acc_pos == 5 and "D[0,1]" in _text(at)
    assert not at.exception


def test_the_browser_gets_the_whole_trace_and_a_stop_at_the_end():
    """Play runs in the browser; the page sends every frame once and hears the step where it stops."""
    at = _app()
    d = _data(at)
    assert len(d["frames"]) == 13 and d["speed"] == 5 and d["start"] == 0 and d["presentation"] is False
    assert d["A"] == [["1", "2", "3"], ["4", "5", "6"]] and d["C"] is None  # β = 0: no C drawn
    assert [f["text"] for f in d["frames"][:3]] == ["D[0,0] = 1×7 = 7  …", "D[0,0] = 1×7 + 2×9 = 25  …",
                                                    "D[0,0] = 1×7 + 2×9 + 3×11 = 58"]
    assert d["frames"][2]["loads"] == ["3", "3", "1"]  # the counts, drawn in the same frame
    _go(at, 12)  # the player reached the end
    assert at.session_state.acc_pos == 12 and "epilogue" in _text(at)
    assert "nothing is left to do" in d["frames"][-1]["text"]  # α = 1, β = 0: the epilogue explained
    stale = {"step": {"id": "an-old-trace", "step": 3}}  # a report about another trace is ignored
    at.session_state["acc_stepper"] = stale
    at.run()
    assert at.session_state.acc_pos == 12 and not at.exception


@pytest.mark.parametrize("order,steps,expr", [
    ("inner", 13, "D[0,0] = 1×7 = 7"),
    ("outer", 4, "k = 0: D += A[:,0] ⊗ B[0,:]"),
    ("tiled", 9, "D[0:1, 0:1] += A[0:1, 0:2] · B[0:2, 0:1]"),
])
def test_loop_orders(order, steps, expr):
    at = _app()
    _go(at, 1)
    at.radio(key="acc_order").set_value(order).run()
    assert not at.exception
    # a new trace starts at its first step; the same trace keeps its place
    assert at.session_state.acc_pos == (1 if order == "inner" else 0)
    if order == "tiled":  # 1×1×2 tiles (the default tile now shows reuse: test_tiled_default_tile_shows_reuse)
        for d, v in zip("mnk", (1, 1, 2), strict=True):
            at.number_input(key=f"acc_tile_{d}").set_value(v).run()
    _go(at, 0)
    assert expr in _text(at)
    assert len(_data(at)["frames"]) == steps
    assert _trace_d(at) == [[58.0, 64.0], [139.0, 154.0]]
    table = next(df.value for df in at.dataframe if "loop order" in df.value.columns)
    # the tiled row: 1×1×2 tiles re-read like the inner product; the default 2×2×2 tile reads once
    tiled = 12 if order == "tiled" else 6
    assert table["A loads"].tolist() == [12, 6, tiled] and table["B loads"].tolist() == [12, 6, tiled]


def test_tiled_tile_sizes_at_extremes():
    at = _app()
    at.radio(key="acc_src").set_value("random").run()
    at.number_input(key="acc_m").set_value(12).run()
    at.number_input(key="acc_n").set_value(12).run()
    at.number_input(key="acc_k").set_value(12).run()
    at.radio(key="acc_order").set_value("tiled").run()
    for v in (1, 12):
        for d in "mnk":
            at.number_input(key=f"acc_tile_{d}").set_value(v).run()
        assert not at.exception
        assert {m.label: m.value for m in at.metric}["max |trace − numpy|"] == "0"
    table = next(df.value for df in at.dataframe if "loop order" in df.value.columns)
    assert table["A loads"].tolist()[-1] == 12 * 12  # one tile covers everything: each A element once


@pytest.mark.parametrize("m,n,k,seed,alpha,beta,ints", [
    (1, 1, 1, 0, -100.0, -100.0, True),
    (12, 12, 12, 10**6, 100.0, 100.0, False),
    (8, 8, 8, 3, 0.5, 1.0, True),
])
def test_random_inputs_at_extremes(m, n, k, seed, alpha, beta, ints):
    at = _app()
    at.radio(key="acc_src").set_value("random").run()
    at.number_input(key="acc_m").set_value(m)
    at.number_input(key="acc_n").set_value(n)
    at.number_input(key="acc_k").set_value(k)
    at.number_input(key="acc_seed").set_value(seed)
    at.number_input(key="acc_alpha").set_value(alpha)
    at.number_input(key="acc_beta").set_value(beta)
    at.toggle(key="acc_ints").set_value(ints).run()
    assert not at.exception and not _errors(at)
    assert at.session_state.acc_good.m == m and at.session_state.acc_good.k == k
    assert float({x.label: x.value for x in at.metric}["max |trace − numpy|"]) < 1e-9
    _go(at, len(_data(at)["frames"]) - 1)
    for order in ("outer", "tiled"):
        at.radio(key="acc_order").set_value(order).run()
        assert not at.exception
    at.number_input(key="acc_ci").set_value(m - 1)
    at.number_input(key="acc_cj").set_value(n - 1).run()
    assert not at.exception


def test_custom_matrices_and_bad_input_keeps_last_good_state():
    at = _app()
    at.radio(key="acc_src").set_value("custom").run()
    at.text_area(key="acc_text_a").input("1 2\n3 4").run()
    at.text_area(key="acc_text_b").input("5 6\n7 8").run()
    assert not _errors(at)
    good = at.session_state.acc_good
    assert good.expected().tolist() == [[19.0, 22.0], [43.0, 50.0]]
    for bad_a, fragment in (("1 x\n3 4", "not a number"), ("1 2\n3", "row 2 has 1"), ("1 2 3\n4 5 6", "needs 3 row"),
                            ("", "K = 0"), ("\n".join(["1 " * 13] * 2), "at most 12")):
        at.text_area(key="acc_text_a").input(bad_a).run()
        assert not at.exception
        assert any(fragment in e for e in _errors(at)), (bad_a, _errors(at))
        assert at.session_state.acc_good == good  # the last good state is kept and shown
        assert any("last matrices that worked" in i.value for i in at.info)
        assert _trace_d(at) == [[19.0, 22.0], [43.0, 50.0]]
    at.text_area(key="acc_text_a").input("1 2\n3 4").run()
    at.text_area(key="acc_text_c").input("1 1\n1").run()
    assert any("row 2 has 1" in e for e in _errors(at))
    at.text_area(key="acc_text_c").input("1 1\n1 1").run()
    at.number_input(key="acc_beta").set_value(2.0).run()
    assert not _errors(at)
    assert _trace_d(at) == [[21.0, 24.0], [45.0, 52.0]]


@pytest.mark.parametrize("speed", [1, 20, 30])
def test_speed_extremes_reach_the_browser(speed):
    at = _app()
    at.slider(key="acc_speed").set_value(speed).run()
    assert not at.exception and _data(at)["speed"] == speed
    # bound to ?acc_speed=: the browser writes the URL (tests/browser/test_browser_urls.py checks it)
    assert at.slider(key="acc_speed").proto.query_param_key == "acc_speed" and at.session_state.acc_speed == speed


def test_tiled_default_tile_shows_reuse():
    """The article's example, tiled with the default tile: each A and B element is loaded once
    (numel), against M·N·K = 12 times in the inner product."""
    at = _app()
    at.radio(key="acc_order").set_value("tiled").run()
    table = next(df.value for df in at.dataframe if "loop order" in df.value.columns)
    assert table["A loads"].tolist() == [12, 6, 6] and table["B loads"].tolist() == [12, 6, 6]
    assert "2×2×2" in " ".join(c.value for c in at.caption)


def test_beta_draws_c_and_a_link_opens_at_its_step():
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params.update({"acc_beta": "1", "acc_pos": "5"})
    at.run()
    assert not at.exception and at.session_state.acc_pos == 5
    d = _data(at)
    assert d["start"] == 5 and d["C"] == [["0", "0"], ["0", "0"]]
    assert d["frames"][-1]["c"] == [[0, 0], [0, 1], [1, 0], [1, 1]]  # the epilogue reads all of C
    for junk in ("x", "-4", "1e309", "999"):
        bad = AppTest.from_file(PAGE, default_timeout=60)
        bad.query_params["acc_pos"] = junk
        bad.run()
        assert not bad.exception and bad.session_state.acc_pos == (12 if junk == "999" else 0)


def test_presentation_mode_folds_the_words_and_keeps_the_numbers():
    at = _app()
    at.toggle(key="acc_present").set_value(True).run()
    assert not at.exception and _data(at)["presentation"] is True
    labels = [e.proto.label for e in at.expander]
    assert "About this page" in labels and "The matrices, the loop order and the speed" in labels
    assert "What the colours and counts mean" in labels
    assert _trace_d(at) == [[58.0, 64.0], [139.0, 154.0]]
    assert at.slider(key="acc_speed").value == 5  # the speed slider is folded into the inputs, still read


def test_a_cell_edited_in_the_stepper_becomes_the_pages_matrices():
    """ui.stepper's edit trigger hands the page A, B and C as its own text, one cell changed; the page
    reads them back exactly (the browser test drives the same path from a click)."""
    from gemmlib.explain import reference as ref
    from ui.stepper import edited_matrices

    tr = ref.trace(ref.article_problem())
    mats = edited_matrices(tr, "A", 0, 0, "5")
    assert mats == {"A": "5 2 3\n4 5 6", "B": "7 8\n9 10\n11 12", "C": ""}  # β = 0: C is not read
    assert edited_matrices(tr, "B", 2, 1, "0.1")["B"] == "7 8\n9 10\n11 0.1"
    at = _app()
    at.radio(key="acc_src").set_value("custom").run()
    at.text_area(key="acc_text_a").set_value(mats["A"]).run()
    assert not at.exception and _trace_d(at) == [[86.0, 96.0], [139.0, 154.0]]


def test_precision_section_inputs():
    at = _app()
    assert any("fp16" in m.value and "K =" in m.value for m in at.markdown)
    at.radio(key="acc_dist").set_value("normal").run()
    at.selectbox(key="acc_operands").set_value("bf16").run()
    for kmax in (256, 65536):
        at.select_slider(key="acc_kmax").set_value(kmax).run()
        assert not at.exception
        assert any(f"At K = {kmax}" in m.value for m in at.markdown)


def test_deep_link_query_params():
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params.update({"acc_src": "random", "acc_order": "outer", "acc_m": "3", "acc_k": "5", "acc_n": "2",
                            "acc_seed": "4"})
    at.run()
    assert not at.exception
    assert at.session_state.acc_order == "outer" and at.session_state.acc_good.k == 5
    bad = AppTest.from_file(PAGE, default_timeout=60)
    bad.query_params.update({"acc_m": "999", "acc_order": "zigzag"})
    bad.run()
    assert not bad.exception and bad.session_state.acc_order == "inner"


def test_tile_sizes_and_the_integer_toggle_are_in_the_link():
    """A copied link restores the tiled order's tile and the random matrices' kind (?acc_tile_m=…, ?acc_ints=).

    The browser writes a bound widget's value into the address bar (its ``query_param_key``; AppTest has
    no browser, tests/browser/test_browser_readme_links.py has one); a link with them opens that view."""
    at = _app()
    at.radio(key="acc_src").set_value("random").run()
    at.radio(key="acc_order").set_value("tiled").run()
    for d, v in zip("mnk", (1, 3, 2), strict=True):
        at.number_input(key=f"acc_tile_{d}").set_value(v).run()
    at.toggle(key="acc_ints").set_value(False).run()
    assert [at.number_input(key=f"acc_tile_{d}").proto.query_param_key for d in "mnk"] == \
        ["acc_tile_m", "acc_tile_n", "acc_tile_k"]
    assert at.toggle(key="acc_ints").proto.query_param_key == "acc_ints"
    opened = AppTest.from_file(PAGE, default_timeout=60)
    opened.query_params.update({"acc_src": "random", "acc_order": "tiled", "acc_tile_m": "1", "acc_tile_n": "3",
                                "acc_tile_k": "2", "acc_ints": "false"})
    opened.run()
    assert not opened.exception
    assert [opened.number_input(key=f"acc_tile_{d}").value for d in "mnk"] == [1, 3, 2]
    assert opened.toggle(key="acc_ints").value is False
    assert _data(opened)["frames"] == _data(at)["frames"]  # the same trace, step for step
    assert any(not float(x).is_integer() for x in opened.session_state.acc_good.arrays()[0].ravel())


def test_typed_matrices_survive_a_look_at_another_source_and_travel_in_the_link():
    """A student types their own A and B, looks at the article's example and comes back: their matrices are
    still there (they came back as the defaults). And a copied link carries them: ``?acc_text_a=`` …
    (it opened the defaults, not what the teacher had typed)."""
    at = _app()
    at.radio(key="acc_src").set_value("custom").run()
    at.text_area(key="acc_text_a").input("1 2\n3 4").run()
    at.text_area(key="acc_text_b").input("5 6\n7 8").run()
    for other in ("article", "random"):
        at.radio(key="acc_src").set_value(other).run()
        at.radio(key="acc_src").set_value("custom").run()
        assert not at.exception and at.text_area(key="acc_text_a").value == "1 2\n3 4"
        assert _trace_d(at) == [[19.0, 22.0], [43.0, 50.0]]
    assert [at.text_area(key=f"acc_text_{m}").proto.query_param_key for m in "abc"] == \
        ["acc_text_a", "acc_text_b", "acc_text_c"]
    opened = AppTest.from_file(PAGE, default_timeout=60)
    opened.query_params.update({"acc_src": "custom", "acc_text_a": "1 2\n3 4", "acc_text_b": "5 6\n7 8",
                                "acc_text_c": "1 1\n1 1", "acc_beta": "2"})
    opened.run()
    assert not opened.exception and _trace_d(opened) == [[21.0, 24.0], [45.0, 52.0]]
    assert opened.text_area(key="acc_text_c").value == "1 1\n1 1"


def test_a_tile_larger_than_the_matrices_is_shown_as_the_tile_used():
    """A tile of 8 rows set on 8×8 random matrices, then the article's 2×3 by 3×2: the caption said "tiles 8×4×2"
    for a 2×2 D. The tile used is at most the matrices (2×2×3: K's 4 clipped too), and the caption says so."""
    at = _app()
    at.radio(key="acc_src").set_value("random").run()
    for d in ("m", "n", "k"):
        at.number_input(key=f"acc_{d}").set_value(8).run()
    at.radio(key="acc_order").set_value("tiled").run()
    at.number_input(key="acc_tile_m").set_value(8).run()
    at.radio(key="acc_src").set_value("article").run()
    assert not at.exception
    caption = next(c.value for c in at.caption if c.value.startswith("Same 12 multiply-adds"))
    assert "tiles 2×2×3 (M×N×K)" in caption, caption
    assert _data(at)["frames"][0]["text"].startswith("D[0:2, 0:2] += A[0:2, 0:3] · B[0:3, 0:2]")


def test_the_running_sum_caption_names_the_epilogue_when_alpha_or_beta_change_d():
    """α = 2: D[0,0] is 116 in both D tables, while the running-sum chart ends at 58 (the sum of the products);
    the caption under it said nothing of the gap. It now gives the epilogue's arithmetic."""
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params.update({"acc_alpha": "2"})
    at.run()
    assert not at.exception and _trace_d(at)[0][0] == 116.0
    caption = next(c.value for c in at.caption if c.value.startswith("The large point"))
    assert "D[0,0] = 2×58 + 0×0 = 116." in caption
    plain = _app()
    assert "epilogue" not in next(c.value for c in plain.caption if c.value.startswith("The large point"))
