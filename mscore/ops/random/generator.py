"""``mscore.Generator``: a random stream of its own, as MindSpore's ``mindspore.Generator``.

A generator holds a seed and the active backend's random state (a non-trainable Parameter,
like the global stream of :mod:`mscore.ops.random.draws`); the random Tensor methods that take
``generator=`` (``uniform_``, ``normal_``, ...) draw from it and leave the global stream
alone. The state a generator reports is the backend's own random state (MindSpore's is its
seed and offset): ``get_state`` / ``set_state`` restore draws on the same backend.
"""
from __future__ import annotations

import numpy as np

from mscore import dispatch
from mscore.common.parameter import Parameter
from mscore.common.tensor import Tensor
from mscore.context import generator_seed

__all__ = ["Generator"]


class Generator:
    """A random stream with its own seed (0 until seeded), as MindSpore's ``Generator``:
    ``manual_seed(seed)``, ``seed()``, ``initial_seed()``, ``get_state()``,
    ``set_state(state)``."""

    def __init__(self):
        self._seed = 0
        self._param = None
        self._backend = None

    def _restart(self):
        self._param = Parameter(dispatch.call("rng_state", self._seed), name="generator_state",
                                requires_grad=False)
        self._backend = dispatch.backend()

    def state_parameter(self):
        """The Parameter holding this stream's state on the active backend (a backend
        switched since the last draw restarts the stream from the seed)."""
        if self._param is None or self._backend is not dispatch.backend():
            self._restart()
        return self._param

    def manual_seed(self, seed):
        """Seed the stream with int ``seed`` and restart it; returns the generator."""
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError("Seed must be an integer.")   # Generator's own message
        self._seed = generator_seed(seed)
        self._restart()
        return self

    def seed(self):
        """Seed the stream with a fresh random seed; returns that seed."""
        self.manual_seed(int(np.random.SeedSequence().generate_state(1)[0]))
        return self._seed

    def initial_seed(self):
        """The seed the stream was last seeded with (0 before any seeding)."""
        return self._seed

    def get_state(self):
        """The stream's state, a Tensor that :meth:`set_state` takes back."""
        return Tensor(self.state_parameter().asnumpy().copy())

    def set_state(self, state):
        """Continue the stream from ``state`` (a Tensor :meth:`get_state` gave)."""
        if not isinstance(state, Tensor):
            raise TypeError(f"set_state: state must be a Tensor from get_state(), got "
                            f"{type(state).__name__}")
        param = self.state_parameter()
        want, host = param.asnumpy(), state.asnumpy()
        if host.shape != want.shape or host.dtype != want.dtype:
            raise ValueError(f"set_state: expected a state of shape {want.shape} and dtype "
                             f"{want.dtype} (from get_state() on this backend), got shape "
                             f"{host.shape} and dtype {host.dtype}")
        param._assign(dispatch.call("from_numpy", host.copy()))
