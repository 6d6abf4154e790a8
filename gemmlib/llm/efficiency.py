"""Achieved efficiency by shape: the share of its roofline each op of an estimate reaches on a GPU.

The roofline ``max(FLOPs / peak, bytes / bandwidth)`` is what a device could do; a kernel reaches less,
and how much less depends on the shape. For one op of the accounting (all its runs) this model says::

    time = kernels × T0 + max(FLOPs / (peak × η), bytes / (bandwidth × β))

* **η, a GEMM** of M×K by K×N (``batch`` of them in one kernel) = ceiling × K / (K + K0) × the SM
  utilisation of the best tiling: the output is cut into tiles (cuBLAS's tile sizes, from 128×256 down to
  64×128), each tile is one work unit on one SM, a partly filled tile and a last partly filled wave cost a
  full one (tile and wave quantisation), and when there are fewer tiles than SMs the K loop is split
  (split-K) so that more SMs take part. K0 is the fixed work of a tile (prologue, epilogue) in units of
  K: small-K GEMMs fall off. Small M (a decode GEMM with one token per sequence) fills a tile badly and
  is memory-bound anyway: below the ridge the bytes decide.
* **T0** is the fixed time of one GEMM kernel (launch, pipeline fill, tail), paid per kernel: small
  GEMMs are latency-bound.
* **ceiling** is each GPU's large-GEMM share of its datasheet peak, solved so that the model at the
  GPU's published best shape gives its published maximum achievable matmul FLOP/s (MAMF) — or, where a long
  sweep was published (Hopper in FP8, :data:`SUSTAINED`), its sustained rate at 16384³; no GEMM runs
  faster than the measured maximum (:func:`max_share`), whatever shape the tiling favours.
* **β** is the share of the datasheet bandwidth a streaming kernel reaches (STREAM triad).
* **Fused attention** (a flash kernel: both products and the softmax in one kernel) reaches
  A × L / (L + L0) of the peak, L the mean keys per query (a sliding layer's: its band's); A is FlashAttention-3's plateau on an H100
  relative to its MAMF, carried to other GPUs in proportion to their ceiling.
* **Element-wise ops** (norms, residual adds, rotary, softmax, …) stream at β of the bandwidth; no
  kernel cost is charged (engines fuse them into their neighbours).
* **Engines fuse** q|k|v into one GEMM and gate|up into one (vLLM's ``QKVParallelLinear`` and
  ``MergedColumnParallelLinear``): under the engine convention k/v and up are taken at the shape of the
  fused GEMM and pay no kernel of their own (transformers runs them apart unless the checkpoint stores
  them fused).
* **Low-precision runs** (an 8-bit or 4-bit activation dtype): the weight GEMMs run at that dtype's
  peak; attention and the element-wise work stay in 16 bits (an fp8 run is not 2× a bf16 one
  everywhere: :func:`compute_dtype`).

Fitted constants and their sources (README "Size an LLM" → the efficiency model):

* K0 = 160, T0 = 5.25 µs, split-K from K ≥ 2 × 2048, the ceiling 0.87 of the H100's bf16 peak: fitted to
  the 125 bf16 single-matrix entries of OpenXLA's measured H100 table (``xla/service/gpu/model/
  matmul_interpolator_data.h``, ``kDefaultMatmulPTable`` "sm_90", M, N, K = 256 … 4096, from 6.5 to 783
  TFLOP/s; ``tests/data/xla_sm90_matmul_bf16.csv``): root-mean-square of log(model / measured) 10.9 %,
  |model / measured − 1| median 5.4 %, worst −41 % (256×256×4096, where cuBLAS splits K further), 95 %
  within 25 % (``benchmarks/bench_efficiency.py`` prints every point). Azure's cuBLASLt sweeps (random data,
  10,000 warm-up iterations; not fitted but for the FP8 16384³ points, the Hopper FP8 ceilings' anchors): H100 fp8
  within −10 … +13 %, H200 fp8 −11 … +4 % (+45 % at an odd 802816×192×768), A100 fp16 within −9 … +25 % (+49 % there).
* The tile sizes: NVIDIA's Matrix Multiplication Background User's Guide (DU-09799-001) §2.3.
* The MAMF table: Stas Bekman, *Machine Learning Engineering*, compute/accelerator, "Maximum Achievable
  Matmul FLOPS comparison table" (mamf-finder.py, ``torch.mm``), BF16 and FP8 (e4m3) columns.
* β: Azure's AI-benchmarking-guide results (ND H100 v5, ND H200 v5, ND A100 v4), HBM bandwidth, Triad.
* A and L0: FlashAttention-3 forward on an H100 SXM, head dim 128, 16 heads, B·S = 16k (pytorch/benchmark
  PR #2391): 430, 517, 566, 590, 614, 621 TFLOP/s at S = 512 … 16k; A·peak = 630 TFLOP/s, L0 = 240 reproduce
  them within 2 %.
* A_b and L0_b, the flash kernel's backward (training): FlashAttention-3 backward on an H100 80GB SXM5, head
  dim 128 (Shah et al. 2024, arXiv:2407.08608, Figure "Attention backward speed, head dim 128"): 316, 424,
  501, 542, 559, 561 TFLOP/s at S = 512 … 16k, counted as 2.5 × the forward's FLOPs; A_b·peak = 591 TFLOP/s,
  L0_b = 425 reproduce them within 3 %. The backward runs at a lower share of peak than the forward at
  every length (0.73 of it at 512 keys, 0.9 at 16k).
* The causal mask: a causal kernel is timed at its mean keys per query, (S + 1) / 2. Checked against the same
  paper's causal forward figure, head dim 128 (292, 423, 521, 579, 602, 616 TFLOP/s at S = 512 … 16k): within
  3 % from S = 1k, +11 % at 512 (where the masked diagonal blocks weigh most).
* Head dim 64 (gpt-oss, GPT-2, many small models): half the matmul work per key for the same softmax, so a flash
  kernel reaches less of the peak. FlashAttention-3 on an H100 80GB SXM5, head dim 64 (the same paper's
  figures "Attention forward speed, head dim 64", without the causal mask 333, 392, 460, 476, 496, 497 and with
  it 197, 265, 371, 420, 460, 473 TFLOP/s, and "Attention backward speed, head dim 64" 272, 363, 422, 453, 472,
  474 TFLOP/s, at S = 512 … 16k): A_64·peak = 515 TFLOP/s with L0_64 = 388, fitted to both forward figures (the
  causal one at its mean keys), reproduce them within 12 % (−12.0 % at S = 512 without the mask, +10.6 % at 1k
  with it; root mean square of the log error 5.6 %); A_b64·peak = 486 TFLOP/s with L0_b64 = 402 the backward
  within 4 %: 0.70–0.80 of the head-dim-128 forward without the mask, 0.85 of its backward. A head dim between 64
  and 128 takes A and L0 on the straight line between the two; a smaller one the 64 figures (none was measured
  below: optimistic there), a larger one the 128 figures (the paper's head dim 256 is faster still: a
  conservative choice). An MLA head (192 query/key, 128 value) counts as the mean of the two.

The model's structure is physical; its constants are fitted on an H100 and carried to other GPUs
through their SM count, peaks, bandwidth and measured maximum. A calibration of the device itself
(``python -m gemmlib calibrate``, :mod:`gemmlib.llm.calibrated`) replaces all of it. ``--efficiency X``
forces one flat share instead (and the answer says so).

No torch, no numpy: it imports in well under a millisecond.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gemmlib.core.dtypes import get_dtype
from gemmlib.core.flops import DEFAULT_EFFICIENCY
from gemmlib.core.hardware import Hardware
from gemmlib.core.i18n import N_, Text

# ----- fitted to OpenXLA's H100 table (see the module docstring) ---------------------------------------
K0 = 160  # a tile's fixed work, in units of K (prologue + epilogue)
T0_S = 5.25e-6  # fixed time of one GEMM kernel
# A hybrid mixer's depthwise causal convolution: counted with the GEMMs (FlopCounterMode counts a convolution) but
# run as one element-wise kernel per layer (causal_conv1d; cuDNN's depthwise path in eager PyTorch) on the CUDA
# cores, a few multiply-adds per element it reads: timed as that, not as a batch of 1 × channels × kernel GEMMs.
# DeepSeek-V4's hyper-connection mix (each token's n streams by its own n × n weights) is the same kind of work, and so
# are Inkling's short convolutions.
_DEPTHWISE = {"conv1d": N_("depthwise convolution, one element-wise kernel per layer on the CUDA cores (the fp32 "
                           "peak) at {share:.0%} of the bandwidth; not a GEMM"),
              "hc_mix": N_("each token's streams mixed by its own small matrix: one element-wise kernel per layer on "
                           "the CUDA cores (the fp32 peak) at {share:.0%} of the bandwidth; not a GEMM")}
_DEPTHWISE.update(dict.fromkeys(("kv_conv", "attn_conv", "mlp_conv"), _DEPTHWISE["conv1d"]))  # Inkling's short convolutions
# Inkling 2's block attention residuals: each token's few learned queries against its few block states
_DEPTHWISE["attn_res"] = N_("each token's learned queries against its block states: one small kernel per input on the "
                            "CUDA cores (the fp32 peak) at {share:.0%} of the bandwidth; not a GEMM")
# What sets an op's time: its kernels' fixed time when that is more than the compute or the memory time (then
# fusing, batching or a CUDA graph is what helps, not a faster GEMM or more bandwidth), else the larger of the two.
BOUND_LEADS = {"overhead": N_("overhead-bound: the kernels' fixed time"), "compute": N_("compute-bound"),
               "memory": N_("memory-bound")}
# Op.bound's values, translated where a table or chart shows them ("memory": what bounds the op, the memory traffic —
# 访存 in Chinese; a device's memory size is another msgid, "memory size")
BOUND_WORDS = (N_("compute"), N_("memory"), N_("overhead"))


def bound_of(fixed: float, t_comp: float, t_mem: float) -> str:
    """"overhead", "compute" or "memory": what the larger part of an op's time is."""
    if fixed > max(t_comp, t_mem):
        return "overhead"
    return "compute" if t_comp >= t_mem else "memory"


SPLIT_K_MIN = 2048  # split-K slices are at least this long
# cuBLAS's CTA tile sizes (M × N of D per SM), most efficient first (NVIDIA DU-09799-001 §2.3)
TILES = ((128, 256), (256, 128), (128, 128), (64, 128), (128, 64))

# ----- FlashAttention-3 on an H100 SXM (pytorch/benchmark PR #2391) -------------------------------------
ATTENTION_PLATEAU_TFLOPS_H100 = 630.0  # fitted plateau of 430 … 621 TFLOP/s (S = 512 … 16k)
ATTENTION_L0 = 240  # keys per query at which a flash kernel reaches half its plateau
# ----- FlashAttention-3's backward on an H100 SXM (arXiv:2407.08608, backward figure, head dim 128) -----------
ATTENTION_BWD_PLATEAU_TFLOPS_H100 = 591.0  # fitted plateau of 316 … 561 TFLOP/s (S = 512 … 16k)
ATTENTION_BWD_L0 = 425  # keys per query at which the backward kernel reaches half its plateau
# ----- FlashAttention-3 at head dim 64 on an H100 SXM5 (arXiv:2407.08608, head-dim-64 figures) -----------------
ATTENTION_HEAD_DIM = 128  # the head dim the figures above were measured at
ATTENTION_HD64_PLATEAU_TFLOPS_H100 = 515.0  # fitted to 333 … 497 (no causal mask) and 197 … 473 TFLOP/s (causal)
ATTENTION_HD64_L0 = 388
ATTENTION_HD64_BWD_PLATEAU_TFLOPS_H100 = 486.0  # fitted plateau of 272 … 474 TFLOP/s (backward)
ATTENTION_HD64_BWD_L0 = 402

# ----- STREAM triad share of the datasheet bandwidth (Azure AI-benchmarking-guide) ----------------------
BANDWIDTH_SHARE = {
    "H100 SXM": 2.97e12 / 3.35e12,  # ND H100 v5: Triad 2.97 TB/s
    "H200 SXM": 4.15e12 / 4.8e12,  # ND H200 v5: Triad 4.15 TB/s
    "A100 SXM 80GB": 1.70e12 / 2.039e12,  # ND A100 v4: Triad 1.70 TB/s
}
DEFAULT_BANDWIDTH_SHARE = sorted(BANDWIDTH_SHARE.values())[1]  # the median of the three (0.865)

# ----- Maximum Achievable Matmul FLOPS (Bekman's table): (TFLOP/s, its "Theory" peak, best M×N×K) -------
MAMF: dict[str, dict[str, tuple[float, float, tuple[int, int, int]]]] = {
    "A100 SXM 80GB": {"bf16": (271.2, 312, (1024, 10240, 5120))},
    "A100 SXM 40GB": {"bf16": (271.2, 312, (1024, 10240, 5120))},  # the same chip (the table's A100 SXM row)
    "H100 SXM": {"bf16": (794.5, 989, (2048, 2048, 13312)), "fp8": (1402.6, 1979, (1024, 9216, 14336))},
    "H200 SXM": {"bf16": (794.5, 989, (2048, 2048, 13312)),  # "H200 is the same" (the table's note)
                 "fp8": (1453.4, 1979, (1280, 4096, 12032))},
    "B200": {"bf16": (1745.0, 2250, (1792, 16128, 3072)), "fp8": (3432.5, 4500, (15360, 4096, 3072))},
    "B300": {"bf16": (1769.0, 2250, (12288, 18432, 1024)), "fp8": (3353.3, 4500, (3072, 6144, 7168))},
    "GB200": {"bf16": (1822.0, 2500, (4096, 9728, 2048)), "fp8": (3615.6, 5000, (19456, 5120, 1536))},
    "MI300X": {"bf16": (668.4, 1300, (10240, 15360, 8192))},
    "MI325X": {"bf16": (784.9, 1300, (13312, 10240, 8192))},
    "MI355X": {"bf16": (1565.0, 2300, (12288, 8192, 8192))},
}
# ----- Sustained large-GEMM rates: Azure's cuBLASLt sweeps ("random initialization (best representation of
# real-life workloads)", "10,000 warmup iterations"; Azure/AI-benchmarking-guide, Azure_Results/*.md), at their
# largest shape, 16384³: (TFLOP/s, M×N×K). mamf-finder's figure is the fastest run of the best shape; a training or
# serving run's GEMMs run back to back for hours, hot, at the rate a long sweep settles to. On Hopper in FP8 the
# two differ: MAMF's 1402.6 (H100) and 1453.4 (H200) against Azure's 1290–1382 and 1300–1366 at 8192³ … 32768³, which
# the MAMF-solved model overshot by up to 9 % (H100) and 11 % (H200). There the ceiling is solved to the sweep's
# 16384³ figure; MAMF's maximum stays the cap (:func:`max_share`). bf16 on Hopper has no such sweep (its MAMF
# maximum, 794.5, and OpenXLA's 783 at 4096³ agree within 1.5 %). The A100's FP16 sweep is not used: the tile
# constants are the H100's, and solved to it the model would fall 16 % under the sweep's own 1024³ point.
SUSTAINED: dict[str, dict[str, tuple[float, tuple[int, int, int]]]] = {
    "H100 SXM": {"fp8": (1377.3, (16384, 16384, 16384))},  # ND H100 v5, FP8
    "H200 SXM": {"fp8": (1366.3, (16384, 16384, 16384))},  # ND H200 v5, FP8
}

# The table's other rows count towards the median share a GPU without a row gets: Gaudi 2 and 3, the A100 PCIe
# and the GH200 (measured on the 900 W, 141 GiB HBM3e board; the catalogue's GH200 row is the 96 GB HBM3 one, so
# its figure is not applied there: never another board's figures).
_OTHER_SHARES = {"bf16": (418.7 / 432, 1243.0 / 1677, 252.9 / 312, 828.6 / 989),
                 "fp8": (826.5 / 865, 1289.5 / 1677, 1535.0 / 1979)}
SMS_WHEN_UNKNOWN = 132  # a GPU whose SM count the catalogue lacks is tiled as an H100 (and says so)


def _median(xs) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def _shares(dt: str) -> list[float]:
    rows = {name: row[dt] for name, row in MAMF.items() if dt in row}
    rows.pop("A100 SXM 40GB", None)  # the same table row as the 80 GB
    if dt == "bf16":
        rows.pop("H200 SXM", None)  # the H100's row again
    return [t / theory for t, theory, _ in rows.values()] + list(_OTHER_SHARES[dt])


MEDIAN_SHARE = {dt: _median(_shares(dt)) for dt in ("bf16", "fp8")}


def ceiling_family(dtype: str) -> str:
    """Which MAMF column a dtype's ceiling is read from: 16/32-bit formats the BF16 one, 8/4-bit the FP8 one."""
    return "fp8" if get_dtype(dtype).bytes <= 1 else "bf16"


def compute_dtype(op, act_dtype: str, hw: Hardware | None = None) -> str:
    """The dtype ``op`` multiplies in: a weight GEMM at the activation dtype; with 8-bit or 4-bit
    activations, attention, the element-wise work and a GEMM marked ``wide`` (an 8-bit training run's output
    head, :func:`gemmlib.llm.training.train`; a linear a quantized checkpoint leaves at 16 bits, the LM head of an
    fp8 one) in 16 bits (the activations between kernels are bf16: an fp8 run
    quantises each linear's input, its attention and norms stay bf16)."""
    if get_dtype(act_dtype).bytes >= 2 or (op.is_gemm and op.weight_bytes > 0 and not op.wide):
        return act_dtype
    if hw is not None and hw.peak("bf16") is None and hw.peak("fp16") is not None:
        return "fp16"
    return "bf16"


# ----- the GEMM model ----------------------------------------------------------------------------------

def gemm_kernel_seconds(m: float, n: float, k: float, *, batch: float, peak: float, ceiling: float,
                        sms: int, cap: float = 1.0) -> float:
    """Compute time of one kernel of ``batch`` GEMMs of M×K by K×N (no fixed time, no memory): the best of
    the tile sizes, with split-K when the tiles leave SMs idle; never faster than ``cap`` × ``peak`` (the
    GPU's measured maximum, :func:`max_share`)."""
    m, n, k = max(1.0, m), max(1.0, n), max(1.0, k)
    per_sm = peak * ceiling / sms
    best = math.inf
    for tm, tn in TILES:
        tiles = max(1, round(batch)) * math.ceil(m / tm) * math.ceil(n / tn)
        split = 1
        if tiles < sms:
            split = max(1, min(sms // tiles, int(k // SPLIT_K_MIN)))
        waves = math.ceil(tiles * split / sms)
        best = min(best, waves * 2 * tm * tn * (k / split + K0) / per_sm)
    # the measured maximum is of whole kernels, T0 included: the compute side is at least that time less T0
    return max(best, 2 * m * n * k * max(1, round(batch)) / (peak * cap) - T0_S)


def gemm_share(m: float, n: float, k: float, *, batch: float, peak: float, ceiling: float, sms: int,
               cap: float = 1.0) -> float:
    """η: the share of ``peak`` a kernel of ``batch`` M×N×K GEMMs reaches on its compute side (at most ``cap``)."""
    t = gemm_kernel_seconds(m, n, k, batch=batch, peak=peak, ceiling=ceiling, sms=sms, cap=cap)
    return 2 * max(1.0, m) * max(1.0, n) * max(1.0, k) * max(1, round(batch)) / (t * peak)


def gemm_seconds(m: int, n: int, k: int, hw: Hardware, dtype: str = "bf16", *, batch: int = 1,
                 bytes_moved: float | None = None) -> float:
    """The model's time of one GEMM kernel on ``hw`` (T0 + max(compute, memory)): the function the fit and
    ``benchmarks/bench_efficiency.py`` evaluate against the published measurements."""
    peak = hw.peak(dtype)
    if peak is None:
        raise hw.missing_peak_error(dtype)
    c = ceiling(hw, dtype)
    sms = hw.sms or SMS_WHEN_UNKNOWN
    tc = gemm_kernel_seconds(m, n, k, batch=batch, peak=peak, ceiling=c, sms=sms, cap=max_share(hw, dtype))
    b = get_dtype(dtype).bytes
    nbytes = batch * ((m * k + k * n) * b + m * n * max(b, 2)) if bytes_moved is None else bytes_moved
    return T0_S + max(tc, nbytes / (hw.bandwidth * bandwidth_share(hw)))


def _base_name(hw: Hardware) -> str:
    return hw.name.removesuffix(" (measured)")


def _measured(hw: Hardware) -> bool:
    return hw.name.endswith("(measured)")


def bandwidth_share(hw: Hardware) -> float:
    """β: the share of ``hw.bandwidth`` a streaming kernel reaches (1 for a measured bandwidth)."""
    if _measured(hw):
        return 1.0
    return BANDWIDTH_SHARE.get(hw.name, DEFAULT_BANDWIDTH_SHARE)


_CEILINGS: dict[tuple, float] = {}


def mamf_row(hw: Hardware, dtype: str) -> tuple[float, float, tuple[int, int, int]] | None:
    """The published maximum for this GPU and dtype's column, or None."""
    return MAMF.get(_base_name(hw), {}).get(ceiling_family(dtype))


def ceiling(hw: Hardware, dtype: str) -> float:
    """The large-GEMM share of ``hw``'s ``dtype`` peak: solved from the GPU's sustained rate at the largest shape of a
    long published sweep (:data:`SUSTAINED`), else from its published maximum at its best shape (MAMF); a GPU (or
    dtype column) without either gets the table's median share; a measured peak is already the maximum (1)."""
    peak = hw.peak(dtype)
    if peak is None:
        raise hw.missing_peak_error(dtype)
    if _measured(hw):
        return 1.0
    key = (hw.name, hw.sms, peak, ceiling_family(dtype))
    if key in _CEILINGS:
        return _CEILINGS[key]
    fam = ceiling_family(dtype)
    row = mamf_row(hw, dtype)
    sustained = SUSTAINED.get(_base_name(hw), {}).get(fam)
    if sustained is not None:  # the long sweep's rate at its shape (its MAMF maximum stays the cap)
        row = (sustained[0], None, sustained[1])
    if row is None:
        bf = MAMF.get(_base_name(hw), {}).get("bf16")
        share = MEDIAN_SHARE[fam]
        if fam == "fp8" and bf is not None:  # this GPU's bf16 share, scaled as the medians are
            share = bf[0] / bf[1] * MEDIAN_SHARE["fp8"] / MEDIAN_SHARE["bf16"]
        c = min(1.0, share)
    else:
        tflops, _, (m, n, k) = row
        # the column's rate as a share of its own format's peak, carried to this dtype's peak (an fp32 or tf32 GEMM
        # at the bf16 column's share: 794.5 of 989 TFLOP/s on an H100 is 80 %, so 80 % of fp32's 67)
        tflops *= peak / (hw.peak(fam) or peak)
        sms = hw.sms or SMS_WHEN_UNKNOWN
        lo, hi = 0.05, 1.5
        for _ in range(50):  # the model's time at the best shape equals the published maximum
            mid = (lo + hi) / 2
            t = T0_S + gemm_kernel_seconds(m, n, k, batch=1, peak=peak, ceiling=mid, sms=sms)
            if 2 * m * n * k / t > tflops * 1e12:
                hi = mid
            else:
                lo = mid
        c = min(1.0, (lo + hi) / 2)
    _CEILINGS[key] = c
    return c


def max_share(hw: Hardware, dtype: str) -> float:
    """The most of ``dtype``'s peak any GEMM reaches on ``hw``: the GPU's published maximum achievable matmul
    FLOP/s over the table's own "Theory" peak (Bekman's MAMF table: 794.5 of 989 TFLOP/s bf16 on an H100 SXM,
    80 %). The tiling model is solved to give that figure at the table's best shape, and without this cap a
    shape it tiles better (a wave-aligned 16384×28672×4096) would come out faster than anything mamf-finder
    measured on the GPU (84 % of peak, 831 TFLOP/s); no GEMM beats the measured maximum. 1 (no cap) where the
    GPU has no row (its median-share ceiling is the tile ceiling already) or its peak was measured."""
    if _measured(hw):
        return 1.0
    row = mamf_row(hw, dtype)
    return 1.0 if row is None else min(1.0, row[0] / row[1])


_ATTENTION_RATIO: list[float] = []


def ceiling_source(hw: Hardware, dtype: str) -> Text:
    """Where :func:`ceiling` comes from, in words."""
    row = mamf_row(hw, dtype)
    fam = ceiling_family(dtype)
    c = ceiling(hw, dtype)
    if _measured(hw):
        return Text(N_("the measured peak is the ceiling"))
    sustained = SUSTAINED.get(_base_name(hw), {}).get(fam)
    if dtype != fam and (row is not None or sustained is not None):
        # fp32, tf32, fp16 (int8, fp4) GEMMs take the bf16 (fp8) column's share of their own peak
        return Text(N_("large {dtype} GEMMs at {share:.0%} of its peak, the share measured in {family} on {gpu}"),
                    dtype=dtype, share=c, family=fam, gpu=_base_name(hw))
    if sustained is not None:
        return Text(N_("large GEMMs at {tflops:g} TFLOP/s {dtype} sustained on {gpu} (a long sweep at {shape}; "
                       "at most its best single run, {best:g})"), tflops=sustained[0], dtype=fam, gpu=_base_name(hw),
                    shape="×".join(map(str, sustained[1])), best=row[0] if row is not None else sustained[0])
    if row is not None:
        return Text(N_("large GEMMs at {tflops:g} TFLOP/s {dtype} as measured on {gpu}"), tflops=row[0], dtype=fam,
                    gpu=_base_name(hw))
    if fam == "fp8" and "bf16" in MAMF.get(_base_name(hw), {}):
        return Text(N_("no published {dtype} maximum for {gpu}: its bf16 share scaled as the medians are ({share:.0%})"),
                    dtype=fam, gpu=hw.name, share=c)
    return Text(N_("no published maximum for {gpu} {dtype}: the median share {share:.0%}"), gpu=hw.name, dtype=fam,
                share=c)


def _attention_plateau(hw: Hardware, dtype: str) -> float:
    """A flash forward kernel's plateau share of ``dtype``'s peak on ``hw``: the H100's FlashAttention-3 plateau
    relative to its GEMM ceiling, times this GPU's ceiling."""
    if not _ATTENTION_RATIO:
        h100 = Hardware("H100 SXM", "gpu", (("bf16", 989.4e12),), 3.35e12, 132, 0.0, "")
        _ATTENTION_RATIO.append(ATTENTION_PLATEAU_TFLOPS_H100 * 1e12 / 989.4e12 / ceiling(h100, "bf16"))
    return min(1.0, _ATTENTION_RATIO[0] * ceiling(hw, dtype))


def _flash_share(hw: Hardware, dtype: str, keys: float, head_dim: float, at_64: tuple[float, float],
                 at_128: tuple[float, float]) -> float:
    """A flash kernel's share of peak at ``keys`` per query: its (H100 plateau in TFLOP/s, L0) at ``head_dim`` —
    ``at_64``'s at 64 and below, ``at_128``'s at 128 and above, the straight line between them in between —, the
    plateau carried to ``hw`` as the head-dim-128 forward's is, times L / (L + L0)."""
    t = min(1.0, max(0.0, (head_dim - 64) / (ATTENTION_HEAD_DIM - 64)))
    plateau, l0 = (a + t * (b - a) for a, b in zip(at_64, at_128, strict=True))
    return _attention_plateau(hw, dtype) * plateau / ATTENTION_PLATEAU_TFLOPS_H100 * keys / (keys + l0)


def attention_share(hw: Hardware, dtype: str, keys: float, head_dim: float = ATTENTION_HEAD_DIM) -> float:
    """The share of ``dtype``'s peak a fused (flash) attention kernel reaches at ``keys`` per query with heads of
    ``head_dim``: the H100's FlashAttention-3 plateau at that head dim relative to its GEMM ceiling, times this
    GPU's ceiling, times L / (L + L0)."""
    return _flash_share(hw, dtype, keys, head_dim, (ATTENTION_HD64_PLATEAU_TFLOPS_H100, ATTENTION_HD64_L0),
                        (ATTENTION_PLATEAU_TFLOPS_H100, ATTENTION_L0))


def attention_backward_share(hw: Hardware, dtype: str, keys: float, head_dim: float = ATTENTION_HEAD_DIM) -> float:
    """The share of ``dtype``'s peak a flash kernel's backward reaches at ``keys`` per query (its FLOPs counted as
    2.5 × the forward's): FlashAttention-3's measured backward on an H100 at ``head_dim``, carried to other GPUs
    as the forward is (its plateau in the same ratio to the forward's), times L / (L + L0_b)."""
    return _flash_share(hw, dtype, keys, head_dim, (ATTENTION_HD64_BWD_PLATEAU_TFLOPS_H100, ATTENTION_HD64_BWD_L0),
                        (ATTENTION_BWD_PLATEAU_TFLOPS_H100, ATTENTION_BWD_L0))


# ----- the model of an estimate's ops ---------------------------------------------------------------------

_FUSED_INTO = {"k_proj": "q_proj", "v_proj": "q_proj", "up_proj": "gate_proj", "shared_up_proj": "shared_gate_proj",
               "dense_up_proj": "dense_gate_proj"}
_PRODUCTS = ("attn_scores", "attn_values", "attn_scores_sliding", "attn_values_sliding", "attn_scores_compressed",
             "attn_values_compressed", "attn_scores_sparse", "attn_values_sparse")


@dataclass(frozen=True)
class _Par:
    tp: int = 1
    pp: int = 1
    ep: int = 1


class ShapeEfficiency:
    """The per-op efficiency (an ``OpEfficiency``) of one estimate: ``model(op)`` is the op's roofline time at
    full speed over its time in this model, ``model.explain(op)`` says what set it.

    ``cfg`` and ``wl`` are the estimate's model and workload, ``par`` its parallel layout (anything with
    ``tp``, ``pp``, ``ep``: :class:`gemmlib.llm.parallel.Parallel`); each op it is given is one GPU's share
    (:func:`gemmlib.llm.parallel.per_gpu_op`) or, on one GPU, the whole op.
    """

    kind = "shape"

    def __init__(self, hw: Hardware, cfg, wl, par=None) -> None:
        self.hw, self.cfg, self.wl = hw, cfg, wl
        self.par = par or _Par()
        self.dtype = wl.act_dtype
        engine = getattr(wl, "convention", "engine") == "engine"
        self.fused_qkv = engine or cfg.fused_qkv  # one q|k|v GEMM (an engine; a checkpoint that stores it so)
        self.fused_gate_up = (engine or cfg.fused_gate_up) and cfg.mlp == "gated"
        self.beta = bandwidth_share(hw)
        self.sms = hw.sms or SMS_WHEN_UNKNOWN
        # a flash kernel's head dim: the mean of the query/key and the value head dims (equal but for MLA's)
        self.head_dim = (cfg.head_dim + cfg.v_head_dim) / 2

    # -- what the JSON and the text say
    @property
    def label(self) -> str:
        return Text(N_("shape model (fitted to published measurements; {what})"),
                    what=Text(N_("measured ceilings")) if _measured(self.hw) else self._ceiling_words())

    def _ceiling_words(self) -> Text:
        return ceiling_source(self.hw, self.dtype)

    def describe(self) -> dict:
        """JSON-ready: what the model is, its constants and their sources."""
        d = {"kind": self.kind, "label": self.label,
             "constants": {"K0": K0, "T0_s": T0_S, "split_k_min": SPLIT_K_MIN, "tiles": [list(t) for t in TILES],
                           "ceiling": ceiling(self.hw, self.dtype), "bandwidth_share": self.beta,
                           "attention_plateau_tflops_h100": ATTENTION_PLATEAU_TFLOPS_H100,
                           "attention_l0": ATTENTION_L0,
                           "attention_backward_plateau_tflops_h100": ATTENTION_BWD_PLATEAU_TFLOPS_H100,
                           "attention_backward_l0": ATTENTION_BWD_L0,
                           "attention_head_dim": self.head_dim,
                           "attention_hd64_plateau_tflops_h100": ATTENTION_HD64_PLATEAU_TFLOPS_H100,
                           "attention_hd64_l0": ATTENTION_HD64_L0,
                           "attention_hd64_backward_plateau_tflops_h100": ATTENTION_HD64_BWD_PLATEAU_TFLOPS_H100,
                           "attention_hd64_backward_l0": ATTENTION_HD64_BWD_L0, "sms": self.sms,
                           "fused_qkv": self.fused_qkv, "fused_gate_up": self.fused_gate_up},
             "sources": list(SOURCES)}
        if not self.hw.sms:
            d["notes"] = [Text(N_("{gpu} has no SM count in the catalogue: tiled as {sms} SMs"), gpu=self.hw.name,
                               sms=SMS_WHEN_UNKNOWN)]
        return d

    # -- the model
    def __call__(self, op) -> float:
        t = self.breakdown(op)[0]
        dt = compute_dtype(op, self.dtype, self.hw)
        ideal = max(op.flops / self.hw.peak(dt), op.bytes / self.hw.bandwidth)
        if t <= 0 or ideal <= 0:
            return 1.0
        return ideal / t

    def breakdown(self, op) -> tuple[float, float, float, str]:
        """(time, compute side, memory side, what set it): time = max(compute side, memory side), each side
        with the op's fixed kernel time."""
        t, compute, mem, _, why = self.timing(op)
        return t, compute, mem, why

    def timing(self, op) -> tuple[float, float, float, float, str]:
        """:meth:`breakdown` with the fixed kernel time that both sides include: (time, compute side,
        memory side, fixed, what set it)."""
        fixed, t_comp, t_mem, why = self._time(op)
        return fixed + max(t_comp, t_mem), fixed + t_comp, fixed + t_mem, fixed, why

    def explain(self, op) -> str:
        return self._time(op)[3]

    def seconds(self, op) -> float:
        """The op's time in this model."""
        return self.breakdown(op)[0]

    def _kv_split(self) -> int:
        return 1 if self.cfg.is_mla else min(self.par.tp, self.cfg.kv_heads)

    def _time(self, op) -> tuple[float, float, float, str]:
        """(fixed kernel time, compute time, memory time, what set them) of all of ``op``'s runs."""
        hw = self.hw
        dt = compute_dtype(op, self.dtype, hw)
        peak = hw.peak(dt)
        bw = hw.bandwidth * self.beta
        t_mem = op.bytes / bw
        if not op.is_gemm:
            return 0.0, op.flops / peak, t_mem, Text(N_("element-wise: {share:.0%} of the bandwidth"), share=self.beta)
        if op.name in _DEPTHWISE:
            kernels = (getattr(op, "kernels", 0) or op.count)
            return kernels * T0_S, op.flops / (hw.peak("fp32") or peak), t_mem, Text(_DEPTHWISE[op.name],
                                                                                      share=self.beta)
        if op.name in _PRODUCTS and self.wl.attention == "fused":
            kernels = (getattr(op, "kernels", 0) or op.count)
            return self._fused_attention(op, kernels, peak, t_mem)
        m, n, k, batch, kernels, fused_member = self._gemm_shape(op)
        eta = gemm_share(m, n, k, batch=batch, peak=peak, ceiling=ceiling(hw, dt), sms=self.sms,
                         cap=max_share(hw, dt))
        t_comp = op.flops / (peak * eta)
        fixed = 0.0 if fused_member else kernels * T0_S
        compute = t_comp >= t_mem
        shape = dict(m=round(m), n=round(n), k=round(k), eta=eta)
        name = op.name
        if fused_member:
            what = Text(N_("compute-bound; in {op}'s fused GEMM {m:g}×{n:g}×{k:g} at {eta:.0%} of peak") if compute else
                        N_("memory-bound; in {op}'s fused GEMM {m:g}×{n:g}×{k:g} at {eta:.0%} of peak"),
                        op=_FUSED_INTO[name], **shape)
        else:
            lead = BOUND_LEADS[bound_of(fixed, t_comp, t_mem)]
            what = Text.joined([Text(lead), Text(N_("GEMM {m:g}×{n:g}×{k:g} at {eta:.0%} of peak, 1 kernel × {t0:.2f} µs")
                                                 if kernels == 1 else
                                                 N_("GEMM {m:g}×{n:g}×{k:g} at {eta:.0%} of peak, {kernels:,.0f} kernels × "
                                                    "{t0:.2f} µs"), kernels=kernels, t0=T0_S * 1e6, **shape)])
        return fixed, t_comp, t_mem, what

    def _gemm_shape(self, op) -> tuple[float, float, float, float, float, bool]:
        """(M, N, K, GEMMs per kernel, kernels, whether it runs inside another op's fused GEMM) of the kernel
        that runs ``op`` on one GPU: its local share, each routed expert's rows, the fused q|k|v or gate|up N."""
        m = float(op.m)
        n = float(op.n if not op.n_last else (op.n + op.n_last) / 2)
        k = float(op.k if not op.k_last else (op.k + op.k_last) / 2)
        kernels = (getattr(op, "kernels", 0) or op.count)
        name = op.name
        group = self._group(name)
        fused_member = group is not None and name in _FUSED_INTO
        if getattr(op, "routed", False):  # a grouped GEMM: each reached expert takes its tokens' rows
            per_token = self.cfg.routed_per_token
            reached = max(1, min(self.cfg.experts, int(m) * per_token))
            m = max(1.0, m * per_token / reached)
        kernels = kernels if kernels > 0 else 1.0
        size = kernels * 2 * m * n * k  # 0 for a product over no keys yet (DeepSeek-V4: no window closed)
        batch = max(1.0, op.flops / size) if size > 0 else 1.0  # GEMMs per kernel (heads, sequences, experts)
        if group is not None:
            n = self._fused_n(name, n)  # the kernel is the fused q|k|v (gate|up) GEMM
        return m, n, k, batch, kernels, fused_member

    def _group(self, name: str) -> str | None:
        """The fused GEMM ``name`` runs in ("qkv", "gate_up"), or None."""
        if name in ("q_proj", "k_proj", "v_proj") and self.fused_qkv and not self.cfg.is_mla:
            return "qkv"
        if name.endswith(("gate_proj", "up_proj")) and self.fused_gate_up:
            return "gate_up"
        return None

    def _fused_n(self, name: str, n: float) -> float:
        """N of the fused q|k|v or gate|up GEMM an engine runs, one GPU's share."""
        cfg, t = self.cfg, self.par.tp
        if name in ("q_proj", "k_proj", "v_proj"):
            return cfg.q_dim / t + (cfg.kv_dim + cfg.v_dim) / self._kv_split()
        return 2 * n  # gate and up have the same width

    def _keys(self, op) -> float:
        """Mean keys per query of a fused attention product (DeepSeek-V4's compressed layers: the window's band and
        the compressed entries each query reads; MiniMax-M3's block-sparse ones: the blocks it keeps; from the op's
        FLOPs)."""
        if op.name.endswith(("_compressed", "_sparse")):
            width = op.k if op.name.startswith("attn_scores") else op.n
            return op.flops / max(2.0 * width * op.m * op.count, 1.0)
        keys = float(op.n if op.name.startswith("attn_scores") else op.k)
        if op.name.startswith("attn_scores") and op.n_last:
            keys = (op.n + op.n_last) / 2
        if op.name.startswith("attn_values") and op.k_last:
            keys = (op.k + op.k_last) / 2
        w = self.cfg.sliding_window if op.name.endswith("_sliding") else 0
        if op.phase == "prefill" and self.wl.causal and op.m > 1:
            if w and keys > w:  # a band W wide: query i sees min(i + 1, W) keys
                return w - w * (w - 1) / (2 * keys)
            keys = (keys + 1) / 2  # the mean of 1 … S keys
        return min(keys, w) if w else keys

    def backward_factor(self, op) -> float:
        """How much slower per FLOP the backward of ``op`` runs than its forward. A fused attention product: the flash
        backward at its measured share of peak (:func:`attention_backward_share`) against the forward's. A weight
        GEMM Y = X·W (M×K by K×N): its backward is two GEMMs of the forward's FLOPs but not its shape — the input
        gradient dX = dY·Wᵀ (M×N by N×K: output M×K, inner N) and the weight gradient dW = Xᵀ·dY (K×M by M×N:
        output K×N, inner M, the tokens: for a routed expert its own tokens, often few) — each timed by the same
        tiling model: (T(dX) + T(dW)) / (2 × T(Y)). 1 for every other op and for a flat efficiency."""
        if op.name in _PRODUCTS:
            if not (self.wl.attention == "fused" and op.is_gemm):
                return 1.0
            keys = self._keys(op)
            dt = compute_dtype(op, self.dtype, self.hw)
            return (attention_share(self.hw, dt, keys, self.head_dim)
                    / attention_backward_share(self.hw, dt, keys, self.head_dim))
        if not op.is_gemm or op.flops <= 0 or op.name in _DEPTHWISE:
            return 1.0
        fwd = self.seconds(op)
        if fwd <= 0:
            return 1.0
        m, n, k, batch, kernels, fused_member = self._gemm_shape(op)
        dt = compute_dtype(op, self.dtype, self.hw)
        peak = self.hw.peak(dt)
        t_mem = op.bytes / (self.hw.bandwidth * self.beta)
        fixed = 0.0 if fused_member else kernels * T0_S
        c, cap = ceiling(self.hw, dt), max_share(self.hw, dt)
        bwd = 0.0
        for mm, nn, kk in ((m, k, n), (k, n, m)):  # dX: M×K over N; dW: K×N over M
            eta = gemm_share(mm, nn, kk, batch=batch, peak=peak, ceiling=c, sms=self.sms, cap=cap)
            bwd += fixed + max(op.flops / (peak * eta), t_mem)
        return bwd / (2 * fwd)

    def _fused_attention(self, op, kernels: float, peak: float, t_mem: float) -> tuple[float, float, float, str]:
        hw = self.hw
        keys = self._keys(op)
        share = attention_share(hw, compute_dtype(op, self.dtype, hw), keys, self.head_dim)
        t_comp = op.flops / (peak * share)
        first = op.name.startswith("attn_scores")  # one kernel runs both products
        fixed = kernels * T0_S if first else 0.0
        return fixed, t_comp, t_mem, Text(
            {"overhead": N_("fused attention: {share:.0%} of peak at {keys:,.0f} keys per query, overhead-bound (the "
                            "kernels' fixed time)"),
             "compute": N_("fused attention: {share:.0%} of peak at {keys:,.0f} keys per query, compute-bound"),
             "memory": N_("fused attention: {share:.0%} of peak at {keys:,.0f} keys per query, memory-bound")}[
                bound_of(fixed, t_comp, t_mem)], share=share, keys=keys)


class FlatEfficiency(float):
    """One share of peak and bandwidth for every op: ``--efficiency X``, or a device with no shape model."""

    kind = "flat"

    def describe(self, reason: str = "") -> dict:
        return {"kind": self.kind, "label": self.label, "value": float(self), "constants": {}, "sources": [],
                "notes": [reason] if reason else []}

    @property
    def label(self) -> str:
        return Text(N_("flat {e:.0%} of peak and bandwidth for every op"), e=float(self))


SOURCES = (
    "OpenXLA xla/service/gpu/model/matmul_interpolator_data.h, kDefaultMatmulPTable \"sm_90\" (H100, bf16): "
    "K0, T0, split-K and the tiling fitted to its 55 single-matrix entries",
    "NVIDIA Matrix Multiplication Background User's Guide (DU-09799-001) §2.3, §3: cuBLAS tile sizes, tile and "
    "wave quantization",
    "S. Bekman, Machine Learning Engineering, compute/accelerator/README.md, Maximum Achievable Matmul FLOPS "
    "comparison table (BF16, FP8): each GPU's ceiling",
    "Azure/AI-benchmarking-guide Azure_Results (ND H100 v5, ND H200 v5, ND A100 v4): HBM bandwidth, Triad; the "
    "cuBLASLt GEMM sweeps (random data, 10,000 warm-up iterations) at 16384³: the sustained FP8 ceilings of the H100 "
    "and the H200",
    "pytorch/benchmark PR #2391: FlashAttention-3 forward on H100 SXM, head dim 128 (430-621 TFLOP/s)",
    "Shah et al. 2024, FlashAttention-3, arXiv:2407.08608, backward speed, head dim 128, H100 SXM5 (316-561 "
    "TFLOP/s): the flash backward in training",
    "Shah et al. 2024, FlashAttention-3, arXiv:2407.08608, forward (without and with the causal mask) and backward "
    "speed, head dim 64, H100 SXM5 (333-497, 197-473 and 272-474 TFLOP/s): flash kernels with smaller heads",
)


def shape_model(hw: Hardware, cfg, wl, par=None) -> ShapeEfficiency | FlatEfficiency:
    """The default efficiency of an estimate: the shape model on a GPU; on a CPU row (whose figures the user
    types) the flat :data:`DEFAULT_EFFICIENCY`."""
    if hw.kind != "gpu":
        return FlatEfficiency(DEFAULT_EFFICIENCY)
    return ShapeEfficiency(hw, cfg, wl, par)


# ----- serving: what a step costs besides its kernels ------------------------------------------------------

# A serving engine's fixed cost per forward step that no kernel accounts for: scheduling, input preparation,
# sampling, detokenization and launching the step's CUDA graph. WukLab (Sept. 2024, "Can Scheduling Overhead
# Dominate LLM Inference Performance?", vLLM 0.5.4 and SGLang on A100 / A6000, Nsight Systems) measured
# SGLang's per-iteration scheduling overhead at no more than 3 ms, and vLLM 0.5.4's at up to half of an
# iteration; engines since overlap most of it with the GPU (SGLang 0.4's overlap scheduler: +10 % throughput;
# TensorRT-LLM's overlap scheduler, vLLM's async scheduling). The constant is that 3 ms bound, for a
# serving model to add per step where an engine does not hide it (gemmlib.llm.serving); the op-level
# times above never include it.
SERVING_STEP_OVERHEAD_S = 3e-3
SERVING_STEP_OVERHEAD_SOURCE = ("WukLab, 'Can Scheduling Overhead Dominate LLM Inference Performance?' "
                                "(2024-09-10): SGLang's scheduling overhead per iteration never above 3 ms")
