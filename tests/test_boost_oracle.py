"""``mscore.boost`` against MindSpore 2.10's recorded behaviour.

``tests/data/boost_oracle.json`` was made by ``tests/data/make_boost_fixtures.py`` with the real
MindSpore (``/tmp/ms/bin/python tests/data/make_boost_fixtures.py``): each case is a snippet
with the value or the exception type it gave, over the networks of ``tests/data/boost_nets.py``
(the same source builds them in both frameworks). Here the same snippets run with mscore's
names bound: every case on the numpy backend, a representative set on the other backends
(GRAPH_MODE too, where the step is compiled, with ``MSCORE_SLOW_TESTS=1``). Cases marked
``differs`` are checked one by one in ``tests/test_boost.py``.
"""
import os
import sys
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from _helpers import available_backends, use_backend
from _oracle import check_case, load

import mscore as ms
from mscore import _state, boost, nn

sys.path.insert(0, str(Path(__file__).parent / "data"))
import boost_nets

ORACLE = load("boost_oracle.json")
CASES = ORACLE["cases"]
SLOW = os.environ.get("MSCORE_SLOW_TESTS") == "1"


def names():
    """The names the snippets use, bound to mscore."""
    return {"boost": boost, "nn": nn, "ms": ms, "T": ms.Tensor, "np": np,
            "nets": boost_nets.build(ms), "fill": partial(boost_nets.fill, ms),
            "inputs": partial(boost_nets.inputs, ms)}


@pytest.fixture(autouse=True)
def _fresh():
    """numpy, PYNATIVE, and no AutoBoost made yet (the generator resets MindSpore's
    singleton before each case likewise)."""
    _state.reset()
    ms.set_context(backend="numpy", mode=ms.PYNATIVE_MODE)
    yield
    _state.reset()
    ms.set_context(backend="numpy", mode=ms.PYNATIVE_MODE)


SAME = sorted(name for name, spec in CASES.items() if not spec["differs"])


@pytest.mark.parametrize("name", SAME)
def test_same_as_mindspore(name):
    check_case(ORACLE, name, names())


def test_generator_and_signatures():
    import inspect
    assert ORACLE["mindspore"] == "2.10.0"
    assert sorted(ORACLE["signatures"]) == sorted(boost.__all__)
    for name, recorded in ORACLE["signatures"].items():
        obj = getattr(boost, name)
        target = obj.__init__ if inspect.isclass(obj) else obj
        assert str(inspect.signature(target)) == recorded, name


# The cases that run a network: less-BN on three block shapes, the FN head, gradient
# accumulation; with training (a frozen schedule, O1 and O2 end to end) where a step is cheap
# (jax dispatches every eager op through its own jit, so its training cases are slow-only).
BACKEND_CASES = ["less_bn_removes_basic", "less_bn_removes_inverted", "less_bn_removes_dense",
                 "common_head_last_fn", "gradient_accumulation"]
TRAINING_CASES = ["freeze_train_losses", "boost_train_cell_grad_accumulation", "o1_train_basic",
                  "o2_train_standalone"]
EAGER_OPS_SLOW = ("jax",)
# int64 Tensors become int32 on jax without x64, so the int32-only check cannot fire there.
NOT_ON = {"jax": {"freeze_opt_strategy_tensor_int64": "jax stores int64 as int32 (no x64)"}}


@pytest.mark.parametrize("backend", available_backends(exclude=("numpy",)))
def test_networks_on_every_backend(backend):
    use_backend(backend)
    if backend in EAGER_OPS_SLOW and not SLOW:
        pytest.skip(f"{backend}'s eager ops are slow here (MSCORE_SLOW_TESTS=1 runs them); "
                    f"its compiled O1 step is checked in test_boost.py")
    for name in BACKEND_CASES + TRAINING_CASES:
        _state.boost_active.set(None)
        check_case(ORACLE, name, names())


@pytest.mark.skipif(not SLOW, reason="set MSCORE_SLOW_TESTS=1 for every case on every backend")
@pytest.mark.parametrize("backend", available_backends(exclude=("numpy",)))
def test_every_case_on_every_backend(backend):
    use_backend(backend)
    for name in SAME:
        if name in NOT_ON.get(backend, {}):
            continue
        _state.boost_active.set(None)
        check_case(ORACLE, name, names())


GRAPH_CASES = ["o1_train_basic", "less_bn_removes_inverted", "boost_train_cell_grad_accumulation"]


@pytest.mark.skipif(not SLOW, reason="set MSCORE_SLOW_TESTS=1: compiling every group's step "
                                     "takes tens of seconds on jax")
@pytest.mark.parametrize("backend", available_backends())
def test_compiled_steps_match(backend):
    use_backend(backend)
    ms.set_context(mode=ms.GRAPH_MODE)
    for name in GRAPH_CASES:
        _state.boost_active.set(None)
        check_case(ORACLE, name, names())
