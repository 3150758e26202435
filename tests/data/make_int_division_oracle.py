"""Record MindSpore's results of ``int_division_cases.CASES`` (integer floor division,
remainders and truncating division).

Run with the real MindSpore (the oracle venv; never from mscore or its tests)::

    cd /tmp && /tmp/ms/bin/python /path/to/tests/data/make_int_division_oracle.py

It writes ``tests/data/int_division_oracle.json``: for each case, the result as
``_recorder.encode`` gives it (integers exact); a case MindSpore fails is recorded with its
error.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _recorder
from int_division_cases import CASES, inputs


def main():
    _recorder.quiet()
    import mindspore as ms
    import mindspore.numpy as mnp
    from mindspore import mint, ops
    _recorder.record("int_division", CASES,
                     lambda: dict(inputs(ms), ms=ms, ops=ops, mnp=mnp, mint=mint, np=np), ms)


if __name__ == "__main__":
    main()
