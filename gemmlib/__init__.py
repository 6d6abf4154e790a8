"""gemmlib: count, explain, estimate and measure GEMM (D = α·A·B + β·C).

Importing gemmlib is light on purpose: ``import gemmlib`` loads nothing beyond this file
(the names below are looked up on first use, PEP 562), and each wing loads what it needs.
torch is imported inside the modules that measure, and only when they run; streamlit is
never imported here (pages import gemmlib, not the reverse).
"""

from __future__ import annotations

import importlib

# public name -> the module that defines it (imported on first access)
_EXPORTS = {
    "InputError": "gemmlib.core.errors",
    "arithmetic_intensity": "gemmlib.core.flops",
    "gemm_bytes": "gemmlib.core.flops",
    "gemm_flops": "gemmlib.core.flops",
}

__all__ = sorted(_EXPORTS)
__version__ = "0.1.0"


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'gemmlib' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
