#!/usr/bin/env python3
"""The translation workflow of the app: extract → update → compile, plus two checks.

    python scripts/i18n.py extract   # sources (babel.cfg) -> locales/gemm.pot (not committed)
    python scripts/i18n.py update    # .pot -> locales/<lang>/LC_MESSAGES/gemm.po (new msgids empty,
                                     # changed ones fuzzy with the previous text, gone ones removed)
    python scripts/i18n.py compile   # compile each .po in memory, print its statistics
    python scripts/i18n.py check     # every msgid translated, placeholders/formulas/code kept,
                                     # glossary terms used, catalogue in step with the sources
    python scripts/i18n.py todo [--list] [FILE…]   # texts shown to users that are not wrapped yet
    python scripts/i18n.py all       # extract, update, compile, check

Independent of ``python -m gemmlib`` and of Streamlit: Babel's own Python API only, so that the
tests (tests/test_i18n.py) run the very same functions. The app compiles the .po itself at first
use (ui.translations); nothing compiled is committed.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import string
import sys
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[1]
MAPPING = ROOT / "babel.cfg"
LOCALES = ROOT / "locales"
DOMAIN = "gemm"
POT = LOCALES / f"{DOMAIN}.pot"
LANGS = ("zh",)  # translated languages (English is the msgids themselves)
GLOSSARY = ROOT / "docs" / "i18n-glossary.md"
COMMENT_TAGS = ("i18n:",)  # `# i18n: note` on the line before a call reaches the translator
WIDTH = 100

# Files whose every text is wrapped (phase 1: the home page; phase 2: the pages one by one). A file
# listed here must show 0 in `todo`, and the browser test opens it in Chinese and finds no English
# left. Add a page here when it is translated.
TRANSLATED = ["app.py", "pages/1_Accumulate.py", "pages/2_FLOPs.py", "pages/3_Transformer_GEMMs.py",
              "pages/4_LLM_Estimator.py", "pages/5_Devices.py", "pages/6_Precision.py", "pages/7_Tiling.py", "pages/8_Batching.py",
              "pages/9_Roofline.py", "pages/10_Profiler.py", "pages/11_Multi_GPU.py"]
# ui/'s helpers (functions) still to be wrapped (none left: the stepper, the benchmark status box and the
# server's limits are wrapped too).
UI_PENDING: set[str] = set()

HEADER = """\
# Simplified Chinese (简体中文) texts of the GEMM app.
# Terms: docs/i18n-glossary.md (the article's own terms first). Numbers, units, formulas ($…$)
# and code (`…`) stay exactly as in the msgid; {placeholders} too (tests/test_i18n.py).
# Workflow: python scripts/i18n.py all  (README, "简体中文 / Chinese UI").
#"""


def po_path(lang: str) -> Path:
    return LOCALES / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


# ----------------------------------------------------------------------------- extract / update / compile
def _method_map() -> tuple[list[tuple[str, str]], dict]:
    if str(ROOT) not in sys.path:  # babel.cfg names gemmlib's own extractor for its JSON catalogue
        sys.path.insert(0, str(ROOT))
    with open(MAPPING, encoding="utf-8") as f:
        return parse_mapping_cfg(f, filename=str(MAPPING))


def extract() -> Catalog:
    """Every message of the sources named by babel.cfg, as a template catalogue."""
    method_map, options_map = _method_map()
    cat = Catalog(project="gemm", domain=DOMAIN, header_comment=HEADER, fuzzy=False)
    found = list(extract_from_dir(str(ROOT), method_map, options_map, keywords=DEFAULT_KEYWORDS,
                                  comment_tags=COMMENT_TAGS, strip_comment_tags=True))
    # The texts every page shows (app.py and the ui package) first, then the rest in Babel's walk
    # order (a stable sort): the catalogue reads in the order it always has, ui/ where ui.py was.
    found.sort(key=lambda m: 0 if "/" not in m[0] or m[0].startswith("ui/") else 1)
    for filename, lineno, message, comments, context in found:
        cat.add(message, None, [(filename, lineno)], auto_comments=comments, context=context)
    for m in cat:  # texts are brace templates, never %-formatted: "90 % of" is no %o conversion
        m.flags.discard("python-format")
    return cat


def _write(catalog: Catalog, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    for m in catalog:  # Babel re-detects it on every read
        m.flags.discard("python-format")
    buf = io.BytesIO()
    write_po(buf, catalog, width=WIDTH, include_lineno=False, ignore_obsolete=True, include_previous=True)
    new = buf.getvalue()
    if not path.exists() or path.read_bytes() != new:
        path.write_bytes(new)


def read(lang: str) -> Catalog:
    with open(po_path(lang), "rb") as f:
        return read_po(f, locale=lang, domain=DOMAIN)


def write_pot() -> Catalog:
    template = extract()
    _write(template, POT)
    return template


def update(template: Catalog | None = None) -> None:
    """Bring each .po in step with the sources (creating it the first time)."""
    template = template or extract()
    for lang in LANGS:
        path = po_path(lang)
        if path.exists():
            cat = read(lang)
        else:
            cat = Catalog(locale=lang, domain=DOMAIN, project="gemm", header_comment=HEADER, fuzzy=False)
        cat.update(template, no_fuzzy_matching=False, update_header_comment=False, update_creation_date=False)
        _write(cat, path)


def compile_catalog(lang: str) -> tuple[bytes, dict[str, int]]:
    """The .mo bytes of ``lang`` (as the app builds them) and its statistics."""
    cat = read(lang)
    buf = io.BytesIO()
    write_mo(buf, cat)
    msgs = [m for m in cat if m.id]
    stats = {"messages": len(msgs), "translated": sum(bool(m.string) and not m.fuzzy and _complete(m) for m in msgs),
             "fuzzy": sum(m.fuzzy for m in msgs), "untranslated": sum(not _complete(m) for m in msgs)}
    return buf.getvalue(), stats


def _complete(m) -> bool:
    return all(m.string) if isinstance(m.string, (list, tuple)) else bool(m.string)


# ----------------------------------------------------------------------------- checks on the catalogue
_MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+?\$", re.S)
_CODE = re.compile(r"`[^`\n]+`")
_CJK = "\u3000-\u303f\u4e00-\u9fff\uff00-\uffef"  # CJK punctuation, ideographs, full-width forms
_CJK_BREAK = re.compile(rf"[{_CJK}](?<!\n)\n(?!\n)|(?<!\n)\n(?!\n)[{_CJK}]")


def _strip_math_code(text: str) -> str:
    return _CODE.sub("", _MATH.sub("", text))


def placeholders(text: str) -> Counter:
    """The str.format fields of ``text`` (name, conversion, spec), outside formulas and code.

    Only fields whose name is a Python identifier count, so LaTeX braces are left to the formula
    check. ``{{``/``}}`` are literal braces.
    """
    text = _strip_math_code(text).replace("{{", "").replace("}}", "")
    out: Counter = Counter()
    for m in re.finditer(r"\{([^{}]*)\}", text):
        try:
            parsed = list(string.Formatter().parse(m.group(0)))
        except ValueError:
            continue
        for _lit, field, spec, conv in parsed:
            if field is not None and re.fullmatch(r"[A-Za-z_]\w*(\.\w+|\[\w+\])*", field):
                out[(field, conv or "", spec or "")] += 1
    return out


def spans(text: str) -> tuple[Counter, Counter]:
    """Formulas and code spans: each must come through a translation unchanged."""
    return Counter(_MATH.findall(text)), Counter(_CODE.findall(_MATH.sub("", text)))


def _md_punct(c: str) -> bool:
    return unicodedata.category(c)[0] in "PS"  # CommonMark's Unicode punctuation: categories P and S


def unclosed_bold(text: str) -> list[str]:
    """The ``**`` runs of ``text`` that Markdown (CommonMark's flanking rules, which Streamlit's
    renderer follows) cannot pair, so that their asterisks show: a closing ``**`` right after
    punctuation must be followed by a space or punctuation (``**注意看：**内积`` shows its asterisks:
    the full-width colon is punctuation, ``内`` is not). Formulas and code count as punctuation."""
    t = _CODE.sub("$", _MATH.sub("$", text))
    out, open_at = [], None
    for m in re.finditer(r"(?<![*\\])\*\*(?!\*)", t):
        before = t[m.start() - 1] if m.start() else " "
        after = t[m.end()] if m.end() < len(t) else " "
        left = not after.isspace() and (not _md_punct(after) or before.isspace() or _md_punct(before))
        right = not before.isspace() and (not _md_punct(before) or after.isspace() or _md_punct(after))
        if open_at is not None and right:
            open_at = None
        elif open_at is None and left:
            open_at = m.start()
        else:
            out.append(t[max(0, m.start() - 8):m.end() + 8])
    if open_at is not None and not out:
        out.append(t[open_at:open_at + 16])
    return out


def _forms(m) -> tuple[list[str], list[str]]:
    ids = list(m.id) if isinstance(m.id, (list, tuple)) else [m.id]
    strs = list(m.string) if isinstance(m.string, (list, tuple)) else [m.string]
    return ids, strs


def message_problems(m) -> list[str]:
    """What is wrong with one translated message (empty when all is well)."""
    ids, strs = _forms(m)
    where = f"{m.id!r}"[:90]
    if not all(strs):
        return [f"untranslated: {where}"]
    if m.fuzzy:
        return [f"fuzzy (review the translation, then remove the fuzzy flag): {where}"]
    out = []
    ref = ids[-1]  # a plural's msgstr (Chinese: one form for every n) follows the plural msgid
    for s in strs:
        if set(placeholders(s)) != set(placeholders(ref)):
            out.append(f"placeholders differ: {where}: msgid {sorted(placeholders(ref))} "
                       f"msgstr {sorted(placeholders(s))}")
        if spans(s) != spans(ref):
            out.append(f"a formula ($…$) or code (`…`) span is not kept exactly: {where}")
        bad = unclosed_bold(s)
        if bad and not unclosed_bold(ref):
            out.append(f"bold (**…**) that Markdown does not close, its asterisks show (after punctuation a "
                       f"closing ** needs a space or punctuation next: **注意看**：, not **注意看：**内): "
                       f"{where}: {bad}")
        if _CJK_BREAK.search(s):
            out.append(f"a single line break beside Chinese text shows as a stray space (Markdown joins the "
                       f"lines with one); keep a paragraph on one line: {where}")
    return out


def catalogue_problems(lang: str, template: Catalog | None = None) -> list[str]:
    """Everything that makes the ``lang`` catalogue unfit to ship; empty when it is fit."""
    template = template or extract()
    cat = read(lang)
    out = []
    want = {(m.id if isinstance(m.id, str) else m.id[0], m.context) for m in template if m.id}
    have = {(m.id if isinstance(m.id, str) else m.id[0], m.context) for m in cat if m.id}
    for key in sorted(want - have, key=str):
        out.append(f"missing from {po_path(lang).relative_to(ROOT)} (run `python scripts/i18n.py update`): "
                   f"{key[0]!r}"[:160])
    for key in sorted(have - want, key=str):
        out.append(f"no longer in the sources (run `python scripts/i18n.py update`): {key[0]!r}"[:160])
    for m in cat:
        if m.id:
            out.extend(message_problems(m))
    for m in cat:
        m.flags.discard("python-format")  # brace templates only: "90 % of" is not a %o conversion
    for m, errors in cat.check():
        out.extend(f"{e}: {m.id!r}"[:160] for e in errors)
    if not cat.plural_forms or "nplurals=1" not in cat.plural_forms:
        out.append(f"{lang}: the header's Plural-Forms should be nplurals=1 (Chinese has one form)")
    return out


# ----------------------------------------------------------------------------- glossary
@dataclass(frozen=True)
class Term:
    english: str
    chinese: tuple[str, ...]  # accepted renderings, the first one preferred
    checked: bool  # every msgid with the English term must have one of them in its translation


def glossary() -> list[Term]:
    """The table rows of docs/i18n-glossary.md: | English | 简体中文 | checked | source |."""
    terms = []
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not line.lstrip().startswith("|") or set(cells[0]) <= set("-: "):
            continue
        if cells[0].lower() == "english":
            continue
        zh = tuple(z.strip() for z in cells[1].split(" / ") if z.strip())
        terms.append(Term(cells[0], zh, cells[2] == "✓"))
    return terms


def kept_as_written() -> set[str]:
    """Words a Chinese page shows in Latin letters on purpose (the glossary's "kept as written")."""
    text = GLOSSARY.read_text(encoding="utf-8")
    m = re.search(r"<!-- kept-as-written -->(.*?)<!-- /kept-as-written -->", text, re.S)
    if not m:
        return set()
    return {w for w in re.split(r"[\s,]+", re.sub(r"`", "", m.group(1))) if w}


def english_words(text: str, allowed: Iterable[str] = ()) -> list[str]:
    """Words of English prose left in a text shown in Chinese.

    Not counted: formulas ($…$), code (`…`), URLs, markdown links' targets and file names, anything with a digit
    (numbers with units, model and dtype names: ``llama-2-7b``, ``H100``, ``fp16``), snake_case names (code:
    an op, a config key, a function: ``q_proj``, ``torch_dtype``, ``rotate_half``), single letters
    (M, N, K), all-capital symbols and acronyms (``AB`` in D = αAB + βC, ``SM``), the glossary's "kept as written" words, and the ``allowed`` names (devices, models
    the page lists), removed whole before the text is split into words.
    """
    kept = {w.lower() for w in kept_as_written()}
    t = _strip_math_code(text)
    for name in sorted({a for a in allowed if a}, key=len, reverse=True):
        t = t.replace(name, " ")
    t = re.sub(r"https?://\S+|\b[\w.-]+\.(?:json|py|csv|md|toml|txt|yaml|yml)\b", " ", t)
    t = re.sub(r"\]\([^)\s]*\)", "] ", t)  # a markdown link's target (/Roofline?lang=zh#published) is not shown
    out = []
    for tok in re.findall(r"[A-Za-z0-9][A-Za-z0-9_.+\-/'’]*", t):
        if re.search(r"\d", tok) or re.search(r"[A-Za-z0-9]_[A-Za-z0-9]", tok):
            continue  # a number with a unit, a model or dtype name; a snake_case name is code (q_proj, torch_dtype)
        for w in re.split(r"[_.+\-/]", tok):
            w = w.strip("'’")
            if len(w) >= 2 and not w.isupper() and w.lower() not in kept:
                out.append(w)
    return out


def glossary_problems(lang: str = "zh") -> list[str]:
    cat = read(lang)
    out = []
    for term in (t for t in glossary() if t.checked):
        pat = re.compile(rf"(?<![A-Za-z]){re.escape(term.english)}(?:s|es)?(?![A-Za-z])", re.I)
        for m in cat:
            ids, strs = _forms(m)
            if not m.id or not any(pat.search(_strip_math_code(i)) for i in ids) or not all(strs):
                continue
            if not all(any(z in s for z in term.chinese) for s in strs):
                out.append(f"glossary: {term.english!r} should read {' / '.join(term.chinese)!r} in "
                           f"{m.id!r}"[:200])
    return out


# ----------------------------------------------------------------------------- todo: texts not wrapped
# Calls whose arguments a person reads: st.<name>(...), also on columns/containers/sidebar.
SHOWN_FIRST = {  # attribute name -> positional arguments that are shown
    "title": (0,), "header": (0,), "subheader": (0,), "markdown": (0,), "caption": (0,), "write": (0,),
    "text": (0,), "info": (0,), "warning": (0,), "error": (0,), "success": (0,), "toast": (0,),
    "button": (0,), "download_button": (0,), "link_button": (0,), "form_submit_button": (0,),
    "metric": (0,), "radio": (0,), "selectbox": (0,), "multiselect": (0,), "slider": (0,),
    "select_slider": (0,), "number_input": (0,), "text_input": (0,), "text_area": (0,), "checkbox": (0,),
    "toggle": (0,), "segmented_control": (0,), "pills": (0,), "file_uploader": (0,), "date_input": (0,),
    "color_picker": (0,), "expander": (0,), "popover": (0,), "status": (0,), "spinner": (0,),
    "tabs": (0,), "page_link": (), "progress": (), "chat_input": (0,),
    "Column": (0,), "TextColumn": (0,), "NumberColumn": (0,), "ProgressColumn": (0,), "LinkColumn": (0,),
    "CheckboxColumn": (0,), "SelectboxColumn": (0,), "ListColumn": (0,), "BarChartColumn": (0,),
    "LineChartColumn": (0,), "DatetimeColumn": (0,), "ImageColumn": (0,),
}
SHOWN_KW = {"label", "help", "placeholder", "caption", "captions", "text", "title", "page_title"}
UI_SHOWN = {"page": (0, 2), "guard": (0,), "url": (1,), "run_queued": (0,), "stepper": ()}
WRAPPERS = {"_", "ngettext", "pgettext", "npgettext", "gettext", "N_", "tr"}


@dataclass(frozen=True)
class Todo:
    path: str
    line: int
    func: str  # the enclosing function ("" at module level)
    call: str
    text: str
    kind: str  # "unwrapped" or "f-string in _()"


def _needs_words(s: str) -> bool:
    """Does a literal hold English words to translate (not only names, units, code, formulas)?"""
    if re.search(r"[\u4e00-\u9fff]", s):
        return False  # written in both languages on purpose ("Language · 语言")
    return bool(english_words(re.sub(r"\{[^{}]*\}", " ", s)))


def _literal_text(node: ast.AST) -> str | None:
    """The literal text of a str constant or an f-string's constant parts; None otherwise."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant))
    return None


def _is_wrapper(node: ast.AST) -> bool:
    f = node.func if isinstance(node, ast.Call) else None
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
    return name in WRAPPERS


def _shown_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """The leaves of a shown argument that could carry text (through +, %, if/else, lists)."""
    if isinstance(node, ast.BinOp):
        yield from _shown_nodes(node.left)
        yield from _shown_nodes(node.right)
    elif isinstance(node, ast.IfExp):
        yield from _shown_nodes(node.body)
        yield from _shown_nodes(node.orelse)
    elif isinstance(node, (ast.List, ast.Tuple)):
        for e in node.elts:
            yield from _shown_nodes(e)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        yield from _shown_nodes(node.func.value)  # "…".format(…) or _("…").format(…)
    else:
        yield node


def scan_file(path: Path) -> tuple[list[Todo], int]:
    """(texts shown but not wrapped, number of wrapped calls) in one source file."""
    rel = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    todos: list[Todo] = []
    wrapped = 0
    funcs: dict[int, str] = {}
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(fn):
                if hasattr(sub, "lineno"):
                    funcs.setdefault(id(sub), fn.name)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if _is_wrapper(node):
            wrapped += 1
            for a in node.args:
                if isinstance(a, ast.JoinedStr):
                    todos.append(Todo(rel, node.lineno, funcs.get(id(node), ""), ast.unparse(node.func),
                                      (_literal_text(a) or "").strip(), "f-string in _()"))
            continue
        f = node.func
        if not isinstance(f, ast.Attribute):
            continue
        is_ui = isinstance(f.value, ast.Name) and f.value.id == "ui"
        positions = UI_SHOWN.get(f.attr) if is_ui else SHOWN_FIRST.get(f.attr)
        if positions is None and not (f.attr in SHOWN_KW or any(k.arg in SHOWN_KW for k in node.keywords)):
            continue
        if positions is None and not is_ui:
            # an unknown method with a help=/label=/title= keyword: alt.X(title=…), .properties(title=…)
            positions = ()
        args = [node.args[i] for i in (positions or ()) if i < len(node.args)]
        args += [k.value for k in node.keywords if k.arg in SHOWN_KW]
        if is_ui and f.attr == "url" and node.args:
            pass  # ui.url(widget, label, …): label is args[1], listed in UI_SHOWN
        for arg in args:
            for leaf in _shown_nodes(arg):
                if isinstance(leaf, ast.Call) and _is_wrapper(leaf):
                    continue
                text = _literal_text(leaf)
                if text is not None and _needs_words(text):
                    todos.append(Todo(rel, leaf.lineno, funcs.get(id(node), ""), ast.unparse(f),
                                      text.strip().replace("\n", " ")[:100], "unwrapped"))
    # Dictionary literals given as column_config: {"col": "label"} labels are shown.
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "column_config" and isinstance(node.value, ast.Dict):
            for v in node.value.values:
                text = _literal_text(v) if v is not None else None
                if text is not None and _needs_words(text):
                    todos.append(Todo(rel, v.lineno, funcs.get(id(v), ""), "column_config", text[:100], "unwrapped"))
    return sorted(set(todos), key=lambda t: (t.line, t.text)), wrapped


def gemmlib_todos() -> dict[str, tuple[int, int]]:
    """Per gemmlib module: (InputError raises whose message is not an N_ template, chart texts
    (title=…) not passed through gettext)."""
    out: dict[str, tuple[int, int]] = {}
    for path in sorted(p for p in (ROOT / "gemmlib").rglob("*.py") if "cli" not in p.parts):  # CLI: English
        tree = ast.parse(path.read_text(encoding="utf-8"))
        errors = charts = 0
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if name.endswith("Error") and name in {"InputError", "BusyError"} and node.args:
                first = node.args[0]
                if not (isinstance(first, ast.Call) and _is_wrapper(first)):
                    errors += 1
            if "charts" in path.parts:
                for k in node.keywords:
                    if k.arg == "title":
                        for leaf in _shown_nodes(k.value):
                            t = _literal_text(leaf)
                            if t is not None and _needs_words(t):
                                charts += 1
        if errors or charts:
            out[str(path.relative_to(ROOT))] = (errors, charts)
    return out


def page_files() -> list[Path]:
    return [ROOT / "app.py", *ui_files(), *sorted((ROOT / "pages").glob("*.py"),
                                                  key=lambda p: int(p.name.split("_")[0]))]


def ui_files() -> list[Path]:
    """The modules of the ui package (the Streamlit helpers every page uses)."""
    return sorted((ROOT / "ui").glob("*.py"))


# ----------------------------------------------------------------------------- command line
def _print_todo(files: Iterable[Path], listing: bool) -> int:
    total = 0
    print(f"{'file':32} {'not wrapped':>11} {'f-str in _':>10} {'wrapped':>8}")
    for path in files:
        todos, wrapped = scan_file(path)
        unwrapped = [t for t in todos if t.kind == "unwrapped"]
        fstr = [t for t in todos if t.kind != "unwrapped"]
        total += len(todos)
        mark = "  (translated)" if str(path.relative_to(ROOT)) in TRANSLATED else ""
        print(f"{str(path.relative_to(ROOT)):32} {len(unwrapped):11} {len(fstr):10} {wrapped:8}{mark}")
        if listing:
            for t in todos:
                fn = f" in {t.func}()" if t.func else ""
                print(f"    {t.path}:{t.line}{fn} {t.call}: {t.kind}: {t.text!r}")
    print()
    print(f"{'gemmlib module':32} {'InputError not N_':>17} {'chart texts':>11}")
    for mod, (errors, charts) in gemmlib_todos().items():
        print(f"{mod:32} {errors:17} {charts:11}")
    return total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["extract", "update", "compile", "check", "todo", "all"])
    ap.add_argument("files", nargs="*", help="todo: the files to scan (default: app.py, ui/, pages/)")
    ap.add_argument("--list", action="store_true", help="todo: list every text, not only the counts")
    a = ap.parse_intermixed_args(argv)
    rc = 0
    template = None
    if a.command in ("extract", "all"):
        template = write_pot()
        print(f"{POT.relative_to(ROOT)}: {sum(1 for m in template if m.id)} messages")
    if a.command in ("update", "all"):
        update(template)
        for lang in LANGS:
            print(f"updated {po_path(lang).relative_to(ROOT)}")
    if a.command in ("compile", "all"):
        for lang in LANGS:
            mo, stats = compile_catalog(lang)
            print(f"{lang}: {stats['translated']}/{stats['messages']} translated, {stats['fuzzy']} fuzzy, "
                  f"{stats['untranslated']} untranslated; {len(mo):,} bytes compiled")
    if a.command in ("check", "all"):
        problems = [p for lang in LANGS for p in catalogue_problems(lang, template) + glossary_problems(lang)]
        for p in problems:
            print(p)
        print(f"{len(problems)} problem(s)")
        rc = 1 if problems else 0
    if a.command == "todo":
        files = [ROOT / f for f in a.files] if a.files else page_files()
        _print_todo(files, a.list)
    return rc


if __name__ == "__main__":
    sys.exit(main())
