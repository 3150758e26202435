"""Normalisations: ``layer_norm`` and ``batch_norm`` (their forward is
:mod:`mscore.fused_reference`'s, or the backend's fused op), ``group_norm``,
``instance_norm``, ``lrn``, with their Primitives.
"""
from __future__ import annotations

import builtins
from itertools import repeat

import numpy as np

from mscore import dispatch, fused_reference
from mscore._state import in_compiled
from mscore._state import thread as _thread
from mscore.autodiff.tracer import unwrap
from mscore.common.cast_cache import drop_cast_copies
from mscore.common.parameter import Parameter, assign_all, changes_kept
from mscore.common.tensor import Tensor
from mscore.ops._args import _as_tensor, _float_input, _float_tensor
from mscore.ops.array.creation import zeros
from mscore.ops.array.indexing import getitem
from mscore.ops.array.manipulation import reshape
from mscore.ops.control import cast
from mscore.ops.math.elementwise import add, div, maximum, mul, pow, rsqrt, sqrt, square, sub
from mscore.ops.multi_tensor import solely_owned
from mscore.ops.nn.pad_modes import pad
from mscore.ops.primitive_base import Primitive, check_axes, check_bool, check_float, check_int
from mscore.ops.reduction.reduce import mean, reduce_mean, sum, var

_wrap = Tensor._wrap


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise over the trailing ``normalized_shape`` axes, then scale and shift.
    Half-precision inputs are normalised in float32 and the output rounded once to their
    dtype (MindSpore's rule, see :mod:`mscore.fused_reference`)."""
    x = _float_input(input)
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    nd = len(normalized_shape)
    have = x.shape
    if tuple(have[len(have) - nd:]) != normalized_shape:
        raise ValueError(f"normalized_shape: {normalized_shape} does not match the "
                         f"trailing axes of {x.shape}")
    w = None if weight is None else _as_tensor(weight, "weight")._data
    b = None if bias is None else _as_tensor(bias, "bias")._data
    return _wrap(layer_norm_checked(x._data, normalized_shape, w, b, float(eps)))


def layer_norm_checked(x, normalized_shape, weight, bias, eps):
    """:func:`layer_norm` on native arrays the caller has checked (a floating ``x`` whose
    trailing axes are the tuple ``normalized_shape``; ``eps`` a float): the backend's fused
    kernel, or the reference composite."""
    fused = dispatch.fused("layer_norm")
    if fused is not None:
        return fused(x, normalized_shape, weight, bias, eps)
    return fused_reference.layer_norm(x, normalized_shape, weight, bias, eps)[0]


def batch_norm(input_x, running_mean, running_var, weight, bias, training=False, momentum=0.1,
               eps=1e-5):
    """Batch normalisation over axis 1. In training the batch statistics normalise and the
    running ones are updated in place: ``running = (1 - momentum) * running + momentum *
    batch`` (unbiased variance), as in MindSpore's functional op. Half-precision inputs are
    normalised in float32 and the output rounded once to their dtype (MindSpore's rule, see
    :mod:`mscore.fused_reference`). Returns the output."""
    x = _float_input(input_x, "input_x")
    if x.ndim < 2:
        raise ValueError(f"input_x: expected at least 2-d (N, C, ...), got shape {x.shape}")
    return _wrap(batch_norm_checked(x._data, running_mean, running_var, weight, bias,
                                    bool(training), float(momentum), float(eps)))


def batch_norm_checked(x, running_mean, running_var, weight, bias, training, momentum, eps):
    """:func:`batch_norm` of a native floating array ``x`` of at least 2 dims the caller has
    checked (the statistics and the affine parameters are Tensors or None; ``training`` a
    bool, ``momentum`` and ``eps`` floats): the native output."""
    w = None if weight is None else weight._data
    b = None if bias is None else bias._data
    if training and running_mean is not None and running_var is not None:
        inplace = dispatch.fused("batch_norm_inplace")
        if inplace is not None and _updatable_in_place(running_mean, running_var):
            # The backend's kernel updates the running statistics where they are (as
            # torch's own BatchNorm does): no copies of them per step.
            out = inplace(x, running_mean._data, running_var._data, w, b, momentum, eps)
            if out is not None:
                # Same arrays, new values: no scope needs a note (each would put back the
                # very arrays that changed), only stale low-precision copies go.
                drop_cast_copies((running_mean, running_var))
                return out
    raw = (None if running_mean is None else running_mean._data,
           None if running_var is None else running_var._data, w, b)
    fused = dispatch.fused("batch_norm")
    if fused is not None:
        # The backend's op is functional: (out, new_mean, new_var), news None in eval.
        out, new_mean, new_var = fused(x, *raw, training, momentum, eps)
    else:
        out, new_mean, new_var, _ = fused_reference.batch_norm(x, *raw, training, momentum,
                                                               eps)
    if new_mean is not None:
        assign_all((running_mean, running_var), (unwrap(new_mean), unwrap(new_var)))
    return out


def _updatable_in_place(*stats):
    """True when these running-statistics Parameters may be updated in place and nobody
    could tell: eager (not traced or compiled, not exported), no open scope that would undo
    the change, nothing else holding their arrays."""
    return not in_compiled() and not _thread.exporting and changes_kept() and \
        all(map(isinstance, stats, repeat(Parameter))) and solely_owned(*stats)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """Normalise (N, C, *) over each group of ``C // num_groups`` channels and the spatial
    axes (biased variance), then scale by ``weight`` and shift by ``bias`` per channel."""
    x = _float_tensor(input, "input", "group_norm")
    if x.ndim < 2:
        raise ValueError(f"For 'group_norm', 'input' must be at least 2-d (N, C, ...), got "
                         f"shape {x.shape}")
    n, c = x.shape[:2]
    if isinstance(num_groups, bool) or not isinstance(num_groups, (int, np.integer)) or \
            num_groups <= 0 or c % num_groups:
        raise ValueError(f"For 'group_norm', 'num_groups' must be a positive int dividing the "
                         f"{c} channels, got {num_groups!r}")
    g = reshape(x, (n, int(num_groups), -1))
    m = mean(g, 2, True)
    d = sub(g, m)
    v = mean(mul(d, d), 2, True)
    out = reshape(mul(d, rsqrt(add(v, float(eps)))), x.shape)
    bshape = (1, c) + (1,) * (x.ndim - 2)
    for t, name in ((weight, "weight"), (bias, "bias")):
        if t is not None and tuple(t.shape) != (c,):
            raise ValueError(f"For 'group_norm', '{name}' must have shape ({c},), got "
                             f"{t.shape}")
    if weight is not None:
        out = mul(out, reshape(cast(weight, x.dtype), bshape))
    if bias is not None:
        out = add(out, reshape(cast(bias, x.dtype), bshape))
    return out


def instance_norm(x, eps=1e-5):
    """Each (sample, channel) plane of (N, C, *) normalised by its own mean and (biased)
    variance; returns ``(out, mean, var)`` with the statistics shaped (N, C)."""
    x = _float_tensor(x, "x", "instance_norm")
    axes = tuple(range(2, x.ndim))
    m = mean(x, axes, True)
    d = sub(x, m)
    v = mean(mul(d, d), axes, True)
    out = mul(d, rsqrt(add(v, float(eps))))
    return out, reshape(m, x.shape[:2]), reshape(v, x.shape[:2])


def lrn(x, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, norm_region="ACROSS_CHANNELS"):
    """Local response normalisation across channels of (N, C, H, W):
    ``x / (bias + alpha * sum of x^2 over channels c-r..c+r) ** beta``."""
    cls = "LRN"
    if isinstance(depth_radius, bool) or not isinstance(depth_radius, (int, np.integer)):
        raise TypeError(f"For '{cls}', the type of 'depth_radius' must be int, got "
                        f"{type(depth_radius).__name__}")
    if depth_radius < 0:
        raise ValueError(f"For '{cls}', 'depth_radius' must be >= 0, got {depth_radius}")
    for name, v in (("bias", bias), ("alpha", alpha), ("beta", beta)):
        if not isinstance(v, float):
            raise TypeError(f"For '{cls}', the type of '{name}' must be float, got "
                            f"{type(v).__name__}")
    if norm_region != "ACROSS_CHANNELS":
        raise ValueError(f"For '{cls}', the 'norm_region' must be in ['ACROSS_CHANNELS'], got "
                         f"{norm_region!r}")
    x = _float_tensor(x, "input_x", cls)
    if x.ndim != 4:
        raise ValueError(f"For '{cls}', the rank of input must be 4, got {x.ndim}")
    r = int(depth_radius)
    c = x.shape[1]
    sq = pad(mul(x, x), (0, 0, 0, 0, r, r))
    total = None
    for k in range(2 * r + 1):
        part = getitem(sq, (builtins.slice(None), builtins.slice(k, k + c)))
        total = part if total is None else add(total, part)
    return div(x, pow(add(mul(total, float(alpha)), float(bias)), float(beta)))


class LayerNorm(Primitive):
    """``LayerNorm(begin_norm_axis=1, begin_params_axis=1, epsilon=1e-7)(x, gamma, beta)``
    returns ``(y, mean, variance)``, the statistics with the normalised axes kept."""

    def __init__(self, begin_norm_axis=1, begin_params_axis=1, epsilon=1e-7):
        super().__init__()
        self.begin_norm_axis = check_int(begin_norm_axis, "begin_norm_axis", "LayerNorm")
        self.begin_params_axis = check_int(begin_params_axis, "begin_params_axis",
                                           "LayerNorm")
        self.epsilon = check_float(epsilon, "epsilon", "LayerNorm")

    def compute(self, input_x, gamma, beta):
        x = _float_input(input_x, "input_x")
        start = self.begin_norm_axis % x.ndim
        axes = tuple(range(start, x.ndim))
        mu = mean(x, axes, True)
        d = sub(x, mu)
        sigma2 = mean(mul(d, d), axes, True)
        y = mul(d, rsqrt(add(sigma2, self.epsilon)))
        pstart = self.begin_params_axis % x.ndim
        pshape = (1,) * pstart + tuple(x.shape[pstart:])
        y = add(mul(y, reshape(gamma, pshape)), reshape(beta, pshape))
        return y, mu, sigma2


class BatchNorm(Primitive):
    """``BatchNorm(is_training=False, epsilon=1e-5, momentum=0.1, data_format='NCHW')(x,
    scale, bias, mean, variance)`` returns ``(y, batch_mean, batch_variance, reserve_1,
    reserve_2)``. In training the batch statistics normalise and the ``mean``/``variance``
    Parameters are updated in place: ``(1 - momentum) * running + momentum * batch``
    (unbiased variance)."""

    def __init__(self, is_training=False, epsilon=1e-5, momentum=0.1, data_format="NCHW"):
        super().__init__()
        self.is_training = check_bool(is_training, "is_training", "BatchNorm")
        self.epsilon = check_float(epsilon, "epsilon", "BatchNorm")
        self.momentum = check_float(momentum, "momentum", "BatchNorm")
        if not 0.0 <= momentum <= 1.0:
            raise ValueError(f"BatchNorm: momentum must be in [0, 1], got {momentum}")
        if not 0.0 < epsilon <= 1.0:
            raise ValueError(f"BatchNorm: epsilon must be in (0, 1], got {epsilon}")
        if data_format != "NCHW":
            raise NotImplementedError(f"BatchNorm: data_format={data_format!r} is not "
                                      f"supported; use 'NCHW'")
        self.data_format = data_format

    def compute(self, input_x, scale, bias, mean, variance):
        x = _float_input(input_x, "input_x")
        c = x.shape[1]
        axes = (0,) + tuple(range(2, x.ndim))
        if self.is_training:
            bmean = reduce_mean(x, axes)  # ``mean`` is MindSpore's argument name here
            bvar = var(x, axes)
            out = batch_norm(x, mean, variance, scale, bias, True, self.momentum,
                             self.epsilon)
            return out, bmean, bvar, bmean, bvar
        out = batch_norm(x, mean, variance, scale, bias, False, self.momentum, self.epsilon)
        no_stats = zeros((c,), x.dtype)
        return out, no_stats, no_stats, no_stats, no_stats


class L2Normalize(Primitive):
    """``L2Normalize(axis=0, epsilon=1e-4)(x)``: ``x / sqrt(max(sum(x^2, axis),
    epsilon))``."""

    def __init__(self, axis=0, epsilon=1e-4):
        super().__init__()
        self.axis = check_axes(axis, "axis", "L2Normalize")
        if not isinstance(epsilon, float):  # MindSpore's kernel check: RuntimeError
            raise RuntimeError(f"L2Normalize: epsilon must be a float, got "
                               f"{type(epsilon).__name__}")
        self.epsilon = epsilon

    def compute(self, x):
        x = _float_input(x, "x")
        sq = sum(square(x), self.axis, True)
        return div(x, sqrt(maximum(sq, self.epsilon)))
