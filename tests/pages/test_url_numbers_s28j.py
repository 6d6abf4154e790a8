"""A number (or text, toggle) widget set from code through ``ui.set_url_widget`` (brief s28 J).

Before, on the FLOPs page, choosing another GPU (which sets the wave section's SMs, ``fl_sms``) logged "The widget
with key "fl_sms" was created with a default value but also had its value set via the Session State API" in the
server log (Accumulate's text boxes too, back from another source): ui.url set the session's value and passed the
widget its default too. On that run the widget is now drawn without its default, and the URL is kept against the
page's default by ui.url: left out while the value is the default, else the value, an int staying an int with its
step. AppTest, with Streamlit's policy check on as in a served app (as tests/pages/test_small_defects_s28_app.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def _param(at: AppTest, key: str):
    got = at.query_params.get(key)
    return got[-1] if isinstance(got, list) else got


def test_flops_gpu_change_sets_the_sms_and_nothing_is_logged(widget_warnings):
    at = AppTest.from_file(str(ROOT / "pages" / "2_FLOPs.py"), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.number_input(key="fl_sms").value == 132
    at.selectbox(key="fl_gpu").set_value("A100 SXM 80GB").run()
    sms = at.number_input(key="fl_sms")
    assert sms.value == 108 and isinstance(sms.value, int) and sms.step == 1
    assert _param(at, "fl_sms") is None  # the A100's count is the field's default now: not in the URL
    at.run()  # the next run passes the default again: the value stays
    assert at.number_input(key="fl_sms").value == 108
    at.number_input(key="fl_sms").set_value(100).run()  # a reader's own count (the browser writes its URL)
    assert at.number_input(key="fl_sms").value == 100
    at.selectbox(key="fl_gpu").set_value("L4").run()
    assert at.number_input(key="fl_sms").value == 58 and _param(at, "fl_sms") is None
    assert not at.exception, [e.value for e in at.exception]
    assert not widget_warnings, widget_warnings


def _setter_app():
    """Bound widgets that a button sets from code to given values."""
    import streamlit as st

    import ui

    def press() -> None:
        for k, v in st.session_state.to_set.items():
            ui.set_url_widget(k, v)

    st.session_state.setdefault("to_set", {})
    st.button("set", key="go", on_click=press)
    ui.url(st.number_input, "n", 1, 64, 4, key="n")
    ui.url(st.number_input, "x", 0.0, 2.0, 0.5, step=0.25, key="x")
    ui.url(st.slider, "s", 0.05, 1.0, 0.9, step=0.05, key="s")
    ui.url(st.toggle, "t", True, key="t")
    ui.url(st.text_area, "a", "1 2", key="a")


def _setter() -> AppTest:
    at = AppTest.from_function(_setter_app, default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize(("key", "value", "url"), [
    ("n", 9, "9"), ("n", 1, "1"),  # 1: the minimum, which Streamlit would take for the default without value=
    ("n", 4, None), ("x", 1.25, "1.25"), ("s", 0.05, "0.05"), ("t", False, "false"), ("a", "", ""),
    ("a", "1 2", None)])
def test_a_value_set_from_code_is_kept_and_the_url_holds_it_only_off_default(widget_warnings, key, value, url):
    at = _setter()
    widget = {"n": at.number_input, "x": at.number_input, "s": at.slider, "t": at.toggle, "a": at.text_area}[key]
    if value != widget(key=key).value:  # first away from the default, so that setting the default back shows
        at.session_state.to_set = {key: {"n": 9, "x": 1.5, "s": 0.5, "t": False, "a": "3"}[key]}
        at.button(key="go").click().run()
    at.session_state.to_set = {key: value}
    at.button(key="go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    got = widget(key=key).value
    assert got == value and type(got) is type(value)
    assert _param(at, key) == url
    at.run()  # a plain rerun, the default passed again
    assert widget(key=key).value == value and _param(at, key) == url
    assert not widget_warnings, widget_warnings


def test_the_number_keeps_its_type_and_step(widget_warnings):
    at = _setter()
    at.session_state.to_set = {"n": 7, "x": 1.75}
    at.button(key="go").click().run()
    n, x = at.number_input(key="n"), at.number_input(key="x")
    assert (n.value, n.step, type(n.value)) == (7, 1, int)
    assert (x.value, x.step, type(x.value)) == (1.75, 0.25, float)
    assert (n.min, n.max, x.min, x.max) == (1, 64, 0.0, 2.0)
    assert not widget_warnings, widget_warnings


def test_accumulate_back_to_typed_matrices_keeps_them_and_nothing_is_logged(widget_warnings):
    at = AppTest.from_file(str(ROOT / "pages" / "1_Accumulate.py"), default_timeout=120)
    at.run()
    at.radio(key="acc_src").set_value("custom").run()
    at.text_area(key="acc_text_a").input("1 0\n0 1").run()
    at.radio(key="acc_src").set_value("random").run()
    at.radio(key="acc_src").set_value("custom").run()  # back: what was typed, set through ui.set_url_widget
    assert not at.exception, [e.value for e in at.exception]
    assert at.text_area(key="acc_text_a").value == "1 0\n0 1"
    assert at.text_area(key="acc_text_b").value == "7 8\n9 10\n11 12"  # the default: not in the URL
    assert _param(at, "acc_text_a") == "1 0\n0 1" and _param(at, "acc_text_b") is None
    assert not widget_warnings, widget_warnings


# ------------------------------------------------------------------------ Fields.peek: a number from a link
def _peek_app():
    """A number field whose value is read above it (as the Estimator's headline reads CP) and then drawn."""
    from types import SimpleNamespace

    import streamlit as st

    import ui

    fields = ui.Fields({"cp": SimpleNamespace(name="CP", label=None, help=None, lo=1, hi=64),
                        "eff": SimpleNamespace(name="eff", label=None, help=None, lo=0.05, hi=1.0)},
                       {"cp": 1, "eff": 0.9})
    st.session_state.peeked = {k: fields.peek(k) for k in ("cp", "eff")}
    fields.num(st, "cp")
    fields.num(st, "eff", widget="slider", step=0.05)


@pytest.mark.parametrize("cp", ["4", "4.0", "2.5", "0", "65", "64", "abc", "1e400", "-3", None])
@pytest.mark.parametrize("eff", ["0.5", "2", "nan", None])
def test_peek_gives_a_number_field_what_its_widget_takes_from_the_link(cp, eff):
    at = AppTest.from_function(_peek_app, default_timeout=60)
    at.query_params.update({k: v for k, v in (("cp", cp), ("eff", eff)) if v is not None})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    peeked = at.session_state.peeked
    assert peeked["cp"] == at.number_input(key="cp").value and type(peeked["cp"]) is int
    assert peeked["eff"] == at.slider(key="eff").value and type(peeked["eff"]) is float
    at.number_input(key="cp").set_value(7).run()
    assert at.session_state.peeked["cp"] == 7  # later runs: the widget's state


def test_estimator_use_case_and_comparison_set_numbers_and_nothing_is_logged(widget_warnings):
    """The Estimator's use case (batch, prompt, new tokens, the context toggle) and configuration B's copy of A
    are set through ui.set_url_widget too."""
    at = AppTest.from_file(str(ROOT / "pages" / "4_LLM_Estimator.py"), default_timeout=180)
    at.run()
    at.selectbox(key="le_use").set_value("offline").run()
    assert not at.exception, [e.value for e in at.exception]
    assert (at.number_input(key="le_batch").value, at.number_input(key="le_seq").value,
            at.number_input(key="le_new").value) == (256, 1000, 1000)
    assert _param(at, "le_batch") == "256"
    at.toggle(key="le_cmp").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.number_input(key="le_b_batch").value == 256
    assert not widget_warnings, widget_warnings
