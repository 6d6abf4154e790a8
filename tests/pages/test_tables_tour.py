"""Every table of every page, as sent to the browser: drawn by one set of rules (ui.table).

No cell is None, NaN or a bare flag (a missing value is drawn as "—", the placeholder every table
sets); every column of fractional numbers has a display format, so no raw 17-digit float is drawn;
columns of exact counts are drawn with every digit. The benchmark pages are checked with results
of small real runs on this CPU. (tests/browser/test_browser_tour.py checks the same pages in a
browser.)
"""

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from gemmlib.measure import batching as bb
from gemmlib.measure import precision as bp
from gemmlib.measure import tiling as bt

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["app.py", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("*.py"))]
WORDS = {"None", "none", "nan", "NaN", "True", "False", "true", "false", "null"}


@pytest.fixture(scope="module")
def results() -> dict:
    """Session state of the benchmark pages after small runs (what their buttons would store)."""
    pr = bp.run_precision(bp.PrecisionConfig(device="cpu", shapes=bp.square_shapes([32]),
                                             dtypes=("fp32", "tf32", "int8"), min_run_time=0.02),
                          record_results=False)
    ba = bb.run_batching(bb.BatchingConfig(device="cpu", m=1, k=64, n=64, batches=(1, 4), min_run_time=0.02))
    ti = bt.run_tiling(bt.TilingConfig(device="cpu", size=32, tiles=(16,), impls=("numpy_blocked", "torch"),
                                       min_run_time=0.02))
    return {"pages/6_Precision.py": {"pr_results": [r.to_dict() for r in pr]},
            "pages/8_Batching.py": {"ba_results": [r.to_dict() for r in ba]},
            "pages/7_Tiling.py": {"tb_results": [r.to_dict() for r in ti]}}


def _check_frame(where: str, df: pd.DataFrame, proto) -> list[str]:
    bad = []
    config = json.loads(proto.columns or "{}")
    if proto.placeholder != "—":
        bad.append(f"{where}: no '—' placeholder (a missing value would be drawn as 'None')")
    for i, col in enumerate(df.columns):
        s = df[col]
        kind = (config.get(str(col)) or config.get(f"_pos:{i}") or {}).get("type_config", {})  # int names: by position
        if kind.get("type") in ("checkbox", "progress", "link"):
            continue
        if pd.api.types.is_bool_dtype(s):
            bad.append(f"{where} {col!r}: a column of bare flags")
        elif pd.api.types.is_float_dtype(s):
            if not kind.get("format") and any(not float(v).is_integer() for v in s.dropna()):
                bad.append(f"{where} {col!r}: fractional numbers without a display format")
        elif not pd.api.types.is_numeric_dtype(s):  # object or string columns
            for v in s:
                missing = v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))
                if isinstance(v, bool) or (missing and proto.placeholder != "—"):
                    bad.append(f"{where} {col!r}: a {v!r} cell")
                    break
                if isinstance(v, str) and v.strip() in WORDS:
                    bad.append(f"{where} {col!r}: the text {v!r}")
                    break
    return bad


VIEWS = [(p, {}) for p in PAGES] + [
    ("pages/4_LLM_Estimator.py", {"le_cmp": "true", "le_serve": "true", "le_train": "true", "le_gpus": "8"}),
    ("pages/1_Accumulate.py", {"acc_src": "random", "acc_ints": "false", "acc_beta": "0.5"}),
]


@pytest.mark.parametrize("page, query", VIEWS, ids=[f"{p}{'+' if q else ''}" for p, q in VIEWS])
def test_every_table_is_drawn_by_the_formatter(page, query, results):
    at = AppTest.from_file(str(ROOT / page), default_timeout=120)
    at.query_params.update(query)
    for k, v in results.get(page, {}).items():
        at.session_state[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    bad = []
    for i, d in enumerate(at.dataframe):
        bad += _check_frame(f"{page} table {i}", d.value, d.proto)
    assert not bad, "\n".join(bad)
    if page in results:
        assert len(at.dataframe) >= 1  # the results table itself was checked


def test_the_checker_finds_what_it_looks_for():
    """Not vacuous: a table with None, a flag and a raw float fails it."""
    class Proto:
        placeholder, columns = "", "{}"

    df = pd.DataFrame({"a": [0.1 + 0.2, 1.0], "b": [True, False], "c": ["x", None], "d": ["True", "y"]})
    bad = " ".join(_check_frame("t", df, Proto()))
    assert "placeholder" in bad and "'a'" in bad and "'b'" in bad and "'c'" in bad and "'d'" in bad
