"""Cells: layers, losses, optimizers, learning-rate schedules and wrapper cells."""
from mscore.nn.cell import Cell
from mscore.nn.layer.container import CellDict, CellList, SequentialCell
from mscore.nn.layer import *
from mscore.nn.layer import __all__ as _layer_all
from mscore.nn.learning_rate_schedule import (
    CosineDecayLR, ExponentialDecayLR, InverseDecayLR, LearningRateSchedule, NaturalExpDecayLR,
    PolynomialDecayLR, WarmUpLR, cosine_decay_lr, exponential_decay_lr, piecewise_constant_lr,
    polynomial_decay_lr, warmup_lr)
from mscore.nn.loss import (
    BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, LossBase, MSELoss,
    SoftmaxCrossEntropyWithLogits)
from mscore.nn.optim import SGD, Adam, AdamWeightDecay, Momentum, Optimizer
from mscore.nn.wrap import (
    DistributedGradReducer, DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell,
    TrainOneStepCell, TrainOneStepWithLossScaleCell, WithEvalCell, WithLossCell)
from mscore.nn.graph import GraphCell
from mscore.nn import dynamic_lr

__all__ = ["Cell", "CellList", "SequentialCell", "CellDict", *_layer_all,
           "LearningRateSchedule", "ExponentialDecayLR", "NaturalExpDecayLR", "InverseDecayLR",
           "CosineDecayLR", "PolynomialDecayLR", "WarmUpLR", "piecewise_constant_lr",
           "exponential_decay_lr", "cosine_decay_lr", "polynomial_decay_lr", "warmup_lr",
           "LossBase", "MSELoss", "L1Loss", "SoftmaxCrossEntropyWithLogits",
           "CrossEntropyLoss", "BCEWithLogitsLoss",
           "Optimizer", "Momentum", "SGD", "Adam", "AdamWeightDecay",
           "WithLossCell", "WithEvalCell", "TrainOneStepCell", "GraphCell",
           "DistributedGradReducer"]


def __getattr__(name):
    # MindSpore's nn re-exports the metrics, which live in mscore.train (a layer above).
    import importlib
    if name == "metrics":  # mindspore.nn.metrics, the 1.x path of the metrics
        return importlib.import_module("mscore.nn.metrics")
    metrics = importlib.import_module("mscore.train.metrics")
    if name in metrics.__all__ or name == "get_metrics":  # as MindSpore's nn re-exports them
        return getattr(metrics, name)
    raise AttributeError(f"module 'mscore.nn' has no attribute {name!r}")


# -- the rest of MindSpore's losses, optimizers, wrapper cells and rate lists -----------------
from mscore.nn.loss import loss as _loss_module  # noqa: E402
from mscore.nn.loss.loss import *  # noqa: E402
from mscore.nn.optim import (  # noqa: E402
    ASGD, FTRL, LARS, AdaMax, Adadelta, Adagrad, AdamOffload, Lamb, LazyAdam, ProximalAdagrad,
    RMSProp, Rprop)
from mscore.nn.wrap import (  # noqa: E402
    ForwardValueAndGrad, GradAccumulationCell, ParameterUpdate, TimeDistributed, WithGradCell)
from mscore.nn.wrap.pipeline import (  # noqa: E402
    MicroBatchInterleaved, PipelineCell, PipelineGradReducer)
from mscore.nn.dynamic_lr import inverse_decay_lr, natural_exp_decay_lr  # noqa: E402
from mscore.nn.grad import Jvp, Vjp  # noqa: E402
from mscore.nn import grad  # noqa: E402

__all__ += [n for n in _loss_module.__all__ if n not in __all__] + [
    "ASGD", "FTRL", "LARS", "AdamOffload", "AdaMax", "Adadelta", "Adagrad", "Lamb", "LazyAdam",
    "ProximalAdagrad", "RMSProp", "Rprop", "ForwardValueAndGrad", "GradAccumulationCell",
    "ParameterUpdate", "TimeDistributed", "WithGradCell", "inverse_decay_lr",
    "natural_exp_decay_lr", "Vjp", "Jvp", "PipelineCell", "MicroBatchInterleaved",
    "PipelineGradReducer"]


def __dir__():
    return sorted({*globals(), *__all__, "metrics"})
