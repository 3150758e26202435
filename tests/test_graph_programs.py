"""GRAPH_MODE idioms of MindSpore's tutorials (``tests/programs/graph_programs.py``: keyword
arguments to ``construct``, custom optimizers assigning into ``ParameterTuple`` s and
returning them, ``ParameterTuple.clone``, a ``TrainOneStepCell`` subclass with
``ops.GradOperation`` and ``F.depend``, ``ms.jit`` with Python control flow on constants) on
every backend, against MindSpore 2.10's results in GRAPH_MODE (recorded with
``cd tests/programs && /tmp/ms/bin/python record_graph_oracle.py``)."""
import json
import os
import sys

import numpy as np
import pytest
from _helpers import available_backends, use_backend

import mscore as ms

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "programs"))
from graph_programs import GRAPH_PROGRAMS  # noqa: E402

with open(os.path.join(HERE, "programs", "mindspore_graph_results.json")) as f:
    MINDSPORE_RESULTS = json.load(f)

# float32 over a few optimizer steps: rounding grows a little with each step
RTOL, ATOL = 2e-4, 2e-5


@pytest.mark.parametrize("backend", available_backends())
@pytest.mark.parametrize("name", sorted(GRAPH_PROGRAMS))
def test_graph_program_matches_mindspore(name, backend):
    use_backend(backend)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        ms.set_seed(0)
        results = GRAPH_PROGRAMS[name](ms)
    finally:
        ms.set_context(backend="numpy", mode=ms.PYNATIVE_MODE)
    want = MINDSPORE_RESULTS[name]
    assert len(results) == len(want)
    np.testing.assert_allclose(results, want, rtol=RTOL, atol=ATOL)


def test_every_graph_program_was_recorded():
    assert sorted(GRAPH_PROGRAMS) == sorted(MINDSPORE_RESULTS)
