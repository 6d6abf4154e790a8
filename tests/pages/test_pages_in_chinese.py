"""The translated pages in Chinese (``?lang=zh``) through AppTest: no English left, the numbers and
the data unchanged, bad input explained in Chinese, and the step-through's own texts translated.

"No English" is ``gemm_i18n.english_words`` over every text a reader can see or hover
(``i18n_texts.shown_texts``): formulas, code, numbers, units and names (this machine's devices, the
GPU catalogue, the layer's module names such as ``q_proj``) are allowed. The same check finds the
English of the default pages (the last test), so it is not vacuous. The browser runs the same pages
in Chromium (tests/browser/test_browser_i18n.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import gemm_i18n
import pytest
from i18n_texts import shown_texts
from streamlit.testing.v1 import AppTest

from gemmlib.core import ceilings

ROOT = Path(__file__).resolve().parents[2]
ZH = {m.id if isinstance(m.id, str) else m.id[0]: m.string if isinstance(m.string, str) else m.string[0]
      for m in gemm_i18n.read("zh") if m.id}  # read from the .po, not through the app's own lookup
PAGES = {"acc": "pages/1_Accumulate.py", "fl": "pages/2_FLOPs.py", "tg": "pages/3_Transformer_GEMMs.py",
         "dv": "pages/5_Devices.py"}


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("GEMM_CACHE_DIR", str(tmp_path / "cache"))  # no ceilings measured by other tests
    ceilings.clear_ceilings()
    yield
    ceilings.clear_ceilings()


def _names() -> list[str]:
    from gemmlib.core.hardware import CATALOGUE
    from gemmlib.core.machine import light_summary
    from gemmlib.llm.accounting import OP_NAMES

    return [d["name"] for d in light_summary()] + list(CATALOGUE) + list(OP_NAMES)


def _app(page: str, lang: str | None = "zh", **query) -> AppTest:
    at = AppTest.from_file(str(ROOT / PAGES[page]), default_timeout=60)
    at.query_params.update({**({"lang": lang} if lang else {}), **{k: str(v) for k, v in query.items()}})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _stepper(at: AppTest) -> dict:
    comp = [e for e in at.main if getattr(e, "type", "") == "bidi_component"]
    assert len(comp) == 1
    return json.loads(comp[0].proto.json)


def _stepper_texts(at: AppTest) -> list[str]:
    """What the browser-side step-through draws: every frame's line and every label, filled in."""
    d = _stepper(at)
    labels = [re.sub(r"\{\w+\}", "1", v) for v in d["labels"].values()]
    return [f["text"] for f in d["frames"]] + labels


def _english_left(texts: list[str]) -> dict[str, str]:
    left: dict[str, str] = {}
    names = _names()
    for t in texts:
        for w in gemm_i18n.english_words(t, names):
            left.setdefault(w, t[:120])
    return left


# Each page in its default state and in the states that show other texts (other loop orders, C,
# presentation mode, the CPU row's editor, the time metric, a gated GQA layer).
CASES = [
    ("acc", {}, None),
    ("acc", {"acc_order": "outer"}, None),
    ("acc", {"acc_order": "tiled", "acc_beta": "2", "acc_src": "random", "acc_dist": "normal"}, None),
    ("acc", {"acc_present": "true", "acc_src": "custom"}, None),
    ("fl", {}, None),
    ("fl", {"fl_metric": "time µs", "fl_gpu": "CPU (edit me)", "fl_dtype": "fp32"}, None),
    ("fl", {"fl_wn0": "1", "fl_wn1": "1048576"}, None),  # the sampled staircase
    ("tg", {}, None),
    ("tg", {"tg_gated": "true", "tg_kv": "8", "tg_causal": "true"}, None),
    ("dv", {}, None),
]


@pytest.mark.parametrize("page, query, _unused", CASES, ids=[f"{p}-{'-'.join(q) or 'default'}" for p, q, _ in CASES])
def test_the_page_in_chinese_has_no_english_left(page, query, _unused):
    at = _app(page, **query)
    assert not at.error, [e.value for e in at.error]
    texts = shown_texts(at)
    assert len(texts) > 25
    if page == "acc":
        texts += _stepper_texts(at)
    left = _english_left(texts)
    assert not left, f"English left on the Chinese {PAGES[page]} ({query}): {left}"


def test_the_english_pages_are_checked_the_same_way():
    """Not vacuous: the same check finds the English of each default page, and of the stepper."""
    for page, words in (("acc", {"product", "loop", "accumulator"}), ("fl", {"staircase", "wave", "quantization"}),
                        ("tg", {"attention", "layer"}), ("dv", {"datasheet", "ceilings"})):
        at = _app(page, lang=None)
        texts = shown_texts(at) + (_stepper_texts(at) if page == "acc" else [])
        assert words <= {w.lower() for w in _english_left(texts)}, page
    assert {"Step", "of"} <= set(_english_left(_stepper_texts(_app("acc", lang=None))))


def test_titles_and_numbers_in_chinese():
    """The title is the catalogue's; the figures and the data behind tables and the stepper are the
    English page's (only the words change)."""
    for page, title in (("acc", "Accumulate"), ("fl", "FLOPs"), ("tg", "Transformer GEMMs"), ("dv", "Devices")):
        assert _app(page).title[0].value.endswith(ZH[title]), page
    en, zh = _app("acc", lang=None), _app("acc")
    assert _same_numbers(en, zh)
    assert [m.value for m in en.metric] == [m.value for m in zh.metric]
    s_en, s_zh = _stepper(en), _stepper(zh)
    assert s_en["traceId"] == s_zh["traceId"]  # the same trace: a link's step means the same step
    assert [f["dv"] for f in s_en["frames"]] == [f["dv"] for f in s_zh["frames"]]
    assert s_zh["frames"][0]["text"] == s_en["frames"][0]["text"] == "D[0,0] = 1×7 = 7  …"  # no words
    epilogue = ZH["epilogue: α = 1 and β = 0, so D = A·B as accumulated and nothing is left to do (an LLM "
                  "layer's case; a kernel skips this step). D[{i},{j}] = {value}"]
    assert s_zh["frames"][-1]["text"] == epilogue.format(i=0, j=0, value=58)
    assert s_zh["labels"]["step"] == ZH["Step {n} of {total}"]
    tg_en, tg_zh = _app("tg", lang=None), _app("tg")
    assert tg_en.dataframe[0].value["FLOPs"].tolist() == tg_zh.dataframe[0].value["FLOPs"].tolist()
    assert list(tg_zh.dataframe[0].value["GEMM"]) == list(tg_en.dataframe[0].value["GEMM"])  # module names kept
    assert tg_zh.dataframe[0].value["runs"].tolist() == tg_en.dataframe[0].value["runs"].tolist()  # counts
    assert {m.value for m in tg_en.metric} == {m.value for m in tg_zh.metric}


def _same_numbers(en: AppTest, zh: AppTest) -> bool:
    """Tables whose text cells are translated: their numeric columns agree."""
    for a, b in zip(en.dataframe, zh.dataframe, strict=True):
        num_a = a.value.select_dtypes("number").values.tolist()
        num_b = b.value.select_dtypes("number").values.tolist()
        if num_a != num_b:
            return False
    return True


def test_option_widgets_keep_their_ids_and_links_in_either_language():
    """Options are stable ids shown by their translated labels: the session state and the URL's
    meaning do not depend on the language, and a link copied from the other language still opens."""
    at = _app("acc", acc_order="tiled")
    assert at.session_state.acc_order == "tiled"
    assert at.radio(key="acc_order").options == [ZH[t] for t in ("inner product (i, j, k)",
                                                                 "outer product (k outermost)",
                                                                 "tiled (blocks of D, k in tiles)")]
    at.radio(key="acc_order").set_value("outer").run()
    assert not at.exception and at.session_state.acc_order == "outer"
    zh_link = _app("fl", lang=None, fl_metric=ZH["time µs"])  # a Chinese label in an English page's link
    assert zh_link.session_state.fl_metric == "time µs"
    en_link = _app("fl", fl_gpu="CPU (edit me)")
    assert en_link.session_state.fl_gpu == "CPU (edit me)"
    assert any(ZH["Edit the {name} row (your CPU's figures)"].format(name=ZH["CPU (edit me)"]) == e.proto.label
               for e in en_link.expander)


def test_bad_input_is_explained_in_chinese_and_the_last_good_state_kept():
    at = _app("acc", acc_src="custom")
    at.text_area(key="acc_text_a").input("1 x\n3 4").run()
    want = ZH["**Check the input:** {message}"].format(
        message=ZH["{where}: {value!r} is not a number"].format(
            where=ZH["{name} row {row}, column {col}"].format(name="A", row=1, col=2), value="x"))
    assert [e.value for e in at.error] == [want]
    assert any(i.value.startswith(ZH["Showing the last matrices that worked ({m}×{k} times {k}×{n})."][:6])
               for i in at.info)
    fl = _app("fl")
    fl.number_input(key="fl_m0").set_value(5)
    fl.number_input(key="fl_m1").set_value(4).run()
    assert [e.value for e in fl.error] == [ZH["**Check the input:** {message}"].format(
        message=ZH["{name}: the range ends ({stop}) before it starts ({start})"].format(name="M", stop=4, start=5))]
    assert any(i.value == ZH["Showing the last ranges that worked."] for i in fl.info)


def test_switching_the_language_keeps_the_pages_state():
    """The widgets are keyed: a switch mid-lesson keeps the loop order, the step and the inputs."""
    at = AppTest.from_file(str(ROOT / PAGES["acc"]), default_timeout=60).run()
    at.radio(key="acc_order").set_value("outer").run()
    at.session_state["acc_stepper"] = {"step": {"id": _stepper(at)["traceId"], "step": 2}}
    at.run()
    assert at.session_state.acc_pos == 2
    at.radio(key="lang").set_value("zh").run()
    assert not at.exception and at.title[0].value.endswith(ZH["Accumulate"])
    assert at.session_state.acc_order == "outer" and at.session_state.acc_pos == 2
    assert _stepper(at)["frames"][2]["text"].startswith("k = 2：")
