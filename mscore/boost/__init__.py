"""Boost: faster training with MindSpore's ``mindspore.boost`` interface.

``AutoBoost(level, boost_config_dict)`` turns a level into features: O1 = less BatchNorm
(:class:`LessBN`, with gradient centralization in the optimizer) + gradient freezing
(:class:`GradientFreeze`, :class:`FreezeOpt`, :func:`freeze_cell`); O2 adds adaptive
summation across data-parallel groups (:class:`AdaSum`). :class:`BoostTrainOneStepCell` and
:class:`BoostTrainOneStepWithLossScaleCell` run the steps (with
:class:`GradientAccumulation` when configured). ``amp.build_train_network(...,
boost_level=...)`` and ``Model(..., boost_level=...)`` apply it all. :class:`DimReduce` and
:class:`GroupLossScaleManager` (Ascend-only features in MindSpore) raise
``NotImplementedError`` when used; see their modules.
"""
from mscore.boost.adasum import AdaSum
from mscore.boost.base import OptimizerProcess, ParameterProcess
from mscore.boost.boost import AutoBoost
from mscore.boost.boost_cell_wrapper import (BoostTrainOneStepCell,
                                             BoostTrainOneStepWithLossScaleCell)
from mscore.boost.dim_reduce import DimReduce
from mscore.boost.grad_accumulation import GradientAccumulation
from mscore.boost.grad_freeze import FreezeOpt, GradientFreeze, freeze_cell
from mscore.boost.group_loss_scale_manager import GroupLossScaleManager
from mscore.boost.less_batch_normalization import LessBN
from mscore.boost import (adasum, base, boost, boost_cell_wrapper, dim_reduce,
                          grad_accumulation, grad_freeze, group_loss_scale_manager,
                          less_batch_normalization)

__all__ = ["AutoBoost",
           "OptimizerProcess", "ParameterProcess",
           "BoostTrainOneStepCell", "BoostTrainOneStepWithLossScaleCell",
           "LessBN",
           "GradientFreeze", "FreezeOpt", "freeze_cell",
           "GradientAccumulation",
           "AdaSum", "DimReduce",
           "GroupLossScaleManager"]
