"""Surface distances between two segmentations: ``HausdorffDistance``,
``MeanSurfaceDistance``, ``RootMeanSquareDistance``.

Each ``update(y_pred, y, label_idx)`` takes two label maps of the same shape (or boolean
masks) and the label whose region is compared; the region's surface is the mask minus its
erosion (4-/6-connected, outside the image counts as background), and the distance of a
surface point is the distance transform of the other surface (``'euclidean'``,
``'chessboard'`` or ``'taxicab'``). Each ``update`` replaces the previous one.
"""
from __future__ import annotations

import numpy as np

from mscore.train.metrics._checks import check_optional_type, check_str_choice, check_type
from mscore.train.metrics.metric import (
    Metric,
    check_input_count,
    not_updated_error,
    rearrange_inputs,
)

__all__ = ["HausdorffDistance", "MeanSurfaceDistance", "RootMeanSquareDistance"]

_DISTANCES = ("euclidean", "chessboard", "taxicab")


def _surface(mask):
    from scipy import ndimage
    return ndimage.binary_erosion(mask) ^ mask


def _surface_distances(from_edges, to_edges, distance_metric):
    """Distance from each point of ``from_edges`` to the nearest point of ``to_edges``
    (empty when ``from_edges`` is; inf when ``to_edges`` is)."""
    if not np.any(from_edges):
        return np.array([])
    if not np.any(to_edges):
        return np.full(int(np.count_nonzero(from_edges)), np.inf)
    from scipy import ndimage
    if distance_metric == "euclidean":
        dist = ndimage.distance_transform_edt(~to_edges)
    else:
        dist = ndimage.distance_transform_cdt(~to_edges, metric=distance_metric)
    return dist[from_edges]


def _masks(owner, inputs, label_type_error):
    """The two boolean masks of ``label_idx`` from an update's ``(y_pred, y, label_idx)``."""
    check_input_count(owner, inputs, 3, "(predicted value, true value, label index)")
    y_pred = Metric._convert_data(inputs[0])
    y = Metric._convert_data(inputs[1])
    label_idx = inputs[2]
    if not isinstance(label_idx, (int, float)):
        raise label_type_error(f"For '{owner}.update', the label index (inputs[2]) must be an "
                               f"int or float, but got {type(label_idx).__name__}.")
    if label_idx not in y_pred and label_idx not in y:
        raise ValueError(f"For '{owner}.update', the label index (inputs[2]) must occur in the "
                         f"predicted value or the true value, but {label_idx} does not.")
    if y_pred.size == 0 or y_pred.shape != y.shape:
        raise ValueError(f"For '{owner}.update', the predicted value and the true value must be "
                         f"non-empty and of the same shape, but got shapes {y_pred.shape} and "
                         f"{y.shape}.")
    if y_pred.dtype != bool:
        y_pred = y_pred == label_idx
    if y.dtype != bool:
        y = y == label_idx
    return y_pred, y


def _crop_to_foreground(y_pred, y):
    """Both masks cut to the bounding box of their union (dimensions of size 1 squeezed)."""
    union = y_pred | y
    box = tuple(slice(int(idx.min()), int(idx.max()) + 1) for idx in np.nonzero(union))
    return np.squeeze(y_pred[box]), np.squeeze(y[box])


class HausdorffDistance(Metric):
    """Hausdorff distance: the largest (or the ``percentile``-th, a float in [0, 100]) surface
    distance, the larger of both directions unless ``directed``; ``crop`` cuts both masks to
    their joint bounding box first. inf when the predicted region is empty."""

    def __init__(self, distance_metric="euclidean", percentile=None, directed=False, crop=True):
        super().__init__()
        owner = "HausdorffDistance"
        self.distance_metric = check_str_choice("distance_metric", distance_metric, _DISTANCES,
                                                owner)
        self.percentile = check_optional_type("percentile", percentile, [float], owner)
        self.directed = check_optional_type("directed", directed, [bool], owner)
        self.crop = check_optional_type("crop", crop, [bool], owner)
        self.clear()

    def clear(self):
        """Forget the stored surfaces."""
        self.y_pred_edges = 0
        self.y_edges = 0
        self._is_update = False

    @rearrange_inputs
    def update(self, *inputs):
        """Store the surfaces of ``(y_pred, y, label_idx)``."""
        y_pred, y = _masks("HausdorffDistance", inputs, ValueError)
        if self.crop:
            if not np.any(y_pred | y):
                self.y_pred_edges, self.y_edges = np.zeros_like(y_pred), np.zeros_like(y)
                self._is_update = True
                return
            y_pred, y = _crop_to_foreground(y_pred, y)
        self.y_pred_edges, self.y_edges = _surface(y_pred), _surface(y)
        self._is_update = True

    def _directed(self, from_edges, to_edges):
        distances = _surface_distances(from_edges, to_edges, self.distance_metric)
        if distances.shape == (0,):
            return np.inf
        if not self.percentile:
            return distances.max()
        if 0 <= self.percentile <= 100:
            return np.percentile(distances, self.percentile)
        raise ValueError(f"For 'HausdorffDistance', 'percentile' must be in [0, 100], but got "
                         f"{self.percentile}.")

    def eval(self):
        """The Hausdorff distance."""
        if not self._is_update:
            raise not_updated_error("HausdorffDistance")
        forward = self._directed(self.y_pred_edges, self.y_edges)
        if self.directed:
            return float(forward)
        return float(max(forward, self._directed(self.y_edges, self.y_pred_edges)))


class _SurfaceDistance(Metric):
    """Shared by the mean and root-mean-square surface distances."""

    _label_type_error = ValueError

    def __init__(self, symmetric=False, distance_metric="euclidean"):
        super().__init__()
        owner = type(self).__name__
        self.distance_metric = check_str_choice("distance_metric", distance_metric, _DISTANCES,
                                                owner)
        self.symmetric = check_type("symmetric", symmetric, [bool], owner)
        self.clear()

    def clear(self):
        """Forget the stored surfaces."""
        self._y_pred_edges = 0
        self._y_edges = 0
        self._is_update = False

    @rearrange_inputs
    def update(self, *inputs):
        """Store the surfaces of ``(y_pred, y, label_idx)``."""
        y_pred, y = _masks(type(self).__name__, inputs, self._label_type_error)
        self._y_pred_edges, self._y_edges = _surface(y_pred), _surface(y)
        self._is_update = True

    def _both_directions(self):
        if not self._is_update:
            raise not_updated_error(type(self).__name__)
        forward = _surface_distances(self._y_pred_edges, self._y_edges, self.distance_metric)
        if forward.shape == (0,) or not self.symmetric:
            return forward, None
        return forward, _surface_distances(self._y_edges, self._y_pred_edges,
                                           self.distance_metric)


class MeanSurfaceDistance(_SurfaceDistance):
    """Mean distance from the predicted surface to the true one; with ``symmetric`` the mean
    of both directions' means. inf when a surface it measures from is empty."""

    def eval(self):
        """The mean surface distance."""
        forward, backward = self._both_directions()
        if forward.shape == (0,):
            return np.inf
        if not self.symmetric:
            return float(forward.mean())
        if backward.shape == (0,):
            return np.inf
        return float(np.mean((forward.mean(), backward.mean())))


class RootMeanSquareDistance(_SurfaceDistance):
    """Surface distances squared and averaged: without ``symmetric`` that mean square itself
    (no root, as MindSpore returns it); with ``symmetric`` the root of the mean of both
    directions' mean squares."""

    _label_type_error = TypeError

    def eval(self):
        """The (root) mean square surface distance."""
        forward, backward = self._both_directions()
        if forward.shape == (0,):
            return np.inf
        forward_ms = (forward ** 2).mean()
        if not self.symmetric:
            return float(forward_ms)
        if backward.shape == (0,):
            return np.inf
        return float(np.sqrt(np.mean((forward_ms, (backward ** 2).mean()))))
