"""Quantized GEMM: int8 scales, torch._int_mm's int32 accumulation and padding, fp8 via _scaled_mm."""

import pytest
import torch

from gemmlib.measure import quant
from gemmlib.measure.harness import rel_error


def _ab(m, k, n, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(m, k, generator=g), torch.randn(k, n, generator=g)


# ----------------------------------------------------------------------------- int8
def test_int8_row_and_column_scales_are_symmetric_and_tight():
    a, b = _ab(9, 40, 7)
    qa, sa = quant.quantize_rows_int8(a)
    qb, sb = quant.quantize_cols_int8(b)
    assert qa.dtype == torch.int8 and sa.shape == (9, 1) and sb.shape == (1, 7)
    # the largest magnitude in every row (column) maps to ±127
    assert torch.equal(qa.abs().amax(dim=1), torch.full((9,), 127, dtype=torch.int8))
    assert torch.equal(qb.abs().amax(dim=0), torch.full((7,), 127, dtype=torch.int8))
    assert torch.allclose(sa.squeeze(1), a.abs().amax(dim=1) / 127)
    # rounding error at most half a step per element
    assert ((qa.float() * sa - a).abs() <= sa / 2 + 1e-6).all()
    assert ((qb.float() * sb - b).abs() <= sb / 2 + 1e-6).all()


def test_int8_zero_row_gets_a_finite_scale():
    a = torch.zeros(3, 8)
    a[1] = torch.arange(8.0)
    q, s = quant.quantize_rows_int8(a)
    assert torch.isfinite(s).all() and (q[0] == 0).all() and (q[2] == 0).all()


def test_int_mm_accumulates_exactly_in_int32():
    g = torch.Generator().manual_seed(1)
    a = torch.randint(-127, 128, (33, 256), generator=g, dtype=torch.int8)
    b = torch.randint(-127, 128, (256, 24), generator=g, dtype=torch.int8)
    c = quant.int8_matmul(a, b)
    assert c.dtype == torch.int32
    assert torch.equal(c.long(), a.long() @ b.long())  # 256 products of up to 127² overflow int16, not int32


def test_int8_gemm_against_float64():
    a, b = _ab(64, 128, 48)
    ref = a.double() @ b.double()
    err = rel_error(quant.int8_gemm(a, b), ref)
    assert 1e-5 < err < 3e-2  # quantization error is real but small
    # the per-row/per-column result equals the dequantized integer product
    qa, sa = quant.quantize_rows_int8(a)
    qb, sb = quant.quantize_cols_int8(b)
    manual = (qa.double() @ qb.double()) * sa.double() * sb.double()
    assert torch.allclose(quant.int8_gemm(a, b).double(), manual, rtol=1e-5, atol=1e-5)


def test_cuda_padding_rules():
    p = quant.int_mm_padding(5, 45, 70, "cuda")
    assert (p.pm, p.pn, p.pk) == (17, 48, 72) and p.padded
    assert "M > 16" in p.note() and "%" in p.note()
    ok = quant.int_mm_padding(32, 64, 128, "cuda")
    assert not ok.padded and ok.note() == "" and ok.waste == 0
    assert not quant.int_mm_padding(5, 45, 70, "cpu").padded
    s = quant.scaled_mm_padding(5, 45, 70, "cuda")
    assert (s.pm, s.pn, s.pk) == (5, 48, 80)


def test_padding_path_gives_the_same_product():
    # The CUDA padding, run on the CPU: zero rows/columns change no dot product.
    a, b = _ab(5, 70, 45)
    qa, _ = quant.quantize_rows_int8(a)
    qb, _ = quant.quantize_cols_int8(b)
    assert torch.equal(quant.int8_matmul(qa, qb, pad_as="cuda"), quant.int8_matmul(qa, qb))
    op = quant.prepare_int8(a, b, pad_as="cuda")
    assert op.a_q.shape == (17, 72) and op.b_q.shape == (72, 48)
    assert torch.allclose(op.result(torch.float32), quant.int8_gemm(a, b), atol=1e-5)


def test_prepare_int8_column_major_b():
    a, b = _ab(20, 32, 16)
    op = quant.prepare_int8(a, b, column_major_b=True)
    assert op.b_q.stride() == (1, 32)
    assert torch.allclose(op.result(), quant.int8_gemm(a, b), atol=1e-5)


# ----------------------------------------------------------------------------- fp8
def test_fp8_guard_on_cuda_checks_capability(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.version, "hip", None)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (8, 0))
    ok, why = quant.fp8_supported("cuda")
    assert not ok and "8.9" in why and "8.0" in why
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (9, 0))
    assert quant.fp8_supported("cuda") == (True, "")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert not quant.fp8_supported("cuda")[0]
    assert not quant.fp8_supported("tpu")[0]


def test_quantize_fp8_fills_the_e4m3_range():
    a, _ = _ab(16, 32, 1)
    q, s = quant.quantize_fp8(a)
    assert q.dtype == torch.float8_e4m3fn and s.dim() == 0 and s.dtype == torch.float32
    assert q.float().abs().max().item() == pytest.approx(448.0)
    qr, sr = quant.quantize_fp8(a, dim=1)
    assert sr.shape == (16, 1)
    assert torch.allclose(qr.float().abs().amax(dim=1), torch.full((16,), 448.0))


fp8_cpu = pytest.mark.skipif(not quant.fp8_supported("cpu")[0], reason="this torch has no CPU _scaled_mm")


@fp8_cpu
@pytest.mark.parametrize("rowwise", [True, False])
def test_fp8_gemm_against_float64(rowwise):
    a, b = _ab(32, 64, 48)
    ref = a.double() @ b.double()
    op = quant.prepare_fp8(a, b, rowwise=rowwise)
    assert op.b_q.stride()[0] == 1  # B column-major, as _scaled_mm requires
    assert op.scale_a.dtype == torch.float32 and op.scale_b.dtype == torch.float32
    err = rel_error(op.result(), ref)
    assert 1e-4 < err < 0.1  # e4m3 keeps 3 mantissa bits


@fp8_cpu
def test_fp8_padding_path_gives_the_same_product():
    a, b = _ab(5, 70, 45)
    plain = quant.fp8_gemm(a, b).float()
    padded_op = quant.prepare_fp8(a, b, pad_as="cuda")
    assert padded_op.a_q.shape == (5, 80) and padded_op.b_q.shape == (80, 48)
    padded = padded_op.result().float()
    assert padded.shape == (5, 45)
    assert torch.allclose(padded, plain, rtol=1e-2, atol=1e-2)


def test_operand_bytes():
    assert quant.operand_bytes(2, 3, 4, 1, 4) == (2 * 4 + 4 * 3) * 1 + 2 * 3 * 4


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_int8_on_the_gpu_matches_the_cpu_exactly():
    a, b = _ab(5, 70, 45)
    qa, _ = quant.quantize_rows_int8(a)
    qb, _ = quant.quantize_cols_int8(b)
    gpu = quant.int8_matmul(qa.cuda(), qb.cuda())  # padded to 17×72·72×48 under the hood
    assert torch.equal(gpu.cpu(), quant.int8_matmul(qa, qb))
    op = quant.prepare_int8(a.cuda(), b.cuda())
    assert op.b_q.stride()[0] == 1 and op.padding.padded
    assert torch.allclose(op.result(torch.float32).cpu(), quant.int8_gemm(a, b), atol=1e-4)


@pytest.mark.gpu
@pytest.mark.skipif(not (torch.cuda.is_available() and quant.fp8_supported("cuda")[0]),
                    reason="needs a GPU with fp8 tensor cores")
@pytest.mark.parametrize("rowwise", [None, False])
def test_fp8_on_the_gpu(rowwise):
    a, b = _ab(64, 96, 80)
    ref = a.double() @ b.double()
    op = quant.prepare_fp8(a.cuda(), b.cuda(), rowwise=rowwise)
    assert 1e-4 < rel_error(op.result(), ref.cuda()) < 0.1


def test_rowwise_scales_sit_in_roomy_buffers():
    s = torch.arange(1.0, 6.0).reshape(5, 1)
    assert quant.roomy_scale(s, 0) is not None and quant.roomy_scale(s, 0).untyped_storage().nbytes() == 5 * 4
    r = quant.roomy_scale(s, 0, force=True)  # what happens on CUDA
    assert torch.equal(r, s) and r.is_contiguous() and r.untyped_storage().nbytes() == 256 * 4
    c = quant.roomy_scale(s.reshape(1, 5), 1, force=True)
    assert c.shape == (1, 5) and c.is_contiguous() and c.untyped_storage().nbytes() == 256 * 4
    full = torch.ones(512, 1)
    assert quant.roomy_scale(full, 0, force=True).untyped_storage().nbytes() == 512 * 4


# ----------------------------------------------------------------------------- layouts (issue 15, item 1)
def test_int_mm_operands_lay_b_out_column_major_for_cuda():
    # cuBLASLt's int8 GEMM is "TN" only: B must be column-major on CUDA, whatever the caller passes.
    g = torch.Generator().manual_seed(3)
    a = torch.randint(-127, 128, (5, 70), generator=g, dtype=torch.int8)
    b = torch.randint(-127, 128, (70, 45), generator=g, dtype=torch.int8)  # row-major, as quantize returns it
    a_p, b_p, pad = quant.int_mm_operands(a, b, "cuda")
    assert (pad.pm, pad.pk, pad.pn) == (17, 72, 48)
    assert a_p.stride() == (72, 1)  # A row-major
    assert b_p.stride() == (1, 72)  # B column-major: element (k, n) at n·K + k
    assert torch.equal(b_p[:70, :45], b) and b_p[70:].abs().sum() == 0 and b_p[:, 45:].abs().sum() == 0
    # on a CPU nothing is padded or moved
    a_c, b_c, pad_c = quant.int_mm_operands(a, b)
    assert not pad_c.padded and b_c.stride() == (45, 1)


def test_int8_matmul_and_int8_gemm_use_the_cuda_layout_and_stay_exact():
    # the column-major, padded call gives the same int32 product (checked on the CPU's _int_mm)
    g = torch.Generator().manual_seed(4)
    a = torch.randint(-127, 128, (33, 40), generator=g, dtype=torch.int8)
    b = torch.randint(-127, 128, (40, 24), generator=g, dtype=torch.int8)
    assert torch.equal(quant.int8_matmul(a, b, pad_as="cuda").long(), a.long() @ b.long())
    x, w = _ab(9, 40, 7)
    assert torch.allclose(quant.int8_gemm(x, w, pad_as="cuda"), quant.int8_gemm(x, w), atol=1e-6)
    op = quant.prepare_int8(x, w, pad_as="cuda")
    assert op.b_q.stride()[0] == 1 and op.a_q.is_contiguous()


def test_column_major_is_idempotent():
    x = torch.arange(12.0).reshape(3, 4)
    c = quant.column_major(x)
    assert c.stride() == (1, 3) and torch.equal(c, x)
    assert quant.column_major(c) is c
