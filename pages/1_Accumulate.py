"""Accumulate: D = αAB + βC built one multiply-add at a time (the article's example 1).

Streamlit reruns this whole script on every interaction. The step-by-step view
is ``ui.stepper``: Python computes the trace and the browser draws and plays it, telling
the page the step only when it stops (for the running-sum chart and the URL).
All arithmetic is in ``gemmlib.explain.reference`` and ``gemmlib.explain.accumulation``.
"""

from dataclasses import replace

import pandas as pd
import streamlit as st

import ui
from gemmlib.charts.explain import accumulation_chart, loads_chart, running_sum_chart, spec
from gemmlib.core import format as fmt
from gemmlib.core.flops import naive_op_counts
from gemmlib.explain import reference as ref
from gemmlib.explain.accumulation import (
    DISTRIBUTIONS,
    OPERAND_DTYPES,
    accumulation_study,
    explain,
    matmul_errors,
)

PAGE_MAX = 12  # largest M, N, K on this page (every step is kept and drawn)
ALPHA_BETA_LIMIT = 100.0

ui.page("Accumulate", "➕")
sc = st.columns([2, 3])
present = ui.url(sc[0].toggle, "presentation mode", False, key="acc_present",
                 help="for a projector: the step-through first, large cells and text, the explanations and "
                      "inputs folded; a clicker's PageDown / PageUp step once the stepper has the focus "
                      "(click the grids). Collapse the sidebar for more room.")
speed = ui.url(sc[1].slider, "speed (steps per second)", 1, ui.STEPPER_MAX_SPEED, 5, key="acc_speed",
               help="the browser draws every step at this pace, however busy the server is")
ui.intro(r"""
Every element of $D = \alpha A B + \beta C$ is a **dot product**: $D_{ij} = \alpha\sum_k A_{ik}B_{kj} + \beta C_{ij}$.
Step through it one multiply-add at a time, in three loop orders that compute the same numbers
but touch memory very differently — which is what GEMM kernels are really about.

**What to notice:** the inner product reads every element of A and B once per use (M·N·K loads of
each); the outer product reads each once but rewrites all of D at every k; a tile does both well.
""", folded=present)

SOURCES = {"article": "the article's example", "random": "random (from a seed)", "custom": "type your own"}

# ----------------------------------------------------------------------------- inputs
st.session_state.setdefault("acc_text_a", "1 2 3\n4 5 6")
st.session_state.setdefault("acc_text_b", "7 8\n9 10\n11 12")
st.session_state.setdefault("acc_text_c", "")
st.session_state.setdefault("acc_ints", True)

inputs = st.expander("The matrices and the loop order") if present else st.container()
with inputs, st.container(border=True):
    src = ui.url(st.radio, "Matrices", list(SOURCES), format_func=SOURCES.get, horizontal=True, key="acc_src")
    c1, c2, c3 = st.columns([2, 2, 3])
    alpha = ui.url(c1.number_input, "α", -ALPHA_BETA_LIMIT, ALPHA_BETA_LIMIT, 1.0, step=0.5, key="acc_alpha",
                   help="scales A·B; 1 in LLM layers")
    beta = ui.url(c2.number_input, "β", -ALPHA_BETA_LIMIT, ALPHA_BETA_LIMIT, 0.0, step=0.5, key="acc_beta",
                  help="scales C; 0 in LLM layers (then C is not read at all)")
    if src == "random":
        r = st.columns(5)
        m_in = ui.url(r[0].number_input, "M (rows of A, D)", 1, PAGE_MAX, 4, key="acc_m")
        k_in = ui.url(r[1].number_input, "K (shared)", 1, PAGE_MAX, 4, key="acc_k")
        n_in = ui.url(r[2].number_input, "N (columns of B, D)", 1, PAGE_MAX, 4, key="acc_n")
        seed = ui.url(r[3].number_input, "seed", 0, 10**6, 0, key="acc_seed")
        r[4].toggle("small integers", key="acc_ints", help="off: normal numbers with two decimals")
    elif src == "custom":
        st.caption("One row per line; numbers separated by spaces or commas (or paste `[[1, 2], [3, 4]]`). "
                   "Leave C empty for zeros.")
        t = st.columns(3)
        t[0].text_area("A (M×K)", key="acc_text_a", height=140)
        t[1].text_area("B (K×N)", key="acc_text_b", height=140)
        t[2].text_area("C (M×N, optional)", key="acc_text_c", height=140)

problem = None
with ui.guard("the matrices"):
    if src == "article":
        problem = replace(ref.article_problem(), alpha=float(alpha), beta=float(beta))
    elif src == "random":
        problem = ref.random_problem(int(m_in), int(n_in), int(k_in), int(seed), alpha=alpha, beta=beta,
                                     integers=st.session_state.acc_ints, max_dim=PAGE_MAX)
    else:
        text_c = st.session_state.acc_text_c
        problem = ref.make_problem(st.session_state.acc_text_a, st.session_state.acc_text_b,
                                   text_c if text_c.strip() else None, alpha, beta, max_dim=PAGE_MAX)
if problem is not None:
    st.session_state.acc_good = problem
else:
    problem = st.session_state.get("acc_good", ref.article_problem())
    st.info(f"Showing the last matrices that worked ({problem.m}×{problem.k} times {problem.k}×{problem.n}).")

o1, o2 = inputs.columns([3, 4])
order = ui.url(o1.radio, "Loop order", ref.LOOP_ORDERS, format_func=ref.LOOP_ORDER_LABELS.get, key="acc_order")
tile = ref.default_tile(problem)
if order == "tiled":
    tc = o2.columns(3)
    tile = tuple(tc[idx].number_input(f"tile {d}", 1, PAGE_MAX, value=min(tile[idx], PAGE_MAX),
                                      key=f"acc_tile_{d.lower()}")
                 for idx, d in enumerate("MNK"))
o2.caption({
    "inner": "For each D[i,j]: walk k, one multiply-add per step. Every A and B element is fetched "
             "again at every use — M·N·K loads of each.",
    "outer": "For each k: add the outer product of column k of A and row k of B to all of D. Each A "
             "and B element is loaded once, but all of D is updated K times.",
    "tiled": "For each block of D: walk k in tiles; load an A tile and a B tile once and do every "
             "multiply-add they allow. A is re-read once per column of blocks, B once per row of blocks.",
}[order])


@st.cache_resource(max_entries=64, show_spinner=False)
def get_trace(p: ref.Problem, o: str, t: tuple[int, int, int]) -> ref.Trace:
    return ref.trace(p, o, t if o == "tiled" else None)


tr = get_trace(problem, order, tuple(int(v) for v in tile))


# keys: acc_stepper (the component), acc_pos (the step, also ?acc_pos= in the URL), acc_stepper_trace
pos = ui.stepper("acc_stepper", tr, speed=speed, presentation=present, pos_key="acc_pos")
legend = ("Amber: the A and B elements this step reads; violet: the C element the epilogue reads (β ≠ 0); "
          "red: the D element(s) it writes; dashed: not computed yet. The counts are cumulative, assuming "
          "every operand comes from memory (no cache) except what the loop order keeps in registers: the "
          "running sum (inner), the two tiles and the block of D (tiled). The last step is the epilogue "
          "D = α·(A·B) + β·C: with α = 1 and β = 0, as in an LLM layer, it changes nothing.")
if present:
    with st.expander("What the colours and counts mean"):
        st.caption(legend)
else:
    st.caption(legend)

# ----------------------------------------------------------------------------- loads per loop order
st.subheader("What each loop order loads")


@st.cache_data(max_entries=64, show_spinner=False)
def loads_view(p: ref.Problem, t: tuple[int, int, int]) -> tuple[dict, pd.DataFrame]:
    rows, table = [], []
    for o in ref.LOOP_ORDERS:
        t_ = get_trace(p, o, t).totals
        label = ref.LOOP_ORDER_LABELS[o]
        rows += [{"order": o, "operand": "A", "loads": t_["loads_a"]},
                 {"order": o, "operand": "B", "loads": t_["loads_b"]}]
        table.append({"loop order": label, "steps": t_["steps"], "A loads": t_["loads_a"],
                      "B loads": t_["loads_b"], "A + B loads": t_["loads"], "D stores": t_["stores_d"],
                      "multiplications": t_["mults"], "additions": t_["adds"]})
    return spec(loads_chart(rows)), pd.DataFrame(table)


@st.cache_data(max_entries=64, show_spinner=False)
def running_view(p: ref.Problem, i: int, j: int, done: int) -> dict:
    return spec(running_sum_chart(ref.running_sum(p, i, j), current_k=done - 1 if done else None,
                                  cell=f"D[{i},{j}]"))


loads_spec, loads_table = loads_view(problem, tuple(int(v) for v in tile))
lc1, lc2 = st.columns([3, 2])
lc1.vega_lite_chart(loads_spec, width="stretch")
ui.table(loads_table, where=lc2)
st.caption(f"Same {problem.m * problem.n * problem.k:,} multiply-adds in every order. Tiled with tiles "
           f"{'×'.join(str(v) for v in tile)} (M×N×K) re-reads A once per column of D blocks and B once per row "
           "of D blocks; the outer product reads A and B once but rewrites all of D at each k. Real kernels "
           "tile at every level (registers, shared memory, L2) to get both.")

# ----------------------------------------------------------------------------- check and count
st.subheader("Check against numpy, and the article's count")
chk = ref.check(tr)
counts = naive_op_counts(problem.m, problem.n, problem.k)
k1, k2, k3, k4 = st.columns(4)
k1.metric("max |trace − numpy|", fmt.number(chk["max_abs_error"], 3))
k2.metric("multiplications M·N·K", fmt.count(counts["multiplications"]))
k3.metric("additions M·N·(K−1)", fmt.count(counts["additions"]))
k4.metric("2·M·N·K", fmt.count(counts["formula"]), delta=f"+{fmt.count(counts['gap'])} (= M·N)", delta_color="off")
dc1, dc2 = st.columns(2)
dc1.markdown("**D from the trace**")
ui.table(pd.DataFrame(tr.result()), where=dc1, hide_index=False, width="stretch")
dc2.markdown("**numpy: α·A @ B + β·C**")
ui.table(pd.DataFrame(problem.expected()), where=dc2, hide_index=False, width="stretch")
st.markdown(
    f"A dot product of length K needs K multiplications but only K − 1 additions (the first product "
    f"starts the sum), so the exact count is 2·M·N·K − M·N = **{counts['counted']:,}**. The convention "
    f"2·M·N·K = **{counts['formula']:,}** charges one more add per output — the add into a zeroed "
    f"accumulator, or into C — a gap of M·N, i.e. 1/(2K) = **{counts['relative_gap']:.2%}** here. "
    "It vanishes as K grows, and it is the convention every FLOP counter (including PyTorch's) uses. "
    "The α/β epilogue is extra: M·N multiplications for α ≠ 1, and 2·M·N for β ≠ 0."
)

# ----------------------------------------------------------------------------- running sum
st.subheader("One element accumulating (the article's line chart)")
rc = st.columns([1, 1, 4])
ci = rc[0].number_input("row i", 0, problem.m - 1, value=0, key="acc_ci")
cj = rc[1].number_input("column j", 0, problem.n - 1, value=0, key="acc_cj")
ci, cj = min(int(ci), problem.m - 1), min(int(cj), problem.n - 1)
done = tr.products_done(pos, (ci, cj))
st.vega_lite_chart(running_view(problem, ci, cj, done), width="stretch")
st.caption(f"The large point is where the step-through stopped (step {pos + 1} of {len(tr)}): "
           f"{done} of the {problem.k} products are in D[{ci},{cj}] there. Pause or step to move it.")

# ----------------------------------------------------------------------------- accumulator precision
st.subheader("Accumulator precision: why tensor cores add in fp32")
st.markdown(
    "The same dot products, operands rounded to a low precision as a tensor core takes them, summed "
    "one product at a time in **fp16**, **fp32** and **fp64** and compared with the exact sum."
)
pc = st.columns(3)
dist = pc[0].radio("operands", list(DISTRIBUTIONS), key="acc_dist", format_func=lambda d: d,
                   help="; ".join(f"{k}: {v}" for k, v in DISTRIBUTIONS.items()))
operands = pc[1].selectbox("operand precision", OPERAND_DTYPES, key="acc_operands")
kmax = pc[2].select_slider("longest K", options=[256, 1024, 4096, 16384, 65536], value=16384, key="acc_kmax")
ks = tuple(k for k in (16, 64, 256, 1024, 4096, 16384, 65536) if k <= kmax)


@st.cache_data(max_entries=32, show_spinner="Accumulating…")
def get_study(ks_: tuple[int, ...], dist_: str, ops_: str):
    study = accumulation_study(ks_, rows=16, seed=0, distribution=dist_, operands=ops_)
    return study, spec(accumulation_chart(study.records()))


with ui.guard("the precision study"):
    study, study_chart = get_study(ks, dist, operands)
    st.vega_lite_chart(study_chart, width="stretch")
    st.markdown(explain(study))
    with st.expander("Table"):
        ui.table(study.records(), {"median relative error": "error", "max relative error": "error"})
    a_, b_, _ = problem.arrays()
    st.markdown(f"**Your matrices** ({problem.m}×{problem.k} by {problem.k}×{problem.n}), operands in {operands}, "
                "A·B accumulated in each precision:")
    errs = matmul_errors(a_, b_, operands)
    ui.table(errs)
    if all(r["max |error|"] == 0 for r in errs):
        st.caption("Every accumulator gives the same D here: sums this short of numbers this simple (small "
                   "integers are exact in fp16 up to 2048) never round. The error needs long sums to show.")
    else:
        st.caption("Errors are against the exact product of the same rounded operands; the last column is what "
                   "rounding the operands alone did.")
    st.caption(f"16 dot products per K, operands {DISTRIBUTIONS[dist]}; relative error = |sum − exact| / |exact|. "
               "An fp64 error of 0 means float64 summed these products without any rounding (fp16 and bf16 "
               "products have few enough bits); it is drawn at 1e-18 on the log scale.")

