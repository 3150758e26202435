"""General transforms for ``Dataset.map`` (MindSpore's ``mindspore.dataset.transforms``)."""
from __future__ import annotations

import numpy as np

__all__ = ["TypeCast", "Compose", "OneHot", "Duplicate", "PyTensorOperation"]


class PyTensorOperation:
    """Base class of transforms: callables on numpy arrays."""

    def __call__(self, *args):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}()"


def _np_dtype(data_type, name="data_type"):
    from mscore.common import dtype as mdt
    if isinstance(data_type, mdt.DType):
        return np.dtype(data_type.np_dtype)
    if isinstance(data_type, str):
        try:
            return np.dtype(mdt.as_dtype(data_type, name).np_dtype)
        except (TypeError, ValueError):
            pass
    try:
        return np.dtype(data_type)
    except TypeError:
        raise TypeError(f"{name}: expected an mscore dtype (ms.int32, ...) or a numpy dtype, "
                        f"got {data_type!r}") from None


class TypeCast(PyTensorOperation):
    """Cast the column to ``data_type`` (``ms.int32``, ``ms.float32``, or a numpy dtype)."""

    def __init__(self, data_type):
        self.data_type = _np_dtype(data_type)

    def __call__(self, data):
        return np.asarray(data).astype(self.data_type)

    def __repr__(self):
        return f"TypeCast(data_type={self.data_type})"


class Compose(PyTensorOperation):
    """Run ``transforms`` one after another as one operation."""

    def __init__(self, transforms):
        if not isinstance(transforms, (list, tuple)) or not transforms:
            raise TypeError("transforms: expected a non-empty list of callables")
        for i, t in enumerate(transforms):
            if not callable(t):
                raise TypeError(f"transforms: element {i} is not callable")
        self.transforms = list(transforms)

    def __call__(self, *args):
        out = args
        for t in self.transforms:
            out = t(*out)
            if not isinstance(out, tuple):
                out = (out,)
        return out[0] if len(out) == 1 else out


class OneHot(PyTensorOperation):
    """Integer labels to one-hot float rows of ``num_classes`` (``smoothing_rate`` spreads
    that much probability mass over the classes)."""

    def __init__(self, num_classes, smoothing_rate=0.0):
        if not isinstance(num_classes, int) or isinstance(num_classes, bool) or num_classes < 1:
            raise ValueError(f"num_classes: expected a positive int, got {num_classes!r}")
        if not isinstance(smoothing_rate, (int, float)) or not 0.0 <= smoothing_rate <= 1.0:
            raise ValueError(f"smoothing_rate: expected a float in [0, 1], got "
                             f"{smoothing_rate!r}")
        self.num_classes, self.smoothing_rate = num_classes, float(smoothing_rate)

    def __call__(self, label):
        label = np.asarray(label)
        if label.dtype.kind not in "iu":
            raise TypeError(f"OneHot: expected integer labels, got {label.dtype}")
        if label.size and (label.min() < 0 or label.max() >= self.num_classes):
            raise ValueError(f"OneHot: labels must be in [0, {self.num_classes})")
        out = np.eye(self.num_classes, dtype=np.float32)[label]
        if self.smoothing_rate:
            out = out * (1 - self.smoothing_rate) + self.smoothing_rate / self.num_classes
        return out


class Duplicate(PyTensorOperation):
    """Return the column twice (map it to two ``output_columns``)."""

    def __call__(self, data):
        arr = np.asarray(data)
        return arr, arr.copy()
