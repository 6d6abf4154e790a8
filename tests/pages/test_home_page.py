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
