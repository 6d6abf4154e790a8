"""`python -m gemmlib bench collective --nproc N`: all-reduce, all-gather, reduce-scatter, all-to-all
and broadcast over doubling message sizes, on N ranks this command starts itself (NCCL between GPUs,
gloo between CPU processes), reported as nccl-tests does: time, algbw, busbw, and whether the result
was right.

Examples::

    python -m gemmlib bench collective --nproc 2 --max-bytes 1M --json
    python -m gemmlib bench collective --nproc 8 --ops all_reduce,all_gather --max-bytes 1G
    torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint HOST:29500 \\
        -m gemmlib bench collective --ops all_reduce

Nothing heavy is imported until ``run``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable
from typing import TypeVar

from gemmlib.cli.common import TIMEOUT_MAX_S, number, whole
from gemmlib.core import format as fmt
from gemmlib.core.results import to_json
from gemmlib.core.units import parse_bytes
from gemmlib.measure import collectives as cl
from gemmlib.measure import launch, safety

T = TypeVar("T")


def add_launch_arguments(parser: argparse.ArgumentParser) -> None:
    """--nproc, --backend, --timeout: shared by the multi-rank benchmarks."""
    parser.add_argument("--nproc", type=whole(1), default=None,
                        help="ranks to start on this machine (default: every GPU when there are ≥ 2, else 2 CPU "
                             "processes); leave it out under torchrun")
    parser.add_argument("--backend", default="auto", choices=launch.BACKENDS,
                        help="nccl (one GPU per rank), gloo (CPU processes), auto (nccl with ≥ 2 GPUs)")
    parser.add_argument("--timeout", type=number(0, TIMEOUT_MAX_S), default=None,
                        help="the process group's timeout in seconds, above 0 and at most a day; every rank is "
                             "stopped 5 s after it, counted from when they have all started (default: the server's "
                             "time limit + 60)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_launch_arguments(parser)
    parser.add_argument("--ops", default=",".join(cl.MEASURED), help=f"comma-separated: {','.join(cl.MEASURED)}")
    parser.add_argument("--min-bytes", default=None, help="smallest message (default 8; K/M/G suffixes, binary)")
    parser.add_argument("--max-bytes", default=None,
                        help="largest message (default 4M between CPU processes, 1G between GPUs, within the caps)")
    parser.add_argument("--factor", type=whole(2), default=2, help="size step (default 2: doubling)")
    parser.add_argument("--dtype", default="fp32", help="fp32 (default), bf16 or fp16")
    parser.add_argument("--iters", type=whole(1, cl.MAX_ITERS), default=None,
                        help=f"timed samples per size, at most {cl.MAX_ITERS:,} (default 10 CPU, 20 GPU)")
    parser.add_argument("--warmup", type=whole(0, cl.MAX_ITERS), default=2,
                        help=f"untimed calls per size, at most {cl.MAX_ITERS:,} (default 2; 0: none)")
    parser.add_argument("--no-save", action="store_true",
                        help="do not keep the figures as a measured interconnect for the estimate")
    parser.add_argument("--json", action="store_true", help="print one JSON object: {results: [...], ...}")


def run_ranked(owner: str, work: Callable[[launch.Report], T], plan: launch.Plan | None = None) -> T | None:
    """``work(progress)`` under the single-flight lock, progress on stderr; a rank that failed or hung:
    its one line on stderr and None (the caller exits 1). ``plan``: said on stderr before the ranks start
    (seconds with no other word: each rank's start); pass it only where ``work`` has nothing left to refuse
    before it launches them (``bench tp`` checks its layer first, ``tp.check``)."""
    def progress(frac: float, text: str) -> None:
        sys.stderr.write(f"[{frac:4.0%}] {text}\n")

    # The machine's FIFO queue, shared with the app's servers. Under torchrun every rank runs this
    # command: one rank per machine (LOCAL_RANK 0) holds the queue for them all, or they would wait
    # for each other forever.
    local = os.environ.get("LOCAL_RANK", "0") if launch.under_torchrun() else "0"
    turn = safety.single_flight(owner) if local == "0" else contextlib.nullcontext()
    try:
        with turn:
            if plan is not None and not plan.torchrun:  # once the machine's queue lets us in
                sys.stderr.write(f"starting {plan.nproc} {plan.backend} rank{'' if plan.nproc == 1 else 's'} "
                                 f"({'one GPU each' if plan.kind == 'cuda' else 'CPU processes'}; a few seconds)\n")
            return work(progress)
    except launch.RankError as e:
        sys.stderr.write(f"error: {e}\n")
        return None


def config_from_args(args: argparse.Namespace, lim: safety.Limits) -> tuple[cl.CollectiveConfig, launch.Plan]:
    p = launch.plan(args.nproc, args.backend, lim)
    ops = tuple(s.strip() for s in str(args.ops).split(",") if s.strip())
    lo = parse_bytes(args.min_bytes, "--min-bytes") if args.min_bytes is not None else cl.DEFAULT_MIN
    if args.max_bytes is not None:
        hi = parse_bytes(args.max_bytes, "--max-bytes")
        sizes = cl.size_range(lo, hi, args.factor)
    else:
        default = cl.default_sizes(p.kind, p.nproc, lim)
        sizes = cl.size_range(lo, max(lo, default[-1]), args.factor)
    cl.check_sizes(sizes, p.kind, p.nproc, lim)
    iters = args.iters if args.iters is not None else (20 if p.kind == "cuda" else 10)
    cfg = cl.CollectiveConfig(ops=ops, sizes=sizes, dtype=args.dtype, iters=iters, warmup=args.warmup,
                              time_budget_s=lim.time_limit_s)
    return cfg, p


def run(args: argparse.Namespace) -> int:
    lim = safety.limits()
    cfg, p = config_from_args(args, lim)
    res = run_ranked("CLI: bench collective", lambda progress: cl.run_collectives(
        cfg, nproc=p.nproc, backend=p.backend, timeout_s=args.timeout, lim=lim, progress=progress,
        save=not args.no_save), p)
    if res is None:
        return 1
    if not res.rows:  # a torchrun rank other than 0: rank 0 prints
        return 0
    if args.json:
        # each row's median is `time_s` (nccl-tests' name); `median_s` too, the name every other benchmark's rows use
        rows = [{**r, "median_s": r["time_s"]} if "time_s" in r else r for r in cl.rows_for_json(res)]
        print(to_json(rows, backend=res.backend, device=res.kind, device_name=res.device_name,
                      nproc=res.nproc, dtype=res.dtype, interconnect=res.is_interconnect, note=res.note,
                      saved=None if res.saved is None else {"name": res.saved.name, "busbw": res.saved.busbw,
                                                            "latency_s": res.saved.latency_s},
                      not_saved=res.extra.get("not_saved")))
        return 0 if all(r.get("correct") is not False for r in res.rows) else 1
    print(f"collectives: {res.nproc} ranks, {res.backend}, {res.dtype}, on {res.device_name}")
    if res.note:
        print(f"NOTE: {res.note}.")
    print(fmt.text_table([{"op": r["op"], "bytes": fmt.nbytes(r["bytes"]), "count": r["count"],
                           "time": fmt.duration(r.get("time_s")), "p20": fmt.duration(r.get("p20_s")),
                           "p80": fmt.duration(r.get("p80_s")), "algbw GB/s": r.get("algbw_gbps"),
                           "busbw GB/s": r.get("busbw_gbps"),
                           "ok": f"skipped: {r['skipped']}" if r.get("skipped") else "yes" if r["correct"] else "WRONG"}
                          for r in res.rows], right=("bytes", "time", "p20", "p80")))
    if res.saved is not None:
        lk = res.saved.link()
        print(f"saved as '{lk.name}': busbw {lk.busbw / 1e9:.4g} GB/s, latency {lk.latency_s * 1e6:.4g} µs "
              f"(python -m gemmlib estimate --interconnect '{lk.name}' ...)")
    elif res.extra.get("not_saved"):
        print(res.extra["not_saved"])
    wrong = [r for r in res.rows if r.get("correct") is False]
    if wrong:
        print(f"{len(wrong)} row{'' if len(wrong) == 1 else 's'} gave a WRONG result")
        return 1
    return 0
