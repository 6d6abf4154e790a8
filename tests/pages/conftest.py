"""Fixtures the page tests share."""

from __future__ import annotations

import logging

import pytest


@pytest.fixture
def widget_warnings(monkeypatch):
    """What Streamlit's widget policies log, as in a served app: AppTest has no runtime, which turns the check off,
    and the warning is logged once per process. Yields the list of messages logged."""
    import streamlit.elements.lib.policies as policies

    monkeypatch.setattr(policies.runtime, "exists", lambda: True)
    monkeypatch.setattr(policies, "_shown_default_value_warning", False)
    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    handler = Keep()
    logger = logging.getLogger(policies.__name__)
    logger.addHandler(handler)
    yield seen
    logger.removeHandler(handler)
