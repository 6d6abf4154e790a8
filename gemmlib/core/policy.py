"""The machine's policy: one file at a fixed place that every page, every command and every
benchmark worker on this machine obey, whatever their working folder, environment or secrets.

* **Where**: ``/etc/gemmlib/policy.toml`` (:data:`MACHINE_POLICY`). Readable by all, writable by
  root only: the file must be a regular file (not a link) owned by root and not writable by its
  group or others, and so must its folder (a folder with the sticky bit aside). A policy that
  fails these checks, or does not parse, is an error everywhere (the command line exits 2, a page
  falls back to the small classroom caps), never a machine without a policy.
* **Tests, and machines without one**: ``GEMM_POLICY_FILE`` names a policy file, honoured only
  while ``/etc/gemmlib/policy.toml`` does not exist, so an ordinary user can never replace or
  loosen the machine's policy with it; the file must belong to root or to the user running, and
  not be writable by group or others.
* **Keys** (top-level TOML): the caps' own names (``GEMM_CLASSROOM``, ``GEMM_MAX_DIM``,
  ``GEMM_MAX_BYTES``, ``GEMM_TIME_LIMIT_S``, ``GEMM_MAX_CPU_GFLOP``, ``GEMM_MAX_RANKS``): the most a
  page, a command or a worker may run; the environment and the secrets files can only lower them
  (``gemmlib.measure.safety.limits``). ``GEMM_CEILINGS_READ_ONLY = true``: the measured ceilings
  in the cache are read, never written (``gemmlib.core.ceilings.save_ceilings``).
  ``GEMM_QUEUE_DIR = "/var/lib/gemmlib/queue"``: the machine's one benchmark queue lives there
  (``gemmlib.measure.runqueue``; an absolute path, a folder owned by root, mode 1777); without it the
  queue is the fixed ``/tmp/gemmlib-queue``. ``GEMM_MAX_RUNS_PER_ADDRESS``: the most runs one visitor
  address may have queued or running at once (``gemmlib.measure.runqueue.Visitor``). Any other key
  is an error (a misspelt cap must not leave the machine without it). A policy that names no cap
  (only the queue folder or the ceilings' key) leaves the caps to the secrets and the environment.

Reading it needs no torch (the ceilings, in ``core``, obey it too).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gemmlib.core.files import ServerSetupError, cut, read_regular
from gemmlib.core.i18n import N_

MACHINE_POLICY = Path("/etc/gemmlib/policy.toml")
POLICY_ENV = "GEMM_POLICY_FILE"  # honoured only while MACHINE_POLICY does not exist
ROOT_UIDS: tuple[int, ...] = (0,)  # who may own the machine's policy
CAP_KEYS = ("GEMM_CLASSROOM", "GEMM_MAX_DIM", "GEMM_MAX_BYTES", "GEMM_TIME_LIMIT_S", "GEMM_MAX_CPU_GFLOP",
            "GEMM_MAX_RANKS")
READ_ONLY_KEY = "GEMM_CEILINGS_READ_ONLY"
QUEUE_DIR_KEY = "GEMM_QUEUE_DIR"
PER_ADDRESS_KEY = "GEMM_MAX_RUNS_PER_ADDRESS"
KEYS = (*CAP_KEYS, READ_ONLY_KEY, QUEUE_DIR_KEY, PER_ADDRESS_KEY)
DEFAULT_RUNS_PER_ADDRESS = 2  # two tabs (or two people behind one address) may each have a run queued
MAX_QUEUE_DIR_CHARS = 200
MAX_POLICY_BYTES = 65_536


@dataclass(frozen=True)
class Policy:
    """The policy in force: ``path`` None when this machine has none; ``values`` the keys it sets."""

    path: Path | None = None
    values: Mapping[str, Any] = field(default_factory=dict)
    machine: bool = False  # the machine's own file (not one named by GEMM_POLICY_FILE)

    @property
    def present(self) -> bool:
        return self.path is not None

    @property
    def ceilings_read_only(self) -> bool:
        return self.values.get(READ_ONLY_KEY) is True

    @property
    def sets_caps(self) -> bool:
        return any(k in self.values for k in CAP_KEYS)

    @property
    def queue_dir(self) -> Path | None:
        """The queue folder it names (``GEMM_QUEUE_DIR``), None for the default."""
        v = self.values.get(QUEUE_DIR_KEY)
        return Path(v) if v else None

    @property
    def runs_per_address(self) -> int:
        return int(self.values.get(PER_ADDRESS_KEY, DEFAULT_RUNS_PER_ADDRESS))


NO_POLICY = Policy()


def policy_file() -> tuple[Path | None, bool]:
    """(the policy file in force, whether it is the machine's): the machine's when it exists (even
    a broken one: it is refused, not skipped), else ``$GEMM_POLICY_FILE``, else (None, False)."""
    try:
        os.lstat(MACHINE_POLICY)
        return MACHINE_POLICY, True
    except FileNotFoundError:
        pass
    except OSError as e:
        raise ServerSetupError(N_("the machine policy {path} cannot be checked: {why}"), path=MACHINE_POLICY,
                               why=e.strerror or str(e)) from None
    env = os.environ.get(POLICY_ENV, "").strip()
    return (Path(env), False) if env else (None, False)


def _check_trusted(p: Path, machine: bool) -> None:
    """ServerSetupError unless ``p`` and its folder can be changed only by their trusted owner."""
    owners = set(ROOT_UIDS) | (set() if machine else {os.getuid()})
    try:
        st = os.lstat(p)
        folder = os.stat(p.parent if str(p.parent) else Path("."))
    except OSError as e:
        raise ServerSetupError(N_("the policy file {path} cannot be read: {why}"), path=cut(p),
                               why=e.strerror or str(e)) from None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
        raise ServerSetupError(N_("the policy file {path} is not a regular file (a link?); replace it with one "
                                  "owned by root, mode 644"), path=cut(p))
    if st.st_uid not in owners or st.st_mode & 0o022:
        raise ServerSetupError(N_("the policy file {path} can be changed by others than root (owner uid {uid}, "
                                  "mode {mode:o}); make it root's, mode 644"),
                               path=cut(p), uid=st.st_uid, mode=stat.S_IMODE(st.st_mode))
    if folder.st_uid not in owners or (folder.st_mode & 0o022 and not folder.st_mode & stat.S_ISVTX):
        raise ServerSetupError(N_("the policy file's folder {path} can be changed by others than root (owner uid "
                                  "{uid}, mode {mode:o}); make it root's, mode 755"),
                               path=cut(p.parent), uid=folder.st_uid, mode=stat.S_IMODE(folder.st_mode))


def machine_policy() -> Policy:
    """The policy in force on this machine (``NO_POLICY`` when there is none).

    ServerSetupError (an InputError) for a policy file that can be changed by others than root,
    is not a regular file, does not parse, or holds a key that is not a policy key.
    """
    import tomllib

    p, machine = policy_file()
    if p is None:
        return NO_POLICY
    _check_trusted(p, machine)
    data = read_regular(p, MAX_POLICY_BYTES, what=f"the policy file {p}")
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ServerSetupError(N_("the policy file {path} is not UTF-8 text"), path=cut(p)) from None
    except tomllib.TOMLDecodeError as e:
        raise ServerSetupError(N_("the policy file {path} is not valid TOML: {why}"), path=cut(p), why=str(e)) from None
    unknown = sorted(k for k in doc if k not in KEYS)
    if unknown:
        raise ServerSetupError(N_("the policy file {path} has an unknown key, {keys}; the keys are {known}")
                               if len(unknown) == 1 else
                               N_("the policy file {path} has unknown keys {keys}; the keys are {known}"),
                               path=cut(p), keys=cut(", ".join(unknown)), known=", ".join(KEYS))
    if READ_ONLY_KEY in doc and not isinstance(doc[READ_ONLY_KEY], bool):
        raise ServerSetupError(N_("{key} in the policy file {path} must be true or false"), key=READ_ONLY_KEY,
                               path=cut(p))
    q = doc.get(QUEUE_DIR_KEY)
    if q is not None and (not isinstance(q, str) or not q.startswith("/") or len(q) > MAX_QUEUE_DIR_CHARS
                          or "\0" in q):
        raise ServerSetupError(N_("{key} in the policy file {path} must be an absolute folder name (at most {most} "
                                  "characters), got {value}"), key=QUEUE_DIR_KEY, path=cut(p),
                               most=MAX_QUEUE_DIR_CHARS, value=cut(repr(q)))
    n = doc.get(PER_ADDRESS_KEY)
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 1000):
        raise ServerSetupError(N_("{key} in the policy file {path} must be a whole number from 1 to 1000, got {value}"),
                               key=PER_ADDRESS_KEY, path=cut(p), value=cut(repr(n)))
    return Policy(p, dict(doc), machine)



READ_ONLY_NOTE = N_("not kept for other visitors: the machine policy keeps the shared measurements read-only "
                    "(GEMM_CEILINGS_READ_ONLY)")


def shared_read_only() -> bool:
    """Whether the machine policy keeps the shared measurements read-only (``GEMM_CEILINGS_READ_ONLY``): the
    ceilings, and the calibrations and measured interconnects the estimate offers every visitor. A policy that
    cannot be read counts as read-only: keep nothing rather than ignore it."""
    try:
        return machine_policy().ceilings_read_only
    except ServerSetupError:
        return True
