"""Measured interconnects, saved: what a collective benchmark (``gemmlib.measure.collectives``)
reached between the ranks of this machine, kept process-wide and in a JSON file beside the
measured ceilings, read back as :class:`~gemmlib.core.comm.Link` rows named
"NAME (measured interconnect)" for the estimate. Reading needs no torch.

A figure is the bus bandwidth of the all-reduce (nccl-tests' convention, the figure a
:class:`Link` states) at its best message size, and the latency of its smallest message. A gloo
figure between CPU processes is kept too, with ``kind="gloo"`` and a name that says it is not a
GPU interconnect: it lets a CPU machine check the tensor-parallel estimate against its own
measurement, nothing more.

Every entry is validated when read: a malformed or tampered entry is dropped, never trusted.

A measured link's name is a :class:`~gemmlib.core.i18n.Text` (:attr:`MeasuredInterconnect.name`): a ``str`` whose
English is the name files, JSON and the command line hold (``--interconnect NAME``), and which a page shows in
its reader's language. A name that reaches a page as plain English — written into a JSON file by an earlier
version, or through a URL (``?mg_link=NAME``) — is read back into that Text by :func:`name_text`, the one place
that parses these names.
"""

from __future__ import annotations

import math
import re
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from gemmlib.core.ceilings import MEASURED_ROW, ceilings_path, read_json, write_json
from gemmlib.core.comm import COLLECTIVES, Link
from gemmlib.core.errors import InputError
from gemmlib.core.hardware import Hardware, Interconnect
from gemmlib.core.i18n import N_, Msg, Text

BACKENDS = ("nccl", "gloo")
# A measured link's name by backend, on one node and across several (:attr:`MeasuredInterconnect.name`)
NAMES = {
    "gloo": (N_("gloo, {n} CPU processes on {cpu} (measured interconnect; not a GPU link)"),
             N_("gloo, {n} CPU processes on {cpu} ({nodes} nodes, measured interconnect; not a GPU link)")),
    "nccl": (N_("{n} × {gpu}, NCCL (measured interconnect)"),
             N_("{n} × {gpu}, NCCL ({nodes} nodes, measured interconnect)")),
}


@dataclass
class MeasuredInterconnect:
    """What one collective sweep measured between ``nproc`` ranks of one kind of device."""

    backend: str  # "nccl" or "gloo"
    device: str  # "cuda" or "cpu"
    device_name: str  # "NVIDIA H200" / the CPU model
    nproc: int
    busbw: float  # bytes/s: the best all-reduce bus bandwidth of the sweep
    latency_s: float  # seconds: the all-reduce time of the smallest message
    op: str = "all_reduce"  # the collective the two figures come from
    busbw_bytes: float = 0.0  # the message size where busbw was reached
    latency_bytes: float = 0.0  # the message size of latency_s
    nodes: int = 1
    measured_at: float = field(default_factory=time.time)
    rows: list = field(default_factory=list)  # the sweep: {op, bytes, time_s, algbw_gbps, busbw_gbps, ...}

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise InputError(f"backend must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        if self.op not in COLLECTIVES:
            raise InputError(f"unknown collective {self.op!r}")
        if isinstance(self.nproc, bool) or not isinstance(self.nproc, int) or self.nproc < 2:
            raise InputError(f"a measured interconnect needs at least 2 ranks, got {self.nproc!r}")
        if isinstance(self.nodes, bool) or not isinstance(self.nodes, int) or self.nodes < 1:
            raise InputError(f"nodes must be a whole number ≥ 1, got {self.nodes!r}")
        for name in ("busbw", "latency_s", "busbw_bytes", "latency_bytes", "measured_at"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise InputError(f"{name} must be a finite number ≥ 0, got {v!r}")
        if not self.busbw > 0:
            raise InputError(f"a measured bus bandwidth must be positive, got {self.busbw!r}")
        if not str(self.device_name).strip():
            raise InputError("a measured interconnect needs the device's name")

    @property
    def key(self) -> str:
        return f"{self.backend}:{self.device_name}:{self.nproc}:{self.nodes}"

    @property
    def name(self) -> Text:
        """"gloo, 2 CPU processes on AMD EPYC (measured interconnect; not a GPU link)", "8 × NVIDIA H100, NCCL
        (2 nodes, measured interconnect)": a Text, this English and its template and values (:data:`NAMES`)."""
        one, many = NAMES[self.backend]
        device = {"cpu" if self.backend == "gloo" else "gpu": self.device_name}
        if self.nodes > 1:
            return Text(many, n=self.nproc, nodes=self.nodes, **device)
        return Text(one, n=self.nproc, **device)

    def link(self) -> Link:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.measured_at)) if self.measured_at else "?"
        what = Text(N_("gloo between CPU processes on one machine: host memory and sockets, not an interconnect")
                    if self.backend == "gloo" else N_("NCCL between the GPUs"))
        return Link(self.name, "gloo" if self.backend == "gloo" else "measured", float(self.busbw),
                    float(self.latency_s),
                    source=Text(N_("measured here {when} by `python -m gemmlib bench collective --nproc {n}` ({what}): "
                                   "best {op} busbw at {busbw:,.0f} B, latency at {latency:,.0f} B"), when=when,
                                n=self.nproc, what=what, op=self.op, busbw=self.busbw_bytes, latency=self.latency_bytes))

    def to_dict(self) -> dict:
        return {"backend": self.backend, "device": self.device, "device_name": self.device_name,
                "nproc": self.nproc, "busbw": self.busbw, "latency_s": self.latency_s, "op": self.op,
                "busbw_bytes": self.busbw_bytes, "latency_bytes": self.latency_bytes, "nodes": self.nodes,
                "measured_at": self.measured_at, "rows": list(self.rows)}

    @classmethod
    def from_dict(cls, d: dict) -> MeasuredInterconnect:
        """Validated: a missing field, a wrong type or an impossible figure raises InputError."""
        if not isinstance(d, dict):
            raise InputError("a measured interconnect entry must be an object")
        try:
            nproc, nodes = d["nproc"], d.get("nodes", 1)
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in (nproc, nodes)):
                raise InputError("nproc and nodes must be whole numbers")
            rows = d.get("rows") or []
            if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
                raise InputError("rows must be a list of objects")
            return cls(backend=str(d["backend"]), device=str(d["device"]), device_name=str(d["device_name"]),
                       nproc=nproc, busbw=_num(d["busbw"]), latency_s=_num(d["latency_s"]),
                       op=str(d.get("op", "all_reduce")), busbw_bytes=_num(d.get("busbw_bytes", 0.0)),
                       latency_bytes=_num(d.get("latency_bytes", 0.0)), nodes=nodes,
                       measured_at=_num(d.get("measured_at", 0.0)), rows=rows)
        except KeyError as e:
            raise InputError(f"a measured interconnect entry lacks {e.args[0]!r}") from None


# The names above (and a measured row's, core.ceilings) as English, for name_text: the values are what the templates
# put in their places, the rest must match word for word
_READERS = [(re.compile(re.escape(t).replace(r"\{n\}", r"(?P<n>\d+)").replace(r"\{nodes\}", r"(?P<nodes>\d+)")
                        .replace(r"\{cpu\}", "(?P<cpu>.+)").replace(r"\{gpu\}", "(?P<gpu>.+)")
                        .replace(r"\{name\}", "(?P<name>.+)")), t)
            for t in (*(t for pair in NAMES.values() for t in pair), MEASURED_ROW)]


def name_text(name: str) -> str:
    """A measured link's or a measured row's name as the Text this module and ``core.ceilings`` build (a page renders
    it in its reader's language); any other name as it is.

    A name that is such a Text already is returned unchanged. A plain ``str`` is read back from its English: names
    written by earlier versions (a collectives run's JSON, which keeps ``saved.name``; a tensor-parallel estimate's
    ``link`` and ``hardware``) and names that lost their Text on the way (a URL's ``?mg_link=NAME``, an f-string).
    This is the only place that parses these names; what builds one keeps its Text."""
    if isinstance(name, Text) and isinstance(name.msg, Msg) and name.msg.params:
        return name
    s = str(name)
    for pattern, template in _READERS:
        m = pattern.fullmatch(s)
        if m:
            return Text(template, **{k: int(v) if k in ("n", "nodes") else v for k, v in m.groupdict().items()})
    return name


def _num(v) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise InputError(f"expected a number, got {v!r}")
    return float(v)


def from_sweep(rows: list[dict], *, backend: str, device: str, device_name: str, nproc: int,
               nodes: int = 1) -> MeasuredInterconnect:
    """The interconnect figures of a collective sweep (``collectives`` result rows).

    busbw: the best all-reduce bus bandwidth over the sizes (nccl-tests' "peak busbw"); latency:
    the all-reduce time of the smallest size. Rows that were not run or came out wrong are left
    out; without a correct all-reduce row the other collectives' best row is used.
    """
    ok = [r for r in rows if r.get("correct") and r.get("time_s") and r.get("busbw_gbps")]
    for op in ("all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast"):
        mine = [r for r in ok if r.get("op") == op]
        if mine:
            break
    else:
        raise InputError("no collective of this sweep ran correctly; nothing to save as an interconnect")
    best = max(mine, key=lambda r: r["busbw_gbps"])
    small = min(mine, key=lambda r: r["bytes"])
    return MeasuredInterconnect(backend=backend, device=device, device_name=device_name, nproc=int(nproc),
                                busbw=float(best["busbw_gbps"]) * 1e9, latency_s=float(small["time_s"]),
                                op=op, busbw_bytes=float(best["bytes"]), latency_bytes=float(small["bytes"]),
                                nodes=int(nodes), rows=[dict(r) for r in rows])


# --------------------------------------------------------------------------- the store
_store: dict[str, MeasuredInterconnect] = {}


_store_lock = threading.Lock()


def interconnect_path() -> Path:
    """Where measured interconnects are saved: beside the measured ceilings, ``interconnect.json``."""
    return ceilings_path().with_name("interconnect.json")


def _read_file() -> dict[str, MeasuredInterconnect]:
    out = {}
    try:
        p = interconnect_path()
    except InputError:  # the cache folder is not private: nothing saved is trusted (ceilings logs why)
        return out
    for d in read_json(p, "the interconnect file").values():
        try:
            m = MeasuredInterconnect.from_dict(d)
        except (InputError, TypeError, ValueError):
            continue  # a malformed entry is dropped
        out[m.key] = m
    return out


def save_interconnect(m: MeasuredInterconnect) -> Path | None:
    """Keep ``m`` for this process and in the JSON file (merged with the other entries). Nothing is kept
    (None) when the machine policy keeps the shared measurements read-only (``policy.shared_read_only``)."""
    from gemmlib.core import policy

    if policy.shared_read_only():
        return None
    with _store_lock:
        _store[m.key] = m
        data = {k: v.to_dict() for k, v in _read_file().items()}
        data[m.key] = m.to_dict()
        try:
            p = interconnect_path()
        except InputError:
            return None
        write_json(p, data, "the interconnect file")
    return p


def all_interconnects() -> dict[str, MeasuredInterconnect]:
    """Every measured interconnect known: the saved file's, then this process's."""
    out = _read_file()
    with _store_lock:
        out.update(_store)
    return out


def measured_links() -> list[Link]:
    """Measured interconnects as Links ("NAME (measured interconnect)"), for pickers beside the datasheet."""
    return [m.link() for m in sorted(all_interconnects().values(), key=lambda m: (m.backend, m.nproc))]


def find_link(name: str) -> Link | None:
    """The measured Link called ``name`` (case-insensitive), or None."""
    want = str(name).strip().lower()
    return next((lk for lk in measured_links() if lk.name.lower() == want), None)


def get_link(name: str) -> Link:
    """:func:`find_link`, or an InputError naming the measured interconnects there are."""
    lk = find_link(name)
    if lk is None:
        known = [x.name for x in measured_links()]
        raise InputError(f"no measured interconnect called {name!r}" + (
            f"; known: {'; '.join(known)}" if known else
            "; measure one with `python -m gemmlib bench collective --nproc N`"))
    return lk


def find_measured(name: str) -> MeasuredInterconnect | None:
    """The measured interconnect whose Link is called ``name`` (case-insensitive), or None."""
    want = str(name).strip().lower()
    return next((m for m in all_interconnects().values() if m.name.lower() == want), None)


def hardware_with(hw: Hardware, name: str, ranks: int) -> tuple[Hardware, Link]:
    """``hw`` whose collectives inside a node cross the measured interconnect ``name`` (its scale-up
    link and its PCIe link both replaced: the measured figure is what this node's devices reached);
    a device without interconnect figures (a CPU) gets one domain of ``ranks`` ranks joined by it.
    Groups across nodes keep the catalogue's network. A link measured across several nodes is not
    a per-NIC figure: give it as ``--inter-busbw`` instead."""
    m = find_measured(name)
    if m is None:
        get_link(name)  # the InputError naming what there is
        raise AssertionError("unreachable")
    if m.nodes > 1:
        raise InputError(f"{name!r} was measured across {m.nodes} nodes: it is not a link inside a node; give "
                         "its figures as --inter-busbw / --inter-latency-us")
    link = m.link()
    ic = hw.interconnect
    if ic is None:
        n = max(2, int(ranks))
        ic = Interconnect(scale_up=link.name, scale_up_bytes_per_s=link.busbw, pcie="none", pcie_bytes_per_s=None,
                          network="none", network_bytes_per_s=None, scale_up_gpus=n, gpus_per_node=n,
                          intra=link, pcie_link=None, inter=None, source=link.source)
    else:
        ic = replace(ic, intra=link, pcie_link=link)
        if hw.kind == "cpu":  # CPU processes of one machine: its "node" holds every rank
            ic = replace(ic, gpus_per_node=max(ic.gpus_per_node, int(ranks)))
    return replace(hw, interconnect=ic), link


def find(backend: str, device_name: str, nproc: int, nodes: int = 1) -> MeasuredInterconnect | None:
    """The interconnect measured for this backend, device and rank count, or None."""
    return all_interconnects().get(f"{backend}:{device_name}:{nproc}:{nodes}")


def clear_interconnects(remove_file: bool = False) -> None:
    with _store_lock:
        _store.clear()
        if remove_file:
            try:
                interconnect_path().unlink()
            except OSError:
                pass
