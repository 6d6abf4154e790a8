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
