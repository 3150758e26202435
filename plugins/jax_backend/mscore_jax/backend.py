"""The JAX backend: mscore's primitive op set over ``jax.numpy`` / ``jax.lax``.

Native arrays are ``jax.Array`` (or JAX tracers while ``jax.jit`` / ``jax.value_and_grad``
trace a function). Gradients come from ``jax.value_and_grad``; GRAPH_MODE compiles with
``jax.jit`` and donates the state buffers.

64-bit types. JAX runs in 32-bit mode unless the global flag ``jax_enable_x64`` is on. This
backend switches it on the first time a 64-bit array is requested (``from_numpy`` of a
float64 or int64 array, ``cast``/``full``/``arange``/random draws to ``ms.float64`` or
``ms.int64``, an ``argmax``), or at build time when ``MSCORE_JAX_ENABLE_X64=1``, so the
declared int64 and float64 are always real. The flag is process-wide: once on, it stays on,
plain JAX code in the same process sees 64-bit defaults too, arrays made earlier keep their
32-bit types, and every jitted function (mscore's GRAPH_MODE programs included) is traced
again the next time it is called.

Random streams are explicit keys: a state is the raw ``threefry2x32`` key data (two words,
bit-cast to int32 so that it has an mscore dtype); every draw splits the key and returns the
next state, so a compiled step threads the stream instead of freezing one mask.

Float32 matmul and convolution run at ``Precision.HIGHEST`` (no TF32 on GPUs) so that
results match the numpy reference at float32 tolerance; set ``backend.precision = None`` for
XLA's fastest default.

Multi-op primitives and the fused ops are each one ``jax.jit`` function, so PYNATIVE mode
compiles one XLA program per op and shape instead of one per ``jnp`` call.
"""
from __future__ import annotations

import math
import os
from functools import partial

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax
from jax.custom_derivatives import SymbolicZero as _SymbolicZero

from mscore.common import dtype as mdt
from mscore.plugin.backend import Backend

try:
    from jax.core import Tracer as _Tracer
except ImportError:  # pragma: no cover - moved in a future JAX
    from jax._src.core import Tracer as _Tracer


def is_tracer(x) -> bool:
    """True when ``x`` is a JAX tracer (an abstract value inside jit/grad), not an array."""
    return isinstance(x, _Tracer)


_KEY_IMPL = "threefry2x32"


def x64_enabled() -> bool:
    """True when JAX's process-wide ``jax_enable_x64`` flag is on."""
    return bool(jax.config.jax_enable_x64)


def enable_x64() -> None:
    """Switch on 64-bit types in JAX for the whole process (see the module docstring)."""
    if not x64_enabled():
        jax.config.update("jax_enable_x64", True)


class JaxBackend(Backend):
    """mscore's backend contract over JAX (CPU and GPU)."""

    name = "jax"

    def __init__(self, precision="highest"):
        super().__init__()
        if precision not in (None, "default", "high", "highest"):
            raise ValueError(f"precision: expected None, 'default', 'high' or 'highest', got "
                             f"{precision!r}")
        self.precision = precision
        if os.environ.get("MSCORE_JAX_ENABLE_X64", "") not in ("", "0"):
            enable_x64()
        self._to_ms = {d.np_dtype: d for d in mdt.ALL_DTYPES}
        self._jax_device = None
        self._all_finite_jit = jax.jit(_all_finite_traced)

    # -- dtype mapping -------------------------------------------------------------------
    def native_dtype(self, dtype):
        """The numpy dtype JAX stores mscore ``dtype`` as (64-bit types switch x64 on)."""
        if dtype is mdt.float64 or dtype is mdt.int64:
            enable_x64()
        return dtype.np_dtype

    # -- device --------------------------------------------------------------------------
    def set_device(self, device_target, device_id=0):
        """Make ``device_target`` ("CPU" or "GPU") number ``device_id`` JAX's default device."""
        if device_target not in ("CPU", "GPU"):
            raise ValueError(f"device_target: backend 'jax' supports 'CPU' and 'GPU', got "
                             f"{device_target!r}")
        platform = "cpu" if device_target == "CPU" else "gpu"
        try:  # this process's own devices (in a jax.distributed job, not the others')
            devices = jax.local_devices(backend=platform)
        except RuntimeError:
            devices = []
        if not devices:
            have = sorted({d.platform.upper() for d in jax.devices()})
            raise ValueError(f"device_target: JAX has no {device_target} device here "
                             f"(available: {', '.join(have)}); install jax[cuda12] on a "
                             f"machine with a GPU")
        if not 0 <= device_id < len(devices):
            raise ValueError(f"device_id: {device_id} is out of range; JAX sees "
                             f"{len(devices)} {device_target} device(s)")
        dev = devices[device_id]
        if dev is not self._jax_device:
            jax.config.update("jax_default_device", dev)
            self._jax_device = dev
        self.device = "CPU" if device_target == "CPU" else f"GPU:{device_id}"

    def synchronize(self):
        """Wait until every live array's computation has finished."""
        for a in jax.live_arrays():
            try:
                a.block_until_ready()
            except RuntimeError:  # deleted (donated) meanwhile
                pass

    def memory_stats(self):
        """``Device.memory_stats()`` of the current device (empty on CPU)."""
        dev = self._jax_device or jax.local_devices()[0]
        stats = dev.memory_stats()
        return dict(stats) if stats else {}

    # -- creation and transfer -------------------------------------------------------------
    def from_numpy(self, array, dtype=None):
        array = np.asarray(array)
        target = self.native_dtype(dtype) if dtype is not None else \
            self._native_for_numpy(array.dtype)
        if array.dtype != target:
            array = array.astype(target)
        return jnp.array(array, copy=True)

    def _native_for_numpy(self, np_dtype):
        if np_dtype in (np.float64, np.int64, np.uint64):
            enable_x64()
        return np_dtype

    def to_numpy(self, a):
        return np.array(a, copy=True)

    def copy(self, a):
        """A new buffer with the values of ``a`` (GRAPH_MODE protects shared values from
        donation with it)."""
        return jnp.array(a, copy=True)

    def full(self, shape, value, dtype):
        return jnp.full(tuple(shape), value, dtype=self.native_dtype(dtype))

    def arange(self, start, stop, step, dtype):
        # Computed on the host like numpy (float64, then cast) so float ranges match exactly.
        return jnp.asarray(np.arange(start, stop, step).astype(self.native_dtype(dtype)))

    def shape(self, a):
        return tuple(a.shape)

    def dtype(self, a):
        return self._to_ms[a.dtype]

    def cast(self, a, dtype):
        target = self.native_dtype(dtype)
        if a.dtype == target:
            return a
        return a.astype(target)

    def stop_gradient(self, a):
        return lax.stop_gradient(a) if isinstance(a, _Tracer) else a

    # -- elementwise -------------------------------------------------------------------------
    def neg(self, a): return jnp.negative(a)                 # noqa: E704
    def abs(self, a): return jnp.abs(a)                      # noqa: E704
    def exp(self, a): return jnp.exp(a)                      # noqa: E704
    def log(self, a): return jnp.log(a)                      # noqa: E704
    def sqrt(self, a): return jnp.sqrt(a)                    # noqa: E704
    def sin(self, a): return jnp.sin(a)                      # noqa: E704
    def cos(self, a): return jnp.cos(a)                      # noqa: E704
    def tanh(self, a): return jnp.tanh(a)                    # noqa: E704
    def sign(self, a): return jnp.sign(a)                    # noqa: E704
    def floor(self, a): return jnp.floor(a)                  # noqa: E704
    def ceil(self, a): return jnp.ceil(a)                    # noqa: E704
    def logical_not(self, a): return jnp.logical_not(a)      # noqa: E704
    def isfinite(self, a): return jnp.isfinite(a)            # noqa: E704

    def erf(self, a):
        if a.dtype.itemsize < 4:  # half precision: compute in float32, round once
            return lax.erf(a.astype(jnp.float32)).astype(a.dtype)
        return lax.erf(a)

    def add(self, a, b): return jnp.add(a, b)                # noqa: E704
    def sub(self, a, b): return jnp.subtract(a, b)           # noqa: E704
    def mul(self, a, b): return jnp.multiply(a, b)           # noqa: E704
    def pow(self, a, b): return jnp.power(a, b)              # noqa: E704
    def maximum(self, a, b): return jnp.maximum(a, b)        # noqa: E704
    def minimum(self, a, b): return jnp.minimum(a, b)        # noqa: E704
    def equal(self, a, b): return jnp.equal(a, b)            # noqa: E704
    def not_equal(self, a, b): return jnp.not_equal(a, b)    # noqa: E704
    def less(self, a, b): return jnp.less(a, b)              # noqa: E704
    def less_equal(self, a, b): return jnp.less_equal(a, b)  # noqa: E704
    def greater(self, a, b): return jnp.greater(a, b)        # noqa: E704
    def greater_equal(self, a, b): return jnp.greater_equal(a, b)  # noqa: E704
    def logical_and(self, a, b): return jnp.logical_and(a, b)      # noqa: E704
    def logical_or(self, a, b): return jnp.logical_or(a, b)        # noqa: E704

    def div(self, a, b):
        if jnp.issubdtype(a.dtype, jnp.integer) or a.dtype == jnp.bool_:
            return _int_div(a, b)
        return jnp.true_divide(a, b)

    def where(self, cond, x, y):
        return jnp.where(cond, x, y)

    # -- reductions ----------------------------------------------------------------------------
    def sum(self, a, axis, keepdims):
        return jnp.sum(a, axis=axis, keepdims=keepdims, dtype=a.dtype)

    def max(self, a, axis, keepdims):
        return jnp.max(a, axis=axis, keepdims=keepdims)

    def min(self, a, axis, keepdims):
        return jnp.min(a, axis=axis, keepdims=keepdims)

    def all(self, a, axis, keepdims):
        return jnp.all(a, axis=axis, keepdims=keepdims)

    def any(self, a, axis, keepdims):
        return jnp.any(a, axis=axis, keepdims=keepdims)

    def argmax(self, a, axis):
        return jnp.argmax(a, axis=axis).astype(self.native_dtype(mdt.int64))

    def argmin(self, a, axis):
        return jnp.argmin(a, axis=axis).astype(self.native_dtype(mdt.int64))

    # -- shape ---------------------------------------------------------------------------------
    def reshape(self, a, shape): return jnp.reshape(a, shape)             # noqa: E704
    def transpose(self, a, perm): return jnp.transpose(a, perm)           # noqa: E704
    def broadcast_to(self, a, shape): return jnp.broadcast_to(a, shape)   # noqa: E704

    def concat(self, arrays, axis):
        return jnp.concatenate(list(arrays), axis=axis)

    def pad(self, a, pad_width, value):
        if not any(lo or hi for lo, hi in pad_width):
            return a
        config = [(int(lo), int(hi), 0) for lo, hi in pad_width]
        return lax.pad(a, jnp.asarray(value, dtype=a.dtype), config)

    # -- indexing ------------------------------------------------------------------------------
    def getitem(self, a, index):
        _check_int_bounds(a.shape, index)
        return a[index]

    def scatter_add(self, a, index, updates):
        _check_int_bounds(a.shape, index)
        return a.at[index].add(updates)

    # -- linear algebra, convolution, pooling --------------------------------------------------
    def matmul(self, a, b):
        return jnp.matmul(a, b, precision=self.precision)

    def conv(self, x, w, stride, padding, dilation, groups):
        nd = w.ndim - 2
        spec = tuple(range(nd + 2))
        return lax.conv_general_dilated(
            x, w, window_strides=tuple(stride), padding=[tuple(p) for p in padding],
            rhs_dilation=tuple(dilation),
            dimension_numbers=lax.ConvDimensionNumbers(spec, spec, spec),
            feature_group_count=groups, precision=self.precision)

    def conv_transpose(self, x, w, stride, padding, output_padding, dilation, groups):
        return _conv_transpose(x, w, tuple(stride), _pairs(padding), tuple(output_padding),
                               tuple(dilation), int(groups), self.precision)

    def max_pool(self, x, kernel, stride, padding):
        if jnp.issubdtype(x.dtype, jnp.floating):
            low = -np.inf
        else:
            low = np.iinfo(x.dtype).min
        _check_window_fits(x.shape[2:], kernel, padding)
        # A concrete (numpy) init value makes lax use its differentiable max monoid.
        return lax.reduce_window(x, np.array(low, dtype=x.dtype), lax.max,
                                 (1, 1) + tuple(kernel), (1, 1) + tuple(stride),
                                 ((0, 0), (0, 0)) + tuple(tuple(p) for p in padding))

    def avg_pool(self, x, kernel, stride, padding, count_include_pad):
        _check_window_fits(x.shape[2:], kernel, padding)
        return _avg_pool(x, tuple(kernel), tuple(stride), _pairs(padding),
                         bool(count_include_pad))

    # -- random streams ------------------------------------------------------------------------
    def rng_state(self, seed):
        seed = int(seed)
        if seed < 0:
            raise ValueError(f"seed: expected a non-negative int, got {seed}")
        words = np.array([(seed >> 32) & 0xFFFFFFFF, seed & 0xFFFFFFFF], dtype=np.uint32)
        return jnp.asarray(words.view(np.int32))

    def random_uniform(self, state, shape, dtype):
        return _draw(state, tuple(shape), self.native_dtype(dtype), False)

    def random_normal(self, state, shape, dtype):
        return _draw(state, tuple(shape), self.native_dtype(dtype), True)

    # -- overflow check ------------------------------------------------------------------------
    def all_finite(self, arrays):
        """True when no array holds inf/nan: one fused reduction and one host sync. Inside a
        trace (jit, value_and_grad) it returns a 0-d bool array instead of a Python bool."""
        arrays = list(arrays)
        if not arrays:
            return True
        if any(isinstance(a, _Tracer) for a in arrays):
            return _all_finite_traced(arrays)
        return bool(self._all_finite_jit(arrays))

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

    # -- native autodiff and compilation -------------------------------------------------------
    def value_and_grad(self, fn, primals, has_aux=True):
        """``jax.value_and_grad`` of ``fn(*primals) -> (value, aux)`` over every floating
        primal; integer/bool primals get zero gradients of their own dtype."""
        primals = list(primals)
        if not has_aux:
            inner = fn
            fn = lambda *p: (inner(*p), None)  # noqa: E731
        diff = [i for i, p in enumerate(primals) if jnp.issubdtype(p.dtype, jnp.inexact)]
        if not diff:
            value, aux = fn(*primals)
            return (value, aux), [jnp.zeros_like(p) for p in primals]
        if len(diff) == len(primals):
            (value, aux), grads = jax.value_and_grad(
                fn, argnums=tuple(range(len(primals))), has_aux=True)(*primals)
            return ((value, aux) if has_aux else (value, None)), list(grads)

        def partial_fn(*diff_vals):
            full = list(primals)
            for i, val in zip(diff, diff_vals):
                full[i] = val
            return fn(*full)

        (value, aux), dgrads = jax.value_and_grad(
            partial_fn, argnums=tuple(range(len(diff))), has_aux=True)(*(primals[i] for i in diff))
        grads = [jnp.zeros_like(p) for p in primals]
        for i, g in zip(diff, dgrads):
            grads[i] = g
        return (value, aux), grads

    def grad_boundary(self, arrays, vjp):
        """``arrays`` unchanged; on the backward pass ``vjp(cotangents, needed)`` maps the
        outputs' cotangents to the inputs' (a ``jax.custom_vjp`` whose forward notes which
        inputs are differentiated; cells' backward hooks use it)."""
        needed = []

        @jax.custom_vjp
        def boundary(*xs):
            return tuple(xs)

        def forward(*xs):
            needed[:] = [x.perturbed for x in xs]
            return tuple(x.value for x in xs), None

        def backward(_, cotangents):
            cotangents = [jnp.zeros(c.shape, c.dtype) if isinstance(c, _SymbolicZero) else c
                          for c in cotangents]
            grads = vjp(cotangents, list(needed))
            return tuple(g if n else None for g, n in zip(grads, needed))

        boundary.defvjp(forward, backward, symbolic_zeros=True)
        return list(boundary(*arrays))

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
        from mscore_jax import collectives
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


def _pairs(padding):
    return tuple((int(lo), int(hi)) for lo, hi in padding)


# Multi-op primitives and the fused ops are each one jitted function: one XLA program per
# shape instead of one per jnp call, which matters in PYNATIVE mode (inside a trace they
# inline into the enclosing program).
@partial(jax.jit, static_argnums=(2, 3, 4, 5, 6, 7))
def _conv_transpose(x, w, stride, padding, output_padding, dilation, groups, precision):
    # The input-gradient of conv: spread x by the stride (lhs dilation), pad by the full
    # kernel extent minus the forward padding, and correlate with the flipped kernel whose
    # in/out channel roles are swapped per group.
    nd = w.ndim - 2
    cin, og = w.shape[0], w.shape[1]
    kernel = w.shape[2:]
    cg = cin // groups
    wt = jnp.reshape(w, (groups, cg, og) + kernel)
    wt = jnp.transpose(wt, (0, 2, 1) + tuple(range(3, 3 + nd)))
    wt = jnp.reshape(wt, (groups * og, cg) + kernel)
    wt = jnp.flip(wt, axis=tuple(range(2, 2 + nd)))
    pads = [(d * (k - 1) - lo, d * (k - 1) - hi + op)
            for k, d, (lo, hi), op in zip(kernel, dilation, padding, output_padding)]
    spec = tuple(range(nd + 2))
    return lax.conv_general_dilated(
        x, wt, window_strides=(1,) * nd, padding=pads, lhs_dilation=stride,
        rhs_dilation=dilation, dimension_numbers=lax.ConvDimensionNumbers(spec, spec, spec),
        feature_group_count=groups, precision=precision)


@partial(jax.jit, static_argnums=(1, 2, 3, 4))
def _avg_pool(x, kernel, stride, padding, count_include_pad):
    acc = jnp.float32 if x.dtype.itemsize < 4 else x.dtype
    window = (1, 1) + kernel
    strides = (1, 1) + stride
    pads = ((0, 0), (0, 0)) + padding
    zero = np.array(0, dtype=acc)  # a concrete init value: lax picks the sum monoid
    total = lax.reduce_window(x.astype(acc), zero, lax.add, window, strides, pads)
    if count_include_pad:
        res = total / math.prod(kernel)
    else:
        ones = jnp.ones((1, 1) + tuple(x.shape[2:]), acc)
        res = total / lax.reduce_window(ones, zero, lax.add, window, strides, pads)
    return res.astype(x.dtype)


@partial(jax.jit, static_argnums=(1, 2, 3))
def _draw(state, shape, dtype, normal):
    key = jax.random.wrap_key_data(lax.bitcast_convert_type(state, jnp.uint32),
                                   impl=_KEY_IMPL)
    nxt, sub = jax.random.split(key)
    sampler = jax.random.normal if normal else jax.random.uniform
    values = sampler(sub, shape, dtype=dtype)
    return values, lax.bitcast_convert_type(jax.random.key_data(nxt), jnp.int32)


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
        return jnp.sum(loss) / jnp.sum(w)
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


def _all_finite_traced(arrays):
    flags = [jnp.all(jnp.isfinite(a)) for a in arrays
             if jnp.issubdtype(a.dtype, jnp.inexact)]
    if not flags:
        return jnp.asarray(True)
    return jnp.all(jnp.stack(flags))


@jax.jit
def _int_div(a, b):
    """Integer division truncating toward zero (MindSpore's Div, as ``lax.div`` does);
    ``x / 0`` is 0 (XLA would give -1) and ``MIN / -1`` wraps to MIN: the contract."""
    dtype = a.dtype
    if dtype == jnp.bool_:
        a, b = a.astype(jnp.int32), b.astype(jnp.int32)
    a, b = jnp.broadcast_arrays(a, b)
    q = lax.div(a, jnp.where(b == 0, jnp.ones_like(b), b))
    return jnp.where(b == 0, jnp.zeros_like(q), q).astype(dtype)


def _check_int_bounds(shape, index):
    """numpy raises IndexError for an out-of-range int index or index array; JAX would clamp.
    Index arrays are checked when concrete (one host sync), not while jit traces them."""
    cut = next((i for i, item in enumerate(index) if item is Ellipsis), None)
    if cut is not None:
        _check_int_bounds(shape, index[:cut])
        tail = index[cut + 1:]
        used = sum(1 for i in tail if i is not None)
        _check_int_bounds(shape[len(shape) - used:], tail)
        return
    axis = 0
    for item in index:
        if item is None:
            continue
        if isinstance(item, (int, np.integer)) and not isinstance(item, bool) \
                and axis < len(shape) and not -shape[axis] <= item < shape[axis]:
            raise IndexError(f"index {item} is out of bounds for axis {axis} with size "
                             f"{shape[axis]}")
        if isinstance(item, jax.Array) and not isinstance(item, _Tracer) and item.size \
                and axis < len(shape) and jnp.issubdtype(item.dtype, jnp.integer):
            low, high = (int(v) for v in np.asarray(_min_max(item)))
            bad = high if high >= shape[axis] else low if low < -shape[axis] else None
            if bad is not None:
                raise IndexError(f"index {bad} is out of bounds for axis {axis} with size "
                                 f"{shape[axis]}")
        axis += 1


@jax.jit
def _min_max(a):
    return jnp.stack([jnp.min(a), jnp.max(a)])


def _check_window_fits(spatial, kernel, padding):
    for s, k, (lo, hi) in zip(spatial, kernel, padding):
        if s + lo + hi < k:
            raise ValueError(f"conv/pool: kernel {tuple(kernel)} does not fit the padded "
                             f"input {tuple(spatial)}")
