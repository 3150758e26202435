"""mscore's import contract: the floors of docs/architecture.md, checked by reading the source.

A module imports only from its own floor or the floors below it; module-level imports form no
cycle; late imports (written inside functions, or made through ``importlib`` from a module name
in the source) point down too, but for the declared lazy re-exports under MindSpore's paths
(``FACADE_EDGES``), close no cycle either, and only go down in number. Optional heavy
dependencies (torch, jax, onnx, matplotlib, ...) are not mscore modules and are not counted.
The floor table of docs/architecture.md is checked against ``LAYERS``.
"""
from __future__ import annotations

import ast
import os
import re
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
# Lazy re-exports of a higher floor's names under MindSpore's import paths (a module
# ``__getattr__`` that imports on first use): the only late imports that may point up. They run
# after both modules have loaded, so the check for cycles leaves them out.
FACADE_EDGES = {
    "mscore.nn": {"mscore.train.metrics"},  # mindspore.nn.Accuracy, ...
    "mscore.nn.metrics": {"mscore.train.metrics"},  # mindspore.nn.metrics
    # mindspore.parallel.load_distributed_checkpoint, ...; mindspore.parallel.shard
    "mscore.parallel": {"mscore.train", "mscore.train.serialization",
                        "mscore.parallel.auto_parallel"},
}
# Function-level imports of mscore modules inside mscore; lower this when you remove one.
MAX_LATE_IMPORTS = 2


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


def _dynamic_targets(tree, modules: dict[str, Path], package: str) -> set[str]:
    """The package's modules a module loads through ``importlib``: the module names written
    as string constants (``import_module("pkg.x")``, a table of names a ``__getattr__`` looks
    up) or as the constant head of an f-string (``f"pkg.x.{name}"``), in a module that uses
    ``importlib``/``import_module``."""
    uses_importlib = any(
        (isinstance(n, ast.Name) and n.id in ("importlib", "import_module", "__import__"))
        or (isinstance(n, ast.Attribute) and n.attr == "import_module")
        or (isinstance(n, (ast.Import, ast.ImportFrom))
            and any(a.name in ("importlib", "import_module") for a in n.names))
        for n in ast.walk(tree))
    if not uses_importlib:
        return set()
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
                  and node.body and isinstance(node.body[0], ast.Expr)}
    targets = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            head = node.values[0] if node.values else None
            if isinstance(head, ast.Constant) and isinstance(head.value, str):
                name = head.value.rstrip(".")
                if name in modules and head.value.endswith("."):
                    targets.add(name)
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and id(node) not in docstrings and node.value in modules
              and node.value.startswith(package + ".")):
            targets.add(node.value)
    return targets


def scan(package_dir: Path):
    """Return (module-level import graph, list of (module, line, targets) late imports).

    Late imports are the imports written inside functions and the modules loaded through
    ``importlib`` (line 0)."""
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
        dynamic = _dynamic_targets(tree, modules, package) - {module}
        if dynamic:
            late.append((module, 0, ", ".join(sorted(dynamic))))
    return graph, late


def late_graph(graph, late, facade_edges=None):
    """The import graph with the late imports' edges added, but those of ``facade_edges``
    (``{module: targets}``)."""
    full = {module: set(targets) for module, targets in graph.items()}
    for module, _, targets in late:
        allowed = (facade_edges or {}).get(module, set())
        full.setdefault(module, set()).update(set(targets.split(", ")) - allowed)
    return full


def floor_of(module: str, layers) -> int:
    """The index in layers of the longest prefix matching module (-1 if none does)."""
    best, floor = -1, -1
    for index, prefixes in enumerate(layers):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, floor = len(prefix), index
    return floor


def upward_imports(graph, layers, facades) -> list[str]:
    """Imports that point to a higher floor than the importing module's. A facade re-exports
    names of higher floors under MindSpore's import paths: its own imports may point
    anywhere, and it counts as the top floor to the modules that import it."""
    top = len(layers)

    def floor(name):
        return top if name in facades else floor_of(name, layers)
    found = []
    for module, targets in sorted(graph.items()):
        if module in facades:
            continue
        for target in sorted(targets):
            if floor(target) > floor(module):
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


def test_late_imports_are_few(mscore_scan):
    _, late = mscore_scan
    statements = [(m, line, t) for m, line, t in late if line]
    listing = "\n".join(f"{m}:{line} -> {t}" for m, line, t in statements)
    assert len(statements) <= MAX_LATE_IMPORTS, listing


def test_late_imports_and_importlib_only_go_down(mscore_scan):
    _, late = mscore_scan
    assert upward_imports(late_graph({}, late, FACADE_EDGES), LAYERS, FACADES) == []


def test_no_import_cycle_through_late_imports(mscore_scan):
    graph, late = mscore_scan
    assert cycles(late_graph(graph, late, FACADE_EDGES)) == []


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


def test_late_contract_catches_planted_violations(tmp_path):
    """The late checks fail on an upward late import, an importlib facade pointing up that is
    not declared, and a cycle closed by a late import."""
    pkg = tmp_path / "pkg"
    _write(pkg / "__init__.py", "")
    _write(pkg / "low.py", "def f():\n    from pkg import high\n    return high\n")
    _write(pkg / "mid.py", "import importlib\n\n\ndef __getattr__(name):\n"
                           "    return getattr(importlib.import_module('pkg.high'), name)\n")
    _write(pkg / "high.py", "import pkg.low\n")
    _write(pkg / "top.py", "import importlib\n\n\ndef load(name):\n"
                           "    return importlib.import_module(f'pkg.sub.{name}')\n")
    _write(pkg / "sub" / "__init__.py", "")
    layers = [["pkg.low"], ["pkg.mid"], ["pkg.high", "pkg.top", "pkg.sub"]]
    graph, late = scan(pkg)
    assert ("pkg.low", 2, "pkg.high") in late
    assert ("pkg.mid", 0, "pkg.high") in late
    assert ("pkg.top", 0, "pkg.sub") in late
    assert upward_imports(late_graph({}, late), layers, {"pkg"}) == [
        "pkg.low -> pkg.high", "pkg.mid -> pkg.high"]
    assert upward_imports(late_graph({}, late, {"pkg.mid": {"pkg.high"}}), layers,
                          {"pkg"}) == ["pkg.low -> pkg.high"]
    assert cycles(graph) == []
    assert cycles(late_graph(graph, late)) == [["pkg.high", "pkg.low"]]


def test_relative_imports_resolve(tmp_path):
    """``from . import x`` in a package and ``from .x import y`` in a module name the module."""
    pkg = tmp_path / "pkg"
    _write(pkg / "__init__.py", "from . import a\n")
    _write(pkg / "a.py", "from .b import thing\n")
    _write(pkg / "b.py", "thing = 1\n")
    graph, late = scan(pkg)
    assert graph == {"pkg": {"pkg.a"}, "pkg.a": {"pkg.b"}, "pkg.b": set()}
    assert late == []


def test_architecture_floor_table_is_layers():
    """docs/architecture.md's floor table lists LAYERS' prefixes, floor by floor."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if re.match(r"\| \d+ \|", line)]
    documented = [re.findall(r"`(mscore[\w.]*)`", row.split("|")[2]) for row in rows]
    assert documented == LAYERS
