"""Remote-code model types read through the transformers port of their block (gemmlib.llm.remote).

Each remote config is translated to the port's keys; the port, built by transformers 5.24 from those keys (eager
attention), is the reference: parameters to the parameter, a prefill and one decode step to the FLOP
(FlopCounterMode) and the cache to the element and the byte, read from the remote keys. The released shapes —
ChatGLM3-6B, Qwen-7B, Baichuan2-7B, InternLM-7B, MiniCPM-2B, their config.json's dimensions — come to numel() of
the port on the meta device; ChatGLM3-6B's 6,243,584,000 is also the sum of the module listing its remote code
prints (query_key_value 4096 → 4608 with a bias, dense, dense_h_to_4h 4096 → 27392, dense_4h_to_h, two RMSNorms in
28 blocks, a final one, the 65,024-row embedding and output layer).
"""

from __future__ import annotations

import warnings

import pytest
import torch
from reference_convention import prefill_and_decode, reference_workload
from transformers import AutoConfig, AutoModelForCausalLM
from transformers.utils import logging as hf_logging

from gemmlib.core.errors import InputError
from gemmlib.llm.accounting import decode_ops, kv_cache_bytes, prefill_ops
from gemmlib.llm.hf import read_config
from gemmlib.llm.remote import PORTS, translate

hf_logging.set_verbosity_error()
warnings.filterwarnings("ignore", module="transformers")

BATCH, PROMPT = 2, 7
_TINY = dict(hidden_size=64, num_attention_heads=4, vocab_size=128)
TINY = {
    "chatglm": dict(_TINY, num_layers=2, ffn_hidden_size=96, padded_vocab_size=128, kv_channels=16,
                    multi_query_attention=True, multi_query_group_num=2, add_qkv_bias=True, add_bias_linear=False,
                    rmsnorm=True, post_layer_norm=True, apply_residual_connection_post_layernorm=False, seq_length=64,
                    apply_query_key_layer_scaling=True, attention_softmax_in_fp32=True, layernorm_epsilon=1e-5),
    "qwen": dict(_TINY, num_hidden_layers=2, intermediate_size=192, kv_channels=16, no_bias=True, seq_length=64,
                 rotary_pct=1.0, use_flash_attn="auto", use_logn_attn=True),
    "baichuan": dict(_TINY, num_hidden_layers=2, intermediate_size=96, model_max_length=64, z_loss_weight=0),
    "internlm": dict(_TINY, num_hidden_layers=2, intermediate_size=96, bias=True, max_position_embeddings=64),
    "minicpm": dict(_TINY, num_hidden_layers=2, num_key_value_heads=2, intermediate_size=96, scale_emb=12,
                    dim_model_base=256, scale_depth=1.4, max_position_embeddings=64),
}
# the released checkpoints' config.json dimensions
RELEASED = {
    "chatglm3-6b": ("chatglm", dict(hidden_size=4096, num_layers=28, num_attention_heads=32, multi_query_attention=True,
                                    multi_query_group_num=2, ffn_hidden_size=13696, padded_vocab_size=65024,
                                    kv_channels=128, add_qkv_bias=True, seq_length=8192), 6_243_584_000),
    "qwen-7b": ("qwen", dict(hidden_size=4096, num_hidden_layers=32, num_attention_heads=32, intermediate_size=22016,
                             vocab_size=151936, kv_channels=128, no_bias=True, seq_length=8192), 7_721_324_544),
    "baichuan2-7b": ("baichuan", dict(hidden_size=4096, num_hidden_layers=32, num_attention_heads=32,
                                      intermediate_size=11008, vocab_size=125696, model_max_length=4096),
                     7_505_973_248),
    "internlm-7b": ("internlm", dict(hidden_size=4096, num_hidden_layers=32, num_attention_heads=32,
                                     intermediate_size=11008, vocab_size=103168, bias=True), 7_321_948_160),
    "minicpm-2b": ("minicpm", dict(hidden_size=2304, num_hidden_layers=40, num_attention_heads=36,
                                   num_key_value_heads=36, intermediate_size=5760, vocab_size=122753, scale_emb=12,
                                   dim_model_base=256, scale_depth=1.4), 2_724_880_896),
}


def _port(mtype: str, keys: dict):
    """The transformers config of the port, from the translated keys (the remote-only keys left out)."""
    translated, family = translate(keys, mtype, [])
    kept = {k: v for k, v in translated.items() if k not in PORTS[mtype][2] and k != "model_type"}
    tokens = dict(pad_token_id=None, bos_token_id=None, eos_token_id=None)  # the port's defaults may not fit the vocabulary
    return AutoConfig.for_model(family, **{**tokens, **kept})


def _cache(cache) -> tuple[list[int], int]:
    tensors = [[layer.keys, layer.values] for layer in cache.layers]
    return [sum(t.numel() for t in ts) for ts in tensors], sum(t.nbytes for ts in tensors for t in ts)


@pytest.mark.parametrize("mtype", list(TINY))
def test_a_remote_config_is_exact_against_its_transformers_port(mtype):
    keys = TINY[mtype]
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(_port(mtype, keys), attn_implementation="eager").eval()
    cfg, info = read_config(dict(keys, model_type=mtype, architectures=["RemoteForCausalLM"]))
    assert cfg.family == PORTS[mtype][0] and info["unknown_keys"] == []
    assert any("remote code" in str(n) for n in info["notes"])
    assert cfg.params == sum(p.numel() for p in model.parameters())
    prefill, decode, cache = prefill_and_decode(model, torch.randint(0, 128, (BATCH, PROMPT)))
    wl = reference_workload(batch=BATCH, seq_len=PROMPT, new_tokens=1, kv_dtype="fp32")
    assert sum(o.flops for o in prefill_ops(cfg, wl)) == prefill
    assert sum(o.flops for o in decode_ops(cfg, wl)) == decode
    per_layer, nbytes = _cache(cache)
    assert per_layer == [BATCH * (PROMPT + 1) * cfg.kv_elements_of(k) for k in cfg.attention_kinds]
    assert kv_cache_bytes(cfg, wl) == nbytes


@pytest.mark.parametrize("name", list(RELEASED))
def test_the_released_shapes_come_to_their_ports_numel(name):
    mtype, keys, total = RELEASED[name]
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(_port(mtype, keys))
    cfg = read_config(dict(keys, model_type=mtype))[0]
    assert cfg.params == sum(p.numel() for p in model.parameters()) == total


@pytest.mark.parametrize(("mtype", "keys", "says"), [
    ("chatglm", dict(inner_hidden_size=16384, position_encoding_2d=True), "ChatGLM-6B's first release"),
    ("chatglm", dict(add_bias_linear=True), "add_bias_linear = True (biases on the dense and MLP layers)"),
    ("chatglm", dict(rmsnorm=False), "rmsnorm = False (LayerNorm instead of RMSNorm)"),
    ("qwen", dict(no_bias=False), "no_bias = false"),
    ("minicpm", dict(num_experts=8, num_experts_per_tok=2), "MiniCPM-MoE's own remote code"),
    ("minicpm", dict(sparse_config={"kernel_size": 32}), "MiniCPM4's trainable sparse attention"),
])
def test_what_a_port_does_not_build_is_refused_with_the_reason(mtype, keys, says):
    with pytest.raises(InputError, match=says.replace("(", r"\(").replace(")", r"\)")):
        read_config(dict(TINY[mtype], **keys, model_type=mtype))
