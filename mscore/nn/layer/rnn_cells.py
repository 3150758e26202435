"""Recurrent cells: ``nn.RNNCell``, ``nn.LSTMCell``, ``nn.GRUCell`` (one time step).

Parameters follow MindSpore (and torch): ``weight_ih`` (gates * hidden, input),
``weight_hh`` (gates * hidden, hidden), ``bias_ih``, ``bias_hh``, all initialised
U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)). Gate order: LSTM i, f, g, o; GRU r, z, n.
Inputs are (batch, input_size) or unbatched (input_size,).
"""
from __future__ import annotations

import math

from mscore.common import dtype as mdt
from mscore.common.initializer import Uniform, initializer
from mscore.common.parameter import Parameter
from mscore.nn.cell import Cell
from mscore.nn.layer._checks import (
    check_bool,
    check_dtype,
    check_positive_int,
    check_str,
    check_tensor,
)
from mscore.ops import functional as F


class _RNNCellBase(Cell):
    _gates = 1

    def __init__(self, input_size, hidden_size, has_bias, dtype):
        super().__init__()
        cls = type(self).__name__
        self.input_size = check_positive_int(input_size, "input_size", cls)
        self.hidden_size = check_positive_int(hidden_size, "hidden_size", cls)
        self.has_bias = check_bool(has_bias, "has_bias", cls)
        dtype = check_dtype(dtype, "dtype", cls)
        init = Uniform(1.0 / math.sqrt(self.hidden_size))
        g = self._gates * self.hidden_size
        self.weight_ih = Parameter(initializer(init, (g, self.input_size), dtype))
        self.weight_hh = Parameter(initializer(init, (g, self.hidden_size), dtype))
        self.bias_ih = self.bias_hh = None
        if self.has_bias:
            self.bias_ih = Parameter(initializer(init, (g,), dtype))
            self.bias_hh = Parameter(initializer(init, (g,), dtype))

    def _check(self, x, h, hname="hx"):
        cls = type(self).__name__
        check_tensor(x, "x", cls)
        check_tensor(h, hname, cls)
        if x.ndim not in (1, 2) or x.shape[-1] != self.input_size:
            raise ValueError(f"For '{cls}', 'x' must be (batch, {self.input_size}) or "
                             f"({self.input_size},), got shape {x.shape}")
        want = x.shape[:-1] + (self.hidden_size,)
        if h.shape != want:
            raise ValueError(f"For '{cls}', '{hname}' must have shape {want}, got {h.shape}")

    def _linear(self, x, w, b):
        return linear(x, self.cast_param(w), None if b is None else self.cast_param(b))

    def _gates_ih_hh(self, x, h):
        return (self._linear(x, self.weight_ih, self.bias_ih),
                self._linear(h, self.weight_hh, self.bias_hh))

    def extend_repr(self):
        return (f"input_size={self.input_size}, hidden_size={self.hidden_size}, "
                f"has_bias={self.has_bias}")


def linear(x, w, b):
    """``x @ w.T + b`` (``b`` may be None)."""
    out = F.matmul(x, F.transpose(w, (1, 0)))
    return out if b is None else F.add(out, b)


def rnn_step(gi, h, gh, nonlinearity):
    """Elman update from the input and hidden projections ``gi``, ``gh``."""
    pre = F.add(gi, gh)
    return F.tanh(pre) if nonlinearity == "tanh" else F.relu(pre)


def lstm_step(gi, c, gh, hidden_size):
    """LSTM update (gate order i, f, g, o): returns ``(h', c')``."""
    i, f, g, o = F.split(F.add(gi, gh), hidden_size, -1)
    c2 = F.add(F.mul(F.sigmoid(f), c), F.mul(F.sigmoid(i), F.tanh(g)))
    return F.mul(F.sigmoid(o), F.tanh(c2)), c2


def gru_step(gi, h, gh, hidden_size):
    """GRU update (gate order r, z, n): ``n = tanh(i_n + r * h_n)``,
    ``h' = n + z * (h - n)``."""
    i_r, i_z, i_n = F.split(gi, hidden_size, -1)
    h_r, h_z, h_n = F.split(gh, hidden_size, -1)
    r = F.sigmoid(F.add(i_r, h_r))
    z = F.sigmoid(F.add(i_z, h_z))
    n = F.tanh(F.add(i_n, F.mul(r, h_n)))
    return F.add(n, F.mul(z, F.sub(h, n)))


class RNNCell(_RNNCellBase):
    """Elman cell: ``h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)``, ``act`` 'tanh' or
    'relu'. ``RNNCell(input_size, hidden_size, has_bias=True, nonlinearity='tanh',
    dtype=float32)``; ``construct(x, hx)`` returns ``h'``."""

    _gates = 1

    def __init__(self, input_size, hidden_size, has_bias=True, nonlinearity="tanh",
                 dtype=mdt.float32):
        super().__init__(input_size, hidden_size, has_bias, dtype)
        self.nonlinearity = check_str(nonlinearity, "nonlinearity", "RNNCell", ("tanh", "relu"))

    def construct(self, x, hx):
        self._check(x, hx)
        gi, gh = self._gates_ih_hh(x, hx)
        return rnn_step(gi, hx, gh, self.nonlinearity)


class LSTMCell(_RNNCellBase):
    """LSTM cell. ``LSTMCell(input_size, hidden_size, has_bias=True, dtype=float32)``;
    ``construct(x, hx)`` with ``hx = (h, c)`` returns ``(h', c')``:
    ``c' = f * c + i * g``, ``h' = o * tanh(c')``."""

    _gates = 4

    def __init__(self, input_size, hidden_size, has_bias=True, dtype=mdt.float32):
        super().__init__(input_size, hidden_size, has_bias, dtype)

    def construct(self, x, hx):
        if not isinstance(hx, (tuple, list)) or len(hx) != 2:
            raise TypeError("For 'LSTMCell', 'hx' must be a tuple (h, c)")
        h, c = hx
        self._check(x, h, "hx[0]")
        self._check(x, c, "hx[1]")
        gi, gh = self._gates_ih_hh(x, h)
        return lstm_step(gi, c, gh, self.hidden_size)


class GRUCell(_RNNCellBase):
    """GRU cell. ``GRUCell(input_size, hidden_size, has_bias=True, dtype=float32)``;
    ``construct(x, hx)`` returns ``h'``: ``r = σ(i_r + h_r)``, ``z = σ(i_z + h_z)``,
    ``n = tanh(i_n + r * h_n)``, ``h' = n + z * (h - n)``."""

    _gates = 3

    def __init__(self, input_size, hidden_size, has_bias=True, dtype=mdt.float32):
        super().__init__(input_size, hidden_size, has_bias, dtype)

    def construct(self, x, hx):
        self._check(x, hx)
        gi, gh = self._gates_ih_hh(x, hx)
        return gru_step(gi, hx, gh, self.hidden_size)


