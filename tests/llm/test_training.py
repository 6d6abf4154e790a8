"""Training: the exact FLOPs of a step against FlopCounterMode around loss.backward() on real modules
(with torch.utils.checkpoint for recomputation), step time, MFU, the run, ZeRO volumes, the anchor."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
import torch
import torch.nn.functional as F
from estimator_reference import Attention, Decoder
from reference_convention import reference_workload
from test_accounting import CONFIGS as ACCOUNTING_CONFIGS
from torch import nn
from torch.utils.checkpoint import checkpoint, set_checkpoint_early_stop
from torch.utils.flop_counter import FlopCounterMode

from gemmlib.core.errors import InputError
from gemmlib.core.hardware import get_hardware
from gemmlib.llm.accounting import Workload, prefill_ops, prefill_other_ops
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


class _OpPolicyLayer(nn.Module):
    """torchtitan's selective op policy (parallelize_llama.py, ``_apply_ac_to_transformer_block``): save every mm's
    output "except every second mm" and the attention kernel's (here the two bmm products stand for SDPA), recompute
    the rest of the block in backward."""

    def __init__(self, block):
        super().__init__()
        self.block = block

    def forward(self, x, cache=None):
        from collections import defaultdict

        from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts

        def context():
            meta = defaultdict(int)

            def policy(ctx, func, *args, **kwargs):
                key = ("recompute" if ctx.is_recompute else "forward") + "_mm_count"
                if func == torch.ops.aten.mm.default:
                    meta[key] += 1
                save = func in (torch.ops.aten.mm.default, torch.ops.aten.bmm.default) and not (
                    func == torch.ops.aten.mm.default and meta[key] % 2 == 0)
                return CheckpointPolicy.MUST_SAVE if save else CheckpointPolicy.PREFER_RECOMPUTE

            return create_selective_checkpoint_contexts(policy)

        return checkpoint(lambda t: self.block(t)[0], x, use_reentrant=False, context_fn=context), None


def _model(cfg, recompute="none"):
    torch.manual_seed(0)
    model = Decoder(cfg)
    if recompute == "op":
        model.layers = nn.ModuleList(_OpPolicyLayer(b) for b in model.layers)
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
    f = step_flops(cfg, reference_workload(batch=batch, seq_len=seq), recompute)
    assert f["total"] == total
    assert f["backward"] + f["recompute"] == bwd  # recomputation happens inside backward
    assert f["forward"] == total - bwd
    if recompute == "none":
        assert f["backward"] == 2 * f["forward"] and f["recompute"] == 0
    assert f["model"] == 3 * f["forward"]


def test_torchtitans_op_policy_reruns_every_second_matmul():
    """``op`` against FlopCounterMode around backward with torchtitan's policy applied to the reference blocks: the
    2nd, 4th and 6th matmul of each block (k, o, up) run again, the attention products and the LM head do not."""
    cfg = CONFIGS["llama_gqa"]
    batch, seq = 3, 7
    total, bwd = _measured(cfg, batch, seq, "op")
    f = step_flops(cfg, reference_workload(batch=batch, seq_len=seq), "op")
    assert f["total"] == total and f["backward"] + f["recompute"] == bwd
    ops = prefill_ops(cfg, reference_workload(batch=batch, seq_len=seq))
    assert f["recompute"] == sum(o.flops for o in ops if o.name in ("k_proj", "o_proj", "up_proj")) > 0


def test_eager_pytorch_pays_its_element_wise_passes_and_sdpa():
    """torchtitan without torch.compile: the norms, rotary and loss traffic of eager PyTorch, the repeat_kv and
    contiguous copies, SDPA's FlashAttention-2; the GEMMs are the same kernels."""
    from gemmlib.llm.accounting import efficiency_for
    from gemmlib.llm.training import EAGER_BYTES, SDPA_FLASH_RATIO

    cfg = from_name("llama-3.1-8b")
    hw = get_hardware("h100")
    wl = Workload(batch=8, seq_len=8192, attention="fused", causal=True, lm_head="all")
    eff = efficiency_for(None, hw, cfg, wl, Parallel(dp=8))[0]
    fused, eager = (train(cfg, wl, hw, Parallel(dp=8), Training(tokens=1e12, zero=3, eager=e), eff) for e in (False, True))
    by = {o.name: o for o in fused.stage_ops}
    be = {o.name: o for o in eager.stage_ops}
    for name, factor in EAGER_BYTES.items():
        assert be[name].bytes == pytest.approx(by[name].bytes + (factor - 1) * by[name].act_bytes), name
    assert "kv_repeat" in be and "kv_repeat" not in by
    assert be["kv_repeat"].bytes == pytest.approx((2 * cfg.o_dim + cfg.kv_dim + cfg.v_dim + 2 * cfg.q_dim) * 8192 * 2
                                                   * cfg.layers)
    assert be["attn_scores"].time_s == pytest.approx(by["attn_scores"].time_s / SDPA_FLASH_RATIO)
    assert be["gate_proj"].time_s == by["gate_proj"].time_s
    assert eager.step_time_s > fused.step_time_s and eager.flops == fused.flops  # the same FLOPs, more time
    with pytest.raises(InputError, match="eager"):
        Training(tokens=1e12, eager="yes")


def test_compiled_torchtitan_keeps_sdpas_attention_and_fuses_the_rest():
    """``sdpa`` (torchtitan with torch.compile: Inductor leaves F.scaled_dot_product_attention to ATen's flash kernel,
    FlashAttention-2): the attention products at SDPA's rate, the element-wise work fused (no eager passes, no
    repeat_kv copies); eager implies SDPA."""
    from gemmlib.llm.accounting import efficiency_for
    from gemmlib.llm.training import SDPA_FLASH_RATIO

    cfg = from_name("llama-3.1-8b")
    hw = get_hardware("h100")
    wl = Workload(batch=8, seq_len=8192, attention="fused", causal=True, lm_head="all")
    eff = efficiency_for(None, hw, cfg, wl, Parallel(dp=8))[0]
    fused, sdpa, eager, both = (train(cfg, wl, hw, Parallel(dp=8), Training(tokens=1e12, zero=3, eager=e, sdpa=d), eff)
                                for e, d in ((False, False), (False, True), (True, False), (True, True)))
    by, bs, be = ({o.name: o for o in x.stage_ops} for x in (fused, sdpa, eager))
    for name in ("attn_scores", "attn_values"):
        assert bs[name].time_s == pytest.approx(by[name].time_s / SDPA_FLASH_RATIO) == be[name].time_s
    assert bs["norms"].time_s == by["norms"].time_s < be["norms"].time_s and "kv_repeat" not in bs
    assert bs["gate_proj"].time_s == by["gate_proj"].time_s
    assert fused.step_time_s < sdpa.step_time_s < eager.step_time_s == both.step_time_s
    with pytest.raises(InputError, match="sdpa"):
        Training(tokens=1e12, sdpa=1)


def test_an_fp8_runs_output_head_multiplies_in_16_bits():
    """Megatron's output layer is outside Transformer Engine's fp8 autocast, torchtitan's Float8 skips ``output``,
    DeepSeek-V3 keeps the head in BF16: an 8-bit run's LM head at the bf16 rate, every other GEMM at fp8's;
    ``fp8_head`` (Megatron's fp8_output_proj) puts it back in 8 bits. FLOPs do not move."""
    from gemmlib.llm.accounting import efficiency_for
    from gemmlib.llm.efficiency import compute_dtype

    cfg = from_name("llama-3.1-8b")
    hw = get_hardware("h100")
    par = Parallel(dp=8)
    runs = {}
    for act, head in (("bf16", False), ("fp8", False), ("fp8", True)):
        wl = Workload(batch=8, seq_len=4096, act_dtype=act, attention="fused", causal=True, lm_head="all")
        eff = efficiency_for(None, hw, cfg, wl, par)[0]
        runs[act, head] = train(cfg, wl, hw, par, Training(tokens=1e12, zero=1, fp8_head=head), eff)
    ops = {k: {o.name: o for o in v.stage_ops} for k, v in runs.items()}
    wide, narrow, bf16 = ops["fp8", False], ops["fp8", True], ops["bf16", False]
    assert compute_dtype(wide["lm_head"], "fp8") == "bf16" and compute_dtype(narrow["lm_head"], "fp8") == "fp8"
    assert wide["lm_head"].compute_s == pytest.approx(bf16["lm_head"].compute_s, rel=1e-9)
    assert narrow["lm_head"].time_s < wide["lm_head"].time_s
    assert wide["gate_proj"].time_s == narrow["gate_proj"].time_s < bf16["gate_proj"].time_s
    assert runs["fp8", True].step_time_s < runs["fp8", False].step_time_s < runs["bf16", False].step_time_s
    assert runs["fp8", True].flops == runs["fp8", False].flops == runs["bf16", False].flops
    with pytest.raises(InputError, match="fp8_head"):
        Training(tokens=1e12, fp8_head="no")


def test_dualpipe_pairs_the_first_and_the_last_stage_on_each_gpu():
    """DeepSeek-V3's DualPipe: each GPU holds stage i of one direction and stage p − 1 − i of the other, so the
    end GPUs carry the embedding and the output head together and the period is the mean of the first and the
    last stage's (1F1B: the last stage's, the busiest)."""
    from gemmlib.llm.accounting import efficiency_for, time_op
    from gemmlib.llm.parallel import _stage_of, layers_per_stage, per_gpu_op

    cfg = from_name("llama-3.1-8b")
    hw = get_hardware("h100")
    wl = Workload(batch=64, seq_len=4096, attention="fused", causal=True, lm_head="all")
    one, dual = (Parallel(pp=4, dp=2, gpus_per_node=8, ep_overlap=s) for s in ("megatron", "dualpipe"))
    eff = efficiency_for(None, hw, cfg, wl, one)[0]
    a, b = (train(cfg, wl, hw, p, Training(tokens=1e12, zero=1), eff) for p in (one, dual))
    # the first stage's forward: the shared layer ops, and the ops that sit on the first stage only
    step = replace(wl, batch=1, new_tokens=0, lm_head="all")
    raw = prefill_ops(cfg, step) + prefill_other_ops(cfg, step)
    firsts = [time_op(per_gpu_op(o, cfg, one, stage_layers=layers_per_stage(cfg, one)), hw, "bf16", eff)
              for o in raw if _stage_of(o) == "first"]
    f_first = sum(o.time_s for o in a.stage_ops if _stage_of(o) == "every") + sum(o.time_s for o in firsts)
    assert firsts and f_first < a.forward_s  # the head's stage is the busier one
    assert b.forward_s == pytest.approx((f_first + a.forward_s) / 2, rel=1e-9)
    assert b.step_time_s < a.step_time_s and b.flops == a.flops


@pytest.mark.parametrize("act, rs_pieces", [("fp8", 8), ("bf16", 4)])
def test_tp_comm_overlap_runs_the_overlapped_gemms_in_pieces(act, rs_pieces):
    """Transformer Engine's userbuffers (Megatron-Bridge's H100 configurations): the column-parallel forward GEMMs
    by ring exchange, one piece of M / tp rows per TP rank; the row-parallel forward by ring exchange in FP8, a
    pipeline of 4 splits in BF16; each piece timed at its own shape. The backward stays whole but for the
    row-parallel input gradient, in tp pieces. Without the overlap nothing changes; the FLOPs never do."""
    from gemmlib.llm.accounting import efficiency_for, time_op

    cfg = from_name("llama-3.1-405b")
    hw = get_hardware("h100")
    wl = Workload(batch=64, seq_len=8192, act_dtype=act, attention="fused", causal=True, lm_head="all")
    plain, ub = (Parallel(tp=8, cp=2, pp=8, dp=1, virtual_stages=8, gpus_per_node=8, sequence_parallel=True,
                          tp_comm_overlap=x) for x in (False, True))
    eff = efficiency_for(None, hw, cfg, wl, plain)[0]
    a, b = (train(cfg, wl, hw, p, Training(tokens=1e12, zero=1), eff) for p in (plain, ub))
    whole, pieced = ({o.name: o for o in x.stage_ops} for x in (a, b))

    def in_pieces(op, n):
        return n * time_op(replace(op, m=op.m // n, flops=op.flops / n, act_bytes=op.act_bytes / n), hw, act,
                           eff).time_s

    q = whole["q_proj"]
    assert q.m == 4096  # the sequence over CP2, gathered over the TP ranks
    assert pieced["q_proj"].time_s == pytest.approx(in_pieces(q, 8)) and pieced["q_proj"].time_s > q.time_s * 1.1
    assert pieced["gate_proj"].time_s == pytest.approx(in_pieces(whole["gate_proj"], 8))
    assert pieced["down_proj"].time_s == pytest.approx(max(whole["down_proj"].time_s,
                                                           in_pieces(whole["down_proj"], rs_pieces)))
    for name in ("attn_scores", "norms", "lm_head"):  # not overlapped: as before
        assert pieced[name].time_s == whole[name].time_s
    # backward: the whole GEMMs again, plus the row-parallel input gradients' pieces (tp of them)
    d_fwd = b.forward_s - a.forward_s
    # (each backward GEMM at the shape model's backward factor of its op, as the whole backward is)
    d_dgrad = sum(eff.backward_factor(whole[n]) * max(0.0, in_pieces(whole[n], 8) - whole[n].time_s)
                  for n in ("o_proj", "down_proj"))
    assert d_fwd > 0 and d_dgrad > 0 and b.backward_s - a.backward_s == pytest.approx(d_dgrad, rel=1e-6)
    assert b.compute_s > a.compute_s and b.flops == a.flops  # (the step is shorter: the overlap hides the TP comm)
    # at TP 1 there is nothing to overlap: said, not silently ignored (it once ran as if it were off)
    one = Parallel(tp=1, pp=8, dp=16, virtual_stages=8, gpus_per_node=8, tp_comm_overlap=True)
    with pytest.raises(InputError, match=r"TP overlap \(--tp-comm-overlap\) overlaps the collectives of TP ranks: with TP 1"):
        train(cfg, wl, hw, one, Training(tokens=1e12, zero=1), eff)


def test_trained_mtp_modules_run_on_the_last_stage():
    """DeepSeek-V3's multi-token prediction, trained (mtp=True): per module one more block's work, the projection
    of [hidden; embedding] (2d → d) and the shared output head with its loss again, on the last stage; a checkpoint
    without MTP layers, or mtp=False, is unchanged."""
    from dataclasses import replace as rep

    cfg = rep(CONFIGS["llama_gqa"], mtp_layers=1)
    hw = get_hardware("h100")
    wl = Workload(batch=8, seq_len=256, attention="fused", causal=True, lm_head="all")
    par = Parallel(pp=2, dp=1, gpus_per_node=8)
    plain, mtp = (train(cfg, wl, hw, par, Training(tokens=1e9, micro_batch=1, mtp=x)) for x in (False, True))
    names = [o.name for o in mtp.stage_ops]
    assert names.count("lm_head") == 2 and names.count("mtp_proj") == 1 and names.count("cross_entropy") == 2
    proj = next(o for o in mtp.stage_ops if o.name == "mtp_proj")
    assert proj.flops == 2 * 256 * cfg.hidden * 2 * cfg.hidden  # one micro-batch of one sequence
    one = {o.name: o for o in plain.stage_ops}
    extra = {o.name: o for o in mtp.stage_ops[len(plain.stage_ops):]}
    layers = cfg.layers // 2  # the stage's
    assert extra["gate_proj"].flops == pytest.approx(one["gate_proj"].flops / layers, rel=1e-6)
    assert mtp.step_time_s > plain.step_time_s and mtp.flops == plain.flops  # model FLOPs: the main model's
    # the MTP block's attention products run their flash backward at the kernel's own rate, as the main model's do
    from gemmlib.llm.accounting import ATTENTION_PRODUCTS, efficiency_for

    eff = efficiency_for(None, hw, cfg, wl, par)[0]
    plain, mtp = (train(cfg, wl, hw, par, Training(tokens=1e9, micro_batch=1, mtp=x), eff) for x in (False, True))
    added = mtp.stage_ops[len(plain.stage_ops):]
    products = [o for o in added if o.name in ATTENTION_PRODUCTS]
    gemms = [o for o in added if o.is_gemm and o.name not in ATTENTION_PRODUCTS]
    assert products and gemms
    # and its GEMMs' input and weight gradients at their own shapes, as the main model's are
    extra = (sum((2.5 * eff.backward_factor(o) - 2) * o.time_s for o in products)
             + sum(2 * (eff.backward_factor(o) - 1) * o.time_s for o in gemms))
    assert (mtp.backward_s - 2 * mtp.forward_s) - (plain.backward_s - 2 * plain.forward_s) == pytest.approx(extra)
    no = train(CONFIGS["llama_gqa"], wl, hw, par, Training(tokens=1e9, micro_batch=1, mtp=True), eff)
    assert no.step_time_s == plain.step_time_s


def test_fp8_training_casts_write_the_transpose_and_current_scaling_reads_the_amax():
    """An fp8 run's GEMM-input casts: 4 bytes per element (read 2, write the fp8 tensor and its transpose, Hopper's
    FP8 GEMMs being TN-only) with delayed or blockwise scales, 6 with current scaling (its amax pass), against the
    accounting's 3; the GEMMs and a bf16 run are unchanged."""
    from gemmlib.llm.training import FP8_CAST_BYTES

    cfg = from_name("llama-3.1-8b")
    hw = get_hardware("h100")
    wl = Workload(batch=8, seq_len=4096, act_dtype="fp8", attention="fused", causal=True, lm_head="all")
    par = Parallel(dp=8)
    runs = {r: train(cfg, wl, hw, par, Training(tokens=1e12, fp8_recipe=r)) for r in FP8_CAST_BYTES}
    inference = {o.name: o for o in prefill_other_ops(cfg, replace(wl, batch=1))}
    for r, t in runs.items():
        ops = {o.name: o for o in t.stage_ops}
        for name in ("act_quant", "act_quant_inner"):
            assert ops[name].act_bytes == pytest.approx(inference[name].act_bytes * FP8_CAST_BYTES[r] / 3), (r, name)
        assert ops["gate_proj"].time_s == {o.name: o for o in runs["delayed"].stage_ops}["gate_proj"].time_s
    assert runs["current"].step_time_s > runs["delayed"].step_time_s == runs["blockwise"].step_time_s
    with pytest.raises(InputError, match="fp8 recipe"):
        Training(tokens=1e12, fp8_recipe="mx")


def _loss_bytes_megatron_native(tokens: int, vocab: int) -> float:
    """Bytes through memory per logit of Megatron Core's native vocab-parallel cross-entropy, counted on torch's own
    ops: the algorithm as its cross_entropy.py lays it out (bf16 logits upcast to fp32, the max subtracted, exp and
    normalised in place; backward the softmax less one at the target, scaled, cast back to bf16), each aten op's
    logits-sized operands read and results written (the target's gather and scatter touch one logit per token)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    big = tokens * vocab
    moved = [0]

    gathers = (torch.ops.aten.index.Tensor, torch.ops.aten.index_put_.default)  # one logit per token

    class Count(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            if func not in gathers:
                reads = [a for a in torch.utils._pytree.tree_leaves((args, {k: v for k, v in kwargs.items() if k != "out"}))
                         if isinstance(a, torch.Tensor)]
                writes = [o for o in torch.utils._pytree.tree_leaves(out) if isinstance(o, torch.Tensor)]
                moved[0] += sum(t.numel() * t.element_size() for t in reads + writes if t.numel() == big)
            return out

    logits = torch.randn(tokens, vocab, dtype=torch.bfloat16)
    target = torch.randint(0, vocab, (tokens,))
    rows = torch.arange(tokens)
    with Count():
        x = logits.float()
        x -= x.max(dim=-1)[0].unsqueeze(-1)
        picked = x[rows, target].clone()
        torch.exp(x, out=x)
        total = x.sum(dim=-1)
        loss = torch.log(total) - picked
        x.div_(total.unsqueeze(-1))
        x[rows, target] -= 1.0  # backward: the softmax is the gradient, less one at the target
        x.mul_(torch.ones_like(loss).unsqueeze(-1))
        x.to(torch.bfloat16)
    return moved[0] / big


def test_megatron_native_loss_makes_its_passes_over_fp32_logits():
    """Megatron Core's default cross-entropy (cross_entropy_fusion_impl="native"): the logits in fp32, a pass per line,
    LOSS_BYTES × the fused loss's traffic — the count of torch's own ops on that algorithm; only the loss moves."""
    from gemmlib.llm.training import LOSS_BYTES

    assert LOSS_BYTES["megatron_native"] * 4 == _loss_bytes_megatron_native(64, 1000)
    cfg = from_name("llama-3.1-8b")
    hw = get_hardware("h100")
    wl = Workload(batch=8, seq_len=4096, attention="fused", causal=True, lm_head="all")
    fused, native = (train(cfg, wl, hw, Parallel(dp=8), Training(tokens=1e12, loss=x)) for x in LOSS_BYTES)
    a, b = ({o.name: o for o in t.stage_ops} for t in (fused, native))
    assert b["cross_entropy"].act_bytes == pytest.approx(LOSS_BYTES["megatron_native"] * a["cross_entropy"].act_bytes)
    assert a["cross_entropy"].act_bytes * 3 == pytest.approx(2 * 2 * 4096 * cfg.vocab)  # fused: read once, write once
    assert all(b[n].time_s == a[n].time_s for n in a if n != "cross_entropy")
    assert native.step_time_s > fused.step_time_s and native.flops == fused.flops
    with pytest.raises(InputError, match="loss"):
        Training(tokens=1e12, loss="fp32")


def test_fp32_gradient_accumulation_is_a_pass_per_micro_batch():
    """grad_accum="fp32" (the Llama 3 run's "FP32 gradient accumulation ... over multiple micro-batches"): the GPU's
    parameters' bf16 gradients cast into an fp32 buffer (6 bytes each), then added into it (10) once per later
    micro-batch, memory-bound (here at the flat efficiency 1: the full bandwidth); one micro-batch, or the fused
    default, costs nothing more."""
    cfg = from_name("llama-3-8b")
    hw = get_hardware("h100")
    wl = Workload(batch=32, seq_len=1024, attention="fused", causal=True, lm_head="all")
    par = Parallel(dp=8)
    fused, fp32 = (train(cfg, wl, hw, par, Training(tokens=1e9, zero=1, grad_accum=a)) for a in ("fused", "fp32"))
    m = fp32.microbatches
    assert m == 4 and fused.grad_accumulation_s == 0
    want = cfg.params * (6 + 10 * (m - 1)) / hw.bandwidth
    assert fp32.grad_accumulation_s == pytest.approx(want, rel=1e-6)
    assert fp32.step_time_s == pytest.approx(fused.step_time_s + want, rel=1e-9)
    one = train(cfg, replace(wl, batch=8), hw, par, Training(tokens=1e9, zero=1, grad_accum="fp32"))
    assert one.microbatches == 1 and one.grad_accumulation_s == 0
    with pytest.raises(InputError, match="gradient accumulation"):
        Training(tokens=1e9, grad_accum="bf16")


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
    products = sum(o.time_s for o in tr.stage_ops if o.name in ("attn_scores", "attn_values"))
    # every GEMM's input and weight gradient: 2 × the forward; a flash kernel's backward reruns QKᵀ: + ½ its products
    assert tr.backward_s == pytest.approx(2 * tr.forward_s + 0.5 * products)
    # once per step, AdamW with fp32 master weights and moments: 30 bytes per parameter, at the bandwidth (ZeRO 0)
    assert tr.optimizer_s == pytest.approx(30 * cfg.params / hw.bandwidth)
    assert tr.step_time_s == pytest.approx(4 * (tr.forward_s + tr.backward_s) + tr.optimizer_s)
    assert tr.mfu == pytest.approx(tr.flops["model"] / (tr.step_time_s * 989.4e12))
    qk = sum(o.flops for o in prefill_ops(cfg, tr.workload) if o.name == "attn_scores")
    assert tr.flops["flash_recompute"] == qk
    assert tr.hfu == pytest.approx((tr.flops["total"] + qk) / (tr.step_time_s * 989.4e12))
    eager = train(cfg, Workload(batch=8, seq_len=1024, attention="eager"), hw, Parallel(), Training(tokens=1e9, micro_batch=2))
    assert "flash_recompute" not in eager.flops and eager.backward_s == pytest.approx(2 * eager.forward_s)
    assert tr.tokens_per_s == pytest.approx(8 * 1024 / tr.step_time_s)
    assert tr.steps == math.ceil(1e9 / (8 * 1024))
    assert tr.gpu_hours == pytest.approx(tr.steps * tr.step_time_s / 3600)
    assert tr.six_nd == 6 * cfg.params * 1e9
    assert tr.run_flops == pytest.approx(tr.flops["model"] / (8 * 1024) * 1e9)


def test_recompute_costs_time_and_saves_memory():
    cfg = from_name("llama-3-8b")
    hw = get_hardware("h100")
    wl = Workload(batch=16, seq_len=2048, attention="eager")  # selective recomputation drops the s² tensors
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
    # gradients reduced in fp32 (torchtitan's FSDP2, the Llama 3 run): the reductions carry 4Ψ, the weights' gathers 2Ψ
    fp32 = {z: [c for c in train(cfg, wl, hw, par, Training(tokens=1e9, zero=z, grad_reduce="fp32")).collectives
                if c.group == "dp"] for z in (0, 1, 3)}
    assert [(c.op, c.size_bytes) for c in fp32[0]] == [("all_reduce", 4 * psi)]
    assert [(c.op, c.size_bytes, c.count) for c in fp32[3]] == [("reduce_scatter", 4 * psi, 1), ("all_gather", 2 * psi, 2)]
    assert [c.size_bytes for c in fp32[1]] == [4 * psi, 2 * psi]
    with pytest.raises(InputError, match="gradient reduction"):
        Training(tokens=1e9, grad_reduce="fp8")
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
    period = tr.step_time_s - tr.exposed["dp"][0] - tr.bubble_s - tr.optimizer_s
    assert tr.bubble_s / period == pytest.approx(3 / m)  # (p − 1) stage periods after m of them
    v2 = train(cfg, Workload(batch=32, seq_len=1024), hw, Parallel(pp=4, dp=2, virtual_stages=2), Training(tokens=1e9))
    p2 = v2.step_time_s - v2.exposed["dp"][0] - v2.bubble_s - v2.optimizer_s
    assert v2.bubble_s / p2 == pytest.approx(3 / (2 * m))  # interleaved 1F1B: (p − 1) / (V·m)
    sends = [c for c in v2.collectives if c.op == "send_recv"]
    assert sum(c.count for c in sends) == 2 * 2 * m  # V chunks: V sends forward and V back per micro-batch
    assert v2.memory.activation_bytes > tr.memory.activation_bytes  # first stage: × (1 + (p − 1) / (p·V))
    with pytest.raises(InputError, match=r"virtual stages need pipeline stages \(PP 2 or more\)"):
        Parallel(virtual_stages=2).check(cfg)
    with pytest.raises(InputError, match="more pipeline chunks"):
        Parallel(pp=8, virtual_stages=8).check(cfg)
    # two chunks may hold no layer (the embedding alone, the head and loss alone: Llama 3's balanced pipeline), no more
    Parallel(pp=2, virtual_stages=17).check(cfg)
    with pytest.raises(InputError, match="more pipeline chunks"):
        Parallel(pp=2, virtual_stages=18).check(cfg)
    from gemmlib.llm.parallel import layers_per_stage

    big = LLAMA31_405B.model
    Parallel(tp=8, pp=16, virtual_stages=8, dp=64).check(big)  # 126 layers + 2 = 16 × 8 one-layer chunks
    assert layers_per_stage(big, Parallel(tp=8, pp=16, virtual_stages=8, dp=64)) == 8


def test_each_collective_hides_behind_the_compute_it_can():
    """Data-parallel gradients go bucket by bucket behind the backward of the later layers; the TP all-reduces
    sit on the critical path unless Transformer Engine's TP overlap is named; --overlap is the best case."""
    cfg = from_name("llama-3-8b")
    hw = get_hardware("h100")
    wl = Workload(batch=64, seq_len=2048, attention="fused", causal=True)
    tr = train(cfg, wl, hw, Parallel(tp=2, dp=32), Training(tokens=1e9, micro_batch=1))
    grads = next(c for c in tr.collectives if c.group == "dp")
    L = cfg.layers
    assert grads.exposed_s == pytest.approx(max(grads.time_s / L, grads.time_s - 2 * tr.forward_s * (1 - 1 / L)))
    tp_e, tp_t = tr.exposed["tp"]
    assert tp_t > 0 and tp_e == pytest.approx(tp_t)  # every TP all-reduce exposed
    assert tr.step_time_s == pytest.approx(tr.compute_s + tp_t + tr.exposed["dp"][0])
    ov = train(cfg, wl, hw, Parallel(tp=2, dp=32, tp_comm_overlap=True), Training(tokens=1e9, micro_batch=1))
    assert ov.exposed["tp"][0] < tp_e and ov.step_time_s < tr.step_time_s
    best = train(cfg, wl, hw, Parallel(tp=2, dp=32, overlap=True), Training(tokens=1e9, micro_batch=1))
    assert best.step_time_s <= ov.step_time_s and best.to_dict()["overlap_model"].startswith("best case")
    z3 = train(cfg, wl, hw, Parallel(tp=2, dp=32), Training(tokens=1e9, micro_batch=1, zero=3))
    gather = next(c for c in z3.collectives if c.op == "all_gather" and c.group == "dp")
    one = gather.time_s / gather.count
    per_mb = (max(one / L, one - tr.forward_s * (1 - 1 / L)) + max(one / L, one - 2 * tr.forward_s * (1 - 1 / L)))
    assert gather.exposed_s == pytest.approx(z3.microbatches * per_mb)


def test_context_parallel_splits_the_sequence_and_rings_the_kv():
    cfg = from_name("llama-3-8b")
    hw = get_hardware("h100")
    wl = Workload(batch=8, seq_len=8192, attention="fused", causal=True)
    one = train(cfg, wl, hw, Parallel(dp=8), Training(tokens=1e9))
    cp = train(cfg, wl, hw, Parallel(cp=2, dp=4), Training(tokens=1e9))
    fw = {o.name: o.flops for o in one.stage_ops}
    assert {o.name: o.flops for o in cp.stage_ops}["q_proj"] == fw["q_proj"] // 2
    assert {o.name: o.flops for o in cp.stage_ops}["attn_scores"] == fw["attn_scores"] // 2
    ring = [c for c in cp.collectives if c.group == "cp"]
    kv = 8192 * 2 * cfg.kv_heads * cfg.head_dim * 2  # the whole sequence's K and V per layer, bf16
    assert {c.size_bytes for c in ring} == {kv}
    assert sum(c.count for c in ring) == 3 * cfg.layers * cp.microbatches  # forward AG, backward AG + RS
    e, t = cp.exposed["cp"]
    att = sum(o.time_s for o in cp.stage_ops if o.name == "attn_scores" or o.name == "attn_values")
    assert e == pytest.approx(max(0.0, t - cp.microbatches * 3 * att))
    assert cp.memory.activation_bytes < one.memory.activation_bytes  # half the tokens per rank
    grads = next(c for c in cp.collectives if c.group == "dp")
    assert grads.ranks == 8  # the gradients are reduced over DP × CP
    with pytest.raises(InputError, match="does not divide the sequence"):
        train(cfg, Workload(batch=8, seq_len=1001), hw, Parallel(cp=2, dp=4), Training(tokens=1e9))


def test_expert_parallel_all_to_all_is_exposed_unless_overlapped():
    cfg = from_name("mixtral-8x7b")
    hw = get_hardware("h100")
    wl = Workload(batch=16, seq_len=1024, attention="fused", causal=True)
    tr = train(cfg, wl, hw, Parallel(ep=8, dp=2), Training(tokens=1e9, micro_batch=8, zero=1))
    e, t = tr.exposed["ep"]
    assert t > 0 and e == pytest.approx(t)
    ov = train(cfg, wl, hw, Parallel(ep=8, dp=2, ep_comm_overlap=True), Training(tokens=1e9, micro_batch=8, zero=1))
    assert ov.exposed["ep"][0] < e
    dp = [c for c in tr.collectives if c.group == "dp" and c.op == "reduce_scatter"]
    assert sorted(c.ranks for c in dp) == [2, 16]  # experts over DP, the rest over DP × EP


@pytest.mark.parametrize("schedule, pp", [("megatron", 1), ("dualpipe", 4)])
def test_the_sms_overlapped_all_to_alls_hold_slow_the_compute_beside_them(schedule, pp):
    """DeepSeek-V3 gives 20 of the H800's 132 SMs to its all-to-alls: the compute they hide behind runs on the other
    112, so each hidden second of all-to-all costs the compute 20/132 s more, in every micro-batch and in the
    bubble's stage periods. Nothing else moves; no SMs stated, nothing charged."""
    cfg = from_name("mixtral-8x7b")
    hw = get_hardware("h800")
    wl = Workload(batch=64, seq_len=1024, attention="fused", causal=True)
    tr = Training(tokens=1e9, micro_batch=8, zero=1)
    a, b = (train(cfg, wl, hw, Parallel(ep=8, pp=pp, dp=1, ep_comm_overlap=True, ep_overlap=schedule,
                                        ep_comm_sms=s), tr) for s in (0, 20))
    e, t = a.exposed["ep"]
    assert t - e > 0 and b.exposed == a.exposed and b.flops == a.flops
    held = (t - e) * 20 / 132  # over the step: the hidden all-to-all time × the SMs' share
    assert a.held_sms_s == 0 and b.held_sms_s == pytest.approx(held, rel=1e-9)
    assert b.compute_s - a.compute_s == pytest.approx(held, rel=1e-9)
    bubble = (pp - 1) * held / a.microbatches  # (p − 1) stage periods, each longer by one micro-batch's share
    assert b.bubble_s - a.bubble_s == pytest.approx(bubble, rel=1e-9, abs=1e-12)
    assert b.step_time_s - a.step_time_s == pytest.approx(held + bubble, rel=1e-9)
    assert b.to_dict()["ep_comm_sms"] == 20 and b.to_dict()["held_sms_s"] == pytest.approx(held)


def test_sms_held_by_all_to_alls_need_the_overlap_and_a_known_sm_count():
    cfg = from_name("mixtral-8x7b")
    wl = Workload(batch=16, seq_len=1024, attention="fused", causal=True)
    tr = Training(tokens=1e9, micro_batch=8, zero=1)
    with pytest.raises(InputError, match=r"turn on EP overlap \(--ep-comm-overlap\)"):
        Parallel(ep=8, dp=2, ep_comm_sms=20)
    for bad in (-1, 2.5, "20", True):
        with pytest.raises(InputError, match="--ep-comm-sms"):
            Parallel(ep=8, dp=2, ep_comm_overlap=True, ep_comm_sms=bad)
    with pytest.raises(InputError, match="fewer than H100 SXM's 132 SMs, got 132"):
        train(cfg, wl, get_hardware("h100"), Parallel(ep=8, dp=2, ep_comm_overlap=True, ep_comm_sms=132), tr)
    assert get_hardware("gb200").sms == 0  # the catalogue does not know it
    with pytest.raises(InputError, match="SM count is unknown"):
        train(cfg, wl, get_hardware("gb200"), Parallel(ep=8, dp=2, ep_comm_overlap=True, ep_comm_sms=32), tr)


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
    with pytest.raises(InputError, match="training keeps mixed-precision weights .* not fp8"):
        train(cfg, Workload(batch=8, seq_len=128, weight_dtype="fp8", act_dtype="fp8"), get_hardware("h100"),
              Parallel(dp=4), Training(tokens=1e9))
    moe = from_name("mixtral-8x7b")
    with pytest.raises(InputError, match="multiple of EP 4"):
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


def test_cli_training_layout_flags(capsys, monkeypatch, tmp_path):
    import json

    from gemmlib.cli import main

    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path))
    argv = ["estimate", "--preset", "llama-3-8b", "--batch", "32", "--seq-len", "4096", "--new-tokens", "0", "--train",
            "--train-tokens", "1e9", "--tp", "2", "--cp", "2", "--pp", "2", "--virtual-stages", "2", "--dp", "2",
            "--sequence-parallel", "--tp-comm-overlap", "--attention", "fused", "--causal"]
    assert main(argv + ["--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    t = d["train"]
    assert (t["cp"], t["virtual_stages"], t["tp_comm_overlap"]) == (2, 2, True)
    assert d["parallel"]["cp"] == 2 and d["hardware"]["gpus"] == 16
    assert set(t["exposed_by_group"]) >= {"tp", "cp", "pp", "dp"} and t["overlap_model"] == "per collective"
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "CP 2, interleaved 1F1B with 2 virtual stages, TP communication overlapped" in out
    assert "exposed of all, by group: tp" in out and "TP 2 x CP 2 x PP 2" in out
    assert main(["estimate", "--preset", "llama-3-8b", "--cp", "2"]) == 2
    assert "--cp is a training layout: add --train" in capsys.readouterr().err


def test_the_loss_reads_the_logits_and_writes_their_gradient_on_the_last_stage():
    cfg = from_name("llama-3-8b")
    hw = get_hardware("h100")
    tr = train(cfg, Workload(batch=8, seq_len=1024), hw, Parallel(tp=2, pp=2, dp=2), Training(tokens=1e9))
    ce = next(o for o in tr.stage_ops if o.name == "cross_entropy")
    logits = 1024 * cfg.vocab / 2  # one micro-batch of one sequence, half the vocabulary per TP rank
    assert 3 * ce.bytes == pytest.approx(2 * logits * 2)  # read once + gradient written once, bf16, over fwd + bwd
    assert {o.name for o in tr.stage_ops} >= {"lm_head", "cross_entropy"}  # the busiest stage is the last one here


def test_expert_parallel_sorts_the_received_tokens_twice():
    cfg = from_name("mixtral-8x7b")
    hw = get_hardware("h100")
    tr = train(cfg, Workload(batch=16, seq_len=1024, attention="fused", causal=True), hw, Parallel(ep=4, dp=2),
               Training(tokens=1e9, micro_batch=4, zero=1))
    sort = next(o for o in tr.stage_ops if o.name == "moe_sort")
    copies = 4 * 1024 / 4 * 2  # a rank's tokens (one sequence of the micro-batch of 4) × top-2
    assert sort.bytes == pytest.approx(2 * 2 * copies * cfg.hidden * 2 * cfg.layers)  # 2 sorts, read + write, bf16
    one = train(cfg, Workload(batch=16, seq_len=1024, attention="fused", causal=True), hw, Parallel(dp=2),
                Training(tokens=1e9, micro_batch=4, zero=1))
    assert "moe_sort" not in {o.name for o in one.stage_ops}  # no all-to-all, nothing to sort


def test_flash_backward_runs_at_its_measured_share_and_the_optimizer_at_the_bandwidth():
    """With the shape model a flash kernel's backward (2.5 × the products' forward FLOPs) runs at FlashAttention-3's
    measured backward share (arXiv:2407.08608: 316 … 561 TFLOP/s at 512 … 16k keys on an H100), not the forward's;
    the optimizer step moves 30 bytes per parameter it updates, its ZeRO share."""
    from gemmlib.llm.accounting import efficiency_for
    from gemmlib.llm.efficiency import attention_backward_share, attention_share

    cfg = from_name("llama-3-8b")
    hw = get_hardware("h100")
    wl = Workload(batch=8, seq_len=8192, attention="fused", causal=True, lm_head="all")
    eff = efficiency_for(None, hw, cfg, wl, Parallel(dp=8))[0]
    tr = train(cfg, wl, hw, Parallel(dp=8), Training(tokens=1e9, micro_batch=1, zero=1), eff)
    keys = (8192 + 1) / 2  # causal: the mean of 1 … S keys
    ratio = attention_share(hw, "bf16", keys) / attention_backward_share(hw, "bf16", keys)
    assert 1.05 < ratio < 1.25  # the backward runs at a lower share of peak than the forward
    products = sum(o.time_s for o in tr.stage_ops if o.name in ("attn_scores", "attn_values"))
    gemms = sum(2 * (eff.backward_factor(o) - 1) * o.time_s for o in tr.stage_ops
                if o.is_gemm and o.name not in ("attn_scores", "attn_values"))
    assert abs(gemms) < 0.01 * tr.forward_s  # 8192-token GEMMs: their gradients tile about as well as they do
    assert tr.backward_s == pytest.approx(2 * tr.forward_s + (2.5 * ratio - 2) * products + gemms, rel=1e-9)
    assert tr.optimizer_s == pytest.approx(30 * cfg.params / 8 / (hw.bandwidth * 0.887), rel=2e-3)
    assert tr.to_dict()["optimizer_s"] == tr.optimizer_s


def test_weight_gemm_gradients_run_at_their_own_shapes():
    """A GEMM's backward is two GEMMs of its FLOPs at other shapes: dX (M×K over N) and dW (K×N over M). A routed
    expert with few tokens has a small inner dimension in dW, whose fixed work per tile the tiling model charges:
    its backward runs slower per FLOP than its forward. Checked against the tiling model evaluated by hand."""
    from gemmlib.llm.accounting import efficiency_for, prefill_ops
    from gemmlib.llm.efficiency import T0_S, ceiling, gemm_kernel_seconds, max_share

    cfg = from_name("mixtral-8x7b")
    hw = get_hardware("h100")
    wl = Workload(batch=1, seq_len=4096, attention="fused", causal=True, lm_head="all")
    eff = efficiency_for(None, hw, cfg, wl, Parallel())[0]
    down = next(o for o in prefill_ops(cfg, wl) if o.name == "down_proj")
    assert down.routed
    m = down.m * cfg.experts_per_token / cfg.experts  # each expert's rows: 1,024
    n, k, peak = down.n, down.k, hw.peak("bf16")
    kernels = down.kernels or down.count
    batch = down.flops / (kernels * 2 * m * n * k)
    assert batch == pytest.approx(cfg.experts)

    def t(mm, nn, kk):
        c = gemm_kernel_seconds(mm, nn, kk, batch=batch, peak=peak, ceiling=ceiling(hw, "bf16"), sms=hw.sms,
                                cap=max_share(hw, "bf16"))
        eta = 2 * mm * nn * kk * round(batch) / (c * peak)
        return kernels * T0_S + max(down.flops / (peak * eta), down.bytes / (hw.bandwidth * eff.beta))

    assert t(m, n, k) == pytest.approx(eff.seconds(down), rel=1e-12)
    f = eff.backward_factor(down)
    assert f == pytest.approx((t(m, k, n) + t(k, n, m)) / (2 * t(m, n, k)), rel=1e-12)
    assert 1.02 < f < 1.2  # dW's inner dimension is the expert's 1,024 tokens (the forward's: 14,336)
    # a flat efficiency has no shapes: the backward is 2 × the forward
    par = Parallel()
    flat = train(cfg, replace(wl, batch=4, seq_len=256), hw, par, Training(tokens=1e9, micro_batch=1), 0.7)
    assert flat.backward_s == pytest.approx(2 * flat.forward_s + 0.5 * sum(
        o.time_s for o in flat.stage_ops if o.name in ("attn_scores", "attn_values")), rel=1e-12)
