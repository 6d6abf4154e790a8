"""The CUDA-only decisions of the harness, checked on a CPU against a simulated device (host and device clocks);
no GPU result is claimed here: these check the arithmetic a GPU run relies on."""

from __future__ import annotations

import pytest
import torch

from gemmlib.measure import harness


class LazyLoadingDevice:
    """torch.cuda as CudaOps.spin sees it: ``_sleep(cycles)`` spins ``cycles`` at ``hz``; the first launch of the
    spin kernel first loads its module on the host (CUDA's lazy loading), ``load_s`` while the device waits."""

    def __init__(self, hz=1.98e9, load_s=2e-3, launch_s=5e-6):
        self.hz, self.load_s, self.launch_s = hz, load_s, launch_s
        self.host = 0.0
        self.free = 0.0
        self.loaded = False
        self.sleeps: list[int] = []
        dev = self

        class Event:
            def __init__(self, enable_timing=False):
                self.t = None

            def record(self):
                dev.host += 1e-6
                self.t = max(dev.free, dev.host)
                dev.free = self.t

            def elapsed_time(self, end):
                return (end.t - self.t) * 1e3  # ms, as torch.cuda.Event.elapsed_time

        self.Event = Event

    def _sleep(self, cycles):
        if not self.loaded:
            self.host += self.load_s
            self.loaded = True
        self.host += self.launch_s
        self.sleeps.append(int(cycles))
        start = max(self.free, self.host)
        self.free = start + cycles / self.hz

    def synchronize(self):
        self.host = max(self.host, self.free)


def test_a_spin_lasts_what_was_asked_though_the_first_launch_loads_the_kernel(monkeypatch):
    dev = LazyLoadingDevice()
    for name in ("Event", "_sleep", "synchronize"):
        monkeypatch.setattr(torch.cuda, name, getattr(dev, name))
    ops = harness.CudaOps()
    ops.spin(0.01)
    # the spin asked for is 10 ms at the device's real clock; timing the loading launch made it 2.5 / 0.5 = 5 times
    # too short (the module's 2 ms load inside a 0.5 ms measurement)
    assert dev.sleeps[-1] / dev.hz == pytest.approx(0.01, rel=0.01)
    ops.spin(0.002)  # the rate is kept: no second measurement
    assert dev.sleeps[-1] / dev.hz == pytest.approx(0.002, rel=0.01)


class _DoBenchWithItsOwnEstimate:
    """triton.testing.do_bench's count of timed calls, ``max(1, int(rep / estimate))``, from an estimate of its
    own that came out ``ratio`` times the harness's (the GPU's clocks had risen in between); each call 1 ms."""

    def __init__(self, ratio):
        self.ratio = ratio

    def do_bench(self, fn, warmup, rep, return_mode):
        assert return_mode == "all"
        return [1.0] * max(1, int(rep / (self.ratio * self.est_ms)))


def test_the_do_bench_path_keeps_max_reps_when_do_bench_estimates_lower():
    from tests.measure.test_harness import FakeGpu, _kernel

    gpu = FakeGpu(flush_s=0.0)
    call = _kernel(gpu, 1e-3)
    tt = _DoBenchWithItsOwnEstimate(0.9)
    tt.est_ms = 1.0 + 10e-3  # the harness's own estimate: the 1 ms call and its host launch
    t = harness._time_cuda(call, [()], call, 1, 0.5, 20, False, True, ops=gpu, testing=tt)
    assert t.method == "triton.do_bench" and t.reps == 20 and t.median_s == pytest.approx(1e-3)
