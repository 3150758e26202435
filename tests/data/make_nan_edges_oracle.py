"""Record MindSpore 2.10's answers where NaN meets an op's edge into
``nan_edges_oracle.json`` beside this script:

- ``ops.sign`` of NaN (either sign bit), -0.0, 0.0, 1.5, -2.0, inf and -inf in float16,
  float32 and float64, as bit patterns (the sign of zero and NaN kept);
- ``ops.cross_entropy`` and ``ops.nll_loss`` with reduction 'mean' when every target is
  ``ignore_index``: the value and the gradients (logits, and the class weight; cross
  entropy without a weight too);
- rounding toward zero of quotients and values whose result is a zero of either sign:
  ``ops.div(x, y, rounding_mode='trunc')``, ``ops.truncate_div`` and ``ops.trunc``, as bit
  patterns in float16, float32 and float64.

Run with the separate MindSpore environment, from this folder:

    /tmp/ms/bin/python make_nan_edges_oracle.py

``tests/test_nan_edges_oracle.py`` runs the same cases on mscore and compares.
"""
import json
import os

import mindspore as ms
import numpy as np
from mindspore import ops

SIGN_INPUTS = [float("nan"), float("nan"), -0.0, 0.0, 1.5, -2.0, float("inf"), -float("inf")]
LOGITS = [[0.3, -1.2, 0.5], [1.0, 2.0, -0.25]]
WEIGHT = [0.7, 1.3, 0.4]
TARGETS = [-100, -100]


def bits(a):
    """Hex bit patterns of a numpy float array."""
    a = np.ascontiguousarray(a)
    return [f"{int(v):#0{2 + 2 * a.itemsize}x}" for v in
            a.view(np.dtype(f"u{a.itemsize}")).reshape(-1)]


def sign_records():
    out = {}
    for name in ("float16", "float32", "float64"):
        x = np.array(SIGN_INPUTS, dtype=name)
        x[1] = np.copysign(x[1], -1.0)   # a NaN with the sign bit set
        out[name] = {"input": bits(x), "sign": bits(ops.sign(ms.Tensor(x)).asnumpy())}
    return out


def ignored_mean_records():
    x = ms.Tensor(np.array(LOGITS, np.float32))
    w = ms.Tensor(np.array(WEIGHT, np.float32))
    t = ms.Tensor(np.array(TARGETS, np.int32))
    cases = {
        "cross_entropy": lambda x, w: ops.cross_entropy(x, t, w, reduction="mean"),
        "nll_loss": lambda x, w: ops.nll_loss(ops.log_softmax(x, 1), t, w, reduction="mean"),
    }
    out = {}
    for name, fn in cases.items():
        value, (gx, gw) = ms.value_and_grad(fn, grad_position=(0, 1))(x, w)
        out[name] = {"value": float(value.asnumpy()), "grad_logits": gx.asnumpy().tolist(),
                     "grad_weight": gw.asnumpy().tolist()}
    value, gx = ms.value_and_grad(lambda x: ops.cross_entropy(x, t, reduction="mean"))(x)
    out["cross_entropy_unweighted"] = {"value": float(value.asnumpy()),
                                       "grad_logits": gx.asnumpy().tolist()}
    return out


TRUNC_X = [-0.0, 0.0, -0.5, 0.5, -3.0, 3.0, 7.0, float("nan"), float("inf")]
TRUNC_Y = [2.0, -2.0, 2.0, -2.0, 7.0, -7.0, 2.0, 1.0, -2.0]


def trunc_records():
    out = {}
    for name in ("float16", "float32", "float64"):
        x, y = np.array(TRUNC_X, dtype=name), np.array(TRUNC_Y, dtype=name)
        tx, ty = ms.Tensor(x), ms.Tensor(y)
        out[name] = {"x": bits(x), "y": bits(y),
                     "div_trunc": bits(ops.div(tx, ty, rounding_mode="trunc").asnumpy()),
                     "truncate_div": bits(ops.truncate_div(tx, ty).asnumpy()),
                     "trunc_of_x_over_7": bits(ops.trunc(tx / 7.0).asnumpy())}
    return out


def main():
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    record = {"mindspore": ms.__version__, "sign": sign_records(), "trunc": trunc_records(),
              "ignored_mean": {"logits": LOGITS, "weight": WEIGHT, "targets": TARGETS,
                               **ignored_mean_records()}}
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "nan_edges_oracle.json"), "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
