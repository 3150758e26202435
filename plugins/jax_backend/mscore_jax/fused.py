"""The JAX backend's fused ops, each one ``jax.jit`` function (one XLA program per shape)."""
from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
from jax import lax


class JaxFused:
    """Fused ops (see :class:`mscore.plugin.backend.Backend` for each contract)."""

    # -- fused ops -----------------------------------------------------------------------------
    def softmax(self, x, axis):
        """``jax.nn.softmax`` along ``axis``."""
        return _softmax(x, int(axis))

    def log_softmax(self, x, axis):
        """``jax.nn.log_softmax`` along ``axis``."""
        return _log_softmax(x, int(axis))

    def layer_norm(self, x, normalized_shape, weight, bias, eps):
        """Normalise over the trailing axes; inputs narrower than float32 are normalised in
        float32 (parameters too) and the output rounded once to their dtype."""
        return _layer_norm(x, weight, bias, len(normalized_shape), float(eps))

    def cross_entropy(self, logits, target, ignore_index, reduction, label_smoothing):
        """Cross entropy of (N, C) logits against class indices, as ``ops.cross_entropy``."""
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"reduction: expected 'mean', 'sum' or 'none', got "
                             f"{reduction!r}")
        return _cross_entropy(logits, target, int(ignore_index), reduction,
                              float(label_smoothing))

    def rnn_sequence(self, mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh):
        """One direction of one recurrent layer as one ``lax.scan`` over the steps, compiled
        once per mode, shapes and dtype (gate orders LSTM i, f, g, o; GRU r, z, n)."""
        return _rnn_sequence(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, self.precision)

    def attention(self, q, k, v, mask, is_causal, scale):
        """softmax(q k^T * scale + mask) v over the last two axes (a bool mask keeps True)."""
        scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
        return _attention(q, k, v, mask, bool(is_causal), scale, self.precision)

    def batch_norm(self, x, running_mean, running_var, weight, bias, training, momentum,
                   eps):
        """``(out, new_running_mean, new_running_var)`` over axis 1 (new statistics None in
        eval or without running statistics); half inputs keep their statistics in float32."""
        if not training and (running_mean is None or running_var is None):
            raise ValueError("batch_norm: eval mode needs running_mean and running_var")
        return _batch_norm(x, running_mean, running_var, weight, bias, bool(training),
                           float(momentum), float(eps))

    def addcmul(self, a, b, c):
        """``a + b * c`` as one XLA program."""
        return _addcmul(a, b, c)

    def gelu(self, x, approximate):
        """``jax.nn.gelu`` (``approximate`` "tanh") or the exact erf form ("none")."""
        return _gelu(x, approximate == "tanh")


@partial(jax.jit, static_argnums=(1,))
def _softmax(x, axis):
    return jax.nn.softmax(x, axis=axis)


@partial(jax.jit, static_argnums=(1,))
def _log_softmax(x, axis):
    return jax.nn.log_softmax(x, axis=axis)


@partial(jax.jit, static_argnums=(3, 4))
def _layer_norm(x, weight, bias, ndim, eps):
    axes = tuple(range(x.ndim - ndim, x.ndim))
    xc = x.astype(jnp.float32) if x.dtype.itemsize < 4 else x
    m = jnp.mean(xc, axis=axes, keepdims=True)
    d = xc - m
    v = jnp.mean(d * d, axis=axes, keepdims=True)
    out = d * lax.rsqrt(v + jnp.asarray(eps, xc.dtype))
    if weight is not None:
        out = out * weight.astype(xc.dtype)
    if bias is not None:
        out = out + bias.astype(xc.dtype)
    return out.astype(x.dtype)  # rounded once, MindSpore's half-precision rule


@partial(jax.jit, static_argnums=(2, 3, 4))
def _cross_entropy(logits, target, ignore_index, reduction, label_smoothing):
    logp = jax.nn.log_softmax(logits, axis=1)
    valid = target != ignore_index
    safe = jnp.where(valid, target, 0).astype(jnp.int32)
    picked = -jnp.take_along_axis(logp, safe[:, None], axis=1)[:, 0]
    w = valid.astype(logp.dtype)
    loss = picked * w
    if label_smoothing:
        smooth = -jnp.mean(logp, axis=1) * w
        loss = loss * (1.0 - label_smoothing) + smooth * label_smoothing
    if reduction == "mean":
        # Every target ignored: NaN with gradient 0 (MindSpore's), the NaN a constant and
        # the division's by 1, so no 0 * inf reaches the gradient.
        count = jnp.sum(w)
        nothing = count == 0
        return jnp.where(nothing, jnp.nan, jnp.sum(loss) / jnp.where(nothing, 1, count))
    if reduction == "sum":
        return jnp.sum(loss)
    return loss


@partial(jax.jit, static_argnums=(4, 5, 6))
def _attention(q, k, v, mask, is_causal, scale, precision):
    scores = jnp.matmul(q, jnp.swapaxes(k, -1, -2), precision=precision) * \
        jnp.asarray(scale, q.dtype)
    if is_causal:
        lq, lk = q.shape[-2], k.shape[-2]
        causal = jnp.arange(lq)[:, None] >= jnp.arange(lk)[None, :]
        scores = jnp.where(causal, scores, -jnp.inf)
    if mask is not None:
        if mask.dtype == jnp.bool_:
            scores = jnp.where(mask, scores, -jnp.inf)
        else:
            scores = scores + mask.astype(scores.dtype)
    return jnp.matmul(jax.nn.softmax(scores, axis=-1), v, precision=precision)


@partial(jax.jit, static_argnums=(5, 6, 7))
def _batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps):
    c = x.shape[1]
    bshape = (1, c) + (1,) * (x.ndim - 2)
    acc = jnp.float32 if x.dtype.itemsize < 4 else x.dtype
    xc = x.astype(acc)
    new_mean = new_var = None
    if training:
        axes = (0,) + tuple(range(2, x.ndim))
        m = jnp.mean(xc, axis=axes, keepdims=True)
        d = xc - m
        v = jnp.mean(d * d, axis=axes, keepdims=True)
        if running_mean is not None:
            n = x.size // c
            bm = lax.stop_gradient(m.reshape(c))
            bv = lax.stop_gradient(v.reshape(c)) * (n / max(n - 1, 1))
            new_mean = (running_mean * (1.0 - momentum) + bm.astype(running_mean.dtype) *
                        momentum).astype(running_mean.dtype)
            new_var = (running_var * (1.0 - momentum) + bv.astype(running_var.dtype) *
                       momentum).astype(running_var.dtype)
        out = d * lax.rsqrt(v + jnp.asarray(eps, acc))
    else:  # the running statistics get no gradient, as in MindSpore
        rm, rv = lax.stop_gradient(running_mean), lax.stop_gradient(running_var)
        out = (xc - rm.reshape(bshape).astype(acc)) * \
            lax.rsqrt(rv.reshape(bshape).astype(acc) + jnp.asarray(eps, acc))
    if weight is not None:
        out = out * weight.reshape(bshape).astype(acc)
    if bias is not None:
        out = out + bias.reshape(bshape).astype(acc)
    return out.astype(x.dtype), new_mean, new_var


@jax.jit
def _addcmul(a, b, c):
    return a + b * c


@partial(jax.jit, static_argnums=(1,))
def _gelu(x, approximate):
    return jax.nn.gelu(x, approximate=approximate)


def _sigmoid(x):
    """(tanh(x / 2) + 1) / 2, the core's sigmoid."""
    return (jnp.tanh(x * 0.5) + 1) * 0.5


@partial(jax.jit, static_argnums=(0, 8))
def _rnn_sequence(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, precision):
    gi_all = jnp.matmul(x, w_ih.T, precision=precision)
    if b_ih is not None:
        gi_all = gi_all + b_ih
    hidden = h0.shape[-1]

    def step(carry, gi):
        h, c = carry
        gh = jnp.matmul(h, w_hh.T, precision=precision)
        if b_hh is not None:
            gh = gh + b_hh
        if mode == "LSTM":
            i, f, g, o = jnp.split(gi + gh, 4, axis=-1)
            c = _sigmoid(f) * c + _sigmoid(i) * jnp.tanh(g)
            h = _sigmoid(o) * jnp.tanh(c)
        elif mode == "GRU":
            r = _sigmoid(gi[:, :hidden] + gh[:, :hidden])
            z = _sigmoid(gi[:, hidden:2 * hidden] + gh[:, hidden:2 * hidden])
            n = jnp.tanh(gi[:, 2 * hidden:] + r * gh[:, 2 * hidden:])
            h = n + z * (h - n)
        elif mode == "RNN_TANH":
            h = jnp.tanh(gi + gh)
        else:
            h = jnp.maximum(gi + gh, 0)
        return (h, c), h

    (h, c), out = lax.scan(step, (h0, c0), gi_all)
    return out, h, c
