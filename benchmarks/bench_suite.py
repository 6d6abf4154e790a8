"""The test suite's wall time (issue 23: ``.ci/run`` within 6 minutes on 2 cores), with and without
pytest-xdist's two workers, beside the target.

Runs ``python -m pytest PATHS -q -p no:cacheprovider -n 0`` and the same with ``-n 2`` (the
``--dist loadfile`` of pyproject's addopts) in turn, A B A B ..., each in a fresh interpreter with a
private ``GEMM_CACHE_DIR``, and prints each run's wall time, its pass/fail line, and the ratio
``-n 2`` / ``-n 0`` pair by pair (the median of the pairs is the figure: on a shared machine the
absolute times drift, a pair made a moment apart mostly does not).

The target (≤ 360 s) is for the whole suite as ``.ci/run`` runs it on a clean 2-core machine: it
is judged only when PATHS is ``tests`` (the default is a small subset, so that the script itself
finishes in minutes; pass ``tests`` on a quiet machine for the real figure). For a subset the
script prints what its ``-n 2`` time would have to stay under for a suite of the same make-up, the
target scaled by the subset's share of the tests.

``--each`` times each PATH alone instead, in one process (``-n 0``, as a file is run on one xdist
worker), one line per path with the load average at its start and end: the per-file figures of the
README's Tests section (``python benchmarks/bench_suite.py --each tests/browser/test_browser_*.py``).
``--parallel-only`` skips the ``-n 0`` run of each pair: the whole suite's figure as ``.ci/run``
makes it, beside the target, in half the time (``python benchmarks/bench_suite.py tests --parallel-only``).

Run:  python benchmarks/bench_suite.py [PATHS ...] [--pairs N] [--workers N] [--each | --parallel-only]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITE_TARGET_S = 360.0  # issue 23: `.ci/run` (ruff + the whole suite) within 6 minutes on 2 cores
DEFAULT_PATHS = ["tests/core", "tests/explain", "tests/charts"]
_SUMMARY = re.compile(r"^=*\s*(\d+ (?:passed|failed|error|skipped).*?) in [\d.]+s", re.M)


def run_pytest(paths: list[str], workers: int) -> tuple[float, str]:
    """(wall seconds, pytest's summary line) of one run in a fresh interpreter."""
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as cache:
        env = {**os.environ, "GEMM_CACHE_DIR": cache}
        cmd = [sys.executable, "-m", "pytest", *paths, "-q", "-p", "no:cacheprovider", "-n", str(workers)]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
    found = _SUMMARY.findall(proc.stdout)
    return wall, (found[-1] if found else f"exit {proc.returncode}: {proc.stdout[-300:]}{proc.stderr[-300:]}")


def count_tests(paths: list[str]) -> int:
    out = subprocess.run([sys.executable, "-m", "pytest", *paths, "--collect-only", "-q", "-p", "no:cacheprovider",
                          "-n", "0"], cwd=ROOT, capture_output=True, text=True).stdout
    m = re.search(r"(\d+) tests? collected", out)
    return int(m.group(1)) if m else 0


def load() -> str:
    try:
        return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    except OSError:
        return "load average unknown"


def each(paths: list[str]) -> int:
    """Each path alone (-n 0), one line each, with the load average at its start and its end."""
    total = 0.0
    for path in paths:
        before = load().removeprefix("load average ")
        wall, summary = run_pytest([path], 0)
        total += wall
        print(f"  {path:50s} {wall:7.1f} s  ({summary}); load average {before} -> "
              f"{load().removeprefix('load average ')}", flush=True)
    print(f"{len(paths)} path(s) one after another: {total:.1f} s (-n 0); {load()}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", default=DEFAULT_PATHS, help="test paths (default: %(default)s)")
    ap.add_argument("--pairs", type=int, default=1, help="A/B pairs (default 1)")
    ap.add_argument("--workers", type=int, default=2, help="xdist workers for B (default 2)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--each", action="store_true", help="time each path alone (-n 0), one line per path")
    mode.add_argument("--parallel-only", action="store_true", help="only the -n WORKERS run of each pair")
    a = ap.parse_args(argv)
    print(f"suite subset {' '.join(a.paths)}: {os.cpu_count()} CPUs, {load()}", flush=True)
    if a.each:
        return each(a.paths)
    serial, parallel, ratios = [], [], []
    for i in range(a.pairs):
        t0, s0 = (None, None) if a.parallel_only else run_pytest(a.paths, 0)
        t1, s1 = run_pytest(a.paths, a.workers)
        parallel.append(t1)
        if t0 is None:
            print(f"  run {i + 1}: -n {a.workers} {t1:7.1f} s ({s1}); {load()}", flush=True)
            continue
        serial.append(t0)
        ratios.append(t1 / t0)
        print(f"  pair {i + 1}: -n 0 {t0:7.1f} s ({s0});  -n {a.workers} {t1:7.1f} s ({s1});  ratio {t1 / t0:.2f}",
              flush=True)
    med1 = statistics.median(parallel)
    if serial:
        med0, ratio = statistics.median(serial), statistics.median(ratios)
        print(f"wall time -n 0: {med0:.1f} s; -n {a.workers}: {med1:.1f} s; ratio -n {a.workers} / -n 0: {ratio:.2f} "
              f"(median of {a.pairs} pair(s)); {load()}")
    else:
        print(f"wall time -n {a.workers}: {med1:.1f} s (median of {a.pairs} run(s)); {load()}")
    if [p.rstrip("/") for p in a.paths] == ["tests"]:
        ok = med1 <= SUITE_TARGET_S
        print(f"whole suite with -n {a.workers}: {med1:.0f} s, target ≤ {SUITE_TARGET_S:.0f} s: {'PASS' if ok else 'FAIL'} "
              f"(judged as measured: on a loaded machine the figure is the machine's, not the suite's); {load()}")
        return 0
    sub, whole = count_tests(a.paths), count_tests(["tests"])
    if sub and whole:
        share = sub / whole
        print(f"subset: {sub} of {whole} tests ({share:.1%}); at the suite's target ({SUITE_TARGET_S:.0f} s for all) "
              f"its share would be {SUITE_TARGET_S * share:.0f} s: -n {a.workers} took {med1:.0f} s "
              "(not judged: the suite's tests are far from equally long; run it on `tests` for the figure)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
