"""``mindspore.ops.functional`` (``from mscore.ops import functional as F``): MindSpore's
functional namespace, re-exported from the concept modules, plus the Primitive instances it
holds under lowercase names (``F.tensor_add``, ``F.partial``, ``F.reduce_max``, ...), which
MindSpore 1.x-style code calls like functions."""
from mscore.ops import control as _control
from mscore.ops.array.creation import (
    arange,
    eye,
    fill,
    full,
    full_like,
    is_tensor,
    linspace,
    ones,
    ones_like,
    scalar_to_tensor,
    tril,
    triu,
    tuple_to_array,
    zeros,
    zeros_like,
)
from mscore.ops.array.indexing import (
    chunk,
    flip,
    gather,
    gather_d,
    gather_elements,
    getitem,
    masked_fill,
    narrow,
    one_hot,
    setitem,
    slice,
    split,
    strided_slice,
    unbind,
    unstack,
)
from mscore.ops.array.manipulation import (
    broadcast_to,
    cat,
    concat,
    dtype,
    expand_dims,
    flatten,
    flatten_dims,
    numel,
    permute,
    rank,
    reshape,
    shape,
    size,
    squeeze,
    stack,
    swapaxes,
    swapdims,
    t,
    tile,
    transpose,
    unsqueeze,
)
from mscore.ops.control import assign, cast, depend, stop_gradient
from mscore.ops.grad import get_grad, grad, value_and_grad, vjp
from mscore.ops.linalg.einsum import einsum
from mscore.ops.linalg.norms import cdist, matrix_norm, norm, vector_norm
from mscore.ops.linalg.products import (
    batch_matmul,
    bias_add,
    bmm,
    cosine_similarity,
    dense,
    ger,
    matmul,
    mm,
    outer,
)
from mscore.ops.math import elementwise as _elementwise
from mscore.ops.math.arithmetic import truncate_div, truncate_mod
from mscore.ops.math.elementwise import (
    abs,
    absolute,
    add,
    addcmul,
    addn,
    assign_add,
    assign_sub,
    ceil,
    clamp,
    clip,
    clip_by_value,
    cos,
    div,
    divide,
    eq,
    equal,
    erf,
    exp,
    expm1,
    floor,
    floor_div,
    floor_divide,
    floor_mod,
    ge,
    greater,
    greater_equal,
    gt,
    isclose,
    isfinite,
    isinf,
    isnan,
    le,
    less,
    less_equal,
    log,
    log1p,
    logaddexp,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    lt,
    maximum,
    minimum,
    mul,
    multiply,
    native_addcmul,
    ne,
    neg,
    negative,
    not_equal,
    pow,
    reciprocal,
    remainder,
    rsqrt,
    select,
    sign,
    sin,
    sqrt,
    square,
    sub,
    subtract,
    tanh,
    true_divide,
    where,
)
from mscore.ops.nn.activation import (
    celu,
    elu,
    gelu,
    glu,
    hardsigmoid,
    hardswish,
    hardtanh,
    leaky_relu,
    log_softmax,
    logsigmoid,
    mish,
    prelu,
    relu,
    relu6,
    selu,
    sigmoid,
    silu,
    softmax,
    softplus,
    softsign,
)
from mscore.ops.nn.attention import scaled_dot_product_attention
from mscore.ops.nn.conv import (
    conv,
    conv1d,
    conv2d,
    conv3d,
    conv_padding_pairs,
    conv_transpose,
    conv_transpose_same_padding,
)
from mscore.ops.nn.ctc import ctc_loss
from mscore.ops.nn.loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    kl_div,
    l1_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
)
from mscore.ops.nn.loss_embedding import (
    cosine_embedding_loss,
    gaussian_nll_loss,
    hinge_embedding_loss,
    huber_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    soft_margin_loss,
    triplet_margin_loss,
)
from mscore.ops.nn.normalization import batch_norm, layer_norm
from mscore.ops.nn.pad_modes import pad
from mscore.ops.nn.pooling import avg_pool, avg_pool2d, max_pool, max_pool2d
from mscore.ops.random.draws import dropout, normal, rand, randn, standard_normal, uniform
from mscore.ops.reduction import reduce as _reduction
from mscore.ops.reduction.cumulative import cumsum
from mscore.ops.reduction.reduce import (
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    clip_by_global_norm,
    clip_by_norm,
    logsumexp,
    max,
    mean,
    min,
    reduce_mean,
    reduce_sum,
    std,
    sum,
    var,
)

tensor_add = _elementwise.Add()
tensor_sub = _elementwise.Sub()
tensor_mul = _elementwise.Mul()
tensor_div = _elementwise.Div()
tensor_exp = _elementwise.Exp()
tensor_pow = _elementwise.Pow()
tensor_ge = _elementwise.GreaterEqual()
tensor_le = _elementwise.LessEqual()
floordiv = _elementwise.FloorDiv()
floormod = _elementwise.FloorMod()
reduce_max = _reduction.ReduceMax()
reduce_min = _reduction.ReduceMin()
partial = _control.Partial()

# ``from mscore.ops.functional import *`` gives the functions MindSpore's module defines
# itself (the instances and the other functions above are reached as ``F.<name>``).
__all__ = [
    "abs", "add", "addcmul", "all", "amax", "amin", "any", "arange", "argmax", "argmin",
    "assign", "avg_pool", "avg_pool2d", "batch_matmul", "batch_norm",
    "binary_cross_entropy_with_logits", "bmm", "broadcast_to", "cast", "cat", "ceil", "clamp",
    "clip", "clip_by_value", "concat", "conv", "conv1d", "conv2d", "conv3d", "conv_transpose",
    "cos", "cross_entropy", "dense", "depend", "div", "dropout", "equal", "erf", "exp",
    "expand_dims", "eye", "fill", "flatten", "flatten_dims", "floor", "floor_divide", "full",
    "gather", "gelu", "ger", "getitem", "greater", "greater_equal", "isfinite", "isinf",
    "isnan", "l1_loss", "layer_norm", "leaky_relu", "less", "less_equal", "log", "log1p",
    "log_softmax", "logical_and", "logical_not", "logical_or", "logsumexp", "matmul", "max",
    "max_pool", "max_pool2d", "maximum", "mean", "min", "minimum", "mse_loss", "mul", "neg",
    "nll_loss", "norm", "not_equal", "one_hot", "ones", "ones_like", "outer", "pad", "permute",
    "pow", "prelu", "rand", "randn", "reciprocal", "reduce_mean", "reduce_sum", "relu",
    "relu6", "remainder", "reshape", "rsqrt", "scaled_dot_product_attention", "select",
    "setitem", "sigmoid", "sign", "silu", "sin", "softmax", "softplus", "split", "sqrt",
    "square", "squeeze", "stack", "standard_normal", "stop_gradient", "sub", "sum", "swapaxes",
    "tanh", "tile", "transpose", "truncate_div", "truncate_mod", "uniform", "var", "where",
    "zeros", "zeros_like"]
