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


# ----- the rows people size for now, their memory in bytes, their interconnect (issue 12, issue 15 item 13) -----

NEW_ROWS = ("B200", "B300", "GB200", "H100 PCIe", "H100 NVL", "H200 NVL", "A100 SXM 40GB", "L4", "A10G", "RTX 5090",
            "MI300X", "MI325X", "MI355X", "H20")


@pytest.mark.parametrize("name", NEW_ROWS)
def test_new_rows_have_sources_memory_and_an_interconnect(name):
    hw = H.CATALOGUE[name]
    assert hw.kind == "gpu" and hw.source.startswith("https://") and hw.memory_source
    assert hw.interconnect is not None and hw.interconnect.pcie_link is not None
    for d in hw.unknown:
        assert hw.peak(d) is None  # unknown stays unknown


@pytest.mark.parametrize("name, dtype, published, divisor", [
    # dense = the datasheet's figure with sparsity / 2 (NVIDIA), per GPU of an 8- or 72-GPU system
    ("B200", "bf16", 36e15, 8 * 2), ("B200", "fp8", 72e15, 8 * 2), ("B200", "fp4", 144e15, 8 * 2),
    ("GB200", "bf16", 360e15, 72 * 2), ("GB200", "fp4", 1440e15, 72 * 2), ("GB200", "int8", 720e15, 72 * 2),
    ("B300", "fp4", 108e15, 8),  # HGX B300: 108 PF dense for 8 GPUs
    ("H100 NVL", "fp8", 3341e12, 2), ("H100 PCIe", "bf16", 1513e12, 2), ("L4", "bf16", 242e12, 2),
    ("MI300X", "fp8", 5229.8e12, 2), ("MI325X", "bf16", 1307.4e12, 1),
])
def test_dense_peaks_from_the_published_figures(name, dtype, published, divisor):
    assert H.CATALOGUE[name].peak(dtype) == pytest.approx(published / divisor, rel=2e-3)


@pytest.mark.parametrize("name, mib", [("H100 SXM", 81559), ("H200 SXM", 143771), ("B200", 183359), ("B300", 275040),
                                       ("GB200", 189471), ("A100 SXM 80GB", 81920), ("A100 SXM 40GB", 40960),
                                       ("L40S", 46068), ("L4", 23034), ("A10G", 23028), ("RTX 5090", 32607),
                                       ("H100 NVL", 95830)])
def test_memory_is_the_driver_reported_bytes(name, mib):
    """nvidia-smi's total (MiB), not the datasheet's "GB" read as 10⁹ bytes: no GB/GiB mix."""
    hw = H.CATALOGUE[name]
    assert hw.memory_bytes == mib * 2**20 and "driver report" in hw.memory_source


def test_memory_without_a_driver_report_is_the_datasheet_in_gib_and_says_so():
    for name, gb in (("H100 PCIe", 80), ("H200 NVL", 141), ("RTX 4090", 24), ("MI325X", 256), ("MI355X", 288)):
        hw = H.CATALOGUE[name]
        assert hw.memory_bytes == gb * 2**30 and "read as GiB" in hw.memory_source
    assert H.CATALOGUE["MI300X"].memory_bytes == 201_310_208 * 1024  # rocminfo, KB
    # every reported total is the datasheet's number of GiB less a reservation of at most 1 %
    for name, gb in (("H100 SXM", 80), ("H200 SXM", 141), ("B200", 180), ("A100 SXM 40GB", 40), ("MI300X", 192)):
        assert 0.99 * gb <= H.CATALOGUE[name].memory_bytes / 2**30 <= gb


def test_unknown_is_not_unsupported():
    rtx = H.get_hardware("rtx 5090")
    assert rtx.peak("bf16") is None and "bf16" in rtx.unknown
    assert "not in the catalogue" in rtx.missing_peak("bf16")
    a100 = H.get_hardware("a100")
    assert "no fp8 GEMM path" in a100.missing_peak("fp8")
    assert rtx.with_overrides(peaks={"bf16": 2e14}).unknown == ("tf32", "fp16", "fp8")


@pytest.mark.parametrize("alias, name", [("h100 pcie", "H100 PCIe"), ("H100-NVL", "H100 NVL"), ("h200 nvl", "H200 NVL"),
                                         ("b200", "B200"), ("gb200", "GB200"), ("a100 40gb", "A100 SXM 40GB"),
                                         ("l4", "L4"), ("a10g", "A10G"), ("geforce rtx 5090", "RTX 5090"),
                                         ("instinct mi300x", "MI300X"), ("mi355x", "MI355X"), ("h20", "H20"),
                                         ("h100", "H100 SXM"), ("a100", "A100 SXM 80GB")])
def test_aliases_a_device_name_would_match(alias, name):
    assert H.get_hardware(alias).name == name


def test_interconnect_per_direction_is_half_the_datasheet_bidirectional():
    for name, bidir in (("H100 SXM", 900e9), ("H200 SXM", 900e9), ("B200", 1.8e12), ("GB200", 1.8e12),
                        ("A100 SXM 80GB", 600e9), ("H100 NVL", 600e9)):
        ic = H.CATALOGUE[name].interconnect
        assert ic.scale_up_bytes_per_s == bidir / 2
    assert H.CATALOGUE["H100 SXM"].interconnect.pcie_bytes_per_s == 128e9 / 2  # PCIe Gen5 x16
    assert H.CATALOGUE["H100 SXM"].interconnect.network_bytes_per_s == 400e9 / 8  # ConnectX-7 400 Gb/s per GPU
    assert H.CATALOGUE["GB200"].interconnect.gpus_per_node == 72
    assert H.CATALOGUE["L4"].interconnect.intra is None and H.CATALOGUE["L4"].interconnect.inter is None


def test_catalogue_rows_show_unknowns_and_memory_in_gib():
    rows = {r["name"]: r for r in H.catalogue_rows()}
    assert rows["RTX 5090"]["bf16 TFLOP/s"] is None and "bf16" in rows["RTX 5090"]["unknown peaks"]
    assert rows["GB200"]["SMs"] is None and rows["B200"]["fp4 TFLOP/s"] == 9000
    assert rows["H100 SXM"]["memory GiB"] == pytest.approx(79.65, abs=0.01)
    assert rows["H100 SXM"]["scale-up GB/s per direction"] == 450
