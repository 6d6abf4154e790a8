"""Megatron's MoE parallel folding (``--etp``, expert tensor parallel): the experts split over their own TP and EP
ranks, drawn from the same GPUs as the attention's TP and data replicas. Checked against invariants that do not
come from the code under test: every GPU's share of an op adds up to the whole job's exact FLOPs; the experts'
weights on one GPU are the checkpoint's expert parameters over EP × expert TP; the layout with etp = tp is the
classic one number for number; and Megatron's own rules (the GPU count, SP with TP in training)."""

from __future__ import annotations

import json

import pytest

from gemmlib.cli import main
from gemmlib.core.errors import InputError
from gemmlib.core.hardware import get_hardware
from gemmlib.llm.accounting import Workload, prefill_ops
from gemmlib.llm.memory import expert_weights_per_gpu
from gemmlib.llm.parallel import Parallel, forward_collectives, layers_per_stage, per_gpu_op, phase
from gemmlib.llm.presets import from_name
from gemmlib.llm.training import Training, train

H100 = get_hardware("H100 SXM")
QWEN = from_name("qwen3-30b-a3b")  # 128 experts, top-8, expert MLP 768, hidden 2048, 48 layers, 32 heads, 4 KV heads


def test_etp_equal_to_tp_is_the_classic_layout():
    a, b = Parallel(tp=2, ep=4, dp=2), Parallel(tp=2, ep=4, dp=2, etp=2)
    assert a == b and not b.folded and b.expert_tp == 2 and b.attn_ep == 4
    wl = Workload(batch=16, seq_len=256)
    pa, pb = phase(QWEN, wl, H100, a, "prefill"), phase(QWEN, wl, H100, b, "prefill")
    assert pa.time_s == pb.time_s and pa.collectives == pb.collectives


@pytest.mark.parametrize("par", [Parallel(tp=2, etp=1, ep=8, dp=2),  # 16 GPUs: attention TP 2 × 8 replicas
                                 Parallel(tp=4, etp=2, ep=4, pp=2),  # 16 GPUs: attention TP 4 × 2 replicas per stage
                                 Parallel(tp=1, etp=2, ep=4, dp=2)])  # experts wider than the attention's TP
def test_every_gpus_share_adds_up_to_the_whole_jobs_flops(par):
    """Per-GPU FLOPs × the GPUs of a stage × the stages' share of the layers = the exact count, for the routed
    experts (split over etp × ep) and for the attention and LM head (split over tp × the data replicas)."""
    par.check(QWEN, par.gpus)
    wl = Workload(batch=par.dp * par.attn_ep * 2, seq_len=128)  # two sequences per attention replica
    replica = Workload(batch=wl.batch // par.dp, seq_len=wl.seq_len)
    stage = layers_per_stage(QWEN, par)
    whole = {o.name: o for o in prefill_ops(QWEN, wl)}
    for o in prefill_ops(QWEN, replica):
        if o.name not in ("gate_proj", "down_proj", "q_proj", "o_proj", "lm_head"):
            continue
        mine = per_gpu_op(o, QWEN, par, stage_layers=stage)
        share = 1.0 if o.shard == "vocab" else stage / QWEN.layers
        stage_gpus = par.gpus // par.pp
        assert mine.flops * stage_gpus == pytest.approx(whole[o.name].flops * share, rel=1e-9), o.name


def test_expert_weights_per_gpu_are_the_experts_over_ep_times_expert_tp():
    par = Parallel(tp=2, etp=1, ep=8, dp=2, sequence_parallel=True)
    wl = Workload(batch=16, seq_len=128)
    per_expert = 3 * QWEN.hidden * QWEN.expert_ffn  # gate, up, down
    total = QWEN.layers * QWEN.experts * per_expert * 2  # bf16
    assert expert_weights_per_gpu(QWEN, wl, H100, par) == pytest.approx(total / (8 * 1))
    classic = Parallel(tp=2, ep=8)
    assert expert_weights_per_gpu(QWEN, wl, H100, classic) == pytest.approx(total / (8 * 2))


def test_the_all_to_all_sends_each_ranks_own_tokens_and_the_experts_need_no_tp_reduction():
    """Folded with etp 1: each GPU dispatches its sequence-parallel share of its replica's tokens (k copies) to the
    32 EP ranks (4 nodes of 8: the network), and the experts' output needs no TP collective."""
    par = Parallel(tp=2, etp=1, ep=32, pp=1, dp=1, sequence_parallel=True)
    assert par.gpus == 32 and par.attn_ep == 16 and par.stride("ep") == 1
    wl = Workload(batch=16, seq_len=256)
    coll = forward_collectives(prefill_ops(QWEN, wl), QWEN, wl, par, H100)
    a2a = [c for c in coll if c.op == "all_to_all"]
    tokens_per_gpu = 16 * 256 / 16 / 2  # one sequence per attention replica, split over its 2 TP ranks
    assert a2a and a2a[0].size_bytes == tokens_per_gpu * QWEN.experts_per_token * QWEN.hidden * 2
    assert "across 4 nodes" in a2a[0].link
    assert not [c for c in coll if c.after == "down_proj" and c.group == "tp"]
    assert [c for c in coll if c.after == "o_proj" and c.op == "reduce_scatter" and c.ranks == 2]


def test_training_reduces_the_dense_gradients_over_the_attention_replicas_and_not_the_experts():
    par = Parallel(tp=2, etp=1, ep=16, dp=1, sequence_parallel=True)  # 16 GPUs: 8 attention replicas, 1 expert copy
    wl = Workload(batch=64, seq_len=256, act_dtype="bf16", attention="fused", causal=True, lm_head="all")
    tr = train(QWEN, wl, H100, par, Training(tokens=1e9, micro_batch=8))
    dp = [c for c in tr.collectives if c.group == "dp"]
    assert dp and all(c.ranks == 8 for c in dp)  # the dense parameters' 8 copies; the experts have one
    assert "experts" not in " ".join(str(c.note) for c in dp)
    assert tr.tokens_per_s > 0 and tr.memory.total_bytes > 0


@pytest.mark.parametrize("par, msg", [
    (Parallel(tp=4, etp=1, ep=2, dp=2), "must be a multiple of TP 4"),
    (Parallel(tp=2, etp=5, ep=2), "does not divide the experts' MLP width 768"),
])
def test_bad_folded_splits(par, msg):
    with pytest.raises(InputError, match=msg):
        par.check(QWEN)


def test_folding_needs_a_moe_the_gpu_count_and_sp_in_training():
    with pytest.raises(InputError, match="needs a mixture-of-experts"):
        Parallel(tp=2, etp=1, ep=2).check(from_name("llama-3-8b"))
    with pytest.raises(InputError, match="the experts' split sets the count"):
        Parallel(tp=2, etp=1, ep=8).check(QWEN, gpus=16)
    wl = Workload(batch=64, seq_len=256, attention="fused", causal=True, lm_head="all")
    with pytest.raises(InputError, match=r"needs sequence parallelism \(--sequence-parallel\)"):
        train(QWEN, wl, H100, Parallel(tp=2, etp=1, ep=16), Training(tokens=1e9, micro_batch=8))


def test_the_cli_takes_a_megatron_folded_layout(capsys):
    """NeMo's Qwen3-235B-A22B recipe on 256 H100s (TP2 PP8 VP4 EP32, expert TP 1): refused without --etp (its
    tp × pp × ep is 512), sized with it."""
    base = ["estimate", "--preset", "qwen3-235b-a22b", "--train", "--train-tokens", "1e12", "--gpus", "256",
            "--tp", "2", "--pp", "8", "--ep", "32", "--batch", "8192", "--seq-len", "4096", "--virtual-stages", "4",
            "--sequence-parallel", "--micro-batch", "16"]
    assert main(base) == 2
    assert "512" in capsys.readouterr().err
    assert main(base + ["--etp", "1"]) == 0
    out = capsys.readouterr().out
    assert "ETP 1 x PP 8 x EP 32 x DP 1 = 256 GPUs (folded: attention TP 2 x 16 data replicas)" in out
    assert main(base + ["--etp", "1", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["parallel"]["etp"] == 1 and d["parallel"]["tp"] == 2 and d["parallel"]["ep"] == 32


def test_a_folded_serving_layout_holds_kv_per_attention_replica(capsys):
    """vLLM-style expert parallelism for DeepSeek-V3 on two nodes: attention TP 8 on each, the experts over all 16
    GPUs (expert TP 1). Each attention replica holds its own sequences' KV, so the pool is per-GPU blocks × 2."""
    from gemmlib.llm.serving import Engine, kv_pool

    ds = from_name("deepseek-v3")
    par = Parallel(tp=8, etp=1, ep=16)
    assert par.gpus == 16 and par.attn_ep == 2
    wl = Workload(batch=64, seq_len=1024, new_tokens=256, act_dtype="bf16", weight_dtype="fp8", kv_dtype="bf16",
                  attention="fused", causal=True, lm_head="last")
    pool = kv_pool(ds, wl, H100, par, Engine("vllm").resolved(H100), input_len=1024, output_len=256)
    per_gpu = int(pool.free_bytes // pool.block_bytes)
    assert per_gpu > 0 and pool.blocks == 2 * per_gpu
    argv = ["estimate", "--preset", "deepseek-v3", "--gpus", "16", "--tp", "8", "--etp", "1", "--ep", "16",
            "--batch", "64", "--seq-len", "1024", "--new-tokens", "256", "--serve"]
    assert main(argv) == 0
    assert "(folded: attention TP 8 x 2 data replicas)" in capsys.readouterr().out
