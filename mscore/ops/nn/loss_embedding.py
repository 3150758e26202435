"""Margin, ranking and embedding losses: ``margin_ranking_loss``,
``cosine_embedding_loss``, ``hinge_embedding_loss``, ``triplet_margin_loss``, the multi-label
and multi-class margin losses, ``huber_loss``, ``soft_margin_loss``, ``gaussian_nll_loss``,
``pairwise_distance``, and the reduction helper the nn losses share.

Composed from the functional ops, so every backend differentiates them; arguments are
checked as MindSpore checks them.
"""
from __future__ import annotations

import math
import numbers

from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.ops.array.creation import arange, zeros_like
from mscore.ops.array.indexing import gather, one_hot
from mscore.ops.array.manipulation import expand_dims, reshape, squeeze
from mscore.ops.control import cast
from mscore.ops.linalg.products import matmul
from mscore.ops.math.elementwise import (
    abs,
    add,
    div,
    equal,
    exp,
    greater,
    greater_equal,
    less,
    less_equal,
    log,
    log1p,
    logical_and,
    logical_not,
    maximum,
    minimum,
    mul,
    neg,
    pow,
    sqrt,
    square,
    sub,
    where,
)
from mscore.ops.nn.activation import relu
from mscore.ops.nn.loss import _check_class_labels
from mscore.ops.reduction.reduce import mean, sum

_REDUCTIONS = ("mean", "sum", "none")


def _tensor(x, name, fn):
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{fn}', the '{name}' must be a Tensor, but got "
                        f"{type(x).__name__}")
    return x


def _same_dtype(name1, x1, name2, x2, fn):
    if x1.dtype is not x2.dtype:
        raise TypeError(f"For {fn}, the {name1} dtype should be equal to {name2} dtype, but got "
                        f"{name1} dtype:{x1.dtype}, {name2} dtype:{x2.dtype}.")


def _check_reduction(reduction, fn):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"For '{fn}', the 'reduction' must be in ['mean', 'sum', 'none'], but "
                         f"got {reduction}.")
    return reduction


def reduce_loss(x, reduction, fn, weights=None):
    """``x`` (times ``weights``) reduced by ``reduction``; the reduction runs in float32 and
    the result keeps ``x``'s dtype (MindSpore's ``LossBase.get_loss``)."""
    _check_reduction(reduction, fn)
    dtype = x.dtype
    if weights is not None:
        x = mul(x, weights)
    if reduction == "none":
        return x
    wide = x if dtype in (mdt.float32, mdt.float64) else cast(x, mdt.float32)
    out = mean(wide) if reduction == "mean" else sum(wide)
    return out if out.dtype is dtype else cast(out, dtype)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction="mean"):
    """``max(0, -target * (input1 - input2) + margin)``; ``margin`` must be a float."""
    fn = "margin_ranking_loss"
    if not isinstance(margin, float):
        raise TypeError(f"For '{fn}', the type of 'margin' must be float, but got "
                        f"{type(margin).__name__}.")
    for name, x in (("input1", input1), ("input2", input2), ("target", target)):
        _tensor(x, name, fn)
    _same_dtype("input1", input1, "input2", input2, fn)
    _same_dtype("target", target, "input1", input1, fn)
    x = relu(add(mul(neg(target), sub(input1, input2)), margin))
    return reduce_loss(x, reduction, fn)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction="mean"):
    """``1 - cos(x1, x2)`` where ``target == 1`` and ``max(0, cos - margin)`` where
    ``target == -1`` (cosine along axis 1, no epsilon: zero vectors give nan, as in
    MindSpore); ``margin`` in [-1, 1]."""
    fn = "ops.cosine_embedding_loss"
    for name, x in (("input1", input1), ("input2", input2), ("target", target)):
        _tensor(x, name, fn)
    _same_dtype("input1", input1, "input2", input2, fn)
    if input1.ndim < 2 or target.shape != input1.shape[:1] + input1.shape[2:]:
        raise ValueError(f"For '{fn}', the shape of 'target' must be the shape of 'input1' "
                         f"without axis 1, but got 'input1' shape {input1.shape} and "
                         f"'target' shape {target.shape}.")
    if not input1.dtype.is_floating:
        input1, input2 = cast(input1, mdt.float32), cast(input2, mdt.float32)
    if isinstance(margin, bool) or not isinstance(margin, (int, float)):
        raise TypeError(f"For {fn}, 'margin' must be float, but got {type(margin)}")
    margin = float(margin)
    if not -1.0 <= margin <= 1.0:
        raise ValueError(f"For {fn}, the value of 'margin' should be in [-1, 1], but got "
                         f"{margin}.")
    cosine = _cosine(input1, input2)
    zeros = zeros_like(cosine)
    pos = where(equal(target, 1), sub(1.0, cosine), zeros)
    neg = where(equal(target, -1), relu(sub(cosine, margin)), zeros)
    return reduce_loss(add(pos, neg), reduction, "cosine_embedding_loss")


def _cosine(x1, x2):
    dot = sum(mul(x1, x2), 1)
    return div(dot, mul(sqrt(sum(square(x1), 1)), sqrt(sum(square(x2), 1))))


def hinge_embedding_loss(inputs, targets, margin=1.0, reduction="mean"):
    """``x`` where ``target > 0`` plus ``max(0, margin - x)`` where ``target < 0``."""
    fn = "HingeEmbeddingLoss"
    if isinstance(margin, bool) or not isinstance(margin, (float, int)):
        raise TypeError(f"For '{fn}', 'margin' must be a float or int, but got "
                        f"{type(margin)}.")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"For '{fn}', 'reduction' must be one of 'none', 'mean', 'sum', but "
                         f"got {reduction}.")
    _tensor(inputs, "first input", fn)
    _tensor(targets, "second input", fn)
    for which, x in (("first", inputs), ("second", targets)):
        if not x.dtype.is_floating:
            raise TypeError(f"For '{fn}', the dtype of the {which} input must be float, but "
                            f"got {x.dtype}.")
    dt = inputs.dtype
    pos_mask = cast(greater(targets, 0), dt)
    neg_mask = cast(less(targets, 0), dt)
    pos = mul(pos_mask, inputs)
    neg = relu(sub(mul(neg_mask, float(margin)), mul(neg_mask, inputs)))
    loss = add(pos, neg)
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return sum(loss)
    return loss


def huber_loss(input, target, reduction="mean", delta=1.0):
    """``0.5 z^2`` where ``|z| < delta``, else ``delta * (|z| - 0.5 delta)``, z = input -
    target; ``delta`` > 0."""
    fn = "huber_loss"
    _tensor(input, "input", fn)
    _tensor(target, "target", fn)
    if isinstance(delta, bool) or not isinstance(delta, (int, float)):
        raise TypeError(f"For '{fn}', the 'delta' must be int or float, but got "
                        f"{type(delta).__name__}.")
    if not delta > 0:
        raise ValueError(f"For '{fn}', the 'delta' must be greater than 0, but got {delta}.")
    z = abs(sub(input, target))
    quad = mul(square(z), 0.5)
    lin = mul(sub(z, 0.5 * delta), float(delta))
    return reduce_loss(where(less(z, float(delta)), quad, lin), reduction, fn)


def soft_margin_loss(input, target, reduction="mean"):
    """``log(1 + exp(-target * input))``, computed without overflow."""
    fn = "soft_margin_loss"
    _tensor(input, "input", fn)
    _tensor(target, "target", fn)
    _check_reduction(reduction, fn)
    if input.shape != target.shape:
        raise ValueError(f"For '{fn}', 'input' and 'target' must have the same shape, but got "
                         f"{input.shape} and {target.shape}.")
    z = neg(mul(cast(target, input.dtype), input))
    return reduce_loss(_softplus(z), reduction, fn)


def _softplus(x):
    """``log(1 + exp(x))`` without overflow."""
    return add(relu(x), log1p(exp(neg(abs(x)))))


def multilabel_soft_margin_loss(input, target, weight=None, reduction="mean"):
    """``-(y log sigmoid(x) + (1 - y) log sigmoid(-x))`` (times ``weight``) averaged over the
    class axis (the last), then reduced over the samples."""
    fn = "multilabel_soft_margin_loss"
    _tensor(input, "input", fn)
    _tensor(target, "target", fn)
    y = cast(target, input.dtype)
    pos = _softplus(neg(input))   # -log sigmoid(x)
    negative_part = _softplus(input)   # -log sigmoid(-x)
    loss = add(mul(y, pos), mul(sub(1.0, y), negative_part))
    if weight is not None:
        loss = mul(loss, weight)
    c = input.shape[-1]
    loss = div(sum(loss, input.ndim - 1), float(c))
    return reduce_loss(loss, reduction, fn)


def _class_targets(x, target, fn):
    if x.ndim != 2:
        raise ValueError(f"For '{fn}', the 'input' must be 2-d (N, C), but got shape "
                         f"{x.shape}.")
    if target.dtype.is_floating or target.dtype is mdt.bool_:
        raise TypeError(f"For '{fn}', the 'target' must hold integer class indices, but got "
                        f"{target.dtype}.")
    if target.shape != x.shape[:1]:
        raise ValueError(f"For '{fn}', the 'target' must have shape {x.shape[:1]}, but got "
                         f"{target.shape}.")
    _check_class_labels(target, x.shape[1])


def multi_margin_loss(input, target, p=1, margin=1, weight=None,
                      reduction="mean"):
    """Multi-class hinge loss: ``sum_{j != y} max(0, margin - x[y] + x[j])^p * w[y] / C``
    per sample; ``p`` is 1 or 2, ``margin`` an int (MindSpore's ``ops`` signature)."""
    if isinstance(margin, bool) or not isinstance(margin, int):
        raise TypeError(f"For 'multi_margin_loss', the type of 'margin' must be int, but got "
                        f"{type(margin)}.")
    return multi_margin(input, target, p, float(margin), weight, reduction)


def multi_margin(input, target, p, margin, weight, reduction):
    """:func:`multi_margin_loss` with a float ``margin`` (``nn.MultiMarginLoss``)."""
    fn = "MultiMarginLoss"
    x = _tensor(input, "x", fn)
    _tensor(target, "target", fn)
    if isinstance(p, bool) or p not in (1, 2):
        raise ValueError(f"For '{fn}', the 'p' must be 1 or 2, but got {p}.")
    _check_reduction(reduction, fn)
    _class_targets(x, target, fn)
    n, c = x.shape
    hot = cast(one_hot(target, c, 1.0, 0.0), x.dtype)
    picked = sum(mul(x, hot), 1, keepdim=True)
    hinge = relu(add(sub(x, picked), float(margin)))
    if p == 2:
        hinge = square(hinge)
    hinge = mul(hinge, sub(1.0, hot))            # the target class does not count
    if weight is not None:
        _tensor(weight, "weight", fn)
        hinge = mul(hinge, reshape(gather(cast(weight, x.dtype), target, 0), (n, 1)))
    loss = div(sum(hinge, 1), float(c))
    return reduce_loss(loss, reduction, fn)


def multilabel_margin_loss(input, target, reduction="mean"):
    """Multi-label hinge loss: each row of ``target`` lists class indices up to the first
    -1; ``sum_{j listed} sum_{i not listed} max(0, 1 - (x[j] - x[i])) / C`` per sample."""
    fn = "MultilabelMarginLoss"
    x = _tensor(input, "x", fn)
    _tensor(target, "target", fn)
    _check_reduction(reduction, fn)
    if target.dtype not in (mdt.int32, mdt.int64):
        raise TypeError(f"For '{fn}', the 'target' must be int32 or int64, but got "
                        f"{target.dtype}.")
    if x.ndim not in (1, 2) or target.shape != x.shape:
        raise ValueError(f"For '{fn}', 'x' must be 1-d or 2-d and 'target' must have its shape, "
                         f"but got {x.shape} and {target.shape}.")
    one_sample = x.ndim == 1
    if one_sample:
        x, target = expand_dims(x, 0), expand_dims(target, 0)
    c = x.shape[1]
    # a target counts while no -1 came before it (cumulative product of "not -1")
    stop = cast(equal(target, -1), mdt.float32)
    seen_stop = greater(_cumsum(stop), 0.0)
    listed = logical_and(logical_not(seen_stop), greater_equal(target, 0))
    safe = where(listed, target, 0)
    hot = mul(cast(one_hot(safe, c, 1.0, 0.0), x.dtype),
              expand_dims(cast(listed, x.dtype), 2))       # (N, slots, C)
    is_target = minimum(sum(hot, 1), 1.0)                   # (N, C)
    x_listed = sum(mul(hot, expand_dims(x, 1)), 2)        # (N, slots): x[j]
    margins = relu(sub(1.0, sub(expand_dims(x_listed, 2), expand_dims(x, 1))))
    pair = mul(expand_dims(cast(listed, x.dtype), 2),
               expand_dims(sub(1.0, is_target), 1))       # j listed, i not a target
    loss = div(sum(sum(mul(margins, pair), 2), 1), float(c))
    if one_sample and reduction == "none":
        loss = squeeze(loss, 0)
    return reduce_loss(loss, reduction, fn)


def _cumsum(x):
    """Running sum along axis 1 of a small 2-d float tensor (a matmul with a triangle)."""
    n = x.shape[1]
    tri = cast(less_equal(expand_dims(arange(n), 1), expand_dims(arange(n), 0)),
               x.dtype)
    return matmul(x, tri)


def gaussian_nll_loss(x, target, var, full=False, eps=1e-06, reduction="mean"):
    """``0.5 * (log(max(var, eps)) + (x - target)^2 / max(var, eps))`` (+ ``0.5 log(2 pi)``
    with ``full``); ``var`` may lack the last axis of ``x``."""
    fn = "gaussian_nll_loss"
    for name, v in (("x", x), ("target", target), ("var", var)):
        if not isinstance(v, Tensor):
            raise TypeError(f"For '{fn}', '{name}' must be a tensor, but got {type(v)}.")
    if not isinstance(full, bool):
        raise TypeError(f"For '{fn}', 'full' must be a bool, but got {type(full)}.")
    if not isinstance(eps, float) or eps <= 0:
        raise ValueError(f"For '{fn}', 'eps' must be a positive float, but got {eps}.")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"For '{fn}', 'reduction' must be one of 'none', 'mean', or 'sum', but "
                         f"got {reduction}.")
    if x.shape != var.shape and x.shape[:-1] == var.shape:
        var = expand_dims(var, -1)
    clamped = maximum(var, eps)
    loss = mul(add(log(clamped), div(square(sub(x, target)), clamped)), 0.5)
    if full:
        loss = add(loss, 0.5 * math.log(2 * math.pi))
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return sum(loss)
    return loss


def pairwise_distance(x1, x2, p=2.0, eps=1e-06):
    """``|x1 - x2 + eps|_p`` along the last axis (torch's and MindSpore's triplet
    distance)."""
    d = add(sub(x1, x2), eps)
    if p == 2:
        return sqrt(sum(square(d), -1))
    if p == 1:
        return sum(abs(d), -1)
    return pow(sum(pow(abs(d), float(p)), -1), 1.0 / p)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False,
                        reduction="mean"):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with ``d`` the p-norm distance of
    :func:`pairwise_distance`; ``swap`` uses ``min(d(a, n), d(p, n))``."""
    fn = "TripletMarginLoss"
    for name, v in (("x", anchor), ("positive", positive), ("negative", negative)):
        _tensor(v, name, fn)
    if isinstance(p, bool) or not isinstance(p, int):
        raise TypeError(f"For '{fn}', the 'p' must be an int, but got {type(p).__name__}.")
    if not isinstance(eps, float):
        raise TypeError(f"For '{fn}', the 'eps' must be a float, but got "
                        f"{type(eps).__name__}.")
    if not isinstance(swap, bool):
        raise TypeError(f"For '{fn}', the 'swap' must be a bool, but got "
                        f"{type(swap).__name__}.")
    _check_reduction(reduction, fn)
    if isinstance(margin, Tensor):
        margin = cast(margin, anchor.dtype)
    elif isinstance(margin, bool) or not isinstance(margin, numbers.Real):
        raise TypeError(f"For '{fn}', the 'margin' must be a float or a Tensor, but got "
                        f"{type(margin).__name__}.")
    if not anchor.shape == positive.shape == negative.shape:
        raise ValueError(f"For '{fn}', 'x', 'positive' and 'negative' must have the same "
                         f"shape, but got {anchor.shape}, {positive.shape} and "
                         f"{negative.shape}.")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    loss = relu(add(sub(d_pos, d_neg), margin))
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return sum(loss)
    return loss
