"""The scale-out charts: valid Vega-Lite, the fast specs equal the Altair charts, and the data is the estimate's."""

from __future__ import annotations

import pytest

from gemmlib.charts import scaleout as cs
from gemmlib.core.hardware import get_hardware
from gemmlib.llm.accounting import Workload
from gemmlib.llm.parallel import Parallel
from gemmlib.llm.presets import from_name
from gemmlib.llm.scaleout import estimate


@pytest.fixture(scope="module")
def est():
    return estimate(from_name("llama-3-8b"), Workload(batch=8, seq_len=512, new_tokens=8), get_hardware("h100"),
                    Parallel(tp=2, pp=2), serve=True, tpot_target_s=0.02)


def _same(chart, fast):
    full = chart.to_dict()  # validates against the Vega-Lite schema
    full.pop("$schema", None)
    fast.pop("$schema", None)
    assert full == fast


def test_specs_validate_and_match(est):
    _same(cs.per_gpu_memory_chart(est.per_gpu, "H100 SXM"), cs.per_gpu_memory_spec(est.per_gpu, "H100 SXM"))
    _same(cs.comm_by_op_chart(est), cs.comm_by_op_spec(est))
    _same(cs.serving_chart(est.serving), cs.serving_spec(est.serving))


def test_chart_data_is_the_estimates(est):
    parts = {p["part"]: p["GiB"] for p in cs.per_gpu_memory_spec(est.per_gpu, "x")["datasets"]["parts"]}
    assert parts["weights"] == pytest.approx(est.per_gpu.weights_bytes / 2**30)
    rows = cs.comm_records(est)
    comm = sum(r["ms"] for r in rows if r["phase"] == "prefill" and r["what"] == "communication")
    assert comm == pytest.approx(est.prefill.collective_s * 1e3)
    idle = [r["ms"] for r in rows if r["phase"] == "prefill" and r["what"] == "idle"]
    assert idle == [pytest.approx(est.prefill.bubble_s * 1e3)]
    pts = cs.serving_records(est.serving)
    assert [p["concurrency"] for p in pts] == [p.concurrency for p in est.serving.points]
    assert sum(p["best"] for p in pts) == 1
