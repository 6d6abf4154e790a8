"""Precision: the same GEMM in fp32, tf32, fp16, bf16, int8 and fp8, measured live.

Everything is computed by ``gemmlib.measure.precision`` through the measuring harness
(``gemmlib.measure.harness``); this page reads widgets, runs it under the single-flight lock
and draws the results.
"""


from dataclasses import replace

import pandas as pd
import streamlit as st

import ui
from gemmlib.charts import bench as charts_bench
from gemmlib.core.i18n import N_
from gemmlib.core.results import to_csv, to_json
from gemmlib.llm.presets import preset_names
from gemmlib.measure import precision as bp
from ui import _

ui.page(
    _("Precision"),
    "🎯",
    _(r"""
The same product $D = A B$ of random normal matrices in six number formats, timed on this
machine and checked against a float64 reference. **int8** is real quantization — a scale per
row of $A$ and per column of $B$, `torch._int_mm` with int32 accumulation, then dequantization;
**fp8** (e4m3) goes through `torch._scaled_mm` where the GPU has fp8 tensor cores (compute
capability 8.9+). Formats the device cannot run get a row that says why.
"""),
)

SQUARES = (256, 512, 1024, 2048, 4096, 8192)
# option values are stable ids (URLs, tests); the labels are translated
SHAPE_SETS = (N_("Squares"), N_("LLM layer"), N_("Article's INT8 example"), N_("Custom"))
FORMAT_LABELS = {"int8 + quant": N_("int8 + quant"), "fp8 + quant": N_("fp8 + quant")}  # the rows' format column


# option labels: a gettext bound to this run's language (Streamlit and AppTest call format_func later)
shown_as = ui.gettext_for(ui.lang())
lim = ui.bench_limits()

cuda_ok, cuda_why = ui.cuda_available()
devices = ["cuda", "cpu"] if cuda_ok else ["cpu"]
presets = preset_names()

default_preset = "llama-2-7b" if "llama-2-7b" in presets else presets[0]

box = st.container(border=True)  # the inputs; the run button closes it
with box:
    c = st.columns([1, 2, 3])
    device = ui.url(c[0].radio, _("Device"), devices, key="pr_device",
                    help=None if cuda_ok else _("No GPU here: {why}").format(why=ui.tr(cuda_why)))
    shape_set = ui.url(c[1].radio, _("Shapes"), SHAPE_SETS, key="pr_set", format_func=shown_as)
    dtypes = ui.url(c[2].multiselect, _("Formats"), bp.PRECISION_DTYPES, default=list(bp.PRECISION_DTYPES), key="pr_dtypes")
    shapes: tuple = ()
    with ui.guard(_("the shapes")):
        if shape_set == "Squares":
            default_sq = [s for s in bp.default_squares(device, quick=True) if s <= lim.max_dim]
            if device == "cpu":
                default_sq = default_sq[:1]
            sizes = ui.url(st.multiselect, _("Sizes (M = N = K)"), [s for s in SQUARES if s <= lim.max_dim],
                            default=default_sq, key=f"pr_sq_{device}")
            shapes = bp.square_shapes(sorted(sizes))
        elif shape_set == "LLM layer":
            d = st.columns(3)
            preset = ui.url(d[0].selectbox, _("Model preset"), presets, index=presets.index(default_preset),
                            key="pr_preset")
            batch = ui.url(d[1].number_input, _("batch"), 1, 1024, 1, key="pr_batch")
            seq = ui.url(d[2].number_input, _("tokens per sequence (prefill)"), 1, lim.max_dim, 128, key="pr_seq")
            shapes = bp.llm_shapes(preset, int(batch), int(seq))
            st.caption(_("QKV and MLP GEMMs of one layer at prefill (M = batch × tokens) and at decode "
                         "(M = batch: one new token per sequence)."))
        elif shape_set == "Article's INT8 example":
            shapes = (bp.ARTICLE_SHAPE,)
            st.caption(_("The article times 1024×4096 by 4096×1024 in fp32 and 'int8' (without scales)."))
        else:
            d = st.columns(3)
            m = ui.url(d[0].number_input, _("M (rows of A)"), 1, lim.max_dim, min(512, lim.max_dim), key="pr_m")
            n = ui.url(d[1].number_input, _("N (columns of B)"), 1, lim.max_dim, min(512, lim.max_dim), key="pr_n")
            k = ui.url(d[2].number_input, _("K (inner)"), 1, lim.max_dim, min(512, lim.max_dim), key="pr_k")
            shapes = ((int(m), int(n), int(k), f"{m}×{n}×{k}"),)
    e = st.columns([1, 1, 2])
    with_quant = ui.url(e[0].checkbox, _("time quantization too"), True, key="pr_quant",
                        help=_("int8/fp8: also time quantizing the activations on every call and dequantizing "
                               "(the “+ quant” rows)."))
    per_row = ui.url(e[1].slider, _("seconds per row"), 0.05, 2.0, 0.2, step=0.05, key="pr_time")
    e[2].caption(ui.caps_caption(lim, ("dims", "operands", "time")))
    if device == "cpu":
        st.caption(_("On a CPU: tf32 does not exist, fp16 has no arithmetic units on most CPUs (slow, so "
                     "capped at 512³), fp8 runs through a reference kernel — correct numbers, not fp8 speed."))
    cfg = None
    if shapes and dtypes:
        with ui.guard(_("the time estimate")):
            cfg = bp.PrecisionConfig(device=device, shapes=tuple(shapes), dtypes=tuple(dtypes),
                                     with_quant=with_quant, min_run_time=float(per_row))

# refused by the server's caps before anything is allocated, then run in a worker process
rows = ui.bench_section(bp.SPEC, cfg, lim, key="pr_results", button=_("Run the benchmark"), at=box, estimate=True,
                        what=_("the precision benchmark"), done=ui.rows_done)
if not rows:
    st.info(_("Choose shapes and formats, then **Run the benchmark**; the estimate under the button says how "
              "long it will take here."))
    st.stop()

results = list(rows)
OVER_PEAK = _("“% measured peak”: this run's TFLOP/s against the ceiling the Devices page stored for this device "
              "and format. Over 100% means this run beat that stored measurement (a quieter or warmer machine than "
              "when it was measured): it is an honest figure. **Measure ceilings** on the Devices page again to "
              "store the new ceiling.")
st.subheader(_("Results"))
st.success(bp.int8_verdict(results).render(_))
for r in [r for r in bp.summary_rows(results) if not r["supported"]]:  # why a format did not run, in plain view
    st.info(_("**{format}** on {shape}: {why}").format(format=_(FORMAT_LABELS.get(r["format"], r["format"])),
                                                      shape=bp.shape_label(r["shape"], _),
                                                      why=charts_bench.note_text(r["note"], _)))
ui.noise_note([replace(r, name=_(FORMAT_LABELS.get(r.name, r.name))) for r in results])
# notes and labels are messages: shown in the reader's language before pandas keeps them as plain text
summary = [{**r, "note": charts_bench.note_text(r["note"], _), "shape": bp.shape_label(r["shape"], _)}
           for r in bp.summary_rows(results)]
table = pd.DataFrame(summary).dropna(axis=1, how="all")  # e.g. no datasheet on a CPU
table["format"] = table["format"].map(lambda f: _(FORMAT_LABELS.get(f, f)))
ui.table(table, {"rel. error": "error"},
         column_config={"supported": st.column_config.CheckboxColumn(_("ran")),
                        "% datasheet": st.column_config.NumberColumn(_("% datasheet"), format="%.1f"),
                        "% measured peak": st.column_config.NumberColumn(_("% measured peak"), format="%.1f",
                                                                         help=OVER_PEAK),
                        **{c: _(c) for c in (N_("shape"), N_("format"), N_("median ms"), N_("p20 ms"), N_("p80 ms"), N_("rel. error"),
                                             N_("bytes/elem"), N_("operand MiB"), N_("note"))}})
st.caption(_("Error: max |D − D₆₄| / max |D₆₄| against float64. “% datasheet” uses the catalogue row matched "
             "to this GPU (none for a CPU); “% measured peak” appears once the Devices page has measured "
             "this device's ceilings. The “+ quant” rows include quantizing A on every call."))
if (table.get("% measured peak", pd.Series(dtype=float)) > 100).any():
    st.caption(OVER_PEAK)
if any(r.extra.get("share_measured_why") for r in results):  # fp8 on a CPU: a reference kernel, no ceiling
    st.caption(_(bp.NO_SHARE_EMULATED) + _("."))
if any(r.supported and r.tflops for r in results):
    # one under the other: side by side at 1280 px the error chart shrank to a sliver, its axis title cut
    # a format the device only emulates (fp8 on a CPU) says so on its bar: a reference kernel's speed, not the format's
    shown = [{**r.to_dict(), "name": _("{format} (emulated)").format(format=_(FORMAT_LABELS.get(r.name, r.name)))
              if bp.emulated(r.dtype, r.device) else _(FORMAT_LABELS.get(r.name, r.name)),
              "shape": {**r.shape, "label": bp.shape_label(r.shape.get("label"), _)}} for r in results]
    st.altair_chart(charts_bench.tflops_chart(shown, gettext=_), width="content")
    st.altair_chart(charts_bench.error_chart(shown, gettext=_), width="content")
ui.downloads("precision", to_csv(results), to_json(results))
