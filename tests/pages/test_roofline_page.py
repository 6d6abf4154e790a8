"""The Roofline page through AppTest, and the chart helpers it uses (roofs, points, results files)."""

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gemmlib.charts import roofline as cr
from gemmlib.core.errors import InputError
from gemmlib.core.hardware import get_hardware
from gemmlib.core.results import BenchResult, clear_recorded, record, to_json, unsupported

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "9_Roofline.py")


def _row(bench="tiling", name="torch", tflops_time=1e-3, flops=2e9, nbytes=1e7, **kw):
    return BenchResult(bench=bench, name=name, device="cpu", device_name="test CPU", dtype="fp32",
                               shape={"m": 1000, "n": 1000, "k": 1000}, flops=flops, bytes=nbytes,
                               median_s=tflops_time, **kw)


@pytest.fixture(autouse=True)
def _clean_store(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path))  # no measured ceilings from other runs
    clear_recorded()
    yield
    clear_recorded()


def test_roof_rows_are_the_roofline():
    hw = get_hardware("h200")
    rows = cr.roof_rows(hw, ["bf16", "fp32"])
    bf = [r for r in rows if r["dtype"] == "bf16"]
    ridge = 989.4e12 / 4.8e12
    assert [r["intensity"] for r in bf] == [cr.LO, pytest.approx(ridge), cr.HI]
    assert bf[0]["tflops"] == pytest.approx(cr.LO * 4.8e12 / 1e12)
    assert bf[1]["tflops"] == pytest.approx(989.4) and bf[2]["tflops"] == pytest.approx(989.4)
    assert cr.roof_rows(get_hardware("a100"), ["fp8"]) == []  # no fp8 on an A100: no roof


def test_result_points_skip_untimed_rows():
    pts = cr.result_points([_row(), _row(name="triton", tflops_time=None),
                            unsupported("tiling", "x", "cpu", "fp32", {}, "why")])
    assert len(pts) == 1
    assert pts[0]["intensity"] == pytest.approx(200.0) and pts[0]["tflops"] == pytest.approx(2.0)


def test_results_from_json_round_trip_and_bad_files():
    text = to_json([_row(), _row(bench="batching", name="stacked")], device="cpu")
    back = cr.results_from_json(text.encode())
    assert [r.name for r in back] == ["torch", "stacked"] and back[0].tflops == pytest.approx(2.0)
    report_like = json.dumps({"sections": {"tiling": {"results": json.loads(text)["results"]}}})
    assert len(cr.results_from_json(report_like)) == 2
    for bad, match in ((b"not json", "not valid JSON"), (b"\xff\xfe", "UTF-8"), (b"{}", "no results"),
                       (b'{"results": [1]}', "not an object"), (b"x" * (cr.MAX_RESULTS_BYTES + 1), "refused")):
        with pytest.raises(InputError, match=match):
            cr.results_from_json(bad)


def _app() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception, at.exception
    return at


def test_default_render_without_points():
    at = _app()
    assert "Roofline" in at.title[0].value
    assert not at.error
    assert any("No measured points yet" in i.value for i in at.info)
    roofs = at.dataframe[0].value
    assert any("H200" in r and "bf16" in r for r in roofs["roof"])


def test_recorded_points_and_estimator_overlay():
    record([_row(), _row(bench="batching", name="stacked", tflops_time=2e-3)])  # shared with the class
    at = _app()
    assert not at.error
    assert " shown." not in " ".join(c.value for c in at.caption)  # shared rows: only on request
    at.checkbox(key="rf_shared").check().run()
    assert "2 measured points shown." in " ".join(c.value for c in at.caption)
    words = " ".join(c.value for c in at.caption)
    assert "llama-3-8b, batch 1, 1,024 prompt tokens, 128 decode steps" in words  # (once "1000000 prompt tokens")
    assert "each diamond is one op of the estimate" in words and "times the efficiency of its shape" in words
    at.checkbox(key="rf_est").uncheck().run()
    assert not at.exception and "each diamond" not in " ".join(c.value for c in at.caption)


def test_the_estimators_diamonds_have_their_own_colour_legend_and_words():
    """The diamonds were red, the fp8 roof's colour, with no legend entry, and their tooltip called the estimated time
    a "median ms" (a measurement's word): now a colour no roof takes, a legend entry of their own, and a tooltip with
    the estimated time over the phase and the efficiency the estimator used."""
    from gemmlib.charts import roofline as cr
    from gemmlib.core.hardware import get_hardware
    from gemmlib.llm import accounting
    from gemmlib.llm.presets import from_name

    hw = get_hardware("h200")
    est = accounting.estimate(from_name("llama-3-8b"), accounting.Workload(batch=1, seq_len=1024, new_tokens=128), hw)
    pts = cr.estimator_points(est)
    assert pts and all(0 < p["efficiency"] <= 1 and p["estimated_ms"] > 0 and "median_ms" not in p for p in pts)
    spec = cr.roofline_chart(cr.roof_rows(hw, ["bf16", "fp8"]), [], pts).to_dict()
    diamonds = next(layer for layer in spec["layer"] if layer["mark"].get("shape") == "diamond")
    assert diamonds["encoding"]["color"]["scale"]["range"] == [cr.ESTIMATE_COLOUR] != ["#d62728"]
    assert diamonds["encoding"]["color"]["legend"] is not None
    titles = [t["title"] for t in diamonds["encoding"]["tooltip"]]
    assert "estimated ms (the whole phase)" in titles and "efficiency" in titles and "median ms" not in titles


def test_a_sessions_results_are_its_own_until_it_shares_them():
    from gemmlib.core.results import recorded

    at = AppTest.from_file(PAGE, default_timeout=60)
    at.session_state["_my_results"] = [_row(), _row(name="numpy_blocked", tflops_time=4e-3)]
    at.run()
    assert not at.exception and not at.error
    assert "2 measured points shown." in " ".join(c.value for c in at.caption)
    assert recorded() == []  # nobody else sees them
    one = AppTest.from_file(PAGE, default_timeout=60)
    one.session_state["_my_results"] = [_row()]
    one.run()  # one point: singular ("1 measured point(s) shown." before)
    assert "1 measured point shown." in " ".join(c.value for c in one.caption)
    other = _app()
    assert " shown." not in " ".join(c.value for c in other.caption)
    at.button(key="rf_share").click().run()
    assert [r.extra.get("shared_by", "").startswith("session ") for r in recorded()] == [True, True]
    other.checkbox(key="rf_shared").check().run()
    assert "2 measured points shown." in " ".join(c.value for c in other.caption)


def test_the_reports_own_results_json_is_accepted():
    rows = json.loads(to_json([_row(), _row(bench="precision", name="bf16")]))["results"]
    report = {"generated": "2026-01-01T00:00:00+00:00", "device": "cpu", "versions": {"torch": "2.13"},
              "sections": [{"name": "devices", "results": []}, {"name": "tiling", "results": rows[:1]},
                           {"name": "precision", "results": rows[1:], "verdict": "…"}]}
    back = cr.results_from_json(json.dumps(report).encode())
    assert [r.bench for r in back] == ["tiling", "precision"]


def test_every_hardware_and_no_dtype():
    at = _app()
    for name in ("A100 SXM 80GB", "CPU (edit me)", "RTX 4090"):
        at.selectbox(key="rf_hw").set_value(name).run()
        assert not at.exception and not at.error
    at.multiselect(key="rf_dtypes").set_value([]).run()
    assert not at.exception
    assert any("no roof" in e.value for e in at.error)  # a clear message, not a crash


def test_estimator_extremes():
    at = _app()
    at.number_input(key="rf_batch").set_value(4096).run()
    at.number_input(key="rf_seq").set_value(1).run()
    at.number_input(key="rf_new").set_value(0).run()
    assert not at.exception and not at.error


def test_calibrate_and_validate_on_this_cpu():
    at = _app()
    at.select_slider(key="rf_cal_scale").set_value(32).run()
    at.number_input(key="rf_cal_layers").set_value(1).run()
    at.number_input(key="rf_cal_seq").set_value(4).run()  # 4 prompt tokens: M = 1, 2, 4 calibrated (32: six sizes)
    at.number_input(key="rf_cal_new").set_value(2).run()
    at.button(key="rf_calibrate").click().run(timeout=240)
    assert not at.exception and not at.error, [e.value for e in at.error]
    table = next(d.value for d in at.dataframe if "calibrated error" in d.value.columns)
    assert list(table["phase"]) == ["prefill"] * 4 + ["decode"] * 4
    total = table[table["op group"] == "total"]
    assert (total["measured ms"] > 0).all() and total["calibrated ms"].notna().all()
    assert total["calibrated error"].tolist() == pytest.approx(
        (total["calibrated ms"] / total["measured ms"] - 1).tolist())
    # the calibration is saved and listed on the next visit
    again = _app()
    listed = next(d.value for d in again.dataframe if "calibration" in d.value.columns)
    assert listed["calibration"].iloc[0].endswith("(calibrated)") and listed["CPU threads"].iloc[0] == 1


def test_a_damaged_calibration_file_is_a_warning(tmp_path):
    (tmp_path / "calibration.json").write_text(json.dumps({"cpu:x": {"version": 1, "gemm": []}}))
    at = _app()
    assert not at.exception
    assert any("ignored" in w.value for w in at.warning)


def test_the_cpu_row_is_never_below_a_point_measured_on_the_cpu():
    """The placeholder CPU row says 0.2 TFLOP/s fp32; a point measured here at 2 TFLOP/s raises its roof
    (and a saved ceiling, when there is one, replaces the placeholder)."""
    from gemmlib.core.roofline import attainable

    fast = _row(tflops_time=1e-3, flops=2e9)  # 2 TFLOP/s at 200 FLOP/byte
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.session_state["_my_results"] = [fast]  # measured in this session
    at.run()
    at.selectbox(key="rf_hw").set_value("CPU (edit me)").run()
    assert not at.exception and not at.error
    roofs = at.dataframe[0].value
    fp32 = roofs[roofs["roof"].str.contains("fp32")].iloc[0]
    got = attainable(fast.intensity, fp32["peak TFLOP/s"] * 1e12, fp32["bandwidth TB/s"] * 1e12)
    assert got >= fast.tflops * 1e12 * (1 - 1e-9)
    assert any("raised to the best measured point" in c.value for c in at.caption)


def test_the_calibration_fits_its_vocabulary_to_the_servers_dimension_cap(tmp_path, monkeypatch):
    # A server whose secrets file caps every dimension at 4,096: the CPU's default calibration model (llama-3-8b ÷ 16)
    # has a vocabulary of 8,016, and the run was refused beside its button. The page builds the run under its own
    # caps (the secrets file's, not only the environment's): the vocabulary is halved to fit and the run admitted.
    from streamlit import config

    from gemmlib.measure import calibrate as cb

    for k in ("GEMM_CLASSROOM", "GEMM_MAX_DIM", "GEMM_MAX_BYTES", "GEMM_TIME_LIMIT_S", "GEMM_MAX_CPU_GFLOP"):
        monkeypatch.delenv(k, raising=False)
    path = tmp_path / "secrets.toml"
    path.write_text("GEMM_MAX_DIM = 4096\n")
    old = config.get_option("secrets.files")
    config.set_option("secrets.files", [str(path)])
    try:
        at = _app()
        assert not at.exception
        button = at.button(key="rf_calibrate")
        assert not button.disabled, button.help
        assert not [w.value for w in at.warning if "4096" in w.value or "4,096" in w.value]
    finally:
        config.set_option("secrets.files", old)
    assert cb.make_run("cpu", max_dim=4096).model.vocab == 128256 // 16 // 2


def test_the_calibrations_scale_offers_only_the_divisors_a_preset_takes():
    """The scale was a number box from 1 to 64: its + went from 16 to 17, and the page answered "llama-3-8b cannot
    be scaled down by 17". It is now a slider of the powers of two the presets divide by (as the Profiler's), and a
    link with another value is named and falls back to the default."""
    at = _app()
    assert at.select_slider(key="rf_cal_scale").options == ["1", "2", "4", "8", "16", "32", "64"]
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params["rf_cal_scale"] = "17"
    at.run()
    assert not at.exception and not at.error
    assert at.select_slider(key="rf_cal_scale").value == 16
    assert [i.value for i in at.info if "rf_cal_scale" in i.value] == [
        "Link value rf_cal_scale=17 is not one of the choices; the default 16 is used."]


def test_fp8_measured_on_a_cpu_draws_no_roof_and_its_points_say_emulated():
    """fp8 on a CPU runs through torch's reference kernel: the Roofline drew an fp8 roof for the CPU (from the
    ceilings' fp8 figure, or raised to an fp8 point), as if the CPU had fp8 hardware. Now neither the CPU row nor
    the CPU's measured ceilings draw one; the caption says why, the points say "emulated" in the legend and table."""
    from gemmlib.core import ceilings as C

    C.save_ceilings(C.Ceilings("cpu", "Test CPU", {"fp32": 3.0e10, "fp8": 4.0e9}, 1.5e9, measured_at=0,
                               gemm_size=1024))
    fp8 = _row(bench="precision", name="fp8", flops=2e9, nbytes=3e6, tflops_time=0.5)
    fp8.dtype = "fp8"
    assert [r["dtype"] for r in cr.measured_roof_rows(C.all_ceilings().values())] == ["fp32"] * 3
    pts = cr.result_points([fp8, _row()])
    assert [p["emulated"] for p in pts] == [True, False]
    spec = cr.roofline_chart(cr.roof_rows(get_hardware("h200"), ["fp8"]), pts).to_dict()
    assert "fp8 (emulated, no roof)" in json.dumps(spec["datasets"])
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.session_state["_my_results"] = [fp8, _row()]
    at.run()
    at.selectbox(key="rf_hw").set_value("CPU (edit me)").run()
    assert not at.exception and not at.error
    roofs = at.dataframe[0].value
    assert not roofs["roof"].str.contains("fp8").any() and roofs["roof"].str.contains("fp32").any()
    assert any("fp8 has no roof" in c.value and "1024³" in c.value for c in at.caption)


def test_the_cpu_rows_sentence_is_in_chinese_on_the_chinese_page():
    """The CPU row's sentence (where its figures come from, what was raised, why fp8 has no roof) was rendered in
    English and shown as it was on the Chinese page."""
    import gemm_i18n

    fp8 = _row(bench="precision", name="fp8", flops=2e9, nbytes=3e6, tflops_time=0.5)
    fp8.dtype = "fp8"
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params["lang"] = "zh"
    at.session_state["_my_results"] = [fp8, _row(tflops_time=1e-3, nbytes=1e8)]  # 2 TFLOP/s at 20 FLOP/B: raises both
    at.run()
    at.selectbox(key="rf_hw").set_value("CPU (edit me)").run()
    assert not at.exception and not at.error
    note = next(c.value for c in at.caption if "fp8" in c.value and "CPU" in c.value)
    assert "没有屋顶" in note and "带宽" in note and not gemm_i18n.english_words(note, ["CPU"]), note


def test_the_legend_names_only_the_sources_drawn_and_the_cpu_row_is_no_datasheet():
    """The source legend always listed "datasheet" and "measured" (a measured dash with no measured roof drawn), and
    the CPU row's roofs read "CPU (edit me) · fp32 (datasheet)" though they hold placeholder figures (or this machine's
    measured ceilings): no datasheet. Now the legend lists the sources drawn, and the CPU row says which it holds."""
    from gemmlib.core import ceilings as C

    spec = cr.roofline_chart(cr.roof_rows(get_hardware("h200"), ["bf16"])).to_dict()
    dash = next(layer for layer in spec["layer"] if "strokeDash" in layer["encoding"])["encoding"]["strokeDash"]
    assert dash["scale"]["domain"] == ["datasheet"] and dash["scale"]["range"] == [[1, 0]]
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.selectbox(key="rf_hw").set_value("CPU (edit me)").run()
    assert not at.exception and not at.error
    roofs = list(at.dataframe[0].value["roof"])
    assert roofs and all(r.endswith("(placeholder)") for r in roofs), roofs
    C.save_ceilings(C.Ceilings("cpu", "Test CPU", {"fp32": 3.0e10}, 1.5e9, measured_at=0))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.selectbox(key="rf_hw").set_value("CPU (edit me)").run()
    roofs = list(at.dataframe[0].value["roof"])
    assert "CPU (edit me) · fp32 (measured)" in roofs and not any("datasheet" in r for r in roofs), roofs
