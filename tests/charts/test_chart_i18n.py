"""Chart builders take the page's gettext: titles, axes, legends and tooltips come translated,
the data does not change, and without a gettext (the CLI's report) they stay English."""

import gemm_i18n

from gemmlib.charts.batching import model_chart

ROWS = [{"batch": b, "mode": m, "intensity": float(b if m == "stacked" else 1)}
        for b in (1, 8, 64) for m in ("loop", "stacked", "bmm")]


def _texts(spec) -> list[str]:
    """Every title (chart, axes, legends, tooltips) in a Vega-Lite spec."""
    out = []

    def walk(x):
        if isinstance(x, dict):
            for k, v in x.items():
                if k == "title" and isinstance(v, str):
                    out.append(v)
                elif k == "title" and isinstance(v, dict) and isinstance(v.get("text"), str):
                    out.append(v["text"])
                else:
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(spec)
    return out


def test_batching_chart_in_english_by_default():
    texts = _texts(model_chart(ROWS, ridge=295.0).to_dict())
    assert "Arithmetic intensity by batch (dashed: ridge point)" in texts
    assert {"batch size B", "FLOP per byte", "mode"} <= set(texts)


def test_batching_chart_in_chinese():
    cat = gemm_i18n.read("zh")
    zh = {m.id: m.string for m in cat if isinstance(m.id, str) and m.id}
    spec = model_chart(ROWS, ridge=295.0, gettext=lambda s: zh.get(s, s)).to_dict()
    texts = set(_texts(spec))
    for msgid in ("Arithmetic intensity by batch (dashed: ridge point)", "batch size B", "FLOP per byte", "mode"):
        assert zh[msgid] in texts and msgid not in texts
    english = [w for t in texts for w in gemm_i18n.english_words(t)]
    assert not english, english
    values = spec["datasets"][next(iter(spec["datasets"]))]
    assert {r["mode"] for r in values if "mode" in r} == {"loop", "stacked", "bmm"}  # data unchanged
