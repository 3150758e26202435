"""Record MindSpore's results of ``tensor_methods_linalg_cases.CASES``.

Run with the real MindSpore (the oracle venv; never from mscore or its tests)::

    cd /tmp && /tmp/ms/bin/python /path/to/tests/data/make_tensor_methods_linalg_oracle.py

It writes ``tests/data/tensor_methods_linalg_oracle.json``: for each case, the result as
``{"kind": "tensor", "dtype", "shape", "values"}``, ``{"kind": "sequence", "items"}``,
``{"kind": "python", "value"}``, or ``{"kind": "error", "type", "message"}`` (the first
line of MindSpore's message, without its C++ call stack).
"""
import json
import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tensor_methods_linalg_cases import CASES, inputs  # noqa: E402


def encode(value, tensor_cls):
    """A JSON-able record of a case's result."""
    if isinstance(value, tensor_cls):
        arr = value.asnumpy()
        return {"kind": "tensor", "dtype": str(arr.dtype), "shape": list(arr.shape),
                "values": arr.astype(np.float64).tolist() if arr.dtype.kind == "f"
                else arr.tolist()}
    if isinstance(value, (tuple, list)):
        return {"kind": "sequence", "items": [encode(v, tensor_cls) for v in value]}
    if isinstance(value, (bool, int, float)):
        return {"kind": "python", "value": value}
    return {"kind": "python", "value": str(value)}


def main():
    warnings.filterwarnings("ignore")
    import mindspore as ms
    out = {"made_by": "cd /tmp && /tmp/ms/bin/python "
                      "tests/data/make_tensor_methods_linalg_oracle.py",
           "mindspore_version": ms.__version__, "cases": {}}
    for name, expr in CASES:
        scope = dict(inputs(ms), ms=ms, np=np)
        try:
            out["cases"][name] = encode(eval(expr, scope), ms.Tensor)
        except Exception as exc:  # recorded: the test expects the same failure
            message = str(exc).strip().split("\n")[0].strip()
            out["cases"][name] = {"kind": "error", "type": type(exc).__name__,
                                  "message": message}
    with open(os.path.join(HERE, "tensor_methods_linalg_oracle.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
