"""Classification losses: ``nn.SoftmaxCrossEntropyWithLogits``, ``nn.CrossEntropyLoss``,
``nn.NLLLoss``, ``nn.BCEWithLogitsLoss``, ``nn.BCELoss``, ``nn.KLDivLoss``,
``nn.FocalLoss``."""
from __future__ import annotations

from mscore import ops
from mscore.common import dtype as mdt
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.nn.layer._checks import check_bool, check_int, check_number
from mscore.nn.loss.base import LossBase, check_tensor
from mscore.ops import functional as F
from mscore.ops.nn.loss import _check_class_labels, _cross_entropy


def _check_pair(cls, logits, labels):
    check_tensor(logits, "logits", cls)
    check_tensor(labels, "labels", cls)
    if logits.shape != labels.shape:
        raise ValueError(f"For '{cls}', 'logits' and 'labels' must have the same shape, got "
                         f"{logits.shape} and {labels.shape}")


def _class_weight(weight, cls):
    """``weight`` if it is None or a float16/float32 Tensor (MindSpore's check)."""
    if weight is None:
        return None
    if not isinstance(weight, Tensor):
        raise TypeError(f"For '{cls}', the 'weight' must be a Tensor, but got "
                        f"{type(weight).__name__}")
    if weight.dtype not in (mdt.float16, mdt.float32):
        raise TypeError(f"For '{cls}', the 'weight' must be float16 or float32, but got "
                        f"{weight.dtype}")
    return weight


def _ignore_index(value, cls):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"For '{cls}', the 'ignore_index' must be an int, but got "
                        f"{type(value).__name__}")
    return value


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
            labels = _check_class_labels(labels, logits.shape[1])  # no index is ignored
            return _cross_entropy(logits, labels, None, -100, self.reduction, 0.0)
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
            _class_weight(weight, cls)
            if weight.ndim != 1:
                raise ValueError(f"For '{cls}', 'weight' must be 1-d (C,), got shape "
                                 f"{weight.shape}")
        self.weight = weight
        self.ignore_index = check_int(ignore_index, "ignore_index", cls)
        if not isinstance(label_smoothing, float):
            raise TypeError(f"For '{cls}', the 'label_smoothing' must be a float, but got "
                            f"{type(label_smoothing).__name__}")
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


class NLLLoss(LossBase):
    """Negative log-likelihood of class indices under log-probabilities (N, C, ...):
    ``-logits[n, labels[n]] * weight[labels[n]]``; 'mean' divides by the summed weights of
    the targets that are not ``ignore_index``.

    ``NLLLoss(weight=None, ignore_index=-100, reduction='mean')``.
    """

    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__(reduction)
        cls = "NLLLoss"
        self.ignore_index = _ignore_index(ignore_index, cls)
        self.weight = _class_weight(weight, cls)

    def construct(self, logits, labels):
        cls = "NLLLoss"
        check_tensor(logits, "logits", cls)
        check_tensor(labels, "labels", cls)
        if logits.ndim == 1:  # unbatched (C,)
            out = self.construct(F.expand_dims(logits, 0), F.expand_dims(labels, 0))
            return F.squeeze(out, 0) if self.reduction == "none" else out
        weight = self.weight
        if weight is not None and weight.dtype is not logits.dtype:
            weight = F.cast(weight, logits.dtype)
        return F.nll_loss(logits, labels, weight, self.ignore_index, self.reduction)


class BCEWithLogitsLoss(LossBase):
    """Sigmoid binary cross entropy of ``logits`` against ``labels`` in [0, 1].

    ``BCEWithLogitsLoss(reduction='mean', weight=None, pos_weight=None)``; ``weight`` and
    ``pos_weight`` broadcast against the logits (a Parameter is a ``TypeError``, as in
    MindSpore).
    """

    def __init__(self, reduction="mean", weight=None, pos_weight=None):
        super().__init__(reduction)
        for name, v in (("weight", weight), ("pos_weight", pos_weight)):
            if isinstance(v, Parameter):
                raise TypeError(f"For 'BCEWithLogitsLoss', the '{name}' can not be a "
                                f"Parameter.")
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


class BCELoss(LossBase):
    """Binary cross entropy of probabilities ``logits`` against ``labels``:
    ``-w * (y log p + (1 - y) log(1 - p))``, each log clamped at -100.

    ``BCELoss(weight=None, reduction='mean')``.
    """

    def __init__(self, weight=None, reduction="mean"):
        super().__init__(reduction)
        if weight is not None and not isinstance(weight, Tensor):
            raise TypeError(f"For 'BCELoss', the 'weight' must be a Tensor or None, but got "
                            f"{type(weight).__name__}")
        self.weight = weight

    def construct(self, logits, labels):
        _check_pair("BCELoss", logits, labels)
        weight = self.weight
        if weight is not None and weight.dtype is not logits.dtype:
            weight = F.cast(weight, logits.dtype)
        return ops.binary_cross_entropy(logits, labels, weight, self.reduction)


class KLDivLoss(LossBase):
    """Kullback-Leibler divergence ``labels * (log(labels) - logits)`` of log-probabilities
    ``logits``; ``reduction`` 'mean' (every element), 'batchmean' (the sum over the batch
    size), 'sum' or 'none'.

    ``KLDivLoss(reduction='mean')``.
    """

    def __init__(self, reduction="mean"):
        super().__init__()
        if reduction not in ("none", "mean", "sum", "batchmean"):
            raise ValueError(f"For 'KLDivLoss', the 'reduction' must be in ['none', 'mean', "
                             f"'batchmean', 'sum'], but got {reduction}.")
        self.reduction = reduction

    def construct(self, logits, labels):
        check_tensor(logits, "logits", "KLDivLoss")
        check_tensor(labels, "labels", "KLDivLoss")
        return ops.kl_div(logits, labels, self.reduction)


class FocalLoss(LossBase):
    """Focal loss of logits (N, C, ...) against class indices (N, 1, ...) or one-hot labels
    (N, C, ...): ``-(1 - p)^gamma * log p`` (weighted per class), averaged over the classes
    (one-hot) and then reduced.

    ``FocalLoss(weight=None, gamma=2.0, reduction='mean')``; ``gamma`` a float, ``weight`` a
    1-d Tensor.
    """

    def __init__(self, weight=None, gamma=2.0, reduction="mean"):
        super().__init__(reduction=reduction)
        cls = "FocalLoss"
        if not isinstance(gamma, float):
            raise TypeError(f"For '{cls}', the 'gamma' must be a float, but got "
                            f"{type(gamma).__name__}")
        if weight is not None and not isinstance(weight, Tensor):
            raise TypeError(f"For '{cls}', the type of 'weight' must be a Tensor, but got "
                            f"{type(weight).__name__}.")
        if isinstance(weight, Tensor) and weight.ndim != 1:
            raise ValueError(f"For '{cls}', the dimension of 'weight' must be 1, but got "
                             f"{weight.ndim}.")
        self.gamma = gamma
        self.weight = weight

    def construct(self, logits, labels):
        cls = "FocalLoss"
        check_tensor(logits, "logits", cls)
        check_tensor(labels, "labels", cls)
        if not 2 <= logits.ndim <= 4 or not 2 <= labels.ndim <= 4 or logits.ndim != labels.ndim:
            raise ValueError(f"For '{cls}', the dimensions of 'logits' and 'labels' must be "
                             f"equal and in [2, 4], but got {logits.ndim} and {labels.ndim}.")
        c = logits.shape[1]
        if c == 1:
            raise ValueError(f"For '{cls}', the 'logits'.shape[1] cannot be one, but got {c}.")
        if labels.shape[1] not in (1, c):
            raise ValueError(f"For '{cls}', the 'labels'.shape[1] must be one or equal to "
                             f"'logits'.shape[1]: {c}, but got {labels.shape[1]}.")
        if labels.dtype not in (mdt.int32, mdt.int64, mdt.float16, mdt.float32):
            raise TypeError(f"For '{cls}', the 'labels' must be int32, int64, float16 or "
                            f"float32, but got {labels.dtype}.")
        n = logits.shape[0]
        x = F.reshape(logits, (n, c, -1))
        y = F.reshape(labels, (n, labels.shape[1], -1))
        logp = F.log_softmax(x, 1)
        index = labels.shape[1] == 1
        if index:
            idx = F.cast(y, mdt.int32)
            logp = F.squeeze(F.gather_elements(logp, 1, idx), 1)       # (N, D)
        p = F.exp(logp)
        if self.weight is not None:
            w = F.reshape(F.cast(self.weight, logp.dtype), (1, c, 1))
            w = F.broadcast_to(w, (n, c, x.shape[2]))
            if index:
                w = F.squeeze(F.gather_elements(w, 1, idx), 1)
            logp = F.mul(logp, w)
        focus = F.pow(F.sub(1.0, p), self.gamma)
        if index:
            loss = F.mean(F.neg(F.mul(focus, logp)), 1)
        else:
            loss = F.mean(F.neg(F.mul(F.mul(focus, F.cast(y, logp.dtype)), logp)), -1)
        return self.get_loss(loss)


__all__ = ["SoftmaxCrossEntropyWithLogits", "CrossEntropyLoss", "NLLLoss",
           "BCEWithLogitsLoss", "BCELoss", "KLDivLoss", "FocalLoss"]
