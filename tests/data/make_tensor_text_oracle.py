"""Record MindSpore's ``repr`` and ``str`` of the tensors and Parameters of
``tensor_text_cases.CASES``.

Run with the real MindSpore (the oracle venv; never from mscore or its tests)::

    cd /tmp && /tmp/ms/bin/python /path/to/tests/data/make_tensor_text_oracle.py

It writes ``tests/data/tensor_text_oracle.json``: for each case ``{"repr", "str"}``, the
texts in full.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _recorder
from tensor_text_cases import CASES


def main():
    _recorder.quiet()
    import mindspore as ms

    def texts(expr):
        value = eval(expr, {"ms": ms, "T": ms.Tensor, "np": np})
        return {"repr": repr(value), "str": str(value)}

    results = {case: _recorder.in_child(lambda expr=expr: texts(expr)) for case, expr in CASES}
    _recorder.write("tensor_text", results, ms)


if __name__ == "__main__":
    main()
