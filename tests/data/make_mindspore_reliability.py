"""Record how MindSpore 2.10 (CPU) reacts to the training and file faults, into
``mindspore_reliability.json`` beside this script.

Run with the separate MindSpore environment, from this folder:

    /tmp/ms/bin/python make_mindspore_reliability.py

Each entry holds the exception type MindSpore raised (or "none" and the value it returned)
and the first line of its message.
"""
import json
import os
import tempfile

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn


def outcome(fn):
    try:
        value = fn()
    except Exception as exc:  # the type is what we record
        return {"exception": type(exc).__name__, "message": str(exc).splitlines()[0][:200]}
    return {"exception": "none", "value": repr(value)[:200]}


def main():
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "two_bytes.ckpt")
        with open(path, "wb") as f:
            f.write(b"\x08\x01")
        out["load_checkpoint_empty"] = outcome(lambda: ms.load_checkpoint(path))
    logits = Tensor(np.zeros((3, 4), np.float32))
    for name, loss in (("CrossEntropyLoss", nn.CrossEntropyLoss()),
                       ("SoftmaxCrossEntropyWithLogits_sparse",
                        nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))):
        for label in (4, -1):
            labels = Tensor(np.array([0, 1, label], np.int32))
            out[f"{name}_label_{label}"] = outcome(
                lambda loss=loss, labels=labels: float(loss(logits, labels)))
    t = Tensor(np.ones(3, np.float32))
    out["tensor_move_to_other_device"] = outcome(lambda: t.move_to("GPU"))
    p = Parameter(Tensor(np.ones((2, 2), np.float32)), "w")
    out["merge_sliced_parameter_missing_name"] = outcome(
        lambda: ms.merge_sliced_parameter([p, p], {"other": None}))
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "mindspore_reliability.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
