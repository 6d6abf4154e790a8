"""Every command-line flag a message names (an error's advice, a help text, a page's sentence: "add
--ep-comm-overlap", "give fewer requests (--num-requests)") is a flag some `python -m gemmlib` command takes.

A renamed or removed flag left its old name in a sentence that tells a user to type it; nothing else catches
that, since each message is tested in the case that shows it, not against the parser. The messages are the
catalogue's msgids (every user-facing string is extracted there by scripts/i18n.py), and the flags are read from
the real parsers of every sub-command (loaded, as the lazy command table does when one is chosen)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from babel.messages.pofile import read_po

from gemmlib.cli import build_parser

CATALOGUE = Path(__file__).resolve().parents[2] / "locales" / "zh" / "LC_MESSAGES" / "gemm.po"
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
# Another tool's flags, named as that tool's: "Megatron's `--recompute-method`", "(Megatron's --recompute-method
# block --recompute-num-layers N)".
OTHERS = re.compile(r"Megatron's (`[^`]*`|[^);,`]*)")


def _foreign(text: str) -> set[str]:
    return {f for span in OTHERS.findall(text) for f in FLAG.findall(span)}


def _flags(parser: argparse.ArgumentParser, into: set[str]) -> set[str]:
    for action in parser._actions:
        into.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                if hasattr(sub, "load"):
                    sub.load()
                _flags(sub, into)
    return into


def _messages() -> list[str]:
    with CATALOGUE.open("rb") as f:
        catalog = read_po(f)
    out = []
    for m in catalog:
        if not m.id:
            continue
        out.extend(m.id if isinstance(m.id, tuple) else (m.id,))
    return out


def test_the_parsers_are_read_whole():
    flags = _flags(build_parser(), set())
    # one flag of each command: the lazy table's commands were loaded, not only the top level's --help
    for flag in ("--tp", "--serve", "--nproc", "--dtypes", "--published", "--measure", "--json"):
        assert flag in flags


def test_every_flag_a_message_names_exists():
    flags = _flags(build_parser(), set())
    messages = _messages()
    assert len(messages) > 1000  # the whole catalogue was read
    named = 0
    unknown = {}
    for text in messages:
        foreign = _foreign(text)
        for flag in FLAG.findall(text):
            named += 1
            if flag not in flags and flag not in foreign:
                unknown.setdefault(flag, text[:120])
    assert named > 50
    assert not unknown, unknown


def test_every_flag_a_help_text_names_exists():
    """The commands' own help (`--help` of every command), which is not in the catalogue."""
    parser = build_parser()
    flags = _flags(parser, set())
    texts = []

    def helps(p: argparse.ArgumentParser) -> None:
        texts.extend(t for t in (p.description, p.epilog) if t)
        for action in p._actions:
            if action.help and action.help != argparse.SUPPRESS:
                texts.append(action.help)
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    helps(sub)

    helps(parser)
    named = [(f, t) for t in texts for f in FLAG.findall(t) if f not in _foreign(t)]
    assert len(named) > 20
    assert not [(f, t[:120]) for f, t in named if f not in flags]


def test_a_renamed_flag_would_be_caught():
    """The check itself: a sentence naming a flag no command has is reported."""
    flags = _flags(build_parser(), set())
    text = "the all-to-alls' SMs: add --ep-overlap-comm"
    assert [f for f in FLAG.findall(text) if f not in flags] == ["--ep-overlap-comm"]
