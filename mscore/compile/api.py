"""``mscore.jit`` and the other compile-time directives of ``mindspore.common.api``.

``@jit`` runs a function (or a Cell's ``construct``) as one compiled program when the
active backend can compile (``jax.jit``, ``torch.compile``), the way GRAPH_MODE runs a
top-level Cell, and eagerly otherwise. The program threads every Parameter the function can
reach: Cells and Parameters among its arguments, in its closure, in the globals it names,
and inside the functions and objects those hold (a ``value_and_grad`` closure over a
network, an optimizer). When the function assigns a Parameter that search missed, or its
trace fails (Python control flow on a tensor value, arguments that are not Tensors or
numbers), it runs eagerly from then on, with one warning saying why.

``jit_class``, ``lazy_inline``, ``no_inline``, ``mutable`` and ``constexpr`` steer
MindSpore's graph compiler; eager execution and the backends' tracers need none of it, so
they check their arguments as MindSpore does and change nothing.
"""
from __future__ import annotations

import functools
import inspect
import types
import warnings
import weakref

from mscore import context as _context
from mscore._state import in_compiled
from mscore._state import process as _process
from mscore.common.parameter import Parameter, ParameterTuple
from mscore.common.tensor import Tensor
from mscore.compile import graph
from mscore.nn.cell import Cell

_CAPTURE_MODES = ("ast", "bytecode", "trace")
_JIT_LEVELS = ("O0", "O1")
_SEARCH_DEPTH = 6        # how deep the Parameter search follows closures and attributes
_SEARCH_WIDTH = 10000    # items of one container the search looks at


def jit(function=None, *, capture_mode="ast", jit_level="O0", dynamic=0, fullgraph=False,
        backend="", **options):
    """Compile ``function`` (a function, or a Cell's ``construct``) into one program on
    backends that compile; run it eagerly elsewhere. Usable as ``@jit`` or ``@jit(...)``.

    ``capture_mode`` ('ast', 'bytecode', 'trace'), ``jit_level`` ('O0', 'O1'),
    ``dynamic`` (0 or 1), ``fullgraph`` and ``backend`` choose how MindSpore's compiler
    captures and optimises the graph; every valid value gives the same results here. Any
    other keyword option is MindSpore-compiler specific: ``NotImplementedError``.
    """
    if not isinstance(capture_mode, str) or capture_mode not in _CAPTURE_MODES:
        raise ValueError(f"jit: capture_mode must be one of {list(_CAPTURE_MODES)}, got "
                         f"{capture_mode!r}")
    if not isinstance(jit_level, str) or jit_level not in _JIT_LEVELS:
        raise ValueError(f"jit: jit_level must be one of {list(_JIT_LEVELS)}, got "
                         f"{jit_level!r}")
    if isinstance(dynamic, bool) or not isinstance(dynamic, int) or dynamic not in (0, 1):
        raise ValueError(f"jit: dynamic must be 0 or 1, got {dynamic!r}")
    if not isinstance(fullgraph, bool):
        raise TypeError(f"jit: fullgraph must be a bool, got {type(fullgraph).__name__}")
    if not isinstance(backend, str):
        raise TypeError(f"jit: backend must be a str, got {type(backend).__name__}")
    if options:
        raise NotImplementedError(f"jit: options {sorted(options)} configure MindSpore's graph "
                                  f"compiler and have no meaning in mscore")

    def decorate(fn):
        if not callable(fn):
            raise TypeError(f"jit: function must be callable, got {type(fn).__name__}")
        return _JitFunction(fn)

    return decorate if function is None else decorate(function)


class _JitFunction:
    """The callable ``@jit`` returns: one compiled program per bound Cell (methods) or one
    for the function, built on first call; eager where that is impossible."""

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._programs = weakref.WeakKeyDictionary()  # bound Cell -> its program cell
        self._program = None                            # the program cell of a function
        self._eager_reason = None

    def __get__(self, obj, objtype=None):
        # ``@jit`` on a method: bind like a function does.
        return self if obj is None else types.MethodType(self, obj)

    def __call__(self, *args, **kwargs):
        backend = _process.backend or _context.current_backend()
        if in_compiled() or backend.compile is None or self._eager_reason or kwargs:
            return self._fn(*args, **kwargs)
        bound, rest = _split_bound(self._fn, args)
        if not _compilable(rest):
            return self._fn(*args)
        program = self._program_for(bound)
        # The training flags of the state's cells are part of the program key: a network
        # switched between train and eval gets (and caches) a program for each.
        object.__setattr__(program, "training",
                           tuple(c.training for c in program._state_cells))
        try:
            out = graph.compiled_call(program, rest, {})
        except Exception as exc:  # the first trace failed: say why once, then run eagerly
            if program.__dict__.get("_compiled"):
                raise
            self._eager_reason = f"{type(exc).__name__}: {exc}"
            warnings.warn(f"mscore.jit: {getattr(self._fn, '__qualname__', self._fn)} runs "
                          f"eagerly: compiling it failed ({self._eager_reason})",
                          RuntimeWarning, stacklevel=2)
            return self._fn(*args)
        program.__dict__["_compiled"] = True
        return out

    def _program_for(self, bound):
        if bound is None:
            if self._program is None:
                self._program = _make_program(self._fn, ())
            return self._program
        program = self._programs.get(bound)
        if program is None:
            program = self._programs[bound] = _make_program(self._fn, (bound,))
        return program


def _split_bound(fn, args):
    """``(cell, other args)`` when ``fn`` is called as a method of a Cell, else
    ``(None, args)``."""
    if args and isinstance(args[0], Cell):
        params = list(inspect.signature(fn).parameters)
        if params and params[0] == "self":
            return args[0], args[1:]
    return None, args


def _compilable(args):

    def ok(a):
        if isinstance(a, (Tensor, bool, int, float, str, type(None))):
            return True
        return isinstance(a, (tuple, list)) and all(ok(x) for x in a)
    return all(ok(a) for a in args)


def _make_program(fn, bound):

    class _JitProgram(Cell):
        """One ``@jit`` function as a Cell whose state is every Parameter it reaches."""

        def __init__(self):
            super().__init__(auto_prefix=False)
            cells, params = reachable_state((fn,) + bound)
            object.__setattr__(self, "_state_cells", cells)
            object.__setattr__(self, "_state_params", params)

        def get_parameters(self, expand=True):
            seen = set()
            for c in self._state_cells:
                for p in c.get_parameters():
                    if id(p) not in seen:
                        seen.add(id(p))
                        yield p
            for p in self._state_params:
                if id(p) not in seen:
                    seen.add(id(p))
                    yield p

        def construct(self, *args):
            return fn(*bound, *args)

    _JitProgram.__name__ = _JitProgram.__qualname__ = \
        f"jit({getattr(fn, '__qualname__', type(fn).__name__)})"
    return _JitProgram()


def reachable_state(roots):
    """``(cells, parameters)`` reachable from ``roots``: through closures, the globals a
    function's code names, defaults, bound methods, ``functools.partial``, containers and
    object attributes, up to ``_SEARCH_DEPTH`` steps."""
    cells, params, seen = [], [], set()

    def visit(obj, depth):
        if id(obj) in seen or depth > _SEARCH_DEPTH or obj is None or \
                isinstance(obj, (str, bytes, int, float, bool, type, types.ModuleType)):
            return
        seen.add(id(obj))
        if isinstance(obj, Cell):
            cells.append(obj)
            return
        if isinstance(obj, Parameter):
            params.append(obj)
            return
        if isinstance(obj, Tensor):
            return
        if isinstance(obj, (list, tuple, set, frozenset, ParameterTuple)):
            for i, item in enumerate(obj):
                if i >= _SEARCH_WIDTH:
                    break
                visit(item, depth + 1)
            return
        if isinstance(obj, dict):
            for i, item in enumerate(obj.values()):
                if i >= _SEARCH_WIDTH:
                    break
                visit(item, depth + 1)
            return
        if isinstance(obj, types.MethodType):
            visit(obj.__self__, depth + 1)
            visit(obj.__func__, depth + 1)
            return
        if isinstance(obj, functools.partial):
            visit(obj.func, depth + 1)
            visit(obj.args, depth + 1)
            visit(obj.keywords, depth + 1)
            return
        if isinstance(obj, types.FunctionType):
            for cell in obj.__closure__ or ():
                try:
                    visit(cell.cell_contents, depth + 1)
                except ValueError:  # an empty closure cell
                    pass
            visit(obj.__defaults__, depth + 1)
            visit(obj.__kwdefaults__, depth + 1)
            for name in _code_names(obj.__code__):
                if name in obj.__globals__:
                    visit(obj.__globals__[name], depth + 1)
            return
        if isinstance(obj, _JitFunction):
            visit(obj._fn, depth + 1)
            return
        attrs = getattr(obj, "__dict__", None)
        if isinstance(attrs, dict):
            visit(attrs, depth + 1)

    for root in roots:
        visit(root, 0)
    return cells, params


def _code_names(code):
    """Global names a code object (and the functions nested in it) refers to."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


# -- directives of MindSpore's graph compiler ------------------------------------------------
def jit_class(cls):
    """Mark a class usable inside compiled functions (nothing to do here); returns it."""
    if not inspect.isclass(cls):
        raise TypeError(f"jit_class: can only decorate a class, got {cls!r}")
    return cls


def lazy_inline(fn=None, attrs=None, policy=None):
    """MindSpore's hint to compile a Cell's sub-graph once; it decorates ``__init__``
    (anything else is ``ValueError``, as in MindSpore) and changes nothing here."""
    def decorate(f):
        if getattr(f, "__name__", None) != "__init__":
            raise ValueError(f"lazy_inline: decorate the __init__ function, not "
                             f"{getattr(f, '__name__', f)!r}")
        return f
    return decorate if fn is None else decorate(fn)


def no_inline(fn=None):
    """MindSpore's hint to keep a function a separate sub-graph; changes nothing here."""
    return (lambda f: f) if fn is None else fn


def constexpr(fn=None, get_instance=True, name=None, reuse_result=True, check=True):
    """MindSpore evaluates a ``@constexpr`` function at compile time; eagerly it is just
    called, so the function is returned unchanged."""
    return (lambda f: f) if fn is None else fn


def mutable(input_data, dynamic_len=False):
    """Mark a constant input as variable for MindSpore's compiler: returns ``input_data``
    after checking it is a bool, int, float, Tensor, or a tuple/list/dict of them."""

    def ok(v, depth=0):
        if depth > 64:
            return False
        if isinstance(v, (bool, int, float, Tensor)):
            return True
        if isinstance(v, (tuple, list)):
            return all(ok(x, depth + 1) for x in v)
        if isinstance(v, dict):
            return all(ok(x, depth + 1) for x in v.values())
        return False

    if not ok(input_data):
        raise TypeError(f"mutable: input_data must be a bool, int, float, Tensor, or a tuple, "
                        f"list or dict of them, got {type(input_data).__name__}")
    if not isinstance(dynamic_len, bool):
        raise TypeError(f"mutable: dynamic_len must be a bool, got "
                        f"{type(dynamic_len).__name__}")
    if dynamic_len and not isinstance(input_data, (tuple, list)):
        raise TypeError("mutable: dynamic_len=True needs a tuple or list input_data")
    return input_data


def recompute(block, *args, use_reentrant=True, output_recompute=False, early_stop=True,
              context_fn=None, **kwargs):
    """``block(*args, **kwargs)``. MindSpore recomputes the block's activations in the
    backward pass to save memory; the values and gradients are the same as computing them
    once, which is what happens here."""
    if use_reentrant and not isinstance(block, Cell):
        raise TypeError(f"recompute: block must be a Cell when use_reentrant=True, got "
                        f"{type(block).__name__}")
    if not callable(block):
        raise TypeError(f"recompute: block must be callable, got {type(block).__name__}")
    return block(*args, **kwargs)


__all__ = ["jit", "jit_class", "lazy_inline", "no_inline", "constexpr", "mutable",
           "recompute"]
