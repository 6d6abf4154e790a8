"""A shared link carries the pages' settings: formats, sizes, tiles, batches, modes, collectives, ranks, and more.

Each widget that sets up a run (or the view of its result) is bound to the URL (``ui.url``), so a link with
``?key=value`` opens the page with that setting; an option the page cannot use is named under the title.
Multiselects with a ``format_func`` hold the options themselves (``?ba_modes=loop&ba_modes=bmm``), not
their labels, so a link works in either language.
"""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def _open(page: str, query: dict) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / page), default_timeout=120)
    at.query_params.update(query)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


# page, the link's values, (widget kind, key, the value it must take)
LINKS = [
    ("5_Devices.py", {"dv_device": "cpu", "dv_quick": "false"}, [("checkbox", "dv_quick", False)]),
    ("6_Precision.py", {"pr_device": "cpu", "pr_dtypes": ["fp32", "int8"], "pr_sq_cpu": ["512"]},
     [("multiselect", "pr_dtypes", ["fp32", "int8"]), ("multiselect", "pr_sq_cpu", [512])]),
    ("7_Tiling.py", {"tb_device": "cpu", "tt_tiles": ["32", "64"], "tb_impls": ["torch", "numpy_blocked"],
                     "tb_tiles_cpu": ["16"], "tw_tm": "256", "tw_tn": "64"},
     [("multiselect", "tt_tiles", [32, 64]), ("multiselect", "tb_impls", ["torch", "numpy_blocked"]),
      ("multiselect", "tb_tiles_cpu", [16]), ("selectbox", "tw_tm", 256), ("selectbox", "tw_tn", 64)]),
    ("8_Batching.py", {"ba_device": "cpu", "ba_shape": "Custom", "ba_batches_cpu_custom": ["2", "8"],
                       "ba_modes": ["stacked"]},
     [("multiselect", "ba_batches_cpu_custom", [2, 8]), ("multiselect", "ba_modes", ["stacked"])]),
    ("9_Roofline.py", {"rf_dtypes": ["fp16"], "rf_shared": "true"},
     [("multiselect", "rf_dtypes", ["fp16"]), ("checkbox", "rf_shared", True)]),
    ("11_Multi_GPU.py", {"mg_ops": ["all_gather"]}, [("multiselect", "mg_ops", ["all_gather"])]),
    ("2_FLOPs.py", {"fl_tm": "256", "fl_tn": "64", "fl_sms": "100", "fl_am": "64", "fl_ak": "32", "fl_an": "16"},
     [("selectbox", "fl_tm", 256), ("selectbox", "fl_tn", 64), ("number_input", "fl_sms", 100),
      ("number_input", "fl_am", 64), ("number_input", "fl_ak", 32), ("number_input", "fl_an", 16)]),
    ("1_Accumulate.py", {"acc_src": "random", "acc_m": "4", "acc_n": "4", "acc_ci": "2", "acc_cj": "1", "acc_dist": "normal", "acc_operands": "bf16",
                         "acc_kmax": "4096"},
     [("number_input", "acc_ci", 2), ("number_input", "acc_cj", 1), ("radio", "acc_dist", "normal"),
      ("selectbox", "acc_operands", "bf16"), ("select_slider", "acc_kmax", 4096)]),
]


@pytest.mark.parametrize(("page", "query", "expect"), LINKS, ids=[p for p, _q, _e in LINKS])
def test_a_link_opens_the_page_with_its_settings(page, query, expect):
    at = _open(page, query)
    for kind, key, want in expect:
        assert getattr(at, kind)(key=key).value == want, key


def test_a_modes_link_names_options_not_labels_and_says_which_it_could_not_use():
    """``?ba_modes=`` holds the modes' ids; a Chinese label names its mode too, an unknown one is named."""
    at = _open("8_Batching.py", {"ba_modes": ["bmm", "nonsense"], "lang": "en"})
    assert at.multiselect(key="ba_modes").value == ["bmm"]
    notes = [i.value for i in at.info if "Link value" in i.value]
    assert notes == ["Link value ba_modes=nonsense is not one of the choices; it is left out."], notes
    at = _open("8_Batching.py", {"ba_modes": ""})  # none of them, as a link writes an empty choice
    assert at.multiselect(key="ba_modes").value == []

