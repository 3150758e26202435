"""Record MindSpore 2.10's results for ``tests/data/ops_cases.py``.

Run with the real MindSpore (never from the tests)::

    /tmp/ms/bin/python tests/data/make_ops_oracle.py

It writes ``tests/data/mindspore_ops_oracle.json``: for every case of ``CASES`` the result
encoded by :func:`encode` (or the exception, if MindSpore raised one), and for every case
of ``ERROR_CASES`` the exception types MindSpore raises. MindSpore's type can depend on
whether the op ran before (a Python-side check on the first call, a kernel check later), so
each error case runs once in a fresh process and once after all the other cases, and every
type seen is kept (null: that run raised nothing).
"""
import json
import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ops_cases  # noqa: E402

OUT = os.path.join(HERE, "mindspore_ops_oracle.json")


def encode(value):
    """JSON for a result: Tensors as dtype/shape/values, tuples and lists recursively,
    dtypes by name, Python scalars as they are."""
    import mindspore as ms
    if isinstance(value, ms.Tensor):  # Parameters included
        arr = value.asnumpy()
        if arr.dtype.kind == "f":
            values = [None if not np.isfinite(v) else float(v) for v in arr.reshape(-1)]
            specials = {i: repr(float(v)) for i, v in enumerate(arr.reshape(-1))
                        if not np.isfinite(v)}
        else:
            values, specials = arr.reshape(-1).tolist(), {}
        out = {"tensor": str(value.dtype).lower(), "shape": list(arr.shape), "values": values}
        if specials:
            out["specials"] = specials
        return out
    if isinstance(value, (tuple, list)):
        return {type(value).__name__: [encode(v) for v in value]}
    if isinstance(value, ms.dtype.Type):
        return {"dtype": str(value).lower()}
    if isinstance(value, (bool, int, float, str)) or value is None:
        return {"py": value}
    if isinstance(value, np.ndarray):
        return {"ndarray": value.tolist()}
    return {"other": type(value).__name__}


def namespace():
    import mindspore as ms
    from mindspore import nn, ops
    from mindspore.ops import composite as C
    from mindspore.ops import functional as F
    from mindspore.ops import operations as P
    ns = {"ms": ms, "ops": ops, "P": P, "F": F, "C": C, "nn": nn, "np": np, "T": ms.Tensor,
          "Param": ms.Parameter}
    ns.update(ops_cases.arrays())
    return ns


def run(code, ns):
    """Evaluate a case: an expression, or statements that set ``out``. Statements run from
    a real file: MindSpore's autodiff reads the source of the functions it differentiates."""
    try:
        return eval(compile(code, "<case>", "eval"), ns)
    except SyntaxError:
        import tempfile
        scope = dict(ns, __name__="ops_case")
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
            f.write(code + "\n")
        try:
            exec(compile(code, f.name, "exec"), scope)
        finally:
            os.unlink(f.name)
        return scope["out"]


def raised_types():
    """``{case id: exception type name or None}`` for every error case."""
    return {case_id: raised_type(code) for case_id, code in ops_cases.ERROR_CASES}


def raised_type(code):
    """The name of the exception type ``code`` raises, or None."""
    try:
        run(code, namespace())
    except Exception as exc:
        return type(exc).__name__
    return None


def raised_in_fresh_process(case_id):
    """:func:`raised_type` of one error case in a new interpreter (nothing ran before)."""
    import subprocess
    code = dict(ops_cases.ERROR_CASES)[case_id]
    script = (f"import sys, warnings; warnings.filterwarnings('ignore'); "
              f"sys.path.insert(0, {HERE!r}); import make_ops_oracle as m; "
              f"import mindspore as ms; ms.set_context(device_target='CPU'); "
              f"print('RAISED=' + str(m.raised_type({code!r})))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=600).stdout
    name = [line for line in out.splitlines() if line.startswith("RAISED=")][-1][7:]
    return None if name == "None" else name


def main():
    warnings.filterwarnings("ignore")
    import mindspore as ms
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    results = {}
    fresh = {case_id: raised_in_fresh_process(case_id) for case_id, _ in ops_cases.ERROR_CASES}
    for case_id, code in ops_cases.CASES:
        try:
            results[case_id] = encode(run(code, namespace()))
        except Exception as exc:
            results[case_id] = {"raises": type(exc).__name__}
    warm = raised_types()
    errors = {k: sorted({fresh[k], warm[k]}, key=str) for k in fresh}
    doc = {"made_by": "/tmp/ms/bin/python tests/data/make_ops_oracle.py",
           "mindspore_version": ms.__version__, "results": results, "errors": errors}
    with open(OUT + ".tmp", "w") as f:
        json.dump(doc, f, indent=0, sort_keys=True)
        f.write("\n")
    os.replace(OUT + ".tmp", OUT)
    raised = sorted(k for k, v in results.items() if "raises" in v)
    print(f"wrote {OUT}: {len(results)} results ({len(raised)} raised: {raised}), "
          f"{len(errors)} error cases ({sorted(k for k, v in errors.items() if None in v)} "
          f"did not raise, {sorted(k for k, v in errors.items() if len(v) > 1)} vary)")


if __name__ == "__main__":
    main()
