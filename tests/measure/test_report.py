"""`python -m gemmlib report`: sections run in order, files written, failures contained."""

import json
import sys
import types
from pathlib import Path

import pytest

from gemmlib.cli import main
from gemmlib.core import ceilings
from gemmlib.core.errors import InputError
from gemmlib.core.results import clear_recorded
from gemmlib.measure import devices, report
from gemmlib.measure import precision as bench_precision


@pytest.fixture(autouse=True)
def _small(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path / "cache"))
    ceilings.clear_ceilings()
    monkeypatch.setattr(devices, "ceiling_plan", lambda device, quick=False: (64, 1024**2))
    monkeypatch.setattr(bench_precision, "default_shapes", lambda device, quick=False: ((48, 32, 16, "tiny"),))
    yield
    ceilings.clear_ceilings()


def test_devices_and_precision_sections_write_every_file(tmp_path):
    out = tmp_path / "rep"
    lines = []
    doc = report.run_report(out, device="cpu", quick=True, sections=("devices", "precision"), progress=lines.append)
    for name in ("results.json", "results.csv", "report.md"):
        assert (out / name).is_file()
    saved = json.loads((out / "results.json").read_text())
    assert saved["device"] == "cpu" and saved["quick"] is True
    assert [s["name"] for s in saved["sections"]] == ["devices", "precision"]
    dev, prec = saved["sections"]
    assert dev["ceilings"]["peaks"]["fp32"] > 0
    assert {r["name"] for r in prec["results"]} >= {"fp32", "tf32", "int8"}
    # the precision section ran after the ceilings, so it knows the measured peak
    fp32 = next(r for r in prec["results"] if r["name"] == "fp32")
    assert fp32["extra"]["peak_measured_tflops"] == pytest.approx(dev["ceilings"]["peaks"]["fp32"] / 1e12)
    md = (out / "report.md").read_text()
    assert md.startswith("# GEMM report") and "**Verdict:** INT8" in md and "## Devices and measured ceilings" in md
    for rel in list(dev["charts"].values()) + list(prec["charts"].values()):
        assert (out / rel).is_file() and rel in md
    csv_rows = (out / "results.csv").read_text().strip().splitlines()
    assert len(csv_rows) == 1 + len(dev["results"]) + len(prec["results"])
    assert any("precision: done" in s for s in lines)
    assert doc["sections"][1]["verdict"].startswith("INT8")


def test_a_failing_section_is_reported_and_the_rest_runs(tmp_path, monkeypatch):
    broken = types.ModuleType("gemmlib_test_broken")

    def boom(device, quick, out_dir, progress):
        raise RuntimeError("kaboom")

    broken.report_section = boom
    monkeypatch.setitem(sys.modules, "gemmlib_test_broken", broken)
    monkeypatch.setattr(report, "SECTIONS", (("broken", "gemmlib_test_broken"), ("missing", "gemmlib_no_such_module"),
                                             ("precision", "gemmlib.measure.precision")))
    doc = report.run_report(tmp_path / "r", device="cpu", quick=True)
    by = {s["name"]: s for s in doc["sections"]}
    assert by["broken"]["error"] == "RuntimeError: kaboom"
    assert by["missing"]["skipped"] == "not written yet"
    assert by["precision"]["results"]
    assert "**This section failed:** `RuntimeError: kaboom`" in (tmp_path / "r" / "report.md").read_text()


def test_time_budget_skips_sections_not_started(tmp_path):
    doc = report.run_report(tmp_path / "r", device="cpu", quick=True, sections=("precision",), time_budget_s=1e-9)
    assert "time budget" in doc["sections"][0]["skipped"]


def test_bad_arguments(tmp_path, capsys):
    assert main(["report", "--out", str(tmp_path / "x"), "--sections", "nope"]) == 2
    assert "unknown section" in capsys.readouterr().err
    f = tmp_path / "file"
    f.write_text("x")
    assert main(["report", "--out", str(f)]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert main(["report", "--out", str(tmp_path / "y"), "--device", "tpu"]) == 2
    with pytest.raises(SystemExit) as e:  # refused while parsing (a checked number), argparse's exit
        main(["report", "--out", str(tmp_path / "y"), "--time-budget", "-1"])
    assert e.value.code == 2


def test_report_cli_exit_code_and_summary(tmp_path, capsys):
    assert main(["report", "--out", str(tmp_path / "c"), "--quick", "--device", "cpu", "--sections", "precision"]) == 0
    assert "report written to" in capsys.readouterr().out
    clear_recorded()


_KILLED_REPORT = r"""
import sys, time, types  # noqa: E401
from gemmlib.core.results import BenchResult
from gemmlib.measure import report

def quick(device, quick, out_dir, progress):
    r = BenchResult("test", "first row", device, "cpu", "fp32", {"m": 1}, 2.0, 8.0, median_s=1e-3)
    return {"title": "A quick section", "results": [r], "markdown": "the quick section's text"}

def hangs(device, quick, out_dir, progress):
    time.sleep(120)  # a section that outlives the caller's time limit

sys.modules["gemmlib_test_quick"] = types.SimpleNamespace(report_section=quick)
sys.modules["gemmlib_test_hangs"] = types.SimpleNamespace(report_section=hangs)
report.SECTIONS = (("quick", "gemmlib_test_quick"), ("hangs", "gemmlib_test_hangs"))
report.run_report(sys.argv[1], device="cpu", progress=lambda s: print(s, flush=True))
"""


def test_a_report_killed_in_a_late_section_keeps_the_sections_before_it(tmp_path):
    # The GPU script stops the report at its time limit: what finished must be on disk already.
    import os
    import signal
    import subprocess
    import time

    out = tmp_path / "killed"
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_REPORT, str(out)], cwd=root, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env={**os.environ, "PYTHONPATH": str(root)})
    try:
        deadline = time.monotonic() + 60
        for line in proc.stdout:  # wait until the hanging section has started
            if "hangs: running" in line or time.monotonic() > deadline:
                break
        time.sleep(0.5)
        assert proc.poll() is None, "the report should still be inside the hanging section"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    saved = json.loads((out / "results.json").read_text())
    first, second = saved["sections"]
    assert first["name"] == "quick" and first["results"][0]["name"] == "first row" and "running" not in first
    assert second["name"] == "hangs" and "stopped while this section ran" in second["running"]
    md = (out / "report.md").read_text()
    assert "the quick section's text" in md and "## A quick section" in md
    assert "first row" in (out / "results.csv").read_text()


# ----------------------------------------------------------------------------- one deadline for the whole report
class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_a_section_stops_at_the_reports_deadline_on_a_fake_clock(tmp_path, monkeypatch):
    # Three shapes of six formats; every precision step costs 4 s on the fake clock, the budget is 10 s:
    # the section measures until the report's deadline, the rest of its rows say why, the next is skipped.
    monkeypatch.setattr(bench_precision, "default_shapes",
                        lambda device, quick=False: ((16, 16, 16, "a"), (24, 16, 8, "b"), (8, 8, 8, "c")))
    clock = FakeClock()

    def progress(line):
        if line.startswith("precision: ["):
            clock.t += 4.0

    doc = report.run_report(tmp_path / "r", device="cpu", quick=True, sections=("precision", "tiling"),
                            time_budget_s=10.0, clock=clock, progress=progress)
    prec, tiling = doc["sections"]
    reason = "skipped: the report's time budget of 10 s was spent (--time-budget)"
    measured = [r for r in prec["results"] if r["median_s"]]
    stopped = [r for r in prec["results"] if r["reason"] == reason]
    assert measured and stopped and len(measured) + len(stopped) <= len(prec["results"])
    assert clock.t >= 10 and "time budget" in tiling["skipped"]
    # nothing was measured after the deadline: every stopped row comes after every measured one
    rows = prec["results"]
    assert max(rows.index(r) for r in measured) < min(rows.index(r) for r in stopped)


def test_every_section_gets_the_same_deadline_object(tmp_path, monkeypatch):
    seen = []

    def make(name):
        def section(device, quick, out_dir, progress, deadline=None):
            seen.append((name, deadline))
            return {"title": name, "results": [], "markdown": name}
        return types.SimpleNamespace(report_section=section)

    def old_style(device, quick, out_dir, progress):  # a section without the keyword still runs
        seen.append(("old", None))
        return {"title": "old", "results": [], "markdown": "old"}

    for n in ("one", "two"):
        monkeypatch.setitem(sys.modules, f"gemmlib_test_{n}", make(n))
    monkeypatch.setitem(sys.modules, "gemmlib_test_old", types.SimpleNamespace(report_section=old_style))
    monkeypatch.setattr(report, "SECTIONS", (("one", "gemmlib_test_one"), ("old", "gemmlib_test_old"),
                                             ("two", "gemmlib_test_two")))
    report.run_report(tmp_path / "r", device="cpu", time_budget_s=100.0)
    (_, d1), old, (_, d2) = seen
    assert isinstance(d1, report.Budget) and d1 is d2 and old == ("old", None)
    seen.clear()
    report.run_report(tmp_path / "r2", device="cpu")  # no budget: each run keeps the server's own limit
    assert seen[0][1] is None
    # named sections run in the order named (the GPU script puts its targets' sections first), each once
    seen.clear()
    doc = report.run_report(tmp_path / "r3", device="cpu", sections=("two", "one", "two"))
    assert [n for n, _ in seen] == ["two", "one"] and [x["name"] for x in doc["sections"]] == ["two", "one"]


def _expired() -> report.Budget:
    clock = FakeClock()
    b = report.Budget(1.0, clock)
    clock.t = 2.0
    return b


def test_each_section_hands_the_deadline_to_its_runs(tmp_path):
    from gemmlib.measure import batching, profiler, tiling

    d = _expired()
    why = d.reason()
    out = tmp_path / "sec"
    out.mkdir()
    for mod in (bench_precision, tiling, batching):
        sec = mod.report_section("cpu", True, out, None, deadline=d)
        rows = [r for r in sec["results"] if r.bench != "ceiling"]
        assert rows and all(not r.supported and r.reason == why for r in rows), mod.__name__
    sec = profiler.report_section("cpu", True, out, None, deadline=d)
    assert sec["results"] and all(not r.supported and why in r.reason for r in sec["results"])
    sec = report.report_section("cpu", True, out, None, deadline=d)  # the devices section's ceilings
    assert sec["ceilings"]["peaks"] == {} and sec["ceilings"]["bandwidth"] is None
    assert ceilings.find("cpu", sec["ceilings"]["device_name"]) is None  # a cut run replaces nothing


def test_each_gpu_section_records_the_machine_state_and_flags_dropped_clocks(tmp_path, monkeypatch):
    # A "GPU" report on stand-ins: fake NVML readings before and after each section, fake sections.
    from gemmlib.measure import harness, monitor

    monkeypatch.setattr(harness, "torch_device_available", lambda d: (True, ""))
    monkeypatch.setattr(harness, "device_name", lambda d: "NVIDIA H200")
    monkeypatch.setattr(monitor, "nvml_index_for_torch_device", lambda *a: 0)
    monkeypatch.setattr(monitor, "software_versions", lambda: {"driver": "570.86.15", "cublas": "12.8.4",
                                                               "persistence_mode": True, "nccl": None})
    clocks = iter([1980.0, 1975.0, 1980.0, 1500.0])  # steady section, then one whose clocks fell

    def reading(index):
        return {"available": True, "sm_clock_mhz": next(clocks), "clock_reasons": []}

    monkeypatch.setattr(monitor, "machine_state", reading)

    def section(device, quick, out_dir, progress):
        return {"title": "A GPU section", "results": [], "markdown": "its table"}

    for n in ("steady", "hot"):
        monkeypatch.setitem(sys.modules, f"gemmlib_test_{n}", types.SimpleNamespace(report_section=section))
    monkeypatch.setattr(report, "SECTIONS", (("steady", "gemmlib_test_steady"), ("hot", "gemmlib_test_hot")))
    doc = report.run_report(tmp_path / "g", device="cuda")
    steady, hot = doc["sections"]
    assert steady["machine"]["flags"] == [] and steady["machine"]["before"]["sm_clock_mhz"] == 1980.0
    assert hot["machine"]["flags"] == ["SM clock dropped from 1980 to 1500 MHz (-24%)"]
    assert doc["versions"]["cublas"] == "12.8.4" and "nccl" not in doc["versions"]
    md = (tmp_path / "g" / "report.md").read_text()
    assert md.count("**Machine state:**") == 1 and "SM clock dropped from 1980 to 1500 MHz" in md
    assert "driver 570.86.15" in md and "cublas 12.8.4" in md and "persistence mode on" in md


def test_a_report_is_not_written_among_other_files(tmp_path, capsys):
    """`report --out DIR` rewrites a report's own files (an earlier report in DIR is replaced) and refuses a folder
    holding anything else, before any work: it once mixed its files among a folder's others and replaced a
    results.json that was not a report's, without a word. Checked on the command line and in run_report."""

    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "README.md").write_text("keep", encoding="utf-8")
    (folder / "results.json").write_text("keep", encoding="utf-8")
    assert main(["report", "--quick", "--sections", "devices", "--device", "cpu", "--out", str(folder)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: --out {folder} holds files that are not a report's (README.md); give an empty or new folder, or one "
        "that holds only an earlier report (its report.md, results.json, results.csv and charts/ are replaced)")
    assert (folder / "results.json").read_text(encoding="utf-8") == "keep"  # nothing touched
    with pytest.raises(InputError, match="README.md"):
        report.run_report(folder, device="cpu", sections=("devices",))
    earlier = tmp_path / "earlier"  # a folder holding only a report's files (and hidden ones) is taken
    (earlier / "charts").mkdir(parents=True)
    for name in ("report.md", "results.csv", ".keep"):
        (earlier / name).write_text("old", encoding="utf-8")
    report.check_report_folder(earlier)
    report.check_report_folder(tmp_path / "new")  # not there yet
