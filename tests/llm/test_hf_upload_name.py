"""An uploaded model's name: the file's, else the checkpoint's (``_name_or_path``), else its family."""

from __future__ import annotations

import json

from gemmlib.llm.hf import read_config_json, upload_name

LLAMA = {"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
         "num_attention_heads": 4, "vocab_size": 1000}


def test_the_file_name_names_the_model():
    assert upload_name(LLAMA, "mistral-7b.json") == "mistral-7b"
    assert read_config_json(json.dumps(LLAMA), file_name="tiny-llama.json")[0].name == "tiny-llama"


def test_a_plain_config_json_is_named_by_its_checkpoint_or_its_family():
    saved = {**LLAMA, "_name_or_path": "meta-llama/Llama-3.1-8B"}
    assert read_config_json(json.dumps(saved), file_name="config.json")[0].name == "Llama-3.1-8B"
    assert upload_name(LLAMA, "config.json") == "llama (config.json)"
    assert upload_name({**LLAMA, "_name_or_path": "/tmp/ckpt/"}, "Config.json") == "ckpt"
    assert upload_name({**LLAMA, "_name_or_path": 7}, "config.json") == "llama (config.json)"
    assert upload_name({}, "config.json") == "config.json"
    assert upload_name({**LLAMA, "_name_or_path": "x" * 500 + "\n\x00"}, "config.json") == "x" * 80
