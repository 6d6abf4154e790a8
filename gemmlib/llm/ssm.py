"""Linear-attention and state-space mixers: Gated DeltaNet (Qwen3-Next), Mamba (Jamba), Mamba-2 (Nemotron-H,
Falcon-H1), LFM2's gated short convolution, MiniMax's lightning attention, Kimi delta attention, RecurrentGemma's
RG-LRU, RWKV-4's time mixing — their parameters, their per-sequence state and the work of a prefill
and of a decode step.

A hybrid model's layers each have a *mixer* (``ModelConfig.attention_kinds``: F / S / C attention, ``L`` Gated
DeltaNet, ``M`` Mamba, ``2`` Mamba-2, ``P`` attention and Mamba-2 side by side as Falcon-H1 runs them, ``V`` LFM2's
short convolution, ``N`` lightning attention, ``K`` Kimi delta attention, ``R`` RG-LRU, ``W`` RWKV's time mixing,
``-`` none).
A mixer layer keeps a fixed state per sequence instead of a KV cache that grows with the context: the last
inputs of its causal convolution and the recurrent (SSM) state. :class:`Mixer` holds the dimensions one family's
config.json gives; :func:`work` lists what one layer does, in either of two conventions:

* ``engine=False`` — the reference: what transformers 5.24's eager PyTorch code multiplies, exactly what
  ``torch.utils.flop_counter.FlopCounterMode`` counts (matmuls and convolutions; ``tests/llm/test_families.py``
  checks each family to the FLOP):

  - the projections (``in_proj`` …, ``out_proj``) are GEMMs;
  - the depthwise causal convolution (``conv1d``) is counted as FlopCounterMode counts a convolution,
    2 · batch · output length · kernel · channels, with the output length of transformers' call: the padded
    length t + k − 1 in a prefill, k + 1 − k + 1 = 2 positions in a decode step (it convolves the k cached
    inputs and the new one);
  - Gated DeltaNet's prefill is ``torch_chunk_gated_delta_rule``: the sequence padded to chunks of 64, per chunk
    and value head Kβ·Kᵀ and Q·Kᵀ (64² · d_k each), the three state products (64 · d_k · d_v) and the
    within-chunk attention times the new values (64² · d_v); the two triangular solves are not counted by
    FlopCounterMode and not here; a decode step is the element-wise recurrence (no matmul);
  - Mamba's scan is the sequential loop of ``mamba_selective_scan``: one state × C matmul per token
    (2 · d_inner · d_state), the rest element-wise;
  - Mamba-2's prefill is ``mamba2_chunk_scan`` (the SSD einsums: C·Bᵀ, the diagonal block times X, the chunk
    states, the inter-chunk recurrence over chunks + 1, C times the states), its decode step one
    state × C batched matmul per head;
  - LFM2's short convolution is in_proj (hidden → B|C|x), the depthwise convolution of B·x, C times its output
    and out_proj: no recurrent state, only the convolution's.

* ``engine=True`` — what a serving engine's kernels (flash-linear-attention, mamba_ssm, vLLM) run: the
  convolution over exactly the new tokens (t outputs), Gated DeltaNet's chunked form as FLA computes it (the
  same products plus the W = A·(βK) and U = A·(βV) products and the inverse of the 64 × 64 triangular system,
  2·64³/3 FLOPs, as matmuls), Mamba's selective scan and Mamba-2's decode as one fused element-wise kernel
  (the C·h product inside it, not a GEMM), Mamba-2's SSD with C·Bᵀ per group rather than per head.

The element-wise work (activations, the recurrence, gated norms) is listed as ``other`` work with its
FLOPs and the elements it reads and writes; its FLOP counts are an estimate (a few FLOPs per element, stated
in each note), not FlopCounterMode's (which counts none). The state is conv state + recurrent state per
sequence and layer: transformers keeps all k last inputs of the convolution, engines k − 1.

This module never imports torch.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_, Text

MIXER_KINDS = ("gated_deltanet", "mamba", "mamba2", "short_conv", "lightning", "kda", "rglru", "rwkv")
# per-layer letters of the mixers (ModelConfig.attention_kinds)
MIXER_LETTERS = {"L": "gated_deltanet", "M": "mamba", "2": "mamba2", "P": "mamba2", "V": "short_conv",
                 "N": "lightning", "K": "kda", "R": "rglru", "W": "rwkv"}
DELTA_CHUNK = 64  # torch_chunk_gated_delta_rule's and FLA's chunk size (not a config key)

_CAP = 10_000_000
# OLMo Hybrid's names for the Gated DeltaNet linears Qwen3.5 calls in_proj_z / _b / _a and out_proj
_APART_NAMES = {"in_proj_z": "g_proj", "in_proj_b": "b_proj", "in_proj_a": "a_proj", "out_proj": "o_proj"}


def _dim(name: str, v, minimum: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise InputError(N_("{name} must be a whole number, got {value!r}"), name=name, value=v)
    if v < minimum or v > _CAP:
        raise InputError(N_("{name} = {value} is out of range ({minimum} to {cap:,})"), name=name, value=v,
                         minimum=minimum, cap=_CAP)
    return v


@dataclass(frozen=True)
class Mixer:
    """One family's linear-attention / state-space mixer.

    ``gated_deltanet``: ``heads`` value heads of ``head_dim``, ``groups`` key heads of ``key_dim``;
    ``mamba``: ``inner`` channels, ``state`` per channel, ``dt_rank``; ``mamba2``: ``heads`` of ``head_dim``
    (inner = heads · head_dim), ``groups`` of B/C with ``state`` each, ``chunk`` of the SSD scan; ``short_conv``
    (LFM2): ``inner`` channels (the hidden size), a convolution of width ``conv``, every linear biased by ``conv_bias``.
    """

    kind: str
    conv: int = 4  # causal convolution kernel
    heads: int = 0
    head_dim: int = 0
    groups: int = 0
    key_dim: int = 0
    state: int = 0
    inner: int = 0
    dt_rank: int = 0
    chunk: int = 0
    conv_bias: bool = False
    in_bias: bool = False  # in_proj bias (Mamba's proj_bias, Mamba-2's use_bias)
    out_bias: bool = False
    norm: bool = True  # a gated RMSNorm over the inner width before out_proj
    bc_norms: bool = False  # Jamba: RMSNorms over dt (dt_rank), B and C (state each)
    split_proj: bool = False  # Qwen3.5: q|k|v, z, b and a as four linears (Qwen3-Next fuses q|k|v|z and b|a)
    qkv_apart: bool = False  # OLMo Hybrid: split_proj's q|k|v stored as q_proj, k_proj and v_proj (z as g_proj)

    def __post_init__(self) -> None:
        if self.kind not in MIXER_KINDS:
            raise InputError(N_("mixer kind must be one of {choices}, got {kind!r}"),
                             choices=", ".join(MIXER_KINDS), kind=self.kind)
        _dim("convolution width", self.conv)
        if self.kind == "gated_deltanet":
            for f in ("heads", "head_dim", "groups", "key_dim"):
                _dim(f"linear attention {f}", getattr(self, f))
            if self.heads % self.groups:
                raise InputError(N_("{heads} linear-attention value heads cannot be shared by {groups} key heads"),
                                 heads=self.heads, groups=self.groups)
        elif self.kind == "mamba":
            for f in ("inner", "state", "dt_rank"):
                _dim(f"mamba {f}", getattr(self, f))
        else:
            for f in ("heads", "head_dim", "groups", "state", "chunk"):
                _dim(f"mamba2 {f}", getattr(self, f))
            if self.heads % self.groups:
                raise InputError(N_("{heads} Mamba-2 heads cannot be split into {groups} groups"),
                                 heads=self.heads, groups=self.groups)
            object.__setattr__(self, "inner", self.heads * self.head_dim)

    # ----- shapes ---------------------------------------------------------------------
    @property
    def conv_channels(self) -> int:
        """Channels of the depthwise convolution (q|k|v for DeltaNet, x for Mamba, x|B|C for Mamba-2)."""
        if self.kind == "gated_deltanet":
            return 2 * self.groups * self.key_dim + self.heads * self.head_dim
        if self.kind == "mamba":
            return self.inner
        return self.inner + 2 * self.groups * self.state

    @property
    def value_width(self) -> int:
        """Width the mixer hands to out_proj."""
        return self.heads * self.head_dim if self.kind == "gated_deltanet" else self.inner

    def linears(self, hidden: int) -> list[tuple[str, int, int, bool]]:
        """(op name, out features, in features, bias) of each linear of one layer, in order."""
        h = hidden
        if self.kind == "gated_deltanet":
            kd, vd = self.groups * self.key_dim, self.heads * self.head_dim
            if self.split_proj:
                return [("in_proj_qkv", 2 * kd + vd, h, False), ("in_proj_z", vd, h, False),
                        ("in_proj_b", self.heads, h, False), ("in_proj_a", self.heads, h, False),
                        ("out_proj", h, vd, False)]
            return [("in_proj_qkvz", 2 * kd + 2 * vd, h, False), ("in_proj_ba", 2 * self.heads, h, False),
                    ("out_proj", h, vd, False)]
        if self.kind == "mamba":
            d = self.inner
            return [("in_proj", 2 * d, h, self.in_bias), ("x_proj", self.dt_rank + 2 * self.state, d, False),
                    ("dt_proj", d, self.dt_rank, True), ("out_proj", h, d, self.out_bias)]
        return [("in_proj", 2 * self.inner + 2 * self.groups * self.state + self.heads, h, self.in_bias),
                ("out_proj", h, self.inner, self.out_bias)]

    def stored(self, hidden: int) -> list[tuple[str, str, int, int, bool]]:
        """(checkpoint module, op name, out features, in features, bias) of each stored linear: one per op, named as
        the op, unless the family stores it otherwise (OLMo Hybrid: q|k|v as three matrices, its own names)."""
        out = []
        for name, o, k, b in self.linears(hidden):
            if self.qkv_apart and name == "in_proj_qkv":  # three matrices serving the one q|k|v op
                kd = self.groups * self.key_dim
                out += [(part, name, rows, k, b) for part, rows in (("q_proj", kd), ("k_proj", kd), ("v_proj", o - 2 * kd))]
            else:
                out.append((_APART_NAMES.get(name, name) if self.qkv_apart else name, name, o, k, b))
        return out

    @property
    def conv_name(self) -> str:
        """The checkpoint's name of the depthwise convolution."""
        return "conv1d"

    def other_params(self) -> dict[str, int]:
        """Parameters of one layer that are not a linear's: the convolution, A, D, dt bias, norms."""
        c = self.conv_channels
        out = {"conv1d": c * self.conv + (c if self.conv_bias else 0)}
        if self.kind == "gated_deltanet":
            out.update(dt_bias=self.heads, A_log=self.heads, norm=self.head_dim)
        elif self.kind == "mamba":
            out.update(A_log=self.inner * self.state, D=self.inner)
            if self.bc_norms:
                out["dt_b_c_norms"] = self.dt_rank + 2 * self.state
        else:
            out.update(dt_bias=self.heads, A_log=self.heads, D=self.heads)
            if self.norm:
                out["norm"] = self.inner
        return out

    def params(self, hidden: int) -> int:
        """Every parameter of one mixer layer."""
        lin = sum(o * i + (o if b else 0) for _, o, i, b in self.linears(hidden))
        return lin + sum(self.other_params().values())

    def matmul_params(self, hidden: int) -> int:
        """Weights a token multiplies (the linears, no biases)."""
        return sum(o * i for _, o, i, _ in self.linears(hidden))

    # ----- the state a sequence keeps ------------------------------------------------------
    def conv_state(self, engine: bool) -> int:
        """Elements of one sequence's convolution state: transformers keeps the last k inputs, engines k − 1."""
        return self.conv_channels * (self.conv - 1 if engine else self.conv)

    @property
    def recurrent_state(self) -> int:
        """Elements of one sequence's recurrent state: d_k × d_v per value head (DeltaNet), d_inner × d_state
        (Mamba), head_dim × d_state per head (Mamba-2)."""
        if self.kind == "gated_deltanet":
            return self.heads * self.key_dim * self.head_dim
        if self.kind == "mamba":
            return self.inner * self.state
        return self.heads * self.head_dim * self.state

    def state_elements(self, engine: bool) -> int:
        return self.conv_state(engine) + self.recurrent_state

    def layer_work(self, gemm, conv: Work, *, hidden: int, rows: int, runs: int, **_) -> list[Work] | None:
        """A mixer's own list of one layer's work, in order (:func:`work` hands it ``gemm(name, n, k)``, which makes
        a projection's Work, and the convolution's), or None for the state-space kinds, whose work :func:`work`
        lists."""
        return None

    def describe(self) -> dict:
        d = {"kind": self.kind, "conv_kernel": self.conv, "conv_channels": self.conv_channels,
             "state_per_sequence_layer": {"conv": self.conv_state(False), "recurrent": self.recurrent_state}}
        if self.kind == "gated_deltanet":
            d.update(value_heads=self.heads, value_head_dim=self.head_dim, key_heads=self.groups,
                     key_head_dim=self.key_dim, chunk=DELTA_CHUNK)
        elif self.kind == "mamba":
            d.update(inner=self.inner, state=self.state, dt_rank=self.dt_rank)
        else:
            d.update(heads=self.heads, head_dim=self.head_dim, groups=self.groups, state=self.state,
                     chunk=self.chunk)
        return d


@dataclass(frozen=True)
class Work:
    """One piece of a mixer layer's work in one run: ``m × k`` by ``k × n`` for a GEMM (``count`` runs summed
    into ``flops``), or element-wise ``other`` work. ``weights`` names the linear whose weights it reads (its
    bytes come from the checkpoint); ``act`` and ``state`` are elements read + written."""

    name: str
    m: int
    n: int
    k: int
    count: int
    flops: int
    act: int
    state: int = 0
    weights: str = ""
    kind: str = "gemm"
    note: str = ""
    kernels: int = 0  # kernel launches the runs take (0: one per GEMM of ``count``); a chunked scan batches its GEMMs


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def work(mx: Mixer, hidden: int, *, batch: int, tokens: int, runs: int, decode: bool, engine: bool) -> list[Work]:
    """What ``runs`` runs of one mixer layer do, each feeding ``tokens`` new tokens per sequence of ``batch``
    (a prefill: the prompt; a decode step: 1), in the reference (``engine=False``) or engine convention."""
    b, t, h = batch, tokens, hidden
    rows = b * t
    out: list[Work] = []

    def gemm(name: str, n: int, k: int, note: str = "") -> Work:
        return Work(name, rows, n, k, runs, 2 * rows * n * k * runs, (rows * k + rows * n) * runs, weights=name,
                    note=note)

    def linear(name: str, n: int, k: int, note: str = "") -> None:
        out.append(gemm(name, n, k, note))

    c = mx.conv_channels
    conv_len = t if engine else (t + 1 if decode else t + mx.conv - 1)  # transformers' output length
    conv_note = (Text(N_("depthwise causal convolution of width {k} over the new tokens"), k=mx.conv) if engine else
                 Text(N_("depthwise causal convolution of width {k} as transformers calls it: {n} output positions per "
                         "sequence (FlopCounterMode counts it)"), n=conv_len, k=mx.conv))
    conv = Work("conv1d", b, c, mx.conv, runs, 2 * b * conv_len * mx.conv * c * runs, 2 * rows * c * runs,
                state=2 * b * mx.conv_state(engine) * runs, weights="conv1d", note=conv_note)
    own = mx.layer_work(gemm, conv, hidden=h, rows=rows, runs=runs, batch=b, tokens=t, decode=decode, engine=engine)
    if own is not None:
        return own
    lin = mx.linears(h)
    if mx.kind == "gated_deltanet":
        for name, n, _, _ in lin[:-1]:  # the input projections, then the convolution over q|k|v
            linear(name, n, h)
        out.append(conv)
        out += _delta(mx, b, t, runs, decode, engine)
        linear("out_proj", h, mx.value_width)
    elif mx.kind == "mamba":
        d, n_, r = mx.inner, mx.state, mx.dt_rank
        linear("in_proj", 2 * d, h)
        out.append(conv)
        linear("x_proj", r + 2 * n_, d)
        linear("dt_proj", d, r, Text(N_("dt_proj.weight @ dt: a matmul in transformers' Jamba")))
        out += _mamba_scan(mx, b, t, runs, engine)
        linear("out_proj", h, d)
    else:
        linear("in_proj", lin[0][1], h)
        out.append(conv)
        out += _ssd(mx, b, t, runs, decode, engine)
        linear("out_proj", h, mx.inner)
    return out


def _delta(mx: Mixer, b: int, t: int, runs: int, decode: bool, engine: bool) -> list[Work]:
    hv, dk, dv = mx.heads, mx.key_dim, mx.head_dim
    st = mx.recurrent_state
    if decode:  # the recurrence: decay, read, delta, write, output, per value head
        return [Work("ssm_scan", b, hv, dk * dv, runs, 7 * b * t * st * runs, b * t * (2 * mx.groups * dk + 2 * hv * dv) * runs,
                     state=2 * b * st * runs, kind="other",
                     note=Text(N_("gated delta rule, one token: state decay, read, correction and write, ~7 FLOPs "
                                  "per state element (element-wise in transformers, a fused recurrent kernel in "
                                  "engines)")))]
    C = DELTA_CHUNK
    nc = _cdiv(t, C)
    per = 2 * C * C * dk * 2 + 3 * 2 * C * dk * dv + 2 * C * C * dv  # Kβ·Kᵀ, Q·Kᵀ, 3 state products, A·V_new
    note = Text(N_("gated delta rule in chunks of {c} ({n} per sequence, padded): K·Kᵀ, Q·Kᵀ, the state products and "
                   "the within-chunk attention, per value head"), c=C, n=nc)
    if engine:
        per += 2 * C * C * (dk + dv) + 2 * C ** 3 // 3  # W = A·βK, U = A·βV, the triangular inverse (FLA)
        note = Text(N_("gated delta rule in chunks of {c} as flash-linear-attention runs it ({n} per sequence): "
                       "K·Kᵀ, the 64×64 triangular inverse, W and U, the state products, Q·Kᵀ and the output"),
                    c=C, n=nc)
    flops = b * hv * nc * per * runs
    act = b * nc * C * (2 * hv * dk + 2 * hv * dv) * runs + (0 if engine else 2 * b * hv * nc * C * C * runs)
    # launches: flash-linear-attention's chunked forward runs five GEMM kernels per layer, each batched over the sequences,
    # chunks and heads (K·Kᵀ, the triangular inverse, W and U, the chunk states, Q·Kᵀ with the output); transformers'
    # torch_chunk_gated_delta_rule loops over the chunks in Python, about five batched matmuls each
    kernels = 5 * runs if engine else 5 * nc * runs
    return [Work("ssm_chunks", C, dv, dk, b * hv * nc * runs, flops, act, state=2 * b * st * runs, note=note,
                 kernels=kernels),
            Work("ssm_scan", b * t, hv, dk, runs, 10 * b * t * hv * dk * runs, 6 * b * t * hv * dk * runs,
                 kind="other", note=Text(N_("decays, masks and the L2 norms of q and k (element-wise, ~10 FLOPs per "
                                            "q/k element)")))]


def _mamba_scan(mx: Mixer, b: int, t: int, runs: int, engine: bool) -> list[Work]:
    d, n = mx.inner, mx.state
    st = b * d * n
    if engine:  # selective_scan: one fused kernel, the state kept on chip
        return [Work("ssm_scan", b * t, d, n, runs, 8 * b * t * d * n * runs, b * t * (3 * d + 2 * n) * runs,
                     state=2 * st * runs, kind="other",
                     note=Text(N_("selective scan in one fused kernel: discretise, update the state and read it "
                                  "out (~8 FLOPs per state element and token)")))]
    return [Work("ssm_scan_out", d, 1, n, b * t * runs, 2 * b * t * d * n * runs, b * t * (d * n + n + d) * runs,
                 note=Text(N_("the scan's read-out: state × C, one matmul per token (transformers' sequential "
                              "loop)"))),
            Work("ssm_scan", b * t, d, n, runs, 6 * b * t * d * n * runs, 6 * b * t * d * n * runs,
                 state=2 * st * runs, kind="other",
                 note=Text(N_("discretise A and B for every token and update the state (element-wise, ~6 FLOPs per "
                              "state element and token; the [d_inner, d_state] tensors go through memory)")))]


def _ssd(mx: Mixer, b: int, t: int, runs: int, decode: bool, engine: bool) -> list[Work]:
    hm, p, g, n = mx.heads, mx.head_dim, mx.groups, mx.state
    st = hm * p * n
    if decode:
        work = [Work("ssm_scan", b, hm, p * n, runs, 5 * b * t * st * runs, b * t * (2 * mx.inner + 2 * g * n) * runs,
                     state=2 * b * st * runs, kind="other",
                     note=Text(N_("state update: discretise and add (~5 FLOPs per state element)")))]
        if engine:
            return [Work("ssm_scan", b, hm, p * n, runs, 7 * b * t * st * runs, b * t * (2 * mx.inner + 2 * g * n) * runs,
                         state=2 * b * st * runs, kind="other",
                         note=Text(N_("selective state update in one fused kernel, its C·h read-out included (~7 FLOPs "
                                      "per state element)")))]
        return work + [Work("ssm_scan_out", p, 1, n, b * hm * t * runs, 2 * b * t * st * runs, b * t * st * runs,
                            note=Text(N_("the read-out: state × C, a batched matmul per head")))]
    cs = mx.chunk
    nc = _cdiv(t, cs)
    if engine:
        flops = b * (2 * g * nc * cs * cs * n + hm * nc * (2 * cs * cs * p + 2 * cs * p * n + 2 * cs * n * p))
        note = Text(N_("SSD in chunks of {c} as mamba_ssm runs it ({n} per sequence): C·Bᵀ per group, the diagonal "
                       "blocks, the chunk states and C times the states; the passing between chunks is element-wise"),
                    c=cs, n=nc)
    else:
        flops = 2 * b * hm * (nc * cs * cs * n + nc * cs * cs * p + nc * p * n * cs + (nc + 1) ** 2 * p * n
                              + nc * cs * n * p)
        note = Text(N_("SSD in chunks of {c} as transformers' mamba2_chunk_scan runs it ({n} per sequence, padded): "
                       "C·Bᵀ per head, the diagonal blocks, the chunk states, the recurrence over {n1} chunk states, "
                       "C times the states"), c=cs, n=nc, n1=nc + 1)
    act = b * nc * cs * (2 * mx.inner + 2 * hm * n) * runs + b * hm * nc * cs * cs * runs
    # launches: mamba_ssm's chunked scan runs its four GEMM stages as one Triton kernel each, batched over the sequences,
    # chunks and heads (_bmm_chunk, _chunk_scan, _chunk_state; the passing between chunks is element-wise);
    # transformers' torch_forward runs the five as batched einsums over every chunk at once
    return [Work("ssm_chunks", cs, p, n, b * hm * nc * runs, flops * runs, act, state=2 * b * st * runs, note=note,
                 kernels=(4 if engine else 5) * runs),
            Work("ssm_scan", b * t, hm, p, runs, 5 * b * t * mx.inner * runs, 4 * b * t * mx.inner * runs, kind="other",
                 note=Text(N_("discretisation, decays and the gated norm (element-wise, ~5 FLOPs per channel)")))]


@dataclass(frozen=True)
class ShortConv(Mixer):
    """LFM2's gated short convolution: in_proj (hidden → B|C|x, ``inner`` = hidden each), the depthwise causal
    convolution of B·x over ``conv`` inputs, C times its output, out_proj; every linear and the convolution biased
    by ``conv_bias``. Its state is the convolution's inputs only (no recurrence)."""

    kind: str = "short_conv"

    def __post_init__(self) -> None:
        if self.kind != "short_conv":
            raise InputError(N_("mixer kind must be one of {choices}, got {kind!r}"), choices="short_conv",
                             kind=self.kind)
        _dim("convolution width", self.conv)
        _dim("short convolution channels", self.inner)

    @property
    def conv_channels(self) -> int:
        return self.inner

    @property
    def value_width(self) -> int:
        return self.inner

    def linears(self, hidden: int) -> list[tuple[str, int, int, bool]]:
        return [("in_proj", 3 * self.inner, hidden, self.in_bias), ("out_proj", hidden, self.inner, self.out_bias)]

    def other_params(self) -> dict[str, int]:
        c = self.inner
        return {"conv1d": c * self.conv + (c if self.conv_bias else 0)}

    @property
    def recurrent_state(self) -> int:
        return 0

    def layer_work(self, gemm, conv: Work, *, hidden: int, rows: int, runs: int, **_) -> list[Work]:
        d = self.inner
        gates = Work("conv_gates", rows, d, 0, runs, 2 * rows * d * runs, 5 * rows * d * runs, kind="other",
                     note=Text(N_("B·x before the convolution and C times its output (element-wise)")))
        return [gemm("in_proj", 3 * d, hidden), gates, conv, gemm("out_proj", hidden, d)]

    def describe(self) -> dict:
        return {"kind": self.kind, "conv_kernel": self.conv, "conv_channels": self.inner, "channels": self.inner,
                "state_per_sequence_layer": {"conv": self.conv_state(False), "recurrent": 0}}


@dataclass(frozen=True)
class Lightning(Mixer):
    """MiniMax's lightning attention: a linear attention with a decay per head, ``heads`` of ``head_dim``, computed in
    blocks of ``chunk`` tokens (transformers' ``block_size``): q|k|v from one projection (SiLU), within a block
    (Q·Kᵀ ⊙ decay)·V, across blocks Q times the running K^T·V state; an RMSNorm over the heads, a sigmoid gate from
    the layer's input, out_proj. No convolution; its state is the d × d K^T·V per head."""

    kind: str = "lightning"

    def __post_init__(self) -> None:
        if self.kind != "lightning":
            raise InputError(N_("mixer kind must be one of {choices}, got {kind!r}"), choices="lightning",
                             kind=self.kind)
        for f in ("heads", "head_dim", "chunk"):
            _dim(f"lightning attention {f}", getattr(self, f))
        object.__setattr__(self, "inner", self.heads * self.head_dim)

    @property
    def conv_channels(self) -> int:
        return 0

    @property
    def value_width(self) -> int:
        return self.inner

    def linears(self, hidden: int) -> list[tuple[str, int, int, bool]]:
        """q|k|v (``qkv_proj``), the output gate (``output_gate``) and out_proj, by the accounting's op names."""
        return [("in_proj_qkv", 3 * self.inner, hidden, False), ("in_proj_z", self.inner, hidden, False),
                ("out_proj", hidden, self.inner, False)]

    def other_params(self) -> dict[str, int]:
        return {"norm": self.inner}

    def conv_state(self, engine: bool) -> int:
        return 0

    @property
    def recurrent_state(self) -> int:
        return self.heads * self.head_dim * self.head_dim

    def layer_work(self, gemm, conv: Work, *, hidden: int, rows: int, runs: int, batch: int = 1, tokens: int = 1,
                   decode: bool = False, engine: bool = False) -> list[Work]:
        b, t, hm, d = batch, tokens, self.heads, self.head_dim
        st = hm * d * d
        if decode:  # transformers' token loop: k^T·v into the state, q times the state
            core = [Work("ssm_scan_out", 1, d, d, 2 * b * hm * t * runs, 4 * b * hm * t * d * d * runs,
                         b * t * 3 * self.inner * runs, state=2 * b * st * runs, kernels=2 * t * runs,
                         note=Text(N_("lightning attention, one token: kᵀ·v added to the decayed d × d state, q times "
                                      "the state, per head"))),
                    Work("ssm_scan", b, hm, d * d, runs, 2 * b * t * st * runs, 0, kind="other",
                         note=Text(N_("the state's decay (element-wise)")))]
        else:
            c, nb = self.chunk, _cdiv(t, self.chunk)
            sizes = [c] * (t // c) + ([t % c] if t % c else [])
            per_head = sum(4 * n * n * d + 4 * n * d * d for n in sizes)  # Q·Kᵀ, (·decay)·V, Q·state, Kᵀ·V
            core = [Work("ssm_chunks", c, d, d, b * hm * nb * runs, b * hm * per_head * runs,
                         b * hm * sum(3 * n * d + n * n + n * d for n in sizes) * runs, state=2 * b * st * runs,
                         kernels=(4 if engine else 4 * nb) * runs,
                         note=Text(N_("lightning attention in blocks of {c} ({n} per sequence): Q·Kᵀ times the decay "
                                      "and V within a block, Q times the running state and Kᵀ·V into it across "
                                      "blocks, per head"), c=c, n=nb)),
                    Work("ssm_scan", b * t, hm, d, runs, b * hm * sum(n * n + 2 * n * d + d * d for n in sizes) * runs,
                         2 * b * hm * sum(n * n for n in sizes) * runs, kind="other",
                         note=Text(N_("the decays of the scores, the queries, the keys and the state (element-wise)")))]
        gate = Work("conv_gates", rows, self.inner, 0, runs, 6 * rows * self.inner * runs, 4 * rows * self.inner * runs,
                    kind="other", note=Text(N_("SiLU on q|k|v, the RMSNorm over the heads and the sigmoid gate "
                                               "(element-wise)")))
        return [gemm("in_proj_qkv", 3 * self.inner, hidden), *core, gate, gemm("in_proj_z", self.inner, hidden),
                gemm("out_proj", hidden, self.inner)]

    def describe(self) -> dict:
        return {"kind": self.kind, "heads": self.heads, "head_dim": self.head_dim, "block": self.chunk,
                "conv_kernel": 0, "conv_channels": 0,
                "state_per_sequence_layer": {"conv": 0, "recurrent": self.recurrent_state}}


@dataclass(frozen=True)
class KimiDelta(Mixer):
    """Kimi Linear's delta attention (KDA): Gated DeltaNet's delta rule with a decay per channel, ``heads`` of
    ``head_dim`` for queries, keys and values alike; q, k and v projected apart (counted as one q|k|v op) and convolved
    (width ``conv``), a low-rank forget gate (hidden → head_dim → channels), β per head, a low-rank output gate into a
    gated RMSNorm, o_proj. transformers' chunked form (chunks of 64) multiplies the within-chunk terms element-wise
    and runs the rest as matmuls; its decode step is element-wise throughout."""

    kind: str = "kda"
    full_rank_gates: bool = False  # Ling's hybrid (bailing_hybrid): hidden → channels forget and output gates

    def __post_init__(self) -> None:
        if self.kind != "kda":
            raise InputError(N_("mixer kind must be one of {choices}, got {kind!r}"), choices="kda", kind=self.kind)
        _dim("convolution width", self.conv)
        for f in ("heads", "head_dim"):
            _dim(f"delta attention {f}", getattr(self, f))
        object.__setattr__(self, "inner", self.heads * self.head_dim)

    @property
    def conv_channels(self) -> int:
        return 3 * self.inner

    @property
    def value_width(self) -> int:
        return self.inner

    def linears(self, hidden: int) -> list[tuple[str, int, int, bool]]:
        return [("in_proj_qkv", 3 * self.inner, hidden, False), *self._gate("f", hidden),
                ("in_proj_b", self.heads, hidden, False), *self._gate("g", hidden), ("out_proj", hidden, self.inner, False)]

    def _gate(self, which: str, hidden: int) -> list[tuple[str, int, int, bool]]:
        """The forget (f) or output (g) gate's linears: hidden → head_dim → channels, or hidden → channels."""
        d, hd = self.inner, self.head_dim
        if self.full_rank_gates:
            return [(f"kda_{which}", d, hidden, False)]
        return [(f"kda_{which}_a", hd, hidden, False), (f"kda_{which}_b", d, hd, False)]

    def other_params(self) -> dict[str, int]:
        return {"conv1d": self.conv_channels * self.conv, "dt_bias": self.inner, "A_log": self.heads,
                "norm": self.head_dim}

    @property
    def recurrent_state(self) -> int:
        return self.heads * self.head_dim * self.head_dim

    def layer_work(self, gemm, conv: Work, *, hidden: int, rows: int, runs: int, batch: int = 1, tokens: int = 1,
                   decode: bool = False, engine: bool = False) -> list[Work]:
        b, t, hv, dk = batch, tokens, self.heads, self.head_dim
        dv, st, d = dk, self.recurrent_state, self.inner
        if decode:
            core = [Work("ssm_scan", b, hv, dk * dv, runs, 7 * b * t * st * runs, b * t * 4 * d * runs,
                         state=2 * b * st * runs, kind="other",
                         note=Text(N_("delta rule with a decay per channel, one token: decay, read, correction and "
                                      "write, ~7 FLOPs per state element (element-wise)")))]
        else:
            C, nc = DELTA_CHUNK, _cdiv(t, DELTA_CHUNK)
            per = 4 * C * C * dv + 2 * C * C * dk + 6 * C * dk * dv  # A·βV, A·βK·decay; per chunk Q·S, A·V_new, W·S, Kᵀ·V
            note = Text(N_("delta rule with a decay per channel in chunks of {c} ({n} per sequence, padded): the "
                           "matmuls of transformers' chunked form; the within-chunk K·Kᵀ and Q·Kᵀ are element-wise "
                           "there"), c=C, n=nc)
            if engine:
                per += 4 * C * C * dk + 2 * C ** 3 // 3  # K·Kᵀ and Q·Kᵀ as GEMMs, the triangular inverse (FLA)
                note = Text(N_("delta rule with a decay per channel in chunks of {c} as flash-linear-attention runs it "
                               "({n} per sequence): K·Kᵀ, the triangular inverse, the state products, Q·Kᵀ and the "
                               "output"), c=C, n=nc)
            core = [Work("ssm_chunks", C, dv, dk, b * hv * nc * runs, b * hv * nc * per * runs,
                         b * nc * C * 4 * d * runs, state=2 * b * st * runs, note=note,
                         kernels=(5 if engine else 5 * nc) * runs),
                    Work("ssm_scan", b * t, hv, dk, runs, (0 if engine else 4 * b * hv * nc * C * C * dk * runs)
                         + 10 * b * t * d * runs, 6 * b * t * d * runs, kind="other",
                         note=Text(N_("decays, masks and the L2 norms of q and k (element-wise; in transformers also the "
                                      "within-chunk K·Kᵀ and Q·Kᵀ)")))]
        def gate(which: str) -> list[Work]:
            return [gemm(name, n, k) for name, n, k, _ in self._gate(which, hidden)]

        return [gemm("in_proj_qkv", 3 * d, hidden), conv, *gate("f"), gemm("in_proj_b", hv, hidden), *core, *gate("g"),
                gemm("out_proj", hidden, d)]

    def describe(self) -> dict:
        return {"kind": self.kind, "heads": self.heads, "head_dim": self.head_dim, "conv_kernel": self.conv,
                "conv_channels": self.conv_channels, "chunk": DELTA_CHUNK,
                "state_per_sequence_layer": {"conv": self.conv_state(False), "recurrent": self.recurrent_state}}


@dataclass(frozen=True)
class RGLRU(Mixer):
    """Griffin's recurrent block (RecurrentGemma): from the hidden state a GELU branch (``linear_y``) and an input
    branch (``linear_x``, ``inner`` = lru_width wide) convolved (width ``conv``, biased), then the real-gated linear
    recurrent unit: an input gate and a recurrence gate, each block-diagonal (``heads`` blocks of inner / heads,
    biased; batched matmuls in transformers), a diagonal recurrence h = a ⊙ h + √(1 − a²) ⊙ (i ⊙ x); the GELU branch
    times its output, ``linear_out``. Its state is the convolution's last k − 1 inputs (transformers keeps k − 1 too)
    and one value per channel (fp32 in transformers)."""

    kind: str = "rglru"
    conv_bias: bool = True

    def __post_init__(self) -> None:
        if self.kind != "rglru":
            raise InputError(N_("mixer kind must be one of {choices}, got {kind!r}"), choices="rglru", kind=self.kind)
        _dim("convolution width", self.conv)
        for f in ("inner", "heads"):
            _dim(f"recurrent block {f}", getattr(self, f))
        if self.inner % self.heads:
            raise InputError(N_("the recurrent width {width} cannot be split into {heads} gate blocks"),
                             width=self.inner, heads=self.heads)
        object.__setattr__(self, "head_dim", self.inner // self.heads)  # (convolved and handed on: ``inner`` wide)

    def linears(self, hidden: int) -> list[tuple[str, int, int, bool]]:
        """linear_x (``in_proj``), linear_y (``in_proj_z``), the two gates (each ``heads`` blocks of
        head_dim × head_dim: inner outputs from head_dim inputs) and linear_out (``out_proj``), all biased."""
        w, bw = self.inner, self.head_dim
        return [("in_proj", w, hidden, True), ("in_proj_z", w, hidden, True), ("rg_input_gate", w, bw, True),
                ("rg_recurrent_gate", w, bw, True), ("out_proj", hidden, w, True)]

    def stored(self, hidden: int) -> list[tuple[str, str, int, int, bool]]:
        names = {"in_proj": "linear_x", "in_proj_z": "linear_y", "rg_input_gate": "rg_lru.input_gate",
                 "rg_recurrent_gate": "rg_lru.recurrent_gate", "out_proj": "linear_out"}
        return [(names[n], n, o, k, b) for n, o, k, b in self.linears(hidden)]

    @property
    def conv_name(self) -> str:
        return "conv_1d"

    def other_params(self) -> dict[str, int]:
        return {"conv1d": self.inner * self.conv + self.inner, "recurrent_param": self.inner}

    def conv_state(self, engine: bool) -> int:
        return self.inner * (self.conv - 1)

    @property
    def recurrent_state(self) -> int:
        return self.inner

    def layer_work(self, gemm, conv: Work, *, hidden: int, rows: int, runs: int, batch: int = 1, tokens: int = 1,
                   decode: bool = False, engine: bool = False) -> list[Work]:
        w, bw, k = self.inner, self.head_dim, self.conv
        def gates(name: str, note: str) -> Work:
            return Work(name, rows, bw, bw, self.heads * runs, 2 * rows * w * bw * runs, (2 * rows * w) * runs,
                        weights=name, kernels=runs, note=Text(note, n=self.heads, d=bw))

        scan = Work("ssm_scan", rows, w, 1, runs, 12 * rows * w * runs, 8 * rows * w * runs,
                    state=2 * batch * w * runs, kind="other",
                    note=Text(N_("the gates' sigmoids, a = exp(−8·r·softplus(Λ)), √(1 − a²) and the recurrence "
                                 "h = a·h + √(1 − a²)·(i·x), ~12 FLOPs per channel (element-wise; a loop over the "
                                 "tokens in transformers)")))
        branch = Work("conv_gates", rows, w, 0, runs, 2 * rows * w * runs, 3 * rows * w * runs, kind="other",
                      note=Text(N_("GELU on the y branch and its product with the recurrence's output (element-wise)")))
        convolved = [conv]
        if decode and not engine:  # transformers: the k − 1 cached inputs and the new one times the kernel, summed
            convolved = []
            branch = replace(branch, flops=branch.flops + 2 * rows * k * w * runs, act=branch.act + 2 * rows * w * runs,
                             state=conv.state,
                             note=Text(N_("GELU on the y branch and its product with the recurrence's output; the "
                                          "depthwise convolution of width {k} over the cached inputs and the new one "
                                          "(element-wise in transformers: FlopCounterMode counts none)"), k=k))
        return [gemm("in_proj_z", w, hidden), gemm("in_proj", w, hidden), *convolved,
                gates("rg_input_gate", N_("the input gate: {n} diagonal blocks of {d} × {d}, one batched matmul")),
                gates("rg_recurrent_gate", N_("the recurrence gate: {n} diagonal blocks of {d} × {d}, one batched "
                                              "matmul")), scan, branch, gemm("out_proj", hidden, w)]

    def describe(self) -> dict:
        return {"kind": self.kind, "width": self.inner, "gate_blocks": self.heads, "block_width": self.head_dim,
                "conv_kernel": self.conv, "conv_channels": self.inner,
                "state_per_sequence_layer": {"conv": self.conv_state(False), "recurrent": self.recurrent_state}}


@dataclass(frozen=True)
class RWKV(Mixer):
    """RWKV-4's time mixing (``rwkv``), ``inner`` = attention_hidden_size channels: the layer's input mixed with the
    previous token's (a learned share per channel) into key, value and receptance (three linears, counted as one
    ``in_proj`` op), the WKV recurrence — per channel a decayed, exponentially weighted sum of past values, kept as
    numerator, denominator and running maximum — times the sigmoid receptance, ``output``. The channel mixing's key
    and value are the layer's MLP (ReLU², no biases); its sigmoid receptance gate (hidden → hidden) is counted here as
    ``in_proj_z``. The state is the previous token of both mixings (2 × hidden) and the three WKV vectors."""

    kind: str = "rwkv"
    width: int = 0  # the model's hidden size: what the token shift keeps and the time-mix shares weigh

    def __post_init__(self) -> None:
        if self.kind != "rwkv":
            raise InputError(N_("mixer kind must be one of {choices}, got {kind!r}"), choices="rwkv", kind=self.kind)
        _dim("RWKV attention width", self.inner)
        _dim("RWKV hidden size", self.width)

    @property
    def conv_channels(self) -> int:
        return 0  # no convolution: the token shift keeps the previous input (conv_state)

    def linears(self, hidden: int) -> list[tuple[str, int, int, bool]]:
        return [("in_proj", 3 * self.inner, hidden, False), ("out_proj", hidden, self.inner, False),
                ("in_proj_z", hidden, hidden, False)]

    def stored(self, hidden: int) -> list[tuple[str, str, int, int, bool]]:
        a = self.inner
        return [*((f"attention.{part}", "in_proj", a, hidden, False) for part in ("key", "value", "receptance")),
                ("attention.output", "out_proj", hidden, a, False),
                ("feed_forward.receptance", "in_proj_z", hidden, hidden, False)]

    def other_params(self) -> dict[str, int]:
        return {"time_decay_first": 2 * self.inner, "time_mix": 5 * self.width}

    def conv_state(self, engine: bool) -> int:
        return 2 * self.width  # the previous token's input to the time and the channel mixing

    @property
    def recurrent_state(self) -> int:
        return 3 * self.inner  # WKV's numerator, denominator and running maximum

    def layer_work(self, gemm, conv: Work, *, hidden: int, rows: int, runs: int, batch: int = 1, tokens: int = 1,
                   decode: bool = False, engine: bool = False) -> list[Work]:
        a = self.inner
        shift = Work("conv_gates", rows, hidden, 0, runs, 10 * rows * hidden * runs, 10 * rows * hidden * runs,
                     state=2 * batch * 2 * hidden * runs, kind="other",
                     note=Text(N_("token shift: each input mixed with the previous token's for key, value and "
                                  "receptance of both mixings, and the receptance gates (element-wise)")))
        wkv = Work("ssm_scan", rows, a, 1, runs, 20 * rows * a * runs, 6 * rows * a * runs,
                   state=2 * batch * 3 * a * runs, kind="other",
                   note=Text(N_("the WKV recurrence: per channel and token the decayed weighted sums of past values, "
                                "~20 FLOPs (element-wise; a loop over the tokens in transformers)")))
        return [shift, gemm("in_proj", 3 * a, hidden), wkv, gemm("out_proj", hidden, a), gemm("in_proj_z", hidden, hidden)]

    def describe(self) -> dict:
        return {"kind": self.kind, "width": self.inner, "conv_kernel": 0, "conv_channels": 0,
                "state_per_sequence_layer": {"conv": self.conv_state(False), "recurrent": self.recurrent_state}}
