"""The LLM Estimator's charts (gemmlib.charts.model, gemmlib.charts.scaleout) in Chinese: every title,
axis, legend and tooltip title translated, the ops named by a word (embedding, norms, router …) shown
by their labels while the data keeps the names, and in English (the CLI's report) the specs as before."""

import gemm_i18n
import pytest

from gemmlib.charts.model import WORD_OPS, compare_spec, flops_by_op_spec, memory_spec, roofline_spec
from gemmlib.charts.scaleout import comm_by_op_chart, comm_by_op_spec, per_gpu_memory_spec
from gemmlib.core.hardware import get_hardware
from gemmlib.llm.accounting import Workload
from gemmlib.llm.parallel import Parallel
from gemmlib.llm.presets import from_name
from gemmlib.llm.scaleout import estimate

ZH = {m.id: m.string for m in gemm_i18n.read("zh") if isinstance(m.id, str) and m.id}


def zh(s: str) -> str:
    return ZH.get(s, s)


@pytest.fixture(scope="module")
def moe():
    """A mixture of experts on 8 GPUs: a router GEMM, word-named ops, communication per op."""
    return estimate(from_name("mixtral-8x7b"), Workload(batch=2, seq_len=256, new_tokens=4), get_hardware("h100"),
                    Parallel(tp=8))


def _walk(x, key):
    if isinstance(x, dict):
        for k, v in x.items():
            if k == key:
                yield v
            yield from _walk(v, key)
    elif isinstance(x, list):
        for v in x:
            yield from _walk(v, key)


def _titles(spec) -> list[str]:
    return [t if isinstance(t, str) else t.get("text") for t in _walk(spec, "title")
            if isinstance(t, str) or isinstance(t, dict) and isinstance(t.get("text"), str)]


def _specs(est, gettext):
    return {"flops": flops_by_op_spec(est, gettext=gettext), "memory": memory_spec(est, gettext=gettext),
            "roofline": roofline_spec(est, gettext=gettext), "compare": compare_spec(est, est, gettext=gettext),
            "comm": comm_by_op_spec(est, gettext=gettext),
            "per_gpu": per_gpu_memory_spec(est.per_gpu, est.hardware.name, gettext=gettext)}


def test_every_title_in_chinese(moe):
    for name, spec in _specs(moe, zh).items():
        texts = _titles(spec)
        assert texts, name
        english = [w for t in texts for w in gemm_i18n.english_words(t, [moe.hardware.name, moe.model.name])]
        assert not english, (name, english)


def test_word_named_ops_show_their_labels_and_the_data_keeps_the_names(moe):
    specs = _specs(moe, zh)
    for name in ("flops", "roofline", "compare", "comm"):
        exprs = [e for e in _walk(specs[name], "labelExpr")] + [e for e in _walk(specs[name], "calculate")
                                                               if "op_shown" in str(e) or "datum.op ===" in str(e)]
        assert any('"router"' in e and zh("router") in e for e in exprs), (name, exprs)
    rows = specs["comm"]["datasets"]
    ops = {r["op"] for data in rows.values() for r in data if "op" in r}
    assert {"norms", "embedding"} <= ops  # the names, as the JSON and the CLI have them
    assert all(zh(v) != k for k, v in WORD_OPS.items())  # every word-named op has its own Chinese label


def test_in_english_no_label_expressions(moe):
    """The report and the CLI see the specs as before: no label expression, the op's name in the tooltip."""
    for name, spec in _specs(moe, lambda s: s).items():
        assert not list(_walk(spec, "labelExpr")), name
        assert all("op_shown" not in str(t) for t in _walk(spec, "tooltip")), name


def test_the_chinese_charts_validate(moe):
    """Altair's schema validation of the chart objects (the specs above skip it for speed)."""
    comm_by_op_chart(moe, gettext=zh).to_dict()
    from gemmlib.charts.model import compare_chart, flops_by_op_chart, roofline_chart

    flops_by_op_chart(moe, gettext=zh).to_dict()
    roofline_chart(moe, gettext=zh).to_dict()
    compare_chart(moe, moe, gettext=zh).to_dict()
