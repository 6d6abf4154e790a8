"""The LLM Estimator page in Chinese through AppTest: every view the page has (scale-out, training,
serving, A vs B, uploads, the custom shape), its widgets changed on a Chinese page, and its messages
for bad input. No English is left outside code, formulas, numbers, units and names (the catalogue's
GPUs, this machine's devices, the presets, an uploaded file's model), in the texts nor in the charts'
titles, axes and legends; a message reads as the catalogue's translation of gemmlib's template."""

from __future__ import annotations

import json
import re
from pathlib import Path

import gemm_i18n
import pytest
from i18n_texts import _walk, shown_texts
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "4_LLM_Estimator.py")
DATA = ROOT / "tests" / "data"
CONFIGS = DATA / "configs"
CJK = re.compile(r"[\u4e00-\u9fff]")


def _zh(msgid: str) -> str:
    return gemm_i18n.read("zh")[msgid].string


def _names() -> list[str]:
    from gemmlib.core.hardware import CATALOGUE
    from gemmlib.core.machine import light_summary
    from gemmlib.llm.presets import PRESETS

    return [d["name"] for d in light_summary()] + list(CATALOGUE) + list(PRESETS)


def _app(lang: str | None = "zh", upload: bytes | None = None, name: str = "config.json", **query) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    if lang:
        at.query_params["lang"] = lang
    for k, v in query.items():
        at.query_params[k] = str(v)
    at.run()
    if upload is not None:
        at.file_uploader(key="le_upload").set_value((name, upload, "application/json")).run()
    return at


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def chart_texts(at: AppTest) -> list[str]:
    """Every title of the page's Vega-Lite charts: the chart's, its axes', legends' and tooltips'."""
    out: list[str] = []

    def walk(x):
        if isinstance(x, dict):
            for k, v in x.items():
                if k == "title" and isinstance(v, str):
                    out.append(v)
                elif k == "title" and isinstance(v, dict) and isinstance(v.get("text"), (str, list)):
                    out.extend([v["text"]] if isinstance(v["text"], str) else map(str, v["text"]))
                else:
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    for node in _walk(at._tree):
        spec = getattr(getattr(node, "proto", None), "spec", None)
        if isinstance(spec, str) and spec:
            walk(json.loads(spec))
    return out


# The interconnect catalogue's link names and sources (gemmlib/core/interconnect.py: translated with the
# Multi-GPU page, not with this one), shown as they are in the scale-out tables' "link" and "source" columns.
NOT_THIS_PAGE = {"link", "source"}


def table_cells(at: AppTest) -> list[str]:
    """Every text cell of the page's tables, whatever the column's dtype (pandas' str columns too)."""
    out = []
    for frame in [d.value for d in at.dataframe] + [t.value for t in at.table]:
        for col in frame.columns:
            if col not in NOT_THIS_PAGE:
                out.extend(x for x in frame[col] if isinstance(x, str))
        out.extend(str(i) for i in frame.index if isinstance(i, str))
    return out


def _english_left(at: AppTest, names: list[str] = ()) -> dict[str, list[str]]:
    """The texts (shown, table cells, the charts' titles) with English words left: text -> its English words."""
    allowed = [*_names(), *names]
    out = {}
    for t in shown_texts(at) + table_cells(at) + chart_texts(at):
        words = gemm_i18n.english_words(t, allowed)
        if words:
            out[t[:200]] = words
    return out


VIEWS = {
    "default": {},
    "scale-out on 8 GPUs": dict(le_preset="llama-3-70b", le_batch=16, le_seq=2048, le_new=16, le_gpus=8),
    "training and serving": dict(le_preset="llama-3-8b", le_batch=32, le_seq=1024, le_new=64, le_gpus=8,
                                 le_train="true", le_tokens="1e10", le_rc="selective", le_zero=1, le_serve="true",
                                 le_tpot=20),
    "pipeline stages": dict(le_preset="llama-3-70b", le_gpus=16, le_tp=8, le_pp=2, le_seq=512, le_new=4,
                            le_train="true", le_serve="true"),
    "A vs B in MACs": dict(le_cmp="true", le_b_preset="mistral-7b", le_b_gpus=1, le_macs="true"),
    "custom shape": dict(le_src="custom", le_layers=26, le_hidden=1152, le_heads=4, le_kv=1, le_hd=256,
                         le_ffn=6912, le_vocab=262144, le_tied="true", le_sw=512, le_swp="5:1", le_qkn="head",
                         le_npl=4),
    "custom MoE with MLA": dict(le_src="custom", le_layers=61, le_hidden=7168, le_heads=128, le_kv=128, le_hd=192,
                                le_vhd=128, le_ffn=18432, le_vocab=129280, le_experts=256, le_topk=8, le_effn=2048,
                                le_sffn=2048, le_dense=3, le_mla_kv=512, le_mla_q=1536, le_mla_rope=64),
    "decode only": dict(le_preset="llama-3.1-8b", le_seq=32768, le_ctx="true", le_new=1),
    "int4, the reference convention overridden, a flat efficiency": dict(
        le_preset="mistral-7b", le_wdt="int4", le_conv="transformers", le_attn="fused", le_causal="causal",
        le_lmh="last", le_flat="true"),
    "the GPUs follow the parallel sizes": dict(le_preset="llama-3-70b", le_gpus=8, le_tp=4, le_pp=4),
}


# The tabs the page draws only while open (pages/4_LLM_Estimator.py): each is read by opening it, as a link does.
LAZY_TABS = ("Memory", "Roofline", "Scale-out", "Switches & rules of thumb")


def _every_tab(lang: str | None = "zh", **query) -> list[AppTest]:
    """The page as ``query`` opens it, then with each tab drawn only while open opened (``?le_tab=``)."""
    pages = [_app(lang=lang, **query)] + [_app(lang=lang, **query, le_tab=t) for t in LAZY_TABS]
    for at in pages:
        _ok(at)
    return pages


@pytest.mark.parametrize("query", VIEWS.values(), ids=VIEWS.keys())
def test_every_view_in_chinese_has_no_english_left(query):
    pages = _every_tab(**query)
    at = pages[0]
    assert len(shown_texts(at)) > 100 and len(chart_texts(at)) >= 5
    assert sum(len(chart_texts(p)) for p in pages) >= 20
    left = {k: v for p in pages for k, v in _english_left(p).items()}
    assert not left, f"English left on the Chinese estimator: {left}"
    assert [t.label for t in at.tabs] == [_zh(t) for t in ("FLOPs by op", "Memory", "Roofline", "Scale-out",
                                                            "Training", "Serving", "Switches & rules of thumb",
                                                            "A vs B", "Download")]


@pytest.mark.parametrize("path", [CONFIGS / "gpt-oss-20b.json", CONFIGS / "deepseek-v2-lite.json",
                                  DATA / "config_mixtral-8x7b.json"], ids=lambda p: p.stem)
def test_an_uploaded_config_in_chinese(path):
    at = _app(le_src="config.json", upload=path.read_bytes(), name="upload-1.json")  # the model: "upload-1"
    _ok(at)
    assert any(s.value.startswith(_zh("Read {file}: {params:,} parameters ({family})").split("{")[0])
               for s in at.success)
    left = _english_left(at)
    assert not left, f"English left after uploading {path.name}: {left}"


def test_the_english_page_is_checked_the_same_way():
    """Not vacuous: the same check finds the English of the default page, in its texts and its charts."""
    pages = _every_tab(lang=None, **VIEWS["scale-out on 8 GPUs"])
    assert {"prefill", "decode", "weights"} <= {w for p in pages for words in _english_left(p).values() for w in words}
    cells = {w for p in pages for t in table_cells(p) for w in gemm_i18n.english_words(t)}
    assert {"hidden", "state", "fudge"} <= cells  # the ops' notes, the rules' reasons: table cells are read too
    assert {"phase", "op"} <= {w for p in pages for t in chart_texts(p) for w in gemm_i18n.english_words(t)}


def test_widgets_change_on_a_chinese_page():
    """Option widgets show translated labels of stable ids: changing them on a Chinese page (the reruns send
    every widget's state back through its format_func) works and keeps the page in Chinese."""
    at = _app(le_src="config.json", upload=(CONFIGS / "deepseek-v2-lite.json").read_bytes(), name="upload-1.json")
    _ok(at)
    decode = _zh("decode {unit}s").format(unit="FLOP")
    absorbed = {m.label: m.value for m in at.metric}[decode]
    at.radio(key="le_mla").set_value("eager").run()  # the engine convention absorbs; eager is the reference
    _ok(at)
    assert {m.label: m.value for m in at.metric}[decode] != absorbed
    at.radio(key="le_attn").set_value("eager").run()
    at.selectbox(key="le_wdt").set_value("int8").run()
    at.selectbox(key="le_gpu").set_value("H200 SXM").run()
    at.toggle(key="le_macs").set_value(True).run()
    at.radio(key="le_src").set_value("custom").run()
    at.radio(key="le_mlp").set_value("plain").run()
    at.selectbox(key="le_qkn").set_value("width").run()
    at.selectbox(key="le_rc").set_value("full").run()
    _ok(at)
    assert _zh("prefill {unit}s").format(unit="MAC") in {m.label for m in at.metric}
    assert at.radio(key="le_src").value == "custom" and at.selectbox(key="le_qkn").value == "width"
    assert not _english_left(at)


def _error(at: AppTest) -> str:
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.error) == 1, [e.value for e in at.error]
    return at.error[0].value


def _check(template: str, **values) -> str:
    """What ui.guard shows for gemmlib's InputError(template, **values) on a Chinese page."""
    import ui

    message = _zh(template).format(**values) if values else _zh(template)  # no values: braces as written
    return _zh("**Check the input:** {message}").format(message=ui.md(message))  # escaped, as ui.guard shows it


def test_a_bad_config_json_says_so_in_chinese():
    at = _app(le_src="config.json", upload=b"{ not json")
    assert _error(at) == _check("{file} is not valid JSON: {msg} at line {lineno}, column {colno}; correct the text there "
                                "(keys and texts in double quotes, no comments, no comma before a closing bracket) "
                                "and load it again", file="config.json",
                                msg=_zh("Expecting property name enclosed in double quotes"), lineno=1, colno=3)
    for content, template, values in (
            (b"", "{file} is empty", {"file": "config.json"}),
            (b"\xff\xfe{}", "{file} is not UTF-8 text", {"file": "config.json"}),
            (b"[1, 2]", "config.json must hold a JSON object ({...}) at the top level", {}),
            (json.dumps({"model_type": "llama"}).encode(), "config.json has no {key!r} field",
             {"key": "num_attention_heads"}),
            (b"{}" + b" " * 1_100_000, "{name} is {size:,} bytes; a config.json is a few kB (limit {limit:,})",
             {"name": "config.json", "size": 1_100_002, "limit": 1_000_000})):  # the page checks before reading
        at.file_uploader(key="le_upload").set_value(("config.json", content, "application/json")).run()
        shown = _error(at)
        assert shown == _check(template, **values), shown
        assert CJK.search(shown) and not gemm_i18n.english_words(shown), shown
    unsupported = json.dumps({"model_type": "bert"}).encode()
    at.file_uploader(key="le_upload").set_value(("config.json", unsupported, "application/json")).run()
    why = _zh("an encoder (bidirectional, no decoding): this estimator sizes decoder-only LLMs")
    assert _error(at) == _check("model_type {mtype!r} is not supported: transformers 5.24 knows it, but it is not "
                                "sized here ({why})", mtype="bert", why=why)


@pytest.mark.parametrize("query, template, values", [
    (dict(le_src="custom", le_kv=3),
     "{heads} query heads cannot be shared evenly by {kv_heads} KV heads (query heads must be a multiple of KV heads)",
     dict(heads=32, kv_heads=3)),
    (dict(le_src="custom", le_experts=8), "experts per token must be between 1 and {experts}, got {experts_per_token}",
     dict(experts=8, experts_per_token=0)),
    (dict(le_adt="fp8", le_gpu="A100 SXM 80GB"), "{gpu} has no {dtype} GEMM path in its datasheet; choose another "
     "dtype or GPU", dict(gpu="A100 SXM 80GB", dtype="fp8")),
    (dict(le_preset="llama-3-8b", le_tp=3, le_gpus=3), "TP {t} does not divide the {heads} attention heads; pick a TP size "
     "that does", dict(t=3, heads=32)),
    (dict(le_preset="llama-3-8b", le_batch=6, le_gpus=8, le_tp=2, le_dp=4, le_train="true"),
     "the global batch of {batch} sequences does not split into DP {dp} × micro-batch {b}; make the batch a "
     "multiple of {multiple}", dict(batch=6, dp=4, b=1, multiple=4)),
    (dict(le_preset="gpt2", le_seq=4096), "{name} has a learned position table of {learned_positions:,} positions; "
     "{final_tokens:,} tokens per sequence (prompt + new tokens) do not fit",
     dict(name="gpt2", learned_positions=1024, final_tokens=4352)),
    (dict(le_preset="llama-3-8b", le_new=0, le_serve="true", le_tab="Serving"),  # (simulated only when open)
     "serving needs generated tokens: set new tokens to 1 or more", {}),
    (dict(le_preset="llama-3-8b", le_ctx="true", le_train="true"),
     "a training step runs whole sequences: a decode-only workload (--context) cannot train", {}),
], ids=["kv-heads", "experts", "fp8-on-a100", "tp-heads", "dp-batch", "positions", "serving", "train"])
def test_bad_input_says_so_in_chinese(query, template, values):
    shown = _error(_app(**query))
    assert shown == _check(template, **values), shown
    assert CJK.search(shown) and not gemm_i18n.english_words(shown, _names()), shown


def test_the_same_input_errors_stay_english_on_an_english_page():
    shown = _error(_app(lang=None, le_preset="llama-3-8b", le_tp=3, le_gpus=3))
    assert shown == r"**Check the input:** TP 3 does not divide the 32 attention heads; pick a TP size that does"
    # the GPUs alone tensor parallel: the refusal names the GPUs the reader set, not a TP they never set
    shown = _error(_app(lang=None, le_preset="llama-3-8b", le_gpus=3))
    assert shown == (r"**Check the input:** The 3 GPUs are tensor parallel (every parallel size is 1)\: TP 3 does "
                     "not divide the 32 attention heads; pick a TP size that does. Pick another GPU count, or set TP, "
                     "PP and DP under Parallelism.")
    zh = _error(_app(le_preset="llama-3-8b", le_gpus=3))
    assert zh.startswith("**请检查输入：** 这 3 块 GPU 按张量并行切分") and "TP 3 不能整除 32 个注意力头" in zh, zh
