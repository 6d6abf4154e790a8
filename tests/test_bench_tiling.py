"""The tiling benchmark on the CPU: every implementation checked against float64, rows that say why."""

import argparse
import json

import pytest

from gemmlib import bench_tiling as bt
from gemmlib import harness
from gemmlib.commands import bench_tiling as cmd
from gemmlib.errors import InputError
from gemmlib.flops import gemm_flops, wave_quantization
from gemmlib.tiling import tile_traffic
from gemmlib.triton_gemm import prepare_interpreter

prepare_interpreter()  # before anything else in this test session imports triton


@pytest.fixture(autouse=True)
def _no_caps(monkeypatch):
    for v in ("GEMM_CLASSROOM", "GEMM_MAX_DIM", "GEMM_MAX_BYTES", "GEMM_TIME_LIMIT_S"):
        monkeypatch.delenv(v, raising=False)


def _cfg(**kw):
    base = dict(device="cpu", size=37, tiles=(8, 16, 32), min_run_time=0.01)
    base.update(kw)
    return bt.TilingConfig(**base)


def test_every_impl_and_tile_on_odd_size():
    harness.clear_recorded()
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
    assert len(harness.recorded()) == len(res)


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
    monkeypatch.setenv("GEMM_CLASSROOM", "1")
    with pytest.raises(InputError, match="cap"):
        bt.run_tiling(_cfg(size=5000))


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


def test_lesson_and_charts_from_numbers():
    res = bt.run_tiling(_cfg(tiles=(16, 32)))
    text = bt.lesson(res)
    assert "library call" in text and "python_tiled" in text
    assert bt.tiling_chart(res) is not None
    assert bt.traffic_chart(37, 37, 37, [16, 32], "fp32") is not None
    assert bt.wave_chart(None, bt.predicted_wave_rows(256, 256, [256, 272], (128, 128), 4)) is not None


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
