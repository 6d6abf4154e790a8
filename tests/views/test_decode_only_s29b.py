"""A decode-only workload (the page's "decode only" switch, the CLI's ``--context C``) with 0 new tokens: the page
answers as ``python -m gemmlib estimate`` does (review s29, B). The CLI's rule is the contract: ``--new-tokens``
is 1 with ``--context`` when not given, and 0 decode steps is refused; the page used to take its box's 0 as 1 step
and show an estimate the CLI refuses."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gemmlib.core.errors import InputError
from gemmlib.core.hardware import CATALOGUE, get_hardware
from gemmlib.views import estimator as view

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pages"))
from estimator_app import estimator_app  # noqa: E402


@pytest.fixture(autouse=True)
def _own_cache(bench_env):
    """No measured ceilings or links from this machine: the GPU list is the catalogue's."""


def _page_json(**state) -> dict:
    inp = view.Inputs.from_state({**view.DEFAULTS, **state})
    cfg = view.model(inp)
    return json.loads(view.download_json(inp, cfg, CATALOGUE[inp.gpu], None, view.TrainingInputs(),
                                         view.ServingInputs()))


def test_zero_new_tokens_decode_only_is_refused_by_both_with_the_same_words(run_cli):
    rc, out, err = run_cli(["estimate", "--preset", "llama-3-8b", "--context", "4096", "--new-tokens", "0", "--json"])
    assert rc != 0 and not out
    said = err.strip().removeprefix("error: ")
    inp = view.Inputs.from_state({**view.DEFAULTS, "le_preset": "llama-3-8b", "le_ctx": True, "le_seq": 4096,
                                  "le_new": 0})
    cfg = view.model(inp)
    with pytest.raises(InputError) as e:
        view.estimate(inp, cfg, CATALOGUE[inp.gpu])
    assert str(e.value) == said == "a decode-only workload needs at least one decode step"


@pytest.mark.parametrize("new", [1, 7])
def test_decode_only_steps_are_the_clis(run_cli, new):
    """The page's N new tokens are the CLI's ``--new-tokens N``; its 1 is the CLI's default with ``--context``."""
    argv = ["estimate", "--preset", "llama-3-8b", "--context", "4096", "--json", "--gpu", "h100"]
    rc, out, err = run_cli(argv + ([] if new == 1 else ["--new-tokens", str(new)]))
    assert rc == 0, err
    cli = json.loads(out)
    assert cli["workload"]["new_tokens"] == new and cli["workload"]["decode_only"] is True
    page = _page_json(le_preset="llama-3-8b", le_ctx=True, le_seq=4096, le_new=new,
                      le_gpu=get_hardware("h100").name)
    assert page == cli


def test_the_page_shows_the_refusal_not_an_estimate():
    """The page with a decode-only link and 0 new tokens: the CLI's refusal, no headline figures (it showed a
    one-step decode's time per token)."""
    at = estimator_app(le_preset="llama-3-8b", le_ctx="true", le_new="0", le_seq="4096")
    assert at.toggle(key="le_ctx").value is True and at.number_input(key="le_new").value == 0
    assert any("a decode-only workload needs at least one decode step" in e.value for e in at.error)
    assert not at.metric
