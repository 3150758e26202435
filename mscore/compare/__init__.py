"""Prove that a model trains the same on several backends (``mscore compare``).

``compare_backends(factory, ["numpy", "torch"], steps=50, amp_level="O2")`` builds the
factory's model once per backend from the same seed, gives every backend the reference's
initial weights through the checkpoint layer, trains each on the same batches, and compares
loss, global gradient norm, per-parameter gradients and weights, loss scale and overflow
flag with the first backend at every step, against tolerances derived from the compute
dtype and the step (:mod:`mscore.compare.tolerance`). ``bisect=True`` names the first cell,
op and dtype that differ at the first drifting step. The ``mscore compare`` command wraps it.
"""
from mscore.compare.engine import compare_backends
from mscore.compare.errors import BackendRunError, CompareSetupError
from mscore.compare.report import CompareReport
from mscore.compare.tolerance import local_tolerance, step_tolerance, trajectory_tolerance

__all__ = ["compare_backends", "CompareReport", "CompareSetupError", "BackendRunError",
           "step_tolerance", "trajectory_tolerance", "local_tolerance"]
