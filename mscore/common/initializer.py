"""Parameter initializers (MindSpore's ``mindspore.common.initializer``).

An initializer fills a numpy array in place (``init(arr)``, which calls ``_initialize(arr)``,
the method a user's own subclass overrides, as in MindSpore). :func:`initializer` makes a
Tensor of a shape and dtype filled that way. As in MindSpore, each random fill takes its seed
from numpy's global random state, so ``np.random.seed`` or ``ms.set_seed`` (which seeds it)
make the weights repeat (``init.seed``, when set, gives the initializer its own generator);
the values then move to the active backend: the same seed gives the same weights on every
backend. The values themselves are not MindSpore's (its generator is native code).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from mscore import context
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor

__all__ = ["Initializer", "initializer", "TruncatedNormal", "Normal", "Uniform", "HeUniform",
           "HeNormal", "XavierUniform", "XavierNormal", "One", "Zero", "Constant", "Identity",
           "Sparse", "Dirac", "Orthogonal", "VarianceScaling"]

# std of a standard normal truncated to [-2, 2]: VarianceScaling divides by it so that the
# truncated values keep the variance asked for
_TRUNCATED_STD = 0.87962566103423978

_ALIASES = {}


def _register(*aliases):
    """Make a class reachable by its lower-case name and ``aliases`` in
    ``initializer('name', ...)``."""
    def add(cls):
        for name in (cls.__name__.lower(), *aliases):
            _ALIASES.setdefault(name, cls)
        return cls
    return add


def _assign(arr, values):
    """Write ``values`` into ``arr`` (any shape, 0-d included), cast to its dtype."""
    arr[...] = values
    return arr


_assignment = _assign   # MindSpore's name, imported by its own tests


def _fan_in_and_fan_out(shape):
    """``(fan_in, fan_out)`` of a weight shaped ``(out, in, *kernel)``."""
    if len(shape) < 2:
        raise ValueError(f"'fan_in' and 'fan_out' can not be computed for a tensor with fewer "
                         f"than 2 dimensions, but got shape {tuple(shape)}.")
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def _fan(shape, mode):
    if not isinstance(mode, str) or mode.lower() not in ("fan_in", "fan_out"):
        raise ValueError(f"'mode' must be 'fan_in' or 'fan_out', but got {mode!r}.")
    fan_in, fan_out = _fan_in_and_fan_out(shape)
    return fan_in if mode.lower() == "fan_in" else fan_out


_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "sigmoid")


def _gain(nonlinearity, negative_slope):
    """The gain PyTorch and MindSpore use for a nonlinearity (He initializers)."""
    if nonlinearity in _LINEAR:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if negative_slope is None:
            negative_slope = 0.01
        elif isinstance(negative_slope, bool) or not isinstance(negative_slope, (int, float)):
            raise ValueError(f"'negative_slope' must be an int or float when 'nonlinearity' is "
                             f"'leaky_relu', but got {type(negative_slope).__name__}: "
                             f"{negative_slope!r}.")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    raise ValueError(f"'nonlinearity' must be one of {list(_LINEAR)}, 'tanh', 'relu' or "
                     f"'leaky_relu', but got {nonlinearity!r}.")


def _check_sigma(sigma):
    if sigma < 0:
        raise ValueError(f"'sigma' must not be negative, but got {sigma}.")


def _truncated_normal(rng, mean, sigma, low, high, shape):
    """N(mean, sigma^2) restricted to [low, high] (absolute bounds, in either order)."""
    _check_sigma(sigma)
    low, high = min(low, high), max(low, high)
    if sigma == 0:
        return np.full(shape, min(max(mean, low), high), dtype=np.float64)
    alpha, beta = (low - mean) / sigma, (high - mean) / sigma
    mass = 0.5 * (math.erf(beta / math.sqrt(2)) - math.erf(alpha / math.sqrt(2)))
    if mass > 0.05:  # rejection sampling: a few rounds at most
        out = rng.normal(mean, sigma, size=shape)
        bad = (out < low) | (out > high)
        while bad.any():
            out[bad] = rng.normal(mean, sigma, size=int(bad.sum()))
            bad = (out < low) | (out > high)
        return out
    # far in a tail: invert the CDF, on the side where the probabilities are not rounded to 1
    from scipy.special import ndtr, ndtri
    flip = alpha > 0
    if flip:
        alpha, beta = -beta, -alpha
    z = ndtri(rng.uniform(ndtr(alpha), ndtr(beta), size=shape))
    z = np.clip(-z if flip else z, (low - mean) / sigma, (high - mean) / sigma)
    return mean + sigma * z


class Initializer:
    """Base class: a subclass fills ``arr`` (a numpy array) in place in ``_initialize(arr)``;
    ``init(arr)`` calls it. ``seed``: ``(seed, seed2)``; setting it (an int) makes this
    initializer draw from its own generator seeded with it."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._seed = None

    @property
    def seed(self):
        """``(seed, seed2)``: the seed set on this initializer plus 1 and 0, else the global
        seed of ``ms.set_seed`` (0 when unset) and 0."""
        if self._seed is None:
            return (context.get_seed() or 0), 0
        return self._seed + 1, 0

    @seed.setter
    def seed(self, value):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise TypeError(f"'seed' must be an int or None, but got {type(value).__name__}.")
        self._seed = value

    def _rng(self):
        seed = getattr(self, "_seed", None)
        return context.host_rng() if seed is None else np.random.default_rng(seed)

    def _initialize(self, *kwargs):
        raise NotImplementedError(f"{type(self).__name__} must override _initialize(arr).")

    def __call__(self, arr):
        """Fill numpy array ``arr`` in place."""
        return self._initialize(arr)


@_register("zeros")
class Zero(Initializer):
    """All zeros."""

    def _initialize(self, arr):
        arr.fill(0)


@_register("ones")
class One(Initializer):
    """All ones."""

    def _initialize(self, arr):
        arr.fill(1)


class Constant(Initializer):
    """All equal to ``value``."""

    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def _initialize(self, arr):
        try:
            arr.fill(self.value)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"For 'Constant', 'value' must be a number, but got "
                            f"{self.value!r}.") from None


@_register()
class Normal(Initializer):
    """N(mean, sigma^2); MindSpore's default sigma is 0.01. A negative sigma is
    ``ValueError``."""

    def __init__(self, sigma=0.01, mean=0.0):
        super().__init__(sigma=sigma, mean=mean)
        self.sigma, self.mean = sigma, mean

    def _initialize(self, arr):
        _check_sigma(self.sigma)
        _assign(arr, self._rng().normal(self.mean, self.sigma, size=arr.shape))


@_register()
class Uniform(Initializer):
    """U(-scale, scale); MindSpore's default scale is 0.07."""

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _initialize(self, arr):
        _assign(arr, self._rng().uniform(-self.scale, self.scale, size=arr.shape))


@_register()
class TruncatedNormal(Initializer):
    """N(mean, sigma^2) restricted to the interval [a, b] (absolute bounds, as MindSpore 2.x:
    the default [-2, 2] does not scale with sigma)."""

    def __init__(self, sigma=0.01, mean=0.0, a=-2.0, b=2.0):
        super().__init__(sigma=sigma, mean=mean, a=a, b=b)
        self.sigma, self.mean, self.a, self.b = sigma, mean, a, b

    def _initialize(self, arr):
        _assign(arr, _truncated_normal(self._rng(), self.mean, self.sigma, self.a, self.b,
                                       arr.shape))


@_register("xavier_uniform")
class XavierUniform(Initializer):
    """Glorot uniform: U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out))."""

    def __init__(self, gain=1):
        super().__init__(gain=gain)
        self.gain = gain

    def _initialize(self, arr):
        fan_in, fan_out = _fan_in_and_fan_out(arr.shape)
        bound = self.gain * math.sqrt(6.0 / (fan_in + fan_out))
        _assign(arr, self._rng().uniform(-bound, bound, size=arr.shape))


@_register("xavier_normal")
class XavierNormal(Initializer):
    """Glorot normal: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""

    def __init__(self, gain=1):
        super().__init__(gain=gain)
        self.gain = gain

    def _initialize(self, arr):
        fan_in, fan_out = _fan_in_and_fan_out(arr.shape)
        std = self.gain * math.sqrt(2.0 / (fan_in + fan_out))
        _assign(arr, self._rng().normal(0.0, std, size=arr.shape))


class _He(Initializer):
    def __init__(self, negative_slope=0, mode="fan_in", nonlinearity="leaky_relu"):
        super().__init__(negative_slope=negative_slope, mode=mode, nonlinearity=nonlinearity)
        self.negative_slope, self.mode, self.nonlinearity = negative_slope, mode, nonlinearity

    def _std(self, shape):
        fan = _fan(shape, self.mode)
        return _gain(self.nonlinearity, self.negative_slope) / math.sqrt(fan)


@_register("he_uniform")
class HeUniform(_He):
    """Kaiming uniform: U(-b, b), b = gain * sqrt(3 / fan) (fan of ``mode``, gain of
    ``nonlinearity`` and ``negative_slope``)."""

    def _initialize(self, arr):
        bound = math.sqrt(3.0) * self._std(arr.shape)
        _assign(arr, self._rng().uniform(-bound, bound, size=arr.shape))


@_register("he_normal")
class HeNormal(_He):
    """Kaiming normal: N(0, std^2), std = gain / sqrt(fan)."""

    def _initialize(self, arr):
        _assign(arr, self._rng().normal(0.0, self._std(arr.shape), size=arr.shape))


@_register()
class Identity(Initializer):
    """The identity matrix (ones on the main diagonal of a 2-d tensor, any aspect ratio)."""

    def _initialize(self, arr):
        if arr.ndim != 2:
            raise ValueError(f"For Identity initializer, the tensor must be 2-d, but got "
                             f"{arr.ndim} dimensions.")
        _assign(arr, np.eye(arr.shape[0], arr.shape[1]))


@_register()
class Sparse(Initializer):
    """A 2-d tensor with ``ceil(sparsity * rows)`` zeros in each column (at random rows) and
    N(0, sigma^2) elsewhere; ``sparsity`` in [0, 1]."""

    def __init__(self, sparsity, sigma=0.01):
        super().__init__()
        if isinstance(sparsity, bool) or not isinstance(sparsity, numbers.Real):
            raise TypeError(f"For Sparse initializer, 'sparsity' must be a float, but got "
                            f"{type(sparsity).__name__}.")
        if not 0 <= sparsity <= 1:
            raise ValueError(f"For Sparse initializer, 'sparsity' must be in [0, 1], but got "
                             f"{sparsity}.")
        self.sparsity, self.sigma = sparsity, sigma

    def _initialize(self, arr):
        if arr.ndim != 2:
            raise ValueError(f"For Sparse initializer, the tensor must be 2-d, but got "
                             f"{arr.ndim} dimensions.")
        _check_sigma(self.sigma)
        rows, cols = arr.shape
        zeros = int(math.ceil(self.sparsity * rows))
        rng = self._rng()
        data = rng.normal(0.0, self.sigma, size=arr.shape)
        for col in range(cols):
            data[rng.permutation(rows)[:zeros], col] = 0.0
        _assign(arr, data)


@_register()
class Dirac(Initializer):
    """A convolution kernel (3-, 4- or 5-d) that passes its input through: in each of
    ``groups`` groups, output channel i takes input channel i at the kernel's centre."""

    def __init__(self, groups=1):
        super().__init__()
        if isinstance(groups, bool) or not isinstance(groups, int):
            raise TypeError(f"For Dirac initializer, 'groups' must be an int, but got "
                            f"{type(groups).__name__}.")
        if groups < 1:
            raise ValueError(f"For Dirac initializer, 'groups' must be at least 1, but got "
                             f"{groups}.")
        self.groups = groups

    def _initialize(self, arr):
        if arr.ndim not in (3, 4, 5):
            raise ValueError(f"For Dirac initializer, the tensor must be 3-, 4- or 5-d, but "
                             f"got {arr.ndim} dimensions.")
        out_channels, in_channels = arr.shape[:2]
        if out_channels % self.groups:
            raise ValueError(f"For Dirac initializer, the first dimension ({out_channels}) "
                             f"must be divisible by 'groups' ({self.groups}).")
        per_group = out_channels // self.groups
        centre = tuple(size // 2 for size in arr.shape[2:])
        data = np.zeros(arr.shape)
        for group in range(self.groups):
            for channel in range(min(per_group, in_channels)):
                data[(group * per_group + channel, channel) + centre] = 1
        _assign(arr, data)


@_register()
class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix times ``gain``: the tensor seen as rows = shape[0] by
    columns = the rest has orthonormal rows (rows <= columns) or columns."""

    def __init__(self, gain=1.0):
        super().__init__(gain=gain)
        self.gain = gain

    def _initialize(self, arr):
        if arr.ndim < 2:
            raise ValueError(f"For Orthogonal initializer, the tensor must have at least 2 "
                             f"dimensions, but got {arr.ndim}.")
        rows = arr.shape[0]
        cols = arr.size // rows
        data = self._rng().normal(0.0, 1.0, size=(rows, cols))
        if rows < cols:
            data = data.T
        q, r = np.linalg.qr(data)
        q *= np.sign(np.diag(r))  # makes the result uniformly distributed (Haar)
        if rows < cols:
            q = q.T
        _assign(arr, (q * self.gain).reshape(arr.shape))


@_register()
class VarianceScaling(Initializer):
    """Values of variance ``scale / n``, n the fan of ``mode`` (``'fan_in'``, ``'fan_out'``,
    ``'fan_avg'``), drawn from ``distribution``: ``'truncated_normal'`` (cut at two standard
    deviations, rescaled to keep the variance), ``'untruncated_normal'`` or ``'uniform'``."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal"):
        super().__init__(scale=scale, mode=mode, distribution=distribution)
        if scale <= 0.0:
            raise ValueError(f"For VarianceScaling initializer, 'scale' must be greater than 0, "
                             f"but got {scale}.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"For VarianceScaling initializer, 'mode' must be 'fan_in', "
                             f"'fan_out' or 'fan_avg', but got {mode!r}.")
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError(f"For VarianceScaling initializer, 'distribution' must be "
                             f"'uniform', 'truncated_normal' or 'untruncated_normal', but got "
                             f"{distribution!r}.")
        self.scale, self.mode, self.distribution = scale, mode, distribution

    def _initialize(self, arr):
        fan_in, fan_out = _fan_in_and_fan_out(arr.shape)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}
        variance = self.scale / max(1.0, fan[self.mode])
        rng = self._rng()
        if self.distribution == "truncated_normal":
            std = math.sqrt(variance) / _TRUNCATED_STD
            data = _truncated_normal(rng, 0.0, std, -2 * std, 2 * std, arr.shape)
        elif self.distribution == "untruncated_normal":
            data = rng.normal(0.0, math.sqrt(variance), size=arr.shape)
        else:
            limit = math.sqrt(3.0 * variance)
            data = rng.uniform(-limit, limit, size=arr.shape)
        _assign(arr, data)


def _check_shape(shape):
    """``shape`` as a tuple of positive ints (a number is a 1-d shape)."""
    if isinstance(shape, numbers.Number):
        shape = (shape,)
    shape = tuple(shape)
    if not all(isinstance(s, (int, np.integer)) and s > 0 for s in shape):
        raise ValueError(f"For 'initializer', 'shape' must hold positive ints, but got "
                         f"{shape}.")
    return tuple(int(s) for s in shape)


def initializer(init, shape=None, dtype=mdt.float32):
    """A Tensor of ``shape`` and ``dtype`` filled by ``init``: an :class:`Initializer`, the
    name of one (``'normal'``, ``'zeros'``, ``'xavier_uniform'``, ...) or a number (a
    constant). A Tensor ``init`` is returned as it is (its shape must equal ``shape`` when
    given)."""
    if not isinstance(init, (Tensor, numbers.Number, str, Initializer)):
        raise TypeError(f"For 'initializer', 'init' must be a Tensor, number, str or "
                        f"Initializer, but got {type(init).__name__}.")
    if isinstance(init, Tensor):
        if shape is not None and tuple(init.shape) != _check_shape(shape):
            raise ValueError(f"For 'initializer', the shape of 'init' {tuple(init.shape)} "
                             f"differs from 'shape' {tuple(shape)}.")
        return init
    if shape is None:
        raise ValueError("For 'initializer', 'shape' is needed unless 'init' is a Tensor.")
    shape = _check_shape(shape)
    if isinstance(init, str):
        cls = _ALIASES.get(init.lower())
        if cls is None:
            raise ValueError(f"For 'initializer', there is no initializer named {init!r}; "
                             f"known: {sorted(_ALIASES)}.")
        init = cls()
    elif isinstance(init, numbers.Number):
        init = Constant(init)
    dtype = mdt.as_dtype(dtype)
    arr = np.zeros(shape, dtype=dtype.np_dtype)
    init(arr)
    return Tensor(arr, dtype=dtype)


Tensor._initializer = staticmethod(initializer)
