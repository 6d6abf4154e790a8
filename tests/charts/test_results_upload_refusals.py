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
