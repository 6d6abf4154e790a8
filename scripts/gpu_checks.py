"""The Python parts of scripts/gpu_report.sh, in one file a test can run on a CPU.

    python scripts/gpu_checks.py env OUT/machine.json                  # versions, the GPU's state
    python scripts/gpu_checks.py checks OUT/gpu_checks.json [quick]   # the GPU targets, measured
    python scripts/gpu_checks.py figures OUT [--quiet]                 # one summary of every figure

``checks``: bf16 N³ (N = 8192, 4096 with ``quick``) through the harness against
``triton.testing.do_bench`` on the same tensors in the same run (target at 8192³: 75.8 % of the
matched catalogue row's bf16 peak, 750 TFLOP/s on an H100 or H200 SXM; within 3 %), the
CUDA-events and CUDA-graph timing paths (and a 256³ product through each: do_bench, an
unrolled graph with the L2 flushed, without), int8 and fp8 against bf16 (target ≥ 1.5×), the
article's shape, odd (padded) shapes, and the host memory a CUDA process with cuBLAS and NCCL holds
(against the allowance a tensor-parallel rank's plan counts). Every check runs in its own ``try``
and records the GPU's state before and after it (``monitor.MachineRecord``: clocks, power,
temperature, clock event reasons), and the file is rewritten after each: one failure or a kill
loses nothing else. Without CUDA it writes ``{"error": "no CUDA device", ...}`` and exits with
status 3.

``figures``: reads what the steps left under OUT (steps.log, gpu_checks.json, report/results.json,
validate.json, machine.json) and writes OUT/figures.json and OUT/summary.md, and prints one table:
each figure, its value, its target, and PASS / FAIL, "reported" (no target here), or "not
measured: why" (the step that did not run or failed, and its first error line) — never a traceback.
``--quiet`` writes the files only (the script refreshes them after every step).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

NO_CUDA_EXIT = 3

_HOST_MEMORY = r"""
import json, os, sys, tempfile
def mem():
    out = {}
    for line in open("/proc/self/status"):
        k, _, v = line.partition(":")
        if k in ("VmData", "VmRSS"):
            out[k] = int(v.split()[0]) * 1024
    return out
steps = {"python": mem()}
import torch
steps["torch imported"] = mem()
a = torch.randn(1024, 1024, device="cuda")
(a @ a).sum().item()
steps["CUDA context and cuBLAS"] = mem()
import torch.distributed as dist
store = dist.FileStore(os.path.join(tempfile.mkdtemp(), "store"), 1)
dist.init_process_group("nccl", store=store, rank=0, world_size=1, device_id=torch.device("cuda", 0))
t = torch.ones(1 << 20, device="cuda")
dist.all_reduce(t)
torch.cuda.synchronize()
steps["NCCL communicator"] = mem()
dist.destroy_process_group()
print(json.dumps(steps))
"""


# The bf16 N³ target: design.md's 788 TFLOP/s measured on one H200 (8192³), less 5 %, is 750 — 75.8 % of the H100 /
# H200 SXM's 989.4 dense bf16 peak. The same share of the matched catalogue row's peak on any other board (an H100
# PCIe or NVL has less); none for a board the catalogue does not know, or at N other than 8192 (``quick``'s 4096).
BF16_TARGET_SHARE = 750 / 989.4


def bf16_target(device: str | None, n: int | None) -> tuple[float | None, str]:
    """(TFLOP/s a bf16 N³ product through the harness should reach on ``device``, the target's words)."""
    from gemmlib.core.machine import match_catalogue

    if not device:  # no GPU ran the check: the rule a board is held to, not a board's figure
        return None, f"≥ {BF16_TARGET_SHARE:.1%} of the board's bf16 peak (750 TFLOP/s on an H100 / H200 SXM)"
    hw, _note = match_catalogue(device)
    peak = hw.peak("bf16") if hw is not None else None
    if n != 8192 or not peak:
        why = "no target at this size (8192³ only)" if n != 8192 else f"no catalogue bf16 peak for {device!r}"
        return None, why
    target = BF16_TARGET_SHARE * peak / 1e12
    return target, f"≥ {target:.0f} TFLOP/s ({BF16_TARGET_SHARE:.1%} of the {hw.name}'s {peak / 1e12:.1f})"


def write_json(path: str, doc: dict) -> None:
    """``doc`` into ``path`` whole or not at all: written beside it, then renamed over it, so the step's timeout
    killing the process in the middle of a write leaves the previous file (every check before), not half a file
    that the figures step cannot read (and would report as no check at all)."""
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, default=str)
    os.replace(tmp, path)


# --------------------------------------------------------------------------- checks
def checks(out_path: str, quick: bool) -> int:
    import torch

    if not torch.cuda.is_available():
        print("no CUDA device: the GPU checks cannot run here")
        with open(out_path, "w", encoding="utf-8") as f:
            json.dump({"error": "no CUDA device", "torch": torch.__version__}, f)
        return NO_CUDA_EXIT

    from gemmlib.measure import harness, launch, monitor
    from gemmlib.measure import precision as bp

    index = monitor.nvml_index_for_torch_device(0)
    res: dict = {"device": torch.cuda.get_device_name(0), "capability": list(torch.cuda.get_device_capability(0)),
                 "torch": torch.__version__, "quick": quick, "versions": monitor.software_versions()}

    def save() -> None:  # after every check: a check that hangs past the step's limit costs only itself
        write_json(out_path, res)

    def check(name, fn) -> None:
        rec = monitor.MachineRecord(index)
        try:
            with rec:
                res[name] = fn()
        except Exception as e:  # noqa: BLE001
            res[name] = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
        if isinstance(res[name], dict):
            res[name]["machine"] = rec.to_dict()
        print(name, json.dumps(res[name], indent=1, default=str)[:2500], flush=True)
        save()

    n = 4096 if quick else 8192
    flops = 2 * n**3

    def bf16_vs_do_bench():
        import triton.testing as tt
        g = torch.Generator(device="cpu").manual_seed(0)
        a = torch.randn(n, n, generator=g).to("cuda", torch.bfloat16)
        b = torch.randn(n, n, generator=g).to("cuda", torch.bfloat16)
        out = {}
        for rnd in range(2):  # two rounds: the first also warms clocks and cuBLAS heuristics
            t = harness.time_callable(torch.matmul, device="cuda", args_list=[(a, b)], min_run_time=0.5)
            ms = tt.do_bench(lambda: torch.matmul(a, b), warmup=100, rep=500, return_mode="median")
            out[f"round{rnd}"] = {"harness_tflops": flops / t.median_s / 1e12, "harness_method": t.method,
                                  "harness_reps": t.reps, "do_bench_tflops": flops / (ms / 1e3) / 1e12}
        r = out["round1"]
        r["difference"] = r["harness_tflops"] / r["do_bench_tflops"] - 1
        r["n"] = n
        target, r["target"] = bf16_target(res["device"], n)
        if target is not None:
            r["target_tflops"] = "PASS" if r["harness_tflops"] >= target else "FAIL"
        r["target_within_3pct"] = "PASS" if abs(r["difference"]) <= 0.03 else "FAIL"
        ev = harness.time_callable(torch.matmul, device="cuda", args_list=[(a, b)], min_run_time=0.5, flush_l2=False)
        gr = harness.time_callable(torch.matmul, device="cuda", args_list=[(a, b)], min_run_time=0.5, cuda_graph=True)
        out["cuda_events_tflops"] = flops / ev.median_s / 1e12
        out["cuda_events_method"] = ev.method
        out["cuda_graph_tflops"] = flops / gr.median_s / 1e12
        out["cuda_graph_method"] = gr.method
        small = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
        s = {}
        for label, kw in (("do_bench", {}), ("cuda_graph", {"cuda_graph": True}),
                          ("cuda_graph_no_flush", {"cuda_graph": True, "flush_l2": False}),
                          ("cuda_events_no_flush", {"flush_l2": False})):
            t = harness.time_callable(torch.matmul, device="cuda", args_list=[(small, small)], min_run_time=0.2, **kw)
            s[label] = {"us": t.median_s * 1e6, "p20_us": t.p20_s * 1e6, "p80_us": t.p80_s * 1e6, "method": t.method}
        out["small_256"] = s
        return out

    def low_precision_ratios():
        cfg = bp.PrecisionConfig(device="cuda", shapes=((n, n, n, f"square {n}"),),
                                 dtypes=("fp32", "tf32", "bf16", "fp16", "int8", "fp8"), min_run_time=0.5)
        rows = bp.run_precision(cfg, record_results=False)
        by = {r.name: r for r in rows}
        out = {"rows": [{k: d.get(k) for k in ("name", "supported", "reason", "median_s", "tflops", "rel_error")}
                        | {"kernels": d["extra"].get("kernels")} for d in (r.to_dict() for r in rows)]}
        bf = by["bf16"].tflops if "bf16" in by else None
        for name in ("int8", "fp8", "int8 + quant", "fp8 + quant"):
            r = by.get(name)
            if r is not None and r.supported and r.tflops and bf:
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
        # padding and layout paths on the real device: int8 needs M > 16, K and N multiples of 8 and a
        # column-major B; fp8 K, N multiples of 16
        cfg = bp.PrecisionConfig(device="cuda", shapes=((1, 4100, 4090, "decode M=1, odd K/N"),),
                                 dtypes=("int8", "fp8", "bf16"), min_run_time=0.2)
        rows = bp.run_precision(cfg, record_results=False)
        return {"rows": [{"name": r.name, "supported": r.supported, "reason": r.reason, "rel_error": r.rel_error,
                          "tflops": r.tflops} for r in rows]}

    def cuda_host_memory():
        # a fresh process, as a tensor-parallel rank starts: what CUDA, cuBLAS and NCCL add on the host
        proc = subprocess.run([sys.executable, "-c", _HOST_MEMORY], capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed")
        steps = json.loads(proc.stdout.strip().splitlines()[-1])
        added = {k: steps[k]["VmData"] - steps["torch imported"]["VmData"] for k in steps if k != "python"}
        return {"steps": steps, "vmdata_added_bytes": added, "allowance_bytes": launch.CUDA_RANK_HOST_BYTES,
                "within_allowance": added["NCCL communicator"] <= launch.CUDA_RANK_HOST_BYTES}

    save()
    check(f"bf16_{n}_vs_do_bench", bf16_vs_do_bench)
    check(f"low_precision_{n}", low_precision_ratios)
    check("article_shape", article_shape)
    check("odd_shapes", odd_shapes)
    check("cuda_host_memory", cuda_host_memory)
    return 0


# --------------------------------------------------------------------------- figures
def _load(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _dig(d: dict | None, *keys: str):
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def step_status(out: Path) -> dict[str, str]:
    """Each step's last word in steps.log: "rc=0 in 12 s", "rc=3 …", "TIMED OUT …", "skipped: why"."""
    status: dict[str, str] = {}
    try:
        lines = (Path(out) / "steps.log").read_text(encoding="utf-8").splitlines()
    except OSError:
        return status
    for line in lines:
        m = re.search(r"\] (start|end  |skip ) (\w+)[: ]\s*(.*)$", line)
        if not m:
            continue
        what, step, rest = m.group(1).strip(), m.group(2), m.group(3).strip()
        if what == "start":
            status[step] = "started, never ended (killed with the script?)"
        elif what == "end":
            status[step] = rest
        else:
            status[step] = "skipped: " + rest
    return status


def _first_error(out: Path, step: str) -> str:
    try:
        text = (Path(out) / f"{step}.err").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith(" ")]
    errs = [ln for ln in lines if re.match(r"^[\w.]+(Error|Exception)\b|^error:|cannot be used here", ln)]
    line = (errs or lines or [""])[-1]
    return line[:160]


def why_not(out: Path, step: str, status: dict[str, str], fallback: str) -> str:
    """Why a step's figure is missing: the step's status and its first error line."""
    st = status.get(step)
    if st is None:
        return f"the {step} step did not run" + (f" ({fallback})" if fallback else "")
    if st.startswith("rc=0"):
        return fallback or f"the {step} step ran but left no figure"
    err = _first_error(out, step)
    return f"{step} step {st}" + (f": {err}" if err else "")


def figure_rows(out: Path) -> list[dict]:
    """One row per figure: figure, value, unit, target, status ("PASS", "FAIL", "reported" or
    "not measured: why")."""
    out = Path(out)
    status = step_status(out)
    gc = _load(out / "gpu_checks.json")
    rep = _load(out / "report" / "results.json")
    val = _load(out / "validate.json")
    rows: list[dict] = []

    def add(figure: str, value, target: str, ok: bool | None, why: str, unit: str = "") -> None:
        if value is None:
            st = f"not measured: {why}"
        elif ok is None:
            st = "reported"
        else:
            st = "PASS" if ok else "FAIL"
        rows.append({"figure": figure, "value": value, "unit": unit, "target": target, "status": st})

    no_gpu = (gc.get("error") if gc and gc.get("error") else "") or ("" if gc else why_not(out, "gpu_checks", status, ""))
    bf = next((v for k, v in (gc or {}).items() if k.startswith("bf16_") and isinstance(v, dict)), None)
    bf_why = no_gpu or _dig(bf, "error") or "no bf16 check in gpu_checks.json"
    r1 = _dig(bf, "round1")
    tf = _dig(r1, "harness_tflops")
    n = _dig(r1, "n") or (4096 if _dig(gc, "quick") else 8192)
    target, words = bf16_target(_dig(gc, "device"), n)
    add(f"bf16 {n}³ (harness)", tf, words if target is not None or tf is None else f"(reported: {words})",
        None if tf is None or target is None else tf >= target, bf_why, "TFLOP/s")
    diff = _dig(r1, "difference")
    add("harness vs do_bench, same run", diff, "within 3%", None if diff is None else abs(diff) <= 0.03, bf_why,
        "signed %")
    for label, what in (("do_bench", "do_bench (L2 flushed)"), ("cuda_graph", "CUDA graph, L2 flushed"),
                        ("cuda_graph_no_flush", "CUDA graph, no flush"),
                        ("cuda_events_no_flush", "CUDA events behind a spin, no flush")):
        us = _dig(bf, "small_256", label, "us")
        add(f"bf16 256³: {what}", us, "(reference)", None, bf_why, "µs")
    low = next((v for k, v in (gc or {}).items() if k.startswith("low_precision_") and isinstance(v, dict)), None)
    for name in ("int8", "fp8"):
        x = _dig(low, f"{name} / bf16")
        add(f"{name} / bf16", x, "≥ 1.5×", None if x is None else x >= 1.5,
            no_gpu or _dig(low, "error") or f"no {name} row (see gpu_checks.json)", "×")
    mem = _dig(gc, "cuda_host_memory", "vmdata_added_bytes", "NCCL communicator")
    allow = _dig(gc, "cuda_host_memory", "allowance_bytes")
    add("CUDA + cuBLAS + NCCL host memory of a process", None if mem is None else mem / 2**30,
        f"≤ {allow / 2**30:.3g} GiB (a TP rank's allowance)" if allow else "≤ the TP rank's allowance",
        None if mem is None or not allow else mem <= allow,
        no_gpu or _dig(gc, "cuda_host_memory", "error") or "no host-memory check", "GiB")
    recs = {k: v["machine"] for k, v in (gc or {}).items() if isinstance(v, dict) and isinstance(v.get("machine"), dict)}
    readable = [k for k, r in recs.items() if _dig(r, "before", "available")]
    bad = [f"{k}: {f}" for k in readable for f in (recs[k].get("flags") or [])]
    add("clocks held during the GPU checks", "; ".join(bad) if bad else ("no drop" if readable else None),
        "no drop, no throttling", (not bad) if readable else None,
        no_gpu or "NVML could not read the GPU's state (see gpu_checks.json, machine)")
    sections = {s.get("name"): s for s in (rep or {}).get("sections", []) if isinstance(s, dict)}
    rep_why = why_not(out, "report", status, "" if rep else "no report/results.json")

    def section_why(name: str, what: str) -> str:
        s = sections.get(name)
        if s is None:
            return rep_why
        for key in ("skipped", "error", "running"):
            if s.get(key):
                return f"the report's {name} section: {str(s[key]).splitlines()[0][:140]}"
        return f"no {what} in the report's {name} section (a GPU report's)"

    share = _dig(sections.get("tiling"), "verdict", "triton_share_of_cublas")
    add("Triton / cuBLAS fp16 4096³", share, "≥ 85%", None if share is None else share >= 0.85,
        section_why("tiling", "Triton verdict"), "%")
    dec = _dig(sections.get("batching"), "verdict", "decode_4096_share_of_copy")
    add("decode M = 1 share of copy bandwidth", dec, "≥ 70%", None if dec is None else dec >= 0.70,
        section_why("batching", "decode verdict"), "%")
    on_gpu = _dig(val, "device") == "cuda"
    val_why = why_not(out, "validate", status, "" if val else "no validate.json")
    for phase in ("prefill", "decode"):
        for kind in ("estimated", "calibrated"):
            err = _dig(val, phase, f"{kind}_error")
            if kind == "calibrated":
                target, ok = "within 15% (GPU)", (abs(err) <= 0.15 if err is not None and on_gpu else None)
            else:
                target, ok = "(reference)", None
            label = "datasheet" if kind == "estimated" else "calibrated"
            add(f"validate {phase}: {label} error", err, target, ok,
                val_why if val is None or phase in val else f"no {phase} in validate.json", "signed %")
        e, c = _dig(val, phase, "estimated_error"), _dig(val, phase, "calibrated_error")
        add(f"validate {phase}: calibrated minus datasheet, abs. error", None if e is None or c is None else abs(c) - abs(e),
            "< 0", None if e is None or c is None else abs(c) < abs(e), val_why, "signed %")
    return rows


def show(v, unit: str) -> str:
    if v is None:
        return "—"
    if isinstance(v, str):
        return v[:60]
    if unit == "signed %":
        return f"{v:+.1%}"
    if unit == "%":
        return f"{v:.1%}"
    if unit == "×":
        return f"{v:.2f}×"
    return f"{v:.4g} {unit}".strip()


def table(rows: list[dict]) -> str:
    head = ("figure", "value", "target", "status")
    body = [(r["figure"], show(r["value"], r["unit"]), r["target"], r["status"]) for r in rows]
    w = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head[:3])]
    lines = [f"| {head[0]:<{w[0]}} | {head[1]:>{w[1]}} | {head[2]:<{w[2]}} | {head[3]}",
             f"|{'-' * (w[0] + 2)}|{'-' * (w[1] + 2)}|{'-' * (w[2] + 2)}|--------"]
    lines += [f"| {a:<{w[0]}} | {b:>{w[1]}} | {c:<{w[2]}} | {d}" for a, b, c, d in body]
    return "\n".join(lines)


def figures(out_dir: str, quiet: bool = False) -> int:
    out = Path(out_dir)
    rows = figure_rows(out)
    (out / "figures.json").write_text(json.dumps(rows, indent=2, default=str), encoding="utf-8")
    machine = _load(out / "machine.json") or {}
    gpu = _dig(machine, "gpu") or _dig(_load(out / "gpu_checks.json"), "device") or "no GPU"
    text = table(rows)
    (out / "summary.md").write_text(f"# GPU session figures ({gpu})\n\n{text}\n", encoding="utf-8")
    if not quiet:
        print(f"figures on {gpu} (also in {out / 'summary.md'}):")
        print(text)
    return 0


def env(out_path: str) -> int:
    """The versions, and the GPU's state and software, into ``out_path`` (machine.json); printed too."""
    import platform

    import torch

    from gemmlib.measure import monitor

    doc = {"python": platform.python_version(), "versions": monitor.software_versions(),
           "machine": monitor.machine_state(monitor.nvml_index_for_torch_device(0) if torch.cuda.is_available() else 0),
           "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, default=str)
    v = doc["versions"]
    print("python", doc["python"], *(f"{k} {v[k]}" for k in ("torch", "cuda", "cublas", "cudnn", "nccl", "triton",
                                                            "driver") if v.get(k) is not None))
    print(doc["gpu"] or "no CUDA device here (torch.cuda.is_available() is False)")
    m = doc["machine"]
    print({k: m.get(k) for k in ("sm_clock_mhz", "sm_clock_max_mhz", "power_w", "power_limit_w", "temp_c",
                                 "clock_reasons", "persistence_mode")} if m.get("available") else m.get("reason"))
    return 0


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "env":
        return env(argv[1])
    if len(argv) >= 2 and argv[0] == "checks":
        return checks(argv[1], len(argv) > 2 and argv[2] == "quick")
    if len(argv) in (2, 3) and argv[0] == "figures":
        return figures(argv[1], quiet=argv[2:] == ["--quiet"])
    sys.stderr.write(__doc__ or "")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
