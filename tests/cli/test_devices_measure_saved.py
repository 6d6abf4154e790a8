"""`devices --measure --json` says whether the measurement was kept in `ceilings_file`.

Before: under a machine policy with GEMM_CEILINGS_READ_ONLY (README, "Serving the app to a classroom"), or with a
figure above the device's bound, the ceilings were not written, a warning said so on stderr, and the JSON still
named `ceilings_file` as if they were in it: a script reading the JSON could not tell. Now `saved` says it."""

from __future__ import annotations

import json

import pytest

from gemmlib.cli import devices as cli_devices
from gemmlib.core import ceilings


@pytest.fixture
def measured(monkeypatch):
    """The measurement itself faked (its figures below this CPU's bound): the test is about keeping it."""
    monkeypatch.setattr(cli_devices, "run_job", lambda spec, cfg, quiet=False: ceilings.Ceilings(
        "cpu", "Test CPU", {"fp32": 1e10}, 1e9, gemm_size=512))


def test_a_kept_measurement_says_saved(measured, run_cli):
    rc, out, err = run_cli(["devices", "--light", "--json"])  # no --measure: no such key
    assert rc == 0 and "saved" not in json.loads(out)
    rc, out, err = run_cli(["devices", "--measure", "--quick", "--json"])
    doc = json.loads(out)
    assert rc == 0 and doc["saved"] is True and "cpu:Test CPU" in json.loads(
        open(doc["ceilings_file"], encoding="utf-8").read())


def test_a_read_only_policy_says_not_saved(measured, run_cli, tmp_path, monkeypatch):
    folder = tmp_path / "policy"
    folder.mkdir(mode=0o755)
    (folder / "policy.toml").write_text(f'GEMM_CEILINGS_READ_ONLY = true\nGEMM_QUEUE_DIR = "{tmp_path / "q"}"\n',
                                        encoding="utf-8")
    (folder / "policy.toml").chmod(0o644)
    folder.chmod(0o755)
    monkeypatch.setenv("GEMM_POLICY_FILE", str(folder / "policy.toml"))
    rc, out, err = run_cli(["devices", "--measure", "--quick", "--json"])
    doc = json.loads(out)
    assert rc == 0 and doc["saved"] is False
    assert "cpu:Test CPU" in doc["measured"]  # shown to whoever ran it
    assert not ceilings.ceilings_path().exists()
