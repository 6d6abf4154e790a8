"""One Chinese word per technical term across the whole Chinese catalogue (locales/zh/LC_MESSAGES/gemm.po).

A teacher projects the Chinese pages in class: "内核" on one page and "核函数" on the next, or "重算" in one
caption and "重计算" in the label beside it, read as two different things. Each row below names an English
term, the rendering chosen for it (docs/i18n-glossary.md's where the glossary has the term, otherwise the one
Chinese GPU / LLM writing and NVIDIA's Chinese documentation use) and the renderings that are rejected, so
that a new translation that brings one back fails here with the message and the word to change.

The glossary's ✓ rows (scripts/i18n.py check) say what a translation must contain; this table says what it
must not. Code (`…`), formulas ($…$), {placeholders} and quoted names are not translations and are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

pytest.importorskip("babel")

import gemm_i18n  # noqa: E402 - loaded by tests/conftest.py from scripts/i18n.py


@dataclass(frozen=True)
class Term:
    english: str  # a regex over the msgid (case-insensitive): the messages the rejected words are looked for in
    chosen: str
    rejected: tuple[str, ...]  # regexes over the translation
    everywhere: bool = False  # the rejected words are wrong in every message, whatever its msgid says


TERMS = [
    Term(r"\bkernels?\b", "核函数", ("内核", "内核函数", "核心函数"), everywhere=True),
    Term(r"recomput", "重计算", ("重算",), everywhere=True),
    Term(r"\blaunch", "启动", ("发射",), everywhere=True),
    Term(r"\bestimat", "估算", ("估计", "预估"), everywhere=True),
    Term(r"\btokens?\b", "token", ("词元", "令牌"), everywhere=True),
    Term(r"\bprefill", "预填充", ("预填(?!充)",), everywhere=True),
    Term(r"\bdecod", "解码", ("译码",), everywhere=True),
    Term(r"\btil(e|es|ed|ing)\b", "分块", ("瓦片", "图块", "平铺")),
    Term(r"roofline", "屋顶线", ("车顶线", "屋脊线", "屋顶模型"), everywhere=True),
    Term(r"throughput", "吞吐量", ("通量", "吞吐率"), everywhere=True),
    Term(r"latency", "延迟", ("时延", "延时"), everywhere=True),
    Term(r"tensor.parallel", "张量并行", ("张量平行",), everywhere=True),
    Term(r"warm.?up", "预热", ("热身",), everywhere=True),
    Term(r"\bwaves?\b", "波次", ("波浪",)),
    Term(r"epilogue", "收尾", ("尾声", "后处理", "结尾处理"), everywhere=True),
    Term(r"accumulat", "累加", ("积累", "累积")),
    Term(r"\bpeaks?\b", "峰值", ("巅峰", "尖峰"), everywhere=True),
    Term(r"ceiling", "上限", ("天花板",), everywhere=True),
    Term(r"batch size", "批大小", ("批量大小", "批次大小", "批尺寸"), everywhere=True),
    Term(r"interconnect", "互联", ("互连",), everywhere=True),  # the glossary's 互联
    Term(r"memory-bound", "访存受限", ("内存受限", "显存受限", "带宽受限"), everywhere=True),
    Term(r"compute-bound", "计算受限", ("算力受限",), everywhere=True),
    Term(r"utili[sz]ation", "利用率", ("使用率",), everywhere=True),
    Term(r"\bmeasured\b", "实测", ("量测", "實測"), everywhere=True),
    Term(r"transformer block", "Transformer 模块", (r"Transformer 块",), everywhere=True),
    Term(r"\bFLOPs?\b", "浮点运算", ("浮点操作",), everywhere=True),
    Term(r"\branks?\b", "rank", ("进程（rank）", "个进程上", "专家进程", "并行进程", "一个进程", "进程数", "进程排布")),
    Term(r"\bbandwidth\b", "带宽利用率", ("带宽利用(?!率)",), everywhere=True),
    # arithmetic intensity's unit: one way, as the Roofline axis and the Batching page write it
    Term(r"FLOPs? ?(per|/) ?byte|arithmetic intensity", "FLOP/字节", (r"每字节的? ?FLOP",), everywhere=True),
]

# A space between two Chinese words reads as a typo (the rest of the catalogue has none): "与 权重·V".
_SPACED = re.compile(r"[\u4e00-\u9fff] [\u4e00-\u9fff]")

# English words that must not be left in a Chinese sentence when the msgid says them: the Chinese term exists.
# (A word followed by its gloss, "prefill（预填充）", names a value the user types and stays.)
ENGLISH_LEFT = {
    r"\bkernels?\b": "核函数",
    r"\broofline\b": "屋顶线",
    r"\bthroughput\b": "吞吐量",
    r"\blatency\b": "延迟",
    r"\bepilogue\b": "收尾",
    r"\bwaves?\b": "波次",
    r"\bwarm-?up\b": "预热",
    r"\bprefill\b": "预填充",
    r"\bdecode\b": "解码",
}

_SKIP = re.compile(r"`[^`\n]*`|\$\$.+?\$\$|\$[^$\n]+?\$|\{[^{}]*\}|'[^'\n]*'|\"[^\"\n]*\"|“[^”\n]*”|--[\w-]+"
                   r"|\b\w+_\w+\b", re.S)


def _text(s: str) -> str:
    return _SKIP.sub(" ", s)


def _messages() -> list[tuple[str, str]]:
    out = []
    for m in gemm_i18n.read("zh"):
        if not m.id:
            continue
        ids = m.id if isinstance(m.id, (list, tuple)) else (m.id,)
        strs = m.string if isinstance(m.string, (list, tuple)) else (m.string,)
        out.extend((" ".join(ids), s) for s in strs if s)
    return out


@pytest.fixture(scope="module")
def messages() -> list[tuple[str, str]]:
    return _messages()


@pytest.mark.parametrize("term", TERMS, ids=[t.chosen for t in TERMS])
def test_one_rendering_per_term(term: Term, messages) -> None:
    eng = re.compile(term.english, re.I)
    bad = []
    for msgid, msgstr in messages:
        if not (term.everywhere or eng.search(_text(msgid))):
            continue
        for word in term.rejected:
            if re.search(word, _text(msgstr)):
                bad.append(f"{msgid[:70]!r}: {word!r} -> {term.chosen!r} in {msgstr[:90]!r}")
    assert not bad, f"{term.english} reads {term.chosen!r} in the Chinese UI:\n" + "\n".join(bad)


@pytest.mark.parametrize("english", list(ENGLISH_LEFT), ids=list(ENGLISH_LEFT.values()))
def test_no_english_term_left_in_a_chinese_sentence(english: str, messages) -> None:
    eng = re.compile(english, re.I)
    bad = []
    for msgid, msgstr in messages:
        text = _text(msgstr)
        if not re.search(r"[\u4e00-\u9fff]", text):
            continue  # not a Chinese sentence (a name, a unit, a code value)
        for m in eng.finditer(text):
            if text[m.end():m.end() + 1] != "（":
                bad.append(f"{msgid[:70]!r}: {m.group(0)!r} -> {ENGLISH_LEFT[english]!r} in {msgstr[:90]!r}")
    assert not bad, "English left in Chinese sentences:\n" + "\n".join(bad)


def test_no_space_between_two_chinese_words(messages) -> None:
    bad = [f"{msgid[:70]!r}: {msgstr[:120]!r}" for msgid, msgstr in messages
           if _SPACED.search(re.sub(r"\{[^{}]*\}", "x", msgstr))]
    assert not bad, "a space between two Chinese words:\n" + "\n".join(bad)


# A space between a Chinese character and the ** of bold whose own edge is Chinese: "然后点 **运行基准测试**" shows a
# gap no Chinese sentence has. Markdown bolds "点**运行基准测试**" all the same (CommonMark's flanking rules: neither
# side is punctuation); where the bold's edge is punctuation ("**断崖：** 从", "编号 **{eid}**") the space is what
# lets Markdown pair the asterisks (gemm_i18n.unclosed_bold), and Latin keeps its usual space ("用 **fp16**").
_CJK = "\u2e80-\u9fff\u3000-\u303f\uff00-\uffef"
_BOLD_SPACED = re.compile(rf"(?<=[{_CJK}]) (?=\*\*[\u2e80-\u9fff])|(?<=[\u2e80-\u9fff]\*\*) (?=[{_CJK}])")


def bold_gaps(msgstr: str) -> list[str]:
    """The spaces beside bold in ``msgstr`` that could go with every ** still paired."""
    return [msgstr[max(0, m.start() - 10):m.end() + 10] for m in _BOLD_SPACED.finditer(msgstr)
            if not gemm_i18n.unclosed_bold(msgstr[:m.start()] + msgstr[m.end():])]


def test_no_space_between_chinese_and_bold(messages) -> None:
    bad = [f"{msgid[:70]!r}: {bold_gaps(msgstr)}" for msgid, msgstr in messages if bold_gaps(msgstr)]
    assert not bad, "a space between Chinese text and bold (**…**) shows as a gap; write 点**运行**:\n" + "\n".join(bad)


def test_the_bold_rule_keeps_the_spaces_markdown_needs() -> None:
    assert bold_gaps("然后点 **运行基准测试**。") and bold_gaps("见**训练** 标签页")
    assert not bold_gaps("然后点**运行基准测试**。")
    assert not bold_gaps("**断崖：** 从 N")  # "：**从" would leave the asterisks showing
    assert not bold_gaps("错误编号 **{eid}** 查到")  # "号**{" opens nothing
    assert not bold_gaps("再分别用 **fp16**、**fp32** 和")  # Chinese beside Latin keeps its space


def test_the_table_rejects_what_it_should() -> None:
    """The rules catch the renderings this file was written against (each once in the catalogue)."""
    kernel = next(t for t in TERMS if t.chosen == "核函数")
    assert any(re.search(w, _text("这个 PyTorch 没有 torch._scaled_mm 的 CPU 内核")) for w in kernel.rejected)
    prefill = next(t for t in TERMS if t.chosen == "预填充")
    assert not any(re.search(w, "预填充阶段") for w in prefill.rejected)
    assert any(re.search(w, "预填阶段") for w in prefill.rejected)
    # names and code are not translations
    assert "kernel" not in _text("config.json 字段 'vision_config.merge_kernel_size' 与 `{kernel}`")
