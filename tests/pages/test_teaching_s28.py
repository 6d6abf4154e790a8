"""A teacher stepping through the Accumulate page in class (AppTest: the step the page keeps across reruns)."""

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "1_Accumulate.py")


def _data(at: AppTest) -> dict:
    comp = [e for e in at.main if getattr(e, "type", "") == "bidi_component"]
    assert len(comp) == 1
    return json.loads(comp[0].proto.json)


def _go(at: AppTest, step: int) -> AppTest:
    """The browser reports a step (as it does on pause, a button, a key or the scrubber)."""
    at.session_state["acc_stepper"] = {"step": {"id": _data(at)["traceId"], "step": step}}
    return at.run()


def test_new_values_in_the_same_steps_keep_the_step():
    """At step 6 of the article's example the teacher sets β = 1 to show the epilogue reading C, or α = 2: the
    step-through jumped back to step 1 (a new trace started at 0) and the link lost ?acc_pos. The same loop order
    on matrices of the same sizes touches the same cells at every step: it stays at step 6, drawn there."""
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    _go(at, 5)
    assert at.session_state.acc_pos == 5
    at.number_input(key="acc_beta").set_value(1.0).run()
    assert not at.exception
    assert _data(at)["C"] is not None  # a new trace (C is drawn now) ...
    assert at.session_state.acc_pos == 5 and _data(at)["start"] == 5  # ... opened at the same step
    assert at.query_params["acc_pos"] == "5"
    at.number_input(key="acc_alpha").set_value(2.0).run()
    assert at.session_state.acc_pos == 5 and _data(at)["start"] == 5


def test_a_new_seed_keeps_the_step_and_a_new_size_or_order_starts_over():
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params.update({"acc_src": "random"})
    at.run()
    _go(at, 7)
    at.number_input(key="acc_seed").set_value(3).run()  # other numbers, the same steps
    assert at.session_state.acc_pos == 7 and _data(at)["start"] == 7
    at.number_input(key="acc_m").set_value(3).run()  # a new size: other steps
    assert at.session_state.acc_pos == 0
    _go(at, 4)
    at.radio(key="acc_order").set_value("outer").run()  # a new loop order: other steps
    assert at.session_state.acc_pos == 0 and not at.exception
