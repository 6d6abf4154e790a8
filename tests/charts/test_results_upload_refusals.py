"""The Roofline page's results upload refuses a row in the file's own terms (hostile-visitor review)."""

from __future__ import annotations

import json

import pytest

from gemmlib.charts.roofline import results_from_json
from gemmlib.core.errors import InputError


def test_a_row_missing_fields_is_named_by_its_fields_not_by_python_internals():
    # before: "result 0 does not look like a benchmark row (BenchResult.__init__() missing 7 required
    # positional arguments: 'name', ...)"
    rows = [{"bench": "precision", "name": "bf16"}] * 3
    with pytest.raises(InputError) as e:
        results_from_json(json.dumps({"results": rows}).encode())
    text = str(e.value)
    assert "__init__" not in text and "positional" not in text, text
    assert text.startswith("result 0 lacks device, device_name, dtype, shape, flops, bytes"), text


@pytest.mark.parametrize("doc", [
    {"results": [{"op": "all_reduce", "bytes": 1024, "nproc": 2, "backend": "gloo", "time_s": 1e-4,
                  "median_s": 1e-4, "algbw_gbps": 10.0, "busbw_gbps": 10.0, "correct": True}]},  # bench collective
    {"device": "cpu", "dtypes": ["fp32"], "points": []},  # a calibration, not benchmark rows
])
def test_another_commands_json_is_refused_naming_the_files_that_are_accepted(doc):
    """Only `bench precision|tiling|batching --json` and a report's results.json hold benchmark rows: the refusal
    of another command's JSON names them (it said "as written by --json", which every command has)."""
    with pytest.raises(InputError) as e:
        results_from_json(json.dumps(doc).encode())
    text = str(e.value)
    assert "`bench precision`, `bench tiling` or `bench batching`" in text and "--json" in text, text


def test_a_file_that_is_not_json_is_said_with_where_and_what_to_correct_in_the_readers_language():
    """It said "the file is not valid JSON (Expecting ',' delimiter: line 3 column 5 (char 17))" in English on the
    Chinese page too, and not what to do; it now says it as the estimator's config upload does."""
    from ui.i18n import gettext_for

    with pytest.raises(InputError) as e:
        results_from_json(b'{"results": [\n  {"bench": "precision"\n  "name": 1}]}')
    text = str(e.value)
    assert text.startswith("the file is not valid JSON: Expecting ',' delimiter at line 3, column 3; correct the text"), text
    zh = e.value.render(gettext_for("zh"))
    assert zh.startswith("该文件 不是有效的 JSON：第 3 行第 3 列") and "Expecting" not in zh, zh
