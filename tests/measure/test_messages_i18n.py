"""Messages of the measuring machinery in the reader's language, English unchanged.

- ``jobs.reword``: a text that came back from a worker as English finds its template and is shown
  through a translation with the same values (nested messages too; an exception's text as code).
- A refusal (``safety.Refused``, the runner's ``RunStopped``) keeps its template and values: the
  English sentence is the one written out below, a translation fills in translated parts.
- A worker's InputError keeps its template across the JSON pipe only when it reads exactly as sent.
"""

from __future__ import annotations

import pickle

import pytest

from gemmlib.core.errors import InputError
from gemmlib.core.i18n import Msg
from gemmlib.measure import jobs, runner, safety
from gemmlib.measure import tp as tpm

FAKE_ZH = {
    tpm.SRC_CPU_SHARE: "{source}；每个 CPU rank 拥有 1/{n} 的核心，因此取其 1/{n}",
    tpm.SRC_DATASHEET: "数据手册",
    tpm.HW_SHARE: "{name} ÷ {n}（一个 rank 的核心）",
    "CPU (edit me)": "CPU（请按本机修改）",
    "one layer": "一层",
    "hidden": "隐藏层维度",
    "{what} is {gflop:.4g} GFLOP, too much for a CPU run here (cap {cap:.4g} GFLOP, GEMM_MAX_CPU_GFLOP); "
    "choose smaller sizes or run on a GPU": "{what} 为 {gflop:.4g} GFLOP，太多（上限 {cap:.4g} GFLOP）",
    "{name}={value} is above this server's cap of {cap}; choose a smaller size or raise GEMM_MAX_DIM":
        "{name}={value} 超过了上限 {cap}",
    "NVML could not read GPU {index} ({error}); GPU monitoring is off.": "NVML 无法读取 GPU {index}（{error}）。",
}


def zh(s: str) -> str:
    return FAKE_ZH.get(s, s)


def test_reword_finds_the_template_and_translates_nested_values():
    english = "datasheet; a CPU rank has 1/2 of the cores, so 1/2 of it"
    assert str(Msg(tpm.SRC_CPU_SHARE, source=tpm.SRC_DATASHEET, n=2)) == english
    assert jobs.reword(english, tpm.ESTIMATE_TEXTS, zh) == "数据手册；每个 CPU rank 拥有 1/2 的核心，因此取其 1/2"
    assert jobs.reword("CPU (edit me) ÷ 4 (one rank's cores)", tpm.ESTIMATE_TEXTS, zh) == "CPU（请按本机修改） ÷ 4（一个 rank 的核心）"
    # English in, English out: the identity gettext gives the text back unchanged
    assert jobs.reword(english, tpm.ESTIMATE_TEXTS) == english
    # no template matches: the text through gettext (a constant), or as it is
    assert jobs.reword("datasheet", tpm.ESTIMATE_TEXTS, zh) == "数据手册"
    assert jobs.reword("something else entirely", tpm.ESTIMATE_TEXTS, zh) == "something else entirely"


def test_reword_shows_an_exceptions_text_as_code():
    from gemmlib.measure.monitor import NVML_TEXTS, NVML_UNREADABLE

    text = NVML_UNREADABLE.format(index=0, error="NVMLError_Unknown: Unknown Error")
    assert jobs.reword(text, NVML_TEXTS, zh, code=("error",)) == "NVML 无法读取 GPU 0（`NVMLError_Unknown: Unknown Error`）。"


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
        lim.check_cpu_flops(2e10, Msg(jobs.A_GEMM, m=1000, n=1000, k=10000))
    assert str(e.value).startswith("a 1000×1000×10000 GEMM is 20 GFLOP")
    again = pickle.loads(pickle.dumps(e.value))  # a worker process hands it back pickled
    assert type(again) is safety.Refused and again.render(zh) == e.value.render(zh)


def test_a_workers_input_error_keeps_its_template_only_when_it_reads_the_same():
    sent = {"message": "hidden=256 is above this server's cap of 128; choose a smaller size or raise GEMM_MAX_DIM",
            "template": "{name}={value} is above this server's cap of {cap}; choose a smaller size or raise "
                        "GEMM_MAX_DIM", "params": {"name": "hidden", "value": 256, "cap": 128}}
    e = runner._input_error(sent)
    assert str(e) == sent["message"] and e.template == sent["template"] and e.params["value"] == 256
    # a value JSON turned into text (a tuple under !r) would read differently: the English text wins
    odd = {"message": "shapes (1, 2) refused", "template": "shapes {shape!r} refused", "params": {"shape": "(1, 2)"}}
    e = runner._input_error(odd)
    assert str(e) == odd["message"] and e.template == odd["message"]
    assert str(runner._input_error({"message": "plain words"})) == "plain words"


def test_a_steps_message_crosses_the_workers_pipe_with_its_template(monkeypatch, tmp_path):
    """A real (small) ceiling run in a worker process: each step's text comes back as the English the
    worker wrote (what the command line prints) and, as a Text, with its template and values (what a
    page translates)."""
    from gemmlib.core.i18n import Text
    from gemmlib.measure import devices

    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(devices, "ceiling_plan", lambda device, quick=False: (64, 1024**2))
    seen: list = []
    runner.run(jobs.ceilings("cpu", quick=True), on_progress=lambda f, t: seen.append(t))
    texts = [str(t) for t in seen]
    assert "device copy 1 MiB" in texts and texts[-1] == "done" and "fp32 GEMM 64³" in texts, texts
    assert all(isinstance(t, Text) for t in seen), [type(t) for t in seen]
    fake = {"device copy {size:.0f} MiB": "设备拷贝 {size:.0f} MiB", "done": "完成", "{dtype} GEMM {n}³": "{dtype} GEMM {n}³（立方）"}
    shown = [t.render(lambda s: fake.get(s, s)) for t in seen]
    assert "设备拷贝 1 MiB" in shown and shown[-1] == "完成" and "fp32 GEMM 64³（立方）" in shown, shown


def test_a_steps_message_is_kept_only_when_it_reads_as_the_worker_wrote_it():
    from gemmlib.core.i18n import N_, Text
    from gemmlib.measure.precision import SHAPE_LABELS

    t = Text(N_("{n} ranks: {text}"), n=2, text=Text(N_("{dtype} on {label} ({m}×{n}×{k})"), dtype="bf16",
                                                     label=Text.reworded("square 512", SHAPE_LABELS.values()),
                                                     m=512, n=512, k=512))
    data = jobs.message_data(t)
    back = jobs.message_from(data, str(t))
    assert str(back) == "2 ranks: bf16 on square 512 (512×512×512)" and isinstance(back, Text)
    fake = {"{n} ranks: {text}": "{n} 个 rank：{text}", "{dtype} on {label} ({m}×{n}×{k})": "{dtype}，{label}",
            "square {n}": "方阵 {n}"}
    assert back.render(lambda s: fake.get(s, s)) == "2 个 rank：bf16，方阵 512"
    cut = str(t)[:10]  # the worker cuts a long text: the template no longer reads as it, the text stays
    assert jobs.message_from(data, cut) == cut and not isinstance(jobs.message_from(data, cut), Text)
    assert jobs.message_data("plain text") is None and jobs.message_from(None, "plain text") == "plain text"


def test_not_measured_reasons_read_back_through_their_templates():
    from gemmlib.charts import bench as charts_bench
    from gemmlib.measure import precision as bp
    from gemmlib.measure import quant

    why = "this PyTorch has no CPU kernel for torch._scaled_mm (\"addmm_impl_cpu_\" not implemented for 'Float8_e4m3fn')"
    assert quant.FP8_NO_CPU_KERNEL.format(error="\"addmm_impl_cpu_\" not implemented for 'Float8_e4m3fn'") == why
    fake = {quant.FP8_NO_CPU_KERNEL: "这个 PyTorch 没有 CPU 内核（{error}）",
            safety.TIME_LIMIT_REACHED: "已跳过：{seconds:g} s 上限"}.get
    assert charts_bench.note_text(why, lambda s: fake(s, s), bp.NOTE_TEMPLATES) == \
        "这个 PyTorch 没有 CPU 内核（\"addmm_impl_cpu_\" not implemented for 'Float8_e4m3fn'）"
    assert safety.Deadline(2.5).reason() == "skipped: the run's time limit of 2.5 s was reached (GEMM_TIME_LIMIT_S)"
    assert charts_bench.note_text(safety.Deadline(2.5).reason(), lambda s: fake(s, s), bp.NOTE_TEMPLATES) == "已跳过：2.5 s 上限"
