"""`python -m gemmlib report`: sections run in order, files written, failures contained."""

import json
import sys
import types
from pathlib import Path

import pytest

from gemmlib.cli import main
from gemmlib.core import ceilings
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
    assert main(["report", "--out", str(tmp_path / "y"), "--time-budget", "-1"]) == 2


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
