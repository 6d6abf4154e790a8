"""Serving under expert parallelism: each EP rank's attention takes its own sequences, whole (review s28 G)."""

from __future__ import annotations

import json

import pytest

from gemmlib.cli import main
from gemmlib.core.hardware import get_hardware
from gemmlib.llm.accounting import Workload
from gemmlib.llm.parallel import Parallel
from gemmlib.llm.presets import PRESETS
from gemmlib.llm.serving import Server

ONE = ["estimate", "--preset", "mixtral-8x7b", "--gpu", "h100", "--seq-len", "4096", "--new-tokens", "16",
       "--gpus", "4", "--batch", "1", "--concurrency", "1", "--num-requests", "2", "--engine", "trtllm", "--json"]


def _run(capsys, *extra: str) -> dict:
    assert main([*ONE, *extra]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("par", [["--ep", "4"], ["--tp", "4"]])
def test_one_request_is_served_as_the_phase_times_one_sequence(par, capsys):
    # before: at concurrency 1 under EP 4 the serving simulation spread the one prompt over the 4 EP ranks (a quarter
    # of it on each): TTFT 43.6 ms and TPOT 4.99 ms, while the prefill and decode phases of the same batch of one
    # (whole on one rank since 2311765) took 66.9 ms and 5.27 ms; a request alone is now served as the phases time it
    d = _run(capsys, *par)
    served, phase = d["serving"][0], d["times"]
    assert served["ttft_s"] == pytest.approx(phase["prefill_s"], rel=0.01)
    assert served["tpot_s"] == pytest.approx(phase["time_per_output_token_s"], rel=0.01)


def test_a_decode_step_waits_for_the_rank_with_the_most_sequences():
    # before: 5 decode sequences over EP 4 were timed as 1.25 sequences on each rank, so the step took 10.95 ms, less
    # than 4 sequences' 10.96 ms; the busiest rank holds 2 of them, whole, as with 6, 7 or 8 (only the routed experts,
    # which meet every token over the EP ranks, grow with them)
    cfg = PRESETS["mixtral-8x7b"]
    model = Server(cfg, Workload(batch=1, seq_len=4096, new_tokens=16), get_hardware("h100"), Parallel(ep=4),
                   overhead_s=0.0).model
    steps = [model.step(d, d, d, 4096.0, []) for d in range(1, 10)]
    assert steps == sorted(steps)
    assert max(steps[4:8]) == pytest.approx(min(steps[4:8]), rel=0.005)
    assert steps[4] > steps[3] * 1.01  # the fifth sequence is a second one on a rank
