"""The home page renders, explains GEMM and links every page that exists, in English and in Chinese."""

from pathlib import Path

import gemm_i18n
import pytest
from i18n_texts import shown_texts
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def test_home_renders_without_exception():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30).run()
    assert not at.exception
    assert "GEMM" in at.title[0].value
    text = " ".join(m.value for m in at.markdown)
    assert "2\\,M N K" in text or "2·M·N·K" in text


def test_home_lists_the_catalogue_with_sources():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30).run()
    df = next(d.value for d in at.dataframe if "source" in d.value.columns)
    assert {"H100 SXM", "H200 SXM", "A100 SXM 80GB", "L40S", "RTX 4090"} <= set(df["name"])
    assert df["source"].str.startswith(("http", "(")).all()


def test_navigation_names_every_page_file_and_nothing_else():
    import ui

    listed = [p.path for p in ui.PAGES]
    on_disk = ["app.py", *(f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py"))]
    assert sorted(listed) == sorted(on_disk)
    assert len({p.label for p in ui.PAGES}) == len(ui.PAGES)
    assert len({p.icon for p in ui.PAGES}) == len(ui.PAGES)


def test_home_map_and_sidebar_link_every_page():
    import ui

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30).run()
    assert not at.exception
    # AppTest does not expose page links as elements: the map's descriptions stand for them.
    text = " ".join(m.value for m in at.markdown)
    for p in ui.PAGES[1:]:
        assert p.line in text


def test_home_shows_the_gemm_share_of_flops_and_of_time():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30).run()
    df = next(d.value for d in at.dataframe if "GEMM share of time" in d.value.columns)
    assert list(df["tokens"]) == [512, 512, 2048, 2048, 8192, 8192]
    assert (df["GEMM share of FLOPs"] > 0.99).all()
    assert (df["GEMM share of time"] < df["GEMM share of FLOPs"]).all()


def _home(**query) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.query_params.update(query)
    return at.run()


def _zh(msgid: str) -> str:
    """The catalogue's translation, read from the .po (not through the app's own lookup)."""
    cat = gemm_i18n.read("zh")
    return cat[msgid].string


def test_home_in_chinese_from_a_link():
    """``?lang=zh``: the title, the sidebar's page names and the map read in Chinese; the formulas,
    numbers and the data behind the tables are unchanged."""
    import ui

    at = _home(lang="zh")
    assert not at.exception
    assert at.title[0].value == f":material/home: {_zh('GEMM, from one multiply-add to a whole LLM')}"
    assert at.radio(key="lang").value == "zh"
    text = " ".join(m.value for m in at.markdown)
    assert "$$D = \\alpha\\,A B + \\beta\\,C" in text  # the formula is kept as written
    for p in ui.PAGES[1:]:
        assert _zh(p.line) in text and p.line not in text
    df = next(d.value for d in at.dataframe if "GEMM share of time" in d.value.columns)
    assert list(df["tokens"]) == [512, 512, 2048, 2048, 8192, 8192]  # data keys stay as they are
    assert set(df["attention"]) == {_zh("eager"), _zh("fused")}


def test_home_in_chinese_has_no_english_left():
    """Everything the page shows, labels and table headers included: no English word outside
    formulas, code, numbers, units and names (the devices found here, the catalogue's GPUs)."""
    from gemmlib.core.hardware import CATALOGUE
    from gemmlib.core.machine import light_summary

    names = [d["name"] for d in light_summary()] + list(CATALOGUE)
    texts = shown_texts(_home(lang="zh"))
    assert len(texts) > 40
    left = {w for t in texts for w in gemm_i18n.english_words(t, names)}
    assert not left, f"English left on the Chinese home page: {sorted(left)}"


def test_the_english_home_page_is_checked_the_same_way():
    """Not vacuous: the same check finds the English of the default page."""
    texts = shown_texts(_home())
    left = {w for t in texts for w in gemm_i18n.english_words(t)}
    assert {"multiply", "machine", "catalogue"} <= left


@pytest.mark.parametrize("bad", ["xx", "ZH", "", "zh-CN", "1e309"])
def test_an_unknown_language_in_a_link_falls_back_to_english(bad):
    at = _home(lang=bad)
    assert not at.exception
    assert at.title[0].value == ":material/home: GEMM, from one multiply-add to a whole LLM"


def test_switching_the_language_on_the_page():
    at = _home()
    assert at.radio(key="lang").value is None  # no choice made: the browser's language (none here)
    at.radio(key="lang").set_value("zh").run()
    assert not at.exception
    assert at.title[0].value.endswith(_zh("GEMM, from one multiply-add to a whole LLM"))
    at.radio(key="lang").set_value("en").run()
    assert at.title[0].value.endswith("GEMM, from one multiply-add to a whole LLM")


def test_home_has_a_start_here_path_what_to_notice_and_the_articles_claims():
    import ui

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30).run()
    assert not at.exception and not at.error
    assert "Start here" in [h.value for h in at.subheader]
    text = " ".join(m.value for m in at.markdown)
    for p in ui.PAGES[1:]:
        assert p.notice and p.notice in text  # each page's "what to notice"
    claims = next(d.value for d in at.table if "the article says" in d.value.columns)  # (a static table: it wraps)
    assert claims["the article says"].str.contains("`seq²·d`", regex=False).any()  # Markdown, drawn as code
    assert len(claims) >= 6 and claims["verdict"].str.len().min() > 10
    labels = {p.label for p in ui.PAGES}
    for where in claims["where in the app"]:  # every claim points to pages that exist
        named = {w.strip().split(" →")[0].replace(" (below)", "") for w in where.split(",")}
        assert named <= labels, named - labels
    attention = claims[claims["the article says"].str.contains("attention")].iloc[0]["verdict"]
    assert "4.0%" in attention and "24,576" in attention  # 6·d at d = 4096, from gemmlib
    assert sum("article" in m.value.lower() for m in at.markdown) <= 2  # named once, then "its claims"


@pytest.mark.parametrize("page", ["app.py", "pages/1_Accumulate.py", "pages/7_Tiling.py", "pages/9_Roofline.py"])
def test_page_icons_are_material_symbols_not_emoji(page):
    """Emoji draw as boxes without an emoji font; Streamlit bundles the Material Symbols font. Every
    page of the list names a known Material icon, and a page's title and tab show its list icon."""
    from streamlit.string_util import validate_material_icon

    import ui

    for p in ui.PAGES:
        assert validate_material_icon(p.icon) == p.icon, p
    at = AppTest.from_file(str(ROOT / page), default_timeout=60).run()
    assert not at.exception
    icon = at.title[0].value.split(" ", 1)[0]
    assert icon.startswith(":material/") and icon.endswith(":"), at.title[0].value
    if page != "app.py":
        assert icon == next(p.icon for p in ui.PAGES if p.path == page)


def test_no_page_draws_an_emoji_icon():
    """Every icon= a page passes (st.info, st.page_link…) is a Material symbol: an emoji draws as a box on a machine
    without an emoji font (a reviewer saw the Transformer GEMMs page's 🔎 as one)."""
    import re

    for path in [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]:
        for m in re.finditer(r"""icon=(["'])(.*?)\1""", path.read_text(encoding="utf-8")):
            assert m.group(2).startswith(":material/"), (path.name, m.group(2))


def test_the_claims_pages_and_the_flops_sm_count_read_in_chinese():
    """The claims table's pages were joined with ", " inside Chinese, and the FLOPs page's "SMs" box was English."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.query_params["lang"] = "zh"
    at.run()
    claims = next(d.value for d in at.table if len(d.value.columns) == 3)
    several = [w for w in claims.iloc[:, 2] if "首页" in w or "、" in w]
    assert several and not any(", " in w for w in claims.iloc[:, 2]), list(claims.iloc[:, 2])
    flops = AppTest.from_file(str(ROOT / "pages" / "2_FLOPs.py"), default_timeout=30)
    flops.query_params["lang"] = "zh"
    flops.run()
    assert flops.number_input(key="fl_sms").label == "SM 数"
