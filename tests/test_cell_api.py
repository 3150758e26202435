"""Cell and container behaviour against MindSpore 2.10's recorded answers.

The cases live in ``tests/data/cell_api_cases.py`` and run unchanged on both frameworks;
MindSpore's answers were recorded with ``cd tests/data && /tmp/ms/bin/python make_cell_api.py``
into ``tests/data/mindspore_cell_api.json``. Cases that compute (hooks, recompute, containers
running their cells) run on every installed backend.
"""
import json
import math
import os
import sys

import pytest

import mscore as ms
from _helpers import available_backends, use_backend

DATA = os.path.join(os.path.dirname(__file__), "data")
sys.path.insert(0, DATA)
from cell_api_cases import CASES, attempt  # noqa: E402

with open(os.path.join(DATA, "mindspore_cell_api.json")) as _f:
    EXPECTED = json.load(_f)

COMPUTING = ("forward_hooks", "backward_hooks", "recompute", "sequential")


def _same(got, want, path="case"):
    if isinstance(want, float) or isinstance(got, float):
        assert isinstance(got, (int, float)) and not isinstance(got, bool), f"{path}: {got!r}"
        assert math.isclose(got, want, rel_tol=1e-5, abs_tol=1e-5), f"{path}: {got} != {want}"
    elif isinstance(want, list):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), \
            f"{path}: {got!r} != {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{path}[{i}]")
    elif isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), \
            f"{path}: keys {sorted(got)} != {sorted(want)}"
        for k in want:
            _same(got[k], want[k], f"{path}.{k}")
    else:
        assert got == want, f"{path}: {got!r} != {want!r}"


def _run(name):
    got = json.loads(json.dumps(attempt(lambda: CASES[name](ms))))
    _same(got, EXPECTED[name], name)


@pytest.mark.parametrize("name", sorted(n for n in CASES if n not in COMPUTING))
def test_cell_structure_matches_mindspore(name):
    _run(name)


@pytest.mark.parametrize("backend", available_backends())
@pytest.mark.parametrize("name", COMPUTING)
def test_cell_computation_matches_mindspore(name, backend):
    use_backend(backend)
    try:
        _run(name)
    finally:
        ms.set_context(backend="numpy")


def test_every_case_was_recorded():
    assert sorted(CASES) == sorted(EXPECTED)
