"""Record what MindSpore 2.10 does with numpy arrays given to ops, Cells and Model.predict
(``numpy_argument_cases.CASES``), and what rows NumpySlicesDataset gives for scalar columns.

Run with the real MindSpore (the oracle venv; never from mscore or its tests)::

    cd /tmp && /tmp/ms/bin/python /path/to/tests/data/make_numpy_argument_oracle.py

It writes ``tests/data/numpy_argument_oracle.json``: per case ``{"raises": type, "message":
the text before MindSpore's C++ call stack}`` or ``{"returns": type name, "dtype"}``; and
``"dataset_rows"``: the type, shape and dtype of each column as a map operation and the
dict iterator see it.
"""
import json
import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from numpy_argument_cases import CASES, inputs  # noqa: E402


def dataset_rows(ds):
    """``{"map": {...}, "iterator": {...}}``: per column of a NumpySlicesDataset with a
    vector, an int, a float and a str column, what a map operation receives and what the
    dict iterator (output_numpy) yields."""
    data = {"v": np.ones((2, 3), np.float32), "i": np.array([1, 2], np.int32),
            "f": [0.5, 1.5], "s": ["a b", "c"]}
    seen = {}

    def spy(column):
        def op(x):
            seen[column] = [type(x).__name__, list(np.shape(x)), str(np.asarray(x).dtype)]
            return x
        return op

    d = ds.NumpySlicesDataset(data, shuffle=False)
    for column in data:
        d = d.map(operations=spy(column), input_columns=[column])
    row = next(iter(d.create_dict_iterator(num_epochs=1, output_numpy=True)))
    return {"map": seen, "iterator": {k: [type(v).__name__, list(v.shape), str(v.dtype)]
                                      for k, v in row.items()}}


def main():
    warnings.filterwarnings("ignore")
    import mindspore as ms
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    out = {"made_by": "cd /tmp && /tmp/ms/bin/python "
                      "tests/data/make_numpy_argument_oracle.py",
           "mindspore_version": ms.__version__, "cases": {}}
    for name, expr in CASES:
        scope = dict(inputs(ms), ms=ms, np=np)
        try:
            value = eval(expr, scope)
        except Exception as exc:
            message = str(exc).split("\n\n----")[0].rstrip("\n")
            out["cases"][name] = {"raises": type(exc).__name__, "message": message}
        else:
            out["cases"][name] = {"returns": type(value).__name__,
                                  "dtype": str(np.asarray(value).dtype)}
    out["dataset_rows"] = dataset_rows(ms.dataset)
    with open(os.path.join(HERE, "numpy_argument_oracle.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
