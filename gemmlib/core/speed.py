"""This machine's current speed, as the time model needs it before a run (issue 26 item 8).

Two things are kept in the private cache folder (``speed.json``, through the one writer):

* **probes**: per device and format, the FLOP/s of a short calibrated GEMM that a benchmark worker
  times just before its run (``gemmlib.measure.speedprobe``): what the machine does *now*, under
  whatever load it has, in a format whose kernel may be far from the datasheet (bf16 and int8
  GEMMs on a CPU without AVX-512: 100× below it). Used while younger than :data:`PROBE_MAX_AGE_S`.
* **ratios**: per benchmark and device, how much longer the last runs took than their estimate
  (wall / estimate, smoothed; a run killed at its limit counts as at least that long), so the
  next estimate of the same kind is scaled by what this machine really did.

Nothing here imports torch: a page's estimate reads them.
"""

from __future__ import annotations

import contextlib
import json
import math
import time
from typing import Any

from gemmlib.core.errors import InputError
from gemmlib.core.files import cache_root, private_dir, read_regular, write_atomic

FILE = "speed.json"
MAX_BYTES = 65_536
PROBE_MAX_AGE_S = 900.0  # a probe older than this is the machine of a quarter of an hour ago: ignored
RATIO_MIN, RATIO_MAX = 0.5, 50.0  # the most a learned ratio moves an estimate, either way
MAX_RATE = 1e17  # FLOP/s: a probe above this is not a measurement


def _load() -> dict[str, Any]:
    if not (cache_root() / FILE).exists():  # nothing kept yet (and a page's estimate creates no folder)
        return {}
    try:
        data = read_regular(private_dir() / FILE, MAX_BYTES, what="the speed file", owner_only=True)
        doc = json.loads(data.decode("utf-8"))
    except (InputError, OSError, ValueError, UnicodeDecodeError):
        return {}  # a broken or foreign file: no speed known (the datasheet's rates), never a crash
    return doc if isinstance(doc, dict) else {}


def _save(doc: dict[str, Any]) -> None:
    with contextlib.suppress(InputError, OSError):
        write_atomic(private_dir() / FILE, json.dumps(doc, sort_keys=True), mode=0o600, flag="the speed file")


def _finite(x: Any, lo: float, hi: float) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or not lo <= x <= hi:
        return None
    return float(x)


def probed_rate(device: str, dtype: str, now: float | None = None, max_age_s: float = PROBE_MAX_AGE_S) -> float | None:
    """FLOP/s of the last probe of ``dtype`` on ``device``, None when there is none ``max_age_s`` recent."""
    entry = (_load().get("probes") or {}).get(device, {})
    entry = entry.get(dtype) if isinstance(entry, dict) else None
    if not isinstance(entry, dict):
        return None
    at = _finite(entry.get("at"), 0, math.inf)
    rate = _finite(entry.get("rate"), 1.0, MAX_RATE)
    if at is None or rate is None or (now or time.time()) - at > max_age_s:
        return None
    return rate


def save_probe(device: str, rates: dict[str, float], now: float | None = None) -> None:
    """Keep the FLOP/s just measured per format on ``device``."""
    doc = _load()
    probes = doc.get("probes") if isinstance(doc.get("probes"), dict) else {}
    dev = probes.get(device) if isinstance(probes.get(device), dict) else {}
    at = now or time.time()
    for dtype, rate in rates.items():
        if _finite(rate, 1.0, MAX_RATE) is not None:
            dev[str(dtype)] = {"rate": float(rate), "at": at}
    probes[device] = dev
    doc["probes"] = probes
    _save(doc)


def ratio(bench: str, device: str) -> float:
    """How much longer than its estimate a run of ``bench`` on ``device`` took lately (1.0: no run yet)."""
    entry = (_load().get("ratios") or {}).get(f"{bench}/{device}")
    r = _finite(entry.get("ratio"), RATIO_MIN, RATIO_MAX) if isinstance(entry, dict) else None
    return 1.0 if r is None else r


def record_ratio(bench: str, device: str, observed: float, *, at_least: bool = False) -> float:
    """Fold one run's wall / estimate into the kept ratio and return it: the geometric mean with the
    one before (one slow run moves it halfway), or, ``at_least`` (a run stopped at its limit, whose
    real length is unknown), at least ``observed``. Clamped to [RATIO_MIN, RATIO_MAX]."""
    if not math.isfinite(observed) or observed <= 0:
        return ratio(bench, device)
    old = ratio(bench, device)
    new = max(old, observed) if at_least else math.sqrt(old * observed)
    new = min(RATIO_MAX, max(RATIO_MIN, new))
    doc = _load()
    ratios = doc.get("ratios") if isinstance(doc.get("ratios"), dict) else {}
    ratios[f"{bench}/{device}"] = {"ratio": new, "at": time.time()}
    doc["ratios"] = ratios
    _save(doc)
    return new
