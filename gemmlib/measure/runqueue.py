"""One benchmark at a time on this machine, first come first served, across server processes.

A queue is a folder (inside the server's private cache folder, ``gemmlib.core.files``) holding:

* ``run.lock`` — the run lock: whoever holds an exclusive ``flock`` on it is running; the file
  says who (``owner``). The kernel drops the lock the moment its holder's file is closed or its
  process dies, so a killed run never leaves the machine locked.
* one ``t-<number>-<pid>.ticket`` per waiter, numbered from ``counter`` under ``queue.lock``
  (taken only for a few file operations). Each waiter holds an ``flock`` on its own ticket while
  it waits: a ticket whose lock can be taken belongs to a process that died, and is removed.

A waiter runs when every ticket before its own is gone and ``run.lock`` is free, so several
server processes (and the command line) share one FIFO queue. ``Queue.turn(owner)`` waits for
the turn, tells ``on_wait`` the place in the queue whenever it changes, calls ``tick()`` on every
poll (a page uses it to notice a Stop or a closed session: anything it raises leaves the queue),
and holds the run lock until the ``with`` block ends. Linux and macOS (``fcntl.flock``).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from gemmlib.core.errors import InputError
from gemmlib.core.files import private_dir
from gemmlib.core.i18n import N_, Text

# Who holds or waits for a turn, as the queue's files say it (an owner is English text, shared with
# the command line): the page that runs a benchmark and the command line name a run this way; the
# run's own name is a job's label (jobs.Job.describe), a constant of the catalogue. A page shows an
# owner through ``Text.reworded(owner, OWNER_TEXTS)``.
SESSION_OWNER = N_("{what} (session {tag})")
CLI_OWNER = N_("{what} (command line)")
KIND_RUN = N_("a {kind} run")
COLLECTIVES_RUN = N_("collectives on {n} ranks")
TP_RUN = N_("tensor parallelism on {n} ranks")
OWNER_TEXTS = (SESSION_OWNER, CLI_OWNER, KIND_RUN, COLLECTIVES_RUN, TP_RUN)
ANOTHER = N_("another benchmark")
A_BENCHMARK = N_("a benchmark")


def owner_text(owner: str) -> Text:
    """An owner as the queue's files hold it (English), shown in the reader's language on a page."""
    return Text.reworded(owner, OWNER_TEXTS)


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
            parts.append(Text(N_("running now: {what}"), what=owner_text(self.running)))
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


def _read_text(p: Path, limit: int = 512) -> str:
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
    except OSError:
        return ""
    try:
        return os.read(fd, limit).decode("utf-8", errors="replace").strip()
    except OSError:
        return ""
    finally:
        os.close(fd)


class Queue:
    """The FIFO queue and run lock of one machine (``name`` keeps independent queues apart)."""

    def __init__(self, name: str = "benchmarks", directory: str | os.PathLike | None = None) -> None:
        self.dir = Path(directory) if directory is not None else private_dir(f"queue-{name}")
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.run_lock = self.dir / "run.lock"

    # ----------------------------------------------------------------------- small helpers
    @contextlib.contextmanager
    def _meta(self) -> Iterator[None]:
        fd = os.open(self.dir / "queue.lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing drops the flock

    def _next_number(self) -> int:
        p = self.dir / "counter"
        try:
            n = int(_read_text(p) or 0) + 1
        except ValueError:
            n = 1
        tmp = self.dir / f".counter.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            os.write(fd, str(n).encode())
        finally:
            os.close(fd)
        os.replace(tmp, p)
        return n

    def _tickets(self) -> list[Path]:
        return sorted(p for p in self.dir.glob("t-*.ticket"))

    def _alive(self, p: Path) -> bool:
        """A ticket is alive while its waiter holds its flock; a dead one is removed here."""
        try:
            fd = os.open(p, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return False
        try:
            if _flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB):
                with contextlib.suppress(OSError):
                    p.unlink()
                return False
            return True
        finally:
            os.close(fd)

    def running(self) -> str | None:
        """Who holds the run lock now (its owner text), or None when the machine is free."""
        try:
            fd = os.open(self.run_lock, os.O_RDONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except OSError:
            return None
        try:
            if _flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB):
                return None
            return _read_text(self.run_lock) or ANOTHER
        finally:
            os.close(fd)

    def waiting(self) -> list[str]:
        """Owners of the live tickets, first in line first."""
        with self._meta():
            return [_read_text(t) or t.name for t in self._tickets() if self._alive(t)]

    # ----------------------------------------------------------------------- the turn
    @contextlib.contextmanager
    def turn(self, owner: str, *, on_wait: Callable[[Place], None] | None = None,
             tick: Callable[[], None] | None = None, poll_s: float = 0.1,
             timeout_s: float | None = None) -> Iterator[None]:
        """Wait for this caller's turn (FIFO), then hold the run lock for the ``with`` block.

        ``on_wait(place)`` is called when waiting starts and whenever the place changes;
        ``tick()`` on every poll (what it raises leaves the queue). BusyError after
        ``timeout_s`` seconds in the queue.
        """
        owner = " ".join(str(owner).split())[:200] or A_BENCHMARK
        start = time.monotonic()
        with self._meta():
            number = self._next_number()
            ticket = self.dir / f"t-{number:012d}-{os.getpid()}.ticket"
            tfd = os.open(ticket, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            fcntl.flock(tfd, fcntl.LOCK_EX)
            os.write(tfd, owner.encode("utf-8"))
        rfd: int | None = None
        told: Place | None = None
        try:
            while True:
                with self._meta():
                    ahead = [t for t in self._tickets() if t.name < ticket.name and self._alive(t)]
                    if not ahead:
                        fd = os.open(self.run_lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
                        if _flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB):
                            rfd = fd
                            os.ftruncate(rfd, 0)
                            os.pwrite(rfd, owner.encode("utf-8"), 0)
                            with contextlib.suppress(OSError):
                                ticket.unlink()
                            os.close(tfd)
                            tfd = -1
                            break
                        os.close(fd)
                    place = Place(tuple(_read_text(t) or t.name for t in ahead), self.running())
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


_default: dict[str, Queue] = {}


def default_queue() -> Queue:
    """The machine's benchmark queue, in the private cache folder (one per GEMM_CACHE_DIR)."""
    q = Queue()
    key = str(q.dir)
    return _default.setdefault(key, q)
