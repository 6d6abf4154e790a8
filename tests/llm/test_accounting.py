"""The estimator's FLOP counts equal FlopCounterMode on real eager torch modules, op by op.

Reference modules (tests/estimator_reference.py) are written apart from gemmlib: Llama-style with
GQA and SwiGLU, GPT-style with a plain MLP, LayerNorm, learned positions and a tied head, and a
mixture of experts whose every token reaches exactly k experts. Prefill over the prompt and decode
steps with a KV cache, batch > 1; the causal switch is checked against a reference that computes
only the lower triangle, row by row.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from estimator_reference import Decoder, flops_by_op
from reference_convention import reference_workload as RW
from torch.utils.flop_counter import FlopCounterMode

from gemmlib.core.errors import InputError
from gemmlib.core.flops import roofline_time
from gemmlib.core.hardware import get_hardware
from gemmlib.llm.accounting import (
    OP_NAMES,
    Workload,
    attention_crossover,
    attention_share,
    counting_variants,
    decode_ops,
    estimate,
    layer_model,
    layer_ops,
    memory,
    prefill_ops,
    rules_of_thumb,
)
from gemmlib.llm.config import ModelConfig
from gemmlib.llm.presets import from_name

CONFIGS = {
    "llama_gqa": ModelConfig(layers=2, hidden=48, heads=6, kv_heads=2, ffn=80, vocab=97),
    "qwen_bias_tied": ModelConfig(layers=2, hidden=32, heads=4, kv_heads=2, ffn=40, vocab=61, qkv_bias=True,
                                  tied_embeddings=True),
    "gpt_plain": ModelConfig(layers=3, hidden=32, heads=4, ffn=128, vocab=50, mlp="plain", norm="layer",
                             qkv_bias=True, o_bias=True, mlp_bias=True, tied_embeddings=True,
                             learned_positions=32),
    "moe": ModelConfig(layers=2, hidden=32, heads=4, kv_heads=1, ffn=40, vocab=30, experts=4, experts_per_token=2),
    "odd_head_dim": ModelConfig(layers=1, hidden=40, heads=4, kv_heads=2, head_dim=24, ffn=56, vocab=33),
}


def _by_name(ops):
    out = dict.fromkeys(OP_NAMES, 0)
    for o in ops:
        out[o.name] += o.flops
    return out


def _prefill(model, cfg, batch, seq, last_only=False):
    torch.manual_seed(0)
    ids = torch.randint(0, cfg.vocab, (batch, seq))
    with FlopCounterMode(display=False) as fc:
        _, caches = model(ids, last_only=last_only)
    return fc, caches


@pytest.mark.parametrize("name", list(CONFIGS))
@pytest.mark.parametrize("lm_head", ["all", "last"])
def test_prefill_equals_flop_counter_op_by_op(name, lm_head):
    cfg = CONFIGS[name]
    batch, seq = 3, 7
    model = Decoder(cfg)
    fc, _ = _prefill(model, cfg, batch, seq, last_only=lm_head == "last")
    ops = prefill_ops(cfg, RW(batch=batch, seq_len=seq, lm_head=lm_head))
    assert sum(o.flops for o in ops) == fc.get_total_flops()
    assert _by_name(ops) == flops_by_op(fc, OP_NAMES)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_decode_steps_equal_flop_counter(name):
    cfg = CONFIGS[name]
    batch, seq, steps = 2, 5, 3
    model = Decoder(cfg)
    _, caches = _prefill(model, cfg, batch, seq)
    ids = torch.randint(0, cfg.vocab, (batch, 1))
    with FlopCounterMode(display=False) as fc:
        for _ in range(steps):  # step i: S + i tokens cached, the query meets S + i + 1 keys
            _, caches = model(ids, caches)
    assert caches[0][0].shape[2] == seq + steps
    ops = decode_ops(cfg, RW(batch=batch, seq_len=seq, new_tokens=steps))
    assert sum(o.flops for o in ops) == fc.get_total_flops()
    assert _by_name(ops) == flops_by_op(fc, OP_NAMES)


def test_one_decode_step_with_the_prompt_cached():
    cfg = CONFIGS["llama_gqa"]
    model = Decoder(cfg)
    _, caches = _prefill(model, cfg, 4, 9)
    with FlopCounterMode(display=False) as fc:
        model(torch.zeros(4, 1, dtype=torch.long), caches)
    ops = decode_ops(cfg, RW(batch=4, seq_len=9, new_tokens=1))
    assert sum(o.flops for o in ops) == fc.get_total_flops()
    scores = next(o for o in ops if o.name == "attn_scores")
    assert (scores.m, scores.n, scores.k) == (1, 10, cfg.head_dim)


@pytest.mark.parametrize("name", ["llama_gqa", "gpt_plain", "moe"])
def test_causal_switch_equals_a_triangle_only_reference(name):
    cfg = CONFIGS[name]
    model = Decoder(cfg, causal_rows=True)
    fc, _ = _prefill(model, cfg, 2, 6)
    ops = prefill_ops(cfg, RW(batch=2, seq_len=6, causal=True))
    assert _by_name(ops) == flops_by_op(fc, OP_NAMES)
    assert sum(o.flops for o in ops) == fc.get_total_flops()


@pytest.mark.parametrize("preset, batch, seq", [("llama-2-7b", 2, 64), ("qwen2.5-0.5b", 1, 33), ("gpt2", 3, 50)])
def test_full_size_presets_on_meta_device(preset, batch, seq):
    cfg = from_name(preset)
    with torch.device("meta"):
        model = Decoder(cfg)
        ids = torch.zeros(batch, seq, dtype=torch.long)
        with FlopCounterMode(display=False) as fc:
            _, caches = model(ids)
        assert sum(o.flops for o in prefill_ops(cfg, RW(batch=batch, seq_len=seq))) == fc.get_total_flops()
        with FlopCounterMode(display=False) as fc:
            model(ids[:, :1], caches)
    assert sum(o.flops for o in decode_ops(cfg, RW(batch=batch, seq_len=seq, new_tokens=1))) == \
        fc.get_total_flops()


def test_closed_forms_for_a_dense_model():
    cfg = from_name("llama-2-7b")
    s, b, d, layers, v = 1000, 2, 4096, 32, 32000
    ops = {o.name: o for o in prefill_ops(cfg, RW(batch=b, seq_len=s))}
    assert ops["q_proj"].flops == 2 * b * s * d * d * layers
    assert ops["attn_scores"].flops == 2 * b * 32 * s * s * 128 * layers
    assert ops["lm_head"].flops == 2 * b * s * d * v
    causal = {o.name: o for o in prefill_ops(cfg, RW(batch=b, seq_len=s, causal=True))}
    assert causal["attn_scores"].flops == b * 32 * 128 * s * (s + 1) * layers
    last = {o.name: o for o in prefill_ops(cfg, RW(batch=b, seq_len=s, lm_head="last"))}
    assert last["lm_head"].flops == 2 * b * d * v
    n = 10  # decode: keys S+1 .. S+N
    dec = {o.name: o for o in decode_ops(cfg, RW(batch=b, seq_len=s, new_tokens=n))}
    assert dec["attn_scores"].flops == 2 * b * 32 * 128 * layers * sum(s + i + 1 for i in range(n))
    assert dec["attn_scores"].n == s + 1 and dec["attn_scores"].n_last == s + n
    assert dec["q_proj"].flops == 2 * b * d * d * layers * n


def test_gqa_shrinks_kv_projections_and_cache_not_the_products():
    mha = from_name("llama-2-7b")
    gqa = mha.replace(kv_heads=8)
    wl = Workload(batch=1, seq_len=512, new_tokens=8)
    a = {o.name: o for o in prefill_ops(mha, wl)}
    g = {o.name: o for o in prefill_ops(gqa, wl)}
    assert g["attn_scores"].flops == a["attn_scores"].flops
    assert g["k_proj"].flops * 4 == a["k_proj"].flops
    hw = get_hardware("h100")
    assert memory(gqa, wl, hw).kv_cache_bytes * 4 == memory(mha, wl, hw).kv_cache_bytes


def test_moe_counts_k_experts_per_token_and_reads_only_reached_experts():
    cfg = from_name("mixtral-8x7b")
    wl = Workload(batch=1, seq_len=1, new_tokens=1, weight_dtype="bf16")
    dec = {o.name: o for o in decode_ops(cfg, wl)}
    assert dec["gate_proj"].flops == 2 * 1 * 4096 * 14336 * 32 * 2
    assert dec["gate_proj"].weight_bytes == 2 * 4096 * 14336 * 2 * 32  # 2 experts reached, bf16
    big = {o.name: o for o in decode_ops(cfg, Workload(batch=64, seq_len=1, new_tokens=1))}
    assert big["gate_proj"].weight_bytes == 8 * 4096 * 14336 * 2 * 32  # all 8 experts
    assert dec["router"].flops == 2 * 4096 * 8 * 32


def test_kv_cache_and_weights_memory():
    cfg = from_name("llama-3-8b")
    wl = Workload(batch=8, seq_len=1000, new_tokens=24, weight_dtype="fp8", kv_dtype="bf16")
    mem = memory(cfg, wl, get_hardware("h100"), gpus=2)
    # fp8 weights as an engine quantizes them (ModelOpt's FP8, vLLM's fp8): the 224 decoder linears at one byte per
    # weight with an fp32 weight scale and an fp32 input scale each; the embedding, the LM head (ModelOpt leaves
    # *lm_head* unquantized) and the norms at the checkpoint's bf16
    vocab_rows = 2 * 128256 * 4096
    norms = (2 * 32 + 1) * 4096
    linears = cfg.params - vocab_rows - norms
    assert mem.weights_bytes == linears * 1 + 224 * (4 + 4) + (vocab_rows + norms) * 2
    assert mem.kv_cache_bytes == 2 * 32 * 8 * 128 * 2 * 8 * 1024
    assert mem.capacity_bytes == 2 * 81559 * 2**20 and mem.fits  # nvidia-smi: 81559 MiB per H100 SXM
    huge = memory(from_name("llama-3-70b"), Workload(batch=64, seq_len=8192), get_hardware("h100"))
    assert not huge.fits and huge.min_gpus > 1


def test_times_follow_the_roofline():
    cfg = from_name("llama-3-8b")
    wl = Workload(batch=1, seq_len=2048, new_tokens=1)
    hw = get_hardware("h100")
    est = estimate(cfg, wl, hw, efficiency=0.5)
    for op in est.prefill.ops + est.decode.ops:
        t = roofline_time(op.flops, op.bytes, hw, "bf16", 0.5)
        assert op.time_s == pytest.approx(t.seconds) and op.bound == t.bound
    q = est.prefill.by_name()["q_proj"]
    assert q.bound == "compute"
    assert est.decode.by_name()["q_proj"].bound == "memory"  # one token per sequence: weight-bound
    assert est.ttft_s == pytest.approx(sum(o.time_s for o in est.prefill.ops))
    assert est.time_per_output_token_s == pytest.approx(est.decode.time_s)
    assert est.decode_tokens_per_s == pytest.approx(1 / est.decode.time_s)


def test_decode_time_is_the_exact_sum_of_per_step_times():
    # A case where attention flips from compute- to memory-bound during the decode (tiny bandwidth)
    cfg = ModelConfig(layers=2, hidden=256, heads=4, kv_heads=1, ffn=512, vocab=100)
    hw = get_hardware("h100").with_overrides(bandwidth=5e11, peaks={"bf16": 4e12})
    wl = Workload(batch=3, seq_len=2, new_tokens=50)
    est = estimate(cfg, wl, hw, efficiency=0.7)
    stepwise = {}
    for i in range(wl.new_tokens):
        one = Workload(batch=3, seq_len=2 + i, new_tokens=1)
        for op in estimate(cfg, one, hw, efficiency=0.7).decode.ops:
            stepwise[op.name] = stepwise.get(op.name, 0.0) + op.time_s
    for op in est.decode.ops:
        assert op.time_s == pytest.approx(stepwise[op.name], rel=1e-12), op.name


def test_measured_ceilings_hook():
    cfg = from_name("gpt2")
    wl = Workload(batch=4, seq_len=256)
    hw = get_hardware("h200")
    slower = hw.with_overrides(peaks={"bf16": hw.peak("bf16") / 2}, bandwidth=hw.bandwidth / 2)
    assert estimate(cfg, wl, slower, 0.7).ttft_s == pytest.approx(2 * estimate(cfg, wl, hw, 0.7).ttft_s)


def test_bad_inputs():
    hw = get_hardware("a100")
    with pytest.raises(InputError, match="fp8"):
        estimate(from_name("gpt2"), Workload(act_dtype="fp8"), hw)  # A100 has no fp8
    with pytest.raises(InputError, match="efficiency"):
        estimate(from_name("gpt2"), Workload(), hw, efficiency=1.5)
    for bad in (dict(batch=0), dict(seq_len=-3), dict(new_tokens=-1), dict(batch=2.5), dict(batch="x"),
                dict(lm_head="first"), dict(kv_dtype="fp7"), dict(seq_len=10**12)):
        with pytest.raises(InputError):
            Workload(**bad)


def test_variants_and_macs():
    cfg = CONFIGS["llama_gqa"]
    wl = RW(batch=2, seq_len=6, new_tokens=2, causal=True)
    rows = counting_variants(cfg, wl)
    assert [r["selected"] for r in rows] == [False, True, False, False]
    assert rows[0]["prefill_flops"] > rows[1]["prefill_flops"] > rows[3]["prefill_flops"]
    assert all(r["prefill_macs"] * 2 == r["prefill_flops"] for r in rows)
    assert rows[0]["decode_flops"] == rows[1]["decode_flops"]  # a decode step is the same either way


def test_rules_of_thumb_against_the_seed_figures():
    cfg = from_name("llama-2-7b")
    rows = rules_of_thumb(cfg, RW(batch=1, seq_len=512))
    article, fudge, two_n = rows
    assert article["value"] == pytest.approx(cfg.params * 512**2 / (3 * 4096))
    assert 40 < article["ratio"] < 50  # seed README: "some 46x more"
    assert fudge["ratio"] > 150
    assert 0.9 < two_n["ratio"] < 1.1
    assert "attention products" in two_n["reason"]


def test_transformer_page_numbers():
    # The article's claim: at s = 1024, d = 4096 the attention products are about 4 % of a layer.
    cfg = layer_model(1024, 4096, 32, 4 * 4096, gated=False)
    assert attention_share(cfg, 1024) == pytest.approx(4 * 1024 / (4 * 1024 + 24 * 4096))
    assert attention_crossover(cfg) == 6 * 4096
    assert attention_share(cfg, 6 * 4096) == pytest.approx(0.5)
    assert attention_crossover(cfg, causal=True) == 12 * 4096 - 1
    assert attention_share(cfg, 12 * 4096 - 1, causal=True) == pytest.approx(0.5)
    gated = layer_model(1024, 4096, 32, 11008, gated=True, kv_heads=8)
    s = attention_crossover(gated)
    assert s == 2 * (4096 * (2 * 4096 + 2 * 1024) + 3 * 4096 * 11008) / (4 * 4096)
    assert attention_share(gated, math.floor(s - 1)) < 0.5 < attention_share(gated, math.ceil(s + 1))
    assert attention_share(gated, s) == pytest.approx(0.5)
    ops = layer_ops(cfg, 16, causal=False)
    assert [o.name for o in ops] == ["q_proj", "k_proj", "v_proj", "attn_scores", "attn_values", "o_proj",
                                     "up_proj", "down_proj"]


# ----- chart builders (gemmlib.charts.model): valid Vega-Lite, and the fast dicts equal the Altair ones -----

def test_chart_builders_validate_and_fast_specs_match():
    from gemmlib.charts import model as cm

    hw = get_hardware("h100")
    from gemmlib.llm.parallel import Parallel
    from gemmlib.llm.scaleout import estimate as scaleout_estimate

    a = scaleout_estimate(from_name("mixtral-8x7b"), Workload(batch=2, seq_len=64, new_tokens=8), hw, Parallel(tp=2))
    b = estimate(from_name("gpt2"), Workload(batch=1, seq_len=64, new_tokens=0), hw)
    cfg = layer_model(1024, 4096, 32, 16384, False)
    curve = [{"seq_len": s, "share": attention_share(cfg, s)} for s in (64, 1024, 24576, 100000)]
    pairs = [
        (cm.gemm_shapes_chart(layer_ops(cfg, 1024)), cm.gemm_shapes_spec(layer_ops(cfg, 1024))),
        (cm.share_chart(curve, attention_crossover(cfg), 1024, attention_crossover(cfg, True)),
         cm.share_spec(curve, attention_crossover(cfg), 1024, attention_crossover(cfg, True))),
        (cm.flops_by_op_chart(a, macs=True), cm.flops_by_op_spec(a, macs=True)),
        (cm.memory_chart(a), cm.memory_spec(a)),
        (cm.roofline_chart(a), cm.roofline_spec(a)),
        (cm.roofline_chart(b), cm.roofline_spec(b)),
        (cm.compare_chart(a, b), cm.compare_spec(a, b)),
    ]
    for chart, fast in pairs:
        full = chart.to_dict()  # validates against the Vega-Lite schema
        full.pop("$schema", None)
        fast = dict(fast)
        fast.pop("$schema", None)
        assert full == fast
    pts = cm.roofline_spec(a)["datasets"]["pts"]
    assert len(pts) == len(a.prefill.gemm_ops) + len(a.decode.gemm_ops)  # every GEMM is a point
    rects = cm.gemm_shapes_spec(layer_ops(cfg, 1024))["datasets"]["rects"]
    q = [r for r in rects if r["op"] == "q_proj"]
    sizes = [(r["x2"] - r["x"], r["y2"] - r["y"]) for r in q]
    assert sizes == [(pytest.approx(4096), pytest.approx(1024)), (pytest.approx(4096), pytest.approx(4096)),
                     (pytest.approx(4096), pytest.approx(1024))]


def test_share_overview_gemms_dominate_flops_more_than_time():
    from gemmlib.llm.accounting import share_overview

    rows = share_overview(from_name("llama-2-7b"), (512, 8192), get_hardware("H100 SXM"), "bf16", 0.7)
    assert [(r["tokens"], r["attention"]) for r in rows] == [
        (512, "eager"), (512, "fused"), (8192, "eager"), (8192, "fused")]
    for r in rows:
        assert 0.99 < r["GEMM share of FLOPs"] < 1
        assert 0 < r["GEMM share of time"] < r["GEMM share of FLOPs"]
    eager = [r["GEMM share of time"] for r in rows if r["attention"] == "eager"]
    fused = [r["GEMM share of time"] for r in rows if r["attention"] != "eager"]
    assert eager[1] < eager[0]  # the S×S scores through memory grow with the context
    assert fused[0] > eager[0] and fused[1] > eager[1]


# ----- sliding windows, decode-only workloads, MLA, experts -------------------------------------------

def _sliding(window: int, pattern: str) -> ModelConfig:
    return ModelConfig(layers=len(pattern), hidden=32, heads=4, kv_heads=2, ffn=48, vocab=40, sliding_window=window,
                       layer_types=pattern)


@pytest.mark.parametrize("seq, window", [(10, 4), (4, 10), (7, 7), (9, 2)])
def test_causal_switch_counts_the_band_of_a_sliding_layer(seq, window):
    cfg = _sliding(window, "SF")
    pairs = sum(1 for i in range(seq) for j in range(seq) if j <= i and i - j < window)  # what each query may see
    ops = {o.name: o for o in prefill_ops(cfg, Workload(batch=3, seq_len=seq, causal=True))}
    assert ops["attn_scores_sliding"].flops == 2 * cfg.head_dim * 3 * cfg.heads * pairs
    assert ops["attn_scores"].flops == 2 * cfg.head_dim * 3 * cfg.heads * seq * (seq + 1) // 2
    dense = {o.name: o for o in prefill_ops(cfg, RW(batch=3, seq_len=seq))}
    assert dense["attn_scores_sliding"].flops == dense["attn_scores"].flops  # eager prefill: dense S x S


def test_sliding_window_decode_keys_and_cache():
    cfg = _sliding(4096, "S" * 8)
    full = cfg.replace(sliding_window=0, layer_types="")
    wl = Workload(batch=2, seq_len=32768, new_tokens=1, decode_only=True)
    s, f = {o.name: o for o in decode_ops(cfg, wl)}, {o.name: o for o in decode_ops(full, wl)}
    assert s["attn_scores_sliding"].n == 4096 and f["attn_scores"].n == 32769
    assert f["attn_scores"].flops / s["attn_scores_sliding"].flops == pytest.approx(32769 / 4096)
    hw = get_hardware("h100")
    assert memory(cfg, wl, hw).kv_cache_bytes == 2 * 8 * 4095 * 2 * 2 * 8 * 2  # window − 1 tokens kept
    assert memory(full, wl, hw).kv_cache_bytes == 2 * 8 * 32769 * 2 * 2 * 8 * 2


def test_decode_only_workload_is_one_step_with_the_context_cached():
    cfg = from_name("llama-3.1-8b")
    ctx = Workload(batch=4, seq_len=8000, new_tokens=1, decode_only=True)
    after_prefill = Workload(batch=4, seq_len=8000, new_tokens=1)
    assert prefill_ops(cfg, ctx) == [] and ctx.prefill_tokens == 0
    assert [o.flops for o in decode_ops(cfg, ctx)] == [o.flops for o in decode_ops(cfg, after_prefill)]
    est = estimate(cfg, ctx, get_hardware("h100"))
    assert est.ttft_s is None and est.prefill.ops == () and est.decode.time_s > 0
    assert est.memory.kv_cache_bytes == memory(cfg, after_prefill, get_hardware("h100")).kv_cache_bytes
    assert est.to_dict()["rules_of_thumb"] == []
    with pytest.raises(InputError, match="decode step"):
        Workload(seq_len=10, new_tokens=0, decode_only=True)


def test_mla_decode_eager_decompresses_the_whole_cache_absorbed_does_not():
    cfg = from_name("deepseek-v3")
    wl = RW(batch=1, seq_len=4096, new_tokens=1)
    eager = {o.name: o for o in decode_ops(cfg, wl)}
    absorbed = {o.name: o for o in decode_ops(cfg, replace(wl, mla="absorbed"))}
    # kv_b_proj over every cached latent: 2 · 4097 · 512 · 128·(128+128) per layer
    assert eager["kv_b_proj"].flops == 2 * 4097 * 512 * 128 * 256 * 61
    assert "kv_b_proj" not in absorbed and "q_absorb" in absorbed and "o_absorb" in absorbed
    assert absorbed["attn_scores"].flops == 2 * 128 * 4097 * (512 + 64) * 61
    assert memory(cfg, wl, get_hardware("h200")).kv_cache_bytes == 4097 * 61 * (512 + 64) * 2
    pre_e = prefill_ops(cfg, wl)
    assert pre_e == prefill_ops(cfg, replace(wl, mla="absorbed"))  # the prefill decompresses the new tokens either way


def test_deepseek_sparse_attention_reads_the_top_k_keys_and_scores_every_one():
    """DeepSeek-V3.2's DSA under the engine convention: the MLA attention meets at most index_topk keys per query
    (prefill: a band index_topk wide past the first index_topk rows; decode: min(cached + 1, index_topk)), while the
    indexer scores every key each query may see (causal) with index_heads heads of index_head_dim; transformers'
    eager code (the reference, checked against FlopCounterMode in tests/llm/test_families.py) multiplies the whole
    S × S block in both. The cache keeps every token's latent, rotary key and indexer key."""
    cfg = ModelConfig(layers=2, hidden=64, heads=4, head_dim=24, v_head_dim=12, ffn=96, vocab=128, q_lora_rank=40,
                      kv_lora_rank=32, rope_head_dim=8, index_heads=2, index_head_dim=16, index_topk=64)
    s, topk, hi, di = 300, 64, 2, 16
    eng = {o.name: o for o in prefill_ops(cfg, Workload(batch=1, seq_len=s, new_tokens=0))}
    ref = {o.name: o for o in prefill_ops(cfg, RW(batch=1, seq_len=s, new_tokens=0))}
    band = topk * (topk + 1) // 2 + (s - topk) * topk
    assert eng["attn_scores"].flops == 2 * 4 * 24 * band * 2  # heads · head_dim · pairs · layers
    assert ref["attn_scores"].flops == 2 * 4 * 24 * s * s * 2
    assert eng["index_scores"].flops == 2 * hi * di * (s * (s + 1) // 2) * 2
    assert ref["index_scores"].flops == 2 * hi * di * s * s * 2 and ref["index_reduce"].flops == 2 * hi * s * s * 2
    assert eng["index_q"].flops == 2 * s * 40 * hi * di * 2 and eng["index_k"].flops == 2 * s * 64 * di * 2
    wl = Workload(batch=1, seq_len=1000, new_tokens=1)
    dec = {o.name: o for o in decode_ops(cfg, wl)}
    assert dec["attn_scores"].flops == 2 * 4 * topk * (32 + 8) * 2  # absorbed: every head against top-k latents
    assert dec["index_scores"].flops == 2 * hi * di * 1001 * 2
    assert memory(cfg, wl, get_hardware("h200")).kv_cache_bytes == 1001 * 2 * (32 + 8 + 16) * 2
    with pytest.raises(InputError, match="indexer"):
        ModelConfig(layers=2, hidden=64, heads=4, ffn=96, vocab=128, index_heads=2, index_head_dim=16, index_topk=4)
    # GLM-5: a layer without its own indexer (F) reuses the last one's top-k: sparse attention, no indexer work or key
    glm = cfg.replace(layer_types="IF")
    ops = {o.name: o for o in prefill_ops(glm, Workload(batch=1, seq_len=s, new_tokens=0))}
    assert ops["attn_scores"].flops == eng["attn_scores"].flops and ops["index_scores"].flops * 2 == \
        eng["index_scores"].flops
    assert glm.kv_cache_elements(10) == 10 * ((32 + 8 + 16) + (32 + 8))
    assert cfg.params - glm.params == 40 * hi * di + 64 * di + 2 * di + 64 * hi  # one indexer fewer
    with pytest.raises(InputError, match="at least one layer"):
        cfg.replace(layer_types="FF")
    with pytest.raises(InputError, match="index heads"):
        ModelConfig(layers=2, hidden=64, heads=4, ffn=96, vocab=128, layer_types="IF")


def test_llama4_runs_every_expert_and_shared_experts_every_token():
    scout = ModelConfig(layers=2, hidden=64, heads=4, kv_heads=2, ffn=80, vocab=50, experts=4, experts_per_token=1,
                        expert_ffn=32, shared_expert_ffn=32, moe_layers="DM", experts_compute="all")
    ops = {o.name: o for o in prefill_ops(scout, RW(batch=1, seq_len=5))}
    assert ops["gate_proj"].flops == 2 * 5 * 64 * 32 * 4  # all 4 experts on every token, one MoE layer
    assert ops["shared_gate_proj"].flops == 2 * 5 * 64 * 32
    assert ops["dense_gate_proj"].flops == 2 * 5 * 64 * 80
    assert ops["router"].flops == 2 * 5 * 64 * 4


def test_every_op_has_a_sharding_entry():
    from gemmlib.llm.accounting import OTHER_OP_NAMES, SHARDING

    assert set(OP_NAMES) | set(OTHER_OP_NAMES) <= set(SHARDING)


def test_learned_positions_refuse_a_longer_sequence_and_rotary_models_warn():
    with pytest.raises(InputError, match="learned position table"):
        estimate(from_name("gpt2"), Workload(seq_len=1000, new_tokens=100), get_hardware("h100"))
    est = estimate(from_name("llama-2-7b"), Workload(seq_len=4000, new_tokens=200), get_hardware("h100"))
    assert any("max_position_embeddings" in w for w in est.to_dict()["warnings"])


def test_scale_out_of_the_families_features():
    """MLA's latent cache is whole on every tensor-parallel rank (every head reads it); a shared expert's
    output joins the routed experts' before the MoE block's one all-reduce; routed experts are the
    expert-parallel ops; quantized checkpoints and decode-only workloads do not train."""
    from gemmlib.llm.parallel import Parallel
    from gemmlib.llm.scaleout import estimate as scaleout_estimate
    from gemmlib.llm.training import Training

    cfg, hw = from_name("deepseek-v3"), get_hardware("h200")
    wl = Workload(batch=1, seq_len=4096, new_tokens=1, decode_only=True)
    one = scaleout_estimate(cfg, wl, hw)
    tp8 = scaleout_estimate(cfg, wl, hw, Parallel(tp=8))
    assert tp8.per_gpu.kv_cache_bytes == one.per_gpu.kv_cache_bytes == memory(cfg, wl, hw).kv_cache_bytes
    after = {c.after for c in tp8.decode.collectives if c.op == "all_reduce"}
    assert {"o_proj", "down_proj", "dense_down_proj"} <= after and "shared_down_proj" not in after
    routed = {o.name for o in decode_ops(cfg, wl) if o.routed}
    assert routed == {"gate_proj", "up_proj", "down_proj"}
    assert tp8.ttft_s is None and tp8.to_dict()["read"]["mla"]["kv_lora_rank"] == 512
    with pytest.raises(InputError, match="inference format"):
        scaleout_estimate(cfg, Workload(batch=8, seq_len=128), hw, Parallel(dp=8), training=Training(tokens=1e9))
    with pytest.raises(InputError, match="cannot train"):
        scaleout_estimate(from_name("llama-3.1-8b"), wl, hw, training=Training(tokens=1e9))


# ----- the two conventions: engine (the default) and transformers (the reference) -----------------------------

def test_the_engine_convention_is_the_default_and_transformers_the_reference():
    from gemmlib.llm.accounting import CONVENTIONS

    wl = Workload(seq_len=8)
    assert wl.convention == "engine" and wl.overrides() == {}
    assert (wl.attention, wl.causal, wl.lm_head, wl.experts_compute, wl.mla) == ("fused", True, "last", "routed",
                                                                                 "absorbed")
    ref = wl.under("transformers")
    assert (ref.attention, ref.causal, ref.lm_head, ref.experts_compute, ref.mla) == ("eager", False, "all", "eager",
                                                                                      "eager")
    assert set(CONVENTIONS) == {"engine", "transformers"}
    over = Workload(seq_len=8, attention="eager", lm_head="last")
    assert over.overrides() == {"attention": {"value": "eager", "convention": "fused"}}  # last is the engine's own
    assert over.conventions()["name"] == "engine" and over.conventions()["overridden"] == over.overrides()
    with pytest.raises(InputError, match="convention"):
        Workload(convention="vllm")
    with pytest.raises(InputError, match="experts_compute"):
        Workload(experts_compute="some")


def test_the_engine_prefill_is_causal_fused_and_its_head_reads_the_last_position():
    cfg = from_name("llama-2-7b")
    s, b, d, layers, v = 1000, 2, 4096, 32, 32000
    eng = {o.name: o for o in prefill_ops(cfg, Workload(batch=b, seq_len=s))}
    assert eng["attn_scores"].flops == b * 32 * 128 * s * (s + 1) * layers  # the triangle with its diagonal
    assert eng["lm_head"].flops == 2 * b * d * v  # one position per sequence
    assert eng["attn_scores"].act_bytes == b * 32 * s * 128 * 2 * layers  # q only: no scores through memory
    est = estimate(cfg, Workload(batch=b, seq_len=s), get_hardware("h100"))
    assert not {"kv_repeat", "attn_softmax"} & {o.name for o in est.prefill.other_ops}  # fused: neither pass
    ref = estimate(cfg, RW(batch=b, seq_len=s), get_hardware("h100"))
    assert {"kv_repeat", "attn_softmax"} <= {o.name for o in ref.prefill.other_ops} or cfg.kv_heads == cfg.heads
    assert est.to_dict()["conventions"]["name"] == "engine" and ref.to_dict()["conventions"]["name"] == "transformers"


def test_llama4_routes_its_experts_under_the_engine_convention():
    """Llama 4's transformers code runs every expert on every token; an engine routes each token through one.
    Scout 16 experts, Maverick 128 (every other layer): 17 B active either way, as the model cards say."""
    import json
    from pathlib import Path

    from gemmlib.llm.accounting import executed_model
    from gemmlib.llm.hf import read_config

    scout_raw = json.loads((Path(__file__).resolve().parents[1] / "data" / "configs" / "llama-4-scout-text.json")
                           .read_text())
    for raw, total in ((scout_raw, 107_769_861_120),
                       (dict(scout_raw, num_local_experts=128, interleave_moe_layer_step=2), 400_711_848_960)):
        cfg, _ = read_config(raw)
        assert cfg.experts_compute == "all" and cfg.params == cfg.active_params == total
        engine = executed_model(cfg, Workload())
        assert engine.active_params == pytest.approx(17.2e9, rel=0.01)  # "17B active" (Llama 4 model cards)
        assert executed_model(cfg, RW()) is cfg
        wl = Workload(batch=1, seq_len=2048)
        routed = {o.name: o for o in prefill_ops(cfg, wl)}
        every = {o.name: o for o in prefill_ops(cfg, RW(batch=1, seq_len=2048, causal=True, lm_head="last",
                                                          attention="fused", mla="absorbed"))}
        assert every["gate_proj"].flops == routed["gate_proj"].flops * cfg.experts  # one of E against all E
        est = estimate(cfg, wl, get_hardware("h100"))
        assert est.model.active_params == engine.active_params  # the answer's model is the one that ran ...
        assert est.read()["experts"]["compute"] == "all"  # ... what was read is the config as it reads


def test_an_fp8_served_model_keeps_its_lm_head_and_routers_in_16_bits():
    """--weight-dtype fp8 is an engine's FP8 quantization (NVIDIA ModelOpt's for TensorRT-LLM, vLLM's fp8): the
    decoder's linears at one byte per weight, multiplied in fp8; the LM head and the MoE routers, which those
    quantizers leave unquantized, keep bf16 weights and multiply in bf16 with their inputs uncast. A quantized
    checkpoint's own unquantized linears (DeepSeek-V3's fp8 checkpoint: its head) do the same in an fp8 run."""
    from gemmlib.llm.efficiency import compute_dtype
    from gemmlib.llm.hf import load_config_file

    cfg = from_name("mixtral-8x7b")
    wl = Workload(batch=4, seq_len=512, new_tokens=8, weight_dtype="fp8", act_dtype="fp8", kv_dtype="fp8",
                  lm_head="last", attention="fused", causal=True)
    for ops in (prefill_ops(cfg, wl), decode_ops(cfg, wl)):
        by = {o.name: o for o in ops if o.is_gemm}
        assert {n for n, o in by.items() if o.wide} == {"lm_head", "router"}
        assert compute_dtype(by["lm_head"], "fp8") == "bf16" and compute_dtype(by["q_proj"], "fp8") == "fp8"
        head = by["lm_head"]
        assert head.weight_bytes == head.count * cfg.vocab * cfg.hidden * 2  # bf16, read once per step
        assert head.act_bytes == head.count * head.m * (cfg.hidden + cfg.vocab) * 2  # a 16-bit input, 16-bit logits
        q = by["q_proj"]  # one byte per weight and two fp32 scalars per layer
        assert q.weight_bytes == q.count * (cfg.hidden * cfg.q_dim + 8)
        assert q.act_bytes == q.count * q.m * (cfg.hidden * 1 + cfg.q_dim * 2)  # its input cast to fp8
    # 16-bit activations: nothing is marked (every GEMM multiplies in bf16 anyway); a 16-bit checkpoint neither
    for w, a in (("fp8", "bf16"), ("bf16", "bf16"), ("bf16", "fp8")):
        assert not any(o.wide for o in prefill_ops(cfg, replace(wl, weight_dtype=w, act_dtype=a)))
    ds = load_config_file(str(Path(__file__).parent.parent / "data" / "configs" / "deepseek-v3-fp8.json"))
    dsw = Workload(batch=1, seq_len=256, new_tokens=1, weight_dtype="bf16", act_dtype="fp8", kv_dtype="bf16",
                   lm_head="last", attention="fused", causal=True)
    assert {o.name for o in prefill_ops(ds, dsw) if o.is_gemm and o.wide} == {"lm_head", "router"}
