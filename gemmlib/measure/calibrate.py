"""Calibrate the estimate on this device, then check it against a real forward pass.

``run_calibration`` (``python -m gemmlib calibrate``) times, for a chosen model (a preset, scaled
to fit), every op the accounting counts, alone, through the harness (warm-up, synchronize,
median; rotated inputs on a CPU, the L2 flushed by do_bench on a GPU):

* each distinct weight GEMM (its N, K; ``F.linear`` on an ``nn.Linear``-shaped weight, as the
  block calls it) at M = 1, 2, 4, … up to the prefill size, per dtype;
* the two attention products (``torch.matmul`` over batch × heads) at prefill shapes and at
  decode shapes (one query, a growing number of keys);
* each non-GEMM op of a layer (the block's own functions: norm, rotary, K/V repeat, softmax,
  activation, residual add, embedding) at the prefill and at a decode step's shape.

The points are saved beside the measured ceilings (``gemmlib.core.calibration``), and
``gemmlib.llm.calibrated`` turns them into "NAME (calibrated)": each op at the efficiency measured
for its shape.

``run_validation`` (``python -m gemmlib validate``) then builds the same model with random weights
(``gemmlib.measure.profiler.build_model``: embedding, blocks, final norm, LM head, a KV cache) and
times, with the harness, its prefill and its decode steps; it prints the measured time beside the
datasheet estimate and the calibrated one, with the error of each, in total and per op group
(weight GEMMs, attention products, the rest). The split of the measured time among the groups
comes from one ``torch.profiler`` run of each phase (self times, as the Profiler page uses), scaled
to the harness's total.

**Like with like.** The calibration times each op alone; a real forward pass also launches what
the accounting does not count (cache writes, transposes, slices, reshapes: about a quarter of a
decode step's calls) and, eagerly at batch 1, waits on the host's launches. Each phase says which
way it was compared (``method``):

* on a GPU the decode is timed as a CUDA graph of its steps (``harness.time_callable(cuda_graph=True)``:
  no host launch cost, as in the calibration's do_bench times; the eager time is kept beside it as
  ``eager_s``), the prefill with do_bench like the calibration;
* on a CPU (and on a GPU whose capture fails) the calibrated estimate adds, for every op call the
  step makes beyond those its calibrated ops make (counted with a ``TorchDispatchMode``; the
  calibrated ops' own calls counted by running their code on the "meta" device), the measured cost
  of launching one op from Python (a one-element add for a kernel, a slice for a view): ``launch_s``.
  On an eager GPU the host's launches overlap the device, so the step takes the longer of the two.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from gemmlib.core import calibration as calstore
from gemmlib.core.calibration import Calibration, GemmPoint, OtherPoint
from gemmlib.core.dtypes import dtype_bytes, get_dtype
from gemmlib.core.errors import InputError
from gemmlib.core.hardware import Hardware
from gemmlib.core.i18n import N_, Text
from gemmlib.llm import accounting
from gemmlib.llm.accounting import ATTENTION_PRODUCTS, Estimate, Workload, estimate
from gemmlib.llm.calibrated import calibrated_estimate, other_calls
from gemmlib.llm.config import ModelConfig
from gemmlib.measure import harness, plan, safety
from gemmlib.measure import profiler as pf
from gemmlib.measure.spec import BenchSpec

Progress = Callable[[float, str], None] | None
GROUPS = ("gemm", "attention", "other")  # weight GEMMs, the attention products, everything else
GROUP_LABELS = {"gemm": "weight GEMMs", "attention": "attention products", "other": "non-GEMM ops"}


# --------------------------------------------------------------------------- the model
@dataclass(frozen=True)
class Run:
    """What one calibration / validation runs: a model (a preset scaled to fit) and a workload."""

    config: pf.BlockConfig  # model, dtype and attention; its seq_len is the prompt length
    batch: int = 1
    new_tokens: int = 8
    lm_head: str = "last"  # generation computes the logits of the last position only

    @property
    def model(self) -> ModelConfig:
        return self.config.model

    @property
    def seq_len(self) -> int:
        return self.config.seq_len

    @property
    def dtype(self) -> str:
        return self.config.dtype

    def workload(self, dtype: str | None = None) -> Workload:
        dt = dtype or self.dtype
        return Workload(batch=self.batch, seq_len=self.seq_len, new_tokens=self.new_tokens,
                        causal=self.config.causal_products, lm_head=self.lm_head, weight_dtype=dt, act_dtype=dt,
                        kv_dtype=dt, attention=self.config.accounting_attention)

    def describe(self) -> str:
        m = self.model
        return (f"{m.name}: {m.layers} layer{'' if m.layers == 1 else 's'}, hidden {m.hidden}, {m.heads}/{m.kv_heads} heads of {m.head_dim}, "
                f"MLP {m.ffn} {m.mlp}, vocab {m.vocab}; batch {self.batch}, prompt {self.seq_len}, "
                f"{self.new_tokens} decode steps, {self.dtype}, {self.config.attention} attention")


def defaults(device: str) -> dict[str, Any]:
    """The run a device gets without flags: a whole llama-3-8b layer stack on a GPU, ÷ 16 on a CPU."""
    if device == "cuda":
        return {"preset": "llama-3-8b", "scale": 1, "layers": 4, "batch": 1, "seq_len": 2048, "new_tokens": 32,
                "dtype": "bf16"}
    return {"preset": "llama-3-8b", "scale": 16, "layers": 2, "batch": 1, "seq_len": 128, "new_tokens": 8,
            "dtype": "fp32"}


def make_run(device: str, preset: str | None = None, scale: int | None = None, layers: int | None = None,
             batch: int | None = None, seq_len: int | None = None, new_tokens: int | None = None,
             dtype: str | None = None, attention: str = "eager", max_dim: int | None = None) -> Run:
    """A :class:`Run` from a preset (scaled: hidden, heads' size, MLP and vocabulary ÷ ``scale``).

    A vocabulary above the dimension cap (``max_dim``, else the caps' ``GEMM_MAX_DIM``: 16,384 by
    default) is divided by the smallest whole number that fits it, and the model's name says so: a
    whole llama-3-8b (vocabulary 128,256) then runs its LM head at N = 16,032 and every other GEMM at
    full size, instead of being refused. The LM head's time grows with N; at 16k columns it is already
    past the falloff of small N, so its measured efficiency carries over. Raise ``GEMM_MAX_DIM`` to run
    the whole vocabulary.
    """
    d = defaults(device)
    pick = {k: v if v is not None else d[k] for k, v in (("preset", preset), ("scale", scale), ("layers", layers),
                                                         ("batch", batch), ("seq_len", seq_len),
                                                         ("new_tokens", new_tokens), ("dtype", dtype))}
    for name in ("layers", "batch", "seq_len", "new_tokens"):
        v = pick[name]
        if isinstance(v, bool) or not isinstance(v, int) or v < (0 if name == "new_tokens" else 1):
            raise InputError(f"{name.replace('_', '-')} must be a whole number ≥ {0 if name == 'new_tokens' else 1}, "
                             f"got {v!r}")
    cfg = pf.preset_config(pick["preset"], pick["scale"], seq_len=pick["seq_len"], batch=pick["batch"],
                           layers=pick["layers"], attention=attention, dtype=pick["dtype"], scale_vocab=True)
    m = cfg.model
    cap = safety.limits().max_dim if max_dim is None else max_dim
    if m.vocab > cap >= 1:
        parts = -(-m.vocab // cap)
        m = m.replace(vocab=m.vocab // parts, name=f"{m.name} (vocabulary ÷ {parts}: GEMM_MAX_DIM {cap:,})")
        cfg = replace(cfg, model=m)
    if m.learned_positions and pick["seq_len"] + pick["new_tokens"] > m.learned_positions:
        raise InputError(f"{m.name} has {m.learned_positions} learned positions: prompt + decode steps must fit them")
    return Run(cfg, pick["batch"], pick["new_tokens"])


def memory_needed(run: Run) -> float:
    """Peak bytes of a validation run (weights, cache, a prefill's activations and scores), roughly."""
    m, b = run.model, dtype_bytes(run.dtype)
    total = run.seq_len + run.new_tokens
    weights = (m.params + m.vocab * m.hidden) * b
    cache = 2 * m.layers * run.batch * m.kv_dim * total * b
    acts = run.batch * run.seq_len * (4 * m.hidden + 2 * m.q_dim + 3 * m.ffn) * b
    scores = run.batch * m.heads * run.seq_len * total * (3 * b + 8)
    return weights + cache + acts + scores


# --------------------------------------------------------------------------- calibration
@contextmanager
def cpu_threads(device: str, threads: int | None) -> Iterator[int]:
    """Run with ``threads`` torch CPU threads (None: as torch is set), restored after; yields the count.

    On a shared CPU every multi-threaded op waits until all its threads get a core: under load a
    10 µs op can take a whole scheduler tick (~4 ms). Calibration and validation must run with the
    same count for their figures to compare; one thread keeps a busy machine's tiny ops honest.
    """
    import torch

    if device != "cpu":
        yield 0
        return
    old = torch.get_num_threads()
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise InputError(f"threads must be a whole number ≥ 1, got {threads!r}")
        torch.set_num_threads(threads)
    try:
        yield torch.get_num_threads()
    finally:
        torch.set_num_threads(old)


def _m_values(tokens: int) -> list[int]:
    """1, 2, 4, … below ``tokens``, and ``tokens`` itself."""
    out, m = [], 1
    while m < tokens:
        out.append(m)
        m *= 2
    return sorted(set(out + [max(1, tokens)]))


def _keys_values(lo: int, hi: int) -> list[int]:
    """Powers of two between ``lo`` and ``hi``, and both ends."""
    out = {lo, hi}
    p = 16
    while p < hi:
        if p > lo:
            out.add(p)
        p *= 2
    return sorted(out)


def _torch_dtype(dtype: str) -> Any:
    return pf.torch_dtype(dtype)


CPU_CACHE_BYTES = 64 * 1024**2  # the last-level cache assumed on a CPU that does not say its own


def cpu_cache_bytes() -> int:
    """This CPU's last-level cache as Linux reports it (the largest ``/sys/.../cache/index*/size``),
    else ``CPU_CACHE_BYTES``."""
    import glob

    best = 0
    for path in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*/size"):
        try:
            text = open(path, encoding="ascii").read().strip().upper()
            mult = {"K": 1024, "M": 1024**2, "G": 1024**3}.get(text[-1:], 1)
            best = max(best, int(text.rstrip("KMG")) * mult)
        except (OSError, ValueError):
            continue
    return best or CPU_CACHE_BYTES


class _Timer:
    """Times callables through the harness, with the deadline and the cache policy of one run.

    Each op is timed with its data where the model's own forward pass finds it. A GPU: do_bench
    flushes the L2 before every call (a real model's weights never stay in 50 MB of L2 between two
    uses). A CPU: when all the model's weights fit in half its last-level cache (``cpu_cache_bytes``:
    the rest holds the KV cache, the activations and other tenants' data) they stay warm between two
    forward passes, so the op is timed warm; a bigger model's weight GEMMs get rotated weight sets
    that together exceed the cache twice over, as the model's own pass streams them from memory.
    (Twice the cache used to count as warm: a 22 MiB model on a 32 MiB L3 then had its decode GEMVs
    timed from cache, 5× faster than its own decode read them.)
    """

    def __init__(self, device: str, min_run_time: float, deadline: safety.Deadline, lim: safety.Limits,
                 weights_bytes: float) -> None:
        self.device, self.min_run_time, self.deadline, self.lim = device, min_run_time, deadline, lim
        self.cache = cpu_cache_bytes() if device != "cuda" else 0
        self.warm = device != "cuda" and weights_bytes <= self.cache / 2

    def sets(self, set_bytes: float, weights: bool = True) -> int:
        if self.device == "cuda" or self.warm or not weights:
            return 1
        return harness.rotation_count(set_bytes, cache_bytes=self.cache,
                                      max_bytes=min(self.lim.max_bytes / 8, 256 * 1024**2))

    def time(self, fn: Callable[..., Any], args_list: list[tuple]) -> float:
        t = harness.time_callable(fn, device=self.device, args_list=args_list, min_run_time=self.min_run_time)
        return t.median_s


def _one_layer(run: Run) -> ModelConfig:
    return run.model.replace(layers=1)


def _layer_other_ops(run: Run, phase: str, dtype: str) -> tuple[list[accounting.Op], Workload]:
    """The non-GEMM ops of one layer and one step (the prefill, or a decode step halfway through),
    and the workload they were counted for."""
    m1 = _one_layer(run)
    if phase == "prefill":
        wl = replace(run.workload(dtype), new_tokens=0)
        return list(accounting.prefill_other_ops(m1, wl)), wl
    mid = run.seq_len + max(0, run.new_tokens // 2)
    wl = replace(run.workload(dtype), seq_len=mid, new_tokens=1)
    return accounting.decode_other_ops(m1, wl), wl


def sweep(run: Run, dts: tuple[str, ...]) -> list[tuple[str, tuple]]:
    """The calibration's points, (kind, payload) each, for one dtype and one sweep: every GEMM family at
    every M, the attention products at every length, the non-GEMM ops of a layer. No torch: the plan counts
    them too (its time is points × :func:`point_seconds`)."""
    plans: list[tuple[str, tuple]] = []
    tokens = run.batch * run.seq_len
    m1 = _one_layer(run)
    gemm_ops = [o for o in accounting.prefill_ops(m1, replace(run.workload(), new_tokens=0, lm_head="all"))
                if o.is_gemm and o.name not in ATTENTION_PRODUCTS]
    families: dict[tuple[int, int], list[str]] = {}
    for o in gemm_ops:
        families.setdefault((o.n, o.k), []).append(o.name)
    for (n, k), names in families.items():
        for mm in _m_values(tokens):
            plans.append(("linear", (", ".join(names), mm, n, k)))
    s, total = run.seq_len, run.seq_len + run.new_tokens
    for q in _keys_values(min(16, s), s):  # prefill products: q queries against q keys
        plans.append(("attention", (q, q)))
    if run.new_tokens:
        for keys in _keys_values(s + 1, total):  # decode products: one query against the cache
            plans.append(("attention", (1, keys)))
    phases = ("prefill", "decode") if run.new_tokens else ("prefill",)
    for phase in phases:
        for op in _layer_other_ops(run, phase, dts[0])[0]:
            plans.append(("other", (phase, op.name)))
    return plans


def run_calibration(run: Run, device: str, dtypes: tuple[str, ...] | None = None, *, min_run_time: float = 0.05,
                    progress: Progress = None, deadline: safety.Deadline | None = None,
                    save: bool = True, threads: int | None = None, repeats: int | None = None) -> Calibration:
    """Time every op of ``run``'s model alone on ``device``, per dtype; save and return the points.

    ``threads``: torch's CPU threads for the run (see :func:`cpu_threads`). ``repeats``: sweeps over
    every point (default 2 on a CPU, 1 on a GPU), each point keeping its fastest median."""
    device = harness.require_device(device)
    reps = repeats if repeats is not None else (1 if device == "cuda" else 2)
    if isinstance(reps, bool) or not isinstance(reps, int) or not 1 <= reps <= 10:
        raise InputError(f"repeats must be a whole number from 1 to 10, got {repeats!r}")
    with cpu_threads(device, threads) as n:
        cal = _calibrate(run, device, dtypes, min_run_time, progress, deadline, reps)
    cal.threads = n
    if save:
        calstore.save_calibration(cal)
    return cal


def _calibrate(run: Run, device: str, dtypes: tuple[str, ...] | None, min_run_time: float, progress: Progress,
               deadline: safety.Deadline | None, repeats: int) -> Calibration:
    import torch
    import torch.nn.functional as F

    lim = safety.limits()
    deadline = deadline or safety.Deadline(lim.time_limit_s)
    dts = tuple(dict.fromkeys(get_dtype(d).name for d in (dtypes or (run.dtype,))))
    for d in dts:
        if d not in pf.PROFILE_DTYPES:
            raise InputError(f"calibration runs {', '.join(pf.PROFILE_DTYPES)}; {d} is not one of them")
    m = run.model
    if m.is_moe:
        raise InputError(f"{m.name} is a mixture of experts; calibrate a dense model")
    lim_dims = dict(hidden=m.hidden, ffn=m.ffn, vocab=m.vocab, tokens=run.batch * run.seq_len)
    safety.check_dims(lim, **lim_dims)
    safety.check_memory(memory_needed(run), device, lim)
    weights_bytes = m.params * max(dtype_bytes(d) for d in dts)
    timer = _Timer(device, min_run_time, deadline, lim, weights_bytes)
    say = progress or (lambda f, t: None)
    gemm: list[GemmPoint] = []
    other: list[OtherPoint] = []
    notes: list[str] = []
    g = torch.Generator(device=device).manual_seed(0)  # drawn on the device: an LM head is gigabytes
    weights: dict[tuple, list[Any]] = {}

    def randn(*shape: int, dt: Any) -> Any:
        return torch.randn(*shape, generator=g, device=device, dtype=torch.float32).to(dt)

    def weight_sets(n: int, k: int, dt: Any, count: int) -> list[Any]:
        """The weights of one (N, K) family, drawn once and reused for every M."""
        key = (n, k, dt)
        have = weights.setdefault(key, [])
        while len(have) < count:
            have.append(randn(n, k, dt=dt))
        return have[:count]

    plans = sweep(run, dts)
    tokens, m1 = run.batch * run.seq_len, _one_layer(run)
    b, h, hd = run.batch, m.heads, m.head_dim
    phases = ("prefill", "decode") if run.new_tokens else ("prefill",)
    todo = [(d, kind, payload) for _ in range(repeats) for d in dts for kind, payload in plans]
    with safety.oom_guard(device), torch.inference_mode():
        counted = {(d, ph): _layer_other_ops(run, ph, d) for d in dts for ph in phases}
        for done, (d, kind, payload) in enumerate(todo):
            if deadline.expired():
                notes.append(f"stopped at the time limit ({deadline.reason()}); {len(todo) - done} of "
                             f"{len(todo)} points not measured")
                break
            say(done / len(todo), f"{d}: {kind} {payload}")
            tdt = _torch_dtype(d)
            eb = dtype_bytes(d)
            if kind == "linear":
                names, mm, n, k = payload
                set_bytes = (mm * k + n * k + mm * n) * eb
                count = timer.sets(set_bytes)
                sets = list(zip([randn(mm, k, dt=tdt) for _ in range(count)], weight_sets(n, k, tdt, count),
                                strict=True))
                t = timer.time(F.linear, sets)
                if mm == max(_m_values(tokens)):
                    weights.pop((n, k, tdt), None)  # the last M of this family: free its weights
                gemm.append(GemmPoint("linear", names, d, mm, n, k, 1, t, 2.0 * mm * n * k, float(set_bytes)))
            elif kind == "attention":
                q_len, keys = payload
                # scores: (b, h, q, hd) @ (b, h, hd, keys); values: (b, h, q, keys) @ (b, h, keys, hd)
                sc_bytes = b * h * (q_len * hd + hd * keys + q_len * keys) * eb
                sets = [(randn(b, h, q_len, hd, dt=tdt), randn(b, h, keys, hd, dt=tdt).transpose(-2, -1))
                        for _ in range(timer.sets(sc_bytes, weights=False))]
                t = timer.time(torch.matmul, sets)
                gemm.append(GemmPoint("attn_scores", "attn_scores", d, q_len, keys, hd, b * h, t,
                                      2.0 * b * h * q_len * keys * hd, float(sc_bytes)))
                sets = [(randn(b, h, q_len, keys, dt=tdt), randn(b, h, keys, hd, dt=tdt))
                        for _ in range(timer.sets(sc_bytes, weights=False))]
                t = timer.time(torch.matmul, sets)
                gemm.append(GemmPoint("attn_values", "attn_values", d, q_len, hd, keys, b * h, t,
                                      2.0 * b * h * q_len * keys * hd, float(sc_bytes)))
            else:
                phase, name = payload
                ops, wl_phase = counted[(d, phase)]
                op = next(o for o in ops if o.name == name)
                fn, args = _other_op_call(name, run, phase, tdt, device, randn)
                t = timer.time(fn, [args])
                other.append(OtherPoint(name, d, phase, op.m, op.n, t, op.bytes / other_calls(op, m1, wl_phase)))
    say(1.0, Text(N_("calibration done")))
    # Each point was measured ``repeats`` times, whole sweeps apart: keep its fastest median (other
    # tenants of a shared machine only ever add time; a stall during one sweep is not the device).
    gemm = list({(p.family, p.names, p.dtype, p.m, p.n, p.k, p.groups): p
                 for p in sorted(gemm, key=lambda p: -p.seconds)}.values())
    other = list({(p.name, p.dtype, p.phase, p.rows, p.width): p
                  for p in sorted(other, key=lambda p: -p.seconds)}.values())
    if not gemm:
        raise InputError("the time limit was reached before anything was measured (GEMM_TIME_LIMIT_S)")
    name = harness.device_name(device)
    mem, units = _device_size(device)
    if timer.warm:
        notes.append(f"the model's weights ({weights_bytes / 2**20:.3g} MiB) fit in half this CPU's "
                     f"{timer.cache / 2**20:.3g} MiB cache, so each op was timed warm, as the model's own forward "
                     "pass finds it")
    elif device != "cuda":
        notes.append(f"the model's weights ({weights_bytes / 2**20:.3g} MiB) do not fit in half this CPU's "
                     f"{timer.cache / 2**20:.3g} MiB cache: each weight GEMM was timed on rotated weights, read from "
                     "memory as the model's own forward pass reads them")
    return Calibration(device, name, m.name, tuple(sorted({p.dtype for p in gemm}, key=dts.index)), tuple(gemm),
                       tuple(other), memory_bytes=mem, units=units, notes=tuple(notes))


def _device_size(device: str) -> tuple[float, int]:
    if device == "cuda":
        import torch
        p = torch.cuda.get_device_properties(torch.cuda.current_device())
        return float(p.total_memory), int(p.multi_processor_count)
    import os

    from gemmlib.core.machine import total_ram
    return total_ram(), os.cpu_count() or 1


def _other_op_call(name: str, run: Run, phase: str, tdt: Any, device: str,
                   randn: Callable[..., Any]) -> tuple[Callable[..., Any], tuple]:
    """The block's own code for one call of non-GEMM op ``name`` at this phase's shape."""
    import torch
    import torch.nn.functional as F

    m = run.model
    b = run.batch
    s = run.seq_len if phase == "prefill" else 1
    keys = run.seq_len if phase == "prefill" else run.seq_len + max(0, run.new_tokens // 2) + 1
    h, kvh, hd, d, f = m.heads, m.kv_heads, m.head_dim, m.hidden, m.ffn
    eps = run.config.norm_eps
    if name == "norms":
        w = torch.ones(d, device=device, dtype=tdt)
        bias = torch.zeros(d, device=device, dtype=tdt) if m.norm == "layer" else None
        return (lambda x: pf.norm(x, w, bias, m.norm, eps)), (randn(b, s, d, dt=tdt),)
    if name == "rotary":
        cos, sin = pf.rope_tables(hd, s, device, tdt)

        def both(q: Any, k: Any) -> Any:
            return pf.rope(q, cos, sin), pf.rope(k, cos, sin)
        return both, (randn(b, s, h, hd, dt=tdt).transpose(1, 2), randn(b, s, kvh, hd, dt=tdt).transpose(1, 2))
    if name == "kv_repeat":
        groups = h // kvh

        def kv(k: Any, v: Any) -> Any:
            return pf.repeat_kv(k, groups), pf.repeat_kv(v, groups)
        return kv, (randn(b, kvh, keys, hd, dt=tdt), randn(b, kvh, keys, hd, dt=tdt))
    if name == "attn_softmax":
        mask = pf.causal_mask(keys, device, tdt)[keys - s:keys, :keys]
        scale = 1.0 / math.sqrt(hd)
        return (lambda sc: pf.attention_probs(sc, mask, scale)), (randn(b, h, s, keys, dt=tdt),)
    if name == "activation":
        return (lambda gt, up: pf.mlp_activation(gt, up, m.mlp)), (randn(b, s, f, dt=tdt), randn(b, s, f, dt=tdt))
    if name == "residual":
        return torch.add, (randn(b, s, d, dt=tdt), randn(b, s, d, dt=tdt))
    if name == "embedding":
        table = randn(m.vocab, d, dt=tdt)
        ids = torch.randint(0, m.vocab, (b, s), device=device)
        if m.learned_positions:
            pos = randn(m.learned_positions, d, dt=tdt)
            where = torch.arange(s, device=device)
            return (lambda i: F.embedding(i, table) + F.embedding(where, pos)), (ids,)
        return (lambda i: F.embedding(i, table)), (ids,)
    raise InputError(f"no calibration for the {name!r} op (MoE routing is not calibrated)")


# --------------------------------------------------------------------------- validation
@dataclass
class PhaseCheck:
    """One phase: measured time, the two estimates, per op group."""

    phase: str
    measured_s: float
    estimated_s: float | None
    calibrated_s: float | None
    groups: dict[str, dict[str, float | None]] = field(default_factory=dict)
    p20_s: float | None = None
    p80_s: float | None = None
    method: str = ""  # how the measurement and the calibrated estimate were made comparable
    launch_s: float | None = None  # the measured launch cost added to the calibrated estimate
    eager_s: float | None = None  # a GPU decode: the eager time beside the CUDA-graph one

    @staticmethod
    def error(est: float | None, measured: float | None) -> float | None:
        """(estimate − measured) / measured: −0.2 is an estimate 20 % too fast."""
        if est is None or not measured:
            return None
        return est / measured - 1.0

    @property
    def estimated_error(self) -> float | None:
        return self.error(self.estimated_s, self.measured_s)

    @property
    def calibrated_error(self) -> float | None:
        return self.error(self.calibrated_s, self.measured_s)

    def to_dict(self) -> dict:
        return {"measured_s": self.measured_s, "estimated_s": self.estimated_s, "calibrated_s": self.calibrated_s,
                "estimated_error": self.estimated_error, "calibrated_error": self.calibrated_error,
                "p20_s": self.p20_s, "p80_s": self.p80_s, "method": self.method, "launch_s": self.launch_s,
                "eager_s": self.eager_s,
                "groups": {g: {**v, "estimated_error": self.error(v.get("estimated_s"), v.get("measured_s")),
                               "calibrated_error": self.error(v.get("calibrated_s"), v.get("measured_s"))}
                           for g, v in self.groups.items()}}


@dataclass
class Validation:
    run: Run
    device: str
    device_name: str
    datasheet: str  # the hardware row of the uncalibrated estimate, or why there is none
    efficiency: float
    calibration: str  # "NAME (calibrated)" and its model
    prefill: PhaseCheck
    decode: PhaseCheck | None
    notes: list[str] = field(default_factory=list)
    threads: int = 0  # CPU threads torch used (0 on a GPU)
    machine: dict = field(default_factory=dict)  # a GPU's state before and after (monitor.MachineRecord)
    launch_costs: dict = field(default_factory=dict)  # seconds to launch one kernel / one view from Python

    def phases(self) -> list[PhaseCheck]:
        return [p for p in (self.prefill, self.decode) if p is not None]

    def to_dict(self) -> dict:
        return {"model": self.run.describe(), "device": self.device, "device_name": self.device_name,
                "datasheet": self.datasheet, "efficiency": self.efficiency, "calibration": self.calibration,
                "prefill": self.prefill.to_dict(), "decode": self.decode.to_dict() if self.decode else None,
                "threads": self.threads, "notes": list(self.notes), "machine": self.machine,
                "launch_costs": self.launch_costs}


def group_of_op(op: accounting.Op) -> str:
    """The accounting's op -> its group."""
    if not op.is_gemm:
        return "other"
    return "attention" if op.name in ATTENTION_PRODUCTS else "gemm"


def group_of_profiled(o: pf.OpStat) -> str:
    """A profiler row -> its group: attention products are the batched ones (both operands ≥ 3-D)
    and fused attention; other matmuls (``F.linear`` → mm/addmm) are weight GEMMs."""
    if o.kind == "attention":
        return "attention"
    if o.kind == "gemm":
        dims = [len(p.split("×")) for p in o.shapes.split(", ")[:2]] if o.shapes else []
        return "attention" if len(dims) == 2 and min(dims) >= 3 else "gemm"
    return "other"


def group_times(ops: tuple[accounting.Op, ...] | list[accounting.Op]) -> dict[str, float]:
    out = dict.fromkeys(GROUPS, 0.0)
    for o in ops:
        out[group_of_op(o)] += o.time_s
    return out


def profile_shares(ops: list[pf.OpStat]) -> dict[str, float]:
    """Share of each group in a profiled pass, from its rows (self times, which add up to the total)."""
    t = dict.fromkeys(GROUPS, 0.0)
    for o in ops:
        t[group_of_profiled(o)] += o.time_s
    s = sum(t.values())
    if s <= 0:
        return {g: 1.0 / len(GROUPS) for g in GROUPS}
    return {g: v / s for g, v in t.items()}


PROFILED_PASSES = 3


def _profile_shares(fn: Callable[[], Any], device: str) -> dict[str, float]:
    """Run ``fn`` a few times under torch.profiler, each pass labelled, and split by the rows' median
    self times over the passes (one pass stalled by a busy machine does not skew the split)."""
    from torch.profiler import ProfilerActivity, profile, record_function

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    fn()  # warm
    harness.synchronize(device)
    with profile(activities=acts, record_shapes=True) as prof:
        for i in range(PROFILED_PASSES):
            with record_function(f"{pf.PASS_LABEL}{i}"):
                fn()
            harness.synchronize(device)
    ops, _total, _ = pf.summarize_events(prof.events(), device, PROFILED_PASSES)
    return profile_shares(ops)


# Ops that only make a new view of a tensor (no kernel; on a CPU a dispatch without work)
VIEW_OPS = frozenset({"slice", "transpose", "view", "expand", "select", "unsqueeze", "squeeze", "t", "alias",
                      "as_strided", "permute", "_unsafe_view", "detach", "unflatten", "split", "narrow"})


# The GEMM calls of a forward pass: every one is an op the calibrated estimate times, whatever the
# accounting's count of GEMMs per call (a batched attention product is one call of batch × heads GEMMs).
GEMM_CALLS = frozenset({"aten.linear.default", "aten.matmul.default", "aten.mm.default", "aten.bmm.default",
                        "aten.addmm.default", "aten.baddbmm.default", "aten.scaled_dot_product_attention.default"})


def op_kind(name: str) -> str:
    """"aten.slice.Tensor" -> "view"; any other op -> "kernel"."""
    parts = str(name).split(".")
    return "view" if (parts[1] if len(parts) > 1 and parts[0] == "aten" else parts[0]) in VIEW_OPS else "kernel"


def dispatch_counts(fn: Callable[[], Any]) -> Counter:
    """The ops one call of ``fn`` asks torch for, by name ("aten.linear.default": n): a
    ``TorchDispatchMode`` counts each call Python makes into torch (views included), not the
    kernels an op runs inside. Under ``torch.inference_mode`` always, as the validation runs the
    model (outside it composite ops such as softmax reach the mode decomposed)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    counts: Counter = Counter()

    class _Count(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            counts[str(func)] += 1
            return func(*args, **(kwargs or {}))

    with torch.inference_mode(), _Count():
        fn()
    return counts


def calibrated_calls(run: Run, ops: Any, phase: str, dtype: str) -> Counter:
    """The calls into torch that the calibrated non-GEMM ops of one phase stand for: each op's
    calibration code (:func:`_other_op_call`) run once on the "meta" device (shapes only: no memory,
    no compute) and counted, times the op's calls in the phase. (GEMM calls need no count: every
    one a forward pass makes is a calibrated op, ``GEMM_CALLS``.)"""
    import torch

    tdt = _torch_dtype(dtype)

    def meta(*shape: int, dt: Any) -> Any:
        return torch.empty(*shape, device="meta", dtype=dt)

    total: Counter = Counter()
    wl = run.workload(dtype)
    for op in ops:
        if op.is_gemm:
            continue
        try:
            fn, args = _other_op_call(op.name, run, phase, tdt, "meta", meta)
        except InputError:  # an op the calibration does not time (MoE routing)
            continue
        calls = other_calls(op, run.model, wl)
        for name, n in dispatch_counts(lambda fn=fn, args=args: fn(*args)).items():
            total[name] += n * calls
    return total


def launch_costs(device: str) -> dict[str, float]:
    """Seconds the host spends launching one op from Python on ``device``: a kernel (a one-element
    add) and a view (a slice), measured here (``harness.host_call_cost``)."""
    import torch

    a, b = torch.ones(1, device=device), torch.ones(1, device=device)
    x = torch.ones(8, 8, device=device)
    return {"kernel": harness.host_call_cost(lambda: torch.add(a, b), device),
            "view": harness.host_call_cost(lambda: x[:, :4], device)}


def launch_term(real: Counter, counted: Counter, costs: dict[str, float]) -> tuple[float, dict[str, int]]:
    """(seconds, {"kernel": n, "view": n}) of the calls ``real`` makes beyond its GEMMs and ``counted``."""
    extra = Counter({k: v for k, v in real.items() if k not in GEMM_CALLS}) - counted  # what is left over
    n = {"kernel": 0, "view": 0}
    for name, k in extra.items():
        n[op_kind(name)] += k
    return n["kernel"] * costs["kernel"] + n["view"] * costs["view"], n


def datasheet_hardware(device: str, device_name: str) -> tuple[Hardware | None, str]:
    """The uncalibrated estimate's row: the catalogue's (the CPU placeholder on a CPU), or measured ceilings."""
    try:
        hw = pf.hardware_for(device, device_name)
    except InputError as e:
        return None, str(e)
    return hw, hw.name


def cpu_row_note(hw: Hardware, dtype: str) -> str:
    """What a CPU's "datasheet" estimate stands on: this CPU's measured ceilings where some were saved (``cpu_row``
    takes them over the placeholder), else the catalogue's placeholder figures."""
    from gemmlib.core.ceilings import all_ceilings

    measured = any(c.device == "cpu" for c in all_ceilings().values())
    source = "this CPU's measured ceilings" if measured else "the catalogue's placeholder"
    return (f"the datasheet row of a CPU is {source} ({hw.name}: "
            f"{hw.peak(dtype) / 1e12 if hw.peak(dtype) else 0:.2g} TFLOP/s {dtype}, {hw.bandwidth / 1e9:.3g} GB/s)")


def run_validation(run: Run, device: str, *, calibration: Calibration | None = None, efficiency: float = 1.0,
                   min_run_time: float = 0.5, progress: Progress = None, seed: int = 0,
                   threads: int | None = None) -> Validation:
    """Time ``run``'s model (prefill, then its decode steps with a KV cache) and compare the estimates.

    ``threads``: torch's CPU threads (default: the calibration's, else torch's own setting)."""
    device = harness.require_device(device)
    cal = calibration or calstore.find_calibration(device, harness.device_name(device))
    if threads is None and cal is not None and cal.threads:
        threads = cal.threads
    with cpu_threads(device, threads) as n:
        v = _validate(run, device, cal, efficiency, min_run_time, progress, seed)
    if cal is not None and cal.threads and n and cal.threads != n:
        v.notes.append(f"calibrated with {cal.threads} CPU thread{'' if cal.threads == 1 else 's'}, validated with {n}: the "
                       "figures differ for that")
    v.threads = n
    return v


def _validate(run: Run, device: str, cal: Calibration | None, efficiency: float, min_run_time: float,
              progress: Progress, seed: int) -> Validation:
    import torch

    lim = safety.limits()
    m = run.model
    if m.is_moe:
        raise InputError(f"{m.name} is a mixture of experts; validate a dense model")
    safety.check_dims(lim, hidden=m.hidden, ffn=m.ffn, vocab=m.vocab, tokens=run.batch * run.seq_len)
    safety.check_memory(memory_needed(run), device, lim)
    say = progress or (lambda f, t: None)
    name = harness.device_name(device)
    notes: list[str] = []
    wl = run.workload()
    hw, ds_label = datasheet_hardware(device, name)
    ds: Estimate | None = None
    if hw is not None:
        try:
            ds = estimate(m, wl, hw, efficiency=efficiency)
        except InputError as e:
            ds_label, hw = f"{hw.name}: {e}", None
    else:
        notes.append(f"no datasheet estimate: {ds_label}")
    if device == "cpu" and hw is not None:
        notes.append(cpu_row_note(hw, run.dtype))
    # A generous check before anything is allocated: 4× the slower estimate must fit the time limit.
    cal_est: Estimate | None = None
    cal_label = "none: run `python -m gemmlib calibrate` first"
    if cal is not None:
        try:
            cal_est = calibrated_estimate(m, wl, cal)
            cal_label = f"{cal.name} ({cal.model})"
            if cal.model != m.name:
                notes.append(f"the calibration measured {cal.model}'s shapes, not {m.name}'s: interpolated")
        except InputError as e:
            cal_label = f"{cal.name}: {e}"
    guess = max([e.total_s for e in (ds, cal_est) if e is not None] or [0.0])
    if guess * 4 * 8 > lim.time_limit_s:  # about 8 timed repetitions of each phase
        raise InputError(f"this model would take about {guess:.3g} s per prefill + decode here, too long for the "
                         f"time limit of {lim.time_limit_s:g} s (GEMM_TIME_LIMIT_S); use a larger --scale, fewer "
                         "--layers, a shorter --seq-len or fewer --new-tokens")
    from gemmlib.measure import monitor

    machine = monitor.MachineRecord(monitor.nvml_index_for_torch_device() if device == "cuda" else 0,
                                    enabled=device == "cuda")
    with safety.oom_guard(device), torch.inference_mode(), machine:
        say(0.05, Text(N_("building {model}"), model=run.describe()))
        model = pf.build_model(run.config, device, seed, max_len=run.seq_len + run.new_tokens, lm_head=run.lm_head)
        g = torch.Generator(device="cpu").manual_seed(seed + 1)
        ids = torch.randint(0, m.vocab, (run.batch, run.seq_len), generator=g).to(device)
        steps = [torch.randint(0, m.vocab, (run.batch, 1), generator=g).to(device) for _ in range(run.new_tokens)]
        cache = model.new_cache(run.batch)

        def prefill() -> Any:
            return model(ids, cache, 0)

        def decode() -> Any:
            out = None
            for i, tok in enumerate(steps):
                out = model(tok, cache, run.seq_len + i)
            return out

        say(0.1, Text(N_("timing the prefill")))
        t_pre = harness.time_callable(prefill, device=device, min_run_time=min_run_time)
        shares_pre = _profile_shares(prefill, device)
        real = {"prefill": dispatch_counts(prefill)}
        t_dec = shares_dec = eager_dec = None
        graph = False
        if run.new_tokens:
            say(0.5, Text(N_("timing {n} decode steps"), n=run.new_tokens))
            prefill()  # the cache holds the prompt, as after a real prefill
            if device == "cuda":  # the steps as one CUDA graph: device time, as the calibration's do_bench
                try:
                    t_dec = harness.time_callable(decode, device=device, min_run_time=min_run_time, cuda_graph=True,
                                                  flush_l2=False)
                    graph = True
                except Exception as e:  # noqa: BLE001 - a capture that fails: eager, with the launch cost
                    if safety.is_oom(e):
                        raise
                    notes.append(f"the decode could not be captured as a CUDA graph ({type(e).__name__}: "
                                 f"{str(e).splitlines()[0][:150] if str(e) else ''}); it was timed eagerly")
            eager = harness.time_callable(decode, device=device, min_run_time=min_run_time)
            t_dec, eager_dec = (t_dec, eager.median_s) if graph else (eager, None)
            shares_dec = _profile_shares(decode, device)
            real["decode"] = dispatch_counts(decode)
        costs = launch_costs(device)
    say(1.0, Text(N_("validation done")))

    def phase(label: str, t: Any, shares: dict[str, float]) -> PhaseCheck:
        e = getattr(ds, label) if ds is not None else None
        c = getattr(cal_est, label) if cal_est is not None else None
        eg = group_times(e.ops) if e is not None else None
        cg = group_times(c.ops) if c is not None else None
        launch, method = None, ""
        if device == "cuda" and (label == "prefill" or graph):
            method = ("a CUDA graph of the decode steps (device time, no host launch cost), as the calibration's "
                      "do_bench op times" if label == "decode" else
                      "do_bench (device time), as the calibration's op times")
        elif c is not None:
            counted = calibrated_calls(run, c.ops, label, run.dtype)
            extra, n = launch_term(real[label], counted, costs)
            per = f"{costs['kernel'] * 1e6:.3g} µs per kernel, {costs['view'] * 1e6:.3g} µs per view"
            if device == "cuda":  # eager: the host's launches (all of them) overlap the device's work
                host = sum(k * costs[op_kind(name)] for name, k in real[label].items())
                launch = max(0.0, host - c.time_s)
                method = (f"eager, host-bound where it must be: the longer of the calibrated device time and its "
                          f"{sum(real[label].values())} launches × the measured host cost ({per})")
            else:
                launch = extra
                method = (f"eager; the calibrated estimate adds the {n['kernel']} kernel and {n['view']} view "
                          f"launches the step makes beyond its calibrated ops × the measured cost ({per})")
        calibrated = (c.time_s + (launch or 0.0)) if c is not None else None
        groups = {gname: {"measured_s": t.median_s * shares[gname],
                          "estimated_s": eg[gname] if eg else None,
                          "calibrated_s": (cg[gname] + (launch or 0.0 if gname == "other" else 0.0)) if cg else None}
                  for gname in GROUPS}
        if method:
            notes.append(f"{label}: {method}")
        return PhaseCheck(label, t.median_s, e.time_s if e else None, calibrated, groups, t.p20_s, t.p80_s,
                          method=method, launch_s=launch, eager_s=eager_dec if label == "decode" else None)

    notes.append(f"per-group measured times: the harness's total split by torch.profiler's self times (median of "
                 f"{PROFILED_PASSES} passes; {'GPU kernel' if device == 'cuda' else 'CPU'} time per op)")
    v = Validation(run, device, name, ds_label, efficiency, cal_label, phase("prefill", t_pre, shares_pre),
                   phase("decode", t_dec, shares_dec) if t_dec is not None else None, notes)
    v.machine = machine.to_dict() if machine.enabled else {}
    v.launch_costs = costs
    return v


def calibrate_and_validate(run: Run, device: str, *, dtypes: tuple[str, ...] | None = None,
                           efficiency: float = 1.0, min_run_time: float = 0.05, validate_run_time: float = 0.5,
                           progress: Progress = None, threads: int | None = None) -> tuple[Calibration, Validation]:
    """Both, on the same model (the Roofline page's button and the benchmark script)."""
    def part(lo: float, hi: float) -> Progress:
        return None if progress is None else (lambda f, t: progress(lo + (hi - lo) * f, t))

    cal = run_calibration(run, device, dtypes, min_run_time=min_run_time, progress=part(0.0, 0.6), threads=threads)
    val = run_validation(run, device, calibration=cal, efficiency=efficiency, min_run_time=validate_run_time,
                         progress=part(0.6, 1.0), threads=threads)
    return cal, val


def validation_table(v: Validation) -> list[dict]:
    """Rows (phase, group, measured, estimated, error, calibrated, error) for a page, the CLI, the report."""
    rows = []
    for p in v.phases():
        for gname in (*GROUPS, "total"):
            if gname == "total":
                meas, est, cal = p.measured_s, p.estimated_s, p.calibrated_s
            else:
                g = p.groups[gname]
                meas, est, cal = g["measured_s"], g["estimated_s"], g["calibrated_s"]
            rows.append({"phase": p.phase, "group": GROUP_LABELS.get(gname, gname), "measured_s": meas,
                         "estimated_s": est, "estimated_error": PhaseCheck.error(est, meas),
                         "calibrated_s": cal, "calibrated_error": PhaseCheck.error(cal, meas)})
    return rows


# --------------------------------------------------------------------------- the spec
@dataclass(frozen=True)
class CalibrationConfig:
    """A calibration of ``run``'s model on ``device`` (every op timed alone) and/or a validation (a real
    forward pass against the estimates: the datasheet's, and the calibration just measured or the
    saved ``calibration`` given)."""

    run: Run
    device: str = "cpu"
    calibrate: bool = True
    validate: bool = False
    calibration: Calibration | None = None  # validate against this one (when not calibrating)
    dtypes: tuple[str, ...] | None = None
    min_run_time: float = 0.05  # per calibration point
    validate_run_time: float = 0.5  # per validated phase
    threads: int | None = None
    efficiency: float = 1.0

    def __post_init__(self) -> None:
        plan.check_device(self.device)
        if not (self.calibrate or self.validate):
            raise InputError(N_("nothing to run: calibrate, validate or both"))
        if self.run.model.is_moe:
            raise InputError(N_("{name} is a mixture of experts; calibrate a dense model"), name=self.run.model.name)
        object.__setattr__(self, "min_run_time", plan.check_min_run_time(self.min_run_time, "min run time"))
        object.__setattr__(self, "validate_run_time", plan.check_min_run_time(self.validate_run_time,
                                                                              "validate run time"))
        eff = self.efficiency
        if isinstance(eff, bool) or not isinstance(eff, (int, float)) or not (math.isfinite(eff) and 0 < eff <= 1):
            raise InputError(N_("efficiency must be in (0, 1], got {value!r}"), value=eff)
        t = self.threads
        if t is not None and (isinstance(t, bool) or not isinstance(t, int) or not 1 <= t <= 1024):
            raise InputError(N_("threads must be a whole number from 1 to 1024, got {value!r}"), value=t)
        if self.dtypes is not None:
            object.__setattr__(self, "dtypes", tuple(self.dtypes))


@dataclass
class CalibrationResult:
    calibration: Calibration | None = None  # measured by this run (the server saves it)
    validation: Validation | None = None


# The sweep's time: each point is timed for ``min_run_time`` after its tensors are drawn and warmed up, a
# fixed cost beside it; a validation builds the model and times a prefill and a decode step, each for
# ``validate_run_time`` (the eager pass and the reference beside it). Measured on this project's 2-core CPU
# machine for llama-3-8b ÷ 16 on the CPU (60 points, 2 sweeps): 12.1–16.0 s at 0.05 s per point, 24.8 s at
# 0.15 s; the validation 4.0–6.4 s at 0.5 s per phase, 5.5 s at 0.25 s. The runs after the first are scaled
# by what the last ones took (plan.planned).
CAL_POINT_FIXED_S = 0.07
VALIDATE_FIXED_S = 2.5


def _calibration_s(cfg: CalibrationConfig) -> float:
    """The calibration's planned seconds: its sweep's points (per dtype; twice over on a CPU) at their time each."""
    if not cfg.calibrate:
        return 0.0
    run = cfg.run
    dts = tuple(dict.fromkeys(get_dtype(d).name for d in (cfg.dtypes or (run.dtype,))))
    points = len(sweep(run, dts)) * len(dts) * (1 if cfg.device == "cuda" else 2)
    return points * (cfg.min_run_time + CAL_POINT_FIXED_S)


def _validation_s(cfg: CalibrationConfig) -> float:
    """The validation's planned seconds: a fixed cost, then prefill and decode, eager and reference."""
    return VALIDATE_FIXED_S + 2 * 2 * cfg.validate_run_time if cfg.validate else 0.0


def plan_calibration(cfg: CalibrationConfig, lim: safety.Limits) -> plan.Plan:
    """A validation run's peak (weights, cache, a prefill's activations and scores; a calibration holds
    less) and its largest GEMM: the LM head over the prompt, or an MLP projection. Its time: the sweep's
    points (:func:`sweep`, per dtype and per repeat) at ``min_run_time`` plus a fixed cost each, and the
    validation's two phases."""
    run, m = cfg.run, cfg.run.model
    safety.check_dims(lim, hidden=m.hidden, ffn=m.ffn, vocab=m.vocab, tokens=run.batch * run.seq_len)
    flops = 2.0 * run.batch * run.seq_len * m.hidden * max(m.vocab, m.ffn)
    seconds = _calibration_s(cfg) + _validation_s(cfg)
    # No steps (so no ``step_s``): the run reports shares, not numbered steps — each sweep point its equal share
    # (this plan gives every point the same time, so they are the plan's own shares), and with a validation the
    # calibration its planned share of the whole and the validation's stages the rest (_run_spec); the run box
    # reads them as the share done.
    return plan.Plan(bytes=float(memory_needed(run)), call_flops=flops, call_what=N_("its largest GEMM"),
                     seconds=seconds, rows=1)


def _run_spec(cfg: CalibrationConfig, progress: Any, deadline: safety.Deadline) -> CalibrationResult:
    both = cfg.calibrate and cfg.validate
    # the calibration's share of the progress is its share of the plan's time (at the defaults ~3/4, not a fixed 0.6)
    split = _calibration_s(cfg) / ((_calibration_s(cfg) + _validation_s(cfg)) or 1.0)

    def part(lo: float, hi: float) -> Any:
        return (lambda f, t: progress(lo + (hi - lo) * f, t)) if both else progress

    out = CalibrationResult()
    cal = cfg.calibration
    if cfg.calibrate:
        cal = out.calibration = run_calibration(cfg.run, cfg.device, cfg.dtypes, min_run_time=cfg.min_run_time,
                                                progress=part(0.0, split), deadline=deadline, save=False,
                                                threads=cfg.threads)
    if cfg.validate:
        out.validation = run_validation(cfg.run, cfg.device, calibration=cal, efficiency=cfg.efficiency,
                                        min_run_time=cfg.validate_run_time, progress=part(split, 1.0),
                                        threads=cfg.threads)
    return out


def _label(cfg: CalibrationConfig) -> str:
    if cfg.calibrate and cfg.validate:
        return N_("a calibration and validation")
    return N_("a calibration") if cfg.calibrate else N_("a validation")


SPEC = BenchSpec("calibrate", CalibrationConfig, plan_calibration, _run_spec, CalibrationResult, label=_label,
                 imports=("gemmlib.measure.calibrate", "gemmlib.measure.profiler"), profiler=True)
