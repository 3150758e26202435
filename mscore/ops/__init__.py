"""``mindspore.ops``: functional ops and Primitive classes, dispatching to the active backend.

The ops live in packages by concept, each function beside its Primitive class:
:mod:`~mscore.ops.math` (elementwise arithmetic, comparisons, trigonometry, complex parts,
bit functions, special functions), :mod:`~mscore.ops.array` (creation, shape manipulation,
indexing and scatter, sorting and searching), :mod:`~mscore.ops.reduction` (reductions,
running reductions, statistics), :mod:`~mscore.ops.linalg` (products, matrix functions),
:mod:`~mscore.ops.random` (draws, ``Generator``) and :mod:`~mscore.ops.nn` (activations,
convolution, pooling, normalisation, losses, attention, padding, image functions); the
Primitive base, control ops, ``grad`` and the multi-tensor kernels are modules of this
package. This module and MindSpore's other spellings re-export them: ``ops.add``/``ops.MatMul()``,
``from mscore.ops import operations as P``, ``composite as C``, ``functional as F``.
Importing it also attaches Tensor's methods (:mod:`mscore.ops.tensor_api`).
"""
from mscore import dispatch
from mscore.ops.primitive_base import (
    prim_attr_register, Primitive)
from mscore.ops.control import (
    Assign, assign, Cast, cast, Depend, depend, Partial, Print, stop_gradient, StopGradient)
from mscore.ops.math.elementwise import (
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
from mscore.ops.array.manipulation import (
    broadcast_to, BroadcastTo, cat, Concat, concat, DType, dtype, expand_dims, ExpandDims,
    Flatten, flatten, flatten_dims, Identity, numel, Pack, permute, Rank, rank, Reshape,
    reshape, Shape, shape, Size, size, Squeeze, squeeze, Stack, stack, swapaxes, swapdims, t,
    Tile, tile, Transpose, transpose, unsqueeze)
from mscore.ops.array.creation import (
    arange, Eye, eye, Fill, fill, full, full_like, is_tensor, LinSpace, linspace, Ones, ones,
    ones_like, OnesLike, Range, scalar_to_tensor, Tril, tril, Triu, triu, tuple_to_array,
    Zeros, zeros, zeros_like, ZerosLike)
from mscore.ops.array.indexing import (
    chunk, flip, Gather, gather, gather_d, gather_elements, GatherD, GatherV2, getitem,
    masked_fill, MaskedFill, narrow, one_hot, OneHot, ReverseV2, roll, setitem, Slice, slice,
    Split, split, strided_slice, StridedSlice, unbind, Unpack, Unstack, unstack)
from mscore.ops.reduction.reduce import (
    all, amax, amin, any, Argmax, argmax, ArgMaxWithValue, Argmin, argmin, ArgMinWithValue,
    clip_by_global_norm, clip_by_norm, logsumexp, max, mean, min, reduce_mean,
    reduce_sum, ReduceAll, ReduceAny, ReduceMax, ReduceMean, ReduceMin, ReduceSum, std, sum,
    var)
from mscore.ops.linalg.products import (
    batch_matmul, BatchMatMul, bias_add, BiasAdd, bidense, bmm, cosine_similarity, Dense,
    dense, Ger, ger, MatMul, matmul, mm, outer)
from mscore.ops.random.draws import (
    Dropout, dropout, dropout1d, dropout2d, dropout3d, normal, rand, randn, standard_normal,
    StandardNormal, uniform, UniformReal)
from mscore.ops.nn.activation import (
    CeLU, celu, Elu, elu, FastGeLU, GeLU, gelu, glu, hardshrink, hardsigmoid, hardswish,
    hardtanh, HSigmoid, HSwish, leaky_relu, log_softmax, logsigmoid, LogSoftmax, Mish, mish,
    PReLU, prelu, ReLU, relu, ReLU6, relu6, rrelu, SeLU, selu, Sigmoid, sigmoid, silu, Softmax,
    softmax, softmin, Softplus, softplus, softshrink, Softsign, softsign, tanhshrink, threshold)
from mscore.ops.nn.pad_modes import (
    Pad, pad)
from mscore.ops.nn.conv import (
    conv, conv1d, Conv2D, conv2d, Conv2DBackpropInput, Conv2DTranspose, Conv3D, conv3d,
    Conv3DTranspose, conv_transpose)
from mscore.ops.nn.pooling import (
    adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d, adaptive_max_pool1d,
    adaptive_max_pool2d, adaptive_max_pool3d, avg_pool, avg_pool2d, AvgPool,
    fractional_max_pool2d, fractional_max_pool3d, lp_pool1d, lp_pool2d, max_pool, max_pool2d,
    max_unpool1d, max_unpool2d, max_unpool3d, MaxPool)
from mscore.ops.nn.normalization import (
    batch_norm, BatchNorm, group_norm, L2Normalize, layer_norm, LayerNorm, lrn)
from mscore.ops.math.special import (
    digamma, erfc, erfinv, i0, igamma, igammac, lgamma)
from mscore.ops.nn.loss import (
    BCEWithLogitsLoss, binary_cross_entropy, binary_cross_entropy_with_logits,
    BinaryCrossEntropy, cross_entropy, kl_div, KLDivLoss, l1_loss, L2Loss, mse_loss, nll_loss,
    NLLLoss, SigmoidCrossEntropyWithLogits, smooth_l1_loss, SmoothL1Loss,
    SoftmaxCrossEntropyWithLogits, SparseSoftmaxCrossEntropyWithLogits)
from mscore.ops.nn.loss_embedding import (
    cosine_embedding_loss, gaussian_nll_loss, hinge_embedding_loss, huber_loss,
    margin_ranking_loss, multi_margin_loss, multilabel_margin_loss,
    multilabel_soft_margin_loss, soft_margin_loss, triplet_margin_loss)
from mscore.ops.nn.image import (
    channel_shuffle, interpolate, pixel_shuffle, pixel_unshuffle, unfold, upsample)
from mscore.ops.nn.attention import (
    scaled_dot_product_attention)
from mscore.ops.nn.ctc import (
    ctc_loss)
from mscore.ops.grad import GradOperation, get_grad, grad, value_and_grad, vjp
from mscore.ops.composite import HyperMap, Map, MultitypeFuncGraph
from mscore.ops.functional import (
    floordiv, floormod, partial, reduce_max, reduce_min, tensor_add, tensor_div, tensor_exp,
    tensor_ge, tensor_le, tensor_mul, tensor_pow, tensor_sub)
from mscore.ops import composite, functional, operations
from mscore.ops.summary import (
    HistogramSummary, ImageSummary, ScalarSummary, TensorSummary)
from mscore.ops.math.arithmetic import *
from mscore.ops.math.trigonometric import *
from mscore.ops.math.complex import *
from mscore.ops.linalg.products import (
    addbmm, addmm, addmv, addr, baddbmm, cross, dot, inner, mv, trace)
from mscore.ops.array.sorting import *
from mscore.ops.array.selection import *
from mscore.ops.array.manipulation import (
    diag, diagonal, dsplit, fliplr, flipud, hsplit, hstack, moveaxis, movedim, ravel,
    repeat_interleave, rot90, tensor_split, vsplit, vstack)
from mscore.ops.reduction.reduce import aminmax, count_nonzero, nanmean, nansum, prod
from mscore.ops.reduction.cumulative import (
    CumSum, cummax, cummin, cumprod, cumsum, diff, logcumsumexp)
from mscore.ops.reduction.statistics import *
from mscore.ops.math.bitwise import *
from mscore.ops.random.draws import multinomial
from mscore.ops.linalg.decompositions import *
from mscore.ops.linalg.norms import *
from mscore.ops.linalg.einsum import einsum, Einsum
from mscore.ops.nn.image_fold import col2im, fold
from mscore.ops import tensor_api as _tensor_api; _tensor_api.attach()  # noqa: E702
