"""The Tiling page through AppTest: render, the tiled trace's step-through, traffic model, a CPU run, bad input.

The step-through is browser-side (ui.stepper): a test steps by reporting a step in the component's
state, as the browser does, and reads what it would draw from the data the page sends. Playing is
checked in the browser (tests/browser/test_browser_stepper.py, test_browser_interact.py).
"""

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from gemmlib.measure import tiling as bt
from gemmlib.measure.triton_gemm import prepare_interpreter

prepare_interpreter()  # before anything else in this test session imports triton

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "7_Tiling.py")


def _app() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert not at.exception, at.exception
    if at.radio(key="tb_device").value != "cpu":  # on a GPU machine: test the CPU path here
        at.radio(key="tb_device").set_value("cpu").run()
    return at


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def _data(at: AppTest) -> dict:
    comp = [e for e in at.main if getattr(e, "type", "") == "bidi_component"]
    assert len(comp) == 1
    return json.loads(comp[0].proto.json)


def _text(at: AppTest) -> str:
    d, pos = _data(at), at.session_state.ti_step
    shown = d["labels"]["step"].format(n=pos + 1, total=len(d["frames"])) + " · " + d["frames"][pos]["text"]
    return " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption) + " " + shown


def _go(at: AppTest, step: int) -> AppTest:
    at.session_state["ti_stepper"] = {"step": {"id": _data(at)["traceId"], "step": step}}
    return at.run()


def test_default_render():
    at = _app()
    assert "Tiling" in at.title[0].value
    assert not at.error
    assert "Step 1 of" in _text(at)
    # traffic table: bigger tiles read A fewer times
    traffic = at.dataframe[0].value
    assert list(traffic["A reads"]) == sorted(traffic["A reads"], reverse=True)
    assert traffic["A reads"].iloc[0] == 4096 // 16
    if not _cuda():
        assert any("interpreter" in i.value for i in at.info)  # no GPU here: the page says so


def test_stepping():
    at = _app()
    _go(at, 1)
    assert at.session_state.ti_step == 1
    last = len(_data(at)["frames"]) - 1
    _go(at, last)
    assert at.session_state.ti_step == last and last > 1 and "epilogue" in _text(at)
    _go(at, 0)
    d = _data(at)
    assert d["speed"] == 3 and at.session_state.ti_step == 0  # played in the browser at 3 steps/s
    _go(at, 3)  # the scrubber released at "Step 4 of"
    assert at.session_state.ti_step == 3 and "Step 4 of" in _text(at)
    assert at.query_params["ti_step"] == "3"
    at.number_input(key="ti_t").set_value(3).run()  # a new trace starts at its first step
    assert at.session_state.ti_step == 0 and "Step 1 of" in _text(at)


def test_extremes_of_the_trace_inputs():
    at = _app()
    for key, v in (("ti_m", 1), ("ti_n", 1), ("ti_k", 1), ("ti_t", 1)):
        at.number_input(key=key).set_value(v).run()
        assert not at.exception
    at.number_input(key="ti_t").set_value(16).run()
    for key in ("ti_m", "ti_n", "ti_k"):
        at.number_input(key=key).set_value(16).run()
    assert not at.exception and not at.error
    assert "Step 1 of 2" in _text(at)  # one tile, then the epilogue


def test_cpu_benchmark_run_shows_table_and_lesson():
    at = _app()
    at.number_input(key="tb_size").set_value(48).run()
    at.multiselect(key="tb_tiles_cpu").set_value([16, 32]).run()
    at.slider(key="tb_time").set_value(0.05).run()
    at.button(key="tb_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    table = at.dataframe[1].value
    assert set(table["impl"]) == {"python_tiled", "numpy_blocked", "triton", "torch"}
    tri = table[table["impl"] == "triton"]
    if not _cuda():
        assert tri["median ms"].isna().all()  # interpreter: no speed figure
        assert (tri["rel_error"] < 1e-5).all()
    assert any("library call" in s.value for s in at.success)


def test_over_the_memory_cap_is_a_clear_message(monkeypatch):
    monkeypatch.setenv("GEMM_MAX_BYTES", "1000")
    at = _app()
    at.number_input(key="tb_size").set_value(48).run()
    assert not at.exception  # refused before a press: the button is off, saying why (before: "Not run" on a press)
    assert at.button(key="tb_run").disabled and "GEMM_MAX_BYTES" in at.button(key="tb_run").help
    warnings = [w.value for w in at.warning if "caps would refuse this run" in w.value]
    assert warnings and "GEMM_MAX_BYTES" in warnings[0] and "Traceback" not in warnings[0]


def test_wave_prediction_inputs():
    at = _app()
    cap = " ".join(c.value for c in at.caption)
    assert "N = 8,192: 2,048 tiles in 16 waves" in cap  # 64 × 32 tiles of 128×256 on 132 SMs
    at.number_input(key="tw_n1").set_value(8000).run()  # "to" below "from"
    assert not at.exception
    assert any("must not be below" in e.value for e in at.error)
    at.number_input(key="tw_n1").set_value(16000).run()
    at.number_input(key="tw_step").set_value(1).run()  # thousands of points
    assert any("at most" in e.value for e in at.error)
    at.number_input(key="tw_step").set_value(256).run()
    at.selectbox(key="tw_tn").set_value(128).run()
    assert not at.exception and not at.error


def test_the_default_wave_sweep_shows_the_cliff():
    """§4's defaults cross a wave boundary: checked by hand (tiles = ⌈M/128⌉·⌈N/256⌉, waves = ⌈tiles/SMs⌉)
    and from gemmlib's own prediction, which must drop where the 17th wave starts."""
    at = _app()
    v = {k: int(at.number_input(key=k).value) for k in ("tw_sms", "tw_mk", "tw_n0", "tw_n1", "tw_step")}
    tm, tn = int(at.selectbox(key="tw_tm").value), int(at.selectbox(key="tw_tn").value)
    ns = list(range(v["tw_n0"], v["tw_n1"] + 1, v["tw_step"]))
    waves = [-(-(-(-v["tw_mk"] // tm) * -(-n // tn)) // v["tw_sms"]) for n in ns]
    assert min(waves) < max(waves), "the default sweep never starts another wave"
    pred = bt.predicted_wave_rows(v["tw_mk"], v["tw_mk"], ns, (tm, tn), v["tw_sms"])
    assert [p["waves"] for p in pred] == waves
    cliff = bt.wave_cliff(pred)
    assert cliff["waves_after"] == cliff["waves_before"] + 1 and cliff["drop"] > 0.04
    last_full = (v["tw_sms"] * cliff["waves_before"] // -(-v["tw_mk"] // tm)) * tn  # widest N in those waves
    assert cliff["n_before"] <= last_full < cliff["n_after"]
    md = " ".join(m.value for m in at.markdown)
    assert f"from N = {cliff['n_before']:,} to {cliff['n_after']:,}" in md and "falls by" in md
