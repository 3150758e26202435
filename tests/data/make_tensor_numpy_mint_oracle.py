"""Record MindSpore's results of ``tensor_numpy_mint_cases.CASES``.

Run with the real MindSpore (the oracle venv; never from mscore or its tests)::

    cd /tmp && /tmp/ms/bin/python /path/to/tests/data/make_tensor_numpy_mint_oracle.py

It writes ``tests/data/tensor_numpy_mint_oracle.json``: for each case, the result as
``_recorder.encode`` gives it; a case MindSpore fails is recorded with its error.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _recorder
from tensor_numpy_mint_cases import CASES, inputs


def main():
    _recorder.quiet()
    import mindspore as ms
    import mindspore.numpy as mnp
    from mindspore import mint
    _recorder.record("tensor_numpy_mint", CASES,
                     lambda: dict(inputs(ms), ms=ms, mnp=mnp, mint=mint, np=np), ms)


if __name__ == "__main__":
    main()
