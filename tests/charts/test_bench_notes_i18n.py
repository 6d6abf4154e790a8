"""Result rows' notes and shape labels are messages (``charts.bench.note_text``,
``measure.precision.shape_label``): made as a Text with their values, they reach a page as one (through
the worker's pipe too, ``core.codec``) and are shown in its language; nothing reads English back."""

from __future__ import annotations

import json

from gemmlib.charts.bench import note_text
from gemmlib.core import codec
from gemmlib.core.i18n import N_, Text
from gemmlib.core.results import BenchResult
from gemmlib.measure import batching as bb
from gemmlib.measure import precision as bp
from gemmlib.measure import tiling as bt

FAKE = {  # a stand-in catalogue, so that the checks do not depend on the .po
    "tile {tile} means {calls:,} block products per call (cap {cap:,}); choose a larger tile":
        "T={tile} C={calls:,} CAP={cap:,}",
    "numpy has no bfloat16 type": "NO-BF16",
    "; ": " | ",
    "square {n}": "SQ{n}",
    "a loop of {batch} calls is above the cap of {cap}": "L{batch}/{cap}",
}


def fake(text: str) -> str:
    return FAKE.get(text, text)


def _row(reason: str) -> BenchResult:
    return BenchResult("tiling", "numpy_blocked", "cpu", "a CPU", "fp32", {"m": 8, "label": Text(N_("square {n}"), n=8)},
                       1.0, 1.0, supported=False, reason=reason)


def test_a_note_is_its_template_and_values_across_the_pipe():
    note = Text.joined([N_("numpy has no bfloat16 type"),
                        Text(bt.NOTES["numpy_calls"], tile=4, calls=32768, cap=20000)])
    assert note == "numpy has no bfloat16 type; tile 4 means 32,768 block products per call (cap 20,000); choose a " \
                   "larger tile"  # the English (CLI, JSON) as it always was
    back = codec.decode(list[BenchResult], json.loads(json.dumps(codec.encode([_row(note)]))))[0]
    assert note_text(back.reason, fake) == "NO-BF16 | T=4 C=32,768 CAP=20,000"
    assert note_text(back.reason) == note  # English: unchanged
    assert bp.shape_label(back.shape["label"], fake) == "SQ8"


def test_a_note_that_is_a_constant_or_plain_text():
    cap = Text(bb.LOOP_CAP, batch=5000, cap=bb.MAX_LOOP_CALLS)
    assert note_text(cap, fake) == "L5000/4096"
    assert note_text("numpy has no bfloat16 type", fake) == "NO-BF16"  # a constant of the catalogue
    assert note_text("a kernel `sm90_xmma`", fake) == "a kernel `sm90_xmma`"  # no words of the catalogue
    assert note_text(None, fake) is None and note_text("", fake) == ""


def test_shape_labels_are_messages():
    sq = bp.square_shapes([512])[0][3]
    assert sq == "square 512" and bp.shape_label(sq, fake) == "SQ512"
    llm = bp.llm_shapes("llama-2-7b", batch=2, seq=64)
    assert [s[3] for s in llm][0] == "llama-2-7b QKV prefill (2×64 tokens)"
    zh = {bp.SHAPE_LABELS["qkv_prefill"]: "{preset} QKV 预填充（{batch}×{seq} tokens）"}
    assert bp.shape_label(llm[0][3], lambda s: zh.get(s, s)) == "llama-2-7b QKV 预填充（2×64 tokens）"
    assert bp.shape_label("40×24×16", fake) == "40×24×16"  # a custom shape's label has no words
    assert bp.shape_label(bp.ARTICLE_SHAPE[3], lambda s: {"article {shape}": "文章 {shape}"}.get(s, s)) == \
        "文章 1024×4096·4096×1024"
