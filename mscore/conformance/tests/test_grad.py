"""Level 2: gradients. ``ms.value_and_grad`` of ``sum(f(x) * c)`` (``c`` a fixed random
cotangent) on the backend under test — its native autodiff, or mscore's reference autodiff
over its primitives — against the numpy reference autodiff in float64."""
from __future__ import annotations

import numpy as np
import pytest

import mscore as ms
from mscore import ops
from mscore.common.parameter import Parameter
from mscore.conformance.harness import GradCase, normal_inputs, value_and_grads
from mscore.nn.layer.rnns import rnn_sequence

DTYPES = ("float32", "float64")


_n = normal_inputs


def _u(low, high, *shapes):
    return lambda kit: [kit.uniform(s, low, high) for s in shapes]


def _away_from_zero(*shapes):
    def make(kit):
        return [kit.uniform(s, 0.3, 2.0) * kit.rng.choice([-1.0, 1.0], size=s) for s in shapes]
    return make


def _with_ints(float_shapes, ints):
    def make(kit):
        return [kit.normal(s) for s in float_shapes] + [np.asarray(i, np.int64) for i in ints]
    return make


def _ce(kit):
    return [kit.normal((6, 5), 2.0), kit.rng.integers(0, 5, size=(6,)).astype(np.int64)]


def _bn_train(x, w, b):
    c = x.shape[1]
    rm = Parameter(ops.zeros((c,), x.dtype), name="rm", requires_grad=False)
    rv = Parameter(ops.ones((c,), x.dtype), name="rv", requires_grad=False)
    return ops.batch_norm(x, rm, rv, w, b, training=True, momentum=0.1, eps=1e-5)


def _rnn_outputs(mode):
    """The recurrent layer's sequence op (its backend's fused kernel where it has one): the
    outputs and final states, joined (T + 1 or T + 2, N, H)."""
    def fn(x, h0, *rest):
        c0 = rest[0] if mode == "LSTM" else None
        w_ih, w_hh, b_ih, b_hh = rest[1:] if mode == "LSTM" else rest
        out, h, c = rnn_sequence(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh)
        finals = [ops.expand_dims(h, 0)] + ([] if c is None else [ops.expand_dims(c, 0)])
        return ops.concat([out] + finals, 0)
    return fn


CASES = [
    GradCase("neg", _n((3, 4)), ops.neg),
    GradCase("abs", _away_from_zero((3, 4)), ops.abs),
    GradCase("exp", _u(-2, 2, (3, 4)), ops.exp),
    GradCase("log", _u(0.2, 3, (3, 4)), ops.log),
    GradCase("sqrt", _u(0.2, 3, (3, 4)), ops.sqrt),
    GradCase("sin", _n((3, 4)), ops.sin),
    GradCase("cos", _n((3, 4)), ops.cos),
    GradCase("tanh", _n((3, 4)), ops.tanh),
    GradCase("erf", _n((3, 4)), ops.erf),
    GradCase("add_broadcast", _n((3, 1, 4), (2, 4)), ops.add),
    GradCase("sub_broadcast", _n((3, 1, 4), (4,)), ops.sub),
    GradCase("mul_broadcast", _n((3, 1, 4), (2, 1)), ops.mul),
    GradCase("div_broadcast", lambda kit: [kit.normal((3, 4)),
                                           _away_from_zero((4,))(kit)[0]], ops.div),
    GradCase("pow", _u(0.5, 2.0, (3, 4), (3, 4)), ops.pow),
    GradCase("maximum", _n((3, 4), (3, 4)), ops.maximum),
    GradCase("minimum", _n((3, 4), (4,)), ops.minimum),
    GradCase("where", lambda kit: [kit.normal((3, 4)), kit.normal((3, 4)),
                                   kit.rng.random((3, 4)) > 0.5],
             lambda x, y, c: ops.where(c, x, y)),
    GradCase("cast", _n((3, 4)), lambda x: ops.cast(ops.cast(x, ms.float32), x.dtype) * x),
    GradCase("sum_axes", _n((3, 4, 5)), lambda x: ops.sum(x, (0, 2), keepdim=True)),
    GradCase("mean", _n((3, 4, 5)), lambda x: ops.mean(x, 1)),
    GradCase("amax", _n((3, 4, 5)), lambda x: ops.amax(x, (1,))),
    GradCase("amin_all", _n((3, 4)), lambda x: ops.amin(x)),
    GradCase("reshape", _n((2, 3, 4)), lambda x: ops.reshape(x, (4, 6)) * 2.0),
    GradCase("transpose", _n((2, 3, 4)), lambda x: ops.transpose(x, (2, 0, 1)) * 2.0),
    GradCase("broadcast_to", _n((3, 1)), lambda x: ops.broadcast_to(x, (2, 3, 4))),
    GradCase("concat", _n((2, 1, 3), (2, 4, 3)), lambda x, y: ops.concat((x, y, x), 1)),
    GradCase("pad", _n((2, 3)), lambda x: ops.pad(x, (1, 2, 0, 1), value=0.5)),
    GradCase("getitem_slices", _n((5, 4, 3)),
             lambda x: x[1::2, None, ..., 1] * 3.0),
    GradCase("getitem_int_array", _with_ints([(5, 4)], [[0, 2, 0, -1]]),
             lambda x, i: ops.getitem(x, (i,))),
    GradCase("getitem_int_arrays", _with_ints([(5, 4, 3)], [[4, 0, 4], [2, 2, 0]]),
             lambda x, i, j: ops.getitem(x, (i, slice(1, 3), j))),
    GradCase("matmul_batched", _n((2, 1, 3, 4), (3, 4, 2)), ops.matmul),
    GradCase("conv1d", _n((2, 3, 9), (4, 3, 3)),
             lambda x, w: ops.conv1d(x, w, stride=2, pad_mode="pad", padding=1)),
    GradCase("conv2d_stride_pad_dilation_groups", _n((2, 4, 7, 6), (6, 2, 3, 2)),
             lambda x, w: ops.conv2d(x, w, stride=(2, 1), pad_mode="pad",
                                     padding=(1, 0, 2, 1), dilation=(1, 2), groups=2)),
    GradCase("conv_transpose2d", _n((2, 4, 4, 3), (4, 3, 3, 3)),
             lambda x, w: ops.conv_transpose(x, w, stride=(2, 1), pad_mode="pad",
                                             padding=(1, 1, 0, 1), output_padding=(1, 0),
                                             dilation=(1, 2), groups=2)),
    GradCase("max_pool2d", _n((2, 3, 7, 6)),
             lambda x: ops.max_pool2d(x, (3, 2), (2, 2), padding=(1, 0))),
    GradCase("avg_pool2d", _n((2, 3, 7, 6)),
             lambda x: ops.avg_pool2d(x, (3, 2), (2, 2), padding=(1, 1),
                                      count_include_pad=False)),
    GradCase("softmax", _n((4, 7), scale=2.0), lambda x: ops.softmax(x, -1)),
    GradCase("log_softmax", _n((4, 7), scale=2.0), lambda x: ops.log_softmax(x, 0)),
    GradCase("layer_norm", _n((3, 4, 6), (6,), (6,)),
             lambda x, w, b: ops.layer_norm(x, (6,), w, b, 1e-5)),
    GradCase("cross_entropy", _ce, lambda x, t: ops.cross_entropy(x, t, label_smoothing=0.1)),
    GradCase("attention", _n((2, 2, 5, 8), (2, 2, 6, 8), (2, 2, 6, 8)),
             lambda q, k, v: ops.scaled_dot_product_attention(q, k, v, is_causal=True)),
    GradCase("batch_norm_train", _n((4, 3, 2, 2), (3,), (3,)), _bn_train),
    GradCase("relu", _away_from_zero((3, 4)), ops.relu),
    GradCase("sigmoid", _n((3, 4), scale=2.0), ops.sigmoid),
    GradCase("gelu", _n((3, 4)), ops.gelu),
    GradCase("silu", _n((3, 4)), ops.silu),
    GradCase("softplus", _n((3, 4), scale=2.0), ops.softplus),
    GradCase("lstm_sequence", _n((4, 3, 5), (3, 4), (3, 4), (16, 5), (16, 4), (16,), (16,),
                                 scale=0.6), _rnn_outputs("LSTM"), factor=8.0),
    GradCase("gru_sequence", _n((4, 3, 5), (3, 4), (12, 5), (12, 4), (12,), (12,),
                                scale=0.6), _rnn_outputs("GRU"), factor=8.0),
]


def _differentiated(inputs):
    return tuple(i for i, x in enumerate(inputs) if x.dtype.kind == "f")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.parametrize("dtype", DTYPES)
def test_grad(kit, case, dtype):
    """Value and gradients of every differentiable input match the reference."""
    inputs = case.make(kit)
    positions = _differentiated(inputs)
    fn = value_and_grads(case.fn, positions, kit.case_key, dtype)
    kit.check(fn, *inputs, dtype=dtype, what=f"grad of {case.name}", factor=case.factor)
