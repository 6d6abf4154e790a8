"""Decoder-only transformer configurations: presets, Hugging Face config.json, exact parameter counts.

A :class:`ModelConfig` holds every field the accounting needs (layers, widths,
heads, MLP kind, biases, norms, learned positions, mixture of experts) and
nothing else. It is a frozen dataclass, so it hashes and can key
``st.cache_data``.

Presets are built from the fields of each model's published ``config.json``
(named beside it) through the same parser a user's upload goes through, so the
parser is exercised by every preset. Parameter counts are exact: embeddings,
position table, norms (RMSNorm: a weight; LayerNorm: weight and bias), biases,
an untied LM head and every expert. ``tests/test_model.py`` checks each preset
against the published checkpoint total and against ``numel()`` of the same
architecture built on torch's meta device.

This module never imports torch.
"""

from __future__ import annotations

import json
import numbers
from dataclasses import asdict, dataclass, fields

from gemmlib.errors import InputError

MLP_KINDS = ("gated", "plain")
NORM_KINDS = ("rms", "layer")

# Caps against absurd input (a user's config.json or CLI flags), far above any real model.
_CAPS = {
    "layers": 10_000,
    "hidden": 1_000_000,
    "heads": 100_000,
    "kv_heads": 100_000,
    "head_dim": 100_000,
    "ffn": 10_000_000,
    "vocab": 100_000_000,
    "experts": 100_000,
    "experts_per_token": 100_000,
    "learned_positions": 100_000_000,
}


def _whole(name: str, value, *, minimum: int = 1) -> int:
    """A whole number >= minimum, or an InputError naming the field."""
    if isinstance(value, bool) or value is None:
        raise InputError(f"{name} must be a whole number, got {value!r}")
    if isinstance(value, float):
        if not value.is_integer():
            raise InputError(f"{name} must be a whole number, got {value!r}")
        value = int(value)
    if isinstance(value, numbers.Integral):
        value = int(value)
    if not isinstance(value, int):
        raise InputError(f"{name} must be a whole number, got {value!r}")
    if value < minimum:
        raise InputError(f"{name} must be at least {minimum}, got {value}")
    cap = _CAPS.get(name)
    if cap is not None and value > cap:
        raise InputError(f"{name} = {value} is beyond any real model (limit {cap:,})")
    return value


@dataclass(frozen=True)
class ModelConfig:
    """A decoder-only transformer, as much as FLOPs, bytes and parameter counts need.

    ``head_dim = 0`` means hidden // heads. ``experts = 0`` is a dense MLP;
    ``experts = E`` with ``experts_per_token = k`` is a mixture of experts whose
    router is a hidden × E GEMM and whose every token runs through k experts.
    ``learned_positions`` is the size of a learned position table (GPT-2: 1024),
    0 for rotary models.
    """

    layers: int
    hidden: int
    heads: int
    ffn: int
    vocab: int
    kv_heads: int = 0  # 0: same as heads (multi-head attention)
    head_dim: int = 0  # 0: hidden // heads
    mlp: str = "gated"  # "gated" (SwiGLU: gate, up, down) or "plain" (up, down)
    tied_embeddings: bool = False
    norm: str = "rms"  # "rms" (weight only) or "layer" (weight and bias)
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    learned_positions: int = 0
    experts: int = 0
    experts_per_token: int = 0
    name: str = "custom"
    source: str = ""

    def __post_init__(self) -> None:
        for f in ("layers", "hidden", "heads", "ffn", "vocab"):
            object.__setattr__(self, f, _whole(f, getattr(self, f)))
        for f in ("kv_heads", "head_dim", "learned_positions", "experts", "experts_per_token"):
            object.__setattr__(self, f, _whole(f, getattr(self, f), minimum=0))
        if self.kv_heads == 0:
            object.__setattr__(self, "kv_heads", self.heads)
        if self.head_dim == 0:
            if self.hidden % self.heads:
                raise InputError(
                    f"hidden size {self.hidden} is not divisible by {self.heads} heads; "
                    "give the head dimension explicitly")
            object.__setattr__(self, "head_dim", self.hidden // self.heads)
        if self.heads % self.kv_heads:
            raise InputError(f"{self.heads} query heads cannot be shared evenly by {self.kv_heads} KV heads "
                             "(query heads must be a multiple of KV heads)")
        if self.mlp not in MLP_KINDS:
            raise InputError(f"mlp must be one of {', '.join(MLP_KINDS)}, got {self.mlp!r}")
        if self.norm not in NORM_KINDS:
            raise InputError(f"norm must be one of {', '.join(NORM_KINDS)}, got {self.norm!r}")
        if self.experts == 1:
            raise InputError("a mixture of experts needs at least 2 experts (use 0 for a dense MLP)")
        if self.experts:
            if self.experts_per_token < 1 or self.experts_per_token > self.experts:
                raise InputError(f"experts per token must be between 1 and {self.experts}, "
                                 f"got {self.experts_per_token}")
        elif self.experts_per_token:
            raise InputError("experts per token is set but experts is 0 (a dense model)")
        for f in ("tied_embeddings", "qkv_bias", "o_bias", "mlp_bias"):
            if not isinstance(getattr(self, f), bool):
                raise InputError(f"{f} must be true or false, got {getattr(self, f)!r}")

    # ----- derived shapes -------------------------------------------------------------
    @property
    def q_dim(self) -> int:
        """Width of all query heads together (heads · head_dim)."""
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        """Width of all key (or value) heads together (kv_heads · head_dim)."""
        return self.kv_heads * self.head_dim

    @property
    def is_moe(self) -> bool:
        return self.experts > 0

    @property
    def mlp_mats(self) -> int:
        """Weight matrices per MLP (per expert): 3 gated, 2 plain."""
        return 3 if self.mlp == "gated" else 2

    @property
    def active_experts(self) -> int:
        """MLPs a token runs through: k for a MoE, 1 for a dense model."""
        return self.experts_per_token if self.is_moe else 1

    @property
    def stored_experts(self) -> int:
        return self.experts if self.is_moe else 1

    # ----- parameter counts -----------------------------------------------------------
    def _norm_params(self) -> int:
        return self.hidden * (2 if self.norm == "layer" else 1)

    def _attn_params(self) -> int:
        p = 2 * self.hidden * self.q_dim + 2 * self.hidden * self.kv_dim
        if self.qkv_bias:
            p += self.q_dim + 2 * self.kv_dim
        if self.o_bias:
            p += self.hidden
        return p

    def _mlp_params(self) -> int:
        """One MLP (one expert)."""
        p = self.mlp_mats * self.hidden * self.ffn
        if self.mlp_bias:
            p += (self.mlp_mats - 1) * self.ffn + self.hidden
        return p

    def _router_params(self) -> int:
        return self.hidden * self.experts if self.is_moe else 0

    def param_breakdown(self) -> dict[str, int]:
        """Exact parameter counts by part; the values add up to :meth:`params`."""
        layer_norms = 2 * self._norm_params()
        return {
            "embedding": self.vocab * self.hidden,
            "positions": self.learned_positions * self.hidden,
            "attention": self.layers * self._attn_params(),
            "mlp": self.layers * self.stored_experts * self._mlp_params(),
            "router": self.layers * self._router_params(),
            "norms": self.layers * layer_norms + self._norm_params(),
            "lm_head": 0 if self.tied_embeddings else self.vocab * self.hidden,
        }

    @property
    def params(self) -> int:
        """Every stored weight: embeddings, positions, norms, biases, untied head, all experts."""
        return sum(self.param_breakdown().values())

    @property
    def active_params(self) -> int:
        """Weights one token touches: as :attr:`params` but only k experts' MLPs."""
        b = self.param_breakdown()
        b["mlp"] = self.layers * self.active_experts * self._mlp_params()
        return sum(b.values())

    @property
    def matmul_params(self) -> int:
        """Weights a token multiplies (the 2·N rule's N): active params less embeddings/positions,
        norms and biases, plus the LM head (the tied embedding when tied)."""
        per_layer = (2 * self.hidden * self.q_dim + 2 * self.hidden * self.kv_dim
                     + self.active_experts * self.mlp_mats * self.hidden * self.ffn
                     + self._router_params())
        return self.layers * per_layer + self.vocab * self.hidden

    def kv_bytes_per_token(self, kv_bytes: float) -> float:
        """KV-cache bytes one token of one sequence takes: 2 · layers · kv_heads · head_dim · bytes."""
        return 2 * self.layers * self.kv_dim * kv_bytes

    def summary(self) -> dict:
        d = asdict(self)
        d["params"] = self.params
        d["active_params"] = self.active_params
        return d

    def replace(self, **changes) -> ModelConfig:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d.update(changes)
        return ModelConfig(**d)


# ----- Hugging Face config.json ----------------------------------------------------------

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
