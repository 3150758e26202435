"""The tensors whose ``repr`` and ``str`` ``make_tensor_text_oracle.py`` records from
MindSpore 2.10 and ``tests/test_tensor_text.py`` compares with mscore's: 0-d tensors, 1-d,
2-d and 3-d ones of every kind of dtype (float16/32/64, bfloat16, signed and unsigned ints,
bool), empty ones, long 1-d ones that wrap their lines, large ones that are summarised with
``...``, special values, and Parameters. Each case is an expression over ``ms`` (MindSpore or
mscore), ``T`` (its Tensor) and ``np``."""

BF16 = "T(np.array({}, np.float32)).astype(ms.bfloat16)"

CASES = [
    # 0-d
    ("scalar_float32", "T(np.float32(1.5))"),
    ("scalar_float32_tenth", "T(np.float32(0.1))"),
    ("scalar_float32_large", "T(np.float32(123456789.0))"),
    ("scalar_float32_negative_zero", "T(np.float32(-0.0))"),
    ("scalar_float32_nan", "T(np.float32('nan'))"),
    ("scalar_float64_tiny", "T(np.float64(1e-20))"),
    ("scalar_float16", "T(np.float16(2.5))"),
    ("scalar_bfloat16", BF16.format("2.5")),
    ("scalar_int64", "T(3)"),
    ("scalar_int8", "T(np.int8(-5))"),
    ("scalar_uint8", "T(np.uint8(200))"),
    ("scalar_bool", "T(True)"),
    ("scalar_python_float", "T(2.0)"),
    # 1-d
    ("vector_float32", "T(np.array([1.5, -2.25, 3.0], np.float32))"),
    ("vector_float32_wraps", "T(np.arange(30, dtype=np.float32))"),
    ("vector_int32_wraps", "T(np.arange(30, dtype=np.int32))"),
    ("vector_bool_wraps", "T(np.arange(30) % 3 == 0)"),
    ("vector_float32_twelve", "T(np.arange(12, dtype=np.float32))"),
    ("vector_int32_twenty_four", "T(np.arange(24, dtype=np.int32))"),
    ("vector_bfloat16_wraps", "T(np.arange(30, dtype=np.float32)).astype(ms.bfloat16)"),
    ("vector_int32_summarised", "T(np.arange(1001, dtype=np.int32))"),
    ("vector_int32_not_summarised", "T(np.arange(1000, dtype=np.int32) - 500)"),
    ("vector_float32_summarised", "T(np.arange(2000, dtype=np.float32) / 7)"),
    ("vector_float16", "T(np.array([1.5, 2.0, -0.001], np.float16))"),
    ("vector_bfloat16", BF16.format("[1.5, 2, -3.25, 1e10, 1e-5, 100.0, 0.1, 123456.0]")),
    ("vector_int64_widths", "T(np.array([-1, 200000, 7], np.int64))"),
    ("vector_int64_extremes", "T(np.array([-2**63, 2**63 - 1], np.int64))"),
    ("vector_uint64_max", "T(np.array([0, 2**64 - 1], np.uint64))"),
    ("vector_float64_wide_exponent", "T(np.array([1e300, -1e-300, 1.0], np.float64))"),
    ("vector_float64_specials", "T(np.array([np.nan, np.inf, -np.inf, 0.1], np.float64))"),
    ("vector_float16_nan", "T(np.array([np.nan, 1.0], np.float16))"),
    ("vector_uint8", "T(np.array([1, 2, 255], np.uint8))"),
    ("vector_int16", "T(np.array([-300, 5], np.int16))"),
    ("vector_one", "T(np.array([4.0], np.float32))"),
    ("vector_empty_int64", "T(np.zeros((0,), np.int64))"),
    ("vector_empty_bool", "T(np.zeros((0,), np.bool_))"),
    # 2-d and more
    ("matrix_float32", "T(np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5)"),
    ("matrix_float16_rows_summarised", "T(np.arange(21, dtype=np.float16).reshape(7, 3))"),
    ("matrix_int64_columns_summarised", "T(np.arange(14, dtype=np.int64).reshape(2, 7))"),
    ("matrix_bool", "T(np.array([[True, False], [False, True]]))"),
    ("matrix_bfloat16", BF16.format("[[1.5, 2], [-3.25, 100]]")),
    ("matrix_int8_one", "T(np.array([[1]], np.int8))"),
    ("matrix_float32_summarised", "T(np.arange(10000, dtype=np.float32).reshape(100, 100))"),
    ("matrix_float32_six", "T(np.arange(36, dtype=np.float32).reshape(6, 6) * 0.5)"),
    ("matrix_empty_rows", "T(np.zeros((0, 3), np.float32))"),
    ("matrix_empty_columns", "T(np.zeros((2, 0), np.float32))"),
    ("cube_int32", "T(np.arange(24, dtype=np.int32).reshape(2, 3, 4))"),
    ("cube_int32_summarised", "T(np.arange(512, dtype=np.int32).reshape(8, 8, 8))"),
    ("four_d_float32", "T(np.arange(8, dtype=np.float32).reshape(2, 1, 2, 2))"),
    ("cube_float64_mixed", "T(np.array([[[1e-3, -2.0]], [[3.5, 1e5]]], np.float64))"),
    # Parameters
    ("parameter_float32", "ms.Parameter(T(np.ones((2, 2), np.float32)), name='w')"),
    ("parameter_int32_frozen",
     "ms.Parameter(T(np.array([1, 2], np.int32)), name='step', requires_grad=False)"),
    ("parameter_scalar", "ms.Parameter(T(np.float32(0.5)), name='lr')"),
]
