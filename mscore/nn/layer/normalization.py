"""Normalisation layers: ``nn.BatchNorm1d/2d/3d``, ``nn.LayerNorm``, ``nn.GroupNorm`` and
``nn.InstanceNorm1d/2d/3d``."""
from __future__ import annotations

import numbers

from mscore import dispatch, fused_reference, ops
from mscore._state import thread as _thread
from mscore.common import dtype as mdt
from mscore.common.initializer import Initializer
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.nn.layer._checks import (
    check_bool,
    check_dtype,
    check_int,
    check_number,
    check_positive_int,
    check_tensor,
)
from mscore.nn.layer.basic import _make
from mscore.ops import functional as F
from mscore.ops.nn.normalization import batch_norm_checked, instance_norm, layer_norm_checked


def _has_hooks(cell):
    """Whether any hook is registered on ``cell`` (one would see its inputs or their
    gradients)."""
    hooks = cell._hooks
    return hooks is not None and bool(hooks.forward_pre or hooks.forward or hooks.backward
                                      or hooks.backward_pre)


def _takes_half_uncast(cell, args, dtype, construct):
    """Whether a float32 normalisation cell (amp O2's black list) may take its half-precision
    input as it is: its ``construct`` normalises half inputs in float32 itself and rounds once
    (fused kernels read them as they are), so when nothing can observe the float32 input (no
    hooks, the class's own ``construct``, no exporter recording the program as MindSpore
    writes it) the result is the same without a cast of the activations each way. Only for a
    cell whose output amp rounds back to the input's dtype anyway (``_amp_output_dtype``, set
    by :func:`mscore.amp.auto_mixed_precision`'s wrapper): a float32 cell called on its own
    returns float32."""
    if dtype is not mdt.float32 or len(args) != 1:
        return False
    rounded_to = cell.__dict__.get("_amp_output_dtype")
    if rounded_to is not mdt.float16 and rounded_to is not mdt.bfloat16:
        return False
    x = args[0]
    return isinstance(x, Tensor) and dispatch.dtype(x._data) is rounded_to and \
        type(cell).construct is construct and not _thread.exporting and \
        (cell._hooks is None or not _has_hooks(cell))


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
        if _takes_half_uncast(self, args, dtype, _BatchNorm.construct):
            return args
        return super()._cast_inputs(args, dtype)

    def construct(self, x):
        cls = type(self).__name__
        if not isinstance(x, Tensor):
            check_tensor(x, "x", cls)
        xd = x._data
        shape = dispatch.shape(xd)
        nd = len(shape)
        if nd not in self._ndims:
            raise ValueError(f"For '{cls}', 'x' must be {' or '.join(map(str, self._ndims))}-d, "
                             f"got shape {shape}")
        c = self.num_features
        if shape[1] != c:
            raise ValueError(f"For '{cls}', 'x' must have {c} channels (axis 1), got shape "
                             f"{shape}")
        dt = dispatch.dtype(xd)
        if not dt.is_floating:
            raise TypeError(f"For '{cls}', 'x' must be floating point, got {dt}")
        use_batch = self.training if self.use_batch_statistics is None \
            else self.use_batch_statistics
        params = self._params   # one lookup (attribute reads go through __getattr__)
        gamma, beta = params["gamma"], params["beta"]
        if dt.itemsize >= 4:
            gamma, beta = self.cast_param(gamma), self.cast_param(beta)
        # else: half-precision inputs are normalised in float32 (MindSpore's rule): the
        # float32 master gamma/beta serve them as they are.
        # ops.batch_norm's momentum weighs the batch statistics; the layer's the moving ones.
        return Tensor._wrap(batch_norm_checked(
            xd, params["moving_mean"], params["moving_variance"], gamma, beta,
            bool(use_batch), 1.0 - self.momentum, float(self.eps)))

    def extend_repr(self):
        return (f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"gamma={self.gamma}, beta={self.beta}, moving_mean={self.moving_mean}, "
                f"moving_variance={self.moving_variance}")


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

    def _cast_inputs(self, args, dtype):
        if _takes_half_uncast(self, args, dtype, LayerNorm.construct):
            return args
        return super()._cast_inputs(args, dtype)

    def construct(self, input_x):
        cls = "LayerNorm"
        x = input_x if isinstance(input_x, Tensor) else check_tensor(input_x, "input_x", cls)
        xd = x._data
        shape = dispatch.shape(xd)
        nd = len(shape)
        b = self.begin_norm_axis
        p = self.begin_params_axis
        if not (-nd <= b < nd and -nd <= p < nd):
            raise ValueError(f"For '{cls}', 'begin_norm_axis' {b} / 'begin_params_axis' {p} are "
                             f"out of range for a {nd}-d input")
        b, p = b % nd, p % nd
        if shape[p:] != self.normalized_shape:
            raise ValueError(f"For '{cls}', the input's axes from begin_params_axis {shape[p:]} "
                             f"must equal normalized_shape {self.normalized_shape}")
        params = self._params
        gamma, beta = params["gamma"], params["beta"]
        dt = dispatch.dtype(xd)
        if dt.itemsize >= 4:
            gamma, beta = self.cast_param(gamma), self.cast_param(beta)
        # else: half-precision inputs are normalised in float32 (MindSpore's rule): the
        # float32 master gamma/beta serve them as they are.
        if not dt.is_floating:
            raise TypeError(f"input: expected a floating-point Tensor, got {dt}")
        normalized = tuple(shape[b:])
        if b != p:
            # The parameters span other axes than the normalised ones: the one normalisation
            # in the work dtype, then scale and shift there, rounded once to the input's dtype
            # (the half-precision rule of mscore.fused_reference).
            work = fused_reference.work_dtype(dt)
            xhat = Tensor._wrap(layer_norm_checked(F.cast(x, work)._data, normalized, None,
                                                   None, float(self.epsilon)))
            out = F.add(F.mul(xhat, F.cast(gamma, work)), F.cast(beta, work))
            return F.cast(out, dt)
        return Tensor._wrap(layer_norm_checked(
            xd, normalized, None if gamma is None else gamma._data,
            None if beta is None else beta._data, float(self.epsilon)))

    def extend_repr(self):
        return (f"normalized_shape={self.normalized_shape}, "
                f"begin_norm_axis={self.begin_norm_axis}, "
                f"begin_params_axis={self.begin_params_axis}, gamma={self.gamma}, "
                f"beta={self.beta}")


def _float_type(value, name, cls):
    if not isinstance(value, float):
        raise TypeError(f"For '{cls}', the type of '{name}' should be 'float', but got type "
                        f"'{type(value).__name__}'.")
    return value


class GroupNorm(Cell):
    """Normalise (N, C, *) over groups of ``num_channels // num_groups`` channels and the
    remaining axes, then scale by ``gamma`` and shift by ``beta`` (per channel).

    ``GroupNorm(num_groups, num_channels, eps=1e-05, affine=True, gamma_init='ones',
    beta_init='zeros', dtype=float32)``.
    """

    def __init__(self, num_groups, num_channels, eps=1e-05, affine=True, gamma_init="ones",
                 beta_init="zeros", dtype=mdt.float32):
        super().__init__()
        cls = "GroupNorm"
        self.num_groups = check_positive_int(num_groups, "num_groups", cls)
        self.num_channels = check_positive_int(num_channels, "num_channels", cls)
        if num_channels % num_groups:
            raise ValueError(f"For '{cls}', the 'num_channels' must be divided by 'num_groups', "
                             f"but got 'num_channels': {num_channels}, 'num_groups': "
                             f"{num_groups}.")
        self.eps = _float_type(eps, "eps", cls)
        self.affine = check_bool(affine, "affine", cls)
        dtype = check_dtype(dtype, "dtype", cls)
        c = (self.num_channels,)
        self.gamma = Parameter(_make(gamma_init, c, dtype, cls, "gamma_init"), name="gamma",
                               requires_grad=self.affine)
        self.beta = Parameter(_make(beta_init, c, dtype, cls, "beta_init"), name="beta",
                              requires_grad=self.affine)

    def construct(self, x):
        cls = "GroupNorm"
        check_tensor(x, "x", cls)
        if not x.dtype.is_floating:
            raise TypeError(f"For {cls}, the input must be a floating-point Tensor, got "
                            f"{x.dtype}")
        if x.ndim < 2 or x.shape[1] != self.num_channels:
            raise ValueError(f"For '{cls}', the channel (axis 1) of 'x' must be equal to "
                             f"num_channels {self.num_channels}, got shape {x.shape}")
        return ops.group_norm(x, self.num_groups, F.cast(self.gamma, x.dtype),
                              F.cast(self.beta, x.dtype), self.eps)

    def extend_repr(self):
        return f"num_groups={self.num_groups}, num_channels={self.num_channels}"


class _InstanceNorm(Cell):
    """Each (sample, channel) plane normalised by its own statistics, then scaled by
    ``gamma`` and shifted by ``beta``. In training the moving statistics follow
    ``moving = (1 - momentum) * moving + momentum * batch mean of the planes' statistics``
    (unbiased variance); they never normalise (as MindSpore's kernel)."""

    _ndim = 4

    def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=True, gamma_init="ones",
                 beta_init="zeros", dtype=mdt.float32):
        super().__init__()
        cls = type(self).__name__
        if isinstance(num_features, bool) or not isinstance(num_features, int):
            raise TypeError(f"For '{cls}', the type of 'num_features' should be 'int', but got "
                            f"type '{type(num_features).__name__}'.")
        _float_type(eps, "eps", cls)
        _float_type(momentum, "momentum", cls)
        check_bool(affine, "affine", cls)
        for key, val in (("gamma_init", gamma_init), ("beta_init", beta_init)):
            if not isinstance(val, (Tensor, numbers.Number, str, Initializer)):
                raise TypeError(f"For '{cls}', the type of '{key}' must be in [Tensor, "
                                f"numbers.Number, str, Initializer], but got type "
                                f"{type(val).__name__}.")
            if isinstance(val, Tensor) and val.dtype is not mdt.float32:
                raise TypeError(f"For '{cls}', the type of '{key}' must be float32, but got "
                                f"{val.dtype}.")
        if num_features < 1:
            raise ValueError(f"For '{cls}', the 'num_features' must be at least 1, but got "
                             f"{num_features}.")
        if not 0 <= momentum <= 1:
            raise ValueError(f"For '{cls}', the 'momentum' must be a number in range [0, 1], "
                             f"but got {momentum}.")
        dtype = check_dtype(dtype, "dtype", cls)
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        c = (num_features,)
        self.moving_mean = Parameter(_make("zeros", c, dtype, cls, "moving_mean"),
                                     requires_grad=False)
        self.moving_variance = Parameter(_make("ones", c, dtype, cls, "moving_variance"),
                                         requires_grad=False)
        self.gamma = Parameter(_make(gamma_init, c, dtype, cls, "gamma_init"),
                               requires_grad=affine)
        self.beta = Parameter(_make(beta_init, c, dtype, cls, "beta_init"),
                              requires_grad=affine)

    def construct(self, x):
        cls = type(self).__name__
        check_tensor(x, "x", cls)
        if x.ndim != self._ndim:
            raise ValueError(f"For '{cls}', the in_shape must have {self._ndim} dims, but got "
                             f"{x.ndim}.")
        if x.shape[1] != self.num_features:
            raise ValueError(f"For '{cls}', the channel (axis 1) of 'x' must be "
                             f"{self.num_features}, got shape {x.shape}")
        if not x.dtype.is_floating:
            raise TypeError(f"For '{cls}', 'x' must be a floating-point Tensor, got {x.dtype}")
        out, mean, var = instance_norm(x, self.eps)
        if self.training:
            self._update_moving(mean, var, x.size // (x.shape[0] * x.shape[1]))
        bshape = (1, self.num_features) + (1,) * (x.ndim - 2)
        out = F.mul(out, F.reshape(F.cast(self.gamma, x.dtype), bshape))
        return F.add(out, F.reshape(F.cast(self.beta, x.dtype), bshape))

    def _update_moving(self, mean, var, n):
        m = self.momentum
        unbiased = F.mul(var, n / max(n - 1, 1))
        for param, stat in ((self.moving_mean, mean), (self.moving_variance, unbiased)):
            batch = F.cast(F.stop_gradient(F.mean(stat, 0)), param.dtype)
            new = F.add(F.mul(param, 1.0 - m), F.mul(batch, m))
            param._assign(new._data)

    def extend_repr(self):
        return (f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"gamma={self.gamma}, beta={self.beta}, moving_mean={self.moving_mean}, "
                f"moving_variance={self.moving_variance}")


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) inputs."""

    _ndim = 3


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) inputs."""

    _ndim = 4


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of (N, C, D, H, W) inputs."""

    _ndim = 5
