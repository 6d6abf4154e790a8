"""`estimate --gpu NAME` for a name that is not there names the saved calibrations too.

The README's "Calibrate and validate" has a newcomer run `calibrate`, then `estimate --gpu 'AMD EPYC (calibrated)'`.
Before: a misspelt or other device's name was answered with the catalogue and the measured ceilings only ("unknown
GPU 'nope'; choose one of: H100 SXM, …; or one measured on this machine: …"), and a misspelt calibrated name with
"no calibration called 'Nope (calibrated)' is saved here" while one was: neither said which "(calibrated)" row
`--gpu` would take. Now both list them."""

from __future__ import annotations

import pytest

from gemmlib.core import calibration as cs
from gemmlib.core.calibration import Calibration, GemmPoint, OtherPoint


@pytest.fixture
def calibrated(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path / "cache"))
    points = tuple(GemmPoint("linear", "q_proj", "fp32", m, 64, 32, 1, 1e-6 * m, 2.0 * m * 64 * 32,
                             4.0 * (m * 32 + 64 * 32 + m * 64)) for m in (1, 4))
    cs.save_calibration(Calibration("cpu", "Test CPU", "toy", ("fp32",), points,
                                    (OtherPoint("norms", "fp32", "prefill", 8, 64, 2e-6, 4096.0),)))
    assert cs.calibrated_names() == ["Test CPU (calibrated)"]


def test_an_unknown_gpu_names_the_calibrations_saved_here(calibrated, run_cli):
    rc, out, err = run_cli(["estimate", "--preset", "gpt2", "--gpu", "nope"])
    assert rc == 2 and out == ""
    assert err.startswith("error: unknown GPU 'nope'; choose one of: H100 SXM,")
    assert err.strip().endswith("; or one calibrated here: Test CPU (calibrated)")
    rc, out, err = run_cli(["estimate", "--preset", "gpt2", "--gpu", "Test CPU (calibrated)"])
    assert "no calibration called" not in err and "unknown GPU" not in err  # the name it gave is found (this toy
    # calibration then lacks gpt2's shapes, which the estimate says in its own words)


def test_a_misspelt_calibration_names_the_saved_ones(calibrated, run_cli):
    rc, _, err = run_cli(["estimate", "--preset", "gpt2", "--gpu", "Test GPU (calibrated)"])
    assert rc == 2
    assert err.strip() == ("error: no calibration called 'Test GPU (calibrated)' is saved here (saved: Test CPU "
                           "(calibrated)); run `python -m gemmlib calibrate` on that device first")


def test_with_nothing_saved_the_refusals_are_as_before(tmp_path, monkeypatch, run_cli):
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path / "empty"))
    rc, _, err = run_cli(["estimate", "--preset", "gpt2", "--gpu", "nope"])
    assert rc == 2 and err.strip().endswith(", CPU (edit me)") and "calibrated" not in err
    rc, _, err = run_cli(["estimate", "--preset", "gpt2", "--gpu", "x (calibrated)"])
    assert err.strip() == ("error: no calibration called 'x (calibrated)' is saved here; run `python -m gemmlib "
                           "calibrate` on that device first")
