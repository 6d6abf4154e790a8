"""The LLM Estimator page's presenter: its inputs → ONE estimate → what each part of the page shows.

``pages/4_LLM_Estimator.py`` only lays out. It draws the widgets (each bound to its URL key, with
its words and range from :data:`FIELDS` and its default from :data:`DEFAULTS`), reads them into
:class:`Inputs`, gets the model
(:func:`model`, or :func:`parse_upload` for a config.json), the one estimate (:func:`estimate`:
``gemmlib.llm.scaleout.estimate``, the same code path as ``python -m gemmlib estimate``) and what
the headline and the tabs show (:func:`present`), and draws that. The training run, the serving
curve and the second configuration (B) are built on the same estimate when their tab asks for them
(:func:`training`, :func:`serving`, :func:`compare`), each with its own inputs.

What comes back is ready to draw: texts in the reader's language (``gettext``: the page's
``ui.gettext_for(lang)``), markdown with the visitor's own text escaped (``escape``: the page's
``ui.md``), Vega-Lite specs (``gemmlib.charts``), metrics as :class:`Metric` and tables as
:class:`Table`. The data itself (the ops' CSV, the JSON download) stays English. Nothing here
imports streamlit; the page caches the calls.
"""

from __future__ import annotations

import json
import math
import re
from collections import ChainMap
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from typing import Any

import pandas as pd

from gemmlib.charts.model import (
    WORD_OPS,
    arrow_safe,
    compare_rows,
    compare_spec,
    flops_by_op_spec,
    memory_spec,
    ops_records,
    roofline_spec,
)
from gemmlib.charts.scaleout import (
    comm_by_op_spec,
    models_spec,
    per_gpu_memory_spec,
    serving_records,
    serving_spec,
)
from gemmlib.core import format as fmt
from gemmlib.core.ceilings import measured_hardware_all
from gemmlib.core.dtypes import DTYPES
from gemmlib.core.errors import InputError
from gemmlib.core.flops import DEFAULT_EFFICIENCY
from gemmlib.core.hardware import CATALOGUE, DEFAULT_GPU, Hardware, parse_hardware
from gemmlib.core.i18n import N_, Msg, Text, Translate, english
from gemmlib.core.interconnect import hardware_with, measured_links
from gemmlib.llm.accounting import (
    CONVENTIONS,
    DEFAULT_CONVENTION,
    NORM_NAMES,
    Workload,
    dumps,
    efficiency_for,
    serving_dtypes,
)
from gemmlib.llm.checkpoint import QUANTIZED_8BIT, weight_format
from gemmlib.llm.config import NORM_KINDS, QK_NORMS, ModelConfig, layer_pattern, moe_pattern
from gemmlib.llm.hf import MAX_CONFIG_BYTES, SUPPORTED_MODEL_TYPES, read_config_json
from gemmlib.llm.memory import RECOMPUTE_MODULES
from gemmlib.llm.parallel import EP_OVERLAP_HIDDEN, Parallel
from gemmlib.llm.presets import DEFAULT_PRESET, PRESETS
from gemmlib.llm.quant import WEIGHT_FORMATS
from gemmlib.llm.scaleout import ScaleOutEstimate
from gemmlib.llm.scaleout import estimate as scaleout_estimate
from gemmlib.llm.serving import (
    ARRIVALS,
    DEFAULT_RATE_REQUESTS,
    ENGINE_LIMIT,
    ENGINES,
    MAX_CONCURRENCY,
    MAX_REQUESTS,
    PAGE_STEP_BUDGET,
    Engine,
    Serving,
)
from gemmlib.llm.serving import serving as serving_curve
from gemmlib.llm.training import (
    LLAMA31_405B,
    TrainEstimate,
    Training,
    dp_communication_words,
    modules_the_model_lacks,
    train,
)
from gemmlib.views.published import link_sentence

Escape = Callable[[Any], str]

# The options of the page's widgets (stable ids: the URL holds them). "auto": what the convention does.
AUTO = "auto"
DT = list(DTYPES)
WDT = [AUTO, *DT, *WEIGHT_FORMATS]  # auto: the dtype the convention serves the checkpoint at
ADT = [AUTO, *DT]
SOURCES = ["preset", "custom", "config.json"]
RECOMPUTE = ["none", "selective", "full"]
RECOMPUTE_MODULE_NAMES = list(RECOMPUTE_MODULES)  # selective recomputation's modules (Megatron's names, shown as code)
ENGINE_NAMES = list(ENGINES)  # the serving schedulers simulated (vllm, trtllm)
ARRIVAL_NAMES = list(ARRIVALS)  # a request rate's arrivals (poisson, fixed), as --arrival
PRESET_NAMES = list(PRESETS)
CONVENTION_NAMES = list(CONVENTIONS)  # engine (the default), transformers (the reference)
ATTENTION = [AUTO, "fused", "eager"]
CAUSAL = [AUTO, "causal", "dense"]
LM_HEAD = [AUTO, "last", "all"]
MLA_DECODE = [AUTO, "absorbed", "eager"]
EXPERTS = [AUTO, "routed", "eager"]
RADIO_OVERRIDES = {"le_attn": ATTENTION, "le_mla": MLA_DECODE}  # the convention's overrides, as the page draws them
OVERRIDES = {"le_causal": CAUSAL, "le_lmh": LM_HEAD, "le_exp": EXPERTS, "le_wdt": WDT, "le_adt": ADT, "le_kvdt": ADT}
QK_NORM = list(QK_NORMS)
NORMS = list(NORM_KINDS)  # their names: NORM_NAMES
FAMILIES = SUPPORTED_MODEL_TYPES  # the config.json families the parser reads
# Option values stay stable ids (the URL, the tests); what each shows, N_-marked (shown through gettext).
LABELS = {"preset": N_("preset"), "custom": N_("custom"), "config": N_("from the config"), "same": N_("as A"), "gated": N_("gated"),
          "plain": N_("plain"), "eager": N_("eager"), "fused": N_("fused"), "absorbed": N_("absorbed"),
          "none": N_("none"), "selective": N_("selective"), "full": N_("full"), "head": N_("head"),
          "width": N_("width"), "catalogue": N_("catalogue"), "all": N_("all"), "last": N_("last"),
          "prefill": N_("prefill"), "decode": N_("decode"), "compute": N_("compute-bound"), "memory": N_("memory-bound"),
          "overhead": N_("overhead-bound"),  # an op's bound: its kernels' fixed time the largest part (llm.efficiency)
          "learned": N_("learned"), "rotary": N_("rotary"), "alibi": "ALiBi", "GEMM": "GEMM",
          "not GEMM": N_("not GEMM"), AUTO: N_("as the convention"), "causal": N_("causal"), "dense": N_("dense"),
          "routed": N_("routed"), "engine": N_("engine (what an engine runs)"),
          "transformers": N_("transformers (the reference)"), "megatron": N_("Megatron (≤ 36.55% hidden)"),
          "dualpipe": N_("DualPipe (all hidden)")}
EP_OVERLAPS = ["none", *EP_OVERLAP_HIDDEN]  # the Training tab's EP overlap: none, or the schedule (--ep-comm-overlap)
BIASES = {"qkv": "QKV", "o": "O", "mlp": "MLP", "lm_head": "lm_head"}  # ModelConfig.describe()'s biases
GROUPS = {"tp": "TP", "pp": "PP", "ep": "EP", "dp": "DP", "etp": "ETP"}  # parallel groups, as the sidebar names them
MAXI = {"layers": 1000, "hidden": 65536, "heads": 1024, "kv": 1024, "hd": 4096, "ffn": 262144,
        "vocab": 1_000_000, "experts": 1024, "topk": 1024, "batch": 4096, "seq": 1_048_576, "new": 1_048_576,
        "gpus": 4096}  # the largest value each whole-number input takes
OPS_COLUMNS = {"phase": N_("phase"), "op": N_("op"), "kind": N_("kind"), "count": N_("count"), "bytes": N_("bytes"),
               "weight bytes": N_("weight bytes"), "activation bytes": N_("activation bytes"),
               "KV bytes": N_("KV bytes"), "FLOP/byte": N_("FLOP/byte"), "bound": N_("bound"), "time": N_("time"),
               "note": N_("note")}
VARIANT_COLUMNS = {"variant": N_("variant"), "causal": N_("causal"), "lm_head": "lm_head", "selected": N_("selected"),
                   "prefill_flops": N_("prefill FLOPs"), "prefill_macs": N_("prefill MACs"),
                   "decode_flops": N_("decode FLOPs"), "decode_macs": N_("decode MACs")}
SERVING_COLUMNS = {"concurrency": N_("concurrency"), "tokens/s": N_("tokens/s"),
                   "tokens/s per GPU": N_("tokens/s per GPU"), "TPOT ms": N_("TPOT ms"), "TTFT ms": N_("TTFT ms"),
                   "fits": N_("fits"), "best": N_("best")}  # serving_records' keys, as shown
TABS = [N_("FLOPs by op"), N_("Memory"), N_("Roofline"), N_("Scale-out"), N_("Training"), N_("Serving"),
        N_("Switches & rules of thumb"), N_("A vs B"), N_("Download")]  # the page's tabs, in order
_COUNTS = ("count", "FLOPs", "MACs", "bytes", "weight bytes", "activation bytes", "KV bytes")  # exact: every digit
CONVENTION_WORDS = {"engine": N_("the engine convention (what an inference or training engine runs)"),
                    "transformers": N_("the reference convention (transformers' eager code, as `FlopCounterMode` "
                                       "counts it)")}
SWITCH_NAMES = {"attention": N_("attention"), "causal": N_("attention counting"), "lm_head": N_("LM head in the prefill"),
                "experts_compute": N_("MoE experts"), "mla": N_("MLA decode")}  # Workload's switches, as the page names them
_BASE = PRESETS[DEFAULT_PRESET]
_t = fmt.duration  # every duration in one style (gemmlib.core.format)


# ----------------------------------------------------------------------------- inputs
class _FromURL:
    """Inputs whose field ``x`` is the widget (and the URL parameter) ``le_x``."""

    @classmethod
    def keys(cls) -> dict[str, Any]:
        """Each input's widget key and its default: ``{"le_batch": 1, ...}``."""
        return {f"le_{f.name}": f.default for f in fields(cls)}  # type: ignore[arg-type]

    @classmethod
    def from_state(cls, state: Mapping[str, Any]):
        """The inputs as the widgets hold them (a widget not drawn in this run keeps its default)."""
        return cls(**{f.name: state[f"le_{f.name}"] for f in fields(cls) if f"le_{f.name}" in state})  # type: ignore


@dataclass(frozen=True)
class Inputs(_FromURL):
    """What the one estimate depends on: the model, the workload, the GPU and its parallelism."""

    src: str = "preset"  # one of SOURCES; a config.json comes to estimate() as its parsed model
    preset: str = DEFAULT_PRESET
    # a custom model (src == "custom"): its shape, then its architecture features
    layers: int = _BASE.layers
    hidden: int = _BASE.hidden
    heads: int = _BASE.heads
    kv: int = _BASE.kv_heads
    hd: int = 0
    ffn: int = _BASE.ffn
    vocab: int = _BASE.vocab
    mlp: str = "gated"
    experts: int = 0
    topk: int = 0
    tied: bool = False
    sw: int = 0  # sliding window
    swp: str = "all"  # which layers slide (config.layer_pattern)
    qkn: str = "none"
    norm: str = "rms"
    npl: int = 2  # norms per layer
    par: bool = False  # parallel attention + MLP
    mla_kv: int = 0
    mla_q: int = 0
    mla_rope: int = 0
    vhd: int = 0
    effn: int = 0
    sffn: int = 0
    sgate: bool = False
    dense: int = 0
    every: int = 1
    # the workload, its counting convention and the overrides of its switches ("auto": the convention's)
    batch: int = 1
    seq: int = 1024
    new: int = 256
    ctx: bool = False  # decode only: the prompt is already cached
    conv: str = DEFAULT_CONVENTION
    attn: str = AUTO
    causal: str = AUTO
    lmh: str = AUTO
    mla: str = AUTO
    exp: str = AUTO
    wdt: str = AUTO
    adt: str = AUTO
    kvdt: str = AUTO
    # the hardware, the links inside a node (the catalogue's, or one measured here: issue 13), parallelism
    gpu: str = DEFAULT_GPU
    gpus: int = 1
    flat: bool = False  # a flat efficiency (eff) instead of the shape model
    eff: float = DEFAULT_EFFICIENCY
    link: str = "catalogue"
    tp: int = 1
    pp: int = 1
    ep: int = 1
    dp: int = 1
    etp: int = 0  # expert tensor parallel; 0: as TP (no folding)
    gpn: int = 0
    overlap: bool = False
    sp: bool = False
    # the Training tab's switch and CP: with the run on, its CP ranks are the inference phases' data replicas, as
    # `estimate --train --cp N` takes them (the headline on the run's GPUs); off, the CP box counts for nothing
    train: bool = False
    cp: int = 1


@dataclass(frozen=True)
class TrainingInputs(_FromURL):
    train: bool = False
    tokens: float = 1e12
    mb: int = 1
    rc: str = "none"
    zero: int = 0
    vs: int = 1  # virtual pipeline stages per GPU (interleaved 1F1B), as --virtual-stages
    tpo: bool = False  # Transformer Engine's TP communication overlap, as --tp-comm-overlap
    epo: str = "none"  # the EP all-to-alls overlapped: none, or the schedule (EP_OVERLAPS), as --ep-comm-overlap
    epsm: int = 0  # with epo: the SMs the overlapped all-to-alls hold beside the compute, as --ep-comm-sms
    cp: int = 1  # context parallel ranks, as --cp: the training run's GPUs are the layout's × cp
    rcl: int = 0  # with rc "full": the first N layers of each model chunk (0: every layer), as --recompute-layers
    rcm: tuple[str, ...] = ()  # with rc "selective": what it reruns (none chosen: core_attn), as --recompute-modules


@dataclass(frozen=True)
class ServingInputs(_FromURL):
    """The Serving tab's inputs, each the CLI flag named beside it (0: the flag left out). Each request is the
    sidebar's prompt and new tokens (``--input-len``, ``--output-len``)."""

    serve: bool = False
    tpot: float = 50.0  # ms; 0: no target (--tpot-target-ms)
    engine: str = "vllm"  # the scheduler simulated, as --engine
    rate: float = 0.0  # requests per second (--request-rate); 0: the curve at fixed concurrencies
    offline: bool = False  # every request at once (--request-rate inf): the rate box counts for nothing
    kvb: int = 0  # tokens per KV block (--kv-block-size); 0: the engine's
    ttft: float = 0.0  # ms; 0: no target (--ttft-target-ms)
    conc: int = 0  # one point at this many requests in flight (--concurrency); with a rate: at most this many
    arrival: str = "poisson"  # with a rate: Poisson arrivals or fixed gaps (--arrival)
    nreq: int = 0  # requests per point (--num-requests); 0: 4 x the concurrency, 1,000 at a rate
    maxseqs: int = 0  # running requests at most (--max-num-seqs); 0: the engine's
    maxtok: int = 0  # tokens per engine step at most (--max-num-batched-tokens); 0: the engine's

    @property
    def request_rate(self) -> float | None:
        """``--request-rate``: ``math.inf`` with every request at once, the box's rate, or None (0: left out)."""
        return math.inf if self.offline else float(self.rate) or None

    @property
    def point(self) -> bool:
        """One point (a request rate, every request at once or one concurrency), no search for a best concurrency."""
        return bool(self.request_rate or self.conc)


@dataclass(frozen=True)
class CompareInputs(_FromURL):
    """Configuration B. It starts as a copy of A: the model and the weights "as A" (``SAME``: an uploaded
    config.json and the convention's weight dtype included), the numbers at A's defaults, and turning the
    comparison on copies A's current numbers and GPU into B (:func:`b_copy_of_a`)."""

    cmp: bool = False
    b_preset: str = "same"  # SAME, or a preset
    b_batch: int = 1
    b_seq: int = 1024
    b_new: int = 256
    b_wdt: str = "same"  # SAME, a dtype or a weight format
    b_gpu: str = DEFAULT_GPU
    b_gpus: int = 1


@dataclass(frozen=True)
class UseCase:
    """A workload people size for: its prompt and output lengths (the ISL/OSL pairs TensorRT-LLM's performance
    overview measures; benchmarks/published holds those rows), the Serving tab's TPOT target (an interactive
    reader: 50 ms a token is 20 tokens/s, above reading speed; code completion waits on each token) and, for
    offline work, a large batch and no latency target."""

    label: str  # N_-marked
    seq: int
    new: int
    tpot_ms: float  # 0: no target (throughput only)
    batch: int = 1


USE_CASES: dict[str, UseCase] = {
    "chat": UseCase(N_("chat (1,000 → 1,000 tokens, ≤ 50 ms a token)"), 1000, 1000, 50.0),
    "summarise": UseCase(N_("summarisation (5,000 → 500, ≤ 50 ms)"), 5000, 500, 50.0),
    "code": UseCase(N_("code completion (2,048 → 128, ≤ 20 ms)"), 2048, 128, 20.0),
    "rag": UseCase(N_("long-context RAG (20,000 → 2,000, ≤ 50 ms)"), 20000, 2000, 50.0),
    "offline": UseCase(N_("batch offline (1,000 → 1,000, batch 256, no latency target)"), 1000, 1000, 0.0, 256),
}


def use_case_values(name: str | None) -> dict[str, Any]:
    """The widgets a use case sets: batch, prompt, new tokens (decode-only off), the Serving tab's TPOT
    target, and the serving curve turned on. The offline batch sends every request at once (the offline switch,
    ``--request-rate inf``); an interactive one asks for the curve and its best concurrency, so a single point left
    from before (a rate, a concurrency, the offline switch) is cleared. Nothing for None (the picker's placeholder)."""
    if name not in USE_CASES:
        return {}
    u = USE_CASES[name]
    offline = u.tpot_ms == 0
    return {"le_batch": u.batch, "le_seq": u.seq, "le_new": u.new, "le_ctx": False, "le_tpot": u.tpot_ms,
            "le_serve": True, "le_offline": offline, **({} if offline else {"le_rate": 0.0, "le_conc": 0})}


SAME = "same"  # configuration B's "as A" for its model and its weights
B_MODELS = [SAME, *PRESETS]
B_WEIGHTS = [SAME, *DTYPES, *WEIGHT_FORMATS]
B_COPIED = {"le_b_batch": "le_batch", "le_b_seq": "le_seq", "le_b_new": "le_new", "le_b_gpu": "le_gpu",
            "le_b_gpus": "le_gpus"}  # B's widget <- A's widget, copied when the comparison is turned on


def b_copy_of_a(state: Mapping[str, Any]) -> dict[str, Any]:
    """B's widget values as a copy of A's (``state``: the page's session state): B's model and weights "as A",
    A's batch, prompt, new tokens, GPU and GPU count (the count the parallel sizes give)."""
    a = Inputs.from_state(state)
    n = parallel(a).gpus
    return {"le_b_preset": SAME, "le_b_wdt": SAME, **{b: getattr(a, k[3:]) for b, k in B_COPIED.items()},
            "le_b_gpus": n}


@dataclass(frozen=True)
class Field:
    """One widget's words and range: its label (N_-marked, translated where it is shown) or a ``name`` shown
    as written, its hover help (N_-marked), a number's lowest and highest value, and what an empty multiselect
    shows (N_-marked)."""

    label: str = ""
    help: str | None = None
    lo: float | None = None
    hi: float | None = None
    name: str | None = None
    placeholder: str | None = None  # N_-marked: what an empty multiselect shows


def _range(key: str, lo: int = 0) -> dict:
    return {"lo": lo, "hi": MAXI[key]}


FIELDS: dict[str, Field] = {  # every widget of the page bound to the URL, by key
    # the model
    "le_src": Field(N_("Source")), "le_preset": Field(N_("Preset")),
    "le_layers": Field(N_("layers"), **_range("layers", 1)), "le_hidden": Field(N_("hidden size"), **_range("hidden", 1)),
    "le_heads": Field(N_("query heads"), **_range("heads", 1)), "le_kv": Field(N_("KV heads (0 = same)"), **_range("kv")),
    "le_hd": Field(N_("head dim (0 = hidden/heads)"), **_range("hd")), "le_ffn": Field(N_("FFN width"), **_range("ffn", 1)),
    "le_vocab": Field(N_("vocabulary"), **_range("vocab", 1)), "le_mlp": Field(name="MLP"),
    "le_experts": Field(N_("experts (0 = dense)"), **_range("experts")),
    "le_topk": Field(N_("experts per token"), **_range("topk")),
    "le_tied": Field(N_("tied embeddings (LM head = embedding)")),
    "le_sw": Field(N_("sliding window (0 = none)"), N_("keys a sliding-window layer attends to"), 0, 1 << 24),
    "le_swp": Field(N_("sliding layers"), N_("`all`, `alternate` (layers 0, 2, …), N:M (N sliding then M full, e.g. "
                                             "5:1 for Gemma 3) or a unit of S/F letters")),
    "le_qkn": Field(N_("qk-norm"), N_("head: one norm of head_dim shared by the heads (Qwen3, Gemma 3); width: over "
                                      "all heads (OLMo 2)")),
    "le_norm": Field(N_("norm")),
    "le_npl": Field(N_("norms per layer"), N_("1: a parallel block's shared norm; 4: Gemma's sandwich")),
    "le_par": Field(N_("parallel attention + MLP")),
    "le_mla_kv": Field(N_("KV latent rank"), None, 0, 65536),
    "le_mla_q": Field(N_("query rank"), N_("0: a plain q_proj (DeepSeek-V2-Lite)"), 0, 65536),
    "le_mla_rope": Field(N_("rotary dims"), N_("qk_rope_head_dim: part of the head dim"), 0, 4096),
    "le_vhd": Field(N_("value head dim (0 = head dim)"), **_range("hd")),
    "le_effn": Field(N_("expert width (0 = FFN)"), **_range("ffn")),
    "le_sffn": Field(N_("shared expert width"), **_range("ffn")),
    "le_dense": Field(N_("first dense layers"), **_range("layers")),
    "le_every": Field(N_("MoE every n-th layer"), **_range("layers", 1)),
    "le_sgate": Field(N_("sigmoid gate on the shared expert (Qwen-MoE)")),
    # the workload
    "le_batch": Field(N_("batch"), N_("concurrent sequences"), **_range("batch", 1)),
    "le_seq": Field(N_("prompt"), N_("prompt tokens per sequence"), **_range("seq", 1)),
    "le_new": Field(N_("new tokens"), N_("decode steps after the prefill; step i sees prompt + i cached tokens"),
                    **_range("new")),
    "le_ctx": Field(N_("decode only: the prompt is already cached (no prefill)"),
                    N_("one decode question: `--context C` on the command line (new tokens = decode steps, at least "
                       "1)")),
    "le_conv": Field(N_("Counting convention"), N_("engine: what an inference or training engine runs (fused causal "
                                                   "attention, the LM head on the last prompt position, routed "
                                                   "experts, absorbed MLA); transformers: its eager code, exactly "
                                                   "what `FlopCounterMode` counts (`--reference transformers`)")),
    "le_attn": Field(N_("attention"), N_("eager: the S×S scores go through memory; fused (flash / SDPA): they stay on "
                                         "chip — same FLOPs")),
    "le_causal": Field(N_("attention counting"), N_("causal: the lower triangle with its diagonal; dense: every "
                                                    "score, the mask applied afterwards")),
    "le_lmh": Field(N_("LM head in the prefill"), N_("`last`: the last prompt position only (what an "
                                                     "engine samples from); `all`: every position")),
    "le_mla": Field(N_("MLA decode"), N_("DeepSeek-style MLA only: eager (transformers decompresses the whole cache "
                                         "every step) or absorbed (serving engines fold kv_b_proj into the query and "
                                         "the output)")),
    "le_exp": Field(N_("MoE experts"), N_("routed: each token through its top-k experts; eager: as the model's own "
                                          "transformers code runs them (Llama 4: every expert on every token)")),
    "le_wdt": Field(N_("weights"), N_("'as the convention': the checkpoint's dtype (a 32-bit checkpoint served in 16 "
                                      "bits by an engine; a quantized config keeps its own format). int4 and fp4 are "
                                      "block-scaled formats of the decoder's linears.")),
    "le_adt": Field(N_("activations"), N_("the GEMMs run at this dtype's peak")), "le_kvdt": Field(N_("KV cache")),
    "le_macs": Field(N_("show MACs instead of FLOPs")),
    # the hardware and its parallelism
    "le_gpu": Field(name="GPU", help=N_("datasheet rows; rows named `(measured)` come from the Devices page")),
    "le_gpus": Field(name="GPUs", help=N_("alone: tensor parallelism over N GPUs; with a parallel size above 1 the "
                                          "GPUs are TP × PP × EP × DP"), **_range("gpus", 1)),
    "le_flat": Field(N_("a flat efficiency (override)"), N_("off: each GEMM at the efficiency its shape, dtype and GPU "
                                                            "reach (the efficiency model); on: one share for every op")),
    "le_eff": Field(N_("efficiency"), N_("with a flat efficiency on: the share of peak and bandwidth every op "
                                         "reaches"), 0.05, 1.0),
    "le_cmp": Field(N_("compare with a second configuration (B)")),
    "le_tp": Field(name="TP", help=N_("tensor parallel"), **_range("gpus", 1)),
    "le_pp": Field(name="PP", help=N_("pipeline stages"), **_range("gpus", 1)),
    "le_ep": Field(name="EP", help=N_("expert parallel (MoE)"), **_range("gpus", 1)),
    "le_dp": Field(name="DP", help=N_("data-parallel replicas"), **_range("gpus", 1)),
    "le_etp": Field(name="ETP", help=N_("expert tensor parallel: the ranks each routed expert splits across (0 = as "
                                        "TP). Set apart from TP, EP folds over the TP and DP ranks (Megatron's MoE "
                                        "parallel folding, vLLM's expert parallelism): the GPUs are ETP × PP × EP × "
                                        "DP, DP the experts' data replicas"), **_range("gpus")),
    "le_gpn": Field(N_("GPUs per node (0 = catalogue)"), N_("GPUs joined by the fast link in a node (HGX: 8, GB200 "
                                                           "NVL72: 72); groups beyond it use the network"), 0, 1024),
    "le_overlap": Field(N_("overlap (best case)"), N_("communication fully hidden behind compute; off: added")),
    "le_sp": Field(N_("sequence parallelism"), N_("Megatron SP: norms split by sequence, each all-reduce a "
                                                  "reduce-scatter + all-gather")),
    "le_link": Field(N_("Links inside a node"), N_("the catalogue's line rates, or a bus bandwidth and latency "
                                                   "measured on this machine")),
    # training, serving, B
    "le_train": Field(N_("size a training run (batch × prompt = one step's tokens)")),
    "le_tokens": Field(N_("training tokens D"), N_("tokens of the whole run"), 1e6, 1e16),
    "le_mb": Field(N_("micro-batch"), N_("sequences per micro-batch"), 1, 4096),
    "le_rc": Field(N_("recompute"), N_("full: every layer's forward again (gradient checkpointing)")),
    "le_zero": Field(name="ZeRO", help=N_("stages 1–3 shard optimizer, gradients, weights across DP")),
    "le_vs": Field(N_("virtual stages"), N_("model chunks per pipeline stage (interleaved 1F1B, `--virtual-stages`): "
                                            "a smaller bubble for more pipeline sends; needs PP > 1"), 1, 64),
    "le_tpo": Field(N_("TP overlap"), N_("Transformer Engine's TP communication hidden behind the GEMMs beside it "
                                          "(`--tp-comm-overlap`)")),
    "le_cp": Field(name="CP", help=N_("context parallel (`--cp`): each sequence split across this many ranks, K/V "
                                      "passed around a ring; the training run's GPUs are the layout's × CP"),
                   **_range("gpus", 1)),
    "le_rcl": Field(N_("recomputed layers (0 = all)"), N_("with recompute full: only the first N layers of each model "
                                                          "chunk (`--recompute-layers`, Megatron's `--recompute-method "
                                                          "block`)"), 0, 1000),
    "le_rcm": Field(N_("recomputed modules"), N_("with recompute selective: what it reruns, Megatron's recompute_modules "
                                                 "(`--recompute-modules`; none chosen: core_attn)"),
                    placeholder=N_("none chosen: core_attn")),
    "le_epo": Field(N_("EP overlap"), N_("the all-to-alls behind another micro-batch's compute: Megatron's "
                                         "`--overlap-moe-expert-parallel-comm` hides at most 36.55% of their time (as "
                                         "measured on 16 H100s), DeepSeek-V3's DualPipe all of it (`--ep-comm-overlap`)")),
    "le_epsm": Field(N_("SMs the all-to-alls hold"), N_("with an EP overlap: the SMs its all-to-all kernels hold while "
                                                         "they run, so the compute beside them runs on the rest "
                                                         "(`--ep-comm-sms`): DeepSeek-V3 20 of the H800's 132, DeepEP's "
                                                         "default 20; 0: nothing charged"), 0, 1000),
    "le_engine": Field(N_("engine"), N_("`vllm`: chunked prefill, blocks allocated as requests grow, preemption; "
                                        "`trtllm`: whole prompts, blocks reserved per request (`--engine`)")),
    "le_rate": Field(N_("request rate /s (0 = the curve)"), N_("Poisson arrivals at this rate (`--request-rate`); 0: "
                                                               "throughput against a fixed concurrency"), 0.0, 1e6),
    "le_kvb": Field(N_("KV block (0 = engine's)"), N_("tokens per paged KV block (`--kv-block-size`): vLLM 16, "
                                                      "TensorRT-LLM 32"), 0, 1024),
    "le_serve": Field(N_("serving curve (prompt + new tokens per request)"),
                      N_("each request is the sidebar's prompt and new tokens (`--input-len`, `--output-len`)")),
    "le_tpot": Field(N_("TPOT target ms (0 = none)"), N_("the best concurrency keeps the time per output token "
                                                         "under this (`--tpot-target-ms`); at one concurrency or "
                                                         "rate, the point is read against it"), 0.0, 10_000.0),
    "le_ttft": Field(N_("TTFT target ms (0 = none)"), N_("the best concurrency keeps the time to the first token "
                                                         "under this too (`--ttft-target-ms`); at one concurrency or "
                                                         "rate, the point is read against it"), 0.0, 1e7),
    "le_conc": Field(N_("concurrency (0 = the curve)"), N_("one point at this many requests in flight "
                                                           "(`--concurrency`); with a request rate: at most this many "
                                                           "in flight"), 0, MAX_CONCURRENCY),
    "le_offline": Field(N_("all at once (offline)"), N_(
        "every request sent at once, no rate (`--request-rate inf`): an offline throughput run, as TensorRT-LLM "
        "measures its published throughput; the engine takes them in as its KV blocks and step limits allow")),
    "le_arrival": Field(N_("arrivals"), N_("with a request rate: Poisson arrivals (the default of `vllm bench "
                                           "serve`, fixed seed) or fixed gaps (`--arrival`)")),
    "le_nreq": Field(N_("requests/point (0 = default)"), N_("requests each point sends (`--num-requests`); 0: 4 × "
                                                            "the concurrency, 1,000 at a request rate"),
                     0, MAX_REQUESTS),
    "le_maxseqs": Field(N_("max requests (0 = engine's)"), N_(
        "requests running at once at most (`--max-num-seqs`): vLLM 1,024 on a GPU of 70 GiB or more (not an A100), "
        "else 256; TensorRT-LLM 2,048"), 0, ENGINE_LIMIT),
    "le_maxtok": Field(N_("max tokens/step (0 = engine's)"), N_(
        "tokens one engine step computes at most (`--max-num-batched-tokens`): vLLM 8,192 on a GPU of 70 GiB or more "
        "(not an A100), else 2,048; TensorRT-LLM 8,192"), 0, ENGINE_LIMIT),
    "le_b_preset": Field(N_("B model")), "le_b_batch": Field(N_("B batch"), **_range("batch", 1)),
    "le_b_seq": Field(N_("B prompt"), **_range("seq", 1)), "le_b_new": Field(N_("B new tokens"), **_range("new")),
    "le_b_wdt": Field(N_("B weights")), "le_b_gpu": Field(N_("B GPU")), "le_b_gpus": Field(N_("B GPUs"), **_range("gpus", 1)),
}

# Every input bound to the URL (``?le_batch=8``) and its default: a link holds what differs.
DEFAULTS: dict[str, Any] = {**Inputs.keys(), **TrainingInputs.keys(), **ServingInputs.keys(),
                            **CompareInputs.keys(), "le_macs": False}


def hardware_choices(upload: tuple[bytes, str] | None = None) -> dict[str, Hardware]:
    """The GPUs to pick from: the catalogue, then the rows of an uploaded hardware file (``upload``: its bytes and
    name, read as ``--hardware-file`` reads one: InputError naming every bad row), then the ceilings measured on
    the Devices page (no torch)."""
    mine: dict[str, Hardware] = {}
    if upload is not None:
        data, name = upload
        mine = parse_hardware(data, name)  # (at most MAX_HARDWARE_FILE_BYTES)
    try:
        measured = {h.name: h for h in measured_hardware_all()}
    except Exception:  # noqa: BLE001 - a missing or broken measurement file must not break the page
        measured = {}
    return {**CATALOGUE, **mine, **measured}


def links() -> list[str]:
    """The links inside a node to pick from: the catalogue's, then each one measured here
    (``python -m gemmlib bench collective`` or the Multi-GPU page saves one)."""
    return ["catalogue", *(lk.name for lk in measured_links())]


def labeller(gettext: Translate) -> Callable[[Any], str]:
    """An option or category value as shown (itself when it has no label: a dtype, a model name). Bound to
    one gettext: Streamlit (and AppTest) call a widget's format_func again outside the run."""
    def label(v: Any) -> str:
        if isinstance(v, str) and v in LABELS:
            return gettext(LABELS[v])
        if isinstance(v, str) and v.endswith(" (measured)"):  # a row of core.ceilings: "NAME (measured)"
            return gettext(N_("{name} (measured)")).format(name=v.removesuffix(" (measured)"))
        return str(v)

    return label


# ----------------------------------------------------------------------------- the model and the estimate
def parse_upload(data: bytes, name: str) -> tuple[ModelConfig, dict]:
    """The model of an uploaded config.json (file ``name``) and what the parser read."""
    if len(data) > MAX_CONFIG_BYTES:
        raise InputError(N_("{name} is {size:,} bytes; a config.json is a few kB (limit {limit:,})"),
                         name=name, size=len(data), limit=MAX_CONFIG_BYTES)
    return read_config_json(data, file_name=name)


def custom_features(inp: Inputs) -> dict:
    """A custom model's architecture features (sliding windows, qk-norm, norms, MLA, MoE layout) as
    ModelConfig fields."""
    out: dict = {"qk_norm": inp.qkn, "norm": inp.norm, "norms_per_layer": inp.npl, "parallel_block": inp.par,
                 "v_head_dim": inp.vhd}
    if inp.sw:
        out.update(sliding_window=inp.sw, layer_types=layer_pattern(inp.layers, inp.swp))
    if inp.mla_kv:
        out.update(kv_lora_rank=inp.mla_kv, q_lora_rank=inp.mla_q, rope_head_dim=inp.mla_rope, kv_heads=inp.heads)
    if inp.experts:
        out.update(expert_ffn=inp.effn, shared_expert_ffn=inp.sffn, shared_expert_gate=inp.sgate)
        if inp.dense or inp.every > 1:
            out["moe_layers"] = moe_pattern(inp.layers, first_dense=inp.dense, every=inp.every)
    return out


def model(inp: Inputs) -> ModelConfig:
    """The preset (``src`` "preset") or the custom model ("custom"; an InputError says what cannot be);
    a config.json's model comes from :func:`parse_upload`."""
    if inp.src == "preset":
        return PRESETS[inp.preset]
    if inp.src != "custom":
        raise ValueError(f"model() builds a preset or a custom model, not {inp.src!r}")
    return ModelConfig(**{**dict(layers=inp.layers, hidden=inp.hidden, heads=inp.heads, kv_heads=inp.kv,
                                 head_dim=inp.hd, ffn=inp.ffn, vocab=inp.vocab, mlp=inp.mlp,
                                 tied_embeddings=inp.tied, experts=inp.experts, experts_per_token=inp.topk),
                          **custom_features(inp)})


_SWITCH = {"causal": {"causal": True, "dense": False}}


def workload(inp: Inputs, cfg: ModelConfig, hw: Hardware | None = None) -> Workload:
    """The workload as ``python -m gemmlib estimate`` builds it: the convention's switches and dtypes (those it
    serves the checkpoint at on ``hw``), each widget set apart from "auto" an override."""
    dts = serving_dtypes(cfg, hw, inp.conv)

    def pick(v: str, default: Any = None) -> Any:
        return default if v == AUTO else v

    return Workload(batch=inp.batch, seq_len=inp.seq, new_tokens=inp.new,
                    causal=None if inp.causal == AUTO else _SWITCH["causal"][inp.causal],
                    lm_head=pick(inp.lmh), attention=pick(inp.attn), mla=pick(inp.mla), experts_compute=pick(inp.exp),
                    weight_dtype=pick(inp.wdt, dts["weight_dtype"]), act_dtype=pick(inp.adt, dts["act_dtype"]),
                    kv_dtype=pick(inp.kvdt, dts["kv_dtype"]), decode_only=inp.ctx, convention=inp.conv)


def parallel_sizes(inp: Inputs) -> dict[str, int]:
    """TP, PP, EP, DP as the estimate takes them: the GPUs alone are tensor parallel (as ``--gpus N``); with a
    size above 1 the sizes as given (the GPU count follows them: :func:`gpus_note`)."""
    sizes = {"tp": inp.tp, "pp": inp.pp, "ep": inp.ep, "dp": inp.dp}
    if all(v == 1 for v in sizes.values()) and not inp.etp:
        sizes["tp"] = inp.gpus
    if inp.etp:
        sizes["etp"] = inp.etp
    return sizes


def parallel(inp: Inputs) -> Parallel:
    """The estimate's layout: :func:`parallel_sizes`, × CP while the training run is on (the CLI's ``--train --cp``:
    the inference phases and the serving curve take the CP ranks as data replicas). Sequence parallelism counts from
    TP 2 (its box greys out at TP 1: :func:`greyed_layout`), where the CLI refuses ``--sequence-parallel``."""
    sizes = parallel_sizes(inp)
    return Parallel(**sizes, cp=int(inp.cp) if inp.train else 1, gpus_per_node=inp.gpn,
                    overlap=inp.overlap, sequence_parallel=bool(inp.sp) and sizes["tp"] > 1)


def greyed_layout(inp: Inputs) -> dict[str, bool]:
    """The sidebar's layout boxes that count for nothing under the sizes (greyed out, and not counted by
    :func:`parallel`): sequence parallelism at TP 1 (there is no TP work to split by sequence)."""
    return {"le_sp": parallel_sizes(inp)["tp"] == 1}


def headline_state(state: Mapping[str, Any], train: bool, cp: int) -> Mapping[str, Any]:
    """``state`` with the Training tab's switch and CP as the headline reads them above that tab: what the page
    peeks (``ui.url.Fields.peek``: the state from the last run, else on a link's first run what the widget takes from
    the link, else the default)."""
    return ChainMap({"le_train": bool(train), "le_cp": int(cp)}, state)  # type: ignore[arg-type]


def gpus_note(inp: Inputs, gettext: Translate = english) -> tuple[str, int] | None:
    """When the parallel sizes multiply to another count than the GPUs input: (what the page uses, in words;
    the count one click puts into the GPUs input). None when they agree."""
    s = parallel_sizes(inp)
    par = parallel(inp)
    n = par.gpus // par.cp  # the layout's own count (ETP × PP × EP × DP when folded); a training run's CP apart
    if n == inp.gpus:
        return None
    if par.folded:
        return gettext("The GPUs follow the parallel sizes: ETP {etp} × PP {pp} × EP {ep} × DP {dp} = **{n:,}** GPUs "
                       "(the GPUs box says {given:,}).").format(n=n, given=inp.gpus, **s), n
    return gettext("The GPUs follow the parallel sizes: TP {tp} × PP {pp} × EP {ep} × DP {dp} = **{n:,}** GPUs "
                   "(the GPUs box says {given:,}).").format(n=n, given=inp.gpus, **s), n


def efficiency_arg(inp: Inputs) -> float | None:
    """The estimate's efficiency argument: None (the shape model) unless a flat one is forced."""
    return float(inp.eff) if inp.flat else None


def estimate(inp: Inputs, cfg: ModelConfig, hw: Hardware, info: dict | None = None) -> ScaleOutEstimate:
    """THE estimate of the page: ``cfg`` (the model, as :func:`model` or :func:`parse_upload` gave it) under
    ``inp``'s workload on ``inp``'s GPUs × ``hw`` (its node links replaced by a measured one if chosen);
    ``info`` is the config.json parser's report."""
    wl = workload(inp, cfg, hw)
    par = parallel(inp)
    if inp.link != "catalogue":
        hw = hardware_with(hw, inp.link, par.gpus)[0]
    with _gpus_as_tp(par, implicit=parallel_sizes(inp)["tp"] != inp.tp):
        return scaleout_estimate(cfg, wl, hw, par, efficiency_arg(inp), gpus=par.gpus, read_info=info or {})


@contextmanager
def _gpus_as_tp(par: Parallel, implicit: bool) -> Iterator[None]:
    """Where the GPU count alone made the TP size (every parallel size at 1), a refusal of that TP size says so:
    "TP 3 does not divide the 32 attention heads" named a TP the reader never set."""
    try:
        yield
    except InputError as e:
        if not implicit or not e.template.startswith("TP {t} "):
            raise
        raise InputError(N_("The {gpus:,} GPUs are tensor parallel (every parallel size is 1): {why}. Pick another "
                            "GPU count, or set TP, PP and DP under Parallelism."),
                         gpus=par.tp, why=Msg(e.template, **e.params)) from e


def _efficiency_of(est: ScaleOutEstimate):
    """The efficiency ``est`` was made with, for the training run and the serving curve on it (the shape model
    again, or the flat share)."""
    flat = None if est.efficiency_model else est.efficiency
    return efficiency_for(flat, est.hardware, est.model, est.workload, est.parallel)[0]



# ----------------------------------------------------------------------------- view models
@dataclass(frozen=True)
class Metric:
    """One ``st.metric``: its keyword arguments."""

    label: str
    value: str
    help: str | None = None
    delta: str | None = None
    delta_color: str = "normal"


@dataclass(frozen=True)
class Table:
    """A table as ``ui.view_table`` draws it: rows keyed by the data's English names, cells already in the
    reader's language; ``labels`` the headers; ``formats`` the one formatter's kinds ("count", "number");
    ``printf`` columns shown as they are with a number format; ``wide`` long text columns; ``columns``
    the order (kept when there are no rows); ``index`` the column that labels the rows."""

    rows: list[dict]
    labels: dict[str, str]
    formats: dict[str, str] = field(default_factory=dict)
    printf: dict[str, str] = field(default_factory=dict)
    wide: tuple[str, ...] = ()
    columns: tuple[str, ...] | None = None
    index: str | None = None


@dataclass(frozen=True)
class Read:
    """What was read from the configuration, folded under ``title``."""

    title: str
    rows: list[tuple[str, str]]  # (what, as read), the cells escaped: st.table renders markdown
    header: str
    warnings: list[str]  # the keys the estimator does not know
    captions: list[str]  # the keys it ignored, the defaults it applied, the parser's notes


@dataclass(frozen=True)
class ScaleOut:
    title: str
    metrics: list[Metric | None]  # four columns: prefill time and its communication, then decode's
    groups: Table | None
    memory_chart: dict
    memory: str
    comm_chart: dict | None  # with more than one GPU
    collectives: Table | None
    comm: str = ""  # how a collective is costed (with more than one GPU)


@dataclass(frozen=True)
class EstimatorView:
    """The headline and every tab but training, serving and A vs B."""

    model: str  # the model in one line, with its config.json link
    read: Read
    warnings: list[str]
    assumptions: str
    times: list[Metric]  # time to first token, per output token, decode tokens/s
    fits: bool
    fit: str
    counts: list[Metric]  # four columns: prefill, decode, memory per GPU, GEMM share of prefill time
    flops_chart: dict
    ops: Table
    memory_chart: dict
    memory: str
    roofline_chart: dict
    scaleout: ScaleOut
    variants: Table
    rules: Table
    csv: str
    stem: str  # the downloads' file name (the JSON itself: :func:`download_json`, made while its tab is open)


@dataclass(frozen=True)
class TrainingView:
    metrics: list[Metric]
    words: str
    memory_chart: dict
    caption: str
    fits: bool = True
    status: str = ""  # fits or not: said first


@dataclass(frozen=True)
class ServingView:
    best: str | None  # the best concurrency under the target (a success)
    none: str | None  # no concurrency meets the target (a warning)
    chart: dict
    table: Table
    caption: str = ""  # how the curve is made


@dataclass(frozen=True)
class CompareView:
    table: Table
    chart: dict
    differs: tuple[str, ...] = ()  # the keys of B's widgets whose value differs from A's
    words: str = ""  # what differs, and how to read B/A


def _gemma_rows(r: dict, gettext: Translate) -> list[tuple[str, str]]:
    """The read table's rows for what only Gemma 4 and 3n have: full layers of their own shape, layers reusing K/V,
    AltUp and LAuReL, per-layer inputs (none for every other model)."""
    rows = []
    full = r["heads"].get("full_layers")
    if full:
        rows.append((gettext("full layers"), gettext("head dim {head_dim}, {kv} KV heads{kv_note}").format(
            head_dim=full["head_dim"], kv=full["kv"],
            kv_note=gettext("; the keys are the values too (no v_proj)") if full["keys_as_values"] else "")))
    mla = r.get("mla") or {}
    if mla.get("latent_reused_layers"):  # Mistral Large 4's kv_source_layers
        rows.append((gettext("K/V reuse"), gettext("{n} layers read the MLA latent of an earlier layer: no kv_a_proj, "
                                                   "no latent cached (their own kv_b_proj decompresses it)").format(
            n=mla["latent_reused_layers"])))
    elif r["attention"].get("kv_shared"):
        rows.append((gettext("K/V reuse"), gettext("the last {n} layers read the keys and values of the last earlier "
                                                   "layer of their kind: no k/v projection, no cache").format(
            n=r["attention"]["kv_shared"])))
    if r["block"].get("head_dense"):  # ModernBERT's decoder
        rows.append((gettext("prediction head"), gettext("a dense layer hidden → hidden, its activation and a norm before "
                                                         "the LM head, on the positions the LM head reads")))
    sb = r["block"].get("shared_blocks")
    if sb:  # Zamba2
        text = gettext("{blocks} attention-and-MLP blocks, each stored once, run in turn by the {layers} hybrid layers "
                       "(P) on [hidden state; embedding], {width} wide, before their Mamba mixer").format(
            blocks=sb["blocks"], layers=sb["layers"], width=fmt.count(sb["input_width"]))
        if sb["adapter_rank"]:  # (Zamba2's; Zamba's one block has none)
            text = gettext("{text}; each run has its own rank-{rank} adapters").format(text=text, rank=sb["adapter_rank"])
        rows.append((gettext("shared blocks"), text))
    if r["block"].get("altup_inputs") or r["block"].get("laurel_rank"):
        rows.append(("AltUp / LAuReL", gettext("{n} streams, the layers run on one and predict the rest; a rank-{r} "
                                               "residual beside each attention").format(
            n=r["block"].get("altup_inputs", 0), r=r["block"].get("laurel_rank", 0))))
    if r["block"].get("per_layer_inputs"):
        rows.append((gettext("per-layer inputs"), gettext("{p} wide in every layer (a table, a projection to every "
                                                          "layer's input, a gate and a projection per layer)").format(
            p=r["block"]["per_layer_inputs"])))
    return rows


def _inkling_rows(r: dict, gettext: Translate) -> list[tuple[str, str]]:
    """The read table's rows for Inkling's short convolutions and relative attention bias, and Inkling 2's attention
    residuals (none for other models)."""
    rows = []
    sc, rb = r["block"].get("short_conv"), r["block"].get("relative_bias")
    if sc:
        rows.append((gettext("short convolutions"), gettext(
            "width {k} on the keys, the values, the attention's output and the MLP's, each with a residual; their "
            "state {state} elements per sequence, in fp32").format(k=sc["kernel"], state=fmt.count(sc["state_per_sequence"]))))
    if rb:
        rows.append((gettext("relative bias"), gettext(
            "{d} relative states per head and token, mixed into a bias per backward distance ({full} in the full "
            "layers, {sliding} in the sliding ones)").format(d=rb["d_rel"], full=rb["full_extent"] or fmt.DASH,
                                                           sliding=rb["sliding_extent"] or fmt.DASH)))
    ar = r["block"].get("attention_residuals")
    if ar:
        rows.append((gettext("attention residuals"), gettext(
            "each layer's attention and MLP inputs attend, with {n} learned queries in all, over the states of every "
            "{b} layers").format(n=fmt.count(ar["queries"]), b=ar["block"])))
    lp = r["block"].get("loop")
    if lp:
        rows.append((gettext("looped layers"), gettext(
            "layers {start} to {last} run {passes} times ({run} layers run per token, each pass with its own cache); "
            "their weights are stored once").format(start=lp["start"], last=lp["end"] - 1, passes=lp["passes"],
                                                   run=lp["layers_run"])))
    cca = r["block"].get("cca")
    if cca:  # ZAYA
        rows.append((gettext("convolutional attention"), gettext(
            "the queries and keys through a depthwise convolution of {t0} taps and one grouped by head of {t1}, each "
            "with a residual; half the values from the token before; their state {state} elements per sequence").format(
            t0=cca["depthwise"], t1=cca["grouped"], state=fmt.count(cca["state_per_sequence"]))))
    hrm = r["block"].get("hrm")
    if hrm:
        rows.append((gettext("looped layers"), gettext(
            "two stacks of {n} layers: the low-level one runs {low} times per cycle, the high-level one once, over {high} "
            "cycles ({run} layers run per token, each with its own cache); their weights are stored once").format(
            n=hrm["stack_layers"], low=hrm["low_cycles"], high=hrm["high_cycles"], run=hrm["layers_run"])))
    return rows


def _compressed_rows(r: dict, gettext: Translate) -> list[tuple[str, str]]:
    """The read table's row for DeepSeek-V4's compressed attention (none for every other model)."""
    c = r.get("compressed")
    if not c:
        return []
    att = r["attention"]
    rows = [(gettext("compressed attention"), gettext(
        "a window of {window} keys in every layer; {csa} layers add an entry per {csa_rate} tokens, of which an indexer "
        "of {heads} × {dim} keeps the top {topk:,} per query; {hca} layers an entry per {hca_rate} tokens, all read; "
        "one key/value head, queries from a {rank} latent, the output in {groups} groups").format(
        window=att["window"], csa=att["compressed_sparse"], csa_rate=c["csa_rate"], heads=c["index_heads"],
        dim=c["index_head_dim"], topk=c["index_topk"], hca=att["heavily_compressed"], hca_rate=c["hca_rate"],
        rank=c["q_lora_rank"], groups=c["o_groups"]))]
    return rows


def _sparse_row(r: dict, gettext: Translate) -> str:
    """The read table's sparse-attention cell: DeepSeek Sparse Attention's top-k keys or MiniMax-M3's top-k blocks."""
    if r.get("dsa") and r["dsa"].get("index_kpool"):  # GLM-5-Next's pools
        kp = r["dsa"]["index_kpool"]
        return gettext("DeepSeek Sparse Attention over pools: the top {n} pools of {kpool} keys per query and the keys "
                       "of its incomplete pool, chosen by an indexer of {heads} × {dim} that scores each complete "
                       "pool's gated average in {layers} of {all} layers (its key and gate scores cached too)").format(
            n=r["dsa"]["index_topk"] // kp, kpool=kp, heads=r["dsa"]["index_heads"], dim=r["dsa"]["index_head_dim"],
            layers=r["attention"]["with_indexer"], all=r["attention"]["full"])
    if r.get("dsa"):
        return gettext("DeepSeek Sparse Attention: the top {topk:,} keys per query, chosen by an indexer of {heads} × "
                       "{dim} in {layers} of {all} layers (its key cached too)").format(
            topk=r["dsa"]["index_topk"], heads=r["dsa"]["index_heads"], dim=r["dsa"]["index_head_dim"],
            layers=r["attention"]["with_indexer"], all=r["attention"]["full"])
    if r.get("block_sparse") and r["block_sparse"].get("mean_pooled"):
        bs = r["block_sparse"]
        return gettext("QSA: the top {topk} complete blocks of {block} keys per query and the keys of its incomplete "
                       "block, chosen by an indexer of {heads} × {dim} that scores each block's mean key, in every "
                       "attention layer (its key cached too)").format(
            topk=bs["index_topk_blocks"], block=bs["index_block"], heads=bs["index_heads"], dim=bs["index_head_dim"])
    if r.get("block_sparse"):
        bs = r["block_sparse"]
        return gettext("block-sparse attention: the top {topk} blocks of {block} keys per query, chosen by an indexer "
                       "of {heads} × {dim} in {layers} of {all} layers (its key cached too); the others see every "
                       "key").format(topk=bs["index_topk_blocks"], block=bs["index_block"], heads=bs["index_heads"],
                                     dim=bs["index_head_dim"], layers=r["attention"]["with_indexer"],
                                     all=r["attention"]["full"])
    return fmt.DASH


def _hyper_rows(r: dict, gettext: Translate) -> list[tuple[str, str]]:
    """The read table's row for hyper-connections (DeepSeek-V4's, which also mix the streams, and HY-V4's, which only
    collapse and expand them; none for every other model)."""
    n = r["block"].get("hyper_streams")
    if not n:
        return []
    rank = r["block"].get("hyper_gate_rank")
    ng = r["block"].get("ngram_embeddings")
    if rank:  # Qwen4-Exp
        rows = [(gettext("hyper-connections"), gettext(
            "the residual as {n} streams: before each attention and MLP they are normed, gated through rank {r} and "
            "averaged into its input, and its output is added to each stream by a learned weight; their norms are the "
            "layers' and the final norm").format(n=n, r=rank))]
        if ng:
            rows.append((gettext("n-gram embeddings"), gettext(
                "in {layers} layers: {heads} hashed tables of 2- to {order}-grams each ({rows} rows in all, looked up, "
                "not multiplied; {params} parameters with the projections), projected to a key per stream and a "
                "value, gated and convolved into the streams").format(
                layers=ng["layers"], heads=ng["heads"], order=ng["order"], rows=fmt.count(ng["rows"]),
                params=fmt.count(ng["params"]))))
        return rows
    return [(gettext("hyper-connections"), gettext("the residual as {n} streams, mixed before and after each attention "
                                                   "and MLP").format(n=n) if r["block"].get("hyper_mix", True) else
             gettext("the residual as {n} streams, collapsed to one before each attention and MLP and expanded "
                     "after it").format(n=n))]


def _tr_with(gettext: Translate) -> Callable[[Any], str]:
    """A gemmlib text (a Text, a Msg, an InputError, a marked constant) in the reader's language; an
    empty one stays empty (gettext("") is the catalogue's header)."""
    def tr(x: Any) -> Any:
        if not x:
            return x
        if isinstance(x, (Msg, Text, InputError)):
            return x.render(gettext)
        return gettext(str(x))

    return tr


def _translated(row: dict, tr: Callable[[Any], Any], *columns: str) -> dict:
    """A table row with the texts of ``columns`` in the reader's language, before it becomes a DataFrame
    (pandas stores text columns as plain strings: a Text's message would be lost there)."""
    return {**row, **{c: tr(row[c]) for c in columns if c in row}}


def present(est: ScaleOutEstimate, *, macs: bool = False, gettext: Translate = english,
            escape: Escape, training: bool = False) -> EstimatorView:
    """Everything the page shows about ``est`` outside the training, serving and A-vs-B tabs, in MACs
    instead of FLOPs with ``macs``; with ``training`` (a training run sized beside it) the fit says it is the
    inference memory, as ``estimate --train`` does."""
    tr, label = _tr_with(gettext), labeller(gettext)
    d = est.to_dict()
    m, wl, mem, pg = est.model, est.workload, est.memory, est.per_gpu
    unit, div = ("MAC", 2) if macs else ("FLOP", 1)
    line = gettext("**{name}** — {params:,} parameters").format(name=escape(_name(m.name, label)), params=m.params)
    if m.is_moe:
        line = gettext("{line} ({active:,} active per token, {compute:,} without the input embedding)").format(
            line=line, active=m.active_params, compute=m.active_params_without_embedding)
    if m.attention_free:
        line = gettext("{line}; {layers} layers, hidden {hidden}, each a {mixer} mixer (no attention, no MLP), vocab "
                       "{vocab:,}").format(line=line, layers=m.layers, hidden=m.hidden, mixer=label(m.mixer.kind),
                                           vocab=m.vocab)
    else:
        line = gettext("{line}; {layers} layers, hidden {hidden}, {heads} heads / {kv} KV, head dim {hd}, FFN {ffn} "
                       "({mlp}), vocab {vocab:,}").format(line=line, layers=m.layers, hidden=m.hidden, heads=m.heads,
                                                          kv=m.kv_heads, hd=m.head_dim, ffn=m.ffn, mlp=label(m.mlp),
                                                          vocab=m.vocab)
    if m.is_moe:
        line = gettext("{line}, {experts} experts, top-{k}").format(line=line, experts=m.experts,
                                                                    k=m.experts_per_token)
    t = est.times()
    if pg.fits:
        fit = gettext("Fits: {need} per GPU of its {have} (weights, the KV cache at the end, activations and "
                      "workspace).").format(need=fmt.nbytes(pg.total_bytes), have=fmt.nbytes(pg.capacity_bytes))
    else:
        fit = gettext("**Does not fit**: {need} needed per GPU, {have} on each {gpu} ({gpus} in all); it needs at "
                      "least {min} of them. The times below are not reachable on this set-up.").format(
            need=fmt.nbytes(pg.total_bytes), have=fmt.nbytes(pg.capacity_bytes), gpu=est.hardware.name,
            gpus=est.gpus, min=mem.min_gpus)
    if training:  # beside the Training tab's verdict, which may differ
        fit = _then(fit, gettext("This is the inference memory (serving this batch); the training step's is in the "
                                 "**Training** tab."))
    # the box beside them says why: in a column of the headline "not reachable: does not fit" was cut with "…"
    not_there = {"delta": gettext("not reachable"), "delta_color": "inverse"} if not pg.fits else {}
    why = gettext("the GEMMs' share of the predicted prefill time; the rest is norms, softmax, activation, residual "
                  "adds and the like (memory-bound).")
    if est.prefill.gemm_share_of_flops is not None:
        why = gettext("{why} Of the FLOPs, GEMMs are {share}.").format(
            why=why, share=fmt.percent(est.prefill.gemm_share_of_flops, 2))
    else:
        why = gettext("{why} (No prefill: decode only.)").format(why=why)
    counts = [
        Metric(gettext("prefill {unit}s").format(unit=unit), fmt.si(est.prefill.flops / div),
               help=gettext("exactly {n}").format(n=fmt.count(est.prefill.flops // div))),
        Metric(gettext("decode {unit}s").format(unit=unit), fmt.si(est.decode.flops / div),
               help=gettext("all decode steps, whole batch: exactly {n}").format(
                   n=fmt.count(est.decode.flops // div))),
        Metric(gettext("memory per GPU"), fmt.nbytes(pg.total_bytes),
               delta=gettext("fits") if pg.fits else gettext("does not fit"),
               delta_color="normal" if pg.fits else "inverse",
               help=gettext("weights, KV cache at the end, prefill activations and workspace on the busiest GPU, "
                            "against its {have}; the whole job needs {need} of weights and KV cache").format(
                   have=fmt.nbytes(pg.capacity_bytes), need=fmt.nbytes(mem.total_bytes))),
        Metric(gettext("GEMM share of prefill time"), fmt.percent(est.prefill.gemm_share_of_time, 0), help=why),
    ]
    ops = arrow_safe(ops_records(est, macs))
    stem = f"estimate_{m.name}_b{wl.batch}_s{wl.seq_len}_n{wl.new_tokens}"
    return EstimatorView(
        model=line + (f" · [config.json]({m.source})" if m.source else ""),
        read=_read(est, gettext, escape),
        warnings=[tr(w) for w in d["warnings"]],
        assumptions=gettext("**Predicted on {gpus} × {gpu} · {dtype}** · counted by {convention} · timed with "
                            "{efficiency} (roofline: each op at max(FLOPs / peak, bytes / bandwidth))").format(
            gpus=est.gpus, gpu=escape(est.hardware.name), dtype=est.compute_dtype,
            convention=_convention_words(est, gettext, label), efficiency=_efficiency_words(est, gettext)),
        times=[Metric(gettext("time to first token"), _t(t["ttft_s"]), **not_there),
               Metric(gettext("per output token"), _t(t["time_per_output_token_s"]), **not_there),
               Metric(gettext("decode tokens/s"), fmt.si(t["decode_tokens_per_s"]),
                      help=gettext("generated tokens per second, whole batch"), **not_there)],
        fits=pg.fits, fit=fit, counts=counts,
        flops_chart=pickable(flops_by_op_spec(est, macs, gettext=gettext)), ops=_ops_table(ops, gettext),
        memory_chart=memory_spec(est, gettext=gettext), memory=_memory_words(est, gettext),
        roofline_chart=roofline_spec(est, gettext=gettext),
        scaleout=_scaleout(est, d, gettext),
        variants=Table([{**_translated(r, tr, "variant"), "lm_head": label(r["lm_head"])}
                        for r in arrow_safe(d["variants"])],
                       {c: gettext(h) for c, h in VARIANT_COLUMNS.items()},
                       formats={c: "count" for c in ("prefill_flops", "prefill_macs", "decode_flops", "decode_macs")}),
        rules=Table([_translated(r, tr, "rule", "reason") for r in arrow_safe(d["rules_of_thumb"])],
                    {"rule": gettext("rule"), "value": gettext("value"), "exact": gettext("exact"),
                     "ratio": gettext("exact / rule"), "reason": gettext("reason")},
                    formats={"value": "number", "exact": "count"}, printf={"ratio": "%.3g"}, wide=("reason",),
                    columns=("rule", "value", "exact", "ratio", "reason")),
        csv=pd.DataFrame(ops).to_csv(index=False), stem=stem,
    )


def download_json(inp: Inputs, cfg: ModelConfig, hw: Hardware, info: dict | None = None,
                  train_inp: TrainingInputs | None = None, serve_inp: ServingInputs | None = None) -> str:
    """The page's "Everything as JSON": the estimate's ``--json`` object, made again from its inputs on the runs
    that show the Download tab (a fifth of a rerun's time: not on every rerun of the page), with the training run
    and the serving curve (``train`` and ``serving`` keys, as ``--train`` and ``--serve`` add them) when their
    switches are on: "Everything" left out the very numbers a reader had sized in those tabs. Where a tab refuses
    its run (and says why there), ``train_error`` or ``serving_error`` holds the reason: the CLI refuses the whole
    command there; left out without a word, the JSON read as if the switch had been off."""
    est = estimate(inp, cfg, hw, info)
    tr = sv = None
    errors: dict[str, str] = {}
    if train_inp is not None and train_inp.train:
        try:
            tr = _train_run(est, train_inp)[0]
        except InputError as e:
            errors["train_error"] = str(e)
    if serve_inp is not None and serve_inp.serve:
        try:  # at one point (a rate, one concurrency) no best concurrency is sought: no target, as the CLI takes it
            sv = _serving_run(est, serve_inp, as_cli=True)
        except InputError as e:
            errors["serving_error"] = str(e)
    if tr is not None or sv is not None:  # the layout as --train gives it: its virtual stages included
        est = replace(est, scale_out=replace(est.scale_out, train=tr, serving=sv,
                                             parallel=tr.parallel if tr is not None else est.parallel))
    return dumps({**est.to_dict(), **errors}, indent=1) if errors else est.to_json(indent=1)


def _efficiency_words(est: ScaleOutEstimate, gettext: Translate) -> str:
    """The efficiency the times used: the shape model (its name) or the flat share forced."""
    if est.efficiency_model:
        return gettext("the efficiency model by shape: {model}").format(model=_tr_with(gettext)(est.efficiency_model))
    return gettext("a flat efficiency of {e} for every op (forced)").format(e=fmt.percent(est.efficiency, 0))


def _convention_words(est: ScaleOutEstimate, gettext: Translate, label: Callable[[Any], str]) -> str:
    """The counting convention, with each switch set apart from it (an override) named."""
    wl = est.workload
    words = gettext(CONVENTION_WORDS.get(wl.convention, wl.convention))
    over = wl.overrides()
    if over:
        shown = {"causal": lambda v: label("causal" if v else "dense")}
        words = gettext("{convention}, overridden: {overrides}").format(convention=words, overrides=", ".join(
            gettext("{switch} {value}").format(switch=gettext(SWITCH_NAMES.get(k, k)),
                                               value=shown.get(k, label)(o["value"]))
            for k, o in over.items()))
    return words


def _name(name: str, label: Callable[[Any], str]) -> str:
    """A model's name as shown: the custom shape's ("custom") in the reader's language, any other as it is."""
    return label(name) if name == "custom" else name


def _ops_table(ops: list[dict], gettext: Translate) -> Table:
    """One row per op and phase: the ops' notes, phases, kinds and bounds in the reader's language, the time
    as a duration (last)."""
    tr, label = _tr_with(gettext), labeller(gettext)
    rows = []
    for r in ops:
        row = {k: v for k, v in _translated(r, tr, "note").items() if k not in ("value", "time_s")}
        row.update(phase=label(r["phase"]), kind=label(r["kind"]), bound=label(r["bound"]),
                   op=gettext(WORD_OPS[r["op"]]) if r["op"] in WORD_OPS else r["op"], time=fmt.duration(r["time_s"]))
        rows.append(row)
    return Table(rows, {c: gettext(h) for c, h in OPS_COLUMNS.items()}, formats={c: "count" for c in _COUNTS})


def _memory_words(est: ScaleOutEstimate, gettext: Translate) -> str:
    """How the memory figures are made, in words with this model's numbers."""
    tr = _tr_with(gettext)
    m, wl, mem = est.model, est.workload, est.memory
    q = m.quant
    if q is not None:
        weights = gettext("the checkpoint's tensors, quantized linears in {quant}, the rest at {dtype}").format(
            quant=tr(q.label), dtype=wl.weight_dtype)
    elif wl.weight_dtype in WEIGHT_FORMATS + QUANTIZED_8BIT:  # as an engine quantizes them (for_weight_dtype)
        fmt_q, rest = weight_format(m, wl.weight_dtype)
        weights = gettext("the decoder's linears in {fmt} with their scales, the rest (embedding, LM head, norms, "
                          "routers) at {dtype}").format(fmt=tr(fmt_q.label), dtype=rest)
    else:
        weights = gettext("{params:,} parameters × {bytes:g} B").format(params=m.params,
                                                                       bytes=DTYPES[wl.weight_dtype].bytes)
    text = gettext("Weights: {weights} = **{size}**").format(weights=weights, size=fmt.nbytes(mem.weights_bytes))
    if m.mtp_layers:
        text = gettext("{text} (multi-token-prediction layers, stored in the checkpoint, are not loaded)").format(
            text=text)
    per = (gettext("the window's keys, which are the values ({n} elements), and in the compressed layers an entry "
                   "per {csa} or {hca} tokens (the indexer's, {k} more)").format(
        n=m.head_dim, csa=m.csa_rate, hca=m.hca_rate, k=m.index_head_dim) if m.compressed_attention else
           gettext("the MLA latent + rotary key ({n} elements; {k} more, the indexer's key, in the {layers} layers "
                   "with their own indexer)").format(n=m.kv_elements_per_token_layer, k=m.index_head_dim,
                                                     layers=m.indexer_layer_count) if m.is_dsa else
           gettext("the MLA latent + rotary key ({n} elements)").format(n=m.kv_elements_per_token_layer)
           if m.is_mla else
           gettext("K and V of {heads} heads × ({k} + {v}) dims ({i} more, the indexer's key, in the {layers} "
                   "block-sparse layers)").format(heads=m.kv_cache_heads, k=m.head_dim, v=m.v_head_dim,
                                                  i=m.index_head_dim, layers=m.indexer_layer_count)
           if m.is_block_sparse else
           gettext("K and V of {heads} heads × ({k} + {v}) dims").format(heads=m.kv_cache_heads, k=m.head_dim,
                                                                        v=m.v_head_dim))
    kv = gettext("KV cache: {per} per token and layer, × {bytes:g} B × batch {batch} × {tokens:,} tokens").format(
        per=per, bytes=DTYPES[wl.kv_dtype].bytes, batch=wl.batch, tokens=wl.final_tokens)
    widths: dict[int, int] = {}  # cache elements per token → layers (as each layer's own shape gives them)
    for kind in m.cached_attention_kinds:
        e = m.kv_elements_of(kind)
        widths[e] = widths.get(e, 0) + 1
    if len(widths) > 1:  # (Gemma 4's full layers, hybrids' mixers, layers reading another's cache, indexers)
        kept = sorted(((e, n) for e, n in widths.items() if e), key=lambda x: -x[1])
        kv = gettext("{kv}; by layer: {parts}").format(kv=kv, parts=", ".join(
            gettext("{e:,} elements per token in {n} layers").format(e=e, n=n) for e, n in kept))
        if widths.get(0):
            kv = gettext("{kv}; {n} layers keep none").format(kv=kv, n=widths[0])
    if m.sliding_window:
        kv = gettext("{kv}; {n} sliding layers keep only the last {keep:,} tokens").format(
            kv=kv, n=m.windowed_layers, keep=m.sliding_window - 1)
    state = m.state_elements(wl.convention != "transformers") if m.mixer is not None else 0
    if state:
        kv = gettext("{kv}; the mixer layers' fixed state adds {n:,} elements per sequence").format(kv=kv, n=state)
    return gettext("{weights}. {kv} = **{size}**. Activations and framework overhead come on top.").format(
        weights=text, kv=kv, size=fmt.nbytes(mem.kv_cache_bytes))


def _memory_source(src: Any, gettext: Translate) -> str:
    """A catalogue row's memory source in the reader's language; its citation (the tool, the issues that
    report the figure: "nvidia-smi, NVIDIA/nccl#1264") shown as written, as code."""
    msg = getattr(src, "msg", None)
    if isinstance(msg, Msg) and isinstance(msg.params.get("source"), str):
        return Msg(msg.template, **{**msg.params, "source": f"`{msg.params['source']}`"}).render(gettext)
    return _tr_with(gettext)(src)


_LAYOUT_TITLES = {  # the Scale-out tab's title by (folded, a training run's CP above 1); its CP ranks are replicas here
    (False, False): N_("**TP {tp} × PP {pp} × EP {ep} × DP {dp} = {gpus} × {gpu}**; communication {how}"),
    (True, False): N_("**ETP {etp} × PP {pp} × EP {ep} × DP {dp} = {gpus} × {gpu}** (folded: attention TP {tp} × "
                      "{replicas} data replicas); communication {how}"),
    (False, True): N_("**TP {tp} × CP {cp} × PP {pp} × EP {ep} × DP {dp} = {gpus} × {gpu}** (the training run's CP "
                      "ranks serve the prefill and the decode as data replicas); communication {how}"),
    (True, True): N_("**ETP {etp} × CP {cp} × PP {pp} × EP {ep} × DP {dp} = {gpus} × {gpu}** (folded: attention TP "
                     "{tp} × {replicas} data replicas, the training run's CP ranks among them); communication {how}"),
}


def _scaleout(est: ScaleOutEstimate, d: dict, gettext: Translate) -> ScaleOut:
    """Parallelism with communication and per-GPU memory (gemmlib.llm.scaleout)."""
    tr, label = _tr_with(gettext), labeller(gettext)
    par, pre, dec, pg = est.parallel, est.prefill, est.decode, est.per_gpu
    metrics: list[Metric | None] = [None] * 4
    for i, ph in enumerate((pre, dec)):
        if ph.time_s:
            why = gettext("compute {compute} + communication {comm}").format(compute=_t(ph.compute_s),
                                                                            comm=_t(ph.communication_s))
            if ph.bubble_s:
                why = gettext("{time} + pipeline bubble {bubble}").format(time=why, bubble=_t(ph.bubble_s))
            metrics[2 * i] = Metric(gettext("{phase} time").format(phase=label(ph.name)), _t(ph.time_s), help=why)
            metrics[2 * i + 1] = Metric(gettext("{phase} communication").format(phase=label(ph.name)),
                                        _t(ph.communication_s), help=gettext("exposed: on the critical path"))
    groups = d["parallel"]["groups"]
    group_table = None
    if groups:
        group_table = Table([{**_translated(r, tr, "link", "source"), "group": GROUPS.get(r["group"], r["group"]),
                              "busbw_bytes_per_s": fmt.si(r["busbw_bytes_per_s"], "B/s"),
                              "latency_s": fmt.duration(r["latency_s"])} for r in groups],
                            {"group": gettext("group"), "ranks": gettext("ranks"), "stride": gettext("stride"),
                             "link": gettext("link"), "busbw_bytes_per_s": gettext("bus bandwidth"),
                             "latency_s": gettext("latency"), "source": gettext("source")}, wide=("source",))
    comm_chart = collectives = None
    if est.gpus > 1:
        comm_chart = comm_by_op_spec(est, gettext=gettext)
        rows = []
        for ph in (pre, dec):
            for c in ph.collectives:
                r = _translated({"phase": label(ph.name), **c.to_dict()}, tr, "link", "note")
                r.update(group=GROUPS.get(r["group"], r["group"]),
                         after=gettext(WORD_OPS[r["after"]]) if r["after"] in WORD_OPS else tr(r["after"]))
                r.update(size_bytes=fmt.nbytes(r["size_bytes"]), count=fmt.count(r["count"]),
                         time_s=fmt.duration(r["time_s"]), exposed_s=fmt.duration(r.get("exposed_s")))
                rows.append({k: v for k, v in r.items() if k not in ("busbw", "latency_s")})
        if rows:
            collectives = Table(rows, {"phase": gettext("phase"), "op": gettext("collective"), "after": gettext("after"),
                                       "group": gettext("group"), "ranks": gettext("ranks"), "link": gettext("link"),
                                       "note": gettext("note"), "size_bytes": gettext("size"),
                                       "count": gettext("count"), "time_s": gettext("time"),
                                       "exposed_s": gettext("exposed")})
    return ScaleOut(
        title=gettext(_LAYOUT_TITLES[par.folded, par.cp > 1]).format(
            tp=par.tp, cp=par.cp, pp=par.pp, ep=par.ep, dp=par.dp, gpus=est.gpus, gpu=est.hardware.name,
            etp=par.expert_tp, replicas=par.inference().attn_ep * par.inference().dp,
            how=gettext("overlapped (best case)") if par.overlap else gettext("not overlapped with compute")),
        metrics=metrics, groups=group_table,
        memory_chart=per_gpu_memory_spec(pg, est.hardware.name, gettext=gettext),
        memory=gettext("Weights {weights} (each op's shard), KV cache {kv} (÷ min(TP, KV heads), its stage's layers), "
                       "prefill activations {act}, workspace {work} (10%: vLLM keeps back 1 − "
                       "gpu_memory_utilization 0.9). {largest} Memory source: {source}.").format(
            weights=fmt.nbytes(pg.weights_bytes), kv=fmt.nbytes(pg.kv_cache_bytes), act=fmt.nbytes(pg.activation_bytes),
            work=fmt.nbytes(pg.workspace_bytes),
            largest=gettext("Largest batch that fits: **{batch:,}**.").format(batch=est.max_batch) if est.max_batch
            else gettext("No batch fits, not even 1."),
            source=_memory_source(est.hardware.memory_source, gettext)),
        comm_chart=comm_chart, collectives=collectives,
        comm=gettext("Each collective costs latency + size × factor / bus bandwidth over the link its group "
                     "crosses (nccl-tests: all-reduce 2(n−1)/n, all-gather / reduce-scatter / all-to-all "
                     "(n−1)/n); link figures are line rates with measured small-message latency; `python -m "
                     "gemmlib estimate --intra-busbw` takes a measured one.") if comm_chart else "")


def _read(est: ScaleOutEstimate, gettext: Translate, escape: Escape) -> Read:
    """What was read from the configuration: family, attention pattern, MLA, experts, quantization, dtype,
    and the keys it ignored."""
    tr, label = _tr_with(gettext), labeller(gettext)
    r = est.read()
    family = (gettext("{family} (in {wrapper})").format(family=escape(r["family"]), wrapper=escape(r["wrapper"]))
              if r.get("wrapper") else escape(_name(r["family"], label)))
    att, mla, ex, q, b = r["attention"], r["mla"], r["experts"], r["quantization"], r["block"]
    pure = est.model.attention_free
    layers = (gettext("none (every layer a mixer)") if pure else
              gettext("{full} full, {sliding} sliding, {chunked} chunked layers").format(**att))
    if att["window"]:
        layers = gettext("{layers}; window {window:,}; pattern {pattern}").format(layers=layers, **att)
    if isinstance(r["heads"].get("sliding_layers"), int):  # Step 3.7: the sliding layers' own query heads
        layers = gettext("{layers}; {n} query heads in the sliding layers, {full} in the others").format(
            layers=layers, n=r["heads"]["sliding_layers"], full=r["heads"]["query"])
    if att.get("attention_experts"):  # JetMoE
        layers = gettext("{layers}; a mixture of attention heads: {n} experts, each a query and an output projection, "
                         "top-{k} per token; keys and values shared").format(
            layers=layers, n=att["attention_experts"]["experts"], k=att["attention_experts"]["per_token"])
    if att.get("differential"):  # DiffLlama
        layers = gettext("{layers}; differential attention: two calls per head, the same scores against each half of "
                         "the values, combined by a learned λ").format(layers=layers)
    if att.get("cross_attention"):
        layers = gettext("{layers}; {n} cross-attention layers (to an image's vision tokens: skipped on text, their "
                         "weights counted)").format(layers=layers, n=att["cross_attention"])
    experts = fmt.DASH
    if ex:
        experts = gettext("{experts} experts, top-{per_token}, width {expert_ffn}; {moe_layers} MoE / {dense_layers} "
                          "dense layers ({pattern})").format(**ex)
        if ex["shared_expert_ffn"]:
            experts = gettext("{experts}; shared expert {width}").format(experts=experts,
                                                                         width=ex["shared_expert_ffn"])
        if ex.get("vision_expert_ffn"):  # ERNIE 4.5 VL
            experts = gettext("{experts}; as many image experts of width {width} with their own router, stored and "
                              "counted, not run on text").format(experts=experts, width=ex["vision_expert_ffn"])
    biases = ", ".join(BIASES.get(x, x) for x in b["biases"]) or label("none")
    rows = [(gettext("family"), gettext("{family} — the decoder of {wrapper}").format(family=r["family"],
                                                                                    wrapper=r["wrapper"])
             if r.get("wrapper") else _name(r["family"], label)),
            (gettext("attention"), layers),
            ("MLA", fmt.DASH if not mla else
             gettext("latent {kv} cached per token and layer, no rotary dims; query rank {q}").format(
                 kv=mla["kv_lora_rank"], q=mla["q_lora_rank"] or label("none")) if not mla["qk_rope_head_dim"] else
             gettext("latent {kv} + rotary {rope} cached per token and layer; query rank {q}; {n} layers without "
                     "rotary dims (the latent alone cached)").format(
                 kv=mla["kv_lora_rank"], rope=mla["qk_rope_head_dim"], q=mla["q_lora_rank"] or label("none"),
                 n=mla["without_rope"]["layers"]) if mla.get("without_rope") else
             gettext("latent {kv} + rotary {rope} cached per token and layer; query rank {q}").format(
                 kv=mla["kv_lora_rank"], rope=mla["qk_rope_head_dim"], q=mla["q_lora_rank"] or label("none"))
             if not mla.get("sliding_layers") else
             gettext("latent {kv} + rotary {rope} cached per token and layer; query rank {q}; the sliding layers: "
                     "{heads} heads, latent {skv} + rotary {srope}, query rank {sq}").format(
                 kv=mla["kv_lora_rank"], rope=mla["qk_rope_head_dim"], q=mla["q_lora_rank"] or label("none"),
                 heads=mla["sliding_layers"]["heads"], skv=mla["sliding_layers"]["kv_lora_rank"],
                 srope=mla["sliding_layers"]["qk_rope_head_dim"], sq=mla["sliding_layers"]["q_lora_rank"])),
            (gettext("sparse attention"), _sparse_row(r, gettext)),
            *_gemma_rows(r, gettext),
            *_compressed_rows(r, gettext),
            *_inkling_rows(r, gettext),
            *_hyper_rows(r, gettext),
            (gettext("experts"), experts),
            (gettext("quantization"), fmt.DASH if not q else
             gettext("{label}; {activations}").format(label=tr(q["label"]), activations=tr(q["activations"]))),
            (gettext("dtype"), gettext("{dtype}; weights: {source}").format(dtype=r["dtype"] or gettext("not given"),
                                                                           source=tr(r["weight_dtype_source"]))),
            (gettext("mixer"), fmt.DASH if not r.get("mixer") else gettext(
                "{kind} in every layer: a fixed state of {state} elements per sequence (convolution + recurrent), "
                "no KV cache; no attention and no MLP").format(
                kind=r["mixer"]["kind"], state=fmt.count(r["mixer"]["state_per_sequence"])) if pure else gettext(
                "{kind} in {layers} layers: a fixed state of {state} elements per sequence (convolution + "
                "recurrent) instead of a KV cache; the other layers attend and cache K and V").format(
                kind=r["mixer"]["kind"], layers=r["mixer"]["layers"],
                state=fmt.count(r["mixer"]["state_per_sequence"]))),
            (gettext("vision tower"), fmt.DASH if not r.get("vision") else gettext(
                "{params} parameters (run once per image, not in the decoder's counts): {parts}").format(
                params=fmt.count(sum(v for v in r["vision"].values() if isinstance(v, int))),
                parts=", ".join(f"{k} {fmt.count(v)}" for k, v in r["vision"].items() if isinstance(v, int)))),
            *([(gettext("audio tower"), gettext(
                "{params} parameters (run once per audio clip, not in the decoder's counts): {parts}").format(
                params=fmt.count(sum(v for v in r["audio"].values() if isinstance(v, int))),
                parts=", ".join(f"{k} {fmt.count(v)}" for k, v in r["audio"].items() if isinstance(v, int))))]
              if r.get("audio") else []),
            (gettext("checkpoint"), gettext("{size} of tensors").format(size=fmt.nbytes(r["checkpoint_bytes"]))
             if not r.get("tower_bytes") else gettext("{size} of tensors: the decoder's {decoder} and the encoders' "
                                                      "{tower} (16-bit), all loaded with the weights").format(
                size=fmt.nbytes(r["checkpoint_bytes"]), decoder=fmt.nbytes(r["checkpoint_bytes"] - r["tower_bytes"]),
                tower=fmt.nbytes(r["tower_bytes"]))),
            (gettext("block"), gettext("{norm} × {n}, qk-norm {qk}, {layout}, positions {positions}, biases "
                                       "{biases}").format(
                norm=gettext(NORM_NAMES.get(b["norm"], b["norm"])), n=b["norms_per_layer"], qk=label(b["qk_norm"]),
                layout=gettext("parallel") if b["parallel"] else gettext("sequential"),
                positions=label(b["positions"]), biases=biases))]

    def code(k: str) -> str:  # a config.json key is code, shown as code; one that could break out, escaped
        return f"`{k}`" if re.fullmatch(r"[\w.\-]+", k) else escape(k)

    def keys(names) -> str:
        return ", ".join(gettext("(top level) {key}").format(key=code(k.removeprefix("(top level) ")))
                         if k.startswith("(top level) ") else code(k) for k in names)

    warnings, captions = [], []
    if r["unknown_keys"]:
        warnings.append(gettext("Keys this estimator does not know (ignored): {keys}").format(
            keys=keys(r["unknown_keys"])))
    if r["ignored_keys"]:
        captions.append(gettext("Ignored (they change no GEMM, parameter or byte): {keys}").format(
            keys=keys(r["ignored_keys"])))
    if r.get("defaults"):
        captions.append(gettext("Absent, so transformers' defaults apply: {keys}").format(
            keys=", ".join(escape(f"{k} = {v}") for k, v in r["defaults"].items())))
    captions += [escape(tr(note)) for note in r["notes"]]
    return Read(gettext("What was read: {family}").format(family=family), [(k, escape(v)) for k, v in rows],
                gettext("read"), warnings, captions)


# ----------------------------------------------------------------------------- training, serving, A vs B
def greyed_training(inp: Inputs, recompute: str) -> dict[str, bool]:
    """The Training tab's boxes that count for nothing under the others (greyed out, and not counted by
    :func:`training`): the TP and EP overlaps at TP or EP 1 (the SMs with the EP overlap, and without one), the
    recomputed layers under any recompute but full, the recomputed modules under any but selective."""
    n = parallel_sizes(inp)
    return {"le_tpo": n["tp"] == 1, "le_epo": n["ep"] == 1, "le_rcl": recompute != "full",
            "le_rcm": recompute != "selective"}


def _train_run(est: ScaleOutEstimate, inp: TrainingInputs) -> tuple[TrainEstimate, tuple[str, ...]]:
    """The training run of the Training tab (and of the JSON download), and the recomputed modules left out."""
    # the overlaps count only where there is something to overlap (TP, EP above 1: their widgets grey out)
    epo = inp.epo if est.parallel.ep > 1 else "none"
    par = replace(est.parallel, virtual_stages=int(inp.vs), tp_comm_overlap=bool(inp.tpo) and est.parallel.tp > 1,
                  cp=int(inp.cp), ep_comm_overlap=epo != "none", ep_overlap=epo if epo != "none" else "megatron",
                  ep_comm_sms=int(inp.epsm) if epo != "none" else 0)
    par.check(est.model)
    # the recomputed layers and modules count only under the recompute that reads them (their widgets grey out);
    # a module this model lacks would rerun nothing: left out, and said
    modules = tuple(inp.rcm) if inp.rc == "selective" else ()
    idle = modules_the_model_lacks(est.model, est.workload, modules)
    modules = tuple(m for m in modules if m not in idle)
    tr = train(est.model, est.workload, est.hardware, par,
               Training(tokens=float(inp.tokens), micro_batch=inp.mb, recompute=inp.rc, zero=inp.zero,
                        recompute_layers=int(inp.rcl) if inp.rc == "full" else 0, recompute_modules=modules),
               _efficiency_of(est), est.memory_utilization)
    return tr, tuple(idle)


def what_is_left(inp: TrainingInputs) -> list[str]:
    """What a training run that does not fit can still turn to (N_-marked, ``{zero}``: its ZeRO stage), leaving out
    what it already does: ZeRO on (a higher stage, or more DP ranks to shard across), full recomputation of every
    layer, a micro-batch of 1."""
    left = [N_("more GPUs (TP, PP, DP with ZeRO)") if inp.zero == 0 else
            N_("more GPUs (TP, PP, or more DP ranks for ZeRO {zero} to shard across)")]
    if 0 < inp.zero < 3:
        left.append(N_("a higher ZeRO stage (3 shards the weights too)"))
    if inp.rc != "full":
        left.append(N_("recomputation") if inp.rc == "none" else N_("full recomputation"))
    elif inp.rcl:
        left.append(N_("full recomputation of every layer"))
    if inp.mb > 1:
        left.append(N_("a smaller micro-batch"))
    return left


def _either(items: list[str], gettext: Translate) -> str:
    """"a, b or c" in the reader's language."""
    if len(items) < 2:
        return "".join(items)
    return gettext("{some} or {last}").format(some=gettext(", ").join(items[:-1]), last=items[-1])


def training(est: ScaleOutEstimate, inp: TrainingInputs, *, gettext: Translate = english) -> TrainingView:
    """A training run of the estimate's workload (batch × prompt = one step's tokens) on its GPUs."""
    a = LLAMA31_405B
    tr, idle = _train_run(est, inp)
    t = tr.to_dict()
    mem = tr.memory
    if mem.fits:
        status = gettext("Fits: {need} per GPU in training of its {have}.").format(
            need=fmt.nbytes(mem.total_bytes), have=fmt.nbytes(mem.capacity_bytes))
    else:
        status = gettext("**Does not fit**: training needs {need} per GPU, {have} on each {gpu}. The step time, MFU, "
                         "tokens/s and GPU-hours below are not reachable on this set-up: {left}.").format(
            need=fmt.nbytes(mem.total_bytes), have=fmt.nbytes(mem.capacity_bytes), gpu=est.hardware.name,
            left=_either([gettext(x).format(zero=inp.zero) for x in what_is_left(inp)], gettext))
    # the status above says why: in a fifth of the page the longer "not reachable: does not fit" was cut with "…"
    off = {} if mem.fits else {"delta": gettext("not reachable"), "delta_color": "inverse"}
    return TrainingView(
        metrics=[
            Metric(gettext("step FLOPs"), fmt.si(t["step_flops"]),
                   help=gettext("forward + backward (input and weight gradient of every GEMM) + recomputation, exact")),
            Metric(gettext("step time"), _t(t["step_time_s"]), **off),
            Metric("MFU", fmt.percent(t["mfu"], 1), help=gettext("model FLOPs / (step time × GPUs × peak); HFU "
                                                                 "{hfu}").format(hfu=fmt.percent(t["hfu"], 1)), **off),
            Metric(gettext("tokens/s"), fmt.si(t["tokens_per_s"]),
                   help=gettext("{rate} per GPU").format(rate=fmt.si(t["tokens_per_s_per_gpu"])), **off),
            Metric(gettext("GPU-hours"), fmt.si(t["gpu_hours"]),
                   help=gettext("{steps:,} steps, {days:.3g} days on {gpus:,} GPUs").format(
                       steps=t["steps"], days=t["run_time_s"] / 86400, gpus=tr.gpus), **off)],
        fits=mem.fits, status=status,
        words=_then(gettext("Step time **{step}** = compute {compute} + communication {comm} ({dp}) + "
                      "pipeline bubble {bubble}, over {m} micro-batches per replica. Run FLOPs: exact **{run:.3g}**, "
                      "6·N·D {six:.3g}.").format(
            step=_t(t["step_time_s"]), compute=_t(t["compute_s"]), comm=_t(t["communication_s"]),
            dp=dp_communication_words(t).render(gettext), bubble=_t(t["bubble_s"]), m=t["microbatches"], run=t["run_flops"],
            six=t["six_nd_flops"]), *_exposed_words(t, est.parallel.overlap, gettext),
            *_overlap_words(t, tr.gpus, gettext, tr.hardware.sms),
            gettext("Left out of the recomputed modules, as {model} has no such part: {idle}.").format(
                model=est.model.name, idle=", ".join(idle)) if idle else ""),
        memory_chart=per_gpu_memory_spec(tr.memory, est.hardware.name, N_("per GPU in training"), gettext=gettext),
        caption=_then(gettext("Mixed-precision AdamW as ZeRO counts it (2Ψ weights + 2Ψ gradients + 12Ψ optimizer), "
                        "activations by Korthikanti et al. 2022; largest micro-batch that fits: {mb}. A published "
                        "anchor: {name}, {tokens:.3g} tokens, {flops:.2g} FLOPs, {hours:.2f} M {gpu} GPU-hours on "
                        "{gpus:,} GPUs at {mfu:.0%} MFU (`benchmarks/bench_scaleout.py` estimates it).").format(
            mb=f'{t["max_micro_batch"]:,}' if t["max_micro_batch"] else gettext("none, not even 1"),
            name=_tr_with(gettext)(a.name), tokens=a.tokens, flops=a.flops,
            hours=a.gpu_hours / 1e6, gpu=a.gpu, gpus=a.gpus, mfu=a.mfu), link_sentence("training", gettext)))


def _exposed_words(t: dict, overlap: bool, gettext: Translate) -> list[str]:
    """Each parallel group's communication, exposed of its total, as ``estimate --train`` prints it: the step's
    "communication" is the exposed part, "data parallel" the DP collectives' whole time."""
    groups = ", ".join(gettext("{group} {exposed} of {total}").format(
        group=g.upper(), exposed=_t(x["exposed_s"]), total=_t(x["total_s"])) for g, x in t["exposed_by_group"].items())
    if not groups:
        return []
    return [gettext("Communication with overlap (best case: every collective hidden), exposed of all: {groups}.")
            .format(groups=groups) if overlap else gettext("Communication exposed of all, by group: {groups}.")
            .format(groups=groups)]


def _overlap_words(t: dict, gpus: int, gettext: Translate, sms: int = 0) -> list[str]:
    """What context parallelism adds and the training step's named overlaps hide (and, with the SMs the all-to-alls
    hold, cost the compute), from its JSON (``TrainEstimate.to_dict``), its GPU count and the GPU's SM count."""
    out = []
    ex = t["exposed_by_group"]
    if t["cp"] > 1:
        ring = ex.get("cp", {"exposed_s": 0.0, "total_s": 0.0})
        out.append(gettext("Context parallel CP {cp}: the run takes {gpus:,} GPUs (the layout's {layout:,} × CP), each "
                           "sequence split across {cp} of them; the K/V ring: {exposed} of {total} exposed.").format(
            cp=t["cp"], gpus=gpus, layout=gpus // t["cp"], exposed=_t(ring["exposed_s"]),
            total=_t(ring["total_s"])))
    if t["tp_comm_overlap"] and "tp" in ex:
        out.append(gettext("TP communication overlapped with the GEMMs beside it: {exposed} of {total} exposed.").format(
            exposed=_t(ex["tp"]["exposed_s"]), total=_t(ex["tp"]["total_s"])))
    if t["ep_comm_overlap"] and "ep" in ex:
        out.append(gettext("EP all-to-alls overlapped ({schedule}: at most {share} of their time hidden): {exposed} of "
                           "{total} exposed.").format(schedule=t["ep_overlap"], share=fmt.percent(
                               t["ep_overlap_hidden_share"], 2 if t["ep_overlap_hidden_share"] < 1 else 0),
                               exposed=_t(ex["ep"]["exposed_s"]), total=_t(ex["ep"]["total_s"])))
        if t["ep_comm_sms"]:
            out.append(gettext("They hold {sms} of the GPU's {all} SMs while they run: the compute beside them runs on "
                               "the rest, {held} longer over the step.").format(
                sms=t["ep_comm_sms"], all=sms, held=_t(t["held_sms_s"])))
    return out


def greyed_serving(inp: ServingInputs) -> dict[str, bool]:
    """The Serving tab's boxes that count for nothing (greyed out): all of them with the serving curve off, the
    arrivals without a request rate (the CLI refuses ``--arrival`` without ``--request-rate``), the rate and the
    arrivals with every request at once (``--request-rate inf``: no gaps to draw)."""
    off = not inp.serve
    return {**{k: off for k in ServingInputs.keys() if k != "le_serve"}, "le_rate": off or inp.offline,
            "le_arrival": off or inp.offline or not inp.rate}


def serving_keywords(inp: ServingInputs, *, as_cli: bool = False) -> dict[str, Any]:
    """:func:`gemmlib.llm.serving.serving`'s keywords from the Serving tab's inputs (0: the flag left out), as
    ``estimate --serve`` makes them from its flags. ``as_cli``: the targets left out at one point (a rate or one
    concurrency), where the CLI refuses them (the tab reads the point against them; the JSON holds the CLI's)."""
    targets = not (as_cli and inp.point)
    return dict(tpot_target_s=inp.tpot / 1e3 if inp.tpot and targets else None,
                ttft_target_s=inp.ttft / 1e3 if inp.ttft and targets else None,
                engine=Engine(inp.engine, int(inp.kvb), int(inp.maxseqs), int(inp.maxtok)),
                request_rate=inp.request_rate, arrival=inp.arrival if inp.rate and not inp.offline else "poisson",
                concurrency=int(inp.conc) or None, requests=int(inp.nreq) or None)


def _serving_run(est: ScaleOutEstimate, inp: ServingInputs, *, as_cli: bool = False) -> Serving:
    """The serving curve (or the one point at a concurrency or a request rate) of the Serving tab and, ``as_cli``,
    of the JSON download."""
    return serving_curve(est.model, est.workload, est.hardware, est.parallel, _efficiency_of(est),
                         memory_utilization=est.memory_utilization, step_budget=PAGE_STEP_BUDGET,
                         **serving_keywords(inp, as_cli=as_cli))


def serving(est: ScaleOutEstimate, inp: ServingInputs, *, gettext: Translate = english) -> ServingView:
    """The serving curve of the estimate's requests (prompt + new tokens each), from one request to the KV limit,
    and the best concurrency under the targets; or the one point at a request rate or at one concurrency, read
    against the targets."""
    sv = _serving_run(est, inp)
    best = none = title = None
    one = bool(inp.point and sv.points)  # one point, no search for a best concurrency: said as such
    if one and inp.offline:
        title = gettext("Serving all {r:,} requests at once (KV limit {n:,} requests)").format(
            r=inp.nreq or DEFAULT_RATE_REQUESTS, n=sv.kv_limit)
    elif one and inp.rate:
        title = gettext("Serving at {rate:g} requests/s (KV limit {n:,} requests)").format(rate=inp.rate, n=sv.kv_limit)
    elif one:
        title = gettext("Serving at concurrency {c:,} (KV limit {n:,} requests)").format(c=inp.conc, n=sv.kv_limit)
    chart = serving_spec(sv, gettext=gettext, title=title)
    columns, labels = None, {c: gettext(h) for c, h in SERVING_COLUMNS.items()}
    if one:
        best, none = _at_point(sv, inp, gettext)
        columns = tuple(c for c in SERVING_COLUMNS if c != "best")  # no best concurrency is sought at one point
        if inp.request_rate:
            labels["concurrency"] = gettext("in flight (peak)")
    elif sv.best:
        best = _best_words(sv.best, inp, gettext)
    elif inp.tpot or inp.ttft:
        none = _none_words(sv.kv_limit, inp, gettext)
    return ServingView(best, none, chart, Table(serving_records(sv), labels, columns=columns),
                       _then(gettext("A step-level simulation of the engine's scheduler (continuous batching, chunked "
                               "prefill with vLLM, paged KV blocks), as `python -m gemmlib estimate --serve` runs "
                               "it: TTFT and TPOT are the requests' means. The KV limit is the largest concurrency "
                               "whose KV blocks fit at full length."), _requests_words(sv, inp, gettext),
                             _point_targets_words(inp, gettext) if one else "", _overhead_words(sv, gettext),
                             link_sentence("inference", gettext)))


def _best_words(b, inp: ServingInputs, gettext: Translate) -> str:
    """The best concurrency under the targets set (TPOT, TTFT or both), as the CLI's "best concurrency with …"."""
    kw = dict(target=inp.tpot, ttft_target=inp.ttft, n=b.concurrency, rate=b.tokens_per_s,
              per_gpu=b.tokens_per_s_per_gpu, ttft=_t(b.ttft_s), tpot=_t(b.tpot_s))
    if not inp.ttft:
        return gettext("Best concurrency under {target:g} ms per token: **{n:,}** requests, {rate:,.0f} tokens/s "
                       "({per_gpu:,.0f} per GPU), TTFT {ttft}").format(**kw)
    if not inp.tpot:
        return gettext("Best concurrency with TTFT under {ttft_target:g} ms: **{n:,}** requests, {rate:,.0f} "
                       "tokens/s ({per_gpu:,.0f} per GPU), TTFT {ttft}, TPOT {tpot}").format(**kw)
    return gettext("Best concurrency under {target:g} ms per token and {ttft_target:g} ms to the first token: "
                   "**{n:,}** requests, {rate:,.0f} tokens/s ({per_gpu:,.0f} per GPU), TTFT {ttft}, TPOT "
                   "{tpot}").format(**kw)


def _none_words(limit: int, inp: ServingInputs, gettext: Translate) -> str:
    """No concurrency up to the KV limit meets the targets set."""
    if not inp.ttft:
        return gettext("No concurrency up to the KV limit ({limit:,}) keeps TPOT under {target:g} ms.").format(
            limit=limit, target=inp.tpot)
    if not inp.tpot:
        return gettext("No concurrency up to the KV limit ({limit:,}) keeps TTFT under {target:g} ms.").format(
            limit=limit, target=inp.ttft)
    return gettext("No concurrency up to the KV limit ({limit:,}) keeps TPOT under {target:g} ms and TTFT under "
                   "{ttft_target:g} ms.").format(limit=limit, target=inp.tpot, ttft_target=inp.ttft)


def _at_point(sv: Serving, inp: ServingInputs, gettext: Translate) -> tuple[str | None, str | None]:
    """(success, warning) for the one point at a request rate or at one concurrency: what it reaches and whether
    its mean TPOT and TTFT meet the targets (it read "No concurrency up to the KV limit keeps TPOT under 50 ms"
    beside a row at 10.7 ms)."""
    p = sv.points[0]
    if inp.offline:
        return _offline_words(sv, inp, gettext)
    kw = dict(rate=inp.rate, tokens=p.tokens_per_s, per_gpu=p.tokens_per_s_per_gpu, ttft=_t(p.ttft_s),
              tpot=_t(p.tpot_s), n=p.concurrency, mean=p.mean_running, cap=inp.conc)
    if inp.rate and inp.conc:
        words = gettext("At {rate:g} requests/s, at most {cap:,} in flight: {tokens:,.0f} tokens/s ({per_gpu:,.0f} "
                        "per GPU), TTFT {ttft}, TPOT {tpot}, at most **{n:,}** requests in flight (mean "
                        "{mean:.3g}).").format(**kw)
    elif inp.rate:
        words = gettext("At {rate:g} requests/s: {tokens:,.0f} tokens/s ({per_gpu:,.0f} per GPU), TTFT {ttft}, TPOT "
                        "{tpot}, at most **{n:,}** requests in flight (mean {mean:.3g}).").format(**kw)
    else:
        words = gettext("At concurrency **{n:,}**: {tokens:,.0f} tokens/s ({per_gpu:,.0f} per GPU), TTFT {ttft}, "
                        "TPOT {tpot}.").format(**kw)
        if p.fits and p.concurrency > sv.kv_limit:  # the engine keeps fewer in flight than asked
            words = _then(words, gettext("That is above the KV limit ({limit:,}): not every request's KV blocks fit "
                                         "at once, so requests wait or are preempted ({preempted:,} "
                                         "preemptions).").format(limit=sv.kv_limit, preempted=p.preemptions))
    if not p.fits:
        return None, _then(words, gettext("Its KV cache does not fit: a lower rate, more GPUs or a smaller KV dtype.")
                           if inp.rate else gettext("Not even one request's KV cache fits beside the weights: "
                                                    "more GPUs, a smaller KV dtype or shorter requests."))
    return _read_against_targets(words, p, inp, gettext)


def _read_against_targets(words: str, p, inp: ServingInputs, gettext: Translate) -> tuple[str | None, str | None]:
    """(success, warning): ``words`` then whether the point's mean TPOT and TTFT meet the targets set."""
    said, over = [], False
    for target, got, within, beyond_rate, beyond_conc in (
            (inp.tpot, p.tpot_s, N_("Within the {target:g} ms per-token target."),
             N_("Over the {target:g} ms per-token target: a lower request rate or more GPUs."),
             N_("Over the {target:g} ms per-token target: a lower concurrency or more GPUs.")),
            (inp.ttft, p.ttft_s, N_("Within the {target:g} ms time-to-first-token target."),
             N_("Over the {target:g} ms time-to-first-token target: a lower request rate or more GPUs."),
             N_("Over the {target:g} ms time-to-first-token target: a lower concurrency or more GPUs."))):
        if target:
            missed = got * 1e3 > target
            over |= missed
            said.append(gettext(within if not missed else beyond_rate if inp.rate and not inp.offline
                                else beyond_conc).format(
                target=target))
    words = _then(words, *said)
    return (None, words) if over else (words, None)


def _offline_words(sv: Serving, inp: ServingInputs, gettext: Translate) -> tuple[str | None, str | None]:
    """(success, warning) for every request sent at once (``--request-rate inf``): an offline run is read by its
    throughput and by how long the average and the last requests wait for their first token; the requests in flight
    at most is said only where the engine held some back (that all of them were in flight says nothing)."""
    p = sv.points[0]
    if not p.fits:
        return None, gettext("Not even one request's KV cache fits beside the weights: more GPUs, a smaller KV dtype "
                             "or shorter requests.")
    kw = dict(all=p.requests, cap=inp.conc, tokens=p.tokens_per_s, per_gpu=p.tokens_per_s_per_gpu,
              rps=fmt.number(p.requests_per_s, 3), ttft=_t(p.ttft_s), p99=_t(p.ttft_p99_s), tpot=_t(p.tpot_s),
              took=_t(p.duration_s), n=p.concurrency, mean=p.mean_running, preempted=p.preemptions)
    if inp.conc:
        words = gettext("All {all:,} requests at once, at most {cap:,} in flight: {tokens:,.0f} tokens/s ({per_gpu:,.0f} "
                        "per GPU), {rps} requests/s, done in {took}. TTFT {ttft} on average, {p99} at the 99th "
                        "percentile; TPOT {tpot}.").format(**kw)
    else:
        words = gettext("All {all:,} requests at once: {tokens:,.0f} tokens/s ({per_gpu:,.0f} per GPU), {rps} "
                        "requests/s, done in {took}. TTFT {ttft} on average, {p99} at the 99th percentile; TPOT "
                        "{tpot}.").format(**kw)
    if p.concurrency < p.requests:
        words = _then(words, gettext("The engine runs at most **{n:,}** of them at a time (mean {mean:.3g}): the rest "
                                     "wait for a slot or KV blocks.").format(**kw))
    else:
        words = _then(words, gettext("The engine takes them all in at once (mean {mean:.3g} running).").format(**kw))
    if p.preemptions:
        words = _then(words, gettext("The KV blocks ran out {preempted:,} times: a request was preempted and "
                                     "recomputed later.").format(**kw))
    return _read_against_targets(words, p, inp, gettext)


def _requests_words(sv: Serving, inp: ServingInputs, gettext: Translate) -> str:
    """How many requests each point sends (``--num-requests``; said when given: the default is the CLI's), and
    the arrivals at a rate."""
    out = ""
    if inp.nreq:
        out = gettext("Each point sends {n:,} requests (`--num-requests`).").format(n=inp.nreq)
    if inp.rate and not inp.offline and inp.arrival == "fixed":
        out = _then(out, gettext("Requests arrive at fixed gaps of {gap} (`--arrival fixed`), not as a Poisson "
                                 "process.").format(gap=_t(1 / inp.rate)))
    return out


def _point_targets_words(inp: ServingInputs, gettext: Translate) -> str:
    """At one point with a target set: the target is a yardstick here, not a search (the CLI refuses a target
    beside ``--concurrency`` or ``--request-rate``, so the JSON download holds none)."""
    if not (inp.tpot or inp.ttft):
        return ""
    return gettext("One point is run, no best concurrency is sought: the targets are what it is read against. The "
                   "CLI refuses a target beside `--concurrency` or `--request-rate`, so the JSON download holds that "
                   "point without them.")


def _then(*sentences: str) -> str:
    """Sentences in a row: a space after an English full stop, none after a Chinese one ("。"): the English space
    read "…最大并发数。 每个引擎步…" in Chinese. Empty ones are left out."""
    out = ""
    for s in filter(None, sentences):
        out += s if not out or out.endswith(("。", "！", "？")) else " " + s
    return out


def _overhead_words(sv, gettext: Translate) -> str:
    """What the host adds to each engine step of the serving curve (no kernel's time: it was said nowhere)."""
    if not sv.step_overhead_s:
        return gettext("No host time is added per engine step: TensorRT-LLM's overlap scheduler prepares the next step "
                       "while the GPU runs this one.")
    return gettext("Each engine step adds {overhead} of host time (scheduling, input preparation, sampling), which "
                   "vLLM does not hide without its opt-in async scheduling: the bound WukLab measured for SGLang's "
                   "scheduler per iteration.").format(overhead=_t(sv.step_overhead_s))


@dataclass(frozen=True)
class ModelsView:
    chart: dict | None  # None: no model had a decode that fits
    words: str


MODEL_BATCHES = tuple(2**i for i in range(11))  # 1 … 1,024 concurrent sequences


def models_curve(est: ScaleOutEstimate, inp: Inputs, names: tuple[str, ...], *,
                 gettext: Translate = english) -> ModelsView:
    """Several models on one chart: the decode tokens/s of the whole batch at batches 1, 2, 4 … 1,024 for the
    estimate's own model and the presets ``names``, each under the page's inputs (its own checkpoint dtype where
    the convention decides, A's GPUs, layout and efficiency model), up to the largest batch that fits."""
    rows: list[dict] = []
    none: list[str] = []
    models = [est.model] + [PRESETS[n] for n in names if n in PRESETS and PRESETS[n].name != est.model.name]
    for cfg in models:
        n0 = len(rows)
        for b in MODEL_BATCHES:
            e = scaleout_estimate(cfg, workload(replace(inp, batch=b), cfg, est.hardware), est.hardware, est.parallel,
                                  efficiency_arg(inp), gpus=est.gpus, read_info={})
            t = e.times()
            if not e.per_gpu.fits or not t["decode_tokens_per_s"]:
                break
            rows.append({"model": cfg.name, "batch": b, "tokens/s": t["decode_tokens_per_s"],
                         "TPOT ms": t["time_per_output_token_s"] * 1e3})
        if len(rows) == n0:
            none.append(cfg.name)
    words = gettext("Each point is one estimate at that batch, with this page's prompt, new tokens, GPUs and "
                    "convention: decode tokens/s = batch ÷ time per output token. A line ends at the largest batch "
                    "whose weights and KV cache fit.")
    if none:
        words = _then(words, gettext("No decode that fits: {models}.").format(models=", ".join(none)))
    return ModelsView(models_spec(rows, gettext=gettext) if rows else None, words)


PICK = "pick"  # the FLOPs-by-op chart's selection: a click picks an op of a phase


def pickable(spec: dict) -> dict:
    """The FLOPs-by-op chart with a point selection on (op, phase): a click on a bar picks that op (the page
    then shows it on the roofline)."""
    return {**spec, "params": [{"name": PICK, "select": {"type": "point", "fields": ["op", "phase"]}}]}


def picked(selection: Mapping[str, Any] | None) -> tuple[str, str] | None:
    """(op, phase) of a chart selection event's ``selection`` (Streamlit's ``{"pick": [{"op": …, "phase": …}]}``),
    None when nothing is picked."""
    rows = (selection or {}).get(PICK) or []
    if not rows or not isinstance(rows[0], Mapping) or not {"op", "phase"} <= set(rows[0]):
        return None
    return str(rows[0]["op"]), str(rows[0]["phase"])


@dataclass(frozen=True)
class RooflineView:
    chart: dict
    words: str


def roofline_view(v: EstimatorView, pick: tuple[str, str] | None, *, gettext: Translate = english) -> RooflineView:
    """The roofline of ``v``, with the op ``pick`` (op, phase: a click on the FLOPs-by-op chart) drawn large and
    the others faded, and what that op is: its intensity, its throughput, its bound and its time."""
    words = gettext("Each op's predicted time is max(FLOPs / peak, bytes / bandwidth), both derated by the "
                    "efficiency. Decode GEMMs with one token per sequence sit far left of the ridge: they are "
                    "bound by reading the weights, which is why batching pays at decode.")
    pts = v.roofline_chart.get("datasets", {}).get("pts", [])
    hit = next((p for p in pts if pick and (p["op"], p["phase"]) == pick), None) if pick else None
    if hit is None:
        return RooflineView(v.roofline_chart, _then(words, gettext("Click a bar of the FLOPs-by-op chart to find "
                                                                   "that op here.")))
    chart = {**v.roofline_chart, "layer": [dict(layer) for layer in v.roofline_chart["layer"]]}
    test = f"datum.op === {json.dumps(hit['op'])} && datum.phase === {json.dumps(hit['phase'])}"
    for layer in chart["layer"]:
        if layer.get("mark", {}).get("type") == "point":
            layer["encoding"] = {**layer["encoding"], "size": {"condition": {"test": test, "value": 420}, "value": 60},
                                 "opacity": {"condition": {"test": test, "value": 1.0}, "value": 0.3}}
    said = gettext("**{op}** ({phase}): {intensity} FLOP/B, {rate}, {bound}, {time}.").format(
        op=hit["op"], phase=hit["phase"], intensity=fmt.number(hit["intensity"]),
        rate=fmt.si(hit["flops_per_s"], "FLOP/s"), bound=hit["bound"], time=fmt.duration(hit["time_s"]))
    return RooflineView(chart, _then(said, words))


def compare(est: ScaleOutEstimate, inp: CompareInputs, hw_b: Hardware, *, macs: bool = False,
            gettext: Translate = english) -> CompareView:
    """A second configuration (B) beside the estimate (A): B's model (A's own, an upload included, unless a preset
    is picked), its workload (A's convention, counting switches, dtypes, decode-only and efficiency model, with B's
    batch, prompt, new tokens and weights), on B's GPUs × ``hw_b`` (A's parallel layout when the GPU count is A's,
    else tensor parallel). ``differs``: the keys of B's widgets that differ from A, for the page to highlight."""
    model_b = est.model if inp.b_preset == SAME else PRESETS[inp.b_preset]
    wdt_b = est.workload.weight_dtype if inp.b_wdt == SAME else inp.b_wdt
    wl_b = replace(est.workload, batch=inp.b_batch, seq_len=inp.b_seq, new_tokens=inp.b_new, weight_dtype=wdt_b)
    par_b = est.parallel if inp.b_gpus == est.gpus else Parallel(tp=inp.b_gpus)
    with _gpus_as_tp(par_b, implicit=inp.b_gpus != est.gpus):
        est_b = scaleout_estimate(model_b, wl_b, hw_b, par_b, None if est.efficiency_model else est.efficiency,
                                  gpus=inp.b_gpus, read_info={})
    flags = {"yes", "no"}  # core.format's flags (fits: yes / no)
    quantity = gettext("quantity")
    rows = [{quantity: gettext(r["quantity"]), **{k: gettext(v) if k in ("A", "B") and v in flags else v
                                                  for k, v in r.items() if k != "quantity"}}
            for r in compare_rows(est, est_b)]
    wl = est.workload
    pairs = {"le_b_preset": (est.model.name, model_b.name), "le_b_batch": (wl.batch, inp.b_batch),
             "le_b_seq": (wl.seq_len, inp.b_seq), "le_b_new": (wl.new_tokens, inp.b_new),
             "le_b_wdt": (wl.weight_dtype, wdt_b), "le_b_gpu": (est.hardware.name, hw_b.name),
             "le_b_gpus": (est.gpus, inp.b_gpus)}
    differs = tuple(k for k, (a, b) in pairs.items() if a != b)
    if differs:
        what = ", ".join(gettext(FIELDS[k].label) for k in differs)
        words = gettext("B differs from A in: **{what}** (highlighted above). **B/A** is B's value divided by A's: "
                        "above 1×, B takes longer, moves more or holds more.").format(what=what)
    else:
        words = gettext("B is a copy of A: change any of B's inputs above to compare (B/A is then B's value "
                        "divided by A's).")
    labels = {"B/A": gettext("B/A (×)")}
    return CompareView(Table(rows, labels, index=quantity), compare_spec(est, est_b, macs=macs, gettext=gettext),
                       differs, words)


PARTS = {"training": training, "serving": serving, "compare": compare, "models": models_curve}  # the tabs built when they are turned on


# The page's cache key for the presenter's inputs (``st.cache_data(hash_funcs=CACHE_KEYS)``): each is a frozen
# dataclass of plain values whose ``repr`` names every field (none is ``repr=False``; tests/views check it), so
# equal reprs mean equal inputs. Streamlit's own hashing walks each object field by field: ~2 ms apiece, paid on
# every rerun for every cached call; a repr takes ~0.02 ms.
CACHE_KEYS: dict[type, Callable[[Any], str]] = {
    cls: repr for cls in (Inputs, TrainingInputs, ServingInputs, CompareInputs, ModelConfig, Hardware)}
