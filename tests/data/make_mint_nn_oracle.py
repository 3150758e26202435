"""Record MindSpore's results of ``mint_nn_cases.CASES``.

Run with the real MindSpore (the oracle venv; never from mscore or its tests)::

    cd /tmp && /tmp/ms/bin/python /path/to/tests/data/make_mint_nn_oracle.py

It writes ``tests/data/mint_nn_oracle.json``: per case the result (encoded as
``_recorder.encode`` does) and ``"ran"``: ``"mint"`` where MindSpore's
CPU build ran the expression itself, ``"reference"`` where it has no CPU kernel for it and
the case's CPU reference was recorded instead.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _recorder
from mint_nn_cases import CASES, inputs


def main():
    _recorder.quiet()
    import mindspore as ms
    from mindspore import mint
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    results = {}
    for name, expr, reference in CASES:
        record = None
        # the reference runs twice at most: an unregistered kernel's error can surface at
        # the next op MindSpore runs, not at the failing call
        for ran, text in (("mint", expr), ("reference", reference), ("reference", reference)):
            if text is None:
                continue
            scope = dict(inputs(ms), ms=ms, mint=mint, F=mint.nn.functional, np=np)
            try:
                record = dict(_recorder.encode(eval(text, scope), ms.Tensor), ran=ran)
                break
            except Exception as exc:  # no CPU kernel: try the reference
                record = _recorder.error(exc)
        results[name] = record
    _recorder.write("mint_nn", results, ms)


if __name__ == "__main__":
    main()
