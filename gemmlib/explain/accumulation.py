"""Accumulator precision: the same dot products summed in fp16, fp32 and fp64.

A tensor core multiplies low-precision operands (fp16 or bf16) and adds the
products into an accumulator. The products of two fp16 numbers are exact in
fp32 (11 + 11 significand bits fit in fp32's 24), so what decides the error is
the precision of the *running sum*: each addition rounds it to the
accumulator's format. In fp16 (11 significand bits) a large running sum
swallows small products whole — once the sum reaches 2048, adding anything
below 1 changes nothing — so the error grows with K. That is why GEMM kernels
(cuBLAS, CUTLASS, Triton's ``tl.dot``) accumulate fp16/bf16 inputs in fp32.

Here each dot product is accumulated *sequentially* (k = 0, 1, …, K−1, one
rounding per addition, as the article's loop does), with operands first
rounded to fp16 (or bf16) like a tensor core's inputs, and compared with the
sum of those same rounded products in extended precision (numpy's long
double; fp16×fp16 products are exact in float64, and the reference sum's own
error is far below anything measured here). Because a
sequential sum's prefix of length K *is* the dot product of the first K
elements, one pass over K_max gives the error at every K at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_, Msg, Translate, english

ACCUMULATORS: dict[str, type] = {"fp16": np.float16, "fp32": np.float32, "fp64": np.float64}
OPERAND_DTYPES: tuple[str, ...] = ("fp16", "bf16", "fp32")
DISTRIBUTIONS: dict[str, str] = {  # N_-marked: translated where shown
    "uniform": N_("uniform in [0, 1): all products positive, the sum grows like K/4"),
    "normal": N_("standard normal: signs cancel, the sum grows like √K"),
}
DISTRIBUTION_NAMES: dict[str, str] = {"uniform": N_("uniform"), "normal": N_("normal")}  # as shown
DEFAULT_KS: tuple[int, ...] = (16, 64, 256, 1024, 4096, 16384, 65536)
MAX_K = 1 << 17
MAX_ROWS = 256


def round_operands(x: np.ndarray, dtype: str) -> np.ndarray:
    """Round to fp16, bf16 (round to nearest even) or fp32, returned as float64."""
    x = np.asarray(x, dtype=np.float64)
    if dtype == "fp16":
        return x.astype(np.float16).astype(np.float64)
    if dtype == "fp32":
        return x.astype(np.float32).astype(np.float64)
    if dtype == "bf16":
        bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
        return rounded.astype(np.uint32).view(np.float32).astype(np.float64)
    raise InputError(N_("unknown operand dtype {dtype!r}; choose one of {choices}"), dtype=dtype,
                     choices=", ".join(OPERAND_DTYPES))


def _acc_type(name: str) -> type:
    if name not in ACCUMULATORS:
        raise InputError(N_("unknown accumulator {name!r}; choose one of {choices}"), name=name,
                         choices=", ".join(ACCUMULATORS))
    return ACCUMULATORS[name]


def sequential_sum(products: np.ndarray, accumulator: str) -> np.ndarray:
    """Running sums along the last axis, rounding after every addition (float64 out).

    ``np.add.accumulate`` adds strictly left to right (unlike ``np.sum``, which is
    pairwise), so each prefix is exactly what a k-loop in that precision computes.
    """
    t = _acc_type(accumulator)
    p = np.asarray(products).astype(t)  # each product rounded to the accumulator first
    with np.errstate(over="ignore", invalid="ignore"):
        return np.add.accumulate(p, axis=-1, dtype=t).astype(np.float64)


def dot(a: np.ndarray, b: np.ndarray, accumulator: str = "fp32", operands: str = "fp16") -> float:
    """One dot product: operands rounded to ``operands``, summed sequentially in ``accumulator``."""
    a, b = np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel()
    if a.size != b.size or a.size == 0:
        raise InputError(N_("a dot product needs two non-empty vectors of one length, got {a} and {b}"), a=a.size,
                         b=b.size)
    prods = round_operands(a, operands) * round_operands(b, operands)
    return float(sequential_sum(prods, accumulator)[-1])


def matmul(a: np.ndarray, b: np.ndarray, accumulator: str = "fp32", operands: str = "fp16") -> np.ndarray:
    """A@B where every output is a sequential dot product in ``accumulator`` precision."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise InputError(N_("shapes {a} and {b} do not multiply"), a=a.shape, b=b.shape)
    prods = round_operands(a, operands)[:, :, None] * round_operands(b, operands)[None, :, :]  # M,K,N
    return sequential_sum(np.moveaxis(prods, 1, 2), accumulator)[..., -1]


@dataclass(frozen=True)
class AccumulationPoint:
    k: int
    accumulator: str
    median_rel_error: float  # median over the dot products of |sum − exact| / |exact|
    max_rel_error: float
    median_abs_error: float
    exact_magnitude: float  # median |exact sum| (how big the running sum gets)
    overflow: bool  # the accumulator overflowed (fp16 beyond 65504) in some row


@dataclass(frozen=True)
class AccumulationStudy:
    ks: tuple[int, ...]
    rows: int
    seed: int
    distribution: str
    operands: str
    points: tuple[AccumulationPoint, ...]

    def records(self) -> list[dict]:
        """One dict per (K, accumulator) for tables and charts."""
        return [{"K": p.k, "accumulator": p.accumulator, "median relative error": p.median_rel_error,
                 "max relative error": p.max_rel_error, "median absolute error": p.median_abs_error,
                 "|exact sum|": p.exact_magnitude, "overflow": p.overflow} for p in self.points]

    def at(self, k: int, accumulator: str) -> AccumulationPoint:
        for p in self.points:
            if p.k == k and p.accumulator == accumulator:
                return p
        raise KeyError((k, accumulator))


def accumulation_study(ks: tuple[int, ...] = DEFAULT_KS, rows: int = 16, seed: int = 0,
                       distribution: str = "uniform", operands: str = "fp16",
                       accumulators: tuple[str, ...] = ("fp16", "fp32", "fp64")) -> AccumulationStudy:
    """Error of sequential accumulation vs the exact sum, for ``rows`` random dot products
    at each length K in ``ks``.

    Operands are drawn in float64, rounded to ``operands``; the exact reference is
    the float64 sum of the (exactly representable) rounded products.
    """
    ks = tuple(sorted({int(k) for k in ks}))
    if not ks or ks[0] < 1:
        raise InputError(N_("every K must be at least 1"))
    if ks[-1] > MAX_K:
        raise InputError(N_("K = {k} is too long for this demo (at most {limit})"), k=ks[-1], limit=MAX_K)
    if not 1 <= int(rows) <= MAX_ROWS:
        raise InputError(N_("rows must be between 1 and {limit}, got {rows}"), limit=MAX_ROWS, rows=rows)
    if distribution not in DISTRIBUTIONS:
        raise InputError(N_("unknown distribution {name!r}; choose one of {choices}"), name=distribution,
                         choices=", ".join(DISTRIBUTIONS))
    rng = np.random.default_rng(int(seed))
    kmax = ks[-1]
    shape = (int(rows), kmax)
    if distribution == "uniform":
        a, b = rng.random(shape), rng.random(shape)
    else:
        a, b = rng.standard_normal(shape), rng.standard_normal(shape)
    prods = round_operands(a, operands) * round_operands(b, operands)
    idx = np.array(ks) - 1
    # the reference sum in extended precision (x86 long double: 64-bit significand), so that even
    # the fp64 accumulator's own rounding shows; where long double is plain double it reads 0.
    exact = np.cumsum(prods.astype(np.longdouble), axis=1)[:, idx]
    mag = np.abs(exact).astype(np.float64)
    points = []
    for acc in accumulators:
        got = sequential_sum(prods, acc)[:, idx]
        abs_err = np.abs(got.astype(np.longdouble) - exact).astype(np.float64)
        overflow = ~np.isfinite(got)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(mag > 0, abs_err / np.where(mag > 0, mag, 1), 0.0)
        rel = np.where(overflow, np.inf, rel)
        for c, k in enumerate(ks):
            points.append(AccumulationPoint(k, acc, float(np.median(rel[:, c])), float(np.max(rel[:, c])),
                                            float(np.median(abs_err[:, c])), float(np.median(mag[:, c])),
                                            bool(overflow[:, c].any())))
    return AccumulationStudy(ks, int(rows), int(seed), distribution, operands, tuple(points))


def unit_roundoff(accumulator: str) -> float:
    """Half an ulp at 1: 2^-11 (fp16), 2^-24 (fp32), 2^-53 (fp64)."""
    return float(np.finfo(_acc_type(accumulator)).eps) / 2


def explain(study: AccumulationStudy, gettext: Translate = english) -> str:
    """Two sentences a teacher can read out, with the figures of this study (through ``gettext``:
    English by default)."""
    k = study.ks[-1]
    f16, f32 = study.at(k, "fp16"), study.at(k, "fp32")
    parts = [Msg(N_("At K = {k}, accumulating in fp16 is off by a median {fp16:.2%} (relative), fp32 by {fp32:.1e}."),
                 k=k, fp16=f16.median_rel_error, fp32=f32.median_rel_error)]
    if study.distribution == "uniform":
        parts.append(Msg(N_("In fp16 the running sum stops growing once an ulp of the sum is bigger than twice "
                            "the products: at 2048 the spacing of fp16 numbers is 2, so products below 1 are lost.")))
    parts.append(Msg(N_("Each addition rounds to the accumulator's precision (unit roundoff {fp16:.1e} for fp16, "
                        "{fp32:.1e} for fp32) and K additions add up, so the error grows with K: tensor cores take "
                        "fp16/bf16 operands but accumulate in fp32."),
                     fp16=unit_roundoff("fp16"), fp32=unit_roundoff("fp32")))
    out = ""
    for m in parts:  # sentences: a space after an English full stop, none after a Chinese one
        out += ("" if not out or out.endswith("。") else " ") + m.render(gettext)
    return out


def matmul_errors(a: np.ndarray, b: np.ndarray, operands: str = "fp16",
                  accumulators: tuple[str, ...] = ("fp16", "fp32", "fp64")) -> list[dict]:
    """A@B for small matrices with each accumulator: the largest error against the exact product of
    the same rounded operands, and how much operand rounding alone moved the result."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    exact_rounded = matmul(a, b, "fp64", operands)  # float64 sums of exact products
    operand_shift = float(np.max(np.abs(exact_rounded - a @ b)))
    rows = []
    for acc in accumulators:
        got = matmul(a, b, acc, operands)
        err = np.abs(got - exact_rounded)
        rows.append({"accumulator": acc, "max |error|": float(np.max(err)) if np.all(np.isfinite(got)) else math.inf,
                     "operand rounding moved D by": operand_shift})
    return rows
