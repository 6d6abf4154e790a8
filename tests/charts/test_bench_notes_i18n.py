"""Result rows' notes and shape labels read back into their templates (``charts.bench.render_filled``,
``note_text``, ``measure.precision.shape_label``): rows travel as JSON, so a page gets the English
text only and must find the template and the values again to show them in Chinese."""

from __future__ import annotations

from gemmlib.charts.bench import note_text, render_filled
from gemmlib.measure import batching as bb
from gemmlib.measure import precision as bp
from gemmlib.measure import tiling as bt

FAKE = {  # a stand-in catalogue, so that the checks do not depend on the .po
    "tile {tile} means {calls:,} block products per call (cap {cap:,}); choose a larger tile":
        "T={tile} C={calls} CAP={cap}",
    "numpy has no bfloat16 type": "NO-BF16",
    "; ": " | ",
    "square {n}": "SQ{n}",
    "At {b} × {m}×{k} @ {k}×{n} ({dtype}), stacking is {speedup:.2f}× the loop ({t_loop:.3g} → {t_stacked:.3g} "
    "TFLOP/s).": "{b}|{m}|{k}|{n}",
}


def fake(text: str) -> str:
    return FAKE.get(text, text)


def test_a_filled_template_is_found_again_with_its_values_as_written():
    note = bt.NOTES["numpy_calls"].format(tile=8, calls=32768, cap=20000)
    assert note == "tile 8 means 32,768 block products per call (cap 20,000); choose a larger tile"
    assert render_filled(note, bt.NOTE_TEMPLATES, fake) == "T=8 C=32,768 CAP=20,000"  # formatted once, kept
    assert render_filled("tile 8 means lots", bt.NOTE_TEMPLATES, fake) is None


def test_a_placeholder_used_twice_must_carry_the_same_value():
    t = "At {b} × {m}×{k} @ {k}×{n} ({dtype}), stacking is {speedup:.2f}× the loop ({t_loop:.3g} → " \
        "{t_stacked:.3g} TFLOP/s)."
    good = t.format(b=20, m=64, k=256, n=128, dtype="fp32", speedup=1.5, t_loop=1.0, t_stacked=2.0)
    assert render_filled(good, [t], fake) == "20|64|256|128"
    bad = good.replace("@ 256×", "@ 255×", 1)  # K differs between A and B: not this template filled in
    assert render_filled(bad, [t], fake) is None


def test_a_note_is_translated_whole_or_piece_by_piece():
    cap = bb.LOOP_CAP.format(batch=5000, cap=bb.MAX_LOOP_CALLS)
    assert note_text(cap, lambda s: {"a loop of {batch} calls is above the cap of {cap}": "L{batch}/{cap}"}
                     .get(s, s), bb.NOTE_TEMPLATES) == "L5000/4096"
    note = "numpy has no bfloat16 type; " + bt.NOTES["numpy_calls"].format(tile=4, calls=10, cap=20)
    assert note_text(note, fake, bt.NOTE_TEMPLATES) == "NO-BF16 | T=4 C=10 CAP=20"
    assert note_text("a kernel `sm90_xmma`; numpy has no bfloat16 type", fake) == "a kernel `sm90_xmma` | NO-BF16"
    assert note_text(None, fake) is None and note_text("", fake) == ""
    assert note_text(note) == note  # English: unchanged


def test_shape_labels_are_read_back():
    sq = bp.square_shapes([512])[0][3]
    assert sq == "square 512" and bp.shape_label(sq, fake) == "SQ512"
    llm = bp.llm_shapes("llama-2-7b", batch=2, seq=64)
    assert [s[3] for s in llm][0] == "llama-2-7b QKV prefill (2×64 tokens)"
    zh = {bp.SHAPE_LABELS["qkv_prefill"]: "{preset} QKV 预填充（{batch}×{seq} tokens）"}
    assert bp.shape_label(llm[0][3], lambda s: zh.get(s, s)) == "llama-2-7b QKV 预填充（2×64 tokens）"
    assert bp.shape_label("40×24×16", fake) == "40×24×16"  # a custom shape's label has no words
