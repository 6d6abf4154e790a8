"""Chart data stays displayable: huge counts, hostile uploads, wide matrices."""

import json

import pandas as pd
import pyarrow as pa
import pytest

from gemmlib import InputError
from gemmlib.charts.explain import GRIDS_WIDTH, grid_cell_size
from gemmlib.charts.model import arrow_safe
from gemmlib.charts.roofline import results_from_json


def test_arrow_safe_turns_counts_past_int64_into_floats_and_keeps_the_rest():
    rows = [{"op": "q_proj", "flops": 2**70, "small": 12, "flag": True, "t": float("inf")}]
    with pytest.raises(OverflowError):
        pa.Table.from_pandas(pd.DataFrame(rows))
    safe = arrow_safe(rows)
    assert safe == [{"op": "q_proj", "flops": float(2**70), "small": 12, "flag": True, "t": None}]
    assert isinstance(safe[0]["small"], int)
    pa.Table.from_pandas(pd.DataFrame(safe))  # no overflow now


ROW = {"bench": "precision", "name": "bf16", "device": "cpu", "device_name": "x", "dtype": "bf16",
       "shape": {"m": 2, "n": 2, "k": 2}, "flops": 16, "bytes": 24, "median_s": 1e-6}


def test_results_upload_accepts_rows_and_refuses_non_text_fields():
    assert [r.name for r in results_from_json(json.dumps({"results": [ROW]}).encode())] == ["bf16"]
    with pytest.raises(InputError, match="'bench' is int"):
        results_from_json(json.dumps([{**ROW, "bench": 5}, ROW]).encode())
    with pytest.raises(InputError, match="'dtype' is dict"):
        results_from_json(json.dumps([{**ROW, "dtype": {}}]).encode())


@pytest.mark.parametrize("k,n", [(1, 1), (3, 2), (8, 8), (12, 12), (16, 16)])
def test_step_grids_fit_the_content_column(k, n):
    cell = grid_cell_size(k, n)
    assert 14 <= cell <= 48
    if cell > 14:  # at the floor the grids may scroll, but only for shapes past 12
        assert cell * (k + 2 * n) + 2 * 28 + 3 * 24 <= GRIDS_WIDTH
