"""FLOP counting, bytes, intensity, roofline time, wave quantization, and the page's grids.

``gemm_flops`` is checked against ``torch.utils.flop_counter.FlopCounterMode`` on real
torch modules: the convention (2·M·N·K) is exactly what PyTorch counts.
"""

import itertools
import math

import pytest

from gemmlib.core import flops as F
from gemmlib.core.errors import InputError
from gemmlib.core.hardware import get_hardware

SHAPES = [(1, 1, 1), (3, 5, 7), (16, 32, 8), (64, 1, 128), (1, 256, 64), (37, 53, 29)]


def _torch():
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode
    return torch, FlopCounterMode


def _count(fn) -> int:
    _, FlopCounterMode = _torch()
    with FlopCounterMode(display=False) as fc:
        fn()
    return fc.get_total_flops()


@pytest.mark.parametrize("m,n,k", SHAPES)
def test_gemm_flops_equals_flop_counter_on_mm_and_matmul(m, n, k):
    torch, _ = _torch()
    a, b = torch.randn(m, k), torch.randn(k, n)
    assert _count(lambda: torch.mm(a, b)) == F.gemm_flops(m, n, k)
    assert _count(lambda: torch.matmul(a, b)) == F.gemm_flops(m, n, k)
    assert _count(lambda: a @ b) == 2 * m * n * k


@pytest.mark.parametrize("m,n,k", SHAPES)
def test_gemm_flops_equals_flop_counter_on_linear(m, n, k):
    torch, _ = _torch()
    lin = torch.nn.Linear(k, n, bias=False)
    x = torch.randn(m, k)
    with torch.no_grad():
        assert _count(lambda: lin(x)) == F.gemm_flops(m, n, k)
    x3 = torch.randn(2, m, k)  # a batch of sequences: M = 2·m rows
    with torch.no_grad():
        assert _count(lambda: lin(x3)) == F.gemm_flops(2 * m, n, k)


def test_batched_matmul_is_a_sum_of_gemms():
    torch, _ = _torch()
    a, b = torch.randn(4, 6, 5), torch.randn(4, 5, 3)
    assert _count(lambda: torch.bmm(a, b)) == 4 * F.gemm_flops(6, 3, 5)


def test_macs_and_naive_counts():
    assert F.gemm_macs(3, 5, 7) == 105
    c = F.naive_op_counts(2, 2, 3)
    assert (c["multiplications"], c["additions"], c["counted"], c["formula"], c["gap"]) == (12, 8, 20, 24, 4)
    for m, n, k in itertools.product((1, 3), (2, 5), (1, 4, 64)):
        c = F.naive_op_counts(m, n, k)
        assert c["gap"] == m * n
        assert c["relative_gap"] == pytest.approx(1 / (2 * k))


def _literal_count(m, n, k):
    """The article's loop, literally: one mult and one add per (i, j, k), minus M·N adds."""
    mults = adds = 0
    for _i in range(m):
        for _j in range(n):
            for _k in range(k):
                mults += 1
                adds += 1
    return mults, adds - m * n


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (4, 3, 5), (8, 2, 16)])
def test_naive_counts_equal_the_literal_loop(m, n, k):
    c = F.naive_op_counts(m, n, k)
    assert (c["multiplications"], c["additions"]) == _literal_count(m, n, k)


def test_article_check_matches_the_article_output():
    # the article: M, K, N = 128, 256, 64 -> formula 4194304, counted 4186112, error 0.20 %
    c = F.article_count_check()
    assert (c["formula"], c["counted"]) == (4194304, 4186112)
    assert round(c["relative_gap"] * 100, 2) == 0.20
    assert F.article_count_check(128, 256, 64)["relative_gap"] == 1 / 128


def test_epilogue_and_bytes():
    assert F.epilogue_flops(4, 5) == 0
    assert F.epilogue_flops(4, 5, alpha=2.0) == 20
    assert F.epilogue_flops(4, 5, alpha=2.0, beta=1.0) == 60
    assert F.gemm_bytes(2, 3, 4, "fp32") == (8 + 12 + 6) * 4
    assert F.gemm_bytes(2, 3, 4, "bf16", read_c=True) == (8 + 12 + 6 + 6) * 2
    assert F.gemm_bytes(2, 3, 4, "int8", out_dtype="fp32") == 8 + 12 + 24
    assert F.arithmetic_intensity(1024, 1024, 1024, "bf16") == pytest.approx(2 * 1024**3 / (3 * 1024**2 * 2))


@pytest.mark.parametrize("bad", [0, -1, 2.5, "x", True, None, float("nan")])
def test_dims_are_checked(bad):
    with pytest.raises(InputError):
        F.gemm_flops(bad, 2, 2)


def test_whole_floats_and_numpy_ints_are_accepted():
    np = pytest.importorskip("numpy")
    assert F.gemm_flops(2.0, np.int64(3), 4) == 48


def test_roofline_time_compute_and_memory_bound():
    h100 = get_hardware("h100")
    big = F.gemm_time(8192, 8192, 8192, h100, "bf16")
    assert big.bound == "compute"
    assert big.seconds == pytest.approx(2 * 8192**3 / 989.4e12)
    assert big.tflops == pytest.approx(989.4)
    decode = F.gemm_time(1, 4096, 4096, h100, "bf16")
    assert decode.bound == "memory"
    assert decode.seconds == pytest.approx(F.gemm_bytes(1, 4096, 4096, "bf16") / 3.35e12)
    half = F.gemm_time(8192, 8192, 8192, h100, "bf16", efficiency=0.5)
    assert half.seconds == pytest.approx(2 * big.seconds)
    with pytest.raises(InputError):
        F.gemm_time(8, 8, 8, h100, "bf16", efficiency=0)
    with pytest.raises(InputError, match="no fp8"):
        F.gemm_time(8, 8, 8, get_hardware("a100"), "fp8")


def test_wave_quantization():
    w = F.wave_quantization(4096, 4096, 128, 128, 132)
    assert w.tiles == 1024 and w.waves == math.ceil(1024 / 132) == 8
    assert w.tile_efficiency == 1.0
    assert w.wave_efficiency == pytest.approx(1024 / (8 * 132))
    w2 = F.wave_quantization(4096, 4097, 128, 128, 132)  # one column past the tile
    assert w2.tiles == 32 * 33 and w2.tile_efficiency == pytest.approx(4096 * 4097 / (4096 * 33 * 128))
    assert F.wave_quantization(128, 128, 128, 128, 1).efficiency == 1.0
    with pytest.raises(InputError):
        F.wave_quantization(1, 1, 0, 128, 1)


def test_wave_staircase_steps_at_tile_multiples():
    rows = F.wave_staircase(128, 128 * 10, 128 * 13, 128, 128, sms=4, k=64)
    by_n = {r["N"]: r for r in rows}
    assert by_n[1280]["tiles"] == 10 and by_n[1281]["tiles"] == 11
    assert by_n[1280]["waves"] == 3 and by_n[1280]["wave efficiency"] == pytest.approx(10 / 12)
    assert by_n[1536]["efficiency"] == 1.0  # 12 tiles = 3 full waves on 4 SMs
    assert by_n[1537]["waves"] == 4  # one column more: a 13th tile, a whole extra wave
    assert by_n[1537]["efficiency"] == pytest.approx(1537 / (13 * 128) * 13 / 16)
    assert by_n[1537]["launched GFLOPs"] == pytest.approx(4 / 3 * by_n[1536]["launched GFLOPs"])
    assert by_n[1536]["useful GFLOPs"] == by_n[1536]["launched GFLOPs"]
    with pytest.raises(InputError):
        F.wave_staircase(128, 10, 5, 128, 128, 4)
    with pytest.raises(InputError):
        F.wave_staircase(128, 1, 10**6, 128, 128, 4)


def test_metric_grid_and_ranges():
    assert F.dim_range(256, 2048, 256) == list(range(256, 2049, 256))
    grid = F.metric_grid(F.dim_range(256, 2048, 256), F.dim_range(256, 2048, 256), 1024, "bf16",
                         get_hardware("h100"))
    assert len(grid) == 64
    cell = next(r for r in grid if r["M"] == 2048 and r["N"] == 2048)
    assert cell["GFLOPs"] == pytest.approx(2 * 2048 * 2048 * 1024 / 1e9)
    assert cell["MB moved"] == pytest.approx(F.gemm_bytes(2048, 2048, 1024, "bf16") / 1e6)
    assert cell["FLOP/byte"] == pytest.approx(F.arithmetic_intensity(2048, 2048, 1024, "bf16"))
    assert cell["time µs"] == pytest.approx(F.gemm_time(2048, 2048, 1024, get_hardware("h100")).seconds * 1e6)
    assert "time µs" not in F.metric_grid([4], [4], 4)
    for args in ((10, 5, 1), (1, 1000, 1), (0, 5, 1)):
        with pytest.raises(InputError):
            F.dim_range(*args)
