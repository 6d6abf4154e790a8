"""Is the harness honest? Its fp32 TFLOP/s against a direct torch.utils.benchmark measurement.

On the CPU, the precision benchmark's reported fp32 TFLOP/s for an N×N×N product is compared
with ``torch.utils.benchmark.Timer("a @ b").blocked_autorange()`` on the same product, using the
same number of threads. The two are measured alternately (which one goes first alternates too),
several rounds, and the medians of the rounds are compared: PASS when they agree within 10 %.

    python benchmarks/bench_harness_honesty.py [--size 1024] [--rounds 7] [--device cpu] [--threads N]

Prints both figures; exit status 0 on PASS, 1 on FAIL. On a shared, loaded machine the two can
drift apart for reasons that have nothing to do with the harness: rerun on a quiet one.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--min-run-time", type=float, default=0.5)
    ap.add_argument("--threads", type=int, default=None,
                    help="torch threads for both measurements (default: torch's own; 1 is steadier on a loaded box)")
    args = ap.parse_args()

    import torch
    if args.threads:
        torch.set_num_threads(args.threads)
    from torch.utils.benchmark import Timer

    from gemmlib.measure import precision as bp

    n = args.size
    flops = 2 * n**3
    cfg = bp.PrecisionConfig(device=args.device, shapes=((n, n, n, f"square {n}"),), dtypes=("fp32",),
                             check_error=False, min_run_time=args.min_run_time)
    g = torch.Generator().manual_seed(0)
    a = torch.randn(n, n, generator=g).to(args.device)
    b = torch.randn(n, n, generator=g).to(args.device)
    harness_tf, direct_tf = [], []

    def harness_once() -> Any:
        (r,) = bp.run_precision(cfg, record_results=False)
        harness_tf.append(r.tflops)
        return r

    def direct_once() -> Any:
        t = Timer("a @ b", globals={"a": a, "b": b}, num_threads=torch.get_num_threads())
        with bp._tf32(False) if args.device == "cuda" else contextlib.nullcontext():  # fp32, not tf32
            m = t.blocked_autorange(min_run_time=args.min_run_time)
        direct_tf.append(flops / m.median / 1e12)
        return m

    for i in range(args.rounds):
        # Alternate which goes first, so a machine that speeds up or slows down favours neither.
        if i % 2 == 0:
            r = harness_once()
            m = direct_once()
        else:
            m = direct_once()
            r = harness_once()
        print(f"round {i + 1}: harness {harness_tf[-1] * 1e3:.2f} GFLOP/s ({r.extra.get('timer')}, "
              f"{r.extra.get('reps')} calls, {r.extra.get('rotated_sets')} rotated input sets); "
              f"direct torch.utils.benchmark {direct_tf[-1] * 1e3:.2f} GFLOP/s ({m.number_per_run * len(m.times)} calls)")
    h, d = statistics.median(harness_tf), statistics.median(direct_tf)
    gap = h / d - 1
    verdict = "PASS" if abs(gap) <= 0.10 else "FAIL"
    print(f"fp32 {n}³ on {r.device_name} with {torch.get_num_threads()} threads: "
          f"harness {h * 1e3:.2f} GFLOP/s, direct {d * 1e3:.2f} GFLOP/s, difference {gap:+.1%} -> {verdict} "
          f"(within 10%)")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
