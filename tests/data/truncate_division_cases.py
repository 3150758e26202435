"""The cases of ``ops.truncate_div`` / ``ops.truncate_mod`` (and the ``TruncateDiv`` /
``TruncateMod`` Primitives) recorded by ``make_truncate_division_oracle.py`` and replayed by
``tests/test_truncate_division.py``: every integer dtype at its extremes (the operands of
``int_division_cases.operands``: ``MIN / -1``, division by zero, int64/uint64 above 2**53),
floats with zeros, infinities and nan, mixed dtypes, Python numbers, bool, bfloat16,
broadcasting and bad arguments. Each case is an expression over the names ``inputs(ms)``
gives (``ms`` is MindSpore or mscore); ``GRADIENT_CASES`` are differentiated."""
import numpy as np
from int_division_cases import SIGNED, UNSIGNED, operands

FLOATS = ("float16", "float32", "float64")
FLOAT_X = [7.5, -7.5, 7.5, -7.5, 1.0, -1.0, 0.0, np.inf, np.nan, 5.0, -5.0, 1e4 + 0.5]
FLOAT_Y = [2.0, 2.0, -2.0, -2.0, 0.0, 0.0, 0.0, 2.0, 1.0, np.inf, -np.inf, 3.0]

CASES = [(f"{dtype}_{name}", f"ops.{name}(x_{dtype}, y_{dtype})")
         for dtype in SIGNED + UNSIGNED + FLOATS for name in ("truncate_div", "truncate_mod")]
CASES += [
    ("prim_truncate_div", "ops.TruncateDiv()(i8, i8b)"),
    ("prim_truncate_mod", "ops.TruncateMod()(f32, f32b)"),
    ("i8_u8_div", "ops.truncate_div(i8, u8)"),
    ("i32_i64_div", "ops.truncate_div(i32, i64)"),
    ("i8_f32_div", "ops.truncate_div(i8, f32b)"),
    ("i8_f32_mod", "ops.truncate_mod(i8, f32b)"),
    ("i8_f16_div", "ops.truncate_div(i8, f16)"),
    ("f16_f32_div", "ops.truncate_div(f16, f32b)"),
    ("i32_int_div", "ops.truncate_div(i32, 2)"),
    ("i32_int_mod", "ops.truncate_mod(i32, 2)"),
    ("i32_float_div", "ops.truncate_div(i32, 2.0)"),
    ("i32_float_mod", "ops.truncate_mod(i32, 2.0)"),
    ("int_i32_div", "ops.truncate_div(7, i32)"),
    ("int_i32_mod", "ops.truncate_mod(7, i32)"),
    ("i32_bool_div", "ops.truncate_div(i32, True)"),
    ("bcast_div", "ops.truncate_div(col, row)"),
    ("bcast_mod", "ops.truncate_mod(col, row)"),
    ("bool_div", "ops.truncate_div(ba, bb)"),
    ("bool_mod", "ops.truncate_mod(ba, bb)"),
    ("bf16_div", "ops.truncate_div(bf_x, bf_y)"),
    ("bf16_mod", "ops.truncate_mod(bf_x, bf_y)"),
    ("int_int_div", "ops.truncate_div(7, 2)"),
    ("int_int_mod", "ops.truncate_mod(7, 2)"),
    ("bcast_bad_div", "ops.truncate_div(i32, row)"),
    ("str_div", "ops.truncate_div('a', i32)"),
    ("none_mod", "ops.truncate_mod(i32, None)"),
]

# (case name, function name): d(sum(f(x, y)))/dx and /dy of float32 gx, gy
GRADIENT_CASES = [("grad_truncate_div", "truncate_div"), ("grad_truncate_mod", "truncate_mod")]


def inputs(ms, dtypes=SIGNED + UNSIGNED + FLOATS):
    """The names the cases use, as ``ms.Tensor``s (the per-dtype operands for ``dtypes``)."""
    T = ms.Tensor
    names = {}
    for dtype in (d for d in SIGNED + UNSIGNED if d in dtypes):
        x, y = operands(dtype)
        names[f"x_{dtype}"], names[f"y_{dtype}"] = T(np.array(x, dtype)), T(np.array(y, dtype))
    for dtype in (d for d in FLOATS if d in dtypes):
        names[f"x_{dtype}"] = T(np.array(FLOAT_X, dtype))
        names[f"y_{dtype}"] = T(np.array(FLOAT_Y, dtype))
    names.update(
        i8=T(np.array([7, -7, 0, 5, -128], np.int8)),
        i8b=T(np.array([2, 2, 3, -3, 1], np.int8)),
        u8=T(np.array([200, 7, 1, 255, 3], np.uint8)),
        i32=T(np.array([7, -7, 9, -9, 0], np.int32)),
        i64=T(np.array([2, 3, -4, 4, 5], np.int64)),
        f32=T(np.array([7.5, -7.5, 3.0, -1.25, 9.0], np.float32)),
        f32b=T(np.array([2.0, 2.0, -2.0, 0.5, 4.0], np.float32)),
        f16=T(np.array([2.0, -2.0, 4.0, 3.0, 1.0], np.float16)),
        col=T(np.array([[7], [-7], [0]], np.int32)),
        row=T(np.array([2, -2, 3, 4], np.int32)),
        ba=T(np.array([True, False, True])),
        bb=T(np.array([True, True, True])),
        bf_x=T(np.array([7.5, -7.5, 3.0], np.float32)).astype(ms.bfloat16),
        bf_y=T(np.array([2.0, 2.0, -2.0], np.float32)).astype(ms.bfloat16),
        gx=T(np.array([7.5, -7.5, 3.0, -1.25, 0.75], np.float32)),
        gy=T(np.array([2.0, 2.0, -2.0, 0.5, 0.5], np.float32)),
    )
    return names
