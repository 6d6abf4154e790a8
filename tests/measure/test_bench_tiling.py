"""The tiling benchmark on the CPU: every implementation checked against float64, rows that say why."""

import argparse
import json

import pytest

from gemmlib.charts import tiling as tiling_charts
from gemmlib.cli import bench_tiling as cmd
from gemmlib.core.errors import InputError
from gemmlib.core.flops import gemm_flops, wave_quantization
from gemmlib.core.results import BenchResult, clear_recorded, recorded
from gemmlib.explain.tiling import tile_traffic
from gemmlib.measure import harness, plan, safety
from gemmlib.measure import tiling as bt
from gemmlib.measure.triton_gemm import prepare_interpreter

prepare_interpreter()  # before anything else in this test session imports triton


def _cfg(**kw):
    base = dict(device="cpu", size=37, tiles=(8, 16, 32), min_run_time=0.01)
    base.update(kw)
    return bt.TilingConfig(**base)


def test_every_impl_and_tile_on_odd_size():
    clear_recorded()
    res = bt.run_tiling(_cfg(m=37, n=29, k=45))
    by = {(r.name, r.shape["tile"]): r for r in res}
    assert set(by) == {(i, t) for i in ("python_tiled", "numpy_blocked", "triton") for t in (8, 16, 32)} | {
        ("torch", None)}
    for r in res:
        assert r.shape["m"] == 37 and r.shape["n"] == 29 and r.shape["k"] == 45
        assert r.flops == gemm_flops(37, 29, 45)
        if r.supported:
            assert r.rel_error is not None and r.rel_error < 1e-5, (r.name, r.rel_error)
    for impl in ("python_tiled", "numpy_blocked", "torch"):
        for r in (x for x in res if x.name == impl):
            assert r.median_s > 0 and r.p20_s <= r.median_s <= r.p80_s
            assert r.tflops == pytest.approx(r.flops / r.median_s / 1e12)
    # traffic extras are the model's
    r = by[("numpy_blocked", 16)]
    tr = tile_traffic(37, 29, 45, 16, dtype="fp32")
    assert r.extra["traffic_bytes"] == tr.total_bytes and r.extra["a_reads"] == tr.a_reads
    pt = by[("python_tiled", 16)]
    assert pt.extra["traffic_bytes"] == tile_traffic(37, 29, 45, 16, dtype="fp32",
                                                     accumulate_in_dram=True).total_bytes
    assert pt.extra["calls"] == 3 * 2 * 3
    # Triton: tile 8 is refused (tl.dot needs 16); on a CPU the others are correctness-only rows
    assert not by[("triton", 8)].supported and "16" in by[("triton", 8)].reason
    if bt.harness.torch_device_available("cuda")[0] is False:
        t16 = by[("triton", 16)]
        assert t16.supported and t16.median_s is None and t16.tflops is None
        assert "correctness only" in t16.reason
    assert len(recorded()) == len(res)


@pytest.mark.parametrize("dtype,tol", [("fp16", 3e-3), ("bf16", 2e-2)])
def test_sixteen_bit(dtype, tol):
    res = bt.run_tiling(_cfg(dtype=dtype, tiles=(16,), size=33))
    for r in res:
        if r.name == "numpy_blocked" and dtype == "bf16":
            assert not r.supported and "bfloat16" in r.reason
            continue
        assert r.supported, r.reason
        assert r.rel_error < tol


def test_too_many_calls_refused_not_run():
    res = bt.run_tiling(_cfg(size=64, tiles=(1,), impls=("python_tiled",)))
    (r,) = res
    assert not r.supported and "calls" in r.reason and r.median_s is None


def test_time_limit_turns_rows_into_skips(monkeypatch):
    monkeypatch.setenv("GEMM_TIME_LIMIT_S", "0.000001")
    res = bt.run_tiling(_cfg(tiles=(16,), impls=("numpy_blocked", "torch")))
    assert all(not r.supported and "time limit" in r.reason for r in res)


@pytest.mark.parametrize("kw,match", [
    (dict(impls=("fortran",)), "unknown implementation"),
    (dict(dtype="fp8"), "runs fp32"),
    (dict(size=0), "at least 1"),
    (dict(tiles=(0,)), "tile sizes"),
    (dict(device="tpu"), "device"),
])
def test_bad_configs(kw, match):
    with pytest.raises(InputError, match=match):
        bt.run_tiling(_cfg(**kw))


def test_size_cap_from_classroom_mode(monkeypatch):
    """The caps on M, N, K are the plan's (the page, the CLI and the queue admit a run through it)."""
    monkeypatch.setenv("GEMM_CLASSROOM", "1")
    lim = safety.limits()
    assert lim.max_dim < 5000
    with pytest.raises(InputError, match="cap"):
        bt.SPEC.plan(_cfg(size=5000), lim)
    with pytest.raises(InputError, match="cap"):
        plan.admit(bt.SPEC, _cfg(size=5000))
    bt.SPEC.plan(_cfg(size=lim.max_dim, tiles=(lim.max_dim,), impls=("torch",)), lim)  # at the cap: admitted


def test_parse_int_list():
    assert bt.parse_int_list("32, 64,32") == (32, 64)
    for bad in ("", "a", "3.5", "-1"):
        with pytest.raises(InputError):
            bt.parse_int_list(bad)


def test_wave_sweep_on_cpu_says_why_and_prediction_matches_flops_page():
    rows = bt.run_wave_sweep("cpu", m=256, k=64, ns=[256, 272])
    assert all(not r.supported and r.reason for r in rows)
    pred = bt.predicted_wave_rows(8192, 8192, [8192, 8208], (128, 256), 132)
    for p in pred:
        wq = wave_quantization(8192, p["n"], 128, 256, 132)
        assert p["predicted_efficiency"] == wq.efficiency and p["waves"] == wq.waves
    assert pred[1]["tiles"] > pred[0]["tiles"]


def test_wave_sweep_checks_the_deadline_before_every_point():
    # The loop run_wave_sweep uses on a GPU, here with real CPU matmuls timed by the harness: once the
    # server's time limit has passed, the remaining points are skipped rows, not measured.
    import time

    import torch

    from gemmlib.measure import safety

    a, b = torch.randn(64, 64), torch.randn(64, 64)
    ran = []

    def measure(impl, nn):
        ran.append((impl, nn))
        t = harness.time_callable(torch.matmul, device="cpu", args_list=[(a, b)], min_run_time=0.01)
        time.sleep(0.15)  # a point that takes a while, as an 8192-wide one does on a GPU
        r = BenchResult("tiling-waves", impl, "cpu", "cpu", "fp32", {"m": 64, "n": nn, "k": 64}, 1.0, 1.0)
        return r.set_timing(t)

    ns = [64, 80, 96, 112, 128]
    rows = bt.sweep_points(ns, ("torch",), measure, safety.Deadline(0.2), "cpu", "fp32", 64, 64)
    assert len(rows) == len(ns) and [r.shape["n"] for r in rows] == ns
    done = [r for r in rows if r.supported]
    skipped = [r for r in rows if not r.supported]
    assert 1 <= len(done) <= 2 and len(ran) == len(done)  # nothing is run once the limit has passed
    assert skipped and all("time limit" in r.reason for r in skipped)
    assert bt.sweep_points(ns, ("torch", "triton"), measure, safety.Deadline(0.0), "cpu", "fp32", 64, 64)[-1].reason \
        .startswith("skipped")


def test_lesson_and_charts_from_numbers():
    res = bt.run_tiling(_cfg(tiles=(16, 32)))
    text = bt.lesson(res)
    assert "library call" in text and "python_tiled" in text
    assert tiling_charts.tiling_chart(res) is not None
    assert tiling_charts.traffic_chart(37, 37, 37, [16, 32], "fp32") is not None
    assert tiling_charts.wave_chart(None, bt.predicted_wave_rows(256, 256, [256, 272], (128, 128), 4)) is not None


def _run_cmd(argv, capsys):
    p = argparse.ArgumentParser()
    cmd.add_arguments(p)
    rc = cmd.run(p.parse_args(argv))
    return rc, capsys.readouterr()


def test_cli_json(capsys):
    rc, out = _run_cmd(["--device", "cpu", "--size", "33", "--tiles", "16,32", "--min-run-time", "0.01",
                        "--json"], capsys)
    assert rc == 0
    data = json.loads(out.out)
    assert data["device"] == "cpu"
    impls = {(r["impl"], r["tile"]) for r in data["results"]}
    assert ("torch", None) in impls and ("python_tiled", 16) in impls and ("triton", 32) in impls
    for r in data["results"]:
        assert {"impl", "tile", "median_s", "tflops", "rel_error"} <= set(r)


def test_cli_table_and_bad_input(capsys):
    rc, out = _run_cmd(["--device", "cpu", "--size", "20", "--tiles", "16", "--impls", "torch,numpy_blocked",
                        "--min-run-time", "0.01"], capsys)
    assert rc == 0 and "numpy_blocked" in out.out and "library call" in out.out
    p = argparse.ArgumentParser()
    cmd.add_arguments(p)
    with pytest.raises(InputError):
        cmd.run(p.parse_args(["--device", "cpu", "--size", "-3"]))
    with pytest.raises(InputError):
        cmd.run(p.parse_args(["--device", "cpu", "--tiles", "x"]))


def test_report_section_cpu(tmp_path):
    sec = bt.report_section("cpu", True, tmp_path, progress=lambda f, s: None)
    assert sec["title"] == "Tiling"
    assert sec["results"] and all(r.bench == "tiling" for r in sec["results"])
    assert "| impl |" in sec["markdown"]
    assert "tiling_tflops" in sec["charts"]


def _fake(name, tile, seconds, m=4096, **extra):
    r = BenchResult(bench="tiling", name=name, device="cuda", device_name="NVIDIA H200", dtype="fp16",
                            shape={"m": m, "n": m, "k": m, "tile": tile}, flops=float(gemm_flops(m, m, m)),
                            bytes=float(3 * m * m * 2), median_s=seconds, rel_error=1e-3, extra=dict(extra))
    return r


def test_report_section_gpu_path_with_stand_in_measurements(monkeypatch, tmp_path):
    # The GPU branch's bookkeeping (verdict, tables, charts) runs here on stand-in rows.
    def fake_tiling(cfg, progress=None, deadline=None):
        assert cfg.device == "cuda" and cfg.size == 4096 and cfg.dtype == "fp16"
        return [_fake("torch", None, 0.20e-3), _fake("triton", None, 0.22e-3, autotuned={"BLOCK_M": 128}),
                _fake("triton", 64, 0.4e-3), _fake("python_tiled", 1024, 2e-3)]

    def fake_waves(device, m, k, ns, dtype, min_run_time, progress, deadline=None):
        out = []
        for impl in ("torch", "triton"):
            for nn in ns:
                wq = wave_quantization(m, nn, *bt.WAVE_TILE, 132)
                r = BenchResult(bench="tiling-waves", name=impl, device="cuda", device_name="NVIDIA H200",
                                        dtype=dtype, shape={"m": m, "n": nn, "k": k},
                                        flops=float(gemm_flops(m, nn, k)), bytes=1.0, median_s=1e-3 * nn / 8192,
                                        extra={"sms": 132, "tiles": wq.tiles, "waves": wq.waves,
                                               "predicted_efficiency": wq.efficiency, "predicted_tflops": 700.0})
                out.append(r)
        return out

    monkeypatch.setattr(bt, "run_tiling", fake_tiling)
    monkeypatch.setattr(bt, "run_wave_sweep", fake_waves)
    sec = bt.report_section("cuda", True, tmp_path)
    v = sec["verdict"]
    assert v["triton_share_of_cublas"] == pytest.approx(0.20 / 0.22)
    assert v["triton_config"] == {"BLOCK_M": 128}
    assert "meets the 85% target" in sec["markdown"]
    assert "Tile and wave quantization" in sec["markdown"]
    assert set(sec["charts"]) == {"tiling_tflops", "wave_quantization"}
    spec = sec["charts"]["wave_quantization"].to_dict()
    series = {d["series"] for d in spec["datasets"][next(iter(spec["datasets"]))]}
    assert series == {"predicted (tile × wave)", "measured: cuBLAS (torch)", "measured: triton"}


@pytest.mark.skipif(harness.torch_device_available("cuda")[0], reason="the interpreter runs only without a GPU")
def test_interpreter_row_cap_says_why():
    (r,) = bt.run_tiling(_cfg(size=256, tiles=(16,), impls=("triton",)))
    assert not r.supported and "program steps" in r.reason and r.extra["interpreter_steps"] == 16**3


def test_lesson_reads_the_numbers():
    normal = [_fake("torch", None, 1e-3), _fake("python_tiled", 64, 5e-3), _fake("numpy_blocked", 64, 2e-3)]
    text = bt.lesson(normal)
    assert "`python_tiled` at its best (tile 64) is 5× slower" in text
    assert "not the expected result" not in text
    odd = [_fake("torch", None, 4e-3), _fake("numpy_blocked", 128, 1e-3)]
    assert "4× faster" in bt.lesson(odd) and "Rerun on an idle machine" in bt.lesson(odd)
    assert "did not run" in bt.lesson([_fake("numpy_blocked", 32, 1e-3)])



def test_a_gpu_plan_counts_the_triton_kernels_compilation(monkeypatch):
    # On a fresh GPU machine every Triton configuration is compiled before its row is timed (the autotuned row
    # compiles and times all of them): seconds the plan did not count, so the report's tiling section ran past its
    # share and the wave sweep after it lost its points.
    from dataclasses import replace

    from gemmlib.measure import triton_gemm as tg

    monkeypatch.delenv(tg.AUTOTUNE_ENV, raising=False)
    lim = safety.limits()
    base = bt.TilingConfig(device="cuda", size=4096, dtype="fp16", tiles=(64, 128, 256), impls=("torch",),
                           min_run_time=0.1)
    tri = replace(base, impls=("torch", "triton"))
    rows = bt.plan_tiling(tri, lim).seconds - bt.plan_tiling(base, lim).seconds
    timed = 4 * plan.row_seconds(0.0, 0.1, "cuda")  # the autotuned row and the three tiles' rows, timed
    # 7 configurations compiled and timed by the autotuner, tiles 64 and 128 compiled (256 spills: refused unrun)
    setup = len(tg.GPU_CONFIGS) * (bt.TRITON_COMPILE_S + bt.AUTOTUNE_BENCH_S) + 2 * bt.TRITON_COMPILE_S
    assert rows >= setup + timed
    assert rows < setup + timed + 1.0
    monkeypatch.setenv(tg.AUTOTUNE_ENV, "small")  # the GPU script's test step: one configuration
    small = bt.plan_tiling(tri, lim).seconds - bt.plan_tiling(base, lim).seconds
    assert small == pytest.approx(rows - (len(tg.GPU_CONFIGS) - 1) * (bt.TRITON_COMPILE_S + bt.AUTOTUNE_BENCH_S))
    cfg = bt.WaveConfig(ns=(8192, 8200, 8208), min_run_time=0.05)
    alone = plan.estimate([plan.Row(2.0 * 8192 * nn * 8192, "bf16", impl) for nn in cfg.ns for impl in
                           ("torch", "triton")], "cuda", 0.05, bench="tiling-waves")[0]
    assert bt.plan_waves(cfg, lim).seconds == pytest.approx(alone + 2 * bt.TRITON_COMPILE_S)  # N % 16: two kernels


def test_the_progress_names_each_implementation_as_the_table_does():
    """The Chinese run box said "分块：python_tiled，分块 16" while the table's row said "Python 分块循环"."""
    from ui.i18n import gettext_for

    seen = []
    bt.run_tiling(bt.TilingConfig(device="cpu", size=32, dtype="fp32", tiles=(16,), impls=("python_tiled", "torch"),
                                  min_run_time=0.001), progress=lambda frac, text: seen.append(text))
    zh = gettext_for("zh")
    shown = [t.render(zh) for t in seen if hasattr(t, "render")]
    assert any(zh("python_tiled") in s for s in shown) and not any("python_tiled" in s for s in shown), shown
