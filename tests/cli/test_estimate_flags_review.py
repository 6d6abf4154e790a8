"""Flags of `estimate` that belong to one mode: given without it they are refused in one line, never ignored."""

from __future__ import annotations

import json

import pytest

from gemmlib.cli import main

BASE = ["estimate", "--preset", "llama-3-8b", "--seq-len", "256", "--new-tokens", "4"]


@pytest.mark.parametrize("flags", [["--zero", "3"], ["--recompute", "full"], ["--micro-batch", "2"],
                                   ["--recompute-modules", "mlp"], ["--recompute-layers", "2"],
                                   ["--train-tokens", "1e9"]])
def test_a_training_flag_without_train_is_refused_not_ignored(flags, capsys):
    # before: --zero 3, --recompute full, --micro-batch 2, --recompute-modules and --recompute-layers without --train
    # printed an inference estimate with no word of them (exit 0), while --cp and --train-tokens said "add --train"
    assert main([*BASE, *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"{flags[0]} is for a training run: add --train" in err


def test_the_training_flags_at_their_defaults_and_with_train_still_run(capsys):
    assert main([*BASE, "--zero", "0", "--micro-batch", "1", "--recompute", "none", "--json"]) == 0
    assert "train" not in json.loads(capsys.readouterr().out)
    assert main([*BASE, "--new-tokens", "0", "--batch", "8", "--train", "--train-tokens", "1e9", "--zero", "3",
                 "--recompute", "full", "--micro-batch", "2", "--json"]) == 0
    t = json.loads(capsys.readouterr().out)["train"]
    assert (t["zero"], t["recompute"], t["micro_batch"]) == (3, "full", 2)
