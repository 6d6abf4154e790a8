"""Altair charts for benchmark results, shared by the pages and the report.

Each builder takes ``BenchResult`` objects (or their ``to_dict()`` forms) and returns
an Altair chart; nothing here imports streamlit or torch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gemmlib.core.results import BenchResult


def _rows(results: Iterable[BenchResult | Mapping]) -> list[dict]:
    out = []
    for r in results:
        d = r.to_dict() if isinstance(r, BenchResult) else dict(r)
        shape = d.get("shape") or {}
        d["shape_label"] = shape.get("label") or f"{shape.get('m')}×{shape.get('n')}×{shape.get('k')}"
        d["mnk"] = f"{shape.get('m')}×{shape.get('n')}×{shape.get('k')}"
        d["median_ms"] = d["median_s"] * 1e3 if d.get("median_s") else None
        out.append(d)
    return out


def tflops_chart(results: Iterable[BenchResult | Mapping], title: str = "Throughput per format") -> Any:
    """Grouped bars: TFLOP/s per format, one group per shape (supported rows only)."""
    import altair as alt

    rows = [r for r in _rows(results) if r.get("supported") and r.get("tflops")]
    return alt.Chart(alt.Data(values=rows)).mark_bar().encode(
        x=alt.X("name:N", title="format", sort=None),
        y=alt.Y("tflops:Q", title="TFLOP/s (int8: TOP/s)"),
        color=alt.Color("name:N", title="format", sort=None),
        column=alt.Column("shape_label:N", title=None, sort=None,
                          header=alt.Header(labelAngle=0, labelLimit=180)),
        tooltip=[alt.Tooltip("shape_label:N", title="shape"), alt.Tooltip("mnk:N", title="M×N×K"),
                 alt.Tooltip("name:N", title="format"), alt.Tooltip("tflops:Q", format=".3g"),
                 alt.Tooltip("median_ms:Q", title="median ms", format=".4g"),
                 alt.Tooltip("rel_error:Q", title="rel. error", format=".2e")],
    ).properties(title=title, width=alt.Step(18))


def error_chart(results: Iterable[BenchResult | Mapping], title: str = "Error against float64") -> Any:
    """Points on a log scale: max relative error per format and shape."""
    import altair as alt

    rows = [r for r in _rows(results) if r.get("supported") and r.get("rel_error")]
    return alt.Chart(alt.Data(values=rows)).mark_point(filled=True, size=80).encode(
        x=alt.X("name:N", title="format", sort=None),
        y=alt.Y("rel_error:Q", title="max |error| / max |reference|", scale=alt.Scale(type="log")),
        color=alt.Color("shape_label:N", title="shape", sort=None),
        tooltip=[alt.Tooltip("shape_label:N", title="shape"), alt.Tooltip("name:N", title="format"),
                 alt.Tooltip("rel_error:Q", title="rel. error", format=".3e")],
    ).properties(title=title, width=420, height=260)


def ceilings_chart(rows: list[dict], title: str = "Measured vs datasheet") -> Any:
    """Bars of measured and datasheet figures (rows from ``Ceilings.rows``)."""
    import altair as alt

    long: list[dict[str, Any]] = []
    for r in rows:
        for which in ("measured", "datasheet"):
            if r.get(which):
                long.append({"figure": r["figure"], "which": which, "value": r[which], "unit": r["unit"]})
    return alt.Chart(alt.Data(values=long)).mark_bar().encode(
        y=alt.Y("which:N", title=None),
        x=alt.X("value:Q", title="TFLOP/s (GEMM) or TB/s (copy)"),
        color=alt.Color("which:N", title=None),
        row=alt.Row("figure:N", title=None, sort=None, header=alt.Header(labelAngle=0, labelAlign="left")),
        tooltip=["figure:N", "which:N", alt.Tooltip("value:Q", format=".3g"), "unit:N"],
    ).properties(title=title, width=420).resolve_scale(x="independent")


def save_chart(chart: Any, path_stem: Any) -> tuple[str, str]:
    """Save as PNG when vl-convert-python is installed, else as HTML. Returns (path, note)."""
    from pathlib import Path
    stem = Path(path_stem)
    try:
        import vl_convert  # noqa: F401
        png = stem.with_suffix(".png")
        chart.save(str(png), scale_factor=1.5)
        return str(png), ""
    except ImportError:
        html = stem.with_suffix(".html")
        chart.save(str(html))
        return str(html), "vl-convert-python is not installed: chart saved as HTML (pip install vl-convert-python for PNG)"
    except Exception as e:  # noqa: BLE001 - a chart that fails to render must not lose the report
        spec = stem.with_suffix(".vl.json")
        spec.write_text(chart.to_json(), encoding="utf-8")
        return str(spec), f"PNG rendering failed ({type(e).__name__}: {e}); Vega-Lite spec saved instead"
