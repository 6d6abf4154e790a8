"""The one way to write a number for a person: every page, the CLI's text output and the report.

- ``count(34359738368)`` -> ``"34,359,738,368"``: an exact count keeps every digit (Python ints,
  so past 2**53 and past int64 too), with thousands separators.
- ``si(3.44e10, "FLOP")`` -> ``"34.4 GFLOP"``: a rounded value with an SI prefix and its unit
  (FLOPs, FLOP/s, and rates of bytes: ``si(3.35e12, "B/s")`` -> ``"3.35 TB/s"``, decimal as every
  datasheet and nccl-tests write bandwidth).
- ``nbytes(16.1e9)`` -> ``"15 GiB"``: an amount of bytes (memory, weights, KV cache, traffic, a
  message) in binary units, KiB = 1024 B: the project's one byte unit (README, "Counting conventions").
- ``duration(0.00123)`` -> ``"1.23 ms"``: every duration in one style, ns / µs / ms / s.
- ``amount(13166.3)`` -> ``"13.2 k"``: a rounded count of things (tokens/s, requests, GPU-hours); the
  Chinese page writes it as zh does (``"1.32万"``, CLDR's compact forms from babel).
- ``percent(0.973)`` -> ``"97.3%"``, ``ratio(1.84)`` -> ``"1.84×"``, ``number(0.1 + 0.2)`` -> ``"0.3"``.
- ``cell(value)``: any table value. A missing one (None, NaN) is ``"—"``, a flag is ``"yes"``/``"no"``,
  an integer a count and a float at most 4 significant digits, so a table never shows ``None``,
  ``nan``, ``True`` or a 17-digit float.
- ``text_table(rows)``: rows of dicts as an aligned plain-text table (the CLI).

The module's functions write English (the CLI, the JSON's companions, the report). A page writes in
its reader's language through ``for_lang(code)``: a :class:`Formatter` with the same methods, whose
digit grouping and decimal mark come from babel's locale data (``babel.numbers``) and whose rounded
counts of things use that locale's compact forms where they differ from SI's (Chinese: 万, 亿).
Units and SI prefixes are the same in every language, as datasheets write them.

Pages show tables through ``ui.view_table`` with every cell already written here (a presenter's
:class:`gemmlib.views.estimator.Table`); ``ui.table`` keeps numeric columns numeric for the pages
that sort them, drawn with the format ``STREAMLIT_FORMATS`` gives each kind of column.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from numbers import Integral, Real
from typing import Any

DASH = "—"  # a missing value, everywhere

_PREFIX = {18: "E", 15: "P", 12: "T", 9: "G", 6: "M", 3: "k", 0: "", -3: "m", -6: "µ", -9: "n", -12: "p"}

# How a page draws each kind of numeric column (Streamlit's NumberColumn formats). The
# strings are the same rules as the functions below: counts with every digit and separators,
# values with four significant digits, shares as percentages.
STREAMLIT_FORMATS: dict[str, str] = {
    "count": "localized",
    "number": "%.4g",
    "percent": "percent",
    "error": "%.2e",
}


def missing(x: Any) -> bool:
    """None, NaN (float, numpy or pandas) or pandas' NA."""
    if x is None:
        return True
    try:
        return bool(x != x)  # NaN is the only value not equal to itself
    except (TypeError, ValueError):  # pandas.NA raises on bool()
        return True


def _is_int(x: Any) -> bool:
    return isinstance(x, Integral) and not isinstance(x, bool)


def _round_sig(x: float, digits: int) -> str:
    """``x`` to ``digits`` significant digits in plain notation, trailing zeros dropped."""
    if x == 0:
        return "0"
    exp = math.floor(math.log10(abs(x)))
    decimals = max(0, digits - 1 - exp)
    s = f"{round(x, decimals):,.{decimals}f}"
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def count(n: Any, unit: str = "") -> str:
    """An exact count with thousands separators; a non-integral number falls back to ``number``."""
    if missing(n):
        return DASH
    if isinstance(n, bool):
        return "yes" if n else "no"
    if not _is_int(n):
        f = float(n)
        if not math.isfinite(f):
            return DASH
        if f.is_integer() and abs(f) < 2**53:
            n = int(f)
        else:
            return number(f, unit=unit)
    s = f"{int(n):,}"
    return f"{s} {unit}" if unit else s


def number(x: Any, digits: int = 4, unit: str = "") -> str:
    """A value to ``digits`` significant digits: plain from 0.001 to a million, else ``1.23e+09``."""
    if missing(x):
        return DASH
    if isinstance(x, bool):
        return "yes" if x else "no"
    if _is_int(x):
        return count(x, unit)
    f = float(x)
    if not math.isfinite(f):
        return DASH
    if f.is_integer() and abs(f) < 2**53:
        return count(int(f), unit)
    if f == 0:
        s = "0"
    elif 1e-3 <= abs(f) < 1e6:
        s = _round_sig(f, digits)
    else:
        s = f"{f:.{digits - 1}e}"
        mant, _, ex = s.partition("e")
        if "." in mant:
            mant = mant.rstrip("0").rstrip(".")
        s = f"{mant}e{int(ex):+d}"
    return f"{s} {unit}" if unit else s


def si(x: Any, unit: str = "", digits: int = 3) -> str:
    """A rounded value with an SI prefix: ``si(1.23e12, "FLOP/s")`` -> ``"1.23 TFLOP/s"``.

    Only seconds take the prefixes below one (``si(0.0042, "s")`` -> ``"4.2 ms"``); anything else
    below one is written plainly (``0.5 FLOP``, never ``500 mFLOP``).
    """
    if missing(x):
        return DASH
    f = float(x)
    if not math.isfinite(f):
        return DASH
    if f == 0:
        return f"0 {unit}".rstrip()
    low = -12 if unit == "s" else 0
    e = min(18, max(low, 3 * math.floor(math.log10(abs(f)) / 3)))
    text = _round_sig(f / 10.0**e, digits)
    if abs(float(text.replace(",", ""))) >= 1000 and e < 18:  # 999.96 k rounds up: 1 M
        e += 3
        text = _round_sig(f / 10.0**e, digits)
    return f"{text} {_PREFIX[e]}{unit}".rstrip()


def duration(seconds: Any, digits: int = 3) -> str:
    """A duration in the one style of this project: ``812 ns``, ``1.5 µs``, ``12.3 ms``, ``4.56 s``,
    ``1,234 s`` (seconds above one; never minutes, so values compare at a glance)."""
    if missing(seconds):
        return DASH
    s = float(seconds)
    if not math.isfinite(s):
        return DASH
    a = abs(s)
    if a >= 1:
        return f"{_round_sig(s, digits) if a < 1000 else f'{round(s):,}'} s"
    for scale, unit in ((1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if a >= scale:
            v = _round_sig(s / scale, digits)
            if abs(float(v.replace(",", ""))) >= 1000:  # 999.9 µs -> 1 ms
                return duration(math.copysign(scale * 1000, s), digits)
            return f"{v} {unit}"
    return "0 s" if a == 0 else f"{_round_sig(s / 1e-9, digits)} ns"


_BINARY = ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"))


def nbytes(n: Any, digits: int = 3) -> str:
    """An amount of bytes in binary units (the project's one byte unit): ``512 B``, ``1.5 KiB``, ``604 MiB``,
    ``15 GiB``, ``1.02 TiB``; 1,000–1,023 of a unit stay in it (``1,000 MiB``), never ``1e+03``."""
    if missing(n):
        return DASH
    f = float(n)
    if not math.isfinite(f):
        return DASH
    a = abs(f)
    for i, (scale, unit) in enumerate(_BINARY):
        if a >= scale:
            v = f / scale
            text = _round_sig(v, max(digits, len(str(int(abs(v))))))
            if i and abs(float(text.replace(",", ""))) >= 1024:  # 1023.9 MiB rounds to 1 GiB
                return nbytes(math.copysign(_BINARY[i - 1][0], f), digits)
            return f"{text} {unit}"
    return f"{_round_sig(f, max(digits, len(str(int(a))))) if not f.is_integer() else f'{int(f):,}'} B"


def amount(x: Any, digits: int = 3) -> str:
    """A rounded count of things (tokens/s, requests, GPU-hours): ``si(x)`` in English (``13.2 k``); a
    :class:`Formatter` writes it in its language's compact form."""
    return si(x, "", digits)


def percent(x: Any, digits: int = 1) -> str:
    """A share (0.973) as ``97.3%``."""
    if missing(x):
        return DASH
    f = float(x)
    return f"{f:.{digits}%}" if math.isfinite(f) else DASH


def ratio(x: Any, digits: int = 3) -> str:
    """How many times: ``1.84×``."""
    if missing(x):
        return DASH
    f = float(x)
    return f"{_round_sig(f, digits)}×" if math.isfinite(f) else DASH


def cell(x: Any) -> str:
    """Any value as a table cell (see the module docstring)."""
    if missing(x):
        return DASH
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, str):
        return x
    if _is_int(x):
        return count(x)
    if isinstance(x, Real):
        return number(x)
    if hasattr(x, "item"):  # numpy scalars
        return cell(x.item())
    if isinstance(x, (list, tuple)):
        return ", ".join(cell(v) for v in x)
    return str(x)


def markdown_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None) -> str:
    """Rows of dicts as a Markdown table (the report), every value through ``cell``."""
    if not rows:
        return "(no rows)"
    cols = list(columns or rows[0].keys())
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        out.append("| " + " | ".join(cell(r.get(c)).replace("|", "\\|").replace("\n", " ") for c in cols) + " |")
    return "\n".join(out)


def text_table(rows: Sequence[Mapping[str, Any]] | Sequence[Sequence[Any]], columns: Sequence[str] | None = None,
               right: Iterable[str] | None = None) -> str:
    """An aligned plain-text table. ``rows`` are dicts (``columns`` picks and orders their keys)
    or sequences (then ``columns`` names them). Every value goes through ``cell``; numbers (and
    the ``right`` columns) are right-aligned."""
    if not rows:
        return ""
    if isinstance(rows[0], Mapping):
        cols = list(columns or rows[0].keys())
        values = [[r.get(c) for c in cols] for r in rows]  # type: ignore[union-attr]
    else:
        cols = list(columns or [])
        values = [list(r) for r in rows]
    text = [[v if isinstance(v, str) else cell(v) for v in row] for row in values]
    numeric = [all(isinstance(row[i], Real) or missing(row[i]) for row in values) for i in range(len(cols))]
    right_set = set(right or ())
    widths = [max([len(c)] + [len(t[i]) for t in text]) for i, c in enumerate(cols)]

    def line(items: Sequence[str]) -> str:
        out = []
        for i, s in enumerate(items):
            out.append(s.rjust(widths[i]) if numeric[i] or cols[i] in right_set else s.ljust(widths[i]))
        return "  ".join(out).rstrip()

    return "\n".join([line(cols), line(["-" * w for w in widths])] + [line(t) for t in text])


# ----------------------------------------------------------------------------- in the reader's language
_ENGLISH_SYMBOLS = (".", ",")


class Formatter:
    """The functions above in one language: the same rules, the locale's decimal mark and digit grouping
    (babel's ``number_symbols``), and its compact forms for :meth:`amount` (babel's
    ``compact_decimal_formats``: Chinese groups large counts by 10⁴, 万 and 亿). English is the module's
    functions exactly (the CLI's output does not change)."""

    def __init__(self, locale: str = "en") -> None:
        self.locale = locale
        self._table: dict[int, str] | None = None
        self._compact: tuple[tuple[float, str], ...] = ()
        if locale != "en":
            from babel import Locale  # only for a language other than English: the CLI never loads it

            loc = Locale.parse(locale)
            symbols = loc.number_symbols.get("latn", loc.number_symbols)
            decimal, group = symbols.get("decimal", "."), symbols.get("group", ",")
            if (decimal, group) != _ENGLISH_SYMBOLS:
                self._table = str.maketrans({".": decimal, ",": group})
            self._compact = _compact_units(loc)

    def _l(self, text: str) -> str:
        return text.translate(self._table) if self._table else text

    def count(self, n: Any, unit: str = "") -> str:
        return self._l(count(n, unit))

    def number(self, x: Any, digits: int = 4, unit: str = "") -> str:
        return self._l(number(x, digits, unit))

    def si(self, x: Any, unit: str = "", digits: int = 3) -> str:
        return self._l(si(x, unit, digits))

    def nbytes(self, n: Any, digits: int = 3) -> str:
        return self._l(nbytes(n, digits))

    def duration(self, seconds: Any, digits: int = 3) -> str:
        return self._l(duration(seconds, digits))

    def percent(self, x: Any, digits: int = 1) -> str:
        return self._l(percent(x, digits))

    def ratio(self, x: Any, digits: int = 3) -> str:
        return self._l(ratio(x, digits))

    def cell(self, x: Any) -> str:
        return x if isinstance(x, str) else self._l(cell(x))

    def amount(self, x: Any, digits: int = 3) -> str:
        """A rounded count of things: SI in English (``13.2 k``), the locale's compact form elsewhere
        (``1.32万``); below the first compact unit, the number itself (``9,999``)."""
        if not self._compact or missing(x) or not math.isfinite(float(x)):
            return self._l(amount(x, digits))
        f = float(x)
        r = float(f"{f:.{digits}g}")  # rounded first: 99,999,999 is 1亿, not 10000万
        for scale, suffix in reversed(self._compact):
            if abs(r) >= scale:
                text = _round_sig(r / scale, digits).replace(",", "")  # 4500亿: no grouping inside a 10⁴ group
                return self._l(f"{text}{suffix}")
        return self._l(number(round(f) if abs(f) >= 1 else f, digits))


def _compact_units(loc: Any) -> tuple[tuple[float, str], ...]:
    """(divisor, suffix) of a locale's short compact forms that differ from plain digits, smallest first:
    zh: (1e4, 万), (1e8, 亿), (1e12, 万亿). Read from babel's CLDR data (pattern "0万" at 10000: 10⁴ → 万)."""
    forms = loc.compact_decimal_formats.get("short", {}).get("other", {})
    out: dict[str, float] = {}
    for magnitude, pattern in forms.items():
        text = getattr(pattern, "pattern", str(pattern))
        zeros = text.count("0")
        suffix = text.replace("0", "").strip().strip("'")
        if not suffix or not zeros:
            continue
        divisor = float(magnitude) / 10 ** (zeros - 1)
        out.setdefault(suffix, divisor)
    return tuple(sorted(((d, s) for s, d in out.items()), key=lambda t: t[0]))


_FORMATTERS: dict[str, Formatter] = {}


def for_lang(code: str) -> Formatter:
    """The formatter for a page language (``"en"``, ``"zh"``; babel's locale of that name), made once."""
    f = _FORMATTERS.get(code)
    if f is None:
        f = _FORMATTERS[code] = Formatter(code)
    return f


ENGLISH = for_lang("en")
