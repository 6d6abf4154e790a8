"""Roofline: the device's roofs, every point measured in this app, and an LLM's ops overlaid.

Roofs: ``gemmlib.core.hardware`` (datasheet) and ``gemmlib.measure.devices`` (measured ceilings);
points: what this session measured on the benchmark pages (``ui.session_results``), what other
sessions chose to share with the class (``ui.shared_results``), or an uploaded results JSON; estimator ops:
``gemmlib.llm.accounting``. The chart is ``gemmlib.charts.roofline``. Below it, calibration: the saved
``gemmlib.core.calibration`` points and a button that runs ``gemmlib.measure.calibrate`` (in a worker
process, like every benchmark).
"""

import pandas as pd
import streamlit as st

import ui
from gemmlib.charts import roofline as cr
from gemmlib.core.calibration import load_calibrations, save_calibration
from gemmlib.core.ceilings import all_ceilings, cpu_row
from gemmlib.core.dtypes import COMPUTE_DTYPES
from gemmlib.core.hardware import CATALOGUE
from gemmlib.core.i18n import N_, Text
from gemmlib.core.machine import light_summary
from gemmlib.core.policy import READ_ONLY_NOTE
from gemmlib.llm.presets import from_name, preset_names
from gemmlib.measure import calibrate as cb  # plain numbers and the spec; torch loads on a run
from gemmlib.measure.calibrate import defaults as calibration_defaults
from gemmlib.views import published as pv
from ui import _, ngettext

ui.page(
    _("Roofline"),
    "📈",
    _(r"""
A kernel that does $F$ FLOPs while moving $Q$ bytes has **arithmetic intensity** $I = F/Q$. It
cannot run faster than the compute peak $\pi$, nor faster than the memory bandwidth $\beta$ can feed it: it
attains at most
$$P = \min(\pi,\; I \times \beta)\ \text{FLOP/s}.$$
Left of the **ridge point** (peak ÷ bandwidth) a kernel is memory-bound, right of it
compute-bound. Below: the roofs of a device — datasheet and, where measured, its real ceilings —
with every benchmark point measured so far in this app, and the GEMMs of an LLM as the estimator
sees them.
"""),
)


# option labels: a gettext bound to this run's language (Streamlit and AppTest call format_func later)
shown_as = ui.gettext_for(ui.lang())


@st.cache_data(show_spinner=False)
def _devices_light() -> list[dict]:
    return light_summary()


# default hardware: the catalogue row of the first detected GPU, else the H200
detected = [d for d in _devices_light() if d.get("kind") != "cpu" and d.get("catalogue") in CATALOGUE]
default_hw = detected[0]["catalogue"] if detected else "H200 SXM"
presets = preset_names()
default_preset = "llama-3-8b" if "llama-3-8b" in presets else presets[0]

with st.container(border=True):
    c = st.columns([2, 3, 2])  # the checkbox's words whole at 150 % zoom
    hw_name = ui.url(c[0].selectbox, _("Hardware (datasheet roofs)"), list(CATALOGUE),
                     index=list(CATALOGUE).index(default_hw), key="rf_hw", format_func=shown_as)
    dtypes = ui.url(c[1].multiselect, _("dtypes"), list(COMPUTE_DTYPES), default=["fp32", "bf16", "fp8"], key="rf_dtypes")
    show_measured = ui.url(c[2].checkbox, _("measured ceilings"), True, key="rf_measured",
                           help=_("roofs measured on this machine (Devices page → measure ceilings)"))
hw = CATALOGUE[hw_name]
if detected:
    st.caption(_("Detected here: {found}").format(
        found=_(", ").join(f"{d['name']} → {d['catalogue']}" for d in detected)))

# ----------------------------------------------------------------------------- points
mine = ui.session_results()
shared = ui.shared_results()
sc = st.columns([3, 2, 2])  # the checkbox's words whole at 1280 px
show_shared = ui.url(sc[0].checkbox, _("results shared with the class ({n})").format(n=len(shared)), False,
                     key="rf_shared", help=_("rows other visitors chose to share; yours alone are shown otherwise"))
if mine and sc[1].button(ngettext("Share my {n} result with the class", "Share my {n} results with the class",
                                  len(mine)).format(n=len(mine)), key="rf_share",
                         help=_("every visitor's Roofline page can then show them, labelled with your session")):
    n = ui.share_results(mine)
    st.toast(ngettext("Shared {n} result with the class.", "Shared {n} results with the class.", n).format(n=n))
sc[2].caption(ngettext("Your session measured {n} row; nothing you measure is shown to others unless you share it.",
                       "Your session measured {n} rows; nothing you measure is shown to others unless you share it.",
                       len(mine)).format(n=len(mine)))
measured = mine + (shared if show_shared else [])
# folded: Streamlit's own drop-zone texts ("Upload", "200MB per file") have no API to translate them
with st.expander(_("Add results from a file"), expanded=bool(st.session_state.get("rf_upload"))):
    uploaded = st.file_uploader(_("Add results from a file (JSON from `--json` or the report's results.json)"),
                                type=["json"], key="rf_upload")
file_results: list = []
if uploaded is not None:
    with ui.guard(_("the uploaded results")):
        file_results = cr.results_from_json(uploaded.getvalue())
        st.caption(ngettext("{n} row read from {file}.", "{n} rows read from {file}.", len(file_results)).format(
            n=len(file_results), file=ui.md(uploaded.name)))
all_results = measured + file_results
points = cr.result_points(all_results)
benches = sorted({p["bench"] for p in points})
chosen = st.multiselect(_("Measured points to show"), benches, default=benches, key="rf_benches",
                        format_func=lambda b: cr.bench_label(b, shown_as)) if benches else []
points = [p for p in points if p["bench"] in chosen]
if hw.editable:  # the CPU row: this machine's measured ceilings, never below a point measured here
    hw, cpu_note = cpu_row([(p["dtype"], p["intensity"], p["tflops"] * 1e12) for p in cr.result_points(all_results)
                            if p.get("device_kind") == "cpu"], gettext=_)
    st.caption(_("On this chart {note}.").format(note=cpu_note))

# ----------------------------------------------------------------------------- estimator overlay
est_points: list[dict] = []
with st.expander(_("Overlay an LLM's GEMMs (the estimator)"), expanded=True):
    if not presets:
        st.info(_("The model catalogue is not available."))
    else:
        e = st.columns([1, 2, 1, 1, 1])
        use_est = ui.url(e[0].checkbox, _("show"), True, key="rf_est")
        preset = ui.url(e[1].selectbox, _("model"), presets, index=presets.index(default_preset), key="rf_preset")
        batch = ui.url(e[2].number_input, _("batch"), 1, 4096, 1, key="rf_batch")
        seq = ui.url(e[3].number_input, _("prompt tokens"), 1, 1_000_000, 1024, key="rf_seq")
        new = ui.url(e[4].number_input, _("new tokens"), 0, 100_000, 128, key="rf_new")
        if use_est:
            with ui.guard(_("the estimate")):
                from gemmlib.llm import accounting, presets

                est_dtype = "bf16" if hw.supports("bf16") else next(iter(dict(hw.peaks)), "fp32")
                est = accounting.estimate(presets.from_name(preset), accounting.Workload(
                    batch=int(batch), seq_len=int(seq), new_tokens=int(new), weight_dtype=est_dtype,
                    act_dtype=est_dtype, kv_dtype=est_dtype), hw)
                est_points = cr.estimator_points(est)
                st.caption(_("{preset}, batch {batch:,}, {seq:,} prompt tokens, {new:,} decode steps, {dtype}, on "
                             "{gpu}: each diamond is one op of the estimate (prefill and decode) at its intensity and "
                             "the rate the estimator predicts for it — its roof times the efficiency of its shape "
                             "(the tooltip says which), so below the roof where a kernel falls short of it (small "
                             "GEMMs, a kernel's fixed launch time). Decode GEMMs sit far left (memory-bound) unless "
                             "the batch is large.").format(preset=preset, batch=int(batch), seq=int(seq), new=int(new),
                                                           dtype=est_dtype, gpu=_(hw.name)))

# ----------------------------------------------------------------------------- chart
with ui.guard(_("the roofline")):
    # the CPU row holds this machine's measured ceilings, else placeholder figures: no datasheet either way
    kind = ("measured" if any(c.device == "cpu" for c in all_ceilings().values()) else "placeholder") \
        if hw.editable else "datasheet"
    roofs = cr.roof_rows(hw, dtypes, kind=kind, gettext=_)
    if show_measured:
        roofs += cr.measured_roof_rows(list(all_ceilings().values()), dtypes, gettext=_)
    title = (_("{gpu} and measured ceilings") if show_measured and any(r["kind"] == "measured" for r in roofs)
             else "{gpu}").format(gpu=_(hw.name))
    st.altair_chart(cr.roofline_chart(roofs, points, est_points, title=title, gettext=_), width="stretch")
    ridge_rows = {r["roof"]: r for r in roofs}.values()
    ui.table([{"roof": r["roof"], "peak TFLOP/s": r["peak_tflops"], "bandwidth TB/s": r["bandwidth_tbs"],
               "ridge FLOP/byte": r["ridge"]} for r in ridge_rows],
             column_config={c: _(c) for c in (N_("roof"), N_("peak TFLOP/s"), N_("bandwidth TB/s"), N_("ridge FLOP/byte"))})

if not all_results:
    st.info(_("No measured points yet. Run a benchmark on the **Precision**, **Tiling** or **Batching** page "
              "(in this server), or upload a results JSON — every timed row appears here at its intensity."))
else:
    skipped = len(all_results) - len(cr.result_points(all_results))
    st.caption(ngettext("{n} measured point shown.", "{n} measured points shown.", len(points)).format(n=len(points))
               + " " + _("Intensity = FLOPs ÷ the minimum bytes of the call (each operand read once), so a point is "
                         "as far right as its shape allows; how far below the roof it sits is what the kernel "
                         "leaves on the table. Measured points from a CPU lie far below a GPU's roofs: pick the "
                         "CPU row to compare them with its (editable) figures.")
               + (" " + ngettext("{n} row without a time (unsupported, or Triton-interpreter correctness checks) is "
                                 "not drawn.", "{n} rows without a time (unsupported, or Triton-interpreter "
                                 "correctness checks) are not drawn.", skipped).format(n=skipped) if skipped else ""))
    with st.expander(_("The points as a table")):
        ui.table([{**p, "bench": cr.bench_label(p["bench"], _), "source": _(p["source"]) if p["source"] == "measured"
                   else p["source"], "bound": _(p["bound"]) if isinstance(p.get("bound"), str) else p.get("bound")}
                  for p in points],
                 column_config={c: _(c) for c in (N_("intensity"), N_("tflops"), N_("bench"), N_("name"), N_("dtype"), N_("device"),
                                                  N_("device_kind"), N_("shape"), N_("median_ms"), N_("source"), N_("bound"),
                                                  N_("emulated"))})

# ----------------------------------------------------------------------------- calibration
st.subheader(_("Is the estimate right on this device? Calibrate, then validate"))
st.markdown(_(
    "**Calibrate** times every op of a model alone on this device — each weight GEMM at M = 1 … the prompt, the "
    "attention products, the norms, softmax and the rest — and keeps the times beside the measured ceilings. "
    "The estimate can then take each op at the efficiency measured for its shape (the row "
    "“NAME (calibrated)”, also `python -m gemmlib estimate --gpu 'NAME (calibrated)'`). **Validate** runs the "
    "same model with random weights — a prefill and decode steps with a KV cache, timed by the harness — and "
    "puts the measured time beside the datasheet estimate and the calibrated one."))
cals, cal_problems = load_calibrations()
for prob in cal_problems:
    st.warning(ui.md(ui.tr(prob)))
if cals:
    ui.table(pd.DataFrame([{"calibration": c.name, "model": c.model, "dtypes": ", ".join(c.dtypes),
                            "GEMM points": len(c.gemm), "other points": len(c.other),
                            "best GEMM TFLOP/s": max(c.peaks().values()) / 1e12,
                            "best GB/s": c.bandwidth() / 1e9, "CPU threads": c.threads or None}
                           for c in cals.values()]),
             column_config={c: _(c) for c in (N_("calibration"), N_("model"), N_("dtypes"), N_("GEMM points"), N_("other points"),
                                              N_("best GEMM TFLOP/s"), N_("best GB/s"), N_("CPU threads"))})
cal_device = "cuda" if ui.cuda_available()[0] else "cpu"
dense = [n for n in preset_names() if not from_name(n).is_moe]
k = st.columns([2, 1, 1, 1, 1])
cal_preset = ui.url(k[0].selectbox, _("model"), dense, index=dense.index(default_preset) if default_preset in dense
                    else 0, key="rf_cal_preset")
d0 = calibration_defaults(cal_device)
cal_scale = ui.url(k[1].select_slider, _("scale down ÷"), [1, 2, 4, 8, 16, 32, 64], value=d0["scale"], key="rf_cal_scale",
                   help=_("hidden, head size, MLP and vocabulary divided by this, to fit"))
cal_layers = ui.url(k[2].number_input, _("layers"), 1, 80, d0["layers"], key="rf_cal_layers")
cal_seq = ui.url(k[3].number_input, _("prompt tokens"), 1, 32768, d0["seq_len"], key="rf_cal_seq")
cal_new = ui.url(k[4].number_input, _("decode steps"), 0, 1024, d0["new_tokens"], key="rf_cal_new")


def _kept(out: cb.CalibrationResult) -> dict:
    """The calibration saved for this server (the estimator reads it); its validation kept for this page."""
    kept = save_calibration(out.calibration)
    val = out.validation
    return {"model": val.run.describe(), "device": val.device_name, "datasheet": val.datasheet,
            "calibration": val.calibration, "rows": cb.validation_table(val),
            "notes": list(val.notes) + ([] if kept else [Text(READ_ONLY_NOTE)])}


cal_lim = ui.bench_limits()  # a vocabulary above its dimension cap is divided to fit (make_run says so)
vout = ui.bench_section(
    cb.SPEC, lambda: cb.CalibrationConfig(cb.make_run(cal_device, cal_preset, int(cal_scale), int(cal_layers), None,
                                                      int(cal_seq), int(cal_new), max_dim=cal_lim.max_dim),
                                          cal_device, validate=True, threads=1 if cal_device == "cpu" else None), cal_lim,
    key="rf_validation", button=_("Calibrate and validate on this GPU") if cal_device == "cuda" else
    _("Calibrate and validate on this CPU"), button_key="rf_calibrate", primary=False, keep=None,
    what=_("the calibration"), store=_kept)
if vout:
    st.markdown(_("**{model}** on {dev}; datasheet estimate: {datasheet}; calibrated: {calibration}.").format(
        model=vout["model"], dev=vout["device"], datasheet=vout["datasheet"],
        calibration=vout["calibration"]))
    ui.table(pd.DataFrame([{
        "phase": _(r["phase"]), "op group": _(r["group"]), "measured ms": r["measured_s"] * 1e3,
        "datasheet ms": r["estimated_s"] * 1e3 if r["estimated_s"] is not None else None,
        "datasheet error": r["estimated_error"],
        "calibrated ms": r["calibrated_s"] * 1e3 if r["calibrated_s"] is not None else None,
        "calibrated error": r["calibrated_error"]} for r in vout["rows"]]), hide_index=True,
        column_config={c: st.column_config.NumberColumn(_(c), format="%.3g") for c in
                       (N_("measured ms"), N_("datasheet ms"), N_("calibrated ms"))}
        | {c: st.column_config.NumberColumn(_(c), format="percent") for c in (N_("datasheet error"), N_("calibrated error"))}
        | {"phase": _("phase"), "op group": _("op group")})
    for n in vout["notes"]:
        st.caption(ui.tr(n))

st.subheader(_("Against published measurements"), anchor=pv.ANCHOR)  # gemmlib.views.published
with st.expander(_(pv.EXPANDER_LABEL), key=pv.EXPANDER_KEY, bind="query-params") as pub_box:
    if pub_box.open:  # a few seconds, once per server: only for a reader who opens it
        with ui.guard(_("the published measurements")):
            for k in (pview := pv.published_view(pv.cached(), gettext=_)).kinds:
                st.markdown(f"**{k.title}**")
                ui.table(k.rows, column_config=pview.column_config(st.column_config))
                st.caption(k.caption)
            for b in pview.bad:
                st.warning(ui.md(b))
