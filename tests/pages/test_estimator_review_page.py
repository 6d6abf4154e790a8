"""Defects found by an engineer's review of the LLM Estimator page, seen through AppTest."""

from __future__ import annotations

import pytest
from estimator_app import estimator_app


@pytest.fixture(autouse=True)
def _own_cache(bench_env):
    """No measured ceilings or links from this machine."""


_app = estimator_app


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_headlines_fit_names_the_inference_memory_beside_a_training_run_that_does_not_fit(lang):
    # The green "Fits: 25 GiB per GPU" beside the Training tab's red "Does not fit: training needs 144 GiB per GPU"
    # now says that it is the inference memory, and where the training step's is.
    at = _app(lang=lang, le_preset="llama-3-70b", le_gpus=8, le_tp=4, le_pp=2, le_batch=16, le_train="true",
              le_tokens="1e10")
    assert not at.exception, [e.value for e in at.exception]
    fit = at.success[0].value
    assert at.error, "the training run does not fit"
    assert ("inference" in fit and "Training" in fit) if lang == "en" else ("推理" in fit and "训练" in fit), fit
    off = _app(lang=lang, le_preset="llama-3-70b", le_gpus=8, le_tp=4, le_pp=2, le_batch=16)
    assert off.success[0].value != fit and fit.startswith(off.success[0].value)


def test_turning_the_training_run_on_and_off_adds_and_removes_the_fits_note():
    at = _app(le_preset="llama-3-70b", le_gpus=8, le_tp=4, le_pp=2, le_batch=16, le_tokens="1e10")
    plain = at.success[0].value
    at.toggle(key="le_train").set_value(True).run()
    assert at.success[0].value.startswith(plain) and "inference memory" in at.success[0].value
    at.toggle(key="le_train").set_value(False).run()
    assert at.success[0].value == plain


def test_the_serving_curves_settings_are_greyed_out_while_the_curve_is_off():
    # The TPOT target, the engine, the request rate and the KV block size count only for the serving curve; with
    # it off they looked live and did nothing (the Training tab greys out its idle boxes the same way).
    keys = ("le_tpot", "le_rate", "le_kvb")
    at = _app(le_tab="Serving")
    assert all(at.number_input(key=k).disabled for k in keys) and at.selectbox(key="le_engine").disabled
    at.toggle(key="le_serve").set_value(True).run()
    assert not any(at.number_input(key=k).disabled for k in keys) and not at.selectbox(key="le_engine").disabled
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
