"""Level 1 (fused ops): softmax, log_softmax, layer_norm, cross_entropy, attention, addcmul,
batch_norm, gelu, conv_bias, relu, int_floor_divide (integer dtypes), rnn_sequence (the
recurrent layers' LSTM/GRU/RNN sequence), the multi-tensor
updates (momentum_update, adam_update, foreach_div, unscale_check), the reference autodiff's
kernels (relu_backward, sparse_nll_rows, sparse_xent_grad, see mscore.autodiff.kernels) and
cross entropy's class_label_check through ``mscore.ops`` (the kernels through their
definitions in mscore.autodiff.kernels and mscore.ops.nn.loss), once with the backend's fused op
(when it provides one) and once with the core's composite from primitives, both against the
numpy reference."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np
import pytest

from mscore import ops
from mscore.autodiff import kernels
from mscore.common import dtype as mstype
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.conformance import harness
from mscore.dispatch import call
from mscore.nn.layer.rnns import rnn_sequence
from mscore.ops.multi_tensor import adam_update, divide_all, momentum_update, unscale_and_check
from mscore.ops.nn.loss import class_label_check

LEVEL = "ops"
FLOATS = ("float16", "bfloat16", "float32", "float64")
LISTS = ("float32", "float64")   # the multi-tensor updates: list plumbing, two precisions


@dataclass
class FusedCase:
    """``fused``: the Backend attribute (a name of ``FUSED_OPS``) the case exercises."""

    op: str
    variant: str
    fused: str
    make: object          # (kit) -> list of numpy inputs
    fn: object            # (*Tensors) -> Tensor
    factor: float = 2.0
    dtypes: tuple = FLOATS
    also_off: tuple = ()  # other Backend attributes off on both paths (one path each)
    typed: str = ""       # the result's key that keeps the inputs' dtype ("": every leaf)

    @property
    def id(self):
        return f"{self.op}_{self.variant}" if self.variant else self.op

    def __repr__(self):
        return self.id


def _x(*shapes, scale=2.0):
    return lambda kit: [kit.normal(s, scale) for s in shapes]


def _ce_inputs(n=6, c=5, ignore=None):
    def make(kit):
        target = kit.rng.integers(0, c, size=(n,)).astype(np.int64)
        if ignore is not None:
            target[1] = ignore
        return [kit.normal((n, c), 2.0), target]
    return make


def _attn_inputs(mask=None):
    def make(kit):
        q, k, v = kit.normal((2, 2, 5, 8)), kit.normal((2, 2, 6, 8)), kit.normal((2, 2, 6, 8))
        if mask == "bool":
            m = kit.rng.random((5, 6)) > 0.3
            m[:, 0] = True  # every row keeps at least one key
            return [q, k, v, m]
        if mask == "float":
            return [q, k, v, kit.normal((2, 1, 5, 6))]
        return [q, k, v]
    return make


CASES = [
    FusedCase("softmax", "last_axis", "softmax", _x((4, 7)), lambda x: ops.softmax(x, -1)),
    FusedCase("softmax", "axis0", "softmax", _x((4, 3, 5)), lambda x: ops.softmax(x, 0)),
    FusedCase("log_softmax", "last_axis", "log_softmax", _x((4, 7)),
              lambda x: ops.log_softmax(x, -1)),
    FusedCase("log_softmax", "axis1", "log_softmax", _x((2, 6, 3)),
              lambda x: ops.log_softmax(x, 1)),
    FusedCase("layer_norm", "affine", "layer_norm", _x((3, 4, 6), (6,), (6,)),
              lambda x, w, b: ops.layer_norm(x, (6,), w, b, 1e-5), factor=4.0),
    FusedCase("layer_norm", "2d_shape_plain", "layer_norm", _x((3, 4, 6)),
              lambda x: ops.layer_norm(x, (4, 6), None, None, 1e-5), factor=4.0),
    FusedCase("cross_entropy", "mean", "cross_entropy", _ce_inputs(),
              lambda x, t: ops.cross_entropy(x, t)),
    FusedCase("cross_entropy", "sum_ignore_index", "cross_entropy", _ce_inputs(ignore=-100),
              lambda x, t: ops.cross_entropy(x, t, reduction="sum")),
    FusedCase("cross_entropy", "none_label_smoothing", "cross_entropy", _ce_inputs(),
              lambda x, t: ops.cross_entropy(x, t, reduction="none", label_smoothing=0.1)),
    FusedCase("attention", "plain", "attention", _attn_inputs(),
              lambda q, k, v: ops.scaled_dot_product_attention(q, k, v), factor=4.0),
    FusedCase("attention", "causal_scale", "attention", _attn_inputs(),
              lambda q, k, v: ops.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                               scale=0.5), factor=4.0),
    FusedCase("attention", "bool_mask", "attention", _attn_inputs("bool"),
              lambda q, k, v, m: ops.scaled_dot_product_attention(q, k, v, attn_mask=m),
              factor=4.0),
    FusedCase("attention", "float_mask", "attention", _attn_inputs("float"),
              lambda q, k, v, m: ops.scaled_dot_product_attention(q, k, v, attn_mask=m),
              factor=4.0),
    FusedCase("addcmul", "broadcast", "addcmul", _x((3, 1, 4), (2, 4), (4,)),
              lambda a, b, c: ops.addcmul(a, b, c)),
    FusedCase("addcmul", "value", "addcmul", _x((3, 4), (3, 4), (3, 4)),
              lambda a, b, c: ops.addcmul(a, b, c, value=-0.5)),
]


def _batch_norm_train(x, w, b):
    c = x.shape[1]
    # The running statistics in float32 (float64 for float64 inputs), as a layer keeps them.
    stat = x.dtype if x.dtype == mstype.float64 else mstype.float32
    rm = Parameter(ops.zeros((c,), stat), name="rm", requires_grad=False)
    rv = Parameter(ops.ones((c,), stat), name="rv", requires_grad=False)
    out = ops.batch_norm(x, rm, rv, w, b, training=True, momentum=0.1, eps=1e-5)
    return {"out": out, "running_mean": rm, "running_var": rv}


def _batch_norm_eval(x, w, b, m, v):
    return ops.batch_norm(x, m, v, w, b, training=False, eps=1e-5)


def _bn_inputs(shape, training):
    c = shape[1]
    if training:
        return _x(shape, (c,), (c,))
    return lambda kit: [kit.normal(shape), kit.normal((c,)), kit.normal((c,)),
                        kit.normal((c,)), kit.uniform((c,), 0.5, 2.0)]


# Batch norm over its shape classes: (N, C), (N, C, L), (N, C, H, W), (N, C, D, H, W). The
# training cases run once through the functional ``batch_norm`` and once through
# ``batch_norm_inplace`` (each with the other off), the composite with both off.
BN_SHAPES = {"2d": (6, 3), "3d": (4, 3, 5), "4d": (4, 3, 2, 2), "5d": (2, 3, 2, 2, 2)}
CASES += [FusedCase("batch_norm", f"train_{k}" if k != "4d" else "train", "batch_norm",
                    _bn_inputs(shape, True), _batch_norm_train, factor=4.0,
                    also_off=("batch_norm_inplace",), typed="out")
          for k, shape in BN_SHAPES.items()]
CASES += [FusedCase("batch_norm", f"eval_{k}" if k != "4d" else "eval", "batch_norm",
                    _bn_inputs(shape, False), _batch_norm_eval, factor=4.0)
          for k, shape in BN_SHAPES.items()]
CASES += [FusedCase("batch_norm_inplace", f"train_{k}", "batch_norm_inplace",
                    _bn_inputs(shape, True), _batch_norm_train, factor=4.0,
                    also_off=("batch_norm",), typed="out")
          for k, shape in BN_SHAPES.items()]
CASES += [
    FusedCase("dense", "bias", "dense", _x((3, 6), (4, 6), (4,)), ops.dense),
    FusedCase("dense", "3d_no_bias", "dense", _x((2, 3, 6), (4, 6)), ops.dense),
]

CASES += [
    FusedCase("gelu", "erf", "gelu", _x((3, 5)), lambda x: ops.gelu(x, "none")),
    FusedCase("gelu", "tanh", "gelu", _x((3, 5)), lambda x: ops.gelu(x, "tanh")),
    FusedCase("conv_bias", "stride_pad_groups", "conv_bias", _x((2, 4, 5, 6), (6, 2, 3, 3), (6,)),
              lambda x, w, b: ops.conv2d(x, w, b, stride=(2, 1), pad_mode="pad",
                                         padding=(1, 0, 2, 1), groups=2), factor=4.0),
]

def _momentum(nesterov, inplace):
    def fn(p1, v1, g1, p2, v2, g2):
        lr, m = (call("full", (), value, p1.dtype) for value in (0.1, 0.9))
        new_p, new_v = momentum_update([p1._data, p2._data], [v1._data, v2._data],
                                       [g1._data, g2._data], lr, m, nesterov, inplace)
        return {"params": [Tensor._wrap(x) for x in new_p],
                "moments": [Tensor._wrap(x) for x in new_v]}
    return fn


def _adam(nesterov, decay, inplace):
    def fn(p1, m1, v1, g1, p2, m2, v2, g2):
        lr = call("full", (), 0.01, p1.dtype)
        wd = call("full", (), 0.1, p1.dtype) if decay else None
        v1, v2 = v1 * v1, v2 * v2     # second moments are non-negative
        out = adam_update([p1._data, p2._data], [m1._data, m2._data], [v1._data, v2._data],
                          [g1._data, g2._data], lr, 0.9, 0.99, 1e-3, nesterov, wd, inplace)
        return {k: [Tensor._wrap(x) for x in o] for k, o in zip(("params", "m", "v"), out)}
    return fn


def _divide_all(a, b, s):
    return [Tensor._wrap(x) for x in divide_all([a._data, b._data], s._data)]


def _unscale_check(poison):
    def fn(a, b, s):
        if poison:
            b = b * Tensor(np.where(np.arange(b.size) == 2, np.inf, 1.0).reshape(b.shape),
                           dtype=b.dtype)
        out, finite = unscale_and_check([a._data, b._data], s._data)
        return {"arrays": [Tensor._wrap(x) for x in out], "finite": np.bool_(finite)}
    return fn


CASES += [
    FusedCase("unscale_check", "finite", "unscale_check",
              lambda kit: [kit.normal((3, 4)), kit.normal((5,)), kit.uniform((), 2.0, 8.0)],
              _unscale_check(False), dtypes=LISTS),
    FusedCase("unscale_check", "inf", "unscale_check",
              lambda kit: [kit.normal((3, 4)), kit.normal((5,)), kit.uniform((), 2.0, 8.0)],
              _unscale_check(True), dtypes=LISTS),
    FusedCase("momentum_update", "plain", "momentum_update",
              _x((3, 4), (3, 4), (3, 4), (5,), (5,), (5,)), _momentum(False, False),
              dtypes=LISTS),
    FusedCase("momentum_update", "nesterov_inplace", "momentum_update",
              _x((3, 4), (3, 4), (3, 4), (5,), (5,), (5,)), _momentum(True, True),
              dtypes=LISTS),
    FusedCase("adam_update", "plain", "adam_update",
              _x((3, 4), (3, 4), (3, 4), (3, 4), (5,), (5,), (5,), (5,)),
              _adam(False, False, False), factor=4.0, dtypes=LISTS),
    FusedCase("adam_update", "nesterov_decay_inplace", "adam_update",
              _x((3, 4), (3, 4), (3, 4), (3, 4), (5,), (5,), (5,), (5,)),
              _adam(True, True, True), factor=4.0, dtypes=LISTS),
    FusedCase("foreach_div", "two_arrays", "foreach_div",
              lambda kit: [kit.normal((3, 4)), kit.normal((5,)), kit.uniform((), 2.0, 8.0)],
              _divide_all, dtypes=LISTS),
]


def _labels(kit, n, c, ignore):
    target = kit.rng.integers(0, c, size=(n,)).astype(np.int64)
    target[1] = ignore
    return target


def _nll_rows_inputs(ignore):
    def make(kit):
        return [kit.normal((6, 5), 2.0), kit.uniform((6, 1), 0.5, 4.0), _labels(kit, 6, 5,
                                                                                  ignore)]
    return make


def _nll_rows(ignore):
    def fn(sh, s, t):
        loss, valid = kernels.sparse_nll_rows(sh._data, s._data, t._data, ignore)
        return {"loss": Tensor._wrap(loss), "valid": Tensor._wrap(valid)}
    return fn


def _xent_grad_inputs(scale_shape):
    def make(kit):
        valid = (kit.rng.random((6, 1)) > 0.3).astype(np.float64)
        return [kit.uniform((6, 5), 0.1, 2.0), kit.uniform((6, 1), 1.0, 6.0),
                _labels(kit, 6, 5, -100), valid, kit.uniform(scale_shape, 0.5, 2.0)]
    return make


def _xent_grad(e, s, t, valid, scale):
    return Tensor._wrap(kernels.sparse_xent_grad(e._data, s._data, t._data, valid._data,
                                                 scale._data))


def _label_check(ignore):
    def fn(labels):
        checked, bad = class_label_check(labels._data, 5, ignore)
        return {"checked": Tensor._wrap(checked), "bad": np.bool_(bad)}
    return fn


def _labels_with(*values):
    return lambda kit: [np.array(values, np.int64)]


CASES += [
    FusedCase("class_label_check", "bad_and_ignored", "class_label_check",
              _labels_with(0, 4, -100, 5, -1, 2), _label_check(-100), dtypes=("float32",)),
    FusedCase("class_label_check", "valid", "class_label_check",
              _labels_with(0, 4, 3, 2, 3), _label_check(3), dtypes=("float32",)),
    FusedCase("class_label_check", "nothing_ignored", "class_label_check",
              _labels_with(1, -100, 2), _label_check(None), dtypes=("float32",)),
    FusedCase("relu", "", "relu", _x((3, 5)), ops.relu),
    FusedCase("relu_backward", "", "relu_backward", _x((3, 5), (3, 5)),
              lambda g, out: Tensor._wrap(kernels.relu_backward(g._data, out._data))),
    FusedCase("sparse_nll_rows", "ignore_default", "sparse_nll_rows", _nll_rows_inputs(-100),
              _nll_rows(-100), factor=4.0),
    FusedCase("sparse_nll_rows", "ignore_in_range", "sparse_nll_rows", _nll_rows_inputs(2),
              _nll_rows(2), factor=4.0),
    FusedCase("sparse_xent_grad", "mean", "sparse_xent_grad", _xent_grad_inputs(()),
              _xent_grad, factor=4.0),
    FusedCase("sparse_xent_grad", "per_row", "sparse_xent_grad", _xent_grad_inputs((6, 1)),
              _xent_grad, factor=4.0),
]


def _int_division_inputs(name):
    """Operands of integer floor division in dtype ``name``, over the whole range, with its
    edges: MIN, MAX and 0 dividends; divisors 0, -1 (signed), 1 and MAX broadcast over the
    rows (the dtype is the inputs' own: the case has one dtype)."""
    def make(kit):
        d = mstype.get_dtype(name).np_dtype
        info = np.iinfo(d)
        x = kit.rng.integers(info.min, info.max, (3, 8), endpoint=True, dtype=d)
        y = kit.rng.integers(info.min, info.max, (8,), endpoint=True, dtype=d)
        x[0, :3] = [info.min, info.max, 0]
        x[1, 1] = info.min
        y[:4] = [0, -1 if info.min else 2, 1, info.max]
        return [x, y]
    return make


CASES += [FusedCase("floor_divide", "int", "int_floor_divide", _int_division_inputs(d),
                    ops.floor_divide, dtypes=(d,)) for d in harness.INT_DTYPES]

_RNN_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _rnn_inputs(mode, bias=True, steps=4, batch=3, size=5, hidden=4):
    """x (T, N, in), h0, c0 (N, H), w_ih, w_hh and, with ``bias``, b_ih, b_hh."""
    g = _RNN_GATES[mode] * hidden

    def make(kit):
        shapes = [(steps, batch, size), (batch, hidden), (batch, hidden), (g, size),
                  (g, hidden)] + ([(g,), (g,)] if bias else [])
        return [kit.normal(s, 0.6) for s in shapes]
    return make


def _rnn(mode):
    """The recurrent layer's sequence op (``nn.layer.rnns.rnn_sequence``): the outputs, and
    the final states."""
    def fn(x, h0, c0, w_ih, w_hh, b_ih=None, b_hh=None):
        out, h, c = rnn_sequence(mode, x, h0, c0 if mode == "LSTM" else None, w_ih, w_hh,
                                 b_ih, b_hh)
        result = {"out": out, "h": h}
        if c is not None:
            result["c"] = c
        return result
    return fn


CASES += [FusedCase("rnn_sequence", f"{mode.lower()}{'' if bias else '_no_bias'}",
                    "rnn_sequence", _rnn_inputs(mode, bias), _rnn(mode), factor=8.0,
                    dtypes=("float32", "float64"))
          for mode in _RNN_GATES for bias in (True, False) if bias or mode == "LSTM"]

PARAMS = [pytest.param(c, path, d, id=f"{c.id}-{path}-{d}")
          for c in CASES for path in ("fused", "composite") for d in c.dtypes]


@pytest.mark.parametrize("case,path,dtype", PARAMS)
def test_fused(kit, case, path, dtype):
    """The op matches the reference through the backend's fused op and the core composite."""
    inputs = case.make(kit)
    if path == "fused" and kit.fused(case.fused) is None:
        pytest.skip(f"fused op {case.fused} not provided by {kit.name} (its composite is "
                    f"checked by the 'composite' case)")
    what = f"{case.op} ({path})"
    off = case.also_off + ((case.fused,) if path == "composite" else ())
    with kit.declaring(dtype, f"{case.id} ({path})"), contextlib.ExitStack() as stack:
        for name in off:
            if kit.fused(name) is not None:
                stack.enter_context(harness.without_fused(kit.backend, name))
        called = stack.enter_context(kit.calls.recording())
        actual, _ = kit.check(case.fn, *inputs, dtype=dtype, what=what, factor=case.factor)
        kit.assert_result_dtypes(actual[case.typed] if case.typed else actual, dtype, what)
        if path == "fused" and case.fused not in called:
            raise harness.ConformanceFailure(
                f"{what} never called the backend's {case.fused}: the fused path did not "
                f"reach it")


CAST_PAIRS = [(s, d) for s in FLOATS for d in FLOATS if s != d]


@pytest.mark.parametrize("src,dst", CAST_PAIRS)
def test_float_caster_equals_cast(kit, src, dst):
    """The backend's ``float_caster`` (amp's weight and input casts) gives ``cast``'s bits,
    infinities, NaN and overflow included."""
    backend = kit.backend
    if getattr(backend, "float_caster", None) is None or \
            getattr(backend, "native_dtype", None) is None:
        pytest.skip(f"{kit.name} has no float_caster (amp casts through cast)")
    if not (kit.has_dtype(src) and kit.has_dtype(dst)):
        pytest.skip(f"{kit.name} does not declare {src} and {dst}")
    values = np.concatenate([kit.normal((16,), 3.0), kit.uniform((8,), -1e-6, 1e-6),
                             [70000.0, -70000.0, 1e39, np.inf, -np.inf, np.nan, 0.0, -0.0]])
    dtype = getattr(mstype, dst)
    with np.errstate(over="ignore"):   # the inputs' own rounding to src overflows too
        fast, composite = kit.run(
            lambda x: (Tensor._wrap(backend.float_caster(dtype)(x._data)),
                       Tensor._wrap(call("cast", x._data, dtype))), values, dtype=src)
    assert fast.dtype == composite.dtype, (
        f"float_caster {src} -> {dst} gave {fast.dtype}, cast gave {composite.dtype}")
    np.testing.assert_array_equal(harness.bit_pattern(fast), harness.bit_pattern(composite),
                                  err_msg=f"float_caster {src} -> {dst}")
