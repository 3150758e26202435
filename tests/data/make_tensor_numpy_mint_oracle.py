"""Record MindSpore's results of ``tensor_numpy_mint_cases.CASES``.

Run with the real MindSpore (the oracle venv; never from mscore or its tests)::

    cd /tmp && /tmp/ms/bin/python /path/to/tests/data/make_tensor_numpy_mint_oracle.py

It writes ``tests/data/tensor_numpy_mint_oracle.json``: for each case, the result as
``{"kind": "tensor", "dtype", "shape", "values"}``, a list of those (tuples), or
``{"kind": "python", "value"}``; a case MindSpore fails is recorded with its error.
"""
import json
import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tensor_numpy_mint_cases import CASES, inputs  # noqa: E402


def encode(value, tensor_cls):
    """A JSON-able record of a case's result."""
    if isinstance(value, tensor_cls):
        arr = value.asnumpy()
        return {"kind": "tensor", "dtype": str(arr.dtype), "shape": list(arr.shape),
                "values": arr.astype(np.float64).tolist() if arr.dtype.kind == "f"
                else arr.tolist()}
    if isinstance(value, (tuple, list)):
        return {"kind": "sequence", "items": [encode(v, tensor_cls) for v in value]}
    if isinstance(value, tuple(type(v) for v in (1, 1.0, True))):
        return {"kind": "python", "value": value}
    return {"kind": "python", "value": str(value)}


def main():
    warnings.filterwarnings("ignore")
    import mindspore as ms
    import mindspore.numpy as mnp
    from mindspore import mint
    out = {"made_by": "cd /tmp && /tmp/ms/bin/python tests/data/make_tensor_numpy_mint_oracle.py",
           "mindspore_version": ms.__version__, "cases": {}}
    for name, expr in CASES:
        scope = dict(inputs(ms), ms=ms, mnp=mnp, mint=mint, np=np)
        try:
            out["cases"][name] = encode(eval(expr, scope), ms.Tensor)
        except Exception as exc:  # recorded: the test expects the same kind of failure
            out["cases"][name] = {"kind": "error", "type": type(exc).__name__}
    with open(os.path.join(HERE, "tensor_numpy_mint_oracle.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
