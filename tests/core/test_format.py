"""The one formatter (gemmlib.core.format): exact counts, SI values, durations, table cells.

Checked against references built here independently: digit grouping by hand, and every rounded
string parsed back into a number that must lie within half a unit of its last digit.
"""

import math
import re
from decimal import Decimal

import numpy as np
import pytest

from gemmlib.core import format as F

PREFIX = {"E": 18, "P": 15, "T": 12, "G": 9, "M": 6, "k": 3, "": 0, "m": -3, "µ": -6, "n": -9, "p": -12}


def _grouped(n: int) -> str:
    """Thousands separators by hand: reversed digits in chunks of three."""
    d = str(abs(n))[::-1]
    out = ",".join(d[i:i + 3] for i in range(0, len(d), 3))[::-1]
    return ("-" if n < 0 else "") + out


@pytest.mark.parametrize("n", [0, 7, 999, 1000, -1234567, 34_359_738_368, 108_800_111_542_272, 2**70, 2**64 + 1])
def test_counts_keep_every_digit(n):
    assert F.count(n) == _grouped(n)
    assert F.cell(n) == _grouped(n)
    assert F.count(np.int64(min(n, 2**62))) == _grouped(min(n, 2**62))


def _parse(text: str, unit: str) -> float:
    m = re.fullmatch(rf"(-?[\d,]+(?:\.\d+)?) ([EPTGMkmµnp]?){re.escape(unit)}", text)
    assert m, text
    return float(m.group(1).replace(",", "")) * 10.0 ** PREFIX[m.group(2)]


@pytest.mark.parametrize("x", [3.4359738368e10, 58.7e6, 999.96e3, 1.0, 0.5, 123.456, 7.77e15, 1.23e12, 4.2e-3])
@pytest.mark.parametrize("unit", ["FLOP", "B", "s"])
def test_si_rounds_to_three_significant_digits_with_a_prefix(x, unit):
    text = F.si(x, unit)
    back = _parse(text, unit)
    mantissa = text.split(" ")[0].replace(",", "")
    digits = len(mantissa.replace("-", "").replace(".", "").lstrip("0"))
    assert digits <= 3, text
    last = Decimal(mantissa).as_tuple().exponent  # the place of the last digit shown
    prefix_exp = round(math.log10(back / float(mantissa))) if float(mantissa) else 0
    assert abs(back - x) <= 0.5 * 10.0 ** (last + prefix_exp) * 1.0001, (x, text)
    assert float(mantissa) < 1000  # 999.96 k is "1 M", not "1000 k"


def test_si_small_prefixes_only_for_seconds():
    assert F.si(0.0042, "s") == "4.2 ms"
    assert F.si(0.5, "FLOP") == "0.5 FLOP"
    assert F.si(0, "B") == "0 B"


@pytest.mark.parametrize("s, want", [(812e-9, "812 ns"), (1.5e-6, "1.5 µs"), (0.0123, "12.3 ms"), (4.56, "4.56 s"),
                                     (1234.4, "1,234 s"), (0.0009999, "1 ms"), (0, "0 s")])
def test_durations_in_one_style(s, want):
    assert F.duration(s) == want


@pytest.mark.parametrize("bad", [None, float("nan"), np.nan, float("inf")])
def test_missing_values_are_a_dash(bad):
    for f in (F.count, F.number, F.si, F.duration, F.percent, F.ratio, F.cell):
        assert f(bad) == F.DASH


def test_cells_never_show_none_nan_true_or_seventeen_digits():
    assert F.cell(True) == "yes" and F.cell(False) == "no"
    assert F.cell(0.1 + 0.2) == "0.3"
    assert F.cell(1 / 3) == "0.3333"
    assert F.cell(np.float64(2.5e-7)) == "2.5e-7"
    assert F.cell(58_700_000.0) == "58,700,000"  # an integral float is a count
    for v in (None, float("nan"), True, 0.1 + 0.2, 1 / 3, 12345.678901234567):
        c = F.cell(v)
        assert c not in ("None", "nan", "True") and len(re.sub(r"\D", "", c)) <= 8, c


def test_percent_and_ratio():
    assert F.percent(0.5) == "50.0%" and F.percent(1 / 3, 2) == "33.33%"
    assert F.ratio(1.8432) == "1.84×"


def test_text_table_aligns_numbers_right():
    t = F.text_table([{"op": "q_proj", "FLOPs": 34_359_738_368, "time": None},
                      {"op": "lm_head", "FLOPs": 5, "time": 0.5}])
    lines = t.splitlines()
    assert lines[0].split() == ["op", "FLOPs", "time"]
    assert lines[2].startswith("q_proj") and "34,359,738,368" in lines[2] and lines[2].endswith("—")
    assert lines[3].index(" 5 ") + 1 == lines[2].index("368")  + 2  # right-aligned: 5 under the last digit


# ----- amounts of bytes: binary units, the project's one byte unit -------------------------------------------
@pytest.mark.parametrize("n, want", [(0, "0 B"), (512, "512 B"), (1536, "1.5 KiB"), (64 * 2**20, "64 MiB"),
                                     (1000 * 2**20, "1,000 MiB"), (1023.9 * 2**20, "1 GiB"),
                                     (81559 * 2**20, "79.6 GiB"), (2**40 + 2**39, "1.5 TiB")])
def test_bytes_are_written_in_binary_units(n, want):
    assert F.nbytes(n) == want


@pytest.mark.parametrize("n", [1, 1023, 1024, 123_456_789, 16_060_522_496, 2**45 + 12345])
def test_bytes_round_to_three_digits_and_parse_back(n):
    text = F.nbytes(n)
    m = re.fullmatch(r"([\d,]+(?:\.\d+)?) (B|KiB|MiB|GiB|TiB)", text)
    assert m, text
    scale = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}[m.group(2)]
    back = float(m.group(1).replace(",", "")) * scale
    assert abs(back - n) <= 0.005 * n + 0.5, (n, text)  # three significant digits
    assert "e" not in text and "GB" not in text


def test_missing_bytes_and_amounts_are_a_dash():
    for bad in (None, float("nan"), float("inf")):
        assert F.nbytes(bad) == F.DASH and F.amount(bad) == F.DASH
        assert F.for_lang("zh").amount(bad) == F.DASH


# ----- in the reader's language (babel's locale data) ----------------------------------------------------------
def test_english_is_the_module_functions_exactly():
    en = F.for_lang("en")
    for x in (0, 7, 1234567, 3.44e10, 0.0123, 0.973, 1.84, 2.5e-7, None, True):
        assert en.count(x) == F.count(x) and en.number(x) == F.number(x) and en.cell(x) == F.cell(x)
    for x in (3.44e10, 13166.3, 0.0123):
        assert en.si(x, "FLOP") == F.si(x, "FLOP") and en.duration(x) == F.duration(x)
        assert en.amount(x) == F.si(x) and en.nbytes(x) == F.nbytes(x)


def test_chinese_counts_of_things_use_wan_and_yi_as_cldr_does():
    """The compact forms come from babel's CLDR data for zh; checked against babel's own formatter."""
    from babel.numbers import format_compact_decimal

    zh = F.for_lang("zh")
    for x, want in ((13166.3, "1.32万"), (450e9, "4500亿"), (99_999_999, "1亿"), (3.1e12, "3.1万亿"),
                    (9999.6, "1万"), (1234, "1,234"), (0.25, "0.25")):
        assert zh.amount(x) == want, x
    for x in (13166.3, 2.5e5, 7.25e9):  # babel's own compact form, at the same precision
        assert zh.amount(x) == format_compact_decimal(x, locale="zh", fraction_digits=3 - len(str(int(
            x / {1: 1e4, 2: 1e8}[1 + (x >= 1e8)])))), x
    # engineering quantities keep SI prefixes and units in every language, as datasheets write them
    assert zh.si(3.35e12, "B/s") == "3.35 TB/s" and zh.nbytes(16_060_522_496) == "15 GiB"
    assert zh.count(1234567) == "1,234,567"  # CLDR zh groups by thousands with ","
