"""Serving: TTFT, TPOT and throughput against concurrency, the KV limit, the best concurrency under a target."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gemmlib.core.errors import InputError
from gemmlib.core.hardware import get_hardware
from gemmlib.llm.accounting import Workload
from gemmlib.llm.parallel import Parallel, phase
from gemmlib.llm.presets import from_name
from gemmlib.llm.scaleout import per_gpu_memory
from gemmlib.llm.serving import point, serving

CFG = from_name("llama-3-70b")
HW = get_hardware("h100")
WL = Workload(seq_len=2048, new_tokens=256)
PAR = Parallel(tp=8)


def test_a_point_is_the_prefill_and_the_mean_decode_step():
    p = point(CFG, WL, HW, PAR, 12)
    w = replace(WL, batch=12)
    assert p.ttft_s == phase(CFG, w, HW, PAR, "prefill").time_s
    assert p.tpot_s == pytest.approx(phase(CFG, w, HW, PAR, "decode").time_s / 256)
    assert p.tokens_per_s == pytest.approx(12 / p.tpot_s) and p.tokens_per_s_per_gpu == pytest.approx(12 / p.tpot_s / 8)


def test_curve_up_to_the_kv_limit_and_the_best_under_a_target():
    sv = serving(CFG, WL, HW, PAR, tpot_target_s=0.05)
    cs = [p.concurrency for p in sv.points]
    assert cs[0] == 1 and cs[-1] == sv.kv_limit and cs == sorted(cs)
    assert per_gpu_memory(CFG, replace(WL, batch=sv.kv_limit), HW, PAR).fits
    assert not per_gpu_memory(CFG, replace(WL, batch=sv.kv_limit + 1), HW, PAR).fits
    tpots = [p.tpot_s for p in sv.points]
    assert tpots == sorted(tpots)  # more concurrency, slower tokens ...
    tps = [p.tokens_per_s for p in sv.points]
    assert tps == sorted(tps)  # ... and more of them
    b = sv.best
    assert b is not None and b.tpot_s <= 0.05 < point(CFG, WL, HW, PAR, b.concurrency + 1).tpot_s
    assert b.concurrency in cs
    both = serving(CFG, WL, HW, PAR, tpot_target_s=0.05, ttft_target_s=1.0)
    assert both.best.ttft_s <= 1.0 < point(CFG, WL, HW, PAR, both.best.concurrency + 1).ttft_s
    assert serving(CFG, WL, HW, PAR, tpot_target_s=1e-4).best is None  # nothing is that fast


def test_bad_serving_input():
    with pytest.raises(InputError, match="new-tokens"):
        serving(CFG, replace(WL, new_tokens=0), HW, PAR)
    with pytest.raises(InputError, match="TPOT target"):
        serving(CFG, WL, HW, PAR, tpot_target_s=-1)
    one = serving(CFG, WL, HW, Parallel(), tpot_target_s=0.05)  # 70B in bf16 does not fit one H100
    assert one.kv_limit == 0 and not one.points[0].fits and one.best is None
