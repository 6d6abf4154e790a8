"""Findings of the hostile-visitor / classroom-admin review of the running server, page by page."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def test_a_stopped_calibration_is_named_on_the_roofline_page_itself(monkeypatch):
    """Stopping the Roofline page's calibration (⏹, a changed setting) said nothing on that page (its run box had
    no notice); the "Stopped …" line turned up later on whichever benchmark page the visitor opened next."""
    from streamlit.runtime.scriptrunner_utils.exceptions import RerunException
    from streamlit.runtime.scriptrunner_utils.script_requests import RerunData

    from gemmlib.measure import runner

    def interrupted(*args, **kwargs):
        raise RerunException(RerunData())  # what a Stop press or a widget change does at the run's next yield point

    monkeypatch.setattr(runner, "run", interrupted)
    at = AppTest.from_file(str(ROOT / "pages" / "9_Roofline.py"), default_timeout=120).run()
    next(b for b in at.button if b.label.startswith("Calibrate and validate")).click().run()
    assert not at.exception
    stopped = [i.value for i in at.info if i.value.startswith("Stopped")]
    assert stopped and "nothing from that run was kept" in stopped[0], [i.value for i in at.info]
    at.run()  # said once, and not left over for the next page
    assert not any(i.value.startswith("Stopped") for i in at.info)
    assert "_bench_running" not in at.session_state


def test_a_refusal_quotes_a_pasted_10000_character_value_cut_to_a_readable_length():
    """A 10,000-digit number pasted into the Accumulate page's A was quoted whole in the red box (10 kB of
    nines); the refusal still says where and why, with the value cut in the middle. (The box now takes 4,096
    characters: a 4,000-digit number is the longest that fits.)"""
    at = AppTest.from_file(str(ROOT / "pages" / "1_Accumulate.py"), default_timeout=60).run()
    at.radio(key="acc_src").set_value("custom").run()
    at.text_area(key="acc_text_a").input("9" * 4_000 + " 1\n2 3").run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "row 1, column 1" in errors[0] and "keep values within" in errors[0], errors
    assert "99999" in errors[0] and "…" in errors[0] and len(errors[0]) < 300, (len(errors[0]), errors[0][:200])


def test_a_linked_matrix_text_that_reads_as_infinity_is_shown_and_refused_with_its_reason():
    """?acc_text_a=inf (or a 10,000-digit number) was dropped as a "non-finite number" meant for number boxes, and
    the note said only "cannot be used here; the default 1 2 3 4 5 6 is used". A text box keeps the linked text,
    and the matrix check says what is wrong with it."""
    for text in ("inf", "9" * 4_000):  # (a longer linked text is cut to the box's 4,096 characters and named)
        at = AppTest.from_file(str(ROOT / "pages" / "1_Accumulate.py"), default_timeout=60)
        at.query_params["acc_src"] = "custom"
        at.query_params["acc_text_a"] = text
        at.run()
        assert not at.exception
        assert at.text_area(key="acc_text_a").value == text
        assert not any("cannot be used here" in i.value for i in at.info), [i.value for i in at.info]
        errors = [e.value for e in at.error]
        assert len(errors) == 1 and "A row 1, column 1" in errors[0], errors
