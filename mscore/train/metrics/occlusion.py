"""``OcclusionSensitivity``: how much a classifier's score for a label drops when each part of
one image is covered."""
from __future__ import annotations

import numpy as np

from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.train.metrics._checks import check_optional_type, check_type
from mscore.train.metrics.metric import (
    Metric,
    check_input_count,
    not_updated_error,
    rearrange_inputs,
)

__all__ = ["OcclusionSensitivity"]


def _bounding_box(b_box, image_shape):
    """``(lower, upper)`` inclusive corners of ``b_box`` ``[min1, max1, min2, max2, ...]`` (a
    negative min is 0, a negative max the last index), or ``(None, None)``."""
    if b_box is None:
        return None, None
    if len(b_box) != 2 * len(image_shape):
        raise ValueError(f"For 'OcclusionSensitivity', 'b_box' needs a lower and an upper bound "
                         f"for each of the {len(image_shape)} dimensions after the batch, so "
                         f"{2 * len(image_shape)} values, but got {len(b_box)}.")
    lower = np.array(b_box[::2])
    upper = np.array(b_box[1::2])
    lower[lower < 0] = 0
    upper[upper < 0] = image_shape[upper < 0] - 1
    if np.any(upper >= image_shape):
        raise ValueError(f"For 'OcclusionSensitivity', the upper bounds of 'b_box' must be "
                         f"inside the image {tuple(image_shape)}, but got {upper.tolist()}.")
    if np.any(lower > upper):
        raise ValueError(f"For 'OcclusionSensitivity', each lower bound of 'b_box' must not "
                         f"exceed its upper bound, but got {lower.tolist()} and "
                         f"{upper.tolist()}.")
    return lower, upper


class OcclusionSensitivity(Metric):
    """Occlusion sensitivity of ``model`` for one image ``y_pred`` (1 x ...) and ``label``.

    For every position of the image (or of the bounding box ``b_box``), the block from
    ``position - margin`` up to (not including) ``position + margin`` along every dimension
    after the batch is set to ``pad_val``; the result is the model's score for ``label`` on
    the whole image minus its score on the covered one, in the image's (or box's) shape.
    ``n_batch`` covered images go through the model at once. ``margin`` is an int or a list
    with one int per dimension.
    """

    def __init__(self, pad_val=0.0, margin=2, n_batch=128, b_box=None):
        super().__init__()
        owner = "OcclusionSensitivity"
        self.pad_val = check_type("pad_val", pad_val, [float], owner)
        self.margin = check_type("margin", margin, [int, list], owner)
        self.n_batch = check_type("n_batch", n_batch, [int], owner)
        if self.n_batch < 1:
            raise ValueError(f"For '{owner}', 'n_batch' must be at least 1, but got {n_batch}.")
        self.b_box = check_optional_type("b_box", b_box, [list], owner)
        self.clear()

    def clear(self):
        """Forget the stored map."""
        self._baseline = 0
        self._sensitivity_im = 0
        self._is_update = False

    def _margins(self, ndim):
        if isinstance(self.margin, int):
            return [self.margin] * ndim
        if len(self.margin) != ndim or not all(isinstance(m, int) for m in self.margin):
            raise ValueError(f"For 'OcclusionSensitivity', a list 'margin' needs one int per "
                             f"dimension after the batch ({ndim}), but got {self.margin}.")
        return list(self.margin)

    @rearrange_inputs
    def update(self, *inputs):
        """Compute the map for ``(model, y_pred, label)``."""
        check_input_count("OcclusionSensitivity", inputs, 3,
                          "(classification model, predicted value, label)")
        model = inputs[0]
        image = self._convert_data(inputs[1])
        label = inputs[2]
        label = np.array(label) if isinstance(label, int) and not isinstance(label, bool) \
            else self._convert_data(label)
        check_type("model", model, [Cell], "OcclusionSensitivity")
        if image.shape[0] > 1:
            raise RuntimeError(f"For 'OcclusionSensitivity.update', the image (inputs[1]) must "
                               f"have batch size 1, but got {image.shape[0]}.")
        if label.size != image.shape[0]:
            raise RuntimeError(f"For 'OcclusionSensitivity.update', the label (inputs[2]) must "
                               f"have one element per image, but got {label.size} for "
                               f"{image.shape[0]} image(s).")
        label = int(label.reshape(-1)[0])
        image_shape = np.array(image.shape[1:])
        lower, upper = _bounding_box(self.b_box, image_shape)
        margins = self._margins(len(image_shape))
        self._baseline = model(Tensor(image)).asnumpy()[0, label].item()
        out_shape = tuple(image_shape) if lower is None else tuple(upper - lower + 1)
        total = int(np.prod(out_shape))
        scores, batch = [], []
        for i in range(total):
            position = np.array(np.unravel_index(i, out_shape))
            if lower is not None:
                position = position + lower
            block = tuple(slice(max(0, p - m), min(size, p + m))
                          for p, m, size in zip(position, margins, image_shape))
            covered = image.copy()
            covered[(Ellipsis,) + block] = self.pad_val
            batch.append(covered)
            if len(batch) == self.n_batch or i == total - 1:
                out = model(Tensor(np.concatenate(batch, axis=0))).asnumpy()
                scores.append(out[:, label])
                batch = []
        self._sensitivity_im = np.concatenate(scores).reshape(out_shape)
        self._is_update = True

    def eval(self):
        """Baseline score minus the covered scores, in the image's (box's) shape, squeezed."""
        if not self._is_update:
            raise not_updated_error("OcclusionSensitivity")
        return self._baseline - np.squeeze(self._sensitivity_im)
