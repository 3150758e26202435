"""Confusion matrices: ``ConfusionMatrix`` (C x C counts) and ``ConfusionMatrixMetric``
(sensitivity, precision, F1, MCC, ... from true/false positives/negatives of binary masks)."""
from __future__ import annotations

import numpy as np

from mscore.train.metrics._checks import check_choice, check_str_choice, check_type
from mscore.train.metrics.metric import (
    Metric,
    check_input_count,
    empty_error,
    not_updated_error,
    rearrange_inputs,
)

__all__ = ["ConfusionMatrix", "ConfusionMatrixMetric"]

_NORMALIZE = ("target", "prediction", "all", "no_norm")
_DECREASE = ("none", "mean", "sum", "mean_batch", "sum_batch", "mean_channel", "sum_channel")

# every accepted spelling -> the short name of the formula
_METRIC_ALIASES = {
    "tpr": ("sensitivity", "recall", "hit_rate", "true_positive_rate", "tpr"),
    "tnr": ("specificity", "selectivity", "true_negative_rate", "tnr"),
    "ppv": ("precision", "positive_predictive_value", "ppv"),
    "npv": ("negative_predictive_value", "npv"),
    "fnr": ("miss_rate", "false_negative_rate", "fnr"),
    "fpr": ("fall_out", "false_positive_rate", "fpr"),
    "fdr": ("false_discovery_rate", "fdr"),
    "for": ("false_omission_rate", "for"),
    "pt": ("prevalence_threshold", "pt"),
    "ts": ("threat_score", "critical_success_index", "ts", "csi"),
    "acc": ("accuracy", "acc"),
    "ba": ("balanced_accuracy", "ba"),
    "f1": ("f1_score", "f1"),
    "mcc": ("matthews_correlation_coefficient", "mcc"),
    "fm": ("fowlkes_mallows_index", "fm"),
    "bm": ("informedness", "bookmaker_informedness", "bm"),
    "mk": ("markedness", "deltap", "mk"),
}
_METRIC_NAMES = {alias: short for short, aliases in _METRIC_ALIASES.items()
                 for alias in aliases}


class ConfusionMatrix(Metric):
    """``num_classes x num_classes`` counts, rows the true class, columns the predicted one.

    ``y_pred`` is N x C scores (argmax) with ``y`` N labels, or predictions of ``y``'s shape
    (float ones are thresholded at ``threshold``, a float). ``normalize``: ``'no_norm'``,
    ``'target'`` (rows sum to 1), ``'prediction'`` (columns), ``'all'``; empty rows/columns
    give 0.
    """

    def __init__(self, num_classes, normalize="no_norm", threshold=0.5):
        super().__init__()
        self.num_classes = check_type("num_classes", num_classes, [int], "ConfusionMatrix")
        self.normalize = check_choice("normalize", normalize, _NORMALIZE, "ConfusionMatrix")
        self.threshold = check_type("threshold", threshold, [float], "ConfusionMatrix")
        self.clear()

    def clear(self):
        """Reset the counts."""
        self.confusion_matrix = np.zeros((self.num_classes, self.num_classes))
        self._is_update = False

    @rearrange_inputs
    def update(self, *inputs):
        """Add one batch ``(y_pred, y)`` to the counts."""
        check_input_count("ConfusionMatrix", inputs, 2, "(predicted value, true value)")
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if y_pred.ndim == y.ndim + 1:
            y_pred = np.argmax(y_pred, axis=1)
        elif y_pred.ndim != y.ndim:
            raise ValueError(f"For 'ConfusionMatrix.update', the predicted value must have the "
                             f"true value's dimensions or one more, but got {y_pred.ndim} and "
                             f"{y.ndim} dimensions.")
        elif y_pred.dtype.kind == "f":
            y_pred = (y_pred >= self.threshold).astype(np.int64)
        n = self.num_classes
        y = y.reshape(-1).astype(np.int64)
        y_pred = y_pred.reshape(-1).astype(np.int64)
        for what, values in (("true", y), ("predicted", y_pred)):
            if values.size and (values.min() < 0 or values.max() >= n):
                raise ValueError(f"For 'ConfusionMatrix.update', the {what} classes must be in "
                                 f"[0, {n}), but got values in [{values.min()}, "
                                 f"{values.max()}].")
        self.confusion_matrix += np.bincount(y * n + y_pred, minlength=n * n).reshape(n, n)
        self._is_update = True

    def eval(self):
        """The (normalised) confusion matrix, float64."""
        if not self._is_update:
            raise not_updated_error("ConfusionMatrix")
        counts = self.confusion_matrix.astype(float)
        if self.normalize == "no_norm":
            return counts
        if self.normalize == "target":
            total = counts.sum(axis=1, keepdims=True)
        elif self.normalize == "prediction":
            total = counts.sum(axis=0, keepdims=True)
        else:
            total = counts.sum()
        with np.errstate(invalid="ignore", divide="ignore"):
            matrix = counts / total
        matrix[np.isnan(matrix)] = 0
        return matrix


def _confusion_counts(y_pred, y, skip_channel):
    """``[tp, fp, tn, fn]`` per (batch, class) of binary masks N x C x ..., as N x C x 4."""
    if not np.all(y.astype(np.uint8) == y):
        raise ValueError("For 'ConfusionMatrixMetric.update', the true value (inputs[1]) must "
                         "be binary (0 or 1).")
    if y_pred.ndim < 2:
        raise ValueError(f"For 'ConfusionMatrixMetric.update', the predicted value (inputs[0]) "
                         f"must have at least 2 dimensions, but got {y_pred.ndim}.")
    if not skip_channel:  # leave out channel 0 (the background)
        y = y[:, 1:] if y.shape[1] > 1 else y
        y_pred = y_pred[:, 1:] if y_pred.shape[1] > 1 else y_pred
    if y.shape != y_pred.shape:
        raise ValueError(f"For 'ConfusionMatrixMetric.update', the true value and the predicted "
                         f"value must have the same shape, but got {y.shape} and "
                         f"{y_pred.shape}.")
    batch, n_class = y_pred.shape[:2]
    y = y.astype(float).reshape(batch, n_class, -1)
    y_pred = y_pred.astype(float).reshape(batch, n_class, -1)
    tp = (y_pred + y == 2).sum(axis=2).astype(float)
    tn = (y_pred + y == 0).sum(axis=2).astype(float)
    positives = y.sum(axis=2)
    negatives = y.shape[-1] - positives
    return np.stack([tp, negatives - tn, tn, positives - tp], axis=-1)


def _ratio(numerator, denominator):
    return np.where(denominator != 0, numerator / denominator, np.nan)


def _metric_values(metric_name, counts):
    """The metric ``metric_name`` of ``counts`` (... x 4), nan where it is undefined."""
    short = _METRIC_NAMES.get(metric_name.replace(" ", "_").lower())
    if short is None:
        raise NotImplementedError(f"For 'ConfusionMatrixMetric', the metric {metric_name!r} is "
                                  f"not implemented; known: {sorted(_METRIC_NAMES)}.")
    counts = counts[None] if counts.ndim == 1 else counts
    if counts.shape[-1] != 4:
        raise ValueError(f"For 'ConfusionMatrixMetric', the last dimension of the confusion "
                         f"counts must be 4, but got {counts.shape[-1]}.")
    tp, fp, tn, fn = (counts[..., i] for i in range(4))
    p, n = tp + fn, fp + tn
    with np.errstate(invalid="ignore", divide="ignore"):
        tpr, tnr = _ratio(tp, p), _ratio(tn, n)
        ppv, npv = _ratio(tp, tp + fp), _ratio(tn, tn + fn)
        formulas = {
            "tpr": lambda: tpr, "tnr": lambda: tnr, "ppv": lambda: ppv, "npv": lambda: npv,
            "fnr": lambda: _ratio(fn, p), "fpr": lambda: _ratio(fp, n),
            "fdr": lambda: _ratio(fp, fp + tp), "for": lambda: _ratio(fn, fn + tn),
            "pt": lambda: _ratio(np.sqrt(tpr * (1.0 - tnr)) + tnr - 1.0, tpr + tnr - 1.0),
            "ts": lambda: _ratio(tp, tp + fn + fp),
            "acc": lambda: _ratio(tp + tn, p + n),
            "ba": lambda: (tpr + tnr) / 2.0,
            "f1": lambda: _ratio(2.0 * tp, 2.0 * tp + fn + fp),
            "mcc": lambda: _ratio(tp * tn - fp * fn,
                                  np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))),
            "fm": lambda: np.sqrt(ppv * tpr),
            "bm": lambda: tpr + tnr - 1.0,
            "mk": lambda: ppv + npv - 1.0,
        }
        return formulas[short]()


def _reduce(values, decrease):
    """Reduce per (batch, class) values ignoring nans: ``(reduced, count of values used)``."""
    valid = ~np.isnan(values)
    used = valid.astype(float)
    values = np.where(valid, values, 0.0)
    if decrease == "none":
        return values, used
    if decrease == "sum":
        return values.sum(), used.sum()
    axis = {"mean_batch": 0, "sum_batch": 0, "mean_channel": 1, "sum_channel": 1}.get(decrease)
    if decrease.startswith("sum"):
        return values.sum(axis=axis), used.sum(axis=axis)
    if decrease == "mean":  # mean over classes per sample, then over the samples that have one
        per_sample_count = used.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            per_sample = np.where(per_sample_count > 0, values.sum(axis=1) / per_sample_count, 0.0)
        samples = float((per_sample_count > 0).sum())
        return (per_sample.sum() / samples if samples > 0 else 0.0), samples
    count = used.sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, values.sum(axis=axis) / count, 0.0), count


class ConfusionMatrixMetric(Metric):
    """A metric from the confusion counts of binary masks ``y_pred``, ``y`` (N x C x ...).

    ``metric_name``: ``'sensitivity'``/``'recall'``/``'tpr'``, ``'specificity'``,
    ``'precision'``, ``'npv'``, ``'miss_rate'``, ``'fall_out'``, ``'fdr'``, ``'for'``,
    ``'prevalence_threshold'``, ``'threat_score'``, ``'accuracy'``, ``'balanced_accuracy'``,
    ``'f1_score'``, ``'mcc'``, ``'fowlkes_mallows_index'``, ``'informedness'``,
    ``'markedness'`` (and their long/short spellings; an unknown one is
    ``NotImplementedError`` when it is first used). ``calculation_method=False``: counts over
    every batch, ``eval`` returns the metric as a 1-element array. ``True``: the metric per
    sample and class, reduced by ``decrease`` (``'mean'`` or ``'sum'``: one number per batch),
    averaged over batches. ``skip_channel=False`` leaves out channel 0.
    """

    def __init__(self, skip_channel=True, metric_name="sensitivity", calculation_method=False,
                 decrease="mean"):
        super().__init__()
        owner = "ConfusionMatrixMetric"
        self.skip_channel = check_type("skip_channel", skip_channel, [bool], owner)
        self.calculation_method = check_type("calculation_method", calculation_method, [bool],
                                             owner)
        self.metric_name = check_type("metric_name", metric_name, [str], owner)
        self.decrease = check_str_choice("decrease", decrease, _DECREASE, owner)
        self.clear()

    def clear(self):
        """Reset the accumulated counts."""
        self._total_num = 0
        self._class_num = 0
        self._total_tp = 0.0
        self._total_fp = 0.0
        self._total_tn = 0.0
        self._total_fn = 0.0

    @rearrange_inputs
    def update(self, *inputs):
        """Accumulate one batch ``(y_pred, y)`` of binary masks."""
        check_input_count("ConfusionMatrixMetric", inputs, 2, "(predicted value, true value)")
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        counts = _confusion_counts(y_pred, y, self.skip_channel)
        if not self.calculation_method:
            tp, fp, tn, fn = counts.reshape(-1, 4).sum(axis=0)
            self._total_tp += float(tp)
            self._total_fp += float(fp)
            self._total_tn += float(tn)
            self._total_fn += float(fn)
            return
        if y_pred.ndim == 2 or (y_pred.ndim == 3 and y_pred.shape[-1] == 1):
            raise ValueError("For 'ConfusionMatrixMetric.update', calculation_method=True needs "
                             "inputs with spatial dimensions (N x C x ...), but got "
                             f"shape {y_pred.shape}; use calculation_method=False.")
        score, used = _reduce(_metric_values(self.metric_name, counts), self.decrease)
        score, used = np.asarray(score), np.asarray(used)
        if score.size != 1:
            raise ValueError(f"For 'ConfusionMatrixMetric', calculation_method=True averages one "
                             f"number per batch, so 'decrease' must reduce to one value "
                             f"('mean' or 'sum'), but {self.decrease!r} gave shape "
                             f"{score.shape}.")
        used = int(used.item())
        self._total_num += float(score.item()) * used
        self._class_num += used

    def eval(self):
        """The metric: a float (``calculation_method=True``) or a 1-element array."""
        if self.calculation_method:
            if self._class_num == 0:
                raise empty_error("ConfusionMatrixMetric")
            return self._total_num / self._class_num
        counts = np.array([self._total_tp, self._total_fp, self._total_tn, self._total_fn])
        return _metric_values(self.metric_name, counts)
