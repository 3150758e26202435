"""Record MindSpore's results of ``mint_nn_cases.CASES``.

Run with the real MindSpore (the oracle venv; never from mscore or its tests)::

    cd /tmp && /tmp/ms/bin/python /path/to/tests/data/make_mint_nn_oracle.py

It writes ``tests/data/mint_nn_oracle.json``: per case the result (encoded as
``make_tensor_numpy_mint_oracle.encode`` does) and ``"ran"``: ``"mint"`` where MindSpore's
CPU build ran the expression itself, ``"reference"`` where it has no CPU kernel for it and
the case's CPU reference was recorded instead.
"""
import json
import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_tensor_numpy_mint_oracle import encode  # noqa: E402
from mint_nn_cases import CASES, inputs  # noqa: E402


def main():
    warnings.filterwarnings("ignore")
    import mindspore as ms
    from mindspore import mint
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    out = {"made_by": "cd /tmp && /tmp/ms/bin/python tests/data/make_mint_nn_oracle.py",
           "mindspore_version": ms.__version__, "cases": {}}
    for name, expr, reference in CASES:
        record = None
        # the reference runs twice at most: an unregistered kernel's error can surface at
        # the next op MindSpore runs, not at the failing call
        for ran, text in (("mint", expr), ("reference", reference), ("reference", reference)):
            if text is None:
                continue
            scope = dict(inputs(ms), ms=ms, mint=mint, F=mint.nn.functional, np=np)
            try:
                record = dict(encode(eval(text, scope), ms.Tensor), ran=ran)
                break
            except Exception as exc:  # no CPU kernel: try the reference
                record = {"kind": "error", "type": type(exc).__name__,
                          "message": str(exc).splitlines()[0]}
        out["cases"][name] = record
    with open(os.path.join(HERE, "mint_nn_oracle.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
