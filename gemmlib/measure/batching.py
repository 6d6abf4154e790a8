"""The batching benchmark: when does putting requests together pay?

Three ways to serve B requests of M rows each through a K×N layer:

* ``loop``    — B separate matmuls ``x_i @ W`` that share one weight: B launches,
  and each launch reads all of W (K·N elements) again.
* ``stacked`` — one ``[B·M, K] @ W``: W is read once for the whole batch. At
  decode (M = 1) the weight read dominates, so the arithmetic intensity grows
  about linearly with B until it reaches the device's ridge point: batching is
  nearly free there.
* ``bmm``     — B *distinct* weights through ``torch.bmm``: one launch, but
  every weight is still read once per request, so the intensity stays that of a
  single request; it only saves launches.

Bytes per mode are what its kernels must move when each reads its operands
once: loop and bmm B·(K·N + M·K + M·N), stacked K·N + B·(M·K + M·N) elements.
The achieved GB/s is those bytes over the measured time (a loop whose weight
stays in L2 between its launches can exceed DRAM bandwidth: a cache effect,
shown as measured).

torch is imported inside the functions; importing this module is light.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gemmlib.charts import optional_chart
from gemmlib.charts.batching import batching_chart
from gemmlib.core import format as fmt
from gemmlib.core.dtypes import get_dtype
from gemmlib.core.errors import InputError
from gemmlib.core.flops import gemm_flops
from gemmlib.core.hardware import get_hardware
from gemmlib.core.i18n import N_, Msg, Text
from gemmlib.core.results import BenchResult, record, unsupported
from gemmlib.core.roofline import attainable
from gemmlib.measure import devices, harness, plan, safety
from gemmlib.measure.spec import BenchSpec

LOOP_CAP = N_("a loop of {batch} calls is above the cap of {cap}")
MODES: tuple[str, ...] = ("loop", "stacked", "bmm")
MODE_LABELS = {
    "loop": "loop: B separate x_i @ W (one shared weight)",
    "stacked": "stacked: one [B·M, K] @ W",
    "bmm": "bmm: B distinct weights, torch.bmm",
}
BATCHING_DTYPES: tuple[str, ...] = ("fp32", "fp16", "bf16")
ARTICLE = {"batch": 20, "m": 1024, "k": 4096, "n": 4096}  # 20 × (1024×4096 @ 4096×4096)
ARTICLE_CPU = {"batch": 20, "m": 64, "k": 512, "n": 512}  # the same batch, scaled to run in a moment on a CPU
MAX_LOOP_CALLS = 4096
REF_REQUESTS = 8  # requests checked against float64 per row


def article_shape(device: str) -> dict:
    """The article's shape on a GPU; on a CPU a scaled-down copy (the full one takes minutes there)."""
    return dict(ARTICLE if device == "cuda" else ARTICLE_CPU)

Progress = Callable[[float, str], None] | None


@dataclass(frozen=True)
class BatchingConfig:
    """One batch sweep: M rows per request through a K×N weight, for each batch size and mode."""

    device: str = "cpu"
    m: int = 1
    k: int = 1024
    n: int = 1024
    dtype: str = "fp32"
    batches: tuple[int, ...] = (1, 4, 16, 64)
    modes: tuple[str, ...] = MODES
    cuda_graph: bool = False
    min_run_time: float = 0.1
    seed: int = 0

    def __post_init__(self) -> None:
        """Checks what can never run, wherever it is built (the caps are the plan's)."""
        plan.check_device(self.device)
        plan.check_whole(M=self.m, K=self.k, N=self.n)
        d = get_dtype(self.dtype).name
        if d not in BATCHING_DTYPES:
            raise InputError(N_("the batching benchmark runs {choices}; got {name!r}"),
                             choices=", ".join(BATCHING_DTYPES), name=self.dtype)
        if not self.batches:
            raise InputError(N_("give at least one batch size"))
        for b in self.batches:
            if isinstance(b, bool) or not isinstance(b, (int, float)) or int(b) != b or b < 1:
                raise InputError(N_("batch sizes must be whole numbers ≥ 1, got {value!r}"), value=b)
        bad = [md for md in self.modes if md not in MODES]
        if bad:
            raise InputError(N_("unknown mode {mode!r}; choose from {choices}"), mode=bad[0], choices=", ".join(MODES))
        if not self.modes:
            raise InputError(N_("choose at least one mode"))
        object.__setattr__(self, "dtype", d)
        object.__setattr__(self, "batches", tuple(int(b) for b in self.batches))
        object.__setattr__(self, "modes", tuple(self.modes))
        object.__setattr__(self, "min_run_time", plan.check_min_run_time(self.min_run_time))


def cpu_decode_defaults() -> BatchingConfig:
    """Small enough for seconds on two cores: a 1024×1024 fp32 weight (4 MiB)."""
    return BatchingConfig(device="cpu", m=1, k=1024, n=1024, dtype="fp32", batches=(1, 4, 16, 64))


def cpu_prefill_defaults() -> BatchingConfig:
    return BatchingConfig(device="cpu", m=64, k=512, n=512, dtype="fp32", batches=(1, 4, 16))


def gpu_decode_defaults() -> BatchingConfig:
    return BatchingConfig(device="cuda", m=1, k=4096, n=4096, dtype="bf16",
                          batches=(1, 2, 4, 8, 16, 32, 64, 128, 256))


def gpu_prefill_defaults() -> BatchingConfig:
    return BatchingConfig(device="cuda", m=512, k=4096, n=4096, dtype="bf16", batches=(1, 2, 4, 8, 16, 32))


def _torch_dtype(name: str):
    import torch

    d = get_dtype(name).name
    if d not in BATCHING_DTYPES:
        raise InputError(N_("the batching benchmark runs {choices}; got {name!r}"),
                         choices=", ".join(BATCHING_DTYPES), name=name)
    return {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[d]


def mode_flops(mode: str, batch: int, m: int, k: int, n: int) -> int:
    """The same useful work for every mode: 2·B·M·N·K."""
    return 2 * batch * m * n * k


def mode_bytes(mode: str, batch: int, m: int, k: int, n: int, dtype: str) -> float:
    """Bytes the mode's kernels move when each reads its operands once (see the module docstring)."""
    eb = get_dtype(dtype).bytes
    act = batch * (m * k + m * n)
    if mode == "stacked":
        return float((k * n + act) * eb)
    if mode in ("loop", "bmm"):
        return float((batch * k * n + act) * eb)
    raise InputError(N_("unknown mode {mode!r}; choose from {choices}"), mode=mode, choices=", ".join(MODES))


def mode_intensity(mode: str, batch: int, m: int, k: int, n: int, dtype: str) -> float:
    return mode_flops(mode, batch, m, k, n) / mode_bytes(mode, batch, m, k, n, dtype)


def _mode_memory(mode: str, batch: int, m: int, k: int, n: int, eb: float) -> float:
    """Bytes allocated for one buffer set of a mode (inputs and output)."""
    w = (batch if mode == "bmm" else 1) * k * n
    return (w + batch * m * k + batch * m * n) * eb


def check_caps(cfg: BatchingConfig, lim: safety.Limits) -> None:
    """The server's caps on a sweep's sizes: M, K, N and every batch's B·M. Checked once, in the plan
    (``plan_batching``: the page's estimate, the command line and the queue admit a run through it);
    the config checked the rest where it was built, and the worker runs what was admitted."""
    safety.check_dims(lim, M=cfg.m, K=cfg.k, N=cfg.n)
    for b in cfg.batches:
        safety.check_dims(lim, **{"B·M": int(b) * cfg.m})


def _progress(progress: Progress, frac: float, text: str) -> None:
    if progress is not None:
        progress(min(1.0, max(0.0, frac)), text)


def run_batching(cfg: BatchingConfig, progress: Progress = None,
                 deadline: safety.Deadline | None = None) -> list[BenchResult]:
    """Measure every mode × batch size of ``cfg``; each row has TFLOP/s, GB/s and intensity.

    ``deadline`` (default: the server's ``GEMM_TIME_LIMIT_S``; the report passes its own) is checked
    before every row; rows past it say so."""
    import torch

    lim = safety.limits()  # its sizes were admitted by the plan (check_caps); memory is checked here, per row
    device = harness.require_device(cfg.device)
    dname = get_dtype(cfg.dtype).name
    tdt = _torch_dtype(dname)
    eb = get_dtype(dname).bytes
    m, k, n = cfg.m, cfg.k, cfg.n
    # only rows it will run (a loop past MAX_LOOP_CALLS is a row that says why, as the plan counts it): a loop-only
    # sweep of 4096 requests was admitted by the plan, then refused here for buffers it never allocates
    biggest = max((_mode_memory(md, b, m, k, n, eb) for b in cfg.batches for md in cfg.modes
                   if not (md == "loop" and b > MAX_LOOP_CALLS)), default=0.0)
    safety.check_memory(biggest, device, lim)
    dev_name = harness.device_name(device)
    deadline = deadline or safety.Deadline(lim.time_limit_s)
    gen = torch.Generator(device=device).manual_seed(cfg.seed)

    def randn(*shape):  # drawn on the device itself: a batch of 256 weights is gigabytes
        return torch.randn(*shape, generator=gen, dtype=tdt, device=device)

    plan = [(b, md) for b in cfg.batches for md in cfg.modes]
    results: list[BenchResult] = []
    for idx, (batch, mode) in enumerate(plan):
        _progress(progress, idx / len(plan), Text(N_("batching: {mode}, batch {batch}"),
                                                       mode=Text(mode), batch=batch))  # a mode: a catalogue name
        shape = {"m": m, "k": k, "n": n, "batch": int(batch)}
        flops = mode_flops(mode, batch, m, k, n)
        nbytes = mode_bytes(mode, batch, m, k, n, dname)

        def refuse(reason: str, mode=mode, shape=shape, flops=flops, nbytes=nbytes) -> BenchResult:
            return unsupported("batching", mode, device, dname, shape, reason, device_name=dev_name,
                               flops=flops, nbytes=nbytes)

        if deadline.expired():
            results.append(refuse(deadline.reason()))
            continue
        if mode == "loop" and batch > MAX_LOOP_CALLS:
            results.append(refuse(Text(LOOP_CAP, batch=batch, cap=MAX_LOOP_CALLS)))
            continue
        one_set = _mode_memory(mode, batch, m, k, n, eb)
        try:
            safety.check_memory(one_set, device, lim)
        except InputError as e:
            results.append(refuse(str(e)))
            continue
        use_graph = bool(cfg.cuda_graph and device == "cuda")
        sets, rot_note = rotation_plan(one_set, use_graph, lim,
                                       harness.l2_cache_bytes(device) if use_graph else None)
        with safety.oom_guard(device):
            args_list, fn = _build(mode, batch, m, k, n, sets, randn, torch)
            x0 = args_list[0]
            out = fn(*x0)
            sub = min(batch, REF_REQUESTS)
            ref = _reference(mode, x0, sub, torch)
            err = harness.rel_error(_as_3d(mode, out, batch, m, n)[:sub], ref)
            try:
                timing = harness.time_callable(fn, device=device, args_list=args_list,
                                               min_run_time=cfg.min_run_time,
                                               cuda_graph=bool(cfg.cuda_graph and device == "cuda"))
            except Exception as e:  # noqa: BLE001 - e.g. a capture that fails: a row that says why
                if safety.is_oom(e):
                    raise
                results.append(refuse(f"timing failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}"))
                continue
            r = BenchResult(bench="batching", name=mode, device=device, device_name=dev_name, dtype=dname,
                            shape=shape, flops=float(flops), bytes=nbytes, rel_error=err,
                            extra={"launches": batch if mode == "loop" else 1,
                                   "cuda_graph": bool(cfg.cuda_graph and device == "cuda"),
                                   "per_request_s": None})
            r.set_timing(timing)
            r.extra["per_request_s"] = r.median_s / batch
            r.extra["rotated_sets"] = sets
            r.extra["rotated_bytes"] = sets * one_set
            if cfg.cuda_graph and device != "cuda":
                r.reason = N_("CUDA graphs need a CUDA device: timed without them")
            elif rot_note:
                r.reason = rot_note
            results.append(r)
            del args_list, out
    _progress(progress, 1.0, Text(N_("batching: done")))
    record(results)
    return results


GRAPH_MAX_SETS = 64  # buffer sets one CUDA graph may rotate through (each captured once)


def rotation_plan(one_set: float, cuda_graph: bool, lim: safety.Limits,
                  l2_bytes: float | None = None) -> tuple[int, str]:
    """How many buffer sets to rotate, and a note when they cannot beat the cache.

    Without CUDA graphs a GPU run is timed by do_bench, which flushes the L2 before every call,
    and a CPU run rotates sets past a 64 MiB last-level cache (at most 4). A CUDA graph replays
    its calls back to back, so its sets should together exceed the GPU's L2 twice over
    (``l2_bytes``, from the device: 50 MB on an H100/H200) — 4 sets of a K = N = 2048 bf16 weight
    (8 MiB each) stay in L2 and would read as more than HBM bandwidth; when they cannot, the
    harness captures an L2 flush before every call and subtracts the flushes' time, and the note
    says so.
    """
    if not cuda_graph:
        return harness.rotation_count(one_set, max_bytes=lim.max_bytes / 4, max_sets=4), ""
    l2 = float(l2_bytes or 64 * 1024**2)
    sets = harness.rotation_count(one_set, cache_bytes=l2, max_sets=GRAPH_MAX_SETS, max_bytes=lim.max_bytes / 4)
    if sets * one_set < 2 * l2:
        return sets, (f"CUDA graph: the {sets} rotated buffer sets ({sets * one_set / 2**20:.3g} MiB) do not exceed "
                      f"twice the {l2 / 2**20:.3g} MiB L2, so the harness flushed the L2 before every call and "
                      "subtracted the flushes' own time")
    return sets, ""


def _build(mode, batch, m, k, n, sets, randn, torch):
    """Buffer sets and the callable for a mode. Every set holds random normal inputs."""
    args_list = []
    for _ in range(sets):
        if mode == "bmm":
            args_list.append((randn(batch, m, k), randn(batch, k, n)))
        else:
            args_list.append((randn(batch, m, k), randn(k, n)))
    if mode == "loop":
        def fn(x, w):
            return [torch.matmul(x[i], w) for i in range(x.shape[0])]
    elif mode == "stacked":
        def fn(x, w):
            return torch.matmul(x.reshape(-1, x.shape[-1]), w)
    else:
        fn = torch.bmm
    return args_list, fn


def _reference(mode, args, sub, torch):
    """float64 product for the first ``sub`` requests (enough to check; a full fp64 copy of 256
    distinct weights would be tens of gigabytes)."""
    x, w = args
    x64 = x[:sub].to(torch.float64)
    if mode == "bmm":
        return torch.bmm(x64, w[:sub].to(torch.float64)).cpu()
    return torch.matmul(x64, w.to(torch.float64)).cpu()


def _as_3d(mode, out, batch, m, n):
    import torch

    if mode == "loop":
        return torch.stack(out)
    if mode == "stacked":
        return out.reshape(batch, m, n)
    return out


# --------------------------------------------------------------------------- the article's example
def run_article_example(device: str = "cpu", dtype: str | None = None, *, batch: int = ARTICLE["batch"],
                        m: int = ARTICLE["m"], k: int = ARTICLE["k"], n: int = ARTICLE["n"],
                        min_run_time: float = 0.2, deadline: safety.Deadline | None = None) -> dict:
    """20 requests of 1024×4096 through a 4096×4096 weight: one by one vs stacked, with a verdict.

    Also runs the same batch at M = 1 (decode), where batching really pays.
    Returns ``{"results": [...], "speedup": float, "decode_speedup": float, "slower": bool, "verdict": str}``.
    """
    dname = dtype or ("bf16" if device == "cuda" else "fp32")
    cfg = BatchingConfig(device=device, m=m, k=k, n=n, dtype=dname, batches=(batch,),
                         modes=("loop", "stacked"), min_run_time=min_run_time)
    res = run_batching(cfg, deadline=deadline)
    dec = run_batching(BatchingConfig(device=device, m=1, k=k, n=n, dtype=dname, batches=(batch,),
                                      modes=("loop", "stacked"), min_run_time=min_run_time), deadline=deadline)
    return {"results": res + dec, **article_verdict(res, dec, device)}


def article_verdict(prefill: list[BenchResult], decode: list[BenchResult], device: str) -> dict:
    """Speed-ups (loop time / stacked time) and one sentence that reads them."""
    def speed(rs):
        lo = next((r for r in rs if r.name == "loop" and r.median_s), None)
        st = next((r for r in rs if r.name == "stacked" and r.median_s), None)
        return (lo.median_s / st.median_s, lo, st) if lo and st else (None, lo, st)

    s_pre, lo, st = speed(prefill)
    s_dec, _, st_dec = speed(decode)
    if s_pre is None:
        return {"speedup": None, "decode_speedup": s_dec, "slower": False,
                "verdict": Text(N_("the example did not run"))}
    b, m, k, n = st.shape["batch"], st.shape["m"], st.shape["k"], st.shape["n"]
    ridge = _ridge(device, st.dtype)
    ridge_text = (f"{ridge:.0f}" if device == "cuda" else
                  Text(N_("{ridge:.0f} of the catalogue's placeholder CPU row"), ridge=ridge)) if ridge else ""
    w_mib = k * n * get_dtype(st.dtype).bytes / 2**20
    parts = [Text(N_("At {b} × {m}×{k} @ {k}×{n} ({dtype}), stacking is {speedup:.2f}× the loop ({t_loop:.3g} → "
                     "{t_stacked:.3g} TFLOP/s)."), b=b, m=m, k=k, n=n, dtype=st.dtype, speedup=s_pre,
                  t_loop=lo.tflops, t_stacked=st.tflops)]
    if s_pre >= 1.3:
        parts.append(Text(N_("A real gain here: per-call overheads or weight re-reads were a large share of the "
                             "loop.")))
    elif s_pre >= 0.8:
        if ridge and lo.intensity >= ridge:
            parts.append(Text(N_("Little gain, as expected: each request alone already has intensity {intensity:.0f} "
                                 "FLOP/B, above the ridge point ({ridge}), so every call of the loop is "
                                 "compute-bound and stacking the same FLOPs cannot save time — the article's "
                                 "several-fold claim does not hold at this shape."),
                              intensity=lo.intensity, ridge=ridge_text))
        else:
            cached = w_mib < 64
            if ridge and cached:
                t = N_("Little gain: each request has intensity {intensity:.0f} FLOP/B (ridge {ridge}), and the "
                       "{mib:.3g} MiB weight stays in cache between the loop's calls.")
            elif ridge:
                t = N_("Little gain: each request has intensity {intensity:.0f} FLOP/B (ridge {ridge}).")
            elif cached:
                t = N_("Little gain: each request has intensity {intensity:.0f} FLOP/B, and the {mib:.3g} MiB "
                       "weight stays in cache between the loop's calls.")
            else:
                t = N_("Little gain: each request has intensity {intensity:.0f} FLOP/B.")
            parts.append(Text(t, intensity=lo.intensity, ridge=ridge_text, mib=w_mib))
    else:
        parts.append(Text(N_("Stacking was slower here: the one large call ran less efficiently than the separate "
                             "small ones on this device (on a shared CPU, multi-threaded BLAS calls suffer most from "
                             "other load; rerun, or compare on a GPU).")))
    if s_dec is not None and s_dec < 0.8:  # a slower run is not a gain, whatever the model says it could be
        parts.append(Text(N_("At decode (M = 1) stacking was slower here: {speedup:.2f}× the loop, where one weight "
                             "read serving all {b} requests (intensity {i_stacked:.1f} vs {i_loop:.2f} FLOP/B per "
                             "separate call) allows up to {b}× while the weight read dominates. On a shared CPU, "
                             "multi-threaded BLAS calls suffer most from other load: rerun, or compare on a GPU."),
                          speedup=s_dec, b=b, i_stacked=st_dec.intensity,
                          i_loop=mode_intensity("loop", b, 1, k, n, st.dtype)))
    elif s_dec is not None:
        w_mb = k * n * get_dtype(st.dtype).bytes / 2**20
        parts.append(Text(N_("At decode (M = 1) the same batch stacked is {speedup:.2f}× the loop: one weight read "
                             "serves all {b} requests (intensity {i_stacked:.1f} vs {i_loop:.2f} FLOP/B per separate "
                             "call), so up to {b}× is possible while the weight read dominates."),
                          speedup=s_dec, b=b, i_stacked=st_dec.intensity,
                          i_loop=mode_intensity("loop", b, 1, k, n, st.dtype)))
        if 0.8 <= s_dec < 1.5 and w_mb < 64:
            parts.append(Text(N_("Here the weight is only {mib:.3g} MiB: it stays in cache between the loop's calls, "
                                 "so the loop does not pay the re-reads from DRAM that make batching pay on a GPU."),
                              mib=w_mb))
    return {"speedup": s_pre, "decode_speedup": s_dec, "slower": article_slower(s_pre, s_dec),
            "verdict": Text.joined(parts, " ")}


def article_slower(speedup: float | None, decode_speedup: float | None) -> bool:
    """Whether stacking came out slower than the loop (below 0.8×) in prefill or decode: the verdict says so, a page
    shows it as a warning rather than a success, and ``bench batching --article --json`` gives ``article.slower``."""
    return any(s is not None and s < 0.8 for s in (speedup, decode_speedup))


def _ridge(device: str, dtype: str) -> float | None:
    """Datasheet ridge point of the catalogue row matching this device (None when unknown)."""
    hw = device_hardware(device)
    return hw.ridge_point(dtype) if hw is not None else None


def device_hardware(device: str):
    """The catalogue row for the present device (gemmlib.measure.devices' match); the editable CPU row on a CPU."""

    if device == "cpu":
        return get_hardware("cpu")
    try:

        return devices.datasheet_for(device)
    except Exception:  # noqa: BLE001 - detection failed: no ridge to quote
        return None


# --------------------------------------------------------------------------- the model (no measuring)
def model_rows(m: int, k: int, n: int, dtype: str, batches: list[int] | tuple[int, ...],
               hw: Any = None) -> list[dict]:
    """Intensity per mode and batch, and the roofline's attainable TFLOP/s on ``hw`` (if it has the dtype)."""

    gemm_flops(m, n, k)  # validates the dimensions
    peak = hw.peak(dtype) if hw is not None else None
    out = []
    for b in batches:
        if isinstance(b, bool) or int(b) != b or b < 1:
            raise InputError(N_("batch sizes must be whole numbers ≥ 1, got {value!r}"), value=b)
        for mode in MODES:
            inten = mode_intensity(mode, int(b), m, k, n, dtype)
            row = {"mode": mode, "batch": int(b), "intensity": inten,
                   "bytes": mode_bytes(mode, int(b), m, k, n, dtype), "flops": mode_flops(mode, int(b), m, k, n)}
            if peak:
                row["attainable_tflops"] = float(attainable(inten, peak, hw.bandwidth)) / 1e12
            out.append(row)
    return out


def ridge_batch(m: int, k: int, n: int, dtype: str, ridge: float, limit: int = 1 << 22) -> int | None:
    """Smallest batch at which stacking reaches the ridge point (None if it never does up to ``limit``)."""
    if mode_intensity("stacked", limit, m, k, n, dtype) < ridge:
        return None
    lo, hi = 1, limit
    while lo < hi:
        mid = (lo + hi) // 2
        if mode_intensity("stacked", mid, m, k, n, dtype) >= ridge:
            hi = mid
        else:
            lo = mid + 1
    return lo


# --------------------------------------------------------------------------- tables, lessons, charts
def rows(results: list[BenchResult]) -> list[dict]:
    out = []
    for r in results:
        out.append({
            "mode": r.name, "batch": r.shape.get("batch"), "m": r.shape.get("m"), "k": r.shape.get("k"),
            "n": r.shape.get("n"), "dtype": r.dtype, "median_s": r.median_s, "p20_s": r.p20_s,
            "p80_s": r.p80_s, "per_request_s": r.extra.get("per_request_s"), "tflops": r.tflops,
            "gbps": r.gbps, "intensity": r.intensity, "rel_error": r.rel_error,
            "supported": r.supported, "note": r.reason,
        })
    return out


def lesson(results: list[BenchResult]) -> str:
    """What the sweep shows, in numbers: throughput gain of stacking over the loop and over bmm."""
    timed = [r for r in results if r.median_s]
    if not timed:
        return Text(N_("Nothing was measured."))
    batches = sorted({r.shape["batch"] for r in timed})
    big = batches[-1]

    def get(mode, b):
        return next((r for r in timed if r.name == mode and r.shape["batch"] == b), None)

    parts = []
    s1, sb = get("stacked", batches[0]), get("stacked", big)
    if s1 and sb and big > batches[0]:
        gain = sb.tflops / s1.tflops
        template = (N_("Stacking {big} requests raises throughput {gain:.3g}× over batch {first} (intensity "
                       "{i1:.3g} → {i2:.3g} FLOP/B) while each call takes {slower:.3g}× as long.") if gain >= 1 else
                    N_("Stacking {big} requests changes throughput {gain:.3g}× over batch {first} (intensity "
                       "{i1:.3g} → {i2:.3g} FLOP/B) while each call takes {slower:.3g}× as long."))
        parts.append(Text(template, big=big, gain=gain, first=batches[0], i1=s1.intensity, i2=sb.intensity,
                          slower=sb.median_s / s1.median_s))
    lo, bm = get("loop", big), get("bmm", big)
    if sb and lo and bm:
        parts.append(Text(N_("At batch {big}, stacked is {than_loop} than the loop and {than_bmm} than bmm over "
                             "distinct weights."), big=big, than_loop=_ratio(lo.median_s / sb.median_s),
                          than_bmm=_ratio(bm.median_s / sb.median_s)))
    elif sb and lo:
        parts.append(Text(N_("At batch {big}, stacked is {than_loop} than the loop."), big=big,
                          than_loop=_ratio(lo.median_s / sb.median_s)))
    if bm and lo:
        parts.append(Text(N_("bmm is {than_loop} than the loop: it saves launches, but every request still reads "
                             "its own weight, so its intensity does not grow with the batch."),
                          than_loop=_ratio(lo.median_s / bm.median_s)))
    return Text.joined(parts, " ")


def _ratio(speedup: float) -> Text:
    """2.0 -> '2× faster'; 0.5 -> '2× slower'."""
    if speedup >= 1:
        return Text(N_("{ratio:.3g}× faster"), ratio=speedup)
    return Text(N_("{ratio:.3g}× slower"), ratio=1 / speedup)


# --------------------------------------------------------------------------- copy bandwidth
def copy_bandwidth(device: str, nbytes: int = 1 << 30, min_run_time: float = 0.2) -> dict:
    """Device copy bandwidth (read + write bytes / s): the ceiling gemmlib.measure.devices measured, or measured now."""

    try:
        c = devices.measured_ceilings(device)
    except Exception:  # noqa: BLE001 - no saved ceilings for this device: measure below
        c = None
    if c is not None and c.bandwidth:
        return {"bytes_per_s": float(c.bandwidth), "source": "measured ceiling (gemmlib.measure.devices)"}
    r = devices.measure_copy(device, nbytes, min_run_time=min_run_time)
    return {"bytes_per_s": r.bytes / r.median_s,
            "source": f"measured now: device copy of {nbytes / 2**30:.3g} GiB (read + write)"}


# --------------------------------------------------------------------------- report section
COPY_PLAN_S = 1.0  # the report's copy-bandwidth reference (a 1 GiB buffer, 0.2 s of copies) in a section's plan


def report_section(device: str, quick: bool, out_dir: Path, progress: Progress = None,
                   deadline: safety.Deadline | None = None) -> dict:
    """The batching part of ``python -m gemmlib report``; ``deadline``: the section's share of the report's
    budget, checked before every row. The batch sizes and the article's example whose plan does not fit the
    share are left out (``left_out`` names them); on a GPU the points the 70 % target is judged on — decode
    M = 1 at batch 1, the 8192² weight, the copy bandwidth — run first, whatever is cut."""
    md = ["## Batching", ""]
    charts: dict[str, Any] = {}
    if device == "cuda":
        dec = gpu_decode_defaults()
        if quick:
            dec = BatchingConfig(**{**dec.__dict__, "batches": (1, 4, 16, 64, 256)})
        pre = BatchingConfig(**{**gpu_prefill_defaults().__dict__,
                                "batches": (1, 4, 16) if quick else (1, 2, 4, 8, 16, 32)})
    else:
        dec = cpu_decode_defaults() if not quick else BatchingConfig(batches=(1, 16), k=512, n=512)
        pre = cpu_prefill_defaults() if not quick else BatchingConfig(m=32, k=256, n=256, batches=(1, 4))
    dec = BatchingConfig(**{**dec.__dict__, "min_run_time": 0.05})
    pre = BatchingConfig(**{**pre.__dict__, "min_run_time": 0.05})
    big_cfg = BatchingConfig(device="cuda", m=1, k=8192, n=8192, dtype=dec.dtype, batches=(1,), modes=("stacked",),
                             min_run_time=0.05) if device == "cuda" else None
    art = article_shape(device)
    if quick and device != "cuda":
        art = {**art, "m": 16, "k": 256, "n": 256}
    art_cfg = ArticleConfig(device=device, dtype="bf16" if device == "cuda" else "fp32", batch=art["batch"],
                            m=art["m"], k=art["k"], n=art["n"], min_run_time=0.05)
    lim = safety.limits()

    # What fits the share: the target points first (their plan is spent whatever it is), then the decode
    # sweep (batch 1 kept), the prefill sweep, the article's example, each in what the ones before left.
    left = plan.share_s(deadline)
    left -= (_plan_s(plan_batching, big_cfg, lim) + COPY_PLAN_S) if big_cfg is not None else 0.0
    left_out: list[str] = []

    def cut(c: BatchingConfig, what: str, part: float, keep: Callable[[int], bool]) -> BatchingConfig:
        nonlocal left
        bs, out = plan.fit(list(c.batches), lambda xs: plan_batching(_with(c, batches=tuple(xs)), lim).seconds,
                           left * part, keep)
        c = _with(c, batches=tuple(bs))
        left -= plan_batching(c, lim).seconds
        left_out.extend(f"{what} batch {b} (its plan did not fit the section's share)" for b in out)
        return c

    dec = cut(dec, "decode", 0.5, lambda b: b == 1)
    pre = cut(pre, "prefill", 0.6, lambda b: False)
    run_article = math.isinf(left) or _plan_s(plan_article, art_cfg, lim) <= left
    if not run_article:
        left_out.append(f"the article's example ({art['batch']} requests of {art['m']}×{art['k']} by "
                        f"{art['k']}×{art['n']}; its plan did not fit the section's share)")

    def sweep(c: BatchingConfig, progress: Progress = progress) -> list[BenchResult]:
        check_caps(c, lim)  # the report runs its sweeps itself, not through a plan: its caps are checked here
        return run_batching(c, progress=progress, deadline=deadline)

    r_dec = sweep(dec)
    big: list[BenchResult] = []
    bw: dict[str, Any] = {}
    if big_cfg is not None:  # the targets before the prefill sweep: a share spent there cannot skip them
        big = sweep(big_cfg, progress=None)
        bw = copy_bandwidth("cuda")
    r_pre = sweep(pre)
    md += [f"### Decode shape: M = {dec.m}, K = {dec.k}, N = {dec.n}, {dec.dtype}", "",
           _table(r_dec), "", lesson(r_dec), "",
           f"### Prefill shape: M = {pre.m}, K = {pre.k}, N = {pre.n}, {pre.dtype}", "",
           _table(r_pre), "", lesson(r_pre), ""]
    results = r_dec + r_pre
    verdict: dict[str, Any] = {}
    if big_cfg is not None:
        one = next((r for r in r_dec if r.name == "stacked" and r.shape["batch"] == 1 and r.gbps), None)
        results += big
        verdict["copy_bandwidth_gbps"] = bw["bytes_per_s"] / 1e9
        for r in (one, big[0] if big and big[0].gbps else None):
            if r is None:
                continue
            share = r.gbps * 1e9 / bw["bytes_per_s"]
            verdict[f"decode_{r.shape['k']}_gbps"] = r.gbps
            verdict[f"decode_{r.shape['k']}_share_of_copy"] = share
            md += [f"**Decode M = 1, {r.shape['k']}×{r.shape['n']} {r.dtype} weight:** {r.gbps:.0f} GB/s "
                   f"achieved vs copy bandwidth {bw['bytes_per_s'] / 1e9:.0f} GB/s ({bw['source']}) = "
                   f"{share:.1%} ({'meets' if share >= 0.7 else 'misses'} the 70% target).", ""]
    if run_article:
        ex = run_article_example(device, batch=art["batch"], m=art["m"], k=art["k"], n=art["n"],
                                 min_run_time=0.05, deadline=deadline)
        results += ex["results"]
        scaled = "" if art == ARTICLE else " (scaled down for a CPU)"
        md += [f"### The article's example{scaled}", "", ex["verdict"], ""]
        verdict["article_speedup"] = ex["speedup"]
        verdict["article_decode_speedup"] = ex["decode_speedup"]

    for metric in ("tflops", "gbps"):
        c = optional_chart(lambda metric=metric: batching_chart(r_dec, metric))
        if c is not None:
            charts[f"batching_decode_{metric}"] = c
    return {"title": "Batching", "results": results, "markdown": "\n".join(md), "charts": charts,
            "verdict": verdict, "left_out": left_out}


def _plan_s(plan_fn: Callable[[Any, safety.Limits], plan.Plan], cfg: Any, lim: safety.Limits) -> float:
    """A plan's seconds; 0 for a run the caps refuse (it costs nothing: its rows say why)."""
    try:
        return plan_fn(cfg, lim).seconds
    except InputError:
        return 0.0


def _with(c: BatchingConfig, **changes: Any) -> BatchingConfig:
    return BatchingConfig(**{**c.__dict__, **changes})


def _table(results: list[BenchResult]) -> str:
    return fmt.markdown_table(rows(results), ("mode", "batch", "median_s", "tflops", "gbps", "intensity",
                                             "rel_error", "note"))


# --------------------------------------------------------------------------- the specs
LAUNCH_S = 5e-6  # one call's launch besides its FLOPs (a loop makes B of them)


def plan_batching(cfg: BatchingConfig, lim: safety.Limits) -> plan.Plan:
    """What ``run_batching(cfg)`` holds at its peak — per (batch, mode) its rotated buffer sets, the
    outputs, the float64 reference of the requests it checks and the check's copies, plus what the
    previous row still holds — its largest batch, and its time: every (batch, mode), each request's
    launch, the inputs and the float64 references."""
    check_caps(cfg, lim)
    dev, dname = cfg.device, cfg.dtype
    eb = get_dtype(dname).bytes
    m, k, n = cfg.m, cfg.k, cfg.n
    peak = carry = ref_flops = 0.0  # carry: what the previous row still holds while the next one allocates
    big, what = 0.0, plan.ONE_GEMM
    rows: list[plan.Row] = []
    refs: list[float] = []  # each row's float64 reference FLOPs: made in its own step, before its timing
    for b in cfg.batches:
        for mode in cfg.modes:
            flops = 2.0 * b * m * n * k
            refs.append(0.0)
            if mode == "loop" and b > MAX_LOOP_CALLS:
                rows.append(plan.Row(flops, dname, mode, skipped=True))
                continue
            w = (b if mode == "bmm" else 1) * k * n
            x = b * m * k
            out = b * m * n
            one_set = _mode_memory(mode, b, m, k, n, eb)
            # the sets the run rotates (rotation_plan): with CUDA graphs up to GRAPH_MAX_SETS, past twice the L2 (its
            # size unknown without torch: the 64 MiB the run assumes when the device does not say)
            sets = rotation_plan(one_set, bool(cfg.cuda_graph and dev == "cuda"), lim)[0]
            inputs = sets * (w + x) * eb
            sub = min(b, REF_REQUESTS)
            ref = 8.0 * (sub * m * k + (sub if mode == "bmm" else 1) * k * n + sub * m * n)
            check = (out * eb if mode == "loop" else 0.0) + plan.err_bytes(sub * m * n, eb)
            row = inputs + out * eb + max(ref + check, out * eb)
            peak = max(peak, row + carry)
            carry = (w + x) * eb + 8.0 * sub * m * n
            if flops > big:
                big, what = flops, Msg(N_("a {b}×{m}×{k} by {k}×{n} batch ({mode})"), b=b, m=m, k=k, n=n, mode=mode)
            ref_flops += 2.0 * sub * m * n * k
            refs[-1] = 2.0 * sub * m * n * k
            rows.append(plan.Row(flops, dname, mode, prep_elements=b * (m * k + k * n), extra_calls=1,
                                 overhead_s=(b if mode == "loop" else 1) * LAUNCH_S))
    host = 0.0 if dev == "cpu" else 8.0 * REF_REQUESTS * m * (k + n) + 8.0 * k * n
    seconds, sources = plan.estimate(rows, dev, cfg.min_run_time, extra_flops=ref_flops, bench="batching")
    # each step is one (batch, mode) row, in run_batching's order, with its own reference
    step_s = plan.lay_steps(plan.estimate_each(rows, dev, cfg.min_run_time, bench="batching"), seconds, refs)
    return plan.Plan(bytes=peak, host_bytes=host, call_flops=big, call_what=what, seconds=seconds, rows=len(rows),
                     steps=len(rows), sources=sources, step_s=step_s)


def _run_batching_spec(cfg: BatchingConfig, progress: Any, deadline: safety.Deadline) -> list[BenchResult]:
    return run_batching(cfg, progress=progress, deadline=deadline)


SPEC = BenchSpec("batching", BatchingConfig, plan_batching, _run_batching_spec, list[BenchResult],
                 label=N_("a batching run"), imports=("gemmlib.measure.batching",))


@dataclass(frozen=True)
class ArticleConfig:
    """The article's example: ``batch`` requests of M×K through one K×N weight, one by one and stacked,
    then the same batch at M = 1."""

    device: str = "cpu"
    dtype: str = "fp32"
    batch: int = ARTICLE["batch"]
    m: int = ARTICLE["m"]
    k: int = ARTICLE["k"]
    n: int = ARTICLE["n"]
    min_run_time: float = 0.2

    def __post_init__(self) -> None:
        self.sweeps()  # each sweep's config checks itself

    def sweeps(self) -> tuple[BatchingConfig, BatchingConfig]:
        common = dict(device=self.device, k=self.k, n=self.n, dtype=self.dtype, batches=(self.batch,),
                      modes=("loop", "stacked"), min_run_time=self.min_run_time)
        return BatchingConfig(m=self.m, **common), BatchingConfig(m=1, **common)


@dataclass(frozen=True)
class ArticleResult:
    """Both sweeps' rows, the speed-ups (loop time / stacked time) and the sentence that reads them."""

    results: list[BenchResult]
    speedup: float | None
    decode_speedup: float | None
    verdict: str


def plan_article(cfg: ArticleConfig, lim: safety.Limits) -> plan.Plan:
    return plan.sum_plans([plan_batching(c, lim) for c in cfg.sweeps()], steps=0)


def _run_article_spec(cfg: ArticleConfig, progress: Any, deadline: safety.Deadline) -> ArticleResult:
    progress(None, Text(N_("the article's example: 20 requests one by one, then stacked")))
    ex = run_article_example(cfg.device, cfg.dtype, batch=cfg.batch, m=cfg.m, k=cfg.k, n=cfg.n,
                             min_run_time=cfg.min_run_time, deadline=deadline)
    return ArticleResult(results=list(ex["results"]), speedup=ex["speedup"], decode_speedup=ex["decode_speedup"],
                         verdict=ex["verdict"])


ARTICLE_SPEC = BenchSpec("article", ArticleConfig, plan_article, _run_article_spec, ArticleResult,
                         label=N_("the article's batching example"), imports=("gemmlib.measure.batching",))
