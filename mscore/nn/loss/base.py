"""``nn.LossBase`` and the elementwise regression losses (``MSELoss``, ``L1Loss``,
``MAELoss``, ``RMSELoss``).

Loss cells compute in the dtype of the logits they get (amp casts them to float32 before the
loss when the network computes in float16); ``get_loss`` reduces in float32 and returns the
input's dtype, as MindSpore's does.
"""
from __future__ import annotations

from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.ops import functional as F
from mscore.ops.nn.loss_embedding import reduce_loss
from mscore.ops.operations import Cast, Mul, ReduceMean, ReduceSum

REDUCTIONS = ("mean", "sum", "none")


def check_reduction(reduction, cls):
    """``reduction`` if it is 'mean', 'sum' or 'none', else ValueError (any other value,
    of any type, as MindSpore's LossBase)."""
    if not isinstance(reduction, str) or reduction not in REDUCTIONS:
        raise ValueError(f"For '{cls}', the 'reduction' must be in ['mean', 'sum', 'none'], "
                         f"but got {reduction}.")
    return reduction


def check_tensor(x, name, cls):
    """``x`` if it is a Tensor, else TypeError."""
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{cls}', the '{name}' must be a Tensor, but got "
                        f"{type(x).__name__}")
    return x


class LossBase(Cell):
    """Base class of losses: ``get_loss(x, weights=1.0)`` applies the weights and the
    ``reduction`` ('mean', 'sum' or 'none'; anything else is a ``ValueError``).

    Subclasses written for MindSpore find its attributes here too: ``average``, ``reduce``,
    ``get_axis(x)`` and the primitives ``reduce_mean``, ``reduce_sum``, ``mul``, ``cast``.
    """

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = check_reduction(reduction, type(self).__name__)
        self.average = reduction != "sum"
        self.reduce = reduction != "none"
        # MindSpore's LossBase gives subclasses these primitives (plain attributes: a
        # subclass may replace them)
        self.reduce_mean = ReduceMean()
        self.reduce_sum = ReduceSum()
        self.mul = Mul()
        self.cast = Cast()

    def get_axis(self, x):
        """All axes of ``x``."""
        return tuple(range(x.ndim))

    def get_loss(self, x, weights=1.0):
        """``x * weights`` reduced by the reduction given at construction (in float32; the
        result has ``x``'s dtype)."""
        check_tensor(x, "x", type(self).__name__)
        if isinstance(weights, (int, float)) and not isinstance(weights, bool) and \
                weights == 1.0:
            weights = None
        elif isinstance(weights, Tensor) and weights.dtype is not x.dtype:
            weights = F.cast(weights, x.dtype)
        mode = "none" if not self.reduce else ("mean" if self.average else "sum")
        return reduce_loss(x, mode, type(self).__name__, weights)

    def construct(self, logits, labels):
        raise NotImplementedError(f"{type(self).__name__}.construct is not defined")


class MSELoss(LossBase):
    """Mean squared error ``(logits - labels) ** 2`` (shapes broadcast) with ``reduction``
    (default 'mean')."""

    def construct(self, logits, labels):
        check_tensor(logits, "logits", "MSELoss")
        check_tensor(labels, "labels", "MSELoss")
        return self.get_loss(F.square(F.sub(logits, labels)))


class L1Loss(LossBase):
    """Mean absolute error ``|logits - labels|`` (shapes broadcast) with ``reduction``
    (default 'mean')."""

    def construct(self, logits, labels):
        check_tensor(logits, "logits", "L1Loss")
        check_tensor(labels, "labels", "L1Loss")
        return self.get_loss(F.abs(F.sub(logits, labels)))


class MAELoss(LossBase):
    """Mean absolute error ``|logits - label|`` (shapes broadcast) with ``reduction``
    (default 'mean')."""

    def construct(self, logits, label):
        check_tensor(logits, "logits", "MAELoss")
        check_tensor(label, "labels", "MAELoss")
        return self.get_loss(F.abs(F.sub(logits, label)))


class RMSELoss(LossBase):
    """Root mean squared error ``sqrt(mean((logits - label) ** 2))``; unsigned integer
    inputs are a ``TypeError``."""

    def __init__(self):
        super().__init__()
        self.MSELoss = MSELoss()

    def construct(self, logits, label):
        for x in (logits, label):
            if isinstance(x, Tensor) and x.dtype in (mdt.uint8,):
                raise TypeError(f"For 'RMSELoss', the parameters data type must not be an "
                                f"unsigned integer type, but got mindspore.{x.dtype}.")
        return F.sqrt(self.MSELoss(logits, label))
