"""This machine's GPUs without torch: the installed torch's build and the driver's GPUs (gpu_presence)."""

import subprocess
import sys
import types
from pathlib import Path

import pytest

from gemmlib.core import machine

ROOT = Path(__file__).resolve().parents[2]


def test_torch_build_is_read_without_importing_torch():
    code = ("import sys, json; from gemmlib.core.machine import torch_build, gpu_presence;"
            "b = torch_build(); n, why = gpu_presence(); print(json.dumps([b, n, why, 'torch' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    import json

    build, n, why, loaded = json.loads(out.stdout)
    assert loaded is False
    import torch  # the reference: what torch says of itself once imported

    assert build == {"version": torch.__version__, "cuda": torch.version.cuda, "hip": torch.version.hip}
    if not torch.cuda.is_available():
        assert n == 0 and why
    else:
        assert n == torch.cuda.device_count() and why == ""


def _fake_torch(tmp_path, version_py: str):
    pkg = tmp_path / "torch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("raise ImportError('importing torch is what this avoids')\n")
    (pkg / "version.py").write_text(version_py)
    return tmp_path


@pytest.fixture
def cuda_build(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(_fake_torch(tmp_path, "__version__ = '2.13.0+cu128'\n"
                                                          "cuda: Optional[str] = '12.8'\nhip = None\n")))
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)


def _nvml(count: int):
    return types.SimpleNamespace(nvmlInit=lambda: None, nvmlShutdown=lambda: None, nvmlDeviceGetCount=lambda: count)


def test_a_cuda_build_counts_the_gpus_nvml_lists(cuda_build, monkeypatch):
    assert machine.torch_build() == {"version": "2.13.0+cu128", "cuda": "12.8", "hip": None}
    monkeypatch.setitem(sys.modules, "pynvml", _nvml(8))
    assert machine.gpu_presence() == (8, "")
    monkeypatch.setitem(sys.modules, "pynvml", _nvml(0))
    n, why = machine.gpu_presence()
    assert n == 0 and "lists no GPU" in why


@pytest.mark.parametrize(("value", "seen"), [("", 0), ("-1", 0), ("0", 1), ("1,0", 2), ("0,1,2,3,4,5,6,7,8", 8),
                                             ("2,9,3", 1), ("GPU-4c1d, MIG-77", 2), ("0,x,1", 1)])
def test_cuda_visible_devices_is_read_as_the_cuda_runtime_reads_it(cuda_build, monkeypatch, value, seen):
    monkeypatch.setitem(sys.modules, "pynvml", _nvml(8))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", value)
    n, why = machine.gpu_presence()
    assert n == seen
    assert (why == "") == (seen > 0)
    if not seen:
        assert "CUDA_VISIBLE_DEVICES" in why


def test_a_cpu_build_has_no_cuda_whatever_the_driver_says(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(_fake_torch(tmp_path, "__version__ = '2.13.0+cpu'\ncuda = None\nhip = None\n")))
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    monkeypatch.setitem(sys.modules, "pynvml", _nvml(4))
    n, why = machine.gpu_presence()
    assert n == 0 and "CPU-only build" in why


def test_no_torch_installed(monkeypatch):
    monkeypatch.setattr(machine, "torch_build", lambda: None)
    assert machine.gpu_presence() == (0, "PyTorch is not installed")


def test_a_rocm_build_counts_the_kfd_gpu_nodes(tmp_path, monkeypatch):
    monkeypatch.setattr(machine, "torch_build", lambda: {"version": "2.13.0+rocm6.4", "cuda": None, "hip": "6.4"})
    nodes = tmp_path / "nodes"
    for i, gpu_id in enumerate(["0", "53124", "22041"]):  # node 0 is the CPU
        (nodes / str(i)).mkdir(parents=True)
        (nodes / str(i) / "gpu_id").write_text(gpu_id + "\n")
    real = machine._listed
    monkeypatch.setattr(machine, "_listed", lambda folder, keep=lambda p: True:
                        real(str(nodes), keep) if folder.startswith("/sys/class/kfd") else real(folder, keep))
    monkeypatch.delenv("HIP_VISIBLE_DEVICES", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert machine.gpu_presence() == (2, "")
    monkeypatch.setenv("HIP_VISIBLE_DEVICES", "1")
    assert machine.gpu_presence() == (1, "")


def test_a_devices_memory_is_a_whole_count_of_bytes_in_json():
    """`devices --json` printed "memory_bytes": 25276194816.0 (NVML and /proc give floats here): a byte count is whole."""
    from gemmlib.core.machine import DeviceInfo

    d = DeviceInfo("cpu", 0, "Test CPU", 2, 25276194816.0).to_dict()
    assert d["memory_bytes"] == 25276194816 and isinstance(d["memory_bytes"], int) and d["memory_gb"] == 25.3
