"""mscore's import contract: the floors of docs/architecture.md, checked by reading the source.

A module imports, at module level, only from its own floor or the floors below it; module-level
imports form no cycle; and imports of mscore modules written inside functions (late imports)
may only go down in number. Late imports stay for two purposes only: the package facade's lazy
subpackages (``mscore.__getattr__`` loads ``mscore.train``, ``mscore.dataset``, ... on first
use, through importlib) and the few inversions docs/architecture.md lists; optional heavy
dependencies (torch, jax, onnx, matplotlib, ...) are not mscore modules and are not counted.
"""
from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Floors, bottom to top: each entry lists module prefixes; the longest prefix that matches a
# module names its floor. A module may import its own floor and the floors below.
LAYERS = [
    ["mscore._optional", "mscore.supervisor", "mscore.plugin"],
    ["mscore._state"],
    ["mscore.parallel", "mscore.context"],
    ["mscore.common.dtype", "mscore.common._errors", "mscore.autodiff"],
    ["mscore.dispatch"],
    ["mscore.common"],
    ["mscore.autodiff.rules", "mscore.autodiff.boundary", "mscore.autodiff.fused",
     "mscore.autodiff.kernels", "mscore.autodiff.reference", "mscore.fused_reference",
     "mscore.backends"],
    ["mscore.ops"],
    ["mscore.communication"],
    ["mscore.nn"],
    ["mscore.compile"],
    ["mscore.boost"],
    ["mscore.amp"],
    ["mscore.train", "mscore.dataset", "mscore.compare", "mscore.conformance", "mscore.commands",
     "mscore.cli", "mscore.launch", "mscore.examples", "mscore.mint", "mscore.numpy",
     "mscore.parallel.auto_parallel",
     "mscore.__main__"],
]
# Modules that re-export names from higher floors under MindSpore's import paths; nothing
# below them imports them.
FACADES = {"mscore", "mscore.common.api", "mscore.common.graph"}
# Function-level imports of mscore modules inside mscore; lower this when you remove one.
MAX_LATE_IMPORTS = 26


def module_files(package_dir: Path) -> dict[str, Path]:
    """Map each module's dotted name to its file, for every ``.py`` file under package_dir."""
    base = package_dir.parent
    modules = {}
    for folder, _, files in os.walk(package_dir):
        for name in files:
            if name.endswith(".py") and "_pb2" not in name:
                path = Path(folder, name)
                dotted = ".".join(path.relative_to(base).with_suffix("").parts)
                modules[dotted.removesuffix(".__init__")] = path
    return modules


def _import_targets(module: str, node, modules: dict[str, Path], package: str) -> set[str]:
    """The package's modules an Import/ImportFrom node loads, other than module's parents."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        if node.level:
            parts = module.split(".")
            is_package = modules[module].name == "__init__.py"
            parts = parts[:len(parts) - node.level + (1 if is_package else 0)]
            prefix = ".".join(parts + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        names = [prefix] + [f"{prefix}.{alias.name}" for alias in node.names]
    targets = set()
    for name in names:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        if (name and name != module and (name == package or name.startswith(package + "."))
                and not module.startswith(name + ".")):
            targets.add(name)
    return targets


def scan(package_dir: Path):
    """Return (module-level import graph, list of (module, line, targets) late imports)."""
    modules = module_files(package_dir)
    package = package_dir.name
    graph, late = {}, []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top_level = set()
        for stmt in tree.body:
            nested = (ast.If, ast.Try)
            found = ast.walk(stmt) if isinstance(stmt, nested) else [stmt]
            top_level.update(n for n in found if isinstance(n, (ast.Import, ast.ImportFrom)))
        graph[module] = set()
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            targets = _import_targets(module, node, modules, package)
            if node in top_level:
                graph[module] |= targets
            elif targets:
                late.append((module, node.lineno, ", ".join(sorted(targets))))
    return graph, late


def floor_of(module: str, layers) -> int:
    """The index in layers of the longest prefix matching module (-1 if none does)."""
    best, floor = -1, -1
    for index, prefixes in enumerate(layers):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, floor = len(prefix), index
    return floor


def upward_imports(graph, layers, facades) -> list[str]:
    """Module-level imports that point to a higher floor than the importing module's."""
    found = []
    for module, targets in sorted(graph.items()):
        if module in facades:
            continue
        for target in sorted(targets):
            if floor_of(target, layers) > floor_of(module, layers):
                found.append(f"{module} -> {target}")
    return found


def cycles(graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


@pytest.fixture(scope="module")
def mscore_scan():
    return scan(ROOT / "mscore")


def test_every_module_has_a_floor(mscore_scan):
    graph, _ = mscore_scan
    assert [m for m in graph if m not in FACADES and floor_of(m, LAYERS) < 0] == []


def test_no_module_level_import_points_up(mscore_scan):
    graph, _ = mscore_scan
    assert upward_imports(graph, LAYERS, FACADES) == []


def test_no_import_cycle(mscore_scan):
    graph, _ = mscore_scan
    assert cycles(graph) == []


def test_late_imports_only_go_down(mscore_scan):
    _, late = mscore_scan
    listing = "\n".join(f"{m}:{line} -> {t}" for m, line, t in late)
    assert len(late) <= MAX_LATE_IMPORTS, listing


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_contract_catches_planted_violations(tmp_path):
    """The checks fail on a tree with an upward import, a cycle and a late import."""
    pkg = tmp_path / "pkg"
    _write(pkg / "__init__.py", "")
    _write(pkg / "low.py", "from pkg import high\n")  # upward
    _write(pkg / "high.py", "import pkg.low\n")  # and back: a cycle
    _write(pkg / "mid.py", "def f():\n    from pkg import low\n    return low\n")
    layers = [["pkg.low"], ["pkg.mid"], ["pkg.high"]]
    graph, late = scan(pkg)
    assert graph["pkg.low"] == {"pkg.high"}
    assert upward_imports(graph, layers, {"pkg"}) == ["pkg.low -> pkg.high"]
    assert cycles(graph) == [["pkg.high", "pkg.low"]]
    assert late == [("pkg.mid", 2, "pkg.low")]
    assert floor_of("pkg.mid", layers) == 1 and floor_of("other", layers) == -1


def test_relative_imports_resolve(tmp_path):
    """``from . import x`` in a package and ``from .x import y`` in a module name the module."""
    pkg = tmp_path / "pkg"
    _write(pkg / "__init__.py", "from . import a\n")
    _write(pkg / "a.py", "from .b import thing\n")
    _write(pkg / "b.py", "thing = 1\n")
    graph, late = scan(pkg)
    assert graph == {"pkg": {"pkg.a"}, "pkg.a": {"pkg.b"}, "pkg.b": set()}
    assert late == []
