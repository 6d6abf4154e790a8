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

``--time-budget`` is ONE deadline (:class:`Budget`): a section not started by then is skipped. Every
section whose ``report_section`` takes a ``deadline`` keyword gets its own :class:`Share` of it — what is
left, divided among the sections still to run (one that ends early leaves the rest to the later ones) —
plans its points within it (``plan.fit``; the points a target is judged on are kept) and hands it to every
run it starts, which checks it before each row. What a section left out (its ``left_out``, and every row
its share stopped) is named in results.json (``left_out``), report.md and the progress output. A section that takes ``keep`` may call
``keep(results, markdown)`` with what it has finished so far (the multi-GPU sections do, after each
rank count or collective size): the files are rewritten at once, so a report killed inside that
section still has those rows.
"""

from __future__ import annotations

import datetime as _dt
import importlib
import inspect
import json
import os
import platform
import re
import stat
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gemmlib.charts import CHART_NOTES, chart_bytes, optional_chart
from gemmlib.charts import bench as charts_bench
from gemmlib.core import format as fmt
from gemmlib.core.errors import InputError
from gemmlib.core.files import check_output_dir, cut, ensure_dir, write_atomic
from gemmlib.core.i18n import N_
from gemmlib.core.results import BenchResult, jsonable, to_csv
from gemmlib.measure import devices, harness, monitor, safety

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


def report_section(device: str, quick: bool, out_dir: Path, progress: Progress = None,
                   deadline: safety.Deadline | None = None) -> dict:
    """The devices section: what was detected, and ceilings measured against the datasheet."""

    found = devices.detect()
    lines = ["| device | name | SMs / threads | memory | capability | catalogue row |",
             "|---|---|---|---|---|---|"]
    for d in found:
        lines.append(f"| {d.kind}:{d.index} | {d.name} | {d.units or '—'} | "
                     f"{fmt.nbytes(d.memory_bytes)} | {d.capability or '—'} | {d.catalogue or '— (' + d.match_note + ')'} |")
    c = devices.measure_ceilings(device, quick=quick, progress=progress, deadline=deadline)
    datasheet = devices.datasheet_for(device, c.device_name) if device != "cpu" else None
    rows = c.rows(datasheet)
    from gemmlib.measure.precision import NO_CEILING_EMULATED, emulated

    for r in rows:  # fp8 off CUDA: a reference kernel's speed, no ceiling (as the Devices page and `devices` say)
        if r["figure"] == "fp8 GEMM" and emulated("fp8", device) and not r["note"]:
            r["note"] = NO_CEILING_EMULATED
    lines += ["", f"Ceilings measured on {c.device_name} (GEMM {c.gemm_size}³ per dtype, "
                  f"device copy of {c.copy_bytes / 1024**2:.0f} MiB), against the datasheet:", "",
              "| figure | measured | datasheet | unit | share | note |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['figure']} | {fmt.number(r['measured'])} | {fmt.number(r['datasheet'] or None)} | "
                     f"{r['unit']} | {fmt.percent(r['share of datasheet'] or None, 0)} | {r['note']} |")
    for d, why in c.notes.items():
        if d not in c.peaks and d != "copy":
            lines.append(f"| {d} GEMM | not run | | | | {why} |")
    chart = optional_chart(lambda: _charts_bench().ceilings_chart(rows)) if rows else None
    charts = {"ceilings": chart} if chart is not None else {}
    # the GEMM rows its share stopped are listed by the report; the copy is a note, not a row
    left_out = ["the device copy (bandwidth ceiling)"] if deadline is not None and \
        c.notes.get("copy") == deadline.reason() else []
    return {"title": "Devices and measured ceilings", "results": list(c.results),
            "markdown": "\n".join(lines), "charts": charts, "ceilings": c.to_dict(), "left_out": left_out}


class Budget(safety.Deadline):
    """The report's ``--time-budget``: one deadline for every section and every run inside them
    (``safety.Deadline``'s interface: ``expired()``, ``remaining()``, ``reason()``), on ``clock``
    (``time.monotonic``; the tests give a fake one)."""

    def __init__(self, seconds: float | None, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(seconds)
        self._clock = clock
        self.start = clock()

    def elapsed(self) -> float:
        return self._clock() - self.start

    def reason(self) -> str:
        return f"skipped: the report's time budget of {self.seconds:g} s was spent (--time-budget)"

    def share(self, name: str, sections_left: int) -> Share:
        """The deadline of the section ``name`` starting now: an equal share of what is left among the
        ``sections_left`` sections still to run, this one included (a section that ends early leaves its rest to
        the ones after it)."""
        return Share(max(0.0, self.remaining()) / max(1, sections_left), self, name)


class Share(Budget):
    """One section's share of the report's :class:`Budget`, from when the section starts, never past the
    report's own deadline. A section plans its points within ``remaining()`` (``plan.fit``: what does not fit is
    left out and named); a row not started by the end of the share is skipped with :meth:`reason`."""

    def __init__(self, seconds: float, report: Budget, name: str) -> None:
        super().__init__(seconds, report._clock)
        self.report, self.name = report, name

    def remaining(self) -> float:
        return min(super().remaining(), self.report.remaining())

    def reason(self) -> str:
        return (f"skipped: the {self.name} section's share ({self.seconds:.0f} s) of the report's time budget of "
                f"{self.report.seconds:g} s was spent (--time-budget)")


def left_out_rows(results: list[BenchResult], why: str) -> list[str]:
    """Each row the section's share stopped (its reason is ``why``), named by what it is and its shape."""
    out = []
    for r in results:
        if not r.supported and r.reason == why:
            shape = ", ".join(f"{k} {v}" for k, v in (r.shape or {}).items() if isinstance(v, (int, float, str)))
            out.append(f"{r.name} ({shape})" if shape else r.name)
    return out


def _section_kwargs(fn: Callable[..., Any], **offered: Any) -> dict[str, Any]:
    """The keywords of ``offered`` that ``fn`` takes (``deadline``, ``keep``)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}
    return {k: v for k, v in offered.items() if k in params}


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


REPORT_FILES = ("report.md", "results.json", "results.csv", "charts")  # what a report writes into its --out
# and the profiler section's Chrome traces, one per attention kind (gemmlib.measure.profiler.report_section)
REPORT_TRACE = re.compile(r"profile_trace_[a-z0-9_]+\.json")


def check_report_folder(out: Path) -> None:
    """Refuse (InputError) an existing ``--out`` that holds anything but a report's own files: a report rewrites those
    (a rerun replaces the last report), and would have mixed its files among a folder's others (nothing is lost)."""
    try:
        others = sorted(p.name for p in out.iterdir() if p.name not in REPORT_FILES and not p.name.startswith(".")
                        and not REPORT_TRACE.fullmatch(p.name))
    except FileNotFoundError:
        return
    except OSError:
        return  # check_output_dir has said what it could not read
    if others:
        names = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
        raise InputError(f"--out {out} holds files that are not a report's ({names}); give an empty or new folder, "
                         "or one that holds only an earlier report (its report.md, results.json, results.csv and "
                         "charts/ are replaced)")
    _refuse_planted(out)


def _refuse_planted(out: Path) -> None:
    """A link (or a folder, a device) in place of a file the report replaces is refused now, with the writer's own
    words: the writer refused it only when the first section's files were written, after that section had run."""
    def lstat(p: Path) -> os.stat_result | None:
        try:
            return os.stat(p, follow_symlinks=False)
        except OSError:
            return None  # not there (or unreadable: the writer says why)

    def refuse(p: Path, flag: str) -> None:
        st = lstat(p)
        if st is None or stat.S_ISREG(st.st_mode):
            return
        if stat.S_ISLNK(st.st_mode):
            raise InputError(N_("{flag} {path} is a symbolic link; refusing to replace it — give the real path"),
                             flag=flag, path=cut(p))
        if stat.S_ISDIR(st.st_mode):
            raise InputError(N_("{flag} {path} is a folder; give a file name"), flag=flag, path=cut(p))
        raise InputError(N_("{flag} {path} is a device or special file, not a regular file; give a file name"),
                         flag=flag, path=cut(p))

    for name in ("report.md", "results.json", "results.csv"):
        refuse(out / name, f"the report's {name}")
    for p in sorted(out.glob("profile_trace_*.json")):
        refuse(p, "the report's trace")
    charts = out / "charts"
    st = lstat(charts)
    if st is not None and stat.S_ISLNK(st.st_mode):
        raise InputError(N_("{flag} {path} is a symbolic link; refusing to follow it — give the real folder"),
                         flag="the report's charts folder", path=cut(charts))
    if st is not None and stat.S_ISDIR(st.st_mode):
        for p in sorted(charts.iterdir()):
            refuse(p, "the report's chart")


def run_report(out_dir: str | Path, *, device: str | None = None, quick: bool = False,
               sections: tuple[str, ...] | None = None, progress: Callable[[str], None] | None = None,
               time_budget_s: float | None = None, clock: Callable[[], float] = time.monotonic) -> dict:
    """Run the sections and write the report files into ``out_dir``. Returns the results.json object.

    ``time_budget_s``: one deadline for the whole report, passed into every section that takes it."""
    out = check_output_dir(out_dir, "--out")  # refuses "" (not "the current folder"), a link, a file
    check_report_folder(out)
    known = [n for n, _ in SECTIONS]
    if sections:
        bad = [s for s in sections if s not in known]
        if bad:
            raise InputError(f"unknown section{'' if len(bad) == 1 else 's'} {', '.join(bad)}; choose from {', '.join(known)}")
    if device is None:
        device = "cuda" if harness.torch_device_available("cuda")[0] else "cpu"
    device = harness.require_device(device)
    ensure_dir(out, "--out")
    ensure_dir(out / "charts", "the report's charts folder", under=out)  # neither through a link
    say = progress or (lambda s: None)
    budget = Budget(time_budget_s, clock)
    deadline = budget if time_budget_s is not None else None  # None: each run keeps the server's own limit
    started = time.time()
    doc: dict[str, Any] = {
        "generated": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "device": device, "device_name": harness.device_name(device), "quick": quick,
        "versions": _versions(), "sections": [],
    }
    gpu_index = 0
    if device == "cuda":  # the driver, cuBLAS, cuDNN, NCCL; each section's clocks before and after
        doc["versions"].update({k: v for k, v in monitor.software_versions().items() if v is not None})
        gpu_index = monitor.nvml_index_for_torch_device()
    md = [f"# GEMM report: {doc['device_name']}", "",
          f"Generated {doc['generated']} with `python -m gemmlib report{' --quick' if quick else ''}` "
          f"on {device}; torch {doc['versions'].get('torch')}, triton {doc['versions'].get('triton')}"
          + (f", CUDA {doc['versions'].get('cuda')}" if doc['versions'].get('cuda') else "") + ".", "",
          "Timings: warm-up, device synchronization, repeated runs, median with p20/p80 "
          "(torch.utils.benchmark on a CPU, triton.testing.do_bench with L2 flush on a GPU); errors are "
          "against float64 references.", ""]
    if device == "cuda":
        v = doc["versions"]
        md += ["Software: " + ", ".join(f"{k} {v[k]}" for k in ("driver", "cuda_driver", "cuda", "cublas", "cudnn",
                                                                 "nccl", "triton") if v.get(k) is not None)
               + f"; persistence mode {'on' if v.get('persistence_mode') else 'off or unknown'}. Each section's "
               "clocks, power, temperature and clock event reasons before and after it are in results.json "
               "(`machine`); a section whose clocks dropped says so below its tables.", ""]
    all_results: list[BenchResult] = []
    chart_notes: set[str] = set()
    partial: dict[str, Any] = {"results": [], "md": []}  # what the running section has kept so far

    def write() -> None:
        """(Re)write results.json, results.csv and report.md with what is done so far: a report
        killed by a time limit keeps every finished section (and what the running one kept), and
        says which one was running."""
        doc["seconds"] = round(time.time() - started, 2)
        notes = sorted(chart_notes | CHART_NOTES)
        if notes:
            doc["chart_notes"] = notes
        _write_files(out, doc, md + partial["md"] + ([""] + [f"*{n}*" for n in notes] if notes else []),
                     all_results + partial["results"])

    write()
    modules = dict(SECTIONS)
    # in the order asked for (a time budget then spends itself on the first named), else the report's own
    order = list(dict.fromkeys(sections) if sections else modules)
    for pos, name in enumerate(order):
        modname = modules[name]
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
            text = str(text)  # "tiling: python_tiled tile 32" from the tiling run: the section is named once
            say(f"{_name}: [{frac:4.0%}] {text[len(_name) + 2:] if text.startswith(f'{_name}: ') else text}")

        def keep(results: list, markdown: str = "", _entry: dict = entry, _name: str = name) -> None:
            """What the section has finished so far: in the files now, replaced by its final result."""
            rows = [r for r in results if isinstance(r, BenchResult)]
            partial["results"] = rows
            partial["md"] = [f"## {_name} (unfinished: the rows so far)", "", str(markdown).strip(), ""]
            _entry["results"] = [r.to_dict() for r in rows]
            say(f"{_name}: kept {len(rows)} row{'' if len(rows) == 1 else 's'} so far")
            write()

        machine = monitor.MachineRecord(gpu_index, enabled=device == "cuda")
        # its share of what is left (None without a budget: each run keeps the server's own limit)
        share = budget.share(name, len(order) - pos) if deadline is not None else None
        if share is not None:
            entry["share_s"] = round(share.seconds, 1)
            say(f"{name}: its share of the time budget is {share.seconds:.0f} s")
        try:
            with machine:
                sec = fn(device, quick, out, prog, **_section_kwargs(fn, deadline=share, keep=keep))
        except Exception as e:  # noqa: BLE001 - one broken section must not lose the others
            if machine.enabled:
                entry["machine"] = machine.to_dict()
            entry.pop("running", None)
            entry["error"] = f"{type(e).__name__}: {e}"
            entry["traceback"] = traceback.format_exc()
            entry["seconds"] = time.time() - t0
            say(f"{name}: FAILED {entry['error']}")
            md += [f"## {name}", "", f"**This section failed:** `{entry['error']}`", ""]
            if partial["results"]:  # what it finished before it failed stays
                all_results.extend(partial["results"])
                md += ["What it finished before:", "", *partial["md"][2:]]
            partial.update(results=[], md=[])
            write()
            continue
        partial.update(results=[], md=[])
        entry.pop("running", None)
        if machine.enabled:
            entry["machine"] = machine.to_dict()
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
        # what its share could not hold: points its plan left out, and rows its share stopped
        cut = [str(x) for x in sec.get("left_out", ())] + (left_out_rows(results, share.reason()) if share else [])
        if cut:
            entry["left_out"] = cut
            say(f"{name}: cut to fit its share of the time budget; left out: {'; '.join(cut)}")
        body = str(sec.get("markdown", "")).strip()
        if not body.startswith("#"):
            md += [f"## {entry['title']}", ""]
        md += [body, ""]
        if cut:
            md += [f"*Cut to fit its share ({share.seconds:.0f} s) of the report's time budget of {time_budget_s:g} s; "
                   f"left out: {'; '.join(cut)}.*" if share else f"*Left out: {'; '.join(cut)}.*", ""]
        if machine.flags:  # the figures above may be below what this GPU does: say why
            md += ["**Machine state:** " + "; ".join(machine.flags) + ".", ""]
        entry["charts"] = {}
        for cname, chart in (sec.get("charts") or {}).items():
            safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in f"{name}_{cname}")
            try:
                data, suffix, note = chart_bytes(chart)  # rendered in memory, written by the one writer
            except Exception as e:  # noqa: BLE001
                entry["charts"][cname] = f"failed: {type(e).__name__}: {e}"
                continue
            rel = f"charts/{safe}{suffix}"
            write_atomic(out / rel, data, flag="the report's chart", under=out)  # a planted link: InputError
            entry["charts"][cname] = rel
            if note:
                chart_notes.add(note)
            md += [f"![{cname}]({rel})" if rel.endswith(".png") else f"[{cname}]({rel})", ""]
        if not sec.get("skipped"):  # a skipped section has said so: "done" would contradict it
            say(f"{name}: done in {entry['seconds']:.1f} s")
        write()
    write()
    return doc


def _write_files(out: Path, doc: dict, md: list[str], results: list[BenchResult]) -> None:
    """Write the three report files, each through a temporary file and a rename (a reader, or a
    kill between two sections, never sees half a file). The temporary file is created exclusively
    and the target is never a link or a device (``gemmlib.core.files.write_atomic``)."""
    for fname, text in (("results.json", json.dumps(jsonable(doc), indent=2)),
                        ("results.csv", to_csv(results)),
                        ("report.md", "\n".join(md).rstrip() + "\n")):
        write_atomic(out / fname, text, flag=f"the report's {fname}", under=out)




def _charts_bench() -> Any:
    return charts_bench

