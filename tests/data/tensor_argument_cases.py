"""Bad (and a few good) arguments of ``Tensor.reshape``, ``view``, ``permute``, ``new_zeros``,
``new_ones`` and ``set_const_arg``, recorded by ``make_tensor_argument_oracle.py`` and replayed
by ``tests/test_tensor_arguments.py``: element types, the number of dims, ``-1`` twice, sizes
that do not match, repeated or out-of-range axes, bad dtypes. Each case is an expression over
the names ``inputs(ms)`` gives (``ms`` is MindSpore or mscore)."""
import numpy as np

CASES = [
    # reshape
    ("reshape_float_arg", "t.reshape(1.5, 4)"),
    ("reshape_str_arg", "t.reshape('a')"),
    ("reshape_bool_arg", "t.reshape(True, 6)"),
    ("reshape_str_in_tuple", "t.reshape((2, 'a'))"),
    ("reshape_float_in_tuple", "t.reshape((2, 3.0))"),
    ("reshape_none_in_list", "t.reshape([2, None])"),
    ("reshape_tuple_then_int", "t.reshape((2,), 3)"),
    ("reshape_two_minus_one", "t.reshape(-1, -1)"),
    ("reshape_minus_two", "t.reshape(-2, 3)"),
    ("reshape_size_mismatch", "t.reshape(4, 2)"),
    ("reshape_size_mismatch_tuple", "t.reshape((4, 2))"),
    ("reshape_zero_and_minus_one", "t.reshape(0, -1)"),
    ("reshape_minus_one_no_fit", "t.reshape(5, -1)"),
    ("reshape_minus_one_first", "t.reshape(-1, 4)"),
    ("reshape_empty_list", "t.reshape([])"),
    ("reshape_nothing", "t.reshape()"),
    ("reshape_none", "t.reshape(None)"),
    ("reshape_numpy_int", "t.reshape(np.int64(3), 2)"),
    ("reshape_one_int", "t.reshape(6)"),
    ("reshape_keyword", "t.reshape(shape=(3, 2))"),
    ("reshape_list", "t.reshape([3, 2])"),
    ("reshape_infer_one", "t.reshape(2, 3, -1)"),
    # view
    ("view_float_arg", "t.view(1.5, 4)"),
    ("view_float_second", "t.view(3, 2.0)"),
    ("view_str", "t.view('a')"),
    ("view_none", "t.view(None)"),
    ("view_nothing", "t.view()"),
    ("view_two_minus_one", "t.view(-1, -1)"),
    ("view_minus_two", "t.view(-2, 3)"),
    ("view_size_mismatch", "t.view(4, 2)"),
    ("view_str_in_tuple", "t.view((2, 'a'))"),
    ("view_minus_one_no_fit", "t.view(5, -1)"),
    ("view_tuple", "t.view((6,))"),
    ("view_dtype", "t.view(ms.int32)"),
    # permute
    ("permute_too_few", "t.permute(0)"),
    ("permute_repeated", "t.permute(0, 0)"),
    ("permute_out_of_range", "t.permute(0, 2)"),
    ("permute_repeated_out_of_range", "t.permute(2, 2)"),
    ("permute_negative_out_of_range", "t.permute(-3, 0)"),
    ("permute_negative_out_of_range_second", "t.permute(0, -3)"),
    ("permute_too_many", "t.permute(0, 1, 2)"),
    ("permute_float", "t.permute(1.0, 0)"),
    ("permute_str", "t.permute('a', 0)"),
    ("permute_bool", "t.permute(True, 0)"),
    ("permute_tuple_then_int", "t.permute((1,), 0)"),
    ("permute_nothing", "t.permute()"),
    ("permute_none", "t.permute(None)"),
    ("permute_tuple", "t.permute((1, 0))"),
    ("permute_list", "t.permute([1, 0])"),
    ("permute_negative", "t.permute(-1, 0)"),
    ("permute_scalar_axis", "s.permute(0)"),
    ("permute_scalar_nothing", "s.permute()"),
    # new_zeros / new_ones
    ("new_zeros_negative_in_tuple", "t.new_zeros((2, -1))"),
    ("new_zeros_negative", "t.new_zeros(-1)"),
    ("new_zeros_float", "t.new_zeros(1.5)"),
    ("new_zeros_bool", "t.new_zeros(True)"),
    ("new_zeros_str", "t.new_zeros('a')"),
    ("new_zeros_none", "t.new_zeros(None)"),
    ("new_zeros_str_in_tuple", "t.new_zeros((2, 'a'))"),
    ("new_zeros_float_in_tuple", "t.new_zeros((2, 3.0))"),
    ("new_zeros_two_ints", "t.new_zeros(2, 3)"),
    ("new_zeros_dtype_str", "t.new_zeros((2, 3), dtype='float32')"),
    ("new_zeros_dtype_numpy", "t.new_zeros((2, 3), dtype=np.float32)"),
    ("new_zeros_int", "t.new_zeros(3)"),
    ("new_zeros_list", "t.new_zeros([2, 3])"),
    ("new_zeros_empty", "t.new_zeros(())"),
    ("new_zeros_dtype_positional", "t.new_zeros((2, 3), ms.int32)"),
    ("new_zeros_dtype_none", "t.new_zeros((2, 3), dtype=None)"),
    ("new_ones_negative", "t.new_ones((2, -1))"),
    ("new_ones_float", "t.new_ones(1.5)"),
    ("new_ones_str_in_tuple", "t.new_ones((2, 'a'))"),
    ("new_ones_dtype_str", "t.new_ones((2, 3), dtype='float32')"),
    # set_const_arg
    ("set_const_arg_int", "t.set_const_arg(1)"),
    ("set_const_arg_str", "t.set_const_arg('a')"),
    ("set_const_arg_none", "t.set_const_arg(None)"),
    ("set_const_arg_true", "t.set_const_arg(True)"),
    ("set_const_arg_default", "t.set_const_arg()"),
    ("set_const_arg_false", "t.set_const_arg(False)"),
]


def inputs(ms):
    """The names the cases use: ``t`` a 2x3 float32 Tensor, ``s`` a 0-d one."""
    return {"t": ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)),
            "s": ms.Tensor(np.float32(1.5)), "ms": ms, "np": np}


def outcome(value, ms):
    """What a case gives: the error (type and first line of its message, recorded by the
    caller), or a Tensor's shape and dtype name, or another value's type."""
    if isinstance(value, ms.Tensor):
        return {"kind": "tensor", "shape": list(value.shape),
                "dtype": str(value.dtype).lower()}
    return {"kind": "python", "type": type(value).__name__}
