"""Megatron's block recomputation (``--recompute-method block --recompute-num-layers N``): the first N layers of each
model chunk rerun their forward, the rest keep their activations. Each figure is checked against the same step with
full recomputation of every layer and with none: time, FLOPs and memory scale with the share of layers rerun."""

from __future__ import annotations

import json

import pytest

from gemmlib.cli import main
from gemmlib.core.errors import InputError
from gemmlib.core.hardware import get_hardware
from gemmlib.llm.accounting import Workload
from gemmlib.llm.memory import recomputed_share, training_activation_bytes
from gemmlib.llm.parallel import Parallel
from gemmlib.llm.presets import from_name
from gemmlib.llm.training import Training, train

H100 = get_hardware("H100 SXM")
LLAMA = from_name("llama-3-8b")  # 32 layers
WL = Workload(batch=16, seq_len=2048, attention="fused", causal=True, lm_head="all")


def _run(par: Parallel, recompute: str = "full", n: int = 0):
    return train(LLAMA, WL, H100, par, Training(tokens=1e9, micro_batch=1, recompute=recompute, recompute_layers=n))


@pytest.mark.parametrize("par, chunk", [(Parallel(dp=8), 32), (Parallel(pp=2, dp=4), 16),
                                        (Parallel(pp=2, dp=4, virtual_stages=2), 8)])
def test_the_first_n_layers_of_each_chunk_rerun(par, chunk):
    none, full = _run(par, "none"), _run(par, "full")
    for n in (1, 5, chunk, chunk + 3):
        part = _run(par, "full", n)
        share = min(n, chunk) / chunk
        assert recomputed_share(LLAMA, par, n) == pytest.approx(share)
        assert part.recompute_s == pytest.approx(share * full.recompute_s)
        assert part.compute_s == pytest.approx(none.compute_s + share * (full.compute_s - none.compute_s))
        # the model's FLOPs: the first n layers of every one of its pp × V chunks
        chunks = par.pp * par.virtual_stages
        assert part.flops["recompute"] == pytest.approx(min(1.0, chunks * min(n, chunk) / 32) * full.flops["recompute"],
                                                        rel=1e-9)
        assert part.flops["model"] == full.flops["model"] == none.flops["model"]
        # memory, stage by stage: the rerun layers keep only their input, the others everything
        kw = dict(micro_batch=1, microbatches=part.microbatches)
        a_none = training_activation_bytes(LLAMA, part.workload, par, recompute="none", **kw)
        a_full = training_activation_bytes(LLAMA, part.workload, par, recompute="full", **kw)
        a_part = training_activation_bytes(LLAMA, part.workload, par, recompute="full", recompute_layers=n, **kw)
        for stage in ("first", "last"):
            assert a_part[stage] == pytest.approx(a_full[stage] + (1 - share) * (a_none[stage] - a_full[stage]),
                                                  rel=1e-9)
        assert part.memory.activation_bytes in (pytest.approx(a_part["first"]), pytest.approx(a_part["last"]))
    assert _run(par, "full", 0).step_time_s == pytest.approx(full.step_time_s)


def test_recompute_layers_needs_full_recomputation_and_a_count():
    for bad in (dict(recompute="none", recompute_layers=3), dict(recompute="selective", recompute_layers=3),
                dict(recompute="full", recompute_layers=-1), dict(recompute="full", recompute_layers=2.5),
                dict(recompute="full", recompute_layers=True)):
        with pytest.raises(InputError):
            Training(tokens=1e9, **bad)


def test_the_cli_takes_recompute_layers(capsys):
    base = ["estimate", "--preset", "llama-3-8b", "--train", "--train-tokens", "1e12", "--gpus", "8", "--dp", "8",
            "--batch", "16", "--seq-len", "2048", "--recompute", "full"]
    assert main(base + ["--recompute-layers", "5", "--json"]) == 0
    t = json.loads(capsys.readouterr().out)["train"]
    assert (t["recompute"], t["recompute_layers"]) == ("full", 5)
    assert main(base + ["--json"]) == 0
    every = json.loads(capsys.readouterr().out)["train"]
    assert every["recompute_layers"] == 0
    assert t["recompute_flops"] == pytest.approx(5 / 32 * every["recompute_flops"], rel=1e-9)
    assert main(base + ["--recompute-layers", "5"]) == 0
    assert "recompute full (the first 5 layers of each chunk)" in capsys.readouterr().out
    assert main(base[:-2] + ["--recompute-layers", "5"]) == 2
    assert "they need recompute full" in capsys.readouterr().err
    # past a chunk's layers Megatron's block method reruns them all: said so, not "the first 40 layers" of 32
    assert main(base + ["--recompute-layers", "40", "--json"]) == 0
    past = json.loads(capsys.readouterr().out)["train"]
    assert past["recompute_flops"] == every["recompute_flops"] and past["layers_per_chunk"] == 32
    assert main(base + ["--recompute-layers", "40"]) == 0
    assert "recompute full (--recompute-layers 40: every layer, each chunk has 32)" in capsys.readouterr().out
