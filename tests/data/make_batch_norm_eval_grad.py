"""Records MindSpore's gradients of ``ops.batch_norm(..., training=False)`` with respect to
every input (the running statistics get zeros) into ``batch_norm_eval_grad.json``.

Run with the separate MindSpore venv: ``/tmp/ms/bin/python tests/data/make_batch_norm_eval_grad.py``
(MindSpore 2.10, CPU). mscore's tests read the JSON; they never import MindSpore.
"""
import json
import os

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops

rng = np.random.default_rng(17)
inputs = {
    "x": rng.standard_normal((4, 3, 2, 2)).astype(np.float32),
    "running_mean": rng.standard_normal(3).astype(np.float32),
    "running_var": rng.uniform(0.5, 2.0, 3).astype(np.float32),
    "weight": rng.standard_normal(3).astype(np.float32),
    "bias": rng.standard_normal(3).astype(np.float32),
}
cot = rng.uniform(0.5, 1.5, (4, 3, 2, 2)).astype(np.float32)


def loss(x, m, v, w, b):
    return (ops.batch_norm(x, m, v, w, b, training=False, eps=1e-5) * Tensor(cot)).sum()


grads = ms.grad(loss, (0, 1, 2, 3, 4))(*[Tensor(a) for a in inputs.values()])
record = {
    "note": "MindSpore " + ms.__version__ + ": grads of sum(batch_norm(training=False) * cot)",
    "inputs": {k: v.tolist() for k, v in inputs.items()},
    "cotangent": cot.tolist(),
    "grads": {k: g.asnumpy().tolist() for k, g in zip(inputs, grads)},
}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "batch_norm_eval_grad.json")
with open(path, "w") as f:
    json.dump(record, f)
print("wrote", path)
