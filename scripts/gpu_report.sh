#!/usr/bin/env bash
# The one script to run on a GPU machine (torch, triton and nvidia-ml-py installed; no internet).
#
#   OUT=/some/dir scripts/gpu_report.sh        # default OUT=./out
#   QUICK=1 scripts/gpu_report.sh              # report --quick, smaller checks (a few minutes)
#
# Steps, each under its own timeout so the script never hangs (12 minutes at the very most; about
# 5 minutes on one H200 when nothing times out):
#   1. env         versions, nvidia-smi                                     (60 s)
#   2. gpu_checks  issue 4's GPU targets: bf16 8192³ TFLOP/s from the harness vs
#                  triton.testing.do_bench on the same tensors (≥ 750, within 3 %),
#                  int8 and fp8 vs bf16 (≥ 1.5×); also the CUDA-events and CUDA-graph
#                  timing paths                                           (120 s)
#   3. devices     python -m gemmlib devices --json                        (60 s)
#   4. report      python -m gemmlib report --out $OUT/report              (330 s; sections not
#                  started after 200 s are skipped)
#   5. honesty     benchmarks/bench_harness_honesty.py on the GPU (fp32)   (45 s)
#   6. pytest      this issue's tests, the GPU ones included             (120 s)
# Everything lands under $OUT: <step>.out / <step>.err per step, steps.log with exit codes
# and durations, gpu_checks.json, devices.json, report/ (report.md, results.json, charts/).
set -u
cd "$(dirname "$0")/.." || exit 1
OUT="${OUT:-./out}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
PY="${PYTHON:-python}"
export GEMM_CACHE_DIR="$OUT/cache"   # measured ceilings are kept here
export PYTHONUNBUFFERED=1
START=$(date +%s)

log() { echo "[$(($(date +%s) - START)) s] $*" | tee -a "$OUT/steps.log"; }

run_step() {  # run_step NAME SECONDS COMMAND... ; stdin passes through
    local name=$1 limit=$2
    shift 2
    log "start $name (limit ${limit} s)"
    local t0=$(date +%s)
    timeout --signal=TERM --kill-after=15 "$limit" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
    local rc=$?
    local why=""
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then why=" (TIMED OUT)"; fi
    log "end   $name rc=$rc$why in $(($(date +%s) - t0)) s"
    tail -n 25 "$OUT/$name.out" | sed "s/^/    $name| /"
    if [ "$rc" -ne 0 ]; then tail -n 15 "$OUT/$name.err" | sed "s/^/    $name! /"; fi
    return 0
}

run_step env 60 bash -c "$PY -c 'import sys, torch, triton; print(sys.version.split()[0], \"torch\", torch.__version__, \"cuda\", torch.version.cuda, \"triton\", triton.__version__); print(torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0))'; nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,power.limit --format=csv || true"

QUICK="${QUICK:-0}"
if [ "$QUICK" = "1" ]; then QARG=quick; RQ=--quick; else QARG=full; RQ=; fi

run_step gpu_checks 120 "$PY" - "$OUT/gpu_checks.json" "$QARG" <<'PYEOF'
"""Issue 4's GPU targets, measured and printed; every check in its own try so one failure loses nothing."""
import json
import sys
import traceback

import torch

from gemmlib.measure import precision as bp
from gemmlib.measure import harness

out_path = sys.argv[1]
if not torch.cuda.is_available():
    print("no CUDA device: the GPU checks cannot run here")
    json.dump({"error": "no CUDA device"}, open(out_path, "w", encoding="utf-8"))
    sys.exit(3)
res = {"device": torch.cuda.get_device_name(0), "capability": list(torch.cuda.get_device_capability(0)),
       "torch": torch.__version__}


def check(name, fn):
    try:
        res[name] = fn()
    except Exception as e:  # noqa: BLE001
        res[name] = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
    print(name, json.dumps(res[name], indent=1, default=str)[:2500], flush=True)


N = 4096 if len(sys.argv) > 2 and sys.argv[2] == "quick" else 8192
FLOPS = 2 * N**3


def bf16_vs_do_bench():
    import triton.testing as tt
    g = torch.Generator(device="cpu").manual_seed(0)
    a = torch.randn(N, N, generator=g).to("cuda", torch.bfloat16)
    b = torch.randn(N, N, generator=g).to("cuda", torch.bfloat16)
    out = {}
    for rnd in range(2):  # two rounds: the first also warms clocks and cuBLAS heuristics
        t = harness.time_callable(torch.matmul, device="cuda", args_list=[(a, b)], min_run_time=0.5)
        ms = tt.do_bench(lambda: torch.matmul(a, b), warmup=100, rep=500, return_mode="median")
        out[f"round{rnd}"] = {"harness_tflops": FLOPS / t.median_s / 1e12, "harness_method": t.method,
                              "harness_reps": t.reps, "do_bench_tflops": FLOPS / (ms / 1e3) / 1e12}
    r = out["round1"]
    r["difference"] = r["harness_tflops"] / r["do_bench_tflops"] - 1
    if N == 8192:
        r["target_750_tflops"] = "PASS" if r["harness_tflops"] >= 750 else "FAIL"
    r["target_within_3pct"] = "PASS" if abs(r["difference"]) <= 0.03 else "FAIL"
    ev = harness.time_callable(torch.matmul, device="cuda", args_list=[(a, b)], min_run_time=0.5, flush_l2=False)
    gr = harness.time_callable(torch.matmul, device="cuda", args_list=[(a, b)], min_run_time=0.5, cuda_graph=True)
    out["cuda_events_tflops"] = FLOPS / ev.median_s / 1e12
    out["cuda_graph_tflops"] = FLOPS / gr.median_s / 1e12
    small = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    s_db = harness.time_callable(torch.matmul, device="cuda", args_list=[(small, small)], min_run_time=0.2)
    s_gr = harness.time_callable(torch.matmul, device="cuda", args_list=[(small, small)], min_run_time=0.2,
                                 cuda_graph=True)
    out["small_256_us"] = {"do_bench": s_db.median_s * 1e6, "cuda_graph": s_gr.median_s * 1e6}
    return out


def low_precision_ratios():
    cfg = bp.PrecisionConfig(device="cuda", shapes=((N, N, N, f"square {N}"),),
                             dtypes=("fp32", "tf32", "bf16", "fp16", "int8", "fp8"), min_run_time=0.5)
    rows = bp.run_precision(cfg, record_results=False)
    by = {r.name: r for r in rows}
    out = {"rows": [{k: d[k] for k in ("name", "supported", "reason", "median_s", "tflops", "rel_error")}
                    for d in (r.to_dict() for r in rows)]}
    bf = by["bf16"].tflops
    for name in ("int8", "fp8", "int8 + quant", "fp8 + quant"):
        r = by.get(name)
        if r is not None and r.supported and bf:
            out[f"{name} / bf16"] = r.tflops / bf
    for name in ("int8", "fp8"):
        if f"{name} / bf16" in out:
            out[f"target_{name}_1.5x_bf16"] = "PASS" if out[f"{name} / bf16"] >= 1.5 else "FAIL"
    out["verdict"] = bp.int8_verdict(rows)
    return out


def article_shape():
    cfg = bp.PrecisionConfig(device="cuda", shapes=(bp.ARTICLE_SHAPE,), dtypes=("fp32", "bf16", "int8"),
                             min_run_time=0.3)
    rows = bp.run_precision(cfg, record_results=False)
    return {"verdict": bp.int8_verdict(rows), "tflops": {r.name: r.tflops for r in rows},
            "rel_error": {r.name: r.rel_error for r in rows}}


def odd_shapes():
    # padding paths on the real device: int8 needs M > 16 and K, N multiples of 8; fp8 K, N multiples of 16
    cfg = bp.PrecisionConfig(device="cuda", shapes=((1, 4100, 4090, "decode M=1, odd K/N"),),
                             dtypes=("int8", "fp8", "bf16"), min_run_time=0.2)
    rows = bp.run_precision(cfg, record_results=False)
    return [{"name": r.name, "supported": r.supported, "reason": r.reason, "rel_error": r.rel_error,
             "tflops": r.tflops} for r in rows]


check(f"bf16_{N}_vs_do_bench", bf16_vs_do_bench)
check(f"low_precision_{N}", low_precision_ratios)
check("article_shape", article_shape)
check("odd_shapes", odd_shapes)
with open(out_path, "w", encoding="utf-8") as f:
    json.dump(res, f, indent=2, default=str)
PYEOF

run_step devices 60 "$PY" -m gemmlib devices --json
cp "$OUT/devices.out" "$OUT/devices.json" 2>/dev/null

run_step report 330 "$PY" -m gemmlib report --out "$OUT/report" --time-budget 200 $RQ

if [ "$QUICK" = "1" ]; then
    log "QUICK=1: honesty and pytest steps skipped"
    exit 0
fi

run_step honesty 45 "$PY" benchmarks/bench_harness_honesty.py --device cuda --size 8192 --rounds 3 --min-run-time 0.3

run_step pytest 120 "$PY" -m pytest -q -p no:cacheprovider tests/measure/test_harness.py tests/measure/test_quant.py \
    tests/measure/test_bench_precision.py tests/measure/test_devices.py tests/measure/test_report.py tests/pages/test_precision_page.py \
    tests/pages/test_devices_page.py

log "all steps done in $(($(date +%s) - START)) s; files under $OUT"
ls -R "$OUT" | head -60
