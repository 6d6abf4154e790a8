"""The Serving tab's caption says the host time each engine step adds (the JSON's serving_summary.step_overhead_s)."""

from __future__ import annotations

import pytest

from gemmlib.core.hardware import CATALOGUE
from gemmlib.views import estimator as view


@pytest.fixture(autouse=True)
def _own_cache(bench_env):
    """No measured ceilings or links from this machine: the GPU list is the catalogue's."""


def _est(**inputs):
    inp = view.Inputs(**inputs)
    return view.estimate(inp, view.model(inp), CATALOGUE[inp.gpu])


def test_the_caption_says_the_host_time_per_step():
    # before: the caption said nothing of the 3 ms each vLLM step adds to every TPOT on the curve
    est = _est(batch=8, seq=512, new=32, gpus=1)
    assert "Each engine step adds 3 ms of host time" in view.serving(est, view.ServingInputs(serve=True)).caption
    trt = view.serving(est, view.ServingInputs(serve=True, engine="trtllm"))
    assert "No host time is added per engine step" in trt.caption
