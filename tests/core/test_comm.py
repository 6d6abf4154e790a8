"""Collectives on paper against nccl-tests' conventions (doc/PERFORMANCE.md) and measured figures."""

import pytest

from gemmlib.core import comm
from gemmlib.core.errors import InputError


@pytest.mark.parametrize("op, n, factor", [("all_reduce", 8, 2 * 7 / 8), ("all_gather", 8, 7 / 8),
                                           ("reduce_scatter", 4, 3 / 4), ("all_to_all", 16, 15 / 16),
                                           ("broadcast", 8, 1.0), ("send_recv", 2, 1.0), ("all_reduce", 1, 0.0)])
def test_bus_factors(op, n, factor):
    assert comm.bus_factor(op, n) == factor


def test_measured_busbw_reads_as_nccl_tests_reports_it():
    """aiconfigurator's sweep, 8 × H100 SXM, all_reduce of 536,870,912 B in 2111.1 µs: algbw 254, busbw 445 GB/s."""
    alg, bus = comm.bus_bandwidth("all_reduce", 536870912, 8, 2111.1e-6)
    assert alg / 1e9 == pytest.approx(254.3, abs=0.1) and bus / 1e9 == pytest.approx(445.0, abs=0.1)


def test_collective_time_and_links():
    link = comm.Link("NVLink", "nvswitch", 450e9, 15e-6, "test")
    assert link.time("all_reduce", 1e9, 8) == pytest.approx(15e-6 + 1e9 * 1.75 / 450e9)
    assert link.time("send_recv", 1e9, 2) == pytest.approx(15e-6 + 1e9 / 450e9)
    assert link.time("all_reduce", 1e9, 1) == 0.0
    for bad in (lambda: comm.Link("x", "carrier pigeon", 1.0, 0.0), lambda: comm.Link("x", "pcie", 0.0, 0.0),
                lambda: comm.bus_factor("all_scatter", 2), lambda: comm.bus_factor("all_reduce", 0)):
        with pytest.raises(InputError):
            bad()
