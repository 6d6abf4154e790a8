"""A real tiled GEMM kernel in Triton: what "tiling" means inside a kernel.

The idea, before the code. D (M×N) is cut into BLOCK_M × BLOCK_N tiles, one
Triton program per tile. A program keeps its tile of D in registers as an fp32
accumulator and walks K in steps of BLOCK_K: it loads a BLOCK_M × BLOCK_K tile
of A and a BLOCK_K × BLOCK_N tile of B (into shared memory, pipelined), multiplies
them on the tensor cores (``tl.dot``) and adds into the accumulator. Only at the
end is the tile cast to the output dtype and written, once. Masks make edge
tiles work for sizes that are not multiples of the blocks.

Grouped ordering: programs are numbered so that GROUP_M consecutive programs
cover a column of GROUP_M row-tiles before moving right. Programs that run at
the same time then share A row panels and B column panels in L2, instead of all
reading different parts of B.

Pseudocode of one program::

    acc = zeros(BLOCK_M, BLOCK_N, fp32)
    for k in range(0, K, BLOCK_K):
        acc += A[rows, k:k+BLOCK_K] @ B[k:k+BLOCK_K, cols]   # masked at the edges
    D[rows, cols] = acc.to(D.dtype)

On a CUDA device the block sizes are chosen by ``@triton.autotune`` per (M, N,
K). Without one the kernel runs under Triton's interpreter (``TRITON_INTERPRET=1``)
on CPU tensors: numpy executes each program, which checks correctness and is far
too slow to mean anything about speed — never report its time.

Importing this module imports neither torch nor triton; the kernel is built on
first use. On a machine without CUDA, the interpreter switch is set before
triton is first imported when possible (see ``prepare_interpreter``; ``status()``
checks that the interpreter works and otherwise says why the kernel cannot run).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from gemmlib.core.errors import InputError

# Block configurations offered to the autotuner on a GPU: (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, stages, warps).
# Large tiles with deep pipelines suit Hopper/Ampere at big sizes; the smaller ones cover small or skinny GEMMs.
GPU_CONFIGS: tuple[tuple[int, int, int, int, int, int], ...] = (
    (128, 256, 64, 8, 3, 8),
    (256, 128, 64, 8, 3, 8),
    (128, 128, 64, 8, 4, 4),
    (128, 128, 64, 8, 4, 8),
    (128, 64, 64, 8, 4, 4),
    (64, 128, 64, 8, 4, 4),
    (64, 64, 32, 8, 4, 4),
)
# The single configuration used under the interpreter (autotuning there would only multiply the wait).
INTERPRETER_CONFIG: tuple[int, int, int, int] = (32, 32, 32, 4)  # BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M
MIN_BLOCK = 16  # tl.dot needs every block dimension ≥ 16

SUPPORTED_DTYPES = ("fp32", "fp16", "bf16")


@dataclass(frozen=True)
class TritonStatus:
    available: bool  # the kernel can run here
    mode: str  # "gpu" | "interpreter" | "unavailable"
    reason: str  # one sentence for the page / CLI

    @property
    def timable(self) -> bool:
        """True only when a time measured for the kernel means something (a real GPU run)."""
        return self.available and self.mode == "gpu"


_STATE: dict[str, Any] = {}


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def prepare_interpreter() -> None:
    """Switch the interpreter on (``TRITON_INTERPRET=1``) when there is no CUDA device.

    Best called before triton is first imported; ``status()`` calls it too. If triton was imported
    already (``torch.utils.flop_counter`` imports it, so a server whose Profiler page ran first has
    it), the switch is still set: triton ≥ 3 reads it when a kernel is defined, and this kernel uses
    only builtins (no ``@jit`` helpers defined at import). ``status()`` runs a small product to
    check that the interpreter really works, and says why when it does not.
    """
    if not _cuda_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0").lower() in {"1", "true", "on", "yes"}


def status() -> TritonStatus:
    """Whether the kernel can run here, and how (GPU for speed, interpreter for correctness only)."""
    if "status" in _STATE:
        return _STATE["status"]
    prepare_interpreter()
    try:
        import triton  # noqa: F401
        import triton.language  # noqa: F401
    except Exception as e:  # noqa: BLE001 - any import failure makes the path unavailable
        st = TritonStatus(False, "unavailable", f"triton cannot be imported here ({type(e).__name__}: {e})")
        _STATE["status"] = st
        return st
    try:
        kernel = _build_kernel()
    except Exception as e:  # noqa: BLE001
        st = TritonStatus(False, "unavailable", f"the Triton kernel could not be built ({type(e).__name__}: {e})")
        _STATE["status"] = st
        return st
    interpreted = type(kernel).__name__ == "InterpretedFunction" or type(
        getattr(kernel, "fn", None)).__name__ == "InterpretedFunction"
    if interpreted:
        st = TritonStatus(True, "interpreter",
                          "no CUDA device: the Triton kernel runs in Triton's interpreter on the CPU — "
                          "a correctness check only, its time is not a speed figure")
        _STATE["status"] = st
        problem = _smoke_test()
        if problem:
            st = TritonStatus(False, "unavailable",
                              "Triton's interpreter does not work in this process (triton was probably imported "
                              "before TRITON_INTERPRET=1 was set; start the process with TRITON_INTERPRET=1): "
                              + problem)
    elif _cuda_available():
        st = TritonStatus(True, "gpu", "Triton kernel compiled for the CUDA device (autotuned)")
    else:
        st = TritonStatus(False, "unavailable",
                          "no CUDA device, and Triton's interpreter is switched off in this process "
                          f"(TRITON_INTERPRET={os.environ.get('TRITON_INTERPRET')!r}); set TRITON_INTERPRET=1 "
                          "to check the kernel's correctness on the CPU")
    _STATE["status"] = st
    return st


def _smoke_test() -> str:
    """Run one tiny product in the interpreter; '' when it is right, else what went wrong."""
    import torch

    try:
        a = torch.arange(16 * 16, dtype=torch.float32).reshape(16, 16) / 256
        d = triton_matmul(a, a.t().contiguous(), block=(16, 16, 16))
        err = (d.double() - a.double() @ a.t().double()).abs().max().item()
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
    return "" if err < 1e-4 else f"a 16×16 test product is off by {err:.3g}"


def _build_kernel():
    """Define the Triton kernel (once). Autotuned on a GPU, one fixed block config in the interpreter."""
    if "kernel" in _STATE:
        return _STATE["kernel"]
    import triton
    import triton.language as tl

    @triton.jit
    def _gemm_kernel(a_ptr, b_ptr, d_ptr, M, N, K,
                     stride_am, stride_ak, stride_bk, stride_bn, stride_dm, stride_dn,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                     GROUP_M: tl.constexpr, CAST_F32: tl.constexpr, INPUT_PRECISION: tl.constexpr):
        # Which tile of D this program owns, in grouped order (see the module docstring).
        pid = tl.program_id(axis=0)
        tiles_m = (M + BLOCK_M - 1) // BLOCK_M  # plain arithmetic: no jit'd helpers needed
        tiles_n = (N + BLOCK_N - 1) // BLOCK_N
        per_group = GROUP_M * tiles_n
        group = pid // per_group
        first_m = group * GROUP_M
        rows_in_group = min(tiles_m - first_m, GROUP_M)
        tile_m = first_m + ((pid % per_group) % rows_in_group)
        tile_n = (pid % per_group) // rows_in_group

        offs_m = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
        offs_k = tl.arange(0, BLOCK_K)
        # Rows of A / columns of B past the edge wrap around (modulo) instead of being masked:
        # the loads stay in bounds and unmasked (faster), and the extra rows/columns of the
        # accumulator they produce are simply not stored. (No contiguity hints: at an edge tile
        # the wrapped offsets are not contiguous; the compiler derives what is safe from N.)
        a_rows = offs_m % M
        b_cols = offs_n % N
        a_ptrs = a_ptr + a_rows[:, None] * stride_am + offs_k[None, :] * stride_ak
        b_ptrs = b_ptr + offs_k[:, None] * stride_bk + b_cols[None, :] * stride_bn

        acc = tl.full((BLOCK_M, BLOCK_N), 0.0, dtype=tl.float32)  # a builtin (tl.zeros is a jit helper)
        for kb in range(0, (K + BLOCK_K - 1) // BLOCK_K):
            k_left = K - kb * BLOCK_K  # the last K tile is partial: mask it, load zeros past K
            a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
            if CAST_F32:  # the interpreter's 16-bit dot is wrong; compute it in fp32 there
                a = a.to(tl.float32)
                b = b.to(tl.float32)
            acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk

        d_ptrs = d_ptr + offs_m[:, None] * stride_dm + offs_n[None, :] * stride_dn
        tl.store(d_ptrs, acc.to(d_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))

    _STATE["plain"] = _gemm_kernel
    if _cuda_available() and not _interpreting():
        configs = [
            triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": g},
                          num_stages=s, num_warps=w)
            for bm, bn, bk, g, s, w in GPU_CONFIGS
        ]
        tuned = triton.autotune(configs=configs, key=["M", "N", "K", "CAST_F32", "INPUT_PRECISION"])(
            _gemm_kernel)
        _STATE["tuned"] = tuned
    _STATE["kernel"] = _gemm_kernel
    return _gemm_kernel


def _dtype_name(t) -> str:
    import torch

    names = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}
    if t.dtype not in names:
        raise InputError(f"the Triton kernel takes fp32, fp16 or bf16 tensors, got {t.dtype}")
    return names[t.dtype]


def triton_matmul(a, b, *, block: tuple[int, int, int] | None = None, group_m: int = 8,
                  allow_tf32: bool = False, num_stages: int | None = None, num_warps: int | None = None):
    """D = A·B with the tiled Triton kernel; D has A's dtype, accumulation is fp32.

    ``block=(BLOCK_M, BLOCK_N, BLOCK_K)`` fixes the tile (each ≥ 16, powers of 2);
    without it, a GPU run is autotuned and an interpreter run uses
    ``INTERPRETER_CONFIG``. fp32 inputs multiply in full fp32 (``ieee``) unless
    ``allow_tf32``. Tensors must be on the CUDA device on a GPU machine and on the
    CPU under the interpreter.
    """
    import torch

    st = status()
    if not st.available:
        raise InputError(st.reason)
    if a.dim() != 2 or b.dim() != 2:
        raise InputError(f"A and B must be matrices, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    m, k = a.shape
    k2, n = b.shape
    if k != k2:
        raise InputError(f"inner dimensions differ: A is {m}×{k} but B is {k2}×{n}")
    if min(m, n, k) < 1:
        raise InputError("empty matrices")
    if a.dtype != b.dtype:
        raise InputError(f"A and B must share a dtype, got {a.dtype} and {b.dtype}")
    dname = _dtype_name(a)
    want = "cuda" if st.mode == "gpu" else "cpu"
    if a.device.type != want or b.device.type != want:
        raise InputError(f"the Triton kernel runs on {want} tensors here ({st.mode} mode), got {a.device.type}")
    kernel = _build_kernel()
    d = torch.empty((m, n), dtype=a.dtype, device=a.device)
    interp = st.mode == "interpreter"
    cast = bool(interp and dname != "fp32")
    precision = "tf32" if (dname == "fp32" and allow_tf32) else "ieee"
    if dname != "fp32":
        precision = "tf32"  # ignored for 16-bit inputs; one key value keeps the autotune cache small
    args = (a, b, d, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), d.stride(0), d.stride(1))
    if block is None and not interp:
        tuned = _STATE["tuned"]

        def grid(meta):
            return (triton_cdiv(m, meta["BLOCK_M"]) * triton_cdiv(n, meta["BLOCK_N"]),)

        tuned[grid](*args, CAST_F32=cast, INPUT_PRECISION=precision)
        return d
    if block is None:
        bm, bn, bk, gm = INTERPRETER_CONFIG
    else:
        bm, bn, bk = (int(x) for x in block)
        gm = int(group_m)
        for name, v in (("BLOCK_M", bm), ("BLOCK_N", bn), ("BLOCK_K", bk)):
            if v < MIN_BLOCK or v & (v - 1):
                raise InputError(f"{name} must be a power of two ≥ {MIN_BLOCK} (tl.dot's rule), got {v}")
        if gm < 1:
            raise InputError(f"GROUP_M must be at least 1, got {gm}")
    grid = (triton_cdiv(m, bm) * triton_cdiv(n, bn),)
    launch: dict[str, Any] = {}
    if not interp:
        launch["num_stages"] = num_stages if num_stages is not None else (3 if max(bm, bn) >= 128 else 4)
        launch["num_warps"] = num_warps if num_warps is not None else (8 if bm * bn >= 128 * 128 else 4)
    kernel[grid](*args, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm, CAST_F32=cast,
                 INPUT_PRECISION=precision, **launch)
    return d


def triton_cdiv(x: int, y: int) -> int:
    return -(-int(x) // int(y))


def best_config() -> dict | None:
    """The block configuration the autotuner chose last (GPU only), for the page and the report."""
    tuned = _STATE.get("tuned")
    cfg = getattr(tuned, "best_config", None) if tuned is not None else None
    if cfg is None:
        return None
    out = dict(cfg.kwargs)
    out["num_stages"] = cfg.num_stages
    out["num_warps"] = cfg.num_warps
    return out
