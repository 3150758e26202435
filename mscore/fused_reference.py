"""The reference forward of the backend contract's fused ops, written once: softmax,
log-softmax, dense, convolution plus bias, attention, layer norm, batch norm and the
recurrent layers' sequence (``rnn_sequence``).

Each function computes a fused op from primitives (:func:`mscore.dispatch.call`) on native
arrays -- or on tracers, which then record the composite primitive by primitive. Three users
share them: the functional op (``ops.layer_norm``/``ops.batch_norm``) when the backend has no
fused op of its own, the reference autodiff's fused node (:mod:`mscore.autodiff.fused`, which
records the output with a closed-form VJP over the values the forward returns), and the
conformance kit, which compares a backend's fused op against this forward.

The normalisations' half-precision rule is MindSpore's (checked against MindSpore 2.10's LayerNorm
and BatchNorm, see tests/data/make_half_norm_oracle.py): inputs narrower than float32 are normalised
in float32 with their parameters cast to float32, and the output is rounded once to the input's
dtype.
"""
from __future__ import annotations

import math

from mscore.autodiff.tracer import unwrap
from mscore.common.dtype import float32, int64
from mscore.dispatch import backend, call
from mscore.dispatch import dtype as dtype_of
from mscore.dispatch import shape as shape_of

_CONSTANTS = {}
_MAX_CONSTANTS = 256


def cached_constant(key, make):
    """``make()``, kept per backend and device under ``key``.

    Cached only for backends that do not compile: a compiling backend may be tracing, and a
    traced constant must not outlive its trace.
    """
    b = backend()
    full_key = (b.name, b.device) + key
    value = _CONSTANTS.get(full_key)
    if value is None:
        value = make()
        if b.compile is None and len(_CONSTANTS) < _MAX_CONSTANTS:
            _CONSTANTS[full_key] = value
    return value


def const(value, dt):
    """A 0-d array of ``value`` in ``dt``, made once per backend and device."""
    return cached_constant((value, dt.name), lambda: call("full", (), value, dt))


def cast_to(a, dt):
    """``a`` in dtype ``dt`` (None stays None; no cast when it already is)."""
    return a if a is None or dtype_of(a) is dt else call("cast", a, dt)


def work_dtype(dt):
    """The dtype a normalisation computes in: float32 for inputs narrower than float32
    (MindSpore's rule), the input's dtype otherwise."""
    return float32 if dt.itemsize < 4 else dt


def stopped(a):
    """``a``'s value cut from every gradient (the tracer's and the backend library's)."""
    return call("stop_gradient", unwrap(a))


def max_shifted(x, axis):
    """``x`` minus its maximum along ``axis`` (the shift carries no gradient)."""
    return call("sub", x, call("max", stopped(x), axis=(axis,), keepdims=True))


def softmax(x, axis):
    """exp(x) / sum(exp(x)) along ``axis``, shifted by the maximum."""
    e = call("exp", max_shifted(x, axis))
    return call("div", e, call("sum", e, axis=(axis,), keepdims=True))


def log_softmax(x, axis):
    """x - log(sum(exp(x))) along ``axis``, shifted by the maximum."""
    sh = max_shifted(x, axis)
    return call("sub", sh, call("log", call("sum", call("exp", sh), axis=(axis,),
                                            keepdims=True)))


def dense(x, w, b):
    """``x @ w.T + b`` with x (..., in), w (out, in), b (out,) or None, as one 2-d matmul.

    Returns ``(out, x2)``, ``x2`` being ``x`` as the 2-d matrix the matmul took.
    """
    xs = shape_of(x)
    o = shape_of(w)[0]
    x2 = x if len(xs) == 2 else call("reshape", x, (math.prod(xs[:-1]), xs[-1]))
    out = call("matmul", x2, call("transpose", w, (1, 0)))
    if b is not None:
        out = call("add", out, b)
    if len(xs) != 2:
        out = call("reshape", out, xs[:-1] + (o,))
    return out, x2


def conv_bias(x, w, b, stride, padding, dilation, groups):
    """``conv(x, w) + b`` with the bias broadcast over the channel axis."""
    out = call("conv", x, w, stride=stride, padding=padding, dilation=dilation, groups=groups)
    nd = len(shape_of(out)) - 2
    return call("add", out, call("reshape", b, (1, shape_of(b)[0]) + (1,) * nd))


def causal_mask(lq, lk):
    """The (lq, lk) top-left aligned causal mask: True where a query may see a key."""
    def make():
        rows = call("reshape", call("arange", 0, lq, 1, int64), (lq, 1))
        cols = call("reshape", call("arange", 0, lk, 1, int64), (1, lk))
        return call("greater_equal", rows, cols)
    return cached_constant(("causal", lq, lk), make)


def attention_weights(q, k, mask, is_causal, scale):
    """softmax(q k^T * scale + mask) over the last axis; a bool mask keeps the True
    positions, a float mask is added; causal masking is top-left aligned. Returns
    ``(weights, scale)`` (``scale`` 1/sqrt(d) when None)."""
    dt = dtype_of(q)
    lq, d = shape_of(q)[-2:]
    lk = shape_of(k)[-2]
    scale = 1.0 / math.sqrt(d) if scale is None else float(scale)
    n = len(shape_of(k))
    kt = call("transpose", k, tuple(range(n - 2)) + (n - 1, n - 2))
    scores = call("mul", call("matmul", q, kt), const(scale, dt))
    neg_inf = const(-math.inf, dt)
    if is_causal:
        scores = call("where", causal_mask(lq, lk), scores, neg_inf)
    if mask is not None:
        if dtype_of(mask).is_bool:
            scores = call("where", mask, scores, neg_inf)
        else:
            scores = call("add", scores, cast_to(mask, dt))
    return softmax(scores, len(shape_of(scores)) - 1), scale


def attention(q, k, v, mask, is_causal, scale):
    """``attention_weights(q, k, mask, is_causal, scale) @ v``. Returns ``(out, weights,
    scale)``."""
    p, scale = attention_weights(q, k, mask, is_causal, scale)
    return call("matmul", p, v), p, scale


def _rstd(var, eps, cdt):
    return call("div", const(1.0, cdt), call("sqrt", call("add", var, const(float(eps), cdt))))


def layer_norm(x, normalized_shape, weight, bias, eps):
    """Normalise over the trailing ``normalized_shape`` axes, then scale and shift.

    Returns ``(out, saved)``: ``out`` in ``x``'s dtype, ``saved`` the values a VJP needs
    (``xhat``, ``rstd``, ``axes``, ``inv_n``, all in the work dtype).
    """
    xdt = dtype_of(x)
    cdt = work_dtype(xdt)
    nd = len(shape_of(x))
    axes = tuple(range(nd - len(normalized_shape), nd))
    inv_n = const(1.0 / math.prod(normalized_shape), cdt)
    xc = cast_to(x, cdt)
    d = call("sub", xc, call("mul", call("sum", xc, axis=axes, keepdims=True), inv_n))
    var = call("mul", call("sum", call("mul", d, d), axis=axes, keepdims=True), inv_n)
    rstd = _rstd(var, eps, cdt)
    xhat = call("mul", d, rstd)
    out = xhat
    if weight is not None:
        out = call("mul", out, cast_to(weight, cdt))
    if bias is not None:
        out = call("add", out, cast_to(bias, cdt))
    return cast_to(out, xdt), {"xhat": xhat, "rstd": rstd, "axes": axes, "inv_n": inv_n}


def batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps):
    """Batch normalisation over axis 1.

    Returns ``(out, new_running_mean, new_running_var, saved)``. In training (or without
    running statistics) the batch statistics normalise and the new running ones are
    ``(1 - momentum) * running + momentum * batch`` (unbiased batch variance) in the running
    dtype, None without running statistics; in eval the running statistics normalise and the
    new ones are None. ``saved`` holds what the matching VJP needs (``mode`` "train" or
    "eval").
    """
    shape = shape_of(x)
    c = shape[1]
    bshape = (1, c) + (1,) * (len(shape) - 2)
    xdt = dtype_of(x)
    cdt = work_dtype(xdt)
    xc = cast_to(x, cdt)
    w = None if weight is None else call("reshape", cast_to(weight, cdt), bshape)
    b = None if bias is None else call("reshape", cast_to(bias, cdt), bshape)
    if training or running_mean is None:
        axes = (0,) + tuple(range(2, len(shape)))
        n = math.prod(shape[a] for a in axes)
        inv_n = const(1.0 / n, cdt)
        mean = call("mul", call("sum", xc, axis=axes, keepdims=True), inv_n)
        d = call("sub", xc, mean)
        var = call("mul", call("sum", call("mul", d, d), axis=axes, keepdims=True), inv_n)
        rstd = _rstd(var, eps, cdt)
        scale = rstd if w is None else call("mul", w, rstd)
        out = call("mul", d, scale)
        if b is not None:
            out = call("add", out, b)
        new_mean = new_var = None
        if running_mean is not None:
            new_mean = _moving(running_mean, call("reshape", mean, (c,)), momentum, 1.0)
            new_var = _moving(running_var, call("reshape", var, (c,)), momentum,
                              n / max(n - 1, 1))
        saved = {"mode": "train", "d": d, "rstd": rstd, "scale": scale, "axes": axes,
                 "inv_n": inv_n}
        return cast_to(out, xdt), new_mean, new_var, saved
    # The running statistics get no gradient, as in MindSpore (BatchNorm's bprop).
    rm = call("reshape", cast_to(stopped(running_mean), cdt), bshape)
    rstd = _rstd(call("reshape", cast_to(stopped(running_var), cdt), bshape), eps, cdt)
    scale = rstd if w is None else call("mul", w, rstd)
    shift = call("neg", call("mul", rm, scale))
    if b is not None:
        shift = call("add", shift, b)
    out = call("add", call("mul", xc, scale), shift)
    saved = {"mode": "eval", "xc": xc, "rstd": rstd, "scale": scale, "bshape": bshape, "w": w}
    return cast_to(out, xdt), None, None, saved


def _moving(running, batch, momentum, factor):
    """``(1 - momentum) * running + momentum * factor * batch`` in the running dtype."""
    pdt = dtype_of(running)
    batch = cast_to(stopped(batch), pdt)
    return call("add", call("mul", stopped(running), const(1.0 - momentum, pdt)),
                call("mul", batch, const(momentum * factor, pdt)))


def _sigmoid(x, dt):
    """1 / (1 + exp(-x)) as ``ops.sigmoid`` computes it: (tanh(x / 2) + 1) / 2."""
    half = const(0.5, dt)
    return call("mul", call("add", call("tanh", call("mul", x, half)), const(1.0, dt)), half)


def _gate(s, k, hidden):
    """Gate ``k`` (of width ``hidden``) of the stacked gates ``s`` (N, G * hidden)."""
    return call("getitem", s, (slice(None), slice(k * hidden, (k + 1) * hidden)))


def rnn_step(mode, gi, gh, h, c):
    """One step of an RNN layer from its input and hidden projections ``gi``, ``gh``
    (N, gates * H): ``(h', c')`` (``c'`` None but for LSTM). Gate orders: LSTM i, f, g, o;
    GRU r, z, n with ``n = tanh(i_n + r * h_n)``, ``h' = n + z * (h - n)``."""
    dt = dtype_of(gi)
    hidden = shape_of(h)[-1]
    if mode == "LSTM":
        s = call("add", gi, gh)
        i, f, g, o = (_gate(s, k, hidden) for k in range(4))
        c2 = call("add", call("mul", _sigmoid(f, dt), c),
                  call("mul", _sigmoid(i, dt), call("tanh", g)))
        return call("mul", _sigmoid(o, dt), call("tanh", c2)), c2
    if mode == "GRU":
        r = _sigmoid(call("add", _gate(gi, 0, hidden), _gate(gh, 0, hidden)), dt)
        z = _sigmoid(call("add", _gate(gi, 1, hidden), _gate(gh, 1, hidden)), dt)
        n = call("tanh", call("add", _gate(gi, 2, hidden), call("mul", r, _gate(gh, 2, hidden))))
        return call("add", n, call("mul", z, call("sub", h, n))), None
    pre = call("add", gi, gh)
    if mode == "RNN_TANH":
        return call("tanh", pre), None
    return call("maximum", pre, const(0.0, dt)), None


def rnn_sequence(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh):
    """One direction of one recurrent layer over a whole sequence.

    ``mode`` 'LSTM', 'GRU', 'RNN_TANH' or 'RNN_RELU'; ``x`` (T, N, in); ``h0`` (N, H);
    ``c0`` (N, H) for LSTM, else None; ``w_ih`` (gates * H, in), ``w_hh`` (gates * H, H),
    ``b_ih``, ``b_hh`` (gates * H,) or both None; one floating dtype. Returns
    ``(out (T, N, H), h_T, c_T)`` (``c_T`` None but for LSTM).
    """
    steps = shape_of(x)[0]
    gi_all, _ = dense(x, w_ih, b_ih)                   # every step's input projection
    w_hh_t = call("transpose", w_hh, (1, 0))
    h, c = h0, c0
    outs = []
    for t in range(steps):
        gh = call("matmul", h, w_hh_t)
        if b_hh is not None:
            gh = call("add", gh, b_hh)
        h, c = rnn_step(mode, call("getitem", gi_all, (t,)), gh, h, c)
        outs.append(call("reshape", h, (1,) + shape_of(h)))
    return call("concat", outs, axis=0), h, c
