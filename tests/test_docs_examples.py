"""Every ```python block of the README, docs/ and the plugins' and examples' READMEs runs as
written.

The convention: a page's ```python blocks run top to bottom in one namespace (a later block may
use what an earlier one defined), in an empty temporary folder, on the numpy backend. Names a
function body uses must exist too (the blocks define hook functions nobody calls here, so a
typo inside one would otherwise pass). A block that cannot run standalone (it needs a library
or a GPU the page is about) is fenced ```python no-run: it keeps its highlighting and is
skipped here. Keep that set tiny; it is listed by ``test_no_run_blocks_are_few``.
"""
import builtins
import re
import symtable
from pathlib import Path

import pytest
from _helpers import numpy_context_each_test

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", *ROOT.glob("docs/*.md"), *ROOT.glob("plugins/*/README.md"),
                *ROOT.glob("examples/*/README.md")])
FENCE = re.compile(r"^```python([^\n]*)\n(.*?)^```[ \t]*$", re.M | re.S)


def blocks(page):
    """``[(line, info, code)]`` of the page's ```python blocks."""
    text = page.read_text()
    return [(text.count("\n", 0, m.start()) + 1, m.group(1).strip(), m.group(2))
            for m in FENCE.finditer(text)]


def free_names(code, filename):
    """Global names the code reads inside functions and classes, and at the top level without
    defining them there."""
    found = set()

    def visit(table):
        top = table.get_type() == "module"
        for sym in table.get_symbols():
            if not sym.is_referenced():
                continue
            if top and not (sym.is_assigned() or sym.is_imported()):
                found.add(sym.get_name())
            elif not top and sym.is_global():
                found.add(sym.get_name())
        for child in table.get_children():
            visit(child)
    module = symtable.symtable(code, filename, "exec")
    visit(module)
    defined = {s.get_name() for s in module.get_symbols() if s.is_assigned() or s.is_imported()}
    return found - defined


def _page_id(page):
    return page.relative_to(ROOT).as_posix()


_numpy_context = numpy_context_each_test()


@pytest.mark.parametrize("page", [p for p in PAGES
                                  if any(info != "no-run" for _, info, _ in blocks(p))],
                         ids=_page_id)
def test_python_blocks_run_as_written(page, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__docs__"}
    for line, info, code in blocks(page):
        if info == "no-run":
            continue
        assert info == "", f"{_page_id(page)}:{line}: unknown fence info {info!r}"
        where = f"{_page_id(page)}:{line}"
        exec(compile(code, where, "exec"), namespace)
        missing = sorted(n for n in free_names(code, where)
                         if n not in namespace and not hasattr(builtins, n))
        assert not missing, f"{where}: undefined name(s) {missing}"


def test_no_run_blocks_are_few():
    skipped = [_page_id(p) for p in PAGES for _, info, _ in blocks(p) if info == "no-run"]
    # a plugin's own module, a GPU-only snippet and a script that needs a launcher
    assert skipped == ["README.md", "docs/backend-authors.md", "plugins/jax_backend/README.md"]


def test_the_checker_finds_an_undefined_name_in_a_function_body():
    code = "def register():\n    return _mylib_version()\n"
    assert free_names(code, "<t>") == {"_mylib_version"}
    assert free_names("import os\ndef f():\n    return os.sep, len\n", "<t>") == {"len"}
