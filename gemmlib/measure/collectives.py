"""Collectives measured: all-reduce, all-gather, reduce-scatter, all-to-all and broadcast over
``torch.distributed`` (NCCL between GPUs, gloo between CPU processes), over message sizes that
double, reported as nccl-tests reports them.

* **Sizes** are nccl-tests' (``gemmlib.core.comm``): the buffer of an all-reduce or broadcast, the
  whole output of an all-gather, the whole input of a reduce-scatter, one rank's whole send buffer
  of an all-to-all. Element counts are rounded down to a multiple of the rank count where the
  collective splits its buffer; the row reports the bytes actually moved.
* **Timing** (``launch.time_samples``): per (collective, size) a few warm-up calls, then
  ``iters`` samples; each sample starts after a barrier and times ``inner`` back-to-back calls
  (CUDA events on a GPU); ``inner`` is chosen from a timed call so that a sample lasts about a
  millisecond (the same on every rank). Each sample's time is the slowest rank's; the row gives
  the median with p20/p80 over samples. An all-reduce works in place, so its input is restored
  before every sample (not timed) and ``inner`` is kept small enough that the sums cannot overflow.
* **Correctness**: every rank's input is a known pattern of small integers (exact in fp32, bf16 and
  fp16), so each rank computes the exact expected output on its own; the result is checked after
  the first call and again after the timed samples, on every rank. ``correct`` is true only when
  every rank's output matched exactly.
* **Bandwidth**: algbw = bytes / time, busbw = algbw × nccl-tests' bus factor
  (``comm.bus_bandwidth``: 2(n−1)/n for an all-reduce, (n−1)/n for all-gather, reduce-scatter and
  all-to-all, 1 for a broadcast), in GB/s (1e9 bytes/s).

With gloo the ranks are CPU processes of one machine: the figures measure host memory and local
sockets. They check the mechanics and feed a CPU estimate, and say so; they are not an
interconnect figure.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from gemmlib.core import format as fmt
from gemmlib.core import interconnect, policy
from gemmlib.core.comm import bus_bandwidth, bus_factor
from gemmlib.core.dtypes import get_dtype
from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_, Text
from gemmlib.core.machine import match_catalogue
from gemmlib.core.results import BenchResult, Timing
from gemmlib.core.units import GiB, MiB
from gemmlib.measure import launch, plan, safety
from gemmlib.measure.spec import BenchSpec

# The collectives measured here (gemmlib.core.comm knows send_recv too, a pipeline's point-to-point).
MEASURED = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast")
COLLECTIVE_DTYPES = ("fp32", "bf16", "fp16")
MAX_SIZE = 8 * GiB  # nccl-tests' usual top (-e 8G); the server's caps usually stop well before
CPU_DEFAULT_MAX = 4 * MiB  # gloo between CPU processes: a few milliseconds per call at the top
GPU_DEFAULT_MAX = 1 * GiB
DEFAULT_MIN = 8
BUFFERS_PER_SIZE = 4  # input, output, expected output and a restore copy / temporary, per rank
SAVE_MIN_BYTES = 1 * MiB  # a sweep that stops below this measured latency, not bandwidth: not kept as a link
_PERIOD = 1021  # the input pattern repeats every 1021 elements (a prime), shifted per rank and chunk
_EXACT = {"fp32": 2**24, "bf16": 256, "fp16": 2048}  # integers each dtype holds exactly
_LARGEST = {"fp32": 3.4e38, "bf16": 3.38e38, "fp16": 65504.0}
# A swept row as the run's progress (a page shows it in its reader's language)
STEP = N_("{op} {size}: {us:.4g} µs, busbw {gbps:.4g} GB/s")
STEP_WRONG = N_("{op} {size}: {us:.4g} µs, busbw {gbps:.4g} GB/s — WRONG RESULT")


MAX_ITERS = 10_000  # timed samples, and untimed calls, per (collective, size): at most (the same in `bench tp`)


@dataclass(frozen=True)
class CollectiveConfig:
    """What to measure: collectives, requested sizes (bytes, nccl-tests' size), dtype, samples."""

    ops: tuple[str, ...] = MEASURED
    sizes: tuple[int, ...] = ()  # empty: the default range for the device
    dtype: str = "fp32"
    iters: int = 10  # timed samples per (collective, size)
    warmup: int = 2
    time_budget_s: float = 240.0  # rows not started by then are reported as skipped
    max_bytes: float = 24 * GiB  # per-rank cap on the buffers (the server's GEMM_MAX_BYTES)

    def __post_init__(self) -> None:
        ops = tuple(dict.fromkeys(str(o).strip().lower().replace("-", "_") for o in self.ops))
        bad = [o for o in ops if o not in MEASURED]
        if bad or not ops:
            raise InputError(f"unknown collective{'' if len(bad) == 1 else 's'} {', '.join(bad) or '(none)'}; choose from "
                             f"{', '.join(MEASURED)}")
        object.__setattr__(self, "ops", ops)
        dt = get_dtype(self.dtype).name
        if dt not in COLLECTIVE_DTYPES:
            raise InputError(f"collectives run in {', '.join(COLLECTIVE_DTYPES)}; {dt} is not one of them")
        object.__setattr__(self, "dtype", dt)
        for name, lo in (("iters", 1), ("warmup", 0)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < lo or v > MAX_ITERS:
                raise InputError(f"{name} must be a whole number in {lo}..{MAX_ITERS:,}, got {v!r}")
        sizes = tuple(int(s) for s in self.sizes)
        if any(s < 1 for s in sizes):
            raise InputError("message sizes must be at least 1 byte")
        object.__setattr__(self, "sizes", tuple(sorted(set(sizes))))
        if not self.time_budget_s > 0:
            raise InputError(f"the time budget must be positive, got {self.time_budget_s!r}")


def size_range(min_bytes: int, max_bytes: int, factor: int = 2) -> tuple[int, ...]:
    """min, min·factor, … up to max (nccl-tests' -b/-e/-f)."""
    if min_bytes < 1 or max_bytes < min_bytes:
        raise InputError(f"the size range must satisfy 1 ≤ min ≤ max, got {min_bytes}..{max_bytes}")
    if factor < 2:
        raise InputError(f"the size factor must be at least 2, got {factor}")
    out, s = [], int(min_bytes)
    while s <= max_bytes:
        out.append(s)
        s *= factor
    return tuple(out)


def size_cap(kind: str, nproc: int, lim: safety.Limits) -> int:
    """The largest message this server allows: 4 buffers per rank within the byte cap (all ranks
    share the host's cap on a CPU), and at most 8 GiB."""
    per_rank = lim.max_bytes / BUFFERS_PER_SIZE
    if kind == "cpu":
        per_rank /= nproc
    return int(min(MAX_SIZE, per_rank))


def default_sizes(kind: str, nproc: int, lim: safety.Limits) -> tuple[int, ...]:
    """8 B doubling up to 4 MiB between CPU processes, 1 GiB between GPUs, within the caps."""
    top = min(CPU_DEFAULT_MAX if kind == "cpu" else GPU_DEFAULT_MAX, size_cap(kind, nproc, lim))
    return size_range(DEFAULT_MIN, max(DEFAULT_MIN, top))


def check_sizes(sizes: tuple[int, ...], kind: str, nproc: int, lim: safety.Limits) -> None:
    """InputError for a size past the server's caps (or the host's free memory, for CPU ranks)."""
    cap = size_cap(kind, nproc, lim)
    top = max(sizes)
    if top > cap:
        where = f"{nproc} CPU ranks share the {fmt.nbytes(lim.max_bytes)} cap" if kind == "cpu" else \
            f"cap {fmt.nbytes(lim.max_bytes)} per GPU"
        raise InputError(f"message size {fmt.nbytes(top)} is past this server's limit of {fmt.nbytes(cap)} "
                         f"({BUFFERS_PER_SIZE} buffers per rank; {where}; GEMM_MAX_BYTES); choose smaller sizes")
    if kind == "cpu":
        safety.check_memory(BUFFERS_PER_SIZE * top * nproc, "cpu", lim)


def element_count(op: str, size_bytes: int, nproc: int, elem_bytes: int) -> int:
    """Elements in nccl-tests' size: whole elements, a multiple of the rank count where the
    collective splits its buffer (all-gather, reduce-scatter, all-to-all), at least one per rank."""
    count = max(1, int(size_bytes) // int(elem_bytes))
    if op in ("all_gather", "reduce_scatter", "all_to_all"):
        count = max(nproc, count // nproc * nproc)
    return count


# --------------------------------------------------------------------------- the data
def _base(rank: int, chunk: int) -> Any:
    """The pattern rank ``rank`` puts in chunk ``chunk`` of its buffer: _PERIOD small integers in −5..5."""
    import torch
    i = torch.arange(_PERIOD, dtype=torch.int64)
    return (((i * 7 + rank * 3 + chunk * 5 + (i * i) % 13) % 11) - 5).to(torch.float32)


def _tile(v: Any, length: int) -> Any:
    reps = -(-length // v.numel())
    return v.repeat(reps)[:length]


def _filled(parts: list[Any], chunk: int, dtype: Any, device: str) -> Any:
    """A buffer of len(parts) chunks, chunk j being ``parts[j]`` repeated (built without big temporaries)."""
    import torch
    out = torch.empty(len(parts) * chunk, dtype=dtype, device=device)
    for j, v in enumerate(parts):
        out[j * chunk:(j + 1) * chunk].copy_(_tile(v.to(device=device, dtype=dtype), chunk))
    return out


@dataclass
class _Case:
    run: Callable[[], Any]
    reset: Callable[[], Any] | None  # restores the input before a sample (in-place collectives)
    check: Callable[[], bool]
    inner_cap: int  # most back-to-back calls a sample may make
    inp: Any = None  # this rank's input (what reset restores) and output buffers, for inspection
    out: Any = None


def _case(op: str, count: int, n: int, rank: int, dtype: Any, dname: str, device: str) -> _Case:
    """Buffers, the call, how to restore the input, and the exact check of one collective."""
    import torch
    import torch.distributed as dist

    gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
    scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
    if op == "all_reduce":
        src = _filled([_base(rank, 0)], count, dtype, device)
        buf = src.clone()
        want = _filled([sum(_base(r, 0) for r in range(n))], count, dtype, device)
        # The sums grow n-fold per call while the input is not restored: keep them finite.
        growth = max(1, int(math.log(_LARGEST[dname] / (5.0 * n)) / math.log(n)) - 1) if n > 1 else 1
        return _Case(lambda: dist.all_reduce(buf), lambda: buf.copy_(src), lambda: torch.equal(buf, want),
                     min(growth, 1000), src, buf)
    if op == "broadcast":
        want = _filled([_base(0, 0)], count, dtype, device)
        buf = want.clone() if rank == 0 else torch.full((count,), 9.0, dtype=dtype, device=device)

        def reset() -> None:
            if rank != 0:
                buf.fill_(9.0)  # not a value of the pattern: a broadcast that did nothing fails the check
        return _Case(lambda: dist.broadcast(buf, 0), reset, lambda: torch.equal(buf, want), 1000,
                     want if rank == 0 else None, buf)
    chunk = count // n
    if op == "all_gather":
        inp = _filled([_base(rank, 0)], chunk, dtype, device)
        out = torch.full((count,), 9.0, dtype=dtype, device=device)
        want = _filled([_base(r, 0) for r in range(n)], chunk, dtype, device)
        return _Case(lambda: gather(out, inp), lambda: out.fill_(9.0), lambda: torch.equal(out, want), 1000, inp, out)
    if op == "reduce_scatter":
        inp = _filled([_base(rank, j) for j in range(n)], chunk, dtype, device)
        out = torch.full((chunk,), 9.0, dtype=dtype, device=device)
        want = _filled([sum(_base(r, rank) for r in range(n))], chunk, dtype, device)
        return _Case(lambda: scatter(out, inp), lambda: out.fill_(9.0), lambda: torch.equal(out, want), 1000,
                     inp, out)
    if op == "all_to_all":
        inp = _filled([_base(rank, j) for j in range(n)], chunk, dtype, device)
        out = torch.full((count,), 9.0, dtype=dtype, device=device)
        want = _filled([_base(r, rank) for r in range(n)], chunk, dtype, device)
        return _Case(lambda: dist.all_to_all_single(out, inp), lambda: out.fill_(9.0),
                     lambda: torch.equal(out, want), 1000, inp, out)
    raise InputError(f"unknown collective {op!r}")


# --------------------------------------------------------------------------- one rank's work
_TARGET_SAMPLE_S = {"cuda": 1e-3, "cpu": 2e-3}
_MAX_INNER = 20


def _worker(ctx: launch.RankContext, cfg: CollectiveConfig, report: launch.Report) -> dict:
    import torch

    n = ctx.world
    dname = cfg.dtype
    tdtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dname]
    el = int(get_dtype(dname).bytes)
    if 5 * n > _EXACT[dname]:
        raise InputError(f"{n} ranks summing {dname} cannot be checked exactly; use fp32")
    sizes = cfg.sizes
    total = len(cfg.ops) * len(sizes)
    start = time.monotonic()
    rows: list[dict] = []
    for oi, op in enumerate(cfg.ops):
        for si, size in enumerate(sizes):
            count = element_count(op, size, n, el)
            nbytes = count * el
            base = {"op": op, "bytes": nbytes, "requested_bytes": int(size), "count": count, "nproc": n,
                    "backend": ctx.backend, "dtype": dname, "device": ctx.kind, "device_name": ctx.device_name}
            go = ctx.from_rank0(1.0 if time.monotonic() - start < cfg.time_budget_s else 0.0)
            if not go:
                rows.append({**base, "time_s": None, "p20_s": None, "p80_s": None, "algbw_gbps": None,
                             "busbw_gbps": None, "correct": None,
                             "skipped": f"the run's time budget of {cfg.time_budget_s:g} s was spent"})
                continue
            if ctx.kind == "cuda":
                safety.check_memory(BUFFERS_PER_SIZE * nbytes, "cuda",
                                    replace(safety.DEFAULT_LIMITS, max_bytes=int(cfg.max_bytes)))
            with safety.oom_guard(ctx.kind):
                case = _case(op, count, n, ctx.rank, tdtype, dname, ctx.device)
                if case.reset:
                    case.reset()
                case.run()
                ctx.sync()
                ok_first = case.check()
                for _ in range(cfg.warmup):
                    if case.reset:
                        case.reset()
                    case.run()
                one = launch.time_samples(ctx, case.run, samples=1, reset=case.reset)[0]
                inner = int(min(_MAX_INNER, case.inner_cap, max(1, math.ceil(_TARGET_SAMPLE_S[ctx.kind] / one))))
                times = launch.time_samples(ctx, case.run, samples=cfg.iters, inner=inner, reset=case.reset)
                if case.reset:
                    case.reset()
                case.run()
                ctx.sync()
                ok_last = case.check()
                correct = ctx.all_true(ok_first and ok_last)
                del case
            t = Timing.from_times(times, reps=cfg.iters * inner, method="barrier + max over ranks")
            alg, bus = bus_bandwidth(op, nbytes, n, t.median_s)
            rows.append({**base, "time_s": t.median_s, "p20_s": t.p20_s, "p80_s": t.p80_s,
                         "algbw_gbps": alg / 1e9, "busbw_gbps": bus / 1e9, "bus_factor": bus_factor(op, n),
                         "correct": bool(correct), "samples": cfg.iters, "inner": inner})
            keep = getattr(report, "keep", None)
            if keep is not None:  # the parent has this row now, whatever happens to the run later
                keep(rows[-1])
            done = oi * len(sizes) + si + 1
            report(done / total, Text(STEP if correct else STEP_WRONG, op=op, size=fmt.nbytes(nbytes),
                                      us=t.median_s * 1e6, gbps=bus / 1e9))
    return {"rows": rows, "device_name": ctx.device_name, "backend": ctx.backend, "kind": ctx.kind, "nproc": n}


def datasheet_reference(kind: str, device_name: str) -> tuple[str, float] | None:
    """(label, GB/s) of the catalogue's scale-up link for this GPU (the busbw line of a chart), or None:
    CPU processes have none, and a catalogue row without interconnect figures gives none."""
    if kind != "cuda":
        return None
    hw, _ = match_catalogue(device_name, "cuda")
    ic = hw.interconnect if hw is not None else None
    link = (ic.intra or ic.pcie_link) if ic is not None else None
    if link is None:
        return None
    return f"{link.name}, {hw.name}", float(link.busbw) / 1e9


# --------------------------------------------------------------------------- the run
@dataclass
class CollectiveRun:
    """One sweep: every row, where it ran, what it means, and the interconnect it measured."""

    backend: str
    kind: str
    nproc: int
    device_name: str
    dtype: str
    rows: list[dict]
    note: str = ""
    saved: interconnect.MeasuredInterconnect | None = None
    extra: dict = field(default_factory=dict)

    @property
    def is_interconnect(self) -> bool:
        return self.backend == "nccl"

    def results(self) -> list[BenchResult]:
        """The rows as BenchResult (for the report and CSV)."""
        out = []
        for r in self.rows:
            b = BenchResult("collective", r["op"], self.kind, self.device_name, self.dtype,
                            {"bytes": r["bytes"], "nproc": self.nproc, "count": r["count"]}, flops=0.0,
                            bytes=float(r["bytes"]), supported=r.get("skipped") is None,
                            reason=r.get("skipped") or (self.note if self.backend == "gloo" else ""),
                            median_s=r["time_s"], p20_s=r["p20_s"], p80_s=r["p80_s"],
                            extra={k: r.get(k) for k in ("algbw_gbps", "busbw_gbps", "correct", "backend",
                                                         "inner", "samples")})
            out.append(b)
        return out

    def to_dict(self) -> dict:
        d = asdict(self)
        d["saved"] = None if self.saved is None else {"name": self.saved.name, "busbw": self.saved.busbw,
                                                      "latency_s": self.saved.latency_s}
        d["results"] = d.pop("rows")
        d["interconnect"] = self.is_interconnect
        return d


def run_collectives(cfg: CollectiveConfig, *, nproc: int | None = None, backend: str = "auto",
                    timeout_s: float | None = None, lim: safety.Limits | None = None,
                    progress: launch.Report | None = None, save: bool = True,
                    on_row: Callable[[dict], None] | None = None) -> CollectiveRun:
    """Measure ``cfg`` on ``nproc`` ranks; save the all-reduce figures as a measured interconnect.

    ``on_row(row)``: each (collective, size) row as soon as rank 0 has it (the report keeps them)."""
    lim = lim or safety.limits()
    p = launch.plan(nproc, backend, lim)
    sizes = cfg.sizes or default_sizes(p.kind, p.nproc, lim)
    check_sizes(sizes, p.kind, p.nproc, lim)
    cfg = replace(cfg, sizes=sizes, max_bytes=float(lim.max_bytes),
                  time_budget_s=min(cfg.time_budget_s, lim.time_limit_s))
    timeout = float(timeout_s) if timeout_s else cfg.time_budget_s + 60.0
    out = launch.run_ranks(_worker, cfg, nproc=p.nproc, backend=p.backend, timeout_s=timeout,
                           progress=progress, lim=lim, on_keep=on_row)
    if out is None:  # a torchrun rank other than 0
        return CollectiveRun(p.backend, p.kind, p.nproc, "", cfg.dtype, [], p.note)
    run = CollectiveRun(out["backend"], out["kind"], out["nproc"], out["device_name"], cfg.dtype, out["rows"],
                        p.note)
    if save:
        big = [r for r in run.rows if r.get("correct") and r["bytes"] >= SAVE_MIN_BYTES]
        if big and policy.shared_read_only():
            run.extra["not_saved"] = Text(policy.READ_ONLY_NOTE)
        elif big:
            m = interconnect.from_sweep(run.rows, backend=run.backend, device=run.kind,
                                        device_name=run.device_name, nproc=run.nproc, nodes=_nodes())
            interconnect.save_interconnect(m)
            run.saved = m
        else:
            run.extra["not_saved"] = Text(NOT_SAVED, size=fmt.nbytes(SAVE_MIN_BYTES))
    return run


NOT_SAVED = N_("not kept as a measured interconnect: no correct row of {size} or more (small messages measure "
               "latency, not bandwidth)")


def _nodes() -> int:
    """Nodes in a torchrun job (WORLD_SIZE / LOCAL_WORLD_SIZE), 1 on one machine."""
    import os
    try:
        return max(1, int(os.environ["WORLD_SIZE"]) // int(os.environ["LOCAL_WORLD_SIZE"]))
    except (KeyError, ValueError, ZeroDivisionError):
        return 1


def rows_for_json(run: CollectiveRun) -> list[dict]:
    """``results`` of ``--json``: one row per collective and size with nccl-tests' figures."""
    keys = ("op", "bytes", "nproc", "backend", "time_s", "p20_s", "p80_s", "algbw_gbps", "busbw_gbps", "correct",
            "count", "dtype", "device", "device_name", "requested_bytes", "bus_factor", "samples", "inner", "skipped")
    return [{k: r.get(k) for k in keys if k in r} for r in run.rows]


# --------------------------------------------------------------------------- the report's section
def report_section(device: str, quick: bool, out_dir: Any, progress: launch.Report | None = None,
                   deadline: safety.Deadline | None = None, keep: Any = None) -> dict:
    """Collectives between every GPU of this machine (NCCL); skipped, with a line saying why, on
    fewer than two GPUs. ``deadline`` (the report's) is the ranks' time budget: sizes not started
    by then are rows that say so; every row goes to ``keep`` as soon as it is measured."""
    from gemmlib.charts import optional_chart
    from gemmlib.charts.multigpu import collective_chart

    title = "Collectives between GPUs (NCCL)"
    gpus = launch.cuda_count()
    if gpus < 2:
        why = (f"{gpus} CUDA GPU{'' if gpus == 1 else 's'} on this machine; collectives between GPUs need at least "
               "2 (`python -m gemmlib bench collective --nproc 2` runs the gloo version between CPU processes, "
               "which is not an interconnect figure)")
        return {"title": title, "results": [], "markdown": f"*Skipped: {why}.*", "skipped": why}
    lim = safety.limits()
    top = min(64 * MiB if quick else GPU_DEFAULT_MAX, size_cap("cuda", gpus, lim))
    budget = CollectiveConfig.time_budget_s
    if deadline is not None:
        if deadline.expired():
            return {"title": title, "results": [], "markdown": f"*{deadline.reason()}.*",
                    "skipped": deadline.reason()}
        budget = min(budget, deadline.remaining())
    got: list[dict] = []

    def on_row(row: dict) -> None:
        got.append(row)
        if keep is not None:
            so_far = CollectiveRun("nccl", "cuda", gpus, row.get("device_name", ""), row.get("dtype", ""), list(got))
            keep(so_far.results(), f"{len(got)} collective row{'' if len(got) == 1 else 's'} measured so far "
                                    "(the sweep was still running).")

    run = run_collectives(CollectiveConfig(sizes=size_range(DEFAULT_MIN, top), iters=10 if quick else 20,
                                           time_budget_s=budget),
                          nproc=gpus, backend="nccl", lim=lim, progress=progress, on_row=on_row)
    lines = [f"{gpus} × {run.device_name}, NCCL, {run.dtype}; sizes {fmt.nbytes(DEFAULT_MIN)} to {fmt.nbytes(top)} "
             "(doubling), nccl-tests' conventions (busbw = algbw × 2(n−1)/n for all-reduce, × (n−1)/n for "
             "all-gather, reduce-scatter, all-to-all, × 1 for broadcast); each time is the median over samples "
             "of the slowest rank.", "",
             "| collective | smallest: time µs | 1 MiB busbw GB/s | best busbw GB/s (at size) | all correct |",
             "|---|---|---|---|---|"]
    for op in MEASURED:
        mine = [r for r in run.rows if r["op"] == op and r.get("time_s")]
        if not mine:
            continue
        small = min(mine, key=lambda r: r["bytes"])
        mib = min(mine, key=lambda r: abs(math.log2(r["bytes"]) - 20))
        best = max(mine, key=lambda r: r["busbw_gbps"])
        lines.append(f"| {op} | {small['time_s'] * 1e6:.4g} | {mib['busbw_gbps']:.4g} | {best['busbw_gbps']:.4g} "
                     f"({fmt.nbytes(best['bytes'])}) | {'yes' if all(r['correct'] for r in mine) else 'NO'} |")
    if run.saved is not None:
        lines += ["", f"Saved as **{run.saved.name}** (busbw {run.saved.busbw / 1e9:.4g} GB/s, latency "
                      f"{run.saved.latency_s * 1e6:.4g} µs) for `python -m gemmlib estimate --interconnect`."]
    chart = optional_chart(lambda: collective_chart(run.rows, title=f"Bus bandwidth, {gpus} × {run.device_name}"))
    return {"title": title, "results": run.results(), "markdown": "\n".join(lines),
            "charts": {"busbw": chart} if chart is not None else {}}


# --------------------------------------------------------------------------- the spec
COLLECTIVES_RUN = N_("collectives on {n} ranks")


@dataclass(frozen=True)
class CollectiveLaunch:
    """``config`` measured on ``nproc`` ranks (``launch`` starts them from the worker)."""

    config: CollectiveConfig
    nproc: int = 2
    backend: str = "auto"

    def __post_init__(self) -> None:
        if isinstance(self.nproc, bool) or not isinstance(self.nproc, int) or self.nproc < 2:
            raise InputError(N_("a collective needs at least 2 ranks, got {n!r}"), n=self.nproc)

    @property
    def device(self) -> str:
        return "cuda" if self.backend == "nccl" else "cpu"


def plan_collectives(cfg: CollectiveLaunch, lim: safety.Limits) -> plan.Plan:
    """The ranks are processes of their own: each gets the worker's memory allowance (rlimits are
    inherited), so the plan counts one rank's start-up and buffers; the caps see them all."""
    p = launch.plan(cfg.nproc, cfg.backend, lim)
    sizes = cfg.config.sizes or default_sizes(p.kind, p.nproc, lim)
    check_sizes(sizes, p.kind, p.nproc, lim)
    buffers = BUFFERS_PER_SIZE * max(sizes)
    c = cfg.config
    each = [(c.warmup + c.iters) * (SAMPLE_S[p.kind] + s / SAMPLE_BYTES_PER_S[p.kind]) for s in sizes]
    per_op = sum(each)
    seconds = launch.LAUNCH_S + min(len(c.ops) * per_op, c.time_budget_s)
    # Each step is one (collective, size) row, in the ranks' order (every size of one collective, then the next),
    # reported as it is done; rows past the time budget are skipped (nothing run), and the ranks' start comes
    # before the first
    step_s, spent = [], 0.0
    for _op in c.ops:
        for t in each:
            step_s.append(max(0.0, min(t, c.time_budget_s - spent)))
            spent += step_s[-1]
    return plan.Plan(bytes=float(launch.RANK_MEMORY_BYTES + buffers) if p.kind == "cpu" else float(buffers),
                     host_bytes=float(launch.RANK_MEMORY_BYTES + launch.CUDA_RANK_HOST_BYTES) if p.kind != "cpu" else 0.0,
                     seconds=seconds, rows=len(sizes) * len(c.ops), steps=len(sizes) * len(c.ops), launches=1,
                     step_s=plan.lay_steps(step_s, seconds))


# One sample: the barrier, the collective and the slowest rank's time gathered. gloo between 2 CPU processes
# on this project's 2-core machine: 5 collectives × 20 sizes (8 B … 4 MiB) × 12 samples took 4.0 s beyond a
# one-size run, about 3.3 ms a sample plus the bytes at ~2 GB/s (the all-reduce's best bus bandwidth here,
# 2.06 GB/s at 1 MiB); NCCL on one node: tens of µs and NVLink's hundreds of GB/s (the catalogue's links).
SAMPLE_S = {"cpu": 3.3e-3, "cuda": 1e-4}
SAMPLE_BYTES_PER_S = {"cpu": 2e9, "cuda": 1e11}


def _run_spec(cfg: CollectiveLaunch, progress: Any, deadline: safety.Deadline) -> CollectiveRun:
    return run_collectives(cfg.config, nproc=cfg.nproc, backend=cfg.backend, lim=safety.limits(), progress=progress)


SPEC = BenchSpec("collectives", CollectiveLaunch, plan_collectives, _run_spec, CollectiveRun,
                 label=lambda c: Text(COLLECTIVES_RUN, n=c.nproc),
                 imports=("gemmlib.measure.collectives", "gemmlib.measure.tp"), needs_device=False,
                 ranks_open_devices=True)
