"""`python -m gemmlib validate`: a real forward pass against the datasheet and the calibrated estimates.

Examples::

    python -m gemmlib validate                                   # llama-3-8b ÷ 16, 2 layers on a CPU
    python -m gemmlib validate --device cuda --preset llama-3-8b --scale 1 --layers 4 --seq-len 2048 --json

Builds a random-weight model of the preset (scaled to fit), times its prefill and its decode steps
(KV cache) with the harness, and prints the measured time beside the datasheet estimate and the
calibrated one (``calibrate`` first; without a saved calibration the calibrated column is empty),
with the error of each, per op group and in total. ``--json`` prints ``prefill`` and ``decode``,
each with ``measured_s``, ``estimated_s`` and ``calibrated_s`` (and their errors and groups).

``--published`` runs nothing: it estimates every published measurement in ``benchmarks/published/``
from the facts of its set-up (:mod:`gemmlib.llm.published`) and prints estimate, measured and error per
row, and the median and worst |error| for training and inference. That branch imports nothing from
``gemmlib.measure``. ``--published --json`` prints ``{"rows": [...], "summary": {...}, "bad_files": [...]}``.
"""

from __future__ import annotations

import argparse
import json
import sys

from gemmlib.core import format as fmt


def add_arguments(p: argparse.ArgumentParser) -> None:
    from gemmlib.cli.calibrate import add_model_arguments

    add_model_arguments(p)
    p.add_argument("--published", action="store_true",
                   help="estimate every published measurement in benchmarks/published/ from its set-up and print "
                        "the errors (runs nothing)")
    p.add_argument("--published-dir", default=None, metavar="DIR",
                   help="with --published: another folder of measurement files")
    p.add_argument("--dtype", default=None, help="fp32, bf16 or fp16 (default fp32 on a CPU, bf16 on a GPU)")
    p.add_argument("--efficiency", type=float, default=1.0,
                   help="the datasheet estimate's efficiency, as `estimate --efficiency` (default 1.0)")
    p.add_argument("--min-run-time", type=float, default=0.5, help="seconds of timing per phase (default 0.5)")
    p.add_argument("--calibrate", action="store_true", help="calibrate on the same model first")


def _s(x: float | None) -> str:
    return fmt.duration(x)  # one formatter (gemmlib.core.format)


def _e(x: float | None) -> str:
    return "—" if x is None else f"{x:+.0%}"


def render(v: dict) -> str:
    """The text table of a validation's data (``Validation.to_dict()`` plus its ``table`` rows)."""
    lines = [f"validate  {v['model']}", f"on        {v['device_name']}",
             f"datasheet {v['datasheet']} at efficiency {v['efficiency']:g}", f"calibrated {v['calibration']}", ""]
    head = ["phase", "group", "measured", "datasheet", "error", "calibrated", "error"]
    rows = [[r["phase"], r["group"], _s(r["measured_s"]), _s(r["estimated_s"]), _e(r["estimated_error"]),
             _s(r["calibrated_s"]), _e(r["calibrated_error"])] for r in v["table"]]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    lines.append("  ".join(h.ljust(w) if i < 2 else h.rjust(w) for i, (h, w) in enumerate(zip(head, widths, strict=True))))
    for r in rows:
        lines.append("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))))
    lines += ["", *[f"note: {n}" for n in v["notes"]]]
    return "\n".join(lines)


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:+.0%}"


def _published_line(cells: list[str], widths: list[int]) -> str:
    return "  ".join(c.ljust(w) if i in (0, 1, 5) else c.rjust(w)
                     for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()


def render_published(rows, bad: list[str], summary: dict) -> str:
    """The published table as text: one line per measurement, then the medians and worst errors."""
    lines = []
    for kind in ("training", "inference"):
        mine = [r for r in rows if r.kind == kind]
        if not mine:
            continue
        lines.append(f"{kind.upper()}")
        head = ["id", "metric", "measured", "estimate", "error", "set-up as estimated"]
        body = [[r.id, f"{r.metric} ({r.unit})", fmt.number(r.measured, 4),
                 "—" if r.estimate is None else fmt.number(r.estimate, 4), _pct(r.error),
                 r.setup if r.estimate is not None else f"not estimated: {r.problem.split('; ')[0]}"] for r in mine]
        widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
        lines += [_published_line(cells, widths) for cells in (head, *body)]
        s = summary[kind]
        lines.append(f"{kind}: {s['estimated']} of {s['rows']} estimated; median |error| "
                     f"{'—' if s['median_abs_error'] is None else format(s['median_abs_error'], '.0%')}, worst "
                     f"{'—' if s['worst_abs_error'] is None else format(s['worst_abs_error'], '.0%')}")
        lines.append("")
    for b in bad:
        lines.append(f"bad file: {b}")
    return "\n".join(lines).rstrip()


def run_published(args: argparse.Namespace) -> int:
    """``validate --published``: every published measurement against its estimate (no measuring)."""
    from gemmlib.cli.common import say_working
    from gemmlib.llm.published import DEFAULT_DIR, table

    folder = getattr(args, "published_dir", None) or DEFAULT_DIR
    say_working(f"estimating every published measurement in {folder} (a few seconds) …")
    rows, bad, summary = table(folder)
    if args.json:
        sys.stdout.write(json.dumps({"rows": [r.to_dict() for r in rows], "summary": summary, "bad_files": bad},
                                    allow_nan=False) + "\n")
    else:
        sys.stdout.write(render_published(rows, bad, summary) + "\n")
    return 0


def _live_flags_given(args: argparse.Namespace) -> list[str]:
    """The live validation's flags set to other than their defaults (``--published`` measures nothing: they would do
    nothing)."""
    p = argparse.ArgumentParser()
    add_arguments(p)
    defaults = vars(p.parse_args([]))
    return [f"--{k.replace('_', '-')}" for k, v in defaults.items()
            if k not in ("published", "published_dir", "json") and getattr(args, k, v) != v]


def run(args: argparse.Namespace) -> int:
    from gemmlib.core.errors import InputError
    from gemmlib.core.i18n import N_

    if getattr(args, "published", False):
        given = _live_flags_given(args)
        if given:
            raise InputError(N_("{flags}: the live validation's flags, not --published's (which estimates the published "
                                "measurements and runs nothing)"), flags=", ".join(given))
        return run_published(args)
    if getattr(args, "published_dir", None) is not None:
        raise InputError(N_("--published-dir is a folder for --published; add --published to estimate its measurements"))
    from gemmlib.cli.calibrate import run_from_args
    from gemmlib.cli.profile import resolve_device
    from gemmlib.cli.running import run_job
    from gemmlib.core.calibration import save_calibration
    from gemmlib.measure import calibrate as cb

    args.device = resolve_device(args.device)
    if not 0 < args.efficiency <= 1:
        raise InputError(f"--efficiency must be in (0, 1], got {args.efficiency}")
    if not 0 < args.min_run_time <= 30:
        raise InputError(f"--min-run-time must be in (0, 30] seconds, got {args.min_run_time}")
    run_ = run_from_args(args, args.dtype)
    # in a worker process, under the server's caps and in the machine's queue, like every benchmark
    if args.calibrate:
        out = run_job(cb.SPEC, cb.CalibrationConfig(run_, args.device, validate=True, threads=args.threads,
                                                    validate_run_time=args.min_run_time,
                                                    efficiency=args.efficiency), quiet=args.json)
        save_calibration(out.calibration)
    else:
        out = run_job(cb.SPEC, cb.CalibrationConfig(run_, args.device, calibrate=False, validate=True,
                                                    validate_run_time=args.min_run_time, threads=args.threads,
                                                    efficiency=args.efficiency), quiet=args.json)
    v = {**out.validation.to_dict(), "table": cb.validation_table(out.validation)}
    if not args.json:
        sys.stdout.write(render(v) + "\n")
    else:
        sys.stdout.write(json.dumps({k: x for k, x in v.items() if k != "table"}) + "\n")
    return 0
