"""Beyond one GPU: this project beside the peer tools and published figures, every difference explained.

(a) Llama-3-70B, batch 16, prompt 2048 (+256 tokens), TP 8 on 8 × H100 SXM, bf16 — the case two peer tools
    that charge communication answer:
      llm-analysis (cli99/llm-analysis @ d841e40, ``infer(tp_size=8, batch_size_per_gpu=16, seq_len=2048,
        num_tokens_to_generate=256, gpu h100-sxm-80gb, w16a16e16)``): prefill 941.104 ms, decode 7.937 ms/token;
      GenZ (abhibambhaniya/GenZ-LLM-Analyzer @ 091bdd0, ``prefill_moddeling(model='meta-llama/Llama-3.1-70B',
        batch_size=16, input_tokens=2048, system_name='H100_GPU', bits='bf16', tensor_parallel=8)``): prefill
        937.976 ms; decode 8.349 ms/token (``Bb=1``).
    Both were run offline at those commits (the team's research notes, /work/notes/scaleout.md §6); their
    component figures below are from those runs. Ours is printed with the defaults (the engine convention:
    fused causal attention, the LM head on the last prompt position; each op at its shape's efficiency) and
    with the peers' set-up (fused attention, as both model flash attention; dense S×S FLOPs and the LM head
    on every position, as both count; efficiency 1), then under the reference convention.
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


def _row(label: str, vals: list[float | None], why: str) -> str:
    f = lambda v: f"{'—':>9}" if v is None else f"{v:9.1f}"  # noqa: E731
    return f"  {label:<26} " + " ".join(f(v) for v in vals) + f"   {why}"


def _parts(est) -> dict:
    """A phase's components in ms (one GPU's share): GEMMs, the LM head among them, the element-wise kinds, the
    collectives."""
    out = {}
    for ph in (est.prefill, est.decode):
        steps = 1 if ph.name == "prefill" else est.workload.new_tokens
        by = ph.by_name()
        comm = {}
        for c in ph.collectives:
            comm[c.after] = comm.get(c.after, 0.0) + c.time_s
        d = {"gemm": sum(o.time_s for o in ph.gemm_ops), "lm_head": by["lm_head"].time_s,
             "attention": sum(o.time_s for o in ph.gemm_ops if o.name.startswith("attn_")),
             "norms": by["norms"].time_s, "embedding": by["embedding"].time_s,
             "elementwise": sum(o.time_s for o in ph.other_ops if o.name in ("residual", "activation", "rotary",
                                                                             "kv_repeat", "attn_softmax")),
             "all_reduce": comm.get("o_proj", 0) + comm.get("down_proj", 0) + comm.get("embedding", 0),
             "gather": comm.get("lm_head", 0), "total": ph.time_s, "compute": ph.compute_s,
             "communication": ph.communication_s}
        out[ph.name] = {k: v * MS / steps for k, v in d.items()}
    return out


def case_a() -> None:
    from gemmlib.llm import efficiency as ef

    cfg = from_name("llama-3-70b")
    hw = get_hardware("h100")
    wl = Workload(batch=16, seq_len=2048, new_tokens=256)  # the defaults: what an engine runs
    peers_wl = replace(wl, causal=False, lm_head="all")  # the peers' set-up: dense S×S FLOPs, every position's logits
    tp8 = Parallel(tp=8)
    est = estimate(cfg, wl, hw, tp8)
    peers = estimate(cfg, peers_wl, hw, tp8, 1.0)  # ... at 100 % of peak and bandwidth, as both peers
    ref = estimate(cfg, wl.under("transformers"), hw, tp8)
    d, q = _parts(est), _parts(peers)
    p = est.prefill
    print("(a) Llama-3-70B, batch 16, prompt 2048 + 256 new tokens, TP 8 on 8 × H100 SXM, bf16 — prefill, ms "
          "(one GPU's share)")
    print(f"  {'':<26} {'default':>9} {'peers set':>9} {'llm-anal.':>9} {'GenZ':>9}   why they differ")
    print(f"  {'':<26} {'':>9} {'up, eff 1':>9}")
    pre, pq = d["prefill"], q["prefill"]
    print(_row("GEMMs", [pre["gemm"], pq["gemm"], LLM_ANALYSIS["gemm"], GENZ["gemm"]],
               f"default: {p.flops:.3e} FLOPs (causal products, the LM head on 16 positions) against the peers' "
               f"{peers.prefill.flops:.3e} (dense S×S, every position), each GEMM at its shape's efficiency "
               f"(large ones 84-85% of the 989 TFLOP/s, fused attention "
               f"{est.prefill.by_name()['attn_scores'].efficiency:.0%}) against 100%"))
    print(_row("  of which attention", [pre["attention"], pq["attention"], None, None],
               "the peers' attention runs at the peak; FlashAttention-3 reaches 52% at 1,024 keys per query "
               "(the causal mean of 2,048)"))
    print(_row("  of which LM head", [pre["lm_head"], pq["lm_head"], 8.703, 8.703],
               "default: the last position of each sequence (an engine's prefill); the peers: all 32,768"))
    print(_row("norms", [pre["norms"], pq["norms"], LLM_ANALYSIS["norms"], GENZ["norms"]],
               "ours: 161 RMSNorms in bf16, replicated on every TP rank, each reading and writing b·s·h; "
               "llm-analysis: 2 fp32 LN passes per layer over b·s·h/8 (sequence-parallel norms); GenZ: none"))
    print(_row("residual, SwiGLU, rotary", [pre["elementwise"], pq["elementwise"], 0.0, 0.0],
               "element-wise kernels (2 residual adds, silu·up, rotary on q/k per layer) through HBM at 89% of "
               "its bandwidth (default) or 100%; neither peer counts them"))
    print(_row("embedding", [pre["embedding"], pq["embedding"], LLM_ANALYSIS["embedding"], GENZ["embedding"]],
               "ours: gather b·s rows of V/8 (a lookup); llm-analysis: reads the whole table; GenZ: a GEMM"))
    ar_one = next(c for c in p.collectives if c.after == "o_proj")
    print(_row("all-reduces (161)", [pre["all_reduce"], pq["all_reduce"], LLM_ANALYSIS["all_reduce"], GENZ["all_reduce"]],
               f"2 per layer + the embedding's in all three, each of b·s·h·2 = 536,870,912 B; one = "
               f"{ar_one.time_s / ar_one.count * MS:.4f} ms here (450e9 B/s per direction + 15.6 µs measured "
               f"latency), 2.0878 llm-analysis (450e9, no latency), 1.9634 GenZ (450 GiB/s + 19 µs); measured "
               f"{MEASURED_AR_MS:.3f} ms"))
    print(_row("logits all-gather", [pre["gather"], pq["gather"], LLM_ANALYSIS["logits_gather"], GENZ["logits_gather"]],
               "the logits of every computed position: 16 of them by default, 32,768 × 128,256 × 2 B in the "
               "peers' set-up, which GenZ charges and llm-analysis ignores"))
    print(_row("total", [pre["total"], pq["total"], LLM_ANALYSIS["total"], GENZ["total"]],
               f"default = compute {pre['compute']:.1f} + communication {pre['communication']:.1f}; no overlap in "
               "any of the three"))
    t0 = ef.T0_S
    ef.T0_S = 0.0  # how much of the default's time is the fixed kernel cost (an ablation, printed as such)
    try:
        no_t0 = estimate(cfg, wl, hw, tp8)
    finally:
        ef.T0_S = t0
    print(f"  the reference convention (transformers' eager code: dense S×S scores through memory, the K/V repeat, "
          f"every position's logits): {ref.prefill.time_s * MS:.1f} ms; with the measured all-reduce: "
          f"{(p.time_s - pre['all_reduce'] / MS + 161 * MEASURED_AR_MS / MS) * MS:.1f} ms; overlap (best case): "
          f"{estimate(cfg, wl, hw, Parallel(tp=8, overlap=True)).prefill.time_s * MS:.1f} ms")
    dec, dq = d["decode"], q["decode"]
    print("  decode, ms per output token (context 2048 ... 2303, 16 sequences)")
    print(_row("GEMMs (weights)", [dec["gemm"] - dec["attention"], dq["gemm"] - dq["attention"], None, None],
               f"{sum(o.weight_bytes for o in est.decode.gemm_ops) / wl.new_tokens / 1e9:.1f} GB of GEMM weights "
               "per GPU per step: at 89% of 3.35 TB/s "
               f"(the measured triad rate) against 100%; plus the fixed {t0 * 1e6:.2f} µs of each of 80 × 5 kernels "
               f"(q|k|v, attention, o, gate|up, down: engines fuse q|k|v and gate|up) and the LM head's, "
               f"{(est.decode.time_s - no_t0.decode.time_s) / wl.new_tokens * MS:.2f} ms of the step, the peers none"))
    print(_row("attention (KV cache)", [dec["attention"], dq["attention"], None, None],
               "16 × ~2,176 cached tokens × 1 KV head per rank × 256 × 2 B per layer, read by the fused kernel"))
    print(_row("norms, element-wise", [dec["norms"] + dec["elementwise"] + dec["embedding"],
                                       dq["norms"] + dq["elementwise"] + dq["embedding"], None, None],
               "16 rows each: tiny"))
    print(_row("communication", [dec["communication"], dq["communication"], LLM_ANALYSIS["decode_comm_token"], None],
               "161 all-reduces of 262,144 B at 15.6 µs latency + bytes, and the logits gather; llm-analysis: 160 × "
               "its 8 µs floor; measured all-reduce of 262,144 B: 19.1 µs (aiconfigurator), 160 × = 3.06 ms"))
    print(_row("total", [dec["total"], dq["total"], LLM_ANALYSIS["decode_token"], GENZ["decode_token"]],
               f"the reference convention: {ref.time_per_output_token_s * MS:.2f} ms (its eager attention repeats "
               "K/V per query head and sends the scores through memory, every step)"))
    print("  per op, one GPU, default (prefill compute | communication after it, ms; decode per token, ms):")
    dbn = est.decode.by_name()
    for o in p.ops:
        c = p.comm_by_op().get(o.name, 0.0)
        od = dbn.get(o.name)
        print(f"    {o.name:<12} {o.time_s * MS:8.2f} | {c * MS:7.2f}   decode {od.time_s * MS / wl.new_tokens:7.3f}   "
              f"{o.efficiency_by}" if od else f"    {o.name:<12} {o.time_s * MS:8.2f} | {c * MS:7.2f}")
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
    print(f"  within 5% at {', '.join(f'{sz:,}' for sz in close)} B; the model is faster than measured in between "
          f"(worst {worst[1]:+.0%} at {worst[0]:,} B), where NCCL's protocols do not reach the line rate — "
          "measured links (--intra-busbw, --intra-latency-us) replace the catalogue's")
    print()


def case_c() -> None:
    a = LLAMA31_405B
    hw = get_hardware(a.gpu)
    wl = Workload(batch=a.global_batch, seq_len=a.seq_len)
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
          "in this model (Korthikanti terms, all 16 micro-batches in flight on the first stage); each GEMM at its "
          "shape's efficiency; the published GPU-hours cover the whole pre-training (long-context stage, "
          "annealing, restarts), not only 8k-context steps")


if __name__ == "__main__":
    case_a()
    case_b()
    case_c()
