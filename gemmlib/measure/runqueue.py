"""One benchmark at a time on this machine, first come first served, across server processes,
users and cache folders.

**Where**: one folder for the whole machine — the policy's ``GEMM_QUEUE_DIR``
(``gemmlib.core.policy``; a folder owned by root, mode 1777, e.g. ``/var/lib/gemmlib/queue``), else
the fixed :data:`MACHINE_QUEUE_DIR` ``/tmp/gemmlib-queue``: not ``$TMPDIR``, not the cache folder, so
neither ``GEMM_CACHE_DIR``, nor ``TMPDIR``, nor another user starts a queue of its own. ``/tmp`` is
there on every Linux and macOS machine and is sticky (``chmod 1777``), and the folder is made the same
way: every user may add files, nobody may remove or replace another's. Before use it is checked as
the cache folder is (``gemmlib.core.files``): not a link, a folder; a policy-named one owned by root
(or, for a ``GEMM_POLICY_FILE`` policy, by the user running); writable by others only with the sticky
bit; usable by this user. Its files are opened without following a link (``O_NOFOLLOW``), only if
they are regular files with one name (a hard link planted to another file is refused), and created
exclusively (never ``O_CREAT`` on a file that exists: Linux's ``protected_regular`` refuses that in a
sticky folder). The lock files are mode 666 (everyone locks them); tickets 644 (a waiter's lock on
its own ticket is taken through a read-only descriptor). The default folder's owner (whoever made
it first) could remove the queue's files and jump the line, as anyone may run torch outside it;
a classroom machine names a root-owned folder in its policy.

The folder holds:

* ``run.lock`` — the run lock: whoever holds an exclusive ``flock`` on it is running; the file
  says who (``owner``). The kernel drops the lock the moment its holder's file is closed or its
  process dies, so a killed run never leaves the machine locked.
* one ``t-<number>-<pid>.ticket`` per waiter, numbered from ``counter`` under ``queue.lock``
  (taken only for a few file operations). Each waiter holds an ``flock`` on its own ticket while
  it waits: a ticket whose lock can be taken belongs to a process that died, and is skipped (and
  removed, where this user may).

A waiter runs when every ticket before its own is gone and ``run.lock`` is free, so several
server processes (and the command line) share one FIFO queue. ``Queue.turn(owner)`` waits for
the turn, tells ``on_wait`` the place in the queue whenever it changes, calls ``tick()`` on every
poll (a page uses it to notice a Stop or a closed session: anything it raises leaves the queue),
and holds the run lock until the ``with`` block ends. Linux and macOS (``fcntl.flock``).

**Visitors**: a page's run carries its :class:`Visitor` (a hash of its browser session and of its
address); ``turn`` refuses a visitor who already has a run queued or running (another tab of the
same browser) and an address with ``GEMM_MAX_RUNS_PER_ADDRESS`` of them (the policy's key, default
2) with a :class:`VisitorLimit` (an InputError), before it takes a place in the line. The counts are
read from the queue's own files, so they hold across every server process of the machine.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from gemmlib.core import codec, policy
from gemmlib.core.errors import InputError
from gemmlib.core.files import ServerSetupError, cut
from gemmlib.core.i18n import N_, Msg, Text

# Who holds or waits for a turn: the page that runs a benchmark and the command line name a run this
# way (the run's own name is its spec's label, ``BenchSpec.describe``). The queue's files hold an owner
# that is a message as its template and values (``gemmlib.core.codec``, one JSON line), any other as
# its text; ``running()`` and ``waiting()`` give them back as they were, so a page shows them in its
# reader's language and the command line in English.
SESSION_OWNER = N_("{what} (session {tag})")
CLI_OWNER = N_("{what} (command line)")
ANOTHER = N_("another benchmark")
A_BENCHMARK = N_("a benchmark")
MAX_OWNER_BYTES = 2048


def _owner_bytes(owner: str) -> bytes:
    """An owner as the queue's files hold it: a message as JSON data, a plain text on one line."""
    if isinstance(owner, (Text, Msg)):
        data = json.dumps(codec.encode(owner), ensure_ascii=False).encode("utf-8")
        if len(data) <= MAX_OWNER_BYTES:
            return data
    return (" ".join(str(owner).split())[:200] or A_BENCHMARK).encode("utf-8")


def owner_of(raw: str) -> str:
    """An owner read back from the queue's files: the message it was (a Text), or its text."""
    if raw.startswith("{"):
        try:
            return codec.decode(str, json.loads(raw), "owner")
        except (ValueError, codec.CodecError):
            pass
    return raw


class BusyError(InputError):
    """The benchmark runner stayed busy longer than the caller was willing to wait."""


@dataclass(frozen=True)
class Place:
    """Where a waiter stands: ``ahead`` runs queued before it, and what is running now."""

    ahead: tuple[str, ...]
    running: str | None

    @property
    def position(self) -> int:
        """1 = next to run (only the running one is ahead, or nothing)."""
        return len(self.ahead) + 1

    def describe(self) -> Text:
        """"place 2 in the queue (running now: …; 1 queued before you)", a Text (English as it is)."""
        parts = []
        if self.running:
            parts.append(Text(N_("running now: {what}"), what=self.running))
        if self.ahead:
            parts.append(Text(N_("{n} queued before you"), n=len(self.ahead)))
        if not parts:
            return Text(N_("place {n} in the queue"), n=self.position)
        return Text(N_("place {n} in the queue ({details})"), n=self.position, details=Text.joined(parts))


def _flock(fd: int, op: int) -> bool:
    try:
        fcntl.flock(fd, op)
        return True
    except BlockingIOError:
        return False


MACHINE_QUEUE_DIR = Path("/tmp/gemmlib-queue")  # the machine's queue when the policy names none (not $TMPDIR)
SHARED_MODE = 0o666  # the lock files and the counter: every user of the machine locks and updates them
TICKET_MODE = 0o644  # a ticket: its waiter writes it, the others lock it through a read-only descriptor
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _lock_error(p: Path, e: OSError) -> ServerSetupError:
    if e.errno == errno.ELOOP:
        return ServerSetupError(N_("the queue's lock file {path} is a symbolic link, not a file of this server's; "
                                   "remove it"), path=cut(p))
    return ServerSetupError(N_("cannot open the queue's lock file {path}: {why}"), path=cut(p),
                            why=e.strerror or str(e))


def _open_lock(p: Path, flags: int, mode: int = SHARED_MODE, create: bool = True) -> int:
    """Open one of the queue's lock or ticket files, never through a link (O_NOFOLLOW) and only if
    it is a regular file with one name: a link, a hard link or anything else planted in its place is
    a ServerSetupError that names it (one line on the command line, an error id on a page), never an
    OSError. A file that is not there is created exclusively, with ``mode`` whatever the umask (an
    existing one is opened without O_CREAT: ``protected_regular`` refuses O_CREAT on another user's
    file in a sticky folder). ``create=False``: FileNotFoundError when it is not there."""
    fd = -1
    for _attempt in range(3):
        try:
            fd = os.open(p, flags | _NOFOLLOW)
            break
        except FileNotFoundError:
            if not create:
                raise
        except OSError as e:
            raise _lock_error(p, e) from None
        try:
            fd = os.open(p, flags | os.O_CREAT | os.O_EXCL | _NOFOLLOW, mode)
            with contextlib.suppress(OSError):
                os.fchmod(fd, mode)
            break
        except FileExistsError:
            continue  # created by another process in between: open it as it is
        except OSError as e:
            raise _lock_error(p, e) from None
    if fd < 0:
        raise ServerSetupError(N_("cannot open the queue's lock file {path}: {why}"), path=cut(p),
                               why="it keeps appearing and disappearing")
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
        os.close(fd)
        raise ServerSetupError(N_("the queue's lock file {path} is not a regular file of its own (a device, or a "
                                  "hard link to another file); remove it"), path=cut(p))
    return fd


def _read_text(p: Path, limit: int = MAX_OWNER_BYTES + 256) -> str:
    try:
        fd = os.open(p, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return os.read(fd, limit).decode("utf-8", errors="replace").strip()
    except OSError:
        return ""
    finally:
        os.close(fd)


def check_queue_dir(d: Path, owners: set[int] | None = None) -> None:
    """ServerSetupError unless ``d`` is a real folder this user can use as the machine's queue: not a
    link; owned by one of ``owners`` when given (a folder the policy names); writable by others only
    with the sticky bit (else anyone could remove or replace its lock files); open to this user."""
    shown = cut(d)
    try:
        st = os.lstat(d)
    except OSError as e:
        raise ServerSetupError(N_("the queue folder {path} cannot be checked: {why}"), path=shown,
                               why=e.strerror or str(e)) from None
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        raise ServerSetupError(N_("the queue folder {path} is a symbolic link; remove it, or name a folder owned by "
                                  "root in the machine policy (GEMM_QUEUE_DIR)"), path=shown)
    if not stat.S_ISDIR(st.st_mode):
        raise ServerSetupError(N_("the queue folder {path} exists and is not a folder; remove it"), path=shown)
    if owners is not None and st.st_uid not in owners:
        raise ServerSetupError(N_("the queue folder {path} named by the policy belongs to uid {uid}, not to root; "
                                  "make it root's, mode 1777"), path=shown, uid=st.st_uid)
    if mode & 0o022 and not mode & stat.S_ISVTX:
        raise ServerSetupError(N_("the queue folder {path} lets other users remove or replace its lock files (mode "
                                  "{mode:o}, no sticky bit); run chmod 1777 {path}"), path=shown, mode=mode)
    if not os.access(d, os.W_OK | os.X_OK):  # checked above: not a link
        raise ServerSetupError(N_("the queue folder {path} belongs to uid {uid} and is closed to this user (mode "
                                  "{mode:o}); remove it, or name a folder owned by root, mode 1777, in the machine "
                                  "policy (GEMM_QUEUE_DIR)"), path=shown, uid=st.st_uid, mode=mode)


def machine_queue_dir() -> Path:
    """The machine's queue folder, created (mode 1777, as ``/tmp``) where it is missing and checked
    (:func:`check_queue_dir`): the policy's ``GEMM_QUEUE_DIR``, else :data:`MACHINE_QUEUE_DIR`.
    A policy that cannot be trusted is a ServerSetupError here too."""
    pol = policy.machine_policy()
    d = pol.queue_dir or MACHINE_QUEUE_DIR
    owners = None
    if pol.queue_dir is not None:
        owners = set(policy.ROOT_UIDS) | (set() if pol.machine else {os.getuid()})
    try:
        os.mkdir(d, 0o700)  # closed until its mode is set: nobody plants a file in between
    except FileExistsError:
        pass
    except OSError as e:
        raise ServerSetupError(N_("cannot create the queue folder {path}: {why}; create it (owned by root, mode "
                                  "1777) or name another in the machine policy (GEMM_QUEUE_DIR)"), path=cut(d),
                               why=e.strerror or str(e)) from None
    else:
        os.chmod(d, 0o1777)  # ours, just made: in a sticky /tmp nobody else can replace it
    check_queue_dir(d, owners)
    return d


# --------------------------------------------------------------------------- visitors
@dataclass(frozen=True)
class Visitor:
    """Who asked for a page's run, as the queue's files keep it: a hash of the browser session and
    one of the visitor's address (None: unknown, e.g. a local visitor), never the address itself."""

    session: str
    address: str | None = None

    @classmethod
    def of(cls, session: str, address: str | None) -> Visitor:
        def h(kind: str, v: str) -> str:
            return hashlib.sha256(f"gemmlib {kind} {v}".encode()).hexdigest()[:16]

        return cls(h("session", session), h("address", address) if address else None)

    def line(self, seconds: float | None = None) -> bytes:
        d: dict = {"s": self.session, "a": self.address}
        if seconds is not None:
            d["est"] = round(float(seconds), 3)
        return json.dumps(d).encode("ascii")


def _meta_line(visitor: Visitor | None, seconds: float | None) -> bytes:
    """A ticket's (and the run lock's) second line: the visitor and the run's estimate, as JSON; empty when
    neither is known."""
    if visitor is not None:
        return b"\n" + visitor.line(seconds)
    if seconds is not None:
        return b"\n" + json.dumps({"est": round(float(seconds), 3)}).encode("ascii")
    return b""


def _estimate_of(raw: str) -> float | None:
    """The estimate (seconds) on a ticket's or the run lock's second line, None when it has none."""
    _, _, rest = raw.partition("\n")
    try:
        d = json.loads(rest) if rest.strip().startswith("{") else None
    except ValueError:
        return None
    est = d.get("est") if isinstance(d, dict) else None
    return float(est) if isinstance(est, (int, float)) and not isinstance(est, bool) and 0 <= est < 1e7 else None


@dataclass(frozen=True)
class Load:
    """What a newcomer would wait behind: ``runs`` queued or running, ``seconds`` of them by their own
    estimates (the running one's less the time it has run), ``unknown`` of them without an estimate."""

    runs: int
    seconds: float
    unknown: int


class VisitorLimit(InputError):
    """A visitor who already has as many runs queued or running as it may."""

    HEADING = N_("Not queued")  # how a page titles it (``ui.guard``): the input was fine


ONE_PER_SESSION = N_("you already have a run queued or running ({what}), in this tab or another one; wait for it to "
                     "finish or stop it there, then run again")
PER_ADDRESS = N_("your address already has {n} runs queued or running, this server's limit per visitor "
                 "(GEMM_MAX_RUNS_PER_ADDRESS); wait for one of them to finish")


def _visitor_of(raw: str) -> Visitor | None:
    """The visitor line of a ticket or of the run lock (its second line), None when it has none."""
    _, _, rest = raw.partition("\n")
    try:
        d = json.loads(rest) if rest.strip().startswith("{") else None
    except ValueError:
        return None
    if not isinstance(d, dict) or not isinstance(d.get("s"), str):
        return None
    a = d.get("a")
    return Visitor(d["s"][:64], a[:64] if isinstance(a, str) else None)


def _first_line(raw: str) -> str:
    return raw.partition("\n")[0]


class Queue:
    """The FIFO queue and run lock of one machine: :func:`machine_queue_dir` by default; a test's
    own ``directory`` (created private, mode 700) gives it a queue of its own."""

    def __init__(self, directory: str | os.PathLike | None = None) -> None:
        if directory is None:
            self.dir = machine_queue_dir()
        else:
            self.dir = Path(directory)
            self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            check_queue_dir(self.dir)
        self.run_lock = self.dir / "run.lock"

    # ----------------------------------------------------------------------- small helpers
    @contextlib.contextmanager
    def _meta(self) -> Iterator[None]:
        fd = _open_lock(self.dir / "queue.lock", os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing drops the flock

    def _next_number(self) -> int:
        """The next ticket's number (under queue.lock): the counter's, and past every ticket there
        (a counter someone emptied does not put a newcomer ahead of the line)."""
        fd = _open_lock(self.dir / "counter", os.O_RDWR)
        try:
            raw = os.pread(fd, 64, 0).decode("ascii", errors="replace").strip()
            n = int(raw) if raw.isdigit() else 0
            for t in self._tickets():
                part = t.name.split("-")[1] if t.name.count("-") >= 2 else ""
                if part.isdigit():
                    n = max(n, int(part))
            n += 1
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(n).encode("ascii"), 0)
            return n
        finally:
            os.close(fd)

    def _tickets(self) -> list[Path]:
        return sorted(p for p in self.dir.glob("t-*.ticket"))

    def _alive(self, p: Path) -> bool:
        """A ticket is alive while its waiter holds its flock; a dead one is removed here (where
        this user may: in a sticky folder only its owner can). A ticket this user cannot open is
        alive while the process its name gives exists."""
        try:
            fd = os.open(p, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK)
        except PermissionError:
            return _pid_alive(p.name)
        except OSError:
            return False
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return False
            if _flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB):
                with contextlib.suppress(OSError):
                    p.unlink()
                return False
            return True
        finally:
            os.close(fd)

    def _holder(self) -> str | None:
        """The run lock's text (its owner, then its visitor) while it is held, else None."""
        try:
            fd = _open_lock(self.run_lock, os.O_RDONLY, create=False)
        except FileNotFoundError:
            return None
        except ServerSetupError:
            return ANOTHER  # a planted file: turn() says so; here the machine counts as busy
        try:
            if _flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB):
                return None
            return os.pread(fd, MAX_OWNER_BYTES + 256, 0).decode("utf-8", errors="replace").strip() or ANOTHER
        finally:
            os.close(fd)

    def running(self) -> str | None:
        """Who holds the run lock now (its owner text), or None when the machine is free."""
        raw = self._holder()
        return None if raw is None else owner_of(_first_line(raw)) or ANOTHER

    def load(self) -> Load:
        """The runs queued and running now, and how long they will take by their own estimates."""
        now = time.time()
        seconds, runs, unknown = 0.0, 0, 0
        with self._meta():
            raws = [_read_text(t) for t in self._tickets() if self._alive(t)]
        for raw in raws:
            runs += 1
            est = _estimate_of(raw)
            seconds += est or 0.0
            unknown += est is None
        held = self._holder()
        if held is not None:
            runs += 1
            est = _estimate_of(held)
            if est is None:
                unknown += 1
            else:
                try:
                    since = now - os.lstat(self.run_lock).st_mtime  # written when the run took the lock
                except OSError:
                    since = 0.0
                seconds += max(0.0, est - max(0.0, since))
        return Load(runs, seconds, unknown)

    def waiting(self) -> list[str]:
        """Owners of the live tickets, first in line first."""
        with self._meta():
            return [owner_of(_first_line(_read_text(t))) or t.name for t in self._tickets() if self._alive(t)]

    def _check_visitor(self, visitor: Visitor, per_address: int) -> None:
        """VisitorLimit when ``visitor`` already has a run here, or its address ``per_address`` runs
        (under queue.lock)."""
        raws = [_read_text(t) for t in self._tickets() if self._alive(t)]
        held = self._holder()
        if held is not None:
            raws.append(held)
        mine = same_address = 0
        first = ""
        for raw in raws:
            v = _visitor_of(raw)
            if v is None:
                continue
            if v.session == visitor.session:
                mine += 1
                first = first or owner_of(_first_line(raw))
            if visitor.address is not None and v.address == visitor.address:
                same_address += 1
        if mine:
            raise VisitorLimit(ONE_PER_SESSION, what=first or A_BENCHMARK)
        if visitor.address is not None and same_address >= per_address:
            raise VisitorLimit(PER_ADDRESS, n=same_address)

    # ----------------------------------------------------------------------- the turn
    @contextlib.contextmanager
    def turn(self, owner: str, *, on_wait: Callable[[Place], None] | None = None,
             tick: Callable[[], None] | None = None, poll_s: float = 0.1,
             timeout_s: float | None = None, visitor: Visitor | None = None,
             per_address: int | None = None, seconds: float | None = None) -> Iterator[None]:
        """Wait for this caller's turn (FIFO), then hold the run lock for the ``with`` block.

        ``on_wait(place)`` is called when waiting starts and whenever the place changes;
        ``tick()`` on every poll (what it raises leaves the queue). BusyError after
        ``timeout_s`` seconds in the queue. ``visitor``: VisitorLimit, before any place is taken,
        when it already has a run here or its address ``per_address`` of them (default: the
        policy's ``GEMM_MAX_RUNS_PER_ADDRESS``). ``seconds``: the run's estimate, kept on its ticket and the run
        lock, so that others see how long the queue ahead of them is (:meth:`load`).
        """
        owner_b = _owner_bytes(owner) + _meta_line(visitor, seconds)
        if visitor is not None and per_address is None:
            per_address = policy.machine_policy().runs_per_address
        start = time.monotonic()
        with self._meta():
            if visitor is not None:
                self._check_visitor(visitor, int(per_address or 1))
            number = self._next_number()
            ticket = self.dir / f"t-{number:012d}-{os.getpid()}.ticket"
            try:
                tfd = os.open(ticket, os.O_RDWR | os.O_CREAT | os.O_EXCL | _NOFOLLOW, TICKET_MODE)
            except OSError as e:
                raise _lock_error(ticket, e) from None
            with contextlib.suppress(OSError):
                os.fchmod(tfd, TICKET_MODE)
            fcntl.flock(tfd, fcntl.LOCK_EX)
            os.write(tfd, owner_b)
        rfd: int | None = None
        told: Place | None = None
        try:
            while True:
                with self._meta():
                    ahead = [t for t in self._tickets() if t.name < ticket.name and self._alive(t)]
                    if not ahead:
                        fd = _open_lock(self.run_lock, os.O_RDWR)
                        if _flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB) and _same_file(fd, self.run_lock):
                            rfd = fd
                            os.ftruncate(rfd, 0)
                            os.pwrite(rfd, owner_b, 0)
                            with contextlib.suppress(OSError):
                                ticket.unlink()
                            os.close(tfd)
                            tfd = -1
                            break
                        os.close(fd)
                    place = Place(tuple(owner_of(_first_line(_read_text(t))) or t.name for t in ahead),
                                  self.running())
                if on_wait is not None and place != told:
                    on_wait(place)
                    told = place
                if tick is not None:
                    tick()
                if timeout_s is not None and time.monotonic() - start > timeout_s:
                    raise BusyError(N_("the benchmark runner stayed busy for {seconds:g} s ({place}); try again "
                                       "in a moment"), seconds=timeout_s, place=place.describe())
                time.sleep(poll_s)
            yield
        finally:
            if tfd >= 0:
                with contextlib.suppress(OSError):
                    ticket.unlink()
                os.close(tfd)
            if rfd is not None:
                with contextlib.suppress(OSError):
                    os.ftruncate(rfd, 0)
                os.close(rfd)  # drops the run lock


def _same_file(fd: int, p: Path) -> bool:
    """The locked descriptor is still the file at ``p`` (not one removed or replaced meanwhile)."""
    try:
        a, b = os.fstat(fd), os.lstat(p)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _pid_alive(name: str) -> bool:
    """Whether the process a ticket's name gives (``t-<number>-<pid>.ticket``) exists."""
    try:
        pid = int(name.rsplit("-", 1)[1].split(".")[0])
        os.kill(pid, 0)
    except (ValueError, IndexError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


def default_queue() -> Queue:
    """The machine's benchmark queue (:func:`machine_queue_dir`): one for every user, server
    process and cache folder of the machine."""
    return Queue()
