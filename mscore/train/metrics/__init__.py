"""Evaluation metrics (MindSpore's ``mindspore.train.metrics``) and their string names.

``Model(..., metrics={'accuracy', 'loss'})`` builds them by name with :func:`get_metric_fn`;
:func:`names` lists the names.
"""
from __future__ import annotations

from mscore.plugin.hints import closest_name
from mscore.train.metrics.classification import (
    Accuracy, F1, Fbeta, Precision, Recall, Top1CategoricalAccuracy, Top5CategoricalAccuracy,
    TopKCategoricalAccuracy)
from mscore.train.metrics.confusion import ConfusionMatrix, ConfusionMatrixMetric
from mscore.train.metrics.curves import ROC, auc
from mscore.train.metrics.distance import (
    HausdorffDistance, MeanSurfaceDistance, RootMeanSquareDistance)
from mscore.train.metrics.metric import Metric, rearrange_inputs
from mscore.train.metrics.occlusion import OcclusionSensitivity
from mscore.train.metrics.regression import Loss, MAE, MSE, Perplexity
from mscore.train.metrics.similarity import BleuScore, CosineSimilarity, Dice

__all__ = ["names", "get_metric_fn", "Accuracy", "MAE", "MSE", "Metric", "rearrange_inputs",
           "Precision", "HausdorffDistance", "Recall", "Fbeta", "BleuScore", "CosineSimilarity",
           "OcclusionSensitivity", "F1", "Dice", "ROC", "auc", "TopKCategoricalAccuracy",
           "Top1CategoricalAccuracy", "Top5CategoricalAccuracy", "Loss", "MeanSurfaceDistance",
           "RootMeanSquareDistance", "Perplexity", "ConfusionMatrix", "ConfusionMatrixMetric"]

_NAMES = {
    "accuracy": Accuracy,
    "acc": Accuracy,
    "precision": Precision,
    "recall": Recall,
    "F1": F1,
    "dice": Dice,
    "roc": ROC,
    "auc": auc,
    "bleu_score": BleuScore,
    "cosine_similarity": CosineSimilarity,
    "occlusion_sensitivity": OcclusionSensitivity,
    "topk": TopKCategoricalAccuracy,
    "hausdorff_distance": HausdorffDistance,
    "top_1_accuracy": Top1CategoricalAccuracy,
    "top_5_accuracy": Top5CategoricalAccuracy,
    "mae": MAE,
    "mse": MSE,
    "loss": Loss,
    "mean_surface_distance": MeanSurfaceDistance,
    "root_mean_square_distance": RootMeanSquareDistance,
    "perplexity": Perplexity,
    "confusion_matrix": ConfusionMatrix,
    "confusion_matrix_metric": ConfusionMatrixMetric,
}


def names():
    """The metric names :func:`get_metric_fn` accepts, sorted."""
    return sorted(_NAMES)


def get_metric_fn(name, *args, **kwargs):
    """A new metric for ``name`` (``'accuracy'``, ``'loss'``, ...; see :func:`names`), built
    with the extra arguments; an unknown name is ``KeyError``. (``'auc'`` names the function
    :func:`auc`, which is called with the arguments.)"""
    if not isinstance(name, str) or name not in _NAMES:
        guess = closest_name(name, _NAMES)
        meant = f" (did you mean {guess!r}?)" if guess else ""
        raise KeyError(f"For 'get_metric_fn', unsupported metric {name!r}{meant}; supported: "
                       f"{', '.join(names())}.")
    return _NAMES[name](*args, **kwargs)


def get_metrics(metrics):
    """``{name: Metric}`` from a set of names, or a dict of names to Metric objects (or
    metric names); None gives None. Anything else (a list, a tuple, a str) is a TypeError,
    as in MindSpore."""
    if metrics is None:
        return None
    if isinstance(metrics, dict):
        out = {}
        for key, value in metrics.items():
            if isinstance(value, str):
                value = get_metric_fn(value)
            if not isinstance(key, str) or not isinstance(value, Metric):
                raise TypeError(f"For 'get_metrics', a dict 'metrics' needs str keys and Metric "
                                f"values (or metric names), but got {key!r}: "
                                f"{type(value).__name__}.")
            out[key] = value
        return out
    if isinstance(metrics, (set, frozenset)):
        out = {}
        for name in sorted(metrics):
            if not isinstance(name, str):
                raise TypeError(f"For 'get_metrics', expected metric names (str), but got "
                                f"{type(name).__name__}; use a dict to pass Metric objects.")
            out[name] = get_metric_fn(name)
        return out
    raise TypeError(f"For 'get_metrics', the argument 'metrics' must be None, dict or set, "
                    f"but got {metrics}")
