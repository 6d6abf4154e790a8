"""Data types the app talks about: their names, sizes and what they are for.

One table, used everywhere a byte count or a peak is looked up, so that the
estimator, the FLOPs page and the benchmarks agree on what "bf16" means.
"""

from __future__ import annotations

from dataclasses import dataclass

from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_


@dataclass(frozen=True)
class DType:
    name: str  # short name used in the UI, the CLI and the catalogue
    bytes: float  # storage size of one element
    label: str  # human description
    accumulates_in: str  # what a tensor-core / BLAS GEMM accumulates in


DTYPES: dict[str, DType] = {
    "fp64": DType("fp64", 8, "IEEE double", "fp64"),
    "fp32": DType("fp32", 4, "IEEE single", "fp32"),
    # tf32 is stored as fp32; only the tensor-core multiply rounds to 10 mantissa bits.
    "tf32": DType("tf32", 4, "fp32 storage, 10-bit mantissa multiply", "fp32"),
    "fp16": DType("fp16", 2, "IEEE half", "fp32"),
    "bf16": DType("bf16", 2, "bfloat16 (8-bit exponent)", "fp32"),
    "fp8": DType("fp8", 1, "float8 e4m3", "fp32"),
    "int8": DType("int8", 1, "8-bit integer, scaled", "int32"),
    # 4-bit floats (e2m1) are block-scaled (nvfp4, mxfp4): the scales come on top of the half byte.
    "fp4": DType("fp4", 0.5, "float4 e2m1, block-scaled (nvfp4 / mxfp4)", "fp32"),
}

# Dtypes a GEMM on an accelerator is quoted in (the catalogue's columns).
COMPUTE_DTYPES: tuple[str, ...] = ("fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4")


def get_dtype(name: str) -> DType:
    """Look a dtype up by name (case-insensitive); a clear error when unknown."""
    key = str(name).strip().lower()
    aliases = {"float32": "fp32", "float16": "fp16", "half": "fp16", "bfloat16": "bf16",
               "float64": "fp64", "double": "fp64", "e4m3": "fp8", "float8": "fp8",
               "e2m1": "fp4", "nvfp4": "fp4", "mxfp4": "fp4"}
    key = aliases.get(key, key)
    if key not in DTYPES:
        raise InputError(N_("unknown dtype {name!r}; choose one of {choices}"), name=str(name)[:60],
                         choices=", ".join(DTYPES))
    return DTYPES[key]


def dtype_bytes(name: str) -> float:
    return get_dtype(name).bytes
