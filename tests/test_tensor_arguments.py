"""Bad arguments of ``Tensor.reshape``, ``view``, ``permute``, ``new_zeros``, ``new_ones``
and ``set_const_arg`` fail with MindSpore 2.10's exception type and message, and the good
ones give its shape and dtype (``tests/data/tensor_argument_oracle.json``, made by
``cd /tmp && /tmp/ms/bin/python tests/data/make_tensor_argument_oracle.py``; the cases are in
``tests/data/tensor_argument_cases.py``). Argument checks run before any backend does, so
the default backend runs them."""
import sys
from pathlib import Path

import pytest
from _oracle import load

import mscore as ms

sys.path.insert(0, str(Path(__file__).parent / "data"))
from tensor_argument_cases import CASES, inputs, outcome

ORACLE = load("tensor_argument_oracle.json")["cases"]
# Cases whose message mscore cannot word as MindSpore does, with the reason (the type is
# still MindSpore's).
WORDING_DIFFERS = {
    "new_zeros_two_ints": "MindSpore names the position of a dtype given positionally; "
                          "mscore's signature (size, dtype=None) cannot tell the two apart",
}


@pytest.mark.parametrize("name,expr", CASES, ids=[name for name, _ in CASES])
def test_as_mindspore(name, expr):
    """MindSpore's exception type and first line of its message, or its result's shape and
    dtype."""
    want = ORACLE[name]
    try:
        got = outcome(eval(expr, inputs(ms)), ms)
    except (TypeError, ValueError) as exc:
        got = {"kind": "error", "type": type(exc).__name__,
               "message": str(exc).strip().split("\n")[0].strip()}
    if name in WORDING_DIFFERS:
        assert got["kind"] == want["kind"] == "error" and got["type"] == want["type"], got
        assert got["message"] != want["message"], f"{name}: now worded as MindSpore's"
        return
    assert got == want


def test_recorded_cases_are_the_cases():
    """The fixture holds exactly the cases of the case file (re-record after editing it)."""
    assert set(ORACLE) == {name for name, _ in CASES}
