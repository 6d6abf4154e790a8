"""A GPU row measured on this machine ("NAME (measured)", from gemmlib.core.ceilings) on the Chinese
LLM Estimator page: its option in the GPU list reads "NAME（实测）", the name kept as it is (the
estimate's own texts, which quote the hardware's name, still say "NAME (measured)": reported, the
page's presenter builds them). The bug this pins came
out of a used cache folder (issue 23): the label stayed English on the Chinese page. The expected
text is read from the .po, not through the app's own lookup."""

from __future__ import annotations

import json
from pathlib import Path

import gemm_i18n
from streamlit.testing.v1 import AppTest

from gemmlib.core.i18n import english
from gemmlib.views import estimator as view

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "4_LLM_Estimator.py")
ZH = {m.id: m.string for m in gemm_i18n.read("zh") if isinstance(m.id, str) and m.id}
ROW = "NVIDIA H200 (measured)"


def _measured_h200(cache: Path) -> None:
    """A ceiling as gemmlib.measure.devices saves it, in this test's own cache folder."""
    cache.mkdir(mode=0o700, exist_ok=True)
    (cache / "ceilings.json").write_text(json.dumps({"cuda:NVIDIA H200": {
        "device": "cuda", "device_name": "NVIDIA H200", "peaks": {"bf16": 7.5e14}, "bandwidth": 4.3e12,
        "units": 132, "memory_bytes": 150_121_545_728.0}}))


def test_the_label_of_a_measured_row_in_each_language():
    import ui

    zh = ui.gettext_for("zh")
    assert view.labeller(english)(ROW) == ROW  # English: the row's own name
    assert view.labeller(zh)(ROW) == ZH["{name} (measured)"].format(name="NVIDIA H200") == "NVIDIA H200（实测）"
    assert view.labeller(zh)("h100") == "h100"  # a catalogue row: its name as it is


def test_the_chinese_estimator_page_shows_the_measured_row_in_chinese(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    _measured_h200(cache)
    monkeypatch.setenv("GEMM_CACHE_DIR", str(cache))
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params["lang"] = "zh"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    gpu = at.selectbox(key="le_gpu")
    assert "NVIDIA H200（实测）" in gpu.options and ROW not in gpu.options, gpu.options  # options as shown
    gpu.set_value(ROW).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.selectbox(key="le_gpu").value == ROW  # the data keeps the row's name
    assert "NVIDIA H200（实测）" in at.selectbox(key="le_gpu").options
    en = AppTest.from_file(PAGE, default_timeout=120)
    en.run()  # the English page lists the row by its own name: the check above is not vacuous
    assert ROW in en.selectbox(key="le_gpu").options
