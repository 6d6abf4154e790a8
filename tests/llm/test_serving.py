"""Serving as engines run it: the step-level simulation against the accounting's own phases, chunked
prefill, paged KV blocks and preemption, request-rate arrivals, the curve and the best concurrency."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import replace

import pytest

from gemmlib.core.errors import InputError
from gemmlib.core.hardware import get_hardware
from gemmlib.llm.accounting import Workload
from gemmlib.llm.memory import inference_activation_bytes, weights_per_gpu
from gemmlib.llm.parallel import Parallel, phase
from gemmlib.llm.presets import from_name
from gemmlib.llm.serving import Engine, Server, StepModel, kv_pool, serving, simulate

CFG = from_name("llama-3-8b")
HW = get_hardware("h100")
WL = Workload(seq_len=1024, new_tokens=128, attention="fused", causal=True, lm_head="last")
EFF = 0.7


def test_one_request_alone_is_the_prefill_then_the_decode_steps():
    """One request, nothing else running: TTFT = the accounting's prefill of it, TPOT = its mean decode step."""
    p = Server(CFG, WL, HW, Parallel(), EFF, overhead_s=0.0).point(1, requests=1)
    one = replace(WL, batch=1)
    pre = phase(CFG, one, HW, Parallel(), "prefill", EFF).time_s
    dec = phase(CFG, one, HW, Parallel(), "decode", EFF).time_s
    # the engine's prefill step also emits the first token's logits; its decode steps see 1024..1150 cached
    assert p.ttft_s == pytest.approx(pre, rel=2e-3)
    steps = WL.new_tokens - 1  # the prefill emitted the first token
    assert p.tpot_s == pytest.approx(dec / WL.new_tokens, rel=1e-2)
    assert p.e2e_s == pytest.approx(p.ttft_s + steps * p.tpot_s)
    assert p.tokens_per_s == pytest.approx(WL.new_tokens / p.e2e_s)
    assert p.requests_per_s == pytest.approx(1 / p.e2e_s) and p.preemptions == 0


def test_the_engine_step_overhead():
    """vLLM pays the host's time per step (its async scheduling is opt-in); TensorRT-LLM's overlap scheduler
    hides it."""
    from gemmlib.llm.efficiency import SERVING_STEP_OVERHEAD_S

    bare = Server(CFG, WL, HW, Parallel(), EFF, overhead_s=0.0).point(1, requests=1)
    vllm = Server(CFG, WL, HW, Parallel(), EFF).point(1, requests=1)
    assert vllm.e2e_s == pytest.approx(bare.e2e_s + WL.new_tokens * SERVING_STEP_OVERHEAD_S)  # one step per token
    trt = Server(CFG, WL, HW, Parallel(), EFF, engine=Engine("trtllm")).point(1, requests=1)
    assert trt.e2e_s == pytest.approx(bare.e2e_s)


def test_the_shape_model_is_the_default():
    from gemmlib.llm.efficiency import ShapeEfficiency

    srv = Server(CFG, WL, HW, Parallel(), overhead_s=0.0)
    assert isinstance(srv.model.efficiency, ShapeEfficiency)
    fixed, per = srv.model.decode_attention(1024)
    assert fixed > 0 and per > 0  # kernel launches apart from the work of each sequence


def test_tensor_parallel_step_charges_the_all_reduces():
    par = Parallel(tp=8)
    p = Server(from_name("llama-3-70b"), WL, HW, par, EFF, overhead_s=0.0).point(1, requests=1)
    pre = phase(from_name("llama-3-70b"), replace(WL, batch=1), HW, par, "prefill", EFF)
    assert pre.communication_s > 0 and p.ttft_s == pytest.approx(pre.time_s, rel=2e-3)


def test_chunked_prefill_splits_a_prompt_into_budget_sized_steps():
    """A 1024-token prompt under a 256-token budget: 4 steps of 256 tokens, attention against the growing prefix."""
    eng = Engine("vllm", max_batched_tokens=256)
    srv = Server(CFG, WL, HW, Parallel(), EFF, engine=eng)
    p = srv.point(1, requests=1)
    m = srv.model
    expect = sum(m.step(256, 1 if k == 3 else 0, 0, 0.0, [(256 * k, 256)]) for k in range(4))
    assert p.ttft_s == pytest.approx(expect)
    # the chunks' attention adds up to the whole prompt's: the causal triangle, piece by piece
    assert sum(m.chunk(256 * k, 256) for k in range(4)) == pytest.approx(m.prefill_attention(1024)[1])
    whole = Server(CFG, WL, HW, Parallel(), EFF).point(1, requests=1)
    assert p.ttft_s > whole.ttft_s  # four passes over the weights instead of one


def test_throughput_is_every_token_over_the_run_and_prefill_slows_the_decode():
    srv = Server(CFG, WL, HW, Parallel(), EFF)
    p = srv.point(64)
    assert p.requests == 4 * 64
    assert p.tokens_per_s * p.duration_s == pytest.approx(p.requests * WL.new_tokens)
    assert p.requests_per_s * p.duration_s == pytest.approx(p.requests)
    # static batching's answer (64 / the decode step of 64 sequences, prefill left out) is optimistic
    static = 64 / (phase(CFG, replace(WL, batch=64), HW, Parallel(), "decode", EFF).time_s / WL.new_tokens)
    assert p.tokens_per_s < static
    assert p.tpot_s > phase(CFG, replace(WL, batch=64), HW, Parallel(), "decode", EFF).time_s / WL.new_tokens


def test_kv_pool_is_the_memory_left_in_blocks():
    eng = Engine().resolved(HW)
    assert (eng.block_size, eng.max_num_seqs, eng.max_batched_tokens) == (16, 1024, 8192)  # vLLM on an H100
    assert Engine().resolved(get_hardware("a100")).max_batched_tokens == 2048
    pool = kv_pool(CFG, WL, HW, Parallel(), eng, input_len=1024, output_len=128)
    w = weights_per_gpu(CFG, WL, HW, Parallel())["last"]
    act = inference_activation_bytes(CFG, replace(WL, batch=1, seq_len=8192), Parallel(), micro_batch=1)
    free = 0.9 * HW.memory_bytes - w - act
    block = 16 * 2 * CFG.layers * CFG.kv_heads * CFG.head_dim * 2  # K and V, every layer, bf16
    assert pool.block_bytes == block and pool.blocks == int(free // block)
    tp = kv_pool(CFG, WL, HW, Parallel(tp=4), eng, input_len=1024, output_len=128)
    assert tp.block_bytes == block / 4  # the 8 KV heads split over 4 ranks
    trt = kv_pool(CFG, WL, HW, Parallel(), Engine("trtllm").resolved(HW), input_len=1024, output_len=128)
    assert trt.block_size == 32 and trt.free_bytes == pytest.approx(0.9 * (HW.memory_bytes - w - act))


def test_preemption_when_blocks_run_out_and_reservation_instead():
    model = StepModel(CFG, WL, HW, Parallel(), EFF)
    full = -(-(1024 + 128) // 16)
    vllm = Engine().resolved(HW)
    # 7 prompts of 64 blocks fit at once, but not 7 whole requests of 72: the last admitted is preempted
    tight = simulate(model, vllm, 6 * full + 32, input_len=1024, output_len=128, requests=64, concurrency=32)
    assert tight.preemptions > 0 and tight.output_tokens == 64 * 128 and tight.peak_blocks <= 6 * full + 32
    roomy = simulate(model, vllm, 64 * full, input_len=1024, output_len=128, requests=64, concurrency=32)
    assert roomy.preemptions == 0 and roomy.duration_s < tight.duration_s
    trt = Engine("trtllm").resolved(HW)
    full32 = -(-(1024 + 128) // 32)
    r = simulate(model, trt, 8 * full32, input_len=1024, output_len=128, requests=64, concurrency=32)
    assert r.preemptions == 0 and r.peak_running <= 8 and r.output_tokens == 64 * 128


def test_request_rate_arrivals():
    srv = Server(CFG, WL, HW, Parallel(), EFF)
    slow = srv.at_rate(0.05, requests=20)  # one every 20 s on average: each request runs alone
    alone = srv.point(1, requests=1)
    assert slow.ttft_s == pytest.approx(alone.ttft_s, rel=1e-3) and slow.tpot_s == pytest.approx(alone.tpot_s, rel=1e-3)
    assert slow.requests_per_s == pytest.approx(20 / slow.duration_s)
    again = Server(CFG, WL, HW, Parallel(), EFF).at_rate(0.05, requests=20)
    assert again == slow  # a fixed seed: the same answer every time
    fixed = srv.at_rate(0.05, requests=20, arrival="fixed")
    assert fixed.duration_s == pytest.approx(19 * 20 + alone.e2e_s)
    busy = srv.at_rate(50.0, requests=200)
    assert busy.ttft_s > slow.ttft_s and busy.concurrency > 1
    capped = srv.at_rate(50.0, requests=200, concurrency=4)
    assert capped.concurrency <= 4 and capped.tpot_s < busy.tpot_s


def test_replicas_and_pipeline_groups():
    one = Server(CFG, WL, HW, Parallel(), EFF).point(16)
    two = Server(CFG, WL, HW, Parallel(dp=2), EFF).point(32)
    assert two.tokens_per_s == pytest.approx(2 * one.tokens_per_s) and two.tokens_per_s_per_gpu == pytest.approx(
        one.tokens_per_s_per_gpu)
    few = Server(CFG, WL, HW, Parallel(dp=8), EFF).point(1, requests=1)
    assert few.tokens_per_s == pytest.approx(Server(CFG, WL, HW, Parallel(), EFF).point(1, requests=1).tokens_per_s)
    pp = Server(CFG, WL, HW, Parallel(pp=2), EFF, overhead_s=0.0).point(1, requests=1)
    assert pp.ttft_s == pytest.approx(phase(CFG, replace(WL, batch=1), HW, Parallel(pp=2), "prefill", EFF).time_s,
                                      rel=0.05)


def test_curve_up_to_the_kv_limit_and_the_best_under_a_target():
    cfg, par = from_name("llama-3-70b"), Parallel(tp=8)
    wl = replace(WL, seq_len=2048, new_tokens=64)
    sv = serving(cfg, wl, HW, par, EFF, tpot_target_s=0.03)
    cs = [p.concurrency for p in sv.points]
    assert cs[0] == 1 and cs[-1] == sv.kv_limit and cs == sorted(cs)
    per = sv.pool.request_blocks(2048 + 64)
    assert sv.kv_limit == sv.pool.blocks // per
    tps = [p.tokens_per_s for p in sv.points]
    assert tps[1:4] == sorted(tps[1:4])  # more requests in flight, more tokens/s
    b = sv.best
    srv = Server(cfg, wl, HW, par, EFF)
    assert b is not None and b.tpot_s <= 0.03 < srv.point(b.concurrency + 1).tpot_s
    assert b.concurrency in cs
    assert serving(cfg, wl, HW, par, EFF, tpot_target_s=1e-4).best is None  # nothing is that fast
    d = sv.to_dict()
    assert d["engine"]["block_size"] == 16 and d["kv_pool"]["blocks"] == sv.pool.blocks
    assert all({"ttft_s", "tpot_s", "tokens_per_s", "requests_per_s"} <= set(p.to_dict()) for p in sv.points)


def test_one_point_at_a_rate_or_a_concurrency():
    sv = serving(CFG, WL, HW, Parallel(), EFF, request_rate=2.0, requests=50)
    assert len(sv.points) == 1 and sv.points[0].request_rate == 2.0 and "poisson" in sv.arrival
    c = serving(CFG, WL, HW, Parallel(), EFF, concurrency=8, requests=16)
    assert [p.concurrency for p in c.points] == [8] and c.points[0].requests == 16


def test_bad_serving_input():
    with pytest.raises(InputError, match="set new tokens to 1 or more"):
        serving(CFG, replace(WL, new_tokens=0), HW, Parallel())
    with pytest.raises(InputError, match="TPOT target"):
        serving(CFG, WL, HW, Parallel(), tpot_target_s=-1)
    with pytest.raises(InputError, match="the request rate must be a positive number"):
        serving(CFG, WL, HW, Parallel(), request_rate=0)
    with pytest.raises(InputError, match="arrival"):
        serving(CFG, WL, HW, Parallel(), request_rate=1.0, arrival="bursty")
    with pytest.raises(InputError, match="input-len"):
        serving(CFG, WL, HW, Parallel(), input_len=0)
    with pytest.raises(InputError, match="engine"):
        Engine("sglang")
    with pytest.raises(InputError, match="decode-only"):
        serving(CFG, replace(WL, decode_only=True, new_tokens=4), HW, Parallel())
    one = serving(from_name("llama-3-70b"), WL, HW, Parallel(), tpot_target_s=0.05)  # 70B in bf16: not one H100
    assert one.kv_limit == 0 and not one.points[0].fits and one.best is None


def _cli(argv, capsys):
    from gemmlib.cli import main

    try:
        rc = main(argv)
    except SystemExit as e:  # argparse refuses a flag's value: exit status 2
        rc = e.code
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_cli_serving_flags(capsys, monkeypatch, tmp_path):
    import json

    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path))
    base = ["estimate", "--preset", "llama-3-8b", "--attention", "fused", "--causal", "--lm-head", "last"]
    rc, out, _ = _cli(base + ["--input-len", "512", "--output-len", "64", "--concurrency", "8", "--num-requests", "16",
                              "--json"], capsys)
    d = json.loads(out)
    assert rc == 0 and len(d["serving"]) == 1
    row = d["serving"][0]
    assert row["concurrency"] == 8 and row["requests"] == 16
    assert {"ttft_s", "tpot_s", "tokens_per_s", "requests_per_s"} <= set(row)
    assert d["serving_summary"]["input_len"] == 512 and d["serving_summary"]["engine"]["block_size"] == 16
    rc, out, _ = _cli(base + ["--seq-len", "512", "--new-tokens", "32", "--request-rate", "4", "--arrival", "fixed",
                              "--num-requests", "20", "--engine", "trtllm", "--kv-block-size", "64"], capsys)
    assert rc == 0 and "trtllm" in out and "blocks of 64 tokens" in out and "fixed at 4 req/s" in out
    rc, out, _ = _cli(base + ["--seq-len", "256", "--new-tokens", "16", "--serve", "--max-num-seqs", "4",
                              "--max-num-batched-tokens", "512"], capsys)
    assert rc == 0 and "512 tokens and 4 requests per step" in out and "preempted" in out
    rc, out, _ = _cli(base + ["--seq-len", "256", "--new-tokens", "16", "--concurrency", "8", "--num-requests", "8",
                              "--json"], capsys)
    at_once = json.loads(out)["serving"][0]  # every request at once: as many clients as requests
    assert rc == 0 and at_once["requests"] == 8 and at_once["concurrency"] == 8
    srv = Server(CFG, replace(WL, seq_len=256, new_tokens=16), HW, Parallel(), EFF)
    assert srv.point(8, 8).tokens_per_s == pytest.approx(srv.at_rate(float("inf"), 8).tokens_per_s)


@pytest.mark.parametrize("extra, msg", [
    (["--request-rate", "-1"], "argument --request-rate: must be above 0"),
    (["--request-rate", "nan"], "argument --request-rate: must be a finite number"),  # (inf: every request at once)
    (["--arrival", "fixed", "--serve"], "--arrival is for --request-rate"),
    (["--kv-block-size", "0"], "argument --kv-block-size: must be at least 1"),
    (["--output-len", "0"], "argument --output-len: must be at least 1"),
    (["--concurrency", "2.5"], "argument --concurrency: expected a whole number"),
    (["--cp", "0", "--train"], "argument --cp: must be at least 1"),
])
def test_cli_bad_serving_input(extra, msg, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path))
    rc, _, err = _cli(["estimate", "--preset", "llama-3-8b"] + extra, capsys)
    assert rc == 2 and msg in err and len(err.strip().splitlines()) == 1


def test_one_attention_kernel_serves_every_decode_sequence():
    """The decode attention of n sequences is one batched kernel per layer: its launches once, its work n times."""
    m = Server(CFG, WL, HW, Parallel(), EFF, overhead_s=0.0).model
    fixed, per = m.decode_attention(1024)
    assert fixed >= 0 and per > 0
    many = m.step(64, 64, 64, 1024.0, [])
    assert many - m.tokens(64)[0] - m.embedding(64)[0] - m.head(64)[0] == pytest.approx(fixed + 64 * per)


def test_a_decode_kernel_without_gqa_grouping_reads_the_kv_cache_once_per_query_head():
    """TensorRT-LLM before 0.7.0 (masked MHA, one thread block per query head): a GQA model's decode attention
    streams its KV cache heads / kv_heads times; a multi-head model (one query head per K/V head) is unchanged."""
    from gemmlib.llm.accounting import ATTENTION_PRODUCTS, decode_ops

    eff = 1.0  # the roofline: memory time is bytes / bandwidth, so the extra reads show exactly
    grouped = StepModel(CFG, WL, HW, Parallel(), eff)
    flat = StepModel(CFG, WL, HW, Parallel(), eff, grouped_decode=False)
    g = CFG.heads // CFG.kv_heads
    assert g == 4
    wl = replace(WL, batch=1, seq_len=4096, new_tokens=1, decode_only=True, lm_head="last")
    kv = sum(o.kv_bytes for o in decode_ops(CFG, wl) if o.name in ATTENTION_PRODUCTS)
    per_g, per_f = grouped.decode_attention(4096)[1], flat.decode_attention(4096)[1]
    assert per_f - per_g == pytest.approx((g - 1) * kv / HW.bandwidth, rel=0.02)  # memory-bound at one query
    mha = from_name("llama-2-7b")
    assert mha.kv_heads == mha.heads
    assert (StepModel(mha, WL, HW, Parallel(), eff, grouped_decode=False).decode_attention(4096)
            == StepModel(mha, WL, HW, Parallel(), eff).decode_attention(4096))
    srv = Server(CFG, WL, HW, Parallel(), eff, engine=Engine("trtllm", grouped_decode=False))
    assert srv.model.kv_reads == g and srv.engine.to_dict()["grouped_decode"] is False


@pytest.mark.parametrize("preset, gpus, kw", [
    ("llama-3.2-1b", 8, dict(input_len=16, output_len=3000)),  # a curve of long decodes, up to the KV limit
    ("llama-3-8b", 1, dict(input_len=500, output_len=4000, request_rate=math.inf, requests=3000)),  # preempting
    ("llama-3-8b", 1, dict(input_len=500, output_len=4000, request_rate=5.0, requests=200)),  # Poisson arrivals
    ("qwen3-30b-a3b", 1, dict(input_len=128, output_len=3000, engine=Engine("trtllm"))),  # blocks reserved
    ("llama-3-8b", 2, dict(input_len=100, output_len=3000, pp=2)),  # two stages
    ("llama-3-8b", 2, dict(input_len=100, output_len=3000, overlap=True)),  # max(compute, comm): summed step by step
])
def test_a_run_of_decode_steps_summed_at_once_is_the_step_by_step_answer(monkeypatch, preset, gpus, kw):
    """simulate sums a run of pure decode steps at once (StepModel.decode_run: an arithmetic series on each segment
    of the decode attention's curve): every figure of every point equals the step-by-step simulation's to rounding
    (≤ 1e-12), the integers exactly, in a fraction of the scheduler steps worked out."""
    import gemmlib.llm.serving as S

    pp, overlap = kw.pop("pp", 1), kw.pop("overlap", False)
    par = Parallel(tp=gpus // pp, pp=pp, overlap=overlap)
    cfg, wl = from_name(preset), Workload(batch=1, seq_len=512, new_tokens=128)
    runs = []
    real = S.StepModel.decode_run
    monkeypatch.setattr(S.StepModel, "decode_run", lambda self, d, x, k: runs.append(k) or real(self, d, x, k))
    fast = S.serving(cfg, wl, get_hardware("h100"), par, **kw)
    assert runs  # the fast path ran (where requests finish together: over thousands of steps at once)
    monkeypatch.setattr(S, "FAST_FORWARD", False)
    slow = S.serving(cfg, wl, get_hardware("h100"), par, **kw)
    assert len(fast.points) == len(slow.points)
    for a, b in zip(fast.points, slow.points, strict=True):
        for f in dataclasses.fields(a):
            x, y = getattr(a, f.name), getattr(b, f.name)
            if isinstance(x, float) and math.isfinite(x):
                assert x == pytest.approx(y, rel=1e-12, abs=1e-300), f.name
            else:
                assert x == y, f.name
