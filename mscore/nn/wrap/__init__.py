"""Wrapper cells: ``WithLossCell``, ``WithEvalCell``, ``TrainOneStepCell``, the gradient
cells, the loss-scale cells, ``DistributedGradReducer`` and the pipeline cells."""
from mscore.nn.wrap.cell_wrapper import TrainOneStepCell, WithEvalCell, WithLossCell
from mscore.nn.wrap.grad_cells import (
    ForwardValueAndGrad, GradAccumulationCell, ParameterUpdate, WithGradCell)
from mscore.nn.wrap.grad_reducer import DistributedGradReducer
from mscore.nn.wrap.loss_scale import (
    DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell, TrainOneStepWithLossScaleCell)
from mscore.nn.wrap.time_distributed import TimeDistributed
from mscore.nn.wrap.pipeline import MicroBatchInterleaved, PipelineCell, PipelineGradReducer
