"""`python -m gemmlib estimate`: FLOPs, bytes, memory and time of every GEMM of an LLM.

Examples::

    python -m gemmlib estimate --preset llama-3-8b --batch 8 --seq-len 2048 --new-tokens 256 --gpu h100
    python -m gemmlib estimate --layers 32 --hidden 4096 --ffn 14336 --heads 32 --kv-heads 8 \\
        --vocab 128256 --seq-len 1024 --json
    python -m gemmlib estimate --config path/to/config.json --gpu a100 --gpus 2

The same code path as the LLM Estimator page (gemmlib.llm.accounting). Light on
purpose: no torch, answers in well under a second.
"""

from __future__ import annotations

import argparse
import sys

from gemmlib.core.ceilings import measured_hardware_all
from gemmlib.core.dtypes import DTYPES
from gemmlib.core.errors import InputError
from gemmlib.core.hardware import get_hardware
from gemmlib.llm.accounting import Workload, estimate
from gemmlib.llm.config import ModelConfig
from gemmlib.llm.hf import load_config_file
from gemmlib.llm.presets import from_name, preset_names


def add_arguments(p: argparse.ArgumentParser) -> None:
    src = p.add_argument_group("model (one of: --preset, --config, or the shape flags)")
    src.add_argument("--preset", metavar="NAME", help="a preset, e.g. llama-3-8b, mixtral-8x7b, gpt2")
    src.add_argument("--config", metavar="FILE", help="a Hugging Face config.json")
    src.add_argument("--layers", type=int)
    src.add_argument("--hidden", type=int, help="hidden size d_model")
    src.add_argument("--ffn", type=int, help="MLP inner width (intermediate size)")
    src.add_argument("--heads", type=int, help="query heads")
    src.add_argument("--kv-heads", type=int, help="key/value heads (default: = heads)")
    src.add_argument("--head-dim", type=int, help="per-head width (default: hidden / heads)")
    src.add_argument("--vocab", type=int, help="vocabulary size")
    src.add_argument("--mlp", choices=["gated", "plain"], default="gated",
                     help="gated (SwiGLU: gate, up, down) or plain (up, down); default gated")
    src.add_argument("--tied-embeddings", action="store_true", help="LM head shares the embedding")
    src.add_argument("--experts", type=int, default=0, help="mixture of experts: number of experts")
    src.add_argument("--experts-per-token", type=int, default=0, help="experts each token runs through")
    wl = p.add_argument_group("workload")
    wl.add_argument("--batch", type=int, default=1, help="concurrent sequences (default 1)")
    wl.add_argument("--seq-len", type=int, default=512, help="prompt tokens per sequence (default 512)")
    wl.add_argument("--new-tokens", type=int, default=128,
                    help="decode steps after the prefill (default 128); step i sees S + i cached tokens")
    wl.add_argument("--causal", action="store_true", help="count only the causal triangle of attention")
    wl.add_argument("--lm-head", choices=["all", "last"], default="all",
                    help="LM head over every prompt position (eager default) or the last only")
    dts = sorted(DTYPES)
    wl.add_argument("--weight-dtype", default="bf16", choices=dts)
    wl.add_argument("--act-dtype", default="bf16", choices=dts, help="activations; sets the GEMM peak used")
    wl.add_argument("--kv-dtype", default="bf16", choices=dts)
    hw = p.add_argument_group("hardware")
    hw.add_argument("--gpu", default="h100", help="catalogue name or alias (h100, h200, a100, l40s, 4090, cpu), or the name of a "
                    "ceiling measured on this machine, e.g. 'NVIDIA H200 (measured)'")
    hw.add_argument("--gpus", type=int, default=1, help="number of devices (ideal tensor parallelism)")
    hw.add_argument("--efficiency", type=float, default=1.0, help="share of peak and bandwidth reached (0-1]")
    out = p.add_argument_group("output")
    out.add_argument("--json", action="store_true", help="print one JSON object")
    out.add_argument("--macs", action="store_true", help="table in multiply-accumulates (FLOPs / 2)")


_SHAPE = ("layers", "hidden", "ffn", "heads", "kv_heads", "head_dim", "vocab")


def model_from_args(args: argparse.Namespace):

    shape_given = [f for f in _SHAPE if getattr(args, f) is not None]
    shape_given += [f for f in ("experts", "experts_per_token") if getattr(args, f)]
    sources = [s for s, on in (("--preset", args.preset is not None), ("--config", args.config is not None),
                               ("shape flags", bool(shape_given))) if on]
    if len(sources) > 1:
        raise InputError(f"give only one of --preset, --config or the shape flags (got {' and '.join(sources)})")
    if args.preset is not None:
        return from_name(args.preset)
    if args.config is not None:
        return load_config_file(args.config)
    if not shape_given:

        raise InputError("say which model: --preset NAME (" + ", ".join(preset_names())
                         + "), --config FILE, or --layers --hidden --ffn --heads --vocab")
    missing = [f"--{f.replace('_', '-')}" for f in ("layers", "hidden", "ffn", "heads", "vocab")
               if getattr(args, f) is None]
    if missing:
        raise InputError(f"a custom model needs {', '.join(missing)}")
    for f in _SHAPE:
        v = getattr(args, f)
        if v is not None and v < 1:
            raise InputError(f"--{f.replace('_', '-')} must be at least 1, got {v}")
    return ModelConfig(layers=args.layers, hidden=args.hidden, ffn=args.ffn, heads=args.heads,
                       kv_heads=args.kv_heads or 0, head_dim=args.head_dim or 0, vocab=args.vocab,
                       mlp=args.mlp, tied_embeddings=args.tied_embeddings, experts=args.experts,
                       experts_per_token=args.experts_per_token, name="custom")


def _fmt(x: float | None, unit: str = "") -> str:
    if x is None:
        return "-"
    ax = abs(x)
    for scale, prefix in ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if ax >= scale:
            return f"{x / scale:.3g} {prefix}{unit}"
    return f"{x:.3g} {unit}".rstrip()


def _time(s: float | None) -> str:
    if s is None:
        return "-"
    if s >= 1:
        return f"{s:.3g} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} us"


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = "  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(headers, widths, strict=True)))
    out = [line, "-" * len(line)]
    for r in rows:
        out.append("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))))
    return "\n".join(out)


def render_text(est, macs: bool = False) -> str:
    """The human-readable report (also used by tests)."""
    m, wl, d = est.model, est.workload, est.to_dict()
    unit, div = ("MAC", 2) if macs else ("FLOP", 1)
    lines = [
        f"model     {m.name}: {m.params:,} parameters"
        + (f" ({m.active_params:,} active per token)" if m.is_moe else "")
        + f"; {m.layers} layers, hidden {m.hidden}, heads {m.heads}/{m.kv_heads} KV, head dim {m.head_dim}, "
        f"FFN {m.ffn} {m.mlp}, vocab {m.vocab}" + (f", {m.experts} experts top-{m.experts_per_token}" if m.is_moe else ""),
        f"workload  batch {wl.batch}, prompt {wl.seq_len}, {wl.new_tokens} decode steps; "
        f"{'causal' if wl.causal else 'dense'} attention, LM head on {wl.lm_head} positions; "
        f"weights {wl.weight_dtype}, activations {wl.act_dtype}, KV {wl.kv_dtype}",
        f"hardware  {est.gpus} x {est.hardware.name}, efficiency {est.efficiency:g}, "
        f"peak {_fmt(d['hardware']['peak_flops_per_gpu'], 'FLOP/s')} ({wl.act_dtype}), "
        f"{_fmt(est.hardware.bandwidth, 'B/s')} each",
        "",
    ]
    for phase in (est.prefill, est.decode):
        if not phase.ops:
            lines.append(f"{phase.name}: no steps")
            continue
        lines.append(f"{phase.name.upper()}  ({'all steps, ' if phase.name == 'decode' else ''}whole batch)")
        rows = []
        for o in phase.gemm_ops:
            n = f"{o.n}..{o.n_last}" if o.n_last else str(o.n)
            k = f"{o.k}..{o.k_last}" if o.k_last else str(o.k)
            rows.append([o.name, str(o.m), n, k, f"{o.count:,}", _fmt(o.flops / div), _fmt(o.bytes, "B"),
                         f"{o.intensity:.3g}", o.bound, _time(o.time_s)])
        rows.append(["GEMM total", "", "", "", "", _fmt(phase.flops / div), _fmt(sum(o.bytes for o in phase.gemm_ops),
                     "B"), "", "", _time(phase.gemm_time_s)])
        for o in phase.other_ops:  # element-wise work: its FLOPs are not GEMM FLOPs
            rows.append([f"{o.name} (not GEMM)", str(o.m), str(o.n), "", f"{o.count:,}", _fmt(o.flops / div),
                         _fmt(o.bytes, "B"), f"{o.intensity:.3g}", o.bound, _time(o.time_s)])
        rows.append(["total", "", "", "", "", "", _fmt(phase.bytes, "B"), "", "", _time(phase.time_s)])
        lines.append(_table(["op", "M", "N", "K", "count", unit + "s", "bytes", "FLOP/B", "bound", "time"], rows))
        fs, ts = phase.gemm_share_of_flops, phase.gemm_share_of_time
        lines.append(f"GEMM share of the {phase.name}: {fs:.2%} of FLOPs, {ts:.1%} of the time")
        lines.append("")
    mem, t = est.memory, est.times()
    lines += [
        f"memory    weights {_fmt(mem.weights_bytes, 'B')} + KV cache {_fmt(mem.kv_cache_bytes, 'B')} "
        f"= {_fmt(mem.total_bytes, 'B')} of {_fmt(mem.capacity_bytes, 'B')}: "
        + ("fits" if mem.fits else f"does NOT fit (needs at least {mem.min_gpus} of these devices)"),
        f"time      prefill (time to first token) {_time(t['ttft_s'])}; per output token "
        f"{_time(t['time_per_output_token_s'])}; decode {_fmt(t['decode_tokens_per_s'])} tokens/s (whole batch); "
        f"total {_time(t['total_s'])}",
        "",
        "counting switches (prefill / decode " + unit + "s)",
    ]
    for r in d["variants"]:
        mark = "*" if r["selected"] else " "
        lines.append(f" {mark} {r['variant']:<55} {_fmt(r['prefill_flops'] / div):>10} / "
                     f"{_fmt(r['decode_flops'] / div):>10}")
    lines += ["", "rules of thumb vs the exact prefill count"]
    for r in d["rules_of_thumb"]:
        lines.append(f"  {r['rule']}: {_fmt(r['value'])} (exact / rule = {r['ratio']:.3g}) - {r['reason']}")
    return "\n".join(lines)


def _hardware(name: str):
    """A catalogue row, or a ceiling measured on this machine (``python -m gemmlib devices``) by its name."""

    try:
        return get_hardware(name)
    except InputError:
        try:

            measured = {h.name.lower(): h for h in measured_hardware_all()}
        except Exception:  # noqa: BLE001 - no measurements: report the catalogue error
            measured = {}
        hw = measured.get(str(name).strip().lower())
        if hw is None:
            raise
        return hw


def run(args: argparse.Namespace) -> int:

    cfg = model_from_args(args)
    wl = Workload(batch=args.batch, seq_len=args.seq_len, new_tokens=args.new_tokens, causal=args.causal,
                  lm_head=args.lm_head, weight_dtype=args.weight_dtype, act_dtype=args.act_dtype,
                  kv_dtype=args.kv_dtype)
    est = estimate(cfg, wl, _hardware(args.gpu), gpus=args.gpus, efficiency=args.efficiency)
    if args.json:
        sys.stdout.write(est.to_json() + "\n")
    else:
        sys.stdout.write(render_text(est, macs=args.macs) + "\n")
    return 0
