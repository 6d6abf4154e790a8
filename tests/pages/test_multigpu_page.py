"""The Multi-GPU page through AppTest on a CPU machine: it says it runs gloo and what that means, a
small collective sweep, a small tensor-parallel run beside its estimate, and bad input."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gemmlib.core import interconnect
from gemmlib.measure import launch

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "11_Multi_GPU.py")

pytestmark = [pytest.mark.usefixtures("bench_env"),
              pytest.mark.skipif(launch.cuda_count() >= 2, reason="the CPU (gloo) view of the page")]




def _app() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=180).run()
    assert not at.exception, at.exception
    return at


def test_default_render_says_gloo_and_not_an_interconnect():
    at = _app()
    assert "Multi-GPU" in at.title[0].value
    assert at.radio(key="mg_backend").options == ["gloo"]
    assert any("not an interconnect figure" in i.value for i in at.info)
    assert not at.error
    # the estimate is shown before anything runs
    assert any("llama-3-8b ÷ 16" in c.value for c in at.caption)
    assert at.dataframe and "per rank ms" in at.dataframe[0].value.columns


def test_collectives_then_tensor_parallel():
    at = _app()
    at.selectbox(key="mg_top").set_value(1024).run()
    at.number_input(key="mg_iters").set_value(2).run()
    at.button(key="mg_run_coll").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("not a GPU interconnect" in w.value for w in at.warning)
    assert any("not kept as a measured interconnect" in c.value.lower() for c in at.caption)
    table = at.dataframe[0].value
    assert set(table["op"]) == {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"}
    assert table["correct"].all() and (table["busbw_gbps"] > 0).all()

    at.number_input(key="mg_seq").set_value(16).run()
    at.button(key="mg_run_tp").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    import re

    gloo = next(w.value for w in at.warning if "Each CPU rank has" in w.value)  # "1 thread", "2 threads": not "(s)"
    n = int(re.search(r"Each CPU rank has (\d+) threads? as its device", gloo).group(1))
    assert ("thread as" in gloo) == (n == 1) and "(s)" not in gloo, gloo
    labels = {m.label: m.value for m in at.metric}
    assert labels["output vs one rank"] == "matches"
    assert "speed-up on 2 ranks" in labels and "time in the all-reduces" in labels
    tp_table = at.dataframe[-1].value
    assert list(tp_table["ranks"]) == [2] and tp_table["matches"].all()
    # the bars' labels whole: "2 ranks, tensor-parallel" (Vega cut it to "2 ranks, tensor-p…" at 1280 px)
    import json

    tp = next(json.loads(c.proto.spec) for c in at.get("vega_lite_chart") if "tensor-parallel" in c.proto.spec
              and '"xOffset"' in c.proto.spec)
    axes = [layer["encoding"]["x"]["axis"] for layer in tp.get("layer", [tp]) if "x" in layer.get("encoding", {})]
    assert axes and all(a.get("labelLimit", 0) >= 200 for a in axes), axes


def test_bad_input_shows_a_message_and_keeps_the_page():
    at = _app()
    at.selectbox(key="mg_scale").set_value(1).run()
    at.number_input(key="mg_seq").set_value(512).run()
    assert not at.exception  # refused before a press: the button is off, saying why (before: "Not run" on a press)
    button = at.button(key="mg_run_tp")
    assert button.disabled and "too much for a CPU" in button.help
    assert any("too much for a CPU" in w.value for w in at.warning)


def test_the_estimator_page_offers_a_measured_interconnect():
    m = interconnect.MeasuredInterconnect("gloo", "cpu", "Some CPU", 2, busbw=1e9, latency_s=1e-4)
    interconnect.save_interconnect(m)
    at = AppTest.from_file(str(ROOT / "pages" / "4_LLM_Estimator.py"), default_timeout=180)
    at.query_params["le_tab"] = "Scale-out"  # the tab with the links' table (drawn while open)
    at.run()
    assert at.selectbox(key="le_link").options == ["catalogue", m.name]
    at.number_input(key="le_gpus").set_value(2).run()
    before = next(d.value for d in at.dataframe if "link" in d.value.columns)
    assert m.name not in set(before["link"])
    at.selectbox(key="le_link").set_value(m.name).run()
    assert not at.exception and not at.error
    groups = next(d.value for d in at.dataframe if "link" in d.value.columns and "group" in d.value.columns)
    assert list(groups["link"]) == [m.name] and list(groups["busbw_bytes_per_s"]) == ["1 GB/s"]  # the formatter's
