"""The Chinese UI's web-font fallback (static/gemm-cjk-*.woff2, scripts/cjk_font.py): it covers every CJK
character the app shows, and .streamlit/config.toml serves and declares it for the CJK ranges only."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("fontTools")
_spec = importlib.util.spec_from_file_location("cjk_font", ROOT / "scripts" / "cjk_font.py")
cjk_font = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cjk_font)


def test_the_subset_covers_every_shown_character():
    shown = cjk_font.shown_characters()
    assert {"语", "言", "简", "体", "中", "文"} <= shown and len(shown) > 500  # the switch and the catalogue are read
    for weight in (400, 700):
        missing = shown - cjk_font.covered(cjk_font.out_path(weight))
        assert not missing, f"run python3 scripts/cjk_font.py: {weight} lacks {''.join(sorted(missing))[:40]}"
    assert cjk_font.check() == 0


def test_a_missing_character_is_found(tmp_path, monkeypatch):
    """Not vacuous: a character the font lacks is reported."""
    monkeypatch.setattr(cjk_font, "shown_characters", lambda: {"语", "龘"})  # 龘: in no UI text
    assert cjk_font.check() == 1


def test_the_config_serves_and_declares_it():
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert cfg["server"]["enableStaticServing"] is True
    families = [f.strip() for f in cfg["theme"]["font"].split(",")]
    assert families.index("GEMM CJK") == len(families) - 2  # after every installed font, before sans-serif
    faces = cfg["theme"]["fontFaces"]
    assert {f["weight"] for f in faces} == {"400", "700"}
    for f in faces:
        assert f["family"] == "GEMM CJK" and f["unicodeRange"] == "U+3000-303F, U+4E00-9FFF, U+FF00-FFEF"
        assert (ROOT / f["url"].removeprefix("app/")).is_file()
    assert "Open Font License" in (ROOT / "static" / "OFL.txt").read_text(encoding="utf-8")
