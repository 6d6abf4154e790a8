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
            "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '-p', 'no:xdist', 'tests/pages/test_precision_page.py',\n"
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
    """Every `python -m gemmlib ...` the script runs, as argv (shell variables and arithmetic filled in)."""
    import re
    import shlex

    text = re.sub(r"\$\(\([^)]*\)\)", "100", SCRIPT.read_text().replace("\\\n", " "))
    cmds = []
    for line in text.splitlines():
        if '-m gemmlib' not in line or line.lstrip().startswith("#"):
            continue
        words = shlex.split(line.split("-m gemmlib", 1)[1].replace('"$OUT', '"/tmp/out'))
        cmds.append([w for w in words if not w.startswith("$")])
    return cmds


def _gc():
    spec = importlib.util.spec_from_file_location("gpu_checks", ROOT / "scripts" / "gpu_checks.py")
    gc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gc)
    return gc


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
    reports = [parser.parse_args(c) for c in cmds if c[0] == "report"]
    assert all(r.time_budget == 100 for r in reports)  # every report step passes its deadline down
    quick = ["validate", "--device", "cuda", "--layers", "2", "--seq-len", "1024", "--new-tokens", "16", "--json"]
    assert parser.parse_args(quick).new_tokens == 16  # the QUICK=1 flags


def test_the_step_limits_fit_one_ten_minute_call():
    # The default budget leaves room in a 10-minute call, and on one GPU the steps' own limits add up
    # to no more than it (the multi-GPU step needs two GPUs: it takes what is left, or an ONLY= call).
    import re

    text = SCRIPT.read_text()
    budget = int(re.search(r'BUDGET="\$\{BUDGET:-(\d+)\}"', text).group(1))
    limits = {m.group(1): int(m.group(2)) for m in re.finditer(r"limit_for (\w+) (\d+)", text)}
    assert budget <= 570 and set(limits) >= {"env", "gpu_checks", "devices", "calibrate", "validate", "report",
                                             "honesty", "pytest", "multigpu", "figures"}
    one_gpu = sum(v for k, v in limits.items() if k != "multigpu")
    assert one_gpu <= budget - 30, limits  # 30 s for the starts of Python between steps and the refreshes


def _run_script(tmp_path, env_extra, watch=None):
    import os
    import subprocess
    import sys
    import time

    out = tmp_path / "out"
    env = {**os.environ, "OUT": str(out), "PYTHON": sys.executable, "PYTHONPATH": str(ROOT), **env_extra}
    proc = subprocess.Popen(["bash", str(SCRIPT)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    seen = {}
    if watch:  # while the script runs: what the files say once a step has ended
        end = time.monotonic() + 300
        while proc.poll() is None and time.monotonic() < end:
            log = (out / "steps.log").read_text() if (out / "steps.log").exists() else ""
            if watch in log and watch not in seen:
                time.sleep(1.5)  # the refresh after the step
                seen[watch] = json.loads((out / "figures.json").read_text())
            time.sleep(0.2)
    stdout, stderr = proc.communicate(timeout=300)
    return out, proc.returncode, stdout, stderr, seen


def test_gpu_report_script_runs_to_the_end_without_a_gpu(tmp_path):
    # The GPU checks stop at once (no CUDA), the other GPU steps say why they were skipped, the figures
    # are refreshed after every step, and the script ends with the table, every figure saying why it
    # was not measured.
    import torch
    if torch.cuda.is_available():
        pytest.skip("this checks the CPU path; on a GPU run the script itself")
    out, rc, stdout, stderr, seen = _run_script(tmp_path, {"BUDGET": "240"}, watch="end   gpu_checks")
    assert rc == 0, stderr[-2000:]
    log = (out / "steps.log").read_text()
    for step in ("env", "gpu_checks", "devices", "figures"):
        assert f"start {step}" in log and f"end   {step}" in log, step
    assert "rc=3" in log.split("end   gpu_checks")[1].splitlines()[0]  # the no-CUDA exit
    for step in ("calibrate", "validate", "report", "honesty", "pytest", "multigpu"):
        assert f"skip  {step}: " in log, step
    assert json.loads((out / "gpu_checks.json").read_text())["error"] == "no CUDA device"
    rows = json.loads((out / "figures.json").read_text())
    assert {r["figure"] for r in rows} >= {"bf16 8192³ (harness)", "int8 / bf16", "Triton / cuBLAS fp16 4096³",
                                           "decode M = 1 share of copy bandwidth", "clocks held during the GPU checks",
                                           "validate decode: calibrated error"}
    assert all(r["status"].startswith("not measured: ") and len(r["status"]) > 20 for r in rows)
    by = {r["figure"]: r["status"] for r in rows}
    assert by["bf16 8192³ (harness)"] == "not measured: no CUDA device"
    assert "report step skipped: no CUDA device" in by["Triton / cuBLAS fp16 4096³"]
    assert "| figure " in stdout and "| not measured: no CUDA device" in stdout  # the table, printed at the end
    assert (out / "summary.md").read_text().startswith("# GPU session figures")
    assert json.loads((out / "devices.json").read_text())["devices"][0]["kind"] == "cpu"
    assert json.loads((out / "machine.json").read_text())["machine"]["available"] is False
    # figures.json was there already right after the GPU checks: a later kill keeps them
    assert seen["end   gpu_checks"] and seen["end   gpu_checks"][0]["status"] == "not measured: no CUDA device"


def test_only_runs_the_steps_asked_for(tmp_path):
    out, rc, stdout, stderr, _ = _run_script(tmp_path, {"ONLY": "figures"})
    assert rc == 0, stderr[-2000:]
    log = (out / "steps.log").read_text()
    assert "start figures" in log and "start env" not in log and "gpu_checks" not in log
    assert "not measured: the gpu_checks step did not run" in stdout


def test_figures_read_what_the_gpu_steps_write(tmp_path):
    # The files as the GPU steps write them (keys of scripts/gpu_checks.py checks, the report's verdicts,
    # validate --json): every target gets its status.
    gc = _gc()
    steady = {"before": {"available": True, "sm_clock_mhz": 1980}, "after": {"available": True}, "flags": []}
    (tmp_path / "gpu_checks.json").write_text(json.dumps({
        "device": "NVIDIA H200",
        "bf16_8192_vs_do_bench": {"round1": {"harness_tflops": 781.0, "do_bench_tflops": 790.0,
                                             "difference": 781 / 790 - 1},
                                  "small_256": {"do_bench": {"us": 9.1}, "cuda_graph": {"us": 4.2}},
                                  "machine": steady},
        "low_precision_8192": {"int8 / bf16": 1.2, "fp8 / bf16": 1.7,
                               "machine": {**steady, "flags": ["SM clock dropped from 1980 to 1500 MHz (-24%)"]}},
        "cuda_host_memory": {"vmdata_added_bytes": {"NCCL communicator": 1.5 * 2**30}, "allowance_bytes": 2 * 2**30,
                             "machine": steady}}))
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
    target = {r["figure"]: r["target"] for r in json.loads((tmp_path / "figures.json").read_text())}
    assert target["bf16 8192³ (harness)"] == "≥ 750 TFLOP/s (75.8% of the H200 SXM's 989.4)"
    assert by["bf16 256³: CUDA graph, L2 flushed"] == "reported"
    assert by["int8 / bf16"] == "FAIL" and by["fp8 / bf16"] == "PASS"
    assert by["CUDA + cuBLAS + NCCL host memory of a process"] == "PASS"
    assert by["clocks held during the GPU checks"] == "FAIL"  # one check's clocks dropped
    assert by["Triton / cuBLAS fp16 4096³"] == "PASS" and by["decode M = 1 share of copy bandwidth"] == "FAIL"
    assert by["validate prefill: calibrated error"] == "PASS" and by["validate decode: calibrated error"] == "FAIL"
    assert by["validate decode: calibrated minus datasheet, abs. error"] == "PASS"
    assert by["validate prefill: datasheet error"] == "reported"
    assert "NVIDIA H200" in (tmp_path / "summary.md").read_text()


def test_a_figure_not_measured_says_which_step_and_why(tmp_path):
    gc = _gc()
    (tmp_path / "steps.log").write_text(
        "[0 s] start gpu_checks (limit 110 s)\n[110 s] end   gpu_checks rc=124 (TIMED OUT) in 110 s\n"
        "[111 s] start report (limit 150 s)\n"  # the script was killed in the report step
        "[300 s] skip  validate: only 9 s of the 570 s budget left\n")
    (tmp_path / "gpu_checks.err").write_text("Traceback (most recent call last):\n  File x\nRuntimeError: boom\n")
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "results.json").write_text(json.dumps({"sections": [
        {"name": "tiling", "running": "started; if this is still here, the report was stopped"}]}))
    by = {r["figure"]: r["status"] for r in gc.figure_rows(tmp_path)}
    assert by["bf16 8192³ (harness)"] == "not measured: gpu_checks step rc=124 (TIMED OUT) in 110 s: RuntimeError: boom"
    assert by["Triton / cuBLAS fp16 4096³"].startswith("not measured: the report's tiling section: started")
    assert by["decode M = 1 share of copy bandwidth"] == ("not measured: report step started, never ended "
                                                          "(killed with the script?)")
    assert by["validate decode: calibrated error"] == ("not measured: validate step skipped: only 9 s of the "
                                                       "570 s budget left")


@pytest.mark.parametrize("device, n, tflops, status, target", [
    ("NVIDIA H100 80GB HBM3", 8192, 781.0, "PASS", "≥ 750 TFLOP/s (75.8% of the H100 SXM's 989.4)"),
    ("NVIDIA H200", 8192, 700.0, "FAIL", "≥ 750 TFLOP/s (75.8% of the H200 SXM's 989.4)"),
    ("NVIDIA H100 PCIe", 8192, 600.0, "PASS", "≥ 573 TFLOP/s (75.8% of the H100 PCIe's 756.5)"),
    ("NVIDIA H200", 4096, 640.0, "reported", "(reported: no target at this size (8192³ only))"),
    ("Tesla T4", 8192, 60.0, "reported", "(reported: no catalogue bf16 peak for 'Tesla T4')"),
])
def test_the_bf16_target_is_the_boards_own_and_only_at_8192(tmp_path, device, n, tflops, status, target):
    """750 TFLOP/s is an H100/H200 SXM's figure (design.md's 788 on an H200, less 5 %): another board is held to the
    same share of its own catalogue peak, an unknown one and quick's 4096³ are reported without a target, and the
    figure names the N it was measured at (quick once showed a 4096³ figure as "8192³" judged against 750)."""
    gc = _gc()
    (tmp_path / "gpu_checks.json").write_text(json.dumps({
        "device": device, "quick": n == 4096,
        "bf16_vs_do_bench": {"round1": {"harness_tflops": tflops, "do_bench_tflops": tflops, "difference": 0.0,
                                        "n": n}}}))
    gc.figures(str(tmp_path), quiet=True)
    rows = {r["figure"]: r for r in json.loads((tmp_path / "figures.json").read_text())}
    row = rows[f"bf16 {n}³ (harness)"]
    assert (row["status"], row["target"], row["value"]) == (status, target, tflops)


def test_the_bf16_target_without_a_gpu_names_the_rule_not_none(tmp_path):
    """Without a GPU (gpu_checks.json holds only the error) the row's target says what a board would be held
    to; it once read "no catalogue bf16 peak for None"."""
    gc = _gc()
    (tmp_path / "gpu_checks.json").write_text(json.dumps({"error": "no CUDA device", "torch": "2.13.0+cpu"}))
    gc.figures(str(tmp_path), quiet=True)
    row = {r["figure"]: r for r in json.loads((tmp_path / "figures.json").read_text())}["bf16 8192³ (harness)"]
    assert row["target"] == "≥ 75.8% of the board's bf16 peak (750 TFLOP/s on an H100 / H200 SXM)"
    assert row["status"] == "not measured: no CUDA device"


def test_the_script_finds_python3_where_there_is_no_python(tmp_path):
    # Debian and Ubuntu install `python3` and no `python`: without PYTHON= every step ran `python`, which the
    # shell could not find (rc 127), and the GPU count read 0, so every GPU step was skipped as "no CUDA device".
    import os
    import subprocess
    import sys

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "PYTHON"}
    env.update(OUT=str(out), ONLY="env,figures", PATH=f"{bin_dir}:/usr/bin:/bin", PYTHONPATH=str(ROOT))
    assert subprocess.run(["bash", "-c", "command -v python"], env=env, capture_output=True).returncode != 0
    proc = subprocess.run(["bash", str(SCRIPT)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    log = (out / "steps.log").read_text()
    assert "end   env rc=0" in log and "end   figures rc=0" in log, log
    assert json.loads((out / "machine.json").read_text())["python"]


def test_the_scripts_calibration_and_validation_are_admitted_by_its_caps(monkeypatch):
    # calibrate and validate --device cuda run a whole llama-3-8b stack: its LM head is N = vocab = 128,256, above
    # the default cap of 16,384 on any dimension, so both steps were refused at once on the GPU ("vocab=128256 is
    # above this server's cap"). The script raises the cap for its own runs (GEMM_MAX_DIM, unless one is given).
    import re

    from gemmlib.measure import calibrate as cb
    from gemmlib.measure import safety

    text = SCRIPT.read_text()
    found = re.search(r'export GEMM_MAX_DIM="\$\{GEMM_MAX_DIM:-(\d+)\}"', text)
    assert found, "gpu_report.sh sets no dimension cap for its calibrate and validate steps"
    monkeypatch.setenv("GEMM_MAX_DIM", found.group(1))
    lim = safety.limits()
    for flags in ({}, {"layers": 2, "seq_len": 1024, "new_tokens": 16}):  # the full run and QUICK=1's
        run = cb.make_run("cuda", **flags)
        cb.plan_calibration(cb.CalibrationConfig(run, "cuda"), lim)
        cb.plan_calibration(cb.CalibrationConfig(run, "cuda", calibrate=False, validate=True), lim)
        assert run.model.vocab == 128256  # the whole vocabulary under the script's cap
    monkeypatch.delenv("GEMM_MAX_DIM")
    with pytest.raises(safety.Refused, match="vocab=128256"):  # that run, under the default caps
        cb.plan_calibration(cb.CalibrationConfig(run, "cuda"), safety.limits())
