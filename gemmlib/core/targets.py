"""The article's targets for LLM work on a GPU, and the monitor's metric labels.

One place for them: the profiler and the monitor check against them, the charts draw them.
"""

from gemmlib.core.i18n import N_

GEMM_TARGET = 0.80  # GEMMs should take ≥ 80 % of a transformer's time
UTIL_TARGET = 0.75  # SM (kernel-busy) utilization ≥ 75 %
BANDWIDTH_TARGET = 0.60  # memory-controller utilization ≥ 60 %

METRICS: dict[str, str] = {  # NVML sample field -> label with unit (N_: the page translates it), in drawing order
    "sm_util": N_("SM utilization (%)"),
    "mem_util": N_("memory bandwidth utilization (%)"),
    "sm_clock_mhz": N_("SM clock (MHz)"),
    "mem_clock_mhz": N_("memory clock (MHz)"),
    "power_w": N_("power (W)"),
    "temp_c": N_("temperature (°C)"),
    "mem_used_gib": N_("memory used (GiB)"),
}
