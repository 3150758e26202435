"""``ms.value_and_grad``, ``ms.grad`` and ``ops.GradOperation`` with MindSpore's signatures.

The function is run as a pure function of native arrays: the differentiated inputs and the
weights' values go in, the value, the outputs and any Parameter updates (BatchNorm
statistics) come out. The backend's native ``value_and_grad`` (torch autograd, jax) or
:func:`mscore.autodiff.reference.reference_value_and_grad` differentiates it.
"""
from __future__ import annotations

import functools

from mscore import dispatch
from mscore.autodiff.boundary import hook_session
from mscore.autodiff.reference import reference_value_and_grad
from mscore.autodiff.tracer import unwrap
from mscore.common import cast_cache
from mscore.common.parameter import MutationScope, Parameter, assign_all
from mscore.common.tensor import Tensor


def _positions(grad_position):
    if grad_position is None:
        return ()
    if isinstance(grad_position, bool):
        raise TypeError("grad_position: expected an int, a tuple of ints or None, got bool")
    if isinstance(grad_position, int):
        if grad_position < 0:
            raise ValueError(f"grad_position: expected a non-negative int, got {grad_position}")
        return (grad_position,)
    if isinstance(grad_position, (tuple, list)) and grad_position and all(
            isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in grad_position):
        return tuple(grad_position)
    raise TypeError(f"grad_position: expected an int, a non-empty tuple of non-negative ints "
                    f"or None, got {grad_position!r}")


def _weights(weights):
    if weights is None:
        return None
    if isinstance(weights, Parameter):
        return [weights]
    if isinstance(weights, (list, tuple)) and all(isinstance(w, Parameter) for w in weights):
        return list(weights)
    raise TypeError("weights: expected a Parameter, a list/tuple of Parameters (for example "
                    "net.trainable_params()) or None")


def _flatten(out):
    """Leaves of nested tuples/lists of ``out``, and a function rebuilding the structure
    from a list of values. No closure refers to itself or to the leaves: a reference cycle
    would keep the outputs (and their autograd graph) alive until the garbage collector ran."""
    leaves = []
    return leaves, functools.partial(_rebuild, _structure(out, leaves))


def _structure(out, leaves):
    """None for a leaf (appended to ``leaves``), else ``(type, [parts])``."""
    if isinstance(out, (tuple, list)):
        return type(out), [_structure(v, leaves) for v in out]
    leaves.append(out)
    return None


def _rebuild(spec, values):
    return _unflatten(spec, iter(values))


def _unflatten(spec, values):
    if spec is None:
        return next(values)
    kind, parts = spec
    return kind(_unflatten(p, values) for p in parts)


def _sum_to_scalar(t):
    data = t._data
    if not t.dtype.is_floating:
        raise TypeError(f"value_and_grad: fn must return floating-point outputs to "
                        f"differentiate, got {t.dtype}")
    shape = dispatch.shape(data)
    if shape:
        data = dispatch.call("sum", data, axis=None, keepdims=False)
    return data


def _detach(raw):
    return dispatch.call("stop_gradient", unwrap(raw))


def _same(raw):
    return raw


_wrap = Tensor._wrap


def value_and_grad(fn, grad_position=0, weights=None, has_aux=False, return_ids=False,
                   sens_param=False):
    """A function returning ``(fn(*args), gradients)``.

    ``grad_position``: the index (or tuple of indices) of the inputs to differentiate, or None;
    ``weights``: Parameters to differentiate; ``has_aux``: only the first output is
    differentiated, the rest are returned untouched. Without ``has_aux`` every output
    contributes (its sum), as with MindSpore's default sensitivity of ones.
    ``sens_param``: the last argument is the sensitivity (the output's cotangent, a tuple
    of them for several differentiated outputs) instead of ones.
    """
    if not callable(fn):
        raise TypeError(f"fn: expected a callable, got {type(fn).__name__}")
    for name, flag in (("has_aux", has_aux), ("return_ids", return_ids),
                       ("sens_param", sens_param)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name}: expected a bool, got {type(flag).__name__}")
    positions = _positions(grad_position)
    weight_list = _weights(weights)
    if not positions and weight_list is None:
        raise ValueError("value_and_grad: grad_position and weights cannot both be None")

    differentiated = frozenset(map(id, weight_list or ()))

    def wrapper(*args):
        sens = None
        if sens_param:
            if not args:
                raise TypeError("sens_param: the sensitivity must be the last argument")
            *args, sens = args
            args = tuple(args)
        for p in positions:
            if p >= len(args):
                raise ValueError(f"grad_position: {p} is out of range for {len(args)} inputs")
        inputs = [_differentiable(args[p], p) for p in positions]
        n_inputs = sum(len(x) for x in inputs)
        wl = weight_list or []
        primals = [t._data for x in inputs for t in x] + [w._data for w in wl]
        side = {}

        def pure(*prims):
            with MutationScope(keeps_changes=True) as scope:
                try:
                    for w, v in zip(wl, prims[n_inputs:]):
                        if w._data is not v:   # a weight given as its own array stays
                            scope.note(w)
                            w._data = v
                    call_args = list(args)
                    it = iter(prims)
                    for p in positions:
                        call_args[p] = _rewrap(args[p], it)
                    with cast_cache.scoped_copies():
                        out = fn(*call_args)
                finally:
                    changed = scope.restore()
            if changed:   # parameters fn changed besides the differentiated ones
                changed = [(p, v) for p, v in changed if id(p) not in differentiated]
            others = changed
            outs = out if isinstance(out, tuple) else (out,)
            if has_aux:
                if not isinstance(out, tuple) or len(out) < 2:
                    raise ValueError("has_aux: fn must return a tuple (loss, aux, ...)")
            target = _weighted_sum(outs[:1] if has_aux else outs, sens)
            leaves, side["rebuild"] = _flatten(out)
            side["leaf_kinds"] = [isinstance(x, Tensor) for x in leaves]
            side["python_leaves"] = [None if isinstance(x, Tensor) else x for x in leaves]
            side["others"] = [p for p, _ in others]
            raw_leaves = [x._data for x in leaves if isinstance(x, Tensor)]
            return target, (raw_leaves, [v for _, v in others])

        backend = dispatch.backend()
        impl = backend.value_and_grad or reference_value_and_grad
        try:
            with hook_session():  # cells' backward hooks run inside (autodiff.boundary)
                (_, (raw_leaves, updates)), grads = impl(pure, primals, True)
        except Exception as exc:
            dispatch._raise_if_foreign(backend, "value_and_grad", primals, exc)
            raise
        # A backend whose results are already cut from its graph needs no stop_gradient.
        detach = _same if impl is not reference_value_and_grad and \
            getattr(backend, "value_and_grad_detached", False) else _detach
        assign_all(side["others"], updates if detach is _same else list(map(detach, updates)))
        it = iter(raw_leaves)
        values = [_wrap(detach(next(it))) if is_t else py
                  for is_t, py in zip(side["leaf_kinds"], side["python_leaves"])]
        out = side["rebuild"](values)
        grad_tensors = Tensor._wrap_all(grads if detach is _same else list(map(detach, grads)))
        it = iter(grad_tensors[:n_inputs])
        grad_tensors = [_rewrap(args[p], it) for p in positions] + grad_tensors[n_inputs:]
        return out, _arrange(grad_tensors, grad_position, positions, weights, weight_list,
                             return_ids)

    return wrapper


def _differentiable(arg, position):
    """The Tensors of input ``position``: the Tensor itself, or the items of a tuple or list
    of Tensors (MindSpore differentiates a ``mutable`` tuple input item by item)."""
    if isinstance(arg, Tensor):
        return [arg]
    if isinstance(arg, (tuple, list)) and arg and all(isinstance(t, Tensor) for t in arg):
        return list(arg)
    raise TypeError(f"value_and_grad: input {position} must be a Tensor, or a tuple or list "
                    f"of Tensors, to be differentiated, got {type(arg).__name__}")


def _rewrap(arg, values):
    """``arg``'s structure (a Tensor, or a tuple/list of them) filled from ``values``
    (native arrays or Tensors, taken in order)."""
    def one():
        v = next(values)
        return v if isinstance(v, Tensor) else Tensor._wrap(v)
    if isinstance(arg, Tensor):
        return one()
    return type(arg)(one() for _ in arg)


def _weighted_sum(outs, sens):
    """The scalar whose gradient is wanted: the sum of every differentiated output, each
    weighted elementwise by its sensitivity when ``sens`` is given."""
    if sens is not None:
        senses = tuple(sens) if isinstance(sens, (tuple, list)) else (sens,)
        if len(senses) != len(outs):
            raise ValueError(f"sens_param: expected {len(outs)} sensitivities (one per "
                             f"differentiated output), got {len(senses)}")
        outs = [_check_out(o) * s for o, s in zip(outs, senses)]
    target = None
    for o in outs:
        s = _sum_to_scalar(_check_out(o))
        target = s if target is None else dispatch.call("add", target, s)
    return target


def _check_out(o):
    if not isinstance(o, Tensor):
        raise TypeError(f"value_and_grad: fn must return Tensors, got {type(o).__name__}")
    return o


def _arrange(grads, grad_position, positions, weights, weight_list, return_ids):
    pos_grads = grads[:len(positions)]
    w_grads = grads[len(positions):]
    if return_ids:
        pos_grads = [(p, g) for p, g in zip(positions, pos_grads)]
        w_grads = [(w.name, g) for w, g in zip(weight_list or [], w_grads)]
    if isinstance(grad_position, int) and not isinstance(grad_position, bool):
        pos_out = pos_grads[0]
    else:
        pos_out = tuple(pos_grads)
    if weight_list is None:
        return pos_out
    w_out = w_grads[0] if isinstance(weights, Parameter) else tuple(w_grads)
    if not positions:
        return w_out
    return pos_out, w_out


def grad(fn, grad_position=0, weights=None, has_aux=False, return_ids=False,
         sens_param=False):
    """A function returning the gradients of ``fn`` (and, when ``has_aux``, the tuple of
    auxiliary outputs as a second item), with :func:`value_and_grad`'s arguments."""
    vag = value_and_grad(fn, grad_position, weights, has_aux, return_ids, sens_param)

    def wrapper(*args):
        out, grads = vag(*args)
        if has_aux:
            return grads, tuple(out[1:])
        return grads

    return wrapper


def get_grad(gradients, identifier):
    """The gradient of input position ``identifier`` (an int) or of Parameter
    ``identifier`` in the output of ``grad(..., return_ids=True)``."""
    if isinstance(identifier, Parameter):
        key = identifier.name
    elif isinstance(identifier, int) and not isinstance(identifier, bool):
        key = identifier
    else:
        raise TypeError(f"get_grad: identifier must be an int or a Parameter, got "
                        f"{identifier!r}")

    def find(node):
        if isinstance(node, tuple):
            if len(node) == 2 and isinstance(node[1], Tensor) and \
                    type(node[0]) is type(key) and node[0] == key:
                return node[1]
            for item in node:
                hit = find(item)
                if hit is not None:
                    return hit
        return None

    hit = find(gradients)
    if hit is None:
        raise RuntimeError(f"get_grad: no gradient for position or Parameter {key!r}")
    return hit


def vjp(fn, *inputs, weights=None, has_aux=False):
    """``(outputs, vjp_fn)`` (``(outputs, vjp_fn, aux)`` with ``has_aux``): ``vjp_fn(v)``
    returns the vector-Jacobian products ``v . d outputs / d inputs`` as a tuple (and the
    weights' as a second item when ``weights`` is given)."""
    if not callable(fn):
        raise TypeError(f"fn: expected a callable, got {type(fn).__name__}")
    for i, x in enumerate(inputs):
        if not isinstance(x, Tensor):
            raise TypeError(f"vjp: inputs must be Tensors, input {i} is "
                            f"{type(x).__name__}")
    if not inputs:
        raise ValueError("vjp: give at least one input")
    out = fn(*inputs)
    aux = None
    if has_aux:
        if not isinstance(out, tuple) or len(out) < 2:
            raise ValueError("has_aux: fn must return a tuple (output, aux, ...)")
        out, aux = out[0], out[1:] if len(out) > 2 else out[1]
    positions = tuple(range(len(inputs)))

    def vjp_fn(v):
        target = (lambda *xs: fn(*xs)[0]) if has_aux else fn
        grads = grad(target, positions, weights, sens_param=True)(*inputs, v)
        return grads

    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


class GradOperation:
    """MindSpore's classic ``GradOperation(get_all=False, get_by_list=False, sens_param=False)``:
    ``GradOperation(...)(net, weights)(*inputs)`` returns gradients."""

    def __init__(self, get_all=False, get_by_list=False, sens_param=False):
        for name, v in (("get_all", get_all), ("get_by_list", get_by_list),
                        ("sens_param", sens_param)):
            if not isinstance(v, bool):
                raise TypeError(f"{name}: expected a bool, got {type(v).__name__}")
        self.get_all, self.get_by_list, self.sens_param = get_all, get_by_list, sens_param

    def __call__(self, fn, weights=None):
        if self.get_by_list and weights is None:
            raise ValueError("weights: required when get_by_list is True")

        def grad_fn(*inputs):
            if self.sens_param:
                *inputs, sens = inputs

                def target(*xs):
                    out = fn(*xs)
                    outs = out if isinstance(out, tuple) else (out,)
                    senses = sens if isinstance(sens, tuple) else (sens,)
                    total = None
                    for o, s in zip(outs, senses):
                        term = (o * s).sum()
                        total = term if total is None else total + term
                    return total
            else:
                target = fn
            n = len(inputs)
            if self.get_all:
                position = tuple(range(n)) if n else None
            elif self.get_by_list:
                position = None
            else:
                position = 0
            ws = weights if self.get_by_list else None
            if position is None and ws is None:
                raise ValueError("GradOperation: nothing to differentiate")
            g = grad(target, position, ws)(*inputs)
            if self.get_all and not self.get_by_list:
                return g
            return g

        return grad_fn
