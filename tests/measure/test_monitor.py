"""The GPU monitor without a GPU: the plain statement, and the sampling logic on its own.

The sampling thread is tested with an ordinary reader function (a counter), not a
pretend GPU: what these tests show is that the thread samples, keeps order,
survives a failing reading and summarises correctly. Reading NVML itself can only
be checked on a machine with an NVIDIA GPU (see the gpu-marked test).
"""

from __future__ import annotations

import itertools
import sys
import time

import pytest

from gemmlib.measure import monitor
from gemmlib.measure.monitor import (
    BANDWIDTH_TARGET,
    UTIL_TARGET,
    GpuMonitor,
    MonitorResult,
    Sample,
    Sampler,
    monitor_call,
    nvml_status,
)

NVML_OK, NVML_WHY = nvml_status()


def _wait_for(cond, limit_s: float = 10.0) -> None:
    end = time.monotonic() + limit_s
    while not cond() and time.monotonic() < end:
        time.sleep(0.005)


def test_without_nvml_package_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # `import pynvml` now raises ImportError
    ok, why = nvml_status()
    assert ok is False
    assert "nvidia-ml-py" in why and "not installed" in why
    with GpuMonitor() as mon:
        value = 6 * 7
    assert value == 42
    assert mon.result.available is False and mon.result.samples == []
    assert "nvidia-ml-py" in mon.result.reason


@pytest.mark.skipif(NVML_OK, reason="this machine has a GPU NVML can read")
def test_without_gpu_or_driver_says_so_plainly():
    assert "GPU" in NVML_WHY and "off" in NVML_WHY
    value, res = monitor_call(lambda: "ran")
    assert value == "ran"
    assert res.available is False and res.samples == [] and res.reason == NVML_WHY
    assert res.to_dict()["summary"] == {"samples": 0}


def test_switched_off():
    with GpuMonitor(enabled=False) as mon:
        pass
    assert mon.result.available is False and "switched off" in mon.result.reason


def test_sampler_collects_in_order_and_takes_a_final_reading():
    counter = itertools.count()

    def read():
        i = next(counter)
        return {"sm_util": float(i), "mem_util": 2.0 * i, "power_w": None}

    s = Sampler(read, interval_s=0.001).start()
    _wait_for(lambda: len(s.samples) >= 5)
    samples = s.stop()
    assert len(samples) >= 6  # at least 5 from the thread + the final reading at stop()
    assert [x.sm_util for x in samples] == list(range(len(samples)))
    assert all(b.t_s >= a.t_s for a, b in itertools.pairwise(samples))
    assert all(x.mem_util == 2 * x.sm_util and x.power_w is None for x in samples)
    n = len(samples)
    assert len(s.stop()) == n  # stopping twice changes nothing


def test_sampler_survives_a_failing_reading():
    calls = itertools.count()

    def read():
        if next(calls) % 2 == 0:
            raise RuntimeError("driver busy")
        return {"temp_c": 50.0}

    s = Sampler(read, interval_s=0.001).start()
    _wait_for(lambda: len(s.samples) >= 3)
    s.stop()
    assert len(s.samples) >= 3 and all(x.temp_c == 50.0 for x in s.samples)
    assert s.errors == ["RuntimeError: driver busy"]  # noted once


def test_sampler_rejects_bad_interval():
    with pytest.raises(ValueError):
        Sampler(dict, interval_s=0)


def test_summary_against_targets():
    util = [90.0, 80.0, 50.0, None]
    mem = [70.0, 30.0, 65.0, 10.0]
    res = MonitorResult(True, "test", samples=[
        Sample(t_s=i * 0.1, sm_util=u, mem_util=m) for i, (u, m) in enumerate(zip(util, mem, strict=True))])
    s = res.summary()
    assert s["samples"] == 4
    assert s["sm_util"] == {"mean": pytest.approx(220 / 3), "max": 90.0, "min": 50.0}
    assert s["sm_util_meets_target"] == pytest.approx(2 / 3)  # 90, 80 ≥ 75 % (the None is skipped)
    assert s["mem_util_meets_target"] == pytest.approx(2 / 4)  # 70, 65 ≥ 60 %
    assert res.series("sm_util") == [(0.0, 90.0), (0.1, 80.0), (0.2, 50.0)]
    assert "power_w" not in s
    with pytest.raises(KeyError):
        res.series("fan_speed")
    assert (UTIL_TARGET, BANDWIDTH_TARGET) == (0.75, 0.60)


def test_metrics_are_sample_fields():
    fields = set(Sample.__dataclass_fields__)
    assert set(monitor.METRICS) <= fields


@pytest.mark.gpu
@pytest.mark.skipif(not NVML_OK, reason="needs a GPU that NVML can read")
def test_nvml_samples_a_real_gpu():
    with GpuMonitor(interval_s=0.01) as mon:
        time.sleep(0.2)
    r = mon.result
    assert r.available and r.samples
    assert all(0 <= x.sm_util <= 100 and x.sm_clock_mhz > 0 for x in r.samples)


def test_nvml_index_is_found_by_pci_address():
    # Under CUDA_VISIBLE_DEVICES=2,3 torch's cuda:0 is NVML's GPU 2: matched by (domain, bus, device).
    from gemmlib.measure.monitor import index_by_pci
    nvml = [(0, 0x18, 0), (0, 0x2A, 0), (0, 0x3B, 0), (0, 0x5D, 0)]
    assert index_by_pci((0, 0x3B, 0), nvml) == 2
    assert index_by_pci((1, 0x3B, 0), nvml) is None  # another PCI domain
    assert index_by_pci((0, 0x99, 0), []) is None


def test_nvml_index_without_cuda_falls_back_to_zero():
    import torch

    from gemmlib.measure.monitor import nvml_index_for_torch_device
    if torch.cuda.is_available():
        pytest.skip("checks the fallback on a machine without CUDA")
    assert nvml_index_for_torch_device() == 0 and nvml_index_for_torch_device(1) == 1
