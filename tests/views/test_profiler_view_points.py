"""The Profiler's metrics compare shares in percentage points, and say so.

Before, the GEMM share of time 68.4 % against the 80 % target read "-11.6% vs 80 % target": a reader takes 11.6 %
off 80 % (70.7 %), not the 68.4 % shown. The difference of two shares is in points; the target is the one given.
"""

from __future__ import annotations

import re
from types import SimpleNamespace as NS

import pytest

from gemmlib.views import profiler as pv


def _points(delta: str) -> float:
    m = re.match(r"([+-]\d+(?:\.\d+)?) points\b", delta)
    assert m, delta
    return float(m.group(1))


def test_the_share_against_the_target_is_the_difference_in_points():
    res = NS(gemm_share=0.684, prediction=NS(hardware="CPU", time_share=0.711), total_time_s=0.15, gemm_tflops=None)
    share, predicted, *_ = pv.run_metrics(res, 0.8)
    assert float(share.value.rstrip("%")) - _points(share.delta) == pytest.approx(80.0)  # the share less the delta
    assert "%" not in share.delta.split("target")[0].split("vs")[0]  # the difference itself is no percentage
    assert float(share.value.rstrip("%")) - _points(predicted.delta) == pytest.approx(float(predicted.value.rstrip("%")))
    assert share.delta.startswith("-")  # below the target: Streamlit's red arrow down


def test_the_target_named_is_the_one_given():
    pred = NS(flop_share=0.95, time_share=0.6, gemm_flops=1e9)
    assert "the 90% target" in pv.prediction_metrics(pred, 0.9)[1].delta
    assert _points(pv.prediction_metrics(pred, 0.9)[1].delta) == -30.0


def test_the_predictions_hardware_is_named_in_the_readers_language():
    """The Chinese page read "预测（CPU (edit me)）": the catalogue's CPU row, marked for translation, left in English."""
    mark = "«{}»".format
    res = NS(gemm_share=0.7, prediction=NS(hardware="CPU (edit me)", time_share=0.6), total_time_s=0.1,
             gemm_tflops=None)
    assert pv.run_metrics(res, 0.8, gettext=mark)[1].label == "«Predicted ({hardware})»".format(hardware="«CPU (edit me)»")
    measured = NS(**{**vars(res), "prediction": NS(hardware="AMD EPYC (measured)", time_share=0.6)})
    assert pv.run_metrics(measured, 0.8, gettext=mark)[1].label == "«Predicted ({hardware})»".format(
        hardware="«{name} (measured)»".format(name="AMD EPYC"))
