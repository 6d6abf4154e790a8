"""Hostile visitor: bad input on every surface, cancelled runs, and the server's memory over many views.

Prints, per surface, how many bad inputs were tried and how many were handled cleanly (a clear message:
exit status 2 and one line for the CLI, an InputError for the parsers, a page without an exception box
or a traceback, no image fetched); the longest time the machine's benchmark lock stayed held after a
run was cancelled (tab closed, the page's Stop); and the Streamlit server's resident memory over
successive page views. Exits 1 when anything was not handled cleanly.

    python benchmarks/bench_hostile.py                       # everything: ~6 minutes on 2 cores
    python benchmarks/bench_hostile.py --views 100 --cancels 6
    python benchmarks/bench_hostile.py --skip-browser        # CLI, parsers, files only (no server)

Targets (issue 17): every bad input handled cleanly; the lock free within 5 s of a cancel (1 s after
the worker is killed); server RSS flat over 100 views (growth under 100 MB once warm). Issue 26 adds:
output paths (a 300-character name, "", links for --out, charts/ and a chart file: nothing written
through them), planted lock links, the machine policy (another working folder, a loosening
environment, a policy others can change), every numeric flag fed 0/-1/inf/nan/1e400, 10,000-character
values (echoed cut), a forged ceilings file, and on the pages (AppTest) a misconfigured cache folder
and "Share with the class" twice; one queue for the machine (a CLI run with another GEMM_CACHE_DIR waits
behind a class's run, a queue folder others could empty is refused, a planted hard link), the visitor
limits (a second tab, a third browser at one address), and admission under load (the issue's
Precision link and profile run with two busy processes beside them, twice each: refused up front,
finished, or stopped with its rows — never killed with nothing). A CLI answer is clean when it exits 2 with one line on stderr, no
traceback, no word longer than 90 characters (an echoed value is cut) and at most 1,000 characters.
Needs Debian's /usr/bin/chromium and playwright for Python for the browser parts.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from unittest.mock import patch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from gemmlib.core.errors import InputError  # noqa: E402

TALLY: dict[str, list[int]] = {}  # surface -> [tried, clean]
FAILURES: list[str] = []


def _count(surface: str, ok: bool, what: str) -> None:
    t = TALLY.setdefault(surface, [0, 0])
    t[0] += 1
    t[1] += bool(ok)
    if not ok:
        FAILURES.append(f"{surface}: {what}")


# --------------------------------------------------------------------------- the command line
def _cli_cases(tmp: Path) -> list[list[str]]:
    fifo = tmp / "fifo"
    os.mkfifo(fifo)
    (tmp / "deep.json").write_text("[" * 100_000)
    (tmp / "bigint.json").write_text('{"model_type": "llama", "hidden_size": ' + "9" * 5000 + "}")
    (tmp / "nan.json").write_text('{"model_type": "llama", "hidden_size": NaN}')
    (tmp / "binary.json").write_bytes(os.urandom(4096))
    (tmp / "big.json").write_bytes(b" " * 2_000_000)
    (tmp / "real.csv").write_text("keep")
    (tmp / "link.csv").symlink_to(tmp / "real.csv")
    est = ["estimate", "--config"]
    prec = ["bench", "precision", "--device", "cpu", "--size", "64", "--dtypes", "fp32", "--min-run-time", "0.05"]
    prof = ["profile", "--device", "cpu", "--hidden", "64", "--heads", "4", "--seq-len", "16", "--steps", "1"]
    cases = [[*est, p] for p in ("/dev/zero", "/dev/urandom", str(fifo), "/tmp", "/nonexistent",
                                 *(str(tmp / f) for f in ("deep.json", "bigint.json", "nan.json", "binary.json",
                                                          "big.json")))]
    cases += [[*prec, "--csv", p] for p in ("/proc/version", "/dev/full", str(tmp), str(tmp / "link.csv"),
                                             "/nonexistent/x.csv")]
    cases += [[*prof, "--trace", p] for p in (str(tmp), "/proc/self/t.json", str(tmp / "link.csv"), "/dev/null")]
    cases += [["report", "--out", p, "--quick"] for p in (str(tmp / "real.csv"), "/proc/sys/x")]
    for bench in ("tiling", "batching", "precision"):
        cases += [["bench", bench, "--device", "cpu", "--min-run-time", v] for v in ("inf", "nan", "-1", "1e9")]
    cases += [["profile", "--device", "cpu", "--layers", "10000"], ["profile", "--device", "cpu", "--steps", "10**9"],
              ["bench", "tiling", "--device", "cpu", "--size", "8192"],
              ["bench", "batching", "--device", "cpu", "--m", "8192", "--k", "8192", "--n", "8192", "--batches", "1"],
              ["bench", "precision", "--device", "cpu", "--size", "8192"],
              ["bench", "tiling", "--device", "cpu", "--size", "-5"], ["bench", "batching", "--batches", "0,x"],
              ["bench", "precision", "--m", "99999999999999999999"], ["estimate", "--preset", "x" * 10_000],
              ["estimate", "--layers", "1e400"], ["devices", "--measure", "--device", "tpu"]]
    model = ["estimate", "--preset", "llama-3-8b", "--tp", "2"]  # issue 26 item 11, as reported
    cases += [[*model, "--intra-latency-us", "inf"], [*model, "--intra-busbw", "inf"],
              ["bench", "tp", "--nproc", "2", "--timeout", "0"], ["bench", "tp", "--nproc", "2", "--scale", "0"],
              ["bench", "tp", "--nproc", "2", "--seq-len", "0"], ["bench", "collective", "--nproc", "2", "--timeout",
                                                                  "1e400"]]
    return cases


def _clean_cli(p: subprocess.CompletedProcess, progress: str = "") -> bool:
    """Exit 2, one line on stderr (progress lines starting with ``progress`` aside), no traceback, no
    echoed value longer than 90 characters, at most 1,000 characters."""
    lines = [ln for ln in p.stderr.splitlines() if not ln.startswith("USDT") and not (progress and
                                                                                    ln.startswith(progress))]
    return (p.returncode == 2 and len(lines) == 1 and "Traceback" not in p.stderr and len(lines[0]) <= 1000
            and max((len(w) for w in lines[0].split()), default=0) <= 90)


def cli_surface(tmp: Path) -> None:
    for argv in _cli_cases(tmp):
        t0 = time.perf_counter()
        try:
            p = subprocess.run([sys.executable, "-m", "gemmlib", *argv], cwd=ROOT, capture_output=True, text=True,
                               timeout=60)
        except subprocess.TimeoutExpired:
            _count("CLI flags and files", False, f"{argv}: no answer in 60 s")
            continue
        ok = _clean_cli(p)
        _count("CLI flags and files", ok,
               f"{' '.join(a[:40] for a in argv)}: rc {p.returncode}, {len(p.stderr.splitlines())} lines, "
               f"{time.perf_counter() - t0:.1f} s: {p.stderr[-300:]!r}")


# --------------------------------------------------------------------------- the parsers behind the pages
def _clean(fn: Callable[[], object]) -> bool:
    try:
        fn()
    except InputError:
        return True
    except Exception:  # noqa: BLE001 - what a visitor would see as "Something went wrong"
        return False
    return True


def parser_surfaces() -> None:
    from gemmlib.charts.roofline import results_from_json
    from gemmlib.explain import reference as ref
    from gemmlib.llm.hf import parse_config_json

    hostile_json = [b"[" * 100_000, b'{"a":' * 50_000, b'{"model_type": "llama", "hidden_size": ' + b"9" * 5000 + b"}",
                    b'{"model_type": "llama", "hidden_size": 1e999}', b"NaN", b"\xff\xfe\x00", b"", b" " * 10,
                    b'{"model_type": ["llama"]}', b'{"model_type": "llama", "num_hidden_layers": true}',
                    b"x" * 3_000_000, b'{"model_type": "gpt2", "n_embd": -1}', json.dumps(
                        {"model_type": "llama", "hidden_size": int("9" * 4000), "num_attention_heads": 1,
                         "num_hidden_layers": 1, "intermediate_size": 1, "vocab_size": 1}).encode()]
    for data in hostile_json:
        _count("config.json upload (Estimator)", _clean(lambda d=data: parse_config_json(d)), repr(data[:40]))
    rows = [{"bench": "x", "name": "y", "device": "cpu", "dtype": "fp32", "flops": v, "bytes": 1}
            for v in (1e999, -1, "1" * 5000, None, [], {"a": 1})]
    hostile_results = hostile_json + [json.dumps({"results": [r]}).replace('1e999', '1e999').encode() for r in rows]
    hostile_results += [b'{"sections": [{"results": [1, 2]}]}', b'{"results": "x"}', b"[[[[[]]]]]"]
    for data in hostile_results:
        _count("results upload (Roofline)", _clean(lambda d=data: results_from_json(d)), repr(data[:40]))
    texts = ["1 x", "1e999 1", "nan nan", "[[1,2],[3]]", "[" * 10_000, "1 " * 100_000, "\x00", "1,,2",
             "[[1e308, 1e308]]", "-" * 1000, "![x](http://example.invalid/a.png)", "1; 2; " * 10_000]
    for t in texts:
        _count("matrix text (Accumulate)", _clean(lambda t=t: ref.make_problem(t, "1\n1")), repr(t[:40]))


def secrets_and_cache_surfaces(tmp: Path) -> None:
    from gemmlib.core import ceilings
    from gemmlib.measure import safety

    for i, text in enumerate(["GEMM_MAX_DIM = = 1", "GEMM_MAX_DIM 1", "GEMM_MAX_DIM = 'x'", "GEMM_MAX_DIM = 1e400",
                              "GEMM_TIME_LIMIT_S = -1", "GEMM_MAX_BYTES = nan", "[GEMM", "\xff", "GEMM_MAX_DIM = inf"]):
        f = tmp / f"secrets{i}.toml"
        f.write_text(text, encoding="utf-8", errors="surrogateescape")
        try:
            safety.limits(files=[f])
            ok = False  # a broken file must be an error, not silently ignored
        except InputError:
            ok = True
        except Exception:  # noqa: BLE001
            ok = False
        _count("secrets files", ok, text)
    # planted cache: an open folder, a link for the file, fake entries in our own file
    with patch.dict(os.environ):  # GEMM_CACHE_DIR back as it was, set or not
        try:
            for plant in ("open folder", "link", "fake entries", "huge file", "not JSON"):
                ceilings.clear_ceilings()
                d = Path(tempfile.mkdtemp(prefix="plant-", dir=tmp))
                os.environ["GEMM_CACHE_DIR"] = str(d)
                victim = tmp / "victim"
                victim.write_text("keep")
                fake = {"cuda:FAKE": {"device": "cuda", "device_name": "![x](http://example.invalid/a.png) FAKE",
                                      "peaks": {"bf16": 1e18}, "bandwidth": 1e12}}
                if plant == "open folder":
                    os.chmod(d, 0o777)
                    (d / "ceilings.json").write_text(json.dumps(fake))
                elif plant == "link":
                    (d / "ceilings.json").symlink_to(victim)
                elif plant == "fake entries":
                    (d / "ceilings.json").write_text(json.dumps(fake))
                elif plant == "huge file":
                    (d / "ceilings.json").write_bytes(b" " * 5_000_000)
                else:
                    (d / "ceilings.json").write_text("[" * 100_000)
                try:
                    shown = ceilings.all_ceilings()
                    ceilings.save_ceilings(ceilings.Ceilings("cpu", "test CPU", {"fp32": 1e11}, 1e10))
                    ok = "cuda:FAKE" not in shown and victim.read_text() == "keep"
                except Exception:  # noqa: BLE001
                    ok = False
                _count("planted cache files", ok, plant)
        finally:
            ceilings.clear_ceilings()


# --------------------------------------------------------------------------- issue 26: paths, policy, numbers
def _run(argv: list[str], *, env: dict | None = None, cwd: Path = ROOT, timeout: float = 120):
    full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "gemmlib", *argv], cwd=cwd, env=full, capture_output=True,
                          text=True, timeout=timeout)


def paths_surface(tmp: Path) -> None:
    """Output paths and planted links: exit 2 with one line, and nothing written through a link."""
    surface = "output paths and planted links"
    base = ["report", "--quick", "--sections", "devices", "--device", "cpu"]
    work = tmp / "paths"
    work.mkdir()
    (work / "real").mkdir()
    (work / "outlink").symlink_to(work / "real")
    for out in ("x" * 300, "", "outlink"):
        p = _run([*base, "--out", out], cwd=work)
        _count(surface, _clean_cli(p) and not list((work / "real").iterdir()), f"report --out {out[:20]!r}")
    victim = work / "victim.png"
    victim.write_bytes(b"keep")
    d = work / "d"
    (d / "charts").mkdir(parents=True)
    (d / "charts" / "devices_ceilings.png").symlink_to(victim)
    p = _run([*base, "--out", str(d)], cwd=work, timeout=300)  # measures, then refuses the chart's link
    _count(surface, _clean_cli(p, "devices: ") and victim.read_bytes() == b"keep", "a chart file link in --out")
    (d / "charts" / "devices_ceilings.png").unlink()
    (d / "charts").rmdir()
    (work / "elsewhere").mkdir()
    (d / "charts").symlink_to(work / "elsewhere")
    p = _run([*base, "--out", str(d)], cwd=work)
    _count(surface, _clean_cli(p) and not list((work / "elsewhere").iterdir()), "a charts/ link in --out")
    from gemmlib.measure.runqueue import machine_queue_dir

    queue = machine_queue_dir()  # the bench's own machine queue (main's policy names it)
    for lock, plant in (("run.lock", "symlink"), ("queue.lock", "symlink"), ("run.lock", "hard link")):
        (queue / lock).unlink(missing_ok=True)
        (queue / lock).symlink_to(victim) if plant == "symlink" else os.link(victim, queue / lock)
        p = _run(["bench", "precision", "--device", "cpu", "--size", "64", "--dtypes", "fp32"],
                 env={"GEMM_CACHE_DIR": str(tmp / f"cache-{lock}")})
        _count(surface, _clean_cli(p) and victim.read_bytes() == b"keep", f"a planted {lock} {plant}")
        (queue / lock).unlink()


def policy_surface(tmp: Path) -> None:
    """One policy for the machine (GEMM_POLICY_FILE here: this machine has no /etc/gemmlib/policy.toml)."""
    from gemmlib.core import policy

    surface = "machine policy"
    if policy.MACHINE_POLICY.exists():
        print(f"  (a machine policy exists at {policy.MACHINE_POLICY}: the policy cases are left out)")
        return
    pol = tmp / "policy" / "policy.toml"
    pol.parent.mkdir(mode=0o755)
    pol.write_text(f'GEMM_CLASSROOM = true\nGEMM_QUEUE_DIR = "{tmp / "machine-queue"}"\n')
    os.chmod(pol, 0o644)
    elsewhere = tmp / "policy-elsewhere"
    (elsewhere / ".streamlit").mkdir(parents=True)
    (elsewhere / ".streamlit" / "secrets.toml").write_text("GEMM_CLASSROOM = false\nGEMM_MAX_DIM = 16384\n")
    argv = ["bench", "precision", "--device", "cpu", "--size", "4096"]
    for what, env in (("another folder", {}), ("a loosening environment", {"GEMM_MAX_DIM": "16384",
                                                                            "GEMM_CLASSROOM": "0",
                                                                            "GEMM_MAX_CPU_GFLOP": "1e6"})):
        p = _run(argv, env={"GEMM_POLICY_FILE": str(pol), **env}, cwd=elsewhere)
        _count(surface, _clean_cli(p) and "cap of 2048" in p.stderr, f"{what}: {p.stderr[-160:]!r}")
    os.chmod(pol, 0o666)
    p = _run(argv, env={"GEMM_POLICY_FILE": str(pol)}, cwd=elsewhere)
    _count(surface, _clean_cli(p) and "changed by others" in p.stderr, "a policy others can change")


def queue_surface(tmp: Path) -> list[str]:
    """Issue 26 items 6 and 7: one queue for the machine, whichever cache folder starts the run, its
    folder checked; one run per browser session and GEMM_MAX_RUNS_PER_ADDRESS per address."""
    import threading

    from gemmlib.core.files import ServerSetupError
    from gemmlib.measure import runqueue

    surface = "one queue, visitor limits"
    notes = []
    q = runqueue.default_queue()
    argv = ["bench", "precision", "--device", "cpu", "--size", "64", "--dtypes", "fp32", "--min-run-time", "0.05"]
    got: dict = {}
    with q.turn("a class's run (session ab12)"):
        t = threading.Thread(target=lambda: got.setdefault("p", _run(argv, env={"GEMM_CACHE_DIR": str(tmp / "other")})))
        t.start()
        end = time.monotonic() + 60
        while not q.waiting() and time.monotonic() < end:
            time.sleep(0.05)
        waited = [w for w in q.waiting() if "command line" in w]
        time.sleep(0.5)
        still = t.is_alive()
    t.join(120)
    p = got.get("p")
    ok = bool(waited) and still and p is not None and p.returncode == 0
    _count(surface, ok, f"a CLI run with another GEMM_CACHE_DIR waits behind the class's: waited {waited}")
    notes.append(f"a CLI run with another GEMM_CACHE_DIR: {'queued behind the class run, then ran' if ok else 'NOT'}")
    one = runqueue.Visitor.of("browser-1", "10.0.0.7")
    for what, visitor in (("a second tab of the same browser", runqueue.Visitor.of("browser-1", "10.0.0.7")),
                          ("a third browser at one address (limit 2)", runqueue.Visitor.of("browser-3", "10.0.0.7"))):
        refused = False
        with q.turn("tab 1", visitor=one, per_address=2):
            if "third" in what:  # the address's second place, held by another process
                holder = subprocess.Popen([sys.executable, "-c", (
                    f"import sys, time; sys.path.insert(0, {str(ROOT)!r}); from gemmlib.measure.runqueue import "
                    f"Queue, Visitor\nwith Queue({str(q.dir)!r}).turn('tab 2', visitor=Visitor.of('browser-2', "
                    f"'10.0.0.7'), per_address=2): pass")])
                end = time.monotonic() + 30
                while not q.waiting() and time.monotonic() < end:
                    time.sleep(0.05)
            try:
                with q.turn(what, visitor=visitor, per_address=2, timeout_s=0.5):
                    pass
            except runqueue.VisitorLimit:
                refused = not [w for w in q.waiting() if w == what]
            except runqueue.BusyError:
                refused = False
        if "third" in what:
            holder.wait(60)
        _count(surface, refused, what)
    os.chmod(q.dir, 0o777)  # writable by all without the sticky bit
    try:
        runqueue.default_queue()
        ok = False
    except ServerSetupError as e:
        ok = "sticky" in str(e)
    finally:
        os.chmod(q.dir, 0o1777)
    _count(surface, ok, "a queue folder others could empty")
    return notes


def _burners(n: int) -> list[subprocess.Popen]:
    """``n`` processes that keep a core busy each: the load the issue measured under."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def admission_surface(tmp: Path) -> list[str]:
    """Issue 26 item 8, under load (two busy processes on the machine): the issue's Precision link at the
    classroom caps (through the runner, as the page runs it) and ``profile --layers 16 --steps 20 --batch 8``
    at a 20 s limit, each twice. Clean: refused before it starts, with the estimate and the limit; finished;
    or stopped at its limit with the rows it finished — never killed with nothing returned."""
    from gemmlib.core.i18n import Text
    from gemmlib.measure import plan, runner, safety
    from gemmlib.measure import precision as bp

    surface = "admission under load"
    notes = []
    lim = safety.CLASSROOM_LIMITS
    cfg = bp.PrecisionConfig(device="cpu", shapes=((2048, 2048, 256, "2048×2048×256"),),
                             dtypes=tuple(bp.PRECISION_DTYPES), with_quant=True, min_run_time=0.5)
    burn = _burners(2)
    try:
        for attempt in (1, 2):
            est = None
            t0 = time.monotonic()
            try:
                est = plan.admit(bp.SPEC, cfg, lim).seconds
                out = runner.run(bp.SPEC, cfg, lim, owner=Text("the issue's Precision link"), warm=False)
                how = (f"stopped at its limit with {len(out.result)} rows" if out.stopped else
                       f"finished, {len(out.result)} rows")
                ok = True
            except runner.RunStopped as e:
                how, ok = f"NOT clean: {e}", False
            except InputError as e:
                how, ok = f"refused up front: {e}", "limit" in str(e) and "s" in str(e)
            took = time.monotonic() - t0
            estimate = "refused at admission" if est is None else f"estimate {est:.1f} s"
            notes.append(f"Precision link, try {attempt}: {estimate}, {how[:150]} ({took:.1f} s)")
            _count(surface, ok, f"Precision link try {attempt}: {how[:200]}")
        argv = ["profile", "--device", "cpu", "--layers", "16", "--steps", "20", "--batch", "8"]
        for attempt in (1, 2):
            t0 = time.monotonic()
            p = _run(argv, env={"GEMM_TIME_LIMIT_S": "20"}, timeout=300)
            took = time.monotonic() - t0
            last = (p.stderr.strip().splitlines() or [""])[-1]
            ok = (p.returncode == 0) or (_clean_cli(p, "[") and "limit" in last and "nothing it measured" not in last)
            notes.append(f"profile --layers 16 --steps 20 --batch 8, try {attempt}: exit {p.returncode}, "
                         f"{last[:150]} ({took:.1f} s)")
            _count(surface, ok, f"profile try {attempt}: rc {p.returncode}: {last[:200]}")
    finally:
        for b in burn:
            b.kill()
            b.wait()
    return notes


def numbers_surface(tmp: Path) -> None:
    """Every numeric flag of every sub-command fed 0, -1, inf, nan and 1e400 (in-process, nothing runs:
    a value that reaches a benchmark is not clean unless its --help documents it); long values."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    sys.path.insert(0, str(ROOT / "tests" / "cli"))
    from test_hostile_cli import (  # the test's own lists
        DOCUMENTED,
        HOSTILE_NUMBERS,
        SWEEP_BASE,
        _numeric_flags,
    )

    from gemmlib.cli import main
    from gemmlib.measure import runner, safety

    class Started(Exception):
        pass

    def started(*a, **k):
        raise Started

    saved = runner.run, safety.single_flight
    runner.run = safety.single_flight = started
    try:
        for path, action in _numeric_flags():
            flag = action.option_strings[0]
            base = [a.format(tmp=tmp) for a in SWEEP_BASE[path]]
            for value in HOSTILE_NUMBERS:
                err = io.StringIO()
                try:
                    with redirect_stdout(io.StringIO()), redirect_stderr(err):
                        rc = main([*path, *base, f"{flag}={value}"])
                except SystemExit as e:
                    rc = e.code
                except Started:
                    rc = "started"
                except Exception as e:  # noqa: BLE001
                    rc = f"{type(e).__name__}"
                key = (" ".join(path), flag, value)
                ok = rc in (0, "started") if key in DOCUMENTED else rc == 2 and len(err.getvalue().splitlines()) == 1
                _count("numeric flags (0, -1, inf, nan, 1e400)", ok, f"{' '.join(key)}: {rc}")
    finally:
        runner.run, safety.single_flight = saved
    huge = "x" * 10_000
    for argv in (["estimate", "--layers", huge], ["estimate", "--preset", huge], ["estimate", "--mlp", huge],
                 ["estimate", "--unknown", huge], ["bench", "tp", "--nproc", "2", "--dtype", huge],
                 ["bench", "precision", "--device", huge]):
        p = _run(argv, timeout=60)
        _count("10,000-character values", _clean_cli(p), f"{argv[:2]} {argv[2]}: {p.stderr[-160:]!r}")


def forged_ceilings_surface(tmp: Path) -> None:
    """A forged but plausible ceilings.json, mode 0644, in the server's own private folder."""
    from gemmlib.core import ceilings

    with patch.dict(os.environ):  # GEMM_CACHE_DIR back as it was, set or not
        try:
            for name, entry in (("a 50 PFLOP/s CPU", {"device": "cpu", "device_name": "FAST", "peaks": {"fp32": 5e16}}),
                                ("an H200 at 1.3x its datasheet bf16",
                                 {"device": "cuda", "device_name": "NVIDIA H200", "peaks": {"bf16": 1.3 * 989.4e12}}),
                                ("a copy at 100 TB/s on this CPU",
                                 {"device": "cpu", "device_name": "FAST", "peaks": {"fp32": 1e9}, "bandwidth": 9.9e13})):
                d = tmp / f"forged-{len(name)}-{abs(hash(name)) % 1000}"
                d.mkdir(mode=0o700)
                os.environ["GEMM_CACHE_DIR"] = str(d)
                ceilings.clear_ceilings()
                (d / "ceilings.json").write_text(json.dumps({"x": entry}))
                os.chmod(d / "ceilings.json", 0o644)
                _count("forged ceilings", ceilings.all_ceilings() == {}, name)
        finally:
            ceilings.clear_ceilings()


def page_surfaces(tmp: Path) -> None:
    """Pages through Streamlit's AppTest (no browser): a misconfigured cache folder, and sharing twice."""
    import logging

    from streamlit.testing.v1 import AppTest

    from gemmlib.core.results import BenchResult, clear_recorded, recorded

    surface = "pages (AppTest)"
    quiet = {lg: lg.level for lg in (logging.getLogger("gemmlib"), logging.getLogger("gemmlib.app"))}
    for lg in quiet:
        lg.setLevel(logging.CRITICAL)  # the error ids' log lines are expected here
    with patch.dict(os.environ):  # GEMM_CACHE_DIR back as it was, set or not
        try:
            open_cache = tmp / "open-cache"
            open_cache.mkdir()
            os.chmod(open_cache, 0o777)
            os.environ["GEMM_CACHE_DIR"] = str(open_cache)
            at = AppTest.from_file(str(ROOT / "pages" / "7_Tiling.py"), default_timeout=120).run()
            next(b for b in at.button if b.key == "tb_run").click().run()
            shown = " ".join(e.value for e in at.error)
            _count(surface, not at.exception and "error id" in shown and str(open_cache) not in shown
                   and "777" not in shown, f"an open cache folder: {shown[:160]!r}")
            os.environ["GEMM_CACHE_DIR"] = str(tmp / "cache")
            clear_recorded()
            row = BenchResult(bench="tiling", name="torch", device="cpu", device_name="test CPU", dtype="fp32",
                              shape={"m": 64, "n": 64, "k": 64}, flops=2 * 64**3, bytes=3 * 64 * 64 * 4, median_s=1e-4)
            at = AppTest.from_file(str(ROOT / "pages" / "9_Roofline.py"), default_timeout=60)
            at.session_state["_my_results"] = [row]  # kept typed, as ui.keep_results keeps them
            at.run()
            for _ in range(2):
                at.button(key="rf_share").click().run()
            _count(surface, not at.exception and len(recorded()) == 1, f"shared twice: {len(recorded())} rows")
        finally:
            clear_recorded()
            for lg, level in quiet.items():
                lg.setLevel(level)


# --------------------------------------------------------------------------- the browser
QUERIES = {
    "Precision": ["pr_m=1e309", "pr_m=-1", "pr_m=99999999999999999999999", "pr_device=gpu", "pr_time=inf",
                  "pr_set=%3Cscript%3E", "pr_preset=../../etc/passwd&pr_set=LLM%20layer", "pr_batch=nan"],
    "Tiling": ["tb_size=1e309", "ti_m=0", "ti_t=-3", "tb_dtype=fp64", "tw_n0=9999999999&tw_n1=1"],
    "Batching": ["ba_m=1e999", "ba_shape=Custom&ba_k=0", "ba_dtype=int4", "ba_time=-1"],
    "Profiler": ["pf_hidden=7", "pf_layers=10000", "pf_seq=1e309", "pf_device=tpu", "pf_steps=0"],
    "LLM_Estimator": ["le_src=custom&le_layers=1e309", "le_hidden=-5&le_src=custom", "le_gpu=%21%5Bx%5D"],
    "Accumulate": ["acc_src=custom&acc_m=1e309", "acc_alpha=nan", "acc_alpha=inf"],
}


def _page_clean(pg) -> bool:
    from browser_helpers import assert_clean

    try:
        assert_clean(pg, allow_input_errors=True)
        return True
    except AssertionError:
        return False


def browser_surfaces(browser, url: str, tmp: Path, fetched: list[str]) -> None:
    from browser_helpers import open_page

    for path, queries in QUERIES.items():
        for q in queries:
            ctx = browser.new_context()
            pg = ctx.new_page()
            try:
                open_page(pg, url, path, query=q, timeout=90)
                ok = _page_clean(pg)
            except Exception as e:  # noqa: BLE001
                ok, q = False, f"{q}: {type(e).__name__}"
            finally:
                ctx.close()
            _count("query strings", ok, f"/{path}?{q}")
    uploads = {"deep.json": b"[" * 100_000, "bigint.json": b'{"model_type":"llama","hidden_size":' + b"9" * 5000 + b"}",
               "![x](" + url + "/pixel.png).json": b'{"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 4, '
                                                    b'"vocab_size": 10, "n_positions": 32}',
               "binary.json": os.urandom(2048), "nan.json": b'{"model_type":"llama","hidden_size":NaN}'}
    for page_path, label in (("LLM_Estimator", "config.json"), ("Roofline", "results")):
        for name, data in uploads.items():
            f = tmp / "up" / name.replace("/", "_")
            f.parent.mkdir(exist_ok=True)
            f.write_bytes(data)
            ctx = browser.new_context()
            pg = ctx.new_page()
            pg.on("request", lambda r: fetched.append(r.url) if "pixel.png" in r.url else None)
            try:
                open_page(pg, url, page_path, query="le_src=config.json" if page_path == "LLM_Estimator" else "")
                pg.locator('input[type="file"]').first.set_input_files(
                    files=[{"name": name, "mimeType": "application/json", "buffer": data}])
                time.sleep(1.0)
                from browser_helpers import wait_idle
                wait_idle(pg, timeout=90)
                ok = _page_clean(pg) and not fetched
            except Exception as e:  # noqa: BLE001
                ok, name = False, f"{name}: {type(e).__name__}: {str(e)[:100]}"
            finally:
                ctx.close()
            _count(f"file uploads ({label})", ok, f"{page_path}: {name}")


def _workers(parent: int) -> list[int]:
    from gemmlib.measure import runner

    return runner.worker_pids(parent)


def cancels(browser, server, n: int) -> list[tuple[str, float]]:
    """Start a long CPU run, cancel it 1-4 s into the run (close the tab / press Stop), time the lock."""
    from browser_helpers import open_page
    from playwright.sync_api import expect

    from gemmlib.measure.runqueue import Queue

    q = Queue(directory=Path(server._cache_dir) / "queue-benchmarks")
    query = "pr_device=cpu&pr_set=Custom&pr_m=1024&pr_n=1024&pr_k=1024&pr_time=2.0&pr_quant=true"
    out = []
    for i in range(n):
        how = ("tab closed", "Stop pressed")[i % 2]
        ctx = browser.new_context()
        pg = ctx.new_page()
        open_page(pg, server.url, "Precision", query=query)
        pg.get_by_role("button", name="Run the benchmark").click()
        expect(pg.get_by_text(re.compile("Running on cpu"))).to_be_visible(timeout=90_000)
        time.sleep(random.uniform(1, 4))
        t0 = time.monotonic()
        if how == "tab closed":
            ctx.close()
        else:
            pg.get_by_role("button", name=re.compile("Stop this run")).click()
        while q.running() is not None or _workers(server.proc.pid):
            if time.monotonic() - t0 > 60:
                break
            time.sleep(0.02)
        out.append((how, time.monotonic() - t0))
        if how != "tab closed":
            ctx.close()
    return out


# Issue 26 item 1: shareable links whose text once built a per-layer string before any bound (a 1e9-layer
# sliding pattern cost the server 1.9 GB per view). Each is opened ten times; clean when every view shows
# the page (an input error allowed, no exception) and the server's RSS grew less than 100 MiB over the ten.
MEMORY_LINKS = ("le_src=custom&le_sw=4096&le_swp=1000000000:1", "le_src=custom&le_sw=4096&le_swp=20000000000:1",
                "le_src=custom&le_layers=10000&le_sw=8&le_swp=alternate&le_hidden=64&le_heads=4")


def memory_links(browser, server) -> list[str]:
    from browser_helpers import open_page

    lines = []
    ctx = browser.new_context()  # the page's own first view first (its modules, caches): not the links' cost
    try:
        open_page(ctx.new_page(), server.url, "LLM_Estimator", timeout=120)
    finally:
        ctx.close()
    for q in MEMORY_LINKS:
        before, ok = _rss(server.proc.pid), True
        for _ in range(10):
            ctx = browser.new_context()
            try:
                pg = ctx.new_page()
                open_page(pg, server.url, "LLM_Estimator", query=q, timeout=120)
                ok = _page_clean(pg) and ok
            except Exception:  # noqa: BLE001
                ok = False
            finally:
                ctx.close()
        grew = (_rss(server.proc.pid) - before) / 2**20
        ok = ok and grew < 100
        _count("links that cost memory", ok, f"/LLM_Estimator?{q}: {grew:+.0f} MiB")
        lines.append(f"  /LLM_Estimator?{q}: 10 views, server RSS {before / 2**20:.0f} -> "
                     f"{before / 2**20 + grew:.0f} MiB ({grew:+.0f} MiB)")
    return lines


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def views(browser, server, n: int) -> list[tuple[int, float]]:
    from browser_helpers import PAGES, open_page

    series = [(0, _rss(server.proc.pid) / 2**20)]
    for i in range(1, n + 1):
        info = PAGES[(i - 1) % len(PAGES)]
        ctx = browser.new_context()
        try:
            open_page(ctx.new_page(), server.url, info.url_path, timeout=120)
        finally:
            ctx.close()
        if i % 10 == 0:
            series.append((i, _rss(server.proc.pid) / 2**20))
    return series


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--views", type=int, default=100, help="page views for the server-RSS series")
    ap.add_argument("--cancels", type=int, default=6, help="runs to cancel (alternating tab close and Stop)")
    ap.add_argument("--skip-browser", action="store_true", help="CLI, parsers and files only")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as tmpname:
        tmp = Path(tmpname)
        os.environ["GEMM_CACHE_DIR"] = str(tmp / "cache")
        # the machine's queue of this run's own (a policy naming only it): /tmp/gemmlib-queue is not touched
        qpol = tmp / "queue-policy" / "policy.toml"
        qpol.parent.mkdir(mode=0o755)
        qpol.write_text(f'GEMM_QUEUE_DIR = "{tmp / "machine-queue"}"\n')
        os.chmod(qpol, 0o644)
        os.environ["GEMM_POLICY_FILE"] = str(qpol)
        t0 = time.perf_counter()
        notes: list[str] = []
        cli_surface(tmp)
        parser_surfaces()
        secrets_and_cache_surfaces(tmp)
        paths_surface(tmp)
        policy_surface(tmp)
        notes += queue_surface(tmp)
        notes += admission_surface(tmp)
        numbers_surface(tmp)
        forged_ceilings_surface(tmp)
        page_surfaces(tmp)
        lock_holds: list[tuple[str, float]] = []
        rss: list[tuple[int, float]] = []
        fetched: list[str] = []
        if not args.skip_browser:
            from browser_helpers import CHROMIUM, CHROMIUM_ARGS, StreamlitServer
            from playwright.sync_api import sync_playwright

            server = StreamlitServer("bench_hostile")
            try:
                with sync_playwright() as pw:
                    browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
                    browser_surfaces(browser, server.url, tmp, fetched)
                    notes += memory_links(browser, server)
                    lock_holds = cancels(browser, server, args.cancels)
                    rss = views(browser, server, args.views)
                    browser.close()
            finally:
                server.stop()
    print(f"bad inputs, per surface ({time.perf_counter() - t0:.0f} s):")
    for surface, (tried, clean) in TALLY.items():
        print(f"  {surface:<34} {clean:>3} of {tried:>3} handled cleanly")
    total_t = sum(t for t, _ in TALLY.values())
    total_c = sum(c for _, c in TALLY.values())
    print(f"  {'all surfaces':<34} {total_c:>3} of {total_t:>3}")
    for f in FAILURES:
        print(f"  NOT CLEAN: {f}")
    for n in notes:
        print(f"  {n}")
    if fetched:
        print(f"  an uploaded name made the browser fetch: {fetched}")
    if lock_holds:
        print("lock held after a cancel (until the queue is free and no worker is left):")
        for how, s in lock_holds:
            print(f"  {how:<13} {s:5.2f} s")
        print(f"  longest: {max(s for _, s in lock_holds):.2f} s")
    if rss:
        print("server RSS over page views (MiB): " + ", ".join(f"{i}: {m:.0f}" for i, m in rss))
        warm = rss[1][1] if len(rss) > 1 else rss[0][1]
        print(f"  growth after the first 10 views: {rss[-1][1] - warm:+.0f} MiB over {rss[-1][0] - 10} views")
    bad = FAILURES or fetched or any(s > 5 for _, s in lock_holds)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
