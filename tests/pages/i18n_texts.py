"""What a page shows, read from an AppTest run: every text a reader can see or hover.

Titles, markdown, captions and alerts (``body``), widget labels, help texts, placeholders, options
and captions, page links, table headers (column_config labels, else the column names) and the text
cells of tables. The language switch itself (it names both languages on purpose) is left out.
Used by the page tests to check that a page in Chinese has no English left
(``gemm_i18n.english_words``); a page opened in a browser is checked the same way in
tests/browser/test_browser_i18n.py.
"""

from __future__ import annotations

import json
import re

import ui

MATERIAL_ICON = re.compile(r":material/[a-z0-9_]+:")
STYLE_ONLY = re.compile(r"\s*<style>.*</style>\s*", re.S)
FIELDS = ("body", "label", "help", "placeholder", "options", "captions")


def _walk(node):
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


def shown_texts(at) -> list[str]:
    out: list[str] = []
    for node in _walk(at._tree):
        proto = getattr(node, "proto", None)
        if proto is None or not hasattr(proto, "ListFields"):
            continue
        fields = {f.name: v for f, v in proto.ListFields()}
        if fields.get("query_param_key") == ui.LANG_KEY:
            continue
        for name in FIELDS:
            v = fields.get(name)
            if isinstance(v, str):
                if not STYLE_ONLY.fullmatch(v):  # a page's CSS (st.html("<style>…</style>")) draws nothing
                    out.append(v)
            elif v is not None and not hasattr(v, "ListFields"):
                out.extend(str(x) for x in v)
        if "columns" in fields and "arrow_data" in fields:  # a dataframe
            config = json.loads(fields["columns"] or "{}")
            df = node.value
            for col in df.columns:
                out.append(str(config.get(str(col), {}).get("label") or col))
                if df[col].dtype == object:
                    out.extend(str(x) for x in df[col] if isinstance(x, str))
    return [MATERIAL_ICON.sub("", t) for t in out]  # an icon's name draws as the icon, never as text
