"""Loss cells: ``nn.LossBase``, ``nn.MSELoss``, ``nn.L1Loss``, ``nn.CrossEntropyLoss``,
``nn.SoftmaxCrossEntropyWithLogits``, ``nn.BCEWithLogitsLoss``.

Loss cells compute in the dtype of the logits they get (amp casts them to float32 before the
loss when the network computes in float16).
"""
from __future__ import annotations

from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.nn.layer._checks import check_bool, check_int, check_number, check_str, check_tensor
from mscore.ops import functional as F

_REDUCTIONS = ("mean", "sum", "none")


class LossBase(Cell):
    """Base class of losses: ``get_loss(x, weights=1.0)`` applies the weights and the
    ``reduction`` ('mean', 'sum' or 'none')."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = check_str(reduction, "reduction", type(self).__name__, _REDUCTIONS)
        self.average = reduction == "mean"
        self.reduce = reduction != "none"

    def get_axis(self, x):
        """All axes of ``x``."""
        return tuple(range(x.ndim))

    def get_loss(self, x, weights=1.0):
        """``x * weights`` reduced by ``self.reduction``."""
        check_tensor(x, "x", type(self).__name__)
        if not (isinstance(weights, (int, float)) and weights == 1.0):
            x = F.mul(x, weights)
        if self.reduction == "mean":
            return F.mean(x)
        if self.reduction == "sum":
            return F.sum(x)
        return x

    def construct(self, logits, labels):
        raise NotImplementedError(f"{type(self).__name__}.construct is not defined")


def _check_pair(cls, logits, labels):
    check_tensor(logits, "logits", cls)
    check_tensor(labels, "labels", cls)
    if logits.shape != labels.shape:
        raise ValueError(f"For '{cls}', 'logits' and 'labels' must have the same shape, got "
                         f"{logits.shape} and {labels.shape}")


class MSELoss(LossBase):
    """Mean squared error ``(logits - labels) ** 2`` with ``reduction`` (default 'mean')."""

    def construct(self, logits, labels):
        _check_pair("MSELoss", logits, labels)
        return F.mse_loss(logits, labels, self.reduction)


class L1Loss(LossBase):
    """Mean absolute error ``|logits - labels|`` with ``reduction`` (default 'mean')."""

    def construct(self, logits, labels):
        _check_pair("L1Loss", logits, labels)
        return F.l1_loss(logits, labels, self.reduction)


class SoftmaxCrossEntropyWithLogits(LossBase):
    """Cross entropy between ``softmax(logits)`` (N, C) and ``labels``: one-hot/probability
    labels (N, C), or class indices (N,) when ``sparse=True``.

    ``SoftmaxCrossEntropyWithLogits(sparse=False, reduction='none')`` (MindSpore's default
    returns the per-sample loss). ``is_grad`` of MindSpore 1.x is accepted and ignored. With
    ``sparse=True`` an index outside ``[0, C)`` is a ``ValueError`` (PYNATIVE).
    """

    def __init__(self, sparse=False, reduction="none", is_grad=None):
        super().__init__(reduction)
        self.sparse = check_bool(sparse, "sparse", "SoftmaxCrossEntropyWithLogits")

    def construct(self, logits, labels):
        cls = "SoftmaxCrossEntropyWithLogits"
        check_tensor(logits, "logits", cls)
        check_tensor(labels, "labels", cls)
        if logits.ndim != 2:
            raise ValueError(f"For '{cls}', 'logits' must be 2-d (N, C), got shape "
                             f"{logits.shape}")
        if self.sparse:
            if labels.dtype.is_floating:
                raise TypeError(f"For '{cls}', 'labels' must be integer class indices when "
                                f"sparse=True, got {labels.dtype}")
            if labels.shape != logits.shape[:1]:
                raise ValueError(f"For '{cls}', 'labels' must have shape {logits.shape[:1]}, "
                                 f"got {labels.shape}")
            F._check_class_labels(labels, logits.shape[1])  # no index is ignored here
            return F._cross_entropy(logits, labels, None, -100, self.reduction, 0.0)
        if labels.shape != logits.shape:
            raise ValueError(f"For '{cls}', 'labels' must have the logits' shape "
                             f"{logits.shape}, got {labels.shape}")
        if not labels.dtype.is_floating:
            labels = F.cast(labels, logits.dtype)
        return F.cross_entropy(logits, labels, reduction=self.reduction)


class CrossEntropyLoss(LossBase):
    """Cross entropy of logits (N, C, ...) against class indices (N, ...) or class
    probabilities (same shape as the logits).

    ``CrossEntropyLoss(weight=None, ignore_index=-100, reduction='mean',
    label_smoothing=0.0)``; with indices, 'mean' divides by the summed weights of the
    non-ignored targets (as MindSpore and torch do). An index outside ``[0, C)`` other than
    ``ignore_index`` is a ``ValueError`` (PYNATIVE).
    """

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__(reduction)
        cls = "CrossEntropyLoss"
        if weight is not None:
            check_tensor(weight, "weight", cls)
            if weight.ndim != 1:
                raise ValueError(f"For '{cls}', 'weight' must be 1-d (C,), got shape "
                                 f"{weight.shape}")
        self.weight = weight
        self.ignore_index = check_int(ignore_index, "ignore_index", cls)
        self.label_smoothing = check_number(label_smoothing, "label_smoothing", cls, 0.0, 1.0)

    def construct(self, logits, labels):
        cls = "CrossEntropyLoss"
        check_tensor(logits, "logits", cls)
        check_tensor(labels, "labels", cls)
        if logits.ndim < 1:
            raise ValueError(f"For '{cls}', 'logits' must be at least 1-d, got a scalar")
        if logits.ndim == 1:  # unbatched (C,)
            logits = F.expand_dims(logits, 0)
            labels = F.expand_dims(labels, 0)
            out = self.construct(logits, labels)
            return F.squeeze(out, 0) if self.reduction == "none" else out
        weight = self.weight
        if weight is not None and weight.dtype is not logits.dtype:
            weight = F.cast(weight, logits.dtype)
        if not labels.dtype.is_floating and labels.shape != logits.shape[:1] + logits.shape[2:]:
            raise ValueError(f"For '{cls}', class-index 'labels' must have shape "
                             f"{logits.shape[:1] + logits.shape[2:]}, got {labels.shape}")
        return F.cross_entropy(logits, labels, weight, self.ignore_index, self.reduction,
                               self.label_smoothing)


class BCEWithLogitsLoss(LossBase):
    """Sigmoid binary cross entropy of ``logits`` against ``labels`` in [0, 1].

    ``BCEWithLogitsLoss(reduction='mean', weight=None, pos_weight=None)``; ``weight`` and
    ``pos_weight`` broadcast against the logits.
    """

    def __init__(self, reduction="mean", weight=None, pos_weight=None):
        super().__init__(reduction)
        for name, v in (("weight", weight), ("pos_weight", pos_weight)):
            if v is not None and not isinstance(v, Tensor):
                raise TypeError(f"For 'BCEWithLogitsLoss', '{name}' must be a Tensor or None, "
                                f"got {type(v).__name__}")
        self.weight = weight
        self.pos_weight = pos_weight

    def construct(self, logits, labels):
        _check_pair("BCEWithLogitsLoss", logits, labels)
        dt = logits.dtype
        w = self.weight if self.weight is None or self.weight.dtype is dt \
            else F.cast(self.weight, dt)
        pw = self.pos_weight if self.pos_weight is None or self.pos_weight.dtype is dt \
            else F.cast(self.pos_weight, dt)
        return F.binary_cross_entropy_with_logits(logits, labels, w, pw, self.reduction)
