"""The calibrated estimate: each op at the time measured for its shape.

The reference is a made-up device whose every kernel call takes ``overhead + work / rate``: the
calibration is filled with that device's times at the shapes a calibration run measures, and the
calibrated estimate must reproduce, op by op, the sum of that device's time over every kernel call
a forward pass makes — enumerated here from the model's shapes, independently of the accounting.
"""

import pytest

from gemmlib.core.calibration import Calibration, GemmPoint, OtherPoint
from gemmlib.core.errors import InputError
from gemmlib.core.hardware import get_hardware
from gemmlib.llm import accounting as acc
from gemmlib.llm.calibrated import calibrated_efficiency, calibrated_estimate, other_calls
from gemmlib.llm.config import ModelConfig

OVERHEAD, FLOPS, BW = 5e-6, 1e11, 2e10
MODEL = ModelConfig(layers=3, hidden=64, heads=8, kv_heads=2, ffn=160, vocab=500, name="toy")
B, S, N = 2, 16, 5  # N odd: the decode keys' mean S + (N + 1) / 2 is a whole number


def gemm_call(flops):
    return OVERHEAD + flops / FLOPS


def other_call(nbytes):
    return OVERHEAD + nbytes / BW


def _device_calibration(wl):
    """What `calibrate` would measure on the made-up device, at the shapes it measures."""
    m1 = MODEL.replace(layers=1)
    pts = []
    lin = {(o.n, o.k) for o in acc.prefill_ops(m1, acc.replace(wl, lm_head="all")) if o.is_gemm
           and o.name not in acc.ATTENTION_PRODUCTS}
    for n, k in lin:
        for m in (1, 2, 4, 8, 16, B, B * S):
            pts.append(GemmPoint("linear", "x", "fp32", m, n, k, 1, gemm_call(2 * m * n * k), 2.0 * m * n * k, 1.0))
    hd, groups = MODEL.head_dim, B * MODEL.heads
    for q, keys in [(S, S), (S // 2, S // 2)] + [(1, S + i + 1) for i in range(N)]:
        f = 2.0 * groups * q * keys * hd
        pts.append(GemmPoint("attn_scores", "s", "fp32", q, keys, hd, groups, gemm_call(f), f, 1.0))
        pts.append(GemmPoint("attn_values", "v", "fp32", q, hd, keys, groups, gemm_call(f), f, 1.0))
    other = []
    for phase, ops, w in (("prefill", acc.prefill_other_ops(m1, acc.replace(wl, new_tokens=0)),
                           acc.replace(wl, new_tokens=0)),
                          ("decode", acc.decode_other_ops(m1, acc.replace(wl, seq_len=S + N // 2, new_tokens=1)),
                           acc.replace(wl, seq_len=S + N // 2, new_tokens=1))):
        for o in ops:
            per_call = o.bytes / other_calls(o, m1, w)
            other.append(OtherPoint(o.name, "fp32", phase, o.m, o.n, other_call(per_call), per_call))
    return Calibration("cpu", "Made-up device", "toy", ("fp32",), tuple(pts), tuple(other))


def _kernel_calls(wl):
    """Every kernel call of the forward passes, from the model's shapes: (op name, phase, seconds)."""
    m, L, hd, h = MODEL, MODEL.layers, MODEL.head_dim, MODEL.heads
    d, q, kv, f = m.hidden, m.q_dim, m.kv_dim, m.ffn
    calls = []
    for phase, steps, rows in (("prefill", [S], B * S), ("decode", [S + i + 1 for i in range(N)], B)):
        for keys in steps:
            queries = S if phase == "prefill" else 1
            for _ in range(L):
                for name, n_, k_ in (("q_proj", q, d), ("k_proj", kv, d), ("v_proj", kv, d), ("o_proj", d, q),
                                     ("gate_proj", f, d), ("up_proj", f, d), ("down_proj", d, f)):
                    calls.append((name, phase, gemm_call(2 * rows * n_ * k_)))
                for name in ("attn_scores", "attn_values"):
                    calls.append((name, phase, gemm_call(2.0 * B * h * queries * keys * hd)))
            head_rows = rows if phase == "decode" or wl.lm_head == "all" else B
            calls.append(("lm_head", phase, gemm_call(2 * head_rows * m.vocab * d)))
    return calls


@pytest.fixture(scope="module")
def setup():
    wl = acc.Workload(batch=B, seq_len=S, new_tokens=N, lm_head="all", weight_dtype="fp32", act_dtype="fp32",
                      kv_dtype="fp32", convention=acc.REFERENCE)  # the device runs the eager block
    cal = _device_calibration(wl)
    return wl, cal, calibrated_estimate(MODEL, wl, cal)


def test_every_gemm_is_timed_as_the_device_runs_it(setup):
    wl, cal, est = setup
    truth: dict[tuple[str, str], float] = {}
    for name, phase, t in _kernel_calls(wl):
        truth[(name, phase)] = truth.get((name, phase), 0.0) + t
    for phase in (est.prefill, est.decode):
        for o in phase.gemm_ops:
            assert o.time_s == pytest.approx(truth[(o.name, o.phase)], rel=1e-9), (o.name, o.phase)


def test_every_other_op_is_timed_per_call(setup):
    # norms: 2 per layer + the final one, same rows (lm_head="all"); residual: 2 per layer; rotary, softmax,
    # K/V repeat, activation: 1 per layer; embedding: 1 per step
    wl, cal, est = setup
    per_layer = {"norms": 2, "residual": 2, "rotary": 1, "attn_softmax": 1, "kv_repeat": 1, "activation": 1}
    for phase, steps in ((est.prefill, 1), (est.decode, N)):
        for o in phase.other_ops:
            calls = steps * (1 if o.name == "embedding" else MODEL.layers * per_layer[o.name]
                             + (1 if o.name == "norms" else 0))
            if o.phase == "decode" and o.name in ("attn_softmax", "kv_repeat"):
                continue  # their bytes grow with the keys: checked below at the calibrated mean
            assert o.time_s == pytest.approx(calls * other_call(o.bytes / calls), rel=1e-9), (o.name, o.phase)
    dec = est.decode.by_name()["attn_softmax"]
    assert dec.time_s == pytest.approx(N * MODEL.layers * other_call(dec.bytes / (N * MODEL.layers)), rel=1e-6)


def test_efficiency_is_relative_to_the_calibrated_roof(setup):
    wl, cal, est = setup
    assert est.hardware.name == "Made-up device (calibrated)" and "calibrated" in est.efficiency_label
    eff = calibrated_efficiency(cal, MODEL, wl)
    hw = cal.hardware()
    for o in est.prefill.ops:
        e = eff(o)
        assert 0 < e <= 1 + 1e-9  # nothing beats the best rate measured
        assert o.time_s == pytest.approx(acc.roofline_time(o.flops, o.bytes, hw, "fp32", 1.0).seconds / e)


def test_a_per_op_efficiency_equal_to_a_constant_is_that_constant():
    wl = acc.Workload(batch=2, seq_len=64, new_tokens=9, weight_dtype="bf16", act_dtype="bf16", kv_dtype="bf16")
    hw = get_hardware("h100")
    a = acc.estimate(MODEL, wl, hw, efficiency=0.6)
    b = acc.estimate(MODEL, wl, hw, efficiency=lambda op: 0.6)
    for pa, pb in ((a.prefill, b.prefill), (a.decode, b.decode)):
        for x, y in zip(pa.ops, pb.ops, strict=True):
            assert y.time_s == pytest.approx(x.time_s, rel=1e-12) and y.bound.split()[0] == x.bound.split()[0]
    with pytest.raises(InputError, match="positive"):
        acc.estimate(MODEL, wl, hw, efficiency=lambda op: 0.0)


def test_a_dtype_that_was_not_calibrated_is_refused(setup):
    wl, cal, _ = setup
    with pytest.raises(InputError, match="calibrate --dtypes bf16"):
        calibrated_estimate(MODEL, acc.replace(wl, act_dtype="bf16"), cal)


def test_sliding_layers_and_shared_experts_take_the_calibrated_figures(setup):
    """Issue 11's op names map onto the calibration: a sliding layer's products are products, a shared
    expert's and a MoE model's dense layers' GEMMs are linears, their activations element-wise ops."""
    wl, cal, _ = setup
    model = MODEL.replace(sliding_window=4, layer_types="SFS", experts=4, experts_per_token=2, expert_ffn=32,
                          shared_expert_ffn=32, moe_layers="DMM")
    est = calibrated_estimate(model, wl, cal)
    names = {o.name for o in est.prefill.ops + est.decode.ops}
    assert {"attn_scores_sliding", "shared_down_proj", "dense_up_proj", "shared_activation"} <= names
    assert all(o.time_s > 0 for o in est.prefill.ops + est.decode.ops)


def test_block_sparse_products_take_the_calibrated_figures_at_the_pairs_they_read(setup):
    """MiniMax-M3's block-sparse products (an engine's fused attention) are timed by the calibration's attention
    figures, scaled to the pairs they multiply: fewer than a full layer's of the same shape, so less time per run."""
    wl, cal, _ = setup
    model = MODEL.replace(layer_types="FIF", index_heads=2, index_head_dim=8, index_block=2, index_topk=2)
    engine = acc.replace(wl, attention="fused", causal=True)
    est = calibrated_estimate(model, engine, cal)
    for phase in (est.prefill, est.decode):
        ops = {o.name: o for o in phase.ops}
        sparse, full = ops["attn_scores_sparse"], ops["attn_scores"]
        assert 0 < sparse.time_s / sparse.count < full.time_s / full.count
