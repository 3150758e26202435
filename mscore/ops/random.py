"""The global random stream of the active backend.

Its state is a non-trainable Parameter, so every draw is an assignment a
:class:`~mscore.common.parameter.MutationScope` sees: a compiled train step threads the
state through as a value instead of freezing one dropout mask into the program.
"""
from __future__ import annotations

import numpy as np

from mscore import _state, dispatch
from mscore._state import thread as _thread

_holder = _state.process.random_stream   # {"param": Parameter, "backend": Backend}


def reset_global_state(seed):
    """Start the active backend's stream afresh from ``seed``."""
    from mscore.common.parameter import Parameter
    state = dispatch.call("rng_state", int(seed))
    _holder["param"] = Parameter(state, name="global_rng_state", requires_grad=False)
    _holder["backend"] = dispatch.backend()


def global_state_parameter():
    """The Parameter holding the active backend's random state (created on first use); while
    this thread traces a compiled program, that program's private stand-in."""
    traced = _thread.traced_random_stream
    if traced is not None:
        return traced
    if _holder["param"] is None or _holder["backend"] is not dispatch.backend():
        seed = _state.process.seeds.global_seed
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (2 ** 63))
        reset_global_state(seed)
    return _holder["param"]


def traced_stand_in(param):
    """A private Parameter named like the global stream ``param``, for a compiled program to
    thread through its trace instead of ``param`` (see :data:`mscore._per_thread.state`)."""
    from mscore.common.parameter import Parameter
    return Parameter(param, name=param.name, requires_grad=False)


def draw(kind, shape, dtype, seed=None):
    """Native array of ``shape`` from the stream: ``kind`` is "uniform" or "normal". With
    ``seed`` the draw comes from a fresh stream for that seed and leaves the global one."""
    op = "random_uniform" if kind == "uniform" else "random_normal"
    if seed is not None:
        values, _ = dispatch.call(op, dispatch.call("rng_state", int(seed)), tuple(shape), dtype)
        return values
    param = global_state_parameter()
    values, new_state = dispatch.call(op, param._data, tuple(shape), dtype)
    param._assign(new_state)
    return values


def park_global_state():
    """Move the global stream's state to the host and forget the device copy (an engine that
    restarts its runtime, such as ``jax.distributed``, may not keep device arrays alive);
    returns what :func:`restore_global_state` needs, or None when no stream exists yet."""
    param = _holder["param"]
    if param is None:
        return None
    host = param.asnumpy()
    _holder["param"] = None
    _holder["backend"] = None
    return host


def restore_global_state(host):
    """Rebuild the global stream from :func:`park_global_state`'s host copy."""
    if host is None:
        return
    from mscore.common.parameter import Parameter
    from mscore.common.tensor import Tensor
    _holder["param"] = Parameter(Tensor(host), name="global_rng_state", requires_grad=False)
    _holder["backend"] = dispatch.backend()
