"""Regression and loss metrics: ``MAE``, ``MSE``, ``Loss``."""
from __future__ import annotations

import numpy as np

from mscore.train.metrics.metric import Metric, _check_two_inputs, _empty_error, \
    rearrange_inputs

__all__ = ["MAE", "MSE", "Loss"]


class _ErrorSum(Metric):
    _name = "Metric"

    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self):
        """Reset the sums."""
        self._error_sum = 0.0
        self._samples_num = 0

    def _errors(self, diff):
        raise NotImplementedError

    @rearrange_inputs
    def update(self, *inputs):
        """Accumulate one batch ``(y_pred, y)``; ``y`` is reshaped to ``y_pred``'s shape."""
        _check_two_inputs(self._name, inputs)
        y_pred = self._convert_data(inputs[0]).astype(np.float64)
        y = self._convert_data(inputs[1]).astype(np.float64)
        if y.size != y_pred.size:
            raise ValueError(f"For '{self._name}.update', predicted value has {y_pred.size} "
                             f"elements but true value has {y.size}")
        diff = y.reshape(y_pred.shape) - y_pred
        self._error_sum += float(self._errors(diff).sum())
        self._samples_num += int(y.shape[0]) if y.ndim else 1

    def eval(self):
        """The summed error divided by the number of samples (the first axis)."""
        if self._samples_num == 0:
            raise _empty_error(self._name)
        return self._error_sum / self._samples_num


class MAE(_ErrorSum):
    """Mean absolute error: ``sum |y - y_pred| / N`` with N the number of samples."""

    _name = "MAE"

    def _errors(self, diff):
        return np.abs(diff)


class MSE(_ErrorSum):
    """Mean squared error: ``sum (y - y_pred)^2 / N`` with N the number of samples."""

    _name = "MSE"

    def _errors(self, diff):
        return diff * diff


class Loss(Metric):
    """The mean of the loss values ``update`` receives (one per batch; a 1-d loss is
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
        """Accumulate one loss value (a scalar or 1-d Tensor/array)."""
        if len(inputs) != 1:
            raise ValueError(f"For 'Loss.update', it needs 1 input (loss), but got "
                             f"{len(inputs)}")
        loss = self._convert_data(inputs[0]).astype(np.float64)
        if loss.ndim == 0:
            loss = loss.reshape(1)
        if loss.ndim != 1:
            raise ValueError(f"For 'Loss.update', the dimension of your input (loss) must be 1, "
                             f"but got {loss.ndim}.")
        self._sum_loss += float(loss.mean(-1))
        self._total_num += 1

    def eval(self):
        """The mean loss."""
        if self._total_num == 0:
            raise RuntimeError("The 'Loss' can not be calculated, because the number of samples "
                               "is 0.")
        return self._sum_loss / self._total_num
