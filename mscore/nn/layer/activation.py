"""Activation cells: ``nn.ReLU``, ``nn.Sigmoid``, ``nn.GELU``, ``nn.Softmax``, ``nn.ELU``,
``nn.CELU``, ``nn.GLU``, ``nn.HSwish``, ``nn.HSigmoid``, ``nn.Hardtanh``, ``nn.HShrink``,
``nn.SoftShrink``, ``nn.LogSigmoid``, ``nn.Mish``, ``nn.SeLU``, ``nn.Softsign``, ``nn.Softmin``,
``nn.Softmax2d``, ``nn.Tanhshrink``, ``nn.Threshold``, ``nn.RReLU``, ``nn.FastGelu``, ``nn.LRN``,
...; each registered with :func:`mscore.nn.get_activation` under MindSpore's name."""
from __future__ import annotations

import numbers

from mscore import dispatch, ops
from mscore.common import dtype as mdt
from mscore.common.initializer import initializer
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.nn.cell import Cell
from mscore.nn.layer._checks import check_bool, check_int, check_number, check_tensor
from mscore.ops import functional as F
from mscore.ops._args import _axis1
from mscore.ops.nn.activation import fast_gelu

_wrap = Tensor._wrap


def _zero(x):
    return call("full", (), 0, x.dtype)


class ReLU(Cell):
    """max(x, 0) elementwise (gradient 0 at 0)."""

    def construct(self, x):
        if not isinstance(x, Tensor):
            check_tensor(x, "x", "ReLU")
        d = x._data
        fused = dispatch.fused("relu")  # one kernel each way where the backend has it
        if fused is not None:
            return _wrap(fused(d))
        z = _zero(x)
        return _wrap(call("where", call("greater", d, z), d, z))


class ReLU6(Cell):
    """min(max(x, 0), 6) elementwise."""

    def construct(self, x):
        check_tensor(x, "x", "ReLU6")
        return F.relu6(x)


class LeakyReLU(Cell):
    """x for x > 0, ``alpha * x`` otherwise (``alpha`` defaults to 0.2 as in MindSpore)."""

    def __init__(self, alpha=0.2):
        super().__init__()
        self.alpha = check_number(alpha, "alpha", "LeakyReLU")

    def construct(self, x):
        check_tensor(x, "x", "LeakyReLU")
        return F.leaky_relu(x, self.alpha)

    def extend_repr(self):
        return f"alpha={self.alpha}"


class Sigmoid(Cell):
    """1 / (1 + exp(-x)) elementwise."""

    def construct(self, x):
        check_tensor(x, "x", "Sigmoid")
        return F.sigmoid(x)


class Tanh(Cell):
    """tanh(x) elementwise."""

    def construct(self, x):
        check_tensor(x, "x", "Tanh")
        return F.tanh(x)


class SiLU(Cell):
    """x * sigmoid(x) elementwise."""

    def construct(self, x):
        check_tensor(x, "x", "SiLU")
        return F.silu(x)


class GELU(Cell):
    """Gaussian error linear unit. MindSpore's default ``approximate=True`` uses the tanh
    approximation; ``approximate=False`` the exact erf form."""

    def __init__(self, approximate=True):
        super().__init__()
        self.approximate = check_bool(approximate, "approximate", "GELU")

    def construct(self, x):
        check_tensor(x, "x", "GELU")
        return F.gelu(x, "tanh" if self.approximate else "none")

    def extend_repr(self):
        return f"approximate={self.approximate}"


class Softmax(Cell):
    """exp(x) / sum(exp(x)) along ``axis``."""

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = check_int(axis, "axis", "Softmax")

    def construct(self, x):
        check_tensor(x, "x", "Softmax")
        return F.softmax(x, self.axis)

    def extend_repr(self):
        return f"axis={self.axis}"


class LogSoftmax(Cell):
    """log(softmax(x)) along ``axis``, computed stably."""

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = check_int(axis, "axis", "LogSoftmax")

    def construct(self, x):
        check_tensor(x, "x", "LogSoftmax")
        return F.log_softmax(x, self.axis)

    def extend_repr(self):
        return f"axis={self.axis}"


class PReLU(Cell):
    """x for x > 0, ``w * x`` otherwise, with a learnable ``w`` of shape (channel,) broadcast
    over axis 1 (the parameter is named by its attribute, ``w``)."""

    def __init__(self, channel=1, w=0.25):
        super().__init__()
        channel = check_int(channel, "channel", "PReLU", minimum=1)
        if isinstance(w, (int, float)) and not isinstance(w, bool):
            value = initializer(float(w), (channel,))
        elif isinstance(w, Tensor):
            if w.ndim not in (0, 1) or (w.ndim == 1 and w.shape[0] != channel):
                raise ValueError(f"For 'PReLU', 'w' must be a scalar or have shape "
                                 f"({channel},), got {w.shape}")
            value = F.broadcast_to(F.reshape(w, (-1,)), (channel,)) if w.ndim == 0 else w
        else:
            raise TypeError(f"For 'PReLU', 'w' must be a float or a Tensor, got "
                            f"{type(w).__name__}")
        self.channel = channel
        self.w = Parameter(value)

    def construct(self, x):
        check_tensor(x, "x", "PReLU")
        w = self.cast_param(self.w)
        if x.ndim >= 2 and self.channel > 1:
            w = F.reshape(w, (1, self.channel) + (1,) * (x.ndim - 2))
        d = x._data
        return _wrap(call("where", call("greater", d, _zero(x)), d, call("mul", d, w._data)))

    def extend_repr(self):
        return f"channel={self.channel}"


class PReLUExt(Cell):
    """``mint.nn.PReLU``: ``x`` where positive, ``weight * x`` elsewhere, with
    ``num_parameters`` learned slopes (a Parameter named ``weight``, of ``dtype``, float32
    by default) starting at ``init``, broadcast over axis 1."""

    def __init__(self, num_parameters=1, init=0.25, dtype=None):
        super().__init__()
        num_parameters = check_int(num_parameters, "num_parameters", "PReLU", minimum=1)
        init = check_number(init, "init", "PReLU")
        self.num_parameters = num_parameters
        self.weight = Parameter(initializer(float(init), (num_parameters,),
                                            dtype or mdt.float32), name="weight")

    def construct(self, input):
        return ops.prelu(input, self.cast_param(self.weight))

    def extend_repr(self):
        return f"num_parameters={self.num_parameters}"


class Identity(Cell):
    """Returns its input."""

    def construct(self, x):
        return x


_ACTIVATIONS = {
    "relu": ReLU, "relu6": ReLU6, "leakyrelu": LeakyReLU, "sigmoid": Sigmoid, "tanh": Tanh,
    "silu": SiLU, "swish": SiLU, "gelu": GELU, "softmax": Softmax, "logsoftmax": LogSoftmax,
    "prelu": PReLU,
}


def get_activation(name, prim_name=None):
    """The activation cell for ``name`` ('relu', 'gelu', 'sigmoid', ...); None for None.
    ``prim_name`` names the caller in the error message, as in MindSpore."""
    who = f"For '{prim_name}', the" if prim_name else "The"
    if name is None:
        return None
    if not isinstance(name, str):
        raise TypeError(f"{who} 'name' must be a str, got {type(name).__name__}")
    key = name.lower()
    if key not in _ACTIVATIONS:
        raise KeyError(f"{who} 'name' must be in {sorted(_ACTIVATIONS)}, but got {name}")
    return _ACTIVATIONS[key]()


def _activation_arg(activation, cls):
    """A Cell from the ``activation`` argument of Dense/Conv (str, Cell or None)."""
    if activation is None or isinstance(activation, Cell):
        return activation
    if isinstance(activation, str):
        return get_activation(activation)
    raise TypeError(f"For '{cls}', 'activation' must be a str, a Cell or None, got "
                    f"{type(activation).__name__}")


def _float_arg(value, name, cls):
    if not isinstance(value, float):
        raise TypeError(f"For '{cls}', the type of '{name}' must be float, got "
                        f"{type(value).__name__}")
    return value


def _real_arg(value, name, cls):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"For '{cls}', the type of '{name}' must be float or int, got "
                        f"{type(value).__name__}")
    return value


def _float_input(x, cls, name="x"):
    check_tensor(x, name, cls)
    if not x.dtype.is_floating:
        raise TypeError(f"For '{cls}', '{name}' must be a floating-point Tensor, got {x.dtype}")
    return x


class ELU(Cell):
    """``x`` above 0, ``alpha * (exp(x) - 1)`` below. MindSpore's kernel supports only
    ``alpha=1.0`` (ValueError otherwise; ``alpha`` must be a float)."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = _float_arg(alpha, "alpha", "ELU")

    def construct(self, x):
        _float_input(x, "ELU")
        if self.alpha != 1.0:
            raise ValueError(f"For 'Elu', alpha must be 1.0, got {self.alpha}")
        return ops.elu(x, 1.0)

    def extend_repr(self):
        return f"alpha={self.alpha}"


class CELU(Cell):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = _real_arg(alpha, "alpha", "CELU")

    def construct(self, x):
        return ops.celu(_float_input(x, "CELU"), self.alpha)

    def extend_repr(self):
        return f"alpha={self.alpha}"


class GLU(Cell):
    """Gated linear unit: the first half of ``x`` along ``axis`` times the sigmoid of the
    second half."""

    def __init__(self, axis=-1):
        super().__init__()
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise TypeError(f"For 'GLU', 'axis' must be an int, got {type(axis).__name__}")
        self.dim = axis

    def construct(self, x):
        x = _float_input(x, "GLU")
        ax = _axis1(self.dim, x.ndim, "axis")
        if x.shape[ax] % 2:
            raise ValueError(f"For 'Split', x_shape[{ax}] must be divisible by output_num = 2, "
                             f"but got {x.shape[ax]}")
        return ops.glu(x, ax)


class HSwish(Cell):
    """Hard swish ``x * relu6(x + 3) / 6``."""

    def construct(self, input):
        check_tensor(input, "input", "HSwish")
        if input.dtype.is_floating:
            return ops.hardswish(input)
        # integer inputs: MindSpore's kernel computes in the integer type (truncating)
        return F.cast(ops.hardswish(F.cast(input, mdt.float32)), input.dtype)


class HSigmoid(Cell):
    """Hard sigmoid ``relu6(x + 3) / 6``."""

    def construct(self, input):
        return ops.hardsigmoid(_float_input(input, "HSigmoid", "input"))


class Hardtanh(Cell):
    """``x`` limited to [min_val, max_val] (``min_val < max_val``)."""

    def __init__(self, min_val=-1.0, max_val=1.0):
        super().__init__()
        _real_arg(min_val, "min_val", "Hardtanh")
        _real_arg(max_val, "max_val", "Hardtanh")
        if min_val >= max_val:
            raise ValueError(f"For Hardtanh, min_val should be less than max_val, but got "
                             f"{min_val} and {max_val}")
        self.min_val = min_val
        self.max_val = max_val

    def construct(self, x):
        return ops.hardtanh(_float_input(x, "Hardtanh"), self.min_val, self.max_val)

    def extend_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"


class HShrink(Cell):
    """``x`` where ``|x| > lambd``, else 0 (float16/float32 inputs, as MindSpore's
    kernel)."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = _real_arg(lambd, "lambd", "HShrink")

    def construct(self, input):
        x = _float_input(input, "HShrink", "input")
        if x.dtype.name == "float64":
            raise TypeError(f"For 'HShrink', the input must be float16, bfloat16 or float32, "
                            f"got {x.dtype}")
        return ops.hardshrink(x, self.lambd)

    def extend_repr(self):
        return f"lambd={self.lambd}"


class SoftShrink(Cell):
    """Soft shrinkage: ``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0
    between."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = _real_arg(lambd, "lambd", "SoftShrink")

    def construct(self, input):
        return ops.softshrink(_float_input(input, "SoftShrink", "input"), self.lambd)

    def extend_repr(self):
        return f"lambd={self.lambd}"


class LogSigmoid(Cell):
    """``log(sigmoid(x))``, computed stably."""

    def construct(self, input_x):
        return ops.logsigmoid(_float_input(input_x, "LogSigmoid", "input_x"))


class Mish(Cell):
    """``x * tanh(softplus(x))``."""

    def construct(self, input_x):
        return ops.mish(_float_input(input_x, "Mish", "input_x"))


class SeLU(Cell):
    """Scaled ELU with the self-normalising constants."""

    def construct(self, input_x):
        return ops.selu(_float_input(input_x, "SeLU", "input_x"))


class Softsign(Cell):
    """``x / (1 + |x|)``."""

    def construct(self, x):
        return ops.softsign(_float_input(x, "Softsign"))


class FastGelu(Cell):
    """MindSpore's FastGeLU: ``x / (1 + exp(-1.702 |x|)) * exp(0.851 (x - |x|))``."""

    def construct(self, x):
        return fast_gelu(_float_input(x, "FastGelu"))


class Tanhshrink(Cell):
    """``x - tanh(x)``."""

    def construct(self, x):
        check_tensor(x, "x", "Tanhshrink")
        return ops.tanhshrink(x)


class Softmin(Cell):
    """``softmax(-x)`` along ``axis``."""

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        check_tensor(x, "x", "Softmin")
        return ops.softmin(x, self.axis)

    def extend_repr(self):
        return f"axis={self.axis}"


class Softmax2d(Cell):
    """Softmax over the channel axis (-3) of a (C, H, W) or (N, C, H, W) input."""

    def construct(self, x):
        check_tensor(x, "x", "Softmax2d")
        if x.ndim not in (3, 4):
            raise ValueError(f"For 'Softmax2d', the in_shape must have 3 or 4 dims, but got "
                             f"{x.ndim}.")
        return F.softmax(x, -3)


class Threshold(Cell):
    """``x`` where ``x > threshold``, ``value`` elsewhere."""

    def __init__(self, threshold, value):
        super().__init__()
        self.threshold = threshold
        self.value = value

    def construct(self, input_x):
        check_tensor(input_x, "input_x", "Threshold")
        return ops.threshold(input_x, self.threshold, self.value)

    def extend_repr(self):
        return f"threshold={self.threshold}, value={self.value}"


class RReLU(Cell):
    """Randomized leaky ReLU: in training each negative element is scaled by a slope drawn
    from U(lower, upper); in eval by ``(lower + upper) / 2`` (MindSpore draws in eval too;
    see docs/differences.md)."""

    def __init__(self, lower=1 / 8, upper=1 / 3):
        super().__init__()
        _real_arg(upper, "upper", "RReLU")
        _real_arg(lower, "lower", "RReLU")
        if lower > upper:
            raise ValueError(f"For RReLU, the value of 'upper' must be greater than or equal to "
                             f"'lower', but got upper: {upper}, lower: {lower}.")
        self.lower = lower
        self.upper = upper

    def construct(self, x):
        if not isinstance(x, Tensor):
            raise TypeError(f"For 'rrelu', the input must be a Tensor, but got {type(x)}.")
        return ops.rrelu(x, self.lower, self.upper, self.training)

    def extend_repr(self):
        return f"lower={self.lower}, upper={self.upper}"


class LRN(Cell):
    """Local response normalisation across channels of (N, C, H, W):
    ``x / (bias + alpha * sum_{|c' - c| <= depth_radius} x_{c'}^2) ** beta``."""

    def __init__(self, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5,
                 norm_region="ACROSS_CHANNELS"):
        super().__init__()
        if isinstance(depth_radius, bool) or not isinstance(depth_radius, int):
            raise TypeError(f"For 'LRN', the type of 'depth_radius' should be 'int', but got "
                            f"type '{type(depth_radius).__name__}'.")
        for name, v in (("bias", bias), ("alpha", alpha), ("beta", beta)):
            _float_arg(v, name, "LRN")
        if not isinstance(norm_region, str) or norm_region != "ACROSS_CHANNELS":
            raise ValueError(f"For 'LRN', the 'norm_region' must be str and must be in "
                             f"['ACROSS_CHANNELS'], but got {norm_region!r}.")
        self.depth_radius = depth_radius
        self.bias = bias
        self.alpha = alpha
        self.beta = beta
        self.norm_region = norm_region

    def construct(self, input_x):
        check_tensor(input_x, "input_x", "LRN")
        return ops.lrn(input_x, self.depth_radius, self.bias, self.alpha, self.beta,
                       self.norm_region)


_ACTIVATIONS.update({
    "softmin": Softmin, "softmax2d": Softmax2d, "rrelu": RReLU, "tanhshrink": Tanhshrink,
    "hardtanh": Hardtanh, "fast_gelu": FastGelu, "elu": ELU, "softsign": Softsign,
    "hswish": HSwish, "hsigmoid": HSigmoid, "logsigmoid": LogSigmoid,
    "softshrink": SoftShrink, "hshrink": HShrink, "mish": Mish,
})
