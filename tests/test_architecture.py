"""The architecture of gemmlib (README "Architecture"), checked on the real code.

- Wings: core, explain, llm, measure, charts, cli. Imports point down: core imports only core;
  explain and llm import core (llm may use explain); charts import core, explain and llm, never
  measure; measure imports core, explain, llm and charts; cli may import every wing.
- No import cycle between gemmlib's modules, counting every import (function-local ones too).
- No ``except ImportError`` around an import of gemmlib itself.
- Only ``measure/`` imports torch or triton; importing core, explain, llm, charts or the CLI's
  parser loads neither; gemmlib never imports streamlit.
"""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "gemmlib"
WINGS = ("core", "explain", "llm", "measure", "charts", "cli")
MAY_IMPORT = {
    "core": {"core"},
    "explain": {"core", "explain"},
    "llm": {"core", "explain", "llm"},
    "charts": {"core", "explain", "llm", "charts"},
    "measure": {"core", "explain", "llm", "charts", "measure"},
    "cli": set(WINGS),
    "": set(WINGS) | {""},  # gemmlib/__init__.py and __main__.py
}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _resolve(name: str) -> str:
    """The most specific gemmlib module a dotted name refers to (a module, or its package)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _gemmlib_imports(path: Path) -> list[tuple[str, ast.AST]]:
    """Every gemmlib module this file imports (at any depth), with the import node."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "gemmlib":
                    found.append((_resolve(a.name), node))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] == "gemmlib":
            for a in node.names:  # `from gemmlib.x import y`: y may be a module
                target = f"{node.module}.{a.name}"
                found.append((target if target in MODULES else _resolve(node.module), node))
    return found


def _third_party(path: Path, top_level_only: bool) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def _wing(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in WINGS else ""


def test_the_wings_exist_and_nothing_is_left_flat():
    for w in WINGS:
        assert (PKG / w / "__init__.py").is_file(), w
    flat = sorted(p.name for p in PKG.glob("*.py"))
    assert flat == ["__init__.py", "__main__.py"], flat


def test_imports_point_down_between_wings():
    bad = []
    for mod, path in MODULES.items():
        for target, node in _gemmlib_imports(path):
            if _wing(target) not in MAY_IMPORT[_wing(mod)]:
                bad.append(f"{mod} imports {target} (line {node.lineno})")
    assert not bad, "\n".join(bad)


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the directed graph as a path [a, b, ..., a], or None (depth-first search)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for t in sorted(graph.get(m, ())):
            if state.get(t) == 1:
                return stack[stack.index(t):] + [t]
            if t not in state:
                cyc = visit(t)
                if cyc:
                    return cyc
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            cycle = visit(m)
            if cycle:
                return cycle
    return None


def test_no_import_cycle_in_gemmlib():
    graph = {m: {t for t, _ in _gemmlib_imports(p) if t != m} for m, p in MODULES.items()}
    # Importing gemmlib.x.y also runs gemmlib/x/__init__: an edge too (the root package's own
    # __init__ re-exports a few core names and is left out, as Python allows).
    for m in list(graph):
        parent = m.rpartition(".")[0]
        if parent in MODULES and parent != "gemmlib":
            graph[m].add(parent)
    graph["gemmlib"] = set()
    cycle = _find_cycle(graph)
    assert cycle is None, " -> ".join(cycle)


def test_the_checks_are_not_vacuous(tmp_path):
    """A function-local import is seen, and a cycle through three modules is found."""
    (tmp_path / "a.py").write_text("def f():\n    from gemmlib.core import errors\n")
    assert [t for t, _ in _gemmlib_imports(tmp_path / "a.py")] == ["gemmlib.core.errors"]
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_no_except_importerror_around_gemmlib_imports():
    bad = []
    for mod, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Try):
                continue
            catches = {ast.unparse(h.type) for h in node.handlers if h.type is not None}
            if not catches & {"ImportError", "ModuleNotFoundError", "Exception"} and not any(
                    "ImportError" in c for c in catches):
                continue
            body = ast.Module(body=node.body, type_ignores=[])
            for sub in ast.walk(body):
                if isinstance(sub, ast.ImportFrom) and sub.module and sub.module.startswith("gemmlib"):
                    bad.append(f"{mod}: line {sub.lineno}")
                if isinstance(sub, ast.Import) and any(a.name.startswith("gemmlib") for a in sub.names):
                    bad.append(f"{mod}: line {sub.lineno}")
    assert not bad, bad


def test_only_measure_imports_torch_or_triton():
    for mod, path in MODULES.items():
        anywhere = _third_party(path, top_level_only=False)
        if _wing(mod) != "measure":
            assert not {"torch", "triton"} & anywhere, f"{mod} imports torch or triton"
        top = _third_party(path, top_level_only=True)
        assert "torch" not in top, f"{mod} imports torch at module level"
        assert "triton" not in top, f"{mod} imports triton at module level"


def test_gemmlib_never_imports_streamlit():
    for mod, path in MODULES.items():
        assert "streamlit" not in _third_party(path, top_level_only=False), mod


def test_light_wings_load_no_torch():
    light = sorted(m for m in MODULES if _wing(m) in {"core", "explain", "llm", "charts", ""}
                   and not m.endswith("__main__"))
    code = (f"import sys\nfor m in {light!r}: __import__(m)\n"
            "from gemmlib.cli import build_parser; build_parser()\n"
            "print(sorted(m for m in ('torch', 'triton', 'streamlit') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_import_gemmlib_is_light():
    code = ("import sys, gemmlib, gemmlib.core.flops, gemmlib.core.hardware, gemmlib.core.roofline, gemmlib.cli;"
            "print(sorted(m for m in ('torch', 'streamlit', 'triton', 'pandas') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_pages_do_not_import_torch():
    for path in [ROOT / "app.py", ROOT / "ui.py", *(ROOT / "pages").glob("*.py")]:
        assert not {"torch", "triton"} & _third_party(path, top_level_only=False), path


def test_explainer_pages_and_estimator_never_load_torch():
    """Run each light page (AppTest) in a fresh process and look at what it loaded."""
    pages = ["app.py", "pages/1_Accumulate.py", "pages/2_FLOPs.py", "pages/3_Transformer_GEMMs.py",
             "pages/4_LLM_Estimator.py"]
    code = ("import sys\nfrom streamlit.testing.v1 import AppTest\n"
            f"for p in {pages!r}:\n"
            "    at = AppTest.from_file(p, default_timeout=120).run()\n"
            "    assert not at.exception, (p, at.exception)\n"
            "print(sorted(m for m in ('torch', 'triton') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"
