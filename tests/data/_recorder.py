"""What the recorders of case files share (``make_mint_nn_oracle.py``,
``make_tensor_methods_linalg_oracle.py``, ``make_tensor_numpy_mint_oracle.py``): each case is
a Python expression over the case file's ``inputs``, evaluated with the real MindSpore (the
oracle venv; never from mscore or its tests), and its result is written, encoded, to
``tests/data/<name>_oracle.json``; ``tests/_oracle.compare`` checks mscore's against it."""
import json
import os
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def encode(value, tensor_cls):
    """A JSON-able record of a case's result: ``{"kind": "tensor", "dtype", "shape",
    "values"}``, ``{"kind": "sequence", "items"}`` (a tuple or list) or ``{"kind": "python",
    "value"}`` (a bool, int or float as it is, anything else by its text)."""
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


def error(exc):
    """The record of a case MindSpore fails: the exception's type and the first line of its
    message (without the C++ call stack)."""
    return {"kind": "error", "type": type(exc).__name__,
            "message": str(exc).strip().split("\n")[0].strip()}


def record(name, cases, scope, ms):
    """Evaluate each ``(case name, expression)`` of ``cases`` with the names ``scope()`` gives
    (fresh for each case) and write the records to ``<name>_oracle.json``."""
    results = {}
    for case, expr in cases:
        try:
            results[case] = encode(eval(expr, scope()), ms.Tensor)
        except Exception as exc:  # recorded: the test expects the same failure
            results[case] = error(exc)
    write(name, results, ms)


def write(name, results, ms):
    """Write ``results`` (case name -> record) to ``<name>_oracle.json`` with the command that
    made them and MindSpore's version."""
    out = {"made_by": f"cd /tmp && /tmp/ms/bin/python tests/data/make_{name}_oracle.py",
           "mindspore_version": ms.__version__, "cases": results}
    with open(os.path.join(HERE, f"{name}_oracle.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


def quiet():
    """MindSpore's warnings off (they would drown the recorder's output)."""
    warnings.filterwarnings("ignore")


def in_child(fn):
    """``fn()`` (returning a JSON-able record) run in a forked child process, for cases that
    can kill MindSpore's process (its CPU kernels trap on ``MIN / -1``) or that leave it in a
    bad state (after some failures MindSpore 2.10 repeats the last error's message for later,
    valid calls). A child killed by a signal is recorded as ``{"kind": "crash", "signal"}``."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child: run, send the record, leave without cleanup
        os.close(read_end)
        try:
            out = fn()
        except Exception as exc:  # recorded: the test expects the same failure
            out = error(exc)
        with os.fdopen(write_end, "w") as f:
            json.dump(out, f)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as f:
        text = f.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return {"kind": "crash", "signal": os.WTERMSIG(status)}
    return json.loads(text)
