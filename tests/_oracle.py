"""Running the recorded MindSpore snippets of ``tests/data/*_oracle.json`` against mscore and
comparing what they give (shared by the oracle test modules); :func:`compare` for the
fixtures that record case expressions' results (``tests/data/_recorder.py``), which the tests
run on every installed backend (``_helpers.each_backend``)."""
import json
import math
from pathlib import Path

import numpy as np
import pytest

import mscore as ms

RTOL, ATOL = 1e-5, 1e-6


def load(name):
    """The fixture ``tests/data/<name>``."""
    return json.loads((Path(__file__).parent / "data" / name).read_text())


def run(oracle, code, names):
    """Run the fixture's prelude and ``code`` with ``names`` bound; returns the namespace."""
    ns = dict(names)
    exec(oracle["prelude"], ns)
    exec(code, ns)
    return ns


def _decode(value):
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return float(value) if isinstance(value, str) else value


def assert_matches(expected, actual, where="result"):
    """``actual`` (an mscore value) has the kind, shape and numbers MindSpore recorded."""
    if "array" in expected:
        assert isinstance(actual, np.ndarray), f"{where}: expected an array, got {actual!r}"
        assert list(actual.shape) == expected["shape"], f"{where}: shape {actual.shape}"
        want = np.array(_decode(expected["array"]), dtype=np.float64)
        np.testing.assert_allclose(actual.astype(np.float64), want, rtol=RTOL, atol=ATOL,
                                   equal_nan=True, err_msg=where)
        return
    kind, value = next(iter(expected.items()))
    if kind in ("float", "int"):
        assert isinstance(actual, (int, float, np.integer, np.floating)) and \
            not isinstance(actual, (bool, np.bool_)), \
            f"{where}: expected a number, got {actual!r}"
        want = _decode(value)
        if math.isnan(want):
            assert math.isnan(actual), where
        elif math.isinf(want):
            assert actual == want, where
        else:
            assert actual == pytest.approx(want, rel=RTOL, abs=ATOL), where
    elif kind == "list":
        assert isinstance(actual, (list, tuple)) and len(actual) == len(value), \
            f"{where}: expected {len(value)} items, got {actual!r}"
        for i, (e, a) in enumerate(zip(value, actual)):
            assert_matches(e, a, f"{where}[{i}]")
    elif kind == "dict":
        assert isinstance(actual, dict) and set(actual) == set(value), f"{where}: {actual!r}"
        for key in value:
            assert_matches(value[key], actual[key], f"{where}[{key!r}]")
    elif kind in ("str", "bool"):
        assert actual == value, f"{where}: {actual!r} != {value!r}"
    elif kind == "none":
        assert actual is None, where
    else:
        raise AssertionError(f"{where}: unknown encoding {expected}")


def check_case(oracle, name, names):
    """Run case ``name`` with mscore's ``names``: the same exception type as MindSpore (with
    a message), or a matching result."""
    spec = oracle["cases"][name]
    if "error" in spec:
        with pytest.raises(Exception) as info:
            run(oracle, spec["code"], names)
        assert type(info.value).__name__ == spec["error"]["type"], \
            f"{name}: MindSpore raised {spec['error']['type']}: {spec['error']['message']}; " \
            f"mscore raised {type(info.value).__name__}: {info.value}"
        assert str(info.value), f"{name}: the message is empty"
    else:
        assert_matches(spec["result"], run(oracle, spec["code"], names).get("result"), name)


def _text(value):
    return str(value).lower().replace("mindspore.", "")


def _compare_python(ours, want, name):
    """A Python value MindSpore returned: the same (a dtype, shape or list by its text,
    case aside), never a Tensor."""
    assert not isinstance(ours, ms.Tensor), (name, ours, want)
    if isinstance(want, str):
        assert _text(ours) == _text(want), (name, ours, want)
    elif isinstance(want, bool):
        assert isinstance(ours, (bool, np.bool_)) and bool(ours) == want, (name, ours, want)
    else:
        assert isinstance(ours, (int, float, np.integer, np.floating)) and \
            not isinstance(ours, (bool, np.bool_)), (name, ours, want)
        assert ours == pytest.approx(want), (name, ours, want)


def compare(ours, want, name, rtol, atol):
    """``ours`` (mscore's result of case ``name``) is what MindSpore recorded in ``want``
    (``tests/data/_recorder.encode``): the same structure, Python values, and tensors of the
    same shape and dtype whose values agree within ``rtol``/``atol``."""
    if want["kind"] == "sequence":
        assert isinstance(ours, (tuple, list)) and len(ours) == len(want["items"]), name
        for o, w in zip(ours, want["items"]):
            compare(o, w, name, rtol, atol)
        return
    if want["kind"] == "python":
        _compare_python(ours, want["value"], name)
        return
    assert isinstance(ours, ms.Tensor), (name, type(ours))
    arr = ours.asnumpy()
    assert list(arr.shape) == want["shape"], (name, arr.shape, want["shape"])
    assert str(arr.dtype) == want["dtype"], (name, arr.dtype, want["dtype"])
    np.testing.assert_allclose(arr.astype(np.float64), np.asarray(want["values"], np.float64),
                               rtol=rtol, atol=atol, err_msg=name)
