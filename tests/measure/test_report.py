"""`python -m gemmlib report`: sections run in order, files written, failures contained."""

import json
import sys
import types
from pathlib import Path

import pytest

from gemmlib.cli import main
from gemmlib.core import ceilings
from gemmlib.core.errors import InputError
from gemmlib.core.results import clear_recorded
from gemmlib.measure import devices, report
from gemmlib.measure import precision as bench_precision


@pytest.fixture(autouse=True)
def _small(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path / "cache"))
    ceilings.clear_ceilings()
    monkeypatch.setattr(devices, "ceiling_plan", lambda device, quick=False: (64, 1024**2))
    monkeypatch.setattr(bench_precision, "default_shapes", lambda device, quick=False: ((48, 32, 16, "tiny"),))
    yield
    ceilings.clear_ceilings()


def test_devices_and_precision_sections_write_every_file(tmp_path):
    out = tmp_path / "rep"
    lines = []
    doc = report.run_report(out, device="cpu", quick=True, sections=("devices", "precision"), progress=lines.append)
    for name in ("results.json", "results.csv", "report.md"):
        assert (out / name).is_file()
    saved = json.loads((out / "results.json").read_text())
    assert saved["device"] == "cpu" and saved["quick"] is True
    assert [s["name"] for s in saved["sections"]] == ["devices", "precision"]
    dev, prec = saved["sections"]
    assert dev["ceilings"]["peaks"]["fp32"] > 0
    assert {r["name"] for r in prec["results"]} >= {"fp32", "tf32", "int8"}
    # the precision section ran after the ceilings, so it knows the measured peak
    fp32 = next(r for r in prec["results"] if r["name"] == "fp32")
    assert fp32["extra"]["peak_measured_tflops"] == pytest.approx(dev["ceilings"]["peaks"]["fp32"] / 1e12)
    md = (out / "report.md").read_text()
    assert md.startswith("# GEMM report") and "**Verdict:** INT8" in md and "## Devices and measured ceilings" in md
    for rel in list(dev["charts"].values()) + list(prec["charts"].values()):
        assert (out / rel).is_file() and rel in md
    csv_rows = (out / "results.csv").read_text().strip().splitlines()
    assert len(csv_rows) == 1 + len(dev["results"]) + len(prec["results"])
    assert any("precision: done" in s for s in lines)
    assert doc["sections"][1]["verdict"].startswith("INT8")


def test_a_failing_section_is_reported_and_the_rest_runs(tmp_path, monkeypatch):
    broken = types.ModuleType("gemmlib_test_broken")

    def boom(device, quick, out_dir, progress):
        raise RuntimeError("kaboom")

    broken.report_section = boom
    monkeypatch.setitem(sys.modules, "gemmlib_test_broken", broken)
    monkeypatch.setattr(report, "SECTIONS", (("broken", "gemmlib_test_broken"), ("missing", "gemmlib_no_such_module"),
                                             ("precision", "gemmlib.measure.precision")))
    doc = report.run_report(tmp_path / "r", device="cpu", quick=True)
    by = {s["name"]: s for s in doc["sections"]}
    assert by["broken"]["error"] == "RuntimeError: kaboom"
    assert by["missing"]["skipped"] == "not written yet"
    assert by["precision"]["results"]
    assert "**This section failed:** `RuntimeError: kaboom`" in (tmp_path / "r" / "report.md").read_text()


def test_time_budget_skips_sections_not_started(tmp_path):
    doc = report.run_report(tmp_path / "r", device="cpu", quick=True, sections=("precision",), time_budget_s=1e-9)
    assert "time budget" in doc["sections"][0]["skipped"]


def test_bad_arguments(tmp_path, capsys):
    assert main(["report", "--out", str(tmp_path / "x"), "--sections", "nope"]) == 2
    assert "unknown section" in capsys.readouterr().err
    f = tmp_path / "file"
    f.write_text("x")
    assert main(["report", "--out", str(f)]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert main(["report", "--out", str(tmp_path / "y"), "--device", "tpu"]) == 2
    with pytest.raises(SystemExit) as e:  # refused while parsing (a checked number), argparse's exit
        main(["report", "--out", str(tmp_path / "y"), "--time-budget", "-1"])
    assert e.value.code == 2


def test_report_cli_exit_code_and_summary(tmp_path, capsys):
    assert main(["report", "--out", str(tmp_path / "c"), "--quick", "--device", "cpu", "--sections", "precision"]) == 0
    assert "report written to" in capsys.readouterr().out
    clear_recorded()


_KILLED_REPORT = r"""
import sys, time, types  # noqa: E401
from gemmlib.core.results import BenchResult
from gemmlib.measure import report

def quick(device, quick, out_dir, progress):
    r = BenchResult("test", "first row", device, "cpu", "fp32", {"m": 1}, 2.0, 8.0, median_s=1e-3)
    return {"title": "A quick section", "results": [r], "markdown": "the quick section's text"}

def hangs(device, quick, out_dir, progress):
    time.sleep(120)  # a section that outlives the caller's time limit

sys.modules["gemmlib_test_quick"] = types.SimpleNamespace(report_section=quick)
sys.modules["gemmlib_test_hangs"] = types.SimpleNamespace(report_section=hangs)
report.SECTIONS = (("quick", "gemmlib_test_quick"), ("hangs", "gemmlib_test_hangs"))
report.run_report(sys.argv[1], device="cpu", progress=lambda s: print(s, flush=True))
"""


def test_a_report_killed_in_a_late_section_keeps_the_sections_before_it(tmp_path):
    # The GPU script stops the report at its time limit: what finished must be on disk already.
    import os
    import signal
    import subprocess
    import time

    out = tmp_path / "killed"
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_REPORT, str(out)], cwd=root, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env={**os.environ, "PYTHONPATH": str(root)})
    try:
        deadline = time.monotonic() + 60
        for line in proc.stdout:  # wait until the hanging section has started
            if "hangs: running" in line or time.monotonic() > deadline:
                break
        time.sleep(0.5)
        assert proc.poll() is None, "the report should still be inside the hanging section"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    saved = json.loads((out / "results.json").read_text())
    first, second = saved["sections"]
    assert first["name"] == "quick" and first["results"][0]["name"] == "first row" and "running" not in first
    assert second["name"] == "hangs" and "stopped while this section ran" in second["running"]
    md = (out / "report.md").read_text()
    assert "the quick section's text" in md and "## A quick section" in md
    assert "first row" in (out / "results.csv").read_text()


# ----------------------------------------------------------------------------- one deadline for the whole report
class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_a_section_stops_at_its_share_on_a_fake_clock_and_the_next_gets_the_rest(tmp_path, monkeypatch):
    # Three shapes of six formats; every precision step costs 4 s on the fake clock, the budget is 10 s for two
    # sections: precision's share is 5 s, it measures until then, the rest of its rows say why and are listed as
    # left out; tiling is not skipped but gets what is left.
    monkeypatch.setattr(bench_precision, "default_shapes",
                        lambda device, quick=False: ((16, 16, 16, "a"), (24, 16, 8, "b"), (8, 8, 8, "c")))
    clock = FakeClock()
    lines = []

    def progress(line):
        lines.append(line)
        if line.startswith("precision: [") and clock.t < 5.0:  # a measured step; the skipped ones cost nothing
            clock.t += 4.0

    doc = report.run_report(tmp_path / "r", device="cpu", quick=True, sections=("precision", "tiling"),
                            time_budget_s=10.0, clock=clock, progress=progress)
    prec, tiling = doc["sections"]
    reason = "skipped: the precision section's share (5 s) of the report's time budget of 10 s was spent (--time-budget)"
    measured = [r for r in prec["results"] if r["median_s"]]
    stopped = [r for r in prec["results"] if r["reason"] == reason]
    assert measured and stopped and len(measured) + len(stopped) <= len(prec["results"])
    # left out: the shapes its plan put past 80 % of the share (none is this run's first), then the rows it stopped
    planned = [x for x in prec["left_out"] if x.endswith("(its plan did not fit the section's share)")]
    assert prec["share_s"] == 5.0 and len(prec["left_out"]) == len(planned) + len(stopped)
    assert not any(x.startswith("a ") for x in planned)
    assert prec["left_out"][len(planned)].startswith(stopped[0]["name"] + " (m ")
    # nothing was measured after the share: every stopped row comes after every measured one
    rows = prec["results"]
    assert max(rows.index(r) for r in measured) < min(rows.index(r) for r in stopped)
    assert "skipped" not in tiling and tiling["share_s"] == pytest.approx(10.0 - clock.t, abs=0.1)
    assert any(r["median_s"] for r in tiling["results"])
    md = (tmp_path / "r" / "report.md").read_text()
    assert "*Cut to fit its share (5 s) of the report's time budget of 10 s; left out: " in md
    assert any(line.startswith("precision: cut to fit its share of the time budget; left out: ") for line in lines)


def test_each_section_gets_its_share_of_what_is_left(tmp_path, monkeypatch):
    seen = []
    clock = FakeClock()

    def make(name, spends):
        def section(device, quick, out_dir, progress, deadline=None):
            seen.append((name, deadline))
            clock.t += spends
            return {"title": name, "results": [], "markdown": name}
        return types.SimpleNamespace(report_section=section)

    def old_style(device, quick, out_dir, progress):  # a section without the keyword still runs
        seen.append(("old", None))
        return {"title": "old", "results": [], "markdown": "old"}

    monkeypatch.setitem(sys.modules, "gemmlib_test_one", make("one", 10.0))
    monkeypatch.setitem(sys.modules, "gemmlib_test_two", make("two", 0.0))
    monkeypatch.setitem(sys.modules, "gemmlib_test_old", types.SimpleNamespace(report_section=old_style))
    monkeypatch.setattr(report, "SECTIONS", (("one", "gemmlib_test_one"), ("old", "gemmlib_test_old"),
                                             ("two", "gemmlib_test_two")))
    doc = report.run_report(tmp_path / "r", device="cpu", time_budget_s=90.0, clock=clock)
    (_, d1), old, (_, d2) = seen
    assert isinstance(d1, report.Share) and isinstance(d2, report.Share) and old == ("old", None)
    assert d1.report is d2.report and d1.seconds == 30.0  # 90 s among three sections
    assert d2.seconds == 80.0  # one spent 10 s, old none: the rest is two's
    assert [x.get("share_s") for x in doc["sections"]] == [30.0, 40.0, 80.0]
    clock.t = 85.0
    assert d2.remaining() == pytest.approx(5.0)  # never past the report's own deadline
    seen.clear()
    report.run_report(tmp_path / "r2", device="cpu")  # no budget: each run keeps the server's own limit
    assert seen[0][1] is None
    # named sections run in the order named (the GPU script puts its targets' sections first), each once
    seen.clear()
    doc = report.run_report(tmp_path / "r3", device="cpu", sections=("two", "one", "two"))
    assert [n for n, _ in seen] == ["two", "one"] and [x["name"] for x in doc["sections"]] == ["two", "one"]


def test_a_sections_left_out_points_are_in_the_json_the_markdown_and_the_output(tmp_path, monkeypatch):
    def section(device, quick, out_dir, progress, deadline=None):
        return {"title": "Cut", "results": [], "markdown": "the rows", "left_out": ["tile 1024 at 4096³"]}

    monkeypatch.setitem(sys.modules, "gemmlib_test_cut", types.SimpleNamespace(report_section=section))
    monkeypatch.setattr(report, "SECTIONS", (("cut", "gemmlib_test_cut"),))
    lines = []
    doc = report.run_report(tmp_path / "r", device="cpu", time_budget_s=20.0, clock=FakeClock(),
                            progress=lines.append)
    assert doc["sections"][0]["left_out"] == ["tile 1024 at 4096³"]
    saved = json.loads((tmp_path / "r" / "results.json").read_text())
    assert saved["sections"][0]["left_out"] == ["tile 1024 at 4096³"]
    assert ("*Cut to fit its share (20 s) of the report's time budget of 20 s; left out: tile 1024 at 4096³.*"
            in (tmp_path / "r" / "report.md").read_text())
    assert "cut: cut to fit its share of the time budget; left out: tile 1024 at 4096³" in lines


def _expired() -> report.Budget:
    clock = FakeClock()
    b = report.Budget(1.0, clock)
    clock.t = 2.0
    return b


def test_each_section_hands_the_deadline_to_its_runs(tmp_path):
    from gemmlib.measure import batching, profiler, tiling

    d = _expired()
    why = d.reason()
    out = tmp_path / "sec"
    out.mkdir()
    for mod in (bench_precision, tiling, batching):
        sec = mod.report_section("cpu", True, out, None, deadline=d)
        rows = [r for r in sec["results"] if r.bench != "ceiling"]
        assert rows and all(not r.supported and r.reason == why for r in rows), mod.__name__
    sec = profiler.report_section("cpu", True, out, None, deadline=d)
    assert sec["results"] and all(not r.supported and why in r.reason for r in sec["results"])
    sec = report.report_section("cpu", True, out, None, deadline=d)  # the devices section's ceilings
    assert sec["ceilings"]["peaks"] == {} and sec["ceilings"]["bandwidth"] is None
    assert ceilings.find("cpu", sec["ceilings"]["device_name"]) is None  # a cut run replaces nothing


def test_each_gpu_section_records_the_machine_state_and_flags_dropped_clocks(tmp_path, monkeypatch):
    # A "GPU" report on stand-ins: fake NVML readings before and after each section, fake sections.
    from gemmlib.measure import harness, monitor

    monkeypatch.setattr(harness, "torch_device_available", lambda d: (True, ""))
    monkeypatch.setattr(harness, "device_name", lambda d: "NVIDIA H200")
    monkeypatch.setattr(monitor, "nvml_index_for_torch_device", lambda *a: 0)
    monkeypatch.setattr(monitor, "software_versions", lambda: {"driver": "570.86.15", "cublas": "12.8.4",
                                                               "persistence_mode": True, "nccl": None})
    clocks = iter([1980.0, 1975.0, 1980.0, 1500.0])  # steady section, then one whose clocks fell

    def reading(index):
        return {"available": True, "sm_clock_mhz": next(clocks), "clock_reasons": []}

    monkeypatch.setattr(monitor, "machine_state", reading)

    def section(device, quick, out_dir, progress):
        return {"title": "A GPU section", "results": [], "markdown": "its table"}

    for n in ("steady", "hot"):
        monkeypatch.setitem(sys.modules, f"gemmlib_test_{n}", types.SimpleNamespace(report_section=section))
    monkeypatch.setattr(report, "SECTIONS", (("steady", "gemmlib_test_steady"), ("hot", "gemmlib_test_hot")))
    doc = report.run_report(tmp_path / "g", device="cuda")
    steady, hot = doc["sections"]
    assert steady["machine"]["flags"] == [] and steady["machine"]["before"]["sm_clock_mhz"] == 1980.0
    assert hot["machine"]["flags"] == ["SM clock dropped from 1980 to 1500 MHz (-24%)"]
    assert doc["versions"]["cublas"] == "12.8.4" and "nccl" not in doc["versions"]
    md = (tmp_path / "g" / "report.md").read_text()
    assert md.count("**Machine state:**") == 1 and "SM clock dropped from 1980 to 1500 MHz" in md
    assert "driver 570.86.15" in md and "cublas 12.8.4" in md and "persistence mode on" in md


def test_a_report_is_not_written_among_other_files(tmp_path, capsys):
    """`report --out DIR` rewrites a report's own files (an earlier report in DIR is replaced) and refuses a folder
    holding anything else, before any work: it once mixed its files among a folder's others and replaced a
    results.json that was not a report's, without a word. Checked on the command line and in run_report."""

    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "README.md").write_text("keep", encoding="utf-8")
    (folder / "results.json").write_text("keep", encoding="utf-8")
    assert main(["report", "--quick", "--sections", "devices", "--device", "cpu", "--out", str(folder)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: --out {folder} holds files that are not a report's (README.md); give an empty or new folder, or one "
        "that holds only an earlier report (its report.md, results.json, results.csv and charts/ are replaced)")
    assert (folder / "results.json").read_text(encoding="utf-8") == "keep"  # nothing touched
    with pytest.raises(InputError, match="README.md"):
        report.run_report(folder, device="cpu", sections=("devices",))
    earlier = tmp_path / "earlier"  # a folder holding only a report's files (and hidden ones) is taken
    (earlier / "charts").mkdir(parents=True)
    for name in ("report.md", "results.csv", ".keep"):
        (earlier / name).write_text("old", encoding="utf-8")
    report.check_report_folder(earlier)
    report.check_report_folder(tmp_path / "new")  # not there yet


# ----------------------------------------------------------------------------- a section cut to its share (GPU branch, faked)
class _Left:
    """A section's deadline with ``seconds`` left (on a clock that does not move)."""

    def __init__(self, seconds):
        self.seconds = seconds

    def remaining(self):
        return self.seconds

    def expired(self):
        return self.seconds <= 0

    def reason(self):
        return "skipped: the share was spent"


def _row(bench, name, device="cuda", **shape):
    from gemmlib.core.results import BenchResult, Timing

    r = BenchResult(bench, name, device, "Fake GPU", shape.pop("dtype", "fp16"), shape, 2e12, 1e9)
    r.set_timing(Timing(1e-3, 1e-3, 1e-3, 10, "fake"))
    return r


def test_plan_fit_keeps_the_target_points_and_spreads_the_rest():
    from gemmlib.measure import plan

    assert plan.spread_order(8) == [0, 7, 3, 1, 5, 2, 4, 6] and plan.spread_order(1) == [0]
    cost = sum  # each point costs its value
    assert plan.fit([1, 2, 4, 8, 16, 32], cost, 20, keep=lambda p: p == 1) == ([1, 2, 4, 8], [16, 32])
    assert plan.fit([1, 2, 4], cost, float("inf")) == ([1, 2, 4], [])
    assert plan.fit([50, 60], cost, 1.0) == ([50], [60])  # nothing fits: the first point runs anyway
    assert plan.fit([5, 1, 50], cost, 1.0, keep=lambda p: p == 50) == ([50], [5, 1])  # a target whatever it costs
    assert plan.fit([5, 1, 50], cost, 52.0, keep=lambda p: p == 50) == ([1, 50], [5])
    assert plan.share_s(None) == float("inf") and plan.share_s(_Left(10.0)) == pytest.approx(10 * plan.FIT_SHARE)


def test_the_tiling_section_keeps_the_cublas_and_triton_rows_and_names_the_tiles_it_left_out(tmp_path, monkeypatch):
    from gemmlib.measure import tiling

    ran = {}

    def fake_run(cfg, progress=None, deadline=None):
        ran["tiles"] = cfg.tiles
        return ([_row("tiling", "torch", m=4096, n=4096, k=4096), _row("tiling", "triton", m=4096, n=4096, k=4096)]
                + [_row("tiling", "triton", m=4096, n=4096, k=4096, tile=t) for t in cfg.tiles])

    def fake_waves(device, m, k, ns, **kw):
        ran["ns"] = list(ns)
        return [_row("tiling-waves", "torch", m=m, n=nn, k=k) for nn in ns]

    monkeypatch.setattr(tiling, "run_tiling", fake_run)
    monkeypatch.setattr(tiling, "run_wave_sweep", fake_waves)
    # the plans: 5 s plus 10 s a tile; 4 s a wave point
    monkeypatch.setattr(tiling, "plan_tiling", lambda cfg, lim: types.SimpleNamespace(seconds=5 + 10 * len(cfg.tiles)))
    monkeypatch.setattr(tiling, "plan_waves", lambda cfg, lim: types.SimpleNamespace(seconds=4 * len(cfg.ns)))
    sec = tiling.report_section("cuda", False, tmp_path, None, deadline=_Left(50.0))
    # 50 s left: 40 s planned, 24 s of it for the tiles: one tile (15 s), the others left out and named
    assert ran["tiles"] == (32,)
    assert sec["verdict"]["triton_share_of_cublas"] == pytest.approx(1.0)  # the 85 % target's rows ran
    assert [x.split(" at")[0] for x in sec["left_out"][:5]] == ["tile 64", "tile 128", "tile 256", "tile 512",
                                                                 "tile 1024"]
    # the wave sweep: 17 points of 4 s in 40 s: 10 of them, both ends kept
    assert len(ran["ns"]) == 10 and ran["ns"][0] == 8192 and ran["ns"][-1] == 8320
    assert sum(x.startswith("wave sweep N = ") for x in sec["left_out"]) == 7
    ran.clear()
    sec = tiling.report_section("cuda", False, tmp_path, None, deadline=None)  # no budget: nothing cut
    assert ran["tiles"] == (32, 64, 128, 256, 512, 1024) and len(ran["ns"]) == 17 and sec["left_out"] == []


def test_the_batching_section_runs_its_target_points_first_and_cuts_the_rest(tmp_path, monkeypatch):
    from gemmlib.measure import batching

    order = []

    def fake_run(cfg, progress=None, deadline=None):
        order.append((cfg.m, cfg.k, cfg.batches))
        return [_row("batching", mode, m=cfg.m, k=cfg.k, n=cfg.n, batch=b) for b in cfg.batches for mode in cfg.modes]

    monkeypatch.setattr(batching, "run_batching", fake_run)
    monkeypatch.setattr(batching, "copy_bandwidth", lambda device: order.append("copy") or
                        {"bytes_per_s": 4e12, "source": "fake"})
    monkeypatch.setattr(batching, "run_article_example", lambda *a, **k: pytest.fail("the article did not fit"))
    monkeypatch.setattr(batching, "plan_batching",
                        lambda cfg, lim: types.SimpleNamespace(seconds=2.0 * len(cfg.batches)))
    monkeypatch.setattr(batching, "plan_article", lambda cfg, lim: types.SimpleNamespace(seconds=100.0))
    sec = batching.report_section("cuda", False, tmp_path, None, deadline=_Left(30.0))
    dec_m = batching.gpu_decode_defaults().m
    # the decode sweep (batch 1 kept), then the 8192² weight and the copy, then the prefill sweep
    assert order[0][0] == dec_m and order[0][2][0] == 1
    assert order[1] == (1, 8192, (1,)) and order[2] == "copy" and order[3][0] == batching.gpu_prefill_defaults().m
    assert f"decode_{batching.gpu_decode_defaults().k}_share_of_copy" in sec["verdict"]
    assert "decode_8192_share_of_copy" in sec["verdict"] and "article_speedup" not in sec["verdict"]
    assert any(x.startswith("the article's example") for x in sec["left_out"])
    assert any(x.startswith("decode batch ") for x in sec["left_out"])
    # 24 s planned, 3 s for the targets: 10.5 s for the decode sweep (5 batches of 2 s)
    assert len(order[0][2]) == 5


def test_a_second_report_into_the_same_folder_takes_the_profilers_traces(tmp_path, monkeypatch):
    """The profiler section writes its Chrome traces (profile_trace_<attention>.json) into the report's folder: a
    second report there (scripts/gpu_report.sh run again with the same OUT) was refused before any work, as if the
    traces were someone else's files."""
    from gemmlib.measure import profiler

    tiny = profiler.preset_config("llama-3-8b", 64, seq_len=16, layers=1)
    monkeypatch.setattr(profiler, "report_configs", lambda device, quick: [tiny])
    out = tmp_path / "rep"
    report.run_report(out, device="cpu", quick=True, sections=("profiler",))
    assert (out / "profile_trace_eager.json").is_file()
    report.check_report_folder(out)  # the report's own files, traces included
    doc = report.run_report(out, device="cpu", quick=True, sections=("profiler",))
    assert "error" not in doc["sections"][0]
    (out / "profile_trace_notes.txt").write_text("mine", encoding="utf-8")  # anything else still refuses
    with pytest.raises(InputError, match="profile_trace_notes.txt"):
        report.check_report_folder(out)
