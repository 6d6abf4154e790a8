"""The estimate, calibrated: every op at the efficiency measured for its shape on this device.

A :class:`gemmlib.core.calibration.Calibration` holds plain measurements (``python -m gemmlib
calibrate``). This module maps each op of the accounting onto them:

* a weight GEMM (q/k/v/o, gate/up/down, router, LM head) of one run M×K·K×N → the seconds
  measured for that (N, K) at that M, interpolated;
* an attention product → the batched product measured at the prefill or decode shape (a decode
  op whose keys grow by one per step is taken at its mean key count);
* a non-GEMM op → the bandwidth measured for that op at the bytes one call moves (one call: one
  layer of one step; the norms and residual adds run twice per layer).

Its efficiency is then the roofline time on the calibration's own roof (best FLOP/s and bytes/s
measured, ``Calibration.hardware()``) over that calibrated time — the ``OpEfficiency`` that
:func:`gemmlib.llm.accounting.estimate` takes. No torch here.
"""

from __future__ import annotations

from gemmlib.core.calibration import Calibration
from gemmlib.core.errors import InputError
from gemmlib.core.flops import roofline_time
from gemmlib.core.i18n import N_
from gemmlib.llm.accounting import ATTENTION_PRODUCTS, Estimate, Op, OpEfficiency, Workload, estimate
from gemmlib.llm.config import ModelConfig

# How many times a layer's forward pass calls each non-GEMM op in one step (gemmlib.measure.profiler's
# block: two norms and two residual adds; rotary on q and k, the K/V repeat and the softmax once each).
CALLS_PER_LAYER = {"norms": 2, "residual": 2, "rotary": 1, "kv_repeat": 1, "attn_softmax": 1, "activation": 1,
                   "moe_routing": 1, "act_quant": 2, "act_quant_inner": 2}
PER_STEP = {"embedding": 1, "norms": 1}  # calls once per step besides the layers': the gather, the final norm


def other_calls(op: Op, cfg: ModelConfig, wl: Workload) -> int:
    """How many calls of a non-GEMM op its totals cover: (layers × calls per layer + calls per step) × steps."""
    steps = 1 if op.phase == "prefill" else max(1, wl.new_tokens)
    per_layer = 0 if op.name == "embedding" else (cfg.norms_per_layer if op.name == "norms" else
                                                   CALLS_PER_LAYER.get(op.name, 1))
    return (per_layer * cfg.layers + PER_STEP.get(op.name, 0)) * steps


def _pair_share(op: Op, keys: int, wl: Workload) -> float:
    """A product that reads fewer keys than its shape (DeepSeek-V4's compressed entries, MiniMax-M3's blocks): the
    share of the query-key pairs a full product of the same shape (causal in a prefill) multiplies, which its time is
    scaled by."""
    width = op.k if op.name.startswith("attn_scores") else op.n
    pairs = op.flops / max(2.0 * width * op.count, 1.0)
    m = op.m
    full = m * (m + 1) / 2 + m * (keys - m) if op.phase == "prefill" and wl.causal and m > 1 else m * keys
    return min(1.0, pairs / full) if full > 0 else 1.0


def op_seconds(cal: Calibration, op: Op, cfg: ModelConfig, wl: Workload) -> tuple[float, str]:
    """The calibrated time of ``op`` (all its runs), and a note when it was scaled or borrowed."""
    dtype = wl.act_dtype
    if op.is_gemm:
        # a sliding layer's products have the same shapes as a full one's (its fewer keys are in n / k)
        family = "linear"
        if op.name in ATTENTION_PRODUCTS:
            family = op.name.removesuffix("_sliding").removesuffix("_compressed").removesuffix("_sparse")
        n, k = op.n, op.k
        if op.n_last:  # decode scores: keys from n to n_last over the steps
            n = round((op.n + op.n_last) / 2)
        if op.k_last:
            k = round((op.k + op.k_last) / 2)
        per, note = cal.gemm_seconds(family, dtype, op.m, n, k)
        if per is None:
            raise InputError(N_("the calibration of {device_name} has no {dtype} GEMMs; run `python -m gemmlib calibrate "
                                "--dtypes {dtype}`"), device_name=cal.device_name, dtype=dtype)
        if op.name.endswith(("_compressed", "_sparse")):
            per *= _pair_share(op, n if family == "attn_scores" else k, wl)
        return per * op.count, note
    per_call = op.bytes / other_calls(op, cfg, wl)
    bw, note = cal.other_bandwidth(op.name, dtype, per_call)
    if bw is None:  # an op the calibration did not time (e.g. MoE routing): the nearest element-wise op's figure
        nearest = [p for p in cal.other if p.dtype == dtype]
        if not nearest:
            raise InputError(N_("the calibration of {device_name} has no {dtype} element-wise ops; run `python -m gemmlib "
                                "calibrate --dtypes {dtype}`"), device_name=cal.device_name, dtype=dtype)
        ref = min(nearest, key=lambda p: abs(p.bytes - per_call))
        bw, note = ref.bandwidth, f"{op.name} not calibrated: {ref.name}'s bandwidth used"
    return op.bytes / bw, note


def calibrated_efficiency(cal: Calibration, cfg: ModelConfig, wl: Workload) -> OpEfficiency:
    """op -> roofline time on the calibration's roof / calibrated time (≤ 1 for the measured shapes)."""
    hw = cal.hardware()
    dtype = wl.act_dtype

    def efficiency(op: Op) -> float:
        ideal = roofline_time(op.flops, op.bytes, hw, dtype, 1.0).seconds
        seconds, _ = op_seconds(cal, op, cfg, wl)
        return ideal / seconds

    return efficiency


def calibrated_estimate(cfg: ModelConfig, wl: Workload, cal: Calibration) -> Estimate:
    """The estimate "NAME (calibrated)": the calibration's roof, each op at its measured efficiency."""
    if wl.act_dtype not in cal.dtypes:
        raise InputError(N_("{name} was calibrated in {choices}, not {act_dtype}; run `python -m gemmlib calibrate "
                            "--dtypes {act_dtype}` or pick that activation dtype"),
                         name=cal.name, choices=", ".join(cal.dtypes), act_dtype=wl.act_dtype)
    return estimate(cfg, wl, cal.hardware(), efficiency=calibrated_efficiency(cal, cfg, wl),
                    efficiency_model=f"per op, calibrated on this device ({cal.model})")
