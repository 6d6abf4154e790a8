"""Each page keeps its widgets and session state under prefixes of its own.

``st.session_state`` is shared by every page of a session, and a URL-bound widget's key is its
query parameter: two pages using the same key would carry settings from one page to the other.
The keys are read from the page sources (string literals after ``key=``, ``session_state.``,
``session_state["…"]``, ``ss.`` and ``ss["…"]``, f-strings by their literal start).
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE_FILES = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]
KEY_RE = re.compile(
    r"""(?:key=f?["']|session_state\.|session_state\[f?["']|\bss\.|\bss\[f?["']|pos_key=["'])([A-Za-z][A-Za-z0-9]*)_""")
UI_PREFIX_RE = re.compile(r"""ui\.stepper\(\s*["']([a-z]+)["']""")  # ui.stepper(prefix, ...) keys {prefix}_...


def prefixes(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    return set(KEY_RE.findall(text)) | set(UI_PREFIX_RE.findall(text))


def test_the_scan_finds_keys():
    """Not vacuous: the known prefixes are found where they are used."""
    found = {p.name: prefixes(p) for p in PAGE_FILES}
    assert "acc" in found["1_Accumulate.py"] and "le" in found["4_LLM_Estimator.py"]
    assert "pf" in found["10_Profiler.py"] and "pr" in found["6_Precision.py"]
    assert KEY_RE.findall('st.slider("x", key="zz_a"); ss.zz_b; st.session_state["zz_c"]') == ["zz", "zz", "zz"]


def test_no_two_pages_share_a_key_prefix():
    owner: dict[str, str] = {}
    clashes = []
    for path in PAGE_FILES:
        for prefix in sorted(prefixes(path)):
            if prefix in owner and owner[prefix] != path.name:
                clashes.append(f"{prefix}_ is used by {owner[prefix]} and {path.name}")
            owner.setdefault(prefix, path.name)
    assert not clashes, "\n".join(clashes)
