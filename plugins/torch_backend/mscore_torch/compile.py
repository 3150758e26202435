"""The torch backend's GRAPH_MODE compilation through ``torch.compile``."""
from __future__ import annotations

import sys
import types
import warnings

import torch

COMPILE_POLICIES = ("auto", "always", "never")
MAX_RECOMPILES = 2   # later calls that compile again before GRAPH_MODE falls back to eager


class TorchCompile:
    """``compile`` (policy from ``MSCORE_TORCH_COMPILE``, backend from
    ``MSCORE_TORCH_COMPILE_BACKEND``, read when the backend is built)."""

    def compile(self, fn, donate_argnums=()):
        """``fn`` for GRAPH_MODE: ``torch.compile``d when asked for, else ``fn`` itself.

        ``MSCORE_TORCH_COMPILE`` picks the policy: ``always`` compiles, ``never`` and
        ``auto`` (default) run the program eagerly. ``auto`` is eager because compiling did
        not pay off where it was measured (bench/torch_vs_native.py, MLP 784-512-512-10,
        batch 64): on CPU the first call takes 10-30 s and steps got no faster; on an H100
        the compiled step (one graph, traced once) took 2.32 ms against 2.09 ms eagerly.
        ``MSCORE_TORCH_COMPILE_BACKEND`` names the ``torch.compile`` backend (default
        ``inductor``). Under ``torch.compile`` the gradients come from ``torch.func.grad``,
        so forward, backward and optimizer update trace into one graph. A program that
        fails to compile, or that recompiles on :data:`MAX_RECOMPILES` later calls, runs
        eagerly from then on, with a warning. ``donate_argnums`` is accepted and ignored
        (torch has no buffer donation).
        """
        policy = self._compile_policy
        if policy != "always":
            return fn
        stats = {"graphs": 0}
        traced, counter_globals = _private_trace_counter(fn)
        try:
            inner = self._compile_backend
            if isinstance(inner, str):
                inner = torch._dynamo.lookup_backend(inner)

            def counting_backend(gm, example_inputs, **kwargs):
                stats["graphs"] += 1
                return inner(gm, example_inputs, **kwargs)
            compiled = torch.compile(traced, backend=counting_backend, dynamic=False)
        except Exception as exc:  # an unknown or broken compiler backend
            _warn_eager(exc)
            return fn
        state = {"fn": compiled, "calls": 0, "recompiles": 0}

        def run(*args):
            current = state["fn"]
            if current is fn:
                return fn(*args)
            before = stats["graphs"]
            if counter_globals is not None:
                counter_globals["trace_count"] = 0  # the value dynamo's guard was made with
            try:
                result = current(*args)
            except Exception as exc:
                # Compilation failed, or the program itself raised: run it eagerly. Its own
                # error then surfaces unchanged; a success means the compiler was at fault.
                result = fn(*args)
                _warn_eager(exc)
                state["fn"] = fn
                return result
            state["calls"] += 1
            if counter_globals is not None and stats["graphs"] > before:
                module = sys.modules.get(fn.__module__)
                if module is not None:  # count real traces, as the module expects
                    module.trace_count = getattr(module, "trace_count", 0) + 1
            if state["calls"] > 1 and stats["graphs"] > before:
                state["recompiles"] += 1
                if state["recompiles"] >= MAX_RECOMPILES:
                    # Something the program reads changes on every call (a guard fails):
                    # compiling again each step costs far more than it saves.
                    _warn_eager(RuntimeError(f"the program was recompiled on "
                                             f"{state['recompiles']} later calls"))
                    state["fn"] = fn
            return result

        run.__wrapped__ = fn
        run.compile_stats = stats
        return run


def _private_trace_counter(fn):
    """``fn`` with a private copy of its globals when it bumps a global ``trace_count``
    (mscore.compile.graph's pure step does): dynamo guards on every global int a program
    reads, so a counter that changes on every call would recompile the program on every
    call. The copy's counter is reset to 0 before each call; :meth:`TorchBackend.compile`
    adds the real traces to the module's counter instead. Returns ``(fn, None)`` otherwise.
    """
    code = getattr(fn, "__code__", None)
    if code is None or "trace_count" not in code.co_names:
        return fn, None
    private = dict(fn.__globals__)
    clone = types.FunctionType(code, private, fn.__name__, fn.__defaults__, fn.__closure__)
    clone.__kwdefaults__ = fn.__kwdefaults__
    return clone, private


def _warn_eager(exc):
    warnings.warn(f"torch.compile failed ({type(exc).__name__}: {str(exc)[:300]}); running "
                  f"this GRAPH_MODE program eagerly", RuntimeWarning, stacklevel=3)
