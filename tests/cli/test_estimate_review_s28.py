"""`estimate` as an engineer sizing a model reads it: no flag accepted and ignored, no line that contradicts another."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gemmlib.cli import main

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "configs"
AWQ = str(CONFIGS / "zephyr-7b-alpha-awq.json")
SMALL = ["estimate", "--preset", "llama-3.2-1b", "--seq-len", "64", "--new-tokens", "8"]


@pytest.mark.parametrize("one", [["--concurrency", "4"], ["--request-rate", "5"]])
@pytest.mark.parametrize("target", [["--tpot-target-ms", "1000"], ["--ttft-target-ms", "1000"]])
def test_a_target_with_one_serving_point_is_refused(one, target, capsys):
    # before: "--concurrency 4 --tpot-target-ms 10" printed the point at 9.02 ms TPOT and under it "best concurrency
    # with TPOT <= 10 ms: none" (JSON best: null): the target was never searched, the point met it, the line said none
    assert main([*SMALL, "--num-requests", "8", *one, *target]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert f"{target[0]} searches the concurrencies" in err and one[0] in err


def test_a_target_alone_still_searches_and_a_point_alone_still_runs(capsys):
    assert main([*SMALL, "--tpot-target-ms", "1000", "--json"]) == 0
    sv = json.loads(capsys.readouterr().out)["serving_summary"]
    assert sv["best"] is not None and sv["best"]["tpot_s"] <= 1.0
    assert main([*SMALL, "--concurrency", "2", "--num-requests", "4", "--json"]) == 0
    assert [p["concurrency"] for p in json.loads(capsys.readouterr().out)["serving"]] == [2]


TRAIN = ["estimate", "--preset", "llama-3.2-1b", "--train", "--batch", "64", "--seq-len", "1024", "--gpus", "8",
         "--dp", "8", "--gpu", "h100"]


def _train(capsys, tokens: str) -> tuple[str, dict]:
    assert main([*TRAIN, "--train-tokens", tokens]) == 0
    text = capsys.readouterr().out
    assert main([*TRAIN, "--train-tokens", tokens, "--json"]) == 0
    return text, json.loads(capsys.readouterr().out)["train"]


def _fmt_ms(s: float) -> str:
    from gemmlib.core import format as fmt

    return fmt.duration(s)


def test_the_step_line_gives_the_data_parallel_time_it_adds_not_the_hidden_total(capsys):
    # before: "communication 15.2 s (data parallel 91 ms)" while the by-group line said "dp 4.55 ms of 91 ms": the
    # parenthesis gave the whole DP time as a part of the exposed communication, of which it was 4.55 ms
    text, t = _train(capsys, "1e9")
    dp = t["exposed_by_group"]["dp"]
    assert 0 < dp["exposed_s"] < dp["total_s"]  # some of it hidden behind the backward
    step = next(line for line in text.splitlines() if line.startswith("  step time"))
    assert f"(data parallel {_fmt_ms(dp['exposed_s'])} of its {_fmt_ms(dp['total_s'])}, the rest hidden)" in step
    assert f"(data parallel {_fmt_ms(dp['total_s'])})" not in step


def test_a_long_run_is_said_in_days_and_years_not_seconds_and_exponents(capsys):
    # before: "run of 15 T tokens: 3,576,279 steps, 219,128,329 s (2.54e+03 days), 3.9 M GPU-hours"
    text, t = _train(capsys, "3e13")
    run = next(line for line in text.splitlines() if line.startswith("  run of"))
    days = t["run_time_s"] / 86400
    assert days > 365.25
    assert f"{days:,.0f} days ({days / 365.25:.3g} years) on 8 GPUs" in run
    assert "e+" not in run.split("exact")[0] and f"{t['run_time_s']:,.0f} s" not in run
    text, t = _train(capsys, "3e11")
    run = next(line for line in text.splitlines() if line.startswith("  run of"))
    days = t["run_time_s"] / 86400
    assert 2 < days < 100 and f", {days:.3g} days on 8 GPUs" in run
    text, t = _train(capsys, "1e9")
    run = next(line for line in text.splitlines() if line.startswith("  run of"))
    assert t["run_time_s"] < 7200 and f", {_fmt_ms(t['run_time_s'])} on 8 GPUs" in run


def test_a_weight_dtype_an_awq_checkpoint_does_not_use_is_refused_and_its_fp16_is_said(capsys):
    # before: --weight-dtype fp8 (or fp32) on an AWQ config printed "other tensors fp8" and changed no byte: AWQ stores
    # its embedding, LM head and norms in fp16 whatever the flag; without the flag a bf16 config said "other tensors
    # bf16" of the same fp16 tensors
    base = ["estimate", "--config", AWQ, "--seq-len", "64", "--new-tokens", "4"]
    for wd in ("fp8", "fp32", "bf16"):
        assert main([*base, "--weight-dtype", wd]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and f"--weight-dtype {wd} does not apply" in err and "in fp16" in err
    assert main([*base, "--weight-dtype", "fp16", "--json"]) == 0
    assert "other tensors fp16" in json.loads(capsys.readouterr().out)["read"]["weight_dtype_source"]


def test_an_awq_config_in_bf16_says_its_other_tensors_are_fp16(tmp_path, capsys):
    cfg = json.loads(Path(AWQ).read_text())
    cfg["torch_dtype"] = "bfloat16"
    f = tmp_path / "config.json"
    f.write_text(json.dumps(cfg))
    assert main(["estimate", "--config", str(f), "--seq-len", "64", "--new-tokens", "4"]) == 0
    work = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("workload"))
    assert "other tensors fp16" in work and "other tensors bf16" not in work


def test_every_model_flag_says_what_it_is(capsys):
    # before: --layers, --norm, --norms-per-layer, --qkv-bias, --o-bias and --mlp-bias had no help at all
    with pytest.raises(SystemExit):
        main(["estimate", "--help"])
    out = capsys.readouterr().out
    assert "--layers LAYERS       decoder layers" in out
    for flag, words in (("--qkv-bias", "biases on q, k and v"), ("--o-bias", "o_proj"), ("--mlp-bias", "MLP")):
        line = next(x for x in out.splitlines() if x.strip().startswith(flag + " "))
        assert words in line, line
    for flag in ("--norm {", "--norms-per-layer {"):
        i = next(i for i, x in enumerate(out.splitlines()) if x.strip().startswith(flag))
        assert "default" in " ".join(out.splitlines()[i:i + 5])


MOE = ["estimate", "--layers", "2", "--hidden", "512", "--ffn", "1024", "--heads", "8", "--vocab", "1000",
       "--experts", "8", "--experts-per-token", "2", "--seq-len", "256", "--new-tokens", "4", "--gpus", "4", "--ep", "4",
       "--json"]


def _phases(capsys, batch: int) -> dict:
    assert main([*MOE, "--batch", str(batch)]) == 0
    d = json.loads(capsys.readouterr().out)
    return {ph: {o["name"]: o for o in d[ph]["ops"]} for ph in ("prefill", "decode")} | {"per_gpu": d["per_gpu"]}


def test_a_sequence_is_not_split_over_the_expert_parallel_ranks(capsys):
    # before: one sequence over EP 4 (its ranks data-parallel for attention, each taking its own sequences) was timed
    # as a quarter of a sequence on each rank — q_proj at 64 of its 256 rows, a quarter of the attention runs — so the
    # prefill (DeepSeek-V3, EP 16, batch 1: TTFT 77 ms, now 309 ms) was as if the batch split evenly, while the
    # per-GPU memory already held the whole sequence's KV cache on one rank
    one, four, five = _phases(capsys, 1), _phases(capsys, 4), _phases(capsys, 5)
    for ph in ("prefill", "decode"):
        for name in ("q_proj", "attn_scores", "o_proj"):
            a, b = one[ph][name], four[ph][name]  # batch 4: one sequence on each rank, as batch 1 on the busiest
            assert (a["m"], a["count"], a["flops"]) == (b["m"], b["count"], b["flops"]), (ph, name)
        assert five[ph]["q_proj"]["flops"] == 2 * four[ph]["q_proj"]["flops"]  # 5 over 4: two on the busiest
    assert one["prefill"]["q_proj"]["m"] == 256 and five["prefill"]["q_proj"]["m"] == 512
    assert four["prefill"]["q_proj"]["m"] == 256  # an even split as before
    # the routed experts still meet only the tokens there are
    assert one["prefill"]["gate_proj"]["flops"] * 4 == four["prefill"]["gate_proj"]["flops"]
    assert one["per_gpu"]["kv_cache_bytes"] == four["per_gpu"]["kv_cache_bytes"]


def test_a_replicated_model_past_one_gpu_is_not_blamed_on_the_activations(capsys):
    # before: Llama 3 70B with DP 2 on two H100s (each replica 131 GiB of weights on one 80 GB GPU) said "weights and
    # KV cache fit, but not with the activations and workspace beside them": the weights alone do not fit the GPU
    base = ["estimate", "--preset", "llama-3-70b", "--seq-len", "64", "--new-tokens", "4", "--gpu", "h100"]
    assert main([*base, "--dp", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    mem = next(ln for ln in lines if ln.startswith("memory "))
    assert "not with the activations" not in mem
    assert "fits the 2 GPUs' memory in all, but not as this layout places it: one GPU holds 131 GiB" in mem
    assert "does NOT fit" in next(ln for ln in lines if ln.startswith("per GPU "))
    # one 8B model at a batch whose activations are what overflow keeps its words
    assert main(["estimate", "--preset", "llama-3-8b", "--batch", "600"]) == 0
    assert "fit, but not with the activations and workspace beside them" in capsys.readouterr().out


def test_a_warning_stands_under_the_answer_not_under_the_rules_of_thumb(capsys):
    # before: "rules of thumb vs the exact prefill count" then "warning   9,002 tokens per sequence is past ...": the
    # warning about the estimate read as one of the rules; the first counting switch overran the label column by 15
    # characters, so its numbers stood apart from the three below; "parallel" followed the rules without a break
    assert main(["estimate", "--preset", "llama-3-8b", "--seq-len", "9000", "--new-tokens", "2", "--tp", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = {k: next(i for i, ln in enumerate(lines) if ln.startswith(k))
          for k in ("time ", "warning ", "counting switches", "rules of thumb", "parallel ")}
    assert at["time "] < at["warning "] < at["counting switches"] < at["rules of thumb"]
    assert "max_position_embeddings" in lines[at["warning "]]
    assert lines[at["counting switches"]].endswith("(prefill / decode FLOPs, the whole job)")
    rows = lines[at["counting switches"] + 1:at["counting switches"] + 5]
    assert len({r.index(" / ") for r in rows}) == 1, rows  # one column of prefill / decode
    assert lines[at["parallel "] - 1] == ""


@pytest.mark.parametrize("flags, says", [
    (["--preset", "llama-3-8b", "--microbatches", "4"], "--microbatches splits an inference phase"),
    (["--preset", "llama-3-8b", "--pp", "2", "--microbatches", "4", "--train", "--train-tokens", "1e9", "--batch", "8"],
     "a training step's micro-batches are --batch / (--dp x --micro-batch)"),
    (["--preset", "mixtral-8x7b", "--ep", "2", "--ep-fp8-dispatch"], "this run has EP 2 and bf16 activations"),
    (["--preset", "llama-3-8b", "--sequence-parallel"], "--sequence-parallel splits"),
    (["--preset", "llama-3-8b", "--sequence-parallel", "--cp", "2", "--train", "--train-tokens", "1e9", "--batch", "8"],
     "it needs --tp 2 or more"),
    (["--preset", "mixtral-8x7b", "--ep-fp8-dispatch", "--act-dtype", "fp8", "--weight-dtype", "fp8"],
     "this run has EP 1 and fp8 activations"),
])
def test_a_layout_flag_that_changes_nothing_is_refused(flags, says, capsys):
    # before: --microbatches 4 with one pipeline stage (or in a training run, whose micro-batches --micro-batch sets)
    # and --ep-fp8-dispatch in a 16-bit run or without EP, --sequence-parallel without TP printed the very output of
    # the run without them, exit 0
    assert main(["estimate", "--seq-len", "64", "--new-tokens", "2", *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and says in err


def test_the_layout_flags_where_they_apply_still_change_the_answer(capsys):
    base = ["estimate", "--seq-len", "64", "--new-tokens", "2", "--json"]
    pp = [*base, "--preset", "llama-3-8b", "--pp", "2", "--batch", "8"]
    assert main(pp) == 0
    two = json.loads(capsys.readouterr().out)["prefill"]["microbatches"]
    assert main([*pp, "--microbatches", "4"]) == 0
    assert (two, json.loads(capsys.readouterr().out)["prefill"]["microbatches"]) == (2, 4)
    ep = [*base, "--preset", "mixtral-8x7b", "--ep", "2", "--act-dtype", "fp8", "--weight-dtype", "fp8"]
    sizes = []
    for extra in ([], ["--ep-fp8-dispatch"]):
        assert main([*ep, *extra]) == 0
        sizes.append(json.loads(capsys.readouterr().out)["prefill"]["collectives"][0]["size_bytes"])
    assert sizes[1] < sizes[0]


def test_a_rate_run_says_its_concurrency_is_the_peak_it_reached(capsys):
    # before: "--request-rate 5" printed a row "16 @ 5/s" under "concurrency" with no word that 16 was the most requests
    # in flight at one time (the JSON's mean_running 6.1), not a concurrency anyone set
    base = ["estimate", "--preset", "llama-3.2-1b", "--seq-len", "64", "--new-tokens", "8", "--num-requests", "40"]
    assert main([*base, "--request-rate", "20", "--json"]) == 0
    p = json.loads(capsys.readouterr().out)["serving"][0]
    assert main([*base, "--request-rate", "20"]) == 0
    arrivals = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("  arrivals: "))
    assert arrivals.endswith(f"; concurrency {p['concurrency']:,} is the most requests in flight at once "
                             f"(mean {p['mean_running']:.3g})")
    assert main([*base, "--concurrency", "2"]) == 0
    assert "  arrivals: closed loop\n" in capsys.readouterr().out
