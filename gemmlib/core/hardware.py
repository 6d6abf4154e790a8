"""The hardware catalogue: datasheet peaks per dtype, memory, bandwidth, SMs and interconnect.

The rows are data: ``hardware.json`` beside this module (its ``about`` says what each field
means), read once when this module is imported and checked row by row (``parse_catalogue``:
one clear message per bad field, every bad row named in one ``InputError``). A user adds a
GPU of their own in a file of the same form — ``python -m gemmlib estimate --hardware-file
my_gpus.json --gpu "My GPU"``, or ``load_hardware_file`` / ``parse_hardware`` (an upload's
bytes) from code — checked the same way; such a row keeps the file's name in ``origin`` and
shows it (``Hardware.label``, the "from" column of ``catalogue_rows``).

Every figure is a *dense* peak (no 2:4 sparsity) in FLOP/s (or OP/s for int8)
and comes with the datasheet or page it was read from. NVIDIA prints tensor-core
figures "with sparsity": the dense peak is half. Measured ceilings (see
``gemmlib.measure.devices``) are kept apart and shown beside these, never in
place of them. The CPU row is a placeholder the user is expected to edit: CPUs
vary too much for one default to mean anything.

Unknown stays unknown: a dtype the device runs but for which no source gives a
dense peak is listed in ``Hardware.unknown`` (its peak is None, and an estimate
says "not in the catalogue" rather than "no such path"); a figure the sources
disagree on is given with both values in the row's notes.

Memory is in bytes, each row with its source (``memory_source``): the total the
driver reports (``nvidia-smi`` MiB × 2²⁰, ``rocminfo``) where a report was found,
otherwise the datasheet's capacity read as GiB — GPU memory is built in binary
sizes, and every reported total here is the datasheet number of GiB less a small
reservation (H100 80 GB → 79.65 GiB, H200 141 → 140.4, B200 180 → 179.1,
A100 40 → 40.0, MI300X 192 → 192.0).

Interconnect (``Hardware.interconnect``): the scale-up link (NVLink/NVSwitch,
Infinity Fabric, none), PCIe, and the typical node's network, each per GPU and
per direction — datasheets print NVLink and PCIe as bidirectional totals, so the
per-direction rate is half — and the links a collective crosses, as
:class:`gemmlib.core.comm.Link` (bus bandwidth + latency, nccl-tests
conventions). Link bandwidths are line rates (upper bounds); measured figures
replace them (``Interconnect.with_links``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gemmlib.core.comm import LINK_KINDS, Link
from gemmlib.core.dtypes import COMPUTE_DTYPES, get_dtype
from gemmlib.core.errors import InputError
from gemmlib.core.files import not_json
from gemmlib.core.i18n import N_, Msg, Text

T = 1e12  # tera
GiB = 1024**3
MiB = 1024**2
GB = 1e9


@dataclass(frozen=True)
class Interconnect:
    """How one GPU talks to the others: scale-up link, PCIe, the node's network, per GPU and direction.

    ``scale_up_gpus`` is how many GPUs the scale-up link joins (8 behind an NVSwitch, 2 for an
    NVLink bridge pair, 72 in a GB200 NVL72 rack, 1 when there is none); ``gpus_per_node`` the
    GPUs of a typical node. ``intra`` is the link a collective inside the scale-up domain crosses,
    ``pcie`` the one inside a node beyond it, ``inter`` the network between nodes (per GPU /
    NIC); None where no figure is known.
    """

    scale_up: str
    scale_up_bytes_per_s: float | None  # per GPU, per direction
    pcie: str
    pcie_bytes_per_s: float | None  # per direction
    network: str
    network_bytes_per_s: float | None  # per GPU, per direction
    scale_up_gpus: int
    gpus_per_node: int
    intra: Link | None
    pcie_link: Link | None
    inter: Link | None
    source: str = ""

    def with_links(self, *, intra: Link | None = None, inter: Link | None = None) -> Interconnect:
        """A copy whose intra-node and/or inter-node link is replaced (e.g. by a measured one)."""
        return replace(self, intra=intra or self.intra, inter=inter or self.inter)

    def link_for(self, ranks: int, stride: int = 1, gpus_per_node: int | None = None) -> Link:
        """The link a collective over ``ranks`` GPUs spaced ``stride`` apart crosses, as one Link.

        GPUs are numbered node by node. A group lies inside one domain of D GPUs when its
        span ``stride × ranks`` divides D (otherwise some group straddles two). Inside the
        scale-up domain: the scale-up link; inside the node beyond it: PCIe; across nodes:
        the network, where a ring crosses each node boundary once per ring and NCCL runs a
        ring per NIC, so m group members per node reach m × the per-NIC rate (DGX A100,
        8 × 200 Gb/s: "we measure 192 GB/s AllReduce BusBW", NVIDIA/nccl#1576), capped by the
        link inside the node.
        """
        node = int(gpus_per_node or self.gpus_per_node)
        if node < 1:
            raise InputError(N_("GPUs per node must be at least 1, got {n!r}"), n=gpus_per_node)
        if ranks <= 1:
            return Link("none", "measured", 1.0, 0.0, "one rank: nothing moves")
        span = stride * ranks
        scale_up = min(self.scale_up_gpus, node)
        if scale_up > 1 and scale_up % span == 0:
            if self.intra is None:
                raise InputError(N_("the catalogue has no figure for the {link} link; give a measured one"),
                                 link=self.scale_up)
            return self.intra
        if node % span == 0:
            if self.pcie_link is None:
                raise InputError(N_("the catalogue has no PCIe figure for this GPU ({pcie}); give a measured link"),
                                 pcie=self.pcie)
            return self.pcie_link
        if self.inter is None:
            raise InputError(N_("a group of {ranks} GPUs (stride {stride}) spans more than one node of {node} GPUs, "
                                "and the catalogue has no network for this GPU's nodes ({network}); keep "
                                "every parallel group inside a node or give a measured inter-node link"),
                             ranks=ranks, stride=stride, node=node, network=self.network)
        per_node = node // stride if stride < node else 1  # group members inside one node
        inside = self.intra if (scale_up > 1 and scale_up % (stride * per_node) == 0) else self.pcie_link
        busbw = per_node * self.inter.busbw
        capped = inside is not None and inside.busbw < busbw
        if capped:
            busbw = inside.busbw
        nodes = -(-span // node)
        nic = {"per": per_node, "gbps": self.inter.busbw / 1e9, "source": as_text(self.inter.source)}
        return Link(Text(N_("{link} across {nodes} nodes, {per} per node"), link=as_text(self.inter.name), nodes=nodes,
                         per=per_node), self.inter.kind, busbw, self.inter.latency_s,
                    Text(N_("{per} NIC(s) per node × {gbps:g} GB/s, capped by {inside}; {source}"),
                         inside=as_text(inside.name), **nic) if capped else
                    Text(N_("{per} NIC(s) per node × {gbps:g} GB/s; {source}"), **nic))

    def all_to_all_link(self, ranks: int, stride: int = 1, gpus_per_node: int | None = None) -> Link:
        """The link an all-to-all over ``ranks`` GPUs ``stride`` apart crosses. Inside a node it is
        :meth:`link_for`'s. Across nodes it is not a ring: every rank sends the share of its buffer bound for
        the other nodes, (n − m) / n of it with m group members per node, through its own NIC, while the
        share for its node's members goes over the link inside the node at the same time. Its time is
        size × (n − m) / n / NIC, the nccl-tests bus bandwidth (size × (n − 1) / n / time) is the NIC's rate
        × (n − 1) / (n − m) — not m NICs' as a ring all-reduce gets (:meth:`link_for`). DeepSeek-V3
        (arXiv:2412.19437 §3.2.2) sizes its dispatch so: IB 50 GB/s per GPU across nodes, NVLink 160 GB/s inside.
        """
        link = self.link_for(ranks, stride, gpus_per_node)
        node = int(gpus_per_node or self.gpus_per_node)
        span = stride * ranks
        if ranks <= 1 or node % span == 0 or self.inter is None:
            return link
        per_node = node // stride if stride < node else 1
        if per_node >= ranks:
            return link
        busbw = self.inter.busbw * (ranks - 1) / (ranks - per_node)
        nodes = -(-span // node)
        return Link(Text(N_("{link} across {nodes} nodes, all-to-all"), link=as_text(self.inter.name), nodes=nodes),
                    self.inter.kind, busbw, self.inter.latency_s,
                    Text(N_("each rank's {off}/{ranks} off-node share through its own NIC of {gbps:g} GB/s; {source}"),
                         off=ranks - per_node, ranks=ranks, gbps=self.inter.busbw / 1e9,
                         source=as_text(self.inter.source)))


def as_text(name: str) -> str:
    """A link's name or source inside a longer name: a Text as it is (a measured link's), a catalogue's plain
    text as a Text of itself, so a page looks it up in its catalogue ("NVLink 4 (18 links) + NVSwitch" reads
    in Chinese there) while its English stays the text."""
    return name if isinstance(name, Text) or not name else Text(name)


@dataclass(frozen=True)
class Hardware:
    """One accelerator (or CPU) as the datasheet describes it."""

    name: str
    kind: str  # "gpu" or "cpu"
    peaks: tuple[tuple[str, float], ...]  # (dtype, dense FLOP/s); a missing dtype is unsupported (or unknown)
    bandwidth: float  # main-memory bandwidth, bytes/s
    sms: int  # streaming multiprocessors (GPU) or cores (CPU): units that take work tiles; 0 = unknown
    memory_bytes: float
    source: str  # datasheet URL
    notes: str = ""
    editable: bool = False
    aliases: tuple[str, ...] = field(default=())
    memory_source: str = ""
    unknown: tuple[str, ...] = field(default=())  # dtypes the device runs whose dense peak no source gives
    interconnect: Interconnect | None = None
    origin: str = ""  # "" for the built-in catalogue; the user's hardware file a row came from

    @property
    def label(self) -> str:
        """The name as a report shows it: a row of the user's own file says so."""
        return f"{self.name} (from {self.origin})" if self.origin else self.name

    def peak(self, dtype: str) -> float | None:
        """Dense peak for ``dtype`` in FLOP/s, or None when the device has no such path (or it is unknown)."""
        key = get_dtype(dtype).name
        return dict(self.peaks).get(key)

    def supports(self, dtype: str) -> bool:
        return self.peak(dtype) is not None

    def missing_peak_error(self, dtype: str) -> InputError:
        """Why there is no peak for ``dtype``: the InputError to raise (its sentence translates)."""
        key = get_dtype(dtype).name
        if key in self.unknown:
            return InputError(N_("the catalogue has no sourced dense {dtype} peak for {gpu} (not in the catalogue; "
                                 "see its notes); measure it with `python -m gemmlib devices --measure` or pick "
                                 "another dtype"), dtype=key, gpu=self.name)
        return InputError(N_("{gpu} has no {dtype} GEMM path in its datasheet; choose another dtype or GPU"),
                          gpu=self.name, dtype=key)

    def missing_peak(self, dtype: str) -> str:
        """Why there is no peak for ``dtype``: a sentence for an error message."""
        return str(self.missing_peak_error(dtype))

    def ridge_point(self, dtype: str) -> float | None:
        """Arithmetic intensity (FLOP/byte) where compute and memory limits meet."""
        p = self.peak(dtype)
        return None if p is None else p / self.bandwidth

    def with_overrides(self, *, peaks: dict[str, float] | None = None,
                       bandwidth: float | None = None, sms: int | None = None,
                       memory_bytes: float | None = None, name: str | None = None) -> Hardware:
        """A copy with some figures replaced (for the editable CPU row, or measured ceilings)."""
        new_peaks = dict(self.peaks)
        unknown = set(self.unknown)
        for k, v in (peaks or {}).items():
            key = get_dtype(k).name
            if v is None:
                new_peaks.pop(key, None)
                continue
            if not v > 0:
                raise InputError(N_("peak for {dtype} must be positive, got {value}"), dtype=key, value=v)
            new_peaks[key] = float(v)
            unknown.discard(key)
        for label, value in ((N_("bandwidth"), bandwidth), (N_("SM count"), sms), (N_("memory size"), memory_bytes)):
            if value is not None and not value > 0:
                raise InputError(N_("{what} must be positive, got {value}"), what=Msg(label), value=value)
        return replace(
            self,
            name=name or self.name,
            peaks=tuple((d, new_peaks[d]) for d in COMPUTE_DTYPES if d in new_peaks),
            bandwidth=float(bandwidth) if bandwidth is not None else self.bandwidth,
            sms=int(sms) if sms is not None else self.sms,
            memory_bytes=float(memory_bytes) if memory_bytes is not None else self.memory_bytes,
            memory_source=Text(N_("override")) if memory_bytes is not None else self.memory_source,
            unknown=tuple(d for d in COMPUTE_DTYPES if d in unknown),
        )


# ----- the catalogue as data: gemmlib/core/hardware.json, loaded and checked once, at import -------------------
DATA_FILE = Path(__file__).with_name("hardware.json")
FORMAT = "gemmlib-hardware/1"
DEFAULT_GPU = "H100 SXM"

_ROW_FIELDS = ("name", "kind", "peaks_tflops", "unknown", "bandwidth_bytes_per_s", "sms", "memory", "source", "notes",
               "aliases", "editable", "interconnect")
_REQUIRED = ("name", "kind", "peaks_tflops", "bandwidth_bytes_per_s", "memory", "source")
_IC_FIELDS = ("scale_up", "scale_up_bytes_per_s", "pcie", "pcie_bytes_per_s", "network", "network_bytes_per_s",
              "scale_up_gpus", "gpus_per_node", "intra", "pcie_link", "inter", "source")
_LINK_FIELDS = ("name", "kind", "busbw_bytes_per_s", "latency_s", "source")
_MEMORY_FORMS = {  # one of these key sets (plus an optional "note")
    "driver_mib": ("driver_mib", "report"), "rocminfo_kb": ("rocminfo_kb", "report"),
    "datasheet_gb": ("datasheet_gb", "what"), "gib": ("gib", "source")}

_A_NUMBER = N_("a positive number")
_A_REAL_NUMBER = N_("at most 1e18 (beyond any real device)")
MAX_NUMBER = 1e18  # no field of a device row (TFLOP/s, bytes, bytes/s, µs) comes near it
_A_TEXT = N_("a text")
_A_COUNT = N_("a whole number ≥ 0")
_AN_OBJECT = N_("an object")
_TEXTS = N_("a list of texts")
_BAD = N_("{where}: {field} must be {expected}, got {value}")


def _key(name: str) -> str:
    """A name or alias as lookups compare it: case, spaces, dashes and underscores ignored."""
    return str(name).strip().lower().replace(" ", "").replace("-", "").replace("_", "")


class _Checker:
    """Reads one catalogue file's rows, collecting one clear message per problem (never stopping at the first)."""

    def __init__(self, links: dict[str, Link], interconnects: dict[str, Interconnect]) -> None:
        self.problems: list[Text] = []
        self.links = dict(links)
        self.interconnects = dict(interconnects)

    def bad(self, where: str, field: str, expected: str | Msg, value: Any) -> None:
        self.problems.append(Text(_BAD, where=where, field=field, value=repr(value)[:80],
                                  expected=expected if isinstance(expected, Msg) else Msg(expected)))

    def fields(self, where: str, obj: Any, allowed: tuple[str, ...], required: tuple[str, ...] = ()) -> bool:
        if not isinstance(obj, dict):
            self.bad(where, "", _AN_OBJECT, obj)
            return False
        for k in obj:
            if k not in allowed:
                self.problems.append(Text(N_("{where}: unknown field {field!r} (the fields are: {fields})"),
                                          where=where, field=str(k), fields=", ".join(allowed)))
        for k in required:
            if k not in obj:
                self.problems.append(Text(N_("{where}: {field} is missing"), where=where, field=k))
        return True

    def number(self, where: str, obj: dict, field: str, *, optional: bool = False, zero: bool = False,
               label: str = "") -> float | None:
        v = obj.get(field)
        if v is None and (optional or field not in obj):
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not (v >= 0 if zero else v > 0):
            self.bad(where, label or field, _A_NUMBER, v)
            return None
        if v > MAX_NUMBER:  # finite and absurd: the estimate would print hundreds of digits
            self.bad(where, label or field, _A_REAL_NUMBER, v)
            return None
        return v

    def count(self, where: str, obj: dict, field: str, default: int) -> int:
        v = obj.get(field, default)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            self.bad(where, field, _A_COUNT, v)
            return default
        return v

    def text(self, where: str, obj: dict, field: str, *, required: bool = False) -> str:
        """``obj[field]`` as a text ("" when absent and optional); a required one must not be empty.
        (A missing required field is reported by :meth:`fields`.)"""
        v = obj.get(field, "")
        if not isinstance(v, str) or (required and field in obj and not v.strip()):
            self.bad(where, field, _A_TEXT, v)
            return ""
        return v

    def texts(self, where: str, obj: dict, field: str) -> tuple[str, ...]:
        v = obj.get(field, [])
        if not isinstance(v, list) or not all(isinstance(x, str) and x.strip() for x in v):
            self.bad(where, field, _TEXTS, v)
            return ()
        return tuple(v)

    # --- links and interconnects
    def link(self, where: str, value: Any) -> Link | None:
        if value is None:
            return None
        if isinstance(value, str):
            if value not in self.links:
                self.problems.append(Text(N_("{where}: link {id!r} is not defined; define it under 'links' or use "
                                             "one of: {choices}"), where=where, id=value, choices=", ".join(self.links)))
            return self.links.get(value)
        if not self.fields(where, value, _LINK_FIELDS, ("name", "kind", "busbw_bytes_per_s", "latency_s")):
            return None
        busbw = self.number(where, value, "busbw_bytes_per_s")
        latency = self.number(where, value, "latency_s", zero=True)
        name, kind = self.text(where, value, "name", required=True), value.get("kind")
        if kind not in LINK_KINDS:
            self.bad(where, "kind", N_("one of the link kinds"), kind)
            return None
        if busbw is None or latency is None or not name:
            return None
        return Link(name, kind, float(busbw), float(latency), self.text(where, value, "source"))

    def interconnect(self, where: str, value: Any) -> Interconnect | None:
        if value is None:
            return None
        if isinstance(value, str):
            if value not in self.interconnects:
                self.problems.append(Text(N_("{where}: interconnect {id!r} is not defined; define it under "
                                             "'interconnects' or use one of: {choices}"),
                                          where=where, id=value, choices=", ".join(self.interconnects)))
            return self.interconnects.get(value)
        if not self.fields(where, value, _IC_FIELDS, ("scale_up", "pcie", "network")):
            return None
        n = len(self.problems)
        ic = Interconnect(
            self.text(where, value, "scale_up"), self.number(where, value, "scale_up_bytes_per_s", optional=True),
            self.text(where, value, "pcie"), self.number(where, value, "pcie_bytes_per_s", optional=True),
            self.text(where, value, "network"), self.number(where, value, "network_bytes_per_s", optional=True),
            max(1, self.count(where, value, "scale_up_gpus", 1)), max(1, self.count(where, value, "gpus_per_node", 1)),
            self.link(f"{where}.intra", value.get("intra")), self.link(f"{where}.pcie_link", value.get("pcie_link")),
            self.link(f"{where}.inter", value.get("inter")), self.text(where, value, "source"))
        return ic if len(self.problems) == n else None

    # --- one row
    def memory(self, where: str, value: Any) -> tuple[float, str] | None:
        forms = [f for f in _MEMORY_FORMS if isinstance(value, dict) and f in value]
        if len(forms) != 1:
            self.bad(where, "memory", N_("an object with one of: `driver_mib` and `report`, `rocminfo_kb` "
                                         "and `report`, `datasheet_gb` and `what`, `gib` and `source`"), value)
            return None
        keys = _MEMORY_FORMS[forms[0]]
        if not self.fields(f"{where}.memory", value, (*keys, "note"), keys):
            return None
        size = value[keys[0]]
        if forms[0] in ("driver_mib", "rocminfo_kb"):
            if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
                self.bad(f"{where}.memory", keys[0], N_("a whole number ≥ 1"), size)
                return None
        elif self.number(f"{where}.memory", value, keys[0]) is None:
            return None
        label = self.text(f"{where}.memory", value, keys[1], required=True)
        if forms[0] == "driver_mib":
            out = float(size * MiB), Text(N_("driver report: {mib:,} MiB ({source})"), mib=size, source=label)
        elif forms[0] == "rocminfo_kb":
            out = size * 1024.0, Text(N_("driver report: rocminfo GPU pool {kb:,} KB ({source}) = {gib:.0f} GiB"),
                                      kb=size, source=label, gib=size / MiB)
        elif forms[0] == "datasheet_gb":
            out = float(size * GiB), Text(N_("datasheet {gb:g} GB read as GiB (no driver report found; the usable "
                                             "total is a little less): {what}"), gb=size, what=label)
        else:
            out = float(size * GiB), label
        note = self.text(f"{where}.memory", value, "note")
        return (out[0], Text.joined([out[1], note])) if note else out

    def row(self, where: str, r: Any, origin: str) -> Hardware | None:
        n = len(self.problems)
        if isinstance(r, dict) and isinstance(r.get("name"), str) and r["name"].strip():
            where = f"{where} {r['name']!r}"
        if not self.fields(where, r, _ROW_FIELDS, _REQUIRED):
            return None
        name = self.text(where, r, "name", required=True)
        kind = r.get("kind")
        if kind not in ("gpu", "cpu"):
            self.bad(where, "kind", N_("gpu or cpu"), kind)
        peaks: dict[str, float] = {}
        raw = r.get("peaks_tflops", {})
        if not isinstance(raw, dict) or not raw:
            self.bad(where, "peaks_tflops", N_("an object of dense TFLOP/s per dtype"), raw)
            raw = {}
        for d, v in raw.items():
            if d not in COMPUTE_DTYPES:
                self.bad(where, "peaks_tflops", Msg(N_("keyed by dtypes among {dtypes}"),
                                                    dtypes=", ".join(COMPUTE_DTYPES)), d)
            elif self.number(where, raw, d, label=f"peaks_tflops.{d}") is not None:
                peaks[d] = v * T
        unknown = self.texts(where, r, "unknown")
        for d in unknown:
            if d not in COMPUTE_DTYPES or d in peaks:
                self.bad(where, "unknown", N_("dtypes without a peak"), d)
        bandwidth = self.number(where, r, "bandwidth_bytes_per_s")
        sms = self.count(where, r, "sms", 0)
        memory = self.memory(where, r.get("memory"))
        source, notes = self.text(where, r, "source", required=True), self.text(where, r, "notes")
        aliases = self.texts(where, r, "aliases")
        editable = r.get("editable", False)
        if not isinstance(editable, bool):
            self.bad(where, "editable", N_("true or false"), editable)
        ic = self.interconnect(f"{where}.interconnect", r.get("interconnect"))
        if len(self.problems) > n or memory is None or bandwidth is None:
            return None
        return Hardware(name, kind, tuple((d, peaks[d]) for d in COMPUTE_DTYPES if d in peaks), float(bandwidth), sms,
                        memory[0], source, notes, bool(editable), aliases, memory[1],
                        tuple(d for d in COMPUTE_DTYPES if d in unknown), ic, origin)


def _parse(data: Any, origin: str, known: dict[str, Hardware] | None, links: dict[str, Link] | None,
           interconnects: dict[str, Interconnect] | None
           ) -> tuple[dict[str, Hardware], dict[str, Link], dict[str, Interconnect]]:
    where_file = origin or str(DATA_FILE)
    if not isinstance(data, dict) or not isinstance(data.get("gpus"), list):
        raise InputError(N_("{file} is not a hardware catalogue: it needs a 'gpus' list of rows (see {example})"),
                         file=where_file, example=str(DATA_FILE))
    chk = _Checker(links or {}, interconnects or {})
    sections = {}
    for section in ("links", "interconnects"):
        sections[section] = data.get(section, {})
        if not isinstance(sections[section], dict):
            chk.bad(section, "", _AN_OBJECT, sections[section])
            sections[section] = {}
    for lid, raw in sections["links"].items():
        if lid in chk.links:
            chk.problems.append(Text(N_("links: {id!r} is defined twice"), id=lid))
        lk = chk.link(f"links[{lid!r}]", raw)
        if lk is not None:
            chk.links[lid] = lk
    for iid, raw in sections["interconnects"].items():
        if iid in chk.interconnects:
            chk.problems.append(Text(N_("interconnects: {id!r} is defined twice"), id=iid))
        ic = chk.interconnect(f"interconnects[{iid!r}]", raw)
        if ic is not None:
            chk.interconnects[iid] = ic
    taken = {_key(k): hw.name for hw in (known or {}).values() for k in (hw.name, *hw.aliases)}
    here: dict[str, int] = {}  # a name or alias of this document -> the index of its row
    rows: dict[str, Hardware] = {}
    for i, raw in enumerate(data["gpus"]):
        hw = chk.row(f"gpus[{i}]", raw, origin)
        if hw is None:
            continue
        clash = [k for k in (hw.name, *hw.aliases) if _key(k) in taken]
        if clash and _key(clash[0]) in here:  # two rows of this same file
            chk.problems.append(Text(N_("gpus[{i}] {name!r}: {clash!r} is already gpus[{j}] of this file; give the "
                                        "row another name or alias"), i=i, name=hw.name, clash=clash[0],
                                     j=here[_key(clash[0])]))
            continue
        if clash:
            chk.problems.append(Text(N_("gpus[{i}] {name!r}: {clash!r} is already the catalogue's {row!r}; give the "
                                        "row another name or alias"), i=i, name=hw.name, clash=clash[0],
                                     row=taken[_key(clash[0])]))
            continue
        taken.update({_key(k): hw.name for k in (hw.name, *hw.aliases)})
        here.update({_key(k): i for k in (hw.name, *hw.aliases)})
        rows[hw.name] = hw
    if chk.problems:
        raise InputError(N_("{file}: {problems}"), file=where_file, problems=Text.joined(chk.problems))
    return rows, chk.links, chk.interconnects


def parse_catalogue(data: Any, *, origin: str = "", known: dict[str, Hardware] | None = None,
                    links: dict[str, Link] | None = None,
                    interconnects: dict[str, Interconnect] | None = None) -> dict[str, Hardware]:
    """The rows of one catalogue document (``hardware.json``'s form), checked; InputError naming every bad row.

    ``origin``: where the rows come from ("" for the built-in catalogue, else the user's file),
    kept on each row. ``known``: rows already in use, whose names and aliases a new row may not
    take. ``links`` / ``interconnects``: ids the rows may name besides the document's own.
    """
    return _parse(data, origin, known, links, interconnects)[0]


def _builtin() -> tuple[dict[str, Hardware], dict[str, Link], dict[str, Interconnect]]:
    with open(DATA_FILE, encoding="utf-8") as f:
        data = json.load(f)
    if data.get("format") != FORMAT:
        raise InputError(N_("{file}: format {got!r}, expected {want!r}"), file=str(DATA_FILE),
                         got=data.get("format"), want=FORMAT)
    return _parse(data, "", None, None, None)


CATALOGUE, LINKS, INTERCONNECTS = _builtin()


MAX_HARDWARE_FILE_BYTES = 256 * 1024  # a hardware file holds a few rows: a few kB


def parse_hardware(text: str | bytes, origin: str) -> dict[str, Hardware]:
    """A user's rows from the text of a hardware file (an upload's bytes too), checked as the built-in catalogue
    is, each row's ``origin`` set to ``origin``; InputError naming every bad row. The rows may use the built-in
    links and interconnects by id, and may not take a catalogue row's name or alias."""
    if len(text) > MAX_HARDWARE_FILE_BYTES:
        raise InputError(N_("{name} is {size:,} bytes; a hardware file is a few kB (limit {limit:,})"),
                         name=origin, size=len(text), limit=MAX_HARDWARE_FILE_BYTES)
    try:
        data = json.loads(text)
    except RecursionError:
        raise InputError(N_("{file} is nested too deeply to be a hardware file"), file=origin) from None
    except UnicodeDecodeError:
        raise InputError(N_("{file} is not UTF-8 text"), file=origin) from None
    except json.JSONDecodeError as e:
        raise not_json(e, origin) from None
    except ValueError as e:  # an integer of thousands of digits: Python's own limit (its advice left out)
        raise InputError(N_("{file} holds a value that cannot be read: {reason}"), file=origin,
                         reason=str(e).split(";")[0][:200]) from None
    return parse_catalogue(data, origin=origin, known=CATALOGUE, links=LINKS, interconnects=INTERCONNECTS)


def load_hardware_file(path: str | Path) -> dict[str, Hardware]:
    """:func:`parse_hardware` on a file (``--hardware-file``): its rows by name, each marked as the user's. Read as a
    regular file of at most :data:`MAX_HARDWARE_FILE_BYTES` (a FIFO, /dev/zero or a folder is refused, not read)."""
    from gemmlib.core.files import read_regular

    p = Path(path)
    text = read_regular(p, MAX_HARDWARE_FILE_BYTES, what=f"the hardware file {path}")
    return parse_hardware(text, p.name)


def babel_extract(fileobj, keywords, comment_tags, options):
    """Babel's extraction method for ``hardware.json`` (``babel.cfg``): the texts a page translates.

    Those are the interconnects' scale-up and network names and the editable (CPU) row's name and
    source; numbers, product names, datasheet links and notes stay as written.
    """
    text = fileobj.read().decode("utf-8")
    data = json.loads(text)
    found: list[str] = []
    for ic in data.get("interconnects", {}).values():
        found += [ic.get("scale_up"), ic.get("network")]
    for row in data.get("gpus", []):
        if row.get("editable"):
            found += [row.get("name"), row.get("source")]
    seen = set()
    for msg in found:
        if isinstance(msg, str) and msg and msg not in seen:
            seen.add(msg)
            lineno = text.count("\n", 0, max(0, text.find(json.dumps(msg, ensure_ascii=False)))) + 1
            yield lineno, "N_", msg, []


def gpu_names() -> list[str]:
    return list(CATALOGUE)


def get_hardware(name: str, catalogue: dict[str, Hardware] | None = None) -> Hardware:
    """Find a row by name or alias (case- and space-insensitive) in ``catalogue`` (default: the built-in one;
    give ``{**CATALOGUE, **load_hardware_file(path)}`` to include a user's rows)."""
    rows = CATALOGUE if catalogue is None else catalogue
    want = _key(name)
    for hw in rows.values():
        if any(_key(k) == want for k in (hw.name, *hw.aliases)):
            return hw
    raise InputError(N_("unknown GPU {name!r}; choose one of: {choices}"), name=str(name)[:60],
                     choices=", ".join(rows))


def catalogue_rows(catalogue: dict[str, Hardware] | None = None) -> list[dict]:
    """The catalogue as table rows (TFLOP/s, TB/s, GiB, interconnect) for pages, the CLI and the report.

    A peak no source gives is None here and named under "unknown peaks"; an unknown SM count is None.
    With a user's rows among ``catalogue``, every row also says where it is "from" (None: the built-in one).
    """
    rows = []
    table = CATALOGUE if catalogue is None else catalogue
    mine = any(hw.origin for hw in table.values())
    for hw in table.values():
        row: dict = {"name": hw.name, "kind": hw.kind}
        for d in COMPUTE_DTYPES:
            p = hw.peak(d)
            row[f"{d} TFLOP/s"] = None if p is None else round(p / T, 1)
        row["unknown peaks"] = ", ".join(hw.unknown)
        row["bandwidth TB/s"] = hw.bandwidth / 1e12
        row["SMs"] = hw.sms or None
        row["memory GiB"] = round(hw.memory_bytes / GiB, 2)
        row["memory bytes"] = int(hw.memory_bytes)
        ic = hw.interconnect
        # "none" is the catalogue's word for no such link; a table says that with a dash
        row["scale-up link"] = ic.scale_up if ic and ic.scale_up != "none" else None
        row["scale-up GB/s per direction"] = (ic.scale_up_bytes_per_s / 1e9 if ic and ic.scale_up_bytes_per_s
                                              else None)
        row["PCIe"] = ic.pcie if ic and ic.pcie != "none" else None
        row["node network"] = ic.network if ic else None
        row["source"] = hw.source
        if mine:
            row["from"] = hw.origin or None
        rows.append(row)
    return rows
