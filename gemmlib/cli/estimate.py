"""`python -m gemmlib estimate`: FLOPs, bytes, memory and time of every GEMM of an LLM.

Examples::

    python -m gemmlib estimate --preset llama-3-8b --batch 8 --seq-len 2048 --new-tokens 256 --gpu h100
    python -m gemmlib estimate --layers 32 --hidden 4096 --ffn 14336 --heads 32 --kv-heads 8 \\
        --vocab 128256 --seq-len 1024 --json
    python -m gemmlib estimate --config path/to/config.json --gpu a100 --gpus 2
    python -m gemmlib estimate --preset llama-3-70b --batch 16 --seq-len 2048 --new-tokens 256 --tp 8
    python -m gemmlib estimate --preset llama-3-8b --seq-len 4096 --batch 512 --train --train-tokens 1e12 \
        --tp 2 --dp 32 --gpus-per-node 8 --recompute selective --zero 1
    python -m gemmlib estimate --preset llama-3-70b --tp 8 --seq-len 2048 --new-tokens 256 --tpot-target-ms 50
    python -m gemmlib estimate --preset deepseek-v3 --context 32768 --mla absorbed --gpu h200 --tp 8
    python -m gemmlib estimate --preset mistral-7b --weight-dtype int4 --attention fused

The same code path as the LLM Estimator page (gemmlib.llm.scaleout over gemmlib.llm.accounting).
Light on purpose: no torch, answers in well under a second. An uploaded config.json's
torch_dtype is the default weight dtype, and its quantization_config sizes the weights exactly.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import replace

from gemmlib.cli.common import number, whole
from gemmlib.core import format as fmt
from gemmlib.core.dtypes import DTYPES
from gemmlib.core.errors import InputError
from gemmlib.core.hardware import CATALOGUE, get_hardware, load_hardware_file
from gemmlib.llm.accounting import (
    ATTENTION_KINDS,
    CONVENTIONS,
    DEFAULT_CONVENTION,
    EXPERTS_COMPUTE,
    MLA_FORMS,
    Workload,
    serving_dtypes,
)
from gemmlib.llm.config import NORM_KINDS, QK_NORMS, ModelConfig, layer_pattern, moe_pattern
from gemmlib.llm.hf import read_config_file
from gemmlib.llm.parallel import EP_OVERLAP_HIDDEN, Parallel
from gemmlib.llm.presets import from_name, preset_names
from gemmlib.llm.quant import WEIGHT_FORMATS
from gemmlib.llm.training import dp_communication_words


def add_arguments(p: argparse.ArgumentParser) -> None:
    src = p.add_argument_group("model (one of: --preset, --config, or the shape flags)")
    src.add_argument("--preset", metavar="NAME", help="a preset, e.g. llama-3-8b, mixtral-8x7b, gpt2")
    src.add_argument("--config", metavar="FILE", help="a Hugging Face config.json")
    src.add_argument("--layers", type=int, help="decoder layers (num_hidden_layers)")
    src.add_argument("--hidden", type=int, help="hidden size d_model")
    src.add_argument("--ffn", type=int, help="MLP inner width (intermediate size)")
    src.add_argument("--heads", type=int, help="query heads")
    src.add_argument("--kv-heads", type=int, help="key/value heads (default: = heads)")
    src.add_argument("--head-dim", type=int, help="per-head width (default: hidden / heads)")
    src.add_argument("--vocab", type=int, help="vocabulary size")
    src.add_argument("--mlp", choices=["gated", "plain"], default="gated",
                     help="gated (SwiGLU: gate, up, down) or plain (up, down); default gated")
    src.add_argument("--tied-embeddings", action="store_true", help="LM head shares the embedding")
    src.add_argument("--experts", type=whole(0), default=0,
                     help="mixture of experts: number of experts (default 0: a dense model)")
    src.add_argument("--experts-per-token", type=whole(0), default=0,
                     help="experts each token runs through (default 0: with --experts 0)")
    _add_architecture_arguments(p)
    wl = p.add_argument_group("workload")
    wl.add_argument("--batch", type=int, default=1, help="concurrent sequences (default 1)")
    wl.add_argument("--seq-len", type=int, default=None, help="prompt tokens per sequence (default 512; "
                    "--input-len when only that is given)")
    wl.add_argument("--new-tokens", type=whole(0, 10_000_000), default=None,
                    help="decode steps after the prefill (default 128, or --output-len when only that is given; 0 "
                         "with --train; 1 with --context; 0: the prefill only); step i sees S + i cached tokens")
    wl.add_argument("--context", type=whole(0, 100_000_000), metavar="C",
                    help="decode only: one decode step (or --new-tokens steps) with C tokens already cached "
                         "(0: an empty cache), no prefill")
    wl.add_argument("--reference", choices=list(CONVENTIONS), default=DEFAULT_CONVENTION,
                    help="the counting convention: engine (default: what an inference or training engine runs — "
                         "fused causal attention, the LM head on the last prompt position, routed experts, "
                         "absorbed MLA) or transformers (what transformers' eager code runs, exactly what "
                         "FlopCounterMode counts); a switch below overrides its choice and the answer says so")
    wl.add_argument("--attention", choices=list(ATTENTION_KINDS), default=None,
                    help="eager (the S x S scores go through memory, as transformers' eager attention) or "
                         "fused (a flash / SDPA kernel keeps them on chip: same FLOPs, fewer bytes); default: "
                         "the convention's (engine: fused)")
    wl.add_argument("--mla", choices=list(MLA_FORMS), default=None,
                    help="an MLA model's decode: eager (transformers: kv_b_proj decompresses the whole cache "
                         "every step) or absorbed (serving engines fold kv_b_proj into the query and output); "
                         "default: the convention's (engine: absorbed)")
    wl.add_argument("--causal", action=argparse.BooleanOptionalAction, default=None,
                    help="count only the causal triangle of attention (--no-causal: the dense S x S products); "
                         "default: the convention's (engine: causal)")
    wl.add_argument("--lm-head", choices=["all", "last"], default=None,
                    help="LM head over every prompt position or the last only; default: the convention's "
                         "(engine: last; a training step always runs every position)")
    wl.add_argument("--experts-compute", choices=list(EXPERTS_COMPUTE), default=None,
                    help="a MoE's experts: routed (each token through its experts-per-token experts, as engines run "
                         "every MoE) or eager (as the model's transformers code runs them: Llama 4 runs every "
                         "expert on every token); default: the convention's (engine: routed)")
    dts = sorted(DTYPES)
    wl.add_argument("--weight-dtype", default=None, choices=dts + [f for f in WEIGHT_FORMATS if f not in dts],
                    help="weights (default: the config's torch_dtype, a 32-bit one served in bf16; else bf16); int4 "
                         "and fp4 are block-scaled formats of the decoder's linears (groups of 128 with fp16 scale "
                         "and zero; NVFP4), a quantized config keeps its own format and this is the dtype of its "
                         "other tensors")
    wl.add_argument("--act-dtype", default=None, choices=dts,
                    help="what the weight GEMMs multiply in (sets their peak); default: the checkpoint's — an fp8 "
                         "checkpoint in fp8 where the GPU has the path, else the 16-bit model dtype; with an 8-bit "
                         "dtype attention and the element-wise work stay in bf16")
    wl.add_argument("--kv-dtype", default=None, choices=dts, help="the KV cache (default: the 16-bit model dtype)")
    hw = p.add_argument_group("hardware")
    hw.add_argument("--gpu", default="h100", help="catalogue name or alias (h100, h200, a100, l40s, 4090, cpu), or the name of a "
                    "ceiling measured on this machine, e.g. 'NVIDIA H200 (measured)', or a calibration ('NVIDIA H200 "
                    "(calibrated)', after `python -m gemmlib calibrate`: each op at its measured efficiency, one GPU)")
    hw.add_argument("--hardware-file", metavar="FILE", default=None,
                    help="a JSON file of your own GPUs, in the form of gemmlib/core/hardware.json (a 'gpus' list; "
                         "checked row by row); --gpu may then name one of its rows")
    hw.add_argument("--gpus", type=int, default=None,
                    help="number of devices: alone, shorthand for --tp N; with --tp/--pp/--ep/--dp, their product")
    hw.add_argument("--efficiency", type=float, default=None,
                    help="force one share of peak and bandwidth for every op, (0-1]; default: the shape model (each "
                         "op's efficiency from its M, N, K, dtype and the GPU, fitted to published measurements)")
    add_scaleout_arguments(p)
    out = p.add_argument_group("output")
    out.add_argument("--json", action="store_true", help="print one JSON object")
    out.add_argument("--macs", action="store_true", help="table in multiply-accumulates (FLOPs / 2)")


def _add_architecture_arguments(p: argparse.ArgumentParser) -> None:
    """The custom shape's features beyond the basic widths (the families' features)."""
    a = p.add_argument_group("custom architecture (with the shape flags)")
    a.add_argument("--sliding-window", type=whole(1), metavar="W", help="keys a sliding-window layer attends to")
    a.add_argument("--sliding-pattern", metavar="P", default=None,
                   help="which layers slide: all (default with --sliding-window), alternate (layers 0, 2, ...), "
                        "N:M (N sliding then M full, e.g. 5:1), or a unit of S/F letters")
    a.add_argument("--qk-norm", choices=list(QK_NORMS), default="none",
                   help="norms on q and k: head (one of head_dim shared by the heads) or width (over all heads)")
    a.add_argument("--v-head-dim", type=whole(1), help="value head width (default: head dim)")
    a.add_argument("--mla-kv-rank", type=whole(1), metavar="R", help="MLA: the cached latent's width (kv_lora_rank)")
    a.add_argument("--mla-q-rank", type=whole(0), metavar="R", help="MLA: the query's low rank (q_lora_rank; 0: none)")
    a.add_argument("--mla-rope-dim", type=whole(1), metavar="D",
                   help="MLA: the rotary part of the head dim (qk_rope_head_dim)")
    a.add_argument("--expert-ffn", type=whole(1), help="one expert's MLP width (default: --ffn)")
    a.add_argument("--shared-expert-ffn", type=whole(0), default=0,
                   help="width of an always-on shared expert MLP (default 0: none)")
    a.add_argument("--shared-expert-gate", action="store_true", help="a sigmoid gate on the shared expert (Qwen-MoE)")
    a.add_argument("--dense-layers", type=whole(0), default=0, metavar="K",
                   help="the first K layers are dense (MoE; default 0)")
    a.add_argument("--moe-every", type=whole(1), default=1, metavar="N", help="every N-th layer is MoE (default 1)")
    a.add_argument("--norm", choices=list(NORM_KINDS), default="rms",
                   help="the norms: rms (RMSNorm, a weight), layer (LayerNorm, weight and bias), layer_weight (LayerNorm with a weight only, Cohere) or plain (no parameters); default rms")
    a.add_argument("--norms-per-layer", type=int, default=2, choices=[1, 2, 4],
                   help="norms in each layer: 1 (a parallel block's shared one), 2 (before attention and MLP, the default) or 4 (sandwich: after each too, Gemma 2)")
    a.add_argument("--parallel-block", action="store_true", help="attention and MLP read the same input")
    a.add_argument("--qkv-bias", action="store_true", help="biases on q, k and v (Qwen2); default none")
    a.add_argument("--o-bias", action="store_true", help="a bias on the attention output o_proj; default none")
    a.add_argument("--mlp-bias", action="store_true", help="biases on the MLP's linears; default none")
    a.add_argument("--attention-sinks", action="store_true", help="one learned logit per head (gpt-oss)")
    a.add_argument("--max-positions", type=whole(0), default=0,
                   help="trained context (warn past it; default 0: unknown, no warning)")


_ARCH = ("sliding_window", "v_head_dim", "mla_kv_rank", "mla_q_rank", "mla_rope_dim", "expert_ffn")
_ARCH_FLAGS = ("sliding_pattern", "parallel_block", "qkv_bias", "o_bias", "mlp_bias", "attention_sinks",
               "shared_expert_gate")


def _custom_architecture(args: argparse.Namespace, layers: int) -> dict:
    """ModelConfig fields of the custom-architecture flags."""
    out: dict = {}
    pat = args.sliding_pattern
    if pat is not None:
        low = pat.strip().lower()
        unit = "" if low in ("all", "none", "full", "alternate") or ":" in low else pat.strip()
        if not low or set(unit.upper()) - {"S", "F"}:  # (the library's other letters are not this flag's)
            raise InputError(f"--sliding-pattern must be all, none, alternate, N:M or a unit of S and F letters, "
                             f"got {pat[:40]!r}")
    if args.sliding_window:
        out.update(sliding_window=args.sliding_window,
                   layer_types=layer_pattern(layers, args.sliding_pattern or "all"))
    elif args.sliding_pattern:
        raise InputError("--sliding-pattern needs --sliding-window")
    if args.mla_kv_rank:
        if not args.mla_rope_dim:
            raise InputError("MLA needs --mla-rope-dim (the rotary part of the head dim) with --mla-kv-rank")
        out.update(kv_lora_rank=args.mla_kv_rank, q_lora_rank=args.mla_q_rank or 0, rope_head_dim=args.mla_rope_dim,
                   kv_heads=args.heads)
    elif args.mla_q_rank or args.mla_rope_dim:
        raise InputError("--mla-q-rank / --mla-rope-dim need --mla-kv-rank")
    if args.experts:
        if args.dense_layers or args.moe_every != 1:
            out["moe_layers"] = moe_pattern(layers, first_dense=args.dense_layers, every=args.moe_every)
        out.update(expert_ffn=args.expert_ffn or 0, shared_expert_ffn=args.shared_expert_ffn,
                   shared_expert_gate=args.shared_expert_gate)
    elif (args.expert_ffn or args.shared_expert_ffn or args.dense_layers or args.moe_every != 1
          or args.shared_expert_gate):
        raise InputError("--expert-ffn, --shared-expert-ffn, --shared-expert-gate, --dense-layers and --moe-every "
                         "need --experts")
    out.update(qk_norm=args.qk_norm, v_head_dim=args.v_head_dim or 0, norm=args.norm,
               norms_per_layer=args.norms_per_layer, parallel_block=args.parallel_block, qkv_bias=args.qkv_bias,
               o_bias=args.o_bias, mlp_bias=args.mlp_bias, attention_sinks=args.attention_sinks,
               max_positions=args.max_positions or 0)
    return out


def _architecture_given(args: argparse.Namespace) -> list[str]:
    given = [f for f in _ARCH if getattr(args, f, None)]
    given += [f for f in _ARCH_FLAGS if getattr(args, f, None)]
    if getattr(args, "qk_norm", "none") != "none":
        given.append("qk_norm")
    for f, default in (("shared_expert_ffn", 0), ("dense_layers", 0), ("moe_every", 1), ("norm", "rms"),
                       ("norms_per_layer", 2), ("max_positions", 0)):
        if getattr(args, f, default) != default:
            given.append(f)
    return given


_SHAPE = ("layers", "hidden", "ffn", "heads", "kv_heads", "head_dim", "vocab")


def model_from_args(args: argparse.Namespace) -> ModelConfig:
    """The model the flags name (see :func:`model_and_read_from_args` for what was read)."""
    return model_and_read_from_args(args)[0]


def model_and_read_from_args(args: argparse.Namespace) -> tuple[ModelConfig, dict]:
    """The model the flags name and what was read: the parser's report for --config, none otherwise."""
    shape_given = [f for f in _SHAPE if getattr(args, f) is not None]
    shape_given += [f for f in ("experts", "experts_per_token") if getattr(args, f)]
    arch = _architecture_given(args)
    sources = [s for s, on in (("--preset", args.preset is not None), ("--config", args.config is not None),
                               ("shape flags", bool(shape_given))) if on]
    if len(sources) > 1:
        raise InputError(f"give only one of --preset, --config or the shape flags (got {' and '.join(sources)})")
    if arch and not shape_given:
        raise InputError(f"--{arch[0].replace('_', '-')} describes a custom model: give the shape flags "
                         "(--layers --hidden --ffn --heads --vocab) too")
    if args.preset is not None:
        return from_name(args.preset), {}
    if args.config is not None:
        return read_config_file(args.config)
    if not shape_given:

        raise InputError("say which model: --preset NAME (" + ", ".join(preset_names())
                         + "), --config FILE, or --layers --hidden --ffn --heads --vocab")
    missing = [f"--{f.replace('_', '-')}" for f in ("layers", "hidden", "ffn", "heads", "vocab")
               if getattr(args, f) is None]
    if missing:
        raise InputError(f"a custom model needs {', '.join(missing)}")
    for f in _SHAPE:
        v = getattr(args, f)
        if v is not None and v < 1:
            raise InputError(f"--{f.replace('_', '-')} must be at least 1, got {v}")
    fields = dict(layers=args.layers, hidden=args.hidden, ffn=args.ffn, heads=args.heads,
                  kv_heads=args.kv_heads or 0, head_dim=args.head_dim or 0, vocab=args.vocab,
                  mlp=args.mlp, tied_embeddings=args.tied_embeddings, experts=args.experts,
                  experts_per_token=args.experts_per_token, name="custom")
    fields.update(_custom_architecture(args, args.layers))
    return ModelConfig(**fields), {}


def workload_from_args(args: argparse.Namespace, cfg: ModelConfig, hw=None) -> Workload:
    """The workload of the flags: the convention's switches unless a flag sets one; the dtypes the
    convention serves the checkpoint at (:func:`gemmlib.llm.accounting.serving_dtypes`) unless given.
    A training run (--train) has no decode steps unless --new-tokens asks for them."""
    conv = getattr(args, "reference", DEFAULT_CONVENTION)
    dts = serving_dtypes(cfg, hw, conv)
    q = cfg.quant
    if (args.weight_dtype and q is not None and q.unquantized_dtype and args.weight_dtype not in ("int4", "fp4")
            and args.weight_dtype != q.unquantized_dtype):
        # it was accepted, said as "other tensors fp8", and changed no byte
        raise InputError(f"--weight-dtype {args.weight_dtype} does not apply to {cfg.name}: {q.label or q.method} "
                         f"stores its other tensors in {q.unquantized_dtype}; leave --weight-dtype out")
    common = dict(batch=args.batch, causal=args.causal, lm_head=args.lm_head,
                  weight_dtype=args.weight_dtype or dts["weight_dtype"], act_dtype=args.act_dtype or dts["act_dtype"],
                  kv_dtype=args.kv_dtype or dts["kv_dtype"], attention=args.attention, mla=args.mla,
                  experts_compute=getattr(args, "experts_compute", None), convention=conv)
    if args.context is not None:
        if args.seq_len is not None:
            raise InputError("give --context (decode only, C tokens cached) or --seq-len (a prompt), not both")
        return Workload(seq_len=args.context, new_tokens=1 if args.new_tokens is None else args.new_tokens,
                        decode_only=True, **common)
    train = getattr(args, "train", False)
    # a request's lengths (--input-len / --output-len) without --seq-len / --new-tokens are the whole output's: the
    # phases and time line at the prompt the SERVING section serves, not one TTFT at 512 and another at 4,096
    seq = args.seq_len if args.seq_len is not None else None if train else getattr(args, "input_len", None)
    new = args.new_tokens if args.new_tokens is not None else None if train else getattr(args, "output_len", None)
    return Workload(seq_len=512 if seq is None else seq, new_tokens=(0 if train else 128) if new is None else new,
                    **common)


_fmt = fmt.si  # one formatter (gemmlib.core.format): SI values with units; amounts of bytes: fmt.nbytes
_time = fmt.duration


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = "  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(headers, widths, strict=True)))
    out = [line.rstrip(), "-" * len(line)]  # no trailing blanks where the last column (e.g. "best") is empty
    for r in rows:
        out.append("  ".join(c.rjust(w) if i else c.ljust(w)
                             for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip())
    return "\n".join(out)


def _read_lines(read: dict | None) -> list[str]:
    """What was read from a config.json (or a preset): one line each."""
    if not read:
        return []
    att = read["attention"]
    bits = [f"family {read['family']}" + (f" (in {read['wrapper']})" if read.get("wrapper") else "")]
    comp = read.get("compressed")
    if comp:  # DeepSeek-V4
        bits.append(f"attention: a window of {att['window']} in every layer; {att['sliding']} sliding only, "
                    f"{att['compressed_sparse']} compressed sparse (an entry per {comp['csa_rate']} tokens, the top "
                    f"{comp['index_topk']:,} of a {comp['index_heads']} × {comp['index_head_dim']} indexer), "
                    f"{att['heavily_compressed']} heavily compressed (an entry per {comp['hca_rate']} tokens) "
                    f"({att['pattern']}); one key/value head, queries from a {comp['q_lora_rank']} latent, output in "
                    f"{comp['o_groups']} groups")
    elif att["sliding"] or att["chunked"]:
        bits.append(f"attention {att['full']} full + {att['sliding'] + att['chunked']} "
                    f"{'chunked' if att['chunked'] else 'sliding'} (window {att['window']}, {att['pattern']})")
    elif att.get("without_attention") and not att["full"] and read["block"].get("layers_without_mlp"):
        bits.append(f"no attention and no MLP: every layer a mixer ({att['pattern']})")
    elif att.get("without_attention") and not att["full"]:
        bits.append(f"no attention: every layer a mixer and an MLP ({att['pattern']})")
    elif att.get("without_attention"):
        with_att = att["full"]
        bits.append(f"full attention in {with_att} of {with_att + att['without_attention']} layers ({att['pattern']})")
    elif read.get("block_sparse"):
        bs = read["block_sparse"]
        bits.append(f"block-sparse attention in {att['with_indexer']} of {att['full']} layers (the top "
                    f"{bs['index_topk_blocks']} blocks of {bs['index_block']} keys per query, chosen by an indexer of "
                    f"{bs['index_heads']} × {bs['index_head_dim']}, its key cached too), the others full "
                    f"({att['pattern']})")
    elif att.get("cross_attention"):
        bits.append(f"attention: {att['full']} self-attention layers, full")
    else:
        bits.append("attention: every layer full")
    if att.get("attention_experts"):  # JetMoE
        ae = att["attention_experts"]
        bits.append(f"a mixture of attention heads: {ae['experts']} experts (query and output projections), top-"
                    f"{ae['per_token']}, keys and values shared")
    if att.get("differential"):
        bits.append("differential attention (two calls per head, the same scores against each half of the values)")
    if att.get("cross_attention"):
        bits.append(f"{att['cross_attention']} cross-attention layers (to an image's vision tokens: skipped on text, "
                    "their weights counted)")
    if att.get("kv_shared") and read["mla"]:
        bits.append(f"{att['kv_shared']} layers read an earlier layer's latent (no kv_a_proj, no latent cached)")
    elif att.get("kv_shared"):
        bits.append(f"the last {att['kv_shared']} layers (s, f) reuse the keys and values of an earlier layer")
    blk = read.get("block", {})
    if blk.get("per_layer_inputs"):
        bits.append(f"per-layer inputs {blk['per_layer_inputs']} wide")
    if blk.get("shared_blocks"):  # Zamba2
        sb = blk["shared_blocks"]
        shared = (f"one shared attention-and-MLP block run by the {sb['layers']} P layers" if sb["blocks"] == 1 else
                  f"{sb['blocks']} shared attention-and-MLP blocks run in turn by the {sb['layers']} P layers")
        bits.append(f"{shared} on [hidden; embedding] ({sb['input_width']:,} wide)"
                    + (f", each run with its own rank-{sb['adapter_rank']} adapters on gate|up"
                       f"{' and q, k, v' if sb['qkv_adapters'] else ''}" if sb["adapter_rank"] else ""))
    if blk.get("head_dense"):  # ModernBERT's decoder
        bits.append("a dense hidden → hidden, its activation and a norm before the LM head")
    if blk.get("hyper_streams"):
        bits.append(f"hyper-connections over {blk['hyper_streams']} streams")
    if read.get("hash_layers"):
        bits.append(f"the first {read['hash_layers']} MoE layers routed by a token table")
    if blk.get("altup_inputs"):
        bits.append(f"AltUp over {blk['altup_inputs']} streams, LAuReL rank {blk.get('laurel_rank', 0)}")
    if read["mla"]:
        mla = read["mla"]
        nope = (f"; {mla['without_rope']['layers']} layers without rotary dims, the latent alone cached"
                if mla.get("without_rope") else "")
        if not mla["qk_rope_head_dim"]:  # (GLM-5-Next: every attention layer NoPE)
            bits.append(f"MLA without rotary dims (latent {mla['kv_lora_rank']} cached per token and layer)")
        else:
            bits.append(f"MLA (latent {mla['kv_lora_rank']} + rope {mla['qk_rope_head_dim']} cached per token and "
                        f"layer{nope})")
    if read.get("dsa") and read["dsa"].get("index_kpool"):
        dsa, kp = read["dsa"], read["dsa"]["index_kpool"]
        bits.append(f"DeepSeek Sparse Attention over pools (the top {dsa['index_topk'] // kp} pools of {kp} keys per "
                    f"query and its incomplete pool; an indexer of {dsa['index_heads']} × {dsa['index_head_dim']} "
                    f"scoring the pools' gated averages in {att['with_indexer']} of {att['full']} layers, its key and "
                    "gate scores cached too)")
    elif read.get("dsa"):
        dsa = read["dsa"]
        bits.append(f"DeepSeek Sparse Attention (top {dsa['index_topk']:,} keys per query; an indexer of "
                    f"{dsa['index_heads']} × {dsa['index_head_dim']} in {att['with_indexer']} of {att['full']} layers, "
                    f"its key cached too)")
    if read["experts"]:
        e = read["experts"]
        bits.append(f"{e['experts']} experts top-{e['per_token']} in {e['moe_layers']} layers"
                    + (f", {e['dense_layers']} dense" if e["dense_layers"] else "")
                    + (f", shared expert {e['shared_expert_ffn']}" if e["shared_expert_ffn"] else "")
                    + (f", as many image experts of width {e['vision_expert_ffn']} (stored, not run on text)"
                       if e.get("vision_expert_ffn") else ""))
    if read.get("mixer"):
        mx = read["mixer"]
        bits.append(f"{mx['kind']} mixer in {mx['layers']} layers (state {mx['state_per_sequence']:,} elements per "
                    "sequence, not growing with the context)")
    if read.get("vision"):
        bits.append(f"vision tower {sum(read['vision'].values()):,} parameters (not in the decoder's counts or FLOPs; "
                    f"its weights are in the memory)")
    if read.get("audio"):
        bits.append(f"audio tower {sum(read['audio'].values()):,} parameters (not in the decoder's counts or FLOPs; "
                    f"its weights are in the memory)")
    if read["quantization"]:
        bits.append(f"quantization {read['quantization']['label']}")
    bits.append(f"dtype {read['dtype'] or 'not given'}")
    lines = ["read      " + "; ".join(bits)]
    if read.get("unknown_keys"):
        lines.append(f"          keys not understood (ignored): {', '.join(read['unknown_keys'])}")
    if read.get("ignored_keys"):
        lines.append(f"          {len(read['ignored_keys'])} keys that change no count ignored")
    for note in read.get("notes", []):
        lines.append(f"          note: {note}")
    return lines


def _convention_line(conv: dict) -> str:
    """Which counting convention the answer used, in one line, with what was set apart from it."""
    what = {"engine": "what an engine runs", "transformers": "transformers' eager code, as FlopCounterMode counts it"}
    line = (f"counting  {conv['name']} convention ({what.get(conv['name'], conv['name'])}): "
            f"{'causal' if conv['causal'] else 'dense'} {conv['attention']} attention, LM head on "
            f"{conv['lm_head']} prompt positions, {conv['experts_compute']} experts, MLA {conv['mla']}")
    over = conv.get("overridden") or {}
    if over:
        def word(x) -> str:  # a switch as words, not Python's True / False
            return "on" if x is True else "off" if x is False else str(x)

        line += "; overridden: " + ", ".join(f"{k} {word(v['value'])} (the convention: {word(v['convention'])})"
                                              for k, v in over.items())
    return line


def render_text(est, macs: bool = False, read: dict | None = None, d: dict | None = None) -> str:
    """The human-readable report (also used by tests); ``d`` is ``est.to_dict()`` when already made."""
    m, wl = est.model, est.workload
    d = est.to_dict() if d is None else d
    read = d.get("read") if read is None else read
    unit, div = ("MAC", 2) if macs else ("FLOP", 1)
    wsrc = (read or {}).get("weight_dtype_source")
    lines = _read_lines(read) + [
        f"model     {m.name}: {m.params:,} parameters"
        + (f" ({m.active_params:,} active per token, {m.active_params_without_embedding:,} without the input "
           "embedding)" if m.is_moe else "")
        + (f"; {m.layers} layers, hidden {m.hidden}, each a {m.mixer.kind} mixer (no attention, no MLP), vocab {m.vocab}"
           if m.attention_free else
           f"; {m.layers} layers, hidden {m.hidden}, heads {m.heads}/{m.kv_heads} KV, head dim {m.head_dim}, "
           f"FFN {m.ffn} {m.mlp}, vocab {m.vocab}") + (f", {m.experts} experts top-{m.experts_per_token}" if m.is_moe else ""),
        f"workload  batch {wl.batch}, "
        + (f"decode only with {wl.seq_len} tokens cached" if wl.decode_only else f"prompt {wl.seq_len}")
        + f", {wl.new_tokens} decode step{'' if wl.new_tokens == 1 else 's'}; "
        f"{'causal' if wl.causal else 'dense'} {wl.attention} attention, LM head on {wl.lm_head} positions; "
        + (f"weights {wl.weight_dtype} ({wsrc})" if wsrc else f"weights {wl.weight_dtype}")
        + f", activations {wl.act_dtype}, KV {wl.kv_dtype}" + (f"; MLA {wl.mla}" if m.is_mla else ""),
        _convention_line(d["conventions"]),
        f"hardware  {est.gpus} x {est.hardware.label}, efficiency {_efficiency_words(d['efficiency_model'])}, "
        f"peak {_fmt(d['hardware']['peak_flops_per_gpu'], 'FLOP/s')} ({wl.act_dtype}), "
        f"{_fmt(est.hardware.bandwidth, 'B/s')} each",
        "",
    ]
    for phase in (est.prefill, est.decode):
        if not phase.ops:
            lines.append(f"{phase.name}: no steps")
            continue
        lines.append(f"{phase.name.upper()}  ({'all steps, ' if phase.name == 'decode' else ''}"
                     + ("whole batch)" if est.gpus == 1 else f"one GPU's share of {est.gpus}; time excludes "
                                                            "communication, shown below)"))
        rows = []
        for o in phase.gemm_ops:
            n = f"{o.n}..{o.n_last}" if o.n_last else str(o.n)
            k = f"{o.k}..{o.k_last}" if o.k_last else str(o.k)
            rows.append([o.name, str(o.m), n, k, fmt.count(o.count), _fmt(o.flops / div), fmt.nbytes(o.bytes),
                         fmt.number(o.intensity, 3), o.bound, _time(o.time_s)])
        rows.append(["GEMM total", "", "", "", "", _fmt(sum(o.flops for o in phase.gemm_ops) / div),
                     fmt.nbytes(sum(o.bytes for o in phase.gemm_ops)), "", "", _time(phase.gemm_time_s)])
        for o in phase.other_ops:  # element-wise work: its FLOPs are not GEMM FLOPs
            rows.append([f"{o.name} (not GEMM)", str(o.m), str(o.n), "", fmt.count(o.count), _fmt(o.flops / div),
                         fmt.nbytes(o.bytes), fmt.number(o.intensity, 3), o.bound, _time(o.time_s)])
        rows.append(["total", "", "", "", "", "", fmt.nbytes(sum(o.bytes for o in phase.ops)), "", "",
                     _time(sum(o.time_s for o in phase.ops))])
        lines.append(_table(["op", "M", "N", "K", "count", unit + "s", "bytes", "FLOP/B", "bound", "time"], rows))
        fs, ts = phase.gemm_share_of_flops, phase.gemm_share_of_time
        lines.append(f"GEMM share of the {phase.name}: {fs:.2%} of FLOPs, {ts:.1%} of the time")
        lines.append("")
    mem, t = est.memory, est.times()
    whole = (d.get("per_gpu") or {}).get("fits")  # the per-GPU accounting (activations, workspace) when there is one
    if not mem.fits:
        verdict = f"does NOT fit (needs at least {mem.min_gpus} of these devices)"
    elif whole is False:
        pg = d["per_gpu"]
        held = pg["weights_bytes"] + pg["kv_cache_bytes"]
        # a layout that replicates the weights (DP) can leave one GPU's share of them past its memory on its own; it
        # said "fit, but not with the activations and workspace beside them" of 131 GiB of weights on an 80 GB GPU
        verdict = ("weights and KV cache fit, but not with the activations and workspace beside them "
                   "(per GPU, below)" if held <= pg["capacity_bytes"] else
                   f"fits the {mem.gpus} GPUs' memory in all, but not as this layout places it: one GPU holds "
                   f"{fmt.nbytes(held)} of weights and KV cache (per GPU, below)")
    else:
        verdict = "fits"
    if est.train is not None:  # these lines size serving this batch; a reader must not take them for the training step's
        verdict += " (serving this batch; the training step's memory is under TRAINING)"
    lines += [
        f"memory    weights {fmt.nbytes(mem.weights_bytes)} + KV cache {fmt.nbytes(mem.kv_cache_bytes)} "
        f"= {fmt.nbytes(mem.total_bytes)} of {fmt.nbytes(mem.capacity_bytes)}: " + verdict,
        f"time      prefill (time to first token) {_time(t['ttft_s'])}; per output token "
        f"{_time(t['time_per_output_token_s'])}; decode {_fmt(t['decode_tokens_per_s'])} tokens/s (whole batch); "
        f"total {_time(t['total_s'])}",
    ]
    # the warnings about this answer sit under it (they were printed under the rules-of-thumb heading, as if one)
    lines += [f"warning   {w}" for w in d.get("warnings", [])]
    lines += ["", "counting switches (prefill / decode " + unit + "s, the whole job)"]
    width = max([55, *(len(r["variant"]) for r in d["variants"])])  # one column, the longest label included
    for r in d["variants"]:
        mark = "*" if r["selected"] else " "
        lines.append(f" {mark} {r['variant']:<{width}} {_fmt(r['prefill_flops'] / div):>10} / "
                     f"{_fmt(r['decode_flops'] / div):>10}")
    if d["rules_of_thumb"]:
        lines += ["", "rules of thumb vs the exact prefill count"]
    for r in d["rules_of_thumb"]:
        lines.append(f"  {r['rule']}: {_fmt(r['value'])} (exact / rule = {fmt.number(r['ratio'], 3)}) - {r['reason']}")
    return "\n".join(lines)


def _efficiency_words(e: dict) -> str:
    """What set the ops' efficiency, in a few words (the JSON's ``efficiency_model``)."""
    if e.get("kind") == "flat":
        notes = "; ".join(str(n) for n in e.get("notes") or [])
        return f"flat {e['value']:g} of peak and bandwidth" + (f" ({notes})" if notes else "")
    return str(e.get("label") or e.get("kind"))


def _hardware(name: str, hardware_file: str | None = None):
    """A catalogue row (the user's ``--hardware-file`` rows too), or a ceiling measured on this machine
    (``python -m gemmlib devices``) by its name."""
    rows = {**CATALOGUE, **load_hardware_file(hardware_file)} if hardware_file else None
    try:
        return get_hardware(name, rows)
    except InputError:
        from gemmlib.core.ceilings import measured_hardware_all  # only for a name not in the catalogue

        try:
            measured = {h.name.lower(): h for h in measured_hardware_all()}
        except Exception:  # noqa: BLE001 - no measurements: report the catalogue error
            measured = {}
        hw = measured.get(str(name).strip().lower())
        if hw is None:
            calibrated = _calibration_names()
            if not measured and not calibrated:
                raise
            here = ([f"one measured on this machine: {', '.join(h.name for h in measured.values())}"] if measured
                    else []) + ([f"one calibrated here: {calibrated}"] if calibrated else [])
            raise InputError(f"unknown GPU {str(name)[:60]!r}; choose one of: {', '.join(rows or CATALOGUE)}; or "
                             f"{'; or '.join(here)}") from None
        return hw


def _calibration_names() -> str:
    """The saved calibrations' row names, for a refusal ("" when none): `estimate --gpu` takes each of them, and a
    newcomer who named another device otherwise never learnt that "NAME (calibrated)" exists here."""
    from gemmlib.core.calibration import calibrated_names

    try:
        return ", ".join(sorted(calibrated_names()))
    except Exception:  # noqa: BLE001 - an unreadable calibration file: the refusal stays the catalogue's
        return ""


def run(args: argparse.Namespace) -> int:
    from gemmlib.llm.accounting import dumps

    cfg, info = model_and_read_from_args(args)
    calibrated = str(args.gpu).strip().lower().endswith("(calibrated)")
    hw = None if calibrated else _hardware(args.gpu, args.hardware_file)
    wl = workload_from_args(args, cfg, hw)
    if calibrated:
        est = replace(_calibrated(args, cfg, wl), read_info=info)
    else:
        est = scaleout_estimate(args, cfg, wl, hw, read_info=info)
    d = est.to_dict()  # once: the text and the JSON are both read from it
    if args.json:
        sys.stdout.write(dumps(d) + "\n")
    elif est.scale_out is None:
        sys.stdout.write(render_text(est, macs=args.macs, d=d) + "\n")
    else:
        sys.stdout.write(render_text(est, macs=args.macs, d=d) + "\n\n" + render_scaleout(est, d) + "\n")
    return 0


# ----- beyond one GPU: parallelism, per-GPU memory, training, serving ---------------------------------

def add_scaleout_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("parallelism (their product is the GPU count; communication is charged)")
    for name, what in (("tp", "tensor parallel"), ("pp", "pipeline stages"), ("ep", "expert parallel"),
                       ("dp", "data-parallel replicas")):
        g.add_argument(f"--{name}", type=int, default=None, help=f"{what} (default 1)")
    g.add_argument("--etp", type=whole(1), default=None,
                   help="expert tensor parallel: the ranks each routed expert splits across (default --tp). Set "
                        "apart from --tp it folds EP over the TP and DP ranks (Megatron's MoE parallel folding, "
                        "vLLM's expert parallelism): the GPUs are --etp x --cp x --pp x --ep x --dp (--dp: the "
                        "experts' data replicas) and attention runs TP --tp on each --tp of them")
    g.add_argument("--gpus-per-node", type=whole(1), default=None,
                   help="GPUs per node joined by the fast link (default: the catalogue's typical node, e.g. 8)")
    g.add_argument("--microbatches", type=whole(1), default=None,
                   help="pipeline micro-batches of an inference phase (default: --pp); a training step has "
                        "--batch / (--dp x --micro-batch)")
    g.add_argument("--cp", type=whole(1), default=None,
                   help="context parallel (training): each sequence split across N ranks, K/V passed around a ring")
    g.add_argument("--virtual-stages", type=whole(1), default=None, metavar="V",
                   help="interleaved 1F1B (training): V model chunks per pipeline stage, bubble (p-1)/(V·m)")
    g.add_argument("--overlap", action="store_true",
                   help="best case: every collective hidden behind compute (default: inference charges every "
                        "collective; training hides each one behind the compute it can hide behind)")
    g.add_argument("--tp-comm-overlap", action="store_true",
                   help="training: Transformer Engine's TP communication overlapped with the GEMMs beside it")
    g.add_argument("--ep-comm-overlap", nargs="?", const="megatron", default=None, choices=tuple(EP_OVERLAP_HIDDEN),
                   help="training: the EP all-to-alls overlapped with another micro-batch's compute, as Megatron's "
                        "--overlap-moe-expert-parallel-comm does (the default: at most "
                        f"{EP_OVERLAP_HIDDEN['megatron']:.2%} of their time hidden, as measured on 16 H100s)".replace(
                            "%", "%%") + " or as DeepSeek-V3's DualPipe does (dualpipe: all of it)")
    g.add_argument("--ep-comm-sms", type=whole(0), default=None, metavar="S",
                   help="training, with --ep-comm-overlap: the SMs the all-to-all kernels hold while they run beside "
                        "the compute, which runs on the rest (DeepSeek-V3: 20 of the H800's 132; DeepEP's default "
                        "20; HybridEP's moe_hybridep_num_sms); default 0, nothing charged")
    g.add_argument("--ep-fp8-dispatch", action="store_true",
                   help="an 8-bit run's EP dispatch sends the tokens in fp8 (DeepSeek-V3); default 16-bit, as "
                        "Megatron's all-to-all dispatcher does (the combine is 16-bit either way)")
    g.add_argument("--sequence-parallel", action="store_true",
                   help="Megatron sequence parallelism: norms split by sequence; all-reduce -> reduce-scatter + "
                        "all-gather")
    g.add_argument("--memory-utilization", type=float, default=0.9,
                   help="share of each GPU's memory the engine may use (vLLM's default 0.9); the rest is workspace")
    # --- a measured interconnect (issue 13: `python -m gemmlib bench collective` saves one)
    g.add_argument("--interconnect", metavar="NAME", default=None,
                   help="a measured interconnect, 'NAME (measured interconnect)' as `bench collective` saved it: "
                        "the links inside a node become it")
    for where in ("intra", "inter"):
        g.add_argument(f"--{where}-busbw", type=number(0, 1e9), default=None, metavar="GB/s",
                       help=f"measured bus bandwidth of the {'link inside a node' if where == 'intra' else 'network'}"
                            " (replaces the catalogue's line rate)")
        g.add_argument(f"--{where}-latency-us", type=number(0, 1e9, zero=True), default=None, metavar="US",
                       help=f"measured latency of one collective {'inside a node' if where == 'intra' else 'across nodes'}"
                            " (0: none, an ideal link)")
    t = p.add_argument_group("training (--seq-len and --batch are one step's shape: the global batch)")
    t.add_argument("--train", action="store_true", help="size a training run")
    t.add_argument("--train-tokens", type=float, default=None, metavar="D", help="tokens of the whole run, e.g. 15.6e12")
    t.add_argument("--micro-batch", type=whole(1), default=1, help="sequences per micro-batch (default 1)")
    t.add_argument("--recompute", choices=["none", "selective", "full"], default="none",
                   help="activation recomputation (full: every layer's forward again, as gradient checkpointing)")
    t.add_argument("--recompute-modules", default=None, metavar="M,M",
                   help="with --recompute selective: what it reruns, Megatron's recompute_modules (core_attn, "
                        "layernorm, moe_act, mlp, moe, shared_experts, mla_up_proj); default core_attn")
    t.add_argument("--recompute-layers", type=whole(1), default=None, metavar="N",
                   help="with --recompute full: only the first N layers of each model chunk (Megatron's "
                        "--recompute-method block --recompute-num-layers N); default every layer")
    t.add_argument("--zero", type=int, choices=[0, 1, 2, 3], default=0, help="ZeRO stage across data parallelism")
    add_serving_arguments(p)


# ----- serving as engines run it (issue 21 item 3) -------------------------------------------------

_SERVING_FLAGS = ("input_len", "output_len", "request_rate", "concurrency", "num_requests", "kv_block_size",
                  "max_num_seqs", "max_num_batched_tokens")


def _rate(text: str) -> float:
    """``--request-rate``: requests per second above 0, or ``inf`` (every request at once)."""
    t = str(text).strip().lower()
    if t in ("inf", "infinity", "+inf"):
        return math.inf
    try:
        return number(0)(text)
    except argparse.ArgumentTypeError as e:
        raise argparse.ArgumentTypeError(f"{e} (a number of requests per second above 0, or inf)") from None


def add_serving_arguments(p: argparse.ArgumentParser) -> None:
    s = p.add_argument_group("serving (a step-level simulation of continuous batching with chunked prefill and "
                             "paged KV blocks)")
    s.add_argument("--serve", action="store_true",
                   help="throughput, TTFT and TPOT against concurrency (closed loop: C clients, 4 x C requests)")
    s.add_argument("--tpot-target-ms", type=number(0), default=None, help="best concurrency under this time per token")
    s.add_argument("--ttft-target-ms", type=number(0), default=None, help="... and under this time to first token")
    s.add_argument("--input-len", type=whole(1), default=None, metavar="N",
                   help="prompt tokens per request (default: --seq-len)")
    s.add_argument("--output-len", type=whole(1), default=None, metavar="N",
                   help="generated tokens per request (default: --new-tokens)")
    s.add_argument("--request-rate", type=_rate, default=None, metavar="R",
                   help="send requests at R per second instead of a fixed concurrency (see --arrival); inf: every "
                        "request at once (an offline throughput run)")
    s.add_argument("--arrival", choices=["poisson", "fixed"], default="poisson",
                   help="with --request-rate: Poisson arrivals (vllm bench serve's default; fixed seed) or fixed gaps")
    s.add_argument("--concurrency", type=whole(1), default=None, metavar="C",
                   help="one point at C requests in flight (with --request-rate: at most C in flight)")
    s.add_argument("--num-requests", type=whole(1), default=None, metavar="N",
                   help="requests per point (default 4 x the concurrency; 1000 with --request-rate)")
    s.add_argument("--engine", choices=["vllm", "trtllm"], default="vllm",
                   help="scheduler: vllm (chunked prefill, preemption) or trtllm (whole prompts, blocks reserved)")
    s.add_argument("--kv-block-size", type=whole(1), default=None, metavar="TOKENS",
                   help="tokens per KV block (default: vLLM's 16; TensorRT-LLM's 32)")
    s.add_argument("--max-num-seqs", type=whole(1), default=None, metavar="N",
                   help="running requests at most (default: the engine's for the GPU, vLLM 1024 on an H100)")
    s.add_argument("--max-num-batched-tokens", type=whole(1), default=None, metavar="N",
                   help="tokens per engine step (default: the engine's for the GPU, vLLM 8192 on an H100)")


def serving_options(args: argparse.Namespace) -> dict:
    """The serving simulation's keywords from the flags (empty when none of them is given)."""
    from gemmlib.llm.serving import Engine

    for f in _SERVING_FLAGS:
        v = getattr(args, f, None)
        if v is not None and not v > 0:
            raise InputError(f"--{f.replace('_', '-')} must be positive, got {v}")
    given = [f for f in _SERVING_FLAGS if getattr(args, f, None) is not None]
    if not given and getattr(args, "engine", "vllm") == "vllm" and getattr(args, "arrival", "poisson") == "poisson":
        return {}
    if getattr(args, "arrival", "poisson") != "poisson" and args.request_rate is None:
        raise InputError("--arrival is for --request-rate")
    return {"engine": Engine(args.engine, args.kv_block_size or 0, args.max_num_seqs or 0,
                             args.max_num_batched_tokens or 0),
            "input_len": args.input_len, "output_len": args.output_len, "request_rate": args.request_rate,
            "arrival": args.arrival, "concurrency": args.concurrency, "requests": args.num_requests}


def render_serving(est) -> list[str]:
    sv = est.serving
    e = sv.engine
    pool = sv.pool
    how = ("continuous batching with chunked prefill, blocks allocated as requests grow (preemption when none is "
           "free)" if e.chunked_prefill else "in-flight batching, whole prompts, blocks reserved per request")
    lines = ["", f"SERVING   {sv.input_len} prompt + {sv.output_len} generated tokens per request; {e.name}: {how}",
             f"  {e.max_batched_tokens:,} tokens and {e.max_num_seqs:,} requests per step at most; KV pool "
             f"{fmt.nbytes(pool.free_bytes)} per GPU = {pool.blocks:,} blocks of {pool.block_size} tokens per replica; "
             f"KV limit {sv.kv_limit:,} concurrent requests at full length"
             + (f" ({sv.replicas} replicas)" if sv.replicas > 1 else ""),
             f"  arrivals: {sv.arrival}" + "".join(
                 # a rate run's concurrency column is the peak the engine saw, not a setting: said so, with the mean
                 f"; concurrency {p.concurrency:,} is the most requests in flight at once (mean {p.mean_running:.3g})"
                 for p in sv.points[:1] if p.request_rate is not None),
             f"  host time per engine step (scheduling, input preparation, sampling; no kernel's): "
             f"{_time(sv.step_overhead_s) if sv.step_overhead_s else '0'} ({sv.step_overhead_source})"]
    rows = [[f"{p.concurrency:,}" + (f" @ {p.request_rate:g}/s" if p.request_rate else ""), _time(p.ttft_s),
             _time(p.tpot_s), _fmt(p.tokens_per_s), _fmt(p.tokens_per_s_per_gpu), fmt.number(p.requests_per_s, 3),
             f"{p.preemptions:,}", fmt.nbytes(p.memory_bytes) + ("" if p.fits else ": does not fit"),
             "best" if sv.best is not None and p.concurrency == sv.best.concurrency else ""] for p in sv.points]
    lines.append(_table(["concurrency", "TTFT", "TPOT", "tokens/s", "per GPU", "req/s", "preempted",
                         "memory per GPU", ""], rows))
    if sv.tpot_target_s is not None or sv.ttft_target_s is not None:
        goal = " and ".join(f"{n} <= {_time(v)}" for n, v in (("TPOT", sv.tpot_target_s),
                                                               ("TTFT", sv.ttft_target_s)) if v is not None)
        lines.append(f"best concurrency with {goal}: " + (
            f"{sv.best.concurrency:,} ({_fmt(sv.best.tokens_per_s)} tokens/s)" if sv.best else "none"))
    return lines


def parallel_from_args(args: argparse.Namespace) -> tuple[Parallel, int | None]:
    """The parallel sizes, and the GPU count they must multiply to (None: nothing to check)."""
    sizes = {k: getattr(args, k, None) for k in ("tp", "pp", "ep", "dp", "cp")}
    for k, v in sizes.items():
        if v is not None and v < 1:
            raise InputError(f"--{k} must be at least 1, got {v}")
    if args.gpus is not None and args.gpus < 1:
        raise InputError(f"--gpus must be at least 1, got {args.gpus}")
    given = any(v is not None for v in sizes.values())
    gpus = args.gpus
    if not given and gpus is not None:
        sizes["tp"] = gpus  # --gpus N alone: tensor parallelism over N GPUs
    vs = getattr(args, "virtual_stages", None)
    if vs is not None and vs < 1:
        raise InputError(f"--virtual-stages must be at least 1, got {vs}")
    par = Parallel(**{k: v or 1 for k, v in sizes.items()}, gpus_per_node=args.gpus_per_node or 0,
                   overlap=bool(args.overlap), microbatches=args.microbatches or 0,
                   sequence_parallel=bool(args.sequence_parallel), virtual_stages=vs or 1,
                   tp_comm_overlap=bool(getattr(args, "tp_comm_overlap", False)),
                   ep_comm_overlap=getattr(args, "ep_comm_overlap", None) is not None,
                   ep_overlap=getattr(args, "ep_comm_overlap", None) or "megatron",
                   ep_comm_sms=getattr(args, "ep_comm_sms", None) or 0,
                   etp=getattr(args, "etp", None) or 0,
                   ep_fp8_dispatch=bool(getattr(args, "ep_fp8_dispatch", False)))
    if not args.train and (par.cp > 1 or par.virtual_stages > 1 or par.tp_comm_overlap or par.ep_comm_overlap):
        flag = next(f for f, on in (("--cp", par.cp > 1), ("--virtual-stages", par.virtual_stages > 1),
                                    ("--tp-comm-overlap", par.tp_comm_overlap),
                                    ("--ep-comm-overlap", par.ep_comm_overlap)) if on)
        raise InputError(f"{flag} is a training layout: add --train")
    return par, gpus


def _links(args: argparse.Namespace, hw):
    """``hw`` with measured links in place of the catalogue's, when given."""
    from dataclasses import replace

    from gemmlib.core.comm import Link

    if all(getattr(args, f) is None for f in ("intra_busbw", "intra_latency_us", "inter_busbw", "inter_latency_us")):
        return hw
    ic = hw.interconnect
    if ic is None:
        raise InputError(f"{hw.name} has no interconnect to replace; pick a catalogue GPU")
    new = {}
    for where, base in (("intra", ic.intra or ic.pcie_link), ("inter", ic.inter)):
        bw, lat = getattr(args, f"{where}_busbw"), getattr(args, f"{where}_latency_us")
        if bw is None and lat is None:
            continue
        if bw is not None and not bw > 0:
            raise InputError(f"--{where}-busbw must be positive GB/s, got {bw}")
        if lat is not None and not lat >= 0:
            raise InputError(f"--{where}-latency-us must be ≥ 0, got {lat}")
        if base is None and (bw is None or lat is None):
            raise InputError(f"the catalogue has no {where}-node link for {hw.name}: give both --{where}-busbw and "
                             f"--{where}-latency-us")
        new[where] = Link(f"{base.name if base else where + '-node link'} (measured)", "measured",
                          bw * 1e9 if bw is not None else base.busbw,
                          lat * 1e-6 if lat is not None else base.latency_s, "given on the command line")
    ic = ic.with_links(**new)
    if "intra" in new and ic.intra is None:
        ic = replace(ic, pcie_link=new["intra"])
    return replace(hw, interconnect=ic)


def _calibrated(args: argparse.Namespace, cfg, wl):
    """The estimate "NAME (calibrated)": one device, each op at the efficiency measured for its shape there."""
    from gemmlib.core.calibration import find_by_name  # only a calibrated row needs the calibrations
    from gemmlib.llm.calibrated import calibrated_estimate

    cal = find_by_name(args.gpu)
    if cal is None:
        saved = _calibration_names()
        raise InputError(f"no calibration called {str(args.gpu)[:60]!r} is saved here"
                         + (f" (saved: {saved})" if saved else "")
                         + "; run `python -m gemmlib calibrate` on that device first")
    scale_out = [f"--{k}" for k in ("tp", "pp", "ep", "dp") if getattr(args, k) not in (None, 1)]
    scale_out += ["--gpus"] if args.gpus not in (None, 1) else []
    scale_out += [f for f, on in (("--train", args.train), ("--serve", args.serve)) if on]
    if scale_out:
        raise InputError(f"a calibration describes the one device it was measured on; drop {', '.join(scale_out)} "
                         "or pick a catalogue GPU")
    return calibrated_estimate(cfg, wl, cal)


def _measured_link(args: argparse.Namespace, hw, par):
    """``hw`` with the measured interconnect ``--interconnect NAME`` inside its nodes (issue 13)."""
    if not args.interconnect:
        return hw
    if args.intra_busbw is not None or args.intra_latency_us is not None:
        raise InputError("give either --interconnect or --intra-busbw / --intra-latency-us, not both")
    from gemmlib.core.interconnect import hardware_with

    return hardware_with(hw, args.interconnect, par.gpus)[0]


def scaleout_estimate(args: argparse.Namespace, cfg, wl, hw, read_info: dict | None = None):
    alone = args.gpus is not None and all(getattr(args, k, None) is None for k in ("tp", "pp", "ep", "dp", "cp"))
    try:
        return _scaleout_estimate(args, cfg, wl, hw, read_info)
    except InputError as e:
        if alone and str(e).startswith(("--tp", "TP ")):  # --gpus N alone is --tp N: say which flag the user gave
            raise InputError(f"--gpus {args.gpus} alone splits the model by tensor parallelism (as --tp {args.gpus}): "
                             f"{e}") from None
        raise


def _scaleout_estimate(args: argparse.Namespace, cfg, wl, hw, read_info: dict | None):
    from gemmlib.llm.scaleout import estimate
    from gemmlib.llm.training import Training

    par, gpus = parallel_from_args(args)
    # two layout flags that changed nothing where they do not apply, and said nothing of it
    if args.microbatches and (args.train or par.pp == 1):
        raise InputError("--microbatches splits an inference phase over pipeline stages: it needs --pp 2 or more"
                         + (" and no --train (a training step's micro-batches are --batch / (--dp x --micro-batch))"
                            if args.train else ""))
    if args.sequence_parallel and par.tp == 1:
        raise InputError("--sequence-parallel splits the work the tensor-parallel ranks repeat (norms, dropout) by "
                         "sequence: it needs --tp 2 or more")
    if getattr(args, "ep_fp8_dispatch", False) and (par.ep == 1 or DTYPES[wl.act_dtype].bytes >= 2):
        raise InputError(f"--ep-fp8-dispatch sends an 8-bit run's EP dispatch in fp8: it needs --ep 2 or more and "
                         f"8-bit activations (--act-dtype fp8, or an fp8 checkpoint); this run has EP {par.ep} and "
                         f"{wl.act_dtype} activations")
    training = None
    if args.train:
        if args.train_tokens is None:
            raise InputError("--train needs --train-tokens D, the tokens of the whole run (e.g. 1e12)")
        if args.recompute_modules is not None and not args.recompute_modules.strip(", "):
            raise InputError("--recompute-modules names at least one module (core_attn, layernorm, moe_act, mlp, moe, "
                             "shared_experts, mla_up_proj); leave it out for core_attn")
        training = Training(tokens=args.train_tokens, micro_batch=args.micro_batch, recompute=args.recompute,
                            recompute_layers=args.recompute_layers or 0,
                            recompute_modules=tuple(x.strip() for x in (args.recompute_modules or "").split(",")
                                                    if x.strip()),
                            zero=args.zero)
    else:
        # a training flag without --train sized nothing and said nothing: refuse it, as --cp and --train-tokens are
        given = [f for f, on in (("--train-tokens", args.train_tokens is not None),
                                 ("--micro-batch", args.micro_batch != 1), ("--recompute", args.recompute != "none"),
                                 ("--recompute-modules", args.recompute_modules is not None),
                                 ("--recompute-layers", args.recompute_layers is not None),
                                 ("--zero", args.zero != 0)) if on]
        if given:
            raise InputError(f"{given[0]} is for a training run: add --train")
    ms = {k: getattr(args, k) for k in ("tpot_target_ms", "ttft_target_ms")}
    for k, v in ms.items():
        if v is not None and not v > 0:
            raise InputError(f"--{k.replace('_', '-')} must be a positive number of milliseconds, got {v}")
    # a target searches the concurrencies for the best one; --concurrency / --request-rate run one point, which was
    # then reported as "best concurrency with TPOT <= ...: none" even when that point met the target
    one = next((f for f, on in (("--concurrency", args.concurrency is not None),
                                ("--request-rate", args.request_rate is not None)) if on), None)
    target = next((f"--{k.replace('_', '-')}" for k, v in ms.items() if v is not None), None)
    if one and target:
        raise InputError(f"{target} searches the concurrencies for the best one, but {one} runs one point: give "
                         "one or the other (that point's TTFT and TPOT are in its row)")
    return estimate(cfg, wl, _links(args, _measured_link(args, hw, par)), par, args.efficiency, gpus=gpus,
                    training=training,
                    serve=bool(args.serve), memory_utilization=args.memory_utilization,
                    tpot_target_s=None if ms["tpot_target_ms"] is None else ms["tpot_target_ms"] / 1e3,
                    ttft_target_s=None if ms["ttft_target_ms"] is None else ms["ttft_target_ms"] / 1e3,
                    read_info=read_info, serving_options=serving_options(args))


def _run_time(s: float) -> str:
    """A training run's wall time in the unit one plans it in: days past two of them (years past one), else seconds
    to hours (it printed "219,128,329 s (2.54e+03 days)")."""
    days = s / 86400
    if s < 7200:
        return _time(s)
    if days < 2:
        return f"{s / 3600:.3g} hours"
    return (f"{days:,.0f}" if days >= 100 else f"{days:.3g}") + " days" + (
        f" ({days / 365.25:.3g} years)" if days >= 365.25 else "")


def _recomputed_layers(n: int, chunk: float) -> str:
    """The words for ``--recompute-layers n`` (Megatron's block method): past a chunk's layers it reruns them all."""
    if n < chunk:
        return f" (the first {n} layers of each chunk)"
    return f" (--recompute-layers {n}: every layer, each chunk has {chunk:g})"


def render_scaleout(est, d: dict | None = None) -> str:
    """The scale-out part of the report: groups and links, communication, per-GPU memory, training, serving."""
    par = est.parallel
    d = est.to_dict() if d is None else d
    first = f"ETP {par.etp}" if par.folded else f"TP {par.tp}"
    folded = f" (folded: attention TP {par.tp} x {par.attn_ep * par.dp} data replicas)" if par.folded else ""
    lines = [f"parallel  {first} x " + (f"CP {par.cp} x " if par.cp > 1 else "")
             + f"PP {par.pp} x EP {par.ep} x DP {par.dp} = {est.gpus} GPU{'' if est.gpus == 1 else 's'}{folded}, "
             f"{d['parallel']['gpus_per_node']} per node; communication "
             + ("overlapped (best case)" if par.overlap else "not overlapped with compute")]
    for g in d["parallel"]["groups"]:
        lines.append(f"  {g['group']}: {g['ranks']} ranks (stride {g['stride']}) over {g['link']}, "
                     f"{_fmt(g['busbw_bytes_per_s'], 'B/s')} bus bandwidth, {_time(g['latency_s'])} latency")
    for ph in (est.prefill, est.decode):
        if not ph.ops:
            continue
        lines.append(f"{ph.name:<9} {_time(ph.time_s)} = compute {_time(ph.compute_s)} + communication "
                     f"{_time(ph.communication_s)}" + (f" + pipeline bubble {_time(ph.bubble_s)}" if ph.bubble_s else "")
                     + (f" ({ph.microbatches} micro-batches)" if par.pp > 1 else ""))
        for c in ph.collectives:
            lines.append(f"  {c.op:<14} after {c.after:<14} {c.count:>9,.0f} x {fmt.nbytes(c.size_bytes):>8} over "
                         f"{c.ranks} GPUs ({c.link}): {_time(c.time_s)}")
    m = est.per_gpu
    lines.append(f"per GPU   weights {fmt.nbytes(m.weights_bytes)} + KV cache {fmt.nbytes(m.kv_cache_bytes)} + "
                 f"activations {fmt.nbytes(m.activation_bytes)} + workspace {fmt.nbytes(m.workspace_bytes)} = "
                 f"{fmt.nbytes(m.total_bytes)} of {fmt.nbytes(m.capacity_bytes)}: "
                 + ("fits" if m.fits else "does NOT fit")
                 + (f"; largest batch that fits: {est.max_batch:,}" if est.max_batch else "; no batch fits, not even 1")
                 + (" (serving; the training step's memory is under TRAINING)" if est.train is not None else ""))
    tr = est.train
    if tr is not None:
        t = tr.to_dict()
        mem = tr.memory
        lines += [
            "",
            f"TRAINING  {t['global_batch']} x {t['seq_len']} tokens per step, micro-batch {t['micro_batch']} "
            f"({t['microbatches']} per replica), recompute {t['recompute']}"
            + (_recomputed_layers(t["recompute_layers"], t["layers_per_chunk"]) if t["recompute_layers"] else "")
            + (f" ({', '.join(t['recompute_modules'])})" if t["recompute"] == "selective" else "")
            + f", ZeRO {t['zero']}"
            + (f", CP {t['cp']}" if t["cp"] > 1 else "")
            + (f", interleaved 1F1B with {t['virtual_stages']} virtual stages" if t["virtual_stages"] > 1 else "")
            + (", TP communication overlapped" if t["tp_comm_overlap"] else "")
            + (f", EP all-to-alls overlapped ({t['ep_overlap']}: at most {t['ep_overlap_hidden_share']:.0%} hidden)"
               if t["ep_comm_overlap"] else "")
            + (f" on {t['ep_comm_sms']} SMs (the compute beside them {_time(t['held_sms_s'])} slower)"
               if t["ep_comm_sms"] else ""),
            f"  step FLOPs {_fmt(t['step_flops'])} (forward {_fmt(t['forward_flops'])} + backward "
            f"{_fmt(t['backward_flops'])} + recompute {_fmt(t['recompute_flops'])}); model FLOPs "
            f"{_fmt(t['model_flops_per_step'])}",
            f"  step time {_time(t['step_time_s'])} = compute {_time(t['compute_s'])} + communication "
            f"{_time(t['communication_s'])} ({dp_communication_words(t)})"
            + (f" + pipeline bubble {_time(t['bubble_s'])}" if t["bubble_s"] else ""),
            f"  MFU {t['mfu']:.1%} (HFU {t['hfu']:.1%}), {_fmt(t['model_flops_per_gpu_s'], 'FLOP/s')} model FLOP/s per "
            f"GPU, {_fmt(t['tokens_per_s'])} tokens/s ({_fmt(t['tokens_per_s_per_gpu'])} per GPU)"
            + ("" if mem.fits else " if it fitted: it does not (per GPU, below)"),
            "  communication " + ("(best case: every collective hidden): " if par.overlap else "exposed of all, by group: ")
            + ", ".join(f"{g} {_time(x['exposed_s'])} of {_time(x['total_s'])}"
                        for g, x in t["exposed_by_group"].items()) if t["exposed_by_group"] else
            "  communication: none (one GPU)",
            f"  run of {_fmt(t['train_tokens'])} tokens: {t['steps']:,} steps, {_run_time(t['run_time_s'])} on "
            f"{tr.gpus:,} GPU{'s' if tr.gpus > 1 else ''}, {_fmt(t['gpu_hours'])} GPU-hours; exact "
            f"{t['run_flops']:.3g} FLOPs vs 6·N·D {t['six_nd_flops']:.3g} FLOPs",
            f"  per GPU weights {fmt.nbytes(mem.weights_bytes)} + gradients {fmt.nbytes(mem.gradient_bytes)} + "
            f"optimizer {fmt.nbytes(mem.optimizer_bytes)} + activations {fmt.nbytes(mem.activation_bytes)} + "
            f"workspace {fmt.nbytes(mem.workspace_bytes)} = {fmt.nbytes(mem.total_bytes)} of "
            f"{fmt.nbytes(mem.capacity_bytes)}: " + ("fits" if mem.fits else "does NOT fit")
            + (f"; largest micro-batch that fits: {t['max_micro_batch']}" if t["max_micro_batch"] else
               "; no micro-batch fits, not even 1"),
        ]
        from gemmlib.llm.training import LLAMA31_405B as a

        lines.append(f"  anchor: {a.name}: {_fmt(a.tokens)} tokens, {a.flops:.2g} FLOPs, {_fmt(a.gpu_hours)} "
                     f"{a.gpu} GPU-hours on {a.gpus:,} GPUs at {a.mfu:.0%} MFU (benchmarks/bench_scaleout.py "
                     "estimates it)")
    if est.serving is not None:
        lines += render_serving(est)
    return "\n".join(lines)
