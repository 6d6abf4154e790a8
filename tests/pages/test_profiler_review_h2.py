"""The Profiler page read as a demanding user would, in English and Chinese (AppTest).

* The prediction's GEMM share of time against the 80 % target: its delta is a difference of shares, in points;
  in Chinese it read "与 80 % 目标相差 -11.6%" — Streamlit, which draws the arrow down and red only for a delta
  that starts with "-", drew it up and green for a share below the target.
* The CPU row's note after the prediction's caption is in the reader's parentheses (Chinese: full width).
"""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "10_Profiler.py")


def _app(lang: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.query_params["lang"] = lang
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("lang, label, unit", [("en", "GEMM share of time (roofline)", "points"),
                                               ("zh", "GEMM 占时间的比例（屋顶线模型）", "个百分点")])
def test_a_share_below_the_target_is_drawn_below_it_in_points(lang, label, unit):
    at = _app(lang)
    m = next(m for m in at.metric if m.label == label)
    share = float(m.value.rstrip("%"))
    assert share < 80, m.value  # the CPU default: below the target
    assert m.proto.delta.startswith("-"), m.proto.delta  # Streamlit's arrow down, red
    number = float(m.proto.delta.split()[0])
    assert share - number == pytest.approx(80.0) and unit in m.proto.delta


def test_the_cpu_rows_note_is_in_chinese_parentheses():
    at = _app("zh")
    caption = next(c.value for c in at.caption if "屋顶线" in c.value or "GEMM 按" in c.value)
    assert "（CPU" in caption and " (CPU" not in caption, caption


def test_the_hardware_picker_names_the_cpu_row_in_chinese_and_a_link_still_picks_a_row():
    at = _app("zh")
    assert "CPU（请按本机修改）" in at.selectbox(key="pf_hw").options
    linked = AppTest.from_file(PAGE, default_timeout=180)
    linked.query_params.update({"lang": "zh", "pf_hw": "H100 SXM"})
    linked.run()
    assert not linked.exception and linked.selectbox(key="pf_hw").value == "H100 SXM"
