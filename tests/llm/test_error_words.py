"""The sizing modules' input errors read right on the LLM Estimator page as well as on the command line.

The same ``InputError`` is printed by ``python -m gemmlib estimate`` and shown on the page ("Check the input: …").
A message that named the setting by its flag ("--ep 4 does not divide the 6 experts", "--virtual-stages needs
pipeline stages (--pp 2 or more)") showed the page's reader flags they never typed, where the sidebar says EP and
virtual stages. Each message names the setting as the page labels it; a flag whose words differ from that label
follows it once, in parentheses ("recomputed layers (--recompute-layers)").
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import gemmlib
from gemmlib.views.estimator import FIELDS

MODULES = ("parallel", "training", "scaleout", "serving")
LLM = Path(gemmlib.__file__).parent / "llm"

# A flag an input error names -> the page's field that sets it: the message must use that field's label.
PAGE_FIELD = {
    "--tp": "le_tp", "--pp": "le_pp", "--ep": "le_ep", "--dp": "le_dp", "--etp": "le_etp", "--cp": "le_cp",
    "--zero": "le_zero", "--virtual-stages": "le_vs", "--micro-batch": "le_mb", "--recompute": "le_rc",
    "--recompute-layers": "le_rcl", "--recompute-modules": "le_rcm", "--ep-comm-overlap": "le_epo",
    "--tp-comm-overlap": "le_tpo", "--ep-comm-sms": "le_epsm", "--train-tokens": "le_tokens",
    "--sequence-parallel": "le_sp", "--context": "le_ctx", "--act-dtype": "le_adt", "--weight-dtype": "le_wdt",
    "--new-tokens": "le_new", "--request-rate": "le_rate",
}
# Flags with no setting on the page (command line only): the words the message gives them instead.
CLI_ONLY = {
    "--arrival": "the arrival process",  # the page's request rate is always Poisson
    "--num-requests": "fewer requests",  # the page sizes the requests itself
}
# Templates left as they are, each with its reason (none).
EXEMPT: dict[str, str] = {}

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
CODE = re.compile(r"`[^`]*`")  # a command to run (`python -m gemmlib estimate --serve`) is not a setting's name


def input_error_templates(source: str) -> list[tuple[int, str]]:
    """Every ``InputError(N_("…"), …)`` template in ``source``, with its line."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "InputError" and node.args
                and isinstance(first := node.args[0], ast.Call) and getattr(first.func, "id", None) == "N_"
                and isinstance(first.args[0], ast.Constant)):
            found.append((node.lineno, first.args[0].value))
    return found


def _words(text: str) -> str:
    return " ".join(text.lower().replace("-", " ").split())


def _says(words: str, name: str) -> bool:
    """``name`` as words of its own in ``words`` ("PP" in "PP {pp} is…", not in "{pp}")."""
    return re.search(r"(?<![\w{])" + re.escape(_words(name)) + r"(?![\w}])", words) is not None


def page_name(field: str) -> str:
    """The page's label of ``field`` as a message says it: "recomputed layers (0 = all)" -> "recomputed layers"."""
    f = FIELDS[field]
    label = f.name or f.label
    return re.split(r" \(| /|:", label)[0]


def problems(template: str) -> list[str]:
    """What is wrong with ``template``'s words for the page: a flag first, bare, or without the page's name."""
    text = CODE.sub("", template)
    out = []
    if text.lstrip().startswith("--"):
        out.append("begins with a flag")
    words = _words(FLAG.sub("", text))
    for m in FLAG.finditer(text):
        flag = m.group()
        if text[:m.start()].count("(") <= text[:m.start()].count(")"):
            out.append(f"{flag} stands bare (not in parentheses after the setting's name)")
        if flag in PAGE_FIELD:
            name = page_name(PAGE_FIELD[flag])
            if not _says(words, name):
                out.append(f"{flag} without the page's name {name!r}")
        elif flag in CLI_ONLY:
            if not _says(words, CLI_ONLY[flag]):
                out.append(f"{flag} without the words {CLI_ONLY[flag]!r}")
        else:
            out.append(f"{flag}: add it to PAGE_FIELD (the page's field) or CLI_ONLY (with the words that say it)")
    return out


def _templates() -> list[tuple[str, str]]:
    return [(f"{m}.py:{line}", t) for m in MODULES
            for line, t in input_error_templates((LLM / f"{m}.py").read_text(encoding="utf-8"))]


TEMPLATES = _templates()


def test_the_walk_finds_the_templates_and_every_field_it_names_is_on_the_page():
    assert len(TEMPLATES) > 50  # not a vacuous walk
    assert set(PAGE_FIELD.values()) <= set(FIELDS)
    assert page_name("le_rcl") == "recomputed layers" and page_name("le_rate") == "request rate"
    alive = {t for _, t in TEMPLATES}
    assert not set(EXEMPT) - alive, "an exemption for a template that is gone"


@pytest.mark.parametrize("where, template", TEMPLATES, ids=[w for w, _ in TEMPLATES])
def test_an_input_error_names_the_setting_as_the_page_does(where, template):
    if template in EXEMPT:
        pytest.skip(EXEMPT[template])
    assert not problems(template), f"{where}: {template!r}: {problems(template)}"


def test_the_old_words_are_caught():
    """The rule catches what the page showed before."""
    assert problems("--ep {ep} does not divide the {experts} experts")
    assert problems("--virtual-stages needs pipeline stages (--pp 2 or more)")
    assert problems("the global batch does not split into --dp {dp} × --micro-batch {b}")
    assert problems("serving needs generated tokens: give --new-tokens N ≥ 1")
    assert problems("{pp} stages (--pp)")  # "{pp}" is a value, not the page's name PP
    assert problems("recomputed modules {idle} (--recompute-layers): nothing")  # the wrong setting's flag
    assert not problems("virtual stages need pipeline stages (PP 2 or more)")
    assert not problems("recomputed layers {n} (--recompute-layers) are whole layers: they need recompute full")
