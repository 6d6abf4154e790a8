"""The serving simulation's host time per engine step is part of every TPOT it gives: each answer says it."""

from __future__ import annotations

import json

import pytest

from gemmlib.cli import main
from gemmlib.core import format as fmt
from gemmlib.core.hardware import get_hardware
from gemmlib.llm.accounting import Workload
from gemmlib.llm.parallel import Parallel
from gemmlib.llm.presets import from_name
from gemmlib.llm.serving import Engine, serving

ARGV = ["estimate", "--preset", "llama-3.1-8b", "--gpu", "h100", "--serve", "--input-len", "1000", "--output-len",
        "1000", "--concurrency", "1"]


def _json(capsys, *extra) -> dict:
    assert main([*ARGV, *extra, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_json_says_the_host_time_it_added_and_it_is_the_tpot_gap(capsys):
    # before: one request on an H100 took 8.97 ms per token under vllm and 5.97 ms under trtllm, and neither the text,
    # the JSON nor the page said that 3 ms of it was a host time per step (gemmlib.llm.efficiency's
    # SERVING_STEP_OVERHEAD_S: WukLab's bound on SGLang's scheduling overhead per iteration) that TensorRT-LLM's
    # overlap scheduler hides
    v, t = _json(capsys), _json(capsys, "--engine", "trtllm")
    sv, st = v["serving_summary"], t["serving_summary"]
    assert sv["step_overhead_s"] == 3e-3 and "WukLab" in sv["step_overhead_source"]
    assert st["step_overhead_s"] == 0 and "overlap scheduler" in st["step_overhead_source"]
    # one sequence decodes the same step under both engines: the TPOTs differ by that host time alone
    assert v["serving"][0]["tpot_s"] - t["serving"][0]["tpot_s"] == pytest.approx(3e-3, rel=1e-3)


def test_the_text_says_it_too(capsys):
    assert main(ARGV) == 0
    assert "host time per engine step (scheduling, input preparation, sampling; no kernel's): 3 ms (not hidden" \
        in capsys.readouterr().out
    assert main([*ARGV, "--engine", "trtllm"]) == 0
    assert "host time per engine step (scheduling, input preparation, sampling; no kernel's): 0 (none" \
        in capsys.readouterr().out


def test_an_overhead_given_to_the_library_is_said_as_given():
    sv = serving(from_name("llama-3-8b"), Workload(batch=1, seq_len=128, new_tokens=8), get_hardware("h100"),
                 Parallel(), concurrency=1, overhead_s=1e-3, engine=Engine("vllm"))
    assert (sv.step_overhead_s, sv.step_overhead_source) == (1e-3, "given")


def test_the_text_tables_memory_column_holds_the_memory(capsys):
    # before: the text's "memory" column was empty on every row that fits (the JSON's memory_bytes said nowhere)
    mem = _json(capsys)["serving"][0]["memory_bytes"]
    assert main(ARGV) == 0
    out = capsys.readouterr().out.splitlines()
    head = next(i for i, line in enumerate(out) if line.startswith("concurrency"))
    assert "memory per GPU" in out[head] and out[head + 2].split()[-1] == "GiB"
    assert out[head + 2].split()[-2:] == fmt.nbytes(mem).split()
    assert main(["estimate", "--preset", "llama-3.1-405b", "--gpu", "h100", "--serve", "--new-tokens", "8"]) == 0
    assert ": does not fit" in capsys.readouterr().out
