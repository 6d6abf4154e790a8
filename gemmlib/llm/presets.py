"""Presets: published models, each built from the fields of its ``config.json`` (named beside it)
through the same parser an upload goes through, with the checkpoint's published parameter count.

The fields are those of the Hub file that change a shape, a count or a byte (token ids, RoPE settings
and the like are left out). ``tests/llm/test_model.py`` parses the full copy of each file kept in
``tests/data/configs/`` (sources in its README) and checks it gives the same preset, and checks every
count against :data:`PUBLISHED_PARAMS`.
"""

from __future__ import annotations

from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_
from gemmlib.llm.config import ModelConfig
from gemmlib.llm.hf import from_hf_config

# ----- presets ------------------------------------------------------------------------------
_HF = "https://huggingface.co/{}/blob/main/config.json"

_LLAMA3 = {"model_type": "llama", "vocab_size": 128256, "max_position_embeddings": 131072, "head_dim": 128,
           "num_key_value_heads": 8, "torch_dtype": "bfloat16", "tie_word_embeddings": False}
_QWEN3 = {"model_type": "qwen3", "vocab_size": 151936, "head_dim": 128, "num_key_value_heads": 8,
          "max_position_embeddings": 40960, "tie_word_embeddings": False, "use_sliding_window": False,
          "torch_dtype": "bfloat16"}
_QWEN3_MOE = {"model_type": "qwen3_moe", "vocab_size": 151936, "head_dim": 128, "num_key_value_heads": 4,
              "num_experts": 128, "num_experts_per_tok": 8, "decoder_sparse_step": 1, "mlp_only_layers": [],
              "use_sliding_window": False, "sliding_window": None, "tie_word_embeddings": False,
              "torch_dtype": "bfloat16"}
_GPT_OSS = {"model_type": "gpt_oss", "vocab_size": 201088, "hidden_size": 2880, "intermediate_size": 2880,
            "head_dim": 64, "num_attention_heads": 64, "num_key_value_heads": 8, "num_experts_per_tok": 4,
            "sliding_window": 128, "attention_bias": True, "max_position_embeddings": 131072,
            "tie_word_embeddings": False,
            # the Hub file's quantization_config: the experts are MXFP4, everything else bf16
            "quantization_config": {"modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                                                               "model.embed_tokens", "lm_head"],
                                    "quant_method": "mxfp4"}}

_PRESET_SOURCES: dict[str, tuple[str, dict]] = {
    "llama-2-7b": ("meta-llama/Llama-2-7b-hf", {
        "model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32000,
        "tie_word_embeddings": False, "max_position_embeddings": 4096, "torch_dtype": "float16"}),
    "llama-2-13b": ("meta-llama/Llama-2-13b-hf", {
        "model_type": "llama", "hidden_size": 5120, "intermediate_size": 13824, "num_hidden_layers": 40,
        "num_attention_heads": 40, "num_key_value_heads": 40, "vocab_size": 32000,
        "tie_word_embeddings": False, "max_position_embeddings": 4096, "torch_dtype": "float16"}),
    "llama-2-70b": ("meta-llama/Llama-2-70b-hf", {
        "model_type": "llama", "hidden_size": 8192, "intermediate_size": 28672, "num_hidden_layers": 80,
        "num_attention_heads": 64, "num_key_value_heads": 8, "vocab_size": 32000,
        "tie_word_embeddings": False, "max_position_embeddings": 4096, "torch_dtype": "float16"}),
    "llama-3-8b": ("meta-llama/Meta-Llama-3-8B", {
        "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
        "tie_word_embeddings": False, "max_position_embeddings": 8192, "torch_dtype": "bfloat16"}),
    "llama-3-70b": ("meta-llama/Meta-Llama-3-70B", {
        "model_type": "llama", "hidden_size": 8192, "intermediate_size": 28672, "num_hidden_layers": 80,
        "num_attention_heads": 64, "num_key_value_heads": 8, "vocab_size": 128256,
        "tie_word_embeddings": False, "max_position_embeddings": 8192, "torch_dtype": "bfloat16"}),
    "llama-3.1-8b": ("meta-llama/Llama-3.1-8B", dict(
        _LLAMA3, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32)),
    "llama-3.1-70b": ("meta-llama/Llama-3.1-70B", dict(
        _LLAMA3, hidden_size=8192, intermediate_size=28672, num_hidden_layers=80, num_attention_heads=64)),
    "llama-3.1-405b": ("meta-llama/Llama-3.1-405B", dict(
        _LLAMA3, hidden_size=16384, intermediate_size=53248, num_hidden_layers=126, num_attention_heads=128)),
    "llama-3.2-1b": ("meta-llama/Llama-3.2-1B", dict(
        _LLAMA3, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
        head_dim=64, tie_word_embeddings=True)),
    "llama-3.2-3b": ("meta-llama/Llama-3.2-3B", dict(
        _LLAMA3, hidden_size=3072, intermediate_size=8192, num_hidden_layers=28, num_attention_heads=24,
        tie_word_embeddings=True)),
    "mistral-7b": ("mistralai/Mistral-7B-v0.1", {
        "model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000, "sliding_window": 4096,
        "max_position_embeddings": 32768, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}),
    "mistral-small-24b": ("mistralai/Mistral-Small-24B-Instruct-2501", {
        "model_type": "mistral", "hidden_size": 5120, "intermediate_size": 32768, "num_hidden_layers": 40,
        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 131072,
        "sliding_window": None, "max_position_embeddings": 32768, "tie_word_embeddings": False}),
    "mixtral-8x7b": ("mistralai/Mixtral-8x7B-v0.1", {
        "model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000,
        "num_local_experts": 8, "num_experts_per_tok": 2, "tie_word_embeddings": False, "sliding_window": None,
        "max_position_embeddings": 32768, "torch_dtype": "bfloat16"}),
    "qwen2.5-0.5b": ("Qwen/Qwen2.5-0.5B", {
        "model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
        "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 151936,
        "tie_word_embeddings": True, "max_position_embeddings": 32768, "use_sliding_window": False,
        "torch_dtype": "bfloat16"}),
    "qwen2.5-7b": ("Qwen/Qwen2.5-7B-Instruct", {
        "model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
        "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064,
        "tie_word_embeddings": False, "max_position_embeddings": 32768, "use_sliding_window": False,
        "torch_dtype": "bfloat16"}),
    "qwen3-8b": ("Qwen/Qwen3-8B", dict(
        _QWEN3, hidden_size=4096, intermediate_size=12288, num_hidden_layers=36, num_attention_heads=32)),
    "qwen3-32b": ("Qwen/Qwen3-32B", dict(
        _QWEN3, hidden_size=5120, intermediate_size=25600, num_hidden_layers=64, num_attention_heads=64)),
    "qwen3-30b-a3b": ("Qwen/Qwen3-30B-A3B-Base", dict(
        _QWEN3_MOE, hidden_size=2048, intermediate_size=6144, moe_intermediate_size=768, num_hidden_layers=48,
        num_attention_heads=32, max_position_embeddings=32768)),
    "qwen3-235b-a22b": ("Qwen/Qwen3-235B-A22B-Thinking-2507", dict(
        _QWEN3_MOE, hidden_size=4096, intermediate_size=12288, moe_intermediate_size=1536, num_hidden_layers=94,
        num_attention_heads=64, max_position_embeddings=262144)),
    "gemma-3-1b": ("google/gemma-3-1b-it", {
        "model_type": "gemma3_text", "hidden_size": 1152, "intermediate_size": 6912, "num_hidden_layers": 26,
        "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 256, "vocab_size": 262144,
        "sliding_window": 512, "sliding_window_pattern": 6, "max_position_embeddings": 32768,
        "torch_dtype": "bfloat16"}),
    "phi-4": ("microsoft/phi-4", {
        "model_type": "phi3", "hidden_size": 5120, "intermediate_size": 17920, "num_hidden_layers": 40,
        "num_attention_heads": 40, "num_key_value_heads": 10, "vocab_size": 100352, "sliding_window": None,
        "max_position_embeddings": 16384, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}),
    "deepseek-v3": ("deepseek-ai/DeepSeek-V3", {
        "model_type": "deepseek_v3", "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048,
        "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128, "n_shared_experts": 1,
        "n_routed_experts": 256, "num_experts_per_tok": 8, "first_k_dense_replace": 3, "kv_lora_rank": 512,
        "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
        "num_nextn_predict_layers": 1, "vocab_size": 129280, "max_position_embeddings": 163840,
        "tie_word_embeddings": False, "torch_dtype": "bfloat16",
        # the Hub checkpoint is fp8 (DeepSeek's README_WEIGHTS.md)
        "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                                "weight_block_size": [128, 128]}}),
    "gpt-oss-20b": ("openai/gpt-oss-20b", dict(_GPT_OSS, num_hidden_layers=24, num_local_experts=32)),
    "gpt-oss-120b": ("openai/gpt-oss-120b", dict(_GPT_OSS, num_hidden_layers=36, num_local_experts=128)),
    "gpt2": ("openai-community/gpt2", {
        "model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "n_positions": 1024,
        "n_inner": None, "vocab_size": 50257, "tie_word_embeddings": True}),
}


PRESETS: dict[str, ModelConfig] = {
    name: from_hf_config(fields_, name=name, source=_HF.format(repo))
    for name, (repo, fields_) in _PRESET_SOURCES.items()
}


# Published parameter counts of the checkpoints (the Hub's safetensors totals, or the model card's exact
# figure), as ``sum(p.numel() for p in model.parameters())`` counts them.
PUBLISHED_PARAMS: dict[str, int] = {
    "llama-2-7b": 6_738_415_616,
    "llama-2-13b": 13_015_864_320,
    "llama-2-70b": 68_976_648_192,
    "llama-3-8b": 8_030_261_248,
    "llama-3-70b": 70_553_706_496,
    "llama-3.1-8b": 8_030_261_248,
    "llama-3.1-70b": 70_553_706_496,
    "llama-3.1-405b": 405_853_388_800,
    "llama-3.2-1b": 1_235_814_400,
    "llama-3.2-3b": 3_212_749_824,
    "mistral-7b": 7_241_732_096,
    "mistral-small-24b": 23_572_403_200,
    "mixtral-8x7b": 46_702_792_704,
    "qwen2.5-0.5b": 494_032_768,
    "qwen2.5-7b": 7_615_616_512,
    "qwen3-8b": 8_190_735_360,
    "qwen3-32b": 32_762_123_264,
    "qwen3-30b-a3b": 30_532_122_624,
    "qwen3-235b-a22b": 235_093_634_560,
    "gemma-3-1b": 999_885_952,
    "phi-4": 14_659_507_200,
    "gpt-oss-20b": 20_914_757_184,
    "gpt-oss-120b": 116_829_156_672,
    "gpt2": 124_439_808,
}

# Checkpoints whose published total counts every stored tensor element: DeepSeek-V3's Hub total
# includes its multi-token-prediction layer, the router score-bias buffers and the fp8 scale tensors
# (``gemmlib.llm.checkpoint.checkpoint_size(...).elements``).
PUBLISHED_CHECKPOINT_ELEMENTS: dict[str, int] = {
    "deepseek-v3": 684_531_386_000,
}


DEFAULT_PRESET = "llama-3-8b"


def preset_names() -> list[str]:
    return list(PRESETS)


def from_name(name: str) -> ModelConfig:
    """A preset by name (case-insensitive; "llama3-8b" and "Llama-3-8B" both work)."""
    key = str(name).strip().lower()
    if key in PRESETS:
        return PRESETS[key]
    squash = key.replace("-", "").replace("_", "").replace(" ", "")
    for k, v in PRESETS.items():
        if k.replace("-", "") == squash:
            return v
    raise InputError(N_("unknown preset {name!r}; choose one of: {choices}"),
                     name=str(name)[:60], choices=", ".join(PRESETS))
