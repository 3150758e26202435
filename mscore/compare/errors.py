"""The errors of :mod:`mscore.compare`."""
from __future__ import annotations


class CompareSetupError(ValueError):
    """The comparison cannot start (bad factory, bad arguments): the CLI exits with 2."""


class BackendRunError(RuntimeError):
    """One backend cannot run the model; the others are still compared."""
