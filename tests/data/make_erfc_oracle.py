"""Records MindSpore 2.10's ``ops.erfc`` on points across its range, per float dtype, into
``erfc_mindspore.json``. Run with the MindSpore venv, from this folder:
``/tmp/ms/bin/python make_erfc_oracle.py``."""
import json

import mindspore as ms
import numpy as np

POINTS = [-30.0, -4.5, -1.0, -0.3, -0.0, 0.0, 0.2, 0.46875, 0.5, 1.0, 2.3, 3.99, 4.0, 4.5,
          5.0, 8.0, 9.0, 10.0, 15.0, 26.0, 27.0, float("inf"), float("-inf"), float("nan")]

cases = {}
for name in ("float16", "float32", "float64"):
    x = np.array(POINTS, dtype=name)
    out = ms.ops.erfc(ms.Tensor(x)).asnumpy()
    cases[name] = {"x": [repr(float(v)) for v in x], "erfc": [repr(float(v)) for v in out]}
with open("erfc_mindspore.json", "w", encoding="utf-8") as f:
    json.dump({"made_by": "tests/data/make_erfc_oracle.py with MindSpore 2.10.0 (CPU)",
               "cases": cases}, f, indent=1)
