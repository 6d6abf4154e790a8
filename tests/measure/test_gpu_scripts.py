"""The GPU session's scripts, run on the CPU as far as they go: scripts/gpu_report.sh's Python parts
and benchmarks/tiling_batching_targets.py's printing of rows that were not measured."""

import importlib.util
import json
from pathlib import Path

import pytest

from gemmlib.measure import batching as bb
from gemmlib.measure import tiling as bt
from gemmlib.measure.triton_gemm import prepare_interpreter

prepare_interpreter()

ROOT = Path(__file__).resolve().parents[2]


def _targets():
    spec = importlib.util.spec_from_file_location("tiling_batching_targets",
                                                  ROOT / "benchmarks" / "tiling_batching_targets.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(autouse=True)
def _no_caps(monkeypatch):
    for v in ("GEMM_CLASSROOM", "GEMM_MAX_DIM", "GEMM_MAX_BYTES", "GEMM_TIME_LIMIT_S"):
        monkeypatch.delenv(v, raising=False)


def test_targets_print_rows_that_were_not_measured_without_crashing():
    t = _targets()
    waves = bt.run_wave_sweep("cpu", m=64, k=64, ns=[64, 80])  # every row unsupported on a CPU
    lines = t.wave_lines(waves)
    assert len(lines) == 4 and all("— TFLOP/s" in ln and "needs a GPU" in ln for ln in lines)
    refused = bb.run_batching(bb.BatchingConfig(device="cpu", m=1, k=8, n=8, batches=(bb.MAX_LOOP_CALLS + 1,),
                                                modes=("loop",)))
    (line,) = t.sweep_lines(refused)
    assert "— TFLOP/s — GB/s" in line and "cap" in line
    tiling = bt.run_tiling(bt.TilingConfig(device="cpu", size=32, tiles=(16,), impls=("triton", "torch"),
                                           min_run_time=0.01))
    text = "\n".join(t.tiling_lines(tiling))
    assert "triton" in text and "—" in text  # the interpreter's row has no speed figure
    assert "not measured" in t.share_line("Triton / cuBLAS", None, 12.0, 0.85)
    assert t.share_line("x", 9.0, 10.0, 0.85) == "x: 9.0 / 10.0 TFLOP/s = 90.0% (target ≥ 85%)"


def test_page_tests_are_left_out_cleanly_without_the_app_packages(tmp_path):
    # The GPU image has torch but not streamlit/pandas/altair: pytest must still run and pass the rest.
    import subprocess
    import sys

    shim = ("import sys\n"  # the shim hides the packages, as on the GPU image
            "for m in ('streamlit', 'pandas', 'altair'):\n"
            "    sys.modules[m] = None\n"
            "import pytest\n"
            "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', 'tests/pages/test_precision_page.py',\n"
            "                      'tests/measure/test_quant.py', '-rs']))\n")
    proc = subprocess.run([sys.executable, "-c", shim, "-rs"], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)})
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "needs streamlit, pandas, altair" in out  # the page module, reported as skipped with the reason
    assert " passed" in out and " error" not in out.lower()


# ----------------------------------------------------------------------------- scripts/gpu_report.sh
SCRIPT = ROOT / "scripts" / "gpu_report.sh"


def _gemmlib_commands() -> list[list[str]]:
    """Every `python -m gemmlib ...` the script runs, as argv (shell variables filled in)."""
    import shlex

    text = SCRIPT.read_text().replace("\\\n", " ")
    cmds = []
    for line in text.splitlines():
        if '-m gemmlib' not in line or line.lstrip().startswith("#"):
            continue
        words = shlex.split(line.split("-m gemmlib", 1)[1].replace('"$OUT', '"/tmp/out'))
        cmds.append([w for w in words if not w.startswith("$")])
    return cmds


def test_gpu_report_script_is_valid_bash_and_its_commands_parse():
    import subprocess

    subprocess.run(["bash", "-n", str(SCRIPT)], check=True)
    from gemmlib.cli import build_parser

    cmds = _gemmlib_commands()
    assert {c[0] for c in cmds} >= {"devices", "calibrate", "validate", "report"}
    parser = build_parser()
    for argv in cmds:
        args = parser.parse_args(argv)  # a renamed flag fails here, not on the GPU
        assert callable(args._run)
    quick = ["validate", "--device", "cuda", "--layers", "2", "--seq-len", "1024", "--new-tokens", "16", "--json"]
    assert parser.parse_args(quick).new_tokens == 16  # the QUICK=1 flags


def test_gpu_report_script_runs_to_the_end_without_a_gpu(tmp_path):
    # Every step fails fast on a CPU (no CUDA), and the script still logs each one, writes the GPU
    # checks' JSON and the figures, and exits 0.
    import os
    import subprocess
    import sys

    import torch
    if torch.cuda.is_available():
        pytest.skip("this checks the CPU path; on a GPU run the script itself")
    out = tmp_path / "out"
    env = {**os.environ, "OUT": str(out), "QUICK": "1", "BUDGET": "240", "PYTHON": sys.executable,
           "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(["bash", str(SCRIPT)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    log = (out / "steps.log").read_text()
    for step in ("env", "gpu_checks", "devices", "calibrate", "validate", "report", "figures"):
        assert f"start {step}" in log and f"end   {step}" in log, step
    assert "rc=3" in log.split("end   gpu_checks")[1].splitlines()[0]  # the no-CUDA exit
    assert json.loads((out / "gpu_checks.json").read_text())["error"] == "no CUDA device"
    assert "cannot be used here" in (out / "calibrate.err").read_text()
    rows = json.loads((out / "figures.json").read_text())
    assert {r["figure"] for r in rows} >= {"bf16 8192³ (harness)", "int8 / bf16", "Triton / cuBLAS fp16 4096³",
                                           "decode M = 1 share of copy bandwidth"}
    assert all(r["status"].startswith("not measured") for r in rows if r["value"] is None)
    assert json.loads((out / "devices.json").read_text())["devices"][0]["kind"] == "cpu"


def test_figures_read_what_the_gpu_steps_write(tmp_path):
    # The files as the GPU steps write them (keys of scripts/gpu_checks.py checks, the report's verdicts,
    # validate --json): every target gets its status.
    spec = importlib.util.spec_from_file_location("gpu_checks", ROOT / "scripts" / "gpu_checks.py")
    gc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gc)
    (tmp_path / "gpu_checks.json").write_text(json.dumps({
        "bf16_8192_vs_do_bench": {"round1": {"harness_tflops": 781.0, "do_bench_tflops": 790.0,
                                             "difference": 781 / 790 - 1}},
        "low_precision_8192": {"int8 / bf16": 1.2, "fp8 / bf16": 1.7}}))
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "results.json").write_text(json.dumps({"sections": [
        {"name": "tiling", "verdict": {"triton_share_of_cublas": 0.9}},
        {"name": "batching", "verdict": {"decode_4096_share_of_copy": 0.65}}]}))
    (tmp_path / "validate.json").write_text(json.dumps({
        "device": "cuda", "prefill": {"measured_s": 1.0, "estimated_s": 0.7, "calibrated_s": 0.95,
                                      "estimated_error": -0.3, "calibrated_error": -0.05},
        "decode": {"measured_s": 1.0, "estimated_s": 0.5, "calibrated_s": 1.2, "estimated_error": -0.5,
                   "calibrated_error": 0.2}}))
    assert gc.figures(str(tmp_path)) == 0
    by = {r["figure"]: r["status"] for r in json.loads((tmp_path / "figures.json").read_text())}
    assert by["bf16 8192³ (harness)"] == "PASS" and by["harness vs do_bench, same run"] == "PASS"
    assert by["int8 / bf16"] == "FAIL" and by["fp8 / bf16"] == "PASS"
    assert by["Triton / cuBLAS fp16 4096³"] == "PASS" and by["decode M = 1 share of copy bandwidth"] == "FAIL"
    assert by["validate prefill: calibrated error"] == "PASS" and by["validate decode: calibrated error"] == "FAIL"
    assert by["validate decode: |calibrated| − |datasheet| error"] == "PASS"
