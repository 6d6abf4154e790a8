"""The LLM Estimator page in AppTest, as its page tests open it (``from estimator_app import estimator_app``)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

ESTIMATOR_PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "4_LLM_Estimator.py")


def estimator_app(**query) -> AppTest:
    """The LLM Estimator page opened with ``query`` as its link, after its first run. (Its tests use ``bench_env``
    so that no ceilings or links measured on this machine are read.)"""
    at = AppTest.from_file(ESTIMATOR_PAGE, default_timeout=120)
    for k, v in query.items():
        at.query_params[k] = str(v)
    return at.run()
