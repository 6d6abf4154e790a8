"""Shared test set-up: the repository root on sys.path (pages import `ui` and `gemmlib`), and the
page and browser tests left out cleanly where the app's own packages are missing (the lent GPU image
has torch but not streamlit, pandas or altair)."""

import importlib.util
import io
import sys
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
    """``run_cli(argv) -> (exit status, stdout, stderr)`` of ``python -m gemmlib``, in this process."""
    from gemmlib.cli import main

    def run(argv):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            rc = main(argv)
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
