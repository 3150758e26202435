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


def is_numpy_array(value):
    """Whether ``value`` is a numpy array (without importing numpy here)."""
    kind = type(value)
    return kind.__name__ == "ndarray" and kind.__module__ == "numpy"


def numpy_op_argument_error(op, name):
    """MindSpore's TypeError for a numpy array given to an op where it takes a Tensor:
    MindSpore 2.10 refuses numpy arrays in every op, functional or Primitive, with this
    text (it names every argument; mscore the one refused)."""
    return TypeError(f'Failed calling {op} with "{op}()({name}=<class \'numpy.ndarray\'>)".\n'
                     f'The valid calling should be: \n"{op}()({name}=<Tensor>)".')


def numpy_cell_input_error(cls):
    """MindSpore's TypeError for a numpy array given to a Cell (its first primitive's:
    "For primitive[Shape], the input argument must be Tensor, ...")."""
    return TypeError(f"For '{cls}', the input argument must be Tensor, but got "
                     f"<class 'numpy.ndarray'>.")
