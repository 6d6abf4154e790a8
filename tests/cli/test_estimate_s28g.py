"""`estimate` on a config.json, review s28 G: what the "Ignored" list says, what an invalid file's error says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gemmlib.cli import main
from gemmlib.llm.hf import read_config

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "configs"


def _read(capsys, path: Path) -> dict:
    assert main(["estimate", "--config", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)["read"]


@pytest.mark.parametrize("name", ["qwen3-vl-4b.json", "qwen3-vl-30b-a3b.json", "qwen3.5-27b.json"])
def test_a_vision_config_the_tower_row_reads_is_not_listed_as_ignored(name, capsys):
    # before: Qwen3-VL-4B's tower row said 415,347,712 parameters (read from vision_config) while the Ignored list
    # (text, JSON, the page's "What was read") named "(top level) vision_config"
    read = _read(capsys, CONFIGS / name)
    assert read["vision"] and sum(read["vision"].values()) > 0
    listed = read["ignored_keys"] + read["unknown_keys"]
    assert "(top level) vision_config" not in listed, listed
    assert "(top level) vision_start_token_id" in read["ignored_keys"]  # a key no count reads is still listed


def test_the_tower_count_follows_vision_config_so_it_was_read(capsys):
    cfg = json.loads((CONFIGS / "qwen3-vl-4b.json").read_text())
    base = sum(read_config(cfg)[1]["vision"].values())
    assert base == 415_347_712
    cfg["vision_config"]["depth"] = 12
    assert sum(read_config(cfg)[1]["vision"].values()) < base


def test_top_level_keys_a_wrapper_tower_reads_are_not_ignored():
    # a Mistral 3 wrapper's tower reads spatial_merge_size and vision_feature_layer beside vision_config
    cfg = {"model_type": "mistral3", "spatial_merge_size": 2, "vision_feature_layer": -1, "image_token_index": 10,
           "vision_config": {"hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 24,
                             "num_attention_heads": 16, "patch_size": 14, "image_size": 1540, "head_dim": 64},
           "text_config": {"model_type": "mistral", "hidden_size": 5120, "intermediate_size": 32768,
                           "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 8,
                           "head_dim": 128, "vocab_size": 131072}}
    _, info = read_config(cfg)
    assert info["vision"]
    listed = info["ignored_keys"] + info["unknown_keys"]
    for key in ("vision_config", "spatial_merge_size", "vision_feature_layer"):
        assert f"(top level) {key}" not in listed, listed
    assert "(top level) image_token_index" in info["ignored_keys"]


def test_phi4_multimodal_towers_configs_are_not_ignored():
    cfg = {"model_type": "phi4_multimodal", "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 32,
           "num_attention_heads": 24, "num_key_value_heads": 8, "vocab_size": 200064,
           "vision_config": {}, "audio_config": {}}
    _, info = read_config(cfg)
    assert info["vision"] and info["audio"]
    assert not {"vision_config", "audio_config"} & set(info["ignored_keys"] + info["unknown_keys"])


@pytest.mark.parametrize("text, line, column", [
    ('{"model_type": "llama",\n "hidden_size": 4096,}\n', 2, 22),  # a trailing comma
    ("{'model_type': 'llama'}", 1, 2),  # single quotes
    ('{"model_type": "llama" // a comment\n}', 1, 24)])
def test_an_invalid_config_json_says_where_and_what_to_do_in_one_line(text, line, column, tmp_path, capsys):
    # before: "bad.json is not valid JSON: Expecting property name enclosed in double quotes at line 2, column 22":
    # where, and what json found, but not what to do about it
    path = tmp_path / "bad.json"
    path.write_text(text)
    assert main(["estimate", "--config", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert "bad.json is not valid JSON: " in err and f"at line {line}, column {column}" in err
    assert "correct the text there" in err and "double quotes" in err and "load it again" in err


SERVE = ["estimate", "--preset", "llama-3.2-1b", "--gpu", "h100", "--engine", "trtllm", "--concurrency", "1",
         "--num-requests", "1", "--json"]


def _estimate(capsys, *extra: str) -> dict:
    assert main([*SERVE, *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_requests_lengths_alone_are_the_whole_outputs(capsys):
    # before: --input-len 4096 --output-len 512 without --seq-len sized the phases and the time line at the default
    # 512 / 128 while SERVING used 4096 / 512: one output, two TTFTs for two different prompts
    d = _estimate(capsys, "--input-len", "4096", "--output-len", "512")
    assert (d["workload"]["seq_len"], d["workload"]["new_tokens"]) == (4096, 512)
    assert (d["serving_summary"]["input_len"], d["serving_summary"]["output_len"]) == (4096, 512)
    assert d["serving"][0]["ttft_s"] == pytest.approx(d["times"]["prefill_s"], rel=0.01)


def test_given_lengths_and_the_defaults_are_unchanged(capsys):
    d = _estimate(capsys, "--seq-len", "256", "--new-tokens", "8", "--input-len", "4096", "--output-len", "512")
    assert (d["workload"]["seq_len"], d["workload"]["new_tokens"]) == (256, 8)  # both asked for: both kept
    assert (d["serving_summary"]["input_len"], d["serving_summary"]["output_len"]) == (4096, 512)
    d = _estimate(capsys)
    assert (d["workload"]["seq_len"], d["workload"]["new_tokens"]) == (512, 128)
    assert (d["serving_summary"]["input_len"], d["serving_summary"]["output_len"]) == (512, 128)
    d = _estimate(capsys, "--input-len", "1024")  # one of them: the other keeps its default
    assert (d["workload"]["seq_len"], d["workload"]["new_tokens"]) == (1024, 128)
