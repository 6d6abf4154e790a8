"""A benchmark run's box in Chinese (``?lang=zh``): the place in the machine's queue while another
run holds it, the refusal by the server's caps, and the labels of the box (waiting, not run), on
the Devices page through AppTest with the real queue (``gemmlib.measure.runqueue``) and the real
caps reader. The expected texts are read from the .po (not through the app's own lookup)."""

from __future__ import annotations

import re
from pathlib import Path

import gemm_i18n
import pytest
import streamlit
from streamlit import config
from streamlit.testing.v1 import AppTest

import ui
from gemmlib.measure import runqueue

ROOT = Path(__file__).resolve().parents[2]
ZH = {m.id if isinstance(m.id, str) else m.id[0]: m.string if isinstance(m.string, str) else m.string[0]
      for m in gemm_i18n.read("zh") if m.id}
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def labels(monkeypatch, tmp_path):
    """Every label the page gives its status box (AppTest keeps only the last one), in order; the
    cache (and so the queue) private to this test, the caps from the environment only."""
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path / "cache"))
    for k in ("GEMM_CLASSROOM", "GEMM_MAX_DIM", "GEMM_MAX_BYTES", "GEMM_TIME_LIMIT_S", "GEMM_MAX_CPU_GFLOP"):
        monkeypatch.delenv(k, raising=False)
    old = config.get_option("secrets.files")
    config.set_option("secrets.files", [str(tmp_path / "secrets.toml")])
    seen: list[str] = []
    status = streamlit.status

    def recording_status(label, *args, **kwargs):
        seen.append(label)
        box = status(label, *args, **kwargs)
        update = box.update

        def recording_update(*, label=None, **kw):
            if label is not None:
                seen.append(label)
            return update(label=label, **kw)

        box.update = recording_update
        return box

    monkeypatch.setattr(streamlit, "status", recording_status)
    yield seen
    config.set_option("secrets.files", old)


def _devices_zh() -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / "5_Devices.py"), default_timeout=120)
    at.query_params["lang"] = "zh"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _measure(at: AppTest) -> AppTest:
    button = [b for b in at.button if b.label == ZH["Measure ceilings"]]
    assert button, [b.label for b in at.button]
    button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_queued_run_says_its_place_in_chinese(labels, monkeypatch):
    """Another session's run holds the machine's queue and a command-line run waits before this one:
    the box says, in Chinese, that this visitor is number 2 in line and what is running (the other
    session's run named in Chinese), then (the wait cut to a second here) that the run did not start,
    and the queue's refusal — its place and the names in it — reads in Chinese too."""
    import threading
    import time

    from test_pages_in_chinese import _english_left

    monkeypatch.setattr(ui.runbox, "queue_timeout_s", lambda lim: 1.0)
    at = _devices_zh()
    q = runqueue.default_queue()
    from gemmlib.core.i18n import Text

    # as another session's page and the command line name their runs in the queue (messages, in its files)
    holder = Text(runqueue.SESSION_OWNER, what=Text("a precision run"), tag="ab12")
    waiter_done = threading.Event()

    def waiter() -> None:
        with q.turn(Text(runqueue.CLI_OWNER, what=Text("a tiling run")), timeout_s=60):
            waiter_done.set()

    with q.turn(holder):
        t = threading.Thread(target=waiter, daemon=True)
        t.start()
        deadline = time.monotonic() + 10
        while len(q.waiting()) < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert q.waiting() == ["a tiling run (command line)"]
        _measure(at)
    t.join(10)
    assert waiter_done.is_set()
    shown_holder = ZH["{what} (session {tag})"].format(what=ZH["a precision run"], tag="ab12")
    who = ZH[" Running now: {what}."].format(what=ui.md(shown_holder))
    queued = ZH["Queued: you are number {n} in line.{who} Your run starts when the runs before it finish."]
    assert labels[0] == ZH["Waiting for the benchmark runner…"]
    assert queued.format(n=2, who=who) in labels, labels
    assert labels[-1] == ZH["Not run"]
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and errors[0].startswith(ZH["**Check the input:** {message}"].split("{")[0]), errors
    place = ZH["place {n} in the queue ({details})"].format(n=2, details=ZH["; "].join(
        [ZH["running now: {what}"].format(what=shown_holder), ZH["{n} queued before you"].format(n=1)]))
    assert place in errors[0], errors  # BusyError's place (runqueue.Place.describe), in Chinese
    assert not _english_left(labels + errors), (labels, errors)


def test_the_queue_speaks_english_outside_a_page():
    """The same place and refusal in English for the command line (the text the queue has always written)."""
    from gemmlib.core.i18n import Text
    from gemmlib.measure import precision as bp
    from gemmlib.measure import spec, tp

    p = runqueue.Place(("x", "y"), "a ceiling measurement (session ab12)")
    assert p.describe() == "place 3 in the queue (running now: a ceiling measurement (session ab12); 2 queued before you)"
    assert runqueue.Place((), None).describe() == "place 1 in the queue"
    assert bp.SPEC.describe(None) == "a precision run"
    unnamed = spec.BenchSpec("tp", tp.TPLaunch, tp.plan_tp, tp.SPEC.run, list)
    assert unnamed.describe(None) == "a tp run"
    assert str(Text(runqueue.SESSION_OWNER, what=unnamed.describe(None), tag="ab12")) == "a tp run (session ab12)"
    zh = {"{what} (command line)": "{what}（命令行）", "a tiling run": "一次分块测量"}.get
    owner = Text(runqueue.CLI_OWNER, what=Text("a tiling run"))
    assert str(owner) == "a tiling run (command line)" and owner.render(lambda s: zh(s) or s) == "一次分块测量（命令行）"


def test_a_run_refused_by_the_caps_is_explained_in_chinese(labels, monkeypatch):
    """The caps refuse the run before a press: its button is off, the refusal beside it (and as the button's help),
    in Chinese, naming the cap as the server sets it (before, the button stayed on and a press said "Not run")."""
    monkeypatch.setenv("GEMM_MAX_CPU_GFLOP", "0.000001")
    at = _devices_zh()
    button = [b for b in at.button if b.label == ZH["Measure ceilings"]]
    assert len(button) == 1 and button[0].disabled, [(b.label, b.disabled) for b in at.button]
    head = ZH["**The server's caps would refuse this run:** {message}"].split("{")[0]
    warnings = [w.value for w in at.warning if w.value.startswith(head)]
    assert len(warnings) == 1 and "GEMM_MAX_CPU_GFLOP" in warnings[0], [w.value for w in at.warning]
    assert button[0].help == warnings[0]
    assert not at.error and not labels  # nothing ran
    from test_pages_in_chinese import _english_left

    assert not _english_left(warnings), warnings  # the refusal itself too (safety's N_ template, across the pipe)


def test_the_caps_caption_in_either_language():
    def page():
        import streamlit as st

        import ui
        from gemmlib.measure import safety

        lim = safety.Limits(max_dim=3000, max_bytes=2 * 1024**3, time_limit_s=30.0, classroom=True)
        st.caption(ui.caps_caption(lim, ("dims", "operands", "time")))
        st.caption(ui.caps_caption(lim, ("ranks", "buffers")))

    en = AppTest.from_function(page).run()
    assert [c.value for c in en.caption] == [
        "Caps here: dimensions ≤ 3,000, operands ≤ 2 GiB, 30 s per run — **classroom mode**.",
        "Caps here: 8 ranks, 2 GiB of buffers — **classroom mode**."]
    zh = AppTest.from_function(page)
    zh.query_params["lang"] = "zh"
    zh.run()
    want = (ZH["Caps here: {caps}"].format(caps=ZH[", "].join(
        [ZH["dimensions ≤ {dim:,}"].format(dim=3000), ZH["operands ≤ {gib:.3g} GiB"].format(gib=2.0),
         ZH["{seconds:g} s per run"].format(seconds=30.0)])) + ZH[" — **classroom mode**"] + ZH["."])
    assert zh.caption[0].value == want
    assert CJK.search(zh.caption[1].value) and "ranks" not in zh.caption[1].value


def test_a_sentence_after_the_caps_follows_a_chinese_full_stop_without_a_space():
    """It read "…240 s。 gloo 的 rank…": the English space between sentences, after a Chinese full stop."""
    def page():
        import streamlit as st

        import ui
        from gemmlib.measure import safety

        lim = safety.Limits(max_dim=3000, max_bytes=2 * 1024**3, time_limit_s=30.0, classroom=False)
        st.caption(ui.caps_caption(lim, ("dims",), after="Nothing is queued."))

    en = AppTest.from_function(page).run()
    assert en.caption[0].value == "Caps here: dimensions ≤ 3,000. Nothing is queued."
    zh = AppTest.from_function(page)
    zh.query_params["lang"] = "zh"
    zh.run()
    assert "。" in zh.caption[0].value and "。 " not in zh.caption[0].value, zh.caption[0].value


def test_a_measured_ceiling_shows_in_chinese(labels, monkeypatch):
    """A real (small) ceiling measurement run from the Chinese page: the box's labels, the rows, the
    notes on what was not measured and the chart read in Chinese; the figures are the measured ones."""
    from i18n_texts import shown_texts
    from test_pages_in_chinese import _english_left

    from gemmlib.core import ceilings
    from gemmlib.measure import devices

    ceilings.clear_ceilings()
    monkeypatch.setattr(devices, "ceiling_plan", lambda device, quick=False: (64, 1024**2))
    at = _devices_zh()
    at.radio(key="dv_device").set_value("cpu")
    _measure(at)
    try:
        assert not at.error, [e.value for e in at.error]
        assert labels[0] == ZH["Waiting for the benchmark runner…"] and CJK.search(labels[-1]), labels
        rows = at.dataframe[-1].value
        assert ZH["device copy"] in list(rows.iloc[:, 0]) and (rows.select_dtypes("number").iloc[:, 0] > 0).all()
        # The notes on formats not measured: gemmlib.measure.precision's reasons, messages from where
        # they were made (the tf32 one is a constant of the catalogue).
        not_measured = ZH["{dtype}: not measured — {why}"].format(dtype="tf32", why=ui.md(ZH[
            "tf32 is a mode of NVIDIA tensor cores (Ampere and newer); a CPU multiplies fp32 in full precision, "
            "so there is nothing to measure"]))
        assert not_measured in [c.value for c in at.caption], [c.value for c in at.caption]
        # Each step's text crosses the worker's pipe with its template (core.codec): the box's
        # labels show the steps in Chinese, the copy's size as the worker formatted it.
        steps = [x.split(" — ", 1)[1] for x in labels if " — " in x]
        assert ZH["device copy {size:.0f} MiB"].format(size=1) in " ".join(steps), labels
        assert any(ZH["{dtype} GEMM {n}³"].format(dtype="fp32", n=64) in x for x in steps), labels
        left = _english_left(shown_texts(at) + labels)
        assert not left, left
    finally:
        ceilings.clear_ceilings()
