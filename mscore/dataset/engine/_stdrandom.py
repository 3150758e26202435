"""The random streams of MindSpore's dataset engine, reproduced so that the same seed gives
the same order.

MindSpore's samplers and random image operations draw from C++'s ``std::mt19937`` through
libstdc++'s ``std::shuffle``, ``uniform_int_distribution`` (the division-based form),
``generate_canonical`` and ``discrete_distribution``. The 32-bit outputs of ``std::mt19937(s)``
are those of numpy's legacy ``RandomState(s)`` (same seeding, same twister), so the draws
below are computed from that stream with numpy, following the algorithms' documented
behaviour. ``tests/test_dataset_oracle.py`` checks the results against orders recorded from
MindSpore 2.10.
"""
from __future__ import annotations

import numpy as np

__all__ = ["StdMT19937", "std_shuffle", "chained_shuffles"]

_U32_MAX = 0xFFFFFFFF
_TWO32 = float(2 ** 32)


class StdMT19937:
    """``std::mt19937(seed)``: its raw 32-bit outputs and libstdc++'s distributions on them."""

    def __init__(self, seed):
        self._state = np.random.RandomState(int(seed) % 2 ** 32)
        self._unread = np.empty(0, np.uint64)

    def raw(self, n):
        """The next ``n`` outputs, as uint64."""
        n = int(n)
        head, self._unread = self._unread[:n], self._unread[n:]
        if len(head) == n:
            return head
        fresh = self._state.randint(0, 2 ** 32, size=n - len(head), dtype=np.uint32)
        return np.concatenate([head, fresh.astype(np.uint64)])

    def below(self, counts):
        """One draw in ``[0, count)`` per element of ``counts`` (each in 1..2**32), as
        ``uniform_int_distribution(0, count - 1)`` makes it: ``r // scaling``, drawing again
        while ``r`` falls past the last whole multiple."""
        counts = np.asarray(counts, dtype=np.uint64)
        full = counts == 2 ** 32
        scaling = np.where(full, 1, np.uint64(_U32_MAX) // np.where(full, 1, counts))
        past = np.where(full, 2 ** 32, counts * scaling)
        out = np.empty(len(counts), np.uint64)
        pos = 0
        while pos < len(counts):
            raw = self.raw(len(counts) - pos)
            rejected = np.flatnonzero(raw >= past[pos:])
            k = int(rejected[0]) if rejected.size else len(raw)
            out[pos:pos + k] = raw[:k] // scaling[pos:pos + k]
            if rejected.size:
                self._unread = np.concatenate([raw[k + 1:], self._unread])
            pos += k
        return out

    def canonical(self, n):
        """``n`` draws of ``generate_canonical<double, 53>``: two outputs each."""
        raw = self.raw(2 * int(n)).astype(np.float64).reshape(-1, 2)
        value = (raw[:, 0] + raw[:, 1] * _TWO32) / (_TWO32 * _TWO32)
        return np.minimum(value, np.nextafter(1.0, 0.0))

    def canonical_float(self, n):
        """``n`` draws of ``generate_canonical<float, 24>``: one output each."""
        value = self.raw(int(n)).astype(np.float32) / np.float32(_TWO32)
        return np.minimum(value, np.nextafter(np.float32(1), np.float32(0)))

    def bernoulli(self, p, n=1):
        """``bernoulli_distribution(p)``: ``canonical() < p``."""
        return self.canonical(n) < p

    def uniform_int(self, low, high, n=1):
        """``uniform_int_distribution(low, high)`` (inclusive), ``n`` draws."""
        return self.below(np.full(int(n), int(high) - int(low) + 1)).astype(np.int64) + low

    def uniform_float(self, low, high, n=1):
        """``uniform_real_distribution<float>(low, high)``, ``n`` draws."""
        low, high = np.float32(low), np.float32(high)
        return self.canonical_float(n) * (high - low) + low

    def discrete(self, weights, n):
        """``discrete_distribution(weights)``: the first cumulative probability not below a
        canonical draw."""
        w = np.asarray(weights, dtype=np.float64)
        cum = np.cumsum(w / w.sum())
        cum[-1] = 1.0
        return np.searchsorted(cum, self.canonical(n), side="left")


def std_shuffle(values, gen):
    """``std::shuffle(values, gen)`` as libstdc++ does it: when the generator's range covers
    ``n * n``, one draw places two elements."""
    src = np.asarray(values)
    a = src.tolist()
    n = len(a)
    if n < 2:
        return np.array(a, dtype=src.dtype)
    if _U32_MAX // n >= n:
        first_pair = 2 if n % 2 == 0 else 1
        steps = np.arange(first_pair, n, 2, dtype=np.uint64)
        counts = (steps + 1) * (steps + 2)
        lead = gen.below([2]) if n % 2 == 0 else np.empty(0, np.uint64)
        draws = gen.below(counts)
        if n % 2 == 0:
            j = int(lead[0])
            a[1], a[j] = a[j], a[1]
        for i, d in zip(steps.tolist(), draws.tolist()):
            width = i + 2
            p1, p2 = d // width, d % width
            a[i], a[p1] = a[p1], a[i]
            a[i + 1], a[p2] = a[p2], a[i + 1]
        return np.array(a, dtype=src.dtype)
    draws = gen.below(np.arange(2, n + 1, dtype=np.uint64))
    for i, j in zip(range(1, n), draws.tolist()):
        a[i], a[j] = a[j], a[i]
    return np.array(a, dtype=src.dtype)


def chained_shuffles(start, seed_of_epoch, epoch, cache=None):
    """The order of epoch ``epoch`` when each epoch shuffles the previous epoch's order with
    ``std::mt19937(seed_of_epoch(e))`` (epoch 0 shuffles ``start``).

    ``cache`` (a dict) remembers the last epoch computed, so that reading epochs in turn
    costs one shuffle each."""
    key = (len(start), seed_of_epoch(0), start[:1].tobytes() if len(start) else b"")
    if cache is not None and cache.get("key") == key and cache["epoch"] <= epoch:
        e, order = cache["epoch"], cache["order"]
    else:
        e, order = -1, start
    while e < epoch:
        e += 1
        order = std_shuffle(order, StdMT19937(seed_of_epoch(e)))
    if cache is not None:
        cache.update(key=key, epoch=e, order=order)
    return order
