"""The Chinese catalogue: complete, faithful to its placeholders and formulas, in step with the
sources, consistent with the glossary; the app's in-memory compile agrees with GNU msgfmt; the
checker that lists unwrapped texts finds them (and finds none in the translated files).

The functions under test are scripts/i18n.py's (``gemm_i18n``, loaded by tests/conftest.py): the
same ones `python scripts/i18n.py check` runs.
"""

from __future__ import annotations

import gettext
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("babel")
pytest.importorskip("streamlit")  # ui.translations, the app's own lookup

import gemm_i18n as tool  # noqa: E402 - loaded by tests/conftest.py where Babel is installed
from babel.messages.catalog import Catalog, Message  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def template() -> Catalog:
    return tool.extract()


def test_extraction_sees_the_sources(template):
    """Not vacuous: the home page, ui's page list, gemmlib's marked texts and chart texts are there."""
    ids = {m.id if isinstance(m.id, str) else m.id[0] for m in template if m.id}
    assert {"GEMM, from one multiply-add to a whole LLM", "Home", "Profiler", "CPU (edit me)",
            "Arithmetic intensity by batch", "{n} thread"} <= ids
    assert len(ids) > 50


def test_the_chinese_catalogue_is_complete_and_faithful(template):
    """Every msgid translated (no empty or fuzzy entry), placeholders, formulas and code kept,
    no msgid missing from the .po and none left over: else run `python scripts/i18n.py update`."""
    problems = tool.catalogue_problems("zh", template)
    assert not problems, "\n".join(problems)


def test_the_glossary_terms_are_used_everywhere():
    assert len([t for t in tool.glossary() if t.checked]) >= 30
    problems = tool.glossary_problems("zh")
    assert not problems, "\n".join(problems)


def _msg(msgid, msgstr, fuzzy=False):
    return Message(msgid, msgstr, flags={"fuzzy"} if fuzzy else ())


@pytest.mark.parametrize("msgid, msgstr, expect", [
    ("{n:,} multiply-adds", "{n} 次乘加", "placeholders differ"),  # the format spec dropped
    ("{n:,} multiply-adds", "次乘加", "placeholders differ"),
    ("{n:,} multiply-adds", "{m:,} 次乘加", "placeholders differ"),
    ("costs $2\\,M N K$ FLOPs", "需要 $2MNK$ 次浮点运算", "formula"),
    ("run `python -m gemmlib devices`", "运行 `python -m gemmlib device`", "code"),
    ("A GEMM\ncosts", "一次 GEMM\n需要", "line break"),
    ("**Look:** the inner product", "**注意看：**内积", "bold"),  # the full-width colon keeps ** open
    ("the **$x$** value", "中**$x$**文", "bold"),
    ("A", "", "untranslated"),
    ("A", "甲", "fuzzy"),
])
def test_each_check_catches_its_fault(msgid, msgstr, expect):
    problems = tool.message_problems(_msg(msgid, msgstr, fuzzy=expect == "fuzzy"))
    assert problems and expect in problems[0]


def test_a_faithful_translation_passes_the_checks():
    ok = [("{n:,} multiply-adds", "{n:,} 次乘加"), ("costs $2\\,M N K$ FLOPs", "需要 $2\\,M N K$ 次浮点运算"),
          ("para one\n\npara two", "第一段\n\n第二段"), ("{a} then {b}", "先 {b} 后 {a}"),
          ("**Look:** the inner product", "**注意看**：内积"), ("**Check:** {m}", "**请检查输入：** {m}"),
          ("rule: **profile first**.", "规则：**先做性能分析**。")]
    for msgid, msgstr in ok:
        assert tool.message_problems(_msg(msgid, msgstr)) == [], msgid
    plural = Message(("{n} step", "{n} steps"), ("{n} 步",))
    assert tool.message_problems(plural) == []
    assert tool.message_problems(Message(("one step", "{n} steps"), ("步",)))  # {n} lost


def test_a_msgid_missing_from_the_po_is_reported(template):
    extra = Catalog()
    for m in template:
        if m.id:
            extra.add(m.id, locations=m.locations)
    extra.add("A text nobody translated yet")
    problems = tool.catalogue_problems("zh", extra)
    assert any("missing from" in p and "nobody translated" in p for p in problems)


def test_the_glossary_check_bites():
    cat = Catalog(locale="zh")
    cat.add("the arithmetic intensity of a GEMM", "GEMM 的计算密度")
    term = next(t for t in tool.glossary() if t.english == "arithmetic intensity")
    assert term.checked and "算术强度" in term.chinese
    # glossary_problems reads the real catalogue; apply its rule to this one by hand
    pat = "arithmetic intensity"
    bad = [m for m in cat if m.id and pat in m.id and not any(z in m.string for z in term.chinese)]
    assert bad


def test_the_in_memory_compile_agrees_with_gnu_msgfmt(tmp_path):
    """The app compiles the .po with Babel in memory; GNU gettext's own msgfmt (an independent
    implementation) must accept the file, check its brace formats, and give the same texts."""
    import ui

    msgfmt = shutil.which("msgfmt")
    if not msgfmt:
        pytest.skip("GNU gettext's msgfmt is not installed")
    mo = tmp_path / "gemm.mo"
    r = subprocess.run([msgfmt, "--check-format", "--check-header", "-o", str(mo), str(tool.po_path("zh"))],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with open(mo, "rb") as f:
        gnu = gettext.GNUTranslations(f)
    ours = ui.translations("zh")
    n = 0
    for m in tool.read("zh"):
        if not m.id:
            continue
        n += 1
        if isinstance(m.id, str):
            assert ours.gettext(m.id) == gnu.gettext(m.id) == m.string
        else:
            for count in (1, 2, 5):
                assert ours.ngettext(*m.id, count) == gnu.ngettext(*m.id, count) == m.string[0]
    assert n > 50


def test_runtime_lookup_and_english_fallback():
    import ui

    assert ui.translations("zh").gettext("Home") == "首页"
    assert ui.translations("en").gettext("Home") == "Home"
    assert ui.translations("xx").gettext("Home") == "Home"  # an unknown language is English
    assert ui.translations("zh").gettext("not in the catalogue") == "not in the catalogue"
    assert ui.translations("zh").ngettext("{n} thread", "{n} threads", 1) == "{n} 个线程"
    assert ui.translations("en").ngettext("{n} thread", "{n} threads", 1) == "{n} thread"
    assert ui.translations("en").ngettext("{n} thread", "{n} threads", 2) == "{n} threads"
    assert ui.lang() == "en" and ui._("Home") == "Home"  # no session: English


# ----------------------------------------------------------------------------- the todo checker
def test_the_checker_finds_unwrapped_texts(tmp_path):
    src = tmp_path / "page.py"
    src.write_text(textwrap.dedent('''
        import streamlit as st
        import ui
        from ui import _
        ui.page("A title", "x", _("an intro"))
        st.markdown("Hello **there**")
        st.caption(f"{n} steps of the animation")
        st.slider(_("speed"), 1, 9, help="steps per second")
        ui.url(st.selectbox, "Preset", ["a"], key="k")
        st.markdown(_(f"no {x}"))
        st.markdown(_("fine {n}").format(n=1))
        st.metric(_("time"), "3 ms")
        st.code("print('code is not translated')")
        st.markdown("`code only`: $M N K$")
        st.dataframe(rows, column_config={"a": "label shown"})
        st.tabs(["first tab", _("second tab")])
        st.markdown("Language · 语言")
    '''))
    todos, wrapped = tool.scan_file(src)
    texts = sorted(t.text for t in todos)
    assert texts == sorted(["A title", "Hello **there**", "steps of the animation", "steps per second",
                            "Preset", "no", "label shown", "first tab"]), texts
    assert [t.kind for t in todos if t.text == "no"] == ["f-string in _()"]
    assert wrapped == 6


def test_translated_files_have_nothing_left():
    for f in tool.TRANSLATED:
        todos, wrapped = tool.scan_file(ROOT / f)
        assert not todos, f"{f}: " + "; ".join(f"{t.line}: {t.text!r}" for t in todos)
        assert wrapped > 20


def test_ui_has_nothing_left_but_the_helpers_rewritten_elsewhere():
    files = tool.ui_files()
    assert {f.name for f in files} >= {"__init__.py", "i18n.py", "nav.py", "runbox.py", "stepper.py"}
    todos = [t for f in files for t in tool.scan_file(f)[0]]
    outside = [t for t in todos if t.func not in tool.UI_PENDING]
    assert not outside, "; ".join(f"{t.line} {t.func}: {t.text!r}" for t in outside)


def test_english_words_ignores_what_stays_as_written():
    text = ("- **CPU** AMD EPYC：2 个线程，25 GB——目录条目：*CPU（请按本机修改）*；"
            "https://www.nvidia.com/en-us/ max(FLOPs/峰值, 字节数/带宽) llama-2-7b H100 fp16 Q·Kᵀ S×S "
            "`python -m gemmlib` $D = \\alpha AB$ config.json")
    assert tool.english_words(text, ["AMD EPYC"]) == []
    assert tool.english_words("分步计算 (eager) the share", ["AMD EPYC"]) == ["eager", "the", "share"]


def test_english_words_leaves_snake_case_names_as_code():
    """An op, a config key or a function a page names (q_proj, torch_dtype, rotate_half) is code, as in
    backticks; the prose around it still counts."""
    assert tool.english_words("来自配置的 torch_dtype；q·cos + rotate_half(q)·sin；q_proj") == []
    assert tool.english_words("the model's torch_dtype") == ["the", "model's"]


def test_bold_in_the_catalogue_closes_as_markdown_reads_it():
    """Every ``**`` of every Chinese msgstr pairs under CommonMark's flanking rules (the
    ``**注意看：**`` case showed its asterisks on the Accumulate page)."""
    bad = {m.id: tool.unclosed_bold(s) for m in tool.read("zh") if m.id
           for s in (m.string if isinstance(m.string, (list, tuple)) else [m.string]) if tool.unclosed_bold(s)}
    assert not bad, bad
    zh = {m.id: m.string for m in tool.read("zh") if isinstance(m.id, str)}
    assert sum("**" in s for s in zh.values()) > 50  # not vacuous: the catalogue has bold to check
