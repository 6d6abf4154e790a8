"""The profiler: a real Llama-style block under torch.profiler on the CPU.

Checked against torch itself: GEMM FLOPs against FlopCounterMode on the same
module, rows that add up to the total without double counting, a valid Chrome
trace. No measured time is asserted (the machine is shared); only relations
that hold for any timing.
"""

from __future__ import annotations

import json
import math

import pytest

torch = pytest.importorskip("torch")
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from gemmlib.core.errors import InputError  # noqa: E402
from gemmlib.llm.accounting import layer_ops  # noqa: E402
from gemmlib.llm.presets import from_name  # noqa: E402
from gemmlib.measure.profiler import (  # noqa: E402
    GEMM_TARGET,
    BlockConfig,
    build_block,
    hardware_for,
    is_gemm_op,
    make_input,
    op_kind,
    predict,
    predicted_gemm_flops,
    preset_config,
    presets,
    profile_block,
    summarize_events,
    validate_trace,
)

SMALL = BlockConfig.llama(hidden=64, heads=4, kv_heads=2, seq_len=32, batch=2, layers=2)


def _flop_counter_total(cfg: BlockConfig) -> int:
    block, x = build_block(cfg), make_input(cfg)
    with torch.inference_mode(), FlopCounterMode(display=False) as fc:
        block(x)
    return fc.get_total_flops()


@pytest.fixture(scope="module")
def profiled(tmp_path_factory):
    trace = tmp_path_factory.mktemp("trace") / "block.json"
    return profile_block(SMALL, "cpu", steps=3, warmup=1, trace_path=trace)


# ---------------------------------------------------------------- configuration
@pytest.mark.parametrize("kw, words", [
    (dict(hidden=100, heads=8), "multiple of heads"),
    (dict(hidden=64, heads=4, kv_heads=3), "kv_heads"),
    (dict(hidden=64, heads=4, kv_heads=8), "kv_heads"),
    (dict(hidden=12, heads=4), "even"),
    (dict(hidden=64, heads=4, attention="flash"), "attention"),
    (dict(hidden=64, heads=4, dtype="fp8"), "fp8"),
    (dict(hidden=0, heads=4), "at least 1"),
    (dict(hidden=64, heads=4, seq_len=2.5), "whole number"),
])
def test_bad_config_is_an_input_error(kw, words):
    with pytest.raises(InputError, match=words):
        BlockConfig.llama(**kw)


def test_defaults_follow_llama_rules():
    c = BlockConfig.llama(hidden=96, heads=6)
    assert c.kv_heads == 6 and c.head_dim == 16
    assert c.intermediate == 256  # 8/3 · 96 = 256, already a multiple of 64
    assert BlockConfig.llama(hidden=128, heads=4).intermediate == 384  # 341.3 rounded up to 64s


def test_preset_scaled_down_keeps_heads_and_gqa():
    c = preset_config("Llama-3-8B", 16, seq_len=64, layers=2)  # the estimator's llama-3-8b
    assert (c.hidden, c.heads, c.kv_heads, c.intermediate, c.layers) == (256, 32, 8, 896, 2)
    table = presets()
    assert "llama-3-8b" in table and table["llama-3-8b"]["source"].startswith("https://")
    assert "mixtral-8x7b" not in table  # a mixture of experts is not a block the profiler runs
    assert "gpt2" in table  # plain GELU MLP, LayerNorm, biases and learned positions: built from the model
    with pytest.raises(InputError, match="unknown preset"):
        preset_config("GPT-9", 4)
    # the estimator's presets the block does not build are named as such, with what it lacks (not "unknown")
    for name, lacks in (("mixtral-8x7b", "a mixture of experts"), ("qwen3-8b", "q/k norms"),
                        ("deepseek-v3", "a mixture of experts")):
        with pytest.raises(InputError, match=rf"^{name} is an estimate preset .* does not build \({lacks}\)"):
            preset_config(name, 4)
    with pytest.raises(InputError, match="cannot be scaled"):
        preset_config("Llama-3-8B", 3)


# ---------------------------------------------------------------- counting vs torch
@pytest.mark.parametrize("cfg", [SMALL, BlockConfig.llama(hidden=96, heads=6, seq_len=24, layers=1),
                                 BlockConfig.llama(hidden=64, heads=8, kv_heads=1, seq_len=16, intermediate=80)])
def test_gemmlib_count_equals_flop_counter_mode(cfg):
    assert predicted_gemm_flops(cfg) == _flop_counter_total(cfg)


@pytest.mark.parametrize("preset, scale", [("gpt2", 4), ("qwen2.5-0.5b", 2), ("llama-3-8b", 16)])
def test_any_dense_preset_block_equals_flop_counter_and_accounting(preset, scale):
    """Biases, LayerNorm, a plain MLP, explicit head sizes: the block is built from the one ModelConfig."""
    cfg = preset_config(preset, scale, seq_len=12, batch=2, layers=2)
    assert cfg.model.mlp == from_name(preset).mlp and cfg.model.norm == from_name(preset).norm
    assert predicted_gemm_flops(cfg) == _flop_counter_total(cfg)


def test_block_gemms_shapes_gqa():
    """The block's GEMMs are the accounting's layer ops of its model (one model, one accounting)."""
    g = {x.name: x for x in layer_ops(SMALL.model, SMALL.seq_len, batch=SMALL.batch)}
    assert (g["k_proj"].m, g["k_proj"].n, g["k_proj"].k) == (64, 32, 64)  # 2 K/V heads of 16
    # GQA shrinks the K/V projection, not the attention products (all 4 query heads)
    assert g["attn_scores"].count == 2 * 4 and g["attn_scores"].m == 32
    assert g["q_proj"].flops == 2 * 64 * 64 * 64


def test_op_labels():
    for name in ("aten::mm", "aten::addmm", "aten::bmm", "aten::matmul", "aten::linear", "aten::_int_mm",
                 "aten::_scaled_mm"):
        assert is_gemm_op(name) and op_kind(name) == "gemm"
    assert op_kind("aten::_scaled_dot_product_flash_attention") == "attention"
    for name in ("aten::add", "aten::softmax", "aten::silu", "aten::mul", "aten::copy_"):
        assert not is_gemm_op(name)


# ---------------------------------------------------------------- the profile
def test_share_between_zero_and_one_and_gemms_found(profiled):
    assert 0.0 < profiled.gemm_share < 1.0
    names = {o.name for o in profiled.ops if o.is_gemm}
    assert {"aten::mm", "aten::bmm"} <= names
    assert any(not o.is_gemm for o in profiled.ops)
    assert profiled.meets_target == (profiled.gemm_share >= GEMM_TARGET)


def test_ops_add_up_to_the_total(profiled):
    assert math.isclose(sum(o.time_s for o in profiled.ops), profiled.total_time_s, rel_tol=1e-9)
    assert math.isclose(sum(o.share for o in profiled.ops), 1.0, rel_tol=1e-9)
    assert math.isclose(sum(o.time_s for o in profiled.ops if o.is_gemm), profiled.gemm_time_s, rel_tol=1e-9)
    # self times never overlap: their sum cannot exceed the wall time of all profiled passes
    assert 0 < profiled.total_time_s <= profiled.wall_s * profiled.steps * 1.001
    grouped = profiled.grouped()
    assert math.isclose(sum(o.time_s for o in grouped), profiled.total_time_s, rel_tol=1e-9)
    assert len({o.name for o in grouped}) == len(grouped)


def test_profiler_gemm_flops_match_flop_counter_and_gemmlib(profiled):
    assert profiled.gemm_flops == predicted_gemm_flops(SMALL) == _flop_counter_total(SMALL)
    assert profiled.predicted_gemm_flops == predicted_gemm_flops(SMALL)
    # per call, each mm row carries 2·M·N·K of its own shapes
    for o in profiled.ops:
        if o.name == "aten::mm":
            a, b = (tuple(int(d) for d in s.split("×")) for s in o.shapes.split(", "))
            assert o.flops == pytest.approx(o.calls * 2 * a[0] * a[1] * b[1])


def test_trace_is_valid_chrome_json(profiled):
    n = validate_trace(profiled.trace_path)
    assert n > 0
    with open(profiled.trace_path, encoding="utf-8") as f:
        names = {e.get("name") for e in json.load(f)["traceEvents"]}
    assert "aten::mm" in names


def test_result_is_json_and_has_prediction(profiled):
    d = json.loads(json.dumps(profiled.to_dict()))
    assert d["gemm_share"] == profiled.gemm_share
    assert {"name", "time_s", "is_gemm", "flops", "shapes", "share"} <= set(d["ops"][0])
    assert d["prediction"]["gemm_flops"] == predicted_gemm_flops(SMALL)
    assert d["monitor"]["available"] is False and "CPU" in d["monitor"]["reason"]


def test_linear_alone_is_counted_once():
    """linear -> matmul -> mm: three nested GEMM-family ops, one product's FLOPs."""
    from torch.profiler import ProfilerActivity, profile

    x, w = torch.randn(8, 16, 32), torch.randn(24, 32)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_flops=True) as prof:
        torch.nn.functional.linear(x, w)
    ops, total, _ = summarize_events(prof.events(), "cpu", 1)
    assert sum(o.flops for o in ops if o.is_gemm) == 2 * 8 * 16 * 24 * 32
    assert math.isclose(sum(o.time_s for o in ops), total, rel_tol=1e-9)


def test_fused_attention_counts_as_gemm_work():
    cfg = BlockConfig.llama(hidden=64, heads=4, kv_heads=2, seq_len=32, attention="sdpa")
    r = profile_block(cfg, "cpu", steps=1, warmup=1)
    att = [o for o in r.ops if o.kind == "attention"]
    assert att and all(o.is_gemm for o in att)
    # the fused causal kernel computes the lower triangle with its diagonal, counted once
    s, hd = cfg.seq_len, cfg.head_dim
    triangle = int(torch.ones(s, s).tril().sum())  # an independent count of the unmasked pairs
    attn_tri = cfg.layers * cfg.batch * cfg.heads * 2 * 2 * hd * triangle
    dense_attn = sum(g.flops for g in layer_ops(cfg.model, cfg.seq_len) if g.name.startswith("attn"))
    fc = _flop_counter_total(cfg)  # FlopCounterMode counts dense products, and misses the CPU's fused kernel
    assert fc in (predicted_gemm_flops(cfg.with_(attention="eager")), predicted_gemm_flops(
        cfg.with_(attention="eager")) - dense_attn)
    assert r.gemm_flops == predicted_gemm_flops(cfg) == predicted_gemm_flops(cfg.with_(attention="eager")) \
        - dense_attn + attn_tri


@pytest.mark.parametrize("sq, sk, causal", [(16, 16, True), (16, 24, True), (24, 16, True), (16, 24, False)])
def test_fused_attention_flops_follow_the_mask_the_kernel_applies(sq, sk, causal):
    # A causal flash kernel skips the masked key blocks: count the pairs ones(L, S).tril() keeps.
    from torch.profiler import ProfilerActivity, profile

    q, k = torch.randn(2, 4, sq, 8), torch.randn(2, 4, sk, 8)
    with torch.inference_mode(), profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        torch.nn.functional.scaled_dot_product_attention(q, k, k, is_causal=causal)
    ops, _, _ = summarize_events(prof.events(), "cpu", 1)
    pairs = int(torch.ones(sq, sk).tril().sum()) if causal else sq * sk
    assert sum(o.flops for o in ops if o.is_gemm) == 4 * 2 * 4 * pairs * 8


# ---------------------------------------------------------------- prediction
def test_prediction_shares_and_trends():
    p = predict(SMALL, "h100")
    assert 0 < p.time_share < 1 and 0 < p.flop_share < 1
    assert "accounting" in p.source  # the estimator's figures, cross-checked with the block's own list
    assert p.gemm_flops == predicted_gemm_flops(SMALL)
    assert p.gemm_time_s == pytest.approx(SMALL.layers * sum(r["time_s"] for r in p.rows if r["kind"] == "gemm"))
    big = predict(SMALL.with_(hidden=2048, heads=16, kv_heads=4, seq_len=512), "h100")
    assert big.time_share > p.time_share  # bigger GEMMs leave less to the memory-bound rest
    assert big.flop_share > 0.9
    with pytest.raises(InputError):
        predict(SMALL, "h100", efficiency=0)


def test_hardware_matching():
    assert hardware_for("cuda", "NVIDIA H200").name == "H200 SXM"
    assert hardware_for("cuda", "NVIDIA H200 NVL").name == "H200 NVL"
    assert hardware_for("cuda", "NVIDIA A100-SXM4-80GB").name == "A100 SXM 80GB"
    assert hardware_for("cpu").kind == "cpu"


@pytest.mark.parametrize("name", ["NVIDIA GH200 144G HBM3e", "NVIDIA A100-PCIE-40GB", "Tesla T4"])
def test_an_unknown_gpu_is_never_predicted_with_another_gpus_figures(name, tmp_path, monkeypatch):
    from gemmlib.core import ceilings

    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path))
    ceilings.clear_ceilings()
    with pytest.raises(InputError, match="not in the catalogue"):
        hardware_for("cuda", name)
    # once its ceilings are measured, those are what the prediction uses
    ceilings.save_ceilings(ceilings.Ceilings("cuda", name, {"bf16": 7e14, "fp32": 5e13}, 4e12))
    try:
        hw = hardware_for("cuda", name)
        assert hw.name == f"{name} (measured)" and hw.peak("bf16") == 7e14 and hw.bandwidth == 4e12
    finally:
        ceilings.clear_ceilings()


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal on a machine without CUDA")
def test_cuda_without_gpu_is_a_clear_input_error():
    with pytest.raises(InputError, match="cuda"):
        profile_block(SMALL, "cuda")


def test_bad_steps_and_caps(monkeypatch):
    with pytest.raises(InputError, match="steps"):
        profile_block(SMALL, "cpu", steps=0)
    monkeypatch.setenv("GEMM_MAX_DIM", "32")
    with pytest.raises(InputError, match="cap"):
        profile_block(SMALL, "cpu", steps=1)
    monkeypatch.delenv("GEMM_MAX_DIM")
    monkeypatch.setenv("GEMM_TIME_LIMIT_S", "0.000001")
    with pytest.raises(InputError, match="GEMM_TIME_LIMIT_S"):
        profile_block(SMALL, "cpu", steps=1)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_profile_adds_up():
    cfg = BlockConfig.llama(hidden=512, heads=8, kv_heads=2, seq_len=256, dtype="bf16", layers=2)
    r = profile_block(cfg, "cuda", steps=3)
    assert 0 < r.gemm_share < 1
    assert math.isclose(sum(o.time_s for o in r.ops), r.total_time_s, rel_tol=1e-9)
    assert r.gemm_flops == predicted_gemm_flops(cfg)


# ---------------------------------------------------------------- charts and the report section
def test_charts_carry_the_targets(profiled):
    from gemmlib.charts import profile as charts_profile
    from gemmlib.measure.monitor import MonitorResult, Sample

    spec = charts_profile.share_chart(profiled).to_dict()
    layers = spec["layer"]
    assert any(v.get("target") == GEMM_TARGET for lyr in layers for v in lyr["data"]["values"])
    bars = layers[0]["data"]["values"]
    measured = sum(r["share"] for r in bars if r["source"] == "measured")
    assert measured == pytest.approx(1.0)
    assert {r["source"] for r in bars} == {"measured", "predicted"}
    top = charts_profile.top_ops_chart(profiled, n=5).to_dict()
    assert len(top["data"]["values"]) == 5
    assert charts_profile.monitor_charts(profiled.monitor) == {}  # nothing sampled on a CPU
    mon = MonitorResult(True, "hand-made samples", samples=[Sample(t_s=0.1 * i, sm_util=80.0, mem_util=50.0,
                                                                   power_w=300.0) for i in range(4)])
    ch = charts_profile.monitor_charts(mon)
    util = ch["utilization"].to_dict()
    assert {75.0, 60.0} <= {v["value"] for lyr in util["layer"] for v in lyr["data"]["values"]
                            if "text" in v}


def test_report_section_on_cpu(tmp_path, monkeypatch):
    from gemmlib.core.results import BenchResult
    from gemmlib.measure import profiler

    tiny = BlockConfig.llama(hidden=64, heads=4, kv_heads=2, seq_len=16)
    monkeypatch.setattr(profiler, "report_configs", lambda device, quick: [tiny])
    seen: list[float] = []
    sec = profiler.report_section("cpu", True, tmp_path, lambda frac, text: seen.append(frac))
    assert sec["title"].startswith("Profiler") and seen[-1] == 1.0
    assert "GEMM share of time" in sec["markdown"] and "Chrome trace" in sec["markdown"]
    res = sec["results"]
    assert all(isinstance(r, BenchResult) for r in res)
    block = next(r for r in res if r.name == "block forward")
    assert block.median_s > 0 and block.p20_s <= block.median_s <= block.p80_s
    assert block.flops == predicted_gemm_flops(tiny)
    assert all(r.flops > 0 and r.extra["kind"] != "other" for r in res if r is not block)
    assert validate_trace(tmp_path / sec["traces"][0]) > 0
    assert {"share_eager", "top_ops_eager"} <= set(sec["charts"])


def test_math_attention_fallback_is_not_counted_twice():
    """sdpa's math path runs visible bmm's: their FLOPs count, the fused op adds none."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.profiler import ProfilerActivity, profile

    q = torch.randn(2, 4, 16, 8)
    with sdpa_kernel(SDPBackend.MATH), torch.inference_mode(), \
            profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_flops=True) as prof:
        torch.nn.functional.scaled_dot_product_attention(q, q, q)
    ops, _, _ = summarize_events(prof.events(), "cpu", 1)
    assert sum(o.flops for o in ops if o.is_gemm) == 4 * 2 * 4 * 16 * 16 * 8


def test_monitored_benchmark_times_the_block_and_says_why_nothing_was_sampled():
    from gemmlib.measure.profiler import monitored_benchmark

    tiny = BlockConfig.llama(hidden=64, heads=4, kv_heads=2, seq_len=16)
    res, mon = monitored_benchmark(tiny, "cpu", min_run_time=0.05)
    assert res.median_s > 0 and res.p20_s <= res.median_s <= res.p80_s
    assert res.extra["l2_flush"] is False and res.extra["nvml_index"] is None
    assert not mon.available and "CPU" in mon.reason


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_monitored_benchmark_on_the_gpu_times_without_the_flush():
    from gemmlib.measure.monitor import nvml_index_for_torch_device
    from gemmlib.measure.profiler import monitored_benchmark

    cfg = BlockConfig.llama(hidden=512, heads=8, kv_heads=2, seq_len=256, dtype="bf16")
    res, mon = monitored_benchmark(cfg, "cuda", min_run_time=0.3)
    assert res.extra["timer"].startswith("cuda-events") and res.extra["l2_flush"] is False  # "(spin kernel …)"
    assert res.extra["nvml_index"] == nvml_index_for_torch_device()


@pytest.mark.parametrize("attention", ["eager", "sdpa"])
@pytest.mark.parametrize("preset", ["llama-3-8b", "gpt2"])
def test_kv_cache_decode_equals_a_longer_prefill(attention, preset):
    # Decode step i with a KV cache must give what a prefill of S + i + 1 tokens gives at its last position.
    from gemmlib.measure.profiler import build_model, preset_config

    s, extra = 12, 3
    cfg = preset_config(preset, 16 if preset != "gpt2" else 8, seq_len=s, layers=2, attention=attention)
    model = build_model(cfg, "cpu", seed=3, max_len=s + extra, lm_head="all")
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, cfg.model.vocab, (2, s + extra), generator=g)
    with torch.inference_mode():
        full = model(ids)  # one prefill over every token, no cache
        cache = model.new_cache(2)
        first = model(ids[:, :s], cache, 0)
        steps = [model(ids[:, s + i:s + i + 1], cache, s + i) for i in range(extra)]
    assert torch.allclose(first, full[:, :s], atol=1e-4, rtol=1e-4)
    for i, out in enumerate(steps):
        assert torch.allclose(out[:, 0], full[:, s + i], atol=1e-4, rtol=1e-4)


def test_a_profile_reports_its_progress_as_a_rising_share():
    """The run box shows a share of the run, not "0 %" throughout: each stage says how far it is, one report per
    stage (building, each warm-up pass, profiling, summing), each a step of the plan's (tests/pages/
    test_profiler_run_box.py weighs them)."""
    said = []
    profile_block(SMALL, "cpu", steps=2, warmup=2, progress=lambda f, t: said.append((f, str(t))))
    fracs = [f for f, _ in said]
    assert fracs == sorted(fracs) and fracs[0] == 0.0 and len(set(fracs)) == len(fracs) == 5, said
    assert any("warming up" in t for _, t in said) and any("profiling 2 forward" in t for _, t in said)
