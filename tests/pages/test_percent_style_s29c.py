"""One way to write a percentage: ``80%``, as ``gemmlib.core.format.percent`` writes it (and Python's ``:.1%``,
and Vega's ``.0%`` format), on every page, in both languages, and in the command line's text.

A reader who sees "80 %" in one sentence and "4.0%" in the next wonders whether they are two kinds of number;
Chinese typography writes 80% without a space too. Checked three ways: the Chinese catalogue (every message
the pages and charts translate, both its English and its Chinese), the texts a few pages show through AppTest
in English and Chinese, the CLI's text output (estimate, --train, --serve), and the string literals of the
code that writes user-facing text (docstrings and comments are not shown, so they are not read). JSON values
stay fractions: they are not text.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
from pathlib import Path

import gemm_i18n
import pytest
from i18n_texts import shown_texts
from streamlit.testing.v1 import AppTest

from gemmlib.core import format as fmt

ROOT = Path(__file__).resolve().parents[2]

# A number, a {placeholder} or a closing bracket, then a space (or a no-break / thin one) before "%"; or the
# full-width ％. Not "%" after a word ("% measured peak", a column named for its unit) nor printf ("%s", "%.4g").
SPACED = re.compile(r"(?:\d|\}|\))[ \u00a0\u202f\u2009]%(?![sdfgr(])|％")


def spaced(text: str) -> list[str]:
    return [text[max(0, m.start() - 30):m.end() + 10] for m in SPACED.finditer(text)]


def test_the_formatter_writes_no_space() -> None:
    assert fmt.percent(0.973) == f"{0.973:.1%}" == "97.3%"
    assert fmt.for_lang("zh").percent(0.8, 0) == "80%"
    assert spaced("GEMMs ≥ 80 % of the time") and spaced("{share} %") and spaced("80％")
    assert not spaced("GEMMs ≥ 80% of the time") and not spaced("“% measured peak”") and not spaced("%.4g")


def test_every_translated_message_writes_percent_one_way() -> None:
    bad = []
    for m in gemm_i18n.read("zh"):
        if not m.id:
            continue
        ids = m.id if isinstance(m.id, (list, tuple)) else (m.id,)
        strs = m.string if isinstance(m.string, (list, tuple)) else (m.string,)
        for text in (*ids, *strs):
            bad += [f"{ids[0][:60]!r}: {s!r}" for s in spaced(text or "")]
    assert not bad, "write 80% (no space) in the catalogue:\n" + "\n".join(bad)


def _literals(path: Path) -> list[tuple[int, str]]:
    """The string literals of a module that are not docstrings; an f-string with its fields as {}."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skip.add(id(first.value))
        if isinstance(node, ast.JoinedStr):
            skip.update(id(v) for v in node.values)
    out = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append((node.lineno, node.value))
        elif isinstance(node, ast.JoinedStr):
            out.append((node.lineno, "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)))
    return out


SOURCES = ["app.py", "ui", "pages", "gemmlib", "scripts", "benchmarks"]


def test_the_code_writes_percent_one_way() -> None:
    bad = []
    for name in SOURCES:
        p = ROOT / name
        for f in [p] if p.is_file() else sorted(p.rglob("*.py")):
            for line, text in _literals(f):
                bad += [f"{f.relative_to(ROOT)}:{line}: {s!r}" for s in spaced(text)]
    assert not bad, "write 80% (no space), or format.percent(x):\n" + "\n".join(bad)


PAGES = [("app.py", {}), ("pages/10_Profiler.py", {}), ("pages/2_FLOPs.py", {})]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page, query", PAGES, ids=[p for p, _ in PAGES])
def test_pages_write_percent_one_way(page: str, query: dict, lang: str) -> None:
    at = AppTest.from_file(str(ROOT / page), default_timeout=120)
    at.query_params.update({"lang": lang, **query})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    texts = shown_texts(at)
    assert any("%" in t for t in texts), "the page shows a percentage"  # not vacuous
    bad = [s for t in texts for s in spaced(t)]
    assert not bad, f"{page} ({lang}) writes a spaced percent:\n" + "\n".join(bad)


@pytest.mark.parametrize("argv", [
    ["estimate", "--preset", "llama-2-7b", "--batch", "4", "--seq-len", "512", "--new-tokens", "16"],
    ["estimate", "--preset", "llama-2-7b", "--gpus", "8", "--tp", "8", "--train", "--train-tokens", "1e12"],
    ["estimate", "--preset", "llama-2-7b", "--serve", "--seq-len", "512", "--new-tokens", "64"],
], ids=["estimate", "train", "serve"])
def test_the_cli_writes_percent_one_way(argv: list[str]) -> None:
    from gemmlib.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(argv) == 0
    text = out.getvalue()
    assert "%" in text  # not vacuous: the output has percentages
    bad = spaced(text)
    assert not bad, "\n".join(bad)
