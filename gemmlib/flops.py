"""Counting a GEMM: FLOPs, bytes moved, arithmetic intensity, predicted time.

Conventions (shared/design.md): one multiply-add is 2 FLOPs, so an M×K by K×N
product costs 2·M·N·K; the α/β epilogue is counted apart. This is exactly what
``torch.utils.flop_counter.FlopCounterMode`` reports for ``torch.mm``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gemmlib.dtypes import dtype_bytes
from gemmlib.errors import InputError
from gemmlib.hardware import Hardware


def _check_dims(**dims: int) -> None:
    for name, v in dims.items():
        if isinstance(v, bool) or not isinstance(v, (int,)) and not float(v).is_integer():
            raise InputError(f"{name} must be a whole number, got {v!r}")
        if v < 1:
            raise InputError(f"{name} must be at least 1, got {v}")


def gemm_flops(m: int, n: int, k: int) -> int:
    """2·M·N·K: one multiply and one add per (i, j, k)."""
    _check_dims(M=m, N=n, K=k)
    return 2 * int(m) * int(n) * int(k)


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
    _check_dims(M=m, N=n, K=k)
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
    _check_dims(M=m, N=n)
    f = 0
    if alpha != 1.0:
        f += m * n
    if beta != 0.0:
        f += 2 * m * n
    return f


def gemm_bytes(m: int, n: int, k: int, dtype: str = "bf16", *, out_dtype: str | None = None,
               read_c: bool = False) -> int:
    """Minimum DRAM traffic: read A (M·K) and B (K·N) once, write D (M·N), read C if β ≠ 0."""
    _check_dims(M=m, N=n, K=k)
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


def roofline_time(flops: float, nbytes: float, hw: Hardware, dtype: str,
                  efficiency: float = 1.0) -> TimeEstimate:
    """max(FLOPs / peak, bytes / bandwidth), both derated by ``efficiency`` (0 < e ≤ 1)."""
    if not 0 < efficiency <= 1:
        raise InputError(f"efficiency must be in (0, 1], got {efficiency}")
    peak = hw.peak(dtype)
    if peak is None:
        raise InputError(f"{hw.name} has no {dtype} GEMM path in its datasheet")
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
    _check_dims(M=m, N=n, tile_M=tile_m, tile_N=tile_n, SMs=sms)
    tm, tn = math.ceil(m / tile_m), math.ceil(n / tile_n)
    tiles = tm * tn
    waves = math.ceil(tiles / sms)
    tile_eff = (m * n) / (tm * tile_m * tn * tile_n)
    wave_eff = tiles / (waves * sms)
    return WaveQuantization(tiles, waves, tile_eff, wave_eff)
