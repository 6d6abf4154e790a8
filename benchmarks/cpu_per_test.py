"""Where the suite's CPU goes, test by test: a pytest plugin that charges each test the whole machine's CPU.

    PYTHONPATH=benchmarks python3 -m pytest -n 0 -p cpu_per_test [--cpu-per-test-json FILE] [tests...]

For each test, the machine's busy CPU seconds (``/proc/stat``: every process, so the Chromium, Streamlit
servers, benchmark workers and ranks a test drives are charged to it) from the start of its set-up to the
end of its tear-down, and its wall time. A module- or session-scoped fixture is charged to the test that
builds it or tears it down. Collection is charged apart. At the end the totals by folder, by file and the
costliest tests are printed, and every row is written to the JSON file if one is named.

The attribution holds only while the tests run one after another in this process: under pytest-xdist the
other worker's CPU would be charged too, so the plugin refuses ``-n`` with more than 0 workers. Anything else
busy on the machine is charged as well: run it on a quiet machine. Linux only.
"""

from __future__ import annotations

import collections
import json
import os
import time

import pytest

HZ = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def machine_busy_s() -> float:
    """CPU seconds the machine has spent busy since boot (all cores: user, nice, system, irq, softirq, steal)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v[:8]) - v[3] - v[4]) / HZ  # less idle and iowait; guest time is inside user already


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--cpu-per-test-json", metavar="FILE", default=None,
                     help="cpu_per_test: write every test's CPU and wall seconds to FILE (JSON)")


class CpuPerTest:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.rows: dict[str, tuple[float, float]] = {}
        self.collect = (machine_busy_s(), time.monotonic())

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        cpu0, t0 = self.collect
        self.collect = (machine_busy_s() - cpu0, time.monotonic() - t0)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem):
        cpu0, t0 = machine_busy_s(), time.monotonic()
        yield
        self.rows[item.nodeid] = (machine_busy_s() - cpu0, time.monotonic() - t0)

    def summary(self) -> dict:
        by_file: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0])
        by_dir: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0])
        for nodeid, (cpu, wall) in self.rows.items():
            path = nodeid.split("::", 1)[0]
            folder = os.path.dirname(path) or "."
            for table, key in ((by_file, path), (by_dir, folder)):
                table[key][0] += cpu
                table[key][1] += wall
                table[key][2] += 1
        return {"cores": os.cpu_count(), "collection": {"cpu_s": self.collect[0], "wall_s": self.collect[1]},
                "tests": {k: {"cpu_s": c, "wall_s": w} for k, (c, w) in self.rows.items()},
                "by_file": {k: {"cpu_s": c, "wall_s": w, "tests": n} for k, (c, w, n) in by_file.items()},
                "by_folder": {k: {"cpu_s": c, "wall_s": w, "tests": n} for k, (c, w, n) in by_dir.items()}}

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not self.rows:
            return
        s = self.summary()
        tr = terminalreporter
        cpu = sum(r["cpu_s"] for r in s["tests"].values())
        wall = sum(r["wall_s"] for r in s["tests"].values())
        cores = s["cores"] or 1
        tr.section("CPU per test (the whole machine's, cpu_per_test)")
        tr.write_line(f"{len(s['tests'])} tests: {cpu:.1f} CPU s in {wall:.1f} s one after another; collection "
                      f"{s['collection']['cpu_s']:.1f} CPU s. On {cores} cores the tests' CPU alone needs "
                      f"{cpu / cores:.1f} s however well they are spread.")
        for title, table, n in (("by folder", s["by_folder"], 20), ("by file", s["by_file"], 25)):
            tr.write_line(f"{title}:          CPU s   wall s  tests")
            for k, r in sorted(table.items(), key=lambda kv: -kv[1]["cpu_s"])[:n]:
                tr.write_line(f"  {r['cpu_s']:9.1f} {cpu and r['cpu_s'] / cpu:6.1%} {r['wall_s']:8.1f} {r['tests']:6d}  {k}")
        tr.write_line("costliest tests:  CPU s   wall s")
        for k, r in sorted(s["tests"].items(), key=lambda kv: -kv[1]["cpu_s"])[:25]:
            tr.write_line(f"  {r['cpu_s']:9.1f} {r['wall_s']:8.1f}  {k}")
        out = self.config.getoption("cpu_per_test_json")
        if out:
            with open(out, "w") as f:
                json.dump(s, f, indent=1)
            tr.write_line(f"written: {out}")


def pytest_configure(config: pytest.Config) -> None:
    if not os.path.exists("/proc/stat"):
        raise pytest.UsageError("cpu_per_test reads /proc/stat: Linux only")
    workers = getattr(config.option, "numprocesses", None)
    if workers not in (None, 0) or os.environ.get("PYTEST_XDIST_WORKER"):
        raise pytest.UsageError("cpu_per_test charges each test the whole machine's CPU: run the tests one after "
                                "another (-n 0), or the other workers' CPU is charged too")
    config.pluginmanager.register(CpuPerTest(config), "cpu_per_test_collector")
