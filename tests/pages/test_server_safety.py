"""The shared server's safeguards on the pages: the secrets file's caps on every benchmark page (shown and
applied), a broken secrets file as an error on the page and in the log, user text rendered as text, and
an unexpected error shown as a short message whose id matches the log line."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from streamlit import config
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
BENCH_PAGES = {  # page -> the button that starts its run (a label or a key)
    "5_Devices.py": "Measure ceilings",
    "6_Precision.py": "Run the benchmark",
    "7_Tiling.py": "tb_run",
    "8_Batching.py": "ba_run",
    "10_Profiler.py": "pf_run",
}


@pytest.fixture
def secrets(tmp_path, monkeypatch):
    """Write a secrets file and point Streamlit's ``secrets.files`` at it (as `.streamlit/secrets.toml` is)."""
    for k in ("GEMM_CLASSROOM", "GEMM_MAX_DIM", "GEMM_MAX_BYTES", "GEMM_TIME_LIMIT_S", "GEMM_MAX_CPU_GFLOP"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "secrets.toml"
    old = config.get_option("secrets.files")
    config.set_option("secrets.files", [str(path)])

    def write(text: str) -> Path:
        path.write_text(text)
        return path

    yield write
    config.set_option("secrets.files", old)


def _button(at: AppTest, which: str):
    for b in at.button:
        if b.key == which or b.label == which:
            return b
    raise AssertionError(f"no button {which!r}: {[b.label for b in at.button]}")


@pytest.mark.parametrize("page", sorted(BENCH_PAGES))
def test_the_secrets_caps_are_shown_and_applied_on_every_benchmark_page(secrets, page):
    secrets("GEMM_CLASSROOM = true\nGEMM_MAX_DIM = 3000\nGEMM_MAX_CPU_GFLOP = 0.000001\n")
    at = AppTest.from_file(str(ROOT / "pages" / page), default_timeout=120).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    captions = " ".join(c.value for c in at.caption)
    if page != "5_Devices.py":  # the Devices page has no size inputs to cap
        assert "dimensions ≤ 3,000" in captions and "classroom mode" in captions
    button = _button(at, BENCH_PAGES[page])  # the secrets' cap refuses the run before a press: the button is off,
    assert button.disabled and "GEMM_MAX_CPU_GFLOP" in (button.help or ""), (button.disabled, button.help)
    warnings = [w.value for w in at.warning]  # and says why beside it
    assert any(w.startswith("**The server's caps would refuse this run:**") and "GEMM_MAX_CPU_GFLOP" in w
               for w in warnings), warnings


def test_a_broken_secrets_file_is_an_error_on_the_page_and_in_the_log(secrets, caplog):
    secrets("GEMM_CLASSROOM = true\nGEMM_MAX_DIM 300\n")
    with caplog.at_level(logging.ERROR, logger="gemmlib"):
        at = AppTest.from_file(str(ROOT / "pages" / "7_Tiling.py"), default_timeout=60).run()
    assert not at.exception
    err = " ".join(e.value for e in at.error)
    assert "could not be read" in err and "line 2" in err
    assert "/tmp" not in err  # no server path for the visitor
    assert any("could not be read" in r.getMessage() and "secrets.toml" in r.getMessage() for r in caplog.records)
    # and the benchmarks fall back to the small classroom caps, not to none
    assert "classroom mode" in " ".join(c.value for c in at.caption)


# --------------------------------------------------------------------------- user text as text
HOSTILE = ["![x](http://example.invalid/a.png)", "[click](http://example.invalid)", "<img src=x onerror=alert(1)>",
           "**bold** _it_ `code` ~~gone~~", "$\\int$ :red[red] :material/home:", "# heading", "- item\n1. two",
           "| a | b |\n|---|---|", "http://example.invalid/a.png www.example.invalid", "a\\b\\[c\\]"]


@pytest.mark.parametrize("text", HOSTILE)
def test_md_makes_any_text_plain(text):
    import ui

    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    tokens = md.parse(ui.md(text))
    kinds = {t.type for tok in tokens for t in [tok, *(tok.children or [])]}
    assert not kinds & {"image", "link_open", "html_inline", "html_block", "em_open", "strong_open",
                        "code_inline", "s_open", "heading_open", "bullet_list_open", "ordered_list_open",
                        "table_open"}, kinds
    shown = "".join(c.content for tok in tokens for c in (tok.children or []) if c.type == "text")
    assert shown == " ".join(text.split())  # what the visitor typed, character for character
    assert "$" not in ui.md(text).replace("\\$", "")  # no LaTeX
    assert not re.search(r"(?<!\\):[a-z]+\[", ui.md(text))  # no Streamlit colour directive
    assert not re.search(r"(?i)(https?:|www\.)", ui.md(text))  # no autolink literal (GFM)


def test_an_input_error_quoting_user_text_is_shown_as_text():
    def page():
        import ui
        from gemmlib.core.errors import InputError

        with ui.guard("the matrices"):
            raise InputError("A row 1, column 1: '![x](http://example.invalid/a.png)' is not a number")

    at = AppTest.from_function(page).run()
    value = at.error[0].value
    assert "\\!\\[x\\]" in value and "![x]" not in value


def test_an_unexpected_error_shows_an_id_that_matches_the_log(caplog):
    def page():
        import ui

        with ui.guard("the estimate"):
            open("/nonexistent/secret/path/x.json").read()

    with caplog.at_level(logging.ERROR, logger="gemmlib"):
        at = AppTest.from_function(page).run()
    assert not at.exception
    box = at.error[0].value
    found = re.search(r"error id \*\*([0-9a-f]{8})\*\*", box)
    assert found, box
    assert "/nonexistent" not in box and "Traceback" not in box and "FileNotFoundError" not in box
    logged = [r.getMessage() for r in caplog.records if found.group(1) in r.getMessage()]
    assert logged and "Traceback" in logged[0] and "/nonexistent/secret/path" in logged[0]


# --------------------------------------------------------------------------- issue 26: policy, setup errors, sharing
@pytest.fixture
def short_tmp():
    """A private folder with a short path (the system temp folder's own, not pytest's, which under
    xdist is long): the log must hold a path whole, and a message cuts one past files.CUT characters."""
    import shutil
    import tempfile

    d = Path(tempfile.mkdtemp(prefix="gemm-"))
    yield d
    for sub in d.rglob("*"):
        if sub.is_dir():
            sub.chmod(0o700)
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def policy_file(short_tmp, monkeypatch):
    """A machine policy for the test (GEMM_POLICY_FILE; the real /etc/gemmlib/policy.toml moved out of the way)."""
    import os

    from gemmlib.core import policy

    monkeypatch.setattr(policy, "MACHINE_POLICY", short_tmp / "no-etc" / "policy.toml")
    path = short_tmp / "policy.toml"
    monkeypatch.setenv("GEMM_POLICY_FILE", str(path))

    def write(text: str, mode: int = 0o644) -> Path:
        path.write_text(text)
        os.chmod(path, mode)
        return path

    return write


@pytest.mark.parametrize("page", ["6_Precision.py", "7_Tiling.py"])
def test_every_page_obeys_the_machine_policy_over_its_secrets(secrets, policy_file, monkeypatch, page):
    secrets("GEMM_CLASSROOM = false\nGEMM_MAX_DIM = 3000\n")
    monkeypatch.setenv("GEMM_MAX_DIM", "9000")
    policy_file("GEMM_MAX_DIM = 300\n")
    at = AppTest.from_file(str(ROOT / "pages" / page), default_timeout=120).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "dimensions ≤ 300" in " ".join(c.value for c in at.caption)


def test_a_policy_that_cannot_be_trusted_shows_an_error_id_not_its_path(secrets, policy_file, caplog):
    p = policy_file("GEMM_MAX_DIM = 300\n", mode=0o666)
    with caplog.at_level(logging.ERROR, logger="gemmlib"):
        at = AppTest.from_file(str(ROOT / "pages" / "7_Tiling.py"), default_timeout=60).run()
    assert not at.exception
    err = " ".join(e.value for e in at.error)
    found = re.search(r"error id ([0-9a-f]{8})", err)
    assert "could not be read" in err and found, err
    assert str(p.parent) not in err and "666" not in err and "policy.toml" not in err
    assert any(found.group(1) in r.getMessage() and str(p) in r.getMessage() for r in caplog.records)
    assert "classroom mode" in " ".join(c.value for c in at.caption)  # and the small caps apply


def test_a_misconfigured_cache_folder_shows_an_error_id_and_logs_the_path(secrets, short_tmp, monkeypatch, caplog):
    import os

    open_cache = short_tmp / "open-cache"
    open_cache.mkdir()
    os.chmod(open_cache, 0o777)
    monkeypatch.setenv("GEMM_CACHE_DIR", str(open_cache))
    secrets("GEMM_MAX_DIM = 3000\n")
    with caplog.at_level(logging.ERROR, logger="gemmlib"):
        at = AppTest.from_file(str(ROOT / "pages" / "7_Tiling.py"), default_timeout=120).run()
        _button(at, "tb_run").click().run()
    assert not at.exception
    err = " ".join(e.value for e in at.error)
    found = re.search(r"error id \*\*([0-9a-f]{8})\*\*", err)
    assert "not set up correctly" in err and found, err
    assert str(open_cache) not in err and "777" not in err and "Check the input" not in err
    logged = [r.getMessage() for r in caplog.records if found.group(1) in r.getMessage()]
    assert logged and str(open_cache) in logged[0] and "777" in logged[0]


def test_sharing_twice_shares_each_row_once():
    from gemmlib.core.results import BenchResult, clear_recorded, recorded

    def row(name, t):
        return BenchResult(bench="tiling", name=name, device="cpu", device_name="test CPU", dtype="fp32",
                           shape={"m": 64, "n": 64, "k": 64}, flops=2 * 64**3, bytes=3 * 64 * 64 * 4,
                           median_s=t)  # kept typed in the session, as ui.keep_results keeps them

    clear_recorded()
    try:
        at = AppTest.from_file(str(ROOT / "pages" / "9_Roofline.py"), default_timeout=60)
        at.session_state["_my_results"] = [row("torch", 1e-4), row("numpy_blocked", 4e-4)]
        at.run()
        at.button(key="rf_share").click().run()
        at.button(key="rf_share").click().run()
        assert not at.exception
        assert sorted(r.name for r in recorded()) == ["numpy_blocked", "torch"]  # not four rows
        at.session_state["_my_results"] = [*at.session_state["_my_results"], row("triton", 2e-4)]
        at.run()
        at.button(key="rf_share").click().run()  # a new row is shared, the old ones are not again
        assert sorted(r.name for r in recorded()) == ["numpy_blocked", "torch", "triton"]
    finally:
        clear_recorded()
