"""mscore.dataset against MindSpore 2.10's recorded behaviour (``tests/data/dataset_oracle.json``,
made by ``tests/data/make_dataset_oracle.py``): the same snippet, with mscore's names bound,
must give the same result (arrays with the same shape, dtype and values) or raise the same
exception type. Cases MindSpore and mscore treat differently on purpose (``differs``) are
checked one by one at the end."""
import json
import math
import os

import numpy as np
import pytest
from _oracle import load

import mscore as ms
from mscore import _state
from mscore import dataset as ds
from mscore.dataset import transforms, vision

ORACLE = load("dataset_oracle.json")
CASES = ORACLE["cases"]
RTOL, ATOL = 1e-5, 1e-6


@pytest.fixture(autouse=True)
def _fresh_config():
    _state.reset()
    ms.set_context(backend="numpy", mode=ms.PYNATIVE_MODE)
    yield
    _state.reset()


@pytest.fixture(scope="module")
def case_dirs(tmp_path_factory):
    """A folder per case that writes files (most write none)."""
    return lambda name: str(tmp_path_factory.mktemp(name))


def run_case(name, case_dir):
    code = CASES[name]["code"]
    ns = {"ds": ds, "vision": vision, "transforms": transforms, "np": np, "ms": ms,
          "TMP": case_dir(name) if "TMP" in code else None, "os": os, "json": json}
    exec(ORACLE["prelude"], ns)
    exec(code, ns)
    return ns.get("result")


def _number(x):
    return float(x) if isinstance(x, str) else x


def assert_matches(expected, actual, where, tol=None):
    """``actual`` has the kind, shape, dtype and numbers MindSpore recorded."""
    if "array" in expected:
        assert isinstance(actual, np.ndarray), f"{where}: expected an array, got {actual!r}"
        assert list(actual.shape) == expected["shape"], f"{where}: shape {actual.shape}"
        assert str(actual.dtype) == expected["dtype"], f"{where}: dtype {actual.dtype}"
        _compare_values(expected["array"], actual.tolist(), where, tol)
        return
    kind, value = next(iter(expected.items()))
    if kind in ("int", "float"):
        assert isinstance(actual, (int, float, np.integer, np.floating)) and \
            not isinstance(actual, (bool, np.bool_)), f"{where}: expected a number, got {actual!r}"
        _compare_values(value, actual, where, tol)
    elif kind == "list":
        assert isinstance(actual, (list, tuple)) and len(actual) == len(value), \
            f"{where}: expected {len(value)} items, got {actual!r}"
        for i, (e, a) in enumerate(zip(value, actual)):
            assert_matches(e, a, f"{where}[{i}]", tol)
    elif kind == "dict":
        assert isinstance(actual, dict) and sorted(actual) == sorted(value), \
            f"{where}: keys {list(actual) if isinstance(actual, dict) else actual!r}"
        for key in value:
            assert_matches(value[key], actual[key], f"{where}[{key!r}]", tol)
    elif kind in ("str", "bool"):
        assert actual == value, f"{where}: {actual!r} != {value!r}"
    elif kind == "none":
        assert actual is None, f"{where}: {actual!r}"
    else:
        raise AssertionError(f"{where}: unknown encoding {expected}")


def _compare_values(expected, actual, where, tol):
    if isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), \
            f"{where}: {actual!r} != {expected!r}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            _compare_values(e, a, f"{where}[{i}]", tol)
        return
    if isinstance(expected, str) and expected not in ("nan", "inf", "-inf"):
        assert actual == expected, f"{where}: {actual!r} != {expected!r}"
        return
    e = _number(expected)
    if isinstance(e, float) and math.isnan(e):
        assert math.isnan(actual), where
    elif tol is not None:
        assert abs(actual - e) <= tol, f"{where}: {actual} differs from {e} by more than {tol}"
    elif isinstance(e, float) or isinstance(actual, float):
        assert actual == pytest.approx(e, rel=RTOL, abs=ATOL), f"{where}: {actual} != {e}"
    else:
        assert actual == e, f"{where}: {actual} != {e}"


SAME = sorted(n for n, c in CASES.items() if not c.get("differs"))


@pytest.mark.parametrize("name", SAME)
def test_same_as_mindspore(name, case_dirs):
    spec = CASES[name]
    if "error" in spec:
        with pytest.raises(Exception) as info:
            run_case(name, case_dirs)
        assert type(info.value).__name__ == spec["error"]["type"], \
            f"{name}: MindSpore raised {spec['error']['type']}: {spec['error']['message']}; " \
            f"mscore raised {type(info.value).__name__}: {info.value}"
        assert str(info.value), f"{name}: the message is empty"
    else:
        assert_matches(spec["result"], run_case(name, case_dirs), name, spec.get("tol"))


# -- deliberate differences (docs/differences.md) ------------------------------------------------
def test_differs_cases_are_the_documented_ones():
    assert sorted(n for n, c in CASES.items() if c.get("differs")) == [
        "csv_empty_numeric_field", "csv_type_mismatch", "image_folder_decode_bad_file",
        "per_batch_map_more_outputs_order"]


def test_per_batch_map_more_outputs_order(case_dirs):
    # MindSpore: the same set of columns (in an order of its internal hash map).
    assert_matches(CASES["per_batch_map_more_outputs_order"]["result"],
                   run_case("per_batch_map_more_outputs_order", case_dirs), "sorted")
    d = ds.NumpySlicesDataset({"a": np.arange(6), "b": np.arange(6) * 2, "c": np.arange(6) * 3},
                              shuffle=False)
    d = d.batch(4, per_batch_map=lambda b, info: ([x + 1 for x in b], [x + 2 for x in b]),
                input_columns=["b"], output_columns=["p", "q"])
    assert d.get_col_names() == ["p", "q", "a", "c"]


def test_csv_malformed_line_is_a_value_error_naming_the_file(case_dirs):
    assert CASES["csv_type_mismatch"]["error"]["type"] == "RuntimeError"
    with pytest.raises(ValueError, match=r"t\.csv: line 1, column 0: 'a' is not a int"):
        run_case("csv_type_mismatch", case_dirs)


def test_csv_empty_numeric_field_takes_the_column_default(case_dirs):
    assert CASES["csv_empty_numeric_field"]["error"]["type"] == "RuntimeError"
    out = run_case("csv_empty_numeric_field", case_dirs)
    assert [[x.item() for x in row] for row in out] == [[1, 2.5, "x"], [5, 1.5, "w"]]
    assert out[1][1].dtype == np.float32


def test_undecodable_image_is_a_value_error_naming_the_file(case_dirs):
    assert CASES["image_folder_decode_bad_file"]["error"]["type"] == "RuntimeError"
    with pytest.raises(ValueError, match=r"notes\.txt: cannot decode the image"):
        run_case("image_folder_decode_bad_file", case_dirs)
