"""The Roofline page's "Against published measurements" through AppTest: folded (nothing computed on the page's
first render), opened by a click or by the Estimator's link (?rf_published=true), in English and in Chinese, its
tables and summaries the same as ``python -m gemmlib validate --published --json``'s."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import gemm_i18n
import pytest
from streamlit.testing.v1 import AppTest

from gemmlib.views import published as pv

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "9_Roofline.py")


@pytest.fixture(scope="module")
def cli() -> dict:
    out = subprocess.run([sys.executable, "-m", "gemmlib", "validate", "--published", "--json"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture
def counted(monkeypatch):
    """How many times the section estimated the table (the cache emptied first, as on a new server)."""
    calls = []
    real = pv.table

    def table(*a, **kw):
        calls.append(a)
        return real(*a, **kw)

    monkeypatch.setattr(pv, "table", table)
    pv._computed.cache_clear()
    yield calls
    pv._computed.cache_clear()


def _run(lang: str | None = None, opened: bool = False) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    if lang:
        at.query_params["lang"] = lang
    if opened:
        at.query_params[pv.EXPANDER_KEY] = "true"  # as the Estimator's link opens it
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _published_tables(at: AppTest) -> list:
    return [d.value for d in at.dataframe if "run" in d.value.columns]


def test_folded_on_the_first_render_and_nothing_computed(counted):
    at = _run()
    assert "Against published measurements" in [s.value for s in at.subheader]
    assert any(e.label.startswith("The estimate against published training and serving runs") for e in at.expander)
    assert _published_tables(at) == [] and counted == []  # the page's first render pays nothing for it


def test_opened_by_a_click_shows_the_clis_table_once_per_server(cli, counted):
    at = _run()
    at.session_state[pv.EXPANDER_KEY] = True  # the reader opens it
    at.run()
    assert not at.exception
    tables = _published_tables(at)
    kinds = [k for k in ("training", "inference") if any(r["kind"] == k for r in cli["rows"])]
    assert len(tables) == len(kinds) == 2
    for df, kind in zip(tables, kinds, strict=True):
        rows = [r for r in cli["rows"] if r["kind"] == kind]
        assert len(df) == len(rows)
        assert list(df["error"]) == [f"{r['error']:+.0%}" for r in rows]
        assert list(df["setup"]) == [r["setup"] for r in rows]
        assert list(df["link"])[0].startswith("https://")
    captions = [c.value for c in at.caption]
    for kind in kinds:
        s = cli["summary"][kind]
        line = (f"{kind.capitalize()}: {s['estimated']} of {s['rows']} estimated; median |error| "
                f"{s['median_abs_error']:.0%}, worst {s['worst_abs_error']:.0%}. ")
        assert any(c.startswith(line) for c in captions), line
    assert len(counted) == 1
    _run(opened=True)  # another session on the same server: no second estimate
    assert len(counted) == 1


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_estimators_link_opens_it_in_either_language(cli, lang):
    at = _run(lang, opened=True)
    tables = _published_tables(at)
    assert [len(t) for t in tables] == [sum(r["kind"] == k for r in cli["rows"]) for k in ("training", "inference")]
    captions = [c.value for c in at.caption]
    s = cli["summary"]["training"]
    head = ("训练：{r} 次中估算了 {e} 次；|误差| 中位数 {m}，最大 {w}。" if lang == "zh" else
            "Training: {e} of {r} estimated; median |error| {m}, worst {w}. ").format(
        r=s["rows"], e=s["estimated"], m=f"{s['median_abs_error']:.0%}", w=f"{s['worst_abs_error']:.0%}")
    assert any(c.startswith(head) for c in captions), (head, captions)
    if lang == "zh":
        assert "与公开测量对比" in [x.value for x in at.subheader]
        assert any("与实测相差 15% 以内" in c for c in captions)
        # no English prose left in the section's words (the frameworks' and engines' names aside)
        names = [*pv.FRAMEWORKS.values(), *pv.ENGINES.values()]
        mine = [c for c in captions if c.startswith(("训练", "推理"))]
        assert len(mine) == 2 and not {c: gemm_i18n.english_words(c, names) for c in mine
                                       if gemm_i18n.english_words(c, names)}
