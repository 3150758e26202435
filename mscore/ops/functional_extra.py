"""The Primitive instances ``mindspore.ops.functional`` holds under lowercase names
(``F.tensor_add``, ``F.partial``, ``F.reduce_max``, ...), which MindSpore 1.x-style code
calls like functions."""
from mscore.ops import prim_math, prim_nn, primitives

tensor_add = primitives.Add()
tensor_sub = primitives.Sub()
tensor_mul = primitives.Mul()
tensor_div = primitives.RealDiv()
tensor_exp = primitives.Exp()
tensor_pow = prim_math.Pow()
tensor_ge = prim_math.GreaterEqual()
tensor_le = prim_math.LessEqual()
floordiv = prim_math.FloorDiv()
floormod = prim_math.FloorMod()
reduce_max = prim_math.ReduceMax()
reduce_min = prim_math.ReduceMin()
partial = prim_nn.Partial()

__all__ = ["tensor_add", "tensor_sub", "tensor_mul", "tensor_div", "tensor_exp", "tensor_pow",
           "tensor_ge", "tensor_le", "floordiv", "floormod", "reduce_max", "reduce_min",
           "partial"]
