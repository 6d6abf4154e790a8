"""Where a Llama-style block's time goes, against the article's targets (issue 6). PRINTS the figures.

For each configuration: the GEMM share of time measured by torch.profiler (self times, median
over passes) beside the estimator's prediction, GEMM TFLOP/s, and — on a GPU with NVML — the
mean SM and memory-bandwidth utilization during the profile, against the targets (GEMM ≥ 80 %,
SM utilization ≥ 75 %, bandwidth ≥ 60 %). Also the harness's timing of the whole forward pass
(median, p20/p80), and the cost of profiling (profiled wall time per pass / harness median).

Run:  python benchmarks/bench_profiler.py [--device cuda|cpu] [--quick] [--json OUT]
On a CPU the sizes are scaled down; a CPU's shares say little about a GPU's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gemmlib.measure import profiler as pf  # noqa: E402
from gemmlib.measure.monitor import BANDWIDTH_TARGET, UTIL_TARGET  # noqa: E402


def configs(device: str, quick: bool) -> list[pf.BlockConfig]:
    if device == "cuda":
        seqs = (512, 2048) if quick else (128, 512, 2048, 4096, 8192)
        out = [pf.preset_config("llama-3-8b", 1, seq_len=s, layers=2, dtype="bf16") for s in seqs]
        out += [pf.preset_config("llama-3-8b", 1, seq_len=s, layers=2, dtype="bf16", attention="sdpa")
                for s in seqs]
        out += [pf.preset_config("llama-3-8b", 8, seq_len=512, layers=2, dtype="bf16")]  # small: launch-bound
        return out
    seqs = (64, 256) if quick else (64, 128, 256, 512)
    return [pf.preset_config("llama-3-8b", 16, seq_len=s, layers=1) for s in seqs] + \
        [pf.preset_config("llama-3-8b", 16, seq_len=256, layers=1, attention="sdpa")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default=None, help="also write every result here")
    args = ap.parse_args()
    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    print(f"device {device}; load average {os.getloadavg()[0]:.2f}; torch {torch.__version__}")
    print(f"targets: GEMM share ≥ {pf.GEMM_TARGET:.0%}, SM utilization ≥ {UTIL_TARGET:.0%}, "
          f"memory bandwidth ≥ {BANDWIDTH_TARGET:.0%}")
    header = (f"{'config':<44} {'GEMM share':>10} {'predicted':>9} {'GEMM TF/s':>9} {'pass ms':>9} "
              f"{'harness ms (p20-p80)':>24} {'SM %':>5} {'BW %':>5}  verdict")
    print(header)
    dump = []
    res = None
    for cfg in configs(device, args.quick):
        label = (f"h{cfg.hidden} kv{cfg.kv_heads} s{cfg.seq_len} L{cfg.layers} {cfg.dtype} {cfg.attention}")
        try:
            res = pf.profile_block(cfg, device, steps=5, warmup=3)
            bench = pf.block_benchmark(cfg, device, min_run_time=0.5)
        except Exception as e:  # noqa: BLE001 - a benchmark prints every row, failed or not
            print(f"{label:<44} not run: {type(e).__name__}: {e}")
            continue
        mon = res.monitor.summary() if res.monitor is not None and res.monitor.available else {}
        sm = mon.get("sm_util", {}).get("mean")
        bw = mon.get("mem_util", {}).get("mean")
        pred = res.prediction.time_share if res.prediction else float("nan")
        ok = res.gemm_share >= pf.GEMM_TARGET
        tf = res.gemm_tflops or 0.0
        print(f"{label:<44} {res.gemm_share:>10.1%} {pred:>9.1%} {tf:>9.3g} {res.total_time_s * 1e3:>9.3g} "
              f"{bench.median_s * 1e3:>9.3g} ({bench.p20_s * 1e3:.3g}-{bench.p80_s * 1e3:.3g}) "
              f"{'' if sm is None else f'{sm:.0f}':>5} {'' if bw is None else f'{bw:.0f}':>5}  "
              f"{'PASS' if ok else 'below'} (GEMM ≥ 80%)")
        d = res.to_dict(top=10)
        d["harness"] = bench.to_dict()
        dump.append(d)
    if res is not None and res.monitor is not None and not res.monitor.available:
        print(f"monitor: {res.monitor.reason}")
    if args.json:
        Path(args.json).write_text(json.dumps(dump, indent=2, default=str), encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
