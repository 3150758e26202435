"""Group and instance normalisation: ``nn.GroupNorm`` and ``nn.InstanceNorm1d/2d/3d``."""
from __future__ import annotations

import numbers

from mscore.common import dtype as mdt
from mscore.common.initializer import Initializer
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.nn.layer._checks import check_bool, check_dtype, check_positive_int, check_tensor
from mscore.nn.layer.basic import _make
from mscore.ops import functional as F
from mscore import ops
from mscore.ops.normalization import instance_norm


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
