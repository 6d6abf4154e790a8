"""The one reader of the server's caps: secrets files first, then the environment; a broken file is
an error naming the file and the line, never a silent fallback to no caps."""

import os

import pytest

from gemmlib.core.errors import InputError
from gemmlib.measure import safety

KEYS = ("GEMM_CLASSROOM", "GEMM_MAX_DIM", "GEMM_MAX_BYTES", "GEMM_TIME_LIMIT_S", "GEMM_MAX_CPU_GFLOP", "GEMM_MAX_RANKS",
        "GEMM_POLICY_FILE")


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


# --------------------------------------------------------------------------- issue 26 item 5: the machine policy
@pytest.fixture
def policy_file(tmp_path, monkeypatch):
    """``write(text)``: a policy file given by GEMM_POLICY_FILE (this machine has no /etc/gemmlib/policy.toml:
    the machine's own policy is moved to a path that does not exist for the test)."""
    from gemmlib.core import policy

    monkeypatch.setattr(policy, "MACHINE_POLICY", tmp_path / "etc" / "policy.toml")
    folder = tmp_path / "pol"
    folder.mkdir(mode=0o755)
    path = folder / "policy.toml"
    monkeypatch.setenv("GEMM_POLICY_FILE", str(path))

    def write(text: str, mode: int = 0o644):
        path.write_text(text)
        os.chmod(path, mode)
        return path

    return write


def test_the_policy_caps_are_a_ceiling_that_secrets_and_environment_cannot_raise(policy_file, tmp_path, monkeypatch):
    policy_file("GEMM_CLASSROOM = true\nGEMM_MAX_DIM = 1000\n")
    secrets = tmp_path / "secrets.toml"
    secrets.write_text("GEMM_CLASSROOM = false\nGEMM_MAX_DIM = 3000\nGEMM_TIME_LIMIT_S = 900\n")
    monkeypatch.setenv("GEMM_MAX_BYTES", str(64 * 2**30))
    monkeypatch.setenv("GEMM_MAX_CPU_GFLOP", "1e6")
    monkeypatch.setenv("GEMM_MAX_RANKS", "64")
    lim = safety.limits(files=[secrets])
    assert lim.classroom and lim.max_dim == 1000  # the policy's own value
    c = safety.CLASSROOM_LIMITS  # the policy's base for what it leaves out
    assert (lim.time_limit_s, lim.max_bytes, lim.max_cpu_flops, lim.max_ranks) == \
        (c.time_limit_s, c.max_bytes, c.max_cpu_flops, c.max_ranks)
    monkeypatch.setenv("GEMM_MAX_DIM", "500")  # lowering is allowed
    secrets.write_text("GEMM_TIME_LIMIT_S = 5\n")
    lim = safety.limits(files=[secrets])
    assert lim.max_dim == 500 and lim.time_limit_s == 5


def test_without_a_classroom_key_the_policy_still_bounds_by_the_defaults(policy_file, monkeypatch):
    policy_file("GEMM_MAX_RANKS = 2\n")
    monkeypatch.setenv("GEMM_MAX_DIM", "99999")
    lim = safety.limits(files=[])
    assert lim.max_dim == safety.DEFAULT_LIMITS.max_dim and lim.max_ranks == 2 and not lim.classroom
    monkeypatch.delenv("GEMM_MAX_DIM")
    monkeypatch.setenv("GEMM_CLASSROOM", "1")  # a stricter environment still tightens
    assert safety.limits(files=[]).max_dim == safety.CLASSROOM_LIMITS.max_dim


def test_a_worker_never_runs_above_the_policy(policy_file):
    policy_file("GEMM_MAX_DIM = 300\n")
    safety.set_process_limits(safety.Limits(max_dim=5000, max_bytes=10**12, time_limit_s=900, classroom=False))
    try:
        assert safety.limits().max_dim == 300
    finally:
        safety.set_process_limits(None)


def test_the_machine_policy_cannot_be_replaced_by_the_variable(policy_file, tmp_path, monkeypatch):
    from gemmlib.core import policy

    policy_file("GEMM_MAX_DIM = 16384\n")  # a user's own loose file, named by GEMM_POLICY_FILE
    machine = tmp_path / "etc" / "policy.toml"
    machine.parent.mkdir(mode=0o755)
    machine.write_text("GEMM_MAX_DIM = 128\n")
    os.chmod(machine, 0o644)
    monkeypatch.setattr(policy, "ROOT_UIDS", (0, os.getuid()))  # the test's files stand in for root's
    assert safety.limits(files=[]).max_dim == 128
    os.chmod(machine, 0o666)  # a broken machine policy is an error, never a reason to take the user's file
    with pytest.raises(InputError, match="can be changed by others"):
        safety.limits(files=[])


@pytest.mark.parametrize("plant, words", [
    ("group writable", "can be changed by others"), ("open folder", "folder"), ("link", "not a regular file"),
    ("unknown key", "unknown key"), ("not TOML", "not valid TOML"), ("bad value", "is not a finite number"),
    ("read-only not a bool", "true or false"), ("another owner", "can be changed by others")])
def test_a_policy_that_cannot_be_trusted_is_an_error(policy_file, tmp_path, plant, words):
    p = policy_file("GEMM_MAX_DIM = 100\n")
    if plant == "group writable":
        os.chmod(p, 0o664)
    elif plant == "open folder":
        os.chmod(p.parent, 0o777)
    elif plant == "link":
        real = tmp_path / "real.toml"
        real.write_text("GEMM_MAX_DIM = 100\n")
        p.unlink()
        p.symlink_to(real)
    elif plant == "unknown key":
        policy_file("GEMM_MAX_DIMS = 100\n")
    elif plant == "not TOML":
        policy_file("GEMM_MAX_DIM = = 100\n")
    elif plant == "bad value":
        policy_file("GEMM_MAX_DIM = 'lots'\n")
    elif plant == "read-only not a bool":
        policy_file("GEMM_CEILINGS_READ_ONLY = 'yes'\n")
    else:
        if os.getuid() != 0:
            pytest.skip("giving a file to another user needs root")
        os.chown(p, 12345, 12345)
    with pytest.raises(InputError, match=words):
        safety.limits(files=[])


def test_the_policy_keys_are_the_caps_names():
    from gemmlib.core import policy

    assert set(policy.CAP_KEYS) == set(safety._ENV_KEYS.values())


def test_a_process_without_cuda_asks_nvml_for_the_free_gpu_memory(monkeypatch):
    """The server and the CLI check a GPU plan before its worker starts: asking torch.cuda.mem_get_info there would
    create a CUDA context (~0.5 GB of the GPU held for the process's life). Without CUDA started, NVML answers (the GPU
    CUDA_VISIBLE_DEVICES names first); torch only when NVML cannot."""
    import sys
    import types

    import torch

    asked = []
    fake = types.SimpleNamespace(
        nvmlInit=lambda: None, nvmlShutdown=lambda: None,
        nvmlDeviceGetHandleByIndex=lambda i: asked.append(i) or i,
        nvmlDeviceGetMemoryInfo=lambda h: types.SimpleNamespace(free=(h + 1) * 10 * 2**30))
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda *a: pytest.fail("a CUDA context was created"))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,1")
    assert safety.available_memory("cuda") == 40 * 2**30 and asked == [3]
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert safety.available_memory("cuda") == 10 * 2**30

    def no_driver():
        raise RuntimeError("NVML Shared Library Not Found")

    monkeypatch.setattr(fake, "nvmlInit", no_driver)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda *a: (7 * 2**30, 80 * 2**30))
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda *a: 0)
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda *a: 0)
    assert safety.available_memory("cuda") == 7 * 2**30  # no NVML: torch answers, as before
