"""The VJP rule of every primitive in mscore/autodiff/rules.py against central finite
differences in float64 on the numpy backend.

Each case differentiates ``f(primals) = sum(op(primals, ...) * c)`` with a fixed random cotangent
``c`` through :func:`mscore.autodiff.reference.reference_value_and_grad` (which records the
primitive and applies its rule) and compares every gradient element with ``(f(p + h e_i) - f(p - h
e_i)) / 2h``.
"""
from __future__ import annotations

import numpy as np
import pytest
from _helpers import numpy_context_each_test

import mscore as ms
from mscore import dispatch
from mscore.autodiff.reference import reference_value_and_grad
from mscore.autodiff.rules import VJP_RULES

F64 = ms.float64


class Case:
    """``op`` applied as ``call(op, *args, **attrs)``; ``args`` mixes differentiated numpy
    float64 arrays (positions in ``diff``) and fixed arguments."""

    def __init__(self, op, label, args, attrs=None, diff=None, h=1e-6, rtol=1e-6):
        self.op, self.label, self.args, self.attrs = op, label, args, attrs or {}
        self.diff = diff if diff is not None else tuple(
            i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype == np.float64)
        self.h, self.rtol = h, rtol

    @property
    def id(self):
        return f"{self.op}-{self.label}"


R = np.random.default_rng(20240601)


def n(*shape, scale=1.0):
    return R.standard_normal(shape) * scale


def pos(*shape):
    return R.uniform(0.3, 2.0, size=shape)


def away(*shape):
    return R.uniform(0.3, 2.0, size=shape) * R.choice([-1.0, 1.0], size=shape)


def distinct(*shape):
    """Values at least ~0.05 apart (no ties for max/min/pooling)."""
    size = int(np.prod(shape))
    return (R.permutation(size) * 0.07 - size * 0.035 + R.uniform(-0.01, 0.01, size)).reshape(
        shape)


def ints(values):
    return np.asarray(values, dtype=np.int64)


CASES = [
    Case("neg", "", [n(3, 4)]),
    Case("abs", "", [away(3, 4)]),
    Case("exp", "", [n(3, 4)]),
    Case("log", "", [pos(3, 4)]),
    Case("sqrt", "", [pos(3, 4)]),
    Case("sin", "", [n(3, 4)]),
    Case("cos", "", [n(3, 4)]),
    Case("tanh", "", [n(3, 4)]),
    Case("erf", "", [n(3, 4)]),
    Case("add", "broadcast", [n(3, 1, 4), n(2, 4)]),
    Case("sub", "broadcast", [n(4,), n(3, 2, 4)]),
    Case("mul", "broadcast", [n(3, 1, 4), n(2, 1)]),
    Case("div", "broadcast", [n(3, 4), away(4)]),
    Case("pow", "broadcast", [pos(3, 4), n(4)]),
    Case("maximum", "broadcast", [distinct(3, 4), distinct(4)]),
    Case("minimum", "broadcast", [distinct(3, 1), distinct(3, 4)]),
    Case("where", "broadcast", [R.random((3, 1)) > 0.5, n(3, 4), n(4)]),
    Case("cast", "to_float32", [n(3, 4), ms.float32], h=1e-2, rtol=1e-3),
    Case("sum", "all", [n(3, 4, 5)], {"axis": None, "keepdims": False}),
    Case("sum", "axes_keepdims", [n(3, 4, 5)], {"axis": (0, 2), "keepdims": True}),
    Case("sum", "axis", [n(3, 4, 5)], {"axis": (1,), "keepdims": False}),
    Case("max", "all", [distinct(3, 4)], {"axis": None, "keepdims": False}),
    Case("max", "axis_keepdims", [distinct(3, 4, 5)], {"axis": (1,), "keepdims": True}),
    Case("min", "axes", [distinct(3, 4, 5)], {"axis": (0, 2), "keepdims": False}),
    Case("reshape", "", [n(2, 3, 4), (4, 6)]),
    Case("transpose", "", [n(2, 3, 4), (2, 0, 1)]),
    Case("broadcast_to", "", [n(3, 1), (2, 3, 4)]),
    Case("concat", "axis1", [[n(2, 1, 3), n(2, 4, 3), n(2, 2, 3)]], {"axis": 1}, diff=()),
    Case("pad", "", [n(2, 3)], {"pad_width": ((1, 2), (0, 1)), "value": 0.5}),
    Case("getitem", "slices", [n(5, 4, 3), (slice(1, None, 2), None, Ellipsis, 1)]),
    Case("getitem", "int_array_repeats", [n(5, 4), (ints([0, 2, 0, -1]),)]),
    Case("getitem", "int_arrays_and_slice", [n(5, 4, 3),
                                             (ints([4, 0, 4]), slice(1, 3), ints([2, 2, 0]))]),
    Case("scatter_add", "slices", [n(5, 4), (slice(1, 5, 2), slice(None)), n(2, 4)]),
    Case("scatter_add", "repeated", [n(5, 4), (ints([0, 2, 0]),), n(3, 4)]),
    Case("matmul", "2d", [n(3, 4), n(4, 5)]),
    Case("matmul", "batched_broadcast", [n(2, 1, 3, 4), n(3, 4, 2)]),
    Case("matmul", "mixed_rank", [n(2, 3, 4), n(4, 5)]),
    Case("conv", "1d_stride_pad", [n(2, 3, 9), n(4, 3, 3)],
         {"stride": (2,), "padding": ((1, 2),), "dilation": (1,), "groups": 1}),
    Case("conv", "2d_stride_pad_dilation_groups", [n(2, 4, 7, 6), n(6, 2, 3, 2)],
         {"stride": (2, 1), "padding": ((1, 0), (2, 1)), "dilation": (1, 2), "groups": 2}),
    Case("conv", "3d", [n(1, 2, 4, 5, 4), n(2, 2, 2, 3, 2)],
         {"stride": (1, 2, 1), "padding": ((0, 1), (1, 1), (0, 0)), "dilation": (1, 1, 1),
          "groups": 1}),
    Case("conv_transpose", "1d_output_padding", [n(2, 3, 5), n(3, 2, 4)],
         {"stride": (3,), "padding": ((1, 2),), "output_padding": (2,), "dilation": (1,),
          "groups": 1}),
    Case("conv_transpose", "2d_stride_pad_dilation_groups", [n(2, 4, 4, 3), n(4, 3, 3, 3)],
         {"stride": (2, 1), "padding": ((1, 1), (0, 1)), "output_padding": (1, 0),
          "dilation": (1, 2), "groups": 2}),
    Case("max_pool", "2d_pad", [distinct(2, 3, 7, 6)],
         {"kernel": (3, 2), "stride": (2, 2), "padding": ((1, 1), (0, 1))}),
    Case("max_pool", "1d_overlapping", [distinct(2, 2, 9)],
         {"kernel": (3,), "stride": (1,), "padding": ((1, 1),)}),
    Case("avg_pool", "2d_pad_count_pad", [n(2, 3, 7, 6)],
         {"kernel": (3, 2), "stride": (2, 2), "padding": ((1, 1), (0, 1)),
          "count_include_pad": True}),
    Case("avg_pool", "2d_pad_exclude_pad", [n(2, 3, 7, 6)],
         {"kernel": (3, 2), "stride": (2, 2), "padding": ((1, 1), (0, 1)),
          "count_include_pad": False}),
]


_numpy_context = numpy_context_each_test()


def _backend():
    return dispatch.backend()


def _native_args(case, primals):
    """The op's arguments with the differentiated positions replaced by ``primals`` (numpy
    arrays are the numpy backend's native arrays; tracers wrap them)."""
    if case.op == "concat":
        return [list(primals)]
    args = list(case.args)
    for pos_, p in zip(case.diff, primals):
        args[pos_] = p
    return args


def _primal_arrays(case):
    if case.op == "concat":
        return list(case.args[0])
    return [case.args[i] for i in case.diff]


def _objective(case, cot_holder):
    def f(*prims):
        args = _native_args(case, prims)
        out = dispatch.call(case.op, *args, **case.attrs)
        if "cot" not in cot_holder:
            shape = dispatch.shape(out)
            rng = np.random.default_rng(7)
            cot_holder["cot"] = rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1, 1], shape)
        cot = _backend().from_numpy(cot_holder["cot"], dispatch.dtype(out))
        return dispatch.call("sum", dispatch.call("mul", out, cot), axis=None, keepdims=False)
    return f


def _finite_differences(f, primals, h):
    grads = []
    for k, p in enumerate(primals):
        g = np.zeros_like(p)
        for idx in np.ndindex(p.shape):
            plus = [q.copy() for q in primals]
            minus = [q.copy() for q in primals]
            plus[k][idx] += h
            minus[k][idx] -= h
            fp = float(_backend().to_numpy(f(*plus)))
            fm = float(_backend().to_numpy(f(*minus)))
            g[idx] = (fp - fm) / (2 * h)
        grads.append(g)
    return grads


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_vjp_matches_finite_differences(case):
    """The rule's gradient equals the central difference for every input element."""
    primals = [np.array(p, dtype=np.float64) for p in _primal_arrays(case)]
    holder = {}
    f = _objective(case, holder)

    def fn(*tracers):
        return f(*tracers), []

    (value, _), grads = reference_value_and_grad(fn, primals, True)
    assert np.isclose(float(_backend().to_numpy(value)), float(_backend().to_numpy(f(*primals))),
                      rtol=1e-12), "value_and_grad changed the value"
    fd = _finite_differences(f, primals, case.h)
    assert len(grads) == len(primals)
    for k, (g, want) in enumerate(zip(grads, fd)):
        got = _backend().to_numpy(g)
        assert got.shape == want.shape, f"grad {k}: shape {got.shape}, expected {want.shape}"
        scale = max(float(np.abs(want).max()), 1e-3)
        err = np.abs(got - want)
        tol = case.rtol * np.abs(want) + case.rtol * scale
        assert bool((err <= tol).all()), (
            f"{case.id}: grad of input {k} differs from finite differences by up to "
            f"{err.max():.3g} (at {np.unravel_index(np.argmax(err - tol), err.shape)})")


def test_every_rule_is_checked():
    """A new VJP rule needs a finite-difference case here."""
    covered = {c.op for c in CASES}
    missing = sorted(set(VJP_RULES) - covered)
    assert not missing, f"VJP rules without a finite-difference test: {missing}"


def test_non_differentiable_inputs_get_no_gradient():
    """Integer/boolean positions of where/cast/getitem receive no gradient (None)."""
    b = _backend()
    cond = b.from_numpy(np.array([True, False]))
    x, y = b.from_numpy(np.ones(2)), b.from_numpy(np.zeros(2))
    out = b.where(cond, x, y)
    grads = VJP_RULES["where"](b.from_numpy(np.ones(2)), out, cond, x, y)
    assert grads[0] is None
    ints_ = b.from_numpy(np.array([1, 2], dtype=np.int32))
    cast_out = b.cast(ints_, ms.float32)
    assert VJP_RULES["cast"](b.from_numpy(np.ones(2, np.float32)), cast_out, ints_,
                             ms.float32) == [None]
