"""Remote-code model types read through the transformers class that has their architecture.

Some of the most used checkpoints on the Hub ship their own modeling code (``trust_remote_code``) under a
``model_type`` transformers 5.24 does not define, while their block is exactly one transformers has: ChatGLM2/3
and GLM-4-9B-chat's remote ``chatglm`` is transformers' ``glm`` (GLM-4's port), Qwen-1's ``qwen`` is ``qwen2``
(q/k/v biases, a SwiGLU MLP of half its ``intermediate_size``), Baichuan's ``baichuan`` (W_pack: q|k|v in one
matrix) and InternLM's ``internlm`` (q/k/v/o biases when ``bias``) are ``llama``, MiniCPM's ``minicpm`` is ``llama``
with its embedding tied and µP scalings (element-wise), MiniMax-Text-01's and M1's are ``minimax`` (whose reader
reads their keys as they are). :func:`translate` renames such a config's keys to the
port's, refuses with the reason what the port does not build (ChatGLM-6B v1's GLM-130B block, biases on ChatGLM's
dense layers, Qwen-1 without ``no_bias``, MiniCPM's experts or sparse attention), and names the keys it read as
changing no count. ``tests/llm/test_remote.py`` builds each port from the translated keys and checks the counts,
and the released shapes against their cards.

This module never imports torch.
"""

from __future__ import annotations

from collections.abc import Callable

from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_, Text


def _rename(cfg: dict, names: dict[str, str]) -> dict:
    """``cfg`` with each key of ``names`` given the port's name (the port's own spelling wins when both are there)."""
    out = {k: v for k, v in cfg.items() if k not in names}
    for old, new in names.items():
        if old in cfg and new not in out:
            out[new] = cfg[old]
    return out


def _chatglm(cfg: dict) -> dict:
    if "inner_hidden_size" in cfg or "position_encoding_2d" in cfg:
        raise InputError(N_("chatglm: this is ChatGLM-6B's first release (GLM-130B's block: 2-D positions, "
                            "post-norm with a residual scale, a GELU MLP), which transformers has no port of; "
                            "ChatGLM2/3 and GLM-4-9B-chat (ffn_hidden_size, padded_vocab_size) are read as glm"))
    for key, ported, why in (("add_bias_linear", False, N_("biases on the dense and MLP layers")),
                             ("rmsnorm", True, N_("LayerNorm instead of RMSNorm")),
                             ("apply_residual_connection_post_layernorm", False, N_("residuals after the norm")),
                             ("post_layer_norm", True, N_("no final norm"))):
        if key in cfg and cfg[key] is not ported:
            raise InputError(N_("chatglm: {key} = {value!r} ({why}) is not what transformers' GLM port builds"),
                             key=key, value=cfg[key], why=Text(why))
    out = _rename(cfg, {"num_layers": "num_hidden_layers", "padded_vocab_size": "vocab_size",
                        "ffn_hidden_size": "intermediate_size", "kv_channels": "head_dim",
                        "add_qkv_bias": "attention_bias", "seq_length": "max_position_embeddings"})
    if "num_key_value_heads" not in out:
        mqa = cfg.get("multi_query_attention", False)
        if mqa is True and "multi_query_group_num" in cfg:
            out["num_key_value_heads"] = cfg["multi_query_group_num"]
        elif mqa is not True:
            out["num_key_value_heads"] = cfg.get("num_attention_heads")
    out.setdefault("attention_bias", False)
    out.setdefault("tie_word_embeddings", False)
    return out


def _qwen(cfg: dict) -> dict:
    if cfg.get("no_bias", True) is not True:
        raise InputError(N_("qwen: no_bias = false (biases on c_proj and the MLP) is not what transformers' Qwen2 port "
                            "builds"))
    out = _rename(cfg, {"kv_channels": "head_dim", "seq_length": "max_position_embeddings"})
    size = cfg.get("intermediate_size")
    if isinstance(size, int) and not isinstance(size, bool):  # w1 and w2 are each half of it (ff_dim_in)
        out["intermediate_size"] = size // 2
    out.setdefault("num_key_value_heads", cfg.get("num_attention_heads"))
    out.setdefault("tie_word_embeddings", False)
    return out


def _baichuan(cfg: dict) -> dict:
    out = _rename(cfg, {"model_max_length": "max_position_embeddings"})
    out.setdefault("tie_word_embeddings", False)
    return out


def _internlm(cfg: dict) -> dict:
    out = _rename(cfg, {"bias": "attention_bias"})
    out.setdefault("tie_word_embeddings", False)
    return out


def _minicpm(cfg: dict) -> dict:
    if (cfg.get("num_experts") or 0) > 1:
        raise InputError(N_("minicpm: a mixture of experts (num_experts {n}) is MiniCPM-MoE's own remote code, which "
                            "transformers has no port of"), n=cfg["num_experts"])
    if cfg.get("sparse_config"):
        raise InputError(N_("minicpm: sparse_config (MiniCPM4's trainable sparse attention) is not in transformers' "
                            "Llama port; this estimator does not size it"))
    out = dict(cfg)
    out.setdefault("tie_word_embeddings", True)
    return out


def _as_is(cfg: dict) -> dict:
    return dict(cfg)


# remote model_type -> (the transformers family it is read as, the key translation, keys read that change no count)
PORTS: dict[str, tuple[str, Callable[[dict], dict], frozenset[str]]] = {
    # MiniMax-Text-01 and M1: MiniMaxForCausalLM; the minimax reader reads their own keys (attn_type_list, postnorm)
    **dict.fromkeys(("minimax_text_01", "minimax_m1"), ("minimax", _as_is, frozenset())),
    "chatglm": ("glm", _chatglm, frozenset({
        "multi_query_attention", "multi_query_group_num", "rmsnorm", "apply_residual_connection_post_layernorm",
        "post_layer_norm", "add_bias_linear", "layernorm_epsilon", "apply_query_key_layer_scaling",
        "attention_softmax_in_fp32", "bias_dropout_fusion", "fp32_residual_connection", "quantization_bit",
        "pre_seq_len", "prefix_projection", "hidden_dropout", "classifier_dropout", "rope_ratio", "original_rope",
        "interleaved_qkv", "auto_map"})),
    "qwen": ("qwen2", _qwen, frozenset({
        "no_bias", "layer_norm_epsilon", "rotary_pct", "rotary_emb_base", "use_flash_attn", "use_logn_attn",
        "use_dynamic_ntk", "scale_attn_weights", "bf16", "fp16", "fp32", "onnx_safe", "softmax_in_fp32",
        "use_cache_quantization", "use_cache_kernel", "emb_dropout_prob", "attn_dropout_prob", "auto_map"})),
    "baichuan": ("llama", _baichuan, frozenset({"z_loss_weight", "auto_map", "gradient_checkpointing"})),
    "internlm": ("llama", _internlm, frozenset({"rotary", "auto_map"})),
    "minicpm": ("llama", _minicpm, frozenset({
        "scale_emb", "scale_depth", "dim_model_base", "num_experts", "num_experts_per_tok", "sparse_config",
        "auto_map"})),
}


def translate(cfg: dict, mtype: str, notes: list) -> tuple[dict, str]:
    """(``cfg`` in the keys of the transformers port of remote ``mtype``, the port's family); a note says so."""
    family, fn, _ = PORTS[mtype]
    notes.append(Text(N_("model_type {mtype!r} is remote code transformers 5.24 does not define; its block is "
                         "transformers' {family}, and its keys are read as that port's"), mtype=mtype, family=family))
    if mtype == "baichuan":
        notes.append(Text(N_("baichuan: the 13B releases' modeling file uses ALiBi instead of rotary positions (read "
                             "as rotary here: element-wise, no GEMM changes)")))
    return dict(fn(cfg), model_type=family), family


def unused(mtype: str) -> frozenset[str]:
    """Keys of remote ``mtype`` that change no count."""
    return PORTS[mtype][2] if mtype in PORTS else frozenset()
