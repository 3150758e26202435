"""Regression and loss-like metrics: ``MAE``, ``MSE``, ``Loss``, ``Perplexity``."""
from __future__ import annotations

import math

import numpy as np

from mscore.train.metrics._checks import check_optional_type
from mscore.train.metrics.metric import Metric, check_input_count, empty_error, rearrange_inputs

__all__ = ["MAE", "MSE", "Loss", "Perplexity"]


class _ErrorSum(Metric):
    """A per-element error summed over every batch, divided by the number of samples (the
    rows of the true values)."""

    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self):
        """Reset the sums."""
        self._error_sum = 0.0
        self._samples_num = 0

    @staticmethod
    def _errors(diff):
        raise NotImplementedError

    @rearrange_inputs
    def update(self, *inputs):
        """Accumulate one batch ``(y_pred, y)``; ``y`` is reshaped to ``y_pred``'s shape."""
        name = type(self).__name__
        check_input_count(name, inputs, 2, "(predicted value, true value)")
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if y.size != y_pred.size:
            raise ValueError(f"For '{name}.update', the true value ({y.size} elements) cannot "
                             f"be reshaped to the predicted value's shape {y_pred.shape}.")
        diff = y.reshape(y_pred.shape).astype(np.float64) - y_pred.astype(np.float64)
        self._error_sum += float(self._errors(diff).sum())
        self._samples_num += y.shape[0]

    def eval(self):
        """The summed error divided by the number of samples."""
        if self._samples_num == 0:
            raise empty_error(type(self).__name__)
        return float(self._error_sum / self._samples_num)


class MAE(_ErrorSum):
    """Mean absolute error: ``sum |y - y_pred| / N`` with N the rows of ``y``."""

    @staticmethod
    def _errors(diff):
        return np.abs(diff)


class MSE(_ErrorSum):
    """Mean squared error: ``sum (y - y_pred)^2 / N`` with N the rows of ``y``."""

    @staticmethod
    def _errors(diff):
        return diff * diff


class Loss(Metric):
    """The mean of the losses ``update`` receives: one value per batch (a 1-d loss is
    averaged first)."""

    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self):
        """Reset the sum."""
        self._sum_loss = 0.0
        self._total_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        """Accumulate one loss (a 0-d or 1-d Tensor, list or array)."""
        check_input_count("Loss", inputs, 1, "(loss)")
        loss = self._convert_data(inputs[0])
        if loss.ndim == 0:
            loss = loss.reshape(1)
        if loss.ndim != 1:
            raise ValueError(f"For 'Loss.update', the loss must be 0-d or 1-d, but got "
                             f"{loss.ndim} dimensions.")
        self._sum_loss += float(loss.astype(np.float64).mean())
        self._total_num += 1

    def eval(self):
        """The mean loss (``RuntimeError`` before ``update``)."""
        if self._total_num == 0:
            raise empty_error("Loss")
        return float(self._sum_loss / self._total_num)


class Perplexity(Metric):
    """``exp`` of the mean negative log-probability of the labels: ``y_pred`` holds
    probabilities (... x C), ``labels`` one class index per row; rows whose label equals
    ``ignore_label`` (an int or None) are left out."""

    def __init__(self, ignore_label=None):
        super().__init__()
        self.ignore_label = check_optional_type("ignore_label", ignore_label, [int],
                                                "Perplexity")
        self.clear()

    def clear(self):
        """Reset the sums."""
        self._sum_metric = 0.0
        self._num_inst = 0

    @rearrange_inputs
    def update(self, *inputs):
        """Accumulate one batch ``(y_pred, labels)``."""
        check_input_count("Perplexity", inputs, 2, "(predicted value, label)")
        pred = self._convert_data(inputs[0])
        label = self._convert_data(inputs[1])
        classes = pred.shape[-1] if pred.ndim else 0
        if not classes or label.size * classes != pred.size:
            raise RuntimeError(f"For 'Perplexity.update', the label (inputs[1]) needs one entry "
                               f"per row of the predicted value (inputs[0]), but got predicted "
                               f"value shape {pred.shape} and label shape {label.shape}.")
        label = label.reshape(-1)
        probs = pred.reshape(-1, classes)[np.arange(label.size), label.astype(np.int64)]
        probs = probs.astype(np.float64)
        count = probs.size
        if self.ignore_label is not None:
            ignored = label == self.ignore_label
            count -= int(ignored.sum())
            probs = np.where(ignored, 1.0, probs)
        self._sum_metric -= float(np.sum(np.log(np.maximum(1e-10, probs))))
        self._num_inst += count

    def eval(self):
        """The perplexity (``RuntimeError`` before any counted label)."""
        if self._num_inst == 0:
            raise empty_error("Perplexity")
        return math.exp(self._sum_metric / self._num_inst)
