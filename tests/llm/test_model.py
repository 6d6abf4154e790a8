"""ModelConfig, presets, config.json parsing and exact parameter counts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch
from estimator_reference import Decoder, count_params

from gemmlib.core.errors import InputError
from gemmlib.llm.checkpoint import checkpoint_size
from gemmlib.llm.config import ModelConfig, layer_pattern, moe_pattern
from gemmlib.llm.hf import from_hf_config, load_config_file, parse_config_json
from gemmlib.llm.presets import PRESETS, PUBLISHED_CHECKPOINT_ELEMENTS, PUBLISHED_PARAMS, from_name

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.mark.parametrize("name", list(PUBLISHED_PARAMS))
def test_preset_params_equal_published_checkpoint(name):
    assert PRESETS[name].params == PUBLISHED_PARAMS[name]
    assert PRESETS[name].source.startswith("https://huggingface.co/")


def test_every_preset_has_a_published_count():
    assert set(PUBLISHED_PARAMS) | set(PUBLISHED_CHECKPOINT_ELEMENTS) == set(PRESETS)
    assert not set(PUBLISHED_PARAMS) & set(PUBLISHED_CHECKPOINT_ELEMENTS)


@pytest.mark.parametrize("name", list(PUBLISHED_CHECKPOINT_ELEMENTS))
def test_checkpoint_total_equals_the_hub_count(name):
    """DeepSeek-V3's Hub total counts every stored element: the model, its MTP layer, the router
    score-bias buffers and the fp8 block scales."""
    cfg = PRESETS[name]
    assert checkpoint_size(cfg, "bf16").elements == PUBLISHED_CHECKPOINT_ELEMENTS[name]
    extra = cfg.extra_checkpoint_params()
    assert extra["mtp"] > 0 and extra["router_score_bias"] == 58 * 256
    assert cfg.params == checkpoint_size(cfg.replace(quant=None, mtp_layers=0, router_score_bias=False), "bf16").elements


def _reference_expresses(cfg: ModelConfig) -> bool:
    """The features tests/llm/estimator_reference.py's Decoder builds."""
    return (not cfg.is_mla and cfg.qk_norm == "none" and cfg.norms_per_layer == 2 and not cfg.parallel_block
            and cfg.norm in ("rms", "layer") and not cfg.attention_sinks and not cfg.lm_head_bias
            and not cfg.shared_expert_ffn and not cfg.moe_layers and not cfg.router_bias and not cfg.expert_bias
            and cfg.expert_ffn == (cfg.ffn if cfg.is_moe else 0) and cfg.v_head_dim == cfg.head_dim)


@pytest.mark.parametrize("name", [n for n, c in PRESETS.items() if _reference_expresses(c)])
def test_preset_params_equal_numel_of_the_architecture_on_meta(name):
    cfg = PRESETS[name]
    with torch.device("meta"):
        model = Decoder(cfg)
    assert count_params(model) == cfg.params


def test_breakdown_adds_up_and_active_params_for_moe():
    cfg = from_name("mixtral-8x7b")
    assert sum(cfg.param_breakdown().values()) == cfg.params
    # one token reaches 2 of 8 experts: 3 · 4096 · 14336 per expert per layer
    assert cfg.params - cfg.active_params == 32 * 6 * 3 * 4096 * 14336
    dense = from_name("llama-2-7b")
    assert dense.active_params == dense.params


def test_small_configs_match_reference_numel():
    cases = [
        ModelConfig(layers=2, hidden=48, heads=6, kv_heads=2, ffn=80, vocab=97, qkv_bias=True, tied_embeddings=True),
        ModelConfig(layers=3, hidden=32, heads=4, ffn=128, vocab=50, mlp="plain", norm="layer", qkv_bias=True,
                    o_bias=True, mlp_bias=True, tied_embeddings=True, learned_positions=16),
        ModelConfig(layers=2, hidden=32, heads=4, kv_heads=1, head_dim=24, ffn=40, vocab=30, experts=4,
                    experts_per_token=2),
        ModelConfig(layers=1, hidden=16, heads=2, ffn=24, vocab=10, o_bias=True, qkv_bias=True, mlp_bias=True),
    ]
    for cfg in cases:
        assert count_params(Decoder(cfg)) == cfg.params, cfg


@pytest.mark.parametrize("name", ["mixtral-8x7b", "qwen2.5-0.5b", "gpt2", "llama-2-7b"])
def test_sample_config_json_files_parse_to_the_preset(name):
    cfg = load_config_file(str(DATA / f"config_{name}.json"))
    preset = PRESETS[name]
    assert cfg.replace(name=preset.name, source=preset.source) == preset
    assert cfg.params == PUBLISHED_PARAMS[name]


# preset -> the full copy of its config.json in tests/data/configs (sources in the README there)
PRESET_FILES = {
    "llama-3.1-8b": "llama-3.1-8b", "llama-3.1-70b": "llama-3.1-70b", "llama-3.1-405b": "llama-3.1-405b",
    "llama-3.2-1b": "llama-3.2-1b", "llama-3.2-3b": "llama-3.2-3b", "mistral-7b": "mistral-7b-v0.1",
    "mistral-small-24b": "mistral-small-24b", "qwen2.5-7b": "qwen2.5-7b", "qwen3-8b": "qwen3-8b",
    "qwen3-32b": "qwen3-32b", "qwen3-30b-a3b": "qwen3-30b-a3b", "qwen3-235b-a22b": "qwen3-235b-a22b-thinking-2507",
    "gemma-3-1b": "gemma-3-1b", "phi-4": "phi-4", "deepseek-v3": "deepseek-v3-fp8", "gpt-oss-20b": "gpt-oss-20b",
    "gpt-oss-120b": "gpt-oss-120b",
}


@pytest.mark.parametrize("name", list(PRESET_FILES))
def test_presets_equal_their_full_config_json(name):
    cfg = load_config_file(str(DATA / "configs" / f"{PRESET_FILES[name]}.json"))
    preset = PRESETS[name]
    same = cfg.replace(name=preset.name, source=preset.source, dtype=preset.dtype)
    assert same == preset
    assert cfg.dtype in (preset.dtype, "")  # some copies leave torch_dtype out


def test_from_name_is_forgiving_about_spelling_and_strict_about_names():
    assert from_name("Llama-3-8B") is PRESETS["llama-3-8b"]
    assert from_name("llama38b") is PRESETS["llama-3-8b"]
    with pytest.raises(InputError, match="unknown preset"):
        from_name("llama-9-1t")


def test_head_dim_default_and_explicit():
    assert ModelConfig(layers=1, hidden=64, heads=8, ffn=8, vocab=8).head_dim == 8
    c = ModelConfig(layers=1, hidden=64, heads=8, head_dim=32, ffn=8, vocab=8)
    assert c.q_dim == 256 and c.kv_dim == 256


@pytest.mark.parametrize("kwargs, msg", [
    (dict(layers=0), "at least 1"),
    (dict(hidden=-5), "at least 1"),
    (dict(heads=3), "not divisible"),
    (dict(kv_heads=3), "multiple of KV heads"),
    (dict(mlp="swish"), "mlp must be"),
    (dict(experts=8, experts_per_token=9), "between 1 and 8"),
    (dict(experts=1, experts_per_token=1), "at least 2 experts"),
    (dict(experts_per_token=2), "dense model"),
    (dict(layers=2.5), "whole number"),
    (dict(layers="12"), "whole number"),
    (dict(vocab=10**12), "beyond any real model"),
    (dict(tied_embeddings="yes"), "true or false"),
])
def test_bad_configs_raise_input_error(kwargs, msg):
    base = dict(layers=2, hidden=64, heads=8, ffn=128, vocab=100)
    base.update(kwargs)
    with pytest.raises(InputError, match=msg):
        ModelConfig(**base)


def test_config_is_hashable_and_frozen():
    cfg = from_name("gpt2")
    assert hash(cfg) == hash(from_hf_config(json.loads((DATA / "config_gpt2.json").read_text()), name="gpt2",
                                            source=cfg.source))
    with pytest.raises(AttributeError):
        cfg.layers = 3


@pytest.mark.parametrize("data, msg", [
    (b"{ this is not json ", "not valid JSON"),
    (b"", "empty"),
    (b"[1, 2]", "JSON object"),
    (b"\xff\xfe\x00", "not UTF-8"),
    (b'{"model_type": "bert", "hidden_size": 8}', "not supported"),
    (b'{"hidden_size": 8}', "model_type"),
    (b'{"model_type": 5, "hidden_size": 8}', "field 'model_type' must be a text"),  # (not "a misspelling of")
    (b'{"model_type": ["llama"]}', "must be a text \\(e.g. \"llama\"\\), got a list"),
    (b'{"model_type": "llama", "hidden_size": 64}', "num_attention_heads"),
    (b'{"model_type": "llama", "hidden_size": "64", "num_attention_heads": 8, "num_hidden_layers": 2,'
     b' "intermediate_size": 8, "vocab_size": 8}', "hidden_size must be a whole number"),
    (b'{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 8, "num_hidden_layers": 2,'
     b' "intermediate_size": 8, "vocab_size": 8, "tie_word_embeddings": "no"}', "true or false"),
    (b'{"model_type": "mixtral", "hidden_size": 64, "num_attention_heads": 8, "num_hidden_layers": 2,'
     b' "intermediate_size": 8, "vocab_size": 8}', "num_local_experts"),
])
def test_bad_config_json_gives_clear_messages(data, msg):
    with pytest.raises(InputError, match=msg):
        parse_config_json(data)


def test_huge_config_json_is_refused_before_parsing():
    with pytest.raises(InputError, match="limit"):
        parse_config_json(b" " * 2_000_001)


def test_bad_files_on_disk():
    with pytest.raises(InputError, match="not valid JSON"):
        load_config_file(str(DATA / "config_not_json.json"))
    with pytest.raises(InputError, match="hidden_size"):
        load_config_file(str(DATA / "config_wrong_type.json"))
    with pytest.raises(InputError, match="cannot read"):
        load_config_file(str(DATA / "does_not_exist.json"))


def test_llama_attention_bias_and_mlp_bias_flags():
    base = json.loads((DATA / "config_llama-2-7b.json").read_text())
    plain = from_hf_config(base)
    biased = from_hf_config({**base, "attention_bias": True, "mlp_bias": True})
    d, f, layers = 4096, 11008, 32
    assert biased.params - plain.params == layers * (4 * d + 2 * f + d)


# ----- sizes are bounded before anything proportional to them is made (issue 26 items 1–3) -------------

@pytest.mark.parametrize("layers, spec, words", [
    (1_000_000_000, "alternate", "limit 10,000"),  # the 10,000-layer cap, checked before the letters exist
    (2**64, "all", "about 10"),
    (10**40, "5:1", "beyond any real model"),
    (32, "99999999999999999999:1", "at most 10,000"),  # was an OverflowError ("S" * N)
    (32, "9999999999:1", "at most 10,000"),  # was a MemoryError
    (32, "1:99999999999", "at most 10,000"),
    (32, "S" * 20_000, "limit 10,000 letters"),
    (32, "1" * 5000 + ":1", "two whole numbers"),  # past Python's int-conversion limit
])
def test_layer_pattern_bounds_every_size_first(layers, spec, words):
    with pytest.raises(InputError, match=words):
        layer_pattern(layers, spec)


def test_a_huge_pattern_allocates_nothing_proportional():
    """The shared link of issue 26 (le_swp=1000000000:1) and --layers 10^9: refused while the memory traced
    stays far below one byte per asked-for layer (the old code built "S" * N, 1.9 GB)."""
    import tracemalloc

    tracemalloc.start()
    try:
        for layers, spec in ((48, "1000000000:1"), (48, "20000000000:1"), (1_000_000_000, "alternate"),
                             (1_000_000_000, "all"), (2**64, "3:1")):
            with pytest.raises(InputError):
                layer_pattern(layers, spec)
        with pytest.raises(InputError):
            moe_pattern(1_000_000_000, first_dense=1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 200_000, peak


def test_layer_pattern_still_builds_every_pattern():
    assert layer_pattern(7, "5:1") == "SSSSSFS"
    assert layer_pattern(4, "alternate") == "SFSF"
    assert layer_pattern(5, "sff") == "SFFSF"
    assert layer_pattern(3, "0:2") == "FFF" and layer_pattern(3, "all") == "SSS"
    assert layer_pattern(2, "10000:1") == "SS"  # a unit longer than the model: its first letters
    assert layer_pattern(10_000, "1:1") == "SF" * 5000
    assert moe_pattern(6, first_dense=1, every=2) == "DMDMDM"
    assert moe_pattern(4, dense_layers=(0, 3)) == "DMMD"


# ----- what a refusal says, and a misspelled key (issue 21 item 6) -----------------------------------------

_LLAMA_KEYS = dict(model_type="llama", hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                   num_attention_heads=4, vocab_size=128)


def test_a_misspelled_required_key_is_named_with_the_key_it_probably_meant():
    raw = dict(_LLAMA_KEYS)
    raw["num_hiden_layers"] = raw.pop("num_hidden_layers")
    with pytest.raises(InputError, match="no 'num_hidden_layers' field; it has 'num_hiden_layers': a misspelling"):
        from_hf_config(raw)


def test_a_misspelled_optional_key_is_reported_with_the_default_that_was_used():
    from gemmlib.llm.hf import read_config

    raw = dict(_LLAMA_KEYS, model_type="mistral", num_key_value_heads=2, sliding_windw=8)
    cfg, info = read_config(raw)
    assert cfg.sliding_window == 4096  # the default: the misspelled key changed nothing, and says so
    assert info["misspelled"] == {"sliding_windw": "sliding_window"}
    assert "sliding_windw" in info["unknown_keys"]
    assert any("a misspelling of 'sliding_window'" in str(n) and "4096" in str(n) for n in info["notes"])


@pytest.mark.parametrize("mtype, words", [
    ("bert", "is not supported: transformers 5.24 knows it, but it is not sized here (an encoder"),
    ("t5", "it is not sized here (an encoder-decoder"),
    ("vit", "it is not sized here (not a text decoder"),
    ("openai-gpt", "is not supported: transformers 5.24 knows it, but no reader here is checked"),
    ("lama", "is not recognised: neither transformers 5.24 nor its architectures field names it; did you mean 'llama'"),
    ("my_own_llm", "is not recognised: neither transformers 5.24 nor its architectures field names it; supported"),
])
def test_a_refusal_says_unsupported_or_unrecognised(mtype, words):
    with pytest.raises(InputError, match=re.escape(words)):
        from_hf_config(dict(_LLAMA_KEYS, model_type=mtype))


def test_an_unknown_model_type_is_read_by_its_architectures_field_or_its_structure():
    from gemmlib.llm.hf import read_config

    cfg, info = read_config(dict(_LLAMA_KEYS, model_type="acme_llm", architectures=["LlamaForCausalLM"]))
    assert cfg.family == "llama" and cfg.params == from_hf_config(_LLAMA_KEYS).params
    assert any("LlamaForCausalLM" in str(n) for n in info["notes"])
    mla = dict(model_type="acme_mla", hidden_size=64, num_hidden_layers=2, num_attention_heads=4, vocab_size=128,
               intermediate_size=96, kv_lora_rank=32, qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=12,
               n_routed_experts=4, moe_intermediate_size=32, num_experts_per_tok=2, first_k_dense_replace=1,
               q_lora_rank=None, n_shared_experts=1)
    cfg, info = read_config(mla)
    assert cfg.family == "deepseek_v3" and cfg.is_mla and any("structure" in str(n) for n in info["notes"])
    with pytest.raises(InputError, match="misspelling of 'model_type'"):
        from_hf_config({k if k != "model_type" else "modeltype": v for k, v in _LLAMA_KEYS.items()})


def test_active_parameters_with_and_without_the_input_embedding(capsys):
    """Model cards count a MoE's active parameters two ways: OpenAI's gpt-oss card without the input embedding (5.13 B
    of gpt-oss-120b, 3.61 B of 20b), Mixtral's and Qwen3-30B-A3B's with it (12.9 B, 3.3 B). Both are given; the
    estimate once showed only the first kind's larger figure (5.71 B) beside a card that says 5.13 B."""
    from gemmlib.cli import main

    for name, card, with_embedding in (("gpt-oss-120b", 5.13e9, False), ("gpt-oss-20b", 3.61e9, False),
                                       ("mixtral-8x7b", 12.9e9, True), ("qwen3-30b-a3b", 3.3e9, True)):
        cfg = from_name(name)
        assert cfg.active_params - cfg.active_params_without_embedding == cfg.vocab * cfg.hidden  # untied: the table
        got = cfg.active_params if with_embedding else cfg.active_params_without_embedding
        assert got == pytest.approx(card, rel=0.02), name  # (the cards round: Qwen's 3.35 B is "3.3B")
    tied = from_name("qwen2.5-0.5b")  # the table is the LM head too: multiplied, so active
    assert tied.tied_embeddings and tied.lookup_params == 0
    assert from_name("gpt2").lookup_params == 1024 * 768  # learned positions (its table is tied)
    assert main(["estimate", "--preset", "gpt-oss-120b"]) == 0
    assert ("gpt-oss-120b: 116,829,156,672 parameters (5,711,982,912 active per token, 5,132,849,472 without the input "
            "embedding)") in capsys.readouterr().out


def test_a_broken_file_is_named_by_its_own_name(tmp_path):
    """An upload or a --config file that is not JSON was always called "config.json", whatever its name."""
    from gemmlib.llm.hf import read_config_file, read_config_json

    for data, said in ((b"{ x", "mistral-7b.json is not valid JSON"), (b"", "mistral-7b.json is empty"),
                       (b"\xff\xfe", "mistral-7b.json is not UTF-8 text")):
        with pytest.raises(InputError, match=said):
            read_config_json(data, file_name="mistral-7b.json")
        path = tmp_path / "mistral-7b.json"
        path.write_bytes(data)
        with pytest.raises(InputError, match=said):
            read_config_file(str(path))
    with pytest.raises(InputError, match="^config.json is not valid JSON"):
        read_config_json(b"{ x")  # no file: the usual name
    with pytest.raises(InputError, match="^deep.json is nested too deeply to be a model configuration"):
        read_config_json(b"[" * 100_000 + b"]" * 100_000, file_name="deep.json")
    with pytest.raises(InputError, match="^huge.json holds a value that cannot be read"):
        read_config_json(b'{"hidden_size": ' + b"9" * 5000 + b"}", file_name="huge.json")
