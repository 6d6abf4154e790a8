"""DeepSeek-V4, exact against transformers' own ``DeepseekV4ForCausalLM`` and against its published checkpoints.

A 4-layer random model (a sliding layer, two compressed sparse ones with a lightning indexer, a heavily compressed
one; three hyper-connection streams; a hash-routed MoE layer and top-k ones) is built by transformers 5.24 with
eager attention and eager experts, run for a prefill and one decode step, and compared with the estimator read from
the same keys and from the full ``to_dict()``: parameters to the parameter, prefill and decode FLOPs to the FLOP
(FlopCounterMode, the reference convention), and the cache — the window's keys (which are the values: one tensor in
the compressed layers, keys and values apart in the sliding one), the compressed entries, the indexer's, the tokens
of the window being filled and the overlap the compressed sparse layers carry — to the element and the byte, at
prompt lengths that leave windows open and closed. The compression rates (2 and 4) and the window (4) are short
enough for a 7-token prompt to close several windows.

The engine convention is checked against a count done query by query (the window's band, the compressed entries
closed before each query, the indexer's top-k), and the two published checkpoints against their cards and, for
V4-Pro, its tensor listing.
"""

from __future__ import annotations

import copy
import json
import re
import warnings
from pathlib import Path

import pytest
import torch
from reference_convention import prefill_and_decode, reference_workload
from transformers import AutoConfig, AutoModelForCausalLM
from transformers.utils import logging as hf_logging

from gemmlib.core.errors import InputError
from gemmlib.llm.accounting import Workload, decode_ops, kv_cache_bytes, prefill_ops
from gemmlib.llm.checkpoint import checkpoint_size
from gemmlib.llm.hf import read_config, read_config_file

hf_logging.set_verbosity_error()
warnings.filterwarnings("ignore", module="transformers")

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "configs"
BATCH = 2
V4 = dict(hidden_size=64, num_hidden_layers=4, num_attention_heads=4, head_dim=32, q_lora_rank=24, o_groups=2,
          o_lora_rank=16, vocab_size=128, max_position_embeddings=64, moe_intermediate_size=32, n_routed_experts=4,
          num_experts_per_tok=2, sliding_window=4, index_n_heads=2, index_head_dim=16, index_topk=2, hc_mult=3,
          partial_rotary_factor=0.25, compress_rates={"compressed_sparse_attention": 2, "heavily_compressed_attention": 4},
          layer_types=["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention",
                       "compressed_sparse_attention"],
          mlp_layer_types=["hash_moe", "moe", "moe", "moe"])
_RESULTS: dict[int, tuple] = {}


def _cache_elements(cache) -> tuple[list[int], int]:
    """(elements per layer, bytes) of a returned DeepSeek-V4 cache, each tensor once (the compressed layers' values
    are their keys): the window, the compressed entries, the pending window's kv and gate, the overlap."""
    per, nbytes, seen = [], 0, set()
    for layer in cache.layers:
        tensors = [getattr(layer, "keys", None), getattr(layer, "values", None)]
        for state in ("compressed_kv", "buffer_kv", "buffer_gate", "overlap_kv", "overlap_gate"):
            tensors += list(getattr(layer, state, {}).values())
        n = 0
        for t in tensors:
            if isinstance(t, torch.Tensor) and id(t) not in seen:
                seen.add(id(t))
                n += t.numel()
                nbytes += t.nbytes
        per.append(n)
    return per, nbytes


def _truth(prompt: int):
    if prompt not in _RESULTS:
        torch.manual_seed(0)
        hf = AutoConfig.for_model("deepseek_v4", **copy.deepcopy(V4))
        model = AutoModelForCausalLM.from_config(hf, attn_implementation="eager", experts_implementation="eager")
        model.requires_grad_(False)
        model.eval()
        prefill, decode, cache = prefill_and_decode(model, torch.randint(0, hf.vocab_size, (BATCH, prompt)))
        _RESULTS[prompt] = (hf, sum(p.numel() for p in model.parameters()), prefill, decode, *_cache_elements(cache))
    return _RESULTS[prompt]


@pytest.mark.parametrize("prompt", [3, 7, 12])
@pytest.mark.parametrize("source", ["keys", "to_dict"])
def test_deepseek_v4_is_exact(source, prompt):
    hf, params, prefill, decode, per_layer, nbytes = _truth(prompt)
    raw = dict(V4, model_type="deepseek_v4") if source == "keys" else json.loads(hf.to_json_string())
    cfg, info = read_config(raw)
    assert cfg.layer_types == "SAHA" and cfg.hash_layers == 1 and cfg.hyper_streams == 3
    assert cfg.params == params
    wl = reference_workload(batch=BATCH, seq_len=prompt, new_tokens=1, kv_dtype="fp32")
    assert sum(o.flops for o in prefill_ops(cfg, wl)) == prefill
    assert sum(o.flops for o in decode_ops(cfg, wl)) == decode
    assert per_layer == [BATCH * cfg.cache_elements_of(k, prompt + 1) for k in cfg.attention_kinds]
    assert kv_cache_bytes(cfg, wl) == nbytes
    if source == "to_dict":
        assert info["unknown_keys"] == [], info["unknown_keys"]


def _engine_pairs(cfg, kind: str, positions: range) -> int:
    """Query-key pairs one head of one sequence multiplies in a layer of ``kind``, query by query: the window's band
    and the compressed entries closed before the query (at most the indexer's top-k in a compressed sparse layer)."""
    rate = {"A": cfg.csa_rate, "H": cfg.hca_rate}.get(kind, 0)
    total = 0
    for p in positions:
        total += min(p + 1, cfg.sliding_window)
        if rate:
            entries = (p + 1) // rate
            total += min(entries, cfg.index_topk) if kind == "A" else entries
    return total


@pytest.mark.parametrize("prompt, steps", [(9, 1), (30, 5)])
def test_the_engine_convention_reads_the_band_the_entries_and_the_top_k(prompt, steps):
    """An engine's kernels: each query meets its window's band and the entries closed before it — every one in a
    heavily compressed layer, the indexer's top-k in a compressed sparse one — and the indexer scores every entry
    closed before the query; counted query by query here."""
    cfg = read_config(dict(V4, model_type="deepseek_v4"))[0]
    wl = Workload(batch=BATCH, seq_len=prompt, new_tokens=steps)
    hd, h, b = cfg.head_dim, cfg.heads, BATCH
    pre = {o.name: o for o in prefill_ops(cfg, wl)}
    dec = {o.name: o for o in decode_ops(cfg, wl)}
    for ops, positions in ((pre, range(prompt)), (dec, range(prompt, prompt + steps))):
        assert ops["attn_scores_sliding"].flops == 2 * hd * b * h * _engine_pairs(cfg, "S", positions)
        compressed = sum(_engine_pairs(cfg, k, positions) for k in "AHA")
        assert ops["attn_scores_compressed"].flops == ops["attn_values_compressed"].flops == 2 * hd * b * h * compressed
        index_pairs = 2 * sum((p + 1) // cfg.csa_rate for p in positions)  # two A layers
        assert ops["index_scores"].flops == 2 * cfg.index_head_dim * cfg.index_heads * b * index_pairs
    # the window's keys are the values: one tensor per layer in an engine, two in transformers' sliding layer
    tokens = prompt + steps
    assert cfg.cache_elements_of("S", tokens, engine=True) * 2 == cfg.cache_elements_of("S", tokens) == 2 * 3 * hd


def test_the_releases_come_to_their_cards_counts():
    """DeepSeek-V4-Flash: 284 B total, 13 B activated; V4-Pro: 1.6 T total, 49 B activated (the cards' figures; the
    activated counts leave out the input embedding, as DeepSeek's do)."""
    flash, info = read_config_file(CONFIGS / "deepseek-v4-flash.json")
    assert (flash.layer_types.count("S"), flash.layer_types.count("A"), flash.layer_types.count("H")) == (2, 21, 20)
    assert round(flash.params / 1e9) == 284 and round((flash.active_params - flash.vocab * flash.hidden) / 1e9) == 13
    assert not info["unknown_keys"] and flash.quant.expert_fp4
    assert any("dspark" in str(n) for n in info["notes"])
    pro, info = read_config_file(CONFIGS / "deepseek-v4-pro.json")
    assert (pro.layer_types.count("A"), pro.layer_types.count("H")) == (30, 31) and not info["unknown_keys"]
    assert round(pro.params / 1e11) == 16 and round((pro.active_params - pro.vocab * pro.hidden) / 1e9) == 49


def test_the_pro_checkpoint_is_its_tensor_listing():
    """DeepSeek-V4-Pro's checkpoint as a public model report lists it (search index id 62968290951: 145,116 tensors,
    861,608,274,846 elements): fp8 linears with an e8m0 scale per 128 × 128 block, the routed experts in fp4 (e2m1
    pairs in int8, an e8m0 scale per 32), the compressors' and indexers' kv / gate / weight projections, the LM head,
    the embedding and the norms in bf16, the hyper-connections, position biases, sinks and score biases in fp32, the
    hash layers' token tables in int64. Our decoder's elements plus the listing's MTP module's are its total."""
    pro, _ = read_config_file(CONFIGS / "deepseek-v4-pro.json")
    h = 7168
    experts = 384 * 2 * (3072 * 3584 + 3072 * 224) + 384 * (7168 * 1536 + 7168 * 96)  # w1, w3; w2 (int8 + scale)
    mtp = (128 + 512 + 1536 + h                                   # sink, kv / q norms, attn_norm
           + 512 * h + 4 * 56 + 16384 * 4096 + 128 * 32           # wkv, wo_a (+ scales)
           + 7168 * 16384 + 56 * 128 + 1536 * h + 12 * 56         # wo_b, wq_a
           + 65536 * 1536 + 512 * 12                              # wq_b
           + 2 * (h * h + 56 * 56) + 4 * h                        # e_proj, h_proj; enorm, hnorm, norm, ffn_norm
           + experts + 384 + 384 * h                              # experts, gate bias, gate
           + 3 * (3072 * h + 24 * 56)                             # shared expert
           + 2 * (24 + 24 * 28672 + 3) + 4 + 4 * 28672 + 1)       # hyper-connections and its head
    assert checkpoint_size(pro, "bf16", mtp=False).elements + mtp == 861_608_274_846


@pytest.mark.parametrize("keys, says", [
    (dict(kv_source_layer_ids=[1]), "DeepSeek-V4.1"),
    (dict(layer_types=None, compress_ratios=[0, 2, 4, 128]), "compress_ratios holds 2"),
    (dict(layer_types=["sliding_attention"] * 3), "layer_types lists 3 layers"),
    (dict(mlp_layer_types=["dense"] * 4), "mlp_layer_types holds 'dense'"),
    (dict(o_groups=3), "o_groups dividing the 4 heads"),
])
def test_what_is_not_deepseek_v4_is_refused_with_the_reason(keys, says):
    with pytest.raises(InputError, match=re.escape(says)):
        read_config(dict(V4, **keys, model_type="deepseek_v4"))


def test_the_older_compress_ratios_and_the_mtp_entry_are_read_as_transformers_reads_them():
    """A file with ``compress_ratios`` (0 / 4 / 128) instead of layer_types, one entry more than the layers (the MTP
    layer's): read as transformers' config class reads it, the extra entry cut."""
    cfg = read_config(dict({k: v for k, v in V4.items() if k not in ("layer_types", "compress_rates")},
                           compress_ratios=[0, 4, 128, 4, 0], model_type="deepseek_v4"))[0]
    assert cfg.layer_types == "SAHA" and (cfg.csa_rate, cfg.hca_rate) == (4, 128)


def test_the_engine_convention_reproduces_deepseeks_long_context_ratios():
    """DeepSeek's V4 report compares one decode step at a 1M-token context with DeepSeek-V3.2's: V4-Pro 27 % of the
    FLOPs and 10 % of the KV cache, V4-Flash 10 % and 7 % (as the report's coverage quotes it). The engine convention,
    both models at one KV dtype (V4 stores parts of its cache narrower, which the report counts), comes within 2.5
    points of each: Pro 26.3 % and 11.5 %, Flash 12.1 % and 8.0 %."""
    v32 = read_config_file(CONFIGS / "deepseek-v3.2.json")[0]
    wl = Workload(batch=1, seq_len=1_000_000 - 1, new_tokens=1, decode_only=True)
    flops = sum(o.flops for o in decode_ops(v32, wl))
    for name, flop_share, kv_share in (("deepseek-v4-pro", 0.27, 0.10), ("deepseek-v4-flash", 0.10, 0.07)):
        cfg = read_config_file(CONFIGS / f"{name}.json")[0]
        assert sum(o.flops for o in decode_ops(cfg, wl)) / flops == pytest.approx(flop_share, abs=0.025)
        assert kv_cache_bytes(cfg, wl) / kv_cache_bytes(v32, wl) == pytest.approx(kv_share, abs=0.025)


def test_training_reruns_and_rings_every_layers_products():
    """A flash kernel's backward reruns QKᵀ over the compressed entries as over the window's keys (HFU counts it), and
    context parallelism rings every layer's K/V chunk, the compressed layers' as well as the sliding ones'."""
    from gemmlib.core.hardware import get_hardware
    from gemmlib.llm.parallel import Parallel
    from gemmlib.llm.training import Training, train

    raw = json.loads((CONFIGS / "deepseek-v4-flash.json").read_text())
    raw.pop("quantization_config")  # a full-precision copy: training refuses an fp8 / fp4 checkpoint
    cfg = read_config(raw)[0]
    wl = Workload(batch=8, seq_len=8192, attention="fused", causal=True)
    tr = train(cfg, wl, get_hardware("h100"), Parallel(cp=2, dp=4), Training(tokens=1e9))
    names = {o.name for o in prefill_ops(cfg, tr.workload)}
    assert {"attn_scores_sliding", "attn_scores_compressed"} <= names
    qk = sum(o.flops for o in prefill_ops(cfg, tr.workload) if o.name.startswith("attn_scores"))
    assert tr.flops["flash_recompute"] == qk
    ring = [c for c in tr.collectives if c.group == "cp"]
    assert sum(c.count for c in ring) == 3 * cfg.layers * tr.microbatches  # forward AG, backward AG + RS
