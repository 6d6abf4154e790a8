"""Messages of the measuring machinery in the reader's language, English unchanged — carried as data.

- A text that crosses the worker's pipe (a step's progress, a row's note, a profile's notes, the
  monitor's reason, an estimate's words, a refusal) is its template and values from where it is made
  to where it is shown: nothing parses English back into a template.
- A refusal (``safety.Refused``, the runner's ``RunStopped``) keeps its template and values: the
  English sentence is the one written out below, a translation fills in translated parts.
- The run queue's files hold an owner as its message, so a page shows who runs in its language.
"""

from __future__ import annotations

import json
import pickle

import pytest

from gemmlib.core import codec
from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_, Msg, Text
from gemmlib.measure import plan, runner, runqueue, safety
from gemmlib.measure import tp as tpm

FAKE_ZH = {
    tpm.SRC_CPU_SHARE: "{source}；每个 CPU rank 拥有 1/{n} 的核心，因此取其 1/{n}",
    tpm.SRC_DATASHEET: "数据手册",
    tpm.SRC_CPU_PLACEHOLDER: "CPU 占位行",
    tpm.HW_SHARE: "{name} ÷ {n}（一个 rank 的核心）",
    "CPU (edit me)": "CPU（请按本机修改）",
    "one layer": "一层",
    "hidden": "隐藏层维度",
    "{what} is {gflop:.4g} GFLOP, too much for a CPU run here (cap {cap:.4g} GFLOP, GEMM_MAX_CPU_GFLOP); "
    "choose smaller sizes or run on a GPU": "{what} 为 {gflop:.4g} GFLOP，太多（上限 {cap:.4g} GFLOP）",
    "{name}={value} is above this server's cap of {cap}; choose a smaller size or raise GEMM_MAX_DIM":
        "{name}={value} 超过了上限 {cap}",
    "NVML could not read GPU {index} ({error}); GPU monitoring is off.": "NVML 无法读取 GPU {index}（{error}）。",
    "{what} (session {tag})": "{what}（会话 {tag}）",
    "a precision run": "一次精度测量",
}


def zh(s: str) -> str:
    return FAKE_ZH.get(s, s)


def _across(value, tp=str):
    """``value`` as the worker's pipe carries it (the codec, through JSON)."""
    return codec.decode(tp, json.loads(json.dumps(codec.encode(value))))


def test_an_estimates_words_cross_with_their_values_and_nest():
    hw, src = tpm.rank_hardware("cpu", "a CPU", 2)
    assert str(src) == "the CPU placeholder row (measure this CPU's ceilings with `python -m gemmlib devices " \
                       "--measure`); a CPU rank has 1/2 of the cores, so 1/2 of it"
    assert str(hw.name) == "CPU (edit me) ÷ 2 (one rank's cores)"
    back_src, back_name = _across(src), _across(hw.name)
    assert str(back_src) == str(src) and str(back_name) == str(hw.name)  # English as written
    assert back_src.render(zh) == "CPU 占位行；每个 CPU rank 拥有 1/2 的核心，因此取其 1/2"
    assert back_name.render(zh) == "CPU（请按本机修改） ÷ 2（一个 rank 的核心）"


def test_the_monitors_reason_keeps_the_exceptions_text_as_a_value():
    from gemmlib.measure.monitor import NVML_UNREADABLE

    reason = Text(NVML_UNREADABLE, index=0, error="NVMLError_Unknown: Unknown Error")
    back = _across(reason)
    assert str(back) == "NVML could not read GPU 0 (NVMLError_Unknown: Unknown Error); GPU monitoring is off."
    assert back.render(zh) == "NVML 无法读取 GPU 0（NVMLError_Unknown: Unknown Error）。"


def test_a_refusal_is_the_same_english_and_translates_what_it_refuses():
    lim = safety.Limits(max_dim=128, max_bytes=2**30, time_limit_s=10.0, classroom=False, max_cpu_flops=1e9)
    with pytest.raises(InputError) as e:
        safety.check_dims(lim, hidden=256)
    assert str(e.value) == "hidden=256 is above this server's cap of 128; choose a smaller size or raise GEMM_MAX_DIM"
    assert e.value.render(zh) == "隐藏层维度=256 超过了上限 128"
    with pytest.raises(InputError) as e:
        lim.check_cpu_flops(2e10, "one layer")
    assert str(e.value) == ("one layer is 20 GFLOP, too much for a CPU run here (cap 1 GFLOP, GEMM_MAX_CPU_GFLOP); "
                            "choose smaller sizes or run on a GPU")
    assert e.value.render(zh) == "一层 为 20 GFLOP，太多（上限 1 GFLOP）"
    with pytest.raises(InputError) as e:
        lim.check_cpu_flops(2e10, Msg(plan.A_GEMM, m=1000, n=1000, k=10000))
    assert str(e.value).startswith("a 1000×1000×10000 GEMM is 20 GFLOP")
    again = pickle.loads(pickle.dumps(e.value))
    assert type(again) is safety.Refused and again.render(zh) == e.value.render(zh)


def test_a_workers_refusal_comes_back_of_its_class_with_its_template_and_values():
    """What the worker sends for an InputError, read back by the runner: the same English, the same
    class (a Refused translates what it names), the template and values as they were — a value JSON
    has no form for (a tuple under !r) included."""
    lim = safety.Limits(max_dim=128, max_bytes=2**30, time_limit_s=10.0, classroom=False, max_cpu_flops=1e9)
    with pytest.raises(InputError) as caught:
        safety.check_dims(lim, hidden=256)
    e = caught.value
    sent = json.loads(json.dumps({"class": type(e).__name__, "message": codec.encode(Text(e.template, **e.params))}))
    back = runner._input_error(sent)
    assert type(back) is safety.Refused and str(back) == str(e) and back.params["value"] == 256
    assert back.render(zh) == "隐藏层维度=256 超过了上限 128"
    odd = InputError(N_("shapes {shape!r} refused"), shape=(1, 2))
    sent = json.loads(json.dumps({"class": "InputError", "message": codec.encode(Text(odd.template, **odd.params))}))
    assert str(runner._input_error(sent)) == "shapes (1, 2) refused"
    assert str(runner._input_error({"message": "plain words"})) == "plain words"


def test_a_steps_message_crosses_the_workers_pipe_with_its_template(monkeypatch, tmp_path):
    """A real (small) ceiling run in a worker process: each step's text comes back as the English the
    worker wrote (what the command line prints) and, as a Text, with its template and values (what a
    page translates)."""
    from gemmlib.measure import devices

    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(devices, "ceiling_plan", lambda device, quick=False: (64, 1024**2))
    seen: list = []
    out = runner.run(devices.SPEC, devices.CeilingsConfig("cpu", quick=True), on_progress=lambda f, t: seen.append(t))
    texts = [str(t) for t in seen]
    assert "device copy 1 MiB" in texts and texts[-1] == "done" and "fp32 GEMM 64³" in texts, texts
    assert all(isinstance(t, Text) for t in seen), [type(t) for t in seen]
    fake = {"device copy {size:.0f} MiB": "设备拷贝 {size:.0f} MiB", "done": "完成", "{dtype} GEMM {n}³": "{dtype} GEMM {n}³（立方）"}
    shown = [t.render(lambda s: fake.get(s, s)) for t in seen]
    assert "设备拷贝 1 MiB" in shown and shown[-1] == "完成" and "fp32 GEMM 64³（立方）" in shown, shown
    # what could not run says why: a constant of the catalogue (its own template), or a message with values
    from gemmlib.charts.bench import note_text

    why = out.result.notes["tf32"]
    assert why.startswith("tf32 is a mode of NVIDIA tensor cores")
    assert note_text(why, lambda s: "没有 tf32" if s == why else s) == "没有 tf32"
    assert all(isinstance(r.shape, dict) and type(r).__name__ == "BenchResult" for r in out.result.results)


def test_the_queues_files_hold_an_owner_as_its_message(tmp_path):
    q = runqueue.Queue(directory=tmp_path / "q")
    owner = Text(runqueue.SESSION_OWNER, what=Text(N_("a precision run")), tag="ab12")
    with q.turn(owner):
        running = q.running()
        assert running == "a precision run (session ab12)" and isinstance(running, Text)
        assert running.render(zh) == "一次精度测量（会话 ab12）"
        assert q.running().render(zh) == running.render(zh)
    with q.turn("a plain owner"):
        assert q.running() == "a plain owner" and not isinstance(q.running(), Text)
    place = runqueue.Place((owner,), owner)
    assert place.describe() == ("place 2 in the queue (running now: a precision run (session ab12); 1 queued "
                                "before you)")


def test_a_row_skipped_at_the_time_limit_says_so_as_a_message():
    reason = safety.Deadline(2.5).reason()
    assert reason == "skipped: the run's time limit of 2.5 s was reached (GEMM_TIME_LIMIT_S)"
    fake = {safety.TIME_LIMIT_REACHED: "已跳过：{seconds:g} s 上限"}.get
    assert _across(reason).render(lambda s: fake(s, s)) == "已跳过：2.5 s 上限"
