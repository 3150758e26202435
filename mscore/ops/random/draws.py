"""Random ops and the global random stream of the active backend: ``dropout`` (and its channel
variants), ``uniform``, ``standard_normal``, ``normal``, ``rand``/``randn``, with their
Primitives, and the draws built on them (``multinomial``, ``cauchy``, ``exponential``).

The stream's state is a non-trainable Parameter, so every draw is an assignment a
:class:`~mscore.common.parameter.MutationScope` sees: a compiled train step threads the
state through as a value instead of freezing one dropout mask into the program.
"""
from __future__ import annotations

import math

import numpy as np

from mscore import _state, dispatch, ops
from mscore._state import thread as _thread
from mscore.common import dtype as mdt
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.ops._args import _check_tensor, _float_input, _host, _shape_arg
from mscore.ops.array.creation import zeros_like
from mscore.ops.control import cast
from mscore.ops.math.elementwise import add, floor, greater_equal, mul, not_equal, sub, where
from mscore.ops.primitive_base import Primitive, check_float, check_int
from mscore.ops.random.generator import Generator

_wrap = Tensor._wrap


def dropout(input, p=0.5, training=True, seed=None):
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p)."""
    x = _float_input(input)
    if not isinstance(p, (int, float)) or not 0 <= p <= 1:
        raise ValueError(f"p: expected a probability in [0, 1], got {p!r}")
    if not training or p == 0:
        return x
    if p == 1:
        return zeros_like(x)
    u = draw("uniform", x.shape, x.dtype if x.dtype is not mdt.bfloat16 else mdt.float32, seed)
    keep = call("greater_equal", u, call("full", (), p, dispatch.dtype(u)))
    scaled = mul(x, 1.0 / (1.0 - p))
    return where(_wrap(keep), scaled, 0.0)


def uniform(shape, minval=0.0, maxval=1.0, seed=None, dtype=mdt.float32, *, generator=None):
    """Uniform values in [minval, maxval) from the global stream (or ``seed``), as in
    MindSpore: Tensor bounds broadcast with ``shape`` (the result has the broadcast shape),
    and an integer ``dtype`` gives integers in [minval, maxval)."""
    dtype = mdt.as_dtype(dtype, "dtype")
    low = minval if isinstance(minval, Tensor) else float(minval)
    high = maxval if isinstance(maxval, Tensor) else float(maxval)
    out_shape = np.broadcast_shapes(_shape_arg(shape, "shape"),
                                    *(b.shape for b in (low, high) if isinstance(b, Tensor)))
    work = dtype if dtype.is_floating else mdt.float32
    low, high = (cast(b, work) if isinstance(b, Tensor) else b for b in (low, high))
    span = high - low if isinstance(high, float) and isinstance(low, float) else sub(high, low)
    u = _wrap(draw("uniform", out_shape, work, seed, generator))
    if dtype.is_floating:
        return add(mul(u, span), low)
    return cast(add(floor(mul(u, span)), low), dtype)


def standard_normal(shape, seed=None, dtype=mdt.float32, *, generator=None):
    """Standard normal values from the global stream (or ``seed``, or ``generator``)."""
    return _wrap(draw("normal", _shape_arg(shape, "shape"), mdt.as_dtype(dtype), seed,
                      generator))


def rand(*size, dtype=None, seed=None):
    """Uniform [0, 1) values of ``size``."""
    size = size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    return uniform(size, 0.0, 1.0, seed, dtype or mdt.float32)


def randn(*size, dtype=None, seed=None):
    """Standard normal values of ``size``."""
    size = size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    return standard_normal(size, seed, dtype or mdt.float32)


def normal(shape, mean, stddev, seed=None):
    """Normal values of ``shape`` with ``mean`` and ``stddev`` (numbers or Tensors that
    broadcast to ``shape``), from the global stream (or ``seed``)."""
    z = standard_normal(shape, seed, mdt.float32)
    return add(mul(z, stddev), mean)


def _p(p, cls):
    if not isinstance(p, float):
        raise TypeError(f"For '{cls}', the type of 'p' must be float, got {type(p).__name__}")
    if not 0 <= p <= 1:
        raise ValueError(f"For '{cls}', the 'p' must be a number in range [0, 1], got {p}")
    return p


def channel_dropout(x, p, training, ndim_ok, cls):
    """Zero whole channels (axis 1, or axis 0 of an unbatched input) with probability
    ``p``, scaling the rest by 1 / (1 - p)."""
    x = _check_tensor(x, "input")
    if x.ndim not in ndim_ok:
        raise ValueError(f"For '{cls}', the input must be "
                         f"{' or '.join(f'{n}-d' for n in ndim_ok)}, got shape {x.shape}")
    if not training or p == 0:
        return x
    if p == 1:
        return zeros_like(x)
    unbatched = x.ndim == ndim_ok[0] and len(ndim_ok) > 1
    lead = 1 if unbatched else 2
    mask_shape = x.shape[:lead] + (1,) * (x.ndim - lead)
    u = uniform(mask_shape, 0.0, 1.0, dtype=mdt.float32)
    keep = greater_equal(u, p)
    return where(keep, mul(x, 1.0 / (1.0 - p)), 0.0)


def dropout1d(input, p=0.5, training=True):
    """Channel dropout of (N, C, L) or (C, L)."""
    _p(p, "dropout1d")
    return channel_dropout(input, p, training, (2, 3), "dropout1d")


def dropout2d(input, p=0.5, training=True):
    """Channel dropout of (N, C, H, W)."""
    _p(p, "dropout2d")
    return channel_dropout(input, p, training, (4,), "dropout2d")


def dropout3d(input, p=0.5, training=True):
    """Channel dropout of (N, C, D, H, W)."""
    _p(p, "dropout3d")
    return channel_dropout(input, p, training, (5,), "dropout3d")


class _RandomPrimitive(Primitive):
    def __init__(self, seed=0, seed2=0):
        super().__init__()
        prim = type(self).__name__
        for name, v in (("seed", seed), ("seed2", seed2)):
            check_int(v, name, prim)
            if v < 0:
                raise ValueError(f"{prim}: {name} must be non-negative, got {v}")
        self.seed, self.seed2 = seed, seed2
        # A non-zero seed pair makes the stream of this primitive reproducible.
        self._seed = None if seed == 0 and seed2 == 0 else seed * 1000003 + seed2


class UniformReal(_RandomPrimitive):
    """``UniformReal(seed=0, seed2=0)(shape)``: float32 values in [0, 1)."""

    def compute(self, shape):
        return uniform(shape, 0.0, 1.0, self._seed, mdt.float32)


class StandardNormal(_RandomPrimitive):
    """``StandardNormal(seed=0, seed2=0)(shape)``: float32 standard normal values."""

    def compute(self, shape):
        return standard_normal(shape, self._seed, mdt.float32)


class Dropout(Primitive):
    """``Dropout(keep_prob=0.5)(x)`` returns ``(output, mask)``."""

    def __init__(self, keep_prob=0.5, Seed0=0, Seed1=0):
        super().__init__()
        check_float(keep_prob, "keep_prob", "Dropout")
        if not 0 < keep_prob <= 1:
            # MindSpore's kernel check raises RuntimeError here.
            raise RuntimeError(f"Dropout: keep_prob must be in (0, 1], got {keep_prob!r}")
        self.keep_prob = keep_prob
        self.seed0, self.seed1 = Seed0, Seed1

    def compute(self, x):
        out = dropout(x, 1.0 - self.keep_prob)
        return out, not_equal(out, 0.0)


_holder = _state.process.random_stream   # {"param": Parameter, "backend": Backend}


def reset_global_state(seed):
    """Start the active backend's stream afresh from ``seed``."""
    state = dispatch.call("rng_state", int(seed))
    _holder["param"] = Parameter(state, name="global_rng_state", requires_grad=False)
    _holder["backend"] = dispatch.backend()


def global_state_parameter():
    """The Parameter holding the active backend's random state (created on first use); while
    this thread traces a compiled program, that program's private stand-in."""
    traced = _thread.traced_random_stream
    if traced is not None:
        return traced
    if _holder["param"] is None or _holder["backend"] is not dispatch.backend():
        seed = _state.process.seeds.global_seed
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (2 ** 63))
        reset_global_state(seed)
    return _holder["param"]


def traced_stand_in(param):
    """A private Parameter named like the global stream ``param``, for a compiled program to
    thread through its trace instead of ``param`` (see :data:`mscore._state.thread`)."""
    return Parameter(param, name=param.name, requires_grad=False)


def draw(kind, shape, dtype, seed=None, generator=None):
    """Native array of ``shape`` from the stream: ``kind`` is "uniform" or "normal". With
    ``seed`` the draw comes from a fresh stream for that seed and leaves the global one; with
    ``generator`` (an :class:`mscore.Generator`) it comes from that generator's stream."""
    op = "random_uniform" if kind == "uniform" else "random_normal"
    if seed is not None:
        values, _ = dispatch.call(op, dispatch.call("rng_state", int(seed)), tuple(shape), dtype)
        return values
    if generator is None:
        param = global_state_parameter()
    elif isinstance(generator, Generator):
        param = generator.state_parameter()
    else:
        raise TypeError(f"generator: expected an mscore.Generator, got "
                        f"{type(generator).__name__}")
    values, new_state = dispatch.call(op, param._data, tuple(shape), dtype)
    param._assign(new_state)
    return values


def park_global_state():
    """Move the global stream's state to the host and forget the device copy (an engine that
    restarts its runtime, such as ``jax.distributed``, may not keep device arrays alive);
    returns what :func:`restore_global_state` needs, or None when no stream exists yet."""
    param = _holder["param"]
    if param is None:
        return None
    host = param.asnumpy()
    _holder["param"] = None
    _holder["backend"] = None
    return host


def restore_global_state(host):
    """Rebuild the global stream from :func:`park_global_state`'s host copy."""
    if host is None:
        return
    _holder["param"] = Parameter(Tensor(host), name="global_rng_state", requires_grad=False)
    _holder["backend"] = dispatch.backend()


def cauchy(shape, median, sigma, dtype):
    """Cauchy draws: ``median + sigma * tan(pi * (u - 1/2))`` of uniform draws ``u``."""
    u = ops.uniform(tuple(shape), 0.0, 1.0, dtype=dtype)
    angle = ops.mul(ops.sub(u, 0.5), math.pi)
    return ops.add(ops.mul(ops.div(ops.sin(angle), ops.cos(angle)), sigma), median)


def exponential(shape, lambd, dtype):
    """Exponential draws with rate ``lambd``: ``-log(1 - u) / lambd``."""
    u = ops.uniform(tuple(shape), 0.0, 1.0, dtype=dtype)
    return ops.div(ops.neg(ops.log(ops.sub(1.0, u))), float(lambd))


def multinomial(input, num_samples, replacement=True, seed=None):
    """``num_samples`` category indices per row drawn with probabilities ``input``
    (int64), from the uniform stream."""
    probs = _host(input).astype(np.float64)
    rows = probs.reshape(-1, probs.shape[-1])
    n = int(num_samples)
    if not replacement and n > rows.shape[1]:
        raise ValueError("For 'multinomial', the 'num_samples' must be less than the last "
                         "dimension of input without 'replacement', but got 'num_samples': "
                         f"{n} and 'replacement': {replacement}")
    out = []
    for row in rows:
        p = row / row.sum()
        if replacement:
            draws = ops.rand((n,)).asnumpy()
            out.append(np.minimum(np.searchsorted(np.cumsum(p), draws, side="right"),
                                  len(p) - 1))
        else:  # exponential race: the n smallest -log(u) / p, without repeats
            keys = -np.log(ops.rand((len(p),)).asnumpy() + 1e-30) / np.maximum(p, 1e-300)
            out.append(np.argsort(keys, kind="stable")[:n])
    return Tensor(np.stack(out).astype(np.int64).reshape(probs.shape[:-1] + (n,)))
