"""Devices: this machine's CPU and GPUs, their datasheet rows, and ceilings measured here.

Detection, catalogue matching and the ceiling measurement live in ``gemmlib.measure.devices``;
this page shows them and runs the measurement under the single-flight lock. It renders without
importing torch (``gemmlib.core.machine``: /proc/cpuinfo, NVML); PyTorch's own view is asked for
with a toggle.
"""


import pandas as pd
import streamlit as st

import ui
from gemmlib.charts import bench as charts_bench
from gemmlib.core import ceilings, machine
from gemmlib.core.hardware import CATALOGUE
from gemmlib.core.i18n import N_
from gemmlib.measure import devices
from gemmlib.measure import precision as bp
from ui import _, ngettext

ui.page(
    _("Devices"),
    "🖥️",
    _("What this machine has, what its datasheet promises, and what it really reaches. A datasheet peak\n"
      "is what the silicon could do at its boost clock with a perfect kernel; a **measured ceiling** is\n"
      "what a large GEMM per number format and a device-to-device copy reach here, with this software,\n"
      "today. The Roofline and the estimator can use both."),
)


@st.cache_resource(show_spinner=False)
def _detect(code: str) -> list[dict]:
    """Torch's devices, their match notes in language ``code`` (asked once per server and language)."""
    return [d.to_dict() for d in devices.detect(gettext=ui.gettext_for(code))]


PEAKS = ("fp32", "tf32", "fp16", "bf16", "fp8", "int8")


def _datasheet_rows(found: list[dict]) -> list[dict]:
    rows = []
    for d in found:
        hw = CATALOGUE.get(d.get("catalogue") or "")
        row = {"device": f"{d['kind']}:{d['index']}", "name": d["name"],
               "catalogue row": _(d["catalogue"]) if d.get("catalogue") else "—"}
        for dt in PEAKS:
            p = hw.peak(dt) if hw else None
            row[f"{dt} {'TOP/s' if dt == 'int8' else 'TFLOP/s'}"] = p / 1e12 if p else None  # int8: integer ops
        row["bandwidth TB/s"] = hw.bandwidth / 1e12 if hw else None
        row["source"] = (hw.source if hw.source.startswith("http") else _(hw.source)) if hw else ""
        rows.append(row)
    return rows


def _datasheet_table(rows: list[dict]) -> None:
    """The figures in a table that fits a 1280-px window (headers the number formats, their units in the caption);
    each device's detected name and its datasheet's source written under it, in an expander."""
    figures = ["device", "catalogue row", *(f"{dt} {'TOP/s' if dt == 'int8' else 'TFLOP/s'}" for dt in PEAKS),
               "bandwidth TB/s"]
    ui.table(pd.DataFrame(rows, columns=figures), column_config={
        **_labels(figures[:2]), **{c: c.split()[0] for c in figures[2:-1]}, "bandwidth TB/s": "TB/s"})
    st.caption(_("Dense datasheet peaks of the catalogue row each device matches, in TFLOP/s (int8: TOP/s, integer "
                 "operations); memory bandwidth in TB/s."))
    with st.expander(_("Each device's name and its datasheet's source")):
        st.markdown("\n".join(_("- **{dev}** {name} → {row}: {source}").format(
            dev=r["device"], name=ui.md(r["name"]), row=ui.md(r["catalogue row"]),
            source=f"<{r['source']}>" if r["source"].startswith("http") else ui.md(r["source"] or "—")) for r in rows))


# every column these tables show (the data keep their keys), as shown
COLUMNS = {"kind": N_("kind"), "index": N_("index"), "name": N_("name"), "units": N_("units"),
           "memory GiB": N_("memory GiB"), "capability": N_("compute capability"), "catalogue": N_("catalogue row"),
           "match_note": N_("match"), "device": N_("device"), "catalogue row": N_("catalogue row"),
           "bandwidth TB/s": N_("bandwidth TB/s"), "figure": N_("figure"), "measured": N_("measured"),
           "datasheet": N_("datasheet"), "unit": N_("unit"), "share of datasheet": N_("share of datasheet"),
           "low": N_("at the p80 time"), "high": N_("at the p20 time"), "note": N_("note")}


def _memory_gib(t: pd.DataFrame) -> pd.Series:
    """The devices' memory in GiB (the project's byte unit); "—" where it is unknown (0 bytes)."""
    return (t["memory_bytes"] / 2**30).where(t["memory_bytes"] > 0)


def _labels(columns) -> dict:
    return {c: _(COLUMNS[c]) for c in columns if c in COLUMNS}


def _units(d: dict) -> str:
    if not d["units"]:  # a GPU whose SM count the driver did not give
        return "—"
    if d["kind"] == "cpu":
        return ngettext("{n} thread", "{n} threads", d["units"]).format(n=d["units"])
    return ngettext("{n} SM", "{n} SMs", d["units"]).format(n=d["units"])


st.subheader(_("Detected"))
st.caption(_("Found without loading PyTorch (from `/proc/cpuinfo` and NVIDIA's NVML), as the home page does:"))
light_found = machine.light_summary()
light = pd.DataFrame(light_found).assign(**{"memory GiB": _memory_gib})
light = light[["kind", "index", "name", "units", "memory GiB", "capability", "catalogue"]]
light["catalogue"] = [_(c) if c else c for c in light["catalogue"]]
light["units"] = [_units(d) for d in light_found]  # "2 threads", "132 SMs": a count with what it counts
ui.table(light, column_config=_labels(light.columns))

# PyTorch takes seconds to load: the page renders without it, and asks it only when the reader wants its view
cuda_ok, _cuda_why = ui.cuda_available()
found: list[dict] = []
if ui.url(st.toggle, _("Ask PyTorch too"), False, key="dv_torch",
             help=_("Loading PyTorch takes a few seconds; the rest of this page does not need it.")):
    with ui.guard(_("device detection")), st.spinner(_("Asking torch which devices are present…")):
        found = _detect(ui.lang())
        table = pd.DataFrame(found).assign(**{"memory GiB": _memory_gib})
        table["units"] = [_units(d) for d in found]
        table["catalogue"] = [_(c) if c else c for c in table["catalogue"]]
        st.caption(_("As PyTorch sees them (threads torch uses; SMs, memory and compute capability of each GPU):"))
        cols = ["kind", "index", "name", "units", "memory GiB", "capability", "catalogue", "match_note"]
        ui.table(table[cols], column_config=_labels(cols))
st.subheader(_("Datasheet"))
_datasheet_table(_datasheet_rows(found or light_found))
cpu_note = st.empty()  # filled below, after this run's measurement: it asked for one beside the new figures

st.subheader(_("Measure ceilings"))


lim = ui.bench_limits()

choices = ["cuda", "cpu"] if cuda_ok else ["cpu"]
c = st.columns([1, 1, 3])
dev = ui.url(c[0].radio, _("Device"), choices, key="dv_device")
quick = ui.url(c[1].checkbox, _("quick"), dev == "cpu" or lim.classroom, key="dv_quick",
                      help=_("Smaller GEMMs and copy: faster, a little below the true ceiling."))
cfg = devices.CeilingsConfig(dev, quick)
size, copy_bytes = cfg.size, cfg.copy_bytes
c[2].caption((_("Runs a {n}×{n}×{n} GEMM in each format the device supports and a {copy:.0f} MiB device-to-device "
                "copy (bandwidth counts the read and the write). Results are kept for this server (in its private "
                "cache folder) and shown to every visitor.") if dev != "cpu" else  # a CPU has no fp8 nor tf32
               _("Runs a {n}×{n}×{n} GEMM in each format torch runs on this CPU (fp8 through a reference kernel, which "
                 "is no ceiling; no tf32) and a {copy:.0f} MiB copy in memory (bandwidth counts the read and the "
                 "write). Results are kept for this server (in its private cache folder) and shown to every visitor.")
               ).format(n=size, copy=copy_bytes / 1024**2))


def _saved(ceil: ceilings.Ceilings) -> ceilings.Ceilings:
    ceilings.save_ceilings(ceil)  # for this server: every visitor's estimate and Roofline page use it
    return ceil


ui.bench_section(devices.SPEC, cfg, lim, key="dv_measured", button=_("Measure ceilings"), estimate=True,
                 what=_("the ceiling measurement"), store=_saved, keep=lambda c: c.results,
                 done=lambda c: _("Measured {name}").format(name=ui.md(c.device_name)))

measured = ceilings.all_ceilings()
if not cuda_ok:  # once this CPU is measured the pages use its ceilings: say so rather than ask for a measurement
    cpu_note.info(_("No CUDA GPU here. The CPU row of the catalogue is a placeholder; the Roofline and FLOPs pages "
                    "use the ceilings measured below instead, and the estimator offers them as a row of their own.")
                  if any(c.device == "cpu" for c in measured.values()) else
                  _("No CUDA GPU here. The CPU row of the catalogue is a placeholder — measure the ceilings below "
                    "to get figures for this CPU."))
if not measured:
    st.info(_("Nothing measured yet on this server."))
for key, ceil in measured.items():
    st.markdown(_("**{name}** ({kind}; GEMM {n}³, copy {copy:.0f} MiB), measured {when}").format(
        name=ui.md(ceil.device_name), kind=ui.md(ceil.device), n=ceil.gemm_size, copy=ceil.copy_bytes / 1024**2,
        when=ceil.when))
    ds = machine.match_catalogue(ceil.device_name, "cpu" if ceil.device == "cpu" else "cuda")[0]
    rows = ceil.rows(ds if ceil.device != "cpu" else None)
    if rows:
        for r in rows:  # fp8 on a CPU: a reference kernel's speed, no ceiling (it read as one: "1,144 %" on Precision)
            if r["figure"] == "fp8 GEMM" and bp.emulated("fp8", ceil.device) and not r["note"]:
                r["note"] = bp.NO_CEILING_EMULATED
        shown = pd.DataFrame([{**r, "figure": _(r["figure"]), "note": _(r["note"]) if r["note"] else r["note"]}
                              for r in rows]).dropna(axis=1, how="all")
        ui.table(shown, {"share of datasheet": "percent"}, key=f"dv_rows_{key}", column_config=_labels(shown.columns),
                 notes="note", named_by=("figure",))  # the notes numbered, whole under the table
        title = (_("{name}: measured {when} (dot: median, line: p20–p80) vs datasheet")
                 if any(r.get("datasheet") for r in rows) else _("{name}: measured {when} (dot: median, line: p20–p80)"))
        chart_rows = [{**r, "emulated": r["figure"] == "fp8 GEMM" and bp.emulated("fp8", ceil.device)} for r in rows]
        st.altair_chart(charts_bench.ceilings_chart(chart_rows, title=title.format(name=ceil.device_name, when=ceil.when),
                                                    gettext=_), width="stretch")
        if not any(r.get("low") for r in rows):
            st.caption(_("Measured before this app kept the spread: measure again to see it."))
    for dt, why in ceil.notes.items():
        st.caption(_("{dtype}: not measured — {why}").format(dtype=ui.md(dt), why=ui.md(charts_bench.note_text(why, _))))
