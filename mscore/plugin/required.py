"""The required members of the backend contract (the primitive op set), with their
signatures, grouped by concern.

Every backend implements each of these under the same name with the same parameters:
the core passes op attributes by keyword (``axis=``, ``keepdims=``, ``stride=``, ...), so
parameter names are part of the contract. :class:`~mscore.plugin.backend.Backend` inherits
these classes: a member a backend leaves alone raises ``NotImplementedError`` (but for the
three with a working default: ``stop_gradient``, ``synchronize``, ``memory_stats``), and
:func:`~mscore.plugin.backend.missing_primitives` lists it. This module is the one place
their signatures and contracts are written: ``PRIMITIVE_OPS`` is :data:`REQUIRED_MEMBERS`,
a type checker holds the backends to these signatures, and ``docs/backend-contract.md`` is
rendered from them (``tools/render_backend_contract.py``).

All arrays are the backend's native arrays. Binary ops get two arrays of the same dtype
(the core promotes first) whose shapes broadcast with numpy's rules; integer arithmetic
wraps around in the input dtype (two's complement). The core validates shapes, dtypes and
op domains before it calls a backend, so those errors never reach these methods.
"""
from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import numpy as np

from .optional import Array, DType, declared_signature, members


class CreationOps:
    """Creation, host transfer and dtypes."""

    def from_numpy(self, array: np.ndarray, dtype: DType | None = None) -> Array:
        """A native copy of numpy ``array`` (cast to ``dtype`` when given); bfloat16 arrives
        as ``ml_dtypes.bfloat16``."""
        raise NotImplementedError

    def to_numpy(self, a: Array) -> np.ndarray:
        """A numpy copy of ``a``; bfloat16 as ``ml_dtypes.bfloat16``; 0-d stays 0-d."""
        raise NotImplementedError

    def full(self, shape: tuple[int, ...], value: bool | int | float, dtype: DType) -> Array:
        """An array of ``shape`` filled with ``value``, in every dtype (bool included)."""
        raise NotImplementedError

    def arange(self, start: int | float, stop: int | float, step: int | float,
               dtype: DType) -> Array:
        """``start, start + step, ...`` below ``stop``, in ``dtype``."""
        raise NotImplementedError

    def shape(self, a: Array) -> tuple[int, ...]:
        """The shape of ``a`` as a tuple of Python ints."""
        raise NotImplementedError

    def dtype(self, a: Array) -> DType:
        """The mscore DType of ``a``."""
        raise NotImplementedError

    def cast(self, a: Array, dtype: DType) -> Array:
        """``a`` in ``dtype`` (itself when it has it): float to integer truncates toward zero
        and saturates at the integer's range, NaN gives 0; integer to narrower integer and
        signed to unsigned wrap; a negative float to unsigned saturates to 0; nonzero (NaN
        too) to bool is True (``rules.saturate_to_int``)."""
        raise NotImplementedError

    def stop_gradient(self, a: Array) -> Array:
        """``a``'s values cut from any gradient history the library keeps (detach); the
        default returns ``a``, right for a library without autodiff."""
        return a


class UnaryOps:
    """Elementwise unary ops: the result has the input's shape and dtype (but for the bool
    ones); half precision may compute in float32 and round once."""

    def neg(self, a: Array) -> Array:
        """``-a``; integers wrap (``-MIN == MIN``)."""
        raise NotImplementedError

    def abs(self, a: Array) -> Array:
        """``|a|``; integers wrap (``abs(MIN) == MIN``)."""
        raise NotImplementedError

    def exp(self, a: Array) -> Array:
        """``e ** a`` (floats)."""
        raise NotImplementedError

    def log(self, a: Array) -> Array:
        """Natural logarithm (floats): ``-inf`` at 0, NaN below."""
        raise NotImplementedError

    def sqrt(self, a: Array) -> Array:
        """Square root (floats): NaN below 0."""
        raise NotImplementedError

    def sin(self, a: Array) -> Array:
        """Sine (floats)."""
        raise NotImplementedError

    def cos(self, a: Array) -> Array:
        """Cosine (floats)."""
        raise NotImplementedError

    def tanh(self, a: Array) -> Array:
        """Hyperbolic tangent (floats)."""
        raise NotImplementedError

    def erf(self, a: Array) -> Array:
        """The error function (floats; half precision computed in float32, rounded once)."""
        raise NotImplementedError

    def sign(self, a: Array) -> Array:
        """-1, 0 or 1 by the sign of ``a``, in ``a``'s dtype; a float NaN (either sign bit)
        and either zero give +0, as MindSpore's (numpy and ``jnp.sign`` give NaN and keep
        -0)."""
        raise NotImplementedError

    def floor(self, a: Array) -> Array:
        """Rounded toward -inf (floats)."""
        raise NotImplementedError

    def ceil(self, a: Array) -> Array:
        """Rounded toward +inf (floats)."""
        raise NotImplementedError

    def logical_not(self, a: Array) -> Array:
        """``not a`` of a bool array."""
        raise NotImplementedError

    def isfinite(self, a: Array) -> Array:
        """Bool: False at inf and NaN (floats)."""
        raise NotImplementedError


class BinaryOps:
    """Elementwise arithmetic of two arrays of one dtype, broadcasting with numpy's rules;
    the result is in that dtype."""

    def add(self, a: Array, b: Array) -> Array:
        """``a + b``; integers wrap (``MAX + 1 == MIN``)."""
        raise NotImplementedError

    def sub(self, a: Array, b: Array) -> Array:
        """``a - b``; integers wrap."""
        raise NotImplementedError

    def mul(self, a: Array, b: Array) -> Array:
        """``a * b``; integers wrap."""
        raise NotImplementedError

    def div(self, a: Array, b: Array) -> Array:
        """True division of floats; integers divide truncating toward zero (MindSpore's
        ``Div``), ``x / 0`` is 0 and ``MIN / -1`` wraps to MIN (``rules.divide_toward_zero``)."""
        raise NotImplementedError

    def pow(self, a: Array, b: Array) -> Array:
        """``a ** b`` (integer exponents >= 0 for integers)."""
        raise NotImplementedError

    def maximum(self, a: Array, b: Array) -> Array:
        """The larger of ``a`` and ``b``; NaN propagates."""
        raise NotImplementedError

    def minimum(self, a: Array, b: Array) -> Array:
        """The smaller of ``a`` and ``b``; NaN propagates."""
        raise NotImplementedError


class ComparisonOps:
    """Comparisons and logic of two arrays of one dtype, broadcasting: bool results."""

    def equal(self, a: Array, b: Array) -> Array:
        """``a == b`` (NaN is unequal to everything)."""
        raise NotImplementedError

    def not_equal(self, a: Array, b: Array) -> Array:
        """``a != b``."""
        raise NotImplementedError

    def less(self, a: Array, b: Array) -> Array:
        """``a < b``."""
        raise NotImplementedError

    def less_equal(self, a: Array, b: Array) -> Array:
        """``a <= b``."""
        raise NotImplementedError

    def greater(self, a: Array, b: Array) -> Array:
        """``a > b``."""
        raise NotImplementedError

    def greater_equal(self, a: Array, b: Array) -> Array:
        """``a >= b``."""
        raise NotImplementedError

    def logical_and(self, a: Array, b: Array) -> Array:
        """``a and b`` of bool arrays."""
        raise NotImplementedError

    def logical_or(self, a: Array, b: Array) -> Array:
        """``a or b`` of bool arrays."""
        raise NotImplementedError

    def where(self, cond: Array, x: Array, y: Array) -> Array:
        """``x`` where the bool ``cond`` is True, else ``y`` (``x`` and ``y`` share a dtype),
        broadcasting all three."""
        raise NotImplementedError


class ReductionOps:
    """Reductions; ``axis`` is None (every axis) or a sorted tuple of non-negative ints, and
    ``keepdims`` keeps the reduced axes with size 1."""

    def sum(self, a: Array, axis: tuple[int, ...] | None, keepdims: bool) -> Array:
        """Sum in ``a``'s own dtype (integers stay integers and wrap)."""
        raise NotImplementedError

    def max(self, a: Array, axis: tuple[int, ...] | None, keepdims: bool) -> Array:
        """Largest value; NaN propagates."""
        raise NotImplementedError

    def min(self, a: Array, axis: tuple[int, ...] | None, keepdims: bool) -> Array:
        """Smallest value; NaN propagates."""
        raise NotImplementedError

    def argmax(self, a: Array, axis: int) -> Array:
        """int64 index of the first maximum along the int ``axis`` (the first NaN when there
        is one)."""
        raise NotImplementedError

    def argmin(self, a: Array, axis: int) -> Array:
        """int64 index of the first minimum along the int ``axis`` (the first NaN when there
        is one)."""
        raise NotImplementedError

    def all(self, a: Array, axis: tuple[int, ...] | None, keepdims: bool) -> Array:
        """Bool: every element true."""
        raise NotImplementedError

    def any(self, a: Array, axis: tuple[int, ...] | None, keepdims: bool) -> Array:
        """Bool: some element true."""
        raise NotImplementedError


class ShapeOps:
    """Shape and indexing, in every dtype (bool included)."""

    def reshape(self, a: Array, shape: tuple[int, ...]) -> Array:
        """``a``'s elements in C order laid out as ``shape`` (of the same size)."""
        raise NotImplementedError

    def transpose(self, a: Array, perm: tuple[int, ...]) -> Array:
        """``a``'s axes permuted: axis ``i`` of the result is axis ``perm[i]`` of ``a``."""
        raise NotImplementedError

    def broadcast_to(self, a: Array, shape: tuple[int, ...]) -> Array:
        """``a`` broadcast to ``shape`` with numpy's rules."""
        raise NotImplementedError

    def concat(self, arrays: Sequence[Array], axis: int) -> Array:
        """Same-dtype arrays joined along the int ``axis``."""
        raise NotImplementedError

    def pad(self, a: Array, pad_width: Sequence[tuple[int, int]],
            value: bool | int | float) -> Array:
        """Constant padding with ``value``, one ``(before, after)`` pair per axis."""
        raise NotImplementedError

    def getitem(self, a: Array, index: tuple[Any, ...]) -> Array:
        """numpy indexing: ``index`` holds ints, slices (negative steps included), None,
        Ellipsis and native integer arrays, with numpy's advanced-indexing rules (separated
        integer arrays put their broadcast axes first); an index out of range raises
        ``IndexError``."""
        raise NotImplementedError

    def scatter_add(self, a: Array, index: tuple[Any, ...], updates: Array) -> Array:
        """A copy of ``a`` with ``updates`` added at ``a[index]``; repeated indices
        accumulate (``np.add.at``): the VJP of :meth:`getitem`."""
        raise NotImplementedError


class LinalgOps:
    """Linear algebra, convolution and pooling, channels first: ``x`` is (N, C, *spatial);
    ``stride``, ``dilation`` and ``kernel`` hold one int and ``padding`` one ``(before,
    after)`` pair per spatial axis."""

    def matmul(self, a: Array, b: Array) -> Array:
        """Batched matrix product of >= 2-d operands (ranks may differ), batch axes
        broadcasting with numpy's rules; integers wrap."""
        raise NotImplementedError

    def conv(self, x: Array, w: Array, stride: Sequence[int],
             padding: Sequence[tuple[int, int]], dilation: Sequence[int], groups: int) -> Array:
        """N-d cross-correlation of floats: ``w`` (O, C // groups, *kernel)."""
        raise NotImplementedError

    def conv_transpose(self, x: Array, w: Array, stride: Sequence[int],
                       padding: Sequence[tuple[int, int]], output_padding: Sequence[int],
                       dilation: Sequence[int], groups: int) -> Array:
        """The input-gradient of :meth:`conv` as a layer: ``w`` (C_in, O // groups,
        *kernel); ``output_padding`` is added at the end of each spatial axis."""
        raise NotImplementedError

    def max_pool(self, x: Array, kernel: Sequence[int], stride: Sequence[int],
                 padding: Sequence[tuple[int, int]]) -> Array:
        """Max over windows of the spatial axes; padding counts as -inf."""
        raise NotImplementedError

    def avg_pool(self, x: Array, kernel: Sequence[int], stride: Sequence[int],
                 padding: Sequence[tuple[int, int]], count_include_pad: bool) -> Array:
        """Mean over windows of floats; the zero padding counted in the divisor or not."""
        raise NotImplementedError


class RandomOps:
    """Random streams. A state is a native array, so it can flow through compiled steps; the
    same state gives the same values (not numpy's: the kit checks range and moments)."""

    def rng_state(self, seed: int) -> Array:
        """A fresh random state for ``seed``."""
        raise NotImplementedError

    def random_uniform(self, state: Array, shape: tuple[int, ...],
                       dtype: DType) -> tuple[Array, Array]:
        """``(values in [0, 1) of shape and dtype, next_state)``."""
        raise NotImplementedError

    def random_normal(self, state: Array, shape: tuple[int, ...],
                      dtype: DType) -> tuple[Array, Array]:
        """``(standard normal values of shape and dtype, next_state)``."""
        raise NotImplementedError


class DeviceOps:
    """The device: waiting, memory, the overflow check."""

    def synchronize(self) -> None:
        """Wait for all queued work on the current device (the default has none)."""

    def memory_stats(self) -> dict[str, int]:
        """Bytes in use / peak on the current device (the default: an empty dict)."""
        return {}

    def all_finite(self, arrays: Sequence[Array]) -> bool:
        """True when no array holds inf or NaN: one pass, at most one host synchronisation
        (the loss-scaling overflow check)."""
        raise NotImplementedError


class RequiredMethods(CreationOps, UnaryOps, BinaryOps, ComparisonOps, ReductionOps, ShapeOps,
                      LinalgOps, RandomOps, DeviceOps):
    """Every required member: the union of :data:`GROUPS`."""


GROUPS: tuple[type, ...] = RequiredMethods.__bases__


REQUIRED_MEMBERS = tuple(name for group in GROUPS for name in members(group))

# Required members whose declaration is a working default (a library without autodiff,
# device queue or memory statistics need not write them).
DEFAULTED = frozenset({"stop_gradient", "synchronize", "memory_stats"})


def signature(name: str) -> inspect.Signature:
    """The signature of required member ``name`` as a backend implements it (without
    ``self``)."""
    return declared_signature(RequiredMethods, name)
