"""Print the tiling and batching figures issue 5 sets targets for (no assertions: read the numbers).

    python benchmarks/tiling_batching_targets.py            # whatever device is present
    python benchmarks/tiling_batching_targets.py --quick

On a GPU (targets for an H200):
  * the Triton kernel vs cuBLAS, fp16 4096³ (target ≥ 85 %), both through the harness and, as a
    cross-check, with triton.testing.do_bench directly on the same tensors;
  * decode M = 1 bf16 (4096×4096 and 8192×8192 weights): achieved GB/s vs the measured copy
    bandwidth (target ≥ 70 %);
  * the N = 8192…8320 sweep against the wave-quantization prediction.
On a CPU: the tiling lesson at 256³ and a small decode batch sweep (the GPU targets need a GPU).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gemmlib.measure import batching as bb  # noqa: E402
from gemmlib.measure import harness  # noqa: E402
from gemmlib.measure import tiling as bt  # noqa: E402


def fmt(x: float | None, spec: str = ".1f", scale: float = 1.0) -> str:
    """A figure, or "—" for a row that was not measured (unsupported, skipped, failed)."""
    return "—" if x is None else format(x * scale, spec)


def share_line(what: str, num: float | None, den: float | None, target: float, unit: str = "TFLOP/s") -> str:
    """"what: a / b unit = share (target ≥ t)", or why it cannot be said."""
    if not num or not den:
        return f"{what}: not measured ({fmt(num)} / {fmt(den)} {unit}) — target ≥ {target:.0%} not checked"
    return f"{what}: {num:.1f} / {den:.1f} {unit} = {num / den:.1%} (target ≥ {target:.0%})"


def tiling_lines(res: list) -> list[str]:
    out = []
    for r in bt.rows(res):
        ms = "—" if r["median_s"] is None else f"{r['median_s'] * 1e3:.3f} ms"
        out.append(f"  {r['impl']:<14} tile {str(r['tile'] or 'auto'):>5}: {ms:>11} {fmt(r['tflops']):>7} TFLOP/s  "
                   f"err {r['rel_error']}  {r['note'] or ''}")
    return out


def sweep_lines(results: list) -> list[str]:
    return [f"  {r['mode']:<8} B={r['batch']:>4}: {fmt(r['tflops'], '.3f')} TFLOP/s {fmt(r['gbps'], '.1f')} GB/s "
            f"I={fmt(r['intensity'], '.2f')}" + (f"  ({r['note']})" if r["note"] else "") for r in bb.rows(results)]


def wave_lines(waves: list) -> list[str]:
    return [f"  {r.name} N={r.shape['n']}: {fmt(r.tflops, '.0f')} TFLOP/s, {r.extra.get('tiles', '—')} tiles in "
            f"{r.extra.get('waves', '—')} waves, predicted {fmt(r.extra.get('predicted_tflops'), '.0f')}"
            + ("" if r.supported else f"  ({r.reason})") for r in waves]


def gpu(quick: bool) -> None:
    import torch
    import triton.testing as tt

    from gemmlib.measure import triton_gemm as tg

    print(f"device: {harness.device_name('cuda')}, triton mode: {tg.status().mode}")
    t0 = time.time()
    res = bt.run_tiling(bt.TilingConfig(device="cuda", size=4096, dtype="fp16", tiles=(64, 128, 256),
                                        impls=("triton", "torch"), min_run_time=0.2))
    print("\n".join(tiling_lines(res)))
    lib = next((r for r in res if r.name == "torch"), None)
    tri = next((r for r in res if r.name == "triton" and r.shape["tile"] is None), None)
    print(share_line(f"Triton (autotuned {tg.best_config()}) / cuBLAS, fp16 4096³, harness",
                     tri.tflops if tri else None, lib.tflops if lib else None, 0.85))
    if tg.status().timable:
        a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
        b = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
        flops = 2 * 4096**3
        ms_t = tt.do_bench(lambda: tg.triton_matmul(a, b), warmup=50, rep=300)
        ms_c = tt.do_bench(lambda: torch.matmul(a, b), warmup=50, rep=300)
        print(share_line("  cross-check with triton.testing.do_bench", flops / ms_t / 1e9, flops / ms_c / 1e9, 0.85))
    print(f"  ({time.time() - t0:.1f} s)")

    t0 = time.time()
    bw = bb.copy_bandwidth("cuda")
    print(f"copy bandwidth: {bw['bytes_per_s'] / 1e9:.0f} GB/s ({bw['source']})")
    for kn in (4096, 8192):
        for graph in (False, True):
            (r,) = bb.run_batching(bb.BatchingConfig(device="cuda", m=1, k=kn, n=kn, dtype="bf16", batches=(1,),
                                                     modes=("stacked",), cuda_graph=graph, min_run_time=0.2))
            print(share_line(f"  decode M=1 {kn}×{kn} bf16{' (CUDA graph)' if graph else ''} share of copy",
                             r.gbps, bw["bytes_per_s"] / 1e9, 0.70, "GB/s"))
    sweep = bb.run_batching(bb.BatchingConfig(device="cuda", m=1, k=4096, n=4096, dtype="bf16",
                                              batches=(1, 16, 64, 256) if quick else bb.gpu_decode_defaults().batches,
                                              min_run_time=0.05))
    print("\n".join(sweep_lines(sweep)))
    print(bb.lesson(sweep))
    ex = bb.run_article_example("cuda", min_run_time=0.1)
    print(ex["verdict"])
    print(f"  ({time.time() - t0:.1f} s)")

    t0 = time.time()
    waves = bt.run_wave_sweep("cuda", ns=bt.wave_sweep_ns(8192, 8320, 16 if quick else 8), min_run_time=0.05)
    print("\n".join(wave_lines(waves)))
    print(f"  ({time.time() - t0:.1f} s)")


def cpu(quick: bool) -> None:
    print(f"device: {harness.device_name('cpu')} (no GPU: the GPU targets cannot be measured here)")
    res = bt.run_tiling(bt.TilingConfig(device="cpu", size=128 if quick else 256, tiles=(16, 32, 64, 128),
                                        min_run_time=0.1))
    print("\n".join(tiling_lines(res)))
    print(bt.lesson(res))
    sweep = bb.run_batching(bb.cpu_decode_defaults())
    print("\n".join(sweep_lines(sweep)))
    print(bb.lesson(sweep))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    ok, _ = harness.torch_device_available("cuda")
    t0 = time.time()
    (gpu if ok else cpu)(args.quick)
    print(f"total {time.time() - t0:.1f} s")


if __name__ == "__main__":
    main()
