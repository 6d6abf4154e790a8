"""The LLM Estimator's Serving tab takes every `estimate --serve` flag (review s29, A), seen through AppTest.

An engineer could not ask the page "the best concurrency with TTFT <= 100 ms and TPOT <= 50 ms" nor "what does
concurrency 32 give": the tab had no TTFT target, no concurrency, arrivals, requests per point or engine limits.
Each is now a box kept in the URL, greyed out where it counts for nothing (as the CLI refuses it there), and the
tab's words, chart and table follow them (tests/views/test_serving_inputs_s29a.py checks the JSON against the CLI).
"""

from __future__ import annotations

import re

import pytest
from estimator_app import estimator_app
from streamlit.testing.v1 import AppTest


@pytest.fixture(autouse=True)
def _own_cache(bench_env):
    """No measured ceilings or links from this machine."""


SMALL = dict(le_preset="llama-3-8b", le_seq=256, le_new=32, le_tab="Serving", le_serve="true")
NUMBERS = ("le_tpot", "le_ttft", "le_conc", "le_rate", "le_nreq", "le_kvb", "le_maxseqs", "le_maxtok")
PICKS = ("le_engine", "le_arrival")


def _ok(at: AppTest) -> AppTest:
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    return at


def _table(at: AppTest):
    frames = [d.value for d in at.dataframe if "TTFT ms" in list(d.value.columns)]
    assert frames, "the serving table"
    return frames[-1]


def _ms(text: str, what: str) -> float:
    """A duration of the words ("TPOT 9.45 ms", "TTFT 1.2 s") in ms."""
    v, unit = re.search(what + r" ([\d.,]+) (ms|s|µs)", text).groups()
    return float(v.replace(",", "")) * {"ms": 1.0, "s": 1e3, "µs": 1e-3}[unit]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_one_concurrency_says_what_it_reaches_against_both_targets(lang, widget_warnings):
    at = _ok(estimator_app(lang=lang, **SMALL, le_conc=32, le_ttft=100))
    assert at.number_input(key="le_conc").value == 32 and at.number_input(key="le_ttft").value == 100.0
    df = _table(at)
    assert len(df) == 1 and int(df.iloc[0, 0]) == 32 and "best" not in df.columns  # one point, no search
    tpot, ttft = float(df["TPOT ms"].iloc[0]), float(df["TTFT ms"].iloc[0])
    said = [*(s.value for s in at.success), *(w.value for w in at.warning)]
    head = "At concurrency **32**" if lang == "en" else "并发 **32** 时"
    words = next(s for s in said if s.startswith(head))
    assert abs(_ms(words, "TPOT") - tpot) <= 0.01 * tpot and abs(_ms(words, "TTFT") - ttft) <= 0.01 * ttft
    if lang == "en":  # each target said met or not, by the row's own numbers; missed: a warning
        assert ("Within the 50 ms per-token target." in words) is (tpot <= 50)
        assert ("Within the 100 ms time-to-first-token target." in words) is (ttft <= 100)
        assert ("Over the 100 ms time-to-first-token target: a lower concurrency" in words) is (ttft > 100)
        assert (words in [w.value for w in at.warning]) is (tpot > 50 or ttft > 100)
        caps = " ".join(c.value for c in at.caption)
        assert "the targets are what it is read against" in caps and "`--concurrency`" in caps
    assert not widget_warnings, widget_warnings


def test_the_best_concurrency_under_a_ttft_and_a_tpot_target():
    at = _ok(estimator_app(**SMALL, le_ttft=100))
    best = next(s.value for s in at.success if s.value.startswith("Best concurrency under 50 ms per token and 100 "
                                                                   "ms to the first token: **"))
    n = int(re.search(r"\*\*([\d,]+)\*\*", best).group(1).replace(",", ""))
    df = _table(at)
    row = df[df["best"] == "yes"]
    assert len(row) == 1 and int(row.iloc[0, 0]) == n
    assert float(row["TTFT ms"].iloc[0]) <= 100 and float(row["TPOT ms"].iloc[0]) <= 50
    assert (df[df.iloc[:, 0].astype(int) > n]["TTFT ms"].astype(float) > 100).all()  # every larger concurrency shown misses the TTFT target


def test_each_box_greys_out_where_it_counts_for_nothing():
    at = _ok(estimator_app(le_tab="Serving", le_preset="llama-3-8b", le_seq=256, le_new=32))
    assert all(at.number_input(key=k).disabled for k in NUMBERS) and all(at.selectbox(key=k).disabled for k in PICKS)
    at.toggle(key="le_serve").set_value(True).run()
    assert not any(at.number_input(key=k).disabled for k in NUMBERS) and not at.selectbox(key="le_engine").disabled
    assert at.selectbox(key="le_arrival").disabled  # no request rate: the CLI refuses --arrival
    at.number_input(key="le_rate").set_value(5.0).run()
    assert not _ok(at).selectbox(key="le_arrival").disabled
    at.selectbox(key="le_arrival").set_value("fixed").run()
    caps = " ".join(c.value for c in _ok(at).caption)
    assert "Requests arrive at fixed gaps of 200 ms (`--arrival fixed`)" in caps
    at.number_input(key="le_rate").set_value(0.0).run()
    assert _ok(at).selectbox(key="le_arrival").disabled and at.selectbox(key="le_arrival").value == "fixed"


def test_a_link_opens_the_new_boxes_and_nothing_is_logged(widget_warnings):
    """Each box is bound to the URL as the others are (``le_`` + the field; the browser writes it, as
    tests/browser/test_browser_urls.py checks for the sidebar's): a link sets it, and it stays on the next run."""
    link = dict(le_ttft=250, le_conc=8, le_rate=2, le_arrival="fixed", le_nreq=16, le_maxseqs=4, le_maxtok=1024)
    at = _ok(estimator_app(**SMALL, **link))
    for _ in range(2):  # the link's run, then a rerun (the widgets keep the link's values)
        assert {k: at.number_input(key=k).value for k in link if k != "le_arrival"} == {
            "le_ttft": 250.0, "le_conc": 8, "le_rate": 2.0, "le_nreq": 16, "le_maxseqs": 4, "le_maxtok": 1024}
        assert at.selectbox(key="le_arrival").value == "fixed" and not at.selectbox(key="le_arrival").disabled
        said = [*(s.value for s in at.success), *(w.value for w in at.warning)]
        assert any(s.startswith("At 2 requests/s, at most 8 in flight: ") for s in said), said
        caps = " ".join(c.value for c in at.caption)
        assert "Each point sends 16 requests (`--num-requests`)." in caps and "fixed gaps of 500 ms" in caps
        _ok(at.run())
    assert not widget_warnings, widget_warnings
