"""The architecture of gemmlib (README "Architecture"), checked on the real code.

- Wings: core, explain, llm, charts, views, measure, cli. Imports point down: core imports only core;
  explain and llm import core (llm may use explain); charts import core, explain and llm, never
  measure; views (the pages' presenters) import core, explain, llm and charts, never measure;
  measure imports core, explain, llm and charts; cli may import every wing.
- No import cycle between gemmlib's modules, counting every import (function-local ones too).
- No ``except ImportError`` around an import of gemmlib itself.
- Only ``measure/`` imports torch or triton; importing core, explain, llm, charts or the CLI's
  parser loads neither; gemmlib never imports streamlit.
- Streamlit: app.py, pages/ and the ``ui`` package (one module per job; its ``__init__`` only
  re-exports) are the only code that imports it.
- The estimate's import set: ``python -m gemmlib estimate`` loads only core, llm and its own
  command (no numpy, no torch, nothing from measure, at most ``ESTIMATE_MODULES_MAX`` gemmlib
  modules); ``import gemmlib`` loads nothing else.
- Pages only lay out: none is longer than PAGE_LINES, no exception (their logic lives in a presenter,
  ``gemmlib/views``); every benchmark page draws its runs through ``ui.bench_section`` and its
  downloads through ``ui.downloads``, never the run box's pieces itself.
"""

import ast
import functools
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "gemmlib"
WINGS = ("core", "explain", "llm", "measure", "charts", "views", "cli")
MAY_IMPORT = {
    "core": {"core"},
    "explain": {"core", "explain"},
    "llm": {"core", "explain", "llm"},
    "charts": {"core", "explain", "llm", "charts"},
    "views": {"core", "explain", "llm", "charts", "views"},
    "measure": {"core", "explain", "llm", "charts", "measure"},
    "cli": set(WINGS),
    "": set(WINGS) | {""},  # gemmlib/__init__.py and __main__.py
}


def _tree(path: Path) -> ast.Module:
    """A file's syntax tree, parsed once for all the checks of this module (they only read it); a file written
    again (a test's own sample) is parsed again."""
    st = path.stat()
    return _parsed(path, st.st_mtime_ns, st.st_size)


@functools.cache
def _parsed(path: Path, mtime_ns: int, size: int) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


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
    for node in ast.walk(_tree(path)):
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
    tree = _tree(path)
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
        for node in ast.walk(_tree(path)):
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
    light = sorted(m for m in MODULES if _wing(m) in {"core", "explain", "llm", "charts", "views", ""}
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


# The estimate's import set (issue 23): only core, llm and the estimate command. 30 gemmlib modules
# today (gemmlib, gemmlib.cli, cli.common, cli.estimate, 9 of core, 17 of llm: the shape efficiency model,
# the hybrid mixers, the vision towers, the known families and the remote-code ports among them): at the bound.
ESTIMATE_MODULES_MAX = 30
ESTIMATE_MAY_LOAD = {"gemmlib", "gemmlib.cli", "gemmlib.cli.estimate",
                     "gemmlib.cli.common"}  # the checked number types (core imports only; running a job is cli.running)


def _loaded_after(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; what it left in sys.modules (gemmlib's and a few heavy ones)."""
    probe = (code + "\nimport json, sys\n"
             "print(json.dumps({'gemmlib': sorted(m for m in sys.modules if m.split('.')[0] == 'gemmlib'),"
             "'heavy': sorted(m for m in ('numpy', 'torch', 'triton', 'pandas', 'altair', 'streamlit') "
             "if m in sys.modules)}))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    import json

    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_estimate_loads_only_core_llm_and_its_command(tmp_path):
    code = ("import contextlib, io, os\n"
            f"os.environ['GEMM_CACHE_DIR'] = {str(tmp_path)!r}\n"
            "from gemmlib.cli import main\n"
            "for argv in (['estimate', '--preset', 'llama-2-7b', '--batch', '1', '--seq-len', '128'],\n"
            "             ['estimate', '--preset', 'llama-2-7b', '--json']):\n"
            "    with contextlib.redirect_stdout(io.StringIO()):\n"
            "        assert main(argv) == 0\n")
    loaded = _loaded_after(code)
    assert loaded["heavy"] == [], loaded["heavy"]
    mods = loaded["gemmlib"]
    beyond = [m for m in mods if m not in ESTIMATE_MAY_LOAD and _wing(m) not in {"core", "llm"}]
    assert not beyond, f"the estimate loads more than core, llm and its command: {beyond}"
    # a calibration or a measured ceiling is read only when --gpu names one
    assert not {"gemmlib.core.calibration", "gemmlib.core.ceilings", "gemmlib.llm.calibrated"} & set(mods)
    assert len(mods) <= ESTIMATE_MODULES_MAX, f"{len(mods)} gemmlib modules: {mods}"


def test_the_import_set_check_is_not_vacuous():
    """The same probe sees what heavier code loads: the bench parser pulls in measure, numpy_blocked numpy."""
    loaded = _loaded_after("from gemmlib.cli import build_parser\n"
                           "build_parser().parse_known_args(['bench', 'tiling'])\n"
                           "from gemmlib.explain.tiling import numpy_blocked\n"
                           "numpy_blocked([[1.0]], [[2.0]], tile=1)\n")
    assert "gemmlib.measure.tiling" in loaded["gemmlib"]
    assert "numpy" in loaded["heavy"]


def test_import_gemmlib_loads_nothing_else():
    loaded = _loaded_after("import gemmlib")
    assert loaded == {"gemmlib": ["gemmlib"], "heavy": []}
    assert _loaded_after("from gemmlib import gemm_flops\nassert gemm_flops(2, 3, 4) == 48")["heavy"] == []


UI = ROOT / "ui"
UI_MODULES = sorted(UI.glob("*.py"))


def test_pages_do_not_import_torch():
    for path in [ROOT / "app.py", *UI_MODULES, *(ROOT / "pages").glob("*.py")]:
        assert not {"torch", "triton"} & _third_party(path, top_level_only=False), path


def test_ui_is_the_one_streamlit_helper_package():
    """Outside tests and benchmarks, only app.py, pages/ and the ui package import streamlit; ui is a
    package (no ui.py beside it) with one module per job."""
    assert not (ROOT / "ui.py").exists()
    assert {p.stem for p in UI_MODULES} == {"__init__", "text", "i18n", "nav", "url", "tables", "stepper",
                                            "runbox"}
    allowed = {ROOT / "app.py", *UI_MODULES, *(ROOT / "pages").glob("*.py")}
    skip = {"tests", "benchmarks", ".venv", ".git"}
    users = {p for p in ROOT.rglob("*.py") if not skip & set(p.relative_to(ROOT).parts)
             and "streamlit" in _third_party(p, top_level_only=False)}
    assert users <= allowed, sorted(str(p.relative_to(ROOT)) for p in users - allowed)
    assert ROOT / "app.py" in users and UI / "runbox.py" in users  # the scan sees them


PAGE_LINES = 250
BENCH_PAGES = ("pages/5_Devices.py", "pages/6_Precision.py", "pages/7_Tiling.py", "pages/8_Batching.py",
               "pages/9_Roofline.py", "pages/10_Profiler.py", "pages/11_Multi_GPU.py")
BENCH_FLOW = ("run_benchmark", "keep_results", "stopped_notice", "plan_for", "run_estimate", "download_button")
OTHER_DOWNLOADS = {"pages/10_Profiler.py": 1}  # the Chrome trace: a file of the run, not its results


def _page_sizes() -> dict[str, int]:
    return {str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines())
            for p in [ROOT / "app.py", *(ROOT / "pages").glob("*.py")]}


def _too_long(sizes: dict[str, int]) -> dict[str, int]:
    return {p: n for p, n in sizes.items() if n > PAGE_LINES}


def test_pages_only_lay_out():
    """No page is longer than PAGE_LINES (no exception): widgets, one call into its presenter, charts and words."""
    sizes = _page_sizes()
    assert len(sizes) == 12 and sizes["pages/4_LLM_Estimator.py"] > 100  # every page is measured
    long = _too_long(sizes)
    assert not long, f"pages over {PAGE_LINES} lines (move their logic to a presenter in gemmlib/views): {long}"
    assert _too_long({**sizes, "pages/7_Tiling.py": PAGE_LINES + 1}) == {"pages/7_Tiling.py": PAGE_LINES + 1}


def _bench_flow_calls(path: Path) -> list[str]:
    """Calls a page makes to the pieces of the run box that ``ui.bench_section`` puts together."""
    return [f"{ast.unparse(n.func)} (line {n.lineno})" for n in ast.walk(_tree(path))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in BENCH_FLOW]


def test_benchmark_pages_run_through_one_bench_section(tmp_path):
    """Every benchmark page draws its run box with ``ui.bench_section`` (the button, the estimate, the
    stopped notice, the run, the kept result) and its downloads with ``ui.downloads``; none repeats the flow."""
    for page in BENCH_PAGES:
        path = ROOT / page
        assert "ui.bench_section(" in path.read_text(encoding="utf-8"), page
        calls = _bench_flow_calls(path)
        own = [c for c in calls if c.startswith("st.download_button")][: OTHER_DOWNLOADS.get(page, 0)]
        assert [c for c in calls if c not in own] == [], (page, calls)
    (tmp_path / "p.py").write_text("ui.run_benchmark(s, c, lim)\nst.download_button('x', b'', 'x.csv')\n")
    assert len(_bench_flow_calls(tmp_path / "p.py")) == 2


def _ui_imports(path: Path) -> set[str]:
    """The ui modules a file of the ui package imports (``from .i18n import _`` -> "i18n")."""
    out = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            out |= {node.module} if node.module else {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] == "ui":
            out.add(node.module.partition(".")[2] or "__init__")
        elif isinstance(node, ast.Import):
            out |= {a.name.partition(".")[2] or "__init__" for a in node.names if a.name.split(".")[0] == "ui"}
    return out


def test_ui_init_only_re_exports_and_its_modules_form_no_circle():
    """``ui/__init__.py`` holds imports and ``__all__`` only; no module of ui imports the package
    itself (that would be a circle through __init__) and the modules import each other without one."""
    init = _tree(UI / "__init__.py")
    for node in init.body:
        ok = isinstance(node, (ast.Import, ast.ImportFrom)) or (
            isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)) or (
            isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["__all__"])
        assert ok, f"ui/__init__.py line {node.lineno}: {ast.unparse(node)[:80]}"
    import ui

    assert sorted(ui.__all__) == sorted(set(ui.__all__)) and all(hasattr(ui, n) for n in ui.__all__)
    graph = {p.stem: _ui_imports(p) for p in UI_MODULES if p.stem != "__init__"}
    assert not any("__init__" in targets for targets in graph.values()), graph
    assert graph["runbox"] >= {"i18n", "text"}  # the scan sees relative imports
    cycle = _find_cycle(graph)
    assert cycle is None, " -> ".join(cycle)


def _every_page() -> list[str]:
    return ["app.py", *sorted((str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("*.py")),
                              key=lambda p: int(p.split("/")[1].split("_")[0]))]


def test_no_page_loads_torch_to_render(tmp_path):
    """Render every page (AppTest) in one fresh process; after each, torch and triton are still not loaded.

    CUDA presence comes from ``gemmlib.core.machine.gpu_presence`` (the torch build, NVML), a plan
    before a run asks no torch, and the Devices page asks PyTorch only when its toggle is on.
    """
    pages = _every_page()
    assert len(pages) == 12, pages
    code = ("import json, sys\nfrom streamlit.testing.v1 import AppTest\n"
            f"for p in {pages!r}:\n"
            "    at = AppTest.from_file(p, default_timeout=120).run()\n"
            "    assert not at.exception, (p, [e.value for e in at.exception])\n"
            "    print(json.dumps([p, sorted(m for m in ('torch', 'triton') if m in sys.modules)]), flush=True)\n")
    env = {**os.environ, "GEMM_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    import json

    seen = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("[")]
    assert [p for p, _ in seen] == pages
    loaded = [(p, mods) for p, mods in seen if mods]
    assert not loaded, f"the first page that loads torch: {loaded[0]}"


# --------------------------------------------------------------------------- benchmarks as one pipeline
def _aliases(tree: ast.AST) -> dict[str, str]:
    """Local names bound to gemmlib modules: ``import gemmlib.x as y`` and ``from gemmlib import x``."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("gemmlib.") and a.name in MODULES:
                    out[a.asname or a.name] = a.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("gemmlib"):
            for a in node.names:
                if f"{node.module}.{a.name}" in MODULES:
                    out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_uses(path: Path, own: str) -> list[str]:
    """Uses of another gemmlib module's private names in ``path``: ``mod._name`` through a module
    bound to a local name, and ``from gemmlib.x import _name``."""
    tree = _tree(path)
    aliases = _aliases(tree)
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _private(node.attr):
            target = aliases.get(node.value.id)
            if target and target != own:
                bad.append(f"{own or path.name}: {node.value.id}.{node.attr} (line {node.lineno})")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("gemmlib"):
            if node.module != own:
                bad += [f"{own or path.name}: from {node.module} import {a.name} (line {node.lineno})"
                        for a in node.names if _private(a.name)]
    return bad


def _app_files() -> list[Path]:
    return [ROOT / "app.py", *(ROOT / "ui").rglob("*.py"), *(ROOT / "pages").glob("*.py"),
            *([ROOT / "ui.py"] if (ROOT / "ui.py").exists() else [])]


# Private names still shared between modules of llm/ and charts/ (other work in progress owns those
# files): each is to become a public name of its module. The list may only shrink: a new use fails,
# and so does an entry that is gone.
KNOWN_PRIVATE_USES = {
    ("gemmlib.llm.training", "gemmlib.llm.parallel", "_coll"), ("gemmlib.llm.training", "gemmlib.llm.parallel", "_stage_of"),
    ("gemmlib.llm.serving", "gemmlib.llm.parallel", "_stage_of"),
    ("gemmlib.llm.scaleout", "gemmlib.llm.memory", "_check_utilization"),
    ("gemmlib.llm.hf", "gemmlib.llm.config", "_whole"),
    ("gemmlib.llm.vision", "gemmlib.llm.config", "_whole"),
    *(("gemmlib.charts.scaleout", "gemmlib.charts.model", n) for n in ("_d", "_op_guide", "_op_tooltip", "_op_words",
                                                                         "_phase", "_texts")),
}


def test_no_module_calls_another_modules_private_functions():
    bad, known = [], set()
    for mod, path in MODULES.items():
        for use in _private_uses(path, mod):
            words = use.split()
            key = (mod, words[2], words[4]) if words[1] == "from" else None
            if key in KNOWN_PRIVATE_USES:
                known.add(key)
            else:
                bad.append(use)
    for path in _app_files():
        bad += _private_uses(path, "")
    assert not bad, "\n".join(bad)
    assert known == KNOWN_PRIVATE_USES, f"gone, drop from the list: {sorted(KNOWN_PRIVATE_USES - known)}"


def _kind_switches(path: Path) -> list[str]:
    """``job.kind == …`` (or ``in``) on a job, and any if/elif chain of three or more branches that
    compares one ``….kind`` to string constants: a switchboard over benchmarks."""
    tree = _tree(path)
    bad = []

    def kind_of(test: ast.AST) -> str | None:
        if isinstance(test, ast.Compare) and isinstance(test.left, ast.Attribute) and test.left.attr == "kind" \
                and all(isinstance(c, ast.Constant) and isinstance(c.value, str) or
                        isinstance(c, (ast.Tuple, ast.Set, ast.List)) for c in test.comparators):
            return ast.unparse(test.left)
        return None

    for node in ast.walk(tree):
        k = kind_of(node)
        if k and "job" in k.split(".")[0].lower():
            bad.append(f"{path.name}: {ast.unparse(node)} (line {node.lineno})")
        if isinstance(node, ast.If):
            chain, cur = [], node
            while isinstance(cur, ast.If):
                chain.append(kind_of(cur.test))
                cur = cur.orelse[0] if len(cur.orelse) == 1 and isinstance(cur.orelse[0], ast.If) else None
            if len(chain) >= 3 and chain[0] and chain.count(chain[0]) >= 3:
                bad.append(f"{path.name}: an if/elif chain over {chain[0]} (line {node.lineno})")
    return bad


def test_no_switchboard_over_benchmark_kinds():
    assert not (PKG / "measure" / "jobs.py").exists()
    bad = []
    for path in [*MODULES.values(), *_app_files()]:
        bad += _kind_switches(path)
    assert not bad, "\n".join(bad)


def test_every_benchmark_module_declares_its_spec_and_the_registry_holds_them():
    from gemmlib.measure import registry
    from gemmlib.measure.spec import BenchSpec

    declared = {}
    for mod, path in MODULES.items():
        tree = _tree(path)
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                    ast.unparse(node.value.func) == "BenchSpec":
                declared[mod] = declared.get(mod, 0) + 1
    assert set(declared) <= {m for m in MODULES if m.startswith("gemmlib.measure.")}, declared
    assert sum(declared.values()) == len(registry.SPECS), (declared, list(registry.SPECS))
    assert {m for m, _ in registry.WHERE.values()} == set(declared)
    assert all(isinstance(s, BenchSpec) and s.name == n for n, s in registry.SPECS.items())
    # nothing but the registry lists them: no other module imports it (the worker looks a request up)
    users = sorted(m for m, p in MODULES.items() if any(t == "gemmlib.measure.registry" for t, _ in _gemmlib_imports(p)))
    assert users == ["gemmlib.measure.worker"], users


def _closure(start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        m = todo.pop()
        if m in seen or m not in MODULES:
            continue
        seen.add(m)
        todo += [t for t, _ in _gemmlib_imports(MODULES[m])]
    return seen


def test_the_estimate_imports_nothing_from_measure():
    for start in ["gemmlib.cli.estimate", *(m for m in MODULES if m.startswith("gemmlib.llm"))]:
        reached = sorted(m for m in _closure(start) if m.startswith("gemmlib.measure"))
        assert not reached, (start, reached)


def test_the_pipeline_checks_are_not_vacuous(tmp_path):
    (tmp_path / "p.py").write_text("from gemmlib.measure import safety\nsafety._is_oom(1)\n"
                                   "from gemmlib.core.results import _jsonable\n")
    assert len(_private_uses(tmp_path / "p.py", "gemmlib.measure.other")) == 2
    (tmp_path / "k.py").write_text("if job.kind == 'a':\n    pass\n"
                                   "if s.kind == 'a':\n    pass\nelif s.kind == 'b':\n    pass\n"
                                   "elif s.kind in ('c', 'd'):\n    pass\n")
    assert len(_kind_switches(tmp_path / "k.py")) == 2


def _bare_expressions(source: str) -> list[int]:
    """Lines of the statements Streamlit's magic would have written to the page: a bare expression that is not a
    call, a docstring, a yield or an await."""
    out = []
    for node in ast.walk(ast.parse(source)):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if not isinstance(body, list):
                continue
            for i, stmt in enumerate(body):
                if not isinstance(stmt, ast.Expr) or isinstance(stmt.value, (ast.Call, ast.Yield, ast.YieldFrom,
                                                                               ast.Await)):
                    continue
                if i == 0 and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                    continue  # a docstring
                out.append(stmt.lineno)
    return out


def test_magic_is_off_and_no_page_relies_on_it():
    """.streamlit/config.toml turns Streamlit's magic off (a script compiles as written, without the syntax-tree
    rewrite AppTest would pay on every run): no page or app.py may hold a bare expression that magic would have
    shown, or it would silently vanish."""
    import tomllib

    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert cfg["runner"]["magicEnabled"] is False
    for path in [ROOT / "app.py", *(ROOT / "pages").glob("*.py")]:
        assert _bare_expressions(path.read_text(encoding="utf-8")) == [], path
    assert _bare_expressions('"""doc"""\nx = 1\nx\nst.write(x)\n') == [3]  # the check sees one
