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


def tensor_hint(value):
    """What to add to a "must be a Tensor" message for ``value``: for a numpy array, how to
    make it one (MindSpore refuses numpy arrays where it takes Tensors, and so does mscore)."""
    if type(value).__module__ == "numpy" and type(value).__name__ == "ndarray":
        return "; wrap a numpy array in mscore.Tensor(array)"
    return ""
