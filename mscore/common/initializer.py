"""Parameter initializers (MindSpore's ``mindspore.common.initializer``).

Values are drawn on the host from the numpy generator that ``ms.set_seed`` seeds, then
moved to the active backend: the same seed gives the same weights on every backend.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from mscore import context
from mscore.common import dtype as mdt


def _fans(shape):
    if len(shape) < 2:
        raise ValueError(f"initializer: fan_in/fan_out need at least 2 dimensions, got shape "
                         f"{tuple(shape)}")
    receptive = math.prod(shape[2:]) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def _gain(nonlinearity, param=None):
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "sigmoid"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    raise ValueError(f"nonlinearity: unsupported {nonlinearity!r}")


class Initializer:
    """Base class: ``sample(shape, rng) -> float64 numpy array``."""

    def sample(self, shape, rng):
        raise NotImplementedError

    def __call__(self, arr):
        """Fill numpy array ``arr`` in place (MindSpore's calling convention)."""
        arr[...] = self.sample(arr.shape, context.host_rng())


class Zero(Initializer):
    """All zeros."""

    def sample(self, shape, rng):
        return np.zeros(shape)


class One(Initializer):
    """All ones."""

    def sample(self, shape, rng):
        return np.ones(shape)


class Constant(Initializer):
    """All equal to ``value``."""

    def __init__(self, value):
        if not isinstance(value, numbers.Number):
            raise TypeError(f"value: expected a number, got {type(value).__name__}")
        self.value = value

    def sample(self, shape, rng):
        return np.full(shape, self.value, dtype=np.float64)


class Normal(Initializer):
    """N(mean, sigma**2); MindSpore's default sigma is 0.01."""

    def __init__(self, sigma=0.01, mean=0.0):
        self.sigma, self.mean = sigma, mean

    def sample(self, shape, rng):
        return rng.normal(self.mean, self.sigma, size=shape)


class Uniform(Initializer):
    """U(-scale, scale); MindSpore's default scale is 0.07."""

    def __init__(self, scale=0.07):
        self.scale = scale

    def sample(self, shape, rng):
        return rng.uniform(-self.scale, self.scale, size=shape)


class TruncatedNormal(Initializer):
    """N(mean, sigma**2) redrawn outside [a, b] (defaults: two sigma around the mean)."""

    def __init__(self, sigma=0.01, mean=0.0, a=-2.0, b=2.0):
        self.sigma, self.mean, self.a, self.b = sigma, mean, a, b

    def sample(self, shape, rng):
        lo, hi = self.mean + self.a * self.sigma, self.mean + self.b * self.sigma
        out = rng.normal(self.mean, self.sigma, size=shape)
        bad = (out < lo) | (out > hi)
        while bad.any():
            out[bad] = rng.normal(self.mean, self.sigma, size=int(bad.sum()))
            bad = (out < lo) | (out > hi)
        return out


class XavierUniform(Initializer):
    """U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out))."""

    def __init__(self, gain=1):
        self.gain = gain

    def sample(self, shape, rng):
        fan_in, fan_out = _fans(shape)
        bound = self.gain * math.sqrt(6.0 / (fan_in + fan_out))
        return rng.uniform(-bound, bound, size=shape)


class XavierNormal(Initializer):
    """N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out))."""

    def __init__(self, gain=1):
        self.gain = gain

    def sample(self, shape, rng):
        fan_in, fan_out = _fans(shape)
        return rng.normal(0.0, self.gain * math.sqrt(2.0 / (fan_in + fan_out)), size=shape)


class HeUniform(Initializer):
    """Kaiming uniform: U(-b, b), b = gain * sqrt(3 / fan)."""

    def __init__(self, negative_slope=0, mode="fan_in", nonlinearity="leaky_relu"):
        if mode not in ("fan_in", "fan_out"):
            raise ValueError(f"mode: expected 'fan_in' or 'fan_out', got {mode!r}")
        self.negative_slope, self.mode, self.nonlinearity = negative_slope, mode, nonlinearity

    def sample(self, shape, rng):
        fan_in, fan_out = _fans(shape)
        fan = fan_in if self.mode == "fan_in" else fan_out
        bound = _gain(self.nonlinearity, self.negative_slope) * math.sqrt(3.0 / fan)
        return rng.uniform(-bound, bound, size=shape)


class HeNormal(Initializer):
    """Kaiming normal: N(0, std**2), std = gain / sqrt(fan)."""

    def __init__(self, negative_slope=0, mode="fan_in", nonlinearity="leaky_relu"):
        if mode not in ("fan_in", "fan_out"):
            raise ValueError(f"mode: expected 'fan_in' or 'fan_out', got {mode!r}")
        self.negative_slope, self.mode, self.nonlinearity = negative_slope, mode, nonlinearity

    def sample(self, shape, rng):
        fan_in, fan_out = _fans(shape)
        fan = fan_in if self.mode == "fan_in" else fan_out
        return rng.normal(0.0, _gain(self.nonlinearity, self.negative_slope) / math.sqrt(fan),
                          size=shape)


_ALIASES = {
    "zeros": Zero, "zero": Zero, "ones": One, "one": One, "normal": Normal,
    "uniform": Uniform, "truncatednormal": TruncatedNormal, "xavieruniform": XavierUniform,
    "xavier_uniform": XavierUniform, "xaviernormal": XavierNormal,
    "xavier_normal": XavierNormal, "heuniform": HeUniform, "he_uniform": HeUniform,
    "henormal": HeNormal, "he_normal": HeNormal,
}


def initializer(init, shape=None, dtype=mdt.float32):
    """A Tensor of ``shape`` and ``dtype`` filled by ``init``: an Initializer, a name
    ("normal", "zeros", "XavierUniform", ...), a number, a numpy array or a Tensor."""
    from mscore.common.tensor import Tensor
    dtype = mdt.as_dtype(dtype)
    if isinstance(init, Tensor):
        if shape is not None and tuple(init.shape) != tuple(_shape(shape)):
            raise ValueError(f"init: tensor shape {init.shape} differs from shape {shape}")
        return Tensor(init, dtype=dtype)
    if isinstance(init, np.ndarray):
        return Tensor(init.astype(dtype.np_dtype))
    if shape is None:
        raise ValueError("shape: required unless init is a Tensor or numpy array")
    shape = _shape(shape)
    if isinstance(init, bool):
        raise TypeError("init: expected an Initializer, name, number or Tensor, got bool")
    if isinstance(init, numbers.Number):
        init = Constant(init)
    elif isinstance(init, str):
        try:
            init = _ALIASES[init.lower()]()
        except KeyError:
            raise ValueError(f"init: unknown initializer {init!r}; expected one of "
                             f"{sorted(set(_ALIASES))}") from None
    elif isinstance(init, type) and issubclass(init, Initializer):
        init = init()
    if not isinstance(init, Initializer):
        raise TypeError(f"init: expected an Initializer, name, number or Tensor, got "
                        f"{type(init).__name__}")
    values = np.asarray(init.sample(shape, context.host_rng()), dtype=np.float64)
    return Tensor(values.astype(dtype.np_dtype))


def _shape(shape):
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(shape)
    if not all(isinstance(s, (int, np.integer)) and s >= 0 for s in shape):
        raise ValueError(f"shape: expected non-negative ints, got {shape}")
    return tuple(int(s) for s in shape)
