"""The estimator against published measurements: estimate, measured and error per row, and the median and
worst |error| for training and for inference beside their targets.

Every row is a file in ``benchmarks/published/`` (one measured result with its source and the facts of its
set-up); ``gemmlib.llm.published`` maps each set-up to the estimator's inputs by the same fixed rules for every
row (its module docstring lists them) — no tuning flag, no per-row constant. The targets (issue 21 item 5):
median |error| ≤ 15 % and worst ≤ 35 %, for training and for inference separately. A target missed is
printed as missed, with the figures.

Run:  python benchmarks/bench_published.py
(the same table as ``python -m gemmlib validate --published``)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gemmlib.cli.validate import render_published  # noqa: E402
from gemmlib.llm.published import table  # noqa: E402

TARGET_MEDIAN = 0.15
TARGET_WORST = 0.35


def static_then_and_now() -> None:
    """The row the old serving model missed most: static batching's answer beside the simulation's."""
    from dataclasses import replace

    from gemmlib.core.hardware import get_hardware
    from gemmlib.llm.accounting import efficiency_for
    from gemmlib.llm.parallel import phase
    from gemmlib.llm.published import DEFAULT_DIR, load_file, mapping
    from gemmlib.llm.serving import Engine, Server

    m = load_file(DEFAULT_DIR / "trtllm-llama31-8b-h100-fp8-1000-1000.json")
    mp = mapping(m)
    hw = get_hardware(mp.gpu)
    srv = Server(mp.model, mp.workload, hw, mp.parallel, engine=Engine("trtllm"), input_len=1000, output_len=1000)
    sim = srv.at_rate(float("inf"), 3000)
    c = srv.kv_limit
    w = replace(mp.workload, batch=c)
    eff = efficiency_for(None, hw, mp.model, w, mp.parallel)[0]
    dec = phase(mp.model, w, hw, mp.parallel, "decode", eff)
    pre = phase(mp.model, w, hw, mp.parallel, "prefill", eff)
    static = c / (dec.time_s / 1000)
    print(f"{m.id}: measured {m.value:,.0f} tokens/s; static batching at the KV limit ({c} requests, "
          f"prefill left out: concurrency ÷ TPOT) {static:,.0f} ({static / m.value - 1:+.0%}); its {c} prompts' "
          f"prefill {pre.time_s:.2f} s beside a decode of {dec.time_s:.2f} s; the simulation {sim.tokens_per_s:,.0f} "
          f"({sim.tokens_per_s / m.value - 1:+.0%}, {sim.mean_running:.0f} requests running on average)")


def llama3_405b_run() -> None:
    """The 8,192-GPU row as a whole run: MFU and GPU-hours for Llama 3.1 405B's 15.6 T tokens."""
    from gemmlib.core.hardware import get_hardware
    from gemmlib.llm.published import DEFAULT_DIR, _train, load_file, mapping
    from gemmlib.llm.training import LLAMA31_405B as a

    m = load_file(DEFAULT_DIR / "llama3-405b-8192-h100-tp8-pp16-dp64.json")
    tr, rc, _ = _train(mapping(m), get_hardware(a.gpu), None)
    hours = a.tokens / tr.tokens_per_s * tr.gpus / 3600
    print(f"{m.id} as the whole run ({a.tokens:.3g} tokens, recompute {rc}): MFU {tr.mfu:.1%} (published 38-43%), "
          f"{hours / 1e6:.1f} M GPU-hours (model card: {a.gpu_hours / 1e6:.2f} M for the whole pre-training, long "
          f"context and annealing included); step {tr.step_time_s:.1f} s, bubble {tr.bubble_s:.1f} s")


def main() -> int:
    t0 = time.perf_counter()
    rows, bad, summary = table()
    print(render_published(rows, bad, summary))
    print()
    static_then_and_now()
    llama3_405b_run()
    print()
    for kind in ("training", "inference"):
        s = summary[kind]
        med, worst = s["median_abs_error"], s["worst_abs_error"]
        if med is None:
            print(f"{kind:<9} no estimated rows")
            continue
        ok = med <= TARGET_MEDIAN and worst <= TARGET_WORST
        print(f"{kind:<9} median |error| {med:5.0%} (target ≤ {TARGET_MEDIAN:.0%}), worst {worst:5.0%} "
              f"(target ≤ {TARGET_WORST:.0%}): {'met' if ok else 'MISSED'}; "
              f"{s['estimated']} of {s['rows']} rows estimated")
    print(f"({time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
