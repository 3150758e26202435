"""col2im: ``fold`` and ``col2im``, the adjoint of :func:`mscore.ops.nn.image.unfold`.

Each column entry is added into the output position its sliding block covers: the target
positions depend on the shapes only, so they are computed once on the host and the values
go through one ``scatter_add`` (overlapping blocks add up, and the gradient is the
matching gather).
"""
from __future__ import annotations

import math

import numpy as np

from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.ops._args import _check_tensor
from mscore.ops.array.creation import zeros
from mscore.ops.array.indexing import getitem
from mscore.ops.array.manipulation import reshape
from mscore.ops.nn.pooling import _ints

_PRIM = "Col2Im"


def _output_size(output_size):
    if isinstance(output_size, Tensor):
        try:   # a shape: read on the host
            output_size = [int(v) for v in output_size.asnumpy().reshape(-1)]
        except Exception:
            raise TypeError(f"For '{_PRIM}', a Tensor 'output_size' is read on the host; "
                            f"inside a compiled program pass a tuple of 2 ints") from None
    return _ints(output_size, 2, "output_size", _PRIM)


def _block_positions(size, kernel, dilation, padding, stride):
    """For each kernel offset (row-major) and block (row-major), its flat position in the
    padded (H + 2 ph, W + 2 pw) output; and the number of blocks per axis."""
    counts = []
    for n, k, d, p, s in zip(size, kernel, dilation, padding, stride):
        count = (n + 2 * p - d * (k - 1) - 1) // s + 1
        if count <= 0:
            raise ValueError(f"For '{_PRIM}', the kernel {tuple(kernel)} (dilation "
                             f"{tuple(dilation)}) does not fit output_size {tuple(size)} "
                             f"with padding {tuple(padding)}.")
        counts.append(count)
    rows = (np.arange(kernel[0])[:, None] * dilation[0] +
            np.arange(counts[0])[None, :] * stride[0])                 # (kh, oh)
    cols = (np.arange(kernel[1])[:, None] * dilation[1] +
            np.arange(counts[1])[None, :] * stride[1])                 # (kw, ow)
    width = size[1] + 2 * padding[1]
    flat = rows[:, None, :, None] * width + cols[None, :, None, :]    # (kh, kw, oh, ow)
    return flat.reshape(-1), counts


def col2im(input_x, output_size, kernel_size, dilation, padding_value, stride):
    """(N, C, kh * kw, L) columns summed back into (N, C, H, W) images."""
    x = _check_tensor(input_x, "input_x")
    if x.ndim != 4:
        raise ValueError(f"For '{_PRIM}', 'input_x' must be 4-d (N, C, kh * kw, L), got "
                         f"shape {x.shape}")
    size = _output_size(output_size)
    kernel = _ints(kernel_size, 2, "kernel_size", _PRIM)
    dil = _ints(dilation, 2, "dilation", _PRIM)
    pad = _ints(padding_value, 2, "padding_value", _PRIM, minimum=0)
    st = _ints(stride, 2, "stride", _PRIM)
    flat, counts = _block_positions(size, kernel, dil, pad, st)
    n, c, k, blocks = x.shape
    if k != math.prod(kernel):
        raise ValueError(f"For '{_PRIM}', size of input's 3rd dimension must be equal to the "
                         f"product of kernel_size {math.prod(kernel)}, but got {k}.")
    if blocks != math.prod(counts):
        raise ValueError(f"For '{_PRIM}', size of input's 4th dimension must be equal to "
                         f"calculated number of sliding blocks, but got input.size[3]: "
                         f"{blocks}, calculated number of sliding blocks: "
                         f"{math.prod(counts)}. Please refer to Mindspore official website "
                         f"API docs for details about how the number of sliding blocks is "
                         f"calculated.")
    height, width = size[0] + 2 * pad[0], size[1] + 2 * pad[1]
    out = zeros((n, c, height * width), x.dtype)
    index = (slice(None), slice(None), Tensor(flat.astype(np.int64))._data)
    out = Tensor._wrap(call("scatter_add", out._data, index,
                            reshape(x, (n, c, k * blocks))._data))
    out = reshape(out, (n, c, height, width))
    return getitem(out, (slice(None), slice(None), slice(pad[0], pad[0] + size[0]),
                         slice(pad[1], pad[1] + size[1])))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """(N, C * kh * kw, L) sliding-block columns summed back into (N, C, H, W) images
    (the inverse arrangement of ``unfold``; overlaps add)."""
    x = _check_tensor(input, "input")
    kernel = _ints(kernel_size, 2, "kernel_size", _PRIM)
    if x.ndim != 3:
        raise ValueError(f"For 'fold', 'input' must be 3-d (N, C * kh * kw, L), got shape "
                         f"{x.shape}")
    n, ck, blocks = x.shape
    k = math.prod(kernel)
    if ck % k:
        raise ValueError(f"For 'fold', the 2nd dimension of 'input' ({ck}) must be divisible "
                         f"by the product of kernel_size ({k}).")
    return col2im(reshape(x, (n, ck // k, k, blocks)), output_size, kernel, dilation,
                  padding, stride)
