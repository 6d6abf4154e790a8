"""The command line against hostile input: bad files, bad output paths, unbounded numbers, work a CPU
cannot do. Every one ends with exit status 2 and one line on stderr, before anything runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SMALL_PROFILE = ["profile", "--device", "cpu", "--hidden", "64", "--heads", "4", "--seq-len", "16", "--steps", "1"]


def _cli(*argv: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    full = {**os.environ, **(env or {})}
    for k in ("GEMM_CLASSROOM", "GEMM_MAX_DIM", "GEMM_MAX_BYTES", "GEMM_TIME_LIMIT_S", "GEMM_MAX_CPU_GFLOP"):
        if not env or k not in env:
            full.pop(k, None)
    return subprocess.run([sys.executable, "-m", "gemmlib", *argv], cwd=ROOT, env=full, capture_output=True,
                          text=True, timeout=timeout)


def _one_line_exit_2(p: subprocess.CompletedProcess, words: str) -> None:
    lines = [ln for ln in p.stderr.splitlines() if not ln.startswith("USDT")]
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert words in lines[0], lines[0]


@pytest.fixture
def hostile_files(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    bigint = tmp_path / "bigint.json"
    bigint.write_text('{"model_type": "llama", "hidden_size": ' + "9" * 5000 + "}")
    huge = tmp_path / "huge.json"
    huge.write_text(json.dumps({"model_type": "llama", "hidden_size": int("9" * 4000), "num_attention_heads": 8,
                                "num_hidden_layers": 2, "intermediate_size": 64, "vocab_size": 10}))
    return {"fifo": fifo, "deep": deep, "bigint": bigint, "huge": huge}


@pytest.mark.parametrize("which, words", [
    ("/dev/zero", "is a device, not a regular file"), ("/dev/urandom", "is a device, not a regular file"),
    ("fifo", "is a FIFO"), ("deep", "nested too deeply"), ("bigint", "4300 digits"),
    ("huge", "beyond any real model"), ("/tmp", "is a folder")])
def test_config_files_that_are_not_configs(hostile_files, which, words):
    path = hostile_files.get(which, which)
    t0 = time.perf_counter()
    p = _cli("estimate", "--config", str(path), timeout=30)
    _one_line_exit_2(p, words)
    assert time.perf_counter() - t0 < 30  # no read without bound, no hang on a FIFO
    assert len(p.stderr) < 300  # a 4000-digit number is not echoed back


def test_output_paths_are_checked_before_the_run(tmp_path):
    real = tmp_path / "real.csv"
    real.write_text("keep")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    bench = ["bench", "precision", "--device", "cpu", "--size", "64", "--dtypes", "fp32", "--min-run-time", "0.05"]
    for target, words in (("/proc/version", "cannot create files"), (str(tmp_path), "is a folder"),
                          ("/dev/full", "device or special file"), (str(link), "symbolic link")):
        t0 = time.perf_counter()
        _one_line_exit_2(_cli(*bench, "--csv", target), words)
        assert time.perf_counter() - t0 < 20  # refused before a benchmark worker is even started
    assert real.read_text() == "keep" and link.is_symlink()
    out = tmp_path / "ok.csv"
    p = _cli(*bench, "--csv", str(out))
    assert p.returncode == 0, p.stderr
    assert out.read_text().startswith("bench,") and sorted(x.name for x in tmp_path.iterdir()) == \
        ["link.csv", "ok.csv", "real.csv"]  # no temporary file left behind


def test_trace_paths(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("keep")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    for target, words in ((str(tmp_path), "is a folder"), ("/proc/self/trace.json", "cannot create files"),
                          (str(link), "symbolic link"), ("/dev/null", "device")):
        _one_line_exit_2(_cli(*SMALL_PROFILE, "--trace", target), words)
    assert real.read_text() == "keep" and link.is_symlink()
    trace = tmp_path / "t.json"
    p = _cli(*SMALL_PROFILE, "--trace", str(trace), "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["trace_path"] == str(trace)
    assert json.loads(trace.read_text())["traceEvents"]
    assert sorted(x.name for x in tmp_path.iterdir()) == ["link.json", "real.json", "t.json"]


def test_report_out_must_be_a_usable_folder(tmp_path):
    f = tmp_path / "file"
    f.write_text("")
    _one_line_exit_2(_cli("report", "--out", str(f), "--quick"), "not a folder")
    _one_line_exit_2(_cli("report", "--out", "/proc/sys/gemm", "--quick"), "cannot create files")


@pytest.mark.parametrize("bench", ["tiling", "batching", "precision"])
@pytest.mark.parametrize("value", ["inf", "nan", "-1", "0", "1e9"])
def test_min_run_time_is_bounded(bench, value):
    _one_line_exit_2(_cli("bench", bench, "--device", "cpu", "--min-run-time", value), "--min-run-time")


@pytest.mark.parametrize("argv, words", [
    (["--layers", "10000"], "layers must be from 1 to 64"),
    (["--steps", "100000"], "profiled passes"),
])
def test_profile_sizes_are_bounded(argv, words):
    _one_line_exit_2(_cli("profile", "--device", "cpu", "--hidden", "64", "--heads", "4", *argv), words)


@pytest.mark.parametrize("argv", [
    ["bench", "tiling", "--device", "cpu", "--size", "8192"],
    ["bench", "batching", "--device", "cpu", "--m", "8192", "--k", "8192", "--n", "8192", "--batches", "1"],
    ["bench", "precision", "--device", "cpu", "--size", "8192"],
])
def test_work_a_cpu_cannot_do_is_refused_by_the_same_cap(argv):
    """The caps are one rule for every benchmark: 8192³ is 1100 GFLOP, above the default CPU cap of 137."""
    t0 = time.perf_counter()
    _one_line_exit_2(_cli(*argv), "GEMM_MAX_CPU_GFLOP")
    assert time.perf_counter() - t0 < 20


def test_caps_from_a_secrets_file_reach_the_cli(tmp_path):
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "secrets.toml").write_text("GEMM_MAX_DIM = 300\n")
    p = subprocess.run([sys.executable, "-m", "gemmlib", "bench", "tiling", "--device", "cpu", "--size", "512"],
                       cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                       timeout=60)
    _one_line_exit_2(p, "cap of 300")
    (tmp_path / ".streamlit" / "secrets.toml").write_text("GEMM_MAX_DIM = = 300\n")
    p = subprocess.run([sys.executable, "-m", "gemmlib", "bench", "tiling", "--device", "cpu", "--size", "64"],
                       cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                       timeout=60)
    _one_line_exit_2(p, "is not valid TOML")
    assert "line 1" in p.stderr
