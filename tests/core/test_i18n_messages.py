"""gemmlib's messages: English for the CLI, a template and values for the pages to translate."""

import pickle

import pytest

from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_, Msg, english, render
from gemmlib.measure.safety import BusyError

ZH = {"M must be at most {limit:,}, got {m:,}": "M 最多为 {limit:,}，实际为 {m:,}",
      "{n} GEMMs": "{n} 个 GEMM", "broken": "坏的 {nope}"}


def zh(s: str) -> str:
    return ZH.get(s, s)


def test_n_marks_and_returns_the_text_unchanged():
    assert N_("Home") == "Home" and english("x {y}") == "x {y}"


def test_input_error_reads_in_english_and_renders_a_translation():
    e = InputError(N_("M must be at most {limit:,}, got {m:,}"), limit=16384, m=100000)
    assert str(e) == "M must be at most 16,384, got 100,000"  # the CLI's one line, as before
    assert isinstance(e, ValueError)
    assert e.template == "M must be at most {limit:,}, got {m:,}" and e.params == {"limit": 16384, "m": 100000}
    assert e.render(zh) == "M 最多为 16,384，实际为 100,000"


def test_a_plain_sentence_still_works_and_its_braces_are_not_formatted():
    e = InputError("type a matrix as [[1,2],{3,4}]")
    assert str(e) == "type a matrix as [[1,2],{3,4}]" and e.render(zh) == str(e)


def test_a_translation_that_breaks_its_placeholders_falls_back_to_english():
    assert render("broken", {"x": 1}, zh) == "broken"


def test_msg_is_immutable_comparable_and_english_by_default():
    m = Msg(N_("{n} GEMMs"), n=7)
    assert str(m) == "7 GEMMs" and m.render(zh) == "7 个 GEMM"
    assert m == Msg("{n} GEMMs", n=7) and m != Msg("{n} GEMMs", n=8) and hash(m) == hash(Msg("{n} GEMMs", n=7))
    with pytest.raises(AttributeError):
        m.template = "x"
    assert "n=7" in repr(m)


@pytest.mark.parametrize("cls", [InputError, BusyError])
def test_messages_survive_pickling_with_their_template(cls):
    """A benchmark worker process hands errors back pickled: the page must still translate them."""
    e = cls(N_("M must be at most {limit:,}, got {m:,}"), limit=1, m=2)
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is cls and str(back) == str(e) and back.args == e.args
    assert back.template == e.template and back.params == e.params
    m = Msg("{n} GEMMs", n=3)
    assert pickle.loads(pickle.dumps(m)) == m
