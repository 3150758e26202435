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
from _helpers import available_backends, use_backend

import mscore as ms

DATA = os.path.join(os.path.dirname(__file__), "data")
sys.path.insert(0, DATA)
import cell_api_cases  # noqa: E402
from cell_api_cases import CASES, attempt  # noqa: E402

cell_api_cases.ALL_BUILTIN_BASES = True

with open(os.path.join(DATA, "mindspore_cell_api.json")) as _f:
    EXPECTED = json.load(_f)

COMPUTING = ("forward_hooks", "backward_hooks", "recompute", "sequential")
SLOW = os.environ.get("MSCORE_SLOW_TESTS", "") not in ("", "0")
# jax dispatches each op through its own jit, so small cases cost seconds there: by default
# jax runs the case that exercises its own code (grad_boundary); all with MSCORE_SLOW_TESTS=1.
JAX_DEFAULT = ("backward_hooks",)


def computing_params(names, jax_default):
    """(name, backend) pairs: every installed backend, jax only for ``jax_default`` unless
    MSCORE_SLOW_TESTS is set."""
    return [(n, b) for n in names for b in available_backends()
            if b != "jax" or SLOW or n in jax_default]


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
    elif isinstance(want, str) and want.startswith("raises:"):
        assert isinstance(got, str) and got.startswith("raises:") and \
            want[len("raises:"):] in got[len("raises:"):].split("|"), \
            f"{path}: {got!r} is not {want!r}"
    else:
        assert got == want, f"{path}: {got!r} != {want!r}"


def _run(name):
    got = json.loads(json.dumps(attempt(lambda: CASES[name](ms))))
    _same(got, EXPECTED[name], name)


@pytest.mark.parametrize("name", sorted(n for n in CASES if n not in COMPUTING))
def test_cell_structure_matches_mindspore(name):
    _run(name)


@pytest.mark.parametrize("name,backend", computing_params(COMPUTING, JAX_DEFAULT))
def test_cell_computation_matches_mindspore(name, backend):
    use_backend(backend)
    try:
        _run(name)
    finally:
        ms.set_context(backend="numpy")


def test_every_case_was_recorded():
    assert sorted(CASES) == sorted(EXPECTED)


@pytest.mark.parametrize("backend", [b for b in available_backends() if b != "jax" or SLOW])
def test_backward_pre_hook_steers_a_train_step(backend):
    """A backward pre-hook that zeroes the gradient reaching the first layer freezes it in
    ``Model.train`` (TrainOneStepCell), while the second layer trains as without hooks."""
    import numpy as np
    nn = ms.nn
    use_backend(backend)
    try:
        rng = np.random.default_rng(0)
        x = rng.normal(size=(8, 3)).astype(np.float32)
        y = rng.normal(size=(8, 1)).astype(np.float32)
        calls = []

        def build(hooked):
            net = nn.SequentialCell(nn.Dense(3, 4, weight_init="ones", bias_init="zeros"),
                                    nn.Dense(4, 1, weight_init="ones", bias_init="zeros"))
            if hooked:
                net[0].register_backward_pre_hook(
                    lambda cell, grads: calls.append(len(grads)) or tuple(g * 0 for g in grads))
            model = ms.train.Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.01))
            model.train(1, ms.dataset.NumpySlicesDataset((x, y), shuffle=False).batch(4))
            return net

        hooked = build(True)
        assert calls == [1, 1]
        np.testing.assert_array_equal(hooked[0].weight.asnumpy(), np.ones((4, 3), np.float32))
        # numpy reference for the second layer: h = x @ 1 (layer 0 frozen), p = h @ w2.T
        h = x @ np.ones((3, 4))
        w2, b2 = np.ones((1, 4)), np.zeros(1)
        for i in (0, 4):
            d = 2 * (h[i:i + 4] @ w2.T + b2 - y[i:i + 4]) / 4
            w2, b2 = w2 - 0.01 * d.T @ h[i:i + 4], b2 - 0.01 * d.sum(0)
        np.testing.assert_allclose(hooked[1].weight.asnumpy(), w2, rtol=1e-4)
    finally:
        ms.set_context(backend="numpy")
