"""``nn.Vjp`` and ``nn.Jvp``: cells computing a function's vector-Jacobian and
Jacobian-vector products."""
from __future__ import annotations

import numpy as np

from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.ops.grad import grad, value_and_grad


class Vjp(Cell):
    """``Vjp(fn)(*inputs, v)`` returns ``(fn(*inputs), gradients)``: the gradients of
    ``fn``'s output weighted by ``v`` (its cotangent) with respect to the inputs (one
    Tensor for one input, a tuple for several). MindSpore deprecates it for ``ops.vjp``."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def construct(self, *args):
        inputs = args[:-1]
        if not inputs:
            raise ValueError("For 'Vjp', expected the inputs of 'fn' followed by the "
                             "cotangent 'v'")
        position = 0 if len(inputs) == 1 else tuple(range(len(inputs)))
        return value_and_grad(self.fn, position, sens_param=True)(*args)


class Jvp(Cell):
    """``Jvp(fn)(*inputs, v)`` returns ``(fn(*inputs), jvp)``: the derivative of ``fn``'s
    outputs along the tangent ``v`` (a Tensor for one input, a tuple with one Tensor per
    input for several), shaped as the outputs. MindSpore deprecates it for ``ops.jvp``.

    mscore's autodiff is reverse-mode, so each output element costs one backward pass
    (the Jacobian is built row by row): meant for small outputs, as in tests and checks."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def construct(self, *args):
        if len(args) < 2:
            raise ValueError("For 'Jvp', expected the inputs of 'fn' followed by the "
                             "tangent 'v'")
        *inputs, v = args
        tangents = _tangents(inputs, v)
        out = self.fn(*inputs)
        outs = out if isinstance(out, tuple) else (out,)
        for o in outs:
            if not isinstance(o, Tensor):
                raise TypeError(f"For 'Jvp', 'fn' must return Tensors, got "
                                f"{type(o).__name__}")
        rows = _jacobian_rows(self.fn, inputs, outs)
        result = []
        for o, per_element in zip(outs, rows):
            # d o[i] / d v = sum over inputs of <d o[i] / d input, tangent>
            values = [sum(float((g * t).sum().asnumpy()) for g, t in zip(grads, tangents))
                      for grads in per_element]
            result.append(Tensor(_reshape(values, o), dtype=o.dtype))
        return out, (tuple(result) if isinstance(out, tuple) else result[0])


def _tangents(inputs, v):
    """``v`` as a tuple with one Tensor per input, each shaped as its input."""
    tangents = v if isinstance(v, (tuple, list)) else (v,)
    if len(tangents) != len(inputs):
        raise TypeError(f"For 'Jvp', 'v' must be a Tensor for one input or a tuple of one "
                        f"Tensor per input ({len(inputs)}), got {_describe(v)}")
    for i, (x, t) in enumerate(zip(inputs, tangents)):
        if not isinstance(x, Tensor) or not isinstance(t, Tensor):
            raise TypeError(f"For 'Jvp', input {i} and its tangent in 'v' must be Tensors, "
                            f"got {type(x).__name__} and {type(t).__name__}")
        if tuple(x.shape) != tuple(t.shape):
            raise ValueError(f"For 'Jvp', the tangent of input {i} must have its shape "
                             f"{tuple(x.shape)}, got {tuple(t.shape)}")
    return tuple(tangents)


def _describe(v):
    if isinstance(v, (tuple, list)):
        return f"a {type(v).__name__} of {len(v)}"
    return type(v).__name__


def _jacobian_rows(fn, inputs, outs):
    """For each output, for each of its elements (row-major): the gradients of that element
    with respect to every input (one backward pass with a one-hot cotangent)."""
    positions = tuple(range(len(inputs)))
    backward = grad(fn, positions, sens_param=True)
    zeros = [np.zeros(tuple(o.shape), dtype=np.float32) for o in outs]
    rows = []
    for k, o in enumerate(outs):
        per_element = []
        for i in range(int(np.prod(o.shape, dtype=np.int64))):
            onehot = zeros[k].copy()
            onehot.reshape(-1)[i] = 1.0
            senses = [Tensor(z, dtype=out.dtype) for z, out in zip(zeros, outs)]
            senses[k] = Tensor(onehot, dtype=o.dtype)
            sens = tuple(senses) if len(outs) > 1 else senses[0]
            per_element.append(backward(*inputs, sens))
        rows.append(per_element)
    return rows


def _reshape(values, like):
    return np.asarray(values, dtype=np.float64).reshape(tuple(like.shape))
