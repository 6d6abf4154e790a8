#!/usr/bin/env bash
# The one script to run on a GPU machine (torch, triton and nvidia-ml-py installed; no internet).
#
#   OUT=/some/dir scripts/gpu_report.sh        # default OUT=./out
#   QUICK=1 scripts/gpu_report.sh              # report --quick, smaller checks, no honesty/pytest steps
#   BUDGET=570 scripts/gpu_report.sh           # the whole script's limit in seconds (default 570: one
#                                              # 10-minute call, with room to start and to copy back)
#   ONLY=env,multigpu,figures scripts/gpu_report.sh   # some steps only (an 8-GPU session's multi-GPU call)
#   FULL_AUTOTUNE=1 scripts/gpu_report.sh      # the pytest step autotunes Triton over every configuration
#   PYTHON=/path/to/python scripts/gpu_report.sh   # default: the first of python, python3 that imports torch
#
# Steps, in order of what they are worth; each has its own limit, and together they stay within BUDGET:
# a step gets at most what is left (minus a reserve for the figures), one with less than 15 s left is
# skipped and says so. After every step the figures are refreshed (figures.json, summary.md), so a
# script stopped in a later step keeps every figure of the steps before it.
#   env         versions, nvidia-smi, the GPU's state and software (machine.json)            (20 s)
#   gpu_checks  bf16 8192³ harness vs do_bench in the same run (≥ 75.8 % of the bf16 peak: 750 TFLOP/s
#               on an H100/H200 SXM; within 3 %), the CUDA-events and CUDA-graph paths, 256³ through
#               each, int8 and fp8 vs bf16 (≥ 1.5×), the article's shape, odd shapes, a CUDA process's host memory;
#               the GPU's clocks and power before and after each check                      (100 s)
#   devices     python -m gemmlib devices --json: what torch sees (the report measures the ceilings) (20 s)
#   calibrate   python -m gemmlib calibrate --json (llama-3-8b, 4 layers, 2048 tokens, bf16) (60 s)
#   validate    python -m gemmlib validate --json on the same model: measured (decode as a
#               CUDA graph) vs datasheet vs calibrated, prefill and decode                   (60 s)
#   report      python -m gemmlib report --out $OUT/report --time-budget (its limit − 25 s: one
#               deadline every section and every run in it obeys); Triton vs cuBLAS fp16
#               4096³, decode M = 1 share of copy bandwidth; rewritten after every section    (150 s)
#   honesty     benchmarks/bench_harness_honesty.py on the GPU (fp32)                        (30 s)
#   pytest      the GPU tests (-m gpu) and the Triton kernel's tests on the GPU, Triton's cache
#               cold (a fresh TRITON_CACHE_DIR) and the small autotune set
#               (GEMM_TRITON_AUTOTUNE=small; FULL_AUTOTUNE=1 for all)                           (80 s)
#   multigpu    with 2 or more GPUs: report --sections collectives,tp (NCCL collectives 8 B..64 MiB,
#               busbw; one llama-3-70b layer tensor-parallel on 2, 4, 8 GPUs), its --time-budget
#               inside its limit and every rank count kept as it finishes; with fewer a line  (150 s)
#   figures     scripts/gpu_checks.py figures: one table, every target with PASS / FAIL /
#               "not measured: why"                                                          (15 s)
# Without a GPU the GPU checks stop at once (exit status 3) and the other GPU steps are skipped with
# the reason; the table says why each figure was not measured. With a GPU, TRITON_INTERPRET is unset (it would
# run the Triton kernel in the CPU interpreter: no speed figure). The script's exit status: 0 when every step it
# ran ended with status 0 (no GPU here is not a failure: the GPU steps are skipped, as on a CPU CI machine);
# 1 when a step failed, timed out or was skipped for lack of time (steps.log's last line names them). Everything lands under $OUT: <step>.out / <step>.err, steps.log with exit
# codes and durations, machine.json, gpu_checks.json, devices.json, calibrate.json, validate.json,
# report/, multigpu/, figures.json, summary.md.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT="${OUT:-./out}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
# PYTHON= names the interpreter; else the first of python and python3 that imports torch (Debian and Ubuntu have
# no `python`), else python3
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
    for c in python python3; do
        if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import torch' >/dev/null 2>&1; then PY=$c; break; fi
    done
    PY="${PY:-python3}"
fi
BUDGET="${BUDGET:-570}"
RESERVE=15   # seconds kept for the figures step
ONLY="${ONLY:-}"
export GEMM_CACHE_DIR="$OUT/cache"   # measured ceilings and the calibration are kept here
# calibrate and validate run a whole llama-3-8b stack, whose LM head is N = vocab = 128,256: above the default cap of
# 16,384 on any dimension (they were refused at once); this machine is the tester's, its own caps are raised here
export GEMM_MAX_DIM="${GEMM_MAX_DIM:-131072}"
export PYTHONUNBUFFERED=1
START=$(date +%s)

FAILED=""   # the steps that failed, timed out or had no time left: the exit status says so

log() { echo "[$(($(date +%s) - START)) s] $*" | tee -a "$OUT/steps.log"; }

wanted() { [ -z "$ONLY" ] || [[ ",$ONLY," == *",$1,"* ]]; }

limit_for() {  # limit_for NAME SECONDS: the step's limit within what is left of the budget
    local left=$((BUDGET - ($(date +%s) - START)))
    if [ "$1" != "figures" ]; then left=$((left - RESERVE)); fi
    if [ "$2" -lt "$left" ]; then echo "$2"; else echo "$left"; fi
}

refresh() { "$PY" scripts/gpu_checks.py figures "$OUT" --quiet >/dev/null 2>&1 || true; }

run_step() {  # run_step NAME LIMIT COMMAND... ; stdin passes through
    local name=$1 limit=$2
    shift 2
    if ! wanted "$name"; then return 0; fi
    if [ "$name" = "figures" ] && [ "$limit" -lt 10 ]; then limit=10; fi  # the summary always gets written
    if [ "$limit" -lt 15 ] && [ "$name" != "figures" ]; then
        log "skip  $name: only ${limit} s of the ${BUDGET} s budget left"
        FAILED="$FAILED $name(no time left)"
        refresh
        return 0
    fi
    log "start $name (limit ${limit} s)"
    local t0=$(date +%s)
    timeout --signal=TERM --kill-after=5 "$limit" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
    local rc=$?
    local why=""
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then why=" (TIMED OUT)"; fi
    log "end   $name rc=$rc$why in $(($(date +%s) - t0)) s"
    # gpu_checks' status 3 is "no CUDA device": a failure only where a GPU was counted
    if [ "$rc" -ne 0 ] && ! { [ "$name" = "gpu_checks" ] && [ "$rc" -eq 3 ] && [ "${NGPU:-0}" -lt 1 ]; }; then
        FAILED="$FAILED $name(rc=$rc$why)"
    fi
    if [ "$name" != "figures" ]; then tail -n 25 "$OUT/$name.out" | sed "s/^/    $name| /"; fi
    if [ "$rc" -ne 0 ]; then tail -n 15 "$OUT/$name.err" | sed "s/^/    $name! /"; fi
    refresh
    return 0
}

skip_step() {  # skip_step NAME WHY
    if wanted "$1"; then log "skip  $1: $2"; refresh; fi
}

QUICK="${QUICK:-0}"
if [ "$QUICK" = "1" ]; then QARG=quick; RQ=--quick; VAL="--layers 2 --seq-len 1024 --new-tokens 16"; else QARG=full; RQ=; VAL=; fi
NO_GPU="no CUDA device here (torch.cuda.is_available() is False)"
if ! NGPU=$("$PY" -c 'import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)' 2>"$OUT/ngpu.err"); then
    NGPU=0
    NO_GPU="$PY could not count the GPUs ($(tail -n 1 "$OUT/ngpu.err"))"
fi

if [ "${NGPU:-0}" -ge 1 ] && [ -n "${TRITON_INTERPRET:-}" ]; then
    # set, Triton's kernel runs in its CPU interpreter even on the GPU: no autotuning, no Triton speed figure
    log "TRITON_INTERPRET=$TRITON_INTERPRET was set: unset for this GPU run"
    unset TRITON_INTERPRET
fi

# the step's status is gpu_checks.py's (nvidia-smi is only printed: a machine without it loses nothing)
run_step env "$(limit_for env 20)" bash -c "$PY scripts/gpu_checks.py env \"$OUT/machine.json\"; a=\$?; nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.sm,power.limit,persistence_mode --format=csv || true; exit \$a"

run_step gpu_checks "$(limit_for gpu_checks 100)" "$PY" scripts/gpu_checks.py checks "$OUT/gpu_checks.json" "$QARG"

run_step devices "$(limit_for devices 20)" "$PY" -m gemmlib devices --json
cp "$OUT/devices.out" "$OUT/devices.json" 2>/dev/null

if [ "${NGPU:-0}" -ge 1 ]; then
    # shellcheck disable=SC2086  # $VAL is a list of flags
    run_step calibrate "$(limit_for calibrate 60)" "$PY" -m gemmlib calibrate --device cuda $VAL --json
    cp "$OUT/calibrate.out" "$OUT/calibrate.json" 2>/dev/null

    # shellcheck disable=SC2086
    run_step validate "$(limit_for validate 60)" "$PY" -m gemmlib validate --device cuda $VAL --json
    cp "$OUT/validate.out" "$OUT/validate.json" 2>/dev/null

    LIM=$(limit_for report 150)
    # the sections with targets first (batching: decode's share of copy; tiling: Triton vs cuBLAS): the budget may end
    run_step report "$LIM" "$PY" -m gemmlib report --device cuda --out "$OUT/report" --time-budget $((LIM > 40 ? LIM - 25 : 15)) $RQ \
        --sections devices,batching,tiling,precision,profiler
else  # each would stop at once with "device 'cuda' cannot be used here"
    skip_step calibrate "$NO_GPU"
    skip_step validate "$NO_GPU"
    skip_step report "$NO_GPU"
fi

if [ "$QUICK" = "1" ]; then
    skip_step honesty "QUICK=1"
    skip_step pytest "QUICK=1"
elif [ "${NGPU:-0}" -lt 1 ]; then
    skip_step honesty "$NO_GPU"
    skip_step pytest "$NO_GPU; the same tests run on the CPU in CI"
else
    run_step honesty "$(limit_for honesty 30)" "$PY" benchmarks/bench_harness_honesty.py --device cuda --size 8192 --rounds 3 --min-run-time 0.3

    rm -rf "$OUT/triton-cache-cold"
    if [ "${FULL_AUTOTUNE:-0}" = "1" ]; then TUNE=all; else TUNE=small; fi
    run_step pytest "$(limit_for pytest 80)" env TRITON_CACHE_DIR="$OUT/triton-cache-cold" GEMM_TRITON_AUTOTUNE=$TUNE \
        bash -c "$PY -m pytest -q -p no:cacheprovider -rs -m gpu tests/measure; a=\$?; \
                 $PY -m pytest -q -p no:cacheprovider -rs tests/measure/test_triton_gemm.py -k 'not sm90 and not spill'; \
                 b=\$?; exit \$((a | b))"
fi

if [ "${NGPU:-0}" -ge 2 ]; then
    LIM=$(limit_for multigpu 150)
    run_step multigpu "$LIM" "$PY" -m gemmlib report --device cuda --out "$OUT/multigpu" --sections collectives,tp \
        --time-budget $((LIM > 60 ? LIM - 45 : 15)) --quick
else
    if [ "${NGPU:-0}" -eq 1 ]; then HERE="1 GPU"; else HERE="${NGPU:-0} GPUs"; fi
    skip_step multigpu "$HERE here; collectives and tensor parallelism between GPUs need at least 2"
fi

run_step figures "$(limit_for figures 15)" "$PY" scripts/gpu_checks.py figures "$OUT"
if wanted figures; then cat "$OUT/figures.out"; fi

log "all steps done in $(($(date +%s) - START)) s (budget ${BUDGET} s); files under $OUT"
if [ -n "$FAILED" ]; then
    log "exit 1: not every step ended well:$FAILED"
    exit 1
fi
exit 0
