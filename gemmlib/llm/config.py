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

import numbers
from dataclasses import asdict, dataclass, fields

from gemmlib.core.errors import InputError

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
