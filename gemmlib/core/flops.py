"""Counting a GEMM: FLOPs, bytes moved, arithmetic intensity, predicted time.

Conventions (shared/design.md): one multiply-add is 2 FLOPs, so an M×K by K×N
product costs 2·M·N·K; the α/β epilogue is counted apart. This is exactly what
``torch.utils.flop_counter.FlopCounterMode`` reports for ``torch.mm``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gemmlib.core.dtypes import dtype_bytes
from gemmlib.core.errors import InputError
from gemmlib.core.hardware import Hardware
from gemmlib.core.i18n import N_, Msg


def _whole(name: str | Msg, v: object) -> int:
    """``v`` as a whole number ≥ 1, or an InputError that names it (``name``: a symbol or a Msg)."""
    if isinstance(v, bool):
        raise InputError(N_("{name} must be a whole number, got {value!r}"), name=name, value=v)
    try:
        f = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(N_("{name} must be a whole number, got {value!r}"), name=name, value=v) from None
    if not math.isfinite(f) or not f.is_integer():
        raise InputError(N_("{name} must be a whole number, got {value!r}"), name=name, value=v)
    if f < 1:
        raise InputError(N_("{name} must be at least 1, got {value}"), name=name, value=v)
    return int(v) if isinstance(v, int) else int(f)


def _check_dims(*named: tuple[str | Msg, object], **dims: object) -> tuple[int, ...]:
    """Validate dimensions (whole numbers ≥ 1); returns them as ints, in order: ``(name, value)``
    pairs first (a name that is a Msg, translated where shown), then the keywords."""
    return tuple(_whole(name, v) for name, v in (*named, *dims.items()))


def gemm_flops(m: int, n: int, k: int) -> int:
    """2·M·N·K: one multiply and one add per (i, j, k)."""
    m, n, k = _check_dims(M=m, N=n, K=k)
    return 2 * m * n * k


def gemm_macs(m: int, n: int, k: int) -> int:
    """Multiply-accumulates: M·N·K (half the FLOPs)."""
    return gemm_flops(m, n, k) // 2


def naive_op_counts(m: int, n: int, k: int) -> dict[str, int]:
    """What the article counts: M·N·K multiplications and M·N·(K−1) additions.

    A dot product of length K needs only K−1 additions when it starts from the
    first product instead of from zero, so the exact count is 2·M·N·K − M·N;
    the 2·M·N·K convention charges one extra add per output (the accumulate
    into a zero register, or into C), a relative gap of 1/(2K).
    """
    m, n, k = _check_dims(M=m, N=n, K=k)
    mults = m * n * k
    adds = m * n * (k - 1)
    formula = 2 * m * n * k
    return {
        "multiplications": mults,
        "additions": adds,
        "counted": mults + adds,
        "formula": formula,
        "gap": formula - (mults + adds),
        "relative_gap": (formula - (mults + adds)) / formula,
    }


def epilogue_flops(m: int, n: int, alpha: float = 1.0, beta: float = 0.0) -> int:
    """FLOPs of D = α·(AB) + β·C beyond the product: M·N per non-trivial α, 2·M·N for β ≠ 0."""
    m, n = _check_dims(M=m, N=n)
    f = 0
    if alpha != 1.0:
        f += m * n
    if beta != 0.0:
        f += 2 * m * n
    return f


def gemm_bytes(m: int, n: int, k: int, dtype: str = "bf16", *, out_dtype: str | None = None,
               read_c: bool = False) -> int:
    """Minimum DRAM traffic: read A (M·K) and B (K·N) once, write D (M·N), read C if β ≠ 0."""
    m, n, k = _check_dims(M=m, N=n, K=k)
    b_in = dtype_bytes(dtype)
    b_out = dtype_bytes(out_dtype or dtype)
    total = (m * k + k * n) * b_in + m * n * b_out
    if read_c:
        total += m * n * b_out
    return int(total)


def arithmetic_intensity(m: int, n: int, k: int, dtype: str = "bf16") -> float:
    """FLOPs per byte of minimum traffic."""
    return gemm_flops(m, n, k) / gemm_bytes(m, n, k, dtype)


@dataclass(frozen=True)
class TimeEstimate:
    seconds: float
    compute_s: float
    memory_s: float
    bound: str  # "compute" or "memory"
    peak: float  # FLOP/s used
    bandwidth: float  # bytes/s used

    @property
    def tflops(self) -> float:
        return 0.0 if self.seconds == 0 else self.compute_s * self.peak / self.seconds / 1e12


# The share of a datasheet's peak and bandwidth that the app and the CLI assume a real kernel reaches,
# unless told otherwise (every page's efficiency slider, `estimate --efficiency`). 0.7: the published
# maximum achievable bf16 matmul is 794.5 of 989 TFLOP/s on an H100 SXM (80 %) and 271.2 of 312 on an
# A100 (87 %), for large square GEMMs; an LLM's mix of shapes, the memory-bound decode GEMMs included,
# reaches less, and one H200 here measured 788 TFLOP/s bf16 and 4.3 of 4.8 TB/s copy (80 %, 90 %).
DEFAULT_EFFICIENCY = 0.7


def roofline_time(flops: float, nbytes: float, hw: Hardware, dtype: str,
                  efficiency: float = 1.0) -> TimeEstimate:
    """max(FLOPs / peak, bytes / bandwidth), both derated by ``efficiency`` (0 < e ≤ 1)."""
    if not 0 < efficiency <= 1:
        raise InputError(N_("efficiency must be in (0, 1], got {efficiency}"), efficiency=efficiency)
    peak = hw.peak(dtype)
    if peak is None:
        raise InputError(N_("{gpu} has no {dtype} GEMM path in its datasheet"), gpu=hw.name, dtype=dtype)
    peak *= efficiency
    bw = hw.bandwidth * efficiency
    c = flops / peak
    mem = nbytes / bw
    return TimeEstimate(max(c, mem), c, mem, "compute" if c >= mem else "memory", peak, bw)


def gemm_time(m: int, n: int, k: int, hw: Hardware, dtype: str = "bf16",
              efficiency: float = 1.0) -> TimeEstimate:
    return roofline_time(gemm_flops(m, n, k), gemm_bytes(m, n, k, dtype), hw, dtype, efficiency)


@dataclass(frozen=True)
class WaveQuantization:
    tiles: int  # output tiles launched: ceil(M/tm)·ceil(N/tn)
    waves: int  # ceil(tiles / SMs)
    tile_efficiency: float  # useful MN / padded MN (tile quantization)
    wave_efficiency: float  # tiles / (waves·SMs) (wave quantization)

    @property
    def efficiency(self) -> float:
        """Share of the launched SM-time that does useful work."""
        return self.tile_efficiency * self.wave_efficiency


def wave_quantization(m: int, n: int, tile_m: int, tile_n: int, sms: int) -> WaveQuantization:
    """Tile and wave quantization of an output-stationary GEMM kernel.

    Each tile of D is one work unit on one SM; a partly filled tile costs a full
    one, and a last wave that leaves SMs idle costs a full wave.
    """
    m, n, tile_m, tile_n, sms = _check_dims(M=m, N=n, tile_M=tile_m, tile_N=tile_n, SMs=sms)
    tm, tn = math.ceil(m / tile_m), math.ceil(n / tile_n)
    tiles = tm * tn
    waves = math.ceil(tiles / sms)
    tile_eff = (m * n) / (tm * tile_m * tn * tile_n)
    wave_eff = tiles / (waves * sms)
    return WaveQuantization(tiles, waves, tile_eff, wave_eff)


# ----------------------------------------------------------------------------- grids for the FLOPs page

MAX_GRID_CELLS = 40 * 40
MAX_STAIRCASE_POINTS = 8192


def dim_range(start: int, stop: int, step: int, name: str = "M") -> list[int]:
    """start, start+step, …, ≤ stop (inclusive), validated for a chart axis."""
    start, stop, step = _check_dims((Msg(N_("{name} from"), name=name), start), (Msg(N_("{name} to"), name=name), stop),
                                    (Msg(N_("{name} step"), name=name), step))
    if stop < start:
        raise InputError(N_("{name}: the range ends ({stop}) before it starts ({start})"), name=name, stop=stop,
                         start=start)
    values = list(range(start, stop + 1, step))
    if len(values) > 40:
        raise InputError(N_("{name}: {n} values is too many for a readable heatmap (at most 40); take a larger step"),
                         name=name, n=len(values))
    return values


METRICS: dict[str, str] = {  # metric (a record's key) -> what it is (N_-marked: translated where shown)
    "GFLOPs": "2·M·N·K / 10⁹",
    "MB moved": N_("minimum DRAM traffic: read A and B once, write D (10⁶ bytes)"),
    "FLOP/byte": N_("arithmetic intensity: FLOPs per byte of minimum traffic"),
    "time µs": N_("roofline time max(FLOPs/peak, bytes/bandwidth) on the chosen hardware"),
}
METRIC_LABELS: dict[str, str] = {"GFLOPs": "GFLOPs", "MB moved": N_("MB moved"), "FLOP/byte": N_("FLOP/byte"),
                                 "time µs": N_("time µs")}  # each metric's name, as shown


def metric_grid(ms: list[int], ns: list[int], k: int, dtype: str = "bf16", hw: Hardware | None = None,
                efficiency: float = 1.0) -> list[dict]:
    """One record per (M, N) with every metric of the FLOPs page: FLOPs (exact) and GFLOPs, MB moved, FLOP/byte,
    and, when ``hw`` is given, the roofline time (µs) and what bounds it."""
    (k,) = _check_dims(K=k)
    if len(ms) * len(ns) > MAX_GRID_CELLS:
        raise InputError(N_("{m}×{n} cells is too many (at most {limit})"), m=len(ms), n=len(ns),
                         limit=MAX_GRID_CELLS)
    out = []
    for m in ms:
        for n in ns:
            f = gemm_flops(m, n, k)
            b = gemm_bytes(m, n, k, dtype)
            rec = {"M": int(m), "N": int(n), "K": k, "FLOPs": f, "GFLOPs": f / 1e9, "MB moved": b / 1e6,
                   "FLOP/byte": f / b}
            if hw is not None:
                t = roofline_time(f, b, hw, dtype, efficiency)
                rec.update({"time µs": t.seconds * 1e6, "bound": t.bound,
                            "TFLOP/s": f / t.seconds / 1e12})
            out.append(rec)
    return out


def wave_staircase(m: int, n_from: int, n_to: int, tile_m: int, tile_n: int, sms: int,
                   step: int = 1, k: int | None = None) -> list[dict]:
    """``wave_quantization`` for N = n_from … n_to: the efficiency staircase.

    Each record: N, tiles, waves, tile/wave efficiency, their product, and, with
    ``k``, the FLOPs done vs the FLOPs the padded launch costs.
    """
    n_from, n_to, step = _check_dims((Msg(N_("{name} from"), name="N"), n_from), (Msg(N_("{name} to"), name="N"), n_to),
                                     (Msg(N_("{name} step"), name="N"), step))
    if n_to < n_from:
        raise InputError(N_("{name}: the range ends ({stop}) before it starts ({start})"), name="N", stop=n_to,
                         start=n_from)
    ns = range(n_from, n_to + 1, step)
    if len(ns) > MAX_STAIRCASE_POINTS:
        raise InputError(N_("{n} points is too many (at most {limit}); take a larger step"), n=len(ns),
                         limit=MAX_STAIRCASE_POINTS)
    out = []
    for n in ns:
        w = wave_quantization(m, n, tile_m, tile_n, sms)
        rec = {"N": n, "tiles": w.tiles, "waves": w.waves, "tile efficiency": w.tile_efficiency,
               "wave efficiency": w.wave_efficiency, "efficiency": w.efficiency}
        if k is not None:
            rec["useful GFLOPs"] = gemm_flops(m, n, k) / 1e9
            rec["launched GFLOPs"] = 2 * w.waves * sms * tile_m * tile_n * int(k) / 1e9
        out.append(rec)
    return out


def article_count_check(m: int = 128, n: int = 64, k: int = 256) -> dict:
    """The article's check (its ``M, K, N = 128, 256, 64``): counted multiplications and
    additions against 2·M·N·K. The gap is M·N, one add per output, i.e. 1/(2K) of the formula."""
    c = naive_op_counts(m, n, k)
    c.update({"M": m, "N": n, "K": k, "relative_gap_formula": 1 / (2 * k)})
    return c
