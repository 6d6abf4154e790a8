"""How good is the run-time estimate (gemmlib.measure.plan) that the benchmark pages show before a run?

Runs the Precision page's "LLM layer" set (llama-2-7b, batch 1, 128 tokens, every format, 0.2 s per
row: the page's defaults) and a small "Squares" set on this machine's CPU, each estimated before
(with no history, then with the history of the runs before it) and timed. Prints estimate / actual.
Target: within a factor of 1.5 once one run has been measured here (history), within 3 without.

    python benchmarks/bench_run_estimate.py
"""

from __future__ import annotations

import time

from gemmlib.core.results import clear_recorded
from gemmlib.measure import plan
from gemmlib.measure import precision as bp


def _run(cfg: bp.PrecisionConfig) -> float:
    t0 = time.perf_counter()
    bp.run_precision(cfg)
    return time.perf_counter() - t0


def main() -> None:
    clear_recorded()
    llm = bp.PrecisionConfig(device="cpu", shapes=bp.llm_shapes("llama-2-7b", 1, 128), min_run_time=0.2)
    squares = bp.PrecisionConfig(device="cpu", shapes=bp.square_shapes([256, 512]), min_run_time=0.2)
    for name, cfg in (("squares 256, 512 (no history)", squares), ("LLM layer (history: squares)", llm),
                      ("LLM layer again (history: itself)", llm)):
        est = plan.precision(cfg)
        took = _run(cfg)
        print(f"{name:36} estimate {est.seconds:7.1f} s  actual {took:7.1f} s  estimate/actual "
              f"{est.seconds / took:5.2f}  ({est.basis})", flush=True)


if __name__ == "__main__":
    main()
