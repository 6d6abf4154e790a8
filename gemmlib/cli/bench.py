"""`python -m gemmlib bench precision|tiling|batching|collective|tp ...`: run one live benchmark.

Each benchmark is a module ``gemmlib.cli.bench_<name>`` with ``add_arguments`` and
``run``, imported only when that benchmark is chosen.
"""

from __future__ import annotations

import argparse

from gemmlib.cli import add_commands
from gemmlib.core.errors import InputError

BENCHES: dict[str, tuple[str, str]] = {
    "precision": ("gemmlib.cli.bench_precision", "fp32, tf32, fp16, bf16, int8, fp8 on the same shapes"),
    "tiling": ("gemmlib.cli.bench_tiling", "Python tiling vs a Triton kernel vs the library"),
    "batching": ("gemmlib.cli.bench_batching", "one request at a time vs batched, prefill and decode"),
    "collective": ("gemmlib.cli.bench_collective", "all-reduce, all-gather, ... over N ranks: time, algbw, busbw"),
    "tp": ("gemmlib.cli.bench_tp", "one layer split tensor-parallel over N ranks vs one rank vs the estimate"),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_commands(parser, BENCHES, dest="bench", metavar="BENCH", run_dest="_bench_run")  # each loaded when chosen
    parser.set_defaults(_bench_parser=parser)


def run(args: argparse.Namespace) -> int:
    fn = getattr(args, "_bench_run", None)
    if fn is None:
        raise InputError(f"name a benchmark: {', '.join(BENCHES)} (e.g. python -m gemmlib bench precision --help)")
    return int(fn(args) or 0)
