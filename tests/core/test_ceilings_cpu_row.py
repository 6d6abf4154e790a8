"""The CPU row from this machine's measured ceilings (core.ceilings.cpu_row), and a ceiling's spread
(figures well under any CPU's physical bound: a 3e11 "CPU" would not be kept on a 1-thread machine)."""

import pytest

from gemmlib.core import ceilings as C
from gemmlib.core.hardware import CATALOGUE
from gemmlib.core.roofline import attainable


@pytest.fixture(autouse=True)
def _own_store(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path))
    C.clear_ceilings()
    yield
    C.clear_ceilings()


def test_without_ceilings_the_row_is_the_placeholder():
    hw, note = C.cpu_row()
    base = CATALOGUE["CPU (edit me)"]
    assert hw.peak("fp32") == base.peak("fp32") and hw.bandwidth == base.bandwidth
    assert "placeholder" in note


def test_measured_ceilings_replace_the_placeholder_and_no_point_sits_above_its_roof():
    C.save_ceilings(C.Ceilings("cpu", "Test CPU", {"fp32": 3.0e10, "bf16": 1.0e10}, 1.5e9, measured_at=0,
                               spread={"fp32": (2.8e10, 3.1e10)}))
    hw, note = C.cpu_row()
    assert hw.peak("fp32") == 3.0e10 and hw.bandwidth == 1.5e9 and "Test CPU" in note
    # a benchmark point beat the (quick) ceiling measurement: compute-bound fp32, and a memory-bound one
    points = [("fp32", 500.0, 3.6e10), ("bf16", 2.0, 4.0e9)]
    hw, note = C.cpu_row(points)
    for dtype, intensity, flops in points:
        assert flops <= attainable(intensity, hw.peak(dtype), hw.bandwidth) * (1 + 1e-12), dtype
    assert "raised" in note


def test_the_spread_survives_the_file_and_reaches_the_rows():
    C.save_ceilings(C.Ceilings("cpu", "Test CPU", {"fp32": 3.0e10}, 1.5e9, measured_at=86400,
                               spread={"fp32": (2.8e10, 3.1e10), "copy": (1.4e9, 1.6e9)}))
    C._ceilings.clear()  # read back from the file only
    c = C.all_ceilings()["cpu:Test CPU"]
    rows = {r["figure"]: r for r in c.rows()}
    assert rows["fp32 GEMM"]["low"] == pytest.approx(0.028) and rows["fp32 GEMM"]["high"] == pytest.approx(0.031)
    assert rows["device copy"]["low"] == pytest.approx(0.0014)
    assert c.when == "1970-01-02 00:00 UTC"


def _cpu_with_fp8() -> C.Ceilings:
    """A CPU's ceilings as measure_ceilings writes them: fp8 timed through torch's reference kernel at 1024³."""
    return C.Ceilings("cpu", "Test CPU", {"fp32": 3.0e10, "bf16": 1.0e10, "fp8": 4.0e9}, 1.5e9, measured_at=0,
                      gemm_size=1024)


def test_an_emulated_format_is_no_roof_of_the_cpu_row():
    """fp8 on a CPU is torch's reference kernel (its speed grows with the size): the CPU row once took the ceiling
    run's figure, and an fp8 point's, as an fp8 peak, and the Roofline drew an fp8 roof as if the CPU had fp8
    hardware. Now the row has no fp8 peak, and its sentence says why and what was measured, at which size."""
    hw, note = C.cpu_row([("fp8", 50.0, 6.0e9)])  # placeholder figures, an fp8 point measured here
    assert hw.peak("fp8") is None and hw.peak("fp32") == CATALOGUE["CPU (edit me)"].peak("fp32")
    assert "fp8 has no roof" in note and "emulates it" in note and "raised" not in note
    C.save_ceilings(_cpu_with_fp8())
    hw, note = C.cpu_row([("fp8", 50.0, 6.0e9), ("fp32", 500.0, 2.0e10)])
    assert hw.peak("fp8") is None and hw.peak("fp32") == 3.0e10 and hw.peak("bf16") == 1.0e10
    assert "fp8 has no roof" in note and "measured 0.004 TFLOP/s at 1024³" in note


def test_a_cpus_measured_row_and_json_keep_fp8_apart_but_a_gpus_keep_it():
    c = _cpu_with_fp8()
    assert c.hardware().peak("fp8") is None and c.hardware().peak("fp32") == 3.0e10  # the estimator's "(measured)"
    d = c.to_dict()
    assert d["peaks"]["fp8"] == 4.0e9 and "reference kernel" in d["emulated"]["fp8"]  # the JSON says what it is
    assert C.Ceilings.from_dict(d).peaks == c.peaks  # and reads back as it was
    gpu = C.Ceilings("cuda", "NVIDIA H100 80GB HBM3", {"fp8": 1.2e15, "bf16": 7.0e14}, 3.0e12, measured_at=0)
    assert gpu.hardware().peak("fp8") == 1.2e15 and gpu.to_dict()["emulated"] == {}
