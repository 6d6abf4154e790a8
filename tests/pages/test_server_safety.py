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
    _button(at, BENCH_PAGES[page]).click().run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert any("GEMM_MAX_CPU_GFLOP" in e for e in errors), errors  # the secrets' cap refused the run


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
