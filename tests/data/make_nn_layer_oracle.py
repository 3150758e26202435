"""Record MindSpore 2.10's results for ``tests/data/nn_layer_cases.py``.

Run with the real MindSpore (never from the tests)::

    /tmp/ms/bin/python tests/data/make_nn_layer_oracle.py

It writes ``tests/data/mindspore_nn_layer_oracle.json``: for every case of ``CASES`` the
result encoded as ``make_ops_oracle.encode`` does (or the exception MindSpore raised), and for
every case of ``ERROR_CASES`` the types of the exception MindSpore raises (null: none). A
kernel's check can raise another type once other kernels ran, so the error cases run twice:
in a fresh process before anything else, and after the value cases; both types are kept.
"""
import json
import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import nn_layer_cases  # noqa: E402
from make_ops_oracle import encode, run  # noqa: E402

OUT = os.path.join(HERE, "mindspore_nn_layer_oracle.json")


def namespace():
    import mindspore as ms
    from mindspore import nn, ops
    ns = {"ms": ms, "ops": ops, "nn": nn, "np": np, "T": ms.Tensor}
    ns.update(nn_layer_cases.arrays())
    ns.update(nn_layer_cases.helpers(ms.Tensor))
    return ns


def raised_types():
    """``{case id: exception type name or None}`` for every error case, in this process."""
    out = {}
    for case_id, code in nn_layer_cases.ERROR_CASES:
        try:
            encode(run(code, namespace()))   # reading the values waits for the kernels
            out[case_id] = None
        except Exception as exc:
            out[case_id] = type(exc).__name__
    return out


def errors_in_fresh_process():
    """:func:`raised_types` in a new interpreter where no value case ran."""
    import subprocess
    script = (f"import sys, json, warnings; warnings.filterwarnings('ignore'); "
              f"sys.path.insert(0, {HERE!r}); import make_nn_layer_oracle as m; "
              f"import mindspore as ms; ms.set_context(device_target='CPU'); "
              f"print('RAISED=' + json.dumps(m.raised_types()))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=900).stdout
    line = [ln for ln in out.splitlines() if ln.startswith("RAISED=")][-1]
    return json.loads(line[7:])


def main():
    warnings.filterwarnings("ignore")
    import mindspore as ms
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    ms.set_seed(0)
    results = {}
    for case_id, code in nn_layer_cases.CASES:
        try:
            results[case_id] = encode(run(code, namespace()))
        except Exception as exc:
            results[case_id] = {"raises": type(exc).__name__, "message": str(exc)[:300]}
    cold = errors_in_fresh_process()
    warm = raised_types()
    errors = {k: sorted({cold[k], warm[k]}, key=str) for k in warm}
    doc = {"made_by": "/tmp/ms/bin/python tests/data/make_nn_layer_oracle.py",
           "mindspore_version": ms.__version__, "results": results, "errors": errors}
    with open(OUT + ".tmp", "w") as f:
        json.dump(doc, f, indent=0, sort_keys=True)
        f.write("\n")
    os.replace(OUT + ".tmp", OUT)
    raised = sorted(k for k, v in results.items() if "raises" in v)
    silent = sorted(k for k, v in errors.items() if None in v)
    print(f"wrote {OUT}: {len(results)} results ({len(raised)} raised: {raised}), "
          f"{len(errors)} error cases ({silent} did not raise, "
          f"{sorted(k for k, v in errors.items() if len(v) > 1)} vary)")
    for k in raised:
        print(" ", k, results[k])


if __name__ == "__main__":
    main()
