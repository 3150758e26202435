"""Classification metrics: ``Accuracy``, ``Precision``, ``Recall``, ``Fbeta`` / ``F1``,
``TopKCategoricalAccuracy`` (and its k = 1 and k = 5 forms)."""
from __future__ import annotations

import sys

import numpy as np

from mscore.train.metrics.metric import (
    LabelMetric,
    Metric,
    check_class_labels,
    check_input_count,
    empty_error,
    is_onehot,
    rearrange_inputs,
)

__all__ = ["Accuracy", "Precision", "Recall", "Fbeta", "F1", "TopKCategoricalAccuracy",
           "Top1CategoricalAccuracy", "Top5CategoricalAccuracy"]

_EPS = sys.float_info.min


def _check_average(owner, average):
    if not isinstance(average, bool):
        raise TypeError(f"For '{owner}', 'average' must be a bool, but got "
                        f"{type(average).__name__}.")


def _one_hot_pairs(name, y_pred, y, class_num):
    """One-hot rows ``(y, predicted class)``, one row per position (classification)."""
    y = check_class_labels(name, y, class_num)
    eye = np.eye(class_num)
    return eye[y], eye[y_pred.argmax(axis=1).reshape(-1)]


def _multilabel_columns(y_pred, y, class_num):
    """Both as ``class_num x positions``: one column per sample (and per spatial position)."""
    return (np.swapaxes(y_pred, 1, 0).reshape(class_num, -1),
            np.swapaxes(y, 1, 0).reshape(class_num, -1))


class Accuracy(LabelMetric):
    """Fraction of samples classified correctly.

    ``eval_type='classification'``: ``y_pred`` is N x C (x ...) scores and ``y`` class indices
    N (x ...) or one-hot N x C (x ...); every position counts. ``'multilabel'``: both are
    N x C (x ...) of 0/1 and a sample counts as correct when all its C labels match.
    ``eval_type`` outside these two is ``TypeError``.
    """

    def __init__(self, eval_type="classification"):
        super().__init__(eval_type)
        self.clear()

    def clear(self):
        """Reset the counts."""
        self._correct_num = 0
        self._total_num = 0
        self._class_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        """Accumulate one batch ``(y_pred, y)``."""
        y_pred, y = self._labels_and_predictions(inputs)
        self._count_classes(y_pred)
        if self._type == "classification":
            result = np.equal(y_pred.argmax(axis=1), y).reshape(-1)
        else:
            rows_pred = np.moveaxis(y_pred, 1, -1).reshape(-1, self._class_num)
            rows_true = np.moveaxis(y, 1, -1).reshape(-1, self._class_num)
            result = np.equal(rows_pred, rows_true).all(axis=1)
        self._correct_num += int(result.sum())
        self._total_num += int(result.shape[0])

    def eval(self):
        """Correct samples / all samples (``RuntimeError`` before any sample)."""
        if self._total_num == 0:
            raise empty_error("Accuracy")
        return float(self._correct_num / self._total_num)


class _PrecisionRecall(LabelMetric):
    """Shared by Precision and Recall: true positives over a per-class (classification) or
    per-sample (multilabel) denominator."""

    def __init__(self, eval_type="classification"):
        super().__init__(eval_type)
        self.eps = _EPS
        self.clear()

    def clear(self):
        """Reset the counts."""
        self._class_num = 0
        if self._type == "multilabel":
            self._true_positives = np.empty(0)
            self._denominators = np.empty(0)
            self._ratio_sum = 0
            self._ratio_count = 0
        else:
            self._true_positives = 0
            self._denominators = 0

    def _denominator(self, y_onehot, pred_onehot):
        raise NotImplementedError

    @rearrange_inputs
    def update(self, *inputs):
        """Accumulate one batch ``(y_pred, y)``."""
        y_pred, y = self._labels_and_predictions(inputs)
        class_num = y_pred.shape[1]
        self._count_classes(y_pred, check_only=True)
        if self._type == "classification":
            y, y_pred = _one_hot_pairs(type(self).__name__, y_pred, y, class_num)
        else:
            y_pred, y = _multilabel_columns(y_pred, y, class_num)
        self._class_num = class_num
        true_positives = (y * y_pred).sum(axis=0)
        denominators = self._denominator(y, y_pred)
        if self._type == "multilabel":
            # MindSpore averages per sample: the mean of each sample's ratio.
            self._ratio_sum += np.sum(true_positives / (denominators + self.eps))
            self._ratio_count += len(denominators)
            self._true_positives = np.concatenate((self._true_positives, true_positives))
            self._denominators = np.concatenate((self._denominators, denominators))
        else:
            self._true_positives = self._true_positives + true_positives
            self._denominators = self._denominators + denominators

    def eval(self, average=False):
        """Per class (classification) or per sample (multilabel) values as a numpy array, or
        their mean with ``average=True``."""
        if self._class_num == 0:
            raise empty_error(type(self).__name__)
        _check_average(type(self).__name__, average)
        result = self._true_positives / (self._denominators + self.eps)
        if not average:
            return result
        if self._type == "multilabel":
            return float(self._ratio_sum / (self._ratio_count + self.eps))
        return float(result.mean())


class Precision(_PrecisionRecall):
    """Precision ``tp / (tp + fp)``: per class for ``'classification'``; per sample for
    ``'multilabel'`` (as MindSpore: each sample's predicted labels), ``eval(average=True)``
    the mean of those values."""

    def _denominator(self, y_onehot, pred_onehot):
        return pred_onehot.sum(axis=0)


class Recall(_PrecisionRecall):
    """Recall ``tp / (tp + fn)``: per class for ``'classification'``; per sample for
    ``'multilabel'`` (each sample's true labels), ``eval(average=True)`` the mean of those
    values."""

    def _denominator(self, y_onehot, pred_onehot):
        return y_onehot.sum(axis=0)


class Fbeta(Metric):
    """Per-class F-beta score ``(1 + b^2) tp / (b^2 (tp + fn) + tp + fp)`` of class scores
    ``y_pred`` (N x C) against class indices or one-hot labels; ``beta`` must be > 0."""

    def __init__(self, beta):
        super().__init__()
        self.eps = _EPS
        try:
            positive = beta > 0
        except TypeError:
            raise TypeError(f"For 'Fbeta', 'beta' must be a number, but got "
                            f"{type(beta).__name__}.") from None
        if not positive:
            raise ValueError(f"For 'Fbeta', 'beta' must be greater than 0, but got {beta}.")
        self.beta = beta
        self.clear()

    def clear(self):
        """Reset the counts."""
        self._true_positives = 0
        self._actual_positives = 0
        self._positives = 0
        self._class_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        """Accumulate one batch ``(y_pred, y)``."""
        name = type(self).__name__
        check_input_count(name, inputs, 2, "(predicted value, true value)")
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if y_pred.ndim == y.ndim and is_onehot(y):
            y = y.argmax(axis=1)
        if self._class_num not in (0, y_pred.shape[1]):
            raise ValueError(f"For '{name}.update', the class number does not match: earlier "
                             f"predictions had {self._class_num} classes, these have "
                             f"{y_pred.shape[1]} (predicted value, inputs[0]).")
        y, y_pred = _one_hot_pairs(name, y_pred, y, y_pred.shape[1])
        self._class_num = y_pred.shape[1]
        self._true_positives = self._true_positives + (y * y_pred).sum(axis=0)
        self._positives = self._positives + y_pred.sum(axis=0)
        self._actual_positives = self._actual_positives + y.sum(axis=0)

    def eval(self, average=False):
        """A numpy array of per-class scores, or their mean with ``average=True``."""
        _check_average(type(self).__name__, average)
        if self._class_num == 0:
            raise empty_error("Fbeta")
        b2 = self.beta ** 2
        fbeta = (1.0 + b2) * self._true_positives / (
            b2 * self._actual_positives + self._positives + self.eps)
        return float(fbeta.mean()) if average else fbeta


class F1(Fbeta):
    """F-beta with beta = 1: the harmonic mean of precision and recall, per class."""

    def __init__(self):
        super().__init__(1.0)


class TopKCategoricalAccuracy(Metric):
    """Fraction of samples whose true class is among the ``k`` highest scores (ties go to the
    lower class index). Labels are class indices or one-hot rows."""

    def __init__(self, k):
        super().__init__()
        if not isinstance(k, int):
            raise TypeError(f"For 'TopKCategoricalAccuracy', 'k' must be an int, but got "
                            f"{type(k).__name__}.")
        if k < 1:
            raise ValueError(f"For 'TopKCategoricalAccuracy', 'k' must be at least 1, but got "
                             f"{k}.")
        self.k = k
        self.clear()

    def clear(self):
        """Reset the counts."""
        self._correct_num = 0
        self._samples_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        """Accumulate one batch ``(y_pred, y)``."""
        check_input_count("TopKCategoricalAccuracy", inputs, 2,
                          "(predicted value, true value)")
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if y_pred.ndim == y.ndim and is_onehot(y):
            y = y.argmax(axis=1)
        top = np.argsort(-y_pred, axis=1, kind="stable")[:, :self.k]
        y = y.reshape(-1, 1)
        if y.shape[0] != top.shape[0]:
            raise ValueError(f"For 'TopKCategoricalAccuracy.update', the predicted value has "
                             f"{top.shape[0]} samples but the true value has {y.shape[0]}.")
        self._correct_num += int(np.equal(top, y).sum())
        self._samples_num += int(y.shape[0])

    def eval(self):
        """Samples with the true class in the top k / all samples."""
        if self._samples_num == 0:
            raise empty_error("TopKCategoricalAccuracy")
        return float(self._correct_num / self._samples_num)


class Top1CategoricalAccuracy(TopKCategoricalAccuracy):
    """Top-k accuracy with k = 1."""

    def __init__(self):
        super().__init__(1)


class Top5CategoricalAccuracy(TopKCategoricalAccuracy):
    """Top-k accuracy with k = 5."""

    def __init__(self):
        super().__init__(5)
