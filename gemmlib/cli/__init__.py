"""`python -m gemmlib COMMAND ...`: the command line.

Each command lives in ``gemmlib/cli/<name>.py`` and exposes
``add_arguments(parser)`` and ``run(args) -> int``. The sub-command table is lazy:
``--help`` lists every command from :data:`COMMANDS` alone, and a command's module is
imported (and its flags added) only when that command is chosen, so ``estimate``
loads ``core``, ``llm`` and its own module and nothing else (no numpy, nothing from
``measure``; ``tests/test_architecture.py`` holds it to that).

Bad input anywhere (an ``InputError`` or an argparse error) ends with exit
status 2 and one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

from gemmlib.core.errors import InputError
from gemmlib.core.files import one_line

# command name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "estimate": ("gemmlib.cli.estimate", "size an LLM: FLOPs, memory and time per GEMM"),
    "devices": ("gemmlib.cli.devices", "list this machine's devices and their peaks"),
    "bench": ("gemmlib.cli.bench", "run a live benchmark (precision, tiling, batching, collective, tp)"),
    "profile": ("gemmlib.cli.profile", "profile a transformer block with torch.profiler"),
    "report": ("gemmlib.cli.report", "run every benchmark and write a report"),
    "calibrate": ("gemmlib.cli.calibrate", "measure each op of a model on this device, for the calibrated estimate"),
    "validate": ("gemmlib.cli.validate", "time a real forward pass against the datasheet and calibrated estimates"),
}


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors on one line with exit status 2, and fills itself on first use.

    ``command=(module, run_dest)``: the parser of a sub-command whose flags are added by
    ``module.add_arguments`` (and ``run_dest`` set to ``module.run``) only when it parses or
    prints its help, i.e. when that sub-command was chosen.
    """

    def __init__(self, *args, command: tuple[str, str] | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._command = command

    def load(self) -> argparse.ArgumentParser:
        """Import the command's module and add its flags (once)."""
        if self._command is not None:
            modname, run_dest = self._command
            self._command = None
            mod = importlib.import_module(modname)
            mod.add_arguments(self)
            self.set_defaults(**{run_dest: mod.run})
        return self

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        self.load()
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        self.load()
        return super().format_help()

    def format_usage(self) -> str:
        self.load()
        return super().format_usage()

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {one_line(message)}\n")  # an echoed value cut to 80 characters
        sys.exit(2)


def add_commands(parser: argparse.ArgumentParser, table: dict[str, tuple[str, str]], *, dest: str,
                 metavar: str, run_dest: str = "_run") -> argparse.ArgumentParser:
    """Sub-commands ``table`` (name -> (module, help)) under ``parser``, each loaded only when chosen."""
    sub = parser.add_subparsers(dest=dest, metavar=metavar, parser_class=_Parser)
    for name, (modname, help_) in table.items():
        sub.add_parser(name, help=help_, description=help_, command=(modname, run_dest))
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m gemmlib", description=__doc__.splitlines()[0])
    return add_commands(parser, COMMANDS, dest="command", metavar="COMMAND")


class _OutputError(Exception):
    """Writing this command's output (stdout) failed: ``error`` is the OSError."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


class _Stdout:
    """``sys.stdout`` while a command runs: a failed write or flush is named as stdout's (``_OutputError``), so
    that it is told apart from an OSError anywhere else (a worker's pipe, a rank's socket: real errors)."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as e:
            raise _OutputError(e) from e

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as e:
            raise _OutputError(e) from e

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _silence(stream) -> None:
    """Point ``stream``'s descriptor at /dev/null, so that flushing it at exit raises nothing more."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (a test's StringIO)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


class _SaidOnce(logging.Handler):
    """gemmlib's warnings on stderr, as Python's last-resort handler prints them, but each message once per
    command: a cache folder open to others was said six times before the one error line of `bench precision`."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.said: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad log call must not end the command
            self.handleError(record)
            return
        if text not in self.said:
            self.said.add(text)
            sys.stderr.write(text + "\n")


def main(argv: list[str] | None = None) -> int:
    real = sys.stdout
    sys.stdout = _Stdout(real)
    said = _SaidOnce()
    logging.getLogger("gemmlib").addHandler(said)
    try:
        return _main(argv)
    except _OutputError as e:  # `... | head` (the reader left), `> /dev/full`, a disk that filled up
        _silence(real)  # nothing more to write, and no second error when Python flushes it at exit
        if isinstance(e.error, BrokenPipeError):
            return 141  # quietly, as a command killed by SIGPIPE reports it (128 + 13)
        sys.stderr.write(f"error: cannot write the output: {one_line(e.error.strerror or e.error)}\n")
        return 1
    finally:
        sys.stdout = real
        logging.getLogger("gemmlib").removeHandler(said)


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        rc = int(args._run(args) or 0)
        sys.stdout.flush()  # here, not at exit: a write that fails is answered in main
        return rc
    except InputError as e:
        sys.stderr.write(f"error: {one_line(e)}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    except Exception as e:
        # a bug inside the benchmark worker: its traceback, then one line. Only a command that ran
        # a worker has imported the runner, so the estimate never loads it to ask.
        runner = sys.modules.get("gemmlib.measure.runner")
        if runner is not None and isinstance(e, runner.WorkerError):
            sys.stderr.write(f"{e.traceback}error: {e}\n")
            return 1
        raise
