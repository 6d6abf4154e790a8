"""The Serving tab's "all at once (offline)" switch, seen through AppTest (review s29, F): a link turns it on and
keeps it, it greys out the rate box and the arrivals, and the tab says what the run reaches as an offline run
(tests/views/test_serving_offline_s29f.py checks the JSON against `estimate --serve --request-rate inf`)."""

from __future__ import annotations

import pytest
from estimator_app import estimator_app
from test_serving_tab_s29a import SMALL, _ok, _table


@pytest.fixture(autouse=True)
def _own_cache(bench_env):
    """No measured ceilings or links from this machine."""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_link_sends_every_request_at_once(lang, widget_warnings):
    at = _ok(estimator_app(lang=lang, **SMALL, le_offline="true", le_rate=5, le_nreq=64))
    for _ in range(2):  # the link's run, then a rerun
        assert at.toggle(key="le_offline").value and not at.toggle(key="le_offline").disabled
        assert at.number_input(key="le_rate").disabled and at.number_input(key="le_rate").value == 5.0  # kept, greyed
        assert at.selectbox(key="le_arrival").disabled
        df = _table(at)
        assert len(df) == 1 and int(df.iloc[0, 0]) == 64  # 64 small requests: all in flight at once
        said = [*(s.value for s in at.success), *(w.value for w in at.warning)]
        head = "All 64 requests at once: " if lang == "en" else "64 个请求同时发送："
        assert any(s.startswith(head) for s in said), said
        _ok(at.run())
    at.toggle(key="le_offline").set_value(False).run()  # off: the rate box's 5 requests/s again
    assert not _ok(at).number_input(key="le_rate").disabled and not at.selectbox(key="le_arrival").disabled
    said = [*(s.value for s in at.success), *(w.value for w in at.warning)]
    assert any(s.startswith("At 5 requests/s: " if lang == "en" else "每秒 5 个请求") for s in said), said
    assert not widget_warnings, widget_warnings


def test_the_switch_greys_out_with_the_serving_curve_off():
    at = _ok(estimator_app(le_tab="Serving", le_preset="llama-3-8b", le_seq=256, le_new=32))
    assert at.toggle(key="le_offline").disabled
