"""Training: exact FLOPs of a step, its time on the GPUs, MFU, tokens/s, and the whole run.

* **FLOPs of one step, exact.** The forward pass of ``B`` sequences of ``S`` tokens is the
  accounting's prefill (every GEMM, the LM head on every position). The backward pass of every
  GEMM computes the input gradient and the weight gradient (for the attention products, the
  gradients of both operands), each a GEMM of the forward's size: 2 × the forward. Activation
  recomputation re-runs forward work: ``full`` every layer's forward (as gradient
  checkpointing does; not the LM head), ``selective`` the attention core (the ops split by
  head: QKᵀ, softmax, ·V — Korthikanti et al. 2022), the whole region again as Megatron's
  reentrant checkpoint does. ``tests/llm/test_training.py`` checks all three against
  ``FlopCounterMode`` around ``loss.backward()`` on real modules, with ``torch.utils.checkpoint``
  for the recomputation. (PyTorch's non-reentrant checkpoint stops early by default, once every
  tensor the backward needs is back, and so skips the last GEMM of each region — ·V, or a
  layer's down projection — whose output the backward does not need.)
* **Step time = compute + exposed communication (+ pipeline bubble).** Per micro-batch and
  stage: the forward ops' time (the shape efficiency model unless one is given), the backward at
  2 × that (the element-wise ops assumed alike; each weight GEMM's input and weight gradients at their
  own shapes under the shape model: ``backward_factor``) and with fused attention the
  products' backward at 2.5 × their forward FLOPs (a flash backward reruns QKᵀ) run at the flash
  backward's own share of peak (FlashAttention-3's measured backward: the shape model's
  ``backward_factor``), the recomputed ops again, on the last stage
  the loss (a fused softmax cross-entropy that reads the logits and writes their gradient once),
  with EP the received tokens sorted by local expert and back (Megatron's all-to-all
  dispatcher). The collectives: the forward's (:func:`gemmlib.llm.parallel.forward_collectives`),
  in backward an all-reduce for each forward one of a row-parallel op and of the LM head's input
  (Megatron's ``f``: two per layer forward, two backward), the EP all-to-alls again, with
  sequence parallelism each reduce-scatter/all-gather pair mirrored plus the all-gather Megatron
  repeats for the weight gradient; the recomputed forward's collectives; context parallelism's
  ring (each layer's K/V all-gathered in forward, all-gathered and its gradient reduce-scattered
  in backward); the pipeline's activation and gradient sends (V of each per micro-batch with V
  virtual stages); once per step the optimizer (AdamW with fp32 master weights and moments, 30 bytes per
  parameter the GPU updates — its ZeRO share —, memory-bound). 1F1B over M = B / (d × b) micro-batches takes M stage periods plus a bubble of
  (p − 1) / V periods (interleaved 1F1B, Narayanan et al. 2021 §2.2); a stage period is the busiest stage's (the
  last, with the output head and the loss), or with DeepSeek-V3's DualPipe (``ep_overlap="dualpipe"``), whose GPUs
  each hold stage i and stage p − 1 − i, the mean of the first and the last stage's. Then the gradients go
  across data parallelism (ZeRO, Rajbhandari et al. §7) over the ranks that share the weights —
  DP × CP × EP for the dense ones, DP × CP for the routed experts: stage 0 all-reduces the 16-bit
  gradients (2Ψ bytes; 4Ψ where they are reduced in fp32, ``grad_reduce``), stages 1–2 reduce-scatter
  them and all-gather the updated weights (2Ψ), stage 3 adds the weights' all-gather in every forward and backward of every
  micro-batch (1.5× at M = 1).
* **Each collective hides behind the compute it can** (``overlap`` instead: every collective
  hidden, the best case): the DP gradients bucket by bucket behind the last micro-batch's
  backward of the later layers (the last layer's bucket exposed); ZeRO 1–2's gathered weights
  behind the next step's first forward; ZeRO 3's gathers one layer ahead of each forward and
  backward; the CP ring behind the attention it feeds; the TP collectives and the EP all-to-alls
  on the critical path unless a named technique hides them — ``tp_comm_overlap`` behind the
  column/row GEMMs beside them, ``ep_comm_overlap`` behind another micro-batch's compute, at most
  the share of the all-to-alls' time that the schedule was measured or stated to hide
  (:data:`gemmlib.llm.parallel.EP_OVERLAP_HIDDEN`: Megatron's 36.55 %, DualPipe's all), and where the run states the
  SMs their kernels hold (``ep_comm_sms``: DeepSeek-V3's 20 of 132, DeepEP's, HybridEP's) the compute beside them runs
  on the other SMs, s/S of a second longer for each second hidden (:func:`_held_sms_share`); the
  pipeline sends exposed. :attr:`TrainEstimate.exposed` says how much of each group's time is
  exposed.
* **What a framework does besides the layout** (:class:`Training`): ``recompute="op"`` is torchtitan's selective
  op policy (:data:`OP_POLICY_RECOMPUTED`); ``eager`` prices eager PyTorch's element-wise passes
  (:data:`EAGER_BYTES`), its attention layout copies and SDPA's FlashAttention-2 (:data:`SDPA_FLASH_RATIO`);
  ``sdpa`` that attention kernel alone (a compiled PyTorch model such as torchtitan's with ``torch.compile``: the
  element-wise work fused, the attention still SDPA's);
  ``mtp`` trains the checkpoint's multi-token-prediction modules on the last stage (:func:`_mtp_ops`);
  ``fp8_recipe`` sets an 8-bit run's casts (:data:`FP8_CAST_BYTES`: the transposed copy Hopper's TN-only FP8
  GEMMs need, and current scaling's amax pass); ``loss`` how the loss runs (:data:`LOSS_BYTES`: one fused kernel,
  or Megatron Core's native cross-entropy, a pass over fp32 logits per line); ``grad_reduce`` the dtype of the
  data-parallel gradient reduction (:data:`GRAD_REDUCE_BYTES`); ``grad_accum="fp32"`` accumulates the weight
  gradients over the micro-batches in an fp32 buffer, a memory pass per micro-batch (:func:`_grad_accumulation`).
* **MFU** = model FLOPs (forward + backward, no recomputation) / (step time × GPUs × dense peak);
  HFU counts the recomputation too, and with fused attention the QKᵀ a flash kernel's backward
  reruns (its products' backward is 2.5 × their forward: Dao et al. 2022, Algorithm 4). Tokens/s =
  B·S / step time; the run is ceil(D / (B·S)) steps; GPU-hours = run time × GPUs / 3600. 6·N·D (N = parameters, active parameters for a
  MoE) is printed beside the exact count.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import NamedTuple

from gemmlib.core.comm import collective_time
from gemmlib.core.dtypes import get_dtype
from gemmlib.core.errors import InputError
from gemmlib.core.hardware import Hardware
from gemmlib.core.i18n import N_, Text
from gemmlib.llm.accounting import (
    ATTENTION_PRODUCTS,
    QK_PRODUCTS,
    Op,
    Workload,
    prefill_ops,
    prefill_other_ops,
    time_op,
)
from gemmlib.llm.checkpoint import QUANTIZED_8BIT
from gemmlib.llm.config import ATTENTION_LETTERS, ModelConfig
from gemmlib.llm.hf import from_hf_config
from gemmlib.llm.memory import (
    RECOMPUTE,
    RECOMPUTE_MODULES,
    ZERO_STAGES,
    PerGpuMemory,
    expert_weights_per_gpu,
    largest_fitting,
    recomputed_share,
    training_memory,
    weights_per_gpu,
)
from gemmlib.llm.parallel import (
    EP_OVERLAP_HIDDEN,
    Collective,
    Parallel,
    _coll,
    _stage_of,
    forward_collectives,
    kv_split,
    layers_per_stage,
    per_gpu_op,
    pipeline_send,
    wire_bytes,
)
from gemmlib.llm.quant import WEIGHT_FORMATS

MAX_TRAIN_TOKENS = 1e16

# An 8-bit training run's casts of each GEMM input, bytes per element, against the 3 (read 16 bits, write 8) the
# accounting charges for an inference cast. Hopper's FP8 GEMMs take only the TN layout (cuBLASLt's FP8 matmul
# requirements), so the weight-gradient GEMM needs the input transposed: Transformer Engine's cast_transpose
# writes the fp8 tensor and its transpose in one pass (+1), and DeepSeek-V3 re-quantizes its cached activations
# transposed for the backward (arXiv:2412.19437 §3.5.2). Current scaling (Transformer Engine's
# Float8CurrentScaling, NeMo's "FP8-CS") takes the scale from the tensor's own amax, one more read of it before
# the cast (+2); delayed scaling (the amax history of earlier steps) and DeepSeek's 1×128 blockwise scales (each
# tile's amax inside the cast kernel) need none. The gradients' casts in backward are charged twice the forward's,
# as for every element-wise op.
FP8_CAST_BYTES = {"delayed": 4.0, "current": 6.0, "blockwise": 4.0}

# The loss as a framework runs it: bytes per logit over its forward and backward, against the 4 (bf16 logits read
# once, their gradient written once) of a one-kernel fused loss (Transformer Engine's ``parallel_cross_entropy``,
# Megatron's ``cross_entropy_fusion_impl="te"``, which Megatron-Bridge's Llama 3 and DeepSeek providers set).
# Megatron Core's default, ``cross_entropy_fusion_impl="native"`` (``ModelParallelConfig``; Megatron-Bridge's
# ``GPTModelProvider`` turns ``cross_entropy_loss_fusion`` on and its GPT-OSS provider leaves the impl at that
# default), is ``VocabParallelCrossEntropy`` (megatron/core/tensor_parallel/cross_entropy.py, called from
# megatron/core/fusions/fused_cross_entropy.py), which upcasts the logits to fp32 and runs each line over the
# [tokens, vocab] tensor: forward ``logits.float()`` (read 2, write 4), ``max`` (4), ``-= logits_max`` (4 + 4),
# ``torch.exp(out=)`` (4 + 4), ``sum`` (4), ``exp_logits.div_`` (4 + 4) = 38; backward ``grad_input.mul_``
# (4 + 4) and the cast back to bf16 for the LM head's backward (4 + 2) = 14: 52 bytes per logit — 13× (the
# target gathers and scatters touch one logit per token). fused_cross_entropy.py wraps those steps in ``jit_fuser``
# (torch.compile): it can merge the upcast with the max (−4), while Inductor copies back an input it mutates in a
# graph that also reduces over it (+8, the note in that file's later versions); the count is of the steps as written.
# Eager PyTorch's ``F.cross_entropy`` on fp32 logits: EAGER_BYTES below.
LOSS_BYTES = {"fused": 1.0, "megatron_native": 52 / 4}

# The dtype data parallelism reduces (all-reduce, or ZeRO's reduce-scatter) the gradients in, bytes per parameter:
# bf16 as Megatron's DDP does by default (``grad_reduce_in_fp32=False``); fp32 where a framework keeps the reduction
# in full precision — torchtitan's FSDP2 (``--training.mixed_precision_reduce``, default and only choice "float32",
# torchtitan/config_manager.py at the 2024-12 benchmarks), the Llama 3 run ("we ... reduce-scatter gradients in FP32
# across data parallel workers in FSDP", arXiv:2407.21783 §3.3.2, Numerical stability). The weights are gathered in
# 16 bits either way.
GRAD_REDUCE_BYTES = {"bf16": 2, "fp32": 4}


@dataclass(frozen=True)
class Training:
    """A training run: ``tokens`` D for the whole run, ``micro_batch`` sequences per micro-batch (per
    model replica), activation recomputation, ZeRO stage, dropout (for the activation memory)."""

    tokens: float
    micro_batch: int = 1
    recompute: str = "none"
    zero: int = 0
    dropout: bool = False
    eager: bool = False  # element-wise work as eager PyTorch runs it (no torch.compile, no fused kernels)
    sdpa: bool = False  # attention through PyTorch's F.scaled_dot_product_attention (FlashAttention-2), compiled or not
    mtp: bool = False  # the checkpoint's multi-token-prediction modules are trained too (DeepSeek-V3's MTP)
    fp8_recipe: str = "delayed"  # how an 8-bit run scales its casts (FP8_CAST_BYTES): delayed, current, blockwise
    fp8_head: bool = False  # an 8-bit run's output head in 8 bits too (Megatron's fp8_output_proj); else in 16 bits (train)
    loss: str = "fused"  # how the loss runs (LOSS_BYTES): fused (one kernel), megatron_native (fp32 passes)
    grad_reduce: str = "bf16"  # the dtype data parallelism reduces the gradients in (GRAD_REDUCE_BYTES)
    grad_accum: str = "fused"  # fused (in the wgrad GEMM, or one micro-batch), fp32 (a pass per micro-batch)
    recompute_layers: int = 0  # with recompute="full": the first N layers of each model chunk (0: every layer)
    recompute_modules: tuple[str, ...] = ()  # with recompute="selective": Megatron's recompute_modules (() = core_attn)

    def __post_init__(self) -> None:
        t = self.tokens
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or not 0 < t <= MAX_TRAIN_TOKENS:
            raise InputError(N_("training tokens D (--train-tokens) must be a positive number (at most {limit:.0e}), got "
                                "{t!r}"), limit=MAX_TRAIN_TOKENS, t=t)
        if isinstance(self.micro_batch, bool) or not isinstance(self.micro_batch, int) or self.micro_batch < 1:
            raise InputError(N_("the micro-batch must be a whole number ≥ 1, got {micro_batch!r}"),
                             micro_batch=self.micro_batch)
        if self.recompute not in RECOMPUTE:
            raise InputError(N_("recompute must be one of {choices}, got {recompute!r}"),
                             choices=", ".join(RECOMPUTE), recompute=self.recompute)
        if self.zero not in ZERO_STAGES:
            raise InputError(N_("ZeRO must be 0, 1, 2 or 3, got {zero!r}"), zero=self.zero)
        if self.fp8_recipe not in FP8_CAST_BYTES:
            raise InputError(N_("the fp8 recipe must be one of {choices}, got {recipe!r}"),
                             choices=", ".join(FP8_CAST_BYTES), recipe=self.fp8_recipe)
        if self.grad_accum not in ("fused", "fp32"):
            raise InputError(N_("the gradient accumulation must be fused or fp32, got {accum!r}"), accum=self.grad_accum)
        if self.grad_reduce not in GRAD_REDUCE_BYTES:
            raise InputError(N_("the gradient reduction dtype must be one of {choices}, got {dtype!r}"),
                             choices=", ".join(GRAD_REDUCE_BYTES), dtype=self.grad_reduce)
        if self.loss not in LOSS_BYTES:
            raise InputError(N_("the loss must be one of {choices}, got {loss!r}"),
                             choices=", ".join(LOSS_BYTES), loss=self.loss)
        if not isinstance(self.mtp, bool):
            raise InputError(N_("mtp must be true or false, got {mtp!r}"), mtp=self.mtp)
        if not isinstance(self.eager, bool):
            raise InputError(N_("eager must be true or false, got {eager!r}"), eager=self.eager)
        if not isinstance(self.fp8_head, bool):
            raise InputError(N_("fp8_head must be true or false, got {v!r}"), v=self.fp8_head)
        if not isinstance(self.sdpa, bool):
            raise InputError(N_("sdpa must be true or false, got {sdpa!r}"), sdpa=self.sdpa)
        n = self.recompute_layers
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise InputError(N_("recomputed layers (--recompute-layers) must be a whole number ≥ 0, got {n!r}"), n=n)
        if n and self.recompute != "full":
            raise InputError(N_("recomputed layers {n} (--recompute-layers) are whole layers: they need recompute "
                                "full"), n=n)
        mods = self.recompute_modules
        if isinstance(mods, str) or not all(isinstance(x, str) for x in mods):
            raise InputError(N_("recomputed modules (--recompute-modules) must be a list of module names, got {mods!r}"),
                             mods=mods)
        bad = [x for x in mods if x not in RECOMPUTE_MODULES]
        if bad:
            raise InputError(N_("recomputed modules (--recompute-modules): {bad} unknown; Megatron's modules are {choices}"),
                             bad=", ".join(bad), choices=", ".join(RECOMPUTE_MODULES))
        if mods and self.recompute != "selective":
            raise InputError(N_("recomputed modules (--recompute-modules) name what selective recomputation reruns: they "
                                "need recompute selective"))
        # Megatron's default selective recomputation: the attention core
        object.__setattr__(self, "recompute_modules",
                           tuple(dict.fromkeys(mods)) or (("core_attn",) if self.recompute == "selective" else ()))



# torchtitan's selective activation checkpointing, its default option "op" (torchtitan/parallelisms/
# parallelize_llama.py, ``_apply_ac_to_transformer_block`` at 9dec370, the commit of its 2024-12 H100 benchmarks):
# inside each transformer block it saves the outputs of ``aten.mm`` — "except every second mm" — and of the
# flash / efficient SDPA kernels, and recomputes everything else in backward. Its Llama block runs wq, wk, wv, wo,
# w1 (gate), w3 (up), w2 (down) in that order: wk, wo and w3 (the 2nd, 4th and 6th) are rerun, with every
# element-wise op of the block; the attention kernel is not.
OP_POLICY_RECOMPUTED = ("k_proj", "o_proj", "up_proj")


_DENSE_MLP = ("gate_proj", "up_proj", "down_proj", "activation")


def _in_module(op: Op, module: str) -> bool:
    """Whether Megatron's selective recomputation of ``module`` reruns ``op``."""
    routed = getattr(op, "routed", False)
    if module == "core_attn":
        return op.shard == "heads"  # the attention core: QKᵀ, softmax, ·V (and what they need)
    if module == "layernorm":
        return op.name == "norms"
    if module == "moe_act":
        return op.name == "activation" and routed
    if module == "mlp":  # the dense MLP: every MLP of a dense model, a mixture's dense layers
        return (op.name in _DENSE_MLP and not routed) or op.name.startswith("dense_")
    if module == "shared_experts":
        return op.name.startswith("shared_")
    if module == "moe":  # the whole MoE layer: router, dispatch, experts, shared experts, combine
        return routed or op.name in ("router", "moe_routing", "moe_sort") or op.name.startswith("shared_")
    if module == "mla_up_proj":
        return op.name in ("q_b_proj", "kv_b_proj")
    return False


def _recomputed(op: Op, recompute: str, modules: tuple[str, ...] = ("core_attn",)) -> bool:
    if op.name == "cross_entropy":
        return False
    if recompute == "op":
        if op.is_gemm:
            return op.name in OP_POLICY_RECOMPUTED
        return op.shard != "vocab"  # every element-wise op of the block (not the embedding)
    if recompute == "full":
        return op.shard != "vocab"  # every layer's forward, not the embedding or the LM head
    if recompute == "selective":
        return any(_in_module(op, m) for m in modules)
    return False


def idle_recompute_modules(ops: list[Op], modules: tuple[str, ...]) -> list[str]:
    """The selectively recomputed ``modules`` that rerun none of a model's forward ``ops`` — its GEMMs and its
    element-wise ops both (``moe`` in a dense model, ``mla_up_proj`` without MLA). The attention core is never idle:
    it is the default, kept for a model without attention layers too (it then reruns nothing, as Megatron's would)."""
    return [m for m in modules if m != "core_attn" and not any(_in_module(o, m) for o in ops)]


def modules_the_model_lacks(cfg: ModelConfig, wl: Workload, modules: tuple[str, ...]) -> list[str]:
    """:func:`idle_recompute_modules` over ``cfg``'s whole forward at ``wl`` (the norms and activations are
    :func:`prefill_other_ops`'s: without them ``layernorm`` and ``moe_act`` looked idle)."""
    return idle_recompute_modules(prefill_ops(cfg, wl) + prefill_other_ops(cfg, wl), modules)


def step_flops(cfg: ModelConfig, wl: Workload, recompute: str = "none", share: float = 1.0,
               modules: tuple[str, ...] = ("core_attn",)) -> dict[str, int]:
    """Exact GEMM FLOPs of one training step over ``wl.batch`` sequences of ``wl.seq_len`` tokens (``share``: the
    share of the layers a partial full recomputation reruns, :func:`recomputed_share`)."""
    if recompute not in RECOMPUTE:
        raise InputError(N_("recompute must be one of {choices}, got {recompute!r}"),
                         choices=", ".join(RECOMPUTE), recompute=recompute)
    ops = prefill_ops(cfg, replace(wl, new_tokens=0, lm_head="all"))
    fwd = sum(o.flops for o in ops)
    rc = round(share * sum(o.flops for o in ops if _recomputed(o, recompute, modules)))
    return {"forward": fwd, "backward": 2 * fwd, "recompute": rc, "model": 3 * fwd, "total": 3 * fwd + rc}


def _backward_collectives(fwd: list[Collective], cfg: ModelConfig, wl: Workload, par: Parallel, ops: list[Op],
                          hw: Hardware) -> list[Collective]:
    """Collectives of the backward pass that mirror the forward ones (see the module docstring). The gradients are
    16-bit in an 8-bit run too (:func:`gemmlib.llm.parallel.wire_bytes`): a reduce-scatter's mirror all-gathers the
    output gradient cast to 8 bits (as Transformer Engine quantizes it for the data-gradient GEMM) and an all-gather's
    mirror reduce-scatters the 16-bit input gradient. The all-to-alls carry what they carried forward: 16 bits, or
    with an 8-bit dispatch the gradient sent to the experts in 8 bits and the one sent back in 16 (DeepSeek-V3
    §3.3.3: the activation gradient before the down-projection quantized as the dispatch's input is, "both the
    forward and backward combine components" in BF16)."""
    wide, gathered = wire_bytes(wl)
    out = []
    for c in fwd:
        if c.group == "ep":
            out.append(replace(c, note=Text(N_("backward: {note}"), note=c.note)))
        elif c.group == "tp" and c.after != "embedding" and "cross-entropy" not in c.note:
            if c.op == "all_reduce":
                out.append(replace(c, note=Text(N_("backward: the input gradient of the matching column-parallel "
                                                    "block (f)"))))
            elif c.op == "reduce_scatter":
                out.append(_resized(replace(c, op="all_gather"), c.size_bytes * gathered / wide,
                                    Text(N_("backward of the reduce-scatter"))))
            elif c.op == "all_gather":
                out.append(_resized(replace(c, op="reduce_scatter"), c.size_bytes * wide / gathered,
                                    Text(N_("backward of the all-gather"))))
                out.append(replace(c, note=Text(N_("sequence parallel: input re-gathered for the weight gradient"))))
    if par.tp > 1:
        a = wide
        for o in ops:
            if o.is_gemm and o.shard == "vocab":
                op = "reduce_scatter" if par.sequence_parallel else "all_reduce"
                c = _coll(op, o.name, "tp", par.tp, o.m * o.k * a / (par.attn_ep * par.cp), o.count, par.link("tp", hw),
                          Text(N_("backward: the LM head's input gradient (f)")))
                if c is not None:
                    out.append(c)
    return out


def _resized(c: Collective, size: float, note) -> Collective:
    """``c`` carrying ``size`` bytes a call, timed again on its own link (nccl-tests' formula)."""
    one = collective_time(c.op, size, c.ranks, c.busbw, c.latency_s)
    return replace(c, size_bytes=float(size), time_s=one * c.count, note=note)


def _context_collectives(ops: list[Op], cfg: ModelConfig, wl: Workload, par: Parallel, hw: Hardware,
                         stage_layers: int) -> list[Collective]:
    """Context parallelism's ring attention (Megatron / Transformer Engine): each rank's K and V chunk
    travels the ring in forward (an all-gather of every layer's K/V) and again in backward with the
    K/V gradients coming back (an all-gather and a reduce-scatter of the same size)."""
    c = par.cp
    if c == 1:
        return []
    a = wire_bytes(wl)[0]  # K and V as attention reads them: 16-bit in an 8-bit run too
    heads_split = par.tp if cfg.is_mla else kv_split(cfg, par.tp)
    f = stage_layers / cfg.layers
    out = []
    for o in ops:
        if o.name not in QK_PRODUCTS:
            continue
        v = next((x for x in ops if x.name == o.name.replace("scores", "values")), None)
        # the forward reads K (scores) and V (values) once per sequence: the whole sequence's K/V, per layer
        kv = (o.kv_bytes + (v.kv_bytes if v is not None else 0.0)) / cfg.attn_calls / get_dtype(wl.kv_dtype).bytes * a
        layers = max(1, round(o.count / (wl.batch * cfg.heads * cfg.attn_calls) * f)) if o.count else 0
        per_layer = kv * f / max(layers, 1) / heads_split / par.attn_ep
        link = par.link("cp", hw)
        for op, cnt, note in (("all_gather", layers, N_("ring attention: K/V chunks around the context-parallel ring")),
                              ("all_gather", layers, N_("backward: K/V chunks around the ring again")),
                              ("reduce_scatter", layers, N_("backward: K/V gradients back around the ring"))):
            col = _coll(op, o.name, "cp", c, per_layer, cnt, link, Text(note))
            if col is not None:
                out.append(col)
    return out


def _cross_entropy(cfg: ModelConfig, wl: Workload, par: Parallel) -> Op:
    """One GPU's softmax cross-entropy over its logits (vocabulary-parallel, the last stage): a fused kernel
    (Megatron's / Transformer Engine's) reads the logits once and writes their gradient once. The op is
    charged a third of that in the forward pass, as the backward of every op is charged twice its forward. The logits
    are the LM head's output: 16-bit in an 8-bit run too (:func:`gemmlib.llm.parallel.wire_bytes`)."""
    a = wire_bytes(wl)[0]
    tokens = wl.batch * wl.seq_len / (par.attn_ep * par.cp)
    elements = tokens * cfg.head_vocab / par.tp
    return Op("cross_entropy", "prefill", int(tokens), cfg.head_vocab // par.tp, 0, 1, int(5 * elements), 0.0,
              2 * elements * a / 3, 0.0, Text(N_("the loss: softmax cross-entropy over the logits (fused), read once, "
                                                  "gradient written once")), kind="other")


def _expert_sort(cfg: ModelConfig, wl: Workload, par: Parallel, stage_layers: int) -> Op | None:
    """One GPU's token sorting around the EP all-to-alls (Megatron's ``MoEAlltoAllTokenDispatcher``): after
    the dispatch the received tokens are sorted by local expert and before the combine sorted back
    (``sort_chunks_by_idxs``, when a rank holds more than one expert), each a read and a write of every
    routed token copy — on top of the permute and unpermute the accounting's ``moe_routing`` counts."""
    if not cfg.is_moe or par.ep == 1 or cfg.experts // par.ep < 2:
        return None
    a = wire_bytes(wl)[0]  # the 16-bit tokens the all-to-all received (Megatron's dispatcher does not quantize them)
    k = cfg.routed_per_token
    moe_layers = sum(1 for kind in cfg.mlp_kinds if kind == "M") * stage_layers / cfg.layers
    copies = wl.batch * wl.seq_len / (par.attn_ep * par.cp) * k / par.tp  # routed token copies this rank sends
    return Op("moe_sort", "prefill", int(copies), cfg.hidden, 0, max(1, round(2 * moe_layers)), 0,
              0.0, 2 * 2 * copies * cfg.hidden * a * moe_layers, 0.0,
              Text(N_("expert parallelism: the received tokens sorted by local expert, and back")), kind="other")


# Eager PyTorch's traffic per element of the element-wise work of a Llama block, against the one read and one
# write (per tensor) of a fused kernel that the accounting charges, from torchtitan's Llama code
# (torchtitan/models/llama/model.py and models/norms.py): an engine (Megatron with Transformer Engine, or
# torch.compile) fuses each into one kernel; eager PyTorch runs each line as its own kernel through HBM.
#   norms: ``RMSNorm.forward`` = ``self._norm(x.float()).type_as(x) * self.weight``, ``_norm`` = ``x *
#     torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)``: x.float() (read 2 bytes, write 4), pow (4 + 4), mean
#     (4), x · rsqrt (4 + 4), type_as (4 + 2), · weight (2 + 2): 36 bytes against the fused 2 + 2 — 9×.
#   rotary: ``apply_rotary_emb`` = x.float() (2 + 4), the complex product with freqs_cis (4 + 4), type_as (4 + 2):
#     20 bytes against the accounting's 12 (x, cos, sin read; written) — 5/3×.
#   cross_entropy: ``cross_entropy(pred.flatten(0, 1).float(), labels)``: the cast (2 + 4), log_softmax (4 + 4),
#     its backward (4 + 4 + 4), the NLL's gradient (4) and the cast's (4 + 2): 36 bytes per logit against the
#     fused loss's 4 (read once, gradient written once) — 9×.
#   SwiGLU (F.silu(w1(x)) · w3(x): 5 element passes) and the residual adds are what the accounting counts already.
# Backward, each op's element-wise work is charged twice its forward, as for a fused kernel.
EAGER_BYTES = {"norms": 9.0, "rotary": 20 / 12, "cross_entropy": 9.0}

# Eager PyTorch's attention is ``F.scaled_dot_product_attention``, whose flash backend is FlashAttention-2 (PyTorch
# 2.2's release notes); the cuDNN backend became opt-in after 2.5 (pytorch/pytorch#138522, #138649) and
# FlashAttention-3 is no SDPA backend. Measured on an H100 with the nightly of 2024-12-04 (pytorch/pytorch#142132,
# batch 1, 24 heads, 4608 tokens, head dim 128): SDPA 329.483 TFLOP/s against FlashAttention-3's 631.827 and
# cuDNN's 631.338. The shape model's fused attention is FlashAttention-3's (gemmlib.llm.efficiency); eager PyTorch's
# runs at this ratio of it, forward and (the one measured ratio carried over) backward.
SDPA_FLASH_RATIO = 329.483 / 631.827


def _eager_copies(cfg: ModelConfig, wl: Workload) -> Op | None:
    """Eager attention's layout copies (torchtitan's ``Attention.forward``): ``repeat_kv`` materialises each K and V
    head for its query heads (``expand(...).reshape(...)``: read K and V, write them heads wide) and the attention
    output is made ``contiguous()`` after its transpose (read and write). An engine's kernels take the grouped K/V and
    the strided output as they are."""
    if cfg.is_mla:
        return None
    a = get_dtype(wl.act_dtype).bytes
    tokens = wl.batch * wl.seq_len
    per_token = 2 * cfg.o_dim
    if cfg.kv_heads < cfg.heads:
        per_token += cfg.kv_dim + cfg.v_dim + 2 * cfg.q_dim
    attn_layers = sum(1 for kind in cfg.attention_kinds if kind in ATTENTION_LETTERS)
    return Op("kv_repeat", "prefill", tokens, cfg.q_dim, 0, attn_layers, 0, 0.0, per_token * tokens * a * attn_layers,
              0.0, Text(N_("eager attention: repeat_kv copies K/V to every query head; the output made contiguous")),
              kind="other")


# Transformer Engine's TP communication overlap (userbuffers, Megatron's ``tp_comm_overlap``) hides a TP collective by
# running the GEMM beside it in pieces, each piece's transfer behind the previous piece's compute. Megatron-Bridge's
# H100 configurations (src/megatron/bridge/training/comm_overlap.py @ 067f987df, ``userbuffers_{bf16,fp8}_h100_…``):
# the all-gather side — the column-parallel forward (qkv_fprop, fc1_fprop) and the row-parallel input gradient
# (proj_dgrad, fc2_dgrad) — by ring exchange, one piece per TP rank; the reduce-scatter side, the row-parallel forward
# (proj_fprop, fc2_fprop), by ring exchange too in FP8 and as a pipeline of 4 splits in BF16 (``num_splits=4``); the
# column-parallel input and weight gradients in bulk, beside whole GEMMs. Each piece is a GEMM of M / pieces rows timed at
# its own shape (a thin piece fills fewer tiles: Llama 3.1 405B at TP8, CP2 runs its qkv projection as 512-row pieces).
UB_PIPELINE_SPLITS = 4


class _StagePeriod(NamedTuple):
    """One pipeline stage's work per micro-batch (:func:`train`): its period (compute and exposed collectives), forward,
    recomputed forward and collective times, its timed forward ops and collectives, its name, the exposed and total
    collective time by group, and the backward beyond 2 × the forward."""
    period: float
    tf: float
    trc: float
    tm: float
    ops: list
    colls: list
    stage: str
    exp: dict
    by: dict
    extra: float
    held: float  # the compute slowed by the SMs the overlapped all-to-alls hold (:func:`_held_sms_share`)


def _held_sms_share(par: Parallel, hw: Hardware) -> float:
    """The share of the GPU's SMs that overlapped EP all-to-alls hold while they run (``par.ep_comm_sms``, the note
    above :class:`gemmlib.llm.parallel.Parallel`): the compute beside them runs on the rest, so for every second of
    all-to-all hidden behind compute the compute takes that share of a second longer (its work at (S − s) / S of its
    rate while they run; the all-to-all's own time unchanged)."""
    if not par.ep_comm_sms:
        return 0.0
    if not hw.sms:
        raise InputError(N_("{gpu}'s SM count is unknown here, so the SMs the all-to-alls hold (--ep-comm-sms) cannot "
                            "be charged: set them to 0 (leave --ep-comm-sms out)"), gpu=hw.name)
    if par.ep_comm_sms >= hw.sms:
        raise InputError(N_("the SMs the all-to-alls hold (--ep-comm-sms) must be fewer than {gpu}'s {sms} SMs, got "
                            "{value}"),
                         gpu=hw.name, sms=hw.sms, value=par.ep_comm_sms)
    return par.ep_comm_sms / hw.sms


def _userbuffer_pieces(local: list[Op], timed: list[Op], slow: list[float], par: Parallel, hw: Hardware, dtype: str,
                       efficiency) -> tuple[list[Op], list[float]]:
    """With ``tp_comm_overlap``: the forward times of the overlapped GEMMs as their pieces run, and per op the
    backward's change (its GEMMs are whole but for a row-parallel op's input gradient, in tp ring-exchange pieces,
    timed as the forward's shape in tp pieces). Without it, ``timed`` and zeros."""
    back = [0.0] * len(timed)
    if not (par.tp_comm_overlap and par.tp > 1 and callable(efficiency)):
        return timed, back
    out = list(timed)
    rs_pieces = par.tp if get_dtype(dtype).bytes < 2 else UB_PIPELINE_SPLITS

    def in_pieces(o: Op, n: int) -> float:
        return n * time_op(replace(o, m=max(1, o.m // n), flops=o.flops / n, act_bytes=o.act_bytes / n), hw, dtype,
                           efficiency).time_s

    for i, o in enumerate(local):
        whole = timed[i].time_s
        if not o.is_gemm or o.routed or o.shard not in ("column", "row") or o.m < 2 or whole <= 0:
            continue
        t = max(whole, in_pieces(o, par.tp if o.shard == "column" else rs_pieces))
        out[i] = replace(timed[i], time_s=t, compute_s=timed[i].compute_s * t / whole)
        # the backward ran 2 × slow × the forward's time: whole again, but for a row-parallel input gradient in tp
        # pieces (the ring exchange of its all-gather)
        dgrad = max(whole, t if rs_pieces == par.tp else in_pieces(o, par.tp)) - whole if o.shard == "row" else 0.0
        back[i] = -2 * slow[i] * (t - whole) + slow[i] * dgrad
    return out, back


def _mtp_ops(cfg: ModelConfig, wl: Workload, par: Parallel, raw: list[Op], local: list[Op], timed: list[Op],
             stage_layers: int) -> list[Op]:
    """One GPU's forward work of the multi-token-prediction modules a run trains (DeepSeek-V3, arXiv:2412.19437
    §2.2: module k joins the normed hidden state of depth k − 1 and the next token's normed embedding through a
    projection M_k (2d → d), runs one Transformer block and the output head shared with the main model, and adds
    its cross-entropy to the loss; §3.2.1: the MTP modules sit on the pipeline rank of the main model's output
    head, with which they share it: here the last stage). Per module: the stage's layer ops scaled to one average layer, the projection, the output
    head and the loss again. Their collectives are not added (an MTP block's are one layer's of the stage's)."""
    out: list[Op] = []
    k = cfg.mtp_layers / stage_layers
    n = len(local)
    for i in range(n):
        o = local[i]
        if raw[i].shard == "vocab":
            if raw[i].is_gemm:  # the shared output head, once more per module
                out += [o] * cfg.mtp_layers
            continue
        out.append(replace(o, flops=int(o.flops * k), weight_bytes=o.weight_bytes * k, act_bytes=o.act_bytes * k,
                           kv_bytes=o.kv_bytes * k, count=max(1, round(o.count * k)),
                           kernels=max(1, round(o.kernels * k)) if o.kernels else 0))
    loss = next((x for x in raw[n:] if x.name == "cross_entropy"), None)
    if loss is not None:
        out += [loss] * cfg.mtp_layers
    a = wire_bytes(wl)[0]  # the projection's input and output between kernels: 16-bit in an 8-bit run
    w = get_dtype(wl.weight_dtype).bytes
    rows = int(wl.batch * wl.seq_len / (par.attn_ep * par.cp))
    d = cfg.hidden
    for _ in range(cfg.mtp_layers):
        out.append(Op("mtp_proj", "prefill", rows, d, 2 * d, 1, 2 * rows * d * 2 * d, 2 * d * d * w,
                      rows * 3 * d * a, 0.0, Text(N_("multi-token prediction: the projection of [hidden; embedding]"))))
    return out


# AdamW's update of one parameter with fp32 master weights (Megatron's mixed-precision optimizer, apex's fused
# multi-tensor Adam, one pass): the fp32 master weight, first and second moments read and written (3 × 8 bytes),
# the 16-bit reduced gradient read (2) and the 16-bit model weight written (2), and the gradient read once more
# for the global norm that clipping needs (2). Loshchilov & Hutter 2019 (AdamW, Algorithm 2); Micikevicius et al.
# 2018 (fp32 master weights); Rajbhandari et al. 2020 §3 (the 12 bytes of optimizer state per parameter).
ADAM_BYTES_PER_PARAM = 3 * 8 + 2 + 2 + 2


def _grad_accumulation(params: float, microbatches: int) -> Op | None:
    """Gradient accumulation in fp32 as a pass of its own (``grad_accum="fp32"``): each micro-batch's bf16 weight
    gradient of this GPU's parameters added into an fp32 buffer — the first cast into it (read 2, write 4), every
    later one read 2 + 4, written 4 — as PyTorch's autograd accumulates a bf16 gradient into an fp32 ``.grad``.
    Megatron fuses the same accumulation into the weight-gradient GEMM (``gradient_accumulation_fusion``: the GEMM
    writes its fp32 ``main_grad``), which the GEMM model already times: ``grad_accum="fused"``, no pass."""
    if params <= 0 or microbatches < 2:
        return None
    nbytes = params * (6 + 10 * (microbatches - 1))
    return Op("grad_accumulation", "prefill", int(params), 1, 0, microbatches, 0, 0.0, nbytes, 0.0,
              Text(N_("the weight gradients accumulated in fp32 over the micro-batches, a pass each")), kind="other")


def _optimizer_step(dense: float, expert: float, par: Parallel, zero: int) -> Op | None:
    """One GPU's optimizer step, memory-bound, once per step: AdamW over the parameters it updates — with ZeRO ≥ 1
    its 1 / ranks share of them (the dense ones over DP × CP × EP — folded, over the attention's data replicas —, the
    routed experts over DP × CP), without ZeRO every parameter it holds."""
    if zero >= 1:
        n = dense / (par.dp * par.cp * par.attn_ep) + expert / (par.dp * par.cp)
    else:
        n = dense + expert
    if n <= 0:
        return None
    return Op("optimizer_step", "prefill", int(n), 1, 0, 1, int(10 * n), 0.0, ADAM_BYTES_PER_PARAM * n, 0.0,
              Text(N_("the optimizer step: AdamW over this GPU's parameters (fp32 master weights and moments)")),
              kind="other")


def _exposed_tail(t: float, hide: float, pieces: int) -> float:
    """Exposed seconds of a collective of ``t`` seconds issued in ``pieces`` buckets (one per layer) behind
    ``hide`` seconds of compute: the last bucket has nothing left to hide behind."""
    if t <= 0:
        return 0.0
    pieces = max(1, pieces)
    return max(t / pieces, t - hide * (1 - 1 / pieces))


@dataclass(frozen=True)
class TrainEstimate:
    model: ModelConfig
    workload: Workload  # one step: batch = global batch, seq_len
    hardware: Hardware
    parallel: Parallel
    training: Training
    efficiency: float
    flops: dict
    microbatches: int
    stage_ops: tuple[Op, ...]  # one GPU's forward ops of one micro-batch (busiest stage)
    collectives: tuple[Collective, ...]  # one GPU's collectives over the step
    forward_s: float  # per micro-batch
    backward_s: float
    recompute_s: float
    comm_per_microbatch_s: float
    dp_communication_s: float
    compute_s: float
    communication_s: float  # exposed (not hidden behind compute)
    bubble_s: float
    step_time_s: float
    memory: PerGpuMemory
    max_micro_batch: int
    exposed: dict = field(default_factory=dict)  # group -> (seconds exposed, seconds in all) over the step
    optimizer_s: float = 0.0  # the optimizer step (in compute_s)
    grad_accumulation_s: float = 0.0  # the fp32 gradient accumulation passes over the step (in compute_s)
    held_sms_s: float = 0.0  # the compute slowed by the SMs overlapped all-to-alls hold, over the step (in compute_s)

    @property
    def gpus(self) -> int:
        return self.parallel.gpus

    @property
    def tokens_per_step(self) -> int:
        return self.workload.batch * self.workload.seq_len

    @property
    def peak(self) -> float:
        return self.hardware.peak(self.workload.act_dtype)

    @property
    def mfu(self) -> float:
        return self.flops["model"] / (self.step_time_s * self.gpus * self.peak)

    @property
    def hfu(self) -> float:
        """Hardware FLOPs (the model's, recomputation and the flash backward's QKᵀ included) / (step × GPUs × peak)."""
        return (self.flops["total"] + self.flops.get("flash_recompute", 0)) / (self.step_time_s * self.gpus * self.peak)

    @property
    def model_flops_per_gpu_s(self) -> float:
        """Achieved model FLOP/s per GPU (what "TFLOP/s per GPU" tables report)."""
        return self.flops["model"] / (self.step_time_s * self.gpus)

    @property
    def tokens_per_s(self) -> float:
        return self.tokens_per_step / self.step_time_s

    @property
    def steps(self) -> int:
        return math.ceil(self.training.tokens / self.tokens_per_step)

    @property
    def run_time_s(self) -> float:
        return self.steps * self.step_time_s

    @property
    def gpu_hours(self) -> float:
        return self.run_time_s * self.gpus / 3600

    @property
    def run_flops(self) -> float:
        """Exact model FLOPs of the whole run: the step's per token × D."""
        return self.flops["model"] / self.tokens_per_step * self.training.tokens

    @property
    def six_nd(self) -> float:
        n = self.model.active_params if self.model.is_moe else self.model.params
        return 6 * n * self.training.tokens

    def to_dict(self) -> dict:
        par = self.parallel
        return {
            "step_flops": self.flops["total"], "model_flops_per_step": self.flops["model"],
            "forward_flops": self.flops["forward"], "backward_flops": self.flops["backward"],
            "recompute_flops": self.flops["recompute"], "step_time_s": self.step_time_s, "mfu": self.mfu,
            "hfu": self.hfu, "model_flops_per_gpu_s": self.model_flops_per_gpu_s,
            "tokens_per_s": self.tokens_per_s, "tokens_per_s_per_gpu": self.tokens_per_s / self.gpus,
            "gpu_hours": self.gpu_hours, "steps": self.steps, "run_time_s": self.run_time_s,
            "run_flops": self.run_flops, "six_nd_flops": self.six_nd, "train_tokens": self.training.tokens,
            "global_batch": self.workload.batch, "seq_len": self.workload.seq_len,
            "micro_batch": self.training.micro_batch, "microbatches": self.microbatches,
            "recompute": self.training.recompute, "recompute_layers": self.training.recompute_layers,
            "layers_per_chunk": self.model.layers / par.pp / par.virtual_stages,
            "recompute_modules": list(self.training.recompute_modules),
            "zero": self.training.zero,
            "cp": par.cp, "virtual_stages": par.virtual_stages, "tp_comm_overlap": par.tp_comm_overlap,
            "ep_comm_overlap": par.ep_comm_overlap,
            "ep_overlap": par.ep_overlap if par.ep_comm_overlap else None,
            "ep_overlap_hidden_share": EP_OVERLAP_HIDDEN[par.ep_overlap] if par.ep_comm_overlap else 0.0,
            "ep_comm_sms": par.ep_comm_sms, "held_sms_s": self.held_sms_s,
            "forward_s_per_microbatch": self.forward_s, "backward_s_per_microbatch": self.backward_s,
            "recompute_s_per_microbatch": self.recompute_s, "compute_s": self.compute_s,
            "communication_s": self.communication_s, "dp_communication_s": self.dp_communication_s,
            "bubble_s": self.bubble_s, "optimizer_s": self.optimizer_s,
            "grad_accumulation_s": self.grad_accumulation_s, "overlap": par.overlap,
            "overlap_model": "best case: every collective hidden" if par.overlap else "per collective",
            "exposed_by_group": {g: {"exposed_s": e, "total_s": t} for g, (e, t) in self.exposed.items()},
            "per_gpu": self.memory.to_dict(), "max_micro_batch": self.max_micro_batch,
            "collectives": [c.to_dict() for c in self.collectives],
        }


def dp_communication_words(t: dict) -> Text:
    """The data-parallel part of a step's exposed communication, as the CLI and the page say it (``t``: a
    :meth:`TrainEstimate.to_dict`): its exposed time of its whole where some of it is hidden behind the backward
    ("data parallel 4.55 ms of its 91 ms, the rest hidden"); the whole alone, inside the exposed sum, would read as
    if all of it were on the step's critical path."""
    from gemmlib.core import format as fmt

    dp = t["exposed_by_group"].get("dp")
    if dp is None or dp["exposed_s"] == dp["total_s"]:
        return Text(N_("data parallel {dp}"), dp=fmt.duration(t["dp_communication_s"]))
    return Text(N_("data parallel {exposed} of its {total}, the rest hidden"), exposed=fmt.duration(dp["exposed_s"]),
                total=fmt.duration(dp["total_s"]))


def train(cfg: ModelConfig, wl: Workload, hw: Hardware, par: Parallel, tr: Training,
          efficiency: float = 1.0, memory_utilization: float = 0.90) -> TrainEstimate:
    """One training step of ``wl.batch`` sequences of ``wl.seq_len`` tokens (the global batch) on ``par``."""
    if wl.decode_only:
        raise InputError(N_("a training step runs whole sequences: a decode-only workload (--context) cannot train"))
    if cfg.quant is None and wl.weight_dtype in QUANTIZED_8BIT:
        raise InputError(N_("training keeps mixed-precision weights (bf16 / fp16 / fp32), not {dtype}: an 8-bit training "
                            "run multiplies in 8 bits with 16-bit weights (activations {dtype}, weights bf16: --act-dtype {dtype} "
                            "--weight-dtype bf16)"),
                         dtype=wl.weight_dtype)
    if cfg.quant is not None or wl.weight_dtype in WEIGHT_FORMATS:
        what = cfg.quant.label if cfg.quant is not None else wl.weight_dtype
        raise InputError(N_("training sizes mixed-precision weights (bf16 / fp16 / fp32); {name} is stored as {what}, "
                            "an inference format: train a full-precision copy (e.g. the custom shape)"),
                         name=cfg.name, what=what)
    dtype = wl.act_dtype
    if hw.peak(dtype) is None:
        raise hw.missing_peak_error(dtype)
    b = tr.micro_batch
    if par.folded and par.tp > 1 and not par.sequence_parallel:
        raise InputError(N_("ETP with TP {tp} needs sequence parallelism (--sequence-parallel) in training, as Megatron "
                            "requires of expert and tensor parallelism together"), tp=par.tp)
    if par.folded and par.attn_ep > 1 and b % par.attn_ep:
        raise InputError(N_("micro-batch {b} must be a multiple of {n}, the attention's data replicas in one "
                            "expert-parallel group (ETP × EP / TP): each takes its own sequences"),
                         b=b, n=par.attn_ep)
    if not par.folded and par.ep > 1 and b % par.ep:
        raise InputError(N_("micro-batch {b} must be a multiple of EP {ep}: each expert-parallel rank takes its "
                            "own sequences"), b=b, ep=par.ep)
    if wl.batch % (par.dp * b):
        raise InputError(N_("the global batch of {batch} sequences does not split into DP {dp} × micro-batch {b}; "
                            "make the batch a multiple of {multiple}"),
                         batch=wl.batch, dp=par.dp, b=b, multiple=par.dp * b)
    if wl.seq_len % par.cp:
        raise InputError(N_("CP {cp} does not divide the sequence length {s}: each context-parallel rank takes an "
                            "equal part of every sequence"), cp=par.cp, s=wl.seq_len)
    m = wl.batch // (par.dp * b)
    v = par.virtual_stages
    step = replace(wl, new_tokens=0, lm_head="all")
    wl_mb = replace(step, batch=b)
    raw = prefill_ops(cfg, wl_mb) + prefill_other_ops(cfg, wl_mb)
    if tr.recompute == "selective":
        idle = idle_recompute_modules(raw, tr.recompute_modules)
        if idle:
            raise InputError(N_("recomputed modules {idle} (--recompute-modules): {model} has no such part, so it would "
                                "rerun nothing; this model's are {useful}"), idle=", ".join(idle), model=cfg.name,
                             useful=", ".join(m for m in RECOMPUTE_MODULES if not idle_recompute_modules(raw, (m,))))
    for name, flag, on, size, group in ((N_("TP overlap"), "--tp-comm-overlap", par.tp_comm_overlap, par.tp, "TP"),
                                        (N_("EP overlap"), "--ep-comm-overlap", par.ep_comm_overlap, par.ep, "EP")):
        if on and size == 1:
            raise InputError(N_("{name} ({flag}) overlaps the collectives of {group} ranks: with {group} 1 there are "
                                "none"), name=Text(name), flag=flag, group=group)
    # An 8-bit training run multiplies its output head (the LM head) in 16 bits: Megatron Core's output layer is a plain
    # ``tensor_parallel.ColumnParallelLinear``, outside Transformer Engine's fp8 autocast, unless ``fp8_output_proj`` is
    # set with the MXFP8 recipe (megatron/core/models/gpt/gpt_model.py and fp8_utils.py,
    # ``is_mxfp8_output_proj_active``); torchtitan's Float8 converts every linear but ``output``
    # (torchtitan/float8.py, ``module_filter_fn``); DeepSeek-V3 keeps "the output head" in BF16/FP32 (arXiv:2412.19437
    # §3.3.1). ``Training.fp8_head`` runs it in 8 bits (a recipe that sets ``fp8_output_proj``).
    if get_dtype(dtype).bytes < 2 and not tr.fp8_head:
        raw = [replace(o, wide=True) if o.is_gemm and o.shard == "vocab" else o for o in raw]
    if get_dtype(dtype).bytes == 1:  # an fp8 (int8) run's casts: the transposed copy, current scaling's amax pass
        cast = FP8_CAST_BYTES[tr.fp8_recipe] / 3
        raw = [replace(o, act_bytes=o.act_bytes * cast) if o.name in ("act_quant", "act_quant_inner") else o
               for o in raw]
    if tr.eager:  # eager PyTorch's passes through HBM (EAGER_BYTES) and its attention layout copies
        raw = [replace(o, act_bytes=o.act_bytes * EAGER_BYTES[o.name]) if o.name in EAGER_BYTES else o for o in raw]
        copies = _eager_copies(cfg, wl_mb)
        if copies is not None:
            raw.append(copies)
    stage_l = layers_per_stage(cfg, par)
    local = [per_gpu_op(o, cfg, par, stage_layers=stage_l) for o in raw]
    timed = [time_op(o, hw, dtype, efficiency) for o in local]
    # SDPA's FlashAttention-2, not FA3: eager PyTorch's attention, and torch.compile's too (Inductor leaves
    # F.scaled_dot_product_attention to the same ATen flash kernel)
    if (tr.eager or tr.sdpa) and wl.attention == "fused" and callable(efficiency):
        timed = [replace(t, time_s=t.time_s / SDPA_FLASH_RATIO, compute_s=t.compute_s / SDPA_FLASH_RATIO)
                 if t.name in ATTENTION_PRODUCTS else t for t in timed]
    # how much slower per FLOP each op's backward runs than its forward (a flash kernel's backward: the shape
    # model's measured FlashAttention-3 backward; 1 for every other op and for a flat efficiency)
    bwd_factor = getattr(efficiency, "backward_factor", None)
    slow = [bwd_factor(o) if bwd_factor is not None else 1.0 for o in local]
    timed, ub_back = _userbuffer_pieces(local, timed, slow, par, hw, dtype, efficiency)
    loss = _cross_entropy(cfg, wl_mb, par)
    loss_bytes = EAGER_BYTES["cross_entropy"] if tr.eager else LOSS_BYTES[tr.loss]
    if loss_bytes != 1.0:
        note = (Text(N_("the loss: Megatron's native cross-entropy over fp32 logits, a pass per line")) if not tr.eager
                and tr.loss == "megatron_native" else loss.note)
        loss = replace(loss, act_bytes=loss.act_bytes * loss_bytes, note=note)
    raw.append(loss)
    timed.append(time_op(raw[-1], hw, dtype, efficiency))
    sort = _expert_sort(cfg, wl_mb, par, stage_l)
    if sort is not None:
        raw.append(sort)
        timed.append(time_op(sort, hw, dtype, efficiency))
    slow += [1.0] * (len(raw) - len(slow))  # the loss and the expert sort: element-wise
    fwd_c = forward_collectives(raw, cfg, wl_mb, par, hw, training=True, stage_layers=stage_l)
    bwd_c = _backward_collectives(fwd_c, cfg, wl_mb, par, raw, hw)
    rshare = recomputed_share(cfg, par, tr.recompute_layers, stage_l) if tr.recompute == "full" else 1.0
    rerun = {o.name for o in raw if o.shard != "vocab" and _recomputed(o, tr.recompute, tr.recompute_modules)}
    rc_c = [replace(c, count=c.count * rshare, time_s=c.time_s * rshare,
                    note=Text(N_("recomputed forward: {note}"), note=c.note)) for c in fwd_c
            if tr.recompute in ("full", "selective") and c.after in rerun]
    cp_c = _context_collectives(raw, cfg, wl_mb, par, hw, stage_l)
    # each micro-batch crosses every boundary of the V chunks: V sends forward and V back per GPU
    send = pipeline_send(cfg, wl_mb.prefill_tokens, 1, wl_mb, par, hw, count_per_step=2 * v)
    tags: list[str | None] = [None] * len(raw)  # the stage an op added below sits on (None: its own, _stage_of)
    if tr.mtp and cfg.mtp_layers:
        for op in _mtp_ops(cfg, wl_mb, par, raw, local, timed, stage_l):
            raw.append(op)
            timed.append(time_op(op, hw, dtype, efficiency))
            slow.append(bwd_factor(op) if bwd_factor is not None else 1.0)
            tags.append("last")
    rc_op = [_recomputed(o, tr.recompute, tr.recompute_modules) for o in raw]  # what backward reruns, op by op
    held_share = _held_sms_share(par, hw)
    best: _StagePeriod | None = None
    stages: dict[str, _StagePeriod] = {}
    for st in (("first", "last") if par.pp > 1 else ("every",)):
        keep = [i for i, o in enumerate(raw) if par.pp == 1 or (tags[i] or _stage_of(o)) in ("every", st)]
        names = {raw[i].name for i in keep}
        tf = sum(timed[i].time_s for i in keep)
        trc = rshare * sum(timed[i].time_s for i in keep if rc_op[i])
        t_lin_rc = rshare * sum(timed[i].time_s for i in keep if rc_op[i] and raw[i].is_gemm
                                and raw[i].shard in ("column", "row"))
        t_lin = sum(timed[i].time_s for i in keep if raw[i].is_gemm and raw[i].shard in ("column", "row"))
        t_att = sum(timed[i].time_s for i in keep if raw[i].name in ATTENTION_PRODUCTS)
        # the backward beyond 2 × the forward: a fused (flash) attention kernel recomputes QKᵀ in its backward, 5
        # products against the forward's 2 (Dao et al. 2022, Algorithm 4), so the products' backward is 2.5 × their
        # forward's FLOPs, run at the flash backward's own share of peak (slow[i] × the forward's time per FLOP); a
        # weight GEMM's input and weight gradients run at their own shapes (slow[i], the shape model's
        # backward_factor: 1 for a flat efficiency)
        extra = sum(((2.5 * slow[i] - 2) if raw[i].name in ATTENTION_PRODUCTS else 2 * (slow[i] - 1))
                    * timed[i].time_s for i in keep
                    if raw[i].is_gemm and (wl.attention == "fused" or raw[i].name not in ATTENTION_PRODUCTS))
        extra += sum(ub_back[i] for i in keep if i < len(ub_back))  # the backward's own userbuffer pieces
        colls = [c for c in fwd_c + bwd_c + rc_c if c.after in names] + cp_c
        if send is not None:
            colls.append(send)
        tc = 3 * tf + trc + extra
        by = {g: sum(c.time_s for c in colls if c.group == g) for g in ("tp", "cp", "ep", "pp")}
        tm = sum(by.values())
        if par.overlap:
            exp = {g: (max(0.0, tm - tc) * t / tm if tm else 0.0) for g, t in by.items()}
        else:
            hidden_lin = 3 * t_lin + t_lin_rc
            exp = {"tp": max(0.0, by["tp"] - hidden_lin) if par.tp_comm_overlap else by["tp"],
                   "cp": max(0.0, by["cp"] - 3 * t_att),  # each chunk's transfer behind the previous chunk's attention
                   # behind the other micro-batch's compute, as much as the schedule hides (EP_OVERLAP_HIDDEN)
                   "ep": by["ep"] - min(tc, EP_OVERLAP_HIDDEN[par.ep_overlap] * by["ep"]) if par.ep_comm_overlap
                   else by["ep"],
                   "pp": by["pp"]}
        held = held_share * (by["ep"] - exp["ep"])  # the all-to-alls' hidden time, their SMs taken from the compute
        period = tc + held + sum(exp.values())
        stages[st] = _StagePeriod(period, tf, trc, tm, [timed[i] for i in keep], colls, st, exp, by, extra, held)
        if best is None or period > best.period:
            best = stages[st]
    period, tf, trc, tm, ops_s, colls, st, exp, by, extra, held = best
    if par.ep_overlap == "dualpipe" and par.pp > 1:
        # DualPipe feeds micro-batches from both ends: each GPU holds two chunks, stage i of one direction and stage
        # p − 1 − i of the other (DeepSeek-V3, arXiv:2412.19437 §3.2.1: "two copies of the model parameters"), and
        # runs one micro-batch of each per pair. The GPUs of the two end stages hold the first and the last stage
        # (embedding and output head together); a middle GPU two middle chunks, no heavier than the first stage's.
        # So the period is the mean of the first and the last stage's.
        a, z = stages["first"], stages["last"]
        period, tf, trc, tm, extra, held = ((getattr(a, f) + getattr(z, f)) / 2
                                            for f in ("period", "tf", "trc", "tm", "extra", "held"))
        exp = {g: (a.exp[g] + z.exp[g]) / 2 for g in a.exp}
        by = {g: (a.by[g] + z.by[g]) / 2 for g in a.by}
    # Data parallelism: the gradients (and ZeRO's weight gathers) of this GPU's parameters. Parameters outside
    # the routed experts are replicated over DP × CP × EP ranks (the EP ranks run attention data-parallel),
    # the experts' over DP × CP.
    stage = "last" if st == "every" else st
    wb = get_dtype(wl.weight_dtype).bytes
    params = weights_per_gpu(cfg, step, hw, par)[stage] / wb
    expert = expert_weights_per_gpu(cfg, step, hw, par) / wb
    dp_c: list[Collective] = []
    expert_stride = par.expert_tp * par.ep if par.folded else par.tp * (par.ep if par.cp == 1 else 1)
    for n_params, ranks, stride, experts in ((params - expert, par.dp * par.cp * par.attn_ep, par.tp, False),
                                             (expert, par.dp * par.cp, expert_stride, True)):
        if ranks <= 1 or n_params <= 0:
            continue
        link = par.link_span(ranks, stride, hw)
        g = 2 * n_params  # 16-bit weights, bytes
        gr = GRAD_REDUCE_BYTES[tr.grad_reduce] * n_params  # the gradients as they are reduced
        if tr.zero == 0:
            dp_c.append(_coll("all_reduce", "optimizer step", "dp", ranks, gr, 1, link,
                              Text(N_("the experts' gradients (ZeRO 0)")) if experts else Text(N_("gradients (ZeRO 0)"))))
            continue
        dp_c.append(_coll("reduce_scatter", "optimizer step", "dp", ranks, gr, 1, link,
                          Text(N_("the experts' gradients (ZeRO {stage})"), stage=tr.zero) if experts else
                          Text(N_("gradients (ZeRO {stage})"), stage=tr.zero)))
        if tr.zero == 3:
            note = (Text(N_("the experts' weights before every forward and backward (ZeRO 3)")) if experts else
                    Text(N_("weights before every forward and backward (ZeRO 3)")))
        else:
            note = (Text(N_("the experts' updated weights (ZeRO {stage})"), stage=tr.zero) if experts else
                    Text(N_("updated weights (ZeRO {stage})"), stage=tr.zero))
        dp_c.append(_coll("all_gather", "optimizer step", "dp", ranks, g, 2 * m if tr.zero == 3 else 1, link, note))
    dp_c = [c for c in dp_c if c is not None]
    t_dp = sum(c.time_s for c in dp_c)
    if par.overlap:
        dp_exposed = max(0.0, t_dp - m * 2 * tf)  # best case: hidden behind every backward
        dp_parts = [(c, max(0.0, t_dp - m * 2 * tf) * c.time_s / t_dp if t_dp else 0.0) for c in dp_c]
    else:
        # gradients: bucket by bucket behind the last micro-batch's backward of the later layers; ZeRO 1-2's
        # gathered weights behind the next step's first forward; ZeRO 3's gathers (forward, then backward)
        # one layer ahead of the compute of every micro-batch
        dp_parts = []
        for c in dp_c:
            if c.op in ("all_reduce", "reduce_scatter"):
                e = _exposed_tail(c.time_s, 2 * tf, stage_l)
            elif tr.zero == 3:
                one = c.time_s / c.count  # one gather of the stage's weights
                e = m * (_exposed_tail(one, tf, stage_l) + _exposed_tail(one, 2 * tf, stage_l))
            else:
                e = _exposed_tail(c.time_s, tf, stage_l)
            dp_parts.append((c, e))
        dp_exposed = sum(e for _, e in dp_parts)
    opt = _optimizer_step(params - expert, expert, par, tr.zero)
    t_opt = time_op(opt, hw, dtype, efficiency).time_s if opt is not None else 0.0
    acc = _grad_accumulation(params, m) if tr.grad_accum == "fp32" else None
    t_acc = time_op(acc, hw, dtype, efficiency).time_s if acc is not None else 0.0
    compute_s = m * (3 * tf + trc + extra + held) + t_opt + t_acc
    exposed_mb = sum(exp.values())
    bubble = (par.pp - 1) / v * period  # interleaved 1F1B: (p − 1) / V stage periods (Narayanan et al. 2021 §2.2)
    comm = m * exposed_mb + dp_exposed
    step_time = compute_s + comm + bubble
    def memory_at(bb: int) -> PerGpuMemory:
        return training_memory(cfg, step, hw, par, micro_batch=bb, microbatches=m, zero=tr.zero,
                               recompute=tr.recompute, dropout=tr.dropout, memory_utilization=memory_utilization,
                               recompute_layers=tr.recompute_layers, recompute_modules=tr.recompute_modules)

    mem = memory_at(b)
    max_b = largest_fitting(lambda bb: memory_at(bb).fits, 4096)

    def scaled(c: Collective) -> Collective:
        share = exp[c.group] / by[c.group] if by.get(c.group) else 0.0
        return replace(c, count=c.count * m, time_s=c.time_s * m, exposed_s=c.time_s * m * share)

    all_c = tuple(scaled(c) for c in colls) + tuple(replace(c, exposed_s=e) for c, e in dp_parts)
    exposed = {g: (m * exp[g], m * by[g]) for g in ("tp", "cp", "ep", "pp") if by[g]}
    if t_dp:
        exposed["dp"] = (dp_exposed, t_dp)
    # the model's recomputed layers: the first N of each of its pp × V chunks (every layer when N is 0)
    model_share = recomputed_share(cfg, par, tr.recompute_layers, cfg.layers / par.pp) if tr.recompute == "full" else 1.0
    flops = step_flops(cfg, step, tr.recompute, model_share, tr.recompute_modules)
    if wl.attention == "fused":  # what the flash backward reruns: QKᵀ of every product pair (HFU counts it)
        flops["flash_recompute"] = sum(o.flops for o in prefill_ops(cfg, step) if o.name in QK_PRODUCTS)
    return TrainEstimate(cfg, step, hw, par, tr, 1.0 if callable(efficiency) else float(efficiency), flops, m,
                         tuple(ops_s), all_c, tf, 2 * tf + extra, trc, tm, t_dp, compute_s, comm, bubble, step_time,
                         mem, max_b, exposed, t_opt, t_acc, m * held)


# ----- a published anchor --------------------------------------------------------------------------

_LLAMA31_405B_CONFIG = {  # https://huggingface.co/meta-llama/Llama-3.1-405B/blob/main/config.json
    "model_type": "llama", "hidden_size": 16384, "intermediate_size": 53248, "num_hidden_layers": 126,
    "num_attention_heads": 128, "num_key_value_heads": 8, "vocab_size": 128256, "tie_word_embeddings": False}


@dataclass(frozen=True)
class Anchor:
    """A published training run to print beside the estimate."""

    name: str
    model: ModelConfig
    tokens: float
    flops: float
    gpu_hours: float
    gpu: str
    gpus: int
    parallel: dict
    global_batch: int
    seq_len: int
    mfu: float
    sources: tuple[str, ...]

    def to_dict(self) -> dict:
        d = asdict(self)
        d["model"] = self.model.name
        return d


LLAMA31_405B = Anchor(
    name=Text(N_("Llama 3.1 405B pre-training")),
    model=from_hf_config(_LLAMA31_405B_CONFIG, name="llama-3.1-405b",
                         source="https://huggingface.co/meta-llama/Llama-3.1-405B/blob/main/config.json"),
    tokens=15.6e12, flops=3.8e25, gpu_hours=30.84e6, gpu="H100 SXM", gpus=8192,
    parallel={"tp": 8, "pp": 16, "ep": 1, "dp": 64}, global_batch=2048, seq_len=8192, mfu=0.43,
    sources=("GPU-hours: https://github.com/meta-llama/llama-models/blob/main/models/llama3_1/MODEL_CARD.md "
             "(Training Energy Use: 405B 30.84M H100-80GB GPU-hours)",
             "15.6T tokens, 3.8e25 FLOPs: The Llama 3 Herd of Models, arXiv:2407.21783 §1, §3",
             "8,192 GPUs as TP8 CP1 PP16 DP64, 16M tokens per batch (2,048 × 8,192), 430 TFLOP/s per GPU = 43% "
             "BF16 MFU: arXiv:2407.21783 Table 4"),
)
