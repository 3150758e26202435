"""Wrapper cells: ``WithLossCell``, ``WithEvalCell``, ``TrainOneStepCell`` (and the loss-scale
cells of :mod:`mscore.nn.wrap.loss_scale`, loaded on first use)."""
from mscore.nn.wrap.cell_wrapper import TrainOneStepCell, WithEvalCell, WithLossCell  # noqa: F401
from mscore.nn.wrap.grad_cells import (  # noqa: F401
    ForwardValueAndGrad, GradAccumulationCell, ParameterUpdate, WithGradCell)
from mscore.nn.wrap.time_distributed import TimeDistributed  # noqa: F401

_LOSS_SCALE_NAMES = ("TrainOneStepWithLossScaleCell", "DynamicLossScaleUpdateCell",
                     "FixedLossScaleUpdateCell")


def __getattr__(name):
    if name in _LOSS_SCALE_NAMES:
        import importlib
        return getattr(importlib.import_module("mscore.nn.wrap.loss_scale"), name)
    if name == "DistributedGradReducer":
        from mscore.nn.wrap.grad_reducer import DistributedGradReducer
        return DistributedGradReducer
    raise AttributeError(f"module 'mscore.nn.wrap' has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *_LOSS_SCALE_NAMES, "DistributedGradReducer"})
