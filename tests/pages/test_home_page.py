"""The home page renders, explains GEMM and links every page that exists."""

from pathlib import Path

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
    df = at.dataframe[0].value
    assert {"H100 SXM", "H200 SXM", "A100 SXM 80GB", "L40S", "RTX 4090"} <= set(df["name"])
    assert df["source"].str.startswith(("http", "(")).all()


def test_home_map_names_every_page_file():
    source = (ROOT / "app.py").read_text(encoding="utf-8")
    for page in (ROOT / "pages").glob("*.py"):
        assert f'"pages/{page.name}"' in source, f"{page.name} is missing from the home page map"
