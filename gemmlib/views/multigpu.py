"""The Multi-GPU page's presenter: the collectives' table and reference lines, the tensor-parallel
estimate and results as tables, and their captions.

``pages/11_Multi_GPU.py`` lays out the inputs, the runs and the charts; the measuring is
``gemmlib.measure.collectives`` and ``gemmlib.measure.tp``, whose results reach this module as the
dicts the page keeps (``CollectiveRun.to_dict``, ``TPRun.to_dict``) and the estimate as
``gemmlib.measure.tp.estimate_layer``'s dict. Nothing here imports streamlit or measure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from gemmlib.core import interconnect
from gemmlib.core.i18n import N_, Msg, Text, Translate, english, render

MLP_LABELS = {"gated": N_("gated"), "plain": N_("plain")}
# The catalogue's CPU links and their sources (gemmlib.core.hardware; not marked there yet), as the page shows them.
LINK_NAMES = (N_("shared memory (gloo)"), N_("ethernet (gloo)"), N_("placeholder"), N_("placeholder: 10 Gb/s"))
TP_COLUMNS = {"ranks": N_("ranks"), "one rank ms": N_("one rank ms"), "per rank ms": N_("per rank ms"),
              "n ranks ms": N_("n ranks ms"), "all-reduces ms": N_("all-reduces ms"), "speed-up": N_("speed-up"),
              "hardware": N_("hardware"), "link": N_("link"), "efficiency": N_("efficiency"),
              "comm share": N_("comm share"), "estimate ms": N_("estimate ms"), "rel. diff": N_("rel. diff"),
              "matches": N_("matches")}
COLLECTIVE_COLUMNS = ("op", "bytes", "count", "time µs", "p20 µs", "p80 µs", "algbw_gbps", "busbw_gbps", "correct")


def name_label(name: Any, gettext: Translate = english) -> str:
    """A link's or a hardware row's name in the reader's language: a measured interconnect ("gloo, 2 CPU processes on
    AMD EPYC (measured interconnect; not a GPU link)") or a measured row ("AMD EPYC (measured)"), which
    ``gemmlib.core.interconnect`` and ``gemmlib.core.ceilings`` build as Texts (a plain English one, from a file an
    earlier version wrote or a URL, is read back by ``interconnect.name_text``), else the catalogue's own name
    through the catalogue (its CPU links and rows are marked)."""
    text = interconnect.name_text(name) if isinstance(name, str) else name
    return text.render(gettext) if isinstance(text, (Text, Msg)) else gettext(str(text))


def hardware_label(hw: Any, gettext: Translate = english, tr: Callable[[Any], str] = str) -> str:
    """The estimate's hardware (``tp.HW_SHARE``'s "NAME ÷ n (one rank's cores)", or a name) in the reader's language,
    its name too."""
    msg = hw.msg if isinstance(hw, Text) else hw
    if isinstance(msg, Msg):
        return render(msg.template, {k: name_label(v, gettext) if k == "name" and isinstance(v, str) else v
                                     for k, v in msg.params.items()}, gettext)  # tp gives the name as a Text
    return name_label(hw, gettext) if type(hw) is str else tr(hw)


def collective_rows(rows: Iterable[Mapping], op_label: Callable[[str], str]) -> list[dict]:
    """The measured sizes of a collectives run (those with a time) as the page's table: the collective
    named in the reader's language (``op_label``), its times in µs, columns ``COLLECTIVE_COLUMNS``."""
    out = []
    for r in rows:
        if r.get("time_s"):
            d = {**r, "op": op_label(r["op"]), "time µs": r["time_s"] * 1e6, "p20 µs": r["p20_s"] * 1e6,
                 "p80 µs": r["p80_s"] * 1e6}
            out.append({c: d.get(c) for c in COLLECTIVE_COLUMNS})
    return out


def references(datasheet: tuple[str, float] | None, measured: Iterable[Any],
               gettext: Translate = english) -> tuple[dict[str, tuple[str, float] | None], dict[str, str]]:
    """The reference lines a collectives chart can draw, by id: none, the datasheet's link (``datasheet``:
    its name and GB/s), each measured link (``interconnect.Link``s: name and busbw in B/s); and each id's
    label in the reader's language."""
    refs: dict[str, tuple[str, float] | None] = {"none": None}
    labels = {"none": gettext("none")}
    if datasheet is not None:
        refs[f"datasheet: {datasheet[0]}"] = datasheet
        labels[f"datasheet: {datasheet[0]}"] = gettext("datasheet: {link}").format(link=datasheet[0])
    for lk in measured:
        refs[f"measured: {lk.name}"] = (name_label(lk.name, gettext), lk.busbw / 1e9)
        labels[f"measured: {lk.name}"] = gettext("measured: {link}").format(link=name_label(lk.name, gettext))
    return refs, labels


def preview_row(n: int, est: Mapping, gettext: Translate = english, tr: Callable[[Any], str] = str) -> dict:
    """One rank count's estimate before measuring (``est``: ``estimate_layer``'s dict without an error)."""
    comm = est["tp"]["comm_s"]
    return {"ranks": n, "one rank ms": est["one_rank"]["time_s"] * 1e3, "per rank ms": est["tp"]["time_s"] * 1e3,
            "all-reduces ms": None if comm is None else comm * 1e3, "speed-up": est["speedup"],
            "hardware": hardware_label(est["hardware"], gettext, tr),
            "link": name_label(est["link"], gettext) if est["link"] else "—"}


def _estimated(run: Mapping, part: str) -> float | None:
    return ((run.get("estimate") or {}).get(part) or {}).get("time_s")


def tp_rows(runs: Sequence[Mapping]) -> list[dict]:
    """The tensor-parallel runs as the page's table: one row per rank count, measured beside estimated."""
    return [{"ranks": r["nproc"], "one rank ms": r["one_rank_s"] * 1e3, "n ranks ms": r["tp_s"] * 1e3,
             "all-reduces ms": r["comm_s"] * 1e3, "speed-up": r["speedup"], "efficiency": r["scaling_efficiency"],
             "comm share": r["comm_share"], "estimate ms": (_estimated(r, "tp") or float("nan")) * 1e3,
             "rel. diff": r["rel_diff"], "matches": r["correct"]} for r in runs]


def tp_points(runs: Sequence[Mapping]) -> list[dict]:
    """The scaling chart's points: one rank, then each rank count, measured and estimated seconds."""
    first = runs[0]
    return [{"ranks": 1, "measured_s": first["one_rank_s"], "estimated_s": _estimated(first, "one_rank")}] + [
        {"ranks": r["nproc"], "measured_s": r["tp_s"], "estimated_s": _estimated(r, "tp")} for r in runs]


def estimate_caption(est: Mapping, gettext: Translate = english, tr: Callable[[Any], str] = str) -> str:
    """Where the estimate beside a run comes from: its hardware and source, the link of its all-reduces
    and its note; or why there is none."""
    if est.get("error"):
        return gettext("Estimate: not available ({why}).").format(why=tr(est["error"]))
    note = tr(est["note"]) if est.get("note") else ""
    return (gettext("Estimate: {hardware} ({source}); all-reduces on {link} — {note}.") if note else
            gettext("Estimate: {hardware} ({source}); all-reduces on {link}.")).format(
        hardware=hardware_label(est.get("hardware") or "", gettext, tr), source=tr(est.get("hardware_source") or ""),
        link=name_label(est["link"], gettext) if est.get("link") else gettext("no link"), note=note)


def oversubscribed_note(runs: Sequence[Mapping], cores: int, ngettext: Callable[[str, str, int], str],
                        gettext: Translate = english) -> str | None:
    """Why gloo runs of more ranks than the machine has cores measure far above their estimate (None when none did):
    the ranks take turns on the cores and the all-reduces wait for ranks that have none, while the estimate gives
    each rank 1/n of the cores at once (measured: 4 ranks on 2 cores, an estimated speed-up of 3.3×, 0.3× run)."""
    over = sorted({int(r["nproc"]) for r in runs if r.get("backend") == "gloo" and int(r["nproc"]) > cores})
    if not over:
        return None
    return ngettext("More ranks than this machine's {cores} core ({ranks}): the ranks took turns on it and the "
                    "all-reduces waited for ranks that were not running, which the estimate (every rank on 1/n of "
                    "the cores at the same time) does not model; its times are below the measured ones there.",
                    "More ranks than this machine's {cores} cores ({ranks}): the ranks took turns on them and the "
                    "all-reduces waited for ranks that were not running, which the estimate (every rank on 1/n of "
                    "the cores at the same time) does not model; its times are below the measured ones there.",
                    cores).format(cores=cores, ranks=gettext(", ").join(str(n) for n in over))


def layer_caption(model: Any, ranks: Sequence[int], gettext: Translate = english) -> str:
    """The layer a tensor-parallel run splits (``model``: ``gemmlib.measure.tp``'s layer shape) and the rank
    counts that split it evenly here."""
    return gettext("{name}: hidden {hidden}, {heads} heads ({kv} K/V) of {head_dim}, MLP {ffn} {mlp}; rank counts "
                   "that split it evenly here: {ranks}.").format(
        name=model.name, hidden=model.hidden, heads=model.heads, kv=model.kv_heads, head_dim=model.head_dim,
        ffn=model.ffn, mlp=gettext(MLP_LABELS.get(model.mlp, model.mlp)),
        ranks=gettext(", ").join(map(str, ranks)) or gettext("none"))
