"""`python -m gemmlib bench batching`: loop vs stacked vs bmm over a batch sweep.

Example: ``python -m gemmlib bench batching --device cpu --m 1 --k 1024 --n 1024 --batches 1,8,32 --json``.
Nothing heavy is imported until ``run``.
"""

from __future__ import annotations

import argparse

from gemmlib.cli.running import run_job
from gemmlib.core import format as fmt
from gemmlib.core.errors import InputError
from gemmlib.core.results import to_json
from gemmlib.measure import batching as bb
from gemmlib.measure import harness, plan
from gemmlib.measure.harness import torch_device_available
from gemmlib.measure.tiling import parse_int_list


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda when present, else cpu)")
    parser.add_argument("--m", type=int, default=None, help="rows per request (1 = decode; default 1)")
    parser.add_argument("--k", type=int, default=None, help="input width (default 1024 on CPU, 4096 on GPU)")
    parser.add_argument("--n", type=int, default=None, help="output width (default 1024 on CPU, 4096 on GPU)")
    parser.add_argument("--batches", default=None, help="batch sizes, comma-separated (default 1,4,16,64 on a CPU, 1,2,4,…,256 on a GPU)")
    parser.add_argument("--modes", default=None, help="comma-separated: loop,stacked,bmm (default all)")
    parser.add_argument("--dtype", default=None, help="fp32, fp16 or bf16 (default fp32 on CPU, bf16 on GPU)")
    parser.add_argument("--cuda-graph", action="store_true", help="time CUDA-graph replays (GPU only)")
    parser.add_argument("--min-run-time", type=float, default=0.1, help="seconds of timing per row (default 0.1)")
    parser.add_argument("--article", action="store_true",
                        help="also run the article's example (20 × 1024×4096 @ 4096×4096; scaled down on "
                             "a CPU) with a verdict")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def config_from_args(args: argparse.Namespace):

    device = args.device
    if device is None:
        device = "cuda" if torch_device_available("cuda")[0] else "cpu"
    base = bb.gpu_decode_defaults() if device == "cuda" else bb.cpu_decode_defaults()
    plan.check_min_run_time(args.min_run_time, "--min-run-time")
    for name in ("m", "k", "n"):
        v = getattr(args, name)
        if v is not None and v < 1:
            raise InputError(f"--{name} must be at least 1, got {v}")
    modes = base.modes if args.modes is None else tuple(s.strip() for s in args.modes.split(",") if s.strip())
    return bb.BatchingConfig(
        device=device, m=args.m or base.m, k=args.k or base.k, n=args.n or base.n,
        dtype=args.dtype or base.dtype,
        batches=base.batches if args.batches is None else parse_int_list(args.batches, "--batches"),
        modes=modes, cuda_graph=bool(args.cuda_graph), min_run_time=args.min_run_time)


def run(args: argparse.Namespace) -> int:

    cfg = config_from_args(args)
    harness.require_device(cfg.device)
    article = None
    art_cfg = None
    if args.article:  # refused now, before the sweep runs, if it cannot run
        art_cfg = bb.ArticleConfig(cfg.device, cfg.dtype, min_run_time=cfg.min_run_time, **bb.article_shape(cfg.device))
        plan.admit(bb.ARTICLE_SPEC, art_cfg)
    results = run_job(bb.SPEC, cfg, quiet=args.json)
    if art_cfg is not None:
        article = run_job(bb.ARTICLE_SPEC, art_cfg, quiet=args.json)
    shape = bb.article_shape(cfg.device)
    scaled = shape != bb.ARTICLE
    if args.json:
        rows = [{**r.to_dict(), "mode": r.name, "batch": r.shape.get("batch")} for r in results]
        meta = {"device": cfg.device, "device_name": results[0].device_name if results else "",
                "m": cfg.m, "k": cfg.k, "n": cfg.n, "dtype": cfg.dtype}
        if article is not None:
            meta["article"] = {"speedup": article.speedup, "decode_speedup": article.decode_speedup,
                               "slower": bb.article_slower(article.speedup, article.decode_speedup),
                               "verdict": article.verdict, "shape": shape, "scaled_down": scaled,
                               "results": [r.to_dict() for r in article.results]}
        print(to_json(rows, **meta))
        return 0
    print(f"batching benchmark: M={cfg.m} K={cfg.k} N={cfg.n} {cfg.dtype} on "
          f"{results[0].device_name if results else cfg.device}")
    print(fmt.text_table([{"mode": r["mode"], "batch": r["batch"], "median": fmt.duration(r["median_s"]),
                           "TFLOP/s": r["tflops"], "GB/s": r["gbps"], "FLOP/B": fmt.number(r["intensity"], 3),
                           "rel. error": fmt.number(r["rel_error"], 3), "note": r["note"] or ""} for r in bb.rows(results)],
                         right=("median", "FLOP/B", "rel. error")))
    print(bb.lesson(results))
    if article is not None:  # the verdict names the shape it ran; on a CPU that is not the article's: say so
        print(f"the article's example, {_shape(bb.ARTICLE)}"
              + (f", scaled down for a CPU to {_shape(shape)} (the full one takes minutes there):" if scaled else ":"))
        print(article.verdict)
    return 0


def _shape(s: dict) -> str:
    return f"{s['batch']} × {s['m']}×{s['k']} @ {s['k']}×{s['n']}"
