"""The report on a machine that has torch but no charting packages (like the lent GPU image)."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SHIM = """
import runpy, sys
for m in ("altair", "pandas", "vl_convert", "streamlit"):
    sys.modules[m] = None  # importing any of them now raises ImportError
sys.argv = ["gemmlib", *sys.argv[1:]]
runpy.run_module("gemmlib", run_name="__main__")
"""


def test_report_keeps_every_measurement_without_altair_or_pandas(tmp_path):
    out = tmp_path / "rep"
    proc = subprocess.run(
        [sys.executable, "-c", SHIM, "report", "--out", str(out), "--quick", "--sections", "devices,precision"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "GEMM_CACHE_DIR": str(tmp_path / "cache"),
             "HOME": str(tmp_path)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads((out / "results.json").read_text())
    sections = {s["name"]: s for s in doc["sections"]}
    assert "error" not in sections["precision"], sections["precision"].get("error")
    assert "error" not in sections["devices"], sections["devices"].get("error")
    timed = [r for r in sections["precision"]["results"] if r.get("median_s")]
    assert timed, "the precision section measured nothing"
    assert "charts skipped: altair is not installed" in (out / "report.md").read_text()
