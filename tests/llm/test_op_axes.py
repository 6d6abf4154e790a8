"""Where each op keeps the batch's sequences and a sequence's positions (``Op.batch_axis``, ``Op.tokens_axis``), and one
rank's shapes under expert parallelism (each EP rank, or attention data replica, its own sequences) and context
parallelism (each CP rank 1/c of every sequence's positions).

The reference is the accounting itself at a smaller workload: one rank of e that takes b / e of the group's b sequences
runs each non-expert op at the shape the same op has for a batch of b / e (a rank of c CP ranks: for a prompt of S / c).
Before, a non-expert op kept the group's rows or runs under EP (DeepSeek-V3, EP 8, batch 8 × 1,024: q_a_proj at 8,192
rows where each rank runs 1,024) and CP divided every op's rows, a convolution's sequences and a chunked scan's chunk
length included."""

from __future__ import annotations

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
from gemmlib.llm.parallel import Parallel, per_gpu_op
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
