"""Collectives on paper: how long an all-reduce (all-gather, ...) over n ranks takes on a link.

The conventions are nccl-tests' (``doc/PERFORMANCE.md``), so a measured figure and an estimate
read the same way:

* ``size`` is the number of bytes nccl-tests reports for the operation: the buffer for an
  all-reduce and a broadcast, the whole output of an all-gather, the whole input of a
  reduce-scatter, and everything one rank sends to the others and itself for an all-to-all.
* algorithm bandwidth ``algbw = size / time``; bus bandwidth ``busbw = algbw × factor`` with the
  ring factor of :func:`bus_factor`: 2(n−1)/n for an all-reduce, (n−1)/n for all-gather,
  reduce-scatter and all-to-all, 1 for a broadcast and a point-to-point send/receive. busbw is what the link carries per rank,
  comparable across n and operations, and what a :class:`Link` states.
* The time of one collective: ``latency + size × factor / busbw`` (0 on one rank).

Links are the bus bandwidth a collective achieves per GPU over NVLink/NVSwitch inside a node,
InfiniBand/RoCE between nodes, or PCIe, each with its source. No torch here: the measuring side
(``gemmlib.measure``) reports in the same units.
"""

from __future__ import annotations

from dataclasses import dataclass

from gemmlib.core.errors import InputError
from gemmlib.core.i18n import N_

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "send_recv")
# Each collective's name as a page shows it (N_: the identifier itself in English, the usual name in
# the reader's language); data, the CLI and the report keep the identifiers.
COLLECTIVE_LABELS = {"all_reduce": N_("all_reduce"), "all_gather": N_("all_gather"),
                     "reduce_scatter": N_("reduce_scatter"), "all_to_all": N_("all_to_all"),
                     "broadcast": N_("broadcast"), "send_recv": N_("send_recv")}
LINK_KINDS = ("nvlink", "nvswitch", "xgmi", "pcie", "infiniband", "roce", "ethernet", "gloo", "measured")


def _check_op(op: str) -> str:
    if op not in COLLECTIVES:
        raise InputError(f"unknown collective {op!r}; one of {', '.join(COLLECTIVES)}")
    return op


def _check_ranks(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InputError(f"the number of ranks must be a whole number ≥ 1, got {n!r}")
    return n


def bus_factor(op: str, n: int) -> float:
    """nccl-tests' bus-bandwidth factor of ``op`` over ``n`` ranks (0 for one rank)."""
    _check_op(op)
    n = _check_ranks(n)
    if n == 1:
        return 0.0
    if op == "all_reduce":
        return 2 * (n - 1) / n
    if op in ("broadcast", "send_recv"):  # nccl-tests: BroadcastGetBw, SendRecvGetBw use factor 1
        return 1.0
    return (n - 1) / n


def bus_bandwidth(op: str, size_bytes: float, n: int, time_s: float) -> tuple[float, float]:
    """(algbw, busbw) in bytes/s of a measured collective: size / time and that × the bus factor."""
    if not time_s > 0:
        raise InputError(f"a collective's time must be positive, got {time_s!r}")
    alg = float(size_bytes) / time_s
    return alg, alg * bus_factor(op, n)


@dataclass(frozen=True)
class Link:
    """One kind of connection between GPUs, as a collective sees it.

    ``busbw`` is the bus bandwidth (bytes/s per GPU) a large collective reaches over it;
    ``latency_s`` the fixed cost of one collective; ``source`` where the figures come from.
    """

    name: str
    kind: str
    busbw: float
    latency_s: float
    source: str = ""

    def __post_init__(self) -> None:
        if self.kind not in LINK_KINDS:
            raise InputError(f"link kind must be one of {', '.join(LINK_KINDS)}, got {self.kind!r}")
        if not self.busbw > 0:
            raise InputError(f"a link's bus bandwidth must be positive, got {self.busbw!r}")
        if not self.latency_s >= 0:
            raise InputError(f"a link's latency must be ≥ 0, got {self.latency_s!r}")

    def time(self, op: str, size_bytes: float, n: int) -> float:
        """Seconds for one ``op`` of ``size_bytes`` (nccl-tests' size) over ``n`` ranks on this link."""
        return collective_time(op, size_bytes, n, self.busbw, self.latency_s)


def collective_time(op: str, size_bytes: float, n: int, busbw: float, latency_s: float = 0.0) -> float:
    """``latency + size × factor / busbw`` seconds; 0 on one rank (nothing moves)."""
    f = bus_factor(op, n)
    if f == 0.0:
        return 0.0
    if not busbw > 0:
        raise InputError(f"bus bandwidth must be positive, got {busbw!r}")
    if size_bytes < 0:
        raise InputError(f"a collective's size must be ≥ 0 bytes, got {size_bytes!r}")
    return float(latency_s) + float(size_bytes) * f / float(busbw)
