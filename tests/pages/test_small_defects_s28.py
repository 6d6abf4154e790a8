"""Small defects seen by users and reviewers (brief s28 D), the ones proved with the app's packages.

2. A measured link's name ("gloo, 2 CPU processes on AMD EPYC (measured interconnect; not a GPU link)") and a
   measured row's ("AMD EPYC (measured)") were built as English strings and parsed back with regular expressions
   by the Multi-GPU page's presenter to show them in Chinese. They are now built as Texts (their English
   unchanged: files, JSON and the command line read the same), and one reader in gemmlib.core.interconnect reads
   back the plain English names earlier versions wrote.
"""

from __future__ import annotations

import json

import gemm_i18n
import pytest

from gemmlib.core import ceilings, interconnect
from gemmlib.core.i18n import Text
from gemmlib.views import multigpu as view

ZH = {m.id: m.string for m in gemm_i18n.read("zh") if isinstance(m.id, str) and m.id}


def zh(template: str) -> str:
    return ZH.get(template) or template


# ------------------------------------------------------------------------------------------ 2: measured names
@pytest.mark.parametrize("backend, device, nproc, nodes, english", [
    ("gloo", "AMD EPYC 7B13", 2, 1, "gloo, 2 CPU processes on AMD EPYC 7B13 (measured interconnect; not a GPU link)"),
    ("gloo", "Xeon (v2)", 4, 3, "gloo, 4 CPU processes on Xeon (v2) (3 nodes, measured interconnect; not a GPU link)"),
    ("nccl", "NVIDIA H100 80GB HBM3", 8, 1, "8 × NVIDIA H100 80GB HBM3, NCCL (measured interconnect)"),
    ("nccl", "NVIDIA H200", 16, 2, "16 × NVIDIA H200, NCCL (2 nodes, measured interconnect)")])
def test_a_measured_link_keeps_what_its_name_is_built_from(backend, device, nproc, nodes, english):
    m = interconnect.MeasuredInterconnect(backend, "cpu" if backend == "gloo" else "cuda", device, nproc,
                                          busbw=1e9, latency_s=1e-5, nodes=nodes)
    assert m.name == english and m.link().name == english  # files, JSON, --interconnect: the same English
    assert json.loads(json.dumps({"name": m.name})) == {"name": english}
    assert isinstance(m.name, Text) and m.name.msg.params["n"] == nproc  # its values, not its English, are read
    shown = view.name_label(m.name, zh)
    assert shown != english and device in shown and str(nproc) in shown and ("measured" not in shown), shown
    assert "实测" in shown
    # an earlier version's JSON (a collectives run's "saved": {"name": ...}) holds the English: read back once
    assert view.name_label(english, zh) == shown


def test_a_measured_row_is_a_text_and_reads_in_chinese():
    c = ceilings.Ceilings.from_dict({"device": "cpu", "device_name": "AMD EPYC", "peaks": {"fp32": 1e12},
                                     "bandwidth": 1e11})
    name = c.hardware().name
    assert name == "AMD EPYC (measured)" and isinstance(name, Text)
    assert view.name_label(name, zh) == "AMD EPYC（实测）" == view.name_label("AMD EPYC (measured)", zh)
    assert view.name_label("shared memory (gloo)", zh) == zh("shared memory (gloo)")  # a catalogue name
    assert interconnect.name_text("shared memory (gloo)") == "shared memory (gloo)"

