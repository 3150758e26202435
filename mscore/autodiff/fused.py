"""Fused ops of the reference autodiff: one node and one hand-written VJP per composite.

Without these, the reference autodiff differentiates a composite (softmax cross-entropy,
layer norm, ...) primitive by primitive: every intermediate is recorded and every rule runs,
about three times the kernels of a hand-written step. While :func:`mscore.autodiff.
reference_value_and_grad` traces, :func:`mscore.dispatch.fused` hands out the ops below
instead: each computes its forward from primitives on plain values, records ONE node, and
its rule computes the input gradients in closed form, only for the inputs that are traced.

Each op takes the arguments of the backend's fused op of the same name (see
:class:`mscore.plugin.backend.Backend`); ``softmax_cross_entropy`` and ``conv_bias`` are
the general forms the core's composites also use (weights, N-d and probability targets;
convolution plus bias). :func:`composite_gradients` turns them off, so tests can compare them
with the composite's own gradient.

The normalisations' forwards are :mod:`mscore.fused_reference`'s (one forward, one
half-precision rule, shared with the functional ops and the conformance kit).
"""
from __future__ import annotations

import contextlib
import contextvars
import math

from mscore import fused_reference
from mscore.common.dtype import int64
from mscore.dispatch import backend, call
from mscore.dispatch import dtype as dtype_of
from mscore.dispatch import shape as shape_of
from mscore.fused_reference import cached_constant, const, max_shifted
from mscore.fused_reference import cast_to as _to

from . import kernels
from .rules import conv_input_grad, conv_weight_grad, unbroadcast
from .tracer import record_fused, unwrap

_enabled = contextvars.ContextVar("mscore_fused_gradients", default=True)


@contextlib.contextmanager
def composite_gradients():
    """Within the block the reference autodiff differentiates the composites primitive by
    primitive (the fused rules are off), in this thread/context only."""
    token = _enabled.set(False)
    try:
        yield
    finally:
        _enabled.reset(token)


def reference_op(name):
    """The fused op ``name`` of the reference autodiff, or None (unknown name, or the fused
    rules are turned off by :func:`composite_gradients`)."""
    if not _enabled.get():
        return None
    return OPS.get(name)


# -- helpers ------------------------------------------------------------------------------------
def _index_range(n):
    """``arange(n)`` as int64 (cached like :func:`const`)."""
    return cached_constant(("arange", n), lambda: call("arange", 0, n, 1, int64))


def _swap_last(x):
    n = len(shape_of(x))
    return call("transpose", x, tuple(range(n - 2)) + (n - 1, n - 2))


def _grad_as(g, like):
    """``g`` in the dtype of the input ``like`` (whose value was cast for the forward)."""
    return _to(g, dtype_of(like))


# -- relu ---------------------------------------------------------------------------------------
def relu(x):
    """max(x, 0); the gradient at 0 is 0. With the backend's fused ``relu`` and its
    ``relu_backward`` kernel, one kernel each way (the gradient read from the output)."""
    xv = unwrap(x)
    fast = getattr(backend(), "relu", None)
    if fast is not None and kernels.has_kernels("relu_backward"):
        return record_fused("relu", [x], fast(xv), _relu_kernel_vjp, {})
    zero = const(0, dtype_of(xv))
    mask = call("greater", xv, zero)
    out = call("where", mask, xv, zero)
    return record_fused("relu", [x], out, _relu_vjp, {"mask": mask})


def _relu_vjp(g, out, x, needs, mask):
    return [call("where", mask, g, const(0, dtype_of(g)))]


def _relu_kernel_vjp(g, out, x, needs):
    return [kernels.relu_backward(g, out)]


# -- gelu ---------------------------------------------------------------------------------------
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_CUBIC = 0.044715


def gelu(x, approximate):
    """x * Phi(x) ("none", with erf) or its tanh approximation ("tanh")."""
    xv = unwrap(x)
    dt = dtype_of(xv)
    half = const(0.5, dt)
    if approximate == "tanh":
        x2 = call("mul", xv, xv)
        inner = call("mul", call("add", const(1.0, dt), call("mul", x2, const(_GELU_CUBIC, dt))),
                     const(_SQRT_2_OVER_PI, dt))
        t = call("tanh", call("mul", xv, inner))
        hx = call("mul", xv, half)
        out = call("add", hx, call("mul", hx, t))
        saved = {"approximate": approximate, "t": t, "x2": x2}
    else:
        cdf = call("mul", call("add", call("erf", call("mul", xv, const(math.sqrt(0.5), dt))),
                               const(1.0, dt)), half)
        out = call("mul", xv, cdf)
        saved = {"approximate": approximate, "t": cdf, "x2": None}
    return record_fused("gelu", [x], out, _gelu_vjp, saved)


def _gelu_vjp(g, out, x, needs, approximate, t, x2):
    dt = dtype_of(x)
    one = const(1.0, dt)
    if approximate == "tanh":
        # 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 c x^2)
        du = call("mul", call("add", one, call("mul", x2, const(3.0 * _GELU_CUBIC, dt))),
                  const(0.5 * _SQRT_2_OVER_PI, dt))
        dt_term = call("mul", call("mul", x, call("sub", one, call("mul", t, t))), du)
        deriv = call("add", call("mul", call("add", one, t), const(0.5, dt)), dt_term)
    else:
        # Phi(x) + x phi(x)
        pdf = call("mul", call("exp", call("mul", call("mul", x, x), const(-0.5, dt))),
                   const(1.0 / math.sqrt(2.0 * math.pi), dt))
        deriv = call("add", t, call("mul", x, pdf))
    return [call("mul", g, deriv)]


# -- dense ----------------------------------------------------------------------------------------
def dense(x, w, b):
    """``x @ w.T + b`` with x (..., in), w (out, in), b (out,) or None."""
    out, x2 = fused_reference.dense(unwrap(x), unwrap(w), unwrap(b))
    return record_fused("dense", [x, w, b], out, _dense_vjp, {"x2": x2})


def _dense_vjp(g, out, x, w, b, needs, x2):
    xs = shape_of(x)
    g2 = g if len(xs) == 2 else call("reshape", g, (shape_of(x2)[0], shape_of(w)[0]))
    gx = gw = gb = None
    if needs[0]:
        gx = call("matmul", g2, w)
        if len(xs) != 2:
            gx = call("reshape", gx, xs)
    if needs[1]:
        gw = call("matmul", call("transpose", g2, (1, 0)), x2)
    if needs[2]:
        gb = call("sum", g2, axis=(0,), keepdims=False)
    return [gx, gw, gb]


# -- softmax and log-softmax -----------------------------------------------------------------------
def softmax(x, axis):
    """exp(x) / sum(exp(x)) along ``axis``."""
    out = fused_reference.softmax(unwrap(x), axis)
    return record_fused("softmax", [x], out, _softmax_vjp, {"axis": axis})


def _softmax_vjp(g, out, x, needs, axis):
    inner = call("sum", call("mul", g, out), axis=(axis,), keepdims=True)
    return [call("mul", out, call("sub", g, inner))]


def log_softmax(x, axis):
    """x - log(sum(exp(x))) along ``axis``, computed stably."""
    out = fused_reference.log_softmax(unwrap(x), axis)
    return record_fused("log_softmax", [x], out, _log_softmax_vjp, {"axis": axis})


def _log_softmax_vjp(g, out, x, needs, axis):
    total = call("sum", g, axis=(axis,), keepdims=True)
    return [call("sub", g, call("mul", call("exp", out), total))]


# -- cross entropy ---------------------------------------------------------------------------------
def cross_entropy(logits, target, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """The backend contract's form: logits (N, C), class indices (N,), no weight."""
    return softmax_cross_entropy(logits, target, None, ignore_index, reduction,
                                 label_smoothing)


def _rows_last(a, ndim):
    """(N, C, d...) -> (N * d..., C): the class axis last, one row per position."""
    s = shape_of(a)
    if ndim > 2:
        a = call("transpose", a, (0,) + tuple(range(2, ndim)) + (1,))
    return call("reshape", a, (math.prod(s) // s[1], s[1])) if ndim != 2 else a


def _rows_back(g2, shape):
    """Inverse of :func:`_rows_last` for a gradient of ``shape``."""
    nd = len(shape)
    if nd == 2:
        return g2
    moved = (shape[0],) + tuple(shape[2:]) + (shape[1],)
    g = call("reshape", g2, moved)
    return call("transpose", g, (0, nd - 1) + tuple(range(1, nd - 1)))


def softmax_cross_entropy(logits, target, weight, ignore_index, reduction, label_smoothing):
    """Cross entropy of logits (N, C, d...) against class indices (N, d...) or class
    probabilities (the logits' shape), with an optional class ``weight`` (C,), as
    :func:`mscore.ops.cross_entropy` computes it."""
    xv, tv, wv = unwrap(logits), unwrap(target), unwrap(weight)
    xshape = shape_of(xv)
    dt = dtype_of(xv)
    x2 = _rows_last(xv, len(xshape))
    sh = max_shifted(x2, 1)
    e = call("exp", sh)
    s = call("sum", e, axis=(1,), keepdims=True)
    if wv is None and not label_smoothing and not dtype_of(tv).is_floating and \
            kernels.has_kernels("sparse_nll_rows", "sparse_xent_grad"):
        return _sparse_kernel_forward(logits, target, sh, e, s, tv, int(ignore_index),
                                      reduction, xshape)
    lse = call("log", s)
    w = _to(wv, dt)
    saved = {"e": e, "s": s, "sh": sh, "lse": lse, "w": w, "reduction": reduction,
             "ls": float(label_smoothing)}
    if dtype_of(tv).is_floating:
        loss, extra = _soft_forward(sh, lse, _to(_rows_last(tv, len(xshape)), dt), w,
                                    float(label_smoothing))
        saved.update(extra)
        rule = _soft_vjp
    else:
        loss, extra = _sparse_forward(sh, lse, call("reshape", tv, (shape_of(x2)[0],)), w,
                                      int(ignore_index), float(label_smoothing))
        saved.update(extra)
        rule = _sparse_vjp
    out = _reduce(loss, reduction, saved, xshape)
    return record_fused("softmax_cross_entropy", [logits, target, weight], out, rule, saved)


def _sparse_kernel_forward(logits, target, sh, e, s, tv, ignore_index, reduction, xshape):
    """Class indices, no weight, no smoothing, on a backend with the cross-entropy kernels:
    the per-row loss and the logits' gradient one kernel each."""
    m = shape_of(sh)[0]
    t = call("reshape", tv, (m,))
    loss, valid = kernels.sparse_nll_rows(sh, s, t, ignore_index)
    saved = {"e": e, "s": s, "t": t, "valid": valid, "reduction": reduction}
    if reduction == "mean":
        saved["denom"] = call("sum", valid, axis=None, keepdims=False)
    out = _reduce(loss, reduction, saved, xshape)
    saved.pop("mean", None)
    return record_fused("softmax_cross_entropy", [logits, target, None], out,
                        _sparse_kernel_vjp, saved)


def _sparse_kernel_vjp(g, out, logits, target, weight, needs, e, s, t, valid, reduction,
                       denom=None):
    if not needs[0]:
        return [None, None, None]
    m = shape_of(e)[0]
    scale = _row_coef(g, reduction, {"denom": denom}, m)
    if reduction == "none":
        scale = call("reshape", scale, (m, 1))
    g2 = kernels.sparse_xent_grad(e, s, t, call("reshape", valid, (m, 1)), scale)
    return [_grad_as(_rows_back(g2, shape_of(logits)), logits), None, None]


def _reduce(loss, reduction, saved, xshape):
    """The reduced loss; keeps what the rule needs to know about the reduction."""
    if reduction == "none":
        return call("reshape", loss, (xshape[0],) + tuple(xshape[2:]))
    total = call("sum", loss, axis=None, keepdims=False)
    if reduction == "sum":
        return total
    denom = saved.get("denom")
    if denom is None:  # probability targets: the mean over rows
        denom = saved["denom"] = const(float(shape_of(loss)[0]), dtype_of(loss))
    out = call("div", total, denom)
    saved["mean"] = out
    return out


def _sparse_forward(sh, lse, t, w, ignore_index, ls):
    """Per-row loss of class indices ``t`` (M,): (1-ls) w_t nll + ls valid (lse W - w.sh)/C."""
    m, c = shape_of(sh)
    dt = dtype_of(sh)
    tdt = dtype_of(t)
    valid = call("not_equal", t, const(ignore_index, tdt))
    safe = call("where", valid, t, const(0, tdt))
    rows = _index_range(m)
    validf = call("cast", valid, dt)
    lse1 = call("reshape", lse, (m,))
    nll = call("sub", lse1, call("getitem", sh, (rows, safe)))
    sample_w = validf if w is None else call("mul", call("getitem", w, (safe,)), validf)
    loss = call("mul", nll, sample_w)
    if ls:
        if w is None:
            smooth = call("sub", lse1, call("div", call("sum", sh, axis=(1,), keepdims=False),
                                            const(float(c), dt)))
        else:
            wsum = call("sum", w, axis=None, keepdims=False)
            wsh = call("matmul", sh, call("reshape", w, (c, 1)))
            smooth = call("div", call("sub", call("mul", lse1, wsum), call("reshape", wsh, (m,))),
                          const(float(c), dt))
        loss = call("add", call("mul", loss, const(1.0 - ls, dt)),
                    call("mul", call("mul", smooth, validf), const(ls, dt)))
    denom = call("sum", sample_w, axis=None, keepdims=False)
    return loss, {"rows": rows, "safe": safe, "validf": validf, "sample_w": sample_w,
                  "nll": nll, "denom": denom}


def _row_coef(g, reduction, saved, m):
    """dL/dloss_i as a (M,) or 0-d array."""
    if reduction == "none":
        return call("reshape", g, (m,))
    if reduction == "sum":
        return g
    # Every target ignored: the mean is 0/0 = NaN, its gradient 0 (MindSpore's), not the
    # 0 * (g / 0) = NaN of the formula; a zero denominator counts as 1 (every row's weight
    # is 0 then).
    denom = saved["denom"]
    dt = dtype_of(denom)
    denom = call("where", call("equal", denom, const(0.0, dt)), const(1.0, dt), denom)
    return call("div", g, denom)


def _sparse_vjp(g, out, logits, target, weight, needs, e, s, sh, lse, w, reduction, ls,
                rows, safe, validf, sample_w, nll, denom, mean=None):
    m, c = shape_of(sh)
    dt = dtype_of(sh)
    r = _row_coef(g, reduction, saved={"denom": denom}, m=m)
    gx = gw = None
    if needs[0]:
        a = call("mul", sample_w, r)                         # (M,): r_i w_t valid_i
        coef = a if not ls else call("mul", a, const(1.0 - ls, dt))
        p_coef = coef
        smooth = None
        if ls:
            smooth = call("mul", call("mul", validf, r), const(ls / c, dt))  # (M,)
            wsum = const(float(c), dt) if w is None else call("sum", w, axis=None,
                                                              keepdims=False)
            p_coef = call("add", coef, call("mul", smooth, wsum))
        p = call("div", e, s)
        g2 = call("mul", p, call("reshape", p_coef, (m, 1)))
        if ls:
            term = call("reshape", smooth, (m, 1))
            if w is not None:
                term = call("mul", term, call("reshape", w, (1, c)))
            g2 = call("sub", g2, term)
        g2 = call("scatter_add", g2, (rows, safe), call("neg", coef))
        gx = _grad_as(_rows_back(g2, shape_of(logits)), logits)
    if weight is not None and needs[2]:
        gw = _sparse_weight_grad(r, reduction, ls, rows, safe, validf, nll, sh, lse, mean, m,
                                 c, dt)
        gw = _grad_as(gw, weight)
    return [gx, None, gw]


def _sparse_weight_grad(r, reduction, ls, rows, safe, validf, nll, sh, lse, mean, m, c, dt):
    """d loss / d weight: the picked classes' nll, the smoothing term, and for 'mean' the
    denominator's share (-L per counted target)."""
    per_row = call("mul", call("mul", validf, r), nll)
    if ls:
        per_row = call("mul", per_row, const(1.0 - ls, dt))
    if reduction == "mean":
        # Ignored rows have no share: with every target ignored the mean is NaN, its
        # gradient 0 (MindSpore's), not 0 * NaN.
        share = call("mul", call("mul", validf, r), mean)
        counted = call("not_equal", validf, const(0.0, dt))
        per_row = call("sub", per_row, call("where", counted, share, const(0.0, dt)))
    gw = call("scatter_add", call("full", (c,), 0.0, dt), (safe,), per_row)
    if ls:
        a = call("reshape", call("mul", call("mul", validf, r), const(ls / c, dt)), (m, 1))
        gw = call("add", gw, call("sum", call("mul", a, call("sub", lse, sh)), axis=(0,),
                                  keepdims=False))
    return gw


def _soft_forward(sh, lse, t, w, ls):
    """Per-row loss of probabilities ``t`` (M, C): lse Q - sum(q sh), q = t' w."""
    m, c = shape_of(sh)
    dt = dtype_of(sh)
    if ls:
        t = call("add", call("mul", t, const(1.0 - ls, dt)), const(ls / c, dt))
    q = t if w is None else call("mul", t, call("reshape", w, (1, c)))
    qsum = call("sum", q, axis=(1,), keepdims=True)
    loss = call("sub", call("mul", lse, qsum), call("sum", call("mul", q, sh), axis=(1,),
                                                   keepdims=True))
    return call("reshape", loss, (m,)), {"tq": t, "q": q, "qsum": qsum}


def _soft_vjp(g, out, logits, target, weight, needs, e, s, sh, lse, w, reduction, ls, tq, q,
              qsum, denom=None, mean=None):
    m, c = shape_of(sh)
    dt = dtype_of(sh)
    r = call("reshape", _row_coef(g, reduction, {"denom": denom}, m), (m, 1) if
             reduction == "none" else ())
    gx = gt = gw = None
    if needs[0]:
        p = call("div", e, s)
        g2 = call("mul", call("sub", call("mul", p, qsum), q), r)
        gx = _grad_as(_rows_back(g2, shape_of(logits)), logits)
    if needs[1] or (weight is not None and needs[2]):
        neg_logp = call("mul", call("sub", lse, sh), r)        # -logp * r
        if needs[1]:
            gt2 = neg_logp if w is None else call("mul", neg_logp, call("reshape", w, (1, c)))
            if ls:
                gt2 = call("mul", gt2, const(1.0 - ls, dt))
            gt = _grad_as(_rows_back(gt2, shape_of(target)), target)
        if weight is not None and needs[2]:
            gw = _grad_as(call("sum", call("mul", neg_logp, tq), axis=(0,), keepdims=False),
                          weight)
    return [gx, gt, gw]


# -- layer norm ------------------------------------------------------------------------------------
def layer_norm(x, normalized_shape, weight, bias, eps):
    """Normalise over the trailing ``normalized_shape`` axes, then scale and shift (the
    forward of :func:`mscore.fused_reference.layer_norm`, recorded as one node)."""
    out, saved = fused_reference.layer_norm(unwrap(x), normalized_shape, unwrap(weight),
                                            unwrap(bias), eps)
    return record_fused("layer_norm", [x, weight, bias], out, _layer_norm_vjp, saved)


def _layer_norm_vjp(g, out, x, weight, bias, needs, xhat, rstd, axes, inv_n):
    cdt = dtype_of(xhat)
    g = _to(g, cdt)
    gx = gw = gb = None
    if needs[0]:
        gxhat = g if weight is None else call("mul", g, _to(weight, cdt))
        mean_g = call("mul", call("sum", gxhat, axis=axes, keepdims=True), inv_n)
        mean_gx = call("mul", call("sum", call("mul", gxhat, xhat), axis=axes, keepdims=True),
                       inv_n)
        gx = call("mul", call("sub", call("sub", gxhat, mean_g), call("mul", xhat, mean_gx)),
                  rstd)
        gx = _grad_as(gx, x)
    if weight is not None and needs[1]:
        gw = _grad_as(unbroadcast(call("mul", g, xhat), shape_of(weight)), weight)
    if bias is not None and needs[2]:
        gb = _grad_as(unbroadcast(g, shape_of(bias)), bias)
    return [gx, gw, gb]


# -- batch norm ------------------------------------------------------------------------------------
def batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps):
    """Batch normalisation over axis 1: ``(out, new_running_mean, new_running_var)``, the
    backend contract's form (the forward of :func:`mscore.fused_reference.batch_norm`,
    recorded as one node)."""
    out, new_mean, new_var, saved = fused_reference.batch_norm(
        unwrap(x), unwrap(running_mean), unwrap(running_var), unwrap(weight), unwrap(bias),
        training, momentum, eps)
    if saved.pop("mode") == "train":
        out = record_fused("batch_norm", [x, None, None, weight, bias], out,
                           _batch_norm_train_vjp, saved)
    else:
        out = record_fused("batch_norm", [x, running_mean, running_var, weight, bias], out,
                           _batch_norm_eval_vjp, saved)
    return out, new_mean, new_var


def _batch_norm_train_vjp(g, out, x, rm, rv, weight, bias, needs, d, rstd, scale, axes, inv_n):
    cdt = dtype_of(d)
    g = _to(g, cdt)
    sum_g = call("sum", g, axis=axes, keepdims=True)
    gx = gw = gb = None
    need_gd = needs[0] or (weight is not None and needs[3])
    sum_gd = call("sum", call("mul", g, d), axis=axes, keepdims=True) if need_gd else None
    if needs[0]:
        # gx = scale * (g - mean(g) - d * rstd^2 * mean(g d))
        k = call("mul", call("mul", call("mul", rstd, rstd), sum_gd), inv_n)
        centred = call("add", call("mul", d, k), call("mul", sum_g, inv_n))
        gx = _grad_as(call("mul", call("sub", g, centred), scale), x)
    if weight is not None and needs[3]:
        gw = _grad_as(call("reshape", call("mul", sum_gd, rstd), shape_of(weight)), weight)
    if bias is not None and needs[4]:
        gb = _grad_as(call("reshape", sum_g, shape_of(bias)), bias)
    return [gx, None, None, gw, gb]


def _batch_norm_eval_vjp(g, out, x, rm, rv, weight, bias, needs, xc, rstd, scale, bshape, w):
    # The running statistics get no gradient, as in MindSpore (BatchNorm's bprop gives zeros).
    cdt = dtype_of(xc)
    g = _to(g, cdt)
    axes = (0,) + tuple(range(2, len(shape_of(xc))))
    grads = [None] * 5
    if needs[0]:
        grads[0] = _grad_as(call("mul", g, scale), x)
    need_w = weight is not None and needs[3]
    sum_g = call("sum", g, axis=axes, keepdims=True) if need_w or needs[4] else None
    if need_w:
        # sum(g * (x - rm)) * rstd per channel
        sum_gc = call("sub", call("sum", call("mul", g, xc), axis=axes, keepdims=True),
                      call("mul", call("reshape", _to(rm, cdt), bshape), sum_g))
        grads[3] = _grad_as(call("reshape", call("mul", sum_gc, rstd), shape_of(weight)),
                            weight)
    if bias is not None and needs[4]:
        grads[4] = _grad_as(call("reshape", sum_g, shape_of(bias)), bias)
    return grads


# -- convolution with bias ----------------------------------------------------------------------
def conv_bias(x, w, b, stride, padding, dilation, groups):
    """``conv(x, w) + b`` with the bias broadcast over the channel axis."""
    out = fused_reference.conv_bias(unwrap(x), unwrap(w), unwrap(b), stride, padding, dilation,
                                    groups)
    return record_fused("conv_bias", [x, w, b], out, _conv_bias_vjp,
                        {"stride": stride, "padding": padding, "dilation": dilation,
                         "groups": groups})


def _conv_bias_vjp(g, out, x, w, b, needs, stride, padding, dilation, groups):
    gx = gw = gb = None
    if needs[0]:
        gx = conv_input_grad(g, x, w, stride, padding, dilation, groups)
    if needs[1]:
        gw = conv_weight_grad(x, g, shape_of(w)[2:], stride, padding, dilation, groups)
    if needs[2]:
        gb = call("sum", g, axis=(0,) + tuple(range(2, len(shape_of(g)))), keepdims=False)
    return [gx, gw, gb]


# -- attention ---------------------------------------------------------------------------------
def attention(q, k, v, mask, is_causal, scale):
    """softmax(q k^T * scale + mask) v over the last two axes; a bool mask keeps the True
    positions, a float mask is added; causal masking is top-left aligned."""
    out, p, scale = fused_reference.attention(unwrap(q), unwrap(k), unwrap(v), unwrap(mask),
                                              is_causal, scale)
    return record_fused("attention", [q, k, v, mask], out, _attention_vjp,
                        {"p": p, "scale": scale})


def _attention_vjp(g, out, q, k, v, mask, needs, p, scale):
    grads = [None] * 4
    if needs[2]:
        grads[2] = unbroadcast(call("matmul", _swap_last(p), g), shape_of(v))
    if not (needs[0] or needs[1] or needs[3]):
        return grads
    gp = call("matmul", g, _swap_last(v))
    last = len(shape_of(p)) - 1
    gs = call("mul", p, call("sub", gp, call("sum", call("mul", gp, p), axis=(last,),
                                             keepdims=True)))
    if mask is not None and needs[3] and dtype_of(mask).is_floating:
        grads[3] = _grad_as(unbroadcast(gs, shape_of(mask)), mask)
    gs = call("mul", gs, const(scale, dtype_of(gs)))
    if needs[0]:
        grads[0] = unbroadcast(call("matmul", gs, k), shape_of(q))
    if needs[1]:
        grads[1] = unbroadcast(call("matmul", _swap_last(gs), q), shape_of(k))
    return grads


OPS = {
    "relu": relu,
    "gelu": gelu,
    "dense": dense,
    "softmax": softmax,
    "log_softmax": log_softmax,
    "cross_entropy": cross_entropy,
    "softmax_cross_entropy": softmax_cross_entropy,
    "layer_norm": layer_norm,
    "batch_norm": batch_norm,
    "conv_bias": conv_bias,
    "attention": attention,
}
