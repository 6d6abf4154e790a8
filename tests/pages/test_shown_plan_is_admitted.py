"""One time model, shown and enforced alike (brief H5 item 1): the plan beside a page's Run button is the plan
``plan.admit`` judges on a press, for every benchmark; a time refusal names the estimate's own seconds and count;
and where the worker will probe this machine before the run, the caption says what can change then.

The reviewer's case: the Chinese Precision page, "LLM layer" shapes on a CPU, said "about 92 s, 30 steps (rates:
datasheet)", and a press was refused at "about 500 s (40 rows)" from rates probed just before the run.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gemmlib.core import ceilings, speed
from gemmlib.core.errors import InputError
from gemmlib.core.results import clear_recorded
from gemmlib.measure import batching as bb
from gemmlib.measure import collectives as cl
from gemmlib.measure import devices, plan, runner, safety, worker
from gemmlib.measure import precision as bp
from gemmlib.measure import profiler as pf
from gemmlib.measure import tiling as bt
from ui import runbox

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "6_Precision.py")
SLOW = {"fp32": 2e10, "bf16": 2e8, "fp16": 2e8, "int8": 4e8}  # a loaded 2-core machine, as the probe finds it


@pytest.fixture(autouse=True)
def _clean(monkeypatch, tmp_path):
    for k in ("GEMM_MAX_DIM", "GEMM_MAX_BYTES", "GEMM_TIME_LIMIT_S", "GEMM_CLASSROOM", "GEMM_MAX_CPU_GFLOP"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path / "cache"))
    ceilings.clear_ceilings()
    clear_recorded()


def _block(**kw):
    return pf.BlockConfig.llama(hidden=256, heads=4, kv_heads=2, layers=1, seq_len=64, **kw)


CONFIGS = [
    pytest.param(bp.SPEC, bp.PrecisionConfig(device="cpu", shapes=bp.llm_shapes("llama-2-7b", 1, 128),
                                             dtypes=tuple(bp.PRECISION_DTYPES), min_run_time=0.05), id="precision-llm"),
    pytest.param(bp.SPEC, bp.PrecisionConfig(device="cpu", shapes=bp.square_shapes([256, 512]),
                                             dtypes=("fp32", "int8"), with_quant=False), id="precision-squares"),
    pytest.param(bp.SPEC, bp.PrecisionConfig(device="cpu", shapes=(bp.ARTICLE_SHAPE,), dtypes=("fp32", "int8")),
                 id="precision-article"),
    pytest.param(bt.SPEC, bt.cpu_defaults(), id="tiling-defaults"),
    pytest.param(bt.SPEC, bt.TilingConfig(device="cpu", size=512, tiles=(32, 99999), min_run_time=1.0),
                 id="tiling-large"),
    pytest.param(bt.WAVES_SPEC, bt.WaveConfig(device="cpu", m=1024, k=1024, ns=(1024, 1040)), id="waves-cpu"),
    pytest.param(bb.SPEC, bb.cpu_decode_defaults(), id="batching-decode"),
    pytest.param(bb.SPEC, bb.BatchingConfig(device="cpu", m=256, k=2048, n=2048, batches=(1, 8, 32),
                                            min_run_time=1.0), id="batching-prefill"),
    pytest.param(bb.ARTICLE_SPEC, bb.ArticleConfig(device="cpu", batch=8, m=256, k=1024, n=1024), id="article"),
    pytest.param(devices.SPEC, devices.CeilingsConfig(device="cpu", quick=True), id="ceilings-quick"),
    pytest.param(devices.SPEC, devices.CeilingsConfig(device="cpu"), id="ceilings"),
    pytest.param(pf.SPEC, pf.ProfileConfig(_block(), "cpu", steps=2, monitor=False), id="profile"),
    pytest.param(pf.BLOCK_BENCH_SPEC, pf.BlockBenchConfig(_block(), "cpu", 0.1), id="block-bench"),
    pytest.param(cl.SPEC, cl.CollectiveLaunch(cl.CollectiveConfig(), nproc=2, backend="gloo"), id="collectives"),
]


def _caption(p: plan.Plan) -> str:
    return f"about {round(p.seconds):,} s for {p.count} steps"


@pytest.mark.parametrize("probed", [False, True], ids=["datasheet", "probed"])
@pytest.mark.parametrize(("spec", "cfg"), CONFIGS)
def test_the_plan_shown_is_the_plan_admitted_and_refused_on(spec, cfg, probed):
    """For every benchmark: the page's plan (``runbox._plan_or_refusal``, the caption and the disabled button's
    reason) is the one ``plan.admit`` judges; and with a time limit below it, the refusal names the caption's own
    seconds and count (it named the rows: "40 rows" beside "30 steps")."""
    if probed:
        speed.save_probe("cpu", SLOW)
    lim = safety.limits()
    shown, refusal = runbox._plan_or_refusal(spec, cfg, lim)
    assert refusal is None and shown is not None
    why = runbox.refused_by_caps(shown, cfg, lim)  # the button's reason, off, beside the caption
    if why is None:
        assert shown == plan.admit(spec, cfg, lim)
    else:  # the slow probe's plan is above the limit: refused by admit in the very words beside the button
        with pytest.raises(InputError) as e:
            plan.admit(spec, cfg, lim)
        assert str(e.value) == str(why) and _caption(shown) in str(why)
    if shown.launches or shown.seconds < 2:  # a multi-rank run checks each rank itself; a CPU wave sweep runs nothing
        return
    tight = replace(lim, time_limit_s=max(1.0, shown.seconds / 2))
    why = runbox.refused_by_caps(shown, cfg, tight)
    assert why is not None
    assert _caption(shown) in str(why)
    with pytest.raises(InputError) as e:  # the command line and the queue: the same words
        plan.admit(spec, cfg, tight)
    assert str(e.value) == str(why)


def test_the_caption_says_what_the_probe_can_change_and_the_refusal_is_the_same_run(monkeypatch):
    """The reviewer's case in Chinese: before any probe the caption's estimate is the datasheet's, and it says so —
    the worker times this machine first and refuses the run then if it would pass the limit; a press admits the very
    plan shown; the worker's refusal follows; once probed, the caption is the probe's plan and the button is off with
    the caption's own seconds and step count."""
    shown: list[plan.Plan] = []
    real_estimate = runbox.run_estimate

    def run_estimate(est, *a, **kw):
        shown.append(est)
        return real_estimate(est, *a, **kw)

    admitted: list[plan.Plan] = []

    def run(spec, config, lim=None, **kw):  # the runner's admission, then the worker's probe on a loaded machine
        lim = lim or safety.limits()
        admitted.append(plan.admit(spec, config, lim))
        speed.save_probe("cpu", SLOW)
        worker.check_speed(spec, config, lim, "cpu", lim.time_limit_s)
        raise AssertionError("the worker should have refused it")

    monkeypatch.setattr(runbox, "run_estimate", run_estimate)
    monkeypatch.setattr(runner, "run", run)
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.query_params["lang"] = "zh"
    at.run()
    at.radio(key="pr_device").set_value("cpu")
    at.radio(key="pr_set").set_value("LLM layer").run()
    at.slider(key="pr_time").set_value(0.05).run()
    assert not at.exception
    before = shown[-1]
    assert before.sources == ("datasheet",) and before.count == 30 and before.seconds < 240
    caption = next(c.value for c in at.caption if "本次运行" in c.value)
    assert "共 30 步" in caption and "数据手册" in caption
    assert "运行开始前，工作进程会先测一下本机在 fp32、fp16、bf16、int8 上的速度" in caption and "240 s" in caption
    button = next(b for b in at.button if b.label == "运行基准测试")
    assert not button.disabled

    button.click().run()
    assert admitted == [before]  # the plan the caption showed is the one the press was admitted on
    error = " ".join(e.value for e in at.error)
    assert "运行前刚刚测得" in error and "行）" not in error  # no row count beside the caption's steps

    at.run()  # the page again, now that this machine is probed: the plan the worker judged, shown
    after = shown[-1]
    assert "probed here" in after.sources and after.count == 30 and after.seconds > 240
    caption = next(c.value for c in at.caption if "本次运行" in c.value)
    assert "运行开始前" not in caption and f"约 {round(after.seconds):,} s" in caption
    button = next(b for b in at.button if b.label == "运行基准测试")
    assert button.disabled and f"约需 {round(after.seconds):,} s，共 30 步" in button.help
