"""Text for markdown: the escaping every visitor-supplied text goes through, and the app's log.

Text a visitor supplied (file names, config values, matrix cells, error messages that quote them)
goes through ``md()`` before it reaches any Streamlit call that renders markdown, so it shows as the
characters typed and can never become an image, a link or formatting.
"""

from __future__ import annotations

import logging
import re
import sys
from typing import Any, TypeVar

T = TypeVar("T")

log = logging.getLogger("gemmlib.app")
if not logging.getLogger("gemmlib").handlers:
    _h = logging.StreamHandler(sys.stderr)
    _h.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger("gemmlib").addHandler(_h)
    logging.getLogger("gemmlib").setLevel(logging.INFO)

# What can turn text into markup: emphasis, code, links and images (no "[", no link), autolinks,
# HTML, headings, tables, strike-through, LaTeX and Streamlit's ":colour[...]" / ":material/...:"
# directives. An underscore inside a word ("kv_heads") cannot emphasise anything and stays.
_MD_SPECIAL = re.compile(r"([\\`*\[\]<>#!|~$:]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
_MD_LEAD = re.compile(r"^(\d*)([-+=.)])")  # a list item or heading marker at the start of the text
_MD_WWW = re.compile(r"(?i)\b(www)\.")  # a GFM autolink literal without a scheme


def md(text: Any) -> str:
    """``text`` made safe for any markdown-rendering call: the characters that make markup are
    backslash-escaped (CommonMark shows them literally) and line breaks become spaces, so user text
    can never turn into an image, a link, formatting, LaTeX or a Streamlit colour directive."""
    s = _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))
    s = _MD_WWW.sub(r"\1\\.", s)
    return _MD_LEAD.sub(lambda m: m.group(1) + "\\" + m.group(2), s)


def strip_paths(text: str) -> str:
    """``text`` with absolute file paths reduced to their file name (visitors need no server paths)."""
    return re.sub(r"(?<![\\w.])/(?:[^\s/:]+/)+([^\s/:]+)", r"\1", text)
