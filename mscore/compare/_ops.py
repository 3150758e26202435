"""Watching and replaying a backend's ops, through the backend contract only.

The core reaches a backend through attribute lookups on its object (``dispatch.call`` and
``dispatch.fused``), so an instance attribute set for the duration of a ``with`` block sees
every op of any backend, the built-in ones and a third party's alike, without changing it.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from mscore import dispatch, fused_reference
from mscore.common import dtype as mdt
from mscore.common.dtype import DType
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.ops import functional as F
from mscore.ops.grad import value_and_grad
from mscore.plugin.backend import FUSED_OPS, PRIMITIVE_OPS

_MISSING = object()
# Creation, transfer, device and random ops: not computations worth comparing.
_NOT_COMPUTE = frozenset({"from_numpy", "to_numpy", "full", "arange", "shape", "dtype",
                          "stop_gradient", "rng_state", "random_uniform", "random_normal",
                          "synchronize", "memory_stats", "all_finite"})
COMPUTE_OPS = tuple(n for n in PRIMITIVE_OPS + FUSED_OPS if n not in _NOT_COMPUTE)


@contextmanager
def patched(backend, makers):
    """Within the block, ``backend.<name>`` is ``makers[name](original)`` for every name
    whose original is not None (a fused op left to the core stays None)."""
    saved = {}
    try:
        for name, make in makers.items():
            original = getattr(backend, name, None)
            if original is None:
                continue
            saved[name] = backend.__dict__.get(name, _MISSING)
            setattr(backend, name, make(original))
        yield
    finally:
        for name, old in saved.items():
            if old is _MISSING:
                delattr(backend, name)
            else:
                setattr(backend, name, old)


@contextmanager
def watch_random(backend):
    """Yields a list that gets an entry each time the block draws device random numbers
    (Dropout and friends: each backend has its own stream, so such steps differ)."""
    drawn = []

    def make(original):
        def draw(*args, **kwargs):
            drawn.append(True)
            return original(*args, **kwargs)
        return draw

    with patched(backend, {"random_uniform": make, "random_normal": make}):
        yield drawn


class HostArray:
    """A native array's values on the host (an op argument recorded for a replay)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    @property
    def dtype(self):
        """The mscore dtype name of the values."""
        return _dtype_name(self.value)


def _dtype_name(arr):
    return mdt.from_numpy_dtype(arr.dtype).name


_SCALARS = (type(None), bool, int, float, complex, str, bytes, slice, type(Ellipsis))


def _is_native(backend, x):
    if isinstance(x, _SCALARS + (DType, tuple, list, dict)):
        return False
    try:
        backend.shape(x)
        backend.dtype(x)
    except Exception:
        return False
    return True


def to_host(backend, x):
    """``x`` with every native array (also inside tuples, lists and dicts) as a
    HostArray."""
    if isinstance(x, (tuple, list)):
        return type(x)(to_host(backend, v) for v in x)
    if isinstance(x, dict):
        return {k: to_host(backend, v) for k, v in x.items()}
    if _is_native(backend, x):
        return HostArray(backend.to_numpy(x))
    return x


def to_native(backend, x):
    """The inverse of :func:`to_host` on (possibly another) ``backend``."""
    if isinstance(x, (tuple, list)):
        return type(x)(to_native(backend, v) for v in x)
    if isinstance(x, dict):
        return {k: to_native(backend, v) for k, v in x.items()}
    if isinstance(x, HostArray):
        return backend.from_numpy(x.value)
    return x


@dataclass
class OpCall:
    """One op a backend ran: its name, arguments (host values) and output."""

    name: str
    args: tuple
    kwargs: dict
    out: object

    @property
    def dtype(self):
        """The dtype of the op's first floating array argument (else of its first array)."""
        arrays = [a for a in _flat(self.args) if isinstance(a, HostArray)]
        for a in arrays:
            if a.value.dtype.kind in "fV":
                return a.dtype
        return arrays[0].dtype if arrays else "-"


def _flat(x):
    if isinstance(x, (tuple, list)):
        for v in x:
            yield from _flat(v)
    else:
        yield x


@contextmanager
def record_ops(backend, calls):
    """Append an :class:`OpCall` to ``calls`` for each compute op the block runs on
    ``backend`` (ops an op runs inside itself are not recorded separately)."""
    depth = [0]

    def make(name):
        def maker(original):
            def op(*args, **kwargs):
                depth[0] += 1
                try:
                    out = original(*args, **kwargs)
                finally:
                    depth[0] -= 1
                if depth[0] == 0:
                    calls.append(OpCall(name, to_host(backend, args), to_host(backend, kwargs),
                                        to_host(backend, out)))
                return out
            return op
        return maker

    with patched(backend, {name: make(name) for name in COMPUTE_OPS}):
        yield calls


# -- replay -----------------------------------------------------------------------------------
def _fused_adapters():
    """Fused ops through the functional API, so a backend without the fused op replays it
    with the core's composite (and is differentiated through it)."""

    w = Tensor._wrap

    def opt(x):
        return None if x is None else w(x)

    def batch_norm(x, mean, var, weight, bias, training, momentum, eps):
        stats = [None if s is None else Parameter(w(s), requires_grad=False)
                 for s in (mean, var)]
        out = F.batch_norm(w(x), stats[0], stats[1], opt(weight), opt(bias), training,
                           momentum, eps)
        return out._data

    def cross_entropy(logits, target, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        return F.cross_entropy(w(logits), w(target), None, ignore_index, reduction,
                               label_smoothing)._data

    def attention(q, k, v, mask, is_causal, scale):
        return F.scaled_dot_product_attention(w(q), w(k), w(v), opt(mask), 0.0, is_causal,
                                              scale)._data

    return {
        "softmax": lambda x, axis: F.softmax(w(x), axis)._data,
        "log_softmax": lambda x, axis: F.log_softmax(w(x), axis)._data,
        "relu": lambda x: F.relu(w(x))._data,
        "dense": lambda x, wt, b: F.dense(w(x), w(wt), opt(b))._data,
        "addcmul": lambda a, b, c: dispatch.call("add", a, dispatch.call("mul", b, c)),
        "int_floor_divide": lambda a, b: F.floor_divide(w(a), w(b))._data,
        "layer_norm": lambda x, shape, weight, bias, eps: F.layer_norm(
            w(x), shape, opt(weight), opt(bias), eps)._data,
        "batch_norm": batch_norm,
        "cross_entropy": cross_entropy,
        "attention": attention,
        "rnn_sequence": fused_reference.rnn_sequence,
    }


def run_op(name, args, kwargs):
    """Run op ``name`` on the active backend (native arguments): primitives through the
    dispatcher, fused ops through the functional API (the core's composite where the
    backend has no fused version). A tuple result gives its first item."""
    if name in FUSED_OPS:
        out = _fused_adapters()[name](*args, **kwargs)
    else:
        out = dispatch.call(name, *args, **kwargs)
    return out[0] if isinstance(out, tuple) else out


def replay(call, cotangent):
    """Replay ``call`` on the active backend: ``(output, input gradients)`` as numpy, the
    gradients (of ``sum(output * cotangent)``, one per floating array argument) None when
    ``cotangent`` is None or the output is not floating."""

    backend = dispatch.backend()
    args = list(to_native(backend, call.args))
    kwargs = to_native(backend, call.kwargs)
    out = run_op(call.name, args, kwargs)
    out_host = backend.to_numpy(out)
    positions = [i for i, a in enumerate(call.args)
                 if isinstance(a, HostArray) and a.value.dtype.kind in "fV"]
    if cotangent is None or not positions or out_host.dtype.kind not in "fV":
        return out_host, None
    cot = Tensor(np.asarray(cotangent, np.float32))

    def target(*xs):
        local = list(args)
        for i, x in zip(positions, xs):
            local[i] = x._data
        y = Tensor._wrap(run_op(call.name, local, kwargs))
        return F.sum(F.mul(F.cast(y, mdt.float32), cot))

    _, grads = value_and_grad(target, tuple(range(len(positions))))(
        *[Tensor._wrap(args[i]) for i in positions])
    return out_host, [g.asnumpy() for g in grads]
