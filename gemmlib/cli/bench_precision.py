"""`python -m gemmlib bench precision`: fp32, tf32, fp16, bf16, int8 and fp8 on the same shapes.

Examples::

    python -m gemmlib bench precision --device cpu --m 512 --n 512 --k 512
    python -m gemmlib bench precision --device cuda --size 8192 --dtypes bf16,int8,fp8 --json
    python -m gemmlib bench precision --shapes llm --preset llama-2-7b --seq 2048

Output (``--json``): ``{"device", "device_name", "verdict", "results": [{"dtype", "name",
"supported", "reason", "median_s", "p20_s", "p80_s", "tflops", "rel_error", ...}]}``.
Bad input exits with status 2 and one line, before anything is allocated.
"""

from __future__ import annotations

import argparse

from gemmlib.cli.running import run_job
from gemmlib.core import format as fmt
from gemmlib.core.errors import InputError
from gemmlib.core.files import check_output_file, write_atomic
from gemmlib.core.results import to_csv, to_json
from gemmlib.measure import harness, plan, safety
from gemmlib.measure import precision as bp


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda when present, else cpu)")
    parser.add_argument("--m", type=int, default=None, help="rows of A and D (default --size)")
    parser.add_argument("--n", type=int, default=None, help="columns of B and D (default --size)")
    parser.add_argument("--k", type=int, default=None, help="inner dimension (default --size)")
    parser.add_argument("--size", type=int, default=None,
                        help="M = N = K, a square (default 512 on a CPU, 4096 on a GPU)")
    parser.add_argument("--shapes", choices=("squares", "llm", "article", "default"), default=None,
                        help="a shape set instead of one shape: squares, llm (layer GEMMs of --preset), "
                             "article (1024×4096·4096×1024) or default (the report's set)")
    parser.add_argument("--preset", default=None, help="with --shapes llm: the estimator preset (default llama-2-7b)")
    parser.add_argument("--batch", type=int, default=None, help="with --shapes llm: sequences (default 1)")
    parser.add_argument("--seq", type=int, default=None, help="with --shapes llm: tokens per sequence (default 512)")
    parser.add_argument("--dtypes", default=None, help="comma-separated: fp32,tf32,fp16,bf16,int8,fp8 (default all)")
    parser.add_argument("--no-quant", action="store_true", help="int8/fp8: skip the rows with quantization included")
    parser.add_argument("--min-run-time", type=float, default=0.3, help="seconds of timing per row (default 0.3)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--csv", default=None, metavar="FILE", help="also write the rows as CSV to FILE")


def build_config(args: argparse.Namespace, device: str):
    """Arguments -> PrecisionConfig; checks sizes and dtypes without importing torch."""

    lim = safety.limits()
    for name in ("m", "n", "k", "size", "batch", "seq"):
        v = getattr(args, name)
        if v is not None:
            safety.check_dims(lim, **{f"--{name}": v})
    dtypes = bp.normalise_dtypes(args.dtypes) if args.dtypes is not None else bp.PRECISION_DTYPES  # "": refused
    given = [x for x in (args.m, args.n, args.k) if x is not None]
    if args.shapes and (given or args.size):
        raise InputError("give either --shapes or --m/--n/--k/--size, not both")
    llm_only = [f"--{name}" for name in ("preset", "batch", "seq") if getattr(args, name) is not None]
    if llm_only and args.shapes != "llm":  # they shape the LLM set: with any other shape they would do nothing
        raise InputError(f"{', '.join(llm_only)} only appl{'ies' if len(llm_only) == 1 else 'y'} to --shapes llm; "
                         "add --shapes llm, or leave " + ("it" if len(llm_only) == 1 else "them") + " out")
    if args.shapes == "squares":
        shapes = bp.square_shapes(bp.default_squares(device))
    elif args.shapes == "llm":
        shapes = bp.llm_shapes(args.preset or "llama-2-7b", args.batch or 1, args.seq or 512)
    elif args.shapes == "article":
        shapes = (bp.ARTICLE_SHAPE,)
    elif args.shapes == "default":
        shapes = bp.default_shapes(device)
    else:
        base = args.size or (4096 if device == "cuda" else 512)
        m, n, k = args.m or base, args.n or base, args.k or base
        shapes = ((m, n, k, f"{m}×{n}×{k}"),)
    plan.check_min_run_time(args.min_run_time, "--min-run-time")
    return bp.PrecisionConfig(device=device, shapes=tuple(shapes), dtypes=dtypes, with_quant=not args.no_quant,
                              min_run_time=float(args.min_run_time))


def run(args: argparse.Namespace) -> int:

    if args.device is not None and args.device.strip().lower() not in {"cpu", "cuda", "mps"}:
        raise InputError(f"unknown device {args.device!r}; use cpu or cuda")
    # Sizes and dtypes first (no torch), then the device.
    build_config(args, "cpu" if args.device is None else args.device.strip().lower())
    device = args.device.strip().lower() if args.device else (
        "cuda" if harness.torch_device_available("cuda")[0] else "cpu")
    cfg = build_config(args, device)
    csv_path = check_output_file(args.csv, "--csv") if args.csv else None  # before minutes of work
    results = run_job(bp.SPEC, cfg, quiet=args.json)
    verdict = bp.int8_verdict(results)
    if csv_path is not None:
        write_atomic(csv_path, to_csv(results), flag="--csv")
    if args.json:
        print(to_json(results, device=device, device_name=results[0].device_name if results else "",
                              verdict=verdict))
        return 0
    rate = "TFLOP/s (int8: TOP/s)" if any(r.dtype == "int8" for r in results) else "TFLOP/s"  # int8 counts integer ops
    rows = [{"shape": r["M×N×K"], "format": r["format"], "median": fmt.duration(r["median ms"] and r["median ms"] / 1e3),
             rate: r["TFLOP/s"], "% datasheet": fmt.number(r["% datasheet"], 3),
             "rel. error": fmt.number(r["rel. error"], 3),
             "note": "" if r["supported"] else f"not run: {r['note']}"} for r in bp.summary_rows(results)]
    print(fmt.text_table(rows, right=("median", "% datasheet", "rel. error")))
    print(verdict)
    for why in dict.fromkeys(str(r.extra["share_measured_why"]) for r in results if r.extra.get("share_measured_why")):
        print(f"note: {why}")  # fp8 on a CPU: a reference kernel's speed, not a figure of fp8 hardware
    return 0
