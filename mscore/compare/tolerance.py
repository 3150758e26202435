"""How far two correct backends may differ: tolerances from the compute dtype and the step.

Two correct backends differ only by rounding: each op rounds its result to the compute
dtype, and backends round in different orders (BLAS blocking, fused kernels, float32
accumulation of float16 products). ``eps`` below is the machine epsilon of the dtype the
network computes in: 2**-23 for float32 (amp O0), 2**-10 for float16 and 2**-7 for bfloat16
(O1-O3, whichever the network was converted to).

**One step** (the verdict). Each backend's shadow copy takes the reference's whole training
state before every step, so its step differs from the reference's only by that step's
rounding, which does not grow with the number of steps::

    step_tol_q = k_q * eps

for the loss, the global gradient norm, each parameter's gradient, each parameter's update
(the change the step made to it, optimizer and BatchNorm statistics included) and each
parameter's total update (the sum of all its one-step updates so far against the
reference's: rounding noise averages out there, a small systematic bias does not).

**Trajectory** (reported, plotted, not the verdict). The free copies train on their own; a
rounding difference of one step is carried into the next, so their divergence is a sum of
such differences, which for random rounding grows like a random walk::

    trajectory_tol_q(t) = k_q * eps * sqrt(t)         (t = 1, 2, ...)

A trajectory can still leave this envelope while every step agrees: a model amplifies
differences (an input of a ReLU a few ulps from zero flips on one backend and not the
other, and the runs are two different runs from then on). The report says when that
happens and how fast the divergence grows, but only a step that differs from the same state
is a difference of the backends.

``k_q`` (:data:`FACTORS`) is how many epsilons a quantity may cost per step. The values were
calibrated on numpy, torch and jax, 50 steps of the amp tutorial's MLP and of a conv net with
BatchNorm at O0 and O2 (``docs/compare.md`` lists the largest ratios of difference to
tolerance they reached): every correct backend stays below, while a 1 % error in one op's
gradient or a float16 softmax in a float32 model exceeds them at the first step.
"""
from __future__ import annotations

import math

EPS = {"float64": 2.0 ** -52, "float32": 2.0 ** -23, "float16": 2.0 ** -10,
       "bfloat16": 2.0 ** -7}

STEP_QUANTITIES = ("loss", "grad_norm", "grad", "update", "total_update")
TRAJECTORY_QUANTITIES = ("loss", "grad_norm", "grad", "weight")

FACTORS = {"loss": 32.0, "grad_norm": 32.0, "grad": 128.0, "update": 128.0,
           "total_update": 128.0, "weight": 32.0}

# One op, or one cell fed identical inputs (the bisect).
LOCAL_FACTOR = 64.0


def eps(dtype):
    """Machine epsilon of ``dtype`` (a name or an mscore DType)."""
    name = getattr(dtype, "name", dtype)
    try:
        return EPS[name]
    except KeyError:
        raise ValueError(f"dtype: expected one of {sorted(EPS)}, got {name!r}") from None


def worse_dtype(a, b):
    """The less precise of two dtype names."""
    return a if eps(a) >= eps(b) else b


def _factor(quantity, allowed):
    if quantity not in allowed:
        raise ValueError(f"quantity: expected one of {list(allowed)}, got {quantity!r}")
    return FACTORS[quantity]


def step_tolerance(quantity, dtype):
    """The largest relative difference of ``quantity`` (one of :data:`STEP_QUANTITIES`)
    between two correct backends' steps taken from the same state, computing in ``dtype``."""
    return _factor(quantity, STEP_QUANTITIES) * eps(dtype)


def trajectory_tolerance(quantity, dtype, step):
    """The rounding envelope of ``quantity`` (one of :data:`TRAJECTORY_QUANTITIES`) for two
    free runs at ``step`` (>= 1)."""
    if isinstance(step, bool) or not isinstance(step, int) or step < 1:
        raise ValueError(f"step: expected an int >= 1, got {step!r}")
    return _factor(quantity, TRAJECTORY_QUANTITIES) * eps(dtype) * math.sqrt(step)


def local_tolerance(dtype):
    """The largest relative difference of one op's (or one cell's) output or input
    gradients between two correct backends given identical inputs, in ``dtype``."""
    return LOCAL_FACTOR * eps(dtype)
