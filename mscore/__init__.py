"""mscore: a backend-neutral training core with MindSpore's semantics.

``import mscore as ms`` then use ``ms.Tensor``, ``ms.nn``, ``ms.ops``, ``ms.amp``,
``ms.train``; pick the array library with ``ms.set_context(backend=...)``.
"""
__version__ = "0.1.0"

from mscore.common.dtype import (  # noqa: F401
    DType, bfloat16, bool_, double, float16, float32, float64, float_, half, int8, int16,
    int32, int64, int_, uint8)
from mscore.context import (  # noqa: F401
    GRAPH_MODE, PYNATIVE_MODE, get_context, get_seed, set_context, set_seed)
from mscore.common.tensor import Tensor  # noqa: F401
from mscore.common.parameter import Parameter, ParameterTuple  # noqa: F401
from mscore.common import initializer as _initializer_module  # noqa: F401
from mscore.common.initializer import initializer  # noqa: F401
from mscore import ops  # noqa: F401
from mscore.ops.grad import grad, value_and_grad  # noqa: F401
from mscore import nn  # noqa: F401
from mscore.parallel._context import (  # noqa: F401
    ParallelMode, get_auto_parallel_context, reset_auto_parallel_context,
    set_auto_parallel_context)


def __getattr__(name):
    # Heavier subpackages load on first use, so `import mscore` stays quick.
    import importlib
    lazy = {"amp": "mscore.amp", "train": "mscore.train", "dataset": "mscore.dataset",
            "conformance": "mscore.conformance", "communication": "mscore.communication",
            "parallel": "mscore.parallel"}
    serialization = ("save_checkpoint", "load_checkpoint", "load_param_into_net",
                     "merge_sliced_parameter", "build_searched_strategy", "parse_print",
                     "export", "load", "load_distributed_checkpoint")
    if name in lazy:
        return importlib.import_module(lazy[name])
    if name in serialization:
        return getattr(importlib.import_module("mscore.train.serialization"), name)
    if name == "Model":
        return importlib.import_module("mscore.train").Model
    raise AttributeError(f"module 'mscore' has no attribute {name!r}")
