"""The tiled Triton kernel equals float64 references on odd sizes.

Without a GPU it runs under Triton's interpreter (slow: sizes stay small here);
with a CUDA device the same tests run the compiled kernel.
"""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from gemmlib.core.errors import InputError
from gemmlib.measure import triton_gemm as tg

tg.prepare_interpreter()  # before anything else in this test session imports triton

ROOT = Path(__file__).resolve().parents[2]
DEV = "cuda" if torch.cuda.is_available() else "cpu"
TOL = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


def _rel(x: torch.Tensor, ref: torch.Tensor) -> float:
    return ((x.double().cpu() - ref).abs().max() / ref.abs().max()).item()


def _inputs(m, n, k, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(m, k, generator=g, dtype=torch.float64)
    b = torch.randn(k, n, generator=g, dtype=torch.float64)
    return a.to(DEV, dtype), b.to(DEV, dtype)


def test_status_matches_machine():
    st = tg.status()
    assert st.available, st.reason
    if DEV == "cpu":
        assert st.mode == "interpreter" and not st.timable
        assert "correctness" in st.reason
    else:
        assert st.mode in {"gpu", "interpreter"}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (37, 29, 45), (70, 33, 19)])
def test_default_config_odd_sizes(dtype, m, n, k):
    a, b = _inputs(m, n, k, dtype, seed=m + n + k)
    ref = a.double().cpu() @ b.double().cpu()
    d = tg.triton_matmul(a, b)
    assert d.shape == (m, n) and d.dtype == dtype and d.device.type == DEV
    err = _rel(d, ref)
    assert err < TOL[dtype]
    # the result is the input dtype's rounding of an fp32-accumulated product, not a copy of the reference
    assert torch.isfinite(d).all()


@pytest.mark.parametrize("block,group", [((16, 16, 16), 1), ((16, 32, 16), 3), ((32, 16, 64), 8)])
def test_block_sizes_and_grouping(block, group):
    a, b = _inputs(53, 41, 35, torch.float16, seed=7)
    ref = a.double().cpu() @ b.double().cpu()
    d = tg.triton_matmul(a, b, block=block, group_m=group)
    assert _rel(d, ref) < TOL[torch.float16]


def test_non_contiguous_operands():
    a, b = _inputs(24, 40, 33, torch.float32, seed=3)
    at = a.t().contiguous().t()  # column-major A
    d = tg.triton_matmul(at, b[:, ::2])
    ref = a.double().cpu() @ b[:, ::2].double().cpu()
    assert _rel(d, ref) < TOL[torch.float32]


def test_bad_inputs():
    a, b = _inputs(8, 8, 8, torch.float32)
    with pytest.raises(InputError, match="inner dimensions"):
        tg.triton_matmul(a, b[:4])
    with pytest.raises(InputError, match="power of two"):
        tg.triton_matmul(a, b, block=(8, 16, 16))
    with pytest.raises(InputError, match="power of two"):
        tg.triton_matmul(a, b, block=(16, 24, 16))
    with pytest.raises(InputError, match="fp32, fp16 or bf16"):
        tg.triton_matmul(a.double(), b.double())
    with pytest.raises(InputError, match="share a dtype"):
        tg.triton_matmul(a, b.half())


def test_import_is_light_and_interpreter_switched_on_before_triton():
    code = (
        "import sys, os\n"
        "os.environ.pop('TRITON_INTERPRET', None)\n"
        "import gemmlib.measure.triton_gemm as tg\n"
        "print('triton' in sys.modules, 'torch' in sys.modules)\n"
        "st = tg.status()\n"
        "print(st.mode, os.environ.get('TRITON_INTERPRET'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.strip().splitlines()
    assert first == "False False"
    if DEV == "cpu":
        assert second == "interpreter 1"
    else:
        assert second.startswith("gpu")


def test_triton_imported_first_still_runs_or_says_why():
    # Something imported triton before gemmlib could switch the interpreter on: triton ≥ 3 reads the
    # switch when a kernel is defined, and the kernel uses only builtins, so it still runs.
    code = (
        "import os\n"
        "os.environ.pop('TRITON_INTERPRET', None)\n"
        "import torch, torch.utils.flop_counter  # imports triton\n"
        "import gemmlib.measure.triton_gemm as tg\n"
        "st = tg.status()\n"
        "print(st.mode)\n"
        "print(st.reason)\n"
        "if st.available and st.mode == 'interpreter':\n"
        "    a = torch.randn(19, 23); b = torch.randn(23, 17)\n"
        "    d = tg.triton_matmul(a, b)\n"
        "    print(float(((d.double() - a.double() @ b.double()).abs().max())))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    if DEV == "cpu":
        # torch.utils.flop_counter imports triton, so this happens in a real server: it must still work
        assert lines[0] == "interpreter", lines
        assert float(lines[2]) < 1e-4


# ----------------------------------------------------------------------------- 32-bit offsets (issue 15, item 12)
def test_operands_past_two_to_the_31_elements_are_refused_before_launch():
    # meta tensors: the shapes and strides of multi-GB operands without allocating them
    ok = torch.empty(65536, 32767, device="meta")
    assert tg.max_offset(tuple(ok.shape), ok.stride()) == ok.numel() - 1  # contiguous: the last element
    tg.check_offsets(ok, torch.empty(32767, 8, device="meta"), torch.empty(65536, 8, device="meta"))
    big = torch.empty(65536, 32768, device="meta")  # M·K = 2³¹
    with pytest.raises(InputError, match="2³¹"):
        tg.check_offsets(big, torch.empty(32768, 8, device="meta"), torch.empty(65536, 8, device="meta"))
    with pytest.raises(InputError, match="B is"):  # K·N ≥ 2³¹
        tg.check_offsets(torch.empty(8, 65536, device="meta"), torch.empty(65536, 32768, device="meta"),
                         torch.empty(8, 32768, device="meta"))
    t = torch.empty(40000, 60000, device="meta").t()  # a transposed view reaches as far as its source
    assert tg.max_offset(tuple(t.shape), t.stride()) == 40000 * 60000 - 1


# ----------------------------------------------------------------------------- registers (issue 15, item 6)
def _ptxas_or_skip():
    pytest.importorskip("triton.backends.nvidia.compiler")
    from triton.backends.nvidia.compiler import get_ptxas
    try:
        if not Path(get_ptxas(90).path).exists():
            pytest.skip("Triton's NVIDIA backend has no ptxas here")
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"no ptxas: {e}")


@pytest.mark.parametrize("cfg", tg.GPU_CONFIGS)
def test_every_16_bit_autotune_config_compiles_for_sm90_without_spilling(cfg):
    _ptxas_or_skip()
    bm, bn, bk, _g, stages, warps = cfg
    r = tg.offline_resources((bm, bn, bk), warps, stages, "fp16")
    assert not r.error and r.spill_bytes == 0 and 0 < r.registers <= 255, r


@pytest.mark.parametrize("allow_tf32", [False, True])
@pytest.mark.parametrize("cfg", tg.GPU_CONFIGS_FP32)
def test_every_fp32_autotune_config_compiles_for_sm90_without_spilling(cfg, allow_tf32):
    _ptxas_or_skip()
    bm, bn, bk, _g, stages, warps = cfg
    r = tg.offline_resources((bm, bn, bk), warps, stages, "fp32", allow_tf32=allow_tf32)
    assert not r.error and r.spill_bytes == 0, r


@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
@pytest.mark.parametrize("tile", [32, 64, 128, 256])
def test_tiling_rows_run_only_tiles_that_do_not_spill(dtype, tile):
    # The tiling benchmark's square tiles, launched as triton_matmul launches them: the ones it runs
    # compile without spills on sm_90; the ones it refuses (256×256) really spill (ptxas says so).
    _ptxas_or_skip()
    stages, warps = tg.launch_for(tile, tile, dtype)
    block = (tile, tile, min(tile, 64 if dtype != "fp32" else 32))
    r = tg.offline_resources(block, warps, stages, dtype)
    refused = tg.tile_spills(tile, tile, warps)
    assert bool(refused) == r.spills, (r, refused)
    if refused:
        assert "spills" in refused and f"{tile}×{tile}" in refused


def test_the_small_autotune_set_is_one_configuration_of_each(monkeypatch):
    monkeypatch.delenv(tg.AUTOTUNE_ENV, raising=False)
    assert tg.autotune_configs() == (tg.GPU_CONFIGS, tg.GPU_CONFIGS_FP32)
    monkeypatch.setenv(tg.AUTOTUNE_ENV, "small")
    small, small32 = tg.autotune_configs()
    assert small == tg.GPU_CONFIGS[:1] and small32 == tg.GPU_CONFIGS_FP32[:1]
