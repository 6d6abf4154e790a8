"""The batching benchmark on the CPU: modes agree with float64, byte and intensity model, CLI, report."""

import argparse
import json

import pytest

from gemmlib.charts import batching as batching_charts
from gemmlib.cli import bench_batching as cmd
from gemmlib.core.errors import InputError
from gemmlib.measure import batching as bb
from gemmlib.measure import plan, safety


def _cfg(**kw):
    base = dict(device="cpu", m=3, k=37, n=29, batches=(1, 5), min_run_time=0.01)
    base.update(kw)
    return bb.BatchingConfig(**base)


def test_modes_equal_reference_on_odd_sizes():
    res = bb.run_batching(_cfg())
    assert {(r.name, r.shape["batch"]) for r in res} == {(md, b) for md in bb.MODES for b in (1, 5)}
    for r in res:
        assert r.supported, r.reason
        assert r.rel_error < 1e-5
        b = r.shape["batch"]
        assert r.flops == 2 * b * 3 * 37 * 29
        assert r.bytes == bb.mode_bytes(r.name, b, 3, 37, 29, "fp32")
        assert r.median_s > 0 and r.gbps == pytest.approx(r.bytes / r.median_s / 1e9)
        assert r.extra["launches"] == (b if r.name == "loop" else 1)
        assert r.extra["per_request_s"] == pytest.approx(r.median_s / b)


@pytest.mark.parametrize("dtype,tol", [("fp16", 3e-3), ("bf16", 2e-2)])
def test_sixteen_bit(dtype, tol):
    res = bb.run_batching(_cfg(dtype=dtype, batches=(2,)))
    assert all(r.supported and r.rel_error < tol for r in res)


def test_intensity_model():
    # stacking shares the weight: at decode the intensity grows ~linearly with B; loop and bmm do not
    k = n = 4096
    one = bb.mode_intensity("stacked", 1, 1, k, n, "bf16")
    assert bb.mode_intensity("loop", 64, 1, k, n, "bf16") == pytest.approx(one)
    assert bb.mode_intensity("bmm", 64, 1, k, n, "bf16") == pytest.approx(one)
    st64 = bb.mode_intensity("stacked", 64, 1, k, n, "bf16")
    assert 60 < st64 / one < 64
    assert bb.mode_bytes("stacked", 8, 2, 10, 20, "fp32") == (10 * 20 + 8 * (2 * 10 + 2 * 20)) * 4
    assert bb.mode_bytes("bmm", 8, 2, 10, 20, "fp16") == (8 * 10 * 20 + 8 * (2 * 10 + 2 * 20)) * 2
    with pytest.raises(InputError):
        bb.mode_bytes("scatter", 1, 1, 1, 1, "fp32")


@pytest.mark.parametrize("kw,match", [
    (dict(modes=("scatter",)), "unknown mode"),
    (dict(batches=()), "at least one"),
    (dict(batches=(0,)), "batch sizes"),
    (dict(dtype="int8"), "runs fp32"),
    (dict(k=0), "at least 1"),
])
def test_bad_configs(kw, match):
    with pytest.raises(InputError, match=match):
        bb.run_batching(_cfg(**kw))


def test_classroom_caps_batch_rows(monkeypatch):
    """The caps on a sweep's sizes are the plan's (the page's estimate, the CLI and the queue admit through
    it): B·M = 4,096 rows is past the classroom's dimensions; the sweep itself runs what was admitted."""
    monkeypatch.setenv("GEMM_CLASSROOM", "1")
    lim = safety.limits()
    assert 8 * 512 > lim.max_dim >= 512
    with pytest.raises(InputError, match="cap"):
        bb.SPEC.plan(_cfg(m=512, batches=(8,)), lim)
    with pytest.raises(InputError, match="cap"):
        plan.admit(bb.SPEC, _cfg(m=512, batches=(8,)))
    bb.SPEC.plan(_cfg(m=512, batches=(lim.max_dim // 512,)), lim)  # B·M at the cap: admitted
    (row,) = bb.run_batching(_cfg(m=8, k=8, n=8 * lim.max_dim // 8 + 8, batches=(1,), modes=("stacked",)))
    assert row.supported, row.reason  # N past the classroom cap: only a plan refuses it, not the sweep again


def test_memory_cap_refuses_before_allocating(monkeypatch):
    monkeypatch.setenv("GEMM_MAX_BYTES", "1000")
    with pytest.raises(InputError, match="needs about"):
        bb.run_batching(_cfg())


def test_lesson_and_chart():
    res = bb.run_batching(_cfg(m=1, k=64, n=64, batches=(1, 16)))
    text = bb.lesson(res)
    assert "Stacking 16 requests" in text and "bmm" in text
    for metric in ("tflops", "gbps", "intensity", "per_request_s"):
        assert batching_charts.batching_chart(res, metric) is not None
    with pytest.raises(InputError):
        batching_charts.batching_chart(res, "speed")


def test_article_example_verdict_on_cpu_scale():
    shape = bb.article_shape("cpu")
    assert shape["batch"] == 20 and shape["m"] < 1024
    assert bb.article_shape("cuda") == bb.ARTICLE
    ex = bb.run_article_example("cpu", batch=4, m=8, k=32, n=32, min_run_time=0.01)
    assert ex["speedup"] > 0 and ex["decode_speedup"] > 0
    assert "stacking is" in ex["verdict"] and "decode" in ex["verdict"]
    assert {r.shape["m"] for r in ex["results"]} == {8, 1}


def _run_cmd(argv, capsys):
    p = argparse.ArgumentParser()
    cmd.add_arguments(p)
    rc = cmd.run(p.parse_args(argv))
    return rc, capsys.readouterr()


def test_cli_json(capsys):
    rc, out = _run_cmd(["--device", "cpu", "--m", "1", "--k", "64", "--n", "48", "--batches", "1,8",
                        "--min-run-time", "0.01", "--json"], capsys)
    assert rc == 0
    data = json.loads(out.out)
    assert data["device"] == "cpu" and data["k"] == 64
    assert {(r["mode"], r["batch"]) for r in data["results"]} == {(m, b) for m in bb.MODES for b in (1, 8)}
    for r in data["results"]:
        assert {"mode", "batch", "median_s", "tflops", "intensity"} <= set(r)
        assert r["intensity"] > 0


def test_cli_table_and_bad_input(capsys):
    rc, out = _run_cmd(["--device", "cpu", "--k", "32", "--n", "32", "--batches", "2", "--modes", "stacked",
                        "--min-run-time", "0.01"], capsys)
    assert rc == 0 and "stacked" in out.out
    p = argparse.ArgumentParser()
    cmd.add_arguments(p)
    with pytest.raises(InputError):
        cmd.run(p.parse_args(["--device", "cpu", "--batches", "1,zero"]))
    with pytest.raises(InputError):
        cmd.run(p.parse_args(["--device", "cpu", "--m", "0"]))


def test_report_section_cpu(tmp_path):
    sec = bb.report_section("cpu", True, tmp_path, progress=lambda f, s: None)
    assert sec["title"] == "Batching"
    assert {r.name for r in sec["results"]} == set(bb.MODES)
    assert "Decode shape" in sec["markdown"] and "article" in sec["markdown"]
    assert sec["charts"]


def test_model_rows_and_ridge_batch():
    from gemmlib.core.hardware import get_hardware

    hw = get_hardware("h200")
    rows = bb.model_rows(1, 4096, 4096, "bf16", [1, 256], hw)
    assert {(r["mode"], r["batch"]) for r in rows} == {(md, b) for md in bb.MODES for b in (1, 256)}
    st1 = next(r for r in rows if r["mode"] == "stacked" and r["batch"] == 1)
    # one token through a bf16 weight: ~1 FLOP per byte, so memory-bound at intensity × bandwidth
    assert st1["intensity"] == pytest.approx(2 * 4096 * 4096 / ((4096 * 4096 + 2 * 4096) * 2))
    assert st1["attainable_tflops"] == pytest.approx(st1["intensity"] * hw.bandwidth / 1e12)
    ridge = hw.ridge_point("bf16")
    b = bb.ridge_batch(1, 4096, 4096, "bf16", ridge)
    assert bb.mode_intensity("stacked", b, 1, 4096, 4096, "bf16") >= ridge
    assert bb.mode_intensity("stacked", b - 1, 1, 4096, 4096, "bf16") < ridge
    assert bb.ridge_batch(1, 8, 8, "bf16", ridge) is None  # a tiny layer never reaches the ridge
    assert batching_charts.model_chart(rows, ridge) is not None
    with pytest.raises(InputError):
        bb.model_rows(1, 4, 4, "bf16", [0])


def _timed(mode, batch, m, k, n, seconds, dtype="bf16"):
    from gemmlib.core.results import BenchResult

    return BenchResult(bench="batching", name=mode, device="cuda", device_name="x", dtype=dtype,
                       shape={"m": m, "k": k, "n": n, "batch": batch},
                       flops=float(bb.mode_flops(mode, batch, m, k, n)),
                       bytes=bb.mode_bytes(mode, batch, m, k, n, dtype), median_s=seconds)


@pytest.mark.parametrize("loop_s,stacked_s,expect", [
    (1.05e-3, 1.0e-3, "Little gain, as expected"),  # compute-bound at M = 1024: above the H200 ridge
    (3.0e-3, 1.0e-3, "A real gain"),
    (1.0e-3, 2.0e-3, "Stacking was slower"),
])
def test_article_verdict_reads_the_numbers(monkeypatch, loop_s, stacked_s, expect):
    from gemmlib.core.hardware import get_hardware

    monkeypatch.setattr(bb, "device_hardware", lambda device: get_hardware("h200"))
    pre = [_timed("loop", 20, 1024, 4096, 4096, loop_s), _timed("stacked", 20, 1024, 4096, 4096, stacked_s)]
    dec = [_timed("loop", 20, 1, 4096, 4096, 2e-4), _timed("stacked", 20, 1, 4096, 4096, 2e-5)]
    v = bb.article_verdict(pre, dec, "cuda")
    assert v["speedup"] == pytest.approx(loop_s / stacked_s)
    assert v["decode_speedup"] == pytest.approx(10.0)
    assert expect in v["verdict"]
    assert "ridge point (206)" in v["verdict"] or expect != "Little gain, as expected"


def test_a_slower_decode_is_said_as_slower_and_flagged(monkeypatch):
    """A noisy CPU run gave stacked decode 0.08× the loop, and the verdict still read "…is 0.08× the loop: one weight
    read serves all 20 requests … up to 20× is possible" in the page's green success box."""
    from gemmlib.core.hardware import get_hardware

    monkeypatch.setattr(bb, "device_hardware", lambda device: get_hardware("h200"))
    pre = [_timed("loop", 20, 1024, 4096, 4096, 3.0e-3), _timed("stacked", 20, 1024, 4096, 4096, 1.0e-3)]
    slow = [_timed("loop", 20, 1, 4096, 4096, 2e-5), _timed("stacked", 20, 1, 4096, 4096, 2.5e-4)]
    v = bb.article_verdict(pre, slow, "cuda")
    assert v["decode_speedup"] == pytest.approx(0.08) and v["slower"]
    assert "At decode (M = 1) stacking was slower here: 0.08× the loop" in v["verdict"] and "rerun" in v["verdict"]
    fast = [_timed("loop", 20, 1, 4096, 4096, 2e-4), _timed("stacked", 20, 1, 4096, 4096, 2e-5)]
    assert not bb.article_verdict(pre, fast, "cuda")["slower"]
    assert bb.article_verdict([_timed("loop", 20, 1024, 4096, 4096, 1e-3),
                               _timed("stacked", 20, 1024, 4096, 4096, 2e-3)], fast, "cuda")["slower"]


def test_report_section_gpu_path_with_stand_in_measurements(monkeypatch, tmp_path):
    # The GPU branch's bookkeeping (bandwidth verdict, tables, article) runs here on stand-in rows.
    seen = []

    def fake_run(cfg, progress=None, deadline=None):
        seen.append(cfg)
        return [_timed(mode, b, cfg.m, cfg.k, cfg.n, 1e-5 * b + 1e-5, cfg.dtype)
                for b in cfg.batches for mode in cfg.modes]

    monkeypatch.setattr(bb, "run_batching", fake_run)
    monkeypatch.setattr(bb, "copy_bandwidth", lambda device: {"bytes_per_s": 4.3e12, "source": "stand-in"})
    monkeypatch.setattr(bb, "device_hardware", lambda device: None)
    sec = bb.report_section("cuda", True, tmp_path)
    assert seen[0].k == seen[0].n == 4096 and seen[0].m == 1 and seen[0].dtype == "bf16"
    assert max(seen[0].batches) == 256
    v = sec["verdict"]
    one = _timed("stacked", 1, 1, 4096, 4096, 2e-5)
    assert v["decode_4096_gbps"] == pytest.approx(one.gbps)
    assert v["decode_4096_share_of_copy"] == pytest.approx(one.gbps * 1e9 / 4.3e12)
    assert "decode_8192_share_of_copy" in v and "article_speedup" in v
    assert "the 70% target" in sec["markdown"] and "The article's example" in sec["markdown"]
    assert "scaled down" not in sec["markdown"]  # the full 20 × 1024×4096 @ 4096×4096 on a GPU
    assert any(c.m == 1024 and c.batches == (20,) for c in seen)


def test_graph_rotation_is_sized_from_the_l2():
    # A CUDA graph replays back to back without the L2 flush do_bench does: the rotated sets must
    # exceed the L2 twice over. H100/H200: 50 MB of L2 (NVIDIA's Hopper architecture whitepaper).
    from gemmlib.measure import safety

    l2 = 50 * 1024**2
    lim = safety.DEFAULT_LIMITS
    for k in (1024, 2048, 4096):
        one = bb._mode_memory("stacked", 1, 1, k, k, 2)  # decode: one bf16 K×N weight per set
        sets, note = bb.rotation_plan(one, True, lim, l2)
        assert sets * one >= 2 * l2 and note == ""
        assert (sets - 1) * one < 2 * l2 or sets == 1  # no more than needed
    tiny = bb._mode_memory("stacked", 1, 1, 64, 64, 2)  # 8 KiB: 64 sets cannot beat the cache
    sets, note = bb.rotation_plan(tiny, True, lim, l2)
    assert sets == bb.GRAPH_MAX_SETS and "flushed the L2 before every call" in note
    # without graphs nothing changes: do_bench flushes (GPU), a CPU rotates up to 4 sets past 64 MiB
    assert bb.rotation_plan(bb._mode_memory("stacked", 1, 1, 1024, 1024, 4), False, lim) == (4, "")
