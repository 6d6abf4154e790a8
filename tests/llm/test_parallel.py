"""Parallelism with communication, against independent references: a Megatron-style tensor-parallel
split of real torch modules (each rank's shard run under FlopCounterMode, its partial outputs summed
as an all-reduce would), nccl-tests' time formula, aiconfigurator's measured NCCL all-reduces, and
the one-GPU accounting."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from estimator_reference import Block
from torch.utils.flop_counter import FlopCounterMode

from gemmlib.core.errors import InputError
from gemmlib.core.hardware import get_hardware
from gemmlib.llm.accounting import Workload, estimate, prefill_ops
from gemmlib.llm.config import ModelConfig
from gemmlib.llm.memory import kv_per_gpu, weights_per_gpu
from gemmlib.llm.parallel import Parallel, forward_collectives, per_gpu_op, phase, pipeline_send
from gemmlib.llm.presets import from_name
from gemmlib.llm.scaleout import estimate as scaleout_estimate

CFG = ModelConfig(layers=1, hidden=48, heads=8, kv_heads=2, ffn=96, vocab=96)


def _count(fn):
    with FlopCounterMode(display=False) as fc:
        out = fn()
    return fc.get_total_flops(), out


def _rank_layer(block: Block, x: torch.Tensor, r: int, t: int) -> tuple[dict, dict, torch.Tensor]:
    """Rank r of t of a Megatron tensor-parallel layer, written from the paper (not from gemmlib):
    q/k/v and gate/up split by output rows, o/down by input columns; KV heads split, or each rank
    keeps one when there are fewer KV heads than ranks. Returns per-op FLOPs, parameter counts, and
    the row-parallel partial outputs (o_proj, down_proj) an all-reduce would sum."""
    cfg = CFG
    a, m = block.attn, block.mlp
    hd, hq = cfg.head_dim, cfg.heads // t
    kv_here = max(cfg.kv_heads // t, 1)
    kv_first = (r * cfg.kv_heads // t) if cfg.kv_heads >= t else r // (t // cfg.kv_heads)
    qs = slice(r * hq * hd, (r + 1) * hq * hd)
    ks = slice(kv_first * hd, (kv_first + kv_here) * hd)
    fs = slice(r * cfg.ffn // t, (r + 1) * cfg.ffn // t)
    b, s, _ = x.shape
    flops, params = {}, {}
    h = block.norm1(x)
    flops["q_proj"], q = _count(lambda: F.linear(h, a.q_proj.weight[qs]))
    flops["k_proj"], k = _count(lambda: F.linear(h, a.k_proj.weight[ks]))
    flops["v_proj"], v = _count(lambda: F.linear(h, a.v_proj.weight[ks]))
    params.update(q_proj=a.q_proj.weight[qs].numel(), k_proj=a.k_proj.weight[ks].numel(),
                  v_proj=a.v_proj.weight[ks].numel())
    q = q.view(b, s, hq, hd).transpose(1, 2)
    k = k.view(b, s, kv_here, hd).transpose(1, 2).repeat_interleave(hq // kv_here, 1)
    v = v.view(b, s, kv_here, hd).transpose(1, 2).repeat_interleave(hq // kv_here, 1)
    flops["attn_scores"], sc = _count(lambda: q @ k.transpose(-2, -1) / math.sqrt(hd))
    mask = torch.ones(s, s, dtype=torch.bool).tril()
    flops["attn_values"], o = _count(lambda: torch.softmax(sc.masked_fill(~mask, float("-inf")), -1) @ v)
    o = o.transpose(1, 2).reshape(b, s, hq * hd)
    flops["o_proj"], part_o = _count(lambda: F.linear(o, a.o_proj.weight[:, qs]))
    params["o_proj"] = a.o_proj.weight[:, qs].numel()
    h2 = block.norm2(x + a(block.norm1(x))[0])  # the all-reduced attention output, as every rank has it
    flops["gate_proj"], g = _count(lambda: F.linear(h2, m.gate_proj.weight[fs]))
    flops["up_proj"], u = _count(lambda: F.linear(h2, m.up_proj.weight[fs]))
    flops["down_proj"], part_d = _count(lambda: F.linear(F.silu(g) * u, m.down_proj.weight[:, fs]))
    params.update(gate_proj=m.gate_proj.weight[fs].numel(), up_proj=m.up_proj.weight[fs].numel(),
                  down_proj=m.down_proj.weight[:, fs].numel(), norms=2 * cfg.hidden)
    return flops, params, {"o_proj": part_o, "down_proj": part_d, "kv": (k.shape, kv_here)}


@pytest.mark.parametrize("t", [2, 4, 8])  # 2: KV heads split; 4, 8: fewer KV heads than ranks, replicated
def test_per_gpu_ops_equal_a_real_tensor_parallel_shard(t):
    torch.manual_seed(0)
    block = Block(CFG)
    b, s = 2, 5
    x = torch.randn(b, s, CFG.hidden)
    wl = Workload(batch=b, seq_len=s, causal=False, weight_dtype="fp32", act_dtype="fp32", kv_dtype="fp32")
    par = Parallel(tp=t)
    ours = {o.name: per_gpu_op(o, CFG, par) for o in prefill_ops(CFG, wl)}
    full_o = block.attn.o_proj(_attn_core_input(block, x))
    parts_o = []
    for r in range(t):
        flops, params, parts = _rank_layer(block, x, r, t)
        for name, f in flops.items():
            assert ours[name].flops == f, (t, r, name)
        parts_o.append(parts["o_proj"])
        # the weight each rank reads is its shard (fp32: 4 bytes per parameter)
        for name in ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"):
            assert ours[name].weight_bytes == params[name] * 4, (t, name)
    # Row parallel: the shards' partial outputs sum to the full output — what the all-reduce does, on
    # b·s·hidden elements, the size the collective is charged for.
    assert torch.allclose(sum(parts_o), full_o, atol=1e-5)
    colls = forward_collectives(prefill_ops(CFG, wl), CFG, wl, par, get_hardware("h100"))
    ar = {c.after: c for c in colls if c.op == "all_reduce"}
    assert ar["o_proj"].size_bytes == parts_o[0].numel() * 4 and ar["o_proj"].count == CFG.layers
    assert ar["down_proj"].size_bytes == b * s * CFG.hidden * 4


def _attn_core_input(block, x):
    """The attention output before o_proj, computed whole (the reference for the shards' sum)."""
    a, cfg = block.attn, CFG
    b, s, _ = x.shape
    h = block.norm1(x)
    q = a.q_proj(h).view(b, s, cfg.heads, cfg.head_dim).transpose(1, 2)
    rep = cfg.heads // cfg.kv_heads
    k = a.k_proj(h).view(b, s, cfg.kv_heads, cfg.head_dim).transpose(1, 2).repeat_interleave(rep, 1)
    v = a.v_proj(h).view(b, s, cfg.kv_heads, cfg.head_dim).transpose(1, 2).repeat_interleave(rep, 1)
    sc = q @ k.transpose(-2, -1) / math.sqrt(cfg.head_dim)
    mask = torch.ones(s, s, dtype=torch.bool).tril()
    o = torch.softmax(sc.masked_fill(~mask, float("-inf")), -1) @ v
    return o.transpose(1, 2).reshape(b, s, cfg.heads * cfg.head_dim)


@pytest.mark.parametrize("t", [2, 4, 8])
def test_weights_and_kv_per_gpu_equal_the_shard(t):
    torch.manual_seed(0)
    block = Block(CFG)
    wl = Workload(batch=3, seq_len=11, new_tokens=4)
    _, params, parts = _rank_layer(block, torch.randn(1, 4, CFG.hidden), 0, t)
    shard = sum(params.values()) + 2 * CFG.vocab * CFG.hidden // t + CFG.hidden  # + embedding, LM head, final norm
    hw = get_hardware("h100")
    assert weights_per_gpu(CFG, wl, hw, Parallel(tp=t))["last"] == shard * 2  # bf16
    kv_heads_here = parts["kv"][1]
    assert kv_per_gpu(CFG, wl, hw, Parallel(tp=t)) == 2 * CFG.layers * kv_heads_here * CFG.head_dim * 2 * 3 * 15
    assert weights_per_gpu(CFG, wl, hw, Parallel())["last"] == CFG.params * 2


def test_one_gpu_is_the_single_device_accounting():
    cfg = from_name("llama-3-8b")
    hw = get_hardware("h200")
    wl = Workload(batch=4, seq_len=300, new_tokens=7)
    one = estimate(cfg, wl, hw, efficiency=0.7)
    so = scaleout_estimate(cfg, wl, hw, Parallel(), 0.7)
    assert so.prefill.time_s == one.prefill.time_s and so.decode.time_s == one.decode.time_s
    assert [o.time_s for o in so.prefill.ops] == [o.time_s for o in one.prefill.ops]
    assert [o.flops for o in so.decode.ops] == [o.flops for o in one.decode.ops]
    assert so.prefill.communication_s == 0 and so.decode.communication_s == 0
    a, b = so.to_dict(), one.to_dict()
    for k in ("model", "workload", "memory", "times", "variants", "rules_of_thumb"):
        assert a[k] == b[k], k
    for k in ("flops", "bytes", "time_s", "gemm_time_s", "other_time_s", "gemm_share_of_time", "ops"):
        assert a["prefill"][k] == b["prefill"][k] and a["decode"][k] == b["decode"][k], k
    assert [o["flops"] for o in a["prefill"]["job_ops"]] == [o["flops"] for o in b["prefill"]["ops"]]


def test_collective_time_is_nccl_tests_formula_over_the_catalogue_link():
    """t = latency + S · 2(n−1)/n / busbw for an all-reduce (nccl-tests doc/PERFORMANCE.md), over NVLink 4
    at 450 GB/s per direction with 15.6 µs latency on an H100 SXM node."""
    cfg = from_name("llama-3-70b")
    wl = Workload(batch=16, seq_len=2048, new_tokens=0)
    pre = phase(cfg, wl, get_hardware("h100"), Parallel(tp=8), "prefill")
    ar = [c for c in pre.collectives if c.after == "o_proj"][0]
    size = 16 * 2048 * 8192 * 2
    assert ar.size_bytes == size and ar.count == 80 and ar.op == "all_reduce"
    assert ar.time_s == pytest.approx(80 * (15.6e-6 + size * 2 * 7 / 8 / 450e9))
    assert pre.communication_s == pytest.approx(sum(c.time_s for c in pre.collectives))
    assert pre.time_s == pytest.approx(pre.compute_s + pre.communication_s)


@pytest.mark.parametrize("size, measured_us", [(268435456, 1092.1), (536870912, 2111.1)])
def test_h100_link_predicts_measured_large_all_reduces(size, measured_us):
    """aiconfigurator's nccl-tests sweep on 8 × H100 SXM (NCCL 2.29.2, fp16 all_reduce, out of place):
    the catalogue link (line rate + measured small-message latency) is within 5 % for large messages."""
    link = get_hardware("h100").interconnect.link_for(8)
    assert link.time("all_reduce", size, 8) == pytest.approx(measured_us * 1e-6, rel=0.05)


def test_links_by_placement():
    h100 = get_hardware("h100")
    par = Parallel(tp=8, dp=4)
    assert "NVLink" in par.link("tp", h100).name
    dp = par.link("dp", h100)  # stride 8: one GPU per node, its own 400 Gb/s NIC
    assert "InfiniBand" in dp.name and dp.busbw == 50e9
    tp16 = Parallel(tp=16).link("tp", h100)  # 8 per node: 8 NICs carry the ring
    assert tp16.busbw == 8 * 50e9 and "2 nodes" in tp16.name
    assert Parallel(tp=4, gpus_per_node=4).link("tp", h100).busbw == 450e9
    # A node stated larger than the job holds all of it: 16 GPUs at 1,000 per node are one node whose two NVLink
    # islands of 8 meet over PCIe (the group once "straddled" two nodes and went "across 1 nodes" over the NIC).
    big = Parallel(tp=16, gpus_per_node=1000).link("tp", h100)
    assert big == get_hardware("h100").interconnect.pcie_link and "node" not in big.name
    assert Parallel(tp=8, gpus_per_node=1000).link("tp", h100).busbw == 450e9
    gb200 = get_hardware("gb200")  # 64 of an NVL72 rack's GPUs: one NVLink domain, at the catalogue's node or stated
    for par in (Parallel(ep=64), Parallel(ep=64, gpus_per_node=72)):
        assert par.all_to_all_link("ep", gb200) == gb200.interconnect.intra
    pcie = get_hardware("h100 pcie")
    assert "bridge" in Parallel(tp=2).link("tp", pcie).name  # NVLink bridge pairs
    assert "PCIe" in Parallel(tp=4).link("tp", pcie).name
    with pytest.raises(InputError, match="no network"):
        Parallel(tp=16).link("tp", get_hardware("l4"))


def test_pipeline_stages_split_layers_and_charge_the_bubble():
    cfg = from_name("llama-3-8b")
    hw = get_hardware("h100")
    wl = Workload(batch=8, seq_len=512, new_tokens=16)
    pre = phase(cfg, wl, hw, Parallel(pp=4), "prefill")
    assert pre.microbatches == 4 and pre.stage_periods == 4 + 4 - 1
    assert pre.bubble_s / pre.time_s == pytest.approx(3 / 7)
    q = pre.by_name()["q_proj"]
    assert q.flops == sum(o.flops for o in prefill_ops(cfg, wl) if o.name == "q_proj") // 4  # 8 of 32 layers
    send = pipeline_send(cfg, 2 * 512, 1, wl, Parallel(pp=4), hw)  # a micro-batch of 2 sequences, one boundary
    assert send.op == "send_recv" and send.size_bytes == 2 * 512 * cfg.hidden * 2
    assert send.time_s == pytest.approx(15.6e-6 + send.size_bytes / 450e9)  # stride 1: NVLink, factor 1
    dec = phase(cfg, wl, hw, Parallel(pp=4), "decode")
    assert dec.stage_periods == 4  # a step cycles max(M, p) stage periods


def test_overlap_is_the_best_case():
    cfg = from_name("llama-3-70b")
    hw = get_hardware("h100")
    wl = Workload(batch=16, seq_len=2048, new_tokens=8)
    for which in ("prefill", "decode"):
        no = phase(cfg, wl, hw, Parallel(tp=8), which)
        yes = phase(cfg, wl, hw, Parallel(tp=8, overlap=True), which)
        assert yes.time_s == pytest.approx(max(no.compute_s, no.collective_s))
        assert yes.communication_s == pytest.approx(max(0.0, no.collective_s - no.compute_s))
        assert yes.time_s <= no.time_s


def test_expert_parallel_splits_experts_and_dispatches_with_all_to_all():
    cfg = from_name("mixtral-8x7b")
    hw = get_hardware("h100")
    wl = Workload(batch=8, seq_len=256)
    whole = {o.name: o for o in prefill_ops(cfg, wl)}
    pre = phase(cfg, wl, hw, Parallel(tp=2, ep=4), "prefill")
    mine = pre.by_name()
    assert mine["gate_proj"].flops == whole["gate_proj"].flops // 8  # experts over EP × TP
    assert mine["q_proj"].flops == whole["q_proj"].flops // 8  # attention: 1/4 of the sequences, 1/2 of the heads
    assert mine["q_proj"].weight_bytes == whole["q_proj"].weight_bytes / 2  # non-expert weights: every EP rank
    a2a = [c for c in pre.collectives if c.op == "all_to_all"]
    assert sum(c.count for c in a2a) == 2 * cfg.layers  # dispatch + combine per MoE layer
    assert a2a[0].size_bytes == 8 * 256 / 4 / 2 * 2 * cfg.hidden * 2  # local tokens / t, top-2 copies, bf16


@pytest.mark.parametrize("par, cfg, msg", [
    (Parallel(tp=3), from_name("llama-3-8b"), "does not divide the 32 attention heads"),
    (Parallel(tp=4), ModelConfig(layers=2, hidden=96, heads=12, kv_heads=6, ffn=96, vocab=10), "one must divide"),
    (Parallel(tp=4), ModelConfig(layers=2, hidden=64, heads=8, ffn=90, vocab=10), "does not divide the MLP width"),
    (Parallel(pp=33), from_name("llama-3-8b"), "more pipeline stages"),
    (Parallel(ep=2), from_name("llama-3-8b"), "needs a mixture-of-experts"),
    (Parallel(ep=3), from_name("mixtral-8x7b"), "does not divide the 8 experts"),
])
def test_bad_splits(par, cfg, msg):
    with pytest.raises(InputError, match=msg):
        par.check(cfg)


def test_bad_sizes_and_gpu_count():
    with pytest.raises(InputError, match="the GPU count given is"):
        Parallel(tp=2, dp=2).check(from_name("llama-3-8b"), gpus=8)
    for bad in (dict(tp=0), dict(pp=-1), dict(ep=1.5), dict(dp="2"), dict(overlap=1), dict(gpus_per_node=-8)):
        with pytest.raises(InputError):
            Parallel(**bad)
