"""Regression and likelihood losses: ``nn.HuberLoss``, ``nn.SmoothL1Loss``,
``nn.GaussianNLLLoss``, ``nn.PoissonNLLLoss``, and the segmentation losses ``nn.DiceLoss``
and ``nn.MultiClassDiceLoss``."""
from __future__ import annotations

import math

from mscore import ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.nn.layer.activation import get_activation
from mscore.nn.loss.base import LossBase, check_tensor
from mscore.ops import functional as F


class HuberLoss(LossBase):
    """``0.5 z^2`` where ``|z| < delta``, else ``delta * (|z| - 0.5 delta)``, z = logits -
    labels. ``HuberLoss(reduction='mean', delta=1.0)`` (``delta`` > 0, checked at the
    call)."""

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def construct(self, logits, labels):
        return ops.huber_loss(logits, labels, self.reduction, self.delta)


class SmoothL1Loss(LossBase):
    """``0.5 z^2 / beta`` where ``|z| < beta``, else ``|z| - 0.5 beta``, z = logits - labels
    (same shape and dtype). ``SmoothL1Loss(beta=1.0, reduction='none')``; ``beta`` must be
    > 0 (a ``RuntimeError`` at the call, as in MindSpore)."""

    def __init__(self, beta=1.0, reduction="none"):
        super().__init__(reduction)
        if isinstance(beta, bool) or not isinstance(beta, (int, float)):
            raise TypeError(f"For 'SmoothL1Loss', the 'beta' must be a float, but got "
                            f"{type(beta).__name__}")
        self.beta = float(beta)

    def construct(self, logits, labels):
        cls = "SmoothL1Loss"
        check_tensor(logits, "logits", cls)
        check_tensor(labels, "labels", cls)
        if logits.dtype is not labels.dtype:
            raise TypeError(f"For '{cls}', 'logits' and 'labels' must have the same dtype, but "
                            f"got {logits.dtype} and {labels.dtype}.")
        if logits.shape != labels.shape:
            raise ValueError(f"For '{cls}', 'logits' and 'labels' must have the same shape, but "
                             f"got {logits.shape} and {labels.shape}.")
        if not self.beta > 0:   # MindSpore's kernel refuses it when it runs
            raise RuntimeError(f"For '{cls}', the values for beta should greater than 0, but "
                               f"got {self.beta}.")
        return ops.smooth_l1_loss(logits, labels, self.beta, self.reduction)


class GaussianNLLLoss(LossBase):
    """Gaussian negative log-likelihood
    ``0.5 * (log(max(var, eps)) + (logits - labels)^2 / max(var, eps))`` (+ ``0.5 log 2pi``
    with ``full``). ``GaussianNLLLoss(*, full=False, eps=1e-6, reduction='mean')``; called as
    ``loss(logits, labels, var)``."""

    def __init__(self, *, full=False, eps=1e-06, reduction="mean"):
        super().__init__()
        cls = "GaussianNLLLoss"
        if isinstance(eps, bool) or not isinstance(eps, float):
            raise TypeError(f"For '{cls}', the 'eps' must be a float, but got "
                            f"{type(eps).__name__}")
        if not 0 < eps < math.inf:
            raise ValueError(f"For '{cls}', the 'eps' must be in (0, inf), but got {eps}.")
        if not isinstance(full, bool):
            raise TypeError(f"For '{cls}', the 'full' must be a bool, but got "
                            f"{type(full).__name__}")
        if not isinstance(reduction, str) or reduction not in ("none", "mean", "sum"):
            raise ValueError(f"For 'gaussian_nll_loss', the 'reduction' must be in ['none', "
                             f"'mean', 'sum'], but got {reduction}.")
        self.full, self.eps, self.reduction = full, eps, reduction

    def construct(self, logits, labels, var):
        cls = "GaussianNLLLoss"
        check_tensor(logits, "logits", cls)
        check_tensor(labels, "labels", cls)
        check_tensor(var, "var", cls)
        return ops.gaussian_nll_loss(logits, labels, var, self.full, self.eps,
                                     self.reduction)


class PoissonNLLLoss(LossBase):
    """Poisson negative log-likelihood: ``exp(x) - target * x`` (``log_input``) or
    ``x - target * log(x + eps)``; ``full`` adds Stirling's term
    ``target log target - target + 0.5 log(2 pi target)`` where ``target > 1``.

    ``PoissonNLLLoss(log_input=True, full=False, eps=1e-08, reduction='mean')``; called as
    ``loss(input, target)``.
    """

    def __init__(self, log_input=True, full=False, eps=1e-08, reduction="mean"):
        super().__init__(reduction=reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def construct(self, input, target):
        cls = "PoissonNLLLoss"
        check_tensor(input, "input", cls)
        check_tensor(target, "target", cls)
        target = F.cast(target, input.dtype)
        if self.log_input:
            loss = F.sub(F.exp(input), F.mul(target, input))
        else:
            loss = F.sub(input, F.mul(target, F.log(F.add(input, self.eps))))
        if self.full:
            t = F.maximum(target, self.eps)
            stirling = F.add(F.sub(F.mul(F.add(t, 0.5), F.log(t)), t), 0.5 * math.log(2 * math.pi))
            loss = F.add(loss, F.where(F.greater(t, 1.0), stirling, 0.0))
        return self.get_loss(loss)


def _dice_loss(logits, label, smooth):
    x = F.reshape(logits, (-1,))
    y = F.reshape(label, (-1,))
    intersection = F.sum(F.mul(x, y))
    union = F.add(F.sum(F.mul(x, x)), F.sum(F.mul(y, y)))
    return F.sub(1.0, F.div(F.mul(intersection, 2.0), F.add(union, smooth)))


def _check_dice_inputs(logits, label, cls):
    check_tensor(logits, "logits", cls)
    check_tensor(label, "labels", cls)
    if logits.shape != label.shape:
        raise ValueError(f"For '{cls}', the 'logits_shape' must be equal to 'label_shape', but "
                         f"got {logits.shape} and {label.shape}.")
    for name, x in (("logits", logits), ("labels", label)):
        if x.dtype is mdt.uint8:
            raise TypeError(f"For '{cls}', the dtype of '{name}' can not be uint8.")


class DiceLoss(LossBase):
    """``1 - 2 * sum(x * y) / (sum(x^2) + sum(y^2) + smooth)`` over all elements.
    ``DiceLoss(smooth=1e-5)``; ``smooth`` a float > 0."""

    def __init__(self, smooth=1e-05):
        super().__init__()
        if not isinstance(smooth, float):
            raise TypeError(f"For 'DiceLoss', the 'smooth' must be a float, but got "
                            f"{type(smooth).__name__}")
        if not smooth > 0:
            raise ValueError(f"For 'DiceLoss', the 'smooth' must be greater than 0, but got "
                             f"{smooth}.")
        self.smooth = smooth

    def construct(self, logits, label):
        _check_dice_inputs(logits, label, "DiceLoss")
        return _dice_loss(logits, label, self.smooth)


_DICE_ACTIVATIONS = ("softmax", "logsoftmax", "relu", "relu6", "tanh", "sigmoid")


class MultiClassDiceLoss(LossBase):
    """The mean over the classes (axis 1) of the binary dice loss of each class, after
    ``activation`` (a name, a Cell, or None), optionally weighted by ``weights[i]`` and
    skipping class ``ignore_indiex`` (MindSpore's spelling).

    ``MultiClassDiceLoss(weights=None, ignore_indiex=None, activation='softmax')``.
    """

    def __init__(self, weights=None, ignore_indiex=None, activation="softmax"):
        super().__init__()
        cls = "MultiClassDiceLoss"
        if weights is not None and not isinstance(weights, Tensor):
            raise TypeError(f"For '{cls}', the 'weights' must be a Tensor, but got "
                            f"{type(weights).__name__}")
        if isinstance(weights, Tensor) and weights.ndim != 2:
            raise ValueError(f"For '{cls}', the dimension of 'weights' must be 2, but got "
                             f"{weights.ndim}.")
        if ignore_indiex is not None and (isinstance(ignore_indiex, bool) or
                                          not isinstance(ignore_indiex, int)):
            raise TypeError(f"For '{cls}', the 'ignore_indiex' must be an int, but got "
                            f"{type(ignore_indiex).__name__}")
        if isinstance(activation, str):
            if activation not in _DICE_ACTIVATIONS:
                raise ValueError(f"For '{cls}', the 'activation' must be in "
                                 f"{list(_DICE_ACTIVATIONS)}, but got {activation}.")
            activation = get_activation(activation)
        if activation is not None and not isinstance(activation, Cell):
            raise TypeError(f"For '{cls}', the 'activation' must be str or Cell, but got "
                            f"{type(activation)}.")
        self.weights = weights
        self.ignore_indiex = ignore_indiex
        self.activation = activation
        self.smooth = 1e-05

    def construct(self, logits, label):
        cls = "MultiClassDiceLoss"
        _check_dice_inputs(logits, label, cls)
        if logits.ndim < 2:
            raise ValueError(f"For '{cls}', the 'logits' dimension must be greater than 1, but "
                             f"got {logits.ndim}.")
        if self.activation is not None:
            logits = self.activation(logits)
        classes = label.shape[1]
        total = None
        for i in range(classes):
            if i == self.ignore_indiex:
                continue
            loss = _dice_loss(logits[:, i], label[:, i], self.smooth)
            if self.weights is not None:
                if self.weights.shape[0] != classes:
                    raise ValueError(f"For '{cls}', the weight_shape[0] must be equal to "
                                     f"label_shape[1], but got {self.weights.shape[0]} and "
                                     f"{classes}.")
                loss = F.mul(loss, self.weights[i])
            total = loss if total is None else F.add(total, loss)
        return F.div(total, float(classes))


__all__ = ["HuberLoss", "SmoothL1Loss", "GaussianNLLLoss", "PoissonNLLLoss", "DiceLoss",
           "MultiClassDiceLoss"]
