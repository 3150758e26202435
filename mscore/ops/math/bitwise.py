"""Integer bit functions of ``mindspore.ops`` (``bitwise_*``, shifts, ``gcd``, ``lcm``).

They have no backend primitive and no gradient: they compute on the host with numpy (like the
orders of :mod:`mscore.ops.array.sorting`, they run in PyNative mode, not inside a traced
program).
"""
from __future__ import annotations

import numpy as np

from mscore.common.tensor import Tensor
from mscore.ops._args import _host

__all__ = [
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift",
    "gcd", "lcm",
]



def _integer_binary(name, fn):
    def op(input, other):
        a, b = _host(input), _host(other)
        if a.dtype.kind == "f" or b.dtype.kind == "f":
            raise TypeError(f"{name}: expected integer or bool Tensors, got {a.dtype} and "
                            f"{b.dtype}")
        out = fn(a, b)
        dtype = input.dtype if isinstance(input, Tensor) else other.dtype
        return Tensor(np.asarray(out).astype(dtype.np_dtype))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``{name}`` of two integer (or bool) Tensors, elementwise (on the host)."
    return op


bitwise_and = _integer_binary("bitwise_and", np.bitwise_and)


bitwise_or = _integer_binary("bitwise_or", np.bitwise_or)


bitwise_xor = _integer_binary("bitwise_xor", np.bitwise_xor)


bitwise_left_shift = _integer_binary("bitwise_left_shift", np.left_shift)


bitwise_right_shift = _integer_binary("bitwise_right_shift", np.right_shift)


gcd = _integer_binary("gcd", np.gcd)


lcm = _integer_binary("lcm", np.lcm)


def bitwise_not(input):
    """Bitwise NOT of an integer Tensor (logical NOT of a bool one), on the host."""
    a = _host(input)
    if a.dtype.kind == "f":
        raise TypeError(f"bitwise_not: expected an integer or bool Tensor, got {a.dtype}")
    return Tensor(np.invert(a))
