"""The hardware catalogue: lookups, aliases, peaks per dtype, overrides, table rows, roofline."""

import pytest

from gemmlib.core import hardware as H
from gemmlib.core import roofline as R
from gemmlib.core.dtypes import COMPUTE_DTYPES, dtype_bytes, get_dtype
from gemmlib.core.errors import InputError


@pytest.mark.parametrize("alias,name", [("h100", "H100 SXM"), ("H200", "H200 SXM"), ("a100", "A100 SXM 80GB"),
                                        ("l40s", "L40S"), ("4090", "RTX 4090"), ("rtx-4090", "RTX 4090"),
                                        ("cpu", "CPU (edit me)"), ("H100 SXM", "H100 SXM")])
def test_lookup_by_alias(alias, name):
    assert H.get_hardware(alias).name == name


def test_unknown_hardware_is_an_input_error():
    with pytest.raises(InputError, match="unknown GPU"):
        H.get_hardware("tpu-v9")


def test_required_rows_dense_peaks_and_sources():
    for name in ("H100 SXM", "H200 SXM", "A100 SXM 80GB", "L40S", "RTX 4090"):
        hw = H.CATALOGUE[name]
        assert hw.kind == "gpu" and hw.source.startswith("https://") and hw.sms > 0
        assert hw.peak("bf16") > hw.peak("fp32") > 0
    assert H.get_hardware("h100").peak("bf16") == pytest.approx(989.4e12)  # dense, not the 2:4 sparse 1979
    assert H.get_hardware("h200").bandwidth == pytest.approx(4.8e12)
    assert H.get_hardware("a100").peak("fp8") is None and not H.get_hardware("a100").supports("fp8")
    assert H.get_hardware("h100").peak("float16") == H.get_hardware("h100").peak("fp16")
    assert H.get_hardware("h100").ridge_point("bf16") == pytest.approx(989.4e12 / 3.35e12)
    assert H.get_hardware("a100").ridge_point("fp8") is None


def test_overrides_make_a_new_row_and_validate():
    cpu = H.get_hardware("cpu")
    assert cpu.editable
    mine = cpu.with_overrides(peaks={"fp32": 1.5e12, "fp8": 3e12}, bandwidth=50e9, sms=16, name="my CPU")
    assert mine.peak("fp32") == 1.5e12 and mine.peak("fp8") == 3e12 and mine.bandwidth == 50e9
    assert mine.sms == 16 and mine.name == "my CPU"
    assert cpu.peak("fp32") == pytest.approx(0.2e12)  # the catalogue row is untouched
    assert H.CATALOGUE["CPU (edit me)"] == cpu
    assert cpu.with_overrides(peaks={"fp16": None}).peak("fp16") is None
    hash(mine)
    for kw in ({"peaks": {"fp32": 0}}, {"bandwidth": -1}, {"sms": 0}, {"peaks": {"fp5": 1.0}}):
        with pytest.raises(InputError):
            cpu.with_overrides(**kw)


def test_catalogue_rows():
    rows = H.catalogue_rows()
    assert [r["name"] for r in rows] == list(H.CATALOGUE)
    h100 = rows[0]
    assert h100["bf16 TFLOP/s"] == 989.4 and h100["SMs"] == 132 and h100["source"].startswith("https://")
    assert all(f"{d} TFLOP/s" in h100 for d in COMPUTE_DTYPES)


def test_dtypes():
    assert [dtype_bytes(d) for d in ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8")] == [8, 4, 4, 2, 2, 1, 1]
    assert get_dtype("BFloat16").name == "bf16"
    assert dtype_bytes("fp4") == 0.5 and get_dtype("nvfp4").name == "fp4"  # block scales come on top
    with pytest.raises(InputError):
        get_dtype("fp5")


def test_roofline():
    assert R.ridge(100.0, 10.0) == 10.0
    assert float(R.attainable(5.0, 100.0, 10.0)) == 50.0
    assert float(R.attainable(50.0, 100.0, 10.0)) == 100.0
    curve = R.roof_curve(100.0, 10.0, lo=1, hi=1000, points=8)
    assert any(p["intensity"] == 10.0 for p in curve)
    assert max(p["flops_per_s"] for p in curve) == 100.0
    with pytest.raises(InputError):
        R.attainable(1.0, 0.0, 1.0)
    with pytest.raises(InputError):
        R.ridge(1.0, 0.0)
    with pytest.raises(InputError):
        R.roof_curve(1.0, 1.0, lo=0.0)
