"""LLM Estimator: what does this model cost on this GPU at this batch and context?

This file only lays out: widgets bound to the URL (a view is a link), one call into the presenter
``gemmlib.views.estimator`` (the one estimate, as ``python -m gemmlib estimate`` makes it, and what the
headline and each tab show, in the reader's language), charts and words. Every text goes through ``_``
(ui/i18n.py, "translating the app"); the data (the CSV and the JSON download) stays English.
"""

import pandas as pd
import streamlit as st

import ui
from gemmlib.views import estimator as view
from gemmlib.views import serving_inputs
from ui import _

ui.page(
    _("LLM Estimator"),
    "📐",
    _("""Pick a model, a workload and a GPU: the page counts **every GEMM** of the prefill (the prompt) and of
the decode (one token per step) as an inference engine runs them (the engine convention; the transformers
reference counts what an eager PyTorch forward pass executes), with the bytes each one moves, whether it is
compute- or memory-bound, and its roofline time at the efficiency its shape reaches. The same numbers come
out of `python -m gemmlib estimate` on the command line."""),
)

D, HW = view.DEFAULTS, view.hardware_choices()  # the catalogue and what was measured here; an upload below adds to it
label = view.labeller(ui.gettext_for(ui.lang()))  # option labels, bound to this run's language
shown = ui.gettext_for(ui.lang())  # this run's gettext, bound as label is: for the other format_funcs
fields, ss = ui.Fields(view.FIELDS, D), st.session_state  # each widget's words, range and default
num, pick, flag = fields.num, fields.pick, fields.flag
# The presenter's calls, cached: the estimate once per input, each view once per input and language.
parse_upload = st.cache_data(max_entries=16, show_spinner=False)(view.parse_upload)
estimate = st.cache_data(max_entries=128, show_spinner=False, hash_funcs=view.CACHE_KEYS)(view.estimate)
download_json = st.cache_data(max_entries=16, show_spinner=False, hash_funcs=view.CACHE_KEYS)(view.download_json)

@st.cache_data(max_entries=128, show_spinner=False, hash_funcs=view.CACHE_KEYS)
def present(e: tuple, macs: bool, lang: str, training: bool):
    return ui.charts_as_arrow(view.present(estimate(*e), macs=macs, gettext=ui.gettext_for(lang), escape=ui.md, training=training),
                              keep=("roofline_chart",))  # view.roofline_view reads its points

@st.cache_data(max_entries=32, show_spinner=False, hash_funcs=view.CACHE_KEYS)
def on_estimate(part: str, e: tuple, lang: str, *args, **kw):
    """The training run, the serving curve or A vs B (``view.training``, ``serving``, ``compare``) on the estimate."""
    return ui.charts_as_arrow(view.PARTS[part](estimate(*e), *args, gettext=ui.gettext_for(lang), **kw))


# ----------------------------------------------------------------------------- inputs (sidebar)
with st.sidebar:
    st.header(_("Model"))
    src = pick(st, "le_src", view.SOURCES, widget="radio", horizontal=True, format_func=label)
    cfg, info = None, {}
    with ui.guard(_("the model")):
        if src == "preset":
            pick(st, "le_preset", view.PRESET_NAMES)
        elif src == "custom":
            c = st.columns(2)
            for i, key in enumerate(("le_layers", "le_hidden", "le_heads", "le_kv", "le_hd", "le_ffn", "le_vocab")):
                num(c[i % 2], key)
            pick(c[1], "le_mlp", ["gated", "plain"], widget="radio", horizontal=True, format_func=label)
            drawn = num(c[0], "le_experts"), num(c[1], "le_topk")
            flag(st, "le_tied", widget="checkbox")
            with st.expander(_("More architecture: sliding windows, MLA, shared experts, norms")):
                c = st.columns(2)
                num(c[0], "le_sw")
                flag(c[1], "le_swp", widget="text_input")
                pick(c[0], "le_qkn", view.QK_NORM, format_func=label)
                pick(c[1], "le_norm", view.NORMS, format_func=lambda v: shown(view.NORM_NAMES[v]))
                pick(c[0], "le_npl", [1, 2, 4])
                flag(c[1], "le_par", widget="checkbox")
                st.caption(_("MLA (DeepSeek): a compressed KV latent; 0 = ordinary attention"))
                for c, key in zip(st.columns(3), ("le_mla_kv", "le_mla_q", "le_mla_rope"), strict=True):
                    num(c, key)
                num(st, "le_vhd")
                st.caption(_("Mixture of experts: layout"))
                c = st.columns(2)
                for i, key in enumerate(("le_effn", "le_sffn", "le_dense", "le_every")):
                    num(c[i % 2], key)
                flag(st, "le_sgate", widget="checkbox")
        else:
            up = st.file_uploader(_("A Hugging Face config.json"), type=["json"], key="le_upload",
                                  help=_("Only plain fields are read; nothing is executed. Families: {families}. A "
                                         "quantization_config sizes the weights exactly; torch_dtype is the default "
                                         "weight dtype.").format(families=", ".join(f"`{t}`" for t in view.FAMILIES)))
            if up is None:
                st.info(_("Upload a config.json, or pick a preset."))
            else:
                cfg, info = parse_upload(up.getvalue(), up.name)
                st.success(_("Read {file}: {params:,} parameters ({family})").format(
                    file=ui.md(up.name), params=cfg.params, family=ui.md(cfg.family)))
                ss.le_good_upload = (cfg, info)
        if src != "config.json":
            cfg = view.model(view.Inputs.from_state(ss))
    if cfg is None and src == "config.json" and ss.get("le_good_upload") is not None:
        cfg, info = ss.le_good_upload  # a bad upload keeps the last model that worked, as the other pages do
        st.info(_("Showing the last config.json that worked ({name}).").format(name=ui.md(cfg.name)))

    st.header(_("Workload"))
    st.selectbox(_("Use case"), list(view.USE_CASES), index=None, key="le_use", placeholder=_("set the workload for…"),
                 format_func=lambda k: shown(view.USE_CASES[k].label), on_change=lambda: (
                     ui.setter(lambda: view.use_case_values(ss.le_use), D)(), ss.update(le_use=None)),
                 help=_("sets the batch, the prompt, the new tokens and the Serving tab's TPOT target (and turns the "
                        "serving curve on); every value stays yours to change"))
    drawn = [num(c, key) for c, key in zip(st.columns(3, vertical_alignment="bottom"), ("le_batch", "le_seq", "le_new"), strict=True)]
    flag(st, "le_ctx")
    pick(st, "le_conv", view.CONVENTION_NAMES, widget="radio", format_func=label)
    with st.expander(_("Overrides of the convention: counting switches and dtypes")):
        for key, options in view.RADIO_OVERRIDES.items():
            pick(st, key, options, widget="radio", horizontal=True, format_func=label)
        c = st.columns(2)  # two per row: three would cut the names ("bf1")
        for i, (key, options) in enumerate(view.OVERRIDES.items()):
            pick(c[i % 2], key, options, format_func=label)
    flag(st, "le_macs")

    st.header(_("Hardware"))
    with st.expander(_("Your own GPUs: a hardware file"), expanded=bool(ss.get("le_hw_file"))):  # folded: as Roofline's
        hw_up = st.file_uploader(_("A hardware file (JSON)"), type=["json"], key="le_hw_file", help=_("rows in the "
            "form of the built-in catalogue (gemmlib/core/hardware.json), as `--hardware-file` reads them"))
    with ui.guard(_("the hardware file")):
        HW = view.hardware_choices(hw_up and (hw_up.getvalue(), hw_up.name))
    drawn = pick(st, "le_gpu", list(HW), format_func=label), num(st, "le_gpus")
    flat = flag(st, "le_flat")  # its own row: in a half-width column its name was cut to "a flat …"
    drawn = num(st, "le_eff", widget="slider", step=0.05, disabled=not flat)  # acts only with the override on
    flag(st, "le_cmp", on_change=ui.setter(lambda: ss.le_cmp and view.b_copy_of_a(ss), D))  # B starts as a copy of A
    st.header(_("Parallelism"))
    drawn = [num(c, f"le_{g}") for c, g in zip(st.columns(3) + st.columns(3), view.GROUPS, strict=False)]  # five in a row cut "ETP"
    drawn = num(st, "le_gpn"), flag(st, "le_overlap"), flag(st, "le_sp", disabled=view.greyed_layout(view.Inputs.from_state(ss))["le_sp"])  # a row each: in a third they read "o", "s"; SP greyed at TP 1
    st.caption(_("With every size at 1, the GPUs above are tensor parallel; otherwise the GPUs are TP × PP × EP × "
                 "DP (with ETP set, ETP × PP × EP × DP). Megatron's rank order: TP innermost, then EP, DP, PP."))
    note = view.gpus_note(view.Inputs.from_state(ss), shown)
    if note is not None:  # the GPUs follow the parallel sizes; one click puts their count in the box
        drawn = st.info(note[0]), st.button(_("Set the GPUs to {n}").format(n=note[1]), key="le_gpus_fix",
                                            on_click=lambda n=note[1]: ss.update(le_gpus=n))
    pick(st, "le_link", view.links(), format_func=lambda v: shown(v) if v != "catalogue" else label(v))

# ----------------------------------------------------------------------------- the estimate
head = view.headline_state(ss, fields.peek("le_train"), fields.peek("le_cp"))  # the Training tab's layout
e, v = (view.Inputs.from_state(head), cfg, HW[ss.le_gpu], info), None  # what the one estimate is made of
if cfg is not None:
    with ui.guard(_("the estimate")):
        v = present(e, ss.le_macs, ui.lang(), e[0].train)  # the Training tab's switch

if v is not None:
    with ui.guard(_("the results")):
        st.markdown(v.model)
        with st.expander(v.read.title, expanded=src == "config.json"):
            st.table(pd.DataFrame(v.read.rows, columns=["", v.read.header]).set_index(""))
            for text in v.read.warnings:
                st.warning(text)
            for text in v.read.captions:
                st.caption(text)
        for w in v.warnings:
            st.warning(w)
        st.markdown(v.assumptions)  # the times first, with what they assume, and whether the model fits beside them
        k = st.columns([1, 1, 1, 2])
        ui.metrics(k, v.times)
        (k[3].success if v.fits else k[3].warning)(v.fit)
        ui.metrics(st.columns(4), v.counts)

        tabs = ui.tabs(view.TABS, key="le_tab")  # ?le_tab=Roofline opens that tab, in either language
        with tabs[0]:  # a click on a bar shows that op on the roofline (its tab opens)
            st.vega_lite_chart(v.flops_chart, width="stretch", key="le_pick", selection_mode=view.PICK, on_select=lambda: (
                ss.update(le_op=view.picked(ss.le_pick.selection)), ss.le_op and ss.update(le_tab=_("Roofline"))))
            ui.view_table(v.ops)
            st.caption(_("Attention ops run once per layer, sequence and query head (GQA shrinks k_proj, v_proj and "
                         "the KV cache, not the products). Decode rows sum every step; N..N' is the key count at the "
                         "first and the last step. A MoE's expert GEMMs run k times per token."))
        with tabs[1]:  # the tabs without widgets draw only while open (a tab switch reruns the page)
            drawn = tabs[1].open and (st.vega_lite_chart(v.memory_chart, width="stretch"), st.markdown(v.memory))
        with tabs[2]:
            rv = tabs[2].open and view.roofline_view(v, ss.get("le_op"), gettext=shown)
            drawn = rv and (st.vega_lite_chart(rv.chart, width="stretch"), st.markdown(rv.words))
        with tabs[3]:
            if tabs[3].open:
                so = v.scaleout
                st.markdown(so.title)
                ui.metrics(st.columns(4), so.metrics)
                if so.groups:
                    ui.view_table(so.groups)
                drawn = st.vega_lite_chart(so.memory_chart, width="stretch"), st.caption(so.memory)
                if so.comm_chart:
                    st.vega_lite_chart(so.comm_chart, width="content")
                    if so.collectives:
                        ui.view_table(so.collectives)
                    st.caption(so.comm)
        with tabs[4]:
            flag(st, "le_train")
            c = st.columns([3, 2, 2, 2, 2])  # %.2e: "1.00e+12"; %.3g showed "1000000000000"
            drawn = num(c[0], "le_tokens", format="%.2e"), num(c[1], "le_mb"), num(c[4], "le_vs")
            drawn = pick(c[2], "le_rc", view.RECOMPUTE, format_func=label), pick(c[3], "le_zero", [0, 1, 2, 3])
            c, off = st.columns(3) + st.columns(3), view.greyed_training(e[0], ss.le_rc)  # six in a row cut "TP overl…"
            drawn = num(c[0], "le_cp"), flag(c[1], "le_tpo", disabled=off["le_tpo"]), num(c[4], "le_rcl", disabled=off["le_rcl"])
            drawn = pick(c[2], "le_epo", view.EP_OVERLAPS, format_func=label, disabled=off["le_epo"])
            drawn = num(c[3], "le_epsm", disabled=off["le_epo"] or ss.le_epo == "none"), fields.multi(
                c[5], "le_rcm", view.RECOMPUTE_MODULE_NAMES, disabled=off["le_rcm"])
            if not ss.le_train:
                st.info(_("Turn on **size a training run**: the batch is the global batch of one step, the prompt its "
                          "sequence length."))
            else:
                with ui.guard(_("the training run")):
                    tv = on_estimate("training", e, ui.lang(), view.TrainingInputs.from_state(ss))
                    (st.success if tv.fits else st.error)(tv.status)
                    drawn = ui.metrics(st.columns(5), tv.metrics), st.markdown(tv.words)
                    drawn = st.vega_lite_chart(tv.memory_chart, width="stretch"), st.caption(tv.caption)
        with tabs[5]:
            si = serving_inputs.draw(st, fields, shown)  # the CLI's --serve flags; greyed where they count for nothing
            if not si.serve:
                st.info(_("Turn on **serving curve**: throughput, time to first token and per output token from one "
                          "request to the KV-memory limit."))
            elif tabs[5].open:  # a simulation: only for a reader of this tab (a link need not open it)
                with ui.guard(_("the serving curve")), st.spinner(_("Simulating the engine's scheduler, step by step…")):
                    sv = on_estimate("serving", e, ui.lang(), si)
                    if sv.best or sv.none:
                        (st.success if sv.best else st.warning)(sv.best or sv.none)
                    drawn = st.vega_lite_chart(sv.chart, width="content"), ui.view_table(sv.table), st.caption(sv.caption)
            more = ui.url(st.multiselect, _("Models on one throughput chart (with this one)"), view.PRESET_NAMES,
                          key="le_more", placeholder=_("add presets to compare"))
            if more:
                with ui.guard(_("the models' throughput")):
                    mv = on_estimate("models", e, ui.lang(), e[0], tuple(more))
                    drawn = mv.chart and st.vega_lite_chart(mv.chart, width="content"), st.caption(mv.words)
        with tabs[6]:
            if tabs[6].open:
                drawn = st.markdown(_("**Counting switches** (the highlighted row is the one selected)")), ui.view_table(v.variants)
                st.markdown(_("**The article's rules of thumb** against the exact prefill count"))
                drawn = v.rules.rows or st.info(_("No prefill in a decode-only workload: the rules of thumb size a "
                                                  "prefill.")), ui.view_table(v.rules)
        with tabs[7]:
            if not ss.le_cmp:
                st.info(_("Turn on **compare with a second configuration (B)** in the sidebar."))
            else:
                c = st.columns([2, 1, 1, 1, 1, 2, 1], vertical_alignment="bottom")  # room for the names; a 2-line name: boxes in a row
                pick(c[0], "le_b_preset", view.B_MODELS, format_func=label)
                drawn = [num(c[i], key) for i, key in enumerate(("le_b_batch", "le_b_seq", "le_b_new"), 1)]
                pick(c[4], "le_b_wdt", view.B_WEIGHTS, format_func=label)
                pick(c[5], "le_b_gpu", list(HW), format_func=label)
                num(c[6], "le_b_gpus")
                with ui.guard(_("configuration B")):
                    cv = on_estimate("compare", e, ui.lang(), view.CompareInputs.from_state(ss), HW[ss.le_b_gpu],
                                     macs=ss.le_macs)
                    drawn = ui.highlight(cv.differs), st.markdown(cv.words)  # B's inputs that differ from A's
                    drawn = ui.view_table(cv.table), st.vega_lite_chart(cv.chart, width="content")
        with tabs[8]:  # drawn while open; the JSON as data (a callable's id changed every run: a press that met a rerun got nothing)
            c = tabs[8].open and st.columns(2)
            drawn = c and (c[0].download_button(_("Ops as CSV"), v.csv, f"{v.stem}.csv", "text/csv", key="le_dl_csv"),
                           c[1].download_button(_("Everything as JSON"), download_json(*e, view.TrainingInputs.from_state(ss), view.ServingInputs.from_state(ss)), f"{v.stem}.json", "application/json", key="le_dl_json"))
            st.caption(_("The JSON holds the same object as `python -m gemmlib estimate --json` (with `--train` and `--serve` "
                         "while the Training and Serving tabs' switches are on; where a tab refuses its run, `train_error` "
                         "or `serving_error` says why). This view's settings are in the page's URL: copy it to share the "
                         "view (an uploaded config.json is not part of the link)."))
