"""Memory per GPU: weight shard, KV-cache shard, activations, optimizer state, workspace; does it fit?

* **Weights** are derived from the same ops the time comes from: the prefill GEMMs read every
  stored matrix once per layer (with every expert reached), so their weight bytes are the
  stored GEMM weights; each GPU keeps its share by the op's sharding
  (:func:`gemmlib.llm.parallel.per_gpu_op`). The rest of the parameters — the embedding table
  (split by vocabulary, first stage), learned positions and norm weights (replicated) — is the
  total less the GEMM weights. A tied LM head is the embedding table: with pipeline stages the
  first and the last stage each hold a copy (as Megatron does).
* **KV cache**: the accounting's cache for the GPU's sequences (ceil(B / d) per replica, ÷ e
  across EP ranks), its stage's layers, ÷ min(t, KV heads).
* **Activations, inference**: the prefill peak of one micro-batch on one GPU — the residual
  stream, plus the largest of the attention block (normed input, q/k/v, and with eager
  attention the scores and the probabilities; a fused kernel keeps only a log-sum-exp per row),
  the MLP block (normed input and its F-wide intermediates) and the logits.
* **Activations, training**: Korthikanti et al. 2022 (arXiv:2205.05198 §4, Table 2), term by term
  (:func:`layer_activation_terms`), with and without sequence parallelism and recomputation:
  per layer sbh(34 + 5as/h) without parallelism, sbh(10 + 24/t + 5as/(ht)) with TP,
  (sbh/t)(34 + 5as/h) with TP + SP, the s² terms dropped by selective recomputation, 2sbh (÷ t
  with SP) with full recomputation — for the paper's GPT (MHA, GeLU MLP of 4h, dropout, 16-bit
  activations). The same terms adapt, as derivations labelled so, to GQA (K and V at the KV
  width), SwiGLU (four F-wide tensors: gate, up, SiLU output, down input; three with fused
  kernels, whose SwiGLU saves only its input and recomputes the SiLU), no dropout (no 1-byte
  masks; the modern default) and fused attention (no s² tensors, a 4-byte log-sum-exp per row
  and head; fused attention stands for the fused-kernel convention). The first pipeline stage holds p micro-batches in flight over its L/p layers
  (1F1B), i.e. all L layers' worth (§4.2.3); the last stage adds the output layer and the
  cross-entropy, 4sbh(1 + v/h) as Megatron's ``theoretical_memory_usage.py`` codes it.
* **Model states, training**: mixed-precision AdamW as ZeRO counts it (Rajbhandari et al. 2020,
  arXiv:1910.02054 §3.1, §5): 2Ψ 16-bit parameters + 2Ψ 16-bit gradients + 12Ψ fp32 master
  weights, momentum and variance; ZeRO stage 1 divides the optimizer state by the data-parallel
  size N_d, stage 2 the gradients too, stage 3 the parameters too (16Ψ/N_d).
* **Workspace**: what an engine keeps back for the CUDA context, library workspaces,
  communication buffers and fragmentation: 1 − the memory utilization (vLLM's
  ``gpu_memory_utilization`` defaults to 0.90, ``vllm/engine/arg_utils.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from gemmlib.core.dtypes import get_dtype
from gemmlib.core.errors import InputError
from gemmlib.core.hardware import Hardware
from gemmlib.core.i18n import N_
from gemmlib.llm.accounting import Workload, memory, prefill_ops, tower_bytes
from gemmlib.llm.checkpoint import element_bytes, idle_expert_bytes
from gemmlib.llm.config import ModelConfig
from gemmlib.llm.parallel import (
    Parallel,
    kv_share_per_gpu,
    kv_split,
    layers_per_stage,
    per_gpu_op,
    replica_batch,
)

DEFAULT_MEMORY_UTILIZATION = 0.90  # vLLM EngineArgs.gpu_memory_utilization
RECOMPUTE = ("none", "selective", "full", "op")  # op: torchtitan's selective op policy (gemmlib.llm.training)
# Megatron Core's selective recomputation modules (TransformerConfig.recompute_modules, its default ["core_attn"]): what
# each reruns in backward and so need not keep (gemmlib.llm.training._recomputed has the ops each reruns)
RECOMPUTE_MODULES = ("core_attn", "layernorm", "moe_act", "mlp", "moe", "shared_experts", "mla_up_proj")
_MLP_INSIDE = ("gate output", "up output", "SiLU output", "down-projection input", "GeLU input",
               "GeLU output (down-projection input)")
ZERO_STAGES = (0, 1, 2, 3)


@dataclass(frozen=True)
class PerGpuMemory:
    """Bytes on the busiest GPU, against its capacity."""

    weights_bytes: float
    kv_cache_bytes: float
    activation_bytes: float
    workspace_bytes: float
    capacity_bytes: float
    gradient_bytes: float = 0.0
    optimizer_bytes: float = 0.0
    stage: str = ""

    @property
    def total_bytes(self) -> float:
        return (self.weights_bytes + self.kv_cache_bytes + self.activation_bytes + self.gradient_bytes
                + self.optimizer_bytes + self.workspace_bytes)

    @property
    def fits(self) -> bool:
        return self.total_bytes <= self.capacity_bytes

    def parts(self) -> list[tuple[str, float]]:
        """(label, bytes) of every non-zero part, in stacking order."""
        return [(k, v) for k, v in (("weights", self.weights_bytes), ("gradients", self.gradient_bytes),
                                    ("optimizer state", self.optimizer_bytes), ("KV cache", self.kv_cache_bytes),
                                    ("activations", self.activation_bytes), ("workspace", self.workspace_bytes))
                if v]

    def to_dict(self) -> dict:
        return {"weights_bytes": self.weights_bytes, "kv_cache_bytes": self.kv_cache_bytes,
                "activation_bytes": self.activation_bytes, "gradient_bytes": self.gradient_bytes,
                "optimizer_bytes": self.optimizer_bytes, "workspace_bytes": self.workspace_bytes,
                "total_bytes": self.total_bytes, "capacity_bytes": self.capacity_bytes, "fits": self.fits,
                "stage": self.stage}


def _check_utilization(u) -> float:
    if isinstance(u, bool) or not isinstance(u, (int, float)) or not 0 < u <= 1:
        raise InputError(N_("memory utilization must be a number in (0, 1], got {u!r}"), u=u)
    return float(u)


# ----- weights -------------------------------------------------------------------------------------

# the ops whose weights a Zamba2 layer shares with the other runs of its block (its adapters and projection are its own)
_SHARED_BLOCK_OPS = frozenset({"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"})


def weights_per_gpu(cfg: ModelConfig, wl: Workload, hw: Hardware, par: Parallel) -> dict[str, float]:
    """Weight bytes on a GPU of the first and of the last pipeline stage (the same GPU when p = 1)."""
    full = replace(wl, batch=1, seq_len=max(1, cfg.experts), new_tokens=0, lm_head="all", decode_only=False)
    stage_l = layers_per_stage(cfg, par)
    # the weights as stored: a looped layer's once, however many passes run it
    gemm = [o for o in prefill_ops(cfg.stored_stack, full) if o.is_gemm and o.weight_bytes]
    layer = sum(per_gpu_op(o, cfg, par, stage_layers=stage_l).weight_bytes for o in gemm if o.shard != "vocab")
    head = sum(per_gpu_op(o, cfg, par).weight_bytes for o in gemm if o.shard == "vocab")
    w = element_bytes(cfg, wl.weight_dtype)  # the embedding table is never quantized
    total = memory(cfg, wl, hw).weights_bytes
    table = cfg.vocab * cfg.hidden * w  # the embedding table (the LM head's weight when tied)
    rest = total - sum(o.weight_bytes for o in gemm) - (0.0 if cfg.tied_embeddings else table)
    if cfg.shared_blocks:  # Zamba2: a shared block's weights are read by every layer running it, stored once
        runs, kept = cfg.block_layers, cfg.stored_blocks
        shared = [o for o in gemm if o.name in _SHARED_BLOCK_OPS]
        layer -= sum(per_gpu_op(o, cfg, par, stage_layers=stage_l).weight_bytes for o in shared) * (runs - kept) / runs
        rest += sum(o.weight_bytes for o in shared) * (runs - kept) / runs
    idle = idle_expert_bytes(cfg, wl.weight_dtype)
    if idle:  # ERNIE 4.5 VL's image experts: no op reads them; each GPU holds its share as of the text experts
        routed = [o for o in gemm if o.routed]
        share = (sum(per_gpu_op(o, cfg, par, stage_layers=stage_l).weight_bytes for o in routed)
                 / sum(o.weight_bytes for o in routed))
        rest -= idle
        layer += idle * share
    if cfg.ngram_layers:  # Qwen4-Exp's n-gram tables split like the embedding (transformers' plan: embedding_colwise),
        # each in its layer's stage: the stage holding most of them counted for both ends
        tables = cfg.ngram_table_params * w
        most = max(cfg.ngram_layers[i:i + stage_l].count("N") for i in range(0, cfg.layers, max(1, stage_l)))
        rest += tables * most / cfg.ngram_layer_count / par.tp - tables
    # a multimodal wrapper's encoders: split over the TP ranks (engines shard the vision tower's linears as the
    # decoder's), held by the first stage, which takes the image tokens
    tower = tower_bytes(cfg, wl)
    rest -= tower
    first = layer + table / par.tp + rest + tower / par.tp
    last = layer + head + rest
    if par.pp == 1:
        first = last = layer + head + rest + (0.0 if cfg.tied_embeddings else table / par.tp) + tower / par.tp
    return {"first": first, "last": last}


def expert_weights_per_gpu(cfg: ModelConfig, wl: Workload, hw: Hardware, par: Parallel) -> float:
    """Bytes of the routed experts' weights on one GPU (every stage holds the same number of layers)."""
    if not cfg.is_moe:
        return 0.0
    full = replace(wl, batch=1, seq_len=max(1, cfg.experts), new_tokens=0, lm_head="all", decode_only=False)
    stage_l = layers_per_stage(cfg, par)
    return sum(per_gpu_op(o, cfg, par, stage_layers=stage_l).weight_bytes for o in prefill_ops(cfg.stored_stack, full)
               if o.is_gemm and o.routed)


def kv_per_gpu(cfg: ModelConfig, wl: Workload, hw: Hardware, par: Parallel) -> float:
    """KV-cache bytes on one GPU when every sequence holds its S + N tokens."""
    par = par.inference()
    local = -(-replica_batch(wl.batch, par) // par.attn_ep)
    kv = memory(cfg, replace(wl, batch=local), hw).kv_cache_bytes
    # each kind of layer's cache split its own way (Gemma 4's full layers have fewer KV heads than its sliding ones)
    share = kv_share_per_gpu(cfg, par.tp, wl.final_tokens) if cfg.has_full_shape else 1 / kv_split(cfg, par.tp)
    return kv * layers_per_stage(cfg, par) / cfg.layers * share


# ----- activations: inference --------------------------------------------------------------------

def mlp_width(cfg: ModelConfig) -> int:
    """The widest MLP intermediate one token makes in any layer: the dense FFN, or in a MoE layer k
    experts (every expert when all run) plus the shared expert."""
    widths = [cfg.ffn] if cfg.dense_layer_count else []
    if cfg.is_moe:
        k = cfg.routed_per_token
        widths.append(k * cfg.expert_ffn + cfg.shared_expert_ffn)
    return max(widths, default=0)  # 0: no MLP (a pure state-space model)


def inference_activation_bytes(cfg: ModelConfig, wl: Workload, par: Parallel, *, micro_batch: int,
                               last_stage: bool = True) -> float:
    """Peak activation bytes of one GPU's prefill of ``micro_batch`` sequences (one layer at a time)."""
    a = get_dtype(wl.act_dtype).bytes
    t, e = par.tp, par.attn_ep
    seqs = micro_batch / e
    tok = seqs * wl.seq_len
    h, q, kv = cfg.hidden, cfg.q_dim, cfg.kv_dim
    f = mlp_width(cfg)
    resid = tok * cfg.residual_width * a  # (hyper-connections: every stream)
    normed = tok * h * a
    qkv = tok * (q / t + 2 * kv / kv_split(cfg, t)) * a
    heads = cfg.heads / t * cfg.attn_calls  # (DiffLlama: two attention calls per head)
    scores = 2 * seqs * heads * wl.seq_len * wl.seq_len * a if wl.attention == "eager" else seqs * heads * wl.seq_len * 4
    attn = normed + qkv + scores
    mlp = normed + tok * (3 if cfg.mlp == "gated" else 2) * f / t * a
    logits = 0.0
    if last_stage:
        positions = tok if wl.lm_head == "all" else seqs
        logits = positions * cfg.head_vocab / t * a
    return resid + max(attn, mlp, logits)


# ----- activations: training (Korthikanti et al. 2022) --------------------------------------------

def layer_activation_terms(cfg: ModelConfig, seq_len: int, micro_batch: float, *, act_bytes: float = 2,
                           attention: str = "eager", dropout: bool = False) -> list[dict]:
    """Every tensor one transformer layer keeps for its backward pass (Korthikanti et al. §4.1), in bytes,
    without parallelism: each term says whether it lies inside the tensor-parallel region
    (``split``: "tp" or "kv" for K/V) and whether it is an s² term (dropped by selective
    recomputation)."""
    s, b, a = seq_len, micro_batch, act_bytes
    h, q, kv, n_heads = cfg.hidden, cfg.q_dim, cfg.kv_dim, cfg.heads * cfg.attn_calls  # (DiffLlama: two calls a head)
    f = mlp_width(cfg)
    sb = s * b
    kr = 1
    t: list[dict] = []

    def add(name: str, nbytes: float, split: str = "", s2: bool = False) -> None:
        t.append({"term": name, "bytes": float(nbytes), "split": split, "s2": s2})

    r = cfg.residual_width  # (hyper-connections: the layer's input is every stream)
    add("norm 1 input", a * sb * r)
    add("q/k/v input (norm 1 output)", a * sb * h)
    add("Q", a * sb * q, "tp")
    add("K", a * sb * kv, "kv")
    add("V", a * sb * kv, "kv")
    if attention == "eager":
        add("softmax output", a * n_heads * s * s * b, "tp", True)
        if dropout:
            add("attention dropout mask", n_heads * s * s * b, "tp", True)
            add("attention dropout output", a * n_heads * s * s * b, "tp", True)
    else:
        add("softmax log-sum-exp (fp32, fused attention)", 4 * n_heads * s * b, "tp")
    add("out-projection input", a * sb * q, "tp")
    if dropout:
        add("attention block dropout mask", sb * h)
    add("norm 2 input", a * sb * r)
    add("MLP input (norm 2 output)", a * sb * h)
    if cfg.mlp == "gated":
        # eager PyTorch keeps silu(gate) too; a fused SwiGLU (Megatron's bias_swiglu_impl, Transformer Engine)
        # saves only its input, gate|up, and recomputes the SiLU in backward
        names = ("gate output", "up output", "down-projection input") if attention == "fused" else (
            "gate output", "up output", "SiLU output", "down-projection input")
        for name in names:
            add(name, a * sb * f * kr, "tp")
    else:
        add("GeLU input", a * sb * f * kr, "tp")
        add("GeLU output (down-projection input)", a * sb * f * kr, "tp")
    if dropout:
        add("MLP block dropout mask", sb * h)
    return t


def _dropped(term: str, cfg: ModelConfig, modules: tuple[str, ...]) -> float:
    """The share of an activation term that Megatron's selective recomputation of ``modules`` does not keep: a
    recomputed module keeps its input and drops what it makes inside (core_attn: the s² terms, counted apart)."""
    share = 0.0
    if "layernorm" in modules and term in ("q/k/v input (norm 1 output)", "MLP input (norm 2 output)"):
        share = 1.0
    if term in _MLP_INSIDE:
        if ("moe" in modules and cfg.is_moe) or ("mlp" in modules and not cfg.is_moe):
            share = 1.0
        elif cfg.is_moe:
            f = cfg.computing_per_token * cfg.expert_ffn + cfg.shared_expert_ffn
            if "moe_act" in modules and term == "down-projection input":
                share = max(share, cfg.computing_per_token * cfg.expert_ffn / f)
            if "shared_experts" in modules:  # the shared expert's part of the MLP's width too
                share = min(1.0, share + cfg.shared_expert_ffn / f)
    if "mla_up_proj" in modules and cfg.is_mla and term in ("Q", "K", "V"):
        share = 1.0
    return share


def layer_activation_bytes(cfg: ModelConfig, seq_len: int, micro_batch: float, *, tp: int = 1,
                           sequence_parallel: bool = False, recompute: str = "none", act_bytes: float = 2,
                           attention: str = "eager", dropout: bool = False,
                           modules: tuple[str, ...] = ("core_attn",)) -> float:
    """Bytes one layer keeps for backward on one tensor-parallel rank (Korthikanti Table 2, adapted); ``modules``:
    what selective recomputation reruns (Megatron's ``recompute_modules``, :data:`RECOMPUTE_MODULES`)."""
    if recompute not in RECOMPUTE:
        raise InputError(N_("recompute must be one of {choices}, got {recompute!r}"),
                         choices=", ".join(RECOMPUTE), recompute=recompute)
    sp = sequence_parallel and tp > 1
    if recompute == "full":
        x = act_bytes * seq_len * micro_batch * cfg.residual_width  # only the layer's input is kept
        return x / tp if sp else x
    if recompute == "op":
        # torchtitan's op policy keeps the layer's input, the outputs of its 1st, 3rd, 5th and 7th matmul (q, v,
        # gate, down) and the attention kernel's output with its fp32 log-sum-exp; it recomputes the rest
        sb = seq_len * micro_batch
        f = cfg.computing_per_token * cfg.expert_ffn + cfg.shared_expert_ffn if cfg.is_moe else cfg.ffn
        hidden = (cfg.residual_width + cfg.hidden) / (tp if sp else 1)  # the layer's input (every hyper-connection
        # stream) and the down projection's output
        split = (cfg.q_dim + cfg.o_dim + f) / tp + cfg.v_dim / kv_split(cfg, tp)
        return act_bytes * sb * (hidden + split) + 4 * cfg.heads / tp * sb
    total = 0.0
    for term in layer_activation_terms(cfg, seq_len, micro_batch, act_bytes=act_bytes, attention=attention,
                                       dropout=dropout):
        if term["s2"] and recompute == "selective" and "core_attn" in modules:
            continue
        div = {"tp": tp, "kv": kv_split(cfg, tp), "": tp if sp else 1}[term["split"]]
        keep = 1.0 - (_dropped(term["term"], cfg, modules) if recompute == "selective" else 0.0)
        total += keep * term["bytes"] / div
    return total


def recomputed_share(cfg: ModelConfig, par: Parallel, recompute_layers: int, stage_layers: float | None = None) -> float:
    """The share of a stage's layers that full recomputation reruns: 1 for every layer (``recompute_layers`` 0), else
    Megatron's block method (``--recompute-method block --recompute-num-layers N``): the first N layers of each of the
    stage's model chunks (one chunk per virtual stage), the rest kept whole."""
    if not recompute_layers:
        return 1.0
    stage = stage_layers if stage_layers is not None else layers_per_stage(cfg, par)
    if stage <= 0:
        return 1.0
    chunk = stage / par.virtual_stages
    return min(1.0, min(recompute_layers, chunk) / chunk)


def training_activation_bytes(cfg: ModelConfig, wl: Workload, par: Parallel, *, micro_batch: int,
                              microbatches: int, recompute: str = "none", dropout: bool = False,
                              recompute_layers: int = 0, recompute_modules: tuple[str, ...] = ("core_attn",)
                              ) -> dict[str, float]:
    """Activation bytes of the first and of the last pipeline stage's GPU in a training step.

    Context parallelism (c ranks) keeps 1/c of every sequence's tokens on a rank: every term is taken at
    s / c tokens, the s² terms of eager attention at (s / c) × s (the rank's queries against every key).
    The interleaved schedule (V virtual stages) holds 1 + (p − 1) / (p·V) times the first stage's
    activations (Korthikanti et al. 2022 §4.2.3). ``recompute_layers`` N with full recomputation: Megatron's block
    method, the first N layers of each model chunk keep only their input, the others everything."""
    a = get_dtype(wl.act_dtype).bytes
    # an attention replica's sequences (folded: b × tp ranks' tokens are the EP group's, so the routed experts'
    # k × expert MLP width / tp per token comes to the group's routed activations over ep × expert TP, as it should)
    t, e, c = par.tp, par.attn_ep, par.cp
    b = micro_batch / e
    s = wl.seq_len / c
    kw = dict(tp=t, sequence_parallel=par.sequence_parallel, recompute=recompute, act_bytes=a,
              attention=wl.attention, dropout=dropout, modules=tuple(recompute_modules))
    per_layer = layer_activation_bytes(cfg, s, b, **kw)
    stage_l = layers_per_stage(cfg, par)
    if recompute == "full" and recompute_layers and stage_l:
        r = recomputed_share(cfg, par, recompute_layers, stage_l)  # the share of each chunk's layers recomputed
        per_layer = r * per_layer + (1 - r) * layer_activation_bytes(cfg, s, b, **{**kw, "recompute": "none"})
    if c > 1 and wl.attention == "eager" and recompute == "none":
        s2 = sum(x["bytes"] / t for x in layer_activation_terms(cfg, s, b, act_bytes=a, attention="eager",
                                                                 dropout=dropout) if x["s2"])
        per_layer += (c - 1) * s2
    sp = par.sequence_parallel and t > 1
    in_flight = min(microbatches, par.pp)  # 1F1B: the first stage holds p micro-batches
    ids = 8 * s * b  # int64 token ids
    emb_mask = s * b * cfg.hidden / (t if sp else 1) if dropout else 0.0
    interleave = 1 + (par.pp - 1) / (par.pp * par.virtual_stages) if par.virtual_stages > 1 else 1.0
    first = (stage_l * in_flight * per_layer + in_flight * (ids + emb_mask)) * interleave
    output = 2 * a * s * b * cfg.hidden / (t if sp else 1) + 4 * s * b * cfg.head_vocab / t
    last = stage_l * per_layer + output
    if par.pp == 1:
        first = last = stage_l * per_layer + ids + emb_mask + output
    return {"first": first, "last": last}


# ----- model states (ZeRO) -------------------------------------------------------------------------

def model_state_bytes(params: float, zero: int, dp: int) -> dict[str, float]:
    """ZeRO's mixed-precision Adam bytes per GPU for ``params`` parameters on it: 16-bit weights (2Ψ),
    16-bit gradients (2Ψ), fp32 master weights + momentum + variance (12Ψ), each divided by the
    data-parallel size from its stage on (optimizer: 1, gradients: 2, weights: 3)."""
    if zero not in ZERO_STAGES:
        raise InputError(N_("ZeRO stage must be 0, 1, 2 or 3, got {zero!r}"), zero=zero)
    return {"weights": 2 * params / (dp if zero >= 3 else 1), "gradients": 2 * params / (dp if zero >= 2 else 1),
            "optimizer": 12 * params / (dp if zero >= 1 else 1)}


# ----- the per-GPU answer --------------------------------------------------------------------------

def inference_memory(cfg: ModelConfig, wl: Workload, hw: Hardware, par: Parallel, *, micro_batch: int,
                     memory_utilization: float = DEFAULT_MEMORY_UTILIZATION,
                     weights: dict[str, float] | None = None) -> PerGpuMemory:
    """The busiest GPU of an inference deployment: weights, KV cache at the end, prefill activation peak.
    ``weights``: :func:`weights_per_gpu`'s answer when already known (it does not depend on the batch)."""
    u = _check_utilization(memory_utilization)
    par = par.inference()
    w = weights if weights is not None else weights_per_gpu(cfg, wl, hw, par)
    kv = kv_per_gpu(cfg, wl, hw, par)
    cap = float(hw.memory_bytes)
    best = None
    for stage in (("first", "last") if par.pp > 1 else ("last",)):
        act = inference_activation_bytes(cfg, wl, par, micro_batch=micro_batch, last_stage=stage == "last")
        m = PerGpuMemory(w[stage], kv, act, (1 - u) * cap, cap, stage=stage if par.pp > 1 else "")
        if best is None or m.total_bytes > best.total_bytes:
            best = m
    return best


def training_memory(cfg: ModelConfig, wl: Workload, hw: Hardware, par: Parallel, *, micro_batch: int,
                    microbatches: int, zero: int = 0, recompute: str = "none", dropout: bool = False,
                    memory_utilization: float = DEFAULT_MEMORY_UTILIZATION, recompute_layers: int = 0,
                    recompute_modules: tuple[str, ...] = ("core_attn",)) -> PerGpuMemory:
    """The busiest GPU of a training step: ZeRO model states, Korthikanti activations, workspace. ZeRO shards
    over the ranks that hold the same parameters: DP × CP × EP for the dense ones (EP ranks run attention
    data-parallel), DP × CP for the routed experts (Megatron's distributed optimizer)."""
    u = _check_utilization(memory_utilization)
    w = weights_per_gpu(cfg, wl, hw, par)
    wbytes = get_dtype(wl.weight_dtype).bytes
    experts = expert_weights_per_gpu(cfg, wl, hw, par) / wbytes
    acts = training_activation_bytes(cfg, wl, par, micro_batch=micro_batch, microbatches=microbatches,
                                     recompute=recompute, dropout=dropout, recompute_layers=recompute_layers,
                                     recompute_modules=recompute_modules)
    cap = float(hw.memory_bytes)
    best = None
    for stage in (("first", "last") if par.pp > 1 else ("last",)):
        dense = model_state_bytes(w[stage] / wbytes - experts, zero, par.dp * par.cp * par.attn_ep)
        exp = model_state_bytes(experts, zero, par.dp * par.cp)
        st = {k: dense[k] + exp[k] for k in dense}
        m = PerGpuMemory(st["weights"], 0.0, acts[stage], (1 - u) * cap, cap, gradient_bytes=st["gradients"],
                         optimizer_bytes=st["optimizer"], stage=stage if par.pp > 1 else "")
        if best is None or m.total_bytes > best.total_bytes:
            best = m
    return best


def largest_fitting(fits: Callable[[int], bool], limit: int) -> int:
    """The largest n in [1, limit] with fits(n), for fits that is true up to some n and false after
    (0 when even 1 does not fit)."""
    if limit < 1 or not fits(1):
        return 0
    lo, hi = 1, 1
    while hi < limit and fits(min(limit, hi * 2)):
        hi = min(limit, hi * 2)
        lo = hi
    if hi == limit:
        return limit
    hi = min(limit, hi * 2)  # fits(lo) and not fits(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return lo
