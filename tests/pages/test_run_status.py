"""ui.RunStatus (a benchmark's status box while it runs) and the estimate beside the buttons."""

import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def test_the_run_status_says_the_step_the_total_and_the_time_left():
    from test_runbox_review_time_left import Box  # stands in for st.status: records the labels it is given

    import ui

    box = Box()
    status = ui.RunStatus(box, "cpu", steps=12, estimate_s=120.0)
    assert status.left_s() == 120.0  # before it starts: the estimate
    status.start()
    assert "step 1 of 12" in box.labels[-1] and "about 2 min" not in box.labels[-1]
    assert "about 120 s left" in box.labels[-1] or "about 119 s left" in box.labels[-1]
    status.t0 -= 30.0  # 30 s in, a quarter done: 90 s left by the run's own pace
    status.update(0.25, "fp8 on square 512")
    assert box.labels[-1].startswith("Running on cpu · step 4 of 12 · about 90 s left — fp8 on square 512")


def test_the_step_shown_is_the_step_reached_at_every_count():
    """A worker reports step k of n as the share k/n; k/n·n lands just under k in floating point for some
    counts (15/22·22 = 14.999…), which showed "step 15 of 22" after the 15th step, one behind its neighbours."""
    from test_runbox_review_time_left import Box

    import ui

    for n in (3, 22, 23, 26, 39, 43):
        box = Box()
        status = ui.RunStatus(box, "cpu", steps=n, estimate_s=10.0)
        status.start()
        for k in range(n):
            status.update(k / n, "")
            assert f"step {k + 1} of {n}" in box.labels[-1], (k, n, box.labels[-1])


def test_the_rate_sources_are_joined_in_the_reader_language():
    """Two rate sources in the Chinese caption are joined with the full-width comma, not ", "."""
    def page():
        import ui
        from gemmlib.measure.plan import Plan

        ui.run_estimate(Plan(bytes=0.0, seconds=6.0, steps=6, sources=("measured ceilings", "recent runs")))

    zh = AppTest.from_function(page)
    zh.query_params["lang"] = "zh"
    zh.run()
    (caption,) = [c.value for c in zh.caption]
    assert "、" in caption.split("（")[1] and ", " not in caption, caption


def test_the_benchmark_pages_say_how_long_a_run_takes_before_it_starts():
    """Every run button's estimate, and what comes before the run: its worker's start and the queue."""
    for page, buttons in (("6_Precision.py", 1), ("8_Batching.py", 2), ("5_Devices.py", 1), ("7_Tiling.py", 1),
                          ("10_Profiler.py", 1), ("11_Multi_GPU.py", 1)):
        at = AppTest.from_file(str(ROOT / "pages" / page), default_timeout=120).run()
        assert not at.exception
        caps = [c.value for c in at.caption]
        runs = [c for c in caps if c.startswith("This run: about")]
        totals = [c for c in caps if c.startswith("In all about **")]
        assert len(runs) >= buttons and len(totals) == len(runs), (page, caps)
        assert not any("rates: —" in c for c in runs), runs  # a run without rates (multi-rank) names none
        assert all(re.fullmatch(r"[\d,]+ s", c.split("**")[1]) for c in totals), totals  # "7 s", not "7.03 s"
        assert all("to start its worker" in c or "to hand it to the warm worker" in c for c in totals), totals


def test_the_estimate_counts_the_queue_ahead(tmp_path, monkeypatch):
    import threading

    from gemmlib.measure import runqueue

    q = runqueue.Queue(directory=tmp_path / "q")
    monkeypatch.setattr(runqueue, "default_queue", lambda: q)
    release, holding = threading.Event(), threading.Event()

    def hold() -> None:
        with q.turn("a class's run", seconds=100.0, poll_s=0.02):
            holding.set()
            release.wait(60)

    t = threading.Thread(target=hold)
    t.start()
    try:
        assert holding.wait(30)
        at = AppTest.from_file(str(ROOT / "pages" / "6_Precision.py"), default_timeout=120).run()
        total = next(c.value for c in at.caption if c.value.startswith("In all about **"))
        assert "for the 1 run queued or running before it" in total and "1" in total.split("**")[1], total
    finally:
        release.set()
        t.join(30)


def test_a_noisy_result_says_the_machine_was_busy():
    from gemmlib.core.results import BenchResult

    def row(name, p80):
        return BenchResult(bench="precision", name=name, device="cpu", device_name="test CPU", dtype=name,
                           shape={"m": 64, "n": 64, "k": 64, "label": "square 64"}, flops=2 * 64**3,
                           bytes=3 * 64 * 64 * 4, median_s=0.01, p20_s=0.01, p80_s=p80)

    at = AppTest.from_file(str(ROOT / "pages" / "6_Precision.py"), default_timeout=120)
    at.session_state["pr_results"] = [row("fp32", 0.012), row("bf16", 0.035)]
    at.run()
    assert not at.exception
    warn = " ".join(w.value for w in at.warning)
    assert "1 of 2 rows is noisy" in warn and "bf16, 3.5×" in warn and "the machine was busy, rerun" in warn


def test_a_one_step_run_says_step_not_steps():
    """The Roofline page's calibration is one step: "for 1 step", not "for 1 steps" (and in Chinese too)."""
    at = AppTest.from_file(str(ROOT / "pages" / "9_Roofline.py"), default_timeout=120).run()
    assert not at.exception
    runs = [c.value for c in at.caption if c.value.startswith("This run: about")]
    assert runs, [c.value for c in at.caption]
    for text in runs:
        n = int(re.search(r" for (\d+) steps?[ .]", text).group(1))
        assert (" step (" in text or " step." in text) == (n == 1), text
    assert any(" for 1 step" in text for text in runs), runs


def test_a_run_stopped_by_a_changed_setting_says_so(monkeypatch):
    """A setting changed during a run reruns the page, which kills the run: the next run of the page says
    the run was stopped and nothing kept (as the Stop button's does), instead of the run vanishing."""
    from streamlit.runtime.scriptrunner_utils.exceptions import RerunException
    from streamlit.runtime.scriptrunner_utils.script_requests import RerunData

    from gemmlib.measure import runner

    calls = []

    def interrupted(*args, **kwargs):
        calls.append(1)
        raise RerunException(RerunData())  # what a widget change does to the script at its next yield point

    monkeypatch.setattr(runner, "run", interrupted)
    at = AppTest.from_file(str(ROOT / "pages" / "6_Precision.py"), default_timeout=120).run()
    next(b for b in at.button if b.label == "Run the benchmark").click().run()
    assert calls == [1] and not at.exception
    assert any(i.value.startswith("Stopped a precision run") and "nothing from that run was kept" in i.value
               for i in at.info), [i.value for i in at.info]
    at.run()  # said once
    assert not any(i.value.startswith("Stopped") for i in at.info)
