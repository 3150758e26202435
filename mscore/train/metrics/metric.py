"""``Metric``: the base class of evaluation metrics (MindSpore's ``mindspore.train.Metric``)."""
from __future__ import annotations

import functools

import numpy as np

__all__ = ["Metric", "rearrange_inputs"]


def rearrange_inputs(func):
    """Decorator for ``update``: when ``set_indexes`` was called, pick and order the inputs
    by those indexes before ``update`` sees them."""
    @functools.wraps(func)
    def wrapper(self, *inputs):
        indexes = self._indexes
        if indexes is not None:
            if max(indexes) >= len(inputs):
                raise ValueError(f"{type(self).__name__}: set_indexes({indexes}) needs at least "
                                 f"{max(indexes) + 1} inputs, got {len(inputs)}")
            inputs = [inputs[i] for i in indexes]
        return func(self, *inputs)
    return wrapper


class Metric:
    """Base class of metrics: ``clear()`` resets, ``update(*inputs)`` accumulates a batch,
    ``eval()`` returns the value. Calling a metric runs all three on one batch."""

    def __init__(self):
        self._indexes = None

    @staticmethod
    def _convert_data(data):
        """A numpy array from a Tensor, numpy array, list or number."""
        from mscore.common.tensor import Tensor
        if isinstance(data, Tensor):
            arr = data.asnumpy()
            if arr.dtype.name == "bfloat16":
                arr = arr.astype(np.float32)
            return arr
        if isinstance(data, np.ndarray):
            return data
        if isinstance(data, (list, tuple, int, float, np.number, bool)):
            return np.asarray(data)
        raise TypeError(f"The input data type must be a Tensor, list or numpy.ndarray, but got "
                        f"{type(data).__name__}")

    @property
    def indexes(self):
        """The indexes ``set_indexes`` stored (None: inputs are used as given)."""
        return self._indexes

    def set_indexes(self, indexes):
        """Use only the inputs at ``indexes`` (a list of ints), in that order; returns self."""
        if not isinstance(indexes, (list, tuple)) or not all(
                isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in indexes):
            raise ValueError(f"indexes: expected a list of non-negative ints, got {indexes!r}")
        self._indexes = list(indexes)
        return self

    def __call__(self, *inputs):
        self.clear()
        self.update(*inputs)
        return self.eval()

    def clear(self):
        """Reset the accumulated state."""
        raise NotImplementedError(f"{type(self).__name__}.clear is not implemented")

    def update(self, *inputs):
        """Accumulate one batch."""
        raise NotImplementedError(f"{type(self).__name__}.update is not implemented")

    def eval(self):
        """The metric's value over every batch since the last ``clear``."""
        raise NotImplementedError(f"{type(self).__name__}.eval is not implemented")


def _check_two_inputs(name, inputs):
    if len(inputs) != 2:
        raise ValueError(f"For '{name}.update', it needs 2 inputs (predicted value, true "
                         f"value), but got {len(inputs)}.")


def _empty_error(name):
    return RuntimeError(f"The '{name}' can not be calculated, because the number of samples is "
                        f"0, please check whether your inputs (predicted value, true value) are "
                        f"empty, or has called update method before calling eval method.")
