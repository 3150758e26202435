"""Receiver operating characteristic: ``ROC`` and the area under a curve, ``auc``."""
from __future__ import annotations

import numpy as np

from mscore.train.metrics._checks import check_optional_type
from mscore.train.metrics.metric import (
    Metric,
    check_input_count,
    not_updated_error,
    rearrange_inputs,
)

__all__ = ["ROC", "auc"]


def _binary_curve(preds, target, pos_label):
    """False and true positive counts at each distinct score, highest score first, and those
    scores."""
    order = np.argsort(-preds, kind="stable")
    preds = preds[order]
    positive = (target[order] == pos_label).astype(np.int64)
    # the last index of each run of equal scores
    ends = np.append(np.nonzero(np.diff(preds))[0], preds.shape[0] - 1)
    tps = np.cumsum(positive)[ends]
    fps = ends + 1 - tps
    return fps, tps, preds[ends]


def _rates(preds, target, pos_label):
    """``(fpr, tpr, thresholds)`` of one binary problem, starting at (0, 0)."""
    if preds.shape[0] != target.shape[0]:
        raise ValueError(f"For 'ROC', the predicted value has {preds.shape[0]} scores but the "
                         f"true value has {target.shape[0]} labels.")
    fps, tps, thresholds = _binary_curve(preds, target, pos_label)
    fps = np.concatenate([np.zeros(1, fps.dtype), fps])
    tps = np.concatenate([np.zeros(1, tps.dtype), tps])
    thresholds = np.concatenate([thresholds[:1] + 1, thresholds])
    if fps[-1] <= 0:
        raise ValueError("For 'ROC.eval', the true value has no negative samples, so the false "
                         "positive rate is undefined.")
    if tps[-1] <= 0:
        raise ValueError("For 'ROC.eval', the true value has no positive samples, so the true "
                         "positive rate is undefined.")
    return fps / fps[-1], tps / tps[-1], thresholds


class ROC(Metric):
    """ROC curve of the last batch given to ``update``.

    Binary: ``y_pred`` and ``y`` have the same shape (scores and labels), ``pos_label``
    (default 1) is the positive class; ``eval`` returns ``(fpr, tpr, thresholds)`` arrays.
    Multi-class: ``y_pred`` is N x C, ``y`` N class indices, ``class_num`` must be C and
    ``pos_label`` None; ``eval`` returns three lists with one array per class (one class
    against the rest).
    """

    def __init__(self, class_num=None, pos_label=None):
        super().__init__()
        self.class_num = check_optional_type("class_num", class_num, [int], "ROC")
        self.pos_label = check_optional_type("pos_label", pos_label, [int], "ROC")
        self.clear()

    def clear(self):
        """Forget the stored batch."""
        self.y_pred = 0
        self.y = 0
        self.sample_weights = None
        self._is_update = False

    def _prepare(self, y_pred, y):
        """Scores and labels flattened, with the class count and positive label they imply."""
        class_num, pos_label = self.class_num, self.pos_label
        if y_pred.ndim == y.ndim:
            if class_num is not None and class_num != 1:
                raise ValueError(f"For 'ROC', scores and labels of the same shape are a binary "
                                 f"problem, so 'class_num' must be 1 or None, but got "
                                 f"{class_num}.")
            return y_pred.reshape(-1), y.reshape(-1), 1, 1 if pos_label is None else pos_label
        if y_pred.ndim == y.ndim + 1:
            if pos_label is not None:
                raise ValueError(f"For 'ROC', multi-class scores (one more dimension than the "
                                 f"labels) need 'pos_label' None, but got {pos_label}.")
            if class_num != y_pred.shape[1]:
                raise ValueError(f"For 'ROC', 'class_num' must equal the number of classes of "
                                 f"the predicted value, but got 'class_num' {class_num} and "
                                 f"{y_pred.shape[1]} classes.")
            return np.moveaxis(y_pred, 1, -1).reshape(-1, class_num), y.reshape(-1), \
                class_num, None
        raise ValueError(f"For 'ROC', the predicted value must have the labels' dimensions or "
                         f"one more, but got {y_pred.ndim} and {y.ndim} dimensions.")

    @rearrange_inputs
    def update(self, *inputs):
        """Store one batch ``(y_pred, y)`` (a second call replaces the first)."""
        check_input_count("ROC", inputs, 2, "(predicted value, true value)")
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        self.y_pred, self.y, self.class_num, self.pos_label = self._prepare(y_pred, y)
        self._is_update = True

    def eval(self):
        """``(fpr, tpr, thresholds)``: arrays (binary) or lists of arrays (per class)."""
        if not self._is_update:
            raise not_updated_error("ROC")
        if self.class_num == 1:
            return _rates(self.y_pred, self.y, self.pos_label)
        curves = [_rates(self.y_pred[:, c], self.y, c) for c in range(self.class_num)]
        return tuple(list(values) for values in zip(*curves))


def _as_column(name, value):
    shape = np.shape(value)
    if len(shape) == 1 or (len(shape) == 2 and shape[1] == 1):
        return np.ravel(value)
    raise ValueError(f"For 'auc', '{name}' must be 1-d or a column (n, 1), but got shape "
                     f"{shape}.")


def auc(x, y, reorder=False):
    """Area under the curve through the points ``(x, y)`` (numpy arrays) by the trapezoidal
    rule; ``x`` must be monotonic unless ``reorder=True`` sorts the points by x."""
    if not isinstance(x, np.ndarray) or not isinstance(y, np.ndarray):
        raise TypeError(f"For 'auc', 'x' and 'y' must be numpy arrays, but got "
                        f"{type(x).__name__} and {type(y).__name__}.")
    if x.ndim == 0 or y.ndim == 0 or x.shape[0] != y.shape[0]:
        raise ValueError(f"For 'auc', 'x' and 'y' must have the same number of points, but "
                         f"got shapes {x.shape} and {y.shape}.")
    x = _as_column("x", x)
    y = _as_column("y", y)
    if x.shape[0] < 2:
        raise ValueError(f"For 'auc', at least 2 points are needed, but got {x.shape[0]}.")
    direction = 1
    if reorder:
        order = np.lexsort((y, x))
        x, y = x[order], y[order]
    else:
        dx = np.diff(x)
        if np.any(dx < 0):
            if not np.all(dx <= 0):
                raise ValueError(f"For 'auc', 'x' must be increasing or decreasing when "
                                 f"'reorder' is False, but got {x}.")
            direction = -1
    widths = np.diff(x)
    heights = (y[1:] + y[:-1]) / 2.0
    return float(direction * np.sum(widths * heights))
