"""Parallelism with communication: how each op splits across GPUs and what the GPUs send each other.

Megatron-style sharding (Shoeybi et al. 2019, arXiv:1909.08053 §3; Megatron-LM
``megatron/core/tensor_parallel/layers.py``), read from each op's sharding in
:data:`gemmlib.llm.accounting.SHARDING` and its attributes, never from op names:

* **Tensor parallelism (TP, t ranks).** ``column`` ops (q/k/v, gate/up) split their
  output features: each rank reads the whole input and writes 1/t of the output;
  ``row`` ops (o, down) split their input features and end with an **all-reduce** of
  the output (two per layer in the forward pass); ``heads`` ops (attention products,
  softmax, rotary) split by query head; KV heads split across ranks, or are
  replicated when there are fewer KV heads than ranks (each rank holds one: vLLM's
  ``QKVParallelLinear``, Megatron's ``num_query_groups``), so the K/V projections,
  the K/V reads and the KV cache divide by min(t, KV heads). ``vocab`` ops split the
  vocabulary: the embedding lookup is followed by an all-reduce of its output
  (``VocabParallelEmbedding``), the LM head's logits are all-gathered in inference
  (vLLM ``_gather_logits``) and reduced by a vocabulary-parallel cross-entropy in
  training (three all-reduces of [s, b] fp32, ``tensor_parallel/cross_entropy.py``).
  ``replicated`` ops (norms, residual adds, the router) run whole on every rank —
  with sequence parallelism (Korthikanti et al. 2022, arXiv:2205.05198 §4.2.2) they
  split by sequence and each all-reduce becomes a reduce-scatter plus an all-gather.
* **Expert parallelism (EP, e ranks).** Attention and the other non-expert work are
  data-parallel across EP ranks (each takes 1/e of the replica's sequences); routed
  experts (:attr:`Op.routed`) split across EP ranks, and inside each across TP (the
  expert tensor parallelism Megatron defaults to); each MoE layer dispatches its
  tokens with an **all-to-all** and combines them with another (Megatron
  ``MoEAlltoAllTokenDispatcher``), each TP rank sending 1/t of its tokens' k copies.
* **Pipeline parallelism (PP, p stages).** Each stage holds ceil(L/p) layers; the
  embedding sits on the first stage, the LM head on the last (the final norm is
  counted with the layers' norms). M micro-batches flow through the stages:
  a phase takes (M + p − 1) stage periods, the bubble being p − 1 of them (GPipe /
  1F1B, Narayanan et al. 2021 §2.2); each boundary sends the activations
  (``send_recv``). In decode, a step cycles max(M, p) stage periods.
* **Data parallelism (DP, d replicas)** serves ceil(B/d) sequences per replica in
  inference; in training it reduces the gradients (ZeRO stages, :mod:`.training`).

GPUs are numbered as Megatron does by default (``initialize_model_parallel(order=
"tp-cp-ep-dp-pp")``): TP innermost, then EP, DP, and PP outermost, so a group's
stride is the product of the sizes inside it. Each collective crosses the link its
group spans (:meth:`gemmlib.core.hardware.Interconnect.link_for`: NVLink/NVSwitch
inside the scale-up domain, PCIe inside a node beyond it, the network between
nodes) and costs ``latency + size × factor / busbw`` (:mod:`gemmlib.core.comm`,
nccl-tests conventions). In inference, communication is **not overlapped** with compute
unless ``overlap`` is set, which shows the best case: each stage period is
max(compute, communication); a training step hides each collective behind the compute it
can (:mod:`gemmlib.llm.training`). Context parallelism (``cp``, training) splits every
sequence's tokens across its ranks; inference phases treat those ranks as replicas.

This module never imports torch.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from gemmlib.core.comm import Link
from gemmlib.core.dtypes import get_dtype
from gemmlib.core.errors import InputError
from gemmlib.core.hardware import Hardware, Interconnect
from gemmlib.core.i18n import N_, Text
from gemmlib.llm.accounting import (
    Op,
    OpSums,
    PhaseTotals,
    Workload,
    decode_ops,
    decode_other_ops,
    decode_timed,
    phase_ops,
    prefill_ops,
    prefill_other_ops,
    time_op,
)
from gemmlib.llm.config import ATTENTION_LETTERS, ModelConfig

GROUPS = ("tp", "cp", "ep", "dp", "pp")
_TP_SPLIT = ("column", "row", "heads", "vocab")
_MAX = 1_000_000


def _size(name: str, v, minimum: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, int) and not (isinstance(v, float) and v.is_integer()):
        raise InputError(N_("{name} must be a whole number, got {value!r}"), name=name, value=v)
    v = int(v)
    if v < minimum or v > _MAX:
        raise InputError(N_("{name} must be between {minimum} and {limit:,}, got {value}"),
                         name=name, minimum=minimum, limit=_MAX, value=v)
    return v


# How much of the EP all-to-alls' time an overlapped schedule hides behind compute at most (the rest waits), by
# schedule. Megatron's ``overlap_moe_expert_parallel_comm`` (one micro-batch's dispatch and combine beside another's
# compute): 36.55 % — Megatron-Bridge's Nsight Systems comparison of Qwen3-30B-A3B pre-training on 16 H100s (BF16,
# EP16, MBS 1, GBS 1024, HybridEP), "Communication time hidden by compute | 0.11% | 36.55%" with the overlap off and
# on (skills/nemo-mbridge-perf-moe-comm-overlap/SKILL.md, "Measured Evidence", @ 067f987df). DeepSeek-V3's DualPipe:
# all of it, "both all-to-all and PP communication can be fully hidden during execution" (arXiv:2412.19437 §3.2.1).
EP_OVERLAP_HIDDEN = {"megatron": 0.3655, "dualpipe": 1.0}

# The SMs overlapped EP all-to-alls hold while they run (``Parallel.ep_comm_sms``): their kernels are resident on
# those SMs, so the compute they hide behind runs on the rest. Stated, not modelled: DeepSeek-V3 gives 20 of the H800's
# 132 SMs to communication and says that this limits the computational throughput (arXiv:2412.19437 §3.5.1; §3.2.2: 20 SMs
# in 10 channels fill IB and NVLink); DeepEP's default in Megatron Core, 20 (``moe_deepep_num_sms: int = 20``,
# megatron/core/transformer/transformer_config.py at 16e19d063, September 2025; "historical default 20" later);
# HybridEP's ``moe_hybridep_num_sms`` as a recipe sets it. NCCL's all-to-all kernels take SMs too, but no run here
# states how many (its channel count is NCCL's choice): 0, nothing charged.


@dataclass(frozen=True)
class Parallel:
    """How the GPUs split the work: tensor, context, pipeline, expert and data parallel sizes (their
    product is the GPU count), GPUs per node (0: the catalogue's typical node), the overlap switch,
    pipeline micro-batches (0: the default), sequence parallelism, and for training the virtual
    pipeline stages per GPU (interleaved 1F1B) and the named overlap techniques: ``tp_comm_overlap``
    (Transformer Engine's TP communication overlapped with the GEMMs beside it, Megatron's
    ``--tp-comm-overlap``) and ``ep_comm_overlap`` (the EP all-to-alls overlapped with another
    micro-batch's compute) with ``ep_overlap``, the schedule that overlaps them and so how much it hides at most
    (:data:`EP_OVERLAP_HIDDEN`: ``megatron``, Megatron's ``--overlap-moe-expert-parallel-comm``; ``dualpipe``,
    DeepSeek-V3's DualPipe) and ``ep_comm_sms``, the SMs its all-to-all kernels hold meanwhile (the note above :class:`Parallel`);
    ``etp``, the experts' own tensor-parallel size (Megatron's MoE parallel folding; 0: ``tp``); ``ep_fp8_dispatch``, an
    8-bit run's EP dispatch sent in 8 bits (DeepSeek-V3) instead of 16 (:func:`wire_bytes`).

    ``overlap`` is the best case: every collective hidden behind compute. Without it inference
    charges every collective; training hides each collective behind the compute it can hide behind
    (:mod:`gemmlib.llm.training`)."""

    tp: int = 1
    pp: int = 1
    ep: int = 1
    dp: int = 1
    gpus_per_node: int = 0
    overlap: bool = False
    microbatches: int = 0
    sequence_parallel: bool = False
    cp: int = 1
    virtual_stages: int = 1
    tp_comm_overlap: bool = False
    ep_comm_overlap: bool = False
    etp: int = 0  # expert tensor parallel (0: the same as tp, no folding)
    ep_fp8_dispatch: bool = False  # an 8-bit run dispatches its tokens in 8 bits (DeepSeek-V3), not 16 (Megatron)
    ep_overlap: str = "megatron"  # the schedule ep_comm_overlap means (EP_OVERLAP_HIDDEN)
    ep_comm_sms: int = 0  # SMs the overlapped all-to-alls hold beside the compute (0: none stated; see above)

    def __post_init__(self) -> None:
        for f in GROUPS:
            object.__setattr__(self, f, _size(f"--{f}", getattr(self, f)))
        object.__setattr__(self, "etp", _size("--etp", self.etp, 0))
        if self.etp == self.tp:
            object.__setattr__(self, "etp", 0)  # stated equal to --tp: the classic layout, one form for it
        object.__setattr__(self, "gpus_per_node", _size("--gpus-per-node", self.gpus_per_node, 0))
        object.__setattr__(self, "microbatches", _size("micro-batches", self.microbatches, 0))
        object.__setattr__(self, "virtual_stages", _size("--virtual-stages", self.virtual_stages))
        object.__setattr__(self, "ep_comm_sms", _size("--ep-comm-sms", self.ep_comm_sms, 0))
        for f in ("overlap", "sequence_parallel", "tp_comm_overlap", "ep_comm_overlap", "ep_fp8_dispatch"):
            if not isinstance(getattr(self, f), bool):
                raise InputError(N_("{field} must be true or false, got {value!r}"),
                                 field=f, value=getattr(self, f))
        if self.ep_overlap not in EP_OVERLAP_HIDDEN:
            raise InputError(N_("the EP overlap schedule must be one of {choices}, got {value!r}"),
                             choices=", ".join(EP_OVERLAP_HIDDEN), value=self.ep_overlap)
        if self.ep_comm_sms and not self.ep_comm_overlap:
            raise InputError(N_("the SMs the all-to-alls hold (--ep-comm-sms) are those of overlapped all-to-alls: turn on "
                                "EP overlap (--ep-comm-overlap)"))

    @property
    def folded(self) -> bool:
        """Megatron's MoE parallel folding: the experts' own tensor-parallel size differs from the attention's."""
        return self.etp != 0

    @property
    def expert_tp(self) -> int:
        """The ranks one routed expert is split across (Megatron's ``expert_tensor_parallel_size``)."""
        return self.etp or self.tp

    @property
    def attn_ep(self) -> int:
        """How many ways the attention side splits one EP group's sequences: the EP group's ranks (ep ×
        expert TP) over the attention's TP. Without folding, ep: each EP rank takes its own sequences."""
        return self.expert_tp * self.ep // self.tp

    @property
    def gpus(self) -> int:
        return self.expert_tp * self.cp * self.pp * self.ep * self.dp

    @property
    def replica(self) -> int:
        """GPUs holding one copy of the model: expert TP × pp × ep (tp × pp × ep without folding)."""
        return self.expert_tp * self.pp * self.ep

    def stride(self, group: str) -> int:
        """Distance between neighbours of a group in the rank order tp, cp, ep, dp, pp (Megatron's
        ``order="tp-cp-ep-dp-pp"``). Folded, the experts' ranks follow their own order, expert TP innermost and then
        EP (Megatron's expert rank generator): an EP group's neighbours are expert-TP ranks apart."""
        t, c, e, d = self.tp, self.cp, self.ep, self.dp
        if self.folded:
            return {"tp": 1, "cp": t, "ep": self.etp, "dp": self.etp * c * e,
                    "pp": self.etp * c * e * d}[group]
        return {"tp": 1, "cp": t, "ep": t * c, "dp": t * c * e, "pp": t * c * e * d}[group]

    def to_dict(self) -> dict:
        return {"tp": self.tp, "pp": self.pp, "ep": self.ep, "dp": self.dp, "cp": self.cp,
                "virtual_stages": self.virtual_stages, "etp": self.expert_tp}

    def inference(self) -> Parallel:
        """The layout inference phases use: context parallelism is a training layout here (it splits each
        training sequence across ranks), so its ranks serve as data-parallel replicas; one virtual stage."""
        if self.cp == 1 and self.virtual_stages == 1:
            return self
        return replace(self, dp=self.dp * self.cp, cp=1, virtual_stages=1)

    def check(self, cfg: ModelConfig, gpus: int | None = None) -> None:
        """Refuse a split the model cannot take, with a sentence that says why."""
        if self.folded:
            self._check_folded(cfg, gpus)
        elif gpus is not None and gpus != self.gpus and self.cp == 1:
            raise InputError(N_("TP {tp} × PP {pp} × EP {ep} × DP {dp} = {gpus}, but the GPU count given is {given}; "
                                "make the product equal the GPU count"),
                             tp=self.tp, pp=self.pp, ep=self.ep, dp=self.dp, gpus=self.gpus, given=gpus)
        if gpus is not None and gpus != self.gpus:
            raise InputError(N_("TP {tp} × CP {cp} × PP {pp} × EP {ep} × DP {dp} = {gpus}, but the GPU count given "
                                "is {given}; make the product equal the GPU count"),
                             tp=self.tp, cp=self.cp, pp=self.pp, ep=self.ep, dp=self.dp, gpus=self.gpus, given=gpus)

        t = self.tp
        if cfg.attention_layer_count and cfg.heads % t:
            raise InputError(N_("TP {t} does not divide the {heads} attention heads; pick a TP size that does"),
                             t=t, heads=cfg.heads)
        for kv in sorted({cfg.attention_shape(k).kv_heads for k in set(cfg.attention_kinds) if k in ATTENTION_LETTERS},
                         reverse=True):
            if kv % t and t % kv:
                raise InputError(N_("TP {t} and the {kv_heads} KV heads: one must divide the other (KV heads are "
                                    "split across ranks or each replicated on t / KV heads ranks)"), t=t, kv_heads=kv)
        pure = cfg.attention_free  # a pure state-space model: its mixer is split, it has no MLP
        if pure:
            mx = cfg.mixer
            split = mx.heads if mx.heads else mx.inner
            if split % t:
                raise InputError(N_("TP {t} does not divide the mixer's {n} {what}"), t=t, n=split,
                                 what=Text(N_("heads") if mx.heads else N_("channels")))
        if not pure and cfg.ffn % t:
            raise InputError(N_("TP {t} does not divide the MLP width {ffn}"), t=t, ffn=cfg.ffn)
        if cfg.is_moe and not self.folded and cfg.expert_ffn % t:
            raise InputError(N_("TP {t} does not divide the experts' MLP width {expert_ffn}"),
                             t=t, expert_ffn=cfg.expert_ffn)
        if self.pp > cfg.layers:
            raise InputError(N_("PP {pp} is more pipeline stages than the model's {layers} layers"),
                             pp=self.pp, layers=cfg.layers)
        if self.virtual_stages > 1 and self.pp == 1:
            raise InputError(N_("virtual stages need pipeline stages (PP 2 or more)"))
        # two chunks may hold no layer: the first only the embedding, the last only the output head and the loss,
        # as Llama 3 balances its pipeline (arXiv:2407.21783 §3.3.2: 126 layers in 16 × 8 one-layer chunks)
        if self.pp * self.virtual_stages > cfg.layers + 2:
            raise InputError(N_("PP {pp} × virtual stages {v} is more pipeline chunks than the model's {layers} "
                                "layers"), pp=self.pp, v=self.virtual_stages, layers=cfg.layers)
        if self.ep > 1 and not cfg.is_moe:
            raise InputError(N_("EP {ep} needs a mixture-of-experts model; {name} is dense"),
                             ep=self.ep, name=cfg.name)
        if cfg.is_moe and cfg.experts % self.ep:
            raise InputError(N_("EP {ep} does not divide the {experts} experts"),
                             ep=self.ep, experts=cfg.experts)

    def _check_folded(self, cfg: ModelConfig, gpus: int | None) -> None:
        """The folded layout's own rules (Megatron Core's MoE parallel folding: the attention's tp × cp × data
        replicas and the experts' etp × ep × expert data replicas are two splits of one stage's GPUs)."""
        if gpus is not None and gpus != self.gpus:
            raise InputError(N_("ETP {etp} × CP {cp} × PP {pp} × EP {ep} × DP {dp} = {gpus}, but the GPU count given is "
                                "{given}; with ETP the experts' split sets the count (DP: the experts' data replicas)"), etp=self.etp, cp=self.cp, pp=self.pp, ep=self.ep, dp=self.dp,
                             gpus=self.gpus, given=gpus)
        if not cfg.is_moe:
            raise InputError(N_("ETP needs a mixture-of-experts model; {name} is dense"), name=cfg.name)
        if (self.etp * self.ep) % self.tp:
            raise InputError(N_("ETP {etp} × EP {ep} = {n} expert ranks must be a multiple of TP {tp}: each "
                                "attention TP group lies inside one EP group"),
                             etp=self.etp, ep=self.ep, n=self.etp * self.ep, tp=self.tp)
        if cfg.expert_ffn % self.etp:
            raise InputError(N_("ETP {t} does not divide the experts' MLP width {expert_ffn}"),
                             t=self.etp, expert_ffn=cfg.expert_ffn)

    def node_size(self, hw: Hardware) -> int:
        ic = _interconnect(hw) if self.gpus > 1 else None
        return self.gpus_per_node or (ic.gpus_per_node if ic else 1)

    def _node(self, hw: Hardware) -> int:
        """The node the links are worked out with: a node larger than the job holds only the job's GPUs (64 GPUs
        of a 72-GPU NVL72 rack are one NVLink domain of 64, not a group that straddles two nodes; 16 GPUs at
        ``--gpus-per-node 1000`` are one node of 16). Before, such a group went over the network "across 1 nodes"."""
        return min(self.node_size(hw), self.gpus)

    def link(self, group: str, hw: Hardware, ranks: int | None = None) -> Link:
        """The link the ``group``'s collectives cross (for "pp": the slowest of the links between neighbouring
        stages, :meth:`pp_links`, which sets the stage period)."""
        n = 2 if group == "pp" else getattr(self, group) if ranks is None else ranks
        if n <= 1 or (group == "pp" and self.pp == 1):
            return Link("none", "measured", 1.0, 0.0, Text(N_("one rank: nothing moves")))
        if group == "pp":
            return min((link for link, _ in self.pp_links(hw)), key=lambda k: (k.busbw, -k.latency_s))
        ic = _interconnect(hw)
        return ic.link_for(n, self.stride(group), self._node(hw))

    def pp_links(self, hw: Hardware) -> list[tuple[Link, int]]:
        """The links the pp − 1 stage boundaries send over, each with how many boundaries use it (first used
        first). Stage s holds GPUs s·stride … s·stride + stride − 1 and sends GPU g's activations to g + stride:
        a boundary inside a node goes over the scale-up link (or PCIe between scale-up domains), one between
        two nodes over the network, one NIC per pair. With 8 GPUs per node, TP 4 × PP 4 sends 0→4 and 8→12
        over NVLink and 4→8 over the network; a single link for the group (a pair's span, 8, fits a node)
        named NVLink for all three. A boundary whose GPUs differ (a stride not aligned with the node) takes
        its slowest pair's."""
        if self.pp <= 1:
            return []
        ic, node, stride = _interconnect(hw), self._node(hw), self.stride("pp")
        if stride >= node:  # every boundary crosses nodes, as one group's link says
            return [(ic.link_for(2, stride, node), self.pp - 1)]
        domain = min(ic.scale_up_gpus, node)
        links: dict[str, tuple[Link, int]] = {}
        for s in range(self.pp - 1):
            kinds = set()
            for a in range(s * stride, (s + 1) * stride):
                b = a + stride
                kinds.add(2 if a // node != b // node else 1 if domain <= 1 or a // domain != b // domain else 0)
            kind = max(kinds)  # the slowest pair: network 2, PCIe 1, scale-up 0
            link = (ic.link_for(2, node, node) if kind == 2 else ic.link_for(2, node // 2, node) if kind == 1
                    else ic.link_for(2, 1, node))
            prev = links.get(str(link))
            links[str(link)] = (link, (prev[1] if prev else 0) + 1)
        return list(links.values())

    def all_to_all_link(self, group: str, hw: Hardware) -> Link:
        """The link the ``group``'s all-to-alls cross (:meth:`gemmlib.core.hardware.Interconnect.all_to_all_link`:
        across nodes each rank's off-node share goes through its own NIC)."""
        n = getattr(self, group)
        if n <= 1:
            return self.link(group, hw)
        return _interconnect(hw).all_to_all_link(n, self.stride(group), self._node(hw))

    def link_span(self, ranks: int, stride: int, hw: Hardware) -> Link:
        """The link a collective over ``ranks`` GPUs ``stride`` apart crosses (a group that joins several of
        the parallel dimensions, e.g. the gradients' data-parallel × context-parallel × expert group)."""
        if ranks <= 1:
            return Link("none", "measured", 1.0, 0.0, Text(N_("one rank: nothing moves")))
        return _interconnect(hw).link_for(ranks, stride, self._node(hw))

    def placement(self, hw: Hardware) -> list[dict]:
        """Each group with more than one rank: size, stride and the link it crosses (for tables)."""
        rows = []
        for g in GROUPS:
            n = getattr(self, g)
            if n > 1 and g == "pp" and len(links := self.pp_links(hw)) > 1:  # one row per link the sends use
                for link, used in links:
                    name = Text(N_("{link} ({n} of the {total} stage boundaries)"), link=link.name, n=used,
                                total=self.pp - 1)
                    rows.append({"group": g, "ranks": n, "stride": self.stride(g), "link": name,
                                 "busbw_bytes_per_s": link.busbw, "latency_s": link.latency_s, "source": link.source,
                                 "stage_boundaries": used})
            elif n > 1:
                link = self.link(g, hw)
                rows.append({"group": g, "ranks": n, "stride": self.stride(g), "link": link.name,
                             "busbw_bytes_per_s": link.busbw, "latency_s": link.latency_s, "source": link.source})
        if self.folded and self.etp > 1:  # the experts' own TP group, neighbours as the attention's TP ranks
            link = self.link("tp", hw, self.etp)
            rows.insert(1, {"group": "etp", "ranks": self.etp, "stride": 1, "link": link.name,
                            "busbw_bytes_per_s": link.busbw, "latency_s": link.latency_s, "source": link.source})
        return rows


def _interconnect(hw: Hardware) -> Interconnect:
    if hw.interconnect is None:
        raise InputError(N_("{name} has no interconnect figures (NVLink, PCIe, network) in the catalogue; pick a "
                            "catalogue GPU for more than one device"), name=hw.name)
    return hw.interconnect


# ----- one GPU's share of an op -------------------------------------------------------------------

def layers_per_stage(cfg: ModelConfig, par: Parallel) -> int:
    """Layers on the busiest pipeline stage: ceil(L / p), or with V virtual stages V chunks of
    ceil(L / (p·V)) layers (Megatron's interleaved schedule)."""
    v = par.virtual_stages
    return -(-cfg.layers // (par.pp * v)) * v


def kv_split(cfg: ModelConfig, tp: int, kind: str = "") -> int:
    """How many ways the KV heads (of a layer of ``kind``: Gemma 4's full layers have their own) split: min(t, KV
    heads) (fewer KV heads than ranks: replicated). An MLA cache (one latent every head reads) is whole on every rank."""
    if cfg.is_mla:
        return 1
    return min(tp, cfg.attention_shape(kind).kv_heads)


def kv_share_per_gpu(cfg: ModelConfig, tp: int, tokens: int) -> float:
    """The share of one sequence's KV cache (``tokens`` in) that one tensor-parallel rank holds: each kind of layer's
    cache split its own way (:func:`kv_split`)."""
    kinds = cfg.attention_kinds
    per = {k: cfg.cached_tokens(k, tokens) * cfg.kv_elements_of(k) for k in set(kinds)}
    total = sum(kinds.count(k) * e for k, e in per.items())
    if not total:
        return 1.0 / kv_split(cfg, tp)
    return sum(kinds.count(k) * e / kv_split(cfg, tp, k) for k, e in per.items()) / total


def _kv_kind(op: Op) -> str:
    """The kind of layer whose cache an attention product reads: full for the unsuffixed products (Gemma 4's full
    layers have KV heads of their own), the model's own for the sliding ones and every other op."""
    return "F" if op.name in ("attn_scores", "attn_values") else ""


def _is_kv_projection(op: Op, cfg: ModelConfig) -> bool:
    return op.is_gemm and op.name in ("k_proj", "v_proj")


# Head-parallel ops whose heads (or channels) are in their width, N: each run covers every head of a layer.
HEADS_IN_WIDTH = frozenset({"rotary", "kv_repeat", "conv1d", "conv_gates", "kv_conv", "kv_conv_dynamic", "ssm_scan",
                            "cca_conv_depthwise", "cca_conv_grouped"})


def heads_axis(op: Op, cfg: ModelConfig) -> str:
    """Where a head-parallel op keeps its heads, the dimension tensor parallelism splits: ``"m"`` (the rows: absorbed
    MLA's decode products run every head of a layer and sequence against the shared latent as one GEMM; the relative
    bias's per-head states; Mamba's scan output over its inner channels), ``"n"`` (:data:`HEADS_IN_WIDTH`) or
    ``"count"`` (a run per head: the attention products and what follows their scores, a chunked scan's chunks).
    tests/llm/test_op_axes.py checks each against the same model with half the heads."""
    if op.name in HEADS_IN_WIDTH:
        return "n"
    if op.name == "rel_logits" or (op.name == "ssm_scan_out" and cfg.mixer is not None and cfg.mixer.kind == "mamba"):
        return "m"
    if (cfg.is_mla and op.phase == "decode" and op.name in ("attn_scores", "attn_values") and op.m == cfg.heads
            and op.m > 1):
        return "m"
    return "count"


def per_gpu_op(op: Op, cfg: ModelConfig, par: Parallel, *, stage_layers: int | None = None,
               sequences: int | None = None) -> Op:
    """One GPU's share of ``op`` (summed over the layers of its pipeline stage), by the op's sharding.

    ``stage_layers`` is how many of the model's layers the GPU's stage holds (default: the busiest
    stage's ceil(L / p)); ``vocab`` ops (embedding, LM head) sit whole on their stage. Context
    parallelism (c ranks) gives each rank 1/c of every sequence's tokens: every op's FLOPs and
    activations divide by c (its queries meet every key, the causal work balanced across ranks as
    Megatron's load-balanced split does), the weights do not. The rank's rows (M) and runs are its own: 1/e of the
    sequences and 1/c of the positions, each where the op keeps them (``Op.batch_axis``, ``Op.tokens_axis``).

    ``sequences``: how many sequences ``op`` holds, when they need not split evenly over those e ranks: the busiest
    rank then holds ceil(sequences / e) of them, whole (one sequence over EP 16 is not 1/16 of a sequence on each).
    """
    c = par.cp
    # A routed expert's op splits across the experts' TP and EP ranks; every other op across the attention's TP and
    # the data replicas inside one EP group (ep without folding: each EP rank its own sequences).
    t, e = (par.expert_tp, par.ep) if op.routed else (par.tp, par.attn_ep)
    if not op.routed and e > 1 and sequences and sequences % e:
        e = sequences / -(-sequences // e)  # the busiest rank's share of the sequences is 1/e of them
    vocab = op.shard == "vocab"
    f = 1.0 if vocab else (stage_layers if stage_layers is not None else layers_per_stage(cfg, par)) / cfg.layers
    sp = par.sequence_parallel and par.tp > 1
    tsplit = t if op.shard in _TP_SPLIT else (t if sp and not op.is_gemm else 1)
    if _is_kv_projection(op, cfg):
        tsplit = kv_split(cfg, t)
    flops = op.flops * f / (tsplit * e * c)
    # Weights: a GEMM's matrix is read by every rank holding it (EP ranks share non-expert weights);
    # an element-wise op's "weights" are rows it gathers (embedding) or norm weights.
    if op.is_gemm:
        w = op.weight_bytes * f / (tsplit * (e if op.routed else 1))
    else:
        w = op.weight_bytes * f / (tsplit * (e if vocab else 1))
    # Activations: a column-split GEMM reads its whole input and writes its share of the output; a
    # row-split GEMM the reverse (its partial sums are full-size until the all-reduce).
    if op.is_gemm and op.weight_bytes > 0 and op.k and op.n:
        a_in = op.act_bytes * op.k / (op.k + op.n)
        a_out = op.act_bytes - a_in
        if op.shard == "row":
            a = a_in / tsplit + a_out
        elif op.shard in ("column", "vocab"):
            a = a_in + a_out / tsplit
        else:
            a = (a_in + a_out) / tsplit
        a /= e
    elif not op.is_gemm and vocab:
        a = op.act_bytes / e  # the lookup writes a full-width (masked) output on every rank
    else:
        a = op.act_bytes / (tsplit * e)
    a /= c
    kv = op.kv_bytes * f / (kv_split(cfg, t, _kv_kind(op)) * e) if op.kv_bytes else 0.0
    # The rank's shape: its rows (M), its N and K, and its runs, each divided where the op keeps what is split, so that
    # 2·M·N·K × runs is the rank's FLOPs. A routed op's rows are the EP group's tokens (each expert meets the tokens of
    # every rank of the group) and its runs the experts, divided by e; any other op has 1/e of the group's sequences
    # (each EP rank, or attention data replica, its own: Op.batch_axis) and 1/c of each sequence's positions
    # (Op.tokens_axis). Tensor parallelism splits a column-parallel op's N, a row-parallel one's K, a head-parallel
    # one's heads wherever it keeps them (:func:`heads_axis`), and with sequence parallelism an element-wise op's rows.
    m, n, k, n_last, k_last = op.m, op.n, op.k, op.n_last, op.k_last
    runs_split = e if op.routed else 1
    if not op.routed and e > 1:
        if op.batch_axis == "m":
            m = -(-m // e) if isinstance(e, int) else round(m / e)
        else:
            runs_split *= e
    if c > 1:
        if op.tokens_axis == "m":
            m = -(-m // c)
        elif op.tokens_axis == "count":
            runs_split *= c
    if tsplit > 1:
        if op.shard == "column" or vocab and op.is_gemm:  # (the embedding's lookup writes full-width rows)
            n = -(-n // tsplit)
        elif op.shard == "row":
            k = -(-k // tsplit)
        elif op.shard == "heads":
            where = heads_axis(op, cfg)
            if where == "m":
                m = -(-m // tsplit)
            elif where == "n":
                n = -(-n // tsplit)
            else:
                runs_split *= tsplit
        elif vocab:
            pass  # the embedding's lookup: every rank writes full-width rows for every token (masked)
        elif op.tokens_axis == "m":  # sequence parallel: a replicated element-wise op on the rank's share of the rows
            m = -(-m // tsplit)
        else:
            runs_split *= tsplit
    count = max(1, round(op.count * f / runs_split))
    kernels = max(1, round(op.kernels * f)) if op.kernels else 0  # the launches of the stage's layers (0: one per run)
    return replace(op, m=m, n=n, k=k, n_last=n_last, k_last=k_last, flops=int(round(flops)), weight_bytes=w,
                   act_bytes=a * f, kv_bytes=kv, count=count, kernels=kernels,
                   time_s=0.0, compute_s=0.0, memory_s=0.0, bound="")


# ----- collectives ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Collective:
    """Collectives of one kind after one op on one GPU over a phase: ``count`` × one of ``size_bytes``
    (nccl-tests' size) over ``ranks`` GPUs of ``group`` on ``link``; ``time_s`` is the total."""

    op: str
    after: str
    group: str
    ranks: int
    size_bytes: float
    count: float
    link: str
    busbw: float
    latency_s: float
    time_s: float
    note: str = ""
    exposed_s: float | None = None  # training: the part not hidden behind compute (None: not modelled)

    def to_dict(self) -> dict:
        return asdict(self)


def _coll(op: str, after: str, group: str, ranks: int, size: float, count: float, link: Link,
          note: str = "") -> Collective | None:
    if ranks <= 1 or count <= 0:
        return None
    one = link.time(op, size, ranks)
    return Collective(op, after, group, ranks, float(size), float(count), link.name, link.busbw, link.latency_s,
                      one * count, note)


def wire_bytes(wl: Workload) -> tuple[float, float]:
    """Bytes per element on the wire: (what is reduced, sent between stages or through the all-to-alls; what is
    all-gathered as a GEMM's input). In an 8-bit run only the GEMMs' inputs are 8-bit: their outputs and every
    gradient are 16-bit (cuBLASLt's FP8 GEMMs write bf16/fp16; Transformer Engine's recipes), so the TP reductions,
    the pipeline's activations and Megatron's all-to-alls carry 16 bits (Megatron Core's ``moe_dispatch_fwd_dtype``:
    "Defaults to 'bf16' (no quantization on the wire)"; TensorRT-LLM's all-reduce runs on the GEMMs' 16-bit
    outputs), while Transformer Engine all-gathers a sequence-parallel GEMM input already cast to 8 bits (its
    quantized all-gather). 16-bit and wider runs send their own dtype everywhere."""
    act = get_dtype(wl.act_dtype).bytes
    return max(act, 2.0), act


def forward_collectives(ops: list[Op] | tuple[Op, ...], cfg: ModelConfig, wl: Workload, par: Parallel,
                        hw: Hardware, *, training: bool = False, stage_layers: int | None = None) -> list[Collective]:
    """The collectives one GPU runs in a forward pass over ``ops`` (whole-replica ops, before
    :func:`per_gpu_op`), by each op's sharding: row ops end in an all-reduce (or reduce-scatter +
    all-gather with sequence parallelism), the embedding in an all-reduce, the LM head in an
    all-gather of the logits (inference) or the vocabulary-parallel cross-entropy's three [tokens]
    fp32 all-reduces (training); routed row ops add the EP dispatch and combine all-to-alls."""
    wide, gathered = wire_bytes(wl)
    a = wide / par.cp  # a context-parallel rank holds 1/c of the tokens
    g = gathered / par.cp
    # dispatch + combine: the combine sends the experts' 16-bit outputs; the dispatch the tokens, in 8 bits where a
    # system quantizes them first (DeepSeek-V3 §3.3.3: "quantize the activation before MoE up-projections into FP8 and
    # then apply dispatch components"; its combine stays BF16)
    a2a_bytes = ((gathered if par.ep_fp8_dispatch else wide) + wide) / 2 / par.cp
    t, e, ea, et = par.tp, par.ep, par.attn_ep, par.expert_tp  # without folding ea = e and et = t
    sp = par.sequence_parallel and t > 1
    f_layers = (stage_layers if stage_layers is not None else layers_per_stage(cfg, par)) / cfg.layers
    tp_link = par.link("tp", hw) if t > 1 else None
    etp_link = par.link("tp", hw, et) if et > 1 else None  # the expert TP ranks are neighbours, as the TP ones
    ep_link = par.all_to_all_link("ep", hw) if e > 1 else None
    k = max(1, cfg.routed_per_token)  # expert runs per token
    out: list[Collective | None] = []
    for o in ops:
        if o.name == "shared_down_proj":
            continue  # summed with the routed experts' output before the MoE block's one all-reduce (vLLM)
        if o.shard == "row":
            runs = o.count * f_layers / (k if o.routed else 1)  # a routed MLP reduces once per layer
            # the tokens the group's ranks hold: one EP group's for a routed op (its expert TP ranks' share of them),
            # one attention replica's otherwise; without folding both are m / e over t ranks
            size = o.m * o.n * a / (e if o.routed else ea)
            gt, glink = (et, etp_link) if o.routed else (t, tp_link)
            if gt > 1:
                if sp:
                    out.append(_coll("reduce_scatter", o.name, "tp", gt, size, runs, glink,
                                     Text(N_("sequence parallel"))))
                    out.append(_coll("all_gather", o.name, "tp", gt, size * g / a, runs, glink,
                                     Text(N_("sequence parallel: gathers the next block's input"))))
                else:
                    out.append(_coll("all_reduce", o.name, "tp", gt, size, runs, glink,
                                     Text(N_("row-parallel output (Megatron g)"))))
            if o.routed and e > 1:
                a2a = o.m / ea / t * k * o.n * a2a_bytes  # each rank sends its own (sequence-parallel) share
                out.append(_coll("all_to_all", o.name, "ep", e, a2a, 2 * runs, ep_link,
                                 Text(N_("dispatch + combine: {k} copies of each token"), k=k)))
        elif o.shard == "vocab" and t > 1:
            if not o.is_gemm:
                out.append(_coll("reduce_scatter" if sp else "all_reduce", o.name, "tp", t, o.m * o.n * a / ea,
                                 o.count, tp_link, Text(N_("vocabulary-parallel embedding output"))))
            elif training:
                out.append(_coll("all_reduce", o.name, "tp", t, o.m / (ea * par.cp) * 4, 3 * o.count, tp_link,
                                 Text(N_("vocabulary-parallel cross-entropy: max, predicted logit, sum of exp "
                                         "([tokens] fp32)"))))
            else:
                out.append(_coll("all_gather", o.name, "tp", t, o.m * o.n * a / ea, o.count, tp_link,
                                 Text(N_("the logits of every computed position, gathered"))))
    return [c for c in out if c is not None]


def pipeline_send(cfg: ModelConfig, tokens: float, steps: int, wl: Workload, par: Parallel, hw: Hardware,
                  *, count_per_step: int = 1) -> Collective | None:
    """The activations one stage sends the next: tokens × hidden per step (hyper-connections: every stream; ÷ t with
    sequence parallelism)."""
    if par.pp == 1:
        return None
    size = tokens / (par.attn_ep * par.cp) * cfg.residual_width * wire_bytes(wl)[0]
    if par.sequence_parallel and par.tp > 1:
        size /= par.tp
    return _coll("send_recv", "stage boundary", "pp", 2, size, steps * count_per_step, par.link("pp", hw),
                 Text(N_("activations to the next stage and gradients back")) if count_per_step == 2 else
                 Text(N_("activations to the next stage")))


# ----- a phase on the GPUs ----------------------------------------------------------------------

def _stage_of(op: Op) -> str:
    """Which pipeline stage a vocab op sits on: the embedding on the first, the LM head (and the training
    loss) on the last."""
    if op.name == "cross_entropy":
        return "last"
    if op.shard != "vocab":
        return "every"
    return "last" if op.is_gemm else "first"


@dataclass(frozen=True)
class ParallelPhase(OpSums):
    """One phase (prefill or decode) on the GPUs.

    ``total`` is the whole job's exact op list (FLOPs as FlopCounterMode counts them); ``ops`` one GPU's
    share on the busiest pipeline stage over every micro-batch, timed on one device; ``collectives``
    what that GPU sends. ``time_s = compute_s + communication_s + bubble_s`` when not overlapped.
    """

    name: str
    total: PhaseTotals
    ops: tuple[Op, ...]
    collectives: tuple[Collective, ...]
    compute_s: float
    communication_s: float
    bubble_s: float
    time_s: float
    microbatches: int
    stage_periods: int
    overlap: bool

    @property
    def flops(self) -> int:
        """The whole job's GEMM FLOPs (exact)."""
        return self.total.flops

    @property
    def other_flops(self) -> int:
        return self.total.other_flops

    @property
    def macs(self) -> int:
        return self.total.macs

    @property
    def bytes(self) -> float:
        return self.total.bytes

    @property
    def per_gpu_flops(self) -> int:
        return sum(o.flops for o in self.gemm_ops)

    @property
    def collective_s(self) -> float:
        """Every collective's time summed (before overlap)."""
        return sum(c.time_s for c in self.collectives)

    @property
    def gemm_share_of_flops(self) -> float | None:
        """The whole job's GEMM share of FLOPs."""
        return self.total.gemm_share_of_flops

    def comm_by_op(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for c in self.collectives:
            out[c.after] = out.get(c.after, 0.0) + c.time_s
        return out

    def to_dict(self) -> dict:
        """The whole job's exact counts (``flops``, ``bytes``, ``job_ops``), one GPU's timed ops (``ops``),
        the collectives and the times."""
        d = self.total.to_dict()
        d.update({"time_s": self.time_s, "compute_s": self.compute_s, "communication_s": self.communication_s,
                  "bubble_s": self.bubble_s, "collective_s": self.collective_s, "overlap": self.overlap,
                  "microbatches": self.microbatches, "gemm_time_s": self.gemm_time_s,
                  "other_time_s": self.other_time_s, "gemm_share_of_time": self.gemm_share_of_time,
                  "per_gpu_flops": self.per_gpu_flops, "job_ops": d["ops"], "ops": [o.to_dict() for o in self.ops],
                  "collectives": [c.to_dict() for c in self.collectives]})
        return d


def _scaled(op: Op, times: int) -> Op:
    if times == 1:
        return op
    return replace(op, flops=op.flops * times, weight_bytes=op.weight_bytes * times, act_bytes=op.act_bytes * times,
                   kv_bytes=op.kv_bytes * times, count=op.count * times, time_s=op.time_s * times,
                   compute_s=op.compute_s * times, memory_s=op.memory_s * times)


def _scaled_coll(c: Collective, times: float) -> Collective:
    return replace(c, count=c.count * times, time_s=c.time_s * times)


def _period(compute: float, comm: float, overlap: bool) -> float:
    return max(compute, comm) if overlap else compute + comm


def microbatches(phase: str, batch: int, par: Parallel) -> int:
    """Pipeline micro-batches of a replica's ``batch``: the given number, else p (at most the batch)."""
    if par.pp == 1:
        return 1
    m = par.microbatches or par.pp
    return max(1, min(m, batch))


def replica_batch(batch: int, par: Parallel) -> int:
    """Sequences the busiest data-parallel replica serves: ceil(B / d)."""
    return -(-batch // par.dp)


def phase(cfg: ModelConfig, wl: Workload, hw: Hardware, par: Parallel, which: str,
          efficiency: float = 1.0, whole: PhaseTotals | None = None) -> ParallelPhase:
    """Prefill or decode of ``wl`` (B sequences in all) on ``par``'s GPUs: per-GPU ops, collectives, time."""
    if which not in ("prefill", "decode"):
        raise InputError(N_("phase must be prefill or decode, got {which!r}"), which=which)
    par = par.inference()
    dtype = wl.act_dtype
    if hw.peak(dtype) is None:
        raise hw.missing_peak_error(dtype)
    rb = replica_batch(wl.batch, par)
    m = microbatches(which, rb, par)
    mb = -(-rb // m)
    wl_mb = replace(wl, batch=mb)
    if whole is None:
        whole = _whole_phase(cfg, wl, which)
    if which == "decode" and wl.new_tokens == 0:
        return ParallelPhase(which, whole, (), (), 0.0, 0.0, 0.0, 0.0, m, 0, par.overlap)
    stage_l = layers_per_stage(cfg, par)

    def share(o: Op) -> Op:  # (a micro-batch's mb sequences over the attention's data replicas: whole ones each)
        return per_gpu_op(o, cfg, par, stage_layers=stage_l, sequences=mb)

    if which == "prefill":
        raw = list(whole.ops) if wl_mb == wl else prefill_ops(cfg, wl_mb) + prefill_other_ops(cfg, wl_mb)
        timed = [time_op(share(o), hw, dtype, efficiency) for o in raw]
        steps, tokens = 1, wl_mb.prefill_tokens
    else:
        raw = list(whole.ops) if wl_mb == wl else decode_ops(cfg, wl_mb) + decode_other_ops(cfg, wl_mb)
        timed = decode_timed(cfg, wl_mb, hw, dtype, efficiency, per_gpu=share)
        steps, tokens = wl.new_tokens, wl_mb.batch
    colls = forward_collectives(raw, cfg, wl_mb, par, hw, stage_layers=stage_l)
    send = pipeline_send(cfg, tokens, steps, wl_mb, par, hw)
    stages = ("first", "last") if par.pp > 1 else ("every",)
    best = None
    for st in stages:
        keep = [i for i, o in enumerate(raw) if _stage_of(o) in ("every", st) or par.pp == 1]
        names = {raw[i].name for i in keep}
        ops_s = [timed[i] for i in keep]
        coll_s = [c for c in colls if c.after in names]
        if send is not None and st != "last":
            coll_s.append(send)
        tc = sum(o.time_s for o in ops_s)
        tm = sum(c.time_s for c in coll_s)
        period = _period(tc, tm, par.overlap)
        if best is None or period > best[0]:
            best = (period, tc, tm, ops_s, coll_s)
    period, tc, tm, ops_s, coll_s = best
    periods = (m + par.pp - 1) if which == "prefill" else max(m, par.pp)
    exposed = max(0.0, tm - tc) if par.overlap else tm
    compute_s, comm_s = m * tc, m * exposed
    bubble_s = (periods - m) * period
    return ParallelPhase(which, whole, tuple(_scaled(o, m) for o in ops_s),
                         tuple(_scaled_coll(c, m) for c in coll_s), compute_s, comm_s,
                         bubble_s, compute_s + comm_s + bubble_s, m, periods, par.overlap)


def _whole_phase(cfg: ModelConfig, wl: Workload, which: str) -> PhaseTotals:
    return PhaseTotals(which, tuple(phase_ops(cfg, wl, which)))

