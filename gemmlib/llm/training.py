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
  stage: the forward ops' roofline time, the backward at 2 × that (the GEMMs exactly; the
  element-wise ops assumed alike), the recomputed ops again; the forward collectives
  (:func:`gemmlib.llm.parallel.forward_collectives`), in backward an all-reduce for each
  forward one of a row-parallel op and of the LM head's input (Megatron's ``f``: two per layer
  forward, two backward), the EP all-to-alls again, with sequence parallelism each
  reduce-scatter/all-gather pair mirrored plus the all-gather Megatron repeats for the weight
  gradient; the recomputed forward's collectives; the pipeline's activation and gradient sends.
  1F1B over M = B / (d × b) micro-batches takes (M + p − 1) stage periods. Then the gradients
  go across data parallelism (ZeRO, Rajbhandari et al. §7): stage 0 all-reduces the 16-bit
  gradients (2Ψ bytes), stages 1–2 reduce-scatter them and all-gather the updated weights (the
  same volume), stage 3 adds the weights' all-gather in every forward and backward of every
  micro-batch (1.5× at M = 1). Not overlapped unless ``overlap``.
* **MFU** = model FLOPs (forward + backward, no recomputation) / (step time × GPUs × dense peak);
  HFU counts the recomputation too. Tokens/s = B·S / step time; the run is ceil(D / (B·S))
  steps; GPU-hours = run time × GPUs / 3600. 6·N·D (N = parameters, active parameters for a
  MoE) is printed beside the exact count.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

from gemmlib.core.dtypes import get_dtype
from gemmlib.core.errors import InputError
from gemmlib.core.hardware import Hardware
from gemmlib.core.i18n import N_, Text
from gemmlib.llm.accounting import Op, Workload, prefill_ops, prefill_other_ops, time_op
from gemmlib.llm.config import ModelConfig
from gemmlib.llm.hf import from_hf_config
from gemmlib.llm.memory import (
    RECOMPUTE,
    ZERO_STAGES,
    PerGpuMemory,
    largest_fitting,
    training_memory,
    weights_per_gpu,
)
from gemmlib.llm.parallel import (
    Collective,
    Parallel,
    _coll,
    _stage_of,
    forward_collectives,
    layers_per_stage,
    per_gpu_op,
    pipeline_send,
)
from gemmlib.llm.quant import WEIGHT_FORMATS

MAX_TRAIN_TOKENS = 1e16


@dataclass(frozen=True)
class Training:
    """A training run: ``tokens`` D for the whole run, ``micro_batch`` sequences per micro-batch (per
    model replica), activation recomputation, ZeRO stage, dropout (for the activation memory)."""

    tokens: float
    micro_batch: int = 1
    recompute: str = "none"
    zero: int = 0
    dropout: bool = False

    def __post_init__(self) -> None:
        t = self.tokens
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or not 0 < t <= MAX_TRAIN_TOKENS:
            raise InputError(N_("--train-tokens must be a positive number of tokens (at most {limit:.0e}), got "
                                "{t!r}"), limit=MAX_TRAIN_TOKENS, t=t)
        if isinstance(self.micro_batch, bool) or not isinstance(self.micro_batch, int) or self.micro_batch < 1:
            raise InputError(N_("--micro-batch must be a whole number ≥ 1, got {micro_batch!r}"),
                             micro_batch=self.micro_batch)
        if self.recompute not in RECOMPUTE:
            raise InputError(N_("--recompute must be one of {choices}, got {recompute!r}"),
                             choices=", ".join(RECOMPUTE), recompute=self.recompute)
        if self.zero not in ZERO_STAGES:
            raise InputError(N_("--zero must be 0, 1, 2 or 3, got {zero!r}"), zero=self.zero)


def _recomputed(op: Op, recompute: str) -> bool:
    if recompute == "full":
        return op.shard != "vocab"  # every layer's forward, not the embedding or the LM head
    if recompute == "selective":
        return op.shard == "heads"  # the attention core: QKᵀ, softmax, ·V (and what they need)
    return False


def step_flops(cfg: ModelConfig, wl: Workload, recompute: str = "none") -> dict[str, int]:
    """Exact GEMM FLOPs of one training step over ``wl.batch`` sequences of ``wl.seq_len`` tokens."""
    if recompute not in RECOMPUTE:
        raise InputError(N_("recompute must be one of {choices}, got {recompute!r}"),
                         choices=", ".join(RECOMPUTE), recompute=recompute)
    ops = prefill_ops(cfg, replace(wl, new_tokens=0, lm_head="all"))
    fwd = sum(o.flops for o in ops)
    rc = sum(o.flops for o in ops if _recomputed(o, recompute))
    return {"forward": fwd, "backward": 2 * fwd, "recompute": rc, "model": 3 * fwd, "total": 3 * fwd + rc}


def _backward_collectives(fwd: list[Collective], cfg: ModelConfig, wl: Workload, par: Parallel, ops: list[Op],
                          hw: Hardware) -> list[Collective]:
    """Collectives of the backward pass that mirror the forward ones (see the module docstring)."""
    out = []
    for c in fwd:
        if c.group == "ep":
            out.append(replace(c, note=Text(N_("backward: {note}"), note=c.note)))
        elif c.group == "tp" and c.after != "embedding" and "cross-entropy" not in c.note:
            if c.op == "all_reduce":
                out.append(replace(c, note=Text(N_("backward: the input gradient of the matching column-parallel "
                                                    "block (f)"))))
            elif c.op == "reduce_scatter":
                out.append(replace(c, op="all_gather", note=Text(N_("backward of the reduce-scatter"))))
            elif c.op == "all_gather":
                out.append(replace(c, op="reduce_scatter", note=Text(N_("backward of the all-gather"))))
                out.append(replace(c, note=Text(N_("sequence parallel: input re-gathered for the weight gradient"))))
    if par.tp > 1:
        a = get_dtype(wl.act_dtype).bytes
        for o in ops:
            if o.is_gemm and o.shard == "vocab":
                op = "reduce_scatter" if par.sequence_parallel else "all_reduce"
                c = _coll(op, o.name, "tp", par.tp, o.m * o.k * a / par.ep, o.count, par.link("tp", hw),
                          Text(N_("backward: the LM head's input gradient (f)")))
                if c is not None:
                    out.append(c)
    return out


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
    communication_s: float
    bubble_s: float
    step_time_s: float
    memory: PerGpuMemory
    max_micro_batch: int

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
        return self.flops["total"] / (self.step_time_s * self.gpus * self.peak)

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
        return {
            "step_flops": self.flops["total"], "model_flops_per_step": self.flops["model"],
            "forward_flops": self.flops["forward"], "backward_flops": self.flops["backward"],
            "recompute_flops": self.flops["recompute"], "step_time_s": self.step_time_s, "mfu": self.mfu,
            "hfu": self.hfu, "tokens_per_s": self.tokens_per_s, "tokens_per_s_per_gpu": self.tokens_per_s / self.gpus,
            "gpu_hours": self.gpu_hours, "steps": self.steps, "run_time_s": self.run_time_s,
            "run_flops": self.run_flops, "six_nd_flops": self.six_nd, "train_tokens": self.training.tokens,
            "global_batch": self.workload.batch, "seq_len": self.workload.seq_len,
            "micro_batch": self.training.micro_batch, "microbatches": self.microbatches,
            "recompute": self.training.recompute, "zero": self.training.zero,
            "forward_s_per_microbatch": self.forward_s, "backward_s_per_microbatch": self.backward_s,
            "recompute_s_per_microbatch": self.recompute_s, "compute_s": self.compute_s,
            "communication_s": self.communication_s, "dp_communication_s": self.dp_communication_s,
            "bubble_s": self.bubble_s, "overlap": self.parallel.overlap,
            "per_gpu": self.memory.to_dict(), "max_micro_batch": self.max_micro_batch,
            "collectives": [c.to_dict() for c in self.collectives],
        }


def train(cfg: ModelConfig, wl: Workload, hw: Hardware, par: Parallel, tr: Training,
          efficiency: float = 1.0, memory_utilization: float = 0.90) -> TrainEstimate:
    """One training step of ``wl.batch`` sequences of ``wl.seq_len`` tokens (the global batch) on ``par``."""
    if wl.decode_only:
        raise InputError(N_("a training step runs whole sequences: a decode-only workload (--context) cannot train"))
    if cfg.quant is not None or wl.weight_dtype in WEIGHT_FORMATS:
        what = cfg.quant.label if cfg.quant is not None else wl.weight_dtype
        raise InputError(N_("training sizes mixed-precision weights (bf16 / fp16 / fp32); {name} is stored as {what}, "
                            "an inference format: train a full-precision copy (e.g. the custom shape)"),
                         name=cfg.name, what=what)
    dtype = wl.act_dtype
    if hw.peak(dtype) is None:
        raise hw.missing_peak_error(dtype)
    b = tr.micro_batch
    if par.ep > 1 and b % par.ep:
        raise InputError(N_("--micro-batch {b} must be a multiple of --ep {ep}: each expert-parallel rank takes its "
                            "own sequences"), b=b, ep=par.ep)
    if wl.batch % (par.dp * b):
        raise InputError(N_("the global batch of {batch} sequences does not split into --dp {dp} × --micro-batch {b}; "
                            "make the batch a multiple of {multiple}"),
                         batch=wl.batch, dp=par.dp, b=b, multiple=par.dp * b)
    m = wl.batch // (par.dp * b)
    step = replace(wl, new_tokens=0, lm_head="all")
    wl_mb = replace(step, batch=b)
    raw = prefill_ops(cfg, wl_mb) + prefill_other_ops(cfg, wl_mb)
    stage_l = layers_per_stage(cfg, par)
    timed = [time_op(per_gpu_op(o, cfg, par, stage_layers=stage_l), hw, dtype, efficiency) for o in raw]
    fwd_c = forward_collectives(raw, cfg, wl_mb, par, hw, training=True, stage_layers=stage_l)
    bwd_c = _backward_collectives(fwd_c, cfg, wl_mb, par, raw, hw)
    rc_c = [replace(c, note=Text(N_("recomputed forward: {note}"), note=c.note)) for c in fwd_c
            if tr.recompute == "full" and c.after in {o.name for o in raw if o.shard != "vocab"}]
    send = pipeline_send(cfg, wl_mb.prefill_tokens, 1, wl_mb, par, hw, count_per_step=2)
    best = None
    for st in (("first", "last") if par.pp > 1 else ("every",)):
        keep = [i for i, o in enumerate(raw) if par.pp == 1 or _stage_of(o) in ("every", st)]
        names = {raw[i].name for i in keep}
        tf = sum(timed[i].time_s for i in keep)
        trc = sum(timed[i].time_s for i in keep if _recomputed(raw[i], tr.recompute))
        colls = [c for c in fwd_c + bwd_c + rc_c if c.after in names]
        if send is not None:
            colls.append(send)
        tm = sum(c.time_s for c in colls)
        tc = 3 * tf + trc
        period = max(tc, tm) if par.overlap else tc + tm
        if best is None or period > best[0]:
            best = (period, tf, trc, tm, [timed[i] for i in keep], colls, st)
    period, tf, trc, tm, ops_s, colls, st = best
    # Data parallelism: the gradients (and ZeRO's weight gathers) of this GPU's parameters.
    params = weights_per_gpu(cfg, step, hw, par)["last" if st == "every" else st] / get_dtype(wl.weight_dtype).bytes
    dp_c: list[Collective] = []
    if par.dp > 1:
        link = par.link("dp", hw)
        g = 2 * params  # 16-bit gradients and weights, bytes
        if tr.zero == 0:
            dp_c.append(_coll("all_reduce", "optimizer step", "dp", par.dp, g, 1, link, Text(N_("gradients (ZeRO 0)"))))
        else:
            dp_c.append(_coll("reduce_scatter", "optimizer step", "dp", par.dp, g, 1, link,
                              Text(N_("gradients (ZeRO {stage})"), stage=tr.zero)))
            ag = 2 * m if tr.zero == 3 else 1
            dp_c.append(_coll("all_gather", "optimizer step", "dp", par.dp, g, ag, link,
                              Text(N_("weights before every forward and backward (ZeRO 3)")) if tr.zero == 3
                              else Text(N_("updated weights (ZeRO {stage})"), stage=tr.zero)))
    dp_c = [c for c in dp_c if c is not None]
    t_dp = sum(c.time_s for c in dp_c)
    compute_s = m * (3 * tf + trc)
    exposed_mb = max(0.0, tm - (3 * tf + trc)) if par.overlap else tm
    dp_exposed = max(0.0, t_dp - m * 2 * tf) if par.overlap else t_dp  # best case: hidden behind backward
    bubble = (par.pp - 1) * period
    comm = m * exposed_mb + dp_exposed
    step_time = compute_s + comm + bubble  # = (m + p - 1) stage periods + the exposed data-parallel sync
    mem = training_memory(cfg, step, hw, par, micro_batch=b, microbatches=m, zero=tr.zero, recompute=tr.recompute,
                          dropout=tr.dropout, memory_utilization=memory_utilization)

    def fits(bb: int) -> bool:
        return training_memory(cfg, step, hw, par, micro_batch=bb, microbatches=m, zero=tr.zero,
                               recompute=tr.recompute, dropout=tr.dropout,
                               memory_utilization=memory_utilization).fits

    max_b = largest_fitting(fits, 4096)
    scaled = tuple(replace(c, count=c.count * m, time_s=c.time_s * m) for c in colls) + tuple(dp_c)
    return TrainEstimate(cfg, step, hw, par, tr, float(efficiency), step_flops(cfg, step, tr.recompute), m,
                         tuple(ops_s), scaled, tf, 2 * tf, trc, tm, t_dp, compute_s, comm, bubble, step_time, mem,
                         max_b)


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
             "8,192 GPUs as TP8 CP1 PP16 DP64, 16M tokens per batch (2,048 × 8,192), 430 TFLOP/s per GPU = 43 % "
             "BF16 MFU: arXiv:2407.21783 Table 4"),
)
