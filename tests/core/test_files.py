"""Files on a shared server: only regular files are read (and only up to a cap), outputs are checked
before a run and written through a temporary file and a rename, no link is ever followed or
replaced, and the cache folder must be private."""

import os
import stat
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from gemmlib.core import ceilings
from gemmlib.core.errors import InputError
from gemmlib.core.files import (
    check_output_dir,
    check_output_file,
    ensure_dir,
    move_into_place,
    private_dir,
    read_regular,
    temp_beside,
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


def test_the_default_folder_is_the_users_own_cache_folder(tmp_path, monkeypatch):
    """Without GEMM_CACHE_DIR: the user's cache folder (XDG on Linux), never the shared temp folder, where
    another user could take the name first."""
    import platformdirs

    from gemmlib.core.files import cache_root, private_dir

    monkeypatch.delenv("GEMM_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == Path(platformdirs.user_cache_dir("gemmlib", appauthor=False))
    if sys.platform.startswith("linux"):
        assert cache_root() == tmp_path / "xdg" / "gemmlib"
        assert private_dir() == tmp_path / "xdg" / "gemmlib"
        assert stat.S_IMODE(os.lstat(tmp_path / "xdg" / "gemmlib").st_mode) == 0o700
    assert not str(cache_root()).startswith(tempfile.gettempdir() + os.sep + "gemmlib")


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


# --------------------------------------------------------------------------- the one writer: no link followed
def test_a_name_too_long_is_an_input_error_that_quotes_it_cut(tmp_path):
    long = tmp_path / ("a" * 300)
    for check in (check_output_dir, check_output_file):
        with pytest.raises(InputError, match="too long") as e:
            check(long, "--out")
        assert len(str(e.value)) < 200 and "…" in str(e.value)
    with pytest.raises(InputError, match="too long"):
        write_atomic(long / "x.json", "{}")


def test_an_empty_output_name_is_not_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for check, words in ((check_output_dir, "needs a folder name"), (check_output_file, "needs a file name"),
                         (ensure_dir, "needs a folder name"), (lambda p, f: write_atomic(p, "x", flag=f),
                                                               "needs a file name")):
        for empty in ("", "  "):
            with pytest.raises(InputError, match=words):
                check(empty, "--out")
    assert list(tmp_path.iterdir()) == []


def test_an_output_folder_that_is_a_link_is_refused(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(InputError, match="symbolic link"):
        check_output_dir(link, "--out")
    with pytest.raises(InputError, match="symbolic link"):
        ensure_dir(link, "--out")
    with pytest.raises(InputError, match="symbolic link"):
        write_atomic(link / "report.md", "x", under=link)
    assert list(real.iterdir()) == []
    write_atomic(link / "plain.txt", "x")  # without ``under`` the folders are the user's to choose
    assert (real / "plain.txt").read_text() == "x"


def test_a_subfolder_link_under_the_output_folder_is_refused(tmp_path):
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "charts").symlink_to(elsewhere)
    with pytest.raises(InputError, match="symbolic link"):
        ensure_dir(out / "charts", "the charts folder", under=out)
    with pytest.raises(InputError, match="symbolic link"):
        write_atomic(out / "charts" / "a.png", b"png", under=out)
    assert list(elsewhere.iterdir()) == []
    (out / "charts").unlink()
    assert ensure_dir(out / "charts" / "deeper", "the charts folder", under=out).is_dir()
    write_atomic(out / "charts" / "deeper" / "a.png", b"png", under=out)
    assert (out / "charts" / "deeper" / "a.png").read_bytes() == b"png"
    assert sorted(p.name for p in (out / "charts" / "deeper").iterdir()) == ["a.png"]  # no temporary left


def test_a_file_link_in_the_output_folder_is_neither_followed_nor_replaced(tmp_path):
    out = tmp_path / "out"
    (out / "charts").mkdir(parents=True)
    victim = tmp_path / "victim.png"
    victim.write_bytes(b"keep")
    (out / "charts" / "devices_ceilings.png").symlink_to(victim)
    with pytest.raises(InputError, match="symbolic link"):
        write_atomic(out / "charts" / "devices_ceilings.png", b"new", under=out)
    assert victim.read_bytes() == b"keep" and (out / "charts" / "devices_ceilings.png").is_symlink()
    assert sorted(p.name for p in (out / "charts").iterdir()) == ["devices_ceilings.png"]


def test_temp_beside_and_move_into_place(tmp_path):
    target = tmp_path / "t.json"
    tmp = temp_beside(target, "--trace")
    assert tmp.parent == tmp_path and tmp.exists() and not target.exists()
    tmp.write_text("{}")  # what torch's trace export does with the name
    move_into_place(tmp, target, "--trace")
    assert target.read_text() == "{}" and sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]


# Every place outside core/files.py that could create or change a file, with why it may. A new one
# fails this test: write through ``gemmlib.core.files.write_atomic`` (charts: ``gemmlib.charts.chart_bytes``).
WRITE_PATTERNS = {
    "open for writing": r"\bopen\([^)]*['\"][wax]b?\+?['\"]|\bopen\(.*\bmode\s*=\s*['\"][wax]",
    ".save(": r"\.save\(",
    "write_text/write_bytes": r"\.write_(text|bytes)\(",
    "os.open": r"\bos\.open\(",
    "rename or link": r"\bos\.(replace|rename|renames|symlink|link)\(|\.(symlink_to|hardlink_to|touch)\(",
    "shutil": r"\bshutil\.(copy\w*|move)\(",
    "temporary files": r"\b(mkstemp|mkdtemp|NamedTemporaryFile|TemporaryDirectory|SpooledTemporaryFile)\(",
    "exporters": r"\.(export_chrome_trace|export_stacks|to_parquet|savefig)\(|\b(np|numpy|torch)\.save\(",
    "json.dump": r"\bjson\.dump\(",
}
ALLOWED_WRITES = {  # (file, pattern): (count, why it is not the one writer)
    ("gemmlib/measure/runqueue.py", "os.open"): (5, "the queue's lock and ticket files are flock()ed descriptors "
                                                    "(runqueue._open_lock: O_NOFOLLOW, regular files with one name "
                                                    "only, created O_EXCL; tickets O_EXCL; reads with O_NOFOLLOW)"),
    ("gemmlib/measure/triton_gemm.py", "temporary files"): (1, "a fresh private folder for ptxas"),
    ("gemmlib/measure/triton_gemm.py", "open for writing"): (1, "the PTX file inside that fresh folder"),
    ("gemmlib/measure/profiler.py", "exporters"): (1, "torch writes the trace to the file temp_beside made "
                                                      "(cli/profile.py), or into the page's own temporary folder"),
    ("gemmlib/measure/launch.py", "temporary files"): (1, "a fresh 0700 folder for torch.distributed's FileStore"),
    ("gemmlib/measure/worker.py", "temporary files"): (1, "a benchmark worker's own 0700 temp folder for its run, "
                                                          "removed when it ends or is reaped"),
    ("pages/10_Profiler.py", "temporary files"): (1, "the profiler page's own temporary folder for the trace"),
    ("gemmlib/cli/profile.py", "json.dump"): (1, "to sys.stdout"),
    ("gemmlib/cli/__init__.py", "os.open"): (1, "os.devnull, put under stdout's descriptor once its reader has gone "
                                                "(`| head`), so that Python's flush at exit writes nowhere"),
}


def test_every_write_goes_through_the_one_writer():
    import re
    from collections import Counter
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    files = [p for d in ("gemmlib", "pages", "ui") for p in sorted((root / d).rglob("*.py"))]
    files += [p for p in (root / "app.py", root / "ui.py") if p.exists()]
    found, where = Counter(), {}
    for f in files:
        rel = f.relative_to(root).as_posix()
        if rel == "gemmlib/core/files.py":
            continue
        for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            for name, pattern in WRITE_PATTERNS.items():
                if re.search(pattern, code):
                    found[rel, name] += 1
                    where.setdefault((rel, name), []).append(f"{rel}:{i}: {line.strip()}")
    unexpected = {k: where[k] for k, n in found.items() if n != ALLOWED_WRITES.get(k, (0, ""))[0]}
    assert not unexpected, unexpected
    assert set(found) == set(ALLOWED_WRITES), set(ALLOWED_WRITES) - set(found)  # the list stays exact
