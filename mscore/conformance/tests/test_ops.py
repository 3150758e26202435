"""Level 1: every primitive op of the contract, on every dtype of its domain that the backend
declares, against the numpy reference.

Each case calls the backend's method directly on native arrays, exactly as the core does, with
the inputs rounded to the tested dtype; the reference runs the same call on the numpy backend
in float64 (integers and booleans: in their own dtype, compared exactly, so integer overflow
must wrap around as two's complement arithmetic does). The domains: arithmetic, reductions,
``matmul`` and ``max_pool`` take every integer dtype as well as the floats; the transcendental
functions, ``floor``/``ceil``, convolutions and ``avg_pool`` are float-only; shape ops,
indexing, ``where``, ``equal``/``not_equal`` and casts take bool too. The edge cases the
contract pins (division by zero, NaN in reductions, out-of-range casts) are in
``test_edge_semantics.py``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from mscore.common import dtype as mdt
from mscore.conformance import harness

FLOATS = harness.FLOAT_DTYPES
INTS = harness.INT_DTYPES
ALL = FLOATS + INTS + ("bool",)


@dataclass
class Case:
    """One primitive-op check: ``make(rng, dtype)`` gives numpy inputs, ``call(backend,
    *natives)`` runs the op; ``out`` maps the tested dtype to the result's dtype."""

    name: str
    variant: str
    dtypes: tuple
    make: object
    call: object
    out: object = None
    factor: float = 1.0
    needs: tuple = ()            # further dtypes the case needs declared (a cast's target)
    attrs: dict = field(default_factory=dict)

    @property
    def id(self):
        return f"{self.name}_{self.variant}" if self.variant else self.name

    def __repr__(self):
        return self.id


def _u(low, high, *shapes):
    def make(rng, dtype):
        return [_cast(rng.uniform(low, high, size=s), dtype) for s in shapes]
    return make


def _cast(x, dtype):
    d = mdt.get_dtype(dtype)
    if d.is_floating:
        return np.asarray(x, dtype=np.float64)  # rounded to dtype by the kit
    if d.is_bool:
        return np.asarray(x) > 0
    # Through int64 so that values outside the dtype wrap (well defined) instead of a float
    # cast out of range (undefined in numpy).
    return np.round(np.asarray(x)).astype(np.int64).astype(d.np_dtype)


def _full_range(*shapes):
    """Integers spread over the whole range of the dtype (so arithmetic wraps around);
    floats in [-3, 3)."""
    def make(rng, dtype):
        d = mdt.get_dtype(dtype)
        if d.is_floating:
            return [rng.uniform(-3, 3, size=s) for s in shapes]
        info = np.iinfo(d.np_dtype)
        return [rng.integers(info.min, info.max, size=s, endpoint=True, dtype=d.np_dtype)
                for s in shapes]
    return make


def _grid(*shapes, low=-3, high=4):
    """Values on a small integer grid (ties and equal elements on purpose)."""
    def make(rng, dtype):
        return [_cast(rng.integers(low, high, size=s).astype(np.float64), dtype)
                for s in shapes]
    return make


def _halves(*shapes):
    """Non-integer values for floor/ceil (never exactly on an integer)."""
    def make(rng, dtype):
        return [np.round(rng.uniform(-3, 3, size=s) * 4) / 4 + 0.125 for s in shapes]
    return make


def _bools(*shapes):
    def make(rng, dtype):
        return [rng.random(s) > 0.5 for s in shapes]
    return make


def _to(name):
    return lambda dtype: name


CASES = []
# The dtype creation ops make: the tested dtype (float64 on the reference side), set per call.
_DT = {}


def case(name, variant, dtypes, make, call, out=None, factor=1.0, needs=()):
    CASES.append(Case(name, variant, dtypes, make, call, out, factor, needs))


# -- creation ----------------------------------------------------------------------------------
case("full", "", ALL, lambda rng, d: [],
     lambda b: b.full((2, 3), 1, _DT["d"]))
case("arange", "int", INTS, lambda rng, d: [],
     lambda b: b.arange(1, 10, 3, _DT["d"]))
case("arange", "float", ("float32", "float64"), lambda rng, d: [],
     lambda b: b.arange(0.5, 3.0, 0.5, _DT["d"]))


def _cast_inputs(target):
    """Values every source dtype holds and ``target`` represents (out-of-range float casts
    are pinned in test_edge_semantics); integer to narrower integer wraps around."""
    t = mdt.get_dtype(target)

    def make(rng, dtype):
        d = mdt.get_dtype(dtype)
        if d.is_bool:
            return [rng.random((3, 4)) > 0.5]
        if d.is_floating:
            low = 0 if t.is_unsigned else -100
            x = rng.uniform(low, 100, size=(3, 4))
            x[0, :2] = (0.0, -0.0 if low < 0 else 0.5)   # zero and a fraction: bool targets
            return [x]
        if t.is_floating:   # small integers: exact in every float dtype
            return [_cast(rng.integers(0 if d.is_unsigned else -64, 64, size=(3, 4)), dtype)]
        return _full_range((3, 4))(rng, dtype)
    return make


for _target in ALL:
    case("cast", f"to_{_target}", ALL, _cast_inputs(_target),
         (lambda t: lambda b, x: b.cast(x, mdt.get_dtype(t)))(_target), out=_to(_target),
         needs=(_target,))

# -- elementwise unary -------------------------------------------------------------------------
for _name, _lo, _hi in (("neg", -3, 3), ("abs", -3, 3), ("exp", -3, 3), ("log", 0.1, 5),
                        ("sqrt", 0.01, 5), ("sin", -4, 4), ("cos", -4, 4), ("tanh", -3, 3),
                        ("erf", -2.5, 2.5)):
    case(_name, "", FLOATS, _u(_lo, _hi, (3, 5)),
         (lambda n: lambda b, x: getattr(b, n)(x))(_name))
for _name in ("neg", "abs", "sign"):
    case(_name, "int", INTS, _full_range((3, 5)),
         (lambda n: lambda b, x: getattr(b, n)(x))(_name))
case("sign", "", FLOATS, _grid((3, 5), low=-2, high=3), lambda b, x: b.sign(x))
case("floor", "", FLOATS, _halves((3, 5)), lambda b, x: b.floor(x))
case("ceil", "", FLOATS, _halves((3, 5)), lambda b, x: b.ceil(x))
case("logical_not", "", ("bool",), _bools((3, 5)), lambda b, x: b.logical_not(x))


def _with_nonfinite(rng, dtype):
    x = rng.uniform(-3, 3, size=(3, 5))
    x[0, 1], x[1, 2], x[2, 3] = np.inf, -np.inf, np.nan
    return [x]


case("isfinite", "", FLOATS, _with_nonfinite, lambda b, x: b.isfinite(x), out=_to("bool"))

# -- elementwise binary (broadcasting shapes) --------------------------------------------------
_BROADCAST = ((3, 1, 4), (2, 4))
for _name in ("add", "sub", "mul", "maximum", "minimum"):
    case(_name, "", FLOATS, _u(-3, 3, *_BROADCAST),
         (lambda n: lambda b, x, y: getattr(b, n)(x, y))(_name))
    case(_name, "int", INTS, _full_range(*_BROADCAST),
         (lambda n: lambda b, x, y: getattr(b, n)(x, y))(_name))


# Two operands of one size and different shapes: an op that pairs elements in order instead
# of broadcasting gives the right size and the wrong shape and values.
_OUTER = ((4, 1), (1, 4))
for _name in ("add", "sub", "mul", "maximum", "minimum"):
    case(_name, "outer", FLOATS, _u(-3, 3, *_OUTER),
         (lambda n: lambda b, x, y: getattr(b, n)(x, y))(_name))
case("div", "outer", FLOATS, _u(0.5, 3, *_OUTER), lambda b, x, y: b.div(x, y))
# Operands of the result's shape: an op that writes into one of them (instead of a new array)
# is caught by the check that the arguments keep their values.
for _name in ("add", "sub", "mul"):
    case(_name, "same_shape", ("float32",), _u(-3, 3, (3, 4), (3, 4)),
         (lambda n: lambda b, x, y: getattr(b, n)(x, y))(_name))


def _divisor_inputs(rng, dtype):
    x = rng.uniform(-3, 3, size=(3, 1, 4))
    y = rng.uniform(0.5, 2, size=(2, 4)) * rng.choice([-1.0, 1.0], size=(2, 4))
    return [_cast(x, dtype), _cast(y, dtype)]


def _int_div_inputs(rng, dtype):
    x = _full_range((3, 1, 4))(rng, dtype)[0]
    signs = 1 if mdt.get_dtype(dtype).is_unsigned else rng.choice([-1, 1], size=(2, 4))
    y = rng.integers(1, 12, size=(2, 4)) * signs
    return [x, _cast(y, dtype)]


case("div", "", FLOATS, _divisor_inputs, lambda b, x, y: b.div(x, y))
case("div", "int_truncates", INTS, _int_div_inputs, lambda b, x, y: b.div(x, y))


def _pow_inputs(rng, dtype):
    return [rng.uniform(0.5, 2, size=(3, 1, 4)), rng.uniform(-2, 2, size=(2, 4))]


case("pow", "", FLOATS, _pow_inputs, lambda b, x, y: b.pow(x, y))


def _int_pow_inputs(rng, dtype):
    low = 0 if mdt.get_dtype(dtype).is_unsigned else -6
    return [_cast(rng.integers(low, 12, size=(3, 1, 4)), dtype),
            _cast(rng.integers(0, 4, size=(2, 4)), dtype)]   # 11**3 wraps in 8 bits


case("pow", "int", INTS, _int_pow_inputs, lambda b, x, y: b.pow(x, y))
for _name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
    for _variant, _dts in (("", FLOATS), ("int", INTS)):
        case(_name, _variant, _dts, _grid(*_BROADCAST, low=-2, high=3),
             (lambda n: lambda b, x, y: getattr(b, n)(x, y))(_name), out=_to("bool"))
for _name in ("equal", "not_equal"):
    case(_name, "bool", ("bool",), _bools(*_BROADCAST),
         (lambda n: lambda b, x, y: getattr(b, n)(x, y))(_name), out=_to("bool"))
for _name in ("logical_and", "logical_or"):
    case(_name, "", ("bool",), _bools(*_BROADCAST),
         (lambda n: lambda b, x, y: getattr(b, n)(x, y))(_name))


def _where_inputs(rng, dtype):
    return [rng.random((2, 1)) > 0.5, _cast(rng.uniform(-3, 3, size=(2, 3)), dtype),
            _cast(rng.uniform(-3, 3, size=(3,)), dtype)]


case("where", "", ALL, _where_inputs, lambda b, c, x, y: b.where(c, x, y))

# -- reductions --------------------------------------------------------------------------------
for _axis, _keep in ((None, False), ((1,), False), ((0, 2), True), ((2,), True)):
    _variant = f"axis{'' if _axis is None else ''.join(map(str, _axis))}" + \
        ("_keep" if _keep else "")
    # Integers: the axis handling is the floats'; two variants show the dtype works.
    _dts = FLOATS + INTS if _axis in (None, (0, 2)) else FLOATS
    for _name in ("sum", "max", "min"):
        case(_name, _variant, _dts,
             _full_range((3, 4, 5)) if _name == "sum" else _grid((3, 4, 5), low=-50, high=50),
             (lambda n, a, k: lambda b, x: getattr(b, n)(x, axis=a, keepdims=k))(
                 _name, _axis, _keep),
             factor=2.0)
    for _name in ("all", "any"):
        case(_name, _variant, ("bool",), lambda rng, d: [rng.random((3, 4, 5)) > 0.3],
             (lambda n, a, k: lambda b, x: getattr(b, n)(x, axis=a, keepdims=k))(
                 _name, _axis, _keep))
for _name in ("argmax", "argmin"):
    for _axis in (0, 1):
        case(_name, f"axis{_axis}", FLOATS, _u(-3, 3, (4, 6)),
             (lambda n, a: lambda b, x: getattr(b, n)(x, axis=a))(_name, _axis),
             out=_to("int64"))
        case(_name, f"axis{_axis}_ties_first", INTS, _grid((4, 6), low=0, high=3),
             (lambda n, a: lambda b, x: getattr(b, n)(x, axis=a))(_name, _axis),
             out=_to("int64"))

# -- shape -------------------------------------------------------------------------------------
case("reshape", "", ALL, _u(-3, 3, (2, 3, 4)), lambda b, x: b.reshape(x, (4, 6)))
case("transpose", "", ALL, _u(-3, 3, (2, 3, 4)),
     lambda b, x: b.transpose(x, (2, 0, 1)))
case("broadcast_to", "", ALL, _u(-3, 3, (3, 1)),
     lambda b, x: b.broadcast_to(x, (2, 3, 4)))
case("concat", "", ALL, _u(-3, 3, (2, 1, 3), (2, 4, 3), (2, 2, 3)),
     lambda b, x, y, z: b.concat([x, y, z], axis=1))
case("pad", "zero", ALL, _u(-3, 3, (2, 3)),
     lambda b, x: b.pad(x, ((1, 2), (0, 1)), 0))
case("pad", "value", FLOATS, _u(-3, 3, (2, 3, 2)),
     lambda b, x: b.pad(x, ((0, 0), (2, 0), (1, 1)), -1.5))

# -- indexing ----------------------------------------------------------------------------------
_X543 = _u(-3, 3, (5, 4, 3))
case("getitem", "basic", ALL, _X543,
     lambda b, x: b.getitem(x, (slice(1, None, 2), None, Ellipsis, 1)))
case("getitem", "ints", FLOATS, _X543, lambda b, x: b.getitem(x, (1, slice(None), -1)))
case("getitem", "negative_step", FLOATS, _X543,
     lambda b, x: b.getitem(x, (slice(None, None, -1), slice(3, 0, -2))))


def _with_index(*index_arrays):
    def make(rng, dtype):
        return [_cast(rng.uniform(-3, 3, size=(5, 4, 3)), dtype)] + \
            [np.asarray(i, dtype=np.int64) for i in index_arrays]
    return make


case("getitem", "int_array", ALL, _with_index([0, 2, -1, 2]),
     lambda b, x, i: b.getitem(x, (i,)))
case("getitem", "int_arrays_adjacent", FLOATS, _with_index([[0], [3]], [1, 2]),
     lambda b, x, i, j: b.getitem(x, (slice(None), i, j)))
case("getitem", "int_arrays_apart", FLOATS, _with_index([4, 0, 1], [2, 2, 0]),
     lambda b, x, i, j: b.getitem(x, (i, slice(1, 3), j)))


def _scatter_inputs(update_shape, *index_arrays):
    def make(rng, dtype):
        return _full_range((5, 4), update_shape)(rng, dtype) + \
            [np.asarray(i, dtype=np.int64) for i in index_arrays]
    return make


case("scatter_add", "slices", FLOATS, _scatter_inputs((2, 4)),
     lambda b, x, u: b.scatter_add(x, (slice(1, 5, 2), slice(None)), u))
case("scatter_add", "repeated_indices", FLOATS + INTS, _scatter_inputs((4, 4), [0, 2, 0, -5]),
     lambda b, x, u, i: b.scatter_add(x, (i,), u))
case("scatter_add", "two_arrays", FLOATS, _scatter_inputs((3,), [1, 1, 3], [2, 2, 0]),
     lambda b, x, u, i, j: b.scatter_add(x, (i, j), u))

# -- linear algebra ----------------------------------------------------------------------------
case("matmul", "2d", FLOATS, _u(-1, 1, (3, 8), (8, 5)), lambda b, x, y: b.matmul(x, y),
     factor=2.0)
case("matmul", "batched_mixed_rank", FLOATS, _u(-1, 1, (2, 3, 8), (8, 5)),
     lambda b, x, y: b.matmul(x, y), factor=2.0)
case("matmul", "batched_broadcast", FLOATS, _u(-1, 1, (2, 1, 3, 6), (3, 6, 2)),
     lambda b, x, y: b.matmul(x, y), factor=2.0)
case("matmul", "int_wraps", INTS, _full_range((2, 3, 8), (8, 5)), lambda b, x, y: b.matmul(x, y))

# -- convolution and pooling -------------------------------------------------------------------
case("conv", "1d_stride_pad", FLOATS, _u(-1, 1, (2, 3, 9), (4, 3, 3)),
     lambda b, x, w: b.conv(x, w, stride=(2,), padding=((1, 1),), dilation=(1,), groups=1),
     factor=3.0)
case("conv", "2d_basic", FLOATS, _u(-1, 1, (1, 3, 5, 5), (4, 3, 3, 3)),
     lambda b, x, w: b.conv(x, w, stride=(1, 1), padding=((1, 1), (1, 1)),
                            dilation=(1, 1), groups=1), factor=3.0)
case("conv", "2d_stride_asympad_dilation_groups", FLOATS,
     _u(-1, 1, (2, 4, 7, 6), (6, 2, 3, 2)),
     lambda b, x, w: b.conv(x, w, stride=(2, 1), padding=((1, 0), (2, 1)), dilation=(1, 2),
                            groups=2), factor=3.0)
case("conv", "3d", FLOATS, _u(-1, 1, (1, 2, 4, 5, 4), (2, 2, 2, 3, 2)),
     lambda b, x, w: b.conv(x, w, stride=(1, 2, 1), padding=((0, 1), (1, 1), (0, 0)),
                            dilation=(1, 1, 1), groups=1), factor=3.0)
case("conv_transpose", "1d", FLOATS, _u(-1, 1, (2, 3, 5), (3, 2, 4)),
     lambda b, x, w: b.conv_transpose(x, w, stride=(3,), padding=((1, 2),),
                                      output_padding=(2,), dilation=(1,), groups=1),
     factor=3.0)
case("conv_transpose", "2d_stride_pad_dilation_groups", FLOATS,
     _u(-1, 1, (2, 4, 4, 3), (4, 3, 3, 3)),
     lambda b, x, w: b.conv_transpose(x, w, stride=(2, 1), padding=((1, 1), (0, 1)),
                                      output_padding=(1, 0), dilation=(1, 2), groups=2),
     factor=3.0)
case("max_pool", "1d", FLOATS, _u(-3, 3, (2, 3, 8)),
     lambda b, x: b.max_pool(x, kernel=(3,), stride=(2,), padding=((1, 1),)))
case("max_pool", "2d_pad", FLOATS + INTS, _full_range((2, 3, 7, 6)),
     lambda b, x: b.max_pool(x, kernel=(3, 2), stride=(2, 2), padding=((1, 1), (0, 1))))
case("avg_pool", "1d", FLOATS, _u(-3, 3, (2, 3, 8)),
     lambda b, x: b.avg_pool(x, kernel=(3,), stride=(2,), padding=((1, 1),),
                             count_include_pad=True), factor=2.0)
for _cip in (True, False):
    case("avg_pool", "2d_pad_" + ("count_pad" if _cip else "exclude_pad"), FLOATS,
         _u(-3, 3, (2, 3, 7, 6)),
         (lambda c: lambda b, x: b.avg_pool(x, kernel=(3, 2), stride=(2, 2),
                                            padding=((1, 1), (0, 1)),
                                            count_include_pad=c))(_cip), factor=2.0)

PARAMS = [pytest.param(c, d, id=f"{c.id}-{d}") for c in CASES for d in c.dtypes]


def _natives(backend, arrays, dtype=None):
    out = []
    for a in arrays:
        if dtype is not None and a.dtype.kind == "f":
            a = harness.quantize(a, dtype)
        out.append(backend.from_numpy(a))
    return out


def _leaves(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


@pytest.mark.parametrize("case,dtype", PARAMS)
def test_primitive(kit, case, dtype):
    """The backend's primitive op gives the reference's values, shape and dtype."""
    kit.require_dtype(*case.needs)
    d = mdt.get_dtype(dtype)
    inputs = case.make(kit.rng, dtype)
    if d.is_floating:
        inputs = [harness.quantize(a, dtype) if a.dtype.kind == "f" else a for a in inputs]
    # Reference: the numpy backend, float inputs widened to float64.
    _DT["d"] = mdt.float64 if d.is_floating else d
    ref_in = [harness.to_float64(a) for a in inputs]
    expected = [kit.ref.to_numpy(o) for o in _leaves(case.call(kit.ref, *_natives(kit.ref,
                                                                                   ref_in)))]
    # Backend under test, in the tested dtype.
    _DT["d"] = d
    natives = _natives(kit.backend, inputs)
    try:
        got = _leaves(case.call(kit.backend, *natives))
    except Exception as exc:
        raise harness.ConformanceFailure(
            f"{case.id}: {kit.declarer} declares {dtype}, but the op raised "
            f"{type(exc).__name__}: {exc}") from exc
    with kit.declaring(dtype, case.id):
        _check_results(kit, case, dtype, natives, inputs, got, expected)


def _check_results(kit, case, dtype, natives, inputs, got, expected):
    kit.assert_unchanged(natives, inputs, "the op")
    want_dtype = mdt.get_dtype(case.out(dtype) if case.out else dtype)
    for _i, (g, e) in enumerate(zip(got, expected)):
        what = f"{case.name}({case.variant})" if case.variant else case.name
        kit.assert_dtype(g, want_dtype, what)
        actual = kit.numpy(g)
        if tuple(kit.backend.shape(g)) != actual.shape:
            raise harness.ConformanceFailure(
                f"{what}: shape() says {kit.backend.shape(g)}, to_numpy gives {actual.shape}")
        kit.assert_close(actual, e, want_dtype, what, factor=case.factor)
