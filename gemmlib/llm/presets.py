"""Presets: published models, each built from the fields of its ``config.json`` (named beside it)
through the same parser an upload goes through, with the checkpoint's published parameter count.
"""

from __future__ import annotations

from gemmlib.core.errors import InputError
from gemmlib.llm.config import ModelConfig
from gemmlib.llm.hf import from_hf_config

# ----- presets ------------------------------------------------------------------------------
# The fields each model's config.json on the Hugging Face hub gives (only those the count needs).
_HF = "https://huggingface.co/{}/blob/main/config.json"


_PRESET_SOURCES: dict[str, tuple[str, dict]] = {
    "llama-2-7b": ("meta-llama/Llama-2-7b-hf", {
        "model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32000,
        "tie_word_embeddings": False}),
    "llama-2-13b": ("meta-llama/Llama-2-13b-hf", {
        "model_type": "llama", "hidden_size": 5120, "intermediate_size": 13824, "num_hidden_layers": 40,
        "num_attention_heads": 40, "num_key_value_heads": 40, "vocab_size": 32000,
        "tie_word_embeddings": False}),
    "llama-2-70b": ("meta-llama/Llama-2-70b-hf", {
        "model_type": "llama", "hidden_size": 8192, "intermediate_size": 28672, "num_hidden_layers": 80,
        "num_attention_heads": 64, "num_key_value_heads": 8, "vocab_size": 32000,
        "tie_word_embeddings": False}),
    "llama-3-8b": ("meta-llama/Meta-Llama-3-8B", {
        "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
        "tie_word_embeddings": False}),
    "llama-3-70b": ("meta-llama/Meta-Llama-3-70B", {
        "model_type": "llama", "hidden_size": 8192, "intermediate_size": 28672, "num_hidden_layers": 80,
        "num_attention_heads": 64, "num_key_value_heads": 8, "vocab_size": 128256,
        "tie_word_embeddings": False}),
    "mistral-7b": ("mistralai/Mistral-7B-v0.1", {
        "model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000,
        "tie_word_embeddings": False}),
    "mixtral-8x7b": ("mistralai/Mixtral-8x7B-v0.1", {
        "model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000,
        "num_local_experts": 8, "num_experts_per_tok": 2, "tie_word_embeddings": False}),
    "qwen2.5-0.5b": ("Qwen/Qwen2.5-0.5B", {
        "model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
        "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 151936,
        "tie_word_embeddings": True}),
    "qwen2.5-7b": ("Qwen/Qwen2.5-7B", {
        "model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
        "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064,
        "tie_word_embeddings": False}),
    "gpt2": ("openai-community/gpt2", {
        "model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "n_positions": 1024,
        "n_inner": None, "vocab_size": 50257, "tie_word_embeddings": True}),
}


PRESETS: dict[str, ModelConfig] = {
    name: from_hf_config(fields_, name=name, source=_HF.format(repo))
    for name, (repo, fields_) in _PRESET_SOURCES.items()
}


# Published totals of the checkpoints (every tensor in the safetensors / pytorch_model.bin).
PUBLISHED_PARAMS: dict[str, int] = {
    "llama-2-7b": 6_738_415_616,
    "llama-2-13b": 13_015_864_320,
    "llama-2-70b": 68_976_648_192,
    "llama-3-8b": 8_030_261_248,
    "llama-3-70b": 70_553_706_496,
    "mistral-7b": 7_241_732_096,
    "mixtral-8x7b": 46_702_792_704,
    "qwen2.5-0.5b": 494_032_768,
    "qwen2.5-7b": 7_615_616_512,
    "gpt2": 124_439_808,
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
    raise InputError(f"unknown preset {name!r}; choose one of: {', '.join(PRESETS)}")
