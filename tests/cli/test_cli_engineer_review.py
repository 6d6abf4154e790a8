"""The command line as a demanding engineer uses it (every command but ``estimate``): a flag that would do
nothing is refused with one line and exit status 2 before anything runs, an empty list is not read as "the
default", every flag's --help says what it is, a CPU's fp8 figure is not shown as a ceiling without a word,
and `bench collective` says something before the seconds its ranks take to start.

In this process (``run_cli``); "before anything runs" is a benchmark worker, a rank launch or the machine's
queue that must not be reached (``_Started``), not a stopwatch.
"""

from __future__ import annotations

import argparse

import pytest


class _Started(Exception):
    """The command got as far as starting work: the flags were accepted."""


@pytest.fixture
def nothing_starts(monkeypatch):
    from gemmlib.measure import runner, safety

    def started(*a, **k):
        raise _Started()

    monkeypatch.setattr(runner, "run", started)
    monkeypatch.setattr(safety, "single_flight", started)


def _refused(run_cli, argv, words):
    try:
        rc, out, err = run_cli(argv)
    except _Started:
        pytest.fail(f"{argv}: accepted and started")
    lines = err.splitlines()
    assert rc == 2 and len(lines) == 1 and "Traceback" not in err, (rc, err[-1500:])
    assert words in lines[0], lines[0]
    assert out == ""


@pytest.mark.parametrize("argv, words", [
    # devices: --device and --quick choose what --measure measures; alone they did nothing (exit 0, no word)
    (["devices", "--quick"], "--quick only applies to --measure"),
    (["devices", "--device", "cpu"], "--device only applies to --measure"),
    (["devices", "--light", "--device", "cuda", "--quick"], "--device and --quick only apply to --measure"),
    # bench precision: --preset/--batch/--seq shape --shapes llm; with one shape they were silently ignored
    (["bench", "precision", "--device", "cpu", "--size", "64", "--preset", "llama-3-8b"],
     "--preset only applies to --shapes llm"),
    (["bench", "precision", "--device", "cpu", "--size", "64", "--batch", "8", "--seq", "16"],
     "--batch, --seq only apply to --shapes llm"),
    (["bench", "precision", "--device", "cpu", "--shapes", "squares", "--seq", "16"], "only applies to --shapes llm"),
    # an empty list was read as "every dtype" / "the default", where tiling and batching refuse it
    (["bench", "precision", "--device", "cpu", "--size", "64", "--dtypes", ""], "no dtype given"),
    (["bench", "precision", "--device", "cpu", "--size", "64", "--dtypes", ","], "no dtype given"),
    (["calibrate", "--device", "cpu", "--dtypes", ""], "--dtypes names no dtype"),
    # bench tp: --scale divides a preset (ignored with a custom layer), --mlp shapes a custom layer (ignored
    # with a preset: the run printed "MLP 896 gated" after --mlp plain)
    (["bench", "tp", "--nproc", "2", "--hidden", "64", "--heads", "4", "--ffn", "128", "--scale", "2"],
     "--scale divides a preset's sizes"),
    (["bench", "tp", "--nproc", "2", "--mlp", "plain"], "--mlp shapes a custom layer"),
    (["bench", "tp", "--nproc", "2", "--preset", "llama-3-8b", "--mlp", "gated"], "leave --mlp out"),
    (["bench", "tp", "--nproc", "2", "--hidden", "64", "--kv-heads", "2"], "a custom layer needs --heads, --ffn"),
    # profile: --scale without --preset did nothing
    (["profile", "--device", "cpu", "--scale", "4"], "--scale divides a preset's sizes; add --preset"),
    # report: an empty --sections ran every section (the longest run there is)
    (["report", "--out", "{tmp}/r", "--device", "cpu", "--sections", ""], "--sections names no section"),
    (["report", "--out", "{tmp}/r", "--device", "cpu", "--sections", " , "], "--sections names no section"),
])
def test_a_flag_that_would_do_nothing_is_refused_before_anything_runs(argv, words, run_cli, bench_env, tmp_path,
                                                                      nothing_starts):
    _refused(run_cli, [a.format(tmp=tmp_path) for a in argv], words)
    assert not (tmp_path / "r").exists()  # report: no folder made for a refused run


def test_the_flags_still_work_where_they_apply(run_cli, bench_env, tmp_path, nothing_starts, monkeypatch):
    """The refusals above are only for the flag out of place: in place each still reaches the run."""
    from gemmlib.measure import launch

    monkeypatch.setattr(launch, "plan", lambda nproc, backend, lim: launch.Plan("gloo", "cpu", 2))
    for argv in (["devices", "--measure", "--device", "cpu", "--quick"],
                 ["bench", "precision", "--device", "cpu", "--shapes", "llm", "--preset", "llama-3-8b", "--batch", "1",
                  "--seq", "16", "--dtypes", "fp32"],
                 ["bench", "tp", "--nproc", "2", "--hidden", "64", "--heads", "4", "--ffn", "128", "--mlp", "plain"],
                 ["bench", "tp", "--nproc", "2", "--preset", "llama-3-8b", "--scale", "32"],
                 ["profile", "--device", "cpu", "--preset", "llama-3-8b", "--scale", "32", "--seq-len", "16"],
                 ["calibrate", "--device", "cpu", "--dtypes", "fp32"],
                 ["report", "--out", str(tmp_path / "r"), "--device", "cpu", "--sections", "tiling"]):
        with pytest.raises(_Started):
            run_cli(argv)


def _own_flags():
    """(command path, action) of every option of every command this file reviews (all but ``estimate``)."""
    from gemmlib.cli import build_parser

    def walk(p, path):
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sp in a.choices.items():
                    if name == "estimate":
                        continue
                    if hasattr(sp, "load"):
                        sp.load()
                    yield from walk(sp, (*path, name))
            elif a.option_strings and a.dest != "help":
                yield path, a
    return list(walk(build_parser(), ()))


def test_every_flag_says_what_it_is():
    """bench tp's --heads, --kv-heads, --mlp and --batch had no help at all."""
    flags = _own_flags()
    assert len(flags) > 80
    silent = [f"{' '.join(p)} {a.option_strings[0]}" for p, a in flags if not (a.help or "").strip()]
    assert not silent, silent


@pytest.mark.parametrize("path, flag, words", [
    (("bench", "precision"), "--size", "default 512 on a CPU, 4096 on a GPU"),
    (("bench", "precision"), "--m", "default --size"),
    (("bench", "precision"), "--preset", "default llama-2-7b"),
    (("bench", "precision"), "--batch", "default 1"),
    (("bench", "precision"), "--seq", "default 512"),
    (("bench", "precision"), "--min-run-time", "default 0.3"),
    (("bench", "tiling"), "--min-run-time", "default 0.2"),
    (("bench", "batching"), "--min-run-time", "default 0.1"),
    (("bench", "batching"), "--batches", "default 1,4,16,64 on a CPU"),
    (("profile",), "--scale", "default 16"),
    (("bench", "tp"), "--mlp", "the default"),
    (("report",), "--out", "holding only an earlier report"),
    (("devices",), "--quick", "with --measure"),
])
def test_help_gives_the_default(path, flag, words):
    """A default the run uses is the default the help names (they were missing, so a user could not tell
    what `bench precision` times without --size)."""
    helps = {(p, a.option_strings[0]): a.help for p, a in _own_flags()}
    assert words in helps[(path, flag)], helps[(path, flag)]


def test_the_defaults_the_help_names_are_the_ones_used(monkeypatch, bench_env):
    from gemmlib.cli import build_parser
    from gemmlib.cli.bench_precision import build_config
    from gemmlib.measure import batching as bb
    from gemmlib.measure import tiling as bt

    args = build_parser().parse_args(["bench", "precision", "--device", "cpu"])
    assert build_config(args, "cpu").shapes[0][:3] == (512, 512, 512)
    assert build_config(args, "cuda").shapes[0][:3] == (4096, 4096, 4096)
    assert args.min_run_time == 0.3
    llm = build_parser().parse_args(["bench", "precision", "--device", "cpu", "--shapes", "llm"])
    default = build_config(llm, "cpu").shapes
    from gemmlib.measure import precision as bp
    assert default == tuple(bp.llm_shapes("llama-2-7b", 1, 512))
    assert bb.cpu_decode_defaults().batches == (1, 4, 16, 64) and bb.cpu_decode_defaults().min_run_time == 0.1
    assert bt.cpu_defaults().tiles == (16, 32, 64, 128) and bt.cpu_defaults().min_run_time == 0.2


def test_top_level_help_lists_every_benchmark(run_cli):
    rc, out, err = run_cli(["--help"])
    line = " ".join((out + err).split())
    assert rc == 0 and "run a live benchmark (precision, tiling, batching, collective, tp)" in line


def test_devices_says_a_cpu_fp8_figure_is_no_ceiling_and_what_was_not_measured(run_cli, bench_env):
    """`devices` printed a CPU's fp8 reference-kernel speed among the measured ceilings with no word (the Devices
    page says it is none), and never said why tf32 was not measured."""
    from gemmlib.core import ceilings
    from gemmlib.measure.precision import NO_CEILING_EMULATED

    c = ceilings.Ceilings(device="cpu", device_name="Test CPU", peaks={"fp32": 1.5e11, "fp8": 5e10},
                          bandwidth=8e9, gemm_size=512, copy_bytes=2**25,
                          notes={"tf32": "tf32 is a mode of NVIDIA tensor cores"})
    assert ceilings.save_ceilings(c) is not None
    rc, out, err = run_cli(["devices", "--light"])
    assert rc == 0, err
    lines = out.splitlines()
    i = next(n for n, ln in enumerate(lines) if ln.startswith("measured cpu:Test CPU"))
    assert "fp8 0.05" in lines[i]
    assert lines[i + 1].strip() == f"note: fp8: {NO_CEILING_EMULATED}"
    assert lines[i + 2].strip() == "note: tf32: not measured — tf32 is a mode of NVIDIA tensor cores"


def test_bench_precision_says_a_cpu_fp8_row_is_a_reference_kernel(run_cli, bench_env):
    """The CPU's fp8 row printed a TFLOP/s with nothing saying that no fp8 hardware ran it."""
    from gemmlib.measure.precision import NO_SHARE_EMULATED

    rc, out, err = run_cli(["bench", "precision", "--device", "cpu", "--size", "16", "--dtypes", "fp8", "--no-quant",
                            "--min-run-time", "0.01"])
    assert rc == 0, err[-2000:]
    assert out.splitlines()[-1] == f"note: {NO_SHARE_EMULATED}"
    rc, out, err = run_cli(["bench", "precision", "--device", "cpu", "--size", "16", "--dtypes", "fp32",
                            "--min-run-time", "0.01"])
    assert rc == 0 and "note:" not in out  # only where an emulated row ran


@pytest.mark.parametrize("torchrun", [False, True])
def test_multi_rank_commands_say_they_are_starting_ranks(torchrun, capsys, monkeypatch, bench_env):
    """`bench collective` printed nothing for the 2–5 s its ranks took to start."""
    import contextlib

    from gemmlib.cli.bench_collective import run_ranked
    from gemmlib.measure import launch, safety

    monkeypatch.setattr(safety, "single_flight", lambda owner: contextlib.nullcontext())
    seen = []

    def work(progress):
        seen.append(capsys.readouterr().err)  # what the user had read when the ranks began to start
        return "ok"

    plan = launch.Plan("gloo", "cpu", 2, torchrun=torchrun)
    assert run_ranked("test", work, plan) == "ok"
    if torchrun:  # torchrun started the ranks itself
        assert seen == [""]
    else:
        assert seen == ["starting 2 gloo ranks (CPU processes; a few seconds)\n"]


def test_bench_collective_says_it_is_starting_ranks_only_once_its_input_was_accepted(run_cli, bench_env,
                                                                                     monkeypatch):
    from gemmlib.measure import collectives as cl

    def fake(cfg, **k):
        raise _Started()

    monkeypatch.setattr(cl, "run_collectives", fake)
    with pytest.raises(_Started):
        run_cli(["bench", "collective", "--nproc", "2", "--backend", "gloo", "--max-bytes", "64"])
    rc, out, err = run_cli(["bench", "collective", "--nproc", "2", "--backend", "gloo", "--max-bytes", "64G"])
    assert rc == 2 and "starting" not in err and err.count("\n") == 1  # refused: no ranks were started


def test_bench_collective_json_rows_carry_median_s_as_every_other_benchmark(run_cli, bench_env, monkeypatch):
    """A row's median time was `median_s` in bench precision, tiling and batching but only `time_s` (beside `p20_s`
    and `p80_s`) in bench collective: a script reading every benchmark's medians missed them. `time_s` stays."""
    import json

    from gemmlib.measure import collectives as cl

    row = {"op": "all_reduce", "bytes": 64, "nproc": 2, "backend": "gloo", "time_s": 2e-4, "p20_s": 1e-4,
           "p80_s": 3e-4, "algbw_gbps": 3.2e-4, "busbw_gbps": 3.2e-4, "correct": True, "count": 16, "dtype": "fp32"}
    monkeypatch.setattr(cl, "run_collectives", lambda cfg, **k: cl.CollectiveRun("gloo", "cpu", 2, "Test CPU", "fp32",
                                                                                 [dict(row)]))
    rc, out, err = run_cli(["bench", "collective", "--nproc", "2", "--backend", "gloo", "--max-bytes", "64", "--json"])
    assert rc == 0, err
    (r,) = json.loads(out)["results"]
    assert r["median_s"] == r["time_s"] == 2e-4 and r["p20_s"] == 1e-4


def test_devices_says_1_thread_not_1_threads(run_cli, bench_env, monkeypatch):
    from gemmlib.core import machine

    one = {"kind": "cpu", "index": 0, "name": "Tiny CPU", "units": 1, "memory_bytes": 2**30, "capability": "",
           "catalogue": "", "match_note": "", "source": "test"}
    monkeypatch.setattr(machine, "light_summary", lambda: [dict(one)])
    rc, out, err = run_cli(["devices", "--light"])
    assert rc == 0 and "cpu:0  Tiny CPU  (1 thread, 1 GiB)" in out, out


def test_devices_gives_int8_in_tops_not_tflops(run_cli, bench_env):
    """int8 counts integer operations: `devices` printed it among the TFLOP/s (the Devices page's rows say TOP/s)."""
    from gemmlib.core import ceilings

    c = ceilings.Ceilings(device="cpu", device_name="Test CPU", peaks={"fp32": 1.5e11, "int8": 3e11}, bandwidth=None,
                          gemm_size=512)
    assert ceilings.save_ceilings(c) is not None
    rc, out, err = run_cli(["devices", "--light"])
    line = next(ln for ln in out.splitlines() if ln.startswith("measured cpu:Test CPU"))
    assert line.startswith("measured cpu:Test CPU: fp32 0.15 TFLOP/s; int8 0.3 TOP/s"), line
    catalogue = next(ln for ln in out.splitlines() if "catalogue:" in ln)
    assert "int8" not in catalogue.split("TFLOP/s")[0], catalogue


# --------------------------------------------------------------------------- report (gemmlib/measure/report.py)
def test_report_devices_section_says_a_cpu_fp8_figure_is_no_ceiling(bench_env, tmp_path, monkeypatch):
    """report.md's ceilings table gave a CPU's fp8 reference-kernel speed as a measured ceiling with an empty note."""
    from gemmlib.core import ceilings
    from gemmlib.measure import devices, report
    from gemmlib.measure.precision import NO_CEILING_EMULATED

    c = ceilings.Ceilings(device="cpu", device_name="Test CPU", peaks={"fp32": 1.5e11, "fp8": 5e10}, bandwidth=8e9,
                          gemm_size=512, copy_bytes=2**25)
    monkeypatch.setattr(devices, "detect", lambda: [])
    monkeypatch.setattr(devices, "measure_ceilings", lambda device, **k: c)
    sec = report.report_section("cpu", True, tmp_path)
    fp8 = next(ln for ln in sec["markdown"].splitlines() if ln.startswith("| fp8 GEMM"))
    fp32 = next(ln for ln in sec["markdown"].splitlines() if ln.startswith("| fp32 GEMM"))
    assert NO_CEILING_EMULATED in fp8 and NO_CEILING_EMULATED not in fp32


def test_report_progress_names_the_section_once_and_a_skipped_one_is_not_done(bench_env, tmp_path, monkeypatch):
    """The progress read "tiling: [  0%] tiling: python_tiled tile 32", and a skipped section's line was followed by
    "collectives: done in 0.0 s"."""
    import sys
    import types

    from gemmlib.measure import report

    ran = types.ModuleType("fake_ran")

    def ran_section(device, quick, out_dir, progress=None):
        progress(0.0, "tiling: python_tiled tile 32")
        progress(0.5, "a line of its own")
        return {"title": "Tiling", "results": [], "markdown": "tiling"}

    ran.report_section = ran_section
    skipped = types.ModuleType("fake_skipped")
    skipped.report_section = lambda device, quick, out_dir, progress=None: {"title": "C", "skipped": "0 CUDA GPUs"}
    monkeypatch.setitem(sys.modules, "fake_ran", ran)
    monkeypatch.setitem(sys.modules, "fake_skipped", skipped)
    monkeypatch.setattr(report, "SECTIONS", (("tiling", "fake_ran"), ("collectives", "fake_skipped")))
    said: list[str] = []
    report.run_report(tmp_path / "r", device="cpu", quick=True, progress=said.append)
    assert "tiling: [  0%] python_tiled tile 32" in said and "tiling: [ 50%] a line of its own" in said
    assert any(s.startswith("tiling: done in") for s in said)
    assert "collectives: skipped (0 CUDA GPUs)" in said
    assert not any(s.startswith("collectives: done") for s in said), said


def test_bench_precision_names_int8_rates_in_tops(run_cli, bench_env):
    """The table's one rate column said TFLOP/s on the int8 rows too (integer operations, TOP/s)."""
    rc, out, err = run_cli(["bench", "precision", "--device", "cpu", "--size", "16", "--dtypes", "fp32,int8",
                            "--no-quant", "--min-run-time", "0.01"])
    assert rc == 0, err[-2000:]
    assert "TFLOP/s (int8: TOP/s)" in out.splitlines()[0]
    rc, out, err = run_cli(["bench", "precision", "--device", "cpu", "--size", "16", "--dtypes", "fp32",
                            "--min-run-time", "0.01"])
    assert rc == 0 and "TOP/s" not in out and "TFLOP/s" in out.splitlines()[0]


@pytest.mark.parametrize("argv", [["devices", "--light", "--json"], ["validate", "--published"]])
def test_a_reader_that_left_is_no_traceback(argv, tmp_path):
    """`python -m gemmlib profile --json | head -1` ended in a BrokenPipeError traceback. The process boundary is the
    point: the reader closes its end before the command writes, and the command says nothing and exits 141, as a
    command killed by SIGPIPE does."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "GEMM_CACHE_DIR": str(tmp_path / "cache")}
    p = subprocess.Popen([sys.executable, "-m", "gemmlib", *argv], cwd=root, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    p.stdout.close()  # the reader is gone before the command has imported anything
    err = p.stderr.read()
    assert p.wait(timeout=120) == 141, err[-2000:]
    assert "Traceback" not in err and "Exception ignored" not in err and "BrokenPipe" not in err, err[-2000:]


def test_a_broken_pipe_that_is_not_stdout_still_raises(monkeypatch, run_cli):
    """Only our reader leaving is quiet: a broken pipe to a worker or a rank is a real error, raised as before."""
    from gemmlib.cli import devices

    def broken(args):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(devices, "run", broken)
    with pytest.raises(BrokenPipeError):
        run_cli(["devices", "--light"])


class _FullDisk:
    """A stdout whose every write fails as /dev/full's does."""

    def write(self, text):
        raise OSError(28, "No space left on device")

    def flush(self):
        pass


@pytest.mark.parametrize("argv", [["devices", "--light"], ["validate", "--published", "--json"], ["--help"]])
def test_output_that_cannot_be_written_is_one_line_not_a_traceback(argv, monkeypatch, capsys, bench_env):
    """`python -m gemmlib devices --light > /dev/full` ended in an OSError traceback."""
    import sys

    from gemmlib.cli import main

    full = _FullDisk()
    monkeypatch.setattr(sys, "stdout", full)
    assert main(argv) == 1
    assert sys.stdout is full  # given back as it was
    err = capsys.readouterr().err
    assert err == "error: cannot write the output: No space left on device\n", err


def test_a_warning_is_said_once_per_command(run_cli, bench_env, monkeypatch):
    """With a cache folder open to other users, `bench precision` printed "measured ceilings not read: the cache
    folder … is open to other users" six times before its one error line: each read of the ceilings warned again."""
    import logging

    from gemmlib.cli import devices

    def run(args):
        for _ in range(3):
            logging.getLogger("gemmlib.ceilings").warning("measured ceilings not read: %s", "the folder is open")
        logging.getLogger("gemmlib.calibration").warning("calibrations not read: %s", "bad JSON")
        return 0

    monkeypatch.setattr(devices, "run", run)
    monkeypatch.setattr(logging.root, "handlers", [])  # as in `python -m gemmlib`: no logging set up (pytest's off)
    rc, out, err = run_cli(["devices", "--light"])
    assert rc == 0
    assert err.splitlines() == ["measured ceilings not read: the folder is open", "calibrations not read: bad JSON"]
    rc, out, err = run_cli(["devices", "--light"])  # the next command says it again: once per command
    assert err.splitlines()[0] == "measured ceilings not read: the folder is open"
    assert not any(isinstance(h, logging.Handler) and type(h).__name__ == "_SaidOnce"
                   for h in logging.getLogger("gemmlib").handlers)  # nothing left behind in this process
