"""Evaluation metrics (MindSpore's ``mindspore.train.metrics``) and their string names.

``Model(..., metrics={'accuracy', 'loss'})`` builds them by name with :func:`get_metric_fn`;
:func:`names` lists the names.
"""
from __future__ import annotations

from mscore.train.metrics.classification import (  # noqa: F401
    Accuracy, F1, Fbeta, Precision, Recall, Top1CategoricalAccuracy, Top5CategoricalAccuracy,
    TopKCategoricalAccuracy)
from mscore.train.metrics.metric import Metric, rearrange_inputs  # noqa: F401
from mscore.train.metrics.regression import Loss, MAE, MSE  # noqa: F401

__all__ = ["Metric", "rearrange_inputs", "Accuracy", "Precision", "Recall", "Fbeta", "F1",
           "TopKCategoricalAccuracy", "Top1CategoricalAccuracy", "Top5CategoricalAccuracy",
           "MAE", "MSE", "Loss", "get_metric_fn", "get_metrics", "names"]

_NAMES = {
    "accuracy": Accuracy,
    "acc": Accuracy,
    "precision": Precision,
    "recall": Recall,
    "F1": F1,
    "f1": F1,
    "topk": TopKCategoricalAccuracy,
    "top_1_accuracy": Top1CategoricalAccuracy,
    "top_5_accuracy": Top5CategoricalAccuracy,
    "mae": MAE,
    "mse": MSE,
    "loss": Loss,
}


def names():
    """The metric names :func:`get_metric_fn` accepts, sorted."""
    return sorted(_NAMES)


def get_metric_fn(name, *args, **kwargs):
    """A new metric object for ``name`` (``'accuracy'``, ``'loss'``, ...); extra arguments go
    to its constructor."""
    if not isinstance(name, str):
        raise TypeError(f"name: expected a str, got {type(name).__name__}")
    if name not in _NAMES:
        raise KeyError(f"Unknown Metric function {name!r}; supported: {names()}")
    return _NAMES[name](*args, **kwargs)


def get_metrics(metrics):
    """``{name: Metric}`` from a set/list of names, or a dict of names to Metric objects or
    names; None gives None."""
    if metrics is None:
        return None
    if isinstance(metrics, dict):
        out = {}
        for key, value in metrics.items():
            if not isinstance(key, str):
                raise TypeError(f"metrics: dict keys must be str, got {type(key).__name__}")
            if isinstance(value, str):
                value = get_metric_fn(value)
            if not isinstance(value, Metric):
                raise TypeError(f"metrics: the value of {key!r} must be a Metric or a metric "
                                f"name, got {type(value).__name__}")
            out[key] = value
        return out
    if isinstance(metrics, (set, frozenset, list, tuple)):
        out = {}
        for name in sorted(metrics) if isinstance(metrics, (set, frozenset)) else metrics:
            if not isinstance(name, str):
                raise TypeError(f"metrics: expected metric names (str), got "
                                f"{type(name).__name__}; use a dict to pass Metric objects")
            out[name] = get_metric_fn(name)
        return out
    raise TypeError(f"metrics: expected a set or dict, got {type(metrics).__name__}")
