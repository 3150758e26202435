"""Level 2 in half precision: the gradient cases of ``test_grad.py`` (every differentiable
primitive and fused op, through the backend's native autodiff or mscore's reference
autodiff) and of ``test_fused_grad.py`` (the fused ops' closed-form rules) in float16 and
bfloat16, wherever the backend declares them.

A fixed relative tolerance cannot tell a 1 % error from half precision's own: the allowed
error of each result is derived from the dtype and the op instead,

    allowed = max(REFERENCE_FACTOR * reference_error, ULPS * eps(dtype) * scale)

where ``reference_error`` is the largest error of the numpy reference computing in the
tested dtype itself (from the same rounded inputs) against the numpy reference in float64,
``scale`` the largest magnitude of the float64 result and ``eps`` the dtype's spacing at 1.
A gradient 1 % too large in float16 (10 ulps of its largest element) fails. The value (the
output weighted by a fixed cotangent and summed in the dtype: a sum that may cancel, whose
error says nothing of the gradient) is not compared here; the forward levels check the op.
"""
from __future__ import annotations

import numpy as np
import pytest

from mscore.conformance import harness
from mscore.conformance.harness import value_and_grads
from mscore.conformance.strategies import finfo
from mscore.conformance.tests import test_fused_grad, test_grad

LEVEL = "grad"
DTYPES = ("float16", "bfloat16")
#: how many times the numpy reference's own error in the dtype a backend may be off
REFERENCE_FACTOR = 4.0
#: the floor of the allowed error, in units of the dtype's spacing at the result's scale
ULPS = 4.0

CASES = [pytest.param(c, "reference", id=c.name) for c in test_grad.CASES] + \
    [pytest.param(c, "fused_rules", id=f"{c.name}_fused_rules") for c in test_fused_grad.CASES]


def allowed_error(expected, in_dtype, dtype):
    """The allowed absolute error of a result whose float64 reference is ``expected`` and
    whose reference computed in ``dtype`` is ``in_dtype``."""
    e = harness.to_float64(np.asarray(expected)).astype(np.float64)
    r = harness.to_float64(np.asarray(in_dtype)).astype(np.float64)
    finite = np.isfinite(e) & np.isfinite(r)
    scale = float(np.abs(e[finite]).max()) if finite.any() else 1.0
    ref_err = float(np.abs(r[finite] - e[finite]).max()) if finite.any() else 0.0
    return max(REFERENCE_FACTOR * ref_err, ULPS * float(finfo(dtype).eps) * (scale or 1.0))


@pytest.mark.parametrize("case,rules", CASES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_grad_half_precision(kit, case, rules, dtype):
    """Gradients in half precision are within the derived error of the float64 reference."""
    if rules == "fused_rules" and kit.has("native_autodiff"):
        pytest.skip(f"{kit.name} differentiates with its own autodiff (the 'reference' "
                    f"cases check it); the reference autodiff's fused rules are not used")
    inputs = case.make(kit)
    positions = tuple(i for i, x in enumerate(inputs) if x.dtype.kind == "f")
    fn = value_and_grads(case.fn, positions, kit.case_key, dtype)
    expected = kit.reference(fn, *inputs, dtype=dtype)
    in_dtype = kit.reference_in_dtype(fn, *inputs, dtype=dtype)
    actual = kit.run(fn, *inputs, dtype=dtype)
    failures = []
    for i, (a, e, r) in enumerate(zip(actual["grads"], expected["grads"],
                                      in_dtype["grads"])):
        what = f"grad of {case.name} in {dtype}: gradient {i}"
        try:
            kit.assert_within(a, e, allowed_error(e, r, dtype), dtype, what)
        except harness.ConformanceFailure as exc:
            failures.append(str(exc))
    if failures:
        raise harness.ConformanceFailure("\n".join(failures))
