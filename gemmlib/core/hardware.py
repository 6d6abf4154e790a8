"""The hardware catalogue: datasheet peaks per dtype, memory, bandwidth, SMs and interconnect.

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

from dataclasses import dataclass, field, replace

from gemmlib.core.comm import Link
from gemmlib.core.dtypes import COMPUTE_DTYPES, get_dtype
from gemmlib.core.errors import InputError
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
        return Link(f"{self.inter.name} across {nodes} nodes, {per_node} per node", self.inter.kind, busbw,
                    self.inter.latency_s,
                    f"{per_node} NIC(s) per node × {self.inter.busbw / 1e9:g} GB/s"
                    + (f", capped by {inside.name}" if capped else "") + f"; {self.inter.source}")


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
        for label, value in ((N_("bandwidth"), bandwidth), (N_("SM count"), sms), (N_("memory"), memory_bytes)):
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


def _peaks(**kw: float) -> tuple[tuple[str, float], ...]:
    return tuple((d, kw[d] * T) for d in COMPUTE_DTYPES if d in kw)


def _reported(mib: float, source: str) -> tuple[float, str]:
    return float(mib * MiB), Text(N_("driver report: {mib:,} MiB ({source})"), mib=mib, source=source)


def _datasheet_gib(gb: float, what: str) -> tuple[float, str]:
    return float(gb * GiB), Text(N_("datasheet {gb:g} GB read as GiB (no driver report found; the usable total "
                                    "is a little less): {what}"), gb=gb, what=what)


# ----- links (bus bandwidth = per-direction line rate; latency from measurement where one exists) --------------

# aiconfigurator (NVIDIA, ai-dynamo/aiconfigurator @ 095f58a) ships nccl-tests sweeps per system:
# aic-core/src/aiconfigurator_core/systems/data/<sys>/comm/nccl/<ver>/nccl_perf.parquet
_AIC_NCCL = "aiconfigurator nccl-tests sweep ({}, NCCL {}), 8-GPU all_reduce at 1 KiB"
_LAT_STANDIN = ("latency: no measurement for this link; stand-in = 8 × H100 NVLink small-message all-reduce "
                "15.6 µs (aiconfigurator, NCCL 2.29.2)")
_NET_LAT = ("latency: 2-node 16 × H20 NVLSTree small-message all-reduce ≈ 46.5 µs (NVIDIA/nccl#1244), "
            "a stand-in for any inter-node link")


def _nvswitch(name: str, per_dir: float, latency_s: float, lat_source: str, source: str) -> Link:
    return Link(name, "nvswitch", per_dir, latency_s, f"{per_dir / 1e9:g} GB/s per direction (line rate; "
                f"{source}); latency {latency_s * 1e6:g} µs ({lat_source})")


def _pcie(gen: int, per_dir: float) -> Link:
    return Link(f"PCIe Gen{gen} x16", "pcie", per_dir, 15.6e-6,
                f"{per_dir / 1e9:g} GB/s per direction (line rate; no sourced 8-GPU PCIe collective figure); "
                + _LAT_STANDIN)


def _ib(gbit: int, kind: str = "infiniband") -> Link:
    per = gbit / 8 * 1e9
    return Link(f"{gbit} Gb/s {'InfiniBand' if kind == 'infiniband' else 'RoCE'} NIC", kind, per, 46.5e-6,
                f"{per / 1e9:g} GB/s per NIC per direction (line rate; measured NDR 400 Gb/s: 46-48 GB/s per NIC, "
                f"nccl-tests#290); {_NET_LAT}")


_PCIE4, _PCIE5, _PCIE6 = _pcie(4, 32e9), _pcie(5, 64e9), _pcie(6, 128e9)


def _hgx(nvlink: str, per_dir: float, latency_s: float, lat_source: str, pcie: Link, nic_gbit: int | None,
         network: str, source: str, scale_up_gpus: int = 8, gpus_per_node: int = 8) -> Interconnect:
    intra = _nvswitch(nvlink, per_dir, latency_s, lat_source, source)
    inter = _ib(nic_gbit) if nic_gbit else None
    return Interconnect(nvlink, per_dir, pcie.name, pcie.busbw, network, inter.busbw if inter else None,
                        scale_up_gpus, gpus_per_node, intra, pcie, inter, source)


def _pcie_only(pcie: Link, source: str, scale_up: str = N_("none (PCIe only)"), bridge: Link | None = None,
               bridge_gpus: int = 1) -> Interconnect:
    return Interconnect(scale_up, bridge.busbw if bridge else None, pcie.name, pcie.busbw,
                        N_("none standard (unknown)"), None, bridge_gpus, 8, bridge, pcie, None, source)


def _bridge(name: str, per_dir: float, source: str) -> Link:
    return Link(name, "nvlink", per_dir, 15.6e-6, f"{per_dir / 1e9:g} GB/s per direction (line rate; {source}); "
                + _LAT_STANDIN)


_NV = "https://www.nvidia.com/en-us/data-center/"
_AIC = "https://github.com/ai-dynamo/aiconfigurator"
_HGX = _NV + "hgx/"
_MI300X_DS = ("https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/data-sheets/"
              "amd-instinct-mi300x-data-sheet.pdf")

_H100_IC = _hgx(N_("NVLink 4 (18 links) + NVSwitch"), 450e9, 15.6e-6, _AIC_NCCL.format("H100 SXM", "2.29.2"), _PCIE5,
                400, N_("8 × ConnectX-7 400 Gb/s per node, one per GPU (DGX/HGX H100)"),
                "datasheet 900 GB/s bidirectional NVLink, PCIe Gen5 128 GB/s bidirectional: " + _NV + "h100/")
_H200_IC = _hgx(N_("NVLink 4 (18 links) + NVSwitch"), 450e9, 16.8e-6, _AIC_NCCL.format("H200 SXM", "2.29.2"), _PCIE5,
                400, N_("8 × ConnectX-7 400 Gb/s per node, one per GPU (HGX H200)"),
                "datasheet 900 GB/s bidirectional NVLink: " + _NV + "h200/")
_A100_IC = _hgx(N_("NVLink 3 (12 links) + NVSwitch"), 300e9, 21.8e-6, _AIC_NCCL.format("A100 SXM 80GB", "2.27.3"),
                _PCIE4, 200, N_("8 × ConnectX-6 HDR 200 Gb/s per node, one per GPU (DGX A100)"),
                "datasheet 600 GB/s bidirectional NVLink: " + _NV + "a100/")
_B200_IC = _hgx(N_("NVLink 5 (18 links) + NVSwitch"), 900e9, 25.2e-6, _AIC_NCCL.format("B200", "2.29.2"), _PCIE5,
                400, N_("8 × ConnectX-7 400 Gb/s per node (DGX B200; aiconfigurator assumes ConnectX-8 800 Gb/s)"),
                "HGX B200: NVSwitch GPU-to-GPU 1.8 TB/s bidirectional: " + _HGX)
_B300_IC = _hgx(N_("NVLink 5 (18 links) + NVSwitch"), 900e9, 25.2e-6,
                "no B300 measurement; stand-in = B200 " + _AIC_NCCL.format("B200", "2.29.2"), _PCIE6, 800,
                N_("ConnectX-8 800 Gb/s per GPU (aiconfigurator b300_sxm.yaml)"),
                "aiconfigurator b300_sxm.yaml: 1.8 TB/s NVLink bidirectional / 2, PCIe Gen6 256 GB/s bidirectional / 2")
_GB200_IC = _hgx(N_("NVLink 5 across the 72-GPU NVL72 rack"), 900e9, 25.2e-6,
                 "no GB200 small-message figure used; stand-in = B200 " + _AIC_NCCL.format("B200", "2.29.2"),
                 _PCIE5, 800, N_("out of the rack: ConnectX-8 800 Gb/s per GPU as aiconfigurator assumes "
                                   "(NVIDIA SKUs vary)"), _NV + "gb200-nvl72/ (1.8 TB/s NVLink per GPU); aiconfigurator gb200.yaml",
                 scale_up_gpus=72, gpus_per_node=72)
_H20_IC = _hgx(N_("NVLink 4 (18 links) + NVSwitch"), 450e9, 15.6e-6,
               "no H20 measurement; stand-in = H100 " + _AIC_NCCL.format("H100 SXM", "2.29.2"), _PCIE5, 200,
               N_("aiconfigurator assumes 25 GB/s per GPU (200 Gb/s)"), "aiconfigurator h20_sxm.yaml (900 GB/s NVLink)")
_H100_PAIR = _bridge("NVLink bridge (pairs)", 300e9, "600 GB/s bidirectional, " + _NV + "h100/")
_H200_NVL_BRIDGE = _bridge("NVLink bridge (2- or 4-way; 4 assumed)", 450e9,
                           "900 GB/s bidirectional, " + _NV + "h200/")
_XGMI = Link("Infinity Fabric (7 links, full mesh)", "xgmi", 448e9, 15.6e-6,
             "896 GB/s peak aggregate bidirectional (7 × 128 GB/s) / 2 per direction (line rate; " + _MI300X_DS
             + "); " + _LAT_STANDIN)
_MI_IC = Interconnect(N_("Infinity Fabric, 7 links to the 7 other GPUs"), 448e9, "PCIe Gen5 x16", 64e9,
                      N_("platform-dependent (unknown)"), None, 8, 8, _XGMI, _PCIE5, None, _MI300X_DS)

_H100_MEM = _reported(81559, "nvidia-smi, NVIDIA/nccl#1264 and modal-labs/modal-client#2797")

CATALOGUE: dict[str, Hardware] = {
    "H100 SXM": Hardware(
        "H100 SXM", "gpu", _peaks(fp32=67, tf32=494.7, fp16=989.4, bf16=989.4, fp8=1978.9, int8=1978.9),
        bandwidth=3.35e12, sms=132, memory_bytes=_H100_MEM[0], memory_source=_H100_MEM[1],
        source="https://www.nvidia.com/en-us/data-center/h100/",
        notes="Datasheet lists sparse figures; dense = half of them.", aliases=("h100", "h100 sxm5", "h100 80gb hbm3"),
        interconnect=_H100_IC,
    ),
    "H100 PCIe": Hardware(
        "H100 PCIe", "gpu", _peaks(fp32=51, tf32=378, fp16=756.5, bf16=756.5, fp8=1513, int8=1513),
        bandwidth=2.0e12, sms=114, memory_bytes=_datasheet_gib(80, "80 GB HBM2e")[0],
        memory_source=_datasheet_gib(80, "80 GB HBM2e")[1],
        source="https://www.nvidia.com/en-us/data-center/h100/",
        notes="Dense = half the datasheet's sparse figures; aiconfigurator h100_pcie.yaml: 756.5 TFLOP/s dense bf16, "
              "2.0 TB/s. Product brief PB-11133-001: '>2,000 GBps', 350 W.",
        aliases=("h100 pcie",), interconnect=_pcie_only(_PCIE5, _NV + "h100/", N_("NVLink bridge (pairs)"), _H100_PAIR, 2),
    ),
    "H100 NVL": Hardware(
        "H100 NVL", "gpu", _peaks(fp32=60, tf32=417.5, fp16=835.5, bf16=835.5, fp8=1670.5, int8=1670.5),
        bandwidth=3.9e12, sms=132, memory_bytes=_reported(95830, "nvidia-smi, NVIDIA/gpu-admin-tools#4")[0],
        memory_source=_reported(95830, "nvidia-smi, NVIDIA/gpu-admin-tools#4")[1]
        + "; sources disagree: fastfetch reports 99,961,274,368 B (fastfetch-cli/fastfetch#1658)",
        source="https://www.nvidia.com/en-us/data-center/h100/",
        notes="Dense = half the datasheet's sparse figures (835 / 1,671 / 3,341 with sparsity). 94 GB HBM3.",
        aliases=("h100 nvl",), interconnect=_pcie_only(_PCIE5, _NV + "h100/", N_("NVLink bridge (pairs)"), _H100_PAIR, 2),
    ),
    "H200 SXM": Hardware(
        "H200 SXM", "gpu", _peaks(fp32=67, tf32=494.7, fp16=989.4, bf16=989.4, fp8=1978.9, int8=1978.9),
        bandwidth=4.8e12, sms=132, memory_bytes=_reported(143771, "nvidia-smi, NVIDIA/cuda-samples#311")[0],
        memory_source=_reported(143771, "nvidia-smi, NVIDIA/cuda-samples#311")[1],
        source="https://www.nvidia.com/en-us/data-center/h200/",
        notes="Same Hopper GH100 compute as H100 SXM, HBM3e memory (141 GB).", aliases=("h200", "h200 sxm"),
        interconnect=_H200_IC,
    ),
    "H200 NVL": Hardware(
        "H200 NVL", "gpu", _peaks(fp32=60, tf32=417.5, fp16=835.5, bf16=835.5, fp8=1670.5, int8=1670.5),
        bandwidth=4.8e12, sms=132, memory_bytes=_datasheet_gib(141, "141 GB HBM3e")[0],
        memory_source=_datasheet_gib(141, "141 GB HBM3e")[1],
        source="https://www.nvidia.com/en-us/data-center/h200/",
        notes="PCIe card, up to 600 W: dense = half the datasheet's sparse figures.", aliases=("h200 nvl",),
        interconnect=_pcie_only(_PCIE5, _NV + "h200/", N_("NVLink bridge (2- or 4-way)"), _H200_NVL_BRIDGE, 4),
    ),
    "GB200": Hardware(
        "GB200", "gpu", _peaks(tf32=1250, fp16=2500, bf16=2500, fp8=5000, int8=5000, fp4=10000),
        bandwidth=8e12, sms=0, memory_bytes=_reported(189471, "nvidia-smi, aiconfigurator gb200.yaml")[0],
        memory_source=_reported(189471, "nvidia-smi, aiconfigurator gb200.yaml")[1],
        source="https://www.nvidia.com/en-us/data-center/gb200-nvl72/",
        notes="Per GPU of a GB200 NVL72: 72-GPU totals with sparsity (TF32 180 PF, FP16 360, FP8 720, INT8 720 "
              "POPS, FP4 1,440) / 72 / 2; aiconfigurator gb200.yaml agrees (2500/5000/5000/10000 dense). FP32 "
              "and SMs not in the datasheet per GPU (unknown). 186 GB HBM3e, 8 TB/s per GPU.",
        aliases=("gb200",), unknown=("fp32",), interconnect=_GB200_IC,
    ),
    "B200": Hardware(
        "B200", "gpu", _peaks(fp32=75, tf32=1125, fp16=2250, bf16=2250, fp8=4500, int8=4500, fp4=9000),
        bandwidth=8e12, sms=148, memory_bytes=_reported(183359, "nvidia-smi, NVIDIA/TensorRT-LLM#10278")[0],
        memory_source=_reported(183359, "nvidia-smi, NVIDIA/TensorRT-LLM#10278")[1],
        source="https://www.nvidia.com/en-us/data-center/hgx/",
        notes="HGX B200 8-GPU totals with sparsity (TF32 18 PF, FP16 36, FP8 72, INT8 72 POPS, FP4 144) / 8 / 2; "
              "aiconfigurator b200_sxm.yaml and pytorch/ao#4002 agree. Bandwidth: datasheet 8 TB/s (64 TB/s per "
              "8 GPUs); sources disagree: 7.67 TB/s from 7680 bit × 3996 MHz × 2 (pytorch/ao#4002), aiconfigurator "
              "7.7e12. 148 SMs, L2 126.5 MB (pytorch/ao#4002). 1000 W.",
        aliases=("b200",), interconnect=_B200_IC,
    ),
    "B300": Hardware(
        "B300", "gpu", _peaks(fp32=75, tf32=1125, fp16=2250, bf16=2250, fp8=4500, fp4=13500),
        bandwidth=8e12, sms=0, memory_bytes=_reported(275040, "nvidia-smi, aiconfigurator b300_sxm.yaml")[0],
        memory_source=_reported(275040, "nvidia-smi, aiconfigurator b300_sxm.yaml")[1],
        source="https://www.nvidia.com/en-us/data-center/hgx/",
        notes="Blackwell Ultra (HGX B300). FP4: HGX B300 datasheet 108 PF dense per 8 GPUs = 13.5 PF; sources "
              "disagree: 13.1 (glennklockwood.com), 14 (aiconfigurator), 15 (tomshardware). INT8 unknown: sources "
              "disagree by 30× (4500 glennklockwood, 153.5 aiconfigurator '307 TOPS sparse / 2', ≈125 HGX B300 "
              "'2 POPS' per 8). SMs unknown (160 in one secondary source). Bandwidth 8 TB/s datasheet, "
              "aiconfigurator 7.75e12. 288 GB HBM3e.",
        aliases=("b300",), unknown=("int8",), interconnect=_B300_IC,
    ),
    "A100 SXM 80GB": Hardware(
        "A100 SXM 80GB", "gpu", _peaks(fp32=19.5, tf32=156, fp16=312, bf16=312, int8=624),
        bandwidth=2.039e12, sms=108, memory_bytes=_reported(81920, "nvidia-smi, modal-labs/modal-client#2797")[0],
        memory_source=_reported(81920, "nvidia-smi, modal-labs/modal-client#2797")[1],
        source="https://www.nvidia.com/en-us/data-center/a100/",
        notes="No FP8 tensor cores (compute capability 8.0).", aliases=("a100", "a100 80gb", "a100 sxm4 80gb"),
        interconnect=_A100_IC,
    ),
    "A100 SXM 40GB": Hardware(
        "A100 SXM 40GB", "gpu", _peaks(fp32=19.5, tf32=156, fp16=312, bf16=312, int8=624),
        bandwidth=1.555e12, sms=108, memory_bytes=_reported(40960, "nvidia-smi, modal-labs/modal-client#2797")[0],
        memory_source=_reported(40960, "nvidia-smi, modal-labs/modal-client#2797")[1]
        + "; cudaDeviceProp totalGlobalMem 42,298,834,944 B (bottlerocket-os/bottlerocket#3873)",
        source="https://www.nvidia.com/en-us/data-center/a100/",
        notes="Same peaks as the 80 GB part; 1,555 GB/s HBM2 (datasheet; llm-analysis a100-sxm-40gb.json agrees).",
        aliases=("a100 40gb", "a100 sxm4 40gb", "a100-40gb"), interconnect=_A100_IC,
    ),
    "L40S": Hardware(
        "L40S", "gpu", _peaks(fp32=91.6, tf32=183, fp16=362, bf16=362, fp8=733, int8=733),
        bandwidth=0.864e12, sms=142, memory_bytes=_reported(46068, "nvidia-smi, modal-labs/modal-client#2797")[0],
        memory_source=_reported(46068, "nvidia-smi, modal-labs/modal-client#2797")[1],
        source="https://www.nvidia.com/en-us/data-center/l40s/", aliases=("l40s",),
        interconnect=_pcie_only(_PCIE4, "aiconfigurator l40s.yaml (intra = PCIe 32e9)"),
    ),
    "L4": Hardware(
        "L4", "gpu", _peaks(fp32=30.3, tf32=60, fp16=121, bf16=121, fp8=242.5, int8=242.5),
        bandwidth=0.3e12, sms=58, memory_bytes=_reported(23034, "nvidia-smi, modal-labs/modal-client#2797")[0],
        memory_source=_reported(23034, "nvidia-smi, modal-labs/modal-client#2797")[1],
        source="https://www.nvidia.com/en-us/data-center/l4/",
        notes="aiconfigurator l4.yaml: '121TFLOPS (dense; NVIDIA specs list 242TFLOPS with sparsity)'. 72 W.",
        aliases=("l4",), interconnect=_pcie_only(_PCIE4, "aiconfigurator l4.yaml (intra = PCIe 32e9)"),
    ),
    "A10G": Hardware(
        "A10G", "gpu", _peaks(fp16=70, bf16=70, int8=140),
        bandwidth=0.6e12, sms=80, memory_bytes=_reported(23028, "nvidia-smi, NVIDIA/DCGM#232")[0],
        memory_source=_reported(23028, "nvidia-smi, NVIDIA/DCGM#232")[1],
        source="https://github.com/cli99/llm-analysis/blob/main/llm_analysis/gpu_configs/a10g-pcie-24gb.json",
        notes="AWS's part: NVIDIA publishes no A10G datasheet. fp16/bf16 70 and int8 140 TFLOP/s and 600 GB/s come "
              "from llm-analysis's config, which names no source (secondary); fp32/tf32 unknown. 80 SMs per a "
              "secondary catalogue (consistent: 80 SMs × 512 FLOP/clk × 1.71 GHz ≈ 70 TFLOP/s). The A10 "
              "(a different SKU) is 125 TFLOP/s fp16: https://www.nvidia.com/en-us/data-center/products/a10-gpu/",
        aliases=("a10g",), unknown=("fp32", "tf32"),
        interconnect=_pcie_only(_PCIE4, "PCIe Gen4 x16 card, no NVLink"),
    ),
    "RTX 4090": Hardware(
        "RTX 4090", "gpu", _peaks(fp32=82.6, tf32=82.6, fp16=165.2, bf16=165.2, fp8=330.3, int8=660.6),
        bandwidth=1.008e12, sms=128, memory_bytes=_datasheet_gib(24, "24 GB GDDR6X")[0],
        memory_source=_datasheet_gib(24, "24 GB GDDR6X")[1],
        source="https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf",
        notes="GeForce: fp16/bf16/fp8 figures are with fp32 accumulation (half the fp16-accumulate rate).",
        aliases=("4090", "rtx4090", "geforce rtx 4090"),
        interconnect=_pcie_only(_PCIE4, "GeForce: no NVLink"),
    ),
    "RTX 5090": Hardware(
        "RTX 5090", "gpu", _peaks(fp32=104.8, int8=838, fp4=1676),
        bandwidth=1.792e12, sms=170, memory_bytes=_reported(32607, "nvidia-smi, aiconfigurator rtx_5090.yaml")[0],
        memory_source=_reported(32607, "nvidia-smi, aiconfigurator rtx_5090.yaml")[1],
        source=_AIC + " (src/aiconfigurator/systems/rtx_5090.yaml)",
        notes="aiconfigurator: '419.0 TFLOPS dense, 170 SMs at 2407 MHz' fp16 and 838 fp8 — rates with fp16 "
              "accumulation; the fp32-accumulate rates a PyTorch GEMM uses are unknown, so fp16/bf16/fp8 are left "
              "unknown. fp32 = 170 SMs × 128 × 2 × 2.407 GHz = 104.8 (sources: 104 to 105.2). int8 838, fp4 1676 "
              "(aiconfigurator). 32 GB GDDR7, 1,792 GB/s, 575 W.",
        aliases=("5090", "rtx5090", "geforce rtx 5090"), unknown=("tf32", "fp16", "bf16", "fp8"),
        interconnect=_pcie_only(_PCIE5, "GeForce: no NVLink; aiconfigurator rtx_5090.yaml"),
    ),
    "MI300X": Hardware(
        "MI300X", "gpu", _peaks(fp32=163.4, tf32=653.7, fp16=1307.4, bf16=1307.4, fp8=2614.9, int8=2614.9),
        bandwidth=5.3e12, sms=304,
        memory_bytes=201_310_208 * 1024.0,
        memory_source=Text(N_("driver report: rocminfo GPU pool {kb:,} KB ({source}) = 192 GiB"), kb=201_310_208,
                           source="ROCm/legacy-rocm-build#4414"),
        source=_MI300X_DS,
        notes="AMD's data sheet prints a 'with sparsity' column at double these. 304 CUs × 2.1 GHz × 2048 FP16 "
              "FLOP/clk = 1.307 PF. 750 W.", aliases=("mi300x", "instinct mi300x"), interconnect=_MI_IC,
    ),
    "MI325X": Hardware(
        "MI325X", "gpu", _peaks(fp32=163.4, tf32=653.7, fp16=1307.4, bf16=1307.4, fp8=2614.9, int8=2614.9),
        bandwidth=6e12, sms=304, memory_bytes=_datasheet_gib(256, "256 GB HBM3e")[0],
        memory_source=_datasheet_gib(256, "256 GB HBM3e")[1],
        source="https://awesomeagents.ai/hardware/amd-mi325x",
        notes="Same CDNA3 compute as MI300X (FP8 2,614.9, with sparsity 5,229.8; FP16/BF16 1,307.4; TF32 653.7; "
              "FP32 163.4), 6 TB/s, 1000 W; secondary page quoting AMD's data sheet.",
        aliases=("mi325x", "instinct mi325x"), interconnect=_MI_IC,
    ),
    "MI355X": Hardware(
        "MI355X", "gpu", _peaks(fp16=2516, bf16=2516, fp8=5033, fp4=10066),
        bandwidth=8e12, sms=256, memory_bytes=_datasheet_gib(288, "288 GB HBM3e")[0],
        memory_source=_datasheet_gib(288, "288 GB HBM3e")[1],
        source="https://www.tomshardware.com/pc-components/gpus/amds-instinct-mi355x-accelerator-will-consume-1-400-watts",
        notes="CDNA4, 1400 W: '2.5 PF' fp16, 'five petaflops' fp8 (256 CU × 2.4 GHz × 8192 FP8 FLOP/clk = 5.03 PF), "
              "10.1 PF MXFP4 dense (20.1 with sparsity); tomshardware and world-today-news (secondary). fp32, tf32, "
              "int8 unknown; Infinity Fabric bandwidth unknown.",
        aliases=("mi355x", "instinct mi355x"), unknown=("fp32", "tf32", "int8"),
        interconnect=_pcie_only(_PCIE5, "Infinity Fabric 4th gen: bandwidth unknown", N_("Infinity Fabric (unknown)")),
    ),
    "H20": Hardware(
        "H20", "gpu", _peaks(fp16=148, bf16=148, fp8=294, int8=294),
        bandwidth=4.0e12, sms=0, memory_bytes=_datasheet_gib(96, "96 GB HBM3 (press figure)")[0],
        memory_source="no NVIDIA datasheet: 96 GB HBM3 per press reports, read as GiB; sources disagree "
                      "(aiconfigurator h20_sxm.yaml: '80GiB' in a comment, 141,899,345,920 B in a field)",
        source=_AIC + " (src/aiconfigurator/systems/h20_sxm.yaml)",
        notes="No public NVIDIA datasheet (sunkx109/GPUs-Specs#2). aiconfigurator: fp16 148, fp8/int8 294 "
              "TFLOP/s, 4.0 TB/s; measured torch GEMM peaks bf16 142.25, tf32 71.80, fp32 31.99 TFLOP/s "
              "(zzc0721/torch-performance-test-data#77). fp32/tf32 peaks and SMs unknown.",
        aliases=("h20",), unknown=("fp32", "tf32"), interconnect=_H20_IC,
    ),
    "CPU (edit me)": Hardware(
        N_("CPU (edit me)"), "cpu", _peaks(fp32=0.2, fp16=0.05, bf16=0.05, int8=0.2),
        bandwidth=20e9, sms=2, memory_bytes=24 * GiB, memory_source="placeholder",
        source=N_("(user-supplied: cores x GHz x FLOP/cycle; measure with `python -m gemmlib devices --measure`)"),
        notes="A placeholder for a 2-core server: edit peaks and bandwidth for your CPU.",
        editable=True, aliases=("cpu",),
        interconnect=Interconnect(N_("none"), None, N_("none"), None, N_("ethernet (gloo)"), None, 1, 1, None,
                                  Link("shared memory (gloo)", "gloo", 5e9, 50e-6, "placeholder"),
                                  Link(N_("ethernet (gloo)"), "gloo", 1.25e9, 100e-6, "placeholder: 10 Gb/s"),
                                  "placeholder"),
    ),
}


DEFAULT_GPU = "H100 SXM"


def gpu_names() -> list[str]:
    return list(CATALOGUE)


def get_hardware(name: str) -> Hardware:
    """Find a catalogue row by name or alias (case- and space-insensitive)."""
    want = str(name).strip().lower().replace(" ", "").replace("-", "").replace("_", "")
    for hw in CATALOGUE.values():
        keys = [hw.name, *hw.aliases]
        if any(k.lower().replace(" ", "").replace("-", "").replace("_", "") == want for k in keys):
            return hw
    raise InputError(N_("unknown GPU {name!r}; choose one of: {choices}"), name=str(name)[:60],
                     choices=", ".join(CATALOGUE))


def catalogue_rows() -> list[dict]:
    """The catalogue as table rows (TFLOP/s, TB/s, GiB, interconnect) for pages, the CLI and the report.

    A peak no source gives is None here and named under "unknown peaks"; an unknown SM count is None.
    """
    rows = []
    for hw in CATALOGUE.values():
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
        rows.append(row)
    return rows
