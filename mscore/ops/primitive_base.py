"""The Primitive base class (``ops.Primitive``, ``prim_attr_register``) and the argument checks
of the Primitive classes. A Primitive is configured at construction and called on Tensors;
an instance may carry an amp compute dtype (``set_compute_dtype``): then its floating inputs
are cast to that dtype and its floating outputs back to float32, which is how O1 treats
white-listed primitives inside a user's ``construct``.
"""
from __future__ import annotations

import functools
import inspect
import numbers

from mscore.common import dtype as mdt
from mscore.common.cast_cache import recast_tensor
from mscore.common.tensor import Tensor
from mscore.dispatch import call
from mscore.ops import _sharded_ops, _sharding

_wrap = Tensor._wrap


def prim_attr_register(fn):
    """Decorator of a Primitive subclass's ``__init__`` (``fn``), as in MindSpore: before
    ``fn`` runs, the primitive is initialised under its class name and every argument of
    the call (defaults included) is recorded with ``add_prim_attr`` and in ``init_attrs``."""
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        Primitive.__init__(self, type(self).__name__)
        self.init_attrs = {}
        for name, value in list(bound.arguments.items())[1:]:
            self.add_prim_attr(name, value)
            self.init_attrs[name] = value
        return fn(self, *args, **kwargs)
    return wrapper


class Primitive:
    """Base of the primitive classes: ``__call__`` applies amp casts around ``compute``.

    ``Primitive(name)`` as in MindSpore (``name`` defaults to the class name);
    ``add_prim_attr``/``init_prim_io_names`` record attributes the way custom primitives
    written for MindSpore set them.
    """

    def __init__(self, name=None):
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name: expected a str, got {type(name).__name__}")
        self._compute_dtype = None
        self.name = name or type(self).__name__
        self.attrs = {}

    def add_prim_attr(self, name, value):
        """Record attribute ``name`` (also readable as ``self.<name>``); returns self."""
        self.attrs[name] = value
        setattr(self, name, value)
        return self

    def del_prim_attr(self, name):
        """Forget attribute ``name``; returns self."""
        self.attrs.pop(name, None)
        self.__dict__.pop(name, None)
        return self

    def init_prim_io_names(self, inputs, outputs):
        """Record the names of the inputs and outputs."""
        self.add_prim_attr("input_names", list(inputs))
        self.add_prim_attr("output_names", list(outputs))

    def set_prim_instance_name(self, instance_name):
        """Record the instance name MindSpore shows in graphs; returns self."""
        self.instance_name = instance_name
        return self

    def set_compute_dtype(self, dtype):
        """Compute in ``dtype`` (float16/bfloat16) with outputs back in float32; None undoes."""
        self._compute_dtype = None if dtype is None else mdt.as_dtype(dtype)
        return self

    @property
    def compute_dtype(self):
        """The amp compute dtype set on this instance, or None."""
        return self._compute_dtype

    def shard(self, in_strategy=None, out_strategy=None):
        """Record how the inputs (``in_strategy``: per input, pieces per axis) and outputs
        are cut over the devices; returns self. Effective in SEMI_AUTO_PARALLEL mode (see
        :mod:`mscore.ops._sharding`), recorded and ignored in the others, as in MindSpore."""
        if in_strategy is None and out_strategy is None:
            return self
        if in_strategy is not None:
            self.add_prim_attr("in_strategy", _sharding.check_strategy(
                in_strategy, "in_strategy", self.name))
        if out_strategy is not None:
            self.add_prim_attr("out_strategy", _sharding.check_strategy(
                out_strategy, "out_strategy", self.name))
        return self

    def __call__(self, *args, **kwargs):
        strategy = self.attrs.get("in_strategy")
        if strategy is not None and _sharding.strategies_apply():
            if _sharding.in_job():
                return _sharded_ops.run(self, strategy, args, kwargs)
            args = _sharding.lay_out_inputs(args, strategy, f"{self.name}.shard")
        if self._compute_dtype is None:   # the common call: no frame in between
            return self.compute(*args, **kwargs)
        return self._compute_cast(args, kwargs)

    def _compute_cast(self, args, kwargs):
        """``compute`` with the amp casts of ``set_compute_dtype`` around it."""
        low = self._compute_dtype
        if low is None:
            return self.compute(*args, **kwargs)
        args = tuple(_cast(a, low) if isinstance(a, Tensor) and a.dtype.is_floating
                     and a.dtype is not low else a for a in args)
        out = self.compute(*args, **kwargs)
        return cast_floating(out, mdt.float32)

    def compute(self, *args, **kwargs):
        raise NotImplementedError

    def __repr__(self):
        return f"Prim[{self.name}]"


def _cast(x, dtype):
    """Tensor ``x`` cast to DType ``dtype`` (the amp casts around a primitive)."""
    return _wrap(call("cast", x._data, dtype))


def call_signature(cls):
    """The inputs of an instance of Primitive class ``cls`` (its ``__call__`` when the
    class defines one, else its ``compute``), without ``self``; None when unknown."""
    fn = None
    for klass in cls.__mro__:
        if "__call__" in vars(klass) and klass is not Primitive:
            fn = vars(klass)["__call__"]
            break
        if "compute" in vars(klass):
            fn = vars(klass)["compute"]
            break
    if fn is None:
        return None
    sig = inspect.signature(fn)
    return sig.replace(parameters=list(sig.parameters.values())[1:])


def check_bool(value, name, prim):
    """``value`` if it is a bool, else ``TypeError`` naming ``prim``'s argument."""
    if not isinstance(value, bool):
        raise TypeError(f"{prim}: {name} must be a bool, got {type(value).__name__}")
    return value


def check_int(value, name, prim):
    """``value`` if it is an int (not bool), else ``TypeError``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{prim}: {name} must be an int, got {type(value).__name__}")
    return int(value)


def check_float(value, name, prim):
    """``value`` if it is a float, else ``TypeError`` (MindSpore refuses ints here)."""
    if not isinstance(value, float):
        raise TypeError(f"{prim}: {name} must be a float, got {type(value).__name__}")
    return value


def check_axes(value, name, prim):
    """An int or a tuple/list of ints, else ``TypeError``."""
    if isinstance(value, (tuple, list)):
        for v in value:
            check_int(v, name, prim)
        return tuple(int(v) for v in value)
    return check_int(value, name, prim)


def check_reduction(value, prim, allowed=("none", "mean", "sum")):
    """A loss's ``reduction``: ``TypeError`` when not a str, ``ValueError`` when unknown."""
    if not isinstance(value, str):
        raise TypeError(f"{prim}: reduction must be a str, got {type(value).__name__}")
    if value not in allowed:
        raise ValueError(f"{prim}: reduction must be one of {list(allowed)}, got {value!r}")
    return value


def cast_floating(out, dtype):
    """``out`` (a Tensor or nested tuples/lists of them) with floating Tensors cast to
    ``dtype``; other values unchanged. Amp's output casts use it."""
    if isinstance(out, Tensor):
        return recast_tensor(out, dtype)
    if isinstance(out, (tuple, list)):
        return type(out)(cast_floating(o, dtype) for o in out)
    return out


class _Elementwise(Primitive):
    _fn = None

    def compute(self, *args):
        return type(self)._fn(*args)


def _elementwise(name, fn, doc):
    return type(name, (_Elementwise,), {"_fn": staticmethod(fn), "__doc__": doc})
