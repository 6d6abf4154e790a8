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


# ----- the catalogue as data (issue 24 item 7): hardware.json, checked on load; a user's own file -----

import io  # noqa: E402
import json  # noqa: E402
from contextlib import redirect_stderr, redirect_stdout  # noqa: E402

from gemmlib.cli import main  # noqa: E402


def _doc() -> dict:
    return json.loads(H.DATA_FILE.read_text(encoding="utf-8"))


def test_the_catalogue_is_the_data_file_every_gpu_with_its_datasheet_link():
    doc = _doc()
    assert doc["format"] == H.FORMAT
    assert [r["name"] for r in doc["gpus"]] == list(H.CATALOGUE)
    for hw in H.CATALOGUE.values():
        assert hw.origin == ""
        if hw.kind == "gpu":
            assert hw.source.startswith("https://"), hw.name
    # read once, at import: the rows are the module's, the same objects on every lookup
    assert H.get_hardware("h100") is H.CATALOGUE["H100 SXM"]
    assert H.parse_catalogue(doc) == H.CATALOGUE  # the file alone gives the same rows


def test_h800_and_gh200_rows_and_h20_once():
    h100, h800, gh200 = H.CATALOGUE["H100 SXM"], H.get_hardware("h800"), H.get_hardware("gh200")
    assert [n for n in H.CATALOGUE if "H20" in n.upper() and "H200" not in n.upper()] == ["H20"]
    assert h800.name == "H800 SXM" and h800.peaks == h100.peaks and h800.bandwidth == h100.bandwidth
    assert h800.interconnect.scale_up_bytes_per_s == 400e9 / 2  # 400 GB/s bidirectional NVLink
    assert h800.interconnect.intra.busbw == 200e9 and h800.interconnect.inter.busbw == 400e9 / 8
    assert "h800_sxm.yaml" in h800.source and h800.sms == 132
    assert gh200.peak("bf16") == h100.peak("bf16") and gh200.bandwidth == 4e12
    assert gh200.memory_bytes == 96 * 2**30 and "read as GiB" in gh200.memory_source
    assert gh200.source.startswith("https://www.nvidia.com/") and gh200.interconnect.intra is None
    with pytest.raises(InputError, match="spans more than one node"):  # no GPU-to-GPU figure: it says so
        gh200.interconnect.link_for(2)


MINE = {
    "interconnects": {"pair": {"scale_up": "NVLink bridge", "scale_up_bytes_per_s": 1e11, "pcie": "PCIe Gen4 x16",
                               "pcie_bytes_per_s": 3.2e10, "network": "none", "scale_up_gpus": 2, "gpus_per_node": 2,
                               "intra": {"name": "bridge", "kind": "nvlink", "busbw_bytes_per_s": 1e11,
                                         "latency_s": 1e-5, "source": "ours"},
                               "pcie_link": "link-pcie4", "inter": None, "source": "ours"}},
    "gpus": [
        {"name": "Lab GPU", "kind": "gpu", "peaks_tflops": {"fp32": 40, "bf16": 300}, "unknown": ["fp8"],
         "bandwidth_bytes_per_s": 1.5e12, "sms": 100, "memory": {"driver_mib": 49152, "report": "nvidia-smi here"},
         "source": "https://example.org/lab-gpu.pdf", "aliases": ["lab"], "interconnect": "pair"},
        {"name": "Capped H100", "kind": "gpu", "peaks_tflops": {"bf16": 700}, "bandwidth_bytes_per_s": 3.35e12,
         "memory": {"datasheet_gb": 80, "what": "80 GB HBM3"}, "source": "our power cap", "interconnect": "h100"},
    ]}


def test_a_users_file_adds_rows_marked_as_theirs(tmp_path):
    path = tmp_path / "lab.json"
    path.write_text(json.dumps(MINE), encoding="utf-8")
    mine = H.load_hardware_file(path)
    assert list(mine) == ["Lab GPU", "Capped H100"]
    lab = mine["Lab GPU"]
    assert lab.origin == "lab.json" and lab.label == "Lab GPU (from lab.json)"
    assert lab.peak("bf16") == 300e12 and lab.peak("fp8") is None and lab.unknown == ("fp8",)
    assert lab.memory_bytes == 49152 * 2**20 and lab.memory_source == "driver report: 49,152 MiB (nvidia-smi here)"
    assert lab.interconnect.link_for(2).name == "bridge" and lab.interconnect.pcie_link is H.LINKS["link-pcie4"]
    assert mine["Capped H100"].interconnect is H.CATALOGUE["H100 SXM"].interconnect  # a built-in one, by id
    rows = {**H.CATALOGUE, **mine}
    assert H.get_hardware("LAB", rows) is lab
    with pytest.raises(InputError, match="unknown GPU"):
        H.get_hardware("lab")  # the built-in catalogue alone does not have it
    table = H.catalogue_rows(rows)
    assert {r["name"]: r["from"] for r in table}["Lab GPU"] == "lab.json"
    assert {r["name"]: r["from"] for r in table}["H100 SXM"] is None
    assert "from" not in H.catalogue_rows()[0]
    assert H.parse_hardware(path.read_bytes(), "upload.json")["Lab GPU"].origin == "upload.json"  # an upload


def test_every_bad_row_is_named_with_what_is_wrong():
    good = {**MINE["gpus"][0], "interconnect": "h100"}
    doc = {"gpus": [
        {**good, "name": "A", "bandwith": 1},  # a typo: unknown field and the real one missing
        {**good, "name": "B", "kind": "tpu", "peaks_tflops": {"bf16": -1, "fp5": 2}},
        {**good, "name": "C", "memory": {"gib": 16}, "interconnect": "nope"},
        {**good, "name": "D"},  # a good row among bad ones: not reported
        {**good, "name": "H100"},  # the catalogue's alias
    ]}
    doc["gpus"][0].pop("bandwidth_bytes_per_s")
    with pytest.raises(InputError) as e:
        H.parse_hardware(json.dumps(doc), "bad.json")
    assert str(e.value) == "bad.json: " + "; ".join([
        "gpus[0] 'A': unknown field 'bandwith' (the fields are: " + ", ".join(H._ROW_FIELDS) + ")",
        "gpus[0] 'A': bandwidth_bytes_per_s is missing",
        "gpus[1] 'B': kind must be gpu or cpu, got 'tpu'",
        "gpus[1] 'B': peaks_tflops.bf16 must be a positive number, got -1",
        "gpus[1] 'B': peaks_tflops must be keyed by dtypes among fp32, tf32, fp16, bf16, fp8, int8, fp4, got 'fp5'",
        "gpus[2] 'C'.memory: source is missing",
        "gpus[2] 'C'.interconnect: interconnect 'nope' is not defined; define it under 'interconnects' or use one "
        "of: " + ", ".join(H.INTERCONNECTS),
        "gpus[4] 'H100': 'H100' is already the catalogue's 'H100 SXM'; give the row another name or alias",
    ])


LAB = {**MINE["gpus"][0], "interconnect": "h100"}  # a good row on its own


@pytest.mark.parametrize("doc, expected", [
    ({"gpus": {}}, "is not a hardware catalogue"),
    ([], "is not a hardware catalogue"),
    ({"gpus": ["H100"]}, "gpus[0]:  must be an object, got 'H100'"),
    ({"gpus": [{**LAB, "memory": {"driver_mib": 1.5, "report": "x"}}]}, "driver_mib must be a whole number"),
    ({"gpus": [{**LAB, "memory": {"gib": 1, "datasheet_gb": 1}}]}, "memory must be an object with one of"),
    ({"gpus": [{**LAB, "sms": -1}]}, "sms must be a whole number ≥ 0, got -1"),
    ({"gpus": [{**LAB, "unknown": ["bf16"]}]}, "unknown must be dtypes without a peak, got 'bf16'"),
    ({"gpus": [{**LAB, "bandwidth_bytes_per_s": float("inf")}]}, "bandwidth_bytes_per_s must be a positive"),
    ({"gpus": [{**LAB, "interconnect": {"scale_up": "x", "pcie": "y", "network": "z",
                                                    "intra": {"name": "l", "kind": "warp", "busbw_bytes_per_s": 1,
                                                              "latency_s": 0}}}]}, "kind must be one of the link kinds"),
    ({"gpus": [LAB, LAB]}, "gpus[1] 'Lab GPU': 'Lab GPU' is already gpus[0] of this file"),  # (not "the catalogue's")
    ({"gpus": [{**LAB, "bandwidth_bytes_per_s": 1e300}]},
     "bandwidth_bytes_per_s must be at most 1e18 (beyond any real device), got 1e+300"),
    ({"gpus": [{**LAB, "peaks_tflops": {"bf16": 1e19}}]}, "peaks_tflops.bf16 must be at most 1e18"),
    ({"links": {"link-pcie4": {"name": "p", "kind": "pcie", "busbw_bytes_per_s": 1, "latency_s": 0}}, "gpus": []},
     "links: 'link-pcie4' is defined twice"),
])
def test_bad_files_say_why(doc, expected):
    with pytest.raises(InputError) as e:
        H.parse_hardware(json.dumps(doc), "bad.json")
    assert expected in str(e.value)


def test_unreadable_and_broken_files(tmp_path):
    with pytest.raises(InputError, match="cannot read the hardware file"):
        H.load_hardware_file(tmp_path / "missing.json")
    (tmp_path / "broken.json").write_text('{"gpus": [', encoding="utf-8")
    with pytest.raises(InputError, match="broken.json is not valid JSON: Expecting value at line 1, column 11; "
                                         "correct the text there"):  # where, and what to do (it gave json's text)
        H.load_hardware_file(tmp_path / "broken.json")
    with pytest.raises(InputError, match="^latin.json is not UTF-8 text$"):
        H.parse_hardware(b'{"gpus": ["\xe9"]}', "latin.json")


def test_a_hardware_file_that_is_not_one_is_refused_without_reading_it_whole(tmp_path):
    """A FIFO once hung `--hardware-file`, /dev/zero filled the memory, a deeply nested file ended in a traceback and
    a 5,000-digit number quoted Python's advice to the reader: each is one line now."""
    import os

    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "deep.json").write_text("[" * 100_000, encoding="utf-8")
    (tmp_path / "digits.json").write_text('{"gpus": [{"name": "x", "sms": ' + "9" * 5000 + "}]}", encoding="utf-8")
    (tmp_path / "huge.json").write_text(" " * (H.MAX_HARDWARE_FILE_BYTES + 1), encoding="utf-8")
    for path, message in (
            (tmp_path / "fifo", f"the hardware file {tmp_path / 'fifo'} is a FIFO, not a regular file"),
            ("/dev/zero", "the hardware file /dev/zero is a device, not a regular file"),
            (tmp_path / "deep.json", "deep.json is nested too deeply to be a hardware file"),
            (tmp_path / "digits.json", "digits.json holds a value that cannot be read: Exceeds the limit (4300 digits) "
                                       "for integer string conversion: value has 5000 digits"),
            (tmp_path / "huge.json", f"the hardware file {tmp_path / 'huge.json'} is "
                                     f"{H.MAX_HARDWARE_FILE_BYTES + 1:,} bytes, above the limit of "
                                     f"{H.MAX_HARDWARE_FILE_BYTES:,}")):
        with pytest.raises(InputError) as e:
            H.load_hardware_file(path)
        assert str(e.value) == message
    with pytest.raises(InputError, match="nested too deeply"):  # an upload on the page: the same parser
        H.parse_hardware(b"[" * 100_000, "upload.json")


def test_the_estimate_takes_a_hardware_file(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "lab.json"
    path.write_text(json.dumps(MINE), encoding="utf-8")
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["estimate", "--preset", "llama-2-7b", "--hardware-file", str(path), "--gpu", "lab"]) == 0
    # the default efficiency is the shape model (gemmlib.llm.efficiency); a row without a published maximum says so
    assert "hardware  1 x Lab GPU (from lab.json), efficiency shape model" in out.getvalue()
    assert "no published maximum for Lab GPU bf16" in out.getvalue() and "peak 300 TFLOP/s (bf16)" in out.getvalue()
    with redirect_stdout(io.StringIO()) as js:
        assert main(["estimate", "--preset", "llama-2-7b", "--hardware-file", str(path), "--gpu", "lab",
                     "--json"]) == 0
    assert json.loads(js.getvalue())["hardware"]["peak_flops_per_gpu"] == 300e12
    (tmp_path / "bad.json").write_text(json.dumps({"gpus": [{"name": "X"}]}), encoding="utf-8")
    err = io.StringIO()
    with redirect_stderr(err), redirect_stdout(io.StringIO()):
        assert main(["estimate", "--preset", "llama-2-7b", "--hardware-file", str(tmp_path / "bad.json"),
                     "--gpu", "X"]) == 2
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: bad.json: gpus[0] 'X': kind is missing")


def test_the_data_files_page_texts_are_extracted_for_translation():
    with open(H.DATA_FILE, "rb") as f:
        found = [m for _, _, m, _ in H.babel_extract(f, ["N_"], [], {})]
    assert "NVLink 4 (18 links) + NVSwitch" in found and "CPU (edit me)" in found
    assert "platform-dependent (unknown)" in found and "H100 SXM" not in found  # product names stay as written


def test_an_all_to_all_across_nodes_goes_through_each_ranks_own_nic():
    """A ring all-reduce over m members per node gets m NICs; an all-to-all does not: each rank sends its off-node
    share, (n − m)/n of the buffer, through its own NIC — the time is size × (n − m)/n / NIC."""
    ic_ = H.get_hardware("H100 SXM").interconnect
    nic = ic_.inter.busbw
    ring = ic_.link_for(64, 2, 8)  # EP 64 over TP 2: 4 members in each of 16 nodes
    a2a = ic_.all_to_all_link(64, 2, 8)
    assert ring.busbw == pytest.approx(4 * nic)
    size = 1e9
    assert a2a.time("all_to_all", size, 64) - a2a.latency_s == pytest.approx(size * 60 / 64 / nic)
    assert ic_.all_to_all_link(8, 1, 8) == ic_.link_for(8, 1, 8)  # inside a node: NVLink, as before
