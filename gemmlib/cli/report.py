"""`python -m gemmlib report --out DIR [--quick]`: run every benchmark and write a report.

Writes DIR/results.json, DIR/results.csv, DIR/report.md and DIR/charts/. On a GPU
machine this is the one command to run (a full run takes a few minutes on one H200).

Examples::

    python -m gemmlib report --out out/report --quick
    python -m gemmlib report --out out/report --sections devices,precision
"""

from __future__ import annotations

import argparse
import sys

from gemmlib.cli.common import number
from gemmlib.core.errors import InputError
from gemmlib.core.files import check_output_dir
from gemmlib.measure import report, safety


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True,
                        help="output folder: new (created), empty, or holding only an earlier report (replaced); "
                             "a folder with other files is refused before any work")
    parser.add_argument("--quick", action="store_true", help="fewer and smaller shapes")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda when present)")
    parser.add_argument("--sections", default=None,
                        help="comma-separated subset, run in the order given (under --time-budget the first "
                             "named are the ones sure to run): devices,precision,tiling,batching,profiler,collectives,tp")
    parser.add_argument("--time-budget", type=number(0), default=None,
                        help="seconds, a finite number above 0; sections not started by then are skipped "
                             "(default: no budget)")


def run(args: argparse.Namespace) -> int:

    if args.device is not None and args.device.strip().lower() not in {"cpu", "cuda", "mps"}:
        raise InputError(f"unknown device {args.device!r}; use cpu or cuda")
    sections = tuple(s.strip() for s in args.sections.split(",") if s.strip()) if args.sections is not None else None
    if sections == ():  # an empty list is a slip, not "every section" (the longest run there is)
        raise InputError(f"--sections names no section; choose from {','.join(n for n, _ in report.SECTIONS)}, or "
                         "leave it out to run them all")
    # before minutes of work: a folder that can take new files and holds nothing but an earlier report
    report.check_report_folder(check_output_dir(args.out, "--out"))
    # The report runs its sections in this process, in the machine's queue like any benchmark.
    with safety.single_flight("python -m gemmlib report (command line)",
                              on_wait=lambda msg: sys.stderr.write(msg + "\n")):
        doc = report.run_report(args.out, device=args.device.strip().lower() if args.device else None,
                                quick=args.quick, sections=sections,
                                progress=lambda s: sys.stderr.write(s + "\n"), time_budget_s=args.time_budget)
    failed = [s["name"] for s in doc["sections"] if "error" in s]
    print(f"report written to {args.out} ({doc['seconds']:.0f} s): report.md, results.json, results.csv, charts/")
    if failed:
        print(f"sections that failed: {', '.join(failed)} (see report.md)")
        return 1
    return 0
