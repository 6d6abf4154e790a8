"""The serving chart draws the TTFT target too (review s29, F).

With a TTFT target set (`--ttft-target-ms`, the Serving tab's "TTFT target ms") the chart drew only the TPOT target's
line and had no TTFT panel at all: a reader could not see which concurrencies meet the TTFT target. The chart now has
a third panel, TTFT against the concurrency (below the TPOT panel), with the TTFT target's dashed rule and its words ("TTFT target 500 ms",
in Chinese "TTFT 目标 500 ms"); each rule is drawn only where its target is set. Checked on the Vega-Lite spec and
on the SVG Vega renders from it."""

from __future__ import annotations

import json
import re

import pytest

from gemmlib.charts import scaleout as cs
from gemmlib.core.hardware import get_hardware
from gemmlib.llm.accounting import Workload
from gemmlib.llm.parallel import Parallel
from gemmlib.llm.presets import from_name
from gemmlib.llm.scaleout import estimate
from ui.i18n import translations

ZH = translations("zh").gettext


def _serving(tpot_ms: float | None, ttft_ms: float | None):
    return estimate(from_name("llama-3-8b"), Workload(batch=8, seq_len=512, new_tokens=8), get_hardware("h100"),
                    Parallel(), serve=True, tpot_target_s=tpot_ms and tpot_ms / 1e3,
                    ttft_target_s=ttft_ms and ttft_ms / 1e3).serving


@pytest.fixture(scope="module")
def both():
    return _serving(20.0, 500.0)


@pytest.fixture(scope="module")
def none():
    return _serving(None, None)


def _panels(spec: dict) -> dict[str, dict]:
    """The chart's panels by title: the throughput's, beside the TPOT's above the TTFT's."""
    tput, latency = spec["hconcat"]
    return {p["title"]: p for p in (tput, *latency["vconcat"])}


def _rules(panel: dict) -> list[tuple[str, str]]:
    """The panel's rules: (their dataset, their y field)."""
    return [(layer["data"]["name"], layer["encoding"]["y"]["field"]) for layer in panel["layer"]
            if layer["mark"] == "rule" or (isinstance(layer["mark"], dict) and layer["mark"]["type"] == "rule")]


def test_the_ttft_panel_has_the_ttft_targets_rule_and_the_tpot_panel_the_tpots(both):
    s = cs.serving_spec(both)
    panels = _panels(s)
    assert list(panels) == ["Throughput", "Time per output token", "Time to first token"]
    assert _rules(panels["Time to first token"]) == [("ttft_target", "TTFT ms")]
    assert _rules(panels["Time per output token"]) == [("tpot_target", "TPOT ms")]
    assert _rules(panels["Throughput"]) == []
    assert s["datasets"]["ttft_target"] == [{"TTFT ms": 500.0, "label": "TTFT target 500 ms"}]  # the target set
    assert s["datasets"]["tpot_target"] == [{"TPOT ms": 20.0, "label": "TPOT target 20 ms"}]
    ttft = panels["Time to first token"]["layer"][0]["encoding"]["y"]
    assert ttft["field"] == "TTFT ms" and ttft["title"] == "ms to the first token"
    assert ttft["scale"] == {"type": "log"}  # ms at one request, seconds past the KV limit: the target stays readable
    assert [p["TTFT ms"] for p in s["datasets"]["points"]] == [pytest.approx(p.ttft_s * 1e3) for p in both.points]


def test_the_targets_words_in_chinese(both):
    s = cs.serving_spec(both, gettext=ZH)
    assert s["datasets"]["ttft_target"] == [{"TTFT ms": 500.0, "label": "TTFT 目标 500 ms"}]
    assert s["datasets"]["tpot_target"][0]["label"] == "TPOT 目标 20 ms"
    assert _rules(_panels(s)["首 token 时间"]) == [("ttft_target", "TTFT ms")]


def test_the_fast_spec_is_the_validated_chart(both, none):
    for sv in (both, none):
        full, fast = cs.serving_chart(sv).to_dict(), cs.serving_spec(sv)  # to_dict validates the schema
        full.pop("$schema", None)
        fast.pop("$schema", None)
        assert full == fast


def _drawn(sv, gettext=None) -> tuple[int, list[str]]:
    """The SVG Vega draws: its rules in the target colour, and its text marks' words."""
    import vl_convert as vlc

    spec = cs.serving_spec(sv, gettext=gettext) if gettext else cs.serving_spec(sv)
    svg = vlc.vegalite_to_svg(json.dumps(spec))
    rules = re.findall(r'aria-roledescription="rule mark"[^>]*stroke="' + cs.TARGET_COLOR, svg, re.I)
    rules += re.findall(r'stroke="' + cs.TARGET_COLOR + r'"[^>]*aria-roledescription="rule mark"', svg, re.I)
    return len(rules), re.findall(r"<text[^>]*>([^<]*target[^<]*|[^<]*目标[^<]*)</text>", svg)


@pytest.mark.parametrize(("tpot", "ttft", "rules", "words"), [
    (20.0, 500.0, 2, ["TPOT target 20 ms", "TTFT target 500 ms"]),
    (None, 500.0, 1, ["TTFT target 500 ms"]),  # a TTFT target alone: its rule, none for TPOT
    (None, None, 0, []),  # no target: no line, no words
])
def test_a_rule_is_drawn_for_each_target_set_and_none_without(tpot, ttft, rules, words):
    sv = _serving(tpot, ttft)
    assert _drawn(sv) == (rules, words)
    if words:
        assert _drawn(sv, ZH)[1] == [w.replace(" target ", " 目标 ") for w in words]
