"""The precision benchmark: one GEMM shape, six number formats, measured live.

For each shape and each of fp32, tf32, fp16, bf16, int8 and fp8 (e4m3) this runs the
same product D = A·B (A: M×K, B: K×N, random normal fp32 sources) and reports:
time (median, p20, p80), TFLOP/s, the share of the datasheet peak and of the measured
peak (``gemmlib.measure.devices``), the relative error against a float64 product of the same
sources, bytes per element and the memory the operands take.

* fp16/bf16 operands are the fp32 sources rounded; tf32 keeps fp32 storage and lets
  the tensor cores round the multiply to a 10-bit mantissa (NVIDIA Ampere and newer).
* int8 and fp8 are real quantization (``gemmlib.measure.quant``): the "GEMM alone" row times
  only the low-precision product on operands quantized beforehand; the "with
  quantization" row also quantizes the activations A on every call and dequantizes
  the result, with the weights B quantized once ahead of time, as inference does.
* Anything the device cannot do is a row that says why.

``python -m gemmlib bench precision`` and the Precision page both call
``run_precision``; the report calls ``report_section``.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from gemmlib.charts import bench as charts_bench
from gemmlib.charts import optional_chart
from gemmlib.core import ceilings
from gemmlib.core import format as fmt
from gemmlib.core.dtypes import dtype_bytes, get_dtype
from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_, Text
from gemmlib.core.machine import match_catalogue
from gemmlib.core.results import BenchResult, Timing, record, unsupported
from gemmlib.llm.presets import from_name
from gemmlib.measure import harness, quant, safety
from gemmlib.measure.quant import fp8_supported, operand_bytes

PRECISION_DTYPES: tuple[str, ...] = ("fp32", "tf32", "fp16", "bf16", "int8", "fp8")

# The article's INT8 example: M, K, N = 1024, 4096, 1024 (seq_len × d_model by d_model × 1024).
ARTICLE_SHAPE = (1024, 1024, 4096, "article 1024×4096·4096×1024")  # SHAPE_LABELS["article"]

# CPU fp16 GEMMs run without fp16 arithmetic units on most CPUs: ~2 s for 1024³ on a 2-core server.
CPU_FP16_MAX_FLOPS = 2 * 512**3

Shape = tuple[int, int, int, str]  # (M, N, K, label)

# Row notes: pieces joined by "; ", each a constant or one of NOTE_TEMPLATES filled in (a page shows
# them in its language with charts.bench.note_text)
NOTES = {
    "fp16_skipped": N_("skipped: most CPUs have no fp16 arithmetic, torch converts element by element and a "
                       "{m}×{n}×{k} fp16 GEMM would take seconds; fp16 runs on this CPU up to {gflop:.2g} GFLOP "
                       "per call (512³)"),
    "cc80": N_("{dtype} tensor cores need compute capability 8.0 or newer; this GPU is {cc}"),
    "cc75": N_("int8 tensor-core GEMM (`torch._int_mm`) needs compute capability 7.5+; this GPU is {cc}"),
    "mps": N_("{dtype} GEMM is not available through torch on Apple MPS"),
}
QUANTIZED_BEFOREHAND = N_("quantized beforehand")
WEIGHTS_ONCE = N_("weights quantized once")
FP8_GEMM_NOTES = {  # (rowwise scales, fast accumulation) -> the fp8 row's note
    (True, True): N_("e4m3 × e4m3 → bf16 (`torch._scaled_mm`, scales per row of A / per column of B, "
                     "fast accumulation on)"),
    (True, False): N_("e4m3 × e4m3 → bf16 (`torch._scaled_mm`, scales per row of A / per column of B, "
                      "fast accumulation off)"),
    (False, True): N_("e4m3 × e4m3 → bf16 (`torch._scaled_mm`, scales one per tensor, fast accumulation on)"),
    (False, False): N_("e4m3 × e4m3 → bf16 (`torch._scaled_mm`, scales one per tensor, fast accumulation off)"),
}
DISPATCH_NOTE = N_("{call} ran `{kernel}`, a kernel built for sm_{arch} on this sm_{dev} GPU (cuBLASLt's default "
                   "heuristic, no workspace): the shortfall is torch's dispatch, not the number format")
NOTE_TEMPLATES = (*NOTES.values(), *quant.NOTE_TEMPLATES, DISPATCH_NOTE, safety.TIME_LIMIT_REACHED)


@dataclass(frozen=True)
class PrecisionConfig:
    """What to run. Frozen and hashable, so a page can use it as a cache key."""

    device: str = "cpu"
    shapes: tuple[Shape, ...] = ((512, 512, 512, "square 512"),)
    dtypes: tuple[str, ...] = PRECISION_DTYPES
    with_quant: bool = True  # int8/fp8: also time quantize + GEMM + dequantize
    check_error: bool = True  # compute the float64 reference and each row's error
    min_run_time: float = 0.3  # seconds of timing per row
    fp8_fast_accum: bool = True  # torch._scaled_mm(use_fast_accum=...), as inference kernels do
    cpu_fp16_max_flops: float = CPU_FP16_MAX_FLOPS
    seed: int = 0

    def with_dtypes(self, dtypes: tuple[str, ...]) -> PrecisionConfig:
        return replace(self, dtypes=tuple(dtypes))


# --------------------------------------------------------------------------- shapes
def square_shapes(sizes: tuple[int, ...] | list[int]) -> tuple[Shape, ...]:
    return tuple((int(s), int(s), int(s), SHAPE_LABELS["square"].format(n=int(s))) for s in sizes)


# The shapes' labels (English in the results, the CLI and the report); ``shape_label`` reads one
# back into its template and values to show it in another language.
SHAPE_LABELS = {
    "square": N_("square {n}"), "article": N_("article {shape}"),
    "qkv_prefill": N_("{preset} QKV prefill ({batch}×{seq} tokens)"), "up_prefill": N_("{preset} MLP up prefill"),
    "down_prefill": N_("{preset} MLP down prefill"), "qkv_decode": N_("{preset} QKV decode (M={batch})"),
    "up_decode": N_("{preset} MLP up decode (M={batch})"),
}


def shape_label(label: str, gettext: Any = None) -> str:
    """A shape's label (one of ``SHAPE_LABELS`` filled in) through ``gettext``; any other label as it is."""
    if gettext is None or not isinstance(label, str):
        return label
    return charts_bench.render_filled(label, SHAPE_LABELS.values(), gettext) or label


def default_squares(device: str, quick: bool = False) -> tuple[int, ...]:
    if device == "cuda":
        return (2048, 8192) if quick else (1024, 2048, 4096, 8192)
    return (256, 512) if quick else (256, 512, 1024)


# Hand-taken shapes if gemmlib.llm.config is not available: hidden, q_dim + 2·kv_dim, ffn.


def llm_shapes(preset: str = "llama-2-7b", batch: int = 1, seq: int = 512) -> tuple[Shape, ...]:
    """GEMMs of one layer of an estimator preset: prefill at batch × seq tokens, decode at M = batch."""
    safety.check_dims(safety.limits(), batch=batch, seq=seq)
    cfg = from_name(preset)
    hidden, qkv, ffn = cfg.hidden, cfg.q_dim + 2 * cfg.kv_dim, cfg.ffn
    tokens = batch * seq
    return (
        (tokens, qkv, hidden, SHAPE_LABELS["qkv_prefill"].format(preset=preset, batch=batch, seq=seq)),
        (tokens, ffn, hidden, SHAPE_LABELS["up_prefill"].format(preset=preset)),
        (tokens, hidden, ffn, SHAPE_LABELS["down_prefill"].format(preset=preset)),
        (batch, qkv, hidden, SHAPE_LABELS["qkv_decode"].format(preset=preset, batch=batch)),
        (batch, ffn, hidden, SHAPE_LABELS["up_decode"].format(preset=preset, batch=batch)),
    )


def default_shapes(device: str, quick: bool = False) -> tuple[Shape, ...]:
    """Squares plus (full runs) the article's shape and LLM layer shapes, sized for the device."""
    shapes = list(square_shapes(default_squares(device, quick)))
    if device == "cuda":
        shapes.append(ARTICLE_SHAPE)
        shapes.extend(llm_shapes("llama-2-7b", batch=1, seq=2048 if not quick else 512)[:: 1 if not quick else 3])
    elif not quick:
        shapes.append(ARTICLE_SHAPE)
        shapes.append(llm_shapes("llama-2-7b", batch=1, seq=128)[3])  # a decode GEMM, M = 1
    return tuple(shapes)


# --------------------------------------------------------------------------- validation
def normalise_dtypes(dtypes: Any) -> tuple[str, ...]:
    """"fp32,bf16" or a sequence -> canonical names; InputError for unknown or empty."""
    items = dtypes.split(",") if isinstance(dtypes, str) else list(dtypes)
    out: list[str] = []
    for d in items:
        if not str(d).strip():
            continue
        name = get_dtype(d).name
        if name not in PRECISION_DTYPES:
            raise InputError(N_("dtype {dtype!r} is not part of the precision benchmark; choose from {choices}"),
                             dtype=d, choices=", ".join(PRECISION_DTYPES))
        if name not in out:
            out.append(name)
    if not out:
        raise InputError(N_("no dtype given; choose from {choices}"), choices=", ".join(PRECISION_DTYPES))
    return tuple(out)


def _rotation(device: str, set_bytes: float, lim: safety.Limits) -> int:
    if device == "cuda":
        return 1  # triton's do_bench flushes the L2 before every call
    return harness.rotation_count(set_bytes, max_bytes=min(lim.max_bytes / 4, 512 * 1024**2))


def estimate_bytes(cfg: PrecisionConfig, lim: safety.Limits | None = None) -> int:
    """Peak bytes a run allocates at once (largest shape), computed before allocating anything."""
    lim = lim or safety.limits()
    peak = 0
    for m, n, k, _ in cfg.shapes:
        src = (m * k + k * n) * 4
        ref = (m * k + k * n + m * n) * 8 if cfg.check_error else 0
        worst = 0
        for d in cfg.dtypes:
            b = 4 if d == "tf32" else dtype_bytes(d)
            out_b = 4 if d in ("fp32", "tf32", "int8") else 2
            one = (m * k + k * n) * b + m * n * out_b
            if d in ("int8", "fp8"):
                one += (m * k + k * n) * 4 + m * n * 4  # quantization temporaries, int32/fp32 result
            worst = max(worst, one * _rotation(cfg.device, one, lim) + m * n * 4)
        peak = max(peak, src + ref + worst)
    return int(peak)


def validate(cfg: PrecisionConfig, lim: safety.Limits | None = None) -> safety.Limits:
    """All checks that can refuse a run, before anything is allocated. Returns the limits used."""
    lim = lim or safety.limits()
    if not cfg.shapes:
        raise InputError(N_("no shape to run; give M, N and K"))
    if len(cfg.shapes) > 32:
        raise InputError(N_("{n} shapes is too many for one run (at most 32)"), n=len(cfg.shapes))
    for m, n, k, _ in cfg.shapes:
        safety.check_dims(lim, M=m, N=n, K=k)
        if cfg.device == "cpu":
            lim.check_cpu_flops(2 * m * n * k, f"a {m}×{n}×{k} GEMM")
    normalise_dtypes(cfg.dtypes)
    if not (0 < cfg.min_run_time <= 30):
        raise InputError(N_("time per row must be between 0 and 30 s, got {value}"), value=cfg.min_run_time)
    harness.require_device(cfg.device)
    safety.check_memory(estimate_bytes(cfg, lim), cfg.device, lim)
    return lim


# --------------------------------------------------------------------------- running
@contextmanager
def _tf32(enabled: bool) -> Iterator[None]:
    """Allow (or forbid) TF32 tensor cores for fp32 matmuls on CUDA, restoring the setting after."""
    import torch
    m = torch.backends.cuda.matmul
    if hasattr(m, "fp32_precision"):  # torch >= 2.9: the new API (mixing it with allow_tf32 raises)
        old = m.fp32_precision
        m.fp32_precision = "tf32" if enabled else "ieee"
        try:
            yield
        finally:
            m.fp32_precision = old
        return
    old_flag = m.allow_tf32
    m.allow_tf32 = enabled
    try:
        yield
    finally:
        m.allow_tf32 = old_flag


def _cuda_capability() -> tuple[int, int]:
    import torch
    return tuple(torch.cuda.get_device_capability())  # type: ignore[return-value]


def _unsupported_reason(dtype: str, device: str, m: int, n: int, k: int, cfg: PrecisionConfig) -> str:
    """Why ``dtype`` cannot run here, or "" when it can."""
    if device == "cpu":
        if dtype == "tf32":
            return N_("tf32 is a mode of NVIDIA tensor cores (Ampere and newer); a CPU multiplies fp32 "
                      "in full precision, so there is nothing to measure")
        if dtype == "fp16" and 2 * m * n * k > cfg.cpu_fp16_max_flops:
            return NOTES["fp16_skipped"].format(m=m, n=n, k=k, gflop=cfg.cpu_fp16_max_flops / 1e9)
    if device == "cuda":
        cap = _cuda_capability()
        if dtype in ("tf32", "bf16") and cap < (8, 0):
            return NOTES["cc80"].format(dtype=dtype, cc=f"{cap[0]}.{cap[1]}")
        if dtype == "int8" and cap < (7, 5):
            return NOTES["cc75"].format(cc=f"{cap[0]}.{cap[1]}")
    if device == "mps" and dtype in ("tf32", "int8", "fp8"):
        return NOTES["mps"].format(dtype=dtype)
    if dtype == "fp8":
        ok, why = fp8_supported(device)
        if not ok:
            return why
    return ""


def _torch_dtype(name: str) -> Any:
    import torch
    return {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[name]


class _Run:
    """State shared by the rows of one shape: sources, reference, peaks, limits."""

    def __init__(self, cfg: PrecisionConfig, lim: safety.Limits, dev_name: str,
                 datasheet: Any, measured: Any):
        self.cfg, self.lim, self.dev_name = cfg, lim, dev_name
        self.datasheet, self.measured = datasheet, measured

    def row(self, name: str, dtype: str, shape: dict, nbytes: float, **kw: Any) -> BenchResult:
        m, n, k = shape["m"], shape["n"], shape["k"]
        return BenchResult(bench="precision", name=name, device=self.cfg.device, device_name=self.dev_name,
                           dtype=dtype, shape=dict(shape), flops=float(2 * m * n * k), bytes=float(nbytes), **kw)

    def finish(self, r: BenchResult, in_bytes: float, out_bytes: float) -> BenchResult:
        m, n, k = r.shape["m"], r.shape["n"], r.shape["k"]
        r.extra.setdefault("variant", "gemm")
        r.extra["bytes_per_element"] = in_bytes
        r.extra["operand_bytes"] = operand_bytes(m, n, k, in_bytes, out_bytes)
        peak_ds = self.datasheet.peak(r.dtype) if self.datasheet is not None else None
        peak_ms = self.measured.peak(r.dtype) if self.measured is not None else None
        r.extra["peak_datasheet_tflops"] = peak_ds / 1e12 if peak_ds else None
        r.extra["peak_measured_tflops"] = peak_ms / 1e12 if peak_ms else None
        t = r.tflops
        r.extra["share_datasheet"] = t * 1e12 / peak_ds if (t and peak_ds) else None
        r.extra["share_measured"] = t * 1e12 / peak_ms if (t and peak_ms) else None
        return r


def _time(fn: Callable[..., Any], sets: list[tuple], cfg: PrecisionConfig) -> Timing:
    return harness.time_callable(fn, device=cfg.device, args_list=sets, min_run_time=cfg.min_run_time,
                                 warmup=3)


def _float_rows(run: _Run, dtype: str, shape: dict, a0: Any, b0: Any, ref: Any, n_rot: int) -> list[BenchResult]:
    import torch
    cfg = run.cfg
    m, n, k = shape["m"], shape["n"], shape["k"]
    td = _torch_dtype(dtype)
    sets = [(a0.to(td), b0.to(td))]
    for i in range(1, n_rot):
        g = torch.Generator(device="cpu").manual_seed(cfg.seed + 1000 + i)
        sets.append((torch.randn(m, k, generator=g).to(cfg.device, td),
                     torch.randn(k, n, generator=g).to(cfg.device, td)))
    b = 4 if dtype == "tf32" else dtype_bytes(dtype)
    with _tf32(dtype == "tf32") if cfg.device == "cuda" else _nullcontext():
        out = torch.matmul(*sets[0])
        err = harness.rel_error(out, ref) if ref is not None else None
        del out
        t = _time(torch.matmul, sets, cfg)
    note = {"tf32": N_("fp32 storage, TF32 tensor-core multiply (`torch.backends.cuda.matmul` TF32 on)"),
            "fp32": N_("full fp32 (TF32 off)") if cfg.device == "cuda" else "",
            "fp16": N_("fp16 operands, fp32 accumulation"), "bf16": N_("bf16 operands, fp32 accumulation")}[dtype]
    r = run.row(dtype, dtype, shape, (m * k + k * n + m * n) * b, rel_error=err, reason=note)
    r.set_timing(t)
    r.extra["rotated_sets"] = n_rot
    return [run.finish(r, b, b)]


@contextmanager
def _nullcontext() -> Iterator[None]:
    yield


def _activations(a0: Any, n_rot: int, cfg: PrecisionConfig, seed_offset: int) -> tuple[Any, int, list]:
    """The activation dtype of a "+ quant" row (bf16 on a GPU, fp32 on a CPU), its bytes, and
    ``n_rot`` rotated activation sets, the first being ``a0``. The rotations use the same seeds as
    the quantized-beforehand rows, so both rows see the same inputs."""
    import torch

    act = torch.bfloat16 if cfg.device == "cuda" else torch.float32
    acts = [a0.to(act)]
    for i in range(1, n_rot):
        g = torch.Generator(device="cpu").manual_seed(cfg.seed + seed_offset + i)
        acts.append(torch.randn(a0.shape[0], a0.shape[1], generator=g).to(cfg.device, act))
    return act, (2 if act == torch.bfloat16 else 4), acts


# Architecture names in library kernel names (cuBLAS / CUTLASS), as compute capability × 10.
_ARCH_WORDS = {"volta": 70, "turing": 75, "ampere": 80, "ada": 89, "hopper": 90, "blackwell": 100}


def kernel_arch(name: str) -> int | None:
    """The architecture a library kernel was built for, from its name (sm_80 -> 80), or None.

    cuBLAS/CUTLASS names carry it as ``sm90_xmma_…``, ``cutlass_80_tensorop_…`` or a code name
    (``ampere_…``); cuBLAS's ``nvjet_…`` kernels exist for Hopper and newer only.
    """
    low = str(name).lower()
    found = [int(x) for x in re.findall(r"(?:^|[^a-z0-9])sm_?(\d{2,3})(?!\d)", low)]
    found += [int(x) for x in re.findall(r"cutlass_?(\d{2,3})_", low)]
    for word, arch in _ARCH_WORDS.items():
        if re.search(rf"(?:^|[^a-z]){word}(?:[^a-z]|$)", low):
            found.append(arch)
    if not found and "nvjet" in low:
        return 90
    return max(found) if found else None


def dispatch_note(kernels: list[str], capability: tuple[int, int] | None, call: str = "torch._int_mm") -> str:
    """A sentence when the busiest kernel of ``call`` was built for an older GPU than this one.

    torch._int_mm calls cuBLASLt with its default heuristic and no workspace; on a new GPU that
    can pick a kernel for an older architecture, far below the tensor cores' int8 rate. Then a
    slow int8 row is torch's dispatch, not int8 itself, and the verdict must say so.
    """
    if not kernels or capability is None:
        return ""
    arch = kernel_arch(kernels[0])
    dev = int(capability[0]) * 10 + int(capability[1])
    if arch is None or arch >= dev:
        return ""
    short = kernels[0] if len(kernels[0]) <= 90 else kernels[0][:87] + "…"
    return DISPATCH_NOTE.format(call=call, kernel=short, arch=arch, dev=dev)


def _note_kernels(r: BenchResult, fn: Callable[[], Any], device: str, call: str) -> None:
    """On a GPU, name the kernels ``fn`` launches (most time first) and flag an old-architecture one."""
    if device != "cuda":
        return
    try:
        names = harness.kernel_names(fn, device)
    except Exception as e:  # noqa: BLE001 - naming kernels is a bonus; the timing stands without it
        r.extra["kernels_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
        return
    r.extra["kernels"] = names[:3]
    note = dispatch_note(names, _cuda_capability(), call)
    if note:
        r.extra["dispatch_note"] = note
        r.reason = (r.reason + "; " if r.reason else "") + note


def _int8_rows(run: _Run, shape: dict, a0: Any, b0: Any, ref: Any, n_rot: int) -> list[BenchResult]:
    import torch

    cfg = run.cfg
    m, n, k = shape["m"], shape["n"], shape["k"]
    ops = [quant.prepare_int8(a0, b0)]
    for i in range(1, n_rot):
        g = torch.Generator(device="cpu").manual_seed(cfg.seed + 2000 + i)
        ops.append(quant.prepare_int8(torch.randn(m, k, generator=g).to(cfg.device),
                                      torch.randn(k, n, generator=g).to(cfg.device)))
    pad = ops[0].padding
    err = harness.rel_error(ops[0].result(torch.float32), ref) if ref is not None else None
    t = _time(torch._int_mm, [(o.a_q, o.b_q) for o in ops], cfg)
    why = N_("int8×int8→int32 (`torch._int_mm`), scales per row of A and per column of B") + "; " + QUANTIZED_BEFOREHAND
    if pad.padded:
        why += "; " + pad.note()
    r = run.row("int8", "int8", shape, m * k + k * n + 4 * m * n, rel_error=err, reason=why)
    r.set_timing(t)
    r.extra.update(variant="gemm", padded_shape=[pad.pm, pad.pn, pad.pk], rotated_sets=n_rot)
    _note_kernels(r, lambda: torch._int_mm(ops[0].a_q, ops[0].b_q), cfg.device, "torch._int_mm")
    rows = [run.finish(r, 1, 4)]
    if not cfg.with_quant:
        return rows
    # Activations quantized on every call (dynamic), weights quantized once (offline), result dequantized.
    act, act_b, acts = _activations(a0, n_rot, cfg, seed_offset=2000)

    def linear(a: Any, w: quant.Int8Operands) -> Any:
        a_q, sa = quant.quantize_rows_int8(a)
        p = w.padding
        if p.padded:
            a_q = quant._pad2(a_q, p.pm, p.pk)
        c = torch._int_mm(a_q, w.b_q)
        if p.padded:
            c = c[:m, :n]
        return quant.dequantize(c, sa, w.scale_b[:, :n], act)

    out = linear(acts[0], ops[0])
    err2 = harness.rel_error(out, ref) if ref is not None else None
    del out
    t2 = _time(linear, list(zip(acts, ops, strict=True)), cfg)
    r2 = run.row("int8 + quant", "int8", shape, m * k * act_b + k * n + m * n * act_b, rel_error=err2,
                 reason=(N_("quantize A (bf16) per call + `torch._int_mm` + dequantize") if act_b == 2 else
                         N_("quantize A (fp32) per call + `torch._int_mm` + dequantize")) + "; " + WEIGHTS_ONCE)
    r2.set_timing(t2)
    r2.extra.update(variant="with quant", rotated_sets=n_rot)
    rows.append(run.finish(r2, 1, act_b))
    return rows


def _fp8_rows(run: _Run, shape: dict, a0: Any, b0: Any, ref: Any, n_rot: int) -> list[BenchResult]:
    import torch

    cfg = run.cfg
    m, n, k = shape["m"], shape["n"], shape["k"]
    note = quant.fp8_supported(cfg.device)[1]

    def prep(a: Any, b: Any, rowwise: bool | None) -> quant.Fp8Operands:
        return quant.prepare_fp8(a, b, rowwise=rowwise, fast_accum=cfg.fp8_fast_accum)

    rowwise: bool | None = None
    op0 = prep(a0, b0, rowwise)
    try:
        out = op0.result()
    except RuntimeError as e:  # rowwise scaling missing in this torch/cuBLASLt: fall back to one scale
        if not op0.rowwise:
            raise
        rowwise = False
        note = (note + "; " if note else "") + f"rowwise scales refused ({str(e).splitlines()[0][:60]}), tensor-wise used"
        op0 = prep(a0, b0, rowwise)
        out = op0.result()
    err = harness.rel_error(out, ref) if ref is not None else None
    del out
    ops = [op0]
    for i in range(1, n_rot):
        g = torch.Generator(device="cpu").manual_seed(cfg.seed + 3000 + i)
        ops.append(prep(torch.randn(m, k, generator=g).to(cfg.device), torch.randn(k, n, generator=g).to(cfg.device),
                        rowwise))
    t = _time(quant.Fp8Operands.matmul, [(o,) for o in ops], cfg)
    pad = op0.padding
    why = FP8_GEMM_NOTES[(op0.rowwise, bool(cfg.fp8_fast_accum))] + "; " + QUANTIZED_BEFOREHAND
    if pad.padded:
        why += "; " + pad.note("torch._scaled_mm needs K and N multiples of 16")
    if note:
        why += "; " + note
    r = run.row("fp8", "fp8", shape, m * k + k * n + 2 * m * n, rel_error=err, reason=why)
    r.set_timing(t)
    _note_kernels(r, op0.matmul, cfg.device, "torch._scaled_mm")
    r.extra.update(variant="gemm", rowwise=op0.rowwise, rotated_sets=n_rot,
                   padded_shape=[pad.pm, pad.pn, pad.pk])
    rows = [run.finish(r, 1, 2)]
    if not cfg.with_quant:
        return rows
    act, act_b, acts = _activations(a0, n_rot, cfg, seed_offset=3000)

    def linear(a: Any, w: quant.Fp8Operands) -> Any:
        a_q, sa = quant.quantize_fp8(a, dim=1 if w.rowwise else None)
        if w.rowwise:
            sa = quant.roomy_scale(sa, 0)
        p = w.padding
        if p.padded:
            a_q = quant._pad_fp8(a_q, p.pm, p.pk)
        c = quant.scaled_mm(a_q, w.b_q, sa, w.scale_b, w.out_dtype, w.fast_accum)
        return c[:m, :n] if p.padded else c

    out = linear(acts[0], ops[0])
    err2 = harness.rel_error(out, ref) if ref is not None else None
    del out
    t2 = _time(linear, list(zip(acts, ops, strict=True)), cfg)
    r2 = run.row("fp8 + quant", "fp8", shape, m * k * act_b + k * n + 2 * m * n, rel_error=err2,
                 reason=N_("quantize A to e4m3 per call + `torch._scaled_mm` (dequantizes in its epilogue)") + "; "
                 + WEIGHTS_ONCE + ("; " + note if note else ""))
    r2.set_timing(t2)
    r2.extra.update(variant="with quant", rowwise=op0.rowwise, rotated_sets=n_rot)
    rows.append(run.finish(r2, 1, 2))
    return rows


def run_precision(cfg: PrecisionConfig, progress: Callable[[float, str], None] | None = None,
                  deadline: safety.Deadline | None = None, record_results: bool = True,
                  lim: safety.Limits | None = None) -> list[BenchResult]:
    """Run every (shape, dtype) of ``cfg``; one or two rows per pair, unsupported ones saying why."""
    import torch

    lim = validate(cfg, lim)
    dtypes = normalise_dtypes(cfg.dtypes)
    cfg = replace(cfg, dtypes=dtypes)
    dev = cfg.device
    deadline = deadline or safety.Deadline(lim.time_limit_s)
    dev_name = harness.device_name(dev)
    datasheet = match_catalogue(dev_name)[0] if dev != "cpu" else None
    measured = ceilings.find_hardware(dev, dev_name)
    run = _Run(cfg, lim, dev_name, datasheet, measured)
    total = len(cfg.shapes) * len(dtypes)
    done = 0
    results: list[BenchResult] = []
    for m, n, k, label in cfg.shapes:
        shape = {"m": m, "n": n, "k": k, "label": label}
        if deadline.expired():
            for d in dtypes:
                results.append(unsupported("precision", d, dev, d, shape, deadline.reason(), dev_name,
                                                   2 * m * n * k))
            done += len(dtypes)
            continue
        with safety.oom_guard(dev):
            g = torch.Generator(device="cpu").manual_seed(cfg.seed)
            a0 = torch.randn(m, k, generator=g).to(dev)
            b0 = torch.randn(k, n, generator=g).to(dev)
            ref = None
            if cfg.check_error:
                ref_dev = dev if dev != "mps" else "cpu"  # MPS has no float64
                ref = a0.to(ref_dev, torch.float64) @ b0.to(ref_dev, torch.float64)
        for d in dtypes:
            if progress:
                progress(done / total, Text(N_("{dtype} on {label} ({m}×{n}×{k})"), dtype=d,
                                             label=Text.reworded(label, SHAPE_LABELS.values()), m=m, n=n, k=k))
            why = _unsupported_reason(d, dev, m, n, k, cfg)
            if not why and deadline.expired():
                why = deadline.reason()
            if why:
                results.append(run.finish(
                    unsupported("precision", d, dev, d, shape, why, dev_name, 2 * m * n * k),
                    4 if d == "tf32" else dtype_bytes(d), 4 if d in ("fp32", "tf32", "int8") else 2))
            else:
                one = 4 if d == "tf32" else dtype_bytes(d)
                set_bytes = (m * k + k * n + m * n) * one
                n_rot = _rotation(dev, set_bytes, lim)
                wall0 = time.perf_counter()  # the whole (shape, format): inputs, error check, timing
                try:
                    with safety.oom_guard(dev):
                        if d == "int8":
                            rows = _int8_rows(run, shape, a0, b0, ref, n_rot)
                        elif d == "fp8":
                            rows = _fp8_rows(run, shape, a0, b0, ref, n_rot)
                        else:
                            rows = _float_rows(run, d, shape, a0, b0, ref, n_rot)
                except InputError as e:  # out of memory, turned into advice by oom_guard
                    rows = [unsupported("precision", d, dev, d, shape, str(e), dev_name, 2 * m * n * k)]
                except (RuntimeError, NotImplementedError, TypeError) as e:
                    first = str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
                    rows = [unsupported("precision", d, dev, d, shape,
                                                f"failed on this device: {first}", dev_name, 2 * m * n * k)]
                for r in rows:  # for gemmlib.measure.plan: what a row really costs here
                    r.extra["wall_s"] = (time.perf_counter() - wall0) / len(rows)
                results.extend(rows)
                if dev == "cuda":
                    torch.cuda.empty_cache()
            done += 1
        del a0, b0, ref
    if progress:
        progress(1.0, Text(N_("done")))
    if record_results:
        record(results)
    return results


# --------------------------------------------------------------------------- reading the results
def int8_verdict(results: list[BenchResult]) -> str:
    """One line checking the article's INT8 claims (75 % less bandwidth, 2–4× faster) on these results."""
    by_shape: dict[str, dict[str, BenchResult]] = {}
    for r in results:
        if r.bench in ("precision", "ceiling") and r.supported and r.median_s:
            key = r.shape.get("label") or f"{r.shape.get('m')}×{r.shape.get('n')}×{r.shape.get('k')}"
            by_shape.setdefault(key, {})[r.name] = r
    # Prefer the largest shape that has both fp32 and int8.
    best = None
    for label, rows in by_shape.items():
        if "int8" in rows and "fp32" in rows:
            f = rows["fp32"].flops
            if best is None or f > best[1]["fp32"].flops:
                best = (label, rows)
    if best is None:
        return Text(N_("INT8 claims not checked: this run has no int8 and fp32 pair on the same shape."))
    label, rows = best
    i8, f32 = rows["int8"], rows["fp32"]
    m, n, k = i8.shape["m"], i8.shape["n"], i8.shape["k"]
    operand_saving = 1 - (m * k + k * n) * 1 / ((m * k + k * n) * 4)
    total_saving = 1 - i8.bytes / f32.bytes
    speed = f32.median_s / i8.median_s
    if speed < 2:
        judged = Text(N_("below the claimed 2–4× ({speed:.2f}× fp32)"), speed=speed)
    elif speed <= 4:
        judged = Text(N_("within the claimed 2–4× ({speed:.2f}× fp32)"), speed=speed)
    else:
        judged = Text(N_("above the claimed 2–4× ({speed:.2f}× fp32)"), speed=speed)
    parts = [Text(N_("INT8 on {dev}, {shape}: operands {operand_saving:.0%} smaller than fp32 (with the int32 "
                     "output {total_saving:.0%} fewer bytes in all); GEMM speed {judged}"),
                  dev=i8.device_name, shape=label, operand_saving=operand_saving, total_saving=total_saving,
                  judged=judged)]
    for base in ("bf16", "fp16"):
        if base in rows:
            parts.append(Text(N_("{ratio:.2f}× {base}, the fair baseline"), ratio=rows[base].median_s / i8.median_s,
                              base=base))
            break
    if "int8 + quant" in rows:
        parts.append(Text(N_("{ratio:.2g}× fp32 with quantization included"),
                          ratio=f32.median_s / rows["int8 + quant"].median_s))
    if i8.extra.get("dispatch_note"):
        parts.append(i8.extra["dispatch_note"])
    elif i8.extra.get("kernels"):
        parts.append(Text(N_("kernel `{kernel}`"), kernel=i8.extra["kernels"][0][:80]))
    return Text(N_("{parts}."), parts=Text.joined(parts))


def summary_rows(results: list[BenchResult]) -> list[dict]:
    """Table rows for pages and the report (rounded, readable column names)."""
    out = []
    for r in results:
        e = r.extra
        out.append({
            "shape": r.shape.get("label") or f"{r.shape.get('m')}×{r.shape.get('n')}×{r.shape.get('k')}",
            "M×N×K": f"{r.shape.get('m')}×{r.shape.get('n')}×{r.shape.get('k')}",
            "format": r.name,
            "supported": r.supported,
            "median ms": r.median_s * 1e3 if r.median_s else None,
            "p20 ms": r.p20_s * 1e3 if r.p20_s else None,
            "p80 ms": r.p80_s * 1e3 if r.p80_s else None,
            "TFLOP/s": r.tflops,
            "% datasheet": 100 * e["share_datasheet"] if e.get("share_datasheet") else None,
            "% measured peak": 100 * e["share_measured"] if e.get("share_measured") else None,
            "rel. error": r.rel_error,
            "bytes/elem": e.get("bytes_per_element"),
            "operand MiB": e["operand_bytes"] / 1024**2 if e.get("operand_bytes") else None,
            "note": r.reason,
        })
    return out


def markdown_table(results: list[BenchResult]) -> str:
    rows = summary_rows(results)
    cols = ["M×N×K", "format", "median ms", "TFLOP/s", "% datasheet", "% measured peak", "rel. error",
            "bytes/elem", "note"]

    shown = [row if row["supported"] else {**row, "median ms": None, "note": "**not run:** " + (row["note"] or "")}
             for row in rows]
    return fmt.markdown_table(shown, cols)


def report_section(device: str, quick: bool, out_dir: Path, progress: Callable[[float, str], None] | None = None,
                   deadline: safety.Deadline | None = None) -> dict:
    """The report's precision section: default shapes for the device, table, verdict and charts."""

    cfg = PrecisionConfig(device=device, shapes=default_shapes(device, quick),
                          min_run_time=0.15 if quick else 0.3)
    results = run_precision(cfg, progress=progress, deadline=deadline)
    verdict = int8_verdict(results)
    md = "\n\n".join([
        "Each format runs the same product of random normal fp32 sources; the error is against a float64 "
        "product of those sources. int8/fp8 rows marked “+ quant” include quantizing the activations on "
        "every call.",
        f"**Verdict:** {verdict}",
        markdown_table(results),
    ])
    charts = {}
    if any(r.supported and r.tflops for r in results):
        def _charts() -> dict:
            return {"precision_tflops": charts_bench.tflops_chart(results),
                    "precision_error": charts_bench.error_chart(results)}
        charts = optional_chart(_charts) or {}
    return {"title": "Precision: fp32, tf32, fp16, bf16, int8, fp8", "results": results, "markdown": md,
            "charts": charts, "verdict": verdict}


def finite(x: float | None) -> bool:
    return x is not None and math.isfinite(x)
