"""mscore: a backend-neutral training core with MindSpore's semantics.

``import mscore as ms`` then use ``ms.Tensor``, ``ms.nn``, ``ms.ops``, ``ms.amp``,
``ms.train``; pick the array library with ``ms.set_context(backend=...)``. The top-level
names follow ``mindspore/__init__``: the training API (``ms.Model``, the callbacks, the
metrics, ``ms.save_checkpoint``, the loss-scale managers, ...) is re-exported here and
loaded on first use, so ``import mscore`` stays quick.
"""
__version__ = "0.1.0"

from mscore.common.dtype import (
    DType, bfloat16, bool_, byte, double, dtype_to_nptype, float16, float32, float64, float_,
    half, int8, int16, int32, int64, int_, intc, intp, long, pytype_to_dtype, short, single,
    ubyte, uint, uint8, uint16, uint32, uint64, uintc, uintp)
from mscore.common import dtype
from mscore.context import (
    COMPATIBLE, GRAPH_MODE, LAX, PYNATIVE_MODE, STRICT, get_context, get_seed, initial_seed,
    manual_seed, seed, set_context, set_deterministic, set_device, set_seed, synchronize)
from mscore.common.tensor import Tensor, tensor
from mscore.common.parameter import Parameter, ParameterTuple
from mscore.common import initializer as _initializer_module
from mscore.common.initializer import initializer
from mscore import ops
from mscore.ops.random.generator import Generator
from mscore.ops.grad import get_grad, grad, value_and_grad, vjp
from mscore.ops.array.creation import from_numpy, is_tensor
from mscore import nn
from mscore.compile import (
    constexpr, jit, jit_class, lazy_inline, mutable, no_inline, recompute)
from mscore.parallel._context import (
    ParallelMode, get_auto_parallel_context, reset_auto_parallel_context,
    set_auto_parallel_context)

# Subpackages that load on first use.
_LAZY_MODULES = {"amp": "mscore.amp", "train": "mscore.train", "dataset": "mscore.dataset",
                 "conformance": "mscore.conformance", "communication": "mscore.communication",
                 "boost": "mscore.boost", "parallel": "mscore.parallel", "mint": "mscore.mint",
                 "numpy": "mscore.numpy"}
# MindSpore's top-level names whose home is mindspore.train (Model, callbacks, metrics,
# serialization, summary, dataset helper, loss-scale managers): resolved through
# mscore.train, so a name added there later appears here too.
_FROM_TRAIN = frozenset("""
Model Callback RunContext LossMonitor TimeMonitor ModelCheckpoint CheckpointConfig
EarlyStopping ReduceLROnPlateau LambdaCallback History BackupAndRestore OnRequestExit
LearningRateScheduler SummaryRecord SummaryCollector DatasetHelper connect_network_with_dataset
save_checkpoint load_checkpoint load_checkpoint_async load_param_into_net
async_ckpt_thread_status ckpt_to_safetensors safetensors_to_ckpt merge_sliced_parameter
build_searched_strategy parse_print export load load_distributed_checkpoint transform_checkpoints
LossScaleManager FixedLossScaleManager
DynamicLossScaleManager build_train_network Metric Accuracy BleuScore ConfusionMatrix
ConfusionMatrixMetric CosineSimilarity Dice F1 Fbeta HausdorffDistance Loss MAE MSE
MeanSurfaceDistance OcclusionSensitivity Perplexity Precision ROC Recall
RootMeanSquareDistance Top1CategoricalAccuracy Top5CategoricalAccuracy TopKCategoricalAccuracy
auc get_metric_fn names rearrange_inputs
data_sink
""".split())
# MindSpore's context functions and constants that other work adds to mscore.context.
_FROM_CONTEXT = frozenset({"ParallelMode", "set_auto_parallel_context",
                           "get_auto_parallel_context", "reset_auto_parallel_context"})
# ``ms.float``, ``ms.int`` and ``ms.bool`` are dtypes; defined lazily so that the builtins
# keep their meaning inside this module.
_DTYPE_ALIASES = {"float": "float32", "int": "int32", "bool": "bool_"}


def __getattr__(name):
    import importlib
    if name in _LAZY_MODULES:
        try:
            return importlib.import_module(_LAZY_MODULES[name])
        except ModuleNotFoundError as exc:
            if exc.name != _LAZY_MODULES[name]:
                raise
            raise AttributeError(f"module 'mscore' has no attribute {name!r}") from None
    if name in _DTYPE_ALIASES:
        return getattr(dtype, _DTYPE_ALIASES[name])
    try:
        if name in _FROM_TRAIN:
            return getattr(importlib.import_module("mscore.train"), name)
        if name in _FROM_CONTEXT:
            return getattr(importlib.import_module("mscore.context"), name)
    except AttributeError:
        pass
    raise AttributeError(f"module 'mscore' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY_MODULES) | set(_DTYPE_ALIASES) | _FROM_TRAIN)
