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
from gemmlib.measure import devices, jobs, plan

ui.page(
    "Devices",
    "🖥️",
    """
What this machine has, what its datasheet promises, and what it really reaches. A datasheet peak
is what the silicon could do at its boost clock with a perfect kernel; a **measured ceiling** is
what a large GEMM per number format and a device-to-device copy reach here, with this software,
today. The Roofline and the estimator can use both.
""",
)


@st.cache_resource(show_spinner="Asking torch which devices are present…")
def _detect() -> list[dict]:
    return [d.to_dict() for d in devices.detect()]


def _datasheet_rows(found: list[dict]) -> list[dict]:
    rows = []
    for d in found:
        hw = CATALOGUE.get(d.get("catalogue") or "")
        row = {"device": f"{d['kind']}:{d['index']}", "name": d["name"], "catalogue row": d.get("catalogue") or "—"}
        for dt in ("fp32", "tf32", "fp16", "bf16", "fp8", "int8"):
            p = hw.peak(dt) if hw else None
            row[f"{dt} TFLOP/s"] = p / 1e12 if p else None
        row["bandwidth TB/s"] = hw.bandwidth / 1e12 if hw else None
        row["source"] = hw.source if hw else ""
        rows.append(row)
    return rows


st.subheader("Detected")
st.caption("Found without loading PyTorch (from /proc/cpuinfo and NVIDIA's NVML), as the home page does:")
light = machine.light_summary()
ui.table(pd.DataFrame(light)[["kind", "index", "name", "units", "memory_gb", "capability", "catalogue"]])

found: list[dict] = []
with ui.guard("device detection"):
    found = _detect()
    table = pd.DataFrame(found)
    table["units"] = [f"{d['units']} {'threads' if d['kind'] == 'cpu' else 'SMs'}" for d in found]
    st.caption("As PyTorch sees them (threads torch uses; SMs, memory and compute capability of each GPU):")
    ui.table(table[["kind", "index", "name", "units", "memory_gb", "capability", "catalogue", "match_note"]])
    st.subheader("Datasheet")
    ui.table(_datasheet_rows(found), column_config={"source": st.column_config.LinkColumn("source")})
    if not any(d["kind"] == "cuda" for d in found):
        st.info("No CUDA GPU here. The CPU row of the catalogue is a placeholder — measure the ceilings below "
                "to get figures for this CPU.")

st.subheader("Measure ceilings")


lim = ui.bench_limits()

kinds = [d["kind"] for d in found] or ["cpu"]
choices = [k for k in ("cuda", "cpu") if k in kinds]
c = st.columns([1, 1, 3])
dev = c[0].radio("Device", choices, key="dv_device")
quick = c[1].checkbox("quick", value=dev == "cpu" or lim.classroom, key="dv_quick",
                      help="Smaller GEMMs and copy: faster, a little below the true ceiling.")
size, copy_bytes = devices.ceiling_plan(dev, quick)
c[2].caption(f"Runs a {size}×{size}×{size} GEMM in each format the device supports and a "
             f"{copy_bytes / 1024**2:.0f} MiB device-to-device copy (bandwidth counts the read and the write). "
             "Results are kept for this server (in its private cache folder) and shown to every visitor.")

go = st.button("Measure ceilings", type="primary")
eta = None
with ui.guard("the time estimate"):
    eta = plan.ceilings(dev, size, quick)
    ui.run_estimate(eta)
ui.stopped_notice()
if go:
    with ui.guard("the ceiling measurement"):
        data = ui.run_benchmark(jobs.ceilings(dev, quick), lim,
                                done=lambda d: f"Measured {d['ceilings']['device_name']}", estimate=eta)
        ceilings.save_ceilings(ceilings.Ceilings.from_dict(data["ceilings"]))
        ui.keep_results(jobs.results(data["results"]))

measured = ceilings.all_ceilings()
if not measured:
    st.info("Nothing measured yet on this server.")
for key, ceil in measured.items():
    st.markdown(f"**{ui.md(ceil.device_name)}** ({ui.md(ceil.device)}; GEMM {ceil.gemm_size}³, copy "
                f"{ceil.copy_bytes / 1024**2:.0f} MiB), measured {ceil.when}")
    ds = machine.match_catalogue(ceil.device_name, "cpu" if ceil.device == "cpu" else "cuda")[0]
    rows = ceil.rows(ds if ceil.device != "cpu" else None)
    if rows:
        ui.table(pd.DataFrame(rows).dropna(axis=1, how="all"), {"share of datasheet": "percent"},
                 key=f"dv_rows_{key}")
        st.altair_chart(charts_bench.ceilings_chart(
            rows, title=f"{ceil.device_name}: measured {ceil.when} (dot: median, line: p20–p80) vs datasheet"),
            width="stretch")
        if not any(r.get("low") for r in rows):
            st.caption("Measured before this app kept the spread: measure again to see it.")
    for dt, why in ceil.notes.items():
        st.caption(f"{ui.md(dt)}: not measured — {ui.md(why)}")
