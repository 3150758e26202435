"""``Metric``: the base class of evaluation metrics (MindSpore's ``mindspore.train.Metric``),
the ``rearrange_inputs`` decorator and the input checks the metrics share."""
from __future__ import annotations

import functools
from abc import ABCMeta, abstractmethod

import numpy as np

from mscore.common.tensor import Tensor

__all__ = ["Metric", "rearrange_inputs"]

EVAL_TYPES = ("classification", "multilabel")


def rearrange_inputs(func):
    """Decorator for a metric's ``update``: when ``set_indexes`` gave a non-empty list, pass
    the inputs at those indexes, in that order, instead of all of them."""
    @functools.wraps(func)
    def wrapper(self, *inputs):
        indexes = self.indexes
        if indexes:
            try:
                inputs = [inputs[i] for i in indexes]
            except IndexError:
                raise IndexError(f"For '{type(self).__name__}.update', set_indexes({indexes}) "
                                 f"picks an input that does not exist: got {len(inputs)} "
                                 f"input(s).") from None
        return func(self, *inputs)
    return wrapper


class Metric(metaclass=ABCMeta):
    """Base class of metrics: ``clear()`` resets the state, ``update(*inputs)`` accumulates a
    batch, ``eval()`` returns the value. Subclasses must define all three (instantiating one
    that does not is ``TypeError``). Calling a metric runs ``clear``, ``update``, ``eval`` on
    one batch. A value that is one number is a Python ``float`` (MindSpore returns numpy's
    float64, a subclass of float, which numpy 2 prints as ``np.float64(...)``); per-class
    values are numpy arrays, as in MindSpore."""

    def __init__(self):
        self._indexes = None

    @staticmethod
    def _convert_data(data):
        """A numpy array from a Tensor, a list or a numpy array (anything else is
        ``TypeError``, as in MindSpore)."""
        if isinstance(data, Tensor):
            arr = data.asnumpy()
            return arr.astype(np.float32) if arr.dtype.name == "bfloat16" else arr
        if isinstance(data, list):
            return np.array(data)
        if isinstance(data, np.ndarray):
            return data
        raise TypeError(f"For 'Metric' and its subclasses, an input must be a Tensor, list or "
                        f"numpy.ndarray, but got {type(data).__name__}.")

    @property
    def indexes(self):
        """The list ``set_indexes`` stored, or None (inputs are used as given)."""
        return getattr(self, "_indexes", None)

    def set_indexes(self, indexes):
        """Make ``update`` (when decorated with :func:`rearrange_inputs`) use the inputs at
        ``indexes`` (a list of ints), in that order; returns the metric itself."""
        if not isinstance(indexes, list) or not all(isinstance(i, int) for i in indexes):
            raise ValueError("For 'set_indexes', the argument 'indexes' must be a list and all "
                             "its elements must be int, please check whether it is correct.")
        self._indexes = indexes
        return self

    def __call__(self, *inputs):
        self.clear()
        self.update(*inputs)
        return self.eval()

    @abstractmethod
    def clear(self):
        """Reset the accumulated state."""
        raise NotImplementedError(f"{type(self).__name__}.clear is not implemented")

    @abstractmethod
    def eval(self):
        """The metric's value over every batch since the last ``clear``."""
        raise NotImplementedError(f"{type(self).__name__}.eval is not implemented")

    @abstractmethod
    def update(self, *inputs):
        """Accumulate one batch."""
        raise NotImplementedError(f"{type(self).__name__}.update is not implemented")


class LabelMetric(Metric):
    """A metric of predictions against labels with an ``eval_type``: ``'classification'``
    (``y_pred`` is N x C x ... scores, ``y`` class indices N x ... or one-hot like ``y_pred``)
    or ``'multilabel'`` (both N x C x ... of 0/1)."""

    def __init__(self, eval_type):
        super().__init__()
        if eval_type not in EVAL_TYPES:
            raise TypeError(f"For '{type(self).__name__}', 'eval_type' must be one of "
                            f"{list(EVAL_TYPES)}, but got {eval_type!r}.")
        self._type = eval_type

    def _labels_and_predictions(self, inputs):
        """``(y_pred, y)`` from an update's inputs, checked; one-hot labels become indices."""
        check_input_count(type(self).__name__, inputs, 2, "(predicted value, true value)")
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if self._type == "classification" and y_pred.ndim == y.ndim and is_onehot(y):
            y = y.argmax(axis=1)
        self._check_shape(y_pred, y)
        if self._type == "multilabel" and not (is_binary(y_pred) and is_binary(y)):
            raise ValueError(f"For '{type(self).__name__}.update' (multilabel), every element of "
                             f"the predicted and true values must be 0 or 1.")
        return y_pred, y

    def _check_shape(self, y_pred, y):
        name = type(self).__name__
        if self._type == "classification":
            if y_pred.ndim != y.ndim + 1:
                raise ValueError(f"For '{name}.update' (classification), y_pred must have one "
                                 f"dimension more than y (the class axis 1), but got y_pred "
                                 f"shape {y_pred.shape} and y shape {y.shape}.")
            if y.shape != (y_pred.shape[0],) + y_pred.shape[2:]:
                raise ValueError(f"For '{name}.update' (classification), y must have y_pred's "
                                 f"shape without axis 1, but got y_pred shape {y_pred.shape} and "
                                 f"y shape {y.shape}.")
        elif y_pred.shape != y.shape:
            raise ValueError(f"For '{name}.update' (multilabel), y_pred and y must have the same "
                             f"shape, but got {y_pred.shape} and {y.shape}.")

    def _count_classes(self, y_pred, check_only=False):
        """Remember the class count of the first batch; a later batch must have the same."""
        if self._class_num == 0:
            if not check_only:
                self._class_num = y_pred.shape[1]
        elif y_pred.shape[1] != self._class_num:
            raise ValueError(f"For '{type(self).__name__}.update', the class number does not "
                             f"match: earlier predictions had {self._class_num} classes, these "
                             f"have {y_pred.shape[1]} (predicted value, inputs[0]).")


def is_binary(data):
    """True when every element is 0 or 1."""
    return bool(np.equal(data ** 2, data).all())


def is_onehot(data):
    """True when ``data`` (N x C x ...) holds one 1 per position along axis 1, zeros else."""
    return data.ndim > 1 and is_binary(data) and bool(np.equal(data.sum(axis=1), 1).all())


def check_input_count(name, inputs, count, what):
    """``ValueError`` unless ``update`` got ``count`` inputs."""
    if len(inputs) != count:
        plural = "input" if count == 1 else "inputs"
        raise ValueError(f"For '{name}.update', it needs {count} {plural} {what}, but got "
                         f"{len(inputs)}.")


def check_class_labels(name, y, class_num):
    """Integer class indices in ``[0, class_num)`` (``ValueError`` otherwise)."""
    y = np.asarray(y).reshape(-1)
    if y.size and (y.max() + 1 > class_num or y.min() < 0):
        raise ValueError(f"For '{name}.update', the true value (inputs[1]) must hold class "
                         f"indices in [0, {class_num}) as the predictions have {class_num} "
                         f"classes, but got values in [{y.min()}, {y.max()}].")
    if y.dtype.kind == "f":
        if not np.equal(np.round(y), y).all():
            raise ValueError(f"For '{name}.update', the true value (inputs[1]) must hold class "
                             f"indices, but got non-integer values.")
    return y.astype(np.int64)


def empty_error(name):
    """The ``RuntimeError`` of ``eval`` before any sample was seen."""
    return RuntimeError(f"The '{name}' can not be calculated, because the number of samples is "
                        f"0; call update with non-empty inputs before eval.")


def not_updated_error(name):
    """The ``RuntimeError`` of ``eval`` before ``update``."""
    return RuntimeError(f"For '{name}', call the 'update' method before the 'eval' method.")
