"""A row's note on the Tiling and Devices pages is readable whole, under its table.

At 1280 × 800 the note was the last column of a wide table and shown cut ("interpreter: correctness o…",
"没有 fp8 硬件：参考核函数…"): a student had to scroll the grid sideways to read why a row has no speed or
no ceiling. Each note is now also written in full under the table, once, after the rows it concerns.
"""

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from gemmlib.core import ceilings
from gemmlib.measure import precision as bp
from gemmlib.measure.triton_gemm import prepare_interpreter
from ui.tables import note_lines

prepare_interpreter()  # before anything else in this test session imports triton

ROOT = Path(__file__).resolve().parents[2]


# (each test's own cache folder and no kept ceilings: the root conftest's autouse `hermetic`)


def _captions(at: AppTest) -> list[str]:
    return [c.value for c in at.caption]


def test_each_note_once_after_the_rows_it_concerns():
    df = pd.DataFrame({"impl": ["triton", "triton", "torch", "numpy"], "tile": [16, 1024, None, 16],
                       "note": ["interpreter only", "interpreter only", None, "no *GPU*"]})
    assert note_lines(df, "note", ("impl", "tile"), {"tile": "tile"}) == [
        "**note 1** — triton (tile 16, 1,024): interpreter only",
        r"**note 2** — numpy (tile 16): no \*GPU\*"]  # markdown kept literal
    assert note_lines(df.assign(note=""), "note", ("impl",)) == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_devices_fp8_note_is_whole_under_its_table(lang):
    from gemmlib.measure.devices import device_info

    name = device_info("cpu").name
    assert ceilings.save_ceilings(ceilings.Ceilings("cpu", name, {"fp32": 5e10, "fp8": 4e9}, 8e9)) is not None
    at = AppTest.from_file(str(ROOT / "pages" / "5_Devices.py"), default_timeout=60)
    if lang == "zh":
        at.query_params["lang"] = "zh"
    at.run()
    assert not at.exception and not at.error
    from ui.i18n import gettext_for

    _ = gettext_for(lang)
    note = _(bp.NO_CEILING_EMULATED)
    want = _("**note {n}** — {rows}: {note}").format(n=1, rows="fp8 GEMM", note=note)
    lines = [line for c in _captions(at) for line in c.split("  \n")]
    assert any(line.replace("\\", "") == want for line in lines), lines  # the whole note, named by its row
    assert not any("fp32 GEMM" in line for line in lines)  # a row with no note is not listed


def test_the_tiling_interpreter_note_is_whole_under_the_results():
    at = AppTest.from_file(str(ROOT / "pages" / "7_Tiling.py"), default_timeout=120).run()
    if at.radio(key="tb_device").value != "cpu":
        at.radio(key="tb_device").set_value("cpu").run()
    at.number_input(key="tb_size").set_value(48).run()
    at.multiselect(key="tb_tiles_cpu").set_value([16, 32]).run()
    at.multiselect(key="tb_impls").set_value(["triton", "torch"]).run()
    at.slider(key="tb_time").set_value(0.05).run()
    at.button(key="tb_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    notes = [str(n) for n in at.dataframe[1].value["note"] if isinstance(n, str) and n]
    assert notes  # the Triton rows say why they have no speed (the interpreter, or no Triton at all)
    lines = [line.replace("\\", "") for c in _captions(at) for line in c.split("  \n")]
    for note in set(notes):  # the table's "note 1", written in full under it (tests/pages/test_notes_once_s29b.py)
        assert any(line.startswith(f"**{note}** — triton (tile 16, 32): ") for line in lines), (note, lines)
