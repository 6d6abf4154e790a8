"""A row's note on the Tiling and Devices pages is shown once, whole (review s29, B).

The notes were written in full under their table (s28 I) and still shown in the table's last column, cut at
1280 px ("interpreter: correctness o…"): each note twice, once cut. The column now keeps only a number ("note 1",
"见注 1") and the note is written once under the table, with the same number, after the rows it concerns.
"""

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from gemmlib.core import ceilings
from gemmlib.measure import precision as bp
from gemmlib.measure.triton_gemm import prepare_interpreter
from ui.i18n import gettext_for
from ui.tables import note_lines

prepare_interpreter()  # before anything else in this test session imports triton

ROOT = Path(__file__).resolve().parents[2]


def _lines(at: AppTest) -> list[str]:
    return [line.replace("\\", "") for c in at.caption for line in c.value.split("  \n")]


def _everything(at: AppTest) -> str:
    """Every text the page shows: its markdown, captions and alerts, and every table cell."""
    texts = [e.value for kind in ("markdown", "caption", "info", "success", "warning") for e in getattr(at, kind)]
    cells = [str(v) for d in at.dataframe for v in d.value.to_numpy().ravel()]
    return "\n".join(texts + cells).replace("\\", "")


def test_the_notes_are_numbered_in_the_order_of_the_rows():
    df = pd.DataFrame({"impl": ["numpy", "triton", "triton", "torch"], "tile": [16, 16, 1024, None],
                       "note": ["no *GPU*", "interpreter only", "interpreter only", None]})
    assert note_lines(df, "note", ("impl", "tile"), {"tile": "tile"}) == [
        r"**note 1** — numpy (tile 16): no \*GPU\*",  # markdown in a note kept literal
        "**note 2** — triton (tile 16, 1,024): interpreter only"]
    assert note_lines(df.assign(note=""), "note", ("impl",)) == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_devices_fp8_note_once_whole_and_its_number_in_the_table(lang):
    from gemmlib.measure.devices import device_info

    assert ceilings.save_ceilings(ceilings.Ceilings("cpu", device_info("cpu").name, {"fp32": 5e10, "fp8": 4e9},
                                                    8e9)) is not None
    at = AppTest.from_file(str(ROOT / "pages" / "5_Devices.py"), default_timeout=60)
    if lang == "zh":
        at.query_params["lang"] = "zh"
    at.run()
    assert not at.exception and not at.error
    _ = gettext_for(lang)
    note = _(bp.NO_CEILING_EMULATED)
    table = next(d.value for d in at.dataframe if "note" in d.value.columns)
    marks = dict(zip(table["figure"], table["note"], strict=True))
    assert marks["fp8 GEMM"] == {"en": "note 1", "zh": "见注 1"}[lang]  # the row points to the note
    assert pd.isna(marks[_("fp32 GEMM")])  # a row with no note: no number
    want = {"en": f"**note 1** — fp8 GEMM: {note}", "zh": f"**注 1**——fp8 GEMM：{note}"}[lang]
    assert want.replace("\\", "") in _lines(at)
    assert _everything(at).count(note) == 1  # once, whole


def test_the_tiling_interpreter_note_once_under_the_results():
    at = AppTest.from_file(str(ROOT / "pages" / "7_Tiling.py"), default_timeout=120).run()
    if at.radio(key="tb_device").value != "cpu":
        at.radio(key="tb_device").set_value("cpu").run()
    at.number_input(key="tb_size").set_value(48).run()
    at.multiselect(key="tb_tiles_cpu").set_value([16, 32]).run()
    at.multiselect(key="tb_impls").set_value(["triton", "torch"]).run()
    at.slider(key="tb_time").set_value(0.05).run()
    at.button(key="tb_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    table = at.dataframe[1].value
    triton = table[table["impl"].str.startswith("triton")]
    assert set(triton["note"]) == {"note 1"} and table[~table.index.isin(triton.index)]["note"].isna().all()
    line = next(x for x in _lines(at) if x.startswith("**note 1** — triton (tile 16, 32): "))
    note = line.removeprefix("**note 1** — triton (tile 16, 32): ")
    assert len(note) > 20 and _everything(at).count(note) == 1  # the interpreter's (or no Triton's) why, once
