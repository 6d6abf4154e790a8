"""The pipeline's row names every link its sends use, and the sends are timed over the slowest.

Megatron's rank order puts PP outermost: with TP 4 × PP 4 on two 8-GPU H100 nodes the stages hold GPUs 0-3,
4-7, 8-11 and 12-15, so the sends 0→4 and 8→12 stay inside a node (NVLink) and 4→8 crosses to the other node
(the network, one NIC per GPU pair). A pair of stages spans 8 GPUs, which fits a node, so one link for the
whole group read NVLink for all three and timed the crossing send at NVLink's rate. The CLI and the Estimator
page's Scale-out tab show the same rows (both read ``parallel.groups``).
"""

from __future__ import annotations

import contextlib
import io

import gemm_i18n
import pytest

from gemmlib.core.hardware import get_hardware
from gemmlib.llm import accounting
from gemmlib.llm.parallel import Parallel
from gemmlib.llm.presets import from_name
from gemmlib.llm.scaleout import estimate as scaleout_estimate
from gemmlib.views import estimator as view

H100 = get_hardware("h100")
IC = H100.interconnect
WL = accounting.Workload(batch=1, seq_len=512, new_tokens=4)


@pytest.fixture(autouse=True)
def _own_cache(bench_env):
    """The catalogue's links, not ones measured on this machine."""


def _boundaries(par: Parallel, node: int) -> list[str]:
    """Each stage boundary's kind, worked out from the GPU numbers alone: "node" if a send leaves its node."""
    stride = par.tp
    out = []
    for s in range(par.pp - 1):
        pairs = [(g, g + stride) for g in range(s * stride, (s + 1) * stride)]
        out.append("network" if any(a // node != b // node for a, b in pairs) else "scale-up")
    return out


def test_tp4_pp4_on_two_nodes_names_nvlink_and_the_network():
    par = Parallel(tp=4, pp=4)
    assert IC.gpus_per_node == 8 and IC.scale_up_gpus >= 8
    assert _boundaries(par, 8) == ["scale-up", "network", "scale-up"]
    links = par.pp_links(H100)
    assert [(link.busbw, n) for link, n in links] == [(IC.intra.busbw, 2), (IC.inter.busbw, 1)]
    assert "NVLink" in links[0][0].name and "InfiniBand" in links[1][0].name
    slowest = par.link("pp", H100)  # what the sends are timed over: the boundary that sets the stage period
    assert (slowest.busbw, slowest.latency_s) == (IC.inter.busbw, IC.inter.latency_s)
    rows = [r for r in par.placement(H100) if r["group"] == "pp"]
    assert [r["stage_boundaries"] for r in rows] == [2, 1]
    assert rows[0]["link"] == f"{links[0][0].name} (2 of the 3 stage boundaries)"
    assert rows[1]["link"] == f"{links[1][0].name} (1 of the 3 stage boundaries)"
    assert [r["busbw_bytes_per_s"] for r in rows] == [IC.intra.busbw, IC.inter.busbw]


def test_the_send_is_timed_over_the_network():
    est = scaleout_estimate(from_name("llama-2-7b"), WL, H100, Parallel(tp=4, pp=4))
    send = next(c for c in est.prefill.collectives if c.op == "send_recv")
    size = send.size_bytes
    # one point-to-point send of `size` bytes: the latency plus size over one NIC's rate (nccl-tests' sendrecv)
    assert send.time_s == pytest.approx(send.count * (IC.inter.latency_s + size / IC.inter.busbw), rel=1e-9)
    assert "InfiniBand" in send.link


@pytest.mark.parametrize("tp, pp, gpus_per_node", [(2, 4, None), (8, 2, None), (1, 2, None)])
def test_one_link_keeps_one_row(tp, pp, gpus_per_node):
    """All sends inside a node (TP 2 × PP 4 = 8), all across nodes (TP 8 × PP 2 = 16): one row, as before."""
    par = Parallel(tp=tp, pp=pp)
    rows = [r for r in par.placement(H100) if r["group"] == "pp"]
    assert len(rows) == 1 and "stage_boundaries" not in rows[0]
    want = IC.inter.busbw if tp * pp > IC.gpus_per_node else IC.intra.busbw
    assert rows[0]["busbw_bytes_per_s"] == want and "of the" not in rows[0]["link"]


def test_the_cli_and_the_page_show_the_same_rows():
    from gemmlib.cli import main

    out = io.StringIO()
    argv = ["estimate", "--preset", "llama-2-7b", "--gpus", "16", "--tp", "4", "--pp", "4", "--seq-len", "512",
            "--new-tokens", "4"]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(argv) == 0
    cli = [line.strip() for line in out.getvalue().splitlines() if line.strip().startswith("pp:")]
    assert len(cli) == 2 and "(2 of the 3 stage boundaries)" in cli[0] and "(1 of the 3 stage boundaries)" in cli[1]
    assert "NVLink" in cli[0] and "InfiniBand" in cli[1]

    zh = {m.id: m.string for m in gemm_i18n.read("zh") if isinstance(m.id, str) and m.string}
    inp = view.Inputs(preset="llama-2-7b", gpus=16, tp=4, pp=4, seq=512, new=4)
    est = view.estimate(inp, view.model(inp), H100)
    for gettext, words in ((lambda s: s, "of the 3 stage boundaries"), (lambda s: zh.get(s, s), "流水线阶段边界")):
        rows = [r for r in view.present(est, gettext=gettext, escape=str).scaleout.groups.rows if r["group"] == "PP"]
        assert len(rows) == 2 and all(words in r["link"] for r in rows)
        assert "NVLink" in rows[0]["link"] and "InfiniBand" in rows[1]["link"]
