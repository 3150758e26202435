"""MindSpore's neural-network functions beyond :mod:`mscore.ops.functional`: activations
(``ops.elu``, ``ops.selu``, ``ops.mish``, ``ops.hardswish``, ...), losses
(``ops.binary_cross_entropy``, ``ops.smooth_l1_loss``, ``ops.kl_div``) and
``ops.cosine_similarity``, composed from the functional ops."""
from __future__ import annotations

import numbers

from mscore.common import dtype as mdt
from mscore.ops import functional as F

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _reduction(reduction, allowed=("none", "mean", "sum")):
    if reduction not in allowed:
        raise ValueError(f"reduction: expected one of {list(allowed)}, got {reduction!r}")
    return reduction


def _number(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a float, got {type(value).__name__}")
    return float(value)


# -- activations ---------------------------------------------------------------------------------
def _elu_core(x, alpha):
    """alpha * (exp(x) - 1) below 0, x above, with exp evaluated on min(x, 0) only so the
    unused branch never overflows."""
    neg = F.mul(F.sub(F.exp(F.minimum(x, 0.0)), 1.0), alpha)
    return F.where(F.greater(x, 0.0), x, neg)


def elu(input_x, alpha=1.0):
    """Exponential linear unit; MindSpore supports ``alpha`` 1.0 only."""
    x = F._float_input(input_x, "input_x")
    if _number(alpha, "alpha") != 1.0:
        raise ValueError(f"alpha: only 1.0 is supported, got {alpha!r}")
    return _elu_core(x, 1.0)


def celu(x, alpha=1.0):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``; ``alpha`` must not be 0."""
    x = F._float_input(x, "x")
    alpha = _number(alpha, "alpha")
    if alpha == 0:
        raise ValueError("alpha: must not be 0")
    neg = F.mul(F.sub(F.exp(F.div(F.minimum(x, 0.0), alpha)), 1.0), alpha)
    return F.where(F.greater(x, 0.0), x, neg)


def selu(input_x):
    """Scaled ELU with the self-normalising constants."""
    x = F._float_input(input_x, "input_x")
    return F.mul(_elu_core(x, _SELU_ALPHA), _SELU_SCALE)


def softsign(x):
    """``x / (1 + |x|)``."""
    x = F._float_input(x, "x")
    return F.div(x, F.add(F.abs(x), 1.0))


def logsigmoid(x):
    """``log(sigmoid(x))`` computed stably: ``-softplus(-x)``."""
    x = F._float_input(x, "x")
    return F.neg(_softplus(F.neg(x)))


def _softplus(x):
    """``log(1 + exp(x))`` without overflow: ``max(x, 0) + log1p(exp(-|x|))``."""
    return F.add(F.maximum(x, 0.0), F.log1p(F.exp(F.neg(F.abs(x)))))


def mish(x):
    """``x * tanh(softplus(x))``."""
    x = F._float_input(x, "x")
    return F.mul(x, F.tanh(_softplus(x)))


def hardsigmoid(input):  # noqa: A002
    """``relu6(x + 3) / 6``."""
    x = F._float_input(input)
    return F.div(F.relu6(F.add(x, 3.0)), 6.0)


def hardswish(input):  # noqa: A002
    """``x * relu6(x + 3) / 6``."""
    x = F._float_input(input)
    return F.mul(x, hardsigmoid(x))


def hardtanh(input, min_val=-1.0, max_val=1.0):  # noqa: A002
    """``input`` limited to [min_val, max_val]."""
    x = F._float_input(input)
    lo, hi = _number(min_val, "min_val"), _number(max_val, "max_val")
    if lo > hi:
        raise ValueError(f"hardtanh: min_val {lo} is larger than max_val {hi}")
    return F.clip_by_value(x, lo, hi)


def glu(x, axis=-1):
    """Gated linear unit: the first half of ``x`` along ``axis`` times the sigmoid of the
    second half (the size along ``axis`` must be even)."""
    x = F._float_input(x, "x")
    ax = F._axis1(axis, x.ndim)
    n = x.shape[ax]
    if n % 2:
        raise ValueError(f"x: the size {n} of axis {ax} must be even")
    a, b = F.split(x, n // 2, ax)
    return F.mul(a, F.sigmoid(b))


def fast_gelu(x):
    """MindSpore's FastGeLU: ``x / (1 + exp(-1.702 |x|)) * exp(0.851 (x - |x|))``."""
    x = F._float_input(x, "x")
    ax = F.abs(x)
    return F.mul(F.div(x, F.add(F.exp(F.mul(ax, -1.702)), 1.0)),
                 F.exp(F.mul(F.sub(x, ax), 0.851)))


_BCE_EPS = 1e-12

# -- losses --------------------------------------------------------------------------------------
def _reduce(loss, reduction):
    if reduction == "mean":
        return F.mean(loss)
    if reduction == "sum":
        return F.sum(loss)
    return loss


def binary_cross_entropy(logits, labels, weight=None, reduction="mean"):
    """``-(y log(p + 1e-12) + (1 - y) log(1 - p + 1e-12))`` of probabilities ``logits``
    (MindSpore's kernel: a probability of exactly 0 or 1 costs -log(1e-12) = 27.63, not
    infinity), optionally weighted."""
    p = F._float_input(logits, "logits")
    y = F.cast(F._check_tensor(labels, "labels"), p.dtype)
    _reduction(reduction)
    if y.shape != p.shape:
        raise ValueError(f"labels: expected shape {p.shape}, got {y.shape}")
    log_p = F.log(F.add(p, _BCE_EPS))
    log_q = F.log(F.add(F.sub(1.0, p), _BCE_EPS))
    loss = F.neg(F.add(F.mul(y, log_p), F.mul(F.sub(1.0, y), log_q)))
    if weight is not None:
        loss = F.mul(loss, weight)
    return _reduce(loss, reduction)


def smooth_l1_loss(input, target, beta=1.0, reduction="none"):  # noqa: A002
    """``0.5 d^2 / beta`` where ``|d| < beta``, ``|d| - 0.5 beta`` elsewhere (d = input -
    target)."""
    x = F._float_input(input)
    beta = _number(beta, "beta")
    _reduction(reduction)
    d = F.abs(F.sub(x, target))
    quad = F.div(F.mul(F.mul(d, d), 0.5), beta) if beta > 0 else F.zeros_like(d)
    loss = F.where(F.less(d, beta), quad, F.sub(d, 0.5 * beta))
    return _reduce(loss, reduction)


def kl_div(logits, labels, reduction="mean"):
    """Kullback-Leibler divergence ``labels * (log(labels) - logits)`` of log-probabilities
    ``logits``; 'mean' averages every element, 'batchmean' divides the sum by the batch
    size. Terms where ``labels`` is 0 count as 0."""
    x = F._float_input(logits, "logits")
    y = F.cast(F._check_tensor(labels, "labels"), x.dtype)
    _reduction(reduction, ("none", "mean", "sum", "batchmean"))
    positive = F.greater(y, 0.0)
    safe = F.where(positive, y, 1.0)
    loss = F.where(positive, F.mul(y, F.sub(F.log(safe), x)), 0.0)
    if reduction == "batchmean":
        return F.div(F.sum(loss), float(x.shape[0] if x.ndim else 1))
    return _reduce(loss, reduction)


def cosine_similarity(x1, x2, dim=1, eps=1e-08):
    """``x1 . x2 / max(|x1| |x2|, eps)`` along ``dim`` (shapes must broadcast)."""
    a = F._float_input(x1, "x1")
    b = F._float_input(x2, "x2")
    ndim = len(_broadcast_shape(a.shape, b.shape))
    ax = F._axis1(dim, ndim, "dim")
    dot = F.sum(F.mul(a, b), ax)
    norms = F.mul(F.sqrt(F.sum(F.mul(a, a), ax)), F.sqrt(F.sum(F.mul(b, b), ax)))
    return F.div(dot, F.maximum(norms, float(eps)))


def _broadcast_shape(sa, sb):
    n = max(len(sa), len(sb))
    sa, sb = (1,) * (n - len(sa)) + tuple(sa), (1,) * (n - len(sb)) + tuple(sb)
    out = []
    for p, q in zip(sa, sb):
        if p != q and 1 not in (p, q):
            raise ValueError(f"x1, x2: shapes {sa} and {sb} do not broadcast")
        out.append(max(p, q))
    return out


# -- random ----------------------------------------------------------------------------------------
def normal(shape, mean, stddev, seed=None):
    """Normal values of ``shape`` with ``mean`` and ``stddev`` (numbers or Tensors that
    broadcast to ``shape``), from the global stream (or ``seed``)."""
    z = F.standard_normal(shape, seed, mdt.float32)
    return F.add(F.mul(z, stddev), mean)


__all__ = ["elu", "celu", "selu", "softsign", "logsigmoid", "mish", "hardsigmoid",
           "hardswish", "hardtanh", "glu", "binary_cross_entropy", "smooth_l1_loss",
           "kl_div", "cosine_similarity", "normal"]
