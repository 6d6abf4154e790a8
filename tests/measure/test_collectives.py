"""Collectives on gloo with 2 and 3 CPU processes: every collective's output against numpy, the
bus-bandwidth arithmetic against nccl-tests' formulas (written out here), the size rules, the caps,
the saved interconnect and the command line."""

import json

import numpy as np
import pytest

from gemmlib.core import interconnect
from gemmlib.core.errors import InputError
from gemmlib.measure import collectives as cl
from gemmlib.measure import launch, safety

OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast")
KEYS = {"op", "bytes", "nproc", "backend", "time_s", "algbw_gbps", "busbw_gbps", "correct"}


pytestmark = pytest.mark.usefixtures("bench_env")


def nccl_tests_factor(op, n):
    """doc/PERFORMANCE.md: allreduce 2(n-1)/n; reducescatter, allgather, alltoall (n-1)/n; broadcast 1."""
    return {"all_reduce": 2 * (n - 1) / n, "reduce_scatter": (n - 1) / n, "all_gather": (n - 1) / n,
            "all_to_all": (n - 1) / n, "broadcast": 1.0}[op]




# ----- a worker checking each collective's buffers against numpy (module level: ranks import it)
def _numpy_check(ctx, cfg, report):
    import torch
    import torch.distributed as dist
    n, rank = ctx.world, ctx.rank
    out = {}
    for op, count in cfg:
        case = cl._case(op, count, n, rank, torch.float32, "fp32", "cpu")
        case.reset()
        before = case.check()  # nothing ran yet: the check must say so
        inp = None if case.inp is None else case.inp.numpy().copy()
        inputs = [None] * n
        dist.all_gather_object(inputs, inp)
        case.run()
        got = case.out.numpy().copy()
        if op == "all_reduce":
            want = sum(inputs)
        elif op == "broadcast":
            want = inputs[0]
        elif op == "all_gather":
            want = np.concatenate(inputs)
        elif op == "reduce_scatter":
            want = sum(np.split(x, n)[rank] for x in inputs)
        else:  # all_to_all: chunk `rank` of every rank, in rank order
            want = np.concatenate([np.split(x, n)[rank] for x in inputs])
        ok = bool(np.array_equal(got, want))
        root_already_right = op == "broadcast" and rank == 0
        out[(op, count)] = {"before": ctx.all_true(not before or root_already_right), "numpy": ctx.all_true(ok),
                            "check": ctx.all_true(case.check()),
                            "inputs_differ": all(not np.array_equal(inputs[0], x) for x in inputs[1:] if x is not None)}
    return out


@pytest.mark.parametrize("n", [2, 3])
def test_every_collective_matches_numpy(n):
    cases = [(op, cl.element_count(op, size, n, 4)) for op in OPS for size in (4, 4100, 8 * 1021 * n)]
    res = launch.run_ranks(_numpy_check, cases, nproc=n, backend="gloo", timeout_s=60)
    for key, r in res.items():
        assert r["numpy"], f"{key}: output differs from numpy"
        assert r["check"], f"{key}: the benchmark's own check disagrees with numpy"
        assert r["before"], f"{key}: the check passed before the collective ran"
        if key[0] != "broadcast":
            assert r["inputs_differ"], f"{key}: ranks hold the same input; the test would prove little"


def test_sizes_follow_nccl_tests():
    # nccl-tests' size: all-gather the whole output, reduce-scatter the whole input, counts split evenly
    assert cl.element_count("all_reduce", 8, 3, 4) == 2
    assert cl.element_count("broadcast", 2, 3, 4) == 1
    assert cl.element_count("all_gather", 8, 3, 4) == 3  # 12 bytes: one element per rank at the least
    assert cl.element_count("reduce_scatter", 1024, 3, 4) == 255
    assert cl.element_count("all_to_all", 1 << 20, 8, 2) == 1 << 19
    assert cl.size_range(8, 64) == (8, 16, 32, 64)
    assert cl.size_range(8, 1 << 30)[-1] == 1 << 30 and len(cl.size_range(8, 1 << 30)) == 28
    lim = safety.DEFAULT_LIMITS
    assert cl.default_sizes("cpu", 2, lim) == cl.size_range(8, 4 << 20)
    assert cl.default_sizes("cuda", 8, lim) == cl.size_range(8, 1 << 30)
    small = safety.CLASSROOM_LIMITS  # 512 MiB: 4 buffers per rank, shared by the CPU ranks
    assert cl.size_cap("cpu", 2, small) == 64 << 20 and cl.size_cap("cuda", 2, small) == 128 << 20
    with pytest.raises(InputError, match="past this server's limit"):
        cl.check_sizes((8, 256 << 20), "cpu", 2, small)


@pytest.mark.parametrize("n", [2, 3])
def test_sweep_results_and_busbw_arithmetic(n):
    cfg = cl.CollectiveConfig(sizes=(8, 1000, 1 << 20), iters=3, warmup=1)
    seen = []
    run = cl.run_collectives(cfg, nproc=n, backend="gloo", timeout_s=60, progress=lambda f, t: seen.append(f))
    assert run.backend == "gloo" and run.kind == "cpu" and run.nproc == n and not run.is_interconnect
    assert "not a GPU interconnect" in run.note
    rows = cl.rows_for_json(run)
    assert len(rows) == len(OPS) * 3 and seen[-1] == 1.0
    for r in rows:
        assert KEYS <= set(r)
        assert r["correct"] is True and r["nproc"] == n and r["backend"] == "gloo"
        assert r["bytes"] == r["count"] * 4
        if r["op"] in ("all_gather", "reduce_scatter", "all_to_all"):
            assert r["count"] % n == 0
        assert r["time_s"] > 0 and r["p20_s"] <= r["time_s"] <= r["p80_s"]
        alg = r["bytes"] / r["time_s"] / 1e9
        assert r["algbw_gbps"] == pytest.approx(alg, rel=1e-12)
        assert r["busbw_gbps"] == pytest.approx(alg * nccl_tests_factor(r["op"], n), rel=1e-12)
    # the sweep is kept as a measured interconnect: the best all-reduce busbw, the smallest one's time
    ar = [r for r in rows if r["op"] == "all_reduce"]
    saved = interconnect.find("gloo", run.device_name, n)
    assert saved is not None and run.saved is not None
    assert saved.busbw == pytest.approx(max(r["busbw_gbps"] for r in ar) * 1e9)
    assert saved.latency_s == pytest.approx(min(ar, key=lambda r: r["bytes"])["time_s"])
    link = saved.link()
    assert link.kind == "gloo" and link.name.endswith("(measured interconnect; not a GPU link)")
    assert interconnect.find_link(link.name) == link
    assert interconnect.interconnect_path().exists()
    # as BenchResult rows for the report
    br = run.results()
    assert {b.name for b in br} == set(OPS) and all(b.bench == "collective" and b.median_s for b in br)


def test_config_checks():
    with pytest.raises(InputError, match="unknown collective"):
        cl.CollectiveConfig(ops=("all_reduce", "gossip"))
    with pytest.raises(InputError, match="fp32, bf16, fp16"):
        cl.CollectiveConfig(dtype="int8")
    with pytest.raises(InputError, match="iters"):
        cl.CollectiveConfig(iters=0)
    assert cl.CollectiveConfig(ops=("All-Reduce",)).ops == ("all_reduce",)


@pytest.mark.parametrize("argv,match", [
    (["--nproc", "99", "--backend", "gloo"], "more ranks than this machine may start"),
    (["--nproc", "1"], "at least 2"),
    (["--nproc", "2", "--max-bytes", "64G"], "past this server's limit"),
    (["--nproc", "2", "--max-bytes", "lots"], "is not a size"),
    (["--nproc", "2", "--ops", "gossip"], "unknown collective"),
    (["--nproc", "2", "--min-bytes", "1M", "--max-bytes", "1K"], "1 ≤ min ≤ max"),
])
def test_cli_bad_input_exits_2_with_one_line(argv, match, run_cli):
    rc, out, err = run_cli(["bench", "collective", *argv])
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and match in err


def test_cli_json(run_cli):
    rc, out, err = run_cli(["bench", "collective", "--nproc", "2", "--backend", "gloo", "--ops", "all_reduce,broadcast",
                         "--max-bytes", "64", "--factor", "8", "--iters", "2", "--json"])
    assert rc == 0, err
    d = json.loads(out)
    assert d["backend"] == "gloo" and d["interconnect"] is False and d["nproc"] == 2
    assert [(r["op"], r["bytes"]) for r in d["results"]] == [("all_reduce", 8), ("all_reduce", 64),
                                                           ("broadcast", 8), ("broadcast", 64)]
    assert all(KEYS <= set(r) and r["correct"] for r in d["results"])
    # a sweep of small messages measures latency, not bandwidth: it is not kept as an interconnect
    assert d["saved"] is None and "not kept" in d["not_saved"] and interconnect.measured_links() == []
    assert "[100%] broadcast 64 B" in err  # progress on stderr


def test_under_torchrun_the_same_command_runs_as_one_rank(tmp_path):
    """What the README's multi-node command does, on one node: torchrun starts the ranks, rank 0 prints."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "GEMM_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(root)}
    proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                           "-m", "gemmlib", "bench", "collective", "--ops", "all_reduce,all_gather", "--max-bytes",
                           "64", "--factor", "8", "--iters", "2", "--json"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    d = json.loads(proc.stdout)  # one JSON object: only rank 0 printed
    assert d["nproc"] == 2 and d["backend"] == "gloo"
    assert [(r["op"], r["bytes"]) for r in d["results"]] == [("all_reduce", 8), ("all_reduce", 64),
                                                           ("all_gather", 8), ("all_gather", 64)]
    assert all(r["correct"] for r in d["results"])


def test_each_row_reaches_the_caller_as_soon_as_it_is_measured():
    # report.keep in the ranks -> on_row in the caller, each row before the next size's progress: a
    # report killed in the middle of a sweep keeps the sizes already measured.
    events = []
    run = cl.run_collectives(cl.CollectiveConfig(ops=("all_reduce", "broadcast"), sizes=(8, 64), iters=2, warmup=0),
                             nproc=2, backend="gloo", timeout_s=60, save=False,
                             on_row=lambda r: events.append(("row", r)),
                             progress=lambda f, t: events.append(("progress", str(t))))
    rows = [r for kind, r in events if kind == "row"]
    assert rows == run.rows and all(r["correct"] for r in rows)
    kinds = [kind for kind, _ in events]
    assert kinds == ["row", "progress"] * 4  # interleaved: each row arrived while the sweep went on


def test_the_plan_counts_the_launch_and_every_sample():
    """The estimate beside the Multi-GPU page's button: the ranks' start, then each collective's samples at
    each size (warm-up and timed), within the run's own time budget."""
    from gemmlib.measure import tp as tpm

    lim = safety.limits()

    def secs(sizes, ops=("all_reduce",), budget=240.0):
        cfg = cl.CollectiveConfig(ops=ops, sizes=sizes, iters=10, time_budget_s=budget)
        return cl.plan_collectives(cl.CollectiveLaunch(cfg, nproc=2, backend="gloo"), lim).seconds

    one = secs((8,))
    assert one == pytest.approx(launch.LAUNCH_S + 12 * (cl.SAMPLE_S["cpu"] + 8 / cl.SAMPLE_BYTES_PER_S["cpu"]))
    assert secs((8,), ops=("all_reduce", "broadcast")) - launch.LAUNCH_S == pytest.approx(2 * (one - launch.LAUNCH_S))
    big = secs((8, 4 * 2**20))
    assert big - one == pytest.approx(12 * (cl.SAMPLE_S["cpu"] + 4 * 2**20 / cl.SAMPLE_BYTES_PER_S["cpu"]))
    assert secs(cl.size_range(8, 4 * 2**20), budget=0.5) == pytest.approx(launch.LAUNCH_S + 0.5)  # rows past it skipped
    layer = tpm.TPLaunch(tpm.TPConfig(model=tpm.model_for("llama-3-8b", 16), seq_len=128, dtype="fp32"),
                         ranks=(2,), backend="gloo")
    assert tpm.plan_tp(layer, lim).seconds == pytest.approx(launch.LAUNCH_S)  # one launch per rank count
