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
def test_each_command_has_help(cmd):
    out = subprocess.run([sys.executable, "-m", "gemmlib", cmd, "--help"], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "usage:" in out.stdout
