"""Tiled GEMM at the Python level, and the DRAM traffic a tile size implies.

Two teaching implementations of D = A·B that walk the output in tiles:

* ``python_tiled`` is the article's example 4: three loops over tiles that call
  the library (``torch.matmul``) on sub-blocks and add into D. Every call is a
  separate library launch, and D is read and written once per k-tile.
* ``numpy_blocked`` is the same idea in numpy with the output-stationary order
  a real kernel uses: for each tile of D, an accumulator (fp32 for 16-bit
  inputs) sums the k-tiles and is written once.

Both are *slower* than one library call on the whole matrices — the library
already tiles, in registers and shared memory, with no Python between tiles.
The point of tiling is data reuse, which ``tile_traffic`` counts: an
output-stationary kernel with tiles of tm×tn reads A once per column of tiles
(⌈N/tn⌉ times) and B once per row of tiles (⌈M/tm⌉ times), so larger tiles mean
fewer trips to DRAM and a higher effective arithmetic intensity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gemmlib.core.dtypes import dtype_bytes
from gemmlib.core.errors import InputError
from gemmlib.core.flops import gemm_bytes, gemm_flops

if TYPE_CHECKING:  # numpy is imported by numpy_blocked alone: the traffic model needs none
    import numpy as np


def check_tile(tile: int, name: str = "tile") -> int:
    if isinstance(tile, bool) or not float(tile).is_integer():
        raise InputError(f"{name} must be a whole number, got {tile!r}")
    tile = int(tile)
    if tile < 1:
        raise InputError(f"{name} must be at least 1, got {tile}")
    return tile


def check_shapes(a_shape: tuple, b_shape: tuple) -> tuple[int, int, int]:
    if len(a_shape) != 2 or len(b_shape) != 2:
        raise InputError(f"A and B must be matrices, got shapes {tuple(a_shape)} and {tuple(b_shape)}")
    m, k = a_shape
    k2, n = b_shape
    if k != k2:
        raise InputError(f"inner dimensions differ: A is {m}×{k} but B is {k2}×{n}")
    if min(m, k, n) < 1:
        raise InputError(f"empty matrices: A is {m}×{k}, B is {k2}×{n}")
    return int(m), int(n), int(k)


def tile_count(m: int, n: int, k: int, tile: int) -> int:
    """How many sub-block products the tiled loops perform: ⌈M/t⌉·⌈N/t⌉·⌈K/t⌉."""
    t = check_tile(tile)
    return math.ceil(m / t) * math.ceil(n / t) * math.ceil(k / t)


def numpy_blocked(a: np.ndarray, b: np.ndarray, tile: int = 64) -> np.ndarray:
    """Blocked GEMM in numpy, output-stationary: each D tile sums its k-tiles in an accumulator.

    16-bit inputs are multiplied tile by tile in fp32 (numpy has no fast half
    GEMM; a tensor core also multiplies half inputs into an fp32 accumulator);
    the result is returned in the input dtype.
    """
    t = check_tile(tile)
    import numpy as np

    a = np.asarray(a)
    b = np.asarray(b)
    m, n, k = check_shapes(a.shape, b.shape)
    if a.dtype != b.dtype:
        raise InputError(f"A and B must share a dtype, got {a.dtype} and {b.dtype}")
    acc_dtype = np.float32 if a.dtype == np.float16 else np.result_type(a.dtype, np.float32)
    d = np.empty((m, n), dtype=a.dtype)
    for i in range(0, m, t):
        for j in range(0, n, t):
            acc = np.zeros((min(t, m - i), min(t, n - j)), dtype=acc_dtype)
            for p in range(0, k, t):
                acc += a[i:i + t, p:p + t].astype(acc_dtype, copy=False) @ b[p:p + t, j:j + t].astype(
                    acc_dtype, copy=False)
            d[i:i + t, j:j + t] = acc
    return d


@dataclass(frozen=True)
class TileTraffic:
    """DRAM traffic of an output-stationary tiled GEMM, assuming no cache reuse between tiles."""

    m: int
    n: int
    k: int
    tile_m: int
    tile_n: int
    tile_k: int
    dtype: str
    a_reads: int  # times all of A is read: ⌈N/tile_n⌉
    b_reads: int  # times all of B is read: ⌈M/tile_m⌉
    d_passes: int  # times D is written (1 with an accumulator; ⌈K/tile_k⌉ when D += per k-tile)
    a_bytes: float
    b_bytes: float
    d_bytes: float
    flops: int
    min_bytes: int  # read A and B once, write D once (gemm_bytes)

    @property
    def total_bytes(self) -> float:
        return self.a_bytes + self.b_bytes + self.d_bytes

    @property
    def intensity(self) -> float:
        """FLOPs per byte of the traffic this tiling implies."""
        return self.flops / self.total_bytes

    @property
    def overhead(self) -> float:
        """Traffic relative to the minimum (1.0 = every element moved once)."""
        return self.total_bytes / self.min_bytes

    def to_dict(self) -> dict:
        return {
            "tile_m": self.tile_m, "tile_n": self.tile_n, "tile_k": self.tile_k,
            "a_reads": self.a_reads, "b_reads": self.b_reads, "d_passes": self.d_passes,
            "a_bytes": self.a_bytes, "b_bytes": self.b_bytes, "d_bytes": self.d_bytes,
            "total_bytes": self.total_bytes, "min_bytes": self.min_bytes,
            "overhead": self.overhead, "intensity": self.intensity,
        }


def tile_traffic(m: int, n: int, k: int, tile_m: int, tile_n: int | None = None,
                 tile_k: int | None = None, dtype: str = "fp32", *,
                 accumulate_in_dram: bool = False) -> TileTraffic:
    """Bytes moved between DRAM and the chip when D is computed tile by tile.

    Each tile of D (tile_m × tile_n) needs its whole row panel of A (tile_m × K)
    and column panel of B (K × tile_n). With no reuse between tiles, A is read
    ⌈N/tile_n⌉ times and B ⌈M/tile_m⌉ times. ``accumulate_in_dram=True`` models
    the article's loop, which adds each k-tile's product into D in memory, so D
    is read and written once per k-tile instead of written once.
    """
    flops = gemm_flops(m, n, k)  # validates M, N, K
    tm = check_tile(tile_m, "tile_m")
    tn = check_tile(tile_n if tile_n is not None else tile_m, "tile_n")
    tk = check_tile(tile_k if tile_k is not None else tile_m, "tile_k")
    eb = dtype_bytes(dtype)
    a_reads = math.ceil(n / tn)
    b_reads = math.ceil(m / tm)
    if accumulate_in_dram:
        passes = math.ceil(k / tk)
        d_bytes = m * n * eb * (2 * passes - 1)  # first pass writes; later passes read and write
    else:
        passes = 1
        d_bytes = m * n * eb
    return TileTraffic(
        m=m, n=n, k=k, tile_m=tm, tile_n=tn, tile_k=tk, dtype=dtype,
        a_reads=a_reads, b_reads=b_reads, d_passes=passes,
        a_bytes=float(m * k * eb * a_reads), b_bytes=float(k * n * eb * b_reads), d_bytes=float(d_bytes),
        flops=flops, min_bytes=gemm_bytes(m, n, k, dtype),
    )


def traffic_table(m: int, n: int, k: int, tiles: list[int], dtype: str = "fp32", *,
                  accumulate_in_dram: bool = False) -> list[dict]:
    """One row per square tile size: reads of A and B, bytes, overhead, intensity."""
    rows = []
    for t in tiles:
        tr = tile_traffic(m, n, k, t, t, t, dtype, accumulate_in_dram=accumulate_in_dram)
        rows.append({"tile": int(t), **tr.to_dict()})
    return rows
