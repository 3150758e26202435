"""Record MindSpore 2.10's error for ``ops.multinomial`` asked for more samples than categories
without replacement, into ``multinomial_oracle.json``.

Run with the real MindSpore (never imported by mscore or its tests)::

    cd /tmp && /tmp/ms/bin/python /path/to/tests/data/make_multinomial_oracle.py

``tests/test_random_draws.py`` checks ``ops.multinomial`` and ``mint.multinomial`` (which
delegates to it) against the recorded exception type and message.
"""
import json
import os

import mindspore as ms
import numpy as np
from mindspore import ops

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "multinomial_oracle.json")


def main():
    probs = ms.Tensor(np.array([[0.2, 0.3, 0.5]], np.float32))
    try:
        ops.multinomial(probs, 5, False)
        raise SystemExit("MindSpore accepted 5 samples of 3 categories without replacement")
    except ValueError as exc:
        record = {"probs": [[0.2, 0.3, 0.5]], "num_samples": 5, "replacement": False,
                  "error": {"type": type(exc).__name__, "message": str(exc).split("\n")[0]}}
    with open(OUT, "w") as f:
        json.dump({"too_many_samples": record}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
