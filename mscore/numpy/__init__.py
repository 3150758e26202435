"""MindSpore's ``mindspore.numpy``: NumPy-style functions on mscore Tensors
(``import mscore.numpy as mnp``).

The functions are thin over :mod:`mscore.ops`, with MindSpore's NumPy defaults (Python ints
become int32, floats float32). The names MindSpore has and mscore leaves out (inverse
trigonometric and bitwise functions, polynomials, histograms, FFT ...) are listed with their
reasons in ``docs/api-coverage.md``.
"""
from mscore.common.dtype import (
    bool_, float16, float32, float64, float_, int8, int16, int32, int64, uint, uint8, uint16,
    uint32, uint64)
import math as _math

from mscore.common.tensor import Tensor as _Tensor
from mscore.numpy import array_creations, array_ops, host_ops, logic_ops, math_ops
from mscore.numpy.array_creations import *
from mscore.numpy.array_ops import *
from mscore.numpy.logic_ops import *
from mscore.numpy.math_ops import *
from mscore.numpy.host_ops import *

ndarray = _Tensor  # MindSpore's arrays are Tensors
inf = PINF = _math.inf
NINF = -_math.inf
nan = _math.nan
pi = _math.pi
int_ = int32  # mindspore.numpy's default integer is int32 (mindspore.int_ is int64)

__all__ = (array_creations.__all__ + array_ops.__all__ + logic_ops.__all__ + math_ops.__all__
           + host_ops.__all__
           + ["bool_", "float16", "float32", "float64", "float_", "int8", "int16", "int32",
              "int64", "int_", "uint", "uint8", "uint16", "uint32", "uint64", "ndarray"])
