"""The command-line dispatcher: help, unknown commands, exit codes."""

import subprocess
import sys
from pathlib import Path

import pytest

from gemmlib.cli import COMMANDS, build_parser, main

ROOT = Path(__file__).resolve().parents[2]


def test_every_command_is_registered():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) == set(COMMANDS)


def test_no_command_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "COMMAND" in capsys.readouterr().err


def test_unknown_command_is_one_line_exit_2():
    out = subprocess.run([sys.executable, "-m", "gemmlib", "frobnicate"], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert "invalid choice" in out.stderr


@pytest.mark.parametrize("cmd", sorted(COMMANDS))
def test_each_command_has_help(cmd, capsys):
    with pytest.raises(SystemExit) as e:  # argparse's --help: in this process (the fresh one is above)
        main([cmd, "--help"])
    assert e.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: python -m gemmlib {cmd}")


def _parsers(parser):
    """``parser`` and every sub-command parser under it, each loaded (its flags added)."""
    parser = parser.load() if hasattr(parser, "load") else parser
    yield parser
    for a in parser._actions:
        if a.__class__.__name__ == "_SubParsersAction":
            for sub in a.choices.values():
                yield from _parsers(sub)


def test_no_flag_offers_a_choice_twice():
    """A flag's choices as ``--help`` lists them, each once (``--weight-dtype`` listed fp4 twice: once as a dtype,
    once as a weight format)."""
    seen = 0
    for parser in _parsers(build_parser()):
        for a in parser._actions:
            if a.choices is not None and a.option_strings:
                choices = list(a.choices)
                seen += 1
                assert len(choices) == len(set(choices)), f"{parser.prog} {a.option_strings[0]}: {choices}"
    assert seen > 20


def test_the_command_table_is_lazy_and_help_still_lists_every_command():
    """Building the parser imports no command; a chosen command imports its own module only."""
    code = ("import sys, contextlib, io\nfrom gemmlib.cli import COMMANDS, build_parser\n"
            "p = build_parser()\n"
            "before = sorted(m for _, (m, _) in COMMANDS.items() if m in sys.modules)\n"
            "p.parse_args(['devices', '--light'])\n"
            "after = sorted(m for _, (m, _) in COMMANDS.items() if m in sys.modules)\n"
            "out = io.StringIO()\n"
            "with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):\n"
            "    build_parser().parse_args(['--help'])\n"
            "print(before, after, all(name in out.getvalue() for name in COMMANDS))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[]", "['gemmlib.cli.devices']", "True"]
