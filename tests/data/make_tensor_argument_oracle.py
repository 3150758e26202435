"""Record what MindSpore does with ``tensor_argument_cases.CASES`` (bad arguments of Tensor
methods): the exception's type and first line, or the result's shape and dtype.

Run with the real MindSpore (the oracle venv; never from mscore or its tests)::

    cd /tmp && /tmp/ms/bin/python /path/to/tests/data/make_tensor_argument_oracle.py

It writes ``tests/data/tensor_argument_oracle.json``. Each case runs in a child process:
after some failures MindSpore 2.10 repeats the last error's message for later valid calls.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _recorder
from tensor_argument_cases import CASES, inputs, outcome


def main():
    _recorder.quiet()
    import mindspore as ms

    def run(expr):
        value = eval(expr, inputs(ms))
        if isinstance(value, ms.Tensor):
            value.asnumpy()   # MindSpore runs the kernel (and raises) only here
        return outcome(value, ms)

    results = {case: _recorder.in_child(lambda expr=expr: run(expr)) for case, expr in CASES}
    _recorder.write("tensor_argument", results, ms)


if __name__ == "__main__":
    main()
