"""Build the Chinese UI's web-font fallback: Noto Sans CJK SC cut down to the characters the app shows.

A browser on a machine without a CJK font would draw the Chinese UI, and the language switch on every
page ("Language · 语言", "简体中文"), as missing-glyph boxes. Streamlit serves ``static/`` (the
``server.enableStaticServing`` option) and ``.streamlit/config.toml`` declares these files as the font
family "GEMM CJK" for the CJK ranges only, after the fonts a machine may already have, so a browser
downloads them only when it has nothing better.

    python3 scripts/cjk_font.py          # writes static/gemm-cjk-{400,700}.woff2 (needs fonts-noto-cjk)
    python3 scripts/cjk_font.py --check  # exit 1 if a shown character is missing from the files

The characters: every CJK character of the Chinese catalogue (locales/zh) and of the app's own source (the
language names). Rerun after a translation adds characters; tests/test_cjk_font.py fails until then.
The fonts are Google's Noto Sans CJK SC (SIL Open Font License 1.1: static/OFL.txt), from Debian's
fonts-noto-cjk.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "static"
FAMILY = "Noto Sans CJK SC"
SOURCES = {400: Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"),
           700: Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc")}
# The ranges the font is declared for (config.toml's unicodeRange): CJK punctuation, ideographs, full-width forms.
CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def out_path(weight: int) -> Path:
    return STATIC / f"gemm-cjk-{weight}.woff2"


def shown_characters() -> set[str]:
    """Every CJK character the app can show: the Chinese catalogue and the app's own source files."""
    files = [*(ROOT / "locales").rglob("*.po"), ROOT / "app.py", *(ROOT / "pages").glob("*.py"),
             *(ROOT / "ui").glob("*.py")]
    chars: set[str] = set()
    for f in files:
        chars |= set(CJK.findall(f.read_text(encoding="utf-8")))
    return chars


def covered(path: Path) -> set[str]:
    from fontTools.ttLib import TTFont

    return {chr(c) for c in TTFont(path)["cmap"].getBestCmap()}


def build() -> None:
    from fontTools import subset
    from fontTools.ttLib import TTCollection

    chars = sorted(shown_characters())
    STATIC.mkdir(exist_ok=True)
    for weight, src in SOURCES.items():
        if not src.exists():
            sys.exit(f"{src} is missing: install Debian's fonts-noto-cjk to build the web font")
        font = next(f for f in TTCollection(str(src)).fonts if f["name"].getDebugName(1) == FAMILY)
        opts = subset.Options()
        opts.flavor, opts.hinting, opts.desubroutinize, opts.name_IDs = "woff2", False, True, ["*"]
        sub = subset.Subsetter(opts)
        sub.populate(text="".join(chars))
        sub.subset(font)
        font.flavor = "woff2"
        font.save(out_path(weight))
        print(f"{out_path(weight).relative_to(ROOT)}: {len(chars)} characters, {out_path(weight).stat().st_size:,} bytes")


def check() -> int:
    want = shown_characters()
    bad = 0
    for weight in SOURCES:
        missing = want - covered(out_path(weight))
        if missing:
            bad += 1
            print(f"{out_path(weight).name} lacks {len(missing)} shown character(s): {''.join(sorted(missing))[:60]}"
                  " — run python3 scripts/cjk_font.py")
    return 1 if bad else 0


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="only check that the files cover every shown character")
    sys.exit(check() if p.parse_args().check else build())
