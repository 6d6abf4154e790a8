"""A short calibrated probe of this machine's GEMM speed, per format, timed just before a run.

The time model's rates come from the datasheet or from ceilings measured on an idle machine; on a
loaded machine, or for a format whose CPU kernel is a slow path (bf16 and ``torch._int_mm`` on a
CPU without AVX-512: ~100× below the datasheet's placeholder), its estimates were 3–70× short and
runs it admitted were killed at their limit (issue 26 item 8). A benchmark worker therefore times,
before its first row, the very call each of its formats runs (``a @ b`` in fp32, bf16, fp16;
``torch._int_mm`` for int8) on squares that grow (256, 512, 1024) while the next size fits in
:data:`BUDGET_S` — so a fast format is measured near its real rate and a slow one stops at the
first size — and keeps the best rate (``gemmlib.core.speed``) for the time model.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

PROBED = ("fp32", "bf16", "fp16", "int8")  # the formats whose call is one torch op on every device
SIZES = (256, 512, 1024)
# On a GPU one call of 1024³ or less is a few µs of kernel beside ~10–20 µs of launch and synchronization: timed one by
# one it read an H100's bf16 rate several times too slow (and the time model ranks the probe above measured ceilings).
# There the sizes reach 4096³ and each sample is CALLS_GPU calls queued back to back between two synchronizations.
SIZES_GPU = (1024, 2048, 4096)
CALLS_GPU = 10
MAX_N = SIZES[-1]
BUDGET_S = 1.0  # the most one format's probe may take: the next size is tried only if it fits


def _operands(dtype: str, n: int, device: str, layout_as: str | None = None):
    """A and B of the probe's ``dtype`` call, laid out as ``layout_as`` (default ``device``) runs it."""
    import torch

    g = torch.Generator(device="cpu").manual_seed(0)
    if dtype == "int8":
        from gemmlib.measure.quant import column_major

        a = torch.randint(-127, 128, (n, n), generator=g, dtype=torch.int8).to(device)
        b = torch.randint(-127, 128, (n, n), generator=g, dtype=torch.int8).to(device)
        if (layout_as or device) == "cuda":  # cuBLASLt's int8 kernels are "TN" only: B column-major (quant.py)
            b = column_major(b)
        return a, b
    tdt = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    return torch.randn(n, n, generator=g).to(device, tdt), torch.randn(n, n, generator=g).to(device, tdt)


def _call(dtype: str, n: int, device: str):
    import torch

    a, b = _operands(dtype, n, device)
    if dtype == "int8":
        return lambda: torch._int_mm(a, b)
    return lambda: a @ b


def probe_one(dtype: str, device: str = "cpu", budget_s: float = BUDGET_S) -> float | None:
    """FLOP/s of one ``dtype`` GEMM call on ``device`` now: the best over the sizes tried (256,
    512, 1024; on a GPU 1024, 2048, 4096, each sample :data:`CALLS_GPU` calls back to back) of the median of three
    samples; the next size (8× the work) is tried only while three of its samples would fit in ``budget_s``. On a
    loaded machine every call pays ~20 ms of waiting for its threads, so a small size alone would read a fast format
    as a slow one. None when the format does not run here."""
    import torch

    gpu = device == "cuda"
    sync = torch.cuda.synchronize if gpu else (lambda: None)
    sizes, calls = (SIZES_GPU, CALLS_GPU) if gpu else (SIZES, 1)
    start = time.perf_counter()
    best: float | None = None
    for i, n in enumerate(sizes):
        try:
            f = _call(dtype, n, device)
            if i == 0 or gpu:
                f()  # first use: the kernel's own set-up (on a GPU, each size's own kernel choice)
                sync()
            times = []
            for _ in range(3):
                t0 = time.perf_counter()
                for _ in range(calls):
                    f()
                sync()
                times.append((time.perf_counter() - t0) / calls)
        except (RuntimeError, NotImplementedError, TypeError):
            return best
        t = max(sorted(times)[1], 1e-9)  # the median: one call lucky with the scheduler does not set it
        best = max(best or 0.0, 2.0 * n ** 3 / t)
        if time.perf_counter() - start + 3 * 8 * t * calls > budget_s:
            break
    return best


def probe(device: str, dtypes: Iterable[str]) -> dict[str, float]:
    """FLOP/s per format of ``dtypes`` that this probe knows (others are left to the time model)."""
    out: dict[str, float] = {}
    for d in dict.fromkeys(dtypes):
        if d in PROBED:
            r = probe_one(d, device)
            if r:
                out[d] = r
    return out
