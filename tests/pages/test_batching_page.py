"""The Batching page through AppTest: render, the model, a small CPU sweep, the article example, bad input."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "8_Batching.py")


def _app() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert not at.exception, at.exception
    if at.radio(key="ba_device").value != "cpu":  # on a GPU machine: test the CPU path here
        at.radio(key="ba_device").set_value("cpu").run()
    return at


def _captions(at: AppTest) -> str:
    return " ".join(c.value for c in at.caption)


def test_default_render_and_model():
    at = _app()
    assert "Batching" in at.title[0].value
    assert not at.error
    # H200 bf16 ridge ≈ 989.4e12 / 4.8e12 ≈ 206 FLOP/B; the CPU decode shape is fp32 on the CPU
    assert "ridge point" in _captions(at) and "stacking reaches it" in _captions(at)
    assert any("Run the batch sweep" in i.value for i in at.info)


def test_custom_shape_at_extremes():
    at = _app()
    at.radio(key="ba_shape").set_value("Custom").run()
    for key in ("ba_m", "ba_k", "ba_n"):
        at.number_input(key=key).set_value(1).run()
        assert not at.exception and not at.error
    at.number_input(key="ba_m").set_value(16384).run()
    assert not at.exception and not at.error
    assert "never reaches" in _captions(at)  # K = N = 1: a quarter of a FLOP per byte at any batch


def test_a_shape_already_above_the_ridge_is_not_said_to_reach_it_by_stacking():
    """The Prefill shape (M = 64 on a CPU, fp32) is above the H200's fp32 ridge (14 FLOP/B) at one request: the caption
    said "stacking reaches it at B ≈ 1", as if stacking were what got it there. It now says one request is already
    compute-bound; the decode shape still gets the batch at which stacking reaches the ridge."""
    at = _app()
    at.radio(key="ba_shape").set_value("Prefill").run()
    assert not at.exception and not at.error
    words = _captions(at)
    assert "one request is already above it (compute-bound on its own)" in words and "B ≈ 1" not in words
    at.radio(key="ba_shape").set_value("Decode (M = 1)").run()
    assert "stacking reaches it at **B ≈" in _captions(at)


def test_small_cpu_sweep():
    at = _app()
    at.radio(key="ba_shape").set_value("Custom").run()
    at.number_input(key="ba_k").set_value(64).run()
    at.number_input(key="ba_n").set_value(32).run()
    at.multiselect(key="ba_batches_cpu_custom").set_value([1, 8]).run()
    at.slider(key="ba_time").set_value(0.05).run()
    at.button(key="ba_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    table = at.dataframe[0].value
    assert set(table["mode"]) == {"loop", "stacked", "bmm"} and set(table["batch"]) == {1, 8}
    assert (table["rel_error"] < 1e-5).all()
    st8 = table[(table["mode"] == "stacked") & (table["batch"] == 8)]["intensity"].iloc[0]
    lo8 = table[(table["mode"] == "loop") & (table["batch"] == 8)]["intensity"].iloc[0]
    assert st8 > lo8
    assert any("Stacking 8 requests" in s.value for s in at.success)


def test_article_example_on_cpu_scale():
    at = _app()
    at.slider(key="ba_time").set_value(0.05).run()
    at.button(key="ba_article").click().run()
    assert not at.exception and not at.error
    # the verdict: a success box, or a warning box when this (loaded) CPU ran stacking slower than the loop
    boxes = [(s.value, True) for s in at.success] + [(w.value, False) for w in at.warning]
    verdict = [(text, ok) for text, ok in boxes if "stacking is" in text]
    assert len(verdict) == 1, boxes
    text, ok = verdict[0]
    assert ok is not ("slower here" in text or "Stacking was slower" in text), text


def test_over_the_memory_cap_is_a_clear_message(monkeypatch):
    monkeypatch.setenv("GEMM_MAX_BYTES", "1000")
    at = _app()
    assert not at.exception  # refused before a press: the button is off, saying why (before: "Not run" on a press)
    assert at.button(key="ba_run").disabled and "GEMM_MAX_BYTES" in at.button(key="ba_run").help
    warnings = [w.value for w in at.warning if "caps would refuse this run" in w.value]
    assert warnings and "GEMM_MAX_BYTES" in warnings[0] and "Traceback" not in warnings[0]
