"""Device detection, catalogue matching, measured ceilings and the `devices` command."""

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest
import torch

from gemmlib.cli import main
from gemmlib.core import ceilings, machine
from gemmlib.core.hardware import CATALOGUE
from gemmlib.measure import devices

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path / "cache"))
    ceilings.clear_ceilings()
    yield
    ceilings.clear_ceilings()


@pytest.mark.parametrize("name, row, noted", [
    ("NVIDIA H200", "H200 SXM", False),
    ("NVIDIA H200 NVL", "H200 NVL", False),  # not the SXM board: its own clocks and bandwidth
    ("NVIDIA H100 80GB HBM3", "H100 SXM", False),
    ("NVIDIA H100 PCIe", "H100 PCIe", False),
    ("NVIDIA H100 NVL", "H100 NVL", False),
    ("NVIDIA H800", "H800 SXM", False),
    ("NVIDIA GH200 480GB", "GH200", False),
    ("NVIDIA A100-SXM4-80GB", "A100 SXM 80GB", False),
    ("NVIDIA A100-SXM4-40GB", "A100 SXM 40GB", False),
    ("NVIDIA B200", "B200", False),
    ("NVIDIA GB200", "GB200", False),
    ("NVIDIA L40S", "L40S", False),
    ("NVIDIA L4", "L4", False),
    ("NVIDIA A10G", "A10G", False),
    ("NVIDIA GeForce RTX 4090", "RTX 4090", False),
    ("NVIDIA GeForce RTX 5090", "RTX 5090", False),
    ("AMD Instinct MI300X", "MI300X", False),
    ("NVIDIA H20", "H20", False),
])
def test_catalogue_match_by_name(name, row, noted):
    hw, note = machine.match_catalogue(name)
    assert hw is CATALOGUE[row]
    assert bool(note) == noted


# Boards whose clocks, memory or bandwidth differ from every row: never another row's figures.
@pytest.mark.parametrize("name", ["NVIDIA GH200 144G HBM3e", "NVIDIA A100-PCIE-40GB", "NVIDIA A100 80GB PCIe",
                                  "NVIDIA H800 PCIe", "Tesla T4", "NVIDIA RTX 6000 Ada Generation", "NVIDIA L40"])
def test_a_variant_without_its_own_row_is_not_in_the_catalogue(name):
    hw, note = machine.match_catalogue(name)
    assert hw is None
    assert "not in the catalogue" in note and name in note


def test_unknown_gpu_has_no_row_and_says_so():
    hw, note = machine.match_catalogue("Tesla T4")
    assert hw is None and "not in the catalogue" in note


def test_cpu_matches_the_placeholder_row():
    hw, note = machine.match_catalogue("AMD EPYC 7B13", "cpu")
    assert hw.editable and "placeholder" in note


def test_light_summary_never_imports_torch():
    code = ("import sys; from gemmlib.core.machine import light_summary; s = light_summary();"
            "print('torch' in sys.modules, s[0]['kind'], s[0]['units'] > 0)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "cpu", "True"]


def test_light_summary_reads_gpus_through_nvml(monkeypatch):
    fake = types.SimpleNamespace(
        nvmlInit=lambda: None, nvmlShutdown=lambda: None, nvmlDeviceGetCount=lambda: 2,
        nvmlDeviceGetHandleByIndex=lambda i: i,
        nvmlDeviceGetName=lambda h: [b"NVIDIA H200", "Tesla T4"][h],
        nvmlDeviceGetMemoryInfo=lambda h: types.SimpleNamespace(total=[141e9, 16e9][h]),
        nvmlDeviceGetCudaComputeCapability=lambda h: [(9, 0), (7, 5)][h],
    )
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    s = machine.light_summary()
    gpus = [d for d in s if d["kind"] == "cuda"]
    assert [g["name"] for g in gpus] == ["NVIDIA H200", "Tesla T4"]
    assert gpus[0]["catalogue"] == "H200 SXM" and gpus[0]["capability"] == "9.0" and gpus[0]["memory_gb"] == 141.0
    assert gpus[1]["catalogue"] == "" and gpus[1]["capability"] == "7.5"


def test_light_summary_survives_a_broken_driver(monkeypatch):
    def fail():
        raise RuntimeError("NVML Shared Library Not Found")
    monkeypatch.setitem(sys.modules, "pynvml", types.SimpleNamespace(nvmlInit=fail))
    assert [d["kind"] for d in machine.light_summary()] == ["cpu"]


def test_detect_sees_the_cpu():
    found = devices.detect()
    cpu = found[0]
    assert cpu.kind == "cpu" and cpu.units == torch.get_num_threads() and cpu.memory_bytes > 0
    assert cpu.catalogue == "CPU (edit me)"
    assert all(d.kind == "cuda" for d in found[1:] if "cuda" in d.torch_device)
    if not torch.cuda.is_available():
        assert [d.kind for d in found if d.kind == "cuda"] == []


# ----------------------------------------------------------------------------- ceilings
def _ceil(**kw):
    base = dict(device="cuda", device_name="NVIDIA H200", peaks={"bf16": 780e12, "fp32": 50e12},
                bandwidth=4.3e12, gemm_size=8192, copy_bytes=1024**3, units=132, memory_bytes=141e9)
    base.update(kw)
    return ceilings.Ceilings(**base)


def test_measured_hardware_is_the_catalogue_row_with_measured_figures():
    hw = _ceil().hardware()
    assert hw.name == "NVIDIA H200 (measured)"
    assert hw.peak("bf16") == 780e12 and hw.peak("fp32") == 50e12
    assert hw.peak("fp8") is None  # not measured: not claimed
    assert hw.bandwidth == 4.3e12 and hw.sms == 132
    assert "datasheet" in hw.source and CATALOGUE["H200 SXM"].source in hw.source


def test_unknown_gpu_measured_hardware_is_built_from_scratch():
    hw = _ceil(device_name="Tesla T4", peaks={"fp16": 40e12}).hardware()
    assert hw.peak("fp16") == 40e12 and hw.kind == "gpu" and hw.sms == 132


def test_ceiling_rows_compare_with_the_datasheet():
    rows = _ceil().rows(CATALOGUE["H200 SXM"])
    bf16 = next(r for r in rows if r["figure"] == "bf16 GEMM")
    assert bf16["measured"] == pytest.approx(780) and bf16["datasheet"] == pytest.approx(989.4)
    assert bf16["share of datasheet"] == pytest.approx(780 / 989.4)
    copy = next(r for r in rows if r["figure"] == "device copy")
    assert copy["share of datasheet"] == pytest.approx(4.3 / 4.8)


def test_ceilings_are_saved_and_read_back_without_the_process_copy():
    c = _ceil()
    path = ceilings.save_ceilings(c)
    assert path.exists() and path.parent.name == "cache"
    ceilings.clear_ceilings()  # forget the process-wide copy: the file must answer
    back = ceilings.all_ceilings()["cuda:NVIDIA H200"]
    assert back.peaks == c.peaks and back.bandwidth == c.bandwidth and back.units == 132
    assert devices.measured_hardware("cuda", "NVIDIA H200").peak("bf16") == 780e12
    assert devices.measured_hardware("cuda", "other") is None
    assert [h.name for h in ceilings.measured_hardware_all()] == ["NVIDIA H200 (measured)"]


def test_estimate_takes_a_measured_row_by_name_and_lists_it_when_the_name_is_unknown(capsys):
    """`estimate --gpu NAME` finds the catalogue's rows and those measured here; an unknown name lists both (the
    measured ones were once left out of the choices)."""
    ceilings.save_ceilings(_ceil())
    assert main(["estimate", "--preset", "llama-2-7b", "--gpu", "nvidia h200 (measured)", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["hardware"]["name"] == "NVIDIA H200 (measured)"
    assert main(["estimate", "--preset", "llama-2-7b", "--gpu", "H9000"]) == 2
    err = capsys.readouterr().err
    assert "unknown GPU 'H9000'; choose one of: H100 SXM, " in err
    assert err.strip().endswith("; or one measured on this machine: NVIDIA H200 (measured)")


def test_a_corrupt_ceilings_file_is_ignored():
    p = ceilings.ceilings_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("{not json", encoding="utf-8")
    assert ceilings.all_ceilings() == {}


def test_measure_ceilings_on_the_cpu(monkeypatch):
    monkeypatch.setattr(devices, "ceiling_plan", lambda device, quick=False: (64, 1024**2))
    steps = []
    c = devices.measure_ceilings("cpu", dtypes=("fp32", "tf32", "int8"), progress=lambda f, t: steps.append(f))
    assert set(c.peaks) == {"fp32", "int8"} and all(v > 0 for v in c.peaks.values())
    assert "tf32" in c.notes  # not supported on a CPU: noted, not measured
    assert c.bandwidth and c.bandwidth > 0 and c.gemm_size == 64
    assert steps[0] == 0 and steps[-1] == 1.0
    copy = next(r for r in c.results if r.name == "copy")
    assert copy.bytes == 2 * 1024**2 and copy.rel_error == 0.0
    assert all(r.bench == "ceiling" for r in c.results)
    hw = devices.measured_hardware("cpu")
    assert hw.peak("fp32") == c.peaks["fp32"] and hw.bandwidth == c.bandwidth
    assert ceilings.ceilings_path().exists()


def test_measure_ceilings_refuses_cuda_without_a_gpu(monkeypatch):
    from gemmlib.core.errors import InputError
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(InputError, match="cuda"):
        devices.measure_ceilings("cuda")


# ----------------------------------------------------------------------------- CLI
def test_devices_json(capsys):
    assert main(["devices", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    cpu = doc["devices"][0]
    assert cpu["kind"] == "cpu" and cpu["catalogue"] == "CPU (edit me)"
    assert cpu["datasheet"]["peaks_tflops"]["fp32"] == pytest.approx(0.2)
    assert doc["measured"] == {}


def test_devices_light_and_measure(capsys, monkeypatch):
    assert main(["devices", "--light"]) == 0
    assert "cpu:0" in capsys.readouterr().out
    monkeypatch.setattr(devices, "ceiling_plan", lambda device, quick=False: (32, 1024**2))
    assert main(["devices", "--measure", "--device", "cpu", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (entry,) = doc["measured"].values()
    assert entry["device"] == "cpu" and entry["peaks"]["fp32"] > 0


@pytest.mark.parametrize("args", [["--light", "--measure"], ["--measure", "--device", "tpu"]])
def test_devices_bad_input(capsys, args):
    assert main(["devices", *args]) == 2
    assert capsys.readouterr().err.startswith("error:")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_detect_describes_each_gpu():
    gpus = [d for d in devices.detect() if d.kind == "cuda"]
    assert len(gpus) == torch.cuda.device_count()
    for d in gpus:
        assert d.units > 0 and d.memory_bytes > 0 and "." in d.capability
    assert devices.device_info("cuda").name == torch.cuda.get_device_name()
