"""What a screen reader hears of a chart comes in the page's language (gemmlib.charts.aria).

Without a top-level ``description`` vega-embed labels the chart "Vega visualization", and Vega captions each axis
"X-axis titled '…' for a linear scale with values from …", each legend "Symbol legend titled '…' …", the title
"Title text '…'" and each mark "line mark": English on a Chinese page. Checked on the builders' own output: every
axis, legend and mark of a Chinese chart has its words in Chinese, the chart's description is its title, and the
title is not read twice. (The words reach the SVG's aria-label in Streamlit's Vega: an axis's ``description``
replaces Vega's caption, a top-level one the container's "Vega visualization".)
"""

from __future__ import annotations

import re

import gemm_i18n
import pytest

from gemmlib.charts import aria
from gemmlib.charts.batching import model_chart
from gemmlib.charts.model import roofline_spec
from gemmlib.charts.scaleout import comm_by_op_spec
from gemmlib.core.hardware import get_hardware
from gemmlib.llm import accounting
from gemmlib.llm.parallel import Parallel
from gemmlib.llm.presets import from_name
from gemmlib.llm.scaleout import estimate as scaleout_estimate

ROWS = [{"batch": b, "mode": m, "intensity": float(b if m == "stacked" else 1)}
        for b in (1, 8, 64) for m in ("loop", "stacked", "bmm")]
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def zh():
    table = {m.id: m.string for m in gemm_i18n.read("zh") if isinstance(m.id, str) and m.id and m.string}
    return lambda s: table.get(s, s)


def _guides(spec: dict) -> tuple[list[dict], list[dict], list[dict]]:
    """Every axis and legend a unit spec's encodings draw, and every mark, however deep the layers/concats go."""
    axes, legends, marks = [], [], []

    def walk(s):
        if not isinstance(s, dict):
            return
        if "mark" in s:
            marks.append(s["mark"] if isinstance(s["mark"], dict) else {"type": s["mark"]})
        for ch, enc in (s.get("encoding") or {}).items():
            if not isinstance(enc, dict):
                continue
            if ch in ("x", "y") and enc.get("axis", {}) is not None:
                axes.append(enc.get("axis") or {})
            if ch in ("color", "fill", "stroke", "shape", "size") and "field" in enc and enc.get("legend", {}) is not None:
                legends.append(enc.get("legend") or {})
        for key in ("layer", "hconcat", "vconcat", "concat"):
            for sub in s.get(key) or ():
                walk(sub)
        walk(s.get("spec"))
    walk(spec)
    return axes, legends, marks


def test_describe_writes_the_frame_in_the_readers_language(zh):
    spec = model_chart(ROWS, ridge=295.0, gettext=zh).to_dict()
    axes, legends, marks = _guides(spec)
    assert axes and legends and marks
    title = spec["title"] if isinstance(spec["title"], str) else spec["title"]["text"]
    assert spec["description"] == title and CJK.search(title)  # the container's label: the title, in Chinese
    assert spec["config"]["title"]["aria"] is False  # … said once
    assert {a["description"].split("：")[0] for a in axes} == {"x 轴", "y 轴"}
    assert all(d["description"].startswith("图例：") for d in legends)
    assert {m["ariaRoleDescription"] for m in marks} <= {"折线", "点", "参考线", "文字标签"}


def test_english_keeps_vegas_own_words_but_gets_a_description():
    spec = model_chart(ROWS, ridge=295.0).to_dict()
    axes, legends, marks = _guides(spec)
    assert spec["description"] == "Arithmetic intensity by batch (dashed: ridge point)"
    assert not any("description" in a for a in axes + legends)  # Vega's captions say the scale's range too
    assert not any("ariaRoleDescription" in m for m in marks)


def test_the_estimator_charts_in_chinese(zh):
    est = scaleout_estimate(from_name("llama-2-7b"), accounting.Workload(batch=1, seq_len=512, new_tokens=4),
                            get_hardware("h100"), Parallel(tp=2))
    for spec in (roofline_spec(est, gettext=zh), comm_by_op_spec(est, gettext=zh)):
        axes, legends, marks = _guides(spec)
        assert CJK.search(spec["description"]), spec.get("description")
        for words in [a["description"] for a in axes] + [d["description"] for d in legends]:
            assert CJK.search(words) and not re.search(r"\b(axis|legend)\b", words), words
        assert all(CJK.search(m["ariaRoleDescription"]) for m in marks)


def test_what_the_spec_says_is_kept():
    spec = {"title": "T", "description": "mine", "mark": {"type": "bar", "ariaRoleDescription": "column"},
            "encoding": {"x": {"field": "a", "type": "quantitative", "axis": {"description": "own"}},
                         "y": {"field": "b", "type": "quantitative", "axis": None}}}
    out = aria.describe(spec, lambda s: {"x axis: {title}": "x 轴：{title}"}.get(s, s))
    assert out["description"] == "mine" and out["title"] == "T" and "config" not in out
    assert out["mark"]["ariaRoleDescription"] == "column" and out["encoding"]["x"]["axis"]["description"] == "own"
    assert out["encoding"]["y"]["axis"] is None  # no axis drawn, none described
    untitled = aria.describe({"mark": "point", "encoding": {"x": {"field": "n", "type": "quantitative"},
                                                            "y": {"field": "t", "type": "quantitative"}}})
    assert untitled["description"] == "t against n"


def test_a_constant_channel_gets_no_axis_words():
    """``y=alt.value(0)`` (the Profiler's target label) has no axis: giving it one made Altair refuse the chart
    (``YValue`` has no parameter named 'axis') and the Chinese Profiler page failed after a profile."""
    import altair as alt

    from gemmlib.charts import aria

    data = alt.Data(values=[{"x": 1, "t": "a"}])
    chart = alt.Chart(data).mark_text().encode(x=alt.X("x:Q", title="share"), text="t:N", y=alt.value(0))
    out = aria.described(chart, lambda s: s.replace("axis", "轴"))  # a translated page's words (English keeps Vega's)
    spec = out.to_dict()  # validates: no axis on the constant channel
    assert "axis" not in spec["encoding"]["y"] and spec["encoding"]["x"]["axis"]["description"] == "x 轴: share"
