"""Training: the exact FLOPs of a step against FlopCounterMode around loss.backward() on real modules
(with torch.utils.checkpoint for recomputation), step time, MFU, the run, ZeRO volumes, the anchor."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from estimator_reference import Attention, Decoder
from test_accounting import CONFIGS as ACCOUNTING_CONFIGS
from torch import nn
from torch.utils.checkpoint import checkpoint, set_checkpoint_early_stop
from torch.utils.flop_counter import FlopCounterMode

from gemmlib.core.errors import InputError
from gemmlib.core.hardware import get_hardware
from gemmlib.llm.accounting import Workload, prefill_ops
from gemmlib.llm.parallel import Parallel
from gemmlib.llm.presets import from_name
from gemmlib.llm.scaleout import estimate
from gemmlib.llm.training import LLAMA31_405B, Training, step_flops, train

CONFIGS = {k: v for k, v in ACCOUNTING_CONFIGS.items() if k != "odd_head_dim"}  # llama GQA, tied + bias, GPT, MoE


class _CheckpointedLayer(nn.Module):
    """Full recomputation: the whole layer's forward runs again in backward (gradient checkpointing)."""

    def __init__(self, block):
        super().__init__()
        self.block = block

    def forward(self, x, cache=None):
        return checkpoint(lambda t: self.block(t)[0], x, use_reentrant=False), None


class _SelectiveAttention(Attention):
    """Selective recomputation (Korthikanti et al.): QKᵀ, softmax and ·V run again in backward."""

    def forward(self, x, cache=None):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.h, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.kvh, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.kvh, self.hd).transpose(1, 2)
        rep = self.h // self.kvh

        def core(q, k, v):
            k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
            s = self.attn_scores(q, k.transpose(-2, -1)) / math.sqrt(self.hd)
            mask = torch.ones(t, t, dtype=torch.bool).tril()
            return self.attn_values(torch.softmax(s.masked_fill(~mask, float("-inf")), -1), v)

        o = checkpoint(core, q, k, v, use_reentrant=False).transpose(1, 2).reshape(b, t, self.h * self.hd)
        return self.o_proj(o), None


def _model(cfg, recompute="none"):
    torch.manual_seed(0)
    model = Decoder(cfg)
    if recompute == "full":
        model.layers = nn.ModuleList(_CheckpointedLayer(b) for b in model.layers)
    elif recompute == "selective":
        for blk in model.layers:
            sel = _SelectiveAttention(cfg)
            sel.load_state_dict(blk.attn.state_dict())
            blk.attn = sel
    return model


def _measured(cfg, batch, seq, recompute="none"):
    """(total FLOPs of forward + loss.backward(), FLOPs inside backward alone), by FlopCounterMode."""
    model = _model(cfg, recompute)
    ids = torch.randint(0, cfg.vocab, (batch, seq))
    targets = torch.randint(0, cfg.vocab, (batch, seq))
    # Re-run the whole checkpointed region, as Megatron's reentrant checkpoint does: PyTorch's non-reentrant one
    # stops early by default, once every tensor backward needs is back, skipping the region's last GEMM.
    with FlopCounterMode(display=False) as total, set_checkpoint_early_stop(False):
        logits, _ = model(ids)
        loss = F.cross_entropy(logits.reshape(-1, cfg.vocab), targets.reshape(-1))
        with FlopCounterMode(display=False) as bwd:
            loss.backward()
    return total.get_total_flops(), bwd.get_total_flops()


@pytest.mark.parametrize("name", list(CONFIGS))
@pytest.mark.parametrize("recompute", ["none", "selective", "full"])
def test_step_flops_equal_flop_counter_around_backward(name, recompute):
    cfg = CONFIGS[name]
    batch, seq = 3, 7
    total, bwd = _measured(cfg, batch, seq, recompute)
    f = step_flops(cfg, Workload(batch=batch, seq_len=seq), recompute)
    assert f["total"] == total
    assert f["backward"] + f["recompute"] == bwd  # recomputation happens inside backward
    assert f["forward"] == total - bwd
    if recompute == "none":
        assert f["backward"] == 2 * f["forward"] and f["recompute"] == 0
    assert f["model"] == 3 * f["forward"]


def test_recompute_counts_what_is_rerun():
    cfg = CONFIGS["llama_gqa"]
    wl = Workload(batch=2, seq_len=16)
    ops = prefill_ops(cfg, wl)
    f = {r: step_flops(cfg, wl, r) for r in ("none", "selective", "full")}
    assert f["full"]["recompute"] == sum(o.flops for o in ops if o.name != "lm_head")
    assert f["selective"]["recompute"] == sum(o.flops for o in ops if o.name in ("attn_scores", "attn_values"))
    with pytest.raises(InputError):
        step_flops(cfg, wl, "some")


def test_one_gpu_step_time_mfu_and_run():
    cfg = from_name("llama-3-8b")
    hw = get_hardware("h100")
    wl = Workload(batch=8, seq_len=1024, attention="fused")
    tr = train(cfg, wl, hw, Parallel(), Training(tokens=1e9, micro_batch=2))
    assert tr.microbatches == 4 and tr.communication_s == 0 and tr.bubble_s == 0
    assert tr.backward_s == pytest.approx(2 * tr.forward_s)
    assert tr.step_time_s == pytest.approx(4 * 3 * tr.forward_s)
    assert tr.mfu == pytest.approx(tr.flops["model"] / (tr.step_time_s * 989.4e12))
    assert tr.tokens_per_s == pytest.approx(8 * 1024 / tr.step_time_s)
    assert tr.steps == math.ceil(1e9 / (8 * 1024))
    assert tr.gpu_hours == pytest.approx(tr.steps * tr.step_time_s / 3600)
    assert tr.six_nd == 6 * cfg.params * 1e9
    assert tr.run_flops == pytest.approx(tr.flops["model"] / (8 * 1024) * 1e9)


def test_recompute_costs_time_and_saves_memory():
    cfg = from_name("llama-3-8b")
    hw = get_hardware("h100")
    wl = Workload(batch=16, seq_len=2048)
    par = Parallel(tp=2, dp=2)
    runs = {r: train(cfg, wl, hw, par, Training(tokens=1e9, micro_batch=2, recompute=r))
            for r in ("none", "selective", "full")}
    assert runs["none"].step_time_s < runs["selective"].step_time_s < runs["full"].step_time_s
    mem = {r: t.memory.activation_bytes for r, t in runs.items()}
    assert mem["none"] > mem["selective"] > mem["full"]
    assert runs["none"].mfu == pytest.approx(runs["none"].hfu)
    assert runs["full"].hfu > runs["full"].mfu


def test_zero_stages_move_the_volumes_zero_says():
    """ZeRO §7: stage 0 all-reduces 2Ψ bytes of gradients; stages 1-2 a reduce-scatter and an all-gather of
    the same size (the same wire volume); stage 3 all-gathers the weights again in forward and backward (1.5×)."""
    cfg = from_name("llama-3-8b")
    hw = get_hardware("h100")
    wl = Workload(batch=8, seq_len=512)
    par = Parallel(dp=8)
    got = {z: train(cfg, wl, hw, par, Training(tokens=1e9, zero=z)) for z in (0, 1, 2, 3)}
    dp = {z: [c for c in t.collectives if c.group == "dp"] for z, t in got.items()}
    psi = cfg.params  # every parameter on each GPU (no TP/PP)
    assert [(c.op, c.size_bytes, c.count) for c in dp[0]] == [("all_reduce", 2 * psi, 1)]
    assert [(c.op, c.count) for c in dp[1]] == [("reduce_scatter", 1), ("all_gather", 1)]
    assert [(c.op, c.count) for c in dp[3]] == [("reduce_scatter", 1), ("all_gather", 2)]  # one micro-batch

    def wire(cs):  # bytes on the wire per GPU: size × nccl-tests' bus factor
        return sum(c.size_bytes * c.count * (2 if c.op == "all_reduce" else 1) * 7 / 8 for c in cs)

    assert wire(dp[1]) == pytest.approx(wire(dp[0])) and wire(dp[2]) == pytest.approx(wire(dp[0]))
    assert wire(dp[3]) == pytest.approx(1.5 * wire(dp[0]))
    mems = [got[z].memory for z in (0, 1, 2, 3)]
    assert mems[0].optimizer_bytes == pytest.approx(12 * psi) and mems[1].optimizer_bytes == pytest.approx(12 * psi / 8)
    assert mems[2].gradient_bytes == pytest.approx(2 * psi / 8) and mems[3].weights_bytes == pytest.approx(2 * psi / 8)


def test_tensor_parallel_training_charges_four_all_reduces_per_layer():
    """Shoeybi et al. §3: two all-reduces per layer forward and two backward, each of b·s·h activations."""
    cfg = from_name("llama-3-8b")
    hw = get_hardware("h100")
    wl = Workload(batch=4, seq_len=1024)
    tr = train(cfg, wl, hw, Parallel(tp=4), Training(tokens=1e9, micro_batch=1))
    layer_ar = [c for c in tr.collectives if c.op == "all_reduce" and c.after in ("o_proj", "down_proj")]
    assert sum(c.count for c in layer_ar) == 4 * cfg.layers * tr.microbatches
    assert {c.size_bytes for c in layer_ar} == {1 * 1024 * cfg.hidden * 2}
    sp = train(cfg, wl, hw, Parallel(tp=4, sequence_parallel=True), Training(tokens=1e9))
    layer = [c for c in sp.collectives if c.after in ("o_proj", "down_proj")]
    per_layer = {op: sum(c.count for c in layer if c.op == op) / (cfg.layers * sp.microbatches)
                 for op in ("all_gather", "reduce_scatter", "all_reduce")}
    assert per_layer == {"all_gather": 6, "reduce_scatter": 4, "all_reduce": 0}  # Megatron: fwd 2+2, bwd 4+2


def test_pipeline_bubble_and_microbatches():
    cfg = from_name("llama-3-8b")
    hw = get_hardware("h100")
    tr = train(cfg, Workload(batch=32, seq_len=1024), hw, Parallel(pp=4, dp=2), Training(tokens=1e9))
    m = 32 // 2
    assert tr.microbatches == m
    assert tr.bubble_s / (tr.step_time_s - tr.dp_communication_s) == pytest.approx(3 / (m + 3))


@pytest.mark.parametrize("kw, msg", [
    (dict(batch=10), "does not split"),
])
def test_bad_training_input(kw, msg):
    cfg = from_name("llama-3-8b")
    with pytest.raises(InputError, match=msg):
        train(cfg, Workload(seq_len=128, **kw), get_hardware("h100"), Parallel(dp=4), Training(tokens=1e9))
    for bad in (dict(tokens=0), dict(tokens=-1.0), dict(tokens=float("inf")), dict(tokens=1e9, micro_batch=0),
                dict(tokens=1e9, recompute="most"), dict(tokens=1e9, zero=4)):
        with pytest.raises(InputError):
            Training(**bad)
    moe = from_name("mixtral-8x7b")
    with pytest.raises(InputError, match="multiple of --ep"):
        train(moe, Workload(batch=4, seq_len=128), get_hardware("h100"), Parallel(ep=4), Training(tokens=1e9))


def test_llama31_405b_anchor():
    a = LLAMA31_405B
    assert a.model.params == 405_853_388_800  # the HF checkpoint's 405B (model card: 405B)
    assert 6 * a.model.params * a.tokens == pytest.approx(a.flops, rel=0.01)  # the paper's 3.8e25 is 6·N·D
    assert a.parallel["tp"] * a.parallel["pp"] * a.parallel["dp"] == a.gpus
    assert a.global_batch * a.seq_len == 16 * 2**20  # "16M tokens per batch"
    est = estimate(a.model, Workload(batch=a.global_batch, seq_len=a.seq_len, attention="fused"),
                   get_hardware(a.gpu), Parallel(**a.parallel, sequence_parallel=True),
                   training=Training(tokens=a.tokens, recompute="selective", zero=1))
    tr = est.train
    assert tr.gpus == 8192 and tr.microbatches == 32
    assert tr.run_flops > tr.six_nd  # the exact count adds the attention products at 8k context
