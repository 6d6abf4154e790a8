"""The calibration store: validated on read, merged per dtype on save, interpolated in log–log."""

import json
import math

import pytest

from gemmlib.core import calibration as cs
from gemmlib.core.calibration import Calibration, GemmPoint, OtherPoint


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path))


def _lin(m, n=64, k=32, seconds=None, dtype="fp32"):
    t = seconds if seconds is not None else 1e-6 * m  # a time proportional to M
    return GemmPoint("linear", "q_proj", dtype, m, n, k, 1, t, 2.0 * m * n * k, 4.0 * (m * k + n * k + m * n))


def _cal(dtype="fp32", model="toy", points=None, other=None):
    return Calibration("cpu", "Test CPU", model, (dtype,), tuple(points or [_lin(1, dtype=dtype),
                                                                            _lin(4, dtype=dtype)]),
                       tuple(other or [OtherPoint("norms", dtype, "prefill", 8, 64, 2e-6, 4096.0)]))


def test_round_trip_through_the_file_next_to_the_ceilings(tmp_path):
    from gemmlib.core.ceilings import ceilings_path

    c = _cal()
    path = cs.save_calibration(c)
    assert path == ceilings_path().parent / "calibration.json" and path.parent == tmp_path
    back = cs.find_calibration("cpu", "Test CPU")
    assert back is not None and back.gemm == c.gemm and back.other == c.other
    assert cs.find_by_name("test cpu (CALIBRATED)") is not None
    assert cs.calibrated_names() == ["Test CPU (calibrated)"]


@pytest.mark.parametrize("damage, reason", [
    (lambda d: d["gemm"][0].update(seconds=-1), "positive"),
    (lambda d: d["gemm"][0].update(seconds=float("nan")), "positive"),
    (lambda d: d["gemm"][0].update(family="conv"), "unknown GEMM family"),
    (lambda d: d["gemm"][0].update(m=1.5), "whole number"),
    (lambda d: d.pop("gemm"), "missing"),
    (lambda d: d.update(dtypes=["fp42"]), "fp42"),
    (lambda d: d.update(dtypes=["fp32", "bf16"]), "no GEMM points"),
    (lambda d: d["other"][0].update(phase="training"), "prefill or decode"),
    (lambda d: d.update(version=99), "format"),
])
def test_a_malformed_entry_is_dropped_with_its_reason(damage, reason):
    good, bad = _cal(), _cal()
    bad.device_name = "Broken CPU"
    cs.save_calibration(good)
    cs.save_calibration(bad)
    data = json.loads(cs.calibration_path().read_text())
    damage(data["cpu:Broken CPU"])
    cs.calibration_path().write_text(json.dumps(data))
    found, problems = cs.load_calibrations()
    assert list(found) == ["cpu:Test CPU"]  # the good entry survives, the bad one is never half used
    assert len(problems) == 1 and "Broken CPU" in problems[0] and reason in problems[0]


def test_an_unreadable_file_is_no_calibration():
    cs.calibration_path().parent.mkdir(parents=True, exist_ok=True)
    cs.calibration_path().write_text("{not json")
    assert cs.load_calibrations() == ({}, [])


def test_saving_another_dtype_keeps_the_first():
    cs.save_calibration(_cal("fp32"))
    cs.save_calibration(_cal("bf16"))
    c = cs.find_calibration("cpu", "Test CPU")
    assert set(c.dtypes) == {"fp32", "bf16"} and {p.dtype for p in c.gemm} == {"fp32", "bf16"}
    cs.save_calibration(_cal("bf16", model="another model"))  # another model replaces everything
    assert cs.find_calibration("cpu", "Test CPU").dtypes == ("bf16",)


def test_linear_interpolation_is_log_log_and_scales_to_other_shapes():
    # seconds = 1e-6·M^0.5 measured at M = 1, 16: a power law, so log–log interpolation is exact
    c = _cal(points=[_lin(1, seconds=1e-6), _lin(16, seconds=4e-6)])
    t, note = c.gemm_seconds("linear", "fp32", 4, 64, 32)
    assert t == pytest.approx(2e-6) and note == ""
    t, _ = c.gemm_seconds("linear", "fp32", 64, 64, 32)  # past the sweep: grows with M from the last point
    assert t == pytest.approx(4e-6 * 64 / 16)
    t, note = c.gemm_seconds("linear", "fp32", 4, 128, 32)  # another N: scaled by N·K
    assert t == pytest.approx(4e-6) and "scaled" in note
    assert c.gemm_seconds("linear", "bf16", 4, 64, 32)[0] is None
    assert c.gemm_seconds("attn_scores", "fp32", 4, 64, 32)[0] is None


def test_attention_interpolation_separates_decode_from_prefill():
    pts = [GemmPoint("attn_scores", "s", "fp32", 1, keys, 8, 4, 4e-6 * keys / 64, 1.0, 1.0) for keys in (64, 256)]
    pts += [GemmPoint("attn_scores", "s", "fp32", q, q, 8, 4, 4e-6 * (q / 64) ** 2 * 10, 1.0, 1.0) for q in (64, 256)]
    c = _cal(points=[_lin(1)] + pts)
    t, _ = c.gemm_seconds("attn_scores", "fp32", 1, 128, 8)  # a decode step: one query, 128 keys
    assert t == pytest.approx(1e-6 * 128 / 64)  # per product = per call / 4 groups
    t, _ = c.gemm_seconds("attn_scores", "fp32", 128, 128, 8)  # prefill, interpolated over queries × keys
    assert t == pytest.approx(1e-6 * 10 * 4)
    t, note = c.gemm_seconds("attn_scores", "fp32", 1, 128, 16)  # twice the head size
    assert t == pytest.approx(2 * 1e-6 * 128 / 64) and "head size" in note


def test_roof_and_other_bandwidth():
    other = [OtherPoint("norms", "fp32", "prefill", 8, 64, 1e-6, 1e3), OtherPoint("norms", "fp32", "decode", 1, 64, 1e-6,
                                                                                 1e5)]
    c = _cal(points=[_lin(1, seconds=1e-6), _lin(16, seconds=2e-6)], other=other)
    peaks = c.peaks()
    assert peaks["fp32"] == pytest.approx(2 * 16 * 64 * 32 / 2e-6)  # the best point's FLOP/s
    assert c.bandwidth() == pytest.approx(max(1e5 / 1e-6, 4.0 * (16 * 32 + 64 * 32 + 16 * 64) / 2e-6))
    bw, _ = c.other_bandwidth("norms", "fp32", 1e4)
    assert bw == pytest.approx(math.sqrt(1e9 * 1e11))  # halfway in log–log between 1e9 and 1e11 B/s
    hw = c.hardware()
    assert hw.name == "Test CPU (calibrated)" and hw.peak("fp32") == peaks["fp32"] and hw.bandwidth == c.bandwidth()
    assert c.other_bandwidth("rotary", "fp32", 10)[0] is None


def test_a_stall_at_a_small_shape_does_not_make_it_slower_than_a_larger_one():
    # M = 2 stalled (a thread waited for a core): more work never takes less time, so it is lowered to M = 4's
    c = _cal(points=[_lin(1, seconds=1e-6), _lin(2, seconds=5e-3), _lin(4, seconds=2e-6), _lin(8, seconds=4e-6)])
    t, _ = c.gemm_seconds("linear", "fp32", 2, 64, 32)
    assert t == pytest.approx(2e-6)
    assert c.gemm_seconds("linear", "fp32", 8, 64, 32)[0] == pytest.approx(4e-6)  # larger shapes untouched
