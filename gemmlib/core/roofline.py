"""The roofline model: attainable throughput = min(peak, intensity × bandwidth)."""

from __future__ import annotations

import numpy as np

from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_


def attainable(intensity: float | np.ndarray, peak: float, bandwidth: float) -> float | np.ndarray:
    """FLOP/s a kernel of the given arithmetic intensity (FLOP/byte) can reach at best."""
    if peak <= 0 or bandwidth <= 0:
        raise InputError(N_("peak and bandwidth must be positive"))
    return np.minimum(peak, np.asarray(intensity, dtype=float) * bandwidth)


def ridge(peak: float, bandwidth: float) -> float:
    """Intensity (FLOP/byte) above which a kernel is compute-bound."""
    if peak <= 0 or bandwidth <= 0:
        raise InputError(N_("peak and bandwidth must be positive"))
    return peak / bandwidth


def roof_curve(peak: float, bandwidth: float, lo: float = 0.1, hi: float = 1e5,
               points: int = 64) -> list[dict]:
    """Points of the roof (log-spaced intensities) for a chart: intensity, FLOP/s."""
    if not 0 < lo < hi or points < 2:
        raise InputError(N_("the intensity range needs 0 < lo < hi and at least 2 points (got {lo}, {hi}, {points})"),
                         lo=lo, hi=hi, points=points)
    xs = np.logspace(np.log10(lo), np.log10(hi), points)
    xs = np.union1d(xs, [ridge(peak, bandwidth)])
    ys = attainable(xs, peak, bandwidth)
    return [{"intensity": float(x), "flops_per_s": float(y)} for x, y in zip(xs, ys, strict=True)]
