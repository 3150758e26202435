"""MindSpore's ``mindspore.mint``: the PyTorch-style functions (``mint.add``, ``mint.cat``,
``mint.nn.Linear``, ``mint.nn.functional.cross_entropy``, ``mint.optim.AdamW`` ...).

Each function is the Tensor method of the same name (:mod:`mscore.ops.tensor_api`, itself a
binding to the functional op), so ``mint.f(x, ...)``, ``x.f(...)`` and ``ops.f(x, ...)``
share one implementation. Names left out are listed with their reasons in
``docs/api-coverage.md``.
"""
from __future__ import annotations

import inspect

import numpy as np

from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore import ops

__all__ = []

# Functions that are the Tensor method of the same name, with the tensor first.
_METHOD_FUNCTIONS = """
abs acos acosh add addbmm addcdiv arccos arccosh arcsin arcsinh arctan arctan2 arctanh asin
asinh atan atan2 atanh addmm addmv all allclose amax amin any argmax argmin argsort baddbmm
bincount bmm broadcast_to ceil chunk exp2 gcd clamp clone cos cosh count_nonzero cross cummax cummin
cumprod cumsum diag diff div divide dot eq erf erfc exp expm1 flatten flip float_power floor
floor_divide fmod frac gather greater greater_equal gt index_add index_select isclose
isfinite isinf isnan isneginf kthvalue le lerp less less_equal log log10 log1p log2
logaddexp logaddexp2 logical_and logical_not logical_or logical_xor logsumexp lt
masked_select matmul max maximum mean median min minimum mm mul nan_to_num nansum narrow ne
neg negative nonzero norm not_equal outer permute pow prod ravel reciprocal remainder
repeat_interleave reshape roll round rsqrt scatter scatter_add searchsorted sigmoid sign sin
sinc sinh softmax sort split sqrt square squeeze std sub sum swapaxes t take tan tanh tile
topk trace transpose tril triu unbind unique_consecutive unsqueeze var xlogy
bitwise_not item unique triangular_solve
"""


# MindSpore's name of the tensor argument where it is not ``input``.
_FIRST_PARAMETER = {"arcsin": "x", "isnan": "tensor", "split": "tensor",
                    "searchsorted": "sorted_sequence", "triangular_solve": "b"}


def _method_function(name):
    method = getattr(Tensor, name)
    first = _FIRST_PARAMETER.get(name, "input")

    def fn(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise TypeError(f"For '{name}', 'input' must be a Tensor, got "
                            f"{type(input).__name__}")
        return method(input, *args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = __name__
    fn.__doc__ = f"``{first}.{name}(...)`` (:meth:`mscore.Tensor.{name}`)."
    P = inspect.Parameter
    fn.__signature__ = inspect.Signature([P(first, P.POSITIONAL_OR_KEYWORD),
                                          P("args", P.VAR_POSITIONAL),
                                          P("kwargs", P.VAR_KEYWORD)])
    return fn


for _name in _METHOD_FUNCTIONS.split():
    globals()[_name] = _method_function(_name)
    __all__.append(_name)


def _export(fn):
    __all__.append(fn.__name__)
    return fn


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return tuple(int(s) for s in size)


@_export
def where(condition, input=None, other=None):
    """``input`` where ``condition`` else ``other``; with ``condition`` only: the indices
    of its non-zero entries per axis."""
    if input is None and other is None:
        return ops.nonzero(condition, as_tuple=True)
    return ops.where(condition, input, other)


@_export
def cat(tensors, dim=0):
    """Joined along ``dim``."""
    return ops.concat(tensors, dim)


@_export
def concat(tensors, dim=0):
    """Joined along ``dim``."""
    return ops.concat(tensors, dim)


@_export
def stack(tensors, dim=0):
    """Joined along a new axis ``dim``."""
    return ops.stack(tensors, dim)


@_export
def hstack(tensors):
    """Joined along axis 1 (axis 0 for 1-d tensors): :func:`mscore.ops.hstack`."""
    return ops.hstack(tensors)


@_export
def dstack(tensors):
    """Joined along axis 2 (inputs raised to 3 dimensions)."""
    up = [ops.reshape(t, (1, -1, 1)) if t.ndim < 2 else
          ops.expand_dims(t, 2) if t.ndim == 2 else t for t in tensors]
    return ops.concat(up, 2)


@_export
def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 1-d tensors (``indexing`` 'ij', the default, or 'xy')."""
    indexing = indexing or "ij"
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    shape = tuple(t.shape[0] for t in tensors)
    if indexing == "xy" and len(shape) >= 2:
        shape = (shape[1], shape[0]) + shape[2:]
    out = []
    for i, t in enumerate(tensors):
        axis = (1 - i if i < 2 else i) if indexing == "xy" and len(shape) >= 2 else i
        view = [1] * len(shape)
        view[axis] = t.shape[0]
        out.append(ops.broadcast_to(ops.reshape(t, tuple(view)), shape))
    return tuple(out)


@_export
def zeros(size, *, dtype=None):
    """Zeros of ``size`` (float32 unless ``dtype``)."""
    return ops.zeros(_size((size,)), dtype or mdt.float32)


@_export
def ones(size, *, dtype=None):
    """Ones of ``size`` (float32 unless ``dtype``)."""
    return ops.ones(_size((size,)), dtype or mdt.float32)


@_export
def empty(*size, dtype=None, device=None):
    """A tensor of ``size`` (zeros: values are always initialised)."""
    return ops.zeros(_size(size), dtype or mdt.float32)


@_export
def full(size, fill_value, *, dtype=None):
    """``fill_value`` everywhere in ``size``."""
    return ops.full(_size((size,)), fill_value, dtype=dtype)


@_export
def zeros_like(input, *, dtype=None):
    """Zeros shaped like ``input``."""
    return ops.zeros_like(input, dtype=dtype)


@_export
def ones_like(input, *, dtype=None):
    """Ones shaped like ``input``."""
    return ops.ones_like(input, dtype=dtype)


@_export
def empty_like(input, *, dtype=None, device=None):
    """Zeros shaped like ``input`` (values are always initialised)."""
    return ops.zeros_like(input, dtype=dtype)


@_export
def full_like(input, fill_value, *, dtype=None):
    """``fill_value`` shaped like ``input``."""
    return ops.full_like(input, fill_value, dtype=dtype)


@_export
def arange(start=0, end=None, step=1, *, dtype=None):
    """Evenly spaced values in ``[start, end)`` (int64 for ints, float32 for floats)."""
    return ops.arange(start, end, step, dtype=dtype)


@_export
def eye(n, m=None, dtype=None):
    """Ones on the diagonal of an ``n`` x ``m`` matrix."""
    return ops.eye(n, m, dtype or mdt.float32)


@_export
def rand(*size, generator=None, dtype=None, device=None):
    """Uniform draws in ``[0, 1)``."""
    return ops.rand(_size(size), dtype=dtype)


@_export
def randn(*size, generator=None, dtype=None, device=None):
    """Standard normal draws."""
    return ops.randn(_size(size), dtype=dtype)


@_export
def rand_like(input, *, dtype=None, device=None):
    """Uniform draws in ``[0, 1)`` shaped like ``input``."""
    return ops.rand(input.shape, dtype=dtype or input.dtype)


@_export
def randn_like(input, *, dtype=None, device=None):
    """Standard normal draws shaped like ``input``."""
    return ops.randn(input.shape, dtype=dtype or input.dtype)


@_export
def randint(*args, generator=None, dtype=None, device=None, size=None):
    """``randint(high, size)`` or ``randint(low, high, size)``: integers drawn from
    ``[low, high)`` (int64 unless ``dtype``)."""
    if size is None:
        *bounds, size = args
    else:
        bounds = list(args)
    low, high = (0, bounds[0]) if len(bounds) == 1 else bounds
    draws = ops.uniform(_size((size,)), float(low), float(high))
    return ops.cast(ops.floor(draws), dtype or mdt.int64)


@_export
def randint_like(*args, dtype=None, device=None):
    """``randint_like(input, high)`` or ``randint_like(input, low, high)``: integers drawn
    from ``[low, high)`` shaped like ``input``."""
    input, *bounds = args
    low, high = (0, bounds[0]) if len(bounds) == 1 else bounds
    return randint(low, high, size=input.shape, dtype=dtype or input.dtype)


@_export
def randperm(n, *, generator=None, dtype=mdt.int64):
    """A random permutation of ``0 .. n-1``."""
    keys = ops.rand((int(n),)).asnumpy()
    return Tensor(np.argsort(keys, kind="stable").astype(mdt.as_dtype(dtype).np_dtype))


@_export
def normal(mean=0.0, std=1.0, size=None, generator=None):
    """Normal draws with ``mean`` and ``std`` (tensors broadcast; ``size`` for numbers)."""
    if size is None:
        shape = np.broadcast_shapes(*[t.shape for t in (mean, std) if isinstance(t, Tensor)])
    else:
        shape = _size((size,))
    return ops.add(ops.mul(ops.randn(tuple(shape)), std), mean)


@_export
def bernoulli(input, *, generator=None):
    """1 with probability ``input`` (elementwise), else 0."""
    return ops.cast(ops.less(ops.rand(input.shape), input), input.dtype)


@_export
def multinomial(input, num_samples, replacement=False, *, generator=None):
    """``num_samples`` category indices drawn per row with probabilities ``input``
    (:func:`mscore.ops.multinomial`, without replacement by default)."""
    return ops.multinomial(input, num_samples, replacement)


@_export
def std_mean(input, dim=None, *, correction=1, keepdim=False):
    """``(std, mean)`` over ``dim``."""
    return (ops.std(input, dim, correction, keepdim), ops.mean(input, dim, keepdim))


@_export
def var_mean(input, dim=None, *, correction=1, keepdim=False):
    """``(var, mean)`` over ``dim``."""
    return (ops.var(input, dim, correction, keepdim), ops.mean(input, dim, keepdim))


@_export
def vdot(input, other):
    """Dot product of the flattened inputs."""
    return ops.sum(ops.mul(ops.reshape(input, (-1,)), ops.reshape(other, (-1,))))


@_export
def mv(input, vec):
    """Matrix times vector."""
    return ops.mv(input, vec)


@_export
def histc(input, bins=100, min=0, max=0):
    """Histogram of ``input`` in ``bins`` equal bins over ``[min, max]`` (the data's range
    when both are 0); computed on the host."""
    a = input.asnumpy().astype(np.float64).reshape(-1)
    lo, hi = (float(a.min()), float(a.max())) if min == 0 and max == 0 else (min, max)
    counts, _ = np.histogram(a, bins=int(bins), range=(lo, hi))
    return Tensor(counts.astype(input.dtype.np_dtype))


@_export
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Pairwise ``p``-norm distances between the rows of ``x1`` and ``x2``
    (:func:`mscore.ops.cdist`; ``compute_mode`` is accepted and the distances are always
    computed from the differences)."""
    return ops.cdist(x1, x2, p)


@_export
def select(input, dim, index):
    """The slice at ``index`` along ``dim``."""
    return input.select(dim, index)


@_export
def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 * tensor2`` (:func:`mscore.ops.addcmul`)."""
    return ops.addcmul(input, tensor1, tensor2, value)


def addr_(input, vec1, vec2, beta=1, alpha=1):
    """``input`` set in place to ``beta * input + alpha * outer(vec1, vec2)``
    (:func:`mscore.ops.addr`); returns ``input``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"For 'addr_', 'input' must be a Tensor, got {type(input).__name__}")
    return input.assign_value(ops.addr(input, vec1, vec2, beta, alpha))


__all__.append("addr_")


@_export
def clip(input, min=None, max=None):
    """``input`` limited to ``[min, max]`` (:func:`mscore.ops.clamp`)."""
    return ops.clamp(input, min, max)


@_export
def einsum(equation, *operands):
    """Einstein summation (:func:`mscore.ops.einsum`)."""
    return ops.einsum(equation, *operands)


@_export
def equal(input, other):
    """True when ``input`` and ``other`` have the same shape and the same values (a Python
    bool, as PyTorch's ``torch.equal``)."""
    for name, value in (("input", input), ("other", other)):
        if not isinstance(value, Tensor):
            raise TypeError(f"For 'equal', '{name}' must be a Tensor, got "
                            f"{type(value).__name__}")
    if input.shape != other.shape:
        return False
    return bool(ops.all(ops.equal(input, other)).item())


@_export
def linspace(start, end, steps, *, dtype=None):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive (float32 unless
    ``dtype``)."""
    out = ops.linspace(start, end, steps)
    return out if dtype is None else ops.cast(out, dtype)


@_export
def conv_tbc(input, weight, bias, pad=0):
    """A 1-d convolution of a time-batch-channel ``input`` (T, B, C_in) with ``weight``
    (K, C_in, C_out) and ``bias`` (C_out), ``pad`` zeros at both ends of the time axis:
    (T + 2 pad - K + 1, B, C_out)."""
    for name, value in (("input", input), ("weight", weight), ("bias", bias)):
        if not isinstance(value, Tensor):
            raise TypeError(f"For 'conv_tbc', '{name}' must be a Tensor, got "
                            f"{type(value).__name__}")
    if input.ndim != 3 or weight.ndim != 3 or bias.ndim != 1:
        raise ValueError(f"For 'conv_tbc', 'input' and 'weight' must be 3-d and 'bias' 1-d, "
                         f"but got {input.ndim}-d, {weight.ndim}-d and {bias.ndim}-d")
    if weight.shape[1] != input.shape[2] or bias.shape[0] != weight.shape[2]:
        raise ValueError(f"For 'conv_tbc', weight {weight.shape} must be (K, C_in, C_out) for "
                         f"input {input.shape} and bias {bias.shape}")
    out = ops.conv1d(ops.transpose(input, (1, 2, 0)), ops.transpose(weight, (2, 1, 0)),
                     bias, pad_mode="pad" if pad else "valid", padding=int(pad))
    return ops.transpose(out, (2, 0, 1))


# ops whose MindSpore signature is mint's: the same function under its mint name
from mscore.ops import (  # noqa: E402
    bitwise_and, bitwise_or, bitwise_xor, erfinv, ge, imag, inverse, real, trunc)

fix = trunc   # rounded towards zero, as trunc
__all__ += ["bitwise_and", "bitwise_or", "bitwise_xor", "erfinv", "ge", "imag", "inverse",
            "real", "trunc", "fix"]

from mscore.mint import nn, optim  # noqa: E402  (submodules use the functions above)
from mscore.mint.nn import functional  # noqa: E402

conv2d = functional.conv2d
__all__ += ["nn", "optim", "conv2d"]
from mscore.mint import distributed, linalg, special  # noqa: E402
from mscore.mint.sync_batch_norm import (  # noqa: E402
    batch_norm_elemt, batch_norm_gather_stats_with_counts, batch_norm_stats)

__all__ += ["distributed", "linalg", "special", "batch_norm_elemt",
            "batch_norm_gather_stats_with_counts", "batch_norm_stats"]
