"""scripts/gpu_report.sh's own logic (exit status, the env step's status, TRITON_INTERPRET, the budget), run with a
stand-in interpreter that answers as a one-GPU machine's steps would: no GPU figure comes from here, only what the
shell does with the steps' exit statuses. And gpu_checks.py's JSON written whole or not at all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gpu_report.sh"

# The stand-in: each step's command by its arguments; the exit statuses come from FAKE_* variables. The figures
# step runs the real scripts/gpu_checks.py figures.
FAKE = r"""#!/usr/bin/env bash
echo "$* | TRITON_INTERPRET=${TRITON_INTERPRET-unset}" >> "$FAKE_LOG"
case "$1 $2" in
  "-c import torch") exit 0 ;;
  -c*) echo "${FAKE_NGPU:-1}"; exit 0 ;;
  "scripts/gpu_checks.py env") echo '{}' > "$3"; exit "${FAKE_ENV_RC:-0}" ;;
  "scripts/gpu_checks.py checks") exit "${FAKE_CHECKS_RC:-0}" ;;
  "scripts/gpu_checks.py figures") exec "$REAL_PY" "$@" ;;
  "-m gemmlib") echo '{}'; exit 0 ;;
  *) exit 0 ;;
esac
"""


def _run(tmp_path, **env_extra):
    fake = tmp_path / "fake-python"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k not in ("ONLY", "QUICK", "TRITON_INTERPRET")}
    env.update(OUT=str(out), PYTHON=str(fake), REAL_PY=sys.executable, FAKE_LOG=str(tmp_path / "calls.log"),
               PYTHONPATH=str(ROOT), **env_extra)
    proc = subprocess.run(["bash", str(SCRIPT)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    log = (out / "steps.log").read_text()
    calls = (tmp_path / "calls.log").read_text().splitlines()
    return proc.returncode, log, calls


def test_every_step_ending_well_exits_0_and_triton_interpret_is_unset_on_a_gpu(tmp_path):
    rc, log, calls = _run(tmp_path, TRITON_INTERPRET="1")
    assert rc == 0, log
    assert "TRITON_INTERPRET=1 was set: unset for this GPU run" in log
    for step in ("env", "gpu_checks", "devices", "calibrate", "validate", "report", "honesty", "pytest", "figures"):
        assert f"end   {step} rc=0" in log, step
    steps = [c for c in calls if not c.startswith("-c ")]
    assert len(steps) >= 8 and all(c.endswith("TRITON_INTERPRET=unset") for c in steps), steps


def test_a_failing_step_makes_the_exit_status_1_and_is_named(tmp_path):
    rc, log, _ = _run(tmp_path, FAKE_CHECKS_RC="2")
    assert rc == 1
    assert "end   figures rc=0" in log  # the steps after it still ran
    assert log.splitlines()[-1].endswith("exit 1: not every step ended well: gpu_checks(rc=2)")


def test_the_env_steps_status_is_its_own_not_nvidia_smis(tmp_path):
    # `…; nvidia-smi … || true` made every env step end with status 0, whatever gpu_checks.py env did
    rc, log, _ = _run(tmp_path, FAKE_ENV_RC="5")
    assert "end   env rc=5" in log and rc == 1


def test_no_gpu_is_not_a_failure_but_the_checks_no_cuda_status_on_a_gpu_is(tmp_path):
    rc, log, _ = _run(tmp_path, FAKE_NGPU="0", FAKE_CHECKS_RC="3")
    assert rc == 0 and "end   gpu_checks rc=3" in log and "skip  calibrate: " in log
    (tmp_path / "gpu").mkdir()
    rc, log, _ = _run(tmp_path / "gpu", FAKE_NGPU="1", FAKE_CHECKS_RC="3")
    assert rc == 1 and "gpu_checks(rc=3)" in log.splitlines()[-1]


def test_steps_left_without_time_make_the_exit_status_1(tmp_path):
    rc, log, _ = _run(tmp_path, BUDGET="20")  # every step but the figures has under 15 s
    assert "skip  env: only 5 s of the 20 s budget left" in log and "end   figures rc=0" in log
    assert rc == 1 and "env(no time left)" in log.splitlines()[-1]


def test_the_checks_json_is_whole_or_the_previous_one_when_a_write_is_killed(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import gpu_checks
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    path = tmp_path / "gpu_checks.json"
    gpu_checks.write_json(str(path), {"device": "x", "first": {"ok": 1}})

    def killed_halfway(doc, f, **kw):
        f.write('{"device": "x", "first": {"o')  # the step's timeout arrives in the middle of the write
        raise KeyboardInterrupt

    monkeypatch.setattr(gpu_checks.json, "dump", killed_halfway)
    with pytest.raises(KeyboardInterrupt):
        gpu_checks.write_json(str(path), {"device": "x", "first": {"ok": 1}, "second": {"ok": 2}})
    assert json.loads(path.read_text()) == {"device": "x", "first": {"ok": 1}}  # every check before, readable
