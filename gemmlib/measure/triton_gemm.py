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
from dataclasses import dataclass, replace
from typing import Any

from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_

# Block configurations offered to the autotuner on a GPU: (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, stages, warps).
# Large tiles with deep pipelines suit Hopper/Ampere at big sizes; the smaller ones cover small or skinny GEMMs.
# Every one compiles for sm_90 without spilling a register (offline_resources; tests/measure/test_triton_gemm.py
# checks it with ptxas): 16-bit inputs go to the tensor cores from shared memory, so the fp32 accumulator is
# what the registers hold.
GPU_CONFIGS: tuple[tuple[int, int, int, int, int, int], ...] = (
    (128, 256, 64, 8, 3, 8),
    (256, 128, 64, 8, 3, 8),
    (128, 128, 64, 8, 4, 4),
    (128, 128, 64, 8, 4, 8),
    (128, 64, 64, 8, 4, 4),
    (64, 128, 64, 8, 4, 4),
    (64, 64, 32, 8, 4, 4),
)
# fp32 inputs hold twice the bytes per element, and full-precision (ieee) products run on the FMA units with
# both operand tiles in registers: the large 16-bit configurations spill 5.8 KB per thread there. These do not
# (in ieee or tf32).
GPU_CONFIGS_FP32: tuple[tuple[int, int, int, int, int, int], ...] = (
    (128, 128, 32, 8, 3, 8),
    (128, 64, 32, 8, 4, 4),
    (64, 64, 32, 8, 4, 8),
)
# GEMM_TRITON_AUTOTUNE=small offers the autotuner one configuration of each list (the first): with a cold
# Triton cache every configuration compiles for every new shape, and the GPU session's test step must fit its
# time budget (scripts/gpu_report.sh sets it there; the page, the report and the benchmarks tune over all).
AUTOTUNE_ENV = "GEMM_TRITON_AUTOTUNE"


def autotune_configs() -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
    """(16-bit configurations, fp32 configurations) offered to the autotuner: all, or with
    ``GEMM_TRITON_AUTOTUNE=small`` the first of each."""
    import os

    if os.environ.get(AUTOTUNE_ENV, "").strip().lower() == "small":
        return GPU_CONFIGS[:1], GPU_CONFIGS_FP32[:1]
    return GPU_CONFIGS, GPU_CONFIGS_FP32


# A thread has at most 255 registers; a BLOCK_M × BLOCK_N fp32 accumulator spread over the block's threads
# needs BLOCK_M·BLOCK_N / (32·warps) of them. Past half of them (256×256 tiles even with 16 warps) ptxas
# spills or gives up: such a tile would measure spills, not tiling, and is refused.
MAX_ACCUMULATOR_REGISTERS = 128
MAX_WARPS = 8  # 255 registers × 32 threads × 8 warps is the whole 64 K-register file of an SM
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
                          N_("no CUDA device: the Triton kernel runs in Triton's interpreter on the CPU — "
                             "a correctness check only, its time is not a speed figure"))
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


def _define_kernel():
    """The kernel, decorated with ``triton.jit`` as this process's settings say (JIT or interpreter)."""
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

    return _gemm_kernel


def _build_kernel():
    """Define the Triton kernel (once). Autotuned on a GPU, one fixed block config in the interpreter."""
    if "kernel" in _STATE:
        return _STATE["kernel"]
    import triton

    _gemm_kernel = _define_kernel()
    _STATE["plain"] = _gemm_kernel
    if _cuda_available() and not _interpreting():
        sixteen, thirty_two = autotune_configs()
        configs = [
            triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": g},
                          num_stages=s, num_warps=w)
            for bm, bn, bk, g, s, w in sixteen
        ]
        configs32 = [
            triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": g},
                          num_stages=s, num_warps=w)
            for bm, bn, bk, g, s, w in thirty_two
        ]
        key = ["M", "N", "K", "CAST_F32", "INPUT_PRECISION"]
        _STATE["tuned"] = triton.autotune(configs=configs, key=key)(_gemm_kernel)
        _STATE["tuned_fp32"] = triton.autotune(configs=configs32, key=key)(_gemm_kernel)
    _STATE["kernel"] = _gemm_kernel
    return _gemm_kernel


def _dtype_name(t) -> str:
    import torch

    names = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}
    if t.dtype not in names:
        raise InputError(N_("the Triton kernel takes fp32, fp16 or bf16 tensors, got {dtype}"), dtype=str(t.dtype))
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
        raise InputError(st.reason)  # a finished sentence of status() (English: not in the catalogue)
    if a.dim() != 2 or b.dim() != 2:
        raise InputError(N_("A and B must be matrices, got shapes {a} and {b}"), a=tuple(a.shape), b=tuple(b.shape))
    m, k = a.shape
    k2, n = b.shape
    if k != k2:
        raise InputError(N_("inner dimensions differ: A is {m}×{k} but B is {k2}×{n}"), m=m, k=k, k2=k2, n=n)
    if min(m, n, k) < 1:
        raise InputError(N_("empty matrices"))
    if a.dtype != b.dtype:
        raise InputError(N_("A and B must share a dtype, got {a} and {b}"), a=str(a.dtype), b=str(b.dtype))
    dname = _dtype_name(a)
    want = "cuda" if st.mode == "gpu" else "cpu"
    if a.device.type != want or b.device.type != want:
        raise InputError(N_("the Triton kernel runs on {want} tensors here ({mode} mode), got {got}"), want=want,
                         mode=st.mode, got=a.device.type)
    kernel = _build_kernel()
    d = torch.empty((m, n), dtype=a.dtype, device=a.device)
    interp = st.mode == "interpreter"
    cast = bool(interp and dname != "fp32")
    precision = "tf32" if (dname == "fp32" and allow_tf32) else "ieee"
    if dname != "fp32":
        precision = "tf32"  # ignored for 16-bit inputs; one key value keeps the autotune cache small
    check_offsets(a, b, d)
    args = (a, b, d, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), d.stride(0), d.stride(1))
    if block is None and not interp:
        tuned = _STATE["tuned_fp32" if dname == "fp32" else "tuned"]
        _STATE["last_tuned"] = tuned

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
                raise InputError(N_("{name} must be a power of two ≥ {least} (`tl.dot`'s rule), got {value}"), name=name,
                                 least=MIN_BLOCK, value=v)
        if gm < 1:
            raise InputError(N_("GROUP_M must be at least 1, got {value}"), value=gm)
    grid = (triton_cdiv(m, bm) * triton_cdiv(n, bn),)
    launch: dict[str, Any] = {}
    if not interp:
        stages, warps = launch_for(bm, bn, dname)
        launch["num_stages"] = num_stages if num_stages is not None else stages
        launch["num_warps"] = num_warps if num_warps is not None else warps
        why = tile_spills(bm, bn, launch["num_warps"])
        if why:
            raise InputError(why)  # tile_spills()'s finished sentence (English: not in the catalogue)
    kernel[grid](*args, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm, CAST_F32=cast,
                 INPUT_PRECISION=precision, **launch)
    return d


def launch_for(bm: int, bn: int, dtype: str) -> tuple[int, int]:
    """(num_stages, num_warps) for an explicit block: 8 warps from 128×128 up (fp32 from 64×64 up,
    whose operand tiles sit in registers too), a shallower pipeline for the big tiles."""
    big = bm * bn >= (64 * 64 if dtype == "fp32" else 128 * 128)
    return (3 if max(bm, bn) >= 128 else 4), (MAX_WARPS if big else 4)


def tile_spills(bm: int, bn: int, num_warps: int) -> str:
    """Why a BLOCK_M × BLOCK_N tile cannot run without spilling registers ('' when it can)."""
    regs = bm * bn / (32 * num_warps)
    if regs > MAX_ACCUMULATOR_REGISTERS:
        return (f"a {bm}×{bn} tile keeps a {bm}×{bn} fp32 accumulator: {regs:.0f} registers per thread with "
                f"{num_warps} warps, more than half of the 255 a thread has — it spills to local memory (or does "
                f"not compile), so it would time the spills, not the tiling; real kernels stop at 128×256")
    return ""


# Triton computes each element's offset from the base pointer as row·stride + column in 32-bit
# integers; past 2³¹ − 1 it wraps, and the kernel reads or writes out of bounds — an illegal address
# that kills the CUDA context of the whole process (every session of a server).
MAX_OFFSET = 2**31 - 1


def max_offset(shape: tuple[int, ...], strides: tuple[int, ...]) -> int:
    """The largest element offset a tensor of this shape and these strides reaches from its start."""
    return sum((int(n) - 1) * abs(int(st)) for n, st in zip(shape, strides, strict=True) if n > 0)


def check_offsets(*tensors: Any) -> None:
    """InputError when any operand reaches an element offset that does not fit a 32-bit integer."""
    for name, t in zip("ABD", tensors, strict=False):
        off = max_offset(tuple(t.shape), tuple(t.stride()))
        if off >= MAX_OFFSET:  # 2³¹ elements or more: refuse with a margin of one element
            raise InputError(N_("{name} is {shape}: its elements reach offset {offset:,}, past 2³¹ − 1, and the Triton "
                                "kernel indexes with 32-bit integers (it would address memory out of bounds and kill "
                                "the CUDA context); use sizes with fewer than 2³¹ elements per matrix"),
                             name=name, shape="×".join(map(str, t.shape)), offset=off)


def triton_cdiv(x: int, y: int) -> int:
    return -(-int(x) // int(y))


def best_config() -> dict | None:
    """The block configuration the autotuner chose last (GPU only), for the page and the report."""
    tuned = _STATE.get("last_tuned")
    cfg = getattr(tuned, "best_config", None) if tuned is not None else None
    if cfg is None:
        return None
    out = dict(cfg.kwargs)
    out["num_stages"] = cfg.num_stages
    out["num_warps"] = cfg.num_warps
    return out


# --------------------------------------------------------------------------- offline compilation (no GPU needed)
@dataclass(frozen=True)
class Resources:
    """What one compiled configuration of the kernel needs on a target GPU (ptxas's own report)."""

    arch: int  # compute capability × 10 (90 = sm_90, Hopper)
    block: tuple[int, int, int]
    num_warps: int
    num_stages: int
    dtype: str
    registers: int = 0  # per thread (255 is the hardware's cap)
    spill_bytes: int = 0  # per thread, stored to local memory because the registers ran out
    stack_bytes: int = 0  # per thread stack frame
    shared_bytes: int = 0  # per block
    error: str = ""  # the compiler's refusal, when it could not compile the configuration at all

    @property
    def spills(self) -> bool:
        """True when this configuration would measure spills, not tiling (or does not compile)."""
        return bool(self.error) or self.spill_bytes > 0


def offline_resources(block: tuple[int, int, int], num_warps: int, num_stages: int, dtype: str = "fp16", *,
                      m: int = 4096, n: int = 4096, k: int = 4096, allow_tf32: bool = False,
                      arch: int = 90) -> Resources:
    """Compile the kernel for ``sm_<arch>`` on this machine — no GPU needed — and read the
    registers, spills, stack and shared memory ptxas reports (Triton's NVIDIA backend ships ptxas).

    The arguments are specialised exactly as a launch on contiguous M×K, K×N tensors would be
    (Triton's own binder: unit strides become constants, sizes divisible by 16 get that hint), so
    the compiled code is the one a GPU run gets.
    """
    import contextlib
    import io
    import re
    import subprocess
    import tempfile

    import torch
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.compiler import get_ptxas, sm_arch_from_capability
    from triton.compiler.compiler import ASTSource, make_backend
    from triton.runtime.jit import create_function_from_signature

    tdt = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dtype]
    old = os.environ.get("TRITON_INTERPRET")
    os.environ["TRITON_INTERPRET"] = "0"  # a real JIT function, even in a process that interprets
    try:
        kernel = _define_kernel()
    finally:
        if old is None:
            os.environ.pop("TRITON_INTERPRET", None)
        else:
            os.environ["TRITON_INTERPRET"] = old
    target = GPUTarget("cuda", int(arch), 32)
    backend = make_backend(target)
    a, b, d = torch.empty(m, k, dtype=tdt), torch.empty(k, n, dtype=tdt), torch.empty(m, n, dtype=tdt)
    precision = "tf32" if (dtype != "fp32" or allow_tf32) else "ieee"
    bm, bn, bk = (int(x) for x in block)
    kwargs = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, CAST_F32=False, INPUT_PRECISION=precision,
                  num_warps=int(num_warps), num_stages=int(num_stages))
    binder = create_function_from_signature(kernel.signature, kernel.params, backend)
    bound, specialization, options = binder(a, b, d, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                            d.stride(0), d.stride(1), **kwargs)
    options, signature, constexprs, attrs = kernel._pack_args(backend, kwargs, bound, specialization, options)
    base = Resources(int(arch), (bm, bn, bk), int(num_warps), int(num_stages), dtype)
    noise = io.StringIO()  # Triton prints the whole PTX when ptxas refuses a configuration
    try:
        with contextlib.redirect_stdout(noise), contextlib.redirect_stderr(noise):
            compiled = triton.compile(ASTSource(kernel, signature, constexprs, attrs), target=target,
                                      options=options.__dict__)
    except Exception as e:  # noqa: BLE001 - e.g. ptxas: "Insufficient registers"
        lines = [ln.strip() for ln in str(e).splitlines() if "fatal" in ln]
        return replace(base, error=(lines[0] if lines else str(e).splitlines()[0])[:240])
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "kernel.ptx")
        with open(src, "w", encoding="utf-8") as f:
            f.write(compiled.asm["ptx"])
        cmd = [get_ptxas(int(arch)).path, "-lineinfo", "-v", "--regAllocOptLevel=2",
               f"--gpu-name={sm_arch_from_capability(int(arch))}", src, "-o", os.path.join(tmp, "kernel.o")]
        log = subprocess.run(cmd, capture_output=True, text=True, check=True).stderr

    def grab(pattern: str) -> int:
        hit = re.search(pattern, log)
        return int(hit.group(1)) if hit else 0

    return replace(base, registers=grab(r"Used (\d+) registers"), spill_bytes=grab(r"(\d+) bytes spill stores"),
                   stack_bytes=grab(r"(\d+) bytes stack frame"), shared_bytes=int(compiled.metadata.shared))
