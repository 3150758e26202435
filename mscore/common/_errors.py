"""Exception types that are also the type MindSpore raises by accident.

Where MindSpore rejects a wrong argument only because it reaches for a method the value
lacks (``AttributeError``) or divides by it (``ZeroDivisionError``), mscore checks the
argument up front and raises a clear error whose type is both the natural one and
MindSpore's, so ``except`` clauses written for either keep working. A traceback names such an
error by MindSpore's type (``AttributeError: ...``), as a MindSpore user reads it.
"""

#: What mscore says after MindSpore's words when a numpy array is given where a Tensor is
#: taken (MindSpore refuses it as well).
NUMPY_ARRAY_HINT = "\nHint: wrap the numpy array with ms.Tensor(x)."


def _shown_as(builtin):
    """Name the decorated class as the built-in exception ``builtin`` in tracebacks and
    ``type(e).__name__``, and keep its instances picklable (pickle finds classes by name)."""
    def decorate(cls):
        cls.__name__ = cls.__qualname__ = builtin.__name__
        cls.__module__ = "builtins"
        _SHOWN_AS[builtin.__name__] = cls
        cls.__reduce__ = lambda self: (_rebuild, (builtin.__name__, self.args))
        return cls
    return decorate


_SHOWN_AS = {}


def _rebuild(name, args):
    """Unpickle an error of a :func:`_shown_as` class."""
    return _SHOWN_AS[name](*args)


@_shown_as(AttributeError)
class TypeAttributeError(TypeError, AttributeError):
    """An argument of the wrong type, where MindSpore fails with ``AttributeError``."""


@_shown_as(ZeroDivisionError)
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
                     f'The valid calling should be: \n"{op}()({name}=<Tensor>)".'
                     f'{NUMPY_ARRAY_HINT}')


def numpy_cell_input_error(cls):
    """MindSpore's TypeError for a numpy array given to a Cell (its first primitive's:
    "For primitive[Shape], the input argument must be Tensor, ...")."""
    return TypeError(f"For '{cls}', the input argument must be Tensor, but got "
                     f"<class 'numpy.ndarray'>.{NUMPY_ARRAY_HINT}")
