"""The Multi-GPU page's interconnect for the estimate is kept in a shared link (AppTest, CPU: gloo).

Before, "Interconnect for the estimate" was the one setting of the page not in its address: a link to an estimate
on a measured interconnect opened on the default one, and the option's id was an English sentence naming the
backend. Now its id is "auto" or the measured link's name (the CLI's ``--interconnect``).
"""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gemmlib.core import interconnect
from gemmlib.measure import launch

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "11_Multi_GPU.py")

pytestmark = [pytest.mark.usefixtures("bench_env"),
              pytest.mark.skipif(launch.cuda_count() >= 2, reason="the CPU (gloo) view of the page")]


@pytest.fixture
def links():
    two = interconnect.MeasuredInterconnect("gloo", "cpu", "Some CPU", 2, busbw=1e9, latency_s=1e-4)
    three = interconnect.MeasuredInterconnect("gloo", "cpu", "Some CPU", 3, busbw=5e9, latency_s=2e-5)
    for m in (two, three):
        interconnect.save_interconnect(m)
    return two.link().name, three.link().name


def _app(**query) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.query_params.update(query)
    at.run()
    assert not at.exception, at.exception
    return at


def _estimate_link(at: AppTest) -> str:
    table = next(d.value for d in at.dataframe if "per rank ms" in d.value.columns)
    return str(table["link"].iloc[0])


def test_a_shared_link_opens_the_interconnect_it_names(links):
    _two, three = links
    at = _app(mg_link=three, mg_ranks="2")
    assert at.selectbox(key="mg_link").value == three
    assert _estimate_link(at) == three  # the estimate for 2 ranks on the ×3 link, as the link asked


def test_picking_an_interconnect_writes_it_into_the_address_and_the_default_leaves_it_out(links):
    _two, three = links
    at = _app()
    assert "mg_link" not in at.query_params
    default_link = _estimate_link(at)
    at.selectbox(key="mg_link").set_value(three).run()
    assert not at.exception
    assert at.query_params["mg_link"] in (three, [three]) and _estimate_link(at) == three != default_link


def test_a_link_naming_no_measured_interconnect_says_so_and_uses_the_default(links):
    at = _app(mg_link="NVLink 9 (made up)")
    assert at.selectbox(key="mg_link").value == "auto"
    texts = " ".join(m.value for m in [*at.markdown, *at.caption, *at.info, *at.warning])
    assert "NVLink 9 (made up)" in texts


def test_in_chinese_the_measured_links_and_the_hardware_are_named_in_chinese(links):
    """The estimate's hardware and link, and the interconnect picker, on the Chinese page: no English name of a
    measured link ("… CPU processes on … (measured interconnect; not a GPU link)") nor of the CPU row."""
    _two, three = links
    at = _app(lang="zh", mg_link=three)
    table = next(d.value for d in at.dataframe if "link" in d.value.columns)
    cells = " ".join(str(v) for v in table.iloc[0].tolist())
    assert "实测互联" in cells and "CPU processes" not in cells and "measured interconnect" not in cells, cells
    assert "edit me" not in cells and "一个 rank 的核心" in cells, cells
    labels = at.selectbox(key="mg_link").options
    assert all("CPU processes" not in o for o in labels) and any("实测互联" in o for o in labels), labels


def test_more_ranks_than_cores_says_why_the_run_is_far_above_its_estimate(monkeypatch):
    """4 ranks on a 2-core machine ran at 0.3× beside an estimated 3.3×, and the page did not say why. On a
    (pretended) 1-core machine a 2-rank run says it: the ranks took turns on the core."""
    monkeypatch.setattr(launch, "usable_cpus", lambda: 1)
    at = _app(mg_ranks="2", mg_seq="16")
    at.button(key="mg_run_tp").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    note = [w.value for w in at.warning if "More ranks than this machine's 1 core (2)" in w.value]
    assert note and "took turns on it" in note[0], [w.value for w in at.warning]


def test_no_such_note_when_every_rank_has_a_core():
    from gemmlib.views import multigpu as view

    runs = [{"nproc": 2, "backend": "gloo"}, {"nproc": 4, "backend": "gloo"}, {"nproc": 8, "backend": "nccl"}]
    assert view.oversubscribed_note(runs, 4, lambda s, p, n: s if n == 1 else p) is None
    two = view.oversubscribed_note(runs, 2, lambda s, p, n: s if n == 1 else p)
    assert two.startswith("More ranks than this machine's 2 cores (4):")  # nccl ranks have a GPU each
