"""The import paths and top-level names MindSpore users write resolve in mscore, with the
values MindSpore 2.10 gives them (``tools/data/mindspore-2.10-api.json``, captured from the
real package)."""
import importlib
import json
import os

import numpy as np
import pytest

import mscore as ms

REFERENCE = os.path.join(os.path.dirname(__file__), os.pardir, "tools", "data",
                         "mindspore-2.10-api.json")

# The spellings of the issue and of the seeds (2.x and 1.x paths).
IMPORTS = [
    "from mscore import Model, Tensor, Parameter, ParameterTuple, save_checkpoint, "
    "load_checkpoint, load_param_into_net, SummaryRecord, SummaryCollector, set_seed, "
    "context, dtype, float16, float32, int32, set_context, get_context, GRAPH_MODE, "
    "PYNATIVE_MODE, jit, grad, value_and_grad, vjp, get_grad, export, parse_print, "
    "merge_sliced_parameter, build_searched_strategy, DatasetHelper, "
    "connect_network_with_dataset, LossScaleManager, FixedLossScaleManager, "
    "DynamicLossScaleManager, build_train_network, Callback, RunContext, LossMonitor, "
    "TimeMonitor, ModelCheckpoint, CheckpointConfig, Metric, Accuracy, Loss, "
    "get_metric_fn, names, rearrange_inputs, is_tensor, from_numpy, set_device, "
    "synchronize, mutable, jit_class, recompute",
    "from mscore.train import Model, LossMonitor, TimeMonitor, ModelCheckpoint, "
    "CheckpointConfig, Callback, RunContext, SummaryRecord, SummaryCollector, "
    "save_checkpoint, load_checkpoint, DatasetHelper, LossScaleManager, "
    "FixedLossScaleManager, DynamicLossScaleManager, build_train_network, Accuracy",
    "from mscore.train.callback import Callback, RunContext, LossMonitor, TimeMonitor, "
    "ModelCheckpoint, CheckpointConfig, SummaryCollector",
    "from mscore.train.serialization import save_checkpoint, load_checkpoint, "
    "load_param_into_net, export, merge_sliced_parameter, build_searched_strategy",
    "from mscore.train.summary import SummaryRecord",
    "from mscore.train.summary.summary_record import SummaryRecord",
    "from mscore.train.metrics import Accuracy, Loss, Metric, get_metric_fn",
    "from mscore.nn.metrics import Accuracy, Loss, Metric, get_metric_fn",
    "from mscore.train.model import Model",
    "from mscore.train.loss_scale_manager import LossScaleManager, FixedLossScaleManager, "
    "DynamicLossScaleManager",
    "from mscore.train.dataset_helper import DatasetHelper, connect_network_with_dataset",
    "from mscore.train.amp import build_train_network, auto_mixed_precision, "
    "custom_mixed_precision, get_white_list, get_black_list",
    "from mscore.amp import build_train_network, FixedLossScaleManager, DynamicLossScaler, "
    "all_finite, auto_mixed_precision",
    "from mscore.common.api import jit, jit_class",
    "from mscore.common.initializer import initializer",
    "from mscore.common.parameter import Parameter, ParameterTuple",
    "from mscore.common.tensor import Tensor",
    "from mscore.common import dtype as mstype",
    "from mscore.context import set_context, get_context, GRAPH_MODE, PYNATIVE_MODE",
    "from mscore.nn.dynamic_lr import piecewise_constant_lr, warmup_lr",
    "from mscore.ops import operations as P",
    "from mscore.ops import composite as C",
    "from mscore.ops import functional as F",
    "from mscore.ops.operations import MatMul, Conv2D, ReduceMean, Softmax",
    "from mscore.ops.composite import GradOperation, HyperMap, MultitypeFuncGraph",
    "from mscore.ops.functional import tensor_add, depend, partial, cast, shape",
    "import mscore.train.callback, mscore.train.serialization, mscore.train.summary",
]


@pytest.mark.parametrize("statement", IMPORTS, ids=range(len(IMPORTS)))
def test_import_path_resolves(statement):
    exec(statement, {})


def test_reexports_are_the_same_objects():
    from mscore import amp, train
    from mscore.train import callback, loss_scale_manager, metrics
    from mscore.train.summary import summary_record
    assert ms.Model is train.Model
    assert ms.LossMonitor is callback.LossMonitor is train.LossMonitor
    assert ms.FixedLossScaleManager is amp.FixedLossScaleManager
    assert loss_scale_manager.DynamicLossScaleManager is amp.DynamicLossScaleManager
    assert summary_record.SummaryRecord is ms.SummaryRecord
    assert ms.nn.Accuracy is metrics.Accuracy is importlib.import_module(
        "mscore.nn.metrics").Accuracy
    assert ms.context is importlib.import_module("mscore.context")
    assert ms.ops.operations.MatMul is ms.ops.MatMul
    assert "Model" in dir(ms) and "float" in dir(ms)
    with pytest.raises(AttributeError):
        _ = ms.no_such_name


@pytest.fixture(scope="module")
def reference():
    with open(REFERENCE) as f:
        return json.load(f)["modules"]


def test_dtypes_and_constants_have_mindspores_values(reference):
    top = reference["mindspore"]
    for name in ("float", "int", "bool", "single", "short", "long", "byte", "ubyte", "intc",
                 "intp", "half", "double", "float16", "float32", "bfloat16", "int8",
                 "uint8", "bool_"):
        assert getattr(ms, name).name == top[name]["repr"].lower(), name
    for name in ("GRAPH_MODE", "PYNATIVE_MODE", "STRICT", "COMPATIBLE", "LAX"):
        assert getattr(ms, name) == top[name]["value"] == getattr(ms.context, name), name


def test_dtype_helpers():
    import ml_dtypes
    # MindSpore 2.10: pytype_to_dtype(int) is int64, (bool) bool, (np.float16) float16
    assert ms.pytype_to_dtype(int) is ms.int64
    assert ms.pytype_to_dtype(bool) is ms.bool_
    assert ms.pytype_to_dtype(np.float16) is ms.float16
    assert ms.pytype_to_dtype(float) is ms.float64
    assert ms.dtype_to_nptype(ms.bfloat16) is ml_dtypes.bfloat16
    assert ms.dtype_to_nptype(ms.int32) is np.int32


def test_device_helpers():
    ms.set_device("CPU")
    assert ms.get_context("device_target") == "CPU"
    ms.set_device("CPU", 0)
    ms.set_context(backend="numpy")
    ms.synchronize()
    ms.set_deterministic(True)  # the numpy backend declares 'deterministic'
    ms.set_deterministic(False)


def test_tensor_helpers():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = ms.from_numpy(a)
    assert t.dtype is ms.int32 and t.shape == (2, 3)
    np.testing.assert_array_equal(t.asnumpy(), a)
    assert ms.is_tensor(t) and not ms.is_tensor(a)


def test_parameter_arguments_without_meaning_here():
    p = ms.Parameter(ms.Tensor(np.ones(2, np.float32)), "p", True, False, True, "", None)
    assert p.name == "p"
    with pytest.raises(NotImplementedError, match="storage_format"):
        ms.Parameter(ms.Tensor(np.ones(2, np.float32)), storage_format="FRACTAL_NZ")
    with pytest.raises(NotImplementedError, match="device"):
        ms.Parameter(ms.Tensor(np.ones(2, np.float32)), device="CPU")


def test_import_mscore_stays_light():
    """The top-level re-exports load on use: ``import mscore`` imports neither the training
    package nor protobuf (the summary operators of ``P`` included)."""
    import subprocess
    import sys
    code = ("import sys, mscore; from mscore.ops import operations as P; "
            "print(sorted(m for m in sys.modules if m.startswith(('google.protobuf', "
            "'mscore.train'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True).stdout.strip()
    assert out == "[]"
