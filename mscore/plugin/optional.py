"""The optional members of the backend contract, with their signatures, grouped by concern.

A backend binds any of these (as a method of the same name and signature); one it leaves
unbound is ``None`` on :class:`~mscore.plugin.backend.Backend` and the core does without:
it composes a fused op from primitives, runs its own autodiff, runs GRAPH_MODE eagerly, ...
This class is the one place their signatures are written: ``Backend`` takes its names (and,
for a type checker, its signatures) from here, the export tracer binds recorded calls with
them, and ``docs/backend-contract.md`` is rendered from it (``tools/render_backend_contract.py``,
checked by ``tests/test_backend_contract.py``). ``Array`` is the backend's native array type.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

Array = Any          # the backend's native array (numpy.ndarray, torch.Tensor, jax.Array, ...)
DType = Any          # an mscore.common.dtype.DType


class FusedOps:
    """Fused ops: one kernel for what the core otherwise composes from primitives (the
    conformance kit compares each with :mod:`mscore.fused_reference`)."""

    def softmax(self, x: Array, axis: int) -> Array:
        """``exp(x - max) / sum(exp(x - max))`` along ``axis``."""
        raise NotImplementedError

    def log_softmax(self, x: Array, axis: int) -> Array:
        """``x - max - log(sum(exp(x - max)))`` along ``axis``."""
        raise NotImplementedError

    def layer_norm(self, x: Array, normalized_shape: tuple[int, ...], weight: Array | None,
                   bias: Array | None, eps: float) -> Array:
        """Normalised over the trailing ``normalized_shape`` axes, scaled and shifted; half
        precision normalised in float32 and rounded once (MindSpore's rule)."""
        raise NotImplementedError

    def batch_norm(self, x: Array, running_mean: Array | None, running_var: Array | None,
                   weight: Array | None, bias: Array | None, training: bool, momentum: float,
                   eps: float) -> tuple[Array, Array | None, Array | None]:
        """Batch normalisation over axis 1: ``(out, new_running_mean, new_running_var)``,
        the inputs unmodified; in training the new statistics are ``(1 - momentum) * running
        + momentum * batch`` (unbiased variance), None in eval or without running
        statistics."""
        raise NotImplementedError

    def cross_entropy(self, logits: Array, target: Array, ignore_index: int,
                      reduction: str, label_smoothing: float) -> Array:
        """Cross entropy of logits ``(N, C)`` and int class indices ``(N,)``; ``reduction``
        "mean" (over the samples not ignored), "sum" or "none"; the formula is in
        docs/backend-authors.md."""
        raise NotImplementedError

    def attention(self, q: Array, k: Array, v: Array, mask: Array | None, is_causal: bool,
                  scale: float | None) -> Array:
        """``softmax(q k^T * scale + mask) v`` over the last two axes; a bool mask keeps the
        True positions, a float mask is added to the scores; causal masking is top-left
        aligned; ``scale`` None is ``1 / sqrt(d)`` (formula in docs/backend-authors.md)."""
        raise NotImplementedError

    def addcmul(self, a: Array, b: Array, c: Array) -> Array:
        """``a + b * c`` (one dtype, broadcasting): the optimizers' updates in one pass."""
        raise NotImplementedError

    def relu(self, x: Array) -> Array:
        """``max(x, 0)``, gradient 0 at 0 (``ops.relu``, ``nn.ReLU``)."""
        raise NotImplementedError

    def dense(self, x: Array, w: Array, b: Array | None) -> Array:
        """``x @ w.T + b`` with x ``(..., in)``, w ``(out, in)``, b ``(out,)`` or None, one
        dtype (``ops.dense``, ``nn.Dense``)."""
        raise NotImplementedError

    def gelu(self, x: Array, approximate: str) -> Array:
        """``x * Phi(x)`` for ``approximate`` "none" (erf), its tanh approximation for
        "tanh"."""
        raise NotImplementedError

    def conv_bias(self, x: Array, w: Array, b: Array, stride: tuple[int, ...],
                  padding: Any, dilation: tuple[int, ...], groups: int) -> Array:
        """``conv(x, w, ...) + b`` over the channel axis (b: ``(O,)``)."""
        raise NotImplementedError

    def int_floor_divide(self, a: Array, b: Array) -> Array:
        """``a // b`` of integer (not bool) arrays of one dtype, broadcasting, exact over the
        whole range (MindSpore's ``FloorDiv``): rounded toward -inf, ``MIN // -1`` wraps to
        MIN, ``x // 0`` is MAX, MIN or 0 by the sign of x (``rules.floor_divide_edges``)."""
        raise NotImplementedError

    def rnn_sequence(self, mode: str, x: Array, h0: Array, c0: Array | None, w_ih: Array,
                     w_hh: Array, b_ih: Array | None,
                     b_hh: Array | None) -> tuple[Array, Array, Array | None]:
        """One direction of one recurrent layer ('LSTM', 'GRU', 'RNN_TANH', 'RNN_RELU') over
        the whole sequence: gates i, f, g, o (LSTM) or r, z, n (GRU); ``x`` (T, N, in),
        ``h0``/``c0`` (N, H) (``c0`` None but for LSTM), ``w_ih`` (gates * H, in), ``w_hh``
        (gates * H, H), biases (gates * H,) both None or both given; ``(out (T, N, H), h_T,
        c_T)`` (``c_T`` None but for LSTM), differentiable by the backend's own autodiff
        (:func:`mscore.fused_reference.rnn_sequence` is the reference)."""
        raise NotImplementedError


class MultiTensorOps:
    """Passes over lists of arrays (no Python loop per array), returning new arrays."""

    def foreach_div(self, arrays: Sequence[Array], scalar: Array) -> list[Array]:
        """``[a / scalar for a in arrays]`` with a 0-d ``scalar``, each result in its
        array's dtype (a 0-d array too, where a library promotes two 0-d operands), divided
        in a dtype that holds the scalar (a float32 loss scale of 65536 overflows float16),
        in one multi-tensor pass (loss-scale unscaling)."""
        raise NotImplementedError

    def momentum_update(self, params: Sequence[Array], moments: Sequence[Array],
                        grads: Sequence[Array], lr: Array, momentum: Array, nesterov: bool,
                        inplace: bool = False) -> tuple[list[Array], list[Array]]:
        """Momentum SGD over lists of one dtype (``lr``, ``momentum`` 0-d): ``v = momentum *
        v + g; p -= lr * v`` (Nesterov: ``lr * (g + momentum * v)``); ``(params,
        moments)``; ``inplace``: nothing else holds the inputs, and the results may be
        written into ``params`` and ``moments``."""
        raise NotImplementedError

    def adam_update(self, params: Sequence[Array], m: Sequence[Array], v: Sequence[Array],
                    grads: Sequence[Array], lr: Array, beta1: float, beta2: float, eps: float,
                    nesterov: bool, weight_decay: Array | None,
                    inplace: bool = False) -> tuple[list[Array], list[Array], list[Array]]:
        """Adam over lists of one dtype: ``m = b1 m + (1-b1) g``, ``v = b2 v + (1-b2) g^2``,
        ``p -= lr (n / (sqrt(v) + eps) + weight_decay p)`` with ``n = m`` (Nesterov:
        ``b1 m + (1-b1) g``); ``lr`` and ``weight_decay`` (or None) 0-d arrays;
        ``(params, m, v)``; ``inplace`` as for ``momentum_update``."""
        raise NotImplementedError

    def unscale_check(self, arrays: Sequence[Array],
                      scale: Array) -> tuple[list[Array], Array]:
        """``(arrays / scale, finite)``, ``finite`` a 0-d bool: no result holds inf/nan; may
        overwrite ``arrays`` (their producer owns them). Takes the place of ``all_finite``
        in an eager loss-scaled step."""
        raise NotImplementedError

    def batch_norm_inplace(self, x: Array, running_mean: Array, running_var: Array,
                           weight: Array | None, bias: Array | None, momentum: float,
                           eps: float) -> Array | None:
        """Training batch norm writing the new running statistics into the given arrays, or
        None where it cannot for these dtypes (the core then uses ``batch_norm``)."""
        raise NotImplementedError


class PlacementOps:
    """Dtypes, copies and layouts."""

    def native_dtype(self, dtype: DType) -> Any:
        """The library's dtype object for mscore ``dtype``."""
        raise NotImplementedError

    def float_caster(self, dtype: DType) -> Callable[[Array], Array]:
        """A one-argument callable equal to ``cast(a, dtype)`` for floating arrays, best a C
        method of the library (amp's per-step casts reach it with no Python frame)."""
        raise NotImplementedError

    def copy(self, a: Array) -> Array:
        """A new array with ``a``'s values, sharing no buffer with it (GRAPH_MODE protects a
        value passed twice from buffer donation)."""
        raise NotImplementedError

    def shard(self, array: Array, parts: tuple[int, ...]) -> Array:
        """``array`` laid out over this process's devices, ``parts`` pieces per axis
        (SEMI_AUTO_PARALLEL strategies): a placed array eagerly, a sharding annotation inside
        a compiled program."""
        raise NotImplementedError


class AutodiffOps:
    """Native autodiff (without it, :mod:`mscore.autodiff` differentiates the primitives)."""

    def value_and_grad(self, fn: Callable[..., Any], primals: Sequence[Array],
                       has_aux: bool) -> tuple[tuple[Array, Any], list[Array]]:
        """``((value, aux), grads)`` of ``fn`` (native arrays to ``(scalar, aux)``): one
        gradient per primal (zeros where the value does not depend on it)."""
        raise NotImplementedError

    def grad_boundary(self, arrays: Sequence[Array],
                      vjp: Callable[[list[Array | None], list[bool]], list[Array | None]]
                      ) -> list[Array]:
        """``arrays`` unchanged; on the backward pass ``vjp(cotangents, needed)`` gives one
        cotangent per input (the cells' backward hooks)."""
        raise NotImplementedError


class ExecutionOps:
    """Compilation, determinism and host callbacks."""

    def compile(self, fn: Callable[..., Any],
                donate_argnums: tuple[int, ...] = ()) -> Callable[..., Any]:
        """``fn`` compiled (jit): the GRAPH_MODE program (without it GRAPH_MODE runs
        eagerly)."""
        raise NotImplementedError

    def set_deterministic(self, flag: bool) -> None:
        """Switch the library's deterministic mode on or off."""
        raise NotImplementedError

    def host_callback(self, fn: Callable[..., Any], arrays: Sequence[Array]) -> None:
        """Call ``fn(*numpy copies)`` on the host when the program reaches this point, in
        program order (``ops.Print``)."""
        raise NotImplementedError


GROUPS = (FusedOps, MultiTensorOps, PlacementOps, AutodiffOps, ExecutionOps)


class OptionalMethods(*GROUPS):  # type: ignore[misc]
    """Every optional member (the union of :data:`GROUPS`)."""


def members(group: type) -> tuple[str, ...]:
    """The members a group of the contract declares, in their written order."""
    return tuple(name for name, value in vars(group).items()
                 if inspect.isfunction(value) and not name.startswith("_"))


OPTIONAL_MEMBERS = tuple(name for group in GROUPS for name in members(group))


def declared_signature(owner: type, name: str) -> inspect.Signature:
    """The signature member ``name`` is declared with on ``owner``, as a backend implements
    it (without ``self``)."""
    sig = inspect.signature(getattr(owner, name))
    return sig.replace(parameters=list(sig.parameters.values())[1:])


def signature(name: str) -> inspect.Signature:
    """The signature of optional member ``name`` as a backend binds it (without ``self``)."""
    return declared_signature(OptionalMethods, name)
