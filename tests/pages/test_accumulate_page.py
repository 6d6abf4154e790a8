"""The Accumulate page through AppTest: render, stepping, play, loop orders, extremes, bad input."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "1_Accumulate.py")


def _app() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    return at


def _text(at: AppTest) -> str:
    return " ".join(m.value for m in at.markdown)


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
    at.button(key="acc_fwd").click().run()
    at.button(key="acc_fwd").click().run()
    assert at.session_state.acc_pos == 2
    assert "D[0,0] = 1×7 + 2×9 + 3×11 = 58" in _text(at)
    at.button(key="acc_back").click().run()
    assert at.session_state.acc_pos == 1 and "1×7 + 2×9 = 25" in _text(at)
    at.button(key="acc_last").click().run()
    assert at.session_state.acc_pos == 12 and "epilogue" in _text(at)
    at.button(key="acc_fwd").click().run()  # clamps at the end
    assert at.session_state.acc_pos == 12
    at.button(key="acc_first").click().run()
    at.button(key="acc_back").click().run()  # clamps at the start
    assert at.session_state.acc_pos == 0
    at.slider(key="acc_slider").set_value(6).run()  # the slider counts steps from 1, like "Step 6 of 13"
    assert at.session_state.acc_pos == 5 and "D[0,1]" in _text(at)
    assert not at.exception


def test_play_advances_and_stops_at_the_end():
    at = _app()
    at.button(key="acc_play").click().run()
    assert at.session_state.acc_playing and at.session_state.acc_pos == 0
    assert at.button(key="acc_play").label.startswith("⏸")
    seen = [0]
    for _ in range(3):  # each (timer) run of the fragment advances: one step, more if a tick was late
        at.run()
        seen.append(at.session_state.acc_pos)
    assert all(b > a for a, b in zip(seen, seen[1:], strict=False)), seen
    at.button(key="acc_play").click().run()  # pause
    assert not at.session_state.acc_playing
    paused_at = at.session_state.acc_pos
    at.run()
    assert at.session_state.acc_pos == paused_at
    at.button(key="acc_last").click().run()
    at.button(key="acc_play").click().run()  # play at the end starts again from step 0
    assert at.session_state.acc_pos == 0 and at.session_state.acc_playing
    assert not [s for s in at.slider if s.key == "acc_slider"]  # a progress bar replaces the slider
    at.run()
    assert at.session_state.acc_pos >= 1
    at.button(key="acc_play").click().run()  # pause: the slider is back
    at.slider(key="acc_slider").set_value(12).run()
    at.button(key="acc_play").click().run()
    at.run()
    at.run()
    assert at.session_state.acc_pos == 12 and not at.session_state.acc_playing
    assert at.button(key="acc_play").label.startswith("▶")
    assert not at.exception


@pytest.mark.parametrize("order,steps,expr", [
    ("inner", 13, "D[0,0] = 1×7 = 7"),
    ("outer", 4, "k = 0: D += A[:,0] ⊗ B[0,:]"),
    ("tiled", 9, "D[0:1, 0:1] += A[0:1, 0:2] · B[0:2, 0:1]"),
])
def test_loop_orders(order, steps, expr):
    at = _app()
    at.button(key="acc_fwd").click().run()
    at.radio(key="acc_order").set_value(order).run()
    assert not at.exception
    # a new trace starts at its first step; the same trace keeps its place
    assert at.session_state.acc_pos == (1 if order == "inner" else 0)
    at.button(key="acc_first").click().run()
    assert expr in _text(at)
    assert at.slider(key="acc_slider").max == steps
    assert _trace_d(at) == [[58.0, 64.0], [139.0, 154.0]]
    table = next(df.value for df in at.dataframe if "loop order" in df.value.columns)
    assert table["A loads"].tolist() == [12, 6, 12] and table["B loads"].tolist() == [12, 6, 12]


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
    at.button(key="acc_last").click().run()
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


@pytest.mark.parametrize("speed", [1, 20])
def test_speed_extremes_while_playing(speed):
    at = _app()
    at.slider(key="acc_speed").set_value(speed).run()
    at.button(key="acc_play").click().run()
    at.run()
    assert not at.exception and 1 <= at.session_state.acc_pos <= speed
    # bound to ?acc_speed=: the browser writes the URL (tests/browser/test_browser_urls.py checks it)
    assert at.slider(key="acc_speed").proto.query_param_key == "acc_speed" and at.session_state.acc_speed == speed


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
