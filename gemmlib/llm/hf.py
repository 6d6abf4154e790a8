"""Hugging Face ``config.json`` -> :class:`ModelConfig`: plain data is read and validated, nothing
is executed. Missing or mistyped fields raise InputError naming the field.
"""

from __future__ import annotations

import json

from gemmlib.core.errors import InputError
from gemmlib.llm.config import ModelConfig, _whole

MAX_CONFIG_BYTES = 1_000_000  # a config.json is a few kB; refuse anything this large


SUPPORTED_MODEL_TYPES = ("llama", "mistral", "mixtral", "qwen2", "gpt2")


def _get(d: dict, key: str, default=None, *, required: bool = True):
    if key in d and d[key] is not None:
        return d[key]
    if default is None and required:
        raise InputError(f"config.json has no {key!r} field")
    return default


def _flag(d: dict, key: str, default: bool) -> bool:
    v = d.get(key, default)
    if v is None:
        return default
    if not isinstance(v, bool):
        raise InputError(f"config.json field {key!r} must be true or false, got {v!r}")
    return v


def from_hf_config(cfg: dict, name: str = "custom", source: str = "") -> ModelConfig:
    """A ModelConfig from the fields of a Hugging Face ``config.json`` (already parsed).

    Known model types: llama, mistral, mixtral, qwen2 (q/k/v biases), gpt2. Only
    plain data is read; nothing is executed. Missing or mistyped fields raise
    InputError naming the field.
    """
    if not isinstance(cfg, dict):
        raise InputError("config.json must hold a JSON object ({...}) at the top level")
    mtype = cfg.get("model_type")
    if not isinstance(mtype, str):
        raise InputError("config.json has no 'model_type' string field (e.g. \"llama\")")
    mtype = mtype.lower()
    if mtype not in SUPPORTED_MODEL_TYPES:
        raise InputError(f"model_type {mtype!r} is not supported; supported: {', '.join(SUPPORTED_MODEL_TYPES)} "
                         "(or enter the shape with the custom inputs)")
    if mtype == "gpt2":
        hidden = _whole("n_embd", _get(cfg, "n_embd"))
        inner = cfg.get("n_inner")
        return ModelConfig(
            layers=_whole("n_layer", _get(cfg, "n_layer")), hidden=hidden,
            heads=_whole("n_head", _get(cfg, "n_head")),
            ffn=4 * hidden if inner is None else _whole("n_inner", inner),
            vocab=_whole("vocab_size", _get(cfg, "vocab_size")),
            mlp="plain", norm="layer", qkv_bias=True, o_bias=True, mlp_bias=True,
            tied_embeddings=_flag(cfg, "tie_word_embeddings", True),
            learned_positions=_whole("n_positions", _get(cfg, "n_positions")),
            name=name, source=source,
        )
    heads = _whole("num_attention_heads", _get(cfg, "num_attention_heads"))
    kv = cfg.get("num_key_value_heads")
    head_dim = cfg.get("head_dim")
    experts = cfg.get("num_local_experts") if mtype == "mixtral" else None
    if mtype == "mixtral" and experts is None:
        raise InputError("a mixtral config.json needs 'num_local_experts'")
    attention_bias = _flag(cfg, "attention_bias", False) if mtype == "llama" else False
    return ModelConfig(
        layers=_whole("num_hidden_layers", _get(cfg, "num_hidden_layers")),
        hidden=_whole("hidden_size", _get(cfg, "hidden_size")),
        heads=heads,
        kv_heads=heads if kv is None else _whole("num_key_value_heads", kv),
        head_dim=0 if head_dim is None else _whole("head_dim", head_dim),
        ffn=_whole("intermediate_size", _get(cfg, "intermediate_size")),
        vocab=_whole("vocab_size", _get(cfg, "vocab_size")),
        mlp="gated", norm="rms",
        tied_embeddings=_flag(cfg, "tie_word_embeddings", False),
        # Qwen2 always has q/k/v biases; Llama has them (and an o_proj bias) only with attention_bias.
        qkv_bias=True if mtype == "qwen2" else attention_bias,
        o_bias=attention_bias,
        mlp_bias=_flag(cfg, "mlp_bias", False) if mtype == "llama" else False,
        experts=0 if experts is None else _whole("num_local_experts", experts),
        experts_per_token=0 if experts is None else _whole(
            "num_experts_per_tok", _get(cfg, "num_experts_per_tok")),
        name=name, source=source,
    )


def parse_config_json(data: bytes | str, name: str = "uploaded") -> ModelConfig:
    """Parse the text of a config.json (an upload or a file) with size and type checks."""
    if isinstance(data, str):
        data = data.encode("utf-8", errors="replace")
    if len(data) > MAX_CONFIG_BYTES:
        raise InputError(f"config.json is {len(data):,} bytes; a real one is a few kB "
                         f"(limit {MAX_CONFIG_BYTES:,})")
    if not data.strip():
        raise InputError("config.json is empty")
    try:
        obj = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError("config.json is not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise InputError(f"config.json is not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}") from None
    return from_hf_config(obj, name=name)


def load_config_file(path: str) -> ModelConfig:
    """Read and parse a config.json from disk (the CLI's ``--config``)."""
    import os

    try:
        size = os.path.getsize(path)
        if size > MAX_CONFIG_BYTES:
            raise InputError(f"{path} is {size:,} bytes; a config.json is a few kB (limit {MAX_CONFIG_BYTES:,})")
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}") from None
    return parse_config_json(data, name=os.path.basename(os.path.dirname(os.path.abspath(path))) or "config")
