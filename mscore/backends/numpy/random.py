"""The numpy backend's random streams: a state is ``uint64[2] = [seed, counter]`` seeding
numpy's default generator; each draw moves the counter on by one."""
from __future__ import annotations

import numpy as np

from mscore.plugin.rules import check_seed


class ArrayModuleRandom:
    """``rng_state``, ``random_uniform`` and ``random_normal``."""

    # -- random --------------------------------------------------------------------------
    def rng_state(self, seed):
        return np.array([check_seed(seed), 0], dtype=np.uint64)

    def _generator(self, state):
        return np.random.default_rng([int(state[0]), int(state[1])])

    def _next(self, state):
        return np.array([state[0], state[1] + 1], dtype=np.uint64)

    def random_uniform(self, state, shape, dtype):
        values = self._generator(state).random(tuple(shape), dtype=np.float64)
        return self.from_numpy(values, dtype), self._next(state)

    def random_normal(self, state, shape, dtype):
        values = self._generator(state).standard_normal(tuple(shape), dtype=np.float64)
        return self.from_numpy(values, dtype), self._next(state)
