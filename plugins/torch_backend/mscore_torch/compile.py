"""The torch backend's GRAPH_MODE compilation through ``torch.compile``."""
from __future__ import annotations

import warnings

import torch

from mscore import _state

# The traced step counts its traces (mscore._state.count_trace). Dynamo would record the
# increment as a side effect replayed on every run, and guard on the counter's value, so the
# program would be compiled again on every call: it calls the counter once per trace, at
# trace time, instead.
torch._dynamo.assume_constant_result(_state.count_trace)

COMPILE_POLICIES = ("auto", "always", "never")
MAX_RECOMPILES = 2   # later calls that compile again before GRAPH_MODE falls back to eager


class TorchCompile:
    """``host_callback``, and ``compile`` (policy from ``MSCORE_TORCH_COMPILE``, backend from
    ``MSCORE_TORCH_COMPILE_BACKEND``, CUDA graphs from ``MSCORE_TORCH_CUDA_GRAPHS``, read when
    the backend is built)."""

    def host_callback(self, fn, arrays):
        """``fn(*numpy copies of arrays)``, called at once. Under ``torch.compile`` dynamo
        does not trace the call (``torch.compiler.disable``): the program's graph breaks
        there and the call runs on each run of the program."""
        _on_host(fn, self.to_numpy, arrays)

    def _compiles(self):
        """Whether GRAPH_MODE programs go through ``torch.compile`` on the current device:
        ``always``; ``auto`` on CUDA (where a step's host time is what a compiled, replayed
        program saves); never with ``never``."""
        policy = self._compile_policy
        return policy == "always" or (policy == "auto" and self._device.type == "cuda")

    def _compile_mode(self):
        """``"reduce-overhead"`` (inductor's CUDA graphs: the whole step replayed with one
        launch) on CUDA unless ``MSCORE_TORCH_CUDA_GRAPHS=0``; None otherwise."""
        if self._device.type != "cuda" or not self._cuda_graphs:
            return None
        return "reduce-overhead"

    def graph_mode_eager_reason(self):
        """None when GRAPH_MODE programs go through ``torch.compile`` (see :meth:`compile`),
        else the policy that keeps them eager."""
        if self._compiles():
            return None
        if self._compile_policy == "never":
            return "MSCORE_TORCH_COMPILE=never"
        return ("torch.compile runs on CUDA only by default (MSCORE_TORCH_COMPILE=always "
                "turns it on here; on CPU it did not pay off)")

    def compile(self, fn, donate_argnums=()):
        """``fn`` for GRAPH_MODE: ``torch.compile``d where it pays, else ``fn`` itself.

        ``MSCORE_TORCH_COMPILE`` picks the policy: ``auto`` (default) compiles on CUDA and
        runs eagerly on CPU (where the first call took 10-30 s and steps got no faster:
        bench/torch_vs_native.py); ``always`` compiles everywhere; ``never`` nowhere. On CUDA
        the program is compiled with ``mode="reduce-overhead"``: inductor's kernels captured
        in CUDA graphs, so a whole train step (forward, backward, optimizer update, loss-scale
        bookkeeping) is replayed with a few launches instead of thousands;
        ``MSCORE_TORCH_CUDA_GRAPHS=0`` compiles without the capture. The first use says so
        once (a RuntimeWarning). ``MSCORE_TORCH_COMPILE_BACKEND`` names the
        ``torch.compile`` backend (default ``inductor``). Under ``torch.compile`` the
        gradients come from ``torch.func.grad``, so the step traces into one graph. Shapes
        are static: a call with new shapes is a new program (mscore.compile.graph keys
        programs by shape), compiled afresh. A program that fails to compile, or that
        recompiles on :data:`MAX_RECOMPILES` later calls, runs eagerly from then on, with a
        warning. With CUDA graphs, the program's outputs (its second result, the cell's
        outputs) are copied out of the graph's memory, which the next replay reuses.
        ``donate_argnums`` is accepted and ignored (torch has no buffer donation).
        """
        if not self._compiles():
            return fn
        inductor = self._compile_backend == "inductor"
        mode = self._compile_mode() if inductor else None   # another backend has no modes
        self._announce_compilation(mode)
        stats = {"graphs": 0}
        try:
            inner = self._compile_backend
            patches = _inductor_patches(mode) if inductor else None
            if isinstance(inner, str):
                inner = torch._dynamo.lookup_backend(inner)

            def counting_backend(gm, example_inputs, **kwargs):
                stats["graphs"] += 1
                if patches:
                    kwargs = {**kwargs, "config_patches": patches}
                return inner(gm, example_inputs, **kwargs)
            compiled = torch.compile(fn, backend=counting_backend, dynamic=False)
        except Exception as exc:  # an unknown or broken compiler backend
            _warn_eager(exc)
            return fn
        state = {"fn": compiled, "calls": 0, "recompiles": 0}
        graphs = mode == "reduce-overhead"

        def run(*args):
            current = state["fn"]
            if current is fn:
                return fn(*args)
            before = stats["graphs"]
            try:
                if graphs:
                    torch.compiler.cudagraph_mark_step_begin()
                result = current(*args)
                if graphs:
                    result = _outputs_copied(result)
            except Exception as exc:
                # Compilation failed, or the program itself raised: run it eagerly. Its own
                # error then surfaces unchanged; a success means the compiler was at fault.
                result = fn(*args)
                _warn_eager(exc)
                state["fn"] = fn
                return result
            state["calls"] += 1
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
        run.compile_mode = mode
        return run

    def _announce_compilation(self, mode):
        """One RuntimeWarning per backend: GRAPH_MODE is compiled, and how to turn it off."""
        if self._compile_announced or self._compile_policy == "always":
            return
        self._compile_announced = True
        how = "with CUDA graphs (mode='reduce-overhead'; MSCORE_TORCH_CUDA_GRAPHS=0 keeps " \
              "the kernels without the capture)" if mode else "without CUDA graphs"
        warnings.warn(f"GRAPH_MODE on {self.device}: each program is compiled with "
                      f"torch.compile {how}; the first call of a program takes seconds to "
                      f"compile. MSCORE_TORCH_COMPILE=never runs GRAPH_MODE eagerly.",
                      RuntimeWarning, stacklevel=4)


@torch.compiler.disable
def _on_host(fn, to_numpy, arrays):
    with torch._C._DisableFuncTorch():   # reading values inside a torch.func transform
        host = [to_numpy(_plain(a)) for a in arrays]
    fn(*host)


def _plain(t):
    """``t``, or the plain tensor inside torch.func's wrappers (``torch.func.grad`` wraps its
    inputs in tensors without storage, which cannot reach numpy)."""
    functorch = torch._C._functorch
    while functorch.is_functorch_wrapped_tensor(t):
        t = functorch.get_unwrapped(t)
    return t


def _inductor_patches(mode):
    """Inductor's settings for a GRAPH_MODE program: ``mode``'s (``reduce-overhead``: CUDA
    graphs), as ``torch.compile(mode=...)`` would apply them, and eager's float16/bfloat16
    rounding between fused ops (``emulate_precision_casts``), so a compiled step makes the
    same loss-scale overflow decisions as PYNATIVE instead of computing more precisely."""
    import torch._inductor as inductor
    patches = dict(inductor.list_mode_options(mode)) if mode else {}
    patches["emulate_precision_casts"] = True
    return patches


def _outputs_copied(result):
    """``(new values, outputs)`` with the outputs copied out of the CUDA graph pool (the next
    replay overwrites it; the new values are fed back to the next call and read by nobody
    after it)."""
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], list):
        return result[0], [t.clone() if isinstance(t, torch.Tensor) else t for t in result[1]]
    return result


def _warn_eager(exc):
    warnings.warn(f"torch.compile failed ({type(exc).__name__}: {str(exc)[:300]}); running "
                  f"this GRAPH_MODE program eagerly", RuntimeWarning, stacklevel=3)
