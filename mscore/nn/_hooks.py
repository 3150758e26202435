"""Cell hooks with MindSpore 2.10's signatures: forward pre/post hooks, backward hooks.

* ``register_forward_pre_hook(hook_fn, *, prepend=False, with_kwargs=False)``:
  ``hook_fn(cell, args)`` (or ``(cell, args, kwargs)``) before ``construct``; may return new
  args (a non-tuple becomes a 1-tuple) or, with kwargs, ``(new_args, new_kwargs)``.
* ``register_forward_hook(hook_fn, *, prepend=False, with_kwargs=False, always_call=False)``:
  ``hook_fn(cell, args, output)`` (or ``(cell, args, kwargs, output)``) after; may return a
  new output. ``always_call`` hooks also run when ``construct`` raises.
* ``register_backward_pre_hook(hook_fn)``: ``hook_fn(cell, grad_output)`` when the gradient
  reaches the cell's outputs; may return new output gradients.
* ``register_backward_hook(hook_fn)``: ``hook_fn(cell, grad_input, grad_output)`` once the
  gradients of the cell's (floating Tensor) inputs are known; may return new input gradients.
  ``grad_input`` holds None for inputs that need no gradient.

Each returns a :class:`HookHandle`. Backward hooks run while ``value_and_grad`` (or
``grad``, ``GradOperation``, a train step) differentiates, on every backend: the cell's inputs
and outputs pass through :func:`mscore.autodiff.boundary.grad_boundary`.
"""
from __future__ import annotations

import itertools
import warnings
import weakref
from collections import OrderedDict

from mscore.autodiff.boundary import current_session, grad_boundary
from mscore.common.tensor import Tensor

_handle_ids = itertools.count()


class CellHooks:
    """A cell's hook tables (created on the first registration)."""

    __slots__ = ("forward_pre", "forward", "backward_pre", "backward", "with_kwargs",
                 "always_call", "__weakref__")

    def __init__(self):
        self.forward_pre = OrderedDict()
        self.forward = OrderedDict()
        self.backward_pre = OrderedDict()
        self.backward = OrderedDict()
        self.with_kwargs = set()   # handle ids of pre/post hooks that take kwargs
        self.always_call = set()   # handle ids of forward hooks run even when construct raises

    def discard(self, handle_id):
        for table in (self.forward_pre, self.forward, self.backward_pre, self.backward):
            table.pop(handle_id, None)
        self.with_kwargs.discard(handle_id)
        self.always_call.discard(handle_id)


class HookHandle:
    """Returned by the ``register_*hook`` methods; ``remove()`` unregisters the hook."""

    def __init__(self, hooks=None):
        self._hooks = None if hooks is None else weakref.ref(hooks)
        self.handle_id = next(_handle_ids)

    def remove(self):
        """Unregister the hook (again is a no-op)."""
        hooks = self._hooks() if self._hooks is not None else None
        if hooks is not None:
            hooks.discard(self.handle_id)


def _check_hook_fn(hook_fn):
    if not callable(hook_fn):
        raise TypeError(f"Expected a callable hook function, but got "
                        f"{type(hook_fn).__name__}.")


class HookMixin:
    """The ``register_*hook`` methods of :class:`~mscore.nn.Cell`."""

    def _hook_tables(self):
        hooks = self.__dict__.get("_hooks")
        if hooks is None:
            hooks = CellHooks()
            object.__setattr__(self, "_hooks", hooks)
        return hooks

    def _register(self, table_name, hook_fn, prepend=False):
        _check_hook_fn(hook_fn)
        hooks = self._hook_tables()
        handle = HookHandle(hooks)
        table = getattr(hooks, table_name)
        table[handle.handle_id] = hook_fn
        if prepend:
            table.move_to_end(handle.handle_id, last=False)
        return hooks, handle

    def register_forward_pre_hook(self, hook_fn, *, prepend=False, with_kwargs=False):
        """``hook_fn(cell, args[, kwargs])`` before ``construct``; returns a HookHandle."""
        hooks, handle = self._register("forward_pre", hook_fn, prepend)
        if with_kwargs:
            hooks.with_kwargs.add(handle.handle_id)
        return handle

    def register_forward_hook(self, hook_fn, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """``hook_fn(cell, args[, kwargs], output)`` after ``construct``; returns a
        HookHandle."""
        hooks, handle = self._register("forward", hook_fn, prepend)
        if with_kwargs:
            hooks.with_kwargs.add(handle.handle_id)
        if always_call:
            hooks.always_call.add(handle.handle_id)
        return handle

    def register_backward_pre_hook(self, hook_fn):
        """``hook_fn(cell, grad_output)`` when the gradient reaches the cell's outputs;
        returns a HookHandle."""
        return self._register("backward_pre", hook_fn)[1]

    def register_backward_hook(self, hook_fn):
        """``hook_fn(cell, grad_input, grad_output)`` once the cell's input gradients are
        known; may return new input gradients. Returns a HookHandle."""
        return self._register("backward", hook_fn)[1]


def run_hooked(cell, hooks, args, kwargs):
    """Call ``cell.construct`` with its hooks, in MindSpore's order: forward pre-hooks,
    input boundary, construct, forward hooks, output boundary."""
    called = set()
    output = None
    try:
        if hooks.forward_pre:
            args, kwargs = _run_forward_pre(cell, hooks, args, kwargs)
        call = None
        if hooks.backward or hooks.backward_pre:
            session = current_session()
            if session is not None:
                call = _BackwardCall(cell, hooks)
                if hooks.backward:
                    session.calls.append(call)
                    args = call.wrap_inputs(args)
        output = cell.construct(*args, **kwargs)
        for hook_id, hook_fn in list(hooks.forward.items()):
            if hook_id in hooks.always_call:
                called.add(hook_id)
            if hook_id in hooks.with_kwargs:
                new = hook_fn(cell, args, kwargs, output)
            else:
                new = hook_fn(cell, args, output)
            if new is not None:
                output = new
        if call is not None:
            output = call.wrap_outputs(output)
        return output
    except Exception:
        _run_always_call(cell, hooks, called, args, kwargs, output)
        raise


def _run_forward_pre(cell, hooks, args, kwargs):
    for hook_id, hook_fn in list(hooks.forward_pre.items()):
        if hook_id in hooks.with_kwargs:
            new = hook_fn(cell, args, kwargs)
            if new is not None:
                if not (isinstance(new, tuple) and len(new) == 2):
                    raise RuntimeError(f"forward pre-hook {_name(hook_fn)} (with_kwargs=True) "
                                       f"must return None or (new_args, new_kwargs), got "
                                       f"{type(new).__name__}")
                args, kwargs = new
        else:
            new = hook_fn(cell, args)
            if new is not None:
                args = new if isinstance(new, tuple) else (new,)
    return args, kwargs


def _run_always_call(cell, hooks, called, args, kwargs, output):
    for hook_id, hook_fn in list(hooks.forward.items()):
        if hook_id not in hooks.always_call or hook_id in called:
            continue
        try:
            if hook_id in hooks.with_kwargs:
                hook_fn(cell, args, kwargs, output)
            else:
                hook_fn(cell, args, output)
        except Exception as exc:  # the construct error is the one that propagates
            warnings.warn(f"forward hook {_name(hook_fn)} (always_call=True) raised while "
                          f"another error was propagating; silenced: {exc}", stacklevel=3)


def _name(fn):
    return getattr(fn, "__name__", type(fn).__name__)


class _BackwardCall:
    """One hooked call of a cell while differentiating: the boundaries around its inputs
    and outputs and the gradients seen there."""

    def __init__(self, cell, hooks):
        self.cell = cell
        self.hooks = hooks
        self.n_inputs = 0
        self.grad_output = None  # set when the backward pass reaches the outputs
        self.done = False        # set when the backward hooks have run

    def wrap_inputs(self, args):
        positions = [i for i, a in enumerate(args)
                     if isinstance(a, Tensor) and a.dtype.is_floating]
        self.n_inputs = len(positions)
        if not positions:
            return args
        outs = grad_boundary([args[i]._data for i in positions], self._input_vjp)
        args = list(args)
        for i, raw in zip(positions, outs):
            args[i] = Tensor._wrap(raw)
        return tuple(args)

    def wrap_outputs(self, output):
        leaves = []
        rebuild = _collect(output, leaves)
        if not leaves:
            return output
        outs = grad_boundary([t._data for t in leaves], self._output_vjp)
        return rebuild(iter(Tensor._wrap(raw) for raw in outs))

    def _output_vjp(self, cotangents, needed):
        grads = tuple(Tensor._wrap(c) for c in cotangents)
        for hook_fn in list(self.hooks.backward_pre.values()):
            new = hook_fn(self.cell, grads)
            if new is not None:
                grads = _checked(new, len(grads), hook_fn, "backward pre-hook")
        self.grad_output = grads
        return [None if g is None else g._data for g in grads]

    def _input_vjp(self, cotangents, needed):
        grads = tuple(Tensor._wrap(c) if n else None for c, n in zip(cotangents, needed))
        grads = self._run_backward_hooks(grads)
        return [None if g is None or not n else g._data for g, n in zip(grads, needed)]

    def _run_backward_hooks(self, grads):
        self.done = True
        grad_output = self.grad_output if self.grad_output is not None else ()
        for hook_fn in list(self.hooks.backward.values()):
            new = hook_fn(self.cell, grads, grad_output)
            if new is not None:
                grads = _checked(new, len(grads), hook_fn, "backward hook")
        return grads

    def finish(self):
        """After the backward pass: run the backward hooks of a call whose outputs got a
        gradient but none of whose inputs needed one (MindSpore passes None for them)."""
        if not self.done and self.grad_output is not None:
            self._run_backward_hooks((None,) * self.n_inputs)


def _checked(new, n, hook_fn, kind):
    """The gradients a hook returned, as a tuple of ``n`` Tensors (or None)."""
    if isinstance(new, Tensor):
        new = (new,)
    if not isinstance(new, tuple):
        raise TypeError(f"{kind} {_name(hook_fn)} must return None, a Tensor or a tuple of "
                        f"Tensors, got {type(new).__name__}")
    if len(new) != n:
        raise TypeError(f"{kind} {_name(hook_fn)} returned {len(new)} gradients, expected {n}")
    for g in new:
        if g is not None and not isinstance(g, Tensor):
            raise TypeError(f"{kind} {_name(hook_fn)} must return Tensors, got "
                            f"{type(g).__name__}")
    return new


def _collect(x, leaves):
    """Append the floating Tensors of nested tuples/lists ``x`` to ``leaves``; return a
    function rebuilding ``x`` from an iterator of replacements."""
    if isinstance(x, Tensor) and x.dtype.is_floating:
        leaves.append(x)
        return lambda it: next(it)
    if isinstance(x, (tuple, list)):
        parts = [_collect(v, leaves) for v in x]
        kind = type(x)
        return lambda it: kind(p(it) for p in parts)
    return lambda it: x
