"""`python -m gemmlib report --out DIR [--quick]`: every benchmark, one folder.

Runs each section in ``SECTIONS`` on the present device (CUDA when there is one) and
writes:

* ``results.json`` – machine, versions, and every section's rows (``BenchResult.to_dict``);
* ``results.csv`` – all rows flat;
* ``report.md`` – each section's text and tables, charts linked;
* ``charts/`` – PNG when vl-convert-python is installed, HTML otherwise.

A section is a module with ``report_section(device, quick, out_dir, progress) -> dict``
(keys ``title``, ``results``, ``markdown``, optional ``charts``). A module that is not
written yet is noted and skipped; a section that fails is reported with its error and
the report goes on. The devices section (measured ceilings) runs first, so the
precision section can show each result's share of the measured peak.
"""

from __future__ import annotations

import datetime as _dt
import importlib
import json
import platform
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gemmlib.charts import CHART_NOTES, optional_chart
from gemmlib.charts import bench as charts_bench
from gemmlib.charts.bench import save_chart
from gemmlib.core import format as fmt
from gemmlib.core.errors import InputError
from gemmlib.core.files import write_atomic
from gemmlib.core.results import BenchResult, _jsonable, to_csv
from gemmlib.measure import devices, harness, safety

# (name, module); the module's report_section is called. "gemmlib.measure.report" is this file.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("devices", "gemmlib.measure.report"),
    ("precision", "gemmlib.measure.precision"),
    ("tiling", "gemmlib.measure.tiling"),
    ("batching", "gemmlib.measure.batching"),
    ("profiler", "gemmlib.measure.profiler"),
    ("collectives", "gemmlib.measure.collectives"),  # between GPUs; a line saying why when < 2 GPUs
    ("tp", "gemmlib.measure.tp"),
)

Progress = Callable[[float, str], None] | None


def report_section(device: str, quick: bool, out_dir: Path, progress: Progress = None) -> dict:
    """The devices section: what was detected, and ceilings measured against the datasheet."""

    found = devices.detect()
    lines = ["| device | name | SMs / threads | memory GB | capability | catalogue row |",
             "|---|---|---|---|---|---|"]
    for d in found:
        lines.append(f"| {d.kind}:{d.index} | {d.name} | {d.units or '—'} | "
                     f"{fmt.number(d.memory_bytes / 1e9, 3)} | {d.capability or '—'} | {d.catalogue or '— (' + d.match_note + ')'} |")
    c = devices.measure_ceilings(device, quick=quick, progress=progress)
    datasheet = devices.datasheet_for(device, c.device_name) if device != "cpu" else None
    rows = c.rows(datasheet)
    lines += ["", f"Ceilings measured on {c.device_name} (GEMM {c.gemm_size}³ per dtype, "
                  f"device copy of {c.copy_bytes / 1024**2:.0f} MiB), against the datasheet:", "",
              "| figure | measured | datasheet | unit | share | note |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['figure']} | {fmt.number(r['measured'])} | {fmt.number(r['datasheet'] or None)} | "
                     f"{r['unit']} | {fmt.percent(r['share of datasheet'] or None, 0)} | {r['note']} |")
    for d, why in c.notes.items():
        if d not in c.peaks:
            lines.append(f"| {d} GEMM | not run | | | | {why} |")
    chart = optional_chart(lambda: _charts_bench().ceilings_chart(rows)) if rows else None
    charts = {"ceilings": chart} if chart is not None else {}
    return {"title": "Devices and measured ceilings", "results": list(c.results),
            "markdown": "\n".join(lines), "charts": charts, "ceilings": c.to_dict()}


def _versions() -> dict:
    out: dict[str, Any] = {"python": platform.python_version(), "platform": platform.platform()}
    # Package metadata, not imports: importing triton here, before the tiling section has switched
    # on Triton's CPU interpreter (TRITON_INTERPRET=1), would break that section on a CPU machine.
    from importlib.metadata import PackageNotFoundError, version
    for mod in ("torch", "triton", "numpy"):
        try:
            out[mod] = version(mod)
        except PackageNotFoundError:
            out[mod] = None
    try:
        import torch
        out["cuda"] = torch.version.cuda
    except Exception:  # noqa: BLE001
        pass
    return out


def run_report(out_dir: str | Path, *, device: str | None = None, quick: bool = False,
               sections: tuple[str, ...] | None = None, progress: Callable[[str], None] | None = None,
               time_budget_s: float | None = None) -> dict:
    """Run the sections and write the report files into ``out_dir``. Returns the results.json object."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} exists and is not a folder")
    known = [n for n, _ in SECTIONS]
    if sections:
        bad = [s for s in sections if s not in known]
        if bad:
            raise InputError(f"unknown section(s) {', '.join(bad)}; choose from {', '.join(known)}")
    if device is None:
        device = "cuda" if harness.torch_device_available("cuda")[0] else "cpu"
    device = harness.require_device(device)
    try:
        (out / "charts").mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot create the output folder {out}: {e.strerror}") from None
    say = progress or (lambda s: None)
    budget = safety.Deadline(time_budget_s)
    started = time.time()
    doc: dict[str, Any] = {
        "generated": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "device": device, "device_name": harness.device_name(device), "quick": quick,
        "versions": _versions(), "sections": [],
    }
    md = [f"# GEMM report: {doc['device_name']}", "",
          f"Generated {doc['generated']} with `python -m gemmlib report{' --quick' if quick else ''}` "
          f"on {device}; torch {doc['versions'].get('torch')}, triton {doc['versions'].get('triton')}"
          + (f", CUDA {doc['versions'].get('cuda')}" if doc['versions'].get('cuda') else "") + ".", "",
          "Timings: warm-up, device synchronization, repeated runs, median with p20/p80 "
          "(torch.utils.benchmark on a CPU, triton.testing.do_bench with L2 flush on a GPU); errors are "
          "against float64 references.", ""]
    all_results: list[BenchResult] = []
    chart_notes: set[str] = set()

    def write() -> None:
        """(Re)write results.json, results.csv and report.md with what is done so far: a report
        killed by a time limit keeps every finished section, and says which one was running."""
        doc["seconds"] = round(time.time() - started, 2)
        notes = sorted(chart_notes | CHART_NOTES)
        if notes:
            doc["chart_notes"] = notes
        _write_files(out, doc, md + ([""] + [f"*{n}*" for n in notes] if notes else []), all_results)

    write()
    for name, modname in SECTIONS:
        if sections and name not in sections:
            continue
        entry: dict[str, Any] = {"name": name, "module": modname}
        doc["sections"].append(entry)
        if budget.expired():
            entry["skipped"] = f"the report's time budget of {time_budget_s:g} s was spent"
            md += [f"## {name}", "", f"*Skipped: {entry['skipped']}.*", ""]
            write()
            continue
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as e:
            if e.name != modname:
                raise
            entry["skipped"] = "not written yet"
            say(f"{name}: skipped (module {modname} not present)")
            continue
        fn = getattr(mod, "report_section", None)
        if fn is None:
            entry["skipped"] = f"{modname} has no report_section"
            say(f"{name}: skipped ({entry['skipped']})")
            continue
        say(f"{name}: running")
        t0 = time.time()
        entry["running"] = ("started; if this is still here, the report was stopped while this section ran "
                            "(e.g. by a time limit)")
        write()

        def prog(frac: float, text: str, _name: str = name) -> None:
            say(f"{_name}: [{frac:4.0%}] {text}")

        try:
            sec = fn(device, quick, out, prog)
        except Exception as e:  # noqa: BLE001 - one broken section must not lose the others
            entry.pop("running", None)
            entry["error"] = f"{type(e).__name__}: {e}"
            entry["traceback"] = traceback.format_exc()
            entry["seconds"] = time.time() - t0
            say(f"{name}: FAILED {entry['error']}")
            md += [f"## {name}", "", f"**This section failed:** `{entry['error']}`", ""]
            write()
            continue
        entry.pop("running", None)
        entry["seconds"] = round(time.time() - t0, 2)
        if sec.get("skipped"):  # the section decided this machine cannot run it, and says why
            entry["skipped"] = sec["skipped"]
            say(f"{name}: skipped ({sec['skipped']})")
        results = [r for r in sec.get("results", []) if isinstance(r, BenchResult)]
        all_results.extend(results)
        entry["title"] = sec.get("title", name)
        entry["results"] = [r.to_dict() for r in results]
        for key in ("verdict", "ceilings"):
            if key in sec:
                entry[key] = sec[key]
        body = str(sec.get("markdown", "")).strip()
        if not body.startswith("#"):
            md += [f"## {entry['title']}", ""]
        md += [body, ""]
        entry["charts"] = {}
        for cname, chart in (sec.get("charts") or {}).items():
            safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in f"{name}_{cname}")
            try:
                path, note = _save_chart(chart, out / "charts" / safe)
            except Exception as e:  # noqa: BLE001
                entry["charts"][cname] = f"failed: {type(e).__name__}: {e}"
                continue
            rel = Path(path).relative_to(out).as_posix()
            entry["charts"][cname] = rel
            if note:
                chart_notes.add(note)
            md += [f"![{cname}]({rel})" if rel.endswith(".png") else f"[{cname}]({rel})", ""]
        say(f"{name}: done in {entry['seconds']:.1f} s")
        write()
    write()
    return doc


def _write_files(out: Path, doc: dict, md: list[str], results: list[BenchResult]) -> None:
    """Write the three report files, each through a temporary file and a rename (a reader, or a
    kill between two sections, never sees half a file). The temporary file is created exclusively
    and the target is never a link or a device (``gemmlib.core.files.write_atomic``)."""
    for fname, text in (("results.json", json.dumps(_jsonable(doc), indent=2)),
                        ("results.csv", to_csv(results)),
                        ("report.md", "\n".join(md).rstrip() + "\n")):
        write_atomic(out / fname, text, flag=f"the report's {fname}")




def _charts_bench() -> Any:
    return charts_bench


def _save_chart(chart: Any, stem: Path) -> tuple[str, str]:
    return save_chart(chart, stem)
