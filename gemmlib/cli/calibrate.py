"""`python -m gemmlib calibrate`: measure, on this device, how fast each op of a model really runs.

Examples::

    python -m gemmlib calibrate                                   # llama-3-8b ÷ 16 on a CPU, ÷ 1 on a GPU
    python -m gemmlib calibrate --device cuda --preset llama-3-8b --scale 1 --seq-len 2048 --dtypes bf16,fp16
    python -m gemmlib calibrate --preset gpt2 --scale 4 --json

Times every distinct weight GEMM of the model at M = 1 … the prefill size, the attention products
at prefill and decode shapes and every non-GEMM op, per dtype, and saves the points beside the
measured ceilings. The estimate then offers "NAME (calibrated)" (``estimate --gpu``, the
estimator and Roofline pages). ``validate`` checks it against a real forward pass.
"""

from __future__ import annotations

import argparse
import json
import sys

from gemmlib.cli.profile import nonneg_int, positive_int, resolve_device

MODEL_FLAGS = ("preset", "scale", "layers", "batch", "seq_len", "new_tokens")


def add_model_arguments(p: argparse.ArgumentParser) -> None:
    """The model and workload flags ``calibrate`` and ``validate`` share (defaults per device)."""
    p.add_argument("--device", default=None, help="cpu or cuda (default: cuda when present, else cpu)")
    p.add_argument("--preset", default=None, help="a dense preset (default llama-3-8b)")
    p.add_argument("--scale", type=positive_int, default=None,
                   help="divide hidden, head size, MLP and vocabulary by this to fit (default 16 on a CPU, 1 on a GPU)")
    p.add_argument("--layers", type=positive_int, default=None, help="layers to build (default 2 on a CPU, 4 on a GPU)")
    p.add_argument("--batch", type=positive_int, default=None, help="sequences (default 1)")
    p.add_argument("--seq-len", type=positive_int, default=None, help="prompt tokens (default 128 CPU, 2048 GPU)")
    p.add_argument("--new-tokens", type=nonneg_int, default=None, help="decode steps (default 8 CPU, 32 GPU; 0: the prefill only)")
    p.add_argument("--attention", choices=("eager", "sdpa"), default="eager",
                   help="eager: visible matmuls + softmax; sdpa: fused kernel")
    p.add_argument("--threads", type=positive_int, default=None,
                   help="CPU threads for torch (default: torch's own; 1 keeps a busy shared CPU's tiny ops steady)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")


def run_from_args(args: argparse.Namespace, dtype: str | None):
    from gemmlib.measure.calibrate import make_run

    return make_run(args.device, args.preset, args.scale, args.layers, args.batch, args.seq_len, args.new_tokens,
                    dtype, args.attention)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p)
    p.add_argument("--dtypes", default=None, help="comma-separated: fp32, bf16, fp16 (default fp32 CPU, bf16 GPU)")
    p.add_argument("--min-run-time", type=float, default=0.05, help="seconds of timing per point (default 0.05)")


def run(args: argparse.Namespace) -> int:
    from gemmlib.cli.running import run_job
    from gemmlib.core.calibration import save_calibration
    from gemmlib.core.errors import InputError
    from gemmlib.measure import calibrate as cb

    args.device = resolve_device(args.device)
    dtypes = tuple(d.strip() for d in args.dtypes.split(",") if d.strip()) if args.dtypes is not None else None
    if dtypes == ():  # an empty list is a slip, not "the default"
        raise InputError("--dtypes names no dtype; give fp32, bf16 or fp16 (comma-separated), or leave it out")
    if not 0 < args.min_run_time <= 10:
        raise InputError(f"--min-run-time must be in (0, 10] seconds, got {args.min_run_time}")
    run_ = run_from_args(args, dtypes[0] if dtypes else None)
    # in a worker process, under the server's caps and in the machine's queue, like every benchmark
    cal = run_job(cb.SPEC, cb.CalibrationConfig(run_, args.device, dtypes=dtypes, min_run_time=args.min_run_time,
                                                threads=args.threads), quiet=args.json).calibration
    saved = save_calibration(cal)
    hw = cal.hardware()
    if args.json:
        sys.stdout.write(json.dumps({**cal.to_dict(), "hardware": hw.name, "peaks": cal.peaks(),
                                     "bandwidth": cal.bandwidth(), "path": str(saved) if saved else None}) + "\n")
        return 0
    out = sys.stdout.write
    out(f"calibrated {run_.describe()}\non {cal.device_name}: {len(cal.gemm)} GEMM points, {len(cal.other)} "
        f"non-GEMM points\n")
    for dt, peak in cal.peaks().items():
        out(f"  best {dt} GEMM: {peak / 1e12:.3g} TFLOP/s\n")
    out(f"  best bandwidth: {cal.bandwidth() / 1e9:.3g} GB/s\n")
    for dt in cal.dtypes:
        lin = sorted((p for p in cal.gemm if p.family == "linear" and p.dtype == dt), key=lambda p: (p.n * p.k, p.m))
        if lin:
            big = max(p.n * p.k for p in lin)
            row = [p for p in lin if p.n * p.k == big]
            out(f"  {dt} {row[0].names} ({row[0].k}→{row[0].n}): " + ", ".join(
                f"M={p.m} {p.flops / p.seconds / 1e12:.3g} TFLOP/s" for p in row) + "\n")
    for n in cal.notes:
        out(f"  note: {n}\n")
    if saved is None:
        out("not saved: the machine policy keeps the shared measurements read-only (GEMM_CEILINGS_READ_ONLY)\n")
    else:
        out(f"saved to {saved}; estimate with --gpu '{hw.name}', check with `python -m gemmlib validate`\n")
    return 0
