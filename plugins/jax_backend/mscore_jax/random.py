"""The JAX backend's random streams: explicit keys.

A state is the raw ``threefry2x32`` key data (two words, bit-cast to int32 so that it has an
mscore dtype); every draw splits the key and returns the next state, so a compiled step
threads the stream instead of freezing one mask.
"""
from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from mscore.plugin.rules import check_seed

_KEY_IMPL = "threefry2x32"


class JaxRandom:
    """``rng_state``, ``random_uniform`` and ``random_normal``."""

    # -- random streams ------------------------------------------------------------------------
    def rng_state(self, seed):
        seed = check_seed(seed)
        words = np.array([(seed >> 32) & 0xFFFFFFFF, seed & 0xFFFFFFFF], dtype=np.uint32)
        return jnp.asarray(words.view(np.int32))

    def random_uniform(self, state, shape, dtype):
        return _draw(state, tuple(shape), self.native_dtype(dtype), False)

    def random_normal(self, state, shape, dtype):
        return _draw(state, tuple(shape), self.native_dtype(dtype), True)


@partial(jax.jit, static_argnums=(1, 2, 3))
def _draw(state, shape, dtype, normal):
    key = jax.random.wrap_key_data(lax.bitcast_convert_type(state, jnp.uint32),
                                   impl=_KEY_IMPL)
    nxt, sub = jax.random.split(key)
    sampler = jax.random.normal if normal else jax.random.uniform
    values = sampler(sub, shape, dtype=dtype)
    return values, lax.bitcast_convert_type(jax.random.key_data(nxt), jnp.int32)
