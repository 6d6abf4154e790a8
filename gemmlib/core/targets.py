"""The article's targets for LLM work on a GPU, and the monitor's metric labels.

One place for them: the profiler and the monitor check against them, the charts draw them.
"""

GEMM_TARGET = 0.80  # GEMMs should take ≥ 80 % of a transformer's time
UTIL_TARGET = 0.75  # SM (kernel-busy) utilization ≥ 75 %
BANDWIDTH_TARGET = 0.60  # memory-controller utilization ≥ 60 %

METRICS: dict[str, str] = {  # NVML sample field -> label with unit, in drawing order
    "sm_util": "SM utilization (%)",
    "mem_util": "memory bandwidth utilization (%)",
    "sm_clock_mhz": "SM clock (MHz)",
    "mem_clock_mhz": "memory clock (MHz)",
    "power_w": "power (W)",
    "temp_c": "temperature (°C)",
    "mem_used_gib": "memory used (GiB)",
}
