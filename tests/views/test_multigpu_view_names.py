"""The names of measured interconnects and measured rows, shown in the reader's language.

``gemmlib.core.interconnect`` and ``gemmlib.core.ceilings`` name what was measured in English ("gloo, 2 CPU
processes on AMD EPYC (measured interconnect; not a GPU link)", "AMD EPYC (measured)"): they are also what the
command line takes. The Chinese Multi-GPU page showed them in English in its estimate, its pickers and its
"kept as" line. ``name_label`` recognises every name those modules write and words it through the catalogue.
"""

from __future__ import annotations

import pytest

from gemmlib.core import interconnect
from gemmlib.core.i18n import Text
from gemmlib.views import multigpu as view


def _marked(template: str) -> str:  # a "translation" that shows which template was used
    return "<" + template + ">"


@pytest.mark.parametrize("backend, device, nproc, nodes", [
    ("gloo", "AMD EPYC 7B13 64-Core Processor", 2, 1), ("gloo", "Some CPU (v2), rev. 3", 4, 2),
    ("nccl", "NVIDIA H100 80GB HBM3", 8, 1), ("nccl", "NVIDIA H200", 16, 2)])
def test_every_measured_link_name_is_recognised_and_reads_the_same_in_english(backend, device, nproc, nodes):
    m = interconnect.MeasuredInterconnect(backend, "cpu" if backend == "gloo" else "cuda", device, nproc,
                                          busbw=1e9, latency_s=1e-5, nodes=nodes)
    assert view.name_label(m.name) == m.name
    shown = view.name_label(m.name, _marked)
    assert shown.startswith("<") and device in shown and str(nproc) in shown
    assert (f"{nodes} nodes" in shown) == (nodes > 1)


def test_a_measured_row_and_the_estimates_hardware_are_worded_with_their_name():
    assert view.name_label("AMD EPYC (measured)") == "AMD EPYC (measured)"
    assert view.name_label("AMD EPYC (measured)", _marked) == "<AMD EPYC (measured)>"  # "{name} (measured)" filled
    hw = Text("{name} ÷ {n} (one rank's cores)", name=Text("AMD EPYC (measured)"), n=2)  # as tp.estimate_layer
    assert view.hardware_label(hw) == str(hw)
    assert view.hardware_label(hw, _marked) == "<<AMD EPYC (measured)> ÷ 2 (one rank's cores)>"
    zh = {"{name} (measured)": "{name}（实测）", "{name} ÷ {n} (one rank's cores)": "{name} ÷ {n}（一个 rank 的核心）"}
    assert view.hardware_label(hw, lambda t: zh.get(t, t)) == "AMD EPYC（实测） ÷ 2（一个 rank 的核心）"
    assert view.name_label("shared memory (gloo)", _marked) == "<shared memory (gloo)>"  # a catalogue name
