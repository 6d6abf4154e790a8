"""Published measurements, one JSON file each, and the estimate of each from the facts of its set-up alone.

A file in ``benchmarks/published/`` holds one measured result and everything its source says about how
it was obtained (``id``, ``kind`` training | inference, ``source`` {title, url, where}, ``model``
{preset | config}, ``hardware`` {gpu, gpus, gpus_per_node}, ``setup`` {…}, ``measured`` {metric, value,
unit}). :func:`load` reads and checks every file (a bad file is reported by name with the reason);
:func:`mapping` turns a set-up into the estimator's inputs by fixed rules written here once for every
row — no tuning flag, no per-row constant:

Both
  * ``hardware.bandwidth_tb_s``: where the source states the measuring GPUs' peak memory bandwidth and it is not
    the catalogue row's (torchtitan's H100s: 96 GB HBM2e at 2.4 TB/s), that figure replaces the row's.
  * ``hardware.compute_between``: two catalogue GPUs, where the source states only that its GPUs' compute peak
    lies between theirs (torchtitan's: "between SXM and NVL", its exact value unknown): each format's peak is
    the middle of the two rows' (H100 SXM and NVL bf16: 989.4 and 835.5 → 912.45 TFLOP/s), the one reading of a
    stated range that leans to neither end; the GEMM ceilings' shares of peak stay ``gpu``'s row's.
Training
  * the model, the global batch and sequence length, the GPUs, ``tp`` ``pp`` ``cp`` ``ep`` (data
    parallelism is what the GPUs leave: gpus / (tp·cp·pp·ep)), ``vp`` as virtual stages, the
    precision (bf16, or fp8 for the GEMMs' inputs), fused causal attention (every such framework).
  * ``micro_batch`` is a source's micro-batch per GPU (Megatron's MBS); a model replica here spans
    the EP ranks, which each take their own sequences, so one replica micro-batch is MBS × ep.
  * ``ep_dispatch_dtype`` (bf16 | fp8): the wire dtype of an 8-bit run's EP dispatch; unstated, bf16 (Megatron Core's
    default: "no quantization on the wire"); every other collective carries what
    :func:`gemmlib.llm.parallel.wire_bytes` says.
  * ``etp`` (Megatron's ``expert_tensor_parallel_size``), where it differs from tp: the experts fold over the
    TP and DP ranks (MoE parallel folding); the GPUs are etp × cp × pp × ep × dp (dp: the experts' data
    replicas), and one replica micro-batch is MBS × the attention's data replicas in an EP group
    (etp × ep / tp).
  * ``zero``: the stated stage; else ``fsdp`` true → 3; else the framework's default
    (``megatron``: 1, the distributed optimizer NeMo's ``distributed_fused_adam_with_cosine_annealing``
    turns on; ``torchtitan``: 3, FSDP2); else 0.
  * ``recompute_layers`` N with ``recompute: full``: Megatron's block method (``recompute_num_layers``), the first N
    layers of each model chunk recomputed whole, the others not.
  * ``recompute_modules`` with ``recompute: selective``: Megatron's ``recompute_modules`` as the recipe lists them
    (``layernorm``, ``moe_act``, ``moe``, ``mla_up_proj``, …); unstated, its default ``core_attn``.
  * ``recompute``: as stated; else the least of none → selective → full whose per-GPU memory fits.
  * ``compile: false`` (torchtitan without ``torch.compile``): the element-wise work runs as eager PyTorch
    kernels, each through HBM (:data:`gemmlib.llm.training.EAGER_BYTES`); otherwise fused, as Megatron with
    Transformer Engine and compiled torchtitan run it. ``recompute: op`` is torchtitan's selective op policy.
  * ``framework: torchtitan``: its attention is PyTorch's ``F.scaled_dot_product_attention`` (FlashAttention-2),
    with or without ``torch.compile`` (:data:`gemmlib.llm.training.SDPA_FLASH_RATIO`); Megatron's is Transformer
    Engine's fused kernel (the shape model's FlashAttention-3 rates).
  * ``mtp: true``: the checkpoint's multi-token-prediction modules are trained with the model (DeepSeek-V3).
  * ``fp8_recipe`` (current | blockwise | delayed): how an fp8 run scales its casts; unstated, delayed
    (Transformer Engine's default recipe).
  * the output head of an fp8 run multiplies in bf16 (Megatron Core's output layer is outside Transformer Engine's
    fp8 autocast; DeepSeek-V3 keeps it in BF16), in fp8 only where the recipe states ``fp8_output_proj: true``
    (Megatron's MXFP8 output projection).
  * the loss: ``framework: megatron`` runs the ``cross_entropy_fusion_impl`` its model provider sets
    (``te``: one fused kernel; ``native``, Megatron Core's default when none is set: the logits upcast to
    fp32 and a pass per line, :data:`gemmlib.llm.training.LOSS_BYTES`); unstated, Megatron Core's default;
    every other framework a fused loss (eager PyTorch's ``F.cross_entropy`` with ``compile: false``).
  * ``grad_reduce_dtype`` (bf16 | fp32): the dtype the data-parallel gradient reduction runs in, as stated (the
    Llama 3 paper: fp32); else the framework's default (torchtitan's FSDP2: fp32; Megatron's DDP: bf16); else bf16.
  * ``grad_accumulation_dtype: fp32`` (the Llama 3 paper): the weight gradients accumulated over the micro-batches
    in an fp32 buffer, a memory pass per micro-batch; unstated, fused (Megatron's ``gradient_accumulation_fusion``
    writes the wgrad GEMM's fp32 output in place) or one micro-batch.
  * ``sequence_parallel``: stated, else on with TP > 1: a reduce-scatter and an all-gather move the bytes
    of the all-reduce they replace, and the norms' activations split (Megatron's recipes always pair them).
  * ``tp_comm_overlap`` / ``ep_comm_overlap`` only where the source states them. The all-to-alls overlap as
    Megatron's ``overlap_moe_expert_parallel_comm`` does (at most 36.55 % of their time hidden, as measured), or
    with ``schedule: DualPipe`` as DeepSeek-V3's DualPipe does (all of it, as stated:
    :data:`gemmlib.llm.parallel.EP_OVERLAP_HIDDEN`); ``ep_comm_sms``, where the source or the framework's default
    states the SMs the overlapped all-to-alls hold (DeepSeek-V3's 20, DeepEP's default 20, a recipe's HybridEP
    ``moe_hybridep_num_sms``): the compute beside them runs on the rest.
Inference
  * the model, GPUs, ``tp`` ``pp``, the checkpoint's precision (weights and activations; the KV cache
    at ``kv_dtype`` when the checkpoint says, else the weights'), fused causal attention, the LM head
    on the last position.
  * ``engine`` (vllm | trtllm) with that engine's documented defaults (:class:`gemmlib.llm.serving.Engine`);
    ``batching: static`` (TensorRT-LLM's old ``gptSessionBenchmark``) runs the ``concurrency`` requests
    as one batch: every prompt prefilled in one step, then decoded together.
  * ``engine_version``: TensorRT-LLM before 0.7.0 decodes a GQA model with its masked MHA kernel, one
    thread block per query head, each reading its K/V head (no XQA, no "MMHA optimization for MQA and
    GQA" yet: CHANGELOG.md 0.7.0): the KV cache is read heads / kv_heads times per step
    (:attr:`gemmlib.llm.serving.Engine.grouped_decode`).
  * ``input_len``, ``output_len``, ``num_requests``, and ``request_rate`` ("inf": every request queued
    at once, the engine's limits decide how many run) or ``concurrency``.
Both use the estimator's default efficiency (the shape model, :mod:`gemmlib.llm.efficiency`) and, for
serving, the engine's host time per step (none for TensorRT-LLM's overlap scheduler). The error is
estimate / measured − 1.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, field, replace
from pathlib import Path

from gemmlib.core.errors import InputError
from gemmlib.core.hardware import get_hardware
from gemmlib.core.i18n import N_
from gemmlib.llm.accounting import Workload, efficiency_for, executed_model
from gemmlib.llm.config import ModelConfig
from gemmlib.llm.hf import read_config_file
from gemmlib.llm.parallel import Parallel
from gemmlib.llm.presets import from_name

KINDS = ("training", "inference")
METRICS = {
    "training": {"tokens_per_s_per_gpu": "tokens/s/GPU", "model_tflops_per_gpu": "TFLOP/s",
                 "gpu_hours_per_trillion_tokens": "GPU-hours"},
    "inference": {"output_tokens_per_s": "tokens/s", "output_tokens_per_s_per_gpu": "tokens/s/GPU",
                  "ttft_ms": "ms", "tpot_ms": "ms"},
}
SETUP_KEYS = {
    "training": {"tp", "pp", "vp", "cp", "dp", "ep", "etp", "zero", "fsdp", "precision", "global_batch", "seq_len",
                 "micro_batch", "recompute", "recompute_layers", "recompute_modules", "sequence_parallel",
                 "tp_comm_overlap", "ep_comm_overlap", "ep_comm_sms", "ep_dispatch_dtype",
                 "framework", "schedule", "tokens", "compile", "mtp", "fp8_recipe", "fp8_output_proj",
                 "cross_entropy_fusion_impl", "grad_reduce_dtype", "grad_accumulation_dtype"},
    "inference": {"tp", "pp", "ep", "dp", "precision", "kv_dtype", "input_len", "output_len", "concurrency",
                  "request_rate", "num_requests", "engine", "engine_version", "batching"},
}
REQUIRED_SETUP = {"training": ("global_batch", "seq_len", "precision"),
                  "inference": ("input_len", "output_len", "precision", "engine")}
PRECISIONS = ("bf16", "fp16", "fp8")
FRAMEWORK_ZERO = {"megatron": 1, "torchtitan": 3}
# the dtype a framework reduces the gradients in when the source does not say: torchtitan's FSDP2 in fp32
# (--training.mixed_precision_reduce, default and only choice "float32", at its 2024-12 benchmarks); Megatron's DDP
# in bf16 (grad_reduce_in_fp32=False, the default, and what Megatron-Bridge's performance scripts set)
FRAMEWORK_GRAD_REDUCE = {"torchtitan": "fp32", "megatron": "bf16"}
# TensorRT-LLM's first version whose decode attention reads a GQA model's K/V head once for its query heads:
# 0.7.0 ("MMHA optimization for MQA and GQA", "FP8 KV cache support for XQA kernel", CHANGELOG.md)
TRTLLM_GQA_DECODE = (0, 7, 0)
DEFAULT_DIR = Path(__file__).resolve().parents[2] / "benchmarks" / "published"


class PublishedError(InputError):
    """A file of the table that cannot be read as a published measurement."""


@dataclass(frozen=True)
class Measurement:
    """One published measured result and its set-up, as its file states them."""

    id: str
    kind: str
    source: dict
    model: dict
    hardware: dict
    setup: dict
    measured: dict
    notes: str = ""
    path: str = ""

    @property
    def metric(self) -> str:
        return self.measured["metric"]

    @property
    def value(self) -> float:
        return float(self.measured["value"])

    @property
    def unit(self) -> str:
        return self.measured["unit"]


MAX_FILE_BYTES = 1_000_000  # one measurement's file: a few kB


def _fail(path: Path, why: str) -> PublishedError:
    return PublishedError(N_("{file}: {why}"), file=path.name, why=why)


def _need(d: dict, key: str, kind: type | tuple, path: Path, where: str):
    if key not in d:
        raise _fail(path, f"{where} has no {key!r}")
    v = d[key]
    if isinstance(v, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise _fail(path, f"{where}.{key} must be {getattr(kind, '__name__', kind)}, got {v!r}")
    if not isinstance(v, kind):
        raise _fail(path, f"{where}.{key} must be {getattr(kind, '__name__', kind)}, got {v!r}")
    return v


def load_file(path: str | Path) -> Measurement:
    """One file, checked: every field present and of its type, the metric known for the kind, the value
    positive, the set-up's keys known, the parallel sizes consistent with the GPU count."""
    from gemmlib.core.files import read_regular

    path = Path(path)
    try:  # a regular file of at most MAX_FILE_BYTES: a FIFO, a link to /dev/zero or a folder is refused, not read
        d = json.loads(read_regular(path, MAX_FILE_BYTES, what="the file").decode("utf-8"))
    except InputError as e:
        raise _fail(path, e.render()) from None
    except UnicodeDecodeError as e:
        raise _fail(path, f"cannot be read ({e.__class__.__name__})") from None
    except json.JSONDecodeError as e:
        raise _fail(path, f"is not JSON (line {e.lineno}: {e.msg})") from None
    except RecursionError:
        raise _fail(path, "is nested too deeply to be a measurement") from None
    except ValueError as e:  # an integer of thousands of digits (Python's own limit; its advice left out)
        raise _fail(path, f"holds a value that cannot be read: {str(e).split(';')[0]}") from None
    if not isinstance(d, dict):
        raise _fail(path, "must hold one JSON object")
    known = {"id", "kind", "source", "model", "hardware", "setup", "measured", "notes"}
    extra = sorted(set(d) - known)
    if extra:
        raise _fail(path, f"unknown keys {', '.join(extra)}")
    mid = _need(d, "id", str, path, "the file")
    if mid != path.stem:
        raise _fail(path, f"id {mid!r} is not the file's name")
    kind = _need(d, "kind", str, path, "the file")
    if kind not in KINDS:
        raise _fail(path, f"kind must be training or inference, got {kind!r}")
    src = _need(d, "source", dict, path, "the file")
    for k in ("title", "url", "where"):
        if not isinstance(src.get(k), str) or not src.get(k):
            raise _fail(path, f"source.{k} must be a non-empty string")
    if not src["url"].startswith(("https://", "http://")):
        raise _fail(path, f"source.url must be a web address, got {src['url']!r}")
    model = _need(d, "model", dict, path, "the file")
    if sum(k in model for k in ("preset", "config")) != 1 or set(model) - {"preset", "config"}:
        raise _fail(path, "model must give exactly one of preset or config")
    hw = _need(d, "hardware", dict, path, "the file")
    _need(hw, "gpu", str, path, "hardware")
    gpus = _need(hw, "gpus", int, path, "hardware")
    if gpus < 1 or ("gpus_per_node" in hw and (not isinstance(hw["gpus_per_node"], int) or hw["gpus_per_node"] < 1)):
        raise _fail(path, "hardware.gpus and gpus_per_node must be whole numbers ≥ 1")
    bw = hw.get("bandwidth_tb_s")
    if bw is not None and (isinstance(bw, bool) or not isinstance(bw, (int, float)) or not bw > 0
                           or not math.isfinite(bw)):
        raise _fail(path, f"hardware.bandwidth_tb_s must be a positive number, got {bw!r}")
    between = hw.get("compute_between")
    if between is not None:
        if (not isinstance(between, list) or len(between) != 2 or not all(isinstance(g, str) for g in between)
                or between[0] == between[1]):
            raise _fail(path, f"hardware.compute_between must name two different GPUs, got {between!r}")
        for g in between:
            try:
                get_hardware(g)
            except InputError:
                raise _fail(path, f"hardware.compute_between names {g!r}, not a GPU of the catalogue") from None
    unknown_hw = sorted(set(hw) - {"gpu", "gpus", "gpus_per_node", "bandwidth_tb_s", "compute_between"})
    if unknown_hw:
        raise _fail(path, f"hardware has keys this table does not know: {', '.join(unknown_hw)}")
    setup = _need(d, "setup", dict, path, "the file")
    bad = sorted(set(setup) - SETUP_KEYS[kind])
    if bad:
        raise _fail(path, f"setup has keys a {kind} set-up does not know: {', '.join(bad)}")
    for k in REQUIRED_SETUP[kind]:
        if k not in setup:
            raise _fail(path, f"setup has no {k!r}")
    if setup["precision"] not in PRECISIONS:
        raise _fail(path, f"setup.precision must be one of {', '.join(PRECISIONS)}, got {setup['precision']!r}")
    for k in ("tp", "pp", "vp", "cp", "dp", "ep", "etp", "global_batch", "seq_len", "micro_batch", "input_len",
              "output_len", "concurrency", "num_requests"):
        if k in setup and setup[k] is not None and (isinstance(setup[k], bool) or not isinstance(setup[k], int)
                                                     or setup[k] < 1):
            raise _fail(path, f"setup.{k} must be a whole number ≥ 1, got {setup[k]!r}")
    if "fp8_output_proj" in setup and not isinstance(setup["fp8_output_proj"], bool):
        raise _fail(path, f"setup.fp8_output_proj must be true or false, got {setup['fp8_output_proj']!r}")
    if "ep_comm_sms" in setup:
        sms = setup["ep_comm_sms"]
        if isinstance(sms, bool) or not isinstance(sms, int) or sms < 1:
            raise _fail(path, f"setup.ep_comm_sms must be a whole number ≥ 1, got {sms!r}")
        if setup.get("ep_comm_overlap") is not True:
            raise _fail(path, "setup.ep_comm_sms counts the SMs of overlapped all-to-alls: it needs ep_comm_overlap true")
    first = "etp" if setup.get("etp") else "tp"  # folded: the experts' split sets the count
    split = math.prod(setup.get(k) or 1 for k in (first, "cp", "pp", "ep"))
    if gpus % split:
        raise _fail(path, f"{first} × cp × pp × ep = {split} does not divide the {gpus} GPUs")
    if setup.get("dp") and split * setup["dp"] != gpus:
        raise _fail(path, f"{first} × cp × pp × ep × dp = {split * setup['dp']}, not the {gpus} GPUs")
    if kind == "inference":
        if setup["engine"] not in ("vllm", "trtllm"):
            raise _fail(path, f"setup.engine must be vllm or trtllm, got {setup['engine']!r}")
        rate = setup.get("request_rate")
        if rate is not None and rate != "inf" and (isinstance(rate, bool) or not isinstance(rate, (int, float))
                                                    or not rate > 0):
            raise _fail(path, f"setup.request_rate must be a positive number or \"inf\", got {rate!r}")
        ver = setup.get("engine_version")
        if ver is not None and (not isinstance(ver, str) or not all(p.isdigit() for p in ver.split("."))):
            raise _fail(path, f"setup.engine_version must be a version such as \"0.6.1\", got {ver!r}")
        if setup.get("batching", "inflight") not in ("inflight", "static"):
            raise _fail(path, f"setup.batching must be inflight or static, got {setup['batching']!r}")
        if setup.get("batching") == "static" and not setup.get("concurrency"):
            raise _fail(path, "static batching needs setup.concurrency (the batch size)")
    meas = _need(d, "measured", dict, path, "the file")
    metric = _need(meas, "metric", str, path, "measured")
    if metric not in METRICS[kind]:
        raise _fail(path, f"measured.metric must be one of {', '.join(METRICS[kind])} for {kind}, got {metric!r}")
    value = _need(meas, "value", (int, float), path, "measured")
    if not value > 0 or not math.isfinite(value):
        raise _fail(path, f"measured.value must be a positive number, got {value!r}")
    unit = _need(meas, "unit", str, path, "measured")
    if unit != METRICS[kind][metric]:
        raise _fail(path, f"measured.unit of {metric} is {METRICS[kind][metric]!r}, got {unit!r}")
    notes = d.get("notes", "")
    if not isinstance(notes, str):
        raise _fail(path, "notes must be a string")
    return Measurement(mid, kind, src, model, hw, setup, meas, notes, str(path))


def load(folder: str | Path = DEFAULT_DIR) -> tuple[list[Measurement], list[str]]:
    """Every ``*.json`` in ``folder`` (not in its subfolders), read and checked: the good ones, sorted by
    kind and id, and one line per bad file."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(N_("{folder}: no such folder of published measurements") if not folder.exists() else
                         N_("{folder} is a file, not a folder of published measurements"), folder=str(folder))
    files = sorted(folder.glob("*.json"))
    if not files:
        raise InputError(N_("{folder} holds no measurement files (*.json)"), folder=str(folder))
    good, bad = [], []
    for p in files:
        try:
            good.append(load_file(p))
        except PublishedError as e:
            bad.append(str(e))
    if not good:
        raise InputError(N_("none of the {n} *.json files in {folder} is a published measurement (the first: {why})"),
                         n=len(files), folder=str(folder), why=bad[0] if len(bad[0]) <= 120 else bad[0][:119] + "…")
    good.sort(key=lambda m: (KINDS.index(m.kind), m.id))
    return good, bad


# ----- the mapping ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Mapping:
    """The estimator's inputs for one measurement, and the rules that produced the ones not stated."""

    model: ModelConfig
    workload: Workload
    parallel: Parallel
    gpu: str
    derived: tuple[str, ...] = ()
    training: dict = field(default_factory=dict)  # micro_batch, zero, recompute (None: least that fits)
    serving: dict = field(default_factory=dict)  # engine, input/output, requests, rate, concurrency


def _model(m: Measurement) -> ModelConfig:
    if "preset" in m.model:
        return from_name(m.model["preset"])
    folder = Path(m.path).parent.resolve()
    p = (folder / m.model["config"]).resolve()
    if not p.is_relative_to(folder):  # "/etc/…" or "../../x.json": a measurement reads only its own folder's files
        raise _fail(Path(m.path), f"model.config {m.model['config']!r} is outside the measurement's folder")
    return read_config_file(str(p))[0]


# Megatron Core's cross-entropy implementations (``cross_entropy_fusion_impl``) as the training model prices them
MEGATRON_LOSS = {"native": "megatron_native", "te": "fused"}


def _loss(framework: str, s: dict, derived: list[str]) -> str:
    """How the run's loss is computed: Megatron's stated ``cross_entropy_fusion_impl``, else Megatron Core's default
    (native); a fused loss for every other framework."""
    if framework != "megatron":
        return "fused"
    impl = s.get("cross_entropy_fusion_impl")
    if impl is None:
        impl = "native"
        derived.append("cross-entropy: Megatron Core's default cross_entropy_fusion_impl, native (not stated)")
    if impl not in MEGATRON_LOSS:
        raise InputError(N_("cross_entropy_fusion_impl must be one of {choices}, got {impl!r}"),
                         choices=", ".join(MEGATRON_LOSS), impl=impl)
    return MEGATRON_LOSS[impl]


def _dispatch_fp8(s: dict) -> bool:
    """``ep_dispatch_dtype``: the dtype an 8-bit run's EP dispatch sends its tokens in, as the source states
    (DeepSeek-V3: fp8); unstated, Megatron's default, bf16."""
    d = s.get("ep_dispatch_dtype", "bf16")
    if d not in ("bf16", "fp8"):
        raise InputError(N_("ep_dispatch_dtype must be bf16 or fp8, got {dtype!r}"), dtype=d)
    return d == "fp8"


def _modules(s: dict) -> tuple[str, ...]:
    """``recompute_modules``: a list of Megatron's module names (checked by :class:`gemmlib.llm.training.Training`)."""
    mods = s.get("recompute_modules") or ()
    if isinstance(mods, str) or not isinstance(mods, (list, tuple)):
        raise InputError(N_("recompute_modules must be a list of module names, got {mods!r}"), mods=mods)
    return tuple(mods)


def mapping(m: Measurement) -> Mapping:
    """The estimator's inputs from the facts of ``m``'s set-up (see the module docstring)."""
    s, hw = m.setup, m.hardware
    cfg = _model(m)
    tp, pp, cp, ep = (s.get(k) or 1 for k in ("tp", "pp", "cp", "ep"))
    etp = s.get("etp") or 0
    dp = s.get("dp") or hw["gpus"] // ((etp or tp) * cp * pp * ep)
    derived: list[str] = []
    if not s.get("dp"):
        derived.append(f"dp = {hw['gpus']} GPUs / ({'etp' if etp else 'tp'}·cp·pp·ep) = {dp}")
    prec = s["precision"]
    gpn = hw.get("gpus_per_node", 0)
    if m.kind == "training":
        fw = s.get("framework", "")
        sp = s.get("sequence_parallel")
        if sp is None:
            sp = tp > 1
            if sp:
                derived.append("sequence parallelism with TP (not stated: it moves the all-reduces' bytes and holds less)")
        par = Parallel(tp=tp, pp=pp, ep=ep, dp=dp, cp=cp, virtual_stages=s.get("vp") or 1, gpus_per_node=gpn,
                       sequence_parallel=bool(sp), tp_comm_overlap=bool(s.get("tp_comm_overlap")),
                       ep_comm_overlap=bool(s.get("ep_comm_overlap")), etp=etp,
                       ep_comm_sms=s.get("ep_comm_sms", 0),
                       ep_overlap="dualpipe" if s.get("schedule") == "DualPipe" else "megatron",
                       ep_fp8_dispatch=_dispatch_fp8(s))
        wl = Workload(batch=s["global_batch"], seq_len=s["seq_len"], weight_dtype="bf16", act_dtype=prec,
                      kv_dtype="bf16", attention="fused", causal=True, lm_head="all")
        zero = s.get("zero")
        if zero is None:
            zero = 3 if s.get("fsdp") else FRAMEWORK_ZERO.get(fw, 0)
            derived.append(f"ZeRO {zero} ({'FSDP' if s.get('fsdp') else fw or 'no sharding stated'})")
        mb = s.get("micro_batch") or 1
        if not s.get("micro_batch"):
            derived.append("micro-batch 1 per GPU (not stated)")
        loss = _loss(fw, s, derived)
        grad_reduce = s.get("grad_reduce_dtype")
        if grad_reduce is None:
            grad_reduce = FRAMEWORK_GRAD_REDUCE.get(fw, "bf16")
            if fw in FRAMEWORK_GRAD_REDUCE:
                derived.append(f"gradients reduced in {grad_reduce} ({fw}'s default)")
        if grad_reduce not in ("bf16", "fp32"):
            raise InputError(N_("grad_reduce_dtype must be bf16 or fp32, got {dtype!r}"), dtype=grad_reduce)
        accum = s.get("grad_accumulation_dtype")  # stated fp32: a pass per micro-batch; else fused into the GEMM
        if accum not in (None, "fp32"):
            raise InputError(N_("grad_accumulation_dtype can only be fp32, got {dtype!r}"), dtype=accum)
        return Mapping(cfg, wl, par, hw["gpu"], tuple(derived),
                       training={"micro_batch": mb * par.attn_ep, "zero": zero, "recompute": s.get("recompute"),
                                 "eager": s.get("compile") is False, "sdpa": fw == "torchtitan",
                                 "mtp": bool(s.get("mtp")),
                                 "fp8_recipe": s.get("fp8_recipe") or "delayed",
                                 "fp8_head": s.get("fp8_output_proj") is True,
                                 "loss": loss, "grad_reduce": grad_reduce,
                                 "recompute_layers": s.get("recompute_layers") or 0,
                                 "recompute_modules": _modules(s),
                                 "grad_accum": "fp32" if accum else "fused"})
    par = Parallel(tp=tp, pp=pp, ep=ep, dp=dp, gpus_per_node=gpn)
    kv = s.get("kv_dtype") or prec
    wl = Workload(batch=1, seq_len=s["input_len"], new_tokens=s["output_len"], weight_dtype=prec, act_dtype=prec,
                  kv_dtype=kv, attention="fused", causal=True, lm_head="last")
    rate = s.get("request_rate")
    sv = {"engine": s["engine"], "batching": s.get("batching", "inflight"), "input_len": s["input_len"],
          "output_len": s["output_len"], "requests": s.get("num_requests"), "concurrency": s.get("concurrency"),
          "rate": math.inf if rate == "inf" else rate, "engine_version": s.get("engine_version")}
    return Mapping(cfg, wl, par, hw["gpu"], tuple(derived), serving=sv)


# ----- estimates ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    id: str
    kind: str
    metric: str
    unit: str
    measured: float
    estimate: float | None
    error: float | None  # estimate / measured − 1
    setup: str  # the estimator's inputs in words
    derived: tuple[str, ...]
    problem: str = ""  # why there is no estimate

    def to_dict(self) -> dict:
        return {"id": self.id, "kind": self.kind, "metric": self.metric, "unit": self.unit, "measured": self.measured,
                "estimate": self.estimate, "error": self.error, "setup": self.setup, "derived": list(self.derived),
                "problem": self.problem}


def _train(mp: Mapping, hw, efficiency):
    from gemmlib.llm.training import Training, train

    cfg = executed_model(mp.model, mp.workload)
    mp = replace(mp, model=cfg)
    efficiency = efficiency_for(efficiency, hw, cfg, mp.workload, mp.parallel)[0]
    t = mp.training
    rc = t["recompute"]
    for choice in ([rc] if rc else ["none", "selective", "full"]):
        tr = train(mp.model, mp.workload, hw, mp.parallel,
                   Training(tokens=1e12, micro_batch=t["micro_batch"], recompute=choice, zero=t["zero"],
                            eager=t.get("eager", False), sdpa=t.get("sdpa", False), mtp=t.get("mtp", False),
                            fp8_recipe=t.get("fp8_recipe", "delayed"), fp8_head=t.get("fp8_head", False),
                            loss=t.get("loss", "fused"),
                            grad_reduce=t.get("grad_reduce", "bf16"), grad_accum=t.get("grad_accum", "fused"),
                            recompute_layers=t.get("recompute_layers", 0) if choice == "full" else 0,
                            recompute_modules=t.get("recompute_modules", ()) if choice == "selective" else ()),
                   efficiency)
        if rc or tr.memory.fits:
            return tr, choice, not rc
    return tr, "full", True


def estimate(m: Measurement, efficiency=None) -> Row:
    """The estimate of ``m``'s metric from its set-up's facts (a row with ``problem`` when there is none)."""
    try:
        mp = mapping(m)
        hw = get_hardware(mp.gpu)
        derived = list(mp.derived)
        bw = m.hardware.get("bandwidth_tb_s")
        if bw is not None:  # the measuring GPUs' stated memory bandwidth, not the catalogue row's
            derived.append(f"memory bandwidth {bw:g} TB/s as the source states (the catalogue's {hw.name}: "
                           f"{hw.bandwidth / 1e12:g})")
            hw = hw.with_overrides(bandwidth=bw * 1e12)
        between = m.hardware.get("compute_between")
        if between is not None:  # the middle of the stated range, format by format
            lo, hi = (dict(get_hardware(g).peaks) for g in between)
            mid = {d: (lo[d] + hi[d]) / 2 for d in lo if d in hi}
            derived.append(f"compute peaks between the {between[0]}'s and the {between[1]}'s as the source states: "
                           f"their middle (bf16 {mid['bf16'] / 1e12:g} TFLOP/s)" if "bf16" in mid else
                           f"compute peaks the middle of the {between[0]}'s and the {between[1]}'s")
            hw = hw.with_overrides(peaks=mid)
        mp.parallel.check(mp.model, m.hardware["gpus"])
        par = mp.parallel
        if m.kind == "training":
            tr, rc, picked = _train(mp, hw, efficiency)
            if picked:
                derived.append(f"recompute {rc}: the least whose per-GPU memory fits")
            value = {"tokens_per_s_per_gpu": tr.tokens_per_s / tr.gpus,
                     "model_tflops_per_gpu": tr.model_flops_per_gpu_s / 1e12,
                     "gpu_hours_per_trillion_tokens": 1e12 / tr.tokens_per_s * tr.gpus / 3600}[m.metric]
            words = (f"TP{par.tp}" + (f" ETP{par.etp}" if par.folded else "") + f" CP{par.cp} PP{par.pp}"
                     + (f" VP{par.virtual_stages}" if par.virtual_stages > 1 else "")
                     + f" EP{par.ep} DP{par.dp}, {mp.workload.batch}×{mp.workload.seq_len}, mb {mp.training['micro_batch']},"
                     f" ZeRO {mp.training['zero']}, recompute {rc}"
                     + (f" ({mp.training['recompute_layers']} layers per chunk)"
                        if rc == "full" and mp.training.get("recompute_layers") else "")
                     + (f" ({', '.join(mp.training['recompute_modules'])})"
                        if rc == "selective" and mp.training.get("recompute_modules") else "")
                     + f", {mp.workload.act_dtype}"
                     + (", SP" if par.sequence_parallel else "") + (", eager" if mp.training.get("eager") else
                                                                          ", SDPA" if mp.training.get("sdpa") else "")
                     + (f", all-to-alls on {par.ep_comm_sms} SMs" if par.ep_comm_sms else ""))
        else:
            value, words = _serve(m, mp, hw, efficiency, derived)
        return Row(m.id, m.kind, m.metric, m.unit, m.value, value, value / m.value - 1, words, tuple(derived))
    except InputError as e:
        return Row(m.id, m.kind, m.metric, m.unit, m.value, None, None, "", (), str(e))


def _serve(m: Measurement, mp: Mapping, hw, efficiency, derived: list[str]) -> tuple[float, str]:
    from gemmlib.llm.serving import Engine, Server

    sv = mp.serving
    static = sv["batching"] == "static"
    ver = sv.get("engine_version")
    grouped = not (sv["engine"] == "trtllm" and ver and tuple(int(p) for p in ver.split(".")) < TRTLLM_GQA_DECODE)
    if not grouped and mp.model.kv_heads < mp.model.heads and not mp.model.is_mla:
        derived.append(f"TensorRT-LLM {ver}: decode attention reads each K/V head once per query head "
                       f"(masked MHA, no GQA kernel before 0.7.0)")
    eng = Engine(sv["engine"], grouped_decode=grouped)
    if static:
        c = sv["concurrency"]
        eng = Engine(sv["engine"], max_num_seqs=c, max_batched_tokens=c * sv["input_len"], grouped_decode=grouped)
        derived.append(f"static batch: {c} prompts prefilled in one step, then decoded together")
    srv = Server(mp.model, mp.workload, hw, mp.parallel, efficiency, engine=eng, input_len=sv["input_len"],
                 output_len=sv["output_len"])
    if static:
        p = srv.point(sv["concurrency"], sv["concurrency"])
    elif sv["rate"] is not None:
        p = srv.at_rate(sv["rate"], sv["requests"], concurrency=sv["concurrency"])
        if sv["rate"] == math.inf:
            derived.append(f"all {p.requests:,} requests queued at once; {srv.engine.name} admits up to "
                           f"{srv.engine.max_num_seqs:,} and what its KV blocks hold")
    else:
        p = srv.point(sv["concurrency"] or 1, sv["requests"])
    value = {"output_tokens_per_s": p.tokens_per_s, "output_tokens_per_s_per_gpu": p.tokens_per_s_per_gpu,
             "ttft_ms": p.ttft_s * 1e3, "tpot_ms": p.tpot_s * 1e3}[m.metric]
    par = mp.parallel
    words = (f"TP{par.tp} PP{par.pp}, {sv['input_len']}/{sv['output_len']}, {srv.engine.name}"
             + (" static" if static else "") + f", {mp.workload.weight_dtype} weights, KV {mp.workload.kv_dtype}, "
             + (f"rate {sv['rate']:g}" if sv["rate"] is not None and not static else f"concurrency {p.concurrency}")
             + f", {p.requests:,} request{'' if p.requests == 1 else 's'}")
    return value, words


def summary(rows: list[Row]) -> dict:
    """Median and worst |error| for training and for inference (rows with an estimate)."""
    out = {}
    for kind in KINDS:
        errs = [abs(r.error) for r in rows if r.kind == kind and r.error is not None]
        out[kind] = {"rows": sum(r.kind == kind for r in rows), "estimated": len(errs),
                     "median_abs_error": statistics.median(errs) if errs else None,
                     "worst_abs_error": max(errs) if errs else None}
    return out


def table(folder: str | Path = DEFAULT_DIR, efficiency=None) -> tuple[list[Row], list[str], dict]:
    """Every row of the table with its estimate, the bad files, and the summary."""
    ms, bad = load(folder)
    rows = [estimate(m, efficiency) for m in ms]
    return rows, bad, summary(rows)
