"""Wrapper cells: ``WithLossCell``, ``WithEvalCell``, ``TrainOneStepCell``, the gradient
cells, the loss-scale cells and ``DistributedGradReducer``."""
from mscore.nn.wrap.cell_wrapper import TrainOneStepCell, WithEvalCell, WithLossCell  # noqa: F401
from mscore.nn.wrap.grad_cells import (  # noqa: F401
    ForwardValueAndGrad, GradAccumulationCell, ParameterUpdate, WithGradCell)
from mscore.nn.wrap.grad_reducer import DistributedGradReducer  # noqa: F401
from mscore.nn.wrap.loss_scale import (  # noqa: F401
    DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell, TrainOneStepWithLossScaleCell)
from mscore.nn.wrap.time_distributed import TimeDistributed  # noqa: F401
