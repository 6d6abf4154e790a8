"""Multi-GPU: collectives measured over torch.distributed, and one layer split tensor-parallel,
measured beside the estimate.

The measuring is ``gemmlib.measure.collectives`` and ``gemmlib.measure.tp`` (ranks started by
``gemmlib.measure.launch``, from a worker process in the machine's queue with progress); the estimate is
the scale-out model's ``gemmlib.llm.parallel``; this page reads widgets and draws.
"""

import json

import pandas as pd
import streamlit as st

import ui
from gemmlib.charts import multigpu as mg_charts
from gemmlib.core import format as fmt
from gemmlib.core import interconnect
from gemmlib.core.comm import COLLECTIVE_LABELS
from gemmlib.core.results import to_csv
from gemmlib.measure import collectives as cl
from gemmlib.measure import harness, launch
from gemmlib.measure import tp as tpm
from gemmlib.measure.profiler import presets
from gemmlib.views import multigpu as view
from ui import _, ngettext

ui.page(
    _("Multi-GPU"),
    "🔗",
    _(r"""A model too big or too slow for one GPU is split across several. **Tensor parallelism** (Megatron)
splits every layer: q/k/v and the MLP's gate/up are *column*-parallel (each GPU computes some of the
output features), o_proj and down_proj *row*-parallel (each GPU holds a partial sum of the whole
output), and an **all-reduce** after each of the two adds the partial sums — two per layer, each of
tokens × hidden × bytes. The compute divides by n; the all-reduces do not. How long they take is the
interconnect's **bus bandwidth** (nccl-tests' busbw = size / time × 2(n−1)/n for an all-reduce).
This page measures both with `torch.distributed` (NCCL between GPUs), and puts the estimate beside."""),
)


def op_label(op: str) -> str:
    """A collective's name in the reader's language (the data keeps the identifier)."""
    return _(COLLECTIVE_LABELS.get(op, op))


def sentence(text: str) -> str:
    """A clause as a sentence: capital first letter, full stop."""
    return _("{sentence}.").format(sentence=text[:1].upper() + text[1:])


lim = ui.bench_limits()
gpus = ui.gpu_count()
backends = ["nccl", "gloo"] if gpus >= 2 else ["gloo"]
if gpus < 2:
    st.info(ngettext("This machine has **{n} GPU**, so every run here uses **gloo between CPU processes**: the same "
                     "`torch.distributed` calls, the same checks and the same arithmetic, but the bandwidths measure "
                     "host memory and local sockets — **not an interconnect figure** (NVLink moves hundreds of GB/s; "
                     "these are a few). On a machine with two or more GPUs the same page runs NCCL.",
                     "This machine has **{n} GPUs**, so every run here uses **gloo between CPU processes**: the same "
                     "`torch.distributed` calls, the same checks and the same arithmetic, but the bandwidths measure "
                     "host memory and local sockets — **not an interconnect figure** (NVLink moves hundreds of GB/s; "
                     "these are a few). On a machine with two or more GPUs the same page runs NCCL.", gpus)
            .format(n=gpus))

with st.container(border=True):
    c = st.columns([1, 1, 3])
    backend = ui.url(c[0].radio, _("Backend"), backends, key="mg_backend",
                     help=_("nccl: one GPU per rank; gloo: CPU processes on this machine"))
    most = gpus if backend == "nccl" else lim.max_ranks
    nproc = int(ui.url(c[1].number_input, _("Ranks"), 2, max(2, most), 2, key="mg_nproc",
                       help=(_("at most {n} here (GPUs)") if backend == "nccl" else _("at most {n} here (GEMM_MAX_RANKS)"))
                       .format(n=most)))
    kind = "cuda" if backend == "nccl" else "cpu"
    c[2].caption(ui.caps_caption(lim, ("ranks", "buffers", "time"),
                                 after=_("gloo ranks are CPU processes sharing this machine's cores.")
                                 if kind == "cpu" else ""))

# ----------------------------------------------------------------------------- collectives
st.subheader(_("Collectives: bus bandwidth against message size"))
cap = cl.size_cap(kind, nproc, lim)
top_default = cl.CPU_DEFAULT_MAX if kind == "cpu" else cl.GPU_DEFAULT_MAX
tops = [s for s in cl.size_range(1024, cl.MAX_SIZE) if s <= cap]
with st.container(border=True):
    d = st.columns([3, 1, 1, 1])
    op_labels = {o: op_label(o) for o in cl.MEASURED}  # bound now: a test reads the widget after the run
    ops = ui.url(d[0].multiselect, _("Collectives"), list(cl.MEASURED), default=list(cl.MEASURED), key="mg_ops",
                 format_func=op_labels.get)
    top = ui.url(d[1].selectbox, _("Largest message"), tops, index=tops.index(min(top_default, tops[-1])),
                 key="mg_top", format_func=fmt.nbytes)
    dtype = ui.url(d[2].selectbox, _("dtype"), list(cl.COLLECTIVE_DTYPES), key="mg_dtype")
    iters = int(ui.url(d[3].number_input, _("Samples per size"), 1, 100, 10, key="mg_iters"))
    st.caption(_("Sizes double from 8 B (nccl-tests' size: the buffer of an all-reduce or broadcast, the whole output "
                 "of an all-gather, the whole input of a reduce-scatter). Each sample starts after a barrier; its time "
                 "is the slowest rank's; the median with p20/p80 is shown. Every rank checks its result against the "
                 "exact expected output."))

coll = ui.bench_section(
    cl.SPEC, lambda: ops and cl.CollectiveLaunch(cl.CollectiveConfig(
        ops=tuple(o for o in cl.MEASURED if o in ops), sizes=cl.size_range(8, int(top)), dtype=dtype, iters=iters,
        time_budget_s=lim.time_limit_s), nproc=nproc, backend=backend), lim,
    key="mg_coll", button=_("Measure the collectives"), button_key="mg_run_coll", what=_("the collectives"),
    keep=None, store=lambda r: r.to_dict(), done=lambda r: _("Done: {rows} rows on {n} ranks ({backend})").format(
        rows=len(r.rows), n=r.nproc, backend=r.backend))
if coll:
    rows = coll["results"]
    st.markdown(_("**{n} ranks, {backend}, {dtype}, on {device}.**").format(
        n=coll["nproc"], backend=coll["backend"], dtype=coll["dtype"], device=coll["device_name"]))
    if not coll["interconnect"]:
        st.warning(_("{note}. Read the shapes of the curves (latency at small sizes, a plateau at large ones), not "
                     "the numbers.").format(note=ui.tr(coll["note"])))
    wrong = [r for r in rows if r.get("correct") is False]
    if wrong:
        st.error(ngettext("{n} row returned a WRONG result: {rows}", "{n} rows returned a WRONG result: {rows}",
                          len(wrong)).format(n=len(wrong), rows=_(", ").join(
            f"{op_label(r['op'])} {fmt.nbytes(r['bytes'])}" for r in wrong[:8])))
    ds = cl.datasheet_reference(coll["kind"], coll["device_name"])
    refs, ref_labels = view.references(ds, interconnect.measured_links(), gettext=_)
    ref_key = st.selectbox(_("Reference line"), list(refs), index=1 if len(refs) > 1 else 0, key="mg_ref",
                           format_func=lambda k: ref_labels.get(k, k))
    if ds is None:
        st.caption(_("No datasheet line: gloo between CPU processes has no datasheet interconnect.")
                   if coll["kind"] == "cpu" else
                   _("No datasheet line: the catalogue has no interconnect figure for this GPU."))
    tabs = st.tabs([_("bus bandwidth"), _("algorithm bandwidth"), _("time")])
    for tab, metric in zip(tabs, ("busbw_gbps", "algbw_gbps", "time_us"), strict=True):
        chart = mg_charts.collective_chart(rows, metric, reference=refs[ref_key], gettext=_)
        if chart is not None:
            tab.altair_chart(chart, width="stretch")
    table = view.collective_rows(rows, op_label)
    if table:
        ui.table(table, hide_index=True,
                 column_config={"op": _("collective"), "bytes": _("bytes"), "count": _("elements"),
                                "correct": _("correct"),
                                "time µs": st.column_config.NumberColumn(_("time µs"), format="%.4g"),
                                "p20 µs": st.column_config.NumberColumn("p20 µs", format="%.4g"),
                                "p80 µs": st.column_config.NumberColumn("p80 µs", format="%.4g"),
                                "algbw_gbps": st.column_config.NumberColumn("algbw GB/s", format="%.4g"),
                                "busbw_gbps": st.column_config.NumberColumn("busbw GB/s", format="%.4g")})
    if coll.get("saved"):
        st.success(_("Kept as **{name}** (busbw {busbw:.4g} GB/s, latency {latency:.4g} µs): the estimate below and "
                     "`python -m gemmlib estimate --interconnect` use it.").format(
            name=view.name_label(coll["saved"]["name"], _), busbw=coll["saved"]["busbw"] / 1e9, latency=coll["saved"]["latency_s"] * 1e6))
    elif (coll.get("extra") or {}).get("not_saved"):
        st.caption(sentence(ui.tr(coll["extra"]["not_saved"])))
    ui.downloads("collectives", to_csv(rows), json.dumps(coll, indent=2, default=str), key="mg_dl_coll", json_first=True)
else:
    st.info(_("Pick the collectives and the largest message, then **Measure the collectives**. Between CPU processes "
              "the default sweep takes some seconds."))

# ----------------------------------------------------------------------------- tensor parallelism
st.subheader(_("Tensor parallelism: one layer on one rank vs n ranks, beside the estimate"))
dense = list(presets())
base = tpm.gpu_default() if kind == "cuda" else tpm.cpu_default()
with st.container(border=True):
    e = st.columns([2, 1, 1, 1])
    preset = ui.url(e[0].selectbox, _("Model"), dense, index=dense.index(base["preset"]), key="mg_preset")
    scales = [1, 2, 4, 8, 16, 32]
    scale = ui.url(e[1].selectbox, _("Scale down by"), scales, index=scales.index(base["scale"]), key="mg_scale",
                   help=_("hidden, head size and MLP width ÷ this; head counts kept"))
    seq = int(ui.url(e[2].number_input, _("Tokens"), 1, 65536, base["seq_len"], key="mg_seq"))
    tdtype = ui.url(e[3].selectbox, _("dtype"), list(tpm.TP_DTYPES), index=list(tpm.TP_DTYPES).index(base["dtype"]),
                    key="mg_tdtype")
    # option ids: "auto", or a measured link's name (in a shared link, ?mg_link=NAME, as the CLI's --interconnect)
    links = {"auto": None} | {lk.name: lk.name for lk in interconnect.measured_links()}
    link_labels = {k: view.name_label(k, _) for k in links} | {"auto": _("measured for {backend} × n (if any), else the "
                                                     "catalogue's").format(backend=backend)}
    link_choice = ui.url(st.selectbox, _("Interconnect for the estimate"), list(links), key="mg_link",  # whole width:
                         format_func=link_labels.get)  # its options are sentences, cut in a fifth of the row

model = None
with ui.guard(_("the layer")):
    model = tpm.model_for(preset, int(scale))
if model is not None:
    choices = tpm.valid_ranks(model, most)
    st.caption(view.layer_caption(model, choices, gettext=_))
    ranks = ui.url(st.multiselect, _("Rank counts to run (each beside one rank)"), choices,
                   default=[n for n in choices if n == nproc] or choices[:1], key="mg_ranks")
    with ui.guard(_("the estimate")):
        dev_name = harness.device_name(kind)
        pick = links[link_choice]
        preview = []
        for n in ranks:
            est = tpm.estimate_layer(model, seq_len=seq, batch=1, dtype=tdtype, kind=kind, device_name=dev_name,
                                     nproc=n, backend=backend, interconnect_name=pick)
            if "error" in est:
                st.caption(_("Estimate for {n} ranks: {why}").format(n=n, why=ui.tr(est["error"])))
                continue
            preview.append(view.preview_row(n, est, gettext=_, tr=ui.tr))
        if preview:
            st.markdown(_("**The estimate, before measuring** (roofline of each rank's share + two all-reduces):"))
            ui.table(pd.DataFrame(preview), hide_index=True,
                     column_config={k: st.column_config.NumberColumn(_(view.TP_COLUMNS[k]), format="%.4g") for k in
                                    ("one rank ms", "per rank ms", "all-reduces ms", "speed-up")}
                     | {k: _(view.TP_COLUMNS[k]) for k in ("ranks", "hardware", "link")})

    runs = ui.bench_section(
        tpm.SPEC, lambda: ranks and tpm.TPLaunch(tpm.TPConfig(model=model, seq_len=seq, dtype=tdtype), ranks=tuple(ranks),
                                                 backend=backend, interconnect_name=pick), lim,
        key="mg_tp", button=_("Run the tensor-parallel layer"), button_key="mg_run_tp", notice=False, keep=None,
        what=_("the tensor-parallel layer"), store=lambda rs: [run.to_dict() for run in rs],
        done=lambda r: ngettext("Done: {n} rank count", "Done: {n} rank counts", len(r)).format(n=len(r)))
runs = st.session_state.get("mg_tp")
if runs:
    first = runs[0]
    st.markdown(_("**{model}, {tokens} tokens, {dtype}, {backend} on {device}.**").format(
        model=first["model_name"], tokens=first["tokens"], dtype=first["dtype"], backend=first["backend"],
        device=first["device_name"]))
    if first["backend"] == "gloo":
        st.warning(_("{note}. Each CPU rank has {threads} as its device and the one-rank baseline runs on "
                     "one such device; the ranks still share the memory bandwidth (and the cores when there are more "
                     "ranks than cores). This checks the mechanics and the estimate, it is not a GPU scaling figure.")
                   .format(note=ui.tr(first["note"]), threads=ngettext("{n} thread", "{n} threads", first[
                       "threads_per_rank"]).format(n=first["threads_per_rank"])))
    last = runs[-1]
    m = st.columns(4)
    m[0].metric(_("speed-up on {n} ranks").format(n=last["nproc"]), f"{last['speedup']:.3g}×")
    m[1].metric(_("scaling efficiency"), f"{last['scaling_efficiency']:.0%}", help="t₁ / (n · tₙ)")
    m[2].metric(_("time in the all-reduces"), f"{last['comm_share']:.0%}",
                help=_("inside the two all-reduces, waiting for the slowest rank included"))
    m[3].metric(_("output vs one rank"), _("matches") if last["correct"] else _("DIFFERS"),
                _("{diff} (tolerance {tol})").format(diff=f"{last['rel_diff']:.1e}", tol=f"{last['tolerance']:.0e}"),
                delta_color="off")
    bad = [r for r in runs if not r["correct"]]
    if bad:
        st.error(_("The tensor-parallel output differs from the one-rank output beyond the dtype's tolerance on "
                   "{ranks}").format(ranks=_(", ").join(_("{n} ranks").format(n=r["nproc"]) for r in bad)))
    tabs = st.tabs([_("one rank vs n ranks"), _("scaling")])
    chart = mg_charts.tp_chart(last["rows"], gettext=_)
    if chart is not None:
        tabs[0].altair_chart(chart, width="stretch")
    points = view.tp_points(runs)
    chart = mg_charts.tp_scaling_chart(points, gettext=_)
    if chart is not None:
        tabs[1].altair_chart(chart, width="stretch")
    table = pd.DataFrame(view.tp_rows(runs))
    ui.table(table, hide_index=True,
             column_config={k: st.column_config.NumberColumn(_(view.TP_COLUMNS[k]), format="%.4g") for k in
                            ("one rank ms", "n ranks ms", "all-reduces ms", "speed-up", "estimate ms")}
             | {"efficiency": st.column_config.NumberColumn(_(view.TP_COLUMNS["efficiency"]), format="percent"),
                "comm share": st.column_config.NumberColumn(_(view.TP_COLUMNS["comm share"]), format="percent"),
                "rel. diff": st.column_config.NumberColumn(_(view.TP_COLUMNS["rel. diff"]), format="%.2e")}
             | {k: _(view.TP_COLUMNS[k]) for k in ("ranks", "matches")})
    st.caption(view.estimate_caption(last.get("estimate") or {}, gettext=_, tr=ui.tr))
    if over := view.oversubscribed_note(runs, launch.usable_cpus(), ngettext, _):
        st.warning(over)
    ui.downloads("tensor_parallel", json=json.dumps(runs, indent=2, default=str), key="mg_dl_tp")
else:
    st.info(_("Pick a model and rank counts, then **Run the tensor-parallel layer**. Between CPU processes the "
              "default (llama-3-8b ÷ 16, 128 tokens) takes a few seconds per rank count."))
