"""Accumulate: D = αAB + βC built one multiply-add at a time (the article's example 1).

Streamlit reruns this whole script on every interaction. The step-by-step view
is ``ui.stepper``: Python computes the trace and the browser draws and plays it, telling
the page the step only when it stops (for the running-sum chart and the URL).
All arithmetic is in ``gemmlib.explain.reference`` and ``gemmlib.explain.accumulation``; the loads
table and the words of the tables and switches are ``gemmlib.views.accumulate``.
"""

from dataclasses import replace

import pandas as pd
import streamlit as st

import ui
from gemmlib.charts.explain import accumulation_chart, running_sum_chart, spec
from gemmlib.core import format as fmt
from gemmlib.core.flops import naive_op_counts
from gemmlib.explain import reference as ref
from gemmlib.explain.accumulation import (
    DISTRIBUTION_NAMES,
    DISTRIBUTIONS,
    OPERAND_DTYPES,
    accumulation_study,
    explain,
    matmul_errors,
)
from gemmlib.views import accumulate as view
from ui import _

PAGE_MAX = 12  # largest M, N, K on this page (every step is kept and drawn)
ALPHA_BETA_LIMIT = 100.0

ui.page(_("Accumulate"), ":material/add:")
sc = st.columns([2, 3])
present = ui.url(sc[0].toggle, _("presentation mode"), False, key="acc_present",
                 help=_("for a projector: the step-through alone on the screen, sized to the window, the title, "
                        "sidebar, explanations and inputs folded away; a clicker's PageDown / PageUp step once the "
                        "stepper has the focus (click the grids)."))
ui.presenting(present)
stage = st.container() if present else None  # presentation: the step-through first, right under the switch
ui.intro(_(r"""Every element of $D = \alpha A B + \beta C$ is a **dot product**: $D_{ij} = \alpha\sum_k A_{ik}B_{kj} + \beta C_{ij}$.
Step through it one multiply-add at a time, in three loop orders that compute the same numbers
but touch memory very differently — which is what GEMM kernels are really about.

**What to notice:** the inner product reads every element of A and B once per use (M·N·K loads of
each); the outer product reads each once but rewrites all of D at every k; a tile does both well."""),
         folded=present)

# ----------------------------------------------------------------------------- inputs
TYPED_MAX_CHARS = 4096  # a 12×12 matrix at 28 characters a number: keeps a shared link well under 64 KiB
TYPED = {"acc_text_a": "1 2 3\n4 5 6", "acc_text_b": "7 8\n9 10\n11 12", "acc_text_c": ""}  # in the link too
first_run = "acc_typed" not in st.session_state
typed = st.session_state.setdefault("acc_typed", dict(TYPED))  # kept while another source is shown

inputs = st.expander(_("The matrices, the loop order and the speed")) if present else st.container()
speed = ui.url((inputs if present else sc[1]).slider, _("speed (steps per second)"), 1, ui.STEPPER_MAX_SPEED, 5,
               key="acc_speed", help=_("the browser draws every step at up to 10 steps per second, however busy "
                                       "the server is; faster, a busy browser may skip a step to keep the pace"))
with inputs, st.container(border=True):
    src = ui.url(st.radio, _("Matrices"), list(view.SOURCES), format_func=ui.option_labels(view.SOURCES), horizontal=True,
                 key="acc_src")
    c1, c2, c3 = st.columns([2, 2, 3])
    alpha = ui.url(c1.number_input, "α", -ALPHA_BETA_LIMIT, ALPHA_BETA_LIMIT, 1.0, step=0.5, key="acc_alpha",
                   help=_("scales A·B; 1 in LLM layers"))
    beta = ui.url(c2.number_input, "β", -ALPHA_BETA_LIMIT, ALPHA_BETA_LIMIT, 0.0, step=0.5, key="acc_beta",
                  help=_("scales C; 0 in LLM layers (then C is not read at all)"))
    if src == "random":
        r = st.columns(5)
        m_in = ui.url(r[0].number_input, _("M (rows of A, D)"), 1, PAGE_MAX, 4, key="acc_m")
        k_in = ui.url(r[1].number_input, _("K (shared)"), 1, PAGE_MAX, 4, key="acc_k")
        n_in = ui.url(r[2].number_input, _("N (columns of B, D)"), 1, PAGE_MAX, 4, key="acc_n")
        seed = ui.url(r[3].number_input, _("seed"), 0, 10**6, 0, key="acc_seed")
        ints = ui.url(r[4].toggle, _("small integers"), True, key="acc_ints",
                      help=_("off: normal numbers with two decimals"))
    elif src == "custom":
        st.caption(_("One row per line; numbers separated by spaces or commas (or paste `[[1, 2], [3, 4]]`). "
                     "Leave C empty for zeros."))
        t = st.columns(3)
        for k in TYPED if not first_run else ():  # back from another source: what was typed, not the defaults
            if k not in st.session_state:
                ui.set_url_widget(k, typed[k])
        labels = ("A (M×K)", "B (K×N)", _("C (M×N, optional)"))
        typed = st.session_state.acc_typed = {k: ui.url(col.text_area, label, TYPED[k], key=k, height=140,
                                                     max_chars=TYPED_MAX_CHARS)
                                              for k, col, label in zip(TYPED, t, labels, strict=True)}

problem = None
with ui.guard(_("the matrices")):
    if src == "article":
        problem = replace(ref.article_problem(), alpha=float(alpha), beta=float(beta))
    elif src == "random":
        problem = ref.random_problem(int(m_in), int(n_in), int(k_in), int(seed), alpha=alpha, beta=beta,
                                     integers=ints, max_dim=PAGE_MAX)
    else:
        text_c = typed["acc_text_c"]
        problem = ref.make_problem(typed["acc_text_a"], typed["acc_text_b"], text_c if text_c.strip() else None,
                                   alpha, beta, max_dim=PAGE_MAX)
if problem is not None:
    st.session_state.acc_good = problem
else:
    problem = st.session_state.get("acc_good", ref.article_problem())
    st.info(_("Showing the last matrices that worked ({m}×{k} times {k}×{n}).").format(
        m=problem.m, k=problem.k, n=problem.n))

o1, o2 = inputs.columns([3, 4])
order = ui.url(o1.radio, _("Loop order"), ref.LOOP_ORDERS, format_func=ui.option_labels(ref.LOOP_ORDER_LABELS),
               key="acc_order")
tile = ref.default_tile(problem)
if order == "tiled":
    tc = o2.columns(3)
    tile = tuple(ui.url(tc[idx].number_input, _("tile {dim}").format(dim=d), 1, PAGE_MAX, min(tile[idx], PAGE_MAX),
                        key=f"acc_tile_{d.lower()}") for idx, d in enumerate("MNK"))  # ?acc_tile_m=2 …
o2.caption(_(view.ORDER_NOTES[order]))
get_trace = st.cache_resource(max_entries=64, show_spinner=False)(view.trace)
tile = tuple(min(int(v), d) for v, d in zip(tile, (problem.m, problem.n, problem.k), strict=True))  # at most the matrix
tr = get_trace(problem, order, tile)




def edited(mats: dict[str, str]) -> None:
    """A cell of A, B or C changed in the step-through: these are now the page's own matrices."""
    st.session_state.acc_typed = dict(zip(TYPED, (mats["A"], mats["B"], mats["C"]), strict=True))
    for k, v in st.session_state.acc_typed.items():
        ui.set_url_widget(k, v)
        if v != TYPED[k] and k not in st.session_state:  # a first showing: Streamlit leaves it out of the URL
            st.query_params[k] = v
    ui.set_url_widget("acc_src", "custom")


# keys: acc_stepper (the component), acc_pos (the step, also ?acc_pos= in the URL), acc_stepper_trace
with stage or st.container():
    pos = ui.stepper("acc_stepper", tr, speed=speed, presentation=present, pos_key="acc_pos", on_edit=edited)
legend = _("Amber: the A and B elements this step reads; violet: the C element the epilogue reads (β ≠ 0); "
           "blue: the D element(s) it writes; dashed: not computed yet. The counts are cumulative, assuming "
           "every operand comes from memory (no cache) except what the loop order keeps in registers: the "
           "running sum (inner), the two tiles and the block of D (tiled). The last step is the epilogue "
           "D = α·(A·B) + β·C: with α = 1 and β = 0, as in an LLM layer, it changes nothing.")
(st.expander(_("What the colours and counts mean")) if present else st.container()).caption(legend)

# ----------------------------------------------------------------------------- loads per loop order
st.subheader(_("What each loop order loads"))


@st.cache_data(max_entries=64, show_spinner=False)
def loads_view(p: ref.Problem, t: tuple[int, int, int], code: str) -> tuple[dict, list[dict]]:
    """The loads chart and table in language ``code`` (the table's loop orders are text)."""
    return view.loads(p, t, gettext=ui.gettext_for(code), tracer=get_trace)


@st.cache_data(max_entries=64, show_spinner=False)
def running_view(p: ref.Problem, i: int, j: int, done: int, code: str) -> dict:
    return spec(running_sum_chart(ref.running_sum(p, i, j), current_k=done - 1 if done else None,
                                  cell=f"D[{i},{j}]", gettext=ui.gettext_for(code)))


loads_spec, loads_table = loads_view(problem, tuple(int(v) for v in tile), ui.lang())
st.vega_lite_chart(loads_spec, width="stretch")  # the table below it at full width: all eight columns in view at 1280 px
ui.table(loads_table, where=st.container(key="acc_loads"), column_config={c: _(label) for c, label in view.LOADS_COLUMNS.items()})
st.caption(_("Same {macs:,} multiply-adds in every order. Tiled with tiles {tile} (M×N×K) re-reads A once per column "
             "of D blocks and B once per row of D blocks; the outer product reads A and B once but rewrites all of D "
             "at each k. Real kernels tile at every level (registers, shared memory, L2) to get both.").format(
    macs=problem.m * problem.n * problem.k, tile="×".join(str(v) for v in tile)))

# ----------------------------------------------------------------------------- check and count
st.subheader(_("Check against numpy, and the article's count"))
chk = ref.check(tr)
counts = naive_op_counts(problem.m, problem.n, problem.k)
(k1, k2), (k3, k4) = st.columns(2), st.columns(2)  # two by two: whole labels in a narrow (zoomed) window
k1.metric(_("max |trace − numpy|"), fmt.number(chk["max_abs_error"], 3))
k2.metric(_("multiplications M·N·K"), fmt.count(counts["multiplications"]))
k3.metric(_("additions M·N·(K−1)"), fmt.count(counts["additions"]))
k4.metric("2·M·N·K", fmt.count(counts["formula"]), delta=f"+{fmt.count(counts['gap'])} (= M·N)", delta_color="off")
dc1, dc2 = st.columns(2)
dc1.markdown(_("**D from the trace**"))
ui.table(pd.DataFrame(tr.result()), where=dc1, hide_index=False, width="stretch")
dc2.markdown("**numpy: α·A @ B + β·C**")
ui.table(pd.DataFrame(problem.expected()), where=dc2, hide_index=False, width="stretch")
st.markdown(_(
    "A dot product of length K needs K multiplications but only K − 1 additions (the first product "
    "starts the sum), so the exact count is 2·M·N·K − M·N = **{counted:,}**. The convention "
    "2·M·N·K = **{formula:,}** charges one more add per output — the add into a zeroed "
    "accumulator, or into C — a gap of M·N, i.e. 1/(2K) = **{gap:.2%}** here. "
    "It vanishes as K grows, and it is the convention every FLOP counter (including PyTorch's) uses. "
    "The α/β epilogue is extra: M·N multiplications for α ≠ 1, and 2·M·N for β ≠ 0."
).format(counted=counts["counted"], formula=counts["formula"], gap=counts["relative_gap"]))

# ----------------------------------------------------------------------------- running sum
st.subheader(_("One element accumulating (the article's line chart)"))
rc = st.columns([1, 1, 4])
ci = ui.url(rc[0].number_input, _("row i"), 0, problem.m - 1, 0, key="acc_ci")
cj = ui.url(rc[1].number_input, _("column j"), 0, problem.n - 1, 0, key="acc_cj")
ci, cj = min(int(ci), problem.m - 1), min(int(cj), problem.n - 1)
done = tr.products_done(pos, (ci, cj))
st.vega_lite_chart(running_view(problem, ci, cj, done, ui.lang()), width="stretch")
st.caption(_("The large point is where the step-through stopped (step {step} of {total}): {done} of the {k} products "
             "are in D[{i},{j}] there. Pause or step to move it.").format(
    step=pos + 1, total=len(tr), done=done, k=problem.k, i=ci, j=cj) + view.epilogue_note(problem, ci, cj, gettext=_))

# ----------------------------------------------------------------------------- accumulator precision
st.subheader(_("Accumulator precision: why tensor cores add in fp32"))
st.markdown(_(
    "The same dot products, operands rounded to a low precision as a tensor core takes them, summed "
    "one product at a time in **fp16**, **fp32** and **fp64** and compared with the exact sum."
))
pc = st.columns(3)
dist = ui.url(pc[0].radio, _("operands"), list(DISTRIBUTIONS), key="acc_dist",
              format_func=ui.option_labels(DISTRIBUTION_NAMES),
              help="; ".join(_("{name}: {what}").format(name=_(DISTRIBUTION_NAMES[k]), what=_(v))
                             for k, v in DISTRIBUTIONS.items()))
operands = ui.url(pc[1].selectbox, _("operand precision"), OPERAND_DTYPES, key="acc_operands")
kmax = ui.url(pc[2].select_slider, _("longest K"), options=[256, 1024, 4096, 16384, 65536], value=16384,
              key="acc_kmax")
ks = tuple(k for k in (16, 64, 256, 1024, 4096, 16384, 65536) if k <= kmax)


@st.cache_data(max_entries=32, show_spinner=False)
def get_study(ks_: tuple[int, ...], dist_: str, ops_: str, code: str):
    study = accumulation_study(ks_, rows=16, seed=0, distribution=dist_, operands=ops_)
    return study, spec(accumulation_chart(study.records(), gettext=ui.gettext_for(code)))


with ui.guard(_("the precision study")), st.spinner(_("Accumulating…")):
    study, study_chart = get_study(ks, dist, operands, ui.lang())
    st.vega_lite_chart(study_chart, width="stretch")
    st.markdown(explain(study, gettext=_))
    with st.expander(_("Table")):
        ui.table(study.records(), {"median relative error": "error", "max relative error": "error"},
                 column_config={c: _(label) for c, label in view.STUDY_COLUMNS.items()})
    a_, b_, _c = problem.arrays()
    st.markdown(_("**Your matrices** ({m}×{k} by {k}×{n}), operands in {operands}, A·B accumulated in each "
                  "precision:").format(m=problem.m, k=problem.k, n=problem.n, operands=operands))
    errs = matmul_errors(a_, b_, operands)
    ui.table(errs, column_config={c: _(label) for c, label in view.STUDY_COLUMNS.items()})
    if all(r["max |error|"] == 0 for r in errs):
        st.caption(_("Every accumulator gives the same D here: sums this short of numbers this simple (small "
                     "integers are exact in fp16 up to 2048) never round. The error needs long sums to show."))
    else:
        st.caption(_("Errors are against the exact product of the same rounded operands; the last column is what "
                     "rounding the operands alone did."))
    st.caption(_("16 dot products per K, operands {distribution}; relative error = |sum − exact| / |exact|. An fp64 "
                 "error of 0 means float64 summed these products without any rounding (fp16 and bf16 products have "
                 "few enough bits); it is drawn at 1e-18 on the log scale.").format(distribution=_(DISTRIBUTIONS[dist])))

