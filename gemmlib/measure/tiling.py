"""The tiling benchmark: Python-level tiling, numpy blocking, a Triton kernel and the library.

Same inputs for every implementation; each row carries its time (median, p20,
p80 through ``gemmlib.measure.harness``), TFLOP/s, error against a float64 reference
and the DRAM traffic its tile size implies (``gemmlib.explain.tiling.tile_traffic``).

* ``python_tiled`` (the article's loops, one ``torch.matmul`` per sub-block) and
  ``numpy_blocked`` are swept over tile sizes: the lesson is that they are slower
  than one library call, and slower still for small tiles (more calls).
* ``triton`` is a real tiled kernel; on a GPU it is swept over block sizes and
  also autotuned (``tile = None``); on a CPU it runs in Triton's interpreter, which
  checks its result and reports **no** time.
* ``torch`` is the library call (cuBLAS / the CPU BLAS): the reference speed.

On a GPU, ``run_wave_sweep`` measures N stepping past a tile multiple (8192…8320)
beside ``gemmlib.core.flops.wave_quantization``'s prediction.

torch is imported inside the functions; importing this module is light.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from gemmlib.charts import optional_chart
from gemmlib.charts.tiling import tiling_chart, wave_chart
from gemmlib.core import format as fmt
from gemmlib.core.dtypes import get_dtype
from gemmlib.core.errors import InputError
from gemmlib.core.flops import gemm_bytes, gemm_flops, wave_quantization
from gemmlib.core.i18n import N_, Msg, Text
from gemmlib.core.results import BenchResult, record, unsupported
from gemmlib.explain.tiling import check_shapes, check_tile, numpy_blocked, tile_count, tile_traffic
from gemmlib.measure import harness, plan, safety
from gemmlib.measure import triton_gemm as tg
from gemmlib.measure.spec import BenchSpec

IMPLS: tuple[str, ...] = ("python_tiled", "numpy_blocked", "triton", "torch")
IMPL_LABELS = {
    "python_tiled": N_("Python loops over tiles, `torch.matmul` per sub-block (the article)"),
    "numpy_blocked": N_("numpy, output-stationary blocks with an accumulator"),
    "triton": N_("Triton kernel (tiles in registers / shared memory)"),
    "torch": N_("`torch.matmul` on the whole matrices (cuBLAS / CPU BLAS)"),
}
TILING_DTYPES: tuple[str, ...] = ("fp32", "fp16", "bf16")
# Row notes with values (Texts: a page shows them in its language)
NOTES = {
    "python_calls": N_("tile {tile} means {calls:,} `torch.matmul` calls per product (cap {cap:,} on {device}); "
                       "choose a larger tile"),
    "numpy_host": N_("numpy runs on the host CPU only; its time is not comparable with a {device} device"),
    "numpy_calls": N_("tile {tile} means {calls:,} block products per call (cap {cap:,}); choose a larger tile"),
    "block": N_("a Triton block must be a power of two ≥ {least} (`tl.dot`'s rule)"),
    "steps": N_("with {bm}×{bn}×{bk} blocks at {m}×{n}×{k} that is {steps:,} program steps (cap {cap}) — pick a "
                "larger tile or a smaller size"),
}
# sub-block products one python_tiled / numpy_blocked call may make (each is a library call from Python)
MAX_TILE_CALLS = {"cpu": 20_000, "cuda": 5_000, "mps": 5_000}
# The interpreter runs the kernel program by program at numpy speed (~2 ms per program and k-step on a
# small CPU): cap the programs × k-steps of one correctness check so that it takes about a second.
MAX_INTERPRETER_STEPS = 600
WAVE_TILE = (128, 256)  # the tile the wave-quantization prediction assumes (a common cuBLAS/Triton tile)

Progress = Callable[[float, str], None] | None


@dataclass(frozen=True)
class TilingConfig:
    """One tiling run. Square problems by default (m = n = k = size)."""

    device: str = "cpu"
    size: int = 256
    dtype: str = "fp32"
    tiles: tuple[int, ...] = (16, 32, 64, 128)
    impls: tuple[str, ...] = IMPLS
    m: int | None = None
    n: int | None = None
    k: int | None = None
    triton_autotune: bool = True  # add an autotuned Triton row on a GPU
    min_run_time: float = 0.2
    seed: int = 0

    def __post_init__(self) -> None:
        """Checks what can never run, wherever it is built (the caps are the plan's)."""
        plan.check_device(self.device)
        m, n, k = self.mnk
        plan.check_whole(size=self.size, M=m, N=n, K=k)
        if get_dtype(self.dtype).name not in TILING_DTYPES:
            raise InputError(N_("the tiling benchmark runs {choices}; got {name!r}"), choices=", ".join(TILING_DTYPES),
                             name=self.dtype)
        object.__setattr__(self, "dtype", get_dtype(self.dtype).name)
        for t in self.tiles:
            if isinstance(t, bool) or not isinstance(t, (int, float)) or int(t) != t or t < 1:
                raise InputError(N_("tile sizes must be whole numbers ≥ 1, got {value!r}"), value=t)
        object.__setattr__(self, "tiles", tuple(int(t) for t in self.tiles))
        bad = [i for i in self.impls if i not in IMPLS]
        if bad:
            raise InputError(N_("unknown implementation {impl!r}; choose from {choices}"), impl=bad[0],
                             choices=", ".join(IMPLS))
        if not self.impls:
            raise InputError(N_("choose at least one implementation"))
        object.__setattr__(self, "impls", tuple(self.impls))
        object.__setattr__(self, "min_run_time", plan.check_min_run_time(self.min_run_time))

    @property
    def mnk(self) -> tuple[int, int, int]:
        return (self.m or self.size, self.n or self.size, self.k or self.size)


def cpu_defaults() -> TilingConfig:
    return TilingConfig(device="cpu", size=256, dtype="fp32", tiles=(16, 32, 64, 128))


def gpu_defaults() -> TilingConfig:
    return TilingConfig(device="cuda", size=4096, dtype="fp16", tiles=(32, 64, 128, 256, 512, 1024))


def _torch_dtype(name: str):
    import torch

    d = get_dtype(name).name
    if d not in TILING_DTYPES:
        raise InputError(N_("the tiling benchmark runs {choices}; got {name!r}"), choices=", ".join(TILING_DTYPES),
                         name=name)
    return {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[d]


def parse_int_list(text: str | list | tuple, what: str = "tiles") -> tuple[int, ...]:
    """'32,64, 128' -> (32, 64, 128); a clear InputError for anything else."""
    items = text if isinstance(text, (list, tuple)) else str(text).replace(" ", "").split(",")
    out = []
    for it in items:
        if it == "":
            continue
        try:
            f = float(it)
        except (TypeError, ValueError):
            raise InputError(N_("{what} must be whole numbers separated by commas, got {value!r}"), what=what,
                             value=it) from None
        if not f.is_integer() or f < 1:
            raise InputError(N_("each of {what} must be a whole number ≥ 1, got {value!r}"), what=what, value=it)
        out.append(int(f))
    if not out:
        raise InputError(N_("give at least one value for {what}"), what=what)
    return tuple(dict.fromkeys(out))


def check_caps(cfg: TilingConfig, lim: safety.Limits) -> None:
    """The server's caps on M, N and K: checked once, in the plan (``plan_tiling``: the page, the command
    line and the queue admit a run through it); the config checked the rest where it was built."""
    m, n, k = cfg.mnk
    safety.check_dims(lim, M=m, N=n, K=k)


def _progress(progress: Progress, frac: float, text: str) -> None:
    if progress is not None:
        progress(min(1.0, max(0.0, frac)), text)


def run_tiling(cfg: TilingConfig, progress: Progress = None,
               deadline: safety.Deadline | None = None) -> list[BenchResult]:
    """Measure every implementation × tile size of ``cfg`` on the same random inputs.

    ``deadline`` (default: the server's ``GEMM_TIME_LIMIT_S``; the report passes its own) is checked
    before every row; rows past it say so."""
    import numpy as np
    import torch

    lim = safety.limits()  # its sizes were admitted by the plan (check_caps)
    device = harness.require_device(cfg.device)
    m, n, k = cfg.mnk
    tdt = _torch_dtype(cfg.dtype)
    dname = get_dtype(cfg.dtype).name
    eb = get_dtype(dname).bytes
    flops = gemm_flops(m, n, k)
    nbytes = gemm_bytes(m, n, k, dname)
    set_bytes = (m * k + k * n) * eb
    sets = harness.rotation_count(set_bytes, max_bytes=lim.max_bytes / 4)
    # the plan's count (``plan_tiling``, the one the run was admitted on; the report's sweeps call this directly):
    # a count of its own here could refuse, after a page said it fits, what the plan admitted
    safety.check_memory(plan_tiling(cfg, lim).bytes, device, lim)
    dev_name = harness.device_name(device)
    shape0 = {"m": m, "n": n, "k": k}
    deadline = deadline or safety.Deadline(lim.time_limit_s)

    def base(name: str, tile: int | None, **extra: Any) -> BenchResult:
        return BenchResult(bench="tiling", name=name, device=device, device_name=dev_name, dtype=dname,
                           shape={**shape0, "tile": tile}, flops=float(flops), bytes=float(nbytes),
                           extra=dict(extra))

    def refuse(name: str, tile: int | None, reason: str, **extra: Any) -> BenchResult:
        r = unsupported("tiling", name, device, dname, {**shape0, "tile": tile}, reason,
                        device_name=dev_name, flops=flops, nbytes=nbytes)
        r.extra.update(extra)
        return r

    results: list[BenchResult] = []
    with safety.oom_guard(device):
        g = torch.Generator(device="cpu").manual_seed(cfg.seed)
        sets_ab = []
        for _ in range(sets):
            a = torch.randn(m, k, generator=g, dtype=torch.float32).to(device=device, dtype=tdt)
            b = torch.randn(k, n, generator=g, dtype=torch.float32).to(device=device, dtype=tdt)
            sets_ab.append((a, b))
        a0, b0 = sets_ab[0]
        ref = (a0.to(torch.float64) @ b0.to(torch.float64)).cpu()

        plan: list[tuple[str, int | None]] = []
        for impl in cfg.impls:
            if impl == "torch":
                plan.append((impl, None))
                continue
            if impl == "triton" and device == "cuda" and cfg.triton_autotune:
                plan.append((impl, None))
            plan.extend((impl, int(t)) for t in cfg.tiles)

        for idx, (impl, tile) in enumerate(plan):
            name = Text(impl)  # a catalogue name: the reader's, as the table's rows say it
            _progress(progress, idx / len(plan), Text(N_("tiling: {impl} tile {tile}"), impl=name, tile=tile) if tile
                      else Text(N_("tiling: {impl}"), impl=name))
            extra: dict[str, Any] = {"impl": impl}
            if tile:
                tr = tile_traffic(m, n, k, tile, dtype=dname, accumulate_in_dram=(impl == "python_tiled"))
                extra.update(traffic_bytes=tr.total_bytes, a_reads=tr.a_reads, b_reads=tr.b_reads,
                             traffic_intensity=tr.intensity, traffic_overhead=tr.overhead)
            if deadline.expired():
                results.append(refuse(impl, tile, deadline.reason(), **extra))
                continue
            try:
                row = _run_one(impl, tile, cfg, device, sets_ab, ref, base, refuse, extra, np, torch)
            except InputError as e:
                row = refuse(impl, tile, str(e), **extra)
            except Exception as e:  # noqa: BLE001 - e.g. a Triton config that does not fit the chip
                if safety.is_oom(e):
                    raise
                row = refuse(impl, tile, f"failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}",
                             **extra)
            results.append(row)
        _progress(progress, 1.0, Text(N_("tiling: done")))
    record(results)
    return results


def _run_one(impl, tile, cfg, device, sets_ab, ref, base, refuse, extra, np, torch) -> BenchResult:
    m, n, k = cfg.mnk
    dname = get_dtype(cfg.dtype).name
    if impl == "torch":
        fn = torch.matmul
        args = sets_ab
        extra["tile_note"] = N_("library's own tiling")
    elif impl == "python_tiled":

        calls = tile_count(m, n, k, tile)
        extra["calls"] = calls
        cap = MAX_TILE_CALLS.get(device, 5_000)
        if calls > cap:
            return refuse(impl, tile, Text(NOTES["python_calls"], tile=tile, calls=calls, cap=cap, device=device),
                          **extra)

        def fn(a, b, _t=tile):
            return python_tiled(a, b, _t)
        args = sets_ab
    elif impl == "numpy_blocked":

        if device != "cpu":
            return refuse(impl, tile, Text(NOTES["numpy_host"], device=device), **extra)
        if dname == "bf16":
            return refuse(impl, tile, N_("numpy has no bfloat16 type"), **extra)
        calls = tile_count(m, n, k, tile)
        extra["calls"] = calls
        if calls > MAX_TILE_CALLS["cpu"]:
            return refuse(impl, tile, Text(NOTES["numpy_calls"], tile=tile, calls=calls, cap=MAX_TILE_CALLS["cpu"]),
                          **extra)
        args = [(a.numpy(), b.numpy()) for a, b in sets_ab]

        def fn(a, b, _t=tile):
            return numpy_blocked(a, b, _t)
    elif impl == "triton":

        st = tg.status()
        extra["mode"] = st.mode
        if not st.available:
            return refuse(impl, tile, st.reason, **extra)
        block = None
        if tile is not None:
            if tile < tg.MIN_BLOCK or tile & (tile - 1):
                return refuse(impl, tile, Text(NOTES["block"], least=tg.MIN_BLOCK), **extra)
            block = (tile, tile, min(tile, 64 if dname != "fp32" else 32))
            extra["block"] = list(block)
        if st.mode != "gpu":
            bm, bn, bk = block or tg.INTERPRETER_CONFIG[:3]
            steps = -(-m // bm) * -(-n // bn) * -(-k // bk)
            extra["interpreter_steps"] = steps
            if steps > MAX_INTERPRETER_STEPS:
                return refuse(impl, tile, Text.joined([st.reason, Text(
                    NOTES["steps"], bm=bm, bn=bn, bk=bk, m=m, n=n, k=k, steps=steps, cap=MAX_INTERPRETER_STEPS)]),
                    **extra)
            a, b = sets_ab[0]
            out = tg.triton_matmul(a, b, block=block)
            row = base(impl, tile, **extra)
            row.rel_error = harness.rel_error(out, ref)
            row.reason = N_("interpreter: correctness only (no speed figure)")
            return row
        if tile is not None:
            stages, warps = tg.launch_for(tile, tile, dname)
            spill = tg.tile_spills(tile, tile, warps)
            if spill:
                return refuse(impl, tile, spill, **extra)
            extra["num_warps"], extra["num_stages"] = warps, stages

        def fn(a, b, _blk=block):
            return tg.triton_matmul(a, b, block=_blk)
        args = sets_ab
    else:  # pragma: no cover - validated above
        raise InputError(N_("unknown implementation {impl!r}"), impl=impl)

    a, b = args[0]
    out = fn(a, b)
    err = harness.rel_error(torch.as_tensor(out) if isinstance(out, np.ndarray) else out, ref)
    timing = harness.time_callable(fn, device=device, args_list=args, min_run_time=cfg.min_run_time)
    row = base(impl, tile, **extra)
    row.set_timing(timing)
    row.rel_error = err
    if impl == "triton" and tile is None:
        cfg_best = tg.best_config()
        if cfg_best:
            row.extra["autotuned"] = cfg_best
    return row


# --------------------------------------------------------------------------- wave quantization (GPU)
def wave_sweep_ns(start: int = 8192, stop: int = 8320, step: int = 16) -> list[int]:
    return list(range(start, stop + 1, step))


MAX_WAVE_POINTS = 64


def run_wave_sweep(device: str = "cuda", m: int = 8192, k: int = 8192, ns: list[int] | None = None,
                   dtype: str = "bf16", sms: int | None = None, tile: tuple[int, int] = WAVE_TILE,
                   min_run_time: float = 0.1, progress: Progress = None,
                   impls: tuple[str, ...] = ("torch", "triton"),
                   deadline: safety.Deadline | None = None) -> list[BenchResult]:
    """M×K @ K×N for N stepping past a tile multiple, beside the predicted efficiency.

    ``torch`` is cuBLAS (its tile is its own choice); ``triton`` is this project's kernel
    with exactly ``tile`` (BLOCK_M × BLOCK_N, BLOCK_K = 64), so the prediction describes
    it directly. Each row's ``extra`` holds ``predicted_efficiency`` (tile × wave
    quantization for ``tile`` on ``sms`` SMs) and ``predicted_tflops`` (that
    implementation's first measured TFLOP/s scaled by the predicted efficiency ratio).
    GPU only: on a CPU there are no SMs and waves, so every row is refused with that reason.
    ``deadline`` (default: the server's ``GEMM_TIME_LIMIT_S``) is checked before every point;
    points after it are rows that say they were skipped.
    """
    import torch

    ns = list(ns or wave_sweep_ns())
    if not ns or len(ns) > MAX_WAVE_POINTS:
        raise InputError(N_("give 1 to {most} values of N, got {n}"), most=MAX_WAVE_POINTS, n=len(ns))
    lim = safety.limits()
    deadline = deadline or safety.Deadline(lim.time_limit_s)
    safety.check_dims(lim, M=m, K=k, **{f"N{i}": v for i, v in enumerate(ns)})
    tdt = _torch_dtype(dtype)
    dname = get_dtype(dtype).name
    bad = [i for i in impls if i not in ("torch", "triton")]
    if bad:
        raise InputError(N_("the wave sweep measures torch and triton, not {impl!r}"), impl=bad[0])
    ok, why = harness.torch_device_available(device)
    if device != "cuda" or not ok:
        reason = why or "tile and wave quantization needs a GPU (SMs running waves of tiles)"
        return [unsupported("tiling-waves", impl, device, dname, {"m": m, "n": nn, "k": k}, reason,
                            flops=gemm_flops(m, nn, k), nbytes=gemm_bytes(m, nn, k, dname))
                for impl in impls for nn in ns]
    if sms is None:
        sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    eb = get_dtype(dname).bytes
    safety.check_memory(wave_bytes(m, k, max(ns), eb), device, lim)  # the plan's count (plan_waves)
    dev_name = harness.device_name(device)
    with safety.oom_guard(device):
        bufs = {"a": torch.randn(m, k, device=device, dtype=tdt),
                "b": torch.randn(k, max(ns), device=device, dtype=tdt)}
        fns: dict[str, Any] = {"torch": torch.matmul}
        if "triton" in impls:

            if tg.status().timable:
                block = (int(tile[0]), int(tile[1]), 64)

                def tri(x, y, _b=block):
                    return tg.triton_matmul(x, y, block=_b)
                fns["triton"] = tri

        def measure(impl: str, nn: int) -> BenchResult:
            a, b = bufs["a"], bufs["b"][:, :nn].contiguous()
            wq = wave_quantization(m, nn, tile[0], tile[1], sms)
            shape = {"m": m, "n": nn, "k": k}
            extra = {"tiles": wq.tiles, "waves": wq.waves, "sms": sms, "tile": list(tile),
                     "predicted_efficiency": wq.efficiency}
            if impl not in fns:
                return unsupported("tiling-waves", impl, device, dname, shape, "the Triton kernel cannot be timed here",
                                   device_name=dev_name, flops=gemm_flops(m, nn, k), nbytes=gemm_bytes(m, nn, k, dname))
            try:
                t = harness.time_callable(fns[impl], device=device, args_list=[(a, b)], min_run_time=min_run_time)
            except Exception as e:  # noqa: BLE001 - e.g. a tile that does not fit: a row that says why
                if safety.is_oom(e):
                    raise
                return unsupported("tiling-waves", impl, device, dname, shape,
                                   f"failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}", device_name=dev_name)
            r = BenchResult(bench="tiling-waves", name=impl, device=device, device_name=dev_name, dtype=dname,
                            shape=shape, flops=float(gemm_flops(m, nn, k)), bytes=float(gemm_bytes(m, nn, k, dname)),
                            extra=extra)
            r.set_timing(t)
            return r

        results = sweep_points(ns, impls, measure, deadline, device, dname, m, k, progress)
        bufs.clear()
    for impl in impls:
        mine = [r for r in results if r.name == impl and r.tflops]
        if mine:
            e0, t0 = mine[0].extra["predicted_efficiency"], mine[0].tflops
            for r in mine:
                r.extra["predicted_tflops"] = t0 * r.extra["predicted_efficiency"] / e0
    record(results)
    return results


def sweep_points(ns: list[int], impls: tuple[str, ...], measure: Callable[[str, int], BenchResult],
                 deadline: safety.Deadline, device: str, dtype: str, m: int, k: int,
                 progress: Progress = None) -> list[BenchResult]:
    """``measure(impl, n)`` for every N and implementation, the deadline checked before each point:
    once it has passed, every remaining point is a row that says it was skipped (nothing is run)."""
    results: list[BenchResult] = []
    total = len(ns) * len(impls)
    for i, nn in enumerate(ns):
        for j, impl in enumerate(impls):
            _progress(progress, (i * len(impls) + j) / total, Text(N_("wave sweep: {impl}, N = {n}"), impl=impl, n=nn))
            if deadline.expired():
                results.append(unsupported("tiling-waves", impl, device, dtype, {"m": m, "n": nn, "k": k},
                                           deadline.reason(), flops=gemm_flops(m, nn, k),
                                           nbytes=gemm_bytes(m, nn, k, dtype)))
                continue
            results.append(measure(impl, nn))
    return results


def predicted_wave_rows(m: int, k: int, ns: list[int], tile: tuple[int, int], sms: int) -> list[dict]:
    """The prediction alone (no GPU needed): efficiency per N for a tile on ``sms`` SMs."""
    rows = []
    for nn in ns:
        wq = wave_quantization(m, nn, tile[0], tile[1], sms)
        rows.append({"n": nn, "tiles": wq.tiles, "waves": wq.waves, "tile_efficiency": wq.tile_efficiency,
                     "wave_efficiency": wq.wave_efficiency, "predicted_efficiency": wq.efficiency})
    return rows


def wave_cliff(pred: list[dict]) -> dict | None:
    """The largest drop of predicted throughput between two neighbouring N of a sweep
    (``predicted_wave_rows``): where one more wave starts. None when nothing drops."""
    best = None
    for a, b in zip(pred, pred[1:], strict=False):
        drop = 1 - b["predicted_efficiency"] / a["predicted_efficiency"]
        if drop > 0 and (best is None or drop > best["drop"]):
            best = {"n_before": a["n"], "n_after": b["n"], "waves_before": a["waves"], "waves_after": b["waves"],
                    "tiles_before": a["tiles"], "tiles_after": b["tiles"], "drop": drop}
    return best


# --------------------------------------------------------------------------- tables, verdicts, charts
def rows(results: list[BenchResult]) -> list[dict]:
    """Flat table rows for a page or the CLI."""
    out = []
    for r in results:
        out.append({
            "impl": r.name, "tile": r.shape.get("tile"), "dtype": r.dtype,
            "median_s": r.median_s, "p20_s": r.p20_s, "p80_s": r.p80_s,
            "tflops": r.tflops, "rel_error": r.rel_error,
            "traffic_GB": (r.extra.get("traffic_bytes") or r.bytes) / 1e9 if r.bytes else None,
            "a_reads": r.extra.get("a_reads", 1 if r.name == "torch" else None),
            "b_reads": r.extra.get("b_reads", 1 if r.name == "torch" else None),
            "calls": r.extra.get("calls"),
            "supported": r.supported, "note": r.reason,
        })
    return out


def lesson(results: list[BenchResult]) -> str:
    """One paragraph, from the numbers: how far the Python-level tiling is from the library."""
    lib = next((r for r in results if r.name == "torch" and r.median_s), None)
    if lib is None:
        return Text(N_("The library call (torch) did not run, so there is nothing to compare against."))
    parts = [Text(N_("One library call takes {ms:.3g} ms ({tflops:.3g} TFLOP/s)."), ms=lib.median_s * 1e3,
                  tflops=lib.tflops)]
    for impl in ("python_tiled", "numpy_blocked", "triton"):
        timed = [r for r in results if r.name == impl and r.median_s]
        if not timed:
            continue
        best = min(timed, key=lambda r: r.median_s)
        ratio = best.median_s / lib.median_s
        tile = best.shape.get("tile")
        where = Text(N_("tile {tile}"), tile=tile) if tile else Text(N_("autotuned"))
        if ratio >= 1:
            parts.append(Text(N_("`{impl}` at its best ({where}) is {ratio:.3g}× slower."), impl=impl, where=where,
                              ratio=ratio))
        else:
            parts.append(Text(N_("`{impl}` at its best ({where}) is {ratio:.3g}× faster."), impl=impl, where=where,
                              ratio=1 / ratio))
    faster = [r for r in results if r.name in ("python_tiled", "numpy_blocked") and r.median_s
              and r.median_s < lib.median_s]
    if faster:
        parts.append(Text(N_("Python-level tiling beating the library is not the expected result: it usually means "
                             "the one large library call lost time to its threads (on a busy CPU a multi-threaded "
                             "BLAS call waits for cores other work holds, while small sub-block calls run on one "
                             "thread). Rerun on an idle machine before drawing a conclusion.")))
    tri = [r for r in results if r.name == "triton" and r.supported and not r.median_s]
    if tri:
        parts.append(Text(N_("The Triton kernel ran in the interpreter: its result was checked, its time is not "
                             "shown.")))
    return Text.joined(parts, " ")


# --------------------------------------------------------------------------- report section
REPORT_TILES_SHARE = 0.6  # of the tiling section's share on a GPU: the tile sweep; the wave sweep the rest


def report_section(device: str, quick: bool, out_dir: Path, progress: Progress = None,
                   deadline: safety.Deadline | None = None) -> dict:
    """The tiling part of ``python -m gemmlib report``: results, markdown, charts; ``deadline``: the
    section's share of the report's budget, checked before every row of both sweeps. Tiles and wave points
    whose plan does not fit it are left out (``left_out`` names them); the torch and autotuned Triton rows,
    which the Triton-vs-cuBLAS target compares, always run."""
    results: list[BenchResult] = []
    md: list[str] = ["## Tiling", ""]
    charts: dict[str, Any] = {}
    if device == "cuda":
        cfg = TilingConfig(device="cuda", size=4096, dtype="fp16",
                           tiles=(64, 128, 256, 1024) if quick else (32, 64, 128, 256, 512, 1024),
                           min_run_time=0.1)
    else:
        cfg = TilingConfig(device="cpu", size=128 if quick else 256, dtype="fp32",
                           tiles=(32, 64) if quick else (16, 32, 64, 128), min_run_time=0.1)
    lim = safety.limits()
    check_caps(cfg, lim)  # the report runs its sweep itself, not through a plan
    # Within its share of the report's budget: the tiles that fit (the torch and autotuned Triton rows, which
    # the 85 % target compares, run whatever is cut); on a GPU the wave sweep gets what the tiles leave.
    share = plan.share_s(deadline) * (REPORT_TILES_SHARE if device == "cuda" else 1.0)
    tiles, cut = plan.fit(list(cfg.tiles), lambda ts: plan_tiling(replace(cfg, tiles=tuple(ts)), lim).seconds, share)
    left_out = [f"tile {t} at {cfg.size}³ (its plan did not fit the section's share)" for t in cut]
    cfg = replace(cfg, tiles=tuple(tiles))
    res = run_tiling(cfg, progress=progress, deadline=deadline)
    results += res
    m, n, k = cfg.mnk
    md += [f"{m}×{n}×{k}, {cfg.dtype}, on {res[0].device_name if res else device}.", "",
           _md_table(rows(res)), "", lesson(res), ""]
    lib = next((r for r in res if r.name == "torch" and r.tflops), None)
    tri = next((r for r in res if r.name == "triton" and r.shape.get("tile") is None and r.tflops), None)
    verdict: dict[str, Any] = {}
    if device == "cuda" and lib and tri:
        share = tri.tflops / lib.tflops
        verdict = {"triton_tflops": tri.tflops, "cublas_tflops": lib.tflops, "triton_share_of_cublas": share,
                   "triton_config": tri.extra.get("autotuned")}
        word = "meets" if share >= 0.85 else "misses"
        md += [f"**Triton vs cuBLAS, fp16 {m}³:** {tri.tflops:.1f} vs {lib.tflops:.1f} TFLOP/s = "
               f"{share:.1%} ({word} the 85% target); autotuned config {tri.extra.get('autotuned')}.", ""]

    c = optional_chart(lambda: tiling_chart(res))
    if c is not None:
        charts["tiling_tflops"] = c
    if device == "cuda":
        ns, cut_ns = plan.fit(wave_sweep_ns(8192, 8320, 16 if quick else 8),
                              lambda xs: plan_waves(WaveConfig(ns=tuple(xs), min_run_time=0.05), lim).seconds,
                              plan.share_s(deadline))
        left_out += [f"wave sweep N = {nn} (its plan did not fit the section's share)" for nn in cut_ns]
        waves = run_wave_sweep("cuda", m=8192, k=8192, ns=ns, dtype="bf16", min_run_time=0.05, progress=progress,
                               deadline=deadline)
        results += waves
        sms = next((r.extra["sms"] for r in waves if "sms" in r.extra), 132)
        pred = predicted_wave_rows(8192, 8192, sorted({r.shape["n"] for r in waves}), WAVE_TILE, sms)
        md += ["### Tile and wave quantization (bf16, M = K = 8192)", "",
               f"Prediction for {WAVE_TILE[0]}×{WAVE_TILE[1]} tiles (the Triton rows use exactly this tile; "
               "cuBLAS picks its own).", "",
               _md_table([{"impl": r.name, "N": r.shape["n"], "TFLOP/s": r.tflops, "tiles": r.extra.get("tiles"),
                           "waves": r.extra.get("waves"),
                           "predicted_eff": r.extra.get("predicted_efficiency"),
                           "predicted_TFLOP/s": r.extra.get("predicted_tflops")} for r in waves]), ""]
        c = optional_chart(lambda: wave_chart(waves, pred))
        if c is not None:
            charts["wave_quantization"] = c
    return {"title": "Tiling", "results": results, "markdown": "\n".join(md), "charts": charts,
            "verdict": verdict, "left_out": left_out}


def _md_table(recs: list[dict]) -> str:
    return fmt.markdown_table(recs)


def python_tiled(a, b, tile: int = 64):
    """The article's tiled GEMM: loops over (i, j, k) tiles, ``torch.matmul`` on each sub-block.

    ``a`` (M×K) and ``b`` (K×N) are torch tensors on any device; sizes need not be
    multiples of ``tile`` (edge tiles are smaller). D accumulates in fp32 for
    16-bit inputs (as the article's ``torch.zeros`` does) and is returned in the
    input dtype.
    """
    import torch

    t = check_tile(tile)
    m, n, k = check_shapes(tuple(a.shape), tuple(b.shape))
    acc_dtype = torch.float32 if a.dtype in (torch.float16, torch.bfloat16) else a.dtype
    d = torch.zeros((m, n), dtype=acc_dtype, device=a.device)
    for i in range(0, m, t):
        for j in range(0, n, t):
            for p in range(0, k, t):
                d[i:i + t, j:j + t] += torch.matmul(a[i:i + t, p:p + t], b[p:p + t, j:j + t]).to(acc_dtype)
    return d.to(a.dtype)


# --------------------------------------------------------------------------- the specs
PER_CALL_S = 20e-6  # a library call from Python (python_tiled, numpy_blocked): its launch, besides its FLOPs
# On a GPU each configuration of the Triton kernel is compiled on first use (a cold Triton cache: a fresh machine):
# ~0.7-1.0 s on this project's 2-core server (triton_gemm.offline_resources for sm_90, ptxas included). The autotuned
# row compiles every configuration of autotune_configs() and times each with the autotuner's own do_bench (25 ms of
# warm-up, 100 ms of repetitions); a fixed tile compiles one. None of it is timed, all of it is spent.
TRITON_COMPILE_S = 1.0
AUTOTUNE_BENCH_S = 0.125


def triton_setup_s(tile: int | None, dtype: str) -> float:
    """Seconds a GPU Triton row spends before its timing: compiling (and, autotuned, timing) its configurations."""
    if tile is not None:  # a tile _run_one refuses (not a power of two ≥ 16, or one that spills) compiles nothing
        if tile < tg.MIN_BLOCK or tile & (tile - 1) or tg.tile_spills(tile, tile, tg.launch_for(tile, tile, dtype)[1]):
            return 0.0
        return TRITON_COMPILE_S
    sixteen, thirty_two = tg.autotune_configs()
    return len(thirty_two if dtype == "fp32" else sixteen) * (TRITON_COMPILE_S + AUTOTUNE_BENCH_S)


def _tiling_steps(cfg: TilingConfig) -> list[tuple[str, int | None]]:
    """The (implementation, tile) rows ``run_tiling`` runs, in its order (its progress counts them)."""
    out: list[tuple[str, int | None]] = []
    for impl in cfg.impls:
        if impl == "torch":
            out.append((impl, None))
            continue
        if impl == "triton" and cfg.device == "cuda" and cfg.triton_autotune:
            out.append((impl, None))
        out.extend((impl, int(t)) for t in cfg.tiles)
    return out


def plan_tiling(cfg: TilingConfig, lim: safety.Limits) -> plan.Plan:
    """What ``run_tiling(cfg)`` holds at its peak (rotated input sets, drawn in fp32 and cast; the
    float64 reference; each row's output, accumulator and error check) and its time (each timed
    row, each Python-level call's launch, the interpreter's one correctness check)."""
    check_caps(cfg, lim)
    dev = cfg.device
    m, n, k = cfg.mnk
    dname = cfg.dtype
    eb = get_dtype(dname).bytes
    mk, kn, mn = m * k, k * n, m * n
    set_bytes = (mk + kn) * eb
    sets = harness.rotation_count(set_bytes, max_bytes=lim.max_bytes / 4)
    flops = 2.0 * m * n * k
    inputs = sets * set_bytes + (4.0 * (mk + kn) if eb != 4 or dev != "cpu" else 0.0)  # drawn in fp32, then cast
    ref = 8.0 * mn
    ref_peak = inputs + 8.0 * (mk + kn + mn)
    row_peak = fixed = 0.0
    rows: list[plan.Row] = []
    steps = _tiling_steps(cfg)
    for impl, t in steps:
        calls = tile_count(m, n, k, t) if t and impl in ("python_tiled", "numpy_blocked") else 1
        if impl == "torch" or t is None:
            out = eb * mn
        elif impl == "python_tiled":
            if calls > MAX_TILE_CALLS.get(dev, 5000):
                rows.append(plan.Row(flops, dname, skipped=True))
                continue
            out = 4.0 * mn + eb * mn  # the fp32 accumulator and the result
        elif impl == "numpy_blocked":
            if dev != "cpu" or dname == "bf16" or calls > MAX_TILE_CALLS["cpu"]:
                rows.append(plan.Row(flops, dname, skipped=True))
                continue
            # its fp32 accumulator and each k-step's product: one output tile, cut to the matrix as the loops cut
            # it (a tile of 99999 on a 64² problem holds 64², not 99999²: it was refused as "149 GiB"); 16-bit
            # inputs are copied to fp32 block by block
            tm, tn, tk = min(t, m), min(t, n), min(t, k)
            out = eb * mn + 4.0 * (2 * tm * tn + (tm * tk + tk * tn if eb != 4 else 0))
        else:  # triton
            out = eb * mn + (4.0 * mn if dev != "cuda" else 0.0)  # the interpreter's numpy copies
        if impl == "triton" and dev != "cuda":
            fixed += 1.0  # one correctness check in the interpreter (capped at ~1 s), no timing
            rows.append(plan.Row(flops, dname, skipped=True))
            row_peak = max(row_peak, out + plan.err_bytes(mn, eb))
            continue
        if impl == "triton":  # a GPU's: compiled (autotuned) first, outside the timing
            fixed += triton_setup_s(t, dname)
        # a tiled row's rate depends on its tile: named so that only the datasheet and its calls stand for it
        name = impl if t is None or impl == "triton" else f"{impl} tile {t}"
        rows.append(plan.Row(flops, dname, name, extra_calls=1, overhead_s=(calls * PER_CALL_S if calls > 1 else 0.0)))
        row_peak = max(row_peak, out + plan.err_bytes(mn, eb), 2 * out)
    peak = max(ref_peak, inputs + ref + row_peak)
    host = 8.0 * (mk + kn + mn) + 4.0 * max(mk, kn) if dev != "cpu" else 0.0
    seconds, sources = plan.estimate(rows, dev, cfg.min_run_time, extra_flops=flops, bench="tiling", fixed_s=fixed)
    # Each step is one row, in run_tiling's order; beside its timing, a Triton row spends its compile (its interpreter
    # check on a CPU), and the float64 reference is made before the first row is reported (the first step's).
    beside = [0.0] * len(steps)
    for i, (impl, t) in enumerate(steps):
        if impl == "triton":
            beside[i] = triton_setup_s(t, dname) if dev == "cuda" else 1.0
    if steps:
        beside[0] += plan.estimate([], dev, cfg.min_run_time, extra_flops=flops, bench="tiling")[0]
    step_s = plan.lay_steps(plan.estimate_each(rows, dev, cfg.min_run_time, bench="tiling"), seconds, beside)
    return plan.Plan(bytes=peak, host_bytes=host, call_flops=flops, call_what=Msg(plan.A_GEMM, m=m, n=n, k=k),
                     seconds=seconds, rows=len(rows), steps=len(rows), sources=sources, step_s=step_s)


def _run_tiling_spec(cfg: TilingConfig, progress: Any, deadline: safety.Deadline) -> list[BenchResult]:
    return run_tiling(cfg, progress=progress, deadline=deadline)


def _prepare_triton() -> None:
    tg.status()


SPEC = BenchSpec("tiling", TilingConfig, plan_tiling, _run_tiling_spec, list[BenchResult], label=N_("a tiling run"),
                 imports=("gemmlib.measure.tiling",), warm=_prepare_triton)


@dataclass(frozen=True)
class WaveConfig:
    """The wave sweep: M×K @ K×N for each N of ``ns`` (GPU only; a CPU gets rows that say why)."""

    device: str = "cuda"
    m: int = 8192
    k: int = 8192
    ns: tuple[int, ...] = (8192,)
    dtype: str = "bf16"
    tile: tuple[int, int] = WAVE_TILE
    min_run_time: float = 0.1

    def __post_init__(self) -> None:
        plan.check_device(self.device)
        ns = tuple(self.ns)
        if not ns or len(ns) > MAX_WAVE_POINTS:
            raise InputError(N_("give 1 to {most} values of N, got {n}"), most=MAX_WAVE_POINTS, n=len(ns))
        plan.check_whole(M=self.m, K=self.k, **{f"N{i}": v for i, v in enumerate(ns)})
        if len(tuple(self.tile)) != 2:
            raise InputError(N_("a tile is (M, N), got {value!r}"), value=self.tile)
        plan.check_whole(**{"tile M": self.tile[0], "tile N": self.tile[1]})
        if get_dtype(self.dtype).name not in TILING_DTYPES:
            raise InputError(N_("the tiling benchmark runs {choices}; got {name!r}"), choices=", ".join(TILING_DTYPES),
                             name=self.dtype)
        object.__setattr__(self, "ns", tuple(int(x) for x in ns))
        object.__setattr__(self, "tile", (int(self.tile[0]), int(self.tile[1])))
        object.__setattr__(self, "dtype", get_dtype(self.dtype).name)
        object.__setattr__(self, "min_run_time", plan.check_min_run_time(self.min_run_time))


def wave_bytes(m: int, k: int, nmax: int, eb: float) -> float:
    """What the wave sweep holds at its widest N: A, B at the largest N, its contiguous slice for one N, and the
    output. The plan and the run's own check count it alike (the run counted twice that: a sweep the page said fits
    could be refused once it started)."""
    return float(m * k + k * nmax + k * nmax + m * nmax) * eb


def plan_waves(cfg: WaveConfig, lim: safety.Limits) -> plan.Plan:
    """Two rows per N (cuBLAS and the Triton kernel) on the largest N's buffers; nothing on a CPU."""
    safety.check_dims(lim, M=cfg.m, K=cfg.k, **{f"N{i}": v for i, v in enumerate(cfg.ns)})
    if cfg.device != "cuda":
        return plan.Plan(bytes=0.0, rows=2 * len(cfg.ns), steps=2 * len(cfg.ns))  # refused on a CPU: no SMs, no waves
    m, k, eb = cfg.m, cfg.k, get_dtype(cfg.dtype).bytes
    nmax = max(cfg.ns)
    rows = [plan.Row(2.0 * m * nn * k, cfg.dtype, impl) for nn in cfg.ns for impl in ("torch", "triton")]
    # the Triton kernel at the one tile, compiled once per N's divisibility by 16 (Triton specialises on it)
    compiles = len({nn % 16 == 0 for nn in cfg.ns}) * TRITON_COMPILE_S
    seconds, sources = plan.estimate(rows, "cuda", cfg.min_run_time, bench="tiling-waves", fixed_s=compiles)
    # Each step is one row, in sweep_points' order (each N: torch, then triton); a compile is spent in the first
    # Triton row of its kind of N
    beside, seen = [0.0] * len(rows), set()
    for i, (nn, impl) in enumerate((nn, impl) for nn in cfg.ns for impl in ("torch", "triton")):
        if impl == "triton" and (nn % 16 == 0) not in seen:
            seen.add(nn % 16 == 0)
            beside[i] = TRITON_COMPILE_S
    step_s = plan.lay_steps(plan.estimate_each(rows, "cuda", cfg.min_run_time, bench="tiling-waves"), seconds, beside)
    return plan.Plan(bytes=wave_bytes(m, k, nmax, eb), call_flops=2.0 * m * nmax * k,
                     call_what=Msg(plan.A_GEMM, m=m, n=nmax, k=k), seconds=seconds, rows=len(rows), steps=len(rows),
                     sources=sources, step_s=step_s)


def _run_waves_spec(cfg: WaveConfig, progress: Any, deadline: safety.Deadline) -> list[BenchResult]:
    return run_wave_sweep(cfg.device, m=cfg.m, k=cfg.k, ns=list(cfg.ns), dtype=cfg.dtype, tile=cfg.tile,
                          min_run_time=cfg.min_run_time, progress=progress, deadline=deadline)


WAVES_SPEC = BenchSpec("waves", WaveConfig, plan_waves, _run_waves_spec, list[BenchResult], label=N_("a wave sweep"),
                       imports=("gemmlib.measure.tiling",), warm=_prepare_triton, needs_device=False)
