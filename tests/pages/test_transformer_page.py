"""The Transformer GEMMs page through AppTest: numbers, the article's claim, extremes, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gemmlib.llm.accounting import attention_crossover, attention_share, layer_model, layer_ops

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "3_Transformer_GEMMs.py")


def _app(**query) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = str(v)
    return at.run()


def _metrics(at):
    return {m.label: m.value for m in at.metric}


def test_default_is_the_article_case_and_refutes_its_claim():
    at = _app()
    assert not at.exception and not at.error
    m = _metrics(at)
    assert m["attention products (Q·Kᵀ, weights·V)"] == "4.0%"
    assert m["crossover (dense)"] == "s = 24,576"
    claim = at.info[0].value
    assert "4.0%" in claim and "24,576" in claim and "do not" in claim
    table = at.dataframe[0].value
    assert list(table["GEMM"]) == ["q_proj", "k_proj", "v_proj", "attn_scores", "attn_values", "o_proj",
                                   "up_proj", "down_proj"]
    ops = layer_ops(layer_model(1024, 4096, 32, 16384, False), 1024)
    assert list(table["FLOPs"]) == [o.flops for o in ops]


def test_gated_gqa_layer_from_a_deep_link():
    at = _app(tg_seq=4096, tg_d=4096, tg_heads=32, tg_kv=8, tg_ffn=14336, tg_gated="true")
    assert not at.exception and not at.error
    cfg = layer_model(4096, 4096, 32, 14336, True, kv_heads=8)
    m = _metrics(at)
    assert m["attention products (Q·Kᵀ, weights·V)"] == f"{attention_share(cfg, 4096):.1%}"
    assert m["crossover (dense)"] == f"s = {attention_crossover(cfg):,.0f}"
    assert "gate_proj" in list(at.dataframe[0].value["GEMM"])


def test_widgets_follow_and_write_the_url():
    at = _app()
    at.number_input(key="tg_seq").set_value(24576).run()
    assert not at.exception
    assert _metrics(at)["attention products (Q·Kᵀ, weights·V)"] == "50.0%"
    # bound to ?tg_seq=: the browser writes the URL (tests/browser/test_browser_urls.py checks it)
    assert at.number_input(key="tg_seq").proto.query_param_key == "tg_seq"
    at.toggle(key="tg_causal").set_value(True).run()
    assert not at.exception
    assert _metrics(at)["attention products (Q·Kᵀ, weights·V)"] == "33.3%"  # 2·s(s+1)·d vs 24·s·d²


@pytest.mark.parametrize("key, value", [("tg_seq", 1), ("tg_seq", 1 << 20), ("tg_d", 1), ("tg_d", 65536),
                                        ("tg_heads", 1), ("tg_ffn", 1), ("tg_ffn", 262144), ("tg_kv", 4096)])
def test_extremes_never_crash(key, value):
    at = _app()
    at.number_input(key=key).set_value(value).run()
    assert not at.exception, [e.value for e in at.exception]


def test_bad_heads_give_a_clear_message():
    at = _app()
    at.number_input(key="tg_heads").set_value(3).run()
    assert not at.exception
    assert any("not divisible" in e.value for e in at.error)
    at.number_input(key="tg_heads").set_value(32).run()
    at.number_input(key="tg_kv").set_value(5).run()
    assert any("multiple of KV heads" in e.value for e in at.error)
    assert at.info  # the article box still stands


def test_article_defaults_button_resets():
    at = _app(tg_seq=77, tg_gated="true")
    at.button[0].click().run()
    assert not at.exception
    assert at.number_input(key="tg_seq").value == 1024
    assert at.toggle(key="tg_gated").value is False


def test_heads_that_do_not_divide_d_model_point_to_the_fields_and_keep_the_last_layer():
    at = _app()
    before = at.dataframe[0].value["FLOPs"].tolist()
    at.number_input(key="tg_heads").set_value(7).run()
    assert not at.exception
    err = " ".join(e.value for e in at.error)
    assert "d_model 4,096 is not divisible by 7 heads" in err and "head dimension" in err
    assert "e.g. 2, 4, 8" in err  # divisors of 4096 nearest to 7: what exists on this page
    assert "explicitly" not in err  # no field for the head dimension here
    assert at.dataframe[0].value["FLOPs"].tolist() == before  # the last good layer is still shown
    assert any("last layer that worked" in i.value for i in at.info)
    assert _metrics(at)["head dim"] == "128"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_runs_column_is_wide_enough_for_its_header(lang):
    """The table's auto-sized "runs" column cut its text at 1280 px: the column is given room for its header and
    counts whole (about 7 px per Latin character and 14 px per Chinese one at the grid's 14-px font, plus 16 px of
    padding). The attention products run once per head (the caption says so), the rest once."""
    import json

    at = _app(lang=lang)
    df = at.dataframe[0].value
    assert {g: n for g, n in zip(df["GEMM"], df["runs"], strict=True) if n != 1} == {"attn_scores": 32,
                                                                                      "attn_values": 32}
    header = {"en": "runs", "zh": "执行次数"}[lang]
    need = 16 + sum(14 if ord(ch) > 0x2E80 else 7 for ch in header)
    width = json.loads(at.dataframe[0].proto.columns)["runs"].get("width")
    assert isinstance(width, int) and width >= need, (header, width, need)
