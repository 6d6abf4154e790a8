"""`python -m gemmlib estimate`: flags, JSON keys, the readable table, bad input, no torch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gemmlib.cli import main
from gemmlib.llm.accounting import Workload, decode_ops, prefill_ops
from gemmlib.llm.config import ModelConfig
from gemmlib.llm.presets import PUBLISHED_PARAMS, from_name

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parents[1] / "data"


def _json(capsys, *argv) -> dict:
    assert main(["estimate", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_has_the_documented_keys_and_exact_numbers(capsys):
    d = _json(capsys, "--preset", "llama-3-8b", "--batch", "4", "--seq-len", "300", "--new-tokens", "7",
              "--gpu", "h200", "--gpus", "2")
    cfg = from_name("llama-3-8b")
    wl = Workload(batch=4, seq_len=300, new_tokens=7)
    assert d["model"]["params"] == PUBLISHED_PARAMS["llama-3-8b"]
    assert d["prefill"]["flops"] == sum(o.flops for o in prefill_ops(cfg, wl))
    assert d["decode"]["flops"] == sum(o.flops for o in decode_ops(cfg, wl))
    assert d["decode"]["steps"] == 7
    op = d["prefill"]["ops"][0]
    for key in ("name", "m", "n", "k", "count", "flops", "bytes", "time_s"):
        assert key in op
    assert [o["name"] for o in d["prefill"]["ops"] if o["kind"] == "gemm"] == [
        "q_proj", "k_proj", "v_proj", "attn_scores", "attn_values", "o_proj", "gate_proj", "up_proj", "down_proj",
        "lm_head"]
    # the rest of the forward pass is there too, as ops of kind "other", in the time but not in the GEMM FLOPs
    assert {o["name"] for o in d["prefill"]["ops"] if o["kind"] == "other"} == {
        "embedding", "norms", "rotary", "kv_repeat", "attn_softmax", "activation", "residual"}
    assert d["memory"]["weights_bytes"] == cfg.params * 2
    assert d["memory"]["kv_cache_bytes"] == 2 * 32 * 8 * 128 * 2 * 4 * 307
    assert d["memory"]["capacity_bytes"] == 2 * 143771 * 2**20  # nvidia-smi: 143771 MiB per H200 SXM
    t = d["times"]
    assert t["ttft_s"] == pytest.approx(d["prefill"]["time_s"]) and t["ttft_s"] > 0
    assert t["time_per_output_token_s"] == pytest.approx(d["decode"]["time_s"] / 7)
    assert d["hardware"]["gpus"] == 2


def test_custom_shape_flags_and_switches(capsys):
    d = _json(capsys, "--layers", "2", "--hidden", "64", "--ffn", "128", "--heads", "8", "--kv-heads", "2",
              "--head-dim", "16", "--vocab", "100", "--mlp", "plain", "--tied-embeddings", "--seq-len", "10",
              "--new-tokens", "0", "--causal", "--lm-head", "last", "--weight-dtype", "int8",
              "--kv-dtype", "fp8", "--gpu", "cpu", "--efficiency", "0.5")
    cfg = ModelConfig(layers=2, hidden=64, ffn=128, heads=8, kv_heads=2, head_dim=16, vocab=100, mlp="plain",
                      tied_embeddings=True)
    wl = Workload(seq_len=10, causal=True, lm_head="last", weight_dtype="int8", kv_dtype="fp8")
    assert d["model"]["params"] == cfg.params
    assert d["prefill"]["flops"] == sum(o.flops for o in prefill_ops(cfg, wl))
    assert d["decode"]["flops"] == 0 and d["decode"]["ops"] == []
    assert d["times"]["time_per_output_token_s"] is None
    assert d["memory"]["weights_bytes"] == cfg.params
    assert d["workload"]["causal"] is True


def test_moe_flags_and_config_file(capsys):
    a = _json(capsys, "--config", str(DATA / "config_mixtral-8x7b.json"), "--seq-len", "64")
    b = _json(capsys, "--preset", "mixtral-8x7b", "--seq-len", "64")
    assert a["prefill"]["flops"] == b["prefill"]["flops"] and a["model"]["params"] == b["model"]["params"]
    c = _json(capsys, "--layers", "32", "--hidden", "4096", "--ffn", "14336", "--heads", "32", "--kv-heads", "8",
              "--vocab", "32000", "--experts", "8", "--experts-per-token", "2", "--seq-len", "64")
    assert c["model"]["params"] == PUBLISHED_PARAMS["mixtral-8x7b"]
    assert c["prefill"]["flops"] == b["prefill"]["flops"]


def test_readable_table(capsys):
    assert main(["estimate", "--preset", "gpt2", "--seq-len", "128", "--new-tokens", "4"]) == 0
    out = capsys.readouterr().out
    for word in ("PREFILL", "DECODE", "q_proj", "attn_scores", "lm_head", "memory", "time to first token",
                 "rules of thumb", "124,439,808"):
        assert word in out
    assert main(["estimate", "--preset", "gpt2", "--macs"]) == 0
    assert "MACs" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [
    ["--preset", "nope"],
    ["--layers", "0", "--hidden", "8", "--ffn", "8", "--heads", "2", "--vocab", "4"],
    ["--layers", "-3", "--hidden", "8", "--ffn", "8", "--heads", "2", "--vocab", "4"],
    ["--layers", "2", "--hidden", "10", "--ffn", "8", "--heads", "3", "--vocab", "4"],
    ["--layers", "2", "--hidden", "8", "--ffn", "8", "--heads", "4", "--kv-heads", "3", "--vocab", "4"],
    ["--layers", "2", "--hidden", "8"],
    ["--preset", "gpt2", "--batch", "0"],
    ["--preset", "gpt2", "--seq-len", "-1"],
    ["--preset", "gpt2", "--gpus", "0"],
    ["--preset", "gpt2", "--efficiency", "2"],
    ["--preset", "gpt2", "--gpu", "tpu-v9"],
    ["--preset", "gpt2", "--gpu", "a100", "--act-dtype", "fp8"],
    ["--preset", "gpt2", "--layers", "3"],
    ["--config", str(DATA / "config_not_json.json")],
    ["--config", str(DATA / "config_wrong_type.json")],
    [],
])
def test_bad_input_exit_2_one_line(capsys, argv):
    assert main(["estimate", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and err.startswith("error:")


@pytest.mark.parametrize("argv", [["--layers", "x"], ["--batch", "1.5", "--preset", "gpt2"],
                                  ["--preset", "gpt2", "--lm-head", "first"]])
def test_non_numbers_in_a_subprocess(argv):
    r = subprocess.run([sys.executable, "-m", "gemmlib", "estimate", *argv], capture_output=True, text=True,
                       cwd=ROOT, timeout=60)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert r.stdout == ""


def test_does_not_import_torch():
    code = ("import sys, io, contextlib\nfrom gemmlib.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    rc = main(['estimate', '--preset', 'llama-2-70b', '--batch', '8', '--seq-len', '4096', "
            "'--new-tokens', '512', '--json'])\n"
            "assert rc == 0\nheavy = [m for m in ('torch', 'streamlit', 'triton') if m in sys.modules]\n"
            "assert not heavy, heavy\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 0, r.stderr


def test_measured_ceiling_by_name(tmp_path, monkeypatch, capsys):
    """The hook for measured ceilings: a ceiling saved by gemmlib.measure.devices is usable with --gpu NAME."""
    (tmp_path / "ceilings.json").write_text(json.dumps({"cuda:NVIDIA H200": {
        "device": "cuda", "device_name": "NVIDIA H200", "peaks": {"bf16": 7.5e14}, "bandwidth": 4.3e12}}))
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path))
    d = _json(capsys, "--preset", "gpt2", "--gpu", "NVIDIA H200 (measured)")
    assert d["hardware"]["peak_flops_per_gpu"] == 7.5e14
    assert d["hardware"]["bandwidth_per_gpu"] == 4.3e12


def test_cli_json_is_the_estimate_json_the_page_downloads(capsys):
    from gemmlib.core.hardware import get_hardware
    from gemmlib.llm.parallel import Parallel
    from gemmlib.llm.scaleout import estimate

    assert main(["estimate", "--preset", "qwen2.5-7b", "--seq-len", "100", "--new-tokens", "3", "--tp", "2",
                 "--json"]) == 0
    out = capsys.readouterr().out
    est = estimate(from_name("qwen2.5-7b"), Workload(seq_len=100, new_tokens=3), get_hardware("h100"), Parallel(tp=2))
    assert json.loads(out) == json.loads(est.to_json())
