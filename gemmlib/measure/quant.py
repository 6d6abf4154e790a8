"""Quantized GEMM: symmetric int8 with int32 accumulation, and fp8 (e4m3) with scales.

int8, the way LLM inference does it (the article's INT8 section, made concrete):

1. **Quantize** with one scale per row of the activations A (M×K) and one per column
   of the weights B (K×N), symmetric around zero:
   ``scale = max|x| / 127`` over the row (column), ``q = round(x / scale)`` clamped
   to [-127, 127]. Per-row/per-column scales can be pulled out of the dot product,
   because every term of ``D[i, j] = Σ_k A[i, k]·B[k, j]`` shares the same row scale
   of A and column scale of B.
2. **Multiply** the int8 matrices with ``torch._int_mm``, which accumulates in int32
   (a sum of K products of two 7-bit magnitudes needs up to 14 + log2 K bits).
3. **Dequantize**: ``D ≈ C_int32 · scale_a[i] · scale_b[j]`` in floating point.

``torch._int_mm`` on CUDA has shape rules: M > 16, and K and N multiples of 8; the
operands here are zero-padded to meet them (the padding is reported, and zeros change
no dot product). On a CPU it takes any shape.

fp8 (float8 e4m3: 4 exponent bits, 3 mantissa bits, largest finite value 448) goes
through ``torch._scaled_mm(a, b, scale_a, scale_b, out_dtype=...)``, which computes
``(a·scale_a) @ (b·scale_b)`` on fp8 tensor cores. Its rules on CUDA: compute
capability 8.9 or newer (Ada, Hopper), A row-major, B column-major, K and N multiples
of 16, fp32 scales (one per tensor, or rowwise (M,1) and (1,N) on Hopper with a bf16
output). Recent CPU builds of torch run it too, as a reference implementation.

torch is imported inside the functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gemmlib.core.i18n import N_, Text

INT8_MAX = 127
FP8_E4M3_MAX = 448.0

# torch._int_mm's shape rules on CUDA (aten/src/ATen/native/cuda/Blas.cpp, _int_mm_out_cuda).
INT_MM_CUDA_MIN_M = 17  # "self.size(0) needs to be greater than 16"
INT_MM_CUDA_MULTIPLE = 8  # K and N: "needs to be greater than 0 and a multiple of 8"
SCALED_MM_MULTIPLE = 16  # K and N for torch._scaled_mm on CUDA
FP8_MIN_CAPABILITY = (8, 9)
FP8_CC = N_("fp8 tensor cores need CUDA compute capability 8.9 or newer (Ada, Hopper); this GPU is {cc}")
# Why fp8 cannot run (a result row's reason: English in the data; a page shows it in its language)
FP8_NO_TORCH = N_("PyTorch is not installed")
FP8_OLD_TORCH = N_("this PyTorch ({version}) has no float8 e4m3 / torch._scaled_mm")
FP8_ROCM = N_("ROCm build: float8 e4m3fn (the OCP format) is not what this path targets")
FP8_NO_CPU_KERNEL = N_("this PyTorch has no CPU kernel for torch._scaled_mm ({error})")
FP8_NO_DEVICE = N_("fp8 is not implemented here for device {device!r}")


def _ceil_to(x: int, m: int) -> int:
    return -(-int(x) // m) * m


@dataclass(frozen=True)
class Padding:
    """The shape actually multiplied, and why it differs from the one asked for."""

    m: int
    n: int
    k: int
    pm: int
    pn: int
    pk: int

    @property
    def padded(self) -> bool:
        return (self.m, self.n, self.k) != (self.pm, self.pn, self.pk)

    @property
    def waste(self) -> float:
        """Share of the padded multiply-adds that are padding (0 when none)."""
        return 1.0 - (self.m * self.n * self.k) / (self.pm * self.pn * self.pk)

    def note(self, what: str = "torch._int_mm on CUDA needs M > 16 and K, N multiples of 8") -> str:
        if not self.padded:
            return ""
        return (f"padded {self.m}×{self.k}·{self.k}×{self.n} to {self.pm}×{self.pk}·{self.pk}×{self.pn} "
                f"({what}); {self.waste:.0%} of the work is padding")


def int_mm_padding(m: int, n: int, k: int, device: str) -> Padding:
    """The padded shape ``torch._int_mm`` needs on ``device`` (CPU: none)."""
    if device == "cuda":
        return Padding(m, n, k, max(m, INT_MM_CUDA_MIN_M), _ceil_to(n, INT_MM_CUDA_MULTIPLE),
                       _ceil_to(k, INT_MM_CUDA_MULTIPLE))
    return Padding(m, n, k, m, n, k)


def scaled_mm_padding(m: int, n: int, k: int, device: str) -> Padding:
    """The padded shape ``torch._scaled_mm`` needs on ``device`` (K, N multiples of 16 on CUDA)."""
    if device == "cuda":
        return Padding(m, n, k, m, _ceil_to(n, SCALED_MM_MULTIPLE), _ceil_to(k, SCALED_MM_MULTIPLE))
    return Padding(m, n, k, m, n, k)


def pad2(x: Any, rows: int, cols: int) -> Any:
    import torch.nn.functional as F
    r, c = x.shape
    if (r, c) == (rows, cols):
        return x
    return F.pad(x, (0, cols - c, 0, rows - r))


# --------------------------------------------------------------------------- int8
def quantize_int8(x: Any, dim: int) -> tuple[Any, Any]:
    """Symmetric int8 quantization with one scale per slice along ``dim`` reduced.

    ``dim=1`` reduces over columns: one scale per row (activations A, shape (M, 1)).
    ``dim=0`` reduces over rows: one scale per column (weights B, shape (1, N)).
    Returns ``(q int8, scale float32)`` with ``x ≈ q * scale``.
    """
    import torch
    xf = x.float()
    amax = xf.abs().amax(dim=dim, keepdim=True)
    scale = torch.where(amax > 0, amax / INT8_MAX, torch.ones_like(amax))
    q = torch.round(xf / scale).clamp_(-INT8_MAX, INT8_MAX).to(torch.int8)
    return q, scale


def quantize_rows_int8(a: Any) -> tuple[Any, Any]:
    """Activations: one scale per row of A (M×K) -> scale (M, 1)."""
    return quantize_int8(a, dim=1)


def quantize_cols_int8(b: Any) -> tuple[Any, Any]:
    """Weights: one scale per column of B (K×N) -> scale (1, N)."""
    return quantize_int8(b, dim=0)


def int_mm_operands(a_q: Any, b_q: Any, layout_as: str | None = None) -> tuple[Any, Any, Padding]:
    """``(A, B, padding)`` laid out as ``torch._int_mm`` wants them on ``layout_as`` (default: A's device).

    CUDA: zero-padded to the shape rules (M > 16, K and N multiples of 8), A row-major and B
    **column-major** — cuBLASLt's int8 kernels are "TN" only: a row-major B (an "NN" call) is
    ``CUBLAS_STATUS_NOT_SUPPORTED`` on sm_90. An ``nn.Linear`` weight (N, K) transposed is exactly
    such a B. On a CPU nothing changes (any shape and layout works there).
    """
    m, k = a_q.shape
    k2, n = b_q.shape
    if k != k2:
        raise ValueError(f"inner dimensions differ: {k} vs {k2}")
    dev = layout_as or a_q.device.type
    pad = int_mm_padding(m, n, k, dev)
    a_p = pad2(a_q, pad.pm, pad.pk)
    b_p = pad2(b_q, pad.pk, pad.pn)
    if dev == "cuda":
        a_p = a_p.contiguous()
        b_p = column_major(b_p)
    return a_p, b_p, pad


def column_major(x: Any) -> Any:
    """The same matrix stored column by column (strides (1, rows)); a no-op when it already is."""
    rows = x.shape[0]
    if x.stride() == (1, rows) or (x.shape[1] == 1 and x.stride()[0] == 1):
        return x
    return x.t().contiguous().t()


def int8_matmul(a_q: Any, b_q: Any, pad_as: str | None = None) -> Any:
    """int8 × int8 -> int32 with ``torch._int_mm``, laid out and padded by :func:`int_mm_operands`.

    ``pad_as="cuda"`` applies the CUDA layout and padding on any device (how the tests check it on a CPU)."""
    import torch
    m, n = a_q.shape[0], b_q.shape[1]
    a_p, b_p, pad = int_mm_operands(a_q, b_q, pad_as)
    c = torch._int_mm(a_p, b_p)
    return c[:m, :n] if pad.padded else c


def dequantize(c_int32: Any, scale_a: Any, scale_b: Any, out_dtype: Any = None) -> Any:
    """``C_int32 · scale_a (M,1) · scale_b (1,N)`` in fp32, cast to ``out_dtype`` if given."""
    d = c_int32.float() * scale_a * scale_b
    return d if out_dtype is None else d.to(out_dtype)


def int8_gemm(a: Any, b: Any, out_dtype: Any = None, pad_as: str | None = None) -> Any:
    """The whole int8 path for floating-point A, B: quantize, ``_int_mm``, dequantize."""
    a_q, sa = quantize_rows_int8(a)
    b_q, sb = quantize_cols_int8(b)
    return dequantize(int8_matmul(a_q, b_q, pad_as), sa, sb, out_dtype)


@dataclass
class Int8Operands:
    """Pre-quantized, pre-padded operands, ready for a timed ``torch._int_mm`` alone."""

    a_q: Any
    b_q: Any
    scale_a: Any
    scale_b: Any
    padding: Padding

    def matmul(self) -> Any:
        import torch
        return torch._int_mm(self.a_q, self.b_q)

    def result(self, out_dtype: Any = None) -> Any:
        """Dequantized product, cut back to the asked-for shape."""
        p = self.padding
        c = self.matmul()[: p.m, : p.n]
        return dequantize(c, self.scale_a[: p.m], self.scale_b[:, : p.n], out_dtype)


def prepare_int8(a: Any, b: Any, column_major_b: bool | None = None, pad_as: str | None = None) -> Int8Operands:
    """Quantize and pad once (outside any timing), laid out by :func:`int_mm_operands` (on CUDA:
    B column-major, the layout cuBLASLt's int8 kernels take). ``column_major_b=True`` forces that
    layout on a CPU too."""
    dev = pad_as or a.device.type
    a_q, sa = quantize_rows_int8(a)
    b_q, sb = quantize_cols_int8(b)
    a_q, b_q, pad = int_mm_operands(a_q, b_q, dev)
    if column_major_b:
        b_q = column_major(b_q)
    return Int8Operands(a_q.contiguous(), b_q, sa, sb, pad)


# --------------------------------------------------------------------------- fp8
def scaled_mm(a_q: Any, b_q: Any, scale_a: Any, scale_b: Any, out_dtype: Any, fast_accum: bool) -> Any:
    """``torch._scaled_mm`` by keyword (its positional order changed in torch 2.4; torch 2.1–2.3
    also returned an ``(out, amax)`` pair, of which the product is the first)."""
    import torch
    out = torch._scaled_mm(a_q, b_q, scale_a=scale_a, scale_b=scale_b, out_dtype=out_dtype,
                           use_fast_accum=fast_accum)
    return out[0] if isinstance(out, tuple) else out


def fp8_supported(device: str) -> tuple[bool, str]:
    """(True, note) when ``torch._scaled_mm`` with float8 e4m3 can run on ``device``, else (False, why)."""
    try:
        import torch
    except ImportError:
        return False, FP8_NO_TORCH
    if not hasattr(torch, "float8_e4m3fn") or not hasattr(torch, "_scaled_mm"):
        return False, Text(FP8_OLD_TORCH, version=torch.__version__)
    if device == "cuda":
        if not torch.cuda.is_available():
            return False, N_("no CUDA device")
        if torch.version.hip:
            return False, FP8_ROCM
        cap = torch.cuda.get_device_capability()
        if tuple(cap) < FP8_MIN_CAPABILITY:
            return False, Text(FP8_CC, cc=f"{cap[0]}.{cap[1]}")
        return True, ""
    if device == "cpu":
        try:  # a tiny probe: CPU support for _scaled_mm depends on the torch build
            a = torch.ones(16, 16).to(torch.float8_e4m3fn)
            one = torch.ones((), dtype=torch.float32)
            scaled_mm(a, column_major(a), one, one, torch.float32, False)
        except (RuntimeError, NotImplementedError, TypeError) as e:
            return False, Text(FP8_NO_CPU_KERNEL, error=str(e).splitlines()[0][:80] if str(e) else "")
        return True, N_("the CPU has no fp8 hardware: torch runs `_scaled_mm` through a reference kernel "
                        "(correct numbers, not an fp8 speed figure)")
    return False, Text(FP8_NO_DEVICE, device=device)


def quantize_fp8(x: Any, dim: int | None = None) -> tuple[Any, Any]:
    """Scale into e4m3's range and cast: ``x ≈ q * scale``, ``scale = max|x| / 448``.

    ``dim=None``: one scale for the tensor (a 0-d fp32 tensor); ``dim=1``: per row (M,1);
    ``dim=0``: per column (1,N).
    """
    import torch
    xf = x.float()
    amax = xf.abs().amax() if dim is None else xf.abs().amax(dim=dim, keepdim=True)
    scale = torch.where(amax > 0, amax / FP8_E4M3_MAX, torch.ones_like(amax)).float()
    q = (xf / scale).clamp_(-FP8_E4M3_MAX, FP8_E4M3_MAX).to(torch.float8_e4m3fn)
    return q, scale


@dataclass
class Fp8Operands:
    """Quantized, padded operands for ``torch._scaled_mm`` (A row-major, B column-major)."""

    a_q: Any
    b_q: Any
    scale_a: Any
    scale_b: Any
    padding: Padding
    out_dtype: Any
    fast_accum: bool
    rowwise: bool

    def matmul(self) -> Any:
        return scaled_mm(self.a_q, self.b_q, self.scale_a, self.scale_b, self.out_dtype, self.fast_accum)

    def result(self) -> Any:
        p = self.padding
        return self.matmul()[: p.m, : p.n]


def prepare_fp8(a: Any, b: Any, *, rowwise: bool | None = None, fast_accum: bool = True,
                out_dtype: Any = None, pad_as: str | None = None) -> Fp8Operands:
    """Quantize A and B to e4m3 and lay them out as ``torch._scaled_mm`` requires.

    ``rowwise=None`` picks per-row/per-column scales on Hopper (capability ≥ 9.0) and on the
    CPU, one scale per tensor on Ada (8.9), where cuBLASLt has only tensor-wise scaling.
    The output is bf16 (rowwise scaling on CUDA requires it).
    """
    import torch
    m, k = a.shape
    _, n = b.shape
    dev = a.device.type
    if rowwise is None:
        rowwise = dev != "cuda" or tuple(torch.cuda.get_device_capability(a.device)) >= (9, 0)
    out_dtype = out_dtype or torch.bfloat16
    pad = scaled_mm_padding(m, n, k, pad_as or dev)
    if rowwise:
        a_q, sa = quantize_fp8(a, dim=1)
        b_q, sb = quantize_fp8(b, dim=0)
        sa = pad2(sa, pad.pm, 1).contiguous()
        sb = pad2(sb, 1, pad.pn).contiguous()
        # padded rows/columns of the scales multiply zeros; keep them finite and positive
        if pad.padded:
            sa[m:] = 1.0
            sb[:, n:] = 1.0
        sa, sb = roomy_scale(sa, 0), roomy_scale(sb, 1)
    else:
        a_q, sa = quantize_fp8(a)
        b_q, sb = quantize_fp8(b)
    a_q = pad_fp8(a_q, pad.pm, pad.pk).contiguous()
    b_q = column_major(pad_fp8(b_q, pad.pk, pad.pn))
    return Fp8Operands(a_q, b_q, sa, sb, pad, out_dtype, fast_accum, rowwise)


SCALE_ROOM = 256  # rowwise scales live in buffers rounded up to this many entries (see roomy_scale)


def roomy_scale(scale: Any, axis: int, force: bool = False) -> Any:
    """The same (M,1) or (1,N) scale, as a view into a buffer rounded up to 256 entries.

    Some CUTLASS rowwise fp8 kernels behind ``torch._scaled_mm`` read the scales a whole
    256-row tile at a time (pytorch/pytorch#133334: an illegal memory access, which kills
    the CUDA context, when M % 256 != 0 in the torch releases before the fix). Reading
    past the end of this view stays inside its own buffer, whatever torch is installed.
    """
    import torch
    n = scale.shape[axis]
    room = _ceil_to(n, SCALE_ROOM)
    if (scale.device.type != "cuda" and not force) or room == n:
        return scale.contiguous()
    shape = (room, 1) if axis == 0 else (1, room)
    buf = torch.ones(shape, dtype=scale.dtype, device=scale.device)
    view = buf[:n] if axis == 0 else buf[:, :n]
    view.copy_(scale)
    return view


def pad_fp8(x: Any, rows: int, cols: int) -> Any:
    """Zero-pad an fp8 tensor (pads through its uint8 bit pattern: 0x00 is +0.0 in e4m3)."""
    import torch
    r, c = x.shape
    if (r, c) == (rows, cols):
        return x
    return pad2(x.view(torch.uint8), rows, cols).view(x.dtype)


def fp8_gemm(a: Any, b: Any, **kw: Any) -> Any:
    """The whole fp8 path for floating-point A, B: quantize, ``_scaled_mm``, cut to shape."""
    return prepare_fp8(a, b, **kw).result()


# --------------------------------------------------------------------------- bytes
def operand_bytes(m: int, n: int, k: int, in_bytes: float, out_bytes: float) -> float:
    """Memory the operands take: A (M·K) and B (K·N) in the input type, D (M·N) in the output type."""
    return float((m * k + k * n) * in_bytes + m * n * out_bytes)
