"""Absorbed MLA's decode products on one GPU of a tensor-parallel group: the rank's heads are the GEMM's rows."""

from __future__ import annotations

import json

import pytest

from gemmlib.cli import main


@pytest.mark.parametrize("attention", ["fused", "eager"])
def test_a_ranks_absorbed_products_keep_every_run_and_its_share_of_the_heads(attention, capsys):
    # DeepSeek-V3 (61 layers, 128 heads, latent 512 + rotary 64), 4 sequences with 4,096 cached tokens, 2 decode steps,
    # TP 8: each rank runs 128 / 8 = 16 heads against the whole latent in every one of 61 × 4 × 2 = 488 runs (vLLM
    # splits MLA's heads over the TP ranks and keeps the latent cache whole on each). Before, the table and the JSON
    # said 128 rows × round(488 / 8) = 61 runs, so count × 2·M·N·K was not the FLOPs they printed.
    assert main(["estimate", "--preset", "deepseek-v3", "--context", "4096", "--new-tokens", "2", "--batch", "4",
                 "--gpu", "h200", "--tp", "8", "--attention", attention, "--json"]) == 0
    ops = {o["name"]: o for o in json.loads(capsys.readouterr().out)["decode"]["ops"]}
    runs, keys = 61 * 4 * 2, (4097 + 4098) / 2  # step i meets 4,096 + i + 1 keys
    s, v = ops["attn_scores"], ops["attn_values"]
    assert (s["m"], s["n"], s["k"], s["count"]) == (16, 4097, 576, runs)
    assert (v["m"], v["n"], v["k"], v["count"]) == (16, 512, 4097, runs)
    assert s["flops"] == 2 * 16 * 576 * keys * runs == 36_856_258_560
    assert v["flops"] == 2 * 16 * 512 * keys * runs == 32_761_118_720
    assert ops["q_absorb"]["count"] == 61 * 4 * 2 * 128 // 8 // 4  # per head: m = the 4 sequences, runs ÷ TP


def test_one_gpu_keeps_every_head_as_rows(capsys):
    assert main(["estimate", "--preset", "deepseek-v3", "--context", "4096", "--gpu", "h200", "--json"]) == 0
    s = next(o for o in json.loads(capsys.readouterr().out)["decode"]["ops"] if o["name"] == "attn_scores")
    assert (s["m"], s["count"], s["flops"]) == (128, 61, 2 * 128 * 576 * 4097 * 61)
