"""The Devices page's datasheet table fits a 1280-px window (tests/browser/test_browser_fit_s29b.py) and loses no
fact (review s29, B): the peaks and the bandwidth in the table, under short headers with their units in the
caption; each device's detected name and its datasheet's source in the expander under it."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gemmlib.core.hardware import CATALOGUE
from gemmlib.core.machine import light_summary

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "5_Devices.py")


def test_every_datasheet_fact_is_shown():
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception and not at.error
    found = light_summary()
    sheet = at.dataframe[1].value
    assert list(sheet["device"]) == [f"{d['kind']}:{d['index']}" for d in found]
    for d, (_i, row) in zip(found, sheet.iterrows(), strict=True):
        hw = CATALOGUE[d["catalogue"]]
        for dt in ("fp32", "tf32", "fp16", "bf16", "fp8", "int8"):
            unit = "TOP/s" if dt == "int8" else "TFLOP/s"
            want = hw.peak(dt)
            got = row[f"{dt} {unit}"]
            assert got == pytest.approx(want / 1e12) if want else str(got) in ("—", "nan"), (dt, got)  # none: "—"
        assert row["bandwidth TB/s"] == pytest.approx(hw.bandwidth / 1e12)
    assert any("TFLOP/s (int8: TOP/s" in c.value and "bandwidth in TB/s" in c.value for c in at.caption)
    (box,) = [e for e in at.expander if e.label == "Each device's name and its datasheet's source"]
    text = " ".join(m.value for m in box.markdown).replace("\\", "")
    for d in found:
        hw = CATALOGUE[d["catalogue"]]
        assert d["name"].replace("\\", "") in text and f"{d['kind']}:{d['index']}" in text
        assert (hw.source if hw.source.startswith("http") else hw.source.strip("()")[:40]) in text
