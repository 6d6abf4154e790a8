"""Small defects seen by users and reviewers (brief s28 D), the ones proved with the app's packages.

2. A measured link's name ("gloo, 2 CPU processes on AMD EPYC (measured interconnect; not a GPU link)") and a
   measured row's ("AMD EPYC (measured)") were built as English strings and parsed back with regular expressions
   by the Multi-GPU page's presenter to show them in Chinese. They are now built as Texts (their English
   unchanged: files, JSON and the command line read the same), and one reader in gemmlib.core.interconnect reads
   back the plain English names earlier versions wrote.
3. Opening a link with an option's value (/Roofline?rf_hw=H200+SXM, /Profiler?pf_hw=…) logged "The widget with key
   … was created with a default value but also had its value set via the Session State API" in the server log:
   ui.url set the session's value and passed the widget its index= too. The value, the default and the note for
   a bad value are as before, and nothing is logged.
"""

from __future__ import annotations

import json
from pathlib import Path

import gemm_i18n
import pytest
from streamlit.testing.v1 import AppTest

from gemmlib.core import ceilings, interconnect
from gemmlib.core.i18n import Text
from gemmlib.views import multigpu as view

ROOT = Path(__file__).resolve().parents[2]
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


# ------------------------------------------------------------------------------------------ 3: widget warning

def _roofline(**query) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / "9_Roofline.py"), default_timeout=120)
    at.query_params.update(query)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_link_chooses_an_option_and_nothing_is_logged(widget_warnings):
    at = _roofline(rf_hw="H200 SXM")  # not the page's default row (its index= is not 0)
    assert at.selectbox(key="rf_hw").value == "H200 SXM"
    at.run()  # the next run passes index= again: the widget keeps the link's value
    assert at.selectbox(key="rf_hw").value == "H200 SXM"
    at.selectbox(key="rf_hw").set_value("A100 SXM 80GB").run()
    assert at.selectbox(key="rf_hw").value == "A100 SXM 80GB" and at.query_params["rf_hw"] in ("A100 SXM 80GB", ["A100 SXM 80GB"])
    assert not widget_warnings, widget_warnings


def test_no_link_gives_the_default_and_a_bad_link_value_its_note(widget_warnings):
    default = _roofline().selectbox(key="rf_hw").value
    at = _roofline(rf_hw="no such GPU")
    assert at.selectbox(key="rf_hw").value == default != "no such GPU"
    assert any("rf_hw=no such GPU" in w.value and "is not one of the choices" in w.value
               for w in [*at.warning, *at.info, *at.caption, *at.markdown]), "no note for the bad value"
    assert not widget_warnings, widget_warnings
