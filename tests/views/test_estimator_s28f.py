"""The LLM Estimator's presenter, review s28 (F): the page and `python -m gemmlib estimate` agree on a context-parallel
layout; interconnect names in the reader's language; the serving chart's own title; the training memory chart and
advice."""

from __future__ import annotations

import json
from collections import ChainMap

import pytest

from gemmlib.core.hardware import CATALOGUE
from gemmlib.views import estimator as view

LLAMA70 = dict(preset="llama-3-70b", pp=4, dp=8, batch=256, seq=4096, new=0)


@pytest.fixture(autouse=True)
def _own_cache(bench_env):
    """No measured ceilings or links from this machine: the GPU list is the catalogue's."""


def _cli(run_cli, *extra: str) -> dict:
    rc, out, err = run_cli(["estimate", "--preset", "llama-3-70b", "--pp", "4", "--dp", "8", "--batch", "256",
                            "--seq-len", "4096", "--new-tokens", "0", *extra, "--json"])
    assert rc == 0, err
    return json.loads(out)


def test_a_training_runs_cp_ranks_are_the_headlines_replicas_as_in_the_cli(run_cli):
    """llama-3-70b at PP 4, DP 8, CP 2: the page's headline TTFT was 11.4 s (the inference on DP 8 × PP 4 = 32 GPUs,
    the CP ranks left out), the CLI's 5.68 s (64 GPUs, the CP ranks as 16 data replicas)."""
    cli = _cli(run_cli, "--train", "--train-tokens", "1e12", "--cp", "2", "--virtual-stages", "2")
    inp = view.Inputs(**LLAMA70, train=True, cp=2)
    est = view.estimate(inp, view.model(inp), CATALOGUE[inp.gpu])
    assert est.gpus == cli["parallel"]["gpus"] == 64
    assert est.ttft_s == pytest.approx(cli["times"]["ttft_s"], rel=1e-12)
    # the whole JSON download, training run included, is the CLI's
    tr = view.TrainingInputs(train=True, tokens=1e12, cp=2, vs=2)
    assert json.loads(view.download_json(inp, view.model(inp), CATALOGUE[inp.gpu], None, tr)) == cli
    v = view.present(est, escape=str)
    assert "CP 2" in v.scaleout.title and "= 64 ×" in v.scaleout.title


def test_cp_without_a_training_run_changes_nothing(run_cli):
    """The CLI refuses --cp without --train; the page's CP box (in the Training tab) counts only with the run on."""
    cli = _cli(run_cli)
    inp = view.Inputs(**LLAMA70, train=False, cp=2)
    est = view.estimate(inp, view.model(inp), CATALOGUE[inp.gpu])
    assert est.gpus == 32 and est.ttft_s == pytest.approx(cli["times"]["ttft_s"], rel=1e-12)
    assert view.gpus_note(view.Inputs(**LLAMA70, gpus=32, train=True, cp=2)) is None  # the box is the layout's


def test_the_headline_reads_the_training_layout_a_link_gives_before_its_tab_draws():
    """On a link's first run the Training tab's CP box is not drawn yet when the headline is made: its value is the
    link's (a bad one: the default, as the widget takes it)."""
    state = {"le_preset": "llama-3-70b"}
    assert view.Inputs.from_state(view.headline_state(state, True, "2")).cp == 2
    assert view.Inputs.from_state(view.headline_state(state, True, "x")).cp == 1
    assert view.Inputs.from_state(view.headline_state(state, True, "0")).cp == 1
    assert view.Inputs.from_state(view.headline_state(ChainMap({"le_cp": 4}, state), True, "2")).cp == 4
    assert view.Inputs.from_state(view.headline_state(state, False, None)).train is False
