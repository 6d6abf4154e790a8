"""Tiled GEMMs equal float64 references on odd sizes; the traffic model counts reads exactly."""

import math

import numpy as np
import pytest
import torch

from gemmlib.core.errors import InputError
from gemmlib.core.flops import gemm_bytes
from gemmlib.explain.reference import load_counts
from gemmlib.explain.tiling import numpy_blocked, tile_count, tile_traffic, traffic_table
from gemmlib.measure.tiling import python_tiled

ODD = [(1, 1, 1), (7, 5, 3), (37, 29, 45), (65, 33, 17)]


def _rel(x, ref) -> float:
    x = np.asarray(x, dtype=np.float64)
    return float(np.abs(x - ref).max() / np.abs(ref).max())


@pytest.mark.parametrize("m,n,k", ODD)
@pytest.mark.parametrize("tile", [1, 4, 16, 64])
def test_python_tiled_fp64_equals_reference(m, n, k, tile):
    g = torch.Generator().manual_seed(m * 100 + n + k)
    a = torch.randn(m, k, generator=g, dtype=torch.float64)
    b = torch.randn(k, n, generator=g, dtype=torch.float64)
    ref = (a @ b).numpy()
    d = python_tiled(a, b, tile)
    assert d.shape == (m, n) and d.dtype == torch.float64
    assert _rel(d.numpy(), ref) < 1e-12


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.float16, 3e-3), (torch.bfloat16, 2e-2)])
def test_python_tiled_low_precision(dtype, tol):
    g = torch.Generator().manual_seed(1)
    a = torch.randn(45, 77, generator=g).to(dtype)
    b = torch.randn(77, 31, generator=g).to(dtype)
    ref = a.double() @ b.double()
    d = python_tiled(a, b, 16)
    assert d.dtype == dtype
    err = _rel(d.double().numpy(), ref.numpy())
    assert 0 < err < tol


@pytest.mark.parametrize("m,n,k", ODD)
@pytest.mark.parametrize("tile", [1, 3, 32])
def test_numpy_blocked_equals_reference(m, n, k, tile):
    rng = np.random.default_rng(m + 7 * n + 13 * k)
    a = rng.standard_normal((m, k))
    b = rng.standard_normal((k, n))
    d = numpy_blocked(a, b, tile)
    assert d.dtype == np.float64
    assert _rel(d, a @ b) < 1e-12


@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-5), (np.float16, 3e-3)])
def test_numpy_blocked_low_precision(dtype, tol):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((33, 70)).astype(dtype)
    b = rng.standard_normal((70, 19)).astype(dtype)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    d = numpy_blocked(a, b, 16)
    assert d.dtype == dtype
    assert 0 < _rel(d, ref) < tol


def test_bad_inputs_are_input_errors():
    a = np.ones((3, 4))
    with pytest.raises(InputError, match="inner dimensions"):
        numpy_blocked(a, np.ones((5, 2)), 2)
    with pytest.raises(InputError, match="at least 1"):
        numpy_blocked(a, np.ones((4, 2)), 0)
    with pytest.raises(InputError, match="whole number"):
        python_tiled(torch.ones(3, 4), torch.ones(4, 2), 2.5)
    with pytest.raises(InputError):
        tile_traffic(0, 4, 4, 2)


def test_tile_count():
    assert tile_count(100, 64, 65, 32) == 4 * 2 * 3


@pytest.mark.parametrize("m,n,k,t", [(1000, 700, 300, 64), (4096, 4096, 4096, 128), (33, 65, 17, 16)])
def test_traffic_model(m, n, k, t):
    tr = tile_traffic(m, n, k, t, dtype="fp16")
    assert tr.a_reads == math.ceil(n / t) and tr.b_reads == math.ceil(m / t)
    assert tr.a_bytes == m * k * 2 * math.ceil(n / t)
    assert tr.b_bytes == k * n * 2 * math.ceil(m / t)
    assert tr.d_bytes == m * n * 2
    assert tr.min_bytes == gemm_bytes(m, n, k, "fp16")
    assert tr.total_bytes >= tr.min_bytes
    assert tr.intensity == pytest.approx(2 * m * n * k / tr.total_bytes)


def test_traffic_agrees_with_reference_trace_counts():
    # The explainer's closed-form element loads for the tiled order are the same model.
    m, n, k, t = 12, 10, 9, 4
    lc = load_counts(m, n, k, (t, t, t))["tiled"]
    tr = tile_traffic(m, n, k, t, dtype="fp32")
    assert tr.a_bytes == lc["loads_a"] * 4 and tr.b_bytes == lc["loads_b"] * 4


def test_bigger_tiles_move_less():
    rows = traffic_table(2048, 2048, 2048, [16, 32, 64, 128, 256], "bf16")
    totals = [r["total_bytes"] for r in rows]
    assert totals == sorted(totals, reverse=True)
    assert rows[-1]["intensity"] > rows[0]["intensity"]
    # a tile covering the whole matrix reads everything once
    whole = tile_traffic(64, 64, 64, 64, dtype="fp32")
    assert whole.overhead == 1.0


def test_accumulate_in_dram_counts_d_per_k_tile():
    tr = tile_traffic(64, 64, 100, 32, dtype="fp32", accumulate_in_dram=True)
    assert tr.d_passes == 4
    assert tr.d_bytes == 64 * 64 * 4 * 7
