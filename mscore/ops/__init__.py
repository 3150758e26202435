"""``mindspore.ops``: functional ops and Primitive classes, dispatching to the active backend.

The ops live in modules by concept (:mod:`~mscore.ops.elementwise`, :mod:`~mscore.ops.reduction`,
:mod:`~mscore.ops.manipulation`, :mod:`~mscore.ops.indexing`, :mod:`~mscore.ops.creation`,
:mod:`~mscore.ops.linalg`, :mod:`~mscore.ops.activation`, :mod:`~mscore.ops.conv`,
:mod:`~mscore.ops.pooling`, :mod:`~mscore.ops.normalization`, :mod:`~mscore.ops.loss`,
:mod:`~mscore.ops.random`, ...), each function beside its Primitive class. This module and
MindSpore's other spellings re-export them: ``ops.add``/``ops.MatMul()``,
``from mscore.ops import operations as P``, ``composite as C``, ``functional as F``.
Importing it also attaches Tensor's operator and math methods
(:mod:`mscore.ops.tensor_methods`).
"""
from mscore import dispatch
from mscore.ops.primitive_base import (
    prim_attr_register, Primitive)
from mscore.ops.control import (
    Assign, assign, Cast, cast, Depend, depend, Partial, Print, stop_gradient, StopGradient)
from mscore.ops.elementwise import (
    Abs, abs, absolute, Add, add, Addcmul, addcmul, AddN, addn, ApplyMomentum, assign_add,
    assign_sub, AssignAdd, AssignSub, Ceil, ceil, clamp, clip, clip_by_value, Cos, cos, Div,
    div, divide, DivNoNan, eq, Equal, equal, Erf, erf, Exp, exp, Expm1, expm1, Floor, floor,
    floor_div, floor_divide, floor_mod, FloorDiv, FloorMod, ge, Greater, greater,
    greater_equal, GreaterEqual, gt, IsClose, isclose, IsFinite, isfinite, IsInf, isinf, IsNan,
    isnan, le, Less, less, less_equal, LessEqual, Log, log, Log1p, log1p, logaddexp,
    logical_and, logical_not, logical_or, logical_xor, LogicalAnd, LogicalNot, LogicalOr,
    LogicalXor, lt, Maximum, maximum, Minimum, minimum, Mul, mul, multiply, ne, Neg, neg,
    negative, not_equal, NotEqual, Pow, pow, RealDiv, Reciprocal, reciprocal, remainder, Rsqrt,
    rsqrt, Select, select, Sign, sign, Sin, sin, Sqrt, sqrt, Square, square, SquaredDifference,
    Sub, sub, subtract, Tanh, tanh, TensorAdd, true_divide, where)
from mscore.ops.manipulation import (
    broadcast_to, BroadcastTo, cat, Concat, concat, DType, dtype, expand_dims, ExpandDims,
    Flatten, flatten, flatten_dims, Identity, numel, Pack, permute, Rank, rank, Reshape,
    reshape, Shape, shape, Size, size, Squeeze, squeeze, Stack, stack, swapaxes, swapdims, t,
    Tile, tile, Transpose, transpose, unsqueeze)
from mscore.ops.creation import (
    arange, Eye, eye, Fill, fill, full, full_like, is_tensor, LinSpace, linspace, Ones, ones,
    ones_like, OnesLike, Range, scalar_to_tensor, Tril, tril, Triu, triu, tuple_to_array,
    Zeros, zeros, zeros_like, ZerosLike)
from mscore.ops.indexing import (
    chunk, flip, Gather, gather, gather_d, gather_elements, GatherD, GatherV2, getitem,
    masked_fill, MaskedFill, narrow, one_hot, OneHot, ReverseV2, roll, setitem, Slice, slice,
    Split, split, strided_slice, StridedSlice, unbind, Unpack, Unstack, unstack)
from mscore.ops.reduction import (
    all, amax, amin, any, Argmax, argmax, ArgMaxWithValue, Argmin, argmin, ArgMinWithValue,
    clip_by_global_norm, clip_by_norm, logsumexp, max, mean, min, reduce_mean,
    reduce_sum, ReduceAll, ReduceAny, ReduceMax, ReduceMean, ReduceMin, ReduceSum, std, sum,
    var)
from mscore.ops.linalg import (
    batch_matmul, BatchMatMul, bias_add, BiasAdd, bidense, bmm, cosine_similarity, CumSum,
    cumsum, Dense, dense, Ger, ger, MatMul, matmul, mm, outer)
from mscore.ops.random import (
    Dropout, dropout, dropout1d, dropout2d, dropout3d, normal, rand, randn, standard_normal,
    StandardNormal, uniform, UniformReal)
from mscore.ops.activation import (
    CeLU, celu, Elu, elu, FastGeLU, GeLU, gelu, glu, hardshrink, hardsigmoid, hardswish,
    hardtanh, HSigmoid, HSwish, leaky_relu, log_softmax, logsigmoid, LogSoftmax, Mish, mish,
    PReLU, prelu, ReLU, relu, ReLU6, relu6, rrelu, SeLU, selu, Sigmoid, sigmoid, silu, Softmax,
    softmax, softmin, Softplus, softplus, softshrink, Softsign, softsign, tanhshrink, threshold)
from mscore.ops.pad_modes import (
    Pad, pad)
from mscore.ops.conv import (
    conv, conv1d, Conv2D, conv2d, Conv2DBackpropInput, Conv2DTranspose, Conv3D, conv3d,
    Conv3DTranspose, conv_transpose)
from mscore.ops.pooling import (
    adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d, adaptive_max_pool1d,
    adaptive_max_pool2d, adaptive_max_pool3d, avg_pool, avg_pool2d, AvgPool,
    fractional_max_pool2d, fractional_max_pool3d, lp_pool1d, lp_pool2d, max_pool, max_pool2d,
    max_unpool1d, max_unpool2d, max_unpool3d, MaxPool)
from mscore.ops.normalization import (
    batch_norm, BatchNorm, group_norm, L2Normalize, layer_norm, LayerNorm, lrn)
from mscore.ops.special import (
    digamma, erfinv, i0, igamma, igammac, lgamma)
from mscore.ops.loss import (
    BCEWithLogitsLoss, binary_cross_entropy, binary_cross_entropy_with_logits,
    BinaryCrossEntropy, cross_entropy, kl_div, KLDivLoss, l1_loss, L2Loss, mse_loss, nll_loss,
    NLLLoss, SigmoidCrossEntropyWithLogits, smooth_l1_loss, SmoothL1Loss,
    SoftmaxCrossEntropyWithLogits, SparseSoftmaxCrossEntropyWithLogits)
from mscore.ops.loss_embedding import (
    cosine_embedding_loss, gaussian_nll_loss, hinge_embedding_loss, huber_loss,
    margin_ranking_loss, multi_margin_loss, multilabel_margin_loss,
    multilabel_soft_margin_loss, soft_margin_loss, triplet_margin_loss)
from mscore.ops.image import (
    channel_shuffle, interpolate, pixel_shuffle, pixel_unshuffle, unfold, upsample)
from mscore.ops.attention import (
    scaled_dot_product_attention)
from mscore.ops.ctc import (
    ctc_loss)
from mscore.ops.grad import GradOperation, get_grad, grad, value_and_grad, vjp
from mscore.ops.composite import HyperMap, Map, MultitypeFuncGraph
from mscore.ops.functional import (
    floordiv, floormod, partial, reduce_max, reduce_min, tensor_add, tensor_div, tensor_exp,
    tensor_ge, tensor_le, tensor_mul, tensor_pow, tensor_sub)
from mscore.ops import composite, functional, operations
from mscore.ops import tensor_methods
from mscore.ops.summary import (
    HistogramSummary, ImageSummary, ScalarSummary, TensorSummary)
from mscore.ops.elementwise_extra_func import *
from mscore.ops.array_extra_func import *
from mscore.ops.integer_random_func import *
from mscore.ops.linalg_extra_func import *
from mscore.ops.image_fold import col2im, fold
from mscore.ops import tensor_api as _tensor_api; _tensor_api.attach()  # noqa: E702
