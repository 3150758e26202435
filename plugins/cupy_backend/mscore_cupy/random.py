"""The CuPy backend's counter-based random stream, computed on the device."""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from mscore.plugin.rules import check_seed

# -- counter-based random stream (splitmix64) ----------------------------------------------------
# A state is an int64 array [seed, counter] on the device (int64 so that it is a dtype mscore
# knows and can live in a Parameter; the words are read as uint64). Draw k reads element i of
# the sequence mix(key(seed, counter) + (i + 1) * GOLDEN); the counter then moves on by one. All
# of it is elementwise array code, so it runs on the device without a host round trip and gives
# bit-identical uniforms under numpy.
_U64 = np.uint64
_GOLDEN = _U64(0x9E3779B97F4A7C15)
_MIX1 = _U64(0xBF58476D1CE4E5B9)
_MIX2 = _U64(0x94D049BB133111EB)
_S30, _S27, _S31 = _U64(30), _U64(27), _U64(31)


def _mix(z):
    """The splitmix64 finaliser on a uint64 array (wrapping arithmetic)."""
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


def _precision(np_dtype):
    """Significand bits (with the implicit one) of a floating numpy dtype."""
    return int(ml_dtypes.finfo(np_dtype).nmant) + 1


class CupyRandom:
    """``rng_state``, ``random_uniform`` and ``random_normal``."""

    # -- random --------------------------------------------------------------------------------
    def rng_state(self, seed):
        """``int64[2] = [seed mod 2**63, 0]`` on the current device."""
        seed = check_seed(seed)
        return self.xp.asarray(np.array([seed % (1 << 63), 0], dtype=np.int64))

    def _stream_bits(self, state, count):
        """``count`` uint64 words of the stream at ``state`` (no host round trip)."""
        if tuple(state.shape) != (2,) or state.dtype != np.int64:
            raise ValueError(f"state: expected an int64 array of shape (2,) from rng_state, "
                             f"got {state.dtype} {tuple(state.shape)}")
        words = state.view(np.uint64)
        key = _mix(_mix(words[0:1] + _GOLDEN) ^ (words[1:2] * _MIX1 + _MIX2))
        idx = self.xp.arange(1, count + 1, dtype=np.uint64)
        return _mix(key + idx * _GOLDEN)

    def _advance(self, state):
        nxt = state.copy()
        nxt[1:] += np.int64(1)
        return nxt

    def _float_target(self, dtype, op):
        if not getattr(dtype, "is_floating", False):
            raise TypeError(f"dtype: {op} draws floating values, got {dtype!r}")
        return self.native_dtype(dtype)

    @staticmethod
    def _unit(bits, precision):
        """Multiples of 2**-precision in [0, 1) from the top bits (exact in float64)."""
        return (bits >> _U64(64 - precision)).astype(np.float64) * (2.0 ** -precision)

    def random_uniform(self, state, shape, dtype):
        target = self._float_target(dtype, "random_uniform")
        shape = tuple(int(s) for s in shape)
        bits = self._stream_bits(state, math.prod(shape))
        # Rounded to the target's precision first, so the cast is exact and never reaches 1.
        values = self._unit(bits, _precision(target)).reshape(shape).astype(target)
        return values, self._advance(state)

    def random_normal(self, state, shape, dtype):
        target = self._float_target(dtype, "random_normal")
        shape = tuple(int(s) for s in shape)
        n = math.prod(shape)
        bits = self._stream_bits(state, 2 * n).reshape(n, 2)
        u1 = 1.0 - self._unit(bits[:, 0], 53)          # (0, 1]: the log stays finite
        u2 = self._unit(bits[:, 1], 53)
        xp = self.xp
        values = xp.sqrt(-2.0 * xp.log(u1)) * xp.cos((2.0 * math.pi) * u2)  # Box-Muller
        return values.reshape(shape).astype(target), self._advance(state)
