"""Recurrent layers: ``nn.RNN``, ``nn.LSTM`` and ``nn.GRU`` (multi-layer, bidirectional,
``batch_first``, inter-layer dropout, initial states and per-sequence lengths), stepping the
update functions of :mod:`mscore.nn.layer.rnn_cells`.

Parameters follow MindSpore: ``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}``,
``bias_hh_l{k}`` (``_reverse`` for the backward direction), registered all input weights
first, then the hidden weights, then the biases, each U(-1/sqrt(hidden), 1/sqrt(hidden)).
Inputs are (T, N, input_size) (``batch_first``: (N, T, input_size)); states
(num_layers * num_directions, N, hidden_size). With ``seq_length`` (N,) the steps past each
sequence's end leave its state unchanged and output zeros; the backward direction reads
each sequence reversed within its length.
"""
from __future__ import annotations

import math

import numpy as np

from mscore import dispatch, fused_reference
from mscore.common import dtype as mdt
from mscore.common.initializer import Uniform, initializer
from mscore.common.parameter import Parameter, ParameterTuple
from mscore.common.tensor import Tensor
from mscore.nn.cell import Cell
from mscore.nn.layer._checks import check_bool, check_dtype, check_positive_int
from mscore.nn.layer.basic import Dropout
from mscore.nn.layer.rnn_cells import gru_step, linear, lstm_step, rnn_step
from mscore.ops import functional as F

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


class _RNNBase(Cell):
    """Stacked (bi)directional recurrence of one cell type (``mode``)."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, has_bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, dtype=mdt.float32):
        super().__init__()
        cls = type(self).__name__
        check_positive_int(hidden_size, "hidden_size", cls)
        check_positive_int(input_size, "input_size", cls)
        check_positive_int(num_layers, "num_layers", cls)
        if not isinstance(dropout, float):
            raise TypeError(f"For '{cls}', the type of 'dropout' should be 'float', but got "
                            f"type '{type(dropout).__name__}'.")
        check_bool(has_bias, "has_bias", cls)
        check_bool(batch_first, "batch_first", cls)
        check_bool(bidirectional, "bidirectional", cls)
        if not 0 <= dropout < 1:
            raise ValueError(f"For '{cls}', the 'dropout' must be a number in range [0, 1) "
                             f"representing the probability of an element being zeroed, but "
                             f"got {dropout}.")
        if mode not in _GATES:
            raise ValueError(f"For '{cls}', the 'mode' must be in {list(_GATES)}, got {mode!r}")
        dtype = check_dtype(dtype, "dtype", cls)
        self.mode = mode
        self.is_lstm = mode == "LSTM"
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.has_bias = has_bias
        self.batch_first = batch_first
        self.dropout = dropout
        self.bidirectional = bidirectional
        self.dropout_op = Dropout(p=float(dropout))
        directions = 2 if bidirectional else 1
        gate = _GATES[mode] * hidden_size
        init = Uniform(1.0 / math.sqrt(hidden_size))
        self._names = []
        for layer in range(num_layers):
            for d in range(directions):
                self._names.append(f"l{layer}" + ("_reverse" if d else ""))
        kinds = [("weight_ih", None), ("weight_hh", (gate, hidden_size))]
        if has_bias:
            kinds += [("bias_ih", (gate,)), ("bias_hh", (gate,))]
        for kind, shape in kinds:
            for k, suffix in enumerate(self._names):
                layer = k // directions
                if shape is None:
                    width = input_size if layer == 0 else hidden_size * directions
                    shape_k = (gate, width)
                else:
                    shape_k = shape
                name = f"{kind}_{suffix}"
                setattr(self, name, Parameter(initializer(init, shape_k, dtype), name=name))

    # MindSpore keeps the parameters in ParameterTuples by kind; the same views here.
    def _tuple(self, kind):
        if kind.startswith("bias") and not self.has_bias:
            return ParameterTuple(())
        return ParameterTuple(getattr(self, f"{kind}_{n}") for n in self._names)

    @property
    def w_ih_list(self):
        """The input-to-hidden weights, layer by layer (forward, then reverse)."""
        return self._tuple("weight_ih")

    @property
    def w_hh_list(self):
        """The hidden-to-hidden weights."""
        return self._tuple("weight_hh")

    @property
    def b_ih_list(self):
        """The input biases (empty without ``has_bias``)."""
        return self._tuple("bias_ih")

    @property
    def b_hh_list(self):
        """The hidden biases (empty without ``has_bias``)."""
        return self._tuple("bias_hh")

    # -- forward ---------------------------------------------------------------------------
    def _check_inputs(self, x, hx, seq_length):
        cls = type(self).__name__
        if not isinstance(x, Tensor):
            raise TypeError(f"For '{cls}', the 'x' must be a Tensor, but got "
                            f"{type(x).__name__}")
        if x.ndim != 3:
            layout = "N, T" if self.batch_first else "T, N"
            raise ValueError(f"For '{cls}', 'x' must be 3-d ({layout}, input_size), "
                             f"got shape {x.shape}")
        if x.shape[-1] != self.input_size:
            raise ValueError(f"For '{cls}', the last axis of 'x' must be {self.input_size}, got "
                             f"shape {x.shape}")
        if x.dtype not in (mdt.float32, mdt.float16, mdt.float64):
            raise TypeError(f"For '{cls}', 'x' must be float16 or float32, got {x.dtype}")
        batch = x.shape[0] if self.batch_first else x.shape[1]
        want = (self.num_layers * (2 if self.bidirectional else 1), batch, self.hidden_size)
        if hx is not None:
            if self.is_lstm:
                if not isinstance(hx, tuple):
                    raise TypeError(f"For '{cls}', the 'hx' must be a tuple, but got "
                                    f"{type(hx).__name__}")
                if len(hx) != 2:
                    raise TypeError(f"For '{cls}', the length of 'hx' must be '2', but got "
                                    f"'{len(hx)}'")
                states = [("hx[0]", hx[0]), ("hx[1]", hx[1])]
            else:
                states = [("h", hx)]
            for name, h in states:
                if not isinstance(h, Tensor):
                    raise TypeError(f"For '{cls}', the '{name}' must be a Tensor, but got "
                                    f"{type(h).__name__}")
                if h.dtype is not x.dtype:
                    raise TypeError(f"For '{cls}', '{name}' must have the dtype of 'x' "
                                    f"({x.dtype}), got {h.dtype}")
                if h.shape != want:
                    raise ValueError(f"For '{cls}', '{name}' must have shape {want}, got "
                                     f"{h.shape}")
        if seq_length is not None:
            if not isinstance(seq_length, Tensor) or seq_length.dtype not in (mdt.int32,
                                                                               mdt.int64):
                raise TypeError(f"For '{cls}', 'seq_length' must be an int32 or int64 Tensor, "
                                f"got {getattr(seq_length, 'dtype', type(seq_length).__name__)}")
            if seq_length.shape[0] != batch:
                raise ValueError(f"For '{cls}' batch size of x and seq_length must be equal, "
                                 f"but got {batch} of x and {seq_length.shape[0]} of "
                                 f"seq_length.")
        return batch, want

    def construct(self, x, hx=None, seq_length=None):
        batch, state_shape = self._check_inputs(x, hx, seq_length)
        dt = x.dtype
        if hx is None:
            zeros = F.zeros(state_shape, dt)
            hx = (zeros, zeros) if self.is_lstm else zeros
        if self.batch_first:
            x = F.transpose(x, (1, 0, 2))
        steps = x.shape[0]
        mask = rev_index = None
        if seq_length is not None:
            lengths = F.cast(seq_length, mdt.int64)
            t = F.reshape(F.arange(0, steps, 1, mdt.int64), (steps, 1))
            inside = F.less(t, F.reshape(lengths, (1, batch)))                    # (T, N)
            mask = F.expand_dims(inside, -1)
            rev_index = F.where(inside, F.sub(F.sub(F.reshape(lengths, (1, batch)), 1), t), t)
        directions = 2 if self.bidirectional else 1
        layer_in = x
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(directions):
                k = layer * directions + d
                state = (hx[0][k], hx[1][k]) if self.is_lstm else hx[k]
                seq = layer_in if d == 0 else _reverse(layer_in, rev_index)
                out, final = self._direction(seq, state, self._names[k], mask)
                outs.append(out if d == 0 else _reverse(out, rev_index))
                if self.is_lstm:
                    h_n.append(final[0])
                    c_n.append(final[1])
                else:
                    h_n.append(final)
            layer_in = outs[0] if directions == 1 else F.concat(outs, 2)
            if self.dropout and layer < self.num_layers - 1:
                layer_in = self.dropout_op(layer_in)
        output = F.transpose(layer_in, (1, 0, 2)) if self.batch_first else layer_in
        if self.is_lstm:
            return F.cast(output, dt), (F.cast(F.stack(h_n, 0), dt), F.cast(F.stack(c_n, 0), dt))
        return F.cast(output, dt), F.cast(F.stack(h_n, 0), dt)

    def _weights(self, suffix, dtype):
        def get(kind):
            if kind.startswith("bias") and not self.has_bias:
                return None
            return F.cast(self.cast_param(getattr(self, f"{kind}_{suffix}")), dtype)
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh")

    def _direction(self, seq, state, suffix, mask):
        """Run one direction over (T, N, in): outputs (T, N, H) and the final state. Without
        per-sequence lengths the whole sequence is one ``rnn_sequence`` op: the backend's
        fused kernel (torch's own RNN kernels, one compiled ``lax.scan`` on jax), else its
        reference from primitives."""
        w_ih, w_hh, b_ih, b_hh = self._weights(suffix, seq.dtype)
        if mask is None:
            h, c = state if self.is_lstm else (state, None)
            out, h_t, c_t = rnn_sequence(self.mode, seq, h, c, w_ih, w_hh, b_ih, b_hh)
            return out, ((h_t, c_t) if self.is_lstm else h_t)
        gi_all = linear(seq, w_ih, b_ih)                     # every step's input projection
        w_hh_t = F.transpose(w_hh, (1, 0))                    # transposed once, not per step

        def hidden(h):
            gh = F.matmul(h, w_hh_t)
            return gh if b_hh is None else F.add(gh, b_hh)
        outs = []
        for t in range(seq.shape[0]):
            gi = gi_all[t]
            if self.is_lstm:
                h, c = state
                new = lstm_step(gi, c, hidden(h), self.hidden_size)
                out = new[0]
            else:
                h = state
                gh = hidden(h)
                new = gru_step(gi, h, gh, self.hidden_size) if self.mode == "GRU" else \
                    rnn_step(gi, h, gh, "tanh" if self.mode == "RNN_TANH" else "relu")
                out = new
            if mask is not None:
                m = mask[t]
                if self.is_lstm:
                    new = (F.where(m, new[0], state[0]), F.where(m, new[1], state[1]))
                else:
                    new = F.where(m, new, state)
                out = F.where(m, out, 0.0)
            state = new
            outs.append(out)
        return F.stack(outs, 0), state

    def extend_repr(self):
        return (f"input_size={self.input_size}, hidden_size={self.hidden_size}, "
                f"num_layers={self.num_layers}, has_bias={self.has_bias}, "
                f"batch_first={self.batch_first}, dropout={self.dropout}, "
                f"bidirectional={self.bidirectional}")


def rnn_sequence(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh):
    """One direction of one recurrent layer over a whole sequence, on Tensors: the backend's
    fused ``rnn_sequence`` when it has one, else the core's reference
    (:func:`mscore.fused_reference.rnn_sequence`, whose contract this follows). Returns
    ``(out, h_T, c_T)`` (``c_T`` None but for LSTM)."""
    run = dispatch.fused("rnn_sequence") or fused_reference.rnn_sequence
    out, h_t, c_t = run(mode, x._data, h0._data, None if c0 is None else c0._data,
                        w_ih._data, w_hh._data, None if b_ih is None else b_ih._data,
                        None if b_hh is None else b_hh._data)
    return Tensor._wrap(out), Tensor._wrap(h_t), None if c_t is None else Tensor._wrap(c_t)


def _reverse(seq, rev_index):
    """``seq`` (T, N, *) reversed in time, within each sequence's length when
    ``rev_index`` (T, N) is given."""
    steps = seq.shape[0]
    if rev_index is None:
        return F.getitem(seq, (Tensor(np.arange(steps - 1, -1, -1, dtype=np.int64)),))
    batch = seq.shape[1]
    cols = F.reshape(F.arange(0, batch, 1, mdt.int64), (1, batch))
    return F.getitem(seq, (rev_index, cols))


class RNN(_RNNBase):
    """Elman RNN: ``h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``, ``act`` 'tanh'
    (default) or 'relu' (keyword ``nonlinearity``). ``construct(x, hx=None,
    seq_length=None)`` returns ``(output, h_n)``."""

    def __init__(self, *args, nonlinearity="tanh", **kwargs):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"For 'RNN', the 'nonlinearity' must be in ['tanh', 'relu'], but "
                             f"got {nonlinearity}.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)
        self.nonlinearity = nonlinearity


class GRU(_RNNBase):
    """GRU layers (gates r, z, n). ``GRU(input_size, hidden_size, num_layers=1,
    has_bias=True, batch_first=False, dropout=0.0, bidirectional=False, dtype=float32)``;
    ``construct(x, hx=None, seq_length=None)`` returns ``(output, h_n)``."""

    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)


class LSTM(_RNNBase):
    """LSTM layers (gates i, f, g, o). ``LSTM(input_size, hidden_size, num_layers=1,
    has_bias=True, batch_first=False, dropout=0.0, bidirectional=False, dtype=float32)``;
    ``construct(x, hx=None, seq_length=None)`` with ``hx = (h_0, c_0)`` returns
    ``(output, (h_n, c_n))``."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)
