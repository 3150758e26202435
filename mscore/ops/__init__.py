"""Functional ops and Primitive classes, dispatching to the active backend.

The MindSpore spellings all work: ``ops.add``/``ops.MatMul()``, ``from mscore.ops import
operations as P``, ``composite as C``, ``functional as F``.
"""
from mscore import dispatch  # noqa: F401  (re-exported as ops.dispatch)
from mscore.ops.functional import *  # noqa: F401,F403
from mscore.ops.functional import (  # noqa: F401  (names that shadow builtins)
    abs, all, any, max, min, pow, sum)
from mscore.ops.math_func import *  # noqa: F401,F403
from mscore.ops.array_func import *  # noqa: F401,F403
from mscore.ops.nn_func import *  # noqa: F401,F403
from mscore.ops.grad import GradOperation, get_grad, grad, value_and_grad, vjp  # noqa: F401
from mscore.ops.operations import *  # noqa: F401,F403
from mscore.ops.operations import Primitive  # noqa: F401
from mscore.ops.primitives import prim_attr_register  # noqa: F401
from mscore.ops.composite import HyperMap, Map, MultitypeFuncGraph  # noqa: F401
from mscore.ops import composite, functional, operations  # noqa: F401
from mscore.ops.functional_extra import *  # noqa: F401,F403
from mscore.ops.pool_func import *  # noqa: F401,F403
from mscore.ops.nn_extra_func import *  # noqa: F401,F403
from mscore.ops.image_func import *  # noqa: F401,F403
from mscore.ops.special_func import *  # noqa: F401,F403

_SUMMARY_OPS = ("ScalarSummary", "HistogramSummary", "ImageSummary", "TensorSummary")


def __getattr__(name):
    # Summary operators load on first use, so `import mscore` does not import protobuf.
    if name in _SUMMARY_OPS:
        from mscore.train.summary import summary_ops
        return getattr(summary_ops, name)
    raise AttributeError(f"module 'mscore.ops' has no attribute {name!r}")

# MindSpore's remaining loss functions (issue 18: nn losses)
from mscore.ops.loss_func import *  # noqa: E402,F401,F403
from mscore.ops.ctc_func import ctc_loss  # noqa: E402,F401
from mscore.ops.elementwise_extra_func import *  # noqa: E402,F401,F403
from mscore.ops.array_extra_func import *  # noqa: E402,F401,F403
from mscore.ops.integer_random_func import *  # noqa: E402,F401,F403
from mscore.ops import tensor_api as _tensor_api; _tensor_api.attach()  # noqa: E402,E702
