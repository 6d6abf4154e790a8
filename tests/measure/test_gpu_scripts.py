"""The GPU session's scripts, run on the CPU as far as they go: scripts/gpu_report.sh's Python parts
and benchmarks/tiling_batching_targets.py's printing of rows that were not measured."""

import importlib.util
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
