"""The report's multi-GPU sections: a clear line on a machine with fewer than two GPUs, and (with
the GPU count and NCCL stood in for by gloo between CPU processes) the tables they write."""

import json
import re
from dataclasses import replace

import pytest

from gemmlib.measure import collectives as cl
from gemmlib.measure import launch, report
from gemmlib.measure import tp as tpm

pytestmark = pytest.mark.usefixtures("bench_env")


@pytest.mark.skipif(launch.cuda_count() >= 2, reason="this machine has GPUs to run the sections")
def test_skipped_with_a_line_without_two_gpus(tmp_path):
    out = tmp_path / "rep"
    lines = []
    doc = report.run_report(out, device="cpu", sections=("collectives", "tp"), progress=lines.append)
    secs = {s["name"]: s for s in doc["sections"]}
    assert set(secs) == {"collectives", "tp"}
    for s in secs.values():
        assert "CUDA GPU" in s["skipped"] and re.search("needs? at least 2", s["skipped"])
        assert s["results"] == []
    md = (out / "report.md").read_text()
    assert md.count("*Skipped: ") == 2 and "gloo version between CPU processes" in md
    assert any(s.startswith("collectives: skipped") for s in lines)
    assert json.loads((out / "results.json").read_text())["sections"][0]["skipped"] == secs["collectives"]["skipped"]


def test_sections_with_two_stand_in_gpus(tmp_path, monkeypatch):
    """Two 'GPUs' whose NCCL is gloo: the sections' own code paths, tables and files."""
    monkeypatch.setattr(launch, "cuda_count", lambda: 2)
    run_c, run_t = cl.run_collectives, tpm.run_tp
    monkeypatch.setattr(cl, "run_collectives", lambda cfg, **kw: run_c(
        replace(cfg, sizes=(8, 1 << 20), iters=2), **{**kw, "backend": "gloo"}))
    monkeypatch.setattr(tpm, "run_tp", lambda cfg, **kw: run_t(replace(cfg, iters=2), **{**kw, "backend": "gloo"}))
    monkeypatch.setattr(tpm, "gpu_default", lambda preset="x": {"preset": "llama-3-8b", "scale": 16,
                                                                "seq_len": 64, "batch": 1, "dtype": "fp32"})
    out = tmp_path / "rep"
    doc = report.run_report(out, device="cpu", sections=("collectives", "tp"))
    secs = {s["name"]: s for s in doc["sections"]}
    assert "error" not in secs["collectives"] and "error" not in secs["tp"], secs
    assert "skipped" not in secs["collectives"] and "skipped" not in secs["tp"]
    md = (out / "report.md").read_text()
    for op in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"):
        assert f"| {op} | " in md and md.split(f"| {op} | ")[1].split("\n")[0].endswith("| yes |")
    assert "Saved as **gloo, 2 CPU processes" in md  # the 1 MiB all-reduce made it a link
    assert "| 2 | " in md and "| yes (" in md
    assert {r["name"] for r in secs["tp"]["results"]} == {"one rank", "tp2"}
    assert len(secs["collectives"]["results"]) == 10
    for rel in list(secs["collectives"]["charts"].values()) + list(secs["tp"]["charts"].values()):
        assert (out / rel).is_file()


_KILLED_TP = r"""
import sys
from dataclasses import replace
from gemmlib.measure import launch, report
from gemmlib.measure import tp as tpm

launch.cuda_count = lambda: 2  # two stand-in GPUs whose NCCL is gloo
real = tpm.run_tp
launches = []

def run_tp(cfg, **kw):
    launches.append(1)
    # the second launch runs for ever (as a rank count that outlives the GPU script's step limit)
    cfg = replace(cfg, iters=2 if len(launches) == 1 else 10000)
    return real(cfg, **{**kw, "backend": "gloo"})

tpm.run_tp = run_tp
tpm.gpu_default = lambda preset="x": {"preset": "llama-3-8b", "scale": 16, "seq_len": 32, "batch": 1, "dtype": "fp32"}
tpm.report_ranks = lambda model, gpus: [2, 2]
report.run_report(sys.argv[1], device="cpu", sections=("tp",), progress=lambda s: print(s, flush=True))
"""


def test_a_report_killed_in_a_later_launch_keeps_the_rank_counts_before_it(tmp_path):
    # The multi-GPU step is stopped at its limit while a later rank count runs: the rows of the rank
    # counts that finished are in the report's files already.
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_TP, str(out)], cwd=root, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            env={**os.environ, "PYTHONPATH": str(root), "GEMM_CACHE_DIR": str(tmp_path / "c")})
    seen = []
    try:
        end = time.monotonic() + 150
        builds = 0
        for line in proc.stdout:
            seen.append(line)
            builds += "2 ranks: building" in line
            if builds >= 2 or time.monotonic() > end:  # the second launch's ranks are up
                break
        time.sleep(1.0)
        assert proc.poll() is None, "".join(seen[-20:])
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the report and its ranks, as `timeout` kills a step
        proc.wait(timeout=30)
    saved = json.loads((out / "results.json").read_text())
    (sec,) = saved["sections"]
    assert sec["name"] == "tp" and "stopped while this section ran" in sec["running"]
    assert {r["name"] for r in sec["results"]} == {"one rank", "tp2"}, "".join(seen[-20:])
    assert all(r["median_s"] > 0 for r in sec["results"])
    assert "tp2" in (out / "results.csv").read_text()
    md = (out / "report.md").read_text()
    assert "## tp (unfinished: the rows so far)" in md and "| 2 | " in md
