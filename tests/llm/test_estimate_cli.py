"""`python -m gemmlib estimate`: flags, JSON keys, the readable table, bad input, no torch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gemmlib.cli import main
from gemmlib.llm.accounting import Workload, decode_ops, prefill_ops, serving_dtypes
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
    # the rest of the forward pass is there too, as ops of kind "other", in the time but not in the GEMM FLOPs;
    # an engine's fused attention has no K/V repeat and no softmax pass over the scores, transformers' eager one has
    assert {o["name"] for o in d["prefill"]["ops"] if o["kind"] == "other"} == {
        "embedding", "norms", "rotary", "activation", "residual"}
    ref = _json(capsys, "--preset", "llama-3-8b", "--batch", "4", "--seq-len", "300", "--new-tokens", "7",
                "--gpu", "h200", "--gpus", "2", "--reference", "transformers")
    assert {o["name"] for o in ref["prefill"]["ops"] if o["kind"] == "other"} == {
        "embedding", "norms", "rotary", "kv_repeat", "attn_softmax", "activation", "residual"}
    assert ref["prefill"]["flops"] == sum(o.flops for o in prefill_ops(cfg, wl.under("transformers")))
    assert d["conventions"]["name"] == "engine" and ref["conventions"]["name"] == "transformers"
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
    # int8 weights: the decoder's 12 linears at one byte per weight with an fp32 scale per output channel (q 128, k 32,
    # v 32, o 64, up 128, down 64 rows per layer); the tied embedding and the norms at the checkpoint's bf16
    linears = 2 * (64 * 128 + 2 * 64 * 32 + 128 * 64 + 64 * 128 + 128 * 64)
    rest = 100 * 64 + (2 * 2 + 1) * 64
    assert cfg.params == linears + rest
    assert d["memory"]["weights_bytes"] == linears + 4 * 2 * (128 + 32 + 32 + 64 + 128 + 64) + 2 * rest
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
def test_non_numbers_exit_2_one_line(argv, run_cli):
    """argparse's refusals: exit 2, one line, nothing on stdout; the first through a fresh
    ``python -m gemmlib`` (the process's own exit status), the others in this process."""
    if argv[0] == "--layers":
        r = subprocess.run([sys.executable, "-m", "gemmlib", "estimate", *argv], capture_output=True, text=True,
                           cwd=ROOT, timeout=60)
        rc, out, err = r.returncode, r.stdout, r.stderr
    else:
        rc, out, err = run_cli(["estimate", *argv])
    assert rc == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert out == ""


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


# ----- families, quantized checkpoints, workloads (issue 11) -----------------------------------------

CONFIGS = DATA / "configs"


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.json")), ids=lambda p: p.stem)
def test_every_real_config_is_read_and_described(capsys, path):
    from gemmlib.llm.checkpoint import checkpoint_size
    from gemmlib.llm.hf import load_config_file

    d = _json(capsys, "--config", str(path), "--seq-len", "64", "--new-tokens", "2")
    cfg = load_config_file(str(path))
    read = d["read"]
    assert read["family"] == cfg.family and read["model_type"] == cfg.family
    assert d["model"]["params"] == cfg.params
    att = read["attention"]
    assert (att["full"] + att["sliding"] + att["chunked"] + att.get("without_attention", 0)
            + att.get("compressed_sparse", 0) + att.get("heavily_compressed", 0)) == cfg.layers
    assert (read["mixer"] is not None) == cfg.is_hybrid
    assert (read["mla"] is not None) == cfg.is_mla and (read["experts"] is not None) == cfg.is_moe
    assert (read["quantization"] is not None) == (cfg.quant is not None)
    assert read["dtype"] == (cfg.dtype or None)
    # torch_dtype is the default weight dtype (a 32-bit checkpoint is served in 16 bits)
    assert d["workload"]["weight_dtype"] == serving_dtypes(cfg)["weight_dtype"]
    if cfg.quant is None:
        assert d["workload"]["weight_dtype"] == (cfg.dtype if cfg.dtype in ("bf16", "fp16") else "bf16")
    if cfg.quant is None:
        assert read["weight_dtype_source"] == (
            f"the config's torch_dtype {cfg.dtype}, served in bf16 as an engine does" if cfg.dtype == "fp32" else
            "the config's torch_dtype" if cfg.dtype else "default; the config gives no torch_dtype")
    else:
        assert "quantization_config" in read["weight_dtype_source"]
    assert d["memory"]["weights_bytes"] == (checkpoint_size(cfg, serving_dtypes(cfg)["weight_dtype"], mtp=False).bytes
                                            + 2 * cfg.tower_params)  # a wrapper's encoders at 16 bits beside it
    assert cfg.tower_params == sum((read.get("vision") or {}).values()) + sum((read.get("audio") or {}).values())
    assert isinstance(read["ignored_keys"], list) and isinstance(read["unknown_keys"], list)


def test_quantized_config_is_sized_by_its_format(capsys):
    awq = _json(capsys, "--config", str(CONFIGS / "zephyr-7b-alpha-awq.json"), "--seq-len", "64")
    plain = _json(capsys, "--config", str(CONFIGS / "mistral-7b-v0.1.json"), "--seq-len", "64")
    assert awq["read"]["quantization"]["method"] == "awq" and awq["read"]["quantization"]["bits"] == 4
    assert awq["memory"]["weights_bytes"] == 4_150_796_288  # not 14.5 GB of bf16
    assert plain["memory"]["weights_bytes"] == 7_241_732_096 * 2
    assert awq["prefill"]["flops"] == plain["prefill"]["flops"]  # weight-only: the same GEMMs
    assert awq["hardware"]["compute_dtype"] == "fp16"  # weight-only: the checkpoint's 16-bit dtype


def test_weight_dtypes_int4_and_fp4(capsys):
    from gemmlib.llm.checkpoint import checkpoint_size

    cfg = from_name("llama-3.1-8b")
    for dt in ("int4", "fp4"):
        d = _json(capsys, "--preset", "llama-3.1-8b", "--weight-dtype", dt, "--seq-len", "32")
        assert d["memory"]["weights_bytes"] == checkpoint_size(cfg, dt).bytes
        assert d["hardware"]["compute_dtype"] == "bf16"  # weight-only: the activation dtype's peak
    assert main(["estimate", "--preset", "gpt-oss-20b", "--weight-dtype", "int4"]) == 2
    assert "already quantized" in capsys.readouterr().err


def test_context_attention_and_mla_switches(capsys):
    ctx = _json(capsys, "--preset", "llama-3.1-8b", "--context", "32768", "--batch", "2")
    assert ctx["prefill"]["ops"] == [] and ctx["decode"]["steps"] == 1 and ctx["times"]["ttft_s"] is None
    assert ctx["workload"]["decode_only"] is True and ctx["workload"]["seq_len"] == 32768
    scores = next(o for o in ctx["decode"]["ops"] if o["name"] == "attn_scores")
    assert scores["n"] == 32769
    assert ctx["memory"]["kv_cache_bytes"] == 2 * 32 * 8 * 128 * 2 * 2 * 32769
    eager = _json(capsys, "--preset", "llama-3.1-8b", "--seq-len", "4096", "--new-tokens", "4", "--attention", "eager")
    fused = _json(capsys, "--preset", "llama-3.1-8b", "--seq-len", "4096", "--new-tokens", "4", "--attention", "fused")
    assert fused["prefill"]["flops"] == eager["prefill"]["flops"] and fused["prefill"]["bytes"] < eager["prefill"]["bytes"]
    assert fused["workload"]["attention"] == "fused"
    ab = _json(capsys, "--preset", "deepseek-v3", "--context", "4096", "--mla", "absorbed")
    ea = _json(capsys, "--preset", "deepseek-v3", "--context", "4096", "--mla", "eager")
    assert ab["decode"]["flops"] < ea["decode"]["flops"] / 10  # eager decompresses the whole cache every step
    assert main(["estimate", "--preset", "gpt2", "--context", "10", "--seq-len", "10"]) == 2
    capsys.readouterr()


def test_custom_inputs_express_mla_shared_experts_dense_layers_and_sliding_patterns(capsys):
    v3 = _json(capsys, "--layers", "61", "--hidden", "7168", "--ffn", "18432", "--heads", "128", "--head-dim", "192",
               "--v-head-dim", "128", "--vocab", "129280", "--mla-kv-rank", "512", "--mla-q-rank", "1536",
               "--mla-rope-dim", "64", "--experts", "256", "--experts-per-token", "8", "--expert-ffn", "2048",
               "--shared-expert-ffn", "2048", "--dense-layers", "3", "--seq-len", "64", "--new-tokens", "2")
    preset = _json(capsys, "--preset", "deepseek-v3", "--seq-len", "64", "--new-tokens", "2", "--weight-dtype", "bf16")
    assert v3["model"]["params"] == preset["model"]["params"] == 671_026_404_352
    assert v3["prefill"]["flops"] == preset["prefill"]["flops"] and v3["decode"]["flops"] == preset["decode"]["flops"]
    assert v3["memory"]["kv_cache_bytes"] == preset["memory"]["kv_cache_bytes"]
    g3 = _json(capsys, "--layers", "26", "--hidden", "1152", "--ffn", "6912", "--heads", "4", "--kv-heads", "1",
               "--head-dim", "256", "--vocab", "262144", "--tied-embeddings", "--sliding-window", "512",
               "--sliding-pattern", "5:1", "--qk-norm", "head", "--norms-per-layer", "4", "--context", "20000")
    real = _json(capsys, "--config", str(CONFIGS / "gemma-3-1b.json"), "--context", "20000")
    assert g3["model"]["params"] == real["model"]["params"] == 999_885_952
    assert g3["decode"]["flops"] == real["decode"]["flops"]
    assert g3["memory"]["kv_cache_bytes"] == real["memory"]["kv_cache_bytes"]
    assert g3["read"]["attention"]["pattern"] == real["read"]["attention"]["pattern"] == "SSSSSF ×4 + SS"
    moe = _json(capsys, "--config", str(CONFIGS / "qwen1.5-moe-a2.7b.json"), "--seq-len", "16")
    q = moe["model"]
    custom = _json(capsys, "--layers", str(q["layers"]), "--hidden", str(q["hidden"]), "--ffn", str(q["ffn"]),
                   "--heads", str(q["heads"]), "--vocab", str(q["vocab"]), "--experts", str(q["experts"]),
                   "--experts-per-token", str(q["experts_per_token"]), "--expert-ffn", str(q["expert_ffn"]),
                   "--shared-expert-ffn", str(q["shared_expert_ffn"]), "--shared-expert-gate", "--qkv-bias",
                   "--seq-len", "16")
    assert custom["model"]["params"] == q["params"] == 14_315_784_192


@pytest.mark.parametrize("argv, msg", [
    (["--config", str(DATA / "config_not_json.json")], "not valid JSON"),
    (["--sliding-window", "128"], "custom model"),
    (["--layers", "2", "--hidden", "64", "--ffn", "64", "--heads", "4", "--vocab", "10", "--sliding-pattern", "5:1"],
     "needs --sliding-window"),
    (["--layers", "2", "--hidden", "64", "--ffn", "64", "--heads", "4", "--vocab", "10", "--sliding-window", "8",
      "--sliding-pattern", "5:x"], "N:M"),
    (["--layers", "2", "--hidden", "64", "--ffn", "64", "--heads", "4", "--vocab", "10", "--mla-kv-rank", "16"],
     "mla-rope-dim"),
    (["--layers", "2", "--hidden", "64", "--ffn", "64", "--heads", "4", "--vocab", "10", "--shared-expert-ffn", "8"],
     "need --experts"),
])
def test_bad_architecture_flags_exit_2_with_one_line(capsys, argv, msg):
    assert main(["estimate", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and msg in err


def test_unsupported_family_names_the_supported_ones(tmp_path, capsys):
    from gemmlib.llm.hf import SUPPORTED_MODEL_TYPES

    bad = tmp_path / "config.json"
    bad.write_text(json.dumps({"model_type": "openai-gpt", "hidden_size": 64}))
    assert main(["estimate", "--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'openai-gpt' is not supported: transformers 5.24 knows it" in err
    assert all(t in err for t in ("deepseek_v3", "gemma3_text", "gpt_oss", "falcon", "internlm2"))
    assert len(SUPPORTED_MODEL_TYPES) >= 30


def test_text_report_says_what_was_read(capsys):
    assert main(["estimate", "--config", str(CONFIGS / "gpt-oss-20b.json"), "--seq-len", "256", "--new-tokens", "4"]) == 0
    out = capsys.readouterr().out
    for words in ("family gpt_oss", "12 full + 12 sliding (window 128", "32 experts top-4",
                  "mxfp4", "attn_scores_sliding", "weights bf16 (mxfp4"):
        assert words in out, words


def test_a_multimodal_checkpoint_loads_its_vision_tower_with_the_weights(tmp_path, capsys):
    """llava-hf/llava-1.5-7b-hf's config.json: the weights held in memory and the checkpoint's bytes are the whole
    model transformers builds from it, 2 bytes × numel() of LlavaForConditionalGeneration (14,126,854,144 B), not the
    decoder's alone (a reviewer saw 12.6 GiB beside the real files' 13.2); the tower's parameters stay out of the
    decoder's count and FLOPs; with TP 2 each GPU holds half of it."""
    import torch
    from transformers import AutoConfig, AutoModelForImageTextToText

    raw = {"architectures": ["LlavaForConditionalGeneration"], "model_type": "llava", "image_token_index": 32000,
           "projector_hidden_act": "gelu", "vision_feature_layer": -2, "vision_feature_select_strategy": "default",
           "pad_token_id": 32001, "tie_word_embeddings": False, "torch_dtype": "float16",
           "text_config": {"architectures": ["LlamaForCausalLM"], "max_position_embeddings": 4096,
                           "model_type": "llama", "rms_norm_eps": 1e-05, "torch_dtype": "float16", "vocab_size": 32064},
           "vision_config": {"hidden_size": 1024, "image_size": 336, "intermediate_size": 4096,
                             "model_type": "clip_vision_model", "num_attention_heads": 16, "num_hidden_layers": 24,
                             "patch_size": 14, "projection_dim": 768, "vocab_size": 32000}}
    (tmp_path / "config.json").write_text(json.dumps(raw))
    hf = AutoConfig.from_pretrained(tmp_path)
    with torch.device("meta"):
        numel = AutoModelForImageTextToText.from_config(hf).num_parameters()
    assert main(["estimate", "--config", str(tmp_path / "config.json"), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["memory"]["weights_bytes"] == d["read"]["checkpoint_bytes"] == 2 * numel == 14_126_854_144
    assert d["read"]["tower_bytes"] == 2 * 324_487_168 and d["model"]["params"] == numel - 324_487_168
    assert main(["estimate", "--config", str(tmp_path / "config.json"), "--tp", "2", "--json"]) == 0
    two = json.loads(capsys.readouterr().out)
    one = 2 * numel - 2 * 324_487_168  # the decoder's bytes
    assert two["per_gpu"]["weights_bytes"] == pytest.approx(one / 2 + 324_487_168, rel=2e-3)  # (the norms replicate)
