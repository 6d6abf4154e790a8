"""`python -m gemmlib profile`: JSON fields, text table, bad input exits 2 with one line."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from gemmlib.cli import main  # noqa: E402
from gemmlib.measure.profiler import BlockConfig, predicted_gemm_flops  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["--device", "cpu", "--layers", "1", "--hidden", "64", "--seq-len", "32", "--heads", "4",
         "--steps", "2"]


def test_json_has_share_and_ops(capsys, tmp_path):
    trace = tmp_path / "t.json"
    assert main(["profile", *SMALL, "--kv-heads", "2", "--json", "--trace", str(trace)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert 0 < d["gemm_share"] < 1
    assert d["ops"] and all({"name", "time_s", "is_gemm", "flops"} <= set(o) for o in d["ops"])
    assert math.isclose(sum(o["time_s"] for o in d["ops"]), d["total_time_s"], rel_tol=1e-9)
    cfg = BlockConfig.llama(hidden=64, heads=4, kv_heads=2, seq_len=32)
    assert sum(o["flops"] for o in d["ops"] if o["is_gemm"]) == predicted_gemm_flops(cfg)
    assert d["config"]["kv_heads"] == 2 and d["config"]["dtype"] == "fp32"
    assert json.loads(trace.read_text(encoding="utf-8"))["traceEvents"]


def test_text_table_and_by_name(capsys):
    assert main(["profile", *SMALL, "--by-name", "--top", "5"]) == 0
    out = capsys.readouterr().out
    assert "GEMM share of time" in out and "80%" in out
    assert "aten::mm" in out and "(all shapes)" in out
    table = out.split("TFLOP/s\n", 1)[1].split("\n\n", 1)[0].strip().splitlines()
    assert len(table) == 5


def test_preset_scaled(capsys):
    assert main(["profile", "--preset", "llama-3-8b", "--scale", "32", "--seq-len", "16", "--steps", "1",
                 "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["config"]["hidden"], d["config"]["heads"], d["config"]["kv_heads"]) == (128, 32, 8)


@pytest.mark.parametrize("argv, words", [
    (["--hidden", "100", "--heads", "8"], "multiple of heads"),
    (["--hidden", "64", "--heads", "4", "--kv-heads", "3"], "kv_heads"),
    (["--dtype", "fp8"], "fp8"),
    (["--preset", "gpt-9"], "unknown preset"),
    (["--hardware", "tpu9", "--hidden", "64", "--heads", "4", "--seq-len", "8"], "unknown GPU"),
])
def test_bad_input_is_one_line_exit_2(capsys, argv, words):
    assert main(["profile", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and "Traceback" not in err


@pytest.mark.parametrize("argv", [["--hidden", "abc"], ["--layers", "0"], ["--attention", "paged"]])
def test_bad_numbers_are_argparse_errors(capsys, argv):
    with pytest.raises(SystemExit) as e:
        main(["profile", *argv])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error" in err


def test_real_process_exit_code_for_missing_device():
    """The whole path: a new interpreter, stderr one line, exit 2 (cuda absent) or 0 (cuda present)."""
    p = subprocess.run([sys.executable, "-m", "gemmlib", "profile", "--device", "cuda", "--hidden", "64",
                        "--heads", "4", "--seq-len", "16", "--steps", "1", "--json"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    import torch

    if torch.cuda.is_available():
        assert p.returncode == 0 and json.loads(p.stdout)["device"] == "cuda"
    else:
        assert p.returncode == 2
        lines = p.stderr.splitlines()
        assert len(lines) == 1 and "cuda" in lines[0] and "Traceback" not in p.stderr
