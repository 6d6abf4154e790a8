"""`python -m gemmlib devices`: this machine's CPU and GPUs, their catalogue rows and measured ceilings.

Examples::

    python -m gemmlib devices                 # table
    python -m gemmlib devices --json          # one JSON object
    python -m gemmlib devices --light         # no torch: /proc/cpuinfo and NVML only
    python -m gemmlib devices --measure       # also measure GEMM/copy ceilings on the best device
"""

from __future__ import annotations

import argparse
import json

from gemmlib.cli.common import say_working
from gemmlib.cli.running import run_job
from gemmlib.core import ceilings, machine
from gemmlib.core import format as fmt
from gemmlib.core.errors import InputError
from gemmlib.core.files import private_dir
from gemmlib.core.hardware import CATALOGUE
from gemmlib.measure import devices, harness


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--light", action="store_true", help="detect without importing torch (CPU + NVML)")
    parser.add_argument("--measure", action="store_true",
                        help="measure ceilings: a large GEMM per dtype and a device copy")
    parser.add_argument("--device", default=None,
                        help="with --measure: the device to measure, cpu or cuda (default: cuda if present, else cpu)")
    parser.add_argument("--quick", action="store_true",
                        help="with --measure: a smaller, faster ceiling measurement (GEMM 512³ on a CPU)")


def _peaks(hw) -> dict:
    if hw is None:
        return {}
    return {"name": hw.name, "peaks_tflops": {d: p / 1e12 for d, p in hw.peaks},
            "bandwidth_tbs": hw.bandwidth / 1e12, "sms": hw.sms, "source": hw.source}


def _per_unit(peaks: dict[str, str]) -> str:
    """"fp32 0.2, bf16 0.05 TFLOP/s; int8 0.2 TOP/s": int8 counts operations, not floating-point ones."""
    flops = ", ".join(f"{k} {v}" for k, v in peaks.items() if k != "int8")
    parts = [f"{flops} TFLOP/s"] if flops else []
    return "; ".join(parts + ([f"int8 {peaks['int8']} TOP/s"] if "int8" in peaks else []))


def run(args: argparse.Namespace) -> int:

    if args.light and args.measure:
        raise InputError("--light cannot measure (measuring needs torch); drop one of them")
    if args.device is not None and args.device.strip().lower() not in {"cpu", "cuda", "mps"}:
        raise InputError(f"unknown device {args.device!r}; use cpu or cuda")
    given = [f for f, v in (("--device", args.device is not None), ("--quick", args.quick)) if v]
    if given and not args.measure:  # they choose what --measure measures: alone they would do nothing
        raise InputError(f"{' and '.join(given)} only appl{'ies' if len(given) == 1 else 'y'} to --measure: add "
                         f"--measure, or leave {'it' if len(given) == 1 else 'them'} out to list the devices")
    if args.measure:  # the run keeps its ceilings in the cache folder: one it cannot use is the error, said before
        private_dir()  # the listing reads that folder (whose warning would say the same fact first)
    if args.light:
        found = machine.light_summary()
    else:
        say_working("detecting this machine's devices (importing torch: a few seconds) …")
        found = [d.to_dict() for d in devices.detect()]
    for d in found:
        d["datasheet"] = _peaks(CATALOGUE.get(d["catalogue"])) if d.get("catalogue") else {}
    measured = {k: c.to_dict() for k, c in ceilings.all_ceilings().items()}
    if args.measure:
        dev = args.device or ("cuda" if harness.torch_device_available("cuda")[0] else "cpu")
        c = run_job(devices.SPEC, devices.CeilingsConfig(dev.strip().lower(), quick=args.quick), quiet=args.json)
        saved = ceilings.save_ceilings(c) is not None  # not kept: its reason is a warning on stderr
        measured[c.key] = c.to_dict()
    try:
        where = str(ceilings.ceilings_path())
    except InputError as e:
        where = f"(not saved: {e})"
    out = {"devices": found, "measured": measured, "ceilings_file": where}
    if args.measure:  # whether this measurement was written to ceilings_file (a read-only policy, a bound: not)
        out["saved"] = saved
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    for d in found:
        mem = fmt.nbytes(d.get("memory_bytes") or None)
        units = d.get("units") or "?"
        label = ("thread" if units == 1 else "threads") if d["kind"] == "cpu" else ("SM" if units == 1 else "SMs")
        cap = f", compute capability {d['capability']}" if d.get("capability") else ""
        print(f"{d['kind']}:{d['index']}  {d['name']}  ({units} {label}, {mem}{cap})")
        if d.get("catalogue"):
            ds = d["datasheet"]
            peaks = _per_unit({k: f"{v:g}" for k, v in ds["peaks_tflops"].items()})
            print(f"    catalogue: {ds['name']}: {peaks}; {ds['bandwidth_tbs']:g} TB/s")
        if d.get("match_note"):
            print(f"    note: {d['match_note']}")
    for key, c in measured.items():
        peaks = _per_unit({k: fmt.number(v / 1e12, 3) for k, v in c["peaks"].items()})
        bw = f"; copy {fmt.si(c['bandwidth'], 'B/s')}" if c.get("bandwidth") else ""
        print(f"measured {key}: {peaks}{bw}  (GEMM {c['gemm_size']}³)")
        if "fp8" in c["peaks"] and c.get("device") != "cuda":  # a reference kernel's speed, no ceiling
            from gemmlib.measure.precision import NO_CEILING_EMULATED, emulated

            if emulated("fp8", c.get("device", "")):
                print(f"    note: fp8: {NO_CEILING_EMULATED}")
        for dt, why in (c.get("notes") or {}).items():  # what was not measured, and why
            print(f"    note: {dt}: not measured — {why}")
    return 0
