"""The Precision page: renders cold, runs a small CPU benchmark, shows its table, refuses bad sizes."""

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from gemmlib.core.results import clear_recorded, recorded
from gemmlib.measure import safety

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "6_Precision.py")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch, tmp_path):
    for k in ("GEMM_MAX_DIM", "GEMM_MAX_BYTES", "GEMM_TIME_LIMIT_S", "GEMM_CLASSROOM", "GEMM_MAX_CPU_GFLOP"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path / "cache"))


def _custom(at, m, n, k, dtypes):
    at.radio(key="pr_device").set_value("cpu")  # the CPU path, on a GPU machine too
    at.radio(key="pr_set").set_value("Custom").run()
    at.number_input(key="pr_m").set_value(m)
    at.number_input(key="pr_n").set_value(n)
    at.number_input(key="pr_k").set_value(k)
    at.multiselect(key="pr_dtypes").set_value(dtypes)
    at.slider(key="pr_time").set_value(0.05)
    return at


def test_renders_cold_with_every_format_offered():
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception and not at.error
    assert "Precision" in at.title[0].value
    assert at.multiselect(key="pr_dtypes").value == ["fp32", "tf32", "fp16", "bf16", "int8", "fp8"]
    assert "cpu" in at.radio(key="pr_device").options
    assert any("Run the benchmark" in i.value for i in at.info)


def test_runs_a_small_cpu_benchmark_and_shows_the_table():
    clear_recorded()
    at = _custom(AppTest.from_file(PAGE, default_timeout=120).run(), 40, 24, 16, ["fp32", "tf32", "int8"])
    at.button[0].click().run()
    assert not at.exception and not at.error
    table = at.dataframe[0].value
    assert list(table["format"]) == ["fp32", "tf32", "int8", "int8 + quant"]
    assert set(table["M×N×K"]) == {"40×24×16"}
    tf32 = table[table["format"] == "tf32"].iloc[0]
    assert not tf32["supported"] and "CPU" in tf32["note"]
    why = [i.value for i in at.info if i.value.startswith("**tf32** on 40×24×16: ")]
    assert len(why) == 1 and tf32["note"] in why[0]  # the reason in plain view, not only in the table's last column
    fp32 = table[table["format"] == "fp32"].iloc[0]
    assert fp32["TFLOP/s"] > 0 and fp32["rel. error"] < 1e-5
    assert at.success[0].value.startswith("INT8 on")
    assert len(at.session_state["_my_results"]) == 4  # this session's Roofline page can plot them
    assert recorded() == []  # ... and no other session's, unless shared
    clear_recorded()


def test_sizes_above_the_cap_are_refused_with_a_message(monkeypatch):
    """Refused before a press: the button is off and says why (its help, and a warning beside it); before, it
    stayed on and only a press said "Not run"."""
    monkeypatch.setenv("GEMM_MAX_BYTES", "1000")
    at = _custom(AppTest.from_file(PAGE, default_timeout=60).run(), 64, 64, 64, ["fp32"]).run()
    assert not at.exception
    button = next(b for b in at.button if b.label == "Run the benchmark")
    assert button.disabled and "GEMM_MAX_BYTES" in button.help
    assert any("GEMM_MAX_BYTES" in w.value and "caps would refuse" in w.value for w in at.warning)
    assert not at.dataframe


def test_a_queued_run_is_told_it_waits(monkeypatch):
    # Another run holds the machine's queue: this session sees its place, then gives up with a clear message.
    import threading

    import ui

    held, release = threading.Event(), threading.Event()

    def other_session():
        with safety.single_flight("a precision run (session other)"):
            held.set()
            release.wait(30)

    t = threading.Thread(target=other_session)
    t.start()
    held.wait(5)
    monkeypatch.setattr(ui.runbox, "queue_timeout_s", lambda lim: 1.0)
    try:
        at = _custom(AppTest.from_file(PAGE, default_timeout=60).run(), 16, 16, 16, ["fp32"])
        at.button[0].click().run()
    finally:
        release.set()
        t.join(5)
    assert not at.exception
    assert any("busy" in e.value and "session other" in e.value for e in at.error), [e.value for e in at.error]
    assert at.get("status")[0].label == "Not run"


def test_classroom_mode_caps_the_size_widgets(monkeypatch):
    monkeypatch.setenv("GEMM_CLASSROOM", "1")
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.radio(key="pr_device").set_value("cpu").run()
    assert not at.exception
    assert [int(o) for o in at.multiselect(key="pr_sq_cpu").options] == [256, 512, 1024, 2048]
    assert any("classroom mode" in c.value for c in at.caption)


def test_a_share_over_100_percent_of_the_measured_peak_is_explained():
    """A stored CPU ceiling measured lower than this run (a busier machine then): "% measured peak" passes 100 %.
    The figure is honest; the column's help and a caption under the table say what it means and how to measure
    the ceiling again (the Devices page)."""
    from gemmlib.core import ceilings
    from gemmlib.measure.devices import device_info

    clear_recorded()
    name = device_info("cpu").name
    assert ceilings.save_ceilings(ceilings.Ceilings("cpu", name, {"fp32": 1e6}, 1e9)) is not None  # 1 MFLOP/s
    at = _custom(AppTest.from_file(PAGE, default_timeout=120).run(), 40, 24, 16, ["fp32"]).run()
    at.button[0].click().run()  # (the default shapes at 1 MFLOP/s were refused: the button was off until now)
    assert not at.exception and not at.error
    table = at.dataframe[0]
    assert table.value["% measured peak"].iloc[0] > 100
    assert "Over 100% means this run beat that stored measurement" in table.proto.columns
    note = [c.value for c in at.caption if "Over 100%" in c.value]
    assert len(note) == 1 and "Measure ceilings" in note[0] and "Devices page" in note[0]
    clear_recorded()



def test_a_run_the_caps_would_refuse_says_so_before_the_press(monkeypatch):
    """The LLM-layer preset on a CPU: "This run: about 682 s" beside the button, and only a press said "Not run:
    … above this server's limit of 240 s". The refusal (``plan.admit``, as the run checks it) is said beside the
    estimate, before the press; a run the caps allow says nothing."""
    monkeypatch.setenv("GEMM_TIME_LIMIT_S", "5")
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not any("caps would refuse" in w.value for w in at.warning), [w.value for w in at.warning]
    at.slider(key="pr_time").set_value(2.0).run()  # six formats × 2 s each: over 5 s
    assert not at.exception
    refusals = [w.value for w in at.warning if w.value.startswith("**The server's caps would refuse this run:**")]
    assert len(refusals) == 1 and "GEMM_TIME_LIMIT_S" in refusals[0], [w.value for w in at.warning]
    button = next(b for b in at.button if b.label == "Run the benchmark")  # and its button is off, saying why
    assert button.disabled and "GEMM_TIME_LIMIT_S" in button.help
    at.slider(key="pr_time").set_value(0.05).run()  # back under the cap: on again, nothing said
    assert not next(b for b in at.button if b.label == "Run the benchmark").disabled
    assert not any("caps would refuse" in w.value for w in at.warning)


def test_fp8_on_a_cpu_gets_no_share_of_a_measured_peak_and_says_why():
    """fp8 on a CPU runs through a reference kernel whose speed grows with the size (~9× from 512³, the quick ceiling
    size, to 2048³): against the "fp8 ceiling" the Devices page stored at 512³ a 2048³ run read ~1,144 % of the measured
    peak. It gets no share now, and a caption says why; fp32, a real ceiling, keeps its share."""
    from gemmlib.core import ceilings
    from gemmlib.measure import quant
    from gemmlib.measure.devices import device_info

    if not quant.fp8_supported("cpu")[0]:
        pytest.skip("this torch has no CPU fp8 kernel")
    clear_recorded()
    name = device_info("cpu").name
    stored = ceilings.Ceilings("cpu", name, {"fp32": 1e11, "fp8": 1e6}, 1e9)  # fp8 at a small size: very slow
    assert ceilings.save_ceilings(stored) is not None
    at = _custom(AppTest.from_file(PAGE, default_timeout=120).run(), 32, 32, 32, ["fp32", "fp8"])
    at.checkbox(key="pr_quant").uncheck().run()
    at.button[0].click().run()
    assert not at.exception and not at.error
    table = at.dataframe[0].value.set_index("format")
    assert table.loc["fp8", "TFLOP/s"] > 0
    assert pd.isna(table.loc["fp8", "% measured peak"])  # before: thousands of per cent
    assert 0 < table.loc["fp32", "% measured peak"] < 100
    why = [c.value for c in at.caption if "reference kernel" in c.value and "% measured peak" in c.value]
    assert len(why) == 1 and "no peak" in why[0], [c.value for c in at.caption]
    clear_recorded()


def test_the_throughput_bars_say_which_format_is_emulated():
    """fp8 on a CPU is torch's reference kernel: its bar stood beside fp32's labelled plain "fp8", read as fp8's speed.
    It now reads "fp8 (emulated)" (and "fp8 + quant (emulated)"); fp32 keeps its name."""
    from gemmlib.measure import quant

    if not quant.fp8_supported("cpu")[0]:
        pytest.skip("this torch has no CPU fp8 kernel")
    clear_recorded()
    at = _custom(AppTest.from_file(PAGE, default_timeout=120).run(), 32, 32, 32, ["fp32", "fp8"])
    at.button[0].click().run()
    assert not at.exception and not at.error
    import pyarrow as pa

    bars = next(c.proto for c in at.get("vega_lite_chart") if "Throughput per format" in c.proto.spec)
    names = set(pa.ipc.open_stream(bars.data.data).read_all().column("name").to_pylist())  # the bars' data
    assert names == {"fp32", "fp8 (emulated)", "fp8 + quant (emulated)"}, names
    clear_recorded()
