"""The op-level ("auto") mixed-precision policy, in the manner of ``torch.autocast``.

Inside an :func:`autocast` region every primitive is checked against three lists:

* **low precision** (``LOW_PRECISION_OPS``): matrix products and convolutions; their floating
  inputs are cast to the region's dtype (float16 or bfloat16).
* **float32** (``FP32_OPS``): exponentials, logarithms, powers, error function and sums —
  the ops whose range or accumulation suffers in half precision (softmax, log-softmax,
  normalisation statistics and losses are built from them); their floating inputs are cast
  to float32.
* **promote**: everything with several inputs (add, mul, where, concat, ...) runs in the
  widest input dtype, which the core's dtype promotion already guarantees.

Every other op runs in the dtype of its inputs. Backend fused ops are bypassed inside a
region so the lists also apply inside softmax, layer norm and cross entropy.
"""
from __future__ import annotations

import contextlib

from mscore import dispatch
from mscore._state import thread as _thread
from mscore.autodiff.tracer import unwrap
from mscore.common import dtype as mdt

LOW_PRECISION_OPS = frozenset({"matmul", "conv", "conv_transpose"})
FP32_OPS = frozenset({"exp", "log", "pow", "erf", "sum", "sqrt"})


class AutocastPolicy:
    """Casts an op's floating inputs by the lists above; installed by :func:`autocast`."""

    def __init__(self, dtype):
        self.dtype = mdt.as_dtype(dtype)
        if self.dtype not in (mdt.float16, mdt.bfloat16):
            raise ValueError(f"dtype: expected float16 or bfloat16, got {self.dtype}")

    def __call__(self, name, args):
        if name in LOW_PRECISION_OPS:
            target = self.dtype
        elif name in FP32_OPS:
            target = mdt.float32
        else:
            return args
        backend = dispatch.backend()
        out = []
        for a in args:
            dt = backend.dtype(unwrap(a))
            if dt.is_floating and dt is not target and dt is not mdt.float64:
                a = dispatch.call("cast", a, target)
            out.append(a)
        return tuple(out)


@contextlib.contextmanager
def autocast(dtype=mdt.float16):
    """A region where the calling thread's ops compute by the op-level lists in ``dtype``;
    regions nest. Other threads are not affected."""
    policy = AutocastPolicy(dtype)
    previous = _thread.autocast_policy
    _thread.autocast_policy = policy
    try:
        yield policy
    finally:
        _thread.autocast_policy = previous
