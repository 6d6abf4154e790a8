"""`python -m gemmlib report --out d` where d holds an earlier report with a link planted among its files (README,
"Files given on the command line": d/charts/devices_ceilings.png -> ~/victim.png).

Before: the report ran its first section (the devices' ceilings: a worker, seconds of measuring, in the machine's
queue), wrote report.md, results.json and results.csv into d, and only then refused the link when it came to write
the chart. The README says output paths are checked before the run. Now: the same one line, exit 2, before any
section runs and with nothing written."""

from __future__ import annotations

import os

import pytest

from gemmlib.core.files import cut
from gemmlib.measure import report


@pytest.fixture
def no_section(monkeypatch):
    """Every section's work, recorded instead of run: the refusal must come before any of it."""
    ran: list[str] = []

    def section(device, quick, out_dir, progress=None, **kw):
        ran.append("devices")
        return {"title": "devices", "results": []}

    monkeypatch.setattr(report, "report_section", section)
    return ran


def _earlier_report(tmp_path):
    out = tmp_path / "d"
    (out / "charts").mkdir(parents=True)
    (out / "report.md").write_text("# an earlier report\n", encoding="utf-8")
    return out


@pytest.mark.parametrize("planted", ["charts/devices_ceilings.png", "results.json", "profile_trace_eager.json"])
def test_a_link_planted_in_an_earlier_report_is_refused_before_any_work(tmp_path, run_cli, no_section, planted):
    out = _earlier_report(tmp_path)
    victim = tmp_path / "victim.png"
    os.symlink(victim, out / planted)
    rc, stdout, err = run_cli(["report", "--out", str(out), "--quick", "--sections", "devices", "--device", "cpu"])
    assert rc == 2
    flag = {"charts/devices_ceilings.png": "the report's chart", "results.json": "the report's results.json",
            "profile_trace_eager.json": "the report's trace"}[planted]
    assert err.strip() == (f"error: {flag} {cut(out / planted)} is a symbolic link; refusing to replace it — give the "
                           "real path")
    assert no_section == []  # refused before the section ran
    assert {p.name for p in out.iterdir()} == {"charts", "report.md", planted.split("/")[0]}  # nothing written
    assert (out / "report.md").read_text(encoding="utf-8") == "# an earlier report\n"  # nothing rewritten
    assert not victim.exists()


def test_a_linked_charts_folder_is_refused_before_any_work(tmp_path, run_cli, no_section):
    out = tmp_path / "d"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, out / "charts")
    rc, _, err = run_cli(["report", "--out", str(out), "--quick", "--sections", "devices", "--device", "cpu"])
    assert rc == 2
    assert err.strip() == (f"error: the report's charts folder {cut(out / 'charts')} is a symbolic link; refusing to follow "
                           "it — give the real folder")
    assert no_section == [] and sorted(p.name for p in out.iterdir()) == ["charts"]
    assert list(elsewhere.iterdir()) == []


def test_an_earlier_report_of_regular_files_is_still_replaced(tmp_path, run_cli, no_section):
    out = _earlier_report(tmp_path)
    (out / "charts" / "devices_ceilings.png").write_bytes(b"old")
    rc, stdout, err = run_cli(["report", "--out", str(out), "--quick", "--sections", "devices", "--device", "cpu"])
    assert rc == 0, err
    assert no_section == ["devices"]
    assert "an earlier report" not in (out / "report.md").read_text(encoding="utf-8")
