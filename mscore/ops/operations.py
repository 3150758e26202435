"""``mindspore.ops.operations`` (``from mscore.ops import operations as P``): every Primitive
class mscore computes, under MindSpore's names, re-exported from the concept modules."""
from mscore.ops.primitive_base import (
    Primitive)
from mscore.ops.control import (
    Assign, Cast, Depend, Partial, Print, StopGradient)
from mscore.ops.math.elementwise import (
    Abs, Add, Addcmul, AddN, ApplyMomentum, AssignAdd, AssignSub, Ceil, Cos, Div, DivNoNan,
    Equal, Erf, Exp, Expm1, Floor, FloorDiv, FloorMod, Greater, GreaterEqual, IsClose,
    IsFinite, IsInf, IsNan, Less, LessEqual, Log, Log1p, LogicalAnd, LogicalNot, LogicalOr,
    LogicalXor, Maximum, Minimum, Mul, Neg, NotEqual, Pow, RealDiv, Reciprocal, Rsqrt, Select,
    Sign, Sin, Sqrt, Square, SquaredDifference, Sub, Tanh, TensorAdd)
from mscore.ops.array.manipulation import (
    BroadcastTo, Concat, DType, ExpandDims, Flatten, Identity, Pack, Rank, Reshape, Shape,
    Size, Squeeze, Stack, Tile, Transpose)
from mscore.ops.array.creation import (
    Eye, Fill, LinSpace, Ones, OnesLike, Range, Tril, Triu, Zeros, ZerosLike)
from mscore.ops.array.indexing import (
    Gather, GatherD, GatherV2, MaskedFill, OneHot, ReverseV2, Slice, Split, StridedSlice,
    Unpack, Unstack)
from mscore.ops.reduction.reduce import (
    Argmax, ArgMaxWithValue, Argmin, ArgMinWithValue, ReduceAll, ReduceAny, ReduceMax,
    ReduceMean, ReduceMin, ReduceSum)
from mscore.ops.linalg.products import (
    BatchMatMul, BiasAdd, Dense, Ger, MatMul)
from mscore.ops.reduction.cumulative import CumSum
from mscore.ops.linalg.einsum import Einsum
from mscore.ops.random.draws import (
    Dropout, StandardNormal, UniformReal)
from mscore.ops.math.arithmetic import (
    TruncateDiv, TruncateMod)
from mscore.ops.nn.activation import (
    CeLU, Elu, FastGeLU, GeLU, HSigmoid, HSwish, LogSoftmax, Mish, PReLU, ReLU, ReLU6, SeLU,
    Sigmoid, Softmax, Softplus, Softsign)
from mscore.ops.nn.pad_modes import (
    Pad)
from mscore.ops.nn.conv import (
    Conv2D, Conv2DBackpropInput, Conv2DTranspose, Conv3D, Conv3DTranspose)
from mscore.ops.nn.pooling import (
    AvgPool, MaxPool)
from mscore.ops.nn.normalization import (
    BatchNorm, L2Normalize, LayerNorm)
from mscore.ops.nn.loss import (
    BCEWithLogitsLoss, BinaryCrossEntropy, KLDivLoss, L2Loss, NLLLoss,
    SigmoidCrossEntropyWithLogits, SmoothL1Loss, SoftmaxCrossEntropyWithLogits,
    SparseSoftmaxCrossEntropyWithLogits)

from mscore.ops.summary import (
    HistogramSummary, ImageSummary, ScalarSummary, TensorSummary)

# The summary operators stay out of ``__all__`` as in MindSpore's module listing.
__all__ = [
    "Abs", "Add", "AddN", "Addcmul", "ApplyMomentum", "ArgMaxWithValue", "ArgMinWithValue",
    "Argmax", "Argmin", "Assign", "AssignAdd", "AssignSub", "AvgPool", "BCEWithLogitsLoss",
    "BatchMatMul", "BatchNorm", "BiasAdd", "BinaryCrossEntropy", "BroadcastTo", "Cast", "CeLU",
    "Ceil", "Concat", "Conv2D", "Conv2DBackpropInput", "Conv2DTranspose", "Conv3D",
    "Conv3DTranspose", "Cos", "CumSum", "DType", "Dense", "Depend", "Div", "DivNoNan",
    "Dropout", "Elu", "Equal", "Erf", "Exp", "ExpandDims", "Expm1", "Eye", "FastGeLU", "Fill",
    "Flatten", "Floor", "FloorDiv", "FloorMod", "Gather", "GatherD", "GatherV2", "GeLU", "Ger",
    "Greater", "GreaterEqual", "HSigmoid", "HSwish", "Identity", "IsClose", "IsFinite",
    "IsInf", "IsNan", "KLDivLoss", "L2Loss", "L2Normalize", "LayerNorm", "Less", "LessEqual",
    "LinSpace", "Log", "Log1p", "LogSoftmax", "LogicalAnd", "LogicalNot", "LogicalOr",
    "LogicalXor", "MaskedFill", "MatMul", "MaxPool", "Maximum", "Minimum", "Mish", "Mul",
    "NLLLoss", "Neg", "NotEqual", "OneHot", "Ones", "OnesLike", "PReLU", "Pack", "Pad",
    "Partial", "Pow", "Primitive", "Print", "Range", "Rank", "ReLU", "ReLU6", "RealDiv",
    "Reciprocal", "ReduceAll", "ReduceAny", "ReduceMax", "ReduceMean", "ReduceMin",
    "ReduceSum", "Reshape", "ReverseV2", "Rsqrt", "SeLU", "Select", "Shape", "Sigmoid",
    "SigmoidCrossEntropyWithLogits", "Sign", "Sin", "Size", "Slice", "SmoothL1Loss", "Softmax",
    "SoftmaxCrossEntropyWithLogits", "Softplus", "Softsign",
    "SparseSoftmaxCrossEntropyWithLogits", "Split", "Sqrt", "Square", "SquaredDifference",
    "Squeeze", "Stack", "StandardNormal", "StopGradient", "StridedSlice", "Sub", "Tanh",
    "TensorAdd", "Tile", "Transpose", "Tril", "Triu", "TruncateDiv", "TruncateMod",
    "UniformReal", "Unpack", "Unstack",
    "Zeros", "ZerosLike"]

