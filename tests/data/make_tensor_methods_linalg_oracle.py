"""Record MindSpore's results of ``tensor_methods_linalg_cases.CASES``.

Run with the real MindSpore (the oracle venv; never from mscore or its tests)::

    cd /tmp && /tmp/ms/bin/python /path/to/tests/data/make_tensor_methods_linalg_oracle.py

It writes ``tests/data/tensor_methods_linalg_oracle.json``: for each case, the result as
``_recorder.encode`` gives it, or ``{"kind": "error", "type", "message"}`` (the first line of
MindSpore's message, without its C++ call stack).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _recorder
from tensor_methods_linalg_cases import CASES, inputs


def main():
    _recorder.quiet()
    import mindspore as ms
    _recorder.record("tensor_methods_linalg", CASES, lambda: dict(inputs(ms), ms=ms, np=np), ms)


if __name__ == "__main__":
    main()
