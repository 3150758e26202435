"""Level "errors": the same bad input gives the same exception type on every backend.

Each case calls mscore's public API with one mistake (shapes that do not match, a dtype an
op does not take, an index out of range, a label out of range) on the backend under test
and on the numpy reference. Both must raise, and raise the type the case pins (MindSpore's
type where mscore follows it; the table is in ``docs/backend-authors.md``). A backend that
returns a result instead (clamping an index, say) or raises another type fails.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import mscore as ms
from mscore import nn, ops
from mscore.conformance import harness

LEVEL = "errors"


@dataclass
class ErrorCase:
    """``call(rng)`` makes the bad call with Tensors of the active backend."""

    name: str
    expected: type | None      # None: whatever the reference raises (still required)
    call: object

    def __repr__(self):
        return self.name


def _t(rng, *shape, dtype=np.float32):
    return ms.Tensor(rng.standard_normal(shape).astype(dtype))


def _ints(values):
    return ms.Tensor(np.asarray(values, np.int32))


CASES = [
    ErrorCase("matmul_inner_sizes", ValueError,
              lambda r: ops.matmul(_t(r, 2, 3), _t(r, 4, 5))),
    ErrorCase("matmul_batch_shapes", ValueError,
              lambda r: ops.matmul(_t(r, 2, 3, 4), _t(r, 3, 4, 5))),
    ErrorCase("matmul_bool", TypeError,
              lambda r: ops.matmul(_t(r, 2, 2) > 0, _t(r, 2, 2) > 0)),
    ErrorCase("add_shapes_do_not_broadcast", ValueError,
              lambda r: ops.add(_t(r, 2, 3), _t(r, 4))),
    ErrorCase("where_shapes_do_not_broadcast", ValueError,
              lambda r: ops.where(_t(r, 2, 3) > 0, _t(r, 4), _t(r, 2, 3))),
    ErrorCase("conv_channels", ValueError,
              lambda r: ops.conv2d(_t(r, 1, 3, 5, 5), _t(r, 4, 2, 3, 3))),
    ErrorCase("conv_kernel_larger_than_input", ValueError,
              lambda r: ops.conv2d(_t(r, 1, 3, 2, 2), _t(r, 4, 3, 3, 3))),
    ErrorCase("conv_integer_input", TypeError,
              lambda r: ops.conv2d(_t(r, 1, 1, 3, 3, dtype=np.int32),
                                   _t(r, 1, 1, 2, 2, dtype=np.int32))),
    ErrorCase("avg_pool_integer_input", TypeError,
              lambda r: ops.avg_pool2d(_t(r, 1, 1, 4, 4, dtype=np.int32), 2)),
    ErrorCase("max_pool_kernel_larger_than_input", ValueError,
              lambda r: ops.max_pool2d(_t(r, 1, 1, 2, 2), 3)),
    ErrorCase("concat_shapes", ValueError,
              lambda r: ops.concat((_t(r, 2, 3), _t(r, 2, 4)), 0)),
    ErrorCase("reshape_size", ValueError, lambda r: ops.reshape(_t(r, 2, 3), (4, 2))),
    ErrorCase("getitem_int_out_of_range", IndexError, lambda r: _t(r, 3)[5]),
    ErrorCase("getitem_index_array_out_of_range", IndexError,
              lambda r: _t(r, 3, 2)[_ints([0, 5])]),
    ErrorCase("setitem_out_of_range", IndexError,
              lambda r: ops.setitem(_t(r, 3), _ints([1, 3]), 1.0)),
    ErrorCase("one_hot_float_indices", TypeError,
              lambda r: ops.one_hot(_t(r, 3), 4)),
    ErrorCase("cross_entropy_label_out_of_range", None,
              lambda r: ops.cross_entropy(_t(r, 3, 4), _ints([0, 4, 1]))),
    ErrorCase("nll_loss_negative_label", None,
              lambda r: ops.nll_loss(ops.log_softmax(_t(r, 3, 4), 1), _ints([0, -2, 1]))),
    ErrorCase("sparse_softmax_cross_entropy_label_out_of_range", None,
              lambda r: nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")(
                  _t(r, 3, 4), _ints([0, 7, 1]))),
]
PARAMS = [pytest.param(c, id=c.name) for c in CASES]


def _raised(call, seed):
    """The exception ``call`` raises (with Tensors of the active backend), or None."""
    try:
        result = call(np.random.default_rng(seed))
        if isinstance(result, ms.Tensor):
            result.asnumpy()   # an error a lazy backend defers surfaces here
    except Exception as exc:  # what is compared is exactly the type raised
        return exc
    return None


@pytest.mark.parametrize("case", PARAMS)
def test_error(kit, case):
    """The backend raises the pinned exception type, as the reference does."""
    seed = harness.stable_seed(kit.case_key)
    with kit.on_reference():
        reference = _raised(case.call, seed)
    want = case.expected or (type(reference) if reference is not None else None)
    if reference is None or not isinstance(reference, want):
        raise harness.ConformanceFailure(
            f"{case.name}: the numpy reference raised "
            f"{type(reference).__name__ if reference else 'nothing'}, the contract says "
            f"{want.__name__ if want else 'an exception'} (a bug of mscore, not of "
            f"{kit.name})")
    got = _raised(case.call, seed)
    if got is None:
        raise harness.ConformanceFailure(
            f"{case.name}: {kit.name} returned a result; the contract (and the reference) "
            f"raise {want.__name__}")
    if not isinstance(got, want):
        raise harness.ConformanceFailure(
            f"{case.name}: {kit.name} raised {type(got).__name__}: {got}; the contract (and "
            f"the reference) raise {want.__name__}") from got
