"""Where does the time go? Profile a Llama-style transformer block with torch.profiler.

The block (per layer, pre-norm, no biases, random normal weights)::

    h   = x + Wo · attention(rope(Wq · rms(x)), rope(Wk · rms(x)), Wv · rms(x))
    out = h + Wdown · (silu(Wgate · rms(h)) ⊙ Wup · rms(h))

Attention uses grouped-query attention (GQA): ``kv_heads`` key/value heads are
shared by ``heads / kv_heads`` query heads each — it shrinks the K/V projections
(and a KV cache), not the attention products. ``attention="eager"`` runs the two
attention products as plain matmuls (dense S×S, causal mask added afterwards, as
an eager forward pass executes them); ``"sdpa"`` calls
``torch.nn.functional.scaled_dot_product_attention`` (a fused kernel on a GPU).

How the time is split (no double counting): ``torch.profiler`` records every
aten op with its children (``aten::linear`` → ``aten::matmul`` → ``aten::mm``).
Each op is charged only its *self* time — on a CPU the op's own wall time minus
its children's; on CUDA the GPU kernels the op itself launched — so the rows add
up to the total exactly. An op is a GEMM when its name is one of ``GEMM_OPS``
(the matmul family, whatever level it was recorded at); fused attention
(``FUSED_ATTENTION_OPS``) counts as GEMM time too, because its work is the two
attention GEMMs, and its FLOPs are filled in from the shapes (the profiler does
not count them). The share is compared with the article's target of 80 %.

Beside the measurement: ``predict`` — the estimator's view of the same block
(``gemmlib.llm.accounting``'s per-GEMM FLOPs, bytes and roofline time; the block's own
GEMM list through ``gemmlib.core.flops`` if the estimator is absent), plus the
element-wise rest at memory bandwidth, both derated by one efficiency. torch is
imported only inside the functions that run it.
"""

from __future__ import annotations

import json
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from gemmlib.core import format as fmt
from gemmlib.core.ceilings import find_hardware
from gemmlib.core.dtypes import dtype_bytes, get_dtype
from gemmlib.core.errors import InputError
from gemmlib.core.flops import DEFAULT_EFFICIENCY
from gemmlib.core.hardware import Hardware, get_hardware
from gemmlib.core.i18n import N_, Text
from gemmlib.core.machine import match_catalogue
from gemmlib.core.results import BenchResult, unsupported
from gemmlib.core.targets import GEMM_TARGET
from gemmlib.llm.accounting import block_ops, gemm_share, layer_ops
from gemmlib.llm.config import ModelConfig
from gemmlib.llm.presets import PRESETS
from gemmlib.measure import plan, safety
from gemmlib.measure.monitor import MonitorResult
from gemmlib.measure.spec import BenchSpec

# The matmul family as the profiler names it. Self times make the level irrelevant:
# aten::linear keeps only its own overhead, the aten::mm it calls keeps the product.
GEMM_OPS = frozenset({
    "aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::addbmm", "aten::matmul",
    "aten::linear", "aten::_int_mm", "aten::_scaled_mm", "aten::_scaled_mm_v2", "aten::mv", "aten::addmv",
    "aten::dot", "aten::einsum", "aten::_addmm_activation", "aten::_grouped_mm", "aten::_scaled_grouped_mm",
})
FUSED_ATTENTION_OPS = frozenset({
    "aten::scaled_dot_product_attention", "aten::_scaled_dot_product_flash_attention",
    "aten::_scaled_dot_product_efficient_attention", "aten::_scaled_dot_product_cudnn_attention",
    "aten::_scaled_dot_product_flash_attention_for_cpu", "aten::_flash_attention_forward",
    "aten::_efficient_attention_forward", "aten::_scaled_dot_product_attention_math",
    "aten::_scaled_dot_product_fused_attention_overrideable",
})
UNATTRIBUTED = N_("(GPU work outside any aten op)")  # an op name of its own (a page translates it)

ATTENTION_IMPLS = ("eager", "sdpa")

# Texts of a result (its notes, what its times are, where the prediction comes from): English in the
# data, the CLI and the report; Texts, so a page shows them in its reader's language.
NOTE_MEDIAN = N_("each op's time is its median over {steps} passes")
NOTE_KERNELS_EXCEED = N_("the aten ops' kernel times exceed the device total; shares use the ops' sum")
NOTE_NO_PREDICTION = N_("no prediction: {why}")
NOTE_NOT_ESTIMATED = N_("the run's length could not be estimated beforehand (no catalogue row), so it was not "
                        "checked against the time limit")
NOTE_CPU_OVERHEAD = N_("CPU times include the profiler's per-op overhead, which weighs most on small ops.")
MONITOR_CPU = N_("GPU monitoring applies to CUDA runs; this run is on the CPU, so there is nothing to sample.")
BASIS_GPU, BASIS_CPU = N_("self GPU-kernel time per op"), N_("self CPU time per op")
PREDICTION_SOURCE = N_("gemmlib.llm.accounting: every op of the layer, GEMM and not")
PROFILE_DTYPES = ("fp32", "bf16", "fp16")


def op_kind(name: str) -> str:
    """'gemm', 'attention' (fused attention: GEMM work) or 'other'."""
    if name in GEMM_OPS:
        return "gemm"
    if name in FUSED_ATTENTION_OPS or "scaled_dot_product" in name or "flash_attention" in name:
        return "attention"
    return "other"


def is_gemm_op(name: str) -> bool:
    """True for the matmul family and fused attention (whose work is two GEMMs)."""
    return op_kind(name) != "other"


# --------------------------------------------------------------------------- configuration
@dataclass(frozen=True)
class BlockConfig:
    """A stack of decoder blocks run on ``batch`` × ``seq_len`` tokens.

    ``model`` is the one model configuration (``gemmlib.llm.config.ModelConfig``), usually a
    preset scaled down; ``model.layers`` is how many blocks run. The prediction, the GEMM list and
    the FLOP count all come from ``gemmlib.llm.accounting`` for this model.
    """

    model: ModelConfig
    seq_len: int = 128
    batch: int = 1
    attention: str = "eager"
    dtype: str = "fp32"
    norm_eps: float = 1e-5

    def __post_init__(self) -> None:
        if not isinstance(self.model, ModelConfig):
            raise InputError("a profiled block needs a ModelConfig")
        for name in ("seq_len", "batch"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int):
                raise InputError(f"{name} must be a whole number, got {v!r}")
            if v < 1:
                raise InputError(f"{name} must be at least 1, got {v}")
        m = self.model
        if m.is_moe:
            raise InputError(f"{m.name} is a mixture of experts; the profiler runs dense blocks")
        if not m.learned_positions and m.head_dim % 2:
            raise InputError(N_("head size {head_dim} must be even (rotary embeddings rotate pairs); change hidden or "
                                "heads"), head_dim=m.head_dim)
        if self.attention not in ATTENTION_IMPLS:
            raise InputError(f"attention must be one of {', '.join(ATTENTION_IMPLS)}, got {self.attention!r}")
        dt = get_dtype(self.dtype).name
        if dt not in PROFILE_DTYPES:
            raise InputError(f"the model is built in {', '.join(PROFILE_DTYPES)} (the profiler's and the calibration's "
                             f"formats); {dt} is not supported here")
        object.__setattr__(self, "dtype", dt)

    @classmethod
    def llama(cls, hidden: int = 256, heads: int = 8, kv_heads: int = 0, intermediate: int = 0,
              layers: int = 1, **run: Any) -> BlockConfig:
        """A Llama-style block (RMSNorm, rotary, GQA, SwiGLU, no biases) from its widths.

        ``kv_heads = 0``: as many as ``heads``; ``intermediate = 0``: Llama's rule, 8/3 · hidden
        rounded up to a multiple of 64.
        """
        for name, v in (("hidden", hidden), ("heads", heads), ("layers", layers)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise InputError(f"{name} must be a whole number, got {v!r}")
            if v < 1:
                raise InputError(f"{name} must be at least 1, got {v}")
        for name, v in (("kv_heads", kv_heads), ("intermediate", intermediate)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise InputError(f"{name} must be a whole number ≥ 1 (or 0 for the default), got {v!r}")
        kv = kv_heads or heads
        if hidden % heads:
            raise InputError(N_("hidden ({hidden}) must be a multiple of heads ({heads})"), hidden=hidden, heads=heads)
        if (hidden // heads) % 2:
            raise InputError(N_("head size hidden/heads = {head_dim} must be even (rotary embeddings rotate pairs); "
                                "change hidden or heads"), head_dim=hidden // heads)
        if kv > heads or heads % kv:
            raise InputError(N_("kv_heads ({kv}) must divide heads ({heads}) (grouped-query attention shares each K/V "
                                "head among a whole group of query heads)"), kv=kv, heads=heads)
        ffn = intermediate or 64 * math.ceil(8 * hidden / 3 / 64)
        model = ModelConfig(layers=layers, hidden=hidden, heads=heads, kv_heads=kv, ffn=ffn, vocab=1,
                            name="llama-style block")
        return cls(model, **run)

    # The block's shapes, read from its model.
    @property
    def hidden(self) -> int:
        return self.model.hidden

    @property
    def heads(self) -> int:
        return self.model.heads

    @property
    def kv_heads(self) -> int:
        return self.model.kv_heads

    @property
    def head_dim(self) -> int:
        return self.model.head_dim

    @property
    def intermediate(self) -> int:
        return self.model.ffn

    @property
    def layers(self) -> int:
        return self.model.layers

    @property
    def tokens(self) -> int:
        return self.batch * self.seq_len

    @property
    def causal_products(self) -> bool:
        """True when the attention products skip the masked half: fused causal SDPA (flash kernels skip
        the key blocks above the diagonal); eager attention multiplies the dense S×S scores, then masks."""
        return self.attention == "sdpa"

    @property
    def accounting_attention(self) -> str:
        """The accounting's name for this attention: eager, or fused (SDPA)."""
        return "eager" if self.attention == "eager" else "fused"

    def with_(self, **kw: Any) -> BlockConfig:
        """A copy with run fields (seq_len, batch, attention, dtype) or model fields changed.

        ``intermediate`` names the model's ``ffn``; changing ``hidden`` or ``heads`` alone keeps
        the other widths, so give every width that must change together.
        """
        run = {k: kw.pop(k) for k in list(kw) if k in {"seq_len", "batch", "attention", "dtype", "norm_eps"}}
        if "intermediate" in kw:
            kw["ffn"] = kw.pop("intermediate")
        model = self.model
        if kw:
            if "head_dim" not in kw and ("hidden" in kw or "heads" in kw) and model.head_dim * model.heads == \
                    model.hidden:
                kw["head_dim"] = 0  # derived again from the new hidden / heads
            model = model.replace(**kw)
        return replace(self, model=model, **run)

    def to_dict(self) -> dict:
        return {"model": self.model.name, "hidden": self.hidden, "heads": self.heads, "kv_heads": self.kv_heads,
                "head_dim": self.head_dim, "intermediate": self.intermediate, "mlp": self.model.mlp,
                "norm": self.model.norm, "layers": self.layers, "seq_len": self.seq_len, "batch": self.batch,
                "attention": self.attention, "dtype": self.dtype}


def _runs_as_a_block(m: ModelConfig) -> bool:
    """A preset the profiler's Llama/GPT-style block reproduces: dense, head_dim = hidden / heads, no MLA,
    no qk-norm, two norms per layer, no parallel block (a sliding window does not change a prefill)."""
    return (not m.is_moe and not m.is_mla and m.qk_norm == "none" and m.norms_per_layer == 2
            and not m.parallel_block and m.norm in ("rms", "layer") and not m.attention_sinks
            and m.head_dim * m.heads == m.hidden and m.v_head_dim == m.head_dim)


def _not_a_block(m) -> str:
    """Why the profiler's block does not run preset ``m`` (the first thing it lacks)."""
    for lacks, why in ((m.is_moe, "a mixture of experts"), (m.is_mla, "multi-head latent attention"),
                       (m.qk_norm != "none", "q/k norms"), (m.attention_sinks, "attention sinks"),
                       (m.parallel_block, "a parallel attention/MLP block"),
                       (m.norms_per_layer != 2 or m.norm not in ("rms", "layer"), "its norms"),
                       (m.head_dim * m.heads != m.hidden or m.v_head_dim != m.head_dim, "a head size other than "
                                                                                       "hidden / heads")):
        if lacks:
            return why
    return "its layout"


def presets() -> dict[str, dict[str, Any]]:
    """Model name -> {hidden, heads, kv_heads, intermediate, layers, source}: the estimator's presets the
    profiler's block reproduces (a mixture of experts, MLA or qk-norm is not a block it runs)."""
    return {name: dict(hidden=m.hidden, heads=m.heads, kv_heads=m.kv_heads, intermediate=m.ffn, layers=m.layers,
                       source=m.source)
            for name, m in PRESETS.items() if _runs_as_a_block(m)}


def preset_config(name: str, scale: int = 16, *, seq_len: int = 128, batch: int = 1, layers: int = 1,
                  attention: str = "eager", dtype: str = "fp32", scale_vocab: bool = False) -> BlockConfig:
    """A preset scaled down by ``scale``: hidden, head size and intermediate ÷ scale; heads and kv_heads kept.

    Keeping the head counts keeps the GQA ratio and the attention's shape (S×S per head);
    the head size shrinks by the same factor. ``layers`` is how many blocks to run (a few
    are enough: every layer is identical). ``scale_vocab``: the vocabulary ÷ ``scale`` too (a whole
    model with its embedding and LM head, scaled to fit).
    """
    key = next((k for k in presets() if _squash(k) == _squash(name)), None)
    if key is None:
        other = next((k for k in PRESETS if _squash(k) == _squash(name)), None)
        if other is not None:  # the estimator's preset, not a block this harness builds
            raise InputError(f"{other} is an estimate preset this benchmark's Llama/GPT-style block does not build "
                             f"({_not_a_block(PRESETS[other])}); choose one of: {', '.join(presets())}")
        raise InputError(f"unknown preset {str(name)[:60]!r}; choose one of: {', '.join(presets())}")
    if isinstance(scale, bool) or not isinstance(scale, int) or scale < 1:
        raise InputError(f"scale must be a whole number ≥ 1, got {scale!r}")
    m = PRESETS[key]
    if m.hidden % (scale * m.heads) or m.ffn % scale or m.head_dim % scale:
        raise InputError(f"{key} cannot be scaled down by {scale}: hidden {m.hidden} / {scale} must "
                         f"stay a multiple of its {m.heads} heads; try a power of two up to "
                         f"{m.head_dim // 2}")
    model = m.replace(layers=layers, hidden=m.hidden // scale, ffn=m.ffn // scale, head_dim=m.head_dim // scale,
                      vocab=max(1, m.vocab // scale) if scale_vocab else m.vocab,
                      sliding_window=0, layer_types="", name=key if scale == 1 else f"{key} ÷ {scale}")
    return BlockConfig(model, seq_len=seq_len, batch=batch, attention=attention, dtype=dtype)


def _squash(name: str) -> str:
    return str(name).strip().lower().replace("-", "").replace("_", "").replace(" ", "")


# --------------------------------------------------------------------------- counting (no torch)
def predicted_gemm_flops(cfg: BlockConfig) -> int:
    """Exact GEMM FLOPs of the whole stack's forward pass, as its kernels execute them.

    Eager attention multiplies the dense S×S scores (what FlopCounterMode reports); the fused
    causal SDPA kernel computes only the lower triangle with its diagonal (``cfg.causal_products``).
    """
    ops = layer_ops(cfg.model, cfg.seq_len, batch=cfg.batch, causal=cfg.causal_products, dtype=cfg.dtype)
    return cfg.layers * sum(o.flops for o in ops)


@dataclass(frozen=True)
class Prediction:
    hardware: str
    dtype: str
    efficiency: float
    gemm_flops: float  # per forward pass of the stack
    other_flops: float
    gemm_time_s: float
    other_time_s: float
    rows: tuple[dict, ...]  # one per GEMM / element-wise op of one layer
    source: str = ""  # where the figures come from

    @property
    def flop_share(self) -> float:
        return self.gemm_flops / (self.gemm_flops + self.other_flops)

    @property
    def time_share(self) -> float:
        return self.gemm_time_s / (self.gemm_time_s + self.other_time_s)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["flop_share"], d["time_share"] = self.flop_share, self.time_share
        d["rows"] = list(self.rows)
        return d


def predict(cfg: BlockConfig, hw: Hardware | str, efficiency: float = DEFAULT_EFFICIENCY) -> Prediction:
    """The estimator's view of the block: GEMM share of FLOPs and of roofline time on ``hw``.

    Every op of one layer from ``gemmlib.llm.accounting.block_ops`` — the GEMMs at
    max(FLOPs/peak, bytes/bandwidth), the element-wise rest (norms, rotary, softmax, activation,
    residual adds) at its bytes — derated by ``efficiency``, times the layers. Launch overheads
    are ignored, which is why small blocks measure far below this prediction.
    """
    if isinstance(hw, str):
        hw = get_hardware(hw)
    if not 0 < efficiency <= 1:
        raise InputError(f"efficiency must be in (0, 1], got {efficiency}")
    ops = block_ops(cfg.model, cfg.seq_len, hw, batch=cfg.batch, layers=1, attention=cfg.accounting_attention,
                    dtype=cfg.dtype, efficiency=efficiency, causal=cfg.causal_products)
    rows = []
    for op in ops:
        if op.is_gemm:
            shape = f"{op.count}×{op.m}×{op.n}×{op.k}" if op.count > 1 else f"{op.m}×{op.n}×{op.k}"
        else:
            shape = ""
        rows.append({"op": op.name, "kind": "gemm" if op.is_gemm else "other", "shape": shape,
                     "flops": float(op.flops), "time_s": op.time_s, "bound": op.bound})
    sh = gemm_share(ops)
    n = cfg.layers
    return Prediction(hw.name, cfg.dtype, efficiency, n * sh["gemm_flops"], n * sh["other_flops"],
                      n * sh["gemm_time_s"], n * sh["other_time_s"], tuple(rows),
                      PREDICTION_SOURCE)


def hardware_for(device: str, name: str = "") -> Hardware:
    """The catalogue row matching a device name ("NVIDIA H200" -> H200 SXM); the CPU row for a CPU, with the ceilings
    measured on this machine's CPU when there are some (``ceilings.cpu_row``: the page's FLOPs and Roofline use the
    same), else its placeholder figures.

    A GPU that is not in the catalogue gets the ceilings measured on it ("NAME (measured)") when
    there are some; otherwise an InputError saying it is not in the catalogue — never another
    GPU's figures (an H200 NVL is not an H200 SXM).
    """
    if device != "cuda":
        from gemmlib.core.ceilings import cpu_row

        return cpu_row()[0]
    hw, note = match_catalogue(name)
    if hw is not None:
        return hw
    measured = find_hardware("cuda", name)
    if measured is not None:
        return measured
    raise InputError(f"{note}; choose a catalogue GPU for the prediction")


# --------------------------------------------------------------------------- results
@dataclass
class OpStat:
    """One profiler row (an op name with one set of input shapes), per forward pass of the stack."""

    name: str
    shapes: str
    calls: float
    time_s: float
    share: float
    kind: str  # "gemm" | "attention" | "other"
    flops: float

    @property
    def is_gemm(self) -> bool:
        return self.kind != "other"

    @property
    def tflops(self) -> float | None:
        return self.flops / self.time_s / 1e12 if self.flops and self.time_s > 0 else None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["is_gemm"], d["tflops"] = self.is_gemm, self.tflops
        return d


@dataclass
class ProfileResult:
    config: BlockConfig
    device: str
    device_name: str
    steps: int
    time_basis: str  # what the times are: self CPU time or self GPU-kernel time
    total_time_s: float  # per forward pass, the sum of all rows
    gemm_time_s: float
    gemm_flops: float  # GEMM FLOPs per forward pass, as the profiler attributes them
    predicted_gemm_flops: int  # gemmlib's exact count for the same config
    wall_s: float  # wall-clock seconds of the profiled passes, per pass (includes profiler overhead)
    ops: list[OpStat]
    prediction: Prediction | None = None
    monitor: MonitorResult | None = None
    trace_path: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def gemm_share(self) -> float:
        return self.gemm_time_s / self.total_time_s if self.total_time_s > 0 else 0.0

    @property
    def meets_target(self) -> bool:
        return self.gemm_share >= GEMM_TARGET

    @property
    def gemm_tflops(self) -> float | None:
        return self.gemm_flops / self.gemm_time_s / 1e12 if self.gemm_time_s > 0 else None

    def top_ops(self, n: int = 15) -> list[OpStat]:
        return sorted(self.ops, key=lambda o: o.time_s, reverse=True)[:n]

    def grouped(self) -> list[OpStat]:
        """The rows merged by op name (all input shapes together), largest time first."""
        merged: dict[str, OpStat] = {}
        for o in self.ops:
            m = merged.get(o.name)
            if m is None:
                merged[o.name] = OpStat(o.name, "(all shapes)", o.calls, o.time_s, o.share, o.kind, o.flops)
            else:
                m.calls += o.calls
                m.time_s += o.time_s
                m.share += o.share
                m.flops += o.flops
        return sorted(merged.values(), key=lambda o: o.time_s, reverse=True)

    def by_kind(self) -> dict[str, float]:
        out = {"gemm": 0.0, "attention": 0.0, "other": 0.0}
        for o in self.ops:
            out[o.kind] += o.time_s
        return out

    def to_dict(self, top: int | None = None) -> dict:
        ops = self.top_ops(top) if top else sorted(self.ops, key=lambda o: o.time_s, reverse=True)
        return {
            "config": self.config.to_dict(), "device": self.device, "device_name": self.device_name,
            "steps": self.steps, "time_basis": self.time_basis, "total_time_s": self.total_time_s,
            "gemm_time_s": self.gemm_time_s, "gemm_share": self.gemm_share, "target": GEMM_TARGET,
            "meets_target": self.meets_target, "gemm_flops": self.gemm_flops,
            "predicted_gemm_flops": self.predicted_gemm_flops, "gemm_tflops": self.gemm_tflops,
            "wall_s": self.wall_s, "ops": [o.to_dict() for o in ops],
            "prediction": self.prediction.to_dict() if self.prediction else None,
            "monitor": self.monitor.to_dict() if self.monitor is not None else None,
            "trace_path": self.trace_path, "notes": list(self.notes),
        }


# --------------------------------------------------------------------------- the torch block
def torch_dtype(name: str) -> Any:
    import torch

    return {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[get_dtype(name).name]


# The element-wise pieces of a decoder layer, one function each: the block below runs them, and the
# calibration (gemmlib.measure.calibrate) times them alone on the same shapes.
def rms_norm(x: Any, weight: Any, eps: float) -> Any:
    """RMSNorm as Llama computes it: in fp32, cast back, times the weight."""
    import torch

    xf = x.float()
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return xf.to(x.dtype) * weight


def norm(x: Any, weight: Any, bias: Any, kind: str, eps: float) -> Any:
    """The model's norm: RMSNorm (``kind="rms"``) or LayerNorm with a bias (``"layer"``)."""
    import torch.nn.functional as F

    if kind == "layer":
        return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)
    return rms_norm(x, weight, eps)


def rope(x: Any, cos: Any, sin: Any) -> Any:
    """Rotary embedding, rotate-half form; x: (B, heads, S, hd), cos/sin: (S, hd/2)."""
    import torch

    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


def repeat_kv(x: Any, groups: int) -> Any:
    """Eager GQA: every K/V head copied to the ``groups`` query heads it serves."""
    return x.repeat_interleave(groups, dim=1)


def attention_probs(scores: Any, mask: Any, scale: float) -> Any:
    """Eager attention between its two products: scale, additive mask, softmax in fp32, cast back."""
    import torch

    s = scores * scale
    return torch.softmax((s + mask).float(), dim=-1).to(scores.dtype)


def mlp_activation(gate: Any, up: Any, kind: str) -> Any:
    """silu(gate) · up for a gated MLP; tanh-GELU of up for a plain one (``gate`` unused)."""
    import torch.nn.functional as F

    if kind == "gated":
        return F.silu(gate) * up
    return F.gelu(up, approximate="tanh")


def rope_tables(head_dim: int, positions: int, device: str, dtype: Any) -> tuple[Any, Any]:
    """cos and sin of the rotary angles for ``positions`` positions: (positions, head_dim/2) each."""
    import torch

    inv = 1.0 / (10000.0 ** (torch.arange(0, head_dim // 2, dtype=torch.float32) * 2 / head_dim))
    ang = torch.outer(torch.arange(positions, dtype=torch.float32), inv)
    return ang.cos().to(device=device, dtype=dtype), ang.sin().to(device=device, dtype=dtype)


def causal_mask(positions: int, device: str, dtype: Any) -> Any:
    """The additive causal mask: 0 on and below the diagonal, −inf above."""
    import torch

    return torch.full((positions, positions), float("-inf")).triu(1).to(device=device, dtype=dtype)


def build_block(cfg: BlockConfig, device: str = "cpu", seed: int = 0, max_len: int | None = None) -> Any:
    """A ``torch.nn.Module``: ``cfg.layers`` decoder blocks of ``cfg.model`` with random normal weights.

    Pre-norm (RMSNorm, or LayerNorm with a bias), GQA attention with rotary embeddings (none for a
    model with learned positions), a gated SwiGLU or a plain GELU MLP, and the model's biases —
    the same ops ``gemmlib.llm.accounting`` counts for one layer.

    ``stack(x)`` runs a prefill of ``x`` (batch, S, hidden) from position 0. With a KV cache
    (``stack.new_cache(batch)``, room for ``max_len`` positions, default ``cfg.seq_len``),
    ``stack(x, cache, pos)`` writes the new tokens' keys and values at ``pos`` and attends over
    every cached one: a prefill at ``pos = 0``, a decode step with one token at ``pos = S + i``.
    """
    import torch
    import torch.nn.functional as F
    from torch import nn

    m = cfg.model
    dt = torch_dtype(cfg.dtype)
    # Drawn where they live: a whole model's weights on a GPU are gigabytes, slow to draw on the host.
    gen = torch.Generator(device=device).manual_seed(seed)
    positions = int(max_len or cfg.seq_len)

    def weight(out_f: int, in_f: int) -> nn.Parameter:
        w = torch.randn(out_f, in_f, generator=gen, device=device) / math.sqrt(in_f)
        return nn.Parameter(w.to(dtype=dt), requires_grad=False)

    def bias(n: int, on: bool) -> nn.Parameter | None:
        if not on:
            return None
        b = 0.02 * torch.randn(n, generator=gen, device=device)
        return nn.Parameter(b.to(dtype=dt), requires_grad=False)

    class Norm(nn.Module):
        def __init__(self, dim: int) -> None:
            super().__init__()
            self.weight = nn.Parameter(torch.ones(dim, device=device, dtype=dt), requires_grad=False)
            self.bias = bias(dim, m.norm == "layer")

        def forward(self, x: Any) -> Any:
            return norm(x, self.weight, self.bias, m.norm, cfg.norm_eps)

    # SDPA handles GQA itself from torch 2.5 (no K/V copies), as the accounting's fused attention assumes.
    sdpa_gqa = "enable_gqa" in (F.scaled_dot_product_attention.__doc__ or "")

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            h, q, kv, f = m.hidden, m.q_dim, m.kv_dim, m.ffn
            self.attn_norm, self.mlp_norm = Norm(h), Norm(h)
            self.wq, self.wk, self.wv, self.wo = weight(q, h), weight(kv, h), weight(kv, h), weight(h, q)
            self.bq, self.bk, self.bv = bias(q, m.qkv_bias), bias(kv, m.qkv_bias), bias(kv, m.qkv_bias)
            self.bo = bias(h, m.o_bias)
            if m.mlp == "gated":
                self.w_gate, self.b_gate = weight(f, h), bias(f, m.mlp_bias)
            self.w_up, self.b_up = weight(f, h), bias(f, m.mlp_bias)
            self.w_down, self.b_down = weight(h, f), bias(h, m.mlp_bias)

        def forward(self, x: Any, cos: Any, sin: Any, mask: Any, cache: Any = None, pos: int = 0) -> Any:
            b, s, _ = x.shape
            hd, nh, nkv = m.head_dim, m.heads, m.kv_heads
            y = self.attn_norm(x)
            q = F.linear(y, self.wq, self.bq).view(b, s, nh, hd).transpose(1, 2)
            k = F.linear(y, self.wk, self.bk).view(b, s, nkv, hd).transpose(1, 2)
            v = F.linear(y, self.wv, self.bv).view(b, s, nkv, hd).transpose(1, 2)
            if cos is not None:
                c, sn = cos[pos:pos + s], sin[pos:pos + s]
                q, k = rope(q, c, sn), rope(k, c, sn)
            if cache is not None:  # write the new keys/values, attend over every cached one
                ck, cv = cache
                ck[:, :, pos:pos + s] = k
                cv[:, :, pos:pos + s] = v
                k, v = ck[:, :, :pos + s], cv[:, :, :pos + s]
            keys = k.shape[2]
            causal = s == keys and s > 1  # a prefill from position 0; a decode step sees every key
            if cfg.attention == "sdpa":
                extra = {"enable_gqa": nkv != nh} if sdpa_gqa else {}
                if nkv != nh and not sdpa_gqa:
                    k, v = repeat_kv(k, nh // nkv), repeat_kv(v, nh // nkv)
                attn_mask = None if causal or s == 1 else mask[pos:pos + s, :keys]
                o = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=causal, **extra)
            else:
                if nkv != nh:  # GQA: each K/V head serves heads/kv_heads query heads
                    k, v = repeat_kv(k, nh // nkv), repeat_kv(v, nh // nkv)
                p = attention_probs(torch.matmul(q, k.transpose(-2, -1)), mask[pos:pos + s, :keys],
                                    1.0 / math.sqrt(hd))
                o = torch.matmul(p, v)
            o = o.transpose(1, 2).reshape(b, s, nh * hd)
            x = x + F.linear(o, self.wo, self.bo)
            z = self.mlp_norm(x)
            gate = F.linear(z, self.w_gate, self.b_gate) if m.mlp == "gated" else None
            a = mlp_activation(gate, F.linear(z, self.w_up, self.b_up), m.mlp)
            return x + F.linear(a, self.w_down, self.b_down)

    class Stack(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.blocks = nn.ModuleList(Block() for _ in range(m.layers))
            self.max_len = positions
            if m.learned_positions:
                self.cos = self.sin = None  # positions were added to the embedding, before the blocks
            else:
                cos, sin = rope_tables(m.head_dim, positions, device, dt)
                self.register_buffer("cos", cos, persistent=False)
                self.register_buffer("sin", sin, persistent=False)
            self.register_buffer("mask", causal_mask(positions, device, dt), persistent=False)

        def new_cache(self, batch: int) -> list[tuple[Any, Any]]:
            """Room for ``max_len`` keys and values per layer: (batch, kv_heads, max_len, head_dim) each."""
            shape = (batch, m.kv_heads, self.max_len, m.head_dim)
            return [(torch.zeros(shape, device=device, dtype=dt), torch.zeros(shape, device=device, dtype=dt))
                    for _ in self.blocks]

        def forward(self, x: Any, cache: Any = None, pos: int = 0) -> Any:
            if pos + x.shape[1] > self.max_len:
                raise InputError(f"positions {pos}..{pos + x.shape[1] - 1} are past this stack's {self.max_len}")
            for i, blk in enumerate(self.blocks):
                x = blk(x, self.cos, self.sin, self.mask, None if cache is None else cache[i], pos)
            return x

    stack = Stack().eval()
    stack.Norm = Norm  # the model (build_model) adds its final norm of the same kind
    return stack


def build_model(cfg: BlockConfig, device: str = "cpu", seed: int = 0, max_len: int | None = None,
                lm_head: str = "last") -> Any:
    """A whole random-weight decoder: embedding (+ learned positions), ``build_block``'s stack, the
    final norm and the LM head (tied or not) — the ops ``gemmlib.llm.accounting`` counts for a
    prefill and for decode steps.

    ``model(ids, cache, pos)`` returns the logits (of the last position only with ``lm_head="last"``,
    as generation needs; of every position with ``"all"``). ``model.new_cache(batch)``.
    """
    import torch
    import torch.nn.functional as F
    from torch import nn

    if lm_head not in ("last", "all"):
        raise InputError(f"lm_head must be 'last' or 'all', got {lm_head!r}")
    m = cfg.model
    dt = torch_dtype(cfg.dtype)
    stack = build_block(cfg, device, seed, max_len)
    gen = torch.Generator(device=device).manual_seed(seed + 7)

    def table(rows: int) -> nn.Parameter:
        t = torch.randn(rows, m.hidden, generator=gen, device=device) / math.sqrt(m.hidden)
        return nn.Parameter(t.to(dt), requires_grad=False)

    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = table(m.vocab)
            self.positions = table(m.learned_positions) if m.learned_positions else None
            self.stack = stack
            self.final_norm = stack.Norm(m.hidden)
            self.head = self.embed if m.tied_embeddings else table(m.vocab)

        def new_cache(self, batch: int) -> list[tuple[Any, Any]]:
            return self.stack.new_cache(batch)

        def forward(self, ids: Any, cache: Any = None, pos: int = 0) -> Any:
            x = F.embedding(ids, self.embed)
            if self.positions is not None:
                where = torch.arange(pos, pos + ids.shape[1], device=ids.device)
                x = x + F.embedding(where, self.positions)
            x = self.stack(x, cache, pos)
            if lm_head == "last":
                x = x[:, -1:]
            return F.linear(self.final_norm(x), self.head)

    return Model().eval()


def make_input(cfg: BlockConfig, device: str = "cpu", seed: int = 1) -> Any:
    """Random normal activations (batch, seq_len, hidden)."""
    import torch

    g = torch.Generator(device="cpu").manual_seed(seed)
    x = torch.randn(cfg.batch, cfg.seq_len, cfg.hidden, generator=g)
    return x.to(device=device, dtype=torch_dtype(cfg.dtype))


def memory_needed(cfg: BlockConfig) -> float:
    """Bytes the run allocates at its peak (weights + a few activations + the S×S scores), roughly."""
    b = dtype_bytes(cfg.dtype)
    m = cfg.model
    h, f, q, kv = m.hidden, m.ffn, m.q_dim, m.kv_dim
    weights = m.layers * (2 * h * q + 2 * h * kv + m.mlp_mats * h * f + 2 * h) * b
    acts = cfg.tokens * (4 * h + 2 * q + 3 * f) * b
    scores = cfg.batch * cfg.heads * cfg.seq_len ** 2 * (3 * b + 8)  # scores, fp32 softmax, probs
    return weights + acts + scores


# --------------------------------------------------------------------------- profiling
def _shapes_str(shapes: Any) -> str:
    parts = []
    for s in shapes or []:
        if isinstance(s, (list, tuple)) and s and all(isinstance(d, int) for d in s):
            parts.append("×".join(str(d) for d in s))
    return ", ".join(parts)


def causal_pairs(queries: int, keys: int) -> int:
    """(query, key) pairs a causal mask keeps: SDPA's ``is_causal`` is the top-left lower triangle
    ``ones(L, S).tril()``, so query i sees keys 0..i — Σ min(i + 1, S), S·(S+1)/2 when square."""
    q, k = int(queries), int(keys)
    full = min(q, k)  # rows 0..full-1 keep i + 1 keys, the rest keep all k
    return full * (full + 1) // 2 + (q - full) * k


def _fused_attention_flops(shapes: Any, causal: bool = False) -> float:
    """2 GEMMs of a fused attention from its (q, k, v) shapes: 4·B·H·pairs·hd.

    Dense (pairs = Sq·Sk) unless ``causal``: flash / memory-efficient / cuDNN kernels (and the
    CPU's flash kernel) skip the key blocks a causal mask removes, so they execute the lower
    triangle with its diagonal; counting it dense would read their TFLOP/s up to 2× high.
    """
    try:
        q, k = list(shapes[0]), list(shapes[1])
        if len(q) < 2 or len(k) < 2:
            return 0.0
        batch = math.prod(q[:-2])
        pairs = causal_pairs(q[-2], k[-2]) if causal else q[-2] * k[-2]
        return 4.0 * batch * pairs * q[-1]
    except (IndexError, TypeError, ValueError):
        return 0.0


# Where ``is_causal`` sits among each fused attention op's arguments (aten schemas, torch 2.13).
_IS_CAUSAL_ARG = {
    "aten::scaled_dot_product_attention": 5,  # query, key, value, attn_mask, dropout_p, is_causal, ...
    "aten::_scaled_dot_product_flash_attention": 4,  # query, key, value, dropout_p, is_causal, ...
    "aten::_scaled_dot_product_flash_attention_for_cpu": 4,
    "aten::_scaled_dot_product_efficient_attention": 6,  # q, k, v, attn_bias, compute_log_sumexp, dropout_p, is_causal
    "aten::_scaled_dot_product_cudnn_attention": 6,
}


def _is_causal(e: Any) -> bool:
    """Whether a recorded fused attention ran with ``is_causal=True`` (needs record_shapes=True)."""
    idx = _IS_CAUSAL_ARG.get(e.name)
    vals = getattr(e, "concrete_inputs", None) or []
    return idx is not None and idx < len(vals) and vals[idx] is True


def _gemm_flops_from_shapes(name: str, shapes: Any) -> float:
    """2·M·N·K for 2-D products the profiler does not count itself (_int_mm, _scaled_mm, …)."""
    try:
        a, b = list(shapes[0]), list(shapes[1])
        if name.endswith(("mm", "mm_v2")) and len(a) == 2 and len(b) == 2 and a[1] == b[0]:
            return 2.0 * a[0] * a[1] * b[1]
    except (IndexError, TypeError):
        pass
    return 0.0


PASS_LABEL = "gemmlib.pass#"  # record_function label around each profiled forward pass


def _pass_index(e: Any) -> int | None:
    cur = e
    while cur is not None:
        if cur.name.startswith(PASS_LABEL):
            try:
                return int(cur.name[len(PASS_LABEL):])
            except ValueError:
                return None
        cur = cur.cpu_parent
    return None


def _has_attention_ancestor(e: Any) -> bool:
    cur = e.cpu_parent
    while cur is not None:
        if op_kind(cur.name) == "attention":
            return True
        cur = cur.cpu_parent
    return False


def _has_gemm_descendant(e: Any) -> bool:
    stack = list(getattr(e, "cpu_children", []) or [])
    while stack:
        c = stack.pop()
        if op_kind(c.name) == "gemm":
            return True
        stack.extend(getattr(c, "cpu_children", []) or [])
    return False


def summarize_events(events: Any, device: str, steps: int = 1) -> tuple[list[OpStat], float, list[str]]:
    """Turn ``prof.events()`` into rows that add up to the total (per pass), without double counting.

    CPU: each op's self CPU time. CUDA: the GPU kernels each op launched itself (kernels
    recorded under a runtime call such as cudaLaunchKernel are charged to the nearest aten op
    above it); kernel time outside any aten op is one more row, so the rows still add up.
    When the passes were labelled ``gemmlib.pass#<i>`` (``record_function``), each row's time
    is its median over the passes — one pass stalled by a busy machine does not skew it — and
    the total is the sum of the rows; otherwise the mean per pass.
    """
    from torch.autograd import DeviceType

    notes: list[str] = []
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    on_gpu = device == "cuda"
    gpu_total = 0.0

    def owner(e: Any) -> Any:
        cur = e
        while cur is not None and not cur.name.startswith("aten::"):
            if cur.name.startswith(PASS_LABEL):
                return e
            cur = cur.cpu_parent
        return cur if cur is not None else e

    def dev_time(e: Any) -> float:
        return e.self_device_time_total if hasattr(e, "self_device_time_total") else e.self_cuda_time_total

    for e in events:
        if e.name.startswith(PASS_LABEL) or getattr(e, "is_async", False):
            continue
        if getattr(e, "is_user_annotation", False):
            continue
        if e.device_type != DeviceType.CPU:
            if on_gpu:  # a kernel / memcpy / memset on the device: the ground truth of GPU time
                gpu_total += dev_time(e)
            continue
        if on_gpu:
            t = dev_time(e)
            if t <= 0 and not e.name.startswith("aten::"):
                continue
            e_own = owner(e)
        else:
            t = e.self_cpu_time_total
            e_own = e
        key = (e_own.name, _shapes_str(getattr(e_own, "input_shapes", None)))
        row = rows.setdefault(key, {"calls": 0.0, "time_us": 0.0, "flops": 0.0, "per_pass": {}})
        if e_own is e:
            row["calls"] += 1
            fl = float(getattr(e, "flops", 0) or 0)
            kind = op_kind(e.name)
            leaf = not any(op_kind(c.name) != "other" for c in getattr(e, "cpu_children", []) or [])
            if fl == 0 and kind == "attention":
                # Count a fused attention once, at its outermost op, whose inputs are (B, H, S, hd);
                # the kernels' own entry points below it may take (B, S, H, hd).
                # The math fallback runs visible bmm's below it: those carry the FLOPs then.
                if not _has_attention_ancestor(e) and not _has_gemm_descendant(e):
                    fl = _fused_attention_flops(getattr(e, "input_shapes", None), _is_causal(e))
            elif fl == 0 and not leaf:
                pass  # the GEMM child below is counted; counting here too would double it
            elif fl == 0 and kind == "gemm":
                fl = _gemm_flops_from_shapes(e.name, getattr(e, "input_shapes", None))
            row["flops"] += fl
        row["time_us"] += t
        idx = _pass_index(e)
        if idx is not None:
            row["per_pass"][idx] = row["per_pass"].get(idx, 0.0) + t
    labelled = steps > 1 and all(
        set(r["per_pass"]) <= set(range(steps)) and sum(r["per_pass"].values()) >= 0.999 * r["time_us"]
        for r in rows.values())
    per_pass_us: dict[tuple[str, str], float] = {}
    for key, r in rows.items():
        if labelled:
            per_pass_us[key] = statistics.median([r["per_pass"].get(i, 0.0) for i in range(steps)])
        else:
            per_pass_us[key] = r["time_us"] / steps
    if on_gpu:
        rest = (gpu_total - sum(r["time_us"] for r in rows.values())) / steps
        if rest > 1e-3 * max(gpu_total / steps, 1e-9):
            rows[(UNATTRIBUTED, "")] = {"calls": 0.0, "flops": 0.0}
            per_pass_us[(UNATTRIBUTED, "")] = rest
        elif rest < -1e-3 * max(gpu_total / steps, 1e-9):
            notes.append(NOTE_KERNELS_EXCEED)
    if labelled:
        notes.append(Text(NOTE_MEDIAN, steps=steps))
    total_us = sum(per_pass_us.values())
    ops = [
        OpStat(name=name, shapes=shp, calls=r["calls"] / steps, time_s=per_pass_us[(name, shp)] * 1e-6,
               share=per_pass_us[(name, shp)] / total_us if total_us > 0 else 0.0, kind=op_kind(name),
               flops=r["flops"] / steps)
        for (name, shp), r in rows.items() if per_pass_us[(name, shp)] > 0 or r["flops"] > 0
    ]
    ops.sort(key=lambda o: o.time_s, reverse=True)
    return ops, total_us * 1e-6, notes


WARMUP_PASSES = 2  # unprofiled passes before the profiled ones (a profiler run's; its plan counts them)


def profile_stages(warmup: int = WARMUP_PASSES) -> int:
    """The steps a profile reports, in order: building the block, each warm-up pass, the profiled passes (with the
    profiler's start, stop and trace), summing the ops. ``plan_profile`` gives each its share of the run's time."""
    return warmup + 3


def profile_block(cfg: BlockConfig, device: str = "cpu", *, steps: int = 3, warmup: int = WARMUP_PASSES,
                  trace_path: str | Path | None = None, monitor: bool = True,
                  hardware: Hardware | str | None = None, efficiency: float = DEFAULT_EFFICIENCY, seed: int = 0,
                  progress: Callable[[float | None, str], None] | None = None, deadline: Any = None) -> ProfileResult:
    """Run ``steps`` forward passes of the block under torch.profiler and split their time.

    ``trace_path``: also write the Chrome trace JSON there (open it in https://ui.perfetto.dev).
    ``monitor``: sample the GPU with NVML while profiling (a plain statement when there is none).
    ``hardware``: the catalogue row for the prediction (default: matched to the device's name).
    ``deadline`` (a ``safety.Deadline``; the report passes its own): refused when it has passed, and
    the run's estimate is checked against what is left of it as against the server's limit.
    ``progress(fraction, text)``: at the start of each of its ``profile_stages(warmup)`` steps, ``fraction`` =
    the step's index / their number (building the block, each warm-up pass, profiling, summing the ops): the run
    box reads it as that step of ``plan_profile``'s plan, whose ``step_s`` weigh them by their planned time;
    nothing is said between the profiled passes, so the profile and its wall time hold only the block.
    """
    from gemmlib.measure import harness, safety
    from gemmlib.measure.monitor import GpuMonitor, nvml_index_for_torch_device

    say = progress or (lambda _frac, _msg: None)
    device = harness.require_device(device)
    if device not in ("cpu", "cuda"):
        raise InputError("the profiler supports cpu and cuda devices")
    for name, v in (("steps", steps), ("warmup", warmup)):
        if isinstance(v, bool) or not isinstance(v, int) or v < (1 if name == "steps" else 0):
            raise InputError(f"{name} must be a whole number ≥ {1 if name == 'steps' else 0}, got {v!r}")
    lim = safety.limits()
    safety.check_dims(lim, hidden=cfg.hidden, intermediate=cfg.intermediate, seq_len=cfg.seq_len,
                       tokens=cfg.tokens)
    safety.check_memory(memory_needed(cfg), device, lim)

    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    dev_name = harness.device_name(device)
    notes: list[str] = []
    try:
        hw: Hardware | None = hardware if isinstance(hardware, Hardware) else (
            get_hardware(hardware) if hardware else hardware_for(device, dev_name))
    except InputError as e:
        if hardware:  # a row the caller named that does not exist
            raise
        hw = None
        notes.append(Text(NOTE_NO_PREDICTION, why=_reason(e)))
    limit_s = lim.time_limit_s
    if deadline is not None:
        if deadline.expired():
            raise InputError(deadline.reason())
        limit_s = min(limit_s, deadline.remaining())
    if hw is not None:
        check_time(cfg, device, dev_name, warmup + steps, limit_s, hw)
    else:
        notes.append(NOTE_NOT_ESTIMATED)
    activities = [ProfilerActivity.CPU]
    if device == "cuda":
        activities.append(ProfilerActivity.CUDA)
    with safety.oom_guard(device), torch.inference_mode():
        say(0.0, Text(N_("building 1 block: hidden {hidden}, {heads} heads ({kv_heads} K/V), MLP {intermediate}, "
                         "{batch}×{seq_len} tokens, {dtype}") if cfg.layers == 1 else
                      N_("building {layers} blocks: hidden {hidden}, {heads} heads ({kv_heads} K/V), MLP "
                         "{intermediate}, {batch}×{seq_len} tokens, {dtype}"), layers=cfg.layers, hidden=cfg.hidden,
                 heads=cfg.heads, kv_heads=cfg.kv_heads, intermediate=cfg.intermediate, batch=cfg.batch,
                 seq_len=cfg.seq_len, dtype=cfg.dtype))
        block = build_block(cfg, device, seed)
        x = make_input(cfg, device, seed + 1)
        stages = profile_stages(warmup)
        for i in range(warmup):  # one step each: the run box says which ("step 3 of 5 — warming up: pass 2 of 2")
            say((1 + i) / stages, Text(N_("warming up (1 pass)") if warmup == 1 else
                                       N_("warming up: pass {i} of {n}"), i=i + 1, n=warmup))
            t_pass = time.perf_counter()
            block(x)
            harness.synchronize(device)
            if deadline is not None:  # this machine's speed now: refuse what cannot finish, not be killed
                check_passes_left(time.perf_counter() - t_pass, warmup - 1 - i + steps, deadline, first=i == 0)
        mon_index = nvml_index_for_torch_device(torch.cuda.current_device()) if device == "cuda" else 0
        say((warmup + 1) / stages, Text(N_("profiling 1 forward pass on {name}") if steps == 1 else
                      N_("profiling {n} forward passes on {name}"), n=steps, name=dev_name))
        with GpuMonitor(index=mon_index, interval_s=0.02, enabled=monitor and device == "cuda") as mon:
            with profile(activities=activities, record_shapes=True, with_flops=True) as prof:
                t0 = time.perf_counter()
                for i in range(steps):
                    with record_function(f"{PASS_LABEL}{i}"):
                        block(x)
                harness.synchronize(device)
                wall = (time.perf_counter() - t0) / steps
        if monitor and device != "cuda":
            mon.result.reason = MONITOR_CPU
    if trace_path is not None:
        trace_path = Path(trace_path)
        trace_path.parent.mkdir(parents=True, exist_ok=True)
        prof.export_chrome_trace(str(trace_path))
    say((warmup + 2) / stages, Text(N_("summing the profiled ops")))
    ops, total, more = summarize_events(prof.events(), device, steps)
    notes += more
    if device == "cpu":
        notes.append(NOTE_CPU_OVERHEAD)
    gemm_time = sum(o.time_s for o in ops if o.is_gemm)
    gemm_flops_measured = sum(o.flops for o in ops if o.is_gemm)
    pred = None
    if hw is not None:
        try:
            pred = predict(cfg, hw, efficiency)
        except InputError as e:
            notes.append(Text(NOTE_NO_PREDICTION, why=_reason(e)))
    return ProfileResult(cfg, device, dev_name, steps,
                         BASIS_GPU if device == "cuda" else BASIS_CPU,
                         total, gemm_time, gemm_flops_measured, predicted_gemm_flops(cfg), wall, ops,
                         pred, mon.result, str(trace_path) if trace_path is not None else None, notes)


def _reason(e: Exception) -> str:
    """An exception's message as a text a page can translate (an InputError keeps its template)."""
    if isinstance(e, InputError):
        return Text(e.template, **e.params) if e.params else Text(e.template)
    return str(e)


PASSES_CAP = N_("a forward pass took {pass_s:.3g} s here now: the {passes} passes left would take about {seconds:.3g} s, "
                "above what is left of this server's limit of {limit:g} s per run (GEMM_TIME_LIMIT_S); choose "
                "fewer steps or layers, a smaller batch or a shorter sequence")
PROFILED_FACTOR = 1.2  # a pass under torch.profiler (record_shapes, with_flops) against one without


def check_passes_left(pass_s: float, passes: int, deadline: Any, first: bool = False) -> None:
    """InputError (``PASSES_CAP``) when ``passes`` more passes of ``pass_s`` each (under the profiler)
    would outlast ``deadline``: the run stops with what it measured said, instead of being killed at
    its hard limit with nothing (issue 26 item 8). The first pass pays one-time costs: it is
    refused on only when half its time would not fit."""
    need = pass_s * (0.5 if first else 1.0) * PROFILED_FACTOR * passes
    left = deadline.remaining()
    if need > left:
        raise InputError(PASSES_CAP, pass_s=pass_s, passes=passes, seconds=pass_s * PROFILED_FACTOR * passes,
                         limit=deadline.seconds)


def check_time(cfg: BlockConfig, device: str, device_name: str, passes: int, limit_s: float,
               hw: Hardware | None = None) -> float:
    """Refuse (InputError) a run the roofline says would outlast ``limit_s``; return the estimate.

    The estimate is generous on purpose: the device's catalogue row (``hw``, default
    :func:`hardware_for`) at 25 % efficiency (a CPU row is a rough placeholder), times the passes.
    """
    est = predict(cfg, hw or hardware_for(device, device_name), 0.25)
    seconds = passes * (est.gemm_time_s + est.other_time_s)
    if seconds > limit_s:
        raise InputError(N_("this block would take about {seconds:.3g} s for {passes} passes on {device}, above this "
                            "server's limit of {limit:g} s (GEMM_TIME_LIMIT_S); choose a smaller hidden size, sequence "
                            "length, batch or fewer layers"), seconds=seconds, passes=passes, device=device,
                         limit=limit_s)
    return seconds


def validate_trace(path: str | Path) -> int:
    """Load a Chrome trace file; return its number of events (raises ValueError when invalid)."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    events = data.get("traceEvents") if isinstance(data, dict) else data
    if not isinstance(events, list):
        raise ValueError(f"{path} is not a Chrome trace: no traceEvents list")
    return len(events)


# --------------------------------------------------------------------------- results for the report
def _product_bytes(shapes: str, calls: float, dtype: str) -> float:
    """Minimum bytes of a (batched) product from its shapes string "a×b, b×c" (0 when not a product)."""
    try:
        a, b = (tuple(int(d) for d in s.split("×")) for s in shapes.split(", ")[:2])
    except ValueError:
        return 0.0
    if len(a) < 2 or len(b) < 2 or a[-1] != b[-2]:
        return 0.0
    batch = math.prod(a[:-2]) if len(a) > 2 else 1
    m, k, n = a[-2], a[-1], b[-1]
    return calls * dtype_bytes(dtype) * (batch * m * k + math.prod(b[:-2] or (1,)) * k * n + batch * m * n)


def block_benchmark(cfg: BlockConfig, device: str = "cpu", *, min_run_time: float = 0.3,
                    seed: int = 0, flush_l2: bool = True, window: Any = None) -> Any:
    """Time one forward pass of the stack with the harness (median, p20/p80): a ``BenchResult``.

    FLOPs are the block's GEMM FLOPs; bytes the minimum traffic: every weight read once,
    the input read and the output written once. ``flush_l2=False``: no L2 flush between
    passes on a GPU (for monitoring, see :func:`monitored_benchmark`). ``window``: told when the
    timed passes start and stop (``harness.time_callable``).
    """
    from gemmlib.measure import harness

    device = harness.require_device(device)
    safety.check_memory(memory_needed(cfg) * 2, device)
    import torch

    b = dtype_bytes(cfg.dtype)
    h, f, kv = cfg.hidden, cfg.intermediate, cfg.kv_heads * cfg.head_dim
    nbytes = cfg.layers * (2 * h * h + 2 * h * kv + 3 * h * f + 2 * h) * b + 2 * cfg.tokens * h * b
    shape = {"layers": cfg.layers, "hidden": h, "heads": cfg.heads, "kv_heads": cfg.kv_heads,
             "intermediate": f, "batch": cfg.batch, "seq_len": cfg.seq_len, "attention": cfg.attention,
             "label": f"block h{h} s{cfg.seq_len}×{cfg.batch} L{cfg.layers}"}
    res = BenchResult("profiler", "block forward", device, harness.device_name(device), cfg.dtype, shape,
                              float(predicted_gemm_flops(cfg)), float(nbytes),
                              reason=("a whole Llama-style block" if cfg.layers == 1 else "whole Llama-style blocks") + ", GEMM FLOPs only")
    with safety.oom_guard(device), torch.inference_mode():
        block = build_block(cfg, device, seed)
        xs = [(make_input(cfg, device, seed + 1 + i),) for i in range(3)]
        res.set_timing(harness.time_callable(block, device=device, args_list=xs, min_run_time=min_run_time,
                                             flush_l2=flush_l2, window=window))
    res.extra["l2_flush"] = bool(flush_l2 and device == "cuda")
    return res


def monitored_benchmark(cfg: BlockConfig, device: str = "cpu", *, min_run_time: float = 1.0,
                        seed: int = 0, interval_s: float = 0.05) -> tuple[Any, Any]:
    """Time the block's forward pass while NVML samples the GPU: ``(BenchResult, MonitorResult)``.

    Monitoring needs the GPU's own busy time, so the timing runs **without** the L2 flush that
    ``do_bench`` adds before every call (a 256 MB memset between passes would be sampled as memory
    traffic and inflate NVML's utilization figures against the 75 % / 60 % targets): CUDA events
    around back-to-back passes. NVML samples the GPU torch runs on (its NVML index found through
    the PCI address, which differs from torch's under ``CUDA_VISIBLE_DEVICES``), and only while the
    timed passes run: building the block, drawing its inputs and the warm-up are left out of the
    averages.
    """
    from gemmlib.measure import harness
    from gemmlib.measure.monitor import GpuMonitor, nvml_index_for_torch_device

    device = harness.require_device(device)
    index = nvml_index_for_torch_device() if device == "cuda" else 0
    with GpuMonitor(index=index, interval_s=interval_s, enabled=device == "cuda", defer=True) as mon:
        res = block_benchmark(cfg, device, min_run_time=min_run_time, seed=seed, flush_l2=False, window=mon)
    res.extra["nvml_index"] = index if device == "cuda" else None
    if device != "cuda":
        mon.result.reason = N_("This benchmark ran on the CPU: GPU monitoring has nothing to sample.")
    return res, mon.result


def op_results(res: ProfileResult, n: int = 10) -> list[Any]:
    """The top GEMM rows of a profile as ``BenchResult`` rows (time = the op's median self time per pass)."""

    out = []
    for o in [o for o in res.top_ops(len(res.ops)) if o.is_gemm and o.flops > 0][:n]:
        out.append(BenchResult(
            "profiler", f"{o.name} [{o.shapes}]", res.device, res.device_name, res.config.dtype,
            {"label": o.shapes, "op": o.name, "calls_per_pass": o.calls}, o.flops,
            _product_bytes(o.shapes, o.calls, res.config.dtype), median_s=o.time_s,
            reason=f"torch.profiler {res.time_basis}, median over {res.steps} passes (profiler overhead "
                   "included; no spread)",
            extra={"share": o.share, "kind": o.kind}))
    return out


def report_configs(device: str, quick: bool) -> list[BlockConfig]:
    """What the report profiles: a real-width Llama-3-8B block on a GPU, a scaled-down one on a CPU."""
    if device == "cuda":
        if quick:
            return [preset_config("llama-3-8b", 1, seq_len=2048, layers=2, dtype="bf16")]
        return [preset_config("llama-3-8b", 1, seq_len=4096, layers=4, dtype="bf16"),
                preset_config("llama-3-8b", 1, seq_len=4096, layers=4, dtype="bf16", attention="sdpa")]
    if quick:
        return [preset_config("llama-3-8b", 16, seq_len=128, layers=1)]
    return [preset_config("llama-3-8b", 8, seq_len=256, layers=2),
            preset_config("llama-3-8b", 8, seq_len=256, layers=2, attention="sdpa")]


def markdown_summary(res: ProfileResult, top: int = 10) -> str:
    c = res.config
    lines = [
        f"**{c.layers} Llama-style block{'' if c.layers == 1 else 's'}** on {res.device_name} ({c.dtype}): hidden {c.hidden}, {c.heads} heads "
        f"/ {c.kv_heads} K/V heads, MLP {c.intermediate}, {c.batch}×{c.seq_len} tokens, {c.attention} attention.",
        "",
        f"- GEMM share of time: **{res.gemm_share:.1%}** — {'meets' if res.meets_target else 'below'} the "
        f"article's {GEMM_TARGET:.0%} target ({res.time_basis}; {fmt.duration(res.total_time_s)} per pass).",
        f"- GEMM FLOPs per pass: profiler {fmt.count(round(res.gemm_flops))}, gemmlib count "
        f"{fmt.count(res.predicted_gemm_flops)}.",
    ]
    if res.prediction is not None:
        p = res.prediction
        lines.append(f"- Predicted on {p.hardware} at {p.efficiency:.0%} efficiency — {p.source}: GEMM share "
                     f"{p.time_share:.1%} of time, {p.flop_share:.1%} of FLOPs.")
    lines += ["", "| op | shapes | calls | time per pass | share | GEMM | FLOPs | TFLOP/s |",
              "|---|---|---|---|---|---|---|---|"]
    for o in res.top_ops(top):
        lines.append(f"| `{o.name}` | {o.shapes or '—'} | {o.calls:g} | {fmt.duration(o.time_s)} | {o.share:.1%} | "
                     f"{'yes' if o.is_gemm else 'no'} | {fmt.count(round(o.flops))} | {fmt.number(o.tflops, 3)} |")
    mon = res.monitor
    if mon is not None:
        if mon.available and mon.samples:
            s = mon.summary()
            parts = [f"{len(mon.samples)} samples"]
            for key, label in (("sm_util", "SM utilization"), ("mem_util", "memory bandwidth utilization")):
                if key in s:
                    parts.append(f"{label} mean {s[key]['mean']:.0f}% (≥ target in "
                                 f"{s[key + '_meets_target']:.0%} of samples)")
            if "power_w" in s:
                parts.append(f"power up to {s['power_w']['max']:.0f} W")
            lines += ["", "GPU monitor (NVML): " + "; ".join(parts) + "."]
        else:
            lines += ["", f"GPU monitor: {mon.reason}"]
    lines += ["", *[f"*{n}*" for n in res.notes]]
    return "\n".join(lines)


def report_section(device: str, quick: bool, out_dir: Path,
                   progress: Callable[[float, str], None] | None = None, deadline: Any = None) -> dict:
    """The profiler part of ``python -m gemmlib report``: where a block's time goes, on this device;
    ``deadline``: the report's (each profile and each timed forward pass is refused past it)."""
    from gemmlib.charts import optional_chart

    out_dir = Path(out_dir)
    cfgs = report_configs(device, quick)
    md: list[str] = [
        "A Llama-style block (GQA attention, gated MLP, random weights) profiled with torch.profiler; each op is "
        "charged its self time, so the rows add up to the total; the matmul family and fused attention count "
        "as GEMM.", ""]
    results: list[Any] = []
    charts: dict[str, Any] = {}
    traces: list[str] = []
    for i, cfg in enumerate(cfgs):
        def say(frac: float | None, text: str, _i: int = i) -> None:
            if progress:
                progress((_i + 0.8 * (frac or 0.0)) / len(cfgs), text)  # the profile: 80 % of each block's share

        trace = out_dir / f"profile_trace_{cfg.attention}.json"
        try:
            res = profile_block(cfg, device, steps=3 if quick else 5, trace_path=trace, progress=say,
                                deadline=deadline)
        except InputError as e:
            results.append(unsupported("profiler", f"block ({cfg.attention})", device, cfg.dtype,
                                               {"hidden": cfg.hidden, "seq_len": cfg.seq_len}, str(e)))
            md += [f"*Skipped the {cfg.attention} block: {e}*", ""]
            continue
        traces.append(trace.name)
        md += [f"### {cfg.attention} attention", "", markdown_summary(res), "",
               f"Chrome trace: `{trace.name}` (open it in https://ui.perfetto.dev).", ""]
        say(1.0, Text(N_("timing the whole forward pass with the harness")))
        try:
            if deadline is not None and deadline.expired():
                raise InputError(deadline.reason())
            results.append(block_benchmark(cfg, device, min_run_time=0.1 if quick else 0.3))
        except InputError as e:
            results.append(unsupported("profiler", "block forward", device, cfg.dtype,
                                               {"hidden": cfg.hidden}, str(e)))
        results += op_results(res)
        def _charts(res: ProfileResult = res, kind: str = cfg.attention) -> dict:
            from gemmlib.charts import profile as charts_profile  # altair: only for the pictures
            out = {f"share_{kind}": charts_profile.share_chart(res),
                   f"top_ops_{kind}": charts_profile.top_ops_chart(res)}
            for name, ch in charts_profile.monitor_charts(res.monitor).items():
                out[f"monitor_{name}_{kind}"] = ch
            return out
        charts.update(optional_chart(_charts) or {})
    if progress:
        progress(1.0, Text(N_("profiler done")))
    return {"title": "Profiler: where a transformer block's time goes", "results": results,
            "markdown": "\n".join(md), "charts": charts, "traces": traces}


# --------------------------------------------------------------------------- the specs
MAX_PROFILE_LAYERS = 64
MAX_PROFILE_STEPS = 50
# Per-op cost of eager PyTorch under the profiler (launch + record), seconds: small blocks are
# bound by it, not by their FLOPs.
PROFILE_OP_OVERHEAD_S = {"cpu": 10e-6, "cuda": 8e-6}


def _check_layers(cfg: BlockConfig) -> None:
    if not 1 <= cfg.layers <= MAX_PROFILE_LAYERS:
        raise InputError(N_("layers must be from 1 to {most} (every layer is the same; a few smooth the numbers), "
                            "got {layers}"), most=MAX_PROFILE_LAYERS, layers=cfg.layers)


@dataclass(frozen=True)
class ProfileConfig:
    """A profiler run: ``steps`` passes of ``block`` under torch.profiler, the prediction on
    ``hardware`` (default: the device's catalogue row) at ``efficiency``, the GPU monitored."""

    block: BlockConfig
    device: str = "cpu"
    steps: int = 3
    monitor: bool = True
    hardware: str | None = None
    efficiency: float = DEFAULT_EFFICIENCY
    trace_path: str | None = None

    def __post_init__(self) -> None:
        plan.check_device(self.device)
        if isinstance(self.steps, bool) or not isinstance(self.steps, int) or not 1 <= self.steps <= MAX_PROFILE_STEPS:
            raise InputError(N_("profiled passes must be a whole number from 1 to {most}, got {steps!r}"),
                             most=MAX_PROFILE_STEPS, steps=self.steps)
        _check_layers(self.block)
        if self.hardware:
            get_hardware(self.hardware)  # an unknown name is refused here, not in the worker
        eff = self.efficiency
        if isinstance(eff, bool) or not isinstance(eff, (int, float)) or not (math.isfinite(eff) and 0 < eff <= 1):
            raise InputError(N_("efficiency must be in (0, 1], got {value!r}"), value=eff)


@dataclass(frozen=True)
class BlockBenchConfig:
    """The block's forward pass timed by the harness while NVML samples the GPU."""

    block: BlockConfig
    device: str = "cpu"
    min_run_time: float = 0.3

    def __post_init__(self) -> None:
        plan.check_device(self.device)
        _check_layers(self.block)
        object.__setattr__(self, "min_run_time", plan.check_min_run_time(self.min_run_time))


@dataclass
class BlockBenchResult:
    result: BenchResult
    monitor: MonitorResult | None = None


def _block_bytes(cfg: BlockConfig) -> tuple[float, float, float]:
    """(weights, one layer's activations held in blocks below MMAP_THRESHOLD, the large
    blocks alive at once) of one forward pass of a block stack, in bytes."""
    m = cfg.model
    b = dtype_bytes(cfg.dtype)
    h, f, q, kv = m.hidden, m.ffn, m.q_dim, m.kv_dim
    weights = m.layers * (2 * h * q + 2 * h * kv + m.mlp_mats * h * f + 4 * h) * b
    t = cfg.tokens
    s2 = cfg.batch * cfg.heads * cfg.seq_len ** 2
    # one layer: 6 hidden-wide (norms, projections, residuals), 3 query-wide, 3 K/V-wide and
    # mlp_mats + 1 MLP-wide tensors; eager attention: scores, scaled, masked, softmax (fp32) and
    # the probabilities in the run's dtype
    tensors = [t * h * b] * 6 + [t * q * b] * 3 + [t * kv * b] * 3 + [t * f * b] * (m.mlp_mats + 1)
    if cfg.attention == "eager":
        tensors += [s2 * b] * 3 + [s2 * 4.0] + ([s2 * b] if b != 4 else [])
    small = sum(x for x in tensors if x < plan.MMAP_THRESHOLD)
    large = sum(x for x in tensors if x >= plan.MMAP_THRESHOLD)
    mask = 2.0 * cfg.seq_len ** 2 * max(b, 4)  # the causal mask and its fp32 original
    return float(weights + mask), float(small), float(large)


def _ops_per_layer(cfg: BlockConfig) -> int:
    return 40 if cfg.attention == "eager" else 34


def _largest_gemm(cfg: BlockConfig) -> float:
    return max(2.0 * cfg.tokens * cfg.hidden * max(cfg.intermediate, cfg.hidden),
               2.0 * cfg.batch * cfg.heads * cfg.seq_len ** 2 * cfg.head_dim)


def _pass_row(cfg: BlockConfig, device: str, **kw: Any) -> plan.Row:
    """One forward pass as the time model sees it: its GEMM FLOPs and every op's launch (what bounds
    small blocks)."""
    return plan.Row(float(predicted_gemm_flops(cfg)), cfg.dtype, "block forward",
                    overhead_s=_ops_per_layer(cfg) * cfg.layers * PROFILE_OP_OVERHEAD_S.get(device, 10e-6), **kw)


def plan_profile(cfg: ProfileConfig, lim: safety.Limits) -> plan.Plan:
    """The weights, the activations the profiled passes leave in the heap, the profiler's own records;
    the warm-up and profiled passes, untimed."""
    blk, dev = cfg.block, cfg.device
    safety.check_dims(lim, hidden=blk.hidden, intermediate=blk.intermediate, seq_len=blk.seq_len, tokens=blk.tokens)
    weights, small, large = _block_bytes(blk)
    # the profiler keeps one record per op and pass (a few hundred bytes each) and exports them
    events = 2e3 * _ops_per_layer(blk) * blk.layers * (cfg.steps + 2)
    # Measured on a CPU: under torch.profiler every pass leaves about one layer's worth of small
    # activation blocks in the heap (the allocator cannot reuse them between the profiler's own
    # records), so they are counted once per pass; large blocks go back to the system.
    held = weights + small * (cfg.steps + 1) + large + events if dev == "cpu" else weights + small + large
    passes = cfg.steps + WARMUP_PASSES
    passes_s, sources = plan.estimate([_pass_row(blk, dev, timed=False, extra_calls=passes)], dev, 1.0,
                                      bench="profiler")
    pass_s = max(0.0, passes_s - plan.ROW_OVERHEAD_S) / passes
    build_s = _weight_count(blk) * BUILD_S_PER_WEIGHT.get(dev, 0.0)
    sum_s = plan.ROW_OVERHEAD_S + _ops_per_layer(blk) * blk.layers * cfg.steps * SUM_S_PER_OP
    seconds = build_s + passes_s + PROFILER_FIXED_S + sum_s
    # The steps profile_block reports (profile_stages): building the block, each warm-up pass, the profiled passes,
    # summing the ops (the result row); the profiler's own start, stop and trace (PROFILER_FIXED_S) are the
    # profiled passes' step. The run box weighs its progress by them: a run whose profiled passes are most of its
    # time is not "40 % done" for most of its life.
    each = [build_s, *[pass_s] * WARMUP_PASSES, pass_s * cfg.steps, sum_s]
    profiling = [0.0] * len(each)
    profiling[-2] = 1.0
    return plan.Plan(bytes=held, host_bytes=events if dev != "cpu" else 0.0, call_flops=_largest_gemm(blk),
                     call_what=plan.BLOCK_GEMM, seconds=seconds, rows=cfg.steps, steps=profile_stages(WARMUP_PASSES),
                     sources=sources, step_s=plan.lay_steps(each, seconds, profiling))


def _weight_count(cfg: BlockConfig) -> int:
    m = cfg.model
    return m.layers * (2 * m.hidden * m.q_dim + 2 * m.hidden * m.kv_dim + m.mlp_mats * m.hidden * m.ffn + 4 * m.hidden)


# Seconds per weight to build a block on a CPU (build_block: torch.randn, ÷ √fan-in, the run's dtype), measured on this
# project's 2-core machine under load: 10–12 ns for 27 and 109 million fp32 weights. A GPU draws its own (≈ 0 here).
BUILD_S_PER_WEIGHT = {"cpu": 10e-9}
# Seconds to sum one op's records of one profiled pass (summarize_events over torch.profiler's events), measured on
# the same machine: 0.04 s for 34 ops × 3 passes, 0.72 s for 34 ops × 2 layers × 20 passes.
SUM_S_PER_OP = 0.5e-3


# torch.profiler's own cost beside the passes: starting it (its first start in a process, which every worker's
# run is, initialises its tracer), collecting its events and summing them (with the trace written). Measured on
# this project's 2-core machines for a 2-layer llama-3-8b ÷ 16 block, 3 passes, with a warm worker: 1.0–1.1 s from
# the press to the result on one machine, 2.4 s on another (there the first profile in a process took 2.1 s, the
# next ones 0.44 and 0.16 s), against 0.1 s of passes (benchmarks/bench_run_estimate.py --buttons): 1.5 s is
# within 2× of both; the passes' own time comes from the time model as for any run.
PROFILER_FIXED_S = 1.5


def plan_block_bench(cfg: BlockBenchConfig, lim: safety.Limits) -> plan.Plan:
    """The weights, one pass's activations and three rotated inputs; one timed row."""
    blk = cfg.block
    safety.check_dims(lim, hidden=blk.hidden, intermediate=blk.intermediate, seq_len=blk.seq_len, tokens=blk.tokens)
    weights, small, large = _block_bytes(blk)
    inputs = 3.0 * blk.tokens * blk.hidden * dtype_bytes(blk.dtype)
    seconds, sources = plan.estimate([_pass_row(blk, cfg.device)], cfg.device, cfg.min_run_time, bench="profiler")
    return plan.Plan(bytes=weights + small + large + inputs, call_flops=_largest_gemm(blk), call_what=plan.BLOCK_GEMM,
                     seconds=seconds, rows=1, sources=sources)


def _run_profile(cfg: ProfileConfig, progress: Any, deadline: safety.Deadline) -> ProfileResult:
    return profile_block(cfg.block, cfg.device, steps=cfg.steps, trace_path=cfg.trace_path, monitor=cfg.monitor,
                         hardware=cfg.hardware, efficiency=cfg.efficiency, progress=progress, deadline=deadline)


def _run_block_bench(cfg: BlockBenchConfig, progress: Any, deadline: safety.Deadline) -> BlockBenchResult:
    progress(None, Text(N_("timing the block with the harness (no L2 flush between passes) while NVML samples "
                           "its GPU")))
    r, mon = monitored_benchmark(cfg.block, cfg.device, min_run_time=cfg.min_run_time)
    return BlockBenchResult(r, mon)


SPEC = BenchSpec("profile", ProfileConfig, plan_profile, _run_profile, ProfileResult, label=N_("a profiler run"),
                 imports=("gemmlib.measure.profiler", "gemmlib.measure.calibrate"), profiler=True)
BLOCK_BENCH_SPEC = BenchSpec("block_bench", BlockBenchConfig, plan_block_bench, _run_block_bench, BlockBenchResult,
                             label=N_("a monitored block benchmark"),
                             imports=("gemmlib.measure.profiler", "gemmlib.measure.calibrate"))
