"""`python -m gemmlib profile`: where the time of a transformer block goes.

Examples::

    python -m gemmlib profile --device cpu --layers 2 --hidden 256 --seq-len 128 --heads 8
    python -m gemmlib profile --device cuda --preset llama-3-8b --scale 4 --seq-len 2048 --dtype bf16
    python -m gemmlib profile --hidden 512 --heads 8 --kv-heads 2 --json --trace block.json

Prints the GEMM share of the time against the article's 80 % target and the top
ops (time, share, FLOPs, TFLOP/s); ``--json`` prints everything as JSON
(``gemm_share`` and ``ops[]`` with name, time_s, is_gemm, flops). torch is
imported only when the command runs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from dataclasses import replace

from gemmlib.cli.running import run_job
from gemmlib.core import format as fmt
from gemmlib.core.errors import InputError
from gemmlib.core.files import check_output_file, move_into_place, private_dir, temp_beside
from gemmlib.measure import harness, plan
from gemmlib.measure import profiler as pf
from gemmlib.measure.profiler import GEMM_TARGET, BlockConfig, preset_config


def positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {v}")
    return v


def nonneg_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {v}")
    return v


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", default=None, help="cpu or cuda (default: cuda when present, else cpu)")
    p.add_argument("--preset", default=None,
                   help="start from a model's sizes, scaled down by --scale (e.g. llama-3-8b, mistral-7b)")
    p.add_argument("--scale", type=positive_int, default=None,
                   help="with --preset: divide its hidden/MLP size by this (default 16)")
    p.add_argument("--layers", type=positive_int, default=None,
                   help=f"blocks to run (default 1, at most {pf.MAX_PROFILE_LAYERS})")
    p.add_argument("--hidden", type=positive_int, default=None, help="model width (default 256)")
    p.add_argument("--seq-len", type=positive_int, default=None, help="tokens per sequence (default 128)")
    p.add_argument("--heads", type=positive_int, default=None, help="query heads (default 8)")
    p.add_argument("--kv-heads", type=positive_int, default=None, help="K/V heads for GQA (default = heads)")
    p.add_argument("--intermediate", type=positive_int, default=None,
                   help="MLP width (default 8/3·hidden rounded up to 64)")
    p.add_argument("--batch", type=positive_int, default=1, help="sequences per pass (default 1)")
    p.add_argument("--attention", choices=("eager", "sdpa"), default="eager",
                   help="eager: two visible matmuls; sdpa: fused scaled_dot_product_attention")
    p.add_argument("--dtype", default=None, help="fp32, bf16 or fp16 (default fp32 on cpu, bf16 on cuda)")
    p.add_argument("--steps", type=positive_int, default=3, help="profiled forward passes (default 3)")
    p.add_argument("--top", type=positive_int, default=15, help="rows in the top-ops table (default 15)")
    p.add_argument("--by-name", action="store_true", help="merge rows of the same op over all shapes")
    p.add_argument("--trace", default=None, metavar="PATH",
                   help="write the Chrome trace JSON here (open in https://ui.perfetto.dev)")
    p.add_argument("--hardware", default=None, help="catalogue row for the prediction (default: matched)")
    p.add_argument("--no-monitor", action="store_true", help="do not sample the GPU with NVML")
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def resolve_device(device: str | None) -> str:
    if device:
        return str(device).strip().lower()

    return "cuda" if harness.torch_device_available("cuda")[0] else "cpu"


def config_from_args(args: argparse.Namespace):  # -> BlockConfig

    device = resolve_device(args.device)
    dtype = args.dtype or ("bf16" if device == "cuda" else "fp32")
    if args.scale is not None and not args.preset:  # it divides a preset's sizes: alone it would do nothing
        raise InputError("--scale divides a preset's sizes; add --preset (e.g. llama-3-8b), or leave --scale out "
                         "and give --hidden, --heads, --intermediate")
    if args.preset:
        cfg = preset_config(args.preset, 16 if args.scale is None else args.scale, seq_len=args.seq_len or 128, batch=args.batch,
                            layers=args.layers or 1, attention=args.attention, dtype=dtype)
        over = {k: v for k, v in (("hidden", args.hidden), ("heads", args.heads), ("kv_heads", args.kv_heads),
                                  ("intermediate", args.intermediate)) if v is not None}
        return cfg.with_(**over) if over else cfg
    return BlockConfig.llama(hidden=args.hidden or 256, heads=args.heads or 8, kv_heads=args.kv_heads or 0,
                             intermediate=args.intermediate or 0, seq_len=args.seq_len or 128, batch=args.batch,
                             layers=args.layers or 1, attention=args.attention, dtype=dtype)


def run(args: argparse.Namespace) -> int:

    args.device = resolve_device(args.device)
    cfg = config_from_args(args)
    harness.require_device(args.device)
    job = pf.ProfileConfig(cfg, args.device, steps=args.steps, monitor=not args.no_monitor, hardware=args.hardware)
    private_dir()  # a cache folder open to others: the error, once, before the plan reads its measured rates
    plan.admit(pf.SPEC, job)  # bad sizes are refused before the output path is even looked at
    target = tmp = None
    if args.trace:  # checked before the run; written beside the target, then renamed over it
        target = check_output_file(args.trace, "--trace")
        tmp = temp_beside(target, "--trace")
    try:
        res = run_job(pf.SPEC, replace(job, trace_path=None if tmp is None else str(tmp)), quiet=args.json)
        res.trace_path = None
        if tmp is not None and target is not None:
            if not os.path.getsize(tmp):
                raise InputError("the profiler wrote no trace")
            move_into_place(tmp, target, "--trace")
            res.trace_path = str(target)
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    ops = res.grouped() if args.by_name else res.top_ops(len(res.ops))
    if args.json:
        d = res.to_dict()
        d["ops"] = [o.to_dict() for o in ops]
        json.dump(d, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
        return 0
    c = res.config
    out = sys.stdout.write
    out(f"{c.layers} Llama-style block{'' if c.layers == 1 else 's'} on {res.device_name} ({res.device}, {c.dtype}): hidden {c.hidden}, "
        f"{c.heads} heads / {c.kv_heads} K/V, MLP {c.intermediate}, {c.batch}×{c.seq_len} tokens, "
        f"{c.attention} attention\n")
    verdict = "meets" if res.meets_target else "below"
    out(f"GEMM share of time: {res.gemm_share:.1%} ({verdict} the article's {GEMM_TARGET:.0%} target); "
        f"{fmt.duration(res.total_time_s)} per pass ({res.time_basis}), GEMMs at {fmt.si(res.gemm_tflops and res.gemm_tflops * 1e12, 'FLOP/s')}\n")
    out(f"GEMM FLOPs per pass: profiler {fmt.count(round(res.gemm_flops))}; gemmlib count "
        f"{fmt.count(res.predicted_gemm_flops)}\n")
    if res.prediction is not None:
        p = res.prediction
        out(f"Predicted on {p.hardware} at {p.efficiency:.0%} efficiency: GEMM share {p.time_share:.1%} of time, "
            f"{p.flop_share:.1%} of FLOPs\n")
    out(f"\n{'op':<46} {'shapes':<28} {'calls':>5} {'time':>10} {'share':>6} {'GEMM':>4} "
        f"{'FLOPs':>10} {'TFLOP/s':>8}\n")
    for o in ops[: args.top]:
        tf = fmt.number(o.tflops, 3)
        out(f"{o.name[:46]:<46} {o.shapes[:28]:<28} {o.calls:>5.0f} {fmt.duration(o.time_s):>10} {o.share:>6.1%} "
            f"{'yes' if o.is_gemm else 'no':>4} {fmt.si(o.flops) if o.flops else '':>10} {tf:>8}\n")
    if res.monitor is not None:
        out(f"\nGPU monitor: {res.monitor.reason}\n")
    if res.trace_path:
        out(f"Chrome trace written to {res.trace_path} (open it in https://ui.perfetto.dev)\n")
    for n in res.notes:
        out(f"note: {n}\n")
    return 0
