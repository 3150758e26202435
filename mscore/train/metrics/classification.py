"""Classification metrics: ``Accuracy``, ``Precision``, ``Recall``, ``F1`` / ``Fbeta``,
``TopKCategoricalAccuracy``."""
from __future__ import annotations

import sys

import numpy as np

from mscore.train.metrics.metric import Metric, _check_two_inputs, _empty_error, \
    rearrange_inputs

__all__ = ["Accuracy", "Precision", "Recall", "Fbeta", "F1", "TopKCategoricalAccuracy",
           "Top1CategoricalAccuracy", "Top5CategoricalAccuracy"]

_EPS = sys.float_info.min


def _check_eval_type(eval_type):
    if eval_type not in ("classification", "multilabel"):
        raise ValueError(f"eval_type: expected 'classification' or 'multilabel', got "
                         f"{eval_type!r}")
    return eval_type


def _is_onehot(y_pred, y):
    """True when ``y`` holds one-hot rows like ``y_pred`` (rather than class indices)."""
    return y.ndim == y_pred.ndim and y.ndim > 1 and y.shape == y_pred.shape


def _class_indices(name, y_pred, y):
    if y_pred.ndim < 2:
        raise ValueError(f"For '{name}.update', the predicted value must be N x C scores, got "
                         f"shape {y_pred.shape}")
    if _is_onehot(y_pred, y):
        y = y.argmax(axis=1)
    y = y.reshape(-1)
    if y.shape[0] != y_pred.shape[0]:
        raise ValueError(f"For '{name}.update', predicted value has {y_pred.shape[0]} samples "
                         f"but true value has {y.shape[0]}")
    return y


class Accuracy(Metric):
    """Fraction of samples classified correctly.

    ``eval_type='classification'``: ``y_pred`` is N x C scores and ``y`` class indices (N,)
    or one-hot (N, C); ``'multilabel'``: both N x C of 0/1 and a sample counts when every
    label matches.
    """

    def __init__(self, eval_type="classification"):
        super().__init__()
        self._type = _check_eval_type(eval_type)
        self.clear()

    def clear(self):
        """Reset the counts."""
        self._correct_num = 0
        self._total_num = 0
        self._class_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        """Accumulate one batch ``(y_pred, y)``."""
        _check_two_inputs("Accuracy", inputs)
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if self._type == "classification":
            y = _class_indices("Accuracy", y_pred, y)
            if self._class_num == 0:
                self._class_num = y_pred.shape[1]
            elif y_pred.shape[1] != self._class_num:
                raise ValueError(f"For 'Accuracy.update', class number not match, last input "
                                 f"predicted data contain {self._class_num} classes, but "
                                 f"current predicted data contain {y_pred.shape[1]} classes, "
                                 f"please check your predicted value (inputs[0]).")
            result = (np.equal(y_pred.argmax(axis=1), y) * 1).reshape(-1)
        else:
            if y_pred.shape != y.shape:
                raise ValueError(f"For 'Accuracy.update' (multilabel), predicted and true values "
                                 f"must have the same shape, got {y_pred.shape} and {y.shape}")
            y_pred = y_pred.reshape(y_pred.shape[0], -1)
            y = y.reshape(y.shape[0], -1)
            result = np.equal(np.round(y_pred), y).all(axis=1) * 1
        self._correct_num += int(result.sum())
        self._total_num += int(result.shape[0])

    def eval(self):
        """Correct samples / all samples."""
        if self._total_num == 0:
            raise _empty_error("Accuracy")
        return self._correct_num / self._total_num


class _ConfusionCounts(Metric):
    """Per-class true positives, predicted positives and actual positives."""

    _name = "Metric"

    def __init__(self, eval_type="classification"):
        super().__init__()
        self._type = _check_eval_type(eval_type)
        self.clear()

    def clear(self):
        """Reset the counts."""
        self._class_num = 0
        self._true_positives = 0
        self._positives = 0
        self._actual_positives = 0

    @rearrange_inputs
    def update(self, *inputs):
        """Accumulate one batch ``(y_pred, y)``."""
        _check_two_inputs(self._name, inputs)
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if self._type == "classification":
            y = _class_indices(self._name, y_pred, y)
            n_class = y_pred.shape[1]
            if y.size and (y.min() < 0 or y.max() >= n_class):
                raise ValueError(f"For '{self._name}.update', labels must be in [0, {n_class}), "
                                 f"got values in [{y.min()}, {y.max()}]")
            y_onehot = np.eye(n_class)[y.astype(np.int64)]
            pred_onehot = np.eye(n_class)[y_pred.argmax(axis=1)]
        else:
            if y_pred.shape != y.shape:
                raise ValueError(f"For '{self._name}.update' (multilabel), predicted and true "
                                 f"values must have the same shape, got {y_pred.shape} and "
                                 f"{y.shape}")
            n_class = y_pred.shape[1]
            y_onehot = y.reshape(-1, n_class).astype(np.float64)
            pred_onehot = np.round(y_pred).reshape(-1, n_class).astype(np.float64)
        if self._class_num == 0:
            self._class_num = n_class
        elif n_class != self._class_num:
            raise ValueError(f"For '{self._name}.update', class number not match: "
                             f"{self._class_num} before, {n_class} now")
        self._true_positives = self._true_positives + (y_onehot * pred_onehot).sum(axis=0)
        self._positives = self._positives + pred_onehot.sum(axis=0)
        self._actual_positives = self._actual_positives + y_onehot.sum(axis=0)

    def _check_eval(self, average):
        if not isinstance(average, bool):
            raise TypeError(f"average: expected a bool, got {type(average).__name__}")
        if self._class_num == 0:
            raise _empty_error(self._name)


class Precision(_ConfusionCounts):
    """Per-class precision ``tp / (tp + fp)``; ``eval(average=True)`` gives their mean."""

    _name = "Precision"

    def eval(self, average=False):
        """A numpy array of per-class precisions, or their mean with ``average=True``."""
        self._check_eval(average)
        result = self._true_positives / (self._positives + _EPS)
        return float(result.mean()) if average else result


class Recall(_ConfusionCounts):
    """Per-class recall ``tp / (tp + fn)``; ``eval(average=True)`` gives their mean."""

    _name = "Recall"

    def eval(self, average=False):
        """A numpy array of per-class recalls, or their mean with ``average=True``."""
        self._check_eval(average)
        result = self._true_positives / (self._actual_positives + _EPS)
        return float(result.mean()) if average else result


class Fbeta(_ConfusionCounts):
    """Per-class F-beta score ``(1 + b^2) tp / (b^2 (tp + fn) + tp + fp)``."""

    _name = "Fbeta"

    def __init__(self, beta):
        if not isinstance(beta, (int, float)) or isinstance(beta, bool) or beta <= 0:
            raise ValueError(f"beta: expected a positive number, got {beta!r}")
        self.beta = float(beta)
        super().__init__("classification")

    def eval(self, average=False):
        """A numpy array of per-class scores, or their mean with ``average=True``."""
        self._check_eval(average)
        b2 = self.beta ** 2
        result = (1 + b2) * self._true_positives / (
            b2 * self._actual_positives + self._positives + _EPS)
        return float(result.mean()) if average else result


class F1(Fbeta):
    """F-beta with beta = 1: the harmonic mean of precision and recall, per class."""

    _name = "F1"

    def __init__(self):
        super().__init__(1.0)


class TopKCategoricalAccuracy(Metric):
    """Fraction of samples whose true class is among the ``k`` highest scores."""

    def __init__(self, k):
        super().__init__()
        if not isinstance(k, int) or isinstance(k, bool):
            raise TypeError(f"k: expected an int, got {type(k).__name__}")
        if k < 1:
            raise ValueError(f"k: expected an int >= 1, got {k}")
        self.k = k
        self.clear()

    def clear(self):
        """Reset the counts."""
        self._correct_num = 0
        self._samples_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        """Accumulate one batch ``(y_pred, y)``."""
        _check_two_inputs("TopKCategoricalAccuracy", inputs)
        y_pred = self._convert_data(inputs[0])
        y = _class_indices("TopKCategoricalAccuracy", y_pred, self._convert_data(inputs[1]))
        # stable sort of -scores: ties go to the lower class index, as argmax does
        top = np.argsort(-y_pred, axis=1, kind="stable")[:, :self.k]
        correct = np.equal(top, y.reshape(-1, 1)).any(axis=1)
        self._correct_num += int(correct.sum())
        self._samples_num += int(y.shape[0])

    def eval(self):
        """Samples with the true class in the top k / all samples."""
        if self._samples_num == 0:
            raise _empty_error("TopKCategoricalAccuracy")
        return self._correct_num / self._samples_num


class Top1CategoricalAccuracy(TopKCategoricalAccuracy):
    """Top-k accuracy with k = 1."""

    def __init__(self):
        super().__init__(1)


class Top5CategoricalAccuracy(TopKCategoricalAccuracy):
    """Top-k accuracy with k = 5."""

    def __init__(self):
        super().__init__(5)
