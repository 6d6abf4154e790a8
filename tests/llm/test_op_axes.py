"""Where each op keeps the batch's sequences and a sequence's positions (``Op.batch_axis``, ``Op.tokens_axis``), and one
rank's shapes under expert parallelism (each EP rank, or attention data replica, its own sequences) and context
parallelism (each CP rank 1/c of every sequence's positions).

The reference is the accounting itself at a smaller workload: one rank of e that takes b / e of the group's b sequences
runs each non-expert op at the shape the same op has for a batch of b / e (a rank of c CP ranks: for a prompt of S / c).
Before, a non-expert op kept the group's rows or runs under EP (DeepSeek-V3, EP 8, batch 8 × 1,024: q_a_proj at 8,192
rows where each rank runs 1,024) and CP divided every op's rows, a convolution's sequences and a chunked scan's chunk
length included."""

from __future__ import annotations

import dataclasses
import glob
import json
import warnings
from collections import defaultdict
from pathlib import Path

import pytest

from gemmlib.llm.accounting import (
    BATCH_IN_COUNT,
    TOKENS_IN_COUNT,
    TOKENS_IN_NEITHER,
    Workload,
    phase_ops,
)
from gemmlib.llm.hf import read_config, read_config_file
from gemmlib.llm.parallel import Parallel, heads_axis, per_gpu_op
from gemmlib.llm.presets import PRESETS

CONFIGS = sorted(glob.glob(str(Path(__file__).resolve().parents[1] / "data" / "configs" / "*.json")))


def _models() -> dict:
    out = {Path(p).stem: read_config_file(p)[0] for p in CONFIGS}
    out.update({f"preset:{k}": v for k, v in PRESETS.items()})
    return out


def _default_configs() -> dict:
    """Every causal-LM family transformers ships, at its config class's defaults (those this estimator reads)."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    from transformers.utils import logging as hf_logging

    out = {}
    hf_logging.set_verbosity_error()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for mt in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
            try:
                out[f"transformers:{mt}"] = read_config(CONFIG_MAPPING[mt]().to_dict())[0]
            except Exception:  # a family this estimator refuses, or a config class that fails on its own defaults
                continue
    return out


def _axis(small, big) -> str:
    """Which of (m, count) doubled from ``small`` to ``big`` (built at twice the batch or the prompt): "" for neither."""
    if (big.m, big.count) == (2 * small.m, small.count):
        return "m"
    if (big.m, big.count) == (small.m, 2 * small.count):
        return "count"
    if (big.m, big.count) == (small.m, small.count):
        return ""
    return f"? m {small.m}->{big.m}, count {small.count}->{big.count}"


def _check_axes(models: dict) -> tuple[list[str], dict[str, set]]:
    wrong, seen = [], defaultdict(set)
    for name, cfg in models.items():
        for convention in ("engine", "transformers"):
            def ops(batch: int, seq: int, which: str, cfg=cfg, convention=convention):
                return phase_ops(cfg, Workload(batch=batch, seq_len=seq, new_tokens=3, convention=convention,
                                               lm_head="all"), which)
            for which in ("prefill", "decode"):
                for small, big in zip(ops(2, 256, which), ops(4, 256, which), strict=True):
                    got = _axis(small, big)
                    seen[small.name].add(("batch", got))
                    if got != small.batch_axis:
                        wrong.append(f"{name} {convention} {which} {small.name}: batch in {got!r}, "
                                     f"Op.batch_axis {small.batch_axis!r}")
            for small, big in zip(ops(2, 256, "prefill"), ops(2, 512, "prefill"), strict=True):
                got = _axis(small, big)
                seen[small.name].add(("tokens", got))
                if got != small.tokens_axis:
                    wrong.append(f"{name} {convention} prefill {small.name}: positions in {got!r}, "
                                 f"Op.tokens_axis {small.tokens_axis!r}")
    return wrong, seen


def test_each_ops_axes_match_what_doubles_with_the_batch_and_the_prompt():
    """Every op of every family here (the test configs, the presets, transformers' causal LMs at their defaults), in
    both conventions, both phases: the axis that doubles with the batch (the prompt) is the one the op names."""
    models = _models()
    models.update(_default_configs())
    assert len(models) > 200
    wrong, seen = _check_axes(models)
    assert not wrong, "\n".join(wrong[:20])
    # not vacuous: every class of op is met, and every op the tables name runs in some family here (but the block-
    # sparse attention products, whose family has no config here)
    assert ("batch", "count") in seen["attn_scores"] and ("tokens", "m") in seen["attn_scores"]
    assert ("batch", "count") in seen["ssm_chunks"] and ("tokens", "count") in seen["ssm_chunks"]
    assert ("tokens", "") in seen["conv1d"] and ("batch", "m") in seen["q_proj"]
    named = BATCH_IN_COUNT | TOKENS_IN_COUNT | TOKENS_IN_NEITHER
    assert {n for n in named if n not in seen} <= {"attn_scores_sparse", "attn_values_sparse"}


def _pairs(cfg, wl: Workload, smaller: Workload, par: Parallel, which: str):
    whole = phase_ops(cfg, wl, which)
    ref = phase_ops(cfg, smaller, which)
    assert [o.name for o in whole] == [o.name for o in ref]
    return [(per_gpu_op(o, cfg, par, stage_layers=cfg.layers), r) for o, r in zip(whole, ref, strict=True)
            if not o.routed]


MODELS = ["deepseek-v3", "qwen3-30b-a3b", "qwen3-next-80b-a3b", "jamba-1.5-mini", "nemotron-nano-9b-v2",
          "gpt-oss-20b", "falcon-h1-1.5b", "gemma-3n-e2b"]


@pytest.mark.parametrize("which", ["prefill", "decode"])
@pytest.mark.parametrize("model", MODELS)
def test_an_ep_rank_runs_each_non_expert_op_at_the_shape_of_its_own_sequences(model, which):
    cfg = read_config_file(next(p for p in CONFIGS if Path(p).stem == model))[0]
    e, b = 4, 8
    par = Parallel(ep=e, dp=1)
    wl = Workload(batch=b, seq_len=512, new_tokens=4)
    pairs = _pairs(cfg, wl, Workload(batch=b // e, seq_len=512, new_tokens=4), par, which)
    assert pairs
    for mine, ref in pairs:
        assert (mine.m, mine.count) == (ref.m, ref.count), (mine.name, mine.m, mine.count, ref.m, ref.count)
        assert mine.flops == pytest.approx(ref.flops, rel=1e-9, abs=1), mine.name


@pytest.mark.parametrize("model", MODELS)
def test_a_cp_rank_runs_each_op_at_its_share_of_the_positions(model):
    cfg = read_config_file(next(p for p in CONFIGS if Path(p).stem == model))[0]
    c, s = 4, 2048
    par = Parallel(cp=c)
    wl = Workload(batch=2, seq_len=s, lm_head="all")
    for mine, ref in _pairs(cfg, wl, Workload(batch=2, seq_len=s // c, lm_head="all"), par, "prefill"):
        # (the attention products' keys are the whole sequence's, so only the rows and runs compare)
        assert (mine.m, mine.count) == (ref.m, ref.count), (mine.name, mine.m, mine.count, ref.m, ref.count)


def test_deepseek_v3_at_ep_8_runs_1024_rows_per_rank(capsys):
    """The README's example of the defect: EP 8, batch 8 × 1,024 — each rank's 1 sequence."""
    from gemmlib.cli import main

    assert main(["estimate", "--preset", "deepseek-v3", "--gpus", "8", "--ep", "8", "--batch", "8", "--seq-len",
                 "1024", "--new-tokens", "0", "--json"]) == 0
    ops = {o["name"]: o for o in json.loads(capsys.readouterr().out)["prefill"]["ops"]}
    assert ops["q_a_proj"]["m"] == 1024  # was 8,192, the group's
    assert ops["attn_scores"]["count"] == 61 * 128  # one sequence's heads in every layer; was 8 sequences' 62,464
    assert ops["lm_head"]["m"] == 1  # the last position of the rank's one sequence
    assert ops["gate_proj"]["m"] == 8 * 1024  # a routed expert meets the tokens of every rank of the group
    for o in ops.values():
        if o["kind"] == "gemm" and not o.get("n_last") and not o.get("k_last") and not o["routed"] \
                and o["name"] not in ("attn_scores", "attn_values"):
            assert 2 * o["m"] * o["n"] * o["k"] * o["count"] == o["flops"], o["name"]


def _halved(cfg):
    """``cfg`` with half the attention heads and KV heads (the same head dims) and half the mixer's heads, groups and
    channels: what one of two tensor-parallel ranks runs of a head-parallel op. None where a count is odd."""
    kv = cfg.kv_heads or cfg.heads
    if cfg.heads % 2 or kv % 2:
        return None
    kw = dict(heads=cfg.heads // 2, kv_heads=kv // 2, head_dim=cfg.head_dim)
    mx = cfg.mixer
    if mx is not None:
        mkw = {f: getattr(mx, f) // 2 for f in ("heads", "groups", "inner") if getattr(mx, f)}
        if any(getattr(mx, f) % 2 for f in mkw):
            return None
        if mx.kind == "mamba2" and mx.heads:
            mkw["inner"] = mx.heads // 2 * mx.head_dim
        kw["mixer"] = dataclasses.replace(mx, **mkw)
    try:
        return dataclasses.replace(cfg, **kw)
    except Exception:  # a layout whose other fields are tied to the head count (Gemma 4's full layers)
        return None


def test_a_tp_rank_runs_each_head_parallel_op_at_the_shape_of_its_own_heads():
    """One of two TP ranks runs a head-parallel op (attention products, softmax, rotary, the mixers' convolutions and
    scans) as the same model with half the heads runs it: its heads are its runs, its rows or its width (heads_axis)."""
    models = _models()
    models.update(_default_configs())
    checked, wrong = defaultdict(int), []
    for name, cfg in models.items():
        half = _halved(cfg)
        if half is None:
            continue
        for which in ("prefill", "decode"):
            wl = Workload(batch=2, seq_len=256, new_tokens=3)
            try:
                whole, ref = phase_ops(cfg, wl, which), phase_ops(half, wl, which)
            except Exception:  # a model whose other widths assume its own head count
                continue
            if [o.name for o in whole] != [o.name for o in ref]:
                continue
            for o, r in zip(whole, ref, strict=True):
                if o.shard != "heads" or cfg.is_mla and o.name == "rotary":
                    # (MLA's rotary also turns the one shared key's rope part, which every rank turns: the per-GPU op
                    # charges 1/t of the whole, that part split too, 1/(heads + 1) of an element-wise op's width)
                    continue
                if sorted((o.m / r.m, o.n / r.n, o.k / r.k if r.k else 1.0, o.count / r.count)) != [1, 1, 1, 2]:
                    continue  # heads set by another field too (dots3's sliding layers): halving did not halve the op
                mine = per_gpu_op(o, cfg, Parallel(tp=2), stage_layers=cfg.layers)
                checked[(o.name, heads_axis(o, cfg))] += 1
                if (mine.m, mine.n, mine.k, mine.count) != (r.m, r.n, r.k, r.count):
                    wrong.append(f"{name} {which} {o.name}: rank {(mine.m, mine.n, mine.k, mine.count)}, "
                                 f"half the heads {(r.m, r.n, r.k, r.count)}")
    assert not wrong, "\n".join(wrong[:20])
    assert {a for _, a in checked} == {"m", "n", "count"}, checked  # every kind of head axis met
    assert checked[("rotary", "n")] > 50 and checked[("attn_scores", "count")] > 100


def _exact(o) -> bool:
    """A GEMM whose FLOPs are 2·M·N·K × runs (not a product over a causal triangle, a growing cache or a window)."""
    return o.is_gemm and o.n_last is None and o.k_last is None and o.flops == 2 * o.m * o.n * o.k * o.count


@pytest.mark.parametrize("layout", [dict(tp=2), dict(tp=4, sequence_parallel=True), dict(cp=2), dict(ep=2),
                                    dict(tp=2, ep=2, etp=1), dict(tp=2, cp=2, ep=2)])
def test_one_gpus_gemms_multiply_out_to_its_flops(layout):
    """The per-GPU table's promise: for each GEMM whose whole FLOPs are 2·M·N·K × runs, one GPU's row multiplies out
    to one GPU's FLOPs (before, a column-parallel op showed the whole N beside a rank's FLOPs: Llama-3-8B at TP 8,
    q_proj 4096 × 4096 × 4096 × 32 beside 550 GFLOP, an eighth of that)."""
    par = Parallel(**layout)
    checked, wrong = 0, []
    for name, cfg in _models().items():
        wl = Workload(batch=8, seq_len=1024, new_tokens=2)
        for which in ("prefill", "decode") if par.cp == 1 else ("prefill",):  # (CP is a training layout)
            for o in phase_ops(cfg, wl, which):
                if o.routed or not _exact(o):
                    continue
                mine = per_gpu_op(o, cfg, par, stage_layers=cfg.layers)
                if any(x % y for x, y in ((o.n, 4), (o.k, 4), (o.m, 4))):
                    continue  # a split that does not divide: the rank's share is rounded up
                checked += 1
                if 2 * mine.m * mine.n * mine.k * mine.count != mine.flops:
                    wrong.append(f"{name} {which} {o.name}: {mine.m}×{mine.n}×{mine.k} × {mine.count} "
                                 f"= {2 * mine.m * mine.n * mine.k * mine.count:,} against {mine.flops:,}")
    assert checked > 500
    assert not wrong, "\n".join(wrong[:20])


def test_a_pipeline_stage_launches_the_kernels_of_its_own_layers():
    """A stage of PP 2 launches its layers' kernels once each: Llama-3-8B's q_proj 16 of 32 per prompt, Falcon-Mamba's
    depthwise conv1d (one launch per layer and decode step, counted by its runs) 32 × 3 of 64 × 3. Before, the shape
    model scaled the launches by the stage's share again after per_gpu_op had (a 64-layer model's conv1d at PP 2: 48
    launches charged for the stage's 96)."""
    from gemmlib.core.hardware import get_hardware
    from gemmlib.llm.efficiency import T0_S, ShapeEfficiency

    hw = get_hardware("H100 SXM")
    par = Parallel(pp=2)
    llama = PRESETS["llama-3-8b"]
    wl = Workload(batch=1, seq_len=512, new_tokens=3)
    q = next(o for o in phase_ops(llama, wl, "prefill") if o.name == "q_proj")
    mine = per_gpu_op(q, llama, par, stage_layers=16)
    assert (q.kernels, mine.kernels, mine.count) == (32, 16, 16)
    mamba = read_config_file(next(p for p in CONFIGS if Path(p).stem == "falcon-mamba-7b"))[0]
    conv = next(o for o in phase_ops(mamba, wl, "decode") if o.name == "conv1d")
    assert conv.kernels == 0 and conv.count == 64 * 3
    mine = per_gpu_op(conv, mamba, par, stage_layers=32)
    model = ShapeEfficiency(hw, mamba, wl, par)
    fixed = model._time(mine)[0]
    assert fixed == pytest.approx(32 * 3 * T0_S, rel=1e-12)


def test_a_tp_ranks_embedding_row_is_every_token_at_full_width():
    """Vocabulary-parallel lookup: each rank gathers its rows of the table for every token and writes a full-width
    (masked) output, summed by an all-reduce: its row is every token, at the hidden width, with or without sequence
    parallelism."""
    cfg = PRESETS["llama-3-8b"]
    emb = next(o for o in phase_ops(cfg, Workload(batch=2, seq_len=2048), "prefill") if o.name == "embedding")
    for par in (Parallel(tp=4), Parallel(tp=4, sequence_parallel=True)):
        mine = per_gpu_op(emb, cfg, par)
        assert (mine.m, mine.n, mine.count) == (4096, 4096, 1)
