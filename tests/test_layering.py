"""The layering rules of shared/design.md, checked on the real code."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Modules whose whole purpose is to measure: torch may be imported inside their functions.
MEASURING = {"harness", "devices", "quant", "bench_precision", "bench_tiling", "bench_batching",
             "triton_gemm", "profiler", "monitor", "report", "tiling"}


def _imports(path: Path, top_level_only: bool) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_import_gemmlib_is_light():
    code = ("import sys, gemmlib, gemmlib.flops, gemmlib.hardware, gemmlib.roofline, gemmlib.cli;"
            "print(sorted(m for m in ('torch', 'streamlit', 'triton', 'pandas') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_cli_parser_imports_no_torch():
    code = ("import sys; from gemmlib.cli import build_parser; build_parser();"
            "print('torch' in sys.modules, 'streamlit' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


def test_gemmlib_never_imports_streamlit():
    for path in (ROOT / "gemmlib").rglob("*.py"):
        assert "streamlit" not in _imports(path, top_level_only=False), path


def test_torch_only_inside_measuring_code():
    for path in (ROOT / "gemmlib").rglob("*.py"):
        top = _imports(path, top_level_only=True)
        if path.stem not in MEASURING:
            assert "torch" not in _imports(path, top_level_only=False), f"{path} imports torch"
        assert "torch" not in top, f"{path} imports torch at module level"
        assert "triton" not in top or path.stem == "triton_gemm", path


def test_pages_do_not_import_torch():
    for path in [ROOT / "app.py", ROOT / "ui.py", *(ROOT / "pages").glob("*.py")]:
        assert not {"torch", "triton"} & _imports(path, top_level_only=False), path
