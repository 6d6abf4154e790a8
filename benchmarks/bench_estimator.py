"""Speed of the estimator (issue 3) and the Transformer GEMMs page (issue 2, page 4), with PASS/FAIL.

(a) ``python -m gemmlib estimate ... --json`` as a user runs it: a fresh interpreter each time,
    several presets and workloads, wall time median (p20/p80). Target < 1 s. Also checks that the
    command imports neither torch nor streamlit.
(c) Inner costs of one estimate (issue 23), by cProfile's call counts in one ``python -m gemmlib estimate``: how
    often each op list is built (target: once per distinct list), how often the per-GPU memory and the JSON
    dict are made, ``get_dtype`` calls; the counts measured before the change are printed beside.
(b) The LLM Estimator and Transformer GEMMs pages through AppTest, in a fresh subprocess whose
    streamlit imports are already warm (what a running server has): first render, then reruns after
    moving one widget at a time (each change is a new input, so caches do not hide the work).
    Targets: rerun ≤ 200 ms (median); first render ≤ 1 s for the explainer page (Transformer GEMMs).

Run:  python benchmarks/bench_estimator.py [--repeat N]
Wall-clock figures depend on what else the machine is doing; the load average is printed beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI_TARGET_S = 1.0
RERUN_TARGET_S = 0.2
FIRST_TARGET_S = 1.0

CLI_CASES = [
    ["--preset", "llama-3-8b", "--batch", "8", "--seq-len", "2048", "--new-tokens", "256"],
    ["--preset", "mixtral-8x7b", "--batch", "32", "--seq-len", "4096", "--new-tokens", "1024", "--gpus", "2"],
    ["--preset", "llama-2-70b", "--batch", "64", "--seq-len", "8192", "--new-tokens", "8192", "--gpu", "h200",
     "--gpus", "8", "--causal", "--lm-head", "last"],
    ["--preset", "gpt2", "--seq-len", "512", "--new-tokens", "512", "--gpu", "cpu"],  # fits its 1024 positions
    ["--layers", "32", "--hidden", "4096", "--ffn", "14336", "--heads", "32", "--kv-heads", "8",
     "--vocab", "128256", "--seq-len", "1024"],
]


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def load() -> str:
    try:
        return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    except OSError:
        return "load average unknown"


# ----------------------------------------------------------------------------- (a) the CLI
def bench_cli(repeat: int) -> bool:
    print(f"(a) python -m gemmlib estimate ... --json, fresh interpreter each run  [{load()}]")
    ok_all = True
    for argv in CLI_CASES:
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            r = subprocess.run([sys.executable, "-m", "gemmlib", "estimate", *argv, "--json"], cwd=ROOT,
                               capture_output=True, text=True, timeout=120)
            times.append(time.perf_counter() - t)
            if r.returncode != 0:
                print(f"    {' '.join(argv)}: exit {r.returncode}: {r.stderr.strip()}")
                ok_all = False
                break
        else:
            d = json.loads(r.stdout)
            med = statistics.median(times)
            ok = med < CLI_TARGET_S
            ok_all &= ok
            print(f"    {' '.join(argv)[:70]:<70} {med * 1e3:6.0f} ms (p20 {pct(times, .2) * 1e3:.0f}, "
                  f"p80 {pct(times, .8) * 1e3:.0f})  prefill {d['prefill']['flops']:.3e} FLOP  {verdict(ok)}")
    code = ("import sys, io, contextlib\nfrom gemmlib.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    main(['estimate', '--preset', 'llama-3-8b', '--json'])\n"
            "print(','.join(m for m in ('torch', 'streamlit', 'triton', 'pandas', 'altair') if m in sys.modules))")
    heavy = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                           timeout=120).stdout.strip()
    ok = not any(m in heavy.split(",") for m in ("torch", "streamlit", "triton"))
    ok_all &= ok
    print(f"    modules the command pulls in (of torch, streamlit, triton, pandas, altair): "
          f"{heavy or 'none'}  {verdict(ok)}")
    return ok_all


# ----------------------------------------------------------------------------- (b) the pages
PAGE_CODE = """
import json, sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from streamlit.testing.v1 import AppTest
warm = Path({tmp!r})
warm.write_text("import streamlit as st\\nst.number_input('n', 0, 100, key='n')\\n")
base = AppTest.from_file(str(warm)).run()  # streamlit's own imports, as on a running server
harness = []
for v in range(1, 8):  # AppTest's own cost of a rerun, on a page that does nothing
    base.number_input(key="n").set_value(v)
    t = time.perf_counter()
    base.run()
    harness.append(time.perf_counter() - t)
harness = sorted(harness)[len(harness) // 2]
t = time.perf_counter()
at = AppTest.from_file({page!r}, default_timeout=120).run()
first = time.perf_counter() - t
t = time.perf_counter()
again = AppTest.from_file({page!r}, default_timeout=120).run()  # a second session: modules imported
second = time.perf_counter() - t
errors = [str(e.value) for e in at.exception]
steps = {steps!r}
reruns = []
for kind, key, value in steps:
    w = getattr(at, kind)(key=key)
    w.click() if kind == "button" else w.set_value(value)
    t, c = time.perf_counter(), time.process_time()
    at.run()
    reruns.append((f"{{key}} -> {{value}}", time.perf_counter() - t, time.process_time() - c))
    errors += [str(e.value) for e in at.exception]
print(json.dumps({{"harness": harness, "first": first, "second": second, "reruns": reruns, "errors": errors,
                  "torch": "torch" in sys.modules}}))
"""

ESTIMATOR_STEPS = [
    ("number_input", "le_seq", 2048), ("number_input", "le_batch", 8), ("number_input", "le_new", 512),
    ("selectbox", "le_preset", "mixtral-8x7b"), ("selectbox", "le_gpu", "H200 SXM"),
    ("slider", "le_eff", 0.7), ("toggle", "le_causal", True), ("toggle", "le_macs", True),
    ("selectbox", "le_wdt", "fp8"), ("number_input", "le_gpus", 4), ("toggle", "le_cmp", True),
    ("selectbox", "le_b_preset", "qwen2.5-7b"), ("radio", "le_src", "custom"), ("number_input", "le_layers", 48),
]
TRANSFORMER_STEPS = [
    ("number_input", "tg_seq", 4096), ("number_input", "tg_seq", 8192), ("number_input", "tg_d", 5120),
    ("number_input", "tg_heads", 40), ("number_input", "tg_ffn", 13824), ("toggle", "tg_gated", True),
    ("number_input", "tg_kv", 8), ("toggle", "tg_causal", True), ("number_input", "tg_seq", 100000),
]


def bench_page(page: str, steps: list, first_target: float | None) -> bool:
    code = PAGE_CODE.format(root=str(ROOT), tmp=f"/tmp/bench_estimator_warm_{os.getpid()}.py",
                            page=str(ROOT / page), steps=steps)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        print(f"    {page}: the benchmark failed: {out.stderr[-1500:]}")
        return False
    r = json.loads(out.stdout.strip().splitlines()[-1])
    times = [s for _, s, _ in r["reruns"]]
    cpu = [c for _, _, c in r["reruns"]]
    med = statistics.median(times)
    ok_rerun = med <= RERUN_TARGET_S
    ok_first = first_target is None or r["second"] <= first_target
    ok = ok_rerun and ok_first and not r["errors"] and not r["torch"]
    print(f"    {page}  [{load()}]")
    tgt = f"target ≤ {first_target:.0f} s: {verdict(ok_first)}" if first_target else "no target"
    print(f"      first render {r['first'] * 1e3:.0f} ms (page's own imports included); a second session "
          f"{r['second'] * 1e3:.0f} ms ({tgt})")
    print(f"      rerun after a widget change: median {med * 1e3:.0f} ms (p20 {pct(times, .2) * 1e3:.0f}, "
          f"p80 {pct(times, .8) * 1e3:.0f}, max {max(times) * 1e3:.0f}) over {len(times)} changes "
          f"(target ≤ {RERUN_TARGET_S * 1e3:.0f} ms: {verdict(ok_rerun)})")
    print(f"      (AppTest's own rerun cost on an empty page here: {r['harness'] * 1e3:.0f} ms, included above; "
          f"page work alone ≈ {max(0.0, med - r['harness']) * 1e3:.0f} ms median)")
    print(f"      CPU time of those reruns (this process, both threads): median {statistics.median(cpu) * 1e3:.0f} ms "
          f"- what a quiet machine would take, about; the wall figure above waits for a shared CPU")
    for label, s, c in r["reruns"]:
        print(f"        {label:<32} {s * 1e3:6.0f} ms wall  {c * 1e3:6.0f} ms CPU")
    print(f"      exceptions: {len(r['errors'])}; imports torch: {r['torch']}")
    return ok


# ----------------------------------------------------------------------------- (c) inner costs
PROFILED = ["--preset", "llama-2-7b", "--batch", "1", "--seq-len", "128"]
# name -> (calls measured before (commit ff111e9, the same command), target now)
INNER = {"prefill_ops": (33, 5), "_stack_ops": (48, 10), "weights_per_gpu": (19, 1), "inference_memory": (19, 19),
         "get_dtype": (702, 500), "to_dict of the estimate": (2, 1), "checkpoint_size": (2, 2)}


def bench_inner() -> bool:
    import contextlib
    import cProfile
    import io
    import pstats

    sys.path.insert(0, str(ROOT))
    from gemmlib.cli import main as cli_main
    from gemmlib.llm.accounting import Estimate

    est_to_dict = Estimate.to_dict.__code__.co_firstlineno
    pr = cProfile.Profile()
    with contextlib.redirect_stdout(io.StringIO()):
        pr.enable()
        rc = cli_main(["estimate", *PROFILED])
        pr.disable()
    counts: dict[str, int] = {}
    for (path, line, name), (_, calls, *_rest) in pstats.Stats(pr).stats.items():
        if "gemmlib" not in path:
            continue
        key = "to_dict of the estimate" if (name == "to_dict" and path.endswith("accounting.py")
                                            and line == est_to_dict) else name
        if key in INNER:
            counts[key] = max(counts.get(key, 0), calls)
    print(f"(c) inner costs of `python -m gemmlib estimate {' '.join(PROFILED)}` (cProfile call counts; exit {rc})")
    ok = rc == 0
    for name, (before, target) in INNER.items():
        n = counts.get(name, 0)
        good = n <= target
        ok &= good
        print(f"    {name:<26} {n:>5} calls (before: {before:>4}; target ≤ {target})  {verdict(good)}")
    print("    prefill_ops: the estimate's, the weights', three counting variants beside the workload's own; the "
          "text is rendered from one to_dict(); the largest batch that fits is searched with the weights sized once "
          "(inference_memory is arithmetic per batch)")
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="CLI runs per case (default 5)")
    ap.add_argument("--inner-only", action="store_true", help="only (c), the call counts (no timing)")
    args = ap.parse_args()
    if args.inner_only:
        return 0 if bench_inner() else 1
    ok = bench_cli(max(1, args.repeat))
    ok &= bench_inner()
    print("(b) pages through AppTest (fresh subprocess, streamlit warm)")
    ok &= bench_page("pages/4_LLM_Estimator.py", ESTIMATOR_STEPS, None)
    ok &= bench_page("pages/3_Transformer_GEMMs.py", TRANSFORMER_STEPS, FIRST_TARGET_S)
    print("OVERALL", verdict(ok))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
