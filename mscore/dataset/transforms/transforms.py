"""General transforms for ``Dataset.map`` (MindSpore's ``mindspore.dataset.transforms``).

Each transform is a callable on numpy arrays; called eagerly it transforms one value, in a
``map`` it transforms each row's column. The random ones (``RandomApply``, ``RandomChoice``,
``RandomOrder``) draw from the stream the pipeline gives each operation
(:mod:`mscore.dataset.engine.op_random`).
"""
from __future__ import annotations

import enum
import numbers

import numpy as np

from mscore.common import dtype as mstype
from mscore.dataset.engine._stdrandom import std_shuffle
from mscore.dataset.engine.op_random import generator_for
from mscore.dataset.engine.ops_batch import pad_column
from mscore.dataset.engine.validators import np_dtype

__all__ = ["PyTensorOperation", "TensorOperation", "TypeCast", "Compose", "OneHot", "Fill",
           "Duplicate", "Concatenate", "Slice", "Mask", "PadEnd", "Relational", "RandomApply",
           "RandomChoice", "RandomOrder", "np_dtype", "not_random"]


def not_random(function):
    """Mark a user's ``map`` function as deterministic (``function.random = False``) and
    return it."""
    function.random = False
    return function


class PyTensorOperation:
    """Base class of transforms: callables on numpy arrays."""

    def __call__(self, *args):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}()"


TensorOperation = PyTensorOperation


def _check_transforms(transforms, name="transforms"):
    if not isinstance(transforms, list):
        raise TypeError(f"{name}: expected a list of transforms, got "
                        f"{type(transforms).__name__}")
    if not transforms:
        raise ValueError(f"{name}: the list cannot be empty")
    for i, t in enumerate(transforms):
        if not callable(t):
            raise TypeError(f"{name}: transforms[{i}] is neither a transform nor a callable")
    return list(transforms)


def _chain(transforms, args):
    out = args
    for t in transforms:
        out = t(*out)
        if not isinstance(out, tuple):
            out = (out,)
    return out[0] if len(out) == 1 else out


class TypeCast(PyTensorOperation):
    """Cast the column to ``data_type`` (``ms.int32``, ``ms.float32``, or a numpy dtype)."""

    def __init__(self, data_type):
        self.data_type = np_dtype(data_type)

    def __call__(self, data):
        return np.asarray(data).astype(self.data_type)

    def __repr__(self):
        return f"TypeCast(data_type={self.data_type})"


class Compose(PyTensorOperation):
    """Run ``transforms`` one after another as one operation (a transform returning a tuple
    passes each element to the next as an argument)."""

    def __init__(self, transforms):
        self.transforms = _check_transforms(transforms)

    def __call__(self, *args):
        return _chain(self.transforms, args)


def _check_int_label(label):
    label = np.asarray(label)
    if label.dtype.kind not in "iu":
        raise RuntimeError(f"OneHot: expected integer labels, got {label.dtype}")
    return label


class OneHot(PyTensorOperation):
    """Integer labels to one-hot rows of ``num_classes`` with the labels' dtype (a negative
    label gives a row of zeros); ``smoothing_rate`` spreads that much probability mass over
    the classes (then the rows are float64)."""

    def __init__(self, num_classes, smoothing_rate=0.0):
        if not isinstance(num_classes, int) or isinstance(num_classes, bool):
            raise TypeError(f"num_classes: expected an int, got {type(num_classes).__name__}")
        if num_classes <= 0:
            raise ValueError(f"num_classes: must be greater than 0, got {num_classes}")
        if not isinstance(smoothing_rate, (int, float)) or isinstance(smoothing_rate, bool):
            raise TypeError(f"smoothing_rate: expected a float, got {smoothing_rate!r}")
        if not 0.0 <= smoothing_rate <= 1.0:
            raise ValueError(f"smoothing_rate: expected a float in [0, 1], got "
                             f"{smoothing_rate}")
        self.num_classes, self.smoothing_rate = num_classes, float(smoothing_rate)

    def __call__(self, label):
        label = _check_int_label(label)
        if label.size and label.max() >= self.num_classes:
            raise RuntimeError(f"OneHot: labels must be below num_classes "
                               f"({self.num_classes}), got {int(label.max())}")
        hot = (label[..., None] == np.arange(self.num_classes))
        if self.smoothing_rate:
            rate = self.smoothing_rate
            return hot * (1 - rate) + rate / self.num_classes
        return hot.astype(label.dtype)


class Fill(PyTensorOperation):
    """An array of the input's shape and dtype, filled with ``fill_value``."""

    def __init__(self, fill_value):
        if not isinstance(fill_value, (str, float, bool, int, bytes)):
            raise TypeError(f"fill_value: expected a number, a bool or a string, got "
                            f"{type(fill_value).__name__}")
        self.fill_value = fill_value

    def __call__(self, data):
        arr = np.asarray(data)
        try:
            return np.full(arr.shape, np.asarray(self.fill_value).astype(arr.dtype),
                           dtype=arr.dtype)
        except ValueError as exc:
            raise RuntimeError(f"Fill: {self.fill_value!r} cannot fill an array of "
                               f"{arr.dtype} ({exc})") from None


class Duplicate(PyTensorOperation):
    """Return the column twice (map it to two ``output_columns``)."""

    def __call__(self, data):
        arr = np.asarray(data)
        return arr, arr.copy()


def _check_1d(arr, name):
    if arr is None:
        return None
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"{name}: expected a numpy array, got {type(arr).__name__}")
    if arr.ndim != 1:
        raise ValueError(f"{name}: can only {name} 1-D arrays, got shape {arr.shape}")
    return arr


class Concatenate(PyTensorOperation):
    """``prepend``, the 1-D input and ``append`` joined along ``axis`` (0 or -1)."""

    def __init__(self, axis=0, prepend=None, append=None):
        if not isinstance(axis, int) or isinstance(axis, bool):
            raise TypeError(f"axis: expected an int, got {type(axis).__name__}")
        if axis not in (0, -1):
            raise ValueError(f"axis: only 1-D concatenation is supported (axis 0 or -1), got "
                             f"{axis}")
        self.axis = axis
        self.prepend = _check_1d(prepend, "prepend")
        self.append = _check_1d(append, "append")

    def __call__(self, data):
        arr = np.asarray(data)
        if arr.ndim != 1:
            raise RuntimeError(f"Concatenate: expected a 1-D input, got shape {arr.shape}")
        parts = [p for p in (self.prepend, arr, self.append) if p is not None]
        for p in parts:
            if p.dtype.kind != arr.dtype.kind:
                raise RuntimeError(f"Concatenate: cannot join {p.dtype} to an input of "
                                   f"{arr.dtype}")
        return np.concatenate(parts).astype(arr.dtype, copy=False)


def _check_slice(s, i):
    if s is None or s is Ellipsis or isinstance(s, (slice, bool)):
        return s
    if isinstance(s, numbers.Integral):
        return int(s)
    if isinstance(s, list) and all(isinstance(x, numbers.Integral) and not isinstance(x, bool)
                                   for x in s):
        return [int(x) for x in s]
    raise TypeError(f"slices: slices[{i}] must be an int, a list of ints, a slice, a bool, "
                    f"None or Ellipsis, got {s!r}")


class Slice(PyTensorOperation):
    """Keep parts of each dimension: per dimension an int (that index, as a length-1
    dimension), a list of indices, a ``slice``, or ``None`` / ``True`` / ``...`` (all)."""

    def __init__(self, *slices):
        self.slices = [_check_slice(s, i) for i, s in enumerate(slices)]

    def __call__(self, data):
        arr = np.asarray(data)
        out = arr
        for axis, s in enumerate(self.slices):
            if axis >= arr.ndim:
                raise RuntimeError(f"Slice: {len(self.slices)} slices for a {arr.ndim}-D input")
            if s is None or s is Ellipsis or s is True:
                continue
            n = arr.shape[axis]
            if isinstance(s, slice):
                out = out[(slice(None),) * axis + (s,)]
                continue
            idx = [s] if isinstance(s, int) else s
            if s is False:
                idx = []
            if any(not -n <= i < n for i in idx):
                raise RuntimeError(f"Slice: index {idx} out of range for dimension {axis} "
                                   f"of size {n}")
            out = np.take(out, idx, axis=axis)
        return out


class Relational(enum.Enum):
    """The comparisons of :class:`Mask`."""
    EQ = 0
    NE = 1
    GT = 2
    GE = 3
    LT = 4
    LE = 5


_COMPARE = {Relational.EQ: np.equal, Relational.NE: np.not_equal, Relational.GT: np.greater,
            Relational.GE: np.greater_equal, Relational.LT: np.less,
            Relational.LE: np.less_equal}


class Mask(PyTensorOperation):
    """``data <operator> constant`` element-wise, as ``dtype`` (default bool)."""

    def __init__(self, operator, constant, dtype=mstype.bool_):
        if not isinstance(operator, Relational):
            raise TypeError(f"operator: expected a Relational, got {operator!r}")
        if not isinstance(constant, (str, float, bool, int, bytes)):
            raise TypeError(f"constant: expected a number or a string, got {constant!r}")
        self.operator, self.constant = operator, constant
        self.dtype = np.dtype(bool) if dtype is None else np_dtype(dtype, "dtype")

    def __call__(self, data):
        return _COMPARE[self.operator](np.asarray(data), self.constant).astype(self.dtype)


class PadEnd(PyTensorOperation):
    """Pad (or cut) each dimension at its end to ``pad_shape`` with ``pad_value`` (default 0,
    or '' for strings)."""

    def __init__(self, pad_shape, pad_value=None):
        if not isinstance(pad_shape, list) or not all(
                isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in pad_shape):
            raise TypeError(f"pad_shape: expected a list of positive ints, got {pad_shape!r}")
        if pad_value is not None and not isinstance(pad_value, (str, float, bool, int, bytes)):
            raise TypeError(f"pad_value: expected a number or a string, got {pad_value!r}")
        self.pad_shape, self.pad_value = pad_shape, pad_value

    def __call__(self, data):
        arr = np.asarray(data)
        if arr.ndim != len(self.pad_shape):
            raise RuntimeError(f"PadEnd: pad_shape {self.pad_shape} for a {arr.ndim}-D input")
        value = self.pad_value if self.pad_value is not None else \
            ("" if arr.dtype.kind in "US" else 0)
        return pad_column("PadEnd", [arr], self.pad_shape, value)[0]


def _check_prob(prob):
    if not isinstance(prob, (int, float)) or isinstance(prob, bool):
        raise TypeError(f"prob: expected a float, got {type(prob).__name__}")
    if not 0 <= prob <= 1:
        raise ValueError(f"prob: expected a value in [0, 1], got {prob}")
    return float(prob)


class RandomApply(PyTensorOperation):
    """With probability ``prob``, run ``transforms`` in order; otherwise pass the input on."""

    def __init__(self, transforms, prob=0.5):
        self.transforms = _check_transforms(transforms)
        self.prob = _check_prob(prob)

    def __call__(self, *args):
        if generator_for(self).bernoulli(self.prob)[0]:
            return _chain(self.transforms, args)
        return args[0] if len(args) == 1 else args


class RandomChoice(PyTensorOperation):
    """Run one of ``transforms``, chosen uniformly at random."""

    def __init__(self, transforms):
        self.transforms = _check_transforms(transforms)

    def __call__(self, *args):
        i = int(generator_for(self).uniform_int(0, len(self.transforms) - 1)[0])
        return _chain([self.transforms[i]], args)


class RandomOrder(PyTensorOperation):
    """Run all of ``transforms``, in a random order."""

    def __init__(self, transforms):
        self.transforms = _check_transforms(transforms)

    def __call__(self, *args):
        order = std_shuffle(np.arange(len(self.transforms)), generator_for(self))
        return _chain([self.transforms[i] for i in order], args)
