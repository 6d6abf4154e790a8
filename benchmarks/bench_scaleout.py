"""Beyond one GPU: this project beside the peer tools and published figures, every difference explained.

(a) Llama-3-70B, batch 16, prompt 2048 (+256 tokens), TP 8 on 8 × H100 SXM, bf16 — the case two peer tools
    that charge communication answer:
      llm-analysis (cli99/llm-analysis @ d841e40, ``infer(tp_size=8, batch_size_per_gpu=16, seq_len=2048,
        num_tokens_to_generate=256, gpu h100-sxm-80gb, w16a16e16)``): prefill 941.104 ms, decode 7.937 ms/token;
      GenZ (abhibambhaniya/GenZ-LLM-Analyzer @ 091bdd0, ``prefill_moddeling(model='meta-llama/Llama-3.1-70B',
        batch_size=16, input_tokens=2048, system_name='H100_GPU', bits='bf16', tensor_parallel=8)``): prefill
        937.976 ms; decode 8.349 ms/token (``Bb=1``).
    Both were run offline at those commits (the team's research notes, /work/notes/scaleout.md §6); their
    component figures below are from those runs. Ours is printed with the peers' assumptions first (fused
    attention: both model flash attention; dense S×S FLOPs and the LM head on every position, as both count;
    efficiency 1), then with what an engine does, then with our eager default.
(b) The link model against measured all-reduces: aiconfigurator's nccl-tests sweep on 8 × H100 SXM
    (NCCL 2.29.2, fp16, out of place; aic-core/.../systems/data/h100_sxm/comm/nccl/2.29.2/nccl_perf.parquet).
(c) The training anchor: Llama 3.1 405B, 15.6 T tokens, ≈3.8·10²⁵ FLOPs, 30.84 M H100 GPU-hours (model card),
    8,192 GPUs as TP8 PP16 DP64, 2,048 × 8,192 tokens per step, 43 % BF16 MFU (arXiv:2407.21783 Table 4).

Run:  python benchmarks/bench_scaleout.py
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gemmlib.core.hardware import get_hardware  # noqa: E402
from gemmlib.llm.accounting import Workload  # noqa: E402
from gemmlib.llm.accounting import estimate as single_estimate  # noqa: E402
from gemmlib.llm.parallel import Parallel  # noqa: E402
from gemmlib.llm.presets import from_name  # noqa: E402
from gemmlib.llm.scaleout import estimate  # noqa: E402
from gemmlib.llm.training import LLAMA31_405B, Training  # noqa: E402

MS = 1e3

# The peers' components for case (a), ms, from their runs (notes §6).
LLM_ANALYSIS = {"total": 941.104, "gemm": 80 * (1.5286 + 5.8366) + 8.703, "norms": 80 * 2 * 0.0400625,
                "embedding": 0.627, "all_reduce": 161 * 2.0878, "all_reduce_one": 2.0878, "logits_gather": 0.0,
                "decode_token": 7.937, "decode_comm_token": 1.280}
GENZ = {"total": 937.976, "gemm": 80 * (0.6948 + 0.1390 + 0.1390 + 0.5559 + 3.8911 + 1.9455) + 8.703,
        "norms": 0.0, "embedding": 8.703, "all_reduce": 161 * 1.963444, "all_reduce_one": 1.963444,
        "logits_gather": 15.233, "decode_token": 8.349}
MEASURED_AR_MS = 2.11106  # aiconfigurator, 8 × H100 SXM, all_reduce of 536,870,912 B (= 16 · 2048 · 8192 · 2)

# aiconfigurator's 8-GPU H100 SXM all_reduce (fp16) times, µs, NCCL 2.29.2 (the notes' table, converted).
AIC_H100_AR_8 = [(1024, 15.6), (4096, 16.0), (16384, 19.0), (65536, 18.7), (262144, 19.1), (1048576, 25.4),
                 (4194304, 50.5), (16777216, 121.9), (67108864, 324.5), (268435456, 1092.1), (536870912, 2111.1)]


def _row(label: str, ours: float, la: float | None, gz: float | None, why: str) -> str:
    f = lambda v: "—" if v is None else f"{v:9.1f}"  # noqa: E731
    return f"  {label:<26} {ours:9.1f} {f(la)} {f(gz)}   {why}"


def case_a() -> None:
    cfg = from_name("llama-3-70b")
    hw = get_hardware("h100")
    wl = Workload(batch=16, seq_len=2048, new_tokens=256, attention="fused")
    est = estimate(cfg, wl, hw, Parallel(tp=8))
    p, d = est.prefill, est.decode
    by = p.by_name()
    comm = {c.after: c for c in p.collectives}
    gemm = sum(o.time_s for o in p.gemm_ops) * MS
    kv_excess = sum(o.time_s - o.compute_s for o in p.gemm_ops) * MS
    other = {o.name: o.time_s * MS for o in p.other_ops}
    ar = (comm["o_proj"].time_s + comm["down_proj"].time_s + comm["embedding"].time_s) * MS
    ar_one = comm["o_proj"].time_s / comm["o_proj"].count * MS
    ag = comm["lm_head"].time_s * MS
    print("(a) Llama-3-70B, batch 16, prompt 2048, TP 8 on 8 × H100 SXM, bf16 — prefill, ms")
    print(f"  {'':<26} {'ours':>9} {'llm-anal.':>9} {'GenZ':>9}   why they differ")
    print(_row("GEMMs (per GPU)", gemm, LLM_ANALYSIS["gemm"], GENZ["gemm"],
               f"same 4.73e15 FLOPs ({p.flops:.4e}) at 989.4 vs 989 TFLOP/s; ours +{kv_excess:.1f} ms: k_proj/v_proj "
               "are separate GEMMs (as eager HF runs them) with one KV head (N = 128) per rank, memory-bound, each "
               "reading the whole input; a fused QKV GEMM (GenZ) reads it once"))
    print(_row("  of which LM head", by["lm_head"].time_s * MS, 8.703, 8.703,
               "all 32,768 positions in all three (an engine computes the last position only)"))
    print(_row("norms", other["norms"], LLM_ANALYSIS["norms"], GENZ["norms"],
               "ours: 161 RMSNorms in bf16, replicated on every TP rank, each reading and writing b·s·h; "
               "llm-analysis: 2 fp32 LN passes per layer over b·s·h/8 (sequence-parallel norms); GenZ: none"))
    print(_row("residual, SwiGLU, rotary", other["residual"] + other["activation"] + other["rotary"], 0.0, 0.0,
               "element-wise kernels (2 residual adds, silu·up, rotary on q/k per layer) through HBM; neither "
               "peer counts them"))
    print(_row("embedding", other["embedding"], LLM_ANALYSIS["embedding"], GENZ["embedding"],
               "ours: gather b·s rows of V/8 (a lookup); llm-analysis: reads the whole table; GenZ: a GEMM"))
    print(_row("all-reduces (161)", ar, LLM_ANALYSIS["all_reduce"], GENZ["all_reduce"],
               f"2 per layer + the embedding's in all three, each of b·s·h·2 = 536,870,912 B; one = "
               f"{ar_one:.4f} ms here (450e9 B/s per direction + 15.6 µs measured latency), 2.0878 llm-analysis "
               f"(450e9, no latency), 1.9634 GenZ (450 GiB/s + 19 µs); measured {MEASURED_AR_MS:.3f} ms"))
    print(_row("logits all-gather", ag, LLM_ANALYSIS["logits_gather"], GENZ["logits_gather"],
               "16 · 2048 · 128256 · 2 B gathered: ours and GenZ charge it, llm-analysis ignores it"))
    print(_row("total", p.time_s * MS, LLM_ANALYSIS["total"], GENZ["total"],
               f"= compute {p.compute_s * MS:.1f} + communication {p.communication_s * MS:.1f}; no overlap in "
               "any of the three; efficiency 1 in all three"))
    print(f"  with the measured all-reduce: {(p.time_s - ar / MS + 161 * MEASURED_AR_MS / MS) * MS:.1f} ms; "
          f"overlap (best case): {estimate(cfg, wl, hw, Parallel(tp=8, overlap=True)).prefill.time_s * MS:.1f} ms")
    engine = estimate(cfg, replace(wl, causal=True, lm_head="last"), hw, Parallel(tp=8))
    eager = estimate(cfg, replace(wl, attention="eager"), hw, Parallel(tp=8))
    print(f"  what an engine does (causal attention counted as a triangle, logits of the last position): "
          f"{engine.prefill.time_s * MS:.1f} ms; our eager default (scores through memory): "
          f"{eager.prefill.time_s * MS:.1f} ms")
    ideal = single_estimate(cfg, wl, hw).prefill.time_s / 8
    print(f"  the old 'ideal 8×' model (8× the peak and the bandwidth, no communication): {ideal * MS:.1f} ms; "
          f"ours without communication is {p.compute_s * MS:.1f} ms, as the norms, residual adds and every "
          "column-parallel op's input are replicated on each rank, not divided by 8")
    tok = d.time_s / wl.new_tokens * MS
    dcomm = d.communication_s / wl.new_tokens * MS
    print(f"  decode, per token at context 2048..2303: ours {tok:.3f} ms (communication {dcomm:.3f} ms: 161 "
          f"all-reduces of 262,144 B at {comm['o_proj'].latency_s * 1e6:.1f} µs latency + bytes, plus the logits "
          f"gather); llm-analysis {LLM_ANALYSIS['decode_token']:.3f} ms (communication "
          f"{LLM_ANALYSIS['decode_comm_token']:.3f}: 160 × its 8 µs floor), GenZ {GENZ['decode_token']:.3f} ms; "
          "measured all-reduce of 262,144 B: 19.1 µs (aiconfigurator), 160 × = 3.06 ms")
    print("  per op, one GPU (compute | communication after it), ms:")
    for o in p.ops:
        c = p.comm_by_op().get(o.name, 0.0)
        print(f"    {o.name:<12} {o.time_s * MS:8.2f} | {c * MS:7.2f}")
    m = est.per_gpu
    print(f"  per GPU: weights {m.weights_bytes / 2**30:.2f} GiB + KV {m.kv_cache_bytes / 2**30:.2f} + activations "
          f"{m.activation_bytes / 2**30:.2f} + workspace {m.workspace_bytes / 2**30:.2f} = "
          f"{m.total_bytes / 2**30:.2f} of {m.capacity_bytes / 2**30:.2f} GiB; largest batch that fits {est.max_batch}")
    print()


def case_b() -> None:
    link = get_hardware("h100").interconnect.link_for(8)
    print(f"(b) all_reduce over 8 × H100 SXM: model ({link.busbw / 1e9:g} GB/s busbw, {link.latency_s * 1e6:g} µs) "
          "vs aiconfigurator's measured nccl-tests times")
    print(f"  {'bytes':>11} {'model µs':>10} {'measured':>10} {'error':>7}")
    errs = []
    for size, us in AIC_H100_AR_8:
        t = link.time("all_reduce", size, 8) * 1e6
        errs.append((size, t / us - 1))
        print(f"  {size:>11,} {t:>10.1f} {us:>10.1f} {t / us - 1:>+7.1%}")
    close = [sz for sz, e in errs if abs(e) <= 0.05]
    worst = min(errs, key=lambda x: x[1])
    print(f"  within 5 % at {', '.join(f'{sz:,}' for sz in close)} B; the model is faster than measured in between "
          f"(worst {worst[1]:+.0%} at {worst[0]:,} B), where NCCL's protocols do not reach the line rate — "
          "measured links (--intra-busbw, --intra-latency-us) replace the catalogue's")
    print()


def case_c() -> None:
    a = LLAMA31_405B
    hw = get_hardware(a.gpu)
    wl = Workload(batch=a.global_batch, seq_len=a.seq_len, attention="fused")
    print(f"(c) {a.name}: {a.gpus:,} × {a.gpu}, TP{a.parallel['tp']} PP{a.parallel['pp']} DP{a.parallel['dp']}, "
          f"{a.global_batch:,} × {a.seq_len:,} tokens per step, sequence parallel, fused attention, ZeRO 1")
    print(f"  published: {a.tokens:.3g} tokens, {a.flops:.2g} FLOPs, {a.gpu_hours / 1e6:.2f} M GPU-hours, "
          f"{a.mfu:.0%} MFU")
    for rc in ("none", "selective", "full"):
        for ov in (False, True):
            est = estimate(a.model, wl, hw, Parallel(**a.parallel, sequence_parallel=True, overlap=ov),
                           training=Training(tokens=a.tokens, recompute=rc, zero=1))
            t = est.train
            print(f"  recompute {rc:<9} overlap {'on ' if ov else 'off'}: step {t.step_time_s:6.2f} s (bubble "
                  f"{t.bubble_s:5.2f}, communication {t.communication_s:5.2f}), MFU {t.mfu:5.1%}, "
                  f"{t.gpu_hours / 1e6:6.2f} M GPU-hours, {t.run_time_s / 86400:5.1f} days; per GPU "
                  f"{t.memory.total_bytes / 2**30:6.1f} GiB of {t.memory.capacity_bytes / 2**30:.1f}: "
                  + ("fits" if t.memory.fits else "does NOT fit"))
    print(f"  FLOPs of the run: exact {t.run_flops:.3g} (the attention products at 8k context add "
          f"{t.run_flops / t.six_nd - 1:.1%}), 6·N·D {t.six_nd:.3g} with N = {a.model.params:,}; the paper's 3.8e25 "
          "is 6·N·D")
    print("  why ours differs: the 1F1B bubble (p−1)/(m+p−1) = 15/47 of each step at m = 32 (the paper tunes its "
          "pipeline schedule, not modelled here); full recomputation is the only setting whose per-GPU memory fits "
          "in this model (Korthikanti terms, all 16 micro-batches in flight on the first stage); efficiency 1 on "
          "every GEMM; the published GPU-hours cover the whole pre-training (long-context stage, annealing, "
          "restarts), not only 8k-context steps")


if __name__ == "__main__":
    case_a()
    case_b()
    case_c()
