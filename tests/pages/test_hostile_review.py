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
