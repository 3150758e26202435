"""The pieces of a synchronised batch norm that ``mindspore.mint`` exposes (PyTorch's
``torch.batch_norm_stats`` family): each process computes its batch statistics
(:func:`batch_norm_stats`), the statistics of all processes are combined by their element
counts (:func:`batch_norm_gather_stats_with_counts`, which also moves the running
statistics), and each process normalises its batch with the combined ones
(:func:`batch_norm_elemt`)."""
from __future__ import annotations

from mscore import ops
from mscore.common import dtype as mdt
from mscore.common.tensor import Tensor

__all__ = ["batch_norm_stats", "batch_norm_gather_stats_with_counts", "batch_norm_elemt"]


def _tensor(value, name, api):
    if not isinstance(value, Tensor):
        raise TypeError(f"For '{api}', '{name}' must be a Tensor, but got "
                        f"{type(value).__name__}.")
    return value


def _channel_view(t, ndim):
    """A per-channel vector shaped to broadcast over an (N, C, ...) input."""
    return ops.reshape(t, (1, -1) + (1,) * (ndim - 2))


def _reduced_axes(x, api):
    if x.ndim < 2:
        raise ValueError(f"For '{api}', 'input' must have at least 2 dimensions (N, C, ...), "
                         f"but got {x.ndim}.")
    return (0,) + tuple(range(2, x.ndim))


def batch_norm_stats(input, eps):
    """``(mean, invstd)`` of ``input`` (N, C, ...) per channel: the mean and
    ``1 / sqrt(var + eps)`` of the biased variance over every axis but the second, in
    float32 for half-precision inputs."""
    x = _tensor(input, "input", "batch_norm_stats")
    axes = _reduced_axes(x, "batch_norm_stats")
    if not x.dtype.is_floating:
        raise TypeError(f"For 'batch_norm_stats', 'input' must be a float Tensor, but got "
                        f"{x.dtype}.")
    wide = ops.cast(x, mdt.float32) if x.dtype.itemsize < 4 else x
    mean = ops.mean(wide, axes)
    var = ops.mean(ops.square(ops.sub(wide, _channel_view(mean, x.ndim))), axes)
    return mean, ops.rsqrt(ops.add(var, float(eps)))


def batch_norm_elemt(input, weight=None, bias=None, mean=None, invstd=None, eps=1e-05):
    """``(input - mean) * invstd * weight + bias`` per channel of ``input`` (N, C, ...), in
    the input's dtype (``weight`` and ``bias`` optional; ``eps`` is already in ``invstd``)."""
    x = _tensor(input, "input", "batch_norm_elemt")
    _reduced_axes(x, "batch_norm_elemt")
    mean = _tensor(mean, "mean", "batch_norm_elemt")
    invstd = _tensor(invstd, "invstd", "batch_norm_elemt")
    scale = invstd if weight is None else ops.mul(invstd, weight)
    out = ops.mul(ops.sub(x, _channel_view(mean, x.ndim)), _channel_view(scale, x.ndim))
    if bias is not None:
        out = ops.add(out, _channel_view(bias, x.ndim))
    return ops.cast(out, x.dtype)


def batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean=None,
                                        running_var=None, momentum=0.1, eps=1e-05,
                                        counts=None):
    """``(mean, invstd)`` of the union of the batches whose statistics are the rows of
    ``mean`` and ``invstd`` (W, C), weighted by their element ``counts`` (W,); the running
    statistics given are moved towards the combined mean and unbiased variance by
    ``momentum`` in place. ``input`` only supplies the dtype of the result."""
    api = "batch_norm_gather_stats_with_counts"
    _tensor(input, "input", api)
    mean = _tensor(mean, "mean", api)
    invstd = _tensor(invstd, "invstd", api)
    if counts is None:
        raise TypeError(f"For '{api}', 'counts' must be a Tensor, but got NoneType.")
    counts = ops.cast(_tensor(counts, "counts", api), mean.dtype)
    if mean.ndim != 2 or invstd.shape != mean.shape or counts.shape != (mean.shape[0],):
        raise ValueError(f"For '{api}', 'mean' and 'invstd' must be (W, C) and 'counts' (W,), "
                         f"but got {mean.shape}, {invstd.shape} and {counts.shape}.")
    weights = ops.reshape(counts, (-1, 1))
    total = ops.sum(counts)
    combined = ops.div(ops.sum(ops.mul(mean, weights), 0), total)
    var_each = ops.sub(ops.reciprocal(ops.square(invstd)), float(eps))
    spread = ops.add(var_each, ops.square(ops.sub(mean, combined)))
    var = ops.div(ops.sum(ops.mul(spread, weights), 0), total)
    if running_mean is not None:
        running_mean.assign_value(ops.cast(ops.add(ops.mul(running_mean, 1 - momentum),
                                                   ops.mul(combined, momentum)),
                                           running_mean.dtype))
    if running_var is not None:
        unbiased = ops.div(ops.mul(var, total), ops.sub(total, 1.0))
        running_var.assign_value(ops.cast(ops.add(ops.mul(running_var, 1 - momentum),
                                                  ops.mul(unbiased, momentum)),
                                          running_var.dtype))
    return combined, ops.rsqrt(ops.add(var, float(eps)))
