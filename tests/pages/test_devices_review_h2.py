"""The Devices page's datasheet table gives int8 in TOP/s, as its measured ceilings do (AppTest).

Before, the datasheet's column read "int8 TFLOP/s" beside the measured row "int8 GEMM … TOP/s": an int8 GEMM does
integer operations, not floating-point ones, and the catalogue's int8 figures are TOPS.
"""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "5_Devices.py")

pytestmark = pytest.mark.usefixtures("bench_env")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_datasheets_int8_is_in_tops_and_the_float_formats_in_tflops(lang):
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params["lang"] = lang
    at.run()
    assert not at.exception, at.exception
    sheet = next(d.value for d in at.dataframe if "catalogue row" in d.value.columns)
    assert "int8 TOP/s" in sheet.columns and "int8 TFLOP/s" not in sheet.columns, list(sheet.columns)
    assert {f"{dt} TFLOP/s" for dt in ("fp32", "tf32", "fp16", "bf16", "fp8")} <= set(sheet.columns)


@pytest.mark.parametrize("lang, gpu_words, cpu_words", [("en", "device-to-device", "copy in memory"),
                                                         ("zh", "设备内拷贝", "内存拷贝")])
def test_on_a_cpu_the_measurement_is_described_as_what_a_cpu_runs(lang, gpu_words, cpu_words):
    """Before, a CPU-only server read "a GEMM in each format the device supports and a 32 MiB device-to-device
    copy": the CPU has no fp8 (a reference kernel runs, no ceiling) and its copy is one in memory."""
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params["lang"] = lang
    at.run()
    text = next(c.value for c in at.caption if "512×512×512" in c.value)
    assert cpu_words in text and gpu_words not in text and "fp8" in text, text
