"""Measured ceilings are bounded by what the device can physically do (issue 26 item 9): a GPU by its
catalogue row × a margin, a CPU by threads × clock × SIMD lanes × FMA units from /proc/cpuinfo; each
entry says who measured it and when; a machine policy can make the shared ceilings read-only."""

import json
import logging
import os

import pytest

from gemmlib.core import ceilings as C
from gemmlib.core import policy
from gemmlib.core.hardware import CATALOGUE


@pytest.fixture(autouse=True)
def _own_store(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("GEMM_POLICY_FILE", raising=False)
    monkeypatch.setattr(policy, "MACHINE_POLICY", tmp_path / "no-etc" / "policy.toml")
    C.clear_ceilings()
    yield
    C.clear_ceilings()


def _plant(entries: dict) -> None:
    """Write the cache's ceilings.json by hand, mode 0644, as a forger with the server's user would."""
    p = C.ceilings_path()
    p.write_text(json.dumps(entries))
    os.chmod(p, 0o644)


def _entry(device, name, peaks, bandwidth=None, **kw) -> dict:
    return {"device": device, "device_name": name, "peaks": peaks, "bandwidth": bandwidth, **kw}


def test_a_forged_50_pflops_cpu_is_dropped_and_an_honest_one_kept(caplog):
    _plant({"cpu:FAST": _entry("cpu", "FAST", {"fp32": 5e16}, 1e10),
            "cpu:SLOW": _entry("cpu", "SLOW", {"fp32": 2e10}, 1e10)})
    with caplog.at_level(logging.WARNING, logger="gemmlib"):
        got = C.all_ceilings()
    assert list(got) == ["cpu:SLOW"]
    assert any("cpu:FAST" in r.getMessage() and "threads" in r.getMessage() for r in caplog.records)


def test_a_gpu_is_bounded_by_its_datasheet_row():
    h200 = CATALOGUE["H200 SXM"]
    _plant({"a": _entry("cuda", "NVIDIA H200", {"bf16": 1.3 * h200.peak("bf16")}, 4.3e12),  # 1.3 × the datasheet
            "b": _entry("cuda", "NVIDIA H100 80GB HBM3", {"bf16": 7.9e14}, 1.01 * 3 * CATALOGUE["H100 SXM"].bandwidth),
            "c": _entry("cuda", "NVIDIA H100 PCIe", {"bf16": 0.8 * CATALOGUE["H100 PCIe"].peak("bf16")}, 1.8e12)})
    assert list(C.all_ceilings()) == ["cuda:NVIDIA H100 PCIe"]  # bf16 too fast; copy 3× the HBM's


def test_bounds_from_the_catalogue_and_for_boards_without_a_row():
    bound, why = C.plausible_bound("cuda", "NVIDIA H200", "bf16")
    assert bound == pytest.approx(C.DATASHEET_MARGIN * CATALOGUE["H200 SXM"].peak("bf16")) and "H200 SXM" in why
    fp64, _ = C.plausible_bound("cuda", "NVIDIA H200", "fp64")  # not in the row: the next faster dtype's
    assert fp64 == pytest.approx(C.DATASHEET_MARGIN * CATALOGUE["H200 SXM"].peak("fp32"))
    t4, why = C.plausible_bound("cuda", "Tesla T4", "fp16")
    best = max(h.peak("fp16") or 0 for h in CATALOGUE.values() if h.kind == "gpu")
    assert t4 == pytest.approx(C.UNKNOWN_GPU_MARGIN * best) and "fastest" in why


@pytest.mark.parametrize("flags, machine, fp32, bf16, int8", [
    ({"sse2", "avx", "avx2", "fma"}, "x86_64", 32, 64, 128),  # 8 lanes × FMA (2) × 2 units
    ({"sse2", "avx512f", "avx512_bf16"}, "x86_64", 64, 128, 256),
    ({"sse2", "avx512f", "amx_bf16", "amx_int8"}, "x86_64", 64, 1024, 2048),  # AMX tiles
    ({"sse2"}, "x86_64", 16, 32, 64),
    ({"fp", "asimd"}, "aarch64", 256, 512, 1024),  # Arm: generous (Apple's matrix units)
])
def test_cpu_flops_per_cycle_from_its_flags(flags, machine, fp32, bf16, int8):
    per = C.cpu_flops_per_cycle(frozenset(flags), machine)
    assert (per["fp32"], per["bf16"], per["int8"]) == (fp32, bf16, int8)


def test_the_cpu_bound_is_threads_times_clock_times_lanes(monkeypatch):
    monkeypatch.setattr(C.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(C, "_cpu_clock_hz", lambda: 3.0e9)
    monkeypatch.setattr(C, "cpu_flags", lambda: (frozenset({"sse2", "avx", "avx2", "fma"}), "x86_64"))
    bound, why = C.plausible_bound("cpu", "any", "fp32")
    assert bound == pytest.approx(4 * 3.0e9 * 32 * C.CPU_MARGIN) and "4 threads" in why
    copy, _ = C.plausible_bound("cpu", "any", "copy")
    assert copy == pytest.approx(4 * 3.0e9 * C.CPU_BYTES_PER_CYCLE * C.CPU_MARGIN)


def test_the_cpu_bound_is_above_what_this_cpu_really_does():
    """Independent of the bound's arithmetic: torch's own fp32 matmul on this machine stays below it."""
    torch = pytest.importorskip("torch")
    from torch.utils import benchmark

    a, b = torch.randn(512, 512), torch.randn(512, 512)
    t = benchmark.Timer("a @ b", globals={"a": a, "b": b}).blocked_autorange(min_run_time=0.2)
    flops = 2 * 512**3 / min(t.times)
    bound, _ = C.plausible_bound("cpu", "this CPU", "fp32")
    assert flops < bound / C.CPU_MARGIN, (flops, bound)


def test_an_implausible_measurement_is_not_kept():
    assert C.save_ceilings(C.Ceilings("cpu", "this CPU", {"fp32": 5e16}, 1e10)) is None
    assert C.all_ceilings() == {} and not C.ceilings_path().exists()


def test_who_measured_and_when_is_recorded():
    c = C.Ceilings("cpu", "Test CPU", {"fp32": 1e10}, 1e9, measured_at=86400)
    assert f"(uid {os.getuid()}) on " in c.measured_by
    assert C.save_ceilings(c) is not None
    C._ceilings.clear()
    back = C.all_ceilings()["cpu:Test CPU"]
    assert back.measured_by == c.measured_by
    assert c.measured_by in back.hardware().source and "1970-01-02 00:00 UTC" in back.hardware().source
    old = {k: v for k, v in c.to_dict().items() if k != "measured_by"}  # a file from before the field
    assert C.Ceilings.from_dict(old).measured_by == ""


def test_the_policy_makes_the_shared_ceilings_read_only(tmp_path, monkeypatch, caplog):
    assert C.save_ceilings(C.Ceilings("cpu", "Test CPU", {"fp32": 1e10}, 1e9)) is not None  # measured first
    before = C.ceilings_path().read_bytes()
    pol = tmp_path / "policy.toml"
    pol.write_text("GEMM_CEILINGS_READ_ONLY = true\n")
    os.chmod(pol, 0o644)
    monkeypatch.setenv("GEMM_POLICY_FILE", str(pol))
    C._ceilings.clear()
    with caplog.at_level(logging.WARNING, logger="gemmlib"):
        assert C.save_ceilings(C.Ceilings("cpu", "Other CPU", {"fp32": 2e10}, 1e9)) is None
    assert any("read-only" in r.getMessage() for r in caplog.records)
    assert C.ceilings_path().read_bytes() == before  # the file is untouched
    assert list(C.all_ceilings()) == ["cpu:Test CPU"]  # and still read; nothing kept for other visitors
