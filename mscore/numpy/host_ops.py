"""``mindspore.numpy``'s numerical helpers that training code uses on constants (windows,
polynomials, histograms, set operations, index grids): computed on the host with NumPy and
returned as Tensors with MindSpore's NumPy dtypes (integers int32, floats float32). They
carry no gradient, except where built from :mod:`mscore.ops` (``polyval``, ``trapz``,
``gradient``, ``cross``, ``corrcoef``, ``fix``)."""
from __future__ import annotations

import numpy as np

from mscore import ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor
from mscore.numpy import math_ops
from mscore.numpy._convert import asarray, float_input

__all__ = [
    "bartlett", "blackman", "hamming", "hanning", "polyadd", "polysub", "polymul",
    "polyval", "polyder", "polyint", "histogram", "histogram_bin_edges", "intersect1d",
    "setdiff1d", "tril_indices", "triu_indices", "tril_indices_from", "triu_indices_from",
    "diag_indices", "ix_", "vander", "trapz", "ediff1d", "digitize", "unwrap", "gradient",
    "piecewise", "apply_along_axis", "apply_over_axes", "promote_types", "result_type",
    "array_str", "cross", "fix", "corrcoef", "convolve", "correlate", "mgrid", "ogrid",
]


def _tensor(result):
    """A NumPy result as a Tensor: int64 as int32, float64 as float32."""
    arr = np.asarray(result)
    if arr.dtype == np.float64:
        arr = arr.astype(np.float32)
    elif arr.dtype.kind in "iu" and arr.dtype.itemsize == 8:
        arr = arr.astype(np.int32)
    return Tensor(arr)


def _host(a):
    return asarray(a).asnumpy()


def bartlett(M):
    """The Bartlett window of ``M`` points."""
    return _tensor(np.bartlett(M))


def blackman(M):
    """The Blackman window of ``M`` points."""
    return _tensor(np.blackman(M))


def hamming(M):
    """The Hamming window of ``M`` points."""
    return _tensor(np.hamming(M))


def hanning(M):
    """The Hann window of ``M`` points."""
    return _tensor(np.hanning(M))


def polyadd(a1, a2):
    """Sum of two polynomials (coefficients highest power first)."""
    return _tensor(np.polyadd(_host(a1), _host(a2)))


def polysub(a1, a2):
    """Difference of two polynomials."""
    return _tensor(np.polysub(_host(a1), _host(a2)))


def polymul(a1, a2):
    """Product of two polynomials."""
    return _tensor(np.polymul(_host(a1), _host(a2)))


def polyder(p, m=1):
    """The ``m``-th derivative of a polynomial."""
    return _tensor(np.polyder(_host(p), m))


def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative of a polynomial (integration constants ``k``)."""
    return _tensor(np.polyint(_host(p), m, 0 if k is None else k))


def polyval(p, x):
    """The polynomial ``p`` evaluated at ``x`` (Horner's scheme, differentiable)."""
    p, x = float_input(p), float_input(x)
    out = ops.zeros_like(x)
    for i in range(p.shape[0]):
        out = ops.add(ops.mul(out, x), p[i])
    return out


def histogram(a, bins=10, range=None, weights=None, density=False):
    """``(counts, bin edges)`` of ``a``."""
    counts, edges = np.histogram(_host(a), bins, range,
                                 weights=None if weights is None else _host(weights),
                                 density=density)
    return _tensor(counts.astype(np.float32)), _tensor(edges)


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The bin edges :func:`histogram` would use."""
    return _tensor(np.histogram_bin_edges(_host(a), bins, range,
                                          None if weights is None else _host(weights)))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """The sorted values present in both inputs."""
    out = np.intersect1d(_host(ar1), _host(ar2), assume_unique, return_indices)
    return tuple(_tensor(o) for o in out) if return_indices else _tensor(out)


def setdiff1d(ar1, ar2, assume_unique=False):
    """The sorted values of ``ar1`` not in ``ar2``."""
    return _tensor(np.setdiff1d(_host(ar1), _host(ar2), assume_unique))


def tril_indices(n, k=0, m=None):
    """Row and column indices of the lower triangle of an ``n`` x ``m`` matrix."""
    return tuple(_tensor(i) for i in np.tril_indices(n, k, m))


def triu_indices(n, k=0, m=None):
    """Row and column indices of the upper triangle of an ``n`` x ``m`` matrix."""
    return tuple(_tensor(i) for i in np.triu_indices(n, k, m))


def tril_indices_from(arr, k=0):
    """:func:`tril_indices` for the shape of the 2-d ``arr``."""
    return tuple(_tensor(i) for i in np.tril_indices_from(_host(arr), k))


def triu_indices_from(arr, k=0):
    """:func:`triu_indices` for the shape of the 2-d ``arr``."""
    return tuple(_tensor(i) for i in np.triu_indices_from(_host(arr), k))


def diag_indices(n, ndim=2):
    """Indices of the main diagonal of an ``n``-sided ``ndim``-d array."""
    return tuple(_tensor(i) for i in np.diag_indices(n, ndim))


def ix_(*args):
    """Open-mesh index arrays from 1-d sequences."""
    return tuple(_tensor(i) for i in np.ix_(*[_host(a) for a in args]))


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of ``x``."""
    return _tensor(np.vander(_host(x), N, increasing))


def trapz(y, x=None, dx=1.0, axis=-1):
    """Integral of ``y`` by the trapezoidal rule (differentiable)."""
    y = float_input(y)
    ax = axis % y.ndim
    lead = (slice(None),) * ax
    pairs = ops.mul(ops.add(y[lead + (slice(1, None),)], y[lead + (slice(None, -1),)]), 0.5)
    widths = dx if x is None else ops.diff(float_input(x), 1, -1 if float_input(x).ndim == 1
                                           else ax)
    return ops.sum(ops.mul(pairs, widths), ax)


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of the flattened array, with optional values at the ends."""
    flat = ops.reshape(asarray(ary), (-1,))
    parts = [asarray(to_begin).reshape(-1)] if to_begin is not None else []
    parts.append(ops.sub(flat[1:], flat[:-1]))
    if to_end is not None:
        parts.append(asarray(to_end).reshape(-1))
    return ops.concat(parts) if len(parts) > 1 else parts[0]


def digitize(x, bins, right=False):
    """The index of the bin each value falls in."""
    return _tensor(np.digitize(_host(x), _host(bins), right))


def unwrap(p, discont=3.141592653589793, axis=-1):
    """Phase angles unwrapped (jumps over ``discont`` replaced by their 2*pi
    complement)."""
    return _tensor(np.unwrap(_host(p), discont, axis))


def gradient(f, *varargs, axis=None, edge_order=1):
    """Central differences inside, one-sided at the edges (NumPy's ``gradient``)."""
    return _tensor(np.gradient(_host(f), *[_host(v) for v in varargs], axis=axis,
                               edge_order=edge_order))


def piecewise(x, condlist, funclist, *args, **kw):
    """``funclist[i]`` (a function or a constant) where ``condlist[i]``."""
    x = asarray(x)
    out = ops.zeros_like(x)
    conds = [ops.cast(asarray(c), mdt.bool_) for c in condlist]
    if len(funclist) == len(conds) + 1:
        rest = ops.logical_not(ops.any(ops.stack(conds), 0)) if conds else \
            ops.ones_like(x, dtype=mdt.bool_)
        conds.append(rest)
    for cond, fn in zip(conds, funclist):
        value = fn(x, *args, **kw) if callable(fn) else ops.full_like(x, fn)
        out = ops.where(cond, value, out)
    return out


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d`` applied to the 1-d slices of ``arr`` along ``axis``."""
    arr = asarray(arr)
    moved = ops.moveaxis(arr, axis, -1)
    lead = moved.shape[:-1]
    flat = ops.reshape(moved, (-1, moved.shape[-1]))
    results = [asarray(func1d(flat[i], *args, **kwargs)) for i in range(flat.shape[0])]
    out = ops.stack(results)
    return ops.reshape(out, lead + out.shape[1:])


def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied for each axis in turn, keeping the reduced axes."""
    out = asarray(a)
    for ax in (axes if isinstance(axes, (tuple, list)) else (axes,)):
        res = func(out, ax)
        out = res if res.ndim == out.ndim else ops.expand_dims(res, ax)
    return out


def promote_types(type1, type2):
    """The dtype both convert to."""
    return mdt.promote(mdt.as_dtype(type1), mdt.as_dtype(type2))


def result_type(*arrays_and_dtypes):
    """The dtype of an operation on the inputs (Python floats count as float32, ints as
    int32)."""
    out = None
    for item in arrays_and_dtypes:
        if isinstance(item, Tensor):
            dt = item.dtype
        elif isinstance(item, bool):
            dt = mdt.bool_
        elif isinstance(item, int):
            dt = mdt.int32
        elif isinstance(item, float):
            dt = mdt.float32
        elif isinstance(item, str):
            dt = mdt.from_numpy_dtype(np.dtype(item))
        else:
            dt = mdt.as_dtype(item)
        out = dt if out is None else mdt.promote(out, dt)
    return out


def array_str(a):
    """The values as NumPy prints them."""
    return np.array_str(_host(a))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 3-vectors (differentiable)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a = ops.moveaxis(float_input(a), axisa, -1)
    b = ops.moveaxis(float_input(b), axisb, -1)
    out = ops.cross(a, b, -1)
    return ops.moveaxis(out, -1, axisc)


def fix(x):
    """Rounded toward zero."""
    return ops.trunc(float_input(x))


def corrcoef(x, y=None, rowvar=True, dtype=None):
    """Pearson correlation coefficients of the variables."""
    c = math_ops.cov(x, y, rowvar)
    d = ops.sqrt(ops.diagonal(c))
    out = ops.div(ops.div(c, ops.expand_dims(d, 1)), ops.expand_dims(d, 0))
    return out if dtype is None else ops.cast(out, dtype)


def convolve(a, v, mode="full"):
    """Discrete linear convolution of two 1-d arrays."""
    return _tensor(np.convolve(_host(a), _host(v), mode))


def correlate(a, v, mode="valid"):
    """Cross-correlation of two 1-d arrays."""
    return _tensor(np.correlate(_host(a), _host(v), mode))


class _Grid:
    """``mgrid[0:2, 0:3]`` / ``ogrid[...]``: NumPy's dense and open index grids."""

    def __init__(self, grid):
        self._grid = grid

    def __getitem__(self, key):
        out = self._grid[key]
        return [_tensor(o) for o in out] if isinstance(out, (list, tuple)) else _tensor(out)


mgrid = _Grid(np.mgrid)
ogrid = _Grid(np.ogrid)
