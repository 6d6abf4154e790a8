"""The one reader of the server's caps: secrets files first, then the environment; a broken file is
an error naming the file and the line, never a silent fallback to no caps."""

import pytest

from gemmlib.core.errors import InputError
from gemmlib.measure import safety

KEYS = ("GEMM_CLASSROOM", "GEMM_MAX_DIM", "GEMM_MAX_BYTES", "GEMM_TIME_LIMIT_S", "GEMM_MAX_CPU_GFLOP")


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    for k in KEYS:
        monkeypatch.delenv(k, raising=False)
    safety.set_process_limits(None)


def test_secrets_files_then_the_environment(tmp_path, monkeypatch):
    a = tmp_path / "a.toml"
    b = tmp_path / "b.toml"
    a.write_text('GEMM_CLASSROOM = true\nGEMM_MAX_DIM = 1024\nother = "ignored"\n[section]\nx = 1\n')
    b.write_text("GEMM_MAX_DIM = 900\n")  # a later file wins, as in Streamlit
    monkeypatch.setenv("GEMM_MAX_DIM", "16")
    monkeypatch.setenv("GEMM_TIME_LIMIT_S", "7")
    lim = safety.limits(files=[a, b, tmp_path / "missing.toml"])
    assert lim.classroom and lim.max_dim == 900  # the secrets beat the environment
    assert lim.time_limit_s == 7  # the environment fills what the secrets leave out
    assert lim.max_bytes == safety.CLASSROOM_LIMITS.max_bytes
    assert safety.limits(files=[]).max_dim == 16


@pytest.mark.parametrize("text, words", [
    ("GEMM_MAX_DIM = = 4\n", "line 1"),
    ("GEMM_CLASSROOM = 1\nGEMM_MAX_DIM 2048\n", "line 2"),
    ("GEMM_MAX_DIM = 'many'\n", "is not a finite number"),
    ("GEMM_MAX_DIM = 1e400\n", "is not a finite number"),
    ("GEMM_TIME_LIMIT_S = -3\n", "must be positive"),
    ("GEMM_MAX_BYTES = nan\n", "is not a finite number"),
])
def test_a_broken_secrets_file_is_an_error(tmp_path, text, words):
    f = tmp_path / "secrets.toml"
    f.write_text(text)
    with pytest.raises(InputError, match=words):
        safety.limits(files=[f])


def test_a_secrets_file_that_is_not_a_file(tmp_path):
    d = tmp_path / "secrets.toml"
    d.mkdir()
    with pytest.raises(InputError, match="not a regular file"):
        safety.limits(files=[d])


def test_infinite_environment_values_are_refused(monkeypatch):
    monkeypatch.setenv("GEMM_MAX_DIM", "inf")
    with pytest.raises(InputError, match="GEMM_MAX_DIM"):
        safety.limits(files=[])


def test_a_worker_uses_the_caps_its_server_resolved(monkeypatch):
    fixed = safety.Limits(max_dim=77, max_bytes=1000, time_limit_s=3, classroom=True)
    monkeypatch.setenv("GEMM_MAX_DIM", "5000")
    safety.set_process_limits(fixed)
    try:
        assert safety.limits() is fixed
    finally:
        safety.set_process_limits(None)
    assert safety.limits(files=[]).max_dim == 5000
