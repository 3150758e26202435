"""``nn.TimeDistributed``: a layer applied to every time slice of a sequence."""
from __future__ import annotations

from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.ops import functional as F
from mscore.ops.array.indexing import unbind
from mscore.ops.primitive_base import Primitive


def _check_int(value, name):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"For 'TimeDistributed', the '{name}' must be int, but got "
                        f"{type(value).__name__}.")
    return value


class TimeDistributed(Cell):
    """``layer`` applied to each slice of the input along ``time_axis``, the results stacked
    back on that axis; with ``reshape_with_axis`` the time axis is folded into that axis
    instead (one call of ``layer`` on a larger batch) and unfolded afterwards.

    ``TimeDistributed(layer, time_axis, reshape_with_axis=None)``; inputs must be at least
    3-d (``ValueError``) Tensors (``TypeError``), as must the layer's outputs.
    """

    def __init__(self, layer, time_axis, reshape_with_axis=None):
        if not isinstance(layer, (Cell, Primitive)):
            raise TypeError(f"For 'TimeDistributed', the 'layer' must be Cell or Primitive "
                            f"instance, but got type: {type(layer).__name__}.")
        super().__init__()
        self.time_axis = _check_int(time_axis, "time_axis")
        if reshape_with_axis is not None:
            _check_int(reshape_with_axis, "reshape_with_axis")
        self.reshape_with_axis = reshape_with_axis
        self.layer = layer

    def construct(self, inputs):
        if not isinstance(inputs, Tensor):
            raise TypeError("For 'TimeDistributed', the inputs and outputs must be a Tensor.")
        if inputs.ndim < 3:
            raise ValueError(f"For 'TimeDistributed', the inputs shape must be at least 3D, but "
                             f"got {inputs.ndim}.")
        time_axis = self.time_axis % inputs.ndim
        if self.reshape_with_axis is not None:
            return self._folded(inputs, time_axis)
        outs = []
        for item in unbind(inputs, time_axis):
            out = self.layer(item)
            _check_output(out)
            if time_axis > out.ndim:
                raise ValueError(f"For 'TimeDistributed', the value of 'time_axis' must be in "
                                 f"range of [{-out.ndim - 1}, {out.ndim}], but got "
                                 f"{time_axis}.")
            outs.append(out)
        return F.stack(outs, time_axis)

    def _folded(self, inputs, time_axis):
        ndim = inputs.ndim
        axis = self.reshape_with_axis % ndim
        if axis == ndim - 1:
            time_new = ndim - 2
        else:
            time_new = axis + 1 if time_axis > axis else axis - 1
        pos = min(time_new, axis)
        perm = list(range(ndim))
        a, b = sorted((time_new, time_axis))
        perm = perm[:a] + [perm[b]] + perm[a:b] + perm[b + 1:]
        x = F.transpose(inputs, tuple(perm))
        shape = x.shape
        x = F.reshape(x, shape[:pos] + (-1,) + shape[pos + 2:])
        out = self.layer(x)
        _check_output(out)
        if pos >= out.ndim or x.shape[pos] != out.shape[pos]:
            raise ValueError(f"For 'TimeDistributed', the 'reshape_with_axis' is invalid in the "
                             f"input and output: input shape {x.shape}, output shape "
                             f"{out.shape}. You may try pass parameters without "
                             f"'reshape_with_axis'.")
        new_shape = out.shape[:pos] + shape[pos:pos + 2] + out.shape[pos + 1:]
        return F.reshape(out, (-1,) + tuple(new_shape[1:]))


def _check_output(out):
    if not isinstance(out, Tensor):
        raise TypeError("For 'TimeDistributed', the inputs and outputs must be a Tensor.")
