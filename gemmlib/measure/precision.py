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

import functools
import math
import re
import sys
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
from gemmlib.core.i18n import N_, Msg, Text
from gemmlib.core.machine import light_summary, match_catalogue
from gemmlib.core.results import BenchResult, Timing, record, unsupported
from gemmlib.llm.presets import from_name
from gemmlib.measure import harness, plan, quant, safety
from gemmlib.measure.quant import fp8_supported, operand_bytes
from gemmlib.measure.spec import BenchSpec

PRECISION_DTYPES: tuple[str, ...] = ("fp32", "tf32", "fp16", "bf16", "int8", "fp8")

# The article's INT8 example: M, K, N = 1024, 4096, 1024 (seq_len × d_model by d_model × 1024).
ARTICLE_SHAPE = (1024, 1024, 4096, Text(N_("article {shape}"), shape="1024×4096·4096×1024"))  # SHAPE_LABELS["article"]

# CPU fp16 GEMMs run without fp16 arithmetic units on most CPUs: ~2 s for 1024³ on a 2-core server.
CPU_FP16_MAX_FLOPS = 2 * 512**3
MAX_SHAPES = 32

Shape = tuple[int, int, int, str]  # (M, N, K, label)

# Row notes: Texts (pieces joined by Text.joined), shown in a page's language as they come
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

    def __post_init__(self) -> None:
        """Checks what can never run, wherever it is built (the caps are the plan's)."""
        plan.check_device(self.device)
        shapes = tuple(self.shapes)
        if not shapes:
            raise InputError(N_("no shape to run; give M, N and K"))
        if len(shapes) > MAX_SHAPES:
            raise InputError(N_("{n} shapes is too many for one run (at most 32)"), n=len(shapes))
        for s in shapes:
            if not isinstance(s, (tuple, list)) or len(s) != 4 or not isinstance(s[3], str):
                raise InputError(N_("a shape is (M, N, K, label), got {value!r}"), value=s)
            plan.check_whole(M=s[0], N=s[1], K=s[2])
        object.__setattr__(self, "shapes", tuple((int(m), int(n), int(k), label) for m, n, k, label in shapes))
        object.__setattr__(self, "dtypes", normalise_dtypes(self.dtypes))
        object.__setattr__(self, "min_run_time", plan.check_min_run_time(self.min_run_time))

    def with_dtypes(self, dtypes: tuple[str, ...]) -> PrecisionConfig:
        return replace(self, dtypes=tuple(dtypes))


# --------------------------------------------------------------------------- shapes
def square_shapes(sizes: tuple[int, ...] | list[int]) -> tuple[Shape, ...]:
    return tuple((int(s), int(s), int(s), Text(SHAPE_LABELS["square"], n=int(s))) for s in sizes)


# The shapes' labels: Texts (English in the results, the CLI and the report; a page shows them in its
# reader's language, ``shape_label``).
SHAPE_LABELS = {
    "square": N_("square {n}"), "article": N_("article {shape}"),
    "qkv_prefill": N_("{preset} QKV prefill ({batch}×{seq} tokens)"), "up_prefill": N_("{preset} MLP up prefill"),
    "down_prefill": N_("{preset} MLP down prefill"), "qkv_decode": N_("{preset} QKV decode (M={batch})"),
    "up_decode": N_("{preset} MLP up decode (M={batch})"),
}


def step_text(dtype: str, m: int, n: int, k: int, label: Any) -> Text:
    """A step's progress: the format on the shape, its dimensions once (a command line's shape is labelled by
    its dimensions: it read "fp32 on 128×128×128 (128×128×128)")."""
    if not label or (isinstance(label, str) and not isinstance(label, Text) and label.strip() == f"{m}×{n}×{k}"):
        return Text(N_("{dtype} on {m}×{n}×{k}"), dtype=dtype, m=m, n=n, k=k)
    return Text(N_("{dtype} on {label} ({m}×{n}×{k})"), dtype=dtype, label=label, m=m, n=n, k=k)


def shape_label(label: str, gettext: Any = None) -> str:
    """A shape's label (a Text of ``SHAPE_LABELS``) through ``gettext``; any other label as it is."""
    if gettext is None or not isinstance(label, Text):
        return label
    return label.render(gettext)


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
        (tokens, qkv, hidden, Text(SHAPE_LABELS["qkv_prefill"], preset=preset, batch=batch, seq=seq)),
        (tokens, ffn, hidden, Text(SHAPE_LABELS["up_prefill"], preset=preset)),
        (tokens, hidden, ffn, Text(SHAPE_LABELS["down_prefill"], preset=preset)),
        (batch, qkv, hidden, Text(SHAPE_LABELS["qkv_decode"], preset=preset, batch=batch)),
        (batch, ffn, hidden, Text(SHAPE_LABELS["up_decode"], preset=preset, batch=batch)),
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


@functools.lru_cache(maxsize=1)
def _light_capability() -> tuple[int, int] | None:
    """The first CUDA GPU's compute capability as NVML reports it (no torch); None when unknown."""
    for d in light_summary():
        if d["kind"] == "cuda" and d.get("capability"):
            major, _, minor = str(d["capability"]).partition(".")
            return int(major), int(minor or 0)
    return None


def _unsupported_reason(dtype: str, device: str, m: int, n: int, k: int, cfg: PrecisionConfig, *,
                        probe: bool = True) -> str:
    """Why ``dtype`` cannot run here, or "" when it can.

    ``probe=False`` (a plan drawn while a page renders) imports no torch: unless torch is loaded
    already, the GPU's compute capability comes from NVML and fp8, which only a probe can confirm,
    is counted as running (the plan's time is then an upper bound; the run itself probes).
    """
    light = not probe and "torch" not in sys.modules
    cap = None
    if device == "cpu":
        if dtype == "tf32":
            return N_("tf32 is a mode of NVIDIA tensor cores (Ampere and newer); a CPU multiplies fp32 "
                      "in full precision, so there is nothing to measure")
        if dtype == "fp16" and 2 * m * n * k > cfg.cpu_fp16_max_flops:
            return Text(NOTES["fp16_skipped"], m=m, n=n, k=k, gflop=cfg.cpu_fp16_max_flops / 1e9)
    if device == "cuda":
        cap = _light_capability() if light else _cuda_capability()
        if cap is not None and dtype in ("tf32", "bf16") and cap < (8, 0):
            return Text(NOTES["cc80"], dtype=dtype, cc=f"{cap[0]}.{cap[1]}")
        if cap is not None and dtype == "int8" and cap < (7, 5):
            return Text(NOTES["cc75"], cc=f"{cap[0]}.{cap[1]}")
    if device == "mps" and dtype in ("tf32", "int8", "fp8"):
        return Text(NOTES["mps"], dtype=dtype)
    if dtype == "fp8":
        if light:
            if cap is not None and cap < quant.FP8_MIN_CAPABILITY:
                return Text(quant.FP8_CC, cc=f"{cap[0]}.{cap[1]}")
            return ""
        ok, why = fp8_supported(device)
        if not ok:
            return why
    return ""


def _torch_dtype(name: str) -> Any:
    import torch
    return {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[name]


NO_SHARE_EMULATED = N_("fp8 has no hardware on this device: torch runs it through a reference kernel whose speed "
                       "grows with the size (about 9× from 512³ to 2048³ on a 2-core CPU), so the “fp8 ceiling” the "
                       "Devices page stored at its size is no peak; no “% measured peak” is given for it")


emulated = ceilings.emulated  # fp8 off CUDA runs through a reference kernel: the one rule, for this module's readers

NO_CEILING_EMULATED = N_("no fp8 hardware here: a reference kernel's speed at this size (it grows with the size), "
                         "not a ceiling; the Precision page gives no “% measured peak” for fp8 here")


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
        if emulated(r.dtype, self.cfg.device):  # a reference kernel's speed grows with the size: no ceiling to share
            r.extra["share_measured"] = None
            r.extra["share_measured_why"] = NO_SHARE_EMULATED
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
    return Text(DISPATCH_NOTE, call=call, kernel=short, arch=arch, dev=dev)


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
        r.reason = Text.joined([r.reason, note])


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
    why = Text.joined([N_("int8×int8→int32 (`torch._int_mm`), scales per row of A and per column of B"),
                       QUANTIZED_BEFOREHAND, pad.note()])
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
            a_q = quant.pad2(a_q, p.pm, p.pk)
        c = torch._int_mm(a_q, w.b_q)
        if p.padded:
            c = c[:m, :n]
        return quant.dequantize(c, sa, w.scale_b[:, :n], act)

    out = linear(acts[0], ops[0])
    err2 = harness.rel_error(out, ref) if ref is not None else None
    del out
    t2 = _time(linear, list(zip(acts, ops, strict=True)), cfg)
    r2 = run.row("int8 + quant", "int8", shape, m * k * act_b + k * n + m * n * act_b, rel_error=err2,
                 reason=Text.joined([N_("quantize A (bf16) per call + `torch._int_mm` + dequantize") if act_b == 2
                                     else N_("quantize A (fp32) per call + `torch._int_mm` + dequantize"),
                                     WEIGHTS_ONCE]))
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
        note = Text.joined([note, f"rowwise scales refused ({str(e).splitlines()[0][:60]}), tensor-wise used"])
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
    why = Text.joined([FP8_GEMM_NOTES[(op0.rowwise, bool(cfg.fp8_fast_accum))], QUANTIZED_BEFOREHAND,
                       pad.note("torch._scaled_mm needs K and N multiples of 16"), note])
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
            a_q = quant.pad_fp8(a_q, p.pm, p.pk)
        c = quant.scaled_mm(a_q, w.b_q, sa, w.scale_b, w.out_dtype, w.fast_accum)
        return c[:m, :n] if p.padded else c

    out = linear(acts[0], ops[0])
    err2 = harness.rel_error(out, ref) if ref is not None else None
    del out
    t2 = _time(linear, list(zip(acts, ops, strict=True)), cfg)
    r2 = run.row("fp8 + quant", "fp8", shape, m * k * act_b + k * n + 2 * m * n, rel_error=err2,
                 reason=Text.joined([N_("quantize A to e4m3 per call + `torch._scaled_mm` (dequantizes in its "
                                        "epilogue)"), WEIGHTS_ONCE, note]))
    r2.set_timing(t2)
    r2.extra.update(variant="with quant", rowwise=op0.rowwise, rotated_sets=n_rot)
    rows.append(run.finish(r2, 1, 2))
    return rows


ROW_WONT_FIT = N_("skipped: at this machine's speed now this row would take about {seconds:.3g} s, more than the "
                  "{left:.3g} s left of the run's time limit (GEMM_TIME_LIMIT_S)")
WONT_FIT_SHARE = 0.75  # a row is skipped when even this share of its estimate does not fit in what is left


def _wont_fit(d: str, dev: str, m: int, n: int, k: int, cfg: PrecisionConfig, deadline: safety.Deadline) -> str:
    """The reason to skip a row that cannot finish before the deadline, at the rate its format was
    probed at just before the run (``core.speed``; no probe: no skip), instead of being killed in it."""
    if deadline.seconds is None:
        return ""
    flops = 2.0 * m * n * k
    r, source = plan.rate(dev, d, d, flops, history=[])
    if source != "probed here":
        return ""
    need = plan.row_seconds(flops / r, cfg.min_run_time, dev) * (2 if d in ("int8", "fp8") and cfg.with_quant else 1)
    left = deadline.remaining()
    return Text(ROW_WONT_FIT, seconds=need, left=max(0.0, left)) if WONT_FIT_SHARE * need > left else ""


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
                progress(done / total, step_text(d, m, n, k, label))
            why = _unsupported_reason(d, dev, m, n, k, cfg)
            if not why and deadline.expired():
                why = deadline.reason()
            if not why:
                why = _wont_fit(d, dev, m, n, k, cfg, deadline)
            if why:
                results.append(run.finish(
                    unsupported("precision", d, dev, d, shape, why, dev_name, 2 * m * n * k),
                    4 if d == "tf32" else dtype_bytes(d), 4 if d in ("fp32", "tf32", "int8") else 2))
                deadline.keep(results[-1:])
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
                deadline.keep(rows)  # sent to the server now: a run killed later still returns them
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
    """The report's precision section: default shapes for the device, table, verdict and charts.
    ``deadline``: the section's share of the report's budget; the shapes whose plan does not fit it are left
    out (``left_out`` names them), and a row not started by its end says so."""

    cfg = PrecisionConfig(device=device, shapes=default_shapes(device, quick),
                          min_run_time=0.15 if quick else 0.3)
    lim = safety.limits()
    shapes, cut = plan.fit(list(cfg.shapes), lambda xs: plan_precision(replace(cfg, shapes=tuple(xs)), lim).seconds,
                           plan.share_s(deadline))
    left_out = [f"{label} {m}×{n}×{k} (its plan did not fit the section's share)" for m, n, k, label in cut]
    cfg = replace(cfg, shapes=tuple(shapes))
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
            "charts": charts, "verdict": verdict, "left_out": left_out}


def finite(x: float | None) -> bool:
    return x is not None and math.isfinite(x)


# --------------------------------------------------------------------------- the spec
def plan_precision(cfg: PrecisionConfig, lim: safety.Limits) -> plan.Plan:
    """What ``run_precision(cfg)`` will hold at its peak — per shape its fp32 sources, the float64
    reference and its error-check copies, per format its rotated input sets, outputs and temporaries
    — its largest GEMM, and its time: every (shape, format), the "+ quant" rows, their rotated input
    sets and error checks, and one float64 reference per shape."""
    for m, n, k, _label in cfg.shapes:
        safety.check_dims(lim, M=m, N=n, K=k)
    dev, dtypes = cfg.device, cfg.dtypes
    peak = host = 0.0
    big, what = 0.0, plan.ONE_GEMM
    rows: list[plan.Row] = []
    step_of: list[int] = []  # the step (shape, format) each row belongs to, in the order the run reports them
    ref_flops = 0.0

    def sets(d: str, m: int, n: int, k: int) -> int:
        one = 4 if d == "tf32" else dtype_bytes(d)
        return _rotation(dev, (m * k + k * n + m * n) * one, lim)

    def model(r: BenchResult) -> plan.Row:  # a row measured before, as the time model sees it
        m, n, k = (int(r.shape.get(x, 1)) for x in "mnk")
        quant_row = r.name.endswith("+ quant")
        elems = sets(r.dtype, m, n, k) * (m * k if quant_row else m * k + k * n)
        return plan.Row(r.flops, r.dtype, r.name, False, elems, 1)

    for m, n, k, _label in cfg.shapes:
        mk, kn, mn = m * k, k * n, m * n
        flops = 2.0 * m * n * k
        if flops > big:
            big, what = flops, Msg(plan.A_GEMM, m=m, n=n, k=k)
        src = 4.0 * (mk + kn)
        ref = 8.0 * mn if cfg.check_error else 0.0
        shape_peak = src + (8.0 * (mk + kn + mn) if cfg.check_error else 0.0)
        ref_flops += flops if cfg.check_error else 0.0
        host = max(host, 4.0 * max(mk, kn))  # each source is drawn on the host first
        for d in dtypes:
            skipped = bool(_unsupported_reason(d, dev, m, n, k, cfg, probe=False))  # no torch to plan
            n_rot = sets(d, m, n, k)
            rows.append(plan.Row(flops, d, d, skipped, n_rot * float(mk + kn), 1))
            if d in ("int8", "fp8") and cfg.with_quant:
                rows.append(plan.Row(flops, d, f"{d} + quant", skipped, n_rot * float(mk), 1))
            step_of.extend([len(set(step_of))] * (len(rows) - len(step_of)))  # each step adds a row or two
            if skipped:
                continue
            b = 4 if d == "tf32" else dtype_bytes(d)
            rot = _rotation(dev, (mk + kn + mn) * b, lim)
            if d in ("int8", "fp8"):
                sets_b = rot * 1.0 * (mk + kn)
                make = 8.0 * max(mk, kn) + 4.0 * max(mk, kn)  # float copy, abs / scaled temporaries
                ev = 4.0 * mn * 3 + plan.err_bytes(mn, 4) if cfg.check_error else 4.0 * mn
                work = max(make, ev, 4.0 * mn)
                row = 0.0
                if d == "int8" and dev == "cpu" and 4.0 * max(mk, kn) < plan.MMAP_THRESHOLD:
                    # measured: the fp32 sources of every rotated set stay in the heap around their
                    # small int8 copies (blocks below glibc's mmap threshold are not handed back)
                    row += (rot - 1) * 4.0 * (mk + kn)
                if d == "fp8" and dev != "cuda":
                    row += 4.0 * (mk + kn + mn)  # the CPU reference kernel computes in fp32
                if cfg.with_quant:
                    row += (rot - 1) * (2 if dev == "cuda" else 4) * mk  # the rotated activations of the + quant row
                    work = max(work, 8.0 * mk + 1.0 * mk + 4.0 * mn * 3)  # its per-call temporaries
                row += sets_b + work
            else:
                copy0 = 0.0 if b == 4 else b * (mk + kn)
                sets_b = copy0 + (rot - 1) * b * (mk + kn) + (4.0 * max(mk, kn) if rot > 1 else 0.0)
                ev = plan.err_bytes(mn, b) if cfg.check_error else b * mn
                internal = 4.0 * (mk + kn + mn) if (dev == "cpu" and b == 2) else 0.0  # CPU half GEMMs upcast
                row = sets_b + max(ev, b * mn) + internal
            shape_peak = max(shape_peak, src + ref + row)
        peak = max(peak, shape_peak)
    if dev != "cpu" and cfg.check_error:
        host += 8.0 * max(m * n for m, n, _k, _ in cfg.shapes)
    seconds, sources = plan.estimate(rows, dev, cfg.min_run_time, extra_flops=ref_flops, bench="precision",
                                     model=model)
    steps = len(cfg.shapes) * len(dtypes)
    step_s = [0.0] * steps
    for i, sec in zip(step_of, plan.estimate_each(rows, dev, cfg.min_run_time, bench="precision", model=model),
                      strict=True):
        step_s[i] += sec
    refs = max(0.0, seconds - sum(step_s))  # the float64 references: each shape's, made before its first format,
    for j, (m, n, k, _label) in enumerate(cfg.shapes):  # in the step before it (the first shape's: its first step)
        if ref_flops:
            step_s[max(0, j * len(dtypes) - 1)] += refs * (2.0 * m * n * k if cfg.check_error else 0.0) / ref_flops
    return plan.Plan(bytes=peak, host_bytes=host if dev != "cpu" else 0.0, call_flops=big, call_what=what,
                     seconds=seconds, rows=len(rows), steps=steps, sources=sources, step_s=tuple(step_s))


def _run_spec(cfg: PrecisionConfig, progress: Any, deadline: safety.Deadline) -> list[BenchResult]:
    return run_precision(cfg, progress=progress, deadline=deadline)


SPEC = BenchSpec("precision", PrecisionConfig, plan_precision, _run_spec, list[BenchResult],
                 label=N_("a precision run"), imports=("gemmlib.measure.precision",))
