"""One transformer layer split tensor-parallel across n ranks, measured against the same layer on
one rank and against the estimate (the scale-out model's ``gemmlib.llm.parallel``: each op's share
per rank and the collectives after it).

The layer is a preset's attention and MLP (scaled down where needed; no norms, no rotary):
``x1 = x + o_proj(attention(q_proj(x), k_proj(x), v_proj(x)))``, ``y = x1 + down(act(gate(x1)) · up(x1))``
(or ``down(gelu(up(x1)))`` for a plain MLP), dense scaled-dot-product attention with grouped K/V heads.
Split Megatron-style: q/k/v and gate/up are *column*-parallel (each rank holds heads/n query heads,
kv_heads/n K/V heads and ffn/n MLP features), o_proj and down_proj *row*-parallel (each rank multiplies
its slice of the inputs and holds a partial sum of the whole output), and one all-reduce
(``torch.distributed.all_reduce``) after each of the two sums them; row-parallel biases are added
once, after the sum. No transport of our own.

Every rank builds the same full weights from one seed, drawn on its own device (a GPU rank puts no
weight through host memory; rank 0's are broadcast so that every GPU holds the same ones), and
keeps its slices. Rank 0 runs the whole layer alone first (the one-rank baseline, on the same
device a rank has), while the other ranks wait for it in the next barrier. That wait is not idle:
with NCCL the barrier is a small all-reduce whose kernel spins on the waiting GPUs, and their hosts
spin in ``cudaStreamSynchronize``; with gloo the waiting processes block in their sockets. Then all
ranks run their share; rank 0 checks the tensor-parallel output against the one-rank
output within the dtype's tolerance, and both against a float64 run of the same weights. Times:
the one-rank layer, the n-rank layer (the slowest rank per sample: this project's choice, stricter
than nccl-tests, which averages over ranks by default), and the time inside the two all-reduces
(which includes waiting for the slowest rank). Scaling efficiency is
t₁ / (n · tₙ); the share of communication is the all-reduce time over the layer time.

Between CPU processes (gloo) each rank is given cores / n threads as its "device" (at least one),
and the one-rank baseline runs on one such device; the ranks still share the memory bandwidth and,
with more ranks than cores, the cores. The figures check the mechanics, the numerics and the
estimate; they are not a GPU scaling figure.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from gemmlib.charts import multigpu as mg_charts
from gemmlib.core import ceilings, interconnect
from gemmlib.core.dtypes import get_dtype
from gemmlib.core.errors import InputError
from gemmlib.core.hardware import Hardware, get_hardware
from gemmlib.core.i18n import N_, Text
from gemmlib.core.machine import match_message
from gemmlib.core.results import BenchResult, Timing
from gemmlib.llm.accounting import Workload, layer_ops, layer_other_ops, time_op
from gemmlib.llm.config import ModelConfig
from gemmlib.llm.parallel import Parallel, forward_collectives, per_gpu_op
from gemmlib.measure import harness, launch, plan, safety
from gemmlib.measure.spec import BenchSpec

TP_DTYPES = ("fp32", "bf16", "fp16", "fp64")
# Largest max|tp − one rank| / max|one rank| accepted: the row-parallel partial sums are rounded to
# the dtype before they are added, which a one-rank GEMM does not do.
TOLERANCE = {"fp64": 1e-10, "fp32": 1e-4, "fp16": 1e-2, "bf16": 5e-2}
MEASURED_OTHER_OPS = ("activation", "residual")  # the layer's non-GEMM ops besides the fused attention


MAX_ITERS, MAX_WARMUP = 10_000, 1000  # timed samples and untimed passes of the layer: at most


@dataclass(frozen=True)
class TPConfig:
    """One layer's shape (a ModelConfig, one layer), the tokens it runs, dtype and samples."""

    model: ModelConfig
    seq_len: int = 128
    batch: int = 1
    dtype: str = "fp32"
    iters: int = 10
    warmup: int = 2
    seed: int = 0
    return_output: bool = False  # rank 0 returns the input and both outputs (for checks)
    max_bytes: float = 24 * 1024**3  # per-rank cap (the server's GEMM_MAX_BYTES)

    def __post_init__(self) -> None:
        if not isinstance(self.model, ModelConfig):
            raise InputError("a tensor-parallel layer needs a ModelConfig")
        if self.model.is_moe:
            raise InputError(f"{self.model.name} is a mixture of experts; pick a dense model")
        for name, hi in (("seq_len", 1_000_000), ("batch", 100_000), ("iters", MAX_ITERS), ("warmup", MAX_WARMUP)):
            v = getattr(self, name)
            lo = 0 if name == "warmup" else 1
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise InputError(f"{name} must be a whole number in {lo}..{hi:,}, got {v!r}")
        dt = get_dtype(self.dtype).name
        if dt not in TP_DTYPES:
            raise InputError(f"the tensor-parallel layer runs in {', '.join(TP_DTYPES)}; {dt} is not one of them")
        object.__setattr__(self, "dtype", dt)

    @property
    def tokens(self) -> int:
        return self.batch * self.seq_len

    def bytes_per_rank(self, nproc: int) -> float:
        """Rank 0's peak: full weights + its slices + the float64 reference weights, activations."""
        m, el = self.model, get_dtype(self.dtype).bytes
        w = m.hidden * (2 * m.q_dim + 2 * m.kv_dim) + m.mlp_mats * m.hidden * m.ffn
        acts = self.tokens * (m.hidden * 4 + m.q_dim + 2 * m.kv_dim + 2 * m.ffn)
        scores = self.batch * m.heads * self.seq_len * self.seq_len  # a math-path attention may keep them
        return w * (el * (1 + 1 / nproc) + 8) + (acts + scores) * (el + 8)


def host_bytes_per_rank(cfg: TPConfig, nproc: int, kind: str) -> float:
    """Host memory one rank holds beyond what a fresh Python with torch has (the plan of a page's run
    counts it, so the rank processes, which inherit the worker's memory limit, fit under it).

    A CPU rank holds everything on the host (``TPConfig.bytes_per_rank``) plus its process; a GPU rank
    draws its weights on the device (:func:`layer_weights`) and holds on the host only its CUDA
    context and NCCL (``launch.CUDA_RANK_HOST_BYTES``), the input drawn there (fp32, then the dtype) and what
    rank 0 copies back (float64 outputs)."""
    if kind == "cpu":
        return float(launch.RANK_MEMORY_BYTES + cfg.bytes_per_rank(nproc))
    act = cfg.tokens * cfg.model.hidden
    return float(launch.RANK_MEMORY_BYTES + launch.CUDA_RANK_HOST_BYTES + act * (4 + get_dtype(cfg.dtype).bytes)
                 + (3 * act * 8 if cfg.return_output else 0))


def check_divisible(m: ModelConfig, ranks: int) -> None:
    """InputError unless the layer splits evenly: query heads, K/V heads and the MLP width ÷ ``ranks``
    (this layer splits its K/V heads, it does not replicate them)."""
    if isinstance(ranks, bool) or not isinstance(ranks, int) or ranks < 1:
        raise InputError(f"the number of ranks must be a whole number ≥ 1, got {ranks!r}")
    if m.is_moe:
        raise InputError(f"{m.name} is a mixture of experts; this tensor-parallel layer is dense; pick a dense model")
    for what, v in ((N_("query heads"), m.heads), (N_("K/V heads"), m.kv_heads), (N_("the MLP width"), m.ffn)):
        if v % ranks:
            raise safety.Refused(N_("{what} ({n}) do not split evenly across {ranks} ranks; choose a rank count that "
                                    "divides {n}"), what=what, n=v, ranks=ranks)


def allreduce_bytes(m: ModelConfig, tokens: int, dtype: str) -> float:
    """nccl-tests' size of each of the layer's two all-reduces: tokens × hidden × activation bytes."""
    return float(tokens * m.hidden * get_dtype(dtype).bytes)


def model_for(preset: str | None = None, scale: int = 16, **shape: int) -> ModelConfig:
    """A one-layer model: a preset scaled down by ``scale`` (hidden, head size and MLP ÷ scale, head
    counts kept; the profiler's rule), or the shape given (hidden, heads, kv_heads, ffn, mlp)."""
    from gemmlib.llm.presets import from_name
    from gemmlib.measure.profiler import preset_config
    if preset is not None:
        if from_name(preset).is_moe:
            raise InputError(f"{preset} is a mixture of experts; this tensor-parallel layer is dense (experts split "
                             "by expert parallelism instead); pick a dense preset")
        return preset_config(preset, scale, layers=1).model
    if not shape:
        raise InputError("say which layer: a preset (e.g. llama-3-8b) or hidden, heads and ffn")
    from gemmlib.measure.profiler import BlockConfig
    mlp = shape.pop("mlp", "gated")
    missing = [k for k in ("hidden", "heads", "ffn") if not shape.get(k)]
    if missing:
        raise InputError(f"a custom layer needs {', '.join(missing)}")
    m = BlockConfig.llama(hidden=int(shape["hidden"]), heads=int(shape["heads"]),
                          kv_heads=int(shape.get("kv_heads") or 0), intermediate=int(shape["ffn"])).model
    return m.replace(mlp=mlp, name=f"custom layer {m.hidden}/{m.heads}/{m.kv_heads}/{m.ffn}")


# --------------------------------------------------------------------------- the layer in torch
def _torch_dtype(name: str) -> Any:
    import torch
    return {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16, "fp64": torch.float64}[name]


def layer_weights(m: ModelConfig, dtype: str, device: str, seed: int = 0) -> dict[str, Any]:
    """The whole layer's weights (``nn.Linear`` layout: [out, in]), random normal / √in from ``seed``,
    rounded to ``dtype``; biases (0.02 · normal) where the model has them.

    Drawn on ``device`` itself (its own generator): a GPU rank's full llama-3-70b layer is 3.4 GB of
    fp32 draws that never touch host memory (``host_bytes_per_rank`` counts none). The "meta" device
    (shapes only, no data) takes no generator."""
    import torch
    gen = None if torch.device(device).type == "meta" else torch.Generator(device=device).manual_seed(seed)
    dt = _torch_dtype(dtype)

    def weight(out_f: int, in_f: int) -> Any:
        return torch.randn(out_f, in_f, generator=gen, device=device).div_(math.sqrt(in_f)).to(dtype=dt)

    def bias(n: int) -> Any:
        return torch.randn(n, generator=gen, device=device).mul_(0.02).to(dtype=dt)

    h, q, kv, f = m.hidden, m.q_dim, m.kv_dim, m.ffn
    w: dict[str, Any] = {"q": weight(q, h), "k": weight(kv, h), "v": weight(kv, h), "o": weight(h, q)}
    if m.qkv_bias:
        w.update(bq=bias(q), bk=bias(kv), bv=bias(kv))
    if m.o_bias:
        w["bo"] = bias(h)
    if m.mlp == "gated":
        w["gate"] = weight(f, h)
    w["up"], w["down"] = weight(f, h), weight(h, f)
    if m.mlp_bias:
        if m.mlp == "gated":
            w["bgate"] = bias(f)
        w.update(bup=bias(f), bdown=bias(h))
    return w


COLUMN = ("q", "k", "v", "gate", "up", "bq", "bk", "bv", "bgate", "bup")  # split along the output features
ROW = ("o", "down")  # split along the input features; their biases ("bo", "bdown") stay whole


def shard_weights(w: dict[str, Any], rank: int, n: int) -> dict[str, Any]:
    """Rank ``rank``'s slices of the layer: rows of the column-parallel weights, columns of the
    row-parallel ones (heads stay whole: q's rows are heads × head_dim, in head order)."""
    out = {}
    for name, t in w.items():
        if name in COLUMN:
            size = t.shape[0] // n
            out[name] = t[rank * size:(rank + 1) * size].contiguous()
        elif name in ROW:
            size = t.shape[1] // n
            out[name] = t[:, rank * size:(rank + 1) * size].contiguous()
        else:
            out[name] = t
    return out


def layer_forward(x: Any, w: dict[str, Any], m: ModelConfig, ranks: int = 1, allreduce: Any = None) -> Any:
    """The layer on ``x`` [batch, seq, hidden] with weights ``w`` (whole, or one rank's slices of
    ``ranks``); ``allreduce(t)`` sums a row-parallel partial output in place across the ranks."""
    import torch.nn.functional as F
    b, s, _ = x.shape
    hd, nh, nkv = m.head_dim, m.heads // ranks, m.kv_heads // ranks
    q = F.linear(x, w["q"], w.get("bq")).view(b, s, nh, hd).transpose(1, 2)
    k = F.linear(x, w["k"], w.get("bk")).view(b, s, nkv, hd).transpose(1, 2)
    v = F.linear(x, w["v"], w.get("bv")).view(b, s, nkv, hd).transpose(1, 2)
    if nkv != nh:
        if "enable_gqa" in (F.scaled_dot_product_attention.__doc__ or ""):  # torch ≥ 2.5: no K/V copies
            o = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        else:  # torch < 2.5: copy each K/V head to its group of query heads
            o = F.scaled_dot_product_attention(q, k.repeat_interleave(nh // nkv, 1), v.repeat_interleave(nh // nkv, 1))
    else:
        o = F.scaled_dot_product_attention(q, k, v)
    a = F.linear(o.transpose(1, 2).reshape(b, s, nh * hd), w["o"])
    if allreduce is not None:
        allreduce(a)
    if "bo" in w:
        a = a + w["bo"]
    x1 = x + a
    if m.mlp == "gated":
        act = F.silu(F.linear(x1, w["gate"], w.get("bgate"))) * F.linear(x1, w["up"], w.get("bup"))
    else:
        act = F.gelu(F.linear(x1, w["up"], w.get("bup")), approximate="tanh")
    d = F.linear(act, w["down"])
    if allreduce is not None:
        allreduce(d)
    if "bdown" in w:
        d = d + w["bdown"]
    return x1 + d


def make_input(cfg: TPConfig, device: str) -> Any:
    import torch
    g = torch.Generator(device="cpu").manual_seed(cfg.seed + 1)
    x = torch.randn(cfg.batch, cfg.seq_len, cfg.model.hidden, generator=g)
    return x.to(device=device, dtype=_torch_dtype(cfg.dtype))


# --------------------------------------------------------------------------- one rank's work
def _worker(ctx: launch.RankContext, cfg: TPConfig, report: launch.Report) -> dict:
    import torch
    import torch.distributed as dist

    m, n, rank = cfg.model, ctx.world, ctx.rank
    check_divisible(m, n)
    if ctx.kind == "cuda":
        safety.check_memory(cfg.bytes_per_rank(n), "cuda", replace(safety.DEFAULT_LIMITS, max_bytes=int(cfg.max_bytes)))
    report(0.02, Text(N_("building {model}: hidden {hidden}, {heads} heads ({kv_heads} K/V), MLP {ffn}"), model=m.name,
                       hidden=m.hidden, heads=m.heads, kv_heads=m.kv_heads, ffn=m.ffn))
    with safety.oom_guard(ctx.kind), torch.inference_mode():
        full = layer_weights(m, cfg.dtype, ctx.device, cfg.seed)
        if ctx.kind == "cuda":  # one GPU's random numbers on every GPU (their generators need not agree)
            for t in full.values():
                dist.broadcast(t, 0)
        mine = shard_weights(full, rank, n)
        x = make_input(cfg, ctx.device)
        one: list[float] = []
        ref = ref64 = None
        ctx.barrier()  # every rank has built its weights: nothing else runs during the baseline
        if rank == 0:  # the one-rank baseline, alone: the other ranks wait at the barrier below
            report(0.1, Text(N_("one rank: the whole layer")))
            ref = layer_forward(x, full, m)
            for _ in range(cfg.warmup):
                layer_forward(x, full, m)
            one = launch.time_local(ctx.kind, lambda: layer_forward(x, full, m), samples=cfg.iters)
            w64 = {k: v.double() for k, v in full.items()}
            ref64 = layer_forward(x.double(), w64, m)
            del w64
        full = None  # only the slices stay (rank 0 keeps its outputs)
        ctx.barrier()
        report(0.5, Text(N_("{n} ranks: column/row-parallel with two all-reduces"), n=n))
        comm: list[Any] = []

        def allreduce(t: Any) -> None:
            if ctx.kind == "cuda":
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                dist.all_reduce(t)
                e.record()
                comm.append((s, e))
            else:
                t0 = time.perf_counter()
                dist.all_reduce(t)
                comm.append(time.perf_counter() - t0)

        out = layer_forward(x, mine, m, n, allreduce)
        for _ in range(cfg.warmup):
            layer_forward(x, mine, m, n, allreduce)
        ctx.sync()
        comm.clear()
        tp = launch.time_samples(ctx, lambda: layer_forward(x, mine, m, n, allreduce), samples=cfg.iters)
        ctx.sync()
        secs = [s.elapsed_time(e) / 1e3 for s, e in comm] if ctx.kind == "cuda" else list(comm)
        per_sample = [secs[2 * i] + secs[2 * i + 1] for i in range(cfg.iters)]
        comm_max = ctx.max_over_ranks(per_sample)
    if rank != 0:
        return {}
    report(0.95, Text(N_("checking the tensor-parallel output")))
    diff = harness.rel_error(out, ref)
    err_tp, err_one = harness.rel_error(out, ref64), harness.rel_error(ref, ref64)
    t1 = Timing.from_times(one, method="one rank alone")
    tn = Timing.from_times(tp, method="barrier + the slowest rank per sample")
    tc = Timing.from_times(comm_max, method="inside the two all-reduces, the slowest rank per sample")
    res = {
        "model": m.summary(), "model_name": m.name, "hidden": m.hidden, "heads": m.heads, "kv_heads": m.kv_heads,
        "head_dim": m.head_dim, "ffn": m.ffn, "mlp": m.mlp, "qkv_bias": m.qkv_bias, "o_bias": m.o_bias,
        "mlp_bias": m.mlp_bias, "seq_len": cfg.seq_len, "batch": cfg.batch,
        "tokens": cfg.tokens, "dtype": cfg.dtype, "nproc": n, "backend": ctx.backend, "device": ctx.kind,
        "device_name": ctx.device_name, "threads_per_rank": ctx.threads,
        "one_rank": asdict(t1), "tp": asdict(tn), "comm": asdict(tc),
        "one_rank_s": t1.median_s, "tp_s": tn.median_s, "comm_s": tc.median_s,
        "comm_share": tc.median_s / tn.median_s if tn.median_s else None,
        "speedup": t1.median_s / tn.median_s if tn.median_s else None,
        "scaling_efficiency": t1.median_s / (n * tn.median_s) if tn.median_s else None,
        "allreduce_bytes": allreduce_bytes(m, cfg.tokens, cfg.dtype),
        "rel_diff": diff, "tolerance": TOLERANCE[cfg.dtype], "correct": bool(diff <= TOLERANCE[cfg.dtype]),
        "rel_error_tp_fp64": err_tp, "rel_error_one_rank_fp64": err_one,
    }
    if cfg.return_output:
        res["output"] = {"x": x.double().cpu().numpy(), "tp": out.double().cpu().numpy(),
                         "one_rank": ref.double().cpu().numpy()}
    return res


# --------------------------------------------------------------------------- the run
@dataclass
class TPRun:
    """A measured tensor-parallel layer with the estimate beside it."""

    measured: dict
    estimate: dict | None
    note: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def nproc(self) -> int:
        return int(self.measured["nproc"])

    def rows(self) -> list[dict]:
        """One rank and n ranks, measured and estimated, for a table and a chart."""
        m, e = self.measured, self.estimate or {}
        one_e, n_e = e.get("one_rank") or {}, e.get("tp") or {}
        return [
            {"ranks": 1, "what": mg_charts.WHAT_ONE_RANK, "measured_s": m["one_rank_s"], "estimated_s": one_e.get("time_s"),
             "comm_s": 0.0, "estimated_comm_s": 0.0},
            {"ranks": m["nproc"], "what": mg_charts.WHAT_TP.format(n=m["nproc"]), "measured_s": m["tp_s"],
             "estimated_s": n_e.get("time_s"), "comm_s": m["comm_s"], "estimated_comm_s": n_e.get("comm_s")},
        ]

    def results(self) -> list[BenchResult]:
        """BenchResult rows (for the report): the one-rank and the n-rank layer."""
        m = self.measured
        flops = layer_flops(_model_of(m), m["seq_len"], m["batch"])
        out = []
        for name, key, ranks in (("one rank", "one_rank", 1), (f"tp{m['nproc']}", "tp", m["nproc"])):
            t = m[key]
            r = BenchResult("tp", name, m["device"], m["device_name"], m["dtype"],
                            {"tokens": m["tokens"], "hidden": m["hidden"], "ffn": m["ffn"], "ranks": ranks},
                            flops=float(flops), bytes=0.0, reason=self.note,
                            rel_error=m["rel_error_tp_fp64"] if ranks > 1 else m["rel_error_one_rank_fp64"],
                            extra={"backend": m["backend"], "comm_s": m["comm_s"] if ranks > 1 else 0.0})
            r.set_timing(Timing(t["median_s"], t["p20_s"], t["p80_s"], t["reps"], t["method"]))
            out.append(r)
        return out

    def to_dict(self) -> dict:
        d = {k: v for k, v in self.measured.items() if k != "output"}
        return {**d, "estimate": self.estimate, "note": self.note, "rows": self.rows()}


def _model_of(measured: dict) -> ModelConfig:
    """The layer a measurement ran (from its result fields)."""
    return ModelConfig(layers=1, hidden=measured["hidden"], heads=measured["heads"], kv_heads=measured["kv_heads"],
                       ffn=measured["ffn"], head_dim=measured["head_dim"], vocab=1, mlp=measured["mlp"],
                       qkv_bias=measured.get("qkv_bias", False), o_bias=measured.get("o_bias", False),
                       mlp_bias=measured.get("mlp_bias", False), name=measured["model_name"])


def layer_flops(m: ModelConfig, seq_len: int, batch: int) -> int:
    """GEMM FLOPs of the layer's forward pass (the accounting's count: dense attention)."""
    from gemmlib.llm.accounting import layer_ops
    return sum(o.flops for o in layer_ops(m, seq_len, batch=batch))


def rank_hardware(kind: str, device_name: str, nproc: int) -> tuple[Hardware, str]:
    """(one rank's device, where the figures come from): the baseline and each of n ranks run on it.

    Measured ceilings of this device when saved (``devices --measure``), else the catalogue row. A
    GPU with neither is an InputError saying so (as the profiler's ``hardware_for``): never another
    GPU's figures. On a CPU a rank has cores / n threads: it gets 1/n of the peaks and of the memory
    bandwidth.
    """
    hw = ceilings.find_hardware(kind, device_name)
    src = Text(SRC_MEASURED) if hw is not None else Text(SRC_DATASHEET)
    if hw is None and kind == "cuda":
        hw, why = match_message(device_name, "cuda")
        if hw is None:
            raise InputError(why.template, **why.params) if why is not None else \
                InputError(N_("{name!r} is not in the catalogue; measure its ceilings to get figures"), name=device_name)
    elif hw is None:
        hw, src = get_hardware("cpu"), Text(SRC_CPU_PLACEHOLDER)
    if kind != "cpu" or nproc == 1:
        return hw, src
    share = hw.with_overrides(peaks={d: p / nproc for d, p in hw.peaks}, bandwidth=hw.bandwidth / nproc,
                              name=Text(HW_SHARE, name=hw.name if isinstance(hw.name, Text) else Text(hw.name), n=nproc))
    return share, Text(SRC_CPU_SHARE, source=src, n=nproc)


SRC_MEASURED, SRC_DATASHEET = N_("measured ceilings"), N_("datasheet")
SRC_CPU_PLACEHOLDER = N_("the CPU placeholder row (measure this CPU's ceilings with `python -m gemmlib devices "
                         "--measure`)")
SRC_CPU_SHARE = N_("{source}; a CPU rank has 1/{n} of the cores, so 1/{n} of it")



def _layer_side(model: ModelConfig, ops: list, wl: Workload, hw: Hardware, dtype: str, n: int, comm: bool,
                node: int) -> dict:
    """One rank's share of ``ops`` on ``n`` ranks (``parallel.per_gpu_op``), timed on ``hw``, and the
    collectives after them (``parallel.forward_collectives``) when ``comm``; ``node``: ranks per node
    (0: the catalogue's)."""
    par = Parallel(tp=n, gpus_per_node=node)
    mine = [time_op(per_gpu_op(o, model, par), hw, dtype) for o in ops]
    colls = forward_collectives(ops, model, wl, par, hw) if comm and n > 1 else []
    compute = sum(o.time_s for o in mine)
    comm_s = sum(c.time_s for c in colls) if (comm or n == 1) else None
    return {"ranks": n, "compute_s": compute, "comm_s": comm_s, "time_s": compute + (comm_s or 0.0),
            "comm_share": None if comm_s is None else comm_s / (compute + comm_s) if compute + comm_s else 0.0,
            "ops": [o.to_dict() for o in mine], "collectives": [c.to_dict() for c in colls]}


def estimate_layer(model: ModelConfig, *, seq_len: int, batch: int, dtype: str, kind: str, device_name: str,
                   nproc: int, backend: str, interconnect_name: str | None = None) -> dict:
    """The estimate of the measured layer, from the scale-out model: the whole layer on one rank, and
    one rank's share of ``nproc`` ranks with its two all-reduces.

    The link: ``interconnect_name`` (a measured one), else the one measured for this backend, device
    and rank count, else the catalogue's link for the GPU (its datasheet line rate); between CPU
    processes with nothing measured, no communication is estimated. No torch: the page shows it
    before a run.
    """
    check_divisible(model, nproc)
    try:
        rank_hw, src = rank_hardware(kind, device_name, nproc)
    except InputError as e:  # an unknown GPU without measured ceilings: no estimate, and why
        return {"error": str(e)}
    name = interconnect_name
    if name is None:
        saved = interconnect.find(backend, device_name, nproc)
        name = saved.name if saved else None
    hw = interconnect.hardware_with(rank_hw, name, nproc)[0] if name else rank_hw
    comm = hw.interconnect is not None
    wl = Workload(batch=batch, seq_len=seq_len, weight_dtype=dtype, act_dtype=dtype, kv_dtype=dtype,
                  attention="fused")
    ops = layer_ops(model, seq_len, batch=batch, dtype=dtype)
    ops += [o for o in layer_other_ops(model, seq_len, batch=batch, dtype=dtype, attention="fused")
            if o.name in MEASURED_OTHER_OPS]
    node = nproc if kind == "cpu" else 0  # CPU ranks are processes of this one machine
    try:
        one = _layer_side(model, ops, wl, hw, dtype, 1, comm, node)
        many = _layer_side(model, ops, wl, hw, dtype, nproc, comm, node)
        link = Parallel(tp=nproc, gpus_per_node=node).link("tp", hw) if comm else None
    except InputError as e:
        return {"error": Text(e.template, **e.params)}
    out = {"hardware": rank_hw.name, "hardware_source": src, "nproc": nproc,
           "link": None if link is None else link.name, "link_source": None if link is None else link.source,
           "link_measured": bool(name), "one_rank": one, "tp": many,
           "speedup": one["time_s"] / many["time_s"] if many["time_s"] else None}
    if link is None:
        out["note"] = Text(NOTE_NO_LINK, nproc=nproc)
    elif not name:
        out["note"] = Text(NOTE_CATALOGUE_LINK, source=Text(link.source), nproc=nproc)  # a source: a catalogue text
    return out


NOTE_NO_LINK = N_("no interconnect measured for this backend and rank count: the estimate has no communication "
                  "(run `python -m gemmlib bench collective --nproc {nproc}` first)")
NOTE_CATALOGUE_LINK = N_("the catalogue's link ({source}): measure this machine's with `python -m gemmlib bench "
                         "collective --nproc {nproc}`")

HW_SHARE = N_("{name} ÷ {n} (one rank's cores)")


def estimate_for(measured: dict, interconnect_name: str | None = None) -> dict:
    """:func:`estimate_layer` for the layer, device and rank count a measurement ran."""
    return estimate_layer(_model_of(measured), seq_len=measured["seq_len"], batch=measured["batch"],
                          dtype=measured["dtype"], kind=measured["device"], device_name=measured["device_name"],
                          nproc=measured["nproc"], backend=measured["backend"], interconnect_name=interconnect_name)


def valid_ranks(model: ModelConfig, most: int) -> list[int]:
    """Rank counts from 2 to ``most`` that split the layer's heads, K/V heads and MLP evenly."""
    return [n for n in range(2, max(2, int(most)) + 1)
            if model.heads % n == 0 and model.kv_heads % n == 0 and model.ffn % n == 0]


def check(cfg: TPConfig, p: launch.Plan, lim: safety.Limits, interconnect_name: str | None = None) -> None:
    """Refuse what :func:`run_tp` would refuse, before anything starts (``bench tp`` calls it before it queues
    and says it starts its ranks): heads and MLP that do not split over the ranks, a rank's or the machine's memory
    cap, the CPU FLOP cap, an unknown interconnect."""
    check_divisible(cfg.model, p.nproc)
    need = cfg.bytes_per_rank(p.nproc)
    if need > lim.max_bytes:
        safety.check_memory(need, "cpu", lim)  # the cap's message
    if p.kind == "cpu":
        safety.check_memory(need * p.nproc, "cpu", lim)
        lim.check_cpu_flops(layer_flops(cfg.model, cfg.seq_len, cfg.batch), N_("one layer"))
    if interconnect_name:
        interconnect.get_link(interconnect_name)  # an unknown name is bad input before anything starts


def run_tp(cfg: TPConfig, *, nproc: int | None = None, backend: str = "auto", timeout_s: float | None = None,
           lim: safety.Limits | None = None, progress: launch.Report | None = None,
           interconnect_name: str | None = None) -> TPRun:
    """Measure ``cfg`` on ``nproc`` ranks and on one, and put the estimate beside it."""
    lim = lim or safety.limits()
    p = launch.plan(nproc, backend, lim)
    check(cfg, p, lim, interconnect_name)
    cfg = replace(cfg, max_bytes=float(lim.max_bytes))
    timeout = float(timeout_s) if timeout_s else lim.time_limit_s + 60.0
    measured = launch.run_ranks(_worker, cfg, nproc=p.nproc, backend=p.backend, timeout_s=timeout,
                                progress=progress, lim=lim)
    if not measured:  # a torchrun rank other than 0
        return TPRun({}, None, p.note)
    return TPRun(measured, estimate_for(measured, interconnect_name), p.note)


def cpu_default(preset: str = "llama-3-8b") -> dict:
    """A layer a 2-core CPU runs in well under a second: the preset ÷ 16, 128 tokens, fp32."""
    return {"preset": preset, "scale": 16, "seq_len": 128, "batch": 1, "dtype": "fp32"}


def gpu_default(preset: str = "llama-3-70b") -> dict:
    """A full-size layer: the preset as published, 2048 tokens, bf16."""
    return {"preset": preset, "scale": 1, "seq_len": 2048, "batch": 1, "dtype": "bf16"}



# --------------------------------------------------------------------------- the report's section
def report_ranks(model: ModelConfig, gpus: int) -> list[int]:
    """The rank counts the report measures: 2, 4, 8, 16 up to every GPU, where the layer splits evenly."""
    return [n for n in (2, 4, 8, 16) if n <= gpus and model.heads % n == 0 and model.kv_heads % n == 0
            and model.ffn % n == 0]


def report_section(device: str, quick: bool, out_dir: Any, progress: launch.Report | None = None,
                   deadline: safety.Deadline | None = None, keep: Any = None) -> dict:
    """The tensor-parallel layer over 2, 4, … up to every GPU (NCCL); skipped on fewer than two.

    One launch per rank count, its rows handed to ``keep`` as soon as it is done (a report killed
    in a later launch keeps them); ``deadline`` (the report's) is checked before every launch and
    bounds its timeout."""
    from gemmlib.charts import optional_chart
    from gemmlib.charts.multigpu import tp_chart

    title = "Tensor-parallel layer across GPUs"
    gpus = launch.cuda_count()
    if gpus < 2:
        why = (f"{gpus} CUDA GPU{'' if gpus == 1 else 's'} on this machine; tensor parallelism across GPUs needs at "
               "least 2 (`python -m gemmlib bench tp --nproc 2` runs the gloo version between CPU processes)")
        return {"title": title, "results": [], "markdown": f"*Skipped: {why}.*", "skipped": why}
    base = gpu_default()
    model = model_for(base["preset"], base["scale"])
    cfg = TPConfig(model=model, seq_len=1024 if quick else base["seq_len"], dtype=base["dtype"],
                   iters=5 if quick else 10)
    ranks = report_ranks(model, gpus)
    lines = [f"{model.name}: one layer's attention and MLP (hidden {model.hidden}, {model.heads} heads / "
             f"{model.kv_heads} K/V, MLP {model.ffn}), {cfg.tokens} tokens, {cfg.dtype}; column/row-parallel "
             "with two all-reduces; estimate = the roofline of each rank's share (measured ceilings if saved, "
             "else the datasheet) + two all-reduces on the measured interconnect (if saved).", "",
             "| ranks | one rank ms | n ranks ms | speed-up | efficiency | comm share | estimate ms | matches |",
             "|---|---|---|---|---|---|---|---|"]
    results: list[BenchResult] = []
    charts: dict[str, Any] = {}
    lim = safety.limits()
    for i, n in enumerate(ranks):
        if deadline is not None and deadline.expired():
            lines.append(f"| {n} | {deadline.reason()} | | | | | | |")
            continue
        def prog(frac: float, text: str, _i: int = i, _n: int = n) -> None:
            if progress:
                progress((_i + frac) / len(ranks), Text(N_("{n} ranks: {text}"), n=_n, text=text))
        timeout = lim.time_limit_s + 60.0
        if deadline is not None:
            timeout = max(30.0, min(timeout, deadline.remaining() + 30.0))
        run = run_tp(cfg, nproc=n, backend="nccl", progress=prog, timeout_s=timeout)
        m, est = run.measured, (run.estimate or {}).get("tp") or {}
        e = f"{est['time_s'] * 1e3:.4g}" if est.get("time_s") else "—"
        lines.append(f"| {n} | {m['one_rank_s'] * 1e3:.4g} | {m['tp_s'] * 1e3:.4g} | {m['speedup']:.3g}× | "
                     f"{m['scaling_efficiency']:.0%} | {m['comm_share']:.0%} | {e} | "
                     f"{'yes' if m['correct'] else 'NO'} ({m['rel_diff']:.1e}) |")
        results += run.results()
        if keep is not None:
            keep(results, "\n".join(lines))
        chart = optional_chart(lambda r=run: tp_chart(r.rows()))
        if chart is not None:
            charts[f"tp{n}"] = chart
    return {"title": title, "results": results, "markdown": "\n".join(lines), "charts": charts}


# --------------------------------------------------------------------------- the spec
TP_RUN = N_("tensor parallelism on {n} ranks")


@dataclass(frozen=True)
class TPLaunch:
    """``config``'s layer on each of ``ranks`` rank counts (one launch of ranks each), beside one rank."""

    config: TPConfig
    ranks: tuple[int, ...] = (2,)
    backend: str = "auto"
    interconnect_name: str | None = None

    def __post_init__(self) -> None:
        ranks = tuple(sorted(int(n) for n in self.ranks))
        if not ranks:
            raise InputError(N_("choose at least one rank count"))
        for n in ranks:
            check_divisible(self.config.model, n)
        object.__setattr__(self, "ranks", ranks)

    @property
    def device(self) -> str:
        return "cuda" if self.backend == "nccl" else "cpu"


def plan_tp(cfg: TPLaunch, lim: safety.Limits) -> plan.Plan:
    """Each launch's ranks against the caps (CPU ranks share this machine's memory); one rank's
    start-up and buffers (every rank gets the worker's allowance: rlimits are inherited)."""
    worst = 0.0
    for n in cfg.ranks:
        p = launch.plan(n, cfg.backend, lim)
        need = cfg.config.bytes_per_rank(p.nproc)
        safety.check_memory(need * (p.nproc if p.kind == "cpu" else 1), p.kind, lim)
        if p.kind == "cpu":
            lim.check_cpu_flops(layer_flops(cfg.config.model, cfg.config.seq_len, cfg.config.batch), N_("one layer"))
        worst = max(worst, need)
    if cfg.interconnect_name:
        interconnect.get_link(cfg.interconnect_name)
    kind = launch.plan(cfg.ranks[0], cfg.backend, lim).kind
    host = max(host_bytes_per_rank(cfg.config, n, kind) for n in cfg.ranks) if kind != "cpu" else 0.0
    # each rank count is one launch; its layer's passes take a small part of a CPU launch's start here (2.7–3.0 s
    # for llama-3-8b ÷ 16 at 128 tokens on 2 gloo ranks, one launch), so only the start is counted. No steps (so no
    # ``step_s``): the run reports each launch's stages as shares of its 1/len(ranks) (_run_spec), not numbered steps,
    # and as every launch is planned alike those equal shares are the plan's own; the run box reads them as the share.
    return plan.Plan(bytes=float(launch.RANK_MEMORY_BYTES + worst), rows=len(cfg.ranks), launches=len(cfg.ranks),
                     host_bytes=host, seconds=len(cfg.ranks) * launch.LAUNCH_S)


def _run_spec(cfg: TPLaunch, progress: Any, deadline: safety.Deadline) -> list[TPRun]:
    lim = safety.limits()
    out = []
    for i, n in enumerate(cfg.ranks):
        def step(frac: float, text: str, _i: int = i, _n: int = n) -> None:
            progress((_i + frac) / len(cfg.ranks), Text(N_("{n} ranks: {text}"), n=_n, text=text))
        out.append(run_tp(cfg.config, nproc=n, backend=cfg.backend, lim=lim, progress=step,
                          interconnect_name=cfg.interconnect_name))
    return out


SPEC = BenchSpec("tp", TPLaunch, plan_tp, _run_spec, list[TPRun], label=lambda c: Text(TP_RUN, n=max(c.ranks)),
                 imports=("gemmlib.measure.collectives", "gemmlib.measure.tp"), needs_device=False,
                 ranks_open_devices=True)
