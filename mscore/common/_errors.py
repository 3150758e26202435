"""Exception types that are also the type MindSpore raises by accident.

Where MindSpore rejects a wrong argument only because it reaches for a method the value
lacks (``AttributeError``) or divides by it (``ZeroDivisionError``), mscore checks the
argument up front and raises a clear error whose type is both the natural one and
MindSpore's, so ``except`` clauses written for either keep working.
"""


class TypeAttributeError(TypeError, AttributeError):
    """An argument of the wrong type, where MindSpore fails with ``AttributeError``."""


class ValueZeroDivisionError(ValueError, ZeroDivisionError):
    """A zero where a positive number is needed, where MindSpore fails dividing by it."""
