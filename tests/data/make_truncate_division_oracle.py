"""Record MindSpore's results of ``truncate_division_cases.CASES`` (``ops.truncate_div``,
``ops.truncate_mod`` and their Primitives) and the gradients of ``GRADIENT_CASES``.

Run with the real MindSpore (the oracle venv; never from mscore or its tests)::

    cd /tmp && /tmp/ms/bin/python /path/to/tests/data/make_truncate_division_oracle.py

It writes ``tests/data/truncate_division_oracle.json``: for each case the result as
``_recorder.encode`` gives it (integers exact), the error MindSpore raises, or the signal
that killed its process (each case runs in a child process: the int32/int64 CPU kernels
trap on ``MIN / -1``). A gradient case records ``[d/dx, d/dy]``.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _recorder
from truncate_division_cases import CASES, GRADIENT_CASES, inputs


def main():
    _recorder.quiet()
    import mindspore as ms
    from mindspore import ops

    def scope():
        return dict(inputs(ms), ms=ms, ops=ops, np=np)

    def result(expr):
        return _recorder.encode(eval(expr, scope()), ms.Tensor)

    def gradient(name):
        names = scope()
        fn = getattr(ops, name)
        grads = ms.grad(lambda a, b: fn(a, b).sum(), grad_position=(0, 1))(names["gx"],
                                                                          names["gy"])
        return _recorder.encode(grads, ms.Tensor)

    results = {case: _recorder.in_child(lambda expr=expr: result(expr)) for case, expr in CASES}
    results.update({case: _recorder.in_child(lambda fn=fn: gradient(fn))
                    for case, fn in GRADIENT_CASES})
    _recorder.write("truncate_division", results, ms)


if __name__ == "__main__":
    main()
