"""``mindspore.ops.operations`` (``from mscore.ops import operations as P``): every
Primitive class mscore computes, under MindSpore's names."""
from mscore.ops.primitives import *  # noqa: F401,F403
from mscore.ops.primitives import __all__ as _base
from mscore.ops.prim_array import *  # noqa: F401,F403
from mscore.ops.prim_array import __all__ as _array
from mscore.ops.prim_math import *  # noqa: F401,F403
from mscore.ops.prim_math import __all__ as _math
from mscore.ops.prim_nn import *  # noqa: F401,F403
from mscore.ops.prim_nn import __all__ as _nn

# The summary operators load on first use (they import protobuf), so they stay out of
# ``__all__``: a star import would load them.
_SUMMARY_OPS = ("ScalarSummary", "HistogramSummary", "ImageSummary", "TensorSummary")

__all__ = [*_base, *_array, *_math, *_nn]


def __getattr__(name):
    if name in _SUMMARY_OPS:
        from mscore.train.summary import summary_ops
        return getattr(summary_ops, name)
    raise AttributeError(f"module 'mscore.ops.operations' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SUMMARY_OPS))
