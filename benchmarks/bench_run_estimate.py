"""How good is the run-time estimate (gemmlib.measure.plan: a spec's plan) that the benchmark pages show before
a run, and that the caps refuse a run on?

Runs the Precision page's "LLM layer" set (llama-2-7b, batch 1, 128 tokens, every format, 0.2 s per
row: the page's defaults) and a small "Squares" set on this machine's CPU, each estimated before
(with no history, then with the history of the runs before it) and timed. Prints estimate / actual.
Target: within a factor of 1.5 once one run has been measured here (history), within 3 without.

``--buttons`` measures what a page's button says instead: each benchmark's small default run through the
runner (a fresh worker first, then with the warm spare a server keeps), its "In all about …" estimate (the
worker's start as the runner estimates it, plus the plan; the queue is empty here) against the wall time from
the press to the result. Target: within 2× either way once one run has started a worker here.

    python benchmarks/bench_run_estimate.py
    python benchmarks/bench_run_estimate.py --buttons
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout, with nothing installed

from gemmlib.core.results import clear_recorded  # noqa: E402
from gemmlib.measure import precision as bp  # noqa: E402
from gemmlib.measure import safety  # noqa: E402


def _run(cfg: bp.PrecisionConfig) -> float:
    t0 = time.perf_counter()
    bp.run_precision(cfg)
    return time.perf_counter() - t0


def buttons() -> None:
    """Each benchmark's run as a page's button starts it: estimate (start + plan) against the press-to-result time."""
    import os

    from gemmlib.measure import batching as bb
    from gemmlib.measure import calibrate as cb
    from gemmlib.measure import collectives as cl
    from gemmlib.measure import devices, plan, runner
    from gemmlib.measure import profiler as pf
    from gemmlib.measure import tiling as bt
    from gemmlib.measure import tp as tpm

    os.environ.setdefault("GEMM_SPARE_WORKER", "1")
    lim = safety.limits()
    runs = [("precision, squares 256 and 512", bp.SPEC,
             bp.PrecisionConfig(device="cpu", shapes=bp.square_shapes([256, 512]), dtypes=("fp32", "bf16"),
                                min_run_time=0.2)),
            ("batching, the page's default sweep", bb.SPEC, bb.BatchingConfig()),
            ("tiling 256, 4 tiles, numpy and torch", bt.SPEC, bt.TilingConfig(impls=("numpy_blocked", "torch"))),
            ("profiler, llama-3-8b ÷ 16, 2 layers", pf.SPEC,
             pf.ProfileConfig(pf.preset_config("llama-3-8b", 16, layers=2), steps=3)),
            # the other pages' buttons at their CPU defaults (Devices, Batching's article example, Roofline's
            # calibration, Multi-GPU's two runs on 2 gloo ranks)
            ("devices: ceilings, quick", devices.SPEC, devices.CeilingsConfig("cpu", True)),
            ("batching: the article's example, scaled", bb.ARTICLE_SPEC,
             bb.ArticleConfig("cpu", "fp32", min_run_time=0.1, **bb.article_shape("cpu"))),
            ("roofline: calibrate and validate", cb.SPEC,
             cb.CalibrationConfig(cb.make_run("cpu", "llama-3-8b"), "cpu", validate=True, threads=1)),
            ("multi-gpu: collectives, 2 gloo ranks", cl.SPEC, cl.CollectiveLaunch(cl.CollectiveConfig(
                ops=tuple(cl.MEASURED), sizes=cl.size_range(8, cl.CPU_DEFAULT_MAX), iters=10,
                time_budget_s=lim.time_limit_s), nproc=2, backend="gloo")),
            ("multi-gpu: tensor-parallel layer, 2 ranks", tpm.SPEC, tpm.TPLaunch(tpm.TPConfig(
                model=tpm.model_for("llama-3-8b", 16), seq_len=128, dtype="fp32"), ranks=(2,), backend="gloo"))]
    ratios = []
    for rnd in ("fresh worker", "warm spare"):
        if rnd == "warm spare":
            runner.prestart("cpu", wait_s=120)
        for name, spec, cfg in runs:
            if rnd == "warm spare":
                runner.prestart("cpu", wait_s=120)  # a server keeps one up between presses
            start, warm = runner.start_estimate("cpu")
            est = start + plan.planned(spec, cfg, lim).seconds
            t0 = time.perf_counter()
            out = runner.run(spec, cfg, lim, warm=rnd == "warm spare")
            took = time.perf_counter() - t0
            first = rnd == "fresh worker" and name == runs[0][0]  # the start's stated default: nothing measured yet
            if not first:
                ratios.append(est / took)
            print(f"{rnd:12} {name:45} estimate {est:6.1f} s (start {start:4.1f} s{', warm' if warm else ''})  "
                  f"actual {took:6.1f} s  estimate/actual {est / took:5.2f}  (spare used: {out.spare})"
                  + ("  [the first start: runner.FRESH_START_S, not in the target]" if first else ""), flush=True)
    runner.stop_spares()
    worst = max(max(ratios), 1 / min(ratios))
    print(f"estimate/actual from {min(ratios):.2f} to {max(ratios):.2f} over the {len(ratios)} runs after the first "
          f"start; worst factor "
          f"{worst:.2f}, target <= 2: {'PASS' if worst <= 2 else 'FAIL'}")


def main() -> None:
    if "--buttons" in sys.argv[1:]:
        buttons()
        return
    clear_recorded()
    llm = bp.PrecisionConfig(device="cpu", shapes=bp.llm_shapes("llama-2-7b", 1, 128), min_run_time=0.2)
    squares = bp.PrecisionConfig(device="cpu", shapes=bp.square_shapes([256, 512]), min_run_time=0.2)
    for name, cfg in (("squares 256, 512 (no history)", squares), ("LLM layer (history: squares)", llm),
                      ("LLM layer again (history: itself)", llm)):
        est = bp.SPEC.plan(cfg, safety.limits())
        took = _run(cfg)
        print(f"{name:36} estimate {est.seconds:7.1f} s  actual {took:7.1f} s  estimate/actual "
              f"{est.seconds / took:5.2f}  ({est.basis})", flush=True)


if __name__ == "__main__":
    main()
