"""Quantized checkpoints: what a ``quantization_config`` says and the exact bytes each format stores.

A :class:`Quantization` is read from the ``quantization_config`` block of a Hugging Face
``config.json`` (:func:`from_quantization_config`) or made for the block-scaled weight dtypes
``int4`` and ``fp4`` (:func:`for_weight_dtype`). For one linear layer of ``out_features × in_features``
it lists the tensors the checkpoint stores (:meth:`Quantization.linear_tensors`), with their shapes and
dtypes as each format's own packing code writes them:

* AWQ (AutoAWQ ``WQLinear_GEMM`` / ``GEMV`` / ``GEMVFast``): ``qweight`` int32 ``[I, O/8]``,
  ``qzeros`` int32 ``[I/g, O/8]``, ``scales`` fp16 ``[I/g, O]`` (GEMM); biases fp16.
* GPTQ (AutoGPTQ / GPTQModel): ``qweight`` ``[ceil(I·b/32), O]``, ``qzeros`` ``[ceil(I/g), ceil(O·b/32)]``,
  ``scales`` fp16 ``[ceil(I/g), O]``, ``g_idx`` int32 ``[I]``.
* bitsandbytes 4-bit: the packed weight ``[ceil(n/2), 1]`` uint8 (n = O·I), ``absmax`` per block of 64
  (fp32, or uint8 with double quantisation plus fp32 ``nested_absmax`` per 256 blocks), a 16-entry
  ``quant_map``, and the JSON quant state as a uint8 tensor; 8-bit: int8 weight, fp32 ``SCB [O]``,
  a one-byte ``weight_format``.
* fp8 (``quant_method: "fp8"``, DeepSeek style): e4m3 weight, ``weight_scale_inv`` fp32 (ue8m0: one
  byte) of ``[ceil(O/bo), ceil(I/bi)]`` for a ``weight_block_size`` of ``[bo, bi]``, a scalar without.
* compressed-tensors: ``pack-quantized`` int (``weight_packed`` int32 ``[O, ceil(I·b/32)]``,
  ``weight_shape`` int64 ``[2]``, ``weight_scale`` per tensor / channel / group / block, zero points when
  asymmetric, ``weight_g_idx`` with ``actorder: group``), ``float-quantized`` / ``int-quantized`` (one
  byte per weight), ``nvfp4-pack-quantized`` (uint8 ``[O, I/2]``, e4m3 scale per 16, fp32 global
  scale), ``mxfp4-pack-quantized`` (uint8 ``[O, I/2]``, one e8m0 byte per 32).
* mxfp4 (gpt-oss): only the experts, as fused blocks ``[E, N, K/32, 16]`` uint8 and scales
  ``[E, N, K/32]`` uint8 (bf16 biases); everything else bf16.
* NVIDIA ModelOpt NVFP4: uint8 ``[O, I/2]``, e4m3 ``weight_scale [O, I/16]``, fp32 ``weight_scale_2`` and
  ``input_scale`` scalars.
* BitNet (``quant_method: "bitnet"``, transformers' ``BitLinear`` / offline ``AutoBitLinear``): ternary weights four
  to a byte, uint8 ``[O/4, I]``, and one ``weight_scale`` at the checkpoint dtype; the online ``autobitlinear``
  mode stores the weights unquantized (ternarised at every forward). The LM head stays unquantized.

Which layers a format quantizes follows its producer: AWQ the linears of the decoder blocks, minus any
``modules_to_not_convert`` substring; GPTQ the blocks' linears (the LM head only with ``lm_head: true``);
bitsandbytes every linear except the skip list (the LM head is skipped by default); fp8 and
compressed-tensors every linear except ``modules_to_not_convert`` / ``ignore`` (names, globs or ``re:``
patterns); MoE routers are never quantized by AWQ, GPTQ, fp8 or mxfp4. Everything not quantized is
stored at the checkpoint's dtype (AWQ: fp16, as AutoAWQ writes it).

Weight-only formats multiply at the activation dtype; :attr:`Quantization.activations` says when a
format also quantizes activations (fp8 W8A8, LLM.int8, compressed-tensors with input activations).

This module never imports torch and knows nothing of model configurations.
"""

from __future__ import annotations

import fnmatch
import json
import math
import re
from dataclasses import dataclass, replace
from functools import cached_property

from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_, Text

# Bytes of the storage dtypes the formats use.
STORAGE_BYTES = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "float8_e4m3fn": 1, "float8_e8m0fnu": 1,
                 "int64": 8, "int32": 4, "uint32": 4, "int16": 2, "int8": 1, "uint8": 1}

# gemmlib dtype names -> storage dtype names (the unquantized tensors of a checkpoint).
_STORAGE_OF = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp8": "float8_e4m3fn",
               "int8": "int8", "fp64": "float64", "tf32": "float32"}

METHODS = ("awq", "gptq", "bitsandbytes", "fp8", "compressed-tensors", "mxfp4", "modelopt", "int4", "fp4", "mlx",
           "bitnet")
# MLX quantization modes (mlx.core.quantize): (group sizes, bits, scale dtype, biases stored)
MLX_MODES = {"affine": ((32, 64, 128), (2, 3, 4, 5, 6, 8), "", True), "mxfp4": ((32,), (4,), "uint8", False),
             "mxfp8": ((32,), (8,), "uint8", False), "nvfp4": ((16,), (4,), "uint8", False)}

_BNB_BLOCK = 64  # bitsandbytes 4-bit blocksize (not a config key; Params4bit default)
_BNB_NESTED = 256  # double-quantisation block of the absmax values


def storage_dtype(name: str) -> str:
    """A gemmlib dtype name (bf16, fp16, ...) as the storage dtype a checkpoint writes."""
    if name in STORAGE_BYTES:
        return name
    if name not in _STORAGE_OF:
        raise InputError(N_("{name} is not a dtype a checkpoint stores its unquantized tensors in"),
                         name=name)
    return _STORAGE_OF[name]


@dataclass(frozen=True)
class Tensor:
    """One stored tensor: name suffix, shape and storage dtype."""

    name: str
    shape: tuple[int, ...]
    dtype: str

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def bytes(self) -> int:
        return self.numel * STORAGE_BYTES[self.dtype]


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Quantization:
    """How a checkpoint stores its quantized linears (see the module docstring for each layout).

    ``method``: awq, gptq, bitsandbytes, fp8, compressed-tensors, mxfp4, modelopt, or the
    block-scaled weight dtypes int4 / fp4 (the CLI's and page's ``--weight-dtype``).
    ``skip``: module names or patterns left unquantized; ``skip_rule`` how they match
    (``substring`` as AutoAWQ does, ``hf`` as transformers' ``should_convert_module``, ``ct`` as
    compressed-tensors' ``ignore`` with ``re:`` patterns).
    """

    method: str
    bits: int = 4
    group_size: int = 128  # -1: one group per column (g = in_features)
    zero_point: bool = True  # awq; gptq stores zeros either way
    version: str = "gemm"  # awq: gemm | gemv | gemv_fast
    pack_bits: int = 32  # gptq pack_dtype
    quant_type: str = "nf4"  # bitsandbytes 4-bit: nf4 | fp4
    double_quant: bool = False
    quant_storage: str = "uint8"
    block: tuple[int, int] | None = (128, 128)  # fp8 weight_block_size; None: one scale per tensor
    scale_fmt: str = "float"  # fp8: float (fp32) | ue8m0 (one byte)
    static_activations: bool = False
    num_bits_type: str = "int"  # compressed-tensors weights type: int | float
    strategy: str = "group"  # compressed-tensors: tensor | channel | group | block | tensor_group
    symmetric: bool = True
    ct_format: str = "pack-quantized"
    actorder_group: bool = False  # compressed-tensors <= 0.12 wrote weight_g_idx for actorder "group"
    targets: tuple[str, ...] = ("Linear",)
    skip: tuple[str, ...] = ()
    skip_rule: str = "hf"
    quantize_lm_head: bool = False
    unquantized_dtype: str = ""  # "" = the checkpoint's dtype; AWQ writes fp16
    activations: str = ""  # "" weight-only (multiplies at the activation dtype), else the activation format
    label: str = ""
    mlx_mode: str = "affine"  # mlx: affine | mxfp4 | mxfp8 | nvfp4
    overrides: tuple[tuple[str, int, int], ...] = ()  # mlx: (module, bits, group size); bits 0 = left unquantized
    expert_fp4: bool = False  # fp8 with the routed experts in fp4 (DeepSeek-V4's expert_dtype): e2m1 pairs in int8
    # [O, I/2] and an e8m0 scale per 32 ([O, I/32])

    # ----- which modules -------------------------------------------------------------------
    def quantizes(self, module: str, role: str) -> bool:
        """Whether the linear at ``module`` (a checkpoint name) is stored quantized.

        ``role`` is what it is: ``attention``, ``mlp``, ``expert``, ``router``, ``lm_head``.
        """
        key = (module, role)
        if key not in self._answers:
            self._answers[key] = self._quantizes(module, role)
        return self._answers[key]

    @cached_property
    def _answers(self) -> dict[tuple[str, str], bool]:
        """quantizes()'s answers by (module, role): a checkpoint's ~2,000 linears are asked about several times per
        estimate, each against every skip pattern (GLM-5.2's ModelOpt file lists 156). Not a field: the repr (the
        page's cache key) stays the inputs'."""
        return {}

    def _quantizes(self, module: str, role: str) -> bool:
        if self.method == "mlx":  # every Linear and Embedding (mlx_lm's nn.quantize), minus the overrides set false
            return self.for_module(module) is not None
        if role == "router" and self.method in ("awq", "gptq", "fp8", "mxfp4", "int4", "fp4", "int8", "modelopt"):
            return False
        if self.method == "mxfp4" and role != "expert":
            return False
        if role == "lm_head":
            if self.method in ("awq", "int4", "fp4", "int8"):
                return False
            if self.method == "gptq":
                return self.quantize_lm_head
            if self.method in ("bitsandbytes", "fp8") and not self.skip:
                return False  # transformers adds the default skips (the output embedding) to an empty list
            if self.method in ("modelopt", "bitnet"):
                return False
        if self.method == "compressed-tensors" and "Linear" not in self.targets and not any(
                _ct_match(t, module) for t in self.targets):
            return False
        if self.skip_rule not in ("substring", "ct"):  # transformers' rule: every pattern in one regex
            return self.skip_regex is None or not self.skip_regex.match(module)
        return not any(self._skips(p, module) for p in self.skip)

    @cached_property
    def skip_regex(self) -> re.Pattern | None:
        """The skip list under transformers' rule (:meth:`_skips`) as one compiled pattern: each name exactly, as a
        dotted prefix or as a dotted suffix, and each glob as fnmatch reads it (alone or as a prefix)."""
        if not self.skip:
            return None
        alts = []
        for p in self.skip:
            e = re.escape(p)
            alts += [rf"{e}(?:\..*)?\Z", rf".*\.{e}\Z"]
            if any(c in p for c in "*?["):
                alts += [fnmatch.translate(p), fnmatch.translate(p + ".*")]
        return re.compile("|".join(f"(?:{a})" for a in alts), re.DOTALL)

    def _skips(self, pattern: str, module: str) -> bool:
        if self.skip_rule == "substring":
            return pattern in module
        if self.skip_rule == "ct":
            return _ct_match(pattern, module)
        # transformers should_convert_module: exact or dotted-prefix match, suffix match, glob or regex
        if module == pattern or module.startswith(pattern + ".") or module.endswith("." + pattern):
            return True
        if any(c in pattern for c in "*?["):
            return fnmatch.fnmatchcase(module, pattern) or fnmatch.fnmatchcase(module, pattern + ".*")
        return False

    def for_module(self, module: str) -> Quantization | None:
        """MLX: this module's own bits and group size when the config overrides them (None: unquantized)."""
        for name, bits, group in self.overrides:
            if module == name or module.endswith("." + name) or name.endswith("." + module):
                if not bits:
                    return None
                return replace(self, bits=bits, group_size=group, overrides=())
        return self

    # ----- what is stored --------------------------------------------------------------------
    @property
    def storage_note(self) -> str:
        return self.label or self.method

    def linear_tensors(self, out_f: int, in_f: int, bias: bool, dtype: str) -> list[Tensor]:
        """The tensors one quantized linear stores; ``dtype`` is the checkpoint's (for the bias and
        scales that follow the weight dtype)."""
        o, i = int(out_f), int(in_f)
        dt = storage_dtype(dtype)
        bias_dt = storage_dtype(self.unquantized_dtype) if self.unquantized_dtype else dt
        m = self.method
        g = i if self.group_size in (-1, 0) else self.group_size
        if m in ("awq", "int4"):
            t = self._awq(o, i, g)
            bias_dt = "float16"
        elif m == "gptq":
            t = self._gptq(o, i, g)
            bias_dt = "float16"
        elif m == "bitsandbytes" and self.bits == 4:
            t = self._bnb4(o, i, dtype)
        elif m == "bitsandbytes":
            t = [Tensor("weight", (o, i), "int8"), Tensor("SCB", (o,), "float32"), Tensor("weight_format", (), "uint8")]
        elif m == "fp8":
            sdt = "float8_e8m0fnu" if self.scale_fmt == "ue8m0" else "float32"
            scale = Tensor("weight_scale_inv", (), "float32") if self.block is None else Tensor(
                "weight_scale_inv", (_cdiv(o, self.block[0]), _cdiv(i, self.block[1])), sdt)
            t = [Tensor("weight", (o, i), "float8_e4m3fn"), scale]
            if self.static_activations:
                t.append(Tensor("activation_scale", (), "float32"))
        elif m == "int8":  # the int8 weight dtype: one fp32 scale per output channel (SmoothQuant's W8A8 layout)
            t = [Tensor("weight", (o, i), "int8"), Tensor("weight_scale", (o, 1), "float32")]
        elif m == "compressed-tensors":
            t = self._ct(o, i, dt)
        elif m in ("modelopt", "fp4"):
            t = [Tensor("weight", (o, i // 2), "uint8"), Tensor("weight_scale", (o, _cdiv(i, 16)), "float8_e4m3fn"),
                 Tensor("weight_scale_2", (), "float32"), Tensor("input_scale", (), "float32")]
        elif m == "mlx":  # mlx.core.quantize: uint32 words along the input, one scale (and bias) per group
            _, _, sdt, biased = MLX_MODES[self.mlx_mode]
            ng = _cdiv(i, g)
            t = [Tensor("weight", (o, _cdiv(i * self.bits, 32)), "uint32"), Tensor("scales", (o, ng), sdt or dt)]
            if biased:
                t.append(Tensor("biases", (o, ng), dt))
        elif m == "bitnet":  # ternary, four to a byte along the output, one scale (bits 0: stored unquantized)
            t = [Tensor("weight", (_cdiv(o, 4), i), "uint8"), Tensor("weight_scale", (1,), dt)] if self.bits else [
                Tensor("weight", (o, i), dt)]
        elif m == "mxfp4":  # a 2-D view of one expert's blocks (see expert_tensors for the stored form)
            t = [Tensor("blocks", (o, i // 2), "uint8"), Tensor("scales", (o, _cdiv(i, 32)), "uint8")]
        else:
            raise InputError(N_("unknown quantization method {m!r}"), m=m)
        if bias:
            t.append(Tensor("bias", (o,), bias_dt))
        return t

    def _awq(self, o: int, i: int, g: int) -> list[Tensor]:
        if self.version == "gemv":
            w = _awq_zeros_width(i, g)
            return [Tensor("qweight", (o, i // 8), "int32"), Tensor("qzeros", (o, w), "int32"),
                    Tensor("scales", (o, w * 8), "float16")]
        if self.version == "gemv_fast":
            w = _awq_zeros_width(i, g)
            return [Tensor("qweight", (o // 4, i), "int16"), Tensor("scales", (w * 8, o), "float16"),
                    Tensor("qzeros", (w * 8, o), "float16")]
        return [Tensor("qweight", (i, o // 8), "int32"), Tensor("qzeros", (i // g, o // 8), "int32"),
                Tensor("scales", (i // g, o), "float16")]

    def _gptq(self, o: int, i: int, g: int) -> list[Tensor]:
        word = self.pack_bits
        pd = {8: "int8", 16: "int16", 32: "int32", 64: "int64"}[word]
        ng = _cdiv(i, g)
        return [Tensor("qweight", (_cdiv(i * self.bits, word), o), pd),
                Tensor("qzeros", (ng, _cdiv(o * self.bits, word)), pd),
                Tensor("scales", (ng, o), "float16"), Tensor("g_idx", (i,), "int32")]

    def _bnb4(self, o: int, i: int, dtype: str) -> list[Tensor]:
        n = o * i
        blocks = _cdiv(n, _BNB_BLOCK)
        isz = STORAGE_BYTES[self.quant_storage]
        t = [Tensor("weight", ((n + 1) // (isz * 2), 1), self.quant_storage)]
        state = {"quant_type": self.quant_type, "blocksize": _BNB_BLOCK, "dtype": _torch_name(dtype),
                 "shape": [o, i]}
        if self.double_quant:
            t += [Tensor("weight.absmax", (blocks,), "uint8"), Tensor("weight.quant_map", (16,), "float32"),
                  Tensor("weight.nested_absmax", (_cdiv(blocks, _BNB_NESTED),), "float32"),
                  Tensor("weight.nested_quant_map", (256,), "float32")]
            # the JSON holds repr(float(absmax.mean())): data-dependent, 20 characters is typical (± ~10 B)
            state.update({"nested_blocksize": _BNB_NESTED, "nested_dtype": "float32", "nested_offset": 0.0})
            length = len(json.dumps(state)) - len("0.0") + 20
        else:
            t += [Tensor("weight.absmax", (blocks,), "float32"), Tensor("weight.quant_map", (16,), "float32")]
            length = len(json.dumps(state))
        t.append(Tensor("weight.quant_state.bitsandbytes__" + self.quant_type, (length,), "uint8"))
        return t

    def _ct(self, o: int, i: int, dt: str) -> list[Tensor]:
        s = self.strategy
        if s == "tensor":
            sshape: tuple[int, ...] = (1,)
        elif s == "channel":
            sshape = (o, 1)
        elif s in ("group", "tensor_group"):
            sshape = (o, _cdiv(i, self.group_size))
        elif s == "block":
            bo, bi = self.block or (128, 128)
            sshape = (_cdiv(o, bo), _cdiv(i, bi))
        else:
            raise InputError(N_("compressed-tensors strategy {s!r} is not known"), s=s)
        f, b = self.ct_format, self.bits
        if f == "pack-quantized":
            t = [Tensor("weight_packed", (o, _cdiv(i * b, 32)), "int32"), Tensor("weight_shape", (2,), "int64"),
                 Tensor("weight_scale", sshape, dt)]
            if not self.symmetric and s in ("group", "channel"):
                t.append(Tensor("weight_zero_point", (_cdiv(o * b, 32), sshape[1]), "int32"))
            if self.actorder_group:
                t.append(Tensor("weight_g_idx", (i,), "int32"))
        elif f in ("float-quantized", "int-quantized", "naive-quantized"):
            wdt = "float8_e4m3fn" if self.num_bits_type == "float" else "int8"
            t = [Tensor("weight", (o, i), wdt), Tensor("weight_scale", sshape, dt)]
            if not self.symmetric:
                t.append(Tensor("weight_zero_point", sshape, wdt))
        elif f == "nvfp4-pack-quantized":
            t = [Tensor("weight_packed", (o, i // 2), "uint8"), Tensor("weight_scale", (o, _cdiv(i, 16)), "float8_e4m3fn"),
                 Tensor("weight_global_scale", (1,), "float32")]
            if self.static_activations:
                t.append(Tensor("input_global_scale", (1,), "float32"))
            return t
        elif f == "mxfp4-pack-quantized":
            t = [Tensor("weight_packed", (o, i // 2), "uint8"), Tensor("weight_scale", (o, _cdiv(i, 32)), "uint8")]
            return t
        else:
            raise InputError(N_("compressed-tensors format {f!r} is not known"), f=f)
        if self.static_activations:
            t.append(Tensor("input_scale", (1,), dt))
        return t

    def fp4_expert_tensors(self, out_f: int, in_f: int) -> list[Tensor]:
        """One routed expert's linear of an fp8 checkpoint whose experts are fp4 (:attr:`expert_fp4`)."""
        return [Tensor("weight", (out_f, in_f // 2), "int8"), Tensor("scale", (out_f, _cdiv(in_f, 32)), "float8_e8m0fnu")]

    def expert_tensors(self, experts: int, out_f: int, in_f: int, bias: bool, dtype: str,
                       name: str) -> list[Tensor]:
        """gpt-oss's fused expert projections as its mxfp4 checkpoint stores them."""
        dt = storage_dtype(dtype)
        t = [Tensor(f"{name}_blocks", (experts, out_f, in_f // 32, 16), "uint8"),
             Tensor(f"{name}_scales", (experts, out_f, in_f // 32), "uint8")]
        if bias:
            t.append(Tensor(f"{name}_bias", (experts, out_f), dt))
        return t

    def describe(self) -> dict:
        """What was read, for the JSON and the page."""
        d: dict = {"method": self.method, "label": self.label or self.method}
        if self.method in ("awq", "gptq", "compressed-tensors", "int4") and self.bits:
            d["bits"] = self.bits
        if self.method in ("awq", "gptq", "int4") or (self.method == "compressed-tensors" and self.strategy in (
                "group", "tensor_group")):
            d["group_size"] = self.group_size
        if self.method == "awq":
            d.update(zero_point=self.zero_point, version=self.version)
        if self.method == "bitsandbytes":
            d.update(bits=self.bits, quant_type=self.quant_type if self.bits == 4 else "int8",
                     double_quant=self.double_quant)
        if self.method == "fp8":
            d.update(block=list(self.block) if self.block else None, scale_fmt=self.scale_fmt)
            if self.expert_fp4:
                d["experts"] = "fp4 (e2m1, an e8m0 scale per 32)"
        if self.method == "compressed-tensors":
            d.update(format=self.ct_format, strategy=self.strategy, symmetric=self.symmetric)
        if self.method == "bitnet":
            d.update(bits=self.bits, packed=bool(self.bits))
        if self.method == "mlx":
            d.update(bits=self.bits, group_size=self.group_size, mode=self.mlx_mode,
                     overrides={n: ({"bits": b, "group_size": g} if b else False) for n, b, g in self.overrides})
        d["unquantized_modules"] = list(self.skip) + [n for n, b, _ in self.overrides if not b]
        d["activations"] = self.activations or Text(N_("weight-only: multiplies at the activation dtype"))
        return d


def _torch_name(dtype: str) -> str:
    return storage_dtype(dtype)


def _ct_match(pattern: str, module: str) -> bool:
    if pattern.startswith("re:"):
        return re.match(pattern[3:], module) is not None
    return module == pattern or module.endswith("." + pattern)


def _awq_zeros_width(in_f: int, g: int) -> int:
    """AutoAWQ's GEMV zero/scale width: groups padded to a multiple of 8 (g ≥ 128), 16 (64) or 32 (32)."""
    mult = {64: 2, 32: 4}.get(g, 1) if g < 128 else 1
    if g < 128 and g not in (64, 32):
        raise InputError(N_("AWQ GEMV kernels support group sizes 32, 64 and ≥ 128, not {g}"), g=g)
    return _cdiv(_cdiv(in_f // g, 8), mult) * mult


# ----- the block-scaled weight dtypes of the CLI and the page --------------------------------

# Weight dtypes that are block-scaled 4-bit formats rather than one size per element (weight-only: the
# GEMM multiplies at the activation dtype, so they are not compute dtypes of gemmlib.core.dtypes).
WEIGHT_FORMATS = ("int4", "fp4")
_WEIGHT_ALIASES = {"nvfp4": "fp4", "e2m1": "fp4", "w4": "int4"}


def weight_dtype_name(name: str) -> str:
    """A weight dtype's canonical name: a dtype of gemmlib.core.dtypes, or one of :data:`WEIGHT_FORMATS`."""
    from gemmlib.core.dtypes import DTYPES, get_dtype

    key = str(name).strip().lower()
    key = _WEIGHT_ALIASES.get(key, key)
    if key in WEIGHT_FORMATS:
        return key
    try:
        return get_dtype(key).name
    except InputError:
        raise InputError(N_("unknown weight dtype {name!r}; choose one of {choices}"),
                         name=name, choices=", ".join([*DTYPES, *WEIGHT_FORMATS])) from None

def for_weight_dtype(name: str) -> Quantization:
    """int4: 4-bit integers in groups of 128 along the input with a 16-bit scale and a 4-bit zero
    point per group (the AWQ GEMM layout, 4.16 bits per weight); fp4: NVFP4, e2m1 values with one
    e4m3 scale per 16 (4.5 bits per weight); fp8: e4m3 with one fp32 scale per tensor and a static input scale
    (NVIDIA ModelOpt's FP8, what TensorRT-LLM serves; vLLM's ``quantization="fp8"`` a scale per tensor too);
    int8: one fp32 scale per output channel (SmoothQuant's W8A8). The linears of the decoder blocks take the
    format; the embedding, the LM head, norms and routers stay at the checkpoint dtype, as every one of those
    quantizers leaves them (ModelOpt's default disables ``*lm_head*`` and ``*router*``; vLLM's fp8 quantizes
    ``LinearBase`` layers, not the vocabulary's)."""
    if name == "fp8":
        return Quantization("fp8", bits=8, block=None, static_activations=True,
                            label=Text(N_("fp8 (e4m3, a scale per tensor)")))
    if name == "int8":
        return Quantization("int8", bits=8, label=Text(N_("int8 (a scale per output channel)")))
    if name == "int4":
        return Quantization("int4", bits=4, group_size=128, label=Text(N_("int4 (groups of 128, fp16 scale + 4-bit zero)")))
    if name == "fp4":
        return Quantization("fp4", bits=4, group_size=16, label=Text(N_("fp4 (NVFP4: e2m1, e4m3 scale per 16)")))
    raise InputError(N_("{name} is not a quantized weight dtype (fp8, int8, int4, fp4)"), name=name)


# ----- reading a quantization_config ------------------------------------------------------

def _num(d: dict, key: str, default, kinds=(int,)):
    v = d.get(key, default)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, kinds):
        raise InputError(N_("quantization_config field {key!r} must be a number, got {v!r}"), key=key, v=v)
    return v


def _flag(d: dict, key: str, default: bool) -> bool:
    v = d.get(key, default)
    if v is None:
        return default
    if not isinstance(v, bool):
        raise InputError(N_("quantization_config field {key!r} must be true or false, got {v!r}"),
                         key=key, v=v)
    return v


def _names(d: dict, *keys: str) -> tuple[str, ...]:
    for k in keys:
        v = d.get(k)
        if v is None:
            continue
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise InputError(N_("quantization_config field {k!r} must be a list of module names"), k=k)
        return tuple(v)
    return ()


def from_quantization_config(q: dict) -> Quantization:
    """A :class:`Quantization` from a config.json's ``quantization_config`` block; unknown or
    malformed blocks raise InputError naming the field."""
    if not isinstance(q, dict):
        raise InputError(N_("quantization_config must be a JSON object"))
    method = q.get("quant_method")
    if not isinstance(method, str):
        raise InputError(N_("quantization_config has no 'quant_method' string"))
    method = method.lower()
    if method == "awq":
        bits = _num(q, "bits", _num(q, "w_bit", 4))
        if bits != 4:
            raise InputError(N_("AWQ checkpoints are 4-bit (AutoAWQ's kernels), got bits = {bits}"),
                             bits=bits)
        g = _num(q, "group_size", _num(q, "q_group_size", 128))
        version = str(q.get("version") or q.get("format") or "gemm").lower()
        if version not in ("gemm", "gemv", "gemv_fast"):
            raise InputError(N_("AWQ version {version!r} is not known (gemm, gemv, gemv_fast)"),
                             version=version)
        return Quantization("awq", bits=4, group_size=g, zero_point=_flag(q, "zero_point", True), version=version,
                            skip=_names(q, "modules_to_not_convert"), skip_rule="substring", unquantized_dtype="fp16",
                            label=Text(N_("AWQ {bits}-bit, group {group} ({version})"), bits=bits, group=g,
                                       version=version))
    if method == "gptq":
        bits = _num(q, "bits", None)
        if bits not in (2, 3, 4, 8):
            raise InputError(N_("GPTQ bits must be 2, 3, 4 or 8, got {bits!r}"), bits=bits)
        g = _num(q, "group_size", 128)
        pack = str(q.get("pack_dtype") or "int32")
        pack_bits = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}.get(pack.replace("torch.", ""))
        if pack_bits is None:
            raise InputError(N_("GPTQ pack_dtype {pack!r} is not known"), pack=pack)
        skip = tuple(k[2:] for k in (q.get("dynamic") or {}) if isinstance(k, str) and k.startswith("-:"))
        return Quantization("gptq", bits=bits, group_size=g, pack_bits=pack_bits,
                            quantize_lm_head=_flag(q, "lm_head", False), skip=skip,
                            skip_rule="hf", unquantized_dtype="fp16",
                            label=Text(N_("GPTQ {bits}-bit, group {group}"), bits=bits, group=g))
    if method == "bitsandbytes":
        four = _flag(q, "load_in_4bit", False) or _flag(q, "_load_in_4bit", False)
        eight = _flag(q, "load_in_8bit", False) or _flag(q, "_load_in_8bit", False)
        if four == eight:
            raise InputError(N_("a bitsandbytes quantization_config needs exactly one of load_in_4bit / load_in_8bit"))
        skip = _names(q, "llm_int8_skip_modules")
        if four:
            qt = str(q.get("bnb_4bit_quant_type") or "fp4")
            if qt not in ("nf4", "fp4"):
                raise InputError(N_("bnb_4bit_quant_type must be nf4 or fp4, got {qt!r}"), qt=qt)
            storage = str(q.get("bnb_4bit_quant_storage") or "uint8").replace("torch.", "")
            if storage not in STORAGE_BYTES:
                raise InputError(N_("bnb_4bit_quant_storage {storage!r} is not known"), storage=storage)
            dq = _flag(q, "bnb_4bit_use_double_quant", False)
            return Quantization("bitsandbytes", bits=4, quant_type=qt, double_quant=dq, quant_storage=storage,
                                skip=skip, label=Text(N_("bitsandbytes 4-bit {type} + double quant"), type=qt) if dq else
                                Text(N_("bitsandbytes 4-bit {type}"), type=qt))
        return Quantization("bitsandbytes", bits=8, skip=skip, activations=Text(N_("int8 with fp16 outlier columns (LLM.int8)")),
                            label="bitsandbytes 8-bit (LLM.int8)")
    if method == "fp8":
        blk = q.get("weight_block_size", [128, 128])
        if blk is not None and (not isinstance(blk, list) or len(blk) != 2
                                or not all(isinstance(x, int) and x > 0 for x in blk)):
            raise InputError(N_("fp8 weight_block_size must be two whole numbers or null, got {blk!r}"),
                             blk=blk)
        scale_fmt = str(q.get("scale_fmt") or "float")
        static = str(q.get("activation_scheme") or "dynamic") == "static"
        return Quantization("fp8", bits=8, block=tuple(blk) if blk else None, scale_fmt=scale_fmt,
                            static_activations=static, skip=_names(q, "modules_to_not_convert", "ignored_layers"),
                            activations=Text(N_("fp8 (static scales): W8A8")) if static else
                            Text(N_("fp8 (dynamic scales): W8A8")),
                            label=Text(N_("fp8 e4m3, blocks {rows}×{cols}"), rows=blk[0], cols=blk[1]) if blk else
                            Text(N_("fp8 e4m3, per tensor")))
    if method == "compressed-tensors":
        return _compressed_tensors(q)
    if method == "mxfp4":
        return Quantization("mxfp4", bits=4, group_size=32, skip=_names(q, "modules_to_not_convert"),
                            label=Text(N_("mxfp4 (experts: e2m1, e8m0 scale per 32)")))
    if method == "modelopt":
        algo = str(q.get("quant_algo") or "").upper()
        if algo != "NVFP4":
            raise InputError(N_("ModelOpt quant_algo {algo!r} is not supported (NVFP4 is)"),
                             algo=algo or None)
        return Quantization("modelopt", bits=4, group_size=16, skip=_names(q, "exclude_modules", "ignore"),
                            skip_rule="hf", activations="nvfp4 (W4A4)", label="NVFP4 (ModelOpt)")
    if method == "bitnet":
        cls = str(q.get("linear_class") or "bitlinear").lower()
        mode = str(q.get("quantization_mode") or "offline").lower()
        if cls not in ("bitlinear", "autobitlinear") or mode not in ("online", "offline"):
            raise InputError(N_("a bitnet quantization_config's linear_class is bitlinear or autobitlinear and its "
                                "quantization_mode online or offline, got {cls!r} and {mode!r}"), cls=cls[:40],
                             mode=mode[:40])
        if q.get("use_rms_norm"):
            raise InputError(N_("a bitnet quantization_config with use_rms_norm (a norm inside every linear) is not "
                                "read yet"))
        packed = not (cls == "autobitlinear" and mode == "online")
        return Quantization("bitnet", bits=2 if packed else 0, group_size=-1, skip=_names(q, "modules_to_not_convert"),
                            label=Text(N_("BitNet b1.58: ternary weights, four to a byte, one scale per linear"))
                            if packed else Text(N_("BitNet b1.58 (online): weights stored unquantized, made ternary at "
                                                   "every forward")))
    raise InputError(N_("quant_method {method!r} is not supported; supported: awq, gptq, bitsandbytes, fp8, "
                        "compressed-tensors, mxfp4, modelopt (NVFP4), bitnet"), method=method)


def _compressed_tensors(q: dict) -> Quantization:
    groups = q.get("config_groups")
    if not isinstance(groups, dict) or not groups:
        raise InputError(N_("a compressed-tensors quantization_config needs 'config_groups'"))
    if len(groups) > 1:
        raise InputError(N_("compressed-tensors checkpoints with more than one config group are not supported yet"))
    grp = next(iter(groups.values()))
    w = grp.get("weights") if isinstance(grp, dict) else None
    if not isinstance(w, dict):
        raise InputError(N_("the compressed-tensors config group has no 'weights' scheme"))
    bits = _num(w, "num_bits", 8)
    typ = str(w.get("type") or "int")
    strategy = str(w.get("strategy") or "tensor")
    g = _num(w, "group_size", 128) if strategy in ("group", "tensor_group") else 128
    blk = w.get("block_structure") or None
    ia = grp.get("input_activations")
    fmt = grp.get("format") or q.get("format")
    if fmt in (None, "mixed-precision"):  # inferred as compressed-tensors infers a module's format
        if typ == "float" and bits == 4:
            fmt = "nvfp4-pack-quantized" if g == 16 else "mxfp4-pack-quantized"
        elif bits == 8 and typ == "float":
            fmt = "float-quantized"
        elif bits == 8 and isinstance(ia, dict):
            fmt = "int-quantized"
        else:
            fmt = "pack-quantized"
    acts = ""
    static = False
    if isinstance(ia, dict):
        dyn = ia.get("dynamic")
        kind = f"{ia.get('type', 'int')}{ia.get('num_bits', 8)}"
        acts = Text(N_("{kind} activations ({strategy}, static scales)") if dyn is False else
                    N_("{kind} activations ({strategy}, dynamic scales)"), kind=kind,
                    strategy=ia.get("strategy", "tensor"))
        # a static input scale is stored; NVFP4's "local" activations keep a global scale per tensor
        static = dyn == "local" if str(fmt).startswith("nvfp4") else dyn is False
    targets = grp.get("targets") or ["Linear"]
    return Quantization("compressed-tensors", bits=bits, group_size=g, num_bits_type=typ, strategy=strategy,
                        symmetric=bool(w.get("symmetric", True)), ct_format=str(fmt),
                        block=tuple(blk) if blk else None,
                        actorder_group=w.get("actorder") == "group", static_activations=static,
                        targets=tuple(str(t) for t in targets), skip=_names(q, "ignore"), skip_rule="ct",
                        activations=acts, label=f"compressed-tensors {fmt} ({typ}{bits}, {strategy})")


def from_mlx_quantization(q) -> Quantization:
    """An MLX checkpoint's ``quantization`` block (mlx_lm writes ``{"group_size": 64, "bits": 4}``, a ``mode``
    for the microscaled formats, and per-module entries — ``{"group_size", "bits"}`` or ``false`` — for layers
    quantized otherwise). Every Linear and Embedding whose input width the group size divides is stored
    quantized (mlx_lm's default predicate): ``weight`` uint32 ``[O, I·bits/32]``, ``scales`` ``[O, I/g]`` at
    the model dtype (uint8 for mxfp4 / mxfp8 / nvfp4) and, for affine, ``biases`` like the scales."""
    if not isinstance(q, dict):
        raise InputError(N_("the MLX 'quantization' block must be a JSON object"))
    mode = str(q.get("mode") or "affine").lower()
    if mode not in MLX_MODES:
        raise InputError(N_("MLX quantization mode {mode!r} is not known ({choices})"), mode=mode[:40],
                         choices=", ".join(MLX_MODES))
    groups, bits_ok, _, _ = MLX_MODES[mode]

    def read(block: dict, where: str) -> tuple[int, int]:
        b = block.get("bits", 4 if mode != "mxfp8" else 8)
        g = block.get("group_size", 64 if mode == "affine" else groups[0])
        if isinstance(b, bool) or b not in bits_ok or isinstance(g, bool) or g not in groups:
            raise InputError(N_("MLX quantization {where}: bits {bits!r} and group_size {group!r} are not an MLX {mode} "
                                "layout (bits {bits_ok}, groups {groups})"), where=where, bits=b, group=g, mode=mode,
                             bits_ok=", ".join(map(str, bits_ok)), groups=", ".join(map(str, groups)))
        return b, g

    bits, g = read(q, "block")
    overrides = []
    for k, v in q.items():
        if k in ("bits", "group_size", "mode", "quant_method"):
            continue
        if v is False:
            overrides.append((str(k), 0, 0))
        elif isinstance(v, dict):
            overrides.append((str(k), *read(v, repr(str(k)[:60]))))
        else:
            raise InputError(N_("MLX quantization entry {key!r} must be an object or false"), key=str(k)[:60])
    label = Text(N_("MLX {mode} {bits}-bit, group {group}"), mode=mode, bits=bits, group=g)
    return Quantization("mlx", bits=bits, group_size=g, mlx_mode=mode, overrides=tuple(overrides),
                        label=label)
