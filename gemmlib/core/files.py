"""Files on a shared server, read and written without surprises.

* ``private_dir()``: the server's own cache folder ($GEMM_CACHE_DIR, else ``~/.cache/gemmlib``),
  created with mode 0700; one that is a link, not a folder, owned by someone else or open to
  other users is refused with a ``ServerSetupError`` (another user could plant files or links in
  it; a page shows its visitors an error id, the server log the path).
* ``read_regular(path, max_bytes)``: open only a regular file (never a FIFO, a device such as
  /dev/zero, or a folder), without blocking, and read at most ``max_bytes``.
* ``check_output_file(path)`` / ``check_output_dir(path)``: before a long run, make sure its
  result can be written there: the target, if it exists, is a regular file or a real folder
  (not a link, a folder where a file is meant, or a device such as /dev/full), and a file can be
  created there (not /proc, not a read-only disk).
* ``write_atomic(path, data)``: **the one writer** of every file the project writes (results,
  reports, charts, the cache's JSON files). It writes a temporary file beside the target
  (created exclusively, never through a link), then renames it over the target, which is itself
  never a link or anything but a regular file; a reader sees the old file or the new one, never
  half of one. Everything happens relative to the folder's open descriptor, so a link planted
  at a path after it was checked is not followed either. With ``under=FOLDER`` neither FOLDER
  nor any folder between it and the file may be a link (a report's ``--out`` and its
  ``charts/``). ``ensure_dir(path, under=...)`` creates folders by the same rule.

Every refusal is an InputError with a sentence that says what to do; a path or a value quoted in
it is cut to a readable length (``cut``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
import tempfile
from pathlib import Path

from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_, Msg, Text

# --------------------------------------------------------------------------- messages
CUT = 80  # characters of a path or a value quoted in a message


def cut(text: object, limit: int = CUT) -> str:
    """``text`` as a message quotes it: at most ``limit`` characters, its start and its end (a path's
    file name) kept, "…" marking the cut."""
    s = str(text)
    if len(s) <= limit:
        return s
    tail = (limit - 1) // 3
    return s[: limit - 1 - tail] + "…" + (s[-tail:] if tail else "")


# json's reasons for a text that is not JSON (json.JSONDecodeError.msg), translated where a reader sees them
JSON_REASONS = frozenset((
    N_("Expecting value"), N_("Expecting property name enclosed in double quotes"), N_("Expecting ':' delimiter"),
    N_("Expecting ',' delimiter"), N_("Unterminated string starting at"), N_("Invalid control character at"),
    N_("Invalid \\escape"), N_("Invalid \\uXXXX escape"), N_("Extra data"),
    N_("Illegal trailing comma before end of object"), N_("Illegal trailing comma before end of array")))


def not_json(e: ValueError, file: object) -> InputError:
    """The one-line error for a file (``file``: its name, or a Text such as "the file") that json could not read:
    json's reason, where (line, column), and what to correct. Every reader of a user's JSON file says it so."""
    if not hasattr(e, "lineno"):  # a ValueError that is not json's own
        return InputError(N_("{file} is not valid JSON ({error})"), file=file, error=str(e).split(";")[0])
    msg = getattr(e, "msg", str(e))
    return InputError(N_("{file} is not valid JSON: {msg} at line {lineno}, column {colno}; correct the text there "
                         "(keys and texts in double quotes, no comments, no comma before a closing bracket) and load "
                         "it again"), file=file, msg=Text(msg) if msg in JSON_REASONS else msg, lineno=e.lineno,
                      colno=e.colno)


LINE = 1000  # the most characters of the one line an error prints (a safety net: values are cut to CUT;
# our own lists, such as the supported families, must still fit)


def one_line(message: object) -> str:
    """``message`` as the one line an error prints (the command line's): whitespace folded, every
    quoted value and every long word cut to CUT characters with "…", the whole at most LINE."""
    # a quoted value as repr() and argparse write it: 'value', after a space, "(", "=" or ":"
    text = re.sub(rf"(?:(?<=^)|(?<=[\s(=:]))'([^']{{{CUT + 1},}})'(?=$|[\s;,.:)])",
                  lambda m: "'" + cut(m.group(1)) + "'", str(message))
    text = re.sub(rf"\S{{{CUT + 3},}}", lambda m: cut(m.group(0), CUT + 2), text)
    return cut(" ".join(text.split()), LINE)


class ServerSetupError(InputError):
    """The server's own setup is wrong (its cache folder): for its administrator, not its visitors.

    The command line prints it like any InputError (its user is the administrator); a page logs
    it with the path and shows the visitor only an error id (``ui.guard``)."""


# --------------------------------------------------------------------------- the private folder
def cache_root() -> Path:
    """Where the private folder is: $GEMM_CACHE_DIR, else the user's own cache folder for gemmlib
    (platformdirs: ``$XDG_CACHE_HOME/gemmlib`` or ``~/.cache/gemmlib`` on Linux, ``~/Library/Caches/gemmlib``
    on macOS). Inside the home, not the shared temp folder, where another user could create the name first
    (the check below would then refuse it: a denial of service), and kept across reboots."""
    env = os.environ.get("GEMM_CACHE_DIR")
    if env:
        return Path(env)
    import platformdirs  # only when no folder is named (every test names one)

    return Path(platformdirs.user_cache_dir("gemmlib", appauthor=False))


def _check_private(path: Path, st: os.stat_result) -> None:
    shown = cut(path)
    if stat.S_ISLNK(st.st_mode):
        raise ServerSetupError(N_("the cache folder {path} is a symbolic link; remove it (or set GEMM_CACHE_DIR to a "
                                  "private folder)"), path=shown)
    if not stat.S_ISDIR(st.st_mode):
        raise ServerSetupError(N_("the cache folder {path} exists and is not a folder; remove it or set "
                                  "GEMM_CACHE_DIR"), path=shown)
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise ServerSetupError(N_("the cache folder {path} belongs to another user (uid {uid}); remove it or "
                                  "set GEMM_CACHE_DIR to a folder of your own"), path=shown, uid=st.st_uid)
    if st.st_mode & 0o077:
        raise ServerSetupError(N_("the cache folder {path} is open to other users (mode {mode:o}); "
                                  "run chmod 700 {path} or set GEMM_CACHE_DIR"), path=shown,
                               mode=stat.S_IMODE(st.st_mode))


def private_dir(sub: str | None = None) -> Path:
    """The server's private cache folder (or its subfolder ``sub``), created with mode 0700.

    ServerSetupError (an InputError) when it cannot be created, or exists but is a link, not a
    folder, not ours, or open to other users.
    """
    root = cache_root()
    dirs = [root] + ([root / sub] if sub else [])
    for d in dirs:
        try:
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
            st = os.lstat(d)
        except OSError as e:
            raise ServerSetupError(N_("cannot create the cache folder {path}: {why}; set GEMM_CACHE_DIR"),
                                   path=cut(d), why=e.strerror or str(e)) from None
        _check_private(d, st)
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
    what = cut(what, 2 * CUT)  # a name quoted in it stays readable
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
_O_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def _why(e: OSError) -> str:
    return e.strerror or str(e)


def _refusal(st: os.stat_result, flag: str, p: Path) -> InputError | None:
    """Why an existing ``p`` may not be replaced by a file (None: it is a regular file)."""
    if stat.S_ISLNK(st.st_mode):
        return InputError(N_("{flag} {path} is a symbolic link; refusing to replace it — give the real path"),
                          flag=flag, path=cut(p))
    if stat.S_ISDIR(st.st_mode):
        return InputError(N_("{flag} {path} is a folder; give a file name"), flag=flag, path=cut(p))
    if not stat.S_ISREG(st.st_mode):
        return InputError(N_("{flag} {path} is a device or special file, not a regular file; give a file name"),
                          flag=flag, path=cut(p))
    return None


def _refuse_non_regular(p: Path, flag: str, dir_fd: int | None = None) -> None:
    try:
        st = os.stat(p.name if dir_fd is not None else p, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    except OSError as e:
        raise InputError(N_("{flag} {path}: {why}"), flag=flag, path=cut(p), why=_why(e)) from None
    refusal = _refusal(st, flag, p)
    if refusal is not None:
        raise refusal


def _probe_dir(d: Path, flag: str, target: Path) -> None:
    """Create (and remove) a temporary file in ``d``: proves a result can be written there."""
    try:
        st = os.stat(d)
    except OSError as e:
        raise InputError(N_("{flag} {path}: the folder {folder} cannot be used ({why})"), flag=flag, path=cut(target),
                         folder=cut(d), why=_why(e)) from None
    if not stat.S_ISDIR(st.st_mode):
        raise InputError(N_("{flag} {path}: {folder} is not a folder"), flag=flag, path=cut(target), folder=cut(d))
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".gemmlib-probe-", suffix=".tmp")
    except OSError as e:
        raise InputError(N_("{flag} {path}: cannot create files in {folder} ({why})"), flag=flag, path=cut(target),
                         folder=cut(d), why=_why(e)) from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def check_output_file(path: str | os.PathLike, flag: str = "the output") -> Path:
    """Refuse (InputError) an output file that cannot be written safely; return it as a Path.

    Call it before a long run: the target must not be a link, a folder or a device, and its
    folder must accept a new file.
    """
    raw = os.fspath(path)
    if not str(raw).strip():
        raise InputError(N_("{flag} needs a file name"), flag=flag)
    p = Path(raw)
    _refuse_non_regular(p, flag)
    _probe_dir(p.parent if str(p.parent) else Path("."), flag, p)
    return p


def check_output_dir(path: str | os.PathLike, flag: str = "the output folder") -> Path:
    """Refuse (InputError) an output folder that is a link, not a folder, or cannot take new files.

    An empty name is refused (it is not "the current folder"); a missing folder is fine when the
    nearest folder above it accepts new files (it is created by :func:`ensure_dir`).
    """
    raw = os.fspath(path)
    if not str(raw).strip():
        raise InputError(N_("{flag} needs a folder name"), flag=flag)
    p = Path(raw)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise InputError(N_("{flag} {path}: {why}"), flag=flag, path=cut(p), why=_why(e)) from None
    if st is not None:
        if stat.S_ISLNK(st.st_mode):
            raise InputError(N_("{flag} {path} is a symbolic link; give the real folder"), flag=flag, path=cut(p))
        if not stat.S_ISDIR(st.st_mode):
            raise InputError(N_("{flag} {path} exists and is not a folder"), flag=flag, path=cut(p))
        _probe_dir(p, flag, p)
        return p
    parent = p.parent
    try:
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
    except OSError as e:
        raise InputError(N_("{flag} {path}: {why}"), flag=flag, path=cut(p), why=_why(e)) from None
    _probe_dir(parent, flag, p)
    return p


def _open_nofollow(name: str | Path, dir_fd: int | None, flag: str, shown: Path) -> int:
    """An open descriptor of the folder ``name`` (relative to ``dir_fd``), never through a link."""
    try:
        return os.open(name, _O_DIR | _O_NOFOLLOW, dir_fd=dir_fd)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            try:
                is_link = stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
            except OSError:
                is_link = e.errno == errno.ELOOP
            if is_link:
                raise InputError(N_("{flag} {path} is a symbolic link; refusing to follow it — give the real folder"),
                                 flag=flag, path=cut(shown)) from None
            raise InputError(N_("{flag} {path} is not a folder"), flag=flag, path=cut(shown)) from None
        raise InputError(N_("{flag} {path}: {why}"), flag=flag, path=cut(shown), why=_why(e)) from None


def _open_folder(folder: Path, flag: str, *, under: Path | None) -> int:
    """An open descriptor of ``folder``. With ``under``: ``under`` and every folder below it down to
    ``folder`` are opened one by one, none through a link (the folders above ``under`` are the
    user's to choose)."""
    if under is None:
        try:
            return os.open(folder, _O_DIR)
        except OSError as e:
            raise InputError(N_("{flag} {path}: {why}"), flag=flag, path=cut(folder), why=_why(e)) from None
    rel = folder.relative_to(under)  # ValueError: a caller's mistake, not bad input
    fd = _open_nofollow(under, None, flag, under)
    shown = under
    try:
        for part in rel.parts:
            shown = shown / part
            nfd = _open_nofollow(part, fd, flag, shown)
            os.close(fd)
            fd = nfd
    except BaseException:
        os.close(fd)
        raise
    return fd


def ensure_dir(path: str | os.PathLike, flag: str = "the output folder", *, under: str | os.PathLike | None = None
               ) -> Path:
    """Create the folder ``path`` if missing and make sure it is a real folder, not a link.

    Without ``under`` the folders above ``path`` are created as the user named them; with it,
    ``under`` and every folder between it and ``path`` must be real folders (none a link), and
    missing ones are created inside the folder already opened, never through a link.
    """
    raw = os.fspath(path)
    if not str(raw).strip():
        raise InputError(N_("{flag} needs a folder name"), flag=flag)
    p = Path(raw)
    if under is None:
        try:
            if str(p.parent) not in ("", "."):
                os.makedirs(p.parent, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                os.mkdir(p)
        except OSError as e:
            raise InputError(N_("cannot create {flag} {path}: {why}"), flag=flag, path=cut(p), why=_why(e)) from None
        os.close(_open_nofollow(p, None, flag, p))
        return p
    top = Path(os.fspath(under))
    fd = _open_nofollow(top, None, flag, top)
    shown = top
    try:
        for part in p.relative_to(top).parts:
            shown = shown / part
            try:
                os.mkdir(part, dir_fd=fd)
            except FileExistsError:
                pass
            except OSError as e:
                raise InputError(N_("cannot create {flag} {path}: {why}"), flag=flag, path=cut(shown),
                                 why=_why(e)) from None
            nfd = _open_nofollow(part, fd, flag, shown)
            os.close(fd)
            fd = nfd
    finally:
        os.close(fd)
    return p


def _create_temp(dir_fd: int, p: Path, flag: str) -> str:
    """The name of a new, empty file created exclusively (O_EXCL | O_NOFOLLOW) in the folder
    ``dir_fd``, for the target ``p``; mode 0600 until the writer sets the final one."""
    stem = p.name[:40]
    for _ in range(100):
        name = f".{stem}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
                         0o600, dir_fd=dir_fd)
        except FileExistsError:
            continue
        except OSError as e:
            raise InputError(N_("cannot write {flag} {path}: {why}"), flag=flag, path=cut(p), why=_why(e)) from None
        os.close(fd)
        return name
    raise InputError(N_("cannot write {flag} {path}: no free temporary name beside it"), flag=flag, path=cut(p))


def write_atomic(path: str | os.PathLike, data: bytes | str, *, mode: int | None = None,
                 flag: str = "the output", under: str | os.PathLike | None = None) -> Path:
    """Write ``data`` to ``path`` through a temporary file beside it and a rename: the one writer of
    every file the project writes.

    The temporary file is created exclusively (O_EXCL: a planted link is never followed); the
    target is never a link, a folder or a device (InputError), and every step works on the
    folder's open descriptor. ``under``: a folder at or above ``path``'s whose own path and every
    folder below it must not be links (a report's ``--out``). ``mode`` defaults to 0666 minus the
    umask, as a plain ``open()`` would give.
    """
    raw = os.fspath(path)
    p = Path(raw)
    if not str(raw).strip() or not p.name:
        raise InputError(N_("{flag} needs a file name"), flag=flag)
    if isinstance(data, str):
        data = data.encode("utf-8")
    folder = p.parent if str(p.parent) else Path(".")
    dfd = _open_folder(folder, flag, under=Path(os.fspath(under)) if under is not None else None)
    try:
        _refuse_non_regular(p, flag, dfd)
        tmp = _create_temp(dfd, p, flag)
        try:
            fd = os.open(tmp, os.O_WRONLY | _O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), dir_fd=dfd)
            try:
                os.fchmod(fd, (0o666 & ~_umask()) if mode is None else mode)
                view = memoryview(data)
                while view:
                    n = os.write(fd, view)
                    view = view[n:]
                os.fsync(fd)
            finally:
                os.close(fd)
            _refuse_non_regular(p, flag, dfd)  # checked again just before the rename
            os.replace(tmp, p.name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except OSError as e:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise InputError(N_("cannot write {flag} {path}: {why}"), flag=flag, path=cut(p), why=_why(e)) from None
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise
    finally:
        os.close(dfd)
    return p


def temp_beside(path: str | os.PathLike, flag: str = "the output") -> Path:
    """A new, empty temporary file beside ``path`` (created exclusively, normal permissions) for a
    writer that needs a file name (torch's trace export); finish with :func:`move_into_place`."""
    p = Path(os.fspath(path))
    folder = p.parent if str(p.parent) else Path(".")
    dfd = _open_folder(folder, flag, under=None)
    try:
        name = _create_temp(dfd, p, flag)
        try:
            os.chmod(name, 0o666 & ~_umask(), dir_fd=dfd)
        except OSError as e:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=dfd)
            raise InputError(N_("cannot write {flag} {path}: {why}"), flag=flag, path=cut(p), why=_why(e)) from None
    finally:
        os.close(dfd)
    return folder / name


def move_into_place(tmp: str | os.PathLike, path: str | os.PathLike, flag: str = "the output") -> Path:
    """Rename a finished temporary file (made by :func:`temp_beside` for ``path``) over ``path``,
    with the same refusals as :func:`write_atomic`."""
    p, t = Path(os.fspath(path)), Path(os.fspath(tmp))
    folder = p.parent if str(p.parent) else Path(".")
    dfd = _open_folder(folder, flag, under=None)
    try:
        try:
            _refuse_non_regular(p, flag, dfd)
            os.replace(t.name, p.name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except (OSError, InputError) as e:
            with contextlib.suppress(OSError):
                os.unlink(t.name, dir_fd=dfd)
            if isinstance(e, InputError):
                raise
            raise InputError(N_("cannot write {flag} {path}: {why}"), flag=flag, path=cut(p), why=_why(e)) from None
    finally:
        os.close(dfd)
    return p
