"""Activation cells: ``nn.ReLU``, ``nn.Sigmoid``, ``nn.GELU``, ``nn.Softmax``, ... ."""
from __future__ import annotations


from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore import dispatch
from mscore.dispatch import call
from mscore.nn.cell import Cell
from mscore.nn.layer._checks import check_bool, check_int, check_number, check_tensor
from mscore.ops import functional as F
from mscore.common.initializer import initializer

_wrap = Tensor._wrap


def _zero(x):
    return call("full", (), 0, x.dtype)


class ReLU(Cell):
    """max(x, 0) elementwise (gradient 0 at 0)."""

    def construct(self, x):
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


