"""Altair chart builders shared by the pages and the report. Importing this package loads no
charting library: each module imports altair itself, and ``optional_chart`` lets the report skip a
picture (not a measurement) on a machine without altair or pandas."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

CHART_NOTES: set[str] = set()  # charts a section could not draw here, and why


def optional_chart(build: Callable[[], Any]) -> Any | None:
    """``build()``, or None when a charting package is missing (a GPU image may have torch only).

    The section's results and tables never depend on charts: a missing altair or pandas costs the
    pictures, not the measurements.
    """
    try:
        return build()
    except ImportError as e:
        CHART_NOTES.add(f"charts skipped: {e.name or e} is not installed here (pip install -r requirements.txt)")
        return None


def label_expr(labels: Mapping[str, str], field: str = "datum.label") -> str:
    """A Vega expression that shows each value of an axis or legend by its label (``labelExpr``):
    the data keep their ids (``"inner"``), the reader sees the label in the page's language.
    Values not in ``labels`` show as they are."""
    expr = field
    for value, label in reversed(list(labels.items())):
        expr = f"{field} === {json.dumps(value)} ? {json.dumps(label, ensure_ascii=False)} : ({expr})"
    return expr
