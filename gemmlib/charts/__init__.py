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


PNG_SCALE = 1.5  # the report's PNG charts: 1.5× the chart's own size


def chart_bytes(chart: Any) -> tuple[bytes, str, str]:
    """An Altair chart rendered in memory, for ``gemmlib.core.files.write_atomic`` to write (nothing
    here touches a file): ``(data, suffix, note)``.

    PNG through vl-convert (``vl_convert.vegalite_to_png``, the Vega-Lite version Altair's schema
    names) when it is installed; else the chart's standalone HTML (``chart.to_html()``); when the
    PNG rendering itself fails, the Vega-Lite spec as JSON. ``note`` says why a chart is not a PNG
    ("" when it is).
    """
    try:
        import vl_convert
    except ImportError:
        return (chart.to_html().encode("utf-8"), ".html",
                "vl-convert-python is not installed: chart saved as HTML (pip install vl-convert-python for PNG)")
    try:
        import altair as alt

        version = "_".join(alt.SCHEMA_VERSION.split(".")[:2])  # "v6.4.1" -> "v6_4", vl-convert's spelling
        return bytes(vl_convert.vegalite_to_png(chart.to_dict(), vl_version=version, scale=PNG_SCALE)), ".png", ""
    except Exception as e:  # noqa: BLE001 - a chart that fails to render must not lose the report
        return (chart.to_json().encode("utf-8"), ".vl.json",
                f"PNG rendering failed ({type(e).__name__}: {e}); Vega-Lite spec saved instead")
