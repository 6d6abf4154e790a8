"""MiniMax-M3 (``minimax_m3_vl_text``), exact against transformers' own ``MiniMaxM3VLForCausalLM``.

The reference convention (parameters, prefill and decode FLOPs, the cache with the indexer's keys) is checked with the
other families in ``test_families.py``. Here: the engine convention's block-sparse attention against the mask
transformers' indexer builds, query by query (a prompt long enough for the top-k blocks to leave keys out, then decode
steps); the remote code's ``sparse_attention_config`` and ``moe_layer_freq`` read as MiniMaxM3VLTextConfig reads them,
at the config class's full size on the meta device; and what is not a MiniMax-M3 refused with the reason.
"""

from __future__ import annotations

import copy
import json
import warnings

import pytest
import torch
from transformers import AutoConfig, AutoModelForCausalLM
from transformers.models.minimax_m3_vl import modeling_minimax_m3_vl as m3
from transformers.utils import logging as hf_logging

from gemmlib.core.errors import InputError
from gemmlib.llm.accounting import Workload, decode_ops, prefill_ops
from gemmlib.llm.hf import read_config

hf_logging.set_verbosity_error()
warnings.filterwarnings("ignore", module="transformers")

BATCH = 2
# a full layer, then two block-sparse ones (blocks of 3 keys, the top 2 kept); a dense MLP, then MoE layers
M3 = dict(hidden_size=64, intermediate_size=48, num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
          vocab_size=128, max_position_embeddings=128, head_dim=16, rotary_dim=8, num_local_experts=4,
          num_experts_per_tok=2, dense_intermediate_size=80, shared_intermediate_size=24, index_n_heads=2,
          index_head_dim=12, index_block_size=3, index_topk_blocks=2,
          layer_types=["full_attention", "minimax_m3_sparse", "minimax_m3_sparse"],
          mlp_layer_types=["dense", "sparse", "sparse"], pad_token_id=None, bos_token_id=None, eos_token_id=None)


def _masked_pairs(prompt: int, steps: int) -> tuple[int, int]:
    """Query-key pairs transformers' block masks leave open in the sparse layers (summed over layers, sequences and
    heads): for the prefill of ``prompt`` tokens and for ``steps`` greedy decode steps after it."""
    torch.manual_seed(0)
    hf = AutoConfig.for_model("minimax_m3_vl_text", **copy.deepcopy(M3))
    model = AutoModelForCausalLM.from_config(hf, attn_implementation="eager", experts_implementation="eager").eval()
    counted: list[int] = []
    build = m3.MiniMaxM3VLIndexer.build_block_mask

    def counting(self, *args, **kwargs):
        mask = build(self, *args, **kwargs)
        counted.append(int((mask == 0).sum()))  # [B, heads, queries, keys]: 0 where a query may read a key
        return mask

    m3.MiniMaxM3VLIndexer.build_block_mask = counting
    try:
        with torch.no_grad():
            out = model(torch.randint(0, hf.vocab_size, (BATCH, prompt)), use_cache=True)
            prefill = sum(counted)
            counted.clear()
            for _ in range(steps):
                out = model(out.logits[:, -1:].argmax(-1), cache=out.cache, use_cache=True)
    finally:
        m3.MiniMaxM3VLIndexer.build_block_mask = build
    return prefill, sum(counted)


def _flops(ops, name: str) -> int:
    return sum(o.flops for o in ops if o.name == name)


@pytest.mark.parametrize("prompt, steps", [(5, 1), (23, 6)])
def test_the_engine_convention_reads_the_blocks_the_indexer_keeps(prompt, steps):
    """An engine's block-sparse kernel multiplies, in each sparse layer, the pairs transformers' block mask leaves open
    (the top-k blocks, the query's own cut at itself), the full layer every causal pair; the indexer scores every key
    up to each query."""
    cfg = read_config(dict(M3, model_type="minimax_m3_vl_text"))[0]
    assert cfg.is_block_sparse and cfg.attention_kinds == "FII"
    wl = Workload(batch=BATCH, seq_len=prompt, new_tokens=steps)
    hd, h, b = cfg.head_dim, cfg.heads, BATCH
    sparse_prefill, sparse_decode = _masked_pairs(prompt, steps)
    for ops, positions, sparse in ((prefill_ops(cfg, wl), range(prompt), sparse_prefill),
                                   (decode_ops(cfg, wl), range(prompt, prompt + steps), sparse_decode)):
        causal = sum(p + 1 for p in positions)
        assert _flops(ops, "attn_scores") == _flops(ops, "attn_values") == 2 * hd * b * h * causal  # the full layer
        assert _flops(ops, "attn_scores_sparse") == _flops(ops, "attn_values_sparse") == 2 * hd * sparse
        assert _flops(ops, "index_scores") == 2 * 2 * cfg.index_head_dim * cfg.index_heads * b * causal
    if prompt > cfg.index_topk * cfg.index_block:  # the blocks left out are not read
        assert sparse_prefill < 2 * b * h * sum(p + 1 for p in range(prompt))


def test_the_remote_codes_switch_lists_read_as_the_config_class_reads_them():
    """MiniMax's own config.json spells the sparse layers and the MoE layers as 0 / 1 lists
    (``sparse_attention_config.sparse_attention_freq``, ``moe_layer_freq``) and the indexer's shape under
    ``sparse_attention_config``'s names, which win over the flat keys: read so at the config class's full size, the
    parameters equal numel() of what transformers builds on the meta device."""
    layers = 60
    raw = {"model_type": "minimax_m3_vl_text", "num_hidden_layers": layers,
           "sparse_attention_config": {"sparse_attention_freq": [i % 4 != 3 for i in range(layers)],
                                       "sparse_num_index_heads": 4, "sparse_index_dim": 128, "sparse_block_size": 64,
                                       "sparse_topk_blocks": 32, "sparse_local_block": 1},
           "index_block_size": 999, "moe_layer_freq": [0, 0, 0] + [1] * (layers - 3)}
    raw["sparse_attention_config"]["sparse_attention_freq"] = [int(x) for x in
                                                               raw["sparse_attention_config"]["sparse_attention_freq"]]
    hf = AutoConfig.for_model("minimax_m3_vl_text", **copy.deepcopy({k: v for k, v in raw.items() if k != "model_type"}))
    assert hf.layer_types.count("minimax_m3_sparse") == 45 and hf.mlp_layer_types[:4] == ["dense"] * 3 + ["sparse"]
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(hf)
    defaults = {"hidden_size": 6144, "intermediate_size": 3072, "num_attention_heads": 64,
                "vocab_size": 200064, "num_local_experts": 128, "num_experts_per_tok": 4}
    cfg, info = read_config({**raw, **defaults})
    assert cfg.params == sum(p.numel() for p in model.parameters())
    assert (cfg.index_block, cfg.index_topk, cfg.attention_kinds.count("I"), cfg.moe_layer_count) == (64, 32, 45, 57)
    assert read_config(json.loads(hf.to_json_string()))[0].params == cfg.params  # transformers' own spelling
    described = cfg.describe()
    assert described["block_sparse"] == {"index_heads": 4, "index_head_dim": 128, "index_topk_blocks": 32,
                                         "index_block": 64, "mean_pooled": False} and described["dsa"] is None
    assert described["attention"]["with_indexer"] == 45
    assert read_config(dict(M3, model_type="minimax_m3_vl_text", layer_types=["full_attention"] * 3))[0].describe()[
        "block_sparse"] is None  # no sparse layer: no indexer read


@pytest.mark.parametrize("keys, says", [
    ({"moe_layer_freq": [1, 1]}, "moe_layer_freq lists 2 layers"),
    ({"moe_layer_freq": "every"}, "list of 0 / 1 switches"),
    ({"sparse_attention_config": {"sparse_attention_freq": [1, 2, 0]}}, "list of 0 / 1 switches"),
    ({"sparse_attention_config": []}, "must be an object"),
    ({"layer_types": ["full_attention", "sliding_attention", "minimax_m3_sparse"]}, "'sliding_attention'"),
    ({"index_topk_blocks": 0}, "index_topk_blocks"),
])
def test_what_is_not_a_minimax_m3_is_refused_with_the_reason(keys, says):
    """(The remote code's lists are read where transformers' own keys are absent, as the config class reads them.)"""
    remote = "moe_layer_freq" in keys or "sparse_attention_config" in keys
    base = {k: v for k, v in M3.items() if not (remote and k in ("layer_types", "mlp_layer_types"))}
    with pytest.raises(InputError, match=says):
        read_config({**base, "model_type": "minimax_m3_vl_text", **keys})
