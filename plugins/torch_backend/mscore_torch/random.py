"""The torch backend's counter-based random streams.

A state is a CPU ``int64`` tensor ``[seed, counter]``; a draw hashes ``(seed, counter, element
index)`` with integer tensor ops on the current device and returns the state
``[seed, counter + 1]``. The values are a pure function of ``(seed, counter, shape, dtype)``:
identical on CPU and CUDA, across runs, thread counts and torch versions.
"""
from __future__ import annotations

import math

import torch

from mscore.common import dtype as mdt
from mscore.plugin.rules import check_seed

from .core import _TO_TORCH

_M32 = 0xFFFFFFFF


# -- counter-based hashing for the random streams ---------------------------------------------
def _mul32(x, c):
    """``(x * c) mod 2**32`` for int64 ``x`` in [0, 2**32) without int64 overflow."""
    hi, lo = c >> 16, c & 0xFFFF
    return (((x * hi) & 0xFFFF) * 65536 + x * lo) & _M32


def _mix32(x):
    """A 32-bit integer finaliser (xor-shift-multiply); a bijection of [0, 2**32)."""
    x = x ^ (x >> 16)
    x = _mul32(x, 0x7FEB352D)
    x = x ^ (x >> 15)
    x = _mul32(x, 0x846CA68B)
    return x ^ (x >> 16)


def _mix32_int(x):
    """:func:`_mix32` on a Python int (used for the per-draw keys, on the host)."""
    x &= _M32
    x ^= x >> 16
    x = (x * 0x7FEB352D) & _M32
    x ^= x >> 15
    x = (x * 0x846CA68B) & _M32
    return x ^ (x >> 16)


class TorchRandom:
    """``rng_state``, ``random_uniform`` and ``random_normal``."""

    def rng_state(self, seed):
        """``int64[2] = [seed, 0]`` on the host (see the module docstring)."""
        return torch.tensor([check_seed(seed) % (1 << 63), 0], dtype=torch.int64)

    def _words(self, state, count):
        """``count`` pseudo-random 32-bit words (int64 tensor) for ``state``."""
        seed, counter = (int(v) for v in state.tolist())
        k1 = _mix32_int(_mix32_int(seed & _M32) ^ (seed >> 32))
        k2 = _mix32_int(_mix32_int(k1 ^ (counter & _M32)) ^ ((counter >> 32) & _M32))
        k3 = _mix32_int(k2 ^ 0x9E3779B9)
        idx = torch.arange(count, dtype=torch.int64, device=self._device)
        return _mix32(_mix32(idx ^ k2) ^ k3)

    @staticmethod
    def _next(state):
        return state + torch.tensor([0, 1], dtype=torch.int64, device=state.device)

    def _unit(self, state, shape, dtype, open_low):
        """Uniform values of ``dtype`` in [0, 1) (or (0, 1] when ``open_low``)."""
        n = math.prod(shape)
        tdt = _TO_TORCH[dtype]
        if tdt == torch.float64:
            w = self._words(state, 2 * n).reshape(2, n) if n else \
                torch.zeros((2, 0), dtype=torch.int64, device=self._device)
            bits, nbits = (w[0] >> 5) * (1 << 26) + (w[1] >> 6), 53
            work = torch.float64
        else:
            nbits = {torch.float16: 11, torch.bfloat16: 8}.get(tdt, 24)
            bits = self._words(state, n) >> (32 - nbits)
            work = torch.float32
        if open_low:
            bits = bits + 1
        return (bits.to(work) * (2.0 ** -nbits)).reshape(tuple(shape))

    def random_uniform(self, state, shape, dtype):
        """``(values in [0, 1), next_state)``."""
        if not dtype.is_floating:
            raise TypeError(f"dtype: random_uniform needs a floating dtype, got {dtype}")
        values = self._unit(state, shape, dtype, False).to(_TO_TORCH[dtype])
        return values, self._next(state)

    def random_normal(self, state, shape, dtype):
        """``(standard normal values, next_state)`` by the Box-Muller transform."""
        if not dtype.is_floating:
            raise TypeError(f"dtype: random_normal needs a floating dtype, got {dtype}")
        work = mdt.float64 if dtype is mdt.float64 else mdt.float32
        n = math.prod(shape)
        u = self._unit(state, (2, n), work, True)
        z = torch.sqrt(-2.0 * torch.log(u[0])) * torch.cos((2.0 * math.pi) * u[1])
        return z.reshape(tuple(shape)).to(_TO_TORCH[dtype]), self._next(state)
