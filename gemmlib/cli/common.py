"""What the commands share: checked number types for every numeric flag (``whole``, ``number``: a
bad value is refused at parse time with one line, never replaced by a default without a word). The
parser's one-line errors, what they echo cut to 80 characters, are ``gemmlib.core.files.one_line``
(``gemmlib/cli/__init__.py``). Running a benchmark the way the server does is ``gemmlib.cli.running``.

Core imports only: the estimate loads this module and nothing of ``gemmlib.measure``.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable

from gemmlib.core.files import cut


# --------------------------------------------------------------------------- checked numbers
def whole(lo: int = 1, hi: int | None = None) -> Callable[[str], int]:
    """An argparse ``type``: a whole number from ``lo`` (to ``hi``). "0", "-1", "1e400", "inf",
    "nan" and "2.5" are refused at parse time unless ``lo`` admits them (then the flag's help says
    what 0 means)."""
    def parse(text: str) -> int:
        try:
            v = int(str(text).strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {cut(text)!r}") from None
        if v < lo:
            raise argparse.ArgumentTypeError(f"must be at least {lo}, got {cut(v)}")
        if hi is not None and v > hi:
            raise argparse.ArgumentTypeError(f"must be at most {hi:,}, got {cut(v)}")
        return v

    parse.__name__ = f"whole number ≥ {lo}"
    return parse


def number(lo: float = 0.0, hi: float | None = None, *, zero: bool = False) -> Callable[[str], float]:
    """An argparse ``type``: a finite number above ``lo`` (``zero``: from ``lo`` on, ``lo``
    included) and at most ``hi``. "inf", "nan" and "1e400" (which float() reads as inf) are refused
    at parse time, like every value outside the range."""
    def parse(text: str) -> float:
        try:
            v = float(str(text).strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {cut(text)!r}") from None
        if not math.isfinite(v):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {cut(text)!r}")
        if v < lo or (v == lo and not zero):
            raise argparse.ArgumentTypeError(f"must be {'at least' if zero else 'above'} {lo:g}, got {v:g}")
        if hi is not None and v > hi:
            raise argparse.ArgumentTypeError(f"must be at most {hi:g}, got {v:g}")
        return v

    parse.__name__ = "number"
    return parse


TIMEOUT_MAX_S = 86_400.0  # a process group's timeout: at most a day (timedelta and the clock stay finite)


# --------------------------------------------------------------------------- saying what a slow step does
def say_working(text: str) -> None:
    """One line on stderr saying what the command is doing during seconds it would otherwise be silent (torch's
    import, estimating a folder of measurements), as the benchmarks' progress lines do; only where stderr is a
    terminal: a script or a pipe reading stderr gets nothing it did not get before, and stdout (``--json``) is
    never touched."""
    try:
        tty = sys.stderr.isatty()
    except (AttributeError, OSError, ValueError):
        tty = False
    if tty:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
