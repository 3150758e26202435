"""The integer division cases recorded by ``make_int_division_oracle.py`` and replayed by
``tests/test_int_division.py``: floor division, remainders and truncating division of every
integer dtype at its extremes (int64/uint64 above 2**53), by zero, ``MIN // -1``, negative
operands, mixed dtypes, Python numbers, bool and broadcasting, through ``ops``, the Tensor
operators and methods, ``mint`` and ``mindspore.numpy``. Each case is an expression over the
names ``inputs(ms)`` gives (``ms`` is MindSpore or mscore)."""
import numpy as np

SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")


def operands(dtype):
    """Dividends and divisors (lists of Python ints) for ``dtype``: the extremes, a value
    above 2**53 for 64 bits, every sign pairing and division by zero."""
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    big = 2 ** 62 + 1 if dtype == "int64" else 2 ** 63 + 1 if dtype == "uint64" else hi // 2 + 1
    if lo:
        x = [lo, lo, hi, hi, lo + 1, big, -big, big, 7, -7, 7, -7, 0, 5, -5, hi, lo, 9, big]
        y = [-1, 1, 3, -3, 7, 3, 3, -3, 2, 2, -2, -2, 0, 0, 0, 1, -7, hi, 1]
    else:
        x = [hi, hi, hi - 1, big, big, 7, 0, 5, hi, 9, hi]
        y = [3, 1, 2, 3, hi, 0, 0, 2, hi, 7, 2]
    return x, y


# (case suffix, expression over x and y)
FUNCTIONS = (
    ("floor_divide", "ops.floor_divide({x}, {y})"),
    ("div_floor", "ops.div({x}, {y}, rounding_mode='floor')"),
    ("div_trunc", "ops.div({x}, {y}, rounding_mode='trunc')"),
    ("remainder", "ops.remainder({x}, {y})"),
    ("floor_mod", "ops.floor_mod({x}, {y})"),
    ("fmod", "ops.fmod({x}, {y})"),
    ("op_floordiv", "{x} // {y}"),
    ("op_mod", "{x} % {y}"),
    ("method_remainder", "{x}.remainder({y})"),
    ("method_div_trunc", "{x}.div({y}, rounding_mode='trunc')"),
    ("mnp_floor_divide", "mnp.floor_divide({x}, {y})"),
    ("mnp_remainder", "mnp.remainder({x}, {y})"),
    ("mnp_fmod", "mnp.fmod({x}, {y})"),
)

CASES = [(f"{dtype}_{suffix}", expr.format(x=f"x_{dtype}", y=f"y_{dtype}"))
         for dtype in SIGNED + UNSIGNED for suffix, expr in FUNCTIONS]

CASES += [
    # mixed dtypes, Python numbers, floats
    ("i8_u8_floor_divide", "ops.floor_divide(i8, u8)"),
    ("i8_u8_remainder", "ops.remainder(i8, u8)"),
    ("i8_u8_div_trunc", "ops.div(i8, u8, rounding_mode='trunc')"),
    ("i64_u64_floor_divide", "ops.floor_divide(i64, u64)"),
    ("i64_int_floordiv", "i64 // 3"),
    ("i64_neg_int_floordiv", "i64 // -3"),
    ("i64_neg_int_mod", "i64 % -3"),
    ("i64_neg_int_remainder", "ops.remainder(i64, -3)"),
    ("i64_float_floor_divide", "ops.floor_divide(i64, 3.0)"),
    ("int_i8_rfloordiv", "7 // i8b"),
    ("int_i8_rmod", "7 % i8b"),
    ("int_i8_remainder", "ops.remainder(7, i8b)"),
    ("int_i8_div_trunc", "ops.div(7, i8b, rounding_mode='trunc')"),
    ("i8_f32_floor_divide", "ops.floor_divide(i8, f32)"),
    ("i8_f32_remainder", "ops.remainder(i8, f32)"),
    ("i8_f32_div_trunc", "ops.div(i8, f32, rounding_mode='trunc')"),
    # bool
    ("bool_floor_divide", "ops.floor_divide(ba, bb)"),
    ("bool_op_floordiv", "ba // bb"),
    ("bool_remainder", "ops.remainder(ba, bb)"),
    ("bool_floor_mod", "ops.floor_mod(ba, bb)"),
    ("bool_op_mod", "ba % bb"),
    ("bool_div_floor", "ops.div(ba, bb, rounding_mode='floor')"),
    ("bool_div_trunc", "ops.div(ba, bb, rounding_mode='trunc')"),
    ("bool_fmod", "ops.fmod(ba, bb)"),
    # broadcasting
    ("bcast_floor_divide", "ops.floor_divide(col, row)"),
    ("bcast_remainder", "ops.remainder(col, row)"),
    ("bcast_div_trunc", "ops.div(col, row, rounding_mode='trunc')"),
    ("bcast_i64_floor_divide", "ops.floor_divide(col64, row64)"),
    # mint and the Tensor methods
    ("mint_floor_divide", "mint.floor_divide(x_int64, y_int64)"),
    ("mint_remainder", "mint.remainder(x_int64, y_int64)"),
    ("mint_fmod", "mint.fmod(x_int64, y_int64)"),
    ("mint_div_trunc", "mint.div(x_int64, y_int64, rounding_mode='trunc')"),
    ("mint_div_floor", "mint.div(x_int64, y_int64, rounding_mode='floor')"),
    ("method_floor_divide", "x_int64.floor_divide(y_int64)"),
    ("method_fmod", "x_int64.fmod(y_int64)"),
    ("method_div_floor", "x_int64.div(y_int64, rounding_mode='floor')"),
    ("bad_rounding_mode", "ops.div(i8, i8, rounding_mode='round')"),
]


def inputs(ms, dtypes=SIGNED + UNSIGNED):
    """The names the cases use, as ``ms.Tensor``s (the per-dtype operands for ``dtypes``)."""
    T = ms.Tensor
    names = {}
    for dtype in dtypes:
        x, y = operands(dtype)
        names[f"x_{dtype}"], names[f"y_{dtype}"] = T(np.array(x, dtype)), T(np.array(y, dtype))
    names.update(
        i8=T(np.array([7, -7, 0, 5, -128], np.int8)),
        i8b=T(np.array([2, 2, 0, 0, -1], np.int8)),
        u8=T(np.array([200, 7, 0, 255, 3], np.uint8)),
        f32=T(np.array([2.0, 2.0, 0.0, 0.0, -1.0], np.float32)),
        i64=T(np.array([2 ** 62 + 1, -(2 ** 62 + 1), 2 ** 63 - 1, -7], np.int64)),
        ba=T(np.array([True, False, True, False])),
        bb=T(np.array([True, True, False, False])),
        col=T(np.array([[7], [-7], [0]], np.int32)),
        row=T(np.array([2, -2, 3, 0], np.int32)),
        col64=T(np.array([[2 ** 62 + 1], [-(2 ** 62) - 1]], np.int64)),
        row64=T(np.array([3, -3, 2 ** 40], np.int64)),
    )
    if "uint64" in dtypes:
        names["u64"] = T(np.array([3, 3, 2 ** 63, 2], np.uint64))
    return names
