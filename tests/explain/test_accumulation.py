"""Accumulator precision: sequential sums in fp16/fp32/fp64 against an exact reference."""

import math

import numpy as np
import pytest

from gemmlib.core.errors import InputError
from gemmlib.explain import accumulation as acc


def test_sequential_sum_rounds_after_every_addition():
    # 2048 + 1 is not representable in fp16 (spacing 2 there): the sum stalls at 2048
    prods = np.array([2048.0] + [1.0] * 10)
    assert acc.sequential_sum(prods, "fp16")[-1] == 2048.0
    assert acc.sequential_sum(prods, "fp32")[-1] == 2058.0
    assert acc.sequential_sum(prods, "fp64")[-1] == 2058.0


def test_fp32_stalls_where_fp16_already_has():
    prods = np.array([2.0**24] + [1.0] * 4)
    assert acc.sequential_sum(prods, "fp32")[-1] == 2.0**24
    assert acc.sequential_sum(prods, "fp64")[-1] == 2.0**24 + 4


def test_round_operands():
    x = np.array([1 + 2**-12, 1 + 2**-9, 3.14159265])
    assert acc.round_operands(x, "fp16").tolist() == [1.0, 1 + 2**-9 + 0.0, float(np.float16(3.14159265))]
    bf = acc.round_operands(np.array([1 + 2**-8, 1 + 3 * 2**-9, -1.0]), "bf16")
    assert bf.tolist() == [1.0, 1 + 2**-7, -1.0]  # ties to even, then round up
    assert acc.round_operands(np.array([0.1]), "fp32")[0] == float(np.float32(0.1))
    with pytest.raises(InputError):
        acc.round_operands(np.ones(2), "fp4")


def test_dot_and_matmul_against_float64():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((5, 300)), rng.standard_normal((300, 4))
    exact = acc.round_operands(a, "fp16") @ acc.round_operands(b, "fp16")
    got64 = acc.matmul(a, b, "fp64")
    got32 = acc.matmul(a, b, "fp32")
    got16 = acc.matmul(a, b, "fp16")
    np.testing.assert_allclose(got64, exact, rtol=1e-12, atol=1e-12)
    err32, err16 = np.max(np.abs(got32 - exact)), np.max(np.abs(got16 - exact))
    assert err32 < 1e-4 < err16
    assert acc.dot(a[0], b[:, 0], "fp64") == pytest.approx(exact[0, 0], abs=1e-12)
    with pytest.raises(InputError):
        acc.dot(np.ones(3), np.ones(4))
    with pytest.raises(InputError):
        acc.matmul(np.ones((2, 3)), np.ones((2, 3)))


def test_study_error_grows_with_k_and_fp16_is_far_worse():
    s = acc.accumulation_study(ks=(16, 256, 4096, 16384), rows=8, seed=1, distribution="uniform")
    f16 = [s.at(k, "fp16").median_rel_error for k in s.ks]
    f32 = [s.at(k, "fp32").median_rel_error for k in s.ks]
    assert f16 == sorted(f16) and f16[-1] > 100 * f16[0]
    assert all(a > 100 * b for a, b in zip(f16, f32, strict=True))
    # uniform [0,1): the exact sum is about K/4, and fp16 stalls near 2048-4096 (spacing 2-4)
    assert s.at(16384, "fp16").exact_magnitude == pytest.approx(16384 / 4, rel=0.1)
    assert s.at(16384, "fp16").median_rel_error > 0.3
    assert s.at(16384, "fp32").median_rel_error < 1e-4
    assert all(s.at(k, "fp64").median_rel_error <= 1e-12 for k in s.ks)
    assert len(s.records()) == 3 * 4
    assert "fp32" in acc.explain(s)


def test_study_normal_and_overflow_flag():
    s = acc.accumulation_study(ks=(64, 1024), rows=4, distribution="normal", operands="bf16")
    assert not any(p.overflow for p in s.points)
    assert s.at(1024, "fp32").median_rel_error < s.at(1024, "fp16").median_rel_error


def test_study_bad_input():
    for kw in ({"ks": (0,)}, {"ks": (acc.MAX_K * 2,)}, {"rows": 0}, {"distribution": "cauchy"}):
        with pytest.raises(InputError):
            acc.accumulation_study(**kw)


def test_unit_roundoff():
    assert acc.unit_roundoff("fp16") == 2.0**-11
    assert acc.unit_roundoff("fp32") == 2.0**-24
    assert math.isclose(acc.unit_roundoff("fp64"), 2.0**-53)


def test_matmul_errors_small_integers_are_exact_and_long_sums_are_not():
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b = np.array([[7.0, 8.0], [9.0, 10.0], [11.0, 12.0]])
    rows = acc.matmul_errors(a, b)
    assert [r["accumulator"] for r in rows] == ["fp16", "fp32", "fp64"]
    assert all(r["max |error|"] == 0 and r["operand rounding moved D by"] == 0 for r in rows)
    rng = np.random.default_rng(0)
    a, b = rng.random((2, 4096)), rng.random((4096, 2))
    rows = {r["accumulator"]: r for r in acc.matmul_errors(a, b)}
    assert rows["fp16"]["max |error|"] > 10 > 1e-2 > rows["fp32"]["max |error|"]
    assert rows["fp64"]["max |error|"] == 0
    assert rows["fp16"]["operand rounding moved D by"] > 0
