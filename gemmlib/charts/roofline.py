"""The roofline chart: a device's roofs, every measured point, and an LLM's ops overlaid.

Attainable FLOP/s = min(peak, intensity × bandwidth) (``gemmlib.core.roofline``). One roof
per dtype and per source — the datasheet (``gemmlib.core.hardware``) and, when the Devices
page or ``python -m gemmlib devices --measure`` has measured them, the ceilings of
``gemmlib.measure.devices``. Points are ``BenchResult`` rows (intensity = FLOPs / minimum
bytes; height = measured TFLOP/s) and the estimator's ops (``gemmlib.llm.accounting``).

No torch here; Altair is imported inside the chart builder.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from gemmlib.charts.aria import localized
from gemmlib.core.ceilings import emulated
from gemmlib.core.errors import InputError
from gemmlib.core.files import not_json
from gemmlib.core.hardware import Hardware
from gemmlib.core.i18n import N_, Text, Translate, english
from gemmlib.core.results import BenchResult
from gemmlib.core.roofline import attainable, ridge

MAX_RESULTS_BYTES = 20_000_000  # an uploaded results.json larger than this is refused
LO, HI = 0.05, 1e5  # intensity range of the chart, FLOP/byte
# a roof's source, as shown: the catalogue's datasheet, ceilings measured here, or the CPU row's placeholder figures
KIND_LABELS = {"datasheet": N_("datasheet"), "measured": N_("measured"), "placeholder": N_("placeholder")}
KIND_DASHES = {"datasheet": [1, 0], "measured": [6, 3], "placeholder": [2, 2]}
# The estimator's diamonds: sienna, a colour neither Streamlit's palette (its roofs) nor Vega's category10 uses, seen
# on a light and a dark page alike (they were red, the fp8 roof's colour, and had no legend entry)
ESTIMATE_COLOUR = "#a0522d"
BENCH_LABELS = {"precision": N_("precision"), "tiling": N_("tiling"), "batching": N_("batching"),
                "ceiling": N_("ceiling"), "waves": N_("waves"), "profile": N_("profile"),
                "collective": N_("collective"), "tp": N_("tensor-parallel"), "calibrate": N_("calibrate")}


def bench_label(bench: str, gettext: Translate = english) -> str:
    """A point's benchmark (``bench``, or the estimator's "estimate · prefill") in the reader's language."""
    if bench.startswith("estimate · "):
        return gettext(N_("estimate · {phase}")).format(phase=gettext(PHASE_LABELS.get(bench[11:], bench[11:])))
    return gettext(BENCH_LABELS.get(bench, bench))


PHASE_LABELS = {"prefill": N_("prefill"), "decode": N_("decode")}


def roof_rows(hw: Hardware, dtypes: Iterable[str], kind: str = "datasheet", label: str | None = None,
              lo: float = LO, hi: float = HI, *, gettext: Translate = english) -> list[dict]:
    """Points of the roof for each dtype the device has (two segments: the slope and the flat top);
    each roof's name through ``gettext`` (the ``kind`` column keeps its id)."""
    out = []
    for d in dtypes:
        peak = hw.peak(d)
        if peak is None:
            continue
        r = ridge(peak, hw.bandwidth)
        name = gettext(N_("{where} · {dtype} ({kind})")).format(where=gettext(label or hw.name), dtype=d,
                                                                  kind=gettext(KIND_LABELS.get(kind, kind)))
        for x in sorted({lo, min(max(r, lo), hi), hi}):
            out.append({"intensity": x, "tflops": float(attainable(x, peak, hw.bandwidth)) / 1e12, "roof": name,
                        "kind": kind, "dtype": d, "ridge": r, "peak_tflops": peak / 1e12,
                        "bandwidth_tbs": hw.bandwidth / 1e12})
    return out


def measured_roof_rows(ceilings: Iterable[Any], dtypes: Iterable[str] | None = None, *,
                       gettext: Translate = english) -> list[dict]:
    """Roofs from measured ceilings (``gemmlib.core.ceilings.Ceilings``): measured peaks and copy bandwidth. A format
    the device only emulates (fp8 on a CPU) draws no roof: its figure is a reference kernel's speed at one size."""
    out = []
    want = set(dtypes) if dtypes is not None else None
    for c in ceilings:
        peaks = {d: v for d, v in c.peaks.items() if not emulated(d, c.device)}
        if not c.bandwidth or not peaks:
            continue
        hw = Hardware(c.device_name, "gpu" if c.device != "cpu" else "cpu", tuple(peaks.items()),
                      bandwidth=float(c.bandwidth), sms=1, memory_bytes=1.0, source="measured")
        ds = [d for d in peaks if want is None or d in want]
        out += roof_rows(hw, ds, kind="measured", label=c.device_name, gettext=gettext)
    return out


def _shape_text(shape: Mapping) -> str:
    keys = [k for k in ("batch", "m", "n", "k", "tile") if shape.get(k) is not None]
    return " ".join(f"{k}={shape[k]}" for k in keys)


def result_points(results: Iterable[BenchResult | Mapping]) -> list[dict]:
    """One point per timed result: intensity (FLOPs / minimum bytes) and measured TFLOP/s; ``emulated`` when the
    device has no hardware for its format (fp8 on a CPU: a reference kernel's speed, under no roof of its own)."""
    out = []
    for r in results:
        if isinstance(r, Mapping):
            r = BenchResult.from_dict(r)
        if not r.supported or not r.tflops or not r.intensity or not math.isfinite(r.intensity):
            continue
        out.append({"intensity": r.intensity, "tflops": r.tflops, "bench": r.bench, "name": r.name,
                    "dtype": r.dtype, "emulated": emulated(r.dtype, r.device),
                    "device": r.device_name or r.device, "device_kind": r.device,
                    "shape": _shape_text(r.shape),
                    "median_ms": (r.median_s or 0) * 1e3, "source": "measured"})
    return out


def estimator_points(est: Any) -> list[dict]:
    """The estimator's ops (one GPU's share, ``accounting.Estimate`` or ``scaleout.ScaleOutEstimate``) at their
    intensity and predicted TFLOP/s per GPU."""
    out = []
    for phase in (est.prefill, est.decode):
        for op in phase.ops:
            if not op.flops or not op.bytes or not op.time_s:
                continue
            out.append({"intensity": op.intensity, "tflops": op.flops / op.time_s / 1e12,  # one GPU's share
                        "bench": f"estimate · {phase.name}", "name": op.name, "dtype": est.compute_dtype,
                        "device": est.hardware.name, "shape": f"m={op.m} n={op.n} k={op.k}",
                        "estimated_ms": op.time_s * 1e3, "source": f"estimator ({est.model.name})",
                        "bound": op.bound, "efficiency": op.efficiency})
    return out


def results_from_json(data: bytes | str) -> list[BenchResult]:
    """Results from a ``--json`` / report ``results.json`` file: ``{"results": [...]}`` or a list."""
    if isinstance(data, bytes):
        if len(data) > MAX_RESULTS_BYTES:
            raise InputError(N_("the file is {mb:.1f} MB; results files above {most:.0f} MB are refused"),
                             mb=len(data) / 1e6, most=MAX_RESULTS_BYTES / 1e6)
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(N_("the file is not UTF-8 text; upload a results JSON file")) from None
    try:
        obj = json.loads(data)
    except RecursionError:
        raise InputError(N_("the file is nested too deeply to be a results file")) from None
    except ValueError as e:
        raise not_json(e, Text(N_("the file"))) from None
    rows = _find_results(obj)
    if not rows:
        raise InputError(N_("no results found: upload what `bench precision`, `bench tiling` or `bench batching` "
                            "writes with --json ({\"results\": [...]}), or a report's results.json"))
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise InputError(N_("result {i} is not an object"), i=i)
        missing = [f for f in _REQUIRED if f not in row]
        if missing:  # said as the file's fields, not as Python's "__init__() missing 7 required positional arguments"
            raise InputError(N_("result {i} lacks {fields}: a results file has the rows `bench precision`, "
                                "`bench tiling` or `bench batching` writes with --json (the other commands' JSON is "
                                "of other kinds)"), i=i, fields=", ".join(missing))
        try:
            r = BenchResult.from_dict(row)
            r.flops = _finite(r.flops or 0, "flops")
            r.bytes = _finite(r.bytes or 0, "bytes")
            r.median_s = None if r.median_s is None else _finite(r.median_s, "median_s")
            if not isinstance(r.shape, dict):
                r.shape = {}
            for field in ("bench", "name", "device", "dtype"):
                if not isinstance(getattr(r, field), str):
                    raise ValueError(f"its {field!r} is {type(getattr(r, field)).__name__}, not text")
        except (TypeError, ValueError, OverflowError) as e:
            raise InputError(N_("result {i} does not look like a benchmark row ({error})"), i=i, error=str(e)) from None
        out.append(r)
    return out


# the fields a row must have (BenchResult's without a default)
_REQUIRED = tuple(f.name for f in dataclasses.fields(BenchResult)
                  if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)


def _finite(v: Any, what: str) -> float:
    x = float(v)
    if not math.isfinite(x) or x < 0:
        raise ValueError(f"its {what!r} is {x!r}, not a finite number ≥ 0")
    return x


def _find_results(obj: Any, depth: int = 0) -> list:
    """The result rows of a file: a list of rows, ``{"results": [rows]}`` (``--json``), or the
    report's ``results.json`` (``{"sections": [{"results": [rows]}, ...]}``)."""
    if depth > 3:
        return []
    if isinstance(obj, list):
        if obj and all(isinstance(x, Mapping) and "bench" in x for x in obj):
            return obj
        rows: list = []
        for x in obj:
            if isinstance(x, (Mapping, list)):
                rows += _find_results(x, depth + 1)
        return rows if rows else list(obj) if depth == 0 else []
    if isinstance(obj, Mapping):
        if isinstance(obj.get("results"), list):
            return obj["results"]
        rows = []
        for v in obj.values():
            if isinstance(v, (Mapping, list)):
                rows += _find_results(v, depth + 1)
        return rows
    return []


@localized
def roofline_chart(roofs: list[dict], points: list[dict] | None = None, est_points: list[dict] | None = None,
                   title: str | None = None, *, gettext: Translate = english):
    """Log-log roofline: roofs as lines (dashed = measured, dotted = placeholder figures), measured points, estimator
    ops (diamonds).
    Titles, axes, legends and the points' benchmark names through ``gettext``; ``title`` as given."""
    import altair as alt
    import pandas as pd

    if not roofs:
        raise InputError(N_("no roof to draw: the chosen hardware has none of the chosen dtypes"))
    x = alt.X("intensity:Q", scale=alt.Scale(type="log", domain=[LO, HI]),
              title=gettext("arithmetic intensity, FLOP/byte"))
    y = alt.Y("tflops:Q", scale=alt.Scale(type="log"), title="TFLOP/s")
    rdf = pd.DataFrame(roofs)
    rdf["source"] = rdf["kind"].map(lambda k: gettext(KIND_LABELS.get(k, k)))
    kinds = [k for k in KIND_DASHES if k in set(rdf["kind"])] or ["datasheet"]
    layers = [alt.Chart(rdf).mark_line(clip=True).encode(
        x=x, y=y, color=alt.Color("roof:N", title=gettext("roof"),
                                  legend=alt.Legend(orient="bottom", columns=2, labelLimit=420)),
        # the legend names only the sources drawn (it promised "measured" with no measured roof on the chart)
        strokeDash=alt.StrokeDash("source:N", title=gettext("source"),
                                  scale=alt.Scale(domain=[gettext(KIND_LABELS[k]) for k in kinds],
                                                  range=[KIND_DASHES[k] for k in kinds])),
        tooltip=[alt.Tooltip("roof:N", title=gettext("roof")),
                 alt.Tooltip("peak_tflops:Q", title=gettext("peak TFLOP/s"), format=".4g"),
                 alt.Tooltip("bandwidth_tbs:Q", title=gettext("bandwidth TB/s"), format=".3g"),
                 alt.Tooltip("ridge:Q", title=gettext("ridge FLOP/B"), format=".4g")])]
    about = [alt.Tooltip("bench:N", title=gettext("benchmark")), alt.Tooltip("name:N", title=gettext("name")),
             alt.Tooltip("dtype:N", title=gettext("dtype")), alt.Tooltip("device:N", title=gettext("device")),
             alt.Tooltip("shape:N", title=gettext("shape")),
             alt.Tooltip("intensity:Q", title=gettext("intensity"), format=".4g"),
             alt.Tooltip("tflops:Q", title="TFLOP/s", format=".4g")]
    tips = [*about, alt.Tooltip("median_ms:Q", title=gettext("median ms"), format=".4g")]  # a measurement's

    def shown(rows: list[dict]) -> pd.DataFrame:
        return pd.DataFrame([{**p, "bench": bench_label(p["bench"], gettext)} for p in rows])

    if points:
        pdf = shown(points)
        # a format the device only emulates says so in the legend and the tooltip: it has no roof to sit under
        pdf["dtype"] = [gettext(N_("{dtype} (emulated, no roof)")).format(dtype=p["dtype"]) if p.get("emulated")
                        else p["dtype"] for p in points]
        layers.append(alt.Chart(pdf).mark_point(filled=True, size=70, clip=True).encode(
            x=x, y=y, color=alt.Color("bench:N", title=gettext("measured"), legend=alt.Legend(orient="right")),
            shape=alt.Shape("dtype:N", title=gettext("dtype"), legend=alt.Legend(labelLimit=260)), tooltip=tips))
    if est_points:
        edf = shown(est_points)
        edf["bound"] = edf["bound"].map(lambda b: gettext(b) if isinstance(b, str) else b)
        # in a colour no roof takes (red was the fp8 roof's), with a legend entry of its own; the tooltip says what
        # the estimator predicts (its time over the phase: the decode ops over every step), not a measurement's median
        edf["what"] = gettext("an op of the estimate")
        layers.append(alt.Chart(edf).mark_point(
            shape="diamond", size=90, filled=False, strokeWidth=2, clip=True).encode(
            x=x, y=y, color=alt.Color("what:N", title=None, scale=alt.Scale(range=[ESTIMATE_COLOUR]),
                                      legend=alt.Legend(orient="right", symbolType="diamond")),
            tooltip=[*about, alt.Tooltip("estimated_ms:Q", title=gettext("estimated ms (the whole phase)"),
                                         format=".4g"),
                     alt.Tooltip("efficiency:Q", title=gettext("efficiency"), format=".0%"),
                     alt.Tooltip("bound:N", title=gettext("bound"))]))
    return alt.layer(*layers).resolve_scale(color="independent", shape="independent").properties(
        height=460, title=title or gettext("Roofline"))
