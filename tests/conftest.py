"""Shared test set-up: the repository root on sys.path (pages import `ui` and `gemmlib`), and the
page and browser tests left out cleanly where the app's own packages are missing (the lent GPU image
has torch but not streamlit, pandas or altair)."""

import atexit
import functools
import importlib.util
import io
import itertools
import os
import shutil
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

APP_PACKAGES = ("streamlit", "pandas", "altair", "babel")


def _missing(names: tuple[str, ...]) -> list[str]:
    out = []
    for name in names:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # sys.modules[name] = None, or a broken install
            found = False
        if not found:
            out.append(name)
    return out


MISSING_APP_PACKAGES = _missing(APP_PACKAGES)
TESTS = Path(__file__).resolve().parent
APP_TEST_DIRS = ("pages", "browser")  # AppTest and Playwright tests: they need the app's packages


def _needs_the_app(path: Path) -> bool:
    try:
        return Path(path).resolve().relative_to(TESTS).parts[0] in APP_TEST_DIRS
    except (ValueError, IndexError):
        return False


class _NeedsTheApp(pytest.Module):
    """A test module that cannot even be imported here: reported as skipped, with the reason."""

    def collect(self):
        pytest.skip(f"needs {', '.join(MISSING_APP_PACKAGES)} (pip install -r requirements.txt)",
                    allow_module_level=True)


def pytest_pycollect_makemodule(module_path, parent):
    if MISSING_APP_PACKAGES and _needs_the_app(module_path):
        return _NeedsTheApp.from_parent(parent, path=module_path)
    return None


def pytest_report_header(config):
    if MISSING_APP_PACKAGES:
        return (f"tests/pages and tests/browser are skipped: {', '.join(MISSING_APP_PACKAGES)} not installed "
                "(pip install -r requirements.txt to run them)")
    return None

CAP_VARS = ("GEMM_CLASSROOM", "GEMM_MAX_DIM", "GEMM_MAX_BYTES", "GEMM_TIME_LIMIT_S", "GEMM_MAX_RANKS",
            "GEMM_MAX_CPU_GFLOP")

# ------------------------------------------------------------------------------ hermetic tests
# Nothing a test reads may come from the machine it runs on or from the test before it: the cache
# folder (measured ceilings, calibrations, interconnects, the run queue), the policy file named by
# the environment, the caps, the language. The whole session (module- and session-scoped fixtures,
# each xdist worker) gets a cache folder of its own at once; every test then gets its own below.
LEAKY_VARS = (*CAP_VARS, "GEMM_POLICY_FILE", "LANGUAGE", "LC_ALL", "LC_MESSAGES")
for _v in LEAKY_VARS:
    os.environ.pop(_v, None)
_SESSION_CACHE = Path(tempfile.mkdtemp(prefix="gemm-tests-"))
atexit.register(shutil.rmtree, _SESSION_CACHE, ignore_errors=True)
os.environ["GEMM_CACHE_DIR"] = str(_SESSION_CACHE / "session")
_test_number = itertools.count()


def queue_policy(name: str) -> Path:
    """A policy file that names only a queue folder of its own (``GEMM_QUEUE_DIR``, issue 26 item 6):
    the machine's one queue (``/tmp/gemmlib-queue``) is never touched by a test. It names no cap, so
    the caps stay the secrets' and the environment's."""
    pol = _SESSION_CACHE / f"{name}.policy.toml"
    pol.write_text(f'GEMM_QUEUE_DIR = "{_SESSION_CACHE / (name + "-queue")}"\n')
    os.chmod(pol, 0o644)
    return pol


os.environ["GEMM_POLICY_FILE"] = str(queue_policy("session"))


def _clear_process_state() -> None:
    """What gemmlib keeps process-wide besides the cache folder, cleared where it was imported
    (never imported here just to clear it: a test that needs no torch must not pay for it)."""
    mods = sys.modules
    if "gemmlib.core.ceilings" in mods:
        mods["gemmlib.core.ceilings"].clear_ceilings()
    if "gemmlib.core.interconnect" in mods:
        mods["gemmlib.core.interconnect"].clear_interconnects()
    if "gemmlib.core.results" in mods:
        mods["gemmlib.core.results"].clear_recorded()
    if "gemmlib.measure.safety" in mods:
        mods["gemmlib.measure.safety"].set_process_limits(None)
    if "ui.i18n" in mods:
        mods["ui.i18n"]._FORCED.code = None


def _scan_components_once() -> None:
    """Each new AppTest's first run scans every installed distribution's metadata for Streamlit
    component manifests (``streamlit.components.v2.manifest_scanner``: ~0.2 s here, on every AppTest of
    every page test). The installed packages do not change during a test run, so once the scanner has
    been imported (by the process's first AppTest) its answer is kept; each AppTest still registers
    what it found in its own component registry, as before."""
    mod = sys.modules.get("streamlit.components.v2.manifest_scanner")
    if mod is None and "streamlit.testing.v1" in sys.modules:  # a page test, before its first AppTest: every
        # AppTest of the process's first page test scanned (~0.3 s of CPU each) while the module was not yet loaded
        mod = importlib.import_module("streamlit.components.v2.manifest_scanner")
    if mod is None or getattr(mod.scan_component_manifests, "gemm_once", False):
        return
    scan = functools.cache(mod.scan_component_manifests)

    def once():
        return list(scan())

    once.gemm_once = True
    mod.scan_component_manifests = once


@pytest.fixture(autouse=True)
def hermetic(monkeypatch):
    """Every test: its own (not yet created) cache folder and machine queue (a policy file that names
    only that), no other policy file, caps or language from the environment, and none of the measurements an earlier test kept in this process."""
    for v in LEAKY_VARS:
        monkeypatch.delenv(v, raising=False)
    n = next(_test_number)
    monkeypatch.setenv("GEMM_CACHE_DIR", str(_SESSION_CACHE / f"t{n}"))
    monkeypatch.setenv("GEMM_POLICY_FILE", str(queue_policy(f"t{n}")))  # the machine's queue: one of its own
    # a spare worker is keyed to its environment: with a cache folder per test, every spare started
    # behind an in-process run would be stale at the next test (tests/measure/test_runner.py turns
    # it back on to test it; a browser test's server keeps its spares)
    monkeypatch.setenv("GEMM_SPARE_WORKER", "0")
    _clear_process_state()
    _scan_components_once()
    yield
    _clear_process_state()



@pytest.fixture
def bench_env(monkeypatch, tmp_path):
    """The default caps, and measured ceilings and interconnects kept in this test's own folder."""
    from gemmlib.core import ceilings, interconnect

    for v in CAP_VARS:
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path / "cache"))
    interconnect.clear_interconnects()
    ceilings.clear_ceilings()
    yield tmp_path / "cache"
    interconnect.clear_interconnects()
    ceilings.clear_ceilings()


@pytest.fixture
def run_cli():
    """``run_cli(argv) -> (exit status, stdout, stderr)`` of ``python -m gemmlib``, in this process
    (argparse's own exits, ``--help`` and its usage errors, give their status as the process would)."""
    from gemmlib.cli import main

    def run(argv):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            try:
                rc = main(argv)
            except SystemExit as e:
                rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        return rc, out.getvalue(), err.getvalue()

    return run


def _load_i18n_tool() -> None:
    """scripts/i18n.py (the translation workflow) importable by the tests as ``gemm_i18n``
    (where Babel is installed; the tests that use it skip themselves without it)."""
    spec = importlib.util.spec_from_file_location("gemm_i18n", ROOT / "scripts" / "i18n.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gemm_i18n"] = mod
    spec.loader.exec_module(mod)


if "gemm_i18n" not in sys.modules and "babel" not in MISSING_APP_PACKAGES:
    _load_i18n_tool()
