"""Files on a shared server: only regular files are read (and only up to a cap), outputs are checked
before a run and written through a temporary file and a rename, no link is ever followed or
replaced, and the cache folder must be private."""

import os
import stat
import threading
import time

import pytest

from gemmlib.core import ceilings
from gemmlib.core.errors import InputError
from gemmlib.core.files import (
    check_output_dir,
    check_output_file,
    private_dir,
    read_regular,
    write_atomic,
)


@pytest.mark.parametrize("dev", ["/dev/zero", "/dev/urandom"])
def test_devices_are_refused_without_reading(dev):
    t0 = time.perf_counter()
    with pytest.raises(InputError, match="is a device, not a regular file"):
        read_regular(dev, 1000)
    assert time.perf_counter() - t0 < 1


def test_a_fifo_is_refused_without_hanging(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    done = []
    t = threading.Thread(target=lambda: done.append(pytest.raises(InputError, read_regular, fifo, 1000)))
    t.start()
    t.join(5)
    assert done, "read_regular blocked on a FIFO"
    assert "FIFO" in str(done[0].value)


def test_a_folder_and_a_file_above_the_cap(tmp_path):
    with pytest.raises(InputError, match="folder"):
        read_regular(tmp_path, 10)
    big = tmp_path / "big.json"
    big.write_bytes(b"x" * 101)
    with pytest.raises(InputError, match="above the limit of 100"):
        read_regular(big, 100)
    assert read_regular(big, 101) == b"x" * 101


def test_owner_only_reads_refuse_a_link(tmp_path):
    target = tmp_path / "real.json"
    target.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    with pytest.raises(InputError, match="symbolic link"):
        read_regular(link, 100, owner_only=True)
    assert read_regular(link, 100) == b"{}"  # an ordinary read (e.g. --config) may follow the user's own link


@pytest.mark.parametrize("target, words", [("/dev/full", "device or special file"), ("/dev/null", "device"),
                                           ("/proc/version", "cannot create files"),
                                           ("/proc/self/nonexistent", "cannot create files")])
def test_outputs_that_cannot_be_written_are_refused_before_a_run(target, words):
    with pytest.raises(InputError, match=words):
        check_output_file(target, "--csv")


def test_output_onto_a_folder_a_missing_folder_and_a_link(tmp_path):
    with pytest.raises(InputError, match="is a folder"):
        check_output_file(tmp_path, "--csv")
    with pytest.raises(InputError, match="cannot be used"):
        check_output_file(tmp_path / "missing" / "x.csv", "--csv")
    real = tmp_path / "real.csv"
    real.write_text("keep me")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    with pytest.raises(InputError, match="symbolic link"):
        check_output_file(link, "--csv")
    with pytest.raises(InputError, match="symbolic link"):
        write_atomic(link, "new")
    assert real.read_text() == "keep me" and link.is_symlink()  # neither followed nor replaced


def test_write_atomic_replaces_a_regular_file_and_leaves_no_temporary(tmp_path):
    p = tmp_path / "out.csv"
    p.write_text("old")
    write_atomic(p, "new")
    assert p.read_text() == "new"
    assert [x.name for x in tmp_path.iterdir()] == ["out.csv"]
    mode = stat.S_IMODE(os.stat(p).st_mode)
    assert mode == 0o666 & ~_umask()  # the permissions a plain open() would give
    write_atomic(p, "secret", mode=0o600)
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o600


def _umask() -> int:
    old = os.umask(0)
    os.umask(old)
    return old


def test_write_atomic_does_not_follow_a_planted_temporary_link(tmp_path, monkeypatch):
    # The temporary name is created exclusively: even a link planted under a guessed name is not written through.
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    for i in range(50):
        (tmp_path / f".out.csv.{i}.tmp").symlink_to(victim)
    write_atomic(tmp_path / "out.csv", "data")
    assert victim.read_text() == "untouched"
    assert (tmp_path / "out.csv").read_text() == "data"


def test_output_folder_checks(tmp_path):
    f = tmp_path / "file"
    f.write_text("")
    with pytest.raises(InputError, match="not a folder"):
        check_output_dir(f, "--out")
    assert check_output_dir(tmp_path / "new" / "deeper", "--out") == tmp_path / "new" / "deeper"
    with pytest.raises(InputError, match="cannot create files"):
        check_output_dir("/proc/sys", "--out")


# --------------------------------------------------------------------------- the private cache folder
def test_the_cache_folder_is_created_private(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path / "cache"))
    d = private_dir("queue")
    for p in (tmp_path / "cache", d):
        st = os.lstat(p)
        assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.getuid()


def test_the_default_folder_is_per_user(monkeypatch):
    monkeypatch.delenv("GEMM_CACHE_DIR", raising=False)
    from gemmlib.core.files import cache_root

    assert cache_root().name == f"gemmlib-{os.getuid()}"


@pytest.mark.parametrize("plant", ["open", "link", "file", "other_user"])
def test_a_planted_cache_folder_is_refused(tmp_path, monkeypatch, plant):
    cache = tmp_path / "cache"
    if plant == "open":
        cache.mkdir()
        os.chmod(cache, 0o777)
    elif plant == "link":
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        cache.symlink_to(tmp_path / "elsewhere")
    elif plant == "file":
        cache.write_text("")
    else:
        if os.getuid() != 0:
            pytest.skip("changing a folder's owner needs root")
        cache.mkdir(mode=0o700)
        os.chown(cache, 12345, 12345)
    monkeypatch.setenv("GEMM_CACHE_DIR", str(cache))
    with pytest.raises(InputError, match="cache folder"):
        private_dir()


def _ceiling(name="NVIDIA H200", flops=7.8e14):
    return ceilings.Ceilings("cuda", name, {"bf16": flops}, 4.3e12, gemm_size=8192, copy_bytes=2**30)


def test_planted_ceilings_are_not_shown(tmp_path, monkeypatch):
    """A ceilings.json another user planted in an open folder is never read, and a fake entry in our own
    file (1 EFLOP/s, markdown in its name) is dropped by validation."""
    ceilings.clear_ceilings()
    cache = tmp_path / "cache"
    cache.mkdir()
    os.chmod(cache, 0o777)
    (cache / "ceilings.json").write_text('{"cuda:FAKE": ' + _json(_ceiling("FAKE").to_dict()) + "}")
    monkeypatch.setenv("GEMM_CACHE_DIR", str(cache))
    assert ceilings.all_ceilings() == {}
    os.chmod(cache, 0o700)
    fake = _ceiling("![x](http://example.invalid/a.png)\n**EFLOP**", 1e18).to_dict()
    good = _ceiling().to_dict()
    (cache / "ceilings.json").write_text(_json({"a": fake, "b": good, "c": {"device": "tpu"}, "d": "x"}))
    assert list(ceilings.all_ceilings()) == ["cuda:NVIDIA H200"]


def _json(x) -> str:
    import json

    return json.dumps(x)


def test_saving_ceilings_never_follows_a_planted_link(tmp_path, monkeypatch):
    ceilings.clear_ceilings()
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    victim = tmp_path / "victim.txt"
    victim.write_text("do not touch")
    (cache / "ceilings.json").symlink_to(victim)
    monkeypatch.setenv("GEMM_CACHE_DIR", str(cache))
    assert ceilings.save_ceilings(_ceiling()) is None  # refused and logged; kept in memory
    assert victim.read_text() == "do not touch"
    assert "cuda:NVIDIA H200" in ceilings.all_ceilings()
    (cache / "ceilings.json").unlink()
    ceilings.clear_ceilings()
    p = ceilings.save_ceilings(_ceiling())
    assert p is not None and stat.S_IMODE(os.stat(p).st_mode) == 0o600
    ceilings.clear_ceilings()
    assert list(ceilings.all_ceilings()) == ["cuda:NVIDIA H200"]  # read back from the file
