"""Files on a shared server, read and written without surprises.

* ``private_dir()``: the server's own cache folder ($GEMM_CACHE_DIR, else ``<tmp>/gemmlib-<uid>``),
  created with mode 0700; one that is a link, not a folder, owned by someone else or open to
  other users is refused (another user could plant files or links in it).
* ``read_regular(path, max_bytes)``: open only a regular file (never a FIFO, a device such as
  /dev/zero, or a folder), without blocking, and read at most ``max_bytes``.
* ``check_output_file(path)`` / ``check_output_dir(path)``: before a long run, make sure its
  result can be written there: the target, if it exists, is a regular file (not a link, a
  folder or a device such as /dev/full), and a file can be created beside it (not /proc, not a
  read-only disk).
* ``write_atomic(path, data)``: write a temporary file beside the target (created exclusively,
  so no planted link is followed), then rename it over the target, which is itself never a link
  or anything but a regular file. A reader sees the old file or the new one, never half of one.

Every refusal is an InputError with a sentence that says what to do.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path

from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_, Msg


# --------------------------------------------------------------------------- the private folder
def cache_root() -> Path:
    """Where the private folder is: $GEMM_CACHE_DIR, else ``<system temp>/gemmlib-<uid>``."""
    env = os.environ.get("GEMM_CACHE_DIR")
    if env:
        return Path(env)
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"gemmlib-{uid}"


def _check_private(path: Path, st: os.stat_result) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise InputError(N_("the cache folder {path} is a symbolic link; remove it (or set GEMM_CACHE_DIR to a "
                            "private folder)"), path=path)
    if not stat.S_ISDIR(st.st_mode):
        raise InputError(N_("the cache folder {path} exists and is not a folder; remove it or set GEMM_CACHE_DIR"),
                         path=path)
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise InputError(N_("the cache folder {path} belongs to another user (uid {uid}); remove it or "
                            "set GEMM_CACHE_DIR to a folder of your own"), path=path, uid=st.st_uid)
    if st.st_mode & 0o077:
        raise InputError(N_("the cache folder {path} is open to other users (mode {mode:o}); "
                            "run chmod 700 {path} or set GEMM_CACHE_DIR"), path=path, mode=stat.S_IMODE(st.st_mode))


def private_dir(sub: str | None = None) -> Path:
    """The server's private cache folder (or its subfolder ``sub``), created with mode 0700.

    InputError when it exists but is a link, not a folder, not ours, or open to other users.
    """
    root = cache_root()
    dirs = [root] + ([root / sub] if sub else [])
    for d in dirs:
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            pass
        except FileNotFoundError:
            os.makedirs(d.parent, exist_ok=True)
            try:
                os.mkdir(d, 0o700)
            except FileExistsError:
                pass
        except OSError as e:
            raise InputError(N_("cannot create the cache folder {path}: {why}; set GEMM_CACHE_DIR"), path=d,
                             why=e.strerror) from None
        _check_private(d, os.lstat(d))
    return dirs[-1]


# --------------------------------------------------------------------------- reading
def read_regular(path: str | os.PathLike, max_bytes: int, *, what: str = "the file",
                 owner_only: bool = False) -> bytes:
    """The bytes of a regular file, at most ``max_bytes`` (InputError beyond).

    The file is opened without blocking (a FIFO does not hang), checked to be a regular file
    (not /dev/zero, /dev/urandom, a FIFO or a folder), and read only up to the cap.
    ``owner_only``: also refuse a link and a file that is not this user's (for the cache).
    """
    p = os.fspath(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if owner_only:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(p, flags)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise InputError(N_("{what} is a symbolic link; refusing to follow it"), what=what) from None
        raise InputError(N_("cannot read {what}: {why}"), what=what, why=e.strerror) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = (N_("a folder") if stat.S_ISDIR(st.st_mode) else N_("a FIFO") if stat.S_ISFIFO(st.st_mode)
                    else N_("a device") if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else N_("not a file"))
            raise InputError(N_("{what} is {kind}, not a regular file"), what=what, kind=Msg(kind))
        if owner_only and hasattr(os, "getuid") and st.st_uid != os.getuid():
            raise InputError(N_("{what} belongs to another user; refusing to read it"), what=what)
        if st.st_size > max_bytes:
            raise InputError(N_("{what} is {size:,} bytes, above the limit of {limit:,}"), what=what, size=st.st_size,
                             limit=max_bytes)
        os.set_blocking(fd, True)
        chunks, got = [], 0
        while got <= max_bytes:
            b = os.read(fd, min(1 << 20, max_bytes + 1 - got))
            if not b:
                break
            chunks.append(b)
            got += len(b)
        if got > max_bytes:  # grew while we read it (or /proc-like files that lie about their size)
            raise InputError(N_("{what} is larger than the limit of {limit:,} bytes"), what=what, limit=max_bytes)
        return b"".join(chunks)
    except OSError as e:
        raise InputError(N_("cannot read {what}: {why}"), what=what, why=e.strerror) from None
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- writing
def _umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def _refuse_non_regular(p: Path, flag: str) -> None:
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        return
    except OSError as e:
        raise InputError(N_("{flag} {path}: {why}"), flag=flag, path=p, why=e.strerror) from None
    if stat.S_ISLNK(st.st_mode):
        raise InputError(N_("{flag} {path} is a symbolic link; refusing to replace it — give the real path"),
                         flag=flag, path=p)
    if stat.S_ISDIR(st.st_mode):
        raise InputError(N_("{flag} {path} is a folder; give a file name"), flag=flag, path=p)
    if not stat.S_ISREG(st.st_mode):
        raise InputError(N_("{flag} {path} is a device or special file, not a regular file; give a file name"),
                         flag=flag, path=p)


def _probe_dir(d: Path, flag: str, target: Path) -> None:
    """Create (and remove) a temporary file in ``d``: proves a result can be written there."""
    try:
        st = os.stat(d)
    except OSError as e:
        raise InputError(N_("{flag} {path}: the folder {folder} cannot be used ({why})"), flag=flag, path=target,
                         folder=d, why=e.strerror) from None
    if not stat.S_ISDIR(st.st_mode):
        raise InputError(N_("{flag} {path}: {folder} is not a folder"), flag=flag, path=target, folder=d)
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".gemmlib-probe-", suffix=".tmp")
    except OSError as e:
        raise InputError(N_("{flag} {path}: cannot create files in {folder} ({why})"), flag=flag, path=target,
                         folder=d, why=e.strerror) from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def check_output_file(path: str | os.PathLike, flag: str = "the output") -> Path:
    """Refuse (InputError) an output file that cannot be written safely; return it as a Path.

    Call it before a long run: the target must not be a link, a folder or a device, and its
    folder must accept a new file.
    """
    p = Path(os.fspath(path))
    if not str(p).strip():
        raise InputError(N_("{flag} needs a file name"), flag=flag)
    _refuse_non_regular(p, flag)
    _probe_dir(p.parent if str(p.parent) else Path("."), flag, p)
    return p


def check_output_dir(path: str | os.PathLike, flag: str = "the output folder") -> Path:
    """Refuse (InputError) an output folder that is not a folder or cannot take new files."""
    p = Path(os.fspath(path))
    if not str(p).strip():
        raise InputError(N_("{flag} needs a folder name"), flag=flag)
    if p.exists() or p.is_symlink():
        try:
            st = os.stat(p)
        except OSError as e:
            raise InputError(N_("{flag} {path}: {why}"), flag=flag, path=p, why=e.strerror) from None
        if not stat.S_ISDIR(st.st_mode):
            raise InputError(N_("{flag} {path} exists and is not a folder"), flag=flag, path=p)
        _probe_dir(p, flag, p)
        return p
    parent = p.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    _probe_dir(parent, flag, p)
    return p


def write_atomic(path: str | os.PathLike, data: bytes | str, *, mode: int | None = None,
                 flag: str = "the output") -> Path:
    """Write ``data`` to ``path`` through a temporary file beside it and a rename.

    The temporary file is created exclusively (O_EXCL: a planted link is never followed); the
    target is never a link, a folder or a device (InputError). ``mode`` defaults to 0666 minus
    the umask, as a plain ``open()`` would give.
    """
    p = Path(os.fspath(path))
    if isinstance(data, str):
        data = data.encode("utf-8")
    _refuse_non_regular(p, flag)
    fd, tmp = _mkstemp_beside(p, flag)
    try:
        try:
            os.fchmod(fd, (0o666 & ~_umask()) if mode is None else mode)
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            os.fsync(fd)
        finally:
            os.close(fd)
        _refuse_non_regular(p, flag)  # checked again just before the rename
        os.replace(tmp, p)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise InputError(N_("cannot write {flag} {path}: {why}"), flag=flag, path=p, why=e.strerror) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return p


def _mkstemp_beside(p: Path, flag: str) -> tuple[int, str]:
    """(fd, name) of a new temporary file in ``p``'s folder, created exclusively (O_EXCL)."""
    try:
        return tempfile.mkstemp(dir=p.parent if str(p.parent) else Path("."), prefix=f".{p.name}.", suffix=".tmp")
    except OSError as e:
        raise InputError(N_("cannot write {flag} {path}: {why}"), flag=flag, path=p, why=e.strerror) from None


def temp_beside(path: str | os.PathLike, flag: str = "the output") -> Path:
    """A new, empty temporary file beside ``path`` (created exclusively, normal permissions) for a
    writer that needs a file name; finish with :func:`move_into_place`."""
    p = Path(os.fspath(path))
    fd, tmp = _mkstemp_beside(p, flag)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
    finally:
        os.close(fd)
    return Path(tmp)


def move_into_place(tmp: str | os.PathLike, path: str | os.PathLike, flag: str = "the output") -> Path:
    """Rename a finished temporary file (created beside ``path``) over ``path``, with the same
    refusals as :func:`write_atomic`."""
    p = Path(os.fspath(path))
    _refuse_non_regular(p, flag)
    try:
        os.replace(os.fspath(tmp), p)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(os.fspath(tmp))
        raise InputError(N_("cannot write {flag} {path}: {why}"), flag=flag, path=p, why=e.strerror) from None
    return p
