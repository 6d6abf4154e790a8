"""`python -m gemmlib estimate` beyond one GPU: the --json keys the issue names, --gpus as --tp, training and
serving flags, and bad input (exit status 2, one line)."""

from __future__ import annotations

import json

import pytest

from gemmlib.cli import main


def _json(capsys, *argv) -> dict:
    assert main(["estimate", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_json_keys_exactly_as_the_issue_spells_them(capsys):
    d = _json(capsys, "--preset", "llama-3-70b", "--batch", "16", "--seq-len", "2048", "--new-tokens", "16",
              "--tp", "8", "--train", "--train-tokens", "1e12", "--serve", "--tpot-target-ms", "50")
    assert {k: d["parallel"][k] for k in ("tp", "pp", "ep", "dp")} == {"tp": 8, "pp": 1, "ep": 1, "dp": 1}
    assert {"weights_bytes", "kv_cache_bytes", "activation_bytes", "total_bytes", "capacity_bytes", "fits"} <= set(
        d["per_gpu"])
    assert d["prefill"]["communication_s"] > 0 and d["decode"]["communication_s"] > 0
    assert {"step_flops", "step_time_s", "mfu", "tokens_per_s", "gpu_hours"} <= set(d["train"])
    assert d["serving"] and all({"concurrency", "ttft_s", "tpot_s", "tokens_per_s"} <= set(p) for p in d["serving"])
    assert d["serving_summary"]["best"]["tpot_s"] <= 0.05
    per = d["per_gpu"]
    assert per["total_bytes"] == pytest.approx(per["weights_bytes"] + per["kv_cache_bytes"] + per["activation_bytes"]
                                               + per["workspace_bytes"])
    assert 0 < d["train"]["mfu"] < 1


def test_gpus_alone_is_tensor_parallelism(capsys):
    a = _json(capsys, "--preset", "llama-3-8b", "--seq-len", "512", "--new-tokens", "4", "--gpus", "4")
    b = _json(capsys, "--preset", "llama-3-8b", "--seq-len", "512", "--new-tokens", "4", "--tp", "4")
    c = _json(capsys, "--preset", "llama-3-8b", "--seq-len", "512", "--new-tokens", "4", "--tp", "4", "--gpus", "4")
    assert a == b == c and a["parallel"]["tp"] == 4 and a["hardware"]["gpus"] == 4
    one = _json(capsys, "--preset", "llama-3-8b", "--seq-len", "512", "--new-tokens", "4")
    assert one["parallel"]["tp"] == 1 and one["prefill"]["communication_s"] == 0
    assert "train" not in one and "serving" not in one


def test_measured_links_replace_the_catalogue(capsys):
    base = ["--preset", "llama-3-70b", "--batch", "16", "--seq-len", "2048", "--new-tokens", "0", "--tp", "8"]
    a = _json(capsys, *base)
    b = _json(capsys, *base, "--intra-busbw", "225", "--intra-latency-us", "15.6")  # half the bandwidth
    ar = [c for c in a["prefill"]["collectives"] if c["after"] == "o_proj"][0]
    br = [c for c in b["prefill"]["collectives"] if c["after"] == "o_proj"][0]
    assert br["busbw"] == 225e9 and br["time_s"] - br["count"] * 15.6e-6 == pytest.approx(
        2 * (ar["time_s"] - ar["count"] * 15.6e-6))


def test_readable_report(capsys):
    assert main(["estimate", "--preset", "llama-3-8b", "--batch", "64", "--seq-len", "1024", "--new-tokens", "8",
                 "--tp", "2", "--dp", "4", "--train", "--train-tokens", "1e10", "--recompute", "selective",
                 "--zero", "1", "--serve", "--tpot-target-ms", "20"]) == 0
    out = capsys.readouterr().out
    for word in ("parallel  TP 2 x PP 1 x EP 1 x DP 4 = 8 GPUs", "all_reduce", "per GPU", "TRAINING", "MFU",
                 "GPU-hours", "6·N·D", "anchor: Llama 3.1 405B", "SERVING", "TTFT", "TPOT", "best concurrency"):
        assert word in out, word


@pytest.mark.parametrize("argv, msg", [
    (["--preset", "llama-3-8b", "--tp", "2", "--dp", "2", "--gpus", "8"], "the GPU count given is"),
    (["--preset", "llama-3-8b", "--tp", "3"], "does not divide the 32 attention heads"),
    (["--preset", "llama-3-8b", "--pp", "40"], "more pipeline stages"),
    (["--preset", "llama-3-8b", "--ep", "2"], "mixture-of-experts"),
    (["--preset", "llama-3-8b", "--tp", "0"], "--tp must be at least 1"),
    (["--preset", "llama-3-8b", "--train"], "--train-tokens"),
    (["--preset", "llama-3-8b", "--train-tokens", "1e9"], "add --train"),
    (["--preset", "llama-3-8b", "--train", "--train-tokens", "-5"], "train-tokens"),
    (["--preset", "llama-3-8b", "--batch", "6", "--dp", "4", "--train", "--train-tokens", "1e9"], "does not split"),
    (["--preset", "llama-3-8b", "--tpot-target-ms", "-1"], "tpot-target-ms"),
    (["--preset", "llama-3-8b", "--new-tokens", "0", "--serve"], "set new tokens to 1 or more"),
    (["--preset", "llama-3-8b", "--gpu", "l4", "--tp", "16"], "no network"),
    (["--preset", "llama-3-8b", "--gpu", "rtx 5090"], "not in the catalogue"),
    (["--preset", "llama-3-8b", "--memory-utilization", "0"], "memory utilization"),
    (["--preset", "llama-3-8b", "--tp", "2", "--intra-busbw", "-3"], "intra-busbw"),
    # the flag the user gave is the one named, and a limit is said as a limit
    (["--preset", "llama-3-8b", "--gpus", "3"],
     "--gpus 3 alone splits the model by tensor parallelism (as --tp 3): TP 3 does not divide"),
    (["--preset", "llama-3-8b", "--gpus", "100000000"], "--gpus 100000000 alone splits the model"),
    (["--preset", "llama-3-8b", "--context", "100000000000"], "argument --context: must be at most 100,000,000"),
    (["--preset", "llama-3-8b", "--new-tokens", "100000000000"], "argument --new-tokens: must be at most 10,000,000"),
    (["--preset", "llama-3-8b", "--serve", "--concurrency", "1", "--max-num-batched-tokens", "100000000000"],
     "--max-num-batched-tokens must be a whole number from 1 to 10,000,000"),
    (["--preset", "llama-3-8b", "--tp", "2", "--intra-latency-us", "1e300"], "must be at most 1e+09"),
    # values that meant something else than they said (an empty pattern read as "all", 0 read as every layer,
    # the library's letter for a layer without attention, an empty module list read as core_attn)
    (["--layers", "4", "--hidden", "256", "--heads", "4", "--ffn", "512", "--vocab", "1000", "--sliding-window", "8",
      "--sliding-pattern", ""], "--sliding-pattern must be all, none, alternate, N:M or a unit of S and F letters"),
    (["--layers", "4", "--hidden", "256", "--heads", "4", "--ffn", "512", "--vocab", "1000", "--sliding-window", "8",
      "--sliding-pattern", "S-F-"], "a unit of S and F letters, got 'S-F-'"),
    (["--layers", "4", "--hidden", "256", "--heads", "4", "--ffn", "512", "--vocab", "1000", "--experts", "8",
      "--experts-per-token", "2", "--moe-every", "0"], "argument --moe-every: must be at least 1"),
    (["--preset", "llama-3-8b", "--train", "--train-tokens", "1e9", "--recompute", "selective",
      "--recompute-modules", ""], "--recompute-modules names at least one module"),
])
def test_bad_input_exit_2_one_line(capsys, argv, msg):
    try:
        rc = main(["estimate", *argv])
    except SystemExit as e:  # refused while parsing (a checked number type): argparse's own exit
        rc = e.code
    assert rc == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and msg in err, err
    assert err.startswith(("error:", "python -m gemmlib estimate: error:")), err


# ----- one estimate for one GPU and many; each op list built once; training positions ----------------------

def test_one_estimate_object_for_one_gpu_and_for_many():
    from gemmlib.core.hardware import get_hardware
    from gemmlib.llm.accounting import Estimate, Workload, estimate
    from gemmlib.llm.parallel import Parallel
    from gemmlib.llm.presets import from_name
    from gemmlib.llm.scaleout import ScaleOutEstimate
    from gemmlib.llm.scaleout import estimate as scaleout_estimate

    cfg, hw = from_name("llama-3-8b"), get_hardware("h100")
    wl = Workload(batch=4, seq_len=512, new_tokens=16)
    one = estimate(cfg, wl, hw)
    many = scaleout_estimate(cfg, wl, hw, Parallel())
    assert ScaleOutEstimate is Estimate and type(one) is type(many)
    assert one.scale_out is None and one.parallel is None and many.parallel.gpus == 1
    # on one GPU the scale-out estimate is the single-device one plus its part: the same times, op by op
    assert many.times() == pytest.approx(one.times(), rel=1e-12)
    assert [o.time_s for o in many.prefill.ops] == pytest.approx([o.time_s for o in one.prefill.ops], rel=1e-12)
    assert set(one.to_dict()) < set(many.to_dict()) and {"parallel", "per_gpu"} == set(many.to_dict()) - set(
        one.to_dict())


def test_one_estimate_builds_each_op_list_once(monkeypatch):
    """Issue 23: prefill_ops was rebuilt 33 times per estimate. Now: the prefill's GEMMs once, the weights' once,
    and once per counting switch the answer lists beside the workload's own; the decode's likewise, plus the one
    pass that times one GPU's share."""
    from gemmlib.llm import accounting

    calls = []
    real = accounting._stack_ops
    monkeypatch.setattr(accounting, "_stack_ops", lambda *a, **k: calls.append(a[2].phase) or real(*a, **k))
    assert main(["estimate", "--preset", "llama-2-7b", "--batch", "1", "--seq-len", "128", "--json"]) == 0
    assert calls.count("prefill") == 5  # the estimate's, the weights', three counting variants (the fourth is its own)
    assert calls.count("decode") == 5  # the whole job's, the per-GPU timing pass, three variants


def test_train_does_not_check_positions_against_the_inference_default(tmp_path, capsys):
    """GPT-3: learned positions for 2,048 tokens; a training step of 2,048 tokens has no decode steps."""
    gpt3 = tmp_path / "config.json"
    gpt3.write_text(json.dumps({"model_type": "gpt2", "n_embd": 12288, "n_layer": 96, "n_head": 96, "n_positions": 2048,
                                "vocab_size": 50257}))
    d = _json(capsys, "--config", str(gpt3), "--seq-len", "2048", "--batch", "1536", "--train", "--train-tokens",
              "3e11", "--tp", "8", "--pp", "16", "--dp", "8", "--micro-batch", "1", "--recompute", "full")
    assert d["workload"]["new_tokens"] == 0 and d["decode"]["ops"] == [] and d["train"]["seq_len"] == 2048
    assert main(["estimate", "--config", str(gpt3), "--seq-len", "2048", "--new-tokens", "1", "--train",
                 "--train-tokens", "3e11"]) == 2  # asked for a decode step past the table: refused
    assert "learned position table" in capsys.readouterr().err


def test_the_answer_names_its_convention_and_what_a_flag_overrode(capsys):
    d = _json(capsys, "--preset", "llama-3-8b", "--seq-len", "256", "--new-tokens", "2", "--attention", "eager")
    assert d["conventions"]["name"] == "engine"
    assert d["conventions"]["overridden"] == {"attention": {"value": "eager", "convention": "fused"}}
    ref = _json(capsys, "--preset", "llama-3-8b", "--seq-len", "256", "--new-tokens", "2", "--reference", "transformers")
    assert ref["conventions"]["overridden"] == {} and ref["conventions"]["lm_head"] == "all"
    assert main(["estimate", "--preset", "llama-3-8b", "--seq-len", "256", "--new-tokens", "2", "--no-causal"]) == 0
    out = capsys.readouterr().out
    assert "counting  engine convention" in out and "overridden: causal off (the convention: on)" in out
    assert "efficiency shape model" in out
    assert main(["estimate", "--preset", "llama-3-8b", "--seq-len", "256", "--efficiency", "0.5"]) == 0
    assert "efficiency flat 0.5 of peak and bandwidth (forced: --efficiency 0.5)" in capsys.readouterr().out


@pytest.mark.parametrize("batch, memory_says, per_gpu_says", [
    (6, "fits", "fits"),
    (600, "weights and KV cache fit, but not with the activations and workspace beside them", "does NOT fit"),
])
def test_the_memory_line_never_contradicts_the_per_gpu_line(capsys, batch, memory_says, per_gpu_says):
    """Llama 3 8B on one H100: at batch 600 the weights and the KV cache (61.8 GiB) fit in 79.6 GiB but with the
    activations and the workspace (99.1 GiB) they do not; the memory line says which part fits instead of a bare
    "fits" above a "does NOT fit" (the JSON keeps both verdicts, each of its own sum)."""
    assert main(["estimate", "--preset", "llama-3-8b", "--batch", str(batch)]) == 0
    lines = capsys.readouterr().out.splitlines()
    mem = next(ln for ln in lines if ln.startswith("memory "))
    per = next(ln for ln in lines if ln.startswith("per GPU "))
    assert mem.split(" GiB: ", 1)[1].startswith(memory_says) and f": {per_gpu_says};" in per
    assert main(["estimate", "--preset", "llama-3-8b", "--batch", str(batch), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["memory"]["fits"] is True and d["per_gpu"]["fits"] is (per_gpu_says == "fits")


def test_request_rate_inf_sends_every_request_at_once(capsys):
    """--request-rate inf, as the README and vllm bench serve spell an offline run: every request at once, the same
    simulation as --concurrency N --num-requests N (all admitted at t = 0); the JSON's rate is null (no finite rate)
    and its arrival says so; nan and -1 are refused in one line."""
    base = ["estimate", "--preset", "llama-3-8b", "--serve", "--num-requests", "50", "--json"]
    assert main([*base, "--request-rate", "inf"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["serving_summary"]["arrival"] == "every request at once (request rate inf)"
    assert main([*base, "--concurrency", "50"]) == 0
    closed = json.loads(capsys.readouterr().out)
    assert d["serving"][0]["tokens_per_s"] == pytest.approx(closed["serving"][0]["tokens_per_s"], rel=1e-9)
    assert d["serving"][0]["request_rate"] is None
    for bad in ("nan", "-1"):
        with pytest.raises(SystemExit) as e:
            main(["estimate", "--preset", "llama-3-8b", "--serve", f"--request-rate={bad}"])
        assert e.value.code == 2
        assert "or inf" in capsys.readouterr().err
