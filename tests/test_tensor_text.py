"""``repr`` and ``str`` of Tensors and Parameters are MindSpore 2.10's, character for
character (``tests/data/tensor_text_oracle.json``, made by
``cd /tmp && /tmp/ms/bin/python tests/data/make_tensor_text_oracle.py``; the tensors are in
``tests/data/tensor_text_cases.py``): 0-d, 1-d, 2-d and higher tensors of every kind of
dtype, wrapped lines, summaries with ``...``, empty tensors, special values. The text is
made on the host from the values, so the default backend checks it."""
import sys
from pathlib import Path

import numpy as np
import pytest
from _oracle import load

import mscore as ms

sys.path.insert(0, str(Path(__file__).parent / "data"))
from tensor_text_cases import CASES

ORACLE = load("tensor_text_oracle.json")["cases"]


def _value(expr):
    return eval(expr, {"ms": ms, "T": ms.Tensor, "np": np})


@pytest.mark.parametrize("name,expr", CASES, ids=[name for name, _ in CASES])
def test_repr_as_mindspore(name, expr):
    assert repr(_value(expr)) == ORACLE[name]["repr"]


@pytest.mark.parametrize("name,expr", CASES, ids=[name for name, _ in CASES])
def test_str_as_mindspore(name, expr):
    assert str(_value(expr)) == ORACLE[name]["str"]


def test_recorded_cases_are_the_cases():
    """The fixture holds exactly the cases of the case file (re-record after editing it)."""
    assert set(ORACLE) == {name for name, _ in CASES}
