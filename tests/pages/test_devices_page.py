"""The Devices page: detection, datasheet rows, and a ceiling measurement from the button."""

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gemmlib.core import ceilings
from gemmlib.measure import devices

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "5_Devices.py")


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path / "cache"))
    ceilings.clear_ceilings()
    yield
    ceilings.clear_ceilings()


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """The page after its "measure the ceilings" button was pressed on the CPU (a small plan), and the cache folder
    the measurement was saved in: one measurement (a benchmark worker's ~5 s of CPU) that the tests below only read.
    Run as each test would be (tests/conftest.py's ``hermetic``; the caps and language it removes are out of the
    session's environment already): a cache folder of its own, no spare worker."""
    cache = tmp_path_factory.mktemp("devices-measured") / "cache"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GEMM_CACHE_DIR", str(cache))
        mp.setenv("GEMM_SPARE_WORKER", "0")
        mp.setattr(devices, "ceiling_plan", lambda device, quick=False: (64, 1024**2))
        ceilings.clear_ceilings()
        try:
            at = AppTest.from_file(PAGE, default_timeout=120).run()
            at.radio(key="dv_device").set_value("cpu")  # the CPU path, on a GPU machine too
            at.button[0].click().run()
        finally:
            ceilings.clear_ceilings()
    return at, cache


def test_renders_cold_with_the_cpu_and_its_catalogue_row():
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception and not at.error
    light, datasheet = (d.value for d in at.dataframe[:2])  # no torch asked: the light detection's rows
    assert light.iloc[0]["kind"] == "cpu" and light.iloc[0]["catalogue"] == "CPU (edit me)"
    threads = light.iloc[0]["units"]  # what the count counts, as the PyTorch table says it
    assert re.fullmatch(r"1 thread|\d+ threads", threads), threads
    assert datasheet.iloc[0]["fp32 TFLOP/s"] == pytest.approx(0.2)
    assert any("Nothing measured yet" in i.value for i in at.info)
    assert at.toggle(key="dv_torch").value is False


def test_the_placeholder_note_asks_for_a_measurement_only_until_there_is_one():
    """It said "measure the ceilings below to get figures for this CPU" above the CPU's measured ceilings too."""
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert any("measure the ceilings below to get figures" in i.value for i in at.info)
    ceilings.save_ceilings(ceilings.Ceilings("cpu", "Test CPU", {"fp32": 3.0e10}, 1.5e9, measured_at=0))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    infos = [i.value for i in at.info]
    assert not any("measure the ceilings below to get figures" in i for i in infos), infos
    assert any("use the ceilings measured below instead" in i for i in infos), infos


def test_the_toggle_adds_what_pytorch_sees():
    import torch

    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.toggle(key="dv_torch").set_value(True).run()
    assert not at.exception and not at.error
    light, detected, datasheet = (d.value for d in at.dataframe[:3])
    assert detected.iloc[0]["catalogue"] == "CPU (edit me)"
    assert detected.iloc[0]["units"].split()[0] == str(torch.get_num_threads())
    assert datasheet.iloc[0]["fp32 TFLOP/s"] == pytest.approx(0.2)
    assert len(detected) == 1 + torch.cuda.device_count()


def test_measure_ceilings_button_shows_measured_figures(measured, monkeypatch):
    at, cache = measured
    assert not at.exception and not at.error
    rows = at.dataframe[-1].value
    figures = list(rows["figure"])
    assert "fp32 GEMM" in figures and "device copy" in figures
    assert (rows["measured"] > 0).all()
    assert any("tf32: not measured" in c.value for c in at.caption)
    monkeypatch.setenv("GEMM_CACHE_DIR", str(cache))  # read back from the folder the press saved it in
    ceilings.clear_ceilings()
    assert devices.measured_hardware("cpu") is not None


def test_measured_figures_carry_their_date_and_spread_on_one_axis(measured):
    at, _ = measured
    assert not at.exception and not at.error
    rows = at.dataframe[-1].value
    timed = rows.dropna(subset=["low", "high"])
    assert len(timed) == len(rows)  # every figure keeps its p20–p80 spread
    assert (timed["low"] <= timed["measured"]).all() and (timed["measured"] <= timed["high"]).all()
    assert any("measured 20" in m.value and "UTC" in m.value for m in at.markdown)
    spec = at.get("vega_lite_chart")[-1].proto.spec
    assert '"row"' not in spec and '"facet"' not in spec and '"type": "log"' in spec  # one shared axis


def test_a_cpu_chart_promises_no_datasheet_it_does_not_draw(measured):
    """A CPU has no datasheet row (its catalogue row is a placeholder): its chart is titled "measured …" without
    "vs datasheet", and its legend has no grey "datasheet" entry with nothing drawn for it."""
    at, _ = measured
    assert not at.exception and not at.error
    spec = json.loads(at.get("vega_lite_chart")[-1].proto.spec)
    assert "(dot: median, line: p20–p80)" in json.dumps(spec["title"], ensure_ascii=False)
    assert "datasheet" not in json.dumps(spec["title"])
    domains = [layer["encoding"]["color"]["scale"]["domain"] for layer in spec["layer"]]
    assert all(d == ["measured (median)"] for d in domains), domains


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_cpus_fp8_figure_says_it_is_no_ceiling(lang):
    """fp8 on a CPU is a reference kernel whose speed grows with the size: its row said nothing, and the Precision page
    read it as a peak (~1,144 %). Its note now says it is no ceiling; fp32's row stays a plain measurement."""
    from gemmlib.measure.devices import device_info

    name = device_info("cpu").name
    assert ceilings.save_ceilings(ceilings.Ceilings("cpu", name, {"fp32": 5e10, "fp8": 4e9}, 8e9)) is not None
    at = AppTest.from_file(PAGE, default_timeout=60)
    if lang == "zh":
        at.query_params["lang"] = "zh"
    at.run()
    assert not at.exception and not at.error
    table = next(d.value for d in at.dataframe if len(d.value) and "fp8" in " ".join(map(str, d.value.iloc[:, 0])))
    notes = {str(f).split()[0]: n for f, n in zip(table.iloc[:, 0], table.iloc[:, -1], strict=True)}
    want = "not a ceiling" if lang == "en" else "不是性能上限"
    assert not isinstance(notes["fp32"], str), notes  # the table numbers the notes, written whole under it
    said = [line for c in at.caption for line in c.value.split("  \n")
            if line.startswith(f"**{notes['fp8'].removeprefix('见')}**")]
    assert len(said) == 1 and want in said[0] and "fp8 GEMM" in said[0], (notes, said)
