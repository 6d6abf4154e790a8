"""Devices: this machine's CPU and GPUs, their datasheet rows, and ceilings measured here.

Detection, catalogue matching and the ceiling measurement live in ``gemmlib.measure.devices``;
this page shows them and runs the measurement under the single-flight lock.
"""


import pandas as pd
import streamlit as st

import ui
from gemmlib.charts import bench as charts_bench
from gemmlib.core import ceilings, machine
from gemmlib.core.hardware import CATALOGUE
from gemmlib.core.i18n import N_
from gemmlib.measure import devices, jobs, plan
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


def _datasheet_rows(found: list[dict]) -> list[dict]:
    rows = []
    for d in found:
        hw = CATALOGUE.get(d.get("catalogue") or "")
        row = {"device": f"{d['kind']}:{d['index']}", "name": d["name"],
               "catalogue row": _(d["catalogue"]) if d.get("catalogue") else "—"}
        for dt in ("fp32", "tf32", "fp16", "bf16", "fp8", "int8"):
            p = hw.peak(dt) if hw else None
            row[f"{dt} TFLOP/s"] = p / 1e12 if p else None
        row["bandwidth TB/s"] = hw.bandwidth / 1e12 if hw else None
        row["source"] = (hw.source if hw.source.startswith("http") else _(hw.source)) if hw else ""
        rows.append(row)
    return rows


# every column these tables show (the data keep their keys), as shown
COLUMNS = {"kind": N_("kind"), "index": N_("index"), "name": N_("name"), "units": N_("units"),
           "memory_gb": N_("memory GB"), "capability": N_("compute capability"), "catalogue": N_("catalogue row"),
           "match_note": N_("match"), "device": N_("device"), "catalogue row": N_("catalogue row"),
           "bandwidth TB/s": N_("bandwidth TB/s"), "figure": N_("figure"), "measured": N_("measured"),
           "datasheet": N_("datasheet"), "unit": N_("unit"), "share of datasheet": N_("share of datasheet"),
           "low": N_("at the p80 time"), "high": N_("at the p20 time"), "note": N_("note")}


def _labels(columns) -> dict:
    return {c: _(COLUMNS[c]) for c in columns if c in COLUMNS}


def _units(d: dict) -> str:
    if d["kind"] == "cpu":
        return ngettext("{n} thread", "{n} threads", d["units"]).format(n=d["units"])
    return ngettext("{n} SM", "{n} SMs", d["units"]).format(n=d["units"])


st.subheader(_("Detected"))
st.caption(_("Found without loading PyTorch (from `/proc/cpuinfo` and NVIDIA's NVML), as the home page does:"))
light = pd.DataFrame(machine.light_summary())[["kind", "index", "name", "units", "memory_gb", "capability",
                                                "catalogue"]]
light["catalogue"] = [_(c) if c else c for c in light["catalogue"]]
ui.table(light, column_config=_labels(light.columns))

found: list[dict] = []
with ui.guard(_("device detection")), st.spinner(_("Asking torch which devices are present…")):
    found = _detect(ui.lang())
    table = pd.DataFrame(found)
    table["units"] = [_units(d) for d in found]
    table["catalogue"] = [_(c) if c else c for c in table["catalogue"]]
    st.caption(_("As PyTorch sees them (threads torch uses; SMs, memory and compute capability of each GPU):"))
    cols = ["kind", "index", "name", "units", "memory_gb", "capability", "catalogue", "match_note"]
    ui.table(table[cols], column_config=_labels(cols))
    st.subheader(_("Datasheet"))
    sheet = _datasheet_rows(found)
    ui.table(sheet, column_config={**_labels(sheet[0] if sheet else {}),
                                   "source": st.column_config.LinkColumn(_("source"))})
    if not any(d["kind"] == "cuda" for d in found):
        st.info(_("No CUDA GPU here. The CPU row of the catalogue is a placeholder — measure the ceilings below "
                  "to get figures for this CPU."))

st.subheader(_("Measure ceilings"))


lim = ui.bench_limits()

kinds = [d["kind"] for d in found] or ["cpu"]
choices = [k for k in ("cuda", "cpu") if k in kinds]
c = st.columns([1, 1, 3])
dev = c[0].radio(_("Device"), choices, key="dv_device")
quick = c[1].checkbox(_("quick"), value=dev == "cpu" or lim.classroom, key="dv_quick",
                      help=_("Smaller GEMMs and copy: faster, a little below the true ceiling."))
size, copy_bytes = devices.ceiling_plan(dev, quick)
c[2].caption(_("Runs a {n}×{n}×{n} GEMM in each format the device supports and a {copy:.0f} MiB device-to-device "
               "copy (bandwidth counts the read and the write). Results are kept for this server (in its private "
               "cache folder) and shown to every visitor.").format(n=size, copy=copy_bytes / 1024**2))

go = st.button(_("Measure ceilings"), type="primary")
eta = None
with ui.guard(_("the time estimate")):
    eta = plan.ceilings(dev, size, quick)
    ui.run_estimate(eta)
ui.stopped_notice()
if go:
    with ui.guard(_("the ceiling measurement")):
        data = ui.run_benchmark(jobs.ceilings(dev, quick), lim,
                                done=lambda d: _("Measured {name}").format(name=ui.md(d["ceilings"]["device_name"])),
                                estimate=eta)
        ceilings.save_ceilings(ceilings.Ceilings.from_dict(data["ceilings"]))
        ui.keep_results(jobs.results(data["results"]))

measured = ceilings.all_ceilings()
if not measured:
    st.info(_("Nothing measured yet on this server."))
for key, ceil in measured.items():
    st.markdown(_("**{name}** ({kind}; GEMM {n}³, copy {copy:.0f} MiB), measured {when}").format(
        name=ui.md(ceil.device_name), kind=ui.md(ceil.device), n=ceil.gemm_size, copy=ceil.copy_bytes / 1024**2,
        when=ceil.when))
    ds = machine.match_catalogue(ceil.device_name, "cpu" if ceil.device == "cpu" else "cuda")[0]
    rows = ceil.rows(ds if ceil.device != "cpu" else None)
    if rows:
        shown = pd.DataFrame([{**r, "figure": _(r["figure"]), "note": _(r["note"]) if r["note"] else r["note"]}
                              for r in rows]).dropna(axis=1, how="all")
        ui.table(shown, {"share of datasheet": "percent"}, key=f"dv_rows_{key}", column_config=_labels(shown.columns))
        st.altair_chart(charts_bench.ceilings_chart(
            rows, title=_("{name}: measured {when} (dot: median, line: p20–p80) vs datasheet").format(
                name=ceil.device_name, when=ceil.when), gettext=_), width="stretch")
        if not any(r.get("low") for r in rows):
            st.caption(_("Measured before this app kept the spread: measure again to see it."))
    for dt, why in ceil.notes.items():
        st.caption(_("{dtype}: not measured — {why}").format(dtype=ui.md(dt), why=ui.md(charts_bench.note_text(why, _, bp.NOTE_TEMPLATES))))
