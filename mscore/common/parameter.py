"""``Parameter`` (a named, trainable Tensor) and the stateless-call machinery.

Every change of a Parameter's value goes through :meth:`Parameter._assign`, so a
:class:`MutationScope` can see it, undo it and hand the new values back. That is how
``value_and_grad`` returns buffer updates (BatchNorm statistics) as values, and how a
backend compiles a whole train step as a pure function (:func:`stateless_call`).
"""
from __future__ import annotations

import copy
from operator import attrgetter

import numpy as np

from mscore import dispatch
from mscore._state import thread as _thread
from mscore.common.cast_cache import drop_cast_copies
from mscore.common.initializer import Initializer, initializer
from mscore.common.tensor import Tensor, _is_native
from mscore.common.tensor_text import parameter_text


class MutationScope:
    """Records the original value of every Parameter assigned inside ``with`` and can
    restore them. Scopes nest; each sees every assignment made by its own thread while it
    is open (another thread's assignments are that thread's business)."""

    def __init__(self, keeps_changes=False):
        self.original = {}  # id(param) -> (param, value before the first assignment)
        # True: whoever opened the scope assigns the changed values back after restoring
        # (value_and_grad does), so an array updated in place loses nothing.
        self.keeps_changes = keeps_changes

    def __enter__(self):
        _thread.mutation_scopes = _thread.mutation_scopes + (self,)
        return self

    def __exit__(self, *exc):
        _thread.mutation_scopes = tuple(s for s in _thread.mutation_scopes if s is not self)
        return False

    def note(self, param):
        """Remember ``param``'s current value if this scope has not seen it yet."""
        self.note_all((param,))

    def note_all(self, params):
        """Remember each of ``params``' current value if this scope has not seen it yet."""
        original = self.original
        for param in params:
            key = id(param)
            if key not in original:
                original[key] = (param, param._data)

    def restore(self):
        """Put every mutated Parameter back; return ``[(param, value it had)]``."""
        changed = []
        for param, old in self.original.values():
            changed.append((param, param._data))
            param._data = old
        return changed


def changes_kept():
    """True when no open :class:`MutationScope` of this thread would undo a change (every
    one re-assigns what changed): only then may a Parameter's array be updated in place."""
    return all(map(_keeps_changes, _thread.mutation_scopes))


_keeps_changes = attrgetter("keeps_changes")


def assign_all(params, values):
    """``p._assign(v)`` for each pair, in one call (an optimizer updates every parameter of
    a group at once): the same notes to the open mutation scopes, the same stale
    low-precision copies dropped."""
    for scope in _thread.mutation_scopes:
        scope.note_all(params)
    for p, v in zip(params, values):
        p._data = v
    drop_cast_copies(params)


class Parameter(Tensor):
    """A Tensor that is part of a network's state.

    ``Parameter(default_input, name=None, requires_grad=True, layerwise_parallel=False,
    parallel_optimizer=True)``. Names default to the attribute path a Cell gives them
    ("conv1.weight"); ``requires_grad=False`` marks a buffer (BatchNorm statistics).
    """

    __slots__ = ("name", "requires_grad", "layerwise_parallel", "parallel_optimizer",
                 "_user_named", "__dict__")

    def __init__(self, default_input, name=None, requires_grad=True, layerwise_parallel=False,
                 parallel_optimizer=True, storage_format="", device=None):
        # Ascend storage formats and host offloading have no meaning for mscore's backends.
        if storage_format != "":
            raise NotImplementedError(f"Parameter: storage_format={storage_format!r} is an "
                                      f"Ascend storage format; only '' is supported")
        if device is not None:
            raise NotImplementedError(f"Parameter: device={device!r} (offloading a Parameter "
                                      f"to another device) is not supported; place the "
                                      f"network with set_context(device_target=...)")
        if name is not None and not isinstance(name, str):
            raise ValueError(f"name: expected a str or None, got {type(name).__name__}")
        if not isinstance(requires_grad, bool):
            raise TypeError(f"requires_grad: expected a bool, got {type(requires_grad).__name__}")
        self._data = _to_native(default_input)
        self._user_named = name is not None
        self.name = name if name is not None else "Parameter"
        self.requires_grad = requires_grad
        self.layerwise_parallel = layerwise_parallel
        self.parallel_optimizer = parallel_optimizer

    # -- state changes ------------------------------------------------------------------
    def _assign(self, data):
        assign_all((self,), (data,))

    def set_data(self, data, slice_shape=False):
        """Replace the value (shape and dtype may change, as in MindSpore); returns self."""
        self._assign(_to_native(data))
        return self

    def assign_value(self, value):
        """Replace the values, keeping shape and dtype; returns self."""
        value = value if isinstance(value, Tensor) else Tensor(value)
        if value.shape != self.shape:
            raise ValueError(f"assign_value: parameter {self.name!r} has shape {self.shape}, "
                             f"got {value.shape}")
        self._assign(dispatch.call("cast", value._data, self.dtype))
        return self

    @property
    def data(self):
        """The parameter itself (MindSpore's ``param.data``)."""
        return self

    def value(self):
        """The current value as a plain Tensor."""
        return Tensor._wrap(self._data)

    def clone(self, init="same"):
        """A new Parameter with a copy of the data (``init='same'``) or freshly initialised
        (an initializer name), named like this one; optimizer states are made this way."""
        if init == "same":
            data = self.asnumpy()
            new = Parameter(Tensor(data), name=self.name, requires_grad=self.requires_grad)
        else:
            new = Parameter(initializer(init, self.shape, self.dtype), name=self.name,
                            requires_grad=self.requires_grad)
        return new

    def __repr__(self):
        return parameter_text(self.name, self.shape, self.dtype, self.requires_grad)

    __str__ = __repr__

    def __reduce__(self):
        raise TypeError("Parameter objects are not picklable; use mscore.save_checkpoint")

    def __deepcopy__(self, memo):
        """A Parameter with its own copy of the data and the same name and flags (as
        ``copy.deepcopy`` of a MindSpore Parameter)."""
        new = object.__new__(type(self))
        memo[id(self)] = new
        new._data = self.copy()._data
        for slot in ("name", "requires_grad", "layerwise_parallel", "parallel_optimizer",
                     "_user_named"):
            if hasattr(self, slot):
                setattr(new, slot, getattr(self, slot))
        for key, value in self.__dict__.items():
            new.__dict__[key] = copy.deepcopy(value, memo)
        return new


class ParameterTuple(tuple):
    """A tuple of Parameters (optimizer states); ``clone(prefix, init)`` copies them all."""

    def __new__(cls, iterable):
        items = tuple(iterable)
        for p in items:
            if not isinstance(p, Parameter):
                raise TypeError(f"ParameterTuple: expected Parameter elements, got "
                                f"{type(p).__name__}")
        return super().__new__(cls, items)

    def clone(self, prefix, init="same"):
        """New Parameters named ``prefix.name``, initialised as ``init``."""
        if not isinstance(prefix, str) or not prefix:
            raise ValueError(f"prefix: expected a non-empty str, got {prefix!r}")
        out = []
        for p in self:
            c = p.clone(init)
            c.name = f"{prefix}.{p.name}"
            c._user_named = True
            out.append(c)
        return ParameterTuple(out)


def _to_native(data):
    if isinstance(data, Tensor):
        return data._data
    if _is_native(data):
        return data
    if isinstance(data, (np.ndarray, np.generic, list, tuple, int, float, bool)):
        return Tensor(data)._data
    if isinstance(data, Initializer):
        raise TypeError("default_input: an Initializer needs a shape; use "
                        "initializer(init, shape, dtype)")
    raise TypeError(f"default_input: expected a Tensor, numpy array or number, got "
                    f"{type(data).__name__}")


def stateless_call(fn, params, values, *args, **kwargs):
    """Run ``fn(*args, **kwargs)`` with ``params`` holding ``values`` and change nothing.

    Returns ``(output, new_values, other_updates)``: the values ``params`` hold after the
    call, and ``[(param, value)]`` for any other Parameter the call assigned. Every Parameter
    is back to what it was before. A backend that compiles a train step traces this.
    """
    with MutationScope() as scope:
        try:
            for p, v in zip(params, values):
                scope.note(p)
                p._data = v
            out = fn(*args, **kwargs)
            new_values = [p._data for p in params]
        finally:
            changed = scope.restore()
    listed = {id(p) for p in params}
    others = [(p, v) for p, v in changed if id(p) not in listed]
    return out, new_values, others
