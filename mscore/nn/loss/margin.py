"""Margin and embedding losses: ``nn.MarginRankingLoss``, ``nn.SoftMarginLoss``,
``nn.MultiMarginLoss``, ``nn.MultilabelMarginLoss``, ``nn.MultiLabelSoftMarginLoss``,
``nn.HingeEmbeddingLoss``, ``nn.CosineEmbeddingLoss``, ``nn.TripletMarginLoss``,
``nn.TripletMarginWithDistanceLoss``."""
from __future__ import annotations

from mscore import ops
from mscore.common.tensor import Tensor
from mscore.nn.loss.base import LossBase, check_reduction, check_tensor
from mscore.ops import functional as F
from mscore.ops.nn.loss_embedding import _cosine, multi_margin


class MarginRankingLoss(LossBase):
    """``max(0, -target * (input1 - input2) + margin)``.

    ``MarginRankingLoss(margin=0.0, reduction='mean')``; called as
    ``loss(input1, input2, target)`` (``margin`` must be a float: ``TypeError`` at the call).
    """

    def __init__(self, margin=0.0, reduction="mean"):
        super().__init__(reduction)
        self.margin = margin

    def construct(self, input1, input2, target):
        return ops.margin_ranking_loss(input1, input2, target, self.margin,
                                       self.reduction)


class SoftMarginLoss(LossBase):
    """``log(1 + exp(-labels * logits))``. ``SoftMarginLoss(reduction='mean')``."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def construct(self, logits, labels):
        return ops.soft_margin_loss(logits, labels, self.reduction)


class MultiMarginLoss(LossBase):
    """Multi-class hinge loss of ``x`` (N, C) against class indices ``target`` (N,):
    ``sum_{j != y} max(0, margin - x[y] + x[j])^p * weight[y] / C``.

    ``MultiMarginLoss(p=1, margin=1.0, reduction='mean', weight=None)``; called as
    ``loss(x, target, weight=None)`` (the constructor's ``weight`` wins).
    """

    def __init__(self, p=1, margin=1.0, reduction="mean", weight=None):
        super().__init__()
        cls = "MultiMarginLoss"
        if isinstance(p, bool) or not isinstance(p, int):
            raise TypeError(f"For '{cls}', the 'p' must be an int, but got {type(p).__name__}")
        if p not in (1, 2):
            raise ValueError(f"For '{cls}', the 'p' must be 1 or 2, but got {p}.")
        if not isinstance(margin, float):
            raise TypeError(f"For '{cls}', the 'margin' must be a float, but got "
                            f"{type(margin).__name__}")
        self.p, self.margin = p, margin
        self.reduction = check_reduction(reduction, cls)
        self.weight = weight

    def construct(self, x, target, weight=None):
        if self.weight is not None:
            weight = self.weight
        return multi_margin(x, target, self.p, self.margin, weight, self.reduction)


class MultilabelMarginLoss(LossBase):
    """Multi-label hinge loss; each row of ``target`` lists the sample's classes up to the
    first -1. ``MultilabelMarginLoss(reduction='mean')``."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = check_reduction(reduction, "MultilabelMarginLoss")

    def construct(self, x, target):
        return ops.multilabel_margin_loss(x, target, self.reduction)


class MultiLabelSoftMarginLoss(LossBase):
    """``-(y log sigmoid(x) + (1 - y) log sigmoid(-x))`` (times ``weight``) averaged over the
    classes. ``MultiLabelSoftMarginLoss(weight=None, reduction='mean')``."""

    def __init__(self, weight=None, reduction="mean"):
        super().__init__(reduction)
        self.weight = weight

    def construct(self, x, target):
        return ops.multilabel_soft_margin_loss(x, target, self.weight, self.reduction)


class HingeEmbeddingLoss(LossBase):
    """``x`` where ``labels > 0`` plus ``max(0, margin - x)`` where ``labels < 0``.

    ``HingeEmbeddingLoss(margin=1.0, reduction='mean')``.
    """

    def __init__(self, margin=1.0, reduction="mean"):
        super().__init__()
        cls = "HingeEmbeddingLoss"
        if isinstance(margin, bool) or not isinstance(margin, (float, int)):
            raise TypeError(f"For '{cls}', the 'margin' must be a float or an int, but got "
                            f"{type(margin).__name__}")
        if not isinstance(reduction, str) or reduction not in ("none", "sum", "mean"):
            raise ValueError(f"For '{cls}', the 'reduction' must be in ['none', 'sum', "
                             f"'mean'], but got {reduction}.")
        self.margin = margin
        self.reduction = reduction

    def construct(self, logits, labels):
        return ops.hinge_embedding_loss(logits, labels, self.margin, self.reduction)


class CosineEmbeddingLoss(LossBase):
    """``1 - cos(x1, x2)`` where ``labels == 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``labels == -1`` (cosine along axis 1).

    ``CosineEmbeddingLoss(margin=0.0, reduction='mean')``; ``margin`` a float in [-1, 1].
    """

    def __init__(self, margin=0.0, reduction="mean"):
        super().__init__(reduction)
        cls = "CosineEmbeddingLoss"
        if not isinstance(margin, float):
            raise TypeError(f"For '{cls}', the 'margin' must be a float, but got "
                            f"{type(margin).__name__}")
        if not -1.0 <= margin <= 1.0:
            raise ValueError(f"For '{cls}', the 'margin' must be in [-1.0, 1.0], but got "
                             f"{margin}.")
        self.margin = margin

    def construct(self, logits_x1, logits_x2, labels):
        cls = "CosineEmbeddingLoss"
        check_tensor(logits_x1, "logits_x1", cls)
        check_tensor(logits_x2, "logits_x2", cls)
        check_tensor(labels, "labels", cls)
        if logits_x1.shape != logits_x2.shape or logits_x1.dtype is not logits_x2.dtype:
            raise TypeError(f"For '{cls}', 'logits_x1' and 'logits_x2' must have the same "
                            f"shape and dtype, but got {logits_x1.shape} {logits_x1.dtype} "
                            f"and {logits_x2.shape} {logits_x2.dtype}.")
        cosine = _cosine(logits_x1, logits_x2)
        zeros = F.zeros_like(cosine)
        pos = F.where(F.equal(labels, 1), F.sub(1.0, cosine), zeros)
        neg = F.where(F.equal(labels, -1), F.relu(F.sub(cosine, self.margin)), zeros)
        return self.get_loss(F.add(pos, neg))


class TripletMarginLoss(LossBase):
    """``max(d(x, positive) - d(x, negative) + margin, 0)`` with ``d`` the p-norm distance
    (``|a - b + eps|_p``); ``swap`` uses ``min(d(x, negative), d(positive, negative))``.

    ``TripletMarginLoss(p=2, swap=False, eps=1e-06, reduction='mean', margin=1.0)``; called as
    ``loss(x, positive, negative, margin=1.0)`` (a constructor margin other than 1.0 wins).
    """

    def __init__(self, p=2, swap=False, eps=1e-06, reduction="mean", margin=1.0):
        super().__init__()
        self.p, self.swap, self.eps = p, swap, eps
        self.reduction = reduction
        self.margin = margin

    def construct(self, x, positive, negative, margin=1.0):
        if self.margin != 1.0:
            margin = self.margin
        return ops.triplet_margin_loss(x, positive, negative, margin, self.p, self.eps,
                                       self.swap, self.reduction)


def _pairwise_l2(x, y):
    d = F.abs(F.sub(x, y))
    if d.ndim == 0:
        raise ValueError(f"For 'pairwise_distance' in 'TripletMarginWithDistanceLoss', 'ndim' "
                         f"of the input must be positive, but got {d.ndim}")
    return F.sqrt(F.sum(F.square(d), 1))


class TripletMarginWithDistanceLoss(LossBase):
    """``max(d(x, positive) - d(x, negative) + margin, 0)`` with a given distance function
    (default: the 2-norm of the difference along axis 1); ``swap`` as in
    :class:`TripletMarginLoss`.

    ``TripletMarginWithDistanceLoss(distance_function=None, swap=False, reduction='mean',
    margin=1.0)``; ``margin`` a float.
    """

    def __init__(self, distance_function=None, swap=False, reduction="mean", margin=1.0):
        super().__init__(reduction=reduction)
        cls = "TripletMarginWithDistanceLoss"
        if not isinstance(margin, float):
            raise TypeError(f"For '{cls}', the 'margin' must be a float, but got "
                            f"{type(margin).__name__}")
        if not isinstance(swap, bool):
            raise TypeError(f"For '{cls}', the 'swap' must be a bool, but got "
                            f"{type(swap).__name__}")
        self.distance_function = _pairwise_l2 if distance_function is None \
            else distance_function
        self.swap = swap
        self.margin = margin

    def construct(self, x, positive, negative):
        cls = "TripletMarginWithDistanceLoss"
        for name, v in (("x", x), ("positive", positive), ("negative", negative)):
            check_tensor(v, name, cls)
        d1 = self.distance_function(x, positive)
        d2 = self.distance_function(x, negative)
        if self.swap:
            d2 = F.minimum(d2, self.distance_function(positive, negative))
        if not isinstance(d1, Tensor):
            raise TypeError(f"For '{cls}', the 'distance_function' must return Tensors")
        return self.get_loss(F.relu(F.add(F.sub(d1, d2), self.margin)))


__all__ = ["MarginRankingLoss", "SoftMarginLoss", "MultiMarginLoss", "MultilabelMarginLoss",
           "MultiLabelSoftMarginLoss", "HingeEmbeddingLoss", "CosineEmbeddingLoss",
           "TripletMarginLoss", "TripletMarginWithDistanceLoss"]
