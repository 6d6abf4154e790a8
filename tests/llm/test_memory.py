"""Per-GPU memory against hand computation from the papers: Korthikanti et al. 2022 Table 2 for activation
memory, ZeRO's Figure 1 for model states; the largest batch that fits; the inference prefill peak."""

from __future__ import annotations

import pytest

from gemmlib.core.errors import InputError
from gemmlib.core.hardware import get_hardware
from gemmlib.llm.accounting import Workload
from gemmlib.llm.config import ModelConfig
from gemmlib.llm.memory import (
    inference_activation_bytes,
    largest_fitting,
    layer_activation_bytes,
    layer_activation_terms,
    model_state_bytes,
    training_activation_bytes,
)
from gemmlib.llm.parallel import Parallel
from gemmlib.llm.presets import from_name
from gemmlib.llm.scaleout import estimate, per_gpu_memory

# The paper's GPT: multi-head attention, a GeLU MLP of 4h, dropout, 16-bit activations (GPT-3 175B's shape).
GPT3 = ModelConfig(layers=96, hidden=12288, heads=96, ffn=4 * 12288, vocab=51200, mlp="plain", norm="layer")
S, B = 2048, 1


def _paper(t: int, sp: bool, recompute: str) -> float:
    """Korthikanti et al., Table 2: activation bytes per layer, typed from the paper."""
    s, b, h, a = S, B, GPT3.hidden, GPT3.heads
    sbh = s * b * h
    if recompute == "full":
        return 2 * sbh / (t if sp else 1)
    if t == 1:
        return sbh * (34 + 5 * a * s / h) if recompute == "none" else sbh * 34
    if sp:
        return sbh / t * (34 + 5 * a * s / h) if recompute == "none" else 34 * sbh / t
    return sbh * (10 + 24 / t + 5 * a * s / (h * t)) if recompute == "none" else sbh * (10 + 24 / t)


@pytest.mark.parametrize("t", [1, 2, 8])
@pytest.mark.parametrize("sp", [False, True])
@pytest.mark.parametrize("recompute", ["none", "selective", "full"])
def test_korthikanti_table_2(t, sp, recompute):
    got = layer_activation_bytes(GPT3, S, B, tp=t, sequence_parallel=sp, recompute=recompute, dropout=True)
    assert got == pytest.approx(_paper(t, sp, recompute), rel=1e-12)


def test_terms_add_up_to_the_paper_blocks():
    """§4.1: attention 11sbh + 5as²b, MLP 19sbh, norms 4sbh."""
    terms = layer_activation_terms(GPT3, S, B, dropout=True)
    sbh = S * B * GPT3.hidden
    s2 = sum(t["bytes"] for t in terms if t["s2"])
    assert s2 == 5 * GPT3.heads * S * S * B
    assert sum(t["bytes"] for t in terms) == pytest.approx(34 * sbh + s2)
    assert sum(t["bytes"] for t in terms if t["split"] == "") == 10 * sbh  # what TP leaves whole


def test_adaptations_gqa_swiglu_no_dropout_fused():
    """Derived, not in the paper: K/V at the KV width, SwiGLU's four F-wide tensors (three when fused: the fused
    SwiGLU saves only gate|up), no 1-byte masks, and a fused kernel's 4-byte log-sum-exp per row and head
    instead of the s² tensors."""
    cfg = from_name("llama-3-8b")
    s, b = 4096, 2
    sb, h, f, kv, q = s * b, cfg.hidden, cfg.ffn, cfg.kv_dim, cfg.q_dim
    eager = layer_activation_bytes(cfg, s, b)
    assert eager == 2 * sb * (4 * h + q + 2 * kv + q + 4 * f) + 2 * cfg.heads * s * s * b
    fused = layer_activation_bytes(cfg, s, b, attention="fused")
    assert fused == 2 * sb * (4 * h + q + 2 * kv + q + 3 * f) + 4 * cfg.heads * s * b
    assert layer_activation_bytes(cfg, s, b, recompute="selective") == fused - 4 * cfg.heads * s * b + 2 * sb * f
    # 8 KV heads over 16 ranks: each keeps one, K and V are not split further than 8 ways
    t16 = layer_activation_bytes(cfg, s, b, tp=16, attention="fused")
    t8 = layer_activation_bytes(cfg, s, b, tp=8, attention="fused")
    assert t8 - t16 == pytest.approx(2 * sb * (3 * f + 2 * q) / 16 + 4 * cfg.heads * s * b / 16)


def test_hyper_connections_keep_every_stream():
    """With n hyper-connection streams (DeepSeek-V4's mHC) a layer's input is n × hidden wide: the two residual-stream
    terms, full recomputation's kept input, torchtitan's op policy's kept input and a pipeline stage's send all carry
    every stream; nothing else in the layer changes."""
    from gemmlib.core.hardware import get_hardware as hw_of
    from gemmlib.llm.parallel import pipeline_send

    cfg = from_name("llama-3-8b")
    hc = cfg.replace(hyper_streams=4)
    s, b, h = 4096, 2, cfg.hidden
    plain, wide = (layer_activation_terms(c, s, b) for c in (cfg, hc))
    diff = {x["term"]: y["bytes"] - x["bytes"] for x, y in zip(plain, wide, strict=True) if x["bytes"] != y["bytes"]}
    assert diff == {"norm 1 input": 2 * s * b * 3 * h, "norm 2 input": 2 * s * b * 3 * h}
    assert layer_activation_bytes(hc, s, b, recompute="full") == 4 * layer_activation_bytes(cfg, s, b, recompute="full")
    assert (layer_activation_bytes(hc, s, b, recompute="op") - layer_activation_bytes(cfg, s, b, recompute="op")
            == 2 * s * b * 3 * h)  # (the layer's input only: the down projection's output stays hidden wide)
    wl, par = Workload(seq_len=s), Parallel(pp=2)
    sends = [pipeline_send(c, s * b, 1, wl, par, hw_of("H100 SXM")) for c in (cfg, hc)]
    assert sends[1].size_bytes == 4 * sends[0].size_bytes
    prefill = [inference_activation_bytes(c, wl, Parallel(), micro_batch=b) for c in (cfg, hc)]
    assert prefill[1] - prefill[0] == 2 * s * b * 3 * h  # the residual stream held beside the layer's work


def test_pipeline_first_stage_holds_every_layer_worth():
    """§4.2.3: with 1F1B the first stage keeps p micro-batches of L/p layers, i.e. L layers' worth."""
    cfg = from_name("llama-3-8b")
    wl = Workload(seq_len=2048, attention="eager")
    per = layer_activation_bytes(cfg, 2048, 1)
    one = training_activation_bytes(cfg, wl, Parallel(), micro_batch=1, microbatches=8)
    four = training_activation_bytes(cfg, wl, Parallel(pp=4), micro_batch=1, microbatches=8)
    assert four["first"] == pytest.approx(32 * per + 4 * 8 * 2048)  # + the int64 token ids in flight
    assert four["last"] == pytest.approx(8 * per + 2 * 2 * 2048 * cfg.hidden + 4 * 2048 * cfg.vocab)
    assert one["last"] == pytest.approx(32 * per + 8 * 2048 + 4 * 2048 * cfg.hidden + 4 * 2048 * cfg.vocab)


def test_zero_figure_1():
    """ZeRO Figure 1: Ψ = 7.5B, N_d = 64, K = 12: 120, 31.4, 16.6 and 1.9 GB per GPU."""
    psi, nd = 7.5e9, 64
    got = [sum(model_state_bytes(psi, z, nd).values()) / 1e9 for z in (0, 1, 2, 3)]
    assert got == pytest.approx([120, 31.4, 16.6, 1.875], abs=0.05)
    with pytest.raises(InputError):
        model_state_bytes(psi, 4, nd)


def test_largest_fitting_is_a_search_not_a_guess():
    for limit in (1, 7, 100, 4096):
        for n in (0, 1, 2, 5, 63, 64, 65, 4095, 5000):
            assert largest_fitting(lambda c, n=n: c <= n, limit) == min(n, limit)


def test_inference_peak_and_max_batch():
    cfg = from_name("llama-3-70b")
    hw = get_hardware("h100")
    wl = Workload(batch=16, seq_len=2048, new_tokens=256, attention="eager")
    par = Parallel(tp=8)
    eager = inference_activation_bytes(cfg, wl, par, micro_batch=16)
    scores = 2 * 16 * (64 / 8) * 2048 * 2048 * 2  # scores + probabilities, 8 heads per rank, bf16
    assert eager == pytest.approx(2 * 16 * 2048 * 8192 * 2 + (16 * 2048 * (8192 + 2 * 1024) / 8 * 2 + scores))
    est = estimate(cfg, wl, hw, par)
    m = est.per_gpu
    assert m.fits and m.capacity_bytes == hw.memory_bytes
    assert m.workspace_bytes == pytest.approx(0.1 * hw.memory_bytes)  # vLLM's gpu_memory_utilization 0.9
    assert m.total_bytes == pytest.approx(m.weights_bytes + m.kv_cache_bytes + m.activation_bytes + m.workspace_bytes)
    n = est.max_batch
    from dataclasses import replace

    assert per_gpu_memory(cfg, replace(wl, batch=n), hw, par).fits
    assert not per_gpu_memory(cfg, replace(wl, batch=n + 1), hw, par).fits
    assert not estimate(cfg, wl, hw).per_gpu.fits  # 141 GB of bf16 weights on one 80 GB GPU
    with pytest.raises(InputError):
        estimate(cfg, wl, hw, par, memory_utilization=1.5)
