"""`python -m gemmlib bench tiling`: Python tiling vs numpy blocking vs a Triton kernel vs the library.

Example: ``python -m gemmlib bench tiling --device cpu --size 256 --tiles 32,64 --json``.
Nothing heavy is imported until ``run``.
"""

from __future__ import annotations

import argparse

from gemmlib.cli.running import run_job
from gemmlib.core import format as fmt
from gemmlib.core.errors import InputError
from gemmlib.core.results import to_json
from gemmlib.measure import harness, plan
from gemmlib.measure import tiling as bt
from gemmlib.measure.harness import torch_device_available


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda when present, else cpu)")
    parser.add_argument("--size", type=int, default=None,
                        help="M = N = K (default 256 on a CPU, 4096 on a GPU)")
    parser.add_argument("--m", type=int, default=None, help="rows of A and D (overrides --size)")
    parser.add_argument("--n", type=int, default=None, help="columns of B and D (overrides --size)")
    parser.add_argument("--k", type=int, default=None, help="inner dimension (overrides --size)")
    parser.add_argument("--tiles", default=None, help="tile sizes, comma-separated (default 16,32,64,128 on a CPU, 32,64,…,1024 on a GPU)")
    parser.add_argument("--impls", default=None,
                        help="implementations, comma-separated: python_tiled,numpy_blocked,triton,torch (default all)")
    parser.add_argument("--dtype", default=None, help="fp32, fp16 or bf16 (default fp32 on CPU, fp16 on GPU)")
    parser.add_argument("--min-run-time", type=float, default=0.2, help="seconds of timing per row (default 0.2)")
    parser.add_argument("--no-autotune", action="store_true", help="on a GPU, skip the autotuned Triton row")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def config_from_args(args: argparse.Namespace):

    device = args.device
    if device is None:
        device = "cuda" if torch_device_available("cuda")[0] else "cpu"
    base = bt.gpu_defaults() if device == "cuda" else bt.cpu_defaults()
    plan.check_min_run_time(args.min_run_time, "--min-run-time")
    for name in ("size", "m", "n", "k"):
        v = getattr(args, name)
        if v is not None and v < 1:
            raise InputError(f"--{name} must be at least 1, got {v}")
    impls = base.impls if args.impls is None else tuple(
        s.strip() for s in args.impls.split(",") if s.strip())
    return bt.TilingConfig(
        device=device, size=args.size or base.size, m=args.m, n=args.n, k=args.k,
        dtype=args.dtype or base.dtype,
        tiles=base.tiles if args.tiles is None else bt.parse_int_list(args.tiles, "--tiles"),
        impls=impls, triton_autotune=not args.no_autotune, min_run_time=args.min_run_time)


def run(args: argparse.Namespace) -> int:

    cfg = config_from_args(args)
    harness.require_device(cfg.device)
    results = run_job(bt.SPEC, cfg, quiet=args.json)
    m, n, k = cfg.mnk
    if args.json:
        rows = [{**r.to_dict(), "impl": r.name, "tile": r.shape.get("tile")} for r in results]
        print(to_json(rows, device=cfg.device, device_name=results[0].device_name if results else "",
                              m=m, n=n, k=k, dtype=cfg.dtype))
        return 0
    print(f"tiling benchmark: {m}×{n}×{k} {cfg.dtype} on {results[0].device_name if results else cfg.device}")
    print(fmt.text_table([{"impl": r["impl"], "tile": r["tile"], "median": fmt.duration(r["median_s"]),
                           "TFLOP/s": r["tflops"], "rel. error": fmt.number(r["rel_error"], 3),
                           "implied traffic": fmt.nbytes(r["traffic_GB"] and r["traffic_GB"] * 1e9),
                           "note": r["note"] or ""} for r in bt.rows(results)],
                         right=("median", "rel. error", "implied traffic")))
    print(bt.lesson(results))
    return 0
