"""Records MindSpore's ``ops.LayerNorm`` (begin axes -1) and ``ops.batch_norm`` (training and
eval) on float16 inputs with float32 and with float16 parameters into
``half_norm_oracle.json``: the outputs, their dtype, and batch norm's updated running
statistics (MindSpore leaves float16 running statistics as they were; the test checks the
float32 ones).

MindSpore normalises half-precision inputs in float32 and rounds the output once to the
input's dtype (with float32 parameters every element equals the float64 result rounded to
float16; with float16 parameters the CPU kernel is within one float16 ulp of it).

Run with the separate MindSpore venv, from /tmp:
``cd /tmp && /tmp/ms/bin/python <repo>/tests/data/make_half_norm_oracle.py`` (MindSpore 2.10,
CPU). mscore's tests read the JSON; they never import MindSpore.
"""
import json
import os

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops

rng = np.random.default_rng(23)
ln_x = (rng.standard_normal((2, 3, 8)) * 3 + 1).astype(np.float16)
ln_w = rng.standard_normal(8) * 0.5 + 1
ln_b = rng.standard_normal(8) * 0.1
bn_x = (rng.standard_normal((4, 3, 2, 2)) * 2 + 0.5).astype(np.float16)
bn_w = rng.standard_normal(3) * 0.5 + 1
bn_b = rng.standard_normal(3) * 0.1
bn_m = rng.standard_normal(3) * 0.2
bn_v = rng.random(3) + 0.5

cases = {}
for pname, pdt in (("float32", np.float32), ("float16", np.float16)):
    w, b = Tensor(ln_w.astype(pdt)), Tensor(ln_b.astype(pdt))
    # ops.layer_norm (LayerNormExt) has no CPU kernel for float16; the LayerNorm
    # primitive is the op nn.LayerNorm runs.
    out = ops.LayerNorm(-1, -1, 1e-5)(Tensor(ln_x), w, b)[0]
    cases[f"layer_norm/{pname}"] = {
        "x": ln_x.tolist(), "weight": ln_w.astype(pdt).tolist(),
        "bias": ln_b.astype(pdt).tolist(), "eps": 1e-5, "normalized_shape": [8],
        "out": out.asnumpy().tolist(), "out_dtype": str(out.asnumpy().dtype)}
    for training in (True, False):
        m, v = Tensor(bn_m.astype(pdt)), Tensor(bn_v.astype(pdt))
        w, b = Tensor(bn_w.astype(pdt)), Tensor(bn_b.astype(pdt))
        mp, vp = ms.Parameter(m, name="m"), ms.Parameter(v, name="v")
        out = ops.batch_norm(Tensor(bn_x), mp, vp, w, b, training=training, momentum=0.1,
                             eps=1e-5)
        cases[f"batch_norm/{pname}/{'train' if training else 'eval'}"] = {
            "x": bn_x.tolist(), "weight": bn_w.astype(pdt).tolist(),
            "bias": bn_b.astype(pdt).tolist(), "running_mean": bn_m.astype(pdt).tolist(),
            "running_var": bn_v.astype(pdt).tolist(), "training": training,
            "momentum": 0.1, "eps": 1e-5, "param_dtype": pname,
            "out": out.asnumpy().tolist(), "out_dtype": str(out.asnumpy().dtype),
            "new_running_mean": mp.asnumpy().tolist(),
            "new_running_var": vp.asnumpy().tolist()}

record = {"note": "MindSpore " + ms.__version__ + " (CPU): ops.LayerNorm / ops.batch_norm on "
                  "float16 inputs", "cases": cases}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "half_norm_oracle.json")
with open(path, "w") as f:
    json.dump(record, f)
print("wrote", path)
