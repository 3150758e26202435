"""Normalisation layers: ``nn.BatchNorm1d/2d/3d`` and ``nn.LayerNorm``."""
from __future__ import annotations

import math

from mscore.common import dtype as mdt
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore import dispatch
from mscore._per_thread import state as _thread
from mscore.dispatch import call
from mscore.nn.cell import Cell
from mscore.nn.layer._checks import (check_bool, check_dtype, check_int, check_number,
                                     check_positive_int, check_tensor)
from mscore.nn.layer.basic import _make
from mscore.ops import functional as F

_wrap = Tensor._wrap


def _has_hooks(cell):
    """Whether any hook is registered on ``cell`` (one would see its inputs or their
    gradients)."""
    hooks = cell._hooks
    return hooks is not None and bool(hooks.forward_pre or hooks.forward or hooks.backward
                                      or hooks.backward_pre)


class _BatchNorm(Cell):
    """Batch normalisation over axis 1 with MindSpore's parameters and momentum.

    Parameters: ``gamma``, ``beta`` (trainable when ``affine``), ``moving_mean`` and
    ``moving_variance`` (``requires_grad=False``). In training the batch statistics
    normalise and ``moving = momentum * moving + (1 - momentum) * batch`` (the unbiased batch
    variance, as MindSpore and cuDNN do); in eval the moving statistics normalise.
    ``use_batch_statistics``: None follows the training flag, True/False forces batch/moving
    statistics. Parameters are named by their attributes, as MindSpore's checkpoints show
    them inside a network ("bn1.moving_mean").
    """

    _ndims = (4,)

    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones",
                 beta_init="zeros", moving_mean_init="zeros", moving_var_init="ones",
                 use_batch_statistics=None, data_format="NCHW", dtype=mdt.float32):
        super().__init__()
        cls = type(self).__name__
        self.num_features = check_positive_int(num_features, "num_features", cls)
        self.eps = check_number(eps, "eps", cls, 0.0, low_inclusive=False)
        self.momentum = check_number(momentum, "momentum", cls, 0.0, 1.0)
        self.affine = check_bool(affine, "affine", cls)
        if use_batch_statistics is not None:
            use_batch_statistics = check_bool(use_batch_statistics, "use_batch_statistics", cls)
        self.use_batch_statistics = use_batch_statistics
        if data_format != "NCHW":
            raise ValueError(f"For '{cls}', 'data_format' must be 'NCHW' (channels last is not "
                             f"supported), got {data_format!r}")
        self.format = data_format
        dtype = check_dtype(dtype, "dtype", cls)
        c = (self.num_features,)
        self.moving_mean = Parameter(_make(moving_mean_init, c, dtype, cls, "moving_mean_init"),
                                     requires_grad=False)
        self.moving_variance = Parameter(_make(moving_var_init, c, dtype, cls,
                                               "moving_var_init"),
                                         requires_grad=False)
        self.gamma = Parameter(_make(gamma_init, c, dtype, cls, "gamma_init"), name="gamma",
                               requires_grad=self.affine)
        self.beta = Parameter(_make(beta_init, c, dtype, cls, "beta_init"), name="beta",
                              requires_grad=self.affine)

    def _cast_inputs(self, args, dtype):
        # construct normalises half-precision inputs in float32 itself (fused kernels read
        # them as they are), so a float32 BatchNorm (amp O2's black list) whose float32 input
        # nothing can observe (no hooks, this class's construct, no exporter recording the
        # program as MindSpore writes it) takes them uncast: the same result without a cast
        # of the activations each way.
        if dtype is mdt.float32 and len(args) == 1 and isinstance(args[0], Tensor) and \
                args[0].dtype in (mdt.float16, mdt.bfloat16) and \
                type(self).construct is _BatchNorm.construct and \
                not _has_hooks(self) and not _thread.exporting:
            return args
        return super()._cast_inputs(args, dtype)

    def construct(self, x):
        cls = type(self).__name__
        check_tensor(x, "x", cls)
        shape = x.shape
        nd = len(shape)
        if nd not in self._ndims:
            raise ValueError(f"For '{cls}', 'x' must be {' or '.join(map(str, self._ndims))}-d, "
                             f"got shape {shape}")
        c = self.num_features
        if shape[1] != c:
            raise ValueError(f"For '{cls}', 'x' must have {c} channels (axis 1), got shape "
                             f"{shape}")
        if not x.dtype.is_floating:
            raise TypeError(f"For '{cls}', 'x' must be floating point, got {x.dtype}")
        dt = x.dtype
        xd = x._data
        bshape = (1, c) + (1,) * (nd - 2)
        use_batch = self.training if self.use_batch_statistics is None \
            else self.use_batch_statistics
        fused = dispatch.fused("batch_norm")
        if fused is not None:
            # The backend's op takes torch's momentum (weight of the batch statistics) and
            # returns (out, new_mean, new_var) without touching the statistics it gets.
            out, new_mean, new_var = fused(
                xd, self.moving_mean._data, self.moving_variance._data,
                self.cast_param(self.gamma)._data, self.cast_param(self.beta)._data,
                bool(use_batch), 1.0 - self.momentum, self.eps)
            if use_batch and new_mean is not None:
                self.moving_mean._assign(new_mean)
                self.moving_variance._assign(new_var)
            return _wrap(out)
        # Half-precision inputs are normalised with float32 statistics (as cuDNN does); the
        # output keeps the input's dtype.
        half = dt.itemsize < 4
        cdt = mdt.float32 if half else dt
        if half:
            xd = call("cast", xd, cdt)
        gamma = call("reshape", self._param_as(self.gamma, cdt), bshape)
        beta = call("reshape", self._param_as(self.beta, cdt), bshape)
        if use_batch:
            axes = (0,) + tuple(range(2, nd))
            n = math.prod(shape[a] for a in axes)
            inv_n = call("full", (), 1.0 / n, cdt)
            mean = call("mul", call("sum", xd, axis=axes, keepdims=True), inv_n)
            d = call("sub", xd, mean)
            var = call("mul", call("sum", call("mul", d, d), axis=axes, keepdims=True), inv_n)
            inv_std = call("div", call("full", (), 1.0, cdt),
                           call("sqrt", call("add", var, call("full", (), self.eps, cdt))))
            out = call("add", call("mul", d, call("mul", gamma, inv_std)), beta)
            self._update_moving(mean, var, n)
        else:
            # The moving statistics get no gradient, as in MindSpore.
            rm = call("reshape", _stopped(self._param_as(self.moving_mean, cdt)), bshape)
            rv = call("reshape", _stopped(self._param_as(self.moving_variance, cdt)), bshape)
            scale = call("div", gamma, call("sqrt", call("add", rv,
                                                         call("full", (), self.eps, cdt))))
            shift = call("sub", beta, call("mul", rm, scale))
            out = call("add", call("mul", xd, scale), shift)
        return _wrap(call("cast", out, dt) if half else out)

    @staticmethod
    def _param_as(param, dtype):
        """``param`` (native) in ``dtype``; the float32 master values serve half-precision
        inputs directly (their statistics are float32)."""
        d = param._data
        return d if param.dtype is dtype else call("cast", d, dtype)

    def _update_moving(self, mean, var, n):
        c = (self.num_features,)
        for param, batch, factor in ((self.moving_mean, mean, 1.0),
                                     (self.moving_variance, var, n / max(n - 1, 1))):
            pdt = param.dtype
            b = call("reshape", call("stop_gradient", _raw(batch)), c)
            if _dtype(b) is not pdt:
                b = call("cast", b, pdt)
            new = call("add", call("mul", param._data, call("full", (), self.momentum, pdt)),
                       call("mul", b, call("full", (), (1.0 - self.momentum) * factor, pdt)))
            param._assign(new)

    def extend_repr(self):
        return (f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"gamma={self.gamma}, beta={self.beta}, moving_mean={self.moving_mean}, "
                f"moving_variance={self.moving_variance}")


def _raw(a):
    from mscore.autodiff.tracer import unwrap
    return unwrap(a)


def _stopped(a):
    """``a`` cut from the gradient (its plain value, detached)."""
    return call("stop_gradient", _raw(a))


def _dtype(a):
    return dispatch.dtype(a)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) inputs (see :class:`_BatchNorm`).

    ``BatchNorm2d(num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init='ones',
    beta_init='zeros', moving_mean_init='zeros', moving_var_init='ones',
    use_batch_statistics=None, data_format='NCHW', dtype=float32)``.
    """

    _ndims = (4,)


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) inputs."""

    _ndims = (2, 3)

    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones",
                 beta_init="zeros", moving_mean_init="zeros", moving_var_init="ones",
                 use_batch_statistics=None, data_format="NCHW", dtype=mdt.float32):
        super().__init__(num_features, eps, momentum, affine, gamma_init, beta_init,
                         moving_mean_init, moving_var_init, use_batch_statistics, data_format,
                         dtype)


class BatchNorm3d(Cell):
    """Batch normalisation of (N, C, D, H, W) inputs: a ``BatchNorm2d`` named ``bn2d`` over
    the (N, C, D*H, W) view, as MindSpore builds it, so its parameters are named
    ``bn2d.gamma``, ``bn2d.moving_mean``, ... in checkpoints (MindSpore's names)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones",
                 beta_init="zeros", moving_mean_init="zeros", moving_var_init="ones",
                 use_batch_statistics=None, dtype=mdt.float32):
        super().__init__()
        self.bn2d = BatchNorm2d(num_features, eps, momentum, affine, gamma_init, beta_init,
                                moving_mean_init, moving_var_init, use_batch_statistics,
                                dtype=dtype)

    def construct(self, x):
        check_tensor(x, "x", "BatchNorm3d")
        if x.ndim != 5:
            raise ValueError(f"For 'BatchNorm3d', 'x' must be 5-d (N, C, D, H, W), got "
                             f"{x.ndim}-d")
        n, c, d, h, w = x.shape
        out = self.bn2d(F.reshape(x, (n, c, d * h, w)))
        return F.reshape(out, (n, c, d, h, w))


class LayerNorm(Cell):
    """Layer normalisation: normalise over the axes from ``begin_norm_axis`` on, then scale
    by ``gamma`` and shift by ``beta`` (shape ``normalized_shape``, applied from
    ``begin_params_axis`` on).

    ``LayerNorm(normalized_shape, begin_norm_axis=-1, begin_params_axis=-1, gamma_init='ones',
    beta_init='zeros', epsilon=1e-7, dtype=float32)``.
    """

    def __init__(self, normalized_shape, begin_norm_axis=-1, begin_params_axis=-1,
                 gamma_init="ones", beta_init="zeros", epsilon=1e-7, dtype=mdt.float32):
        super().__init__()
        cls = "LayerNorm"
        if isinstance(normalized_shape, int) and not isinstance(normalized_shape, bool):
            normalized_shape = (normalized_shape,)
        if not isinstance(normalized_shape, (tuple, list)) or not normalized_shape or not all(
                isinstance(s, int) and not isinstance(s, bool) and s > 0
                for s in normalized_shape):
            raise TypeError(f"For '{cls}', 'normalized_shape' must be a non-empty tuple or list "
                            f"of positive ints, got {normalized_shape!r}")
        self.normalized_shape = tuple(normalized_shape)
        self.begin_norm_axis = check_int(begin_norm_axis, "begin_norm_axis", cls)
        self.begin_params_axis = check_int(begin_params_axis, "begin_params_axis", cls)
        self.epsilon = check_number(epsilon, "epsilon", cls, 0.0, low_inclusive=False)
        dtype = check_dtype(dtype, "dtype", cls)
        self.gamma = Parameter(_make(gamma_init, self.normalized_shape, dtype, cls,
                                     "gamma_init"), name="gamma")
        self.beta = Parameter(_make(beta_init, self.normalized_shape, dtype, cls, "beta_init"),
                              name="beta")

    def construct(self, input_x):
        cls = "LayerNorm"
        x = check_tensor(input_x, "input_x", cls)
        nd = x.ndim
        b = self.begin_norm_axis
        p = self.begin_params_axis
        if not (-nd <= b < nd and -nd <= p < nd):
            raise ValueError(f"For '{cls}', 'begin_norm_axis' {b} / 'begin_params_axis' {p} are "
                             f"out of range for a {nd}-d input")
        b, p = b % nd, p % nd
        shape = x.shape
        if shape[p:] != self.normalized_shape:
            raise ValueError(f"For '{cls}', the input's axes from begin_params_axis {shape[p:]} "
                             f"must equal normalized_shape {self.normalized_shape}")
        gamma, beta = self.cast_param(self.gamma), self.cast_param(self.beta)
        if x.dtype.itemsize < 4 and (b != p or dispatch.fused("layer_norm") is None):
            # Half-precision inputs are normalised in float32 (as fused kernels do), with
            # the float32 master gamma/beta; the output keeps the input's dtype.
            x32 = F.cast(x, mdt.float32)
            out = self._normalize(x32, b, p, F.cast(self.gamma, mdt.float32),
                                  F.cast(self.beta, mdt.float32))
            return F.cast(out, x.dtype)
        return self._normalize(x, b, p, gamma, beta)

    def _normalize(self, x, b, p, gamma, beta):
        if b == p:
            return F.layer_norm(x, self.normalized_shape, gamma, beta, self.epsilon)
        axes = tuple(range(b, x.ndim))
        m = F.mean(x, axes, True)
        d = F.sub(x, m)
        v = F.mean(F.mul(d, d), axes, True)
        out = F.mul(d, F.rsqrt(F.add(v, self.epsilon)))
        return F.add(F.mul(out, gamma), beta)

    def extend_repr(self):
        return (f"normalized_shape={self.normalized_shape}, "
                f"begin_norm_axis={self.begin_norm_axis}, "
                f"begin_params_axis={self.begin_params_axis}, gamma={self.gamma}, "
                f"beta={self.beta}")


