"""Issue 26 item 7 through a page: a second tab of a visitor who already has a run queued or running
gets a clear message in the reader's language, not a place in the queue (the Devices page through
AppTest, the real queue and the real caps reader)."""

from __future__ import annotations

from pathlib import Path

import gemm_i18n
import pytest
from streamlit import config
from streamlit.testing.v1 import AppTest

import ui
from gemmlib.core.i18n import Text
from gemmlib.measure import runqueue

ROOT = Path(__file__).resolve().parents[2]
ZH = {m.id if isinstance(m.id, str) else m.id[0]: m.string if isinstance(m.string, str) else m.string[0]
      for m in gemm_i18n.read("zh") if m.id}


@pytest.fixture
def one_browser(monkeypatch, tmp_path):
    """Every session of this test is a tab of one browser (its XSRF cookie's token), caps from the
    environment only."""
    for k in ("GEMM_CLASSROOM", "GEMM_MAX_DIM", "GEMM_MAX_BYTES", "GEMM_TIME_LIMIT_S", "GEMM_MAX_CPU_GFLOP"):
        monkeypatch.delenv(k, raising=False)
    old = config.get_option("secrets.files")
    config.set_option("secrets.files", [str(tmp_path / "secrets.toml")])
    monkeypatch.setattr(ui.runbox, "_browser_token", lambda: "token-of-one-browser")
    yield runqueue.Visitor.of("token-of-one-browser", None)
    config.set_option("secrets.files", old)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_second_tab_is_told_it_already_has_a_run_and_takes_no_place(one_browser, lang):
    at = AppTest.from_file(str(ROOT / "pages" / "5_Devices.py"), default_timeout=120)
    if lang == "zh":
        at.query_params["lang"] = "zh"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    t = (lambda s: ZH[s]) if lang == "zh" else (lambda s: s)
    q = runqueue.default_queue()
    first_tab = Text(runqueue.SESSION_OWNER, what=Text("a precision run"), tag="ab12")
    with q.turn(first_tab, visitor=one_browser):
        button = [b for b in at.button if b.label == t("Measure ceilings")]
        button[0].click().run()
        assert q.waiting() == []  # no place was taken in the line
    assert not at.exception, [e.value for e in at.exception]
    warnings = [w.value for w in at.warning if t("Not queued") in w.value]
    assert len(warnings) == 1, [w.value for w in at.warning] + [e.value for e in at.error]
    shown = t("{what} (session {tag})").format(what=t("a precision run"), tag="ab12")
    assert t(runqueue.ONE_PER_SESSION).format(what=ui.md(shown)) in warnings[0], warnings
    assert not [e.value for e in at.error if t("Check the input") in e.value]
    with q.turn("afterwards", visitor=one_browser, timeout_s=5):  # nothing of the refused run is left
        pass
