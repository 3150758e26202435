"""Classification and regression losses: ``cross_entropy``, ``nll_loss``, the binary cross
entropies, ``mse_loss``, ``l1_loss``, ``smooth_l1_loss``, ``kl_div``, with their Primitives.
"""
from __future__ import annotations

import numpy as np

from mscore import dispatch
from mscore._state import thread as _thread
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.fused_reference import const
from mscore.ops._args import _check_tensor, _float_input
from mscore.ops.array.creation import ones, zeros_like
from mscore.ops.array.indexing import gather, one_hot
from mscore.ops.array.manipulation import reshape, transpose
from mscore.ops.control import cast
from mscore.ops.math.elementwise import (
    abs,
    add,
    div,
    equal,
    exp,
    greater,
    less,
    log,
    mul,
    neg,
    not_equal,
    square,
    sub,
    where,
)
from mscore.ops.nn.activation import _number, log_softmax, relu, softmax
from mscore.ops.primitive_base import (
    Primitive,
    _elementwise,
    check_bool,
    check_float,
    check_int,
    check_reduction,
)
from mscore.ops.reduction.reduce import mean, sum

_wrap = Tensor._wrap


def _reduce(loss, reduction):
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"reduction: expected 'mean', 'sum' or 'none', got {reduction!r}")


def _check_class_labels(target, classes, ignore_index=None):
    """Every class index of ``target`` must lie in ``[0, classes)`` or equal
    ``ignore_index`` (None: no exception); otherwise ``ValueError``, the same on every backend
    (one backend would return nan, another a number, a third raise its own error). Returns
    the labels to compute with.

    The check reads label values, so it runs where they exist: in PYNATIVE mode, not inside
    a compiled (GRAPH_MODE) program or a function the array library traces itself
    (``jax.jit``), whose values are symbolic. Labels in host memory (a CPU device) are read
    at once and the error is raised here. Labels on a GPU are checked on the device and the
    error raised at the next host read (the step's own synchronisation; no extra one per
    step); the labels returned then have bad entries replaced by class 0, so no kernel
    indexes out of range in the meantime (a CUDA kernel would abort the process)."""
    if _thread.compiled_depth:
        return target
    if dispatch.backend().device != "CPU":
        return _labels_checked_on_device(target, classes, ignore_index)
    try:  # the labels themselves, not a flag computed on the device: one read, no array ops
        labels = target.asnumpy()
    except Exception:  # symbolic labels (traced by the library's own jit)
        return target
    _raise_for_bad_labels(labels, classes, ignore_index)
    return target


def class_label_check(labels, classes, ignore_index):
    """``(checked, bad)`` of native integer ``labels``: ``bad`` (0-d bool) tells whether a
    label lies outside ``[0, classes)`` without equalling ``ignore_index`` (None: none is
    ignored), and ``checked`` is ``labels`` with those replaced by 0.

    The backend's method of this name computes it where it has one (CuPy: one elementwise
    kernel and one reduction); this is its definition, from primitives."""
    kernel = getattr(dispatch.backend(), "class_label_check", None)
    if kernel is not None:
        return kernel(labels, int(classes), None if ignore_index is None else int(ignore_index))
    dt = dispatch.dtype(labels)
    zero = const(0, dt)   # the constants made once per backend, not every step
    bad = call("logical_or", call("less", labels, zero),
               call("greater_equal", labels, const(int(classes), dt)))
    if ignore_index is not None:
        bad = call("logical_and", bad, call("not_equal", labels, const(int(ignore_index), dt)))
    return call("where", bad, zero, labels), call("any", bad, axis=None, keepdims=False)


def _labels_checked_on_device(target, classes, ignore_index):
    d = target._data
    checked, flag = class_label_check(d, classes, ignore_index)
    backend = dispatch.backend()

    def check():
        try:
            found = bool(backend.to_numpy(flag))
        except Exception:  # symbolic labels (traced by the library's own jit)
            return
        if found:
            _raise_for_bad_labels(backend.to_numpy(d), classes, ignore_index)

    dispatch.defer_check(check)
    return _wrap(checked)


def _raise_for_bad_labels(labels, classes, ignore_index):
    mask = (labels < 0) | (labels >= classes)
    if ignore_index is not None:
        mask &= labels != ignore_index
    if not mask.any():
        return
    values = np.unique(labels[mask])
    shown = ", ".join(str(v) for v in values[:5]) + (", ..." if values.size > 5 else "")
    allowed = f"[0, {classes})" + ("" if ignore_index is None
                                    else f" or equal ignore_index={ignore_index}")
    raise ValueError(f"labels: class indices must be in {allowed} for logits with {classes} "
                     f"classes; got {shown} at {int(mask.sum())} of {mask.size} positions")


def nll_loss(inputs, target, weight=None, ignore_index=-100, reduction="mean",
             label_smoothing=0.0):
    """Negative log-likelihood of class indices ``target`` under log-probabilities
    ``inputs`` (N, C, ...); the mean is weighted by ``weight[target]`` as in torch. A class
    index outside ``[0, C)`` other than ``ignore_index`` is a ``ValueError`` (PYNATIVE)."""
    logp = _float_input(inputs, "inputs")
    t = _check_tensor(target, "target")
    if t.dtype.is_floating:
        raise TypeError(f"target: expected integer class indices, got {t.dtype}")
    t = _check_class_labels(t, logp.shape[1], ignore_index)
    return _nll_loss(logp, t, weight, ignore_index, reduction, label_smoothing)


def _nll_loss(logp, t, weight, ignore_index, reduction, label_smoothing):
    c = logp.shape[1]
    if logp.ndim > 2:  # move classes last: (N, d1.., C)
        perm = (0,) + tuple(range(2, logp.ndim)) + (1,)
        logp = transpose(logp, perm)
    valid = not_equal(t, ignore_index)
    safe_t = where(valid, t, 0)
    hot = one_hot(safe_t, c, 1.0, 0.0)
    hot = cast(hot, logp.dtype)
    w = ones((c,), logp.dtype) if weight is None else cast(weight, logp.dtype)
    sample_w = mul(sum(mul(hot, w), -1), cast(valid, logp.dtype))
    picked = neg(sum(mul(hot, logp), -1))
    loss = mul(picked, sample_w)
    if label_smoothing:
        smooth = neg(mean(mul(logp, w), -1))
        smooth = mul(smooth, cast(valid, logp.dtype))
        loss = add(mul(loss, 1.0 - label_smoothing), mul(smooth, label_smoothing))
    if reduction == "mean":
        total_w = sum(sample_w)
        # Every target ignored: the mean is NaN (0/0) with gradient 0, as MindSpore's: the
        # NaN a constant, the division's by 1, so no 0 * inf reaches the gradient.
        nothing = equal(total_w, 0.0)
        return where(nothing, float("nan"), div(sum(loss), where(nothing, 1.0, total_w)))
    return _reduce(loss, reduction)


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0):
    """Cross entropy of logits ``input`` (N, C, ...) against class indices or class
    probabilities ``target`` (same shape as input). A class index outside ``[0, C)`` other
    than ``ignore_index`` is a ``ValueError`` (PYNATIVE)."""
    x = _float_input(input)
    t = _check_tensor(target, "target")
    if not t.dtype.is_floating:
        t = _check_class_labels(t, x.shape[1], ignore_index)
    return _cross_entropy(x, t, weight, ignore_index, reduction, label_smoothing)


def _cross_entropy(x, t, weight, ignore_index, reduction, label_smoothing):
    """:func:`cross_entropy` once the labels are checked."""
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing: expected a value in [0, 1], got {label_smoothing}")
    fused = dispatch.fused("cross_entropy")
    if fused is not None and weight is None and not t.dtype.is_floating and x.ndim == 2:
        return _wrap(fused(x._data, t._data, ignore_index=int(ignore_index),
                           reduction=reduction, label_smoothing=float(label_smoothing)))
    if t.dtype.is_floating and t.shape != x.shape:
        raise ValueError(f"target: probabilities must have the input's shape {x.shape}, "
                         f"got {t.shape}")
    general = dispatch.fused("softmax_cross_entropy")  # the reference autodiff's, if tracing
    if general is not None and reduction in ("mean", "sum", "none") and x.ndim >= 2 and (
            t.dtype.is_floating or t.shape == x.shape[:1] + x.shape[2:]) and (
            weight is None or (isinstance(weight, Tensor) and weight.shape == x.shape[1:2])):
        return _wrap(general(x._data, t._data, None if weight is None else weight._data,
                             int(ignore_index), reduction, float(label_smoothing)))
    logp = log_softmax(x, 1)
    if not t.dtype.is_floating:
        return _nll_loss(logp, t, weight, ignore_index, reduction, label_smoothing)
    c = x.shape[1]
    if label_smoothing:
        t = add(mul(t, 1.0 - label_smoothing), label_smoothing / c)
    per_class = mul(logp, cast(t, logp.dtype))
    if weight is not None:
        per_class = mul(per_class, reshape(weight, (1, c) + (1,) * (x.ndim - 2)))
    loss = neg(sum(per_class, 1))
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,
                                     reduction="mean"):
    """Sigmoid cross entropy, computed as max(x,0) - x*y + log(1 + exp(-|x|))."""
    x = _float_input(input, "input")
    y = cast(_check_tensor(target, "target"), x.dtype)
    if x.shape != y.shape:
        raise ValueError(f"target: expected shape {x.shape}, got {y.shape}")
    log_term = log(add(exp(neg(abs(x))), 1.0))
    if pos_weight is not None:
        lw = add(mul(sub(pos_weight, 1.0), y), 1.0)
        loss = add(mul(sub(1.0, y), x), mul(lw, add(log_term, relu(neg(x)))))
    else:
        loss = add(sub(relu(x), mul(x, y)), log_term)
    if weight is not None:
        loss = mul(loss, weight)
    return _reduce(loss, reduction)


def mse_loss(input, target, reduction="mean"):
    """Mean squared error."""
    d = sub(_float_input(input), target)
    return _reduce(mul(d, d), reduction)


def l1_loss(input, target, reduction="mean"):
    """Mean absolute error."""
    return _reduce(abs(sub(_float_input(input), target)), reduction)


def _reduction(reduction, allowed=("none", "mean", "sum")):
    if reduction not in allowed:
        raise ValueError(f"reduction: expected one of {list(allowed)}, got {reduction!r}")
    return reduction


_BCE_EPS = 1e-12


def _reduce_unchecked(loss, reduction):
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return sum(loss)
    return loss


def binary_cross_entropy(logits, labels, weight=None, reduction="mean"):
    """``-(y log(p + 1e-12) + (1 - y) log(1 - p + 1e-12))`` of probabilities ``logits``
    (MindSpore's kernel: a probability of exactly 0 or 1 costs -log(1e-12) = 27.63, not
    infinity), optionally weighted."""
    p = _float_input(logits, "logits")
    y = cast(_check_tensor(labels, "labels"), p.dtype)
    _reduction(reduction)
    if y.shape != p.shape:
        raise ValueError(f"labels: expected shape {p.shape}, got {y.shape}")
    log_p = log(add(p, _BCE_EPS))
    log_q = log(add(sub(1.0, p), _BCE_EPS))
    loss = neg(add(mul(y, log_p), mul(sub(1.0, y), log_q)))
    if weight is not None:
        loss = mul(loss, weight)
    return _reduce_unchecked(loss, reduction)


def smooth_l1_loss(input, target, beta=1.0, reduction="none"):
    """``0.5 d^2 / beta`` where ``|d| < beta``, ``|d| - 0.5 beta`` elsewhere (d = input -
    target)."""
    x = _float_input(input)
    beta = _number(beta, "beta")
    _reduction(reduction)
    d = abs(sub(x, target))
    quad = div(mul(mul(d, d), 0.5), beta) if beta > 0 else zeros_like(d)
    loss = where(less(d, beta), quad, sub(d, 0.5 * beta))
    return _reduce_unchecked(loss, reduction)


def kl_div(logits, labels, reduction="mean"):
    """Kullback-Leibler divergence ``labels * (log(labels) - logits)`` of log-probabilities
    ``logits``; 'mean' averages every element, 'batchmean' divides the sum by the batch
    size. Terms where ``labels`` is 0 count as 0."""
    x = _float_input(logits, "logits")
    y = cast(_check_tensor(labels, "labels"), x.dtype)
    _reduction(reduction, ("none", "mean", "sum", "batchmean"))
    positive = greater(y, 0.0)
    safe = where(positive, y, 1.0)
    loss = where(positive, mul(y, sub(log(safe), x)), 0.0)
    if reduction == "batchmean":
        return div(sum(loss), float(x.shape[0] if x.ndim else 1))
    return _reduce_unchecked(loss, reduction)


L2Loss = _elementwise("L2Loss", lambda x: div(sum(square(x)), 2.0),
                      "``sum(x^2) / 2``.")


class SoftmaxCrossEntropyWithLogits(Primitive):
    """``SoftmaxCrossEntropyWithLogits()(logits, labels)`` with one-hot (or probability)
    ``labels`` of shape (N, C) returns ``(loss of shape (N,), dlogits)``, where
    ``dlogits = softmax(logits) - labels``."""

    def compute(self, logits, labels):
        x = _float_input(logits, "logits")
        y = cast(_check_tensor(labels, "labels"), x.dtype)
        logp = log_softmax(x, -1)
        loss = neg(sum(mul(y, logp), -1))
        return loss, sub(exp(logp), y)


class SparseSoftmaxCrossEntropyWithLogits(Primitive):
    """``SparseSoftmaxCrossEntropyWithLogits(is_grad=False)(logits, labels)``: the mean
    cross entropy of class indices ``labels``; with ``is_grad`` its gradient with respect
    to ``logits``."""

    def __init__(self, is_grad=False):
        super().__init__()
        self.is_grad = check_bool(is_grad, "is_grad", type(self).__name__)

    def compute(self, logits, labels):
        x = _float_input(logits, "logits")
        t = _check_tensor(labels, "labels")
        if self.is_grad:
            hot = one_hot(t, x.shape[-1], 1.0, 0.0)
            return div(sub(softmax(x, -1), cast(hot, x.dtype)), float(x.shape[0]))
        return cross_entropy(x, t)


class SigmoidCrossEntropyWithLogits(Primitive):
    """``SigmoidCrossEntropyWithLogits()(logits, labels)``: elementwise."""

    def compute(self, logits, label):
        return binary_cross_entropy_with_logits(logits, label, reduction="none")


class BCEWithLogitsLoss(Primitive):
    """``BCEWithLogitsLoss(reduction='mean')(logits, label, weight, pos_weight)``."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = check_reduction(reduction, "BCEWithLogitsLoss")

    def compute(self, input, target, weight=None, posWeight=None):
        return binary_cross_entropy_with_logits(input, target, weight, posWeight,
                                                self.reduction)


class BinaryCrossEntropy(Primitive):
    """``BinaryCrossEntropy(reduction='mean')(logits, labels, weight=None)`` of
    probabilities."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = check_reduction(reduction, "BinaryCrossEntropy")

    def compute(self, input, target, weight=None):
        return binary_cross_entropy(input, target, weight, self.reduction)


class NLLLoss(Primitive):
    """``NLLLoss(reduction='mean', ignore_index=-100)(logits, labels, weight)`` of
    log-probabilities (N, C) returns ``(loss, total_weight)``."""

    def __init__(self, reduction="mean", ignore_index=-100):
        super().__init__()
        self.reduction = check_reduction(reduction, "NLLLoss")
        self.ignore_index = check_int(ignore_index, "ignore_index", "NLLLoss")

    def compute(self, logits, labels, weight):
        x = _float_input(logits, "logits")
        t = _check_tensor(labels, "labels")
        valid = cast(not_equal(t, self.ignore_index), x.dtype)
        safe = where(not_equal(t, self.ignore_index), t, 0)
        w = mul(gather(cast(weight, x.dtype), safe, 0), valid)
        picked = sum(mul(cast(one_hot(safe, x.shape[1], 1.0, 0.0), x.dtype), x), -1)
        loss = neg(mul(picked, w))
        total = sum(w)
        if self.reduction == "sum":
            return sum(loss), total
        if self.reduction == "mean":
            return div(sum(loss), total), total
        return loss, total


class KLDivLoss(Primitive):
    """``KLDivLoss(reduction='mean')(logits, labels)`` of log-probabilities ``logits``."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = check_reduction(reduction, "KLDivLoss",
                                         ("none", "mean", "sum", "batchmean"))

    def compute(self, logits, labels):
        return kl_div(logits, labels, self.reduction)


class SmoothL1Loss(Primitive):
    """``SmoothL1Loss(beta=1.0, reduction='none')(prediction, target)``."""

    def __init__(self, beta=1.0, reduction="none"):
        super().__init__()
        self.beta = check_float(beta, "beta", "SmoothL1Loss")
        self.reduction = check_reduction(reduction, "SmoothL1Loss")

    def compute(self, prediction, target):
        return smooth_l1_loss(prediction, target, self.beta, self.reduction)
