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
import types

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


def test_a_field_the_driver_refuses_is_none_and_the_others_are_kept():
    """Under MIG (or on some vGPUs) NVML refuses utilization with NVMLError_NotSupported: that field is None and named
    once; the clocks, power, temperature and memory of the same reading are kept (once the whole reading was lost)."""
    class NVMLError(Exception):
        pass

    class NotSupported(NVMLError):
        pass

    def refuse(handle):
        raise NotSupported("Not Supported")

    fake = types.SimpleNamespace(NVMLError=NVMLError, NVML_CLOCK_SM=1, NVML_CLOCK_MEM=2, NVML_TEMPERATURE_GPU=0,
                                 nvmlDeviceGetUtilizationRates=refuse,
                                 nvmlDeviceGetClockInfo=lambda h, which: 1980 if which == 1 else 2619,
                                 nvmlDeviceGetPowerUsage=lambda h: 650_000, nvmlDeviceGetTemperature=lambda h, s: 61,
                                 nvmlDeviceGetMemoryInfo=lambda h: types.SimpleNamespace(used=3 * 2**30))
    refused: list[str] = []
    read = monitor._nvml_reader(fake, object(), refused)
    for _ in range(3):
        got = read()
    assert got == {"sm_util": None, "mem_util": None, "sm_clock_mhz": 1980.0, "mem_clock_mhz": 2619.0,
                   "power_w": 650.0, "temp_c": 61.0, "mem_used_gib": 3.0}
    assert refused == ["sm_util: NotSupported: Not Supported", "mem_util: NotSupported: Not Supported"]
    s = Sampler(read, interval_s=0.001).start()
    _wait_for(lambda: len(s.samples) >= 2)
    s.stop()
    assert s.samples[0].sm_clock_mhz == 1980.0 and s.samples[0].sm_util is None and s.errors == []


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


# ----------------------------------------------------------------------------- NVML readings stood in for
class FakeNvml:
    """The pynvml calls the monitor makes, answering scripted readings (no GPU, no driver)."""

    NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_TEMPERATURE_GPU = 1, 2, 0
    NVML_PERF_POLICY_POWER, NVML_PERF_POLICY_THERMAL = 0, 1

    class NVMLError(Exception):
        pass

    def __init__(self, **reading):
        self.r = {"sm": 1980, "mem": 2619, "sm_max": 1980, "mem_max": 2619, "power_mw": 650_000,
                  "limit_mw": 700_000, "temp": 60, "pstate": 0, "reasons": 0, "power_viol": 0, "thermal_viol": 0,
                  "energy": 1_000_000, "persistence": 1, "util": 99, **reading}
        self.reads = []  # what the utilization reader saw (a hook for the tests)

    def nvmlInit(self):
        pass

    def nvmlShutdown(self):
        pass

    def nvmlDeviceGetCount(self):
        return 1

    def nvmlDeviceGetHandleByIndex(self, i):
        return ("gpu", i)

    def nvmlDeviceGetName(self, h):
        return b"NVIDIA H200"

    def nvmlDeviceGetClockInfo(self, h, which):
        return self.r["sm"] if which == self.NVML_CLOCK_SM else self.r["mem"]

    def nvmlDeviceGetMaxClockInfo(self, h, which):
        return self.r["sm_max"] if which == self.NVML_CLOCK_SM else self.r["mem_max"]

    def nvmlDeviceGetPowerUsage(self, h):
        return self.r["power_mw"]

    def nvmlDeviceGetEnforcedPowerLimit(self, h):
        return self.r["limit_mw"]

    def nvmlDeviceGetTemperature(self, h, which):
        return self.r["temp"]

    def nvmlDeviceGetPerformanceState(self, h):
        return self.r["pstate"]

    def nvmlDeviceGetCurrentClocksEventReasons(self, h):
        return self.r["reasons"]

    def nvmlDeviceGetViolationStatus(self, h, policy):
        return types.SimpleNamespace(violationTime=self.r["power_viol" if policy == 0 else "thermal_viol"])

    def nvmlDeviceGetTotalEnergyConsumption(self, h):
        return self.r["energy"]

    def nvmlDeviceGetPersistenceMode(self, h):
        return self.r["persistence"]

    def nvmlSystemGetDriverVersion(self):
        return "570.86.15"

    def nvmlSystemGetCudaDriverVersion(self):
        return 12080

    def nvmlDeviceGetUtilizationRates(self, h):
        self.reads.append(self.r.get("calls", 0))
        return types.SimpleNamespace(gpu=self.r["util"], memory=50)

    def nvmlDeviceGetMemoryInfo(self, h):
        return types.SimpleNamespace(used=2**30)


def test_a_deferred_monitor_samples_the_timed_calls_only(monkeypatch):
    from gemmlib.measure import harness

    nv = FakeNvml()
    monkeypatch.setitem(sys.modules, "pynvml", nv)

    def call():  # the warm-up of an idle GPU would read 0 %; every call here counts itself
        nv.r["calls"] = nv.r.get("calls", 0) + 1
        time.sleep(0.004)

    class Window:  # the monitor, noting how many calls had run when the harness opened it
        def __init__(self, mon):
            self.mon, self.calls_at_start = mon, None

        def start(self):
            self.calls_at_start = nv.r.get("calls", 0)
            self.mon.start()

        def stop(self):
            self.mon.stop()

    with GpuMonitor(interval_s=0.001, defer=True) as mon:
        w = Window(mon)
        t = harness.time_callable(call, device="cpu", warmup=3, min_run_time=0.05, window=w)
    assert mon.result.available and mon.result.samples and "timed calls only" in mon.result.reason
    # The harness stops warming up early when one call is slow (a loaded machine): one to three
    # warm-up calls, none of them sampled.
    assert 1 <= w.calls_at_start <= 3
    assert min(nv.reads) >= w.calls_at_start
    assert t.reps >= 3
    nv.reads.clear()
    nv.r["calls"] = 0
    with GpuMonitor(interval_s=0.001) as mon:  # not deferred: sampling starts with the block
        _wait_for(lambda: nv.reads)
        harness.time_callable(call, device="cpu", warmup=3, min_run_time=0.02)
    assert nv.reads[0] == 0


def test_machine_state_reads_every_field_and_says_why_without_nvml(monkeypatch):
    s = monitor.machine_state(pynvml=FakeNvml(reasons=0x4 | 0x1))
    assert s["available"] and s["sm_clock_mhz"] == 1980.0 and s["power_limit_w"] == 700.0
    assert s["clock_reasons"] == ["gpu_idle", "sw_power_cap"] and s["driver"] == "570.86.15"
    assert s["cuda_driver"] == "12.8" and s["persistence_mode"] is True and s["name"] == "NVIDIA H200"

    class Partial(FakeNvml):
        def nvmlDeviceGetViolationStatus(self, h, policy):
            raise self.NVMLError("Not Supported")

    s = monitor.machine_state(pynvml=Partial())
    assert s["available"] and s["power_violation_ns"] is None and s["sm_clock_mhz"] == 1980.0
    monkeypatch.setitem(sys.modules, "pynvml", None)
    s = monitor.machine_state()
    assert s == {"available": False, "reason": monitor.NVML_MISSING}
    assert monitor.clock_flags(s, s) == []


def test_a_run_whose_clocks_dropped_is_flagged():
    before = monitor.machine_state(pynvml=FakeNvml())
    before["t"] = 100.0
    after = monitor.machine_state(pynvml=FakeNvml(sm=1590, reasons=0x4, power_viol=2_500_000_000,
                                                  energy=1_000_000 + 690 * 10_000))  # 690 W for 10 s
    after["t"] = 110.0
    flags = monitor.clock_flags(before, after)
    assert "SM clock dropped from 1980 to 1590 MHz (-20%)" in flags
    assert "power-limited for 2500 ms during the run (NVML violation counter)" in flags
    assert "clocks held back at the end: sw_power_cap" in flags
    assert "average power 690 W at the 700 W limit" in flags
    assert not any("memory clock" in f for f in flags)


def test_a_steady_run_and_an_idle_first_reading_are_not_flagged():
    steady = FakeNvml(sm=1975)
    assert monitor.clock_flags(monitor.machine_state(pynvml=FakeNvml()), monitor.machine_state(pynvml=steady)) == []
    idle = monitor.machine_state(pynvml=FakeNvml(sm=1980, reasons=0x1))  # read before the work started
    busy = monitor.machine_state(pynvml=FakeNvml(sm=1600))
    assert monitor.clock_flags(idle, busy) == []  # idle clocks say nothing about the run
    busy_then_idle = monitor.machine_state(pynvml=FakeNvml(sm=345, reasons=0x1))
    assert monitor.clock_flags(busy, busy_then_idle) == []  # the GPU went idle after the work


def test_machine_record_brackets_a_run():
    readings = iter([monitor.machine_state(pynvml=FakeNvml()), monitor.machine_state(pynvml=FakeNvml(sm=1400))])
    with monitor.MachineRecord(0, read=lambda i: next(readings)) as rec:
        pass
    d = rec.to_dict()
    assert d["before"]["sm_clock_mhz"] == 1980 and d["after"]["sm_clock_mhz"] == 1400 and d["flags"]
    with monitor.MachineRecord(0, enabled=False) as off:
        pass
    assert off.to_dict() == {"before": {}, "after": {}, "flags": []}


@pytest.mark.gpu
@pytest.mark.skipif(not NVML_OK, reason="needs a GPU that NVML can read")
def test_machine_state_of_a_real_gpu():
    s = monitor.machine_state(0)
    assert s["available"] and s["sm_clock_mhz"] > 0 and s["sm_clock_max_mhz"] >= s["sm_clock_mhz"] * 0.5
    assert isinstance(s["clock_reasons"], list) and s["driver"]
    v = monitor.software_versions()
    assert v["torch"] and v["driver"] == s["driver"]
