"""Functional ops and Primitive classes, dispatching to the active backend."""
from mscore import dispatch  # noqa: F401  (re-exported as ops.dispatch)
from mscore.ops.functional import *  # noqa: F401,F403
from mscore.ops.functional import (  # noqa: F401  (names that shadow builtins)
    abs, all, any, max, min, pow, sum)
from mscore.ops.grad import GradOperation, grad, value_and_grad  # noqa: F401
from mscore.ops.primitives import *  # noqa: F401,F403
from mscore.ops.primitives import Primitive  # noqa: F401

_SUMMARY_OPS = ("ScalarSummary", "HistogramSummary", "ImageSummary", "TensorSummary")


def __getattr__(name):
    # Summary operators load on first use, so `import mscore` does not import protobuf.
    if name in _SUMMARY_OPS:
        from mscore.train.summary import summary_ops
        return getattr(summary_ops, name)
    raise AttributeError(f"module 'mscore.ops' has no attribute {name!r}")
