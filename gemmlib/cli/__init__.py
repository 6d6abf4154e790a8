"""`python -m gemmlib COMMAND ...`: the command line.

Each command lives in ``gemmlib/cli/<name>.py`` and exposes
``add_arguments(parser)`` and ``run(args) -> int``. Command modules must stay
light at import time (no torch at module level): building the parser imports
all of them, and ``estimate`` has to answer in well under a second.

Bad input anywhere (an ``InputError`` or an argparse error) ends with exit
status 2 and one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from gemmlib.core.errors import InputError

# command name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "estimate": ("gemmlib.cli.estimate", "size an LLM: FLOPs, memory and time per GEMM"),
    "devices": ("gemmlib.cli.devices", "list this machine's devices and their peaks"),
    "bench": ("gemmlib.cli.bench", "run a live benchmark (precision, tiling, batching)"),
    "profile": ("gemmlib.cli.profile", "profile a transformer block with torch.profiler"),
    "report": ("gemmlib.cli.report", "run every benchmark and write a report"),
    "calibrate": ("gemmlib.cli.calibrate", "measure each op of a model on this device, for the calibrated estimate"),
    "validate": ("gemmlib.cli.validate", "time a real forward pass against the datasheet and calibrated estimates"),
}


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors on one line with exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m gemmlib", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (modname, help_) in COMMANDS.items():
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as e:  # a command whose module is not written yet
            if e.name != modname:
                raise
            continue
        p = sub.add_parser(name, help=help_, description=help_)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help(sys.stderr)
        return 2
    from gemmlib.measure.runner import WorkerError

    try:
        return int(args._run(args) or 0)
    except InputError as e:
        sys.stderr.write(f"error: {e}\n")
        return 2
    except WorkerError as e:  # a bug inside the benchmark worker: its traceback, then one line
        sys.stderr.write(f"{e.traceback}error: {e}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
