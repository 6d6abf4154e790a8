"""Every table of every page, as sent to the browser: drawn by one set of rules (ui.table).

No cell is None, NaN or a bare flag (a missing value is drawn as "—", the placeholder every table
sets); every column of fractional numbers has a display format, so no raw 17-digit float is drawn;
columns of exact counts are drawn with every digit. One byte unit everywhere (core.format.nbytes:
binary, KiB = 1024 B): no header, cell or text of a page, nor the CLI's tables, names an amount of
bytes in decimal units (kB, MB, GB, TB); rates keep theirs (GB/s, as datasheets write them). The
benchmark pages are checked with results of small real runs on this CPU. (tests/browser/test_browser_tour.py
checks the same pages in a browser.)
"""

import contextlib
import io
import json
import math
import re
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
DECIMAL_BYTES = re.compile(r"(?<![\w/])(?:kB|KB|MB|GB|TB|PB)\b(?!/)")  # an amount of bytes in decimal units
# FLOPs page: its "MB moved" metric is an option id in links (?fl_metric=...), shown as "10⁶ bytes"
DECIMAL_OK = {"MB moved"}


def _decimal_bytes(text: str) -> list[str]:
    for ok in DECIMAL_OK:
        text = text.replace(ok, "")
    return DECIMAL_BYTES.findall(re.sub(r"\S+\d+GB\b", "", text))  # a product name (A100 SXM 80GB) is a name


@pytest.fixture(scope="module")
def results() -> dict:
    """Session state of the benchmark pages after small runs (what their buttons would store)."""
    pr = bp.run_precision(bp.PrecisionConfig(device="cpu", shapes=bp.square_shapes([32]),
                                             dtypes=("fp32", "tf32", "int8"), min_run_time=0.02),
                          record_results=False)
    ba = bb.run_batching(bb.BatchingConfig(device="cpu", m=1, k=64, n=64, batches=(1, 4), min_run_time=0.02))
    ti = bt.run_tiling(bt.TilingConfig(device="cpu", size=32, tiles=(16,), impls=("numpy_blocked", "torch"),
                                       min_run_time=0.02))
    return {"pages/6_Precision.py": {"pr_results": list(pr)},
            "pages/8_Batching.py": {"ba_results": list(ba)},
            "pages/7_Tiling.py": {"tb_results": list(ti)}}


def _check_frame(where: str, df: pd.DataFrame, proto) -> list[str]:
    bad = []
    config = json.loads(proto.columns or "{}")
    if proto.placeholder != "—":
        bad.append(f"{where}: no '—' placeholder (a missing value would be drawn as 'None')")
    for i, col in enumerate(df.columns):
        s = df[col]
        kind = (config.get(str(col)) or config.get(f"_pos:{i}") or {}).get("type_config", {})  # int names: by position
        label = (config.get(str(col)) or config.get(f"_pos:{i}") or {}).get("label") or str(col)
        if _decimal_bytes(label):
            bad.append(f"{where} {label!r}: a header in decimal byte units (amounts are binary: core.format.nbytes)")
        if not pd.api.types.is_numeric_dtype(s) and any(isinstance(v, str) and _decimal_bytes(v) for v in s):
            bad.append(f"{where} {col!r}: a cell in decimal byte units")
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
    ("pages/4_LLM_Estimator.py", {"le_cmp": "true", "le_serve": "true", "le_train": "true", "le_gpus": "8",
                                   "le_tab": "Serving"}),
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
    texts = [e.value for kind in ("markdown", "caption", "success", "info", "warning", "error") for e in getattr(at, kind)]
    texts += [f"{m.label} {m.value}" for m in at.metric]
    bad += [f"{page}: decimal byte units in {t[:120]!r}" for t in texts if _decimal_bytes(str(t))]
    assert not bad, "\n".join(bad)
    if page in results:
        assert len(at.dataframe) >= 1  # the results table itself was checked


@pytest.mark.parametrize("argv", [
    ["estimate", "--preset", "llama-2-7b", "--batch", "4", "--seq-len", "512", "--new-tokens", "16"],
    ["estimate", "--preset", "llama-3-70b", "--gpus", "8", "--tp", "8", "--train", "--train-tokens", "1e12"],
    ["bench", "batching", "--device", "cpu", "--m", "1", "--k", "32", "--n", "32", "--batches", "1,2",
     "--min-run-time", "0.01"],
    ["bench", "tiling", "--device", "cpu", "--size", "32", "--tiles", "16", "--impls", "numpy_blocked,torch",
     "--min-run-time", "0.01"],
], ids=["estimate", "estimate-scale-out", "bench-batching", "bench-tiling"])
def test_the_cli_tables_write_bytes_in_one_unit(argv):
    from gemmlib.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(argv) == 0
    text = out.getvalue()
    assert re.search(r"\d (KiB|MiB|GiB|TiB)\b", text) or argv[0] == "bench"  # amounts of bytes are there
    bad = [line for line in text.splitlines() if _decimal_bytes(line)]
    assert not bad, "\n".join(bad)


def test_the_checker_finds_what_it_looks_for():
    """Not vacuous: a table with None, a flag and a raw float fails it."""
    class Proto:
        placeholder, columns = "", "{}"

    df = pd.DataFrame({"a": [0.1 + 0.2, 1.0], "b": [True, False], "c": ["x", None], "d": ["True", "y"],
                       "traffic GB": [1, 2], "e": ["1.5 GB", "2 GiB"], "rate GB/s": [1, 2]})
    bad = " ".join(_check_frame("t", df, Proto()))
    assert "placeholder" in bad and "'a'" in bad and "'b'" in bad and "'c'" in bad and "'d'" in bad
    assert "'traffic GB'" in bad and "'e'" in bad and "rate GB/s" not in bad
    assert _decimal_bytes("weights 26.3 GB") == ["GB"] and not _decimal_bytes("1.5 GiB at 3.35 TB/s on A100 SXM 80GB")


def test_chart_datasets_as_arrow_hold_the_same_rows():
    """ui.charts_as_arrow: each Vega-Lite spec of a view carries its datasets as the Arrow IPC bytes Streamlit sends
    (read back, the same rows); a dataset pyarrow cannot type, a field named in ``keep`` and anything that is not
    a chart stay as they were."""
    from dataclasses import dataclass

    import pyarrow as pa

    import ui

    @dataclass(frozen=True)
    class V:
        chart: dict
        kept: dict
        words: str

    rows = [{"op": "q_proj", "flops": 2.5e12, "count": 32}, {"op": "lm_head", "flops": None, "count": 1}]
    mixed = [{"x": 1}, {"x": "one"}]
    v = V({"mark": "bar", "datasets": {"rows": rows, "mixed": mixed}}, {"datasets": {"pts": rows}}, "text")
    out = ui.charts_as_arrow(v, keep=("kept",))
    data = out.chart["datasets"]["rows"]
    assert isinstance(data, bytes)
    assert pa.ipc.open_stream(data).read_all().to_pylist() == rows
    assert out.chart["datasets"]["mixed"] is mixed and out.chart["mark"] == "bar"
    assert out.kept["datasets"]["pts"] is rows and out.words == "text"
    assert v.chart["datasets"]["rows"] is rows  # the view itself is not changed
