"""A link value a page cannot use is named near the top of the page, once, with why (ui.url.link_note).

Streamlit's ``bind="query-params"`` (and ui.url's own option and tab binding, the stepper's step and the
language switch) fall back to the default for a malformed or out-of-range link value; the page says so
in one box under the title, in the reader's language, until the reader changes that widget. A value the
link leaves out, or one the page can use, says nothing.
"""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
ACC = str(ROOT / "pages" / "1_Accumulate.py")


def _open(page: str, **query: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / page) if not page.startswith("/") else page, default_timeout=60)
    at.query_params.update(query)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _notes(at: AppTest) -> list[str]:
    return [i.value for i in at.info if "Link value" in i.value or "链接" in i.value]


def test_an_out_of_range_link_value_is_named_with_its_range_and_the_default():
    at = _open(ACC, acc_src="random", acc_m="13")
    assert _notes(at) == ["Link value acc_m=13 is outside 1–12; the default 4 is used."]
    assert at.number_input(key="acc_m").value == 4  # the fallback itself is unchanged
    at.number_input(key="acc_m").set_value(6).run()  # the reader's change: the note has done its job
    assert not _notes(at) and not at.exception


def test_every_unused_value_in_one_box_and_why():
    at = _open(ACC, acc_src="zigzag", acc_present="yes", acc_alpha="abc", acc_pos="99")
    (box,) = _notes(at)
    lines = box.split("  \n")
    assert "Link value acc_src=zigzag is not one of the choices; the default “the article's example” is used." in lines
    assert "Link value acc_present=yes is not true or false; the default false is used." in lines
    assert "Link value acc_alpha=abc is not a number; the default 1 is used." in lines
    assert "Link value acc_pos=99 is outside 0–12; 12 is used." in lines  # the stepper's step (13 steps)
    assert len(lines) == 4


def test_a_corrected_value_says_what_is_used():
    at = _open(ACC, acc_src="random", acc_k="2.5")
    assert _notes(at) == ["Link value acc_k=2.5 is not a whole number; 2 is used."]


def test_a_typed_matrix_too_long_for_a_link_is_cut_and_named():
    """The typed matrices are in the link: each box takes 4,096 characters (a 12×12 matrix at 28 a number), so a
    shared link stays far under a server's 64 KiB request line; a longer link value is cut to that and named,
    the note quoting its start, not the whole text."""
    at = _open(ACC, acc_src="custom", acc_text_a="1 " * 5000)
    assert all(t.max_chars == 4096 for t in at.text_area)
    assert len(at.text_area(key="acc_text_a").value) == 4096
    assert _notes(at) == [f"Link value acc_text_a={'1 ' * 19 + '1'}… is longer than 4,096 characters; "
                          "its first 4,096 characters are used."]
    assert not _notes(_open(ACC, acc_src="custom", acc_text_a="1 2\n3 4"))


@pytest.mark.parametrize("query", [{}, {"acc_src": "random", "acc_m": "8"}, {"acc_src": "random", "acc_m": "4"},
                                   {"acc_present": "false"}, {"acc_pos": "3"}, {"lang": "en"}])
def test_absent_and_usable_values_say_nothing(query):
    assert not _notes(_open(ACC, **query))


def test_in_chinese():
    at = _open(ACC, lang="zh", acc_src="random", acc_m="13")
    assert _notes(at) == ["链接值 acc_m=13 超出 1–12 的范围；使用默认值 4。"]
    # an option's default as the reader sees it among the choices, in their language (it read the id, "article")
    assert _notes(_open(ACC, lang="zh", acc_src="zigzag")) == ["链接值 acc_src=zigzag 不是可选项之一；使用默认值 “原文的示例”。"]


def test_another_page_and_the_language_switch_use_the_same_box():
    at = _open("2_FLOPs.py", fl_k="abc", lang="fr")
    (box,) = _notes(at)
    assert "Link value fl_k=abc is not a number; the default 1024 is used." in box
    assert "Link value lang=fr is not one of the choices; the browser's language is used." in box


def test_a_link_value_with_markup_is_shown_as_text():
    at = _open(ACC, acc_src="<b>x</b>")
    (box,) = _notes(at)
    assert "<b>" not in box and "\\<b\\>x\\</b\\>" in box
