#!/usr/bin/env bash
# The one script to run on a GPU machine (torch, triton and nvidia-ml-py installed; no internet).
#
#   OUT=/some/dir scripts/gpu_report.sh        # default OUT=./out
#   QUICK=1 scripts/gpu_report.sh              # report --quick, smaller checks
#   BUDGET=600 scripts/gpu_report.sh           # the whole script's limit in seconds (default 600)
#
# Steps, each under its own timeout, and together under BUDGET: a step gets at most what is left of
# it (minus a reserve for the figures), a step with less than 15 s left is skipped and says so.
#   1. env         versions, nvidia-smi                                          (20 s)
#   2. gpu_checks  scripts/gpu_checks.py checks: bf16 8192³ harness vs do_bench in the same run
#                  (≥ 750 TFLOP/s, within 3 %), CUDA events / graphs, int8 and fp8 vs bf16
#                  (≥ 1.5×), the article's shape, odd shapes                       (100 s)
#   3. devices     python -m gemmlib devices --json                               (30 s)
#   4. calibrate   python -m gemmlib calibrate --json (llama-3-8b, 4 layers, 2048 tokens, bf16) (70 s)
#   5. validate    python -m gemmlib validate --json on the same model: measured vs datasheet vs
#                  calibrated, prefill and decode                                  (70 s)
#   6. report      python -m gemmlib report --out $OUT/report (tiling: Triton vs cuBLAS fp16 4096³;
#                  batching: decode M = 1 share of copy bandwidth; rewritten after every section) (180 s)
#   6b. multigpu   with 2 or more GPUs: report --quick --sections collectives,tp (NCCL collectives
#                  8 B..64 MiB, busbw; one llama-3-70b layer tensor-parallel on 2, 4, 8 GPUs vs one GPU
#                  vs the estimate) under $OUT/multigpu; with fewer GPUs a line saying it was skipped.
#                  Quick to fit the budget: `report --sections collectives,tp` runs the 1 GiB sweep (150 s)
#   7. honesty     benchmarks/bench_harness_honesty.py on the GPU (fp32)          (30 s)
#   8. pytest      the GPU tests (page tests skip themselves without streamlit)   (90 s)
#   9. figures     scripts/gpu_checks.py figures: every target, PASS / FAIL / not measured (10 s)
# Everything lands under $OUT: <step>.out / <step>.err per step, steps.log with exit codes and
# durations, gpu_checks.json, devices.json, calibrate.json, validate.json, report/, figures.json.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT="${OUT:-./out}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
PY="${PYTHON:-python}"
BUDGET="${BUDGET:-600}"
RESERVE=12   # seconds kept for the figures step
export GEMM_CACHE_DIR="$OUT/cache"   # measured ceilings and the calibration are kept here
export PYTHONUNBUFFERED=1
START=$(date +%s)

log() { echo "[$(($(date +%s) - START)) s] $*" | tee -a "$OUT/steps.log"; }

run_step() {  # run_step NAME SECONDS COMMAND... ; stdin passes through
    local name=$1 limit=$2
    shift 2
    local left=$((BUDGET - ($(date +%s) - START)))
    if [ "$name" != "figures" ]; then left=$((left - RESERVE)); fi
    if [ "$left" -lt 15 ]; then
        log "skip  $name: only ${left} s of the ${BUDGET} s budget left"
        return 0
    fi
    if [ "$limit" -gt "$left" ]; then limit=$left; fi
    log "start $name (limit ${limit} s)"
    local t0=$(date +%s)
    timeout --signal=TERM --kill-after=10 "$limit" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
    local rc=$?
    local why=""
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then why=" (TIMED OUT)"; fi
    log "end   $name rc=$rc$why in $(($(date +%s) - t0)) s"
    tail -n 25 "$OUT/$name.out" | sed "s/^/    $name| /"
    if [ "$rc" -ne 0 ]; then tail -n 15 "$OUT/$name.err" | sed "s/^/    $name! /"; fi
    return 0
}

QUICK="${QUICK:-0}"
if [ "$QUICK" = "1" ]; then QARG=quick; RQ=--quick; VAL="--layers 2 --seq-len 1024 --new-tokens 16"; else QARG=full; RQ=; VAL=; fi

run_step env 20 bash -c "$PY -c 'import sys, torch, triton; print(sys.version.split()[0], \"torch\", torch.__version__, \"cuda\", torch.version.cuda, \"triton\", triton.__version__); print(torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0))'; nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,power.limit --format=csv || true"

run_step gpu_checks 100 "$PY" scripts/gpu_checks.py checks "$OUT/gpu_checks.json" "$QARG"

run_step devices 30 "$PY" -m gemmlib devices --json
cp "$OUT/devices.out" "$OUT/devices.json" 2>/dev/null

# shellcheck disable=SC2086  # $VAL is a list of flags
run_step calibrate 70 "$PY" -m gemmlib calibrate --device cuda $VAL --json
cp "$OUT/calibrate.out" "$OUT/calibrate.json" 2>/dev/null

# shellcheck disable=SC2086
run_step validate 70 "$PY" -m gemmlib validate --device cuda $VAL --json
cp "$OUT/validate.out" "$OUT/validate.json" 2>/dev/null

run_step report 180 "$PY" -m gemmlib report --device cuda --out "$OUT/report" --time-budget 120 $RQ \
    --sections devices,precision,tiling,batching,profiler

NGPU=$("$PY" -c 'import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)' 2>/dev/null || echo 0)
if [ "${NGPU:-0}" -ge 2 ]; then
    run_step multigpu 150 "$PY" -m gemmlib report --device cuda --out "$OUT/multigpu" --sections collectives,tp \
        --time-budget 100 --quick
else
    log "multigpu: skipped: ${NGPU:-0} GPU(s) here; collectives and tensor parallelism between GPUs need at least 2"
fi

if [ "$QUICK" != "1" ]; then
    run_step honesty 30 "$PY" benchmarks/bench_harness_honesty.py --device cuda --size 8192 --rounds 3 --min-run-time 0.3

    run_step pytest 90 "$PY" -m pytest -q -p no:cacheprovider -rs tests/measure/test_harness.py tests/measure/test_quant.py \
        tests/measure/test_bench_precision.py tests/measure/test_devices.py tests/measure/test_report.py \
        tests/measure/test_monitor.py tests/measure/test_calibrate.py tests/measure/test_gpu_scripts.py \
        tests/measure/test_triton_gemm.py -k "not sm90 and not spill" \
        tests/pages/test_precision_page.py tests/pages/test_devices_page.py
else
    log "QUICK=1: honesty and pytest steps skipped"
fi

run_step figures 10 "$PY" scripts/gpu_checks.py figures "$OUT"

log "all steps done in $(($(date +%s) - START)) s (budget ${BUDGET} s); files under $OUT"
ls -R "$OUT" | head -60
