"""``nn.Vjp``: a cell computing a function's vector-Jacobian product."""
from __future__ import annotations

from mscore.nn.cell import Cell
from mscore.ops.grad import value_and_grad


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
