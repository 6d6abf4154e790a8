"""`python -m gemmlib bench tp --nproc N`: one layer's attention projections and MLP split
column/row-parallel across N ranks (two all-reduces), against the same layer on one rank and against
the estimate; checked to match the one-rank output.

Examples::

    python -m gemmlib bench tp --nproc 2                                   # llama-3-8b ÷ 16, 128 tokens, CPU
    python -m gemmlib bench tp --nproc 8 --preset llama-3-70b --scale 1 --seq-len 2048 --dtype bf16
    python -m gemmlib bench tp --nproc 2 --hidden 256 --heads 8 --kv-heads 2 --ffn 512 --json

Nothing heavy is imported until ``run``.
"""

from __future__ import annotations

import argparse
import json

from gemmlib.cli.bench_collective import add_launch_arguments, run_ranked
from gemmlib.cli.common import whole
from gemmlib.core.errors import InputError
from gemmlib.core.results import jsonable
from gemmlib.measure import launch, safety
from gemmlib.measure import tp as tpm


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_launch_arguments(parser)
    parser.add_argument("--preset", default=None, help="a dense preset (default llama-3-8b on a CPU, llama-3-70b "
                                                       "on GPUs)")
    parser.add_argument("--scale", type=whole(1), default=None,
                        help="divide hidden, head size and MLP width by this (default 16 on a CPU, 1 on GPUs)")
    parser.add_argument("--hidden", type=whole(1), default=None,
                        help="a custom layer instead of a preset: its width (with --heads and --ffn)")
    parser.add_argument("--heads", type=whole(1), default=None, help="custom layer: query heads")
    parser.add_argument("--kv-heads", type=whole(1), default=None, help="custom layer: K/V heads (default = --heads)")
    parser.add_argument("--ffn", type=whole(1), default=None, help="custom layer: MLP inner width")
    parser.add_argument("--mlp", choices=["gated", "plain"], default=None,
                        help="custom layer: gated (SwiGLU: gate, up, down; the default) or plain (up, down)")
    parser.add_argument("--seq-len", type=whole(1), default=None, help="tokens per sequence (default 128 CPU, 2048 GPU)")
    parser.add_argument("--batch", type=whole(1), default=1, help="sequences (default 1)")
    parser.add_argument("--dtype", default=None, help="fp32 (CPU default), bf16 (GPU default), fp16 or fp64")
    parser.add_argument("--iters", type=whole(1, tpm.MAX_ITERS), default=10,
                        help=f"timed samples, at most {tpm.MAX_ITERS:,} (default 10)")
    parser.add_argument("--warmup", type=whole(0, tpm.MAX_WARMUP), default=2,
                        help=f"untimed passes, at most {tpm.MAX_WARMUP:,} (default 2; 0: none)")
    parser.add_argument("--interconnect", default=None, metavar="NAME",
                        help="the measured interconnect the estimate's all-reduces use (default: the one measured "
                             "for this backend and rank count, if any)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def config_from_args(args: argparse.Namespace, lim: safety.Limits) -> tuple[tpm.TPConfig, launch.Plan]:
    p = launch.plan(args.nproc, args.backend, lim)
    base = tpm.gpu_default() if p.kind == "cuda" else tpm.cpu_default()
    custom = {k: getattr(args, k) for k in ("hidden", "heads", "kv_heads", "ffn") if getattr(args, k) is not None}
    if custom:
        if args.preset is not None:
            raise InputError("give either --preset or the layer's shape (--hidden --heads --ffn), not both")
        if args.scale is not None:  # it divides a preset's sizes: a custom layer runs at the sizes given
            raise InputError("--scale divides a preset's sizes; a custom layer (--hidden --heads --ffn) runs at the "
                             "sizes given: leave --scale out")
        missing = [f"--{k}" for k in ("hidden", "heads", "ffn") if k not in custom]
        if missing:
            raise InputError(f"a custom layer needs {', '.join(missing)} too (or give --preset instead)")
        model = tpm.model_for(None, mlp=args.mlp or "gated", **custom)
    else:
        if args.mlp is not None:  # a preset's MLP is the preset's
            raise InputError("--mlp shapes a custom layer (--hidden --heads --ffn); a preset keeps its own MLP: "
                             "leave --mlp out")
        model = tpm.model_for(args.preset or base["preset"], base["scale"] if args.scale is None else args.scale)
    seq_len = base["seq_len"] if args.seq_len is None else args.seq_len
    cfg = tpm.TPConfig(model=model, seq_len=seq_len, batch=args.batch, dtype=args.dtype or base["dtype"],
                       iters=args.iters, warmup=args.warmup)
    return cfg, p


def render(run: tpm.TPRun) -> str:
    m, e = run.measured, run.estimate or {}
    lines = [f"tensor-parallel layer: {m['model_name']} (hidden {m['hidden']}, {m['heads']} heads / {m['kv_heads']} "
             f"K/V, MLP {m['ffn']} {m['mlp']}), {m['tokens']} tokens, {m['dtype']}, {m['nproc']} ranks over "
             f"{m['backend']} on {m['device_name']}"]
    if run.note:
        lines.append(f"NOTE: {run.note}. Each CPU rank has {m['threads_per_rank']} thread{'' if m['threads_per_rank'] == 1 else 's'} as its device; the "
                     "one-rank baseline runs on one such device.")
    lines.append(f"{'':<28}{'measured ms':>12}{'p20':>9}{'p80':>9}{'estimate ms':>13}")

    def est(key: str) -> str:
        d = e.get(key) or {}
        return f"{d['time_s'] * 1e3:.4g}" if d.get("time_s") else "—"

    lines.append(f"{'one rank (whole layer)':<28}{m['one_rank_s'] * 1e3:>12.4g}{m['one_rank']['p20_s'] * 1e3:>9.4g}"
                 f"{m['one_rank']['p80_s'] * 1e3:>9.4g}{est('one_rank'):>13}")
    label = f"{m['nproc']} ranks (slowest rank)"
    lines.append(f"{label:<28}{m['tp_s'] * 1e3:>12.4g}"
                 f"{m['tp']['p20_s'] * 1e3:>9.4g}{m['tp']['p80_s'] * 1e3:>9.4g}{est('tp'):>13}")
    ec = (e.get("tp") or {}).get("comm_s")
    lines.append(f"{'  of which 2 all-reduces':<28}{m['comm_s'] * 1e3:>12.4g}{'':>18}"
                 f"{(f'{ec * 1e3:.4g}' if ec is not None else '—'):>13}")
    lines.append(f"speed-up {m['speedup']:.3g}×, scaling efficiency {m['scaling_efficiency']:.1%}, communication "
                 f"{m['comm_share']:.1%} of the layer; all-reduce of {m['allreduce_bytes']:,.0f} B")
    lines.append(f"output vs one rank: max rel. difference {m['rel_diff']:.2e} (tolerance {m['tolerance']:.0e} for "
                 f"{m['dtype']}): {'MATCHES' if m['correct'] else 'DOES NOT MATCH'}; vs float64: tp "
                 f"{m['rel_error_tp_fp64']:.2e}, one rank {m['rel_error_one_rank_fp64']:.2e}")
    if e.get("error"):
        lines.append(f"estimate: not available ({e['error']})")
    else:
        lines.append(f"estimate: {e.get('hardware')} ({e.get('hardware_source')}); link: "
                     f"{e.get('link') or 'none'}" + (f" — {e['note']}" if e.get("note") else ""))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    lim = safety.limits()
    cfg, p = config_from_args(args, lim)
    tpm.check(cfg, p, lim, args.interconnect)  # refused before it queues and says it starts its ranks
    res = run_ranked("CLI: bench tp", lambda progress: tpm.run_tp(
        cfg, nproc=p.nproc, backend=p.backend, timeout_s=args.timeout, lim=lim, progress=progress,
        interconnect_name=args.interconnect), p)
    if res is None:
        return 1
    if not res.measured:
        return 0
    if args.json:
        print(json.dumps(jsonable(res.to_dict()), indent=2))
    else:
        print(render(res))
    return 0 if res.measured["correct"] else 1
