"""docs/backend-authors.md documents every hook, every primitive and fused op, every capability
and the kit's real tolerances and options (so the page cannot drift from the code)."""
from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from mscore.conformance import harness
from mscore.conformance.runner import build_parser
from mscore.plugin import hookspecs
from mscore.plugin.backend import FUSED_OPS, KNOWN_CAPABILITIES, PRIMITIVE_OPS

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "backend-authors.md").read_text()
CONTRACT = (ROOT / "docs" / "backend-contract.md").read_text()

HOOKS = sorted(name for name, fn in vars(hookspecs).items()
               if name.startswith("mscore_") and inspect.isfunction(fn))


def _section(heading_name):
    """The text under the ``### `name(...)` `` heading, up to the next heading."""
    m = re.search(r"^### `" + re.escape(heading_name) + r"\((.*?)\)`\s*$", DOC, re.M)
    if m is None:
        return None, None
    rest = DOC[m.end():]
    nxt = re.search(r"^#{1,3} ", rest, re.M)
    return m.group(1), rest[:nxt.start()] if nxt else rest


def test_hooks_found():
    assert set(HOOKS) == {"mscore_register_backends", "mscore_backend_override",
                          "mscore_amp_cast_lists", "mscore_collectives_impl"}


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_has_a_section_with_an_example(hook):
    args, body = _section(hook)
    assert body is not None, f"docs/backend-authors.md has no '### `{hook}(...)`' section"
    spec_args = ", ".join(inspect.signature(getattr(hookspecs, hook)).parameters)
    assert args == spec_args, f"{hook}: documented as ({args}), the spec takes ({spec_args})"
    assert "```python" in body and "@hookimpl" in body and f"def {hook}(" in body, (
        f"{hook}: the section needs a python example implementing the hook")


@pytest.mark.parametrize("op", PRIMITIVE_OPS + FUSED_OPS)
def test_every_op_is_documented(op):
    """Each op's signature and contract are on the rendered contract page the guide links to
    (tests/test_backend_contract.py checks the page is current)."""
    assert "(backend-contract.md)" in DOC
    assert re.search(r"^- `" + op + r"\(.*`: \S", CONTRACT, re.M), (
        f"op {op!r} has no documented contract in docs/backend-contract.md")


def test_every_capability_is_documented():
    for cap in KNOWN_CAPABILITIES:
        assert f"`{cap}`" in DOC, cap


def test_documented_tolerances_are_the_kits():
    for name, tol in harness.TOLERANCES.items():
        row = re.search(r"^\| " + name + r" \| ([^|]+) \| ([^|]+) \|$", DOC, re.M)
        assert row, f"no tolerance row for {name}"
        assert float(row.group(1)) == tol.rtol and float(row.group(2)) == tol.atol, name


def test_documented_runner_options_exist():
    options = {a for action in build_parser()._actions for a in action.option_strings}
    for opt in ("--report", "--device", "-k", "--xfail", "--plugin", "--no-matrix"):
        assert opt in options and f"`{opt}" in DOC, opt
    for opt in ("--mscore-backend", "--mscore-device", "--mscore-report", "--mscore-xfail",
                "--mscore-plugin", "--mscore-no-matrix"):
        assert opt in DOC, opt


def test_relative_links_resolve():
    for target in re.findall(r"\]\((\.\./[^)#]+)\)", DOC):
        assert (ROOT / "docs" / target).resolve().exists(), target
