"""VJP rules of the primitive op set, written once in primitive ops.

Each rule is ``rule(g, out, *inputs, **attrs) -> [grad per input]`` over native arrays:
``g`` is the cotangent of the op's output ``out``; a ``None`` grad means "no gradient".
Rules registered with ``needs=True`` also take ``needs`` (one bool per input, None for
all): the backward pass tells them which inputs are traced, so they skip the others' grads
(the data input of a first layer, a constant factor).
"""
from __future__ import annotations

import math

from mscore.common.dtype import bool_
from mscore.dispatch import call
from mscore.dispatch import dtype as dtype_of
from mscore.dispatch import shape as shape_of

VJP_RULES = {}
NEEDS_AWARE = set()   # rules that take the ``needs`` keyword


def _rule(*names, needs=False):
    def register(fn):
        for n in names:
            VJP_RULES[n] = fn
            if needs:
                NEEDS_AWARE.add(n)
        return fn
    return register


def wanted(needs, i):
    """True when input ``i`` needs a gradient (``needs`` None: every input does)."""
    return needs is None or needs[i]


def _scalar(value, like):
    return call("full", (), value, dtype_of(like))


def unbroadcast(g, target_shape):
    """Sum ``g`` over the axes numpy broadcasting added or stretched to reach its shape."""
    gshape = shape_of(g)
    if gshape == tuple(target_shape):
        return g
    lead = len(gshape) - len(target_shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(target_shape) if s == 1 and gshape[lead + i] != 1)
    if axes:
        g = call("sum", g, axis=axes, keepdims=False)
    return call("reshape", g, tuple(target_shape))


# -- elementwise ---------------------------------------------------------------------------
@_rule("neg")
def _neg(g, out, a):
    return [call("neg", g)]


@_rule("abs")
def _abs(g, out, a):
    return [call("mul", g, call("sign", a))]


@_rule("exp")
def _exp(g, out, a):
    return [call("mul", g, out)]


@_rule("log")
def _log(g, out, a):
    return [call("div", g, a)]


@_rule("sqrt")
def _sqrt(g, out, a):
    return [call("div", g, call("mul", out, _scalar(2.0, out)))]


@_rule("sin")
def _sin(g, out, a):
    return [call("mul", g, call("cos", a))]


@_rule("cos")
def _cos(g, out, a):
    return [call("neg", call("mul", g, call("sin", a)))]


@_rule("tanh")
def _tanh(g, out, a):
    one = _scalar(1.0, out)
    return [call("mul", g, call("sub", one, call("mul", out, out)))]


@_rule("erf")
def _erf(g, out, a):
    coef = _scalar(2.0 / math.sqrt(math.pi), a)
    return [call("mul", g, call("mul", coef, call("exp", call("neg", call("mul", a, a)))))]


@_rule("add", needs=True)
def _add(g, out, a, b, needs=None):
    return [unbroadcast(g, shape_of(a)) if wanted(needs, 0) else None,
            unbroadcast(g, shape_of(b)) if wanted(needs, 1) else None]


@_rule("sub", needs=True)
def _sub(g, out, a, b, needs=None):
    return [unbroadcast(g, shape_of(a)) if wanted(needs, 0) else None,
            unbroadcast(call("neg", g), shape_of(b)) if wanted(needs, 1) else None]


@_rule("mul", needs=True)
def _mul(g, out, a, b, needs=None):
    return [unbroadcast(call("mul", g, b), shape_of(a)) if wanted(needs, 0) else None,
            unbroadcast(call("mul", g, a), shape_of(b)) if wanted(needs, 1) else None]


@_rule("div", needs=True)
def _div(g, out, a, b, needs=None):
    ga = call("div", g, b)
    if not wanted(needs, 1):
        return [unbroadcast(ga, shape_of(a)), None]
    gb = call("neg", call("mul", ga, out))
    return [unbroadcast(ga, shape_of(a)) if wanted(needs, 0) else None,
            unbroadcast(gb, shape_of(b))]


@_rule("pow")
def _pow(g, out, a, b):
    one = _scalar(1.0, a)
    ga = call("mul", g, call("mul", b, call("pow", a, call("sub", b, one))))
    # d/db a**b = out * log(a), defined as 0 where a == 0 (the usual convention).
    zero = _scalar(0.0, a)
    positive = call("greater", a, zero)
    safe_a = call("where", positive, a, call("full", shape_of(a), 1.0, dtype_of(a)))
    gb = call("mul", g, call("where", positive, call("mul", out, call("log", safe_a)),
                             call("full", shape_of(out), 0.0, dtype_of(out))))
    return [unbroadcast(ga, shape_of(a)), unbroadcast(gb, shape_of(b))]


def _select_grad(g, mask, target_shape):
    zeros = call("full", shape_of(g), 0.0, dtype_of(g))
    return unbroadcast(call("where", mask, g, zeros), target_shape)


@_rule("maximum")
def _maximum(g, out, a, b):
    a_wins = call("greater_equal", a, b)
    return [_select_grad(g, a_wins, shape_of(a)),
            _select_grad(g, call("logical_not", a_wins), shape_of(b))]


@_rule("minimum")
def _minimum(g, out, a, b):
    a_wins = call("less_equal", a, b)
    return [_select_grad(g, a_wins, shape_of(a)),
            _select_grad(g, call("logical_not", a_wins), shape_of(b))]


@_rule("where", needs=True)
def _where(g, out, cond, x, y, needs=None):
    return [None, _select_grad(g, cond, shape_of(x)) if wanted(needs, 1) else None,
            _select_grad(g, call("logical_not", cond), shape_of(y)) if wanted(needs, 2)
            else None]


@_rule("cast")
def _cast(g, out, a, dtype):
    src = dtype_of(a)
    if not src.is_floating:
        return [None]
    return [call("cast", g, src)]


# -- reductions ------------------------------------------------------------------------------
def _expand_reduced(g, in_shape, axis, keepdims):
    if axis is None:
        axis = tuple(range(len(in_shape)))
    if not keepdims:
        kept = tuple(1 if i in axis else s for i, s in enumerate(in_shape))
        g = call("reshape", g, kept)
    return g


@_rule("sum")
def _sum(g, out, a, axis, keepdims):
    g = _expand_reduced(g, shape_of(a), axis, keepdims)
    return [call("broadcast_to", g, shape_of(a))]


@_rule("max", "min")
def _max(g, out, a, axis, keepdims):
    in_shape = shape_of(a)
    g = _expand_reduced(g, in_shape, axis, keepdims)
    o = _expand_reduced(out, in_shape, axis, keepdims)
    mask = call("cast", call("equal", a, o), dtype_of(a))
    # Ties share the gradient equally, as in MindSpore and JAX.
    count = call("sum", mask, axis=axis if axis is not None else tuple(range(len(in_shape))),
                 keepdims=True)
    return [call("mul", call("div", mask, count), g)]


# -- shape ------------------------------------------------------------------------------------
@_rule("reshape")
def _reshape(g, out, a, shape):
    return [call("reshape", g, shape_of(a))]


@_rule("transpose")
def _transpose(g, out, a, perm):
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return [call("transpose", g, tuple(inverse))]


@_rule("broadcast_to")
def _broadcast_to(g, out, a, shape):
    return [unbroadcast(g, shape_of(a))]


@_rule("concat")
def _concat(g, out, *arrays, axis):
    grads, start = [], 0
    ndim = len(shape_of(g))
    for a in arrays:
        size = shape_of(a)[axis]
        index = tuple(slice(start, start + size) if i == axis % ndim else slice(None)
                      for i in range(ndim))
        grads.append(call("getitem", g, index))
        start += size
    return grads


@_rule("pad")
def _pad(g, out, a, pad_width, value):
    index = tuple(slice(lo, s - hi) for (lo, hi), s in zip(pad_width, shape_of(g)))
    return [call("getitem", g, index)]


@_rule("getitem")
def _getitem(g, out, a, index):
    zeros = call("full", shape_of(a), 0.0, dtype_of(g))
    return [call("scatter_add", zeros, index, g)]


@_rule("scatter_add")
def _scatter_add(g, out, a, index, updates):
    return [g, None, call("getitem", g, index)]


# -- linear algebra -----------------------------------------------------------------------------
def _swap_last(x):
    n = len(shape_of(x))
    return call("transpose", x, tuple(range(n - 2)) + (n - 1, n - 2))


@_rule("matmul", needs=True)
def _matmul(g, out, a, b, needs=None):
    ga = unbroadcast(call("matmul", g, _swap_last(b)), shape_of(a)) if wanted(needs, 0) \
        else None
    gb = unbroadcast(call("matmul", _swap_last(a), g), shape_of(b)) if wanted(needs, 1) \
        else None
    return [ga, gb]


# -- convolution -------------------------------------------------------------------------------
def conv_weight_grad(x, g, kernel, stride, padding, dilation, groups):
    """d(conv(x, w))/dw contracted with ``g``: a convolution of ``x`` by ``g`` with stride and
    dilation swapped, batch acting as channels; returns shape (O, C // groups, *kernel)."""
    xs, gs = shape_of(x), shape_of(g)
    n, c = xs[:2]
    o = gs[1]
    nd = len(kernel)
    cg, og = c // groups, o // groups
    x = call("pad", x, ((0, 0), (0, 0)) + tuple(padding), value=0)
    xs = shape_of(x)
    # x -> (cg, groups*n, *S): per group, the batch becomes the channel axis.
    xt = call("reshape", x, (n, groups, cg) + xs[2:])
    xt = call("transpose", xt, (2, 1, 0) + tuple(range(3, 3 + nd)))
    xt = call("reshape", xt, (cg, groups * n) + xs[2:])
    # g -> (groups*og, n, *out)
    gt = call("reshape", g, (n, groups, og) + gs[2:])
    gt = call("transpose", gt, (1, 2, 0) + tuple(range(3, 3 + nd)))
    gt = call("reshape", gt, (groups * og, n) + gs[2:])
    wg = call("conv", xt, gt, stride=tuple(dilation), padding=((0, 0),) * nd,
              dilation=tuple(stride), groups=groups)          # (cg, o, *k')
    wg = call("getitem", wg, (slice(None), slice(None)) + tuple(slice(0, k) for k in kernel))
    return call("transpose", wg, (1, 0) + tuple(range(2, 2 + nd)))


def _conv_output_padding(in_spatial, out_spatial, kernel, stride, padding, dilation):
    """The output_padding that makes conv_transpose reproduce ``in_spatial`` exactly."""
    pads = []
    for s, o, k, st, (lo, hi), d in zip(in_spatial, out_spatial, kernel, stride, padding,
                                        dilation):
        pads.append(s - ((o - 1) * st - lo - hi + d * (k - 1) + 1))
    return tuple(pads)


def conv_input_grad(g, x, w, stride, padding, dilation, groups):
    """d(conv(x, w))/dx contracted with ``g``: the transposed convolution of ``g`` by ``w``
    with the output padding that gives back ``x``'s shape."""
    kernel = shape_of(w)[2:]
    op = _conv_output_padding(shape_of(x)[2:], shape_of(g)[2:], kernel, stride, padding, dilation)
    return call("conv_transpose", g, w, stride=stride, padding=padding, output_padding=op,
                dilation=dilation, groups=groups)


@_rule("conv", needs=True)
def _conv(g, out, x, w, stride, padding, dilation, groups, needs=None):
    gx = conv_input_grad(g, x, w, stride, padding, dilation, groups) if wanted(needs, 0) \
        else None
    gw = conv_weight_grad(x, g, shape_of(w)[2:], stride, padding, dilation, groups) \
        if wanted(needs, 1) else None
    return [gx, gw]


@_rule("conv_transpose", needs=True)
def _conv_transpose(g, out, x, w, stride, padding, output_padding, dilation, groups,
                    needs=None):
    kernel = shape_of(w)[2:]
    # conv_transpose(x, w) is the input-gradient of conv(., w): its own gradients are a conv
    # of g by w, and a weight gradient with the roles of input and cotangent swapped.
    gx = gw = None
    if wanted(needs, 0):
        gx = call("conv", g, w, stride=stride, padding=padding, dilation=dilation,
                  groups=groups)
        gx = call("getitem", gx, (slice(None), slice(None)) +
                  tuple(slice(0, s) for s in shape_of(x)[2:]))
    if wanted(needs, 1):
        gw = conv_weight_grad(g, x, kernel, stride, padding, dilation, groups)
    return [gx, gw]


# -- pooling ----------------------------------------------------------------------------------
def _window_slices(padded_spatial, out_spatial, kernel, stride):
    """For each kernel offset, the index of the input elements it reads at every output."""
    import itertools
    for offset in itertools.product(*(range(k) for k in kernel)):
        yield (slice(None), slice(None)) + tuple(
            slice(o, o + st * (n - 1) + 1, st) for o, st, n in zip(offset, stride, out_spatial))


@_rule("max_pool")
def _max_pool(g, out, x, kernel, stride, padding):
    dt = dtype_of(x)
    low = -math.inf if dt.is_floating else 0
    xp = call("pad", x, ((0, 0), (0, 0)) + tuple(padding), value=low)
    gx = call("full", shape_of(xp), 0.0, dtype_of(g))
    taken = call("full", shape_of(out), False, _bool())
    zeros = call("full", shape_of(g), 0.0, dtype_of(g))
    for index in _window_slices(shape_of(xp)[2:], shape_of(out)[2:], kernel, stride):
        window = call("getitem", xp, index)
        # The first maximum of each window receives the gradient, as in torch and MindSpore.
        hit = call("logical_and", call("equal", window, out), call("logical_not", taken))
        taken = call("logical_or", taken, hit)
        gx = call("scatter_add", gx, index, call("where", hit, g, zeros))
    crop = tuple(slice(lo, s - hi) for (lo, hi), s in zip(((0, 0), (0, 0)) + tuple(padding),
                                                         shape_of(gx)))
    return [call("getitem", gx, crop)]


@_rule("avg_pool")
def _avg_pool(g, out, x, kernel, stride, padding, count_include_pad):
    pad = ((0, 0), (0, 0)) + tuple(padding)
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(shape_of(x), pad))
    if count_include_pad:
        scaled = call("div", g, _scalar(float(math.prod(kernel)), g))
    else:
        ones = call("full", (1, 1) + shape_of(x)[2:], 1.0, dtype_of(g))
        valid = call("pad", ones, pad[:2] + tuple(padding), value=0.0)
        count = call("full", (1, 1) + shape_of(g)[2:], 0.0, dtype_of(g))
        for index in _window_slices(padded[2:], shape_of(g)[2:], kernel, stride):
            count = call("add", count, call("getitem", valid, index))
        scaled = call("div", g, count)
    gx = call("full", padded, 0.0, dtype_of(g))
    for index in _window_slices(padded[2:], shape_of(g)[2:], kernel, stride):
        gx = call("scatter_add", gx, index, scaled)
    crop = tuple(slice(lo, s - hi) for (lo, hi), s in zip(pad, padded))
    return [call("getitem", gx, crop)]


def _bool():
    return bool_
