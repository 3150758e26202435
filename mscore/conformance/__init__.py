"""The public conformance kit: the same tests over every installed backend.

Run it with ``mscore conformance BACKEND`` (or ``python -m mscore.conformance BACKEND``, or
``pytest --pyargs mscore.conformance --mscore-backend=BACKEND``). The tests live in
``mscore/conformance/tests/``; each receives the ``kit`` fixture
(:class:`mscore.conformance.kit.Kit`) of the pytest plugin
(:mod:`mscore.conformance.pytest_plugin`), which compares the backend with the numpy
reference at the tolerances of :mod:`mscore.conformance.harness`.
"""
from mscore.conformance.harness import (
    SUITE_VERSION, TOLERANCES, Tolerance, compare, tolerance)
from mscore.conformance import runner as _runner

__all__ = ["SUITE_VERSION", "TOLERANCES", "Tolerance", "compare", "tolerance", "main"]


def main(argv=None):
    """``mscore conformance BACKEND ...``; see :func:`mscore.conformance.runner.main`."""
    return _runner.main(argv)
