"""gemmlib: count, explain, estimate and measure GEMM (D = α·A·B + β·C).

Importing gemmlib is light on purpose: numpy and the standard library only.
torch is imported inside the modules that measure, and only when they run;
streamlit is never imported here (pages import gemmlib, not the reverse).
"""

from gemmlib.core.errors import InputError
from gemmlib.core.flops import arithmetic_intensity, gemm_bytes, gemm_flops

__all__ = ["InputError", "arithmetic_intensity", "gemm_bytes", "gemm_flops"]
__version__ = "0.1.0"
