"""Transformer GEMMs: every GEMM of one layer, drawn to scale, and when attention dominates.

The article's example 3 and its FFN section. All numbers come from
``gemmlib.llm.accounting`` (the same code the LLM Estimator and the CLI use); this page
reads widgets, calls it, and draws.
"""

import streamlit as st

import ui
from gemmlib.charts.model import gemm_shapes_spec, share_spec
from gemmlib.core import format as fmt
from gemmlib.core.i18n import N_
from gemmlib.llm.accounting import (
    ATTENTION_PRODUCTS,
    attention_crossover,
    attention_share,
    layer_model,
    layer_ops,
)
from ui import _
from ui.tables import text_width

MAX_SEQ = 1 << 20
MAX_D = 65536
MAX_FFN = 262144

ui.page(
    _("Transformer GEMMs"),
    ":material/layers:",
    _(r"""One decoder layer is a handful of GEMMs: the **Q, K, V and output projections**
($[s\times d]\cdot[d\times d]$), the two **attention products** per head — scores
$Q K^\top$ ($[s\times d_h]\cdot[d_h\times s]$) and weights·V ($[s\times s]\cdot[s\times d_h]$) —
and the **MLP** (up and down, plus a gate in a gated/SwiGLU MLP). Choose a layer below: every GEMM is
drawn to scale with its FLOPs ($2MNK$ each), and the chart further down shows at which sequence
length the attention products really take over."""),
)

# ----------------------------------------------------------------------------- inputs
ARTICLE = {"tg_seq": 1024, "tg_d": 4096, "tg_heads": 32, "tg_kv": 0, "tg_ffn": 16384, "tg_gated": False,
           "tg_causal": False}


def _article_defaults() -> None:
    for k, v in ARTICLE.items():
        st.session_state[k] = v  # a bound widget set from a callback: the URL follows


with st.container(border=True):
    c = st.columns(5)
    ui.url(c[0].number_input, _("seq_len s"), 1, MAX_SEQ, ARTICLE["tg_seq"], key="tg_seq",
           help=_("tokens in the sequence (one sequence)"))
    ui.url(c[1].number_input, _("d_model d"), 1, MAX_D, ARTICLE["tg_d"], key="tg_d", help=_("hidden size"))
    ui.url(c[2].number_input, _("heads"), 1, 4096, ARTICLE["tg_heads"], key="tg_heads",
           help=_("query heads; head dim = d / heads"))
    ui.url(c[3].number_input, _("KV heads (0 = same)"), 0, 4096, ARTICLE["tg_kv"], key="tg_kv",
           help=_("grouped-query attention: fewer K/V heads shrink `k_proj` and `v_proj`"))
    ui.url(c[4].number_input, _("FFN width"), 1, MAX_FFN, ARTICLE["tg_ffn"], key="tg_ffn",
           help=_("MLP inner width; the article uses 4·d"))
    t = st.columns(2) + [st.container()]  # the toggles' words and the button's whole at 1280 px, in Chinese too
    ui.url(t[0].toggle, _("gated MLP (SwiGLU: gate, up, down)"), ARTICLE["tg_gated"], key="tg_gated")
    ui.url(t[1].toggle, _("causal counting (lower triangle)"), ARTICLE["tg_causal"], key="tg_causal",
           help=_("count only the scores a causal mask keeps: s·(s+1)/2 per head instead of s²"))
    t[2].button(_("Article defaults (s 1024, d 4096, plain 4·d FFN)"), on_click=_article_defaults)

ss = st.session_state


COUNTING = {"dense": N_("dense (eager)"), "causal": N_("causal")}  # the two curves, as shown


@st.cache_data(max_entries=64, show_spinner=False)
def _curve(d: int, heads: int, kv: int, ffn: int, gated: bool, code: str):
    """Attention share over sequence lengths (does not depend on the chosen seq_len); curves named in ``code``."""
    gettext = ui.gettext_for(code)
    cfg = layer_model(1, d, heads, ffn, gated, kv_heads=kv)
    dense_x = attention_crossover(cfg)
    top = max(MAX_SEQ, dense_x * 16)
    seqs = [int(round(16 * 2 ** (i / 3))) for i in range(200) if 16 * 2 ** (i / 3) <= top]
    dense, causal = gettext(COUNTING["dense"]), gettext(COUNTING["causal"])
    curve = [{"seq_len": s, "share": attention_share(cfg, s, False), "counting": dense} for s in seqs]
    curve += [{"seq_len": s, "share": attention_share(cfg, s, True), "counting": causal} for s in seqs]
    return curve, dense_x, attention_crossover(cfg, causal=True)


@st.cache_data(max_entries=64, show_spinner=False)
def _layer(seq: int, d: int, heads: int, kv: int, ffn: int, gated: bool, causal: bool, code: str):
    gettext = ui.gettext_for(code)
    cfg = layer_model(seq, d, heads, ffn, gated, kv_heads=kv)
    ops = layer_ops(cfg, seq, causal=causal)
    curve, dense_x, causal_x = _curve(d, heads, kv, ffn, gated, code)
    claim = [{"seq_len": seq, "share": attention_share(cfg, seq, False), "counting": gettext(COUNTING["dense"])}]
    share = share_spec(curve + claim, dense_x, claim_s=seq, causal_crossover=causal_x, gettext=gettext)
    share.pop("title", None)  # the subheader above it says it (a second, clipped copy showed in Chinese)
    return cfg, ops, dense_x, causal_x, gemm_shapes_spec(ops, gettext=gettext), share


layer = None
with ui.guard(_("the layer")):
    inputs = (ss.tg_seq, ss.tg_d, ss.tg_heads, ss.tg_kv, ss.tg_ffn, ss.tg_gated, ss.tg_causal)
    layer = _layer(*inputs, ui.lang())
    ss.tg_good = inputs
if layer is None and "tg_good" in ss:
    layer = _layer(*ss.tg_good, ui.lang())
    st.info(_("Showing the last layer that worked (s {seq:,}, d_model {d:,}, {heads} heads).").format(
        seq=ss.tg_good[0], d=ss.tg_good[1], heads=ss.tg_good[2]))
if layer is not None:
    cfg, ops, dense_x, causal_x, shapes, share_dict = layer
    seq_shown = ss.tg_good[0]
    total = sum(o.flops for o in ops)
    att = sum(o.flops for o in ops if o.name in ATTENTION_PRODUCTS)
    m = st.columns(2) + st.columns(2)  # two by two: whole labels and values in a narrow (zoomed) window
    m[0].metric(_("FLOPs in one layer"), fmt.si(total, "FLOP"), help=_("exactly {n}").format(n=fmt.count(total)))
    m[1].metric(_("attention products (Q·Kᵀ, weights·V)"), f"{att / total:.1%}")
    m[2].metric(_("crossover (dense)"), f"s = {dense_x:,.0f}",
                help=_("sequence length where the products equal the rest"))
    m[3].metric(_("head dim"), cfg.head_dim)

    # name, share and FLOPs first, at the widths their texts need; the shape as M, N, K (A is M×K, B is K×N: K once)
    # and the runs a plain count (the caption says why the attention products run once per head): at 1280 px and
    # 125 % zoom the table fits its 562-px column (it was 708 px, "A (M×K)" cut, "B (K×N)" off its right edge)
    rows = [{"GEMM": o.name, "share": o.flops / total, "FLOPs": o.flops, "runs": o.count, "M": o.m, "N": o.n,
             "K": o.k} for o in ops]
    runs = _("runs")
    ui.table(rows, {c: "count" for c in ("FLOPs", "runs", "M", "N", "K")}, width="stretch",  # exact: every digit
             widths={c: text_width([fmt.count(r[c]) if c != "GEMM" else r[c] for r in rows],
                                   runs if c == "runs" else c) for c in ("GEMM", "FLOPs", "runs", "M", "N", "K")}
             | {"share": 88},
             column_config={"GEMM": st.column_config.TextColumn("GEMM", pinned=True), "runs": runs,
                            "share": st.column_config.ProgressColumn(_("share"), format="percent", min_value=0,
                                                                     max_value=1)})
    st.caption(_("Each GEMM multiplies A (M×K) by B (K×N) into D (M×N); **runs**: how often it runs in the layer "
                 "for one sequence (the attention products once per head)."))
    st.vega_lite_chart(shapes, width="content")
    st.caption(_("Units are matrix elements, the same for every row: a wide rectangle is a wide matrix. "
                 "The attention products are drawn for one sequence and one head (they run once per head)."))

    st.subheader(_("When do the attention products dominate?"))
    st.vega_lite_chart(share_dict, width="stretch")
    st.markdown(_(
        "Per layer and sequence, the weight GEMMs cost **`s · W`** with `W = 2·(d·(2·d_q + 2·d_kv) + mats·d·FFN)`\n"
        "= {weights} / {seq:,} tokens here, while the two products cost\n"
        "**`4 · s² · heads · d_h`** (dense) — the products grow with s², the rest with s. They are equal at\n"
        "**`s = W / (4 · heads · d_h)` = {dense:,.0f}** tokens (causal counting: `s = W / (2 · heads · d_h) − 1` =\n"
        "{causal:,.0f}). With `heads · d_h = d` and the plain 4·d FFN this is `W = 24·d²`, so **s = 6·d**."
    ).format(weights=fmt.si(total - att, "FLOP"), seq=seq_shown, dense=dense_x, causal=causal_x))

# The article's claim, always with its own numbers (independent of the inputs above).
art = layer_model(1024, 4096, 32, 4 * 4096, gated=False)
art_share = attention_share(art, 1024)
art_x = attention_crossover(art)
st.info(_(
    "**The article says** the `seq²·d` attention terms dominate when `seq ≈ d`. **They do not.** At s = 1024 and\n"
    "d = 4096 (plain 4·d FFN) the attention products are **{share:.1%}** of a layer's FLOPs:\n"
    "4·s²·d = {attention} against 24·s·d² = {rest}\n"
    "for the projections and the FFN. They reach half only at **s = 6·d = {crossover:,.0f}** tokens, and at s = d\n"
    "they are 4/(4+24) = {at_d:.1%}. The article's estimate `Params·seq²/(3·d_model)` inherits\n"
    "the error (see the LLM Estimator's rules of thumb)."
).format(share=art_share, attention=fmt.si(4 * 1024**2 * 4096, "FLOP"), rest=fmt.si(24 * 1024 * 4096**2, "FLOP"),
         crossover=art_x, at_d=attention_share(art, 4096)), icon=":material/search:")
