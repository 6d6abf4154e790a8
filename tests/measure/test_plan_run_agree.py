"""The plan a run is admitted on and the run itself count the same thing (brief H5 item 2): a tile larger than the
matrix, a loop past its cap, a CUDA-graph sweep's buffer sets, the run's own memory check."""

from __future__ import annotations

import pytest

from gemmlib.measure import batching as bb
from gemmlib.measure import plan, safety
from gemmlib.measure import tiling as bt


@pytest.mark.parametrize("impls", [("numpy_blocked",), ("python_tiled",), ("python_tiled", "numpy_blocked", "torch")])
def test_a_tile_larger_than_the_matrix_is_planned_as_the_run_cuts_it(impls):
    """``bench tiling --size 64 --tiles 99999`` was refused with "needs about 149 GiB" (the plan counted a 99999²
    numpy block) though the loops cut every tile to the 64² matrix: it now plans exactly as a tile of 64."""
    lim = safety.limits()
    huge = plan.admit(bt.SPEC, bt.TilingConfig(device="cpu", size=64, tiles=(99999,), impls=impls), lim)
    whole = plan.admit(bt.SPEC, bt.TilingConfig(device="cpu", size=64, tiles=(64,), impls=impls), lim)
    assert huge.bytes == whole.bytes < 1024**2


def test_the_tiling_command_runs_a_tile_larger_than_the_matrix(run_cli):
    rc, out, err = run_cli(["bench", "tiling", "--size", "64", "--tiles", "99999", "--impls", "numpy_blocked",
                            "--min-run-time", "0.05"])
    assert rc == 0, err
    assert "GiB" not in err and "99,999" in out


@pytest.mark.parametrize("mnk", [(64, 64, 64), (4096, 1, 64), (1, 2048, 8), (300, 7, 900)])
def test_a_tiling_run_admitted_at_the_memory_cap_is_not_refused_by_its_own_count(monkeypatch, mnk):
    """The run checked a memory count of its own (inputs, 3 float64 outputs, the reference's sources): above the
    plan's for a tall, thin problem, so a run the page said fits was refused once it started."""
    m, n, k = mnk
    cfg = bt.TilingConfig(device="cpu", m=m, n=n, k=k, tiles=(32,), impls=("torch",), min_run_time=0.01)
    cap = 0
    while True:  # a cap the plan fills exactly (a lower cap rotates fewer input sets: planned again until it holds)
        need = int(plan.admit(bt.SPEC, cfg, safety.limits()).bytes)
        if need == cap:
            break
        cap = need
        monkeypatch.setenv("GEMM_MAX_BYTES", str(cap))
    rows = bt.run_tiling(cfg)
    assert [r.name for r in rows] == ["torch"] and rows[0].supported


def test_a_loop_past_its_cap_holds_nothing_in_the_plan_nor_in_the_run(monkeypatch):
    """A loop-only sweep past MAX_LOOP_CALLS requests is a row that says why (the plan counts no buffers for it);
    the run refused it as a whole for the buffers of that loop, which it never allocates."""
    cfg = bb.BatchingConfig(device="cpu", m=1, k=64, n=64, dtype="fp32", batches=(bb.MAX_LOOP_CALLS + 1,),
                            modes=("loop",), min_run_time=0.01)
    monkeypatch.setenv("GEMM_MAX_BYTES", str(1_000_000))  # below the loop's 2.6 MB of buffers
    plan.admit(bb.SPEC, cfg, safety.limits())
    rows = bb.run_batching(cfg)
    assert len(rows) == 1 and not rows[0].supported and str(bb.MAX_LOOP_CALLS) in str(rows[0].reason)


def test_a_cuda_graph_sweep_plans_the_buffer_sets_it_rotates():
    """With CUDA graphs the run rotates up to GRAPH_MAX_SETS sets (past twice the L2); the plan counted 4."""
    lim = safety.limits()
    kw = dict(device="cuda", m=1, k=1024, n=1024, dtype="bf16", batches=(1,), modes=("stacked",))
    plain = bb.plan_batching(bb.BatchingConfig(**kw), lim)
    graph = bb.plan_batching(bb.BatchingConfig(**kw, cuda_graph=True), lim)
    one_set = bb._mode_memory("stacked", 1, 1, 1024, 1024, 2)
    sets = bb.rotation_plan(one_set, True, lim)[0]
    assert sets > 4
    assert graph.bytes - plain.bytes == (sets - 4) * (1024 * 1024 + 1024) * 2  # each more set: its weight, its input
