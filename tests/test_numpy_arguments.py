"""MindSpore's rule for numpy arrays where Tensors are taken, against MindSpore 2.10's
recorded behaviour (``tests/data/numpy_argument_oracle.json``, made by
``tests/data/make_numpy_argument_oracle.py`` with the real MindSpore): every op, functional
or Primitive, refuses a numpy array with a TypeError ("Failed calling Add with ..."), as do
Cells and ``Model.predict``; numpy's own operators given a Tensor compute in numpy; and
NumpySlicesDataset gives scalar columns as 0-d arrays."""
import json
import os
import re
import sys

import numpy as np
import pytest

import mscore as ms

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "data"))
from numpy_argument_cases import CASES, inputs  # noqa: E402

with open(os.path.join(HERE, "data", "numpy_argument_oracle.json")) as _f:
    ORACLE = json.load(_f)

# MindSpore's op message: 'Failed calling Add with "Add()(input=..., other=...)".\nThe valid
# calling should be: \n"Add()(input=<Number, Tensor>, ...)".' (mscore names the refused
# argument only)
OP_MESSAGE = re.compile(r'^Failed calling (\w+) with "\1(?:\([^)]*\))?\((.*)\)"\.\n'
                        r'The valid calling should be: \n"\1(?:\([^)]*\))?\((.*)\)"\.$')
ARRAY = "=<class 'numpy.ndarray'>"
# mscore's words after MindSpore's, on a line of their own
HINT = "\nHint: wrap the numpy array with ms.Tensor(x)."


def _mindspores_part(message):
    """``message`` without mscore's hint, which must end it."""
    assert message.endswith(HINT), message
    return message[:-len(HINT)]


def _run(expr):
    scope = dict(inputs(ms), ms=ms, np=np)
    return eval(expr, scope)


@pytest.mark.parametrize("name,expr", CASES, ids=[c[0] for c in CASES])
def test_same_outcome_as_mindspore(name, expr):
    want = ORACLE["cases"][name]
    if "returns" in want:
        value = _run(expr)
        assert type(value).__name__ == want["returns"], name
        assert str(np.asarray(value).dtype) == want["dtype"], name
        return
    with pytest.raises(Exception) as info:
        _run(expr)
    assert type(info.value).__name__ == want["raises"], (name, info.value)


@pytest.mark.parametrize("name", [c[0] for c in CASES
                                  if ORACLE["cases"][c[0]].get("message", "").startswith(
                                      "Failed calling") and not c[0].startswith("nn.")])
def test_op_message_has_mindspores_form(name):
    want = ORACLE["cases"][name]["message"]
    with pytest.raises(TypeError) as info:
        _run(dict(CASES)[name])
    ours = OP_MESSAGE.match(_mindspores_part(str(info.value)))
    theirs = OP_MESSAGE.match(want)
    assert ours and theirs, (str(info.value), want)
    # the refused argument, named as MindSpore names it
    refused = re.search(r"(\w+)" + re.escape(ARRAY), ours.group(2)).group(1)
    assert f"{refused}{ARRAY}" in theirs.group(2)
    # the op: a Primitive by MindSpore's class name, a function by its own name
    # (MindSpore names the primitive behind it: Add for add, MatMulExt for matmul)
    op, their_op = ours.group(1), theirs.group(1)
    if "()(" in dict(CASES)[name]:
        assert op == their_op
    else:
        assert their_op.lower() in (op.lower(), op.lower() + "ext"), (op, their_op)


def test_cell_and_predict_messages_are_mindspores():
    dense = _mindspores_part(str(pytest.raises(TypeError, _run, "net(a)").value))
    want = ORACLE["cases"]["Dense(array)"]["message"]
    pattern = r"^For .+, the input argument must be Tensor, but got <class 'numpy.ndarray'>\.$"
    assert re.match(pattern, dense) and re.match(pattern, want), (dense, want)
    predict = _mindspores_part(str(pytest.raises(TypeError, _run,
                                                 "ms.train.Model(net).predict(a)").value))
    assert predict == ORACLE["cases"]["Model.predict(array)"]["message"]


def test_numpy_slices_rows_are_arrays_as_in_mindspore():
    from make_numpy_argument_oracle import dataset_rows
    assert dataset_rows(ms.dataset) == ORACLE["dataset_rows"]


def test_refusing_numpy_costs_nothing_for_tensors_and_numbers():
    t = ms.Tensor(np.array([1.0, 2.0], np.float32))
    np.testing.assert_allclose(ms.ops.add(t, 1.5).asnumpy(), [2.5, 3.5])
    np.testing.assert_allclose(ms.ops.mul(np.float32(2), t).asnumpy(), [2.0, 4.0])
