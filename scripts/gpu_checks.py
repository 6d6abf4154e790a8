"""The Python parts of scripts/gpu_report.sh, in one file a test can run on a CPU.

    python scripts/gpu_checks.py checks OUT/gpu_checks.json [quick]   # the GPU targets, measured
    python scripts/gpu_checks.py figures OUT                           # one summary of every figure

``checks``: bf16 N³ (N = 8192, 4096 with ``quick``) through the harness against
``triton.testing.do_bench`` on the same tensors in the same run (target ≥ 750 TFLOP/s, within
3 %), the CUDA-events and CUDA-graph timing paths, int8 and fp8 against bf16 (target ≥ 1.5×), the
article's shape and odd (padded) shapes. Every check runs in its own ``try``: one failure loses
nothing else. Without CUDA it writes ``{"error": "no CUDA device", ...}`` and exits with status 3.

``figures``: reads what the steps left under OUT (gpu_checks.json, report/results.json,
validate.json, calibrate.json) and writes OUT/figures.json and prints one line per target:
measured value, target, PASS / FAIL, or "not measured" with the reason — never a traceback.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

NO_CUDA_EXIT = 3


# --------------------------------------------------------------------------- checks
def checks(out_path: str, quick: bool) -> int:
    import torch

    if not torch.cuda.is_available():
        print("no CUDA device: the GPU checks cannot run here")
        with open(out_path, "w", encoding="utf-8") as f:
            json.dump({"error": "no CUDA device", "torch": torch.__version__}, f)
        return NO_CUDA_EXIT

    from gemmlib.measure import harness
    from gemmlib.measure import precision as bp

    res: dict = {"device": torch.cuda.get_device_name(0), "capability": list(torch.cuda.get_device_capability(0)),
                 "torch": torch.__version__, "quick": quick}

    def save() -> None:  # after every check: a check that hangs past the step's limit costs only itself
        with open(out_path, "w", encoding="utf-8") as f:
            json.dump(res, f, indent=2, default=str)

    def check(name, fn) -> None:
        try:
            res[name] = fn()
        except Exception as e:  # noqa: BLE001
            res[name] = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
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
        if n == 8192:
            r["target_750_tflops"] = "PASS" if r["harness_tflops"] >= 750 else "FAIL"
        r["target_within_3pct"] = "PASS" if abs(r["difference"]) <= 0.03 else "FAIL"
        ev = harness.time_callable(torch.matmul, device="cuda", args_list=[(a, b)], min_run_time=0.5, flush_l2=False)
        gr = harness.time_callable(torch.matmul, device="cuda", args_list=[(a, b)], min_run_time=0.5, cuda_graph=True)
        out["cuda_events_tflops"] = flops / ev.median_s / 1e12
        out["cuda_graph_tflops"] = flops / gr.median_s / 1e12
        small = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
        s_db = harness.time_callable(torch.matmul, device="cuda", args_list=[(small, small)], min_run_time=0.2)
        s_gr = harness.time_callable(torch.matmul, device="cuda", args_list=[(small, small)], min_run_time=0.2,
                                     cuda_graph=True)
        out["small_256_us"] = {"do_bench": s_db.median_s * 1e6, "cuda_graph": s_gr.median_s * 1e6}
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
        return [{"name": r.name, "supported": r.supported, "reason": r.reason, "rel_error": r.rel_error,
                 "tflops": r.tflops} for r in rows]

    save()
    check(f"bf16_{n}_vs_do_bench", bf16_vs_do_bench)
    check(f"low_precision_{n}", low_precision_ratios)
    check("article_shape", article_shape)
    check("odd_shapes", odd_shapes)
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


def figure_rows(out: Path) -> list[dict]:
    """One row per target: figure, value, target, status ("PASS", "FAIL" or "not measured: why")."""
    out = Path(out)
    gc = _load(out / "gpu_checks.json")
    rep = _load(out / "report" / "results.json")
    val = _load(out / "validate.json")
    rows: list[dict] = []

    def add(figure: str, value, target: str, ok: bool | None, why: str = "", unit: str = "") -> None:
        status = ("PASS" if ok else "FAIL") if ok is not None and value is not None else f"not measured: {why}"
        rows.append({"figure": figure, "value": value, "unit": unit, "target": target, "status": status})

    no_gpu = "no GPU checks ran" if gc is None else (gc.get("error") or "")
    bf = next((v for k, v in (gc or {}).items() if k.startswith("bf16_") and isinstance(v, dict)), None)
    r1 = _dig(bf, "round1")
    tf = _dig(r1, "harness_tflops")
    add("bf16 8192³ (harness)", tf, "≥ 750 TFLOP/s", None if tf is None else tf >= 750,
        no_gpu or (_dig(bf, "error") or "no bf16 check"), "TFLOP/s")
    diff = _dig(r1, "difference")
    add("harness vs do_bench, same run", diff, "within 3 %", None if diff is None else abs(diff) <= 0.03,
        no_gpu or "no bf16 check", "signed %")
    low = next((v for k, v in (gc or {}).items() if k.startswith("low_precision_") and isinstance(v, dict)), None)
    for name in ("int8", "fp8"):
        x = _dig(low, f"{name} / bf16")
        add(f"{name} / bf16", x, "≥ 1.5×", None if x is None else x >= 1.5, no_gpu or f"no {name} row", "×")
    sections = {s.get("name"): s for s in (rep or {}).get("sections", []) if isinstance(s, dict)}
    share = _dig(sections.get("tiling"), "verdict", "triton_share_of_cublas")
    add("Triton / cuBLAS fp16 4096³", share, "≥ 85 %", None if share is None else share >= 0.85,
        "no tiling verdict (a GPU report's tiling section)" if rep else "no report", "%")
    dec = _dig(sections.get("batching"), "verdict", "decode_4096_share_of_copy")
    add("decode M = 1 share of copy bandwidth", dec, "≥ 70 %", None if dec is None else dec >= 0.70,
        "no batching verdict (a GPU report's batching section)" if rep else "no report", "%")
    for phase in ("prefill", "decode"):
        for kind in ("estimated", "calibrated"):
            err = _dig(val, phase, f"{kind}_error")
            ok = None
            if kind == "calibrated" and err is not None:
                ok = abs(err) <= 0.15 if _dig(val, "device") == "cuda" else None
            target = "within 15 % (GPU)" if kind == "calibrated" else "(reference)"
            rows.append({"figure": f"validate {phase}: {kind} error", "value": err, "unit": "signed %",
                         "target": target,
                         "status": ("PASS" if ok else "FAIL") if ok is not None else
                         ("reported" if err is not None else "not measured: no validate.json")})
        e, c = _dig(val, phase, "estimated_error"), _dig(val, phase, "calibrated_error")
        if e is not None and c is not None:
            add(f"validate {phase}: |calibrated| − |datasheet| error", abs(c) - abs(e), "< 0", abs(c) < abs(e),
                unit="signed %")
    return rows


def show(v, unit: str) -> str:
    if v is None:
        return "—"
    if unit == "signed %":
        return f"{v:+.1%}"
    if unit == "%":
        return f"{v:.1%}"
    if unit == "×":
        return f"{v:.2f}×"
    return f"{v:.4g} {unit}".strip()


def figures(out_dir: str) -> int:
    out = Path(out_dir)
    rows = figure_rows(out)
    (out / "figures.json").write_text(json.dumps(rows, indent=2, default=str), encoding="utf-8")
    for r in rows:
        print(f"{r['figure']:<48} {show(r['value'], r['unit']):>12}  target {r['target']:<18} {r['status']}")
    return 0


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "checks":
        return checks(argv[1], len(argv) > 2 and argv[2] == "quick")
    if len(argv) == 2 and argv[0] == "figures":
        return figures(argv[1])
    sys.stderr.write(__doc__ or "")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
