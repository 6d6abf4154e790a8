"""The command line against hostile input: bad files, bad output paths, unbounded numbers, work a CPU
cannot do. Every one ends with exit status 2 and one line on stderr, before anything runs.

Most cases call ``gemmlib.cli.main`` in this process (``run_cli``): the exit status and stderr are
the same as ``python -m gemmlib``'s. A fresh interpreter is kept where the process is the point: a
read that could hang or fill memory (a FIFO, /dev/zero), the secrets file found from the working
folder, and one case per path of ``__main__``. "Before anything runs" is shown by a benchmark worker
that must not start (``no_worker``), not by a stopwatch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SMALL_PROFILE = ["profile", "--device", "cpu", "--hidden", "64", "--heads", "4", "--seq-len", "16", "--steps", "1"]


def _cli(*argv: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    full = {**os.environ, **(env or {})}
    for k in ("GEMM_CLASSROOM", "GEMM_MAX_DIM", "GEMM_MAX_BYTES", "GEMM_TIME_LIMIT_S", "GEMM_MAX_CPU_GFLOP"):
        if not env or k not in env:
            full.pop(k, None)
    return subprocess.run([sys.executable, "-m", "gemmlib", *argv], cwd=ROOT, env=full, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture
def no_worker(monkeypatch):
    """Every benchmark worker the runner starts, recorded (the real one still runs): a refusal must
    leave the list empty."""
    from gemmlib.measure import runner

    started: list[str] = []
    real = runner._run_worker

    def run_worker(spec, config, *a, **k):
        started.append(str(spec.describe(config)))
        return real(spec, config, *a, **k)

    monkeypatch.setattr(runner, "_run_worker", run_worker)
    return started


def _one_line_exit_2(p: subprocess.CompletedProcess, words: str) -> None:
    lines = p.stderr.splitlines()
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert words in lines[0], lines[0]


@pytest.fixture
def hostile_files(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    bigint = tmp_path / "bigint.json"
    bigint.write_text('{"model_type": "llama", "hidden_size": ' + "9" * 5000 + "}")
    huge = tmp_path / "huge.json"
    huge.write_text(json.dumps({"model_type": "llama", "hidden_size": int("9" * 4000), "num_attention_heads": 8,
                                "num_hidden_layers": 2, "intermediate_size": 64, "vocab_size": 10}))
    return {"fifo": fifo, "deep": deep, "bigint": bigint, "huge": huge}


@pytest.mark.parametrize("which, words", [
    ("/dev/zero", "is a device, not a regular file"), ("/dev/urandom", "is a device, not a regular file"),
    ("fifo", "is a FIFO"), ("deep", "nested too deeply"), ("bigint", "4300 digits"),
    ("huge", "beyond any real model"), ("/tmp", "is a folder")])
def test_config_files_that_are_not_configs(hostile_files, which, words, run_cli):
    path = hostile_files.get(which, which)
    if which in ("/dev/zero", "/dev/urandom", "fifo"):
        # in a process of its own: a read without bound or a hang on a FIFO must not take the test
        # run with it (the timeout is the hang guard)
        p = _cli("estimate", "--config", str(path), timeout=30)
        _one_line_exit_2(p, words)
        assert len(p.stderr) < 300
    else:
        _in_process_one_line_exit_2(run_cli, ["estimate", "--config", str(path)], words)  # < 300 characters:
        # a 4000-digit number is not echoed back


def test_output_paths_are_checked_before_the_run(tmp_path, run_cli, no_worker):
    real = tmp_path / "real.csv"
    real.write_text("keep")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    bench = ["bench", "precision", "--device", "cpu", "--size", "64", "--dtypes", "fp32", "--min-run-time", "0.05"]
    for target, words in (("/proc/version", "cannot create files"), (str(tmp_path), "is a folder"),
                          ("/dev/full", "device or special file"), (str(link), "symbolic link")):
        _in_process_one_line_exit_2(run_cli, [*bench, "--csv", target], words)
    assert no_worker == []  # refused before a benchmark worker is even started
    assert real.read_text() == "keep" and link.is_symlink()
    out = tmp_path / "ok.csv"
    p = _cli(*bench, "--csv", str(out))  # the whole path once, in a fresh interpreter
    assert p.returncode == 0, p.stderr
    assert out.read_text().startswith("bench,") and sorted(x.name for x in tmp_path.iterdir()) == \
        ["link.csv", "ok.csv", "real.csv"]  # no temporary file left behind


def test_trace_paths(tmp_path, run_cli, no_worker):
    real = tmp_path / "real.json"
    real.write_text("keep")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    for target, words in ((str(tmp_path), "is a folder"), ("/proc/self/trace.json", "cannot create files"),
                          (str(link), "symbolic link"), ("/dev/null", "device")):
        _in_process_one_line_exit_2(run_cli, [*SMALL_PROFILE, "--trace", target], words)
    assert no_worker == []
    assert real.read_text() == "keep" and link.is_symlink()
    trace = tmp_path / "t.json"
    rc, out, err = run_cli([*SMALL_PROFILE, "--trace", str(trace), "--json"])
    assert rc == 0, err
    assert json.loads(out)["trace_path"] == str(trace)
    assert json.loads(trace.read_text())["traceEvents"]
    assert sorted(x.name for x in tmp_path.iterdir()) == ["link.json", "real.json", "t.json"]


def test_report_out_must_be_a_usable_folder(tmp_path, run_cli, no_worker):
    f = tmp_path / "file"
    f.write_text("")
    _in_process_one_line_exit_2(run_cli, ["report", "--out", str(f), "--quick"], "not a folder")
    _in_process_one_line_exit_2(run_cli, ["report", "--out", "/proc/sys/gemm", "--quick"], "cannot create files")
    assert no_worker == []


@pytest.mark.parametrize("bench", ["tiling", "batching", "precision"])
@pytest.mark.parametrize("value", ["inf", "nan", "-1", "0", "1e9"])
def test_min_run_time_is_bounded(bench, value, run_cli, no_worker):
    _in_process_one_line_exit_2(run_cli, ["bench", bench, "--device", "cpu", "--min-run-time", value],
                                "--min-run-time")
    assert no_worker == []


@pytest.mark.parametrize("argv, words", [
    (["--layers", "10000"], "layers must be from 1 to 64"),
    (["--steps", "100000"], "profiled passes"),
])
def test_profile_sizes_are_bounded(argv, words, run_cli, no_worker):
    _in_process_one_line_exit_2(run_cli, ["profile", "--device", "cpu", "--hidden", "64", "--heads", "4", *argv],
                                words)
    assert no_worker == []


@pytest.mark.parametrize("argv", [
    ["bench", "tiling", "--device", "cpu", "--size", "8192"],
    ["bench", "batching", "--device", "cpu", "--m", "8192", "--k", "8192", "--n", "8192", "--batches", "1"],
    ["bench", "precision", "--device", "cpu", "--size", "8192"],
])
def test_work_a_cpu_cannot_do_is_refused_by_the_same_cap(argv, run_cli, no_worker):
    """The caps are one rule for every benchmark: 8192³ is 1100 GFLOP, above the default CPU cap of 137,
    refused before a worker starts."""
    _in_process_one_line_exit_2(run_cli, argv, "GEMM_MAX_CPU_GFLOP")
    assert no_worker == []


@pytest.mark.parametrize("argv", [
    ["validate", "--device", "cuda", "--scale", "16"], ["validate", "--device", "cuda"],
    ["calibrate", "--device", "cuda", "--scale", "16", "--layers", "1"], ["calibrate", "--device", "cuda"],
    ["bench", "precision", "--device", "cuda", "--size", "64"], ["devices", "--measure", "--device", "cuda", "--quick"],
])
def test_cuda_on_a_machine_without_one_is_one_line_naming_why(argv, run_cli, no_worker, monkeypatch):
    """--device cuda where torch has no GPU: one line saying so, before the plan (which would ask torch for the GPU's
    memory and capability: a traceback) and before the caps (whose advice, a smaller size, would not help). Before,
    these four commands ended in "AssertionError: Torch not compiled with CUDA enabled", exit 1 — and validate and
    calibrate at their default scale named the vocabulary cap instead."""
    from gemmlib.core import machine
    from gemmlib.core.i18n import N_
    from gemmlib.measure import launch

    monkeypatch.setattr(launch, "cuda_count", lambda: 0)
    monkeypatch.setattr(machine, "gpu_presence", lambda: (0, N_("no CUDA device (this PyTorch is a CPU-only build)")))
    _in_process_one_line_exit_2(run_cli, argv, "device 'cuda' cannot be used here: no CUDA device")
    assert no_worker == []


def test_caps_from_a_secrets_file_reach_the_cli(tmp_path):
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "secrets.toml").write_text("GEMM_MAX_DIM = 300\n")
    p = subprocess.run([sys.executable, "-m", "gemmlib", "bench", "tiling", "--device", "cpu", "--size", "512"],
                       cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                       timeout=120)
    _one_line_exit_2(p, "cap of 300")
    (tmp_path / ".streamlit" / "secrets.toml").write_text("GEMM_MAX_DIM = = 300\n")
    p = subprocess.run([sys.executable, "-m", "gemmlib", "bench", "tiling", "--device", "cpu", "--size", "64"],
                       cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                       timeout=120)
    _one_line_exit_2(p, "is not valid TOML")
    assert "line 1" in p.stderr


_TINY = ["--hidden", "64", "--ffn", "128", "--heads", "4", "--vocab", "100"]


@pytest.mark.parametrize("argv, words", [
    (["--layers", "1000000000", "--sliding-window", "8", "--sliding-pattern", "alternate"], "limit 10,000"),
    (["--layers", "1000000000", "--experts", "8", "--experts-per-token", "2", "--dense-layers", "1"], "limit 10,000"),
    (["--layers", str(2**64)], "beyond any real model"),
    (["--layers", str(2**64), "--experts", "8", "--experts-per-token", "2", "--dense-layers", "1"],
     "beyond any real model"),
    (["--layers", str(2**64), "--sliding-window", "8"], "beyond any real model"),  # was an OverflowError
    (["--layers", "4", "--sliding-window", "8", "--sliding-pattern", "99999999999999999999:1"], "at most 10,000"),
    (["--layers", "4", "--sliding-window", "8", "--sliding-pattern", "9999999999:1"], "at most 10,000"),  # MemoryError
    (["--layers", "4", "--sliding-window", str(2**64)], "beyond any real model"),
    (["--layers", "4", "--experts", "8", "--experts-per-token", "2", "--moe-every", str(2**64)],
     "beyond any real model"),
])
def test_model_sizes_are_bounded_before_anything_is_built(argv, words, capsys, tmp_path, monkeypatch):
    """Issue 26 items 2–3, in-process (a hang or a traceback shows here as well as in a subprocess): exit 2,
    one line, and nothing proportional to the asked-for size is made (the run takes no time)."""
    from gemmlib.cli import main

    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path))
    assert main(["estimate", *_TINY, *argv]) == 2  # the old hang: pytest-timeout's limit catches it
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and words in err and "Traceback" not in err, err
    assert len(err) < 300


# --------------------------------------------------------------------------- issue 26 items 3 and 4: paths
def _in_process_one_line_exit_2(run_cli, argv, words: str, progress: str = "") -> str:
    """Exit 2 and one line on stderr (besides progress lines starting with ``progress``, a report's)."""
    rc, out, err = run_cli(argv)
    lines = [ln for ln in err.splitlines() if not (progress and ln.startswith(progress))]
    assert rc == 2 and len(lines) == 1 and "Traceback" not in err, (rc, err[-2000:])
    assert words in lines[0], lines[0]
    assert len(lines[0]) < 300, lines[0]
    return lines[0]


@pytest.fixture
def fake_devices_section(monkeypatch):
    """The report's devices section without a measurement: one small chart, no rows (the writes are tested)."""
    import altair as alt

    from gemmlib.measure import report

    def section(device, quick, out_dir, progress=None):
        chart = alt.Chart(alt.Data(values=[{"x": 1, "y": 2}])).mark_point().encode(x="x:Q", y="y:Q")
        return {"title": "Devices", "results": [], "markdown": "devices", "charts": {"ceilings": chart}}

    monkeypatch.setattr(report, "report_section", section)


def test_report_out_names_that_are_not_folders_to_write(bench_env, run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    base = ["report", "--quick", "--sections", "devices", "--device", "cpu"]
    line = _in_process_one_line_exit_2(run_cli, [*base, "--out", "d" * 300], "File name too long")
    assert "…" in line  # the name quoted cut, not echoed whole
    _in_process_one_line_exit_2(run_cli, [*base, "--out", ""], "needs a folder name")
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    _in_process_one_line_exit_2(run_cli, [*base, "--out", "link"], "symbolic link")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real"]  # nothing written here or there
    assert list((tmp_path / "real").iterdir()) == []


def test_report_never_writes_through_a_planted_link(bench_env, run_cli, tmp_path, fake_devices_section):
    out, victim, elsewhere = tmp_path / "d", tmp_path / "victim.png", tmp_path / "elsewhere"
    (out / "charts").mkdir(parents=True)
    elsewhere.mkdir()
    victim.write_bytes(b"keep")
    (out / "charts" / "devices_ceilings.png").symlink_to(victim)
    argv = ["report", "--out", str(out), "--quick", "--sections", "devices", "--device", "cpu"]
    line = _in_process_one_line_exit_2(run_cli, argv, "symbolic link", "devices: ")  # chart.save followed it
    assert "devices_ceilings.png" in line
    assert victim.read_bytes() == b"keep"
    (out / "charts" / "devices_ceilings.png").unlink()
    (out / "charts").rmdir()
    (out / "charts").symlink_to(elsewhere)  # a charts/ link
    _in_process_one_line_exit_2(run_cli, argv, "symbolic link")
    assert list(elsewhere.iterdir()) == []
    (out / "charts").unlink()
    rc, stdout, err = run_cli(argv)
    assert rc == 0, err
    assert (out / "charts" / "devices_ceilings.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in out.iterdir()) == ["charts", "report.md", "results.csv", "results.json"]
    assert "![ceilings](charts/devices_ceilings.png)" in (out / "report.md").read_text()


@pytest.mark.parametrize("lock", ["run.lock", "queue.lock"])
def test_a_planted_lock_link_is_one_line_and_exit_2(bench_env, run_cli, tmp_path, lock):
    from gemmlib.measure.runqueue import machine_queue_dir

    queue = machine_queue_dir()  # the machine's queue folder: this test's own (its policy file names it)
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (queue / lock).symlink_to(victim)
    _in_process_one_line_exit_2(run_cli, ["bench", "precision", "--device", "cpu", "--size", "64", "--dtypes",
                                          "fp32"], "symbolic link")
    assert victim.read_text() == "keep"


# --------------------------------------------------------------------------- issue 26 item 5: one policy per machine
def test_the_machine_policy_holds_in_any_folder_and_against_the_environment(bench_env, run_cli, tmp_path,
                                                                            monkeypatch):
    from gemmlib.core import policy

    monkeypatch.setattr(policy, "MACHINE_POLICY", tmp_path / "no-etc" / "policy.toml")
    pol = tmp_path / "policy.toml"
    pol.write_text("GEMM_CLASSROOM = true\n")
    os.chmod(pol, 0o644)
    monkeypatch.setenv("GEMM_POLICY_FILE", str(pol))
    elsewhere = tmp_path / "elsewhere"  # no .streamlit/secrets.toml here: the caps come with the machine
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    argv = ["bench", "precision", "--device", "cpu", "--size", "4096"]
    # the cap is the policy's: raising GEMM_MAX_DIM cannot lift it, so the refusal does not advise it
    line = _in_process_one_line_exit_2(run_cli, argv, "above this machine's cap of 2048, set by its policy")
    assert line.endswith("; choose a smaller size") and "GEMM_MAX_DIM" not in line, line
    for k, v in (("GEMM_MAX_DIM", "16384"), ("GEMM_CLASSROOM", "0"), ("GEMM_MAX_CPU_GFLOP", "1e6")):
        monkeypatch.setenv(k, v)  # the environment cannot raise them
    (elsewhere / ".streamlit").mkdir()
    (elsewhere / ".streamlit" / "secrets.toml").write_text("GEMM_MAX_DIM = 16384\n")  # nor a secrets file
    _in_process_one_line_exit_2(run_cli, argv, "cap of 2048")
    os.chmod(pol, 0o666)  # a policy others can change is refused, not skipped
    _in_process_one_line_exit_2(run_cli, argv, "can be changed by others")


# --------------------------------------------------------------------------- issue 26 item 11: every numeric flag
HOSTILE_NUMBERS = ("0", "-1", "inf", "nan", "1e400")
SWEEP_BASE = {  # a cheap valid command line for each sub-command the sweep adds one flag to
    ("estimate",): ["--layers", "2", "--hidden", "64", "--ffn", "128", "--heads", "4", "--vocab", "100"],
    ("bench", "precision"): ["--device", "cpu", "--size", "64", "--dtypes", "fp32"],
    ("bench", "tiling"): ["--device", "cpu", "--size", "64"],
    ("bench", "batching"): ["--device", "cpu"],
    ("bench", "collective"): ["--nproc", "2"],
    ("bench", "tp"): ["--nproc", "2"],
    ("profile",): ["--device", "cpu", "--hidden", "64", "--heads", "4", "--seq-len", "16", "--steps", "1"],
    ("report",): ["--out", "{tmp}/report", "--quick", "--device", "cpu"],
    ("calibrate",): ["--device", "cpu"],
    ("validate",): ["--device", "cpu"],
}
STRING_NUMBERS = {("bench", "collective"): ("--min-bytes", "--max-bytes"), ("bench", "batching"): ("--batches",),
                  ("bench", "tiling"): ("--tiles",)}  # numbers inside a text flag, parsed by the command
# A value the command accepts, and what it means (each is said in the flag's --help).
DOCUMENTED = {
    ("estimate", "--experts", "0"): "a dense model",
    ("estimate", "--experts-per-token", "0"): "a dense model",
    ("estimate", "--mla-q-rank", "0"): "no low-rank query",
    ("estimate", "--shared-expert-ffn", "0"): "no shared expert",
    ("estimate", "--dense-layers", "0"): "no dense layers first",
    ("estimate", "--max-positions", "0"): "the trained context is unknown",
    ("estimate", "--new-tokens", "0"): "the prefill only",
    ("estimate", "--context", "0"): "a decode step with an empty cache",
    ("estimate", "--request-rate", "inf"): "every request at once",
    ("estimate", "--intra-latency-us", "0"): "an ideal link",
    ("estimate", "--inter-latency-us", "0"): "an ideal link",
    ("bench collective", "--warmup", "0"): "no warm-up call",
    ("bench tp", "--warmup", "0"): "no warm-up pass",
    ("calibrate", "--new-tokens", "0"): "the prefill only",
    ("validate", "--new-tokens", "0"): "the prefill only",
    ("estimate", "--zero", "0"): "ZeRO stage 0, no sharding (one of the choices 0-3)",
    ("estimate", "--ep-comm-sms", "0"): "no SMs held by the all-to-alls: nothing charged (the default)",
}


def _numeric_flags():
    import argparse

    from gemmlib.cli import build_parser

    def walk(p, path):
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sp in a.choices.items():
                    if hasattr(sp, "load"):  # the lazy command table: add the command's flags
                        sp.load()
                    yield from walk(sp, (*path, name))
            elif a.option_strings and (a.type is not None or a.option_strings[0] in STRING_NUMBERS.get(path, ())):
                yield path, a
    return list(walk(build_parser(), ()))


class _Started(Exception):
    """The command got as far as starting a benchmark: the value was accepted."""


def test_the_sweep_covers_every_command_and_every_numeric_flag():
    flags = _numeric_flags()
    assert {p for p, _ in flags} == set(SWEEP_BASE)
    assert len(flags) > 90  # estimate alone has some 45
    for path, action in flags:  # no bare int/float: every numeric flag checks its value at parse time or run time
        documented = [k for k in DOCUMENTED if k[0] == " ".join(path) and k[1] == action.option_strings[0]]
        for _, _, value in documented:  # the help names the accepted value ("0: …", "inf: …") or offers it
            assert value in (action.help or "") or (value.isdigit() and int(value) in (action.choices or ())), (
                path, action.option_strings, value)


@pytest.mark.parametrize("path", sorted(SWEEP_BASE), ids=" ".join)
def test_every_numeric_flag_refuses_zero_negative_infinite_and_nan(path, bench_env, run_cli, tmp_path, monkeypatch):
    """0, -1, inf, nan and 1e400 fed to each numeric flag of each sub-command: exit 2 with one line (at parse
    time, or before anything runs), or a meaning the flag's help documents (DOCUMENTED)."""
    from gemmlib.measure import runner, safety

    def started(*a, **k):
        raise _Started()

    monkeypatch.setattr(runner, "run", started)
    monkeypatch.setattr(safety, "single_flight", started)
    base = [a.format(tmp=tmp_path) for a in SWEEP_BASE[path]]
    bad = []
    for p, action in _numeric_flags():
        if p != path:
            continue
        flag = action.option_strings[0]
        for value in HOSTILE_NUMBERS:
            try:
                rc, out, err = run_cli([*path, *base, f"{flag}={value}"])
            except SystemExit as e:
                rc = e.code
            except _Started:
                rc = "started"
            key = (" ".join(path), flag, value)
            if key in DOCUMENTED:
                if rc not in (0, "started"):
                    bad.append(f"{key}: documented as {DOCUMENTED[key]!r}, got {rc}")
            elif rc != 2:
                bad.append(f"{key}: accepted ({rc})")
    assert not bad, bad


def test_one_line_cuts_what_it_quotes():
    from gemmlib.core.files import LINE, one_line

    huge = "x" * 10_000
    line = one_line(f"argument --layers: invalid int value: '{huge}'")
    assert len(line) < 150 and "…" in line and line.startswith("argument --layers: invalid int value: 'xxx")
    assert one_line(f"unknown device {huge!r}; use cpu or cuda").endswith("; use cpu or cuda")
    assert one_line("a\nb   c") == "a b c"  # one line
    many = one_line("word " * 1000)  # 4,999 characters once folded: cut to the line's limit
    assert LINE == 1000 and len(many) == LINE and many.startswith("word word") and "…" in many
    assert one_line("word " * 100) == " ".join(["word"] * 100)  # 499 characters: kept whole


@pytest.mark.parametrize("argv, words", [
    (["estimate", "--preset", "x" * 10_000], "unknown preset"),
    (["estimate", "--layers", "x" * 10_000], "invalid int value"),
    (["bench", "tp", "--nproc", "2", "--dtype", "x" * 10_000, "--timeout", "1e400"], "--timeout"),
    (["estimate", "--unknown-flag", "y" * 10_000], "unrecognized arguments"),
])
def test_a_10000_character_value_is_echoed_cut(argv, words, run_cli):
    if argv[1] == "--unknown-flag":  # argparse's own error, once through a fresh `python -m gemmlib`
        p = _cli(*argv, timeout=60)
        rc, err = p.returncode, p.stderr
    else:
        rc, _, err = run_cli(argv)
    lines = err.splitlines()
    assert rc == 2 and len(lines) == 1 and words in lines[0], err[-500:]
    assert max(len(w) for w in lines[0].split()) <= 90 and len(lines[0]) <= 500, lines[0]  # no 10,000 x's
