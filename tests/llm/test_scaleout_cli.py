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
    for word in ("parallel  TP 2 x PP 1 x EP 1 x DP 4 = 8 GPU(s)", "all_reduce", "per GPU", "TRAINING", "MFU",
                 "GPU-hours", "6·N·D", "anchor: Llama 3.1 405B", "SERVING", "TTFT", "TPOT", "best concurrency"):
        assert word in out, word


@pytest.mark.parametrize("argv, msg", [
    (["--preset", "llama-3-8b", "--tp", "2", "--dp", "2", "--gpus", "8"], "GPUs were given"),
    (["--preset", "llama-3-8b", "--tp", "3"], "does not divide the 32 attention heads"),
    (["--preset", "llama-3-8b", "--pp", "40"], "more pipeline stages"),
    (["--preset", "llama-3-8b", "--ep", "2"], "mixture-of-experts"),
    (["--preset", "llama-3-8b", "--tp", "0"], "--tp must be at least 1"),
    (["--preset", "llama-3-8b", "--train"], "--train-tokens"),
    (["--preset", "llama-3-8b", "--train-tokens", "1e9"], "add --train"),
    (["--preset", "llama-3-8b", "--train", "--train-tokens", "-5"], "train-tokens"),
    (["--preset", "llama-3-8b", "--batch", "6", "--dp", "4", "--train", "--train-tokens", "1e9"], "does not split"),
    (["--preset", "llama-3-8b", "--tpot-target-ms", "-1"], "tpot-target-ms"),
    (["--preset", "llama-3-8b", "--new-tokens", "0", "--serve"], "new-tokens"),
    (["--preset", "llama-3-8b", "--gpu", "l4", "--tp", "16"], "no network"),
    (["--preset", "llama-3-8b", "--gpu", "rtx 5090"], "not in the catalogue"),
    (["--preset", "llama-3-8b", "--memory-utilization", "0"], "memory utilization"),
    (["--preset", "llama-3-8b", "--tp", "2", "--intra-busbw", "-3"], "intra-busbw"),
])
def test_bad_input_exit_2_one_line(capsys, argv, msg):
    assert main(["estimate", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and err.startswith("error:") and msg in err, err
