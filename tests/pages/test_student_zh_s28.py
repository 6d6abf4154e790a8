"""The benchmark pages as a student runs them in Chinese on a laptop CPU (review s28, brief E).

- Tiling, section 4: the wave caption's two ends are clauses ("N = 8,192: 2,048 tiles in 16 waves; N = 8,704:
  …"); joined with the list comma they read "…16 个波次、N = 8,704…" in Chinese, as if the two were items.
"""

from __future__ import annotations

from gemmlib.views import tiling as tv
from ui.i18n import translations

ZH = translations("zh").gettext


def _waves(ns: list[int], tile=(128, 256), sms=132, mk=8192) -> list[dict]:
    out = []
    for n in ns:
        tiles = -(-mk // tile[0]) * -(-n // tile[1])
        out.append({"n": n, "tiles": tiles, "waves": -(-tiles // sms)})
    return out


def test_the_wave_captions_two_ends_are_clauses_not_list_items():
    pred = _waves([8192, 8448, 8704])
    en = tv.wave_caption(pred, (128, 256), 132)
    assert "N = 8,192: 2,048 tiles in 16 waves; N = 8,704: 2,176 tiles in 17 waves." in en
    zh = tv.wave_caption(pred, (128, 256), 132, gettext=ZH)
    assert "16 个波次；N = 8,704" in zh, zh  # the clause separator
    assert "、N = 8,704" not in zh and "，N = 8,704" not in zh
