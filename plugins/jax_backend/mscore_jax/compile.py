"""The JAX backend's GRAPH_MODE compilation: ``jax.jit`` with donated state buffers."""
from __future__ import annotations

import os

import jax

from . import collectives
from .core import is_tracer


class JaxCompile:
    """``compile`` and ``host_callback``."""

    def host_callback(self, fn, arrays):
        """``fn(*numpy copies of arrays)``: at once for concrete arrays; for tracers (inside
        ``jax.jit`` or ``jax.value_and_grad``) through ``jax.debug.callback``, ordered, so a
        compiled program calls it each time it runs, in program order."""
        if not any(is_tracer(a) for a in arrays):
            fn(*[self.to_numpy(a) for a in arrays])
            return

        def on_host(*values):
            fn(*[self.to_numpy(v) for v in values])
        jax.debug.callback(on_host, *arrays, ordered=True)

    def compile(self, fn, donate_argnums=()):
        """``jax.jit(fn, donate_argnums=donate_argnums)``: traced once per input signature.

        The state buffers are donated (updated in place), as the design asks, except the
        tiny ones (fewer than ``DONATE_MIN_SIZE`` elements: scalars, the per-channel vectors
        of small layers): they save no memory, and donating them made XLA:CPU run a small
        conv-BatchNorm step with momentum 1.9x slower (bench/jax_vs_native.py's cnn; 1.05
        without them, while the MLP keeps donation's gain). ``MSCORE_JAX_DONATE=never``
        turns donation off."""
        mode = os.environ.get("MSCORE_JAX_DONATE", "always")
        if mode not in ("always", "never"):
            raise ValueError(f"MSCORE_JAX_DONATE: expected 'always' or 'never', got {mode!r}")
        donate = tuple(donate_argnums) if mode == "always" else ()
        job = collectives.active()
        if job is not None:  # in a multi-process job: over the job's mesh when needed
            return job.compile(fn, donate_argnums=donate)
        if donate == (0,):
            return _jit_donating_large_values(fn)
        return jax.jit(fn, donate_argnums=donate)

DONATE_MIN_SIZE = 64


def _jit_donating_large_values(fn):
    """``jax.jit(fn, donate_argnums=(0,))``, except that when the first argument is a list of
    arrays (GRAPH_MODE's parameter values) only those of at least ``DONATE_MIN_SIZE``
    elements are donated."""
    plain = jax.jit(fn, donate_argnums=(0,))
    split = {}   # positions of the donated and the kept values, fixed at the first call

    def joined(donated, kept, *rest):
        values = [None] * (len(donated) + len(kept))
        for i, v in zip(split["donated"], donated):
            values[i] = v
        for i, v in zip(split["kept"], kept):
            values[i] = v
        return fn(values, *rest)

    jitted = jax.jit(joined, donate_argnums=(0,))

    def run(first, *rest):
        if not isinstance(first, list):
            return plain(first, *rest)
        if split.get("count") != len(first):
            large = [getattr(v, "size", 0) >= DONATE_MIN_SIZE for v in first]
            split.update(count=len(first),
                         donated=[i for i, big in enumerate(large) if big],
                         kept=[i for i, big in enumerate(large) if not big])
        return jitted([first[i] for i in split["donated"]],
                      [first[i] for i in split["kept"]], *rest)
    return run
